//! `tern_router_history`: what the job router's routed jobs did, per
//! route, over a window of time, in the layout of HTCondor's
//! `condor_router_history`. It reads tern's history table (every routed
//! copy that left the queue, with its RouteName), not history files.
//!
//! HTCondor's script (Python 3) stops with an exception when two routes
//! have the same completed hours or a route has no completed job; tern
//! orders such routes by name, and routes without completed hours last.

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use super::env::ToolEnv;
use super::listing::ListingArgs;
use super::{CliError, parse_args, run_tool};
use crate::classad::{ClassAd, Value};
use crate::queue::Selection;

/// Summarize the routed jobs that finished in a window of time, per route:
/// the hours and number of the completed ones, and the runs aborted.
#[derive(Parser, Debug)]
#[command(
    name = "tern_router_history",
    version,
    after_help = "Examples:\n  tern_router_history\n  tern_router_history -days 7\n  tern_router_history -show_records -show_iwd\n  tern_router_history -start '2026-11-01 00:00'"
)]
pub struct Args {
    /// List each job (JobID Status Site Runtime) instead of the summary
    #[arg(long = "show_records")]
    pub show_records: bool,
    /// With -show_records, add each job's submit directory
    #[arg(long = "show_iwd")]
    pub show_iwd: bool,
    /// The window ends DAYS days ago (default 0: now)
    #[arg(long, value_name = "DAYS")]
    pub age: Option<f64>,
    /// The window covers DAYS days (default 1)
    #[arg(long, value_name = "DAYS")]
    pub days: Option<f64>,
    /// The window starts at this local time, "YYYY-MM-DD HH:MM"
    #[arg(long, value_name = "YYYY-MM-DD HH:MM")]
    pub start: Option<String>,

    /// The jobs of the window as ads (their history ads), oldest first, in
    /// place of the summary
    #[command(flatten)]
    pub listing: ListingArgs,
}

pub fn main() -> ExitCode {
    run_tool("tern_router_history", run)
}

/// One routed job that left the queue in the window.
struct Record {
    id: String,
    status: char,
    route: String,
    runtime: f64,
    iwd: String,
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (args, matches) = parse_args::<Args>(argv)?;
    let view = args.listing.view(&matches)?;
    let now = crate::clock::now_f64();
    let end = now - 86400.0 * args.age.unwrap_or(0.0);
    let start = match &args.start {
        Some(text) => parse_start(text)?,
        None => end - 86400.0 * args.days.unwrap_or(1.0),
    };
    let env = ToolEnv::open("tern_router_history")?;
    let rows = match env.queue(false)? {
        None => Vec::new(),
        Some(q) => q.history(&Selection::default(), None)?,
    };
    let mut records: Vec<(i64, Record, ClassAd)> = Vec::new();
    for (row, ad) in rows {
        let Some(route) = text(&ad, "RouteName").or_else(|| text(&ad, "RoutedFromRoute")) else {
            continue;
        };
        let cdate = match number(&ad, "CompletionDate") {
            Some(c) if c > 0.0 => c,
            _ => row.entered as f64,
        };
        if cdate < start || cdate > end {
            continue;
        }
        let status = usize::try_from(row.status)
            .ok()
            .and_then(|s| "UIRXCHE".chars().nth(s))
            .unwrap_or('?');
        records.push((
            cdate as i64,
            Record {
                id: format!("{}.{}", row.id.cluster, row.id.proc),
                status,
                route: route.replace('"', ""),
                runtime: number(&ad, "RemoteWallClockTime")
                    .unwrap_or(0.0)
                    .round_ties_even(),
                iwd: text(&ad, "SUBMIT_Iwd")
                    .or_else(|| text(&ad, "Iwd"))
                    .unwrap_or_default(),
            },
            ad,
        ));
    }
    // Oldest first, as a history file is written.
    records.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| id_key(&a.1.id).cmp(&id_key(&b.1.id)))
    });
    let ads: Vec<ClassAd> = records.iter().map(|(_, _, ad)| ad.clone()).collect();
    if let Some(text) = view.render(&ads) {
        std::io::stdout().lock().write_all(text.as_bytes())?;
        return Ok(());
    }
    let mut out = format!(
        "Routed job history from {} to {}\n\n",
        local(start),
        local(end)
    );
    if args.show_records {
        out.push_str("JobID Status Site Runtime ");
        if args.show_iwd {
            out.push_str("IWD ");
        }
        out.push('\n');
        for (_, r, _) in &records {
            out.push_str(&format!(
                "{} {} {} {} ",
                r.id, r.status, r.route, r.runtime as i64
            ));
            if args.show_iwd {
                out.push_str(&format!("{} ", r.iwd));
            }
            out.push('\n');
        }
    } else {
        out.push_str(&summary(records.iter().map(|(_, r, _)| r)));
    }
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(())
}

