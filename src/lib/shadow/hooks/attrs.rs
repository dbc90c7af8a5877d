//! The attributes the starter hooks read and write: what a PREPARE hook
//! merges into the job, the exit and update attributes on their stdin, and
//! the failure record.

use std::process::ExitStatus;
use std::rc::Rc;
use std::time::Duration;

use crate::classad::unparse::{ad_to_old, unparse};
use crate::classad::{ClassAd, Expr, Value};

use super::{FAILURE_ATTR, FAILURE_TIME_ATTR, PROTECTED};

/// Merges what a PREPARE hook printed into `run` (the ad the job starts
/// from) and returns the attributes it changed, for the queue: those it
/// printed with a value other than the one it was given (a hook that
/// echoes its whole input changes nothing). The job's identity and
/// status ([`PROTECTED`]) are never taken from a hook.
pub(in crate::shadow) fn merge(update: &ClassAd, run: &mut ClassAd) -> Vec<(String, Expr)> {
    let mut changed = Vec::new();
    for (name, e) in update.iter() {
        if PROTECTED.iter().any(|p| p.eq_ignore_ascii_case(name)) {
            continue;
        }
        let same = run.get(name).is_some_and(|old| unparse(old) == unparse(e));
        if !same {
            run.insert(name, e.clone());
            changed.push((name.to_string(), e.clone()));
        }
    }
    changed
}

/// The job attributes that record a hook's failure at `now`.
pub(in crate::shadow) fn failure_attrs(text: &str, now: i64) -> Vec<(String, Expr)> {
    vec![
        (FAILURE_ATTR.to_string(), Expr::string(text)),
        (FAILURE_TIME_ATTR.to_string(), Expr::int(now)),
    ]
}

/// JOB_EXIT's argument for how a run ended (HTCondor's
/// `getExitReasonString`).
pub(in crate::shadow) fn exit_argument(stop: Option<crate::shadow::Stop>) -> &'static str {
    use crate::shadow::Stop;
    match stop {
        None => "exit",
        Some(Stop::Remove) => "remove",
        Some(Stop::Hold) => "hold",
        Some(
            Stop::Vacate | Stop::PolicyVacate | Stop::Preempt | Stop::PreemptRank | Stop::Shutdown,
        ) => "evict",
    }
}

/// The exit attributes JOB_EXIT reads beside the update ones: ExitBySignal
/// with ExitSignal and ExitReason, or with ExitCode; and JobDuration.
pub(in crate::shadow) fn exit_attrs(
    status: Option<ExitStatus>,
    duration: Duration,
) -> Vec<(String, Expr)> {
    use std::os::unix::process::ExitStatusExt;
    let mut set = Vec::new();
    if let Some(st) = status {
        match st.signal() {
            Some(sig) => {
                set.push(("ExitBySignal".into(), Expr::Lit(Value::Bool(true))));
                set.push(("ExitSignal".into(), Expr::int(i64::from(sig))));
                set.push((
                    "ExitReason".into(),
                    Expr::string(&format!("died on signal {sig} ({})", signal_text(sig))),
                ));
            }
            None => {
                set.push(("ExitBySignal".into(), Expr::Lit(Value::Bool(false))));
                set.push((
                    "ExitCode".into(),
                    Expr::int(i64::from(st.code().unwrap_or(0))),
                ));
            }
        }
    }
    set.push((
        "JobDuration".into(),
        Expr::Lit(Value::Real(duration.as_secs_f64())),
    ));
    set
}

/// The signal's name where HTCondor quotes strsignal's text (tern keeps
/// to the names it knows: `SIGKILL`, not "Killed").
fn signal_text(sig: i32) -> String {
    crate::vocab::signal_name(&sig.to_string())
        .unwrap_or("unknown signal")
        .to_string()
}

/// The update attributes (HTCondor's `publishUpdateAd`): JobState
/// (`Running` or `Suspended`; UPDATE_JOB_INFO only), JobPid, NumPids,
/// JobStartDate and the usage so far.
pub(in crate::shadow) fn update_attrs(
    state: Option<&str>,
    pid: i32,
    start_date: i64,
    u: &crate::shadow::procs::Usage,
) -> Vec<(String, Expr)> {
    let mut set = Vec::new();
    if let Some(s) = state {
        set.push(("JobState".to_string(), Expr::string(s)));
    }
    set.extend([
        ("JobPid".to_string(), Expr::int(i64::from(pid))),
        ("NumPids".to_string(), Expr::int(u.processes)),
        ("JobStartDate".to_string(), Expr::int(start_date)),
        (
            "RemoteSysCpu".to_string(),
            Expr::Lit(Value::Real(u.sys.floor())),
        ),
        (
            "RemoteUserCpu".to_string(),
            Expr::Lit(Value::Real(u.user.floor())),
        ),
        ("ImageSize".to_string(), Expr::int(u.image_size)),
    ]);
    set
}

/// `ad` with `changes` over it; `ad` itself (no copy) when there are none.
pub(in crate::shadow) fn with_changes(ad: &Rc<ClassAd>, changes: &[(String, Expr)]) -> Rc<ClassAd> {
    if changes.is_empty() {
        return ad.clone();
    }
    let mut merged = (**ad).clone();
    apply(&mut merged, changes);
    Rc::new(merged)
}

/// Sets `changes` in `ad`: the one way changed attributes are put over an
/// ad here.
fn apply(ad: &mut ClassAd, changes: &[(String, Expr)]) {
    for (n, e) in changes {
        ad.insert(n, e.clone());
    }
}

/// The stdin of UPDATE_JOB_INFO and JOB_EXIT: the job ad with `extra`
/// over it, in the old syntax.
pub(in crate::shadow) fn ad_with(job: &ClassAd, extra: &[(String, Expr)]) -> String {
    let mut ad = job.clone();
    apply(&mut ad, extra);
    ad_to_old(&ad, true)
}
