//! What hooks print: `Attr = value` lines in the old ClassAd syntax.

use crate::classad::ClassAd;
use crate::classad::unparse::ad_to_old;

/// Whether `name` can be an attribute name a hook prints (letters, digits,
/// `_` and `.`, not starting with a digit or `.`).
pub fn is_attribute_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// One `Attr = value` line (already trimmed and not empty), or why not.
pub fn parse_line(line: &str) -> Result<(String, crate::classad::Expr), String> {
    let Some((name, value)) = line.split_once('=') else {
        return Err("not 'Attr = value'".to_string());
    };
    let name = name.trim();
    if !is_attribute_name(name) {
        return Err("not an attribute name".to_string());
    }
    let e = crate::classad::parser::parse_expr_old(value.trim())
        .map_err(|e| format!("not an expression ({e})"))?;
    Ok((name.to_string(), e))
}

/// A hook's output as one ad: `Attr = value` lines (blank lines skipped);
/// the first line that is not one fails the whole output, and the error
/// names it.
pub fn parse_attributes(text: &str) -> Result<ClassAd, String> {
    let mut ad = ClassAd::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() {
            continue;
        }
        let (name, e) =
            parse_line(l).map_err(|why| format!("output line {}: {why}: {l}", i + 1))?;
        ad.insert(&name, e);
    }
    Ok(ad)
}

/// A hook's stdin made of several ads: each in old form, `sep` between
/// them (the router writes `------`, the fetch-work hooks `-----`).
pub fn ads_stdin(ads: &[&ClassAd], sep: &str) -> String {
    let mut s = String::new();
    for (i, ad) in ads.iter().enumerate() {
        if i > 0 {
            s.push_str(sep);
            s.push('\n');
        }
        s.push_str(&ad_to_old(ad, true));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bad_line_fails_the_whole_output() {
        let ad = parse_attributes("A = 1\n\nB = \"x\"\n").unwrap();
        assert_eq!(ad.len(), 2);
        let e = parse_attributes("A = 1\nthis is not an attribute\nB = 2\n").unwrap_err();
        assert!(e.starts_with("output line 2:"), "{e}");
        assert!(parse_attributes("A = (1 +\n").is_err());
        assert!(parse_attributes("9A = 1\n").is_err());
    }

    #[test]
    fn stdin_separates_ads() {
        let a = crate::classad::parse_ad("[A = 1]").unwrap();
        let b = crate::classad::parse_ad("[B = 2]").unwrap();
        assert_eq!(ads_stdin(&[&a, &b], "------"), "A = 1\n------\nB = 2\n");
    }
}
