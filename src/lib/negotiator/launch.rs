//! Claims and process start: the claim transaction, starting a shadow per
//! claim, and starting a pass in the background (after a submit, or when a
//! shadow lets its slot go).

use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::NegotiatorError;
use super::matchmaking::{Outcome, Planned, Rejected};
use crate::classad::{Expr, Value};
use crate::config::Config;
use crate::machine::{self, Machine};
use crate::queue::{Change, JobId, Queue, QueueError, Writer, joblock};
use crate::vocab::JobStatus;

/// The "slot" of a scheduler universe job, which runs without one.
pub const SCHEDULER: &str = "scheduler";

/// A committed claim, with the job's lock the shadow inherits.
pub struct Claim {
    pub id: JobId,
    pub slot: String,
    pub claim: String,
    pub lock: joblock::JobLock,
}

/// A fresh claim id: unique across passes and shadows.
pub fn claim_id(now: i64) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}#{}#{}",
        std::process::id(),
        now,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A job's NumShadowStarts (0 before its first claim): each claim counts
/// one.
pub fn shadow_starts(ad: &crate::classad::ClassAd) -> i64 {
    match ad.get("NumShadowStarts").and_then(|e| e.literal_value()) {
        Some(Value::Int(i)) => *i,
        _ => 0,
    }
}

/// The attributes a claim sets on its job: Running, where, the match, and
/// the shadow's start (JobStartDate the first time, JobCurrentStartDate,
/// NumShadowStarts and JobRunCount).
pub fn claim_attrs(
    ad: &crate::classad::ClassAd,
    slot_name: &str,
    host: &str,
    now: i64,
    match_attrs: &[(String, Expr)],
) -> Vec<(String, Expr)> {
    let matches = match ad.get("NumJobMatches").and_then(|e| e.literal_value()) {
        Some(Value::Int(i)) => *i,
        _ => 0,
    };
    let int = |n: &str| match ad.get(n).and_then(|e| e.literal_value()) {
        Some(Value::Int(i)) => Some(*i),
        _ => None,
    };
    let shadow_starts = shadow_starts(ad) + 1;
    let mut set = vec![
        ("JobStatus".to_string(), JobStatus::Running.expr()),
        (
            "RemoteHost".to_string(),
            Expr::string(&format!("{slot_name}@{host}")),
        ),
        ("LastMatchTime".to_string(), Expr::int(now)),
        ("NumJobMatches".to_string(), Expr::int(matches + 1)),
        // The shadow's start, recorded with the claim (schedd's side in
        // HTCondor), so a Running job never shows the previous run's start
        // date. NumJobStarts and JobCurrentStartExecutingDate wait for the
        // job to execute (the shadow's `executing`): a failed exec is no
        // start.
        ("JobCurrentStartDate".to_string(), Expr::int(now)),
        ("NumShadowStarts".to_string(), Expr::int(shadow_starts)),
        ("JobRunCount".to_string(), Expr::int(shadow_starts)),
    ];
    if int("JobStartDate").is_none() {
        set.push(("JobStartDate".into(), Expr::int(now)));
    }
    set.extend(match_attrs.iter().cloned());
    set
}

/// Claims every planned match in one transaction: each job is checked to be
/// idle still and its lock taken first (a shadow reusing its claim may have
/// taken it meanwhile), its slot claimed (carved from the partitionable
/// slot when asked), and the job set Running. Rejections are recorded in
/// the same transaction.
pub fn claim(
    q: &mut Queue,
    spool: &Path,
    machine: &Machine,
    outcome: &Outcome,
    now: i64,
) -> Result<Vec<Claim>, NegotiatorError> {
    let mut locks: Vec<(usize, joblock::JobLock)> = Vec::new();
    for (i, p) in outcome.planned.iter().enumerate() {
        match joblock::try_acquire(spool, p.id) {
            Ok(Some(l)) => locks.push((i, l)),
            Ok(None) => {}
            // A lock that is no plain file of SPOOL's (a link or FIFO
            // planted there) is refused and its job left idle: the rest
            // of the queue still runs, and the refusal is said where the
            // administrator sees it (the journal, cron's mail).
            Err(e) => note!("tern_negotiate: job {} not started: {e}", p.id),
        }
    }
    if locks.is_empty() && outcome.rejected.is_empty() {
        return Ok(Vec::new());
    }
    let host = machine.host.clone();
    let claims = q.write(now, |w| {
        let mut claims = Vec::new();
        for (i, lock) in locks {
            if let Some(c) = claim_one(w, &outcome.planned[i], lock, &host, now)? {
                claims.push(c);
            }
        }
        note_rejections(w, &outcome.rejected, now)?;
        Ok(claims)
    })?;
    Ok(claims)
}

