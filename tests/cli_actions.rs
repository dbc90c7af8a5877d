//! Whose jobs the job tools may touch: every one of tern_rm (and
//! `-forcex`), tern_hold, tern_release, tern_vacate_job (and `-fast`),
//! tern_suspend, tern_continue, tern_prio and tern_qedit refuses another
//! user's job with HTCondor's message and exit status and leaves the queue
//! as it was, and a user named in QUEUE_SUPER_USERS (or anyone, with
//! QUEUE_ALL_USERS_TRUSTED) may act on it. The
//! library enforces the rule (`queue::Queue::write_as`); these tests hold
//! the tools to it. Other users' jobs, and running ones, are made by
//! changing the queue database, as in tests/cli_edit.rs.

use crate::common::TestEnv;
use crate::common::queue::{db, set_owner, set_status, submit_sleeps as submit};
use crate::common::real_user;
use crate::common::runs;

/// Someone who is not the user running the tests.
const OTHER: &str = "someoneelse";

/// Cluster 1, all of it someone else's: 1.0 idle, 1.1 running, 1.2
/// suspended, 1.3 held, 1.4 removed (its shadow still stopping it), so
/// that every action has a job it applies to.
fn others_jobs() -> TestEnv {
    let env = TestEnv::with_spool();
    submit(&env, 5, false);
    for (p, status) in [(0, 1), (1, 2), (2, 7), (3, 5), (4, 3)] {
        set_owner(&env, 1, p, OTHER);
        set_status(&env, 1, p, status);
    }
    env
}

/// Everything a refused tool must leave alone: each job's row (status,
/// owner, priority and its own attributes), the shadow requests, the
/// history and the transaction log.
fn snapshot(env: &TestEnv) -> String {
    let db = db(env);
    let mut st = db
        .prepare(
            "SELECT cluster || '.' || proc || ' ' || status || ' ' || owner || ' ' || prio \
             || ' ' || entered || ' ' || ad FROM procs ORDER BY cluster, proc",
        )
        .unwrap();
    let rows: Vec<String> = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let count = |sql: &str| -> i64 { db.query_row(sql, [], |r| r.get(0)).unwrap() };
    format!(
        "{}\nrequests {}\nhistory {}\nlog {}\n",
        rows.join("\n"),
        count("SELECT count(*) FROM requests"),
        count("SELECT count(*) FROM history"),
        count("SELECT coalesce(max(seq), 0) FROM txlog"),
    )
}

