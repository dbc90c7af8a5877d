//! Printing expressions, values and ads, byte for byte as HTCondor prints
//! them.
//!
//! New syntax (`classad_eval`, nested ads everywhere): reals as `%1.15E`,
//! strings with C escapes and `\ooo` for non-printable bytes, `is`/`isnt`.
//! Old syntax (`condor_q -long`): reals as `%.16G` plus `.0` when the text has
//! no `.`, `E` or `e`, strings escaping only `"`, and `=?=`/`=!=`.

use std::fmt::Write;

use super::ad::ClassAd;
use super::ast::{Expr, UnOp};
use super::value::{AbsTime, Value};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Syntax {
    New,
    Old,
}

/// An expression in new syntax.
pub fn unparse(e: &Expr) -> String {
    let mut s = String::new();
    write_expr(&mut s, e, Syntax::New);
    s
}

/// An expression in old syntax.
pub fn unparse_old(e: &Expr) -> String {
    let mut s = String::new();
    write_expr(&mut s, e, Syntax::Old);
    s
}

/// A value in new syntax, as `classad_eval` prints a result.
pub fn value_to_string(v: &Value) -> String {
    let mut s = String::new();
    write_value(&mut s, v, Syntax::New);
    s
}

/// An ad in new syntax on one line: `[ a = 1; b = "x" ]`, names sorted.
pub fn ad_to_string(ad: &ClassAd) -> String {
    let mut s = String::with_capacity(text_estimate(ad));
    write_ad(&mut s, ad, Syntax::New);
    s
}

/// A first capacity for an ad's text, so that building it seldom grows the
/// string (each growth is a `realloc`, and a job's two ad files and its
/// queue row were built through a hundred of them).
fn text_estimate(ad: &ClassAd) -> usize {
    64 + ad.len() * 48
}

/// An ad in old syntax: one `Name = expr` line each, sorted
/// case-insensitively, each line ending in a newline.
pub fn ad_to_old(ad: &ClassAd, sort: bool) -> String {
    let mut s = String::with_capacity(text_estimate(ad));
    let entries: Vec<(&str, &Expr)> = if sort {
        ad.sorted()
    } else {
        ad.iter().collect()
    };
    for (name, e) in entries {
        s.push_str(name);
        s.push_str(" = ");
        write_expr(&mut s, e, Syntax::Old);
        s.push('\n');
    }
    s
}

/// Old-syntax texts of expressions that several ads share (a cluster's
/// attributes in each of its jobs' ads, a slot ad's fixed part), kept by
/// the expression itself: a shadow writes each job's `.job.ad` and
/// `.machine.ad`, and most of their lines are the last job's. The cache
/// holds every expression it keeps, so no other can take its address; an
/// expression only one ad holds is written afresh and not kept.
#[derive(Debug, Default)]
pub struct OldTexts(rustc_hash::FxHashMap<usize, (std::rc::Rc<Expr>, String)>);

impl OldTexts {
    /// Expressions kept at most (then the cache starts again).
    const KEPT: usize = 4096;

    /// [`ad_to_old`] unsorted, with the texts of shared expressions kept.
    pub fn ad_to_old(&mut self, ad: &ClassAd) -> String {
        let mut s = String::with_capacity(text_estimate(ad));
        for (name, e) in ad.iter_shared() {
            s.push_str(name);
            s.push_str(" = ");
            let key = std::rc::Rc::as_ptr(e) as usize;
            match self.0.get(&key) {
                Some((_, text)) => s.push_str(text),
                None if std::rc::Rc::strong_count(e) > 1 => {
                    let mut text = String::new();
                    write_expr(&mut text, e, Syntax::Old);
                    s.push_str(&text);
                    if self.0.len() >= Self::KEPT {
                        self.0.clear();
                    }
                    self.0.insert(key, (std::rc::Rc::clone(e), text));
                }
                None => write_expr(&mut s, e, Syntax::Old),
            }
            s.push('\n');
        }
        s
    }
}

/// Whether `out` ends with a token of digits only (an integer literal;
/// not a name like `x1`, nor a real, which has its `.` or exponent).
fn ends_with_integer(out: &str) -> bool {
    let token = out
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '+'))
        .next()
        .unwrap_or("");
    !token.is_empty() && token.bytes().all(|c| c.is_ascii_digit())
}

