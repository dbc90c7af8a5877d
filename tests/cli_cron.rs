//! CronTab and deferral with real processes: a deferred job waits, shown
//! Running, until its DeferralTime; a per-minute cron job runs again each
//! minute, never early; a bad schedule that arrives later holds the job
//! (code 25); `tern_negotiate -reconfig` recomputes.

use std::time::Duration;

use crate::common::{RunEnv, fake_job, wait_until};

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn attr(env: &RunEnv, job: &str, name: &str) -> Option<String> {
    env.q_af(job, &[name]).filter(|v| v != "undefined")
}

#[test]
fn a_deferred_job_waits_running_until_its_deferral_time() {
    let env = RunEnv::new();
    let at = now() + 4;
    let c = env.submit(
        "d.sub",
        &format!(
            "executable = {}\narguments = exit 0\ndeferral_time = {at}\ndeferral_window = 60\nlog = d.log\nqueue\n",
            fake_job().display()
        ),
    );
    let id = format!("{c}.0");
    assert!(
        wait_until(Duration::from_secs(20), || attr(
            &env,
            &id,
            "DeferralWaitUntil"
        )
        .is_some()),
        "{}",
        env.diagnosis()
    );
    assert_eq!(env.status(&id), Some(2), "a waiting job shows Running");
    let run = env.run_ok("tern_q", ["-run"]);
    assert!(run.contains("waits until"), "{run}");
    let plain = env.run_ok("tern_q", Vec::<String>::new());
    assert!(
        plain.contains(&format!("{id} is waiting for its deferral time")),
        "{plain}"
    );
    assert!(
        wait_until(Duration::from_secs(30), || env
            .history_af(&id, &["JobStatus"])
            .is_some()),
        "{}",
        env.diagnosis()
    );
    let started: i64 = env
        .history_af(&id, &["JobCurrentStartExecutingDate"])
        .unwrap()
        .parse()
        .unwrap();
    assert!(started >= at, "executed at {started}, deferral time {at}");
}

#[test]
fn a_per_minute_cron_job_runs_each_minute_never_early() {
    let env = RunEnv::new();
    let c = env.submit(
        "cron.sub",
        &format!(
            "executable = {}\narguments = touch runs exit 0\ncron_minute = *\ncron_window = 30\n\
             on_exit_remove = NumJobStarts >= 2\nlog = cron.log\nqueue\n",
            fake_job().display()
        ),
    );
    let id = format!("{c}.0");
    // Two runs take up to two minutes; passes come on submit and on exit,
    // and here every few seconds as cron would.
    let mut done = false;
    for _ in 0..75 {
        if wait_until(Duration::from_secs(2), || {
            env.history_af(&id, &["JobStatus"]).is_some()
        }) {
            done = true;
            break;
        }
        env.negotiate();
    }
    assert!(done, "{}", env.diagnosis());
    let text = std::fs::read_to_string(env.path("cron.log")).unwrap();
    let events = tern::userlog::read(&text).unwrap();
    let starts: Vec<i64> = events
        .iter()
        .filter(|e| e.kind.number() == 1)
        .map(|e| e.time)
        .collect();
    assert_eq!(starts.len(), 2, "two runs: {text}");
    for t in &starts {
        // On the minute, never before it (a loaded machine may be late).
        assert!(t % 60 < 5, "each run starts at a minute: {starts:?}");
    }
    assert!(
        (60..65).contains(&(starts[1] - starts[0])),
        "a minute apart: {starts:?}"
    );
    assert_eq!(env.history_af(&id, &["NumJobStarts"]).as_deref(), Some("2"));
    let runs = std::fs::read_to_string(env.path("runs")).unwrap();
    assert_eq!(runs.lines().count(), 2);
}

#[test]
fn a_bad_schedule_set_by_qedit_holds_the_job_naming_the_field() {
    let env = RunEnv::new().knob("NEGOTIATE_ON_SUBMIT", "false");
    let c = env.submit(
        "bad.sub",
        "executable = /bin/true\ncron_minute = 5\nqueue\n",
    );
    let id = format!("{c}.0");
    env.run_ok("tern_qedit", [id.as_str(), "CronHour", "\"25x\""]);
    env.negotiate();
    assert_eq!(env.status(&id), Some(5), "{}", env.diagnosis());
    assert_eq!(attr(&env, &id, "HoldReasonCode").as_deref(), Some("25"));
    let reason = attr(&env, &id, "HoldReason").unwrap();
    assert!(
        reason.starts_with("Invalid cron schedule parameters: "),
        "{reason}"
    );
    assert!(reason.contains("CronHour"), "{reason}");
}

#[test]
fn reconfig_recomputes_deferral_times_and_rewrites_schedd_interval() {
    let env = RunEnv::new()
        .knob("NEGOTIATE_ON_SUBMIT", "false")
        .knob("START", "false");
    let c = env.submit(
        "r.sub",
        "executable = /bin/true\ncron_minute = 0\ncron_hour = 3\nqueue\n",
    );
    let id = format!("{c}.0");
    env.negotiate();
    let first: i64 = attr(&env, &id, "DeferralTime").unwrap().parse().unwrap();
    assert!(first > now(), "the next 03:00 is ahead");
    // A time far away stays until its window has passed...
    env.run_ok(
        "tern_qedit",
        [
            id.as_str(),
            "DeferralTime",
            &(now() + 10 * 86400).to_string(),
        ],
    );
    env.negotiate();
    assert_ne!(
        attr(&env, &id, "DeferralTime")
            .unwrap()
            .parse::<i64>()
            .unwrap(),
        first
    );
    // ...but -reconfig recomputes every idle cron job.
    let env = env.knob("SCHEDD_INTERVAL", "30");
    env.run_ok("tern_negotiate", ["-reconfig"]);
    assert_eq!(
        attr(&env, &id, "DeferralTime")
            .unwrap()
            .parse::<i64>()
            .unwrap(),
        first
    );
    assert_eq!(attr(&env, &id, "ScheddInterval").as_deref(), Some("30"));
}
