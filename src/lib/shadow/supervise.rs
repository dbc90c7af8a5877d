//! The run: [`Shadow::supervise`] waits for the job on the shadow's
//! signalfd and, each time it wakes, takes the queue's requests (stop,
//! suspend, continue), the shadow's own stop signals, reaps, escalates a
//! stop to SIGKILL when the vacate time is up, and records usage. A stop
//! sends the job's `KillSig` (any name of [`crate::vocab::SIGNALS`], or a
//! number), then SIGKILL after JobMaxVacateTime; a fast vacate sends
//! SIGKILL at once. When the job's own process is gone, nothing of it may
//! stay behind.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::classad::{ClassAd, Expr, Value};
use crate::machine;
use crate::queue::{Change, JobId};
use crate::userlog::{self, Event, EventKind};
use crate::vocab::{self, JobStatus, Request};

use super::finish::RunEnd;
use super::hooks::{self, Around, Updating};
use super::procs::{self, Wake};
use super::{Shadow, ShadowError, Stop};

/// How often requests are read even without a wake-up (a lost SIGUSR1).
const POLL: Duration = Duration::from_secs(5);

/// How long a job runs before its execute attributes are written on their
/// own; a job that ends sooner has them written with its end.
const EXEC_RECORD_AFTER: Duration = Duration::from_millis(50);

/// What the loop knows about the running job.
struct Watch {
    /// The job's process (and process group).
    pid: i32,
    stop: Option<Stop>,
    suspended: bool,
    /// When to send SIGKILL (again).
    kill_at: Option<Instant>,
    /// The highest usage seen so far.
    usage: procs::Usage,
    /// The cpu time of the job's processes already reaped.
    dead: procs::Usage,
    /// The ImageSize last recorded (an event goes out when it grows).
    reported_image: i64,
    exit: Option<ExitStatus>,
    next_update: Instant,
    next_poll: Instant,
    /// When to write the execute attributes, until they are written.
    record_exec: Option<Instant>,
    /// The UPDATE_JOB_INFO hook running beside the job.
    update: Option<Updating>,
    /// Its wait status when our own reap took it.
    update_status: Option<ExitStatus>,
}

impl Watch {
    fn reap(&mut self) {
        for r in procs::reap() {
            if self.update.as_ref().is_some_and(|u| u.pid() == r.pid) {
                self.update_status = Some(ExitStatus::from_raw(r.status));
                continue;
            }
            if r.hook {
                // A hook's leftover: neither the job's usage nor its end.
                continue;
            }
            self.dead.user += r.user;
            self.dead.sys += r.sys;
            if r.pid == self.pid && self.exit.is_none() {
                self.exit = Some(ExitStatus::from_raw(r.status));
            }
        }
    }

    /// Begins a stop: a suspended job is continued so it can see the
    /// signal; SIGKILL follows at `kill_at`.
    fn begin_stop(&mut self, stop: Stop, sig: libc::c_int, kill_at: Instant) {
        self.stop = Some(stop);
        if self.suspended {
            procs::signal_all(self.pid, libc::SIGCONT);
        }
        procs::signal_all(self.pid, sig);
        self.kill_at = Some(kill_at);
    }
}

impl Shadow {
    /// What the loop knows of job `pid` as it starts.
    fn watch(&self, ad: &Rc<ClassAd>, pid: i32) -> Watch {
        let start = Instant::now();
        Watch {
            pid,
            stop: None,
            suspended: false,
            kill_at: None,
            usage: procs::Usage::default(),
            dead: procs::Usage::default(),
            reported_image: ad.eval_int("ImageSize").unwrap_or(0),
            exit: None,
            next_update: start + Duration::from_secs(self.update_initial),
            next_poll: start + POLL,
            record_exec: Some(start + EXEC_RECORD_AFTER),
            update: None,
            update_status: None,
        }
    }

