//! Fetch-work hooks (tern_hooks(7), spec 8.1): fake hook programs, written
//! by each test as small sh scripts, feed jobs to the slots; tern_negotiate
//! starts tern_fetchwork beside it, which runs them. Tests that check one
//! fetch run tern_fetchwork themselves, so the fetch is over when it
//! returns.

use std::path::PathBuf;
use std::time::Duration;

use crate::common::{RunEnv, TIMEOUT};

/// `n` static one-cpu slots, fetching with keyword T.
fn env(n: usize) -> RunEnv {
    RunEnv::new()
        .knob("NUM_CPUS", &n.to_string())
        .knob("NUM_SLOTS", &n.to_string())
        .knob("SHADOW_LINGER_MSEC", "0")
}

/// Writes an executable sh script `name` with `body`.
fn script(env: &RunEnv, name: &str, body: &str) -> PathBuf {
    let p = env.write(name, &format!("#!/bin/sh\n{body}\n"));
    let mut perm = std::fs::metadata(&p).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&p, perm).unwrap();
    p
}

/// The environment with keyword T and its hooks: FETCH_WORK `fetch`, and a
/// REPLY_FETCH and EVICT_CLAIM that append their argument and stdin to
/// `replies` and `evictions`.
fn with_hooks(env: RunEnv, fetch: &str) -> RunEnv {
    let dir = env.path("");
    let d = dir.display();
    let f = script(&env, "fetch.sh", fetch);
    let r = script(
        &env,
        "reply.sh",
        &format!("{{ echo \"== $1\"; cat; }} >> {d}/replies"),
    );
    let e = script(
        &env,
        "evict.sh",
        &format!("{{ echo \"== evict\"; cat; }} >> {d}/evictions"),
    );
    env.knob("STARTD_JOB_HOOK_KEYWORD", "T")
        .knob("T_HOOK_FETCH_WORK", f.to_str().unwrap())
        .knob("T_HOOK_REPLY_FETCH", r.to_str().unwrap())
        .knob("T_HOOK_EVICT_CLAIM", e.to_str().unwrap())
}

fn read(env: &RunEnv, name: &str) -> String {
    std::fs::read_to_string(env.path(name)).unwrap_or_default()
}

/// A slot attribute as `tern_status -af` prints it.
fn slot_attr(env: &RunEnv, slot: &str, attr: &str) -> String {
    env.run_ok("tern_status", [slot, "-af", attr])
        .trim_end()
        .to_string()
}

/// The slots, their fetch records, the bindings and the fetch log, for a
/// failure message.
fn fetch_diagnosis(env: &RunEnv) -> String {
    let db = crate::common::queue::db(env);
    let mut out = String::new();
    for sql in [
        "SELECT name, state, activity, cluster, proc, entered_state FROM slots",
        "SELECT slot, spawned, completed, result, error FROM fetch_slots",
        "SELECT cluster, proc, slot FROM fetch_jobs",
    ] {
        let mut st = db.prepare(sql).unwrap();
        let n = st.column_count();
        let rows = st
            .query_map([], |r| {
                Ok((0..n)
                    .map(|i| format!("{:?}", r.get::<_, rusqlite::types::Value>(i).unwrap()))
                    .collect::<Vec<_>>()
                    .join(" "))
            })
            .unwrap();
        out.push_str(sql);
        out.push('\n');
        for r in rows {
            out.push_str(&r.unwrap());
            out.push('\n');
        }
    }
    let log = std::fs::read_to_string(env.spool().join("hooks/fetch.log")).unwrap_or_default();
    let tail: Vec<&str> = log.lines().rev().take(30).collect();
    out.push_str("fetch.log (newest first):\n");
    out.push_str(&tail.join("\n"));
    let pass = env.run("tern_negotiate", ["-v"]);
    out.push_str(&format!("\na pass now: {pass:?}\n"));
    out
}

/// The queue and the slots, made by a pass before the keyword is set (so
/// that it starts no fetch).
fn prepared(n: usize) -> RunEnv {
    let e = env(n);
    e.negotiate();
    e
}

