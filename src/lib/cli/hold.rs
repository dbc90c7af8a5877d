//! `tern_hold`: puts jobs on hold, as HTCondor's `condor_hold`.
//!
//! A held job stays in the queue and is not run until `tern_release`; a
//! running job put on hold is stopped by its shadow. See [`super::edit`]
//! for how jobs are chosen and reported.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

use super::edit::{Common, JobCommand};
use super::{CliError, parse_args, run_tool};
use crate::actions::Action;

/// Put jobs on hold.
///
/// Jobs are named by cluster (every job in it), cluster.proc, user (every
/// job of that user), -constraint or -all; only your own jobs can be held,
/// unless you are named in QUEUE_SUPER_USERS. A held job stays in the queue
/// but does not run until released with tern_release; a running job put on
/// hold is stopped.
#[derive(Parser, Debug)]
#[command(
    name = "tern_hold",
    version,
    after_help = "Examples:\n  tern_hold 12.0\n  tern_hold -reason 'input not ready' 12\n  tern_hold -constraint 'JobStatus != 2'"
)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,

    /// Record this as the HoldReason, instead of "via tern_hold"
    #[arg(long, value_name = "REASON")]
    pub reason: Option<String>,

    /// Set HoldReasonSubCode to this number (default 0)
    #[arg(long, value_name = "NUMBER", allow_negative_numbers = true)]
    pub subcode: Option<i64>,
}

pub fn main() -> ExitCode {
    run_tool("tern_hold", run)
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (args, _) = parse_args::<Args>(argv)?;
    let mut req = JobCommand::new("tern_hold", Action::Hold, &args.common, args.reason.clone())?;
    req.subcode = args.subcode;
    req.run()
}
