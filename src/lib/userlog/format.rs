//! Writing events in the classic text format, byte for byte as HTCondor's
//! `ULogEvent::formatEvent` (condor_event.cpp) writes them.

use std::fmt::Write as _;

use chrono::{Local, TimeZone};

use super::{Event, EventKind, Eviction, Exit, Resource, Rusage, Termination};

/// How the date in an event header is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DateForm {
    /// `2023-11-14 22:13:20`, local time: HTCondor's default since 8.8.
    Iso,
    /// `11/14 22:13:20`, local time, no year: the legacy form.
    Legacy,
}

/// One event as the log shows it, ending with its `...` line.
pub fn format(e: &Event) -> String {
    format_with(e, DateForm::Iso)
}

/// [`format`] with the given date form.
pub fn format_with(e: &Event, form: DateForm) -> String {
    let mut out = String::with_capacity(128);
    write_event(&mut out, e, &mut Dates::new(form));
    out
}

/// The header dates of a run of events: consecutive events usually share
/// their second, and the local-time conversion is the costly part of a
/// small event.
pub(super) struct Dates {
    form: DateForm,
    last: Option<(i64, String)>,
}

impl Dates {
    pub(super) fn new(form: DateForm) -> Dates {
        Dates { form, last: None }
    }

    fn text(&mut self, t: i64) -> &str {
        if self.last.as_ref().is_none_or(|(lt, _)| *lt != t) {
            let mut s = String::with_capacity(19);
            write_date(&mut s, t, self.form);
            self.last = Some((t, s));
        }
        &self.last.as_ref().expect("just set").1
    }
}

/// Appends one event to `out`.
pub(super) fn write_event(out: &mut String, e: &Event, dates: &mut Dates) {
    let _ = write!(
        out,
        "{:03} ({:03}.{:03}.{:03}) ",
        e.kind.number(),
        e.id.cluster,
        e.id.proc,
        e.id.subproc
    );
    out.push_str(dates.text(e.time));
    out.push(' ');
    write_body(out, &e.kind);
    out.push_str("...\n");
}

fn write_date(out: &mut String, t: i64, form: DateForm) {
    let dt = Local
        .timestamp_opt(t, 0)
        .single()
        .unwrap_or_else(|| Local.timestamp_opt(0, 0).unwrap());
    let pattern = match form {
        DateForm::Iso => "%Y-%m-%d %H:%M:%S",
        DateForm::Legacy => "%m/%d %H:%M:%S",
    };
    let _ = write!(out, "{}", dt.format(pattern));
}

/// A text that must stay on one line, as HTCondor stores reasons: `\n`
/// becomes `|`, `\r` a space.
fn line(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains(['\n', '\r']) {
        s.replace('\n', "|").replace('\r', " ").into()
    } else {
        s.into()
    }
}

fn some_line(s: &Option<String>) -> Option<std::borrow::Cow<'_, str>> {
    s.as_deref().filter(|s| !s.is_empty()).map(line)
}

