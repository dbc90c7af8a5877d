//! The job actions behind `tern_rm`, `tern_hold`, `tern_release`,
//! `tern_vacate_job`, `tern_suspend` and `tern_continue`, as HTCondor's
//! `condor_rm` family (one program, `src/condor_rm.V6/rm.cpp`) asks the
//! schedd to do them (`Scheduler::actOnJobs`).
//!
//! A command line makes up to two requests, in this order:
//!
//! * the `cluster.proc` arguments, each job acted on by id and reported on
//!   its own line (`Job 12.0 marked for removal`, or why not, on stderr);
//! * everything else — `cluster` and `user` arguments (either may match),
//!   narrowed by every `-constraint`, or `-all` — acted on as one
//!   constraint and reported in one line (`All jobs in cluster 12 have been
//!   marked for removal`). Jobs already in the state the action makes are
//!   not matched, and other users' jobs are skipped.
//!
//! Each request is one queue transaction. Only jobs whose Owner is the real
//! user (or any job, for a user named in `QUEUE_SUPER_USERS`) may be
//! changed; the reason attribute records who asked. A request that acts on
//! no job at all makes the exit status 1, as in HTCondor; one that acts on
//! some is a success even when others were refused.
//!
//! A running job is not stopped here: the transaction records a request
//! for its shadow (and, for rm and hold, the new JobStatus and reason), and
//! the shadow, woken once it has committed, carries it out; a removed job
//! leaves the queue once nothing runs it. Vacate, suspend and continue
//! change nothing in the job themselves: the shadow sets JobStatus (Idle,
//! Suspended, Running) when it has done what was asked.
//!
//! Once a transaction has committed, the job event logs of the jobs it
//! changed get their events (009 aborted, 012 held, 013 released), except
//! those the shadow of a running job will write when it has stopped it.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::PathBuf;

use crate::classad::parser::parse_expr_old;
use crate::classad::{ClassAd, Expr, Value};
use crate::queue::{Change, JobId, JobRow, Queue, Selection, status};
use crate::userlog::{Event, HOLD_CODE_USER_REQUEST, log_job_events, user_log_path};
use crate::vocab::Request as ShadowRequest;

use super::CliError;
use super::env::ToolEnv;
use super::jobsel::{may_change, parse_id, super_users};

/// What a tool does to each job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Remove,
    /// `tern_rm -forcex`: jobs already removed leave the queue at once.
    ForceRemove,
    Hold,
    Release,
    /// `tern_vacate_job`: the job's KillSig, SIGKILL after its vacate time,
    /// and back to Idle.
    Vacate,
    /// `tern_vacate_job -fast`: SIGKILL at once, and back to Idle.
    VacateFast,
    Suspend,
    Continue,
}

impl Action {
    /// The word for the result, as HTCondor prints it.
    fn past(self) -> &'static str {
        match self {
            Action::Remove => "marked for removal",
            Action::ForceRemove => "removed locally (remote state unknown)",
            Action::Hold => "held",
            Action::Release => "released",
            Action::Vacate => "vacated",
            Action::VacateFast => "fast-vacated",
            Action::Suspend => "suspended",
            Action::Continue => "continued",
        }
    }

    /// The word for the request (`Couldn't find/remove all jobs ...`).
    fn verb(self) -> &'static str {
        match self {
            Action::Remove | Action::ForceRemove => "remove",
            Action::Hold => "hold",
            Action::Release => "release",
            Action::Vacate => "vacate",
            Action::VacateFast => "fast-vacate",
            Action::Suspend => "suspend",
            Action::Continue => "continue",
        }
    }

    fn denied_verb(self) -> &'static str {
        match self {
            Action::ForceRemove => "force removal of",
            other => other.verb(),
        }
    }

    fn default_reason(self, tool: &str) -> String {
        match self {
            Action::ForceRemove => format!("via {tool} -forcex"),
            _ => format!("via {tool}"),
        }
    }

    /// Whether a constraint request matches a job in state `s` (HTCondor
    /// adds this clause to the user's constraint).
    fn matches_status(self, s: i64, ad: &ClassAd) -> bool {
        match self {
            Action::Remove => s != status::REMOVED,
            Action::ForceRemove => {
                s == status::REMOVED
                    || (s == status::HELD && int_attr(ad, "JobStatusOnRelease") == Some(3))
            }
            Action::Hold => s != status::HELD,
            Action::Release => s == status::HELD,
            // HTCondor vacates only running jobs; a suspended one is
            // continued and stopped by its shadow all the same.
            Action::Vacate | Action::VacateFast => is_running(s),
            Action::Suspend => s == status::RUNNING || s == status::TRANSFERRING_OUTPUT,
            Action::Continue => s == status::SUSPENDED,
        }
    }

    /// The request a running job's shadow gets (see `requests` in the
    /// queue schema), if the action stops or pauses the job.
    fn request_kind(self) -> Option<ShadowRequest> {
        match self {
            Action::Remove | Action::ForceRemove => Some(ShadowRequest::Remove),
            Action::Hold => Some(ShadowRequest::Hold),
            Action::Release => None,
            Action::Vacate => Some(ShadowRequest::Vacate),
            Action::VacateFast => Some(ShadowRequest::VacateFast),
            Action::Suspend => Some(ShadowRequest::Suspend),
            Action::Continue => Some(ShadowRequest::Continue),
        }
    }
}

