//! `tern_continue`: resumes suspended jobs, as HTCondor's `condor_continue`
//! (the module is not named `continue`, which is a Rust keyword).
//!
//! The shadow of each suspended job chosen sends SIGCONT to the job's
//! processes, sets JobStatus 2 (running) again and writes event 011. See
//! [`super::edit`] for how jobs are chosen and reported.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

use super::edit::{Common, JobCommand};
use super::{CliError, parse_args, run_tool};
use crate::actions::Action;

/// Continue suspended jobs: they run again from where they stopped.
///
/// Jobs are named by cluster (every job in it), cluster.proc, user (every
/// job of that user), -constraint or -all; only your own jobs can be
/// continued, unless you are named in QUEUE_SUPER_USERS. Only suspended
/// jobs (see tern_suspend) are continued.
#[derive(Parser, Debug)]
#[command(
    name = "tern_continue",
    version,
    after_help = "Examples:\n  tern_continue 12.0\n  tern_continue -all"
)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
}

pub fn main() -> ExitCode {
    run_tool("tern_continue", run)
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (args, _) = parse_args::<Args>(argv)?;
    JobCommand::new("tern_continue", Action::Continue, &args.common, None)?.run()
}
