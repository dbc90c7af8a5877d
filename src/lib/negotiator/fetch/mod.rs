//! Fetch-work hooks (spec 8.1): each static or partitionable slot whose
//! keyword (`SLOT<N>_JOB_HOOK_KEYWORD`, else `STARTD_JOB_HOOK_KEYWORD`)
//! names a `<KW>_HOOK_FETCH_WORK` asks that program for a job.
//!
//! The pass only decides: which slots are due ([`due_slots`], a few rows),
//! and, when some are, starts `tern_fetchwork` beside it ([`start_when_due`],
//! detached, one at a time under `$(SPOOL)/hooks/fetch.lock`), which runs
//! the hooks with their timeout ([`work`]). A fetched job enters the queue
//! bound to its slot (the `fetch_jobs` table); the pass claims that slot for
//! it before the matchmaking ([`claim_bound`]), which never sees bound jobs
//! ([`without_bound`]), and a shadow runs it like any other job. When it
//! ends, its claim is not reused for another job and the slot is due at
//! once.

pub mod work;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension};

use super::{NegotiatorError, launch, matchmaking};
use crate::classad::{ClassAd, Evaluator, Expr, MatchContext, Value};
use crate::config::Config;
use crate::machine::{self, Machine, SlotKind, SlotRow};
use crate::queue::{Change, JobId, Queue, QueueError, joblock};
use crate::vocab::JobStatus;

/// FetchWorkDelay when it is undefined or not a number (seconds).
pub const DEFAULT_DELAY: i64 = 300;

/// The directory of the fetch hooks' stderr logs, lock and log.
pub fn hooks_dir(spool: &Path) -> PathBuf {
    spool.join("hooks")
}

/// At most one `tern_fetchwork` runs: it holds this lock.
pub fn lock_path(spool: &Path) -> PathBuf {
    hooks_dir(spool).join("fetch.lock")
}

/// Left by a pass that found slots due while `tern_fetchwork` ran: it
/// looks again before it ends.
pub fn wanted_path(spool: &Path) -> PathBuf {
    hooks_dir(spool).join("fetch.wanted")
}

/// What the fetch hooks did, one line each (times, slots, failures).
pub fn log_path(spool: &Path) -> PathBuf {
    hooks_dir(spool).join("fetch.log")
}

/// The hook programs of one keyword.
#[derive(Clone, Debug)]
pub struct Hooks {
    pub keyword: String,
    pub fetch: PathBuf,
    pub reply: Option<PathBuf>,
    pub evict: Option<PathBuf>,
}

/// The keyword of slot `slot_id`: SLOT<N>_JOB_HOOK_KEYWORD, else
/// STARTD_JOB_HOOK_KEYWORD.
pub fn keyword(cfg: &Config, slot_id: i64) -> Result<Option<String>, NegotiatorError> {
    if let Some(k) = cfg.get(&format!("SLOT{slot_id}_JOB_HOOK_KEYWORD"))? {
        return Ok(Some(k));
    }
    Ok(cfg.get("STARTD_JOB_HOOK_KEYWORD")?)
}

/// The hooks of slot `slot_id`, or `None` when it fetches nothing (no
/// keyword, or no `<KW>_HOOK_FETCH_WORK`, which the others need).
pub fn hooks(cfg: &Config, slot_id: i64) -> Result<Option<Hooks>, NegotiatorError> {
    let Some(kw) = keyword(cfg, slot_id)? else {
        return Ok(None);
    };
    let path = |h: &str| -> Result<Option<PathBuf>, NegotiatorError> {
        Ok(cfg.get(&format!("{kw}_HOOK_{h}"))?.map(PathBuf::from))
    };
    let Some(fetch) = path("FETCH_WORK")? else {
        return Ok(None);
    };
    Ok(Some(Hooks {
        reply: path("REPLY_FETCH")?,
        evict: path("EVICT_CLAIM")?,
        keyword: kw,
        fetch,
    }))
}

/// FETCH_WORK_HOOK_TIMEOUT: how long one fetch-work hook may run.
pub fn timeout(cfg: &Config) -> Result<Duration, NegotiatorError> {
    let s = cfg.get_int("FETCH_WORK_HOOK_TIMEOUT", 30)?;
    if s <= 0 {
        return Err(crate::config::ConfigError::Expand {
            name: "FETCH_WORK_HOOK_TIMEOUT".into(),
            msg: format!("'{s}' is not a positive number of seconds"),
        }
        .into());
    }
    Ok(Duration::from_secs(s as u64))
}