    /// Waits for the job, taking requests and updating usage (and running
    /// the UPDATE_JOB_INFO hook of `around` with each update), until it
    /// ends.
    pub(super) fn supervise(
        &mut self,
        id: JobId,
        ad: &Rc<ClassAd>,
        pid: i32,
        around: Option<&Around<'_>>,
    ) -> Result<RunEnd, ShadowError> {
        let mut watch = self.watch(ad, pid);
        if self.start_suspended {
            // Suspended while it waited for its deferral time: it starts
            // and is at once suspended (010 was written then).
            procs::signal_all(pid, libc::SIGSTOP);
            watch.suspended = true;
        }
        // Requests made before we wrote our pid.
        self.take_requests(id, ad, &mut watch, around)?;
        // The job runs, suspended if it must be and with those requests
        // taken: the log's restart, with its fsyncs, costs the shadow
        // nothing now (see `Queue::defer_log_upkeep`).
        self.q.log_upkeep();
        let mut wake = Wake::Child;
        loop {
            match wake {
                Wake::Child | Wake::Timeout => {}
                Wake::Request => self.take_requests(id, ad, &mut watch, around)?,
                Wake::Stop => {
                    if watch.stop.is_none() {
                        let at = Instant::now() + Duration::from_secs(self.vacate_time(ad));
                        watch.begin_stop(Stop::Shutdown, kill_sig(ad, Stop::Shutdown), at);
                    }
                }
            }
            watch.reap();
            self.poll_update(id, &mut watch, around)?;
            if watch.exit.is_some() {
                break;
            }
            let now = Instant::now();
            if watch.record_exec.is_some_and(|t| now >= t) {
                self.record_executing()?;
                watch.record_exec = None;
            }
            if let Some(k) = watch.kill_at
                && now >= k
            {
                procs::signal_all(pid, libc::SIGKILL);
                watch.kill_at = Some(now + Duration::from_secs(1));
            }
            if now >= watch.next_update {
                self.sample_usage(id, ad, &mut watch)?;
                if let Some(a) = around {
                    self.start_update(id, ad, &mut watch, a)?;
                }
                watch.next_update = now + Duration::from_secs(self.update_every);
            }
            if now >= watch.next_poll {
                watch.next_poll = now + POLL;
                wake = Wake::Request;
                continue;
            }
            wake = self.signals.wait(until_next(&watch));
        }
        clear_leftovers(&mut watch);
        self.end_update(id, &mut watch, around)?;
        // Nothing of a hook outlives the job's run either.
        procs::kill_hook_groups(Duration::from_secs(5));
        Ok(RunEnd {
            status: watch.exit,
            stop: watch.stop,
            usage: watch.usage,
            ..RunEnd::default()
        })
    }

    /// When the job has ended: an UPDATE_JOB_INFO that has ended too is
    /// taken (its failure noted); one still running is killed, unnoted, as
    /// HTCondor's starter never waits for this hook (and JOB_EXIT, which
    /// follows, must not wait for it either).
    fn end_update(
        &mut self,
        id: JobId,
        watch: &mut Watch,
        around: Option<&Around<'_>>,
    ) -> Result<(), ShadowError> {
        watch.reap();
        self.poll_update(id, watch, around)?;
        if let Some(mut u) = watch.update.take() {
            u.kill();
        }
        Ok(())
    }

