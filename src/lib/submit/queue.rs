//! The `queue` statement: `queue [N]`, `queue [N] [vars] in [slice] items`,
//! `queue [N] [vars] from [slice] file | (lines) | cmd |`, and
//! `queue [N] [var] matching [files|dirs] [slice] globs`.

use std::path::Path;

/// Where the items of a queue statement come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ItemSource {
    /// Plain `queue [N]`.
    None,
    /// `in`: items given on the line or in `( … )`.
    In(Vec<String>),
    /// `from`: one row per line, given inline.
    FromLines(Vec<String>),
    /// `from file`.
    FromFile(String),
    /// `from cmd |`.
    FromCommand(String),
    /// `matching [files|dirs] globs`.
    Matching {
        globs: Vec<String>,
        files: bool,
        dirs: bool,
    },
}

/// `[start:stop:step]`, Python style without negative steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Slice {
    pub start: Option<i64>,
    pub stop: Option<i64>,
    pub step: Option<i64>,
}

impl Slice {
    /// The indices of `len` items this slice keeps.
    pub fn indices(&self, len: usize) -> Vec<usize> {
        let n = len as i64;
        let norm = |v: i64| if v < 0 { (n + v).max(0) } else { v.min(n) };
        let start = self.start.map(norm).unwrap_or(0);
        let stop = self.stop.map(norm).unwrap_or(n);
        let step = self.step.unwrap_or(1).max(1);
        (start..stop)
            .step_by(step as usize)
            .map(|i| i as usize)
            .collect()
    }
}

/// A parsed queue statement (its count still unevaluated text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueSpec {
    pub count: String,
    pub vars: Vec<String>,
    pub slice: Slice,
    pub source: ItemSource,
}

/// Whether a logical line is a queue statement.
pub fn is_queue_line(line: &str) -> bool {
    let w = line.split_whitespace().next().unwrap_or("");
    w.eq_ignore_ascii_case("queue") && !line[w.len()..].trim_start().starts_with('=')
}

/// Whether the statement opens a `( … )` list that continues on the next
/// lines.
pub fn opens_block(line: &str) -> bool {
    let t = line.trim_end();
    t.ends_with('(') && !t.contains(')')
}

/// Parses the text after `queue`. `block` holds the lines of a `( … )` list
/// that followed the statement, if it opened one.
pub fn parse(rest: &str, block: Option<Vec<String>>) -> Result<QueueSpec, String> {
    let mut spec = QueueSpec {
        count: String::new(),
        vars: Vec::new(),
        slice: Slice::default(),
        source: ItemSource::None,
    };
    let rest = rest.trim();
    // Find the keyword (in / from / matching) as a separate word.
    let lower = rest.to_ascii_lowercase();
    let kw = ["in", "from", "matching"]
        .iter()
        .find_map(|k| find_word(&lower, k).map(|p| (*k, p)));
    let Some((kw, pos)) = kw else {
        // condor_submit takes `in`, `from` or `matching` as the keyword only
        // when something follows it; `queue x y z in` is read as the count
        // expression "x y z in" and refused. Say why.
        let last = lower.split_whitespace().last().unwrap_or("");
        if block.is_none() && ["in", "from", "matching"].contains(&last) {
            return Err(format!(
                "Invalid Queue count expression: '{rest}' has no items after '{last}', so HTCondor \
                 reads all of it as the queue count"
            ));
        }
        if block.is_some() {
            return Err("a '(' list needs 'in' or 'from' before it".into());
        }
        spec.count = rest.to_string();
        return Ok(spec);
    };
    let head = rest[..pos].trim();
    let mut tail = rest[pos + kw.len()..].trim().to_string();
    // head: [N] [vars]
    let (count, vars) = split_count_vars(head)?;
    spec.count = count;
    spec.vars = vars;
    if spec.vars.is_empty() {
        spec.vars.push("Item".into());
    }
    let (files, dirs) = if kw == "matching" {
        matching_options(&mut tail)
    } else {
        (false, false)
    };
    if tail.starts_with('[')
        && let Some(end) = tail.find(']')
    {
        spec.slice = parse_slice(&tail[1..end])?;
        tail = tail[end + 1..].trim_start().to_string();
    }
    let inline = inline_items(&tail, block)?;
    spec.source = item_source(kw, inline, tail, files, dirs)?;
    Ok(spec)
}

/// The `files` and `dirs` words after `matching`, taken off `tail`.
fn matching_options(tail: &mut String) -> (bool, bool) {
    let (mut files, mut dirs) = (false, false);
    loop {
        let first = tail
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        match first.as_str() {
            "files" => files = true,
            "dirs" => dirs = true,
            _ => break,
        }
        *tail = tail[first.len()..].trim_start().to_string();
    }
    (files, dirs)
}

