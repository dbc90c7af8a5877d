//! The shared queue's layout (shared mode, see tern_security(7)), made by
//! the installer as root: SPOOL root:tern 2770 (the directory's set-group-id
//! bit gives what root makes there group tern), its `shadow/` (job locks)
//! and `ctl/` directories likewise, and `queue.db` root:tern 0660 in WAL
//! mode with its `-wal` and `-shm` made by root too. Users reach these only
//! through the set-group-id tools, which never create them.

use std::path::{Path, PathBuf};

use super::{Queue, QueueError, db_path, joblock};
use crate::sys::fs::{own_dir, own_file};

/// The group the shared queue belongs to.
pub const GROUP: &str = "tern";

/// The directories inside SPOOL the installer makes.
pub fn directories(spool: &Path) -> Vec<PathBuf> {
    vec![joblock::dir(spool), spool.join("ctl")]
}

/// Makes (or repairs) the shared queue in `spool` for the group `gid`:
/// idempotent, touching only SPOOL itself, the directories and the
/// database files named above (never a recursive chown), and refusing a
/// SPOOL, directory or file that is a symbolic link. Root only.
pub fn install(spool: &Path, gid: u32) -> Result<(), QueueError> {
    let failed = |p: &Path| {
        let p = p.to_path_buf();
        move |e: std::io::Error| QueueError::Spool {
            path: p,
            msg: crate::sys::io_error_text(&e),
        }
    };
    if !crate::sys::identity::is_root() {
        return Err(QueueError::Spool {
            path: spool.to_path_buf(),
            msg: "only root installs the shared queue".into(),
        });
    }
    if let Some(parent) = spool.parent() {
        std::fs::create_dir_all(parent).map_err(failed(parent))?;
    }
    own_dir(spool, 0, gid, 0o2770).map_err(failed(spool))?;
    for d in directories(spool) {
        own_dir(&d, 0, gid, 0o2770).map_err(failed(&d))?;
    }
    let db = db_path(spool);
    own_file(&db, 0, gid, 0o660).map_err(failed(&db))?;
    // Root opens it once: WAL mode and the schema, written now rather
    // than by the first user's tool.
    drop(Queue::open(spool, false)?);
    for side in ["queue.db-wal", "queue.db-shm"] {
        let p = spool.join(side);
        own_file(&p, 0, gid, 0o660).map_err(failed(&p))?;
    }
    Ok(())
}

/// [`install`] with the gid of [`GROUP`], which must exist.
pub fn install_for_group(spool: &Path) -> Result<(), QueueError> {
    let gid = crate::sys::identity::group_gid(GROUP).ok_or_else(|| QueueError::Spool {
        path: spool.to_path_buf(),
        msg: format!("there is no group '{GROUP}' (create it with: groupadd --system {GROUP})"),
    })?;
    install(spool, gid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn mode_of(p: &Path) -> (u32, u32, u32) {
        let m = std::fs::symlink_metadata(p).unwrap();
        (m.uid(), m.gid(), m.mode() & 0o7777)
    }

    #[test]
    fn root_installs_the_layout_idempotently_and_refuses_links() {
        if !crate::sys::identity::is_root() {
            note!("skipped: installing the shared layout needs root");
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let spool = t.path().join("spool");
        let gid = 12345;
        install(&spool, gid).unwrap();
        install(&spool, gid).unwrap();
        assert_eq!(mode_of(&spool), (0, gid, 0o2770));
        for d in directories(&spool) {
            assert_eq!(mode_of(&d), (0, gid, 0o2770));
        }
        for f in ["queue.db", "queue.db-wal", "queue.db-shm"] {
            assert_eq!(mode_of(&spool.join(f)), (0, gid, 0o660), "{f}");
        }
        let q = Queue::open(&spool, false).unwrap().unwrap();
        let mode: String = q
            .conn()
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        drop(q);
        // A symlinked SPOOL is refused, and its target left alone.
        let target = t.path().join("elsewhere");
        std::fs::create_dir(&target).unwrap();
        let before = mode_of(&target);
        let link = t.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = install(&link, gid).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert_eq!(mode_of(&target), before);
        assert!(!target.join("queue.db").exists());
    }
}
