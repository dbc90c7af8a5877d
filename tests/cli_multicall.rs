//! The `tern` program that ./install.sh installs: it runs the tool it is
//! named after (tern_X, or condor_X for the same tool) and refuses any
//! other name.

use std::os::unix::fs::symlink;
use std::process::Command;

use crate::common::{TestEnv, bin};

const TERN: &str = env!("CARGO_BIN_EXE_tern");

fn run(exe: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(exe)
        .args(args)
        .output()
        .expect("running the linked tool")
}

#[test]
fn the_program_runs_the_tool_it_is_named_after() {
    let env = TestEnv::new();
    for (link, tool) in [
        ("tern_q", "tern_q"),
        ("condor_q", "tern_q"),
        ("condor_submit", "tern_submit"),
        ("tern_config_val", "tern_config_val"),
    ] {
        let path = env.path(link);
        symlink(TERN, &path).unwrap();
        let via_link = run(&path, &["-help"]);
        let direct = Command::new(bin(tool)).arg("-help").output().unwrap();
        assert_eq!(via_link.status.code(), direct.status.code(), "{link}");
        // Usage names the program as it was run, as clap does for any.
        assert_eq!(
            String::from_utf8_lossy(&via_link.stdout)
                .replace(&format!("Usage: {link} "), &format!("Usage: {tool} ")),
            String::from_utf8_lossy(&direct.stdout),
            "{link} is not {tool}"
        );
    }
}

#[test]
fn any_other_name_is_a_usage_error_listing_the_tools() {
    let out = Command::new(TERN).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("names no tool") && err.contains("tern_submit"),
        "{err}"
    );
}