/// Claims the slot of one planned match for its job (its lock taken), in
/// the pass's transaction: `None` when the job is no longer idle or the
/// slot no longer free. A scheduler universe job needs no slot: it starts
/// at once.
fn claim_one(
    w: &mut Writer<'_>,
    p: &Planned,
    lock: joblock::JobLock,
    host: &str,
    now: i64,
) -> Result<Option<Claim>, QueueError> {
    let Some(row) = w.row(p.id)? else {
        return Ok(None);
    };
    if row.status() != Some(JobStatus::Idle) {
        return Ok(None);
    }
    let ad = Rc::new(w.full_ad(&row)?);
    if shadow_starts(&ad) != p.shadow_starts {
        return Ok(None);
    }
    if p.slot == SCHEDULER {
        let set = claim_attrs(&ad, SCHEDULER, host, now, &[]);
        w.change(&row, &ad, &Change::Set(set))?;
        return Ok(Some(Claim {
            id: p.id,
            slot: SCHEDULER.into(),
            claim: claim_id(now),
            lock,
        }));
    }
    let slot = match p.carve {
        Some((c, m, d)) => machine::carve_dynamic(w.conn(), &p.slot, c, m, d, now).map(Some),
        None => machine::load_slot(w.conn(), &p.slot),
    }?;
    let Some(slot) = slot else { return Ok(None) };
    if slot.state != "Unclaimed" {
        return Ok(None);
    }
    let cid = claim_id(now);
    machine::set_claim(
        w.conn(),
        &slot.name,
        "Claimed",
        "Busy",
        &machine::ClaimInfo {
            remote_user: p.submitter.clone(),
            remote_owner: p.owner.clone(),
            cluster: p.id.cluster,
            proc: p.id.proc,
            claim: cid.clone(),
            job_start: now,
        },
        now,
    )?;
    let set = claim_attrs(&ad, &slot.name, host, now, &p.match_attrs);
    w.change(&row, &ad, &Change::Set(set))?;
    Ok(Some(Claim {
        id: p.id,
        slot: slot.name.clone(),
        claim: cid,
        lock,
    }))
}

/// LastRejMatchTime and LastRejMatchReason of the jobs that found no slot.
fn note_rejections(w: &mut Writer<'_>, rejected: &[Rejected], now: i64) -> Result<(), QueueError> {
    for r in rejected {
        let Some(row) = w.row(r.id)? else { continue };
        let ad = w.full_ad(&row)?;
        let set = vec![
            ("LastRejMatchTime".to_string(), Expr::int(now)),
            ("LastRejMatchReason".to_string(), Expr::string(&r.reason)),
        ];
        w.change(&row, &ad, &Change::Set(set))?;
    }
    Ok(())
}

/// A program installed beside the running one (`tern_shadow`,
/// `tern_negotiate`), or the knob's value when set. A set-id process
/// starts it from the installed directory, never from where a user may
/// have copied or linked the program.
pub fn sibling(cfg: &Config, knob: Option<&str>, name: &str) -> PathBuf {
    if let Some(k) = knob
        && let Ok(Some(p)) = cfg.get(k)
    {
        return PathBuf::from(p);
    }
    if let Some(p) = crate::sys::privilege::helper(name) {
        return p;
    }
    match std::env::current_exe() {
        Ok(exe) => match exe.parent() {
            Some(dir) => {
                let p = dir.join(name);
                if p.exists() {
                    return p;
                }
                // Test and bench binaries live one level below the tools.
                if let Some(up) = dir.parent() {
                    let p2 = up.join(name);
                    if p2.exists() {
                        return p2;
                    }
                }
                p
            }
            None => PathBuf::from(name),
        },
        Err(_) => PathBuf::from(name),
    }
}

