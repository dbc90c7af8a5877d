//! Editing the accountant's table, as condor_userprio's setters do through
//! the negotiator (`-setprio`, `-setfactor`, `-resetusage`, `-resetall`,
//! `-delete`).
//!
//! The table belongs to [`crate::negotiator::accountant`], which writes it
//! through the system's [`crate::queue::Writer`]; [`edit`] is the one way a
//! user's edit reaches it, and it refuses a user who may not edit
//! priorities ([`Authority::may_edit_priorities`]: a super user, or in
//! personal mode the owner of SPOOL) before it writes anything, so a tool,
//! the router or a hook cannot forget the check.

use super::Authority;
use crate::negotiator::accountant::{self, Knobs};
use crate::queue::{Queue, QueueError};

/// One change to the accountant.
#[derive(Clone, Debug, PartialEq)]
pub enum Edit {
    SetPrio(String, f64),
    SetFactor(String, f64),
    ResetUsage(String),
    ResetAll,
    Delete(String),
}

/// Why an edit was not made.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// The user may not edit priorities; nothing was written.
    #[error("permission denied: {user} may not change user priorities")]
    NotPermitted { user: String },
    #[error(transparent)]
    Queue(#[from] QueueError),
}

/// Makes `edit` in one transaction, as of `now`, for `authority`.
pub fn edit(
    queue: &mut Queue,
    authority: &Authority,
    edit: &Edit,
    knobs: &Knobs,
    now: i64,
) -> Result<(), EditError> {
    if !authority.may_edit_priorities() {
        return Err(EditError::NotPermitted {
            user: authority.user().to_string(),
        });
    }
    // The check is made: the table is written as the system, the only
    // writer that hands out the connection other modules' tables need.
    queue.write(now, |w| {
        let c = w.conn();
        match edit {
            Edit::SetPrio(u, v) => accountant::set_priority(c, u, *v, now, knobs),
            Edit::SetFactor(u, v) => accountant::set_factor(c, u, *v, now, knobs),
            Edit::ResetUsage(u) => accountant::reset_usage(c, Some(u), now),
            Edit::ResetAll => accountant::reset_usage(c, None, now),
            Edit::Delete(u) => accountant::delete(c, u).map(|_| ()),
        }
    })?;
    Ok(())
}
