//! `tern_q`: shows the jobs in the queue, as HTCondor's `condor_q`.
//!
//! The queue is read once, in job id order, through the streaming listing
//! of [`crate::queue::listing`]. What each job costs depends on the view:
//! the default batch view, `-totals`, and `-af`/`-format` of the hot
//! attributes (ClusterId, ProcId, JobStatus, Owner, JobPrio, QDate,
//! EnteredCurrentStatus) work from the hot columns alone, plus one parsed
//! cluster ad per cluster for the batch names; `-nobatch`, `-hold`, `-run`,
//! `-long`, `-json`, and expressions over other attributes build each job's
//! full ad, one at a time. A `-constraint` over hot attributes only is
//! evaluated in a small ad of those attributes.
//!
//! Output follows `condor_q` (queue.cpp and its print formats) column for
//! column; the man page lists where tern differs and why.
//!
//! The module is split by duty: [`select`] reads the queue through the
//! [`Filter`], [`batch`] is the default view and its totals, [`jobs`] the
//! one-line-per-job views (`-nobatch`, `-hold`, `-run`), [`ads`] `-long`,
//! `-json`, `-af` and `-format`, and [`analyze`] `-better-analyze` and
//! `-analyze`. This file holds the options, the dispatch to a view, and
//! the title and totals lines every view shares.

mod ads;
pub mod analyze;
mod batch;
mod jobs;
mod select;

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::rc::Rc;

use clap::{ArgMatches, Parser};

use super::env::ToolEnv;
use super::format::attribute_list;
use super::printmask::PrintMask;
use super::{CliError, format, parse_args, printmask, run_tool};
use crate::classad::{ClassAd, parse_expr};
use crate::config::Config;
use crate::queue::listing::StatusCounts;
use crate::queue::{JobId, Queue};
use crate::sys::time::local_time;
use crate::vocab::JobStatus;
use analyze::{Analyzer, Depth};

use ads::{show_ads, show_custom};
use batch::show_batch;
pub use batch::{BatchLine, job_ids_text, render_batch, shrink_batch_widths};
use jobs::{show_jobs, waiting_note};
pub use select::{Filter, hot_only, reads_jobprio};
use select::{HOT, Totals, counted_totals, select};

/// Show the jobs in the queue.
///
/// By default only your own jobs are shown, one line per batch (a cluster,
/// or the clusters that share a batch name), followed by totals. CLUSTER,
/// CLUSTER.PROC and OWNER arguments, -allusers and -constraint choose other
/// jobs; -nobatch, -hold, -run, -totals, -af, -format, -long and -json
/// choose other views. Options may be written with one dash or two and
/// shortened to any unique prefix.
#[derive(Parser, Debug)]
#[command(
    name = "tern_q",
    version,
    after_help = "Examples:\n  \
        tern_q\n  \
        tern_q -nobatch 12\n  \
        tern_q -allusers -hold\n  \
        tern_q -better-analyze 12.0\n  \
        tern_q -af ClusterId ProcId JobStatus -constraint 'JobStatus == 1'\n  \
        tern_q -format '%d.' ClusterId -format '%d\\n' ProcId"
)]
pub struct Args {
    /// Show the jobs of every user, not only your own
    #[arg(long, visible_alias = "all-users")]
    pub allusers: bool,

    /// Show only jobs for which EXPR is true (repeatable; all must hold)
    #[arg(long, value_name = "EXPR")]
    pub constraint: Vec<String>,

    /// One line per batch of jobs (the default)
    #[arg(long)]
    pub batch: bool,

    /// One line per job
    #[arg(long)]
    pub nobatch: bool,

    /// Print only the totals
    #[arg(long)]
    pub totals: bool,

    /// Show only held jobs, with when and why they were held
    #[arg(long, visible_alias = "held")]
    pub hold: bool,

    /// Show only running jobs, with where they run
    #[arg(long)]
    pub run: bool,

