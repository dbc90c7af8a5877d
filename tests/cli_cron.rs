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
    // Far enough ahead that a loaded machine still sees the wait before
    // the shadow starts the job (the second is truncated: 9-10 s).
    let at = now() + 10;
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
        wait_until(Duration::from_secs(40), || env
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
    // A running clock, the same in every process (anchored now), that
    // reaches the minute 1700000040 (22:14:00 UTC) three seconds from now.
    let base = 1_700_000_037;
    let clock = format!("{base}+@{}", now());
    let env = RunEnv::new().var_env("TERN_NOW", &clock);
    let c = env.submit(
        "cron.sub",
        &format!(
            "executable = {}\narguments = touch runs exit 0\ncron_minute = *\ncron_window = 30\n\
             on_exit_remove = NumJobStarts >= 2\nlog = cron.log\nqueue\n",
            fake_job().display()
        ),
    );
    let id = format!("{c}.0");
    // Two runs take about a minute; passes come on submit and on exit,
    // and here every few seconds as cron would.
    let mut done = false;
    for _ in 0..60 {
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
    // Each run at its minute, never before it (a loaded machine may be a
    // little late).
    for (t, minute) in starts.iter().zip([1_700_000_040, 1_700_000_100]) {
        assert!((minute..minute + 5).contains(t), "runs at {starts:?}");
    }
    assert_eq!(env.history_af(&id, &["NumJobStarts"]).as_deref(), Some("2"));
    assert_eq!(
        env.history_af(&id, &["DeferralTime"]).as_deref(),
        Some("1700000100")
    );
    let runs = std::fs::read_to_string(env.path("runs")).unwrap();
    assert_eq!(runs.lines().count(), 2);
}

#[test]
fn a_cron_job_with_the_default_on_exit_remove_runs_once() {
    let base = 1_700_000_037;
    let clock = format!("{base}+@{}", now());
    let env = RunEnv::new().var_env("TERN_NOW", &clock);
    let c = env.submit(
        "once.sub",
        &format!(
            "executable = {}\narguments = touch runs exit 0\ncron_minute = *\nqueue\n",
            fake_job().display()
        ),
    );
    let id = format!("{c}.0");
    let mut done = false;
    for _ in 0..15 {
        if wait_until(Duration::from_secs(2), || {
            env.history_af(&id, &["JobStatus"]).is_some()
        }) {
            done = true;
            break;
        }
        env.negotiate();
    }
    assert!(done, "{}", env.diagnosis());
    assert_eq!(
        env.history_af(&id, &["JobStatus", "NumJobStarts"])
            .as_deref(),
        Some("4 1")
    );
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

#[test]
fn a_job_suspended_while_it_waits_starts_suspended_and_a_hold_takes_it_off_its_slot() {
    let env = RunEnv::new();
    // Two submits, two waits, a suspend and a hold must all come before
    // the deferral time, on a loaded machine too.
    let at = now() + 10;
    let sub = |name: &str| {
        env.submit(
            name,
            &format!(
                "executable = {}\narguments = \"touch {name}.runs sleep 300\"\ndeferral_time = {at}\n\
                 deferral_window = 60\nqueue\n",
                fake_job().display()
            ),
        )
    };
    let s = format!("{}.0", sub("sus"));
    let h = format!("{}.0", sub("held"));
    assert!(
        wait_until(Duration::from_secs(20), || {
            attr(&env, &s, "DeferralWaitUntil").is_some()
                && attr(&env, &h, "DeferralWaitUntil").is_some()
        }),
        "{}",
        env.diagnosis()
    );
    env.run_ok("tern_suspend", [s.as_str()]);
    env.run_ok("tern_hold", [h.as_str()]);
    assert!(
        wait_until(Duration::from_secs(10), || env.status(&s) == Some(7)),
        "{}",
        env.diagnosis()
    );
    // The held job leaves its slot without running.
    assert!(
        wait_until(Duration::from_secs(10), || {
            env.status(&h) == Some(5) && attr(&env, &h, "RemoteHost").is_none()
        }),
        "{}",
        env.diagnosis()
    );
    // At its time the suspended one starts, and is stopped at once (before
    // it can do anything, so it is found by its command line).
    let job_pid = || -> Option<i32> {
        std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            cmd.contains("touch sus.runs sleep 300").then_some(pid)
        })
    };
    assert!(
        wait_until(Duration::from_secs(30), || job_pid()
            .is_some_and(|p| crate::common::proc_state(p) == Some('T'))),
        "{}",
        env.diagnosis()
    );
    assert_eq!(env.status(&s), Some(7));
    assert!(!env.path("held.runs").exists(), "the held job never ran");
    env.run_ok("tern_rm", ["-all"]);
}

#[test]
fn a_job_that_reaches_its_shadow_after_its_window_is_held_missed() {
    // The shadow is started through a wrapper whose clock is ten minutes
    // ahead: it finds the job past DeferralTime + DeferralWindow.
    let env = RunEnv::new().knob("NEGOTIATE_ON_SUBMIT", "false");
    let late = now() + 600;
    let wrapper = env.write(
        "late_shadow.sh",
        &format!(
            "#!/bin/sh\nTERN_NOW={late} exec {} \"$@\"\n",
            crate::common::tool_path("tern_shadow").display()
        ),
    );
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let env = env.knob("SHADOW", wrapper.to_str().unwrap());
    let c = env.submit(
        "late.sub",
        &format!(
            "executable = {}\narguments = \"touch late.runs exit 0\"\ndeferral_time = {}\n\
             deferral_window = 30\nlog = late.log\nqueue\n",
            fake_job().display(),
            now() + 2
        ),
    );
    let id = format!("{c}.0");
    env.negotiate();
    assert!(
        wait_until(Duration::from_secs(20), || env.status(&id) == Some(5)),
        "{}",
        env.diagnosis()
    );
    assert_eq!(attr(&env, &id, "HoldReasonCode").as_deref(), Some("20"));
    assert_eq!(
        attr(&env, &id, "HoldReason").as_deref(),
        Some("Job missed deferred execution time")
    );
    assert!(!env.path("late.runs").exists(), "the job never ran");
}
