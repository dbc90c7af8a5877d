//! `arguments` and `environment` in both of HTCondor's syntaxes.
//!
//! V1 (the value does not start with `"`): arguments split on white space;
//! environment entries split on `;`. V2 (the whole value in `"…"`): white
//! space separates, `'…'` quotes one word (`''` inside is a literal `'`),
//! and `""` is a literal `"`. Both are stored in the canonical V2 form, in
//! which white space and `'` inside a word are put in single quotes.

/// Splits a V2 string (the text inside the outer double quotes) into words.
pub fn split_v2(text: &str, full: &str, what: &str) -> Result<Vec<String>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut have = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            if have {
                out.push(std::mem::take(&mut cur));
                have = false;
            }
            i += 1;
        } else if c == '\'' {
            have = true;
            let start = i;
            i += 1;
            loop {
                if i >= chars.len() {
                    let rest: String = chars[start..].iter().collect();
                    return Err(format!(
                        "Unbalanced quote starting here: {rest}\nThe full {what} you specified were: {full}"
                    ));
                }
                if chars[i] == '\'' {
                    if chars.get(i + 1) == Some(&'\'') {
                        cur.push('\'');
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                cur.push(chars[i]);
                i += 1;
            }
        } else if c == '"' && chars.get(i + 1) == Some(&'"') {
            cur.push('"');
            have = true;
            i += 2;
        } else {
            cur.push(c);
            have = true;
            i += 1;
        }
    }
    if have {
        out.push(cur);
    }
    Ok(out)
}

/// One word in canonical V2 form.
pub fn quote_v2_word(w: &str) -> String {
    if w.is_empty() {
        return "''".into();
    }
    let mut out = String::new();
    let mut quoted = false;
    for c in w.chars() {
        if c.is_whitespace() || c == '\'' {
            if !quoted {
                out.push('\'');
                quoted = true;
            }
            if c == '\'' {
                out.push_str("''");
            } else {
                out.push(c);
            }
        } else {
            if quoted {
                out.push('\'');
                quoted = false;
            }
            out.push(c);
        }
    }
    if quoted {
        out.push('\'');
    }
    out
}

/// The inside of a value written as `"…"`, or `None` when it is not quoted.
/// Text after the closing quote is an error.
fn v2_body<'a>(value: &'a str, what: &str) -> Result<Option<&'a str>, String> {
    let v = value.trim();
    let Some(rest) = v.strip_prefix('"') else {
        return Ok(None);
    };
    // Find the closing quote that is not part of a "" pair.
    let b = rest.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'"' {
            if b.get(i + 1) == Some(&b'"') {
                i += 2;
                continue;
            }
            let trailing = &rest[i..];
            if trailing.len() > 1 {
                return Err(format!(
                    "Unexpected characters following double-quote.  Did you forget to escape the double-quote by \
                     repeating it?  Here is the quote and trailing characters: {trailing}\n\nThe full {what} you \
                     specified were: {v}"
                ));
            }
            return Ok(Some(&rest[..i]));
        }
        i += 1;
    }
    Err(format!(
        "Unbalanced quote starting here: {v}\nThe full {what} you specified were: {v}"
    ))
}

/// The attribute and value for `arguments = value`: `Args` for V1,
/// `Arguments` for V2.
pub fn arguments(value: &str) -> Result<(&'static str, String), String> {
    if value.trim().is_empty() {
        return Ok(("Arguments", String::new()));
    }
    match v2_body(value, "arguments")? {
        Some(body) => {
            let words = split_v2(body, value.trim(), "arguments")?;
            Ok((
                "Arguments",
                words
                    .iter()
                    .map(|w| quote_v2_word(w))
                    .collect::<Vec<_>>()
                    .join(" "),
            ))
        }
        None => {
            // Old syntax: `\"` is a literal double quote (condor_submit's
            // V1WackedToV1Raw); a bare one is an error.
            let mut raw = String::with_capacity(value.len());
            let mut rest = value;
            while let Some(c) = rest.chars().next() {
                if let Some(after) = rest.strip_prefix("\\\"") {
                    raw.push('"');
                    rest = after;
                } else if c == '"' {
                    return Err(format!(
                        "Found illegal unescaped double-quote: {rest}\nThe full arguments you specified were: {}",
                        value.trim()
                    ));
                } else {
                    raw.push(c);
                    rest = &rest[c.len_utf8()..];
                }
            }
            Ok(("Args", raw.split_whitespace().collect::<Vec<_>>().join(" ")))
        }
    }
}