    /// Show only grid universe jobs, with their remote status, resource
    /// and remote job id
    #[arg(long)]
    pub grid: bool,

    /// Print these attributes or expressions of each job on one line
    /// (-af:FLAGS, FLAGS from jlhVrTY,tng, changes the layout)
    #[arg(
        long = "autoformat",
        visible_alias = "af",
        num_args = 1..,
        value_name = "ATTR"
    )]
    pub autoformat: Vec<String>,

    /// The flags of -af:FLAGS (see [`super::COLON_FORMS`]).
    #[arg(long = "af-flags", hide = true)]
    pub af_flags: Vec<String>,

    /// Print ATTR (an attribute or expression) of each job with printf
    /// format FMT; no newline is added (repeatable)
    #[arg(long, num_args = 2, value_names = ["FMT", "ATTR"])]
    pub format: Vec<String>,

    /// Print whole job ads, one attribute per line, sorted by name
    #[arg(long)]
    pub long: bool,

    /// Print whole job ads as one JSON array
    #[arg(long)]
    pub json: bool,

    /// With -long or -json, print only these attributes (comma-separated)
    #[arg(long, value_name = "ATTR,...")]
    pub attributes: Vec<String>,

    /// Never cut lines to the terminal width (-wide:N cuts them to N
    /// columns)
    #[arg(long)]
    pub wide: bool,

    /// The width -wide:N asked for. (Named so that no prefix of a visible
    /// option is also a prefix of it.)
    #[arg(long = "output-width", hide = true)]
    pub wide_width: Option<usize>,

    /// Explain why jobs do not run (with no job named, your idle jobs):
    /// each clause of a job's Requirements against every slot, the slots
    /// that reject the job, and what the negotiation pass last said
    #[arg(long = "better-analyze")]
    pub better_analyze: bool,

    /// A shorter -better-analyze: how many slots each side rejects, and why
    /// the job has not run
    #[arg(long)]
    pub analyze: bool,

    /// Jobs to show: clusters, single jobs and owners
    #[arg(value_name = "CLUSTER|CLUSTER.PROC|OWNER")]
    pub restrictions: Vec<String>,
}

pub fn main() -> ExitCode {
    run_tool("tern_q", run)
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let mut opts = match parse(argv) {
        Ok(o) => o,
        Err(e) => return Err(super::usage_exits_one("tern_q", e)),
    };
    let env = ToolEnv::open("tern_q")?;
    let cfg = &env.cfg;
    // HTCondor's CONDOR_Q_ONLY_MY_JOBS: off, everyone's jobs are shown
    // without -allusers.
    if !cfg.get_bool("CONDOR_Q_ONLY_MY_JOBS", true)? {
        opts.filter.only_mine = false;
    }
    let spool = &env.spool;
    let host = cfg
        .get("FULL_HOSTNAME")
        .ok()
        .flatten()
        .unwrap_or_else(|| "localhost".into());
    let ctx = Context {
        me: env.user.clone(),
        host,
        spool: spool.display().to_string(),
        now: crate::clock::now(),
        width: output_width(&opts),
    };
    let queue = env.queue(false)?;
    let stdout = io::stdout();
    // Other users' strings (batch names, arguments) never reach a terminal
    // as control characters: the tables always show them escaped, and
    // -long, -af and the analysis do on a terminal (piped, they keep the
    // bytes for programs; JSON escapes them itself).
    let table = matches!(
        opts.view,
        View::Batch | View::NoBatch | View::Hold | View::Run | View::Grid | View::Totals
    ) && opts.custom.is_none();
    let escape = table || crate::sys::term::stdout_is_tty();
    let mut out = crate::sys::term::ShowControls::new(BufWriter::new(stdout.lock()), escape);
    show(queue.as_ref(), cfg, &opts, &ctx, &mut out)?;
    if matches!(opts.view, View::Batch | View::NoBatch | View::Run) && opts.custom.is_none() {
        waiting_note(queue.as_ref(), &opts, &ctx, &mut out)?;
    }
    out.flush()?;
    Ok(())
}

