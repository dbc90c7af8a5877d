//! `leave_in_queue` as HTCondor's schedd keeps such jobs: a finished job
//! whose LeaveJobInQueue is true stays Completed (4) until the expression
//! turns false (a periodic pass then lets it go) or it is removed; tern_rm
//! makes it Removed (3) with a 009 event; tern_rm -forcex takes a removed
//! one out and refuses others ("bad status"); tern_hold refuses 3 and 4.
//! The jobs are /bin/true and PERIODIC_EXPR_INTERVAL is 1, to stay fast.

use std::time::Duration;

use crate::common::{RunEnv, TIMEOUT, assert_job_events, check_logs_with_htcondor};

fn env() -> RunEnv {
    RunEnv::new().knob("PERIODIC_EXPR_INTERVAL", "1")
}

/// Submits one /bin/true job with `leave_in_queue = <expr>` logging to
/// job.log, and waits until it has completed.
fn completed_job(env: &RunEnv, leave: &str) {
    env.submit(
        "job.sub",
        &format!("executable = /bin/true\nleave_in_queue = {leave}\nlog = job.log\nqueue\n"),
    );
    env.wait_for("job 1.0 completed", TIMEOUT, || {
        if env.status("1.0") != Some(4) {
            env.negotiate();
        }
        env.status("1.0") == Some(4)
    });
}

/// A pass that is due to evaluate every job (the interval is 1 s).
fn full_pass(env: &RunEnv) {
    std::thread::sleep(Duration::from_millis(1100));
    env.negotiate();
}

#[track_caller]
fn runs(env: &RunEnv, args: &[&str], code: i32, stdout: &str, stderr: &str) {
    let r = env.run(args[0], &args[1..]).normalized(env);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (code, stdout, stderr),
        "{args:?}"
    );
}

#[test]
fn a_kept_job_stays_completed_then_removed_until_forcex() {
    let env = env();
    completed_job(&env, "true");
    full_pass(&env);
    assert_eq!(env.status("1.0"), Some(4), "{}", env.diagnosis());
    runs(
        &env,
        &["tern_hold", "1.0"],
        1,
        "",
        "Permission denied to hold job 1.0\n",
    );
    runs(
        &env,
        &["tern_rm", "-forcex", "1.0"],
        1,
        "",
        "Job 1.0 not in `X' state to be forcibly removed\n",
    );
    runs(
        &env,
        &["tern_rm", "1.0"],
        0,
        "Job 1.0 marked for removal\n",
        "",
    );
    assert_eq!(env.status("1.0"), Some(3));
    let log = env.path("job.log");
    assert_job_events(&log, "1.0", vec![0, 1, 5, 9]);
    // LeaveJobInQueue is still true: it stays removed, pass after pass.
    full_pass(&env);
    assert_eq!(env.status("1.0"), Some(3), "{}", env.diagnosis());
    runs(
        &env,
        &["tern_hold", "1.0"],
        1,
        "",
        "Permission denied to hold job 1.0\n",
    );
    runs(
        &env,
        &["tern_rm", "-forcex", "1.0"],
        0,
        "Job 1.0 removed locally (remote state unknown)\n",
        "",
    );
    assert_eq!(env.status("1.0"), None);
    assert_eq!(
        env.history_af("1.0", &["JobStatus", "LeaveJobInQueue"]),
        Some("3 false".to_string())
    );
    assert_job_events(&log, "1.0", vec![0, 1, 5, 9, 9]);
    check_logs_with_htcondor(&[log]);
}

#[test]
fn qedit_of_leave_job_in_queue_lets_the_job_go_at_the_next_pass() {
    let env = env();
    completed_job(&env, "true");
    runs(
        &env,
        &["tern_qedit", "1.0", "LeaveJobInQueue", "false"],
        0,
        "Set attribute \"LeaveJobInQueue\".\n",
        "",
    );
    env.negotiate();
    assert_eq!(env.status("1.0"), None, "{}", env.diagnosis());
    assert_eq!(env.history_af("1.0", &["JobStatus"]), Some("4".to_string()));
    // Completing and leaving write no further event.
    assert_job_events(&env.path("job.log"), "1.0", vec![0, 1, 5]);
}

#[test]
fn a_job_kept_by_an_expression_leaves_once_it_turns_false() {
    let env = env();
    completed_job(
        &env,
        "(JobStatus == 4) && (StageOutFinish =?= undefined || StageOutFinish == 0)",
    );
    full_pass(&env);
    assert_eq!(env.status("1.0"), Some(4), "{}", env.diagnosis());
    runs(
        &env,
        &["tern_qedit", "1.0", "StageOutFinish", "1700000000"],
        0,
        "Set attribute \"StageOutFinish\".\n",
        "",
    );
    env.negotiate();
    assert_eq!(env.status("1.0"), None, "{}", env.diagnosis());
    assert_eq!(env.history_af("1.0", &["JobStatus"]), Some("4".to_string()));
}

#[test]
fn rm_of_a_completed_job_whose_expression_is_false_by_then_takes_it_out() {
    // The expression holds only while Completed: once removed it is false,
    // and the job leaves at once, with its 009.
    let env = env();
    completed_job(&env, "JobStatus == 4");
    runs(
        &env,
        &["tern_rm", "1.0"],
        0,
        "Job 1.0 marked for removal\n",
        "",
    );
    assert_eq!(env.status("1.0"), None, "{}", env.diagnosis());
    assert_eq!(env.history_af("1.0", &["JobStatus"]), Some("3".to_string()));
    assert_job_events(&env.path("job.log"), "1.0", vec![0, 1, 5, 9]);
}