/// The lines of a `( … )` item list: the `block` that followed the
/// statement, or one on the statement's own line; `None` when there is
/// none.
fn inline_items(tail: &str, block: Option<Vec<String>>) -> Result<Option<Vec<String>>, String> {
    if let Some(b) = block {
        if tail.trim() != "(" {
            return Err(format!("unexpected text before '(': '{tail}'"));
        }
        return Ok(Some(b));
    }
    if !tail.starts_with('(') {
        return Ok(None);
    }
    let Some(end) = tail.rfind(')') else {
        return Err("a '(' item list is not closed by ')'".into());
    };
    let inner = tail[1..end].to_string();
    if !tail[end + 1..].trim().is_empty() {
        return Err(format!(
            "unexpected text after ')': '{}'",
            tail[end + 1..].trim()
        ));
    }
    Ok(Some(inner.lines().map(String::from).collect()))
}

/// Where the items of `in`, `from` or `matching` come from: the inline
/// list, else the rest of the line.
fn item_source(
    kw: &str,
    inline: Option<Vec<String>>,
    tail: String,
    files: bool,
    dirs: bool,
) -> Result<ItemSource, String> {
    Ok(match kw {
        "in" => {
            let text = inline.map(|l| l.join("\n")).unwrap_or(tail);
            ItemSource::In(split_items(&text))
        }
        "from" => match inline {
            // A list on the statement's own line is one row, even an empty
            // one (`queue x from ()` is a job with x empty, as in
            // condor_submit's parse_queue_args).
            Some(lines) if tail.trim() != "(" => ItemSource::FromLines(vec![lines.join(" ")]),
            Some(lines) => {
                ItemSource::FromLines(lines.into_iter().filter(|l| !l.trim().is_empty()).collect())
            }
            None => {
                let t = tail.trim();
                if let Some(cmd) = t.strip_suffix('|') {
                    ItemSource::FromCommand(cmd.trim().to_string())
                } else if t.is_empty() {
                    return Err(
                        "'queue … from' needs a file, a command ending in '|', or a '( … )' list"
                            .into(),
                    );
                } else {
                    ItemSource::FromFile(t.to_string())
                }
            }
        },
        _ => {
            let listed = inline.is_some();
            let text = inline.map(|l| l.join("\n")).unwrap_or(tail);
            let globs = split_items(&text);
            // An empty `( )` list matches nothing, as in condor_submit.
            if globs.is_empty() && !listed {
                return Err("'queue … matching' needs at least one pattern".into());
            }
            // Neither word: both files and directories match.
            let (files, dirs) = if !files && !dirs {
                (true, true)
            } else {
                (files, dirs)
            };
            ItemSource::Matching { globs, files, dirs }
        }
    })
}

fn find_word(s: &str, w: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut from = 0;
    while let Some(p) = s[from..].find(w) {
        let at = from + p;
        let before = at == 0 || b[at - 1].is_ascii_whitespace() || b[at - 1] == b',';
        let end = at + w.len();
        // At the very end of the line the word is no keyword (see `parse`).
        let after =
            end < b.len() && (b[end].is_ascii_whitespace() || b[end] == b'[' || b[end] == b'(');
        if before && after {
            return Some(at);
        }
        from = at + w.len();
    }
    None
}

/// `[N] [var[,var…]]`: a leading count expression is anything up to the
/// variable names, which are identifiers separated by commas or spaces.
fn split_count_vars(head: &str) -> Result<(String, Vec<String>), String> {
    let words: Vec<&str> = head
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .collect();
    let is_ident = |w: &str| {
        w.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    };
    // Variables are the trailing identifiers; a count, if any, comes first.
    let split = words
        .iter()
        .rposition(|w| !is_ident(w))
        .map(|i| i + 1)
        .unwrap_or(0);
    let count = words[..split].join(" ");
    let vars: Vec<String> = words[split..].iter().map(|s| s.to_string()).collect();
    // A lone identifier before the vars would be a count like $(N) expanded
    // already; accept identifiers only as variables.
    Ok((count, vars))
}

fn parse_slice(s: &str) -> Result<Slice, String> {
    let parts: Vec<&str> = s.split(':').collect();
    if parts.len() > 3 {
        return Err(format!("bad slice '[{s}]'"));
    }
    let num = |t: &str| -> Result<Option<i64>, String> {
        let t = t.trim();
        if t.is_empty() {
            Ok(None)
        } else {
            t.parse()
                .map(Some)
                .map_err(|_| format!("bad slice '[{s}]'"))
        }
    };
    let sl = Slice {
        start: num(parts[0])?,
        stop: if parts.len() > 1 {
            num(parts[1])?
        } else {
            num(parts[0])?.map(|v| v + 1)
        },
        step: if parts.len() > 2 {
            num(parts[2])?
        } else {
            None
        },
    };
    if sl.step.is_some_and(|v| v <= 0) {
        return Err(format!("bad slice '[{s}]': the step must be positive"));
    }
    Ok(sl)
}

