//! CronTab jobs in the pass: each idle cron job's next DeferralTime, as the
//! schedd's `calculateCronTabSchedules` computes it (spec 1.5). A job gets
//! a new time when it has none, when its old time and window have passed,
//! when a run or a missed time asked for one (`CronRecompute`), when a
//! later time of its schedule has come as well (it runs once, for the
//! latest), and for every idle cron job on `tern_negotiate -reconfig`. The time is the next
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

/// The rows without the cron jobs marked for their next time: one that
/// came back from a run after this pass gave out times waits for the next
/// pass, whose DeferralTime it still has the run's own (with a window, the
/// match would run it again for the same time).
pub fn without_marked(q: &Queue, rows: Vec<JobRow>) -> Result<Vec<JobRow>, QueueError> {
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let maybe =
            row.diff.len() > 4 && super::matchmaking::contains_lower(&row.diff, b"cronrecompute");
        if maybe && Rc::new(q.full_ad(&row)?).eval(RECOMPUTE).is_true() {
            continue;
        }
        out.push(row);
    }
    Ok(out)
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
        out.extend(decide_one(&ad, row.id, now, force));
    }
    Ok(out)
}

/// Applies the decisions in one transaction; the holds' events are added
/// to `events`.
pub fn apply(
    q: &mut Queue,
    decisions: &[Decision],
    now: i64,
    force: bool,
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
            // Decided again on the job as it is now: another pass or a
            // shadow may have changed it since it was read (a cron job
            // that ran for the time read is marked for its next one).
            let Some(d) = decide_one(&ad, id, now, force) else {
                continue;
            };
            match &d {
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

/// The decision for one idle job's ad, if it needs one.
fn decide_one(ad: &Rc<ClassAd>, id: JobId, now: i64, force: bool) -> Option<Decision> {
    if !policy::is_cron(ad) {
        return None;
    }
    let sched = match schedule(ad) {
        Ok(s) => s,
        Err(e) => return Some(Decision::Invalid(id, e)),
    };
    let old = ad.eval_int("DeferralTime");
    let window = ad.eval_int("DeferralWindow").unwrap_or(0);
    let marked = ad.eval(RECOMPUTE).is_true();
    let due = match old {
        None => true,
        Some(t) => now > t + window,
    };
    // A later time of the schedule has come too (the job waited past a
    // minute, or the clock jumped): it runs once, for the latest, as cron
    // runs a missed job once, not for the old time and then again at once
    // for the new one.
    let superseded = old.is_some_and(|t| {
        t < now
            && sched
                .next_after(t, &chrono::Local)
                .is_some_and(|n| n <= now)
    });
    if !(force || marked || due || superseded) {
        return None;
    }
    let next = match old {
        Some(t) if (marked || due || superseded) && !force => next_time(&sched, t, now, window),
        _ => sched.next_after(now, &chrono::Local),
    };
    match next {
        Some(t) if old != Some(t) || marked => Some(Decision::Schedule(id, t)),
        Some(_) => None,
        None => Some(Decision::Invalid(
            id,
            "the schedule matches no time in the next years".into(),
        )),
    }
}

/// A cron job's next time after a run, or after it missed its time `old`:
/// the latest time of the schedule after `old` that can still start now
/// (within `window` seconds of it), else the first after now. A pass that
/// comes at the very minute of the next time (cron's every minute) does not
/// skip it, and a job that missed many times (the clock jumped) runs once,
/// for the latest. With no window it is the first after now, as the schedd
/// computes it.
fn next_time(sched: &crate::cron::Schedule, old: i64, now: i64, window: i64) -> Option<i64> {
    let tz = &chrono::Local;
    if window > 0 {
        let mut found = None;
        // After `old`, and at or after `now - window` (the earliest time
        // that can still start now).
        let mut t = old.max(now - window - 1);
        // At most a window's worth of minutes; bounded all the same.
        for _ in 0..100_000 {
            match sched.next_after(t, tz) {
                Some(n) if n <= now => {
                    found = Some(n);
                    t = n;
                }
                _ => break,
            }
        }
        if found.is_some() {
            return found;
        }
    }
    sched.next_after(now, tz)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2023-11-14 22:14:00 UTC, a minute boundary.
    const T: i64 = 1_700_000_040;

    fn cron_job(deferral: i64, window: i64, marked: bool) -> Rc<ClassAd> {
        let text = format!(
            "[CronMinute = \"*\"; DeferralTime = {deferral}; DeferralWindow = {window}; {}]",
            if marked { "CronRecompute = true" } else { "" }
        );
        Rc::new(crate::classad::parse_ad(&text).unwrap())
    }

    fn decided(ad: &Rc<ClassAd>, now: i64) -> Option<i64> {
        let id = JobId {
            cluster: 1,
            proc: 0,
        };
        match decide_one(ad, id, now, false) {
            Some(Decision::Schedule(_, t)) => Some(t),
            Some(Decision::Invalid(_, why)) => panic!("invalid: {why}"),
            None => None,
        }
    }

    #[test]
    fn a_job_waiting_for_its_time_keeps_it() {
        // Its time has come, no later one: it runs for it.
        assert_eq!(decided(&cron_job(T, 3600, false), T), None);
        assert_eq!(decided(&cron_job(T, 3600, false), T + 59), None);
        // Not yet come.
        assert_eq!(decided(&cron_job(T + 60, 3600, false), T), None);
    }

    #[test]
    fn a_cron_job_whose_later_time_has_come_runs_once_for_the_latest() {
        // Found a minute late (its lock was held at its minute): the new
        // minute, not the missed one and then the new one.
        assert_eq!(decided(&cron_job(T, 3600, false), T + 60), Some(T + 60));
        // The clock jumped a day ahead, within a two-day window: once, for
        // the latest time.
        let day = 86_400;
        assert_eq!(
            decided(&cron_job(T, 2 * day, false), T + day + 30),
            Some(T + day)
        );
        // Past its window: the latest time the window allows.
        assert_eq!(decided(&cron_job(T, 30, false), T + 90), Some(T + 60));
    }

    #[test]
    fn a_run_asks_for_the_next_time_after_now_or_the_one_come_meanwhile() {
        // Ran at its minute: the next minute.
        assert_eq!(decided(&cron_job(T, 3600, true), T), Some(T + 60));
        // Ran late, into the next minute: that minute, within the window.
        assert_eq!(decided(&cron_job(T, 3600, true), T + 70), Some(T + 60));
        // Without a window: the first after now.
        assert_eq!(decided(&cron_job(T, 0, true), T + 70), Some(T + 120));
    }
}
