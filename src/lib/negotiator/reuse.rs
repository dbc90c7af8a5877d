//! Claim reuse: when a shadow's job ends, the negotiator decides whether
//! the claim goes on to another job, so a submitter with a stream of jobs
//! keeps its slot without a new pass and a new shadow (HTCondor's schedd
//! does this in `Scheduler::FindRunnableJobForClaim`).
//!
//! [`match_one`] answers the shadow's one question, "which idle job of
//! this owner fits this slot now?", with the pass's own rules: the same
//! submitter only, fair share first ([`super::owed_elsewhere`]), a
//! symmetric match against the slot's current ad, a dynamic slot only for
//! a job whose quantized requests fit in it, and one match per autocluster
//! of a cluster. [`Match::claim`] then moves the claim to the job, in the
//! caller's transaction, as [`super::launch::claim`] would have.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::classad::{ClassAd, Evaluator, Expr, MatchContext};
use crate::machine::{self, Machine, SlotRow};
use crate::queue::{Change, JobId, JobRow, QueueError, Writer, joblock};
use crate::vocab::Universe;

use super::accountant::Knobs;
use super::{dollar, launch, matchmaking};

/// How many of the owner's idle jobs, best first, a reuse looks at.
const LOOK_AT: i64 = 16;

/// What a reuse asks with besides the transaction.
pub struct Slot<'a> {
    pub machine: &'a Machine,
    pub spool: &'a std::path::Path,
    /// The claimed slot's name.
    pub name: &'a str,
    pub knobs: &'a Knobs,
    pub uid_domain: &'a str,
    /// The shadow's spare lock file, which the next job's lock is made of.
    pub spare: &'a std::cell::RefCell<joblock::Spare>,
}

/// The job a claim goes on to, its lock already taken.
pub struct Match {
    pub id: JobId,
    pub lock: joblock::JobLock,
    slot: SlotRow,
    row: JobRow,
    ad: Rc<ClassAd>,
    match_attrs: Vec<(String, Expr)>,
}

/// The next idle job of `owner` that matches the slot now and whose lock
/// is free, unless another submitter is owed the slot; `None` lets the
/// claim end. Changes nothing but the lock it takes.
pub fn match_one(
    w: &mut Writer<'_>,
    slot: &Slot<'_>,
    owner: &str,
    now: i64,
) -> Result<Option<Match>, QueueError> {
    let Some(srow) = machine::load_slot(w.conn(), slot.name)? else {
        return Ok(None);
    };
    // A fetched job's claim ends with it: the slot fetches again.
    if super::fetch::is_fetched_claim(w.conn(), &srow)? {
        return Ok(None);
    }
    // The best idle job is nearly always the one: read it alone, and the
    // rest of the look only when it does not fit (each row read is
    // parsed); with none, nothing else needs building.
    let first = w.idle_rows_of(owner, 0, 1)?;
    if first.is_empty() {
        return Ok(None);
    }
    let submitter = srow.remote_user.clone().unwrap_or_default();
    if super::owed_elsewhere(w.conn(), &submitter, owner, slot.knobs, slot.uid_domain)? {
        return Ok(None);
    }
    let slot_ad = Rc::new(machine::slot_ad(slot.machine, &srow, now));
    let mut look = Look {
        slot,
        submitter,
        owner,
        slot_ad,
        srow,
        ev: Evaluator::new(),
        tried: HashMap::new(),
        // Fetched jobs run only on their own slots: read once, not per row.
        fetched: super::fetch::fetched_ids(w.conn())?,
    };
    for row in first {
        if let Some(m) = look.at(w, row)? {
            return Ok(Some(m));
        }
    }
    for row in w.idle_rows_of(owner, 1, LOOK_AT - 1)? {
        if let Some(m) = look.at(w, row)? {
            return Ok(Some(m));
        }
    }
    Ok(None)
}

/// One reuse's look at the owner's idle jobs, row by row.
struct Look<'a> {
    slot: &'a Slot<'a>,
    submitter: String,
    owner: &'a str,
    slot_ad: Rc<ClassAd>,
    srow: SlotRow,
    ev: Evaluator,
    /// Per cluster: whether its plain jobs (no per-proc requests) match.
    tried: HashMap<i64, bool>,
    fetched: HashSet<JobId>,
}