/// Items separated by commas and/or white space.
pub fn split_items(text: &str) -> Vec<String> {
    text.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// Splits a `from` row into `n` fields: commas and/or white space separate,
/// and the last variable takes the rest of the line.
pub fn split_row(row: &str, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = row.trim();
    while out.len() + 1 < n {
        let end = rest
            .find(|c: char| c == ',' || c.is_whitespace())
            .unwrap_or(rest.len());
        out.push(rest[..end].to_string());
        rest = rest[end..].trim_start_matches(|c: char| c == ',' || c.is_whitespace());
    }
    out.push(rest.to_string());
    while out.len() < n {
        out.push(String::new());
    }
    out
}

/// Paths matching the globs under `dir`, sorted, filtered to files/dirs.
pub fn matching(
    dir: &Path,
    globs: &[String],
    files: bool,
    dirs: bool,
) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for g in globs {
        let pat = if Path::new(g).is_absolute() {
            g.clone()
        } else {
            dir.join(g).display().to_string()
        };
        let paths = glob::glob(&pat).map_err(|e| format!("bad pattern '{g}': {e}"))?;
        let mut found: Vec<String> = Vec::new();
        for p in paths.flatten() {
            let keep = (files && p.is_file()) || (dirs && p.is_dir());
            if !keep {
                continue;
            }
            let mut shown = if Path::new(g).is_absolute() {
                p.display().to_string()
            } else {
                p.strip_prefix(dir).unwrap_or(&p).display().to_string()
            };
            // Directories are listed with a trailing '/', as condor_submit does.
            if p.is_dir() && !shown.ends_with('/') {
                shown.push('/');
            }
            found.push(shown);
        }
        found.sort();
        for f in found {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let p = |s: &str| parse(s, None).unwrap();
        assert_eq!(p("").count, "");
        assert_eq!(p("3").count, "3");
        let q = p("3 in (A, B)");
        assert_eq!(
            (q.count.as_str(), q.vars.clone()),
            ("3", vec!["Item".to_string()])
        );
        assert_eq!(q.source, ItemSource::In(vec!["A".into(), "B".into()]));
        let q = p("name in A, B C");
        assert_eq!(q.vars, vec!["name"]);
        assert_eq!(
            q.source,
            ItemSource::In(vec!["A".into(), "B".into(), "C".into()])
        );
        let q = parse("a,b from (", Some(vec![" x1, y1".into(), " x2 y2".into()])).unwrap();
        assert_eq!(q.vars, vec!["a", "b"]);
        assert_eq!(
            q.source,
            ItemSource::FromLines(vec![" x1, y1".into(), " x2 y2".into()])
        );
        let q = p("2 x in [1:3] (p q r s)");
        assert_eq!(q.slice.indices(4), vec![1, 2]);
        assert_eq!(
            p("2 v in [::2] (a b c d e)").slice.indices(5),
            vec![0, 2, 4]
        );
        assert_eq!(
            p("f matching files *.dat").source,
            ItemSource::Matching {
                globs: vec!["*.dat".into()],
                files: true,
                dirs: false
            }
        );
        assert_eq!(
            p("from seq 3 4 |").source,
            ItemSource::FromCommand("seq 3 4".into())
        );
        assert_eq!(
            p("a,b from items.lst").source,
            ItemSource::FromFile("items.lst".into())
        );
    }

    #[test]
    fn keyword_with_nothing_after_it_is_refused() {
        for line in ["x y z in", "x from", "in", "f matching"] {
            let e = parse(line, None).unwrap_err();
            assert!(
                e.starts_with("Invalid Queue count expression"),
                "{line}: {e}"
            );
        }
        // An explicit empty list is no error: it queues nothing.
        assert_eq!(
            parse("x in ()", None).unwrap().source,
            ItemSource::In(vec![])
        );
        // Regression: as condor_submit reads them, an empty one-line `from`
        // list is one empty row and an empty `matching` list no pattern.
        assert_eq!(
            parse("x from ()", None).unwrap().source,
            ItemSource::FromLines(vec![String::new()])
        );
        assert!(matches!(
            parse("x matching ()", None).unwrap().source,
            ItemSource::Matching { globs, .. } if globs.is_empty()
        ));
    }

    #[test]
    fn rows_give_the_rest_to_the_last_variable() {
        assert_eq!(
            split_row("x2 y2 extra words", 2),
            vec!["x2", "y2 extra words"]
        );
        assert_eq!(split_row("x1, y1", 2), vec!["x1", "y1"]);
        assert_eq!(split_row("only", 3), vec!["only", "", ""]);
    }
}
