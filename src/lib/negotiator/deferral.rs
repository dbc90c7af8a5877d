//! CronTab jobs in the pass: each idle cron job's next DeferralTime, as the
//! schedd's `calculateCronTabSchedules` computes it (spec 1.5). A job gets
//! a new time when it has none, when its old time and window have passed,
//! when a run or a missed time asked for one (`CronRecompute`), and for
//! every idle cron job on `tern_negotiate -reconfig`. The time is the next
//! matching minute strictly after now, in local time (TZ). A schedule that
//! does not parse (a bad value that arrived by tern_qedit) holds the job
//! with HoldReasonCode 25.

use std::rc::Rc;

use super::policy::{self, CRON_ATTRS, RECOMPUTE};
use crate::classad::{ClassAd, Expr, Value};
use crate::queue::{Change, JobId, JobRow, Queue, QueueError};
use crate::userlog::Event;
use crate::vocab::JobStatus;

/// A decision for one job.
pub enum Decision {
    Schedule(JobId, i64),
    Invalid(JobId, String),
}

/// The five fields of a cron job (a field that is not a string counts as
/// `*`, as HTCondor reads them with LookupString).
pub fn fields(ad: &ClassAd) -> [Option<String>; 5] {
    CRON_ATTRS.map(|n| match ad.get(n).and_then(|e| e.literal_value()) {
        Some(Value::Str(s)) => Some(s.to_string()),
        _ => None,
    })
}

/// Parses a job's schedule; the error names the attribute.
pub fn schedule(ad: &ClassAd) -> Result<crate::cron::Schedule, String> {
    let f = fields(ad);
    let refs: [Option<&str>; 5] = [
        f[0].as_deref(),
        f[1].as_deref(),
        f[2].as_deref(),
        f[3].as_deref(),
        f[4].as_deref(),
    ];
    crate::cron::Schedule::parse(refs).map_err(|e| e.to_string())
}

/// Decides the new times (changes nothing).
pub fn decide(
    q: &Queue,
    rows: &[JobRow],
    now: i64,
    force: bool,
) -> Result<Vec<Decision>, QueueError> {
    let mut out = Vec::new();
    let mut cron_cluster: rustc_hash::FxHashMap<i64, bool> = rustc_hash::FxHashMap::default();
    for row in rows {
        if row.status() != Some(JobStatus::Idle) {
            continue;
        }
        let cluster_cron = match cron_cluster.get(&row.id.cluster) {
            Some(c) => *c,
            None => {
                let c = policy::is_cron(&*q.cluster_ad(row.id.cluster)?);
                cron_cluster.insert(row.id.cluster, c);
                c
            }
        };
        let diff_cron =
            row.diff.len() > 4 && super::matchmaking::contains_lower(&row.diff, b"cron");
        if !cluster_cron && !diff_cron {
            continue;
        }
        let ad = Rc::new(q.full_ad(row)?);
        if !policy::is_cron(&ad) {
            continue;
        }
        let sched = match schedule(&ad) {
            Ok(s) => s,
            Err(e) => {
                out.push(Decision::Invalid(row.id, e));
                continue;
            }
        };
        let old = ad.eval_int("DeferralTime");
        let window = ad.eval_int("DeferralWindow").unwrap_or(0);
        let marked = ad.eval(RECOMPUTE).is_true();
        let due = match old {
            None => true,
            Some(t) => now > t + window,
        };
        if !(force || marked || due) {
            continue;
        }
        match sched.next_after(now, &chrono::Local) {
            Some(t) => {
                if old != Some(t) || marked {
                    out.push(Decision::Schedule(row.id, t));
                }
            }
            None => out.push(Decision::Invalid(
                row.id,
                "the schedule matches no time in the next years".into(),
            )),
        }
    }
    Ok(out)
}

/// Applies the decisions in one transaction; the holds' events are added
/// to `events`.
pub fn apply(
    q: &mut Queue,
    decisions: &[Decision],
    now: i64,
    events: &mut Vec<(crate::userlog::UserLog, Event)>,
) -> Result<(), QueueError> {
    if decisions.is_empty() {
        return Ok(());
    }
    q.write(now, |w| {
        for d in decisions {
            let id = match d {
                Decision::Schedule(id, _) | Decision::Invalid(id, _) => *id,
            };
            let Some(row) = w.row(id)? else { continue };
            if row.status() != Some(JobStatus::Idle) {
                continue;
            }
            let ad = Rc::new(w.full_ad(&row)?);
            match d {
                Decision::Schedule(_, t) => {
                    let delete = if ad.contains(RECOMPUTE) {
                        vec![RECOMPUTE.to_string()]
                    } else {
                        Vec::new()
                    };
                    w.change(
                        &row,
                        &ad,
                        &Change::Update {
                            set: vec![("DeferralTime".into(), Expr::int(*t))],
                            delete,
                        },
                    )?;
                }
                Decision::Invalid(_, why) => {
                    let reason = format!("Invalid cron schedule parameters: {why}");
                    let code = crate::vocab::hold_code::INVALID_CRON_SETTINGS;
                    w.change(&row, &ad, &policy::hold(&ad, now, &reason, code, 0, false))?;
                    if let Some(p) = crate::userlog::user_log(&ad) {
                        events.push((p, Event::held(id, &reason, code, 0)));
                    }
                }
            }
        }
        Ok(())
    })
}

/// `tern_negotiate -reconfig`: every job's ScheddInterval becomes
/// SCHEDD_INTERVAL.
pub fn rewrite_schedd_interval(
    q: &mut Queue,
    interval: i64,
    now: i64,
) -> Result<usize, QueueError> {
    let rows = q.rows(&crate::queue::Selection::default())?;
    let mut stale: Vec<JobId> = Vec::new();
    for row in &rows {
        let ad = Rc::new(q.full_ad(row)?);
        if ad.contains("ScheddInterval") && ad.eval_int("ScheddInterval") != Some(interval) {
            stale.push(row.id);
        }
    }
    if stale.is_empty() {
        return Ok(0);
    }
    q.write(now, |w| {
        for id in &stale {
            let Some(row) = w.row(*id)? else { continue };
            let ad = w.full_ad(&row)?;
            w.change(
                &row,
                &ad,
                &Change::Set(vec![("ScheddInterval".into(), Expr::int(interval))]),
            )?;
        }
        Ok(())
    })?;
    Ok(stale.len())
}
