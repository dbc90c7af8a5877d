//! Matching idle jobs to slots.
//!
//! Idle jobs are read with their hot columns; a job's full ad is built only
//! when its autocluster has not been decided yet, so a pass over many jobs
//! in few autoclusters costs little more than reading the rows. Submitters
//! share the slots by HTCondor's pie spin: each may take slot weight up to
//! its share, in inverse proportion to its effective priority
//! ([`FairShare`]), best priority first. Within a submitter, jobs go in
//! HTCondor's order (PreJobPrio1, PreJobPrio2, JobPrio, PostJobPrio1,
//! PostJobPrio2 descending, then ClusterId, ProcId). A job whose
//! autocluster found no slot is rejected once and the rest of its
//! autocluster is skipped, so an unmatchable job never blocks another.

use std::collections::HashMap;
use std::rc::Rc;

use crate::classad::unparse::unparse;
use crate::classad::{ClassAd, Evaluator, Expr, MatchContext, Value};
use crate::machine::{self, Machine, SlotKind, SlotRow};
use crate::queue::{JobId, JobRow, Queue, QueueError};
use crate::vocab::Universe;

/// One decision of the matching step.
#[derive(Clone, Debug)]
pub struct Planned {
    pub id: JobId,
    pub owner: String,
    pub submitter: String,
    /// The slot to claim: a static or unclaimed dynamic slot, or the
    /// partitionable slot to carve a dynamic slot from.
    pub slot: String,
    /// Cpus, memory (MiB) and disk (KiB) of the dynamic slot to carve.
    pub carve: Option<(i64, i64, i64)>,
    pub match_attrs: Vec<(String, Expr)>,
    /// The slot weight the match costs its submitter.
    pub cost: f64,
    /// The job's NumShadowStarts as the plan read it. The claim takes the
    /// job only if it is the same still: one that ran and came back idle
    /// meanwhile (a cron job a shadow just ran, when two passes meet) waits
    /// for the next pass, which sees it as it is. (Other changes, such as
    /// another pass noting a rejection, do not stop the claim.)
    pub shadow_starts: i64,
}

/// A job that found no slot.
#[derive(Clone, Debug)]
pub struct Rejected {
    pub id: JobId,
    pub reason: String,
}

pub struct Outcome {
    pub planned: Vec<Planned>,
    pub rejected: Vec<Rejected>,
    /// Idle jobs considered, and autoclusters seen.
    pub jobs: usize,
    pub autoclusters: usize,
}

/// What fair share needs: each submitter's effective priority (EP), and
/// how much a slot weighs (SLOT_WEIGHT, evaluated on the slot ad).
pub struct FairShare {
    /// The accountant's EP of every submitter it has a factor for.
    pub eps: std::collections::HashMap<String, f64>,
    /// Factors of new submitters, SLOT_WEIGHT, NEGOTIATOR_USE_SLOT_WEIGHTS.
    pub knobs: super::accountant::Knobs,
}

impl FairShare {
    /// A submitter's EP; one the accountant has not seen yet starts at
    /// the lowest real priority times the factor it will get.
    pub fn ep(&self, submitter: &str) -> f64 {
        match self.eps.get(submitter) {
            Some(e) if *e > 0.0 => *e,
            _ => super::accountant::MIN_PRIORITY * self.knobs.factor_for(submitter),
        }
    }

    pub fn weight(&self, slot: &Rc<ClassAd>, ev: &mut Evaluator) -> f64 {
        if !self.knobs.use_slot_weights {
            return 1.0;
        }
        let scope = crate::classad::Scope::root(slot.clone());
        match ev.eval(&self.knobs.slot_weight, &scope) {
            Value::Int(i) => i as f64,
            Value::Real(r) => r,
            _ => 1.0,
        }
    }
}

