//! The job queue: one SQLite database, `$(SPOOL)/queue.db`, in WAL mode.
//!
//! Clusters hold the cluster ad; procs hold only the attributes that differ
//! from it, plus the hot attributes (JobStatus, Owner, JobPrio, QDate,
//! EnteredCurrentStatus) as indexed columns, which are authoritative. Every
//! change is one `BEGIN IMMEDIATE` transaction that also appends its records
//! to the transaction log (`txlog`), so a follower can replay the queue from
//! any position. Jobs that leave the queue move to the history tables.
//!
//! Nothing here assumes a single user. A change a user asks for goes
//! through [`Queue::write_as`], whose [`Writer`] checks each job it changes,
//! removes or leaves a request for against the job's Owner and the
//! [`Authority`] (the real user, QUEUE_SUPER_USERS) and refuses the rest
//! with [`QueueError::NotPermitted`]; its writer has no raw connection.
//! [`Queue::submit`] takes the authority too: a user submits only jobs
//! they own. The negotiator's pass and the shadows act for the system and
//! use [`Queue::write`].

pub mod authority;
mod busy;
mod error;
pub mod holders;
mod identity;
pub mod joblock;
pub mod listing;
mod rows;
pub mod schema;
pub mod shared;
mod txlog;
mod wal;
mod writer;

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior};

use crate::classad::unparse::{ad_to_string, unparse};
use crate::classad::{self, ClassAd, Expr, Value};
use crate::vocab::{JobStatus, Request};

pub use authority::{AttrClass, Authority};
pub use error::QueueError;
use error::{busy, corrupt, damage};
pub use rows::matches_constraint;
use rows::*;
pub use txlog::Touched;
use txlog::log_bounds;
use writer::*;
pub use writer::{Change, ForUser, System, Writer};

/// Transaction log record kinds, as in HTCondor's job_queue.log.
pub mod op {
    pub const NEW_AD: i64 = 101;
    pub const DESTROY_AD: i64 = 102;
    pub const SET_ATTR: i64 = 103;
    pub const DELETE_ATTR: i64 = 104;
    pub const BEGIN: i64 = 105;
    pub const END: i64 = 106;
    /// tern's own record: sets every attribute of the ad in `value`
    /// (`[ Name = expr; ... ]`, new syntax) as that many SET_ATTR records
    /// would, `name` empty. A new ad's attributes, and those one change
    /// sets on a job, go in one record: each record is a row to insert,
    /// and a one-job submit wrote 67 (schema step 9).
    pub const SET_ATTRS: i64 = 111;
}

/// Compiled statements one handle keeps (see [`Queue::open`]).
const STATEMENT_CACHE: usize = 128;

/// A job id, `cluster.proc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobId {
    pub cluster: i64,
    pub proc: i64,
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.cluster, self.proc)
    }
}

/// One job as stored: its hot attributes and its differences from the
/// cluster ad (new-syntax text).
#[derive(Clone, Debug)]
pub struct JobRow {
    pub id: JobId,
    /// The stored `JobStatus` number. It stays a number because a row may
    /// carry one this tern does not know (a newer tern's); read it through
    /// [`JobRow::status`].
    pub status: i64,
    pub owner: String,
    pub prio: i64,
    pub qdate: i64,
    pub entered: i64,
    pub diff: String,
}

impl JobRow {
    /// The job's status, `None` for a number this tern does not know.
    pub fn status(&self) -> Option<JobStatus> {
        JobStatus::from_code(self.status)
    }
}

/// Which jobs a tool means: the union of clusters, job ids and owners (all
/// jobs when none is given), then narrowed by a constraint.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    pub clusters: Vec<i64>,
    pub jobs: Vec<JobId>,
    pub owners: Vec<String>,
    pub constraint: Option<Expr>,
}

impl Selection {
    pub fn is_everything(&self) -> bool {
        self.clusters.is_empty()
            && self.jobs.is_empty()
            && self.owners.is_empty()
            && self.constraint.is_none()
    }
}

/// One transaction log record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRecord {
    pub seq: i64,
    pub op: i64,
    pub key: String,
    pub name: String,
    pub value: String,
}

impl LogRecord {
    /// The attributes a SET_ATTR or SET_ATTRS record sets, as names and
    /// expressions in new syntax; none for other records.
    pub fn sets(&self) -> Result<Vec<(String, String)>, QueueError> {
        match self.op {
            op::SET_ATTR => Ok(vec![(self.name.clone(), self.value.clone())]),
            op::SET_ATTRS => match classad::parse_ad(&self.value) {
                Ok(ad) => Ok(ad
                    .iter()
                    .map(|(n, e)| (n.to_string(), unparse(e)))
                    .collect()),
                Err(e) => Err(QueueError::Invalid(format!(
                    "transaction log record {} does not parse: {e}",
                    self.seq
                ))),
            },
            _ => Ok(Vec::new()),
        }
    }
}

