//! `tern_q`, run as a user runs it over queues made by the real
//! `tern_submit`, compared output for output. Jobs of other users, running
//! jobs and jobs that left the queue are made through the queue library,
//! as the tools that own those changes would make them.
//!
//! Expected screens are literal text, normalized ([`Run::normalized`]):
//! the SPOOL is `$SPOOL` and the user running the tests `$USER`. The batch
//! view sizes its OWNER column to the longest owner shown, so its screens
//! show jobs of a pinned owner (`bob`, submitted through the library) and
//! name that owner; the per-job views' OWNER column is 14 wide whoever
//! runs them.

use std::path::PathBuf;

use tern::classad::Expr;
use tern::queue::Change;

use crate::common::{NOW, Run, TestEnv, queue};

/// A test directory with a SPOOL in it, the clock pinned at [`NOW`]
/// (2023-11-14 22:13:20 UTC), UTC as the local zone, no configuration
/// file, and `testhost` as the host name.
struct Q {
    env: TestEnv,
}

impl Q {
    fn new() -> Q {
        let env = TestEnv::with_spool().var("_TERN_FULL_HOSTNAME", Some("testhost"));
        // A tiny program, so that SIZE (its ImageSize) is the same anywhere.
        env.write_program("prog");
        Q { env }
    }

    fn spool(&self) -> PathBuf {
        self.env.spool()
    }

    /// Submits `body` (with `executable = prog` in front) with tern_submit.
    fn submit(&self, body: &str) {
        self.env
            .write("job.sub", &format!("executable = prog\n{body}"));
        let r = self.env.run("tern_submit", ["job.sub"]);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    }

    /// tern_q's output, normalized.
    fn q(&self, args: &[&str]) -> Run {
        self.env.run("tern_q", args).normalized(&self.env)
    }

    /// Submits `body` as `owner`, through the queue library.
    fn submit_as(&self, owner: &str, body: &str) -> i64 {
        queue::submit_as(&self.env, owner, &format!("executable = prog\n{body}"))
    }

    /// Applies `change` to one job, as of `now`.
    fn change(&self, cluster: i64, proc: i64, now: i64, change: Change) {
        queue::change(&self.env, cluster, proc, now, change);
    }

    /// Makes a job run since `since` on slot1@testhost.
    fn start(&self, cluster: i64, proc: i64, since: i64) {
        queue::start(&self.env, cluster, proc, since);
    }
}

/// The title condor_q prints, after two blank lines, at NOW.
macro_rules! title {
    () => {
        "\n\n-- Schedd: $USER@testhost : <$SPOOL> @ 11/14/23 22:13:20\n"
    };
}

// --- the empty queue ------------------------------------------------------

#[test]
fn an_absent_spool_shows_the_empty_view_and_is_not_created() {
    let q = Q::new();
    const TOTALS: &str = "\
Total for query: 0 jobs; 0 completed, 0 removed, 0 idle, 0 running, 0 held, 0 suspended \n\
Total for $USER: 0 jobs; 0 completed, 0 removed, 0 idle, 0 running, 0 held, 0 suspended \n\
Total for all users: 0 jobs; 0 completed, 0 removed, 0 idle, 0 running, 0 held, 0 suspended

";
    q.q(&[]).ok(&[
        title!(),
        "OWNER BATCH_NAME      SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS\n\n",
        TOTALS,
    ]
    .concat());
    q.q(&["-nobatch"]).ok(&[
        title!(),
        " ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD\n\n",
        TOTALS,
    ]
    .concat());
    q.q(&["-totals"]).ok(&[title!(), TOTALS].concat());
    q.q(&["-af", "ClusterId"]).ok("");
    q.q(&["-long"]).ok("");
    q.q(&["-json"]).ok("");
    assert!(!q.spool().exists(), "tern_q created the SPOOL");
}

// --- the batch view ----------------------------------------------------------

#[test]
fn one_cluster_is_one_batch_line() {
    let q = Q::new();
    q.submit_as("bob", "queue 3\n");
    q.q(&["bob"]).ok(concat!(
        title!(),
        "\
OWNER    BATCH_NAME    SUBMITTED   DONE   RUN    IDLE  TOTAL JOB_IDS
bob      ID: 1       11/14 22:13      _      _      3      3 1.0-2

Total for query: 3 jobs; 0 completed, 0 removed, 3 idle, 0 running, 0 held, 0 suspended \n\
Total for $USER: 0 jobs; 0 completed, 0 removed, 0 idle, 0 running, 0 held, 0 suspended \n\
Total for all users: 3 jobs; 0 completed, 0 removed, 3 idle, 0 running, 0 held, 0 suspended

"
    ));
}

