//! Step 2 of a pass: the periodic expressions (PeriodicHold,
//! PeriodicRelease, PeriodicRemove). They are decided outside a
//! transaction (`decide`), then each decision is checked again and carried
//! out inside one (`apply`); a running job's hold or removal becomes a
//! request to its shadow. The expressions themselves are read by
//! [`super::policy`].

use std::path::Path;
use std::rc::Rc;

use super::{NegotiatorError, Report, matchmaking, policy};
use crate::classad::Expr;
use crate::config::Config;
use crate::queue::{Change, JobId, JobRow, Queue, Selection, joblock};
use crate::userlog::{self, Event};
use crate::vocab::{JobStatus, Request};

/// The jobs whose periodic expressions (and cron schedules) a pass
/// evaluates. Every PERIODIC_EXPR_INTERVAL seconds that is every job, as
/// the schedd evaluates them on its timer; in the passes between, only the
/// jobs the transaction log shows changed since the last pass looked, so a
/// pass that follows a submit reads the new jobs rather than the queue.
pub(super) struct Due {
    pub rows: Vec<JobRow>,
    /// Whether `rows` is every job in the queue.
    pub all: bool,
    /// The log position `rows` reflect: the next pass looks after it.
    seq: i64,
    /// The position the last pass recorded, if any.
    since: Option<i64>,
}

/// Which jobs are due (see [`Due`]); `force` (`-reconfig`) makes it every
/// job. An interval of 0 or less evaluates every job in every pass; a
/// clock set back, a first pass and a log trimmed past the last position
/// do too.
pub(super) fn due(cfg: &Config, q: &Queue, now: i64, force: bool) -> Result<Due, NegotiatorError> {
    let interval = cfg.get_int("PERIODIC_EXPR_INTERVAL", 60)?;
    // Read before the rows: a change made while they are read is looked
    // at again by the next pass, never missed.
    let seq = q.log_end()?;
    let since = q.meta("periodic_seq")?;
    if let (Some(at), Some(since)) = (q.meta("periodic_at")?, since)
        && !force
        && interval > 0
        && at <= now
        && now - at < interval
        && let Some(rows) = q.rows_changed_since(since)?
    {
        return Ok(Due {
            rows,
            all: false,
            seq,
            since: Some(since),
        });
    }
    Ok(Due {
        rows: q.rows(&Selection::default())?,
        all: true,
        seq,
        since,
    })
}

impl Due {
    /// The rows read again after the periodic step changed jobs: each as
    /// it is now, the jobs that left the queue dropped.
    pub(super) fn refresh(&mut self, q: &Queue) -> Result<(), NegotiatorError> {
        self.rows = if self.all {
            q.rows(&Selection::default())?
        } else {
            let mut rows = Vec::with_capacity(self.rows.len());
            for r in &self.rows {
                rows.extend(q.row(r.id)?);
            }
            rows
        };
        Ok(())
    }
}

/// Records how far the pass looked, at its end: the pass's own changes
/// (a claim, a rejection noted in the job) are not changes the next pass
/// must evaluate again, another tool's changes are.
/// A pass that found nothing new writes nothing.
pub(super) fn record(q: &mut Queue, due: &Due, now: i64) -> Result<(), NegotiatorError> {
    let seq = q.seen_through(due.seq);
    if !due.all && due.since == Some(seq) {
        return Ok(());
    }
    q.write(now, |w| {
        w.set_meta("periodic_seq", seq)?;
        if due.all {
            w.set_meta("periodic_at", now)?;
        }
        Ok(())
    })?;
    Ok(())
}

/// Step 2: PeriodicHold, PeriodicRelease and PeriodicRemove of every job
/// that has them. A running job's hold or removal is a request to its
/// shadow, which stops the job and writes the event.
/// Returns whether it changed any job.
pub(super) fn periodic(
    q: &mut Queue,
    rows: &[JobRow],
    spool: &Path,
    now: i64,
    dry: bool,
    report: &mut Report,
    events: &mut Vec<(crate::userlog::UserLog, Event)>,
) -> Result<bool, NegotiatorError> {
    let left = leave_released(q, rows, spool, now, dry, report)?;
    let decided = decide(q, rows, spool)?;
    if decided.is_empty() {
        return Ok(left);
    }
    for (id, a) in &decided {
        report.lines.push(match a {
            policy::Action::Hold { reason, .. } => format!("hold {id} {reason}"),
            policy::Action::Release { reason } => format!("release {id} {reason}"),
            policy::Action::Remove { reason } => format!("remove {id} {reason}"),
            policy::Action::Vacate { reason } => format!("vacate {id} {reason}"),
        });
    }
    if dry {
        return Ok(false);
    }
    apply(q, &decided, spool, now, events)?;
    Ok(true)
}