/// What is left of a submitter's fair share (spec 3.3): its share of the
/// slot weight `total`, in inverse proportion to its effective priority
/// `ep` among submitters whose inverse EPs sum to `inverse`, less the
/// weight `held` it holds already; never below 0.
pub fn share_left(ep: f64, inverse: f64, total: f64, held: f64) -> f64 {
    ((1.0 / ep) / inverse * total - held).max(0.0)
}

/// Slack for the sums of slot weights and shares in floating point.
const SHARE_EPSILON: f64 = 1e-9;

/// The one share rule, HTCondor's SubmitterLimitPermits: a submitter with
/// `left` of its share (see [`share_left`]), having taken `taken` in this
/// spin, may take a match costing `cost` when it fits, or as its first
/// match of a spin while any share is left (one round-up a spin, so a
/// fraction of a slot is not stranded). The pie spin matches by it, and
/// preemption takes slots for a submitter by it, each preemption counting
/// as a spin of its own, as the next pass's spin gives the freed slot.
pub fn share_permits(left: f64, taken: f64, cost: f64) -> bool {
    taken + cost <= left + SHARE_EPSILON || (taken <= 0.0 && left > SHARE_EPSILON)
}

/// The ranking expressions of a pass.
pub struct Ranks {
    pub pre: Expr,
    pub post: Expr,
}

struct SlotState {
    row: SlotRow,
    ad: Rc<ClassAd>,
    taken: bool,
}

/// What one autocluster found against the slots as they were when it was
/// first tried: candidate slot indexes, best first.
struct AutoCluster {
    candidates: Vec<usize>,
    exhausted: bool,
}

/// A job's place in its submitter's order.
#[derive(Clone, Debug)]
struct Entry {
    key: [i64; 5],
    /// The autocluster's index.
    ac: usize,
    row: JobRow,
}

/// A submitter and its idle jobs, in its order.
type SubmitterJobs = (String, Vec<Entry>);

/// The submitter a job is accounted to: `Owner@UID_DOMAIN`.
pub fn submitter_of(owner: &str, uid_domain: &str) -> String {
    format!("{owner}@{uid_domain}")
}

/// The submitter of a job ad: its AccountingGroup (`group.user`, or
/// `nice-user.user` for nice_user jobs) at UID_DOMAIN, else its owner.
pub fn submitter_of_job(ad: &ClassAd, owner: &str, uid_domain: &str) -> String {
    match ad.get("AccountingGroup").and_then(|e| e.literal_value()) {
        Some(Value::Str(g)) if !g.is_empty() => format!("{g}@{uid_domain}"),
        _ => submitter_of(owner, uid_domain),
    }
}

/// Attributes that decide whether and where a job matches: the job side of
/// every slot expression, plus the job's own requirements and requests.
fn significant(slot_ads: &[Rc<ClassAd>], ranks: &Ranks) -> Vec<String> {
    let mut names: Vec<String> = [
        "requirements",
        "rank",
        "requestcpus",
        "requestmemory",
        "requestdisk",
        "jobuniverse",
        "owner",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut add = |e: &Expr| {
        e.walk_attrs(&mut |a| names.push(a.name.key().to_string()));
    };
    for ad in slot_ads {
        for (_, e) in ad.iter() {
            add(e);
        }
    }
    add(&ranks.pre);
    add(&ranks.post);
    names.sort();
    names.dedup();
    names
}

/// The autocluster signature of a job ad: the text of each significant
/// attribute it has, with the attributes those refer to in turn.
fn signature(ad: &ClassAd, significant: &[String]) -> String {
    let mut seen: Vec<String> = Vec::new();
    let mut todo: Vec<String> = significant.to_vec();
    while let Some(n) = todo.pop() {
        if seen.contains(&n) {
            continue;
        }
        if let Some(e) = ad.get(&n) {
            e.walk_attrs(&mut |a| todo.push(a.name.key().to_string()));
        }
        seen.push(n);
    }
    seen.sort();
    let mut sig = String::new();
    for n in &seen {
        if let Some(e) = ad.get(n) {
            sig.push_str(n);
            sig.push('=');
            sig.push_str(&unparse(e));
            sig.push('\n');
        }
    }
    sig
}

/// A value evaluated in a match context as an integer, as HTCondor's
/// `EvalInteger` there: an integer, or a real truncated toward zero. A
/// boolean is not a number (`request_cpus = true` asks for the default),
/// the same choice as [`ClassAd::eval_int`], which cannot be used here
/// because the slot must be in scope.
fn int_of(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::Real(r) => Some(*r as i64),
        _ => None,
    }
}

