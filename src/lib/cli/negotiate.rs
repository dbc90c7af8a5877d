//! `tern_negotiate`: one negotiation pass (see [`crate::negotiator`]).
//!
//! Run from cron every minute as the safety net (`* * * * * "$HOME/.cargo/bin/tern_negotiate"`);
//! tern_submit and every shadow whose claim ends also start one in the
//! background, so jobs start and slots refill at once.
//!
//! In shared mode a user's tern_negotiate only leaves the pass-wanted mark
//! for a root pass; root's runs under systemd (`-wait-lock 30`, from
//! tern-negotiate.service), cron, or `-loop -watch` (tern_security(7)).

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use super::env::spool_dir;
use super::{CliError, parse_args, run_tool};
use crate::config::Config;
use crate::negotiator::{self, Options, Ran, activation};
use crate::queue::{Queue, QueueError};

/// Run one negotiation pass: reconcile running jobs with their shadows,
/// apply periodic job policies, match idle jobs to this machine's slots and
/// start their shadows.
#[derive(Parser, Debug)]
#[command(
    name = "tern_negotiate",
    version,
    after_help = "Examples:\n  tern_negotiate\n  tern_negotiate -dry-run\n  tern_negotiate -loop -interval 30\n  tern_negotiate -loop -watch\n  tern_negotiate -check\n\nFrom cron, as the safety net (cron's PATH is /usr/bin:/bin, so the line names\nthe tool by its path):\n  * * * * * \"$HOME/.cargo/bin/tern_negotiate\""
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

    /// If another pass is running, wait at most SECONDS for it, then run;
    /// after that, leave it the mark (what tern-negotiate.service uses)
    #[arg(long, value_name = "SECONDS", conflicts_with = "wait")]
    pub wait_lock: Option<u64>,

    /// Run a pass every -interval seconds until killed (for users without
    /// cron; root only in shared mode)
    #[arg(long = "loop")]
    pub looping: bool,

    /// With -loop: run a pass as soon as the pass-wanted mark appears
    /// (inotify), at most one a second, and every -interval seconds
    /// (default 60) anyway
    #[arg(long)]
    pub watch: bool,

    /// Seconds between passes with -loop (default NEGOTIATOR_INTERVAL, 60
    /// with -watch)
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
    if args.watch && !args.looping {
        return Err(CliError::Usage {
            msg: "-watch needs -loop".into(),
            hint: Some("tern_negotiate -loop -watch".into()),
        });
    }
    let cfg = Config::load()?;
    let spool = spool_dir(&cfg)?;
    let interval = match args.interval {
        Some(i) => i.max(1),
        None if args.watch => 60,
        None => cfg.get_int("NEGOTIATOR_INTERVAL", 60)?.max(1) as u64,
    };
    if args.check {
        return check(&spool);
    }
    let only_marks = !args.dry_run && activation::only_marks(&cfg)?;
    if only_marks && (args.looping || args.reconfig) {
        return Err(CliError::Failed {
            msg: format!(
                "{} runs passes, which only root does in shared mode",
                if args.looping { "-loop" } else { "-reconfig" }
            ),
            hint: Some(
                "run it as root, or leave the pass to the system's (tern_security(7))".into(),
            ),
        });
    }
    let opts = Options {
        dry_run: args.dry_run,
        wait: args.wait || args.looping,
        wait_for: args.wait_lock.map(std::time::Duration::from_secs),
        reconfig: args.reconfig,
    };
    // A personal SPOOL may not exist yet (a shared one is the
    // installer's); -loop's lock and watch live in it.
    if args.looping && !activation::is_shared(&cfg)? {
        use std::os::unix::fs::DirBuilderExt;
        let _ = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&spool);
    }
    // One -loop per SPOOL: a second would only wait on the pass lock.
    let _one = if args.looping && !args.dry_run {
        let lock = activation::loop_lock(&spool).map_err(|e| CliError::Failed {
            msg: format!("cannot open the -loop lock in {}: {e}", spool.display()),
            hint: None,
        })?;
        match lock {
            Some(l) => Some(l),
            None => {
                return Err(CliError::Failed {
                    msg: format!(
                        "another tern_negotiate -loop is running for {}",
                        spool.display()
                    ),
                    hint: None,
                });
            }
        }
    } else {
        None
    };
    // Made before the first pass, so a mark left during a pass is seen.
    let watch = if args.watch {
        Some(
            activation::MarkWatch::new(&spool).map_err(|e| CliError::Failed {
                msg: format!(
                    "cannot watch {} for the pass-wanted mark: {e}",
                    spool.display()
                ),
                hint: None,
            })?,
        )
    } else {
        None
    };
    loop {
        let started = std::time::Instant::now();
        let ran = negotiator::negotiate(&cfg, &spool, &opts)?;
        match ran {
            Ran::Ran(report) if args.dry_run || args.verbose => {
                let mut out = std::io::stdout().lock();
                for l in &report.lines {
                    writeln!(out, "{l}")?;
                }
                if args.verbose {
                    writeln!(
                        out,
                        "{} shadow(s) started in {} round(s)",
                        report.started, report.rounds
                    )?;
                }
            }
            Ran::Deferred if args.verbose && only_marks => {
                println!("shared mode: left the pass-wanted mark for a root pass");
            }
            _ => {}
        }
        if !args.looping {
            return Ok(());
        }
        // Shadows started by earlier passes are not ours to wait for, but
        // they are our children: reap those that have ended.
        crate::shadow::procs::reap();
        match &watch {
            Some(w) => {
                let every = std::time::Duration::from_secs(interval);
                // A mark already there (its event may have been read before
                // the last pass ended) counts as seen.
                let seen = negotiator::wanted_path(&spool).exists()
                    || w.wait(every.saturating_sub(started.elapsed()))
                        .map_err(|e| CliError::Failed {
                            msg: format!("cannot watch {}: {e}", spool.display()),
                            hint: None,
                        })?;
                // At most one pass a second, however fast marks come.
                if seen {
                    let gap = std::time::Duration::from_secs(1);
                    std::thread::sleep(gap.saturating_sub(started.elapsed()));
                }
            }
            None => std::thread::sleep(std::time::Duration::from_secs(interval)),
        }
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
