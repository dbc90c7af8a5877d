//! `tern_shadow`: the supervisor of one claim (see [`crate::shadow`]).
//! Started by the negotiation pass; not meant to be run by hand.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

use super::{CliError, parse_args, run_tool};
use crate::queue::JobId;
use crate::shadow::ShadowError;

/// Run and supervise the job of one claim (started by tern_negotiate).
#[derive(Parser, Debug)]
#[command(name = "tern_shadow", version)]
pub struct Args {
    /// The job, cluster.proc
    pub job: String,
    /// The claimed slot's name (slot1_1)
    pub slot: String,
    /// The claim id the pass recorded on the slot
    pub claim: String,
}

pub fn main() -> ExitCode {
    // Block the shadow's signals before any thread exists, so every thread
    // inherits the mask and the signals wait in the signalfd.
    crate::shadow::procs::block();
    run_tool("tern_shadow", run)
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (args, _) = parse_args::<Args>(argv)?;
    let job = parse_job(&args.job).ok_or_else(|| CliError::Usage {
        msg: format!("'{}' is not a job id (cluster.proc)", args.job),
        hint: None,
    })?;
    crate::shadow::run(crate::shadow::Args {
        job,
        slot: args.slot,
        claim: args.claim,
    })
    .map_err(shadow_error)
}

/// A shadow's failure as the tool reports it (in the shadow log, where the
/// pass sends a shadow's stderr): the queue's and the configuration's own
/// wording and hints, and a hint where the cause is usually elsewhere.
fn shadow_error(e: ShadowError) -> CliError {
    let hint = match e {
        ShadowError::Queue(q) => return q.into(),
        ShadowError::Config(c) => return c.into(),
        ShadowError::NoSpool => {
            Some("set SPOOL in the configuration or _TERN_SPOOL in the environment")
        }
        ShadowError::AlreadySupervised { .. } => {
            Some("tern_negotiate starts shadows; one already runs this job")
        }
        ShadowError::LockFd { .. } => Some("TERN_SHADOW_LOCK_FD is set by tern_negotiate only"),
        _ => None,
    };
    CliError::Failed {
        msg: e.to_string(),
        hint: hint.map(String::from),
    }
}

fn parse_job(s: &str) -> Option<JobId> {
    let (c, p) = s.split_once('.')?;
    Some(JobId {
        cluster: c.parse().ok()?,
        proc: p.parse().ok()?,
    })
}
