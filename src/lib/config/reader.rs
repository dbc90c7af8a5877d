//! The line reader shared by the configuration, submit and transform
//! languages.
//!
//! It turns a file into logical lines: physical lines are trimmed, a trailing
//! `\` joins the next line (its leading white space trimmed), whole-line `#`
//! comments are dropped, and `NAME @=tag` ... `@tag` here-values become one
//! item. HTCondor's quirk for a comment inside a continuation is kept: the
//! comment is skipped when it also ends in `\`; otherwise it ends the value
//! and its last character is appended.

/// Where a piece of text came from, for error messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub file: String,
    pub line: u32,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Logical {
    /// An ordinary logical line, continuations joined.
    Text(String),
    /// `NAME @=tag` ... `@tag`: the trimmed lines joined with `\n`.
    Here { name: String, value: String },
}

/// A logical line and the physical line it starts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub line: u32,
    pub item: Logical,
}

/// Why a file could not be read into logical lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    pub line: u32,
    pub msg: String,
}

/// Splits `text` into logical lines.
pub fn logical_lines(text: &str) -> Result<Vec<Item>, ReadError> {
    let phys: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < phys.len() {
        let start = i as u32 + 1;
        let first = phys[i].trim();
        i += 1;
        if first.is_empty() || first.starts_with('#') {
            continue;
        }
        if let Some((name, tag)) = here_start(first) {
            let mut lines = Vec::new();
            let end = format!("@{tag}");
            let mut closed = false;
            while i < phys.len() {
                let l = phys[i].trim();
                i += 1;
                if l == end {
                    closed = true;
                    break;
                }
                lines.push(l.to_string());
            }
            if !closed {
                return Err(ReadError {
                    line: start,
                    msg: format!(
                        "'{name} @={tag}' is not closed by '@{tag}' before the end of the file"
                    ),
                });
            }
            out.push(Item {
                line: start,
                item: Logical::Here {
                    name: name.to_string(),
                    value: lines.join("\n"),
                },
            });
            continue;
        }
        let mut text = String::new();
        let mut cur = first.to_string();
        loop {
            match cur.strip_suffix('\\') {
                Some(head) => {
                    text.push_str(head);
                    // Continue with the next physical line.
                    let mut next: Option<String> = None;
                    while i < phys.len() {
                        let l = phys[i].trim_start();
                        i += 1;
                        let t = l.trim_end();
                        if t.starts_with('#') {
                            if t.ends_with('\\') {
                                continue;
                            }
                            // The quirk: the comment ends the value and its
                            // last character is kept.
                            if let Some(c) = t.chars().last() {
                                text.push(c);
                            }
                            next = None;
                            break;
                        }
                        next = Some(t.to_string());
                        break;
                    }
                    match next {
                        Some(n) => cur = n,
                        None => break,
                    }
                }
                None => {
                    text.push_str(&cur);
                    break;
                }
            }
        }
        out.push(Item {
            line: start,
            item: Logical::Text(text),
        });
    }
    Ok(out)
}

/// `NAME @=tag` → (NAME, tag).
fn here_start(line: &str) -> Option<(&str, &str)> {
    let at = line.find("@=")?;
    let name = line[..at].trim();
    let tag = line[at + 2..].trim();
    if name.is_empty()
        || tag.is_empty()
        || !is_macro_name(name)
        || tag.contains(char::is_whitespace)
    {
        return None;
    }
    Some((name, tag))
}

/// Macro names: letters, digits, `_`, `.` and `/` (submit allows `/`).
/// `s` without `prefix`, compared ignoring ASCII case; `None` when `s` does
/// not start with it. Safe on any text (slicing `s[..n]` would panic inside
/// a multi-byte character).
pub fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

pub fn is_macro_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<String> {
        logical_lines(src)
            .unwrap()
            .into_iter()
            .map(|i| match i.item {
                Logical::Text(t) => t,
                Logical::Here { name, value } => format!("{name}@={value}"),
            })
            .collect()
    }

    #[test]
    fn continuation_and_comments() {
        assert_eq!(texts("a = x \\\n   y\n"), vec!["a = x y"]);
        assert_eq!(texts("a = x\\\ny\n"), vec!["a = xy"]);
        assert_eq!(texts("X = x \\\n# c \\\ny\n"), vec!["X = x y"]);
        assert_eq!(
            texts("X = a \\\nb \\\n# comment\nZ = 1"),
            vec!["X = a b t", "Z = 1"]
        );
        assert_eq!(
            texts("  # only a comment\nA = v # not a comment\n"),
            vec!["A = v # not a comment"]
        );
    }

    #[test]
    fn here_values() {
        assert_eq!(
            texts("A @=end\n  one\n two  \n@end\nB = 2"),
            vec!["A@=one\ntwo", "B = 2"]
        );
        let e = logical_lines("x = 1\nA @=end\nno end\n").unwrap_err();
        assert_eq!(e.line, 2);
    }

    #[test]
    fn line_numbers_are_where_items_start() {
        let items = logical_lines("\n\na = 1 \\\n 2\nb = 3\n").unwrap();
        assert_eq!(items.iter().map(|i| i.line).collect::<Vec<_>>(), vec![3, 5]);
    }
}
