//! `tern_q -better-analyze` and `-analyze`: why a job does not run.
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

use std::rc::Rc;

use crate::classad::ast::{AttrRef, BinOp, Call, Expr};
use crate::classad::unparse::unparse_old;
use crate::classad::{ClassAd, Evaluator, MatchContext, Value, eval_attr, eval_in};
use crate::config::Config;
use crate::machine::{self, Machine, SlotKind};
use crate::negotiator::policy::{self, Action};
use crate::queue::{JobId, Queue, status};

use super::CliError;
use super::format::{run_time, value_old};

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
        if job_status != status::IDLE {
            out.push('\n');
            out.push_str(&status_section(id, job_status, &ad, self.now));
            out.push_str(&paragraphs(vec![
                match_history(&ad),
                policy_notes(&ad, job_status),
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
        let mut notes = vec![match_history(&ad)];
        notes.extend(idle_notes(id, &ad, last_pass, now));
        notes.push(policy_notes(&ad, job_status));
        out.push_str(&paragraphs(notes));
        Ok(out)
    }
}

fn machine_error(e: machine::MachineError) -> CliError {
    CliError::Failed {
        msg: format!("cannot read this machine's slots: {e}"),
        hint: None,
    }
}

fn load_pool(cfg: &Config, q: Option<&Queue>, now: i64) -> Result<Pool, CliError> {
    let m = Machine::detect(cfg).map_err(machine_error)?;
    let mut rows = match q {
        Some(q) => machine::load_slots(q.conn()).map_err(machine_error)?,
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

/// condor_q's doJobRunAnalysis without user priorities.
fn count_slots(job: &Rc<ClassAd>, pool: &Pool, ev: &mut Evaluator) -> Counts {
    let user = match eval_attr(job, "User") {
        Value::Str(s) => Some(s.to_string()),
        _ => None,
    };
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

// ---------------------------------------------------------------------------
// The Requirements, clause by clause

fn strip(e: &Expr) -> &Expr {
    let mut e = e;
    while let Expr::Paren(inner) = e {
        e = inner;
    }
    e
}

/// The top-level `&&` operands, parentheses looked through.
fn split_and<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match strip(e) {
        Expr::Binary(BinOp::And, b) => {
            split_and(&b.0, out);
            split_and(&b.1, out);
        }
        _ => out.push(e),
    }
}

/// How many steps condor_q numbers in an expression: one for every logical
/// operator and one for every operand that is not one.
fn steps_in(e: &Expr) -> usize {
    match strip(e) {
        Expr::Binary(BinOp::And | BinOp::Or, b) => steps_in(&b.0) + steps_in(&b.1) + 1,
        Expr::Unary(crate::classad::ast::UnOp::Not, x) => steps_in(x) + 1,
        Expr::Cond(b) => steps_in(&b.0) + steps_in(&b.1) + steps_in(&b.2) + 1,
        _ => 1,
    }
}

fn is_scope(a: &AttrRef, scope: &str) -> bool {
    matches!(&a.base, Some(Expr::Attr(b)) if b.base.is_none() && b.name.key() == scope)
}

/// The attributes of the job an expression reads (through the job's own
/// attributes, to any depth) and the names it looks up in the slot.
fn references(job: &ClassAd, e: &Expr) -> (Vec<String>, Vec<String>) {
    let mut mine: Vec<String> = Vec::new();
    let mut theirs: Vec<String> = Vec::new();
    let mut todo: Vec<Expr> = vec![e.clone()];
    while let Some(e) = todo.pop() {
        let mut refs: Vec<AttrRef> = Vec::new();
        e.walk_attrs(&mut |a| refs.push(a.clone()));
        for a in refs {
            let name = a.name.as_str().to_string();
            let key = a.name.key();
            let target = is_scope(&a, "target") || is_scope(&a, "other");
            let my = is_scope(&a, "my") || is_scope(&a, "ad");
            if target {
                theirs.push(name);
            } else if a.base.is_none() || my {
                if a.base.is_none() && matches!(key, "my" | "target" | "other" | "ad") {
                    continue;
                }
                match job.get(key) {
                    Some(x) if !mine.iter().any(|m| m.eq_ignore_ascii_case(&name)) => {
                        mine.push(name);
                        todo.push(x.clone());
                    }
                    Some(_) => {}
                    None if a.base.is_none() => theirs.push(name),
                    None => {}
                }
            }
        }
    }
    let sort = |v: &mut Vec<String>| {
        v.sort_by_key(|s| s.to_ascii_lowercase());
        v.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
    };
    sort(&mut mine);
    sort(&mut theirs);
    mine.retain(|m| !m.eq_ignore_ascii_case("requirements"));
    (mine, theirs)
}

/// `Some(value)` when a clause reads nothing of the slot (condor_q prints
/// "always" or "never" for it instead of a count).
fn constant_value(job: &Rc<ClassAd>, e: &Expr) -> Option<bool> {
    let (_, theirs) = references(job, e);
    if !theirs.is_empty() {
        return None;
    }
    Some(eval_in(job, e).is_true())
}

/// The clauses of the job's Requirements, counted against every slot: the
/// slots as they are, and partitionable slots whole where the job fits
/// only that way.
fn clauses(job: &Rc<ClassAd>, req: &Expr, pool: &Pool, ev: &mut Evaluator) -> Vec<Clause> {
    let mut parts = Vec::new();
    split_and(req, &mut parts);
    let mut current: Vec<Rc<ClassAd>> = Vec::new();
    let mut drained: Vec<Rc<ClassAd>> = Vec::new();
    for slot in &pool.slots {
        current.push(slot.ad.clone());
        let (t, within) = target_for(slot, job, ev);
        if !within {
            drained.push(t);
        }
    }
    let mut out = Vec::new();
    let mut next = 0usize;
    for (i, part) in parts.into_iter().enumerate() {
        next += steps_in(part);
        let step = next - 1;
        if i > 0 {
            next += 1;
        }
        let expr = strip(part).clone();
        let count = |ads: &[Rc<ClassAd>], ev: &mut Evaluator| {
            ads.iter()
                .filter(|s| {
                    let ctx = MatchContext::new(job.clone(), (*s).clone());
                    ev.eval(&expr, ctx.left()).is_true()
                })
                .count()
        };
        let matched = count(&current, ev);
        let matched_drained = count(&drained, ev);
        out.push(Clause {
            step,
            constant: constant_value(job, &expr),
            expr,
            matched,
            matched_drained,
        });
    }
    out
}

/// condor_q's PrettyPrintExprTree: the expression on lines of at most
/// `width` columns, broken after `&&` and `||`, continued lines indented
/// by the depth of parentheses. The first line's `indent` columns are
/// already written.
fn pretty(text: &str, indent: usize, width: usize) -> String {
    let indent = if indent > width {
        width * 2 / 3
    } else {
        indent
    };
    let mut out: Vec<char> = Vec::with_capacity(text.len() + 16);
    let mut depth = indent as i64;
    let mut pos = indent;
    let (mut line_start, mut last_and) = (0usize, 0usize);
    let mut indent_at_last_and = indent as i64;
    let (mut was_and, mut prev) = (false, '\0');
    for c in text.chars() {
        let mut is_and = false;
        if (c == '&' || c == '|') && prev == c {
            is_and = true;
        } else if c == '(' {
            depth += 2;
        } else if c == ')' {
            depth -= 2;
        }
        if pos >= width && last_and != line_start {
            out[last_and] = '\n';
            let pad = indent_at_last_and.max(0) as usize;
            out.splice(last_and + 1..last_and + 1, std::iter::repeat_n(' ', pad));
            line_start = last_and + 1;
            last_and = line_start;
            pos = out.len() - line_start;
            indent_at_last_and = depth;
        }
        if was_and {
            last_and = out.len();
            indent_at_last_and = depth;
        }
        prev = c;
        out.push(c);
        pos += 1;
        was_and = is_and;
    }
    out.into_iter().collect()
}

/// `[3]`, padded as condor_q pads step labels.
fn step_label(step: usize) -> String {
    format!("{:<5}", format!("[{step}]"))
}

/// The Requirements, the attributes they read, the clause table and the
/// suggestions: condor_q's doJobMatchAnalysisToBuffer.
fn requirements_section(
    id: JobId,
    job: &Rc<ClassAd>,
    pool: &Pool,
    width: usize,
    ev: &mut Evaluator,
) -> String {
    let mut out = String::new();
    let Some(req) = job.get("Requirements") else {
        out.push_str(&format!(
            "Job {} has no Requirements expression; it matches every slot.\n",
            request_id(id)
        ));
        return out;
    };
    let rid = request_id(id);
    out.push_str(&format!(
        "The Requirements expression for job {rid} is\n\n    {}\n\n",
        pretty(&unparse_old(req), 4, width)
    ));
    let (mine, theirs) = references(job, req);
    out.push_str(&format!("Job {rid} defines the following attributes:\n\n"));
    for name in &mine {
        if let Some(e) = job.get(name) {
            out.push_str(&format!("    {name} = {}\n", unparse_old(e)));
        }
    }
    if pool.slots.len() == 1 {
        let slot = &pool.slots[0];
        let lines: Vec<String> = theirs
            .iter()
            .filter(|n| slot.ad.get(n).is_some())
            .map(|n| format!("    TARGET.{n} = {}\n", value_old(&eval_attr(&slot.ad, n))))
            .collect();
        if !lines.is_empty() {
            out.push_str(&format!(
                "\n{} has the following attributes:\n\n{}",
                slot.name,
                lines.concat()
            ));
        }
    }
    out.push('\n');

    let table = clauses(job, req, pool, ev);
    let two = table.iter().any(|c| c.constant.is_none())
        && pool
            .slots
            .iter()
            .any(|s| !target_for(s, job, &mut Evaluator::new()).1);
    out.push_str(&format!(
        "The Requirements expression for job {rid} reduces to these conditions:\n\n"
    ));
    if two {
        out.push_str("        Slots      If\n");
        out.push_str("Step    Matched   Drained  Condition\n");
        out.push_str("-----  --------- ---------  ---------\n");
    } else {
        out.push_str("         Slots\n");
        out.push_str("Step    Matched  Condition\n");
        out.push_str("-----  --------  ---------\n");
    }
    for c in &table {
        let label = unparse_old(&c.expr);
        let counts = match (c.constant, two) {
            (Some(v), false) => format!("{:>9}", if v { "always" } else { "never" }),
            (Some(v), true) => format!("{:>19}", if v { "always" } else { "never" }),
            (None, false) => format!("{:>9}", c.matched),
            (None, true) => format!("{:>9} {:>9}", c.matched, c.matched_drained),
        };
        out.push_str(&format!("{} {counts}  {label}\n", step_label(c.step)));
    }
    out.push_str(&suggestions(job, &table, pool));
    out
}

// ---------------------------------------------------------------------------
// Suggestions

/// The clause with the job's own attributes replaced by their values, as
/// HTCondor's older analyzer shows conditions.
fn flatten(e: &Expr, job: &Rc<ClassAd>) -> Expr {
    match e {
        Expr::Attr(a) => {
            let mine = (a.base.is_none() && job.get(a.name.key()).is_some())
                || ((is_scope(a, "my") || is_scope(a, "ad")) && job.get(a.name.key()).is_some());
            if mine {
                let v = eval_in(job, &Expr::attr(a.name.as_str()));
                if matches!(
                    v,
                    Value::Int(_) | Value::Real(_) | Value::Str(_) | Value::Bool(_)
                ) {
                    return Expr::Lit(v);
                }
            }
            e.clone()
        }
        Expr::Binary(op, b) => Expr::binary(*op, flatten(&b.0, job), flatten(&b.1, job)),
        Expr::Unary(op, x) => Expr::Unary(*op, Box::new(flatten(x, job))),
        Expr::Paren(x) => Expr::Paren(Box::new(flatten(x, job))),
        Expr::Cond(b) => Expr::Cond(Box::new((
            flatten(&b.0, job),
            flatten(&b.1, job),
            flatten(&b.2, job),
        ))),
        Expr::Call(c) => Expr::Call(Box::new(Call {
            name: c.name.clone(),
            builtin: c.builtin,
            args: c.args.iter().map(|a| flatten(a, job)).collect(),
        })),
        _ => e.clone(),
    }
}

/// What to change a clause that matches no slot to: the value the slots
/// have, for a comparison of a slot attribute with a constant, else
/// REMOVE.
fn suggestion(flat: &Expr, pool: &Pool) -> String {
    let whole: Vec<Rc<ClassAd>> = pool
        .slots
        .iter()
        .map(|s| s.drained.clone().unwrap_or_else(|| s.ad.clone()))
        .collect();
    let Expr::Binary(op, b) = strip(flat) else {
        return "REMOVE".into();
    };
    let slot_attr = |e: &Expr| match strip(e) {
        Expr::Attr(a) if is_scope(a, "target") || is_scope(a, "other") => {
            Some(a.name.as_str().to_string())
        }
        _ => None,
    };
    let (attr, op) = match (slot_attr(&b.0), strip(&b.1), slot_attr(&b.1), strip(&b.0)) {
        (Some(a), Expr::Lit(_), _, _) => (a, *op),
        (_, _, Some(a), Expr::Lit(_)) => {
            let flipped = match op {
                BinOp::Lt => BinOp::Gt,
                BinOp::Le => BinOp::Ge,
                BinOp::Gt => BinOp::Lt,
                BinOp::Ge => BinOp::Le,
                other => *other,
            };
            (a, flipped)
        }
        _ => return "REMOVE".into(),
    };
    let values: Vec<Value> = whole
        .iter()
        .map(|ad| eval_attr(ad, &attr))
        .filter(|v| !matches!(v, Value::Undefined | Value::Error))
        .collect();
    let numbers: Vec<f64> = values.iter().filter_map(|v| v.as_number()).collect();
    let number = |x: f64| {
        if x.fract() == 0.0 && x.abs() < 9e15 {
            format!("{}", x as i64)
        } else {
            format!("{x}")
        }
    };
    let pick = match op {
        BinOp::Ge => numbers.iter().cloned().reduce(f64::max).map(number),
        BinOp::Gt => numbers
            .iter()
            .cloned()
            .reduce(f64::max)
            .map(|x| number(x - 1.0)),
        BinOp::Le => numbers.iter().cloned().reduce(f64::min).map(number),
        BinOp::Lt => numbers
            .iter()
            .cloned()
            .reduce(f64::min)
            .map(|x| number(x + 1.0)),
        BinOp::Eq | BinOp::MetaEq => values.first().map(value_old),
        _ => None,
    };
    match pick {
        Some(v) => format!("MODIFY TO {v}"),
        None => "REMOVE".into(),
    }
}

/// HTCondor's older "Suggestions" table: conditions with the job's values
/// filled in, fewest matches first, and for a condition that no slot
/// meets even whole, what to change it to.
fn suggestions(job: &Rc<ClassAd>, table: &[Clause], pool: &Pool) -> String {
    if table
        .iter()
        .all(|c| c.matched + c.matched_drained > 0 || c.constant == Some(true))
    {
        return String::new();
    }
    let mut rows: Vec<(usize, String, String)> = table
        .iter()
        .map(|c| {
            let flat = flatten(&c.expr, job);
            let n = match c.constant {
                Some(true) => pool.slots.len(),
                Some(false) => 0,
                None => c.matched.max(c.matched_drained),
            };
            let suggest = if n == 0 {
                suggestion(&flat, pool)
            } else {
                String::new()
            };
            (n, format!("( {} )", unparse_old(strip(&flat))), suggest)
        })
        .collect();
    rows.sort_by_key(|r| r.0);
    let mut out = String::from("\nSuggestions:\n\n");
    out.push_str(&format!(
        "    {:<34}{:<20}{}\n",
        "Condition", "Machines Matched", "Suggestion"
    ));
    out.push_str(&format!(
        "    {:<34}{:<20}{}\n",
        "---------", "----------------", "----------"
    ));
    for (i, (n, cond, suggest)) in rows.iter().enumerate() {
        let line = if cond.chars().count() < 46 {
            format!("{:<4}{cond:<34}{n:<20}{suggest}", i + 1)
        } else {
            format!("{:<4}{cond}\n{:38}{n:<20}{suggest}", i + 1, "")
        };
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

// ---------------------------------------------------------------------------
// Summary and status

/// `12.000`, as condor_q names a job in the analysis headings.
fn request_id(id: JobId) -> String {
    format!("{}.{:03}", id.cluster, id.proc)
}

/// `012.000`, as condor_q names a job in the summary.
fn summary_id(id: JobId) -> String {
    format!("{:03}.{:03}", id.cluster, id.proc)
}

/// `: a, b, c` (at most ten names), condor_q -verbose's slot lists.
fn names(list: &[String]) -> String {
    if list.is_empty() {
        return String::new();
    }
    let mut s = String::from(":");
    for (i, n) in list.iter().enumerate() {
        if i == 10 {
            s.push_str(", ...");
            break;
        }
        s.push_str(if i == 0 { " " } else { ", " });
        s.push_str(n);
    }
    s
}

/// condor_q's appendJobMatchTotalsToBuffer, without user priorities.
fn summary(id: JobId, c: &Counts, start: &str) -> String {
    let mut out = format!(
        "\n{}:  Run analysis summary ignoring user priority.  Of {} slots on 1 machines,\n",
        summary_id(id),
        c.total
    );
    let line = |out: &mut String, n: usize, what: &str, list: &[String]| {
        out.push_str(&format!("  {n:5} slots {what}{}\n", names(list)));
    };
    line(
        &mut out,
        c.rejected_by_job.len(),
        "are rejected by your job's requirements",
        &c.rejected_by_job,
    );
    line(
        &mut out,
        c.reject_job.len(),
        "reject your job because of their own requirements",
        &c.reject_job,
    );
    if !c.running_yours.is_empty() {
        line(
            &mut out,
            c.running_yours.len(),
            "match and are already running your jobs",
            &[],
        );
    }
    if !c.serving_others.is_empty() {
        line(
            &mut out,
            c.serving_others.len(),
            "match but are serving other users",
            &c.serving_others,
        );
    }
    line(
        &mut out,
        c.willing.len(),
        "match and are willing to run your job",
        &c.willing,
    );
    if !c.if_drained.is_empty() {
        line(
            &mut out,
            c.if_drained.len(),
            "would match if drained",
            &c.if_drained,
        );
    }
    let job_matches = c.total - c.rejected_by_job.len();
    let both = job_matches - c.reject_job.len();
    if job_matches == 0 {
        out.push_str("\nWARNING:  Be advised:\n   No machines matched the jobs's constraints\n");
    } else if both == 0 {
        out.push_str(&format!(
            "\nWARNING:  Be advised:\n   Job did not match any machines's constraints\n   \
             The slots' Requirements include START, which is\n       {start}\n   \
             in this machine's configuration (tern_config_val START).\n"
        ));
    }
    out
}

/// A time as ctime(3) writes it, in local time.
fn ctime(secs: i64) -> String {
    use chrono::{Local, TimeZone};
    match Local.timestamp_opt(secs, 0).single() {
        Some(t) => t.format("%a %b %e %H:%M:%S %Y").to_string(),
        None => format!("{secs}"),
    }
}

fn int(ad: &Rc<ClassAd>, name: &str) -> Option<i64> {
    match eval_attr(ad, name) {
        Value::Int(i) => Some(i),
        Value::Real(r) => Some(r as i64),
        _ => None,
    }
}

fn string(ad: &Rc<ClassAd>, name: &str) -> Option<String> {
    match eval_attr(ad, name) {
        Value::Str(s) => Some(s.to_string()),
        _ => None,
    }
}

/// condor_q's job status line for a job that is not idle, with what tern
/// knows about why.
fn status_section(id: JobId, job_status: i64, ad: &Rc<ClassAd>, now: i64) -> String {
    let head = format!("\n{}:  ", summary_id(id));
    let mut out = head.clone();
    match job_status {
        status::HELD => {
            out.push_str("Job is held.\n\n");
            if let Some(r) = string(ad, "HoldReason").filter(|r| !r.is_empty()) {
                out.push_str(&format!("Hold reason: {r}\n"));
            }
            out.push_str(&format!(
                "Hold reason code: {}, subcode: {}\n",
                int(ad, "HoldReasonCode").unwrap_or(0),
                int(ad, "HoldReasonSubCode").unwrap_or(0)
            ));
            if let Some(t) = int(ad, "EnteredCurrentStatus") {
                out.push_str(&format!("Held since: {}\n", ctime(t)));
            }
            out.push_str(&format!(
                "Once the cause is fixed, tern_release {}.{} lets it run again.\n",
                id.cluster, id.proc
            ));
        }
        status::RUNNING | status::TRANSFERRING_OUTPUT => {
            out.push_str("Job is running.\n\n");
            out.push_str(&running_on(ad, now));
        }
        status::SUSPENDED => {
            out.push_str("Job is suspended.\n\n");
            out.push_str(&running_on(ad, now));
            out.push_str(&format!(
                "tern_continue {}.{} resumes it.\n",
                id.cluster, id.proc
            ));
        }
        status::REMOVED => out.push_str("Job is removed.\n"),
        status::COMPLETED => out.push_str("Job is completed.\n"),
        other => out.push_str(&format!("Job has status {other}.\n")),
    }
    out.push('\n');
    out
}

fn running_on(ad: &Rc<ClassAd>, now: i64) -> String {
    let host = string(ad, "RemoteHost").unwrap_or_else(|| "an unknown slot".into());
    match int(ad, "JobCurrentStartDate").or_else(|| int(ad, "JobStartDate")) {
        Some(t) => format!(
            "Running on {host} since {} ({}).\n",
            ctime(t),
            run_time(now - t).trim_start()
        ),
        None => format!("Running on {host}.\n"),
    }
}

/// condor_q's appendBasicJobRunAnalysisToBuffer: the last match and the
/// last match failure the pass recorded.
fn match_history(ad: &Rc<ClassAd>) -> String {
    let mut out = String::new();
    let last_match = int(ad, "LastMatchTime").unwrap_or(0);
    let last_rej = int(ad, "LastRejMatchTime").unwrap_or(0);
    if last_match != 0 {
        out.push_str(&format!("Last successful match: {}\n", ctime(last_match)));
    } else if last_rej != 0 {
        out.push_str("No successful match recorded.\n");
    }
    if last_rej > last_match {
        out.push_str(&format!("Last failed match: {}\n", ctime(last_rej)));
        if let Some(r) = string(ad, "LastRejMatchReason") {
            out.push_str(&format!("Reason for last match failure: {r}\n"));
        }
    }
    out
}

/// What only tern says about an idle job: a deferral time ahead, and a
/// queue no pass has looked at since the job came.
fn idle_notes(id: JobId, ad: &Rc<ClassAd>, last_pass: Option<i64>, now: i64) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(t) = int(ad, "DeferralTime").filter(|&t| t > now) {
        out.push(format!(
            "Job {}.{} is waiting for its deferral time, {} (in {}).\n",
            id.cluster,
            id.proc,
            ctime(t),
            run_time(t - now).trim_start()
        ));
    }
    let qdate = int(ad, "QDate").unwrap_or(0);
    match last_pass {
        Some(p) if p >= qdate => {
            out.push(format!("Last negotiation pass: {}\n", ctime(p)));
        }
        _ => {
            out.push(format!(
                "No negotiation pass since submit: no pass has run since job {}.{} was\n\
                 submitted, so nothing has tried to match it yet. Run tern_negotiate to\n\
                 start one now; so that passes run even when none is started for you, add\n\
                 this line to your crontab (crontab -e):\n\n    * * * * * tern_negotiate\n",
                id.cluster, id.proc
            ));
        }
    }
    out
}

/// A periodic expression that the next pass will act on.
fn policy_notes(ad: &Rc<ClassAd>, job_status: i64) -> String {
    let (what, reason) = match policy::periodic(ad, job_status) {
        Some(Action::Hold { reason, .. }) => ("hold", reason),
        Some(Action::Release { reason }) => ("release", reason),
        Some(Action::Remove { reason }) => ("remove", reason),
        None => return String::new(),
    };
    format!("The next negotiation pass will {what} this job:\n    {reason}\n")
}

/// The non-empty parts, a blank line between each two.
fn paragraphs(parts: Vec<String>) -> String {
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::parser::parse_expr_old;

    #[test]
    fn steps_are_numbered_as_condor_q_numbers_them() {
        let e = parse_expr_old("(A == 1) && (B == 2) && (C || D) && E").unwrap();
        let mut parts = Vec::new();
        split_and(&e, &mut parts);
        let mut next = 0;
        let mut steps = Vec::new();
        for (i, p) in parts.iter().enumerate() {
            next += steps_in(p);
            steps.push(next - 1);
            if i > 0 {
                next += 1;
            }
        }
        assert_eq!(steps, [0, 1, 5, 7]);
    }

    #[test]
    fn long_requirements_wrap_after_and() {
        let text = "(TARGET.Arch == \"X86_64\") && (TARGET.OpSys == \"LINUX\") && \
                    (TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory)";
        assert_eq!(
            pretty(text, 4, 80),
            "(TARGET.Arch == \"X86_64\") && (TARGET.OpSys == \"LINUX\") &&\n    \
             (TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory)"
        );
        assert_eq!(pretty("A && B", 4, 80), "A && B");
    }

    #[test]
    fn names_lists_ten_at_most() {
        let v: Vec<String> = (1..=12).map(|i| format!("slot{i}")).collect();
        assert_eq!(names(&v[..2]), ": slot1, slot2");
        assert!(names(&v).ends_with("slot10, ..."));
        assert_eq!(names(&[]), "");
    }
}
