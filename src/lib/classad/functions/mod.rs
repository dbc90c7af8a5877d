//! Builtin functions.
//!
//! Each builtin receives its arguments unevaluated, so that lazy functions
//! (`ifThenElse`), source-inspecting ones (`unparse`, `unresolved`) and
//! context-evaluating ones (`countMatches`) can be written like the rest.
//! Names are case-insensitive; an unknown name parses but evaluates to
//! `error`.
//!
//! The functions live in one file per family; this module holds the name
//! table and the value conversions they share, which follow HTCondor's
//! `convertValueTo*Value` helpers (so `int("42xyz")` is 42 and
//! `strcat(2.5)` prints the real in `%1.15E` form).
//!
//! Every builtin returns a value for any input: where HTCondor's own
//! function would fail the whole evaluation (`random(0)`), tern gives
//! `error`.

mod condor;
mod control;
mod lists;
mod math;
mod regex;
mod stringlist;
mod strings;
mod time;
mod types;

#[cfg(test)]
mod testutil;

use std::rc::Rc;

use super::ast::Expr;
use super::eval::{Evaluator, Scope};
use super::unparse;
use super::value::Value;

/// A builtin: unevaluated arguments in, value out.
pub type Builtin = fn(&mut Evaluator, &[Expr], &Scope) -> Value;

/// The builtin called `name` (any case).
pub fn lookup(name: &str) -> Option<Builtin> {
    let key = name.to_ascii_lowercase();
    // HTCondor compares these five names case-sensitively inside the
    // function (`strcmp(name, "versionLE")`), so any other spelling finds
    // the function but falls through to its error branch, after the check
    // for undefined arguments.
    if let Some((_, exact)) = CASE_SENSITIVE.iter().find(|(k, _)| *k == key)
        && name != *exact
    {
        return Some(strings::version_misspelled);
    }
    TABLE
        .binary_search_by(|(n, _)| (*n).cmp(key.as_str()))
        .ok()
        .map(|i| TABLE[i].1)
}

/// Names HTCondor recognises in one spelling only.
const CASE_SENSITIVE: &[(&str, &str)] = &[
    ("versioneq", "versionEQ"),
    ("versionge", "versionGE"),
    ("versiongt", "versionGT"),
    ("versionle", "versionLE"),
    ("versionlt", "versionLT"),
];

