//! One write transaction: [`Writer`], what it can do to a job
//! ([`Change`]), and the rows and log records each change writes. A writer
//! is made only by [`Queue::write`] and [`Queue::write_as`]; the latter's
//! carries the [`Authority`] every change is checked against.
//!
//! Which of the two a writer is shows in its type: [`Queue::write`] hands
//! out a `Writer<System>`, [`Queue::write_as`] a `Writer<ForUser>`. Only
//! the system's writer has [`Writer::conn`], the raw connection that
//! other modules' tables (slots, the accountant) are written through, so
//! nothing written for a user can go around the owner check: an edit a
//! user asks for that needs the connection is checked first and then made
//! as the system (see `actions::userprio`).

use crate::vocab::{JobStatus, job_attrs};
use std::cell::RefCell;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::path::PathBuf;
use std::rc::Rc;

use rusqlite::{Connection, OptionalExtension, params};

use super::authority::AttrClass;
use super::*;

/// What a modification does to one job.
#[derive(Clone, Debug)]
pub enum Change {
    /// Leave the job alone, with the message to report.
    Skip(String),
    /// Set these attributes (JobStatus and the other hot attributes go to
    /// their columns).
    Set(Vec<(String, Expr)>),
    /// Set these attributes, then move the job to history.
    Leave { set: Vec<(String, Expr)> },
    /// Set some attributes and delete others. An attribute the job takes
    /// from its cluster ad is deleted by making it undefined in the job, as
    /// HTCondor does for a chained ad.
    Update {
        set: Vec<(String, Expr)>,
        delete: Vec<String>,
    },
}

impl Change {
    /// Setting `first` and then making this change, as one change: what
    /// the two in a row would leave (a name this change deletes is
    /// deleted, one both set takes this change's value), with one log
    /// record and one rewrite of the job's row instead of two. Not for a
    /// change that deletes a hot column (JobStatus, JobPrio,
    /// EnteredCurrentStatus): a delete does not reach a column, so in a
    /// row `first`'s value would stay there, where this leaves it out. No
    /// caller deletes one.
    pub fn after(self, mut first: Vec<(String, Expr)>) -> Change {
        if first.is_empty() {
            return self;
        }
        let then = |first: Vec<(String, Expr)>, set: Vec<(String, Expr)>| {
            let mut all = first;
            all.extend(set);
            all
        };
        match self {
            Change::Skip(_) => Change::Set(first),
            Change::Set(set) => Change::Set(then(first, set)),
            Change::Leave { set } => Change::Leave {
                set: then(first, set),
            },
            Change::Update { set, delete } => {
                debug_assert!(
                    !delete.iter().any(|d| is_hot_column(d)),
                    "Change::after with a hot column deleted: {delete:?}"
                );
                // `apply` deletes before it sets: a name this change
                // deletes must not come back from `first`.
                first.retain(|(n, _)| !delete.iter().any(|d| d.eq_ignore_ascii_case(n)));
                Change::Update {
                    set: then(first, set),
                    delete,
                }
            }
        }
    }
}

/// Whether `name` (any case) is a job attribute `procs` keeps in a column
/// of its own: JobStatus, JobPrio and EnteredCurrentStatus.
fn is_hot_column(name: &str) -> bool {
    ["jobstatus", "jobprio", "enteredcurrentstatus"]
        .iter()
        .any(|h| h.eq_ignore_ascii_case(name))
}

/// The writer of [`Queue::write`]: the system (the pass, a shadow), which
/// may change any job and reach the raw connection.
#[derive(Debug)]
pub enum System {}

/// The writer of [`Queue::write_as`]: a user's, checked against their
/// [`Authority`], without the raw connection. The system's writer has it:
///
/// ```
/// # fn f(q: &mut tern::queue::Queue) {
/// q.write(0, |w| Ok(w.conn().is_autocommit())).unwrap();
/// # }
/// ```
///
/// and a user's does not:
///
/// ```compile_fail
/// # fn f(q: &mut tern::queue::Queue, a: &tern::queue::Authority) {
/// q.write_as(a, 0, |w| Ok(w.conn().is_autocommit())).unwrap();
/// # }
/// ```
#[derive(Debug)]
pub enum ForUser {}

/// An IMMEDIATE transaction on a connection, rolled back when dropped
/// uncommitted. Unlike rusqlite's Transaction, whose BEGIN and COMMIT are
/// compiled anew each time, it runs them as cached statements: a shadow
/// commits once or twice per job.
pub(super) struct Tx<'q> {
    conn: &'q Connection,
    open: bool,
}

