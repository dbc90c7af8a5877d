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

/// A shadow's scheduling policy (sched(7)) as /proc shows it: the 41st
/// field of its stat line (0 SCHED_OTHER, 3 SCHED_BATCH).
fn policy_of(pid: &str) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields from the 3rd on follow the command's closing parenthesis.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(41 - 3)?.parse().ok()
}

/// The shadow runs its jobs under the normal policy, which its job sees as
/// its parent's, and waits for the next one under SCHED_BATCH, so that its
/// looks at the queue never preempt the user's own work; the next job runs
/// under the normal policy again.
#[test]
fn the_shadow_runs_jobs_under_the_normal_policy_and_lingers_under_batch() {
    if policy_of("self") != Some(0) {
        eprintln!("skipped: the tests run under another policy");
        return;
    }
    let env = env("60000");
    let job = |n: u32| {
        format!(
            "executable = /bin/sh\narguments = \"-c 'echo $PPID > shadow{n}; \
             sed -e s/.*\\)// /proc/$PPID/stat | cut -d\\  -f40 > policy{n}'\"\nqueue\n"
        )
    };
    env.submit("a.sub", &job(1));
    wait_done(&env, "1.0");
    let read = |name: &str| {
        std::fs::read_to_string(env.path(name))
            .unwrap()
            .trim()
            .to_string()
    };
    assert_eq!(read("policy1"), "0", "{}", env.diagnosis());
    assert!(claim_waits(&env), "{}", env.diagnosis());
    let shadow = read("shadow1");
    // (The slot shows Claimed/Idle a moment before the wait begins.)
    assert!(
        wait_until(Duration::from_secs(10), || policy_of(&shadow) == Some(3)),
        "the lingering shadow {shadow}: policy {:?}",
        policy_of(&shadow)
    );
    env.submit("b.sub", &job(2));
    wait_done(&env, "2.0");
    assert_eq!(
        read("shadow2"),
        shadow,
        "the same shadow ran the second job"
    );
    assert_eq!(read("policy2"), "0", "{}", env.diagnosis());
}
