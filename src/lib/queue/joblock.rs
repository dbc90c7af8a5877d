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
    held_file(spool, id).is_some()
}

/// The job's lock file, when someone holds the lock.
fn held_file(spool: &Path, id: JobId) -> Option<File> {
    let file = open_spool_file(&path(spool, id), SpoolOpen::default()).ok()?;
    matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock)).then_some(file)
}

/// Whether the job's lock is held and the shadow it names is running: a
/// lock another tool's probe ([`is_held`], [`wake`]) holds for an instant
/// reads as held, so the recorded holder must also be alive. A record not
/// written yet (a shadow being started) reads as no live shadow.
pub fn held_by_its_shadow(spool: &Path, id: JobId) -> bool {
    held_file(spool, id)
        .and_then(|f| read_record(&f))
        .and_then(|text| holder_of(&text))
        .is_some_and(|(pid, _)| crate::sys::pids::exists(pid))
}

/// The holder's pid and, when it could tell, its start time, from a
/// lock's record.
fn holder_of(text: &str) -> Option<(i32, Option<u64>)> {
    let mut lines = text.lines();
    let pid = lines.next()?.trim().parse().ok()?;
    let started = lines.nth(1).and_then(|l| l.trim().parse().ok());
    Some((pid, started))
}

/// A lock's record, read through its descriptor (the name may have been
/// replaced since it was opened).
fn read_record(file: &File) -> Option<String> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; 256];
    let n = file.read_at(&mut buf, 0).ok()?;
    Some(String::from_utf8_lossy(&buf[..n]).into_owned())
}

impl JobLock {
    /// Writes the holder's pid into the file, so tools can wake it, and
    /// the job's process group once it runs, with its leader's start time,
    /// so that the pass can kill what a dead shadow left running and only
    /// that (a process group id is reused once the group is gone). A third
    /// line has the holder's start time: its pid is also its session (the
    /// pass starts each shadow in a session of its own), and a shadow
    /// killed while it started the job, before it could write the job's
    /// group, left the job in that session.
    pub fn write_pid(&mut self, pid: u32, job_pgid: Option<i32>) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        // One fixed-width write in place: no truncation, which costs more
        // than the write on a busy shadow.
        let group = match job_pgid {
            Some(g) => match crate::sys::pids::start_time(g) {
                Some(t) => format!("{g} {t}"),
                None => format!("{g}"),
            },
            None => String::new(),
        };
        let started = if pid == std::process::id() {
            crate::sys::pids::own_start_time()
        } else {
            crate::sys::pids::start_time(pid as i32)
        };
        let started = started.map(|t| t.to_string()).unwrap_or_default();
        let text = format!("{pid}\n{group}\n{started}\n");
        // Padded past the longest record, so a shorter one leaves nothing
        // of a longer one behind.
        self.file
            .write_all_at(format!("{text:<64}").as_bytes(), 0)?;
        Ok(())
    }

    /// The (now dead) holder's pid, and when it started when it could
    /// tell.
    pub fn recorded_holder(&self) -> Option<(i32, Option<u64>)> {
        holder_of(&read_record(&self.file)?)
    }

    /// The job process group a (now dead) holder recorded, and when its
    /// leader started when the holder could tell.
    pub fn recorded_job_group(&self) -> Option<(i32, Option<u64>)> {
        let text = read_record(&self.file)?;
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
    // The pid must still be a shadow: never signal a stranger. A shadow
    // this user may not signal (root's, in shared mode) has a doorbell.
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    if comm.trim() == "tern_shadow" && !crate::sys::pids::signal_process(pid, libc::SIGUSR1) {
        ring(spool, pid);
    }
    true
}

/// The doorbell of the shadow `pid`: a FIFO beside the job locks that
/// wakes the shadow as SIGUSR1 does, for the users who may not signal it.
pub fn doorbell_path(spool: &Path, pid: u32) -> PathBuf {
    dir(spool).join(bell_name(pid))
}

fn bell_name(pid: u32) -> String {
    format!("{pid}.bell")
}

