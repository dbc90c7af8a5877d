//! `tern_history`: jobs removed with `tern_rm` (and one completed, as the
//! shadow will complete jobs) read back in every output form.

use crate::common::man::check_page;
use crate::common::queue::{db, submit_sleeps as submit};
use crate::common::{NOW, Run, TestEnv, real_user, user_normalized};

/// Runs `tool` with the clock at `now`.
fn run_at(env: &TestEnv, now: i64, tool: &str, args: &[&str]) -> Run {
    let out = env
        .command(tool)
        .env("TERN_NOW", now.to_string())
        .args(args)
        .output()
        .expect("running the tool");
    Run::from(out)
}

/// Three clusters: 1.0 and 1.1 removed an hour apart, 2.0 completed (by
/// hand, as a shadow would) in between, 3.0 still queued.
fn populated() -> TestEnv {
    let env = TestEnv::with_spool();
    submit(&env, 2, false);
    submit(&env, 1, false);
    submit(&env, 1, false);
    assert_eq!(run_at(&env, NOW + 60, "tern_rm", &["1.0"]).code, 0);
    assert_eq!(run_at(&env, NOW + 3600, "tern_rm", &["2.0"]).code, 0);
    assert_eq!(run_at(&env, NOW + 7200, "tern_rm", &["1.1"]).code, 0);
    // 2.0 completed after running for 1h 2m 5s.
    db(&env)
        .execute(
            "UPDATE history SET status = 4, ad = replace(replace(ad, 'JobStatus = 3', 'JobStatus = 4'), '[ ', \
             '[ CompletionDate = 1700003600; RemoteWallClockTime = 3725.0; ExitCode = 0; ') \
             WHERE cluster = 2",
            [],
        )
        .unwrap();
    env
}

/// Asserts success with exactly `stdout` (the real user written `$USER`)
/// and nothing on stderr.
#[track_caller]
fn ok(r: &Run, stdout: &str) {
    assert_eq!(
        (
            r.code,
            user_normalized(&r.stdout).as_str(),
            r.stderr.as_str()
        ),
        (0, stdout, ""),
        "unexpected outcome"
    );
}

const HEADING: &str = " ID      OWNER            SUBMITTED   RUN_TIME   ST   COMPLETED CMD\n";

#[test]
fn no_queue_means_no_history_and_nothing_is_created() {
    let env = TestEnv::with_spool();
    ok(&env.run("tern_history", Vec::<&str>::new()), HEADING);
    ok(&env.run("tern_history", ["-af", "Owner"]), "");
    ok(&env.run("tern_history", ["-long"]), "");
    assert!(!env.path("spool").exists());
}

#[test]
fn the_summary_lists_the_newest_first() {
    let env = populated();
    ok(
        &env.run("tern_history", Vec::<&str>::new()),
        "\
\x20ID      OWNER            SUBMITTED   RUN_TIME   ST   COMPLETED CMD
   1.1   $USER          11/14 22:13   0+00:00:00 X              sleep 100
   2.0   $USER          11/14 22:13   0+01:02:05 C  11/14 23:13 sleep 100
   1.0   $USER          11/14 22:13   0+00:00:00 X              sleep 100
",
    );
    ok(
        &env.run("tern_history", ["-forwards"]),
        "\
\x20ID      OWNER            SUBMITTED   RUN_TIME   ST   COMPLETED CMD
   1.0   $USER          11/14 22:13   0+00:00:00 X              sleep 100
   2.0   $USER          11/14 22:13   0+01:02:05 C  11/14 23:13 sleep 100
   1.1   $USER          11/14 22:13   0+00:00:00 X              sleep 100
",
    );
    ok(
        &env.run("tern_history", ["-limit", "2"]),
        "\
\x20ID      OWNER            SUBMITTED   RUN_TIME   ST   COMPLETED CMD
   1.1   $USER          11/14 22:13   0+00:00:00 X              sleep 100
   2.0   $USER          11/14 22:13   0+01:02:05 C  11/14 23:13 sleep 100
",
    );
    ok(
        &env.run("tern_history", ["-match", "1", "-forwards"]),
        "\
\x20ID      OWNER            SUBMITTED   RUN_TIME   ST   COMPLETED CMD
   1.0   $USER          11/14 22:13   0+00:00:00 X              sleep 100
",
    );
}

#[test]
fn ids_users_and_constraints_choose_jobs() {
    let env = populated();
    let me = real_user();
    let ids = |args: &[&str]| {
        let mut a = args.to_vec();
        a.extend(["-af:j", "JobStatus"]);
        let r = env.run("tern_history", &a);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
        r.stdout
    };
    assert_eq!(ids(&["1"]), "1.1 3\n1.0 3\n");
    assert_eq!(ids(&["1.0", "2"]), "2.0 4\n1.0 3\n");
    assert_eq!(ids(&[me.as_str()]), "1.1 3\n2.0 4\n1.0 3\n");
    assert_eq!(ids(&["nobody"]), "");
    assert_eq!(ids(&["-constraint", "JobStatus == 4"]), "2.0 4\n");
    assert_eq!(
        ids(&[
            "1",
            "2",
            "-constraint",
            "ProcId == 0",
            "-const",
            "JobStatus == 3"
        ]),
        "1.0 3\n"
    );
    // Jobs still in the queue have no history.
    assert_eq!(ids(&["3"]), "");
}

