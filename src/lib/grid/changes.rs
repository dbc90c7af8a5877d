//! What a grid job's steps change: the job attribute sets and events of
//! starting, leaving Running, completing (with the on-exit policy), the
//! gridmanager's holds and letting a job go, shared by the Slurm and the
//! tern-queue steps.

use std::rc::Rc;

use crate::classad::{ClassAd, Expr, Value};
use crate::negotiator::policy::{self, ExitDecision};
use crate::queue::{Change, JobId};
use crate::userlog::{Event, Exit};
use crate::vocab::{JobStatus, hold_code};

use super::events;
use super::slurm::Ended;

pub(super) fn set(n: &str, e: Expr) -> (String, Expr) {
    (n.to_string(), e)
}

pub(super) fn undefined() -> Expr {
    Expr::Lit(Value::Undefined)
}

/// The submit date in a GridJobId (`YYYYMMDD`, local time).
pub(super) fn date_of(now: i64) -> String {
    let t = crate::sys::time::local_time(now);
    format!("{:04}{:02}{:02}", t.year, t.mon, t.mday)
}

pub(super) fn with(c: Change, more: Vec<(String, Expr)>) -> Change {
    match c {
        Change::Set(mut s) => {
            s.extend(more);
            Change::Set(s)
        }
        Change::Update { mut set, delete } => {
            let delete = delete
                .into_iter()
                .filter(|d| !more.iter().any(|(n, _)| n.eq_ignore_ascii_case(d)))
                .collect();
            set.extend(more);
            Change::Update { set, delete }
        }
        Change::Leave { mut set } => {
            set.extend(more);
            Change::Leave { set }
        }
        other => other,
    }
}

/// A hold the gridmanager makes: code and subcode (0 for its own holds),
/// NumSystemHolds, the job let go (`Managed = "Schedd"`); `keep_id` keeps
/// a 3-token GridJobId so a release submits again under the same sandbox.
#[allow(clippy::too_many_arguments)]
pub(super) fn grid_hold(
    ad: &Rc<ClassAd>,
    id: JobId,
    now: i64,
    reason: &str,
    code: i64,
    subcode: i64,
    running: bool,
    keep_id: bool,
) -> (Change, Vec<Event>) {
    // `Nonessential = true`: the gridmanager removes the job instead.
    if code != hold_code::JOB_POLICY && ad.eval("Nonessential").is_true() {
        let mut s = vec![
            set("RemoveReason", Expr::string(reason)),
            set("JobStatus", JobStatus::Removed.expr()),
            set("Managed", Expr::string("ScheddDone")),
        ];
        if running {
            s.extend(leave_running(ad, now));
        }
        return (
            policy::leave_or_stay(ad, s),
            vec![Event::aborted(id, reason)],
        );
    }
    let mut extra = vec![
        set("Managed", Expr::string("Schedd")),
        set(
            "NumSystemHolds",
            Expr::int(ad.eval_int("NumSystemHolds").unwrap_or(0) + 1),
        ),
    ];
    if running {
        extra.extend(leave_running(ad, now));
    }
    let mut c = with(policy::hold(ad, now, reason, code, subcode, false), extra);
    if let Change::Update { delete, .. } = &mut c {
        delete.push("GridJobStatus".into());
        if !keep_id {
            delete.push("GridJobId".into());
        }
        delete.retain(|d| ad.contains(d));
    }
    (c, vec![Event::held(id, reason, code, subcode)])
}

/// A job held by someone else, its Slurm job cancelled: let go of it, its
/// Slurm ids cleared (a release submits anew).
pub(super) fn let_go() -> Change {
    Change::Update {
        set: vec![
            set("Managed", Expr::string("Schedd")),
            set("GridJobId", undefined()),
            set("GridJobStatus", undefined()),
        ],
        delete: vec![],
    }
}

/// A removed job whose remote side is gone: into history (unless
/// LeaveJobInQueue keeps it).
pub(super) fn leave_removed(ad: &Rc<ClassAd>) -> Change {
    policy::leave_or_stay(ad, vec![set("Managed", Expr::string("ScheddDone"))])
}

/// The attributes of a job first seen running (grid spec 1.4).
pub(super) fn start_running(ad: &Rc<ClassAd>, now: i64) -> Vec<(String, Expr)> {
    let mut s = vec![
        set("JobStatus", JobStatus::Running.expr()),
        set("ShadowBday", Expr::int(now)),
        set("JobCurrentStartDate", Expr::int(now)),
        set("JobCurrentStartExecutingDate", Expr::int(now)),
        set("JobLastStartDate", Expr::int(now)),
        set(
            "NumJobStarts",
            Expr::int(ad.eval_int("NumJobStarts").unwrap_or(0) + 1),
        ),
        set(
            "JobRunCount",
            Expr::int(ad.eval_int("JobRunCount").unwrap_or(0) + 1),
        ),
    ];
    if ad.eval_int("JobStartDate").is_none() {
        s.push(set("JobStartDate", Expr::int(now)));
    }
    s
}

