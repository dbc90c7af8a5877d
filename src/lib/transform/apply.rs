//! Running a [`Transform`] against an ad (`TransformClassAd` and
//! `ParseRulesCallback` of `xform_utils.cpp`): statements top to bottom,
//! `if` conditions tested with the macros in force, the rest of each command
//! line `$()`-expanded before it is read. A failure inside one command (an
//! expression that does not parse, an invalid new name) is a warning and the
//! transform goes on, as in HTCondor; a broken `if` condition or a `$()`
//! expansion that fails (where HTCondor aborts) stops it.

use std::collections::BTreeMap;
use std::rc::Rc;

use crate::classad::unparse::{self, Syntax};
use crate::classad::{ClassAd, Evaluator, Expr, Scope, Value, parser};
use crate::config::macros::{Expander, MacroSource};
use crate::config::{CondStack, Config, condition};

use super::parse::{Command, Kind, Op, Target, Transform};
use super::{Macros, TransformError};

/// Where `$()` looks, in order: the transform's macros, `MY.attr` in the ad,
/// then the configuration.
pub(crate) struct View<'a> {
    pub macros: &'a Macros,
    pub ad: &'a ClassAd,
    pub cfg: &'a Config,
}

impl MacroSource for View<'_> {
    fn raw(&self, name: &str) -> Option<String> {
        if let Some(v) = self.macros.get(name) {
            return Some(v);
        }
        if let Some(attr) = name
            .get(..3)
            .filter(|p| p.eq_ignore_ascii_case("my."))
            .map(|_| &name[3..])
        {
            // The attribute as written, a string without its quotes; a `$`
            // in it is literal, not a macro reference.
            return self.ad.get(attr).map(|e| {
                let text = match e.literal_value() {
                    Some(Value::Str(s)) => s.to_string(),
                    _ => unparse::unparse_old(e),
                };
                text.replace('$', "$(DOLLAR)")
            });
        }
        self.cfg.raw(name).or_else(|| os_macro(name, self.cfg))
    }
    fn env(&self, var: &str) -> Option<String> {
        self.cfg.env(var)
    }
}

/// `OPSYSANDVER`, `OPSYSMAJORVER`, `OPSYSVER` and `OPSYSNAME` when the
/// configuration does not set them: HTCondor's transforms have them as
/// default macros (`XFormMacroDefaults`), from the operating system.
fn os_macro(name: &str, cfg: &Config) -> Option<String> {
    static OS: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();
    let key = name.to_ascii_lowercase();
    OS.get_or_init(|| crate::submit::os_release(cfg))
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.clone())
}

/// HTCondor's `IsValidAttrName`: a letter or `_`, then letters, digits and
/// `_`.
pub fn valid_attr_name(name: &str) -> bool {
    let mut c = name.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// `IsBooleanValueEquiv`: true, or a non-zero number.
fn is_true_equiv(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::Int(i) => *i != 0,
        Value::Real(r) => *r != 0.0,
        _ => false,
    }
}

/// Evaluates `e` with `ad` as MY.
fn eval(ad: &ClassAd, e: &Expr) -> Value {
    Evaluator::new().eval(e, &Scope::root(Rc::new(ad.clone())))
}

/// The value as an expression to store (`XFormCopyValueToTree`): lists and
/// nested ads are copied whole, everything else becomes a literal.
fn value_to_expr(v: Value) -> Expr {
    match v {
        Value::List(l) => Expr::List(l.items),
        Value::Ad(scope) => Expr::Ad(scope.ad().clone()),
        other => Expr::Lit(other),
    }
}

/// `XFormValueToString`: a string without quotes, anything else in old
/// ClassAd syntax.
fn value_text(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        other => {
            let mut out = String::new();
            unparse::write_value(&mut out, other, Syntax::Old);
            out
        }
    }
}

impl Transform {
    /// Whether the transform applies to `ad`: no `REQUIREMENTS`, or one that
    /// evaluates (against the untransformed ad) to true or a non-zero
    /// number. Undefined, error and other values do not match.
    pub fn matches(&self, ad: &ClassAd) -> bool {
        match &self.requirements {
            None => true,
            Some((_, e)) => is_true_equiv(&eval(ad, e)),
        }
    }