/// Makes this shadow's doorbell (mode 0660: in shared mode the directory
/// gives it the queue's group, so every tool can ring it) and opens it for
/// reading and writing, non-blocking: the shadow polls it and never sees
/// end-of-file. The doorbells and spares ([`Spare`]) of shadows that died
/// are swept away first.
pub fn install_doorbell(spool: &Path, pid: u32) -> io::Result<File> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
    let d = dir(spool);
    if !d.is_dir() {
        std::fs::create_dir_all(&d)?;
    }
    if let Some(shadows) = open_dir(spool) {
        sweep_doorbells(&shadows);
        let _ = shadows.remove(&bell_name(pid));
        let _ = shadows.remove(&spare_name(pid));
    }
    let p = doorbell_path(spool, pid);
    crate::sys::fs::mkfifo(&p, 0o600)?;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(&p)?;
    if !f.metadata()?.file_type().is_fifo() {
        return Err(io::Error::other("the doorbell is not a FIFO"));
    }
    // The mode on the descriptor: mkfifo's is cut by the umask.
    f.set_permissions(std::fs::Permissions::from_mode(0o660))?;
    Ok(f)
}

/// Removes the doorbell of shadow `pid`.
pub fn remove_doorbell(spool: &Path, pid: u32) {
    if let Some(d) = open_dir(spool) {
        let _ = d.remove(&bell_name(pid));
    }
}

/// SPOOL's `shadow` directory, opened by descriptor and never through a
/// link (SPOOL itself may be one), so what is removed in it is removed
/// there, whatever someone planted in its place.
fn open_dir(spool: &Path) -> Option<crate::sys::tree::Dir> {
    crate::sys::tree::Dir::in_spool(spool, "shadow").ok()
}

/// Removes the doorbells and spare lock files whose shadow is gone, by
/// descriptor: each entry as what it is, a planted link as a link.
fn sweep_doorbells(d: &crate::sys::tree::Dir) {
    for name in d.entries().unwrap_or_default() {
        let Some(pid) = name
            .strip_suffix(".bell")
            .or_else(|| name.strip_suffix(".spare"))
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if crate::sys::pids::start_time(pid).is_none() {
            let _ = d.remove(&name);
        }
    }
}

/// Writes a byte to the doorbell of shadow `pid`, if it has one: opened
/// without following a link or blocking, and only if it is a FIFO.
fn ring(spool: &Path, pid: i32) -> bool {
    use std::io::Write;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    // In shared mode the doorbells are the queue's group's.
    let _group = crate::sys::privilege::raise_group();
    let Ok(mut f) = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(doorbell_path(spool, pid as u32))
    else {
        return false;
    };
    f.metadata().is_ok_and(|m| m.file_type().is_fifo()) && f.write(b"!").is_ok()
}

/// Removes the lock file of a job that has left (only while holding it, so
/// a shadow never loses a file it holds).
pub fn remove(spool: &Path, lock: JobLock) {
    let _ = remove_spool_file(&path(spool, lock.id));
    drop(lock);
}

/// A shadow's spare lock file, `shadow/<pid>.spare`: the lock file of a
/// job that left the queue, kept (and held) under another name instead of
/// removed, so that the shadow's next job gets its lock by a rename rather
/// than a new file. Each job of a stream of short jobs on a reused claim
/// would otherwise create one file and remove another, and on ext4 a new
/// inode, found past the recently freed ones, cost about 0.1 ms of the
/// shadow's cpu a job, more than everything else it does in SPOOL's
/// directories. The job locks' rules are unchanged: a job's lock file
/// exists and is held from before its claim commits until after its end
/// does.
#[derive(Default)]
pub struct Spare {
    /// The `shadow` directory, opened once: the renames go through it, so
    /// that nothing put in the place of a directory on SPOOL's path can
    /// send them elsewhere.
    dir: Option<crate::sys::tree::Dir>,
    /// The held file and its device and inode.
    kept: Option<(File, (u64, u64))>,
}

fn spare_name(pid: u32) -> String {
    format!("{pid}.spare")
}

