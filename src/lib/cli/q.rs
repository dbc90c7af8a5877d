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

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::rc::Rc;

use clap::{ArgMatches, Parser};

use super::analyze::{Analyzer, Depth};
use super::env::ToolEnv;
use super::format::{
    attribute_list, collapse_escapes, date, job_description, project, run_time as duration,
    split_af_option, value_old,
};
use super::{CliError, parse_args, run_tool};
use crate::classad::ast::{AttrRef, Expr};
use crate::classad::json::ad_to_json;
use crate::classad::parser::parse_expr_old;
use crate::classad::unparse::{format_e, format_g, unparse_old};
use crate::classad::{ClassAd, Value, eval_attr, eval_in, parse_expr};
use crate::config::Config;
use crate::queue::listing::{AdBuilder, HotRow, StatusCounts};
use crate::queue::{JobId, Queue, QueueError, status};

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

    /// Print these attributes or expressions of each job on one line
    /// (-af:FLAGS, FLAGS from jlhVrTY,tng, changes the layout)
    #[arg(
        long = "autoformat",
        visible_alias = "af",
        num_args = 1..,
        value_name = "ATTR"
    )]
    pub autoformat: Vec<String>,

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

/// Marks the first value of an `-af` occurrence as that occurrence's
/// `:FLAGS` (see [`rewrite_argv`]).
const FLAGS_MARK: char = '\u{1}';

/// The attributes kept as columns of every job row, and so known without
/// reading the job's ad.
const HOT: [&str; 7] = [
    "ClusterId",
    "ProcId",
    "JobStatus",
    "Owner",
    "JobPrio",
    "QDate",
    "EnteredCurrentStatus",
];

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let opts = match parse(argv) {
        Ok(o) => o,
        Err(e) => return Err(super::usage_exits_one("tern_q", e)),
    };
    let env = ToolEnv::open("tern_q")?;
    let cfg = &env.cfg;
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
    let mut out = BufWriter::new(stdout.lock());
    match opts.view {
        View::Analyze(depth) => show_analysis(queue.as_ref(), cfg, depth, &opts, &ctx, &mut out)?,
        _ => show(queue.as_ref(), &opts, &ctx, &mut out)?,
    }
    if matches!(opts.view, View::Batch | View::NoBatch | View::Run) && opts.custom.is_none() {
        waiting_note(queue.as_ref(), &opts, &ctx, &mut out)?;
    }
    out.flush()?;
    Ok(())
}

