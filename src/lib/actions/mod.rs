//! Job actions as library operations: what HTCondor's schedd does in
//! `Scheduler::actOnJobs` (remove, hold, release, vacate, suspend,
//! continue), condor_prio's change of `JobPrio` ([`prio`]),
//! condor_qedit's attribute edits ([`attributes`]) and condor_userprio's
//! edits of the accountant ([`userprio`]).
//!
//! Each operation takes a [`Selection`], the [`Authority`] of the user who
//! asks and what to do; it makes one queue transaction through
//! [`Queue::write_as`], so the queue itself refuses a job the user may not
//! change, and returns what happened to each job as data. Nothing here
//! prints: the tools in `cli` turn the outcomes into HTCondor's messages,
//! and the router and hooks can call the same operations.
//!
//! [`act`] runs the `condor_rm` family. A running job is not stopped here:
//! the transaction records a request for its shadow ([`Request`]) and, for
//! remove and hold, the new JobStatus and reason; the shadow, woken once
//! the transaction has committed, carries it out, and a removed job leaves
//! the queue once nothing runs it. Vacate, suspend and continue change
//! nothing in the job themselves: the shadow sets JobStatus (Idle,
//! Suspended, Running) when it has done what was asked. Once the
//! transaction has committed, the job event logs of the jobs it changed
//! get their events (009 aborted, 012 held, 013 released), except those the
//! shadow of a running job will write when it has stopped it.

pub mod attributes;
pub mod prio;
pub mod userprio;

use std::collections::BTreeMap;

use std::rc::Rc;

use crate::classad::{ClassAd, Expr, Value};
use crate::negotiator::policy;
use crate::queue::{Change, JobId, Queue, QueueError, Selection, matches_constraint};
use crate::userlog::{Event, UserLog, UserLogError, log_job_events};
use crate::vocab::{JobStatus, Request, hold_code};

