//! A simulated day of cron's per-minute passes, two started at the same
//! instant each minute, with the clock jumping a day forward at 06:00 and a
//! day back at 12:00 (of the day it jumped to): cron and deferred jobs stay
//! correct and never run twice for one time, and no job ever runs twice at
//! once.
//!
//! The clock is `TERN_NOW`, fixed for each minute's passes (and the shadows
//! they start); the jobs' prep time is 0 and SCHEDD_INTERVAL 1, so a pass
//! matches only the jobs due at its minute, whose shadows start them at
//! once. DeferralTime is an instant, as in HTCondor: a cron job that missed
//! its times while the clock jumped forward runs once, for the latest time
//! its window still allows (not once per missed minute), a deferred job
//! whose time went by within its window runs once, and after a jump back a
//! job waits for the time it was given to come again.

use std::process::Child;
use std::time::Duration;

use crate::common::{RunEnv, wait_until_every};
use tern::queue::{JobId, joblock};

/// 2023-11-14 22:14:00 UTC, a minute boundary.
const T0: i64 = 1_700_000_040;
const DAY: i64 = 86_400;

/// The clock at simulated minute `i`: a day ahead from 06:00 to 12:00 of
/// that day, then back on the first day.
fn clock(i: i64) -> i64 {
    match i {
        0..360 => T0 + i * 60,
        360..720 => T0 + DAY + i * 60,
        _ => T0 + i * 60,
    }
}

fn pass(env: &RunEnv, now: i64) -> Child {
    env.command("tern_negotiate")
        .env("TERN_NOW", now.to_string())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("starting tern_negotiate")
}

/// Start times (the event log's 001, on the simulated clock) of `job`.
fn starts(text: &str, job: &str) -> Vec<i64> {
    let (c, p) = job.split_once('.').unwrap();
    let (c, p): (i64, i64) = (c.parse().unwrap(), p.parse().unwrap());
    tern::userlog::read(text)
        .unwrap()
        .iter()
        .filter(|e| e.kind.number() == 1 && e.id.cluster == c && e.id.proc == p)
        .map(|e| e.time)
        .collect()
}

/// For a failure's message: the DeferralTime each run of `job` had (from
/// its stamps), next to its start, around each of the `extra` starts.
fn ran_for_around(env: &RunEnv, job: &str, wide: &str, got: &[i64], extra: &[i64]) -> String {
    let name = if job == wide {
        "wide.stamps"
    } else {
        "strict.stamps"
    };
    let text = std::fs::read_to_string(env.path(name)).unwrap_or_default();
    let ran_for: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("start"))
        .map(|l| l.rsplit(' ').next().unwrap_or(""))
        .collect();
    let mut out = String::new();
    for x in extra {
        for (i, t) in got.iter().enumerate().filter(|(_, t)| *t == x) {
            let lo = i.saturating_sub(2);
            let hi = (i + 3).min(got.len());
            let near: Vec<String> = (lo..hi)
                .map(|k| format!("{} for {}", got[k], ran_for.get(k).unwrap_or(&"?")))
                .collect();
            out.push_str(&format!("\n  start {i} at {t}: {near:?}"));
        }
    }
    out
}

