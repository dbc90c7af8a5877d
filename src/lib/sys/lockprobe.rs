//! Who else holds a POSIX (fcntl) lock on a byte of a file, asked of the
//! kernel with `F_GETLK`: SQLite's locks on the queue's `-shm` file say
//! whether another process has the queue open (its read lock on the DMS
//! byte) and who holds its write lock.
//!
//! Not `/proc/locks`: reading it takes the kernel's file-lock semaphore
//! for writing (`percpu_down_write`), which waits for an RCU grace period
//! unless another such read came a moment before. Measured on the
//! development machine: 40-80 µs for reads a few milliseconds apart,
//! 6-8 ms after 30 ms without one, and 10-28 ms at the first close past
//! the short log's limit in a shell loop of submits, which averaged 0.8 ms
//! a submit.
//!
//! `F_GETLK` needs a descriptor of the file, and closing any descriptor of
//! a file drops every fcntl lock this process holds on it, SQLite's
//! included. So each file asked about gets one descriptor, opened the
//! first time it is asked about and never closed: it lives as long as the
//! process (a process asks about its queue's `-shm` file, one or two
//! descriptors). A file replaced since (another inode at the path) gets a
//! new one; the old one is kept open for the same reason.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A lock another process holds on the byte asked about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Held {
    /// A write (exclusive) lock, not a read lock.
    pub write: bool,
    /// Its holder; -1 for an open-file-description lock, which belongs to
    /// no one process.
    pub pid: i32,
}

/// A descriptor opened to ask about a file: its path, the device and inode
/// it was opened on, and the descriptor.
type Probe = (PathBuf, (u64, u64), File);

/// The descriptors opened so far. Never closed (see the module's text).
static PROBES: Mutex<Vec<Probe>> = Mutex::new(Vec::new());

/// A lock another process holds covering byte `byte` of `path` (when
/// several do, the kernel names one of them); `Some(None)` when none does,
/// `None` when that cannot be told (no such file, not a regular file, or
/// not readable by this process). A set-group-id tool holds its group for
/// the look and the open: SPOOL's files are the group's.
pub fn other_holder(path: &Path, byte: u64) -> Option<Option<Held>> {
    let _group = super::privilege::raise_group();
    let md = std::fs::metadata(path).ok()?;
    if !md.is_file() {
        return None;
    }
    let id = (md.dev(), md.ino());
    let mut probes = PROBES.lock().unwrap_or_else(|e| e.into_inner());
    let fd = match probes.iter().find(|(p, i, _)| p == path && *i == id) {
        Some((_, _, f)) => f.as_raw_fd(),
        None => open_probe(path, &mut probes)?,
    };
    // A write lock on the byte conflicts with every lock of another
    // process on it, read or write; the kernel never reports our own.
    let mut fl = one_byte(libc::F_WRLCK, i64::try_from(byte).ok()?);
    // SAFETY: F_GETLK on a descriptor this process keeps open, with a
    // valid flock it writes into.
    if unsafe { libc::fcntl(fd, libc::F_GETLK, &mut fl) } != 0 {
        return None;
    }
    Some(match i32::from(fl.l_type) {
        t if t == libc::F_UNLCK => None,
        t => Some(Held {
            write: t == libc::F_WRLCK,
            pid: fl.l_pid,
        }),
    })
}

/// A lock of type `l_type` (`F_RDLCK`, `F_WRLCK`) on byte `byte` alone,
/// as fcntl's lock calls take it.
fn one_byte(l_type: i32, byte: i64) -> libc::flock {
    // SAFETY: an all-zero flock is a valid value to fill in.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = l_type as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = byte;
    fl.l_len = 1;
    fl
}

/// Opens `path` to ask about its locks (read-only, not following a link,
/// not waiting on a FIFO planted there) and keeps the descriptor under the
/// file it opened, which is the one at the path now even if the path
/// changed since it was looked at; `None` when it is not a regular file.
/// Whatever it opened stays open: closing it would drop this process's
/// locks on that file.
fn open_probe(path: &Path, probes: &mut Vec<Probe>) -> Option<i32> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    let fd = f.as_raw_fd();
    let Ok(md) = f.metadata() else {
        std::mem::forget(f);
        return None;
    };
    probes.push((path.to_path_buf(), (md.dev(), md.ino()), f));
    md.is_file().then_some(fd)
}

