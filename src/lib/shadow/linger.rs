//! A claim kept a moment after its job: when a job leaves the queue at the
//! end of its run and no job is idle anywhere in the queue, the shadow keeps its slot Claimed/Idle for up to
//! `SHADOW_LINGER_MSEC` and watches the queue (SQLite's `data_version`,
//! every few milliseconds). A job of the same submitter that arrives and
//! matches the slot is claimed and run at once, by this process: a shell
//! loop of single submits then costs a submit and a run per job, not a
//! pass and a new shadow as well. Any other idle job ends the wait at once,
//! so the slot goes back to the pass's fair share without delay; so do a
//! claim the pass took away and the shadow's stop signals.
//!
//! While it waits the shadow holds the lingering mark, so that tern_submit
//! starts no pass for work it will take ([`crate::negotiator::linger`]
//! says why no job can be missed); the finished job's lock stays held (the
//! job is gone, nothing else needs it), so no pass mistakes the claim for a
//! dead shadow's. A shadow killed while it waits leaves that lock free and
//! the next pass frees the slot, as for any dead shadow.

use std::time::{Duration, Instant};

use crate::machine;
use crate::negotiator::{linger, reuse};
use crate::queue::{JobId, QueueError, joblock};

use super::finish::Lingering;
use super::procs::{self, Wake};
use super::{Shadow, ShadowError, release_slot_if};

/// How often a lingering shadow looks at the queue.
const POLL: Duration = Duration::from_millis(2);

/// What one look at the queue found.
enum Look {
    /// A job to run, claimed on this slot.
    Took(JobId, joblock::JobLock),
    /// Nothing to do yet.
    Nothing,
    /// Work this claim cannot take, or the claim is no longer ours.
    Leave,
}

impl Shadow {
    /// Waits with the claim for the next job; `None` when the wait ends
    /// with the slot let go.
    pub(super) fn linger(
        &mut self,
        last: Lingering,
    ) -> Result<Option<(JobId, joblock::JobLock)>, ShadowError> {
        // Without the mark a submit would not know to wait for us: then
        // do not wait at all.
        let mark = linger::Mark::take(&self.spool).ok();
        // Its looks wait for the running task's turn rather than preempt
        // it, a submit of the user's among them (see sys::sched); the next
        // job, if any, starts back under the normal policy.
        let _batch = crate::sys::sched::batch();
        let deadline = Instant::now() + Duration::from_millis(self.linger_ms);
        let mut seen: Option<i64> = None;
        while mark.is_some() {
            let version = data_version(self.q.conn())?;
            if seen != Some(version) {
                seen = Some(version);
                match self.look(&last)? {
                    Look::Took(id, lock) => {
                        self.let_lock_go(last.lock, last.leaves);
                        return Ok(Some((id, lock)));
                    }
                    Look::Nothing => {}
                    Look::Leave => break,
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match self.signals.wait(left.min(POLL).as_millis().max(1) as i64) {
                Wake::Stop => break,
                Wake::Child => drop(procs::reap()),
                Wake::Request | Wake::Timeout => {}
            }
        }
        let now = crate::clock::now();
        let (slot, claim, id) = (self.slot.clone(), self.claim.clone(), last.id);
        self.q
            .write(now, |w| release_slot_if(w, &slot, &claim, id, now))?;
        // The slot is free before the mark goes, and the mark goes before
        // the pass is asked for (when the shadow ends).
        drop(mark);
        self.let_lock_go(last.lock, last.leaves);
        Ok(None)
    }

    /// One look, in one transaction: the claim must still be ours and idle;
    /// a job of the submitter that matches is claimed; any other idle job
    /// ends the wait.
    fn look(&mut self, last: &Lingering) -> Result<Look, ShadowError> {
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
        let look = self.q.write(now, |w| {
            let Some(s) = machine::load_slot(w.conn(), slot)? else {
                return Ok(Look::Leave);
            };
            let ours = s.claim.as_deref() == Some(claim.as_str())
                && s.state == "Claimed"
                && s.activity == "Idle"
                && s.cluster == Some(last.id.cluster)
                && s.proc == Some(last.id.proc);
            if !ours {
                return Ok(Look::Leave);
            }
            if let Some(m) = reuse::match_one(w, &reuse_slot, &last.owner, now)? {
                m.claim(w, &last.owner, host, now)?;
                return Ok(Look::Took(m.id, m.lock));
            }
            if crate::queue::clusters_with_idle(w.conn())?.is_empty() {
                Ok(Look::Nothing)
            } else {
                Ok(Look::Leave)
            }
        })?;
        Ok(look)
    }
}

/// SQLite's count of commits by other connections to this database.
fn data_version(conn: &rusqlite::Connection) -> Result<i64, QueueError> {
    Ok(conn.query_row("PRAGMA data_version", [], |r| r.get(0))?)
}