/// Every builtin, sorted by lower-case name.
static TABLE: &[(&str, Builtin)] = &[
    ("abstime", time::abs_time),
    ("allcompare", lists::all_compare),
    ("anycompare", lists::any_compare),
    ("argstolist", condor::args_to_list),
    ("avg", lists::avg),
    ("bool", types::to_bool),
    ("ceil", math::ceiling),
    ("ceiling", math::ceiling),
    ("countmatches", condor::count_matches),
    ("currenttime", time::current_time),
    ("daytime", time::day_time),
    ("debug", control::debug),
    ("envv1tov2", condor::env_v1_to_v2),
    ("eval", control::eval),
    ("evalineachcontext", condor::eval_in_each_context),
    ("floor", math::floor),
    ("formattime", time::format_time),
    ("getdayofmonth", time::get_day_of_month),
    ("getdayofweek", time::get_day_of_week),
    ("getdayofyear", time::get_day_of_year),
    ("getdays", time::get_days),
    ("gethours", time::get_hours),
    ("getminutes", time::get_minutes),
    ("getmonth", time::get_month),
    ("getseconds", time::get_seconds),
    ("getyear", time::get_year),
    ("identicalmember", lists::identical_member),
    ("ifthenelse", control::if_then_else),
    ("int", types::to_int),
    ("interval", time::interval),
    ("isabstime", types::is_abstime),
    ("isboolean", types::is_boolean),
    ("isclassad", types::is_classad),
    ("iserror", types::is_error),
    ("isinteger", types::is_integer),
    ("islist", types::is_list),
    ("isreal", types::is_real),
    ("isreltime", types::is_reltime),
    ("isstring", types::is_string),
    ("isundefined", types::is_undefined),
    ("join", strings::join),
    ("listtoargs", condor::list_to_args),
    ("max", lists::max),
    ("member", lists::member),
    ("mergeenvironment", condor::merge_environment),
    ("min", lists::min),
    ("pow", math::pow),
    ("quantize", math::quantize),
    ("random", math::random),
    ("real", types::to_real),
    ("regexp", regex::regexp),
    ("regexpmember", regex::regexp_member),
    ("regexps", regex::regexps),
    ("reltime", time::rel_time),
    ("replace", regex::replace),
    ("replaceall", regex::replace_all),
    ("round", math::round),
    ("size", strings::size),
    ("split", strings::split),
    ("splitslotname", strings::split_slot_name),
    ("splittime", time::split_time),
    ("splitusername", strings::split_user_name),
    ("strcat", strings::strcat),
    ("strcmp", strings::strcmp),
    ("stricmp", strings::stricmp),
    ("string", types::to_string),
    ("stringlist_regexpmember", regex::string_list_regexp_member),
    ("stringlistavg", stringlist::avg),
    ("stringlistimember", stringlist::imember),
    ("stringlistisubsetmatch", stringlist::isubset_match),
    ("stringlistmax", stringlist::max),
    ("stringlistmember", stringlist::member),
    ("stringlistmin", stringlist::min),
    ("stringlistsintersect", stringlist::intersect),
    ("stringlistsize", stringlist::size),
    ("stringlistsubsetmatch", stringlist::subset_match),
    ("stringlistsum", stringlist::sum),
    ("substr", strings::substr),
    ("sum", lists::sum),
    ("time", time::time),
    ("timezoneoffset", time::time_zone_offset),
    ("tolower", strings::to_lower),
    ("toupper", strings::to_upper),
    ("unparse", control::unparse),
    ("unresolved", control::unresolved),
    ("userhome", condor::user_home),
    ("usermap", condor::user_map),
    ("version_in_range", strings::version_in_range),
    ("versioncmp", strings::versioncmp),
    ("versioneq", strings::version_eq),
    ("versionge", strings::version_ge),
    ("versiongt", strings::version_gt),
    ("versionle", strings::version_le),
    ("versionlt", strings::version_lt),
];