#[test]
fn clusters_sharing_a_batch_name_are_one_line_and_held_jobs_add_the_hold_column() {
    let q = Q::new();
    q.submit_as("bob", "queue 1\n");
    q.submit_as("bob", "batch_name = sweep\nqueue 2\n");
    q.submit_as("bob", "batch_name = sweep\nqueue 2\n");
    q.submit_as("bob", "hold = true\nqueue 1\n");
    q.q(&["bob"]).ok(concat!(
        title!(),
        "\
OWNER    BATCH_NAME    SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS
bob      ID: 1       11/14 22:13      _      _      1      _      1 1.0
bob      sweep       11/14 22:13      _      _      4      _      4 2.0 ... 3.1
bob      ID: 4       11/14 22:13      _      _      _      1      1 4.0

Total for query: 6 jobs; 0 completed, 0 removed, 5 idle, 0 running, 1 held, 0 suspended \n\
Total for $USER: 0 jobs; 0 completed, 0 removed, 0 idle, 0 running, 0 held, 0 suspended \n\
Total for all users: 6 jobs; 0 completed, 0 removed, 5 idle, 0 running, 1 held, 0 suspended

"
    ));
}

#[test]
fn running_and_departed_jobs_fill_the_run_and_done_columns() {
    let q = Q::new();
    q.submit_as("bob", "queue 4\n");
    q.start(1, 1, NOW - 100);
    q.change(
        1,
        0,
        NOW - 50,
        Change::Leave {
            set: vec![("JobStatus".into(), Expr::int(4))],
        },
    );
    q.q(&["bob"]).ok(concat!(
        title!(),
        "\
OWNER    BATCH_NAME    SUBMITTED   DONE   RUN    IDLE  TOTAL JOB_IDS
bob      ID: 1       11/14 22:13      1      1      2      4 1.1-3

Total for query: 3 jobs; 0 completed, 0 removed, 2 idle, 1 running, 0 held, 0 suspended \n\
Total for $USER: 0 jobs; 0 completed, 0 removed, 0 idle, 0 running, 0 held, 0 suspended \n\
Total for all users: 3 jobs; 0 completed, 0 removed, 2 idle, 1 running, 0 held, 0 suspended

"
    ));
    // A query for some jobs of a cluster cannot tell how many are done.
    q.q(&["1.1"]).ok(concat!(
        title!(),
        "\
OWNER    BATCH_NAME    SUBMITTED   DONE   RUN    IDLE  TOTAL JOB_IDS
bob      ID: 1       11/14 22:13      _      1      _      4 1.1

Total for query: 1 jobs; 0 completed, 0 removed, 0 idle, 1 running, 0 held, 0 suspended \n\
Total for $USER: 0 jobs; 0 completed, 0 removed, 0 idle, 0 running, 0 held, 0 suspended \n\
Total for all users: 3 jobs; 0 completed, 0 removed, 2 idle, 1 running, 0 held, 0 suspended

"
    ));
}

