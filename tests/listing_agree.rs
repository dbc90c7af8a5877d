//! The listing tools print values alike (issue 17, item 4): the same
//! expressions given to `-af` (with each layout flag) print the same text
//! in tern_q, tern_router_q, tern_history, tern_router_history,
//! tern_status and tern_userprio, and every one of them has `-json`.

use crate::common::RunEnv;
use crate::common::process::{TIMEOUT, wait_until};

/// Expressions of every kind of value, evaluated the same against any ad.
const EXPRS: &[&str] = &[
    "3.0/7",
    "1e30",
    "10",
    "false",
    "\"a\\\"b\"",
    "{1, \"x\", 2.5}",
    "undefined",
    "strcat(\"p\", 7)",
];

/// The first line each tool prints for `args` (they list one ad or more).
fn first_lines(env: &RunEnv, tools: &[(&str, &[&str])], args: &[&str]) -> Vec<(String, String)> {
    tools
        .iter()
        .map(|(tool, pre)| {
            let argv: Vec<&str> = pre.iter().chain(args).copied().collect();
            let out = env.run_ok(tool, &argv);
            let first = out.lines().next().unwrap_or("").to_string();
            (tool.to_string(), first)
        })
        .collect()
}

#[test]
fn every_listing_tool_prints_values_alike() {
    let env = RunEnv::new();
    // A held job stays in the queue (tern_q, tern_router_q: it names a
    // route); one that ran is in the history (tern_history,
    // tern_router_history) and gave its owner an accountant record
    // (tern_userprio).
    env.submit(
        "held.sub",
        "executable = /bin/true\nhold = true\n+RouteName = \"r1\"\nqueue\n",
    );
    env.submit(
        "ran.sub",
        "executable = /bin/true\n+RouteName = \"r1\"\nqueue\n",
    );
    env.negotiate();
    assert!(
        wait_until(TIMEOUT, || env.history_af("2.0", &["ExitCode"]).as_deref()
            == Some("0")),
        "job 2.0 did not finish"
    );
    env.negotiate();
    let tools: &[(&str, &[&str])] = &[
        ("tern_q", &["1.0"]),
        ("tern_router_q", &[]),
        ("tern_history", &["2.0"]),
        ("tern_router_history", &[]),
        ("tern_status", &[]),
        ("tern_userprio", &[]),
    ];
    for flags in ["-af", "-af:V", "-af:r", "-af:,", "-af:t"] {
        let mut args = vec![flags];
        args.extend(EXPRS);
        let lines = first_lines(&env, tools, &args);
        let (_, want) = &lines[0];
        assert!(!want.is_empty(), "{flags}: tern_q printed nothing");
        for (tool, got) in &lines {
            assert_eq!(got, want, "{tool} {flags} prints values unlike tern_q");
        }
    }
    // -json: one array, of the ads each lists.
    for (tool, pre) in tools {
        let argv: Vec<&str> = pre.iter().copied().chain(["-json"]).collect();
        let out = env.run_ok(tool, &argv);
        let v: serde_json::Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{tool} -json: {e}: {out}"));
        assert!(
            v.as_array().is_some_and(|a| !a.is_empty()),
            "{tool} -json is no array of ads: {out}"
        );
    }
}