fn rank_of(v: Value) -> f64 {
    match v {
        Value::Int(i) => i as f64,
        Value::Real(r) => r,
        Value::Bool(b) => b as i64 as f64,
        _ => -f64::MAX,
    }
}

/// HTCondor's default request rounding for dynamic slots: cpus to whole
/// cpus (at least 1), memory up to 128 MiB, disk up to 1024 KiB.
pub fn quantize(cpus: i64, memory: i64, disk: i64) -> (i64, i64, i64) {
    let up = |v: i64, q: i64| if v <= 0 { q } else { (v + q - 1) / q * q };
    (cpus.max(1), up(memory, 128), up(disk, 1024))
}

/// The resources a job asks for, evaluated against a slot.
pub fn requests(job: &Rc<ClassAd>, slot: &Rc<ClassAd>) -> (i64, i64, i64) {
    let ctx = MatchContext::new(job.clone(), slot.clone());
    let mut ev = Evaluator::new();
    let mut get = |n: &str, d: i64| int_of(&ctx.eval_left(&mut ev, n)).unwrap_or(d);
    (
        get("requestcpus", 1),
        get("requestmemory", 0),
        get("requestdisk", 0),
    )
}

/// Decides this pass's matches. Changes nothing.
///
/// The phases: the slots as this pass sees them; the jobs that can start
/// at all; each submitter's jobs in HTCondor's order (scheduler universe
/// jobs are planned at once, without a slot); then the pie spin.
#[allow(clippy::too_many_arguments)]
pub fn plan(
    q: &Queue,
    rows: Vec<JobRow>,
    machine: &Machine,
    slots: Vec<SlotRow>,
    ranks: &Ranks,
    fair: &FairShare,
    uid_domain: &str,
    now: i64,
) -> Result<Outcome, QueueError> {
    let states = slot_states(machine, slots, now);
    let mut out = Outcome {
        planned: Vec::new(),
        rejected: Vec::new(),
        jobs: rows.len(),
        autoclusters: 0,
    };
    let slot_ads: Vec<Rc<ClassAd>> = states.iter().map(|s| s.ad.clone()).collect();
    let sig_names = significant(&slot_ads, ranks);
    let rows = startable(q, rows, &states)?;
    let (by_submitter, n_autoclusters) =
        order_jobs(q, rows, &sig_names, uid_domain, &mut out.planned)?;
    let mut pie = Pie {
        q,
        ranks,
        fair,
        states,
        autoclusters: std::iter::repeat_with(|| None)
            .take(n_autoclusters)
            .collect(),
        ev: Evaluator::new(),
        out,
    };
    pie.spin(&by_submitter)?;
    let mut out = pie.out;
    out.autoclusters = pie.autoclusters.iter().filter(|a| a.is_some()).count();
    Ok(out)
}

/// Every slot with its ad; a slot not Unclaimed is taken.
fn slot_states(machine: &Machine, slots: Vec<SlotRow>, now: i64) -> Vec<SlotState> {
    slots
        .into_iter()
        .map(|row| {
            let ad = Rc::new(machine::slot_ad(machine, &row, now));
            let taken = row.state != "Unclaimed";
            SlotState { row, ad, taken }
        })
        .collect()
}

/// The jobs that could start: all of them while a slot has room, else
/// only scheduler universe jobs (which need no slot).
fn startable(
    q: &Queue,
    rows: Vec<JobRow>,
    states: &[SlotState],
) -> Result<Vec<JobRow>, QueueError> {
    if states.iter().any(free_capacity) {
        return Ok(rows);
    }
    let mut keep = Vec::new();
    for r in rows {
        if is_scheduler_universe(q, &r)? {
            keep.push(r);
        }
    }
    Ok(keep)
}

