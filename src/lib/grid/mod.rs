//! Grid universe execution: what HTCondor's gridmanager (with BLAHP for
//! Slurm, and the C-GAHP for another schedd) does for jobs with
//! `JobUniverse = 9`, as one supervisor per owner, `tern_gridmanager`.
//!
//! A grid job matches no slot. The negotiation pass starts the owner's
//! gridmanager when grid jobs need work ([`crate::negotiator::gridjobs`]);
//! it claims them (`Managed = "External"`), submits each to the backend its
//! GridResource names ([`resource`]), follows it at a bounded rate
//! (GRIDMANAGER_JOB_PROBE_INTERVAL, sooner when the queue changes),
//! mirrors its state into the job and its event log, carries out removals
//! and holds, and exits when nothing is left to watch. Its lock
//! (`$(SPOOL)/grid/<owner>.lock`) keeps it alone; every step that talks
//! to a backend is committed first so that a gridmanager killed at any
//! moment is replaced by one that neither loses nor repeats a job.
//!
//! * [`resource`]: GridResource and its hold messages;
//! * [`ids`]: GridJobId and GridJobStatus;
//! * [`script`]: the batch script of a Slurm job;
//! * [`slurm`]: sbatch, squeue, scontrol, sacct, scancel;
//! * [`condor`]: another tern queue as the remote schedd;
//! * [`manager`]: the per-owner loop and the rounds that move each job;
//! * `slurm_job`: a `batch slurm` job's steps (submit, follow, cancel);
//! * `changes`: what the steps change in a job (start, complete, holds),
//!   shared by both backends;
//! * [`owner`]: acting as the job's owner, one function per concern;
//! * [`events`]: the grid events.

mod changes;
pub mod condor;
pub mod events;
pub mod ids;
pub mod manager;
pub mod owner;
pub mod resource;
pub mod script;
pub mod slurm;
mod slurm_job;

use std::path::PathBuf;

use crate::config::ConfigError;
use crate::queue::QueueError;

pub use manager::{Knobs, run};

#[derive(Debug, thiserror::Error)]
pub enum GridError {
    #[error(transparent)]
    Queue(#[from] QueueError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("SPOOL is not set")]
    NoSpool,
    /// Another tern queue (a `condor` GridResource's SPOOL) that could
    /// not be opened with the job owner's rights, and why.
    #[error("{0}")]
    Unreachable(String),
    #[error("{what} {path}: {msg}")]
    Io {
        what: &'static str,
        path: PathBuf,
        msg: String,
    },
}