#[test]
fn a_simulated_day_of_double_passes_with_clock_jumps_runs_each_time_once() {
    let env = RunEnv::new()
        .knob("SCHEDD_INTERVAL", "1")
        .knob("NEGOTIATE_ON_SUBMIT", "false")
        .knob("NEGOTIATE_ON_EXIT", "false")
        .knob("SHADOW_LINGER_MSEC", "0");
    // Each run stamps its start (real time, and the time it ran for) and
    // its end; a script, as `$(...)` in a submit file is a macro.
    let script = env.write(
        "stamp.sh",
        "#!/bin/sh\necho start $(date +%s%N) $2 >> $1\necho end $(date +%s%N) >> $1\n",
    );
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let stamp = |name: &str| {
        format!(
            "executable = {}\narguments = {name} $$([DeferralTime])\nlog = day.log\n",
            script.display()
        )
    };
    let submit_at = |name: &str, text: &str| {
        env.write(name, text);
        let r = env
            .command("tern_submit")
            .arg(name)
            .env("TERN_NOW", (T0 - 30).to_string())
            .output()
            .unwrap();
        assert!(r.status.success(), "{r:?}");
        let out = String::from_utf8_lossy(&r.stdout).into_owned();
        let c = out.trim_end().rsplit_once("cluster ").unwrap().1;
        format!("{}.0", c.trim_end_matches('.'))
    };
    // Every minute, a window wide enough to outlast the jump.
    let wide = submit_at(
        "wide.sub",
        &format!(
            "{}cron_minute = *\ncron_prep_time = 0\ncron_window = {}\non_exit_remove = false\nqueue\n",
            stamp("wide.stamps"),
            2 * DAY
        ),
    );
    // Every minute, a window of 30 s: the jump forward makes it miss its
    // time.
    let strict = submit_at(
        "strict.sub",
        &format!(
            "{}cron_minute = *\ncron_prep_time = 0\ncron_window = 30\non_exit_remove = false\nqueue\n",
            stamp("strict.stamps")
        ),
    );
    // Once, at 08:00 of the first day, with a two-day window: it runs once,
    // at the jump, and not again when the clock comes back before 08:00.
    let once = submit_at(
        "once.sub",
        &format!(
            "{}deferral_time = {}\ndeferral_prep_time = 0\ndeferral_window = {}\nqueue\n",
            stamp("once.stamps"),
            T0 + 8 * 3600,
            2 * DAY
        ),
    );

    let jobs: Vec<JobId> = [&wide, &strict, &once]
        .iter()
        .map(|j| {
            let (c, p) = j.split_once('.').expect("a job id");
            JobId {
                cluster: c.parse().unwrap(),
                proc: p.parse().unwrap(),
            }
        })
        .collect();
    for i in 0..1440 {
        let now = clock(i);
        let (mut a, mut b) = (pass(&env, now), pass(&env, now));
        assert!(a.wait().unwrap().success() && b.wait().unwrap().success());
        // The minute's runs end, and their shadows let the job locks go,
        // before the next minute's passes: a pass leaves a locked job to
        // the shadow that holds it, and on a loaded machine a shadow that
        // has recorded the end may still be on its way out at the next
        // minute, so the strict job would miss its window.
        let quiet = wait_until_every(Duration::from_secs(30), Duration::from_millis(10), || {
            !env.run_ok("tern_q", ["-af", "JobStatus"])
                .lines()
                .any(|s| s == "2")
                && !jobs.iter().any(|&id| joblock::is_held(&env.spool(), id))
        });
        assert!(quiet, "minute {i}: a job still runs\n{}", env.diagnosis());
        // As a job's exit asks for a pass: its next time is given within
        // its minute, whichever of the two passes ran it.
        assert!(pass(&env, now).wait().unwrap().success());
    }

    let log = std::fs::read_to_string(env.path("day.log")).unwrap();
    // Both cron jobs: each minute from 00:01 (the first pass gives them
    // their first time, the next minute) to 05:59 on the first day; at the
    // jump once, for 06:00 of the second day (the latest time their window
    // allows: the first day's 06:00 is past the strict one's, and the wide
    // one does not catch up on every minute it missed); then each minute
    // to 11:59 of the second day. After the jump back they wait for 12:00
    // of the second day, the time they were given.
    let want: Vec<i64> = (1..720).map(clock).collect();
    for job in [&wide, &strict] {
        let got = starts(&log, job);
        let missing: Vec<_> = want.iter().filter(|t| !got.contains(t)).collect();
        let mut extra = got.clone();
        for t in &want {
            if let Some(i) = extra.iter().position(|x| x == t) {
                extra.remove(i);
            }
        }
        assert!(
            got == want,
            "{job}: {} runs; missing {missing:?}, extra {extra:?}; the times it ran for, \
             by its stamps, around each extra: {}",
            got.len(),
            ran_for_around(&env, job, &wide, &got, &extra)
        );
        assert_eq!(env.status(job), Some(1));
        assert_eq!(
            env.q_af(job, &["DeferralTime"]).as_deref(),
            Some((T0 + DAY + 720 * 60).to_string().as_str())
        );
    }
    // The deferred job: once, at the first pass after the jump.
    assert_eq!(starts(&log, &once), [clock(360)]);
    assert_eq!(env.history_af(&once, &["JobStatus"]).as_deref(), Some("4"));

    // No job's runs overlap, by the jobs' own real-time stamps, and each
    // run ended.
    for name in ["wide.stamps", "strict.stamps", "once.stamps"] {
        let text = std::fs::read_to_string(env.path(name)).unwrap();
        let stamps: Vec<Vec<&str>> = text.lines().map(|l| l.split(' ').collect()).collect();
        let mut last_end = 0u128;
        let mut ran_for = std::collections::HashSet::new();
        for pair in stamps.chunks(2) {
            let [start, end] = pair else {
                panic!("{name}: a run did not end: {pair:?}")
            };
            assert!(start[0] == "start" && end[0] == "end", "{name}: {pair:?}");
            let stamp = |v: &[&str]| -> u128 {
                v.get(1)
                    .and_then(|t| t.parse().ok())
                    .unwrap_or_else(|| panic!("{name}: a stamp without its time: {pair:?}"))
            };
            let (s, e) = (stamp(start), stamp(end));
            assert!(s >= last_end && e >= s, "{name}: runs overlap: {pair:?}");
            // Never twice for one time.
            let run_for: i64 = start[2].parse().unwrap();
            assert!(ran_for.insert(run_for), "{name}: ran twice for {run_for}");
            last_end = e;
        }
    }
}
