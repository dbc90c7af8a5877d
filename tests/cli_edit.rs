//! `tern_rm`, `tern_hold`, `tern_release` and `tern_qedit`, run on jobs
//! that `tern_submit` put in a temporary SPOOL. Jobs owned by someone else,
//! and running jobs, are made by changing the queue database directly, as
//! only a shadow or another user could.

use tern::classad::ClassAd;
use tern::classad::unparse::unparse_old;
use tern::queue::{JobId, Queue, Selection};

use crate::common::man::check_page;
use crate::common::queue::{db, set_owner, set_status, submit_sleeps as submit};
use crate::common::{Run, TestEnv, real_user, user_normalized};

/// Someone who is not the user running the tests.
const OTHER: &str = "someoneelse";

/// The jobs in the queue: `c.p status` each.
fn queue(env: &TestEnv) -> Vec<String> {
    let db = db(env);
    let mut st = db
        .prepare("SELECT cluster, proc, status FROM procs ORDER BY cluster, proc")
        .unwrap();
    st.query_map([], |r| {
        Ok(format!(
            "{}.{} {}",
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?
        ))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

/// A queued job's full ad, read with the library.
fn ad(env: &TestEnv, c: i64, p: i64) -> ClassAd {
    let q = Queue::open(&env.spool(), false).unwrap().unwrap();
    let sel = Selection {
        jobs: vec![JobId {
            cluster: c,
            proc: p,
        }],
        ..Selection::default()
    };
    let mut jobs = q.select(&sel).unwrap();
    assert_eq!(jobs.len(), 1, "job {c}.{p} is not in the queue");
    jobs.remove(0).1
}

/// An attribute of an ad in old syntax, or `-` when it is missing.
fn attr(ad: &ClassAd, name: &str) -> String {
    ad.get(name).map_or("-".into(), unparse_old)
}

/// `NAME=value` of each of `names`, the real user written `$USER`.
fn attrs(ad: &ClassAd, names: &[&str]) -> String {
    let text = names
        .iter()
        .map(|n| format!("{n}={}", attr(ad, n)))
        .collect::<Vec<_>>()
        .join(" ");
    user_normalized(&text)
}

/// The history, one `c.p status RemoveReason` line per job, newest first,
/// normalized.
fn history(env: &TestEnv) -> String {
    let r = env
        .run(
            "tern_history",
            ["-af", "ClusterId", "ProcId", "JobStatus", "RemoveReason"],
        )
        .normalized(env);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    r.stdout
}

/// Asserts a tool's exit code and both streams, the real user written
/// `$USER`.
#[track_caller]
fn outcome(r: &Run, code: i32, stdout: &str, stderr: &str) {
    assert_eq!(
        (
            r.code,
            user_normalized(&r.stdout).as_str(),
            user_normalized(&r.stderr).as_str()
        ),
        (code, stdout, stderr),
        "unexpected outcome"
    );
}

#[test]
fn rm_by_id_moves_an_idle_job_to_the_history() {
    let env = TestEnv::with_spool();
    submit(&env, 2, false);
    outcome(
        &env.run("tern_rm", ["1.0"]),
        0,
        "Job 1.0 marked for removal\n",
        "",
    );
    assert_eq!(queue(&env), ["1.1 1"]);
    assert_eq!(history(&env), "1 0 3 via tern_rm (by user $USER)\n");
    // It has left the queue, so it is no longer there to remove.
    outcome(&env.run("tern_rm", ["1.0"]), 1, "", "Job 1.0 not found\n");
}

#[test]
fn rm_reports_each_id_and_fails_only_when_none_was_removed() {
    let env = TestEnv::with_spool();
    submit(&env, 2, false);
    outcome(
        &env.run("tern_rm", ["1.1", "7.0", "1.0"]),
        0,
        "Job 1.1 marked for removal\nJob 1.0 marked for removal\n",
        "Job 7.0 not found\n",
    );
    outcome(
        &env.run("tern_rm", ["-totals", "7.0"]),
        1,
        "0 Succeeded, 0 Failed, 1 Not Found, 0 Bad Status, 0 Already Done, 0 Permission Denied\n",
        "Job 7.0 not found\n",
    );
}

#[test]
fn rm_by_cluster_user_constraint_and_all() {
    let env = TestEnv::with_spool();
    let me = real_user();
    submit(&env, 2, false);
    submit(&env, 2, false);
    submit(&env, 1, false);
    submit(&env, 1, false);
    outcome(
        &env.run("tern_rm", ["1"]),
        0,
        "All jobs in cluster 1 have been marked for removal\n",
        "",
    );
    outcome(
        &env.run("tern_rm", ["-const", "ProcId == 1", "2"]),
        0,
        "All jobs matching constraint ((ProcId == 1) && (ClusterId == 2)) have been marked for removal\n",
        "",
    );
    assert_eq!(queue(&env), ["2.0 1", "3.0 1", "4.0 1"]);
    outcome(
        &env.run("tern_rm", ["3", "2"]),
        0,
        "All jobs matching constraint (ClusterId == 3 || ClusterId == 2) have been marked for removal\n",
        "",
    );
    outcome(
        &env.run("tern_rm", [me.as_str()]),
        0,
        "All jobs of user \"$USER\" have been marked for removal\n",
        "",
    );
    assert!(queue(&env).is_empty());
    submit(&env, 2, false);
    outcome(
        &env.run("tern_rm", ["-all"]),
        0,
        "All jobs have been marked for removal\n",
        "",
    );
    assert!(queue(&env).is_empty());
    // Nothing left: HTCondor says so, and it is no error.
    outcome(
        &env.run("tern_rm", ["-all"]),
        0,
        "",
        "tern_rm:0:There are no jobs in the queue\n",
    );
}

#[test]
fn a_constraint_that_matches_nothing_fails() {
    let env = TestEnv::with_spool();
    submit(&env, 1, false);
    outcome(
        &env.run("tern_rm", ["-constraint", "ProcId > 5"]),
        1,
        "",
        "Couldn't find/remove all jobs matching constraint (ProcId > 5)\n",
    );
    outcome(
        &env.run("tern_rm", ["nobody"]),
        1,
        "",
        "Couldn't find/remove all jobs of user \"nobody\"\n",
    );
    outcome(
        &env.run("tern_release", ["1"]),
        1,
        "",
        "Couldn't find/release all jobs in cluster 1\n",
    );
    assert_eq!(queue(&env), ["1.0 1"]);
}

#[test]
fn a_running_job_is_marked_removed_and_stays_for_its_shadow() {
    let env = TestEnv::with_spool();
    submit(&env, 2, false);
    set_status(&env, 1, 0, 2);
    outcome(
        &env.run("tern_rm", ["1"]),
        0,
        "All jobs in cluster 1 have been marked for removal\n",
        "",
    );
    assert_eq!(queue(&env), ["1.0 3"]);
    assert_eq!(
        attrs(
            &ad(&env, 1, 0),
            &["JobStatus", "RemoveReason", "EnteredCurrentStatus"]
        ),
        "JobStatus=3 RemoveReason=\"via tern_rm (by user $USER)\" EnteredCurrentStatus=1700000000"
    );
    outcome(
        &env.run("tern_rm", ["1.0"]),
        1,
        "",
        "Job 1.0 already marked for removal\n",
    );
    // A constraint does not match jobs already removed.
    outcome(
        &env.run("tern_rm", ["1"]),
        1,
        "",
        "Couldn't find/remove all jobs in cluster 1\n",
    );
    // -forcex takes it out without waiting for the shadow.
    outcome(
        &env.run("tern_rm", ["-forcex", "1.0"]),
        0,
        "Job 1.0 removed locally (remote state unknown)\n",
        "",
    );
    assert!(queue(&env).is_empty());
    assert_eq!(
        history(&env),
        "1 1 3 via tern_rm (by user $USER)\n1 0 3 via tern_rm -forcex (by user $USER)\n"
    );
}

#[test]
fn forcex_refuses_jobs_that_are_not_removed() {
    let env = TestEnv::with_spool();
    submit(&env, 1, false);
    outcome(
        &env.run("tern_rm", ["-forcex", "1.0"]),
        1,
        "",
        "Job 1.0 not in `X' state to be forcibly removed\n",
    );
    outcome(
        &env.run("tern_rm", ["-forcex", "1"]),
        1,
        "",
        "Couldn't find/remove all jobs in cluster 1\n",
    );
    assert_eq!(queue(&env), ["1.0 1"]);
}

#[test]
fn other_users_jobs_are_refused() {
    let env = TestEnv::with_spool();
    submit(&env, 2, false);
    set_owner(&env, 1, 0, OTHER);
    set_owner(&env, 1, 1, OTHER);
    outcome(
        &env.run("tern_rm", ["1.0"]),
        1,
        "",
        "Permission denied to remove job 1.0\n",
    );
    outcome(
        &env.run("tern_hold", ["1.0"]),
        1,
        "",
        "Permission denied to hold job 1.0\n",
    );
    outcome(
        &env.run("tern_rm", ["1"]),
        1,
        "",
        "Couldn't find/remove all jobs in cluster 1\n",
    );
    outcome(
        &env.run("tern_rm", ["-totals", OTHER]),
        1,
        "0 Succeeded, 0 Failed, 0 Not Found, 0 Bad Status, 0 Already Done, 2 Permission Denied\n",
        &format!("Couldn't find/remove all jobs of user \"{OTHER}\"\n"),
    );
    assert_eq!(queue(&env), ["1.0 1", "1.1 1"]);
}

#[test]
fn all_means_all_of_your_own_jobs() {
    let env = TestEnv::with_spool();
    submit(&env, 1, false);
    submit(&env, 1, false);
    set_owner(&env, 1, 0, OTHER);
    outcome(
        &env.run("tern_hold", ["-all", "-totals"]),
        0,
        "1 Succeeded, 0 Failed, 0 Not Found, 0 Bad Status, 0 Already Done, 1 Permission Denied\nAll jobs have been held\n",
        "",
    );
    assert_eq!(queue(&env), ["1.0 1", "2.0 5"]);
}

#[test]
fn queue_super_users_may_change_anyones_jobs() {
    let env = TestEnv::with_spool();
    let me = real_user();
    submit(&env, 2, false);
    set_owner(&env, 1, 0, OTHER);
    set_owner(&env, 1, 1, OTHER);
    let env = env.var("_TERN_QUEUE_SUPER_USERS", Some(&format!("root, {me}")));
    outcome(&env.run("tern_hold", ["1.0"]), 0, "Job 1.0 held\n", "");
    outcome(
        &env.run("tern_qedit", ["1", "Note", "\"checked\""]),
        0,
        "Set attribute \"Note\".\n",
        "",
    );
    outcome(
        &env.run("tern_rm", [OTHER]),
        0,
        &format!("All jobs of user \"{OTHER}\" have been marked for removal\n"),
        "",
    );
    // The reason names who did it, not whose job it was.
    assert_eq!(
        history(&env),
        "1 1 3 via tern_rm (by user $USER)\n1 0 3 via tern_rm (by user $USER)\n"
    );
}

#[test]
fn selections_are_checked_before_anything_happens() {
    let env = TestEnv::with_spool();
    submit(&env, 1, false);
    outcome(
        &env.run("tern_rm", Vec::<&str>::new()),
        2,
        "",
        "tern_rm: error: you did not specify any jobs\nhint: give a cluster, cluster.proc or user, -constraint EXPR or -all; 'tern_rm -help' says more\n",
    );
    outcome(
        &env.run("tern_hold", ["-all", "1"]),
        2,
        "",
        "tern_hold: error: can't mix -all with other constraints\nhint: give -all alone, or name the jobs instead\n",
    );
    let r = env.run("tern_rm", ["-constraint", "JobStatus ==", "1"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .starts_with("tern_rm: error: constraint 'JobStatus ==': column "),
        "{r:?}"
    );
    outcome(
        &env.run("tern_rm", ["0"]),
        1,
        "",
        "Invalid cluster # from 0.\n",
    );
    let r = env.run("tern_rm", ["-bogus"]);
    assert_eq!((r.code, r.stdout.as_str()), (2, ""), "{r:?}");
    assert_eq!(queue(&env), ["1.0 1"]);
}

#[test]
fn without_a_queue_nothing_is_found_and_nothing_is_created() {
    let env = TestEnv::with_spool();
    outcome(
        &env.run("tern_rm", ["1"]),
        0,
        "",
        "tern_rm:0:There are no jobs in the queue\n",
    );
    outcome(&env.run("tern_hold", ["1.0"]), 1, "", "Job 1.0 not found\n");
    outcome(
        &env.run("tern_qedit", ["1.0", "A", "1"]),
        1,
        "",
        "Failed to set attribute \"A\" for job 1.0.\nTransaction failed.  No attributes were set.\n",
    );
    assert!(!env.path("spool").exists());
}

#[test]
fn hold_sets_the_reason_codes_and_stops_nothing_yet() {
    let env = TestEnv::with_spool();
    submit(&env, 3, false);
    set_status(&env, 1, 2, 2);
    outcome(
        &env.run(
            "tern_hold",
            ["-reason", "disk full", "-subcode", "7", "1.0"],
        ),
        0,
        "Job 1.0 held\n",
        "",
    );
    assert_eq!(
        attrs(
            &ad(&env, 1, 0),
            &[
                "JobStatus",
                "HoldReason",
                "HoldReasonCode",
                "HoldReasonSubCode"
            ]
        ),
        "JobStatus=5 HoldReason=\"disk full (by user $USER)\" HoldReasonCode=1 HoldReasonSubCode=7"
    );
    outcome(
        &env.run("tern_hold", ["1.0"]),
        1,
        "",
        "Job 1.0 already held\n",
    );
    // A cluster holds the rest, running or not; the shadow stops a running one.
    outcome(
        &env.run("tern_hold", ["-totals", "1"]),
        0,
        "2 Succeeded, 0 Failed, 0 Not Found, 0 Bad Status, 0 Already Done, 0 Permission Denied\nAll jobs in cluster 1 have been held\n",
        "",
    );
    assert_eq!(queue(&env), ["1.0 5", "1.1 5", "1.2 5"]);
    assert_eq!(
        attrs(&ad(&env, 1, 2), &["HoldReason", "HoldReasonSubCode"]),
        "HoldReason=\"via tern_hold (by user $USER)\" HoldReasonSubCode=0"
    );
}

#[test]
fn release_makes_held_jobs_idle_and_keeps_the_last_hold_reason() {
    let env = TestEnv::with_spool();
    submit(&env, 2, false);
    outcome(
        &env.run("tern_release", ["1.0"]),
        1,
        "",
        "Job 1.0 not held to be released\n",
    );
    env.run("tern_hold", ["-subcode", "3", "1.0"]);
    outcome(
        &env.run("tern_release", ["-reason", "fixed", "1.0", "1.1"]),
        0,
        "Job 1.0 released\n",
        "Job 1.1 not held to be released\n",
    );
    assert_eq!(queue(&env), ["1.0 1", "1.1 1"]);
    assert_eq!(
        attrs(
            &ad(&env, 1, 0),
            &[
                "ReleaseReason",
                "LastHoldReason",
                "LastHoldReasonCode",
                "LastHoldReasonSubCode"
            ]
        ),
        "ReleaseReason=\"fixed (by user $USER)\" LastHoldReason=\"via tern_hold (by user $USER)\" LastHoldReasonCode=1 LastHoldReasonSubCode=3"
    );
    // The hold reason is gone.
    assert_eq!(attr(&ad(&env, 1, 0), "HoldReason"), "-");
    // Held again, the release reason moves on.
    env.run("tern_hold", ["1.0"]);
    assert_eq!(
        attrs(&ad(&env, 1, 0), &["LastReleaseReason"]),
        "LastReleaseReason=\"fixed (by user $USER)\""
    );
}

#[test]
fn removed_and_completed_jobs_cannot_be_held() {
    // The schedd answers "permission denied" by id, and a cluster or
    // constraint does not match them at all.
    let env = TestEnv::with_spool();
    submit(&env, 2, false);
    set_status(&env, 1, 0, 3);
    set_status(&env, 1, 1, 4);
    outcome(
        &env.run("tern_hold", ["1.0"]),
        1,
        "",
        "Permission denied to hold job 1.0\n",
    );
    outcome(
        &env.run("tern_hold", ["1.1"]),
        1,
        "",
        "Permission denied to hold job 1.1\n",
    );
    outcome(
        &env.run("tern_hold", ["1"]),
        1,
        "",
        "Couldn't find/hold all jobs in cluster 1\n",
    );
    assert_eq!(queue(&env), ["1.0 3", "1.1 4"]);
    assert_eq!(attr(&ad(&env, 1, 0), "HoldReason"), "-");
}

#[test]
fn a_job_held_on_its_way_out_leaves_when_released() {
    // A system hold of a removed job sets JobStatusOnRelease = 3; here
    // the attribute is set by hand on a held job.
    let env = TestEnv::with_spool();
    submit(&env, 1, false);
    outcome(&env.run("tern_hold", ["1.0"]), 0, "Job 1.0 held\n", "");
    outcome(
        &env.run("tern_qedit", ["1.0", "JobStatusOnRelease", "3"]),
        0,
        "Set attribute \"JobStatusOnRelease\".\n",
        "",
    );
    outcome(
        &env.run("tern_release", ["1.0"]),
        0,
        "Job 1.0 released\n",
        "",
    );
    assert!(queue(&env).is_empty());
    let r = env
        .run(
            "tern_history",
            ["-af", "JobStatus", "ReleaseReason", "JobStatusOnRelease"],
        )
        .normalized(&env);
    assert_eq!(r.stdout, "3 via tern_release (by user $USER) undefined\n");
}

#[test]
fn forcex_takes_a_held_job_only_if_its_release_would_remove_it() {
    let env = TestEnv::with_spool();
    submit(&env, 2, false);
    outcome(
        &env.run("tern_hold", ["1"]),
        0,
        "All jobs in cluster 1 have been held\n",
        "",
    );
    outcome(
        &env.run("tern_qedit", ["1.0", "JobStatusOnRelease", "3"]),
        0,
        "Set attribute \"JobStatusOnRelease\".\n",
        "",
    );
    outcome(
        &env.run("tern_rm", ["-forcex", "1.1"]),
        1,
        "",
        "Job 1.1 not in `X' state to be forcibly removed\n",
    );
    outcome(
        &env.run("tern_rm", ["-forcex", "1.0"]),
        0,
        "Job 1.0 removed locally (remote state unknown)\n",
        "",
    );
    assert_eq!(queue(&env), ["1.1 5"]);
    let r = env
        .run(
            "tern_history",
            ["-af", "ProcId", "JobStatus", "LeaveJobInQueue"],
        )
        .normalized(&env);
    assert_eq!(r.stdout, "0 3 false\n");
}

#[test]
fn actions_are_written_to_the_job_event_log() {
    let env = TestEnv::with_spool();
    submit(&env, 2, true);
    set_status(&env, 1, 1, 2);
    env.run("tern_hold", ["-reason", "wait", "1"]);
    env.run("tern_release", ["1.0"]);
    env.run("tern_rm", ["1"]);
    let log = user_normalized(&std::fs::read_to_string(env.path("jobs.log")).unwrap());
    let events: Vec<&str> = log
        .lines()
        .filter(|l| !l.starts_with("000") && !l.starts_with("..."))
        .collect();
    // The running job's hold event is left to its shadow, once the job is
    // down (none runs here); the removal, which finds that stop pending,
    // writes it before its abort.
    assert_eq!(
        events,
        [
            "012 (001.000.000) 2023-11-14 22:13:20 Job was held.",
            "\twait (by user $USER)",
            "\tCode 1 Subcode 0",
            "013 (001.000.000) 2023-11-14 22:13:20 Job was released.",
            "\tvia tern_release (by user $USER)",
            "009 (001.000.000) 2023-11-14 22:13:20 Job was aborted.",
            "\tvia tern_rm (by user $USER)",
            "012 (001.001.000) 2023-11-14 22:13:20 Job was held.",
            "\twait (by user $USER)",
            "\tCode 1 Subcode 0",
            // Held, it is no longer running, so it leaves at once.
            "009 (001.001.000) 2023-11-14 22:13:20 Job was aborted.",
            "\tvia tern_rm (by user $USER)",
        ]
    );
}

#[test]
fn qedit_sets_pairs_and_assignments() {
    let env = TestEnv::with_spool();
    submit(&env, 2, false);
    outcome(
        &env.run(
            "tern_qedit",
            [
                "1.0",
                "RequestMemory",
                "2048",
                "Note=\"a b\"",
                "Twice = RequestMemory * 2",
                "JobPrio",
                "-5",
            ],
        ),
        0,
        "Set attribute \"RequestMemory\".\nSet attribute \"Note\".\nSet attribute \"Twice\".\nSet attribute \"JobPrio\".\n",
        "",
    );
    let a = ad(&env, 1, 0);
    assert_eq!(
        attrs(&a, &["RequestMemory", "Note", "Twice", "JobPrio"]),
        "RequestMemory=2048 Note=\"a b\" Twice=RequestMemory * 2 JobPrio=-5"
    );
    assert_eq!(attr(&ad(&env, 1, 1), "Note"), "-");
    let prio: i64 = db(&env)
        .query_row(
            "SELECT prio FROM procs WHERE cluster = 1 AND proc = 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(prio, -5);
}

#[test]
fn qedit_by_cluster_user_and_constraint() {
    let env = TestEnv::with_spool();
    let me = real_user();
    submit(&env, 2, false);
    submit(&env, 1, false);
    outcome(
        &env.run("tern_qedit", ["1", "A", "1"]),
        0,
        "Set attribute \"A\".\n",
        "",
    );
    outcome(
        &env.run("tern_qedit", [me.as_str(), "B=2"]),
        0,
        "Set attribute \"B\".\n",
        "",
    );
    outcome(
        &env.run("tern_qedit", ["-constraint", "ProcId == 1", "C", "3"]),
        0,
        "Set attribute \"C\".\n",
        "",
    );
    outcome(
        &env.run("tern_qedit", ["2", "-constraint", "ProcId == 1", "D", "4"]),
        1,
        "",
        "Failed to set attribute \"D\" by constraint: ( (ClusterId == 2) ) && ProcId == 1\nTransaction failed.  No attributes were set.\n",
    );
    outcome(
        &env.run("tern_qedit", ["2.0", "-constraint", "false", "E", "5"]),
        0,
        "Set attribute \"E\".\n",
        "tern_qedit: proc_id specified. Ignoring constraint option\n",
    );
    let show = |c, p| attrs(&ad(&env, c, p), &["A", "B", "C", "D", "E"]);
    assert_eq!(show(1, 0), "A=1 B=2 C=- D=- E=-");
    assert_eq!(show(1, 1), "A=1 B=2 C=3 D=- E=-");
    assert_eq!(show(2, 0), "A=- B=2 C=- D=- E=5");
}

#[test]
fn qedit_refuses_the_attributes_the_queue_owns() {
    let env = TestEnv::with_spool();
    submit(&env, 1, false);
    for (name, class) in [
        ("JobStatus", "immutable"),
        ("jobstatus", "immutable"),
        ("ClusterId", "immutable"),
        ("ProcId", "immutable"),
        ("Owner", "immutable"),
        ("User", "immutable"),
        ("JobUniverse", "immutable"),
        ("OwnerUid", "immutable"),
        ("QDate", "secure"),
        ("EnteredCurrentStatus", "secure"),
    ] {
        outcome(
            &env.run("tern_qedit", ["1.0", "A", "1", name, "2"]),
            1,
            "",
            &format!(
                "Update of {class} attribute \"{name}\" is not allowed.\nTransaction failed.  No attributes were set.\n"
            ),
        );
    }
    outcome(
        &env.run("tern_qedit", ["1.0", "Owner=\"me\""]),
        1,
        "",
        "Update of immutable attribute \"Owner\" is not allowed.\nTransaction failed.  No attributes were set.\n",
    );
    assert_eq!(attr(&ad(&env, 1, 0), "A"), "-");
}

#[test]
fn qedit_checks_every_name_and_value_before_changing_anything() {
    let env = TestEnv::with_spool();
    submit(&env, 1, false);
    outcome(
        &env.run("tern_qedit", ["1.0", "A", "1", "B-C", "2"]),
        1,
        "",
        "Update aborted, illegal attribute-name specified for attribute \"B-C\".\nTransaction failed.  No attributes were set.\n",
    );
    outcome(
        &env.run("tern_qedit", ["1.0", "A", "1", "B", "x +"]),
        1,
        "",
        "Update aborted, illegal attribute-value specified for attribute \"B\".\nTransaction failed.  No attributes were set.\n",
    );
    outcome(
        &env.run("tern_qedit", ["1.0", "A", ""]),
        1,
        "",
        "Update aborted, illegal attribute-value specified for attribute \"A\".\nTransaction failed.  No attributes were set.\n",
    );
    let r = env.run("tern_qedit", ["1.0", "A"]);
    assert_eq!((r.code, r.stdout.as_str()), (2, ""), "{r:?}");
    assert!(
        r.stderr
            .starts_with("tern_qedit: error: attribute 'A' has no value\n"),
        "{r:?}"
    );
    let r = env.run("tern_qedit", Vec::<&str>::new());
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(attr(&ad(&env, 1, 0), "A"), "-");
}

#[test]
fn qedit_changes_only_jobs_the_user_may_change() {
    let env = TestEnv::with_spool();
    let me = real_user();
    submit(&env, 2, false);
    set_owner(&env, 1, 0, OTHER);
    outcome(
        &env.run("tern_qedit", ["1.0", "A", "1"]),
        1,
        "",
        "Failed to set attribute \"A\" for job 1.0.\nTransaction failed.  No attributes were set.\n",
    );
    outcome(
        &env.run("tern_qedit", [OTHER, "A", "1"]),
        1,
        "",
        &format!(
            "Failed to set attribute \"A\" by constraint: (Owner == \"{OTHER}\")\nTransaction failed.  No attributes were set.\n"
        ),
    );
    // A cluster with jobs of both: only the user's own change.
    outcome(
        &env.run("tern_qedit", ["1", "A", "1"]),
        0,
        "Set attribute \"A\".\n",
        "",
    );
    assert_eq!(attr(&ad(&env, 1, 0), "A"), "-");
    assert_eq!(attr(&ad(&env, 1, 1), "A"), "1");
    let env = env.var("_TERN_QUEUE_SUPER_USERS", Some(&me));
    outcome(
        &env.run("tern_qedit", ["1.0", "A", "2"]),
        0,
        "Set attribute \"A\".\n",
        "",
    );
    assert_eq!(attr(&ad(&env, 1, 0), "A"), "2");
}

#[test]
fn every_option_is_on_the_tools_page() {
    use clap::CommandFactory;
    check_page("tern_rm", tern::cli::rm::Args::command());
    check_page("tern_hold", tern::cli::hold::Args::command());
    check_page("tern_release", tern::cli::release::Args::command());
    check_page("tern_qedit", tern::cli::qedit::Args::command());
}