/// One slot's row of `fetch_slots`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FetchState {
    pub keyword: String,
    pub spawned: Option<i64>,
    pub completed: Option<i64>,
    pub result: String,
    pub error: Option<String>,
    pub error_time: Option<i64>,
    pub fetched: i64,
}

/// The fetch state of `slot`, if it ever fetched.
pub fn state(conn: &Connection, slot: &str) -> Result<Option<FetchState>, QueueError> {
    let mut st = conn.prepare_cached(
        "SELECT keyword, spawned, completed, result, error, error_time, fetched \
         FROM fetch_slots WHERE slot = ?1",
    )?;
    Ok(st
        .query_row([slot], |r| {
            Ok(FetchState {
                keyword: r.get(0)?,
                spawned: r.get(1)?,
                completed: r.get(2)?,
                result: r.get(3)?,
                error: r.get(4)?,
                error_time: r.get(5)?,
                fetched: r.get(6)?,
            })
        })
        .optional()?)
}

/// A job a fetch brought, bound to its slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bound {
    pub id: JobId,
    pub slot: String,
    pub keyword: String,
    pub claim: String,
    /// The job's status; `None` once it left the queue.
    pub status: Option<i64>,
}

fn bound_rows(conn: &Connection, slot: Option<&str>) -> Result<Vec<Bound>, QueueError> {
    let sql = "SELECT f.cluster, f.proc, f.slot, f.keyword, f.claim, p.status \
               FROM fetch_jobs f LEFT JOIN procs p ON p.cluster = f.cluster AND p.proc = f.proc";
    let map = |r: &rusqlite::Row<'_>| {
        Ok(Bound {
            id: JobId {
                cluster: r.get(0)?,
                proc: r.get(1)?,
            },
            slot: r.get(2)?,
            keyword: r.get(3)?,
            claim: r.get(4)?,
            status: r.get(5)?,
        })
    };
    let rows = match slot {
        Some(s) => conn
            .prepare_cached(&format!("{sql} WHERE f.slot = ?1"))?
            .query_map([s], map)?
            .collect::<rusqlite::Result<Vec<_>>>()?,
        None => conn
            .prepare_cached(sql)?
            .query_map([], map)?
            .collect::<rusqlite::Result<Vec<_>>>()?,
    };
    Ok(rows)
}

/// Whether a bound job is still the slot's work: waiting for it, or
/// running on it. Any other status (held, removed, completed, gone) ended
/// it.
fn still_on(status: Option<i64>) -> bool {
    matches!(
        status.and_then(JobStatus::from_code),
        Some(
            JobStatus::Idle
                | JobStatus::Running
                | JobStatus::Suspended
                | JobStatus::TransferringOutput
        )
    )
}

/// Whether `id` is a fetched job (bound to a slot).
/// Every fetched job's id (one read; empty where no slot fetches work).
pub fn fetched_ids(conn: &Connection) -> Result<HashSet<JobId>, QueueError> {
    let mut st = conn.prepare_cached("SELECT cluster, proc FROM fetch_jobs")?;
    let ids = st
        .query_map([], |r| {
            Ok(JobId {
                cluster: r.get(0)?,
                proc: r.get(1)?,
            })
        })?
        .collect::<Result<HashSet<_>, _>>()?;
    Ok(ids)
}

pub fn is_fetched(conn: &Connection, id: JobId) -> Result<bool, QueueError> {
    let mut st = conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM fetch_jobs WHERE cluster = ?1 AND proc = ?2)",
    )?;
    Ok(st.query_row([id.cluster, id.proc], |r| r.get(0))?)
}

/// The binding of fetched job `id`, if it has one.
pub fn binding(conn: &Connection, id: JobId) -> Result<Option<Bound>, QueueError> {
    if !is_fetched(conn, id)? {
        return Ok(None);
    }
    Ok(bound_rows(conn, None)?.into_iter().find(|b| b.id == id))
}

/// Every job bound to a slot by a fetch, and its keyword.
pub fn fetched_jobs(conn: &Connection) -> Result<Vec<(JobId, String)>, QueueError> {
    Ok(bound_rows(conn, None)?
        .into_iter()
        .map(|b| (b.id, b.keyword))
        .collect())
}

