//! The old route syntax (`JOB_ROUTER_DEFAULTS` merged with one
//! `JOB_ROUTER_ENTRIES` ad) converted to transform text, as
//! `ConvertClassadJobRouterRouteToXForm` of `xform_utils.cpp` does: `Name`
//! becomes `NAME`, `TargetUniverse` `UNIVERSE`, `Requirements`
//! `REQUIREMENTS` (its `TARGET.` prefixes stripped), other attributes
//! macros; then `copy_*` → `COPY`, `delete_*` → `DELETE`, `set_*` → `SET`,
//! `eval_set_*` → `EVALSET`, in that order and alphabetical (ignoring case)
//! within each group.
//!
//! Like HTCondor, `eval_set_*` expressions that refer to route attributes,
//! `Requirements` and the policy attributes are flattened against the route
//! ad ([`flatten`]): route attributes inlined, what becomes constant
//! computed, with HTCondor's rewriting of `true && x` and of a value and a
//! tree under `+`, `*`, `&&`, `||` and the bit operators (value first). The
//! differential suite (`tests/transform_diff/`) compares the result with
//! HTCondor's own conversion.

use std::collections::BTreeMap;

use crate::classad::ast::{AttrRef, BinOp, Call, Expr, Name};
use crate::classad::unparse::unparse_old;
use crate::classad::{ClassAd, Value};

use super::TransformError;

/// Route attributes whose expressions have `TARGET.` rewritten to `MY.`
/// (HTCondor's `atr_f_MyTarget` entries of `RouterAttrItems`).
const MY_TARGET: &[&str] = &[
    "EditJobInPlace",
    "FailureRateThreshold",
    "JobFailureTest",
    "JobShouldBeSandboxed",
    "OverrideRoutingEntry",
    "SharedX509UserProxy",
    "UseSharedX509UserProxy",
];

/// A map ordered as HTCondor's `CaseIgnLTStr` orders it.
#[derive(Default)]
struct NoCaseMap(BTreeMap<(String, String), String>);