/// What the command line asks for, checked.
#[derive(Debug)]
pub struct Options {
    pub view: View,
    pub filter: Filter,
    /// -long/-json: only these attributes.
    pub attributes: Option<Vec<String>>,
    /// The -af/-format columns.
    pub custom: Option<PrintMask>,
    pub wide: bool,
    pub wide_width: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    Batch,
    NoBatch,
    Hold,
    Run,
    /// -grid.
    Grid,
    Totals,
    Custom,
    Long,
    Json,
    /// -better-analyze or -analyze.
    Analyze(Depth),
}

/// Facts about this run that are not options.
pub struct Context {
    pub me: String,
    pub host: String,
    pub spool: String,
    pub now: i64,
    /// The width to cut lines to, or `None` for no limit.
    pub width: Option<usize>,
}

fn usage(msg: impl Into<String>) -> CliError {
    CliError::Usage {
        msg: msg.into(),
        hint: None,
    }
}

/// Parses and checks the command line.
pub fn parse(argv: Vec<OsString>) -> Result<Options, CliError> {
    let (args, matches) = parse_args::<Args>(argv)?;
    if args.run && args.hold {
        return Err(usage("-run and -hold are incompatible"));
    }
    if args.long && args.json {
        return Err(usage("cannot print as both -long and -json"));
    }
    let mut filter = filter(&args)?;
    let custom = custom_columns(&matches)?;
    filter.reads_prio = (filter.constraints_hot && filter.constraints.iter().any(reads_jobprio))
        || custom.as_ref().is_some_and(|m| m.reads_any(reads_jobprio));
    let analyze = if args.better_analyze {
        Some(Depth::Better)
    } else if args.analyze {
        Some(Depth::Summary)
    } else {
        None
    };
    // condor_q analyses your idle jobs when no job is named.
    if analyze.is_some()
        && filter.jobs.is_empty()
        && filter.clusters.is_empty()
        && filter.constraints.is_empty()
        && filter.statuses.is_none()
    {
        filter.statuses = Some(&[JobStatus::Idle]);
    }
    let view = if let Some(depth) = analyze {
        View::Analyze(depth)
    } else if args.long {
        View::Long
    } else if args.json {
        View::Json
    } else if custom.is_some() {
        View::Custom
    } else if args.totals {
        View::Totals
    } else if args.hold {
        View::Hold
    } else if args.grid {
        View::Grid
    } else if args.batch || !(args.nobatch || args.run) {
        View::Batch
    } else if args.run {
        View::Run
    } else {
        View::NoBatch
    };
    let attributes = (!args.attributes.is_empty()).then(|| attribute_list(&args.attributes));
    Ok(Options {
        view,
        filter,
        attributes,
        custom,
        wide: args.wide,
        wide_width: args.wide_width,
    })
}

/// The jobs the arguments, -constraint, -run and -hold choose.
fn filter(args: &Args) -> Result<Filter, CliError> {
    let mut filter = Filter::default();
    for r in &args.restrictions {
        match super::jobsel::parse_id(r) {
            Some((c, Some(p))) => filter.jobs.push(JobId {
                cluster: c,
                proc: p,
            }),
            Some((c, None)) => filter.clusters.push(c),
            None if r.is_empty() => {
                return Err(usage("an empty argument is not a job id or a user"));
            }
            None => filter.owners.push(r.clone()),
        }
    }
    filter.only_mine = !args.allusers && args.restrictions.is_empty();
    for c in &args.constraint {
        let e = parse_expr(c).map_err(|e| CliError::constraint(c, e))?;
        filter.constraints.push(e);
    }
    filter.constraints_hot = filter.constraints.iter().all(hot_only);
    if args.run {
        filter.statuses = Some(&[
            JobStatus::Running,
            JobStatus::TransferringOutput,
            JobStatus::Suspended,
        ]);
    }
    if args.hold {
        filter.statuses = Some(&[JobStatus::Held]);
    }
    if args.grid {
        // condor_q -grid adds this clause.
        filter
            .constraints
            .push(parse_expr("JobUniverse == 9").expect("constant parses"));
        filter.constraints_hot = false;
    }
    Ok(filter)
}

