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

/// Makes the child `cmd` starts keep only descriptors 0, 1 and 2 across
/// its exec (a job gets its standard files and nothing the pass, the
/// shadow or whoever started them left open: spec section 6, step 4).
/// Runs after the `pre_exec` closures added before it, so call it last.
pub fn child_keeps_only_stdio(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe system calls on a stack buffer
    // between fork and exec (no allocation).
    unsafe {
        cmd.pre_exec(cloexec_from_3);
    }
}

/// Marks every descriptor from 3 up close-on-exec, so the exec closes
/// them all. Not closed at once: std reports a failed exec to the parent
/// through a close-on-exec pipe, which must live until the exec. Linux
/// 5.11's `close_range(3, ~0, CLOSE_RANGE_CLOEXEC)` does it in one call;
/// before that, each descriptor `/proc/self/fd` lists is marked.
fn cloexec_from_3() -> io::Result<()> {
    // SAFETY: a system call on plain integers.
    let r = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if r == 0 {
        return Ok(());
    }
    cloexec_listed()
}

/// The fallback of [`cloexec_from_3`]: getdents64 on `/proc/self/fd` into
/// a stack buffer (readdir would allocate, which a child between fork and
/// exec must not).
fn cloexec_listed() -> io::Result<()> {
    // SAFETY: open of a NUL-terminated literal; the descriptor is closed
    // below on every path.
    let dir = unsafe {
        libc::open(
            c"/proc/self/fd".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if dir < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut buf = [0u8; 2048];
    let result = loop {
        // SAFETY: getdents64 writes at most buf.len() bytes into buf.
        let n = unsafe { libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), buf.len()) };
        if n < 0 {
            break Err(io::Error::last_os_error());
        }
        if n == 0 {
            break Ok(());
        }
        let mut off = 0usize;
        while off + 19 < n as usize {
            // struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name.
            let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
            if reclen == 0 {
                break;
            }
            if let Some(fd) = fd_number(&buf[off + 19..(off + reclen).min(n as usize)])
                && fd > 2
                && fd != dir
            {
                // SAFETY: fcntl on a descriptor number; a closed one is EBADF.
                unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
            }
            off += reclen;
        }
    };
    // SAFETY: closing the descriptor opened above.
    unsafe { libc::close(dir) };
    result
}

/// A NUL-terminated decimal name as a descriptor number (`.` and `..`
/// are not).
fn fd_number(name: &[u8]) -> Option<RawFd> {
    let mut n: RawFd = 0;
    let mut digits = 0;
    for &b in name.iter().take_while(|&&b| b != 0) {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(RawFd::from(b - b'0'))?;
        digits += 1;
    }
    (digits > 0).then_some(n)
}

#[cfg(test)]
mod tests {
    use std::io;

    #[test]
    fn names_in_proc_self_fd_read_as_descriptor_numbers() {
        assert_eq!(super::fd_number(b"17\0\0"), Some(17));
        assert_eq!(super::fd_number(b"0\0"), Some(0));
        assert_eq!(super::fd_number(b".\0"), None);
        assert_eq!(super::fd_number(b"..\0"), None);
        assert_eq!(super::fd_number(b"\0"), None);
    }

    /// A command whose child has `/dev/null` at descriptor 7, not
    /// close-on-exec (only the child: one left open in the test process
    /// would reach every other test's children), and says whether 7 is
    /// open after its exec.
    fn with_7_inherited() -> std::process::Command {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        let null = std::fs::File::open("/dev/null").unwrap();
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.args(["-c", "[ -e /proc/self/fd/7 ] && echo open || echo closed"]);
        // SAFETY: dup2 and fcntl are async-signal-safe; the closure owns
        // `null`, so it is open for as long as the command can be spawned.
        // When `null` itself got descriptor 7 (the test process's lowest
        // free one at the time), dup2 leaves its close-on-exec flag as it
        // is, so the flag is cleared explicitly.
        unsafe {
            cmd.pre_exec(move || {
                if libc::dup2(null.as_raw_fd(), 7) < 0 || libc::fcntl(7, libc::F_SETFD, 0) < 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        cmd
    }

    /// Both ways of marking work: the fallback is what a kernel before
    /// 5.11 gets.
    #[test]
    fn only_the_standard_descriptors_cross_an_exec() {
        let said = |mut cmd: std::process::Command| {
            String::from_utf8(cmd.output().unwrap().stdout).unwrap()
        };
        assert_eq!(said(with_7_inherited()), "open\n", "without it, 7 crosses");
        let mut cmd = with_7_inherited();
        super::child_keeps_only_stdio(&mut cmd);
        assert_eq!(said(cmd), "closed\n");
        let mut cmd = with_7_inherited();
        {
            use std::os::unix::process::CommandExt;
            // SAFETY: as child_keeps_only_stdio.
            unsafe {
                cmd.pre_exec(super::cloexec_listed);
            }
        }
        assert_eq!(said(cmd), "closed\n", "the /proc/self/fd fallback");
    }

    #[test]
    fn a_closed_descriptor_is_an_error() {
        let e = super::adopt(987_654).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EBADF));
    }
}
