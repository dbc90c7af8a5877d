//! One program for every tool, chosen by the name it is run under, as
//! busybox does: `./install.sh` installs this program once and links each
//! tool's name to it, so the installed tools share one copy of the code
//! (17 separate binaries would carry 17 copies of SQLite and the library).
//! A name `condor_X` runs `tern_X`, so links named as HTCondor's tools
//! work for programs written for HTCondor.

use std::process::ExitCode;

use super::*;

/// A tool's entry point.
pub type Main = fn() -> ExitCode;

/// Every tool, by name, with its entry point.
pub const TOOLS: &[(&str, Main)] = &[
    ("tern_complete", complete::main),
    ("tern_config_val", config_val::main),
    ("tern_continue", continue_job::main),
    ("tern_cron", cron::main),
    ("tern_eval", eval::main),
    ("tern_fetchwork", fetchwork::main),
    ("tern_gridmanager", gridmanager::main),
    ("tern_history", history::main),
    ("tern_hold", hold::main),
    ("tern_job_router", job_router::main),
    ("tern_negotiate", negotiate::main),
    ("tern_prio", prio::main),
    ("tern_q", q::main),
    ("tern_qedit", qedit::main),
    ("tern_release", release::main),
    ("tern_rm", rm::main),
    ("tern_router_history", router_history::main),
    ("tern_router_q", router_q::main),
    ("tern_router_rm", router_rm::main),
    ("tern_shadow", shadow::main),
    ("tern_status", status::main),
    ("tern_submit", submit::main),
    ("tern_suspend", suspend::main),
    ("tern_transform_ads", transform_ads::main),
    ("tern_userprio", userprio::main),
    ("tern_vacate_job", vacate_job::main),
    ("tern_watch_q", watch_q::main),
];

/// Tools run by name but left out of the list above (and so out of the
/// completions and the usage message): root's installer, which the
/// package's postinst runs as /usr/libexec/tern/tern_install.
pub const HIDDEN: &[(&str, Main)] = &[("tern_install", install::main)];

/// The tool a program name runs: its file name, `condor_` read as
/// `tern_`.
pub fn tool_for(argv0: &std::ffi::OsStr) -> Option<Main> {
    let base = std::path::Path::new(argv0).file_name()?.to_str()?;
    let name = match base.strip_prefix("condor_") {
        Some(rest) => format!("tern_{rest}"),
        None => base.to_string(),
    };
    TOOLS
        .iter()
        .find(|(n, _)| *n == name)
        // Hidden tools answer to their own name only, not condor_'s.
        .or_else(|| HIDDEN.iter().find(|(n, _)| *n == base))
        .map(|(_, f)| *f)
}

/// Runs the tool named by `argv[0]`; any other name is a usage error
/// (exit 2) listing the names.
pub fn main() -> ExitCode {
    // First, before anything reads the environment or changes ids: a
    // set-group-id start drops the group and the caller's environment.
    crate::sys::privilege::secure_start();
    let argv0 = std::env::args_os().next().unwrap_or_default();
    if let Some(tool) = tool_for(&argv0) {
        return tool();
    }
    let names: Vec<&str> = TOOLS.iter().map(|(n, _)| *n).collect();
    note!(
        "tern: run as '{}', which names no tool. This program runs the tool it is\n\
         named after: link it as one of\n  {}\n(or as condor_q, condor_submit, ... for the same tools).",
        argv0.to_string_lossy(),
        names.join(" ")
    );
    ExitCode::from(2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn names_choose_tools() {
        let q = tool_for(OsStr::new("/usr/local/bin/tern_q")).unwrap();
        assert!(std::ptr::fn_addr_eq(q, q::main as Main));
        let c = tool_for(OsStr::new("condor_submit")).unwrap();
        assert!(std::ptr::fn_addr_eq(c, submit::main as Main));
        assert!(tool_for(OsStr::new("tern")).is_none());
        assert!(tool_for(OsStr::new("condor_startd")).is_none());
    }

    #[test]
    fn every_binary_is_in_the_table() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bin");
        for e in std::fs::read_dir(dir).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().replace(".rs", "");
            assert!(
                TOOLS.iter().any(|(n, _)| *n == name),
                "{name} is missing from multicall::TOOLS"
            );
        }
    }
}