/// What happened to one job, as HTCondor's `action_result_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Success,
    NotFound,
    PermissionDenied,
    BadStatus,
    AlreadyDone,
}

/// A parsed command line of one of the three tools.
#[derive(Clone, Debug)]
pub struct Request {
    pub tool: &'static str,
    pub action: Action,
    /// `cluster.proc` arguments, in order.
    pub ids: Vec<JobId>,
    /// `cluster` arguments.
    pub clusters: Vec<i64>,
    /// `user` arguments.
    pub owners: Vec<String>,
    /// The `-constraint` expressions, all of which must hold.
    pub constraints: Vec<(String, Expr)>,
    pub all: bool,
    /// The constraint request as HTCondor describes it in its messages
    /// (` in cluster 3`, ` of user "bob"`, ` matching constraint (...)`).
    pub description: String,
    /// The reason given with `-reason`, before `(by user ...)` is added.
    pub reason: Option<String>,
    pub subcode: Option<i64>,
    pub totals: bool,
    /// Arguments refused while parsing (cluster 0), already reported.
    pub bad_args: bool,
}

/// The options every one of the three tools takes.
#[derive(clap::Args, Debug, Clone)]
pub struct Common {
    /// Act on every job matching this ClassAd expression (with several,
    /// every one must match)
    #[arg(long, value_name = "EXPR")]
    pub constraint: Vec<String>,

    /// Act on every job (every job of yours, unless you are a queue super
    /// user); cannot be combined with other selections
    #[arg(long)]
    pub all: bool,

    /// Print how many jobs succeeded and failed, by cause
    #[arg(long)]
    pub totals: bool,

    /// Accepted for compatibility; has no effect
    #[arg(long)]
    pub debug: bool,

    /// Jobs to act on: CLUSTER, CLUSTER.PROC or USER
    #[arg(value_name = "CLUSTER|CLUSTER.PROC|USER")]
    pub targets: Vec<String>,
}

impl Request {
    /// Reads the common options: what to act on and how to describe it.
    pub fn new(
        tool: &'static str,
        action: Action,
        common: &Common,
        reason: Option<String>,
    ) -> Result<Request, CliError> {
        let mut req = Request {
            tool,
            action,
            ids: Vec::new(),
            clusters: Vec::new(),
            owners: Vec::new(),
            constraints: Vec::new(),
            all: common.all,
            description: String::new(),
            reason,
            subcode: None,
            totals: common.totals,
            bad_args: false,
        };
        let mut picked: Vec<String> = Vec::new();
        for a in &common.targets {
            match parse_id(a) {
                Some((c, _)) if c <= 0 => {
                    eprintln!("Invalid cluster # from {a}.");
                    req.bad_args = true;
                }
                Some((c, Some(p))) => req.ids.push(JobId {
                    cluster: c,
                    proc: p,
                }),
                Some((c, None)) => {
                    req.clusters.push(c);
                    picked.push(format!("ClusterId == {c}"));
                }
                None => {
                    req.owners.push(super::jobsel::owner_arg(a)?);
                    picked.push(format!("Owner == \"{a}\""));
                }
            }
        }
        for c in &common.constraint {
            let e = parse_expr_old(c).map_err(|e| CliError::Parse {
                what: format!("constraint '{c}'"),
                line: None,
                col: e.col,
                msg: e.msg,
                hint: None,
            })?;
            req.constraints.push((c.clone(), e));
        }
        if req.all && !(picked.is_empty() && req.ids.is_empty() && req.constraints.is_empty()) {
            return Err(CliError::Usage {
                msg: "can't mix -all with other constraints".into(),
                hint: Some("give -all alone, or name the jobs instead".into()),
            });
        }
        if !req.all
            && picked.is_empty()
            && req.ids.is_empty()
            && req.constraints.is_empty()
            && !req.bad_args
        {
            return Err(CliError::Usage {
                msg: "you did not specify any jobs".into(),
                hint: Some(format!(
                    "give a cluster, cluster.proc or user, -constraint EXPR or -all; '{tool} -help' says more"
                )),
            });
        }
        req.description = describe(&picked, &req.constraints, req.all);
        Ok(req)
    }