/// Drops the fetched jobs from rows the matchmaking looks at: they run only
/// on the slot that fetched them.
pub fn without_bound(
    q: &Queue,
    rows: Vec<crate::queue::JobRow>,
) -> Result<Vec<crate::queue::JobRow>, QueueError> {
    let bound: HashSet<JobId> = bound_rows(q.conn(), None)?
        .into_iter()
        .map(|b| b.id)
        .collect();
    if bound.is_empty() {
        return Ok(rows);
    }
    Ok(rows
        .into_iter()
        .filter(|r| !bound.contains(&r.id))
        .collect())
}

/// Claims, in one transaction, the slot of every idle fetched job whose
/// slot is free: a static slot Unclaimed, a partitionable slot with room
/// for its requests (a dynamic slot is carved). The claim id is the one
/// REPLY_FETCH was told. A job whose slot is busy (its current job being
/// preempted by RANK) waits for the next pass.
pub fn claim_bound(
    q: &mut Queue,
    spool: &Path,
    machine: &Machine,
    uid_domain: &str,
    now: i64,
) -> Result<Vec<launch::Claim>, NegotiatorError> {
    let waiting: Vec<Bound> = bound_rows(q.conn(), None)?
        .into_iter()
        .filter(|b| b.status == Some(JobStatus::Idle.code()))
        .collect();
    if waiting.is_empty() {
        return Ok(Vec::new());
    }
    let mut locked = Vec::new();
    for b in waiting {
        // As in launch::claim: a refused lock leaves its job waiting.
        match joblock::try_acquire(spool, b.id) {
            Ok(Some(l)) => locked.push((b, l)),
            Ok(None) => {}
            Err(e) => eprintln!("tern_negotiate: job {} not started: {e}", b.id),
        }
    }
    let host = machine.host.clone();
    let claims = q.write(now, |w| {
        let mut claims = Vec::new();
        for (b, lock) in locked {
            let Some(row) = w.row(b.id)? else { continue };
            if row.status() != Some(JobStatus::Idle) {
                continue;
            }
            let Some(slot) = machine::load_slot(w.conn(), &b.slot)? else {
                continue;
            };
            let ad = Rc::new(w.full_ad(&row)?);
            let slot = match slot.kind {
                SlotKind::Partitionable => {
                    let sad = Rc::new(machine::slot_ad(machine, &slot, now));
                    let (c, m, d) = matchmaking::requests(&ad, &sad);
                    let (c, m, d) = matchmaking::quantize(c, m, d);
                    if c > slot.cpus || m > slot.memory || d > slot.disk {
                        continue;
                    }
                    machine::carve_dynamic(w.conn(), &slot.name, c, m, d, now)?
                }
                _ if slot.state == "Unclaimed" => slot,
                _ => continue,
            };
            let info = machine::ClaimInfo {
                remote_user: matchmaking::submitter_of_job(&ad, &row.owner, uid_domain),
                remote_owner: row.owner.clone(),
                cluster: b.id.cluster,
                proc: b.id.proc,
                claim: b.claim.clone(),
                job_start: now,
            };
            machine::set_claim(w.conn(), &slot.name, "Claimed", "Busy", &info, now)?;
            let set = launch::claim_attrs(&ad, &slot.name, &host, now, &[]);
            w.change(&row, &ad, &Change::Set(set))?;
            claims.push(launch::Claim {
                id: b.id,
                slot: slot.name.clone(),
                claim: b.claim.clone(),
                lock,
            });
        }
        Ok(claims)
    })?;
    Ok(claims)
}

/// A slot due to fetch, with what the fetcher needs about it.
#[derive(Clone, Debug)]
pub struct Due {
    pub slot: SlotRow,
    pub hooks: Hooks,
    /// Its fetched jobs that ended since its last fetch: their claim is
    /// evicted (EVICT_CLAIM) unless the fetch brings more work.
    pub ended: Vec<Bound>,
    /// The job running on it now (a static slot), whose RANK a fetched
    /// job must beat.
    pub current: Option<JobId>,
}

