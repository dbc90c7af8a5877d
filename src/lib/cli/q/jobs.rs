//! The views of `tern_q` with one line per job: `-nobatch`, `-hold`,
//! `-run` and `-grid` (condor_q's default, hold, run and grid print formats), and the note
//! on jobs that wait for their deferral time. Each shown job's full ad is
//! built, one at a time.

use std::io::Write;
use std::rc::Rc;

use super::format::{date, job_description, run_time as duration};
use super::select::{Totals, select};
use super::{CliError, Context, Options, View, write_line, write_title, write_totals};
use crate::classad::{ClassAd, Value};
use crate::queue::{JobId, Queue};
use crate::vocab::{JobStatus, Universe};

/// What a per-job view shows of one job.
struct JobLine {
    id: JobId,
    owner: Rc<str>,
    /// QDate, or for -hold EnteredCurrentStatus.
    date: i64,
    run_time: Option<i64>,
    st: [char; 2],
    prio: i64,
    size: Option<f64>,
    /// CMD, HOLD_REASON or HOST(S).
    last: String,
}

pub(super) fn show_jobs(
    q: Option<&Queue>,
    opts: &Options,
    ctx: &Context,
    totals: &mut Totals,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let view = opts.view;
    let mut jobs: Vec<JobLine> = Vec::new();
    let mut owner_rc: Option<Rc<str>> = None;
    select(
        q,
        &opts.filter,
        &ctx.me,
        true,
        totals,
        |_| {},
        |row, ad| {
            let ad = ad.expect("a full ad was asked for");
            let owner = match &owner_rc {
                Some(o) if &**o == row.owner => o.clone(),
                _ => {
                    let o: Rc<str> = Rc::from(row.owner);
                    owner_rc = Some(o.clone());
                    o
                }
            };
            let last = match view {
                View::Hold => ad.eval_str("HoldReason").unwrap_or_default(),
                View::Run => remote_host(&ad, &ctx.host),
                View::Grid => grid_columns(&ad, ctx.width.is_none()),
                _ => job_description(&ad),
            };
            jobs.push(JobLine {
                id: row.id,
                owner,
                date: if view == View::Hold {
                    row.entered
                } else {
                    row.qdate
                },
                run_time: run_time(&ad, row.status(), ctx.now),
                st: status_chars(&ad, row.status()),
                // An expression JobPrio lives in the ad, not the column.
                prio: ad.eval_int("JobPrio").unwrap_or(row.prio),
                size: memory_usage(&ad),
                last,
            });
            Ok(())
        },
    )?;
    write_title(ctx, out)?;
    // -hold is always wide in condor_q.
    let width = if view == View::Hold { None } else { ctx.width };
    for l in render_jobs(view, &jobs, width) {
        write_line(out, &l, width)?;
    }
    if !matches!(view, View::Run | View::Grid) {
        writeln!(out)?;
        write_totals(ctx, totals, out)?;
    }
    Ok(())
}

/// The header and lines of -nobatch, -hold and -run.
fn render_jobs(view: View, jobs: &[JobLine], width: Option<usize>) -> Vec<String> {
    let max_cluster = jobs.iter().map(|j| j.id.cluster).max().unwrap_or(0);
    let max_proc = jobs.iter().map(|j| j.id.proc).max().unwrap_or(0);
    let longest_owner = jobs
        .iter()
        .map(|j| j.owner.chars().count())
        .max()
        .unwrap_or(0);
    let max_mem = jobs.iter().filter_map(|j| j.size).fold(0.0f64, f64::max);
    let (mut cw, mut pw, mut ow, mut sw) = (4usize, 3usize, 14usize, 4usize);
    // condor_q's fixup_std_column_widths.
    if max_cluster >= 9999 || max_proc >= 999 || longest_owner > 14 {
        let c = max_cluster.to_string().len();
        if c > 4 && c <= 9 {
            cw = c;
        }
        let p = max_proc.to_string().len();
        if p > 3 && p <= 9 {
            pw = p;
        }
        if let Some(w) = width
            && longest_owner > 14
        {
            let max_name = (14 + w as i64 - 80).max(0) as usize;
            ow = ow.max(longest_owner.min(max_name));
        }
        sw = sw.max(format!("{max_mem:.1}").len());
    }
    let pri_w = jobs
        .iter()
        .map(|j| j.prio.to_string().len())
        .max()
        .unwrap_or(0)
        .max(3);
    let id_head = format!("{:<w$}{:<pw$}", " ID", " ", w = cw + 1);
    let mut out = Vec::with_capacity(jobs.len() + 1);
    out.push(match view {
        View::Hold => format!(
            "{id_head} {:<ow$} {:<11} HOLD_REASON",
            "OWNER", "HELD_SINCE"
        ),
        View::Run => format!(
            "{id_head} {:<ow$} {:>11} {:>12} HOST(S)",
            "OWNER", "SUBMITTED", "RUN_TIME"
        ),
        View::Grid => format!(
            "{id_head} {:<ow$} {:<10} {:<27} GRID_JOB_ID",
            "OWNER", "STATUS", "GRID->MANAGER    HOST"
        ),
        _ => format!(
            "{id_head} {:<ow$} {:>11} {:>12} ST {:<pri_w$} {:<sw$} CMD",
            "OWNER", "SUBMITTED", "RUN_TIME", "PRI", "SIZE"
        ),
    });
    for j in jobs {
        let owner: String = j.owner.chars().take(ow).collect();
        let id = format!("{:>cw$}.{:<pw$}", j.id.cluster, j.id.proc);
        let run_time = j.run_time.map(duration).unwrap_or_default();
        out.push(match view {
            View::Hold => format!("{id} {owner:<ow$} {:>11} {}", date(j.date), j.last),
            View::Grid => format!("{id} {owner:<ow$} {}", j.last),
            View::Run => format!(
                "{id} {owner:<ow$} {:>11} {run_time:>12} {}",
                date(j.date),
                j.last
            ),
            _ => format!(
                "{id} {owner:<ow$} {:>11} {run_time:>12} {}{} {:<pri_w$} {:>sw$} {}",
                date(j.date),
                j.st[0],
                j.st[1],
                j.prio,
                j.size.map(|s| format!("{s:.1}")).unwrap_or_default(),
                j.last
            ),
        });
    }
    out
}