/// The -af and -format columns, with the hot attributes read from the
/// queue rows.
fn custom_columns(m: &ArgMatches) -> Result<Option<PrintMask>, CliError> {
    let mut mask = PrintMask::from_matches(m)?;
    if let Some(mask) = &mut mask {
        mask.bind_fast(&HOT);
    }
    Ok(mask)
}

/// The width lines are cut to: none with -wide or when the output is not
/// a terminal (as condor_q), N with -wide:N, else the terminal's width.
fn output_width(opts: &Options) -> Option<usize> {
    if let Some(n) = opts.wide_width {
        return Some(n);
    }
    if opts.wide {
        return None;
    }
    crate::sys::term::stdout_width()
}

/// Prints the view the options ask for (`cfg` is the configuration the
/// tool loaded, which the analysis reads the machine from).
pub fn show(
    q: Option<&Queue>,
    cfg: &Config,
    opts: &Options,
    ctx: &Context,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let mut totals = Totals::default();
    match opts.view {
        View::Batch => show_batch(q, opts, ctx, &mut totals, out),
        View::Totals => {
            if !counted_totals(q, &opts.filter, &ctx.me, &mut totals)? {
                select(
                    q,
                    &opts.filter,
                    &ctx.me,
                    false,
                    &mut totals,
                    |_| {},
                    |_, _| Ok(()),
                )?;
            }
            write_title(ctx, out)?;
            write_totals(ctx, &totals, out)?;
            Ok(())
        }
        View::NoBatch | View::Hold | View::Run | View::Grid => {
            show_jobs(q, opts, ctx, &mut totals, out)
        }
        View::Custom => show_custom(q, opts, ctx, &mut totals, out),
        View::Long | View::Json => show_ads(q, opts, ctx, &mut totals, out),
        View::Analyze(depth) => show_analysis(q, cfg, depth, opts, ctx, out),
    }
}

/// `-better-analyze` and `-analyze`: the title, then each chosen job's
/// analysis ([`super::analyze`]), in job id order.
fn show_analysis(
    q: Option<&Queue>,
    cfg: &Config,
    depth: Depth,
    opts: &Options,
    ctx: &Context,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let mut jobs: Vec<(JobId, i64, Rc<ClassAd>)> = Vec::new();
    select(
        q,
        &opts.filter,
        &ctx.me,
        true,
        &mut Totals::default(),
        |_| {},
        |row, ad| {
            jobs.push((row.id, row.status, ad.expect("a full ad was asked for")));
            Ok(())
        },
    )?;
    write_title(ctx, out)?;
    let mut an = Analyzer::new(cfg, q, ctx.now, ctx.width.unwrap_or(80), depth);
    for (i, (id, st, ad)) in jobs.into_iter().enumerate() {
        if i > 0 {
            out.write_all(b"\n")?;
        }
        out.write_all(an.job(id, st, ad)?.as_bytes())?;
    }
    Ok(())
}

/// `\n\n-- Schedd: user@host : <SPOOL> @ MM/DD/YY HH:MM:SS`.
fn write_title(ctx: &Context, out: &mut impl Write) -> io::Result<()> {
    let t = local_time(ctx.now);
    writeln!(
        out,
        "\n\n-- Schedd: {}@{} : <{}> @ {:02}/{:02}/{:02} {:02}:{:02}:{:02}",
        ctx.me,
        ctx.host,
        ctx.spool,
        t.mon,
        t.mday,
        t.year.rem_euclid(100),
        t.hour,
        t.min,
        t.sec
    )
}

