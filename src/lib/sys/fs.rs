//! File-system and descriptor calls: free space (statvfs), letting one
//! descriptor cross an exec (fcntl), and the careful opens of SPOOL's own
//! files (locks, marks, logs) that a root pass makes in a directory its
//! users' tools can also write.

use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
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

/// How [`open_spool_file`] opens a file.
#[derive(Clone, Copy, Debug, Default)]
pub struct SpoolOpen {
    /// Create the file when it does not exist.
    pub create: bool,
    /// Writes go to the end (a log).
    pub append: bool,
}

/// Opens one of SPOOL's own files (a lock, a mark, a log) read-write, with
/// the group raised in a set-group-id tool, so that nothing a user planted
/// there can turn the open to another file: never through a symbolic link
/// (`O_NOFOLLOW`), never waiting on a FIFO (`O_NONBLOCK`), close-on-exec,
/// and only a regular file with one link (fstat after the open; a hard
/// link to another file has two). A new file is made with `O_EXCL`, and in
/// a shared SPOOL (a set-group-id directory) set to mode 0660 on its
/// descriptor, as the umask would cut the open's mode. The error says what
/// was refused.
pub fn open_spool_file(path: &Path, how: SpoolOpen) -> io::Result<std::fs::File> {
    use std::os::fd::FromRawFd;
    use std::os::unix::fs::MetadataExt;
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the path holds a NUL byte"))?;
    let _group = super::privilege::raise_group();
    let mut flags = libc::O_RDWR | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
    if how.append {
        flags |= libc::O_APPEND;
    }
    let refused = |what: String| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("refusing {}: {what}", path.display()),
        )
    };
    // Two rounds: a file removed between a failed O_EXCL create and the
    // open of the existing one is created on the second.
    for _ in 0..2 {
        // SAFETY: open reads the NUL-terminated path; the descriptor it
        // returns is owned by the File made below, or closed.
        let fd = unsafe { libc::open(c.as_ptr(), flags, 0o644) };
        let fd = if fd >= 0 {
            fd
        } else {
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::ELOOP) => return Err(refused("it is a symbolic link".into())),
                Some(libc::ENOENT) if how.create => {
                    // SAFETY: as above.
                    let fd = unsafe {
                        libc::open(c.as_ptr(), flags | libc::O_CREAT | libc::O_EXCL, 0o644)
                    };
                    if fd < 0 {
                        let e = io::Error::last_os_error();
                        if e.raw_os_error() == Some(libc::EEXIST) {
                            continue;
                        }
                        return Err(e);
                    }
                    // SAFETY: fd is a descriptor we just opened and own.
                    let f = unsafe { std::fs::File::from_raw_fd(fd) };
                    if shared_dir(path) {
                        // SAFETY: fchmod on our own descriptor.
                        if unsafe { libc::fchmod(fd, 0o660) } != 0 {
                            return Err(io::Error::last_os_error());
                        }
                    }
                    return Ok(f);
                }
                _ => return Err(e),
            }
        };
        // SAFETY: fd is a descriptor we just opened and own.
        let f = unsafe { std::fs::File::from_raw_fd(fd) };
        let m = f.metadata()?;
        if !m.file_type().is_file() {
            return Err(refused("it is not a regular file".into()));
        }
        if m.nlink() != 1 {
            return Err(refused(format!("it has {} links", m.nlink())));
        }
        return Ok(f);
    }
    Err(refused("it keeps disappearing while opened".into()))
}

/// Gives the directory `path` (never through a symbolic link) the owner
/// `uid:gid` and `mode`, on its descriptor; creates it first (one level)
/// when missing. For the installer, which runs as root.
pub fn own_dir(path: &Path, uid: u32, gid: u32, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("refusing {}: it is a symbolic link", path.display()),
            ));
        }
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            std::fs::DirBuilder::new().mode(0o700).create(path)?;
        }
        Err(e) => return Err(e),
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    if !f.metadata()?.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("refusing {}: it is not a directory", path.display()),
        ));
    }
    fchown_fchmod(&f, uid, gid, mode)
}

