//! The one place the router acts as a job's owner (issue item 7): running
//! a hook (and, through the grid layer, sbatch) and writing to the owner's
//! event log. Today every tern tool runs as the user who invokes it and the
//! queue is that user's, so acting as the owner is acting as oneself. A
//! later shared mode (one queue for every user, the router run as root)
//! switches here, and only here, to the owner's uid and groups.

use std::path::Path;

use crate::userlog::{Event, UserLogError};

/// Whether the router may run `program` as `owner`. Run as root for
/// another user it is refused rather than run with root's rights: the
/// switch to the owner belongs to the shared mode, which is not there yet.
pub fn may_act_as(owner: &str, program: &Path) -> Result<(), String> {
    if crate::sys::identity::is_root() && owner != "root" {
        return Err(format!(
            "the router runs as root and cannot yet act as {owner} (no shared mode): \
             {} not run",
            program.display()
        ));
    }
    Ok(())
}

/// Appends events to the owners' event logs.
pub fn log_events(items: &[(crate::userlog::UserLog, Event)]) -> Result<(), UserLogError> {
    crate::userlog::log_job_events(items)
}