    fn has_constraint_request(&self) -> bool {
        self.all
            || !self.clusters.is_empty()
            || !self.owners.is_empty()
            || !self.constraints.is_empty()
    }

    /// The selection of the constraint request (before the status clause).
    fn selection(&self) -> Selection {
        Selection {
            clusters: self.clusters.clone(),
            jobs: Vec::new(),
            owners: self.owners.clone(),
            constraint: and_all(&self.constraints),
        }
    }

    /// Runs the request against the queue in SPOOL, printing what happened.
    pub fn run(&self) -> Result<(), CliError> {
        let env = ToolEnv::open(self.tool)?;
        let mut queue = env.queue(false)?;
        let asker = Asker {
            supers: super_users(&env.cfg)?,
            user: env.user,
            spool: env.spool,
        };
        let mut had_error = self.bad_args;
        let mut log_errors: Vec<String> = Vec::new();
        let stdout = io::stdout();
        let mut out = stdout.lock();

        if !self.ids.is_empty() {
            if !self.constraints.is_empty() {
                eprintln!("Warning, -constraint is ignored for fully qualified job ids");
            }
            let sel = Selection {
                jobs: self.ids.clone(),
                ..Selection::default()
            };
            let found = match queue.as_mut() {
                Some(q) => self.act(q, &sel, false, &asker, &mut log_errors)?,
                None => HashMap::new(),
            };
            let mut counts = Counts::default();
            for id in &self.ids {
                let o = found.get(id).copied().unwrap_or(Outcome::NotFound);
                counts.add(o);
                let msg = self.message(*id, o);
                if o == Outcome::Success {
                    writeln!(out, "{msg}")?;
                } else {
                    eprintln!("{msg}");
                }
            }
            if self.totals {
                writeln!(out, "{}", counts.line())?;
            }
            if counts.success == 0 {
                had_error = true;
            }
        }

        if self.has_constraint_request() {
            let sel = self.selection();
            let outcomes = match queue.as_mut() {
                Some(q) => self.act(q, &sel, true, &asker, &mut log_errors)?,
                None => HashMap::new(),
            };
            let mut counts = Counts::default();
            for o in outcomes.values() {
                counts.add(*o);
            }
            if self.totals {
                writeln!(out, "{}", counts.line())?;
            }
            if counts.success > 0 {
                writeln!(
                    out,
                    "All jobs{} have been {}",
                    self.description,
                    self.action.past()
                )?;
            } else {
                let in_queue = match &queue {
                    Some(q) => q.rows(&Selection::default())?.len(),
                    None => 0,
                };
                if in_queue == 0 {
                    eprintln!("{}:0:There are no jobs in the queue", self.tool);
                } else {
                    eprintln!(
                        "Couldn't find/{} all jobs{}",
                        self.action.verb(),
                        self.description
                    );
                    had_error = true;
                }
            }
        }
        out.flush()?;
        if let Some(first) = log_errors.first() {
            return Err(CliError::Failed {
                msg: format!(
                    "the jobs were {}, but not every job event log was written: {first}",
                    self.action.past()
                ),
                hint: None,
            });
        }
        if had_error {
            return Err(CliError::Reported(1));
        }
        Ok(())
    }