/// A slot's ad as the fetch hooks see it: the pass's slot ad with the
/// fetch attributes HTCondor's startd publishes.
pub fn fetch_slot_ad(
    machine: &Machine,
    row: &SlotRow,
    st: Option<&FetchState>,
    delay: Option<i64>,
    now: i64,
) -> ClassAd {
    let mut ad = machine::slot_ad(machine, row, now);
    publish(&mut ad, st, delay);
    ad
}

/// LastFetchWorkSpawned, LastFetchWorkCompleted and NextFetchWorkDelay as
/// HTCondor's startd publishes them, and tern's FetchWorkResult,
/// FetchWorkError and FetchWorkErrorTime (the last failure, which stays
/// until a fetch succeeds).
pub fn publish(ad: &mut ClassAd, st: Option<&FetchState>, delay: Option<i64>) {
    let st = st.cloned().unwrap_or_default();
    ad.insert("LastFetchWorkSpawned", Expr::int(st.spawned.unwrap_or(0)));
    ad.insert(
        "LastFetchWorkCompleted",
        Expr::int(st.completed.unwrap_or(0)),
    );
    ad.insert("NextFetchWorkDelay", Expr::int(delay.unwrap_or(-1)));
    if !st.keyword.is_empty() {
        ad.insert("FetchWorkKeyword", Expr::string(&st.keyword));
    }
    if !st.result.is_empty() {
        ad.insert("FetchWorkResult", Expr::string(&st.result));
    }
    if let Some(e) = &st.error {
        ad.insert("FetchWorkError", Expr::string(e));
        ad.insert("FetchWorkErrorTime", Expr::int(st.error_time.unwrap_or(0)));
    }
}

/// FetchWorkDelay for a slot: the knob evaluated with the slot as MY and
/// its current job (if any) as TARGET; undefined or not a number is 300.
pub fn delay(
    cfg: &Config,
    slot_ad: &ClassAd,
    job: Option<&ClassAd>,
) -> Result<i64, NegotiatorError> {
    let Some(text) = cfg.get("FETCHWORKDELAY")? else {
        return Ok(DEFAULT_DELAY);
    };
    let e = crate::classad::parse_expr(&text).map_err(|e| crate::config::ConfigError::Expand {
        name: "FetchWorkDelay".into(),
        msg: format!("'{text}' is not a ClassAd expression: {e}"),
    })?;
    let mut me = slot_ad.clone();
    me.insert("FetchWorkDelay", e);
    let ctx = MatchContext::new(Rc::new(me), Rc::new(job.cloned().unwrap_or_default()));
    Ok(
        match ctx.eval_left(&mut Evaluator::new(), "fetchworkdelay") {
            Value::Int(i) => i,
            Value::Real(r) => r as i64,
            _ => DEFAULT_DELAY,
        },
    )
}

