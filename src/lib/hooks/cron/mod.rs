//! Daemon ClassAd hooks (spec 8.3): STARTD_CRON and SCHEDD_CRON jobs,
//! site programs whose output adds attributes to the slot ads and to the
//! scheduler ad.
//!
//! There is no daemon to run them on a timer. The negotiation pass asks
//! [`wanted`] (a read of the configuration and of the small `cron_jobs`
//! table) and, when a job is due and no runner holds `hooks/cron.lock`,
//! starts `tern_cron`, which runs the due jobs beside the pass ([`runner`]):
//! each with its timeout, its stderr in `hooks/cron-<family>-<job>.stderr`
//! and events in `hooks/cron.log`. The runner stores each job's newest ads
//! with their time ([`store`]) and asks for a pass when what they publish
//! changed. It stays while a job runs or one is due within [`LINGER`]
//! seconds, so short periods are kept exactly; longer ones are kept to the
//! pass that next sees them due. [`merge`] puts the ads into the slot ads
//! wherever the machine code builds them (matching, tern_status, the
//! fetch-work hooks' stdin); [`schedd_ad`] builds the scheduler ad.

pub mod merge;
pub mod output;
pub mod params;
pub mod runner;
pub mod store;

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension};

use crate::classad::{ClassAd, Expr};
use crate::config::{Config, ConfigError};
use crate::queue::QueueError;

pub use params::{Job, Mode};
pub use store::Published;

/// The runner stays while a job is due within this many seconds.
pub const LINGER: i64 = 60;

/// Which daemon's hooks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    Startd,
    Schedd,
}

impl Family {
    pub const ALL: [Family; 2] = [Family::Startd, Family::Schedd];

    /// The knobs' prefix, also the family's name in the tables.
    pub fn prefix(self) -> &'static str {
        match self {
            Family::Startd => "STARTD_CRON",
            Family::Schedd => "SCHEDD_CRON",
        }
    }

    /// The start of the status attributes (`StartdCron_<job>_Status`).
    pub fn attr_prefix(self) -> &'static str {
        match self {
            Family::Startd => "StartdCron",
            Family::Schedd => "ScheddCron",
        }
    }

    fn short(self) -> &'static str {
        match self {
            Family::Startd => "startd",
            Family::Schedd => "schedd",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CronError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Queue(#[from] QueueError),
    /// A knob whose value cannot be honoured.
    #[error("{knob} = {value}: {msg}")]
    Knob {
        knob: String,
        value: String,
        msg: String,
    },
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

impl From<rusqlite::Error> for CronError {
    fn from(e: rusqlite::Error) -> Self {
        CronError::Queue(e.into())
    }
}

/// The runner's lock.
pub fn lock_path(spool: &Path) -> PathBuf {
    spool.join("hooks").join("cron.lock")
}

/// The hook log: every run's failures and bad lines.
pub fn log_path(spool: &Path) -> PathBuf {
    spool.join("hooks").join("cron.log")
}

/// Where a job's stderr goes (also the lock of its running instance).
pub fn stderr_path(spool: &Path, fam: Family, job: &str) -> PathBuf {
    spool
        .join("hooks")
        .join(format!("cron-{}-{job}.stderr", fam.short()))
}

/// How many times `tern_negotiate -reconfig` has run (HTCondor's
/// reconfig, for `_RECONFIG` and `_RECONFIG_RERUN`).
pub fn reconfig_count(conn: &Connection) -> Result<i64, QueueError> {
    Ok(conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'cron_reconfig'",
            [],
            |r| r.get(0),
        )
        .optional()?
        .unwrap_or(0))
}

/// When `job` is next due (`None`: not until something changes), from its
/// row. A job never run, or whose knobs changed, is due at once; a running
/// Periodic job is due at its period (the runner then kills it, with
/// `_KILL`, or lets it be).
pub fn next_due(job: &Job, st: Option<&store::State>, reconfig: i64) -> Option<i64> {
    let Some(st) = st else { return Some(0) };
    let Some(start) = st.last_start else {
        return Some(0);
    };
    let running = st.pid.is_some();
    if st.signature != job.signature && !running {
        return Some(0);
    }
    match job.mode {
        Mode::Periodic => Some(start + job.period),
        Mode::WaitForExit if running => None,
        Mode::WaitForExit => Some(st.last_end.unwrap_or(start) + job.period),
        Mode::OneShot if running => None,
        Mode::OneShot => (job.reconfig_rerun && reconfig > st.generation).then_some(0),
    }
}

/// Whether the pass should start the runner: some job is due, running
/// (its runner is gone, or the lock would be held), unrecorded, or gone
/// from the configuration with rows left behind. Configuration errors come
/// back as warnings for the pass's report; the runner records them too.
pub fn wanted(cfg: &Config, conn: &Connection, now: i64) -> Result<(bool, Vec<String>), CronError> {
    let states = store::states(conn)?;
    let reconfig = reconfig_count(conn)?;
    let mut warnings = Vec::new();
    let mut want = false;
    for fam in Family::ALL {
        let jobs = match params::family(cfg, fam) {
            Ok(j) => j,
            Err(e) => {
                want |= !unmarked(cfg, conn, fam, &e.to_string())?.is_empty();
                warnings.push(format!("{} hooks not run: {e}", fam.prefix()));
                continue;
            }
        };
        let mine: Vec<&store::State> = states.iter().filter(|s| s.family == fam.prefix()).collect();
        for (name, err) in &jobs.broken {
            warnings.push(format!("{} job {name} not run: {err}", fam.prefix()));
            want |= !mine.iter().any(|s| s.name == *name && s.status == *err);
        }
        for j in &jobs.jobs {
            let st = mine.iter().find(|s| s.name == j.name).copied();
            want |= st.is_some_and(|s| s.pid.is_some())
                || next_due(j, st, reconfig).is_some_and(|t| t <= now);
        }
        let keep: Vec<String> = jobs
            .jobs
            .iter()
            .map(|j| j.name.clone())
            .chain(jobs.broken.iter().map(|(n, _)| n.clone()))
            .collect();
        want |= !store::stale(conn, fam, &keep)?.is_empty();
    }
    Ok((want, warnings))
}

/// The listed jobs of a family whose shared knobs are wrong (`err`) that
/// do not show the error as their status yet.
pub fn unmarked(
    cfg: &Config,
    conn: &Connection,
    fam: Family,
    err: &str,
) -> Result<Vec<String>, CronError> {
    let states = store::states(conn)?;
    Ok(cfg
        .list_value(&format!("{}_JOBLIST", fam.prefix()))?
        .into_iter()
        .filter(|n| {
            !states
                .iter()
                .any(|s| s.family == fam.prefix() && s.name == *n && s.status == err)
        })
        .collect())
}

/// Job counts by status (from the queue's `job_counts`).
fn counts(conn: &Connection) -> Result<[i64; 8], QueueError> {
    let mut c = [0i64; 8];
    let mut st = conn.prepare_cached("SELECT status, sum(n) FROM job_counts GROUP BY status")?;
    for r in st.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))? {
        let (s, n) = r?;
        if (0..8).contains(&s) {
            c[s as usize] = n;
        }
    }
    Ok(c)
}