/// Gives the regular file `path` (one link, never through a symbolic
/// link) the owner `uid:gid` and `mode`, on its descriptor; creates it
/// (`O_EXCL`) when missing. For the installer, which runs as root.
pub fn own_file(path: &Path, uid: u32, gid: u32, mode: u32) -> io::Result<()> {
    let f = spool_lock_file(path)?;
    fchown_fchmod(&f, uid, gid, mode)
}

fn fchown_fchmod(f: &std::fs::File, uid: u32, gid: u32, mode: u32) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = f.as_raw_fd();
    // SAFETY: fchown and fchmod act on our own open descriptor; the order
    // matters: fchown clears the set-group-id bit that fchmod then sets.
    if unsafe { libc::fchown(fd, uid, gid) } != 0 || unsafe { libc::fchmod(fd, mode) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// [`open_spool_file`] of a lock or mark, created when missing.
pub fn spool_lock_file(path: &Path) -> io::Result<std::fs::File> {
    open_spool_file(
        path,
        SpoolOpen {
            create: true,
            append: false,
        },
    )
}

/// [`open_spool_file`] of a log, created when missing, written at its end.
pub fn spool_log_file(path: &Path) -> io::Result<std::fs::File> {
    open_spool_file(
        path,
        SpoolOpen {
            create: true,
            append: true,
        },
    )
}

/// Whether the directory holding `path` is a shared SPOOL's (set-group-id,
/// as the installer makes it).
fn shared_dir(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.parent()
        .and_then(|d| std::fs::metadata(d).ok())
        .is_some_and(|m| m.permissions().mode() & 0o2000 != 0)
}

/// Removes one of SPOOL's own files by unlink (a link is removed, never
/// what it points to), with the group raised in a set-group-id tool.
pub fn remove_spool_file(path: &Path) -> io::Result<()> {
    let _group = super::privilege::raise_group();
    std::fs::remove_file(path)
}

/// `create_dir_all` of a directory inside SPOOL, with the group raised in
/// a set-group-id tool.
pub fn create_spool_dir(path: &Path) -> io::Result<()> {
    let _group = super::privilege::raise_group();
    std::fs::create_dir_all(path)
}

/// Whether `path` exists (without following a final symbolic link), with
/// the group raised in a set-group-id tool.
pub fn spool_entry_exists(path: &Path) -> bool {
    let _group = super::privilege::raise_group();
    std::fs::symlink_metadata(path).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spool_files_are_created_once_and_reopened() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("lock");
        let how = SpoolOpen {
            create: true,
            append: false,
        };
        let f = open_spool_file(&p, how).unwrap();
        drop(f);
        assert!(open_spool_file(&p, how).is_ok());
        assert!(open_spool_file(&p, SpoolOpen::default()).is_ok());
        let missing = open_spool_file(&d.path().join("none"), SpoolOpen::default()).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn a_shared_spool_gives_new_files_mode_0660() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o2770)).unwrap();
        let p = d.path().join("mark");
        open_spool_file(
            &p,
            SpoolOpen {
                create: true,
                append: false,
            },
        )
        .unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o660);
    }

    #[test]
    fn planted_links_and_fifos_are_refused_and_left_alone() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("precious");
        std::fs::write(&target, "keep me").unwrap();
        let how = SpoolOpen {
            create: true,
            append: true,
        };
        let link = d.path().join("negotiator.wanted");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = open_spool_file(&link, how).unwrap_err().to_string();
        assert!(e.contains("it is a symbolic link"), "{e}");
        let dangling = d.path().join("dangling");
        std::os::unix::fs::symlink(d.path().join("new-file"), &dangling).unwrap();
        assert!(open_spool_file(&dangling, how).is_err());
        assert!(!d.path().join("new-file").exists());
        let hard = d.path().join("hard");
        std::fs::hard_link(&target, &hard).unwrap();
        let e = open_spool_file(&hard, how).unwrap_err().to_string();
        assert!(e.contains("it has 2 links"), "{e}");
        let fifo = d.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // Refused at once: the open does not wait for a writer.
        let e = open_spool_file(&fifo, how).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
        remove_spool_file(&link).unwrap();
        assert!(target.exists());
    }

    #[test]
    fn free_space_of_the_temp_dir() {
        assert!(free_kib(&std::env::temp_dir()).unwrap() >= 0);
        assert!(free_kib(Path::new("/no/such/dir/here")).is_err());
    }
}
