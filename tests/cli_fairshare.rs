//! Fair share in the pass: submitters divide the slots in inverse
//! proportion to their effective priorities (HTCondor's pie spin), and
//! nice-user jobs take only slots nobody else wants.

use crate::common::{RunEnv, fake_job, wait_until};
use std::time::Duration;

/// Submits `n` sleeping jobs accounted to `group` (or as nice_user).
fn submit(env: &RunEnv, name: &str, accounting: &str, n: usize) -> i64 {
    env.submit(
        name,
        &format!(
            "executable = {}\narguments = sleep 300\nrequest_memory = 10\n{accounting}\nqueue {n}\n",
            fake_job().display()
        ),
    )
}

fn running(env: &RunEnv, cluster: i64) -> usize {
    env.run_ok("tern_q", [&cluster.to_string(), "-af", "JobStatus"])
        .lines()
        .filter(|l| l.trim() == "2")
        .count()
}

fn env(cpus: &str) -> RunEnv {
    RunEnv::new()
        .knob("NEGOTIATE_ON_SUBMIT", "false")
        .knob("NEGOTIATE_ON_EXIT", "false")
        .knob("NUM_CPUS", cpus)
        .knob("MEMORY", "30720")
}

#[test]
fn two_submitters_of_equal_priority_split_the_slots_evenly() {
    let env = env("30");
    let a = submit(&env, "a.sub", "accounting_group = a", 40);
    let b = submit(&env, "b.sub", "accounting_group = b", 40);
    env.negotiate();
    assert!(
        wait_until(Duration::from_secs(30), || running(&env, a)
            + running(&env, b)
            == 30),
        "{}",
        env.diagnosis()
    );
    assert_eq!((running(&env, a), running(&env, b)), (15, 15));
    env.run_ok("tern_rm", ["-all"]);
}

#[test]
fn a_submitter_with_few_jobs_leaves_its_share_to_the_other() {
    let env = env("30");
    let a = submit(&env, "a.sub", "accounting_group = a", 40);
    let b = submit(&env, "b.sub", "accounting_group = b", 3);
    env.negotiate();
    assert!(
        wait_until(Duration::from_secs(30), || running(&env, a)
            + running(&env, b)
            == 30),
        "{}",
        env.diagnosis()
    );
    assert_eq!((running(&env, a), running(&env, b)), (27, 3));
    env.run_ok("tern_rm", ["-all"]);
}

#[test]
fn nice_user_jobs_run_only_on_slots_nobody_else_wants() {
    let env = env("6");
    let nice = submit(&env, "nice.sub", "nice_user = true", 10);
    let plain = submit(&env, "plain.sub", "", 4);
    env.negotiate();
    assert!(
        wait_until(Duration::from_secs(30), || running(&env, nice)
            + running(&env, plain)
            == 6),
        "{}",
        env.diagnosis()
    );
    // Every plain job runs; the nice user gets only what is left.
    assert_eq!((running(&env, plain), running(&env, nice)), (4, 2));
    env.run_ok("tern_rm", ["-all"]);
}

/// Submitter a fills every slot, then b arrives with the same priority.
fn a_fills_then_b_arrives(preempt: bool) -> (RunEnv, i64, i64) {
    let mut env = env("4");
    if preempt {
        env = env.knob("PREEMPTION_REQUIREMENTS", "True");
    }
    let a = submit(&env, "a.sub", "accounting_group = a", 8);
    env.negotiate();
    assert!(
        wait_until(Duration::from_secs(30), || running(&env, a) == 4),
        "{}",
        env.diagnosis()
    );
    let b = submit(&env, "b.sub", "accounting_group = b", 4);
    (env, a, b)
}

#[test]
fn with_preemption_requirements_a_pass_vacates_down_to_fair_shares() {
    let (env, a, b) = a_fills_then_b_arrives(true);
    // One pass vacates two of a's jobs; the next gives their slots to b.
    let mut done = false;
    for _ in 0..20 {
        env.negotiate();
        if wait_until(Duration::from_secs(1), || running(&env, b) == 2) {
            done = true;
            break;
        }
    }
    assert!(done, "{}", env.diagnosis());
    assert_eq!((running(&env, a), running(&env, b)), (2, 2));
    let evicted = env.run_ok("tern_q", [&a.to_string(), "-af", "VacateReasonCode"]);
    assert_eq!(
        evicted.lines().filter(|l| l.trim() == "1019").count(),
        2,
        "{evicted}"
    );
    // Fair now: more passes vacate nothing.
    env.negotiate();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!((running(&env, a), running(&env, b)), (2, 2));
    env.run_ok("tern_rm", ["-all"]);
}

#[test]
fn without_preemption_requirements_nothing_is_vacated() {
    let (env, a, b) = a_fills_then_b_arrives(false);
    env.negotiate();
    env.negotiate();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!((running(&env, a), running(&env, b)), (4, 0));
    env.run_ok("tern_rm", ["-all"]);
}

#[test]
fn submitters_with_priorities_10_and_20_on_30_slots_get_20_and_10() {
    let env = env("30").knob("UID_DOMAIN", "test");
    let a = submit(&env, "a.sub", "accounting_group = a", 40);
    let b = submit(&env, "b.sub", "accounting_group = b", 40);
    let user = env
        .run_ok("tern_q", [&format!("{a}.0"), "-af", "Owner"])
        .trim()
        .to_string();
    // Real priorities 10 and 20 (factors equal): effective 10000 and 20000.
    for (group, prio) in [("a", "10"), ("b", "20")] {
        env.run_ok(
            "tern_userprio",
            ["-setprio", &format!("{group}.{user}@test"), prio],
        );
    }
    env.negotiate();
    assert!(
        wait_until(Duration::from_secs(30), || running(&env, a)
            + running(&env, b)
            == 30),
        "{}",
        env.diagnosis()
    );
    assert_eq!((running(&env, a), running(&env, b)), (20, 10));
    env.run_ok("tern_rm", ["-all"]);
}

