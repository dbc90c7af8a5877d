//! The Requirements of an idle job, clause by clause, as condor_q's
//! analysis prints them: the attributes they read, how many slots each
//! top-level clause matches, and the older "Suggestions" table with what
//! to change a clause that matches no slot to.

use super::*;

pub(super) fn strip(e: &Expr) -> &Expr {
    let mut e = e;
    while let Expr::Paren(inner) = e {
        e = inner;
    }
    e
}

/// The top-level `&&` operands, parentheses looked through.
pub(super) fn split_and<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
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
pub(super) fn steps_in(e: &Expr) -> usize {
    match strip(e) {
        Expr::Binary(BinOp::And | BinOp::Or, b) => steps_in(&b.0) + steps_in(&b.1) + 1,
        Expr::Unary(crate::classad::ast::UnOp::Not, x) => steps_in(x) + 1,
        Expr::Cond(b) => steps_in(&b.0) + steps_in(&b.1) + steps_in(&b.2) + 1,
        _ => 1,
    }
}

pub(super) fn is_scope(a: &AttrRef, scope: &str) -> bool {
    matches!(&a.base, Some(Expr::Attr(b)) if b.base.is_none() && b.name.key() == scope)
}

/// The attributes of the job an expression reads (through the job's own
/// attributes, to any depth) and the names it looks up in the slot.
pub(super) fn references(job: &ClassAd, e: &Expr) -> (Vec<String>, Vec<String>) {
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
pub(super) fn constant_value(job: &Rc<ClassAd>, e: &Expr) -> Option<bool> {
    let (_, theirs) = references(job, e);
    if !theirs.is_empty() {
        return None;
    }
    Some(eval_in(job, e).is_true())
}

/// The clauses of the job's Requirements, counted against every slot: the
/// slots as they are, and partitionable slots whole where the job fits
/// only that way.
pub(super) fn clauses(
    job: &Rc<ClassAd>,
    req: &Expr,
    pool: &Pool,
    ev: &mut Evaluator,
) -> Vec<Clause> {
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
pub(super) fn pretty(text: &str, indent: usize, width: usize) -> String {
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
pub(super) fn step_label(step: usize) -> String {
    format!("{:<5}", format!("[{step}]"))
}

/// The Requirements, the attributes they read, the clause table and the
/// suggestions: condor_q's doJobMatchAnalysisToBuffer.
pub(super) fn requirements_section(
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
pub(super) fn flatten(e: &Expr, job: &Rc<ClassAd>) -> Expr {
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
pub(super) fn suggestion(flat: &Expr, pool: &Pool) -> String {
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
pub(super) fn suggestions(job: &Rc<ClassAd>, table: &[Clause], pool: &Pool) -> String {
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
}
