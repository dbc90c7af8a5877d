//! Upkeep of the write-ahead log (`queue.db-wal`): short, so that each
//! process's first open, which reads the whole log to rebuild its index,
//! stays cheap; and left in place, so that a commit writes over blocks the
//! file already has instead of extending it (on ext4 the durable commit of
//! a submit that extends the file costs about four times the one that
//! does not: the new blocks and the file's size go through the journal).
//!
//! SQLite starts the log again from its first block only when a writer
//! begins with everything copied into the database and no reader in the
//! log; a process that opens the queue alone rebuilds the index from the
//! file and forgets what was copied, so between one-process tools that
//! moment never comes by itself. Each handle therefore tracks the log's
//! length after its own commits (SQLite's commit hook for the log, which
//! also does SQLite's automatic checkpoint, as the hook it replaces did),
//! and:
//!
//! - a closing handle that saw the log past [`KEEP_FRAMES`] copies it into
//!   the database (`wal_checkpoint(RESTART)`, not waiting for anyone) and
//!   writes one small record, which starts the log again in place; while
//!   another process holds the queue open, no one rebuilds the index from
//!   the log, so the closing handle leaves it until [`KEEP_FRAMES_BESIDE`]
//!   (see [`Queue::keep_frames`]);
//! - a writer whose commit left the log past [`RESTART_FRAMES`] copies it
//!   ([`Queue::restart_log`]), waiting a moment for the readers of the
//!   moment, so that its next write starts it again; readers that hold it
//!   off make it wait 64 writes before it tries again; a shadow does this
//!   once its next job runs, not after the commit
//!   ([`Queue::defer_log_upkeep`]);
//! - whoever starts the log again cuts its file to [`FILE_LIMIT`] if it is
//!   longer (`journal_size_limit`, set on every handle), and otherwise
//!   leaves the file as it is;
//! - a closing handle that saw the log short (or wrote nothing) only
//!   bounds the file: past [`FILE_LIMIT`] it empties it
//!   (`wal_checkpoint(TRUNCATE)`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use rusqlite::Connection;

use super::{Queue, busy};

/// Frames of log (4 KB pages) past which a closing handle starts the log
/// again: about 256 KB, what a few single-job writes leave behind (about
/// 14 frames each), so each of them pays a share of one checkpoint, where
/// a checkpoint on every close cost each tool three fsyncs. (A loop of 500
/// submits, when this was a file size: 256 KB 2.2 s, 1 MB 2.3 s, 4 MB
/// 2.6 s, a checkpoint on every close 3.0 s.)
pub(super) const KEEP_FRAMES: u32 = 64;

/// The longest the log's file is left: a restart that finds it longer cuts
/// it to this, and so does a closing handle. The restarts below come
/// before the log fills it, so in steady work a commit writes over blocks
/// the file has and the file keeps its size. (At 1 MB, with restarts
/// past 1 MB checked every 64th write, the file was cut back and extended
/// again every cycle, and a reader closing while the log stood past the
/// limit copied it, with two fsyncs: a third of the fsyncs of a
/// 2,000-job run came from the `tern_q` polling it.)
pub(super) const FILE_LIMIT: u64 = 4 << 20;

/// Frames of log (about 3 MB) past which a writer starts it again after
/// its commit (see [`Queue::restart_log`]): under [`FILE_LIMIT`] by more
/// than one short write's frames.
pub(super) const RESTART_FRAMES: u32 = 768;

/// Frames past which a closing handle starts the log again while another
/// process holds the queue open (see [`Queue::keep_frames`]): 64 past
/// [`RESTART_FRAMES`] (832 frames), so that a long-lived writer beside
/// the closer, a shadow running a stream of jobs, which looks after each
/// of its own commits and starts the log again past that, gets there
/// first (a job of a shell loop of submits adds about 20 frames). The
/// copy's fsyncs then fall on the shadow, between its jobs, not on the
/// close of a one-shot tool that the loop waits for. At 763 frames, under
/// RESTART_FRAMES, the closing submits of such a loop made nearly every
/// copy: 458 fsyncs for 400 submits, 410 past RESTART_FRAMES
/// (bench/README.md, "A shell loop of single submits"). And
/// [`CLOSER_ROOM`] frames under what [`FILE_LIMIT`] holds, so that the
/// log's file, which every restart cuts back to that limit, need not grow
/// past it between restarts (a durable commit that extends the file
/// costs several that do not): room for the writes of others while a
/// closer's restart is held off by a reader.
pub(super) const KEEP_FRAMES_BESIDE: u32 = RESTART_FRAMES + 64;