#[test]
fn only_your_own_jobs_are_shown_unless_asked() {
    let q = Q::new();
    q.submit("queue 1\n");
    // An owner name longer than any user running the tests is likely to
    // have, so that it sets the batch view's OWNER width.
    q.submit_as("alice_elsewhere", "queue 2\n");
    // Your own jobs alone: the batch view's OWNER column is as wide as your
    // name, so the screen is the one `tern_q <your name>` shows, and -nobatch
    // (whose column is fixed) shows which jobs those are.
    let mine = q.q(&[]);
    let me = crate::common::real_user();
    assert_eq!(mine.code, 0, "{mine:?}");
    assert_eq!(mine.stdout, q.q(&[&me]).stdout);
    assert!(mine.stdout.starts_with(title!()), "{mine:?}");
    q.q(&["-nobatch"]).ok(concat!(
        title!(),
        "\
\x20ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD
   1.0   $USER          11/14 22:13   0+00:00:00 I  0    0.0 prog

Total for query: 1 jobs; 0 completed, 0 removed, 1 idle, 0 running, 0 held, 0 suspended \n\
Total for $USER: 1 jobs; 0 completed, 0 removed, 1 idle, 0 running, 0 held, 0 suspended \n\
Total for all users: 3 jobs; 0 completed, 0 removed, 3 idle, 0 running, 0 held, 0 suspended

"
    ));
    q.q(&["-allusers"]).ok(concat!(
        title!(),
        "\
OWNER           BATCH_NAME    SUBMITTED   DONE   RUN    IDLE  TOTAL JOB_IDS
$USER           ID: 1       11/14 22:13      _      _      1      1 1.0
alice_elsewhere ID: 2       11/14 22:13      _      _      2      2 2.0-1

Total for query: 3 jobs; 0 completed, 0 removed, 3 idle, 0 running, 0 held, 0 suspended \n\
Total for $USER: 1 jobs; 0 completed, 0 removed, 1 idle, 0 running, 0 held, 0 suspended \n\
Total for all users: 3 jobs; 0 completed, 0 removed, 3 idle, 0 running, 0 held, 0 suspended

"
    ));
    q.q(&["alice_elsewhere"]).ok(concat!(
        title!(),
        "\
OWNER           BATCH_NAME    SUBMITTED   DONE   RUN    IDLE  TOTAL JOB_IDS
alice_elsewhere ID: 2       11/14 22:13      _      _      2      2 2.0-1

Total for query: 2 jobs; 0 completed, 0 removed, 2 idle, 0 running, 0 held, 0 suspended \n\
Total for $USER: 1 jobs; 0 completed, 0 removed, 1 idle, 0 running, 0 held, 0 suspended \n\
Total for all users: 3 jobs; 0 completed, 0 removed, 3 idle, 0 running, 0 held, 0 suspended

"
    ));
    q.q(&["nobody"]).ok(concat!(
        title!(),
        "\
OWNER BATCH_NAME      SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS

Total for query: 0 jobs; 0 completed, 0 removed, 0 idle, 0 running, 0 held, 0 suspended \n\
Total for $USER: 1 jobs; 0 completed, 0 removed, 1 idle, 0 running, 0 held, 0 suspended \n\
Total for all users: 3 jobs; 0 completed, 0 removed, 3 idle, 0 running, 0 held, 0 suspended

"
    ));
    // A cluster or job id names jobs whoever owns them.
    q.q(&["-af", "Owner", "-const", "ProcId == 1", "2"])
        .ok("alice_elsewhere\n");
    q.q(&["2.1", "-af", "Owner"]).ok("alice_elsewhere\n");
    // An owner and an id must both match.
    q.q(&["alice_elsewhere", "1", "-af", "ClusterId"]).ok("");
    q.q(&["alice_elsewhere", "2", "-af", "ClusterId"])
        .ok("2\n2\n");
}

#[test]
fn dag_node_clusters_join_their_dagman_jobs_line() {
    let q = Q::new();
    q.submit_as("bob", "universe = scheduler\n+DAG_NodesTotal = 5\nqueue\n");
    q.submit_as("bob", "+DAGManJobId = 1\n+DAGNodeName = \"A\"\nqueue 2\n");
    q.submit_as("bob", "+DAGManJobId = 99\n+DAGNodeName = \"B\"\nqueue 1\n");
    // The DAGMan job's line counts its nodes' jobs, and its TOTAL is the
    // DAG's; a node whose DAGMan job is not shown stands alone.
    q.q(&["bob"]).ok(concat!(
        title!(),
        "\
OWNER    BATCH_NAME    SUBMITTED   DONE   RUN    IDLE  TOTAL JOB_IDS
bob      DAG: 1      11/14 22:13      _      _      2      5 2.0-1
bob      NODE: B     11/14 22:13      _      _      1      _ 3.0

Total for query: 4 jobs; 0 completed, 0 removed, 4 idle, 0 running, 0 held, 0 suspended \n\
Total for $USER: 0 jobs; 0 completed, 0 removed, 0 idle, 0 running, 0 held, 0 suspended \n\
Total for all users: 4 jobs; 0 completed, 0 removed, 4 idle, 0 running, 0 held, 0 suspended

"
    ));
}

#[test]
fn a_reader_that_goes_away_is_not_an_error() {
    use std::io::Read;
    let q = Q::new();
    // More output than a pipe holds, so that tern_q is still writing.
    q.submit("queue 30000\n");
    let mut child = q
        .env
        .command("tern_q")
        .arg("-af")
        .arg("ProcId")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 2];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // Dropping stdout closed the pipe.
    let out = child.wait_with_output().unwrap();
    assert_eq!(&first, b"0\n");
    assert_eq!(
        (out.status.code(), out.stderr.as_slice()),
        (Some(0), &b""[..])
    );
}

// --- one line per job ---------------------------------------------------------

