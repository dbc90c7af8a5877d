//! Deferral: a job with a DeferralTime (spec 1.6) is claimed and shown
//! Running, with DeferralWaitUntil, while its shadow waits for the time.
//! The wait takes requests as the run would: a stop ends it, and a suspend
//! is kept for the start ([`Shadow::start_suspended`]).

use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::classad::{ClassAd, Expr};
use crate::queue::{Change, JobId};
use crate::vocab::Request;

use super::procs::Wake;
use super::{Shadow, ShadowError, Stop};

/// What the deferral wait decided.
pub(super) enum Deferral {
    Run,
    /// The job arrived more than DeferralWindow after its time.
    Missed,
    Stopped(Stop),
}

impl Shadow {
    /// Waits, the job shown Running with DeferralWaitUntil, until its
    /// DeferralTime: a job that arrives more than DeferralWindow late
    /// missed it; stop requests end the wait; a suspend is kept for the
    /// start.
    pub(super) fn wait_deferral(
        &mut self,
        id: JobId,
        ad: &Rc<ClassAd>,
    ) -> Result<Deferral, ShadowError> {
        let Some(when) = ad.eval_int("DeferralTime") else {
            return Ok(Deferral::Run);
        };
        let window = ad.eval_int("DeferralWindow").unwrap_or(0);
        let now = crate::clock::now();
        let delta = when - now;
        if delta < -window {
            return Ok(Deferral::Missed);
        }
        if delta <= 0 {
            return Ok(Deferral::Run);
        }
        self.set_job(
            id,
            now,
            Change::Set(vec![("DeferralWaitUntil".into(), Expr::int(when))]),
        )?;
        let until = Instant::now() + Duration::from_secs(delta as u64);
        let mut wake = Wake::Request;
        loop {
            match wake {
                Wake::Stop => return Ok(Deferral::Stopped(Stop::Shutdown)),
                Wake::Request => {
                    if let Some(stop) = self.deferral_requests(id, ad)? {
                        return Ok(Deferral::Stopped(stop));
                    }
                }
                Wake::Child | Wake::Timeout => {}
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                // It executes now: the wait is over.
                let now = crate::clock::now();
                let over = Change::Update {
                    set: vec![("JobCurrentStartExecutingDate".into(), Expr::int(now))],
                    delete: vec!["DeferralWaitUntil".into()],
                };
                self.set_job(id, now, over)?;
                return Ok(Deferral::Run);
            }
            wake = self.signals.wait(left.as_millis().min(5000) as i64 + 1);
            if wake == Wake::Timeout && !until.saturating_duration_since(Instant::now()).is_zero() {
                wake = Wake::Request;
            }
        }
    }

    /// Takes the requests made while the job waits: the first stop ends
    /// the wait; suspend and continue are recorded (and remembered for the
    /// start).
    fn deferral_requests(
        &mut self,
        id: JobId,
        ad: &Rc<ClassAd>,
    ) -> Result<Option<Stop>, ShadowError> {
        for kind in self.pending(id)? {
            if let Some(stop) = Stop::requested(kind) {
                return Ok(Some(stop));
            }
            match kind {
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
        Ok(None)
    }
}
