//! The gridmanager of one owner: the loop (lock, rounds, waiting) and the
//! round that moves each grid job one step (grid spec sections 3 to 5 and
//! 8); a Slurm job's steps are in `slurm_job.rs`, a remote tern queue's in
//! `condor.rs`, and what they change in the job in `changes.rs`.
//!
//! A round reads the owner's grid jobs, asks Slurm once for all of them
//! (`squeue`, which is also the ping), and moves each job one step:
//! submit, follow, finish, cancel. Every change is committed through
//! [`Round::commit`], which re-reads the job inside the transaction and
//! does nothing if its status moved meanwhile (a user's rm or hold wins;
//! the next round sees it).
//!
//! Crash safety: before sbatch runs, the job is committed with its 3-token
//! GridJobId and the number of this submission (`GridSubmitCount`), which
//! makes the Slurm job name. A job found with 3 tokens and
//! `Managed = "External"` is first looked for by that name, and adopted if
//! Slurm has it, so a gridmanager killed between sbatch and the commit of
//! the Slurm id never submits twice (HTCondor's gridmanager does).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::classad::{ClassAd, Expr};
use crate::config::Config;
use crate::queue::{Change, JobId, JobRow, Queue, QueueError, Selection};
use crate::userlog::{self, Event};
use crate::vocab::{JobStatus, Universe, hold_code};

use super::changes::*;
use super::ids::SlurmId;
use super::resource::{self, Resource};
use super::slurm::{self};
use super::{GridError, events};
use crate::sys::identity::JobOwner;

/// How the gridmanager paces itself.
#[derive(Clone, Debug)]
pub struct Knobs {
    /// GRIDMANAGER_JOB_PROBE_INTERVAL: seconds between status polls.
    pub probe_interval: Duration,
    /// GRIDMANAGER_STATUS_UNKNOWN_TIME: seconds without a status before
    /// CurrentStatusUnknown and event 029 (HTCondor's fixed 900).
    pub unknown_after: i64,
    /// GRIDMANAGER_MAX_SUBMITTED_JOBS_PER_RESOURCE: jobs submitted to one
    /// resource at a time; more wait Idle.
    pub max_submitted: usize,
}

impl Knobs {
    pub fn from_config(cfg: &Config) -> Result<Knobs, GridError> {
        let probe = cfg.get_int("GRIDMANAGER_JOB_PROBE_INTERVAL", 1)?.max(1);
        Ok(Knobs {
            probe_interval: Duration::from_secs(probe as u64),
            unknown_after: cfg.get_int("GRIDMANAGER_STATUS_UNKNOWN_TIME", 900)?,
            max_submitted: cfg
                .get_int("GRIDMANAGER_MAX_SUBMITTED_JOBS_PER_RESOURCE", 1000)?
                .max(1) as usize,
        })
    }
}

/// Consecutive failed status queries of one job before it is held
/// (HTCondor's BATCH_GAHP_CHECK_STATUS_ATTEMPTS).
pub(super) const STATUS_ATTEMPTS: u32 = 5;

/// The lock that keeps one gridmanager per owner.
pub fn lock_path(spool: &Path, owner: &str) -> PathBuf {
    crate::negotiator::gridjobs::lock_path(spool, owner)
}

fn io_err(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> GridError {
    let path = path.to_path_buf();
    move |e| GridError::Io {
        what,
        path,
        msg: crate::sys::io_error_text(&e),
    }
}

/// Runs the gridmanager of `owner` until it has nothing left to watch.
/// Returns at once when another one holds the lock.
pub fn run(cfg: &Config, owner: &str) -> Result<(), GridError> {
    let spool = PathBuf::from(cfg.get("SPOOL")?.ok_or(GridError::NoSpool)?);
    let knobs = Knobs::from_config(cfg)?;
    let path = lock_path(&spool, owner);
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).map_err(io_err("cannot create", d))?;
    }
    // A SPOOL file: a planted link or FIFO is refused, never followed.
    let lock = crate::sys::fs::spool_lock_file(&path).map_err(io_err("cannot open", &path))?;
    if !try_lock(&lock, &path)? {
        return Ok(());
    }
    let mut g = Gridmanager {
        cfg,
        spool,
        owner: owner.to_string(),
        knobs,
        last_poll: None,
        seen_log: 0,
        failures: std::collections::HashMap::new(),
    };
    loop {
        if g.round()? {
            g.wait();
            continue;
        }
        // Nothing to watch: let go, then look once more, for a job that
        // came between our look and the unlock (its pass found us running).
        let _ = lock.unlock();
        if g.has_work()? && try_lock(&lock, &path)? {
            continue;
        }
        return Ok(());
    }
}