pub fn write_expr(out: &mut String, e: &Expr, syn: Syntax) {
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || write_expr_inner(out, e, syn))
}

fn write_expr_inner(out: &mut String, e: &Expr, syn: Syntax) {
    match e {
        Expr::Lit(v) => write_value(out, v, syn),
        Expr::Attr(a) => {
            if let Some(b) = &a.base {
                write_expr(out, b, syn);
                // `1.B` would read back as a malformed number (HTCondor 24
                // prints it so): after an integer, a space.
                if ends_with_integer(out) {
                    out.push(' ');
                }
                out.push('.');
                // After a '.', HTCondor quotes only names that are not
                // identifier-shaped (`a.parent`, `a.true`).
                let n = a.name.as_str();
                let plain = n
                    .bytes()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
                    && n.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
                if plain {
                    out.push_str(n);
                } else {
                    write_name(out, n);
                }
                return;
            } else if a.absolute {
                out.push('.');
            }
            write_name(out, a.name.as_str());
        }
        Expr::Unary(op, x) => {
            out.push_str(match op {
                UnOp::Neg => " -",
                UnOp::Plus => " +",
                UnOp::Not => " !",
                UnOp::BitNot => " ~",
            });
            write_expr(out, x, syn);
        }
        Expr::Binary(op, b) => {
            write_expr(out, &b.0, syn);
            out.push(' ');
            out.push_str(if syn == Syntax::New {
                op.new_syntax()
            } else {
                op.old_syntax()
            });
            out.push(' ');
            write_expr(out, &b.1, syn);
        }
        Expr::Cond(c) => {
            write_expr(out, &c.0, syn);
            out.push_str(" ? ");
            write_expr(out, &c.1, syn);
            out.push_str(" : ");
            write_expr(out, &c.2, syn);
        }
        Expr::Elvis(b) => {
            write_expr(out, &b.0, syn);
            out.push_str(" ?: ");
            write_expr(out, &b.1, syn);
        }
        Expr::Paren(x) => {
            out.push('(');
            write_expr(out, x, syn);
            out.push(')');
        }
        Expr::Index(b) => {
            write_expr(out, &b.0, syn);
            out.push('[');
            write_expr(out, &b.1, syn);
            out.push(']');
        }
        Expr::Call(c) => {
            out.push_str(&c.name);
            out.push('(');
            for (i, a) in c.args.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_expr(out, a, syn);
            }
            out.push(')');
        }
        Expr::List(items) => write_list(out, items, syn),
        Expr::Ad(ad) => write_ad(out, ad, syn),
        Expr::RelTimeLit(secs) => {
            out.push_str("relTime(\"");
            out.push_str(&reltime_literal_string(*secs));
            out.push_str("\")");
        }
        Expr::MatchSide(side) => out.push_str(match side {
            super::ast::Side::Left => ".LEFT",
            super::ast::Side::Right => ".RIGHT",
        }),
    }
}

fn write_list(out: &mut String, items: &[Expr], syn: Syntax) {
    out.push_str("{ ");
    for (i, a) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_expr(out, a, syn);
    }
    out.push_str(" }");
}

pub fn write_ad(out: &mut String, ad: &ClassAd, syn: Syntax) {
    out.push_str("[ ");
    for (i, (name, e)) in ad.sorted().into_iter().enumerate() {
        if i > 0 {
            out.push_str("; ");
        }
        write_name(out, name);
        out.push_str(" = ");
        write_expr(out, e, syn);
    }
    out.push_str(" ]");
}

/// Whether a name must be written in single quotes.
pub fn name_needs_quotes(name: &str) -> bool {
    let b = name.as_bytes();
    if b.is_empty() || !(b[0].is_ascii_alphabetic() || b[0] == b'_') {
        return true;
    }
    if !b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_') {
        return true;
    }
    // Keywords, without a lower-cased copy of every name printed.
    b.len() <= 9
        && [
            "true",
            "false",
            "undefined",
            "error",
            "is",
            "isnt",
            "parent",
        ]
        .iter()
        .any(|k| k.eq_ignore_ascii_case(name))
}

pub fn write_name(out: &mut String, name: &str) {
    if name_needs_quotes(name) {
        write_escaped(out, name, b'\'');
    } else {
        out.push_str(name);
    }
}