#[test]
fn job_order_follows_pre_job_prio_then_job_prio_and_an_unmatchable_job_blocks_nothing() {
    let env = env("1");
    let fj = fake_job();
    let sub = |name: &str, lines: &str| {
        env.submit(
            name,
            &format!(
                "executable = {}\narguments = sleep 300\nrequest_memory = 10\n{lines}",
                fj.display()
            ),
        )
    };
    // First in line (PreJobPrio1 2), but no slot is big enough for it.
    let huge = sub(
        "huge.sub",
        "priority = 100\n+PreJobPrio1 = 2\nrequest_memory = 999999\nqueue\n",
    );
    let by_prio = sub("prio.sub", "priority = $(Process)\nqueue 3\n");
    // A worse JobPrio, but PreJobPrio1 comes first.
    let pre = sub("pre.sub", "priority = -5\n+PreJobPrio1 = 1\nqueue\n");
    env.negotiate();
    assert!(
        wait_until(Duration::from_secs(30), || running(&env, pre) == 1),
        "{}",
        env.diagnosis()
    );
    assert_eq!((running(&env, huge), running(&env, by_prio)), (0, 0));
    // When it goes, the best JobPrio of the rest takes the slot (the
    // shadow reuses its claim, or the next pass matches it).
    env.run_ok("tern_rm", [pre.to_string()]);
    let mut started = false;
    for _ in 0..30 {
        if wait_until(Duration::from_secs(1), || {
            env.status(&format!("{by_prio}.2")) == Some(2)
        }) {
            started = true;
            break;
        }
        env.negotiate();
    }
    assert!(started, "{}", env.diagnosis());
    assert_eq!(running(&env, huge), 0);
    let reason = env.run_ok(
        "tern_q",
        [&format!("{huge}.0"), "-af", "LastRejMatchReason"],
    );
    assert_eq!(reason.trim(), "no match found");
    env.run_ok("tern_rm", ["-all"]);
}

#[test]
fn a_slot_rank_preempts_for_a_job_it_prefers_when_enabled() {
    let env = env("2")
        .knob("RANK", "TARGET.Wanted =?= True")
        .knob("STARTD_RANK_PREEMPTION", "true");
    let plain = submit(&env, "plain.sub", "", 2);
    env.negotiate();
    assert!(
        wait_until(Duration::from_secs(30), || running(&env, plain) == 2),
        "{}",
        env.diagnosis()
    );
    let wanted = submit(&env, "wanted.sub", "+Wanted = True\npriority = 10", 1);
    let mut done = false;
    for _ in 0..20 {
        env.negotiate();
        if wait_until(Duration::from_secs(1), || running(&env, wanted) == 1) {
            done = true;
            break;
        }
    }
    assert!(done, "{}", env.diagnosis());
    assert_eq!(running(&env, plain), 1);
    let codes = env.run_ok("tern_q", [&plain.to_string(), "-af", "VacateReasonCode"]);
    assert_eq!(
        codes.lines().filter(|l| l.trim() == "1018").count(),
        1,
        "{codes}"
    );
    env.run_ok("tern_rm", ["-all"]);
}

/// Submitter a (effective priority 500,000) holds both slots and b (500)
/// arrives: b's share is 2 x 1000/1001 = 1.998 slots. The pie spin rounds
/// a share up (HTCondor's SubmitterLimitPermits), and preemption now goes
/// by the same rule; it used to stop at b's exact share and leave b one
/// slot. Then -better-analyze of b's idle job counts the slots running b's
/// own jobs as its own, not as "serving other users" (b is an accounting
/// group: the slots name the submitter, not the job's User).
#[test]
fn preemption_rounds_a_share_up_as_the_pie_spin_does() {
    let env = env("2")
        .knob("NUM_SLOTS", "2")
        .knob("UID_DOMAIN", "test")
        .knob("PREEMPTION_REQUIREMENTS", "True");
    let a = submit(&env, "a.sub", "accounting_group = a", 4);
    env.negotiate();
    assert!(
        wait_until(Duration::from_secs(30), || running(&env, a) == 2),
        "{}",
        env.diagnosis()
    );
    let user = env
        .run_ok("tern_q", [&format!("{a}.0"), "-af", "Owner"])
        .trim()
        .to_string();
    env.run_ok(
        "tern_userprio",
        ["-setprio", &format!("a.{user}@test"), "500"],
    );
    let b = submit(&env, "b.sub", "accounting_group = b", 4);
    let mut done = false;
    for _ in 0..20 {
        env.negotiate();
        if wait_until(Duration::from_secs(1), || running(&env, b) == 2) {
            done = true;
            break;
        }
    }
    assert!(done, "{}", env.diagnosis());
    env.negotiate();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!((running(&env, a), running(&env, b)), (0, 2));
    let report = env.run_ok("tern_q", ["-better-analyze", &format!("{b}.3")]);
    assert!(
        report.contains("    2 slots match and are already running your jobs\n"),
        "{report}"
    );
    assert!(!report.contains("serving other users"), "{report}");
    env.run_ok("tern_rm", ["-all"]);
}