impl Look<'_> {
    /// The match for `row`, its lock taken, if the job can go on the claim.
    fn at(&mut self, w: &mut Writer<'_>, row: JobRow) -> Result<Option<Match>, QueueError> {
        if self.fetched.contains(&row.id) {
            return Ok(None);
        }
        let ad = Rc::new(w.full_ad(&row)?);
        if !runs_on_a_slot(&ad) {
            return Ok(None);
        }
        // A cron job back from a run waits for the pass to give it its next
        // time: its DeferralTime is still the one it just ran for, which
        // a window would let it run for again.
        if ad.eval(super::policy::RECOMPUTE).is_true() {
            return Ok(None);
        }
        // The same submitter only (an owner's accounting groups are
        // submitters of their own).
        if matchmaking::submitter_of_job(&ad, self.owner, self.slot.uid_domain) != self.submitter {
            return Ok(None);
        }
        // Jobs of one cluster without per-proc differences match alike.
        let plain = row.diff.len() <= 4 || !matchmaking::contains_lower(&row.diff, b"request");
        if plain && self.tried.get(&row.id.cluster) == Some(&false) {
            return Ok(None);
        }
        let ok = MatchContext::new(ad.clone(), self.slot_ad.clone()).symmetric(&mut self.ev)
            && fits_dynamic(&ad, &self.slot_ad, &self.srow);
        if plain {
            self.tried.insert(row.id.cluster, ok);
        }
        if !ok {
            return Ok(None);
        }
        // A lock that cannot be taken, held or refused (a link or FIFO
        // planted in SPOOL), is another job's business: failing here
        // would roll back the finishing shadow's own transaction.
        let taken = self
            .slot
            .spare
            .borrow_mut()
            .acquire(self.slot.spool, row.id);
        let Ok(Some(lock)) = taken else {
            return Ok(None);
        };
        let Ok(match_attrs) = dollar::match_attrs(&ad, &self.slot_ad) else {
            return Ok(None);
        };
        Ok(Some(Match {
            id: row.id,
            lock,
            slot: self.srow.clone(),
            row,
            ad,
            match_attrs,
        }))
    }
}

impl Match {
    /// Moves the slot's claim to the matched job and sets the job Running
    /// on it (`host` is this machine's name), in the caller's transaction.
    pub fn claim(
        &self,
        w: &mut Writer<'_>,
        owner: &str,
        host: &str,
        now: i64,
    ) -> Result<(), QueueError> {
        let s = &self.slot;
        let info = machine::ClaimInfo {
            remote_user: s.remote_user.clone().unwrap_or_else(|| owner.to_string()),
            remote_owner: owner.to_string(),
            cluster: self.id.cluster,
            proc: self.id.proc,
            claim: s.claim.clone().unwrap_or_default(),
            job_start: now,
        };
        machine::set_claim(w.conn(), &s.name, "Claimed", "Busy", &info, now)?;
        let set = launch::claim_attrs(&self.ad, &s.name, host, now, &self.match_attrs);
        w.change(&self.row, &self.ad, &Change::Set(set))
    }
}

/// Whether the pass would ever give the job a slot: not a grid universe
/// job (its gridmanager runs it elsewhere), not a job the router manages
/// (its routed copy runs in its place), not a scheduler universe job (it
/// needs no slot). A routed copy whose route sets `Requirements = true`
/// matches any slot: taken by a reuse, it ran here under a shadow while
/// its gridmanager ran it in the other queue.
fn runs_on_a_slot(ad: &Rc<ClassAd>) -> bool {
    let universe = ad.eval_int("JobUniverse");
    let elsewhere = [Universe::Grid.code(), Universe::Scheduler.code()];
    !universe.is_some_and(|u| elsewhere.contains(&u)) && !super::policy::managed_externally(ad)
}

/// A dynamic slot is reused only for a job that fits in it.
fn fits_dynamic(job: &Rc<ClassAd>, slot_ad: &Rc<ClassAd>, row: &SlotRow) -> bool {
    let (c, m, d) = matchmaking::requests(job, slot_ad);
    let (c, m, d) = matchmaking::quantize(c, m, d);
    c <= row.cpus && m <= row.memory && d <= row.disk
}