/// Each submitter's jobs with their order keys and autoclusters, the
/// submitters in name order and their jobs in priority order; and how many
/// autoclusters there are. Scheduler universe jobs start at once, without
/// a slot (as the schedd starts them), whatever the slots are doing: they
/// go straight to `planned`.
fn order_jobs(
    q: &Queue,
    rows: Vec<JobRow>,
    sig_names: &[String],
    uid_domain: &str,
    planned: &mut Vec<Planned>,
) -> Result<(Vec<SubmitterJobs>, usize), QueueError> {
    // Per cluster: its ad, its order keys and its autocluster, reused by
    // every proc whose own differences touch neither.
    let sig_set: std::collections::HashSet<&str> = sig_names.iter().map(|s| s.as_str()).collect();
    let mut ac_ids: HashMap<String, usize> = HashMap::new();
    let mut ac_of = |sig: String| -> usize {
        let n = ac_ids.len();
        *ac_ids.entry(sig).or_insert(n)
    };
    let mut cluster_info: rustc_hash::FxHashMap<i64, (Rc<ClassAd>, [i64; 4], usize, String)> =
        rustc_hash::FxHashMap::default();
    let mut by_submitter: Vec<SubmitterJobs> = Vec::new();
    let mut sub_index: HashMap<String, usize> = HashMap::new();
    for row in rows {
        if managed_externally(q, &row)? {
            continue;
        }
        if is_scheduler_universe(q, &row)? {
            planned.push(Planned {
                id: row.id,
                owner: row.owner.clone(),
                submitter: submitter_of(&row.owner, uid_domain),
                slot: super::launch::SCHEDULER.into(),
                carve: None,
                match_attrs: Vec::new(),
                cost: 0.0,
                shadow_starts: super::launch::shadow_starts(&q.full_ad(&row)?),
            });
            continue;
        }
        if let std::collections::hash_map::Entry::Vacant(v) = cluster_info.entry(row.id.cluster) {
            let cad = q.cluster_ad(row.id.cluster)?;
            let keys = prio_keys(&cad);
            let ac = ac_of(signature(&cad, sig_names));
            let submitter = submitter_of_job(&cad, &row.owner, uid_domain);
            v.insert((cad, keys, ac, submitter));
        }
        let (cad, keys, cluster_ac, submitter) = &cluster_info[&row.id.cluster];
        let mut keys = *keys;
        let mut ac = *cluster_ac;
        let mut prio = row.prio;
        if row.diff.len() > 4 {
            let names = diff_names(&row.diff);
            if names.iter().any(|n| n.contains("prio")) {
                let ad = Rc::new(q.full_ad(&row)?);
                keys = prio_keys(&ad);
                prio = ad.eval_int("JobPrio").unwrap_or(prio);
            }
            if names.iter().any(|n| sig_set.contains(n.as_str())) {
                let mut ad = (**cad).clone();
                ad.update(&crate::classad::parse_ad(&row.diff).unwrap_or_default());
                ac = ac_of(signature(&ad, sig_names));
            }
        }
        let i = match sub_index.get(submitter.as_str()) {
            Some(i) => *i,
            None => {
                by_submitter.push((submitter.clone(), Vec::new()));
                sub_index.insert(submitter.clone(), by_submitter.len() - 1);
                by_submitter.len() - 1
            }
        };
        by_submitter[i].1.push(Entry {
            key: [keys[0], keys[1], prio, keys[2], keys[3]],
            ac,
            row,
        });
    }
    // Submitters in name order (HTCondor groups them by name length, then
    // name), jobs in priority order.
    by_submitter.sort_by(|a, b| (a.0.len(), &a.0).cmp(&(b.0.len(), &b.0)));
    for (_, jobs) in &mut by_submitter {
        jobs.sort_by(|a, b| {
            b.key
                .cmp(&a.key)
                .then(a.row.id.cluster.cmp(&b.row.id.cluster))
                .then(a.row.id.proc.cmp(&b.row.id.proc))
        });
    }
    Ok((by_submitter, ac_ids.len()))
}

