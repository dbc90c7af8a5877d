//! What one tern_negotiate pass looks at. The periodic expressions of a
//! job that has not changed are evaluated every PERIODIC_EXPR_INTERVAL
//! seconds (the passes in between read only the jobs the transaction log
//! shows changed); a job that changed is evaluated by the next pass. The
//! clock is pinned with TERN_NOW and START is false, so no job runs.

use crate::common::{NOW, Run, TestEnv};

fn env() -> TestEnv {
    let env = TestEnv::with_spool()
        .var("_TERN_START", Some("false"))
        .var("_TERN_NUM_CPUS", Some("1"));
    env.write_program("prog");
    env
}

/// `tool args` run with the clock at `t`.
fn run_at(env: &TestEnv, t: i64, tool: &str, args: &[&str]) -> Run {
    let out = env
        .command(tool)
        .env("TERN_NOW", t.to_string())
        .args(args)
        .output()
        .expect("running the tool");
    Run::from(out)
}

fn submit(env: &TestEnv, t: i64, name: &str, body: &str) {
    env.write(name, &format!("executable = prog\n{body}queue\n"));
    let r = run_at(env, t, "tern_submit", &[name]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
}

/// Job 1.0, submitted at NOW, with `periodic_hold = <test><at>`, `test`
/// being e.g. "time() >= ".
fn submit_hold_when(env: &TestEnv, test: &str, at: i64) {
    submit(
        env,
        NOW,
        "job.sub",
        &format!("periodic_hold = {test}{at}\n"),
    );
}

/// A pass at `t`.
fn pass(env: &TestEnv, t: i64) {
    let r = run_at(env, t, "tern_negotiate", &[]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
}

/// The job's JobStatus in the queue, or "gone".
fn status(env: &TestEnv, job: &str) -> String {
    let r = env.run("tern_q", [job, "-af", "JobStatus"]);
    assert_eq!(r.code, 0, "{r:?}");
    match r.stdout.trim() {
        "" => "gone".into(),
        s => s.into(),
    }
}

#[test]
fn an_unchanged_job_is_evaluated_once_per_interval() {
    let env = env();
    submit_hold_when(&env, "time() >= ", NOW + 30);
    pass(&env, NOW);
    assert_eq!(status(&env, "1.0"), "1");
    // The pass at NOW looked at every job; the job has not changed since.
    pass(&env, NOW + 30);
    pass(&env, NOW + 59);
    assert_eq!(status(&env, "1.0"), "1", "held before the interval ran out");
    pass(&env, NOW + 60);
    assert_eq!(
        status(&env, "1.0"),
        "5",
        "not held once the interval ran out"
    );
}

#[test]
fn a_changed_or_new_job_is_evaluated_by_the_next_pass() {
    let env = env();
    submit(&env, NOW, "one.sub", "");
    pass(&env, NOW);
    let r = run_at(
        &env,
        NOW + 10,
        "tern_qedit",
        &["1.0", "PeriodicRemove", "true"],
    );
    assert_eq!(r.code, 0, "{r:?}");
    submit(&env, NOW + 10, "two.sub", "periodic_hold = true\n");
    pass(&env, NOW + 10);
    assert_eq!(
        status(&env, "1.0"),
        "gone",
        "the edited job was not removed"
    );
    assert_eq!(status(&env, "2.0"), "5", "the new job was not held");
    let r = env.run("tern_history", ["1.0", "-af", "JobStatus"]);
    assert_eq!(r.stdout.trim(), "3", "{r:?}");
}

#[test]
fn an_interval_of_zero_evaluates_every_job_in_every_pass() {
    let env = env().var("_TERN_PERIODIC_EXPR_INTERVAL", Some("0"));
    submit_hold_when(&env, "time() >= ", NOW + 30);
    pass(&env, NOW);
    pass(&env, NOW + 30);
    assert_eq!(status(&env, "1.0"), "5");
}

#[test]
fn a_clock_set_back_evaluates_every_job() {
    let env = env();
    submit_hold_when(&env, "time() < ", NOW + 50);
    pass(&env, NOW + 100);
    assert_eq!(status(&env, "1.0"), "1");
    pass(&env, NOW);
    assert_eq!(status(&env, "1.0"), "5");
}

#[test]
fn a_dry_run_reports_what_the_next_pass_would_evaluate() {
    let env = env();
    submit_hold_when(&env, "time() >= ", NOW + 30);
    pass(&env, NOW);
    let dry = |t: i64| {
        let r = run_at(&env, t, "tern_negotiate", &["-dry-run"]);
        assert_eq!(r.code, 0, "{r:?}");
        r.stdout.contains("hold 1.0")
    };
    assert!(!dry(NOW + 30), "a dry run inside the interval held the job");
    assert!(dry(NOW + 60), "a dry run after the interval did not");
    // A dry run records nothing: the real pass still evaluates.
    pass(&env, NOW + 60);
    assert_eq!(status(&env, "1.0"), "5");
}
