//! Read-only listings of the queue for tools that show many jobs at once
//! (`tern_q`).
//!
//! [`Queue::rows`] and [`Queue::full_ad`] hold every row, its stored
//! differences and every parsed cluster ad in memory at once. The listings
//! here stream instead: [`Queue::scan`] hands out each job's hot columns in
//! id order, borrowed from the SQLite row, and reads the stored differences
//! only when asked to, so a summary of 100,000 jobs decodes no ad text at
//! all. [`AdBuilder`] turns streamed rows into full ads while keeping only
//! the current cluster's ad parsed.

use std::collections::HashMap;
use std::rc::Rc;

use rusqlite::OptionalExtension;

use super::{JobId, JobRow, Queue, QueueError, overlay, parse_stored};
use crate::classad::ClassAd;
use crate::vocab::JobStatus;

/// One job as a scan sees it: its hot columns and, when the scan asked for
/// them, its stored differences from the cluster ad (new-syntax text).
#[derive(Clone, Copy, Debug)]
pub struct HotRow<'a> {
    pub id: JobId,
    /// The stored `JobStatus` number (see [`JobRow::status`] for why a
    /// number); read it through [`HotRow::status`].
    pub status: i64,
    pub owner: &'a str,
    pub prio: i64,
    pub qdate: i64,
    pub entered: i64,
    pub diff: Option<&'a str>,
}

impl HotRow<'_> {
    /// The job's status, `None` for a number this tern does not know.
    pub fn status(&self) -> Option<JobStatus> {
        JobStatus::from_code(self.status)
    }
}

/// Job counts by status: one slot per JobStatus value, 0 for values
/// outside 1..=7.
pub type StatusCounts = [i64; 8];

/// Which rows a scan reads; every empty part leaves the scan unrestricted
/// by it. A job is read when it is in one of `clusters` or is one of
/// `jobs` (when either is given), and its owner is one of `owners`, and
/// its status one of `statuses`. The reads go through the indexes, so a
/// scan of one job or one cluster costs the same in a queue of any size.
#[derive(Clone, Debug, Default)]
pub struct ScanRange {
    pub clusters: Vec<i64>,
    pub jobs: Vec<JobId>,
    pub owners: Vec<String>,
    pub statuses: Vec<JobStatus>,
}

