//! Preemption, off unless PREEMPTION_REQUIREMENTS is set: a pass may vacate
//! jobs of a submitter above its fair share so that a submitter below its
//! share can run.
//!
//! After the matching, each submitter that still has idle jobs and holds
//! less than its share (in inverse proportion to effective priority, as in
//! the pie spin) looks at the slots of submitters holding more than
//! theirs. A slot is a candidate when the waiting submitter's next job
//! matches it, PREEMPTION_REQUIREMENTS is true (the slot is MY, with
//! `RemoteUserPrio`, the job TARGET, with `SubmitterUserPrio`) and its
//! job's retirement time (MaxJobRetirementTime, evaluated on the job) has
//! passed. Candidates go best PREEMPTION_RANK first, while the pie spin's
//! share rule ([`share_permits`], which rounds a share up) lets the
//! waiting submitter take more and the holder is left nearer its share
//! than the waiting one is. Victims are vacated through their shadow (KillSig, the vacate
//! time, SIGKILL) and go back to Idle with event 004; the slot they free is
//! matched by the next pass, which the shadow starts.

use std::collections::HashMap;
use std::rc::Rc;

use super::matchmaking::{FairShare, share_left, share_permits, submitter_of_job};
use crate::classad::{ClassAd, Evaluator, Expr, MatchContext, Value};
use crate::machine::{self, Machine, SlotKind, SlotRow};
use crate::queue::{JobId, JobRow, Queue, QueueError};

/// PREEMPTION_REQUIREMENTS and PREEMPTION_RANK; `None` when preemption is
/// off.
pub struct Policy {
    pub requirements: Expr,
    pub rank: Expr,
}

/// A slot whose job is to be vacated for another submitter.
#[derive(Clone, Debug)]
pub struct Victim {
    pub job: JobId,
    pub slot: String,
    pub for_submitter: String,
    /// Preempted for the slot's RANK rather than for fair share.
    pub by_rank: bool,
}

fn number(v: Value) -> f64 {
    match v {
        Value::Int(i) => i as f64,
        Value::Real(r) => r,
        Value::Bool(b) => b as i64 as f64,
        _ => -f64::MAX,
    }
}

