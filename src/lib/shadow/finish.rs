//! The end of a run: what it means for the job, committed in one
//! transaction with the slot's fate, then the events.
//!
//! [`fate`] classifies the end (the queue's word first: a job removed or
//! held while it ran ends that way even if it exited first): a job that
//! could not start is held; a stop removes, holds or requeues it with
//! HTCondor's vacate reason; a job that exited by itself gets its exit
//! attributes and then the on-exit policy (OnExitHold, OnExitRemove)
//! decides. [`Shadow::finish`] commits that, clears the job's requests,
//! and asks [`crate::negotiator::reuse::match_one`] for the next job of
//! the claim (unless the end forbids reuse), or lets the slot go.

use std::os::unix::process::ExitStatusExt;

use std::process::ExitStatus;
use std::rc::Rc;

use crate::classad::{ClassAd, Expr, Value};
use crate::negotiator::{launch, policy, reuse};
use crate::queue::{Change, JobId, QueueError, joblock};
use crate::userlog::{self, Event, EventKind, Eviction, Exit, Rusage, Termination};
use crate::vocab::{Hold, JobStatus, hold_code};

use super::procs;
use super::supervise::real;
use super::{Shadow, ShadowError, Stop, release_slot_if};

/// How a run ended.
#[derive(Default)]
pub(super) struct RunEnd {
    /// The wait status, when the job's process ended by itself or by our
    /// signal.
    pub status: Option<ExitStatus>,
    pub stop: Option<Stop>,
    pub usage: procs::Usage,
    /// The job could not be started.
    pub failed: Option<Hold>,
    /// A PREPARE hook sent the job back to Idle before it started: the
    /// VacateReason and its subcode.
    pub requeued: Option<(String, i64)>,
    /// The output transfer after a run that exited by itself failed.
    pub output_failed: Option<Hold>,
    /// Attributes the run's file transfers left (see `transfer.rs`).
    pub attrs: Vec<(String, Expr)>,
    /// This run's bytes out of and into the sandbox.
    pub sent: f64,
    pub received: f64,
}

impl RunEnd {
    /// A run stopped before the job was started.
    pub fn stopped(stop: Stop) -> RunEnd {
        RunEnd {
            status: None,
            stop: Some(stop),
            usage: procs::Usage::default(),
            failed: None,
            ..RunEnd::default()
        }
    }

    /// A run a PREPARE hook refused.
    pub fn refused(r: super::hooks::Refusal) -> RunEnd {
        match r {
            super::hooks::Refusal::Hold(h) => RunEnd::failed(h),
            super::hooks::Refusal::Requeue { reason, subcode } => RunEnd {
                requeued: Some((reason, subcode)),
                ..RunEnd::default()
            },
        }
    }

    /// A job that could not be started.
    pub fn failed(hold: Hold) -> RunEnd {
        RunEnd {
            status: None,
            stop: None,
            usage: procs::Usage::default(),
            failed: Some(hold),
            ..RunEnd::default()
        }
    }
}

/// What the end of a run does to the job.
struct Fate {
    change: Change,
    events: Vec<Event>,
    /// The claim may go on to the owner's next job.
    reuse: bool,
    /// The job leaves the queue (so its lock file goes too).
    leaves: bool,
}

impl Fate {
    fn new(change: Change, events: Vec<Event>) -> Fate {
        Fate {
            change,
            events,
            reuse: true,
            leaves: false,
        }
    }

    fn no_reuse(mut self) -> Fate {
        self.reuse = false;
        self
    }
}

/// What a claim does after a run's end is committed.
pub(super) enum After {
    /// It goes on to this job, its lock taken.
    Next(JobId, joblock::JobLock),
    /// The job left the queue and nothing is idle anywhere: the claim is
    /// kept Claimed/Idle a moment for work that may arrive (`linger.rs`).
    Linger(Lingering),
    /// The slot was let go.
    Done,
}

/// The end of a run waits for room when SPOOL's file system is full, so a
/// job that ran is recorded once space returns rather than run again (the
/// pass would take a shadow that gave up for a dead one and requeue the
/// job). The shadow keeps the job's lock and its claim meanwhile.
#[derive(Default)]
struct RoomWait {
    began: Option<std::time::Instant>,
}

