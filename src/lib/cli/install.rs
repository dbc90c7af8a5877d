//! `tern_install`: the one root command that makes a shared SPOOL, run by
//! the Debian package's postinst (hidden: no man page of its own, not in
//! the completions; tern_security(7) documents it).
//!
//! It makes SPOOL and its `shadow/` and `ctl/` root:tern 2770, and the
//! queue database root:tern 0660 in WAL mode; the tools never create the
//! database in shared mode. An existing SPOOL is checked and its own mode
//! and group put right, never recursively: whatever users made inside is
//! left alone (chown -R as root in a directory others write is how cron's
//! postinst gave the crontab group root, CVE-2017-9525).
//!
//! The work is `queue::shared::install`'s; this tool finds the group,
//! checks the configuration says shared mode, and makes EXECUTE, where
//! each run's sandbox is a directory of the job's owner.

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

use clap::Parser;

use super::env::spool_dir;
use super::{CliError, parse_args, run_tool};
use crate::config::Config;

/// Make the shared SPOOL and queue database (root only; run by the
/// package's postinst).
#[derive(Parser, Debug)]
#[command(name = "tern_install", version, hide = true)]
pub struct Args {
    /// The group the tools are setgid to
    #[arg(long, value_name = "NAME", default_value = "tern")]
    pub group: String,
}

pub fn main() -> ExitCode {
    run_tool("tern_install", run)
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (args, _) = parse_args::<Args>(argv)?;
    let failed = |msg: String, hint: Option<&str>| CliError::Failed {
        msg,
        hint: hint.map(str::to_string),
    };
    if crate::sys::real_uid() != 0 {
        return Err(failed(
            "only root installs the shared queue".into(),
            Some("the package's postinst runs it; see tern_security(7)"),
        ));
    }
    let cfg = Config::load()?;
    if !crate::negotiator::activation::is_shared(&cfg)? {
        return Err(failed(
            "SHARED_QUEUE is not true in the configuration".into(),
            Some("set SHARED_QUEUE = True in /etc/tern/tern_config"),
        ));
    }
    let spool = spool_dir(&cfg)?;
    let Some(group) = crate::sys::group::by_name(&args.group) else {
        return Err(failed(
            format!("there is no group {}", args.group),
            Some("addgroup --system tern"),
        ));
    };
    crate::queue::shared::install(&spool, group.gid)?;
    make_execute(&cfg, &spool)?;
    Ok(())
}

/// EXECUTE root:root 0755, outside SPOOL: the sandboxes inside are their
/// owners' (0700), who must reach them, and nobody may reach SPOOL.
fn make_execute(cfg: &Config, spool: &Path) -> Result<(), CliError> {
    let execute = std::path::PathBuf::from(cfg.get("EXECUTE")?.unwrap_or_default());
    if !execute.is_absolute() || execute.starts_with(spool) {
        return Err(CliError::Failed {
            msg: format!(
                "EXECUTE ({}) must be an absolute directory outside SPOOL in shared mode: \
                 job owners could not reach their sandboxes",
                execute.display()
            ),
            hint: Some("set EXECUTE = /var/lib/tern-execute in /etc/tern/tern_config".into()),
        });
    }
    crate::sys::fs::own_dir(&execute, 0, 0, 0o755).map_err(|e| io_failed(&execute, e))
}
fn io_failed(p: &Path, e: std::io::Error) -> CliError {
    CliError::Failed {
        msg: format!("{}: {e}", p.display()),
        hint: None,
    }
}
