//! The router's state in the queue database (schema step 5): the jobs it
//! manages (`router_jobs`) and each route's throttle counters
//! (`router_routes`). Every function here runs inside the caller's
//! transaction, so a state change commits with the job changes it goes
//! with.

use rusqlite::{Connection, OptionalExtension, params};

use super::throttle::Counters;
use crate::queue::{JobId, QueueError};

/// Where a managed job is in HTCondor's state machine (spec 5.4). A job
/// is claimed and submitted in one transaction, so there is no separate
/// claimed state in the database; a retired job's row is deleted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The routed copy is in the queue and mirrored every pass.
    Submitted,
    /// Given up (source removed or held, copy gone, finalize failed); the
    /// cleanup (hook, removal of the copy, yield) is still to be done, and
    /// is retried every pass.
    Cleanup,
    /// Finalized (the terminate event written): the same, but the source
    /// yields as done ("ScheddDone") and the copy goes to history.
    Finalized,
}

impl Stage {
    fn as_str(self) -> &'static str {
        match self {
            Stage::Submitted => "submitted",
            Stage::Cleanup => "cleanup",
            Stage::Finalized => "finalized",
        }
    }
    fn parse(s: &str) -> Stage {
        match s {
            "cleanup" => Stage::Cleanup,
            "finalized" => Stage::Finalized,
            _ => Stage::Submitted,
        }
    }
}

/// How a managed job ended, for the throttle and the yield.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    None,
    Success,
    Failure,
    /// The source was removed or held by its user: neither.
    Interrupted,
    /// JOB_FINALIZE failed: the source goes back to Idle, not a failure.
    Rerouted,
}

impl Outcome {
    fn as_str(self) -> &'static str {
        match self {
            Outcome::None => "",
            Outcome::Success => "success",
            Outcome::Failure => "failure",
            Outcome::Interrupted => "interrupted",
            Outcome::Rerouted => "rerouted",
        }
    }
    fn parse(s: &str) -> Outcome {
        match s {
            "success" => Outcome::Success,
            "failure" => Outcome::Failure,
            "interrupted" => Outcome::Interrupted,
            "rerouted" => Outcome::Rerouted,
            _ => Outcome::None,
        }
    }
}

/// One managed job.
#[derive(Clone, Debug, PartialEq)]
pub struct Managed {
    pub src: JobId,
    pub stage: Stage,
    pub route: String,
    pub dest: Option<JobId>,
    pub outcome: Outcome,
    pub since: i64,
}

pub fn managed(conn: &Connection) -> Result<Vec<Managed>, QueueError> {
    let mut st = conn.prepare_cached(
        "SELECT src_cluster, src_proc, state, route, dest_cluster, dest_proc, outcome, since \
         FROM router_jobs ORDER BY src_cluster, src_proc",
    )?;
    let rows = st.query_map([], |r| {
        let dc: Option<i64> = r.get(4)?;
        let dp: Option<i64> = r.get(5)?;
        Ok(Managed {
            src: JobId {
                cluster: r.get(0)?,
                proc: r.get(1)?,
            },
            stage: Stage::parse(&r.get::<_, String>(2)?),
            route: r.get(3)?,
            dest: dc.zip(dp).map(|(cluster, proc)| JobId { cluster, proc }),
            outcome: Outcome::parse(&r.get::<_, String>(6)?),
            since: r.get(7)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub fn put(conn: &Connection, m: &Managed) -> Result<(), QueueError> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO router_jobs \
         (src_cluster, src_proc, state, route, dest_cluster, dest_proc, outcome, since) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        m.src.cluster,
        m.src.proc,
        m.stage.as_str(),
        m.route,
        m.dest.map(|d| d.cluster),
        m.dest.map(|d| d.proc),
        m.outcome.as_str(),
        m.since
    ])?;
    Ok(())
}

/// Retires a managed job: its row goes.
pub fn retire(conn: &Connection, src: JobId) -> Result<(), QueueError> {
    conn.prepare_cached("DELETE FROM router_jobs WHERE src_cluster = ?1 AND src_proc = ?2")?
        .execute([src.cluster, src.proc])?;
    Ok(())
}

/// A route's counters; a route never seen starts now without throttle.
pub fn counters(conn: &Connection, route: &str, now: i64) -> Result<Counters, QueueError> {
    Ok(conn
        .prepare_cached(
            "SELECT throttle, window_start, recent_routed, recent_failed, recent_succeeded \
             FROM router_routes WHERE name = ?1",
        )?
        .query_row([route], |r| {
            Ok(Counters {
                throttle: r.get(0)?,
                window_start: r.get(1)?,
                recent_routed: r.get(2)?,
                recent_failed: r.get(3)?,
                recent_succeeded: r.get(4)?,
            })
        })
        .optional()?
        .unwrap_or_else(|| Counters::new(now)))
}

pub fn put_counters(conn: &Connection, route: &str, c: &Counters) -> Result<(), QueueError> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO router_routes \
         (name, throttle, window_start, recent_routed, recent_failed, recent_succeeded) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        route,
        c.throttle,
        c.window_start,
        c.recent_routed,
        c.recent_failed,
        c.recent_succeeded
    ])?;
    Ok(())
}

/// Adds one finished job to a route's counters.
pub fn count(conn: &Connection, route: &str, outcome: Outcome, now: i64) -> Result<(), QueueError> {
    let mut c = counters(conn, route, now)?;
    match outcome {
        Outcome::Success => c.recent_succeeded += 1,
        Outcome::Failure => c.recent_failed += 1,
        _ => return Ok(()),
    }
    put_counters(conn, route, &c)
}