/// Fair share, HTCondor's pie spin, over the slots as the pass takes them.
struct Pie<'a> {
    q: &'a Queue,
    ranks: &'a Ranks,
    fair: &'a FairShare,
    states: Vec<SlotState>,
    /// What each autocluster found, once tried.
    autoclusters: Vec<Option<AutoCluster>>,
    ev: Evaluator,
    out: Outcome,
}

impl Pie<'_> {
    /// Each submitter with idle jobs may take slot weight up to its share
    /// of the machine, in inverse proportion to its effective priority,
    /// less what it holds already. Spins repeat while they match anything;
    /// a share a submitter leaves unused (it ran out of jobs) goes to the
    /// others in the next spin.
    fn spin(&mut self, by_submitter: &[SubmitterJobs]) -> Result<(), QueueError> {
        let fair = self.fair;
        let total_weight: f64 = self
            .states
            .iter()
            .filter(|s| s.row.kind != SlotKind::Dynamic)
            .map(|s| fair.weight(&whole(&s.ad, &s.row), &mut self.ev))
            .sum();
        let mut used: Vec<f64> = by_submitter
            .iter()
            .map(|(name, _)| {
                self.states
                    .iter()
                    .filter(|s| {
                        s.row.kind != SlotKind::Partitionable
                            && s.row.remote_user.as_deref() == Some(name)
                    })
                    .map(|s| fair.weight(&s.ad, &mut self.ev))
                    .sum()
            })
            .collect();
        let eps: Vec<f64> = by_submitter.iter().map(|(name, _)| fair.ep(name)).collect();
        let mut order: Vec<usize> = (0..by_submitter.len()).collect();
        order.sort_by(|&a, &b| {
            eps[a]
                .partial_cmp(&eps[b])
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(by_submitter[a].0.cmp(&by_submitter[b].0))
        });
        let mut cursors = vec![0usize; by_submitter.len()];
        let mut done: Vec<bool> = vec![false; by_submitter.len()];
        loop {
            let live: Vec<usize> = order.iter().copied().filter(|&s| !done[s]).collect();
            if live.is_empty() || !self.states.iter().any(free_capacity) {
                break;
            }
            let inverse: f64 = live.iter().map(|&s| 1.0 / eps[s]).sum();
            let mut matched_any = false;
            for &s in &live {
                let limit = share_left(eps[s], inverse, total_weight, used[s]);
                let (submitter, jobs) = &by_submitter[s];
                if self.serve(submitter, jobs, &mut cursors[s], limit, &mut used[s])? {
                    matched_any = true;
                }
                done[s] = cursors[s] >= jobs.len();
            }
            if !matched_any {
                break;
            }
        }
        Ok(())
    }

    /// One submitter's turn in a spin: its jobs from `cursor` on, each
    /// matched to the best slot its autocluster found, while slots have
    /// room and the weight taken stays within `limit`. Returns whether it
    /// matched anything; `used` grows by what it took.
    fn serve(
        &mut self,
        submitter: &str,
        jobs: &[Entry],
        cursor: &mut usize,
        limit: f64,
        used: &mut f64,
    ) -> Result<bool, QueueError> {
        let mut this_spin = 0.0;
        let mut matched = false;
        while *cursor < jobs.len() {
            if !self.states.iter().any(free_capacity) {
                break;
            }
            let entry = &jobs[*cursor];
            *cursor += 1;
            let sig = entry.ac;
            if self.autoclusters[sig].as_ref().is_some_and(|a| a.exhausted) {
                continue;
            }
            let job = Rc::new(self.q.full_ad(&entry.row)?);
            if self.autoclusters[sig].is_none() {
                let candidates = candidates(&job, &self.states, self.ranks, &mut self.ev);
                if candidates.is_empty() {
                    self.out.rejected.push(Rejected {
                        id: entry.row.id,
                        reason: "no match found".into(),
                    });
                }
                self.autoclusters[sig] = Some(AutoCluster {
                    exhausted: candidates.is_empty(),
                    candidates,
                });
            }
            let ac = self.autoclusters[sig].as_mut().expect("set above");
            let Some((i, carve, slot_ad)) = take_slot(&job, ac, &mut self.states, &mut self.ev)
            else {
                ac.exhausted = true;
                continue;
            };
            let piece = match carve {
                Some((c, m, d)) => Rc::new(with_piece(&slot_ad, c, m, d)),
                None => slot_ad.clone(),
            };
            let cost = self.fair.weight(&piece, &mut self.ev);
            // HTCondor's SubmitterLimitPermits: within the limit, or the
            // first match of the spin while any limit is left.
            if !share_permits(limit, this_spin, cost) {
                give_back(&mut self.states[i], carve, &slot_ad);
                *cursor -= 1;
                break;
            }
            let match_attrs = match super::dollar::match_attrs(&job, &slot_ad) {
                Ok(a) => a,
                Err(m) => {
                    give_back(&mut self.states[i], carve, &slot_ad);
                    self.out.rejected.push(Rejected {
                        id: entry.row.id,
                        reason: format!("$$() substitution failed: {m}"),
                    });
                    continue;
                }
            };
            this_spin += cost;
            *used += cost;
            matched = true;
            self.out.planned.push(Planned {
                id: entry.row.id,
                owner: entry.row.owner.clone(),
                submitter: submitter.to_string(),
                slot: self.states[i].row.name.clone(),
                carve,
                match_attrs,
                cost,
                shadow_starts: super::launch::shadow_starts(&job),
            });
        }
        Ok(matched)
    }
}

