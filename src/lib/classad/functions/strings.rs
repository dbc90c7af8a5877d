//! Strings: `strcat`, `join`, `substr`, `strcmp`, `stricmp`, `toUpper`,
//! `toLower`, `size`, `split`, `splitUserName`, `splitSlotName` and the
//! version comparisons. Like HTCondor, they work on bytes: `size("é")` is
//! 2, and a cut through a UTF-8 sequence becomes U+FFFD.

use std::cmp::Ordering;

use super::{bytes_value, eval_args, is_c_space, string_of, to_str_value};
use crate::classad::ast::Expr;
use crate::classad::eval::{Evaluator, Scope};
use crate::classad::value::Value;

/// `strcat(a, ...)`: the `string()` of each argument, concatenated. The
/// first undefined argument makes the result undefined, the first error
/// makes it error.
pub fn strcat(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    let mut out = String::new();
    for a in args {
        match to_str_value(&ev.eval(a, scope)) {
            Value::Str(s) => out.push_str(&s),
            Value::Undefined => return Value::Undefined,
            _ => return Value::Error,
        }
    }
    Value::string(out)
}

/// `join(sep, a, ...)`, `join(sep, list)`, `join(list)`: undefined items
/// are skipped (an undefined separator counts as `""`); the result is
/// undefined only when something was undefined and nothing was joined.
/// The separator goes between items only once the output is non-empty.
pub fn join(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    let mut values: Vec<Value> = Vec::new();
    let mut expanded = false;
    if (1..=2).contains(&args.len()) {
        let last = ev.eval(&args[args.len() - 1], scope);
        if let Value::List(l) = &last {
            let sep = if args.len() == 2 {
                ev.eval(&args[0], scope)
            } else {
                Value::str("")
            };
            values.push(sep);
            values.extend(ev.list_values(l, scope));
            expanded = true;
        } else if args.len() == 2 {
            values.push(ev.eval(&args[0], scope));
            values.push(last);
            expanded = true;
        } else {
            values.push(last);
            expanded = true;
        }
    }
    if !expanded {
        values = eval_args(ev, args, scope);
    }
    let mut sep: std::rc::Rc<str> = std::rc::Rc::from("");
    let mut out = String::new();
    let (mut undef, mut def) = (false, false);
    for (i, v) in values.iter().enumerate() {
        let s = match to_str_value(v) {
            Value::Str(s) => s,
            Value::Undefined => {
                undef = true;
                continue;
            }
            _ => return Value::Error,
        };
        if i == 0 {
            sep = s;
            continue;
        }
        if !out.is_empty() {
            out.push_str(&sep);
        }
        def = true;
        out.push_str(&s);
    }
    if undef && !def {
        return Value::Undefined;
    }
    Value::string(out)
}

/// `substr(s, offset[, length])`, Perl-like: a negative offset counts from
/// the end, a negative length drops that many bytes from the end, and
/// whatever falls outside the string is clipped. Offsets and lengths are C
/// `int`s, as in HTCondor.
pub fn substr(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    if !(2..=3).contains(&args.len()) {
        return Value::Error;
    }
    let v = eval_args(ev, args, scope);
    if v.iter().any(Value::is_undefined) {
        return Value::Undefined;
    }
    let (Value::Str(s), Value::Int(off)) = (&v[0], &v[1]) else {
        return Value::Error;
    };
    let len_arg = match v.get(2) {
        None => None,
        Some(Value::Int(l)) => Some(*l as i32 as i64),
        Some(_) => return Value::Error,
    };
    let bytes = s.as_bytes();
    let alen = bytes.len() as i64;
    let mut offset = *off as i32 as i64;
    if offset < 0 {
        offset = (alen + offset).max(0);
    } else if offset >= alen {
        offset = alen;
    }
    let mut len = len_arg.unwrap_or(0);
    if len <= 0 {
        len = (alen - offset + len).max(0);
    } else if len > alen - offset {
        len = alen - offset;
    }
    if len_arg == Some(0) {
        len = 0;
    }
    let start = offset as usize;
    bytes_value(&bytes[start..start + len as usize])
}

