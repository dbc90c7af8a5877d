//! A claim kept a moment after its job (SHADOW_LINGER_MSEC): the next job
//! of the submitter is run by the shadow already there, and any other idle
//! work ends the wait at once.

use std::time::Duration;

use crate::common::{RunEnv, scratch_job, wait_until};

/// One slot, and a shadow that would wait `linger_ms` after its job.
fn env(linger_ms: &str) -> RunEnv {
    RunEnv::new()
        .knob("NUM_CPUS", "1")
        .knob("SHADOW_LINGER_MSEC", linger_ms)
}

/// Whether a slot is Claimed/Idle (the default layout is one
/// partitionable slot, the claim is on a dynamic slot carved from it).
fn claim_waits(env: &RunEnv) -> bool {
    let states = env.run_ok("tern_status", ["-af", "State", "Activity"]);
    states.lines().any(|l| l == "Claimed Idle")
}

fn unclaimed(env: &RunEnv) -> bool {
    !env.run_ok("tern_status", ["-af", "State"])
        .contains("Claimed")
}

fn wait_done(env: &RunEnv, job: &str) {
    env.wait_for(
        &format!("job {job} in the history"),
        crate::common::TIMEOUT,
        || env.history_af(job, &["JobStatus"]).is_some(),
    );
}

#[test]
fn a_lingering_shadow_runs_the_next_submit_itself() {
    let env = env("60000");
    env.submit("a.sub", &scratch_job("a.out", false));
    wait_done(&env, "1.0");
    // The job is gone and nothing is idle: the claim waits.
    assert!(claim_waits(&env), "{}", env.diagnosis());
    env.submit("b.sub", &scratch_job("b.out", false));
    wait_done(&env, "2.0");
    let a = std::fs::read_to_string(env.path("a.out")).unwrap();
    let b = std::fs::read_to_string(env.path("b.out")).unwrap();
    assert!(a.contains("/dir_"), "{a}");
    assert_eq!(a, b, "the second job ran under the same shadow");
}

#[test]
fn idle_work_the_claim_cannot_take_ends_the_wait_at_once() {
    let env = env("60000");
    env.submit("a.sub", &scratch_job("a.out", false));
    wait_done(&env, "1.0");
    assert!(claim_waits(&env), "{}", env.diagnosis());
    // A job no slot matches: the shadow must not sit on the slot.
    env.submit(
        "never.sub",
        "executable = /bin/true\nrequirements = False\nqueue\n",
    );
    assert!(
        wait_until(Duration::from_secs(10), || unclaimed(&env)),
        "the claim was kept: {}",
        env.diagnosis()
    );
}

#[test]
fn the_wait_ends_after_its_time_and_the_slot_is_free() {
    let env = env("300");
    env.submit("a.sub", &scratch_job("a.out", false));
    wait_done(&env, "1.0");
    assert!(
        wait_until(Duration::from_secs(10), || unclaimed(&env)),
        "{}",
        env.diagnosis()
    );
    assert!(
        wait_until(Duration::from_secs(10), || env.leftovers().is_empty()),
        "processes left: {}",
        env.diagnosis()
    );
}

#[test]
fn no_wait_when_turned_off() {
    let env = env("0");
    env.submit("a.sub", &scratch_job("a.out", false));
    wait_done(&env, "1.0");
    env.wait_slots_unclaimed();
    // And a second job still runs, started by a pass.
    env.submit("b.sub", &scratch_job("b.out", false));
    wait_done(&env, "2.0");
    let a = std::fs::read_to_string(env.path("a.out")).unwrap();
    let b = std::fs::read_to_string(env.path("b.out")).unwrap();
    assert_ne!(a, b, "a new shadow for the second job");
}
