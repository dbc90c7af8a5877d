//! Grid universe jobs in the pass: they match no slot and no shadow runs
//! them; the pass starts each owner's `tern_gridmanager` (see
//! [`crate::grid`]) when their grid jobs need work, as the schedd starts
//! its gridmanagers. A gridmanager already running holds its lock, and
//! none is started beside it.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::classad::ClassAd;
use crate::config::Config;
use crate::queue::{JobRow, Queue, QueueError};
use crate::vocab::{JobStatus, Universe};

/// The lock of `owner`'s gridmanager.
pub fn lock_path(spool: &Path, owner: &str) -> PathBuf {
    // An owner name is a login name; anything else is made harmless.
    let safe: String = owner
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    spool.join("grid").join(format!("{safe}.lock"))
}

/// Whether a cluster ad is of the grid universe (a universe is per cluster).
pub fn is_grid_ad(cad: &ClassAd) -> bool {
    matches!(
        cad.get("JobUniverse").and_then(|e| e.literal_value()),
        Some(crate::classad::Value::Int(u)) if *u == Universe::Grid.code()
    )
}

/// Drops the grid universe jobs from rows the matching would look at.
pub fn without_grid(q: &Queue, rows: Vec<JobRow>) -> Result<Vec<JobRow>, QueueError> {
    let mut grid: HashMap<i64, bool> = HashMap::new();
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let g = match grid.get(&r.id.cluster) {
            Some(g) => *g,
            None => {
                let g = is_grid_ad(&*q.cluster_ad(r.id.cluster)?);
                grid.insert(r.id.cluster, g);
                g
            }
        };
        if !g {
            out.push(r);
        }
    }
    Ok(out)
}

/// The owners whose grid jobs need a gridmanager: idle ones, running ones,
/// removed ones a gridmanager still manages, and (from `all`, every job
/// when the pass read them all) held ones it still manages. A held job
/// is normally seen to by the gridmanager that was running it; the scan of
/// every held job, which a queue of many held jobs makes costly, is only
/// for one that died meanwhile.
pub fn owners_with_work(q: &Queue, all: Option<&[JobRow]>) -> Result<BTreeSet<String>, QueueError> {
    let mut owners = BTreeSet::new();
    for (cluster, owner) in q.clusters_with_idle()? {
        if is_grid_ad(&*q.cluster_ad(cluster)?) {
            owners.insert(owner);
        }
    }
    let held = all
        .unwrap_or_default()
        .iter()
        .filter(|r| r.status() == Some(JobStatus::Held))
        .cloned();
    for row in q
        .rows_in(&[
            JobStatus::Running,
            JobStatus::Suspended,
            JobStatus::TransferringOutput,
            JobStatus::Removed,
        ])?
        .into_iter()
        .chain(held)
    {
        if owners.contains(&row.owner) || !is_grid_ad(&*q.cluster_ad(row.id.cluster)?) {
            continue;
        }
        // A running grid job always needs its gridmanager: only removed and
        // held ones are told apart by their ad (see needs_work).
        let running = !matches!(row.status(), Some(JobStatus::Removed | JobStatus::Held));
        if running || needs_work(row.status(), &Rc::new(q.full_ad(&row)?)) {
            owners.insert(row.owner.clone());
        }
    }
    Ok(owners)
}

/// Starts the gridmanager of each owner that has none running. Returns
/// how many it started.
pub fn start(
    cfg: &Config,
    spool: &Path,
    owners: &BTreeSet<String>,
) -> Result<usize, std::io::Error> {
    let mut started = 0;
    for owner in owners {
        let path = lock_path(spool, owner);
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d)?;
        }
        let f = crate::sys::fs::spool_lock_file(&path)?;
        // Held: one runs and will see the new work within its interval.
        if f.try_lock().is_err() {
            continue;
        }
        drop(f);
        let prog = super::launch::sibling(cfg, Some("GRIDMANAGER"), "tern_gridmanager");
        let log = gridmanager_log(spool);
        super::launch::spawn_detached(&prog, std::slice::from_ref(owner), log.as_ref())?;
        started += 1;
    }
    Ok(started)
}

/// Where gridmanagers write what goes wrong outside any job's log.
pub fn gridmanager_log(spool: &Path) -> Option<std::fs::File> {
    let d = spool.join("grid");
    let _ = std::fs::create_dir_all(&d);
    crate::sys::fs::spool_log_file(&d.join("GridmanagerLog")).ok()
}

/// Whether a grid job needs the gridmanager: it waits or runs, or it was
/// removed or held while the gridmanager managed it.
pub fn needs_work(status: Option<JobStatus>, ad: &Rc<ClassAd>) -> bool {
    let managed = ad.eval_str("Managed");
    match status {
        Some(
            JobStatus::Idle
            | JobStatus::Running
            | JobStatus::Suspended
            | JobStatus::TransferringOutput,
        ) => true,
        Some(JobStatus::Removed) => managed.as_deref() != Some("ScheddDone"),
        Some(JobStatus::Held) => managed.as_deref() == Some("External"),
        _ => false,
    }
}

/// A removed grid job its gridmanager has yet to cancel remotely: it must
/// not leave the queue before (the remote job would be orphaned).
pub fn awaits_gridmanager(ad: &Rc<ClassAd>, status: Option<JobStatus>) -> bool {
    status == Some(JobStatus::Removed) && is_grid_ad(ad) && needs_work(status, ad)
}