/// Evaluates every argument, left to right.
fn eval_args(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Vec<Value> {
    args.iter().map(|a| ev.eval(a, scope)).collect()
}

/// A string value from bytes that may have been cut inside a UTF-8
/// sequence (HTCondor works on bytes; a tern string is always UTF-8, so a
/// cut character becomes U+FFFD).
fn bytes_value(b: &[u8]) -> Value {
    Value::string(String::from_utf8_lossy(b).into_owned())
}

/// HTCondor's `convertValueToStringValue`: strings stay, undefined and
/// error stay, everything else is unparsed in new syntax (times without
/// their `absTime(...)` wrapper).
fn to_str_value(v: &Value) -> Value {
    match v {
        Value::Str(_) | Value::Undefined | Value::Error => v.clone(),
        Value::AbsTime(t) => Value::string(unparse::abstime_string(*t)),
        Value::RelTime(r) => Value::string(unparse::reltime_string(*r)),
        other => Value::string(unparse::value_to_string(other)),
    }
}

/// The string `to_str_value` makes, when it makes one.
fn string_of(v: &Value) -> Option<Rc<str>> {
    match to_str_value(v) {
        Value::Str(s) => Some(s),
        _ => None,
    }
}

/// HTCondor's `convertValueToRealValue`: `Real`, `Undefined` or `Error`.
/// A string is read with a `strtod` prefix parse; a relative time counts
/// its whole seconds.
fn to_real(v: &Value) -> Value {
    match v {
        Value::Int(i) => Value::Real(*i as f64),
        Value::Real(r) => Value::Real(*r),
        Value::Bool(b) => Value::Real(if *b { 1.0 } else { 0.0 }),
        Value::Str(s) => match strtod(s) {
            Some((r, _)) => Value::Real(r),
            None => Value::Error,
        },
        Value::AbsTime(t) => Value::Real(t.secs as f64),
        Value::RelTime(r) => Value::Real(f64_to_i64(*r) as f64),
        Value::Undefined => Value::Undefined,
        _ => Value::Error,
    }
}

/// HTCondor's `convertValueToIntegerValue`: `Int`, `Undefined` or
/// `Error`. Reals and strings (read as by `strtod`) are truncated the way
/// an x86 `(long long)` cast does it, so out-of-range values become
/// `i64::MIN`.
fn to_int(v: &Value) -> Value {
    match v {
        Value::Int(i) => Value::Int(*i),
        Value::Real(r) => Value::Int(f64_to_i64(*r)),
        Value::Bool(b) => Value::Int(*b as i64),
        Value::Str(s) => match strtod(s) {
            Some((r, _)) => Value::Int(f64_to_i64(r)),
            None => Value::Error,
        },
        Value::AbsTime(t) => Value::Int(t.secs),
        Value::RelTime(r) => Value::Int(f64_to_i64(*r)),
        Value::Undefined => Value::Undefined,
        _ => Value::Error,
    }
}

/// C's `(long long)x` as x86 computes it: truncation, and `i64::MIN` for
/// NaN and anything out of range.
fn f64_to_i64(x: f64) -> i64 {
    if x.is_nan() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

/// C's `(int)x` as x86 computes it: truncation, and `i32::MIN` for NaN and
/// anything out of range.
fn f64_to_i32(x: f64) -> i32 {
    if x.is_nan() || !(-2_147_483_648.0..2_147_483_648.0).contains(&x) {
        i32::MIN
    } else {
        x as i32
    }
}

/// C's `isspace` in the C locale.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// C's `strtod` on a prefix of `s`: the value and how many bytes were
/// read, or `None` when no number starts the string. Accepts leading
/// white space, a sign, decimal and hexadecimal (`0x1p3`) forms, `inf`,
/// `infinity` and `nan` (with an optional `(...)` tail).
fn strtod(s: &str) -> Option<(f64, usize)> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && is_c_space(b[i]) {
        i += 1;
    }
    let mut neg = false;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        neg = b[i] == b'-';
        i += 1;
    }
    let sign = |x: f64| if neg { -x } else { x };
    let rest = &b[i..];
    let starts =
        |p: &str| rest.len() >= p.len() && rest[..p.len()].eq_ignore_ascii_case(p.as_bytes());
    if starts("infinity") {
        return Some((sign(f64::INFINITY), i + 8));
    }
    if starts("inf") {
        return Some((sign(f64::INFINITY), i + 3));
    }
    if starts("nan") {
        let mut end = i + 3;
        if b.get(end) == Some(&b'(') {
            let mut j = end + 1;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            if b.get(j) == Some(&b')') {
                end = j + 1;
            }
        }
        return Some((f64::NAN, end));
    }
    if starts("0x") {
        if let Some((v, n)) = hex_float(&rest[2..]) {
            return Some((sign(v), i + 2 + n));
        }
        // "0x" with no hex digits reads as the number 0.
        return Some((sign(0.0), i + 1));
    }
    let start = i;
    let mut digits = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
        digits += 1;
    }
    if i < b.len() && b[i] == b'.' {
        let mut j = i + 1;
        let mut frac = 0;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
            frac += 1;
        }
        if digits + frac > 0 {
            i = j;
            digits += frac;
        }
    }
    if digits == 0 {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            i = j;
        }
    }
    let text = &s[start..i];
    let v: f64 = text.parse().ok().or_else(|| {
        // Rust refuses a bare trailing '.', which C accepts ("5.").
        text.trim_end_matches('.').parse().ok()
    })?;
    Some((sign(v), i))
}

