//! Removing a directory tree that a job (or its owner) may be changing
//! while it goes: a sandbox, a job's SPOOL copy. Every step is made on
//! directory descriptors, never by a path below the tree's top: entries
//! are looked at with `fstatat(AT_SYMLINK_NOFOLLOW)`, directories entered
//! with `openat(O_NOFOLLOW|O_DIRECTORY)` and removed with `unlinkat`, and
//! a mode is changed only with `fchmod` on a descriptor. So a subdirectory
//! swapped for a symbolic link is removed as a link, never entered, and
//! nothing outside the tree is ever unlinked or chmodded.
//!
//! A root caller also empties the tree as its owner (the top directory's
//! uid and gid, from its descriptor, [`super::identity::act_as`]): the
//! kernel then checks every unlink as the owner's. Only what the owner
//! could not remove (something root made inside) is left to root, still
//! by descriptor, and root itself never changes a mode.

use std::ffi::{CStr, CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// An open directory, walked by descriptor: what root uses to make and
/// enter the directories of a job's SPOOL copy, and to hand the copy to
/// its owner (see [`Dir::proc_path`]).
pub struct Dir(OwnedFd);

/// `name` for a C call; a NUL byte in it is an error naming it so.
pub(super) fn cstr(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the path holds a NUL byte"))
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

impl Dir {
    /// Opens the directory `path`, whose last component may be a link
    /// only when `follow_last` (a configured SPOOL may be one).
    pub fn open(path: &Path, follow_last: bool) -> io::Result<Dir> {
        let c = cstr(path.as_os_str())?;
        let nofollow = if follow_last { 0 } else { libc::O_NOFOLLOW };
        // SAFETY: open reads the NUL-terminated path; the descriptor is
        // owned at once.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC | nofollow,
            )
        };
        check(fd)?;
        // SAFETY: a descriptor we just opened and own.
        Ok(Dir(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// The subdirectory `name`, never through a link.
    fn child(&self, name: &CStr) -> io::Result<Dir> {
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: openat on our descriptor and a NUL-terminated name.
        let fd = unsafe { libc::openat(self.0.as_raw_fd(), name.as_ptr(), flags) };
        check(fd)?;
        // SAFETY: a descriptor we just opened and own.
        Ok(Dir(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// fstatat without following a link (`None` name: the directory).
    fn stat(&self, name: Option<&CStr>) -> io::Result<libc::stat> {
        // SAFETY: an all-zero stat is a valid value to be overwritten;
        // fstatat writes only into it.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        let (n, flags) = match name {
            Some(n) => (n.as_ptr(), libc::AT_SYMLINK_NOFOLLOW),
            None => (c"".as_ptr(), libc::AT_EMPTY_PATH),
        };
        // SAFETY: as above, on our descriptor.
        check(unsafe { libc::fstatat(self.0.as_raw_fd(), n, &mut st, flags) })?;
        Ok(st)
    }

    /// The names in the directory, without `.` and `..`, read from its
    /// start (a directory read before, in claim reuse, is read again) with
    /// getdents64 on the descriptor itself: readdir would first want a
    /// duplicate of it (fdopendir's dup, fstat, F_GETFL, F_SETFD, and the
    /// close), five system calls more for every look at a sandbox.
    fn names(&self) -> io::Result<Vec<CString>> {
        let fd = self.0.as_raw_fd();
        // SAFETY: lseek on our own descriptor.
        if unsafe { libc::lseek(fd, 0, libc::SEEK_SET) } < 0 {
            return Err(io::Error::last_os_error());
        }
        // u64s, so the records (8-byte aligned by the kernel) are too;
        // 4 KiB, on the stack: a sandbox holds a few names, and a bigger
        // directory (SPOOL's `shadow`, a job's output tree) takes a read
        // per 4 KiB of names.
        let mut buf = [0u64; 512];
        let mut out = Vec::new();
        loop {
            let len = std::mem::size_of_val(buf.as_slice());
            // SAFETY: getdents64 writes at most `len` bytes into `buf`.
            let n = unsafe { libc::syscall(libc::SYS_getdents64, fd, buf.as_mut_ptr(), len) };
            if n < 0 {
                let e = io::Error::last_os_error();
                // Nothing was read (NFS, FUSE): read again.
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if n == 0 {
                return Ok(out);
            }
            // SAFETY: the kernel filled the first `n` bytes.
            let bytes =
                unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n as usize) };
            dirent_names(bytes, &mut out)?;
        }
    }

    fn unlink(&self, name: &CStr, dir: bool) -> io::Result<()> {
        let flags = if dir { libc::AT_REMOVEDIR } else { 0 };
        // SAFETY: unlinkat on our descriptor and a NUL-terminated name;
        // it never follows a link.
        check(unsafe { libc::unlinkat(self.0.as_raw_fd(), name.as_ptr(), flags) })
    }

    /// Makes the directory searchable and writable by its owner when the
    /// caller is that owner (a job may leave a directory of mode 0500);
    /// root never changes a mode, and never needs to.
    fn writable(&self) -> io::Result<()> {
        let st = self.stat(None)?;
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if me != 0 && st.st_uid == me && st.st_mode & 0o700 != 0o700 {
            // SAFETY: fchmod on our own descriptor.
            check(unsafe { libc::fchmod(self.0.as_raw_fd(), (st.st_mode & 0o7777) | 0o700) })?;
        }
        Ok(())
    }

    /// The subdirectory `name`, made enterable first if the caller owns it
    /// and it is not (mode 0000): fchmodat without following a link, so a
    /// link swapped in is refused, never chmodded through.
    fn enter(&self, name: &CStr) -> io::Result<Dir> {
        match self.child(name) {
            Err(e) if e.raw_os_error() == Some(libc::EACCES) => {
                // SAFETY: fchmodat on our descriptor and name, never
                // following a link (glibc refuses one with EOPNOTSUPP).
                check(unsafe {
                    libc::fchmodat(
                        self.0.as_raw_fd(),
                        name.as_ptr(),
                        0o700,
                        libc::AT_SYMLINK_NOFOLLOW,
                    )
                })?;
                self.child(name)
            }
            r => r,
        }
    }
}

/// What root does with a directory it trusts (SPOOL and the levels it
/// made in it), by name, never following a link.
impl Dir {
    /// SPOOL's own directory `name` (`hooks`, `shadow`, ...): SPOOL may be
    /// a link, `name` never is.
    pub fn in_spool(spool: &Path, name: &str) -> io::Result<Dir> {
        Dir::open(spool, true)?.sub(name)
    }

    /// The subdirectory `name`.
    pub fn sub(&self, name: &str) -> io::Result<Dir> {
        self.child(&cstr(OsStr::new(name))?)
    }

    /// The subdirectory `name`, made with `mode` (cut by the umask) when
    /// missing.
    pub fn make_sub(&self, name: &str, mode: libc::mode_t) -> io::Result<Dir> {
        let c = cstr(OsStr::new(name))?;
        // SAFETY: mkdirat on our descriptor and a NUL-terminated name.
        let rc = unsafe { libc::mkdirat(self.0.as_raw_fd(), c.as_ptr(), mode) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::AlreadyExists {
                return Err(e);
            }
        }
        self.child(&c)
    }

    /// The directory's owner: uid and gid.
    pub fn owner(&self) -> io::Result<(libc::uid_t, libc::gid_t)> {
        let st = self.stat(None)?;
        Ok((st.st_uid, st.st_gid))
    }

    /// Gives the directory `uid:gid` and `mode`, on its descriptor.
    pub fn give(&self, uid: libc::uid_t, gid: libc::gid_t, mode: libc::mode_t) -> io::Result<()> {
        // SAFETY: fchown and fchmod on our own descriptor.
        check(unsafe { libc::fchown(self.0.as_raw_fd(), uid, gid) })?;
        check(unsafe { libc::fchmod(self.0.as_raw_fd(), mode) })
    }

    /// Renames entry `from` to `to`, both in this directory (a link is
    /// renamed, never followed).
    pub fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.rename_with(from, to, true)
    }

    /// [`Dir::rename`]; without `replace` it fails (`EEXIST`) when `to`
    /// exists, atomically (`RENAME_NOREPLACE`; a file system without it
    /// refuses the rename).
    pub fn rename_with(&self, from: &str, to: &str, replace: bool) -> io::Result<()> {
        let (f, t) = (cstr(OsStr::new(from))?, cstr(OsStr::new(to))?);
        let fd = self.0.as_raw_fd();
        let flags = if replace { 0 } else { libc::RENAME_NOREPLACE };
        // SAFETY: renameat2 within our descriptor, NUL-terminated names.
        check(unsafe { libc::renameat2(fd, f.as_ptr(), fd, t.as_ptr(), flags) })
    }

    /// The device and inode of entry `name` (a link's own, not followed).
    pub fn entry_id(&self, name: &str) -> io::Result<(u64, u64)> {
        let st = self.stat(Some(&cstr(OsStr::new(name))?))?;
        Ok((st.st_dev, st.st_ino))
    }

    /// Removes the entry `name` whole, as [`remove_tree`] does.
    pub fn remove(&self, name: &str) -> io::Result<()> {
        remove_in(self, &cstr(OsStr::new(name))?)
    }

    /// Removes the subdirectory `name` if it is empty.
    pub fn remove_empty(&self, name: &str) -> io::Result<()> {
        self.unlink(&cstr(OsStr::new(name))?, true)
    }

    /// The names of every entry (of any type: files, links, directories)
    /// that are valid UTF-8.
    pub fn entries(&self) -> io::Result<Vec<String>> {
        Ok(self
            .names()?
            .into_iter()
            .filter_map(|n| n.into_string().ok())
            .collect())
    }

    /// The names of the subdirectories (never links) that are valid UTF-8.
    pub fn subdirs(&self) -> io::Result<Vec<String>> {
        Ok(self
            .names()?
            .into_iter()
            .filter(|n| self.stat(Some(n)).is_ok_and(|st| is_dir(&st)))
            .filter_map(|n| n.into_string().ok())
            .collect())
    }

    /// `/proc/self/fd/N`: a path to this very directory for as long as it
    /// is open, which this process can use after switching to another
    /// user (the kernel lets a process follow its own descriptors) where
    /// that user could not reach the directory by its name.
    pub fn proc_path(&self) -> std::path::PathBuf {
        std::path::PathBuf::from(format!("/proc/self/fd/{}", self.0.as_raw_fd()))
    }
}

/// Appends the names (but `.` and `..`, and a record of inode 0, which
/// glibc's readdir skips too) of the `linux_dirent64` records in `bytes`:
/// d_ino (8 bytes), d_off (8), d_reclen (2), d_type (1), then the
/// NUL-terminated name, each record `d_reclen` long.
fn dirent_names(mut bytes: &[u8], out: &mut Vec<CString>) -> io::Result<()> {
    const NAME: usize = 19;
    let bad = || io::Error::new(io::ErrorKind::InvalidData, "a malformed directory record");
    while !bytes.is_empty() {
        let reclen = bytes
            .get(16..18)
            .map(|r| u16::from_ne_bytes([r[0], r[1]]) as usize)
            .ok_or_else(bad)?;
        let rec = bytes
            .get(..reclen)
            .filter(|_| reclen > NAME)
            .ok_or_else(bad)?;
        let name = CStr::from_bytes_until_nul(&rec[NAME..]).map_err(|_| bad())?;
        let no_inode = rec[..8].iter().all(|b| *b == 0);
        if name != c"." && name != c".." && !no_inode {
            out.push(name.to_owned());
        }
        bytes = &bytes[reclen..];
    }
    Ok(())
}

fn is_dir(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFDIR
}

fn gone(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound
}

/// Removes everything inside `top` (the directory itself stays), with
/// the caller's ids, one descriptor per level; the first failure is the
/// error, after every entry was tried.
fn empty(top: &Dir, keep: &[&str]) -> io::Result<()> {
    top.writable()?;
    let mut first: Option<io::Error> = None;
    let mut note = |r: io::Result<()>| {
        if let Err(e) = r
            && !gone(&e)
            && first.is_none()
        {
            first = Some(e);
        }
    };
    for name in top.names()? {
        let st = match top.stat(Some(&name)) {
            Ok(st) => st,
            Err(e) => {
                note(Err(e));
                continue;
            }
        };
        let kept = keep.iter().any(|k| k.as_bytes() == name.as_bytes());
        if kept && st.st_mode & libc::S_IFMT == libc::S_IFREG {
            continue;
        }
        if !is_dir(&st) {
            note(top.unlink(&name, false));
            continue;
        }
        note(remove_dir_in(top, &name));
    }
    first.map_or(Ok(()), Err)
}

/// Removes the directory `name` in `parent`, contents first, walking with
/// an explicit stack (a deep tree costs descriptors, not the call stack).
/// Every entry is tried; the first failure is the error.
fn remove_dir_in(parent: &Dir, name: &CStr) -> io::Result<()> {
    /// One level: the directory, its names still to look at, and its own
    /// name in the level below.
    struct Level(Dir, Vec<CString>, CString);
    let open = |under: &Dir, n: &CStr| -> io::Result<Level> {
        let d = under.enter(n)?;
        d.writable()?;
        let names = d.names()?;
        Ok(Level(d, names, n.to_owned()))
    };
    let mut stack = vec![open(parent, name)?];
    let mut first: Option<io::Error> = None;
    let mut note = |r: io::Result<()>| {
        if let Err(e) = r
            && !gone(&e)
        {
            first.get_or_insert(e);
        }
    };
    while let Some(top) = stack.last_mut() {
        let Some(n) = top.1.pop() else {
            let Level(_, _, own) = stack.pop().expect("a level");
            let under = stack.last().map_or(parent, |l| &l.0);
            note(under.unlink(&own, true));
            continue;
        };
        let dir = &top.0;
        match dir.stat(Some(&n)) {
            Ok(st) if is_dir(&st) => match open(dir, &n) {
                Ok(level) => stack.push(level),
                Err(e) => note(Err(e)),
            },
            Ok(_) => note(dir.unlink(&n, false)),
            Err(e) => note(Err(e)),
        }
    }
    first.map_or(Ok(()), Err)
}

/// Runs `f` with the ids of the owner of `dir` when this process is root
/// and the owner is not: `f`'s unlinks are then the owner's, checked as
/// theirs. A failure to switch runs nothing (the caller tries as root).
fn as_owner_of(dir: &Dir, f: impl FnOnce() -> io::Result<()>) -> Option<io::Result<()>> {
    if !super::identity::is_root() {
        return None;
    }
    let st = dir.stat(None).ok()?;
    if st.st_uid == 0 {
        return None;
    }
    let id = super::identity::Identity {
        uid: st.st_uid,
        gid: st.st_gid,
        groups: vec![st.st_gid],
        umask: 0o077,
    };
    let _acting = super::identity::act_as(&id).ok()?;
    Some(f())
}

/// Empties `dir` as its owner when root (see the module), then as this
/// process for whatever is left.
fn empty_as_owner(dir: &Dir, keep: &[&str]) -> io::Result<()> {
    match as_owner_of(dir, || empty(dir, keep)) {
        Some(Ok(())) => Ok(()),
        _ => empty(dir, keep),
    }
}

/// Removes everything in the directory `path` but the regular files named
/// in `keep`; `path` itself stays. Its last component is never a link.
pub fn empty_dir(path: &Path, keep: &[&str]) -> io::Result<()> {
    let dir = Dir::open(path, false)?;
    empty_as_owner(&dir, keep)
}

/// Removes `path` whole: a directory tree, or whatever else is there (a
/// link is removed, not followed). The path up to its parent is trusted
/// (EXECUTE, SPOOL: root's); from there down every step is by descriptor.
/// A missing `path` is no error.
pub fn remove_tree(path: &Path) -> io::Result<()> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("refusing to remove {}: no parent", path.display()),
        ));
    };
    let parent = match parent.as_os_str().is_empty() {
        true => Path::new("."),
        false => parent,
    };
    let parent = Dir::open(parent, true)?;
    remove_in(&parent, &cstr(name)?)
}

