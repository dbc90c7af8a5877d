//! `$$(Attr)` substitution at match time, as the schedd does it: a job
//! attribute whose text holds `$$(Name)`, `$$(Name:default)` or
//! `$$([expression])` takes its value from the matched slot. The claim
//! records `MATCH_<Name>` for every name used and `MATCH_EXP_<Attr>` with
//! the substituted text of each attribute; the shadow runs the job with the
//! substituted attributes while the queue keeps the original ones.

use std::rc::Rc;

use crate::classad::unparse::{unparse, value_to_string};
use crate::classad::{ClassAd, Evaluator, Expr, MatchContext, Value};

/// The substitutions one claim records, as job attributes to set.
pub fn match_attrs(job: &Rc<ClassAd>, slot: &Rc<ClassAd>) -> Result<Vec<(String, Expr)>, String> {
    let mut out: Vec<(String, Expr)> = Vec::new();
    let ctx = MatchContext::new(slot.clone(), job.clone());
    let mut ev = Evaluator::new();
    for (name, e) in job.iter() {
        if !has_dollar(e)
            || crate::config::reader::strip_prefix_ci(name, "MATCH_").is_some_and(|r| !r.is_empty())
        {
            continue;
        }
        let text = match e.literal_value() {
            Some(Value::Str(s)) => s.to_string(),
            _ => unparse(e),
        };
        if !text.contains("$$(") {
            continue;
        }
        let expanded = expand(&text, &mut |inner| {
            let (value, used) = lookup(inner, &ctx, &mut ev)?;
            if let Some(n) = used {
                out.push((format!("MATCH_{n}"), Expr::string(&value)));
            }
            Ok(value)
        })
        .map_err(|m| format!("attribute {name}: {m}"))?;
        out.push((format!("MATCH_EXP_{name}"), Expr::string(&expanded)));
    }
    Ok(out)
}

/// Whether an expression holds `$$(` (which can only be inside a string
/// literal: `$` is not ClassAd syntax), without printing it.
fn has_dollar(e: &Expr) -> bool {
    match e {
        Expr::Lit(Value::Str(s)) => s.contains("$$("),
        Expr::Lit(_) | Expr::MatchSide(_) | Expr::RelTimeLit(_) => false,
        Expr::Attr(a) => a.base.as_ref().is_some_and(has_dollar),
        Expr::Unary(_, x) | Expr::Paren(x) => has_dollar(x),
        Expr::Binary(_, b) | Expr::Elvis(b) | Expr::Index(b) => {
            has_dollar(&b.0) || has_dollar(&b.1)
        }
        Expr::Cond(b) => has_dollar(&b.0) || has_dollar(&b.1) || has_dollar(&b.2),
        Expr::Call(c) => c.args.iter().any(has_dollar),
        Expr::List(items) => items.iter().any(has_dollar),
        Expr::Ad(ad) => ad.iter().any(|(_, x)| has_dollar(x)),
    }
}

/// The value text of one `$$(…)` body, and the slot attribute it named.
fn lookup(
    inner: &str,
    ctx: &MatchContext,
    ev: &mut Evaluator,
) -> Result<(String, Option<String>), String> {
    if let Some(expr) = inner.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
        let e = crate::classad::parse_expr(expr).map_err(|e| format!("$$([{expr}]): {e}"))?;
        let v = ev.eval(&e, ctx.left());
        if v.is_undefined() || v.is_error() {
            return Err(format!("$$([{expr}]) is {} on the slot", v.type_name()));
        }
        return Ok((text_of(&v), None));
    }
    let (name, default) = match inner.split_once(':') {
        Some((n, d)) => (n.trim(), Some(d)),
        None => (inner.trim(), None),
    };
    let v = ctx.eval_left(ev, &name.to_ascii_lowercase());
    if v.is_undefined() || v.is_error() {
        return match default {
            Some(d) => Ok((d.to_string(), Some(name.to_string()))),
            None => Err(format!("$$({name}) is not defined by the slot")),
        };
    }
    Ok((text_of(&v), Some(name.to_string())))
}

fn text_of(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        other => value_to_string(other),
    }
}

/// Replaces every `$$(…)` in `text` by `f` of its body.
pub fn expand(
    text: &str,
    f: &mut dyn FnMut(&str) -> Result<String, String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("$$(") {
        out.push_str(&rest[..i]);
        let body = &rest[i + 3..];
        // The body ends at the matching parenthesis (a `[expr]` may hold
        // parentheses of its own).
        let mut depth = 1;
        let mut end = None;
        for (j, c) in body.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(j);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else {
            return Err("unterminated $$(".into());
        };
        out.push_str(&f(&body[..end])?);
        rest = &body[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The job ad the shadow runs: every attribute with a `MATCH_EXP_` twin
/// takes the substituted text (a string attribute stays a string; any
/// other is parsed again as an expression).
pub fn substituted(job: &ClassAd) -> Result<ClassAd, String> {
    let mut ad = job.clone();
    let twins: Vec<(String, String)> = job
        .iter()
        .filter_map(|(n, e)| {
            let orig = n.strip_prefix("MATCH_EXP_")?;
            match e.literal_value() {
                Some(Value::Str(s)) => Some((orig.to_string(), s.to_string())),
                _ => None,
            }
        })
        .collect();
    for (name, text) in twins {
        let Some(orig) = job.get(&name) else { continue };
        let e = if matches!(orig.literal_value(), Some(Value::Str(_))) {
            Expr::string(&text)
        } else {
            crate::classad::parse_expr(&text)
                .map_err(|e| format!("{name} after $$() substitution: {e}"))?
        };
        ad.insert(&name, e);
    }
    Ok(ad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_defaults_and_expressions() {
        let job = Rc::new(
            crate::classad::parse_ad(
                r#"[Arguments = "--host $$(Machine) --n $$(Cpus) --x $$(Nope:7) --e $$([Cpus * 2])"; Cmd = "/bin/true"]"#,
            )
            .unwrap(),
        );
        let slot = Rc::new(crate::classad::parse_ad(r#"[Machine = "m1"; Cpus = 4]"#).unwrap());
        let attrs = match_attrs(&job, &slot).unwrap();
        let get = |n: &str| {
            attrs
                .iter()
                .find(|(a, _)| a == n)
                .map(|(_, e)| unparse(e))
                .unwrap()
        };
        assert_eq!(get("MATCH_Machine"), "\"m1\"");
        assert_eq!(get("MATCH_Cpus"), "\"4\"");
        assert_eq!(
            get("MATCH_EXP_Arguments"),
            "\"--host m1 --n 4 --x 7 --e 8\""
        );
        let mut full = (*job).clone();
        for (n, e) in attrs {
            full.insert(&n, e);
        }
        let run = substituted(&full).unwrap();
        assert_eq!(
            unparse(run.get("Arguments").unwrap()),
            "\"--host m1 --n 4 --x 7 --e 8\""
        );
    }

    #[test]
    fn an_undefined_name_without_default_is_an_error() {
        let job = Rc::new(crate::classad::parse_ad(r#"[Arguments = "$$(Gone)"]"#).unwrap());
        let slot = Rc::new(crate::classad::parse_ad("[Cpus = 1]").unwrap());
        assert!(match_attrs(&job, &slot).unwrap_err().contains("Gone"));
    }
}