/// Whether a process other than this one holds a lock, read or write, on
/// byte `byte` of `path`; `None` when that cannot be told.
pub fn others_lock_byte(path: &Path, byte: u64) -> Option<bool> {
    other_holder(path, byte).map(|h| h.is_some())
}

/// The process holding a write lock on byte `byte` of `path`, if another
/// process does.
pub fn write_lock_holder(path: &Path, byte: u64) -> Option<i32> {
    match other_holder(path, byte)? {
        Some(Held { write: true, pid }) if pid > 0 => Some(pid),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::pids::{signal_process, spawn_helper_test};

    /// Locks a byte of `f` for this process (F_SETLK).
    fn lock(f: &File, write: bool, byte: i64) {
        let fl = one_byte(if write { libc::F_WRLCK } else { libc::F_RDLCK }, byte);
        // SAFETY: F_SETLK with a valid flock on a descriptor we own.
        assert_eq!(unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETLK, &fl) }, 0);
    }

    /// What our own process holds is never reported, and asking does not
    /// drop it: the probe's descriptor stays open.
    #[test]
    fn our_own_locks_are_not_anothers_and_asking_keeps_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("locked");
        std::fs::write(&path, vec![0u8; 200]).unwrap();
        let ours = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        lock(&ours, true, 120);
        assert_eq!(other_holder(&path, 120), Some(None));
        assert_eq!(others_lock_byte(&path, 128), Some(false));
        assert_eq!(write_lock_holder(&path, 120), None);
        // Asked again, the same descriptor answers.
        assert_eq!(other_holder(&path, 120), Some(None));
        let held = |p: &Path| {
            PROBES
                .lock()
                .unwrap()
                .iter()
                .filter(|(q, _, _)| q == p)
                .count()
        };
        assert_eq!(held(&path), 1);
        // Our lock is still there: asked as another owner would (an
        // open-file-description lock of `ours`), the kernel reports it
        // with our pid.
        let mut fl = one_byte(libc::F_WRLCK, 120);
        // SAFETY: F_OFD_GETLK on a descriptor we own, with a valid flock.
        assert_eq!(
            unsafe { libc::fcntl(ours.as_raw_fd(), libc::F_OFD_GETLK, &mut fl) },
            0
        );
        assert_eq!(
            i32::from(fl.l_type),
            libc::F_WRLCK,
            "our lock survived the probe"
        );
        assert_eq!(fl.l_pid, std::process::id() as i32);
        // A file put in its place is asked about through a new descriptor.
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, "").unwrap();
        assert_eq!(other_holder(&path, 120), Some(None));
        assert_eq!(held(&path), 2);
        assert_eq!(other_holder(&dir.path().join("missing"), 1), None);
        assert_eq!(other_holder(dir.path(), 1), None, "not a regular file");
    }

    #[test]
    fn a_childs_locks_are_seen_with_its_pid_and_go_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("locked");
        std::fs::write(&f, vec![0u8; 200]).unwrap();
        let Some(mut child) = spawn_helper_test(
            "sys::lockprobe::tests::hold_locks_helper",
            "TERN_TEST_LOCK_FILE",
            &f,
        ) else {
            return;
        };
        let pid = child.id() as i32;
        let end = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let mut seen = None;
        while std::time::Instant::now() < end && seen.is_none() {
            seen = write_lock_holder(&f, 120);
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let read = other_holder(&f, 128);
        let free = other_holder(&f, 121);
        signal_process(pid, libc::SIGKILL);
        let _ = child.wait();
        assert_eq!(seen, Some(pid));
        assert_eq!(read, Some(Some(Held { write: false, pid })));
        assert_eq!(write_lock_holder(&f, 128), None, "a read lock");
        assert_eq!(free, Some(None));
        assert_eq!(write_lock_holder(&f, 120), None, "gone with its holder");
        assert_eq!(others_lock_byte(&f, 128), Some(false));
    }

    /// Run by the test above in a process of its own: read-locks byte 128
    /// and write-locks byte 120 of TERN_TEST_LOCK_FILE, as SQLite's DMS
    /// byte and its writer, and sleeps.
    #[test]
    #[ignore = "a helper process of a_childs_locks_are_seen_with_its_pid_and_go_with_it"]
    fn hold_locks_helper() {
        let Some(path) = std::env::var_os("TERN_TEST_LOCK_FILE") else {
            return;
        };
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .unwrap();
        // The read lock first: the test waits for the write lock only.
        lock(&f, false, 128);
        lock(&f, true, 120);
        std::thread::sleep(std::time::Duration::from_secs(60));
    }
}
