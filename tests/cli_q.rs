//! `tern_q`, run as a user runs it over queues made by the real
//! `tern_submit`, compared output for output. Jobs of other users, running
//! jobs and jobs that left the queue are made through the queue library,
//! as the tools that own those changes would make them.

use std::path::PathBuf;
use std::process::Command;

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

    fn q(&self, args: &[&str]) -> Run {
        self.env.run("tern_q", args)
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

    /// The title line condor_q prints after two blank lines.
    fn title(&self) -> String {
        format!(
            "\n\n-- Schedd: {}@testhost : <{}> @ 11/14/23 22:13:20\n",
            me(),
            self.spool().display()
        )
    }
}

fn me() -> String {
    let out = Command::new("id")
        .arg("-un")
        .output()
        .expect("running id -un");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// `me` padded as the batch view pads its OWNER column: to the longest
/// owner, or 8 when that is shorter than the heading.
fn owner_col(name: &str) -> String {
    let w = if name.len() < 5 { 8 } else { name.len() };
    format!("{name:<w$}")
}

/// The three totals lines and the blank line after them, for (jobs,
/// completed, removed, idle, running, held, suspended) counts.
fn totals(query: [u32; 7], mine: [u32; 7], all: [u32; 7]) -> String {
    let line = |who: &str, c: [u32; 7]| {
        format!(
            "Total for {who}: {} jobs; {} completed, {} removed, {} idle, {} running, {} held, {} suspended",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6]
        )
    };
    format!(
        "{} \n{} \n{}\n\n",
        line("query", query),
        line(&me(), mine),
        line("all users", all)
    )
}

const NONE: [u32; 7] = [0; 7];

fn idle(n: u32) -> [u32; 7] {
    [n, 0, 0, n, 0, 0, 0]
}

const BATCH_HEAD: &str = "BATCH_NAME    SUBMITTED   DONE   RUN    IDLE  TOTAL JOB_IDS\n";
const BATCH_HEAD_HOLD: &str =
    "BATCH_NAME    SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS\n";
const NOBATCH_HEAD: &str = " ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD\n";

/// A -nobatch line of an idle job of `me` submitted at NOW.
fn nobatch_line(id: &str, st: &str, cmd: &str) -> String {
    let (c, p) = id.split_once('.').unwrap();
    format!(
        "{c:>4}.{p:<3} {:<14} 11/14 22:13   0+00:00:00 {st:<2} 0    0.0 {cmd}\n",
        me()
    )
}

// --- the empty queue ------------------------------------------------------

#[test]
fn an_absent_spool_shows_the_empty_view_and_is_not_created() {
    let q = Q::new();
    q.q(&[]).ok(&format!(
        "{}OWNER BATCH_NAME      SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS\n\n{}",
        q.title(),
        totals(NONE, NONE, NONE)
    ));
    q.q(&["-nobatch"]).ok(&format!(
        "{}{NOBATCH_HEAD}\n{}",
        q.title(),
        totals(NONE, NONE, NONE)
    ));
    q.q(&["-totals"])
        .ok(&format!("{}{}", q.title(), totals(NONE, NONE, NONE)));
    q.q(&["-af", "ClusterId"]).ok("");
    q.q(&["-long"]).ok("");
    q.q(&["-json"]).ok("");
    assert!(!q.spool().exists(), "tern_q created the SPOOL");
}

// --- the batch view ----------------------------------------------------------

#[test]
fn one_cluster_is_one_batch_line() {
    let q = Q::new();
    q.submit("queue 3\n");
    q.q(&[]).ok(&format!(
        "{}OWNER    {BATCH_HEAD}{}ID: 1       11/14 22:13      _      _      3      3 1.0-2\n\n{}",
        q.title(),
        owner_col(&me()) + " ",
        totals(idle(3), idle(3), idle(3))
    ));
}

#[test]
fn clusters_sharing_a_batch_name_are_one_line_and_held_jobs_add_the_hold_column() {
    let q = Q::new();
    q.submit("queue 1\n");
    q.submit("batch_name = sweep\nqueue 2\n");
    q.submit("batch_name = sweep\nqueue 2\n");
    q.submit("hold = true\nqueue 1\n");
    let o = owner_col(&me());
    q.q(&[]).ok(&format!(
        "{}OWNER    {BATCH_HEAD_HOLD}\
         {o} ID: 1       11/14 22:13      _      _      1      _      1 1.0\n\
         {o} sweep       11/14 22:13      _      _      4      _      4 2.0 ... 3.1\n\
         {o} ID: 4       11/14 22:13      _      _      _      1      1 4.0\n\n{}",
        q.title(),
        totals(
            [6, 0, 0, 5, 0, 1, 0],
            [6, 0, 0, 5, 0, 1, 0],
            [6, 0, 0, 5, 0, 1, 0]
        )
    ));
}

