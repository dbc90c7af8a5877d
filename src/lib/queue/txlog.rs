//! The transaction log as other tools follow it: records since a
//! position, the log's ends, registered followers, and which jobs changed
//! since a position (the pass evaluates the periodic policies of those
//! between its full evaluations).

use rusqlite::{Connection, params};

use super::rows::row_from;
use super::writer::row_by_id;
use super::{JobId, JobRow, LogRecord, Queue, QueueError};

/// What the log records after a position touched ([`Queue::touched_since`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Touched {
    /// The newest record read; the next call starts here.
    pub end: i64,
    /// The log was trimmed past the position: what changed is not known.
    pub trimmed: bool,
    pub jobs: Vec<JobId>,
    /// Clusters whose cluster ad a record names.
    pub clusters: Vec<i64>,
}

/// What a log record's key names.
#[derive(Debug, PartialEq)]
enum LogKey {
    Job(JobId),
    Cluster(i64),
}

/// `c.p` is a job, `0c.-1` a cluster ad (see [`super::job_key`]); the
/// records that open and close a transaction have no key.
fn parse_key(key: &str) -> Option<LogKey> {
    let (c, p) = key.split_once('.')?;
    let cluster: i64 = c.parse().ok()?;
    let proc: i64 = p.parse().ok()?;
    if proc < 0 {
        return Some(LogKey::Cluster(cluster));
    }
    Some(LogKey::Job(JobId { cluster, proc }))
}