/// Whether any slot of the layout has a fetch hook: the pass's one cost
/// when none is configured.
pub fn configured(cfg: &Config, machine: &Machine) -> Result<bool, NegotiatorError> {
    for s in &machine.layout {
        if hooks(cfg, s.slot_id)?.is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The slots due to fetch now (spec 8.1): a static or partitionable slot
/// with a fetch hook, whose START is not false on its own, with no fetched
/// job waiting for it, with room (a partitionable slot), and whose last
/// fetch completed FetchWorkDelay ago or longer, or before its job ended
/// (a fetch at once when a slot's job exits).
pub fn due_slots(
    cfg: &Config,
    q: &Queue,
    machine: &Machine,
    now: i64,
) -> Result<Vec<Due>, NegotiatorError> {
    let mut due = Vec::new();
    for row in machine::load_slots(q.conn())? {
        if row.kind == SlotKind::Dynamic {
            continue;
        }
        let Some(hooks) = hooks(cfg, row.slot_id)? else {
            continue;
        };
        let bound = bound_rows(q.conn(), Some(&row.name))?;
        if bound
            .iter()
            .any(|b| b.status == Some(JobStatus::Idle.code()))
        {
            continue;
        }
        if row.kind == SlotKind::Partitionable && row.cpus <= 0 {
            continue;
        }
        let ad = machine::slot_ad(machine, &row, now);
        let alone = MatchContext::new(Rc::new(ad.clone()), Rc::new(ClassAd::new()));
        if matches!(
            alone.eval_left(&mut Evaluator::new(), "start"),
            Value::Bool(false)
        ) {
            continue;
        }
        let current = current_job(q, &row)?;
        let st = state(q.conn(), &row.name)?;
        let ended: Vec<Bound> = bound.into_iter().filter(|b| !still_on(b.status)).collect();
        let is_due = match st.as_ref().and_then(|s| s.completed) {
            None => true,
            Some(done) => {
                let job_ad = match current {
                    Some(id) => q.row(id)?.map(|r| q.full_ad(&r)).transpose()?,
                    None => None,
                };
                let wait = delay(cfg, &ad, job_ad.as_ref())?;
                !ended.is_empty()
                    || (row.kind == SlotKind::Static
                        && row.state == "Unclaimed"
                        && row.entered_state > done)
                    || done > now
                    || now - done >= wait
            }
        };
        if is_due {
            due.push(Due {
                slot: row,
                hooks,
                ended,
                current,
            });
        }
    }
    Ok(due)
}

/// The job running on a static slot now, if any (a lingering claim's job
/// has ended and does not count).
fn current_job(q: &Queue, row: &SlotRow) -> Result<Option<JobId>, QueueError> {
    let (Some(cluster), Some(proc)) = (row.cluster, row.proc) else {
        return Ok(None);
    };
    if row.kind != SlotKind::Static || row.state != "Claimed" {
        return Ok(None);
    }
    let id = JobId { cluster, proc };
    Ok(match q.row(id)? {
        Some(r) if still_on(Some(r.status)) && r.status != JobStatus::Idle.code() => Some(id),
        _ => None,
    })
}

/// After the pass: starts `tern_fetchwork` when a slot is due and none
/// runs; with one running, leaves it the mark to look again. Returns
/// whether it started one.
pub fn start_when_due(
    cfg: &Config,
    spool: &Path,
    q: &Queue,
    machine: &Machine,
    now: i64,
) -> Result<bool, NegotiatorError> {
    if !configured(cfg, machine)? || due_slots(cfg, q, machine, now)?.is_empty() {
        return Ok(false);
    }
    let dir = hooks_dir(spool);
    std::fs::create_dir_all(&dir).map_err(super::io(format!("cannot create {}", dir.display())))?;
    let lock = crate::sys::fs::spool_lock_file(&lock_path(spool))
        .map_err(super::io("cannot open the fetch-work lock"))?;
    if lock.try_lock().is_err() {
        crate::sys::fs::spool_lock_file(&wanted_path(spool))
            .map_err(super::io("cannot leave the fetch-wanted mark"))?;
        // The holder may have looked for marks just before we made ours:
        // then it is gone or going, and the lock is free.
        if lock.try_lock().is_err() {
            return Ok(false);
        }
    }
    drop(lock);
    // Its errors go to the fetch log with its report.
    let log = crate::sys::fs::spool_log_file(&log_path(spool)).ok();
    let prog = launch::sibling(cfg, None, "tern_fetchwork");
    launch::spawn_detached(&prog, &[], log.as_ref())
        .map_err(super::io(format!("cannot start {}", prog.display())))?;
    Ok(true)
}

/// What `tern_negotiate -dry-run` reports of the fetch-work hooks: the
/// fetched jobs waiting for their slot, and the slots due to fetch.
pub fn dry_run(
    cfg: &Config,
    q: &Queue,
    machine: &Machine,
    now: i64,
) -> Result<Vec<String>, NegotiatorError> {
    let mut lines: Vec<String> = bound_rows(q.conn(), None)?
        .into_iter()
        .filter(|b| b.status == Some(JobStatus::Idle.code()))
        .map(|b| format!("fetched {} waits for {}", b.id, b.slot))
        .collect();
    if configured(cfg, machine)? {
        for d in due_slots(cfg, q, machine, now)? {
            lines.push(format!(
                "fetch due on {} ({})",
                d.slot.name,
                d.hooks.fetch.display()
            ));
        }
    }
    Ok(lines)
}

/// Whether the claim on `slot` belongs to a fetched job: such a claim is
/// not reused for another job when its job ends (the slot fetches again).
pub fn is_fetched_claim(conn: &Connection, slot: &SlotRow) -> Result<bool, QueueError> {
    match (slot.cluster, slot.proc) {
        (Some(cluster), Some(proc)) => is_fetched(conn, JobId { cluster, proc }),
        _ => Ok(false),
    }
}

#[cfg(test)]
mod tests;