/// A fetch hook that hands out one job ad (touching `ran` in the test
/// directory) the first time and nothing after.
fn one_job(env: &RunEnv) -> String {
    let d = env.path("").display().to_string();
    format!(
        "[ -e {d}/given ] && exit 0\ncat > {d}/slot.ad\ntouch {d}/given\n\
         echo 'Cmd = \"/bin/touch\"'\necho 'Args = \"{d}/ran\"'\necho 'Iwd = \"{d}\"'\n\
         echo 'Env = \"A=1;B=2\"'"
    )
}

#[test]
fn a_fetched_job_runs_under_a_shadow_and_its_claim_is_evicted_when_work_runs_out() {
    let env = prepared(1);
    let fetch = one_job(&env);
    let env = with_hooks(env, &fetch);
    env.negotiate();
    env.wait_for("the fetched job's run", TIMEOUT, || {
        env.path("ran").exists()
    });
    env.wait_for("the fetched job in the history", TIMEOUT, || {
        env.history_af("1.0", &["JobStatus"]).as_deref() == Some("4")
    });
    // It went through the queue as a job of the user running the pass,
    // with its keyword.
    let h = env
        .history_af("1.0", &["HookKeyword", "Owner", "Env", "In"])
        .unwrap();
    assert_eq!(
        h,
        format!("T {} A=1;B=2 /dev/null", crate::common::real_user()),
        "{h}"
    );
    // The hook saw the slot ad, long form.
    let ad = read(&env, "slot.ad");
    assert!(ad.contains("Name = \"slot1@"), "{ad}");
    // REPLY_FETCH: accept, the job ad with HookKeyword, -----, the slot ad
    // with the claim id.
    env.wait_for("REPLY_FETCH", TIMEOUT, || {
        read(&env, "replies").contains("ClaimId")
    });
    let replies = read(&env, "replies");
    assert!(replies.starts_with("== accept\n"), "{replies}");
    assert!(replies.contains("HookKeyword = \"T\""), "{replies}");
    let (job, slot) = replies.split_once("\n-----\n").expect("the separator");
    assert!(job.contains("Cmd = \"/bin/touch\""), "{job}");
    assert!(slot.contains("ClaimId = \""), "{slot}");
    // The job ended: the slot fetched again at once, found no work, and
    // the claim was evicted.
    env.wait_for("EVICT_CLAIM", TIMEOUT, || {
        read(&env, "evictions").contains("ClaimId")
    });
    let ev = read(&env, "evictions");
    assert!(
        ev.contains("ClusterId = 1\n") && ev.contains("\n-----\n"),
        "{ev}"
    );
    env.wait_slots_unclaimed();
}

#[test]
fn a_directory_work_source_runs_100_jobs_each_once() {
    let env = prepared(2);
    let d = env.path("").display().to_string();
    std::fs::create_dir(env.path("work")).unwrap();
    std::fs::create_dir(env.path("taken")).unwrap();
    script(&env, "job.sh", &format!("echo \"$1\" >> {d}/done"));
    for i in 1..=100 {
        env.write(
            &format!("work/{i:03}"),
            &format!("Cmd = \"{d}/job.sh\"\nArgs = \"{i}\"\nIwd = \"{d}\"\n"),
        );
    }
    // One file moved from the work directory per call (mv is atomic: two
    // slots fetching at once never take the same file).
    let fetch = format!(
        "cd {d}\nfor f in work/*; do\n  [ -e \"$f\" ] || exit 0\n  \
         if mv \"$f\" taken/ 2>/dev/null; then cat \"taken/${{f##*/}}\"; exit 0; fi\ndone"
    );
    let env = with_hooks(env, &fetch);
    env.negotiate();
    if !crate::common::wait_until(Duration::from_secs(120), || {
        read(&env, "done").lines().count() >= 100
    }) {
        panic!(
            "timed out waiting for 100 jobs done\n{}\n{}",
            fetch_diagnosis(&env),
            env.diagnosis()
        );
    }
    env.wait_for("every reply", TIMEOUT, || {
        read(&env, "replies").matches("== accept").count() >= 100
    });
    let mut done: Vec<u32> = read(&env, "done")
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    done.sort();
    assert_eq!(done, (1..=100).collect::<Vec<_>>(), "each job once");
    let replies = read(&env, "replies");
    assert_eq!(replies.matches("== accept").count(), 100);
    assert_eq!(replies.matches("== reject").count(), 0);
    env.wait_slots_unclaimed();
}

