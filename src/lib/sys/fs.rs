//! File-system and descriptor calls: free space (statvfs), letting one
//! descriptor cross an exec (fcntl), and the careful opens of SPOOL's own
//! files (locks, marks, logs) that a root pass makes in a directory its
//! users' tools can also write.

use std::io;
use std::os::fd::RawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Whether syncs that only guard against a power cut are made (the knob
/// CONDOR_FSYNC; on until the configuration says otherwise).
static FSYNC: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Sets [`fsync_on`] for the whole process (from CONDOR_FSYNC).
pub fn set_fsync(on: bool) {
    FSYNC.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether to sync: tern_submit's durable commit and each job event log
/// write ask this (a sync that keeps a file consistent, not only durable,
/// is made whatever it says).
pub fn fsync_on() -> bool {
    FSYNC.load(std::sync::atomic::Ordering::Relaxed)
}

/// KiB free to unprivileged users on the file system holding `path`
/// (statvfs's `f_bavail` blocks of `f_frsize` bytes).
pub fn free_kib(path: &Path) -> io::Result<i64> {
    let c = super::tree::cstr(path.as_os_str())?;
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
    let c = super::tree::cstr(dir.as_os_str())?;
    // SAFETY: the path is a valid NUL-terminated string for the call.
    let rc = unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::X_OK, libc::AT_EACCESS) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The value of the extended attribute `name` of the file at `path` (at
/// most 64 bytes, getxattr(2)); `None` when it has none, when the file is
/// missing, and where the file system keeps no extended attributes.
pub fn xattr(path: &Path, name: &str) -> Option<Vec<u8>> {
    let p = super::tree::cstr(path.as_os_str()).ok()?;
    let n = super::tree::cstr(name.as_ref()).ok()?;
    let mut buf = [0u8; 64];
    // SAFETY: both strings are valid and NUL-terminated, and `buf` is
    // writable for its length, for the duration of the call.
    let len = unsafe { libc::getxattr(p.as_ptr(), n.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    let len = usize::try_from(len).ok()?;
    Some(buf[..len].to_vec())
}

/// setxattr(2): sets the extended attribute `name` of the file at `path`.
pub fn set_xattr(path: &Path, name: &str, value: &[u8]) -> io::Result<()> {
    let p = super::tree::cstr(path.as_os_str())?;
    let n = super::tree::cstr(name.as_ref())?;
    // SAFETY: both strings are valid and NUL-terminated, and `value` is
    // readable for its length, for the duration of the call.
    let rc = unsafe {
        libc::setxattr(
            p.as_ptr(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// mkfifo(3): a FIFO at `path` with `mode` (cut by the umask).
pub fn mkfifo(path: &Path, mode: libc::mode_t) -> io::Result<()> {
    let c = super::tree::cstr(path.as_os_str())?;
    // SAFETY: the path is a valid NUL-terminated string for the call.
    if unsafe { libc::mkfifo(c.as_ptr(), mode) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Opens a path a job names (its In, Out or Err, its event log, a file it
/// transfers) so that nothing found there can block the caller, a root
/// pass or a shadow: the open itself is `O_NONBLOCK` (opening a FIFO
/// nobody holds, or some devices, would otherwise wait forever) and
/// close-on-exec; the descriptor is then made blocking again for the
/// reads and writes that follow (a job's standard files must behave as
/// usual). `flags` are open(2)'s access, creation and other flags; `mode`
/// a new file's (cut by the umask).
pub fn open_nonblocking(
    path: &Path,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> io::Result<std::fs::File> {
    use std::os::fd::AsRawFd;
    let f = open_with_nonblock(path, flags, mode)?;
    // SAFETY: fcntl on our own descriptor.
    let fl = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETFL) };
    if fl < 0 || unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETFL, fl & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(f)
}

/// `open(2)` with `O_NONBLOCK` (and `O_CLOEXEC`), left set.
fn open_with_nonblock(
    path: &Path,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> io::Result<std::fs::File> {
    use std::os::fd::FromRawFd;
    let c = super::tree::cstr(path.as_os_str())?;
    // SAFETY: open reads the NUL-terminated path; the descriptor it
    // returns is owned by the File made at once.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            flags | libc::O_NONBLOCK | libc::O_CLOEXEC,
            libc::c_uint::from(mode),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a descriptor we just opened and own.
    Ok(unsafe { std::fs::File::from_raw_fd(fd) })
}

/// Opens what must be a regular file (an event log, a file to copy), as
/// [`open_nonblocking`] does but leaving `O_NONBLOCK` set, which a regular
/// file ignores: never through a final symbolic link (`O_NOFOLLOW`), and
/// anything that is not a regular file (a FIFO, a device, a socket) is
/// refused with an error that says so, before a byte is read or written.
pub fn open_regular(
    path: &Path,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> io::Result<std::fs::File> {
    open_regular_sized(path, flags, mode).map(|(f, _)| f)
}

/// [`open_regular`], with the file's length when it was opened (from the
/// same `fstat` that checked its type).
pub fn open_regular_sized(
    path: &Path,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> io::Result<(std::fs::File, u64)> {
    let refused = |what: &str| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("refusing {}: {what}", path.display()),
        )
    };
    // O_NONBLOCK stays: it changes nothing for a regular file, and
    // anything else is refused below (two fcntl calls fewer for each of
    // a job's ad files and each event-log write).
    let f = match open_with_nonblock(path, flags | libc::O_NOFOLLOW, mode) {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(refused("it is a symbolic link"));
        }
        // A FIFO with no reader, opened for writing without blocking.
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
            return Err(refused("it is not a regular file"));
        }
        Err(e) => return Err(e),
    };
    let meta = f.metadata()?;
    if !meta.file_type().is_file() {
        return Err(refused("it is not a regular file"));
    }
    Ok((f, meta.len()))
}

/// Opens a file to be read whole (a file a job transfers): following
/// links, as HTCondor's transfer does, but without waiting on whatever it
/// is, and only a regular file (a FIFO or device is refused, saying so).
pub fn open_regular_to_read(path: &Path) -> io::Result<std::fs::File> {
    // O_NONBLOCK stays, as in open_regular_sized.
    let f = open_with_nonblock(path, libc::O_RDONLY, 0)?;
    if !f.metadata()?.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("refusing {}: it is not a regular file", path.display()),
        ));
    }
    Ok(f)
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
/// descriptor, as the umask would cut the open's mode. Every error names
/// the file: a refusal says what was refused, a system error is the
/// system's after the path.
pub fn open_spool_file(path: &Path, how: SpoolOpen) -> io::Result<std::fs::File> {
    use std::os::fd::FromRawFd;
    use std::os::unix::fs::MetadataExt;
    let c = super::tree::cstr(path.as_os_str())?;
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
    let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
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
                        return Err(named(e));
                    }
                    // SAFETY: fd is a descriptor we just opened and own.
                    let f = unsafe { std::fs::File::from_raw_fd(fd) };
                    if shared_dir(path) {
                        // SAFETY: fchmod on our own descriptor.
                        if unsafe { libc::fchmod(fd, 0o660) } != 0 {
                            return Err(named(io::Error::last_os_error()));
                        }
                    }
                    return Ok(f);
                }
                _ => return Err(named(e)),
            }
        };
        // SAFETY: fd is a descriptor we just opened and own.
        let f = unsafe { std::fs::File::from_raw_fd(fd) };
        let m = f.metadata().map_err(named)?;
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
    fn a_fifo_never_blocks_an_open_of_a_path_a_job_names() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        mkfifo(&fifo, 0o600).unwrap();
        // Returns at once, where a plain open would wait for a writer or a
        // reader forever.
        let e = open_regular(&fifo, libc::O_RDONLY, 0).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let e = open_regular(&fifo, libc::O_WRONLY | libc::O_APPEND, 0).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let e = open_regular_to_read(&fifo).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        // A job's In may be a FIFO: open, and blocking again for the job.
        let f = open_nonblocking(&fifo, libc::O_RDONLY, 0).unwrap();
        use std::os::fd::AsRawFd;
        // SAFETY: F_GETFL on our own descriptor.
        let fl = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETFL) };
        assert_eq!(fl & libc::O_NONBLOCK, 0);
        let link = d.path().join("link");
        std::os::unix::fs::symlink(d.path().join("target"), &link).unwrap();
        let e = open_regular(&link, libc::O_WRONLY | libc::O_CREAT, 0o644).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert!(!d.path().join("target").exists());
        let plain = d.path().join("plain");
        open_regular(&plain, libc::O_WRONLY | libc::O_CREAT, 0o644).unwrap();
        assert!(plain.is_file());
    }

    #[test]
    fn free_space_of_the_temp_dir() {
        assert!(free_kib(&std::env::temp_dir()).unwrap() >= 0);
        assert!(free_kib(Path::new("/no/such/dir/here")).is_err());
    }
}
