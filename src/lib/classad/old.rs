//! Old-syntax ads: one `Name = expr` per line, `#` comments, and ads in a
//! stream separated by blank lines, as `condor_q -long` prints them. Strings
//! on these lines use the old escaping (a backslash is literal except before
//! `"`).

use super::ParseError;
use super::ad::ClassAd;
use super::lexer::name_len;
use super::parser::Parser;

/// One old-syntax ad. Blank lines are ignored.
pub fn parse_old_ad(text: &str) -> Result<ClassAd, ParseError> {
    // Sized for the text; the index grows if needed.
    let mut ad = ClassAd::with_capacity(super::parser::capacity_for(text));
    for (n, line) in lines(text).enumerate() {
        parse_line(&mut ad, line, n as u32 + 1)?;
    }
    Ok(ad)
}

/// A stream of old-syntax ads separated by blank lines.
pub fn parse_old_ads(text: &str) -> Result<Vec<ClassAd>, ParseError> {
    let mut out = Vec::new();
    let mut cur = ClassAd::new();
    let mut any = false;
    for (n, line) in lines(text).enumerate() {
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

/// The lines of `text`, as [`str::lines`] cuts them (at `\n`, with a `\r`
/// before it dropped), found eight bytes at a time.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let b = rest.as_bytes();
        let mut i = 0;
        const ONES: u64 = 0x0101_0101_0101_0101;
        while let Some(chunk) = b.get(i..i + 8) {
            let x = u64::from_le_bytes(chunk.try_into().expect("eight bytes")) ^ (ONES * 10);
            if x.wrapping_sub(ONES) & !x & (ONES * 0x80) != 0 {
                break;
            }
            i += 8;
        }
        match b[i..].iter().position(|&c| c == b'\n') {
            Some(j) => {
                let line = &rest[..i + j];
                rest = &rest[i + j + 1..];
                Some(line.strip_suffix('\r').unwrap_or(line))
            }
            None => Some(std::mem::take(&mut rest)),
        }
    })
}

/// Parses `Name = expr` into `ad`; returns whether the line held an
/// attribute (false for comments and blank lines).
pub fn parse_line(ad: &mut ClassAd, line: &str, lineno: u32) -> Result<bool, ParseError> {
    let b = line.as_bytes();
    // The usual line, `Name = expr` with ASCII spacing, read in one pass.
    let blanks = |mut i: usize| {
        while matches!(b.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        i
    };
    let indent = blanks(0);
    if b.get(indent)
        .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_')
    {
        let end = indent + name_len(&b[indent..]);
        let eq = blanks(end);
        if b.get(eq) == Some(&b'=') {
            let name = &line[indent..end];
            return parse_value(ad, name, &line[eq + 1..], lineno, (eq + 2) as u32);
        }
    }
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
    parse_value(ad, name, &t[eq + 1..], lineno, (indent + eq + 2) as u32)
}

/// Parses the expression `rhs` (starting at column `col`) as the value of
/// `name`.
fn parse_value(
    ad: &mut ClassAd,
    name: &str,
    rhs: &str,
    lineno: u32,
    col: u32,
) -> Result<bool, ParseError> {
    let mut p = Parser::new(rhs, true).with_origin(lineno, col);
    let e = p.expr()?;
    p.expect_eof()?;
    ad.insert_named(&crate::classad::ast::Name::new(name), e);
    Ok(true)
}