/// Beyond condor_q: a job that shows Running while its shadow waits for
/// its DeferralTime is named, with the time it starts, so that it can be
/// told from one that executes.
fn waiting_note(
    q: Option<&Queue>,
    opts: &Options,
    ctx: &Context,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let Some(q) = q else { return Ok(()) };
    let mut lines: Vec<String> = Vec::new();
    for row in q.rows_in(&[status::RUNNING, status::SUSPENDED])? {
        let ad = Rc::new(q.full_ad(&row)?);
        if !opts.filter.matches_row(&row, &ad, &ctx.me) {
            continue;
        }
        if let Value::Int(t) = eval_attr(&ad, "DeferralWaitUntil")
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

/// What the command line asks for, checked.
#[derive(Debug)]
pub struct Options {
    pub view: View,
    pub filter: Filter,
    /// -long/-json: only these attributes.
    pub attributes: Option<Vec<String>>,
    /// The -af/-format columns.
    pub custom: Option<Custom>,
    pub wide: bool,
    pub wide_width: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    Batch,
    NoBatch,
    Hold,
    Run,
    Totals,
    Custom,
    Long,
    Json,
    /// -better-analyze or -analyze.
    Analyze(Depth),
}

/// Which jobs are shown. Owners are alternatives, and so are ids; when
/// both are given a job must match one of each (condor_q's rule). Every
/// constraint must hold.
#[derive(Debug, Default)]
pub struct Filter {
    /// Only this user's jobs: condor_q's default when no owner or id is
    /// named and -allusers is not given.
    pub only_mine: bool,
    pub owners: Vec<String>,
    pub clusters: Vec<i64>,
    pub jobs: Vec<JobId>,
    /// -run or -hold.
    pub statuses: Option<&'static [i64]>,
    pub constraints: Vec<Expr>,
    /// The constraints read only hot attributes.
    pub constraints_hot: bool,
}

impl Filter {
    /// The test that needs no ad.
    fn hot_match(&self, row: &HotRow<'_>, me: &str) -> bool {
        if self.only_mine && row.owner != me {
            return false;
        }
        if !self.owners.is_empty() && !self.owners.iter().any(|o| o == row.owner) {
            return false;
        }
        if (!self.clusters.is_empty() || !self.jobs.is_empty())
            && !self.clusters.contains(&row.id.cluster)
            && !self.jobs.contains(&row.id)
        {
            return false;
        }
        if let Some(s) = self.statuses
            && !s.contains(&row.status)
        {
            return false;
        }
        true
    }

    /// The whole test, for a job whose full ad is at hand (the -run and
    /// -hold status filter aside: the caller chose the statuses).
    fn matches_row(&self, row: &crate::queue::JobRow, ad: &Rc<ClassAd>, me: &str) -> bool {
        let hot = HotRow {
            id: row.id,
            status: self
                .statuses
                .and_then(|s| s.first().copied())
                .unwrap_or(row.status),
            owner: &row.owner,
            prio: row.prio,
            qdate: row.qdate,
            entered: row.entered,
            diff: None,
        };
        self.hot_match(&hot, me)
            && self
                .constraints
                .iter()
                .all(|c| crate::classad::eval_in(ad, c).is_true())
    }

    /// Only some jobs of a cluster may be shown, so the batch view cannot
    /// tell how many have left the queue (condor_q's
    /// `querying_partial_clusters`).
    fn partial(&self) -> bool {
        !self.constraints.is_empty() || !self.jobs.is_empty() || self.statuses.is_some()
    }
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
    let argv = rewrite_argv(argv);
    let (args, matches) = parse_args::<Args>(argv)?;
    if args.run && args.hold {
        return Err(usage("-run and -hold are incompatible"));
    }
    if args.long && args.json {
        return Err(usage("cannot print as both -long and -json"));
    }
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
        let e = parse_expr(c).map_err(|e| CliError::Parse {
            what: format!("constraint '{c}'"),
            line: None,
            col: e.col,
            msg: e.msg,
            hint: None,
        })?;
        filter.constraints.push(e);
    }
    filter.constraints_hot = filter.constraints.iter().all(hot_only);
    if args.run {
        filter.statuses = Some(&[
            status::RUNNING,
            status::TRANSFERRING_OUTPUT,
            status::SUSPENDED,
        ]);
    }
    if args.hold {
        filter.statuses = Some(&[status::HELD]);
    }
    let custom = custom_columns(&matches)?;
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
        filter.statuses = Some(&[status::IDLE]);
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

/// Rewrites the colon forms `-af:FLAGS` (and `-autoformat:FLAGS`) and
/// `-wide:N`, which name no option clap knows: `-af:jl A` becomes
/// `--autoformat <mark>jl A`, and `-wide:100` becomes `--output-width=100`.
/// The values of -constraint, -format and -attributes are left alone.
pub fn rewrite_argv(argv: Vec<OsString>) -> Vec<OsString> {
    let mut out = Vec::with_capacity(argv.len() + 1);
    let mut skip = 0usize;
    let mut iter = argv.into_iter();
    out.extend(iter.next());
    for raw in iter {
        if skip > 0 {
            skip -= 1;
            out.push(raw);
            continue;
        }
        let Some(text) = raw.to_str() else {
            out.push(raw);
            continue;
        };
        if text == "--" {
            skip = usize::MAX;
            out.push(raw);
            continue;
        }
        let Some(body) = text.strip_prefix("--").or_else(|| text.strip_prefix('-')) else {
            out.push(raw);
            continue;
        };
        if let Some(flags) = split_af_option(text) {
            out.push(OsString::from("--autoformat"));
            out.push(OsString::from(format!("{FLAGS_MARK}{flags}")));
            continue;
        }
        if let Some((name, rest)) = body.split_once(':')
            && !name.is_empty()
            && !name.contains('=')
            && "wide".starts_with(name)
        {
            out.push(OsString::from(format!("--output-width={rest}")));
            continue;
        }
        if !body.contains('=') && !body.is_empty() {
            if "constraint".starts_with(body) {
                skip = 1;
            } else if "format".starts_with(body) {
                skip = 2;
            } else if body.len() >= 2 && "attributes".starts_with(body) {
                skip = 1;
            }
        }
        out.push(raw);
    }
    out
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
    terminal_width()
}

fn terminal_width() -> Option<usize> {
    // SAFETY: isatty and ioctl(TIOCGWINSZ) only read the descriptor's state
    // into the winsize struct, which lives for the call.
    unsafe {
        if libc::isatty(1) != 1 {
            return None;
        }
        let mut ws: libc::winsize = std::mem::zeroed();
        if libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) == 0 && ws.ws_col > 0 {
            Some(ws.ws_col as usize)
        } else {
            Some(80)
        }
    }
}

// ---------------------------------------------------------------------------
// Reading the queue

/// Job counts for the totals lines.
#[derive(Default)]
struct Totals {
    query: StatusCounts,
    mine: StatusCounts,
    all: StatusCounts,
}

fn count(c: &mut StatusCounts, status: i64) {
    if (1..=7).contains(&status) {
        c[status as usize] += 1;
    }
}

/// Runs the query: every job goes through the filter, and `take` gets
/// the shown ones, with the job's full ad when `full` (built once per job
/// and shared with the constraint). `seen` sees every job first.
fn select(
    q: Option<&Queue>,
    filter: &Filter,
    me: &str,
    full: bool,
    totals: &mut Totals,
    mut seen: impl FnMut(&HotRow<'_>),
    mut take: impl FnMut(&HotRow<'_>, Option<Rc<ClassAd>>) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let Some(q) = q else { return Ok(()) };
    let need_ads = full || !filter.constraints_hot;
    let mut builder = AdBuilder::new();
    q.scan(need_ads, |row| -> Result<(), CliError> {
        count(&mut totals.all, row.status);
        if row.owner == me {
            count(&mut totals.mine, row.status);
        }
        seen(row);
        if !filter.hot_match(row, me) {
            return Ok(());
        }
        let mut ad: Option<Rc<ClassAd>> = None;
        if !filter.constraints.is_empty() {
            let test = if filter.constraints_hot {
                Rc::new(hot_ad(row))
            } else {
                let a = Rc::new(builder.full_ad(q, row)?);
                ad = Some(a.clone());
                a
            };
            if !filter
                .constraints
                .iter()
                .all(|c| eval_in(&test, c).is_true())
            {
                return Ok(());
            }
        }
        count(&mut totals.query, row.status);
        if full && ad.is_none() {
            ad = Some(Rc::new(builder.full_ad(q, row)?));
        }
        take(row, ad)
    })
}

/// A job's hot attributes as an ad.
fn hot_ad(row: &HotRow<'_>) -> ClassAd {
    let mut ad = ClassAd::new();
    ad.insert("ClusterId", Expr::int(row.id.cluster));
    ad.insert("ProcId", Expr::int(row.id.proc));
    ad.insert("JobStatus", Expr::int(row.status));
    ad.insert("Owner", Expr::string(row.owner));
    ad.insert("JobPrio", Expr::int(row.prio));
    ad.insert("QDate", Expr::int(row.qdate));
    ad.insert("EnteredCurrentStatus", Expr::int(row.entered));
    ad
}

/// The value of a hot attribute (an index into [`HOT`]) of a row.
fn hot_value(row: &HotRow<'_>, which: usize) -> Value {
    match which {
        0 => Value::Int(row.id.cluster),
        1 => Value::Int(row.id.proc),
        2 => Value::Int(row.status),
        3 => Value::str(row.owner),
        4 => Value::Int(row.prio),
        5 => Value::Int(row.qdate),
        _ => Value::Int(row.entered),
    }
}

fn hot_index(name: &str) -> Option<usize> {
    HOT.iter().position(|h| h.eq_ignore_ascii_case(name))
}

/// Whether an expression reads nothing but hot attributes of the job (so
/// it has the same value in [`hot_ad`] as in the full ad). Nested ads,
/// other scopes and functions that evaluate text count as reading
/// anything.
pub fn hot_only(e: &Expr) -> bool {
    fn attr_ok(a: &AttrRef) -> bool {
        let base_ok = match &a.base {
            None => true,
            Some(Expr::Attr(b)) => b.base.is_none() && !b.absolute && b.name.key() == "my",
            Some(_) => false,
        };
        base_ok && hot_index(a.name.as_str()).is_some()
    }
    match e {
        Expr::Lit(_) | Expr::RelTimeLit(_) => true,
        Expr::MatchSide(_) | Expr::Ad(_) => false,
        Expr::Attr(a) => attr_ok(a),
        Expr::Unary(_, x) | Expr::Paren(x) => hot_only(x),
        Expr::Binary(_, b) => hot_only(&b.0) && hot_only(&b.1),
        Expr::Elvis(b) | Expr::Index(b) => hot_only(&b.0) && hot_only(&b.1),
        Expr::Cond(b) => hot_only(&b.0) && hot_only(&b.1) && hot_only(&b.2),
        Expr::Call(c) => {
            let dynamic = matches!(
                c.name.to_ascii_lowercase().as_str(),
                "eval" | "evalineachcontext" | "countmatches" | "unresolved" | "debug"
            );
            !dynamic && c.args.iter().all(hot_only)
        }
        Expr::List(items) => items.iter().all(hot_only),
    }
}

// ---------------------------------------------------------------------------
// The views

/// Prints the view the options ask for.
pub fn show(
    q: Option<&Queue>,
    opts: &Options,
    ctx: &Context,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let mut totals = Totals::default();
    match opts.view {
        View::Batch => show_batch(q, opts, ctx, &mut totals, out),
        View::Totals => {
            select(
                q,
                &opts.filter,
                &ctx.me,
                false,
                &mut totals,
                |_| {},
                |_, _| Ok(()),
            )?;
            write_title(ctx, out)?;
            write_totals(ctx, &totals, out)?;
            Ok(())
        }
        View::NoBatch | View::Hold | View::Run => show_jobs(q, opts, ctx, &mut totals, out),
        View::Custom => show_custom(q, opts, ctx, &mut totals, out),
        View::Long | View::Json => show_ads(q, opts, ctx, &mut totals, out),
        View::Analyze(depth) => {
            let cfg = Config::load()?;
            show_analysis(q, &cfg, depth, opts, ctx, out)
        }
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
    let running = c[status::RUNNING as usize] + c[status::TRANSFERRING_OUTPUT as usize];
    let jobs: i64 = c.iter().sum();
    format!(
        "Total for {who}: {jobs} jobs; {} completed, {} removed, {} idle, {running} running, {} held, {} suspended",
        c[status::COMPLETED as usize],
        c[status::REMOVED as usize],
        c[status::IDLE as usize],
        c[status::HELD as usize],
        c[status::SUSPENDED as usize],
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

// --- batch view ---------------------------------------------------------

/// The shown jobs of one cluster.
#[derive(Debug)]
struct ClusterRows {
    cluster: i64,
    /// The first shown job's owner and QDate.
    owner: String,
    qdate: i64,
    first_proc: i64,
    min_proc: i64,
    max_proc: i64,
    count: i64,
    states: StatusCounts,
    /// The highest proc of the cluster in the queue, shown or not.
    max_proc_in_queue: i64,
}

/// What the batch view needs from a cluster's ad (and its first shown
/// job's differences).
#[derive(Debug, Default)]
struct ClusterInfo {
    batch_name: Option<String>,
    universe: i64,
    dagman_job_id: Option<i64>,
    dag_node_name: Option<String>,
    total_submit_procs: Option<i64>,
    dag_nodes_total: i64,
    dag_nodes_done: i64,
}

/// One line of the batch view.
#[derive(Debug, PartialEq)]
pub struct BatchLine {
    pub owner: String,
    pub name: String,
    pub qdate: i64,
    pub done: i64,
    pub run: i64,
    pub idle: i64,
    pub held: i64,
    pub total: i64,
    pub ids: String,
}

fn show_batch(
    q: Option<&Queue>,
    opts: &Options,
    ctx: &Context,
    totals: &mut Totals,
    out: &mut impl Write,
) -> Result<(), CliError> {
    // Both closures below update the clusters: `seen` the highest proc in
    // the queue, `take` the shown jobs.
    let clusters_cell = std::cell::RefCell::new(Vec::<ClusterRows>::new());
    {
        select(
            q,
            &opts.filter,
            &ctx.me,
            false,
            totals,
            |row| {
                if let Some(c) = clusters_cell.borrow_mut().last_mut()
                    && c.cluster == row.id.cluster
                {
                    c.max_proc_in_queue = row.id.proc;
                }
            },
            |row, _| {
                let mut cs = clusters_cell.borrow_mut();
                match cs.last_mut() {
                    Some(c) if c.cluster == row.id.cluster => {
                        c.count += 1;
                        c.min_proc = c.min_proc.min(row.id.proc);
                        c.max_proc = c.max_proc.max(row.id.proc);
                        count(&mut c.states, row.status);
                    }
                    _ => {
                        let mut states = StatusCounts::default();
                        count(&mut states, row.status);
                        cs.push(ClusterRows {
                            cluster: row.id.cluster,
                            owner: row.owner.to_string(),
                            qdate: row.qdate,
                            first_proc: row.id.proc,
                            min_proc: row.id.proc,
                            max_proc: row.id.proc,
                            count: 1,
                            states,
                            max_proc_in_queue: row.id.proc,
                        });
                    }
                }
                Ok(())
            },
        )?;
    }
    let clusters = clusters_cell.into_inner();
    let lines = match q {
        Some(q) => batch_lines(q, &clusters, opts.filter.partial())?,
        None => Vec::new(),
    };
    write_title(ctx, out)?;
    for l in render_batch(&lines, ctx.width) {
        write_line(out, &l, ctx.width)?;
    }
    writeln!(out)?;
    write_totals(ctx, totals, out)?;
    Ok(())
}

/// Reads what the batch view needs of each cluster.
fn cluster_info(q: &Queue, c: &ClusterRows) -> Result<ClusterInfo, QueueError> {
    let mut ad = q.load_cluster_ad(c.cluster)?.unwrap_or_default();
    if let Some(diff) = q.load_diff(JobId {
        cluster: c.cluster,
        proc: c.first_proc,
    })? {
        ad.update(&diff);
    }
    let ad = Rc::new(ad);
    let int = |n: &str| match eval_attr(&ad, n) {
        Value::Int(i) => Some(i),
        _ => None,
    };
    let string = |n: &str| match eval_attr(&ad, n) {
        Value::Str(s) => Some(s.to_string()),
        _ => None,
    };
    let dagman_job_id = match eval_attr(&ad, "DAGManJobId") {
        Value::Int(i) if i > 0 => Some(i),
        Value::Str(s) => s
            .split('.')
            .next()
            .and_then(|c| c.parse::<i64>().ok())
            .filter(|&i| i > 0),
        _ => None,
    };
    Ok(ClusterInfo {
        batch_name: string("JobBatchName"),
        universe: int("JobUniverse").unwrap_or(5),
        dagman_job_id,
        dag_node_name: string("DAGNodeName"),
        total_submit_procs: int("TotalSubmitProcs"),
        dag_nodes_total: int("DAG_NodesTotal").unwrap_or(0),
        dag_nodes_done: int("DAG_NodesDone").unwrap_or(0),
    })
}

const SCHEDULER_UNIVERSE: i64 = 7;

/// Folds clusters into batch lines as condor_q's reduce_results does:
/// clusters of one owner that share a batch name are one line, DAG node
/// clusters join their DAGMan job's line, every other cluster is a line.
fn batch_lines(
    q: &Queue,
    clusters: &[ClusterRows],
    partial: bool,
) -> Result<Vec<BatchLine>, CliError> {
    let infos: Vec<ClusterInfo> = clusters
        .iter()
        .map(|c| cluster_info(q, c))
        .collect::<Result<_, _>>()?;
    // TotalSubmitProcs is what the schedd records; without it, the highest
    // proc id the cluster ever had tells the same for clusters submitted
    // whole.
    let history = if infos.iter().any(|i| i.total_submit_procs.is_none()) {
        q.history_max_procs()?
    } else {
        HashMap::new()
    };
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut by_cluster: HashMap<i64, usize> = HashMap::new();
    let mut by_name: HashMap<(String, String), usize> = HashMap::new();
    for (i, (c, info)) in clusters.iter().zip(&infos).enumerate() {
        let parent = info.dagman_job_id.and_then(|d| by_cluster.get(&d).copied());
        let group = if let Some(g) = parent {
            g
        } else if let (Some(name), None, false) = (
            &info.batch_name,
            info.dagman_job_id,
            info.universe == SCHEDULER_UNIVERSE,
        ) {
            *by_name
                .entry((name.clone(), c.owner.clone()))
                .or_insert_with(|| {
                    groups.push(Vec::new());
                    groups.len() - 1
                })
        } else {
            groups.push(Vec::new());
            groups.len() - 1
        };
        groups[group].push(i);
        by_cluster.insert(c.cluster, group);
    }
    let mut lines = Vec::with_capacity(groups.len());
    for members in &groups {
        let first = &clusters[members[0]];
        let finfo = &infos[members[0]];
        let mut states = StatusCounts::default();
        let (mut done, mut total, mut unknown) = (0i64, 0i64, false);
        let mut ids: Option<(JobId, JobId)> = None;
        for &m in members {
            let (c, info) = (&clusters[m], &infos[m]);
            if info.universe == SCHEDULER_UNIVERSE {
                total += info.dag_nodes_total;
                done += info.dag_nodes_done;
                continue;
            }
            for (s, n) in c.states.iter().enumerate() {
                states[s] += n;
            }
            if info.dagman_job_id.is_none() {
                let submitted = info.total_submit_procs.or_else(|| {
                    let hist = history.get(&c.cluster).copied().unwrap_or(-1);
                    Some(c.max_proc_in_queue.max(hist) + 1)
                });
                match submitted {
                    Some(t) => {
                        total += t;
                        if !partial {
                            done += t - c.count;
                        }
                    }
                    None => unknown = true,
                }
            }
            let lo = JobId {
                cluster: c.cluster,
                proc: c.min_proc,
            };
            let hi = JobId {
                cluster: c.cluster,
                proc: c.max_proc,
            };
            ids = Some(match ids {
                None => (lo, hi),
                Some((a, b)) => (a.min(lo), b.max(hi)),
            });
        }
        // A DAGMan job alone stands for itself.
        let (lo, hi) = ids.unwrap_or((
            JobId {
                cluster: first.cluster,
                proc: first.min_proc,
            },
            JobId {
                cluster: first.cluster,
                proc: first.max_proc,
            },
        ));
        let name = match (&finfo.batch_name, &finfo.dag_node_name) {
            (Some(n), _) => n.clone(),
            _ if finfo.universe == SCHEDULER_UNIVERSE => format!("DAG: {}", first.cluster),
            (None, Some(node)) if finfo.dagman_job_id.is_some() => format!("NODE: {node}"),
            _ => format!("ID: {}", first.cluster),
        };
        lines.push(BatchLine {
            owner: first.owner.clone(),
            name,
            qdate: first.qdate,
            done: if unknown { 0 } else { done },
            run: states[status::RUNNING as usize] + states[status::TRANSFERRING_OUTPUT as usize],
            idle: states[status::IDLE as usize] + states[status::SUSPENDED as usize],
            held: states[status::HELD as usize],
            total: if unknown { 0 } else { total },
            ids: job_ids_text(lo, hi),
        });
    }
    Ok(lines)
}

/// `c.p`, `c.p-q` or `c1.p1 ... c2.p2`.
pub fn job_ids_text(lo: JobId, hi: JobId) -> String {
    if lo == hi {
        format!("{lo}")
    } else if lo.cluster == hi.cluster {
        format!("{}.{}-{}", lo.cluster, lo.proc, hi.proc)
    } else {
        format!("{lo} ... {hi}")
    }
}

/// The header and lines of the batch view.
pub fn render_batch(lines: &[BatchLine], width: Option<usize>) -> Vec<String> {
    let any_held = lines.is_empty() || lines.iter().any(|l| l.held > 0);
    let (owner_w, name_w, truncate) = if lines.is_empty() {
        // The widths of the headings (condor_q fixes them up only when
        // there are rows).
        (5, 12, false)
    } else {
        let longest_owner = lines
            .iter()
            .map(|l| l.owner.chars().count())
            .max()
            .unwrap_or(0);
        let longest_name = lines
            .iter()
            .map(|l| l.name.chars().count())
            .max()
            .unwrap_or(0);
        let ids = lines.iter().map(|l| l.ids.len()).max().unwrap_or(0);
        let (o, n) = match width {
            Some(w) => shrink_batch_widths(
                w as i64,
                longest_owner as i64,
                longest_name as i64,
                ids as i64,
            ),
            None => (longest_owner as i64, longest_name as i64),
        };
        let heading_w = longest_owner.max(5) as i64;
        let owner_w = if o < heading_w { o.max(8) } else { o };
        (owner_w as usize, n.max(10) as usize, width.is_some())
    };
    let counter_heads: Vec<&str> = if any_held {
        vec!["  DONE", "  RUN ", "  IDLE", "  HOLD", " TOTAL"]
    } else {
        vec!["  DONE", "  RUN ", "  IDLE", " TOTAL"]
    };
    let mut out = Vec::with_capacity(lines.len() + 1);
    out.push(format!(
        "{:<owner_w$} {:<name_w$} {:>12} {} JOB_IDS",
        "OWNER",
        "BATCH_NAME",
        "SUBMITTED",
        counter_heads.join(" ")
    ));
    for l in lines {
        let counter = |n: i64| {
            if n > 0 {
                format!("{n:6}")
            } else {
                "     _".to_string()
            }
        };
        let mut counters = vec![counter(l.done), counter(l.run), counter(l.idle)];
        if any_held {
            counters.push(counter(l.held));
        }
        counters.push(counter(l.total));
        let cut = |s: &str, w: usize| -> String {
            if truncate {
                s.chars().take(w).collect()
            } else {
                s.to_string()
            }
        };
        out.push(format!(
            "{:<owner_w$} {:<name_w$} {:>12} {} {}",
            cut(&l.owner, owner_w),
            cut(&l.name, name_w),
            date(l.qdate),
            counters.join(" "),
            l.ids
        ));
    }
    out
}

/// condor_q's fit of the OWNER, BATCH_NAME and JOB_IDS columns into a
/// terminal `width` columns wide (reduce_results): returns the owner and
/// batch name widths to use.
pub fn shrink_batch_widths(width: i64, owner: i64, name: i64, ids: i64) -> (i64, i64) {
    let var_wid = width - 50;
    let (mut owner_w, mut name_w, mut ids_w) = (owner, name, ids);
    if name_w + owner_w + ids_w > var_wid {
        let var_min = 8 + 10 + 9;
        let (mut bw, mut nw) = ((var_wid - var_min) / 3, (var_wid - var_min) / 3);
        let iw = (var_wid - var_min) / 3;
        if iw < ids_w {
            let needed = (name_w + owner_w) - (bw + nw + 10 + 8);
            if needed > 7 && bw < 10 {
                ids_w /= 2;
            }
        }
        if iw + 9 > ids_w {
            let rw = iw + 9 - ids_w;
            nw += rw / 2;
            bw += rw - rw / 2;
        }
        if bw + 10 > name_w {
            let rw = bw + 10 - name_w;
            nw = (8 + nw + rw).min(owner_w) - 8;
        }
        if nw + 8 > owner_w {
            let rw = nw + 8 - owner_w;
            bw = (10 + bw + rw).min(name_w) - 10;
        }
        name_w = name_w.min(bw + 10);
        owner_w = owner_w.min(nw + 8);
    }
    (owner_w, name_w)
}

// --- one line per job: -nobatch, -hold, -run -----------------------------

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

fn show_jobs(
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
                View::Hold => ad_string(&ad, "HoldReason").unwrap_or_default(),
                View::Run => remote_host(&ad, &ctx.host),
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
                run_time: run_time(&ad, row.status, ctx.now),
                st: status_chars(&ad, row.status),
                prio: row.prio,
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
    if view != View::Run {
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

fn ad_string(ad: &Rc<ClassAd>, name: &str) -> Option<String> {
    match eval_attr(ad, name) {
        Value::Str(s) => Some(s.to_string()),
        _ => None,
    }
}

fn ad_number(ad: &Rc<ClassAd>, name: &str) -> Option<f64> {
    match eval_attr(ad, name) {
        Value::Int(i) => Some(i as f64),
        Value::Real(r) => Some(r),
        _ => None,
    }
}

fn ad_true(ad: &Rc<ClassAd>, name: &str) -> bool {
    matches!(eval_attr(ad, name), Value::Bool(true))
}

/// RUN_TIME as condor_q computes it by default (the current run): for a
/// running job the time since its shadow started, for an idle or held job
/// its last run's wall-clock time, else 0. No RemoteUserCpu, no value.
fn run_time(ad: &Rc<ClassAd>, st: i64, now: i64) -> Option<i64> {
    ad_number(ad, "RemoteUserCpu")?;
    let running = matches!(
        st,
        status::RUNNING | status::TRANSFERRING_OUTPUT | status::SUSPENDED
    );
    let start = ad_number(ad, "ShadowBday")
        .or_else(|| ad_number(ad, "JobCurrentStartDate"))
        .unwrap_or(0.0) as i64;
    Some(if running && start != 0 {
        now - start
    } else if matches!(st, status::IDLE | status::HELD) {
        ad_number(ad, "LastRemoteWallClockTime").unwrap_or(0.0) as i64
    } else {
        0
    })
}

/// ST: the status letter, with file transfer shown as `<`, `>`, `<q`, `q>`.
fn status_chars(ad: &Rc<ClassAd>, st: i64) -> [char; 2] {
    let mut c = [status::letter(st).chars().next().unwrap_or('?'), ' '];
    let queued = ad_true(ad, "TransferQueued");
    if ad_true(ad, "TransferringInput") {
        c = ['<', if queued { 'q' } else { ' ' }];
    }
    if ad_true(ad, "TransferringOutput") || st == status::TRANSFERRING_OUTPUT {
        c = [if queued { 'q' } else { ' ' }, '>'];
    }
    c
}

/// SIZE: MemoryUsage (MiB), else ImageSize (KiB) in MiB.
fn memory_usage(ad: &Rc<ClassAd>) -> Option<f64> {
    match eval_attr(ad, "MemoryUsage") {
        Value::Int(i) => return Some(i as f64),
        Value::Real(r) => return Some(r.trunc()),
        _ => {}
    }
    match eval_attr(ad, "ImageSize") {
        Value::Int(i) => Some(i as f64 / 1024.0),
        Value::Real(r) => Some(r.trunc() / 1024.0),
        _ => None,
    }
}

/// HOST(S): where the job runs; this machine for scheduler and local
/// universe jobs.
fn remote_host(ad: &Rc<ClassAd>, host: &str) -> String {
    let h = match ad_number(ad, "JobUniverse") {
        Some(u) if u == 7.0 || u == 12.0 => host.to_string(),
        _ => ad_string(ad, "RemoteHost").unwrap_or_default(),
    };
    // Beyond condor_q: a deferred job's shadow may still be waiting.
    match eval_attr(ad, "DeferralWaitUntil") {
        Value::Int(t) if t > crate::clock::now() => format!("{h} (waits until {})", local_stamp(t)),
        _ => h,
    }
}

// --- -long and -json --------------------------------------------------------

fn show_ads(
    q: Option<&Queue>,
    opts: &Options,
    ctx: &Context,
    totals: &mut Totals,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let json = opts.view == View::Json;
    let mut first = true;
    select(
        q,
        &opts.filter,
        &ctx.me,
        true,
        totals,
        |_| {},
        |_, ad| {
            let full = ad.expect("a full ad was asked for");
            let mut ad = (*full).clone();
            // condor_q asks the schedd for ServerTime with -long, so that a
            // saved listing still tells how old its times are.
            ad.insert("ServerTime", Expr::int(ctx.now));
            let ad = match &opts.attributes {
                Some(names) => project(&ad, Some(names)),
                None => ad,
            };
            if json {
                out.write_all(if first { b"[\n" } else { b",\n" })?;
                out.write_all(ad_to_json(&ad, 0).as_bytes())?;
            } else {
                out.write_all(crate::classad::unparse::ad_to_old(&ad, true).as_bytes())?;
                out.write_all(b"\n")?;
            }
            first = false;
            Ok(())
        },
    )?;
    if json && !first {
        out.write_all(b"\n]\n")?;
    }
    Ok(())
}

// --- -af and -format ---------------------------------------------------------

/// One output column of -af or -format.
#[derive(Debug)]
pub struct Column {
    /// The attribute name or expression as given.
    pub text: String,
    /// Set when the text is a plain attribute name.
    pub attr: Option<String>,
    pub expr: Expr,
    /// The hot attribute the text names, read straight from the row.
    pub hot: Option<usize>,
    pub format: Printf,
    /// The heading (-af:h).
    pub heading: Option<String>,
    /// No separator before / after this column.
    pub no_prefix: bool,
    pub no_suffix: bool,
}

/// The -af/-format columns and the separators around them.
#[derive(Debug)]
pub struct Custom {
    pub columns: Vec<Column>,
    pub row_prefix: &'static str,
    pub col_prefix: &'static str,
    pub col_suffix: &'static str,
    pub row_suffix: &'static str,
    pub headings: bool,
}

impl Custom {
    /// Whether every column can be printed from the hot columns.
    fn hot(&self) -> bool {
        self.columns
            .iter()
            .all(|c| c.format.spec.is_none() || c.hot.is_some() || hot_only(&c.expr))
    }
}

/// Builds the -af and -format columns in command-line order.
fn custom_columns(m: &ArgMatches) -> Result<Option<Custom>, CliError> {
    enum Item<'a> {
        Af(Vec<&'a String>),
        Format(&'a String, &'a String),
    }
    let mut items: Vec<(usize, Item)> = Vec::new();
    if let (Some(occ), Some(idx)) = (
        m.get_occurrences::<String>("autoformat"),
        m.indices_of("autoformat"),
    ) {
        let idx: Vec<usize> = idx.collect();
        let mut k = 0;
        for o in occ {
            let vals: Vec<&String> = o.collect();
            items.push((idx[k], Item::Af(vals.clone())));
            k += vals.len();
        }
    }
    if let (Some(occ), Some(idx)) = (
        m.get_occurrences::<String>("format"),
        m.indices_of("format"),
    ) {
        let idx: Vec<usize> = idx.collect();
        for (k, o) in occ.enumerate() {
            let v: Vec<&String> = o.collect();
            if let [f, a] = v.as_slice() {
                items.push((idx[2 * k], Item::Format(f, a)));
            }
        }
    }
    if items.is_empty() {
        return Ok(None);
    }
    items.sort_by_key(|(i, _)| *i);
    let mut custom = Custom {
        columns: Vec::new(),
        row_prefix: "",
        col_prefix: "",
        col_suffix: "",
        row_suffix: "",
        headings: false,
    };
    for (_, item) in items {
        match item {
            Item::Format(f, a) => {
                let format = Printf::parse(&collapse_escapes(f));
                custom.columns.push(column(a, format, None)?);
            }
            Item::Af(vals) => add_autoformat(&mut custom, &vals)?,
        }
    }
    Ok(Some(custom))
}

/// One -af occurrence: its flags set the separators, as each -af does in
/// condor_q (parse_autoformat_args), and its attributes become columns.
fn add_autoformat(custom: &mut Custom, vals: &[&String]) -> Result<(), CliError> {
    let (flags, attrs) = match vals.split_first() {
        Some((f, rest)) if f.starts_with(FLAGS_MARK) => (&f[FLAGS_MARK.len_utf8()..], rest),
        _ => ("", vals),
    };
    if attrs.is_empty() {
        return Err(usage("-autoformat requires at least one attribute"));
    }
    let (mut label, mut quote, mut raw, mut heads, mut jobid) = (false, false, false, false, false);
    let mut conv = None;
    custom.row_prefix = "";
    custom.col_prefix = " ";
    custom.col_suffix = "";
    // As HTCondor's parse_autoformat_args: other letters are ignored, and
    // of `,` and `n` the last one wins.
    for ch in flags.chars() {
        match ch {
            ',' => custom.col_suffix = ",",
            'n' => custom.col_suffix = "\n",
            'g' => {
                custom.col_prefix = "";
                custom.row_prefix = "\n";
            }
            't' => custom.col_prefix = "\t",
            'l' => label = true,
            'V' => quote = true,
            'r' | 'o' => raw = true,
            'h' => heads = true,
            'j' => jobid = true,
            'T' => conv = Some('T'),
            'Y' => conv = Some('Y'),
            _ => {}
        }
    }
    custom.row_suffix = "\n";
    heads |= custom.headings;
    custom.headings = heads;
    if jobid {
        let (cf, pf) = match (heads, label) {
            (true, true) => ("ID = %4d.", "%-3d"),
            (true, false) => ("%4d.", "%-3d"),
            (false, true) => ("ID = %d.", "%d"),
            (false, false) => ("%d.", "%d"),
        };
        let mut c = column(
            "ClusterId",
            Printf::parse(cf),
            heads.then(|| " ID".to_string()),
        )?;
        c.no_suffix = true;
        custom.columns.push(c);
        let mut p = column("ProcId", Printf::parse(pf), heads.then(|| " ".to_string()))?;
        p.no_prefix = true;
        custom.columns.push(p);
    }
    let letter = match (raw, conv, quote) {
        (true, _, _) => 'r',
        (false, Some(c), _) => c,
        (false, None, true) => 'V',
        (false, None, false) => 'v',
    };
    for a in attrs {
        // Headings replace labels.
        let fmt = if label && !heads {
            format!("{a} = %{letter}")
        } else {
            format!("%{letter}")
        };
        custom.columns.push(column(
            a,
            Printf::parse(&fmt),
            heads.then(|| a.to_string()),
        )?);
    }
    Ok(())
}

/// A column for `text`, which must be an expression (an attribute name is
/// one), read as HTCondor reads them, in old ClassAd syntax.
fn column(text: &str, format: Printf, heading: Option<String>) -> Result<Column, CliError> {
    let expr = parse_expr_old(text).map_err(|_| CliError::Usage {
        msg: format!("'{text}' is neither an attribute name nor a ClassAd expression"),
        hint: Some("quote an expression for the shell, e.g. -af 'RequestMemory * 2'".into()),
    })?;
    let attr = match &expr {
        Expr::Attr(a) if a.base.is_none() && !a.absolute => Some(a.name.as_str().to_string()),
        _ => None,
    };
    Ok(Column {
        text: text.to_string(),
        hot: attr.as_deref().and_then(hot_index),
        attr,
        expr,
        format,
        heading,
        no_prefix: false,
        no_suffix: false,
    })
}

fn show_custom(
    q: Option<&Queue>,
    opts: &Options,
    ctx: &Context,
    totals: &mut Totals,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let custom = opts.custom.as_ref().expect("custom columns");
    let full = !custom.hot();
    let needs_tiny = !full
        && custom
            .columns
            .iter()
            .any(|c| c.format.spec.is_some() && c.hot.is_none());
    let mut table: Vec<Vec<String>> = Vec::new();
    let mut line = String::new();
    let mut cells: Vec<String> = Vec::with_capacity(custom.columns.len());
    select(
        q,
        &opts.filter,
        &ctx.me,
        full,
        totals,
        |_| {},
        |row, ad| {
            let ad = match ad {
                Some(a) => Some(a),
                None if needs_tiny => Some(Rc::new(hot_ad(row))),
                None => None,
            };
            cells.resize(custom.columns.len(), String::new());
            for (c, cell) in custom.columns.iter().zip(cells.iter_mut()) {
                cell.clear();
                render_cell(c, row, ad.as_ref(), cell);
            }
            if custom.headings {
                table.push(cells.clone());
            } else {
                line.clear();
                join_row(custom, &cells, None, &mut line);
                out.write_all(line.as_bytes())?;
            }
            Ok(())
        },
    )?;
    if custom.headings {
        let mut widths: Vec<usize> = custom
            .columns
            .iter()
            .map(|c| c.heading.as_deref().map_or(0, |h| h.chars().count()))
            .collect();
        for row in &table {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let heads: Vec<String> = custom
            .columns
            .iter()
            .map(|c| c.heading.clone().unwrap_or_default())
            .collect();
        let mut head = String::new();
        join_row(custom, &heads, Some(&widths), &mut head);
        out.write_all(trim_lines(&head).as_bytes())?;
        for row in &table {
            line.clear();
            join_row(custom, row, Some(&widths), &mut line);
            out.write_all(trim_lines(&line).as_bytes())?;
        }
    }
    Ok(())
}

/// Removes blanks at the ends of lines (the padding of a last column).
fn trim_lines(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for piece in text.split_inclusive('\n') {
        match piece.strip_suffix('\n') {
            Some(l) => {
                s.push_str(l.trim_end_matches(' '));
                s.push('\n');
            }
            None => s.push_str(piece.trim_end_matches(' ')),
        }
    }
    s
}

/// One output row: the row prefix, the cells with their separators
/// (padded to `widths` when given), the row suffix.
fn join_row(custom: &Custom, cells: &[String], widths: Option<&[usize]>, out: &mut String) {
    out.push_str(custom.row_prefix);
    let n = cells.len();
    for (i, (c, cell)) in custom.columns.iter().zip(cells).enumerate() {
        if i > 0 && !c.no_prefix {
            out.push_str(custom.col_prefix);
        }
        match widths {
            Some(w) => {
                let _ = std::fmt::Write::write_fmt(out, format_args!("{cell:<w$}", w = w[i]));
            }
            None => out.push_str(cell),
        }
        if i + 1 < n && !c.no_suffix {
            out.push_str(custom.col_suffix);
        }
    }
    out.push_str(custom.row_suffix);
}

/// One cell, as condor_q's print mask renders a printf-style column: the
/// attribute itself when the job has it, else the text as an expression.
/// Appends to `out`.
fn render_cell(c: &Column, row: &HotRow<'_>, ad: Option<&Rc<ClassAd>>, out: &mut String) {
    let Some(spec) = &c.format.spec else {
        out.push_str(&c.format.before);
        out.push_str(&c.format.after);
        return;
    };
    let found = match (c.hot, ad, c.attr.as_deref()) {
        (Some(_), _, _) => true,
        (None, Some(ad), Some(a)) => ad.contains(a),
        _ => false,
    };
    let value = || match (c.hot, ad) {
        (Some(h), _) => hot_value(row, h),
        (None, Some(ad)) if found => eval_attr(ad, c.attr.as_deref().unwrap_or_default()),
        (None, Some(ad)) => eval_in(ad, &c.expr),
        (None, None) => eval_in(&Rc::new(ClassAd::new()), &c.expr),
    };
    let raw = || match (c.hot, ad, c.attr.as_deref()) {
        (Some(h), _, _) => unparse_old(&Expr::Lit(hot_value(row, h))),
        (None, Some(ad), Some(a)) if found => ad.get(a).map(unparse_old).unwrap_or_default(),
        _ => unparse_old(&c.expr),
    };
    let f = &c.format;
    match spec.kind() {
        Kind::Str => match value() {
            Value::Str(s) => f.write_str(out, &s),
            _ if found => f.write_str(out, &raw()),
            _ => {}
        },
        Kind::Raw => f.write_str(out, &raw()),
        Kind::Value => match value() {
            // The common cases without a detour through the unparser.
            Value::Str(s) if spec.conv == 'v' => f.write_str(out, &s),
            Value::Int(i) if f.plain() => {
                let _ = std::fmt::Write::write_fmt(out, format_args!("{i}"));
            }
            v => f.write_str(out, &value_old(&v)),
        },
        k => {
            let n = match value() {
                Value::Int(i) => Num::Int(i),
                Value::Real(r) => Num::Real(r),
                Value::Bool(b) => Num::Int(b as i64),
                Value::AbsTime(t) if k == Kind::Date => Num::Int(t.secs),
                _ => return,
            };
            out.push_str(&match k {
                // HTCondor prints times and dates alone, without the
                // literal text of the format.
                Kind::Time => pad(&duration(n.as_int()), spec.width, spec.left),
                Kind::Date => pad(&date(n.as_int()), spec.width, spec.left),
                Kind::Float => f.apply_float(n.as_real()),
                _ => f.apply_int(n.as_int()),
            });
        }
    }
}

#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Real(f64),
}

impl Num {
    fn as_int(self) -> i64 {
        match self {
            Num::Int(i) => i,
            Num::Real(r) => r as i64,
        }
    }
    fn as_real(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Real(r) => r,
        }
    }
}

// ---------------------------------------------------------------------------
// printf

/// A -format format: literal text around at most one conversion.
#[derive(Clone, Debug, PartialEq)]
pub struct Printf {
    pub before: String,
    pub spec: Option<Spec>,
    pub after: String,
}

/// One printf conversion: `%[flags][width][.precision][length]conv`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Spec {
    pub left: bool,
    pub plus: bool,
    pub space: bool,
    pub zero: bool,
    pub alt: bool,
    pub width: usize,
    pub precision: Option<usize>,
    pub conv: char,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Int,
    Float,
    Str,
    Value,
    Raw,
    Time,
    Date,
}

impl Spec {
    fn kind(&self) -> Kind {
        match self.conv {
            'd' | 'i' | 'u' | 'o' | 'x' | 'X' | 'c' => Kind::Int,
            'e' | 'E' | 'f' | 'F' | 'g' | 'G' | 'a' | 'A' => Kind::Float,
            'v' | 'V' => Kind::Value,
            'r' | 'R' => Kind::Raw,
            'T' => Kind::Time,
            'Y' => Kind::Date,
            _ => Kind::Str,
        }
    }
}

impl Printf {
    /// Finds the first conversion; `%%` is a literal `%` everywhere, and
    /// text after the conversion is literal.
    pub fn parse(fmt: &str) -> Printf {
        let chars: Vec<char> = fmt.chars().collect();
        let mut before = String::new();
        let mut i = 0;
        while i < chars.len() {
            if chars[i] != '%' {
                before.push(chars[i]);
                i += 1;
                continue;
            }
            if chars.get(i + 1) == Some(&'%') {
                before.push('%');
                i += 2;
                continue;
            }
            if let Some((spec, next)) = parse_spec(&chars, i + 1) {
                let after = unpercent(&chars[next..].iter().collect::<String>());
                return Printf {
                    before,
                    spec: Some(spec),
                    after,
                };
            }
            before.push('%');
            i += 1;
        }
        Printf {
            before,
            spec: None,
            after: String::new(),
        }
    }

    /// The text of a format without a conversion.
    fn literal(&self) -> String {
        format!("{}{}", self.before, self.after)
    }

    fn wrap(&self, body: &str) -> String {
        format!("{}{body}{}", self.before, self.after)
    }

    /// Just the conversion: no text around it, no width, no precision.
    fn plain(&self) -> bool {
        self.before.is_empty()
            && self.after.is_empty()
            && self
                .spec
                .as_ref()
                .is_some_and(|s| s.width == 0 && s.precision.is_none())
    }

    /// `%s`-style: precision cuts, width pads.
    pub fn apply_str(&self, s: &str) -> String {
        let mut out = String::new();
        self.write_str(&mut out, s);
        out
    }

    /// [`Printf::apply_str`], appending to `out`.
    pub fn write_str(&self, out: &mut String, s: &str) {
        out.push_str(&self.before);
        match &self.spec {
            Some(sp) if sp.width > 0 || sp.precision.is_some() => {
                let cut: String = match sp.precision {
                    Some(p) => s.chars().take(p).collect(),
                    None => s.to_string(),
                };
                out.push_str(&pad(&cut, sp.width, sp.left));
            }
            Some(_) => out.push_str(s),
            None => {}
        }
        out.push_str(&self.after);
    }

    pub fn apply_int(&self, i: i64) -> String {
        let Some(sp) = &self.spec else {
            return self.literal();
        };
        if sp.kind() == Kind::Float {
            return self.apply_float(i as f64);
        }
        if sp.conv == 'c' {
            let ch = char::from_u32(i as u32).unwrap_or('?');
            return self.wrap(&pad(&ch.to_string(), sp.width, sp.left));
        }
        let negative = i < 0 && matches!(sp.conv, 'd' | 'i');
        let u = if matches!(sp.conv, 'd' | 'i') {
            i.unsigned_abs()
        } else {
            i as u64
        };
        let mut digits = match sp.conv {
            'o' => format!("{u:o}"),
            'x' => format!("{u:x}"),
            'X' => format!("{u:X}"),
            _ => u.to_string(),
        };
        if let Some(p) = sp.precision {
            if p == 0 && u == 0 {
                digits.clear();
            }
            while digits.len() < p {
                digits.insert(0, '0');
            }
        }
        let prefix = if negative {
            "-"
        } else if sp.plus && matches!(sp.conv, 'd' | 'i') {
            "+"
        } else if sp.space && matches!(sp.conv, 'd' | 'i') {
            " "
        } else if sp.alt && u != 0 && sp.conv == 'x' {
            "0x"
        } else if sp.alt && u != 0 && sp.conv == 'X' {
            "0X"
        } else if sp.alt && sp.conv == 'o' && !digits.starts_with('0') {
            "0"
        } else {
            ""
        };
        self.wrap(&pad_number(
            prefix,
            &digits,
            sp.width,
            sp.left,
            sp.zero && sp.precision.is_none(),
        ))
    }

    pub fn apply_float(&self, r: f64) -> String {
        let Some(sp) = &self.spec else {
            return self.literal();
        };
        if sp.kind() == Kind::Int {
            return self.apply_int(r as i64);
        }
        let p = sp.precision.unwrap_or(6);
        let upper = sp.conv.is_ascii_uppercase();
        let a = r.abs();
        let body = if !a.is_finite() {
            let t = if a.is_nan() { "nan" } else { "inf" };
            if upper {
                t.to_uppercase()
            } else {
                t.to_string()
            }
        } else {
            match sp.conv.to_ascii_lowercase() {
                'f' => format!("{a:.p$}"),
                'g' => format_g(a, p, upper),
                _ => format_e(a, p, upper),
            }
        };
        let prefix = if r.is_sign_negative() && !r.is_nan() {
            "-"
        } else if sp.plus {
            "+"
        } else if sp.space {
            " "
        } else {
            ""
        };
        self.wrap(&pad_number(
            prefix,
            &body,
            sp.width,
            sp.left,
            sp.zero && a.is_finite(),
        ))
    }
}

fn parse_spec(chars: &[char], mut i: usize) -> Option<(Spec, usize)> {
    let mut sp = Spec::default();
    while let Some(&c) = chars.get(i) {
        match c {
            '-' => sp.left = true,
            '+' => sp.plus = true,
            ' ' => sp.space = true,
            '0' => sp.zero = true,
            '#' => sp.alt = true,
            _ => break,
        }
        i += 1;
    }
    while let Some(d) = chars.get(i).and_then(|c| c.to_digit(10)) {
        sp.width = sp.width * 10 + d as usize;
        i += 1;
    }
    if chars.get(i) == Some(&'.') {
        i += 1;
        let mut p = 0;
        while let Some(d) = chars.get(i).and_then(|c| c.to_digit(10)) {
            p = p * 10 + d as usize;
            i += 1;
        }
        sp.precision = Some(p);
    }
    while matches!(chars.get(i), Some('h' | 'l' | 'L' | 'q' | 'j' | 'z' | 't')) {
        i += 1;
    }
    let conv = *chars.get(i)?;
    if !"diouxXceEfFgGaAsvVrRTY".contains(conv) {
        return None;
    }
    sp.conv = conv;
    Some((sp, i + 1))
}

fn unpercent(s: &str) -> String {
    s.replace("%%", "%")
}

fn pad(s: &str, width: usize, left: bool) -> String {
    let n = s.chars().count();
    if n >= width {
        return s.to_string();
    }
    let fill = " ".repeat(width - n);
    if left {
        format!("{s}{fill}")
    } else {
        format!("{fill}{s}")
    }
}

fn pad_number(prefix: &str, digits: &str, width: usize, left: bool, zero: bool) -> String {
    let n = prefix.len() + digits.len();
    if n >= width {
        return format!("{prefix}{digits}");
    }
    let fill = width - n;
    if left {
        format!("{prefix}{digits}{}", " ".repeat(fill))
    } else if zero {
        format!("{prefix}{}{digits}", "0".repeat(fill))
    } else {
        format!("{}{prefix}{digits}", " ".repeat(fill))
    }
}

// ---------------------------------------------------------------------------
// Times

/// Local calendar fields, as the C library computes them (honouring TZ).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalTime {
    pub year: i64,
    pub mon: u32,
    pub mday: u32,
    pub hour: u32,
    pub min: u32,
    pub sec: u32,
}

pub fn local_time(secs: i64) -> LocalTime {
    let t: libc::time_t = secs;
    // SAFETY: localtime_r fills the plain-data tm we own; both pointers are
    // valid for the call.
    let tm = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            None
        } else {
            Some(tm)
        }
    };
    match tm {
        Some(tm) => LocalTime {
            year: tm.tm_year as i64 + 1900,
            mon: (tm.tm_mon + 1) as u32,
            mday: tm.tm_mday as u32,
            hour: tm.tm_hour as u32,
            min: tm.tm_min as u32,
            sec: tm.tm_sec as u32,
        },
        None => LocalTime {
            year: 1970,
            mon: 1,
            mday: 1,
            hour: 0,
            min: 0,
            sec: 0,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(args: &[&str]) -> Result<Options, CliError> {
        let mut argv = vec![OsString::from("tern_q")];
        argv.extend(args.iter().map(OsString::from));
        parse(argv)
    }

    #[test]
    fn job_ids_are_single_ranges_or_spans() {
        let j = |c, p| JobId {
            cluster: c,
            proc: p,
        };
        assert_eq!(job_ids_text(j(5, 0), j(5, 0)), "5.0");
        assert_eq!(job_ids_text(j(5, 0), j(5, 9)), "5.0-9");
        assert_eq!(job_ids_text(j(5, 2), j(7, 1)), "5.2 ... 7.1");
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

    fn line(owner: &str, name: &str, idle: i64, held: i64, ids: &str) -> BatchLine {
        BatchLine {
            owner: owner.into(),
            name: name.into(),
            qdate: 0,
            done: 0,
            run: 0,
            idle,
            held,
            total: idle + held,
            ids: ids.into(),
        }
    }

    #[test]
    fn the_empty_batch_view_shows_the_hold_column() {
        assert_eq!(
            render_batch(&[], None),
            ["OWNER BATCH_NAME      SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS"]
        );
    }

    #[test]
    fn short_owners_get_eight_columns_and_hold_hides_without_held_jobs() {
        let head = &render_batch(&[line("nemo", "ID: 1", 1, 0, "1.0")], None)[0];
        assert_eq!(
            head,
            "OWNER    BATCH_NAME    SUBMITTED   DONE   RUN    IDLE  TOTAL JOB_IDS"
        );
        let head = &render_batch(&[line("wenger", "DAG: 3696", 0, 1, "1.0")], None)[0];
        assert_eq!(
            head,
            "OWNER  BATCH_NAME    SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS"
        );
    }

    #[test]
    fn batch_columns_shrink_to_the_terminal() {
        // Everything fits in 80 columns: nothing changes.
        assert_eq!(shrink_batch_widths(80, 6, 10, 13), (6, 10));
        // A long batch name gives way, down to what condor_q keeps.
        assert_eq!(shrink_batch_widths(80, 6, 40, 13), (6, 18));
    }

    #[test]
    fn printf_conversions() {
        let p = |f: &str| Printf::parse(f);
        assert_eq!(p("%d.").apply_int(12), "12.");
        assert_eq!(p("%-3d|").apply_int(7), "7  |");
        assert_eq!(p("%05d").apply_int(-42), "-0042");
        assert_eq!(p("%+d").apply_int(3), "+3");
        assert_eq!(p("%x %%").apply_int(255), "ff %");
        assert_eq!(p("%#o").apply_int(8), "010");
        assert_eq!(p("%.3d").apply_int(5), "005");
        assert_eq!(p("%f").apply_float(1.5), "1.500000");
        assert_eq!(p("%.2f").apply_int(3), "3.00");
        assert_eq!(p("%d").apply_float(2.9), "2");
        assert_eq!(p("%g").apply_float(0.0001), "0.0001");
        assert_eq!(p("%e").apply_float(12345.0), "1.234500e+04");
        assert_eq!(p("%8.3s|").apply_str("abcdef"), "     abc|");
        assert_eq!(p("%-6v|").apply_str("ab"), "ab    |");
        assert_eq!(p("no conversion").literal(), "no conversion");
        assert_eq!(p("100%% %s").apply_str("x"), "100% x");
        assert_eq!(p("%lld").apply_int(1), "1");
    }

    #[test]
    fn hot_expressions_are_recognised() {
        let h = |s: &str| hot_only(&parse_expr(s).unwrap());
        assert!(h("JobStatus == 1 && Owner == \"x\""));
        assert!(h("MY.ProcId > 3 || time() > QDate"));
        assert!(h("true"));
        assert!(!h("Cmd == \"x\""));
        assert!(!h("TARGET.JobStatus == 1"));
        assert!(!h("eval(\"JobStatus\") == 1"));
        assert!(!h("[a = JobStatus].a == 1"));
        assert!(!h("MY"));
    }

    #[test]
    fn colon_options_are_rewritten() {
        let argv = rewrite_argv(
            [
                "tern_q",
                "-af:jl",
                "A",
                "-constraint",
                "-af:x",
                "-wide:90",
                "-format",
                "-af:y",
                "B",
            ]
            .iter()
            .map(OsString::from)
            .collect(),
        );
        let argv: Vec<String> = argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            argv,
            [
                "tern_q",
                "--autoformat",
                "\u{1}jl",
                "A",
                "-constraint",
                "-af:x",
                "--output-width=90",
                "-format",
                "-af:y",
                "B"
            ]
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
        assert_eq!(c.columns.len(), 3);
        assert!(c.headings);
        assert!(!c.hot());
        assert!(opts(&["-run", "-hold"]).is_err());
        assert!(opts(&["-constraint", "JobStatus =="]).is_err());
        assert!(opts(&["-af", "Owner Cmd"]).is_err());
    }
}
