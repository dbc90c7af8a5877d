//! `tern_release`: releases held jobs, as HTCondor's `condor_release`.
//!
//! A released job goes back to the state it had before it was held (idle,
//! or removed if it was removed while held), and its hold reason becomes
//! its last hold reason. See [`super::edit`] for how jobs are chosen and
//! reported.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

use super::edit::{Common, JobCommand};
use super::{CliError, parse_args, run_tool};
use crate::actions::Action;

/// Release held jobs.
///
/// Jobs are named by cluster (every job in it), cluster.proc, user (every
/// job of that user), -constraint or -all; only your own jobs can be
/// released, unless you are named in QUEUE_SUPER_USERS. Only held jobs are
/// released; they become idle and may run again.
#[derive(Parser, Debug)]
#[command(
    name = "tern_release",
    version,
    after_help = "Examples:\n  tern_release 12.0\n  tern_release alice\n  tern_release -constraint 'HoldReasonCode == 1'"
)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,

    /// Record this as the ReleaseReason, instead of "via tern_release"
    #[arg(long, value_name = "REASON")]
    pub reason: Option<String>,
}

pub fn main() -> ExitCode {
    run_tool("tern_release", run)
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (args, _) = parse_args::<Args>(argv)?;
    JobCommand::new(
        "tern_release",
        Action::Release,
        &args.common,
        args.reason.clone(),
    )?
    .run()
}
