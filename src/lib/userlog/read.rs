//! Reading the classic text format back into events, accepting what
//! HTCondor's own reader (`ULogEvent::readEvent` and friends in
//! condor_event.cpp) accepts for these events: both date forms, optional
//! sub-seconds and `Z`, optional trailing lines, older bodies without byte
//! counts. Lines HTCondor's reader ignores at the end of a body are ignored
//! here too; a body that lacks what HTCondor requires is an error naming
//! its line.

use std::sync::OnceLock;

use chrono::{Datelike, Local, NaiveDate, NaiveDateTime, TimeZone, Utc};
use regex::Regex;

use super::{Event, EventId, EventKind, Eviction, Exit, Resource, Rusage, Termination};

/// A log that does not read as events. Lines count from 1.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReadError {
    #[error(
        "line {line}: expected an event header like '000 (1.000.000) 2024-01-31 12:00:00 ...', found '{text}'"
    )]
    Header { line: usize, text: String },
    #[error("line {line}: event {number:03}: {msg}")]
    Body {
        line: usize,
        number: u32,
        msg: String,
    },
    #[error("line {line}: event {number:03} does not end with a '...' line")]
    Unterminated { line: usize, number: u32 },
}

/// Reads every event of a log's text.
pub fn read(text: &str) -> Result<Vec<Event>, ReadError> {
    read_events(text, false).map(|(events, _)| events)
}

/// Reads the complete events at the start of `text` and says how many
/// bytes they take. An event still being written at the end (its `...`
/// line not there yet, or its last line without a newline) is left out
/// rather than an error, so a log can be followed while others append.
pub fn read_complete(text: &str) -> Result<(Vec<Event>, usize), ReadError> {
    read_events(text, true)
}

/// One line: its number, its text without the line end, and whether it
/// had a newline.
struct Line<'a> {
    no: usize,
    text: &'a str,
    complete: bool,
    end: usize,
}

fn lines(text: &str) -> impl Iterator<Item = Line<'_>> {
    let mut pos = 0;
    text.split_inclusive('\n').enumerate().map(move |(i, raw)| {
        pos += raw.len();
        let complete = raw.ends_with('\n');
        let t = raw.strip_suffix('\n').unwrap_or(raw);
        Line {
            no: i + 1,
            text: t.strip_suffix('\r').unwrap_or(t),
            complete,
            end: pos,
        }
    })
}

fn read_events(text: &str, partial: bool) -> Result<(Vec<Event>, usize), ReadError> {
    let mut events = Vec::new();
    let mut used = 0;
    let mut it = lines(text).peekable();
    let mut last_date = None;
    while let Some(h) = it.next() {
        if h.text.trim().is_empty() {
            if h.complete || !partial {
                used = h.end;
            }
            continue;
        }
        if partial && !h.complete {
            break;
        }
        let header = parse_header(h.text, &mut last_date).ok_or_else(|| ReadError::Header {
            line: h.no,
            text: h.text.to_string(),
        })?;
        let mut body: Vec<(usize, &str)> = Vec::new();
        let mut closed = None;
        for l in it.by_ref() {
            if l.text == "..." {
                closed = Some(l);
                break;
            }
            body.push((l.no, l.text));
        }
        let number = header.number;
        match closed {
            Some(l) if l.complete || !partial => {
                let kind = parse_body(number, h.no, header.first, &body)?;
                events.push(Event {
                    id: header.id,
                    time: header.time,
                    kind,
                });
                used = l.end;
            }
            _ if partial => break,
            _ => {
                return Err(ReadError::Unterminated { line: h.no, number });
            }
        }
    }
    Ok((events, used))
}

struct Header<'a> {
    number: u32,
    id: EventId,
    time: i64,
    first: &'a str,
}

