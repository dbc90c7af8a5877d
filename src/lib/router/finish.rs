//! The end of a managed job (spec 5.4's finalize, cleanup and retire,
//! 5.6's yield): JOB_FINALIZE and the terminate event, JOB_CLEANUP (a
//! failure leaves the job to be cleaned up again next pass), then one
//! transaction that lets the copy go (to history when finalized, removed
//! otherwise), gives the source back, counts the route's success or
//! failure and retires the job.

use std::rc::Rc;

use crate::classad::{ClassAd, Expr, Value};
use crate::queue::{Change, JobId, JobRow};
use crate::userlog::{EventKind, Exit, Rusage, Termination};
use crate::vocab::{JobStatus, Request, Universe};

use super::hooks::{self, Hook, Ran};
use super::mirror;
use super::pass::{Pass, status_of, text_of};
use super::state::{self, Managed, Outcome, Stage};
use super::{ABORT_REASON, RouterError, attr};

/// The change that removes a routed copy, and whether its shadow must be
/// asked to stop it: a copy a shadow runs is marked and its shadow asked;
/// a grid copy its gridmanager manages is marked and left to the
/// gridmanager, which removes its remote job and then lets it leave (as
/// tern_rm leaves one); any other leaves the queue now. A grid copy that
/// left at once, idle here while its remote job ran (the gridmanager had
/// not polled yet), left that job running in the other queue for good.
pub(super) fn remove_change(ad: &ClassAd, reason: &str) -> (Change, bool) {
    let set = vec![
        ("RemoveReason".to_string(), Expr::string(reason)),
        ("JobStatus".to_string(), JobStatus::Removed.expr()),
        ("LeaveJobInQueue".to_string(), Expr::Lit(Value::Bool(false))),
    ];
    let grid = matches!(
        ad.get("JobUniverse").and_then(|e| e.literal_value()),
        Some(Value::Int(u)) if *u == Universe::Grid.code()
    );
    if grid && text_of(ad, attr::MANAGED).as_deref() == Some("External") {
        return (Change::Set(set), false);
    }
    let s = status_of(ad);
    if matches!(
        JobStatus::from_code(s),
        Some(JobStatus::Running | JobStatus::TransferringOutput | JobStatus::Suspended)
    ) {
        (Change::Set(set), true)
    } else {
        (Change::Leave { set }, false)
    }
}

