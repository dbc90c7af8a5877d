//! One frame of condor_watch_q 24.0, byte for byte: the table with a bar
//! per row, the total bar, the summary line and the "Updated at" line, cut
//! to the terminal's height, and the bytes that redraw it in place.
//!
//! Lengths are counted in characters, as Python counts them; the escape
//! codes of colour are not counted where upstream strips them and are
//! where it does not (a row cut to the width loses visible characters to
//! its colour codes, as upstream's does).

use std::path::{Component, Path, PathBuf};

use super::{Counts, GroupBy, Row, State};

const RESET: &str = "\x1b[0m";

/// The bar's characters and colours, in the order 24.0 draws them.
const BAR_ORDER: [(State, char, u8); 6] = [
    (State::Done, '#', 32),
    (State::Run, '=', 36),
    (State::Idle, '-', 93),
    (State::Held, '!', 31),
    (State::Suspended, '!', 31),
    (State::Removed, '!', 31),
];

/// The states the summary names, in its order, with their words.
const SUMMARY: [(State, &str); 6] = [
    (State::Done, "completed"),
    (State::Removed, "removed"),
    (State::Idle, "idle"),
    (State::Run, "running"),
    (State::Held, "held"),
    (State::Suspended, "suspended"),
];

/// The message shown while a frame is computed, then erased.
pub const PROCESSING: &str = "Processing new events...";

/// What the summary line shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SummaryType {
    Totals,
    Percentages,
}

/// Which sections a frame has and how it is drawn.
#[derive(Clone, Copy, Debug)]
pub struct Look {
    pub table: bool,
    pub progress: bool,
    pub row_progress: bool,
    /// `None`: no summary line.
    pub summary: Option<SummaryType>,
    pub updated_at: bool,
    pub color: bool,
    /// Frames replace each other; when false each ends with `...`.
    pub refresh: bool,
    /// No `-exit` condition was given, so the frame says how to stop.
    pub footer: bool,
}

/// The terminal's size in characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    pub columns: usize,
    pub rows: usize,
}

/// The number of characters a line shows (its escape codes left out).
pub fn visible_len(s: &str) -> usize {
    strip_ansi(s).chars().count()
}