impl Queue {
    /// Log records after `since`, in order.
    pub fn log_since(&self, since: i64) -> Result<Vec<LogRecord>, QueueError> {
        let mut st = self
            .conn
            .prepare("SELECT seq, op, key, name, value FROM txlog WHERE seq > ?1 ORDER BY seq")?;
        let rows = st.query_map([since], |r| {
            Ok(LogRecord {
                seq: r.get(0)?,
                op: r.get(1)?,
                key: r.get(2)?,
                name: r.get(3)?,
                value: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The first record still in the log (0 when empty).
    pub fn log_start(&self) -> Result<i64, QueueError> {
        Ok(log_bounds(&self.conn)?.0)
    }

    /// The sequence number of the newest record ever written (0 before the
    /// first): the last record in the log, which trimming always keeps.
    pub fn log_end(&self) -> Result<i64, QueueError> {
        Ok(log_edge(&self.conn, "SELECT max(seq) FROM txlog")?)
    }

    /// How far the log holds nothing new to this handle after `since`: the
    /// position up to which every record after `since` was written by this
    /// handle's own transactions (each writes a contiguous run of records,
    /// and no other writer interleaves within one). A reader that looked
    /// at the log up to `since` and then wrote may skip its own records
    /// but must stop at the first record of another writer.
    pub fn seen_through(&self, since: i64) -> i64 {
        let mut pos = since;
        for &(first, last) in &self.own_log {
            if last <= pos {
                continue;
            }
            if first > pos + 1 {
                break;
            }
            pos = last;
        }
        pos
    }

    /// The jobs in the queue whose ad, or whose cluster's ad, a record
    /// after `since` changed, in id order; `None` when the log has been
    /// trimmed past `since`, so that what changed is no longer known. The
    /// cost is the records after `since` and the jobs they name.
    pub fn rows_changed_since(&self, since: i64) -> Result<Option<Vec<JobRow>>, QueueError> {
        let (first, end) = log_bounds(&self.conn)?;
        if end > since && first > since + 1 {
            return Ok(None);
        }
        let mut st = self
            .conn
            .prepare_cached("SELECT DISTINCT key FROM txlog WHERE seq > ?1")?;
        let keys: Vec<String> = st
            .query_map([since], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let mut clusters: Vec<i64> = Vec::new();
        let mut jobs: Vec<JobId> = Vec::new();
        for key in &keys {
            match parse_key(key) {
                Some(LogKey::Cluster(c)) => clusters.push(c),
                Some(LogKey::Job(id)) => jobs.push(id),
                None => {}
            }
        }
        clusters.sort_unstable();
        clusters.dedup();
        jobs.retain(|j| clusters.binary_search(&j.cluster).is_err());
        jobs.sort_unstable_by_key(|j| (j.cluster, j.proc));
        jobs.dedup();
        let mut rows: Vec<JobRow> = Vec::new();
        for c in clusters {
            let mut st = self.conn.prepare_cached(
                "SELECT cluster, proc, status, owner, prio, qdate, entered, ad FROM procs \
                 WHERE cluster = ?1 ORDER BY proc",
            )?;
            for r in st.query_map([c], row_from)? {
                rows.push(r?);
            }
        }
        for id in jobs {
            if let Some(r) = row_by_id(&self.conn, id)? {
                rows.push(r);
            }
        }
        rows.sort_unstable_by_key(|r| (r.id.cluster, r.id.proc));
        Ok(Some(rows))
    }

    /// What the records after `since` touched, for a reader that follows
    /// the queue without reading whole ads: the jobs and cluster ads they
    /// name (each once, in id order) and the position they reach. Read in
    /// one snapshot, so the next call from `end` misses nothing.
    pub fn touched_since(&self, since: i64) -> Result<Touched, QueueError> {
        let _snapshot = self.snapshot()?;
        let (first, end) = log_bounds(&self.conn)?;
        let mut touched = Touched {
            end,
            trimmed: end > since && first > since + 1,
            jobs: Vec::new(),
            clusters: Vec::new(),
        };
        let mut st = self
            .conn
            .prepare_cached("SELECT DISTINCT key FROM txlog WHERE seq > ?1 AND seq <= ?2")?;
        let keys = st.query_map([since, end], |r| r.get::<_, String>(0))?;
        for key in keys {
            match parse_key(&key?) {
                Some(LogKey::Cluster(c)) => touched.clusters.push(c),
                Some(LogKey::Job(id)) => touched.jobs.push(id),
                None => {}
            }
        }
        touched.clusters.sort_unstable();
        touched.clusters.dedup();
        touched.jobs.sort_unstable();
        touched.jobs.dedup();
        Ok(touched)
    }

    /// Registers (or moves) a follower at `position`.
    pub fn set_follower(&mut self, name: &str, position: i64) -> Result<(), QueueError> {
        self.conn.execute(
            "INSERT INTO followers (name, position) VALUES (?1, ?2) ON CONFLICT(name) DO UPDATE SET position = ?2",
            params![name, position],
        )?;
        Ok(())
    }

    pub fn remove_follower(&mut self, name: &str) -> Result<(), QueueError> {
        self.conn
            .execute("DELETE FROM followers WHERE name = ?1", [name])?;
        Ok(())
    }
}

/// The first and last sequence numbers in the log (0 and 0 when empty).
/// Two statements: SQLite reads a lone min() or max() of the key from
/// one end of the b-tree, but scans the table for both in one SELECT.
pub(super) fn log_bounds(conn: &Connection) -> Result<(i64, i64), QueueError> {
    Ok((
        log_edge(conn, "SELECT min(seq) FROM txlog")?,
        log_edge(conn, "SELECT max(seq) FROM txlog")?,
    ))
}

/// One end of the log (`sql` a lone min() or max() of seq); 0 when empty.
fn log_edge(conn: &Connection, sql: &str) -> rusqlite::Result<i64> {
    Ok(conn
        .prepare_cached(sql)?
        .query_row([], |r| r.get::<_, Option<i64>>(0))?
        .unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_jobs_and_clusters() {
        assert_eq!(
            parse_key("12.3"),
            Some(LogKey::Job(JobId {
                cluster: 12,
                proc: 3
            }))
        );
        assert_eq!(parse_key("012.-1"), Some(LogKey::Cluster(12)));
        assert_eq!(parse_key(""), None);
        assert_eq!(parse_key("next_cluster"), None);
    }
}
