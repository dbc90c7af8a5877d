//! Waiting for a name in a directory to be created, touched or renamed
//! into place, with inotify(7): how a root `tern_negotiate -loop -watch`
//! learns of the pass-wanted mark without polling.

use std::ffi::OsStr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// A watch on one directory for events on one name in it.
pub struct NameWatch {
    fd: OwnedFd,
    name: Vec<u8>,
}

impl NameWatch {
    /// Watches `dir` for `name` created (IN_CREATE), its attributes
    /// changed (IN_ATTRIB: `touch` of a mark already there) or renamed
    /// into place (IN_MOVED_TO). libc rather than nix: inotify is three
    /// calls, and nix is not among tern's dependencies.
    pub fn new(dir: &Path, name: &OsStr) -> std::io::Result<NameWatch> {
        // SAFETY: inotify_init1 has no preconditions; the result is checked.
        let raw = unsafe { libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK) };
        if raw < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: raw is a fresh descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let cdir = std::ffi::CString::new(dir.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        let mask = libc::IN_CREATE | libc::IN_ATTRIB | libc::IN_MOVED_TO | libc::IN_ONLYDIR;
        // SAFETY: fd is an inotify descriptor and cdir a NUL-terminated path.
        if unsafe { libc::inotify_add_watch(fd.as_raw_fd(), cdir.as_ptr(), mask) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(NameWatch {
            fd,
            name: name.as_bytes().to_vec(),
        })
    }

    /// Waits until an event names the watched name, or `timeout` passes.
    /// Returns whether one did; events queued before the call count.
    pub fn wait(&self, timeout: Duration) -> std::io::Result<bool> {
        let deadline = Instant::now() + timeout;
        loop {
            if self.drain()? {
                return Ok(true);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            let mut pfd = libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
            // SAFETY: one valid pollfd for the call's duration.
            if unsafe { libc::poll(&mut pfd, 1, ms) } < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }

    /// Reads every queued event; whether one named the name (or the queue
    /// overflowed, which may have lost one).
    fn drain(&self) -> std::io::Result<bool> {
        let mut seen = false;
        // Aligned for the event headers the kernel writes.
        let mut buf = [0u64; 512];
        let bytes = std::mem::size_of_val(&buf);
        loop {
            // SAFETY: buf is writable for `bytes` bytes.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), bytes) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                return match e.kind() {
                    std::io::ErrorKind::WouldBlock => Ok(seen),
                    std::io::ErrorKind::Interrupted => continue,
                    _ => Err(e),
                };
            }
            let n = n as usize;
            // SAFETY: the first n bytes of buf were written by read.
            let data: &[u8] = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast(), n) };
            let head = std::mem::size_of::<libc::inotify_event>();
            let mut at = 0;
            while at + head <= n {
                // SAFETY: the kernel wrote a whole event header at `at`;
                // read_unaligned since names pad events to 4 bytes only.
                let ev: libc::inotify_event =
                    unsafe { std::ptr::read_unaligned(data[at..].as_ptr().cast()) };
                let len = ev.len as usize;
                let raw = &data[(at + head).min(n)..(at + head + len).min(n)];
                let name = raw.split(|b| *b == 0).next().unwrap_or(&[]);
                if ev.mask & libc::IN_Q_OVERFLOW != 0 || name == self.name.as_slice() {
                    seen = true;
                }
                at += head + len;
            }
        }
    }
}
