//! The gridmanager of one owner: the loop (lock, rounds, waiting) and the
//! state machine of each grid job (grid spec sections 3 to 5 and 8).
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

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::classad::{ClassAd, Expr, Value};
use crate::config::Config;
use crate::negotiator::policy::{self, ExitDecision};
use crate::queue::{Change, JobId, JobRow, Queue, QueueError, Selection};
use crate::userlog::{self, Event, Exit};
use crate::vocab::{JobStatus, Universe, hold_code};

use super::ids::{self, SlurmId};
use super::resource::{self, Resource};
use super::slurm::{self, Ended, Phase};
use super::{GridError, events, script};

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
const STATUS_ATTEMPTS: u32 = 5;

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
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(io_err("cannot open", &path))?;
    if !try_lock(&lock, &path)? {
        return Ok(());
    }
    let mut g = Gridmanager {
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

struct Gridmanager {
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
}

pub use crate::negotiator::gridjobs::needs_work;

fn set(n: &str, e: Expr) -> (String, Expr) {
    (n.to_string(), e)
}

fn undefined() -> Expr {
    Expr::Lit(Value::Undefined)
}

impl Gridmanager {
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
        while start.elapsed() < self.knobs.probe_interval {
            std::thread::sleep(Duration::from_millis(200));
            if let Ok(Some(q)) = Queue::open(&self.spool, false)
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
            events: Vec::new(),
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
            let listing = slurm::list(&self.owner);
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
        let events = std::mem::take(&mut r.events);
        let routed_moved = r.routed_moved;
        drop(r);
        if let Err(e) = userlog::log_job_events(&events) {
            eprintln!("tern_gridmanager: warning: {e}");
        }
        // A routed copy started, ended or left: its source waits for the
        // router, which a pass starts (as a shadow asks for a pass when its
        // slot falls free), rather than for cron's next minute.
        if routed_moved
            && let Err(e) =
                crate::negotiator::request_pass(&crate::config::Config::defaults(), &self.spool)
        {
            eprintln!("tern_gridmanager: warning: {e}");
        }
        self.seen_log = q.log_end()?;
        Ok(true)
    }
}

/// The work of one round.
pub(super) struct Round<'a> {
    pub(super) owner: &'a str,
    pub(super) spool: &'a Path,
    knobs: &'a Knobs,
    q: &'a mut Queue,
    pub(super) now: i64,
    events: Vec<(PathBuf, Event)>,
    /// This round's squeue answer, when the owner has Slurm jobs.
    slurm: Option<Result<std::collections::HashMap<String, slurm::Listed>, String>>,
    /// Slurm jobs submitted and not finished.
    submitted: usize,
    failures: &'a mut std::collections::HashMap<JobId, u32>,
    /// Whether a routed copy's JobStatus changed this round.
    routed_moved: bool,
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
    /// Commits `f`'s change to job `id` if it is still in `status`; the
    /// events go to its log once the round ends. Whether it was made.
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
            if let Some(p) = userlog::user_log_path(&ad) {
                evs.extend(e.into_iter().map(|ev| (p.clone(), ev)));
            }
            if ad.get("RoutedBy").is_some() && moves_status(&ad, &change) {
                moved = true;
            }
            w.change(&row, &ad, &change)?;
            Ok(true)
        })?;
        self.routed_moved |= done && moved;
        if done {
            self.events.extend(evs);
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
            eprintln!("tern_gridmanager: Slurm is down for {}: {why}", self.owner);
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
                    eprintln!("tern_gridmanager: job {}: {schedd}: {e}", j.row.id);
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

    fn slurm_down(&self) -> bool {
        matches!(self.slurm, Some(Err(_)) | None)
    }

    fn slurm_step(&mut self, j: &Job) -> Result<(), GridError> {
        let gid = j.str("GridJobId").and_then(|g| SlurmId::parse(&g));
        let slurm_job = gid.as_ref().and_then(|g| g.job().map(String::from));
        match j.status() {
            Some(JobStatus::Removed) => {
                if let Some(id) = &slurm_job {
                    if self.slurm_down() {
                        return Ok(());
                    }
                    if let Err(e) = slurm::cancel(self.owner, id) {
                        eprintln!("tern_gridmanager: job {}: {e}", j.row.id);
                        return Ok(());
                    }
                }
                self.commit(j.row.id, j.row.status, |ad| (leave_removed(ad), vec![]))?;
            }
            Some(JobStatus::Held) => {
                if let Some(id) = &slurm_job {
                    if self.slurm_down() {
                        return Ok(());
                    }
                    if let Err(e) = slurm::cancel(self.owner, id) {
                        eprintln!("tern_gridmanager: job {}: {e}", j.row.id);
                        return Ok(());
                    }
                }
                self.commit(j.row.id, j.row.status, |_| (let_go(), vec![]))?;
            }
            Some(JobStatus::Idle | JobStatus::Running) => match slurm_job {
                None => {
                    if self.slurm_down() || self.submitted >= self.knobs.max_submitted {
                        return Ok(());
                    }
                    self.submit(j, gid)?;
                }
                Some(id) => self.follow(j, gid.expect("a Slurm id"), &id)?,
            },
            _ => {}
        }
        Ok(())
    }

    /// Submits a job to Slurm: the 3-token id and the submission's number
    /// committed first, then sbatch (or, after a crash, the submission
    /// Slurm already has), then the 4-token id and event 027.
    fn submit(&mut self, j: &Job, gid: Option<SlurmId>) -> Result<(), GridError> {
        let now = self.now;
        let id = j.row.id;
        let qdate = j.ad.eval_int("QDate").unwrap_or(j.row.qdate);
        let sandbox = ids::sandbox_id(userlog::hostname(), id, qdate);
        let count = j.ad.eval_int("GridSubmitCount").unwrap_or(0);
        // A 3-token id on a job we manage: a submission may have reached
        // Slurm before the last gridmanager died. Otherwise a new one.
        let recovering = gid.is_some() && j.managed_externally();
        let count = if recovering { count } else { count + 1 };
        let name = format!("{}.{count}", ids::slurm_job_name(&sandbox));
        let three = SlurmId {
            sandbox: sandbox.clone(),
            submitted: None,
        };
        if !recovering {
            let three_text = three.format();
            let ok = self.commit(id, j.row.status, |_| {
                (
                    Change::Set(vec![
                        set("Managed", Expr::string("External")),
                        set("GridJobId", Expr::string(&three_text)),
                        set("GridSubmitCount", Expr::int(count)),
                    ]),
                    vec![],
                )
            })?;
            if !ok {
                return Ok(());
            }
        }
        let found = if recovering {
            match slurm::find_by_name(self.owner, &name) {
                Ok(f) => f,
                Err(_) => return Ok(()),
            }
        } else {
            None
        };
        let slurm_id = match found {
            Some(f) => f,
            None => {
                let sc = match script::build(&j.ad, &name, &format!("home_bl_{sandbox}")) {
                    Ok(s) => s,
                    Err(script::ScriptError(why)) => {
                        self.commit(id, j.row.status, |ad| {
                            grid_hold(ad, id, now, &why, hold_code::UNSPECIFIED, 0, false, true)
                        })?;
                        return Ok(());
                    }
                };
                if let Err(e) = super::owner::can_enter(self.owner, &sc.iwd) {
                    let why = format!(
                        "submission command failed (exit code = 1) (stdout:Error) (stderr:cd: {}: {}-Failed to CD to Initial Working Directory.)",
                        sc.iwd.display(),
                        crate::sys::io_error_text(&e)
                    );
                    self.commit(id, j.row.status, |ad| {
                        grid_hold(ad, id, now, &why, hold_code::UNSPECIFIED, 0, false, true)
                    })?;
                    return Ok(());
                }
                match slurm::submit(self.owner, &sc.text, &sc.iwd) {
                    Ok(s) => s,
                    Err(slurm::SubmitFailed(why)) => {
                        // sbatch fails too when the controller went down
                        // since the round's squeue: that is the resource,
                        // not the job.
                        if slurm::list(self.owner).is_err() {
                            return Ok(());
                        }
                        self.commit(id, j.row.status, |ad| {
                            grid_hold(ad, id, now, &why, hold_code::UNSPECIFIED, 0, false, true)
                        })?;
                        return Ok(());
                    }
                }
            }
        };
        self.submitted += 1;
        let four = SlurmId {
            sandbox,
            submitted: Some((date_of(now), slurm_id)),
        }
        .format();
        let gr = j.str("GridResource").unwrap_or_default();
        self.commit(id, j.row.status, |_| {
            (
                Change::Set(vec![
                    set("GridJobId", Expr::string(&four)),
                    set("GridJobStatus", Expr::string("IDLE")),
                    set("LastRemoteStatusUpdate", Expr::int(now)),
                ]),
                vec![events::submitted(id, now, &gr, &four)],
            )
        })?;
        Ok(())
    }

    /// Follows a submitted job through this round's squeue answer.
    fn follow(&mut self, j: &Job, gid: SlurmId, slurm_id: &str) -> Result<(), GridError> {
        let now = self.now;
        let id = j.row.id;
        let gr = j.str("GridResource").unwrap_or_default();
        let listing = match &self.slurm {
            Some(Ok(l)) => l,
            _ => {
                // No status this round: after long enough, 029. The last
                // status came when the resource was last seen up (the job
                // is not rewritten at every poll that changes nothing).
                let last = j.ad.eval_int("GridResourceUnavailableTime").unwrap_or(now);
                if now - last > self.knobs.unknown_after
                    && !j.ad.eval("CurrentStatusUnknown").is_true()
                {
                    self.commit(id, j.row.status, |_| {
                        (
                            Change::Set(vec![set(
                                "CurrentStatusUnknown",
                                Expr::Lit(Value::Bool(true)),
                            )]),
                            vec![events::status_unknown(id, now)],
                        )
                    })?;
                }
                return Ok(());
            }
        };
        let listed = listing.get(slurm_id).cloned();
        let phase = listed.as_ref().map(|l| slurm::phase(&l.state));
        let mut known: Vec<(String, Expr)> = vec![set("LastRemoteStatusUpdate", Expr::int(now))];
        let mut known_events = Vec::new();
        if j.ad.eval("CurrentStatusUnknown").is_true() {
            known.push(set("CurrentStatusUnknown", Expr::Lit(Value::Bool(false))));
            known_events.push(events::status_known(id, now));
        }
        match phase {
            Some(Phase::Idle) => {
                if j.status() == Some(JobStatus::Running) {
                    self.commit(id, j.row.status, |ad| {
                        let mut s = known;
                        s.push(set("JobStatus", JobStatus::Idle.expr()));
                        s.push(set("GridJobStatus", Expr::string("IDLE")));
                        s.extend(leave_running(ad, now));
                        let mut e = known_events;
                        e.push(crate::negotiator::evicted(id, now, None));
                        (Change::Set(s), e)
                    })?;
                } else if !known_events.is_empty() {
                    self.commit(id, j.row.status, |_| (Change::Set(known), known_events))?;
                }
            }
            Some(Phase::Running) => {
                if j.status() != Some(JobStatus::Running) {
                    self.commit(id, j.row.status, |ad| {
                        let mut s = known;
                        s.extend(start_running(ad, now));
                        s.push(set("GridJobStatus", Expr::string("RUNNING")));
                        let mut e = known_events;
                        e.push(events::executing(id, now, &gr));
                        (Change::Set(s), e)
                    })?;
                } else if !known_events.is_empty() {
                    self.commit(id, j.row.status, |_| (Change::Set(known), known_events))?;
                }
            }
            Some(Phase::Finished) | Some(Phase::Cancelled) | None => {
                let from_list = listed.as_ref().and_then(|l| l.ended.clone());
                let ended = match from_list {
                    Some(e) => Some(e),
                    None => match slurm::ended(self.owner, slurm_id) {
                        Ok(e) => e,
                        Err(why) => {
                            // As BATCH_GAHP_CHECK_STATUS_ATTEMPTS: the
                            // fifth failure in a row holds the job.
                            let n = self.failures.entry(id).or_insert(0);
                            *n += 1;
                            eprintln!("tern_gridmanager: job {id}: {why} ({n} in a row)");
                            if *n >= STATUS_ATTEMPTS {
                                self.failures.remove(&id);
                                // Best effort: a job held here must not run on.
                                let _ = slurm::cancel(self.owner, slurm_id);
                                let why = format!("status command failed: {why}");
                                let running = j.status() == Some(JobStatus::Running);
                                self.commit(id, j.row.status, |ad| {
                                    grid_hold(
                                        ad,
                                        id,
                                        now,
                                        &why,
                                        hold_code::UNSPECIFIED,
                                        0,
                                        running,
                                        false,
                                    )
                                })?;
                            }
                            return Ok(());
                        }
                    },
                };
                self.failures.remove(&id);
                let cancelled = phase == Some(Phase::Cancelled)
                    || ended
                        .as_ref()
                        .is_some_and(|e| slurm::phase(&e.state) == Phase::Cancelled);
                if cancelled {
                    let three = SlurmId {
                        sandbox: gid.sandbox.clone(),
                        submitted: None,
                    }
                    .format();
                    let running = j.status() == Some(JobStatus::Running);
                    self.commit(id, j.row.status, |ad| {
                        let (c, e) = grid_hold(
                            ad,
                            id,
                            now,
                            "Job removed from batch queue manually",
                            hold_code::UNSPECIFIED,
                            0,
                            running,
                            true,
                        );
                        known.push(set("GridJobId", Expr::string(&three)));
                        known_events.extend(e);
                        (with(c, known), known_events)
                    })?;
                    return Ok(());
                }
                match ended {
                    Some(e) => {
                        self.commit(id, j.row.status, |ad| {
                            let (c, e) = complete(ad, id, now, &e, &gr);
                            known_events.extend(e);
                            (with(c, known), known_events)
                        })?;
                    }
                    None if listed.is_none()
                        && now - j.ad.eval_int("LastRemoteStatusUpdate").unwrap_or(now) < 60 =>
                    {
                        // Just submitted and not listed yet, or between
                        // squeue and scontrol: ask again next round.
                    }
                    None => {
                        let why = format!(
                            "Slurm job {slurm_id} ended, but neither scontrol nor sacct knows how (no exit code)"
                        );
                        let running = j.status() == Some(JobStatus::Running);
                        self.commit(id, j.row.status, |ad| {
                            grid_hold(ad, id, now, &why, hold_code::UNSPECIFIED, 0, running, false)
                        })?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// The submit date in a GridJobId (`YYYYMMDD`, local time).
fn date_of(now: i64) -> String {
    let t = crate::sys::time::local_time(now);
    format!("{:04}{:02}{:02}", t.year, t.mon, t.mday)
}

pub(super) fn with(c: Change, more: Vec<(String, Expr)>) -> Change {
    match c {
        Change::Set(mut s) => {
            s.extend(more);
            Change::Set(s)
        }
        Change::Update { mut set, delete } => {
            let delete = delete
                .into_iter()
                .filter(|d| !more.iter().any(|(n, _)| n.eq_ignore_ascii_case(d)))
                .collect();
            set.extend(more);
            Change::Update { set, delete }
        }
        Change::Leave { mut set } => {
            set.extend(more);
            Change::Leave { set }
        }
        other => other,
    }
}

/// A hold the gridmanager makes: code and subcode (0 for its own holds),
/// NumSystemHolds, the job let go (`Managed = "Schedd"`); `keep_id` keeps
/// a 3-token GridJobId so a release submits again under the same sandbox.
#[allow(clippy::too_many_arguments)]
pub(super) fn grid_hold(
    ad: &Rc<ClassAd>,
    id: JobId,
    now: i64,
    reason: &str,
    code: i64,
    subcode: i64,
    running: bool,
    keep_id: bool,
) -> (Change, Vec<Event>) {
    // `Nonessential = true`: the gridmanager removes the job instead.
    if code != hold_code::JOB_POLICY && ad.eval("Nonessential").is_true() {
        let mut s = vec![
            set("RemoveReason", Expr::string(reason)),
            set("JobStatus", JobStatus::Removed.expr()),
            set("Managed", Expr::string("ScheddDone")),
        ];
        if running {
            s.extend(leave_running(ad, now));
        }
        return (
            policy::leave_or_stay(ad, s),
            vec![Event::aborted(id, reason)],
        );
    }
    let mut extra = vec![
        set("Managed", Expr::string("Schedd")),
        set(
            "NumSystemHolds",
            Expr::int(ad.eval_int("NumSystemHolds").unwrap_or(0) + 1),
        ),
    ];
    if running {
        extra.extend(leave_running(ad, now));
    }
    let mut c = with(policy::hold(ad, now, reason, code, subcode, false), extra);
    if let Change::Update { delete, .. } = &mut c {
        delete.push("GridJobStatus".into());
        if !keep_id {
            delete.push("GridJobId".into());
        }
        delete.retain(|d| ad.contains(d));
    }
    (c, vec![Event::held(id, reason, code, subcode)])
}

/// A job held by someone else, its Slurm job cancelled: let go of it, its
/// Slurm ids cleared (a release submits anew).
fn let_go() -> Change {
    Change::Update {
        set: vec![
            set("Managed", Expr::string("Schedd")),
            set("GridJobId", undefined()),
            set("GridJobStatus", undefined()),
        ],
        delete: vec![],
    }
}

/// A removed job whose remote side is gone: into history (unless
/// LeaveJobInQueue keeps it).
pub(super) fn leave_removed(ad: &Rc<ClassAd>) -> Change {
    policy::leave_or_stay(ad, vec![set("Managed", Expr::string("ScheddDone"))])
}

/// The attributes of a job first seen running (grid spec 1.4).
fn start_running(ad: &Rc<ClassAd>, now: i64) -> Vec<(String, Expr)> {
    let mut s = vec![
        set("JobStatus", JobStatus::Running.expr()),
        set("ShadowBday", Expr::int(now)),
        set("JobCurrentStartDate", Expr::int(now)),
        set("JobCurrentStartExecutingDate", Expr::int(now)),
        set("JobLastStartDate", Expr::int(now)),
        set(
            "NumJobStarts",
            Expr::int(ad.eval_int("NumJobStarts").unwrap_or(0) + 1),
        ),
        set(
            "JobRunCount",
            Expr::int(ad.eval_int("JobRunCount").unwrap_or(0) + 1),
        ),
    ];
    if ad.eval_int("JobStartDate").is_none() {
        s.push(set("JobStartDate", Expr::int(now)));
    }
    s
}

/// A job leaving Running: its wall-clock time added up.
fn leave_running(ad: &Rc<ClassAd>, now: i64) -> Vec<(String, Expr)> {
    let wall = ad.eval_real("RemoteWallClockTime").unwrap_or(0.0);
    let run = ad
        .eval_int("ShadowBday")
        .map(|b| (now - b).max(0))
        .unwrap_or(0);
    vec![
        set(
            "RemoteWallClockTime",
            Expr::Lit(Value::Real(wall + run as f64)),
        ),
        set("ShadowBday", undefined()),
    ]
}

/// A Slurm job that ended: its exit, times and the on-exit policy (grid
/// spec 3.4). A job never seen running gets its execute event and start
/// times from Slurm's own StartTime (BLAHP never shows such a job
/// running), and the wall-clock time is Slurm's, not a poll's.
fn complete(ad: &Rc<ClassAd>, id: JobId, now: i64, e: &Ended, gr: &str) -> (Change, Vec<Event>) {
    let mut evs = Vec::new();
    let mut s: Vec<(String, Expr)> = Vec::new();
    let end = e.end.filter(|t| *t > 0).unwrap_or(now);
    let was_running = ad.eval_int("JobStatus") == Some(JobStatus::Running.code());
    let start = e
        .start
        .filter(|t| *t > 0 && *t <= end)
        .or_else(|| ad.eval_int("ShadowBday"))
        .unwrap_or(end);
    if !was_running {
        evs.push(events::executing(id, start, gr));
        s.extend(start_running(ad, start));
    }
    let wall = ad.eval_real("RemoteWallClockTime").unwrap_or(0.0);
    s.push(set(
        "RemoteWallClockTime",
        Expr::Lit(Value::Real(wall + (end - start).max(0) as f64)),
    ));
    s.push(set("ShadowBday", undefined()));
    s.push(set("LastRemoteStatusUpdate", Expr::int(now)));
    s.push(set("GridJobStatus", Expr::string("COMPLETED")));
    let exit = if e.signal != 0 {
        s.push(set("ExitBySignal", Expr::Lit(Value::Bool(true))));
        s.push(set("ExitSignal", Expr::int(e.signal)));
        s.push(set("ExitCode", undefined()));
        Exit::Signal {
            signal: e.signal,
            core_file: None,
        }
    } else {
        s.push(set("ExitBySignal", Expr::Lit(Value::Bool(false))));
        s.push(set("ExitCode", Expr::int(e.code)));
        Exit::Normal {
            return_value: e.code,
        }
    };
    let (c, mut more) = finish(ad, id, now, s, exit, Some(end));
    evs.append(&mut more);
    (c, evs)
}

/// The end of a remote job whose exit attributes are in `s`: the on-exit
/// policy decides between completion (005, into history unless
/// LeaveJobInQueue), a hold, and another submission.
pub(super) fn finish(
    ad: &Rc<ClassAd>,
    id: JobId,
    now: i64,
    mut s: Vec<(String, Expr)>,
    exit: Exit,
    end: Option<i64>,
) -> (Change, Vec<Event>) {
    let mut after = (**ad).clone();
    for (n, v) in &s {
        after.insert(n, v.clone());
    }
    let after = Rc::new(after);
    match policy::on_exit(&after) {
        ExitDecision::Complete => {
            s.push(set("JobStatus", JobStatus::Completed.expr()));
            s.push(set("CompletionDate", Expr::int(end.unwrap_or(now))));
            s.push(set("Managed", Expr::string("ScheddDone")));
            s.push(set(
                "NumJobCompletions",
                Expr::int(ad.eval_int("NumJobCompletions").unwrap_or(0) + 1),
            ));
            (
                policy::leave_or_stay(ad, s),
                vec![events::terminated(id, now, exit)],
            )
        }
        ExitDecision::Hold { reason, subcode } => {
            let (c, e) = grid_hold(
                &after,
                id,
                now,
                &reason,
                hold_code::JOB_POLICY,
                subcode,
                false,
                false,
            );
            (with(c, s), e)
        }
        ExitDecision::Requeue => {
            // Back to Idle and to the remote system again, as a new
            // submission.
            s.push(set("JobStatus", JobStatus::Idle.expr()));
            s.push(set("GridJobId", undefined()));
            s.push(set("GridJobStatus", undefined()));
            s.push(set("ExitCode", undefined()));
            s.push(set("ExitSignal", undefined()));
            (Change::Set(s), vec![])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::parse_ad;

    fn ad(t: &str) -> Rc<ClassAd> {
        Rc::new(parse_ad(t).unwrap())
    }

    fn sets(c: &Change) -> Vec<(String, String)> {
        let v = match c {
            Change::Set(s) | Change::Leave { set: s } | Change::Update { set: s, .. } => s,
            Change::Skip(_) => return vec![],
        };
        v.iter()
            .map(|(n, e)| (n.clone(), crate::classad::unparse::unparse(e)))
            .collect()
    }

    fn get(c: &Change, n: &str) -> Option<String> {
        sets(c)
            .into_iter()
            .rev()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v)
    }

    const ID: JobId = JobId {
        cluster: 3,
        proc: 0,
    };

    #[test]
    fn a_job_shorter_than_a_poll_is_still_seen_running_with_slurms_times() {
        let a = ad("[JobStatus = 1; RemoteWallClockTime = 0.0]");
        let e = Ended {
            state: "COMPLETED".into(),
            code: 0,
            signal: 0,
            start: Some(100),
            end: Some(103),
        };
        let (c, evs) = complete(&a, ID, 200, &e, "batch slurm");
        assert!(matches!(c, Change::Leave { .. }));
        assert_eq!(
            evs.iter().map(|e| e.kind.number()).collect::<Vec<_>>(),
            [1, 5]
        );
        assert_eq!(evs[0].time, 100);
        assert_eq!(
            get(&c, "RemoteWallClockTime").as_deref(),
            Some("3.000000000000000E+00")
        );
        assert_eq!(get(&c, "JobStartDate").as_deref(), Some("100"));
        assert_eq!(get(&c, "CompletionDate").as_deref(), Some("103"));
        assert_eq!(get(&c, "ExitCode").as_deref(), Some("0"));
        assert_eq!(get(&c, "Managed").as_deref(), Some("\"ScheddDone\""));
    }

    #[test]
    fn exit_codes_and_signals_come_back_as_slurm_reports_them() {
        let a = ad("[JobStatus = 2; ShadowBday = 90; RemoteWallClockTime = 5.0]");
        let e = Ended {
            state: "FAILED".into(),
            code: 3,
            signal: 0,
            start: Some(100),
            end: Some(110),
        };
        let (c, evs) = complete(&a, ID, 200, &e, "batch slurm");
        assert_eq!(evs.len(), 1);
        assert_eq!(get(&c, "ExitCode").as_deref(), Some("3"));
        assert_eq!(get(&c, "ExitBySignal").as_deref(), Some("false"));
        assert_eq!(
            get(&c, "RemoteWallClockTime").as_deref(),
            Some("1.500000000000000E+01")
        );
        let e = Ended {
            signal: 9,
            code: 0,
            ..e
        };
        let (c, _) = complete(&a, ID, 200, &e, "batch slurm");
        assert_eq!(get(&c, "ExitSignal").as_deref(), Some("9"));
        assert_eq!(get(&c, "ExitBySignal").as_deref(), Some("true"));
    }

    #[test]
    fn on_exit_policies_hold_or_requeue_a_grid_job() {
        let e = Ended {
            state: "FAILED".into(),
            code: 2,
            signal: 0,
            start: Some(1),
            end: Some(2),
        };
        let a = ad(
            "[JobStatus = 2; OnExitHold = ExitCode == 2; GridJobId = \"batch slurm x slurm/1/2\"]",
        );
        let (c, evs) = complete(&a, ID, 5, &e, "g");
        assert_eq!(get(&c, "JobStatus").as_deref(), Some("5"));
        assert_eq!(get(&c, "HoldReasonCode").as_deref(), Some("3"));
        assert_eq!(evs.last().unwrap().kind.number(), 12);
        let a = ad("[JobStatus = 2; OnExitRemove = ExitCode == 0]");
        let (c, _) = complete(&a, ID, 5, &e, "g");
        assert_eq!(get(&c, "JobStatus").as_deref(), Some("1"));
        assert_eq!(get(&c, "GridJobId").as_deref(), Some("undefined"));
    }

    #[test]
    fn grid_holds_have_code_zero_and_let_the_job_go() {
        let a = ad("[JobStatus = 1; GridJobId = \"batch slurm x\"; GridJobStatus = \"IDLE\"]");
        let (c, evs) = grid_hold(&a, ID, 5, "why", 0, 0, false, true);
        assert_eq!(get(&c, "HoldReason").as_deref(), Some("\"why\""));
        assert_eq!(get(&c, "HoldReasonCode").as_deref(), Some("0"));
        assert_eq!(get(&c, "Managed").as_deref(), Some("\"Schedd\""));
        assert_eq!(get(&c, "NumSystemHolds").as_deref(), Some("1"));
        match &c {
            Change::Update { delete, .. } => assert_eq!(delete, &["GridJobStatus".to_string()]),
            _ => panic!("a hold updates"),
        }
        assert_eq!(evs[0].kind.number(), 12);
    }

    #[test]
    fn which_grid_jobs_need_the_gridmanager() {
        let ext = ad("[Managed = \"External\"]");
        let done = ad("[Managed = \"ScheddDone\"]");
        let none = ad("[]");
        assert!(needs_work(Some(JobStatus::Idle), &none));
        assert!(needs_work(Some(JobStatus::Removed), &ext));
        assert!(!needs_work(Some(JobStatus::Removed), &done));
        assert!(needs_work(Some(JobStatus::Held), &ext));
        assert!(!needs_work(Some(JobStatus::Held), &none));
        assert!(!needs_work(Some(JobStatus::Completed), &ext));
    }
}
