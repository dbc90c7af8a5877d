//! `tern_gridmanager`: the supervisor of one owner's grid universe jobs
//! (see [`crate::grid`]). Started by the negotiation pass; not meant to
//! be run by hand.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

use super::{CliError, parse_args, run_tool};
use crate::config::Config;
use crate::grid::GridError;

/// Run one owner's grid universe jobs (started by tern_negotiate).
#[derive(Parser, Debug)]
#[command(name = "tern_gridmanager", version)]
pub struct Args {
    /// The owner whose grid jobs to manage
    pub owner: String,
}

pub fn main() -> ExitCode {
    run_tool("tern_gridmanager", run)
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (args, _) = parse_args::<Args>(argv)?;
    let cfg = Config::load()?;
    crate::grid::run(&cfg, &args.owner).map_err(|e| match e {
        GridError::Queue(q) => super::env::queue_error(q),
        GridError::Config(c) => c.into(),
        GridError::NoSpool => CliError::Failed {
            msg: e.to_string(),
            hint: Some("set SPOOL in the configuration or _TERN_SPOOL in the environment".into()),
        },
        e @ (GridError::Io { .. } | GridError::Unreachable(_)) => CliError::Failed {
            msg: e.to_string(),
            hint: None,
        },
    })
}
