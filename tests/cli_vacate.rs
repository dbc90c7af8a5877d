//! `tern_vacate_job`, `tern_suspend` and `tern_continue`.
//!
//! The first tests hold the tools to HTCondor's messages and exit codes and
//! check the requests they leave for shadows, on jobs made "running" or
//! "suspended" by changing the queue database (no process runs, no pass
//! starts). The last ones run real jobs (examples/fake_job.rs) under
//! tern_negotiate and tern_shadow, and watch the queue, the event log and
//! the job's process.

use crate::common::queue::{db, set_owner, set_status, submit_sleeps as submit};
use crate::common::real_user;
use crate::common::runs;
use crate::common::{RunEnv, TIMEOUT, TestEnv, fake_job, proc_state};

/// A queue in a test directory in which no pass ever starts.
fn quiet_env() -> TestEnv {
    TestEnv::with_spool().var("_TERN_NEGOTIATE_ON_SUBMIT", Some("false"))
}

/// One column of a query on the queue database, row by row.
fn column<T: rusqlite::types::FromSql>(env: &TestEnv, sql: &str) -> Vec<T> {
    let db = db(env);
    let mut st = db.prepare(sql).unwrap();
    let rows = st.query_map([], |r| r.get(0)).unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

/// The shadow requests in the queue: `c.p kind` each, in id order.
fn requests(env: &TestEnv) -> Vec<String> {
    column(
        env,
        "SELECT cluster || '.' || proc || ' ' || kind FROM requests ORDER BY cluster, proc, kind",
    )
}

/// JobStatus of every job in the queue, in id order.
fn statuses(env: &TestEnv) -> Vec<i64> {
    column(env, "SELECT status FROM procs ORDER BY cluster, proc")
}

/// Cluster 1: job 1.0 idle, 1.1 running, 1.2 suspended.
fn idle_running_suspended() -> TestEnv {
    let env = quiet_env();
    submit(&env, 3, false);
    set_status(&env, 1, 1, 2);
    set_status(&env, 1, 2, 7);
    env
}

const TOTALS_1_1: &str =
    "1 Succeeded, 0 Failed, 0 Not Found, 1 Bad Status, 0 Already Done, 0 Permission Denied\n";

#[test]
fn jobs_in_the_wrong_state_are_named_as_condor_names_them() {
    let env = idle_running_suspended();
    runs!(env, ["tern_vacate_job", "1.0"] => 1, "", "Job 1.0 not running to be vacated\n");
    runs!(env, ["tern_vacate_job", "-fast", "1.0"] => 1, "", "Job 1.0 not running to be fast-vacated\n");
    runs!(env, ["tern_suspend", "1.0"] => 1, "", "Job 1.0 not running to be suspended\n");
    runs!(env, ["tern_suspend", "1.2"] => 1, "", "Job 1.2 not running to be suspended\n");
    // HTCondor says "running" here too.
    runs!(env, ["tern_continue", "1.0"] => 1, "", "Job 1.0 not running to be continued\n");
    runs!(env, ["tern_continue", "1.1"] => 1, "", "Job 1.1 not running to be continued\n");
    runs!(env, ["tern_continue", "7.0"] => 1, "", "Job 7.0 not found\n");
    assert!(requests(&env).is_empty(), "{:?}", requests(&env));
    assert_eq!(statuses(&env), [1, 2, 7]);
}

#[test]
fn each_id_is_reported_and_its_shadow_gets_a_request() {
    let env = idle_running_suspended();
    let out = format!("Job 1.1 suspended\n{TOTALS_1_1}");
    runs!(env, ["tern_suspend", "1.1", "1.0", "-totals"] => 0, out, "Job 1.0 not running to be suspended\n");
    runs!(env, ["tern_continue", "1.2"] => 0, "Job 1.2 continued\n", "");
    // A suspended job can be vacated too: its shadow continues it first.
    runs!(env, ["tern_vacate_job", "1.1", "1.2"] => 0, "Job 1.1 vacated\nJob 1.2 vacated\n", "");
    runs!(env, ["tern_vacate_job", "-f", "1.1"] => 0, "Job 1.1 fast-vacated\n", "");
    let want = "1.1 suspend, 1.1 vacate, 1.1 vacate-fast, 1.2 continue, 1.2 vacate";
    assert_eq!(requests(&env).join(", "), want);
    // The shadow, not the tool, changes the job.
    assert_eq!(statuses(&env), [1, 2, 7]);
}

#[test]
fn constraint_requests_match_only_jobs_the_action_applies_to() {
    let env = idle_running_suspended();
    let me = real_user();
    runs!(env, ["tern_vacate_job", "1"] => 0, "All jobs in cluster 1 have been vacated\n", "");
    assert_eq!(requests(&env), ["1.1 vacate", "1.2 vacate"]);
    let out = TOTALS_1_1.replace("1 Bad", "0 Bad") + "All jobs have been suspended\n";
    runs!(env, ["tern_suspend", "-all", "-totals"] => 0, out, "");
    let out = format!("All jobs of user \"{me}\" have been continued\n");
    runs!(env, ["tern_continue", me] => 0, out, "");
    let out = "All jobs matching constraint (ProcId >= 1) have been fast-vacated\n";
    runs!(env, ["tern_vacate_job", "-fast", "-constraint", "ProcId >= 1"] => 0, out, "");
    let want =
        "1.1 suspend, 1.1 vacate, 1.1 vacate-fast, 1.2 continue, 1.2 vacate, 1.2 vacate-fast";
    assert_eq!(requests(&env).join(", "), want);
    // Nothing idle is ever matched.
    let err = "Couldn't find/vacate all jobs matching constraint (ProcId == 0)\n";
    runs!(env, ["tern_vacate_job", "-constraint", "ProcId == 0"] => 1, "", err);
    let err = "Couldn't find/continue all jobs matching constraint ((JobStatus == 2) && (ClusterId == 1))\n";
    runs!(env, ["tern_continue", "-constraint", "JobStatus == 2", "1"] => 1, "", err);
}

#[test]
fn an_empty_queue_is_no_error_but_a_missing_job_is() {
    let env = quiet_env();
    for tool in ["tern_vacate_job", "tern_suspend", "tern_continue"] {
        let err = format!("{tool}:0:There are no jobs in the queue\n");
        runs!(env, [tool, "-all"] => 0, "", err);
        runs!(env, [tool, "3.1"] => 1, "", "Job 3.1 not found\n");
    }
}

#[test]
fn other_users_running_jobs_are_refused_unless_a_super_user_asks() {
    let env = quiet_env();
    submit(&env, 1, false);
    set_status(&env, 1, 0, 2);
    set_owner(&env, 1, 0, "someoneelse");
    runs!(env, ["tern_vacate_job", "1.0"] => 1, "", "Permission denied to vacate job 1.0\n");
    runs!(env, ["tern_vacate_job", "-fast", "1.0"] => 1, "", "Permission denied to fast-vacate job 1.0\n");
    let out =
        "0 Succeeded, 0 Failed, 0 Not Found, 0 Bad Status, 0 Already Done, 1 Permission Denied\n";
    runs!(env, ["tern_suspend", "-all", "-totals"] => 1, out, "Couldn't find/suspend all jobs\n");
    assert!(requests(&env).is_empty());
    let admin = env.var("_TERN_QUEUE_SUPER_USERS", Some(&real_user()));
    runs!(admin, ["tern_suspend", "1.0"] => 0, "Job 1.0 suspended\n", "");
    set_status(&admin, 1, 0, 7);
    let out = "All jobs of user \"someoneelse\" have been continued\n";
    runs!(admin, ["tern_continue", "someoneelse"] => 0, out, "");
    assert_eq!(requests(&admin), ["1.0 continue", "1.0 suspend"]);
}

#[test]
fn bad_arguments_change_nothing() {
    let env = idle_running_suspended();
    let usage = |tool: &str, args: &[&str], msg: &str| {
        let r = env.run(tool, args);
        assert_eq!(
            (r.code, r.stdout.as_str()),
            (2, ""),
            "{tool} {args:?}: {r:?}"
        );
        let want = format!("{tool}: error: {msg}");
        assert!(r.stderr.starts_with(&want), "{tool} {args:?}: {}", r.stderr);
    };
    usage("tern_vacate_job", &[], "you did not specify any jobs");
    usage(
        "tern_suspend",
        &["-all", "1"],
        "can't mix -all with other constraints",
    );
    usage("tern_continue", &["-fast", "1"], "unknown option '-fast'");
    usage(
        "tern_suspend",
        &["-reason", "x", "1"],
        "unknown option '-reason'",
    );
    usage(
        "tern_vacate_job",
        &["a/b"],
        "'a/b' is not a cluster, a cluster.proc or a user name",
    );
    let err = "tern_continue: error: constraint 'JobStatus ==': column 13: expected an expression, found end of input\n";
    runs!(env, ["tern_continue", "-constraint", "JobStatus =="] => 1, "", err);
    runs!(env, ["tern_vacate_job", "0"] => 1, "", "Invalid cluster # from 0.\n");
    assert!(requests(&env).is_empty());
    assert_eq!(statuses(&env), [1, 2, 7]);
}

// Real jobs.

/// Submits fake_job with `arguments` (after `touch pids`, which records its
/// pid) and the submit `lines`; waits until it runs; its id and pid.
#[track_caller]
fn start(env: &RunEnv, arguments: &str, lines: &str) -> (String, i32) {
    let sub = format!(
        "executable = {}\narguments = \"touch pids {arguments}\"\nlog = job.log\n{lines}queue\n",
        fake_job().display()
    );
    let id = format!("{}.0", env.submit("job.sub", &sub));
    let mut pid = None;
    env.wait_for(&format!("job {id} running"), TIMEOUT, || {
        let text = std::fs::read_to_string(env.path("pids")).unwrap_or_default();
        pid = text
            .lines()
            .next_back()
            .and_then(|l| l.strip_prefix("run ")?.parse().ok());
        env.status(&id) == Some(2) && pid.is_some()
    });
    (id, pid.unwrap())
}

/// Waits until the job event log's complete events for `job` are `want`.
#[track_caller]
fn wait_events(env: &RunEnv, job: &str, want: &[u32]) {
    let events = || -> Vec<u32> {
        let text = std::fs::read_to_string(env.path("job.log")).unwrap_or_default();
        let Ok((events, _)) = tern::userlog::read_complete(&text) else {
            return Vec::new();
        };
        let mine = events
            .iter()
            .filter(|e| format!("{}.{}", e.id.cluster, e.id.proc) == job);
        mine.map(|e| e.kind.number()).collect()
    };
    env.wait_for(&format!("events {want:?} of {job}"), TIMEOUT, || {
        events() == want
    });
}

#[test]
fn a_vacated_job_is_idle_with_its_reason_until_the_next_pass_runs_it() {
    let env = RunEnv::new().knob("NEGOTIATE_ON_EXIT", "false");
    let (id, pid) = start(&env, "sleep 300", "");
    env.run_ok("tern_vacate_job", [&id]);
    wait_events(&env, &id, &[0, 1, 4]);
    env.wait_for("the vacated job idle and its process gone", TIMEOUT, || {
        env.status(&id) == Some(1) && !crate::common::alive(pid)
    });
    assert_eq!(
        env.q_af(&id, &["VacateReasonCode", "NumJobStarts", "VacateReason"]),
        Some("1004 1 User requested the job to vacate".into())
    );
    env.negotiate();
    env.wait_for("the job running again", TIMEOUT, || {
        env.status(&id) == Some(2)
    });
    wait_events(&env, &id, &[0, 1, 4, 1]);
    env.run_ok("tern_rm", [&id]);
}

#[test]
fn vacate_fast_does_not_wait_for_a_job_that_ignores_sigterm() {
    let env = RunEnv::new().knob("NEGOTIATE_ON_EXIT", "false");
    let (id, pid) = start(&env, "ignore-term sleep 300", "job_max_vacate_time = 600\n");
    let t0 = std::time::Instant::now();
    runs!(env, ["tern_vacate_job", "-fast", &id] => 0, format!("Job {id} fast-vacated\n"), "");
    env.wait_for("the job killed", TIMEOUT, || !crate::common::alive(pid));
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        t0.elapsed()
    );
    wait_events(&env, &id, &[0, 1, 4]);
    env.wait_for("the job idle", TIMEOUT, || env.status(&id) == Some(1));
}

