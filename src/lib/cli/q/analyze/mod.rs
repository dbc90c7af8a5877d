//! `tern_q -better-analyze` and `-analyze`: why a job does not run.
//! This file matches the job against the slots; [`requirements`] takes
//! its Requirements apart and [`report`] writes the rest.
//!
//! An idle job is matched, as the negotiation pass matches it, against
//! every slot of this machine: the slots table as the last pass left it, or
//! the configured layout when no pass has filled the table yet. Dynamic
//! slots are left out, as condor_q leaves them out; a partitionable slot
//! that the job fits only when its dynamic slots are gone is also tried
//! whole ("would match if drained").
//!
//! The output follows condor_q's analysis (queue.cpp and analysis.cpp in
//! HTCondor): the job's Requirements, the job attributes they read, a table
//! of how many slots each top-level clause matches, the older "Suggestions"
//! table with what to change a clause that matches no slot to, the run
//! analysis summary (naming the slots in each group, as condor_q -verbose
//! does), and the last match failure the pass recorded. A job that is not
//! idle gets condor_q's one-line status (with the hold reason, code and
//! subcode for a held job, and where a running job runs).
//!
//! tern adds what a queue without daemons needs to say: that no
//! negotiation pass has run since the job was submitted (and how to get
//! one), that the job waits for its deferral time, and that a periodic
//! expression will hold, release or remove it at the next pass.

mod report;
mod requirements;

use std::rc::Rc;

use crate::classad::ast::{AttrRef, BinOp, Call, Expr};
use crate::classad::unparse::unparse_old;
use crate::classad::{ClassAd, Evaluator, MatchContext, Value, eval_attr, eval_in};
use crate::config::Config;
use crate::machine::{self, Machine, SlotKind};
use crate::negotiator::policy::{self, Action};
use crate::queue::{JobId, Queue};
use crate::vocab::JobStatus;

use super::CliError;
use super::format::{run_time, value_old};
use report::*;
use requirements::*;

/// How much to say about an idle job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// `-analyze`: the summary of which side rejects which slots.
    Summary,
    /// `-better-analyze`: the Requirements clause by clause as well.
    Better,
}

/// One slot the job is tried against.
struct Slot {
    /// `slot1@host`.
    name: String,
    ad: Rc<ClassAd>,
    /// A partitionable slot whole, as if its dynamic slots were gone.
    drained: Option<Rc<ClassAd>>,
    remote_user: Option<String>,
}

/// This machine's slots and the facts about the last pass.
struct Pool {
    slots: Vec<Slot>,
    /// The START expression, to name it when it rejects the job.
    start: String,
}

/// Analyses jobs one by one; the machine and its slots are read once, when
/// the first idle job needs them.
pub struct Analyzer<'a> {
    cfg: &'a Config,
    q: Option<&'a Queue>,
    now: i64,
    width: usize,
    depth: Depth,
    pool: Option<Pool>,
}

/// What the slots said about one job, condor_q's anaCounters with the
/// slot names kept.
#[derive(Default)]
struct Counts {
    total: usize,
    rejected_by_job: Vec<String>,
    reject_job: Vec<String>,
    running_yours: Vec<String>,
    serving_others: Vec<String>,
    willing: Vec<String>,
    if_drained: Vec<String>,
}

/// A top-level clause of the job's Requirements and its match counts.
struct Clause {
    step: usize,
    expr: Expr,
    /// `Some(value)` when the clause reads nothing of the slot.
    constant: Option<bool>,
    matched: usize,
    matched_drained: usize,
}

impl<'a> Analyzer<'a> {
    /// `width` is the line width the Requirements are wrapped to.
    pub fn new(
        cfg: &'a Config,
        q: Option<&'a Queue>,
        now: i64,
        width: usize,
        depth: Depth,
    ) -> Analyzer<'a> {
        Analyzer {
            cfg,
            q,
            now,
            width,
            depth,
            pool: None,
        }
    }

    fn pool(&mut self) -> Result<&Pool, CliError> {
        if self.pool.is_none() {
            self.pool = Some(load_pool(self.cfg, self.q, self.now)?);
        }
        Ok(self.pool.as_ref().expect("loaded above"))
    }

    /// The analysis of one job, as condor_q prints it.
    pub fn job(&mut self, id: JobId, job_status: i64, ad: Rc<ClassAd>) -> Result<String, CliError> {
        let mut out = String::new();
        let last_pass = match self.q {
            Some(q) => q.meta("last_pass")?,
            None => None,
        };
        if JobStatus::from_code(job_status) != Some(JobStatus::Idle) {
            out.push('\n');
            out.push_str(&status_section(id, job_status, &ad, self.now));
            out.push_str(&paragraphs(vec![
                match_history(&ad),
                hook_note(&ad),
                policy_notes(&ad, JobStatus::from_code(job_status)),
            ]));
            return Ok(out);
        }
        let (depth, width, now) = (self.depth, self.width, self.now);
        let pool = self.pool()?;
        let mut ev = Evaluator::new();
        let counts = count_slots(&ad, pool, &mut ev);
        if depth == Depth::Better {
            out.push_str(&requirements_section(id, &ad, pool, width, &mut ev));
            out.push('\n');
        }
        if counts.total > 0 {
            out.push_str(&summary(id, &counts, &pool.start));
        }
        out.push('\n');
        let mut notes = vec![match_history(&ad), hook_note(&ad)];
        if let Some(q) = self.q
            && let Some(b) = crate::negotiator::fetch::binding(q.conn(), id)?
        {
            notes.push(format!(
                "Job {id} was fetched by the {} hook of {} and runs only there: the next pass \
                 claims {} for it once the slot is free.\n",
                b.keyword, b.slot, b.slot
            ));
        }
        notes.extend(idle_notes(id, &ad, last_pass, now));
        notes.push(policy_notes(&ad, JobStatus::from_code(job_status)));
        out.push_str(&paragraphs(notes));
        Ok(out)
    }
}