fn write_body(out: &mut String, kind: &EventKind) {
    match kind {
        EventKind::Submit {
            host,
            log_notes,
            user_notes,
        } => {
            let _ = writeln!(out, "Job submitted from host: {}", line(host));
            for n in [log_notes, user_notes] {
                if let Some(n) = some_line(n) {
                    let _ = writeln!(out, "    {n}");
                }
            }
        }
        EventKind::Execute {
            host,
            slot_name,
            props,
        } => {
            let _ = writeln!(out, "Job executing on host: {}", line(host));
            if let Some(s) = some_line(slot_name) {
                let _ = writeln!(out, "\tSlotName: {s}");
            }
            let mut sorted: Vec<&(String, String)> = props.iter().collect();
            sorted.sort_by(|a, b| crate::classad::ad::cmp_names(&a.0, &b.0));
            for (n, v) in sorted {
                let _ = writeln!(out, "\t{} = {}", line(n), line(v));
            }
        }
        EventKind::Evicted {
            code,
            how,
            run_remote,
            run_local,
            sent_bytes,
            received_bytes,
            reason,
            resources,
        } => {
            match code {
                Some((c, s)) if *c != 0 => {
                    let _ = writeln!(out, "Job was evicted. Code {c} Subcode {s}");
                }
                _ => out.push_str("Job was evicted.\n"),
            }
            out.push_str(match how {
                Eviction::CpuTimes => "\t(0) CPU times\n",
                Eviction::Checkpointed => "\t(1) Job was checkpointed.\n",
                Eviction::Requeued(_) => "\t(0) Job terminated and was requeued\n",
            });
            write_rusage(out, run_remote, "Run Remote Usage");
            write_rusage(out, run_local, "Run Local Usage");
            write_bytes(out, *sent_bytes, "Run Bytes Sent By Job");
            write_bytes(out, *received_bytes, "Run Bytes Received By Job");
            if let Eviction::Requeued(exit) = how {
                match exit {
                    Exit::Normal { return_value } => {
                        let _ = writeln!(
                            out,
                            "\t(1) Normal termination (return value {return_value})"
                        );
                    }
                    Exit::Signal { signal, core_file } => {
                        let _ = writeln!(out, "\t(0) Abnormal termination (signal {signal})");
                        write_core(out, core_file);
                    }
                }
            }
            if let Some(r) = some_line(reason) {
                if matches!(how, Eviction::Requeued(_)) {
                    let _ = writeln!(out, "\t{r}");
                } else {
                    let _ = writeln!(out, "\tReason: {r}");
                }
            }
            write_resources(out, resources);
        }
        EventKind::Terminated(t) => write_termination(out, t),
        EventKind::ImageSize {
            size_kb,
            memory_usage_mb,
            resident_set_size_kb,
            proportional_set_size_kb,
        } => {
            let _ = writeln!(out, "Image size of job updated: {size_kb}");
            for (v, label) in [
                (memory_usage_mb, "MemoryUsage of job (MB)"),
                (resident_set_size_kb, "ResidentSetSize of job (KB)"),
                (proportional_set_size_kb, "ProportionalSetSize of job (KB)"),
            ] {
                if let Some(v) = v.filter(|v| *v >= 0) {
                    let _ = writeln!(out, "\t{v}  -  {label}");
                }
            }
        }
        EventKind::Aborted { reason } => {
            out.push_str("Job was aborted.\n");
            if let Some(r) = some_line(reason) {
                let _ = writeln!(out, "\t{r}");
            }
        }
        EventKind::Suspended { processes } => {
            let _ = writeln!(
                out,
                "Job was suspended.\n\tNumber of processes actually suspended: {processes}"
            );
        }
        EventKind::Unsuspended => out.push_str("Job was unsuspended.\n"),
        EventKind::Held {
            reason,
            code,
            subcode,
        } => {
            out.push_str("Job was held.\n");
            match some_line(reason) {
                Some(r) => {
                    let _ = writeln!(out, "\t{r}");
                }
                None => out.push_str("\tReason unspecified\n"),
            }
            let _ = writeln!(out, "\tCode {code} Subcode {subcode}");
        }
        EventKind::Released { reason } => {
            out.push_str("Job was released.\n");
            if let Some(r) = some_line(reason) {
                let _ = writeln!(out, "\t{r}");
            }
        }
        EventKind::Other {
            first_line,
            body,
            number: _,
        } => {
            let _ = writeln!(out, "{}", line(first_line));
            for l in body {
                // A body line that read as `...` would end the event early.
                if l.trim_end_matches('\r') == "..." {
                    let _ = writeln!(out, " {}", line(l));
                } else {
                    let _ = writeln!(out, "{}", line(l));
                }
            }
        }
    }
}

fn write_termination(out: &mut String, t: &Termination) {
    out.push_str("Job terminated.\n");
    match &t.exit {
        Exit::Normal { return_value } => {
            let _ = writeln!(
                out,
                "\t(1) Normal termination (return value {return_value})"
            );
        }
        Exit::Signal { signal, core_file } => {
            let _ = writeln!(out, "\t(0) Abnormal termination (signal {signal})");
            write_core(out, core_file);
        }
    }
    write_rusage(out, &t.run_remote, "Run Remote Usage");
    write_rusage(out, &t.run_local, "Run Local Usage");
    write_rusage(out, &t.total_remote, "Total Remote Usage");
    write_rusage(out, &t.total_local, "Total Local Usage");
    write_bytes(out, t.sent_bytes, "Run Bytes Sent By Job");
    write_bytes(out, t.received_bytes, "Run Bytes Received By Job");
    write_bytes(out, t.total_sent_bytes, "Total Bytes Sent By Job");
    write_bytes(out, t.total_received_bytes, "Total Bytes Received By Job");
    write_resources(out, &t.resources);
}

fn write_core(out: &mut String, core_file: &Option<String>) {
    match some_line(core_file) {
        Some(c) => {
            let _ = writeln!(out, "\t(1) Corefile in: {c}");
        }
        None => out.push_str("\t(0) No core file\n"),
    }
}