/// `NNN (C.P.S) DATE TIME first line`, DATE `YYYY-MM-DD` or `MM/DD`, or
/// one `YYYY-MM-DDTHH:MM:SS` token; the time may carry `.mmm` and `Z`.
///
/// `last` remembers the previous header's date text and time: the
/// conversion from local time is the costly part of a small event.
fn parse_header<'a>(s: &'a str, last: &mut Option<(&'a str, i64)>) -> Option<Header<'a>> {
    let b = s.as_bytes();
    if b.len() < 4 || !b[..3].iter().all(u8::is_ascii_digit) || b[3] != b' ' {
        return None;
    }
    let number: u32 = s[..3].parse().ok()?;
    let rest = s[4..].strip_prefix('(')?;
    let (ids, rest) = rest.split_once(") ")?;
    let mut parts = ids.split('.');
    let mut next_id = || -> Option<i64> { parts.next()?.parse().ok() };
    let id = EventId {
        cluster: next_id()?,
        proc: next_id()?,
        subproc: next_id()?,
    };
    if parts.next().is_some() {
        return None;
    }
    let (date, after_date) = rest.split_once(' ').unwrap_or((rest, ""));
    let rest = after_date;
    let (ymd, time, rest) = if date.len() == 5 && date.as_bytes()[2] == b'/' {
        let (time, rest) = rest.split_once(' ').unwrap_or((rest, ""));
        let month: u32 = date[..2].parse().ok()?;
        let day: u32 = date[3..].parse().ok()?;
        let year = Local
            .timestamp_opt(crate::clock::now(), 0)
            .single()
            .map(|d| d.year())
            .unwrap_or(1970);
        ((year, month, day), time, rest)
    } else if date.len() == 10 {
        let (time, rest) = rest.split_once(' ').unwrap_or((rest, ""));
        (parse_ymd(date)?, time, rest)
    } else {
        let (d, t) = date.split_once('T')?;
        (parse_ymd(d)?, t, rest)
    };
    // The date and time as one slice of `s`, for the cache.
    let stamp = &s[s.len() - after_date.len() - date.len() - 1..s.len() - rest.len()];
    if let Some((text, t)) = *last
        && text == stamp
    {
        return Some(Header {
            number,
            id,
            time: t,
            first: rest,
        });
    }
    let (hms, utc) = match time.strip_suffix('Z') {
        Some(t) => (t, true),
        None => (time, false),
    };
    let hms = hms.split_once('.').map_or(hms, |(h, frac)| {
        if frac.bytes().all(|c| c.is_ascii_digit()) {
            h
        } else {
            hms
        }
    });
    let mut hp = hms.split(':');
    let mut field = || -> Option<u32> {
        let f = hp.next()?;
        if f.len() != 2 {
            return None;
        }
        f.parse().ok()
    };
    let (hh, mm, ss) = (field()?, field()?, field()?);
    if hp.next().is_some() {
        return None;
    }
    let ndt = NaiveDate::from_ymd_opt(ymd.0, ymd.1, ymd.2)?.and_hms_opt(hh, mm, ss)?;
    let time = if utc {
        Utc.from_utc_datetime(&ndt).timestamp()
    } else {
        local_timestamp(&ndt)
    };
    *last = Some((stamp, time));
    Some(Header {
        number,
        id,
        time,
        first: rest,
    })
}

fn parse_ymd(d: &str) -> Option<(i32, u32, u32)> {
    let b = d.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    Some((
        d[..4].parse().ok()?,
        d[5..7].parse().ok()?,
        d[8..].parse().ok()?,
    ))
}

/// A local wall-clock time as unix seconds, as mktime reads it: the
/// earlier of two in a repeated hour, and a time in a skipped hour as if
/// the clock had not yet moved.
fn local_timestamp(ndt: &NaiveDateTime) -> i64 {
    if let Some(t) = Local.from_local_datetime(ndt).earliest() {
        return t.timestamp();
    }
    let hour = chrono::Duration::hours(1);
    Local
        .from_local_datetime(&(*ndt - hour))
        .earliest()
        .map(|t| t.timestamp() + 3600)
        .unwrap_or_else(|| Utc.from_utc_datetime(ndt).timestamp())
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("a valid pattern"))
}