/// Frames of room the log's file keeps above [`KEEP_FRAMES_BESIDE`].
pub(super) const CLOSER_ROOM: u32 = 128;

// The long-lived writer starts the log again before a closer beside it
// would, and the closers' limit leaves room under the file's.
const _: () = assert!(RESTART_FRAMES < KEEP_FRAMES_BESIDE);
const _: () = assert!(((KEEP_FRAMES_BESIDE + CLOSER_ROOM) as u64) * FRAME_BYTES + 32 <= FILE_LIMIT);

/// A frame of the log: its 24-byte header and a 4 KB page.
pub(super) const FRAME_BYTES: u64 = 24 + 4096;

/// The byte of the `-shm` file on which every connection holds a read
/// lock while it has the database open (os_unix.c: UNIX_SHM_DMS, that is
/// UNIX_SHM_BASE, 120, plus SQLITE_SHM_NLOCK, 8).
pub(super) const SHM_DMS_BYTE: u64 = 128;

/// How long a writer's restart waits for the readers and the writer of
/// the moment, holding the write lock meanwhile (a long reader, a tern_q
/// over a million jobs, makes it give up and try again 64 writes later).
const RESTART_WAIT: Duration = Duration::from_millis(20);

/// Frames at which a commit copies the log into the database: what
/// SQLite's own hook, which [`watch`] replaces, does (its
/// `wal_autocheckpoint` default).
const AUTOCHECKPOINT_FRAMES: i32 = 1000;

/// Installs the hook that records the log's length (in frames) after each
/// commit of `conn`, and keeps SQLite's automatic checkpoint, which the
/// hook replaces; bounds the file a restart of this handle leaves. The
/// returned counter is 0 until the first commit.
pub(super) fn watch(conn: &mut Connection) -> Result<Arc<AtomicU32>, rusqlite::Error> {
    if let Some(log) = log_of(conn) {
        sync_new_log(conn, log)?;
    }
    conn.query_row(
        &format!("PRAGMA journal_size_limit = {FILE_LIMIT}"),
        [],
        |_| Ok(()),
    )?;
    let frames = Arc::new(AtomicU32::new(0));
    let seen = Arc::clone(&frames);
    conn.wal_hook(Some(move |wal: &mut rusqlite::hooks::Wal, pages: i32| {
        seen.store(u32::try_from(pages).unwrap_or(0), Ordering::Relaxed);
        if pages >= AUTOCHECKPOINT_FRAMES {
            // As SQLite's own hook: a checkpoint that cannot copy
            // everything now leaves the rest to a later commit.
            let _ = wal.checkpoint();
        }
        Ok(())
    }))?;
    Ok(frames)
}

/// The log's file as SQLite names it: beside the database's real path (a
/// symbolic link to the database is followed); `None` for a database in
/// memory.
fn log_of(conn: &Connection) -> Option<PathBuf> {
    conn.path()
        .filter(|db| !db.is_empty())
        .map(|db| PathBuf::from(format!("{db}-wal")))
}