/// The STATUS, GRID->MANAGER HOST and GRID_JOB_ID columns of -grid, as
/// condor_q 24.0 renders them (`render_grid_status`,
/// `local_render_grid_resource`, `render_grid_job_id`): the resource as
/// `type->manager host` (`batch->[?] slurm`, `condor->pool schedd`), cut
/// to 36 characters unless the output is wide; the job id's last word from
/// its first `/` (`/20240501/4242`, `12.0`).
fn grid_columns(ad: &Rc<ClassAd>, wide: bool) -> String {
    let status = match ad.eval("GridJobStatus") {
        Value::Str(s) => s.to_string(),
        Value::Int(i) => match i {
            1 => "IDLE",
            2 => "RUNNING",
            3 => "REMOVED",
            4 => "COMPLETED",
            5 => "HELD",
            6 => "XFER_OUT",
            7 => "SUSPENDED",
            _ => "",
        }
        .to_string(),
        _ => String::new(),
    };
    let resource = ad
        .eval_str("GridResource")
        .map(|r| grid_resource(&r, wide))
        .unwrap_or_default();
    let job_id = ad
        .eval_str("GridJobId")
        .map(|g| {
            let last = g.rsplit(' ').next().unwrap_or("");
            let after = last.find("://").map(|i| i + 3).unwrap_or(0);
            match last[after..].find('/') {
                Some(i) => last[after + i..].to_string(),
                None => last[after..].to_string(),
            }
        })
        .unwrap_or_default();
    format!("{status:<10} {resource:<27} {job_id}")
}

fn grid_resource(r: &str, wide: bool) -> String {
    let (grid_type, host_at) = match r.find(' ') {
        Some(i) => (&r[..i], i + 1),
        None => ("globus", 0),
    };
    let rest = &r[host_at..];
    let (mgr, host_end) = match rest.find(' ') {
        Some(i) => (rest[i + 1..].replace(' ', "/"), i),
        None => match rest.find("jobmanager-") {
            Some(i) => (rest[i + 11..].replace(' ', "/"), i),
            None => ("[?]".to_string(), rest.len()),
        },
    };
    let h0 = rest.find("://").map(|i| i + 3).unwrap_or(0);
    let h1 = rest[h0..]
        .find([':', '/'])
        .map(|i| h0 + i)
        .unwrap_or(rest.len())
        .min(host_end);
    let host = rest.get(h0..h1.max(h0)).unwrap_or("");
    let mut out = format!("{grid_type}->{mgr} {host}");
    if !wide {
        out = out.chars().take(36).collect();
    }
    out
}

/// A boolean attribute that is true (numbers are not booleans here).
fn ad_true(ad: &Rc<ClassAd>, name: &str) -> bool {
    ad.eval_bool(name) == Some(true)
}