#[test]
fn nobatch_shows_one_line_per_job() {
    let q = Q::new();
    q.submit("arguments = a $(Process)\nqueue 2\n");
    q.submit("description = nightly build\npriority = 5\nqueue 1\n");
    q.submit("hold = true\nqueue 1\n");
    q.start(1, 1, NOW - 3723);
    q.q(&["-nobatch"]).ok(concat!(
        title!(),
        "\
\x20ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD
   1.0   $USER          11/14 22:13   0+00:00:00 I  0    0.0 prog a 0
   1.1   $USER          11/14 22:13   0+01:02:03 R  0    0.0 prog a 1
   2.0   $USER          11/14 22:13   0+00:00:00 I  5    0.0 (nightly build)
   3.0   $USER          11/14 22:13   0+00:00:00 H  0    0.0 prog

Total for query: 4 jobs; 0 completed, 0 removed, 2 idle, 1 running, 1 held, 0 suspended \n\
Total for $USER: 4 jobs; 0 completed, 0 removed, 2 idle, 1 running, 1 held, 0 suspended \n\
Total for all users: 4 jobs; 0 completed, 0 removed, 2 idle, 1 running, 1 held, 0 suspended

"
    ));
}

#[test]
fn cluster_and_job_arguments_choose_jobs() {
    let q = Q::new();
    q.submit("queue 3\n");
    q.submit("queue 2\n");
    q.q(&["-nobatch", "2"]).ok(concat!(
        title!(),
        "\
\x20ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD
   2.0   $USER          11/14 22:13   0+00:00:00 I  0    0.0 prog
   2.1   $USER          11/14 22:13   0+00:00:00 I  0    0.0 prog

Total for query: 2 jobs; 0 completed, 0 removed, 2 idle, 0 running, 0 held, 0 suspended \n\
Total for $USER: 5 jobs; 0 completed, 0 removed, 5 idle, 0 running, 0 held, 0 suspended \n\
Total for all users: 5 jobs; 0 completed, 0 removed, 5 idle, 0 running, 0 held, 0 suspended

"
    ));
    q.q(&["-nobatch", "1.2", "2.0"]).ok(concat!(
        title!(),
        "\
\x20ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD
   1.2   $USER          11/14 22:13   0+00:00:00 I  0    0.0 prog
   2.0   $USER          11/14 22:13   0+00:00:00 I  0    0.0 prog

Total for query: 2 jobs; 0 completed, 0 removed, 2 idle, 0 running, 0 held, 0 suspended \n\
Total for $USER: 5 jobs; 0 completed, 0 removed, 5 idle, 0 running, 0 held, 0 suspended \n\
Total for all users: 5 jobs; 0 completed, 0 removed, 5 idle, 0 running, 0 held, 0 suspended

"
    ));
    q.q(&["-nobatch", "7"]).ok(concat!(
        title!(),
        "\
\x20ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD

Total for query: 0 jobs; 0 completed, 0 removed, 0 idle, 0 running, 0 held, 0 suspended \n\
Total for $USER: 5 jobs; 0 completed, 0 removed, 5 idle, 0 running, 0 held, 0 suspended \n\
Total for all users: 5 jobs; 0 completed, 0 removed, 5 idle, 0 running, 0 held, 0 suspended

"
    ));
}

#[test]
fn totals_print_only_the_totals() {
    let q = Q::new();
    q.submit("queue 2\n");
    q.submit("hold = true\nqueue 1\n");
    q.q(&["-totals"]).ok(concat!(
        title!(),
        "\
Total for query: 3 jobs; 0 completed, 0 removed, 2 idle, 0 running, 1 held, 0 suspended \n\
Total for $USER: 3 jobs; 0 completed, 0 removed, 2 idle, 0 running, 1 held, 0 suspended \n\
Total for all users: 3 jobs; 0 completed, 0 removed, 2 idle, 0 running, 1 held, 0 suspended

"
    ));
    q.q(&["-totals", "2"]).ok(concat!(
        title!(),
        "\
Total for query: 1 jobs; 0 completed, 0 removed, 0 idle, 0 running, 1 held, 0 suspended \n\
Total for $USER: 3 jobs; 0 completed, 0 removed, 2 idle, 0 running, 1 held, 0 suspended \n\
Total for all users: 3 jobs; 0 completed, 0 removed, 2 idle, 0 running, 1 held, 0 suspended

"
    ));
}

#[test]
fn totals_alone_agree_with_the_totals_of_the_listing() {
    // `-totals` over whole owners comes from the queue's kept counts, any
    // other query from a scan: each must print what the listing's own
    // totals lines say.
    let q = Q::new();
    q.submit("queue 2\n");
    q.submit("hold = true\nqueue 1\n");
    q.submit_as("alice_elsewhere", "queue 3\n");
    let tail = |args: &[&str]| {
        let out = q.q(args);
        assert_eq!(out.code, 0, "{out:?}");
        out.stdout
            .split_once("\nTotal for query")
            .map(|(_, t)| t.to_string())
            .unwrap_or_else(|| panic!("no totals in {out:?}"))
    };
    for args in [
        &[][..],
        &["-allusers"],
        &["alice_elsewhere"],
        &["2"],
        &["-constraint", "JobStatus == 5"],
    ] {
        let mut totals = args.to_vec();
        totals.push("-totals");
        assert_eq!(tail(&totals), tail(args), "tern_q {args:?}");
    }
    assert!(tail(&["-totals"]).starts_with(": 3 jobs;"));
    assert!(tail(&["-totals", "-allusers"]).starts_with(": 6 jobs;"));
}