fn try_lock(f: &File, path: &Path) -> Result<bool, GridError> {
    match f.try_lock() {
        Ok(()) => Ok(true),
        Err(std::fs::TryLockError::WouldBlock) => Ok(false),
        Err(std::fs::TryLockError::Error(e)) => Err(io_err("cannot lock", path)(e)),
    }
}

struct Gridmanager<'c> {
    cfg: &'c Config,
    spool: PathBuf,
    owner: String,
    knobs: Knobs,
    last_poll: Option<Instant>,
    /// The queue's log position after our last round: a change past it
    /// (a submit, rm, hold) starts the next round early.
    seen_log: i64,
    /// Consecutive failed status queries, by job.
    failures: std::collections::HashMap<JobId, u32>,
}

/// One grid job as a round sees it.
pub(super) struct Job {
    pub(super) row: JobRow,
    pub(super) ad: Rc<ClassAd>,
}

impl Job {
    pub(super) fn status(&self) -> Option<JobStatus> {
        self.row.status()
    }
    pub(super) fn str(&self, n: &str) -> Option<String> {
        self.ad.eval_str(n).filter(|s| !s.is_empty())
    }
    pub(super) fn managed_externally(&self) -> bool {
        self.str("Managed").as_deref() == Some("External")
    }
    /// Its owner (Owner, OwnerUid, OwnerUmask), as whom a root
    /// gridmanager runs its commands.
    pub(super) fn owner(&self) -> JobOwner {
        crate::vocab::owner_of(&self.ad)
    }
}

/// As whom the round's one squeue of every job of the owner runs: the
/// owner of the first job whose owner record holds (a row with a forged
/// OwnerUid cannot stop the listing of the others), else of the first.
fn listing_owner(jobs: &[&Job]) -> JobOwner {
    let owners: Vec<JobOwner> = jobs.iter().map(|j| j.owner()).collect();
    let first = owners.first().cloned().unwrap_or_default();
    if !crate::sys::identity::is_root() {
        return first;
    }
    owners
        .into_iter()
        .find(|o| o.identity().is_ok())
        .unwrap_or(first)
}

pub use crate::negotiator::gridjobs::needs_work;

impl Gridmanager<'_> {
    /// The owner's grid jobs that need work, with their ads.
    fn jobs(&self, q: &Queue) -> Result<Vec<Job>, QueueError> {
        let sel = Selection {
            owners: vec![self.owner.clone()],
            ..Selection::default()
        };
        let mut out = Vec::new();
        for row in q.rows(&sel)? {
            let cad = q.cluster_ad(row.id.cluster)?;
            if cad.eval_int("JobUniverse") != Some(Universe::Grid.code()) {
                continue;
            }
            let ad = Rc::new(q.full_ad(&row)?);
            if ad.eval_int("JobUniverse") != Some(Universe::Grid.code()) {
                continue;
            }
            if needs_work(row.status(), &ad) {
                out.push(Job { row, ad });
            }
        }
        Ok(out)
    }

    fn has_work(&self) -> Result<bool, GridError> {
        let Some(q) = Queue::open(&self.spool, false)? else {
            return Ok(false);
        };
        Ok(!self.jobs(&q)?.is_empty())
    }

    /// Sleeps until the probe interval has passed since the last poll, or
    /// sooner when the queue changed (so a new job is submitted, and a
    /// removal carried out, without waiting a whole interval).
    fn wait(&mut self) {
        let start = Instant::now();
        // One handle for the whole wait: opening the queue every look
        // would redo its pragmas and schema check five times a second.
        let q = Queue::open(&self.spool, false).ok().flatten();
        while start.elapsed() < self.knobs.probe_interval {
            std::thread::sleep(Duration::from_millis(200));
            if let Some(q) = &q
                && q.log_end().unwrap_or(0) != self.seen_log
            {
                return;
            }
        }
    }

    /// One round; whether jobs are left to watch.
    fn round(&mut self) -> Result<bool, GridError> {
        let now = crate::clock::now();
        let Some(mut q) = Queue::open(&self.spool, false)? else {
            return Ok(false);
        };
        // The configured limits, as every writer of the queue uses: jobs
        // that end here go to history.
        q.set_limits(crate::queue::Limits::from_config(self.cfg)?);
        let jobs = self.jobs(&q)?;
        if jobs.is_empty() {
            return Ok(false);
        }
        let mut r = Round {
            owner: &self.owner,
            spool: &self.spool,
            knobs: &self.knobs,
            q: &mut q,
            now,
            slurm: None,
            submitted: 0,
            failures: &mut self.failures,
            routed_moved: false,
        };
        let slurm_jobs: Vec<&Job> = jobs
            .iter()
            .filter(|j| resource::parse(j.str("GridResource").as_deref()) == Resource::Slurm)
            .collect();
        if !slurm_jobs.is_empty() {
            let listing = slurm::list(&listing_owner(&slurm_jobs));
            r.submitted = slurm_jobs
                .iter()
                .filter(|j| {
                    j.str("GridJobId")
                        .and_then(|g| SlurmId::parse(&g))
                        .is_some_and(|s| s.submitted.is_some())
                })
                .count();
            r.resource_state(&slurm_jobs, listing.as_ref().err())?;
            r.slurm = Some(listing);
            self.last_poll = Some(Instant::now());
        }
        for j in &jobs {
            r.step(j)?;
        }
        let routed_moved = r.routed_moved;
        drop(r);
        // A routed copy started, ended or left: its source waits for the
        // router, which a pass starts (as a shadow asks for a pass when its
        // slot falls free), rather than for cron's next minute.
        if routed_moved && let Err(e) = crate::negotiator::request_pass(self.cfg, &self.spool) {
            note!("tern_gridmanager: warning: {e}");
        }
        self.seen_log = q.log_end()?;
        Ok(true)
    }
}

