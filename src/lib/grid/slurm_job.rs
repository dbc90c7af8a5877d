//! The steps of a `batch slurm` job in a gridmanager round: submit (the
//! batch script, sbatch, adoption by job name after a crash), follow
//! (squeue's state, then scontrol and sacct for the end) and cancel.

use crate::classad::{Expr, Value};
use crate::queue::Change;
use crate::userlog::{self};
use crate::vocab::{JobStatus, hold_code};

use super::changes::*;
use super::ids::{self, SlurmId};
use super::manager::{Job, Round, STATUS_ATTEMPTS};
use super::slurm::{self, Phase};
use super::{GridError, events, script};

impl Round<'_> {
    fn slurm_down(&self) -> bool {
        matches!(self.slurm, Some(Err(_)) | None)
    }

    pub(super) fn slurm_step(&mut self, j: &Job) -> Result<(), GridError> {
        let gid = j.str("GridJobId").and_then(|g| SlurmId::parse(&g));
        let slurm_job = gid.as_ref().and_then(|g| g.job().map(String::from));
        match j.status() {
            Some(JobStatus::Removed) => {
                if let Some(id) = &slurm_job {
                    if self.slurm_down() {
                        return Ok(());
                    }
                    if let Err(e) = slurm::cancel(&j.owner(), id) {
                        note!("tern_gridmanager: job {}: {e}", j.row.id);
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
                    if let Err(e) = slurm::cancel(&j.owner(), id) {
                        note!("tern_gridmanager: job {}: {e}", j.row.id);
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
        let qdate = j.ad.eval_int("QDate").unwrap_or(j.row.qdate);
        let sandbox = ids::sandbox_id(crate::sys::hostname(), j.row.id, qdate);
        let count = j.ad.eval_int("GridSubmitCount").unwrap_or(0);
        // A 3-token id on a job we manage: a submission may have reached
        // Slurm before the last gridmanager died. Otherwise a new one.
        let recovering = gid.is_some() && j.managed_externally();
        let count = if recovering { count } else { count + 1 };
        let name = format!("{}.{count}", ids::slurm_job_name(&sandbox));
        if !recovering && !self.claim_for_slurm(j, &sandbox, count)? {
            return Ok(());
        }
        let found = if recovering {
            match slurm::find_by_name(&j.owner(), &name) {
                Ok(f) => f,
                Err(_) => return Ok(()),
            }
        } else {
            None
        };
        let slurm_id = match found {
            Some(f) => f,
            None => match self.sbatch(j, &name, &sandbox)? {
                Some(s) => s,
                None => return Ok(()),
            },
        };
        self.submitted += 1;
        self.record_submission(j, sandbox, slurm_id)
    }

    /// Claims the job before sbatch: Managed, the 3-token GridJobId and the
    /// submission's number. Whether the job was still there to claim.
    fn claim_for_slurm(&mut self, j: &Job, sandbox: &str, count: i64) -> Result<bool, GridError> {
        let three_text = SlurmId {
            sandbox: sandbox.to_string(),
            submitted: None,
        }
        .format();
        Ok(self.commit(j.row.id, j.row.status, |_| {
            (
                Change::Set(vec![
                    set("Managed", Expr::string("External")),
                    set("GridJobId", Expr::string(&three_text)),
                    set("GridSubmitCount", Expr::int(count)),
                ]),
                vec![],
            )
        })?)
    }

    /// Builds the batch script and runs sbatch as the owner; the Slurm job
    /// id, or `None` when the job was held instead (a bad script, an Iwd
    /// the owner cannot enter, sbatch refusing it) or Slurm went down.
    fn sbatch(&mut self, j: &Job, name: &str, sandbox: &str) -> Result<Option<String>, GridError> {
        let now = self.now;
        let id = j.row.id;
        let sc = match script::build(&j.ad, name, &format!("home_bl_{sandbox}")) {
            Ok(s) => s,
            Err(script::ScriptError(why)) => {
                self.commit(id, j.row.status, |ad| {
                    grid_hold(ad, id, now, &why, hold_code::UNSPECIFIED, 0, false, true)
                })?;
                return Ok(None);
            }
        };
        if let Err(e) = super::owner::can_enter(&j.owner(), &sc.iwd) {
            let why = format!(
                "submission command failed (exit code = 1) (stdout:Error) (stderr:cd: {}: {}-Failed to CD to Initial Working Directory.)",
                sc.iwd.display(),
                crate::sys::io_error_text(&e)
            );
            self.commit(id, j.row.status, |ad| {
                grid_hold(ad, id, now, &why, hold_code::UNSPECIFIED, 0, false, true)
            })?;
            return Ok(None);
        }
        match slurm::submit(&j.owner(), &sc.text, &sc.iwd) {
            Ok(s) => Ok(Some(s)),
            Err(slurm::SubmitFailed(why)) => {
                // sbatch fails too when the controller went down since the
                // round's squeue: that is the resource, not the job.
                if slurm::list(&j.owner()).is_err() {
                    return Ok(None);
                }
                self.commit(id, j.row.status, |ad| {
                    grid_hold(ad, id, now, &why, hold_code::UNSPECIFIED, 0, false, true)
                })?;
                Ok(None)
            }
        }
    }

    /// Records the submission: the 4-token GridJobId, IDLE, and event 027.
    fn record_submission(
        &mut self,
        j: &Job,
        sandbox: String,
        slurm_id: String,
    ) -> Result<(), GridError> {
        let now = self.now;
        let id = j.row.id;
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
        let Some(Ok(listing)) = &self.slurm else {
            return self.status_unknown(j);
        };
        let listed = listing.get(slurm_id).cloned();
        let phase = listed.as_ref().map(|l| slurm::phase(&l.state));
        let known = Known::of(j, self.now);
        match phase {
            Some(Phase::Idle) => self.slurm_idle(j, known),
            Some(Phase::Running) => self.slurm_running(j, known),
            Some(Phase::Finished) | Some(Phase::Cancelled) | None => {
                self.slurm_ended(j, &gid, slurm_id, listed, phase, known)
            }
        }
    }

    /// No status this round: after long enough, CurrentStatusUnknown and
    /// 029.
    fn status_unknown(&mut self, j: &Job) -> Result<(), GridError> {
        let now = self.now;
        let id = j.row.id;
        // The last status came when the resource was last seen up (the
        // job is not rewritten at every poll that changes nothing).
        let last = j.ad.eval_int("GridResourceUnavailableTime").unwrap_or(now);
        if now - last > self.knobs.unknown_after && !j.ad.eval("CurrentStatusUnknown").is_true() {
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
        Ok(())
    }

    /// Pending in Slurm: idle again here, with an eviction event, if it
    /// ran; else only the news that the status is known again.
    fn slurm_idle(&mut self, j: &Job, known: Known) -> Result<(), GridError> {
        let now = self.now;
        let id = j.row.id;
        if j.status() == Some(JobStatus::Running) {
            self.commit(id, j.row.status, |ad| {
                let mut s = known.set;
                s.push(set("JobStatus", JobStatus::Idle.expr()));
                s.push(set("GridJobStatus", Expr::string("IDLE")));
                s.extend(leave_running(ad, now));
                let mut e = known.events;
                e.push(crate::negotiator::evicted(id, now, None));
                (Change::Set(s), e)
            })?;
        } else {
            self.commit_known(j, known)?;
        }
        Ok(())
    }

    /// Running in Slurm: running here too, with the execute event, the
    /// first time; else only the news that the status is known again.
    fn slurm_running(&mut self, j: &Job, known: Known) -> Result<(), GridError> {
        let now = self.now;
        let id = j.row.id;
        if j.status() != Some(JobStatus::Running) {
            let gr = j.str("GridResource").unwrap_or_default();
            self.commit(id, j.row.status, |ad| {
                let mut s = known.set;
                s.extend(start_running(ad, now));
                s.push(set("GridJobStatus", Expr::string("RUNNING")));
                let mut e = known.events;
                e.push(events::executing(id, now, &gr));
                (Change::Set(s), e)
            })?;
        } else {
            self.commit_known(j, known)?;
        }
        Ok(())
    }

    /// Commits `known` when it has news (the status known again), so that
    /// a poll that changes nothing does not rewrite the job.
    fn commit_known(&mut self, j: &Job, known: Known) -> Result<(), GridError> {
        if !known.events.is_empty() {
            self.commit(j.row.id, j.row.status, |_| {
                (Change::Set(known.set), known.events)
            })?;
        }
        Ok(())
    }

    /// Finished, cancelled or no longer listed: how it ended (from squeue,
    /// else scontrol or sacct), then held when cancelled, completed with
    /// its exit, asked again soon after submission, or held for want of an
    /// exit code.
    fn slurm_ended(
        &mut self,
        j: &Job,
        gid: &SlurmId,
        slurm_id: &str,
        listed: Option<slurm::Listed>,
        phase: Option<Phase>,
        known: Known,
    ) -> Result<(), GridError> {
        let now = self.now;
        let id = j.row.id;
        let from_list = listed.as_ref().and_then(|l| l.ended.clone());
        let ended = match from_list {
            Some(e) => Some(e),
            None => match slurm::ended(&j.owner(), slurm_id) {
                Ok(e) => e,
                Err(why) => return self.status_failed(j, slurm_id, &why),
            },
        };
        self.failures.remove(&id);
        let cancelled = phase == Some(Phase::Cancelled)
            || ended
                .as_ref()
                .is_some_and(|e| slurm::phase(&e.state) == Phase::Cancelled);
        if cancelled {
            return self.slurm_cancelled(j, gid, known);
        }
        match ended {
            Some(e) => {
                let gr = j.str("GridResource").unwrap_or_default();
                let Known {
                    set: known,
                    events: mut known_events,
                } = known;
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
        Ok(())
    }

    /// scontrol and sacct failed: counts the failure, and the
    /// STATUS_ATTEMPTS-th in a row cancels the Slurm job and holds this one.
    fn status_failed(&mut self, j: &Job, slurm_id: &str, why: &str) -> Result<(), GridError> {
        let now = self.now;
        let id = j.row.id;
        // As BATCH_GAHP_CHECK_STATUS_ATTEMPTS: the fifth failure in a row
        // holds the job.
        let n = self.failures.entry(id).or_insert(0);
        *n += 1;
        note!("tern_gridmanager: job {id}: {why} ({n} in a row)");
        if *n >= STATUS_ATTEMPTS {
            self.failures.remove(&id);
            // Best effort: a job held here must not run on.
            let _ = slurm::cancel(&j.owner(), slurm_id);
            let why = format!("status command failed: {why}");
            let running = j.status() == Some(JobStatus::Running);
            self.commit(id, j.row.status, |ad| {
                grid_hold(ad, id, now, &why, hold_code::UNSPECIFIED, 0, running, false)
            })?;
        }
        Ok(())
    }

    /// Cancelled in Slurm by someone else: held here, its GridJobId back to
    /// the 3-token form so that a release submits it again.
    fn slurm_cancelled(&mut self, j: &Job, gid: &SlurmId, known: Known) -> Result<(), GridError> {
        let now = self.now;
        let id = j.row.id;
        let three = SlurmId {
            sandbox: gid.sandbox.clone(),
            submitted: None,
        }
        .format();
        let running = j.status() == Some(JobStatus::Running);
        let Known {
            set: mut known,
            events: mut known_events,
        } = known;
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
        Ok(())
    }
}

/// What any squeue answer records on a job it follows: the time of the
/// update and, when the status was unknown, its end with event 030.
struct Known {
    set: Vec<(String, Expr)>,
    events: Vec<userlog::Event>,
}

impl Known {
    /// The updates and events for `j` at `now`.
    fn of(j: &Job, now: i64) -> Known {
        let mut updates = vec![set("LastRemoteStatusUpdate", Expr::int(now))];
        let mut evs = Vec::new();
        if j.ad.eval("CurrentStatusUnknown").is_true() {
            updates.push(set("CurrentStatusUnknown", Expr::Lit(Value::Bool(false))));
            evs.push(events::status_known(j.row.id, now));
        }
        Known {
            set: updates,
            events: evs,
        }
    }
}