/// Makes the log's entry in its directory durable before the first commit
/// to a log file whose entry no one has synced. SQLite would sync the
/// directory at the first sync of the log by every connection, an fsync
/// of SPOOL for every tool that writes (its device flush waits for
/// everything the shadows wrote meanwhile: 0.06-0.27 ms of a submit); the
/// build turns that off (`SQLITE_DISABLE_DIRSYNC`, .cargo/config.toml) for
/// this.
///
/// Who synced the entry is marked on the file itself, with an extended
/// attribute ([`SYNCED_MARK`]) that names the file (device and inode, so
/// that a mark copied onto another file, by `cp -a` or a restore, counts
/// for nothing) and is set only after the sync. A new file (a log deleted
/// and made again is a new file) has none, whatever SQLite wrote to it
/// before the commit (a transaction larger than SQLite's page cache writes
/// pages before it commits) and whatever the writer before was (one killed
/// between its sync and the mark, or one with CONDOR_FSYNC off: a new
/// log's entry is synced whatever it says). The file cannot be replaced
/// while this handle has the queue open (SQLite deletes the log only when
/// it closes the last handle), so once the mark is found or set, later
/// commits need no look; until then (a sync that failed), each commit
/// tries again. The hook runs with the write lock held, before the
/// commit's frame is written, with the tern group raised (a shared queue's
/// SPOOL is the group's alone). Where the file system keeps no extended
/// attributes, each handle syncs at its first commit.
fn sync_new_log(conn: &mut Connection, log: PathBuf) -> Result<(), rusqlite::Error> {
    let mut done = false;
    conn.commit_hook(Some(move || {
        if !done {
            let _group = crate::sys::privilege::raise_group();
            done = entry_synced(&log);
        }
        // Never turns the commit into a rollback.
        false
    }))
}

/// The extended attribute on the log's file that says its entry was
/// synced (see [`sync_new_log`]); its value is the file's `device:inode`.
pub(super) const SYNCED_MARK: &str = "user.tern.entry-synced";

/// Whether the entry of the file at `log` is known synced: marked so, or
/// synced now (and then marked, where the file system allows).
fn entry_synced(log: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(log) else {
        return false;
    };
    let name = format!("{}:{}", meta.dev(), meta.ino());
    if crate::sys::fs::xattr(log, SYNCED_MARK).is_some_and(|v| v == name.as_bytes()) {
        return true;
    }
    let synced = log
        .parent()
        .and_then(|dir| std::fs::File::open(dir).ok())
        .is_some_and(|d| d.sync_data().is_ok());
    if synced {
        let _ = crate::sys::fs::set_xattr(log, SYNCED_MARK, name.as_bytes());
    }
    synced
}

/// Copies the log into the database and readies it to start again
/// (`wal_checkpoint(RESTART)`); true when everything was copied and no
/// reader is left in the log. The copy is made first without the write
/// lock (`PASSIVE`): a RESTART holds that lock while it copies and syncs
/// the log and the database, and a copy of a few hundred frames with its
/// two fsyncs kept the other shadow of a 2,000-job run waiting, both cpus
/// idle, for a tenth of the run. After the passive copy, the RESTART
/// copies and syncs only the frames written meanwhile.
fn copy_and_restart(conn: &Connection) -> bool {
    // A passive copy that cannot run (another checkpoint) leaves it all
    // to the RESTART, as before.
    let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
    matches!(
        conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |r| r.get::<_, i64>(0)),
        Ok(0)
    )
}

/// The busy handler of a restart ([`Queue::restart_log`]): the plain
/// handler's pauses, giving up after [`RESTART_WAIT`].
fn within_restart_wait(n: i32) -> bool {
    busy::wait(n, RESTART_WAIT)
}

impl Queue {
    fn log_path(&self) -> PathBuf {
        log_of(&self.conn).unwrap_or_else(|| self.path.with_extension("db-wal"))
    }

    /// The log's length in frames after this handle's last commit (0
    /// before its first).
    pub(super) fn log_frames(&self) -> u32 {
        self.log_frames.load(Ordering::Relaxed)
    }

    /// After each write of a handle (the long-lived ones matter: shadows,
    /// passes, the router): when its commit left the log past
    /// [`RESTART_FRAMES`], copies the log into the database and makes the
    /// next write start it again from its first block
    /// (`wal_checkpoint(RESTART)`), waiting at most [`RESTART_WAIT`] for the
    /// readers of the moment; when they hold it off, the handle tries
    /// again 64 writes later, not at every write. SQLite's own checkpoints
    /// copy the log but, with writers taking turns and short readers always
    /// about, never start it again: it grew to 72 MB over 2,000 short jobs,
    /// every commit extending the file, which on ext4 was a quarter of the
    /// run (bench/README.md, "Running jobs"). Says whether it copied
    /// everything now.
    pub(super) fn restart_log(&mut self) -> bool {
        let frames = self.log_frames();
        if self.own_busy_handler
            || frames <= RESTART_FRAMES
            || self.writes < self.restart_after
            || self.restarted_at == Some(frames)
        {
            return false;
        }
        // The plain handler's short pauses, for at most RESTART_WAIT
        // (SQLite's own timeout sleeps 1, 2, 5, 10 ms, with the write
        // lock held).
        let _ = self.conn.busy_handler(Some(within_restart_wait));
        let done = copy_and_restart(&self.conn);
        let _ = self.conn.busy_handler(Some(busy::handler));
        if done {
            // Everything is copied; the next write starts the log again.
            // The length stays as seen, so that a close before that write
            // still starts it (`close_log`).
            self.restarted_at = Some(frames);
        } else {
            self.restart_after = self.writes + 64;
        }
        done
    }