    /// Acts on the jobs `sel` names in one transaction and returns what
    /// happened to each. A constraint request skips jobs whose state the
    /// action does not apply to without counting them. Once the transaction
    /// has committed, the events of the changed jobs go to their job event
    /// logs; a log that cannot be written is added to `log_errors`.
    fn act(
        &self,
        queue: &mut Queue,
        sel: &Selection,
        by_constraint: bool,
        asker: &Asker,
        log_errors: &mut Vec<String>,
    ) -> Result<HashMap<JobId, Outcome>, CliError> {
        let now = crate::clock::now();
        let reason = format!(
            "{} (by user {})",
            self.reason
                .clone()
                .unwrap_or_else(|| self.action.default_reason(self.tool)),
            asker.user
        );
        let mut outcomes: HashMap<JobId, Outcome> = HashMap::new();
        let mut events: Vec<(PathBuf, Event)> = Vec::new();
        let mut wake: Vec<JobId> = Vec::new();
        queue.write(now, |w| {
            for row in w.rows(sel)? {
                let ad = w.full_ad(&row)?;
                if let Some(c) = &sel.constraint
                    && !crate::queue::matches_constraint(c, &ad)
                {
                    continue;
                }
                if by_constraint && !self.action.matches_status(row.status, &ad) {
                    continue;
                }
                let planned = if by_constraint {
                    Ok(())
                } else {
                    precheck(self.action, &row, &ad)
                };
                let outcome = match planned {
                    Err(o) => o,
                    Ok(()) if !may_change(&asker.user, &row.owner, &asker.supers) => {
                        Outcome::PermissionDenied
                    }
                    Ok(()) => Outcome::Success,
                };
                outcomes.insert(row.id, outcome);
                if outcome != Outcome::Success {
                    continue;
                }
                let c = change(self.action, &row, &ad, &reason, self.subcode);
                if let Some(path) = user_log_path(&ad) {
                    for e in event(self.action, &row, &ad, &c, &reason, self.subcode) {
                        events.push((path.clone(), e));
                    }
                }
                w.change(&row, &ad, &c)?;
                // A running job is stopped by its shadow, which writes
                // the event once the job is down.
                if is_running(row.status)
                    && let Some(k) = self.action.request_kind()
                {
                    w.request(row.id, k)?;
                    wake.push(row.id);
                }
            }
            Ok(())
        })?;
        for id in wake {
            crate::queue::joblock::wake(&asker.spool, id);
        }
        if let Err(e) = log_job_events(&events) {
            log_errors.push(e.to_string());
        }
        Ok(outcomes)
    }

    /// The line HTCondor prints for one job.
    fn message(&self, id: JobId, o: Outcome) -> String {
        match o {
            Outcome::Success => format!("Job {id} {}", self.action.past()),
            Outcome::NotFound => format!("Job {id} not found"),
            Outcome::PermissionDenied => {
                format!(
                    "Permission denied to {} job {id}",
                    self.action.denied_verb()
                )
            }
            Outcome::BadStatus => match self.action {
                Action::Release => format!("Job {id} not held to be released"),
                Action::ForceRemove => {
                    format!("Job {id} not in `X' state to be forcibly removed")
                }
                // HTCondor's words, "running" for continue too.
                Action::Vacate | Action::VacateFast | Action::Suspend | Action::Continue => {
                    format!("Job {id} not running to be {}", self.action.past())
                }
                _ => format!("Invalid result for job {id}"),
            },
            Outcome::AlreadyDone => match self.action {
                Action::Hold => format!("Job {id} already held"),
                Action::Remove => format!("Job {id} already marked for removal"),
                _ => format!("Invalid result for job {id}"),
            },
        }
    }
}

/// Why a job named by id cannot take the action, checked (as the schedd
/// does) before whose job it is.
fn precheck(action: Action, row: &JobRow, ad: &ClassAd) -> Result<(), Outcome> {
    match action {
        Action::Remove if row.status == status::REMOVED => Err(Outcome::AlreadyDone),
        Action::Hold if row.status == status::HELD => Err(Outcome::AlreadyDone),
        Action::Release if row.status != status::HELD => Err(Outcome::BadStatus),
        Action::ForceRemove
        | Action::Vacate
        | Action::VacateFast
        | Action::Suspend
        | Action::Continue
            if !action.matches_status(row.status, ad) =>
        {
            Err(Outcome::BadStatus)
        }
        _ => Ok(()),
    }
}