#[test]
fn hold_shows_held_jobs_and_why() {
    let q = Q::new();
    q.submit("queue 1\n");
    q.submit("hold = true\nqueue 2\n");
    q.change(
        2,
        1,
        NOW - 86400 * 3,
        Change::Set(vec![("HoldReason".into(), Expr::string("disk full"))]),
    );
    q.q(&["-hold"]).ok(concat!(
        title!(),
        "\
\x20ID      OWNER          HELD_SINCE  HOLD_REASON
   2.0   $USER          11/14 22:13 submitted on hold at user's request
   2.1   $USER          11/14 22:13 disk full

Total for query: 2 jobs; 0 completed, 0 removed, 0 idle, 0 running, 2 held, 0 suspended \n\
Total for $USER: 3 jobs; 0 completed, 0 removed, 1 idle, 0 running, 2 held, 0 suspended \n\
Total for all users: 3 jobs; 0 completed, 0 removed, 1 idle, 0 running, 2 held, 0 suspended

"
    ));
}

#[test]
fn run_shows_running_jobs_and_no_totals() {
    let q = Q::new();
    q.submit("queue 3\n");
    q.q(&["-run"]).ok(concat!(
        title!(),
        " ID      OWNER            SUBMITTED     RUN_TIME HOST(S)\n"
    ));
    q.start(1, 2, NOW - 90061);
    q.q(&["-run"]).ok(concat!(
        title!(),
        "\
\x20ID      OWNER            SUBMITTED     RUN_TIME HOST(S)
   1.2   $USER          11/14 22:13   1+01:01:01 slot1@testhost
"
    ));
}

// --- -af and -format ---------------------------------------------------------

/// A queue of two jobs of `me`, the second with a string argument.
fn two_jobs() -> Q {
    let q = Q::new();
    q.submit("arguments = x $(Process)\n+Weight = 2.5\nqueue 2\n");
    q
}

#[test]
fn autoformat_prints_values_separated_by_spaces() {
    let q = two_jobs();
    q.q(&["-af", "ClusterId", "ProcId", "JobStatus", "Owner"])
        .ok("1 0 1 $USER\n1 1 1 $USER\n");
    // Strings raw, other values in old syntax, undefined names too, and
    // expressions evaluated.
    q.q(&[
        "-af",
        "Args",
        "Weight",
        "Foo",
        "ProcId * 10",
        "strcat(Args, \"!\")",
    ])
    .ok("x 0 2.5 undefined 0 x 0!\nx 1 2.5 undefined 10 x 1!\n");
    // The autoformat long name and a prefix of it.
    q.q(&["-autoformat", "ProcId"]).ok("0\n1\n");
    q.q(&["-auto", "ProcId"]).ok("0\n1\n");
}

#[test]
fn autoformat_flags() {
    let q = two_jobs();
    let af = |flags: &str, args: &[&str]| {
        let mut a = vec![flags];
        a.extend_from_slice(args);
        q.q(&a)
    };
    af("-af:j", &["Args"]).ok("1.0 x 0\n1.1 x 1\n");
    af("-af:l", &["ProcId", "Args"]).ok("ProcId = 0 Args = x 0\nProcId = 1 Args = x 1\n");
    af("-af:jl", &["Args"]).ok("ID = 1.0 Args = x 0\nID = 1.1 Args = x 1\n");
    af("-af:V", &["Args", "ProcId"]).ok("\"x 0\" 0\n\"x 1\" 1\n");
    af("-af:r", &["Args", "ProcId + 1", "Weight"])
        .ok("\"x 0\" ProcId + 1 2.5\n\"x 1\" ProcId + 1 2.5\n");
    af("-af:,", &["ProcId", "Args"]).ok("0, x 0\n1, x 1\n");
    af("-af:t", &["ProcId", "Args"]).ok("0\tx 0\n1\tx 1\n");
    af("-af:n", &["ProcId", "Args"]).ok("0\n x 0\n1\n x 1\n");
    af("-af:lrng", &["ProcId", "Args"])
        .ok("\nProcId = 0\nArgs = \"x 0\"\n\nProcId = 1\nArgs = \"x 1\"\n");
    af("-af:h", &["ClusterId", "Args", "Weight"])
        .ok("ClusterId Args Weight\n1         x 0  2.5\n1         x 1  2.5\n");
    af("-af:jh", &["Args"]).ok(" ID      Args\n   1.0   x 0\n   1.1   x 1\n");
    af("-af:T", &["ProcId * 3661"]).ok("  0+00:00:00\n  0+01:01:01\n");
    af("-af:Y", &["QDate"]).ok("11/14 22:13\n11/14 22:13\n");
    // Flags apply to their own -af; columns of several -af share a line.
    q.q(&["-af:V", "Args", "-af", "ProcId"])
        .ok("\"x 0\" 0\n\"x 1\" 1\n");
}