impl RoomWait {
    /// How long the end of a run waits for room before it gives up.
    const LIMIT: std::time::Duration = std::time::Duration::from_secs(3600);
    /// The pause between two tries.
    const PAUSE: std::time::Duration = std::time::Duration::from_secs(2);

    /// Says so the first time, then naps; false once the wait is over.
    fn wait(&mut self, id: JobId, db: &std::path::Path) -> bool {
        let began = *self.began.get_or_insert_with(|| {
            note!(
                "tern_shadow: job {id}: no space left for the queue database {}; the end of the run is recorded once there is room",
                db.display()
            );
            std::time::Instant::now()
        });
        if began.elapsed() >= Self::LIMIT {
            return false;
        }
        std::thread::sleep(Self::PAUSE);
        true
    }
}

/// The run a lingering claim last ran: the slot still names its job, whose
/// lock stays held (so no pass takes the claim for a dead shadow's).
pub(super) struct Lingering {
    pub id: JobId,
    pub lock: joblock::JobLock,
    /// The job left the queue: its lock file goes when the claim ends.
    pub leaves: bool,
    pub owner: String,
}

/// The claim's fate, decided in the end's transaction.
enum Claim {
    Next(JobId, joblock::JobLock),
    Linger(String),
    Done,
}

impl Shadow {
    /// Commits the end of a run in one transaction: the job's attributes
    /// and fate, the slot (reused for the next job, kept a moment, or
    /// released), and the requests carried out. Then writes the events.
    pub(super) fn finish(
        &mut self,
        id: JobId,
        lock: joblock::JobLock,
        end: RunEnd,
        started: bool,
    ) -> Result<After, ShadowError> {
        let now = crate::clock::now();
        let (slot, claim, host) = (&self.slot, &self.claim, &self.host);
        let reuse_slot = reuse::Slot {
            machine: &self.machine,
            spool: &self.spool,
            name: slot,
            knobs: &self.knobs,
            uid_domain: &self.uid_domain,
            spare: &self.spare,
        };
        let may_linger = self.linger_ms > 0 && slot != launch::SCHEDULER;
        let mut events: Vec<(crate::userlog::UserLog, Event)> = Vec::new();
        let mut leaves = false;
        // Execute attributes not yet written go in with the end.
        let pending = self.pending_exec.take().filter(|p| p.id == id);
        let mut room = RoomWait::default();
        let next = loop {
            events.clear();
            let wrote = self.q.write(now, |w| {
                let Some(row) = w.row(id)? else {
                    // Gone (removed while it was stopped): its requests go
                    // with it.
                    w.clear_requests(id, None)?;
                    release_slot_if(w, slot, claim, id, now)?;
                    return Ok(Claim::Done);
                };
                let mut ad = w.full_ad(&row)?;
                // The execute attributes, and what the PREPARE hooks
                // changed, join the end's change: the fate reads the ad
                // with them, and the job's row is rewritten once.
                let executed = match &pending {
                    Some(p) => super::start::executed_set(&ad, p),
                    None => Vec::new(),
                };
                for (n, e) in &executed {
                    ad.insert(n, e.clone());
                }
                let ad = Rc::new(ad);
                // The requests matter for a removed job (a tool may have
                // logged the stop's events with its 009), and for a run
                // held and then released before it was down: stopped for
                // another reason first, or ended before the hold reached
                // it (the job is Idle, not Running). They are read only
                // then.
                let status = row.status();
                let asked = match status {
                    Some(JobStatus::Removed | JobStatus::Idle) => w.requests(id)?,
                    Some(JobStatus::Held) => Vec::new(),
                    _ if end.stop.is_some() => w.requests(id)?,
                    _ => Vec::new(),
                };
                let held_meanwhile = status != Some(JobStatus::Removed)
                    && asked.contains(&crate::vocab::Request::Hold);
                let fate = fate(&ad, id, status, held_meanwhile, &end, started, now);
                let logged = policy::aborted_by_a_tool(status, &asked);
                if let Some(p) = userlog::user_log(&ad).filter(|_| !logged) {
                    events.extend(fate.events.into_iter().map(|e| (p.clone(), e)));
                }
                leaves = fate.leaves;
                w.change(&row, &ad, &fate.change.after(executed))?;
                w.clear_requests(id, None)?;
                // The slot: reuse the claim for the next job, keep it a moment
                // when nothing is idle at all, or let it go.
                if fate.reuse && slot != launch::SCHEDULER {
                    if let Some(m) = reuse::match_one(w, &reuse_slot, &row.owner, now)? {
                        m.claim(w, &row.owner, host, now)?;
                        return Ok(Claim::Next(m.id, m.lock));
                    }
                    // Only for a job that left the queue: the claim keeps its
                    // lock, which nothing else then needs.
                    if may_linger
                        && fate.leaves
                        && crate::queue::clusters_with_idle(w.conn())?.is_empty()
                    {
                        crate::machine::set_activity(w.conn(), slot, "Claimed", "Idle", now)?;
                        return Ok(Claim::Linger(row.owner.clone()));
                    }
                }
                release_slot_if(w, slot, claim, id, now)?;
                Ok(Claim::Done)
            });
            match wrote {
                Err(QueueError::Full { path }) if room.wait(id, &path) => {}
                other => break other?,
            }
        };
        if let Err(e) = userlog::log_job_events(&events) {
            note!("tern_shadow: {e}");
        }
        if let Claim::Linger(owner) = next {
            let mut lock = lock;
            let _ = lock.write_pid(std::process::id(), None);
            return Ok(After::Linger(Lingering {
                id,
                lock,
                leaves,
                owner,
            }));
        }
        self.let_lock_go(lock, leaves);
        Ok(match next {
            Claim::Next(id, lock) => After::Next(id, lock),
            _ => After::Done,
        })
    }

