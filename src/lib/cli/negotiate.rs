//! `tern_negotiate`: one negotiation pass (see [`crate::negotiator`]).
//!
//! Run from cron every minute as the safety net (`* * * * * "$HOME/.cargo/bin/tern_negotiate"`);
//! tern_submit and every shadow whose claim ends also start one in the
//! background, so jobs start and slots refill at once.

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use super::env::spool_dir;
use super::{CliError, parse_args, run_tool};
use crate::config::Config;
use crate::negotiator::{self, Options, Ran};
use crate::queue::{Queue, QueueError};

/// Run one negotiation pass: reconcile running jobs with their shadows,
/// apply periodic job policies, match idle jobs to this machine's slots and
/// start their shadows.
#[derive(Parser, Debug)]
#[command(
    name = "tern_negotiate",
    version,
    after_help = "Examples:\n  tern_negotiate\n  tern_negotiate -dry-run\n  tern_negotiate -loop -interval 30\n  tern_negotiate -check\n\nFrom cron, as the safety net (cron's PATH is /usr/bin:/bin, so the line names\nthe tool by its path):\n  * * * * * \"$HOME/.cargo/bin/tern_negotiate\""
)]
pub struct Args {
    /// Print what the pass would do (matches, rejections, requeues,
    /// policy actions) and change nothing
    #[arg(long)]
    pub dry_run: bool,

    /// If another pass is running, wait for it and then run, instead of
    /// leaving it a mark to run once more
    #[arg(long)]
    pub wait: bool,

    /// Recompute the next DeferralTime of every idle CronTab job, and set
    /// every job's ScheddInterval to SCHEDD_INTERVAL, in this pass
    #[arg(long)]
    pub reconfig: bool,

    /// Run a pass every -interval seconds until killed (for users without
    /// cron)
    #[arg(long = "loop")]
    pub looping: bool,

    /// Seconds between passes with -loop (default NEGOTIATOR_INTERVAL)
    #[arg(long, value_name = "N")]
    pub interval: Option<u64>,

    /// Print what the pass did
    #[arg(long, short = 'v')]
    pub verbose: bool,

    /// Check every page and index of the queue database now (PRAGMA
    /// integrity_check), print "ok" or the damage, and run no pass
    #[arg(long, conflicts_with_all = ["dry_run", "looping", "reconfig"])]
    pub check: bool,
}

pub fn main() -> ExitCode {
    run_tool("tern_negotiate", run)
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (args, _) = parse_args::<Args>(argv)?;
    if args.interval.is_some() && !args.looping {
        return Err(CliError::Usage {
            msg: "-interval needs -loop".into(),
            hint: Some("tern_negotiate -loop -interval 30".into()),
        });
    }
    // Not ToolEnv::open: cron runs this every minute and mails whatever it
    // prints on stderr, so the configuration's warnings (which the other
    // tools show) stay unsaid here; its errors still stop the pass.
    let cfg = Config::load()?;
    let spool = spool_dir(&cfg)?;
    let interval = match args.interval {
        Some(i) => i,
        None => cfg.get_int("NEGOTIATOR_INTERVAL", 60)?.max(1) as u64,
    };
    if args.check {
        return check(&spool);
    }
    let opts = Options {
        dry_run: args.dry_run,
        wait: args.wait || args.looping,
        reconfig: args.reconfig,
    };
    loop {
        let ran = negotiator::negotiate(&cfg, &spool, &opts)?;
        if let Ran::Ran(report) = ran
            && (args.dry_run || args.verbose)
        {
            let mut out = std::io::stdout().lock();
            for l in &report.lines {
                writeln!(out, "{l}")?;
            }
            if args.verbose {
                writeln!(out, "{} shadow(s) started", report.started)?;
            }
        }
        if !args.looping {
            return Ok(());
        }
        // Shadows started by earlier passes are not ours to wait for, but
        // they are our children: reap those that have ended.
        crate::shadow::procs::reap();
        std::thread::sleep(std::time::Duration::from_secs(interval));
    }
}

/// `-check`: the whole `PRAGMA integrity_check`, beyond the pass's
/// periodic quick check. A damaged queue is the damage error (exit 1).
fn check(spool: &std::path::Path) -> Result<(), CliError> {
    let Some(q) = Queue::open(spool, false)? else {
        println!("ok (no queue yet in {})", spool.display());
        return Ok(());
    };
    let found = q.integrity_check()?;
    if found != "ok" {
        return Err(QueueError::Corrupt {
            path: q.path().to_path_buf(),
            msg: found.replace('\n', "; "),
        }
        .into());
    }
    println!("ok");
    Ok(())
}