/// The two arguments of a string comparison as strings: `Err` carries the
/// result when one is undefined or cannot be converted.
fn two_strings(
    ev: &mut Evaluator,
    args: &[Expr],
    scope: &Scope,
) -> Result<(std::rc::Rc<str>, std::rc::Rc<str>), Value> {
    if args.len() != 2 {
        return Err(Value::Error);
    }
    let v = eval_args(ev, args, scope);
    if v.iter().any(Value::is_undefined) {
        return Err(Value::Undefined);
    }
    match (string_of(&v[0]), string_of(&v[1])) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => Err(Value::Error),
    }
}

fn ordering_value(o: Ordering) -> Value {
    Value::Int(match o {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    })
}

/// `strcmp(a, b)`: -1, 0 or 1, case-sensitive, after `string()`.
pub fn strcmp(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    match two_strings(ev, args, scope) {
        Ok((a, b)) => ordering_value(a.as_bytes().cmp(b.as_bytes())),
        Err(v) => v,
    }
}

/// `stricmp(a, b)`: like `strcmp`, ignoring ASCII case (`strcasecmp`).
pub fn stricmp(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    match two_strings(ev, args, scope) {
        Ok((a, b)) => ordering_value(crate::classad::eval::cmp_ignore_case(&a, &b)),
        Err(v) => v,
    }
}

fn change_case(ev: &mut Evaluator, args: &[Expr], scope: &Scope, upper: bool) -> Value {
    let [a] = args else {
        return Value::Error;
    };
    match to_str_value(&ev.eval(a, scope)) {
        Value::Str(s) => Value::string(if upper {
            s.to_ascii_uppercase()
        } else {
            s.to_ascii_lowercase()
        }),
        other => other,
    }
}

/// `toUpper(x)`: `string(x)` with ASCII letters upper-cased.
pub fn to_upper(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    change_case(ev, args, scope, true)
}

/// `toLower(x)`: `string(x)` with ASCII letters lower-cased.
pub fn to_lower(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    change_case(ev, args, scope, false)
}

/// `size(x)`: bytes of a string, elements of a list, attributes of an ad.
pub fn size(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    let [a] = args else {
        return Value::Error;
    };
    match ev.eval(a, scope) {
        Value::Undefined => Value::Undefined,
        Value::Str(s) => Value::Int(s.len() as i64),
        Value::List(l) => Value::Int(l.items.len() as i64),
        Value::Ad(f) => Value::Int(f.ad().len() as i64),
        _ => Value::Error,
    }
}

/// `split(s[, seps])`: fields between separator bytes (default `", \t"`).
/// Empty fields are dropped, except that a non-space separator repeated
/// with nothing (or only spaces) between yields one empty field, as in
/// HTCondor: `split("x,y,,z", ",")` is `{"x","y","","z"}`.
pub fn split(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    if !(1..=2).contains(&args.len()) {
        return Value::Error;
    }
    let v = eval_args(ev, args, scope);
    let Value::Str(s) = &v[0] else {
        return Value::Error;
    };
    let seps: &[u8] = match v.get(1) {
        None => b", \t",
        Some(Value::Str(p)) => p.as_bytes(),
        Some(_) => return Value::Error,
    };
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut last = 0;
    if !seps.is_empty() {
        let mut prev_sep: Option<u8> = None;
        for (ix, &c) in b.iter().enumerate() {
            if !seps.contains(&c) {
                continue;
            }
            if ix > last {
                out.push(bytes_value(&b[last..ix]));
            } else if prev_sep.is_some_and(|p| !is_c_space(p) && p == c) {
                out.push(Value::str(""));
            }
            if !is_c_space(c) {
                prev_sep = Some(c);
            }
            last = ix + 1;
        }
    }
    if b.len() > last {
        out.push(bytes_value(&b[last..]));
    }
    Value::list(out)
}