    /// A finished run's lock: its file goes with a job that left the
    /// queue (kept as the spare the next job's lock is made of); otherwise
    /// the job's processes are forgotten.
    pub(super) fn let_lock_go(&self, lock: joblock::JobLock, leaves: bool) {
        if leaves {
            crate::hooks::starter_logs::forget(&self.spool, lock.id);
            self.spare.borrow_mut().retire(&self.spool, lock);
        } else {
            let mut lock = lock;
            let _ = lock.write_pid(std::process::id(), None);
        }
    }
}

/// What the end of a run means for the job (`job_status` is its status in
/// the queue now; `held_meanwhile`, that a hold of the run is pending
/// although the job is no longer held: released before it was down).
fn fate(
    ad: &Rc<ClassAd>,
    id: JobId,
    job_status: Option<JobStatus>,
    held_meanwhile: bool,
    end: &RunEnd,
    started: bool,
    now: i64,
) -> Fate {
    // Held and released while the run was being started or its hook
    // requeued it: the hold's 012 and the release's 013 come first.
    let owed = |mut f: Fate| {
        if held_meanwhile {
            f.events.splice(0..0, policy::held_then_released(ad, id));
        }
        f
    };
    if let Some(hold) = &end.failed {
        return owed(not_started(ad, id, hold, now));
    }
    if let Some((reason, subcode)) = &end.requeued
        && !matches!(job_status, Some(JobStatus::Removed | JobStatus::Held))
    {
        return owed(hook_requeued(ad, reason, *subcode, now));
    }
    let usage = if started {
        let mut u = usage_attrs(ad, &end.usage);
        u.extend(end.attrs.iter().cloned());
        u
    } else {
        Vec::new()
    };
    let stop = match job_status {
        // The queue's word wins: a job removed or held while it ran ends
        // that way even if it exited first.
        Some(JobStatus::Removed) => Some(Stop::Remove),
        Some(JobStatus::Held) => Some(Stop::Hold),
        // Stopped to be vacated or preempted, and held, then released, in
        // the meantime: the hold's 012 and the release's 013 are owed.
        _ if held_meanwhile => Some(Stop::Hold),
        _ => end.stop,
    };
    // A failed transfer holds the job, unless it is being held or removed
    // anyway.
    if !matches!(stop, Some(Stop::Remove | Stop::Hold))
        && let Some(hold) = &end.output_failed
    {
        return output_failed(ad, id, usage, hold, now);
    }
    match stop {
        Some(Stop::Remove) => removed(ad, id, usage, now),
        Some(Stop::Hold) => held(ad, id, job_status, usage, now),
        Some(stop) => vacated(ad, id, stop, end, started, usage, now),
        None => {
            let st = end
                .status
                .expect("a run without stop or failure has an exit status");
            self_exit(ad, id, now, end, st, usage)
        }
    }
}