fn lock_name(id: JobId) -> String {
    format!("{}.{}.lock", id.cluster, id.proc)
}

impl Spare {
    /// Takes job `id`'s lock: the spare renamed to the job's lock file
    /// when there is one and the job has no lock file yet (never over one:
    /// that may be held), else as [`try_acquire`] takes it. The renamed
    /// file must be the one this process holds: a process with the same
    /// pid number in another pid namespace sharing SPOOL could have put
    /// its own spare in the place of ours; that one goes back, ours is
    /// given up, and the lock is taken as [`try_acquire`] takes it.
    pub fn acquire(&mut self, spool: &Path, id: JobId) -> io::Result<Option<JobLock>> {
        if let (Some((file, ino)), Some(dir)) = (self.kept.take(), &self.dir) {
            let (spare, name) = (spare_name(std::process::id()), lock_name(id));
            match dir.rename_with(&spare, &name, false) {
                Ok(()) if dir.entry_id(&name).ok() == Some(ino) => {
                    return Ok(Some(JobLock { file, id }));
                }
                Ok(()) => {
                    let _ = dir.rename_with(&name, &spare, false);
                }
                // The job has a lock file: the spare waits for the next.
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {
                    self.kept = Some((file, ino));
                }
                Err(_) => {}
            }
        }
        try_acquire(spool, id)
    }

    /// Lets go of the lock of a job that left the queue: its file becomes
    /// the spare, still held, its record saying only that this process
    /// holds it; or, when there is a spare already or the rename fails, it
    /// is removed as [`remove`] does.
    pub fn retire(&mut self, spool: &Path, mut lock: JobLock) {
        if self.kept.is_none() && self.dir.is_none() {
            self.dir = crate::sys::tree::Dir::in_spool(spool, "shadow").ok();
        }
        if let (None, Some(dir)) = (&self.kept, &self.dir)
            && lock.write_pid(std::process::id(), None).is_ok()
            && let Ok(meta) = lock.file.metadata()
            && dir
                .rename_with(&lock_name(lock.id), &spare_name(std::process::id()), true)
                .is_ok()
        {
            use std::os::unix::fs::MetadataExt;
            self.kept = Some((lock.file, (meta.dev(), meta.ino())));
            return;
        }
        remove(spool, lock);
    }

