//! The cron tables: `cron_jobs` (per job: its knobs when it last started,
//! the last start and end, the process group of a running instance and how
//! the last run ended) and `cron_ads` (the ads the newest output
//! published, each with its time). Every function runs on the caller's
//! connection, inside the caller's transaction.

use rusqlite::{Connection, params};

use super::Family;
use super::output::Block;
use super::params::Job;
use crate::classad::unparse::ad_to_old;
use crate::classad::{ClassAd, Expr};
use crate::queue::QueueError;

/// One `cron_jobs` row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct State {
    pub family: String,
    pub name: String,
    pub signature: String,
    pub last_start: Option<i64>,
    pub last_end: Option<i64>,
    pub pid: Option<i32>,
    /// The reconfiguration count when it last started.
    pub generation: i64,
    pub status: String,
}

/// Every job's row.
pub fn states(conn: &Connection) -> Result<Vec<State>, QueueError> {
    let mut st = conn.prepare_cached(
        "SELECT family, name, signature, last_start, last_end, pid, status, generation \
         FROM cron_jobs \
         ORDER BY family, name",
    )?;
    let rows = st
        .query_map([], |r| {
            Ok(State {
                family: r.get(0)?,
                name: r.get(1)?,
                signature: r.get(2)?,
                last_start: r.get(3)?,
                last_end: r.get(4)?,
                pid: r.get(5)?,
                status: r.get(6)?,
                generation: r.get(7)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// A run started: its knobs, time, process group and the reconfiguration
/// count.
pub fn started(
    conn: &Connection,
    j: &Job,
    now: i64,
    pid: i32,
    generation: i64,
) -> Result<(), QueueError> {
    conn.prepare_cached(
        "INSERT INTO cron_jobs (family, name, signature, last_start, pid, generation, status) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running') \
         ON CONFLICT (family, name) DO UPDATE SET signature = ?3, last_start = ?4, pid = ?5, \
         generation = ?6, status = CASE WHEN status = '' THEN 'running' ELSE status END",
    )?
    .execute(params![
        j.family.prefix(),
        j.name,
        j.signature,
        now,
        pid,
        generation
    ])?;
    Ok(())
}

/// A run ended (or was found gone): how, and when.
pub fn finished(
    conn: &Connection,
    fam: Family,
    name: &str,
    now: i64,
    status: &str,
) -> Result<(), QueueError> {
    conn.prepare_cached(
        "INSERT INTO cron_jobs (family, name, last_end, status) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT (family, name) DO UPDATE SET last_end = ?3, pid = NULL, status = ?4",
    )?
    .execute(params![fam.prefix(), name, now, status])?;
    Ok(())
}

/// Makes the job due at once (its last start forgotten).
pub fn forget_start(conn: &Connection, fam: Family, name: &str) -> Result<(), QueueError> {
    conn.prepare_cached("UPDATE cron_jobs SET last_start = NULL WHERE family = ?1 AND name = ?2")?
        .execute(params![fam.prefix(), name])?;
    Ok(())
}

/// Only the status (a configuration error, a run skipped).
pub fn set_status(
    conn: &Connection,
    fam: Family,
    name: &str,
    status: &str,
) -> Result<(), QueueError> {
    conn.prepare_cached(
        "INSERT INTO cron_jobs (family, name, status) VALUES (?1, ?2, ?3) \
         ON CONFLICT (family, name) DO UPDATE SET status = ?3",
    )?
    .execute(params![fam.prefix(), name, status])?;
    Ok(())
}

/// Publishes `blocks` as the job's ads at `now`. With `whole`, the output
/// is a complete run's: the job's ads it no longer reports go. Returns
/// whether any published attribute changed (the time aside).
pub fn publish(
    conn: &Connection,
    j: &Job,
    blocks: &[Block],
    whole: bool,
    now: i64,
) -> Result<bool, QueueError> {
    let (fam, job, prefix) = (j.family, j.name.as_str(), j.prefix.as_str());
    let slots = j
        .slots
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let mut old: Vec<(String, String, String)> = conn
        .prepare_cached("SELECT tag, ad, slots FROM cron_ads WHERE family = ?1 AND job = ?2")?
        .query_map(params![fam.prefix(), job], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut changed = false;
    for b in blocks {
        let text = ad_to_old(&b.ad, false);
        let before = old.iter().position(|(t, _, _)| *t == b.tag);
        match before {
            Some(i) => {
                let (_, a, s) = old.remove(i);
                changed |= a != text || s != slots;
            }
            None => changed = true,
        }
        conn.prepare_cached(
            "INSERT OR REPLACE INTO cron_ads (family, job, tag, ad, prefix, slots, updated) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?
        .execute(params![fam.prefix(), job, b.tag, text, prefix, slots, now])?;
    }
    if whole {
        for (tag, _, _) in old {
            conn.prepare_cached(
                "DELETE FROM cron_ads WHERE family = ?1 AND job = ?2 AND tag = ?3",
            )?
            .execute(params![fam.prefix(), job, tag])?;
            changed = true;
        }
    }
    Ok(changed)
}

/// The jobs with rows or ads that are not in `keep` (no longer configured).
pub fn stale(conn: &Connection, fam: Family, keep: &[String]) -> Result<Vec<String>, QueueError> {
    let mut names: Vec<String> = states(conn)?
        .into_iter()
        .filter(|s| s.family == fam.prefix())
        .map(|s| s.name)
        .chain(
            conn.prepare_cached("SELECT DISTINCT job FROM cron_ads WHERE family = ?1")?
                .query_map([fam.prefix()], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()?,
        )
        .filter(|n| !keep.contains(n))
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// Drops the rows and ads of `names`. Returns whether any ad went.
pub fn forget(conn: &Connection, fam: Family, names: &[String]) -> Result<bool, QueueError> {
    let mut gone = false;
    for n in names {
        conn.prepare_cached("DELETE FROM cron_jobs WHERE family = ?1 AND name = ?2")?
            .execute(params![fam.prefix(), n])?;
        gone |= conn
            .prepare_cached("DELETE FROM cron_ads WHERE family = ?1 AND job = ?2")?
            .execute(params![fam.prefix(), n])?
            > 0;
    }
    Ok(gone)
}

/// One published ad, ready to merge.
#[derive(Clone, Debug)]
pub struct HookAd {
    pub job: String,
    pub tag: String,
    pub ad: ClassAd,
    /// The job's _SLOTS (empty: all).
    pub slots: Vec<i64>,
}

/// What a family's hooks add to its daemon ads: the published ads, and
/// each job's status attributes.
#[derive(Clone, Debug, Default)]
pub struct Published {
    pub ads: Vec<HookAd>,
    pub status: Vec<(String, Expr)>,
}

impl Published {
    /// Reads a family's ads (with `<prefix>LastUpdate` when the job has a
    /// prefix) and job status. An ad that no longer parses is skipped.
    pub fn load(conn: &Connection, fam: Family) -> Result<Published, QueueError> {
        let mut ads = Vec::new();
        let mut st = conn.prepare_cached(
            "SELECT job, tag, ad, prefix, slots, updated FROM cron_ads WHERE family = ?1 \
             ORDER BY job, tag",
        )?;
        let rows = st
            .query_map([fam.prefix()], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, i64>(5)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        for (job, tag, text, prefix, slots, updated) in rows {
            let Ok(mut ad) = crate::classad::old::parse_old_ad(&text) else {
                continue;
            };
            if !prefix.is_empty() {
                ad.insert(&format!("{prefix}LastUpdate"), Expr::int(updated));
            }
            ads.push(HookAd {
                job,
                tag,
                ad,
                slots: slots.split(',').filter_map(|s| s.parse().ok()).collect(),
            });
        }
        let mut status = Vec::new();
        let attr = fam.attr_prefix();
        for s in states(conn)?
            .into_iter()
            .filter(|s| s.family == fam.prefix())
        {
            if let Some(t) = s.last_start {
                status.push((format!("{attr}_{}_LastRun", s.name), Expr::int(t)));
            }
            if !s.status.is_empty() {
                status.push((format!("{attr}_{}_Status", s.name), Expr::string(&s.status)));
            }
        }
        Ok(Published { ads, status })
    }

    pub fn is_empty(&self) -> bool {
        self.ads.is_empty() && self.status.is_empty()
    }
}
