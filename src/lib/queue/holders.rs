//! Users holding the shared queue hostage. In shared mode every user runs
//! the setgid tools, and a user may stop their own tool (SIGSTOP cannot be
//! ignored) in the middle of a transaction: it then holds SQLite's write
//! lock until someone intervenes, and every pass waits behind it. The root
//! pass intervenes: a process of another user that has the database open
//! and is stopped is killed, and the kill is reported. That is safe
//! because every change is one SQLite transaction: the killed one rolls
//! back as if it had never begun.
//!
//! A holder need not be stopped to hold everyone up: a user's tool that is
//! slow inside its transaction (a hung mount it stats) does it too. No
//! tool means to: tern_submit reads everything a description names before
//! it locks (`submit::Inputs`), and the other tools only read and write
//! the database inside one. So a root pass that has waited
//! STALE_LOCK_SECONDS for the write lock of one live process of another
//! user kills it, as it kills a stopped one at once ([`StaleWriters`]).
//! HTCondor has no such rule: its schedd alone writes its queue.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::sys::pids::{self, Holder};

/// The byte of the `-shm` file whose fcntl write lock is SQLite's WAL
/// write lock (os_unix.c: UNIX_SHM_BASE, 120, plus WAL_WRITE_LOCK, 0).
const WAL_WRITE_LOCK_BYTE: u64 = 120;

/// Kills every stopped (or traced) process of a user other than root that
/// holds the queue of `spool` open (the database, its WAL or its shared
/// memory), and says what it killed, one line each.
pub fn kill_stopped(spool: &Path) -> Vec<String> {
    let db = super::db_path(spool);
    let mut paths = vec![db.clone()];
    for side in ["-wal", "-shm"] {
        let mut p = db.clone().into_os_string();
        p.push(side);
        paths.push(p.into());
    }
    pids::holders_of(&paths)
        .into_iter()
        .filter(is_hostage_taker)
        .filter(|h| pids::signal_process(h.pid, libc::SIGKILL))
        .map(|h| {
            format!(
                "killed process {} (uid {}): it was stopped while holding the queue {}",
                h.pid,
                h.uid,
                db.display()
            )
        })
        .collect()
}

/// A stopped or traced process that is not root's.
fn is_hostage_taker(h: &Holder) -> bool {
    h.uid != 0 && matches!(h.state, 'T' | 't')
}

/// A root pass's busy handler for the queue database: while it waits for
/// the write lock it watches who holds it, and SIGKILLs a holder of
/// another user that is stopped, or that it has seen holding the lock for
/// `limit` without a break. It gives up (SQLITE_BUSY) after `wait`.
pub struct StaleWriters {
    shm: PathBuf,
    limit: Duration,
    wait: Duration,
    /// This wait's start, and the holder watched since when.
    began: Instant,
    watched: Option<(Watched, Instant)>,
    report: Box<dyn FnMut(&str) + Send>,
}

/// A process named for good: its pid and start time (a pid given out
/// again is another process).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Watched {
    pid: i32,
    started: u64,
}

/// What to do about the write lock's holder now.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Wait,
    Kill(&'static str),
}

impl StaleWriters {
    /// For the queue database `db`; `report` is told of each kill.
    pub fn new(
        db: &Path,
        limit: Duration,
        wait: Duration,
        report: Box<dyn FnMut(&str) + Send>,
    ) -> StaleWriters {
        let mut shm = db.as_os_str().to_os_string();
        shm.push("-shm");
        StaleWriters {
            shm: shm.into(),
            limit,
            wait,
            began: Instant::now(),
            watched: None,
            report,
        }
    }

    /// SQLite's busy handler: `count` is how many times it was called for
    /// this wait. Returns whether to try again.
    pub fn busy(&mut self, count: i32) -> bool {
        let now = Instant::now();
        if count == 0 {
            self.began = now;
            self.watched = None;
        }
        if now.duration_since(self.began) >= self.wait {
            return false;
        }
        // The holder is looked for once the short waits are over: most
        // holders let go within them.
        if super::busy::pause(count) >= Duration::from_millis(1)
            && let Some(pid) =
                crate::sys::lockprobe::write_lock_holder(&self.shm, WAL_WRITE_LOCK_BYTE)
            && let Some(h) = holder_of(pid)
            && let Verdict::Kill(why) = self.judge(&h, now)
            && pids::signal_process(h.holder.pid, libc::SIGKILL)
        {
            (self.report)(&format!(
                "killed process {} (uid {}): it {why} while holding the queue's write lock",
                h.holder.pid, h.holder.uid
            ));
            self.watched = None;
        }
        super::busy::sleep(count);
        true
    }

