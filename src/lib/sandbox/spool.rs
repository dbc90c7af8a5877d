//! A job's SPOOL copy between runs (ON_EXIT_OR_EVICT), where HTCondor
//! keeps it (`spooled_job_files.cpp`):
//! `$(SPOOL)/<ClusterId % 10000>/<ProcId % 10000>/cluster<C>.proc<P>.subproc0`.
//!
//! SPOOL may be shared mode's (root:tern 2770), which a job's owner
//! cannot even enter, and whoever owns it, root never reads, writes or
//! removes by path what an owner controls. So root makes the two levels
//! and the copy's directory (mode 0700, given to the owner), by descriptor
//! and without following links; the owner fills the copy, and reads it
//! back, through a descriptor root holds ([`Dir::proc_path`]); a new copy
//! replaces the old one by renames in the level root owns; and a copy
//! goes, once its job has left the queue, by descriptor and as its owner
//! ([`crate::sys::tree`]).

use std::io;
use std::path::{Path, PathBuf};

use crate::sys::identity::Identity;
use crate::sys::tree::Dir;

/// The two levels and the name of job `cluster.proc`'s copy.
fn names(cluster: i64, proc_: i64) -> [String; 3] {
    [
        (cluster % 10000).to_string(),
        (proc_ % 10000).to_string(),
        format!("cluster{cluster}.proc{proc_}.subproc0"),
    ]
}

/// Where job `cluster.proc`'s copy is, for messages.
pub fn job_spool(spool: &Path, cluster: i64, proc_: i64) -> PathBuf {
    let [a, b, name] = names(cluster, proc_);
    spool.join(a).join(b).join(name)
}

/// The job's copy to restore from, open, when it has one that `uid` owns
/// (the job's owner, or this process's user when it runs the job as
/// itself): a copy someone else owns is not the job's, and is left alone,
/// with a note.
pub fn open_copy(spool: &Path, cluster: i64, proc_: i64, uid: libc::uid_t) -> Option<Dir> {
    let [a, b, name] = names(cluster, proc_);
    let dir = Dir::open(spool, true)
        .and_then(|d| d.sub(&a))
        .and_then(|d| d.sub(&b))
        .and_then(|d| d.sub(&name))
        .ok()?;
    match dir.owner() {
        Ok((u, _)) if u == uid => Some(dir),
        Ok((u, _)) => {
            eprintln!(
                "tern_shadow: not restoring {}: it belongs to uid {u}, not the job's {uid}",
                job_spool(spool, cluster, proc_).display()
            );
            None
        }
        Err(_) => None,
    }
}

/// Saves a new copy of job `cluster.proc`: root makes `<copy>.tmp` (the
/// owner's, mode 0700), `fill` writes into it through the path it is
/// given (run it as the owner), and the new copy replaces the old one
/// whole, so a crash leaves one whole copy. An error is about the
/// directories, never `fill`'s own.
pub fn save<R>(
    spool: &Path,
    cluster: i64,
    proc_: i64,
    owner: Option<&Identity>,
    fill: impl FnOnce(&Path) -> R,
) -> io::Result<R> {
    let [a, b, name] = names(cluster, proc_);
    let top = Dir::open(spool, true)?;
    let level = own_level(&top, top.make_sub(&a, 0o755)?)?;
    let level = own_level(&top, level.make_sub(&b, 0o755)?)?;
    let (tmp, swap) = (format!("{name}.tmp"), format!("{name}.swap"));
    // What a crashed save left.
    level.remove(&tmp)?;
    let into = level.make_sub(&tmp, 0o700)?;
    if let Some(id) = owner {
        into.give(id.uid, id.gid, 0o700)?;
    }
    let filled = fill(&into.proc_path());
    drop(into);
    level.remove(&swap)?;
    match level.rename(&name, &swap) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        r => r?,
    }
    level.rename(&tmp, &name)?;
    level.remove(&swap)?;
    Ok(filled)
}

/// A level root made belongs to SPOOL's owner, as one the owner's own
/// tools made would: a personal SPOOL is its user's, whose own shadow
/// saves copies there too (shared mode's SPOOL is root's, and so stay its
/// levels). Given on the level's descriptor.
fn own_level(top: &Dir, level: Dir) -> io::Result<Dir> {
    let (uid, gid) = top.owner()?;
    if crate::sys::identity::is_root() && level.owner()? != (uid, gid) {
        level.give(uid, gid, 0o755)?;
    }
    Ok(level)
}

/// Removes the copies of jobs that are no longer in the queue (`in_queue`
/// answers for a cluster and proc), and the levels they leave empty;
/// HTCondor removes a job's copy when the job leaves the queue. Returns
/// how many it removed.
pub fn remove_stale_spools(spool: &Path, in_queue: impl Fn(i64, i64) -> bool) -> usize {
    let numeric = |n: &str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
    let Ok(top) = Dir::open(spool, true) else {
        return 0;
    };
    let mut removed = 0;
    for a in top.subdirs().unwrap_or_default() {
        let Some(da) = numeric(&a).then(|| top.sub(&a).ok()).flatten() else {
            continue;
        };
        for b in da.subdirs().unwrap_or_default() {
            let Ok(db) = da.sub(&b) else { continue };
            for c in db.subdirs().unwrap_or_default() {
                let Some((cl, pr)) = parse_spool_name(&c) else {
                    continue;
                };
                if !in_queue(cl, pr) && db.remove(&c).is_ok() {
                    removed += 1;
                }
            }
            let _ = da.remove_empty(&b);
        }
        let _ = top.remove_empty(&a);
    }
    removed
}