/// The digits after `0x`: `h[.h][p[+-]d]`, or `None` without a hex digit.
fn hex_float(b: &[u8]) -> Option<(f64, usize)> {
    let mut i = 0;
    let mut mant = 0.0f64;
    let mut any = false;
    let mut exp: i64 = 0;
    while i < b.len() && b[i].is_ascii_hexdigit() {
        mant = mant * 16.0 + (b[i] as char).to_digit(16).unwrap_or(0) as f64;
        any = true;
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        let mut j = i + 1;
        let mut frac_any = false;
        while j < b.len() && b[j].is_ascii_hexdigit() {
            mant = mant * 16.0 + (b[j] as char).to_digit(16).unwrap_or(0) as f64;
            exp -= 4;
            frac_any = true;
            j += 1;
        }
        if any || frac_any {
            i = j;
            any = true;
        }
    }
    if !any {
        return None;
    }
    if i < b.len() && (b[i] == b'p' || b[i] == b'P') {
        let mut j = i + 1;
        let mut eneg = false;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            eneg = b[j] == b'-';
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            let mut e: i64 = 0;
            while j < b.len() && b[j].is_ascii_digit() {
                e = (e * 10 + (b[j] - b'0') as i64).min(100_000);
                j += 1;
            }
            exp += if eneg { -e } else { e };
            i = j;
        }
    }
    let v = if mant == 0.0 || !mant.is_finite() {
        mant
    } else {
        mant * 2f64.powi(exp.clamp(-100_000, 100_000) as i32)
    };
    Some((v, i))
}

#[cfg(test)]
mod tests {
    use super::testutil::{check, check_in};

    #[test]
    fn table_is_sorted_and_lower_case() {
        for w in super::TABLE.windows(2) {
            assert!(w[0].0 < w[1].0, "{} before {}", w[0].0, w[1].0);
        }
        for (n, _) in super::TABLE {
            assert_eq!(*n, n.to_ascii_lowercase());
        }
    }

    #[test]
    fn strtod_prefixes() {
        use super::strtod;
        assert_eq!(strtod("42xyz"), Some((42.0, 2)));
        assert_eq!(strtod("  -2.5e2z"), Some((-250.0, 8)));
        assert_eq!(strtod("1e"), Some((1.0, 1)));
        assert_eq!(strtod("5."), Some((5.0, 2)));
        assert_eq!(strtod(".5"), Some((0.5, 2)));
        assert_eq!(strtod("0x10"), Some((16.0, 4)));
        assert_eq!(strtod("0x1p3"), Some((8.0, 5)));
        assert_eq!(strtod(" -0x"), Some((-0.0, 3)));
        assert_eq!(strtod("Infinity"), Some((f64::INFINITY, 8)));
        assert_eq!(strtod("."), None);
        assert_eq!(strtod(""), None);
        assert_eq!(strtod("--1"), None);
        assert!(strtod("nan(12)").is_some_and(|(v, n)| v.is_nan() && n == 7));
    }

    #[test]
    fn names_are_case_insensitive_except_the_version_tests() {
        check(&[
            ("STRCAT(\"a\", 1)", "\"a1\""),
            ("IfThenElse(1, 2, 3)", "2"),
            ("VERSIONCMP(\"1\", \"2\")", "-1"),
            ("versionLE(\"1\", \"2\")", "true"),
            ("versionle(\"1\", \"2\")", "error"),
            ("VERSIONGT(\"2\", \"1\")", "error"),
            ("VERSIONGT(\"2\", undefined)", "undefined"),
            ("versionge(nosuch, 1)", "undefined"),
            ("versionEq(undefined)", "error"),
            ("VERSIONLT({1}, undefined)", "undefined"),
            ("VERSIONLT({1}, 2)", "error"),
            ("VERSION_IN_RANGE(\"8.5\", \"8.0\", \"9\")", "true"),
            ("upper(\"a\")", "error"),
            ("lower(\"A\")", "error"),
            ("noSuchFunction(1)", "error"),
            ("getuseconds(absTime(0))", "error"),
        ]);
    }

