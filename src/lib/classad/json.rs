//! HTCondor's JSON form of ads.
//!
//! An ad is an object and a list an array; ints are numbers, reals numbers in
//! the old `%.16G` form, bools are bools, undefined is `null`, strings are
//! JSON strings. Every other expression is the string
//! `"\/Expr(<new-syntax unparse>)\/"`, read back as an expression.

use std::fmt::Write;
use std::rc::Rc;

use super::ParseError;
use super::ad::ClassAd;
use super::ast::Expr;
use super::parser::parse_expr;
use super::unparse::{real_old, unparse};
use super::value::Value;

/// One ad as an indented JSON object (no trailing newline).
pub fn ad_to_json(ad: &ClassAd, indent: usize) -> String {
    let mut s = String::new();
    write_ad(&mut s, ad, indent);
    s
}

/// Ads as `condor_q -json` writes them: `[`, ads separated by `,\n`, `]`.
pub fn ads_to_json_array<'a>(ads: impl IntoIterator<Item = &'a ClassAd>) -> String {
    let mut s = String::from("[\n");
    let mut first = true;
    for ad in ads {
        if !first {
            s.push_str(",\n");
        }
        first = false;
        write_ad(&mut s, ad, 0);
    }
    s.push_str("\n]\n");
    s
}

fn pad(out: &mut String, n: usize) {
    for _ in 0..n {
        out.push(' ');
    }
}

fn write_ad(out: &mut String, ad: &ClassAd, indent: usize) {
    out.push_str("{\n");
    let entries = ad.sorted();
    for (i, (name, e)) in entries.iter().enumerate() {
        pad(out, indent + 2);
        write_str(out, name);
        out.push_str(": ");
        write_expr(out, e, indent + 2);
        if i + 1 < entries.len() {
            out.push(',');
        }
        out.push('\n');
    }
    pad(out, indent);
    out.push('}');
}

fn write_list(out: &mut String, items: &[Expr], indent: usize) {
    out.push_str("[\n");
    for (i, e) in items.iter().enumerate() {
        pad(out, indent + 2);
        write_expr(out, e, indent + 2);
        if i + 1 < items.len() {
            out.push(',');
        }
        out.push('\n');
    }
    pad(out, indent);
    out.push(']');
}

fn write_expr(out: &mut String, e: &Expr, indent: usize) {
    match e {
        Expr::Lit(v) => write_value(out, v, indent, e),
        Expr::List(items) => write_list(out, items, indent),
        Expr::Ad(ad) => write_ad(out, ad, indent),
        // HTCondor's relTime("...") literal hands the JSON printer its
        // value as a real (ReltimeLiteral::GetValue), so it prints as the
        // number of seconds: relTime("-01:30") is -90.0.
        Expr::RelTimeLit(secs) => write_value(out, &Value::Real(*secs), indent, e),
        _ => write_wrapped(out, e),
    }
}

fn write_value(out: &mut String, v: &Value, indent: usize, source: &Expr) {
    match v {
        Value::Undefined => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Real(r) if r.is_finite() => out.push_str(&real_old(*r)),
        Value::Str(s) => write_str(out, s),
        Value::List(l) => write_list(out, &l.items, indent),
        Value::Ad(f) => write_ad(out, &f.printed_ad(), indent),
        _ => write_wrapped(out, source),
    }
}

fn write_wrapped(out: &mut String, e: &Expr) {
    let text = format!("\\/Expr({})\\/", unparse(e));
    out.push('"');
    // The \/ markers are already escaped; escape the expression text itself.
    let inner = &text[2..text.len() - 2];
    out.push_str("\\/");
    escape_into(out, inner);
    out.push_str("\\/");
    out.push('"');
}

fn write_str(out: &mut String, s: &str) {
    out.push('"');
    escape_into(out, s);
    out.push('"');
}

fn escape_into(out: &mut String, s: &str) {
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
}

/// Reads one JSON object or an array of them.
pub fn parse_json_ads(text: &str) -> Result<Vec<ClassAd>, ParseError> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| ParseError {
        line: e.line() as u32,
        col: e.column() as u32,
        msg: format!("invalid JSON: {e}"),
    })?;
    match v {
        serde_json::Value::Array(items) => items
            .into_iter()
            .map(|item| match item {
                serde_json::Value::Object(m) => json_object(m),
                _ => Err(ParseError {
                    line: 1,
                    col: 1,
                    msg: "a JSON ad array must hold only objects".into(),
                }),
            })
            .collect(),
        serde_json::Value::Object(m) => Ok(vec![json_object(m)?]),
        _ => Err(ParseError {
            line: 1,
            col: 1,
            msg: "JSON ads must be an object or an array of objects".into(),
        }),
    }
}

fn json_object(m: serde_json::Map<String, serde_json::Value>) -> Result<ClassAd, ParseError> {
    let mut ad = ClassAd::new();
    for (k, v) in m {
        ad.insert(&k, json_expr(v)?);
    }
    Ok(ad)
}

fn json_expr(v: serde_json::Value) -> Result<Expr, ParseError> {
    Ok(match v {
        serde_json::Value::Null => Expr::Lit(Value::Undefined),
        serde_json::Value::Bool(b) => Expr::Lit(Value::Bool(b)),
        // Numbers are read from their text (serde_json's arbitrary_precision):
        // Rust's float parsing is exact, and a real beyond the largest double
        // reads as infinity, as HTCondor reads it.
        serde_json::Value::Number(n) => {
            let text = n.to_string();
            match text.parse::<i64>() {
                Ok(i) if !text.contains(['.', 'e', 'E']) => Expr::Lit(Value::Int(i)),
                _ => Expr::Lit(Value::Real(text.parse::<f64>().unwrap_or(0.0))),
            }
        }
        serde_json::Value::String(s) => {
            if let Some(inner) = s.strip_prefix("/Expr(").and_then(|r| r.strip_suffix(")/")) {
                parse_expr(inner).map_err(|e| ParseError {
                    msg: format!("in JSON expression '{inner}': {}", e.msg),
                    ..e
                })?
            } else {
                Expr::Lit(Value::Str(Rc::from(s)))
            }
        }
        serde_json::Value::Array(items) => {
            let v: Result<Vec<Expr>, ParseError> = items.into_iter().map(json_expr).collect();
            Expr::List(Rc::from(v?))
        }
        serde_json::Value::Object(m) => Expr::Ad(Rc::new(json_object(m)?)),
    })
}
