//! The one place the router acts as a job's owner (issue item 7): running
//! a hook (and, through the grid layer, sbatch) and writing to the owner's
//! event log. A router run by its user acts as itself. A router run as
//! root (a root pass's, in shared mode or over another user's queue) runs
//! each hook as the job's owner for good, as the shadow runs its hooks:
//! the owner's uid, groups and umask ([`JobOwner::identity`], whose rules
//! hold a job it may not act for), and writes event logs as the owner.

use crate::sys::identity::{Identity, JobOwner};
use crate::userlog::{Event, UserLogError};

/// Whom the router runs a hook as for a job of `owner`: `None` for
/// itself (not root, or root's own job root may run), else the owner; an
/// error is why it may not act for them (the hook is not run).
pub fn hook_identity(owner: &JobOwner) -> Result<Option<Identity>, String> {
    if !crate::sys::identity::is_root() {
        return Ok(None);
    }
    owner
        .identity()
        .map_err(|why| format!("the router runs as root and may not act for the job: {why}"))
}

/// Appends events to the owners' event logs.
pub fn log_events(items: &[(crate::userlog::UserLog, Event)]) -> Result<(), UserLogError> {
    crate::userlog::log_job_events(items)
}
