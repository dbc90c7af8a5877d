//! `tern_job_router`: one pass of the job router (see [`crate::router`]).
//!
//! There is no daemon: cron runs it (`* * * * * "$HOME/.cargo/bin/tern_job_router"`) and the
//! negotiation pass starts it in the background when routes are
//! configured and there are idle or routed jobs. A lock in SPOOL keeps two
//! passes from running at once; a pass that finds it taken does nothing.

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use super::env::ToolEnv;
use super::jobsel::parse_id;
use super::{CliError, parse_args, run_tool};
use crate::queue::JobId;
use crate::router::config::RouterConfig;
use crate::router::pass;

/// Run one pass of the job router: route idle jobs that match a route in
/// JOB_ROUTER_ROUTE_NAMES to routed copies, mirror the copies' progress
/// into the originals, and finish the jobs whose copies are done.
#[derive(Parser, Debug)]
#[command(
    name = "tern_job_router",
    version,
    after_help = "Examples:\n  tern_job_router\n  tern_job_router -verbose\n  tern_job_router -dry-run 12.0\n\nFrom cron (by its path: cron's PATH is /usr/bin:/bin):\n  * * * * * \"$HOME/.cargo/bin/tern_job_router\""
)]
pub struct Args {
    /// Show, for job CLUSTER.PROC, each route in order: whether it matches,
    /// whether it accepts jobs, and why not; change nothing
    #[arg(long, value_name = "CLUSTER.PROC")]
    pub dry_run: Option<String>,

    /// Print what the pass did (as written to JOB_ROUTER_LOG)
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

pub fn main() -> ExitCode {
    run_tool("tern_job_router", run)
}

/// The lock file a pass holds.
pub fn lock_path(spool: &std::path::Path) -> std::path::PathBuf {
    spool.join("job_router.lock")
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (args, _) = parse_args::<Args>(argv)?;
    let dry = match &args.dry_run {
        None => None,
        Some(text) => match parse_id(text) {
            Some((cluster, Some(proc))) if cluster > 0 => Some(JobId { cluster, proc }),
            _ => {
                return Err(CliError::Usage {
                    msg: format!("-dry-run takes a job id CLUSTER.PROC, not '{text}'"),
                    hint: None,
                });
            }
        },
    };
    let env = ToolEnv::open("tern_job_router")?;
    let rc = RouterConfig::load(&env.cfg).map_err(router_error)?;
    // Never silently dropped: a route that cannot be used is said on
    // stderr (as tern_config_val says a knob's problem), besides the log.
    for (name, reason) in &rc.unusable {
        note!("tern_job_router: warning: route {name} is not used: {reason}");
    }
    let now = crate::clock::now();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if let Some(id) = dry {
        for line in crate::router::dryrun::dry_run(&env.cfg, &rc, &env.spool, id, now)
            .map_err(router_error)?
        {
            writeln!(out, "{line}")?;
        }
        return Ok(());
    }
    if rc.routes.is_empty() && rc.unusable.is_empty() {
        // A router that no longer routes must not hold the transaction
        // log back from being trimmed.
        if let Some(mut q) = env.queue(false)?
            && q.conn()
                .query_row(
                    "SELECT 1 FROM followers WHERE name = ?1",
                    [pass::follower_name(&rc)],
                    |_| Ok(()),
                )
                .is_ok()
        {
            q.remove_follower(&pass::follower_name(&rc))?;
        }
        if args.verbose {
            writeln!(
                out,
                "no routes configured (JOB_ROUTER_ROUTE_NAMES is empty): nothing to do"
            )?;
        }
        return Ok(());
    }
    std::fs::create_dir_all(&env.spool).map_err(|e| CliError::Failed {
        msg: format!("cannot create {}: {e}", env.spool.display()),
        hint: None,
    })?;
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(lock_path(&env.spool))
        .map_err(|e| CliError::Failed {
            msg: format!("cannot open {}: {e}", lock_path(&env.spool).display()),
            hint: None,
        })?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            if args.verbose {
                writeln!(
                    out,
                    "another tern_job_router pass is running: nothing to do"
                )?;
            }
            return Ok(());
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(CliError::Failed {
                msg: format!("cannot lock {}: {e}", lock_path(&env.spool).display()),
                hint: None,
            });
        }
    }
    let report = pass::run(&env.cfg, &rc, &env.spool, now).map_err(router_error)?;
    // Routed copies are submits: as after tern_submit, a pass starts their
    // gridmanager (or shadows) now rather than at cron's next minute.
    if report.routed > 0
        && env.cfg.get_bool("NEGOTIATE_ON_SUBMIT", true)?
        && let Err(e) = crate::negotiator::request_pass_after_submit(&env.cfg, &env.spool)
    {
        note!("tern_job_router: warning: {e}");
    }
    if let Some(log) = env.cfg.get("JOB_ROUTER_LOG")? {
        append_log(&log, now, &report.lines);
    }
    if args.verbose {
        for line in &report.lines {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

/// Appends the pass's lines to the router's log, each with its time. A
/// log that cannot be written is a warning: the pass itself is done.
fn append_log(path: &str, now: i64, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let t = crate::sys::time::local_time(now);
    let stamp = format!(
        "{:02}/{:02}/{:02} {:02}:{:02}:{:02}",
        t.mon,
        t.mday,
        t.year % 100,
        t.hour,
        t.min,
        t.sec
    );
    let mut text = String::new();
    for l in lines {
        text.push_str(&format!("{stamp} {l}\n"));
    }
    let written = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()));
    if let Err(e) = written {
        note!("tern_job_router: warning: cannot write the log {path}: {e}");
    }
}

fn router_error(e: crate::router::RouterError) -> CliError {
    use crate::router::RouterError as R;
    match e {
        R::Queue(q) => q.into(),
        R::Config(c) => c.into(),
        other => CliError::Failed {
            msg: other.to_string(),
            hint: None,
        },
    }
}
