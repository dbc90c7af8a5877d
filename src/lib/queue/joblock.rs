//! Per-job liveness locks: `$(SPOOL)/shadow/<cluster>.<proc>.lock`.
//!
//! The shadow running a job holds an exclusive `flock` on the job's file for
//! as long as it lives. The pass takes the lock before it commits a claim
//! and hands the open file to the shadow it starts, so the lock is never
//! free while the job is claimed and its shadow alive; the kernel drops it
//! when the shadow dies, however it dies. Any tool can therefore tell a
//! live shadow from a dead one with a `try_lock`.
//!
//! The files are opened with [`crate::sys::fs::open_spool_file`]: a lock
//! planted as a symbolic link, a hard link or a FIFO is refused.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use super::JobId;
use crate::sys::fs::{
    SpoolOpen, create_spool_dir, open_spool_file, remove_spool_file, spool_entry_exists,
};

pub fn dir(spool: &Path) -> PathBuf {
    spool.join("shadow")
}

pub fn path(spool: &Path, id: JobId) -> PathBuf {
    dir(spool).join(format!("{}.{}.lock", id.cluster, id.proc))
}

/// A held job lock. Dropping it releases the lock.
#[derive(Debug)]
pub struct JobLock {
    pub file: File,
    pub id: JobId,
}

/// Takes the job's lock if nobody holds it (`None` when a live shadow
/// does).
pub fn try_acquire(spool: &Path, id: JobId) -> io::Result<Option<JobLock>> {
    let d = dir(spool);
    if !spool_entry_exists(&d) {
        create_spool_dir(&d)?;
    }
    let file = open_spool_file(
        &path(spool, id),
        SpoolOpen {
            create: true,
            append: false,
        },
    )?;
    match file.try_lock() {
        Ok(()) => Ok(Some(JobLock { file, id })),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// Whether a live shadow holds the job's lock. A job without a lock file
/// has no shadow.
pub fn is_held(spool: &Path, id: JobId) -> bool {
    let p = path(spool, id);
    let Ok(file) = open_spool_file(&p, SpoolOpen::default()) else {
        return false;
    };
    matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock))
}

impl JobLock {
    /// Writes the holder's pid into the file, so tools can wake it, and
    /// the job's process group once it runs, with its leader's start time,
    /// so that the pass can kill what a dead shadow left running and only
    /// that (a process group id is reused once the group is gone).
    pub fn write_pid(&mut self, pid: u32, job_pgid: Option<i32>) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        // One fixed-width write in place: no truncation, which costs more
        // than the write on a busy shadow.
        let text = match job_pgid {
            Some(g) => match crate::sys::pids::start_time(g) {
                Some(t) => format!("{pid}\n{g} {t}\n"),
                None => format!("{pid}\n{g}\n"),
            },
            None => format!("{pid}\n"),
        };
        self.file
            .write_all_at(format!("{text:<40}").as_bytes(), 0)?;
        Ok(())
    }

    /// The job process group a (now dead) holder recorded, and when its
    /// leader started when the holder could tell.
    pub fn recorded_job_group(&self) -> Option<(i32, Option<u64>)> {
        use std::os::unix::fs::FileExt;
        // Read through the held descriptor: the name may have been
        // replaced since.
        let mut buf = vec![0u8; 256];
        let n = self.file.read_at(&mut buf, 0).ok()?;
        let text = String::from_utf8_lossy(&buf[..n]);
        let mut words = text.lines().nth(1)?.split_whitespace();
        let pgid = words.next()?.parse().ok()?;
        Some((pgid, words.next().and_then(|t| t.parse().ok())))
    }
}

/// Wakes the live shadow of a job (SIGUSR1) so it reads its requests now.
/// Returns whether a live shadow was found. A shadow that has not written
/// its pid yet reads its requests when it starts, so nothing is lost.
pub fn wake(spool: &Path, id: JobId) -> bool {
    let p = path(spool, id);
    if !is_held(spool, id) {
        return false;
    }
    let Ok(text) = open_spool_file(&p, SpoolOpen::default()).and_then(std::io::read_to_string)
    else {
        return false;
    };
    let Ok(pid) = text.lines().next().unwrap_or("").trim().parse::<i32>() else {
        return true;
    };
    if pid <= 1 {
        return true;
    }
    // The pid must still be a shadow: never signal a stranger.
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    if comm.trim() == "tern_shadow" {
        crate::sys::pids::signal_process(pid, libc::SIGUSR1);
    }
    true
}

/// Removes the lock file of a job that has left (only while holding it, so
/// a shadow never loses a file it holds).
pub fn remove(spool: &Path, lock: JobLock) {
    let _ = remove_spool_file(&path(spool, lock.id));
    drop(lock);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_is_seen_and_released_on_drop() {
        let d = tempfile::tempdir().unwrap();
        let id = JobId {
            cluster: 3,
            proc: 1,
        };
        assert!(!is_held(d.path(), id));
        let l = try_acquire(d.path(), id).unwrap().unwrap();
        assert!(is_held(d.path(), id));
        assert!(try_acquire(d.path(), id).unwrap().is_none());
        drop(l);
        assert!(!is_held(d.path(), id));
    }
}