/// A scheduler universe job, by the cluster ad (a universe is per cluster).
fn is_scheduler_universe(q: &Queue, row: &JobRow) -> Result<bool, QueueError> {
    Ok(is_scheduler_universe_ad(&*q.cluster_ad(row.id.cluster)?))
}

/// Whether a cluster ad is of the scheduler universe (the universe is a
/// cluster attribute).
pub(super) fn is_scheduler_universe_ad(cad: &ClassAd) -> bool {
    matches!(
        cad.get("JobUniverse").and_then(|e| e.literal_value()),
        Some(Value::Int(u)) if *u == Universe::Scheduler.code()
    )
}

/// Whether the job router manages the job (`Managed == "External"`): its
/// routed copy runs in its place, so the pass neither matches it nor
/// takes its mirrored Running status for a shadow that died.
pub(crate) fn managed_externally(q: &Queue, row: &JobRow) -> Result<bool, QueueError> {
    Ok(contains_lower(&row.diff, b"\"external\"")
        && matches!(q.full_ad(row)?.get("Managed").and_then(|e| e.literal_value()),
            Some(crate::classad::Value::Str(m)) if &**m == "External"))
}

/// Whether `hay` contains `needle` (lower-case ASCII), ignoring case,
/// without allocating.
pub(crate) fn contains_lower(hay: &str, needle: &[u8]) -> bool {
    let h = hay.as_bytes();
    if needle.is_empty() || h.len() < needle.len() {
        return needle.is_empty();
    }
    let first = needle[0];
    (0..=h.len() - needle.len()).any(|i| {
        h[i].to_ascii_lowercase() == first
            && h[i..i + needle.len()]
                .iter()
                .zip(needle)
                .all(|(a, b)| a.to_ascii_lowercase() == *b)
    })
}