/// The usage a started run leaves on the job.
fn usage_attrs(ad: &Rc<ClassAd>, u: &procs::Usage) -> Vec<(String, Expr)> {
    let image = u.image_size.max(ad.eval_int("ImageSize").unwrap_or(0));
    vec![
        ("RemoteUserCpu".into(), real(u.user.floor())),
        ("RemoteSysCpu".into(), real(u.sys.floor())),
        ("ImageSize".into(), Expr::int(image)),
        ("ResidentSetSize".into(), Expr::int(u.rss)),
    ]
}

/// A job that could not start (or missed its deferral time) is held.
fn not_started(ad: &Rc<ClassAd>, id: JobId, hold: &Hold, now: i64) -> Fate {
    let event = Event::held(id, &hold.reason, hold.code, hold.subcode);
    let mut c = policy::hold(ad, now, &hold.reason, hold.code, hold.subcode, true);
    // A missed deferral time is recomputed on release.
    if hold.code == hold_code::MISSED_DEFERRED_EXECUTION_TIME
        && let Change::Update { set, .. } = &mut c
    {
        set.push((policy::RECOMPUTE.into(), Expr::Lit(Value::Bool(true))));
    }
    Fate::new(c, vec![event]).no_reuse()
}

/// A PREPARE hook's status of 300 or more (or its death by a signal)
/// sends the job back to Idle as HTCondor's shadow exception does:
/// VacateReason says why (event 021 already did), NumShadowExceptions
/// counts it; the job never started, so there is no 004.
fn hook_requeued(ad: &Rc<ClassAd>, reason: &str, subcode: i64, now: i64) -> Fate {
    let mut c = policy::requeue(ad, now, Some((reason, hold_code::STARTER_ERROR)), true);
    if let Change::Update { set, .. } = &mut c {
        set.push(("VacateReasonSubCode".into(), Expr::int(subcode)));
    }
    Fate::new(c, Vec::new()).no_reuse()
}

/// A run whose output could not be brought back is held (code 12): its
/// usage is kept, and it runs again from the start when released.
fn output_failed(
    ad: &Rc<ClassAd>,
    id: JobId,
    usage: Vec<(String, Expr)>,
    hold: &Hold,
    now: i64,
) -> Fate {
    let event = Event::held(id, &hold.reason, hold.code, hold.subcode);
    let mut c = policy::hold(ad, now, &hold.reason, hold.code, hold.subcode, true);
    if let Change::Update { set, .. } = &mut c {
        set.extend(usage);
    }
    Fate::new(c, vec![event]).no_reuse()
}

/// Removed while it ran: event 009, and out of the queue unless
/// LeaveJobInQueue.
fn removed(ad: &Rc<ClassAd>, id: JobId, usage: Vec<(String, Expr)>, now: i64) -> Fate {
    let reason = ad.eval_str("RemoveReason").unwrap_or_default();
    let mut set = policy::end_of_run(ad, now);
    set.extend(usage);
    for n in policy::running_attrs(ad) {
        set.push((n, Expr::Lit(Value::Undefined)));
    }
    let mut fate = Fate::new(
        policy::leave_or_stay(ad, set),
        vec![Event::aborted(id, &reason)],
    );
    fate.leaves = matches!(fate.change, Change::Leave { .. });
    fate
}