/// A job leaving Running: its wall-clock time added up.
pub(super) fn leave_running(ad: &Rc<ClassAd>, now: i64) -> Vec<(String, Expr)> {
    let wall = ad.eval_real("RemoteWallClockTime").unwrap_or(0.0);
    let run = ad
        .eval_int("ShadowBday")
        .map(|b| (now - b).max(0))
        .unwrap_or(0);
    vec![
        set(
            "RemoteWallClockTime",
            Expr::Lit(Value::Real(wall + run as f64)),
        ),
        set("ShadowBday", undefined()),
    ]
}

/// A Slurm job that ended: its exit, times and the on-exit policy (grid
/// spec 3.4). A job never seen running gets its execute event and start
/// times from Slurm's own StartTime (BLAHP never shows such a job
/// running), and the wall-clock time is Slurm's, not a poll's.
pub(super) fn complete(
    ad: &Rc<ClassAd>,
    id: JobId,
    now: i64,
    e: &Ended,
    gr: &str,
) -> (Change, Vec<Event>) {
    let mut evs = Vec::new();
    let mut s: Vec<(String, Expr)> = Vec::new();
    let end = e.end.filter(|t| *t > 0).unwrap_or(now);
    let was_running = ad.eval_int("JobStatus") == Some(JobStatus::Running.code());
    let start = e
        .start
        .filter(|t| *t > 0 && *t <= end)
        .or_else(|| ad.eval_int("ShadowBday"))
        .unwrap_or(end);
    if !was_running {
        evs.push(events::executing(id, start, gr));
        s.extend(start_running(ad, start));
    }
    let wall = ad.eval_real("RemoteWallClockTime").unwrap_or(0.0);
    s.push(set(
        "RemoteWallClockTime",
        Expr::Lit(Value::Real(wall + (end - start).max(0) as f64)),
    ));
    s.push(set("ShadowBday", undefined()));
    s.push(set("LastRemoteStatusUpdate", Expr::int(now)));
    s.push(set("GridJobStatus", Expr::string("COMPLETED")));
    let exit = if e.signal != 0 {
        s.push(set("ExitBySignal", Expr::Lit(Value::Bool(true))));
        s.push(set("ExitSignal", Expr::int(e.signal)));
        s.push(set("ExitCode", undefined()));
        Exit::Signal {
            signal: e.signal,
            core_file: None,
        }
    } else {
        s.push(set("ExitBySignal", Expr::Lit(Value::Bool(false))));
        s.push(set("ExitCode", Expr::int(e.code)));
        Exit::Normal {
            return_value: e.code,
        }
    };
    let (c, mut more) = finish(ad, id, now, s, exit, Some(end));
    evs.append(&mut more);
    (c, evs)
}

