//! Orphans (spec 5.7): routed copies and managed sources that no row of
//! `router_jobs` accounts for, as a router with HTCondor's in-memory state
//! finds them after a restart. With tern's state in the database they
//! arise only from outside (a restored queue, a row deleted by hand, a
//! copy submitted by another tool with our RoutedBy): a copy whose source
//! is gone is removed ("JobRouter orphan"), one whose source exists is
//! adopted as submitted, and a source marked as ours with no copy is
//! yielded.

use std::path::Path;

use crate::classad::{ClassAd, Value};
use crate::queue::{JobId, JobRow, Queue};

use super::config::RouterConfig;
use super::finish::{remove_change, yield_change};
use super::pass::{Report, change_unmoved};
use super::state::{self, Managed, Outcome, Stage};
use super::{ORPHAN_REASON, RouterError, attr};

fn text_of(ad: &ClassAd, name: &str) -> Option<String> {
    match ad.get(name).and_then(|e| e.literal_value()) {
        Some(Value::Str(s)) => Some(s.to_string()),
        _ => None,
    }
}

/// The jobs whose stored ad (their own or their cluster's) mentions
/// `word`: a text search of the stored ads, cheaper than reading every
/// job's full ad.
fn jobs_mentioning(q: &Queue, word: &str) -> Result<Vec<JobRow>, RouterError> {
    let pattern = format!("%{word}%");
    let mut ids: Vec<JobId> = Vec::new();
    {
        let conn = q.conn();
        let mut st = conn
            .prepare(
                "SELECT cluster, proc FROM procs WHERE ad LIKE ?1 \
             UNION SELECT p.cluster, p.proc FROM procs p JOIN clusters c ON p.cluster = c.cluster \
             WHERE c.ad LIKE ?1 ORDER BY 1, 2",
            )
            .map_err(crate::queue::QueueError::from)?;
        let rows = st
            .query_map([&pattern], |r| {
                Ok(JobId {
                    cluster: r.get(0)?,
                    proc: r.get(1)?,
                })
            })
            .map_err(crate::queue::QueueError::from)?;
        for r in rows {
            ids.push(r.map_err(crate::queue::QueueError::from)?);
        }
    }
    let mut out = Vec::new();
    for id in ids {
        if let Some(row) = q.row(id)? {
            out.push(row);
        }
    }
    Ok(out)
}

/// Adopts or removes orphaned copies and yields unaccounted sources.
pub fn adopt(
    q: &mut Queue,
    rc: &RouterConfig,
    now: i64,
    report: &mut Report,
) -> Result<(), RouterError> {
    let known = state::managed(q.conn())?;
    let known_dests: Vec<JobId> = known.iter().filter_map(|m| m.dest).collect();
    let mut adopted: Vec<JobId> = Vec::new();
    for row in jobs_mentioning(q, attr::ROUTED_BY)? {
        if known_dests.contains(&row.id) || row.id.proc < 0 {
            continue;
        }
        let ad = q.full_ad(&row)?;
        if text_of(&ad, attr::ROUTED_BY).as_deref() != Some(rc.name.as_str()) {
            continue;
        }
        // The remote job of a copy routed to this queue from another one
        // (`GridResource = "condor <this SPOOL> ..."`) carries that queue's
        // RoutedBy, which keeps it from being routed again here, and a
        // RoutedFromJobId naming a job of that queue: it is nobody's
        // orphan here, and that queue's router looks after its copy.
        if text_of(&ad, "SubmitterId").is_some_and(|by| Path::new(&by) != q.spool()) {
            continue;
        }
        let src = text_of(&ad, attr::ROUTED_FROM).and_then(|t| {
            let (c, p) = t.split_once('.')?;
            Some(JobId {
                cluster: c.parse().ok()?,
                proc: p.parse().ok()?,
            })
        });
        // A job edited in place names itself: it is nobody's copy.
        if src == Some(row.id) {
            continue;
        }
        let src_row = match src {
            Some(s) => q.row(s)?,
            None => None,
        };
        match (src, src_row) {
            (Some(s), Some(_)) if !known.iter().any(|m| m.src == s) && !adopted.contains(&s) => {
                let route = text_of(&ad, attr::ROUTE_NAME).unwrap_or_default();
                let m = Managed {
                    src: s,
                    stage: Stage::Submitted,
                    route: route.clone(),
                    dest: Some(row.id),
                    outcome: Outcome::None,
                    since: now,
                };
                q.write(now, |w| state::put(w.conn(), &m))?;
                adopted.push(s);
                report.lines.push(format!(
                    "job {s}: adopted its routed copy {} on route {route}",
                    row.id
                ));
            }
            (Some(_), Some(_)) => {}
            _ => {
                if row.status == crate::vocab::JobStatus::Removed.code() {
                    continue;
                }
                let (change, running) = remove_change(&ad, ORPHAN_REASON);
                let done = change_unmoved(q, now, row.id, row.status, |w, cur, ad| {
                    if running {
                        w.request(cur.id, crate::vocab::Request::Remove)?;
                    }
                    w.change(cur, ad, &change)
                })?;
                if !done {
                    continue;
                }
                if running {
                    crate::queue::joblock::wake(q.spool(), row.id);
                }
                report
                    .lines
                    .push(format!("job {}: orphaned routed copy removed", row.id));
            }
        }
    }
    for row in jobs_mentioning(q, attr::MANAGED_MANAGER)? {
        if known.iter().any(|m| m.src == row.id) || adopted.contains(&row.id) {
            continue;
        }
        let ad = q.full_ad(&row)?;
        if text_of(&ad, attr::MANAGED).as_deref() != Some("External")
            || text_of(&ad, attr::MANAGED_MANAGER).as_deref() != Some(rc.name.as_str())
        {
            continue;
        }
        let (change, _) = yield_change(&ad, false, rc.release_on_hold);
        if !change_unmoved(q, now, row.id, row.status, |w, cur, ad| {
            w.change(cur, ad, &change)
        })? {
            continue;
        }
        report.lines.push(format!(
            "job {}: managed by us with no routed copy; yielded",
            row.id
        ));
    }
    Ok(())
}
