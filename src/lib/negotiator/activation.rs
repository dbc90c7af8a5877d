//! How passes get started in shared mode (tern_security(7), "Activation").
//!
//! In shared mode only root runs passes: a user's tern_submit, job exit or
//! tern_negotiate leaves the pass-wanted mark and returns, and a root pass
//! started by systemd (tern-negotiate.path on the mark, the minutely
//! timer), by cron, or by `tern_negotiate -loop -watch` takes it on. This
//! module holds the pieces of that which do not belong to one pass: the
//! test for "this process may only ask", the root pass's care of the path
//! unit, and the inotify watch on the mark.

use std::path::Path;
use std::time::Duration;

use crate::config::{Config, ConfigError};

/// The path unit that starts a root pass when the mark appears.
pub const PATH_UNIT: &str = "tern-negotiate.path";
/// The oneshot service it starts.
pub const SERVICE_UNIT: &str = "tern-negotiate.service";

/// Whether SPOOL is the one queue every user shares (SHARED_QUEUE).
pub fn is_shared(cfg: &Config) -> Result<bool, ConfigError> {
    cfg.get_bool("SHARED_QUEUE", false)
}

/// Whether this process may only leave the mark, not run a pass: shared
/// mode and not root. There is no user pass this round: a pass started by
/// a user would run shadows with that user's ids, which cannot start
/// other users' jobs, and the fair-share rules of a user pass (the spec's
/// SHARED_USER_PASS) are not built.
pub fn only_marks(cfg: &Config) -> Result<bool, ConfigError> {
    Ok(is_shared(cfg)? && crate::sys::real_uid() != 0)
}

/// Whether systemd is the init system here (sd_booted(3)'s test).
pub fn systemd_running() -> bool {
    Path::new("/run/systemd/system").is_dir()
}

/// A root pass under systemd makes sure prompt activation is on: a path
/// unit that hit its trigger limit (a user recreating the mark in a loop,
/// or the service's start limit) stays failed and watches nothing until
/// restarted, so the pass restarts it. Returns what it did, for the
/// pass's report; does nothing without systemd or when the unit is fine.
pub fn restart_failed_path_unit() -> Option<String> {
    if !systemd_running() || crate::sys::real_uid() != 0 {
        return None;
    }
    let systemctl = ["/usr/bin/systemctl", "/bin/systemctl"]
        .into_iter()
        .find(|p| Path::new(p).exists())?;
    let run = |args: &[&str]| {
        std::process::Command::new(systemctl)
            .args(args)
            .env_clear()
            .current_dir("/")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    };
    // is-failed exits 0 only when the unit is in the failed state.
    if !run(&["is-failed", "--quiet", PATH_UNIT]) {
        return None;
    }
    run(&["reset-failed", PATH_UNIT, SERVICE_UNIT]);
    if run(&["start", PATH_UNIT]) {
        Some(format!("restarted {PATH_UNIT}, which had failed"))
    } else {
        Some(format!(
            "warning: {PATH_UNIT} has failed and will not restart"
        ))
    }
}

/// The shortest and the longest pause after a root pass (see [`Pacer`]).
pub const MIN_PAUSE: Duration = Duration::from_secs(1);
pub const MAX_PAUSE: Duration = Duration::from_secs(60);

/// How long the next root pass waits after one that took `took`: as long
/// again, at least [`MIN_PAUSE`] and at most [`MAX_PAUSE`]. A pass is
/// then busy at most half the time however fast users leave marks.
pub fn pause_after(took: Duration) -> Duration {
    took.clamp(MIN_PAUSE, MAX_PAUSE)
}

/// The pace of root passes in shared mode, kept in the pass lock file so
/// that it holds across processes: the path unit, the timer, cron and
/// `-loop -watch` each start a new pass, and a pass that ends with the
/// mark back would otherwise be followed at once by the next. Each round
/// records when it ended and how long it took (on the boot-time clock,
/// which no one sets); the next round, in this process or another, first
/// waits out [`pause_after`] that. The record also counts every root
/// round, the pass log a test or an administrator reads
/// (`tern-pass END_MS TOOK_MS ROUNDS`). Only the holder of the pass lock
/// writes it.
pub struct Pacer<'a> {
    lock: &'a std::fs::File,
}