/// The attributes an action sets on one job, and whether it leaves the
/// queue.
fn change(
    action: Action,
    row: &JobRow,
    ad: &ClassAd,
    reason: &str,
    subcode: Option<i64>,
) -> Change {
    let mut set: Vec<(String, Expr)> = Vec::new();
    let mut delete: Vec<String> = Vec::new();
    let mut put = |name: &str, e: Expr| set.push((name.to_string(), e));
    let mut del = |name: &str| delete.push(name.to_string());
    let running = is_running(row.status);
    match action {
        Action::Remove => {
            put("RemoveReason", Expr::string(reason));
            put("JobStatus", Expr::int(status::REMOVED));
            let stays = running || truth(ad, "LeaveJobInQueue");
            if stays {
                return Change::Set(set);
            }
            Change::Leave { set }
        }
        Action::ForceRemove => {
            put("LeaveJobInQueue", Expr::Lit(Value::Bool(false)));
            put("RemoveReason", Expr::string(reason));
            put("JobStatus", Expr::int(status::REMOVED));
            Change::Leave { set }
        }
        Action::Hold => {
            put("HoldReason", Expr::string(reason));
            put("HoldReasonCode", Expr::int(HOLD_CODE_USER_REQUEST));
            put("HoldReasonSubCode", Expr::int(subcode.unwrap_or(0)));
            if row.status == status::REMOVED {
                // Released, it goes back to being removed.
                put("JobStatusOnRelease", Expr::int(status::REMOVED));
            }
            move_attr(ad, "ReleaseReason", "LastReleaseReason", &mut put, &mut del);
            put("JobStatus", Expr::int(status::HELD));
            Change::Update { set, delete }
        }
        Action::Release => {
            let next = int_attr(ad, "JobStatusOnRelease").unwrap_or(status::IDLE);
            put("ReleaseReason", Expr::string(reason));
            move_attr(ad, "HoldReason", "LastHoldReason", &mut put, &mut del);
            move_attr(
                ad,
                "HoldReasonCode",
                "LastHoldReasonCode",
                &mut put,
                &mut del,
            );
            move_attr(
                ad,
                "HoldReasonSubCode",
                "LastHoldReasonSubCode",
                &mut put,
                &mut del,
            );
            if ad.contains("JobStatusOnRelease") {
                del("JobStatusOnRelease");
            }
            put("JobStatus", Expr::int(next));
            if next == status::REMOVED && !truth(ad, "LeaveJobInQueue") {
                // Into history: what release deletes stays, undefined.
                set.extend(delete.into_iter().map(|n| (n, Expr::Lit(Value::Undefined))));
                return Change::Leave { set };
            }
            Change::Update { set, delete }
        }
        // The shadow changes the job when it has done what was asked.
        Action::Vacate | Action::VacateFast | Action::Suspend | Action::Continue => {
            Change::Skip(String::new())
        }
    }
}

/// The job events an action writes now. A running job's shadow writes the
/// abort (009) and hold (012) events when it has stopped the job, so they
/// are written here only for jobs nothing runs.
fn event(
    action: Action,
    row: &JobRow,
    ad: &ClassAd,
    change: &Change,
    reason: &str,
    subcode: Option<i64>,
) -> Vec<Event> {
    let leaves = matches!(change, Change::Leave { .. });
    match action {
        Action::Remove | Action::ForceRemove if leaves => vec![Event::aborted(row.id, reason)],
        Action::Hold if !is_running(row.status) => vec![Event::held(
            row.id,
            reason,
            HOLD_CODE_USER_REQUEST,
            subcode.unwrap_or(0),
        )],
        Action::Release => {
            let mut v = vec![Event::released(row.id, reason)];
            if leaves {
                let why = super::format::string(ad, "RemoveReason").unwrap_or_default();
                v.push(Event::aborted(row.id, &why));
            }
            v
        }
        _ => Vec::new(),
    }
}

fn is_running(s: i64) -> bool {
    matches!(
        s,
        status::RUNNING | status::TRANSFERRING_OUTPUT | status::SUSPENDED
    )
}

/// HTCondor's `moveStrAttr`/`moveIntAttr`: the value goes to `to` and
/// `from` goes away. The queue cannot delete an attribute yet, so `from`
/// becomes `undefined`, which every expression reads the same way.
/// Moves an attribute to a new name (HoldReason to LastHoldReason).
fn move_attr(
    ad: &ClassAd,
    from: &str,
    to: &str,
    put: &mut impl FnMut(&str, Expr),
    del: &mut impl FnMut(&str),
) {
    let Some(e) = ad.get(from) else {
        return;
    };
    if matches!(e.literal_value(), Some(Value::Undefined)) {
        return;
    }
    put(to, e.clone());
    del(from);
}