// condor_q's -af:r prints an attribute's own expression, so a value that
// is a bare reference (`Foo = Bar`) prints as `Bar`; a name the job lacks
// is `undefined` (it used to print the name itself), and any other
// expression prints unparsed.
#[test]
fn autoformat_raw_prints_undefined_for_a_missing_bare_reference() {
    let q = Q::new();
    q.submit("+Foo = Bar\n+Baz = 1 + 2\nqueue 1\n");
    q.q(&[
        "-af:r",
        "Foo",
        "Baz",
        "Missing",
        "MY.Missing",
        "Missing + 1",
    ])
    .ok("Bar 1 + 2 undefined undefined Missing + 1\n");
    q.q(&["-format", "%r|", "Foo", "-format", "%r\\n", "Missing"])
        .ok("Bar|undefined\n");
}

// The prio column mirrors JobPrio only when JobPrio is an integer: after
// `tern_qedit JobPrio '1 + 6'` condor_q shows 7 (and `-af:r` the
// expression); tern_q used to show the column's stale 0 in every view
// that read JobPrio from the columns.
#[test]
fn autoformat_jobprio_evaluates_an_expression_not_the_column() {
    let q = two_jobs();
    let r = q.env.run("tern_qedit", ["1.1", "JobPrio", "1 + 6"]);
    assert_eq!(r.code, 0, "{r:?}");
    q.q(&["-af", "JobPrio"]).ok("0\n7\n");
    q.q(&["-af:r", "JobPrio"]).ok("0\n1 + 6\n");
    q.q(&["-af", "ProcId", "JobPrio + 1"]).ok("0 1\n1 8\n");
    q.q(&["-const", "JobPrio == 7", "-af", "ProcId"]).ok("1\n");
    q.q(&["-const", "JobPrio == 0", "-af", "ProcId"]).ok("0\n");
    // The integer case still comes from the column, and says so.
    let r = q.env.run("tern_qedit", ["1.0", "JobPrio", "5"]);
    assert_eq!(r.code, 0, "{r:?}");
    q.q(&["-af", "JobPrio"]).ok("5\n7\n");
    let nobatch = q.q(&["-nobatch"]);
    assert!(nobatch.stdout.contains(" I  7 "), "{nobatch:?}");
}

// condor_q's CMD column (render_job_description) is the executable's base
// name and the Arguments attribute exactly as stored: new-syntax arguments
// in HTCondor's canonical form, where only the blanks inside a word are
// quoted. condor_submit stores `"-c 'export PATH=/usr/bin; echo hi'"` as
// `-c export' 'PATH=/usr/bin;' 'echo' 'hi`, and condor_q prints that.
#[test]
fn cmd_column_prints_new_syntax_arguments_as_condor_q() {
    let q = Q::new();
    q.submit("arguments = \"-c 'export PATH=/usr/bin; echo hi'\"\nqueue 1\n");
    let r = q.q(&["-nobatch"]);
    assert!(
        r.stdout
            .contains(" prog -c export' 'PATH=/usr/bin;' 'echo' 'hi\n"),
        "{r:?}"
    );
    q.q(&["-af", "Arguments"])
        .ok("-c export' 'PATH=/usr/bin;' 'echo' 'hi\n");
}

// condor_q's CMD column takes Arguments when the job has it, an empty one
// too, and Args (old syntax) only when it lacks Arguments
// (ArgList::GetArgsStringForDisplay); tern_q skipped an empty Arguments.
#[test]
fn cmd_column_takes_args_only_when_arguments_is_absent() {
    let q = Q::new();
    q.submit("queue 1\n");
    q.submit("arguments = one two\nqueue 1\n");
    q.q(&["-af:r", "Arguments", "Args"])
        .ok("\"\" undefined\nundefined \"one two\"\n");
    q.change(
        1,
        0,
        NOW,
        Change::Set(vec![("Args".into(), Expr::string("old style"))]),
    );
    let r = q.q(&["-nobatch"]);
    assert!(r.stdout.contains(" prog\n"), "{r:?}");
    assert!(r.stdout.contains(" prog one two\n"), "{r:?}");
    assert!(!r.stdout.contains("old style"), "{r:?}");
}

