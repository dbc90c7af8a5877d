//! The command line and messages of `tern_rm`, `tern_hold`, `tern_release`,
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
//! Each request is one queue transaction, made by [`crate::actions::act`],
//! which also holds what each action does to a job, the shadow requests
//! and the job events. Only jobs whose Owner is the real user (or any job,
//! for a user named in `QUEUE_SUPER_USERS` or with
//! `QUEUE_ALL_USERS_TRUSTED`) may be changed; the reason
//! attribute records who asked. This module reads the command line and
//! prints the outcomes in HTCondor's words. A request that acts on no job
//! at all makes the exit status 1, as in HTCondor; one that acts on some is
//! a success even when others were refused.

use std::io::{self, Write};

use crate::actions::{self, Action, Authority, JobAction, Named, Outcome};
use crate::classad::Expr;
use crate::classad::parser::parse_expr_old;
use crate::queue::{JobId, Queue, Selection};

use super::CliError;
use super::env::ToolEnv;
use super::jobsel::parse_id;

/// The word for the result, as HTCondor prints it.
fn past(action: Action) -> &'static str {
    match action {
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
fn verb(action: Action) -> &'static str {
    match action {
        Action::Remove | Action::ForceRemove => "remove",
        Action::Hold => "hold",
        Action::Release => "release",
        Action::Vacate => "vacate",
        Action::VacateFast => "fast-vacate",
        Action::Suspend => "suspend",
        Action::Continue => "continue",
    }
}

fn denied_verb(action: Action) -> &'static str {
    match action {
        Action::ForceRemove => "force removal of",
        other => verb(other),
    }
}

/// The reason recorded without `-reason` (the library adds who asked).
fn default_reason(action: Action, tool: &str) -> String {
    match action {
        Action::ForceRemove => format!("via {tool} -forcex"),
        _ => format!("via {tool}"),
    }
}

/// A parsed command line of one of the `condor_rm` family: what to do and
/// to which jobs, before the queue is opened.
#[derive(Clone, Debug)]
pub struct JobCommand {
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

impl JobCommand {
    /// Reads the common options: what to act on and how to describe it.
    pub fn new(
        tool: &'static str,
        action: Action,
        common: &Common,
        reason: Option<String>,
    ) -> Result<JobCommand, CliError> {
        let mut req = JobCommand {
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
                    note!("Invalid cluster # from {a}.");
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
            let e = parse_expr_old(c).map_err(|e| CliError::constraint(c, e))?;
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

    /// Runs the command against the queue in SPOOL, printing what happened.
    pub fn run(&self) -> Result<(), CliError> {
        let env = ToolEnv::open(self.tool)?;
        let mut queue = env.queue(false)?;
        let authority = Authority::from_config(&env.cfg, env.user.as_str())?;
        let what = JobAction {
            action: self.action,
            reason: self
                .reason
                .clone()
                .unwrap_or_else(|| default_reason(self.action, self.tool)),
            subcode: self.subcode,
        };
        let mut had_error = self.bad_args;
        let mut log_errors: Vec<String> = Vec::new();
        let stdout = io::stdout();
        let mut out = stdout.lock();
        if !self.ids.is_empty() {
            let acted = self.by_ids(queue.as_mut(), &authority, &what, &mut out)?;
            had_error |= acted.failed;
            log_errors.extend(acted.log_error);
        }
        if self.has_constraint_request() {
            let acted = self.by_constraint(queue.as_mut(), &authority, &what, &mut out)?;
            had_error |= acted.failed;
            log_errors.extend(acted.log_error);
        }
        out.flush()?;
        if let Some(first) = log_errors.first() {
            return Err(CliError::Failed {
                msg: format!(
                    "the jobs were {}, but not every job event log was written: {first}",
                    past(self.action)
                ),
                hint: None,
            });
        }
        if had_error {
            return Err(CliError::Reported(1));
        }
        Ok(())
    }

    /// The request of the `cluster.proc` arguments: a line for each job.
    fn by_ids(
        &self,
        queue: Option<&mut Queue>,
        authority: &Authority,
        what: &JobAction,
        out: &mut impl Write,
    ) -> Result<Reported, CliError> {
        if !self.constraints.is_empty() {
            note!("Warning, -constraint is ignored for fully qualified job ids");
        }
        let sel = Selection {
            jobs: self.ids.clone(),
            ..Selection::default()
        };
        let acted = act(queue, authority, what, &sel, Named::ById)?;
        let mut counts = Counts::default();
        for id in &self.ids {
            let o = acted.outcomes.get(id).copied().unwrap_or(Outcome::NotFound);
            counts.add(o);
            let msg = self.message(*id, o);
            if o == Outcome::Success {
                writeln!(out, "{msg}")?;
            } else {
                note!("{msg}");
            }
        }
        if self.totals {
            writeln!(out, "{}", counts.line())?;
        }
        Ok(Reported {
            failed: counts.success == 0,
            log_error: acted.log_error.map(|e| e.to_string()),
        })
    }

    /// The constraint request: one line for all the jobs it matched.
    fn by_constraint(
        &self,
        mut queue: Option<&mut Queue>,
        authority: &Authority,
        what: &JobAction,
        out: &mut impl Write,
    ) -> Result<Reported, CliError> {
        let sel = self.selection();
        let acted = act(
            queue.as_deref_mut(),
            authority,
            what,
            &sel,
            Named::ByConstraint,
        )?;
        let mut counts = Counts::default();
        for o in acted.outcomes.values() {
            counts.add(*o);
        }
        if self.totals {
            writeln!(out, "{}", counts.line())?;
        }
        let mut failed = false;
        if counts.success > 0 {
            writeln!(
                out,
                "All jobs{} have been {}",
                self.description,
                past(self.action)
            )?;
        } else {
            let in_queue = match &queue {
                Some(q) => q.rows(&Selection::default())?.len(),
                None => 0,
            };
            if in_queue == 0 {
                note!("{}:0:There are no jobs in the queue", self.tool);
            } else {
                note!(
                    "Couldn't find/{} all jobs{}",
                    verb(self.action),
                    self.description
                );
                failed = true;
            }
        }
        Ok(Reported {
            failed,
            log_error: acted.log_error.map(|e| e.to_string()),
        })
    }

    /// The line HTCondor prints for one job.
    fn message(&self, id: JobId, o: Outcome) -> String {
        match o {
            Outcome::Success => format!("Job {id} {}", past(self.action)),
            Outcome::NotFound => format!("Job {id} not found"),
            Outcome::PermissionDenied => {
                format!("Permission denied to {} job {id}", denied_verb(self.action))
            }
            Outcome::BadStatus => match self.action {
                Action::Release => format!("Job {id} not held to be released"),
                Action::ForceRemove => {
                    format!("Job {id} not in `X' state to be forcibly removed")
                }
                // HTCondor's words, "running" for continue too.
                Action::Vacate | Action::VacateFast | Action::Suspend | Action::Continue => {
                    format!("Job {id} not running to be {}", past(self.action))
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

/// [`actions::act`] on the queue, if there is one: without a queue no job
/// is found.
fn act(
    queue: Option<&mut Queue>,
    authority: &Authority,
    what: &JobAction,
    sel: &Selection,
    named: Named,
) -> Result<actions::Acted, CliError> {
    match queue {
        Some(q) => Ok(actions::act(
            q,
            authority,
            what,
            sel,
            named,
            crate::clock::now(),
        )?),
        None => Ok(actions::Acted::default()),
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

/// How one request went: whether it counts as a failure (exit status 1)
/// and the job event log that could not be written.
struct Reported {
    failed: bool,
    log_error: Option<String>,
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