/// The key of a job's ad in the log (`c.p`) and of a cluster ad (`0c.-1`),
/// as HTCondor's job_queue.log names them.
pub fn job_key(id: JobId) -> String {
    format!("{}.{}", id.cluster, id.proc)
}
pub fn cluster_key(cluster: i64) -> String {
    format!("0{cluster}.-1")
}

/// The resolved SPOOL directory and its database.
pub fn db_path(spool: &Path) -> PathBuf {
    spool.join("queue.db")
}

pub struct Queue {
    conn: Connection,
    path: PathBuf,
    clusters: RefCell<HashMap<i64, Rc<ClassAd>>>,
    limits: Limits,
    /// Write transactions so far.
    writes: u64,
    /// The log records this handle's transactions wrote, as (first, last)
    /// sequence numbers in commit order (see [`Queue::seen_through`]).
    own_log: Vec<(i64, i64)>,
    /// The database is the shared layout's (group-writable): its `-wal`
    /// and `-shm`, made by root at install, are never removed on close.
    shared: bool,
    /// A busy handler of its own is installed ([`Queue::kill_stale_writers`]):
    /// [`Queue::restart_log`], which sets a short timeout and then puts the
    /// plain handler back, would drop it, so such a handle leaves the log
    /// to the others.
    own_busy_handler: bool,
    /// The write count before which [`Queue::restart_log`] does not try:
    /// 2 at open (a handle's first write leaves the log to its close,
    /// which never waits), later 64 writes past an attempt that readers
    /// held off.
    restart_after: u64,
    /// The log's length (in frames, as [`Queue::log_frames`] says) when
    /// this handle's last restart copied it all: no new attempt until a
    /// commit changes it.
    restarted_at: Option<u32>,
    /// Writes leave the log's restart to [`Queue::log_upkeep`], which the
    /// handle's owner calls when waiting costs it nothing (a shadow, once
    /// its job runs): see [`Queue::defer_log_upkeep`].
    upkeep_deferred: bool,
    /// The log's length in frames after this handle's last commit
    /// (see [`wal`]).
    log_frames: std::sync::Arc<std::sync::atomic::AtomicU32>,
}

impl Drop for Queue {
    fn drop(&mut self) {
        self.close_log();
    }
}

impl Queue {
    /// Ends a tool's use of the queue just before its process exits. The
    /// log is kept short as at any close; then, unless SQLite's own close
    /// has work to do on the files (an empty log to remove), the
    /// connection is left to the exit, which closes its files and so
    /// drops its locks, as for any process that ends with no transaction
    /// open. What that skips is freeing, piece by piece, the schema and
    /// the statements SQLite parsed: about 3% of a one-job `tern_submit`.
    /// Only for a process about to exit: the handle's memory and
    /// descriptors stay until then.
    pub fn leave_at_exit(mut self) {
        if self.close_log() {
            drop(self);
        } else {
            std::mem::forget(self);
        }
    }
}

/// The knobs the store reads.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Records kept in the transaction log (never below a follower).
    pub log_max_records: i64,
    /// Jobs kept in history.
    pub history_max_jobs: i64,
    /// Jobs one submission may queue (MAX_JOBS_PER_SUBMISSION).
    pub max_jobs_per_submission: i64,
    /// Jobs one owner may have in the queue (MAX_JOBS_PER_OWNER).
    pub max_jobs_per_owner: i64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            log_max_records: 1_000_000,
            history_max_jobs: 100_000,
            // No limit unless configured: a personal queue is its owner's
            // alone, as it was before shared mode; the shared package's
            // configuration sets HTCondor's 20000 and 100000.
            max_jobs_per_submission: i64::MAX,
            max_jobs_per_owner: i64::MAX,
        }
    }
}

impl Limits {
    /// QUEUE_LOG_MAX_RECORDS, HISTORY_MAX_JOBS, MAX_JOBS_PER_SUBMISSION
    /// and MAX_JOBS_PER_OWNER from the configuration.
    pub fn from_config(cfg: &crate::config::Config) -> Result<Limits, crate::config::ConfigError> {
        let d = Limits::default();
        Ok(Limits {
            log_max_records: cfg.get_int("QUEUE_LOG_MAX_RECORDS", d.log_max_records)?,
            history_max_jobs: cfg.get_int("HISTORY_MAX_JOBS", d.history_max_jobs)?,
            max_jobs_per_submission: cfg
                .get_int("MAX_JOBS_PER_SUBMISSION", d.max_jobs_per_submission)?,
            max_jobs_per_owner: cfg.get_int("MAX_JOBS_PER_OWNER", d.max_jobs_per_owner)?,
        })
    }
}