/// The shadow requests in the queue: `c.p kind` each, in id order.
fn requests(env: &TestEnv) -> Vec<String> {
    let db = db(env);
    let mut st = db
        .prepare(
            "SELECT cluster || '.' || proc || ' ' || kind FROM requests \
             ORDER BY cluster, proc, kind",
        )
        .unwrap();
    st.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn another_users_job_named_by_id_is_refused_by_every_tool() {
    let env = others_jobs();
    let before = snapshot(&env);
    let denied = |verb: &str, job: &str| format!("Permission denied to {verb} job {job}\n");
    runs!(env, ["tern_rm", "1.0"] => 1, "", denied("remove", "1.0"));
    runs!(env, ["tern_rm", "-forcex", "1.4"] => 1, "", denied("force removal of", "1.4"));
    runs!(env, ["tern_hold", "1.0"] => 1, "", denied("hold", "1.0"));
    runs!(env, ["tern_release", "1.3"] => 1, "", denied("release", "1.3"));
    runs!(env, ["tern_vacate_job", "1.1"] => 1, "", denied("vacate", "1.1"));
    runs!(env, ["tern_vacate_job", "-fast", "1.1"] => 1, "", denied("fast-vacate", "1.1"));
    runs!(env, ["tern_suspend", "1.1"] => 1, "", denied("suspend", "1.1"));
    runs!(env, ["tern_continue", "1.2"] => 1, "", denied("continue", "1.2"));
    runs!(env, ["tern_prio", "-p", "5", "1.0"] => 1, "", "Couldn't set new priority for 1.0.\n");
    runs!(env, ["tern_qedit", "1.0", "A", "1"] => 1, "",
        "Failed to set attribute \"A\" for job 1.0.\nTransaction failed.  No attributes were set.\n");
    assert_eq!(snapshot(&env), before);
}

#[test]
fn another_users_jobs_named_by_user_or_constraint_are_refused_by_every_tool() {
    let env = others_jobs();
    let before = snapshot(&env);
    // The jobs in a state the action applies to are matched, and refused.
    for (tool, verb, matched) in [
        ("tern_hold", "hold", 3),
        ("tern_release", "release", 1),
        ("tern_vacate_job", "vacate", 2),
        ("tern_suspend", "suspend", 1),
        ("tern_continue", "continue", 1),
    ] {
        runs!(env, [tool, OTHER] => 1, "",
            format!("Couldn't find/{verb} all jobs of user \"{OTHER}\"\n"));
        let totals = format!(
            "0 Succeeded, 0 Failed, 0 Not Found, 0 Bad Status, 0 Already Done, {matched} Permission Denied\n"
        );
        runs!(env, [tool, "-totals", "1"] => 1, totals,
            format!("Couldn't find/{verb} all jobs in cluster 1\n"));
    }
    runs!(env, ["tern_rm", "-constraint", "ProcId == 0"] => 1, "",
        "Couldn't find/remove all jobs matching constraint (ProcId == 0)\n");
    runs!(env, ["tern_rm", "-forcex", "1"] => 1, "",
        "Couldn't find/remove all jobs in cluster 1\n");
    runs!(env, ["tern_vacate_job", "-fast", "-all"] => 1, "",
        "Couldn't find/fast-vacate all jobs\n");
    let each: String = (0..5)
        .map(|p| format!("Couldn't set new priority for 1.{p}.\n"))
        .collect();
    runs!(env, ["tern_prio", "+1", OTHER] => 1, "", each);
    // -all chooses among the user's own jobs: there are none, and no word.
    runs!(env, ["tern_prio", "+1", "-all"] => 0, "", "");
    runs!(env, ["tern_qedit", "1", "A", "1"] => 1, "",
        "Failed to set attribute \"A\" by constraint: (ClusterId == 1)\nTransaction failed.  No attributes were set.\n");
    assert_eq!(snapshot(&env), before);
}

#[test]
fn super_users_who_are_someone_else_give_this_user_nothing() {
    // Not even when the job's owner is one: the rule is about who asks.
    let supers = format!("{OTHER}, x{}", real_user());
    let env = others_jobs().var("_TERN_QUEUE_SUPER_USERS", Some(&supers));
    let before = snapshot(&env);
    runs!(env, ["tern_hold", "1.0"] => 1, "", "Permission denied to hold job 1.0\n");
    runs!(env, ["tern_rm", "-all"] => 1, "", "Couldn't find/remove all jobs\n");
    assert_eq!(snapshot(&env), before);
}

#[test]
fn a_queue_super_user_may_act_on_another_users_jobs() {
    let me = real_user();
    let env = others_jobs().var("_TERN_QUEUE_SUPER_USERS", Some(&format!("root, {me}")));
    runs!(env, ["tern_vacate_job", "1.1"] => 0, "Job 1.1 vacated\n", "");
    runs!(env, ["tern_vacate_job", "-fast", "1.1"] => 0, "Job 1.1 fast-vacated\n", "");
    runs!(env, ["tern_suspend", "1.1"] => 0, "Job 1.1 suspended\n", "");
    runs!(env, ["tern_continue", "1.2"] => 0, "Job 1.2 continued\n", "");
    assert_eq!(
        requests(&env),
        [
            "1.1 suspend",
            "1.1 vacate",
            "1.1 vacate-fast",
            "1.2 continue"
        ]
    );
    runs!(env, ["tern_prio", "-p", "5", "1.0"] => 0, "", "");
    runs!(env, ["tern_qedit", "1.0", "A", "1"] => 0, "Set attribute \"A\".\n", "");
    runs!(env, ["tern_hold", "1.0"] => 0, "Job 1.0 held\n", "");
    runs!(env, ["tern_release", "1.3"] => 0, "Job 1.3 released\n", "");
    runs!(env, ["tern_rm", "-forcex", "1.4"] => 0,
        "Job 1.4 removed locally (remote state unknown)\n", "");
    runs!(env, ["tern_rm", "1.0"] => 0, "Job 1.0 marked for removal\n", "");
    let db = db(&env);
    let left: Vec<String> = db
        .prepare("SELECT cluster || '.' || proc || ' ' || status FROM procs ORDER BY proc")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(left, ["1.1 2", "1.2 7", "1.3 1"]);
    // The reasons name who asked, not whose job it was.
    let reason: String = db
        .query_row(
            "SELECT ad FROM history WHERE cluster = 1 AND proc = 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        reason.contains(&format!("RemoveReason = \"via tern_rm (by user {me})\"")),
        "{reason}"
    );
}

#[test]
fn with_all_users_trusted_anyone_may_act_on_anyones_jobs() {
    let env = others_jobs().var("_TERN_QUEUE_ALL_USERS_TRUSTED", Some("true"));
    runs!(env, ["tern_hold", "1.0"] => 0, "Job 1.0 held\n", "");
    runs!(env, ["tern_suspend", OTHER] => 0,
        format!("All jobs of user \"{OTHER}\" have been suspended\n"), "");
    runs!(env, ["tern_prio", "-p", "3", "1.0"] => 0, "", "");
    runs!(env, ["tern_qedit", "1.0", "A", "1"] => 0, "Set attribute \"A\".\n", "");
    let off = env.var("_TERN_QUEUE_ALL_USERS_TRUSTED", Some("false"));
    runs!(off, ["tern_release", "1.0"] => 1, "", "Permission denied to release job 1.0\n");
}
