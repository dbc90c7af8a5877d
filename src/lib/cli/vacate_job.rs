//! `tern_vacate_job`: stops running jobs and puts them back in the queue,
//! as HTCondor's `condor_vacate_job`.
//!
//! Each running job chosen gets a vacate request; its shadow sends the
//! job's KillSig (SIGKILL at once with `-fast`), then SIGKILL after the
//! job's vacate time, and requeues it: Idle again, event 004, VacateReason
//! and VacateReasonCode 1004. Jobs that are not running are left alone.
//! See [`super::edit`] for how jobs are chosen and reported.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

use super::edit::{Common, JobCommand};
use super::{CliError, parse_args, run_tool};
use crate::actions::Action;

/// Stop running jobs and put them back in the queue, idle, to run again.
///
/// Jobs are named by cluster (every job in it), cluster.proc, user (every
/// job of that user), -constraint or -all; only your own jobs can be
/// vacated, unless you are named in QUEUE_SUPER_USERS. A vacated job gets
/// its soft kill signal (KillSig, SIGTERM by default), then SIGKILL if it is
/// still alive after its vacate time; jobs that are not running are not
/// affected.
#[derive(Parser, Debug)]
#[command(
    name = "tern_vacate_job",
    version,
    after_help = "Examples:\n  tern_vacate_job 12.0\n  tern_vacate_job -fast alice\n  tern_vacate_job -constraint 'RequestCpus > 1'"
)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,

    /// Kill the jobs with SIGKILL at once, without the soft kill signal
    #[arg(long)]
    pub fast: bool,
}

pub fn main() -> ExitCode {
    run_tool("tern_vacate_job", run)
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (args, _) = parse_args::<Args>(argv)?;
    let action = if args.fast {
        Action::VacateFast
    } else {
        Action::Vacate
    };
    JobCommand::new("tern_vacate_job", action, &args.common, None)?.run()
}
