//! `tern_history`: lists the jobs that have left the queue, as HTCondor's
//! `condor_history`, newest first.
//!
//! Jobs are read from the queue database's history tables (a job moves
//! there when it is removed or completes and leaves the queue). Cluster,
//! cluster.proc and user arguments choose jobs (any of them may match);
//! every `-constraint` must hold as well. The output is a one-line summary
//! per job by default, or `-long`, `-json` ([`super::format`]), `-af`
//! and `-format` ([`super::printmask`]) as in `tern_q`. A SPOOL with no queue yet has no
//! history; nothing is created.

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::rc::Rc;

use clap::Parser;

use super::env::ToolEnv;
use super::format;
use super::jobsel::selection;
use super::listing::ListingArgs;
use super::{CliError, parse_args, run_tool};
use crate::classad::ast::BinOp;
use crate::classad::parser::parse_expr_old;
use crate::classad::{ClassAd, Expr};
use crate::queue::Selection;
use crate::vocab::JobStatus;

/// List jobs that have left the queue, newest first.
///
/// Arguments choose jobs by cluster, cluster.proc or user (a job matching
/// any of them is listed); each -constraint must hold too. By default each
/// job is one line: its id, owner, submit time, run time, status (C
/// completed, X removed), completion time and command.
#[derive(Parser, Debug)]
#[command(
    name = "tern_history",
    version,
    after_help = "Examples:\n  tern_history\n  tern_history -limit 5 alice\n  tern_history -af ClusterId ProcId ExitCode 12\n  tern_history -long 12.0"
)]
pub struct Args {
    /// List only jobs matching this ClassAd expression (with several, every
    /// one must match)
    #[arg(long, value_name = "EXPR")]
    pub constraint: Vec<String>,

    #[command(flatten)]
    pub listing: ListingArgs,

    /// List at most N jobs
    #[arg(long, visible_alias = "match", value_name = "N")]
    pub limit: Option<usize>,

    /// List the oldest jobs first
    #[arg(long)]
    pub forwards: bool,

    /// List the newest jobs first (the default)
    #[arg(long)]
    pub backwards: bool,

    /// Accepted for compatibility; lines are never cut to the terminal's
    /// width
    #[arg(long)]
    pub wide: bool,

    /// Accepted for compatibility; has no effect
    #[arg(long)]
    pub debug: bool,

    /// Jobs to list: CLUSTER, CLUSTER.PROC or USER
    #[arg(value_name = "CLUSTER|CLUSTER.PROC|USER")]
    pub targets: Vec<String>,
}

pub fn main() -> ExitCode {
    run_tool("tern_history", run)
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (args, matches) = parse_args::<Args>(argv)?;
    let sel = choose(&args)?;
    let view = args.listing.view(&matches)?;
    let env = ToolEnv::open("tern_history")?;
    let ads: Vec<ClassAd> = match env.queue(false)? {
        None => Vec::new(),
        Some(q) => {
            let mut rows = if args.forwards && !args.backwards {
                let mut all = q.history(&sel, None)?;
                all.reverse();
                if let Some(n) = args.limit {
                    all.truncate(n);
                }
                all
            } else {
                q.history(&sel, args.limit)?
            };
            rows.drain(..).map(|(_, ad)| ad).collect()
        }
    };
    let rendered = view.render(&ads);
    // The summary table shows control characters escaped (another user's
    // Cmd or arguments cannot drive the terminal); -long and -af do on a
    // terminal, and keep the bytes when piped.
    let escape = rendered.is_none() || crate::sys::term::stdout_is_tty();
    let text = rendered.unwrap_or_else(|| summary(&ads));
    let stdout = io::stdout();
    let mut out = crate::sys::term::ShowControls::new(BufWriter::new(stdout.lock()), escape);
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// The jobs the arguments choose.
fn choose(args: &Args) -> Result<Selection, CliError> {
    let mut sel = selection(&args.targets, None)?;
    for c in &args.constraint {
        let e = parse_expr_old(c).map_err(|e| CliError::constraint(c, e))?;
        let e = Expr::Paren(Box::new(e));
        sel.constraint = Some(match sel.constraint.take() {
            Some(prev) => Expr::binary(BinOp::And, prev, e),
            None => e,
        });
    }
    Ok(sel)
}

/// The default listing: a heading, then one line per job.
fn summary(ads: &[ClassAd]) -> String {
    let mut out = format!(
        "{:<8} {:<14} {:<11} {:<12} {:<2} {:<11} {}\n",
        " ID", "OWNER", "  SUBMITTED", "  RUN_TIME  ", "ST", "  COMPLETED", "CMD"
    );
    for ad in ads {
        let ad = Rc::new(ad.clone());
        let int = |n: &str| ad.eval_int(n);
        let run = ad
            .eval_real("RemoteWallClockTime")
            .or_else(|| ad.eval_real("RemoteUserCpu"))
            .unwrap_or(0.0);
        let completed = match int("CompletionDate") {
            Some(t) if t > 0 => format::date(t),
            _ => String::new(),
        };
        let st = int("JobStatus").map_or("?", JobStatus::letter_of);
        out.push_str(&format!(
            "{:>4}.{:<3} {:<14} {:>11} {:>12} {:<2} {:>11} {}\n",
            int("ClusterId").unwrap_or(0),
            int("ProcId").unwrap_or(0),
            ad.eval_str("Owner").unwrap_or_default(),
            int("QDate").map(format::date).unwrap_or_default(),
            format::run_time(run as i64),
            st,
            completed,
            format::job_description(&ad)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // The summary reads through the ClassAd typed readers: a boolean is
    // not a number, so `ProcId = true` prints as a missing 0 (it used to
    // print as 1).
    #[test]
    fn summary_prints_a_bool_as_no_number() {
        let ad = crate::classad::parse_ad(
            r#"[ClusterId = 7; ProcId = true; Owner = "ann"; JobStatus = 4; Cmd = "/bin/true"]"#,
        )
        .unwrap();
        let text = summary(&[ad]);
        let line = text.lines().nth(1).unwrap();
        assert!(line.starts_with("   7.0   ann "), "{line:?}");
        assert!(line.contains(" C "), "{line:?}");
    }
}