/// Held while it ran: the hold the tool or policy recorded, event 012.
/// A job released before it was down stays as the release left it, and
/// gets the 012 with the 013 that tern_release left to the shadow.
fn held(
    ad: &Rc<ClassAd>,
    id: JobId,
    job_status: Option<JobStatus>,
    usage: Vec<(String, Expr)>,
    now: i64,
) -> Fate {
    let events = policy::hold_stop_events(ad, id, job_status);
    let mut set = policy::end_of_run(ad, now);
    set.extend(usage);
    let change = Change::Update {
        set,
        delete: policy::running_attrs(ad),
    };
    Fate::new(change, events).no_reuse()
}

/// Vacated, preempted or shut down: back to Idle with HTCondor's vacate
/// reason and code, event 004 when it had started.
fn vacated(
    ad: &Rc<ClassAd>,
    id: JobId,
    stop: Stop,
    end: &RunEnd,
    started: bool,
    usage: Vec<(String, Expr)>,
    now: i64,
) -> Fate {
    let fired;
    let (reason, code) = match stop {
        Stop::Vacate => (
            "User requested the job to vacate",
            hold_code::USER_VACATE_JOB,
        ),
        // The shadow's UserPolicy words it so (FiringReason), with the
        // JobPolicy code made its vacate one.
        Stop::PolicyVacate => {
            fired = policy::firing_reason(ad, "PeriodicVacate");
            (fired.as_str(), hold_code::JOB_POLICY_VACATE)
        }
        Stop::Preempt => (
            "Claim preempted by a submitter with a better priority",
            hold_code::STARTD_PREEMPTING_CLAIM_USER_PRIO,
        ),
        Stop::PreemptRank => (
            "Claim preempted by a job the slot's RANK prefers",
            hold_code::STARTD_PREEMPTING_CLAIM_RANK,
        ),
        Stop::Shutdown | Stop::Remove | Stop::Hold => (
            "The shadow was told to stop",
            hold_code::SYSTEM_POLICY_VACATE,
        ),
    };
    let mut events = Vec::new();
    if started {
        events.push(evicted_event(id, now, end, None, Some(reason)));
    }
    let mut c = policy::requeue(ad, now, Some((reason, code)), false);
    if let Change::Update { set, .. } = &mut c {
        set.extend(usage);
    }
    Fate::new(c, events).no_reuse()
}

/// The end of a run whose process exited by itself: exit attributes, then
/// OnExitHold / OnExitRemove.
fn self_exit(
    ad: &Rc<ClassAd>,
    id: JobId,
    now: i64,
    end: &RunEnd,
    st: ExitStatus,
    usage: Vec<(String, Expr)>,
) -> Fate {
    let (exit, mut set, mut delete) = exit_attrs(ad, st);
    set.extend(usage);
    set.extend(policy::end_of_run(ad, now));
    // Decide with the exit attributes in place.
    let mut with_exit = (**ad).clone();
    for (n, e) in &set {
        with_exit.insert(n, e.clone());
    }
    for n in &delete {
        with_exit.remove(n);
    }
    match policy::on_exit(&Rc::new(with_exit)) {
        policy::ExitDecision::Complete => {
            set.push(("CompletionDate".into(), Expr::int(now)));
            let n = ad.eval_int("NumJobCompletions").unwrap_or(0);
            set.push(("NumJobCompletions".into(), Expr::int(n + 1)));
            set.push(("JobStatus".into(), JobStatus::Completed.expr()));
            for n in policy::running_attrs(ad).into_iter().chain(delete) {
                set.push((n, Expr::Lit(Value::Undefined)));
            }
            let event = terminated_event(ad, id, now, end, exit);
            let mut fate = Fate::new(policy::leave_or_stay(ad, set), vec![event]);
            fate.leaves = matches!(fate.change, Change::Leave { .. });
            fate
        }
        policy::ExitDecision::Hold { reason, subcode } => {
            let code = hold_code::JOB_POLICY;
            let event = Event::held(id, &reason, code, subcode);
            set.push(("HoldReason".into(), Expr::string(&reason)));
            set.push(("HoldReasonCode".into(), Expr::int(code)));
            set.push(("HoldReasonSubCode".into(), Expr::int(subcode)));
            set.push(("JobStatus".into(), JobStatus::Held.expr()));
            let n = ad.eval_int("NumHolds").unwrap_or(0);
            set.push(("NumHolds".into(), Expr::int(n + 1)));
            delete.extend(policy::running_attrs(ad));
            Fate::new(Change::Update { set, delete }, vec![event]).no_reuse()
        }
        policy::ExitDecision::Requeue => {
            let event = evicted_event(id, now, end, Some(exit), None);
            set.push(("JobStatus".into(), JobStatus::Idle.expr()));
            if policy::is_cron(ad) {
                // The next run is after this one, whatever the old time.
                set.push((policy::RECOMPUTE.into(), Expr::Lit(Value::Bool(true))));
            }
            set.push(("LastVacateTime".into(), Expr::int(now)));
            delete.extend(policy::running_attrs(ad));
            Fate::new(Change::Update { set, delete }, vec![event])
        }
    }
}

