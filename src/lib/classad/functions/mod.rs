//! Builtin functions.
//!
//! Each builtin receives its arguments unevaluated, so that lazy functions
//! (`ifThenElse`), source-inspecting ones (`unparse`, `unresolved`) and
//! context-evaluating ones (`countMatches`) can be written like the rest.
//! Names are case-insensitive; an unknown name parses but evaluates to
//! `error`.

use super::ast::Expr;
use super::eval::{Evaluator, Scope, Truth, truth};
use super::value::Value;

/// A builtin: unevaluated arguments in, value out.
pub type Builtin = fn(&mut Evaluator, &[Expr], &Scope) -> Value;

/// The builtin called `name` (any case).
pub fn lookup(name: &str) -> Option<Builtin> {
    let key = name.to_ascii_lowercase();
    TABLE
        .binary_search_by(|(n, _)| (*n).cmp(key.as_str()))
        .ok()
        .map(|i| TABLE[i].1)
}

/// Every builtin, sorted by lower-case name.
static TABLE: &[(&str, Builtin)] = &[("ifthenelse", if_then_else)];

fn if_then_else(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    if args.len() != 3 {
        return Value::Error;
    }
    match truth(&ev.eval(&args[0], scope)) {
        Truth::True => ev.eval(&args[1], scope),
        Truth::False => ev.eval(&args[2], scope),
        Truth::Undefined => Value::Undefined,
        Truth::Error => Value::Error,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn table_is_sorted_and_lower_case() {
        for w in super::TABLE.windows(2) {
            assert!(w[0].0 < w[1].0, "{} before {}", w[0].0, w[1].0);
        }
        for (n, _) in super::TABLE {
            assert_eq!(*n, n.to_ascii_lowercase());
        }
    }
}