#[test]
fn start_refusing_a_fetched_job_rejects_it() {
    let env = prepared(1);
    let fetch = one_job(&env);
    // Undefined without a job (`==`, not `=?=`): the slot is not locally
    // refusing everything, so it fetches.
    let env = with_hooks(env, &fetch).knob("START", "TARGET.Good == true");
    env.run_ok("tern_fetchwork", [] as [&str; 0]);
    env.wait_for("REPLY_FETCH", TIMEOUT, || {
        read(&env, "replies").contains("-----")
    });
    let replies = read(&env, "replies");
    assert!(replies.starts_with("== reject\n"), "{replies}");
    assert!(!replies.contains("ClaimId"), "{replies}");
    assert_eq!(env.run_ok("tern_q", ["-af", "ClusterId"]), "");
    assert_eq!(
        slot_attr(&env, "slot1", "FetchWorkResult"),
        "rejected: the slot's START (Requirements) refuses the job"
    );
}

/// Runs one fetch with `hook` as FETCH_WORK; the slot's FetchWorkError.
fn failed_fetch(hook: &str, timeout: &str) -> (RunEnv, String) {
    let env = prepared(1);
    let env = with_hooks(env, hook).knob("FETCH_WORK_HOOK_TIMEOUT", timeout);
    let r = env.run("tern_fetchwork", [] as [&str; 0]);
    assert_eq!(r.code, 0, "{r:?}");
    let err = slot_attr(&env, "slot1", "FetchWorkError");
    assert_eq!(slot_attr(&env, "slot1", "FetchWorkResult"), "failed");
    assert_ne!(slot_attr(&env, "slot1", "FetchWorkErrorTime"), "undefined");
    // The failure is in the fetch log too, and nothing was queued.
    let log = std::fs::read_to_string(env.spool().join("hooks/fetch.log")).unwrap_or_default();
    assert!(log.contains("fetch failed"), "{log}");
    assert_eq!(env.run_ok("tern_q", ["-af", "ClusterId"]), "");
    (env, err)
}

#[test]
fn bad_output_discards_the_reply_and_is_shown_for_the_slot() {
    let (_env, err) = failed_fetch("echo 'Cmd = \"/bin/true\"'; echo 'not an attribute'", "10");
    assert!(
        err.contains("bad output") && err.contains("line 2"),
        "{err}"
    );
}

#[test]
fn an_ad_without_cmd_is_a_failure_and_rejected() {
    let (env, err) = failed_fetch("echo 'Args = \"x\"'", "10");
    assert!(err.contains("no Cmd"), "{err}");
    env.wait_for("REPLY_FETCH", TIMEOUT, || {
        read(&env, "replies").contains("-----")
    });
    assert!(read(&env, "replies").starts_with("== reject\n"));
}

