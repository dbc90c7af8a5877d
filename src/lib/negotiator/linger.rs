//! The lingering mark: how a submit knows that a shadow will take its job.
//!
//! A shadow whose job ends while the queue has no idle job keeps its claim
//! a moment (Claimed/Idle, `SHADOW_LINGER_MSEC`) and watches the queue, so
//! that a script submitting one job after another has each job started by
//! a shadow already running, with no pass and no new process. While it
//! watches it holds a shared lock on `$(SPOOL)/negotiator.linger`.
//!
//! A submit that finds the mark held asks for no pass ([`someone_lingers`]).
//! That is safe because of the order on both sides: the submit commits its
//! job before it looks at the mark, and a lingering shadow lets the mark go
//! before it asks for a pass (which every shadow does when it ends). So
//! either the shadow still watched when the job was committed (it takes the
//! job, or, finding work it cannot take, ends and asks for the pass), or
//! the submit saw no mark and asked for the pass itself. (A submit that
//! finds every slot taken by a live shadow asks for no pass either:
//! [`super::on_submit`].)

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

pub fn path(spool: &Path) -> PathBuf {
    spool.join("negotiator.linger")
}

fn open(spool: &Path) -> io::Result<File> {
    crate::sys::fs::spool_lock_file(&path(spool))
}

/// A lingering shadow's hold on the mark; dropping it lets the mark go.
pub struct Mark {
    _file: File,
}

impl Mark {
    /// Takes the mark (shared: every lingering shadow holds it at once).
    pub fn take(spool: &Path) -> io::Result<Mark> {
        let file = open(spool)?;
        file.lock_shared()?;
        Ok(Mark { _file: file })
    }
}

/// Whether some shadow holds the mark now. An error reads as "no": the
/// caller then asks for a pass, which is never wrong, only slower.
pub fn someone_lingers(spool: &Path) -> bool {
    let Ok(file) = open(spool) else {
        return false;
    };
    matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mark_is_seen_while_held_and_only_then() {
        let dir = std::env::temp_dir().join(format!("tern-linger-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(!someone_lingers(&dir));
        let a = Mark::take(&dir).unwrap();
        let b = Mark::take(&dir).unwrap();
        assert!(someone_lingers(&dir));
        drop(a);
        assert!(someone_lingers(&dir), "one holder left");
        drop(b);
        assert!(!someone_lingers(&dir));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
