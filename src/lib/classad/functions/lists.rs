//! Lists: `member`, `identicalMember`, `anyCompare`, `allCompare`, `sum`,
//! `avg`, `min`, `max`.

use super::eval_args;
use crate::classad::ast::{BinOp, Expr};
use crate::classad::eval::{Evaluator, Scope, binary, identical};
use crate::classad::value::Value;

fn test_member(ev: &mut Evaluator, args: &[Expr], scope: &Scope, is: bool) -> Value {
    if args.len() != 2 {
        return Value::Error;
    }
    let v = eval_args(ev, args, scope);
    let (x, l) = (&v[0], &v[1]);
    if l.is_undefined() || (!is && x.is_undefined()) {
        return Value::Undefined;
    }
    let Value::List(list) = l else {
        return Value::Error;
    };
    if matches!(x, Value::List(_) | Value::Ad(_)) || (!is && x.is_error()) {
        return Value::Error;
    }
    for i in 0..list.items.len() {
        let item = ev.list_item(list, i, scope);
        let r = if is {
            identical(&item, x)
        } else {
            binary(BinOp::Eq, item, x.clone())
        };
        if matches!(r, Value::Bool(true)) {
            return Value::Bool(true);
        }
    }
    Value::Bool(false)
}

/// `member(x, list)`: whether some element `== x` (strings compare
/// case-insensitively; a type mismatch is simply not equal).
pub fn member(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    test_member(ev, args, scope, false)
}

/// `identicalMember(x, list)`: whether some element `=?= x`.
pub fn identical_member(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    test_member(ev, args, scope, true)
}

fn list_compare(ev: &mut Evaluator, args: &[Expr], scope: &Scope, all: bool) -> Value {
    if args.len() != 3 {
        return Value::Error;
    }
    let op = match ev.eval(&args[0], scope) {
        Value::Undefined => return Value::Undefined,
        Value::Str(s) => match &*s {
            "<" => BinOp::Lt,
            "<=" => BinOp::Le,
            "!=" => BinOp::Ne,
            "==" => BinOp::Eq,
            ">" => BinOp::Gt,
            ">=" => BinOp::Ge,
            "is" => BinOp::MetaEq,
            "isnt" => BinOp::MetaNe,
            _ => return Value::Error,
        },
        _ => return Value::Error,
    };
    let list = match ev.eval(&args[1], scope) {
        Value::Undefined => return Value::Undefined,
        Value::List(l) => l,
        _ => return Value::Error,
    };
    let x = ev.eval(&args[2], scope);
    for i in 0..list.items.len() {
        let item = ev.list_item(&list, i, scope);
        match binary(op, item, x.clone()) {
            Value::Bool(b) => {
                if b && !all {
                    return Value::Bool(true);
                }
                if !b && all {
                    return Value::Bool(false);
                }
            }
            // An undefined comparison ends both scans with false.
            Value::Undefined => return Value::Bool(false),
            _ => return Value::Error,
        }
    }
    Value::Bool(all)
}

/// `anyCompare(op, list, x)`: whether `element op x` holds for some
/// element; `op` is one of `< <= == != >= > is isnt`.
pub fn any_compare(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    list_compare(ev, args, scope, false)
}

/// `allCompare(op, list, x)`: whether it holds for every element (true for
/// `{}`).
pub fn all_compare(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    list_compare(ev, args, scope, true)
}

