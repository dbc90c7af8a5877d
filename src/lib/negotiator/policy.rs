//! Job policy: the periodic expressions a pass evaluates, the on-exit
//! expressions the shadow evaluates, and the job changes every stop of a
//! run makes (requeue, hold, remove), so the pass, the shadow and the tools
//! change a job the same way.

use std::rc::Rc;

use crate::classad::unparse::unparse;
use crate::classad::{ClassAd, Expr, Value};
use crate::queue::{Change, JobId};
use crate::userlog::Event;
use crate::vocab::{JobStatus, Request, hold_code};

/// Set on a cron job whose next DeferralTime must be computed by the next
/// pass whatever its current one says (after a run, or a missed time): the
/// schedd's "forced recompute".
pub const RECOMPUTE: &str = "CronRecompute";

/// The five CronTab attributes, in field order.
pub const CRON_ATTRS: [&str; 5] = [
    "CronMinute",
    "CronHour",
    "CronDayOfMonth",
    "CronMonth",
    "CronDayOfWeek",
];

/// A cron job has any of the five CronTab attributes.
pub fn is_cron(ad: &ClassAd) -> bool {
    CRON_ATTRS.iter().any(|n| ad.contains(n))
}

/// What a policy expression decided.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Hold {
        reason: String,
        code: i64,
        subcode: i64,
    },
    Release {
        reason: String,
    },
    Remove {
        reason: String,
    },
    /// Back to Idle: the run is stopped, as `tern_vacate_job` stops it.
    Vacate {
        reason: String,
    },
}

/// Whether an expression attribute could ever fire: present and not the
/// literal `false` (as every submitted job carries it).
pub fn may_fire(ad: &ClassAd, name: &str) -> bool {
    match ad.get(name) {
        None => false,
        Some(e) => !matches!(e.literal_value(), Some(Value::Bool(false))),
    }
}

/// HTCondor's firing reason: `The job attribute PeriodicHold expression
/// 'x > 1' evaluated to TRUE`.
pub fn firing_reason(ad: &ClassAd, name: &str) -> String {
    let text = ad.get(name).map(unparse).unwrap_or_default();
    format!("The job attribute {name} expression '{text}' evaluated to TRUE")
}

/// The periodic policy of a job in the queue, in HTCondor's order:
/// PeriodicVacate (running or suspended jobs), PeriodicHold (jobs not
/// held), PeriodicRelease (held jobs), then PeriodicRemove. An expression
/// that is not true does nothing.
pub fn periodic(ad: &Rc<ClassAd>, job_status: Option<JobStatus>) -> Option<Action> {
    if matches!(job_status, Some(JobStatus::Running | JobStatus::Suspended))
        && may_fire(ad, "PeriodicVacate")
        && ad.eval("PeriodicVacate").is_true()
    {
        return Some(Action::Vacate {
            reason: firing_reason(ad, "PeriodicVacate"),
        });
    }
    if job_status != Some(JobStatus::Held)
        && job_status != Some(JobStatus::Removed)
        && may_fire(ad, "PeriodicHold")
        && ad.eval("PeriodicHold").is_true()
    {
        let (reason, subcode) = custom_hold(
            ad,
            "PeriodicHold",
            "PeriodicHoldReason",
            "PeriodicHoldSubCode",
        );
        return Some(Action::Hold {
            reason,
            code: hold_code::JOB_POLICY,
            subcode,
        });
    }
    if job_status == Some(JobStatus::Held)
        && may_fire(ad, "PeriodicRelease")
        && ad.eval("PeriodicRelease").is_true()
    {
        return Some(Action::Release {
            reason: firing_reason(ad, "PeriodicRelease"),
        });
    }
    if job_status != Some(JobStatus::Removed)
        && may_fire(ad, "PeriodicRemove")
        && ad.eval("PeriodicRemove").is_true()
    {
        return Some(Action::Remove {
            reason: firing_reason(ad, "PeriodicRemove"),
        });
    }
    None
}