    /// Carries out the queue's requests for the running job; a suspend or
    /// a continue runs UPDATE_JOB_INFO (JobState says which), as
    /// HTCondor's starter does.
    fn take_requests(
        &mut self,
        id: JobId,
        ad: &Rc<ClassAd>,
        watch: &mut Watch,
        around: Option<&Around<'_>>,
    ) -> Result<(), ShadowError> {
        let pid = watch.pid;
        for kind in self.pending(id)? {
            if let Some(stop) = Stop::requested(kind) {
                if watch.stop.is_none() {
                    if kind == Request::VacateFast {
                        watch.begin_stop(stop, libc::SIGKILL, Instant::now());
                    } else {
                        let at = Instant::now() + Duration::from_secs(self.vacate_time(ad));
                        watch.begin_stop(stop, kill_sig(ad, stop), at);
                    }
                } else if kind == Request::Remove {
                    // A harder request overrides a softer one.
                    watch.stop = Some(Stop::Remove);
                } else if kind == Request::VacateFast {
                    procs::signal_all(pid, libc::SIGKILL);
                }
                continue;
            }
            match kind {
                Request::Suspend if !watch.suspended && watch.stop.is_none() => {
                    let n = procs::signal_all(pid, libc::SIGSTOP);
                    watch.suspended = true;
                    self.suspend_change(id, ad, true, n)?;
                    self.update_now(id, ad, watch, around)?;
                }
                Request::Continue if watch.suspended => {
                    procs::signal_all(pid, libc::SIGCONT);
                    watch.suspended = false;
                    self.suspend_change(id, ad, false, 0)?;
                    self.update_now(id, ad, watch, around)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Runs UPDATE_JOB_INFO out of turn (for a suspend or a continue),
    /// unless the one before still runs.
    fn update_now(
        &mut self,
        id: JobId,
        ad: &Rc<ClassAd>,
        watch: &mut Watch,
        around: Option<&Around<'_>>,
    ) -> Result<(), ShadowError> {
        let Some(a) = around else { return Ok(()) };
        // One that has just ended is taken first.
        watch.reap();
        self.poll_update(id, watch, around)?;
        self.start_update(id, ad, watch, a)
    }

    /// Starts UPDATE_JOB_INFO with the job's ad and its update attributes,
    /// unless the previous one still runs.
    fn start_update(
        &mut self,
        id: JobId,
        ad: &Rc<ClassAd>,
        watch: &mut Watch,
        a: &Around<'_>,
    ) -> Result<(), ShadowError> {
        if watch.update.is_some() {
            return Ok(());
        }
        let state = if watch.suspended {
            "Suspended"
        } else {
            "Running"
        };
        let started = ad.eval_int("JobCurrentStartExecutingDate").unwrap_or(0);
        let extra = hooks::update_attrs(Some(state), watch.pid, started, &watch.usage);
        let stdin = hooks::ad_with(a.run, &extra);
        match a.hooks.start_update(&stdin, &a.ctx) {
            None => {}
            Some(Ok(u)) => {
                // Its processes are not the job's (usage, signals).
                procs::spare_group(u.pid());
                watch.update = Some(u);
            }
            Some(Err(failure)) => self.hook_failed(id, a, &failure)?,
        }
        Ok(())
    }

    /// Takes the end of a running UPDATE_JOB_INFO, if it has ended.
    fn poll_update(
        &mut self,
        id: JobId,
        watch: &mut Watch,
        around: Option<&Around<'_>>,
    ) -> Result<(), ShadowError> {
        let Some(pgid) = watch.update.as_ref().map(Updating::pid) else {
            return Ok(());
        };
        let failure = match (watch.update_status.take(), watch.update.as_mut()) {
            (_, None) => return Ok(()),
            (Some(st), Some(_)) => watch.update.take().and_then(|u| u.reaped(st)),
            (None, Some(u)) => match u.try_finish() {
                None => return Ok(()),
                Some(f) => {
                    watch.update = None;
                    f
                }
            },
        };
        // What it left running goes with it (and stays spared until
        // reaped: it is never the job's).
        crate::sys::pids::signal_group(pgid, libc::SIGKILL);
        if let (Some(text), Some(a)) = (failure, around) {
            self.hook_failed(id, a, &text)?;
        }
        Ok(())
    }

    /// A starter hook whose exit decides nothing failed: event 021 and the
    /// job's StarterHookFailure attributes say so.
    pub(super) fn hook_failed(
        &mut self,
        id: JobId,
        a: &Around<'_>,
        text: &str,
    ) -> Result<(), ShadowError> {
        a.hooks.note(false, text, None);
        let now = crate::clock::now();
        self.set_job(id, now, Change::Set(hooks::failure_attrs(text, now)))
    }

    /// Reads the usage of the job's process tree, keeps the highest
    /// values, and records them.
    fn sample_usage(
        &mut self,
        id: JobId,
        ad: &Rc<ClassAd>,
        watch: &mut Watch,
    ) -> Result<(), ShadowError> {
        let me = std::process::id() as i32;
        let live = procs::usage(&procs::descendants(me));
        let (u, dead) = (&mut watch.usage, &watch.dead);
        u.user = u.user.max(live.user + dead.user);
        u.sys = u.sys.max(live.sys + dead.sys);
        u.image_size = u.image_size.max(live.image_size);
        u.rss = live.rss;
        u.processes = live.processes;
        let usage = watch.usage;
        self.update_usage(id, ad, &usage, &mut watch.reported_image)
    }

    /// The job's vacate time: JobMaxVacateTime (or KillSigTimeout) when
    /// set, else KILLING_TIMEOUT.
    fn vacate_time(&self, ad: &Rc<ClassAd>) -> u64 {
        ad.eval_int("JobMaxVacateTime")
            .or_else(|| ad.eval_int("KillSigTimeout"))
            .map(|t| t.max(0) as u64)
            .unwrap_or(self.killing_timeout)
    }

    /// The job's requests. Suspend and continue are done once read; stops
    /// stay until the end is committed, so a crash cannot lose them.
    pub(super) fn pending(&mut self, id: JobId) -> Result<Vec<Request>, ShadowError> {
        // The read and the clearing are one transaction: a request made in
        // between would otherwise be cleared unread.
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
        });
        match kinds {
            // No room in SPOOL to clear them: the stops are acted on, a
            // suspend or continue waits for the next look.
            Err(crate::queue::QueueError::Full { .. }) => {
                Ok(quick.into_iter().filter(|k| k.stops()).collect())
            }
            other => Ok(other?),
        }
    }

    /// Records a suspend (JobStatus 7, the suspension counters, the slot's
    /// activity, event 010) or a continue (back to 2, event 011).
    pub(super) fn suspend_change(
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
            w.change(&r, &cur, &Change::Set(suspension_attrs(&cur, suspend, now)))?;
            let activity = if suspend { "Suspended" } else { "Busy" };
            machine::set_activity(w.conn(), &slot, "Claimed", activity, now)?;
            Ok(())
        })?;
        if let Some(p) = userlog::user_log(ad) {
            let kind = if suspend {
                EventKind::Suspended {
                    processes: processes.max(1),
                }
            } else {
                EventKind::Unsuspended
            };
            let e = Event {
                id: id.into(),
                time: now,
                kind,
            };
            let _ = userlog::log_job_events(&[(p, e)]);
        }
        Ok(())
    }