impl Pass<'_> {
    /// The copy completed: JOB_FINALIZE, JobFailureTest, cleanup, then the
    /// terminate event, once the finalization is committed.
    pub(super) fn finalize(
        &mut self,
        m: Managed,
        src_row: JobRow,
        mut src: ClassAd,
        dest_row: JobRow,
        dest: ClassAd,
    ) -> Result<(), RouterError> {
        let stdin = hooks::stdin_of(&[&src, &dest]);
        match self.hook(&src, m.src, Hook::JobFinalize, &stdin)? {
            Ran::NotConfigured => {}
            Ran::Output(update) => {
                let set: Vec<(String, Expr)> = update
                    .iter()
                    .map(|(n, e)| (n.to_string(), e.clone()))
                    .collect();
                if !set.is_empty() {
                    let id = src_row.id;
                    self.q.write(self.now, |w| {
                        if let Some(row) = w.row(id)? {
                            let ad = w.full_ad(&row)?;
                            w.change(&row, &ad, &Change::Set(set.clone()))?;
                        }
                        Ok(())
                    })?;
                }
                for (n, e) in update.iter() {
                    src.insert(n, e.clone());
                }
            }
            Ran::Busy => return Ok(()),
            Ran::Failed { .. } | Ran::BadOutput(_) => {
                self.report.log(format!(
                    "job {}: JOB_FINALIZE failed; the job is routed again",
                    m.src
                ));
                return self.finish(
                    m,
                    Outcome::Rerouted,
                    Some(src_row),
                    Some(src),
                    Some(dest_row),
                    Some(dest),
                    false,
                );
            }
        }
        let failed = self
            .route_named(&m.route)
            .and_then(|r| r.job_failure_test.clone())
            .is_some_and(|t| crate::queue::matches_constraint(&t, &Rc::new(src.clone())));
        let outcome = if failed {
            Outcome::Failure
        } else {
            Outcome::Success
        };
        self.report.log(format!(
            "job {}: routed copy {} completed ({})",
            m.src,
            dest_row.id,
            if failed {
                "JobFailureTest: failure"
            } else {
                "success"
            }
        ));
        let (id, terminate, for_log) = (m.src, terminated(&src), src.clone());
        self.finish(
            m,
            outcome,
            Some(src_row),
            Some(src),
            Some(dest_row),
            Some(dest),
            true,
        )?;
        // The terminate event follows the commit that recorded the
        // finalization (the job's stage, or its retirement): a finalization
        // that failed to commit writes none, and the next pass, which
        // finalizes again, writes it once.
        self.event(&for_log, id, terminate);
        Ok(())
    }

    /// Cleanup (spec 5.4): JOB_CLEANUP if a copy exists (a failure leaves
    /// the job in cleanup, retried each pass), then in one transaction the
    /// copy removed (or, completed, let go to history), the source yielded,
    /// the route's counters and the job retired.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn finish(
        &mut self,
        mut m: Managed,
        outcome: Outcome,
        src_row: Option<JobRow>,
        src: Option<ClassAd>,
        dest_row: Option<JobRow>,
        dest: Option<ClassAd>,
        finalized: bool,
    ) -> Result<(), RouterError> {
        m.outcome = outcome;
        m.stage = if finalized {
            Stage::Finalized
        } else {
            Stage::Cleanup
        };
        if !self.cleanup_hook_done(&m, src.as_ref(), dest.as_ref())? {
            let mm = m.clone();
            self.q.write(self.now, |w| state::put(w.conn(), &mm))?;
            return Ok(());
        }
        self.complete_cleanup(m, src_row.map(|r| r.id), src, dest_row.map(|r| r.id))
    }

    /// A job left in cleanup by a failed JOB_CLEANUP: the hook again, then
    /// the rest.
    pub(super) fn cleanup(
        &mut self,
        m: Managed,
        src_row: Option<JobRow>,
        src: Option<ClassAd>,
        dest_row: Option<JobRow>,
        dest: Option<ClassAd>,
    ) -> Result<(), RouterError> {
        if !self.cleanup_hook_done(&m, src.as_ref(), dest.as_ref())? {
            return Ok(());
        }
        self.complete_cleanup(m, src_row.map(|r| r.id), src, dest_row.map(|r| r.id))
    }

    /// JOB_CLEANUP, when a copy exists: done unless it failed (a kill by
    /// a signal counts as done) or is still running.
    fn cleanup_hook_done(
        &mut self,
        m: &Managed,
        src: Option<&ClassAd>,
        dest: Option<&ClassAd>,
    ) -> Result<bool, RouterError> {
        let (Some(s), Some(d)) = (src, dest) else {
            return Ok(true);
        };
        Ok(!matches!(
            self.hook(s, m.src, Hook::JobCleanup, &hooks::stdin_of(&[d]))?,
            Ran::Failed {
                signalled: false,
                ..
            } | Ran::Busy
        ))
    }

    pub(super) fn complete_cleanup(
        &mut self,
        m: Managed,
        src_id: Option<JobId>,
        src: Option<ClassAd>,
        dest_id: Option<JobId>,
    ) -> Result<(), RouterError> {
        let finalized = m.stage == Stage::Finalized;
        let outcome = m.outcome;
        let release_on_hold = self.rc.release_on_hold;
        let now = self.now;
        let route = m.route.clone();
        let mut wake: Option<JobId> = None;
        let mut src_events: Vec<EventKind> = Vec::new();
        self.q.write(now, |w| {
            // Read again inside the transaction: this pass may have
            // changed both since it read them.
            let dest_now = match dest_id {
                Some(id) => w.row(id)?,
                None => None,
            };
            let dest_now = match dest_now {
                Some(r) => {
                    let ad = w.full_ad(&r)?;
                    Some((r, ad))
                }
                None => None,
            };
            let src_now = match src_id {
                Some(id) => w.row(id)?,
                None => None,
            };
            let src_now = match src_now {
                Some(r) => {
                    let ad = w.full_ad(&r)?;
                    Some((r, ad))
                }
                None => None,
            };
            if let Some((row, ad)) = &dest_now {
                let change = if finalized {
                    // Done: the copy leaves the queue for history.
                    Change::Leave {
                        set: vec![("LeaveJobInQueue".into(), Expr::Lit(Value::Bool(false)))],
                    }
                } else {
                    let (c, running) = remove_change(ad, ABORT_REASON);
                    if running {
                        w.request(row.id, Request::Remove)?;
                        wake = Some(row.id);
                    }
                    c
                };
                w.change(row, ad, &change)?;
            }
            if let Some((row, ad)) = &src_now {
                let (change, events) = yield_change(ad, finalized, release_on_hold);
                src_events = events;
                w.change(row, ad, &change)?;
            }
            state::count(w.conn(), &route, outcome, now)?;
            state::retire(w.conn(), m.src)?;
            Ok(())
        })?;
        if let Some(id) = wake {
            crate::queue::joblock::wake(self.spool, id);
        }
        hooks::forget(self.spool, m.src);
        if let Some(src) = &src {
            for e in src_events {
                self.event(src, m.src, e);
            }
        }
        self.report.log(format!(
            "job {}: retired from route {} ({})",
            m.src,
            m.route,
            match outcome {
                Outcome::Success => "success",
                Outcome::Failure => "failure",
                Outcome::Interrupted => "interrupted",
                Outcome::Rerouted => "to be routed again",
                Outcome::None => "no outcome",
            }
        ));
        Ok(())
    }
}