impl NoCaseMap {
    fn insert(&mut self, k: &str, v: String) {
        self.0.retain(|(lk, _), _| *lk != k.to_ascii_lowercase());
        self.0.insert((k.to_ascii_lowercase(), k.to_string()), v);
    }
    fn contains(&self, k: &str) -> bool {
        self.0.keys().any(|(lk, _)| *lk == k.to_ascii_lowercase())
    }
    fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|((_, k), v)| (k.as_str(), v.as_str()))
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Converts one old-syntax route (`defaults` merged with `entry`, the entry
/// winning) to transform text. The text parses with
/// [`Transform::parse`](super::Transform::parse); its `NAME` is the route's
/// `Name`.
pub fn convert_old_route(
    defaults: Option<&ClassAd>,
    entry: &ClassAd,
) -> Result<String, TransformError> {
    convert(defaults, entry, false)
}

/// The conversion; `drop_input_rsl` eats `set_InputRSL` as
/// `condor_transform_ads -convertoldroutes` does.
pub(crate) fn convert(
    defaults: Option<&ClassAd>,
    entry: &ClassAd,
    drop_input_rsl: bool,
) -> Result<String, TransformError> {
    let mut route = defaults.cloned().unwrap_or_default();
    route.update(entry);
    let err = |m: String| TransformError::new("JOB_ROUTER_ENTRIES", 0, m);
    let mut name = String::new();
    let mut universe: Option<i64> = None;
    let mut requirements = String::new();
    let mut assignments = NoCaseMap::default();
    let mut string_assignments: Vec<String> = Vec::new();
    let mut copies = NoCaseMap::default();
    let mut deletes = NoCaseMap::default();
    let mut sets = NoCaseMap::default();
    let mut evalsets = NoCaseMap::default();
    let mut evalset_refs: Vec<String> = Vec::new();
    let rc = std::rc::Rc::new(route.clone());
    for (attr, e) in route.iter() {
        let lower = attr.to_ascii_lowercase();
        if let Some(target) = strip(attr, &lower, "copy_") {
            if let Some(s) = rc.eval_str(attr) {
                copies.insert(target, s);
            }
        } else if let Some(target) = strip(attr, &lower, "delete_") {
            deletes.insert(target, String::new());
        } else if let Some(target) = strip(attr, &lower, "set_") {
            if drop_input_rsl && target.eq_ignore_ascii_case("InputRSL") {
                continue;
            }
            sets.insert(target, unparse_old(e));
        } else if let Some(target) = strip(attr, &lower, "eval_set_") {
            let mut refs = internal_refs(e, &route);
            let text = if refs.is_empty() {
                unparse_old(e)
            } else {
                // Flattened against the route (its attributes inlined and
                // what that makes constant computed), as HTCondor's
                // "experimental flattening" does; what it still refers to
                // gets the temporary SETs below.
                let flat = rewrite_target(&flatten(e, &route, 0), Some("MY"));
                refs = internal_refs(&flat, &route);
                unparse_old(&flat)
            };
            evalsets.insert(target, text);
            for r in refs {
                if !evalset_refs.iter().any(|x| x.eq_ignore_ascii_case(&r)) {
                    evalset_refs.push(r);
                }
            }
        } else {
            match lower.as_str() {
                "name" => {
                    name = rc.eval_str(attr).ok_or_else(|| {
                        err(format!(
                            "the route's Name {} is not a string",
                            unparse_old(e)
                        ))
                    })?;
                }
                "targetuniverse" => universe = rc.eval_int(attr),
                "gridresource" => {
                    assignments.insert(attr, unparse_old(e));
                    string_assignments.push(attr.to_string());
                }
                "requirements" => {
                    requirements = unparse_old(&rewrite_target(&flatten(e, &route, 0), None))
                }
                _ => {
                    let (text, is_string) =
                        if MY_TARGET.iter().any(|m| m.eq_ignore_ascii_case(attr)) {
                            (
                                unparse_old(&rewrite_target(&flatten(e, &route, 0), Some("MY"))),
                                true,
                            )
                        } else if let Some(Value::Str(s)) = e.literal_value() {
                            (s.to_string(), true)
                        } else {
                            (unparse_old(e), false)
                        };
                    if !text.is_empty() {
                        assignments.insert(attr, text);
                        if is_string {
                            string_assignments.push(attr.to_string());
                        }
                    }
                }
            }
        }
    }
    evalset_refs.sort_by_key(|r| r.to_ascii_lowercase());

    let mut out: Vec<String> = vec![format!(
        "# autoconversion of route '{name}' from old route syntax"
    )];
    if !name.is_empty() {
        out.push(format!("NAME {name}"));
    }
    if let Some(u) = universe.filter(|u| *u != 0) {
        out.push(format!("UNIVERSE {u}"));
    }
    if !requirements.is_empty() {
        out.push(format!("REQUIREMENTS {requirements}"));
    }
    out.push(String::new());
    for (k, v) in assignments.iter() {
        out.push(format!("{k} = {v}"));
    }
    let mut block = |title: &str, map: &NoCaseMap, f: &dyn Fn(&str, &str) -> String| {
        if !map.is_empty() {
            out.push(String::new());
            out.push(format!("# {title} rules"));
            for (k, v) in map.iter() {
                out.push(f(k, v));
            }
        }
    };
    block("copy_*", &copies, &|k, v| format!("COPY {k} {v}"));
    block("delete_*", &deletes, &|k, _| format!("DELETE {k}"));
    block("set_*", &sets, &|k, v| format!("SET {k} {v}"));
    // eval_set_ rules that read route attributes see them in the job for
    // the moment of the EVALSET.
    let temps: Vec<&String> = evalset_refs
        .iter()
        .filter(|r| assignments.contains(r) && !sets.contains(r))
        .collect();
    if !temps.is_empty() {
        out.push(String::new());
        out.push("# temporarily SET attrs because eval_set_ rules refer to them".into());
        for r in &temps {
            if string_assignments.iter().any(|s| s.eq_ignore_ascii_case(r)) {
                out.push(format!("SET {r} \"$({r})\""));
            } else {
                out.push(format!("SET {r} $({r})"));
            }
        }
    }
    if !evalsets.is_empty() {
        out.push(String::new());
        out.push("# eval_set_* rules".into());
        for (k, v) in evalsets.iter() {
            out.push(format!("EVALSET {k} {v}"));
        }
    }
    if !temps.is_empty() {
        out.push(String::new());
        out.push("# remove temporary attrs".into());
        for r in &temps {
            out.push(format!("DELETE {r}"));
        }
    }
    Ok(out.join("\n"))
}

/// `attr` without `prefix` (matched in `lower`, its lower-case form).
fn strip<'a>(attr: &'a str, lower: &str, prefix: &str) -> Option<&'a str> {
    (lower.starts_with(prefix) && attr.len() > prefix.len()).then(|| &attr[prefix.len()..])
}

/// Attributes `e` names without a scope (or with `MY.`) that the route ad
/// defines (HTCondor's internal references).
fn internal_refs(e: &Expr, route: &ClassAd) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    e.walk_attrs(&mut |a: &AttrRef| {
        let scoped_my = match &a.base {
            None => true,
            Some(Expr::Attr(b)) => b.base.is_none() && b.name.key() == "my",
            _ => false,
        };
        let n = a.name.as_str();
        if scoped_my
            && !n.eq_ignore_ascii_case("my")
            && route.contains(n)
            && !out.iter().any(|x| x.eq_ignore_ascii_case(n))
        {
            out.push(route.spelling(n).unwrap_or(n).to_string());
        }
    });
    out
}