/// A quoted string in new syntax.
pub fn write_escaped(out: &mut String, s: &str, delim: u8) {
    out.push(delim as char);
    for &c in s.as_bytes() {
        match c {
            _ if c == delim => {
                out.push('\\');
                out.push(c as char);
            }
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            7 => out.push_str("\\a"),
            8 => out.push_str("\\b"),
            12 => out.push_str("\\f"),
            11 => out.push_str("\\v"),
            0x20..=0x7e => out.push(c as char),
            _ => {
                let _ = write!(out, "\\{c:03o}");
            }
        }
    }
    out.push(delim as char);
}

pub fn write_value(out: &mut String, v: &Value, syn: Syntax) {
    match v {
        Value::Undefined => out.push_str("undefined"),
        Value::Error => out.push_str("error"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => write_int(out, *i),
        Value::Real(r) => match syn {
            Syntax::New => out.push_str(&real_new(*r)),
            Syntax::Old => write_real_old(out, *r),
        },
        Value::Str(s) => match syn {
            Syntax::New => write_escaped(out, s, b'"'),
            Syntax::Old => {
                out.push('"');
                if s.contains('"') {
                    out.push_str(&s.replace('"', "\\\""));
                } else {
                    out.push_str(s);
                }
                out.push('"');
            }
        },
        Value::List(l) => write_list(out, &l.items, syn),
        Value::Ad(frame) => write_ad(out, &frame.printed_ad(), syn),
        Value::AbsTime(t) => {
            out.push_str("absTime(\"");
            out.push_str(&abstime_string(*t));
            out.push_str("\")");
        }
        Value::RelTime(r) => {
            out.push_str("relTime(\"");
            out.push_str(&reltime_string(*r));
            out.push_str("\")");
        }
    }
}

/// `real("INF")`, `real("-INF")` or `real("NaN")` for the values no literal
/// can spell.
fn special_real(r: f64) -> Option<&'static str> {
    if r.is_nan() {
        Some("real(\"NaN\")")
    } else if r == f64::INFINITY {
        Some("real(\"INF\")")
    } else if r == f64::NEG_INFINITY {
        Some("real(\"-INF\")")
    } else {
        None
    }
}