impl<'a> Pacer<'a> {
    /// The pacer of the pass lock `lock`, which the caller holds.
    pub fn new(lock: &'a std::fs::File) -> Pacer<'a> {
        Pacer { lock }
    }

    /// How long to wait before the next round now: what is left of the
    /// pause after the last recorded round. A record that is unreadable,
    /// or from the future (another boot), asks for no wait.
    pub fn due_in(&self) -> Duration {
        let Some(r) = self.read() else {
            return Duration::ZERO;
        };
        let now = crate::sys::time::boot_time();
        if r.ended > now {
            return Duration::ZERO;
        }
        pause_after(r.took).saturating_sub(now - r.ended)
    }

    /// Waits until the next round is due.
    pub fn wait(&self) {
        std::thread::sleep(self.due_in());
    }

    /// Records a round that took `took` and has just ended, and counts it
    /// with every root round before it (whichever process ran them: the
    /// count is what an administrator or a test reads to see how many
    /// rounds ran, in the record's last field). A record that cannot be
    /// written is no error: the rounds of this process are still spaced
    /// by it.
    pub fn record(&self, took: Duration) {
        use std::os::unix::fs::FileExt;
        let rounds = self.read().map_or(0, |r| r.rounds) + 1;
        let text = format!(
            "tern-pass {} {} {rounds}\n",
            crate::sys::time::boot_time().as_millis(),
            took.as_millis()
        );
        // Written over the old record and then cut to length, never
        // emptied first: a reader always finds a whole first line.
        if self.lock.write_all_at(text.as_bytes(), 0).is_ok() {
            let _ = self.lock.set_len(text.len() as u64);
        }
    }

    /// The root rounds recorded so far.
    pub fn rounds(&self) -> u64 {
        self.read().map_or(0, |r| r.rounds)
    }

    /// The record: `tern-pass END_MS TOOK_MS ROUNDS`.
    fn read(&self) -> Option<Record> {
        use std::os::unix::fs::FileExt;
        let mut buf = [0u8; 80];
        let n = self.lock.read_at(&mut buf, 0).ok()?;
        let text = std::str::from_utf8(&buf[..n]).ok()?;
        let mut f = text.strip_prefix("tern-pass ")?.split_whitespace();
        let mut num = || f.next()?.parse::<u64>().ok();
        Some(Record {
            ended: Duration::from_millis(num()?),
            took: Duration::from_millis(num()?),
            rounds: num().unwrap_or(0),
        })
    }
}

/// The last root round, as the pass lock file records it.
struct Record {
    ended: Duration,
    took: Duration,
    rounds: u64,
}

/// The lock that keeps `tern_negotiate -loop` to one instance per SPOOL:
/// `Some(file)` holds it until dropped, `None` when another loop has it.
pub fn loop_lock(spool: &Path) -> std::io::Result<Option<std::fs::File>> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(spool.join("negotiator.loop.lock"))?;
    match f.try_lock() {
        Ok(()) => Ok(Some(f)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// An inotify watch on SPOOL for the pass-wanted mark: created, touched
/// or renamed into place. Made before a pass, so a mark left while the
/// pass runs is seen afterwards.
pub struct MarkWatch(crate::sys::inotify::NameWatch);

impl MarkWatch {
    pub fn new(spool: &Path) -> std::io::Result<MarkWatch> {
        let name = super::wanted_path(spool)
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_default();
        crate::sys::inotify::NameWatch::new(spool, &name).map(MarkWatch)
    }

    /// Waits until the mark is made or touched, or `timeout` passes.
    /// Returns whether it was; marks made before the call count.
    pub fn wait(&self, timeout: Duration) -> std::io::Result<bool> {
        self.0.wait(timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watch_sees_the_mark_made_and_touched_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let w = MarkWatch::new(dir.path()).unwrap();
        std::fs::write(dir.path().join("other"), "").unwrap();
        assert!(!w.wait(Duration::from_millis(50)).unwrap());
        std::fs::File::create(super::super::wanted_path(dir.path())).unwrap();
        assert!(w.wait(Duration::from_secs(5)).unwrap());
        // Renamed into place.
        std::fs::remove_file(super::super::wanted_path(dir.path())).unwrap();
        std::fs::write(dir.path().join("tmp"), "").unwrap();
        std::fs::rename(
            dir.path().join("tmp"),
            super::super::wanted_path(dir.path()),
        )
        .unwrap();
        assert!(w.wait(Duration::from_secs(5)).unwrap());
        assert!(!w.wait(Duration::from_millis(20)).unwrap());
    }

    #[test]
    fn a_pass_waits_as_long_as_the_last_round_took_at_least_a_second() {
        assert_eq!(pause_after(Duration::from_millis(30)), MIN_PAUSE);
        assert_eq!(pause_after(Duration::from_secs(3)), Duration::from_secs(3));
        assert_eq!(pause_after(Duration::from_secs(3600)), MAX_PAUSE);
        let dir = tempfile::tempdir().unwrap();
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(dir.path().join("negotiator.lock"))
            .unwrap();
        let p = Pacer::new(&lock);
        assert_eq!(p.due_in(), Duration::ZERO, "no round recorded yet");
        p.record(Duration::from_millis(10));
        let due = p.due_in();
        assert!(
            due > Duration::from_millis(900) && due <= MIN_PAUSE,
            "{due:?}"
        );
        // Another process reads the same record from the same file.
        let other = std::fs::File::open(dir.path().join("negotiator.lock")).unwrap();
        assert!(Pacer::new(&other).due_in() > Duration::from_millis(900));
        p.record(Duration::from_secs(5));
        assert!(p.due_in() > Duration::from_millis(4900));
        assert_eq!(p.rounds(), 2, "every round is counted");
        // Garbage, or a record from the future (another boot), asks for
        // no wait.
        std::fs::write(dir.path().join("negotiator.lock"), "tern-pass x y\n").unwrap();
        assert_eq!(p.due_in(), Duration::ZERO);
        let future = crate::sys::time::boot_time() + Duration::from_secs(100);
        let text = format!("tern-pass {} 5000\n", future.as_millis());
        std::fs::write(dir.path().join("negotiator.lock"), text).unwrap();
        assert_eq!(p.due_in(), Duration::ZERO);
    }

    #[test]
    fn one_loop_per_spool() {
        let dir = tempfile::tempdir().unwrap();
        let first = loop_lock(dir.path()).unwrap();
        assert!(first.is_some());
        assert!(loop_lock(dir.path()).unwrap().is_none());
        drop(first);
        assert!(loop_lock(dir.path()).unwrap().is_some());
    }

    #[test]
    fn shared_mode_for_a_user_only_marks() {
        let mut cfg = Config::defaults();
        assert!(!only_marks(&cfg).unwrap());
        cfg.parse_str("SHARED_QUEUE = True\n", "test").unwrap();
        assert!(is_shared(&cfg).unwrap());
        assert_eq!(only_marks(&cfg).unwrap(), crate::sys::real_uid() != 0);
    }
}
