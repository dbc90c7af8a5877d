//! The shadow: the small supervisor of one claim. The pass starts it
//! (detached, in its own session) with the job's lock already held; it runs
//! the job, keeps its usage, carries out stop and suspend requests, records
//! the exit, and then either runs the next idle job of the same submitter
//! that matches its slot (claim reuse, with no new pass and no new process)
//! or lets the slot go and asks for a pass.
//!
//! Every state change is one queue transaction; events go to the job's
//! event log after the commit. A shadow that dies leaves its jobs' locks
//! free, and the next pass puts the job back to Idle.
//!
//! One job's run, in the order `Shadow::run_one` takes the steps, one
//! duty a file (as pueue's `process_handler/` has a file per verb):
//!
//! - `deferral.rs`: a job with a DeferralTime waits for it, Running.
//! - `transfer.rs` and `hooks.rs`: the sandbox, the input transfer and
//!   the starter job hooks around it (PREPARE_JOB_BEFORE_TRANSFER,
//!   PREPARE_JOB); UPDATE_JOB_INFO runs beside the job, JOB_EXIT after it
//!   and before the output comes back.
//! - `start.rs`: the start plan (identity, files, arguments, environment)
//!   and the spawn; a job that cannot start becomes a [`Hold`].
//! - `supervise.rs`: the loop while the job runs: requests from the tools
//!   and the pass, the shadow's own stop signals, usage updates, suspend
//!   and continue, and the vacate timing (kill_sig, then SIGKILL).
//! - `finish.rs`: what the end means (exit classification, the on-exit
//!   policy, stops), committed in one transaction with its events, and the
//!   claim handed to the next job ([`crate::negotiator::reuse`] picks it).
//! - [`procs`]: the OS layer under all of them: signals, the process
//!   tree, usage and reaping.

mod deferral;
mod finish;
mod hooks;
mod linger;
#[allow(unsafe_code)]
pub mod procs;
mod start;
mod supervise;
mod transfer;

use std::path::PathBuf;
use std::rc::Rc;

use crate::classad::ClassAd;
use crate::config::{Config, ConfigError};
use crate::machine::{self, Machine, MachineError, SlotRow};
use crate::negotiator::accountant::Knobs;
use crate::negotiator::{NegotiatorError, launch};
use crate::queue::{Change, JobId, JobRow, Limits, Queue, QueueError, joblock};
use crate::vocab::{Hold, JobStatus, Request, hold_code};

use deferral::Deferral;
use finish::{After, RunEnd};
use procs::Signals;

