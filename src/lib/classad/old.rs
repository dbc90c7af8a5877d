//! Old-syntax ads: one `Name = expr` per line, `#` comments, and ads in a
//! stream separated by blank lines, as `condor_q -long` prints them. Strings
//! on these lines use the old escaping (a backslash is literal except before
//! `"`).

use super::ParseError;
use super::ad::ClassAd;
use super::parser::Parser;

/// One old-syntax ad. Blank lines are ignored.
pub fn parse_old_ad(text: &str) -> Result<ClassAd, ParseError> {
    // Sized for the text; the index grows if needed.
    let mut ad = ClassAd::with_capacity(super::parser::capacity_for(text));
    for (n, line) in text.lines().enumerate() {
        parse_line(&mut ad, line, n as u32 + 1)?;
    }
    Ok(ad)
}

/// A stream of old-syntax ads separated by blank lines.
pub fn parse_old_ads(text: &str) -> Result<Vec<ClassAd>, ParseError> {
    let mut out = Vec::new();
    let mut cur = ClassAd::new();
    let mut any = false;
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            if any {
                out.push(std::mem::take(&mut cur));
                any = false;
            }
            continue;
        }
        any |= parse_line(&mut cur, line, n as u32 + 1)?;
    }
    if any {
        out.push(cur);
    }
    Ok(out)
}

/// Parses `Name = expr` into `ad`; returns whether the line held an
/// attribute (false for comments and blank lines).
pub fn parse_line(ad: &mut ClassAd, line: &str, lineno: u32) -> Result<bool, ParseError> {
    let t = line.trim_start();
    if t.is_empty() || t.starts_with('#') {
        return Ok(false);
    }
    let indent = line.len() - t.len();
    let Some(eq) = t.bytes().position(|b| b == b'=') else {
        return Err(ParseError {
            line: lineno,
            col: indent as u32 + 1,
            msg: "expected 'Name = expression'".into(),
        });
    };
    let name = t[..eq].trim();
    let valid = !name.is_empty()
        && (name.as_bytes()[0].is_ascii_alphabetic() || name.as_bytes()[0] == b'_')
        && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
    if !valid {
        return Err(ParseError {
            line: lineno,
            col: indent as u32 + 1,
            msg: format!("'{name}' is not a valid attribute name"),
        });
    }
    let rhs = &t[eq + 1..];
    let col = (indent + eq + 2) as u32;
    let mut p = Parser::new(rhs, true).with_origin(lineno, col);
    let e = p.expr()?;
    p.expect_eof()?;
    ad.insert_named(&crate::classad::ast::Name::new(name), e);
    Ok(true)
}
