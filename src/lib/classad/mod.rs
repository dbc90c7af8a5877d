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

/// Evaluates the attribute `name` of `ad`; `undefined` when it is missing.
pub fn eval_attr(ad: &Rc<ClassAd>, name: &str) -> Value {
    let scope = Scope::root(ad.clone());
    let mut ev = Evaluator::new();
    ev.select(Value::Ad(scope.clone()), &name.to_ascii_lowercase(), &scope)
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
