//! The one-line-per-case test DSL for builtins: an expression (optionally
//! inside an ad) and the value `classad_eval` prints for it.

use std::rc::Rc;

use crate::classad::unparse::value_to_string;
use crate::classad::{Evaluator, Scope, parse_ad, parse_expr};

/// Evaluates `expr` outside any ad and prints the value in new syntax.
pub fn ev(expr: &str) -> String {
    ev_in("[]", expr)
}

/// Evaluates `expr` inside the new-syntax ad `ad`.
pub fn ev_in(ad: &str, expr: &str) -> String {
    let e = parse_expr(expr).unwrap_or_else(|err| panic!("{expr}: {err}"));
    let ad = parse_ad(ad).unwrap_or_else(|err| panic!("{ad}: {err}"));
    value_to_string(&Evaluator::new().eval(&e, &Scope::root(Rc::new(ad))))
}

/// Checks each `(expression, expected)` pair, reporting every mismatch.
pub fn check(cases: &[(&str, &str)]) {
    check_in("[]", cases)
}

/// Like [`check`], inside the ad `ad`.
pub fn check_in(ad: &str, cases: &[(&str, &str)]) {
    let bad: Vec<String> = cases
        .iter()
        .filter_map(|(e, want)| {
            let got = ev_in(ad, e);
            (got != *want).then(|| format!("{e}\n    want {want}\n    got  {got}"))
        })
        .collect();
    assert!(bad.is_empty(), "in {ad}:\n{}", bad.join("\n"));
}