    /// [`Transform::matches`] for an ad already shared, without the copy
    /// evaluation otherwise needs (a routing pass tests every candidate
    /// against every route).
    pub fn matches_shared(&self, ad: &Rc<ClassAd>) -> bool {
        match &self.requirements {
            None => true,
            Some((_, e)) => is_true_equiv(&Evaluator::new().eval(e, &Scope::root(ad.clone()))),
        }
    }

    /// The value of a macro the transform assigns (route macros such as
    /// `MaxJobs` or `GridResource`), expanded with the transform's other
    /// macros and the configuration; `if` conditions are tested the same
    /// way, with no ad. `None` when the transform does not assign it.
    pub fn macro_value(&self, name: &str, cfg: &Config) -> Option<String> {
        let mut macros = Macros::new();
        let empty = ClassAd::new();
        let mut conds = CondStack::default();
        let mut assigned = false;
        for s in &self.stmts {
            let view = View {
                macros: &macros,
                ad: &empty,
                cfg,
            };
            let live = match step_condition(&s.kind, &mut conds, &view) {
                Ok(Some(live)) => live,
                Ok(None) => continue,
                // A condition that cannot be tested leaves the rest out, as
                // applying the transform would fail there.
                Err(_) => break,
            };
            if let (true, Kind::Assign { name: n, value }) = (live, &s.kind) {
                let v = self_reference(&macros, n, value);
                assigned |= n.eq_ignore_ascii_case(name);
                macros.set(n, &v);
            }
        }
        if !assigned {
            return None;
        }
        let view = View {
            macros: &macros,
            ad: &empty,
            cfg,
        };
        let raw = view.raw(name)?;
        Expander::new(&view)
            .expand(&raw)
            .ok()
            .map(|v| v.trim().to_string())
    }

    /// Applies the statements top to bottom to `ad`. `macros` carries
    /// variables from one transform to the next for the same ad (pre-route,
    /// route, post-route). Returns the warnings of commands that did
    /// nothing because of a problem (each names the line); an `if` whose
    /// condition cannot be tested, or a command line whose `$()` expansion
    /// fails, is an error and leaves `ad` as far as the transform got.
    pub fn apply(
        &self,
        ad: &mut ClassAd,
        macros: &mut Macros,
        cfg: &Config,
    ) -> Result<Vec<String>, TransformError> {
        let mut warnings = Vec::new();
        let mut conds = CondStack::default();
        for s in &self.stmts {
            let view = View { macros, ad, cfg };
            let live = step_condition(&s.kind, &mut conds, &view)
                .map_err(|m| TransformError::new(&self.origin, s.line, m))?;
            if live != Some(true) {
                continue;
            }
            match &s.kind {
                Kind::Assign { name, value } => {
                    let v = self_reference(macros, name, value);
                    macros.set(name, &v);
                }
                Kind::Cmd(c) => {
                    let rest = expand_rest(c, &View { macros, ad, cfg })
                        .map_err(|m| TransformError::new(&self.origin, s.line, m))?;
                    if let Err(m) = run_command(c, rest, ad, macros) {
                        warnings.push(format!("{}, line {}: {m}", self.origin, s.line));
                    }
                }
                _ => {}
            }
        }
        Ok(warnings)
    }
}

/// Advances the `if` state over one statement. `Some(live)` for an ordinary
/// statement (whether it runs), `None` for a conditional line.
fn step_condition(
    kind: &Kind,
    conds: &mut CondStack,
    view: &View<'_>,
) -> Result<Option<bool>, String> {
    match kind {
        Kind::If(c) => {
            let v = if conds.active() {
                transform_condition(c, view)?
            } else {
                false
            };
            conds.push_if(v);
        }
        Kind::Elif(c) => {
            let v = if conds.elif_needs_test() == Some(true) {
                transform_condition(c, view)?
            } else {
                false
            };
            conds.elif(v)?;
        }
        Kind::Else => conds.else_()?,
        Kind::Endif => conds.endif()?,
        _ => return Ok(Some(conds.active())),
    }
    Ok(None)
}

