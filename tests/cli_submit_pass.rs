//! The pass a submit asks for: none when every slot is taken by a live
//! shadow (that shadow takes the next job, or asks for a pass when it lets
//! its slot go), one when a slot is free or a shadow died.

use std::time::Duration;

use crate::common::{RunEnv, TIMEOUT, queue::db};

/// One cpu, and a shadow that does not wait for work after its job.
fn one_cpu() -> RunEnv {
    RunEnv::new()
        .knob("NUM_CPUS", "1")
        .knob("SHADOW_LINGER_MSEC", "0")
}

/// A job that runs until the file `go` exists in the test's directory.
const WAITS_FOR_GO: &str = "executable = /bin/sh\n\
     arguments = \"-c 'while [ ! -e go ]; do sleep 0.05; done'\"\n\
     queue\n";

/// The time of the last pass, set to 0 now, so that a pass from here on
/// shows.
fn forget_passes(env: &RunEnv) {
    db(env)
        .execute("UPDATE meta SET value = 0 WHERE key = 'last_pass'", [])
        .unwrap();
}

fn last_pass(env: &RunEnv) -> i64 {
    db(env)
        .query_row("SELECT value FROM meta WHERE key = 'last_pass'", [], |r| {
            r.get(0)
        })
        .unwrap()
}

fn wait_running(env: &RunEnv, job: &str) {
    env.wait_for(&format!("job {job} running"), TIMEOUT, || {
        env.status(job) == Some(2)
    });
}

#[test]
fn a_submit_beside_busy_slots_starts_no_pass_and_the_shadow_runs_its_job_next() {
    let env = one_cpu();
    env.submit("a.sub", WAITS_FOR_GO);
    wait_running(&env, "1.0");
    forget_passes(&env);
    env.submit("b.sub", "executable = /bin/true\nqueue\n");
    // A pass would have found no slot: none ran.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(last_pass(&env), 0, "{}", env.diagnosis());
    assert_eq!(env.status("2.0"), Some(1), "{}", env.diagnosis());
    // The first job's shadow takes the second when the first ends.
    env.write("go", "");
    assert_eq!(env.wait_history("2.0", TIMEOUT), 4, "{}", env.diagnosis());
    assert_eq!(env.wait_history("1.0", TIMEOUT), 4);
}

#[test]
fn a_submit_beside_a_free_slot_starts_its_job_at_once() {
    let env = one_cpu().knob("NUM_CPUS", "2");
    env.submit("a.sub", WAITS_FOR_GO);
    wait_running(&env, "1.0");
    env.submit("b.sub", WAITS_FOR_GO);
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
    env.submit("a.sub", WAITS_FOR_GO);
    wait_running(&env, "1.0");
    // The shadow dies (its job with it); its slot still says Claimed.
    let lock = std::fs::read_to_string(env.spool().join("shadow/1.0.lock")).unwrap();
    let shadow: i32 = lock
        .lines()
        .next()
        .and_then(|p| p.trim().parse().ok())
        .expect("the shadow's pid in its lock");
    let _ = std::process::Command::new("kill")
        .args(["-9", &shadow.to_string()])
        .status();
    env.wait_for("the shadow gone", TIMEOUT, || {
        !std::path::Path::new(&format!("/proc/{shadow}")).exists()
    });
    forget_passes(&env);
    env.submit("b.sub", "executable = /bin/true\nqueue\n");
    env.wait_for("a pass after the submit", TIMEOUT, || last_pass(&env) != 0);
    env.write("go", "");
    assert_eq!(env.wait_history("2.0", TIMEOUT), 4, "{}", env.diagnosis());
}