#[test]
fn a_hook_past_its_timeout_is_killed_and_the_fetch_fails() {
    let t = std::time::Instant::now();
    let (_env, err) = failed_fetch("sleep 60", "1");
    assert!(err.contains("timed out after 1 s"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(30));
}

#[test]
fn a_hook_killed_by_a_signal_fails_the_fetch() {
    let (_env, err) = failed_fetch("kill -9 $$", "10");
    assert!(err.contains("killed by signal 9"), "{err}");
}

#[test]
fn a_missing_hook_program_fails_the_fetch() {
    let env = prepared(1);
    let env = with_hooks(env, "exit 0").knob("T_HOOK_FETCH_WORK", "/nonexistent/fetch");
    env.run_ok("tern_fetchwork", [] as [&str; 0]);
    let err = slot_attr(&env, "slot1", "FetchWorkError");
    assert!(err.contains("cannot run /nonexistent/fetch"), "{err}");
}

#[test]
fn a_non_zero_exit_is_ignored_and_its_stderr_logged() {
    let env = prepared(1);
    let env = with_hooks(env, "echo complaint >&2; exit 3");
    env.run_ok("tern_fetchwork", [] as [&str; 0]);
    assert_eq!(slot_attr(&env, "slot1", "FetchWorkResult"), "none");
    assert_eq!(slot_attr(&env, "slot1", "FetchWorkError"), "undefined");
    let log = std::fs::read_to_string(env.spool().join("hooks/fetch-fetch-slot1.stderr")).unwrap();
    assert_eq!(log, "complaint\n");
}

#[test]
fn fetch_work_delay_is_honoured_between_fetches() {
    let env = prepared(1);
    let d = env.path("").display().to_string();
    let env = with_hooks(env, &format!("echo x >> {d}/calls")).knob(
        "FetchWorkDelay",
        "ifThenElse(MY.State == \"Unclaimed\", 100, 5)",
    );
    let at = |t: i64| {
        let r = env
            .command("tern_fetchwork")
            .env("TERN_NOW", t.to_string())
            .output()
            .unwrap();
        assert!(r.status.success(), "{r:?}");
        read(&env, "calls").lines().count()
    };
    let now = 1_900_000_000;
    assert_eq!(at(now), 1, "the first fetch is due at once");
    assert_eq!(at(now + 99), 1, "FetchWorkDelay (100 s) has not passed");
    assert_eq!(at(now + 100), 2);
    assert_eq!(
        env.run_ok(
            "tern_status",
            [
                "slot1",
                "-af",
                "LastFetchWorkCompleted",
                "NextFetchWorkDelay"
            ]
        )
        .trim_end(),
        format!("{} 100", now + 100)
    );
}

#[test]
fn rank_decides_whether_a_fetched_job_preempts_the_running_one() {
    let env = prepared(1);
    let d = env.path("").display().to_string();
    // A fetched job is offered while `offer` exists; its Better comes
    // from the file.
    let fetch = format!(
        "cd {d}\n[ -e offer ] || exit 0\nb=$(cat offer); rm offer\n\
         echo 'Cmd = \"/bin/touch\"'; echo 'Args = \"{d}/ran\"'; echo \"Better = $b\""
    );
    let env = with_hooks(env, &fetch)
        .knob("RANK", "ifThenElse(TARGET.Better =?= true, 10, 0)")
        .knob("FetchWorkDelay", "0");
    env.submit(
        "sleep.sub",
        "executable = /bin/sleep\narguments = 300\nqueue\n",
    );
    env.wait_for("the sleep job running", TIMEOUT, || {
        env.status("1.0") == Some(2)
    });
    // Not better: rejected, the job keeps running.
    std::fs::write(env.path("offer"), "false").unwrap();
    env.negotiate();
    env.wait_for("a reject", TIMEOUT, || {
        read(&env, "replies").contains("== reject")
    });
    assert_eq!(env.status("1.0"), Some(2));
    // (FetchWorkDelay = 0: a later fetch may already have replaced the
    // slot's FetchWorkResult; the fetch log keeps every decision.)
    let log = env.spool().join("hooks/fetch.log");
    env.wait_for("the decision in the fetch log", TIMEOUT, || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("slot1: rejected a fetched job: the slot's RANK prefers its current job")
    });
    // Better: accepted, the running job preempted, the fetched one runs.
    std::fs::write(env.path("offer"), "true").unwrap();
    env.negotiate();
    env.wait_for("the fetched job's run", TIMEOUT, || {
        env.path("ran").exists()
    });
    assert!(read(&env, "replies").contains("== accept"));
    env.wait_for("the preempted job runs again", TIMEOUT, || {
        env.status("1.0") == Some(2) && env.attr("1.0", "NumJobStarts").as_deref() == Some("2")
    });
    env.run_ok("tern_rm", ["1"]);
}

#[test]
fn a_slot_whose_start_is_false_on_its_own_does_not_fetch() {
    let env = prepared(1);
    let d = env.path("").display().to_string();
    let env =
        with_hooks(env, &format!("echo x >> {d}/calls")).knob("START", "TARGET.Good =?= true");
    env.run_ok("tern_fetchwork", [] as [&str; 0]);
    assert_eq!(read(&env, "calls"), "");
    assert_eq!(
        slot_attr(&env, "slot1", "LastFetchWorkCompleted"),
        "undefined"
    );
}

