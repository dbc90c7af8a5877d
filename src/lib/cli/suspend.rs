//! `tern_suspend`: stops running jobs where they are, as HTCondor's
//! `condor_suspend`.
//!
//! The shadow of each running job chosen sends SIGSTOP to the job's
//! processes, sets JobStatus 7 (suspended) and writes event 010; the job
//! keeps its slot. `tern_continue` ([`super::continue_job`]) undoes it. See
//! [`super::edit`] for how jobs are chosen and reported.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

use super::edit::{Common, JobCommand};
use super::{CliError, parse_args, run_tool};
use crate::actions::Action;

/// Suspend running jobs: they stop where they are and keep their slot.
///
/// Jobs are named by cluster (every job in it), cluster.proc, user (every
/// job of that user), -constraint or -all; only your own jobs can be
/// suspended, unless you are named in QUEUE_SUPER_USERS. Only running jobs
/// are suspended; tern_continue resumes them.
#[derive(Parser, Debug)]
#[command(
    name = "tern_suspend",
    version,
    after_help = "Examples:\n  tern_suspend 12.0\n  tern_suspend -constraint 'Owner =!= \"alice\"'"
)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
}

pub fn main() -> ExitCode {
    run_tool("tern_suspend", run)
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (args, _) = parse_args::<Args>(argv)?;
    JobCommand::new("tern_suspend", Action::Suspend, &args.common, None)?.run()
}