/// Per route: completed hours and jobs, and the other runs; sorted by
/// completed hours, most first (ties by name), then the TOTAL line.
fn summary<'a>(records: impl Iterator<Item = &'a Record>) -> String {
    struct Site {
        name: String,
        hours_c: Option<f64>,
        jobs_c: i64,
        aborted: i64,
    }
    let mut sites: Vec<Site> = Vec::new();
    for r in records {
        let i = match sites.iter().position(|s| s.name == r.route) {
            Some(i) => i,
            None => {
                sites.push(Site {
                    name: r.route.clone(),
                    hours_c: None,
                    jobs_c: 0,
                    aborted: 0,
                });
                sites.len() - 1
            }
        };
        let s = &mut sites[i];
        if r.status == 'C' {
            s.hours_c = Some(s.hours_c.unwrap_or(0.0) + r.runtime / 3600.0);
            s.jobs_c += 1;
        } else {
            s.aborted += 1;
        }
    }
    sites.sort_by(|a, b| match (a.hours_c, b.hours_c) {
        (Some(x), Some(y)) => y.total_cmp(&x).then_with(|| a.name.cmp(&b.name)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.name.cmp(&b.name),
    });
    let mut out = format!(
        "{:<15} {:>5} {:>7} {:>7}\n",
        "Site", "Hours", "Jobs", "Runs"
    );
    out.push_str(&format!(
        "{:<15} {:>5} {:>7} {:>5}\n",
        "", "", "Completed", "Aborted"
    ));
    let dashes = "-".repeat(55);
    out.push_str(&dashes);
    out.push('\n');
    let line = |name: &str, hours: f64, jobs: i64, aborted: i64| {
        format!(
            "{:<15} {:>5} {:>7} {:>5}\n",
            name,
            hours.round_ties_even() as i64,
            jobs,
            aborted
        )
    };
    let (mut th, mut tj, mut ta) = (0.0, 0, 0);
    for s in &sites {
        let h = s.hours_c.unwrap_or(0.0);
        out.push_str(&line(&s.name, h, s.jobs_c, s.aborted));
        th += h;
        tj += s.jobs_c;
        ta += s.aborted;
    }
    out.push_str(&dashes);
    out.push('\n');
    out.push_str(&line("TOTAL", th, tj, ta));
    out
}

fn id_key(id: &str) -> (i64, i64) {
    let (c, p) = id.split_once('.').unwrap_or((id, "0"));
    (c.parse().unwrap_or(0), p.parse().unwrap_or(0))
}

fn text(ad: &ClassAd, name: &str) -> Option<String> {
    match ad.get(name).and_then(|e| e.literal_value()) {
        Some(Value::Str(s)) => Some(s.to_string()),
        _ => None,
    }
}

fn number(ad: &ClassAd, name: &str) -> Option<f64> {
    match ad.get(name).and_then(|e| e.literal_value()) {
        Some(Value::Int(i)) => Some(*i as f64),
        Some(Value::Real(r)) => Some(*r),
        _ => None,
    }
}

/// `%Y-%m-%d %H:%M` in local time.
fn local(t: f64) -> String {
    let l = crate::sys::time::local_time(t.floor() as i64);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}",
        l.year, l.mon, l.mday, l.hour, l.min
    )
}

/// `-start "YYYY-MM-DD HH:MM"` as local time (DST as the C library
/// decides it, as HTCondor's script asks for).
fn parse_start(text: &str) -> Result<f64, CliError> {
    let bad = || CliError::Usage {
        msg: format!("-start '{text}' is not a local time \"YYYY-MM-DD HH:MM\""),
        hint: Some("for example -start '2026-11-01 08:00'".into()),
    };
    let (date, time) = text.trim().split_once(' ').ok_or_else(bad)?;
    let d: Vec<i32> = date
        .split('-')
        .map(|x| x.parse().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    let t: Vec<i32> = time
        .trim()
        .split(':')
        .map(|x| x.parse().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    if d.len() != 3
        || t.len() != 2
        || !(1..=12).contains(&d[1])
        || !(1..=31).contains(&d[2])
        || !(0..24).contains(&t[0])
        || !(0..60).contains(&t[1])
    {
        return Err(bad());
    }
    let midnight = crate::sys::time::local_midnight(d[0] - 1900, d[1], d[2]);
    Ok((midnight + i64::from(t[0]) * 3600 + i64::from(t[1]) * 60) as f64)
}