/// An `if` or `elif` condition of a transform: what a configuration file
/// allows (`defined`, `version`, a boolean or number, possibly from `$()`),
/// or else, as `Evaluate_config_if` does when it has an ad, a ClassAd
/// expression (after `$()` expansion, an optional leading `!` apart)
/// evaluated against the ad, whose value must be a boolean or a number
/// (`if $(MY.RequestCpus) > 1`, `if JobUniverse == 5`). A bare name is not
/// such an expression, as in HTCondor.
fn transform_condition(c: &str, view: &View<'_>) -> Result<bool, String> {
    let err = match condition(c, view) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    let Ok(text) = Expander::new(view).expand(c) else {
        return Err(err);
    };
    let text = text.trim();
    let (neg, body) = match text.strip_prefix('!') {
        Some(r) => (true, r.trim_start()),
        None => (false, text),
    };
    let bare_name = body
        .chars()
        .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '_' | '.' | '/'));
    if bare_name {
        return Err(err);
    }
    let Ok(e) = parser::parse_expr(body) else {
        return Err(err);
    };
    match eval(view.ad, &e) {
        v @ (Value::Bool(_) | Value::Int(_) | Value::Real(_)) => Ok(is_true_equiv(&v) != neg),
        other => Err(format!(
            "bad 'if' condition '{}': evaluated against the ad it is {}, not a boolean \
             or a number",
            c.trim(),
            value_text(&other)
        )),
    }
}