fn load_pool(cfg: &Config, q: Option<&Queue>, now: i64) -> Result<Pool, CliError> {
    let mut m = Machine::detect(cfg)?;
    let mut rows = match q {
        Some(q) => {
            m = m.with_hooks(q.conn())?;
            machine::load_slots(q.conn())?
        }
        None => Vec::new(),
    };
    if rows.is_empty() {
        rows = machine::configured_rows(&m, now);
    }
    let slots = rows
        .iter()
        .filter(|r| r.kind != SlotKind::Dynamic)
        .map(|r| {
            let ad = machine::slot_ad(&m, r, now);
            let drained = (r.kind == SlotKind::Partitionable).then(|| {
                let mut d = ad.clone();
                d.insert("Cpus", Expr::int(r.total_cpus));
                d.insert("Memory", Expr::int(r.total_memory));
                d.insert("Disk", Expr::int(r.total_disk));
                Rc::new(d)
            });
            Slot {
                name: format!("{}@{}", r.name, m.host),
                ad: Rc::new(ad),
                drained,
                remote_user: r.remote_user.clone(),
            }
        })
        .collect();
    Ok(Pool {
        slots,
        start: unparse_old(&m.start),
    })
}

// ---------------------------------------------------------------------------
// Matching

fn is_false(v: &Value) -> bool {
    matches!(v, Value::Bool(false)) || matches!(v, Value::Int(0))
}

/// Whether a partitionable slot's WithinResourceLimits (slot as MY, job as
/// TARGET) says the job does not fit.
fn outside_limits(slot: &Rc<ClassAd>, job: &Rc<ClassAd>, ev: &mut Evaluator) -> bool {
    let ctx = MatchContext::new(slot.clone(), job.clone());
    is_false(&ctx.eval_left(ev, "withinresourcelimits"))
}

/// The ad a job is matched against: a partitionable slot the job does not
/// fit now is taken whole when it fits that way (condor_q's drain
/// overlay). Returns the ad and whether the job fits the slot as it is.
fn target_for(slot: &Slot, job: &Rc<ClassAd>, ev: &mut Evaluator) -> (Rc<ClassAd>, bool) {
    if let Some(d) = &slot.drained
        && outside_limits(&slot.ad, job, ev)
        && !outside_limits(d, job, ev)
    {
        return (d.clone(), false);
    }
    (slot.ad.clone(), true)
}

/// The submitter a job's slots are charged to, as the pass names it in
/// the slot's RemoteUser: `AccountingGroup@domain` for a job in an
/// accounting group, else its User (`owner@domain`). Comparing the slot
/// with the User alone counted a group job's own slots as other users'.
fn submitter(job: &Rc<ClassAd>) -> Option<String> {
    let Value::Str(user) = eval_attr(job, "User") else {
        return None;
    };
    match eval_attr(job, "AccountingGroup") {
        Value::Str(g) if !g.is_empty() => {
            let domain = user.rsplit_once('@').map_or("", |(_, d)| d);
            Some(format!("{g}@{domain}"))
        }
        _ => Some(user.to_string()),
    }
}

/// condor_q's doJobRunAnalysis without user priorities.
fn count_slots(job: &Rc<ClassAd>, pool: &Pool, ev: &mut Evaluator) -> Counts {
    let user = submitter(job);
    let mut c = Counts::default();
    for slot in &pool.slots {
        c.total += 1;
        let (target, within) = target_for(slot, job, ev);
        let ctx = MatchContext::new(job.clone(), target);
        if !ctx.left_matches_right(ev) {
            c.rejected_by_job.push(slot.name.clone());
            continue;
        }
        if !ctx.right_matches_left(ev) {
            c.reject_job.push(slot.name.clone());
            continue;
        }
        match &slot.remote_user {
            None if within => c.willing.push(slot.name.clone()),
            None => c.if_drained.push(slot.name.clone()),
            Some(r) if Some(r) == user.as_ref() => c.running_yours.push(slot.name.clone()),
            Some(_) => c.serving_others.push(slot.name.clone()),
        }
    }
    c
}