/// Decides the victims of this pass. `waiting` are the idle jobs the
/// matching left unmatched; `planned` the weight each submitter was just
/// given.
#[allow(clippy::too_many_arguments)]
pub fn victims(
    q: &Queue,
    machine: &Machine,
    slots: &[SlotRow],
    waiting: &[JobRow],
    planned: &HashMap<String, f64>,
    fair: &FairShare,
    policy: &Policy,
    uid_domain: &str,
    now: i64,
) -> Result<Vec<Victim>, QueueError> {
    let mut ev = Evaluator::new();
    let mut next_job = first_waiting_jobs(q, waiting, uid_domain)?;
    if next_job.is_empty() {
        return Ok(Vec::new());
    }
    let weight = |s: &SlotRow, ev: &mut Evaluator| {
        fair.weight(&Rc::new(machine::slot_ad(machine, s, now)), ev)
    };
    let total: f64 = slots
        .iter()
        .filter(|s| s.kind != SlotKind::Dynamic)
        .map(|s| {
            let mut whole = s.clone();
            if s.kind == SlotKind::Partitionable {
                whole.cpus = s.total_cpus;
                whole.memory = s.total_memory;
                whole.disk = s.total_disk;
            }
            weight(&whole, &mut ev)
        })
        .sum();
    // What every submitter holds (claims and this pass's matches).
    let mut used: HashMap<String, f64> = planned.clone();
    let claimed: Vec<&SlotRow> = slots
        .iter()
        .filter(|s| s.kind != SlotKind::Partitionable && s.cluster.is_some())
        .collect();
    for s in &claimed {
        if let Some(u) = &s.remote_user {
            *used.entry(u.clone()).or_insert(0.0) += weight(s, &mut ev);
        }
    }
    let mut names: Vec<String> = used.keys().cloned().collect();
    for (s, _) in &next_job {
        if !names.contains(s) {
            names.push(s.clone());
        }
    }
    let inverse: f64 = names.iter().map(|n| 1.0 / fair.ep(n)).sum();
    let left = |n: &str, held: f64| share_left(fair.ep(n), inverse, total, held);
    next_job.sort_by(|a, b| {
        fair.ep(&a.0)
            .partial_cmp(&fair.ep(&b.0))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let judge = Judge {
        q,
        machine,
        fair,
        policy,
        now,
    };
    let mut out: Vec<Victim> = Vec::new();
    for (needy, job) in &next_job {
        loop {
            let mine = used.get(needy).copied().unwrap_or(0.0);
            // Candidates: slots of submitters above their share.
            let mut best: Option<(f64, &SlotRow, f64)> = None;
            for s in &claimed {
                let Some(holder) = s.remote_user.as_deref() else {
                    continue;
                };
                if holder == needy || out.iter().any(|v| v.slot == s.name) {
                    continue;
                }
                let w = weight(s, &mut ev);
                let theirs = used.get(holder).copied().unwrap_or(0.0);
                // The needy one takes the slot by the pie spin's share rule
                // (so it is not left one slot short of a share the spin
                // would round up to), from a holder above its share, and
                // only while the holder is left short of its share by less
                // than the needy one is now: shares move toward fair and
                // never swap back and forth between passes.
                let needy_left = left(needy, mine);
                let holder_short = left(holder, theirs - w);
                if !share_permits(needy_left, 0.0, w)
                    || left(holder, theirs) > 0.0
                    || holder_short >= needy_left - 1e-9
                {
                    continue;
                }
                let Some(rank) = judge.rank(s, holder, needy, job, &mut ev)? else {
                    continue;
                };
                if best.as_ref().is_none_or(|(r, _, _)| rank > *r) {
                    best = Some((rank, s, w));
                }
            }
            let Some((_, s, w)) = best else { break };
            let holder = s.remote_user.clone().unwrap_or_default();
            *used.entry(holder).or_insert(0.0) -= w;
            *used.entry(needy.clone()).or_insert(0.0) += w;
            out.push(Victim {
                job: JobId {
                    cluster: s.cluster.unwrap_or(0),
                    proc: s.proc.unwrap_or(0),
                },
                slot: s.name.clone(),
                for_submitter: needy.clone(),
                by_rank: false,
            });
        }
    }
    Ok(out)
}

/// The first waiting job of each submitter, which stands for it.
fn first_waiting_jobs(
    q: &Queue,
    waiting: &[JobRow],
    uid_domain: &str,
) -> Result<Vec<(String, Rc<ClassAd>)>, QueueError> {
    let mut next_job: Vec<(String, Rc<ClassAd>)> = Vec::new();
    for row in waiting {
        let cad = q.cluster_ad(row.id.cluster)?;
        let sub = submitter_of_job(&cad, &row.owner, uid_domain);
        if next_job.iter().any(|(s, _)| *s == sub) {
            continue;
        }
        next_job.push((sub, Rc::new(q.full_ad(row)?)));
    }
    Ok(next_job)
}

/// What one claimed slot is judged by, for fair-share preemption.
struct Judge<'a> {
    q: &'a Queue,
    machine: &'a Machine,
    fair: &'a FairShare,
    policy: &'a Policy,
    now: i64,
}

impl Judge<'_> {
    /// PREEMPTION_RANK of taking the claimed slot `s` from `holder` for
    /// `job` of `needy`; `None` when it may not be taken for it: the
    /// running job is still within its retirement time, the waiting job
    /// and the slot (as if unclaimed) do not match, or
    /// PREEMPTION_REQUIREMENTS is not true.
    fn rank(
        &self,
        s: &SlotRow,
        holder: &str,
        needy: &str,
        job: &Rc<ClassAd>,
        ev: &mut Evaluator,
    ) -> Result<Option<f64>, QueueError> {
        let (q, fair, policy) = (self.q, self.fair, self.policy);
        let Some((cluster, proc)) = s.cluster.zip(s.proc) else {
            return Ok(None);
        };
        let vid = JobId { cluster, proc };
        let Some(vrow) = q.row(vid)? else {
            return Ok(None);
        };
        let vjob = Rc::new(q.full_ad(&vrow)?);
        if !retired(&vjob, self.now) {
            return Ok(None);
        }
        let mut slot_ad = machine::slot_ad(self.machine, s, self.now);
        slot_ad.insert("RemoteUserPrio", Expr::Lit(Value::Real(fair.ep(holder))));
        // The slot as it would be for the waiting job.
        slot_ad.insert("State", Expr::string("Unclaimed"));
        let slot_ad = Rc::new(slot_ad);
        let mut jad = (**job).clone();
        jad.insert("SubmitterUserPrio", Expr::Lit(Value::Real(fair.ep(needy))));
        let jad = Rc::new(jad);
        if !MatchContext::new(jad.clone(), slot_ad.clone()).symmetric(ev) {
            return Ok(None);
        }
        let ctx = MatchContext::new(slot_ad.clone(), jad.clone());
        if !ev.eval(&policy.requirements, ctx.left()).is_true() {
            return Ok(None);
        }
        // PREEMPTION_RANK sees the running job's attributes too.
        let mut victim_side = (*slot_ad).clone();
        if let Some(e) = vjob.get("JobCurrentStartDate") {
            victim_side.insert("JobCurrentStartDate", e.clone());
        }
        let vctx = MatchContext::new(Rc::new(victim_side), jad.clone());
        Ok(Some(number(ev.eval(&policy.rank, vctx.left()))))
    }
}

