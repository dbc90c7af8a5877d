//! Where the starter job hooks keep their stderr:
//! `$(SPOOL)/hooks/starter.<cluster>.<proc>.<HOOK>.stderr`, one file per
//! job and hook (the file is also that hook's lock, see [`super::run`]).
//! The shadow runs the hooks (`shadow/hooks.rs`); the files go when their
//! job leaves the queue: the shadow removes them at once when a run ends
//! the job, and the negotiation pass's periodic sweep removes those of
//! jobs that left some other way (tern_rm of a held job). They live here,
//! below both, so that the pass need not reach into the shadow.

use std::path::{Path, PathBuf};

use crate::queue::JobId;

/// The directory every part's hook logs live in.
pub fn dir(spool: &Path) -> PathBuf {
    spool.join("hooks")
}

/// The stderr log of job `id`'s hook `hook` (`PREPARE_JOB`, ...).
pub fn path(spool: &Path, id: JobId, hook: &str) -> PathBuf {
    dir(spool).join(format!("starter.{}.{}.{hook}.stderr", id.cluster, id.proc))
}

/// The job a starter hook log belongs to, from its file name.
fn job_of(name: &str) -> Option<JobId> {
    let rest = name.strip_prefix("starter.")?.strip_suffix(".stderr")?;
    let mut parts = rest.splitn(3, '.');
    let cluster = parts.next()?.parse().ok()?;
    let proc = parts.next()?.parse().ok()?;
    parts.next().filter(|h| !h.is_empty())?;
    Some(JobId { cluster, proc })
}

/// Removes job `id`'s starter hook logs.
pub fn forget(spool: &Path, id: JobId) {
    remove_where(spool, |j| j == id);
}

/// Removes the starter hook logs of jobs that are no longer in the queue
/// (`in_queue` answers for a job); how many files went.
pub fn remove_stale(spool: &Path, in_queue: impl Fn(JobId) -> bool) -> usize {
    remove_where(spool, |j| !in_queue(j))
}

/// Removes the logs of the jobs `gone` picks, by descriptor: `hooks` is
/// opened without following a link (a root pass over a SPOOL someone else
/// may write never lists or removes in a directory a link points to), and
/// each entry is removed as what it is, a link as a link
/// ([`crate::sys::tree::Dir::remove`]).
fn remove_where(spool: &Path, gone: impl Fn(JobId) -> bool) -> usize {
    let Ok(logs) = crate::sys::tree::Dir::in_spool(spool, "hooks") else {
        return 0;
    };
    let mut n = 0;
    for name in logs.entries().unwrap_or_default() {
        if job_of(&name).is_some_and(&gone) && logs.remove(&name).is_ok() {
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_of_jobs_that_left_go_and_others_stay() {
        let d = tempfile::tempdir().unwrap();
        let id = |cluster, proc| JobId { cluster, proc };
        let a = path(d.path(), id(3, 1), "PREPARE_JOB");
        let b = path(d.path(), id(3, 10), "JOB_EXIT");
        let other = dir(d.path()).join("fetch.slot1.FETCH_WORK.stderr");
        std::fs::create_dir_all(dir(d.path())).unwrap();
        for p in [&a, &b, &other] {
            std::fs::write(p, "x").unwrap();
        }
        assert_eq!(job_of("starter.3.1.PREPARE_JOB.stderr"), Some(id(3, 1)));
        assert_eq!(job_of("starter.3.stderr"), None);
        assert_eq!(remove_stale(d.path(), |j| j == id(3, 10)), 1);
        assert!(!a.exists() && b.exists() && other.exists());
        forget(d.path(), id(3, 10));
        assert!(!b.exists() && other.exists());
    }

    /// `hooks` planted as a link, and a link planted with a log's name:
    /// neither is followed; the link with the log's name goes as a link.
    #[test]
    fn the_sweep_never_follows_a_planted_link() {
        let d = tempfile::tempdir().unwrap();
        let spool = d.path().join("spool");
        let elsewhere = d.path().join("elsewhere");
        std::fs::create_dir_all(&spool).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        let victim = elsewhere.join("starter.1.0.PREPARE_JOB.stderr");
        std::fs::write(&victim, "keep").unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir(&spool)).unwrap();
        assert_eq!(remove_stale(&spool, |_| false), 0);
        assert!(victim.exists(), "not removed through the linked directory");
        std::fs::remove_file(dir(&spool)).unwrap();
        std::fs::create_dir(dir(&spool)).unwrap();
        let link = path(
            &spool,
            JobId {
                cluster: 1,
                proc: 0,
            },
            "PREPARE_JOB",
        );
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert_eq!(remove_stale(&spool, |_| false), 1);
        assert!(link.symlink_metadata().is_err(), "the link went");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    }
}