/// `splitUserName` / `splitSlotName`: the parts before and after the first
/// `@`; without one, `{n, ""}` for user names and `{"", n}` for slots.
fn split_at(ev: &mut Evaluator, args: &[Expr], scope: &Scope, slot: bool) -> Value {
    let [a] = args else {
        return Value::Error;
    };
    let Value::Str(s) = ev.eval(a, scope) else {
        return Value::Error;
    };
    let (first, second) = match s.split_once('@') {
        Some((x, y)) => (x, y),
        None if slot => ("", &*s),
        None => (&*s, ""),
    };
    Value::list(vec![Value::str(first), Value::str(second)])
}

pub fn split_user_name(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    split_at(ev, args, scope, false)
}

pub fn split_slot_name(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    split_at(ev, args, scope, true)
}

/// HTCondor's `natural_cmp` (after `strverscmp`): runs of digits compare
/// by value, fewer leading zeros first. The result is a byte or length
/// difference, not just its sign, and bytes are C's signed `char`s.
pub(super) fn natural_cmp(s1: &[u8], s2: &[u8]) -> i64 {
    let at = |s: &[u8], i: usize| -> u8 { s.get(i).copied().unwrap_or(0) };
    let sc = |c: u8| c as i8 as i64;
    let dig = |c: u8| c.is_ascii_digit();
    let mut i = 0;
    while at(s1, i) != 0 && at(s1, i) == at(s2, i) {
        i += 1;
    }
    let (c1, c2) = (at(s1, i), at(s2, i));
    if c1 == c2 {
        return 0;
    }
    let mut n = i;
    while n > 0 && dig(at(s1, n - 1)) {
        n -= 1;
    }
    // The digits leading up to the mismatch are shared by both strings.
    if n == i && (!dig(c1) || !dig(c2)) {
        return sc(c1) - sc(c2);
    }
    let zeros_end = |s: &[u8]| {
        let mut z = n;
        while at(s, z) == b'0' {
            z += 1;
        }
        // A final zero of the number is not a leading zero.
        if z > n && !dig(at(s, z)) {
            z -= 1;
        }
        z
    };
    let (z1, z2) = (zeros_end(s1), zeros_end(s2));
    if z1 != z2 {
        return z2 as i64 - z1 as i64;
    }
    if z1 > n {
        return sc(c1) - sc(c2);
    }
    let num_end = |s: &[u8]| {
        let mut e = z1;
        while dig(at(s, e)) {
            e += 1;
        }
        e
    };
    let (e1, e2) = (num_end(s1), num_end(s2));
    if e1 != e2 {
        e1 as i64 - e2 as i64
    } else {
        sc(c1) - sc(c2)
    }
}