/// The exit as the event log tells it, and the attributes that record it
/// (ExitBySignal with ExitSignal or ExitCode; the other one goes).
fn exit_attrs(ad: &ClassAd, st: ExitStatus) -> (Exit, Vec<(String, Expr)>, Vec<String>) {
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
    (exit, set, delete)
}

fn rusage_of(u: &procs::Usage) -> Rusage {
    Rusage {
        user: u.user as i64,
        sys: u.sys as i64,
    }
}

fn terminated_event(ad: &Rc<ClassAd>, id: JobId, now: i64, end: &RunEnd, exit: Exit) -> Event {
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
            sent_bytes: end.sent,
            received_bytes: end.received,
            total_sent_bytes: ad.eval_real("BytesSent").unwrap_or(0.0) + end.sent,
            total_received_bytes: ad.eval_real("BytesRecvd").unwrap_or(0.0) + end.received,
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
            sent_bytes: end.sent,
            received_bytes: end.received,
            reason: reason.map(String::from),
            resources: Vec::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: JobId = JobId {
        cluster: 3,
        proc: 1,
    };

    fn ad(text: &str) -> Rc<ClassAd> {
        Rc::new(crate::classad::parse_ad(text).unwrap())
    }

    fn exited(code: i32) -> RunEnd {
        RunEnd {
            status: Some(ExitStatus::from_raw(code << 8)),
            stop: None,
            usage: procs::Usage::default(),
            failed: None,
            ..RunEnd::default()
        }
    }

    /// The value `change` gives `name`, as text.
    fn set_of(change: &Change, name: &str) -> Option<String> {
        let set = match change {
            Change::Set(set) | Change::Leave { set } | Change::Update { set, .. } => set,
            _ => return None,
        };
        set.iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, e)| crate::classad::unparse::unparse(e))
    }

    /// The fate of a started run of a Running job that exited with `code`.
    fn exit_of_a_running_job(job: &Rc<ClassAd>, code: i32) -> Fate {
        fate(
            job,
            ID,
            Some(JobStatus::Running),
            false,
            &exited(code),
            true,
            160,
        )
    }

    #[test]
    fn an_exit_completes_the_job_and_lets_the_claim_go_on() {
        let job = ad("[JobCurrentStartDate = 100; ExitSignal = 9]");
        let f = exit_of_a_running_job(&job, 3);
        assert!(matches!(f.change, Change::Leave { .. }));
        assert_eq!(set_of(&f.change, "ExitCode").as_deref(), Some("3"));
        assert_eq!(
            set_of(&f.change, "ExitSignal").as_deref(),
            Some("undefined")
        );
        assert_eq!(set_of(&f.change, "JobStatus").as_deref(), Some("4"));
        assert!(f.reuse && f.leaves);
        assert_eq!(f.events.len(), 1);
    }

    #[test]
    fn on_exit_hold_holds_with_the_policy_code_and_ends_the_claim() {
        let job = ad("[OnExitHold = ExitCode == 3; OnExitHoldSubCode = 9]");
        let f = exit_of_a_running_job(&job, 3);
        assert_eq!(set_of(&f.change, "JobStatus").as_deref(), Some("5"));
        assert_eq!(set_of(&f.change, "HoldReasonCode").as_deref(), Some("3"));
        assert_eq!(set_of(&f.change, "HoldReasonSubCode").as_deref(), Some("9"));
        assert!(!f.reuse && !f.leaves);
    }

    #[test]
    fn the_queues_word_wins_over_an_exit() {
        let job = ad("[HoldReason = \"by hand\"; HoldReasonCode = 1]");
        let f = fate(
            &job,
            ID,
            Some(JobStatus::Held),
            false,
            &exited(0),
            true,
            160,
        );
        assert!(matches!(f.change, Change::Update { .. }));
        assert_eq!(set_of(&f.change, "JobStatus"), None);
        assert!(!f.reuse);
        let [e] = &f.events[..] else {
            panic!("{:?}", f.events)
        };
        assert!(
            matches!(&e.kind, EventKind::Held { code: 1, reason: Some(r), .. } if r == "by hand"),
            "{e:?}"
        );
    }

    #[test]
    fn stops_requeue_with_condors_vacate_codes() {
        let job = ad("[]");
        for (stop, code) in [
            (Stop::Vacate, hold_code::USER_VACATE_JOB),
            (Stop::Preempt, hold_code::STARTD_PREEMPTING_CLAIM_USER_PRIO),
            (Stop::PreemptRank, hold_code::STARTD_PREEMPTING_CLAIM_RANK),
            (Stop::Shutdown, hold_code::SYSTEM_POLICY_VACATE),
            (Stop::PolicyVacate, hold_code::JOB_POLICY_VACATE),
        ] {
            let f = fate(
                &job,
                ID,
                Some(JobStatus::Running),
                false,
                &RunEnd::stopped(stop),
                false,
                5,
            );
            assert_eq!(
                set_of(&f.change, "VacateReasonCode"),
                Some(code.to_string())
            );
            assert_eq!(set_of(&f.change, "JobStatus").as_deref(), Some("1"));
            // Not started: no eviction event.
            assert!(f.events.is_empty() && !f.reuse);
        }
    }

    /// Stopped to be vacated, and held and released meanwhile: the run
    /// ends as a hold's would, with the hold's 012 and the release's 013
    /// (the job stays as the release left it), not as a vacate's 004.
    #[test]
    fn a_vacated_run_held_and_released_meanwhile_logs_the_hold_and_the_release() {
        let job = ad(r#"[LastHoldReason = "first"; LastHoldReasonCode = 1; ReleaseReason = "go"]"#);
        let f = fate(
            &job,
            ID,
            Some(JobStatus::Idle),
            true,
            &RunEnd::stopped(Stop::Vacate),
            true,
            5,
        );
        let kinds: Vec<u32> = f.events.iter().map(|e| e.kind.number()).collect();
        assert_eq!(kinds, [12, 13]);
        assert_eq!(set_of(&f.change, "JobStatus"), None, "left as released");
    }

    /// A start that failed after the job was held and released: the
    /// hold's 012 and the release's 013 come before the failure's hold.
    #[test]
    fn a_failed_start_held_and_released_meanwhile_logs_the_owed_events_first() {
        let job = ad(r#"[LastHoldReason = "first"; ReleaseReason = "go"]"#);
        let hold = Hold::new("no exec", hold_code::FAILED_TO_CREATE_PROCESS, 2);
        let f = fate(
            &job,
            ID,
            Some(JobStatus::Idle),
            true,
            &RunEnd::failed(hold),
            false,
            5,
        );
        let kinds: Vec<u32> = f.events.iter().map(|e| e.kind.number()).collect();
        assert_eq!(kinds, [12, 13, 12]);
        assert_eq!(set_of(&f.change, "HoldReasonCode").as_deref(), Some("6"));
    }

    #[test]
    fn a_missed_deferral_is_held_for_recomputing() {
        let hold = Hold::new("late", hold_code::MISSED_DEFERRED_EXECUTION_TIME, 0);
        let f = fate(
            &ad("[]"),
            ID,
            Some(JobStatus::Running),
            false,
            &RunEnd::failed(hold),
            false,
            5,
        );
        assert_eq!(set_of(&f.change, "HoldReasonCode").as_deref(), Some("20"));
        assert_eq!(
            set_of(&f.change, policy::RECOMPUTE).as_deref(),
            Some("true")
        );
    }
}