/// The work of one round.
pub(super) struct Round<'a> {
    pub(super) owner: &'a str,
    pub(super) spool: &'a Path,
    pub(super) knobs: &'a Knobs,
    pub(super) q: &'a mut Queue,
    pub(super) now: i64,
    /// This round's squeue answer, when the owner has Slurm jobs.
    pub(super) slurm: Option<Result<std::collections::HashMap<String, slurm::Listed>, String>>,
    /// Slurm jobs submitted and not finished.
    pub(super) submitted: usize,
    pub(super) failures: &'a mut std::collections::HashMap<JobId, u32>,
    /// Whether a routed copy's JobStatus changed this round.
    pub(super) routed_moved: bool,
}

/// Whether `change` moves a job out of its JobStatus in `ad`.
fn moves_status(ad: &ClassAd, change: &Change) -> bool {
    let set = match change {
        Change::Skip(_) => return false,
        Change::Leave { .. } => return true,
        Change::Set(set) | Change::Update { set, .. } => set,
    };
    set.iter().any(|(n, e)| {
        n.eq_ignore_ascii_case("JobStatus")
            && ad.get("JobStatus").map(crate::classad::unparse::unparse)
                != Some(crate::classad::unparse::unparse(e))
    })
}

impl Round<'_> {
    /// Commits `f`'s change to job `id` if it is still in `status`, then
    /// writes its events to the job's log at once: a tool that acts on the
    /// new state (tern_release of a job this round held) writes its event
    /// after these, so the log keeps the queue's order. Whether it was made.
    pub(super) fn commit(
        &mut self,
        id: JobId,
        status: i64,
        f: impl FnOnce(&Rc<ClassAd>) -> (Change, Vec<Event>),
    ) -> Result<bool, QueueError> {
        let mut evs = Vec::new();
        let mut moved = false;
        let done = self.q.write(self.now, |w| {
            let Some(row) = w.row(id)? else {
                return Ok(false);
            };
            if row.status != status {
                return Ok(false);
            }
            let ad = Rc::new(w.full_ad(&row)?);
            let (change, e) = f(&ad);
            if let Some(p) = userlog::user_log(&ad) {
                evs.extend(e.into_iter().map(|ev| (p.clone(), ev)));
            }
            if ad.get("RoutedBy").is_some() && moves_status(&ad, &change) {
                moved = true;
            }
            w.change(&row, &ad, &change)?;
            Ok(true)
        })?;
        self.routed_moved |= done && moved;
        if done && let Err(e) = userlog::log_job_events(&evs) {
            note!("tern_gridmanager: warning: {e}");
        }
        Ok(done)
    }

    /// Slurm down or back: 026 and GridResourceUnavailableTime on each
    /// waiting or running job once per transition, 025 and the attribute
    /// undefined when squeue answers again. Nothing is completed or held
    /// while it is down.
    fn resource_state(&mut self, jobs: &[&Job], down: Option<&String>) -> Result<(), GridError> {
        for j in jobs {
            if !matches!(j.status(), Some(JobStatus::Idle | JobStatus::Running)) {
                continue;
            }
            let marked = j.ad.eval_int("GridResourceUnavailableTime").is_some();
            let gr = j.str("GridResource").unwrap_or_default();
            let now = self.now;
            if down.is_some() && !marked {
                self.commit(j.row.id, j.row.status, |_| {
                    (
                        Change::Set(vec![set("GridResourceUnavailableTime", Expr::int(now))]),
                        vec![events::resource_down(j.row.id, now, &gr)],
                    )
                })?;
            } else if down.is_none() && marked {
                self.commit(j.row.id, j.row.status, |_| {
                    (
                        Change::Update {
                            set: vec![],
                            delete: vec!["GridResourceUnavailableTime".into()],
                        },
                        vec![events::resource_up(j.row.id, now, &gr)],
                    )
                })?;
            }
        }
        if let Some(why) = down {
            note!("tern_gridmanager: Slurm is down for {}: {why}", self.owner);
        }
        Ok(())
    }

    fn step(&mut self, j: &Job) -> Result<(), GridError> {
        let res = resource::parse(j.str("GridResource").as_deref());
        match res {
            Resource::Unusable(why) => self.unusable(j, &why),
            Resource::Slurm => self.slurm_step(j),
            Resource::Condor { schedd, pool } => {
                let spool = self.spool;
                // Another queue that cannot be read now (busy, damaged,
                // gone) is that job's trouble, not the round's: it is
                // tried again next round.
                if let Err(e) = self.condor_step(j, &schedd, &pool, spool) {
                    note!("tern_gridmanager: job {}: {schedd}: {e}", j.row.id);
                }
                Ok(())
            }
        }
    }

    /// A GridResource no backend takes: held at once; a removed job just
    /// leaves.
    fn unusable(&mut self, j: &Job, why: &str) -> Result<(), GridError> {
        let now = self.now;
        match j.status() {
            Some(JobStatus::Removed) => {
                self.commit(j.row.id, j.row.status, |ad| (leave_removed(ad), vec![]))?;
            }
            Some(JobStatus::Held) => {
                self.commit(j.row.id, j.row.status, |_| (let_go(), vec![]))?;
            }
            _ => {
                let running = j.status() == Some(JobStatus::Running);
                self.commit(j.row.id, j.row.status, |ad| {
                    grid_hold(
                        ad,
                        j.row.id,
                        now,
                        why,
                        hold_code::UNSPECIFIED,
                        0,
                        running,
                        false,
                    )
                })?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::Authority;
    use crate::submit::{self, SubmitOptions};

    /// The race CI met: the round held job 4, tern_release read the held
    /// job and logged 013, and the round's 012 followed at its end.
    #[test]
    fn a_commit_logs_its_events_before_the_round_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let spool = dir.path().join("spool");
        let mut q = Queue::open(&spool, true).unwrap().unwrap();
        let log = dir.path().join("job.log");
        let cfg = Config::defaults();
        let me = crate::sys::real_user_name();
        let text = format!(
            "universe = grid\ngrid_resource = batch slurm\nexecutable = /bin/true\nlog = {}\nqueue\n",
            log.display()
        );
        let f = submit::parse(&text, "t.sub", Path::new("/"), &cfg).unwrap();
        let (cluster, _) = q
            .submit::<QueueError>(&Authority::new(&me, vec![]), &me, |cluster| {
                let opts = SubmitOptions {
                    cluster,
                    qdate: 1_700_000_000,
                    owner: me.clone(),
                    cwd: dir.path().to_path_buf(),
                    environ: vec![],
                    batch_name: None,
                };
                submit::materialize(&f, &cfg, &opts).map_err(|e| QueueError::Invalid(e.to_string()))
            })
            .unwrap();
        let id = JobId { cluster, proc: 0 };
        let knobs = Knobs::from_config(&cfg).unwrap();
        let mut failures = std::collections::HashMap::new();
        let mut r = Round {
            owner: &me,
            spool: &spool,
            knobs: &knobs,
            q: &mut q,
            now: 1_700_000_100,
            slurm: None,
            submitted: 0,
            failures: &mut failures,
            routed_moved: false,
        };
        let made = r
            .commit(id, JobStatus::Idle as i64, |ad| {
                grid_hold(
                    ad,
                    id,
                    1_700_000_100,
                    "why",
                    hold_code::UNSPECIFIED,
                    0,
                    false,
                    false,
                )
            })
            .unwrap();
        assert!(made);
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(text.contains("012 ("), "no hold event yet: {text:?}");
    }
}
