//! The ClassAd language, complete and HTCondor-compatible.
//!
//! Pipeline: [`lexer`] -> [`parser`] -> [`ast::Expr`] -> [`eval`] -> [`value::Value`],
//! printed back by [`unparse`] (new and old syntax) and [`json`]. Ads come in
//! three forms: new syntax (`[a = 1; b = "x"]`), old syntax (one `Name = expr`
//! per line, as `condor_q -long` prints them; see [`old`]) and HTCondor's JSON.
//! [`matching`] puts two ads into a match. The module knows nothing of the
//! rest of tern, so it could be its own crate.

pub mod ad;
pub mod ast;
pub mod eval;
pub mod functions;
pub mod json;
pub mod lexer;
pub mod matching;
pub mod old;
pub mod operators;
pub mod parser;
pub mod unparse;
pub mod value;

use std::rc::Rc;

pub use ad::ClassAd;
pub use ast::Expr;
pub use eval::{Evaluator, MatchContext, Scope};
pub use parser::{parse_ad, parse_ads, parse_expr};
pub use value::Value;

/// A syntax error with its 1-based line and column.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}, column {col}: {msg}")]
pub struct ParseError {
    pub line: u32,
    pub col: u32,
    pub msg: String,
}

/// Evaluates `e` in the scope of `ad` (or of no ad).
pub fn eval_in(ad: &Rc<ClassAd>, e: &Expr) -> Value {
    Evaluator::new().eval(e, &Scope::root(ad.clone()))
}

/// Evaluates `name` as an expression would name it from inside `ad`
/// (special names such as `MY` included); `undefined` when it is missing.
/// [`ClassAd::eval`] reads a plain attribute for less.
pub fn eval_attr(ad: &Rc<ClassAd>, name: &str) -> Value {
    let scope = Scope::root(ad.clone());
    let mut ev = Evaluator::new();
    ev.select(Value::Ad(scope.clone()), &name.to_ascii_lowercase(), &scope)
}

/// Typed readers: an attribute evaluated in its own ad (MY is the ad, no
/// TARGET), as HTCondor's `EvaluateAttrInt`/`EvaluateAttrString`/... read
/// it. A missing attribute, or a value of another type, is `None`.
impl ClassAd {
    /// The value of `name`; `undefined` when it is missing.
    pub fn eval(self: &Rc<Self>, name: &str) -> Value {
        match self.get(name) {
            Some(e) => eval_in(self, e),
            None => Value::Undefined,
        }
    }

    /// An integer, or a real truncated toward zero (as `EvaluateAttrInt`
    /// on a number). A boolean is not a number here.
    pub fn eval_int(self: &Rc<Self>, name: &str) -> Option<i64> {
        match self.eval(name) {
            Value::Int(i) => Some(i),
            Value::Real(r) => Some(r as i64),
            _ => None,
        }
    }

    /// An integer or a real, as a real.
    pub fn eval_real(self: &Rc<Self>, name: &str) -> Option<f64> {
        match self.eval(name) {
            Value::Int(i) => Some(i as f64),
            Value::Real(r) => Some(r),
            _ => None,
        }
    }

    /// A string.
    pub fn eval_str(self: &Rc<Self>, name: &str) -> Option<String> {
        match self.eval(name) {
            Value::Str(s) => Some(s.to_string()),
            _ => None,
        }
    }

    /// A boolean. Numbers are not booleans here.
    pub fn eval_bool(self: &Rc<Self>, name: &str) -> Option<bool> {
        match self.eval(name) {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }
}

/// Reads ads in any of the three forms, telling them apart by their first
/// character: `[` followed by `{` or `]` is a JSON array, `{` a JSON object,
/// `[` a new-syntax ad, anything else old syntax.
pub fn parse_ads_any(text: &str) -> Result<Vec<ClassAd>, ParseError> {
    let t = text.trim_start();
    if t.starts_with('{') {
        return json::parse_json_ads(text);
    }
    if let Some(rest) = t.strip_prefix('[') {
        let r = rest.trim_start();
        if r.starts_with('{') || (r.starts_with(']') && r[1..].trim().is_empty()) {
            return json::parse_json_ads(text);
        }
        return parse_ads(text);
    }
    old::parse_old_ads(text)
}
#[cfg(test)]
mod tests;