fn rusage_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        r"^\s*Usr (\d+) (\d+):(\d+):(\d+), Sys (\d+) (\d+):(\d+):(\d+)",
    )
}

fn bytes_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(
        &R,
        r"^\s*(\S+)\s+-\s+(Run|Total) Bytes (Sent|Received) By (\S+)",
    )
}

fn code_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    re(&R, r"^\s*Code (-?\d+) Subcode (-?\d+)")
}

/// The body lines of one event, read front to back.
struct Body<'a> {
    number: u32,
    header_line: usize,
    lines: &'a [(usize, &'a str)],
    next: usize,
}

impl<'a> Body<'a> {
    fn peek(&self) -> Option<(usize, &'a str)> {
        self.lines.get(self.next).copied()
    }
    fn take(&mut self) -> Option<(usize, &'a str)> {
        let l = self.peek();
        if l.is_some() {
            self.next += 1;
        }
        l
    }
    /// The line a missing line is reported at: the last one read.
    fn here(&self) -> usize {
        match self.next {
            0 => self.header_line,
            n => self.lines[n - 1].0,
        }
    }
    fn err(&self, line: usize, msg: impl Into<String>) -> ReadError {
        ReadError::Body {
            line,
            number: self.number,
            msg: msg.into(),
        }
    }
    /// The next line, which must be there.
    fn need(&mut self, what: &str) -> Result<(usize, &'a str), ReadError> {
        let here = self.here();
        self.take()
            .ok_or_else(|| self.err(here, format!("{what} is missing")))
    }
    fn rusage(&mut self, what: &str) -> Result<Rusage, ReadError> {
        let (no, l) = self.need(what)?;
        parse_rusage(l).ok_or_else(|| self.err(no, format!("expected {what}, found '{l}'")))
    }
    /// An optional reason line, trimmed; `None` when absent or blank.
    fn reason(&mut self) -> Option<String> {
        let (_, l) = self.take()?;
        let t = l.trim();
        (!t.is_empty()).then(|| t.to_string())
    }
}

/// A usage line's two times in seconds; `None` when it is not one, or when
/// a time does not fit in seconds (the fuzzer's `Usr 0 111111111113111100:00:00`).
fn parse_rusage(l: &str) -> Option<Rusage> {
    let c = rusage_re().captures(l)?;
    let seconds = |first: usize| -> Option<i64> {
        [86400, 3600, 60, 1]
            .iter()
            .enumerate()
            .try_fold(0i64, |sum, (k, unit)| {
                let n: i64 = c[first + k].parse().ok()?;
                sum.checked_add(n.checked_mul(*unit)?)
            })
    };
    Some(Rusage {
        user: seconds(1)?,
        sys: seconds(5)?,
    })
}