#[test]
fn running_and_departed_jobs_fill_the_run_and_done_columns() {
    let q = Q::new();
    q.submit("queue 4\n");
    q.start(1, 1, NOW - 100);
    q.change(
        1,
        0,
        NOW - 50,
        Change::Leave {
            set: vec![("JobStatus".into(), Expr::int(4))],
        },
    );
    let o = owner_col(&me());
    q.q(&[]).ok(&format!(
        "{}OWNER    {BATCH_HEAD}{o} ID: 1       11/14 22:13      1      1      2      4 1.1-3\n\n{}",
        q.title(),
        totals([3, 0, 0, 2, 1, 0, 0], [3, 0, 0, 2, 1, 0, 0], [3, 0, 0, 2, 1, 0, 0])
    ));
    // A query for some jobs of a cluster cannot tell how many are done.
    q.q(&["1.1"]).ok(&format!(
        "{}OWNER    {BATCH_HEAD}{o} ID: 1       11/14 22:13      _      1      _      4 1.1\n\n{}",
        q.title(),
        totals(
            [1, 0, 0, 0, 1, 0, 0],
            [3, 0, 0, 2, 1, 0, 0],
            [3, 0, 0, 2, 1, 0, 0]
        )
    ));
}

#[test]
fn only_your_own_jobs_are_shown_unless_asked() {
    let q = Q::new();
    q.submit("queue 1\n");
    q.submit_as("alice", "queue 2\n");
    let o = |name: &str| format!("{name:<w$}", w = me().len().max(5).max(name.len()));
    let all = [3, 0, 0, 3, 0, 0, 0];
    q.q(&[]).ok(&format!(
        "{}OWNER    {BATCH_HEAD}{} ID: 1       11/14 22:13      _      _      1      1 1.0\n\n{}",
        q.title(),
        owner_col(&me()),
        totals(idle(1), idle(1), all)
    ));
    let head = format!("{:<w$} {BATCH_HEAD}", "OWNER", w = me().len().max(5));
    q.q(&["-allusers"]).ok(&format!(
        "{}{head}{} ID: 1       11/14 22:13      _      _      1      1 1.0\n\
         {} ID: 2       11/14 22:13      _      _      2      2 2.0-1\n\n{}",
        q.title(),
        o(&me()),
        o("alice"),
        totals(all, idle(1), all)
    ));
    q.q(&["alice"]).ok(&format!(
        "{}OWNER {BATCH_HEAD}alice ID: 2       11/14 22:13      _      _      2      2 2.0-1\n\n{}",
        q.title(),
        totals(idle(2), idle(1), all)
    ));
    q.q(&[&me()]).ok(&format!(
        "{}OWNER    {BATCH_HEAD}{} ID: 1       11/14 22:13      _      _      1      1 1.0\n\n{}",
        q.title(),
        owner_col(&me()),
        totals(idle(1), idle(1), all)
    ));
    q.q(&["nobody"]).ok(&format!(
        "{}OWNER BATCH_NAME      SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS\n\n{}",
        q.title(),
        totals(NONE, idle(1), all)
    ));
    // A cluster or job id names jobs whoever owns them.
    q.q(&["-af", "Owner", "-const", "ProcId == 1", "2"])
        .ok("alice\n");
    q.q(&["2.1", "-af", "Owner"]).ok("alice\n");
    // An owner and an id must both match.
    q.q(&["alice", "1", "-af", "ClusterId"]).ok("");
    q.q(&["alice", "2", "-af", "ClusterId"]).ok("2\n2\n");
}