    /// Removes the spare's file, if it is still ours (the shadow is
    /// leaving).
    pub fn discard(&mut self) {
        if let (Some((_, ino)), Some(dir)) = (self.kept.take(), &self.dir) {
            let name = spare_name(std::process::id());
            if dir.entry_id(&name).ok() == Some(ino) {
                let _ = dir.remove(&name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spare_path(spool: &Path) -> PathBuf {
        dir(spool).join(spare_name(std::process::id()))
    }

    #[test]
    fn a_lock_counts_as_its_shadows_only_while_the_recorded_holder_runs() {
        let d = tempfile::tempdir().unwrap();
        let id = JobId {
            cluster: 3,
            proc: 0,
        };
        assert!(!held_by_its_shadow(d.path(), id), "no lock file");
        let mut lock = try_acquire(d.path(), id).unwrap().unwrap();
        assert!(!held_by_its_shadow(d.path(), id), "no holder written yet");
        lock.write_pid(std::process::id(), None).unwrap();
        assert!(held_by_its_shadow(d.path(), id));
        // A holder that is gone, the lock held a moment by another probe.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        lock.write_pid(gone, None).unwrap();
        assert!(!held_by_its_shadow(d.path(), id));
        drop(lock);
        assert!(!held_by_its_shadow(d.path(), id), "free");
    }

    #[test]
    fn a_doorbell_rings_once_made_and_is_swept_when_its_shadow_is_gone() {
        use std::io::Read;
        let d = tempfile::tempdir().unwrap();
        let me = std::process::id();
        assert!(!ring(d.path(), me as i32), "no doorbell yet");
        let mut bell = install_doorbell(d.path(), me).unwrap();
        assert!(ring(d.path(), me as i32));
        let mut buf = [0u8; 8];
        assert_eq!(bell.read(&mut buf).unwrap(), 1);
        // Nothing more: non-blocking, and never end-of-file.
        assert_eq!(
            bell.read(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        // A planted regular file in a doorbell's place is not written.
        let fake = doorbell_path(d.path(), 1);
        std::fs::write(&fake, "").unwrap();
        assert!(!ring(d.path(), 1));
        assert_eq!(std::fs::read(&fake).unwrap(), b"");
        // A dead shadow's doorbell goes when the next one is made.
        let dead = doorbell_path(d.path(), 999_999_999);
        std::fs::write(&dead, "").unwrap();
        drop(bell);
        install_doorbell(d.path(), me).unwrap();
        assert!(!dead.exists());
        remove_doorbell(d.path(), me);
        assert!(!doorbell_path(d.path(), me).exists());
    }

    #[test]
    fn the_doorbell_sweep_removes_a_planted_link_and_never_follows_one() {
        use std::os::unix::fs::symlink;
        let d = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("precious");
        std::fs::write(&target, "keep").unwrap();
        std::fs::create_dir_all(dir(d.path())).unwrap();
        // A dead shadow's "doorbell" that is a link: the link goes, what
        // it points at stays.
        let planted = doorbell_path(d.path(), 999_999_998);
        symlink(&target, &planted).unwrap();
        let me = std::process::id();
        let bell = install_doorbell(d.path(), me).unwrap();
        assert!(std::fs::symlink_metadata(&planted).is_err());
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        drop(bell);
        remove_doorbell(d.path(), me);
        // `shadow` itself replaced by a link to another directory: no sweep
        // lists or removes in it.
        let other = d.path().join("elsewhere");
        std::fs::create_dir(&other).unwrap();
        let there = other.join("999999997.bell");
        std::fs::write(&there, "").unwrap();
        std::fs::remove_dir_all(dir(d.path())).unwrap();
        symlink(&other, dir(d.path())).unwrap();
        if let Some(shadows) = open_dir(d.path()) {
            sweep_doorbells(&shadows);
        }
        remove_doorbell(d.path(), 999_999_997);
        assert!(there.exists());
    }

    #[test]
    fn the_record_names_the_holder_with_its_start_and_the_job_group() {
        let d = tempfile::tempdir().unwrap();
        let id = JobId {
            cluster: 1,
            proc: 0,
        };
        let mut l = try_acquire(d.path(), id).unwrap().unwrap();
        let me = std::process::id();
        let started = crate::sys::pids::start_time(me as i32);
        l.write_pid(me, Some(me as i32)).unwrap();
        assert_eq!(l.recorded_holder(), Some((me as i32, started)));
        assert_eq!(l.recorded_job_group(), Some((me as i32, started)));
        // A run's end forgets the group and keeps the holder.
        l.write_pid(me, None).unwrap();
        assert_eq!(l.recorded_job_group(), None);
        assert_eq!(l.recorded_holder(), Some((me as i32, started)));
    }

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

    #[test]
    fn a_left_jobs_lock_becomes_the_next_jobs_without_a_new_file() {
        use std::os::unix::fs::MetadataExt;
        let d = tempfile::tempdir().unwrap();
        let id = |proc| JobId { cluster: 5, proc };
        let ino = |id| std::fs::metadata(path(d.path(), id)).unwrap().ino();
        let mut spare = Spare::default();
        // No spare yet: a new file.
        let first = spare.acquire(d.path(), id(0)).unwrap().unwrap();
        let inode = ino(id(0));
        let second = spare.acquire(d.path(), id(1)).unwrap().unwrap();
        // The first job leaves: its file is the spare, held, under the
        // spare's name only.
        spare.retire(d.path(), first);
        assert!(!path(d.path(), id(0)).exists());
        let spare_file = spare_path(d.path());
        assert!(spare_file.exists());
        let other = File::open(&spare_file).unwrap();
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        // The third job's lock is that file, held, naming this process.
        let third = spare.acquire(d.path(), id(2)).unwrap().unwrap();
        assert_eq!(ino(id(2)), inode);
        assert!(!spare_file.exists());
        assert!(is_held(d.path(), id(2)));
        assert!(held_by_its_shadow(d.path(), id(2)));
        assert_eq!(third.recorded_job_group(), None);
        // A second left job's file, with a spare already kept, goes.
        spare.retire(d.path(), second);
        spare.retire(d.path(), third);
        assert!(!path(d.path(), id(1)).exists());
        assert!(!path(d.path(), id(2)).exists());
        assert!(spare_file.exists());
        spare.discard();
        assert!(!spare_file.exists());
    }

    #[test]
    fn a_spare_never_replaces_a_jobs_lock_file() {
        use std::os::unix::fs::MetadataExt;
        let d = tempfile::tempdir().unwrap();
        let id = |proc| JobId { cluster: 6, proc };
        let mut spare = Spare::default();
        let left = spare.acquire(d.path(), id(0)).unwrap().unwrap();
        spare.retire(d.path(), left);
        // Job 1's lock file is held by another holder: the spare stays a
        // spare and the job is not taken.
        let other = try_acquire(d.path(), id(1)).unwrap().unwrap();
        let theirs = std::fs::metadata(path(d.path(), id(1))).unwrap().ino();
        assert!(spare.acquire(d.path(), id(1)).unwrap().is_none());
        assert_eq!(
            std::fs::metadata(path(d.path(), id(1))).unwrap().ino(),
            theirs
        );
        assert!(spare_path(d.path()).exists());
        // Free, the existing file is taken as try_acquire takes it.
        drop(other);
        let mine = spare.acquire(d.path(), id(1)).unwrap().unwrap();
        assert_eq!(
            std::fs::metadata(path(d.path(), id(1))).unwrap().ino(),
            theirs
        );
        assert!(spare_path(d.path()).exists());
        drop(mine);
        // A dead shadow's spare is swept like its doorbell.
        let dead = dir(d.path()).join(spare_name(999_999_997));
        std::fs::write(&dead, "").unwrap();
        install_doorbell(d.path(), std::process::id()).unwrap();
        assert!(!dead.exists());
        assert!(
            !spare_path(d.path()).exists(),
            "a stale spare of this pid goes too"
        );
    }

    #[test]
    fn a_spare_replaced_by_another_process_is_put_back_and_not_used() {
        use std::os::unix::fs::MetadataExt;
        let d = tempfile::tempdir().unwrap();
        let id = |proc| JobId { cluster: 8, proc };
        let mut spare = Spare::default();
        let left = spare.acquire(d.path(), id(0)).unwrap().unwrap();
        spare.retire(d.path(), left);
        // A process with our pid number in another pid namespace puts its
        // own spare in the place of ours.
        let theirs = spare_path(d.path());
        std::fs::remove_file(&theirs).unwrap();
        std::fs::write(&theirs, "theirs").unwrap();
        let their_ino = std::fs::metadata(&theirs).unwrap().ino();
        let lock = spare.acquire(d.path(), id(1)).unwrap().unwrap();
        assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "theirs");
        assert_eq!(std::fs::metadata(&theirs).unwrap().ino(), their_ino);
        let mine = std::fs::metadata(path(d.path(), id(1))).unwrap().ino();
        assert_ne!(mine, their_ino);
        assert!(is_held(d.path(), id(1)));
        // Ours is given up: the next job's lock is a new file, and
        // leaving removes nothing of theirs.
        drop(lock);
        spare.discard();
        assert!(theirs.exists());
        // A spare swept away from under us is given up too.
        let mut spare = Spare::default();
        let left = spare.acquire(d.path(), id(2)).unwrap().unwrap();
        std::fs::remove_file(&theirs).unwrap();
        spare.retire(d.path(), left);
        std::fs::remove_file(spare_path(d.path())).unwrap();
        assert!(spare.acquire(d.path(), id(3)).unwrap().is_some());
        assert!(spare.kept.is_none());
    }
}
