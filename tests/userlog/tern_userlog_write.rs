//! `tern_userlog_write LOG`: reads one event per line on stdin (JSON, as
//! check.py describes them), appends them to LOG with tern's writer, reads
//! LOG back with tern's reader and says whether it got the same events.
//! Consecutive events in the ISO date form go in one `append` call; an
//! event with `"form": "legacy"` is written alone in the legacy `MM/DD`
//! form.
//!
//! run.sh compiles this file with rustc against the tern library cargo
//! built (and the serde_json it depends on), as tests/differential/ does
//! with its round-trip helper, so it adds no target to the package.

use std::io::{self, BufRead, Write};
use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;
use tern::userlog::{
    DateForm, Event, EventId, EventKind, Eviction, Exit, Resource, Rusage, Termination,
};

fn s(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_string)
}

fn i(v: &Value, k: &str) -> i64 {
    v.get(k).and_then(Value::as_i64).unwrap_or(0)
}

fn oi(v: &Value, k: &str) -> Option<i64> {
    v.get(k).and_then(Value::as_i64)
}

fn f(v: &Value, k: &str) -> f64 {
    v.get(k).and_then(Value::as_f64).unwrap_or(0.0)
}

fn rusage(v: &Value, k: &str) -> Rusage {
    let a = &v[k];
    Rusage {
        user: a[0].as_i64().unwrap_or(0),
        sys: a[1].as_i64().unwrap_or(0),
    }
}

fn exit(v: &Value) -> Exit {
    match v.get("normal").and_then(Value::as_i64) {
        Some(return_value) => Exit::Normal { return_value },
        None => Exit::Signal {
            signal: i(v, "signal"),
            core_file: s(v, "core"),
        },
    }
}

fn resources(v: &Value) -> Vec<Resource> {
    let num = |r: &Value, k: &str| r.get(k).and_then(Value::as_f64);
    v.get("resources")
        .and_then(Value::as_array)
        .map(|rows| {
            rows.iter()
                .map(|r| Resource {
                    name: s(r, "name").unwrap_or_default(),
                    usage: num(r, "usage"),
                    request: num(r, "request"),
                    allocated: num(r, "allocated"),
                    assigned: s(r, "assigned"),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn event(v: &Value) -> Result<Event, String> {
    let kind = match i(v, "number") {
        0 => EventKind::Submit {
            host: s(v, "host").unwrap_or_default(),
            log_notes: s(v, "log_notes"),
            user_notes: s(v, "user_notes"),
        },
        1 => EventKind::Execute {
            host: s(v, "host").unwrap_or_default(),
            slot_name: s(v, "slot_name"),
            props: v["props"]
                .as_array()
                .map(|ps| {
                    ps.iter()
                        .map(|p| {
                            (
                                p[0].as_str().unwrap_or("").to_string(),
                                p[1].as_str().unwrap_or("").to_string(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default(),
        },
        4 => EventKind::Evicted {
            code: v["code"]
                .as_array()
                .map(|c| (c[0].as_i64().unwrap_or(0), c[1].as_i64().unwrap_or(0))),
            how: match s(v, "how").as_deref() {
                Some("ckpt") => Eviction::Checkpointed,
                Some("requeued") => Eviction::Requeued(exit(&v["exit"])),
                _ => Eviction::CpuTimes,
            },
            run_remote: rusage(v, "run_remote"),
            run_local: rusage(v, "run_local"),
            sent_bytes: f(v, "sent"),
            received_bytes: f(v, "received"),
            reason: s(v, "reason"),
            resources: resources(v),
        },
        5 => EventKind::Terminated(Box::new(Termination {
            exit: exit(&v["exit"]),
            run_remote: rusage(v, "run_remote"),
            run_local: rusage(v, "run_local"),
            total_remote: rusage(v, "total_remote"),
            total_local: rusage(v, "total_local"),
            sent_bytes: f(v, "sent"),
            received_bytes: f(v, "received"),
            total_sent_bytes: f(v, "total_sent"),
            total_received_bytes: f(v, "total_received"),
            resources: resources(v),
        })),
        6 => EventKind::ImageSize {
            size_kb: i(v, "size"),
            memory_usage_mb: oi(v, "memory_usage"),
            resident_set_size_kb: oi(v, "rss"),
            proportional_set_size_kb: oi(v, "pss"),
        },
        9 => EventKind::Aborted {
            reason: s(v, "reason"),
        },
        10 => EventKind::Suspended {
            processes: i(v, "processes"),
        },
        11 => EventKind::Unsuspended,
        12 => EventKind::Held {
            reason: s(v, "reason"),
            code: i(v, "code"),
            subcode: i(v, "subcode"),
        },
        13 => EventKind::Released {
            reason: s(v, "reason"),
        },
        n => return Err(format!("no such event number {n} here")),
    };
    Ok(Event {
        id: EventId {
            cluster: i(v, "cluster"),
            proc: i(v, "proc"),
            subproc: i(v, "subproc"),
        },
        time: i(v, "time"),
        kind,
    })
}

/// `e` as the writer puts it down: execute properties and resource rows
/// sorted by name, ignoring case.
fn written_form(e: &Event) -> Event {
    let mut e = e.clone();
    let by_name = tern::classad::ad::cmp_names;
    match &mut e.kind {
        EventKind::Execute { props, .. } => props.sort_by(|a, b| by_name(&a.0, &b.0)),
        EventKind::Evicted { resources, .. } => resources.sort_by(|a, b| by_name(&a.name, &b.name)),
        EventKind::Terminated(t) => t.resources.sort_by(|a, b| by_name(&a.name, &b.name)),
        _ => {}
    }
    e
}

fn run(log: &Path) -> Result<usize, String> {
    let mut events = Vec::new();
    let mut run: Vec<Event> = Vec::new();
    for line in io::stdin().lock().lines() {
        let line = line.map_err(|e| e.to_string())?;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(&line).map_err(|e| format!("{e}: {line}"))?;
        let e = event(&v)?;
        if s(&v, "form").as_deref() == Some("legacy") {
            tern::userlog::append(log, &run).map_err(|e| e.to_string())?;
            run.clear();
            let mut file = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(log)
                .map_err(|e| e.to_string())?;
            file.write_all(tern::userlog::format_with(&e, DateForm::Legacy).as_bytes())
                .map_err(|e| e.to_string())?;
        } else {
            run.push(e.clone());
        }
        events.push(e);
    }
    tern::userlog::append(log, &run).map_err(|e| e.to_string())?;
    let back = tern::userlog::read_file(log).map_err(|e| e.to_string())?;
    if back.len() != events.len() {
        return Err(format!(
            "tern read {} events back, wrote {}",
            back.len(),
            events.len()
        ));
    }
    for (n, (w, r)) in events.iter().zip(&back).enumerate() {
        if &written_form(w) != r {
            return Err(format!("event {n} reads back as\n{r:?}\nnot\n{w:?}"));
        }
    }
    Ok(events.len())
}

fn main() -> ExitCode {
    let Some(log) = std::env::args_os().nth(1) else {
        eprintln!("usage: tern_userlog_write LOG < events.jsonl");
        return ExitCode::from(2);
    };
    match run(Path::new(&log)) {
        Ok(n) => {
            println!("tern read back all {n} events it wrote");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("tern_userlog_write: {e}");
            ExitCode::FAILURE
        }
    }
}