/// Functions whose value changes from call to call: never computed ahead.
const VOLATILE: &[&str] = &["time", "random", "now", "splittime", "formattime"];

/// `e` flattened against `route` (HTCondor's `FlattenAndInline`, in its
/// plain cases): a reference to a route attribute is replaced by that
/// attribute's flattened expression, and an operation, condition or call
/// whose operands all became literals is replaced by its value. References
/// to anything else (the job's attributes, `TARGET.x`) stay.
fn flatten(e: &Expr, route: &ClassAd, depth: usize) -> Expr {
    let f = |x: &Expr| flatten(x, route, depth);
    match e {
        Expr::Attr(a) => flatten_attr(e, a, route, depth),
        Expr::Unary(op, x) => {
            let fx = f(x);
            let done = scalar_lit(&fx);
            let out = Expr::Unary(*op, Box::new(fx));
            if done { value_of(out) } else { out }
        }
        Expr::Binary(op, b) => combine(*op, f(&b.0), f(&b.1)),
        Expr::Paren(x) => {
            let fx = f(x);
            if scalar_lit(&fx) {
                fx
            } else {
                Expr::Paren(Box::new(fx))
            }
        }
        Expr::Cond(b) => {
            let c = f(&b.0);
            match &c {
                Expr::Lit(Value::Bool(true)) => f(&b.1),
                Expr::Lit(Value::Bool(false)) => f(&b.2),
                _ => Expr::Cond(Box::new((c, f(&b.1), f(&b.2)))),
            }
        }
        Expr::Call(c) => flatten_call(c, c.args.iter().map(f).collect()),
        other => other.clone(),
    }
}

/// Whether `x` is a literal scalar (a list or an ad does not count).
fn scalar_lit(x: &Expr) -> bool {
    matches!(x, Expr::Lit(v) if !matches!(v, Value::List(_) | Value::Ad(_)))
}

/// The value of an expression of literals; kept as it is when that is an
/// error or not a scalar.
fn value_of(x: Expr) -> Expr {
    use crate::classad::{Evaluator, Scope};
    match Evaluator::new().eval(&x, &Scope::empty()) {
        Value::Error | Value::List(_) | Value::Ad(_) => x,
        v => Expr::Lit(v),
    }
}

/// The reference `e` (to `a`): the route attribute's flattened expression
/// when it names one (plain or `MY.`, up to 20 levels deep), else `e`.
fn flatten_attr(e: &Expr, a: &AttrRef, route: &ClassAd, depth: usize) -> Expr {
    let mine = match &a.base {
        None => true,
        Some(Expr::Attr(b)) => b.base.is_none() && b.name.key() == "my",
        _ => false,
    };
    match route.get(a.name.as_str()) {
        Some(target) if mine && depth < 20 => flatten(target, route, depth + 1),
        _ => e.clone(),
    }
}

/// The operation `l op r` of flattened operands: its value when both are
/// literals; for an associative, commutative operator with one literal,
/// HTCondor's `Operation::combine` (the literal first, `&&` and `||`
/// decided by it where they can be); else the operation as it is.
fn combine(op: BinOp, l: Expr, r: Expr) -> Expr {
    let commutative = matches!(
        op,
        BinOp::Add
            | BinOp::Mul
            | BinOp::BitAnd
            | BinOp::BitOr
            | BinOp::BitXor
            | BinOp::And
            | BinOp::Or
    );
    match (scalar_lit(&l), scalar_lit(&r)) {
        (true, true) => value_of(Expr::Binary(op, Box::new((l, r)))),
        // Operation::combine: one value and one tree of an
        // associative, commutative operator.
        (true, false) | (false, true) if commutative => {
            let (v, t) = if scalar_lit(&l) { (l, r) } else { (r, l) };
            if matches!(op, BinOp::And | BinOp::Or) {
                // `false && x`, `true || x`: decided by the value.
                let decided = Expr::Binary(op, Box::new((v.clone(), Expr::Lit(Value::Undefined))));
                if let Expr::Lit(Value::Bool(b)) = value_of(decided) {
                    return Expr::Lit(Value::Bool(b));
                }
                // `true && x` is `x`.
                if op == BinOp::And && matches!(v, Expr::Lit(Value::Bool(true))) {
                    return t;
                }
            }
            // The value goes first, as HTCondor rebuilds it.
            Expr::Binary(op, Box::new((v, t)))
        }
        _ => Expr::Binary(op, Box::new((l, r))),
    }
}

