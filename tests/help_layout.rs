//! Every tool's help has one layout, and speaks HTCondor's spellings: the
//! options as users type them, with one dash, while `--` forms are still
//! accepted (issue 17, item 3).

use std::process::Command;

use crate::common::TOOLS;

/// Whether `text` writes some long option with two dashes (`--name` at the
/// start of a word; a lone `--` is the end of options and is fine).
fn double_dashed(text: &str) -> Option<&str> {
    text.lines().find(|l| {
        let b = l.as_bytes();
        (0..b.len().saturating_sub(2)).any(|i| {
            (i == 0 || !b[i - 1].is_ascii_alphanumeric() && b[i - 1] != b'-')
                && b[i] == b'-'
                && b[i + 1] == b'-'
                && b[i + 2].is_ascii_alphabetic()
        })
    })
}

fn help(exe: &str, flag: &str) -> String {
    let out = Command::new(exe).arg(flag).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{exe} {flag}: {out:?}");
    assert!(out.stderr.is_empty(), "{exe} {flag}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_tool_has_one_help_layout_with_single_dash_options() {
    for tool in TOOLS {
        let long = help(tool.exe, "-help");
        assert_eq!(
            long,
            help(tool.exe, "--help"),
            "{}: -help and --help",
            tool.name
        );
        let short = help(tool.exe, "-h");
        for text in [&long, &short] {
            let first = text.lines().next().unwrap_or("");
            assert!(
                !first.is_empty() && !first.starts_with("Usage"),
                "{}: help starts with what the tool does:\n{text}",
                tool.name
            );
            let usage = format!("Usage: {}", tool.name);
            assert!(
                text.lines()
                    .any(|l| l == usage || l.starts_with(&format!("{usage} "))),
                "{}: a Usage line:\n{text}",
                tool.name
            );
            assert!(
                text.contains("\nOptions:\n"),
                "{}: an Options section:\n{text}",
                tool.name
            );
            assert!(
                text.lines().any(|l| {
                    let l = l.trim_start();
                    l.starts_with("-h, -help") || l.starts_with("-help")
                }),
                "{}: -help listed:\n{text}",
                tool.name
            );
            if let Some(line) = double_dashed(text) {
                panic!("{}: an option written with two dashes: {line}", tool.name);
            }
        }
        // Every option a user can see is in the long help as it is typed.
        let cmd = (tool.command)();
        for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            if let Some(l) = arg.get_long() {
                let typed = format!("-{l}");
                assert!(
                    long.split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == ']')
                        .any(|w| w == typed
                            || w.starts_with(&format!("{typed}="))
                            || w.starts_with(&format!("{typed}<"))),
                    "{}: {typed} is not in its -help:\n{long}",
                    tool.name
                );
            }
        }
    }
}

#[test]
fn usage_errors_name_options_with_one_dash() {
    let out = Command::new(crate::common::bin("tern_rm"))
        .arg("-constraint")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("'-constraint <EXPR>'"), "{err}");
    assert!(err.contains("try '-help'"), "{err}");
    assert!(double_dashed(&err).is_none(), "{err}");
}