/// The yield (spec 5.6): the source handed back to the queue. Returns the
/// change and the events for its log.
pub fn yield_change(
    src: &ClassAd,
    finalized: bool,
    release_on_hold: bool,
) -> (Change, Vec<EventKind>) {
    let mut set: Vec<(String, Expr)> = vec![
        (
            attr::MANAGED.into(),
            Expr::string(if finalized { "ScheddDone" } else { "Schedd" }),
        ),
        (attr::MANAGED_MANAGER.into(), Expr::string("")),
    ];
    let mut delete: Vec<String> = Vec::new();
    let mut events = Vec::new();
    let s = status_of(src);
    match JobStatus::from_code(s) {
        Some(JobStatus::Removed) => {
            return (Change::Leave { set }, events);
        }
        // Not finalized (JOB_FINALIZE failed): the source is routed again.
        Some(JobStatus::Completed) if !finalized => {
            set.push(("JobStatus".into(), JobStatus::Idle.expr()));
        }
        Some(JobStatus::Completed) => {
            let keep = crate::queue::matches_constraint(
                &src.get("LeaveJobInQueue")
                    .cloned()
                    .unwrap_or(Expr::Lit(Value::Bool(false))),
                &Rc::new(src.clone()),
            );
            if !keep {
                return (Change::Leave { set }, events);
            }
        }
        Some(JobStatus::Held) => {
            if mirror::hold_copied(src) && release_on_hold {
                delete.push(attr::HOLD_COPIED.into());
                set.push(("JobStatus".into(), JobStatus::Idle.expr()));
                events.push(EventKind::Released {
                    reason: Some("routed job released".into()),
                });
            }
        }
        Some(JobStatus::Idle) => {}
        _ => {
            if s == JobStatus::Running.code() {
                events.push(mirror::evicted());
            }
            set.push(("JobStatus".into(), JobStatus::Idle.expr()));
        }
    }
    (Change::Update { set, delete }, events)
}

/// The terminate event for the source, from its mirrored exit and usage.
fn terminated(src: &ClassAd) -> EventKind {
    let ad = Rc::new(src.clone());
    let exit = if ad.eval_bool("ExitBySignal") == Some(true) {
        Exit::Signal {
            signal: ad.eval_int("ExitSignal").unwrap_or(0),
            core_file: None,
        }
    } else {
        Exit::Normal {
            return_value: ad.eval_int("ExitCode").unwrap_or(0),
        }
    };
    let usage = Rusage {
        user: ad.eval_real("RemoteUserCpu").unwrap_or(0.0) as i64,
        sys: ad.eval_real("RemoteSysCpu").unwrap_or(0.0) as i64,
    };
    EventKind::Terminated(Box::new(Termination {
        exit,
        run_remote: usage,
        run_local: Rusage::default(),
        total_remote: usage,
        total_local: Rusage::default(),
        sent_bytes: ad.eval_real("BytesSent").unwrap_or(0.0),
        received_bytes: ad.eval_real("BytesRecvd").unwrap_or(0.0),
        total_sent_bytes: ad.eval_real("BytesSent").unwrap_or(0.0),
        total_received_bytes: ad.eval_real("BytesRecvd").unwrap_or(0.0),
        resources: Vec::new(),
    }))
}
