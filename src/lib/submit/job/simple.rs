//! condor_submit's simple keywords: a command copied to one attribute, as
//! a string, a boolean, an integer or an expression (its `f_as_string`,
//! `f_as_bool`, `f_as_int`, `f_as_expr` and friends). The transfer and
//! policy parts each keep their own table and copy it with
//! [`Build::copy_simple`].

use super::{
    Build, SubmitError, Value, bool_value, boolean, err, eval_const, int, parse_rhs, string,
};

/// How a simple command's value becomes its attribute.
#[derive(Clone, Copy)]
pub(super) enum As {
    Str,
    /// A string, its enclosing double quotes (if any) removed.
    StrStrip,
    /// Items separated by commas or white space, joined with commas.
    List,
    Bool,
    Int,
    /// A non-negative integer.
    UInt,
    Expr,
}

impl Build<'_> {
    /// Copies each command of `table` the file gives, in the table's
    /// order (a later command setting the same attribute wins); an empty
    /// value sets nothing, as in condor_submit. Returns the attributes
    /// set.
    pub(super) fn copy_simple(
        &mut self,
        table: &[(&'static str, &'static str, As)],
    ) -> Result<Vec<&'static str>, SubmitError> {
        let mut set = Vec::new();
        for &(cmd, attr, how) in table {
            if !self.want(&[cmd]) {
                continue;
            }
            let Some((v, o)) = self.given(cmd)? else {
                continue;
            };
            let invalid =
                |what: &str| err(&o, format!("{cmd}={v} is invalid, must eval to {what}."));
            let e = match how {
                As::Str => string(&v),
                As::StrStrip => string(strip_outer_quotes(&v)),
                As::List => string(
                    &v.split(|c: char| c == ',' || c.is_whitespace())
                        .filter(|s| !s.is_empty())
                        .collect::<Vec<_>>()
                        .join(","),
                ),
                As::Bool => boolean(bool_value(&v).ok_or_else(|| invalid("a boolean"))?),
                As::Int => int(int_value(&v).ok_or_else(|| invalid("an integer"))?),
                As::UInt => match int_value(&v) {
                    Some(i) if i >= 0 => int(i),
                    Some(_) => return Err(invalid("a non-negative integer")),
                    None => return Err(invalid("an integer")),
                },
                As::Expr => parse_rhs(attr, &v, &o)?,
            };
            self.ad.insert(attr, e);
            set.push(attr);
        }
        Ok(set)
    }
}

/// A string with one pair of enclosing double quotes removed
/// (trim_and_strip_quotes_in_place).
fn strip_outer_quotes(v: &str) -> &str {
    let t = v.trim();
    t.strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(t)
}

/// An integer, or an expression that evaluates to one (string_is_long_param).
fn int_value(v: &str) -> Option<i64> {
    if let Ok(i) = v.trim().parse() {
        return Some(i);
    }
    match crate::classad::parse_expr(v).ok().map(|e| eval_const(&e)) {
        Some(Value::Int(i)) => Some(i),
        _ => None,
    }
}