/// condor_submit's words for a submission over a limit.
fn too_many(knob: &str, limit: i64) -> QueueError {
    QueueError::TooManyJobs(format!(
        "Number of submitted jobs would exceed {knob} ({limit})"
    ))
}

impl Queue {
    /// Opens (creating when `create`) the queue in `spool`. Returns `None`
    /// when there is no queue yet and `create` is false: readers see an
    /// empty queue without creating anything.
    ///
    /// A privileged (set-group-id) tool never creates anything: a missing
    /// database is [`QueueError::NoSharedQueue`]. It holds the group only
    /// for the open, during which SQLite opens the database, its `-wal` and
    /// `-shm`; later reads and writes go through those descriptors.
    pub fn open(spool: &Path, create: bool) -> Result<Option<Queue>, QueueError> {
        let privileged = crate::sys::privilege::is_privileged();
        let _group = crate::sys::privilege::raise_group();
        let path = db_path(spool);
        if !path.exists() {
            if privileged {
                return Err(QueueError::NoSharedQueue { path });
            }
            if !create {
                return Ok(None);
            }
            create_spool(spool)?;
        }
        // Only a caller that may create the database lets SQLite create it
        // (a file removed since the check above stays removed).
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create && !privileged {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let mut conn = Connection::open_with_flags(&path, flags).map_err(|e| corrupt(&path, e))?;
        conn.busy_handler(Some(busy::handler))?;
        // Every statement a long-lived handle runs again (a shadow's finish
        // and claim reuse, a pass, the router) stays compiled: rusqlite's
        // default of 16 is fewer than a shadow's per-job statements, so
        // each job evicted and recompiled them (28% of its instructions).
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        // No temporary file in a directory SQLITE_TMPDIR (the caller's)
        // names: sorts and temporary tables stay in memory.
        conn.pragma_update(None, "temp_store", "MEMORY")?;
        // Check the file is a database of a version we understand before
        // anything writes to it.
        conn.query_row("PRAGMA schema_version", [], |r| r.get::<_, i64>(0))
            .map_err(|e| corrupt(&path, e))?;
        let damaged = |e| match e {
            QueueError::Sqlite(s) => corrupt(&path, s),
            other => other,
        };
        schema::known_version(&conn).map_err(damaged)?;
        // Switching a brand-new file to WAL answers busy at once (no busy
        // handler) while another process does the same: retry.
        let start = std::time::Instant::now();
        loop {
            match conn.pragma_update(None, "journal_mode", "WAL") {
                Ok(()) => break,
                Err(rusqlite::Error::SqliteFailure(f, _))
                    if f.code == rusqlite::ErrorCode::DatabaseBusy
                        && start.elapsed() < busy::TIMEOUT =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(e) => return Err(corrupt(&path, e)),
            }
        }
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        // The last handle to close leaves the log for the next one rather
        // than copying it into the database and deleting it (three fsyncs
        // and the log re-created by the next write, on every run of every
        // tool); `Drop` keeps the log short instead (see [`wal`]).
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            true,
        )?;
        let log_frames = wal::watch(&mut conn)?;
        schema::migrate(&mut conn).map_err(damaged)?;
        let shared = {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(&path).is_ok_and(|m| m.permissions().mode() & 0o020 != 0)
        };
        Ok(Some(Queue {
            conn,
            path,
            clusters: RefCell::new(HashMap::new()),
            limits: Limits::default(),
            writes: 0,
            own_log: Vec::new(),
            shared,
            own_busy_handler: false,
            restart_after: 2,
            restarted_at: None,
            upkeep_deferred: false,
            log_frames,
        }))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The SPOOL directory the queue lives in (where shadows are woken).
    pub fn spool(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

    /// Sets the bounds every write keeps the log and history within
    /// (QUEUE_LOG_MAX_RECORDS and HISTORY_MAX_JOBS).
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// Trims the log and history when a write took them past their limits.
    /// `logged` is the range of sequence numbers the write's log records
    /// took, `history` the history count after it, when jobs of it went
    /// there (see [`writer::Finished`]).
    ///
    /// History is looked at by every write that adds to it (the count is
    /// read in its transaction). The log is looked at by the write whose
    /// records' range holds a multiple of its stride, a hundredth of the
    /// limit: the ranges of successive writes follow one another, so every
    /// stride's worth of growth is looked at once, by whichever process
    /// made it, and most writes (a one-job submit logs six records) read
    /// nothing. The log passes its limit by at most a stride and one write,
    /// as long as the writers share their limits (every tool takes them
    /// from the configuration; a process configured otherwise enforces its
    /// own limit with its own writes). The trim itself is its own
    /// transaction.
    fn keep_within_limits(
        &mut self,
        logged: Option<(i64, i64)>,
        history: Option<i64>,
    ) -> Result<(), QueueError> {
        let log_limit = self.limits.log_max_records.max(1);
        let log_over = match logged {
            Some((from, to)) if holds_multiple(from, to, limit_stride(log_limit)) => {
                let (first, _) = log_bounds(&self.conn)?;
                to - first + 1 > log_limit
            }
            _ => false,
        };
        let history_over = history.is_some_and(|kept| kept > self.limits.history_max_jobs);
        if log_over || history_over {
            let limits = self.limits.clone();
            self.trim(&limits)?;
        }
        Ok(())
    }

    /// [`QueueError::NewerSchema`] when a newer tern migrated the database
    /// since this handle opened it: a handle kept open for long (a
    /// follower) asks before it reads.
    pub fn check_schema(&self) -> Result<(), QueueError> {
        schema::known_version(&self.conn).map(|_| ())
    }

    /// `PRAGMA integrity_check`: "ok" or the problems found.
    /// A page too damaged to read is [`QueueError::Corrupt`].
    pub fn integrity_check(&self) -> Result<String, QueueError> {
        let read = || -> rusqlite::Result<Vec<String>> {
            self.conn
                .prepare("PRAGMA integrity_check")?
                .query_map([], |r| r.get(0))?
                .collect()
        };
        let rows = read().map_err(|e| corrupt(&self.path, e))?;
        Ok(rows.join("\n"))
    }

    /// The id the next cluster will get.
    pub fn next_cluster(&self) -> Result<i64, QueueError> {
        Ok(self.conn.query_row(
            "SELECT value FROM meta WHERE key = 'next_cluster'",
            [],
            |r| r.get(0),
        )?)
    }

    fn immediate(&mut self) -> Result<rusqlite::Transaction<'_>, QueueError> {
        self.conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(busy)
    }

    /// Counts the jobs by owner and status, and the jobs in history, from
    /// their tables, and puts right the kept counts (`job_counts`, meta's
    /// `history_jobs`) when they differ. The writes keep them (schema step
    /// 9); a process of an older build that was still running when a newer
    /// tool migrated the database changes jobs without them. A read of
    /// both tables, and a write only when a count is off: the pass does it
    /// with its periodic check (QUEUE_CHECK_INTERVAL). Returns whether it
    /// put anything right.
    pub fn recount(&mut self) -> Result<bool, QueueError> {
        const COUNTED: &str = "SELECT owner, status, count(*) FROM procs \
             GROUP BY owner, status ORDER BY owner, status";
        const KEPT: &str =
            "SELECT owner, status, n FROM job_counts WHERE n != 0 ORDER BY owner, status";
        const HISTORY: &str = "SELECT (SELECT count(*) FROM history), \
             (SELECT value FROM meta WHERE key = 'history_jobs')";
        let agree = |conn: &Connection| -> Result<bool, QueueError> {
            let rows = |sql: &str| -> Result<Vec<(String, i64, i64)>, QueueError> {
                let mut st = conn.prepare(sql)?;
                let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
                Ok(rows.collect::<Result<_, _>>()?)
            };
            let (history, kept): (i64, Option<i64>) =
                conn.query_row(HISTORY, [], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows(COUNTED)? == rows(KEPT)? && kept == Some(history))
        };
        if agree(&self.conn)? {
            return Ok(false);
        }
        let tx = self.immediate()?;
        tx.execute_batch(
            "DELETE FROM job_counts; \
             INSERT INTO job_counts (owner, status, n) \
                 SELECT owner, status, count(*) FROM procs GROUP BY owner, status; \
             INSERT OR REPLACE INTO meta (key, value) \
                 SELECT 'history_jobs', count(*) FROM history;",
        )?;
        tx.commit()?;
        Ok(true)
    }

    /// `PRAGMA quick_check`: every page of the database read and checked
    /// (a whole-database read: the pass runs it at most every
    /// QUEUE_CHECK_INTERVAL, and `tern_negotiate -check` on demand). A
    /// damaged database is [`QueueError::Corrupt`].
    pub fn quick_check(&self) -> Result<(), QueueError> {
        let result: Result<String, rusqlite::Error> =
            self.conn
                .query_row("PRAGMA quick_check(1)", [], |r| r.get(0));
        match result {
            Ok(ok) if ok == "ok" => Ok(()),
            Ok(problem) => Err(QueueError::Corrupt {
                path: self.path.clone(),
                msg: problem.replace('\n', " "),
            }),
            Err(e) => Err(corrupt(&self.path, e)),
        }
    }

    /// Submits one cluster owned by `owner` in one transaction for
    /// `authority`: `build` is given the new cluster id and returns the
    /// cluster ad and each proc's differences. Either every proc is in the
    /// queue afterwards or none is. A user who may not submit for `owner`
    /// ([`Authority::may_submit_for`]) gets
    /// [`QueueError::SubmitNotPermitted`] before anything is built or
    /// written.
    ///
    /// The queue decides who the jobs are, as the schedd does whatever the
    /// client sent: Owner, User, ClusterId and ProcId set to anything but
    /// the job's own (or Owner root in shared mode) is
    /// [`QueueError::SubmitRefused`]; OwnerUid is set from the authority's
    /// real uid (or `owner`'s, when a super user submits for someone
    /// else), whatever the jobs said; MAX_JOBS_PER_SUBMISSION and
    /// MAX_JOBS_PER_OWNER ([`Limits`]) are [`QueueError::TooManyJobs`].
    pub fn submit<E: From<QueueError>>(
        &mut self,
        authority: &Authority,
        owner: &str,
        build: impl FnOnce(i64) -> Result<crate::submit::Cluster, E>,
    ) -> Result<(i64, crate::submit::Cluster), E> {
        if !authority.may_submit_for(owner) {
            return Err(QueueError::SubmitNotPermitted {
                user: authority.user().to_string(),
                owner: owner.to_string(),
            }
            .into());
        }
        let owner_uid = match authority.uid() {
            Some(uid) if authority.user() == owner => Some(uid),
            _ => crate::sys::identity::user(owner).map(|id| id.uid),
        };
        let limits = self.limits.clone();
        let path = self.path.clone();
        let sql = |e: rusqlite::Error| damage(&path, QueueError::from(e));
        let tx = self.immediate()?;
        let id: i64 = tx
            .query_row(
                "SELECT value FROM meta WHERE key = 'next_cluster'",
                [],
                |r| r.get(0),
            )
            .map_err(sql)?;
        let mut cluster = build(id)?;
        identity::check(&mut cluster, id, owner, authority, owner_uid)?;
        let n = cluster.procs.len() as i64;
        if n > limits.max_jobs_per_submission {
            return Err(too_many("MAX_JOBS_PER_SUBMISSION", limits.max_jobs_per_submission).into());
        }
        // From the kept counts: a count over procs costs a read of every
        // job the owner has (80 ms a submit at a million).
        let owned: i64 = tx
            .query_row(
                "SELECT coalesce(sum(n), 0) FROM job_counts WHERE owner = ?1",
                [owner],
                |r| r.get(0),
            )
            .map_err(sql)?;
        if owned + n > limits.max_jobs_per_owner {
            return Err(too_many("MAX_JOBS_PER_OWNER", limits.max_jobs_per_owner).into());
        }
        let logged = insert_cluster(&tx, id, owner, &cluster).map_err(sql)?;
        tx.execute(
            "UPDATE meta SET value = ?1 WHERE key = 'next_cluster'",
            [id + 1],
        )
        .map_err(sql)?;
        tx.commit().map_err(sql)?;
        self.keep_within_limits(Some(logged), None)?;
        Ok((id, cluster))
    }

    /// The jobs a selection names (before its constraint), in id order.
    pub fn rows(&self, sel: &Selection) -> Result<Vec<JobRow>, QueueError> {
        query_rows(&self.conn, "procs", sel)
    }

    /// The cluster ad of `cluster` (cached for the life of the handle).
    pub fn cluster_ad(&self, cluster: i64) -> Result<Rc<ClassAd>, QueueError> {
        rows::cluster_ad(&self.conn, &self.path, &self.clusters, cluster)
    }

    /// A job's full ad: its cluster ad, its differences, and the hot
    /// attributes from their columns.
    pub fn full_ad(&self, row: &JobRow) -> Result<ClassAd, QueueError> {
        rows::full_ad(&self.conn, &self.path, &self.clusters, row)
    }

    /// The jobs a selection names, with their full ads, constraint applied.
    /// Rows and cluster ads come from one snapshot: read one statement at a
    /// time, a cluster that left the queue in between (a job completing
    /// while tern_router_q -S reads) had its rows but no cluster ad.
    pub fn select(&self, sel: &Selection) -> Result<Vec<(JobRow, ClassAd)>, QueueError> {
        let _snapshot = self.snapshot()?;
        let mut out = Vec::new();
        for row in self.rows(sel)? {
            let ad = self.full_ad(&row)?;
            if let Some(c) = &sel.constraint
                && !matches_constraint(c, &ad)
            {
                continue;
            }
            out.push((row, ad));
        }
        Ok(out)
    }

    /// Runs `f` over the selected jobs inside one write transaction. `f`
    /// decides each job's fate; the changes and their log records are
    /// committed together.
    pub fn modify(
        &mut self,
        sel: &Selection,
        now: i64,
        mut f: impl FnMut(&JobRow, &ClassAd) -> Change,
    ) -> Result<Vec<(JobId, Change)>, QueueError> {
        let done = self.write(now, |w| {
            let mut done = Vec::new();
            for row in w.rows(sel)? {
                let ad = w.full_ad(&row)?;
                if let Some(c) = &sel.constraint
                    && !matches_constraint(c, &ad)
                {
                    continue;
                }
                let change = f(&row, &ad);
                w.change(&row, &ad, &change)?;
                done.push((row.id, change));
            }
            Ok(done)
        })?;
        self.clusters.borrow_mut().clear();
        Ok(done)
    }

    /// Runs `f` inside one write transaction (`BEGIN IMMEDIATE`): every job,
    /// slot and request change it makes through the [`Writer`] commits
    /// together, with its transaction log records, or not at all.
    pub fn write<T>(
        &mut self,
        now: i64,
        f: impl FnOnce(&mut Writer<'_, System>) -> Result<T, QueueError>,
    ) -> Result<T, QueueError> {
        self.write_for(None, now, f)
    }

    /// [`Queue::write`] for a user: the [`Writer`] refuses to change or
    /// remove a job, or leave a request for its shadow, unless `authority`
    /// may change that job ([`Authority::may_change`]). A refusal is
    /// [`QueueError::NotPermitted`] and rolls back everything `f` did, so a
    /// caller that wants to report other users' jobs one by one asks
    /// [`Writer::may_change`] first. The writer is a `Writer<ForUser>`,
    /// which has no raw connection ([`Writer::conn`] is the system's).
    pub fn write_as<T>(
        &mut self,
        authority: &Authority,
        now: i64,
        f: impl FnOnce(&mut Writer<'_, ForUser>) -> Result<T, QueueError>,
    ) -> Result<T, QueueError> {
        self.write_for(Some(authority), now, f)
    }

    fn write_for<T, A>(
        &mut self,
        authority: Option<&Authority>,
        now: i64,
        f: impl FnOnce(&mut Writer<'_, A>) -> Result<T, QueueError>,
    ) -> Result<T, QueueError> {
        let path = self.path.clone();
        let tx = Tx::begin(&self.conn)
            .map_err(busy)
            .map_err(|e| damage(&self.path, e))?;
        let mut w = Writer {
            tx,
            path,
            now,
            began: None,
            emptied: Vec::new(),
            clusters: &self.clusters,
            authority,
            access: std::marker::PhantomData,
        };
        let out = f(&mut w).map_err(|e| damage(&self.path, e))?;
        let done = w.finish().map_err(|e| damage(&self.path, e))?;
        if let Some(range) = done.logged {
            self.own_log.push(range);
        }
        self.writes += 1;
        self.keep_within_limits(done.logged, done.history)?;
        self.upkeep_after_write();
        Ok(out)
    }

    /// One read transaction for the reads that follow, until the guard is
    /// dropped (rolled back: nothing is written): they see one state of the
    /// queue, and they begin one transaction, not one each (each checks the
    /// log's index and, after another process's commit, reads its pages
    /// again). Inside a caller's transaction that one already holds, and
    /// the guard is `None`.
    pub fn snapshot(&self) -> Result<Option<rusqlite::Transaction<'_>>, QueueError> {
        Ok(match self.conn.is_autocommit() {
            true => Some(self.conn.unchecked_transaction()?),
            false => None,
        })
    }

    /// The connection, for reads of tables other modules own (slots).
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Makes every later transaction of this handle durable at commit
    /// (`synchronous = FULL`): a submit that printed success survives a
    /// power cut. Other writers keep NORMAL (WAL): a power cut may lose the
    /// last moments of state changes, never corrupt the queue.
    pub fn set_durable(&mut self) -> Result<(), QueueError> {
        self.conn.pragma_update(None, "synchronous", "FULL")?;
        Ok(())
    }

    /// One job's row, if it is in the queue.
    pub fn row(&self, id: JobId) -> Result<Option<JobRow>, QueueError> {
        row_by_id(&self.conn, id)
    }

    /// Every idle job, in id order.
    pub fn idle_rows(&self) -> Result<Vec<JobRow>, QueueError> {
        let mut st = self.conn.prepare_cached(
            "SELECT cluster, proc, status, owner, prio, qdate, entered, ad FROM procs \
             WHERE status = 1 /* Idle */ ORDER BY cluster, proc",
        )?;
        let rows = st.query_map([], row_from)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The clusters that have idle jobs, with their owners, in id order
    /// (one index probe per cluster).
    pub fn clusters_with_idle(&self) -> Result<Vec<(i64, String)>, QueueError> {
        clusters_with_idle(&self.conn)
    }

    /// The idle jobs of one cluster, in id order.
    pub fn idle_rows_of_cluster(&self, cluster: i64) -> Result<Vec<JobRow>, QueueError> {
        let mut st = self.conn.prepare_cached(
            "SELECT cluster, proc, status, owner, prio, qdate, entered, ad FROM procs \
             WHERE status = 1 /* Idle */ AND cluster = ?1 ORDER BY proc",
        )?;
        let rows = st.query_map([cluster], row_from)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Jobs in any of `statuses`, in id order.
    pub fn rows_in(&self, statuses: &[JobStatus]) -> Result<Vec<JobRow>, QueueError> {
        let list: Vec<String> = statuses.iter().map(|s| s.code().to_string()).collect();
        let sql = format!(
            "SELECT cluster, proc, status, owner, prio, qdate, entered, ad FROM procs \
             WHERE status IN ({}) ORDER BY cluster, proc",
            list.join(",")
        );
        let mut st = self.conn.prepare(&sql)?;
        let rows = st.query_map([], row_from)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The pending requests for a job's shadow, oldest first, read outside
    /// any write (a shadow polls them cheaply before it commits anything).
    pub fn requests(&self, id: JobId) -> Result<Vec<Request>, QueueError> {
        read_requests(&self.conn, id)
    }

    /// The jobs that have a request pending, in id order (the table is
    /// nearly always empty).
    pub fn jobs_with_requests(&self) -> Result<Vec<JobId>, QueueError> {
        let mut st = self
            .conn
            .prepare_cached("SELECT DISTINCT cluster, proc FROM requests ORDER BY cluster, proc")?;
        let ids = st.query_map([], |r| {
            Ok(JobId {
                cluster: r.get(0)?,
                proc: r.get(1)?,
            })
        })?;
        Ok(ids.collect::<Result<_, _>>()?)
    }

    /// A meta value (such as `last_pass`), if set.
    pub fn meta(&self, key: &str) -> Result<Option<i64>, QueueError> {
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()?)
    }

    /// Trims the transaction log to `limits.log_max_records` (never below a
    /// registered follower) and history to `limits.history_max_jobs`. Each
    /// goes down to nine tenths of its limit, so that a queue at its limits
    /// trims once per tenth rather than at every write; the cost is the
    /// records and jobs removed, not the size of the log or history.
    pub fn trim(&mut self, limits: &Limits) -> Result<(), QueueError> {
        let tx = self.immediate()?;
        let (first, max_seq) = log_bounds(&tx)?;
        if max_seq - first + 1 > limits.log_max_records {
            let min_follower: Option<i64> = tx
                .query_row("SELECT min(position) FROM followers", [], |r| r.get(0))
                .optional()?
                .flatten();
            // The newest record stays whatever the limit: the next record's
            // seq is the largest in the log plus one, and must never go back.
            let mut cut = (max_seq - after_trim(limits.log_max_records)).min(max_seq - 1);
            if let Some(f) = min_follower {
                cut = cut.min(f);
            }
            if cut >= first {
                tx.execute("DELETE FROM txlog WHERE seq <= ?1", [cut])?;
            }
        }
        let kept: i64 = tx.query_row(
            "SELECT value FROM meta WHERE key = 'history_jobs'",
            [],
            |r| r.get(0),
        )?;
        if kept > limits.history_max_jobs {
            // The kept count may be high (see schema step 4): count once.
            let jobs: i64 = tx.query_row("SELECT count(*) FROM history", [], |r| r.get(0))?;
            let mut left = jobs;
            if jobs > limits.history_max_jobs {
                left -= trim_history(&tx, jobs - after_trim(limits.history_max_jobs))?;
            }
            tx.execute(
                "UPDATE meta SET value = ?1 WHERE key = 'history_jobs'",
                [left],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// History rows, newest first (by completion, then id), at most `limit`.
    pub fn history(
        &self,
        sel: &Selection,
        limit: Option<usize>,
    ) -> Result<Vec<(JobRow, ClassAd)>, QueueError> {
        let (cond, args) = where_clause(sel);
        let mut sql =
            format!("SELECT cluster, proc, status, owner, completed, ad FROM history{cond}");
        sql.push_str(" ORDER BY completed DESC, cluster DESC, proc DESC");
        let mut st = self.conn.prepare(&sql)?;
        let mut rows = st.query(rusqlite::params_from_iter(args))?;
        let mut cache: HashMap<i64, Rc<ClassAd>> = HashMap::new();
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let id = JobId {
                cluster: r.get(0)?,
                proc: r.get(1)?,
            };
            let diff: String = r.get(5)?;
            let cad = match cache.get(&id.cluster) {
                Some(a) => a.clone(),
                None => {
                    let text: Option<String> = self
                        .conn
                        .query_row(
                            "SELECT ad FROM history_clusters WHERE cluster = ?1",
                            [id.cluster],
                            |r| r.get(0),
                        )
                        .optional()?;
                    let a = Rc::new(match text {
                        Some(t) => parse_stored(&self.path, &t)?,
                        None => ClassAd::new(),
                    });
                    cache.insert(id.cluster, a.clone());
                    a
                }
            };
            let mut ad = (*cad).clone();
            ad.update(&parse_stored(&self.path, &diff)?);
            if let Some(c) = &sel.constraint
                && !matches_constraint(c, &ad)
            {
                continue;
            }
            let status = r.get(2)?;
            let row = JobRow {
                id,
                status,
                owner: r.get(3)?,
                prio: 0,
                qdate: 0,
                entered: r.get(4)?,
                diff,
            };
            out.push((row, ad));
            if limit.is_some_and(|l| out.len() >= l) {
                break;
            }
        }
        Ok(out)
    }
}

/// How much growth past its last look a limit of `limit` allows before
/// it is looked at again (see [`Queue::keep_within_limits`]).
fn limit_stride(limit: i64) -> i64 {
    (limit / 100).max(1)
}

/// Whether `from..=to` holds a multiple of `stride`.
fn holds_multiple(from: i64, to: i64, stride: i64) -> bool {
    to >= from && to.div_euclid(stride) > (from - 1).div_euclid(stride)
}

/// [`Queue::clusters_with_idle`], also inside a write.
pub fn clusters_with_idle(conn: &Connection) -> Result<Vec<(i64, String)>, QueueError> {
    let mut st = conn.prepare_cached(
        "SELECT cluster, owner FROM clusters c WHERE EXISTS \
         (SELECT 1 FROM procs p WHERE p.cluster = c.cluster AND p.status = 1 /* Idle */)",
    )?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// What a trim leaves of `limit`: nine tenths (all of a limit under 10).
fn after_trim(limit: i64) -> i64 {
    limit - limit / 10
}

/// Removes the `n` oldest completions from history, and the cluster ads
/// of history that no job of theirs needs any more. Returns how many
/// jobs went.
fn trim_history(tx: &rusqlite::Transaction<'_>, n: i64) -> Result<i64, QueueError> {
    let clusters: Vec<i64> = tx
        .prepare(
            "SELECT DISTINCT cluster FROM \
             (SELECT cluster FROM history ORDER BY completed, cluster, proc LIMIT ?1)",
        )?
        .query_map([n], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let gone = tx.execute(
        "DELETE FROM history WHERE (cluster, proc) IN \
         (SELECT cluster, proc FROM history ORDER BY completed, cluster, proc LIMIT ?1)",
        [n],
    )?;
    let mut orphan = tx.prepare(
        "DELETE FROM history_clusters WHERE cluster = ?1 \
         AND NOT EXISTS (SELECT 1 FROM history WHERE cluster = ?1) \
         AND NOT EXISTS (SELECT 1 FROM clusters WHERE cluster = ?1)",
    )?;
    for c in clusters {
        orphan.execute([c])?;
    }
    Ok(gone as i64)
}

/// Creates SPOOL with mode 0700 (personal mode).
fn create_spool(spool: &Path) -> Result<(), QueueError> {
    use std::os::unix::fs::DirBuilderExt;
    if spool.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(spool)
        .map_err(|e| QueueError::Spool {
            path: spool.to_path_buf(),
            msg: e.to_string(),
        })
}

#[cfg(test)]
mod tests;