/// A real in new syntax: `%1.15E`, with `0.0`/`-0.0` for zero.
pub fn real_new(r: f64) -> String {
    if let Some(s) = special_real(r) {
        return s.to_string();
    }
    if r == 0.0 {
        return if r.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    format_e(r, 15, true)
}

/// An integer in decimal, without the formatting machinery (an ad's
/// values are mostly integers, and the shadow writes two ads a job).
fn write_int(out: &mut String, i: i64) {
    let mut buf = [0u8; 20];
    let mut n = i.unsigned_abs();
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if i < 0 {
        out.push('-');
    }
    // Only ASCII digits were written.
    out.push_str(std::str::from_utf8(&buf[at..]).unwrap_or_default());
}

/// [`real_old`] into `out`: a whole number under 10^15 (exact in an f64,
/// and under `%.16G`'s 16 digits) is written as an integer and `.0`
/// without the `%G` formatting; any other value goes through it.
fn write_real_old(out: &mut String, r: f64) {
    if r.fract() == 0.0 && r.abs() < 1e15 && !(r == 0.0 && r.is_sign_negative()) {
        write_int(out, r as i64);
        out.push_str(".0");
    } else {
        out.push_str(&real_old(r));
    }
}

/// A real in old syntax and JSON: `%.16G`, plus `.0` when it has no `.`,
/// `E` or `e`.
pub fn real_old(r: f64) -> String {
    if let Some(s) = special_real(r) {
        return s.to_string();
    }
    let mut s = format_g(r, 16, true);
    if !s.contains(['.', 'E', 'e']) {
        s.push_str(".0");
    }
    s
}

/// C's `%.{prec}e` / `%.{prec}E`.
pub fn format_e(r: f64, prec: usize, upper: bool) -> String {
    let s = format!("{:.*e}", prec, r);
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if exp < 0 { '-' } else { '+' };
    format!(
        "{mant}{}{sign}{:02}",
        if upper { 'E' } else { 'e' },
        exp.abs()
    )
}

/// C's `%.{prec}G` / `%.{prec}g` (no `#` flag: trailing zeros dropped).
pub fn format_g(r: f64, prec: usize, upper: bool) -> String {
    if !r.is_finite() {
        let s = if r.is_nan() {
            "nan"
        } else if r > 0.0 {
            "inf"
        } else {
            "-inf"
        };
        return if upper {
            s.to_uppercase()
        } else {
            s.to_string()
        };
    }
    let p = if prec == 0 { 1 } else { prec };
    if r == 0.0 {
        return if r.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let e_repr = format!("{:.*e}", p - 1, r);
    let exp: i32 = e_repr
        .split_once('e')
        .map(|(_, x)| x.parse().unwrap_or(0))
        .unwrap_or(0);
    if exp < -4 || exp >= p as i32 {
        let s = format_e(r, p - 1, upper);
        let (mant, ex) = s.split_at(s.find(['e', 'E']).unwrap_or(s.len()));
        let mant = strip_zeros(mant);
        format!("{mant}{ex}")
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        strip_zeros(&format!("{:.*}", decimals, r)).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// `YYYY-MM-DDThh:mm:ss±hh:mm` in the value's own zone offset. A zero offset
/// prints as `-00:00`, as HTCondor prints it.
pub fn abstime_string(t: AbsTime) -> String {
    use chrono::{DateTime, Datelike, Timelike, Utc};
    // The offset may exceed a day (HTCondor does not limit it), so shift the
    // instant by hand instead of through a chrono time zone.
    let local = t.secs.saturating_add(t.offset as i64);
    let dt = DateTime::<Utc>::from_timestamp(local, 0).unwrap_or_default();
    let sign = if t.offset > 0 { '+' } else { '-' };
    let a = t.offset.unsigned_abs();
    format!(
        "{}-{:02}-{:02}T{:02}:{:02}:{:02}{}{:02}:{:02}",
        dt.year(),
        dt.month(),
        dt.day(),
        dt.hour(),
        dt.minute(),
        dt.second(),
        sign,
        a / 3600,
        (a % 3600) / 60
    )
}

/// A relTime literal as HTCondor prints it: like [`reltime_string`], but
/// fractional seconds are kept (`1.5`, `01:01.25`).
pub fn reltime_literal_string(r: f64) -> String {
    let a = r.abs();
    if a.fract() == 0.0 {
        return reltime_string(r);
    }
    let whole = a.trunc() as i64;
    let secs = (whole % 60) as f64 + a.fract();
    let mut out = String::new();
    if r < 0.0 {
        out.push('-');
    }
    let (days, hrs, mins) = (whole / 86400, (whole % 86400) / 3600, (whole % 3600) / 60);
    let s = format_g(secs, 6, false);
    let s = if secs < 10.0 && (days != 0 || hrs != 0 || mins != 0) {
        format!("0{s}")
    } else {
        s
    };
    if days != 0 {
        let _ = write!(out, "{days}+{hrs:02}:{mins:02}:{s}");
    } else if hrs != 0 {
        let _ = write!(out, "{hrs:02}:{mins:02}:{s}");
    } else if mins != 0 {
        let _ = write!(out, "{mins:02}:{s}");
    } else {
        out.push_str(&s);
    }
    out
}

/// `[-][d+]hh:mm:ss` with leading zero fields dropped, whole seconds.
pub fn reltime_string(r: f64) -> String {
    let mut out = String::new();
    let total = r.abs().trunc() as i64;
    // Whole seconds only; a negative time under a second prints as "00".
    if r < 0.0 && total != 0 {
        out.push('-');
    }
    let days = total / 86400;
    let hrs = (total % 86400) / 3600;
    let mins = (total % 3600) / 60;
    let s = total % 60;
    if days != 0 {
        let _ = write!(out, "{days}+{hrs:02}:{mins:02}:{s:02}");
    } else if hrs != 0 {
        let _ = write!(out, "{hrs:02}:{mins:02}:{s:02}");
    } else if mins != 0 {
        let _ = write!(out, "{mins:02}:{s:02}");
    } else {
        let _ = write!(out, "{s:02}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast paths write what the general ones do.
    #[test]
    fn fast_ints_and_whole_reals_match_the_general_formatting() {
        let mut ints = vec![0, 1, -1, 9, 10, -10, 99, 100, 12345, i64::MAX, i64::MIN];
        ints.extend((0..63).map(|b| 1i64 << b));
        ints.extend((0..63).map(|b| -(1i64 << b) + 1));
        for i in ints {
            let mut out = String::from("x");
            write_int(&mut out, i);
            assert_eq!(out, format!("x{i}"));
        }
        let mut reals = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            2048.0,
            1e14,
            999999999999999.0,
            1e15,
        ];
        reals.extend([1e16, -1e15, 123456789012345.0, 0.1 + 0.2, 1e-7, 4.0e300]);
        reals.extend([
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
        ]);
        reals.extend((0..60).map(|b| (1u64 << b) as f64));
        reals.extend((0..60).map(|b| -((1u64 << b) as f64) - 1.0));
        for r in reals {
            let mut out = String::new();
            write_real_old(&mut out, r);
            assert_eq!(out, real_old(r), "{r}");
        }
        let mut out = String::new();
        write_value(&mut out, &Value::Str("a \"b\" c".into()), Syntax::Old);
        assert_eq!(out, "\"a \\\"b\\\" c\"");
    }

    #[test]
    fn keywords_and_odd_names_are_quoted_in_any_case() {
        for n in [
            "true",
            "FALSE",
            "Undefined",
            "error",
            "IS",
            "isnt",
            "Parent",
            "",
            "1a",
            "a-b",
        ] {
            assert!(name_needs_quotes(n), "{n}");
        }
        for n in ["truex", "Isn", "parents", "_x", "JobStatus", "undefined2"] {
            assert!(!name_needs_quotes(n), "{n}");
        }
    }

    #[test]
    fn reals_new_syntax() {
        assert_eq!(real_new(1.5e10), "1.500000000000000E+10");
        assert_eq!(real_new(1.0), "1.000000000000000E+00");
        assert_eq!(real_new(0.1 + 0.2), "3.000000000000000E-01");
        assert_eq!(real_new(1e300), "1.000000000000000E+300");
        assert_eq!(real_new(-0.0), "-0.0");
        assert_eq!(real_new(f64::NEG_INFINITY), "real(\"-INF\")");
    }

    #[test]
    fn reals_old_syntax() {
        for (v, s) in [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (2.5, "2.5"),
            (100.0, "100.0"),
            (15000000000.0, "15000000000.0"),
            (1e15, "1000000000000000.0"),
            (1e16, "1E+16"),
            (1e20, "1E+20"),
            (1e-5, "1E-05"),
            (123456789.12345678, "123456789.1234568"),
            (1.0 / 3.0, "0.3333333333333333"),
        ] {
            assert_eq!(real_old(v), s, "{v}");
        }
    }

    #[test]
    fn reltimes() {
        assert_eq!(reltime_string(5.0), "05");
        assert_eq!(reltime_string(-90.0), "-01:30");
        assert_eq!(reltime_string(3661.0), "01:01:01");
        assert_eq!(reltime_string(90061.25), "1+01:01:01");
    }

    /// The cached texts are the ones written afresh: for shared and
    /// unshared expressions, for a shared one seen again, and for another
    /// expression under the same name.
    #[test]
    fn kept_texts_write_what_ad_to_old_writes() {
        use std::rc::Rc;
        let parse = |t: &str| Rc::new(crate::classad::parser::parse_expr_old(t).unwrap());
        let shared = parse("RequestMemory > 2 * x && \"a\\\"b\" =?= Owner");
        let mut texts = OldTexts::default();
        let mut cluster = ClassAd::new();
        cluster.insert_shared("Requirements", Rc::clone(&shared));
        cluster.insert_shared("Cmd", parse("\"/bin/true\""));
        for proc in 0..3 {
            let mut job = cluster.clone();
            job.insert_shared("ProcId", parse(&proc.to_string()));
            assert_eq!(texts.ad_to_old(&job), ad_to_old(&job, false));
        }
        assert!(texts.0.contains_key(&(Rc::as_ptr(&shared) as usize)));
        // A job of another cluster: the same name, another expression.
        let mut other = ClassAd::new();
        other.insert_shared("Requirements", parse("false"));
        other.insert_shared("Cmd", parse("undefined"));
        assert_eq!(
            texts.ad_to_old(&other),
            "Requirements = false\nCmd = undefined\n"
        );
        // Full, the cache starts again and still writes the same.
        for i in 0..OldTexts::KEPT + 1 {
            let e = parse(&i.to_string());
            let mut ad = ClassAd::new();
            ad.insert_shared("N", Rc::clone(&e));
            assert_eq!(texts.ad_to_old(&ad), format!("N = {i}\n"));
        }
        assert!(texts.0.len() <= OldTexts::KEPT);
    }
}