#[test]
fn dag_node_clusters_join_their_dagman_jobs_line() {
    let q = Q::new();
    q.env.write(
        "dag.sub",
        "universe = scheduler\nexecutable = prog\n+DAG_NodesTotal = 5\nqueue\n",
    );
    assert_eq!(q.env.run("tern_submit", ["dag.sub"]).code, 0);
    q.submit("+DAGManJobId = 1\n+DAGNodeName = \"A\"\nqueue 2\n");
    q.submit("+DAGManJobId = 99\n+DAGNodeName = \"B\"\nqueue 1\n");
    let o = owner_col(&me());
    // The DAGMan job's line counts its nodes' jobs, and its TOTAL is the
    // DAG's; a node whose DAGMan job is not shown stands alone.
    q.q(&[]).ok(&format!(
        "{}OWNER    {BATCH_HEAD}\
         {o} DAG: 1      11/14 22:13      _      _      2      5 2.0-1\n\
         {o} NODE: B     11/14 22:13      _      _      1      _ 3.0\n\n{}",
        q.title(),
        totals(idle(4), idle(4), idle(4))
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
    q.q(&["-nobatch"]).ok(&format!(
        "{}{NOBATCH_HEAD}{}{}{}{}\n{}",
        q.title(),
        nobatch_line("1.0", "I", "prog a 0"),
        nobatch_line("1.1", "R", "prog a 1").replace("0+00:00:00", "0+01:02:03"),
        nobatch_line("2.0", "I", "(nightly build)").replace(" 0    0.0", " 5    0.0"),
        nobatch_line("3.0", "H", "prog"),
        totals(
            [4, 0, 0, 2, 1, 1, 0],
            [4, 0, 0, 2, 1, 1, 0],
            [4, 0, 0, 2, 1, 1, 0]
        )
    ));
}

#[test]
fn cluster_and_job_arguments_choose_jobs() {
    let q = Q::new();
    q.submit("queue 3\n");
    q.submit("queue 2\n");
    let t = |n| totals(idle(n), idle(5), idle(5));
    q.q(&["-nobatch", "2"]).ok(&format!(
        "{}{NOBATCH_HEAD}{}{}\n{}",
        q.title(),
        nobatch_line("2.0", "I", "prog"),
        nobatch_line("2.1", "I", "prog"),
        t(2)
    ));
    q.q(&["-nobatch", "1.2", "2.0"]).ok(&format!(
        "{}{NOBATCH_HEAD}{}{}\n{}",
        q.title(),
        nobatch_line("1.2", "I", "prog"),
        nobatch_line("2.0", "I", "prog"),
        t(2)
    ));
    q.q(&["-nobatch", "7"])
        .ok(&format!("{}{NOBATCH_HEAD}\n{}", q.title(), t(0)));
}

#[test]
fn totals_print_only_the_totals() {
    let q = Q::new();
    q.submit("queue 2\n");
    q.submit("hold = true\nqueue 1\n");
    let c = [3, 0, 0, 2, 0, 1, 0];
    q.q(&["-totals"])
        .ok(&format!("{}{}", q.title(), totals(c, c, c)));
    q.q(&["-totals", "2"]).ok(&format!(
        "{}{}",
        q.title(),
        totals([1, 0, 0, 0, 0, 1, 0], c, c)
    ));
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
    let t = totals(
        [2, 0, 0, 0, 0, 2, 0],
        [3, 0, 0, 1, 0, 2, 0],
        [3, 0, 0, 1, 0, 2, 0],
    );
    q.q(&["-hold"]).ok(&format!(
        "{} ID      OWNER          HELD_SINCE  HOLD_REASON\n\
         \x20  2.0   {:<14} 11/14 22:13 submitted on hold at user's request\n\
         \x20  2.1   {:<14} 11/14 22:13 disk full\n\n{t}",
        q.title(),
        me(),
        me(),
    ));
}

#[test]
fn run_shows_running_jobs_and_no_totals() {
    let q = Q::new();
    q.submit("queue 3\n");
    let head = " ID      OWNER            SUBMITTED     RUN_TIME HOST(S)\n";
    q.q(&["-run"]).ok(&format!("{}{head}", q.title()));
    q.start(1, 2, NOW - 90061);
    q.q(&["-run"]).ok(&format!(
        "{}{head}   1.2   {:<14} 11/14 22:13   1+01:01:01 slot1@testhost\n",
        q.title(),
        me()
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
        .ok(&format!("1 0 1 {m}\n1 1 1 {m}\n", m = me()));
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
    .ok(&format!("<1>{m}\n<1>{m}\n", m = me()));
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
    let r = q.env.run("tern_submit", [opt, "job.sub"]);
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
    // TotalSubmitProcs, sorted in with the rest.
    let mut with_time = String::new();
    for ad in expected.split_terminator("\n\n") {
        let mut lines: Vec<String> = ad.lines().map(str::to_string).collect();
        lines.push(format!("ServerTime = {NOW}"));
        lines.push("TotalSubmitProcs = 2".to_string());
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
    let o = owner_col(&me());
    q.q(&["-constraint", "JobStatus == 1"]).ok(&format!(
        "{}OWNER    {BATCH_HEAD}{o} ID: 1       11/14 22:13      _      _      2      2 1.0-1\n\n{}",
        q.title(),
        totals(idle(2), [3, 0, 0, 2, 0, 1, 0], [3, 0, 0, 2, 0, 1, 0])
    ));
}

#[test]
fn lines_are_cut_to_a_given_width() {
    let q = Q::new();
    q.submit("arguments = a very long argument list that goes on and on and on\nqueue 1\n");
    // As on a terminal 40 columns wide: the heading and the job lines are
    // cut to 39 columns; the title and totals are not.
    let row = nobatch_line("1.0", "I", "prog a very long argument list");
    let cut = |l: &str| l.chars().take(39).collect::<String>();
    q.q(&["-nobatch", "-wide:40"]).ok(&format!(
        "{}{}\n{}\n\n{}",
        q.title(),
        cut(NOBATCH_HEAD),
        cut(&row),
        totals(idle(1), idle(1), idle(1))
    ));
    q.q(&["-nobatch", "-wide"]).ok(&format!(
        "{}{NOBATCH_HEAD}{}\n{}",
        q.title(),
        nobatch_line(
            "1.0",
            "I",
            "prog a very long argument list that goes on and on and on"
        ),
        totals(idle(1), idle(1), idle(1))
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
    assert!(r.stdout.contains("--autoformat"), "{r:?}");
}

// --- the manual --------------------------------------------------------------

#[test]
fn the_man_page_documents_every_option() {
    use clap::CommandFactory;
    crate::common::man::check_page("tern_q", tern::cli::q::Args::command());
}
