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

pub mod procs;

use std::fs::File;
use std::os::fd::FromRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::classad::{ClassAd, Evaluator, Expr, MatchContext, Value};
use crate::config::Config;
use crate::machine::{self, Machine};
use crate::negotiator::{launch, policy};
use crate::queue::{Change, JobId, Limits, Queue, QueueError, joblock, status};
use crate::userlog::{self, Event, EventKind, Eviction, Exit, Rusage, Termination};
use crate::vocab::Request;

use procs::{Signals, Wake};

#[derive(Debug, thiserror::Error)]
pub enum ShadowError {
    #[error(transparent)]
    Queue(#[from] QueueError),
    #[error("{0}")]
    Other(String),
}

fn other(e: impl std::fmt::Display) -> ShadowError {
    ShadowError::Other(e.to_string())
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
    /// The shadow itself was told to stop (SIGTERM and friends).
    Shutdown,
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
    knobs: crate::negotiator::accountant::Knobs,
    uid_domain: String,
    update_initial: u64,
    update_every: u64,
    killing_timeout: u64,
}

/// What the deferral wait decided.
enum Deferral {
    Run,
    Missed,
    Stopped(Stop),
}

/// How a run ended.
struct RunEnd {
    /// The wait status, when the job's process ended by itself or by our
    /// signal.
    status: Option<std::process::ExitStatus>,
    stop: Option<Stop>,
    usage: procs::Usage,
    /// The job could not be started: hold reason, code, subcode.
    failed: Option<(String, i64, i64)>,
}

pub fn run(args: Args) -> Result<(), ShadowError> {
    let signals = Signals::install().map_err(|e| other(format!("cannot set up signals: {e}")))?;
    procs::become_subreaper();
    let cfg = Config::load().map_err(other)?;
    let spool = PathBuf::from(
        cfg.get("SPOOL")
            .map_err(other)?
            .ok_or_else(|| other("SPOOL is not set"))?,
    );
    let mut lock = match std::env::var("TERN_SHADOW_LOCK_FD") {
        // SAFETY: the pass opened this descriptor for us and nobody else
        // owns it in this process.
        Ok(fd) => {
            let fd = fd.parse::<i32>().map_err(other)?;
            // The job must not inherit the lock: only we keep it alive.
            // SAFETY: fcntl on a descriptor we own.
            unsafe {
                let flags = libc::fcntl(fd, libc::F_GETFD);
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
            joblock::JobLock {
                file: unsafe { File::from_raw_fd(fd) },
                id: args.job,
            }
        }
        Err(_) => joblock::try_acquire(&spool, args.job)
            .map_err(other)?
            .ok_or_else(|| other(format!("job {} already has a live shadow", args.job)))?,
    };
    let machine = Machine::detect(&cfg).map_err(other)?;
    let mut q = Queue::open(&spool, false)?.ok_or_else(|| other("there is no queue"))?;
    q.set_limits(Limits::from_config(&cfg).map_err(other)?);
    q.skip_write_check();
    let host = machine.host.clone();
    let knobs = crate::negotiator::accountant::Knobs::from_config(&cfg).map_err(other)?;
    let uid_domain = crate::negotiator::uid_domain(&cfg).map_err(other)?;
    let mut sh = Shadow {
        update_initial: cfg
            .get_int("STARTER_INITIAL_UPDATE_INTERVAL", 2)
            .map_err(other)?
            .max(1) as u64,
        update_every: cfg
            .get_int("STARTER_UPDATE_INTERVAL", 300)
            .map_err(other)?
            .max(1) as u64,
        killing_timeout: cfg.get_int("KILLING_TIMEOUT", 30).map_err(other)?.max(0) as u64,
        cfg,
        spool,
        q,
        machine,
        slot: args.slot,
        claim: args.claim,
        host,
        signals,
        start_suspended: false,
        knobs,
        uid_domain,
    };
    let mut job = args.job;
    loop {
        lock.write_pid(std::process::id(), None).map_err(other)?;
        match sh.run_one(job, lock)? {
            Some((next, next_lock)) => {
                job = next;
                lock = next_lock;
            }
            None => break,
        }
    }
    if sh.cfg.get_bool("NEGOTIATE_ON_EXIT", true).unwrap_or(true) {
        let _ = launch::spawn_background_pass(&sh.cfg);
    }
    Ok(())
}

fn int(ad: &Rc<ClassAd>, name: &str) -> Option<i64> {
    match policy::eval_attr(ad, name) {
        Value::Int(i) => Some(i),
        Value::Real(r) => Some(r as i64),
        _ => None,
    }
}

fn string(ad: &Rc<ClassAd>, name: &str) -> Option<String> {
    match policy::eval_attr(ad, name) {
        Value::Str(s) => Some(s.to_string()),
        _ => None,
    }
}

fn real(v: f64) -> Expr {
    Expr::Lit(Value::Real(v))
}

impl Shadow {
    /// Runs one job of this claim to its end and commits the end. Returns
    /// the next job when the claim is reused.
    fn run_one(
        &mut self,
        id: JobId,
        mut lock: joblock::JobLock,
    ) -> Result<Option<(JobId, joblock::JobLock)>, ShadowError> {
        let now = crate::clock::now();
        // Is the job still ours?
        let Some(row) = self.q.row(id)? else {
            self.release_if_ours(id, now)?;
            return Ok(None);
        };
        let slot_ok = self.slot == launch::SCHEDULER
            || machine::load_slot(self.q.conn(), &self.slot)
                .map_err(other)?
                .is_some_and(|s| {
                    s.cluster == Some(id.cluster)
                        && s.proc == Some(id.proc)
                        && s.claim.as_deref() == Some(&self.claim)
                });
        if !slot_ok {
            return Ok(None);
        }
        let ad = Rc::new(self.q.full_ad(&row)?);
        // A request made before we started is honoured first.
        if row.status != status::RUNNING {
            let stop = match row.status {
                status::REMOVED => Stop::Remove,
                status::HELD => Stop::Hold,
                _ => Stop::Vacate,
            };
            return self.finish(
                id,
                lock,
                RunEnd {
                    status: None,
                    stop: Some(stop),
                    usage: procs::Usage::default(),
                    failed: None,
                },
                false,
            );
        }
        // A deferred job waits here, Running, until its DeferralTime.
        self.start_suspended = false;
        match self.wait_deferral(id, &ad)? {
            Deferral::Run => {}
            Deferral::Missed => {
                let end = RunEnd {
                    status: None,
                    stop: None,
                    usage: procs::Usage::default(),
                    failed: Some((
                        "Job missed deferred execution time".into(),
                        policy::hold_code::MISSED_DEFERRED_EXECUTION_TIME,
                        0,
                    )),
                };
                return self.finish(id, lock, end, false);
            }
            Deferral::Stopped(stop) => {
                let end = RunEnd {
                    status: None,
                    stop: Some(stop),
                    usage: procs::Usage::default(),
                    failed: None,
                };
                return self.finish(id, lock, end, false);
            }
        }
        let run_ad = crate::negotiator::dollar::substituted(&ad).map_err(other)?;
        let end = match prepare(&run_ad) {
            Err(failed) => RunEnd {
                status: None,
                stop: None,
                usage: procs::Usage::default(),
                failed: Some(failed),
            },
            Ok(plan) => self.execute(id, &ad, plan, &mut lock)?,
        };
        let started = end.failed.is_none();
        self.finish(id, lock, end, started)
    }

    /// Starts the job and supervises it until it ends.
    fn execute(
        &mut self,
        id: JobId,
        ad: &Rc<ClassAd>,
        plan: Plan,
        lock: &mut joblock::JobLock,
    ) -> Result<RunEnd, ShadowError> {
        // 001 before the job starts: a shadow killed just after the start
        // must not leave a run without its execute event.
        self.started(id, ad, crate::clock::now())?;
        let spawned = match plan.ident.clone() {
            None => {
                use std::os::fd::AsRawFd;
                crate::sys::spawn(&crate::sys::Spawn {
                    exe: &plan.exe,
                    args: &plan.args,
                    env: Some(&plan.env),
                    extra_env: &[],
                    dir: Some(&plan.iwd),
                    stdio: [
                        Some(plan.stdin.as_raw_fd()),
                        Some(plan.stdout.as_raw_fd()),
                        Some(plan.stderr.as_raw_fd()),
                    ],
                    new_session: false,
                })
            }
            Some(id) => spawn_as(&plan, id),
        };
        let pid = match spawned {
            Ok(pid) => pid,
            Err(e) => {
                return Ok(RunEnd {
                    status: None,
                    stop: None,
                    usage: procs::Usage::default(),
                    failed: Some((
                        format!(
                            "Error from {}@{}: Failed to execute '{}': {}",
                            self.slot,
                            self.host,
                            plan.exe.display(),
                            io_text(&e)
                        ),
                        policy::hold_code::FAILED_TO_CREATE_PROCESS,
                        e.raw_os_error().unwrap_or(0) as i64,
                    )),
                });
            }
        };
        let _ = lock.write_pid(std::process::id(), Some(pid));
        self.supervise(id, ad, pid)
    }

    /// Writes the start's event 001 (the start's attributes were recorded
    /// with the claim, so JobStatus 2 never shows beside the previous
    /// run's start date).
    fn started(&mut self, id: JobId, ad: &Rc<ClassAd>, now: i64) -> Result<(), ShadowError> {
        if let Some(p) = userlog::user_log_path(ad) {
            let e = Event {
                id: id.into(),
                time: now,
                kind: EventKind::Execute {
                    host: userlog::local_sinful(),
                    slot_name: Some(format!("{}@{}", self.slot, self.host)),
                    props: Vec::new(),
                },
            };
            let _ = userlog::log_job_events(&[(p, e)]);
        }
        Ok(())
    }

    /// Waits, the job shown Running with DeferralWaitUntil, until its
    /// DeferralTime (spec 1.6): a job that arrives more than DeferralWindow
    /// late missed it; stop requests end the wait; a suspend is kept for
    /// the start.
    fn wait_deferral(&mut self, id: JobId, ad: &Rc<ClassAd>) -> Result<Deferral, ShadowError> {
        let Some(when) = int(ad, "DeferralTime") else {
            return Ok(Deferral::Run);
        };
        let window = int(ad, "DeferralWindow").unwrap_or(0);
        let now = crate::clock::now();
        let delta = when - now;
        if delta < -window {
            return Ok(Deferral::Missed);
        }
        if delta <= 0 {
            return Ok(Deferral::Run);
        }
        self.q.write(now, |w| {
            let Some(r) = w.row(id)? else { return Ok(()) };
            let cur = w.full_ad(&r)?;
            w.change(
                &r,
                &cur,
                &Change::Set(vec![("DeferralWaitUntil".into(), Expr::int(when))]),
            )
        })?;
        let until = Instant::now() + Duration::from_secs(delta as u64);
        let mut wake = Wake::Request;
        loop {
            match wake {
                Wake::Stop => return Ok(Deferral::Stopped(Stop::Shutdown)),
                Wake::Request => {
                    for kind in self.pending(id)? {
                        match kind {
                            Request::Remove => return Ok(Deferral::Stopped(Stop::Remove)),
                            Request::Hold => return Ok(Deferral::Stopped(Stop::Hold)),
                            Request::Preempt => return Ok(Deferral::Stopped(Stop::Preempt)),
                            Request::PreemptRank => {
                                return Ok(Deferral::Stopped(Stop::PreemptRank));
                            }
                            Request::Vacate | Request::VacateFast => {
                                return Ok(Deferral::Stopped(Stop::Vacate));
                            }
                            Request::Suspend if !self.start_suspended => {
                                self.start_suspended = true;
                                self.suspend_change(id, ad, true, 0)?;
                            }
                            Request::Continue if self.start_suspended => {
                                self.start_suspended = false;
                                self.suspend_change(id, ad, false, 0)?;
                            }
                            _ => {}
                        }
                    }
                }
                Wake::Child | Wake::Timeout => {}
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                // It executes now: the wait is over.
                let now = crate::clock::now();
                self.q.write(now, |w| {
                    let Some(r) = w.row(id)? else { return Ok(()) };
                    let cur = w.full_ad(&r)?;
                    w.change(
                        &r,
                        &cur,
                        &Change::Update {
                            set: vec![("JobCurrentStartExecutingDate".into(), Expr::int(now))],
                            delete: vec!["DeferralWaitUntil".into()],
                        },
                    )
                })?;
                return Ok(Deferral::Run);
            }
            wake = self.signals.wait(left.as_millis().min(5000) as i64 + 1);
            if wake == Wake::Timeout && !until.saturating_duration_since(Instant::now()).is_zero() {
                wake = Wake::Request;
            }
        }
    }

    /// Waits for the job, taking requests and updating usage, until it
    /// ends.
    fn supervise(&mut self, id: JobId, ad: &Rc<ClassAd>, pid: i32) -> Result<RunEnd, ShadowError> {
        let start = Instant::now();
        let mut next_update = start + Duration::from_secs(self.update_initial);
        let mut next_poll = start + Duration::from_secs(5);
        let mut kill_at: Option<Instant> = None;
        let mut stop: Option<Stop> = None;
        let mut suspended = false;
        if self.start_suspended {
            // Suspended while it waited for its deferral time: it starts
            // and is at once suspended (010 was written then).
            procs::signal_all(pid, libc::SIGSTOP);
            suspended = true;
        }
        let mut usage = procs::Usage::default();
        let mut dead = procs::Usage::default();
        let mut reported_image = int(ad, "ImageSize").unwrap_or(0);
        let mut exit: Option<std::process::ExitStatus> = None;
        let me = std::process::id() as i32;
        // Requests made before we wrote our pid.
        let mut wake = Wake::Request;
        loop {
            match wake {
                Wake::Child | Wake::Timeout => {}
                Wake::Request => {
                    for kind in self.pending(id)? {
                        match kind {
                            _ if kind.stops() => {
                                if stop.is_none() {
                                    stop = Some(match kind {
                                        Request::Remove => Stop::Remove,
                                        Request::Hold => Stop::Hold,
                                        Request::Preempt => Stop::Preempt,
                                        Request::PreemptRank => Stop::PreemptRank,
                                        _ => Stop::Vacate,
                                    });
                                    if suspended {
                                        procs::signal_all(pid, libc::SIGCONT);
                                    }
                                    if kind == Request::VacateFast {
                                        procs::signal_all(pid, libc::SIGKILL);
                                        kill_at = Some(Instant::now());
                                    } else {
                                        procs::signal_all(pid, kill_sig(ad));
                                        kill_at = Some(
                                            Instant::now()
                                                + Duration::from_secs(self.vacate_time(ad)),
                                        );
                                    }
                                } else if kind == Request::VacateFast || kind == Request::Remove {
                                    // A harder request overrides a softer one.
                                    if kind == Request::Remove {
                                        stop = Some(Stop::Remove);
                                    }
                                    if kind == Request::VacateFast {
                                        procs::signal_all(pid, libc::SIGKILL);
                                    }
                                }
                            }
                            Request::Suspend if !suspended && stop.is_none() => {
                                let n = procs::signal_all(pid, libc::SIGSTOP);
                                suspended = true;
                                self.suspend_change(id, ad, true, n)?;
                            }
                            Request::Continue if suspended => {
                                procs::signal_all(pid, libc::SIGCONT);
                                suspended = false;
                                self.suspend_change(id, ad, false, 0)?;
                            }
                            _ => {}
                        }
                    }
                }
                Wake::Stop => {
                    if stop.is_none() {
                        stop = Some(Stop::Shutdown);
                        if suspended {
                            procs::signal_all(pid, libc::SIGCONT);
                        }
                        procs::signal_all(pid, kill_sig(ad));
                        kill_at = Some(Instant::now() + Duration::from_secs(self.vacate_time(ad)));
                    }
                }
            }
            for r in procs::reap() {
                dead.user += r.user;
                dead.sys += r.sys;
                if r.pid == pid {
                    exit = Some(std::process::ExitStatus::from_raw(r.status));
                }
            }
            if exit.is_some() {
                break;
            }
            let now = Instant::now();
            if let Some(k) = kill_at
                && now >= k
            {
                procs::signal_all(pid, libc::SIGKILL);
                kill_at = Some(now + Duration::from_secs(1));
            }
            if now >= next_update {
                let live = procs::usage(&procs::descendants(me));
                usage.user = usage.user.max(live.user + dead.user);
                usage.sys = usage.sys.max(live.sys + dead.sys);
                usage.image_size = usage.image_size.max(live.image_size);
                usage.rss = live.rss;
                self.update_usage(id, ad, &usage, &mut reported_image)?;
                next_update = now + Duration::from_secs(self.update_every);
            }
            if now >= next_poll {
                next_poll = now + Duration::from_secs(5);
                wake = Wake::Request;
                continue;
            }
            let mut deadline = next_update.min(next_poll);
            if let Some(k) = kill_at {
                deadline = deadline.min(k);
            }
            let ms = deadline
                .saturating_duration_since(Instant::now())
                .as_millis() as i64;
            wake = self.signals.wait(ms.max(1));
        }
        // The job's own process is gone: nothing of it may stay behind.
        // (A subreaper without children has no descendants at all: then
        // there is no need to read /proc.)
        let rest = if procs::has_children() {
            procs::descendants(me)
        } else {
            Vec::new()
        };
        if !rest.is_empty() {
            let live = procs::usage(&rest);
            usage.image_size = usage.image_size.max(live.image_size);
            procs::signal_all(pid, libc::SIGCONT);
            procs::signal_all(pid, libc::SIGKILL);
            let until = Instant::now() + Duration::from_secs(5);
            while Instant::now() < until && !procs::descendants(me).is_empty() {
                for r in procs::reap() {
                    dead.user += r.user;
                    dead.sys += r.sys;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        for r in procs::reap() {
            dead.user += r.user;
            dead.sys += r.sys;
        }
        usage.user = usage.user.max(dead.user);
        usage.sys = usage.sys.max(dead.sys);
        Ok(RunEnd {
            status: exit,
            stop,
            usage,
            failed: None,
        })
    }

    /// The job's vacate time: JobMaxVacateTime (or KillSigTimeout) when
    /// set, else KILLING_TIMEOUT.
    fn vacate_time(&self, ad: &Rc<ClassAd>) -> u64 {
        int(ad, "JobMaxVacateTime")
            .or_else(|| int(ad, "KillSigTimeout"))
            .map(|t| t.max(0) as u64)
            .unwrap_or(self.killing_timeout)
    }

    fn pending(&mut self, id: JobId) -> Result<Vec<Request>, ShadowError> {
        // Suspend and continue are done once read; stops stay until the
        // end is committed, so a crash cannot lose them. The read and the
        // clearing are one transaction: a request made in between would
        // otherwise be cleared unread.
        let quick = self.q.requests(id)?;
        if quick.iter().all(|k| k.stops()) {
            return Ok(quick);
        }
        let now = crate::clock::now();
        let kinds = self.q.write(now, |w| {
            let kinds = w.requests(id)?;
            if !kinds.iter().all(|k| k.stops()) {
                w.clear_requests(id, Some(Request::Suspend))?;
                w.clear_requests(id, Some(Request::Continue))?;
            }
            Ok(kinds)
        })?;
        Ok(kinds)
    }

    fn suspend_change(
        &mut self,
        id: JobId,
        ad: &Rc<ClassAd>,
        suspend: bool,
        processes: i64,
    ) -> Result<(), ShadowError> {
        let now = crate::clock::now();
        let slot = self.slot.clone();
        self.q.write(now, |w| {
            let Some(r) = w.row(id)? else { return Ok(()) };
            let cur = Rc::new(w.full_ad(&r)?);
            let mut set = vec![(
                "JobStatus".to_string(),
                Expr::int(if suspend {
                    status::SUSPENDED
                } else {
                    status::RUNNING
                }),
            )];
            if suspend {
                let n = int(&cur, "TotalSuspensions").unwrap_or(0);
                set.push(("TotalSuspensions".into(), Expr::int(n + 1)));
                set.push(("LastSuspensionTime".into(), Expr::int(now)));
            } else if let Some(t) = int(&cur, "LastSuspensionTime") {
                let c = int(&cur, "CumulativeSuspensionTime").unwrap_or(0);
                set.push((
                    "CumulativeSuspensionTime".into(),
                    Expr::int(c + (now - t).max(0)),
                ));
                set.push(("LastSuspensionTime".into(), Expr::int(0)));
            }
            w.change(&r, &cur, &Change::Set(set))?;
            machine::set_activity(
                w.conn(),
                &slot,
                "Claimed",
                if suspend { "Suspended" } else { "Busy" },
                now,
            )
            .map(|_| ())
            .map_err(|e| QueueError::Invalid(e.to_string()))
        })?;
        if let Some(p) = userlog::user_log_path(ad) {
            let kind = if suspend {
                EventKind::Suspended {
                    processes: processes.max(1),
                }
            } else {
                EventKind::Unsuspended
            };
            let _ = userlog::log_job_events(&[(
                p,
                Event {
                    id: id.into(),
                    time: now,
                    kind,
                },
            )]);
        }
        Ok(())
    }

    fn update_usage(
        &mut self,
        id: JobId,
        ad: &Rc<ClassAd>,
        u: &procs::Usage,
        reported: &mut i64,
    ) -> Result<(), ShadowError> {
        let now = crate::clock::now();
        let set = vec![
            ("RemoteUserCpu".to_string(), real(u.user.floor())),
            ("RemoteSysCpu".to_string(), real(u.sys.floor())),
            (
                "ImageSize".to_string(),
                Expr::int(u.image_size.max(*reported)),
            ),
            ("ResidentSetSize".to_string(), Expr::int(u.rss)),
        ];
        self.q.write(now, |w| {
            let Some(r) = w.row(id)? else { return Ok(()) };
            let cur = w.full_ad(&r)?;
            w.change(&r, &cur, &Change::Set(set))
        })?;
        if u.image_size > *reported {
            *reported = u.image_size;
            if let Some(p) = userlog::user_log_path(ad) {
                let e = Event {
                    id: id.into(),
                    time: now,
                    kind: EventKind::ImageSize {
                        size_kb: u.image_size,
                        memory_usage_mb: Some((u.rss + 1023) / 1024),
                        resident_set_size_kb: Some(u.rss),
                        proportional_set_size_kb: None,
                    },
                };
                let _ = userlog::log_job_events(&[(p, e)]);
            }
        }
        Ok(())
    }

    fn release_if_ours(&mut self, id: JobId, now: i64) -> Result<(), ShadowError> {
        let slot = self.slot.clone();
        let claim = self.claim.clone();
        self.q
            .write(now, |w| release_slot_if(w, &slot, &claim, id, now))?;
        Ok(())
    }

    /// Commits the end of a run in one transaction: the job's attributes
    /// and fate, the slot (released, or reused for the next job), and the
    /// requests carried out. Then writes the events.
    fn finish(
        &mut self,
        id: JobId,
        lock: joblock::JobLock,
        end: RunEnd,
        started: bool,
    ) -> Result<Option<(JobId, joblock::JobLock)>, ShadowError> {
        let now = crate::clock::now();
        let slot = self.slot.clone();
        let claim = self.claim.clone();
        let host = self.host.clone();
        let spool = self.spool.clone();
        let machine = &self.machine;
        let reuse_ctx = Reuse {
            machine,
            spool: &spool,
            slot: &slot,
            host: &host,
            knobs: &self.knobs,
            uid_domain: &self.uid_domain,
        };
        let mut events: Vec<(PathBuf, Event)> = Vec::new();
        let mut leaves = false;
        let next = self.q.write(now, |w| {
            let Some(row) = w.row(id)? else {
                release_slot_if(w, &slot, &claim, id, now)?;
                return Ok(None);
            };
            let ad = Rc::new(w.full_ad(&row)?);
            let log = userlog::user_log_path(&ad);
            let mut emit = |e: Event| {
                if let Some(p) = &log {
                    events.push((p.clone(), e));
                }
            };
            let mut usage_set: Vec<(String, Expr)> = Vec::new();
            if started {
                usage_set.push(("RemoteUserCpu".into(), real(end.usage.user.floor())));
                usage_set.push(("RemoteSysCpu".into(), real(end.usage.sys.floor())));
                let image = end.usage.image_size.max(int(&ad, "ImageSize").unwrap_or(0));
                usage_set.push(("ImageSize".into(), Expr::int(image)));
                usage_set.push(("ResidentSetSize".into(), Expr::int(end.usage.rss)));
            }
            let stop = match row.status {
                // The queue's word wins: a job removed or held while it
                // ran ends that way even if it exited first.
                status::REMOVED => Some(Stop::Remove),
                status::HELD => Some(Stop::Hold),
                _ => end.stop,
            };
            let mut reuse = true;
            let change = if let Some((reason, code, sub)) = &end.failed {
                reuse = false;
                emit(Event::held(id, reason, *code, *sub));
                let mut c = policy::hold(&ad, now, reason, *code, *sub, true);
                // A missed deferral time is recomputed on release.
                if *code == policy::hold_code::MISSED_DEFERRED_EXECUTION_TIME
                    && let Change::Update { set, .. } = &mut c
                {
                    set.push((policy::RECOMPUTE.into(), Expr::Lit(Value::Bool(true))));
                }
                c
            } else {
                match stop {
                    Some(Stop::Remove) => {
                        let reason = string(&ad, "RemoveReason").unwrap_or_default();
                        emit(Event::aborted(id, &reason));
                        let mut set = policy::end_of_run(&ad, now);
                        set.extend(usage_set.clone());
                        for n in policy::running_attrs(&ad) {
                            set.push((n, Expr::Lit(Value::Undefined)));
                        }
                        leaves = !policy::eval_attr(&ad, "LeaveJobInQueue").is_true();
                        policy::leave_or_stay(&ad, set)
                    }
                    Some(Stop::Hold) => {
                        reuse = false;
                        let reason = string(&ad, "HoldReason").unwrap_or_default();
                        let code = int(&ad, "HoldReasonCode").unwrap_or(0);
                        let sub = int(&ad, "HoldReasonSubCode").unwrap_or(0);
                        emit(Event::held(id, &reason, code, sub));
                        let mut set = policy::end_of_run(&ad, now);
                        set.extend(usage_set.clone());
                        Change::Update {
                            set,
                            delete: policy::running_attrs(&ad),
                        }
                    }
                    Some(Stop::Vacate)
                    | Some(Stop::Preempt)
                    | Some(Stop::PreemptRank)
                    | Some(Stop::Shutdown) => {
                        reuse = false;
                        let (reason, code) = match stop {
                            Some(Stop::Vacate) => ("User requested the job to vacate", 1004),
                            Some(Stop::Preempt) => (
                                "Claim preempted by a submitter with a better priority",
                                1019,
                            ),
                            Some(Stop::PreemptRank) => {
                                ("Claim preempted by a job the slot's RANK prefers", 1018)
                            }
                            _ => ("The shadow was told to stop", 1001),
                        };
                        if started {
                            emit(evicted_event(id, now, &end, None, Some(reason)));
                        }
                        let mut c = policy::requeue(&ad, now, Some((reason, code)), false);
                        if let Change::Update { set, .. } = &mut c {
                            set.extend(usage_set.clone());
                        }
                        c
                    }
                    None => {
                        let status_ = end
                            .status
                            .expect("a run without stop or failure has an exit status");
                        self_exit(
                            &ad,
                            now,
                            &end,
                            status_,
                            usage_set.clone(),
                            &mut emit,
                            &mut leaves,
                            &mut reuse,
                        )
                    }
                }
            };
            w.change(&row, &ad, &change)?;
            w.clear_requests(id, None)?;
            // The slot: reuse the claim for the next job, or let it go.
            let owner = row.owner.clone();
            if reuse
                && slot != launch::SCHEDULER
                && let Some((next, next_lock)) = pick_next(w, &reuse_ctx, &owner, now)?
            {
                return Ok(Some((next, next_lock)));
            }
            release_slot_if(w, &slot, &claim, id, now)?;
            Ok(None)
        })?;
        if let Err(e) = userlog::log_job_events(&events) {
            eprintln!("tern_shadow: {e}");
        }
        if leaves {
            joblock::remove(&self.spool, lock);
        } else {
            // The job's processes are gone: forget their group.
            let mut lock = lock;
            let _ = lock.write_pid(std::process::id(), None);
            drop(lock);
        }
        Ok(next)
    }
}

/// The end of a run whose process exited by itself: exit attributes, then
/// OnExitHold / OnExitRemove.
#[allow(clippy::too_many_arguments)]
fn self_exit(
    ad: &Rc<ClassAd>,
    now: i64,
    end: &RunEnd,
    st: std::process::ExitStatus,
    usage_set: Vec<(String, Expr)>,
    emit: &mut dyn FnMut(Event),
    leaves: &mut bool,
    reuse: &mut bool,
) -> Change {
    let id = JobId {
        cluster: int(ad, "ClusterId").unwrap_or(0),
        proc: int(ad, "ProcId").unwrap_or(0),
    };
    let mut set: Vec<(String, Expr)> = Vec::new();
    let mut delete: Vec<String> = Vec::new();
    let exit = match st.signal() {
        Some(sig) => {
            set.push(("ExitBySignal".into(), Expr::Lit(Value::Bool(true))));
            set.push(("ExitSignal".into(), Expr::int(sig as i64)));
            if ad.contains("ExitCode") {
                delete.push("ExitCode".into());
            }
            Exit::Signal {
                signal: sig as i64,
                core_file: None,
            }
        }
        None => {
            let code = st.code().unwrap_or(0) as i64;
            set.push(("ExitBySignal".into(), Expr::Lit(Value::Bool(false))));
            set.push(("ExitCode".into(), Expr::int(code)));
            if ad.contains("ExitSignal") {
                delete.push("ExitSignal".into());
            }
            Exit::Normal { return_value: code }
        }
    };
    set.extend(usage_set);
    set.extend(policy::end_of_run(ad, now));
    // Decide with the exit attributes in place.
    let mut with_exit = (**ad).clone();
    for (n, e) in &set {
        with_exit.insert(n, e.clone());
    }
    for n in &delete {
        with_exit.remove(n);
    }
    let with_exit = Rc::new(with_exit);
    match policy::on_exit(&with_exit) {
        policy::ExitDecision::Complete => {
            set.push(("CompletionDate".into(), Expr::int(now)));
            let n = int(ad, "NumJobCompletions").unwrap_or(0);
            set.push(("NumJobCompletions".into(), Expr::int(n + 1)));
            set.push(("JobStatus".into(), Expr::int(status::COMPLETED)));
            emit(terminated_event(id, now, end, exit));
            for n in policy::running_attrs(ad) {
                set.push((n, Expr::Lit(Value::Undefined)));
            }
            *leaves = !policy::eval_attr(ad, "LeaveJobInQueue").is_true();
            for n in delete {
                set.push((n, Expr::Lit(Value::Undefined)));
            }
            policy::leave_or_stay(ad, set)
        }
        policy::ExitDecision::Hold { reason, subcode } => {
            *reuse = false;
            emit(Event::held(
                id,
                &reason,
                policy::hold_code::JOB_POLICY,
                subcode,
            ));
            set.push(("HoldReason".into(), Expr::string(&reason)));
            set.push((
                "HoldReasonCode".into(),
                Expr::int(policy::hold_code::JOB_POLICY),
            ));
            set.push(("HoldReasonSubCode".into(), Expr::int(subcode)));
            set.push(("JobStatus".into(), Expr::int(status::HELD)));
            let n = int(ad, "NumHolds").unwrap_or(0);
            set.push(("NumHolds".into(), Expr::int(n + 1)));
            delete.extend(policy::running_attrs(ad));
            Change::Update { set, delete }
        }
        policy::ExitDecision::Requeue => {
            emit(evicted_event(id, now, end, Some(exit), None));
            set.push(("JobStatus".into(), Expr::int(status::IDLE)));
            if policy::is_cron(ad) {
                // The next run is after this one, whatever the old time.
                set.push((policy::RECOMPUTE.into(), Expr::Lit(Value::Bool(true))));
            }
            set.push(("LastVacateTime".into(), Expr::int(now)));
            delete.extend(policy::running_attrs(ad));
            Change::Update { set, delete }
        }
    }
}

fn rusage_of(u: &procs::Usage) -> Rusage {
    Rusage {
        user: u.user as i64,
        sys: u.sys as i64,
    }
}

fn terminated_event(id: JobId, now: i64, end: &RunEnd, exit: Exit) -> Event {
    let r = rusage_of(&end.usage);
    Event {
        id: id.into(),
        time: now,
        kind: EventKind::Terminated(Box::new(Termination {
            exit,
            run_remote: r,
            run_local: Rusage::default(),
            total_remote: r,
            total_local: Rusage::default(),
            sent_bytes: 0.0,
            received_bytes: 0.0,
            total_sent_bytes: 0.0,
            total_received_bytes: 0.0,
            resources: Vec::new(),
        })),
    }
}

fn evicted_event(
    id: JobId,
    now: i64,
    end: &RunEnd,
    exit: Option<Exit>,
    reason: Option<&str>,
) -> Event {
    Event {
        id: id.into(),
        time: now,
        kind: EventKind::Evicted {
            code: None,
            how: match exit {
                Some(e) => Eviction::Requeued(e),
                None => Eviction::CpuTimes,
            },
            run_remote: rusage_of(&end.usage),
            run_local: Rusage::default(),
            sent_bytes: 0.0,
            received_bytes: 0.0,
            reason: reason.map(String::from),
            resources: Vec::new(),
        },
    }
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
    let s = machine::load_slot(w.conn(), slot).map_err(|e| QueueError::Invalid(e.to_string()))?;
    if let Some(s) = s
        && s.claim.as_deref() == Some(claim)
        && s.cluster == Some(id.cluster)
        && s.proc == Some(id.proc)
    {
        crate::negotiator::free_slot(w.conn(), &s, now)?;
    }
    Ok(())
}

/// Claim reuse: the next idle job of the same owner that matches this slot
/// and whose lock is free, unless another submitter is owed the slot. The
/// job is set Running on the slot in the caller's transaction.
/// What claim reuse needs besides the transaction.
struct Reuse<'a> {
    machine: &'a Machine,
    spool: &'a Path,
    slot: &'a str,
    host: &'a str,
    knobs: &'a crate::negotiator::accountant::Knobs,
    uid_domain: &'a str,
}

fn pick_next(
    w: &mut crate::queue::Writer<'_>,
    r: &Reuse<'_>,
    owner: &str,
    now: i64,
) -> Result<Option<(JobId, joblock::JobLock)>, QueueError> {
    let (machine, spool, slot, host, knobs, uid_domain) =
        (r.machine, r.spool, r.slot, r.host, r.knobs, r.uid_domain);
    let Some(srow) =
        machine::load_slot(w.conn(), slot).map_err(|e| QueueError::Invalid(e.to_string()))?
    else {
        return Ok(None);
    };
    let submitter = srow.remote_user.clone().unwrap_or_default();
    if crate::negotiator::owed_elsewhere(w.conn(), &submitter, owner, knobs, uid_domain)? {
        return Ok(None);
    }
    let slot_ad = Rc::new(machine::slot_ad(machine, &srow, now));
    let mut ev = Evaluator::new();
    let mut tried: std::collections::HashMap<i64, bool> = std::collections::HashMap::new();
    for row in w.idle_rows_of(owner, 16)? {
        let ad = Rc::new(w.full_ad(&row)?);
        // The same submitter only (an owner's accounting groups are
        // submitters of their own).
        if crate::negotiator::matchmaking::submitter_of_job(&ad, owner, uid_domain) != submitter {
            continue;
        }
        // Jobs of one cluster without per-proc differences match alike.
        let plain = row.diff.len() <= 4 || !row.diff.to_ascii_lowercase().contains("request");
        if plain && tried.get(&row.id.cluster) == Some(&false) {
            continue;
        }
        let ctx = MatchContext::new(ad.clone(), slot_ad.clone());
        let ok = ctx.symmetric(&mut ev) && fits_dynamic(&ad, &slot_ad, &srow);
        if plain {
            tried.insert(row.id.cluster, ok);
        }
        if !ok {
            continue;
        }
        let Some(lock) =
            joblock::try_acquire(spool, row.id).map_err(|e| QueueError::Invalid(e.to_string()))?
        else {
            continue;
        };
        let match_attrs = match crate::negotiator::dollar::match_attrs(&ad, &slot_ad) {
            Ok(a) => a,
            Err(_) => continue,
        };
        let claim = srow.claim.clone().unwrap_or_default();
        machine::set_claim(
            w.conn(),
            slot,
            "Claimed",
            "Busy",
            &machine::ClaimInfo {
                remote_user: srow
                    .remote_user
                    .clone()
                    .unwrap_or_else(|| owner.to_string()),
                remote_owner: owner.to_string(),
                cluster: row.id.cluster,
                proc: row.id.proc,
                claim,
                job_start: now,
            },
            now,
        )
        .map_err(|e| QueueError::Invalid(e.to_string()))?;
        let set = launch::claim_attrs(&ad, slot, host, now, &match_attrs);
        w.change(&row, &ad, &Change::Set(set))?;
        return Ok(Some((row.id, lock)));
    }
    Ok(None)
}

/// A dynamic slot is reused only for a job that fits in it.
fn fits_dynamic(job: &Rc<ClassAd>, slot_ad: &Rc<ClassAd>, row: &machine::SlotRow) -> bool {
    let (c, m, d) = crate::negotiator::matchmaking::requests(job, slot_ad);
    let (c, m, d) = crate::negotiator::matchmaking::quantize(c, m, d);
    c <= row.cpus && m <= row.memory && d <= row.disk
}

fn kill_sig(ad: &Rc<ClassAd>) -> libc::c_int {
    match policy::eval_attr(ad, "KillSig") {
        Value::Int(i) => i as libc::c_int,
        Value::Str(s) => signal_number(&s).unwrap_or(libc::SIGTERM),
        _ => libc::SIGTERM,
    }
}

/// A signal by name (`SIGTERM`, `TERM`) or number.
pub fn signal_number(s: &str) -> Option<libc::c_int> {
    let s = s.trim();
    if let Ok(n) = s.parse::<i32>() {
        return Some(n);
    }
    let name = s.to_ascii_uppercase();
    let name = name.strip_prefix("SIG").unwrap_or(&name);
    Some(match name {
        "HUP" => libc::SIGHUP,
        "INT" => libc::SIGINT,
        "QUIT" => libc::SIGQUIT,
        "KILL" => libc::SIGKILL,
        "USR1" => libc::SIGUSR1,
        "USR2" => libc::SIGUSR2,
        "TERM" => libc::SIGTERM,
        "ALRM" => libc::SIGALRM,
        "CONT" => libc::SIGCONT,
        "STOP" => libc::SIGSTOP,
        "TSTP" => libc::SIGTSTP,
        "ABRT" => libc::SIGABRT,
        _ => return None,
    })
}

fn io_text(e: &std::io::Error) -> String {
    let t = e.to_string();
    match t.rfind(" (os error ") {
        Some(i) => t[..i].to_string(),
        None => t,
    }
}

/// Starts a job as another user (the shadow runs as root): fork, the
/// user's groups and ids, exec.
fn spawn_as(plan: &Plan, id: Identity) -> std::io::Result<i32> {
    let mut cmd = Command::new(&plan.exe);
    cmd.args(&plan.args)
        .env_clear()
        .envs(plan.env.iter().map(|(a, b)| (a, b)))
        .current_dir(&plan.iwd)
        .process_group(0)
        .stdin(Stdio::from(plan.stdin.try_clone()?))
        .stdout(Stdio::from(plan.stdout.try_clone()?))
        .stderr(Stdio::from(plan.stderr.try_clone()?));
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            procs::unblock_all();
            // Supplementary groups first, then the group, then the user:
            // after setuid nothing else may change.
            if libc::setgroups(id.groups.len(), id.groups.as_ptr()) != 0
                || libc::setgid(id.gid) != 0
                || libc::setuid(id.uid) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    let pid = child.id() as i32;
    // The Child handle is not used for waiting: we reap with wait4.
    std::mem::forget(child);
    Ok(pid)
}

/// A user to run a job as.
#[derive(Clone, Debug)]
struct Identity {
    uid: libc::uid_t,
    gid: libc::gid_t,
    groups: Vec<libc::gid_t>,
}

/// When the shadow runs as root (the shared mode), the job runs as its
/// Owner, with the owner's groups; an owner this machine does not know is
/// a hold (FailedToAccessUserAccount, 23). Otherwise the job runs as the
/// shadow's user, who submitted it.
fn identity(ad: &Rc<ClassAd>) -> Result<Option<Identity>, (String, i64, i64)> {
    // SAFETY: geteuid has no side effects.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let owner = string(ad, "Owner").unwrap_or_default();
    if owner == "root" {
        return Ok(None);
    }
    let fail = |why: String| (why, 23, 0);
    let cname = std::ffi::CString::new(owner.clone())
        .map_err(|_| fail(format!("Owner '{owner}' is not a user name")))?;
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16384];
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: getpwnam_r fills the passwd and buffer we own.
    let rc = unsafe {
        libc::getpwnam_r(
            cname.as_ptr(),
            &mut pw,
            buf.as_mut_ptr(),
            buf.len(),
            &mut out,
        )
    };
    if rc != 0 || out.is_null() {
        return Err(fail(format!(
            "Failed to run the job as its owner '{owner}': no such user on this machine"
        )));
    }
    let (uid, gid) = (pw.pw_uid, pw.pw_gid);
    let mut n: libc::c_int = 64;
    let mut groups: Vec<libc::gid_t> = vec![0; n as usize];
    loop {
        // SAFETY: getgrouplist writes at most n entries into groups.
        let r = unsafe { libc::getgrouplist(cname.as_ptr(), gid, groups.as_mut_ptr(), &mut n) };
        if r >= 0 {
            groups.truncate(n as usize);
            break;
        }
        groups.resize(n as usize + 16, 0);
        n = groups.len() as libc::c_int;
    }
    Ok(Some(Identity { uid, gid, groups }))
}

/// What the shadow needs to start a job.
struct Plan {
    /// Who the job runs as, when the shadow runs as root.
    ident: Option<Identity>,
    exe: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
    iwd: PathBuf,
    stdin: File,
    stdout: File,
    stderr: File,
}

/// Resolves the job's files. A missing Iwd or executable, or an input or
/// output file that cannot be opened, is a hold with HTCondor's code and a
/// reason that names the path.
fn prepare(ad: &ClassAd) -> Result<Plan, (String, i64, i64)> {
    let ad = Rc::new(ad.clone());
    let ident = identity(&ad)?;
    let iwd = PathBuf::from(string(&ad, "Iwd").unwrap_or_else(|| "/".into()));
    if !iwd.is_dir() {
        return Err((
            format!(
                "Initial working directory '{}' does not exist or is not a directory",
                iwd.display()
            ),
            policy::hold_code::IWD_ERROR,
            libc::ENOENT as i64,
        ));
    }
    let cmd = string(&ad, "Cmd").unwrap_or_default();
    let exe = if Path::new(&cmd).is_absolute() {
        PathBuf::from(&cmd)
    } else {
        iwd.join(&cmd)
    };
    if cmd.is_empty() || !exe.is_file() {
        return Err((
            format!(
                "Failed to execute '{}': the executable does not exist",
                exe.display()
            ),
            policy::hold_code::FAILED_TO_CREATE_PROCESS,
            libc::ENOENT as i64,
        ));
    }
    let args = match string(&ad, "Arguments") {
        Some(a) if !a.is_empty() => {
            crate::submit::args::split_v2(&a, &a, "arguments").map_err(|m| {
                (
                    format!("Arguments: {m}"),
                    policy::hold_code::FAILED_TO_CREATE_PROCESS,
                    0,
                )
            })?
        }
        _ => string(&ad, "Args")
            .map(|a| a.split_whitespace().map(String::from).collect())
            .unwrap_or_default(),
    };
    let mut env: Vec<(String, String)> = match string(&ad, "Environment") {
        Some(e) if !e.is_empty() => crate::submit::args::split_v2(&e, &e, "environment")
            .map_err(|m| {
                (
                    format!("Environment: {m}"),
                    policy::hold_code::FAILED_TO_CREATE_PROCESS,
                    0,
                )
            })?
            .into_iter()
            .filter_map(|w| {
                w.split_once('=')
                    .map(|(a, b)| (a.to_string(), b.to_string()))
            })
            .collect(),
        _ => string(&ad, "Env")
            .map(|e| {
                e.split(';')
                    .filter_map(|w| {
                        w.trim()
                            .split_once('=')
                            .map(|(a, b)| (a.to_string(), b.to_string()))
                    })
                    .collect()
            })
            .unwrap_or_default(),
    };
    let cpus = int(&ad, "RequestCpus").unwrap_or(1).max(1);
    for (n, v) in [
        ("_CONDOR_JOB_IWD", iwd.display().to_string()),
        ("_CONDOR_SCRATCH_DIR", iwd.display().to_string()),
        ("OMP_NUM_THREADS", cpus.to_string()),
        ("BATCH_SYSTEM", "HTCondor".to_string()),
    ] {
        if !env.iter().any(|(k, _)| k == n) {
            env.push((n.to_string(), v));
        }
    }
    let open_in = |name: &str| -> Result<File, (String, i64, i64)> {
        let p = string(&ad, name)
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "/dev/null".into());
        let path = iwd.join(&p);
        File::open(&path).map_err(|e| {
            (
                format!(
                    "Cannot open input file '{}': {}",
                    path.display(),
                    io_text(&e)
                ),
                policy::hold_code::UNABLE_TO_OPEN_INPUT,
                e.raw_os_error().unwrap_or(0) as i64,
            )
        })
    };
    let open_out = |name: &str| -> Result<File, (String, i64, i64)> {
        let p = string(&ad, name)
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "/dev/null".into());
        let path = iwd.join(&p);
        std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&path)
            .and_then(|f| {
                // Made by root for the job: the job's owner owns it.
                if let Some(id) = &ident
                    && p != "/dev/null"
                {
                    std::os::unix::fs::fchown(&f, Some(id.uid), Some(id.gid))?;
                }
                Ok(f)
            })
            .map_err(|e| {
                (
                    format!(
                        "Cannot open output file '{}': {}",
                        path.display(),
                        io_text(&e)
                    ),
                    policy::hold_code::UNABLE_TO_OPEN_OUTPUT,
                    e.raw_os_error().unwrap_or(0) as i64,
                )
            })
    };
    let stdin = open_in("In")?;
    let stdout = open_out("Out")?;
    let same = string(&ad, "Err").is_some()
        && string(&ad, "Err") == string(&ad, "Out")
        && string(&ad, "Out").as_deref() != Some("/dev/null");
    let stderr = if same {
        // One file for both: share the descriptor so writes interleave.
        let p = iwd.join(string(&ad, "Out").unwrap_or_default());
        std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .map_err(|e| {
                (
                    format!("Cannot open output file '{}': {}", p.display(), io_text(&e)),
                    policy::hold_code::UNABLE_TO_OPEN_OUTPUT,
                    0,
                )
            })?
    } else {
        open_out("Err")?
    };
    Ok(Plan {
        ident,
        exe,
        args,
        env,
        iwd,
        stdin,
        stdout,
        stderr,
    })
}