    /// Every section-3 vector of the spec that calls a function.
    #[test]
    fn spec_section3_vectors() {
        check(&[
            ("isInteger(3.0)", "false"),
            ("isBoolean(1)", "false"),
            ("int(-9.99)", "-9"),
            ("int(\"42xyz\")", "42"),
            ("int(\"xyz\")", "error"),
            ("int(undefined)", "undefined"),
            ("real(\"junk\")", "error"),
            ("string(7.0)", "\"7.000000000000000E+00\""),
            ("string(undefined)", "undefined"),
            ("string({1, 2})", "\"{ 1,2 }\""),
            ("bool(\"yes\")", "undefined"),
            ("floor(-2.5)", "-3"),
            ("round(2.5)", "2"),
            ("round(-2.5)", "-2"),
            // Differs from HTCondor 24.0, which gives -26 (see math.rs).
            ("pow(-3, 3)", "-27"),
            ("pow(9, 0.5)", "3.000000000000000E+00"),
            ("quantize(5, 4)", "8"),
            ("quantize(20, {2, 4, 8})", "24"),
            ("quantize(2.5, 1)", "3.000000000000000E+00"),
            (
                "strcat(\"n=\", 5, \" r=\", 2.5, \" b=\", true)",
                "\"n=5 r=2.500000000000000E+00 b=true\"",
            ),
            ("strcat(\"a\", nosuch)", "undefined"),
            (
                "join(\"-\", {\"x\", 1, 2.0})",
                "\"x-1-2.000000000000000E+00\"",
            ),
            ("substr(\"HTCondor\", 0, -2)", "\"HTCond\""),
            ("substr(\"HTCondor\", 20)", "\"\""),
            ("strcmp(\"abc\", \"abd\")", "-1"),
            ("strcmp(\"B\", \"a\")", "-1"),
            ("toLower(42)", "\"42\""),
            ("size(12)", "error"),
            ("split(\"a  b\\tc\")", "{ \"a\",\"b\",\"c\" }"),
            ("split(\"x,y,,z\", \",\")", "{ \"x\",\"y\",\"\",\"z\" }"),
            ("splitSlotName(\"node7\")", "{ \"\",\"node7\" }"),
            ("versioncmp(\"8.9.10\", \"8.9.9\")", "1"),
            ("member(\"B\", {\"a\", \"b\"})", "true"),
            ("identicalMember(\"B\", {\"a\", \"b\"})", "false"),
            ("anyCompare(\">\", {1, 5, 9}, 8)", "true"),
            ("sum({})", "0"),
            ("min({4, 2.5, 9})", "2.500000000000000E+00"),
            ("max({})", "undefined"),
            ("stringListSize(\"\")", "0"),
            ("stringListMember(\"B\", \"a,b,c\")", "false"),
            ("stringListAvg(\"1,2\")", "1"),
            ("stringListAvg(\"1.0,2\")", "1.500000000000000E+00"),
            ("stringListMin(\"\")", "undefined"),
            ("regexp(\"HOST\", \"myhost\", \"i\")", "true"),
            ("regexp(\"[\", \"x\")", "error"),
            (
                "regexps(\"(\\\\w+)@(\\\\w+)\", \"bob@site\", \"\\\\2/\\\\1\")",
                "\"site/bob\"",
            ),
            ("replaceall(\"a\", \"banana\", \"o\")", "\"bonono\""),
            ("ifThenElse(undefined, 1, 2)", "undefined"),
            ("ifThenElse(\"x\", 1, 2)", "error"),
            ("interval(93784)", "\"1+02:03:04\""),
            ("envV1ToV2(\"A=1;B=two words\")", "\"A=1 B=two' 'words\""),
            (
                "argsToList(\"-n 5 'two words'\")",
                "{ \"-n\",\"5\",\"two words\" }",
            ),
            ("evalInEachContext(p * 2, {[p = 1], [p = 5]})", "{ 2,10 }"),
            ("countMatches(p > 2, {[p = 1], [p = 5], [q = 9]})", "1"),
            ("noSuchFunction(1)", "error"),
        ]);
        check_in(
            "[slot5_State = \"Claimed\"; SlotID = 5]",
            &[("eval(strcat(\"slot\", SlotID, \"_State\"))", "\"Claimed\"")],
        );
        check_in("[e = 2.0]", &[("unparse(e)", "\"2.000000000000000E+00\"")]);
        // formatTime uses the local zone; the vector was taken with TZ=UTC.
        if super::testutil::ev("timeZoneOffset()") == "relTime(\"00\")" {
            check(&[(
                "formatTime(86400, \"%Y-%m-%d %H:%M:%S\")",
                "\"1970-01-02 00:00:00\"",
            )]);
        }
    }
}