/// The hold reason and subcode for a firing hold expression: the job's
/// `…HoldReason`/`…HoldSubCode` expressions when they give a string / an
/// integer, else the firing reason and 0.
fn custom_hold(ad: &Rc<ClassAd>, expr: &str, reason_attr: &str, sub_attr: &str) -> (String, i64) {
    let reason = ad
        .eval_str(reason_attr)
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| firing_reason(ad, expr));
    (reason, ad.eval_int(sub_attr).unwrap_or(0))
}

/// What happens to a job whose process has exited (the ad holds the exit
/// attributes): OnExitHold first, then OnExitRemove (default true).
pub enum ExitDecision {
    Complete,
    Hold { reason: String, subcode: i64 },
    Requeue,
}

pub fn on_exit(ad: &Rc<ClassAd>) -> ExitDecision {
    if may_fire(ad, "OnExitHold") && ad.eval("OnExitHold").is_true() {
        let (reason, subcode) =
            custom_hold(ad, "OnExitHold", "OnExitHoldReason", "OnExitHoldSubCode");
        return ExitDecision::Hold { reason, subcode };
    }
    match ad.get("OnExitRemove") {
        None => ExitDecision::Complete,
        Some(_) => match ad.eval("OnExitRemove") {
            // Undefined counts as true, as in HTCondor's user policy.
            Value::Undefined => ExitDecision::Complete,
            v if v.is_true() => ExitDecision::Complete,
            _ => ExitDecision::Requeue,
        },
    }
}

/// The attributes a run that ends (for any reason) adds up: wall-clock and
/// slot time of this run, and the run's host as LastRemoteHost.
pub fn end_of_run(ad: &Rc<ClassAd>, now: i64) -> Vec<(String, Expr)> {
    let mut set = Vec::new();
    let start = ad.eval_int("JobCurrentStartDate").filter(|s| *s > 0);
    let run = start.map(|s| (now - s).max(0)).unwrap_or(0);
    let wall = ad.eval_real("RemoteWallClockTime").unwrap_or(0.0);
    set.push((
        "RemoteWallClockTime".to_string(),
        Expr::Lit(Value::Real(wall + run as f64)),
    ));
    let slot_time = ad.eval_real("CumulativeSlotTime").unwrap_or(0.0);
    set.push((
        "CumulativeSlotTime".to_string(),
        Expr::Lit(Value::Real(slot_time + run as f64)),
    ));
    set.push(("LastJobLeaseRenewal".into(), Expr::int(now)));
    if let Some(h) = ad.eval_str("RemoteHost") {
        set.push(("LastRemoteHost".to_string(), Expr::string(&h)));
    }
    set
}

/// The events owed when a run held while it ran is stopped after the job
/// was released: the hold (012), with the reason the release moved to
/// LastHoldReason, then the release (013) that tern_release left to
/// whoever records the stop, so that the log keeps the queue's order.
pub fn held_then_released(ad: &Rc<ClassAd>, id: JobId) -> Vec<Event> {
    let mut events = vec![hold_event(ad, id, "Last")];
    if let Some(why) = ad.eval_str("ReleaseReason") {
        events.push(Event::released(id, &why));
    }
    events
}

/// Whether the job router or a gridmanager manages the job (`Managed ==
/// "External"`): no shadow runs it here, whatever its status says.
pub fn managed_externally(ad: &Rc<ClassAd>) -> bool {
    ad.eval_str("Managed").as_deref() == Some("External")
}

/// The events a run's stop for a hold owes, written by whoever records
/// the stop: the hold's 012, or, for a job released before it was down
/// (no longer Held), the 012 and the release's 013 ([`held_then_released`]).
pub fn hold_stop_events(ad: &Rc<ClassAd>, id: JobId, status: Option<JobStatus>) -> Vec<Event> {
    if status == Some(JobStatus::Held) {
        vec![hold_event(ad, id, "")]
    } else {
        held_then_released(ad, id)
    }
}

/// A change the pass or a tool makes to a job that no shadow runs, as far
/// as a stop for a hold that may still be in progress is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Hold,
    Release,
    /// A removal, or a release to `JobStatusOnRelease` Removed.
    Remove,
}

