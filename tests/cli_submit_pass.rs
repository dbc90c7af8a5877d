//! The pass a submit asks for: none when every slot is taken by a live
//! shadow (that shadow takes the next job, or asks for a pass when it lets
//! its slot go), one when a slot is free or a shadow died.

use std::time::Duration;

use crate::common::{RunEnv, TIMEOUT, queue::db, scratch_job};

/// One cpu, and a shadow that does not wait for work after its job.
fn one_cpu() -> RunEnv {
    RunEnv::new()
        .knob("NUM_CPUS", "1")
        .knob("SHADOW_LINGER_MSEC", "0")
}

/// Sets the time of the last pass a second back, so that any pass from
/// here on shows (it writes the time it ran), while the last pass stays
/// within PERIODIC_EXPR_INTERVAL.
fn mark_passes(env: &RunEnv) -> i64 {
    let db = db(env);
    db.execute(
        "UPDATE meta SET value = value - 1 WHERE key = 'last_pass'",
        [],
    )
    .unwrap();
    last_pass(env)
}

fn last_pass(env: &RunEnv) -> i64 {
    db(env)
        .query_row("SELECT value FROM meta WHERE key = 'last_pass'", [], |r| {
            r.get(0)
        })
        .unwrap()
}

/// Waits for the job to run under a shadow that has recorded itself in
/// the job's lock: a submit before that finds no live shadow (a shadow
/// being started looks like a dead one) and rightly asks for a pass.
fn wait_running(env: &RunEnv, job: &str) {
    let lock = env.spool().join(format!("shadow/{job}.lock"));
    env.wait_for(&format!("job {job} running"), TIMEOUT, || {
        let recorded = std::fs::read_to_string(&lock)
            .ok()
            .and_then(|t| t.lines().next()?.trim().parse::<u32>().ok())
            .is_some_and(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists());
        env.status(job) == Some(2) && recorded
    });
}

#[test]
fn a_submit_beside_busy_slots_starts_no_pass_and_the_shadow_runs_its_job_next() {
    let env = one_cpu();
    env.submit("a.sub", &scratch_job("a.out", true));
    wait_running(&env, "1.0");
    let before = mark_passes(&env);
    env.submit("b.sub", &scratch_job("b.out", false));
    // A pass would have found no slot: none ran.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(last_pass(&env), before, "{}", env.diagnosis());
    assert_eq!(env.status("2.0"), Some(1), "{}", env.diagnosis());
    // The first job's shadow takes the second when the first ends.
    env.write("go", "");
    assert_eq!(env.wait_history("2.0", TIMEOUT), 4, "{}", env.diagnosis());
    assert_eq!(env.wait_history("1.0", TIMEOUT), 4);
    let a = std::fs::read_to_string(env.path("a.out")).unwrap();
    let b = std::fs::read_to_string(env.path("b.out")).unwrap();
    assert!(a.contains("/dir_"), "{a}");
    assert_eq!(a, b, "the second job ran under the first one's shadow");
}

/// What a pass does besides starting jobs comes round within
/// PERIODIC_EXPR_INTERVAL, and shadows that ask for no pass when they end
/// leave it to the submit.
#[test]
fn a_submit_beside_busy_slots_still_asks_when_periodic_work_is_due_or_shadows_ask_not() {
    for (knob, value, wait) in [
        ("PERIODIC_EXPR_INTERVAL", "1", Duration::from_millis(2100)),
        ("NEGOTIATE_ON_EXIT", "false", Duration::ZERO),
    ] {
        let env = one_cpu().knob(knob, value);
        env.submit("a.sub", &scratch_job("a.out", true));
        wait_running(&env, "1.0");
        std::thread::sleep(wait);
        let before = mark_passes(&env);
        env.submit("b.sub", "executable = /bin/true\nqueue\n");
        env.wait_for(
            &format!("a pass after the submit ({knob})"),
            TIMEOUT,
            || last_pass(&env) != before,
        );
        env.write("go", "");
        env.wait_history("1.0", TIMEOUT);
    }
}

#[test]
fn a_submit_beside_a_free_slot_starts_its_job_at_once() {
    let env = one_cpu().knob("NUM_CPUS", "2");
    env.submit("a.sub", &scratch_job("a.out", true));
    wait_running(&env, "1.0");
    env.submit("b.sub", &scratch_job("b.out", true));
    // Both run at once: the submit's pass used the second cpu.
    wait_running(&env, "2.0");
    assert_eq!(env.status("1.0"), Some(2));
    env.write("go", "");
    env.wait_history("1.0", TIMEOUT);
    env.wait_history("2.0", TIMEOUT);
}

#[test]
fn a_submit_beside_a_dead_shadows_slot_asks_for_the_pass() {
    let env = one_cpu();
    env.submit("a.sub", &scratch_job("a.out", true));
    wait_running(&env, "1.0");
    // The shadow dies (its job runs on until the pass puts the claim
    // right); its slot still says Claimed.
    // The job is Running from its claim on; the shadow writes its pid
    // into the lock when it starts.
    let pid_in_lock = || -> Option<i32> {
        let lock = std::fs::read_to_string(env.spool().join("shadow/1.0.lock")).ok()?;
        lock.lines().next()?.trim().parse().ok()
    };
    env.wait_for("the shadow's pid in its lock", TIMEOUT, || {
        pid_in_lock().is_some()
    });
    let shadow = pid_in_lock().unwrap();
    let _ = std::process::Command::new("kill")
        .args(["-9", &shadow.to_string()])
        .status();
    env.wait_for("the shadow gone", TIMEOUT, || {
        !std::path::Path::new(&format!("/proc/{shadow}")).exists()
    });
    let before = mark_passes(&env);
    env.submit("b.sub", "executable = /bin/true\nqueue\n");
    env.wait_for("a pass after the submit", TIMEOUT, || {
        last_pass(&env) != before
    });
    env.write("go", "");
    assert_eq!(env.wait_history("2.0", TIMEOUT), 4, "{}", env.diagnosis());
}