#[test]
fn format_prints_printf_conversions_without_a_newline() {
    let q = two_jobs();
    q.q(&["-format", "%d.", "ClusterId", "-format", "%d\\n", "ProcId"])
        .ok("1.0\n1.1\n");
    q.q(&[
        "-format",
        "[%-6s]",
        "Args",
        "-format",
        "[%5.2f]",
        "Weight",
        "-format",
        "[%03d]",
        "ProcId",
        "-format",
        "[%V]",
        "Args",
        "-format",
        "[%r]",
        "Weight * 2",
        "-format",
        "\n",
        "Foo",
    ])
    .ok("[x 0   ][ 2.50][000][\"x 0\"][Weight * 2]\n[x 1   ][ 2.50][001][\"x 1\"][Weight * 2]\n");
    // %s of a non-string attribute prints its expression; a missing one,
    // or a value a conversion cannot take, prints nothing.
    q.q(&[
        "-format",
        "<%s>",
        "JobStatus",
        "-format",
        "<%d>",
        "Foo",
        "-format",
        "<%d>",
        "Args",
        "-format",
        "%s\\n",
        "Owner",
    ])
    .ok("<1>$USER\n<1>$USER\n");
    // %T and %Y print the value alone, as HTCondor does; a format without
    // a conversion prints for every job.
    q.q(&[
        "-format",
        "T=%T",
        "ProcId + 60",
        "-format",
        "|",
        "Foo",
        "-format",
        "%Y.",
        "QDate",
        "-format",
        "\\n",
        "Foo",
    ])
    .ok("  0+00:01:00|11/14 22:13\n  0+00:01:01|11/14 22:13\n");
}

// --- -long and -json -------------------------------------------------------

/// The ads `tern_submit -dry-run` (or `-dry-run:json`) prints for the next
/// cluster, which tern_q must show once it is submitted.
fn dry_run(q: &Q, opt: &str) -> String {
    // Normalized as tern_q's output is, to compare the two.
    let r = q
        .env
        .run("tern_submit", [opt, "job.sub"])
        .normalized(&q.env);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    r.stdout
}

#[test]
fn long_prints_whole_ads_sorted_as_submit_made_them() {
    let q = Q::new();
    q.env.write(
        "job.sub",
        "executable = prog\narguments = p $(Process)\n+Weight = 2.5\nqueue 2\n",
    );
    let expected = dry_run(&q, "-dry-run");
    assert_eq!(q.env.run("tern_submit", ["job.sub"]).code, 0);
    // condor_q -long adds ServerTime, and the queue records
    // TotalSubmitProcs and the submitter's OwnerUid and OwnerUmask, sorted
    // in with the rest.
    let mut with_time = String::new();
    for ad in expected.split_terminator("\n\n") {
        let mut lines: Vec<String> = ad.lines().map(str::to_string).collect();
        lines.push(format!("ServerTime = {NOW}"));
        lines.push("TotalSubmitProcs = 2".to_string());
        lines.push(format!("OwnerUid = {}", real_uid()));
        lines.push(format!("OwnerUmask = {}", umask()));
        lines.sort_by_key(|l| l.split(" = ").next().unwrap().to_ascii_lowercase());
        with_time.push_str(&lines.join("\n"));
        with_time.push_str("\n\n");
    }
    q.q(&["-long"]).ok(&with_time);
    q.q(&["-long", "-attributes", "ProcId,args", "1.1"])
        .ok("Args = \"p 1\"\nProcId = 1\n\n");
}