#[test]
fn a_hanging_hook_costs_no_pass_and_a_second_fetcher_leaves_the_first_a_mark() {
    let env = prepared(1);
    let d = env.path("").display().to_string();
    let env = with_hooks(
        env,
        &format!("echo x >> {d}/calls\n[ -e {d}/slow ] && exit 0\ntouch {d}/slow\nexec sleep 10"),
    )
    .knob("FetchWorkDelay", "0");
    // The pass starts tern_fetchwork and does not wait for the hook. The
    // hook's 10 s keep the first fetcher's round, and so the mark the
    // second leaves, until the mark is looked at.
    let t = std::time::Instant::now();
    env.negotiate();
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    env.wait_for("the hook running", TIMEOUT, || env.path("slow").exists());
    // A second one finds the lock, leaves the mark and goes.
    let t = std::time::Instant::now();
    env.run_ok("tern_fetchwork", [] as [&str; 0]);
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert!(env.spool().join("hooks/fetch.wanted").exists());
    // The first one, its hook done, sees the mark and fetches again.
    env.wait_for("the second round", TIMEOUT, || {
        read(&env, "calls").lines().count() == 2
    });
}

#[test]
fn a_partitionable_slot_carves_a_dynamic_slot_for_a_fetched_job_with_requests() {
    // The default layout: one partitionable slot of 4 cpus.
    let env = RunEnv::new().knob("SHADOW_LINGER_MSEC", "0");
    env.negotiate();
    let d = env.path("").display().to_string();
    script(
        &env,
        "pjob.sh",
        &format!("while [ ! -e {d}/go ]; do sleep 0.1; done\ntouch {d}/ran"),
    );
    let fetch = format!(
        "[ -e {d}/given ] && exit 0\ntouch {d}/given\n\
         echo 'Cmd = \"{d}/pjob.sh\"'\n\
         echo 'RequestCpus = 2'; echo 'RequestMemory = 64'; echo 'RequestDisk = 1024'"
    );
    let env = with_hooks(env, &fetch);
    env.negotiate();
    env.wait_for("the job on a dynamic slot", TIMEOUT, || {
        env.run_ok("tern_status", ["-af", "Name", "Cpus", "JobId"])
            .lines()
            .any(|l| l.starts_with("slot1_1@") && l.ends_with(" 2 1.0"))
    });
    // The claim shows that it runs fetched work, and with which keyword.
    assert_eq!(slot_attr(&env, "slot1_1", "FetchedWorkKeyword"), "T");
    assert_eq!(env.q_af("1.0", &["HookKeyword"]).as_deref(), Some("T"));
    std::fs::write(env.path("go"), "").unwrap();
    env.wait_for("the fetched job's run", TIMEOUT, || {
        env.path("ran").exists()
    });
}

#[test]
fn a_partitionable_slot_needs_the_requests() {
    let env = RunEnv::new();
    env.negotiate();
    let env = with_hooks(env, "echo 'Cmd = \"/bin/true\"'");
    env.run_ok("tern_fetchwork", [] as [&str; 0]);
    let err = slot_attr(&env, "slot1", "FetchWorkError");
    assert!(err.contains("no RequestCpus"), "{err}");
}

#[test]
fn a_fetched_job_preempted_by_a_better_one_has_its_claim_evicted_and_runs_again() {
    let env = prepared(1);
    let d = env.path("").display().to_string();
    script(
        &env,
        "wait.sh",
        &format!("while [ ! -e {d}/go ]; do sleep 0.1; done"),
    );
    let fetch = format!(
        "cd {d}\n[ -e offer ] || exit 0\nb=$(cat offer); rm offer\n\
         if [ \"$b\" = true ]; then echo 'Cmd = \"/bin/touch\"'; echo 'Args = \"{d}/ran\"'\n\
         else echo 'Cmd = \"{d}/wait.sh\"'; fi\necho \"Better = $b\""
    );
    let env = with_hooks(env, &fetch)
        .knob("RANK", "ifThenElse(TARGET.Better =?= true, 10, 0)")
        .knob("FetchWorkDelay", "0");
    std::fs::write(env.path("offer"), "false").unwrap();
    env.negotiate();
    env.wait_for("the first fetched job running", TIMEOUT, || {
        env.status("1.0") == Some(2)
    });
    std::fs::write(env.path("offer"), "true").unwrap();
    env.negotiate();
    env.wait_for("the better job's run", TIMEOUT, || env.path("ran").exists());
    env.wait_for("EVICT_CLAIM", TIMEOUT, || {
        read(&env, "evictions").contains("ClaimId")
    });
    let ev = read(&env, "evictions");
    assert!(ev.contains("ClusterId = 1\n"), "{ev}");
    // The first job went back to the queue, unbound, and runs again.
    std::fs::write(env.path("go"), "").unwrap();
    env.wait_for("the first job done", TIMEOUT, || {
        env.history_af("1.0", &["NumJobStarts"]).as_deref() == Some("2")
    });
}