/// The Completed and Removed jobs nothing runs whose LeaveJobInQueue is no
/// longer true leave the queue (into the history), as the schedd's
/// DestroyProc retried on its periodic timer lets them go. Returns whether
/// any left.
fn leave_released(
    q: &mut Queue,
    rows: &[JobRow],
    spool: &Path,
    now: i64,
    dry: bool,
    report: &mut Report,
) -> Result<bool, NegotiatorError> {
    let mut leaving = Vec::new();
    for row in rows {
        if !matches!(
            row.status(),
            Some(JobStatus::Completed | JobStatus::Removed)
        ) || joblock::is_held(spool, row.id)
        {
            continue;
        }
        // A job the router or a gridmanager manages leaves when its manager
        // lets it go (Managed = "ScheddDone"), not before: a routed source
        // mirrors Completed before the router has finalized and yielded it.
        let ad = Rc::new(q.full_ad(row)?);
        if policy::kept_job_may_leave(&ad, row.status())
            && !super::gridjobs::awaits_gridmanager(&ad, row.status())
            && !policy::managed_externally(&ad)
        {
            leaving.push(row.id);
        }
    }
    if leaving.is_empty() {
        return Ok(false);
    }
    // A job on a claimed slot is its shadow's (or, if that is gone, the
    // next reconcile's) to finish.
    let slots = crate::machine::load_slots(q.conn())?;
    leaving.retain(|id| {
        !slots
            .iter()
            .any(|s| s.cluster == Some(id.cluster) && s.proc == Some(id.proc))
    });
    if leaving.is_empty() {
        return Ok(false);
    }
    for id in &leaving {
        report
            .lines
            .push(format!("leave {id} (LeaveJobInQueue is no longer true)"));
    }
    if dry {
        return Ok(false);
    }
    q.write(now, |w| {
        for id in &leaving {
            let Some(row) = w.row(*id)? else { continue };
            let ad = Rc::new(w.full_ad(&row)?);
            // Checked again inside the transaction.
            if policy::kept_job_may_leave(&ad, row.status())
                && !super::gridjobs::awaits_gridmanager(&ad, row.status())
            {
                w.change(&row, &ad, &Change::Leave { set: Vec::new() })?;
            }
        }
        Ok(())
    })?;
    Ok(true)
}

/// What the periodic expressions decide for each job, read outside a
/// transaction. Only jobs whose cluster or own differences have a
/// periodic expression are evaluated.
fn decide(
    q: &Queue,
    rows: &[JobRow],
    spool: &Path,
) -> Result<Vec<(JobId, policy::Action)>, NegotiatorError> {
    let mut decided: Vec<(JobId, policy::Action)> = Vec::new();
    let mut cluster_fires: rustc_hash::FxHashMap<i64, bool> = rustc_hash::FxHashMap::default();
    for row in rows {
        if !matches!(
            row.status(),
            Some(JobStatus::Idle | JobStatus::Running | JobStatus::Held | JobStatus::Suspended)
        ) {
            continue;
        }
        let fires = match cluster_fires.get(&row.id.cluster) {
            Some(f) => *f,
            None => {
                let cad = q.cluster_ad(row.id.cluster)?;
                let f = [
                    "PeriodicHold",
                    "PeriodicRelease",
                    "PeriodicRemove",
                    "PeriodicVacate",
                ]
                .iter()
                .any(|n| policy::may_fire(&cad, n));
                cluster_fires.insert(row.id.cluster, f);
                f
            }
        };
        let any =
            fires || (row.diff.len() > 4 && matchmaking::contains_lower(&row.diff, b"periodic"));
        if !any {
            continue;
        }
        let ad = Rc::new(q.full_ad(row)?);
        if let Some(a) = policy::periodic(&ad, row.status()) {
            // A job held while running is held for good only when its
            // shadow has stopped it; releasing it earlier would cross the
            // shadow's hold.
            if matches!(a, policy::Action::Release { .. }) && joblock::is_held(spool, row.id) {
                continue;
            }
            decided.push((row.id, a));
        }
    }
    Ok(decided)
}