/// The events a stop for a hold still in progress owes that `step` must
/// write before its own, and whether the one who records the stop writes
/// `step`'s own event instead of the caller.
///
/// A job held while it ran keeps its hold request until the stop is
/// recorded (by its shadow, or by the pass that puts right a dead one),
/// and the recorder writes the hold's 012 once the job is down. A release
/// meanwhile leaves its 013 to the recorder as well, after the 012
/// ([`held_then_released`]), so that the log keeps the queue's order; so
/// does a second hold of the released job, whose 012 the recorder writes
/// after the first two, which the hold writes now. A removal writes what
/// the stop still owes (the 012, or the 012 and the 013), then its 009,
/// and the recorder writes nothing more ([`aborted_by_a_tool`]). A job
/// the router manages has no shadow to record a stop, whatever requests
/// it was left. The requests are read only here: callers ask only for a
/// job with an event log, so that bulk changes to jobs without one cost
/// nothing more.
pub fn owed_by_a_hold_stop<A>(
    w: &crate::queue::Writer<'_, A>,
    id: JobId,
    status: Option<JobStatus>,
    ad: &Rc<ClassAd>,
    step: Step,
) -> Result<(Vec<Event>, bool), crate::queue::QueueError> {
    if managed_externally(ad) || !w.requests(id)?.contains(&Request::Hold) {
        return Ok((Vec::new(), false));
    }
    let owed = match status {
        Some(JobStatus::Held) if step == Step::Remove => vec![hold_event(ad, id, "")],
        Some(JobStatus::Idle) => held_then_released(ad, id),
        _ => Vec::new(),
    };
    Ok((owed, step != Step::Remove))
}

/// Whether a tool or the pass removed the job, and wrote its 009, while
/// its run was being stopped for a hold: the job is Removed with the
/// hold's request still pending and no removal request, which only the
/// removal of a job no shadow ran (held, or released), or its release
/// back to Removed, leaves. Whoever records the stop then writes no
/// event: the remover wrote the ones the stop owed before its 009
/// ([`owed_by_a_hold_stop`]).
pub fn aborted_by_a_tool(status: Option<JobStatus>, requests: &[Request]) -> bool {
    status == Some(JobStatus::Removed)
        && requests.contains(&Request::Hold)
        && !requests.contains(&Request::Remove)
}

/// The 012 of the hold the job's ad records: its `HoldReason`,
/// `HoldReasonCode` and `HoldReasonSubCode`, or with `prefix` "Last" the
/// ones a release moved them to.
fn hold_event(ad: &Rc<ClassAd>, id: JobId, prefix: &str) -> Event {
    let reason = ad.eval_str(&format!("{prefix}HoldReason"));
    let code = ad.eval_int(&format!("{prefix}HoldReasonCode"));
    let sub = ad.eval_int(&format!("{prefix}HoldReasonSubCode"));
    Event::held(
        id,
        &reason.unwrap_or_default(),
        code.unwrap_or(0),
        sub.unwrap_or(0),
    )
}

/// A run that stopped without the job finishing: back to Idle.
/// `vacate` adds the vacate reason and code; a shadow that vanished counts
/// as a shadow exception.
pub fn requeue(
    ad: &Rc<ClassAd>,
    now: i64,
    vacate: Option<(&str, i64)>,
    shadow_exception: bool,
) -> Change {
    let mut set = end_of_run(ad, now);
    set.push(("JobStatus".into(), JobStatus::Idle.expr()));
    set.push(("LastVacateTime".into(), Expr::int(now)));
    if let Some((reason, code)) = vacate {
        set.push(("VacateReason".into(), Expr::string(reason)));
        set.push(("VacateReasonCode".into(), Expr::int(code)));
    }
    if shadow_exception {
        let n = ad.eval_int("NumShadowExceptions").unwrap_or(0);
        set.push(("NumShadowExceptions".into(), Expr::int(n + 1)));
    }
    Change::Update {
        set,
        delete: running_attrs(ad),
    }
}

/// The attributes that describe the current run and go when it ends.
pub fn running_attrs(ad: &ClassAd) -> Vec<String> {
    [
        "RemoteHost",
        "RemoteSlotId",
        "ShadowPid",
        "DeferralWaitUntil",
    ]
    .iter()
    .filter(|n| ad.contains(n))
    .map(|n| n.to_string())
    .collect()
}