fn parse_body(
    number: u32,
    header_line: usize,
    first: &str,
    lines: &[(usize, &str)],
) -> Result<EventKind, ReadError> {
    let mut b = Body {
        number,
        header_line,
        lines,
        next: 0,
    };
    let expect = |prefix: &str| -> Result<&str, ReadError> {
        first.strip_prefix(prefix).ok_or_else(|| ReadError::Body {
            line: header_line,
            number,
            msg: format!("expected '{prefix}...', found '{first}'"),
        })
    };
    Ok(match number {
        0 => {
            let host = expect("Job submitted from host: ")?.to_string();
            let (mut log_notes, mut user_notes) = (None, None);
            for (i, (_, l)) in lines.iter().enumerate() {
                let t = l.trim();
                if t.starts_with('[') || t.starts_with("DAG Node: ") {
                    log_notes.get_or_insert_with(|| t.to_string());
                } else if t.starts_with("WARNING: ") {
                } else if i == 0 {
                    log_notes = Some(t.to_string());
                } else if i == 1 {
                    user_notes = Some(t.to_string());
                }
            }
            EventKind::Submit {
                host,
                log_notes: log_notes.filter(|s| !s.is_empty()),
                user_notes: user_notes.filter(|s| !s.is_empty()),
            }
        }
        1 => {
            let host = expect("Job executing on host: ")?.to_string();
            let mut slot_name = None;
            let mut props = Vec::new();
            for (i, (_, l)) in lines.iter().enumerate() {
                if i == 0
                    && let Some(s) = l.strip_prefix("\tSlotName:")
                {
                    slot_name = Some(s.trim().trim_matches('"').to_string());
                } else if let Some((n, v)) = l.split_once('=') {
                    let n = n.trim();
                    if is_attr_name(n) {
                        props.push((n.to_string(), v.trim().to_string()));
                    }
                }
            }
            EventKind::Execute {
                host,
                slot_name,
                props,
            }
        }
        4 => {
            let rest = expect("Job was evicted.")?;
            let code = code_re()
                .captures(rest)
                .and_then(|c| Some((c[1].parse().ok()?, c[2].parse().ok()?)));
            let (no, l) = b.need("the '(0) CPU times' line")?;
            let (flag, text) = parse_flag(l)
                .ok_or_else(|| b.err(no, format!("expected '(0) CPU times', found '{l}'")))?;
            let requeued = text.starts_with("Job terminated and was requeued");
            let run_remote = b.rusage("the Run Remote Usage line")?;
            let run_local = b.rusage("the Run Local Usage line")?;
            let mut bytes = [0.0; 4];
            read_bytes(&mut b, &mut bytes)?;
            let how = if requeued {
                Eviction::Requeued(read_exit(&mut b)?)
            } else if flag != 0 {
                Eviction::Checkpointed
            } else {
                Eviction::CpuTimes
            };
            let mut reason = None;
            if let Some((_, l)) = b.peek()
                && !is_table_header(l)
            {
                b.take();
                let r = l.strip_prefix("\tReason: ").unwrap_or(l).trim();
                reason = (!r.is_empty()).then(|| r.to_string());
            }
            let resources = read_table(&mut b)?;
            EventKind::Evicted {
                code,
                how,
                run_remote,
                run_local,
                sent_bytes: bytes[0],
                received_bytes: bytes[1],
                reason,
                resources,
            }
        }
        5 => {
            expect("Job terminated.")?;
            let exit = read_exit(&mut b)?;
            let run_remote = b.rusage("the Run Remote Usage line")?;
            let run_local = b.rusage("the Run Local Usage line")?;
            let total_remote = b.rusage("the Total Remote Usage line")?;
            let total_local = b.rusage("the Total Local Usage line")?;
            let mut bytes = [0.0; 4];
            read_bytes(&mut b, &mut bytes)?;
            let resources = read_table(&mut b)?;
            EventKind::Terminated(Box::new(Termination {
                exit,
                run_remote,
                run_local,
                total_remote,
                total_local,
                sent_bytes: bytes[0],
                received_bytes: bytes[1],
                total_sent_bytes: bytes[2],
                total_received_bytes: bytes[3],
                resources,
            }))
        }
        6 => {
            let n = expect("Image size of job updated: ")?;
            let size_kb = n
                .trim()
                .parse()
                .map_err(|_| b.err(header_line, format!("the image size '{n}' is not a number")))?;
            let (mut mem, mut rss, mut pss) = (None, None, None);
            while let Some((_, l)) = b.peek() {
                let Some((v, label)) = l.trim().split_once("  -  ") else {
                    break;
                };
                let Ok(v) = v.trim().parse::<i64>() else {
                    break;
                };
                let label = label.split_whitespace().next().unwrap_or("");
                let slot = if label.eq_ignore_ascii_case("MemoryUsage") {
                    &mut mem
                } else if label.eq_ignore_ascii_case("ResidentSetSize") {
                    &mut rss
                } else if label.eq_ignore_ascii_case("ProportionalSetSize") {
                    &mut pss
                } else {
                    break;
                };
                *slot = Some(v);
                b.take();
            }
            EventKind::ImageSize {
                size_kb,
                memory_usage_mb: mem,
                resident_set_size_kb: rss,
                proportional_set_size_kb: pss,
            }
        }
        9 => {
            expect("Job was aborted")?;
            EventKind::Aborted { reason: b.reason() }
        }
        10 => {
            expect("Job was suspended.")?;
            let (no, l) = b.need("the number of processes suspended")?;
            let n = l
                .trim()
                .strip_prefix("Number of processes actually suspended: ")
                .and_then(|n| n.trim().parse().ok())
                .ok_or_else(|| {
                    b.err(
                        no,
                        format!(
                            "expected 'Number of processes actually suspended: N', found '{l}'"
                        ),
                    )
                })?;
            EventKind::Suspended { processes: n }
        }
        11 => {
            expect("Job was unsuspended.")?;
            EventKind::Unsuspended
        }
        12 => {
            expect("Job was held.")?;
            let reason = b.reason().filter(|r| r != "Reason unspecified");
            let (code, subcode) = b
                .take()
                .and_then(|(_, l)| code_re().captures(l))
                .and_then(|c| Some((c[1].parse().ok()?, c[2].parse().ok()?)))
                .unwrap_or((0, 0));
            EventKind::Held {
                reason,
                code,
                subcode,
            }
        }
        13 => {
            expect("Job was released.")?;
            EventKind::Released { reason: b.reason() }
        }
        _ => EventKind::Other {
            number,
            first_line: first.to_string(),
            body: lines.iter().map(|(_, l)| l.to_string()).collect(),
        },
    })
}

