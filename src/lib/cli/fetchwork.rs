//! `tern_fetchwork`: runs the fetch-work hooks of the slots that are due
//! (see [`crate::negotiator::fetch`]). Started by the negotiation pass,
//! beside it; not meant to be run by hand.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

use super::env::spool_dir;
use super::{CliError, parse_args, run_tool};
use crate::config::Config;

/// Run the due fetch-work hooks (started by tern_negotiate).
#[derive(Parser, Debug)]
#[command(name = "tern_fetchwork", version)]
pub struct Args {}

pub fn main() -> ExitCode {
    run_tool("tern_fetchwork", run)
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let _ = parse_args::<Args>(argv)?;
    let cfg = Config::load()?;
    let spool = spool_dir(&cfg)?;
    let report =
        crate::negotiator::fetch::work::run(&cfg, &spool).map_err(|e| CliError::Failed {
            msg: e.to_string(),
            hint: None,
        })?;
    crate::negotiator::fetch::work::log(&spool, &report.lines).map_err(|e| CliError::Failed {
        msg: format!(
            "cannot write {}: {e}",
            crate::negotiator::fetch::log_path(&spool).display()
        ),
        hint: None,
    })
}