/// The two arguments of a version comparison, compared: undefined if either
/// is undefined, error if either cannot become a string.
fn version_order(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Result<i64, Value> {
    let (a, b) = two_strings(ev, args, scope)?;
    Ok(natural_cmp(a.as_bytes(), b.as_bytes()))
}

/// `versioncmp(a, b)`: negative, zero or positive, by `natural_cmp`.
pub fn versioncmp(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    version_order(ev, args, scope).map_or_else(|v| v, Value::Int)
}

fn version_test(ev: &mut Evaluator, args: &[Expr], scope: &Scope, t: fn(i64) -> bool) -> Value {
    version_order(ev, args, scope).map_or_else(|v| v, |o| Value::Bool(t(o)))
}

pub fn version_gt(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    version_test(ev, args, scope, |o| o > 0)
}
pub fn version_ge(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    version_test(ev, args, scope, |o| o >= 0)
}
pub fn version_lt(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    version_test(ev, args, scope, |o| o < 0)
}
pub fn version_le(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    version_test(ev, args, scope, |o| o <= 0)
}
pub fn version_eq(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    version_test(ev, args, scope, |o| o == 0)
}

/// `VERSIONGE(a, b)` and every other spelling of the five case-sensitive
/// version tests but the exact one: HTCondor's `compareVersion` finds no
/// test by that name and gives error, but only after returning undefined
/// for an undefined argument.
pub fn version_misspelled(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    if args.len() != 2 {
        return Value::Error;
    }
    if eval_args(ev, args, scope).iter().any(Value::is_undefined) {
        Value::Undefined
    } else {
        Value::Error
    }
}

/// `version_in_range(v, lo, hi)`: `lo <= v <= hi` by `natural_cmp`. An
/// undefined bound gives undefined; an undefined `v` gives error.
pub fn version_in_range(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    if args.len() != 3 {
        return Value::Error;
    }
    let v = eval_args(ev, args, scope);
    if v[1].is_undefined() || v[2].is_undefined() {
        return Value::Undefined;
    }
    match (string_of(&v[0]), string_of(&v[1]), string_of(&v[2])) {
        (Some(t), Some(lo), Some(hi)) => Value::Bool(
            natural_cmp(lo.as_bytes(), t.as_bytes()) <= 0
                && natural_cmp(t.as_bytes(), hi.as_bytes()) <= 0,
        ),
        _ => Value::Error,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::check;

    #[test]
    fn strcat_and_join() {
        check(&[
            ("strcat()", "\"\""),
            ("strcat(\"a\")", "\"a\""),
            ("strcat(\"a\", nosuch)", "undefined"),
            ("strcat(nosuch, \"a\")", "undefined"),
            ("strcat(\"a\", error)", "error"),
            ("strcat(\"a\", {1,2})", "\"a{ 1,2 }\""),
            ("strcat(\"a\", [x=1])", "\"a[ x = 1 ]\""),
            ("strcat(true, false)", "\"truefalse\""),
            ("strcat(2.5)", "\"2.500000000000000E+00\""),
            ("strcat(absTime(0, 0))", "\"1970-01-01T00:00:00-00:00\""),
            ("strcat(relTime(5))", "\"05\""),
            ("strcat(\"x\", undefined, error)", "undefined"),
            ("strcat(\"x\", error, undefined)", "error"),
            (
                "strcat(\"n=\", 5, \" r=\", 2.5, \" b=\", true)",
                "\"n=5 r=2.500000000000000E+00 b=true\"",
            ),
            ("join(\",\",\"a\",undefined,\"b\")", "\"a,b\""),
            ("join(\",\", undefined)", "undefined"),
            ("join(undefined, \"a\", \"b\")", "\"ab\""),
            ("join(\",\")", "\"\""),
            ("join()", "\"\""),
            ("join({\"a\",\"b\"})", "\"ab\""),
            ("join(\",\", {\"a\", undefined, \"b\"})", "\"a,b\""),
            ("join(\",\", {})", "\"\""),
            ("join({})", "\"\""),
            ("join(1, {2,3})", "\"213\""),
            ("join(\",\", \"a\")", "\"a\""),
            ("join(\",\", {\"a\"}, \"b\")", "\"{ \\\"a\\\" },b\""),
            ("join({\"a\"}, \"b\")", "\"b\""),
            ("join(\",\", {{1},2})", "\"{ 1 },2\""),
            ("join(\",\", error)", "error"),
            ("join(\",\", \"a\", error)", "error"),
            (
                "join(\"-\", {\"x\", 1, 2.0})",
                "\"x-1-2.000000000000000E+00\"",
            ),
            ("join(undefined, {\"a\",\"b\"})", "\"ab\""),
            ("join(\",\", undefined, undefined)", "undefined"),
            ("join(\",\", \"a\", undefined)", "\"a\""),
            ("join(\",\", \"\", \"b\")", "\"b\""),
            ("join(\",\", \"a\", \"\")", "\"a,\""),
        ]);
    }

    #[test]
    fn substr() {
        check(&[
            ("substr(\"HTCondor\", 0, -2)", "\"HTCond\""),
            ("substr(\"HTCondor\", 20)", "\"\""),
            ("substr(\"HTCondor\", -3)", "\"dor\""),
            ("substr(\"HTCondor\", -30)", "\"HTCondor\""),
            ("substr(\"HTCondor\", -30, 2)", "\"HT\""),
            ("substr(\"HTCondor\", 2, 3)", "\"Con\""),
            ("substr(\"HTCondor\", 2, 0)", "\"\""),
            ("substr(\"HTCondor\", 2, 100)", "\"Condor\""),
            ("substr(\"HTCondor\", 2, -100)", "\"\""),
            ("substr(\"HTCondor\", 8)", "\"\""),
            ("substr(\"HTCondor\", 1.5)", "error"),
            ("substr(\"HTCondor\", true)", "error"),
            ("substr(5, 1)", "error"),
            ("substr(undefined, 1)", "undefined"),
            ("substr(\"abc\", undefined)", "undefined"),
            ("substr(\"abc\", 1, undefined)", "undefined"),
            ("substr(\"abc\", error)", "error"),
            ("substr(\"abc\")", "error"),
            ("substr(\"abc\", 1, 2, 3)", "error"),
            ("substr(\"abc\", 4294967297)", "\"bc\""),
            ("substr(\"abcdef\", 4294967298, 2)", "\"cd\""),
            ("substr(\"abc\", 1, 4294967296)", "\"\""),
            ("substr(\"abc\", -9223372036854775808)", "\"abc\""),
            (
                "substr(\"abc\", 9223372036854775807, -9223372036854775808)",
                "\"\"",
            ),
            // HTCondor returns the lone byte \303 here; a tern string is
            // UTF-8, so the cut character becomes U+FFFD.
            ("substr(\"h\\303\\251llo\", 1, 1)", "\"\\357\\277\\275\""),
            ("substr(\"h\\303\\251llo\", 3)", "\"llo\""),
        ]);
    }

    #[test]
    fn compare_and_case() {
        check(&[
            ("strcmp(\"abc\", \"abd\")", "-1"),
            ("strcmp(\"B\", \"a\")", "-1"),
            ("strcmp(\"a\", \"a\")", "0"),
            ("strcmp(1, \"1\")", "0"),
            ("strcmp(2.5, \"2.5\")", "1"),
            ("strcmp(undefined, \"a\")", "undefined"),
            ("strcmp(\"a\", error)", "error"),
            ("strcmp({}, \"a\")", "1"),
            ("strcmp(\"a\")", "error"),
            ("stricmp(\"ABC\", \"abc\")", "0"),
            ("stricmp(\"B\", \"a\")", "1"),
            ("stricmp(\"[\", \"a\")", "-1"),
            ("strcmp(\"[\", \"a\")", "-1"),
            ("toUpper(\"abc\")", "\"ABC\""),
            ("toupper(\"aBc1\")", "\"ABC1\""),
            ("toLower(42)", "\"42\""),
            ("toLower(undefined)", "undefined"),
            ("toLower(error)", "error"),
            ("toLower({1})", "\"{ 1 }\""),
            ("toLower(true)", "\"true\""),
            ("toUpper(2.5)", "\"2.500000000000000E+00\""),
            ("toUpper(\"\\303\\251\")", "\"\\303\\251\""),
            ("toUpper()", "error"),
        ]);
    }

    #[test]
    fn size() {
        check(&[
            ("size(\"abc\")", "3"),
            ("size(\"\")", "0"),
            ("size({1,2,3})", "3"),
            ("size({})", "0"),
            ("size([a=1;b=2])", "2"),
            ("size([])", "0"),
            ("size(12)", "error"),
            ("size(undefined)", "undefined"),
            ("size(error)", "error"),
            ("size(true)", "error"),
            ("size(\"h\\303\\251llo\")", "6"),
            ("size()", "error"),
            ("size(1,2)", "error"),
        ]);
    }

    #[test]
    fn split() {
        check(&[
            ("split(\"a  b\\tc\")", "{ \"a\",\"b\",\"c\" }"),
            ("split(\"x,y,,z\", \",\")", "{ \"x\",\"y\",\"\",\"z\" }"),
            ("split(\"a, b;c\", \";\")", "{ \"a, b\",\"c\" }"),
            ("split(\",a,,b,\")", "{ \"a\",\"\",\"b\" }"),
            ("split(\",,a\")", "{ \"\",\"a\" }"),
            ("split(\"a, ,b\")", "{ \"a\",\"\",\"b\" }"),
            ("split(\"a,;b\", \",;\")", "{ \"a\",\"b\" }"),
            ("split(\"\")", "{  }"),
            ("split(\"   \")", "{  }"),
            ("split(\"abc\", \"\")", "{ \"abc\" }"),
            ("split(undefined)", "error"),
            ("split(1)", "error"),
            ("split(\"a\", undefined)", "error"),
            ("split(\"a b\", 1)", "error"),
            ("split(\"a\", \"b\", \"c\")", "error"),
            ("splitUserName(\"bob@site\")", "{ \"bob\",\"site\" }"),
            ("splitUserName(\"bob\")", "{ \"bob\",\"\" }"),
            ("splitUserName(\"a@b@c\")", "{ \"a\",\"b@c\" }"),
            ("splitUserName(\"@\")", "{ \"\",\"\" }"),
            ("splitUserName(undefined)", "error"),
            ("splitUserName(1)", "error"),
            ("splitSlotName(\"slot1@host\")", "{ \"slot1\",\"host\" }"),
            ("splitSlotName(\"node7\")", "{ \"\",\"node7\" }"),
            ("splitSlotName()", "error"),
        ]);
    }

    #[test]
    fn versions() {
        check(&[
            ("versioncmp(\"8.9.10\", \"8.9.9\")", "1"),
            ("versioncmp(\"a\", \"c\")", "-2"),
            ("versioncmp(\"c\", \"a\")", "2"),
            ("versioncmp(\"1.10\", \"1.9\")", "1"),
            ("versioncmp(\"1.09\", \"1.9\")", "-1"),
            ("versioncmp(\"1.009\", \"1.09\")", "-1"),
            ("versioncmp(\"1.0\", \"1.00\")", "1"),
            ("versioncmp(\"abc\", \"abcd\")", "-100"),
            ("versioncmp(\"\", \"\")", "0"),
            ("versioncmp(1, \"1\")", "0"),
            ("versioncmp(undefined, \"1\")", "undefined"),
            ("versioncmp(error, \"1\")", "error"),
            ("versioncmp({}, \"a\")", "26"),
            ("versioncmp(\"\\303\\251\", \"e\")", "-162"),
            ("versioncmp(\"1\")", "error"),
            ("versionGT(\"8.10\", \"8.9\")", "true"),
            ("versionEQ(\"1.0\", \"1.0\")", "true"),
            ("versionLT(\"1.0\", \"1.0\")", "false"),
            ("versionLE(\"1.0\", \"1.0\")", "true"),
            ("versionGE(undefined, \"1\")", "undefined"),
            ("version_in_range(\"8.5\", \"8.0\", \"8.10\")", "true"),
            ("version_in_range(\"8.11\", \"8.0\", \"8.10\")", "false"),
            ("version_in_range(undefined, \"8.0\", \"8.10\")", "error"),
            (
                "version_in_range(\"8.5\", undefined, \"8.10\")",
                "undefined",
            ),
            ("version_in_range(\"8.5\", \"8.0\")", "error"),
        ]);
    }
}