/// The numeric elements of the single list argument, undefined ones
/// dropped; `Err` holds the result for a bad argument or element.
fn numbers(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Result<Vec<Value>, Value> {
    let [a] = args else {
        return Err(Value::Error);
    };
    let list = match ev.eval(a, scope) {
        Value::Undefined => return Err(Value::Undefined),
        Value::List(l) => l,
        _ => return Err(Value::Error),
    };
    let mut out = Vec::new();
    for v in ev.list_values(&list, scope) {
        match v {
            Value::Undefined => {}
            Value::Int(_) | Value::Real(_) | Value::Bool(_) => out.push(v),
            _ => return Err(Value::Error),
        }
    }
    Ok(out)
}

fn total(items: &[Value]) -> Value {
    let mut it = items.iter();
    // HTCondor starts from 0 but takes the first element as it is, so
    // sum({true}) is true.
    let mut acc = it.next().cloned().unwrap_or(Value::Int(0));
    for v in it {
        acc = binary(BinOp::Add, acc, v.clone());
    }
    acc
}

/// `sum(list)`: undefined elements are skipped; `sum({})` is 0.
pub fn sum(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    numbers(ev, args, scope).map_or_else(|v| v, |items| total(&items))
}

/// `avg(list)`: the sum over the defined elements divided by their count,
/// as a real; 0 (an int) when there are none.
pub fn avg(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    match numbers(ev, args, scope) {
        Ok(items) if items.is_empty() => Value::Int(0),
        Ok(items) => binary(BinOp::Div, total(&items), Value::Real(items.len() as f64)),
        Err(v) => v,
    }
}

fn bound(ev: &mut Evaluator, args: &[Expr], scope: &Scope, op: BinOp) -> Value {
    let items = match numbers(ev, args, scope) {
        Ok(items) => items,
        Err(v) => return v,
    };
    let Some(first) = items.first() else {
        return Value::Undefined;
    };
    if items.len() == 1 {
        return first.clone();
    }
    let mut best = first.clone();
    for v in &items[1..] {
        if matches!(binary(op, v.clone(), best.clone()), Value::Bool(true)) {
            best = v.clone();
        }
    }
    // With two or more elements 24.0 returns a number: a real if any
    // element is real, else an int (so max({true, false}) is 1).
    if items.iter().any(|v| matches!(v, Value::Real(_))) {
        Value::Real(best.as_number().unwrap_or(0.0))
    } else {
        match best {
            Value::Bool(b) => Value::Int(b as i64),
            other => other,
        }
    }
}

/// `min(list)`: the least defined element; undefined for none.
pub fn min(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    bound(ev, args, scope, BinOp::Lt)
}

/// `max(list)`: the greatest defined element; undefined for none.
pub fn max(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    bound(ev, args, scope, BinOp::Gt)
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{check, check_in};

    #[test]
    fn membership() {
        check(&[
            ("member(\"B\", {\"a\", \"b\"})", "true"),
            ("identicalMember(\"B\", {\"a\", \"b\"})", "false"),
            ("identicalMember(\"b\", {\"a\", \"b\"})", "true"),
            ("member(1, {1.0})", "true"),
            ("identicalMember(1, {1.0})", "false"),
            ("member(1, {\"1\"})", "false"),
            ("member(undefined, {1})", "undefined"),
            ("identicalMember(undefined, {1, undefined})", "true"),
            ("identicalMember(undefined, {1})", "false"),
            ("member(error, {1})", "error"),
            ("identicalMember(error, {error})", "true"),
            ("member(1, undefined)", "undefined"),
            ("identicalMember(1, undefined)", "undefined"),
            ("member(1, 2)", "error"),
            ("member({1}, {1})", "error"),
            ("member([a=1], {1})", "error"),
            ("member(1, {undefined, 1})", "true"),
            ("member(1, {error, 1})", "true"),
            ("member(1, {x, 1})", "true"),
            ("member(true, {1})", "true"),
            ("member(1)", "error"),
            ("member(\"a\", \"a\")", "error"),
            ("member(1, {{1}, 1})", "true"),
            ("member(absTime(5,0), {absTime(5,60)})", "true"),
        ]);
    }

    #[test]
    fn compares() {
        check(&[
            ("anyCompare(\">\", {1, 5, 9}, 8)", "true"),
            ("anyCompare(\">\", {1, 5}, 8)", "false"),
            ("allCompare(\">\", {9, 10}, 8)", "true"),
            ("allCompare(\">\", {}, 8)", "true"),
            ("anyCompare(\">\", {}, 8)", "false"),
            ("allCompare(\"<\", {1, undefined}, 8)", "false"),
            ("anyCompare(\"<\", {undefined, 1}, 8)", "false"),
            ("anyCompare(\"<\", {1, undefined}, 0)", "false"),
            ("allCompare(\"<\", {undefined}, 8)", "false"),
            ("anyCompare(\"<\", {\"a\"}, 8)", "error"),
            ("anyCompare(\"<\", {1, \"a\"}, 0)", "error"),
            ("anyCompare(\"==\", {\"A\"}, \"a\")", "true"),
            ("anyCompare(\"is\", {\"A\"}, \"a\")", "false"),
            ("anyCompare(\"isnt\", {\"A\"}, \"a\")", "true"),
            ("anyCompare(\"=?=\", {\"A\"}, \"a\")", "error"),
            ("anyCompare(\"IS\", {\"A\"}, \"A\")", "error"),
            ("anyCompare(\">\", {1}, undefined)", "false"),
            ("allCompare(\">\", {1}, undefined)", "false"),
            ("anyCompare(\"is\", {undefined}, undefined)", "true"),
            ("anyCompare(undefined, {1}, 1)", "undefined"),
            ("anyCompare(1, {1}, 1)", "error"),
            ("anyCompare(\">\", undefined, 1)", "undefined"),
            ("anyCompare(\">\", 1, 1)", "error"),
            ("anyCompare(\">\", {1}, error)", "error"),
            ("anyCompare(\"<>\", {1}, 1)", "error"),
            ("anyCompare(\">\", {1})", "error"),
            ("allCompare(\"!=\", {1,2}, 3)", "true"),
            ("anyCompare(\"<=\", {5}, 5)", "true"),
            ("allCompare(\">=\", {5}, 5)", "true"),
        ]);
    }

    #[test]
    fn sums_and_bounds() {
        check(&[
            ("sum({})", "0"),
            ("sum({1,2,3})", "6"),
            ("sum({1,2.5})", "3.500000000000000E+00"),
            ("sum({undefined})", "0"),
            ("sum({1, undefined})", "1"),
            ("sum({1, \"a\"})", "error"),
            ("sum({1, true})", "2"),
            ("sum({true})", "true"),
            ("sum(undefined)", "undefined"),
            ("sum(1)", "error"),
            ("sum({error})", "error"),
            ("sum({9223372036854775807, 1})", "-9223372036854775808"),
            ("sum({1e308, 1e308})", "error"),
            ("sum({-1e308, -1e308})", "real(\"-INF\")"),
            ("sum({x})", "0"),
            ("sum({relTime(5)})", "error"),
            ("sum()", "error"),
            ("avg({})", "0"),
            ("avg({1,2})", "1.500000000000000E+00"),
            ("avg({1,2,4})", "2.333333333333333E+00"),
            ("avg({undefined})", "0"),
            ("avg({1, undefined, 3})", "2.000000000000000E+00"),
            ("avg({2.5})", "2.500000000000000E+00"),
            ("avg({1})", "1.000000000000000E+00"),
            ("avg({true, true})", "1.000000000000000E+00"),
            ("min({})", "undefined"),
            ("min({4, 2.5, 9})", "2.500000000000000E+00"),
            ("min({4, 2, 9})", "2"),
            ("min({undefined, 3})", "3"),
            ("min({undefined})", "undefined"),
            ("min({\"a\"})", "error"),
            ("min({1, 2.5})", "1.000000000000000E+00"),
            ("max({1, 2.5})", "2.500000000000000E+00"),
            ("max({2.5, 1})", "2.500000000000000E+00"),
            ("max({3, 2.5})", "3.000000000000000E+00"),
            ("max({})", "undefined"),
            ("max({1, true})", "1"),
            ("max({true})", "true"),
            ("max({true, false})", "1"),
            ("min({true, false})", "0"),
            ("min({true, 2.5})", "1.000000000000000E+00"),
            ("max({2, true})", "2"),
            ("min({2, true})", "1"),
            ("max({1, 1.0})", "1.000000000000000E+00"),
            ("min({real(\"NaN\"), 1})", "real(\"NaN\")"),
            ("min({1, real(\"NaN\")})", "1.000000000000000E+00"),
            ("min({relTime(5)})", "error"),
            ("max(undefined)", "undefined"),
            ("max(1)", "error"),
            ("min({1,2},{3})", "error"),
        ]);
    }

    #[test]
    fn list_elements_use_the_lists_own_scope() {
        // Differs from HTCondor 24.0, which evaluates the elements of a list
        // taken from a nested ad in the *caller's* scope in these functions
        // (there sum(N.d) is 0 and member(5, N.d) false, while N.d[0] is 5);
        // tern evaluates them where the list was written, as subscripting
        // does.
        check_in(
            "[N = [c = 5; d = {c}]]",
            &[
                ("N.d[0]", "5"),
                ("sum(N.d)", "5"),
                ("max(N.d)", "5"),
                ("member(5, N.d)", "true"),
                ("anyCompare(\"==\", N.d, 5)", "true"),
                ("join(\",\", N.d)", "\"5\""),
            ],
        );
    }
}