fn is_attr_name(n: &str) -> bool {
    let mut c = n.chars();
    matches!(c.next(), Some(f) if f.is_ascii_alphabetic() || f == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// `(N) text` after leading white space.
fn parse_flag(l: &str) -> Option<(i64, &str)> {
    let t = l.trim_start().strip_prefix('(')?;
    let (n, text) = t.split_once(") ")?;
    Some((n.parse().ok()?, text))
}

/// `(1) Normal termination (return value N)`, or `(0) Abnormal termination
/// (signal N)` and then the core file line.
fn read_exit(b: &mut Body) -> Result<Exit, ReadError> {
    let (no, l) = b.need("the termination line")?;
    let bad = |b: &Body| {
        b.err(
            no,
            format!(
                "expected '(1) Normal termination (return value N)' or '(0) Abnormal termination (signal N)', found '{l}'"
            ),
        )
    };
    let (flag, text) = parse_flag(l).ok_or_else(|| bad(b))?;
    let number_in = |prefix: &str| -> Option<i64> {
        text.strip_prefix(prefix)?
            .split(')')
            .next()?
            .trim()
            .parse()
            .ok()
    };
    if flag != 0 {
        let return_value = number_in("Normal termination (return value ").ok_or_else(|| bad(b))?;
        return Ok(Exit::Normal { return_value });
    }
    let signal = number_in("Abnormal termination (signal ").ok_or_else(|| bad(b))?;
    let (no, l) = b.need("the core file line")?;
    let t = l.trim();
    let core_file = if let Some(p) = t.strip_prefix("(1) Corefile in: ") {
        Some(p.to_string())
    } else if t.starts_with("(0)") {
        None
    } else {
        return Err(b.err(
            no,
            format!("expected '(0) No core file' or '(1) Corefile in: PATH', found '{l}'"),
        ));
    };
    Ok(Exit::Signal { signal, core_file })
}

/// The `N  -  Run Bytes Sent By Job` lines, in any order, as many as there
/// are: `[sent, received, total sent, total received]`.
fn read_bytes(b: &mut Body, bytes: &mut [f64; 4]) -> Result<(), ReadError> {
    while let Some((no, l)) = b.peek() {
        let Some(c) = bytes_re().captures(l) else {
            break;
        };
        if &c[4] != "Job" {
            break;
        }
        let v: f64 = c[1]
            .parse()
            .map_err(|_| b.err(no, format!("the byte count '{}' is not a number", &c[1])))?;
        let i = match (&c[2], &c[3]) {
            ("Run", "Sent") => 0,
            ("Run", _) => 1,
            ("Total", "Sent") => 2,
            _ => 3,
        };
        bytes[i] = v;
        b.take();
    }
    Ok(())
}

fn is_table_header(l: &str) -> bool {
    l.starts_with("\tPartitionable ") || l.starts_with("\tResources")
}

/// The resource table, if the next line starts one. Columns are cut where
/// the header's titles end, as HTCondor's `UsageLineParser` cuts them.
/// Rows are indented by a tab and three spaces; the table ends at the first
/// line that is not a row. A cell that is not a number (HTCondor prints
/// any literal there) reads as absent.
fn read_table(b: &mut Body) -> Result<Vec<Resource>, ReadError> {
    let mut out = Vec::new();
    let Some((_, header)) = b.peek() else {
        return Ok(out);
    };
    if !is_table_header(header) {
        return Ok(out);
    }
    b.take();
    let cols = Columns::of(header);
    while let Some((_, l)) = b.peek() {
        let Some(r) = l.strip_prefix("\t   ").and_then(|_| cols.row(l)) else {
            break;
        };
        b.take();
        let num = |s: &str| -> Option<f64> { s.trim().parse().ok() };
        out.push(Resource {
            name: r.0.to_string(),
            usage: num(r.1),
            request: num(r.2),
            allocated: num(r.3),
            assigned: Some(r.4.trim())
                .filter(|s| !s.is_empty())
                .map(str::to_string),
        });
    }
    Ok(out)
}

/// Where the columns of the resource table end, counted from just after
/// the header's colon.
struct Columns {
    usage: usize,
    request: usize,
    allocated: Option<usize>,
    assigned: Option<usize>,
}

impl Columns {
    fn of(header: &str) -> Columns {
        let tbl = header.split_once(':').map_or(header, |(_, t)| t).as_bytes();
        let mut p = 0;
        let mut skip = |spaces: bool| {
            while p < tbl.len() && (tbl[p] == b' ') == spaces {
                p += 1;
            }
            p
        };
        skip(true);
        let usage = skip(false) + 1;
        skip(true);
        let request = skip(false) + 1;
        let rest_at = skip(true);
        let rest = std::str::from_utf8(&tbl[rest_at.min(tbl.len())..]).unwrap_or("");
        let (mut allocated, mut assigned) = (None, None);
        if let Some(a) = rest.find("Allocated") {
            allocated = Some(rest_at + a + 9);
            if let Some(s) = rest[a..].find("Assigned") {
                assigned = Some(rest_at + a + s);
            }
        }
        Columns {
            usage,
            request,
            allocated,
            assigned,
        }
    }

    /// A row's resource name and its usage, request, allocated and
    /// assigned texts; `None` for a line that is not a row.
    fn row<'a>(&self, l: &'a str) -> Option<(&'a str, &'a str, &'a str, &'a str, &'a str)> {
        let t = l.trim_start_matches(['\t', ' ']);
        let name_end = t.find([' ', ':']).unwrap_or(t.len());
        let name = &t[..name_end];
        let (_, tbl) = t[name_end..].split_once(':')?;
        let cut = |from: usize, to: usize| -> &'a str {
            let to = to.min(tbl.len());
            tbl.get(from.min(to)..to).unwrap_or("")
        };
        let usage = cut(0, self.usage);
        let request = cut(self.usage, self.request);
        let allocated = match self.allocated {
            Some(a) => cut(self.request, a),
            None => "",
        };
        let assigned = match self.assigned {
            Some(s) => cut(s, tbl.len()),
            None => "",
        };
        Some((name, usage, request, allocated, assigned))
    }
}