/// Removes the entry `name` of `parent` whole (see [`remove_tree`]).
fn remove_in(parent: &Dir, name: &CStr) -> io::Result<()> {
    let st = match parent.stat(Some(name)) {
        Err(e) if gone(&e) => return Ok(()),
        r => r?,
    };
    if !is_dir(&st) {
        return match parent.unlink(name, false) {
            Err(e) if gone(&e) => Ok(()),
            r => r,
        };
    }
    let top = parent.enter(name)?;
    empty_as_owner(&top, &[])?;
    match parent.unlink(name, true) {
        Err(e) if gone(&e) => Ok(()),
        r => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn mode(p: &Path) -> u32 {
        std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
    }

    fn chmod(p: &Path, m: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    }

    /// A sandbox the job left: a directory it cannot write (0500) holding
    /// files, one it cannot even enter (0000), and links planted to a
    /// directory and a file that are not the job's.
    fn planted(d: &Path, target: &Path, victim: &Path) -> std::path::PathBuf {
        let sb = d.join("dir_1");
        std::fs::create_dir_all(sb.join("a/b/c")).unwrap();
        std::fs::write(sb.join("a/b/c/f"), "x").unwrap();
        std::fs::write(sb.join("a/f"), "x").unwrap();
        std::fs::create_dir(sb.join("closed")).unwrap();
        std::os::unix::fs::symlink(target, sb.join("a/link")).unwrap();
        std::os::unix::fs::symlink(target, sb.join("dirlink")).unwrap();
        std::os::unix::fs::symlink(victim, sb.join("filelink")).unwrap();
        chmod(&sb.join("a/b"), 0o500);
        chmod(&sb.join("closed"), 0o000);
        sb
    }

    /// Runs test `name` again in a process of its own, as nobody when
    /// this one is root (a user removing their own tree: the modes the job
    /// left are the owner's to change, by descriptor).
    fn again_as_nobody(name: &str) {
        use std::os::unix::process::CommandExt;
        if !crate::sys::identity::is_root() || std::env::var_os("TERN_TREE_NOBODY").is_some() {
            return;
        }
        let Some(nobody) = crate::sys::identity::user("nobody") else {
            return;
        };
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                &format!("sys::tree::tests::{name}"),
                "--test-threads=1",
            ])
            .env("TERN_TREE_NOBODY", "1")
            .env("TMPDIR", "/tmp")
            .current_dir("/")
            .uid(nobody.uid)
            .gid(nobody.gid)
            .output()
            .unwrap();
        assert!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).contains("1 passed"),
            "as nobody: {out:?}"
        );
    }

    /// Every name comes back, also past one read's buffer (long names,
    /// thousands of entries), and a second look reads from the start.
    #[test]
    fn names_lists_every_entry_and_reads_again_from_the_start() {
        let d = tempfile::tempdir().unwrap();
        let mut want: Vec<String> = (0..3000).map(|i| format!("{i:0>200}")).collect();
        for n in &want {
            std::fs::write(d.path().join(n), "").unwrap();
        }
        std::fs::create_dir(d.path().join("sub")).unwrap();
        want.push("sub".into());
        want.sort();
        let dir = Dir::open(d.path(), false).unwrap();
        for _ in 0..2 {
            let mut got: Vec<String> = dir
                .names()
                .unwrap()
                .into_iter()
                .map(|n| n.into_string().unwrap())
                .collect();
            got.sort();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn a_malformed_directory_record_is_an_error() {
        let mut out = Vec::new();
        // One good record: "a", 24 bytes, inode 7; the same of inode 0 is
        // skipped.
        let mut rec = vec![0u8; 24];
        rec[16..18].copy_from_slice(&24u16.to_ne_bytes());
        rec[19] = b'a';
        let mut unused = rec.clone();
        rec[0] = 7;
        unused[19] = b'b';
        dirent_names(&[&rec[..], &unused[..]].concat(), &mut out).unwrap();
        assert_eq!(out, vec![CString::new("a").unwrap()]);
        // A length past the buffer, one too short for a name, and a name
        // with no NUL.
        let mut long = rec.clone();
        long[16..18].copy_from_slice(&40u16.to_ne_bytes());
        let mut short = rec.clone();
        short[16..18].copy_from_slice(&19u16.to_ne_bytes());
        let mut unended = rec.clone();
        unended[19..].fill(b'x');
        for bad in [&long[..], &short[..], &unended[..], &rec[..10]] {
            let e = dirent_names(bad, &mut out).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        }
    }

    /// The audit's case: a link planted in a sandbox, pointing at a
    /// directory of root's, must leave that directory's mode (and
    /// contents) alone, whoever removes the sandbox.
    #[test]
    fn a_symlink_planted_in_a_sandbox_keeps_its_targets_mode() {
        again_as_nobody("a_symlink_planted_in_a_sandbox_keeps_its_targets_mode");
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("etc");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("passwd"), "root\n").unwrap();
        chmod(&target, 0o555);
        let victim = d.path().join("shadow");
        std::fs::write(&victim, "secret\n").unwrap();
        chmod(&victim, 0o400);
        let sb = planted(d.path(), &target, &victim);
        remove_tree(&sb).unwrap();
        assert!(
            std::fs::symlink_metadata(&sb).is_err(),
            "the sandbox is gone"
        );
        assert_eq!(mode(&target), 0o555);
        assert_eq!(mode(&victim), 0o400);
        assert_eq!(
            std::fs::read_to_string(target.join("passwd")).unwrap(),
            "root\n"
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "secret\n");
        chmod(&target, 0o755);
    }

    #[test]
    fn a_sandbox_is_emptied_but_for_its_ad_files_and_a_missing_tree_is_no_error() {
        again_as_nobody("a_sandbox_is_emptied_but_for_its_ad_files_and_a_missing_tree_is_no_error");
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("t");
        std::fs::create_dir(&target).unwrap();
        let sb = planted(d.path(), &target, &target);
        std::fs::write(sb.join(".job.ad"), "A = 1").unwrap();
        std::os::unix::fs::symlink(&target, sb.join(".machine.ad")).unwrap();
        empty_dir(&sb, &[".job.ad", ".machine.ad"]).unwrap();
        let left: Vec<_> = std::fs::read_dir(&sb)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, [".job.ad"], "a link by a kept name goes");
        assert!(target.is_dir());
        remove_tree(&sb).unwrap();
        remove_tree(&sb).unwrap();
        // A link at the top is removed, never followed.
        let link = d.path().join("top");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        remove_tree(&link).unwrap();
        assert!(target.is_dir() && std::fs::symlink_metadata(&link).is_err());
        assert!(empty_dir(&link, &[]).is_err() || !link.exists());
    }

    /// What the job left running swaps a directory of its sandbox for a
    /// link to another directory, again and again, while the sandbox
    /// goes: the link's target never has its mode changed.
    #[test]
    fn a_directory_swapped_for_a_link_while_the_tree_goes_is_never_followed() {
        again_as_nobody("a_directory_swapped_for_a_link_while_the_tree_goes_is_never_followed");
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("etc");
        std::fs::create_dir(&target).unwrap();
        chmod(&target, 0o555);
        for round in 0..20 {
            let sb = d.path().join(format!("dir_{round}"));
            std::fs::create_dir_all(sb.join("x/y")).unwrap();
            for i in 0..40 {
                std::fs::write(sb.join(format!("x/y/f{i}")), "x").unwrap();
            }
            chmod(&sb.join("x/y"), 0o500);
            chmod(&sb.join("x"), 0o500);
            let stop = Arc::new(AtomicBool::new(false));
            let swapper = {
                let (sb, target, stop) = (sb.clone(), target.clone(), stop.clone());
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let _ = std::fs::rename(sb.join("x"), sb.join("away"));
                        let _ = std::os::unix::fs::symlink(&target, sb.join("x"));
                        let _ = std::fs::remove_file(sb.join("x"));
                        let _ = std::fs::rename(sb.join("away"), sb.join("x"));
                    }
                })
            };
            let _ = remove_tree(&sb);
            stop.store(true, Ordering::Relaxed);
            swapper.join().unwrap();
            for _ in 0..3 {
                if remove_tree(&sb).is_ok() {
                    break;
                }
            }
            assert_eq!(mode(&target), 0o555, "round {round}");
        }
        chmod(&target, 0o755);
    }

    /// A tree deeper than a call stack would like, swapped directories
    /// and all, goes by descriptors.
    #[test]
    fn a_deep_tree_goes() {
        let d = tempfile::tempdir().unwrap();
        let top = d.path().join("deep");
        let mut p = top.clone();
        for _ in 0..300 {
            p.push("d");
        }
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(p.join("f"), "x").unwrap();
        remove_tree(&top).unwrap();
        assert!(!top.exists());
    }

    /// Run as root, the contents go as the tree's owner: a file root
    /// made in a directory the owner may not write is left to root, and
    /// still goes.
    #[test]
    fn root_removes_a_users_tree_as_the_user_and_finishes_what_they_cannot() {
        if !crate::sys::identity::is_root() {
            return;
        }
        let Some(nobody) = crate::sys::identity::user("nobody") else {
            return;
        };
        // act_as switches the whole process: a process of its own.
        if std::env::var_os("TERN_TREE_CHILD").is_none() {
            let name = "sys::tree::tests::root_removes_a_users_tree_as_the_user_and_finishes_what_they_cannot";
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", name, "--test-threads=1"])
                .env("TERN_TREE_CHILD", "1")
                .output()
                .unwrap();
            assert!(
                out.status.success() && String::from_utf8_lossy(&out.stdout).contains("1 passed"),
                "{out:?}"
            );
            return;
        }
        let d = tempfile::tempdir().unwrap();
        chmod(d.path(), 0o755);
        let top = d.path().join("dir_2");
        std::fs::create_dir_all(top.join("mine/rootdir")).unwrap();
        std::fs::write(top.join("mine/f"), "x").unwrap();
        std::fs::write(top.join("mine/rootdir/g"), "x").unwrap();
        for p in [top.clone(), top.join("mine"), top.join("mine/f")] {
            std::os::unix::fs::lchown(&p, Some(nobody.uid), Some(nobody.gid)).unwrap();
        }
        chmod(&top.join("mine/rootdir"), 0o755);
        remove_tree(&top).unwrap();
        assert!(!top.exists());
        assert!(crate::sys::identity::is_root());
        assert_eq!(std::fs::metadata(d.path()).unwrap().uid(), 0);
    }
}