/// Whether a running job's retirement time has passed: MaxJobRetirementTime
/// (evaluated on the job, default 0) since it started.
fn retired(job: &Rc<ClassAd>, now: i64) -> bool {
    let retire = job.eval_int("MaxJobRetirementTime").unwrap_or(0);
    let start = match job.eval("JobCurrentStartDate") {
        Value::Int(i) => i,
        _ => now,
    };
    now - start >= retire
}

/// Startd RANK preemption (STARTD_RANK_PREEMPTION, off by default): a
/// waiting job takes a claimed slot whose RANK prefers it strictly to the
/// job running there (`MY.Rank > MY.CurrentRank`, the slot MY), whatever
/// the user priorities, once the running job's retirement time has passed.
/// Each waiting job takes at most one slot, the one whose RANK gains most.
#[allow(clippy::too_many_arguments)]
pub fn rank_victims(
    q: &Queue,
    machine: &Machine,
    slots: &[SlotRow],
    waiting: &[JobRow],
    taken: &[Victim],
    uid_domain: &str,
    now: i64,
) -> Result<Vec<Victim>, QueueError> {
    let mut ev = Evaluator::new();
    let mut out: Vec<Victim> = Vec::new();
    let claimed: Vec<&SlotRow> = slots
        .iter()
        .filter(|s| s.kind != SlotKind::Partitionable && s.cluster.is_some())
        .collect();
    if claimed.is_empty() {
        return Ok(out);
    }
    // The rank each claimed slot gives its running job.
    let mut current: Vec<(f64, Rc<ClassAd>, Rc<ClassAd>)> = Vec::new();
    for s in &claimed {
        let slot_ad = Rc::new(machine::slot_ad(machine, s, now));
        let vid = JobId {
            cluster: s.cluster.unwrap_or(0),
            proc: s.proc.unwrap_or(0),
        };
        let vjob = match q.row(vid)? {
            Some(r) => Rc::new(q.full_ad(&r)?),
            None => Rc::new(ClassAd::new()),
        };
        let r = number(MatchContext::new(slot_ad.clone(), vjob.clone()).eval_left(&mut ev, "rank"));
        current.push((r, slot_ad, vjob));
    }
    for row in waiting.iter().take(claimed.len()) {
        let job = Rc::new(q.full_ad(row)?);
        let mut best: Option<(f64, usize)> = None;
        for (i, s) in claimed.iter().enumerate() {
            if taken.iter().chain(out.iter()).any(|v| v.slot == s.name) {
                continue;
            }
            let (cur, slot_ad, vjob) = &current[i];
            if !retired(vjob, now) {
                continue;
            }
            let mut free = (**slot_ad).clone();
            free.insert("State", Expr::string("Unclaimed"));
            let free = Rc::new(free);
            let ctx = MatchContext::new(free.clone(), job.clone());
            let rank = number(ctx.eval_left(&mut ev, "rank"));
            if rank <= *cur || !MatchContext::new(job.clone(), free).symmetric(&mut ev) {
                continue;
            }
            if best.is_none_or(|(g, _)| rank - cur > g) {
                best = Some((rank - cur, i));
            }
        }
        if let Some((_, i)) = best {
            let s = claimed[i];
            let cad = q.cluster_ad(row.id.cluster)?;
            out.push(Victim {
                job: JobId {
                    cluster: s.cluster.unwrap_or(0),
                    proc: s.proc.unwrap_or(0),
                },
                slot: s.name.clone(),
                for_submitter: submitter_of_job(&cad, &row.owner, uid_domain),
                by_rank: true,
            });
        }
    }
    Ok(out)
}
