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