impl<'q> Tx<'q> {
    pub(super) fn begin(conn: &'q Connection) -> rusqlite::Result<Tx<'q>> {
        conn.prepare_cached("BEGIN IMMEDIATE")?.execute([])?;
        Ok(Tx { conn, open: true })
    }

    pub(super) fn commit(mut self) -> rusqlite::Result<()> {
        self.conn.prepare_cached("COMMIT")?.execute([])?;
        self.open = false;
        Ok(())
    }
}

impl std::ops::Deref for Tx<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        // A failed COMMIT may have ended the transaction already.
        if self.open && !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

/// One write transaction in progress (see [`Queue::write`]); `A` says for
/// whom ([`System`] or [`ForUser`]).
pub struct Writer<'q, A = System> {
    pub(super) tx: Tx<'q>,
    pub(super) path: PathBuf,
    pub(super) now: i64,
    /// The sequence number of this transaction's BEGIN record, once it
    /// changed a job.
    pub(super) began: Option<i64>,
    pub(super) emptied: Vec<i64>,
    pub(super) clusters: &'q RefCell<HashMap<i64, Rc<ClassAd>>>,
    /// The user this transaction writes for; `None` for the system (the
    /// pass, a shadow), which may change any job.
    pub(super) authority: Option<&'q Authority>,
    pub(super) access: PhantomData<A>,
}

impl Writer<'_, System> {
    /// The transaction's connection, for tables other modules own (slots,
    /// the accountant). Jobs are changed through [`Writer::change`]. Only
    /// the system's writer has it: what goes through the connection is
    /// checked against no authority.
    pub fn conn(&self) -> &Connection {
        &self.tx
    }

    /// Submits one cluster owned by `owner` inside this transaction, so
    /// that a job and the change that made it commit together (the job
    /// router's routed copy and its source's RoutedToJobId). Returns the
    /// new cluster id.
    pub fn submit(
        &mut self,
        owner: &str,
        cluster: &crate::submit::Cluster,
    ) -> Result<i64, QueueError> {
        let id: i64 = self.tx.query_row(
            "SELECT value FROM meta WHERE key = 'next_cluster'",
            [],
            |r| r.get(0),
        )?;
        if self.began.is_none() {
            log_record(&self.tx, op::BEGIN, "", "", "")?;
            self.began = Some(self.tx.last_insert_rowid());
        }
        insert_cluster_records(&self.tx, id, owner, cluster, false)?;
        self.set_meta("next_cluster", id + 1)?;
        Ok(id)
    }
}

