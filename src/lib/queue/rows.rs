//! Reading stored rows: the WHERE clause of a [`Selection`], rows from
//! the procs and history tables, requests, and the overlay of a job's own
//! attributes on its cluster ad.

use std::path::Path;
use std::rc::Rc;

use rusqlite::Connection;

use super::*;

/// ` WHERE …` for a selection's clusters, job ids and owners (their union),
/// with its arguments; empty when the selection names none of them.
pub(super) fn where_clause(sel: &Selection) -> (String, Vec<rusqlite::types::Value>) {
    let mut conds: Vec<&str> = Vec::new();
    let mut args: Vec<rusqlite::types::Value> = Vec::new();
    for c in &sel.clusters {
        conds.push("cluster = ?");
        args.push((*c).into());
    }
    for j in &sel.jobs {
        conds.push("(cluster = ? AND proc = ?)");
        args.push(j.cluster.into());
        args.push(j.proc.into());
    }
    for o in &sel.owners {
        conds.push("owner = ?");
        args.push(o.clone().into());
    }
    if conds.is_empty() {
        (String::new(), args)
    } else {
        (format!(" WHERE {}", conds.join(" OR ")), args)
    }
}

/// The rows of `table` a selection names: the union of its clusters, job ids
/// and owners, or every row.
pub(super) fn query_rows(
    conn: &Connection,
    table: &str,
    sel: &Selection,
) -> Result<Vec<JobRow>, QueueError> {
    let (cond, args) = where_clause(sel);
    let mut sql =
        format!("SELECT cluster, proc, status, owner, prio, qdate, entered, ad FROM {table}{cond}");
    sql.push_str(" ORDER BY cluster, proc");
    let mut st = conn.prepare(&sql)?;
    let rows = st.query_map(rusqlite::params_from_iter(args), row_from)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The requests for a job, oldest first. A name this version does not
/// know (written by a newer tern) is left in the table for that version.
pub(super) fn read_requests(conn: &Connection, id: JobId) -> Result<Vec<Request>, QueueError> {
    // The table is nearly always empty, and this statement, bound to a
    // new job, is compiled again by SQLite (a bound value compared with a
    // key column may change its plan): look first with no parameters.
    let any: bool = conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM requests)")?
        .query_row([], |r| r.get(0))?;
    if !any {
        return Ok(Vec::new());
    }
    let mut st = conn.prepare_cached(
        "SELECT kind FROM requests WHERE cluster = ?1 AND proc = ?2 ORDER BY made, kind",
    )?;
    let names = st.query_map([id.cluster, id.proc], |r| r.get::<_, String>(0))?;
    let mut out = Vec::new();
    for name in names {
        out.extend(Request::parse(&name?));
    }
    Ok(out)
}

pub(super) fn row_from(r: &rusqlite::Row<'_>) -> rusqlite::Result<JobRow> {
    Ok(JobRow {
        id: JobId {
            cluster: r.get(0)?,
            proc: r.get(1)?,
        },
        status: r.get(2)?,
        owner: r.get(3)?,
        prio: r.get(4)?,
        qdate: r.get(5)?,
        entered: r.get(6)?,
        diff: r.get(7)?,
    })
}

/// The clusters' ads read so far by one handle (a cluster ad never
/// changes, so they are kept for the handle's life).
pub(super) type ClusterCache = RefCell<HashMap<i64, Rc<ClassAd>>>;

/// The cluster ad of `cluster`, from `cache` or the clusters table; a
/// cluster without one is `Invalid`, whether a reader or a writer asks.
///
/// A reader (a pass, a shadow's claim reuse) acts on rows it read earlier,
/// outside one snapshot: between its read of a job and of the job's
/// cluster ad, the cluster's last job may have left the queue, and its ad
/// with it. The ad is then the one the cluster left in history (the same
/// text: cluster ads never change), so the reader sees the job as it was
/// when it read it, as it sees any other job that has left since; what it
/// then writes about such a job finds no row, as always.
pub(super) fn cluster_ad(
    conn: &Connection,
    path: &Path,
    cache: &ClusterCache,
    cluster: i64,
) -> Result<Rc<ClassAd>, QueueError> {
    if let Some(ad) = cache.borrow().get(&cluster) {
        return Ok(ad.clone());
    }
    let text: Option<String> = conn
        .prepare_cached(
            "SELECT ad FROM clusters WHERE cluster = ?1 \
             UNION ALL SELECT ad FROM history_clusters WHERE cluster = ?1 LIMIT 1",
        )?
        .query_row([cluster], |r| r.get(0))
        .optional()?;
    let text =
        text.ok_or_else(|| QueueError::Invalid(format!("cluster {cluster} has no cluster ad")))?;
    let ad = Rc::new(parse_stored(path, &text)?);
    cache.borrow_mut().insert(cluster, ad.clone());
    Ok(ad)
}

/// A job's full ad: its cluster ad, its differences, and the hot
/// attributes from their columns.
pub(super) fn full_ad(
    conn: &Connection,
    path: &Path,
    cache: &ClusterCache,
    row: &JobRow,
) -> Result<ClassAd, QueueError> {
    let mut ad = (*cluster_ad(conn, path, cache, row.id.cluster)?).clone();
    overlay(path, &mut ad, row)?;
    Ok(ad)
}

/// Adds a row's differences and hot columns to a copy of its cluster ad.
pub(super) fn overlay(path: &Path, ad: &mut ClassAd, row: &JobRow) -> Result<(), QueueError> {
    if row.diff.len() > 4 {
        ad.update(&parse_stored(path, &row.diff)?);
    }
    ad.insert("ProcId", Expr::int(row.id.proc));
    ad.insert("JobStatus", Expr::int(row.status));
    if !ad_has_own(&row.diff, "JobPrio") {
        ad.insert("JobPrio", Expr::int(row.prio));
    }
    ad.insert("EnteredCurrentStatus", Expr::int(row.entered));
    Ok(())
}

/// Whether a stored difference text sets `name` (a cheap textual test; the
/// text is new-syntax `[ A = …; … ]`).
pub(super) fn ad_has_own(diff: &str, name: &str) -> bool {
    diff.len() > 4
        && diff
            .to_ascii_lowercase()
            .contains(&format!(" {} = ", name.to_ascii_lowercase()))
}

pub(super) fn parse_stored(path: &Path, text: &str) -> Result<ClassAd, QueueError> {
    classad::parse_ad(text).map_err(|e| QueueError::Corrupt {
        path: path.to_path_buf(),
        msg: format!("a stored ad does not parse: {e}"),
    })
}

/// A constraint holds when it evaluates to true or a non-zero number.
pub fn matches_constraint(c: &Expr, ad: &ClassAd) -> bool {
    let ad = Rc::new(ad.clone());
    classad::eval_in(&ad, c).is_true()
}