    /// The rule: root's processes and our own are never killed; a stopped
    /// or traced one is at once; another only once watched for `limit`.
    fn judge(&mut self, h: &Seen, now: Instant) -> Verdict {
        let me = std::process::id() as i32;
        if h.holder.uid == 0 || h.holder.pid == me {
            self.watched = None;
            return Verdict::Wait;
        }
        if is_hostage_taker(&h.holder) {
            return Verdict::Kill("was stopped");
        }
        match self.watched {
            Some((w, since)) if w == h.id => {
                if now.duration_since(since) >= self.limit {
                    Verdict::Kill("went past STALE_LOCK_SECONDS")
                } else {
                    Verdict::Wait
                }
            }
            _ => {
                self.watched = Some((h.id, now));
                Verdict::Wait
            }
        }
    }
}

impl super::Queue {
    /// Makes this handle's waits for the write lock a root pass's (see
    /// [`StaleWriters`]): holders of another user that are stopped, or
    /// hold the lock for `limit` (STALE_LOCK_SECONDS), are killed and
    /// `report`ed. It waits at most 30 s as before, or `limit` and 5 s more.
    pub fn kill_stale_writers(
        &mut self,
        limit: Duration,
        report: Box<dyn FnMut(&str) + Send>,
    ) -> Result<(), super::QueueError> {
        let wait = super::busy::TIMEOUT.max(limit + Duration::from_secs(5));
        let mut w = StaleWriters::new(&self.path, limit, wait, report);
        self.conn.busy_handler(Some(move |count| w.busy(count)))?;
        self.own_busy_handler = true;
        Ok(())
    }
}

/// A lock holder as seen now: who, and which process for good.
struct Seen {
    holder: Holder,
    id: Watched,
}

fn holder_of(pid: i32) -> Option<Seen> {
    let holder = pids::holder(pid)?;
    let started = pids::start_time(pid)?;
    Some(Seen {
        holder,
        id: Watched { pid, started },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_another_users_stopped_holders_are_taken_for_hostage_takers() {
        let h = |uid, state| Holder { pid: 7, uid, state };
        assert!(is_hostage_taker(&h(1000, 'T')));
        assert!(is_hostage_taker(&h(1000, 't')));
        assert!(!is_hostage_taker(&h(1000, 'S')), "a sleeping tool waits");
        assert!(!is_hostage_taker(&h(0, 'T')), "root's own are root's");
    }

    fn seen(pid: i32, uid: u32, state: char, started: u64) -> Seen {
        Seen {
            holder: Holder { pid, uid, state },
            id: Watched { pid, started },
        }
    }

    #[test]
    fn a_live_holder_is_killed_only_once_watched_past_the_limit() {
        let limit = Duration::from_secs(20);
        let mut w = StaleWriters::new(
            Path::new("/nowhere/queue.db"),
            limit,
            Duration::from_secs(30),
            Box::new(|_| {}),
        );
        let t0 = Instant::now();
        let a = seen(4000, 1000, 'S', 7);
        assert_eq!(w.judge(&a, t0), Verdict::Wait);
        assert_eq!(w.judge(&a, t0 + limit / 2), Verdict::Wait);
        assert_eq!(
            w.judge(&a, t0 + limit),
            Verdict::Kill("went past STALE_LOCK_SECONDS")
        );
        // Another process (or the pid given out again) starts the watch over.
        let again = seen(4000, 1000, 'S', 8);
        assert_eq!(w.judge(&again, t0 + limit), Verdict::Wait);
        assert_eq!(w.judge(&again, t0 + limit * 3 / 2), Verdict::Wait);
        assert_eq!(
            w.judge(&seen(4001, 1000, 'T', 9), t0),
            Verdict::Kill("was stopped")
        );
        let root = seen(4002, 0, 'T', 1);
        assert_eq!(w.judge(&root, t0), Verdict::Wait);
        assert_eq!(
            w.judge(&root, t0 + limit * 10),
            Verdict::Wait,
            "never root's"
        );
    }
}