/// The scheduler ad `tern_status -schedd` shows: Name, MyType, the job
/// counts that are cheap to read, and the SCHEDD_CRON attributes. `conn`
/// is `None` before the first submit.
pub fn schedd_ad(cfg: &Config, conn: Option<&Connection>, now: i64) -> Result<ClassAd, CronError> {
    let host = cfg
        .get("FULL_HOSTNAME")?
        .unwrap_or_else(|| "localhost".into());
    let name = cfg.get("SCHEDD_NAME")?.unwrap_or_else(|| host.clone());
    let mut ad = ClassAd::new();
    ad.insert("MyType", Expr::string("Scheduler"));
    ad.insert("Name", Expr::string(&name));
    ad.insert("Machine", Expr::string(&host));
    ad.insert("MyCurrentTime", Expr::int(now));
    let c = match conn {
        Some(conn) => counts(conn)?,
        None => [0; 8],
    };
    // JobStatus: 1 idle, 2 running, 3 removed, 4 completed, 5 held,
    // 6 transferring output, 7 suspended.
    ad.insert("TotalIdleJobs", Expr::int(c[1]));
    ad.insert("TotalRunningJobs", Expr::int(c[2] + c[6]));
    ad.insert("TotalRemovedJobs", Expr::int(c[3]));
    ad.insert("TotalHeldJobs", Expr::int(c[5]));
    ad.insert("TotalSuspendedJobs", Expr::int(c[7]));
    ad.insert("TotalJobAds", Expr::int(c.iter().sum()));
    if let Some(conn) = conn {
        let p = Published::load(conn, Family::Schedd)?;
        // The schedd's cron has one ad: every job's ads go in, in order.
        for h in &p.ads {
            for (n, e) in h.ad.iter_shared() {
                ad.insert_shared(n, e.clone());
            }
        }
        for (n, e) in &p.status {
            ad.insert(n, e.clone());
        }
    }
    Ok(ad)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(mode: &str, extra: &str) -> Job {
        let mut c = Config::defaults();
        c.parse_str(
            &format!(
                "STARTD_CRON_JOBLIST = j\nSTARTD_CRON_j_EXECUTABLE = /bin/true\n\
                 STARTD_CRON_j_MODE = {mode}\nSTARTD_CRON_j_PERIOD = 10\n{extra}"
            ),
            "test",
        )
        .unwrap();
        params::family(&c, Family::Startd).unwrap().jobs.remove(0)
    }

    fn st(j: &Job, start: Option<i64>, end: Option<i64>, pid: Option<i32>) -> store::State {
        store::State {
            family: "STARTD_CRON".into(),
            name: "j".into(),
            signature: j.signature.clone(),
            last_start: start,
            last_end: end,
            pid,
            generation: 1,
            status: String::new(),
        }
    }

    #[test]
    fn when_each_mode_is_due() {
        let p = job("Periodic", "");
        assert_eq!(next_due(&p, None, 0), Some(0));
        assert_eq!(
            next_due(&p, Some(&st(&p, Some(100), Some(103), None)), 0),
            Some(110)
        );
        // Still running: due at its period all the same (the runner kills
        // it with KILL, or lets it be).
        assert_eq!(
            next_due(&p, Some(&st(&p, Some(100), None, Some(7))), 0),
            Some(110)
        );
        let w = job("WaitForExit", "");
        assert_eq!(
            next_due(&w, Some(&st(&w, Some(100), None, Some(7))), 0),
            None
        );
        assert_eq!(
            next_due(&w, Some(&st(&w, Some(100), Some(150), None)), 0),
            Some(160)
        );
        let o = job("OneShot", "STARTD_CRON_j_RECONFIG_RERUN = true\n");
        let done = st(&o, Some(100), Some(101), None);
        assert_eq!(next_due(&o, Some(&done), 1), None);
        assert_eq!(next_due(&o, Some(&done), 2), Some(0));
        // Its knobs changed: a new job, due at once.
        let mut changed = done.clone();
        changed.signature.push('x');
        assert_eq!(next_due(&o, Some(&changed), 0), Some(0));
    }
}