impl ScanRange {
    /// The key ranges to read, in id order and disjoint: a whole cluster
    /// (proc `None`) or one job. A job in a named cluster is covered by
    /// the cluster. Empty when the range names no ids.
    fn keys(&self) -> Vec<(i64, Option<i64>)> {
        let mut keys: Vec<(i64, Option<i64>)> = self.clusters.iter().map(|&c| (c, None)).collect();
        keys.extend(
            self.jobs
                .iter()
                .filter(|j| !self.clusters.contains(&j.cluster))
                .map(|j| (j.cluster, Some(j.proc))),
        );
        // (c, None) sorts before (c, Some(_)); both never occur together.
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// ` AND owner IN (...) AND status IN (...)`, with the owners bound
    /// after `first` parameters (statuses are literal numbers).
    fn conditions(&self, first: usize) -> String {
        let mut sql = String::new();
        if !self.owners.is_empty() {
            let marks: Vec<String> = (0..self.owners.len())
                .map(|i| format!("?{}", first + i + 1))
                .collect();
            sql.push_str(&format!(" AND owner IN ({})", marks.join(", ")));
        }
        if !self.statuses.is_empty() {
            let codes: Vec<String> = self.statuses.iter().map(|s| s.code().to_string()).collect();
            sql.push_str(&format!(" AND status IN ({})", codes.join(", ")));
        }
        sql
    }
}

impl Queue {
    /// Calls `f` for every job in the queue, in id order. The stored
    /// differences are read only when `with_diff`.
    pub fn scan<E: From<QueueError>>(
        &self,
        with_diff: bool,
        f: impl FnMut(&HotRow<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.scan_range(&ScanRange::default(), with_diff, f)
    }

    /// Calls `f` for every job in `range`, in id order. The stored
    /// differences are read only when `with_diff`.
    pub fn scan_range<E: From<QueueError>>(
        &self,
        range: &ScanRange,
        with_diff: bool,
        mut f: impl FnMut(&HotRow<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let columns = if with_diff {
            "cluster, proc, status, owner, prio, qdate, entered, ad"
        } else {
            "cluster, proc, status, owner, prio, qdate, entered"
        };
        let owners = range
            .owners
            .iter()
            .map(|o| rusqlite::types::Value::Text(o.clone()));
        let keys = range.keys();
        if keys.is_empty() {
            let sql = format!(
                "SELECT {columns} FROM procs WHERE 1{} ORDER BY cluster, proc",
                range.conditions(0)
            );
            let params: Vec<rusqlite::types::Value> = owners.collect();
            return self.scan_sql(&sql, &params, with_diff, &mut f);
        }
        let whole = format!(
            "SELECT {columns} FROM procs WHERE cluster = ?1{} ORDER BY cluster, proc",
            range.conditions(1)
        );
        let one = format!(
            "SELECT {columns} FROM procs WHERE cluster = ?1 AND proc = ?2{}",
            range.conditions(2)
        );
        for (cluster, proc) in keys {
            let mut params = vec![rusqlite::types::Value::Integer(cluster)];
            let sql = match proc {
                None => &whole,
                Some(p) => {
                    params.push(rusqlite::types::Value::Integer(p));
                    &one
                }
            };
            params.extend(owners.clone());
            self.scan_sql(sql, &params, with_diff, &mut f)?;
        }
        Ok(())
    }

    fn scan_sql<E: From<QueueError>>(
        &self,
        sql: &str,
        params: &[rusqlite::types::Value],
        with_diff: bool,
        f: &mut impl FnMut(&HotRow<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut st = self.conn.prepare_cached(sql).map_err(QueueError::from)?;
        let mut rows = st
            .query(rusqlite::params_from_iter(params))
            .map_err(QueueError::from)?;
        while let Some(r) = rows.next().map_err(QueueError::from)? {
            let owner = text(r, 3).map_err(QueueError::from)?;
            let diff = if with_diff {
                Some(text(r, 7).map_err(QueueError::from)?)
            } else {
                None
            };
            let row = HotRow {
                id: JobId {
                    cluster: r.get(0).map_err(QueueError::from)?,
                    proc: r.get(1).map_err(QueueError::from)?,
                },
                status: r.get(2).map_err(QueueError::from)?,
                owner,
                prio: r.get(4).map_err(QueueError::from)?,
                qdate: r.get(5).map_err(QueueError::from)?,
                entered: r.get(6).map_err(QueueError::from)?,
                diff,
            };
            f(&row)?;
        }
        Ok(())
    }

    /// Job counts by status of the whole queue and of `owner`'s jobs, from
    /// the counts the queue keeps (no job row is read).
    pub fn job_counts(&self, owner: &str) -> Result<(StatusCounts, StatusCounts), QueueError> {
        let mut st = self
            .conn
            .prepare_cached("SELECT owner, status, n FROM job_counts WHERE n > 0")?;
        let mut rows = st.query([])?;
        let (mut all, mut mine) = (StatusCounts::default(), StatusCounts::default());
        while let Some(r) = rows.next()? {
            let status: i64 = r.get(1)?;
            let n: i64 = r.get(2)?;
            if JobStatus::from_code(status).is_none() {
                continue;
            }
            all[status as usize] += n;
            if text(r, 0)? == owner {
                mine[status as usize] += n;
            }
        }
        Ok((all, mine))
    }

    /// The stored cluster ad of `cluster`, parsed (not cached).
    pub fn load_cluster_ad(&self, cluster: i64) -> Result<Option<ClassAd>, QueueError> {
        let text: Option<String> = self
            .conn
            .query_row(
                "SELECT ad FROM clusters WHERE cluster = ?1",
                [cluster],
                |r| r.get(0),
            )
            .optional()?;
        text.map(|t| parse_stored(&self.path, &t)).transpose()
    }

    /// One job's stored differences from its cluster ad, parsed; `None`
    /// when the job is not in the queue.
    pub fn load_diff(&self, id: JobId) -> Result<Option<ClassAd>, QueueError> {
        let text: Option<String> = self
            .conn
            .query_row(
                "SELECT ad FROM procs WHERE cluster = ?1 AND proc = ?2",
                [id.cluster, id.proc],
                |r| r.get(0),
            )
            .optional()?;
        text.map(|t| parse_stored(&self.path, &t)).transpose()
    }

    /// The highest proc id each cluster has in history, for clusters some
    /// of whose jobs have left the queue.
    pub fn history_max_procs(&self) -> Result<HashMap<i64, i64>, QueueError> {
        let mut st = self
            .conn
            .prepare("SELECT cluster, max(proc) FROM history GROUP BY cluster")?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// A text column borrowed from the row (SQLite hands out its own buffer).
fn text<'r>(r: &'r rusqlite::Row<'_>, i: usize) -> rusqlite::Result<&'r str> {
    r.get_ref(i)?.as_str().map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, e.into())
    })
}

/// Builds full job ads from rows that arrive in cluster order, as
/// [`Queue::full_ad`] builds them, but parsing each cluster ad once and
/// keeping only the current one.
#[derive(Default)]
pub struct AdBuilder {
    current: Option<(i64, Rc<ClassAd>)>,
}

impl AdBuilder {
    pub fn new() -> AdBuilder {
        AdBuilder::default()
    }

    /// The cluster ad of `cluster` (an empty ad when the cluster has none).
    pub fn cluster_ad(&mut self, q: &Queue, cluster: i64) -> Result<Rc<ClassAd>, QueueError> {
        if let Some((c, ad)) = &self.current
            && *c == cluster
        {
            return Ok(ad.clone());
        }
        let ad = Rc::new(q.load_cluster_ad(cluster)?.unwrap_or_default());
        self.current = Some((cluster, ad.clone()));
        Ok(ad)
    }

    /// The full ad of a row scanned with its differences: the cluster ad,
    /// the differences, and the hot attributes from their columns.
    pub fn full_ad(&mut self, q: &Queue, row: &HotRow<'_>) -> Result<ClassAd, QueueError> {
        let mut ad = (*self.cluster_ad(q, row.id.cluster)?).clone();
        let diff = row.diff.unwrap_or("");
        let stored = JobRow {
            id: row.id,
            status: row.status,
            owner: row.owner.to_string(),
            prio: row.prio,
            qdate: row.qdate,
            entered: row.entered,
            // A proc that differs from its cluster only in ProcId, as most
            // do, needs no parse: the overlay sets ProcId from its column.
            diff: if only_proc_id(diff, row.id.proc) {
                String::new()
            } else {
                diff.to_string()
            },
        };
        overlay(&q.path, &mut ad, &stored)?;
        Ok(ad)
    }
}

/// Whether stored differences are exactly `[ ProcId = <proc> ]`.
fn only_proc_id(diff: &str, proc: i64) -> bool {
    diff.strip_prefix("[ ProcId = ")
        .and_then(|r| r.strip_suffix(" ]"))
        .is_some_and(|n| n.parse::<i64>() == Ok(proc))
}

impl Queue {
    /// The ids of the first `limit` jobs in the queue, in id order (the
    /// primary key: no ad is read).
    pub fn job_ids(&self, limit: usize) -> Result<Vec<JobId>, QueueError> {
        self.ids(
            "SELECT cluster, proc FROM procs ORDER BY cluster, proc LIMIT ?1",
            limit,
        )
    }

    /// The ids of the `limit` newest jobs in the history, newest first.
    pub fn history_ids(&self, limit: usize) -> Result<Vec<JobId>, QueueError> {
        self.ids(
            "SELECT cluster, proc FROM history ORDER BY completed DESC, cluster DESC, proc DESC \
             LIMIT ?1",
            limit,
        )
    }

    fn ids(&self, sql: &str, limit: usize) -> Result<Vec<JobId>, QueueError> {
        let mut st = self.conn.prepare(sql)?;
        let rows = st.query_map([limit as i64], |r| {
            Ok(JobId {
                cluster: r.get(0)?,
                proc: r.get(1)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The whole ad of the newest job in the queue (highest id) or, with
    /// `history`, of the job that left it last.
    pub fn newest_ad(&self, history: bool) -> Result<Option<ClassAd>, QueueError> {
        if history {
            return Ok(self
                .history(&super::Selection::default(), Some(1))?
                .into_iter()
                .next()
                .map(|(_, ad)| ad));
        }
        let last: Option<(i64, i64)> = self
            .conn
            .query_row(
                "SELECT cluster, proc FROM procs ORDER BY cluster DESC, proc DESC LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((cluster, proc)) = last else {
            return Ok(None);
        };
        match self.row(JobId { cluster, proc })? {
            Some(row) => Ok(Some(self.full_ad(&row)?)),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_id_only_differences_are_recognised() {
        assert!(only_proc_id("[ ProcId = 12 ]", 12));
        assert!(!only_proc_id("[ ProcId = 12 ]", 13));
        assert!(!only_proc_id("[ Args = \"x\"; ProcId = 12 ]", 12));
        assert!(!only_proc_id("[  ]", 0));
    }
}