    /// Records the usage so far; an ImageSize that grew also goes to the
    /// event log (006).
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
        self.set_job(id, now, Change::Set(set))?;
        if u.image_size > *reported {
            *reported = u.image_size;
            if let Some(p) = userlog::user_log(ad) {
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
}

/// The job attributes a suspend or a continue sets.
fn suspension_attrs(cur: &Rc<ClassAd>, suspend: bool, now: i64) -> Vec<(String, Expr)> {
    let job_status = if suspend {
        JobStatus::Suspended
    } else {
        JobStatus::Running
    };
    let mut set = vec![("JobStatus".to_string(), job_status.expr())];
    if suspend {
        let n = cur.eval_int("TotalSuspensions").unwrap_or(0);
        set.push(("TotalSuspensions".into(), Expr::int(n + 1)));
        set.push(("LastSuspensionTime".into(), Expr::int(now)));
    } else if let Some(t) = cur.eval_int("LastSuspensionTime") {
        let c = cur.eval_int("CumulativeSuspensionTime").unwrap_or(0);
        set.push((
            "CumulativeSuspensionTime".into(),
            Expr::int(c + (now - t).max(0)),
        ));
        set.push(("LastSuspensionTime".into(), Expr::int(0)));
    }
    set
}

/// Milliseconds until the loop has something to do by the clock.
fn until_next(watch: &Watch) -> i64 {
    let mut deadline = watch.next_update.min(watch.next_poll);
    let hook = watch.update.as_ref().map(Updating::deadline);
    for t in [watch.kill_at, watch.record_exec, hook]
        .into_iter()
        .flatten()
    {
        deadline = deadline.min(t);
    }
    let ms = deadline
        .saturating_duration_since(Instant::now())
        .as_millis() as i64;
    ms.max(1)
}

/// After the job's own process ended: kills whatever it left running (a
/// subreaper without children has no descendants at all, so then /proc
/// is not read), and adds the reaped processes' cpu time to the usage.
fn clear_leftovers(watch: &mut Watch) {
    let me = std::process::id() as i32;
    let rest = if procs::has_children() {
        procs::descendants(me)
    } else {
        Vec::new()
    };
    if !rest.is_empty() {
        let live = procs::usage(&rest);
        watch.usage.image_size = watch.usage.image_size.max(live.image_size);
        procs::signal_all(watch.pid, libc::SIGCONT);
        procs::signal_all(watch.pid, libc::SIGKILL);
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until && !procs::descendants(me).is_empty() {
            watch.reap();
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    watch.reap();
    watch.usage.user = watch.usage.user.max(watch.dead.user);
    watch.usage.sys = watch.usage.sys.max(watch.dead.sys);
}

/// The signal a stop sends first, as HTCondor's starter picks it: a
/// removal sends the job's RemoveKillSig and a hold its HoldKillSig when
/// the job has one, every other stop (and those without) its KillSig; each
/// by number or by any name the vocabulary's signal table knows (as submit
/// accepts them); SIGTERM when unset or unknown.
fn kill_sig(ad: &Rc<ClassAd>, stop: Stop) -> libc::c_int {
    let own = match stop {
        Stop::Remove => signal_attr(ad, "RemoveKillSig"),
        Stop::Hold => signal_attr(ad, "HoldKillSig"),
        _ => None,
    };
    own.or_else(|| signal_attr(ad, "KillSig"))
        .unwrap_or(libc::SIGTERM)
}

fn signal_attr(ad: &Rc<ClassAd>, name: &str) -> Option<libc::c_int> {
    match ad.eval(name) {
        Value::Int(i) => Some(i as libc::c_int),
        Value::Str(s) => vocab::signal_number(&s),
        _ => None,
    }
}

pub(super) fn real(v: f64) -> Expr {
    Expr::Lit(Value::Real(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ad(text: &str) -> Rc<ClassAd> {
        Rc::new(crate::classad::parse_ad(text).unwrap())
    }

    // The shadow once had its own 12-name table: SIGXCPU fell back to
    // SIGTERM although submit accepted it.
    #[test]
    fn kill_sig_knows_every_name_submit_accepts() {
        let vacate = |text| kill_sig(&ad(text), Stop::Vacate);
        assert_eq!(vacate(r#"[KillSig = "SIGXCPU"]"#), libc::SIGXCPU);
        assert_eq!(vacate(r#"[KillSig = "xcpu"]"#), libc::SIGXCPU);
        assert_eq!(vacate("[KillSig = 10]"), libc::SIGUSR1);
        assert_eq!(vacate(r#"[KillSig = "SIGNOPE"]"#), libc::SIGTERM);
        assert_eq!(vacate("[]"), libc::SIGTERM);
    }

    // remove_kill_sig and hold_kill_sig were accepted by submit and then
    // ignored: every stop sent KillSig.
    #[test]
    fn remove_and_hold_send_their_own_signal_when_the_job_has_one() {
        let job =
            ad(r#"[KillSig = "SIGUSR1"; RemoveKillSig = "SIGXCPU"; HoldKillSig = "SIGUSR2"]"#);
        assert_eq!(kill_sig(&job, Stop::Remove), libc::SIGXCPU);
        assert_eq!(kill_sig(&job, Stop::Hold), libc::SIGUSR2);
        assert_eq!(kill_sig(&job, Stop::Vacate), libc::SIGUSR1);
        assert_eq!(kill_sig(&job, Stop::Preempt), libc::SIGUSR1);
        let plain = ad(r#"[KillSig = "SIGUSR1"]"#);
        assert_eq!(kill_sig(&plain, Stop::Remove), libc::SIGUSR1);
        assert_eq!(kill_sig(&plain, Stop::Hold), libc::SIGUSR1);
        assert_eq!(kill_sig(&ad("[]"), Stop::Remove), libc::SIGTERM);
    }

    #[test]
    fn a_continue_adds_the_time_spent_suspended() {
        let job =
            ad("[TotalSuspensions = 1; LastSuspensionTime = 100; CumulativeSuspensionTime = 5]");
        let set = suspension_attrs(&job, false, 130);
        let text: Vec<String> = set
            .iter()
            .map(|(n, e)| format!("{n} = {}", crate::classad::unparse::unparse(e)))
            .collect();
        assert_eq!(
            text,
            [
                "JobStatus = 2",
                "CumulativeSuspensionTime = 35",
                "LastSuspensionTime = 0"
            ]
        );
        let set = suspension_attrs(&job, true, 130);
        assert_eq!(set[1].0, "TotalSuspensions");
        assert_eq!(crate::classad::unparse::unparse(&set[1].1), "2");
    }
}
