//! Descriptors a parent hands to the process it starts, by number, in the
//! environment (the pass gives a shadow its job's lock this way).

use std::fs::File;
use std::io;
use std::os::fd::{FromRawFd, RawFd};

/// Takes ownership of descriptor `fd` inherited from the parent, and marks
/// it close-on-exec so the programs this process starts do not inherit it
/// in turn. Fails when `fd` is not an open descriptor.
///
/// Call it once per descriptor, for one the parent passed on purpose:
/// the returned `File` closes it when dropped.
pub fn adopt(fd: RawFd) -> io::Result<File> {
    // SAFETY: fcntl only reads and sets the descriptor flags; an invalid
    // descriptor makes it fail with EBADF, which we report.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the descriptor is open (checked above), and the parent passed
    // it to this process for us alone, so nothing else owns or closes it.
    Ok(unsafe { File::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_closed_descriptor_is_an_error() {
        let e = super::adopt(987_654).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EBADF));
    }
}
