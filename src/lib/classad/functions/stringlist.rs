//! String lists: a string of items between delimiter characters, as in
//! `"a, b, c"`. `stringListSize/Sum/Avg/Min/Max/Member/IMember/
//! SubsetMatch/ISubsetMatch` and `stringListsIntersect`;
//! `stringList_regexpMember` is in `regex.rs`.

use std::collections::HashSet;

use super::{eval_args, f64_to_i64, is_c_space, strtod};
use crate::classad::ast::Expr;
use crate::classad::eval::{Evaluator, Scope};
use crate::classad::value::Value;

/// The items of `list` split at any byte of `delims`, each trimmed of
/// white space, empty ones dropped (HTCondor's `StringTokenIterator`).
/// An empty delimiter set makes the whole string one item. Like HTCondor
/// this works on bytes, so a multi-byte delimiter splits at each of its
/// bytes (a cut character becomes U+FFFD).
pub(super) fn tokens(list: &str, delims: &str) -> Vec<String> {
    let d = delims.as_bytes();
    list.as_bytes()
        .split(|c| d.contains(c))
        .map(|t| {
            let start = t.iter().position(|&c| !is_c_space(c)).unwrap_or(t.len());
            let end = t
                .iter()
                .rposition(|&c| !is_c_space(c))
                .map_or(start, |e| e + 1);
            &t[start..end.max(start)]
        })
        .filter(|t| !t.is_empty())
        .map(|t| String::from_utf8_lossy(t).into_owned())
        .collect()
}

/// The list string and delimiters of the size/sum family: both must be
/// strings (an undefined list is an error here).
fn list_and_delims(
    ev: &mut Evaluator,
    args: &[Expr],
    scope: &Scope,
) -> Option<(std::rc::Rc<str>, std::rc::Rc<str>)> {
    if !(1..=2).contains(&args.len()) {
        return None;
    }
    let v = eval_args(ev, args, scope);
    let Value::Str(list) = &v[0] else {
        return None;
    };
    let delims = match v.get(1) {
        None => std::rc::Rc::from(", "),
        Some(Value::Str(d)) => d.clone(),
        Some(_) => return None,
    };
    Some((list.clone(), delims))
}