pub use crate::queue::Authority;

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
    /// Whether a constraint request matches a job in state `s` (HTCondor
    /// adds this clause to the user's constraint).
    fn matches_status(self, s: Option<JobStatus>, ad: &Rc<ClassAd>) -> bool {
        use JobStatus::*;
        match self {
            Action::Remove => s != Some(Removed),
            Action::ForceRemove => {
                s == Some(Removed)
                    || (s == Some(Held)
                        && ad.eval_int("JobStatusOnRelease") == Some(Removed.code()))
            }
            // The schedd's clause leaves out removed and completed jobs
            // too: they cannot be held.
            Action::Hold => !matches!(s, Some(Held | Removed | Completed)),
            Action::Release => s == Some(Held),
            // HTCondor vacates only running jobs; a suspended one is
            // continued and stopped by its shadow all the same.
            Action::Vacate | Action::VacateFast => is_active(s),
            Action::Suspend => matches!(s, Some(Running | TransferringOutput)),
            Action::Continue => s == Some(Suspended),
        }
    }

    /// The request a running job's shadow gets, if the action stops or
    /// pauses the job.
    pub fn request(self) -> Option<Request> {
        match self {
            Action::Remove | Action::ForceRemove => Some(Request::Remove),
            Action::Hold => Some(Request::Hold),
            Action::Release => None,
            Action::Vacate => Some(Request::Vacate),
            Action::VacateFast => Some(Request::VacateFast),
            Action::Suspend => Some(Request::Suspend),
            Action::Continue => Some(Request::Continue),
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

/// How the jobs were named, which decides how a job in the wrong state
/// counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Named {
    /// By `cluster.proc`: a job the action does not apply to is reported
    /// (already held, not running, ...).
    ById,
    /// By cluster, user, constraint or everything: jobs the action does not
    /// apply to are not matched at all, as the schedd adds a status clause
    /// to the constraint.
    ByConstraint,
}

/// One action as a user asks for it.
#[derive(Clone, Debug)]
pub struct JobAction {
    pub action: Action,
    /// The reason to record (`-reason`, or the tool's `via tern_rm`);
    /// ` (by user NAME)` is added, naming the authority's user.
    pub reason: String,
    /// HoldReasonSubCode for a hold (0 when `None`).
    pub subcode: Option<i64>,
}

/// What an action did.
#[derive(Debug, Default)]
pub struct Acted {
    /// Each job the selection matched, by id. A job that is not in the
    /// queue has no entry (it was not found).
    pub outcomes: BTreeMap<JobId, Outcome>,
    /// A job event log that could not be written; the queue change stands.
    pub log_error: Option<UserLogError>,
}

/// Acts on the jobs `sel` names in one transaction for `authority` and
/// returns what happened to each. A job the user may not change is
/// [`Outcome::PermissionDenied`] and left alone. Once the transaction has
/// committed, the shadows of running jobs are woken and the events of the
/// changed jobs go to their job event logs.
pub fn act(
    queue: &mut Queue,
    authority: &Authority,
    what: &JobAction,
    sel: &Selection,
    named: Named,
    now: i64,
) -> Result<Acted, QueueError> {
    let action = what.action;
    let reason = format!("{} (by user {})", what.reason, authority.user());
    let mut outcomes = BTreeMap::new();
    let mut events: Vec<(UserLog, Event)> = Vec::new();
    let mut wake: Vec<JobId> = Vec::new();
    queue.write_as(authority, now, |w| {
        for row in w.rows(sel)? {
            let ad = Rc::new(w.full_ad(&row)?);
            if let Some(c) = &sel.constraint
                && !matches_constraint(c, &ad)
            {
                continue;
            }
            let status = JobStatus::from_code(row.status);
            // A grid job has no shadow: its gridmanager (see crate::grid)
            // stops it, and its events are written here. Nor does a job
            // the router runs elsewhere: its hold and removal are logged
            // here and the router stops the copy; a vacate, suspend or
            // continue does nothing to it, as the schedd's
            // `abort_job_myself` leaves an externally managed job alone.
            let shadowed = is_active(status) && !is_grid(&ad) && !policy::managed_externally(&ad);
            if named == Named::ByConstraint && !action.matches_status(status, &ad) {
                continue;
            }
            // Whose job it is comes first, as in the schedd's actOnJobs
            // (UserCheck2, then the state): another user's job is
            // "Permission denied" whatever its state, and says nothing of it.
            let planned = match named {
                _ if !w.may_change(&row) => Err(Outcome::PermissionDenied),
                Named::ByConstraint => Ok(()),
                Named::ById => precheck(action, status, &ad),
            };
            let outcome = match planned {
                Err(o) => o,
                Ok(()) => Outcome::Success,
            };
            outcomes.insert(row.id, outcome);
            if outcome != Outcome::Success {
                continue;
            }
            let c = change(action, shadowed, status, &ad, &reason, what.subcode);
            if let Some(path) = crate::userlog::user_log(&ad) {
                let (owed, writes) = owed_by_the_stop(w, action, row.id, status, shadowed, &ad)?;
                let own = event(action, row.id, writes, &ad, &c, &reason, what.subcode);
                for e in owed.into_iter().chain(own) {
                    events.push((path.clone(), e));
                }
            }
            w.change(&row, &ad, &c)?;
            // A running job is stopped by its shadow, which writes the
            // event once the job is down.
            if shadowed && let Some(k) = action.request() {
                w.request(row.id, k)?;
                wake.push(row.id);
            }
        }
        Ok(())
    })?;
    for id in wake {
        crate::queue::joblock::wake(queue.spool(), id);
    }
    Ok(Acted {
        outcomes,
        log_error: log_job_events(&events).err(),
    })
}

/// For a job with an event log: the events a stop for a hold still in
/// progress owes that this action writes first, and whether someone else
/// (the shadow, or whoever records the stop) writes the action's own
/// event ([`policy::owed_by_a_hold_stop`]). A release back to Removed
/// (`JobStatusOnRelease`, which a hold of a removed job sets) counts as a
/// removal: the stop's events are written now, ahead of the 013.
fn owed_by_the_stop<A>(
    w: &crate::queue::Writer<'_, A>,
    action: Action,
    id: JobId,
    status: Option<JobStatus>,
    shadowed: bool,
    ad: &Rc<ClassAd>,
) -> Result<(Vec<Event>, bool), QueueError> {
    let step = match action {
        _ if shadowed => return Ok((Vec::new(), true)),
        Action::Remove | Action::ForceRemove => policy::Step::Remove,
        Action::Release if releases_to_removed(ad) => policy::Step::Remove,
        Action::Release => policy::Step::Release,
        Action::Hold => policy::Step::Hold,
        _ => return Ok((Vec::new(), false)),
    };
    policy::owed_by_a_hold_stop(w, id, status, ad, step)
}

/// Whether a release sets the job Removed (its `JobStatusOnRelease`).
fn releases_to_removed(ad: &Rc<ClassAd>) -> bool {
    ad.eval_int("JobStatusOnRelease") == Some(JobStatus::Removed.code())
}

/// Why a job named by id cannot take the action, checked (as the schedd
/// does) once the user may change it.
fn precheck(action: Action, s: Option<JobStatus>, ad: &Rc<ClassAd>) -> Result<(), Outcome> {
    match action {
        Action::Remove if s == Some(JobStatus::Removed) => Err(Outcome::AlreadyDone),
        Action::Hold if s == Some(JobStatus::Held) => Err(Outcome::AlreadyDone),
        // HTCondor answers "permission denied" for these.
        Action::Hold if matches!(s, Some(JobStatus::Removed | JobStatus::Completed)) => {
            Err(Outcome::PermissionDenied)
        }
        Action::Release if s != Some(JobStatus::Held) => Err(Outcome::BadStatus),
        Action::ForceRemove
        | Action::Vacate
        | Action::VacateFast
        | Action::Suspend
        | Action::Continue
            if !action.matches_status(s, ad) =>
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
    shadowed: bool,
    status: Option<JobStatus>,
    ad: &Rc<ClassAd>,
    reason: &str,
    subcode: Option<i64>,
) -> Change {
    let mut set: Vec<(String, Expr)> = Vec::new();
    let mut delete: Vec<String> = Vec::new();
    let mut put = |name: &str, e: Expr| set.push((name.to_string(), e));
    let mut del = |name: &str| delete.push(name.to_string());
    // The schedd sets JobStatus before it tries DestroyProc, so an
    // expression over JobStatus sees the job removed.
    let leave_once_removed = || {
        let mut after = (**ad).clone();
        after.insert("JobStatus", JobStatus::Removed.expr());
        Rc::new(after).eval("LeaveJobInQueue").is_true()
    };
    match action {
        Action::Remove => {
            put("RemoveReason", Expr::string(reason));
            put("JobStatus", JobStatus::Removed.expr());
            // A grid job its gridmanager manages stays until the remote
            // job is cancelled (the gridmanager then lets it leave), and a
            // routed job whose copy runs until the router has removed the
            // copy (it then lets the job leave).
            let kept_for_its_manager =
                policy::managed_externally(ad) && (is_grid(ad) || is_active(status));
            if shadowed || leave_once_removed() || kept_for_its_manager {
                return Change::Set(set);
            }
            Change::Leave { set }
        }
        Action::ForceRemove => {
            put("LeaveJobInQueue", Expr::Lit(Value::Bool(false)));
            put("RemoveReason", Expr::string(reason));
            put("JobStatus", JobStatus::Removed.expr());
            Change::Leave { set }
        }
        Action::Hold => {
            put("HoldReason", Expr::string(reason));
            put("HoldReasonCode", Expr::int(hold_code::USER_REQUEST));
            put("HoldReasonSubCode", Expr::int(subcode.unwrap_or(0)));
            move_attr(ad, "ReleaseReason", "LastReleaseReason", &mut put, &mut del);
            put("JobStatus", JobStatus::Held.expr());
            Change::Update { set, delete }
        }
        Action::Release => {
            let next = ad
                .eval_int("JobStatusOnRelease")
                .unwrap_or(JobStatus::Idle.code());
            put("ReleaseReason", Expr::string(reason));
            for (from, to) in [
                ("HoldReason", "LastHoldReason"),
                ("HoldReasonCode", "LastHoldReasonCode"),
                ("HoldReasonSubCode", "LastHoldReasonSubCode"),
            ] {
                move_attr(ad, from, to, &mut put, &mut del);
            }
            if ad.contains("JobStatusOnRelease") {
                del("JobStatusOnRelease");
            }
            put("JobStatus", Expr::int(next));
            if next == JobStatus::Removed.code() && !leave_once_removed() {
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
/// abort (009) and hold (012) events when it has stopped the job, and the
/// release (013) of a job it is still stopping for a hold, so they are
/// written here only for jobs nothing runs (`shadowed` false).
fn event(
    action: Action,
    id: JobId,
    shadowed: bool,
    ad: &Rc<ClassAd>,
    change: &Change,
    reason: &str,
    subcode: Option<i64>,
) -> Vec<Event> {
    let leaves = matches!(change, Change::Leave { .. });
    match action {
        // A job nothing runs is aborted now, whether it leaves the queue
        // or LeaveJobInQueue keeps it there (as the schedd writes 009
        // before it tries DestroyProc).
        Action::Remove | Action::ForceRemove if leaves || !shadowed => {
            vec![Event::aborted(id, reason)]
        }
        Action::Hold if !shadowed => vec![Event::held(
            id,
            reason,
            hold_code::USER_REQUEST,
            subcode.unwrap_or(0),
        )],
        Action::Release if shadowed && !leaves => Vec::new(),
        Action::Release => {
            let mut v = vec![Event::released(id, reason)];
            if leaves {
                let why = ad.eval_str("RemoveReason").unwrap_or_default();
                v.push(Event::aborted(id, &why));
            }
            v
        }
        _ => Vec::new(),
    }
}

/// Whether a job is of the grid universe.
fn is_grid(ad: &Rc<ClassAd>) -> bool {
    ad.eval_int("JobUniverse") == Some(crate::vocab::Universe::Grid.code())
}

/// Whether a shadow runs the job (running, transferring output or
/// suspended).
fn is_active(s: Option<JobStatus>) -> bool {
    s.is_some_and(JobStatus::is_active)
}

/// HTCondor's `moveStrAttr`/`moveIntAttr`: the value goes to `to` and
/// `from` goes away (HoldReason to LastHoldReason). An attribute the job
/// takes from its cluster ad is deleted by making it undefined in the job
/// (see [`Change::Update`]).
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

#[cfg(test)]
mod tests;