/// The attribute names a stored difference sets (`[ A = …; B = … ]`),
/// lower-cased. A `; x =` inside a string value may add a false name,
/// which only costs a closer look.
pub(crate) fn diff_names(diff: &str) -> Vec<String> {
    // The usual difference, `[ ProcId = 7 ]`, sets nothing else.
    if !diff.contains(';')
        && diff
            .trim_start_matches('[')
            .trim_start()
            .starts_with("ProcId = ")
    {
        return vec!["procid".to_string()];
    }
    let body = diff.trim().trim_start_matches('[');
    let mut out = Vec::new();
    for part in std::iter::once(body).chain(body.match_indices("; ").map(|(i, _)| &body[i + 2..])) {
        let part = part.trim_start();
        if let Some(eq) = part.find(" = ") {
            let name = &part[..eq];
            if !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                out.push(name.to_ascii_lowercase());
            }
        }
    }
    out
}

fn free_capacity(s: &SlotState) -> bool {
    !s.taken && has_room(&s.row)
}

/// Whether a slot could take a job: it is Unclaimed and, partitionable,
/// has cpus left.
pub(super) fn has_room(row: &SlotRow) -> bool {
    row.state == "Unclaimed"
        && match row.kind {
            SlotKind::Partitionable => row.cpus > 0,
            _ => true,
        }
}

fn prio_keys(ad: &Rc<ClassAd>) -> [i64; 4] {
    [
        ad.eval_int("PreJobPrio1").unwrap_or(0),
        ad.eval_int("PreJobPrio2").unwrap_or(0),
        ad.eval_int("PostJobPrio1").unwrap_or(0),
        ad.eval_int("PostJobPrio2").unwrap_or(0),
    ]
}

/// The slots a job matches now, best first by (NEGOTIATOR_PRE_JOB_RANK,
/// job Rank, NEGOTIATOR_POST_JOB_RANK).
fn candidates(
    job: &Rc<ClassAd>,
    states: &[SlotState],
    ranks: &Ranks,
    ev: &mut Evaluator,
) -> Vec<usize> {
    let mut found: Vec<(usize, [f64; 3])> = Vec::new();
    for (i, s) in states.iter().enumerate() {
        if !free_capacity(s) {
            continue;
        }
        let ctx = MatchContext::new(job.clone(), s.ad.clone());
        if !ctx.symmetric(ev) {
            continue;
        }
        if s.row.kind == SlotKind::Partitionable && !fits(job, s) {
            continue;
        }
        let job_rank = rank_of(ctx.eval_left(ev, "rank"));
        let slot_side = MatchContext::new(s.ad.clone(), job.clone());
        let pre = rank_of(ev.eval(&ranks.pre, slot_side.left()));
        let post = rank_of(ev.eval(&ranks.post, slot_side.left()));
        found.push((i, [pre, job_rank, post]));
    }
    found.sort_by(|a, b| {
        b.1.partial_cmp(&a.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.0.cmp(&b.0))
    });
    found.into_iter().map(|(i, _)| i).collect()
}

fn fits(job: &Rc<ClassAd>, s: &SlotState) -> bool {
    let (c, m, d) = requests(job, &s.ad);
    let (c, m, d) = quantize(c, m, d);
    c <= s.row.cpus && m <= s.row.memory && d <= s.row.disk
}

/// A slot taken for a job: its index, the piece to carve (for a
/// partitionable slot) and its ad as matched.
type Taken = (usize, Option<(i64, i64, i64)>, Rc<ClassAd>);

/// Takes the best candidate still free for this job: a static or dynamic
/// slot, or a piece of a partitionable slot that still fits (checked again
/// against what the slot has left).
fn take_slot(
    job: &Rc<ClassAd>,
    ac: &mut AutoCluster,
    states: &mut [SlotState],
    ev: &mut Evaluator,
) -> Option<Taken> {
    for &i in &ac.candidates {
        let s = &states[i];
        if !free_capacity(s) {
            continue;
        }
        if s.row.kind != SlotKind::Partitionable {
            let ad = s.ad.clone();
            states[i].taken = true;
            return Some((i, None, ad));
        }
        let ctx = MatchContext::new(job.clone(), s.ad.clone());
        if !ctx.symmetric(ev) || !fits(job, s) {
            continue;
        }
        let (c, m, d) = requests(job, &s.ad);
        let (c, m, d) = quantize(c, m, d);
        let ad = s.ad.clone();
        let st = &mut states[i];
        st.row.cpus -= c;
        st.row.memory -= m;
        st.row.disk -= d;
        st.ad = Rc::new(with_resources(&st.ad, &st.row));
        return Some((i, Some((c, m, d)), ad));
    }
    None
}