fn int_attr(ad: &ClassAd, name: &str) -> Option<i64> {
    super::format::number(ad, name).map(|n| n as i64)
}

fn truth(ad: &ClassAd, name: &str) -> bool {
    match ad.get(name) {
        Some(e) => crate::classad::eval_in(&std::rc::Rc::new(ad.clone()), e).is_true(),
        None => false,
    }
}

/// The `-constraint` expressions joined with `&&`.
fn and_all(cs: &[(String, Expr)]) -> Option<Expr> {
    use crate::classad::ast::BinOp;
    cs.iter()
        .map(|(_, e)| Expr::Paren(Box::new(e.clone())))
        .reduce(|a, b| Expr::binary(BinOp::And, a, b))
}

/// How HTCondor's `condor_rm` words a constraint request: one cluster is
/// ` in cluster 3`, one user ` of user "bob"`, `-all` nothing, and anything
/// else the whole constraint it built, ` matching constraint (...)`.
fn describe(picked: &[String], constraints: &[(String, Expr)], all: bool) -> String {
    if all {
        return String::new();
    }
    let mut text = match constraints {
        [] => String::new(),
        [(one, _)] => one.clone(),
        [(first, _), rest @ ..] => {
            let mut t = format!("({first})");
            for (c, _) in rest {
                t.push_str(&format!(" && ({c})"));
            }
            t
        }
    };
    let picks = picked.join(" || ");
    match (constraints.len(), picked.len()) {
        (0, 1) => {
            let (attr, value) = picks.split_once(" == ").unwrap_or(("", &picks));
            return if attr == "Owner" {
                format!(" of user {value}")
            } else {
                format!(" in cluster {value}")
            };
        }
        (0, _) => text = picks,
        (1, n) if n > 0 => text = format!("({text}) && ({picks})"),
        (_, n) if n > 0 => text = format!("{text} && ({picks})"),
        _ => {}
    }
    format!(" matching constraint ({text})")
}

/// Who runs the tool, who may change anyone's jobs, and where the queue
/// is: the same for every request of one command line.
struct Asker {
    user: String,
    supers: Vec<String>,
    spool: PathBuf,
}

/// Results by kind, for `-totals`.
#[derive(Default)]
struct Counts {
    success: usize,
    not_found: usize,
    bad_status: usize,
    already_done: usize,
    denied: usize,
}

impl Counts {
    fn add(&mut self, o: Outcome) {
        match o {
            Outcome::Success => self.success += 1,
            Outcome::NotFound => self.not_found += 1,
            Outcome::BadStatus => self.bad_status += 1,
            Outcome::AlreadyDone => self.already_done += 1,
            Outcome::PermissionDenied => self.denied += 1,
        }
    }

    fn line(&self) -> String {
        format!(
            "{} Succeeded, 0 Failed, {} Not Found, {} Bad Status, {} Already Done, {} Permission Denied",
            self.success, self.not_found, self.bad_status, self.already_done, self.denied
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(text: &str) -> (String, Expr) {
        (text.to_string(), parse_expr_old(text).unwrap())
    }

    #[test]
    fn constraint_requests_are_described_as_condor_rm_does() {
        let cl = vec!["ClusterId == 3".to_string()];
        let us = vec!["Owner == \"bob\"".to_string()];
        let both = vec![cl[0].clone(), us[0].clone()];
        assert_eq!(describe(&cl, &[], false), " in cluster 3");
        assert_eq!(describe(&us, &[], false), " of user \"bob\"");
        assert_eq!(describe(&[], &[], true), "");
        assert_eq!(
            describe(&both, &[], false),
            " matching constraint (ClusterId == 3 || Owner == \"bob\")"
        );
        assert_eq!(
            describe(&[], &[c("JobStatus == 1")], false),
            " matching constraint (JobStatus == 1)"
        );
        assert_eq!(
            describe(&cl, &[c("JobStatus == 1")], false),
            " matching constraint ((JobStatus == 1) && (ClusterId == 3))"
        );
        assert_eq!(
            describe(&[], &[c("A"), c("B"), c("C")], false),
            " matching constraint ((A) && (B) && (C))"
        );
        assert_eq!(
            describe(&us, &[c("A"), c("B")], false),
            " matching constraint ((A) && (B) && (Owner == \"bob\"))"
        );
    }
}