#[test]
fn suspend_stops_the_process_and_continue_resumes_it() {
    let env = RunEnv::new().knob("NEGOTIATE_ON_EXIT", "false");
    let (id, pid) = start(&env, "sleep 300", "");
    env.run_ok("tern_suspend", [&id]);
    env.wait_for("JobStatus 7 and a stopped process", TIMEOUT, || {
        env.status(&id) == Some(7) && proc_state(pid) == Some('T')
    });
    wait_events(&env, &id, &[0, 1, 10]);
    // Suspended is not running: a second suspend is refused.
    let err = format!("Job {id} not running to be suspended\n");
    runs!(env, ["tern_suspend", &id] => 1, "", err);
    env.run_ok("tern_continue", [&id]);
    env.wait_for("JobStatus 2 and a running process", TIMEOUT, || {
        env.status(&id) == Some(2) && proc_state(pid).is_some_and(|s| s != 'T')
    });
    wait_events(&env, &id, &[0, 1, 10, 11]);
    assert_eq!(env.q_af(&id, &["TotalSuspensions"]), Some("1".into()));
    // Suspended again, then vacated: the shadow continues it to stop it.
    env.run_ok("tern_suspend", [&id]);
    env.wait_for("JobStatus 7", TIMEOUT, || env.status(&id) == Some(7));
    env.run_ok("tern_vacate_job", [&id]);
    env.wait_for("the suspended job vacated", TIMEOUT, || {
        !crate::common::alive(pid)
    });
    wait_events(&env, &id, &[0, 1, 10, 11, 10, 4]);
    env.run_ok("tern_rm", [&id]);
}