#[test]
fn long_and_json_print_whole_ads_or_the_attributes_asked_for() {
    let env = populated();
    ok(
        &env.run(
            "tern_history",
            [
                "-long",
                "-attributes",
                "ClusterId,ProcId",
                "-attributes",
                "Owner JobStatus",
                "1",
            ],
        ),
        "\
ClusterId = 1
JobStatus = 3
Owner = \"$USER\"
ProcId = 1

ClusterId = 1
JobStatus = 3
Owner = \"$USER\"
ProcId = 0

",
    );
    let r = env.run("tern_history", ["-l", "2.0"]).normalized(&env);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.ends_with("\n\n"), "{r:?}");
    assert_eq!(r.stdout.matches("\n\n").count(), 1, "{r:?}");
    for line in [
        "ClusterId = 2\n",
        "CompletionDate = 1700003600\n",
        "JobStatus = 4\n",
        "RemoveReason = \"via tern_rm (by user $USER)\"\n",
        "RemoteWallClockTime = 3725.0\n",
    ] {
        assert!(r.stdout.contains(line), "{line:?} missing from {r:?}");
    }
    ok(
        &env.run(
            "tern_history",
            ["-json", "-attributes", "ClusterId,ProcId", "1"],
        ),
        "[\n{\n  \"ClusterId\": 1,\n  \"ProcId\": 1\n},\n{\n  \"ClusterId\": 1,\n  \"ProcId\": 0\n}\n]\n",
    );
}

#[test]
fn autoformat_and_format() {
    let env = populated();
    ok(
        &env.run(
            "tern_history",
            ["2", "-af", "ProcId", "Owner", "RemoteWallClockTime / 60"],
        ),
        "0 $USER 62.08333333333334\n",
    );
    ok(
        &env.run("tern_history", ["2", "-af:jV", "Owner"]),
        "2.0 \"$USER\"\n",
    );
    ok(
        &env.run(
            "tern_history",
            ["2", "-af:lr", "ExitCode", "JobStatus == 4"],
        ),
        "ExitCode = 0 JobStatus == 4 = JobStatus == 4\n",
    );
    ok(
        &env.run(
            "tern_history",
            ["1", "-autoformat:h,", "ProcId", "JobStatus"],
        ),
        "ProcId, JobStatus\n1     , 3\n0     , 3\n",
    );
    ok(
        &env.run(
            "tern_history",
            [
                "-format",
                "%d.",
                "ClusterId",
                "-format",
                "%d\\n",
                "ProcId",
                "2",
            ],
        ),
        "2.0\n",
    );
    ok(
        &env.run(
            "tern_history",
            [
                "-format",
                "%d:",
                "ClusterId",
                "-format",
                "%T",
                "RemoteWallClockTime",
                "-format",
                "\\n",
                "ClusterId",
                "2",
                "1.0",
            ],
        ),
        "2:  0+01:02:05\n1:  0+00:00:00\n",
    );
}

#[test]
fn bad_arguments_are_refused() {
    let env = populated();
    let r = env.run("tern_history", ["-constraint", "JobStatus =="]);
    assert_eq!((r.code, r.stdout.as_str()), (1, ""), "{r:?}");
    assert!(
        r.stderr
            .starts_with("tern_history: error: constraint 'JobStatus ==': column "),
        "{r:?}"
    );
    let r = env.run("tern_history", ["-limit", "many"]);
    assert_eq!((r.code, r.stdout.as_str()), (2, ""), "{r:?}");
    let r = env.run("tern_history", ["-af", "x +"]);
    assert_eq!((r.code, r.stdout.as_str()), (2, ""), "{r:?}");
    let r = env.run("tern_history", ["a/b"]);
    assert_eq!((r.code, r.stdout.as_str()), (2, ""), "{r:?}");
}

#[test]
fn every_option_is_on_the_page() {
    use clap::CommandFactory;
    check_page("tern_history", tern::cli::history::Args::command());
}

// condor_history's CMD column (render_job_description, as condor_q's) is
// the executable's base name and Arguments exactly as stored, in
// HTCondor's canonical new syntax where only blanks inside a word are
// quoted; and -af:r of a name the job lacks is `undefined`, as condor_q
// (it printed the name).
#[test]
fn cmd_column_prints_new_syntax_arguments_as_condor_history() {
    let env = TestEnv::with_spool();
    env.write(
        "sh.sub",
        "executable = /bin/sh\narguments = \"-c 'export PATH=/usr/bin; echo hi'\"\n+Foo = Bar\nhold = true\nqueue\n",
    );
    assert_eq!(env.run("tern_submit", ["sh.sub"]).code, 0);
    assert_eq!(run_at(&env, NOW + 60, "tern_rm", &["1.0"]).code, 0);
    let r = env.run("tern_history", Vec::<&str>::new());
    assert!(
        r.stdout
            .ends_with(" sh -c export' 'PATH=/usr/bin;' 'echo' 'hi\n"),
        "{r:?}"
    );
    ok(
        &env.run("tern_history", ["-af:r", "Foo", "Missing", "Missing + 1"]),
        "Bar undefined Missing + 1\n",
    );
}