/// Undoes [`take_slot`] when the submitter's limit refuses the match.
fn give_back(st: &mut SlotState, carve: Option<(i64, i64, i64)>, before: &Rc<ClassAd>) {
    match carve {
        None => st.taken = false,
        Some((c, m, d)) => {
            st.row.cpus += c;
            st.row.memory += m;
            st.row.disk += d;
            st.ad = before.clone();
        }
    }
}

/// The ad of a piece carved from a partitionable slot.
fn with_piece(ad: &ClassAd, c: i64, m: i64, d: i64) -> ClassAd {
    let mut a = ad.clone();
    a.insert("Cpus", Expr::int(c));
    a.insert("Memory", Expr::int(m));
    a.insert("Disk", Expr::int(d));
    a
}

/// A partitionable slot's ad with its whole resources (for the machine's
/// total slot weight).
fn whole(ad: &Rc<ClassAd>, row: &SlotRow) -> Rc<ClassAd> {
    if row.kind != SlotKind::Partitionable {
        return ad.clone();
    }
    Rc::new(with_piece(
        ad,
        row.total_cpus,
        row.total_memory,
        row.total_disk,
    ))
}

fn with_resources(ad: &ClassAd, row: &SlotRow) -> ClassAd {
    let mut a = ad.clone();
    a.insert("Cpus", Expr::int(row.cpus));
    a.insert("Memory", Expr::int(row.memory));
    a.insert("Disk", Expr::int(row.disk));
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_a_bool_is_not_a_number_in_a_match() {
        let ad = |t: &str| Rc::new(crate::classad::parse_ad(t).unwrap());
        let slot = ad("[Cpus = 4; Memory = 2048]");
        // A request may refer to the slot; a real truncates; a bool
        // falls back to the default as if the request were unset (it
        // counted as 1 before).
        let job = ad("[RequestCpus = 2.9; RequestMemory = TARGET.Memory / 2; RequestDisk = true]");
        assert_eq!(requests(&job, &slot), (2, 1024, 0));
        let job = ad("[RequestCpus = true; RequestMemory = true]");
        assert_eq!(requests(&job, &slot), (1, 0, 0));
    }

    #[test]
    fn quantize_rounds_up_as_htcondor() {
        assert_eq!(quantize(0, 1, 1), (1, 128, 1024));
        assert_eq!(quantize(2, 129, 1025), (2, 256, 2048));
        assert_eq!(quantize(3, 256, 2048), (3, 256, 2048));
    }

    #[test]
    fn diff_names_lists_the_set_attributes() {
        assert_eq!(
            diff_names("[ Args = \"1\"; ProcId = 1 ]"),
            vec!["args", "procid"]
        );
        assert_eq!(diff_names("[ ProcId = 0 ]"), vec!["procid"]);
        assert!(diff_names("[ ]").is_empty());
    }

    #[test]
    fn signature_follows_references() {
        let a =
            crate::classad::parse_ad("[Requirements = TARGET.Memory > Need; Need = 5; Other = 1]")
                .unwrap();
        let b =
            crate::classad::parse_ad("[Requirements = TARGET.Memory > Need; Need = 6; Other = 1]")
                .unwrap();
        let c =
            crate::classad::parse_ad("[Requirements = TARGET.Memory > Need; Need = 5; Other = 2]")
                .unwrap();
        let names = vec!["requirements".to_string()];
        assert_ne!(signature(&a, &names), signature(&b, &names));
        assert_eq!(signature(&a, &names), signature(&c, &names));
    }
}