/// The three totals lines, with the blank line condor_q puts after them.
fn write_totals(ctx: &Context, t: &Totals, out: &mut impl Write) -> io::Result<()> {
    write!(
        out,
        "{} \n{} \n{}\n\n",
        totals_line("query", &t.query),
        totals_line(&ctx.me, &t.mine),
        totals_line("all users", &t.all)
    )
}

pub fn totals_line(who: &str, c: &StatusCounts) -> String {
    let running = c[JobStatus::Running as usize] + c[JobStatus::TransferringOutput as usize];
    let jobs: i64 = c.iter().sum();
    format!(
        "Total for {who}: {jobs} jobs; {} completed, {} removed, {} idle, {running} running, {} held, {} suspended",
        c[JobStatus::Completed as usize],
        c[JobStatus::Removed as usize],
        c[JobStatus::Idle as usize],
        c[JobStatus::Held as usize],
        c[JobStatus::Suspended as usize],
    )
}

/// Writes one line: cut to the width when there is one, else with
/// trailing blanks removed (condor_q's wide mode).
fn write_line(out: &mut impl Write, line: &str, width: Option<usize>) -> io::Result<()> {
    match width {
        Some(w) => {
            let cut = w.saturating_sub(1);
            let end = line.char_indices().nth(cut).map_or(line.len(), |(i, _)| i);
            out.write_all(&line.as_bytes()[..end])?;
        }
        None => out.write_all(line.trim_end().as_bytes())?,
    }
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use select::count;

    fn opts(args: &[&str]) -> Result<Options, CliError> {
        let mut argv = vec![OsString::from("tern_q")];
        argv.extend(args.iter().map(OsString::from));
        parse(argv)
    }

    #[test]
    fn totals_lines_count_transferring_output_as_running() {
        let mut c = StatusCounts::default();
        for s in [1, 1, 2, 6, 5, 3, 4, 7] {
            count(&mut c, s);
        }
        count(&mut c, 99);
        assert_eq!(
            totals_line("query", &c),
            "Total for query: 8 jobs; 1 completed, 1 removed, 2 idle, 2 running, 1 held, 1 suspended"
        );
    }

    #[test]
    fn views_and_selections_from_the_command_line() {
        let o = opts(&[]).unwrap();
        assert_eq!(o.view, View::Batch);
        assert!(o.filter.only_mine);
        let o = opts(&["-nob", "12", "3.4", "bob"]).unwrap();
        assert_eq!(o.view, View::NoBatch);
        assert!(!o.filter.only_mine);
        assert_eq!(o.filter.clusters, [12]);
        assert_eq!(o.filter.owners, ["bob"]);
        assert!(o.filter.partial());
        assert_eq!(opts(&["-run"]).unwrap().view, View::Run);
        assert_eq!(opts(&["-held"]).unwrap().view, View::Hold);
        assert_eq!(opts(&["-tot"]).unwrap().view, View::Totals);
        assert_eq!(opts(&["-af", "Owner", "-l"]).unwrap().view, View::Long);
        let o = opts(&["-af:h", "Owner", "Cmd", "-format", "%d", "ProcId"]).unwrap();
        let c = o.custom.unwrap();
        assert_eq!(c.len(), 3);
        assert!(c.headings());
        assert!(!c.reads_only(hot_only));
        assert!(opts(&["-run", "-hold"]).is_err());
        assert!(opts(&["-constraint", "JobStatus =="]).is_err());
        assert!(opts(&["-af", "Owner Cmd"]).is_err());
    }

    #[test]
    fn colon_forms_reach_their_options() {
        let o = opts(&["-wide:90", "-af:jl", "Owner", "-af", "Cmd"]).unwrap();
        assert_eq!(o.wide_width, Some(90));
        let c = o.custom.unwrap();
        // -af:j adds the two job id columns to the first -af only.
        assert_eq!(c.len(), 4);
    }
}