/// `cluster<C>.proc<P>.subproc0` (and its `.tmp`/`.swap` siblings).
fn parse_spool_name(name: &str) -> Option<(i64, i64)> {
    let rest = name.strip_prefix("cluster")?;
    let (c, rest) = rest.split_once(".proc")?;
    let (p, _) = rest.split_once(".subproc0")?;
    Some((c.parse().ok()?, p.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    #[test]
    fn a_copy_is_saved_whole_restored_by_its_owner_and_removed_once_its_job_left() {
        let d = tempfile::tempdir().unwrap();
        let spool = d.path();
        let me = crate::sys::identity::effective_uid();
        let wrote = save(spool, 12345, 7, None, |into| {
            std::fs::write(into.join("partial"), "1").unwrap();
            "filled"
        })
        .unwrap();
        assert_eq!(wrote, "filled");
        let copy = job_spool(spool, 12345, 7);
        assert!(copy.ends_with("2345/7/cluster12345.proc7.subproc0"));
        assert_eq!(std::fs::read_to_string(copy.join("partial")).unwrap(), "1");
        assert_eq!(
            std::fs::metadata(&copy).unwrap().permissions().mode() & 0o777,
            0o700
        );
        // A second save replaces the first whole.
        save(spool, 12345, 7, None, |into| {
            std::fs::write(into.join("next"), "2")
        })
        .unwrap()
        .unwrap();
        let names: Vec<_> = std::fs::read_dir(&copy)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["next"]);
        let open = open_copy(spool, 12345, 7, me).expect("the owner's copy");
        assert_eq!(
            std::fs::read_to_string(open.proc_path().join("next")).unwrap(),
            "2"
        );
        assert!(
            open_copy(spool, 12345, 7, me + 1).is_none(),
            "someone else's copy"
        );
        assert!(open_copy(spool, 1, 0, me).is_none());
        drop(open);
        assert_eq!(remove_stale_spools(spool, |_, _| true), 0);
        assert_eq!(remove_stale_spools(spool, |c, p| (c, p) != (12345, 7)), 1);
        assert!(!spool.join("2345").exists(), "the empty levels go too");
    }

    /// A level planted as a link (a personal SPOOL is its user's) is never
    /// followed: the save fails, and nothing lands at the link's target.
    #[test]
    fn a_level_that_is_a_link_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let elsewhere = d.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let spool = d.path().join("spool");
        std::fs::create_dir(&spool).unwrap();
        std::os::unix::fs::symlink(&elsewhere, spool.join("3")).unwrap();
        assert!(save(&spool, 3, 0, None, |_| ()).is_err());
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        assert_eq!(remove_stale_spools(&spool, |_, _| false), 0);
        assert!(elsewhere.is_dir() && spool.join("3").symlink_metadata().is_ok());
    }

    #[test]
    fn spool_names_parse() {
        assert_eq!(parse_spool_name("cluster12.proc3.subproc0"), Some((12, 3)));
        assert_eq!(
            parse_spool_name("cluster12.proc3.subproc0.tmp"),
            Some((12, 3))
        );
        assert_eq!(parse_spool_name("cluster12.procx.subproc0"), None);
        assert_eq!(parse_spool_name("other"), None);
    }

    #[test]
    fn a_copy_made_for_an_owner_is_theirs() {
        let Some(nobody) = crate::sys::identity::user("nobody") else {
            return;
        };
        if !crate::sys::identity::is_root() {
            return;
        }
        let d = tempfile::tempdir().unwrap();
        save(d.path(), 4, 1, Some(&nobody), |_| ()).unwrap();
        let copy = job_spool(d.path(), 4, 1);
        let m = std::fs::metadata(&copy).unwrap();
        assert_eq!((m.uid(), m.mode() & 0o777), (nobody.uid, 0o700));
        assert!(open_copy(d.path(), 4, 1, nobody.uid).is_some());
        assert!(open_copy(d.path(), 4, 1, 0).is_none());
        // The levels are SPOOL's owner's: root's here.
        assert_eq!(std::fs::metadata(d.path().join("4/1")).unwrap().uid(), 0);
        // A personal SPOOL of nobody's gets levels nobody's own shadow can
        // save into later.
        let theirs = tempfile::tempdir().unwrap();
        std::os::unix::fs::chown(theirs.path(), Some(nobody.uid), Some(nobody.gid)).unwrap();
        save(theirs.path(), 5, 2, Some(&nobody), |_| ()).unwrap();
        for level in ["5", "5/2"] {
            let m = std::fs::metadata(theirs.path().join(level)).unwrap();
            assert_eq!((m.uid(), m.mode() & 0o777), (nobody.uid, 0o755), "{level}");
        }
    }
}