impl<A> Writer<'_, A> {
    /// Whether this transaction may change `row`'s job: always for the
    /// system, and for a user when [`Authority::may_change`] says so.
    pub fn may_change(&self, row: &JobRow) -> bool {
        self.authority.is_none_or(|a| a.may_change(&row.owner))
    }

    /// Refuses a change to a job whose owner the authority may not touch.
    fn check(&self, id: JobId, owner: &str) -> Result<(), QueueError> {
        match self.authority {
            Some(a) if !a.may_change(owner) => Err(QueueError::NotPermitted {
                job: id,
                user: a.user().to_string(),
                owner: owner.to_string(),
            }),
            _ => Ok(()),
        }
    }

    /// [`Writer::check`] for a job known by id only; a job not in the
    /// queue has no owner to protect.
    fn check_id(&self, id: JobId) -> Result<(), QueueError> {
        if self.authority.is_none() {
            return Ok(());
        }
        match row_by_id(&self.tx, id)? {
            Some(row) => self.check(id, &row.owner),
            None => Ok(()),
        }
    }

    pub fn now(&self) -> i64 {
        self.now
    }

    /// The jobs a selection names (before its constraint), in id order.
    pub fn rows(&self, sel: &Selection) -> Result<Vec<JobRow>, QueueError> {
        query_rows(&self.tx, "procs", sel)
    }

    /// One job's row, if it is in the queue.
    pub fn row(&self, id: JobId) -> Result<Option<JobRow>, QueueError> {
        row_by_id(&self.tx, id)
    }

    /// Idle jobs of `owner`, best JobPrio first, at most `limit` after
    /// the first `skip`. The owner and the bounds are written into the
    /// statement, not bound: SQLite compiles a statement again whenever a
    /// value compared with an indexed column is bound anew, and a shadow
    /// asks this once per job with the same owner (cached statements per
    /// owner).
    pub fn idle_rows_of(
        &self,
        owner: &str,
        skip: i64,
        limit: i64,
    ) -> Result<Vec<JobRow>, QueueError> {
        let mut st = self.tx.prepare_cached(&format!(
            "SELECT cluster, proc, status, owner, prio, qdate, entered, ad FROM procs \
             WHERE status = 1 /* Idle */ AND owner = {} ORDER BY prio DESC, cluster, proc \
             LIMIT {limit} OFFSET {skip}",
            sql_text(owner)
        ))?;
        let rows = st.query_map([], row_from)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The cluster ad of `cluster` (cached: a cluster ad never changes).
    pub fn cluster_ad(&self, cluster: i64) -> Result<Rc<ClassAd>, QueueError> {
        rows::cluster_ad(&self.tx, &self.path, self.clusters, cluster)
    }

    /// A job's full ad.
    pub fn full_ad(&self, row: &JobRow) -> Result<ClassAd, QueueError> {
        rows::full_ad(&self.tx, &self.path, self.clusters, row)
    }

    /// Applies one change to one job (`ad` is its full ad as read in this
    /// transaction).
    pub fn change(
        &mut self,
        row: &JobRow,
        ad: &ClassAd,
        change: &Change,
    ) -> Result<(), QueueError> {
        if matches!(change, Change::Skip(_)) {
            return Ok(());
        }
        // The stored owner, not the caller's row: a row is plain data.
        self.check_id(row.id)?;
        if self.authority.is_some() {
            // No action a user asks for changes who a job is; a change
            // that would is refused whatever made it.
            for name in change_names(change) {
                if job_attrs::is_in(job_attrs::SYSTEM_IMMUTABLE, name) {
                    return Err(QueueError::AttrNotPermitted {
                        job: row.id,
                        attr: name.to_string(),
                        class: AttrClass::Immutable.word(),
                    });
                }
            }
        }
        if self.began.is_none() {
            log_record(&self.tx, op::BEGIN, "", "", "")?;
            self.began = Some(self.tx.last_insert_rowid());
        }
        apply(&self.tx, row, ad, change, self.now)?;
        if let Change::Leave { .. } = change {
            self.emptied.push(row.id.cluster);
        }
        Ok(())
    }

    /// Sets attributes a user named (tern_qedit's edits) on one job, as
    /// the schedd's `ModifyAttrCheck` allows them: for a user's writer, an
    /// immutable or secure attribute is [`QueueError::AttrNotPermitted`]
    /// and a protected one, unless the user is a super user (or every
    /// user is trusted), [`QueueError::ProtectedAttr`]. The system's
    /// writer sets anything.
    pub fn set_attrs(
        &mut self,
        row: &JobRow,
        ad: &ClassAd,
        set: &[(String, Expr)],
    ) -> Result<(), QueueError> {
        if let Some(a) = self.authority {
            for (name, _) in set {
                match a.may_set(name) {
                    Ok(()) => {}
                    Err(AttrClass::Protected) => {
                        return Err(QueueError::ProtectedAttr {
                            job: row.id,
                            attr: name.clone(),
                            user: a.user().to_string(),
                        });
                    }
                    Err(class) => {
                        return Err(QueueError::AttrNotPermitted {
                            job: row.id,
                            attr: name.clone(),
                            class: class.word(),
                        });
                    }
                }
            }
        }
        self.change(row, ad, &Change::Set(set.to_vec()))
    }

    /// Sets a meta value.
    pub fn set_meta(&self, key: &str, value: i64) -> Result<(), QueueError> {
        self.tx.execute(
            "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = ?2",
            params![key, value],
        )?;
        Ok(())
    }

    /// Records a request for a running job's shadow (see the `requests`
    /// table); the caller wakes the shadow after commit.
    pub fn request(&self, id: JobId, kind: Request) -> Result<(), QueueError> {
        self.check_id(id)?;
        self.tx
            .prepare_cached(
                "INSERT OR REPLACE INTO requests (cluster, proc, kind, made) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![id.cluster, id.proc, kind.as_str(), self.now])?;
        Ok(())
    }

    /// The pending requests for a job, oldest first.
    pub fn requests(&self, id: JobId) -> Result<Vec<Request>, QueueError> {
        read_requests(&self.tx, id)
    }

    /// Forgets the requests for a job (all of them, or one kind).
    pub fn clear_requests(&self, id: JobId, kind: Option<Request>) -> Result<(), QueueError> {
        self.check_id(id)?;
        match kind {
            None => self
                .tx
                .prepare_cached("DELETE FROM requests WHERE cluster = ?1 AND proc = ?2")?
                .execute([id.cluster, id.proc])?,
            Some(k) => self
                .tx
                .prepare_cached(
                    "DELETE FROM requests WHERE cluster = ?1 AND proc = ?2 AND kind = ?3",
                )?
                .execute(params![id.cluster, id.proc, k.as_str()])?,
        };
        Ok(())
    }

    /// Clusters left without jobs go to history; then commit. Says what
    /// the transaction added to the log and to history ([`Finished`]).
    pub(super) fn finish(mut self) -> Result<Finished, QueueError> {
        // One entry per job that left, each counted into history.
        let left = self.emptied.len();
        self.emptied.sort();
        self.emptied.dedup();
        for &c in &self.emptied {
            // Whether any job is left, not how many: a cluster's last jobs
            // leave one by one, and counting would read the rest each time.
            let left: bool = self
                .tx
                .prepare_cached("SELECT EXISTS (SELECT 1 FROM procs WHERE cluster = ?1)")?
                .query_row([c], |r| r.get(0))?;
            if !left {
                self.tx.execute(
                    "INSERT OR REPLACE INTO history_clusters (cluster, ad) SELECT cluster, ad FROM clusters WHERE cluster = ?1",
                    [c],
                )?;
                self.tx
                    .execute("DELETE FROM clusters WHERE cluster = ?1", [c])?;
                log_record(&self.tx, op::DESTROY_AD, &cluster_key(c), "", "")?;
                self.clusters.borrow_mut().remove(&c);
            }
        }
        let logged = match self.began {
            Some(first) => {
                log_record(&self.tx, op::END, "", "", "")?;
                Some((first, self.tx.last_insert_rowid()))
            }
            None => None,
        };
        let history = match left {
            0 => None,
            _ => Some(history_count(&self.tx)?),
        };
        self.tx.commit()?;
        Ok(Finished { logged, history })
    }
}

/// What a committed [`Writer`] added: the first and last sequence numbers
/// of its log records, and, when jobs of it went to history, the count of
/// jobs in history after it.
pub(super) struct Finished {
    pub logged: Option<(i64, i64)>,
    pub history: Option<i64>,
}

/// The count of jobs in history the writes keep (meta's `history_jobs`).
pub(super) fn history_count(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT value FROM meta WHERE key = 'history_jobs'")?
        .query_row([], |r| r.get(0))
}

/// The attributes a change sets or deletes.
fn change_names(change: &Change) -> Vec<&str> {
    match change {
        Change::Skip(_) => Vec::new(),
        Change::Set(set) | Change::Leave { set } => set.iter().map(|(n, _)| n.as_str()).collect(),
        Change::Update { set, delete } => set
            .iter()
            .map(|(n, _)| n.as_str())
            .chain(delete.iter().map(String::as_str))
            .collect(),
    }
}

pub(super) fn row_by_id(conn: &Connection, id: JobId) -> Result<Option<JobRow>, QueueError> {
    Ok(conn
        .prepare_cached(
            "SELECT cluster, proc, status, owner, prio, qdate, entered, ad FROM procs WHERE cluster = ?1 AND proc = ?2",
        )?
        .query_row([id.cluster, id.proc], row_from)
        .optional()?)
}

pub(super) fn apply(
    tx: &Connection,
    row: &JobRow,
    ad: &ClassAd,
    change: &Change,
    now: i64,
) -> Result<(), QueueError> {
    let none: Vec<String> = Vec::new();
    let (set, leave, delete) = match change {
        Change::Skip(_) => return Ok(()),
        Change::Set(s) => (s, false, &none),
        Change::Leave { set } => (set, true, &none),
        Change::Update { set, delete } => (set, false, delete),
    };
    let key = job_key(row.id);
    let mut diff = parse_stored(Path::new(""), &row.diff)?;
    let cluster_ad = if delete.is_empty() {
        None
    } else {
        let text: String = tx.query_row(
            "SELECT ad FROM clusters WHERE cluster = ?1",
            [row.id.cluster],
            |r| r.get(0),
        )?;
        Some(parse_stored(Path::new(""), &text)?)
    };
    for name in delete {
        let own = diff.remove(name).is_some();
        let in_cluster = cluster_ad.as_ref().is_some_and(|c| c.get(name).is_some());
        if own || in_cluster {
            log_record(tx, op::DELETE_ATTR, &key, name, "")?;
        }
        // The cluster's value must not show through.
        if in_cluster {
            diff.insert(name, Expr::Lit(Value::Undefined));
        }
    }
    let (mut status, mut prio, mut entered) = (row.status, row.prio, row.entered);
    let mut logged = ClassAd::new();
    for (name, e) in set {
        logged.insert(name, e.clone());
        match name.to_ascii_lowercase().as_str() {
            "jobstatus" => {
                if let Expr::Lit(Value::Int(s)) = e
                    && *s != status
                {
                    status = *s;
                    entered = now;
                    logged.insert("EnteredCurrentStatus", Expr::int(now));
                }
            }
            "jobprio" => {
                // An integer lives in the column; an expression in the ad,
                // where it wins over the column (see `overlay`).
                if let Expr::Lit(Value::Int(p)) = e {
                    prio = *p;
                    diff.remove(name);
                } else {
                    diff.insert(name, e.clone());
                }
            }
            "enteredcurrentstatus" => {
                if let Expr::Lit(Value::Int(t)) = e {
                    entered = *t;
                }
            }
            _ => diff.insert(name, e.clone()),
        }
    }
    if !logged.is_empty() {
        log_record(tx, op::SET_ATTRS, &key, "", &ad_to_string(&logged))?;
    }
    if leave {
        let mut final_diff = diff;
        final_diff.insert("JobStatus", Expr::int(status));
        final_diff.insert("EnteredCurrentStatus", Expr::int(entered));
        final_diff.insert("JobPrio", Expr::int(prio));
        final_diff.insert("ProcId", Expr::int(row.id.proc));
        let completed = match ad.get("CompletionDate").and_then(|e| e.literal_value()) {
            Some(Value::Int(t)) if *t > 0 => *t,
            _ => now,
        };
        // Prepared once per transaction: rm of a large cluster runs these
        // for every job.
        tx.prepare_cached(
            "INSERT OR REPLACE INTO history (cluster, proc, owner, status, completed, ad) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![row.id.cluster, row.id.proc, row.owner, status, completed, ad_to_string(&final_diff)])?;
        // As schema step 4's trigger counted: a REPLACE counts too, and
        // Queue::trim sets the count back to the exact number.
        count_history(tx, 1)?;
        tx.prepare_cached(
            "INSERT OR IGNORE INTO history_clusters (cluster, ad) SELECT cluster, ad FROM clusters WHERE cluster = ?1",
        )?
        .execute([row.id.cluster])?;
        let gone: Option<(String, i64)> = tx
            .prepare_cached(
                "DELETE FROM procs WHERE cluster = ?1 AND proc = ?2 RETURNING owner, status",
            )?
            .query_row([row.id.cluster, row.id.proc], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        if let Some((owner, old)) = gone {
            count_jobs(tx, &owner, old, -1)?;
        }
        log_record(tx, op::DESTROY_AD, &key, "", "")?;
    } else {
        // The stored status, not the row's: the counts follow the table.
        let stored: Option<(String, i64)> = tx
            .prepare_cached("SELECT owner, status FROM procs WHERE cluster = ?1 AND proc = ?2")?
            .query_row([row.id.cluster, row.id.proc], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        tx.prepare_cached(
            "UPDATE procs SET status = ?3, prio = ?4, entered = ?5, ad = ?6 WHERE cluster = ?1 AND proc = ?2",
        )?
        .execute(params![row.id.cluster, row.id.proc, status, prio, entered, ad_to_string(&diff)])?;
        if let Some((owner, old)) = stored
            && old != status
        {
            count_jobs(tx, &owner, old, -1)?;
            count_jobs(tx, &owner, status, 1)?;
        }
    }
    Ok(())
}

/// Adds `delta` to the count of `owner`'s jobs in `status` (`job_counts`,
/// which every write of procs keeps: schema step 9).
fn count_jobs(tx: &Connection, owner: &str, status: i64, delta: i64) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO job_counts (owner, status, n) VALUES (?1, ?2, ?3) \
         ON CONFLICT (owner, status) DO UPDATE SET n = n + ?3",
    )?
    .execute(params![owner, status, delta])?;
    Ok(())
}

/// Adds `delta` to the count of jobs in history (meta's `history_jobs`).
fn count_history(tx: &Connection, delta: i64) -> rusqlite::Result<()> {
    tx.prepare_cached("UPDATE meta SET value = value + ?1 WHERE key = 'history_jobs'")?
        .execute([delta])?;
    Ok(())
}

/// Appends one transaction log record.
pub(super) fn log_record(
    conn: &Connection,
    op: i64,
    key: &str,
    name: &str,
    value: &str,
) -> Result<(), QueueError> {
    conn.prepare_cached("INSERT INTO txlog (op, key, name, value) VALUES (?1, ?2, ?3, ?4)")?
        .execute(params![op, key, name, value])?;
    Ok(())
}

pub(super) fn insert_cluster(
    tx: &Connection,
    id: i64,
    owner: &str,
    cluster: &crate::submit::Cluster,
) -> Result<(i64, i64), rusqlite::Error> {
    let first = insert_cluster_records(tx, id, owner, cluster, true)?;
    Ok((first, tx.last_insert_rowid()))
}

/// [`insert_cluster`]; `framed` logs the BEGIN and END records around it
/// (a [`Writer`] logs its own). Returns the sequence number of its first
/// record.
fn insert_cluster_records(
    tx: &Connection,
    id: i64,
    owner: &str,
    cluster: &crate::submit::Cluster,
    framed: bool,
) -> Result<i64, rusqlite::Error> {
    let mut log = tx.prepare("INSERT INTO txlog (op, key, name, value) VALUES (?1, ?2, ?3, ?4)")?;
    let mut begin = None;
    if framed {
        log.execute(params![op::BEGIN, "", "", ""])?;
        begin = Some(tx.last_insert_rowid());
    }
    let ckey = cluster_key(id);
    log.execute(params![op::NEW_AD, ckey, "Job", "Machine"])?;
    let first = begin.unwrap_or_else(|| tx.last_insert_rowid());
    let mut cad = cluster.cluster_ad.clone();
    cad.insert("ClusterId", Expr::int(id));
    cad.insert("Owner", Expr::string(owner));
    // As the schedd records it: how many procs the cluster was submitted with.
    cad.insert("TotalSubmitProcs", Expr::int(cluster.procs.len() as i64));
    let cad_text = ad_to_string(&cad);
    log.execute(params![op::SET_ATTRS, ckey, "", cad_text])?;
    tx.execute(
        "INSERT INTO clusters (cluster, owner, ad) VALUES (?1, ?2, ?3)",
        params![id, owner, cad_text],
    )?;
    let hot = |ad: &ClassAd, name: &str| -> Option<i64> {
        match ad.get(name)?.literal_value()? {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    };
    let qdate = hot(&cad, "QDate").unwrap_or(0);
    let mut ins = tx.prepare(
        "INSERT INTO procs (cluster, proc, status, owner, prio, qdate, entered, ad) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    // Jobs per status, counted into job_counts once for the cluster.
    let mut counts: Vec<(i64, i64)> = Vec::new();
    for diff in &cluster.procs {
        let proc = hot(diff, "ProcId").unwrap_or(0);
        let pick = |n: &str| hot(diff, n).or_else(|| hot(&cad, n));
        let status = pick("JobStatus").unwrap_or(JobStatus::Idle.code());
        let prio = pick("JobPrio").unwrap_or(0);
        let entered = pick("EnteredCurrentStatus").unwrap_or(qdate);
        let mut stored = ClassAd::new();
        for (n, e) in diff.iter_shared() {
            if !is_hot_column(n) {
                stored.insert_shared(n, e.clone());
            }
        }
        ins.execute(params![
            id,
            proc,
            status,
            owner,
            prio,
            qdate,
            entered,
            ad_to_string(&stored)
        ])?;
        match counts.iter_mut().find(|(s, _)| *s == status) {
            Some((_, n)) => *n += 1,
            None => counts.push((status, 1)),
        }
        let key = job_key(JobId { cluster: id, proc });
        log.execute(params![op::NEW_AD, key, "Job", "Machine"])?;
        if !diff.is_empty() {
            log.execute(params![op::SET_ATTRS, key, "", ad_to_string(diff)])?;
        }
    }
    for (status, n) in counts {
        count_jobs(tx, owner, status, n)?;
    }
    if framed {
        log.execute(params![op::END, "", "", ""])?;
    }
    Ok(first)
}

/// `text` as an SQL string literal (quotes doubled, as SQLite reads them).
fn sql_text(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

#[cfg(test)]
mod sql_text_tests {
    #[test]
    fn quotes_are_doubled() {
        assert_eq!(super::sql_text("o'brien"), "'o''brien'");
        assert_eq!(super::sql_text(""), "''");
    }
}