/// `NAME=value` pairs of an environment value, in order, later duplicates
/// replacing earlier ones.
pub fn environment_pairs(value: &str) -> Result<Vec<(String, String)>, String> {
    let entries: Vec<String> = match v2_body(value, "environment")? {
        Some(body) => split_v2(body, value.trim(), "environment")?,
        None => value
            .split(';')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
    };
    let mut out: Vec<(String, String)> = Vec::new();
    for e in entries {
        let Some(eq) = e.find('=') else {
            return Err(format!(
                "ERROR: Missing '=' after environment variable '{e}'.\nThe environment you specified was: '{}'",
                value.trim()
            ));
        };
        let (n, v) = (e[..eq].to_string(), e[eq + 1..].to_string());
        if n.is_empty() {
            return Err(format!("ERROR: an environment entry has no name: '{e}'"));
        }
        merge_pair(&mut out, n, v);
    }
    Ok(out)
}

/// Adds or replaces one variable, keeping the pairs sorted by name as
/// HTCondor's environment object does.
pub fn merge_pair(pairs: &mut Vec<(String, String)>, name: String, value: String) {
    match pairs.binary_search_by(|(n, _)| n.as_str().cmp(&name)) {
        Ok(i) => pairs[i].1 = value,
        Err(i) => pairs.insert(i, (name, value)),
    }
}

/// Pairs in the legacy V1 form `A=1;B=2`.
pub fn environment_v1(pairs: &[(String, String)]) -> String {
    pairs
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// Pairs in canonical V2 form.
pub fn environment_v2(pairs: &[(String, String)]) -> String {
    pairs
        .iter()
        .map(|(n, v)| quote_v2_word(&format!("{n}={v}")))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_both_syntaxes() {
        assert_eq!(arguments("a b  c").unwrap(), ("Args", "a b c".into()));
        assert_eq!(
            arguments("\"a 'b c' d\"").unwrap(),
            ("Arguments", "a b' 'c d".into())
        );
        assert_eq!(arguments("\"it''s\"").unwrap().1, "its");
        assert_eq!(arguments("\"a '' b\"").unwrap().1, "a '' b");
        assert_eq!(arguments("\"a \"\"b c\"\" d\"").unwrap().1, "a \"b c\" d");
        assert_eq!(arguments("\"x\ty\"").unwrap().1, "x y");
        assert_eq!(arguments("\"  lead trail  \"").unwrap().1, "lead trail");
        assert_eq!(arguments("\"\"").unwrap(), ("Arguments", String::new()));
        assert_eq!(arguments("").unwrap(), ("Arguments", String::new()));
        assert!(
            arguments("\"a b'c\"")
                .unwrap_err()
                .starts_with("Unbalanced quote starting here: 'c")
        );
        assert!(
            arguments("\"a\" b")
                .unwrap_err()
                .starts_with("Unexpected characters following double-quote.")
        );
        // Regression: `\"` in the old syntax is a literal double quote.
        assert_eq!(
            arguments("one \\\"two\\\" three").unwrap(),
            ("Args", "one \"two\" three".into())
        );
        assert!(
            arguments("a\"b")
                .unwrap_err()
                .starts_with("Found illegal unescaped double-quote: \"b")
        );
    }

    #[test]
    fn environment_both_syntaxes() {
        let v2 = |s: &str| environment_v2(&environment_pairs(s).unwrap());
        assert_eq!(v2("\"A='x y' B=2\""), "A=x' 'y B=2");
        assert_eq!(v2("A=1;B=2"), "A=1 B=2");
        assert_eq!(v2("A=1 B=2"), "A=1' 'B=2");
        assert_eq!(v2("\"B=\"\"q\"\"\""), "B=\"q\"");
        assert_eq!(v2("\"A=1 A=2\""), "A=2");
        assert_eq!(v2("\"Z=2 A=1 a=3\""), "A=1 Z=2 a=3");
        assert_eq!(v2("\"A='it''s'\""), "A=it''''s");
        assert!(
            environment_pairs("\"NOEQ\"")
                .unwrap_err()
                .starts_with("ERROR: Missing '=' after environment variable 'NOEQ'.")
        );
    }
}