    /// Makes this handle's writes leave the log's restart (see
    /// [`Queue::restart_log`]) to [`Queue::log_upkeep`]. A shadow calls that
    /// once its next job runs: the copy's fsyncs (a few milliseconds, two
    /// or three for every 60 or so short jobs) then fall while the shadow
    /// waits for the job anyway, not between one job's end and the next's
    /// start, where each left a cpu idle (a tenth of a second of a
    /// 2,000-job run on two cpus, bench/README.md).
    pub fn defer_log_upkeep(&mut self) {
        self.upkeep_deferred = true;
    }

    /// The log's restart that [`Queue::defer_log_upkeep`] put off: done
    /// now if the last commits left the log long enough to need it. A
    /// restart is followed at once by the one small record that starts the
    /// log at its first block: that commit syncs the log's new header, an
    /// fsync the next job's end would otherwise wait for.
    pub fn log_upkeep(&mut self) {
        if self.restart_log() {
            self.note_restart();
        }
    }

    /// After each write: the log's restart, unless the handle's owner does
    /// it later ([`Queue::defer_log_upkeep`]) and the log is still short of
    /// [`KEEP_FRAMES_BESIDE`] (a shadow whose jobs fail before they start
    /// never reaches its later call; past that length the write does it).
    pub(super) fn upkeep_after_write(&mut self) {
        if !self.upkeep_deferred || self.log_frames() > KEEP_FRAMES_BESIDE {
            let _ = self.restart_log();
        }
    }

    /// What a closing handle does to the log (see the module's text).
    /// Never waits for readers: when another process reads or writes, the
    /// checkpoint backs off and a later close, or a writer's check after
    /// its write, does it. Says whether SQLite's own close of the
    /// connection still has work to do on the files (an empty log to
    /// remove, or a log that cannot be looked at).
    pub(super) fn close_log(&mut self) -> bool {
        let len = match std::fs::metadata(self.log_path()) {
            Ok(m) => m.len(),
            Err(_) => return true,
        };
        // Nothing was ever written to it (a reader, or a tool that met a
        // damaged queue): closing removes it and its index, as SQLite does
        // by default, so nothing new is left in SPOOL.
        if len == 0 {
            if !self.shared {
                let _ = self.conn.set_db_config(
                    rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
                    false,
                );
            }
            return true;
        }
        let _ = self.conn.busy_timeout(Duration::ZERO);
        // The short limit first: only a log past it is worth a look at
        // who else has the queue open.
        if self.log_frames() > KEEP_FRAMES && self.log_frames() > self.keep_frames() {
            self.start_log_again();
        } else if len > FILE_LIMIT {
            let _ = self
                .conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        }
        false
    }

    /// The frames a closing handle leaves in the log: [`KEEP_FRAMES`] when
    /// it may be the queue's last connection, for the next process opens
    /// the queue alone and reads the whole log to rebuild its index; and
    /// [`KEEP_FRAMES_BESIDE`] while another process holds the queue open (a
    /// shadow, a pass), for then the index stays in shared memory and a
    /// new process reads none of the log to open it. Each start costs its
    /// closer three or four fsyncs: in a shell loop of single submits
    /// beside a lingering shadow, with the log growing by a submit's and a
    /// run's frames per job, two submits in five paid them at 64 frames.
    /// Who else has the queue open is asked of the kernel: SQLite's read
    /// lock on [`SHM_DMS_BYTE`] (`sys::lockprobe`, which says why not
    /// `/proc/locks`, and how it asks without dropping SQLite's locks).
    fn keep_frames(&self) -> u32 {
        let shm = self.path.with_extension("db-shm");
        match crate::sys::lockprobe::others_lock_byte(&shm, SHM_DMS_BYTE) {
            Some(true) => KEEP_FRAMES_BESIDE,
            _ => KEEP_FRAMES,
        }
    }