/// `A = $(A) more`: the macro's own reference is replaced by its current
/// value now, as the submit language does, so that the definition does not
/// refer to itself.
fn self_reference(macros: &Macros, name: &str, value: &str) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(p) = rest.find("$(") {
        out.push_str(&rest[..p]);
        let after = &rest[p + 2..];
        let Some(end) = after.find(')') else {
            out.push_str(&rest[p..]);
            return out;
        };
        let inner = &after[..end];
        let (n, d) = match inner.find(':') {
            Some(c) => (&inner[..c], Some(&inner[c + 1..])),
            None => (inner, None),
        };
        if n.trim().eq_ignore_ascii_case(name) {
            match (macros.get(name), d) {
                (Some(c), _) => out.push_str(&c),
                (None, Some(d)) => out.push_str(d),
                (None, None) => {}
            }
        } else {
            out.push_str("$(");
            out.push_str(inner);
            out.push(')');
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The rest of a command line, `$()`-expanded and trimmed (empty for
/// `DELETE`). An expansion that fails (`$INT` of a non-integer, a `$CHOICE`
/// index out of range, ...) is an error that stops the transform: HTCondor
/// aborts there (`EXCEPT` in `expand_macro`).
fn expand_rest(c: &Command, view: &View<'_>) -> Result<String, String> {
    match &c.rest {
        Some(r) => Expander::new(view)
            .expand(r)
            .map(|t| t.trim().to_string())
            .map_err(|e| format!("{}: {}", c.op.keyword(), e.0)),
        None => Ok(String::new()),
    }
}

/// Runs one command with the expanded `rest` of its line. An `Err` is a
/// warning: the command did nothing (or, for a regex, part of it).
fn run_command(
    c: &Command,
    rest: String,
    ad: &mut ClassAd,
    macros: &mut Macros,
) -> Result<(), String> {
    let kw = c.op.keyword();
    let name = match &c.target {
        Target::Name(n) => n.as_str(),
        Target::Regex { text, re } => return regex_command(c.op, text, re, &rest, ad),
    };
    match c.op {
        Op::Default | Op::Set | Op::EvalSet => {
            if c.op == Op::Default && ad.contains(name) {
                return Ok(());
            }
            if !valid_attr_name(name) {
                return Err(format!("{kw} {name}: not a valid attribute name"));
            }
            if rest.is_empty() {
                return Err(format!("{kw} {name} has no value"));
            }
            // SET and DEFAULT read old ClassAd syntax; EVALSET, like
            // EVALMACRO, goes through ClassAd::EvaluateExpr, which reads new
            // syntax (so `"\\"` is one backslash there).
            let parsed = if c.op == Op::EvalSet {
                parser::parse_expr(&rest)
            } else {
                parser::parse_expr_old(&rest)
            };
            let e = parsed.map_err(|e| format!("{kw} {name} invalid expression : {rest} ({e})"))?;
            let e = if c.op == Op::EvalSet {
                value_to_expr(eval(ad, &e))
            } else {
                e
            };
            ad.insert(name, e);
        }
        Op::EvalMacro => {
            if rest.is_empty() {
                return Err(format!("EVALMACRO {name} has no value"));
            }
            let e = parser::parse_expr(&rest)
                .map_err(|e| format!("EVALMACRO {name} could not evaluate : {rest} ({e})"))?;
            let v = value_text(&eval(ad, &e));
            // The value is literal text: a `$` in it is not a reference.
            macros.set(name, &v.replace('$', "$(DOLLAR)"));
        }
        Op::Copy => copy_attr(ad, name, &rest, kw)?,
        Op::Rename => rename_attr(ad, name, &rest)?,
        Op::Delete => {
            ad.remove(name);
        }
    }
    Ok(())
}

/// `COPY a b`: nothing when `a` is missing.
fn copy_attr(ad: &mut ClassAd, from: &str, to: &str, kw: &str) -> Result<(), String> {
    if !valid_attr_name(to) {
        return Err(format!("{kw} {from} new name {to} is not valid"));
    }
    if let Some(e) = ad.get(from).cloned() {
        ad.insert(to, e);
    }
    Ok(())
}

/// `RENAME a b`: the value moves to the new name, spelled as given.
fn rename_attr(ad: &mut ClassAd, from: &str, to: &str) -> Result<(), String> {
    if !valid_attr_name(to) {
        return Err(format!("RENAME {from} new name {to} is not valid"));
    }
    if let Some(e) = ad.remove(from) {
        ad.remove(to);
        ad.insert(to, e);
    }
    Ok(())
}

/// `COPY`, `RENAME` or `DELETE` with a regex (`DoRegexAttrOp`): every name
/// that matches is collected with its new name first, then the operation is
/// applied in sorted name order.
fn regex_command(
    op: Op,
    text: &str,
    re: &fancy_regex::Regex,
    pattern: &str,
    ad: &mut ClassAd,
) -> Result<(), String> {
    let mut matched: BTreeMap<String, String> = BTreeMap::new();
    for (name, _) in ad.iter() {
        let caps = re
            .captures(name)
            .map_err(|e| format!("{} /{text}/: {e}", op.keyword()))?;
        let Some(caps) = caps else { continue };
        let new = if op == Op::Delete {
            String::new()
        } else {
            substitute(pattern, &caps)
        };
        matched.insert(name.to_string(), new);
    }
    let mut problems = Vec::new();
    for (name, new) in matched {
        let r = match op {
            Op::Delete => {
                ad.remove(&name);
                Ok(())
            }
            Op::Rename => rename_attr(ad, &name, &new),
            _ => copy_attr(ad, &name, &new, "COPY"),
        };
        if let Err(m) = r {
            problems.push(m);
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// `append_substituted_regex`: `\0` … `\9` in `pattern` become the whole
/// match and its groups; an index past the last group that took part in
/// the match (PCRE's match count) is left as written.
fn substitute(pattern: &str, caps: &fancy_regex::Captures<'_, str>) -> String {
    // PCRE's count: one more than the highest group that matched.
    let count = (0..caps.len())
        .rev()
        .find(|&i| caps.get(i).is_some())
        .map_or(0, |i| i + 1);
    let b = pattern.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    let mut last = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() && b[i + 1].is_ascii_digit() {
            let ix = (b[i + 1] - b'0') as usize;
            if ix < count {
                out.push_str(&pattern[last..i]);
                if let Some(m) = caps.get(ix) {
                    out.push_str(m.as_str());
                }
                i += 2;
                last = i;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&pattern[last..]);
    out
}
