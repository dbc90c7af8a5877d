//! `tern_rm`: removes jobs from the queue, as HTCondor's `condor_rm`.
//!
//! An idle or held job leaves the queue for the history at once; a running
//! one is marked removed (JobStatus 3) and leaves once its shadow has
//! stopped it. See [`super::edit`] for how jobs are chosen and reported.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

use super::edit::{Common, JobCommand};
use super::{CliError, parse_args, run_tool};
use crate::actions::Action;

/// Remove jobs from the queue.
///
/// Jobs are named by cluster (every job in it), cluster.proc, user (every
/// job of that user), -constraint or -all; only your own jobs can be
/// removed, unless you are named in QUEUE_SUPER_USERS. A job that is running
/// is marked for removal and stopped; one that is not leaves the queue for
/// the history (see tern_history) at once.
#[derive(Parser, Debug)]
#[command(
    name = "tern_rm",
    version,
    after_help = "Examples:\n  tern_rm 12.0\n  tern_rm 12\n  tern_rm -constraint 'JobStatus =!= 2'\n  tern_rm -all"
)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,

    /// Record this as the RemoveReason, instead of "via tern_rm"
    #[arg(long, value_name = "REASON")]
    pub reason: Option<String>,

    /// Take jobs already marked for removal out of the queue now, without
    /// waiting for whatever runs them
    #[arg(long)]
    pub forcex: bool,
}

pub fn main() -> ExitCode {
    run_tool("tern_rm", run)
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (args, _) = parse_args::<Args>(argv)?;
    let action = if args.forcex {
        Action::ForceRemove
    } else {
        Action::Remove
    };
    JobCommand::new("tern_rm", action, &args.common, args.reason.clone())?.run()
}