/// A hold by policy or by the shadow: JobStatus 5 with reason and codes.
/// `running` ends the run's accounting too.
pub fn hold(
    ad: &Rc<ClassAd>,
    now: i64,
    reason: &str,
    code: i64,
    subcode: i64,
    running: bool,
) -> Change {
    let mut set = if running {
        end_of_run(ad, now)
    } else {
        Vec::new()
    };
    set.push(("HoldReason".into(), Expr::string(reason)));
    set.push(("HoldReasonCode".into(), Expr::int(code)));
    set.push(("HoldReasonSubCode".into(), Expr::int(subcode)));
    set.push(("JobStatus".into(), JobStatus::Held.expr()));
    let n = ad.eval_int("NumHolds").unwrap_or(0);
    set.push(("NumHolds".into(), Expr::int(n + 1)));
    Change::Update {
        set,
        delete: if running {
            running_attrs(ad)
        } else {
            Vec::new()
        },
    }
}

/// A release by policy: Held to Idle (or back to Removed).
pub fn release(ad: &Rc<ClassAd>, reason: &str) -> Change {
    let mut set = vec![("ReleaseReason".to_string(), Expr::string(reason))];
    let mut delete = Vec::new();
    for (from, to) in [
        ("HoldReason", "LastHoldReason"),
        ("HoldReasonCode", "LastHoldReasonCode"),
        ("HoldReasonSubCode", "LastHoldReasonSubCode"),
    ] {
        if let Some(e) = ad.get(from) {
            set.push((to.to_string(), e.clone()));
            delete.push(from.to_string());
        }
    }
    let next = ad
        .eval_int("JobStatusOnRelease")
        .unwrap_or(JobStatus::Idle.code());
    if ad.contains("JobStatusOnRelease") {
        delete.push("JobStatusOnRelease".into());
    }
    set.push(("JobStatus".into(), Expr::int(next)));
    Change::Update { set, delete }
}

/// A removal by policy or of a finished run: JobStatus 3, into history
/// unless LeaveJobInQueue.
pub fn remove(ad: &Rc<ClassAd>, now: i64, reason: &str, running: bool) -> Change {
    let mut set = if running {
        end_of_run(ad, now)
    } else {
        Vec::new()
    };
    set.push(("RemoveReason".into(), Expr::string(reason)));
    set.push(("JobStatus".into(), JobStatus::Removed.expr()));
    if running {
        for n in running_attrs(ad) {
            set.push((n, Expr::Lit(Value::Undefined)));
        }
    }
    leave_or_stay(ad, set)
}

/// Whether a Completed or Removed job kept in the queue by LeaveJobInQueue
/// may leave it now: the schedd retries DestroyProc for such jobs (when no
/// shadow has them) on every periodic pass, and it succeeds once the
/// expression is no longer true.
pub fn kept_job_may_leave(ad: &Rc<ClassAd>, status: Option<JobStatus>) -> bool {
    matches!(status, Some(JobStatus::Completed | JobStatus::Removed))
        && !ad.eval("LeaveJobInQueue").is_true()
}