#[test]
fn a_fetched_job_waiting_for_its_slot_is_explained_by_better_analyze() {
    let env = prepared(1);
    let d = env.path("").display().to_string();
    // It says when its trap is set: a TERM that came before would end it
    // at once, and 2.0 would not wait.
    script(
        &env,
        "stubborn.sh",
        &format!("trap '' TERM\ntouch {d}/trapped\nwhile true; do sleep 1; done"),
    );
    let fetch = format!(
        "cd {d}\n[ -e offer ] || exit 0\nrm offer\n\
         echo 'Cmd = \"/bin/true\"'; echo 'Better = true'"
    );
    let env = with_hooks(env, &fetch)
        .knob("RANK", "ifThenElse(TARGET.Better =?= true, 10, 0)")
        .knob("FetchWorkDelay", "0");
    env.submit(
        "s.sub",
        &format!("executable = {d}/stubborn.sh\njob_max_vacate_time = 60\nqueue\n"),
    );
    env.wait_for("the job's trap", TIMEOUT, || env.path("trapped").exists());
    // FetchWorkDelay = 0 and nothing offered yet: the slot is always due.
    let dry = env.run_ok("tern_negotiate", ["-dry-run"]);
    assert!(dry.contains("fetch due on slot1 ("), "{dry}");
    std::fs::write(env.path("offer"), "").unwrap();
    // (A tern_fetchwork started by the submit's pass may hold the lock:
    // this one then leaves it the mark, and the fetch comes from it.)
    env.run_ok("tern_fetchwork", [] as [&str; 0]);
    // Accepted: 2.0 waits for slot1, whose job takes its vacate time.
    env.wait_for("the fetched job", TIMEOUT, || env.status("2.0") == Some(1));
    let dry = env.run_ok("tern_negotiate", ["-dry-run"]);
    assert!(dry.contains("fetched 2.0 waits for slot1"), "{dry}");
    let out = env.run_ok("tern_q", ["-better-analyze", "2.0"]);
    assert!(
        out.contains("Job 2.0 was fetched by the T hook of slot1 and runs only there"),
        "{out}"
    );
    env.run_ok("tern_rm", ["1", "2"]);
}

/// Runs one fetch whose job START refuses, with `reply` as REPLY_FETCH;
/// the fetch log after it.
fn failed_reply(reply: &str, timeout: &str) -> String {
    let env = prepared(1);
    let fetch = one_job(&env);
    let r = script(&env, "bad_reply.sh", reply);
    let env = with_hooks(env, &fetch)
        .knob("START", "TARGET.Good == true")
        .knob("T_HOOK_REPLY_FETCH", r.to_str().unwrap())
        .knob("FETCH_WORK_HOOK_TIMEOUT", timeout);
    // tern_fetchwork waits for the advisory hooks before it ends.
    env.run_ok("tern_fetchwork", [] as [&str; 0]);
    std::fs::read_to_string(env.spool().join("hooks/fetch.log")).unwrap_or_default()
}

#[test]
fn a_failing_reply_hook_is_logged() {
    let log = failed_reply("cat >/dev/null; echo 'no database' >&2; exit 1", "10");
    assert!(
        log.contains("advisory hook failed:")
            && log.contains("exited with status 1 (stderr: no database)"),
        "{log}"
    );
    let log = failed_reply("kill -9 $$", "10");
    assert!(log.contains("was killed by signal 9"), "{log}");
}

#[test]
fn a_reply_hook_past_its_timeout_is_killed_and_logged() {
    let t = std::time::Instant::now();
    let log = failed_reply("sleep 60", "1");
    assert!(log.contains("timed out after 1 s"), "{log}");
    assert!(t.elapsed() < Duration::from_secs(30));
}