/// `stringListSize(s[, delims])`: the number of non-empty items.
pub fn size(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    match list_and_delims(ev, args, scope) {
        Some((l, d)) => Value::Int(tokens(&l, &d).len() as i64),
        None => Value::Error,
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Summary {
    Sum,
    Avg,
    Min,
    Max,
}

/// `stringListSum/Avg/Min/Max`, as HTCondor computes them: each item is
/// read with `%lf`; the result is an int when every item is made only of
/// digits and signs (so `stringListAvg("1,2")` truncates to 1). Min starts
/// from `FLT_MAX` and max from `FLT_MIN` (the smallest positive float), so
/// `stringListMax("-5,-3")` is 0, as in HTCondor.
fn summarize(ev: &mut Evaluator, args: &[Expr], scope: &Scope, how: Summary) -> Value {
    let Some((list, delims)) = list_and_delims(ev, args, scope) else {
        return Value::Error;
    };
    let items = tokens(&list, &delims);
    if items.is_empty() {
        return match how {
            Summary::Sum | Summary::Avg => Value::Real(0.0),
            Summary::Min | Summary::Max => Value::Undefined,
        };
    }
    let mut acc = match how {
        Summary::Sum | Summary::Avg => 0.0,
        Summary::Min => f32::MAX as f64,
        Summary::Max => f32::MIN_POSITIVE as f64,
    };
    let mut is_real = false;
    for item in &items {
        let Some(x) = scanf_double(item) else {
            return Value::Error;
        };
        if !item
            .bytes()
            .all(|c| c == b'+' || c == b'-' || c.is_ascii_digit())
        {
            is_real = true;
        }
        acc = match how {
            Summary::Sum | Summary::Avg => x + acc,
            Summary::Min => {
                if x < acc {
                    x
                } else {
                    acc
                }
            }
            Summary::Max => {
                if x > acc {
                    x
                } else {
                    acc
                }
            }
        };
    }
    if how == Summary::Avg {
        acc /= items.len() as f64;
    }
    if is_real {
        Value::Real(acc)
    } else {
        Value::Int(f64_to_i64(acc))
    }
}

/// C's `sscanf(s, "%lf")`: like `strtod`, except that input it has to
/// give up on half-way (`0x` without digits, `infin`) is a failure rather
/// than a shorter number.
fn scanf_double(s: &str) -> Option<f64> {
    let (v, _) = strtod(s)?;
    let t = s.trim_start_matches(|c: char| c.is_ascii() && is_c_space(c as u8));
    let t = t.strip_prefix(['+', '-']).unwrap_or(t).as_bytes();
    let lower: Vec<u8> = t.iter().take(8).map(u8::to_ascii_lowercase).collect();
    if lower.starts_with(b"0x")
        && !t
            .get(2)
            .is_some_and(|c| c.is_ascii_hexdigit() || *c == b'.')
    {
        return None;
    }
    if lower.starts_with(b"infi") && !lower.starts_with(b"infinity") {
        return None;
    }
    Some(v)
}

pub fn sum(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    summarize(ev, args, scope, Summary::Sum)
}
pub fn avg(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    summarize(ev, args, scope, Summary::Avg)
}
pub fn min(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    summarize(ev, args, scope, Summary::Min)
}
pub fn max(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    summarize(ev, args, scope, Summary::Max)
}

/// The shared argument rules of the member and subset functions: each
/// argument a string or undefined (undefined counting as `""`), both
/// undefined giving undefined. Default delimiters are `", \t\r\n"`.
fn member_args(
    ev: &mut Evaluator,
    args: &[Expr],
    scope: &Scope,
) -> Result<(String, String, String), Value> {
    if !(2..=3).contains(&args.len()) {
        return Err(Value::Error);
    }
    let v = eval_args(ev, args, scope);
    let text = |v: &Value, dflt: &str| -> Option<String> {
        match v {
            Value::Str(s) => Some(s.to_string()),
            Value::Undefined => Some(dflt.to_string()),
            _ => None,
        }
    };
    let (Some(item), Some(list)) = (text(&v[0], ""), text(&v[1], "")) else {
        return Err(Value::Error);
    };
    let delims = match v.get(2) {
        None => ", \t\r\n".to_string(),
        Some(d) => text(d, ", \t\r\n").ok_or(Value::Error)?,
    };
    if v[0].is_undefined() && v[1].is_undefined() {
        return Err(Value::Undefined);
    }
    Ok((item, list, delims))
}

fn list_member(ev: &mut Evaluator, args: &[Expr], scope: &Scope, nocase: bool) -> Value {
    match member_args(ev, args, scope) {
        Ok((item, list, delims)) => Value::Bool(tokens(&list, &delims).iter().any(|t| {
            if nocase {
                t.eq_ignore_ascii_case(&item)
            } else {
                *t == item
            }
        })),
        Err(v) => v,
    }
}

/// `stringListMember(x, s[, delims])`: whether `x` is an item of `s`,
/// case-sensitively. An undefined list counts as empty.
pub fn member(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    list_member(ev, args, scope, false)
}

/// `stringListIMember`: like `stringListMember`, ignoring ASCII case.
pub fn imember(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    list_member(ev, args, scope, true)
}

fn list_subset(ev: &mut Evaluator, args: &[Expr], scope: &Scope, nocase: bool) -> Value {
    let (items, list, delims) = match member_args(ev, args, scope) {
        Ok(t) => t,
        Err(v) => return v,
    };
    // The empty string is always a subset.
    if items.is_empty() {
        return Value::Bool(true);
    }
    let fold = |s: &str| {
        if nocase {
            s.to_ascii_lowercase()
        } else {
            s.to_string()
        }
    };
    let set: HashSet<String> = tokens(&list, &delims).iter().map(|t| fold(t)).collect();
    let wanted = tokens(&items, &delims);
    // With no items at all (",") HTCondor answers false.
    Value::Bool(!wanted.is_empty() && wanted.iter().all(|t| set.contains(&fold(t))))
}

/// `stringListSubsetMatch(a, b[, delims])`: whether every item of `a` is an
/// item of `b`. An undefined `a` is a subset of anything; an undefined `b`
/// contains nothing.
pub fn subset_match(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    list_subset(ev, args, scope, false)
}

/// `stringListISubsetMatch`: like `stringListSubsetMatch`, ignoring case.
pub fn isubset_match(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    list_subset(ev, args, scope, true)
}

/// `stringListsIntersect(a, b[, delims])`: whether the lists share an item,
/// case-sensitively. Items are split at the delimiters (default `" ,"`)
/// but, unlike the other string-list functions, not trimmed.
pub fn intersect(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    if !(2..=3).contains(&args.len()) {
        return Value::Error;
    }
    let v = eval_args(ev, args, scope);
    if v.iter().any(Value::is_error) {
        return Value::Error;
    }
    if v.iter().any(Value::is_undefined) {
        return Value::Undefined;
    }
    let delims = match v.get(2) {
        None => " ,".to_string(),
        Some(Value::Str(d)) if d.is_empty() => " ,".to_string(),
        Some(Value::Str(d)) => d.to_string(),
        Some(_) => return Value::Error,
    };
    let (Value::Str(a), Value::Str(b)) = (&v[0], &v[1]) else {
        return Value::Error;
    };
    let d = delims.as_bytes();
    let split = |s: &str| -> Vec<String> {
        s.as_bytes()
            .split(|c| d.contains(c))
            .filter(|t| !t.is_empty())
            .map(|t| String::from_utf8_lossy(t).into_owned())
            .collect()
    };
    let set: HashSet<String> = split(b).into_iter().collect();
    Value::Bool(split(a).iter().any(|t| set.contains(t)))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::check;

    #[test]
    fn sizes_and_sums() {
        check(&[
            ("stringListSize(\"a,,b\")", "2"),
            ("stringListSize(\"\")", "0"),
            ("stringListSize(\"a b  c\")", "3"),
            ("stringListSize(\" a , b \")", "2"),
            ("stringListSize(\"a;b;c\", \";\")", "3"),
            ("stringListSize(\"a;b c\", \";\")", "2"),
            ("stringListSize(\"a; b ;c\", \";\")", "3"),
            ("stringListSize(\"a;b;c\", \"\")", "1"),
            ("stringListSize(\"a  b\", \" \")", "2"),
            ("stringListSize(undefined)", "error"),
            ("stringListSize(1)", "error"),
            ("stringListSize(\"a\", 1)", "error"),
            ("stringListSize(\"a\", undefined)", "error"),
            ("stringListSize(\"a\\tb\")", "1"),
            ("stringListSize()", "error"),
            ("stringListSum(\"1,2,3\")", "6"),
            ("stringListSum(\"1,2.5\")", "3.500000000000000E+00"),
            ("stringListSum(\"\")", "0.0"),
            ("stringListSum(\"a\")", "error"),
            ("stringListSum(\"1,a\")", "error"),
            ("stringListSum(\"1x\")", "1.000000000000000E+00"),
            ("stringListSum(\"0x10\")", "1.600000000000000E+01"),
            ("stringListSum(\"1e3\")", "1.000000000000000E+03"),
            ("stringListSum(\"-1,+2\")", "1"),
            ("stringListSum(\"1-2\")", "1"),
            ("stringListSum(\"--1\")", "error"),
            ("stringListSum(\"0x\")", "error"),
            ("stringListSum(\"0xg\")", "error"),
            ("stringListSum(\"-0x\")", "error"),
            ("stringListSum(\"0x.\")", "0.0"),
            ("stringListSum(\"0x.8\")", "5.000000000000000E-01"),
            ("stringListSum(\".\")", "error"),
            ("stringListSum(\"+.5\")", "5.000000000000000E-01"),
            ("stringListSum(\"in\")", "error"),
            ("stringListSum(\"infin\")", "error"),
            ("stringListSum(\"nanx\")", "real(\"NaN\")"),
            (
                "stringListSum(\"9223372036854775807\")",
                "-9223372036854775808",
            ),
            ("stringListSum(\"1e30\")", "1.000000000000000E+30"),
            ("stringListSum(\"inf\")", "real(\"INF\")"),
            ("stringListSum(\"nan\")", "real(\"NaN\")"),
            ("stringListSum(\" 1 , 2 \")", "3"),
            ("stringListSum(\"1;2\", \";\")", "3"),
            ("stringListSum(\"1; 2\", \";\")", "3"),
            ("stringListSum(\"1 ;2\", \";\")", "3"),
            ("stringListSum(undefined)", "error"),
            ("stringListAvg(\"1,2\")", "1"),
            ("stringListAvg(\"1.0,2\")", "1.500000000000000E+00"),
            ("stringListAvg(\"\")", "0.0"),
            ("stringListAvg(\"inf\")", "real(\"INF\")"),
            ("stringListMin(\"\")", "undefined"),
            ("stringListMax(\"\")", "undefined"),
            ("stringListMin(\"3,1,2\")", "1"),
            ("stringListMax(\"3,1,2\")", "3"),
            ("stringListMax(\"-5,-3\")", "0"),
            ("stringListMin(\"1e300\")", "3.402823466385289E+38"),
            ("stringListMax(\"-1\")", "0"),
            ("stringListMax(\"0.5\")", "5.000000000000000E-01"),
            ("stringListMin(\"5.5\")", "5.500000000000000E+00"),
            ("stringListMin(\"3,1.5\")", "1.500000000000000E+00"),
        ]);
    }

    #[test]
    fn members() {
        check(&[
            ("stringListMember(\"B\", \"a,b,c\")", "false"),
            ("stringListMember(\"b\", \"a,b,c\")", "true"),
            ("stringListMember(\"b\", \"a, b ,c\")", "true"),
            ("stringListMember(\"b\", \"a;b;c\", \";\")", "true"),
            ("stringListMember(\"b\", \"a; b ;c\", \";\")", "true"),
            ("stringListMember(\"b c\", \"a,b c\", \",\")", "true"),
            ("stringListMember(\"\", \"a,,b\")", "false"),
            ("stringListMember(\"\", \"\")", "false"),
            ("stringListMember(undefined, \"a\")", "false"),
            ("stringListMember(\"a\", undefined)", "false"),
            ("stringListMember(undefined, undefined)", "undefined"),
            ("stringListMember(1, \"1\")", "error"),
            ("stringListMember(\"1\", 1)", "error"),
            ("stringListMember(\"a\", \"a\", undefined)", "true"),
            ("stringListMember(\"a\", \"a\", 1)", "error"),
            ("stringListMember(\"a\", \"a\\tb\")", "true"),
            ("stringListMember(\"b\", \"a\\nb\")", "true"),
            ("stringListMember(\"b\", \"a\\tb\", \",\")", "false"),
            ("stringListMember(\"b\", \"a,b\", \"\")", "false"),
            ("stringListMember(error, \"a\")", "error"),
            ("stringListMember(\"a\")", "error"),
            ("stringListIMember(\"B\", \"a,b,c\")", "true"),
            ("stringListIMember(\"B\", undefined)", "false"),
            ("stringListIMember(undefined, \"b\")", "false"),
            ("stringListIMember(\"b\", \"a; B ;c\", \";\")", "true"),
        ]);
    }

    #[test]
    fn intersections_and_subsets() {
        check(&[
            ("stringListsIntersect(\"a,b\", \"b,c\")", "true"),
            ("stringListsIntersect(\"a,b\", \"B,c\")", "false"),
            ("stringListsIntersect(\"a,b\", \"c\")", "false"),
            ("stringListsIntersect(\"\", \"\")", "false"),
            ("stringListsIntersect(\"a\", undefined)", "undefined"),
            ("stringListsIntersect(undefined, \"a\")", "undefined"),
            ("stringListsIntersect(\"a;b\", \"b\", \";\")", "true"),
            ("stringListsIntersect(\"a; b\", \"b\", \";\")", "false"),
            ("stringListsIntersect(\"a;b\", \"b\", \"\")", "false"),
            ("stringListsIntersect(\"a\", \"a\", undefined)", "undefined"),
            ("stringListsIntersect(\"a\", \"a\", 1)", "error"),
            ("stringListsIntersect(1, \"a\")", "error"),
            ("stringListsIntersect(\"a\", error)", "error"),
            ("stringListsIntersect(\"a b\", \"b\")", "true"),
            ("stringListsIntersect(\"a\")", "error"),
            ("stringListSubsetMatch(\"a,b\", \"b,a,c\")", "true"),
            ("stringListSubsetMatch(\"a,d\", \"b,a,c\")", "false"),
            ("stringListSubsetMatch(\"\", \"b\")", "true"),
            ("stringListSubsetMatch(undefined, \"b\")", "true"),
            ("stringListSubsetMatch(\"a\", undefined)", "false"),
            ("stringListSubsetMatch(undefined, undefined)", "undefined"),
            ("stringListSubsetMatch(\"A\", \"a\")", "false"),
            ("stringListISubsetMatch(\"A\", \"a\")", "true"),
            ("stringListISubsetMatch(\"A,B\", \"b;a\", \";\")", "false"),
            ("stringListISubsetMatch(\"A;B\", \"b;a\", \";\")", "true"),
            ("stringListSubsetMatch(\"a\", \"\")", "false"),
            ("stringListSubsetMatch(\",\", \"\")", "false"),
            ("stringListSubsetMatch(\",\", \"b\")", "false"),
            ("stringListSubsetMatch(\" b \", \"b\")", "true"),
            ("stringListSubsetMatch(\"b\", \"a; b ;c\", \";\")", "true"),
            ("stringListISubsetMatch(\"b\", \"a; B ;c\", \";\")", "true"),
            ("stringListSubsetMatch(1, \"a\")", "error"),
            ("stringListSubsetMatch(\"a\", \"a\", undefined)", "true"),
        ]);
    }
}