/// `Change::Leave` unless the job's LeaveJobInQueue is true once `set` is
/// made: the schedd sets the new JobStatus (and the rest) before it tries
/// DestroyProc, so `leave_in_queue = JobStatus == 4` keeps a job that
/// completes.
pub fn leave_or_stay(ad: &Rc<ClassAd>, set: Vec<(String, Expr)>) -> Change {
    let mut after = (**ad).clone();
    for (n, e) in &set {
        after.insert(n, e.clone());
    }
    if Rc::new(after).eval("LeaveJobInQueue").is_true() {
        Change::Set(set)
    } else {
        Change::Leave { set }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ad(text: &str) -> Rc<ClassAd> {
        Rc::new(crate::classad::parse_ad(text).unwrap())
    }

    #[test]
    fn leave_in_queue_sees_the_job_as_the_change_leaves_it() {
        let a = ad("[LeaveJobInQueue = JobStatus == 4; JobStatus = 2]");
        let done = vec![("JobStatus".to_string(), JobStatus::Completed.expr())];
        assert!(matches!(leave_or_stay(&a, done), Change::Set(_)));
        let gone = vec![("JobStatus".to_string(), JobStatus::Removed.expr())];
        assert!(matches!(leave_or_stay(&a, gone), Change::Leave { .. }));
        let kept = ad("[LeaveJobInQueue = true; JobStatus = 4]");
        assert!(!kept_job_may_leave(&kept, Some(JobStatus::Completed)));
        let freed = ad("[LeaveJobInQueue = false; JobStatus = 4]");
        assert!(kept_job_may_leave(&freed, Some(JobStatus::Completed)));
        assert!(!kept_job_may_leave(&freed, Some(JobStatus::Idle)));
    }

    #[test]
    fn periodic_vacate_comes_first_and_only_for_a_running_job() {
        let a = ad("[PeriodicVacate = true; PeriodicHold = true]");
        for st in [JobStatus::Running, JobStatus::Suspended] {
            assert_eq!(
                periodic(&a, Some(st)),
                Some(Action::Vacate {
                    reason: "The job attribute PeriodicVacate expression 'true' evaluated to TRUE"
                        .into()
                })
            );
        }
        assert!(matches!(
            periodic(&a, Some(JobStatus::Idle)),
            Some(Action::Hold { .. })
        ));
        assert_eq!(
            periodic(&ad("[PeriodicVacate = false]"), Some(JobStatus::Running)),
            None
        );
    }

    #[test]
    fn periodic_order_and_reasons() {
        let a = ad("[PeriodicHold = x > 1; PeriodicRemove = true; x = 2]");
        assert_eq!(
            periodic(&a, Some(JobStatus::Idle)),
            Some(Action::Hold {
                reason: "The job attribute PeriodicHold expression 'x > 1' evaluated to TRUE"
                    .into(),
                code: 3,
                subcode: 0
            })
        );
        let a = ad("[PeriodicHold = true; PeriodicHoldReason = \"mine\"; PeriodicHoldSubCode = 7]");
        assert_eq!(
            periodic(&a, Some(JobStatus::Running)),
            Some(Action::Hold {
                reason: "mine".into(),
                code: 3,
                subcode: 7
            })
        );
        let a = ad("[PeriodicRelease = true; PeriodicRemove = false]");
        assert!(matches!(
            periodic(&a, Some(JobStatus::Held)),
            Some(Action::Release { .. })
        ));
        assert_eq!(periodic(&a, Some(JobStatus::Idle)), None);
        let a = ad("[PeriodicHold = undefined; PeriodicRemove = JobStatus == 5; JobStatus = 5]");
        assert!(matches!(
            periodic(&a, Some(JobStatus::Held)),
            Some(Action::Remove { .. })
        ));
    }

    // The private reader `int` took a boolean for a number, so a
    // `PeriodicHoldSubCode = true` held the job with subcode 1; HTCondor's
    // EvaluateAttrInt finds no integer there and the subcode stays 0.
    #[test]
    fn bool_hold_subcode_is_not_one() {
        let a = ad("[PeriodicHold = true; PeriodicHoldSubCode = true]");
        assert_eq!(
            periodic(&a, Some(JobStatus::Idle)),
            Some(Action::Hold {
                reason: "The job attribute PeriodicHold expression 'true' evaluated to TRUE".into(),
                code: hold_code::JOB_POLICY,
                subcode: 0
            })
        );
        let a = ad("[OnExitHold = true; OnExitHoldSubCode = true; OnExitHoldReason = \"r\"]");
        assert!(matches!(on_exit(&a), ExitDecision::Hold { subcode: 0, .. }));
    }

    #[test]
    fn on_exit_hold_wins_and_undefined_remove_completes() {
        let a = ad("[OnExitHold = ExitCode == 3; OnExitRemove = false; ExitCode = 3]");
        assert!(matches!(on_exit(&a), ExitDecision::Hold { .. }));
        let a = ad("[OnExitHold = false; OnExitRemove = ExitCode == 0; ExitCode = 3]");
        assert!(matches!(on_exit(&a), ExitDecision::Requeue));
        let a = ad("[OnExitRemove = Nope]");
        assert!(matches!(on_exit(&a), ExitDecision::Complete));
    }
}
