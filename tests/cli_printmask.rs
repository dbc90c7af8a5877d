//! The print mask (`-af[:FLAGS]`, `-format`) is one engine for `tern_q`,
//! `tern_history` and `tern_status`: the same arguments print a job the
//! same way in the queue and in the history, and flags that only
//! `tern_q` knew (`-af:T`, `-af:Y`, one set of flags per `-af`, columns
//! in command-line order) now work in every tool.

use crate::common::{Run, TestEnv};

/// A SPOOL of its own, no configuration, UTC, and one job (1.0) with a
/// duration and a date among its attributes.
fn one_job() -> TestEnv {
    let env = TestEnv::new();
    let dir = env.path("");
    let spool = env.path("spool");
    let env = env
        .var("_TERN_SPOOL", Some(spool.to_str().unwrap()))
        .var("TERN_CONFIG", Some("/dev/null"))
        .var("TZ", Some("UTC"))
        .var("HOME", Some(dir.to_str().unwrap()))
        .var("PATH", Some("/usr/bin:/bin"));
    env.write(
        "job.sub",
        "executable = /bin/sleep\narguments = 100\n+Secs = 3725\n+When = 1700000000\n\
         +Name = \"nap\"\nqueue\n",
    );
    let r = env.run("tern_submit", ["job.sub"]);
    assert_eq!(r.code, 0, "{r:?}");
    env
}

#[track_caller]
fn ok(r: &Run, stdout: &str) {
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, stdout, ""),
        "unexpected outcome"
    );
}

/// Each case: the arguments, and what they print for job 1.0.
const CASES: &[(&[&str], &str)] = &[
    (&["-af:T", "Secs"], "  0+01:02:05\n"),
    (&["-af:Y", "When"], "11/14 22:13\n"),
    (
        &["-af:jT", "Secs", "Secs * 2"],
        "1.0   0+01:02:05   0+02:04:10\n",
    ),
    // Each -af has its own flags; their columns share the line.
    (
        &["-af:V", "Name", "-af:T", "Secs"],
        "\"nap\"   0+01:02:05\n",
    ),
    // -format and -af columns print in command-line order.
    (&["-af", "Name", "-format", "<%d>", "Secs"], "nap <3725>\n"),
    (&["-format", "<%d>", "Secs", "-af", "Name"], "<3725> nap\n"),
    (&["-af:h", "Name", "Secs"], "Name Secs\nnap  3725\n"),
];

#[test]
fn history_prints_as_the_queue_did() {
    let env = one_job();
    for (args, want) in CASES {
        let mut q = vec!["-allusers"];
        q.extend_from_slice(args);
        ok(&env.run("tern_q", &q), want);
    }
    assert_eq!(env.run("tern_rm", ["1.0"]).code, 0);
    for (args, want) in CASES {
        ok(&env.run("tern_history", *args), want);
    }
}

#[test]
fn status_takes_the_flags_tern_q_takes() {
    let env = TestEnv::new()
        .var("TERN_CONFIG", Some("/dev/null"))
        .var("_TERN_SPOOL", Some("/nonexistent/spool"))
        .var("_TERN_NUM_CPUS", Some("2"))
        .var("_TERN_MEMORY", Some("4000"))
        .var("_TERN_FULL_HOSTNAME", Some("host.example"));
    ok(
        &env.run("tern_status", ["-af:T", "Cpus * 3600", "-af", "Name"]),
        "  0+02:00:00 slot1@host.example\n",
    );
}

#[test]
fn an_af_without_attributes_is_a_usage_error_everywhere() {
    let env = one_job();
    for tool in ["tern_q", "tern_history", "tern_status"] {
        let r = env.run(tool, ["-af:h"]);
        assert_ne!(r.code, 0, "{tool}: {r:?}");
        assert_eq!(r.stdout, "", "{tool}: {r:?}");
    }
}