/// `\t\tUsr D HH:MM:SS, Sys D HH:MM:SS  -  <label>` (the second tab is
/// HTCondor's: the line before ends in one).
fn write_rusage(out: &mut String, r: &Rusage, label: &str) {
    out.push_str("\t\t");
    out.push_str(&rusage_text(r));
    let _ = writeln!(out, "  -  {label}");
}

/// `Usr D HH:MM:SS, Sys D HH:MM:SS`, as JobEventLog reports RunRemoteUsage.
pub fn rusage_text(r: &Rusage) -> String {
    fn dhms(s: i64) -> String {
        let s = s.max(0);
        format!(
            "{} {:02}:{:02}:{:02}",
            s / 86400,
            s % 86400 / 3600,
            s % 3600 / 60,
            s % 60
        )
    }
    format!("Usr {}, Sys {}", dhms(r.user), dhms(r.sys))
}

fn write_bytes(out: &mut String, v: f64, label: &str) {
    let _ = writeln!(out, "\t{v:.0}  -  {label}");
}

/// A table cell as `formatUsageAd` prints it: `%.2f` when the number has a
/// (positive) fractional part, else its integer part.
fn cell(v: Option<f64>) -> (String, bool) {
    match v {
        None => (String::new(), false),
        Some(v) if v.fract() > 0.0 => (format!("{v:.2}"), true),
        Some(v) => (format!("{}", v.trunc() as i64), false),
    }
}

fn is_bare_integer(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// The `Partitionable Resources` table: rows sorted by name ignoring case,
/// columns as wide as their widest cell, integers padded to line up with
/// the decimal points of a column that has fractions.
fn write_resources(out: &mut String, resources: &[Resource]) {
    let mut rows: Vec<&Resource> = resources.iter().filter(|r| !r.name.is_empty()).collect();
    if rows.is_empty() {
        return;
    }
    rows.sort_by(|a, b| crate::classad::ad::cmp_names(&a.name, &b.name));
    rows.dedup_by(|a, b| a.name.eq_ignore_ascii_case(&b.name));
    let mut cells: Vec<[String; 4]> = Vec::with_capacity(rows.len());
    let (mut use_f, mut req_f, mut alloc_f) = (false, false, false);
    for r in &rows {
        let (u, uf) = cell(r.usage);
        let (q, qf) = cell(r.request);
        let (a, af) = cell(r.allocated);
        use_f |= uf;
        req_f |= qf;
        alloc_f |= af;
        let s = r
            .assigned
            .as_deref()
            .map(line)
            .unwrap_or_default()
            .into_owned();
        cells.push([u, q, a, s]);
    }
    let (mut w_res, mut w_use, mut w_req, mut w_alloc, mut w_assigned) = (12, 8, 8, 0, 0);
    for (r, c) in rows.iter().zip(cells.iter_mut()) {
        for (text, frac) in c.iter_mut().zip([use_f, req_f, alloc_f, false]) {
            if frac && is_bare_integer(text) {
                text.push_str("   ");
            }
        }
        w_res = w_res.max(r.name.len());
        w_use = w_use.max(c[0].len());
        w_req = w_req.max(c[1].len());
        w_alloc = w_alloc.max(c[2].len());
        w_assigned = w_assigned.max(c[3].len());
    }
    let alloc_col = w_alloc.max(9);
    let _ = writeln!(
        out,
        "\tPartitionable Resources : {:>w_use$} {:>w_req$} {:>alloc_col$} {}",
        "Usage",
        "Request",
        if w_alloc > 0 { "Allocated" } else { "" },
        if w_assigned > 0 { "Assigned" } else { "" },
    );
    let w_label = w_res + 8;
    for (r, c) in rows.iter().zip(&cells) {
        let label = match r.name.as_str() {
            "Memory" => "Memory (MB)".to_string(),
            "Disk" => "Disk (KB)".to_string(),
            "Gpus" => "Gpus (Average)".to_string(),
            "GpusMemory" => "GpusMemory (MB)".to_string(),
            "TimeExecute" | "TimeSlotBusy" => format!("{} (s)", r.name),
            n => line(n).into_owned(),
        };
        let _ = writeln!(
            out,
            "\t   {label:<w_label$} : {:>w_use$} {:>w_req$} {:>alloc_col$} {}",
            c[0], c[1], c[2], c[3]
        );
    }
}