/// RUN_TIME as condor_q computes it by default (the current run): for a
/// running job the time since its shadow started, for an idle or held job
/// its last run's wall-clock time, else 0. No RemoteUserCpu, no value.
fn run_time(ad: &Rc<ClassAd>, st: Option<JobStatus>, now: i64) -> Option<i64> {
    ad.eval_real("RemoteUserCpu")?;
    let running = st.is_some_and(JobStatus::is_active);
    let start = ad
        .eval_real("ShadowBday")
        .or_else(|| ad.eval_real("JobCurrentStartDate"))
        .unwrap_or(0.0) as i64;
    Some(if running && start != 0 {
        now - start
    } else if matches!(st, Some(JobStatus::Idle | JobStatus::Held)) {
        ad.eval_real("LastRemoteWallClockTime").unwrap_or(0.0) as i64
    } else {
        0
    })
}

/// ST: the status letter, with file transfer shown as `<`, `>`, `<q`, `q>`.
fn status_chars(ad: &Rc<ClassAd>, st: Option<JobStatus>) -> [char; 2] {
    let letter = st.map_or("?", JobStatus::letter);
    let mut c = [letter.chars().next().unwrap_or('?'), ' '];
    let queued = ad_true(ad, "TransferQueued");
    if ad_true(ad, "TransferringInput") {
        c = ['<', if queued { 'q' } else { ' ' }];
    }
    if ad_true(ad, "TransferringOutput") || st == Some(JobStatus::TransferringOutput) {
        c = [if queued { 'q' } else { ' ' }, '>'];
    }
    c
}

/// SIZE: MemoryUsage (MiB), else ImageSize (KiB) in MiB.
fn memory_usage(ad: &Rc<ClassAd>) -> Option<f64> {
    // A real is cut to whole MiB or KiB before the division, as
    // condor_q's EvaluateAttrInt does.
    ad.eval_int("MemoryUsage")
        .map(|m| m as f64)
        .or_else(|| ad.eval_int("ImageSize").map(|k| k as f64 / 1024.0))
}

/// HOST(S): where the job runs; this machine for scheduler and local
/// universe jobs.
fn remote_host(ad: &Rc<ClassAd>, host: &str) -> String {
    let here = ad
        .eval_int("JobUniverse")
        .and_then(Universe::from_code)
        .is_some_and(Universe::runs_on_submit_host);
    let h = if here {
        host.to_string()
    } else {
        ad.eval_str("RemoteHost").unwrap_or_default()
    };
    // Beyond condor_q: a deferred job's shadow may still be waiting.
    match ad.eval("DeferralWaitUntil") {
        Value::Int(t) if t > crate::clock::now() => format!("{h} (waits until {})", local_stamp(t)),
        _ => h,
    }
}

/// Beyond condor_q: a job that shows Running while its shadow waits for
/// its DeferralTime is named, with the time it starts, so that it can be
/// told from one that executes.
pub(super) fn waiting_note(
    q: Option<&Queue>,
    opts: &Options,
    ctx: &Context,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let Some(q) = q else { return Ok(()) };
    let mut lines: Vec<String> = Vec::new();
    for row in q.rows_in(&[JobStatus::Running, JobStatus::Suspended])? {
        let ad: Rc<ClassAd> = Rc::new(q.full_ad(&row)?);
        if !opts.filter.matches_row(&row, &ad, &ctx.me) {
            continue;
        }
        if let Value::Int(t) = ad.eval("DeferralWaitUntil")
            && t > ctx.now
        {
            lines.push(format!(
                "{} is waiting for its deferral time: it executes at {}",
                row.id,
                local_stamp(t)
            ));
        }
    }
    if !lines.is_empty() {
        writeln!(out)?;
        for l in lines {
            writeln!(out, "{l}")?;
        }
    }
    Ok(())
}

/// A time as `11/22 01:30:00`, local.
fn local_stamp(t: i64) -> String {
    use chrono::TimeZone;
    match chrono::Local.timestamp_opt(t, 0) {
        chrono::LocalResult::Single(d) | chrono::LocalResult::Ambiguous(d, _) => {
            d.format("%m/%d %H:%M:%S").to_string()
        }
        chrono::LocalResult::None => t.to_string(),
    }
}

#[cfg(test)]
mod grid_tests {
    use super::*;

    #[test]
    fn grid_columns_render_as_condor_q_does() {
        assert_eq!(grid_resource("batch slurm", false), "batch->[?] slurm");
        assert_eq!(
            grid_resource("condor sched pool", false),
            "condor->pool sched"
        );
        assert_eq!(
            grid_resource("condor /spool/x local", false),
            "condor->local "
        );
        let ad = Rc::new(
            crate::classad::parse_ad(
                r#"[GridJobStatus = "RUNNING"; GridResource = "batch slurm"; GridJobId = "batch slurm s slurm/20240501/4242"]"#,
            )
            .unwrap(),
        );
        assert_eq!(
            grid_columns(&ad, false),
            "RUNNING    batch->[?] slurm            /20240501/4242"
        );
    }
}