#[test]
fn json_prints_one_array_of_the_whole_ads() {
    let q = Q::new();
    q.env.write(
        "job.sub",
        "executable = prog\narguments = p $(Process)\nqueue 2\n",
    );
    let expected = dry_run(&q, "-dry-run:json");
    assert_eq!(q.env.run("tern_submit", ["job.sub"]).code, 0);
    let r = q.q(&["-json"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    let got: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let mut want: serde_json::Value = serde_json::from_str(&expected).unwrap();
    for ad in want.as_array_mut().unwrap() {
        let o = ad.as_object_mut().unwrap();
        o.insert("ServerTime".into(), serde_json::json!(NOW));
        o.insert("TotalSubmitProcs".into(), serde_json::json!(2));
        o.insert("OwnerUid".into(), serde_json::json!(real_uid()));
        o.insert("OwnerUmask".into(), serde_json::json!(umask()));
    }
    assert_eq!(got, want);
    q.q(&["-json", "-attributes", "ProcId,Args"]).ok(
        "[\n{\n  \"Args\": \"p 0\",\n  \"ProcId\": 0\n},\n{\n  \"Args\": \"p 1\",\n  \"ProcId\": 1\n}\n]\n",
    );
}

// --- constraints, widths, errors ---------------------------------------------

#[test]
fn constraints_over_hot_and_other_attributes() {
    let q = two_jobs();
    q.submit("hold = true\nqueue 1\n");
    q.q(&[
        "-af",
        "ClusterId",
        "ProcId",
        "-constraint",
        "JobStatus == 5",
    ])
    .ok("2 0\n");
    q.q(&["-af", "ProcId", "-constraint", "Args == \"x 1\""])
        .ok("1\n");
    q.q(&[
        "-af",
        "ProcId",
        "-const",
        "ClusterId == 1",
        "-const",
        "Weight > 2 && ProcId > 0",
    ])
    .ok("1\n");
    // The batch view would size OWNER to your name: one line per job shows
    // the same selection in columns of fixed width.
    q.q(&["-nobatch", "-constraint", "JobStatus == 1"])
        .ok(concat!(
            title!(),
            "\
\x20ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD
   1.0   $USER          11/14 22:13   0+00:00:00 I  0    0.0 prog x 0
   1.1   $USER          11/14 22:13   0+00:00:00 I  0    0.0 prog x 1

Total for query: 2 jobs; 0 completed, 0 removed, 2 idle, 0 running, 0 held, 0 suspended \n\
Total for $USER: 3 jobs; 0 completed, 0 removed, 2 idle, 0 running, 1 held, 0 suspended \n\
Total for all users: 3 jobs; 0 completed, 0 removed, 2 idle, 0 running, 1 held, 0 suspended

"
        ));
}

#[test]
fn lines_are_cut_to_a_given_width() {
    let q = Q::new();
    q.submit("arguments = a very long argument list that goes on and on and on\nqueue 1\n");
    // As on a terminal 40 columns wide: the heading and the job lines are
    // cut to 39 columns; the title and totals are not.
    q.q(&["-nobatch", "-wide:40"]).ok(concat!(
        title!(),
        "\
\x20ID      OWNER            SUBMITTED    \n\
\x20  1.0   $USER          11/14 22:13   0

Total for query: 1 jobs; 0 completed, 0 removed, 1 idle, 0 running, 0 held, 0 suspended \n\
Total for $USER: 1 jobs; 0 completed, 0 removed, 1 idle, 0 running, 0 held, 0 suspended \n\
Total for all users: 1 jobs; 0 completed, 0 removed, 1 idle, 0 running, 0 held, 0 suspended

"
    ));
    q.q(&["-nobatch", "-wide"]).ok(concat!(
        title!(),
        "\
\x20ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD
   1.0   $USER          11/14 22:13   0+00:00:00 I  0    0.0 prog a very long argument list that goes on and on and on

Total for query: 1 jobs; 0 completed, 0 removed, 1 idle, 0 running, 0 held, 0 suspended \n\
Total for $USER: 1 jobs; 0 completed, 0 removed, 1 idle, 0 running, 0 held, 0 suspended \n\
Total for all users: 1 jobs; 0 completed, 0 removed, 1 idle, 0 running, 0 held, 0 suspended

"
    ));
}

#[test]
fn errors_exit_1_as_condor_q() {
    let q = Q::new();
    let r = q.q(&["-bogus"]);
    assert_eq!((r.code, r.stdout.as_str()), (1, ""), "{r:?}");
    assert!(
        r.stderr
            .starts_with("tern_q: error: unknown option '-bogus'\n"),
        "{r:?}"
    );
    q.q(&["-run", "-hold"])
        .fails(1, "tern_q: error: -run and -hold are incompatible\n");
    q.q(&["-constraint", "JobStatus =="]).fails(
        1,
        "tern_q: error: constraint 'JobStatus ==': column 13: expected an expression, found end of input\n",
    );
    let r = q.q(&["-af:h"]);
    assert_eq!((r.code, r.stdout.as_str()), (1, ""), "{r:?}");
    assert!(!q.spool().exists());
    let r = q.q(&["-help"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    assert!(r.stdout.contains("-autoformat"), "{r:?}");
}

// --- the manual --------------------------------------------------------------

#[test]
fn the_man_page_documents_every_option() {
    use clap::CommandFactory;
    crate::common::man::check_page("tern_q", tern::cli::q::Args::command());
}

/// The umask the tests run with (the tools inherit it: OwnerUmask).
fn umask() -> u32 {
    tern::sys::privilege::caller_umask()
}

/// The uid the tests run as (what the queue records as OwnerUid).
fn real_uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}