    /// Copies the log into the database and, when that left no frame
    /// uncopied and no reader in the log, writes one record, which starts
    /// the log again at its first block; that commit cuts the file to
    /// [`FILE_LIMIT`] if it is longer, and otherwise leaves it as it is.
    fn start_log_again(&mut self) {
        if !copy_and_restart(&self.conn) {
            return;
        }
        // The record is there only to start the log: it need not reach the
        // disk before the process ends (a durable handle, tern_submit's,
        // would sync it at commit).
        let _ = self.conn.pragma_update(None, "synchronous", "NORMAL");
        self.note_restart();
    }

    /// Writes the record that starts the log again after a full copy (its
    /// count of restarts, in `meta`).
    fn note_restart(&self) {
        let _ = self.conn.execute(
            "INSERT INTO meta (key, value) VALUES ('log_restarts', 1) \
             ON CONFLICT (key) DO UPDATE SET value = value + 1",
            [],
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first commit to a new log marks it synced, even when SQLite
    /// wrote pages of the transaction to the log before the commit (a
    /// transaction larger than its page cache).
    #[test]
    fn a_new_log_is_marked_synced_at_its_first_commit_even_after_a_spill() {
        let dir = tempfile::tempdir().unwrap();
        let (db, log) = (dir.path().join("t.db"), dir.path().join("t.db-wal"));
        let probe = dir.path().join("probe");
        std::fs::write(&probe, "").unwrap();
        if crate::sys::fs::set_xattr(&probe, SYNCED_MARK, b"1").is_err() {
            eprintln!("skipped: no extended attributes here");
            return;
        }
        let mut conn = Connection::open(&db).unwrap();
        conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
            .unwrap();
        watch(&mut conn).unwrap();
        conn.execute_batch("PRAGMA cache_size = 10; BEGIN; CREATE TABLE t (x BLOB);")
            .unwrap();
        for _ in 0..100 {
            conn.execute("INSERT INTO t VALUES (zeroblob(3000))", [])
                .unwrap();
        }
        // Spilled: the log has frames, and nothing is committed yet.
        assert!(std::fs::metadata(&log).unwrap().len() > 0);
        assert!(crate::sys::fs::xattr(&log, SYNCED_MARK).is_none());
        conn.execute_batch("COMMIT").unwrap();
        assert!(entry_synced(&log));
        // A mark that names another file counts for nothing.
        crate::sys::fs::set_xattr(&log, SYNCED_MARK, b"0:0").unwrap();
        assert!(entry_synced(&log));
        assert_ne!(crate::sys::fs::xattr(&log, SYNCED_MARK).unwrap(), b"0:0");
    }

    /// The hook that replaces SQLite's own keeps its automatic checkpoint:
    /// one handle committing on and on, with no reader about, sees the log
    /// reach 1,000 frames and then start again (the write after a full
    /// copy does), never growing far past it.
    #[test]
    fn the_hook_keeps_the_automatic_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = Connection::open(dir.path().join("t.db")).unwrap();
        conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
            .unwrap();
        conn.execute_batch("CREATE TABLE t (x BLOB)").unwrap();
        let frames = watch(&mut conn).unwrap();
        let (mut most, mut restarts, mut last) = (0, 0, 0);
        for _ in 0..3000 {
            conn.execute("INSERT INTO t VALUES (zeroblob(3000))", [])
                .unwrap();
            let now = frames.load(Ordering::Relaxed);
            if now < last {
                restarts += 1;
            }
            (most, last) = (most.max(now), now);
        }
        assert!(restarts >= 2, "the log started again {restarts} times");
        let cap = AUTOCHECKPOINT_FRAMES as u32;
        assert!(
            (cap..cap + 10).contains(&most),
            "the log reached {most} frames"
        );
    }
}