/// Carries out the periodic decisions, each checked again inside the
/// transaction. A running job's hold or removal is a request to its
/// shadow, which is woken; other changes are logged here.
fn apply(
    q: &mut Queue,
    decided: &[(JobId, policy::Action)],
    spool: &Path,
    now: i64,
    events: &mut Vec<(crate::userlog::UserLog, Event)>,
) -> Result<(), NegotiatorError> {
    let mut wake: Vec<JobId> = Vec::new();
    let mut logged: Vec<(crate::userlog::UserLog, Event)> = Vec::new();
    q.write(now, |w| {
        for (id, action) in decided {
            let Some(row) = w.row(*id)? else { continue };
            let ad = Rc::new(w.full_ad(&row)?);
            // Decided on the ad read before this transaction: check again.
            if policy::periodic(&ad, row.status()).as_ref() != Some(action) {
                continue;
            }
            // A grid job has no shadow: its gridmanager stops it.
            let grid = super::gridjobs::is_grid_ad(&ad);
            let running = matches!(
                row.status(),
                Some(JobStatus::Running | JobStatus::Suspended)
            ) && !grid;
            let path = userlog::user_log(&ad);
            // A job held while it ran, and released, whose shadow is still
            // stopping it: what that stop owes the log comes first, as for
            // a tool's hold or removal (policy::owed_by_a_hold_stop).
            let (owed, deferred) = match action {
                _ if running || grid || path.is_none() => (Vec::new(), false),
                policy::Action::Hold { .. } => {
                    policy::owed_by_a_hold_stop(w, *id, row.status(), &ad, policy::Step::Hold)?
                }
                policy::Action::Remove { .. } => {
                    policy::owed_by_a_hold_stop(w, *id, row.status(), &ad, policy::Step::Remove)?
                }
                policy::Action::Release { .. } | policy::Action::Vacate { .. } => {
                    (Vec::new(), false)
                }
            };
            let mut log = |e: Event| {
                if let Some(p) = &path {
                    logged.push((p.clone(), e));
                }
            };
            owed.into_iter().for_each(&mut log);
            match action {
                policy::Action::Hold {
                    reason,
                    code,
                    subcode,
                } => {
                    let mut set = vec![
                        ("HoldReason".to_string(), Expr::string(reason)),
                        ("HoldReasonCode".to_string(), Expr::int(*code)),
                        ("HoldReasonSubCode".to_string(), Expr::int(*subcode)),
                        ("JobStatus".to_string(), JobStatus::Held.expr()),
                    ];
                    let n = ad.eval_int("NumHolds").unwrap_or(0);
                    set.push(("NumHolds".into(), Expr::int(n + 1)));
                    w.change(&row, &ad, &Change::Set(set))?;
                    // A routed job's copy is stopped by the router, which
                    // sees it held: no shadow would take a request.
                    if running && !policy::managed_externally(&ad) {
                        w.request(*id, Request::Hold)?;
                        wake.push(*id);
                    } else if !deferred {
                        log(Event::held(*id, reason, *code, *subcode));
                    }
                }
                policy::Action::Release { reason } => {
                    w.change(&row, &ad, &policy::release(&ad, reason))?;
                    log(Event::released(*id, reason));
                }
                policy::Action::Remove { reason } => {
                    if running {
                        let set = vec![
                            ("RemoveReason".to_string(), Expr::string(reason)),
                            ("JobStatus".to_string(), JobStatus::Removed.expr()),
                        ];
                        w.change(&row, &ad, &Change::Set(set))?;
                        // A routed job has no shadow here: it is aborted
                        // now and stays until the router has removed its
                        // copy (as tern_rm leaves it).
                        if policy::managed_externally(&ad) {
                            log(Event::aborted(*id, reason));
                        } else {
                            w.request(*id, Request::Remove)?;
                            wake.push(*id);
                        }
                    } else {
                        let mut c = policy::remove(&ad, now, reason, false);
                        // Kept until its gridmanager has cancelled the
                        // remote job.
                        if let (true, Change::Leave { set }) =
                            (grid && policy::managed_externally(&ad), &c)
                        {
                            c = Change::Set(set.clone());
                        }
                        w.change(&row, &ad, &c)?;
                        log(Event::aborted(*id, reason));
                    }
                }
                // The job's shadow stops it and requeues it with the
                // reason; a grid or routed job is left alone (HTCondor's
                // gridmanager and router ignore a periodic vacate), and so
                // is a job that already asked its shadow for this.
                policy::Action::Vacate { .. } => {
                    if running
                        && !policy::managed_externally(&ad)
                        && !w.requests(*id)?.contains(&Request::PolicyVacate)
                    {
                        w.request(*id, Request::PolicyVacate)?;
                        wake.push(*id);
                    }
                }
            }
        }
        Ok(())
    })?;
    events.extend(logged);
    for id in wake {
        joblock::wake(spool, id);
    }
    Ok(())
}