/// What stopped a shadow, and what it was about.
#[derive(Debug, thiserror::Error)]
pub enum ShadowError {
    #[error(transparent)]
    Queue(#[from] QueueError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Negotiator(#[from] NegotiatorError),
    #[error("SPOOL is not set")]
    NoSpool,
    #[error("there is no queue in {}", spool.display())]
    NoQueue { spool: PathBuf },
    #[error("cannot set up signals: {0}")]
    Signals(#[source] std::io::Error),
    #[error("cannot detect this machine: {0}")]
    Machine(#[source] MachineError),
    #[error("slot {slot}: {source}")]
    Slot { slot: String, source: MachineError },
    /// `TERN_SHADOW_LOCK_FD` is not a descriptor number.
    #[error("TERN_SHADOW_LOCK_FD '{value}' is not a descriptor number")]
    LockFd { value: String },
    /// The job's lock could not be adopted, taken or written.
    #[error("cannot use the lock of job {job}: {source}")]
    Lock { job: JobId, source: std::io::Error },
    #[error("job {job} already has a live shadow")]
    AlreadySupervised { job: JobId },
    /// `$$()` in the job ad could not be expanded from its match.
    #[error("job {job}: {msg}")]
    Substitute { job: JobId, msg: String },
}

fn lock_error(job: JobId) -> impl FnOnce(std::io::Error) -> ShadowError {
    move |source| ShadowError::Lock { job, source }
}

/// The arguments the pass gives a shadow.
pub struct Args {
    pub job: JobId,
    pub slot: String,
    pub claim: String,
}

/// Why a run stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    Remove,
    Hold,
    Vacate,
    /// Vacated for a submitter with a better priority.
    Preempt,
    /// Vacated for a job the slot's RANK prefers.
    PreemptRank,
    /// Vacated by the job's own PeriodicVacate.
    PolicyVacate,
    /// The shadow itself was told to stop (SIGTERM and friends).
    Shutdown,
}

impl Stop {
    /// The stop a request asks for; `None` for suspend and continue.
    fn requested(r: Request) -> Option<Stop> {
        Some(match r {
            Request::Remove => Stop::Remove,
            Request::Hold => Stop::Hold,
            Request::Preempt => Stop::Preempt,
            Request::PreemptRank => Stop::PreemptRank,
            Request::PolicyVacate => Stop::PolicyVacate,
            Request::Vacate | Request::VacateFast => Stop::Vacate,
            Request::Suspend | Request::Continue => return None,
        })
    }
}

struct Shadow {
    cfg: Config,
    spool: PathBuf,
    q: Queue,
    machine: Machine,
    slot: String,
    claim: String,
    host: String,
    signals: Signals,
    /// The job was suspended while it waited for its deferral time.
    start_suspended: bool,
    /// Read once: what claim reuse asks the accountant with.
    knobs: Knobs,
    uid_domain: String,
    update_initial: u64,
    update_every: u64,
    killing_timeout: u64,
    /// A job that executed, and when, not yet recorded in the queue (see
    /// [`Shadow::executing`]).
    pending_exec: Option<start::PendingExec>,
    /// The ad files' texts of expressions the jobs share.
    old_texts: crate::classad::unparse::OldTexts,
    /// Where and how runs get their sandboxes.
    sandbox: crate::sandbox::Knobs,
    /// How long a claim with nothing to run waits for work (ms).
    linger_ms: u64,
    /// JOB_RENICE_INCREMENT, evaluated in each job's ad at its start.
    renice: crate::classad::Expr,
    /// SCHED_UNIV_RENICE_INCREMENT (0-19), for scheduler universe jobs.
    sched_univ_renice: i32,
    /// The lock file of the last job that left, for the next one's lock.
    spare: std::cell::RefCell<joblock::Spare>,
}

pub fn run(args: Args) -> Result<(), ShadowError> {
    let signals = Signals::install().map_err(ShadowError::Signals)?;
    procs::become_subreaper();
    let cfg = Config::load()?;
    let spool = PathBuf::from(cfg.get("SPOOL")?.ok_or(ShadowError::NoSpool)?);
    let lock = job_lock(&spool, args.job)?;
    let mut signals = signals;
    let me = std::process::id();
    match joblock::install_doorbell(&spool, me) {
        Ok(bell) => signals.ring_with(bell),
        // Without it a tool that may not signal us waits for our poll.
        Err(e) => note!("tern_shadow: no doorbell: {e}"),
    }
    let mut sh = Shadow::open(cfg, spool, signals, args.slot, args.claim)?;
    let ran = sh.run_claim(args.job, lock);
    // The sandbox's last run is over.
    crate::sandbox::Sandbox::remove(&sh.sandbox, &me.to_string());
    joblock::remove_doorbell(&sh.spool, me);
    sh.spare.get_mut().discard();
    // Also after a failure (its job's lock is free by now): the pass puts
    // the claim right, and a submit that found the slot taken relied on
    // this shadow to ask for one (negotiator::on_submit).
    if sh.cfg.get_bool("NEGOTIATE_ON_EXIT", true).unwrap_or(true) {
        let _ = crate::negotiator::request_pass(&sh.cfg, &sh.spool);
    }
    ran
}

/// The job's lock: the one the pass handed over in `TERN_SHADOW_LOCK_FD`,
/// or, for a shadow started by hand, taken here.
fn job_lock(spool: &std::path::Path, job: JobId) -> Result<joblock::JobLock, ShadowError> {
    match std::env::var("TERN_SHADOW_LOCK_FD") {
        Ok(value) => {
            let fd = value
                .parse::<i32>()
                .map_err(|_| ShadowError::LockFd { value })?;
            // The job must not inherit the lock: only we keep it alive.
            let file = crate::sys::inherited::adopt(fd).map_err(lock_error(job))?;
            Ok(joblock::JobLock { file, id: job })
        }
        Err(_) => joblock::try_acquire(spool, job)
            .map_err(lock_error(job))?
            .ok_or(ShadowError::AlreadySupervised { job }),
    }
}

impl Shadow {
    /// Runs the claim's jobs, from `job` on, until the claim ends.
    fn run_claim(&mut self, mut job: JobId, mut lock: joblock::JobLock) -> Result<(), ShadowError> {
        loop {
            lock.write_pid(std::process::id(), None)
                .map_err(lock_error(job))?;
            let next = match self.run_one(job, lock)? {
                After::Next(next, next_lock) => Some((next, next_lock)),
                After::Linger(last) => self.linger(last)?,
                After::Done => None,
            };
            let Some((next, next_lock)) = next else {
                return Ok(());
            };
            job = next;
            lock = next_lock;
        }
    }

    /// Everything a shadow reads once: the machine, the queue, the knobs.
    fn open(
        cfg: Config,
        spool: PathBuf,
        signals: Signals,
        slot: String,
        claim: String,
    ) -> Result<Shadow, ShadowError> {
        let machine = Machine::detect(&cfg).map_err(ShadowError::Machine)?;
        let mut q = Queue::open(&spool, false)?.ok_or_else(|| ShadowError::NoQueue {
            spool: spool.clone(),
        })?;
        q.set_limits(Limits::from_config(&cfg)?);
        // The log's upkeep waits until a job runs (`supervise`).
        q.defer_log_upkeep();
        let machine = machine.with_hooks(q.conn()).map_err(ShadowError::Machine)?;
        let seconds = |knob: &str, default: i64, min: i64| -> Result<u64, ConfigError> {
            Ok(cfg.get_int(knob, default)?.max(min) as u64)
        };
        Ok(Shadow {
            update_initial: seconds("STARTER_INITIAL_UPDATE_INTERVAL", 8, 1)?,
            update_every: seconds("STARTER_UPDATE_INTERVAL", 300, 1)?,
            killing_timeout: seconds("KILLING_TIMEOUT", 30, 0)?,
            linger_ms: cfg.get_int("SHADOW_LINGER_MSEC", 250)?.clamp(0, 60_000) as u64,
            renice: cfg.get_expr("JOB_RENICE_INCREMENT", "0")?,
            sched_univ_renice: cfg.get_int("SCHED_UNIV_RENICE_INCREMENT", 0)?.clamp(0, 19) as i32,
            spare: Default::default(),
            knobs: Knobs::from_config(&cfg)?,
            sandbox: crate::sandbox::Knobs::from_config(&cfg, &machine.filesystem_domain)?,
            uid_domain: crate::negotiator::uid_domain(&cfg)?,
            host: machine.host.clone(),
            cfg,
            spool,
            q,
            machine,
            slot,
            claim,
            signals,
            start_suspended: false,
            pending_exec: None,
            old_texts: Default::default(),
        })
    }

    /// Runs one job of this claim to its end and commits the end; says
    /// what the claim does next.
    fn run_one(&mut self, id: JobId, mut lock: joblock::JobLock) -> Result<After, ShadowError> {
        let now = crate::clock::now();
        // Is the job still ours?
        let (row, ad, slot) = match self.read_job(id)? {
            Claimed::Gone => {
                self.release_if_ours(id, now)?;
                return Ok(After::Done);
            }
            Claimed::Lost => return Ok(After::Done),
            Claimed::Job(job) => {
                let (row, ad, slot) = *job;
                (row, Rc::new(ad), slot)
            }
        };
        if let Some(end) = self.before_run(id, row.status(), &ad)? {
            return self.finish(id, lock, end, false);
        }
        // A deferred job may have waited: its ad files show the slot as
        // it is now.
        let slot = match ad.eval_int("DeferralTime") {
            Some(_) => self.slot_row()?,
            None => slot,
        };
        let run_ad = Rc::new(
            crate::negotiator::dollar::substituted(&ad)
                .map_err(|msg| ShadowError::Substitute { job: id, msg })?,
        );
        // The job's starter hooks (`hooks.rs`), as its owner.
        let ep = format!("{}@{}", self.slot, self.host);
        let hooks = match start::identity(&run_ad)
            .and_then(|owner| hooks::JobHooks::resolve(&self.cfg, &self.spool, id, &ad, &ep, owner))
        {
            Ok(h) => h,
            Err(hold) => return self.finish(id, lock, RunEnd::failed(hold), false),
        };
        // The sandbox, the inputs and the PREPARE hooks; a failure holds
        // or requeues the job, which then never started (no 001,
        // NumJobStarts unchanged).
        let staged = match self.stage(id, &run_ad, hooks.as_ref(), slot.as_ref()) {
            Ok(s) => s,
            Err(r) => return self.finish(id, lock, RunEnd::refused(r), false),
        };
        // What the PREPARE hooks changed is in every ad of the run: the
        // start, the shadow's policy and the output transfer read it. The
        // queue gets it with the start (see `Shadow::executing`), so a job
        // stopped before it starts, or a shadow killed before, keeps none.
        let ad = hooks::with_changes(&ad, &staged.changed);
        let run_ad = hooks::with_changes(&run_ad, &staged.changed);
        let end = match self.run_staged(id, &ad, hooks.as_ref(), &staged, &mut lock) {
            Ok(Ok(end)) => end,
            Ok(Err(stop)) => {
                staged.discard();
                return self.finish(id, lock, RunEnd::stopped(stop), false);
            }
            Err(e) => {
                staged.discard();
                return Err(e);
            }
        };
        let end = self.unstage(id, &run_ad, staged, end);
        let started = end.failed.is_none();
        self.finish(id, lock, end, started)
    }

    /// A run that ends before anything of it starts: a request made
    /// before the shadow started (the job's status `status` says which),
    /// or a deferred job that missed its time or was stopped while it
    /// waited (it waits here, Running, until its DeferralTime).
    fn before_run(
        &mut self,
        id: JobId,
        status: Option<JobStatus>,
        ad: &Rc<ClassAd>,
    ) -> Result<Option<RunEnd>, ShadowError> {
        if status != Some(JobStatus::Running) {
            let stop = match status {
                Some(JobStatus::Removed) => Stop::Remove,
                Some(JobStatus::Held) => Stop::Hold,
                _ => Stop::Vacate,
            };
            return Ok(Some(RunEnd::stopped(stop)));
        }
        self.start_suspended = false;
        Ok(match self.wait_deferral(id, ad)? {
            Deferral::Run => None,
            Deferral::Missed => Some(RunEnd::failed(Hold::new(
                "Job missed deferred execution time",
                hold_code::MISSED_DEFERRED_EXECUTION_TIME,
                0,
            ))),
            Deferral::Stopped(stop) => Some(RunEnd::stopped(stop)),
        })
    }

    /// Starts the staged run of `ad` (its PREPARE changes merged) and
    /// supervises it to its end, JOB_EXIT included; `Err(stop)` when a stop
    /// was asked for while the PREPARE hooks ran, and the job never
    /// started. The caller owns the sandbox, on every path.
    fn run_staged(
        &mut self,
        id: JobId,
        ad: &Rc<ClassAd>,
        hooks: Option<&hooks::JobHooks>,
        staged: &transfer::Staged,
        lock: &mut joblock::JobLock,
    ) -> Result<Result<RunEnd, Stop>, ShadowError> {
        // PREPARE hooks may take minutes: a stop asked for meanwhile is
        // honoured before the job starts.
        if hooks.is_some_and(hooks::JobHooks::prepares)
            && let Some(stop) = self.pending(id)?.into_iter().find_map(Stop::requested)
        {
            return Ok(Err(stop));
        }
        // A PREPARE hook's leftovers are not the job's processes.
        if hooks.is_some() {
            procs::spare_strays();
        }
        let plan = start::prepare(staged.run.clone(), staged.env.clone(), staged.owner.clone());
        let pid = match plan.and_then(|p| self.start(id, ad, &p, &staged.execute_props)) {
            Err(hold) => return Ok(Ok(RunEnd::failed(hold))),
            Ok(pid) => pid,
        };
        let ad = self.executing(id, ad, staged.changed.clone());
        let _ = lock.write_pid(std::process::id(), Some(pid));
        let around = hooks.map(|h| hooks::Around {
            hooks: h,
            run: &staged.run,
            ctx: hooks::Ctx {
                env: &staged.env,
                cwd: staged.scratch(),
            },
        });
        let began = std::time::Instant::now();
        let mut end = self.supervise(id, &ad, pid, around.as_ref())?;
        if let Some(a) = &around {
            self.job_exit(id, &ad, a, pid, began.elapsed(), &mut end)?;
        }
        Ok(Ok(end))
    }

    /// Runs JOB_EXIT for a run that has ended, before its output comes
    /// back and before its end is recorded; a failure is noted in the event
    /// log and, with the end, in the job's StarterHookFailure attributes.
    fn job_exit(
        &mut self,
        id: JobId,
        ad: &Rc<ClassAd>,
        a: &hooks::Around<'_>,
        pid: i32,
        ran: std::time::Duration,
        end: &mut RunEnd,
    ) -> Result<(), ShadowError> {
        let started = ad.eval_int("JobCurrentStartExecutingDate").unwrap_or(0);
        let mut extra = hooks::update_attrs(None, pid, started, &end.usage);
        extra.extend(hooks::exit_attrs(end.status, ran));
        let stdin = hooks::ad_with(a.run, &extra);
        // Read the queue's word: a job held or removed while it ran ends
        // that way even if it exited first.
        let stop = match self.q.row(id)?.and_then(|r| r.status()) {
            Some(JobStatus::Removed) => Some(Stop::Remove),
            Some(JobStatus::Held) => Some(Stop::Hold),
            _ => end.stop,
        };
        if let Some(Some(failure)) = a.hooks.job_exit(hooks::exit_argument(stop), &stdin, &a.ctx) {
            a.hooks.note(false, &failure, None);
            end.attrs
                .extend(hooks::failure_attrs(&failure, crate::clock::now()));
        }
        Ok(())
    }

    /// The job, its full ad and this shadow's slot, read in one snapshot
    /// (see [`crate::queue::Queue::snapshot`]), when the slot still holds
    /// this shadow's claim for the job (the scheduler universe has no slot
    /// to lose).
    fn read_job(&self, id: JobId) -> Result<Claimed, ShadowError> {
        let _snapshot = self.q.snapshot()?;
        let Some(row) = self.q.row(id)? else {
            return Ok(Claimed::Gone);
        };
        let slot = self.slot_row()?;
        let held = self.slot == launch::SCHEDULER
            || slot.as_ref().is_some_and(|s| {
                s.cluster == Some(id.cluster)
                    && s.proc == Some(id.proc)
                    && s.claim.as_deref() == Some(&self.claim)
            });
        if !held {
            return Ok(Claimed::Lost);
        }
        let ad = self.q.full_ad(&row)?;
        Ok(Claimed::Job(Box::new((row, ad, slot))))
    }

    /// This shadow's slot's row (none for the scheduler universe).
    fn slot_row(&self) -> Result<Option<SlotRow>, ShadowError> {
        if self.slot == launch::SCHEDULER {
            return Ok(None);
        }
        machine::load_slot(self.q.conn(), &self.slot).map_err(|source| ShadowError::Slot {
            slot: self.slot.clone(),
            source,
        })
    }

    /// Applies `change` to the job, if it is still in the queue, in one
    /// transaction.
    fn set_job(&mut self, id: JobId, now: i64, change: Change) -> Result<(), ShadowError> {
        self.q.write(now, |w| {
            let Some(r) = w.row(id)? else { return Ok(()) };
            let cur = w.full_ad(&r)?;
            w.change(&r, &cur, &change)
        })?;
        Ok(())
    }

    fn release_if_ours(&mut self, id: JobId, now: i64) -> Result<(), ShadowError> {
        let slot = self.slot.clone();
        let claim = self.claim.clone();
        self.q
            .write(now, |w| release_slot_if(w, &slot, &claim, id, now))?;
        Ok(())
    }
}

/// What a run reads of the queue before it starts ([`Shadow::read_job`]).
enum Claimed {
    /// The job left the queue.
    Gone,
    /// The slot no longer holds this shadow's claim for the job.
    Lost,
    /// The job's row and full ad, and the slot's row.
    Job(Box<(JobRow, ClassAd, Option<SlotRow>)>),
}

/// Lets the slot go if it still holds this claim and job.
fn release_slot_if(
    w: &mut crate::queue::Writer<'_>,
    slot: &str,
    claim: &str,
    id: JobId,
    now: i64,
) -> Result<(), QueueError> {
    if slot == launch::SCHEDULER {
        return Ok(());
    }
    let s = machine::load_slot(w.conn(), slot)?;
    if let Some(s) = s
        && s.claim.as_deref() == Some(claim)
        && s.cluster == Some(id.cluster)
        && s.proc == Some(id.proc)
    {
        crate::negotiator::free_slot(w.conn(), &s, now)?;
    }
    Ok(())
}