/// The end of a remote job whose exit attributes are in `s`: the on-exit
/// policy decides between completion (005, into history unless
/// LeaveJobInQueue), a hold, and another submission.
pub(super) fn finish(
    ad: &Rc<ClassAd>,
    id: JobId,
    now: i64,
    mut s: Vec<(String, Expr)>,
    exit: Exit,
    end: Option<i64>,
) -> (Change, Vec<Event>) {
    let mut after = (**ad).clone();
    for (n, v) in &s {
        after.insert(n, v.clone());
    }
    let after = Rc::new(after);
    match policy::on_exit(&after) {
        ExitDecision::Complete => {
            s.push(set("JobStatus", JobStatus::Completed.expr()));
            s.push(set("CompletionDate", Expr::int(end.unwrap_or(now))));
            s.push(set("Managed", Expr::string("ScheddDone")));
            s.push(set(
                "NumJobCompletions",
                Expr::int(ad.eval_int("NumJobCompletions").unwrap_or(0) + 1),
            ));
            (
                policy::leave_or_stay(ad, s),
                vec![events::terminated(id, now, exit)],
            )
        }
        ExitDecision::Hold { reason, subcode } => {
            let (c, e) = grid_hold(
                &after,
                id,
                now,
                &reason,
                hold_code::JOB_POLICY,
                subcode,
                false,
                false,
            );
            (with(c, s), e)
        }
        ExitDecision::Requeue => {
            // Back to Idle and to the remote system again, as a new
            // submission.
            s.push(set("JobStatus", JobStatus::Idle.expr()));
            s.push(set("GridJobId", undefined()));
            s.push(set("GridJobStatus", undefined()));
            s.push(set("ExitCode", undefined()));
            s.push(set("ExitSignal", undefined()));
            (Change::Set(s), vec![])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::parse_ad;
    use crate::negotiator::gridjobs::needs_work;

    fn ad(t: &str) -> Rc<ClassAd> {
        Rc::new(parse_ad(t).unwrap())
    }

    fn sets(c: &Change) -> Vec<(String, String)> {
        let v = match c {
            Change::Set(s) | Change::Leave { set: s } | Change::Update { set: s, .. } => s,
            Change::Skip(_) => return vec![],
        };
        v.iter()
            .map(|(n, e)| (n.clone(), crate::classad::unparse::unparse(e)))
            .collect()
    }

    fn get(c: &Change, n: &str) -> Option<String> {
        sets(c)
            .into_iter()
            .rev()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v)
    }

    const ID: JobId = JobId {
        cluster: 3,
        proc: 0,
    };

    #[test]
    fn a_job_shorter_than_a_poll_is_still_seen_running_with_slurms_times() {
        let a = ad("[JobStatus = 1; RemoteWallClockTime = 0.0]");
        let e = Ended {
            state: "COMPLETED".into(),
            code: 0,
            signal: 0,
            start: Some(100),
            end: Some(103),
        };
        let (c, evs) = complete(&a, ID, 200, &e, "batch slurm");
        assert!(matches!(c, Change::Leave { .. }));
        assert_eq!(
            evs.iter().map(|e| e.kind.number()).collect::<Vec<_>>(),
            [1, 5]
        );
        assert_eq!(evs[0].time, 100);
        assert_eq!(
            get(&c, "RemoteWallClockTime").as_deref(),
            Some("3.000000000000000E+00")
        );
        assert_eq!(get(&c, "JobStartDate").as_deref(), Some("100"));
        assert_eq!(get(&c, "CompletionDate").as_deref(), Some("103"));
        assert_eq!(get(&c, "ExitCode").as_deref(), Some("0"));
        assert_eq!(get(&c, "Managed").as_deref(), Some("\"ScheddDone\""));
    }

    #[test]
    fn exit_codes_and_signals_come_back_as_slurm_reports_them() {
        let a = ad("[JobStatus = 2; ShadowBday = 90; RemoteWallClockTime = 5.0]");
        let e = Ended {
            state: "FAILED".into(),
            code: 3,
            signal: 0,
            start: Some(100),
            end: Some(110),
        };
        let (c, evs) = complete(&a, ID, 200, &e, "batch slurm");
        assert_eq!(evs.len(), 1);
        assert_eq!(get(&c, "ExitCode").as_deref(), Some("3"));
        assert_eq!(get(&c, "ExitBySignal").as_deref(), Some("false"));
        assert_eq!(
            get(&c, "RemoteWallClockTime").as_deref(),
            Some("1.500000000000000E+01")
        );
        let e = Ended {
            signal: 9,
            code: 0,
            ..e
        };
        let (c, _) = complete(&a, ID, 200, &e, "batch slurm");
        assert_eq!(get(&c, "ExitSignal").as_deref(), Some("9"));
        assert_eq!(get(&c, "ExitBySignal").as_deref(), Some("true"));
    }

    #[test]
    fn on_exit_policies_hold_or_requeue_a_grid_job() {
        let e = Ended {
            state: "FAILED".into(),
            code: 2,
            signal: 0,
            start: Some(1),
            end: Some(2),
        };
        let a = ad(
            "[JobStatus = 2; OnExitHold = ExitCode == 2; GridJobId = \"batch slurm x slurm/1/2\"]",
        );
        let (c, evs) = complete(&a, ID, 5, &e, "g");
        assert_eq!(get(&c, "JobStatus").as_deref(), Some("5"));
        assert_eq!(get(&c, "HoldReasonCode").as_deref(), Some("3"));
        assert_eq!(evs.last().unwrap().kind.number(), 12);
        let a = ad("[JobStatus = 2; OnExitRemove = ExitCode == 0]");
        let (c, _) = complete(&a, ID, 5, &e, "g");
        assert_eq!(get(&c, "JobStatus").as_deref(), Some("1"));
        assert_eq!(get(&c, "GridJobId").as_deref(), Some("undefined"));
    }

    #[test]
    fn grid_holds_have_code_zero_and_let_the_job_go() {
        let a = ad("[JobStatus = 1; GridJobId = \"batch slurm x\"; GridJobStatus = \"IDLE\"]");
        let (c, evs) = grid_hold(&a, ID, 5, "why", 0, 0, false, true);
        assert_eq!(get(&c, "HoldReason").as_deref(), Some("\"why\""));
        assert_eq!(get(&c, "HoldReasonCode").as_deref(), Some("0"));
        assert_eq!(get(&c, "Managed").as_deref(), Some("\"Schedd\""));
        assert_eq!(get(&c, "NumSystemHolds").as_deref(), Some("1"));
        match &c {
            Change::Update { delete, .. } => assert_eq!(delete, &["GridJobStatus".to_string()]),
            _ => panic!("a hold updates"),
        }
        assert_eq!(evs[0].kind.number(), 12);
    }

    #[test]
    fn which_grid_jobs_need_the_gridmanager() {
        let ext = ad("[Managed = \"External\"]");
        let done = ad("[Managed = \"ScheddDone\"]");
        let none = ad("[]");
        assert!(needs_work(Some(JobStatus::Idle), &none));
        assert!(needs_work(Some(JobStatus::Removed), &ext));
        assert!(!needs_work(Some(JobStatus::Removed), &done));
        assert!(needs_work(Some(JobStatus::Held), &ext));
        assert!(!needs_work(Some(JobStatus::Held), &none));
        assert!(!needs_work(Some(JobStatus::Completed), &ext));
    }
}