/// `s` without its ANSI escape sequences (CSI sequences and the two-byte
/// escapes), as upstream's `strip_ansi` removes them.
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('[') => {
                chars.next();
                // Parameters and intermediates, then one final byte.
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(&c) if ('@'..='Z').contains(&c) || ('\\'..='_').contains(&c) => {
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

fn paint(text: &str, code: u8) -> String {
    format!("\x1b[{code}m{text}{RESET}")
}

/// A progress bar `[...]` for `counts`, at most 79 characters wide and no
/// wider than `width`. Each state gets its share of the inside, rounded
/// down; what is left goes to the longest part (the first on a tie), so a
/// total larger than the counted jobs also lands there.
pub fn bar(counts: &Counts, width: usize, color: bool) -> String {
    let inner = width.min(79) as i64 - 2;
    let total = counts.total as f64;
    let mut lengths: Vec<i64> = BAR_ORDER
        .iter()
        .map(|(s, _, _)| {
            let n = counts.get(*s);
            let share = if n == 0 || counts.total == 0 {
                0.0
            } else {
                n as f64 / total
            };
            (inner as f64 * share) as i64
        })
        .collect();
    let mut longest = 0;
    for (i, &l) in lengths.iter().enumerate() {
        if l > lengths[longest] {
            longest = i;
        }
    }
    lengths[longest] += inner - lengths.iter().sum::<i64>();
    let mut out = String::from("[");
    for ((_, ch, code), len) in BAR_ORDER.iter().zip(lengths) {
        let part: String = std::iter::repeat_n(*ch, len.max(0) as usize).collect();
        if color {
            out.push_str(&paint(&part, *code));
        } else {
            out.push_str(&part);
        }
    }
    out.push(']');
    out
}

/// A row's colour: red with a held job, green when all are done, cyan
/// with a running job, yellow with an idle one, else bright white.
fn row_color(c: &Counts) -> u8 {
    if c.get(State::Held) > 0 {
        31
    } else if c.get(State::Done) == c.total {
        32
    } else if c.get(State::Run) > 0 {
        36
    } else if c.get(State::Idle) > 0 {
        33
    } else {
        97
    }
}

/// A column of the table.
#[derive(Clone, Copy, PartialEq)]
enum Column {
    Key,
    State(State),
    Total,
    JobIds,
}

impl Column {
    fn header(self, by: GroupBy) -> &'static str {
        match self {
            Column::Key => by.header(),
            Column::State(s) => s.header(),
            Column::Total => "TOTAL",
            Column::JobIds => "JOB_IDS",
        }
    }

    fn left(self) -> bool {
        matches!(self, Column::Key | Column::JobIds)
    }

    /// The cell's text, with the space every cell ends with.
    fn cell(self, row: &Row) -> String {
        let count = |n: usize| {
            if n == 0 {
                "- ".to_string()
            } else {
                format!("{n} ")
            }
        };
        match self {
            // A batch name or log path is another user's text: it is
            // shown, never obeyed, by the terminal.
            Column::Key => format!("{} ", crate::sys::term::show_controls(&row.key)),
            Column::State(s) => count(row.counts.get(s)),
            Column::Total => count(row.counts.total),
            Column::JobIds => format!("{} ", row.job_ids),
        }
    }
}

fn pad(text: &str, width: usize, left: bool) -> String {
    let fill = width.saturating_sub(text.chars().count());
    let spaces = " ".repeat(fill);
    if left {
        format!("{text}{spaces}")
    } else {
        format!("{spaces}{text}")
    }
}

/// The table: its header, then one line per row, each with its bar when
/// `row_bars` and more than 10 columns are left after the row; otherwise
/// each row is cut to `columns` characters, escape codes included. A state
/// column shows when some row has such a job (IDLE, RUN and DONE always
/// do); JOB_IDS shows when there is a row.
pub fn table(
    rows: &[Row],
    by: GroupBy,
    columns: usize,
    row_bars: bool,
    color: bool,
) -> Vec<String> {
    let mut cols = vec![Column::Key];
    for s in State::ALL {
        let always = matches!(s, State::Idle | State::Run | State::Done);
        if always || rows.iter().any(|r| r.counts.get(s) > 0) {
            cols.push(Column::State(s));
        }
    }
    cols.push(Column::Total);
    if !rows.is_empty() {
        cols.push(Column::JobIds);
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| cols.iter().map(|c| c.cell(r)).collect())
        .collect();
    let widths: Vec<usize> = cols
        .iter()
        .enumerate()
        .map(|(i, c)| {
            cells
                .iter()
                .map(|r| r[i].chars().count())
                .chain([c.header(by).len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let join = |texts: Vec<String>| texts.join("  ");
    let header = join(
        cols.iter()
            .zip(&widths)
            .map(|(c, &w)| pad(c.header(by), w, c.left()))
            .collect(),
    );
    let mut lines = vec![header.trim_end().to_string()];
    let body: Vec<String> = cells
        .iter()
        .zip(rows)
        .map(|(r, row)| {
            let text = join(
                cols.iter()
                    .zip(&widths)
                    .zip(r)
                    .map(|((c, &w), t)| pad(t, w, c.left()))
                    .collect(),
            );
            if color {
                paint(&text, row_color(&row.counts))
            } else {
                text
            }
        })
        .collect();
    let left = columns as i64 - body.first().map_or(0, |l| visible_len(l)) as i64;
    for (line, row) in body.into_iter().zip(rows) {
        if row_bars && left > 10 {
            lines.push(format!("{line}{}", bar(&row.counts, left as usize, color)));
        } else {
            lines.push(line.chars().take(columns).collect());
        }
    }
    lines
}

/// `Total: N jobs; ` and the non-zero counts, their words cut shorter
/// (down to two characters) until the line fits in `width`.
pub fn summary_totals(c: &Counts, width: usize) -> String {
    let mut cut = 10;
    loop {
        cut -= 1;
        let items: Vec<String> = SUMMARY
            .iter()
            .filter(|(s, _)| c.get(*s) > 0)
            .map(|(s, w)| format!("{} {}", c.get(*s), &w[..w.len().min(cut)]))
            .collect();
        let line = format!("Total: {} jobs; {}", c.total, items.join(", "));
        if line.chars().count() <= width || cut <= 2 {
            return line;
        }
    }
}

/// `Total: N jobs; ` and every state's share, rounded half to even as
/// Python rounds. Upstream means to shorten the words when the line is too
/// wide but measures the wrong thing, so it never does; neither does this.
pub fn summary_percentages(c: &Counts) -> String {
    let items: Vec<String> = SUMMARY
        .iter()
        .map(|(s, w)| {
            let n = c.get(*s);
            let p = if n == 0 || c.total == 0 {
                0.0
            } else {
                (100.0 * (n as f64 / c.total as f64)).round_ties_even()
            };
            format!("{p:.0}% {w}")
        })
        .collect();
    format!("Total: {} jobs; {}", c.total, items.join(", "))
}

/// One whole frame, without its final newline: the sections `look` asks
/// for, a blank line between them, cut to the terminal's height, then
/// `...` when frames are appended and the footer when there is no `-exit`.
pub fn frame(
    rows: &[Row],
    totals: &Counts,
    by: GroupBy,
    look: &Look,
    size: Size,
    updated: &str,
) -> String {
    let mut lines: Vec<String> = Vec::new();
    if look.table {
        lines.extend(table(rows, by, size.columns, look.row_progress, look.color));
        lines.push(String::new());
    }
    if look.progress {
        lines.push(bar(totals, size.columns, look.color));
        lines.push(String::new());
    }
    match look.summary {
        Some(SummaryType::Totals) => lines.push(summary_totals(totals, size.columns)),
        Some(SummaryType::Percentages) => lines.push(summary_percentages(totals)),
        None => {}
    }
    if look.summary.is_some() {
        lines.push(String::new());
    }
    if look.updated_at {
        lines.push(format!("Updated at {updated}"));
        lines.push(String::new());
    }
    let mut text = if lines.len() > size.rows {
        lines.truncate(size.rows.saturating_sub(1));
        lines.pop();
        let mut t = lines.join("\n");
        t.push_str("\nInsufficient terminal height to display full output!");
        t
    } else {
        lines.pop();
        lines.join("\n")
    };
    if !look.refresh {
        text.push_str("\n...");
    }
    if look.footer {
        text.push_str("\nInput ^C to exit");
    }
    text
}

/// The bytes that take the cursor back over `previous` (a frame as
/// printed, its newline after it) and blank it: up to its first line,
/// each line overwritten by spaces, and up again.
pub fn erase(previous: &str) -> String {
    let plain = strip_ansi(previous);
    let lines: Vec<&str> = plain.lines().collect();
    let up = format!("\x1b[{}A\r", lines.len());
    let blank: Vec<String> = lines
        .iter()
        .map(|l| " ".repeat(l.chars().count()))
        .collect();
    format!("{up}{}\n{up}", blank.join("\n"))
}

/// The bytes that erase [`PROCESSING`] from its line.
pub fn processing_done() -> String {
    format!("\r{}\r", " ".repeat(PROCESSING.len()))
}

/// How a LOG key shows an event log's path: the shortest of its absolute
/// form, `~/` plus its path from home, and `./` plus its path from the
/// working directory (unless that climbs out of it); optionally with each
/// directory cut to a somewhat-unique prefix (`-abbreviate`).
#[derive(Clone, Debug)]
pub struct PathStyle {
    pub home: Option<PathBuf>,
    pub cwd: PathBuf,
    pub abbreviate: bool,
}

impl PathStyle {
    /// The key for a cluster's log; a cluster tern found in the queue
    /// without a log is grouped under `-`.
    pub fn key(&self, path: Option<&Path>) -> String {
        let Some(path) = path else {
            return "-".to_string();
        };
        let nice = self.nice(path);
        if self.abbreviate {
            self.abbreviated(&nice)
        } else {
            nice
        }
    }

    fn nice(&self, path: &Path) -> String {
        let abs = normalize(&self.cwd.join(path));
        let mut options = vec![abs.to_string_lossy().into_owned()];
        if let Some(home) = &self.home {
            options.push(join_rel("~", &relpath(&abs, &normalize(home))));
        }
        let rel = relpath(&abs, &normalize(&self.cwd));
        if !rel.starts_with("../") {
            options.push(join_rel(".", &rel));
        }
        // The first of the shortest, as Python's min.
        let mut best = options[0].clone();
        for o in options {
            if o.chars().count() < best.chars().count() {
                best = o;
            }
        }
        best
    }

    /// Cuts every directory component of `shown` (but `/`, `~` and `.`) to
    /// one more character than the prefix shared by all the names in its
    /// parent directory. A directory that cannot be listed keeps its name.
    fn abbreviated(&self, shown: &str) -> String {
        let parts = split_all(shown);
        let mut out: Vec<String> = Vec::new();
        let mut so_far = PathBuf::new();
        for (i, part) in parts.iter().enumerate() {
            if i + 1 == parts.len() {
                out.push(part.clone());
                break;
            }
            so_far = match part.as_str() {
                "~" => self.home.clone().unwrap_or_else(|| PathBuf::from("~")),
                p => so_far.join(p),
            };
            if part == "~" || part == "." {
                out.push(part.clone());
                continue;
            }
            let dir = self.cwd.join(so_far.parent().unwrap_or(Path::new("/")));
            let names: Option<Vec<String>> = std::fs::read_dir(&dir).ok().map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            });
            let keep = match names {
                Some(names) if names.len() == 1 => 1,
                Some(names) => common_prefix(&names) + 1,
                None => part.chars().count(),
            };
            out.push(part.chars().take(keep).collect());
        }
        join_parts(&out)
    }
}

/// `p` with `.` and `..` resolved lexically, as `os.path.abspath` does.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    out
}

/// `os.path.relpath(path, start)` for two normalized absolute paths.
fn relpath(path: &Path, start: &Path) -> String {
    let p: Vec<_> = path.components().collect();
    let s: Vec<_> = start.components().collect();
    let common = p.iter().zip(&s).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_string(); s.len() - common];
    parts.extend(
        p[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    }
}

fn join_rel(base: &str, rel: &str) -> String {
    format!("{base}/{rel}")
}

/// A shown path's components: `/` first for an absolute one.
fn split_all(shown: &str) -> Vec<String> {
    let mut parts = Vec::new();
    if shown.starts_with('/') {
        parts.push("/".to_string());
    }
    parts.extend(
        shown
            .split('/')
            .filter(|p| !p.is_empty())
            .map(str::to_string),
    );
    parts
}

fn join_parts(parts: &[String]) -> String {
    let mut out = String::new();
    for p in parts {
        if !out.is_empty() && !out.ends_with('/') {
            out.push('/');
        }
        out.push_str(p);
    }
    out
}

/// The length in characters of the prefix every name shares.
fn common_prefix(names: &[String]) -> usize {
    let Some(first) = names.first() else {
        return 0;
    };
    let mut n = first.chars().count();
    for other in &names[1..] {
        n = first
            .chars()
            .zip(other.chars())
            .take(n)
            .take_while(|(a, b)| a == b)
            .count();
    }
    n
}
