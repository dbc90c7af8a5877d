//! The pass lock and the pass-wanted mark: how a pass is asked for
//! ([`request_pass`]), and the opens, waits and marks [`super::negotiate`]
//! serialises passes with (see the parent module's docs).

use std::fs::File;
use std::path::Path;

use super::{NegotiatorError, activation, io, launch, linger, lock_path, wanted_path};
use crate::config::Config;

/// Asks for a pass soon, as tern_submit does after a submit and a shadow
/// when its slot falls free. A pass holding the lock now is left the mark
/// (it runs once more before it ends, see [`negotiate`]), so a loop of
/// submits starts no process while a pass runs; with no pass running, one
/// is started in the background. Returns whether it started one.
pub fn request_pass(cfg: &Config, spool: &Path) -> Result<bool, NegotiatorError> {
    if activation::only_marks(cfg)? {
        // Shared mode, not root: a user cannot start a root pass, and
        // there is no user pass this round; the mark starts one (systemd's
        // path unit, cron, or `tern_negotiate -loop -watch`).
        mark_wanted(spool)?;
        return Ok(false);
    }
    let lock = open_lock(spool)?;
    if !try_lock(&lock)? {
        mark_wanted(spool)?;
        // The holder may have looked for marks just before we made ours:
        // then it is gone or going, and the lock is free.
        if !try_lock(&lock)? {
            return Ok(false);
        }
    }
    drop(lock);
    launch::spawn_background_pass(cfg).map_err(io("cannot start tern_negotiate"))?;
    Ok(true)
}

/// [`request_pass`] after a submit, unless a shadow is lingering: it takes
/// the new job itself, or ends and asks for the pass (see [`linger`]).
pub fn request_pass_after_submit(cfg: &Config, spool: &Path) -> Result<bool, NegotiatorError> {
    if linger::someone_lingers(spool) {
        return Ok(false);
    }
    request_pass(cfg, spool)
}

/// The pass lock and the mark are opened as SPOOL's own files: a planted
/// link or FIFO is refused (see `sys::fs::open_spool_file`).
pub(super) fn open_lock(spool: &Path) -> Result<File, NegotiatorError> {
    let how = crate::sys::fs::SpoolOpen {
        create: true,
        append: false,
    };
    // Its errors name the file.
    crate::sys::fs::open_spool_file(&lock_path(spool), how)
        .map_err(io("cannot open the negotiator lock file"))
}

/// Takes the lock, waiting at most `bound` for its holder; whether it is
/// ours.
pub(super) fn lock_within(f: &File, bound: std::time::Duration) -> Result<bool, NegotiatorError> {
    let deadline = std::time::Instant::now() + bound;
    loop {
        if try_lock(f)? {
            return Ok(true);
        }
        if std::time::Instant::now() >= deadline {
            return Ok(false);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

pub(super) fn try_lock(f: &File) -> Result<bool, NegotiatorError> {
    match f.try_lock() {
        Ok(()) => Ok(true),
        Err(std::fs::TryLockError::WouldBlock) => Ok(false),
        Err(std::fs::TryLockError::Error(e)) => Err(io("cannot lock the negotiator lock file")(e)),
    }
}

pub(super) fn mark_wanted(spool: &Path) -> Result<(), NegotiatorError> {
    let how = crate::sys::fs::SpoolOpen {
        create: true,
        append: false,
    };
    crate::sys::fs::open_spool_file(&wanted_path(spool), how)
        .map_err(io("cannot leave the pass-wanted mark"))?;
    Ok(())
}