/// Starts the shadow of a claim, detached in its own session, with the
/// job's lock open as the descriptor named by TERN_SHADOW_LOCK_FD, so the
/// job is never unguarded between the claim and the shadow's start.
pub fn start_shadow(cfg: &Config, spool: &Path, c: Claim) -> Result<(), NegotiatorError> {
    let prog = sibling(cfg, Some("SHADOW"), "tern_shadow");
    let log = shadow_log(spool);
    let fd = c.lock.file.as_raw_fd();
    // The one descriptor the shadow inherits (ours are all close-on-exec).
    // Failure shows as a shadow that finds no lock descriptor.
    let _ = crate::sys::fs::inherit_across_exec(fd);
    let args = [c.id.to_string(), c.slot.clone(), c.claim.clone()];
    let extra = [("TERN_SHADOW_LOCK_FD".to_string(), fd.to_string())];
    let r = crate::sys::spawn(&crate::sys::Spawn {
        exe: &prog,
        args: &args,
        env: None,
        extra_env: &extra,
        dir: None,
        stdio: [None, None, log.as_ref().map(|f| f.as_raw_fd())],
        new_session: true,
        only_stdio: false,
    });
    r.map_err(super::io(format!(
        "cannot start the shadow {}",
        prog.display()
    )))?;
    // Our copy of the lock closes here; the shadow's keeps it held.
    drop(c.lock);
    Ok(())
}

/// Where shadows write what goes wrong outside any job's log.
pub fn shadow_log(spool: &Path) -> Option<std::fs::File> {
    let p = joblock::dir(spool).join("ShadowLog");
    let _ = std::fs::create_dir_all(joblock::dir(spool));
    crate::sys::fs::spool_log_file(&p).ok()
}

/// Starts `tern_negotiate` in the background, detached, and does not wait
/// for it. Failure to start is reported to the caller, who decides whether
/// it matters (cron runs a pass every minute anyway).
pub fn spawn_background_pass(cfg: &Config) -> std::io::Result<()> {
    spawn_detached(&sibling(cfg, None, "tern_negotiate"), &[], None)
}

/// Starts `prog` with `args` in its own session, stdin and stdout on
/// /dev/null and stderr on `err` (or /dev/null), and does not wait for it.
pub fn spawn_detached(
    prog: &Path,
    args: &[String],
    err: Option<&std::fs::File>,
) -> std::io::Result<()> {
    crate::sys::spawn(&crate::sys::Spawn {
        exe: prog,
        args,
        env: None,
        extra_env: &[],
        dir: None,
        stdio: [None, None, err.map(std::os::fd::AsRawFd::as_raw_fd)],
        new_session: true,
        only_stdio: false,
    })
    .map(|_| ())
}

/// Whether a job router pass is wanted: routes are configured and there
/// are idle jobs or jobs the router manages (spec 5.4). The router runs
/// as its own process (`tern_job_router`), which takes its own lock, so
/// two never run at once.
pub fn router_wanted(cfg: &Config, q: &crate::queue::Queue) -> Result<bool, NegotiatorError> {
    if !routes_configured(cfg)? {
        return Ok(false);
    }
    let busy: bool = q
        .conn()
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM procs WHERE status = 1) \
             OR EXISTS (SELECT 1 FROM router_jobs)",
            [],
            |r| r.get(0),
        )
        .map_err(crate::queue::QueueError::from)?;
    Ok(busy)
}

/// Whether the job router has routes (JOB_ROUTER_ROUTE_NAMES, or the
/// deprecated JOB_ROUTER_ENTRIES).
pub fn routes_configured(cfg: &Config) -> Result<bool, NegotiatorError> {
    Ok(!cfg.list_value("JOB_ROUTER_ROUTE_NAMES")?.is_empty()
        || cfg.get_bool("JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES", false)?)
}

/// Starts `tern_job_router` in the background, detached.
pub fn spawn_router(cfg: &Config) -> std::io::Result<()> {
    spawn_detached(&sibling(cfg, None, "tern_job_router"), &[], None)
}
