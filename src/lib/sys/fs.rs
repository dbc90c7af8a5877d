//! File-system and descriptor calls: free space (statvfs) and letting one
//! descriptor cross an exec (fcntl).

use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// KiB free to unprivileged users on the file system holding `path`
/// (statvfs's `f_bavail` blocks of `f_frsize` bytes).
pub fn free_kib(path: &Path) -> io::Result<i64> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the path holds a NUL byte"))?;
    // SAFETY: statvfs writes only into the zeroed struct we own, and the
    // path is a valid NUL-terminated string for the duration of the call.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((st.f_bavail as u128 * st.f_frsize as u128 / 1024) as i64)
}

/// Whether the effective user may enter (search) the directory `dir`:
/// faccessat with AT_EACCESS, so a root process acting as a user
/// ([`super::identity::act_as`]) gets the user's answer, where access(2)
/// would answer for the real user, root.
pub fn may_enter(dir: &Path) -> io::Result<()> {
    let c = CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the path holds a NUL byte"))?;
    // SAFETY: the path is a valid NUL-terminated string for the call.
    let rc = unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::X_OK, libc::AT_EACCESS) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// mkfifo(3): a FIFO at `path` with `mode` (cut by the umask).
pub fn mkfifo(path: &Path, mode: libc::mode_t) -> io::Result<()> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the path holds a NUL byte"))?;
    // SAFETY: the path is a valid NUL-terminated string for the call.
    if unsafe { libc::mkfifo(c.as_ptr(), mode) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Clears close-on-exec on `fd`, so a program started next inherits it.
pub fn inherit_across_exec(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl(2) on a descriptor number has no memory effects; a bad
    // one is reported as EBADF.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `name` made safe as part of a file name: every character but ASCII
/// letters, digits and `_` becomes `_`.
pub fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_space_of_the_temp_dir() {
        assert!(free_kib(&std::env::temp_dir()).unwrap() >= 0);
        assert!(free_kib(Path::new("/no/such/dir/here")).is_err());
    }
}