/// The call `c` with its flattened `args`: its value when it is a builtin,
/// not volatile, of literals only.
fn flatten_call(c: &Call, args: Vec<Expr>) -> Expr {
    let done = c.builtin.is_some()
        && args.iter().all(scalar_lit)
        && !VOLATILE.iter().any(|v| c.name.eq_ignore_ascii_case(v));
    let out = Expr::Call(Box::new(Call {
        name: c.name.clone(),
        builtin: c.builtin,
        args,
    }));
    if done { value_of(out) } else { out }
}

/// A copy of `e` with `TARGET.x` made `MY.x` (`Some("MY")`) or plain `x`
/// (`None`), as HTCondor's `RewriteAttrRefs` does.
fn rewrite_target(e: &Expr, to: Option<&str>) -> Expr {
    let r = |x: &Expr| rewrite_target(x, to);
    match e {
        Expr::Attr(a) => {
            let is_target = matches!(&a.base, Some(Expr::Attr(b)) if b.base.is_none() && b.name.key() == "target");
            let base = if is_target {
                to.map(Expr::attr)
            } else {
                a.base.as_ref().map(r)
            };
            Expr::Attr(Box::new(AttrRef {
                base,
                name: Name::new(a.name.as_str()),
                absolute: a.absolute,
            }))
        }
        Expr::Unary(op, x) => Expr::Unary(*op, Box::new(r(x))),
        Expr::Binary(op, b) => Expr::Binary(*op, Box::new((r(&b.0), r(&b.1)))),
        Expr::Cond(b) => Expr::Cond(Box::new((r(&b.0), r(&b.1), r(&b.2)))),
        Expr::Elvis(b) => Expr::Elvis(Box::new((r(&b.0), r(&b.1)))),
        Expr::Paren(x) => Expr::Paren(Box::new(r(x))),
        Expr::Index(b) => Expr::Index(Box::new((r(&b.0), r(&b.1)))),
        Expr::Call(c) => Expr::Call(Box::new(Call {
            name: c.name.clone(),
            builtin: c.builtin,
            args: c.args.iter().map(r).collect(),
        })),
        Expr::List(items) => Expr::List(items.iter().map(r).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::parse_ad;
    use crate::transform::{Macros, Transform};

    #[test]
    fn a_route_in_the_old_syntax() {
        let defaults =
            parse_ad("[ MaxIdleJobs = 10; set_Routed = true; copy_Cmd = \"orig_Cmd\" ]").unwrap();
        let entry = parse_ad(
            "[ Name = \"Site A\"; TargetUniverse = 9; GridResource = \"batch slurm\"; \
             Requirements = TARGET.Owner == \"alice\"; MaxJobs = 5; delete_RouteMe = true; \
             set_Queue = \"short\"; eval_set_RequestMemory = MaxJobs * 100; \
             JobFailureTest = TARGET.ExitCode != 0 ]",
        )
        .unwrap();
        let text = convert_old_route(Some(&defaults), &entry).unwrap();
        assert_eq!(
            text,
            "# autoconversion of route 'Site A' from old route syntax\n\
             NAME Site A\n\
             UNIVERSE 9\n\
             REQUIREMENTS Owner == \"alice\"\n\
             \n\
             GridResource = \"batch slurm\"\n\
             JobFailureTest = MY.ExitCode != 0\n\
             MaxIdleJobs = 10\n\
             MaxJobs = 5\n\
             \n\
             # copy_* rules\n\
             COPY Cmd orig_Cmd\n\
             \n\
             # delete_* rules\n\
             DELETE RouteMe\n\
             \n\
             # set_* rules\n\
             SET Queue \"short\"\n\
             SET Routed true\n\
             \n\
             # eval_set_* rules\n\
             EVALSET RequestMemory 500"
        );
        // MaxJobs * 100 was flattened against the route, as HTCondor does.
        // The text is a working route.
        let t = Transform::parse(&text, "converted").unwrap();
        assert_eq!(t.name(), Some("Site A"));
        assert_eq!(t.universe(), Some(9));
        let cfg = crate::config::Config::defaults();
        assert_eq!(t.macro_value("MaxJobs", &cfg).as_deref(), Some("5"));
        let mut ad = parse_ad("[ Owner = \"alice\"; Cmd = \"/bin/x\"; RouteMe = true ]").unwrap();
        assert!(t.matches(&ad));
        t.apply(&mut ad, &mut Macros::new(), &cfg).unwrap();
        assert_eq!(
            crate::classad::unparse::ad_to_old(&ad, true),
            "Cmd = \"/bin/x\"\norig_Cmd = \"/bin/x\"\nOwner = \"alice\"\nQueue = \"short\"\n\
             RequestMemory = 500\nRouted = true\n"
        );
    }
}
