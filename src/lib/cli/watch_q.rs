//! `tern_watch_q`: follows jobs and draws their progress, as HTCondor's
//! `condor_watch_q` (24.0) does.
//!
//! The options, their HTCondor spellings and condor_q-style hints live
//! here, with the loop: find the jobs (one query of the queue, and the
//! `-files` logs), then poll the queue's transaction log and the logs four
//! times a second, draw a frame when something changed (and every two
//! seconds, as upstream redraws, so "Updated at" stays current), and test
//! the `-exit` conditions after each frame. What a frame looks like is
//! [`crate::watch::render`]; where the states come from is
//! [`crate::watch::follow`].

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{ArgMatches, CommandFactory, Parser};

use super::env::ToolEnv;
use super::{CliError, parse_args_with, run_tool};
use crate::queue::Queue;
use crate::watch::follow::{Filter, Found, LogFollower, Query, QueueFollower, discover};
use crate::watch::render::{self, Look, Size, SummaryType};
use crate::watch::{ExitCondition, GroupBy, Tracker, rows};

/// How often the queue's log and the event logs are read.
const POLL: Duration = Duration::from_millis(250);
/// How often a frame is drawn when nothing changed (condor_watch_q 24.0
/// draws one every 2 s).
const REDRAW: Duration = Duration::from_secs(2);

/// Track the status of jobs over time, with progress bars.
///
/// If no users, cluster ids, event logs or batch names are given, your own
/// jobs in the queue are tracked. The table has one row per batch (or log,
/// or cluster); states come from the queue and its history, and with -files
/// from event logs. By default it never exits on its own; -exit tells it
/// when to, for example `tern_watch_q -exit all,done,0 -exit any,held,1`.
/// Options take one dash or two and may be shortened to a unique prefix.
#[derive(Parser, Debug)]
#[command(
    name = "tern_watch_q",
    version,
    after_help = "Examples:\n  tern_watch_q\n  tern_watch_q -clusters 12 13 -exit all,done\n  tern_watch_q -files jobs.log -groupby log -no-row-progress"
)]
pub struct Args {
    /// Print a warning that debug mode is on (tern has no other debug
    /// output here)
    #[arg(long)]
    pub debug: bool,

    /// Track the jobs of these users
    #[arg(long, num_args = 1.., value_name = "USER")]
    pub users: Option<Vec<String>>,

    /// Track these clusters
    #[arg(long, num_args = 1.., value_name = "CLUSTER_ID")]
    pub clusters: Option<Vec<String>>,

    /// Track only clusters with ids of at least CLUSTER_ID
    #[arg(long = "larger-than", value_name = "CLUSTER_ID")]
    pub larger_than: Option<String>,

    /// Track the jobs in these event logs
    #[arg(long, num_args = 1.., value_name = "FILE")]
    pub files: Option<Vec<PathBuf>>,

    /// Track the jobs with these batch names
    #[arg(long, num_args = 1.., value_name = "BATCH_NAME")]
    pub batches: Option<Vec<String>>,

    /// Accepted for compatibility: tern has one queue on this machine
    #[arg(long, value_name = "COLLECTOR")]
    pub collector: Option<String>,

    /// Accepted for compatibility: tern has one queue on this machine
    #[arg(long, value_name = "SCHEDD")]
    pub schedd: Option<String>,

    /// Exit with EXIT_STATUS (default 0) when the condition holds: GROUPER
    /// is all, any or none; JOB_STATUS is active, done, idle or held
    /// (repeatable; the first that holds wins)
    #[arg(long, value_name = "GROUPER,JOB_STATUS[,EXIT_STATUS]")]
    pub exit: Vec<String>,

    /// What one row of the table is
    #[arg(long, value_enum, default_value = "batch")]
    pub groupby: GroupBy,

    /// Show the table (the default)
    #[arg(long, overrides_with = "no_table")]
    pub table: bool,
    /// Do not show the table
    #[arg(long = "no-table", overrides_with = "table")]
    pub no_table: bool,

    /// Show the total progress bar (the default)
    #[arg(long, overrides_with = "no_progress")]
    pub progress: bool,
    /// Do not show the total progress bar
    #[arg(long = "no-progress", overrides_with = "progress")]
    pub no_progress: bool,

    /// Show a progress bar on each row (the default)
    #[arg(long = "row-progress", overrides_with = "no_row_progress")]
    pub row_progress: bool,
    /// Do not show a progress bar on each row
    #[arg(long = "no-row-progress", overrides_with = "row_progress")]
    pub no_row_progress: bool,

    /// Show the summary line (the default)
    #[arg(long, overrides_with = "no_summary")]
    pub summary: bool,
    /// Do not show the summary line
    #[arg(long = "no-summary", overrides_with = "summary")]
    pub no_summary: bool,

    /// What the summary line shows
    #[arg(long = "summary-type", value_enum, default_value = "totals")]
    pub summary_type: SummaryType,

    /// Show the "Updated at" line (the default)
    #[arg(long = "updated-at", overrides_with = "no_updated_at")]
    pub updated_at: bool,
    /// Do not show the "Updated at" line
    #[arg(long = "no-updated-at", overrides_with = "updated_at")]
    pub no_updated_at: bool,

    /// With -groupby log, shorten each directory of a log's path to a
    /// somewhat-unique prefix
    #[arg(long, overrides_with = "no_abbreviate")]
    pub abbreviate: bool,
    /// Show logs' paths whole (the default)
    #[arg(long = "no-abbreviate", overrides_with = "abbreviate")]
    pub no_abbreviate: bool,

    /// Colour the rows and bars (the default on a terminal; never when
    /// the output is not one)
    #[arg(long, overrides_with = "no_color")]
    pub color: bool,
    /// Do not colour the output
    #[arg(long = "no-color", overrides_with = "color")]
    pub no_color: bool,

    /// Redraw each frame over the last (the default on a terminal)
    #[arg(long, overrides_with = "no_refresh")]
    pub refresh: bool,
    /// Print each frame after the last
    #[arg(long = "no-refresh", overrides_with = "refresh")]
    pub no_refresh: bool,

    /// Arguments that look like options but are none, kept in order for
    /// the condor_q-style hints.
    #[arg(long, hide = true, allow_hyphen_values = true)]
    pub stray: Vec<String>,

    /// Bare arguments, which condor_watch_q does not take: each gets a
    /// hint.
    #[arg(hide = true)]
    pub words: Vec<String>,
}

/// A toggle's value: the twin given last wins; neither leaves `default`.
fn toggle(on: bool, off: bool, default: bool) -> bool {
    if off {
        false
    } else if on {
        true
    } else {
        default
    }
}

/// Everything the loop needs, checked before anything is read.
struct Plan {
    query: Query,
    files: Vec<PathBuf>,
    filter_clusters: Option<BTreeSet<i64>>,
    since: Option<i64>,
    exits: Vec<ExitCondition>,
    by: GroupBy,
    look: Look,
    abbreviate: bool,
}

pub fn main() -> ExitCode {
    run_tool("tern_watch_q", run)
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (args, matches) = parse_args_with::<Args>(argv, Some("stray"))?;
    hints(&matches)?;
    let plan = plan(args)?;
    watch(plan)
}

/// The arguments condor_watch_q does not take, in the order given, with
/// its hint for the first one that looks like a condor_q argument (usage,
/// the hint, exit 1); any other is an unrecognized argument (exit 2).
fn hints(matches: &ArgMatches) -> Result<(), CliError> {
    let mut unknown: Vec<(usize, String)> = Vec::new();
    for id in ["stray", "words"] {
        if let (Some(idx), Some(vals)) = (matches.indices_of(id), matches.get_many::<String>(id)) {
            unknown.extend(idx.zip(vals.cloned()));
        }
    }
    if unknown.is_empty() {
        return Ok(());
    }
    unknown.sort();
    let args: Vec<String> = unknown.into_iter().map(|(_, a)| a).collect();
    let mut it = args.iter().peekable();
    while let Some(arg) = it.next() {
        // The arguments that follow, up to the next option.
        let mut following = |keep: &dyn Fn(&str) -> bool| -> Vec<String> {
            let mut out = Vec::new();
            while let Some(next) = it.peek() {
                if next.starts_with('-') {
                    break;
                }
                let next = it.next().unwrap();
                if keep(next) {
                    out.push(next.clone());
                }
            }
            out
        };
        let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
        let hint = if digits(arg) {
            let mut ids = vec![arg.clone()];
            ids.extend(following(&|s| digits(s)));
            format!(
                "to track specific cluster IDs, try -clusters {}",
                ids.join(" ")
            )
        } else if arg.contains("-totals") {
            "to only print totals, try -no-table".to_string()
        } else if arg.contains("-userlog") {
            let files = following(&|_| true);
            format!(
                "to track jobs from specific event logs, try -files {}",
                files.join(" ")
            )
        } else if arg.contains("-nobatch") {
            "to group by something other than batch name, try -groupby {{batch,log,cluster}}"
                .to_string()
        } else if !arg.starts_with('-') {
            let mut users = vec![arg.clone()];
            users.extend(following(&|s| !digits(s)));
            format!(
                "to track jobs from specific users, try -users {}",
                users.join(" ")
            )
        } else {
            continue;
        };
        let usage = Args::command().render_usage().to_string();
        println!("{usage}");
        let _ = io::stdout().flush();
        note!("tern_watch_q: error: argument {arg}: {hint}");
        return Err(CliError::Reported(1));
    }
    Err(CliError::Usage {
        msg: format!("unrecognized arguments: {}", args.join(" ")),
        hint: Some("'tern_watch_q -help' lists the options".into()),
    })
}

fn plan(args: Args) -> Result<Plan, CliError> {
    let mut exits = Vec::new();
    for e in &args.exit {
        exits.push(ExitCondition::parse(e).map_err(|msg| CliError::Usage { msg, hint: None })?);
    }
    let since = match &args.larger_than {
        None => None,
        Some(s) => Some(s.trim().parse::<i64>().map_err(|_| CliError::Usage {
            msg: format!("argument -larger-than: invalid int value: '{s}'"),
            hint: None,
        })?),
    };
    if args.clusters.is_some() && since.is_some() {
        return Err(CliError::Failed {
            msg: "use of both -clusters and -larger-than is prohibited".into(),
            hint: Some("-larger-than N already means every cluster from N on".into()),
        });
    }
    if args.debug {
        note!("WARNING: Debug mode enabled...");
    }
    let clusters: Option<Vec<i64>> = match &args.clusters {
        None => None,
        Some(list) => Some(
            list.iter()
                .map(|c| {
                    c.trim().parse::<i64>().map_err(|_| CliError::Failed {
                        msg: format!("-clusters: '{c}' is not a cluster id"),
                        hint: Some("give cluster ids as numbers: -clusters 12 13".into()),
                    })
                })
                .collect::<Result<_, _>>()?,
        ),
    };
    let mut query = Query {
        users: args.users.clone().unwrap_or_default(),
        clusters: clusters.clone().unwrap_or_default(),
        batches: args.batches.clone().unwrap_or_default(),
    };
    if args.users.is_none()
        && args.clusters.is_none()
        && args.files.is_none()
        && args.batches.is_none()
    {
        query.users.push(crate::sys::real_user_name());
    }
    let cwd = std::env::current_dir().map_err(|e| CliError::Failed {
        msg: format!(
            "cannot find the working directory: {}",
            crate::sys::io_error_text(&e)
        ),
        hint: None,
    })?;
    let files = args
        .files
        .unwrap_or_default()
        .into_iter()
        .map(|f| cwd.join(f))
        .collect();
    let tty = crate::sys::term::stdout_is_tty();
    let look = Look {
        table: toggle(args.table, args.no_table, true),
        progress: toggle(args.progress, args.no_progress, true),
        row_progress: toggle(args.row_progress, args.no_row_progress, true),
        summary: toggle(args.summary, args.no_summary, true).then_some(args.summary_type),
        updated_at: toggle(args.updated_at, args.no_updated_at, true),
        // Colour needs a terminal even when asked for, as upstream's.
        color: tty && toggle(args.color, args.no_color, true),
        refresh: toggle(args.refresh, args.no_refresh, tty),
        footer: exits.is_empty(),
    };
    Ok(Plan {
        query,
        files,
        filter_clusters: clusters.map(|c| c.into_iter().collect()),
        since,
        exits,
        by: args.groupby,
        look,
        abbreviate: toggle(args.abbreviate, args.no_abbreviate, false),
    })
}

/// The terminal's size: COLUMNS and LINES, else the terminal's own, else
/// 80 by 24 (Python's `shutil.get_terminal_size`).
fn terminal_size() -> Size {
    // The caller's: a set-group-id tool's own environment is not.
    let env = |name: &str| {
        crate::sys::privilege::caller_var(name)
            .and_then(|v| v.trim().parse::<i64>().ok())
            .filter(|&n| n > 0)
            .map(|n| n as usize)
    };
    let (mut columns, mut rows) = (env("COLUMNS"), env("LINES"));
    if columns.is_none() || rows.is_none() {
        let (c, r) = crate::sys::term::stdout_size().unwrap_or((80, 24));
        columns = columns.or(Some(c));
        rows = rows.or(Some(r));
    }
    Size {
        columns: columns.unwrap_or(80),
        rows: rows.unwrap_or(24),
    }
}

/// The time of a cycle as the frame shows it, local.
fn timestamp() -> String {
    let t = crate::sys::time::local_time(crate::clock::now());
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        t.year, t.mon, t.mday, t.hour, t.min, t.sec
    )
}

/// What is followed: the queue (through its transaction log) and the
/// event logs, into one tracker.
struct Following {
    tracker: Tracker,
    queue: Option<QueueFollower>,
    logs: LogFollower,
}

/// Finds the jobs and logs to follow, as condor_watch_q's discovery does;
/// `None` (after its warning) when there is nothing.
fn follow(plan: &Plan, queue: Option<&Queue>) -> Result<Option<Following>, CliError> {
    let mut found: BTreeMap<i64, Found> = BTreeMap::new();
    if !plan.query.is_empty()
        && let Some(q) = queue
    {
        match discover(q, &plan.query) {
            Ok(f) => found = f,
            Err(e) => {
                note!("WARNING: Was not able to query to discover job event logs due to: {e}")
            }
        }
    }
    if found.is_empty() && plan.files.is_empty() {
        note!("WARNING: No jobs found, exiting...");
        return Ok(None);
    }
    // With -batches, the clusters found are the only ones watched (with
    // the -clusters ones), as upstream filters its events.
    let mut ids = plan.filter_clusters.clone();
    if !plan.query.batches.is_empty() {
        let batch_ids = found.keys().copied();
        match &mut ids {
            Some(ids) => ids.extend(batch_ids),
            None if !found.is_empty() => ids = Some(batch_ids.collect()),
            None => {}
        }
    }
    let filter = Filter {
        ids,
        since: plan.since,
    };
    let mut tracker = Tracker::default();
    let queue = match queue {
        Some(q) if !found.is_empty() => Some(QueueFollower::start(
            q,
            &found,
            filter.clone(),
            &mut tracker,
        )?),
        _ => None,
    };
    let batches = found.iter().map(|(&c, f)| (c, f.batch.clone())).collect();
    let logs = LogFollower::open(&plan.files, filter, batches, &mut |w| note!("WARNING: {w}"));
    Ok(Some(Following {
        tracker,
        queue,
        logs,
    }))
}

/// Prints one frame (erasing the previous one on a terminal), with the
/// messages about events that did not parse; the frame's text.
fn draw(
    plan: &Plan,
    tracker: &Tracker,
    style: &render::PathStyle,
    previous: Option<&str>,
    messages: &[String],
    now: &str,
) -> Result<String, CliError> {
    let (rows, totals) = rows(tracker, plan.by, &|p| style.key(p));
    let text = render::frame(&rows, &totals, plan.by, &plan.look, terminal_size(), now);
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut bytes = String::new();
    if plan.look.refresh {
        bytes.push_str(render::PROCESSING);
        bytes.push_str(&render::processing_done());
        if let Some(prev) = previous {
            bytes.push_str(&render::erase(prev));
        }
    }
    out.write_all(bytes.as_bytes())?;
    out.flush()?;
    for m in messages {
        note!("{now} | {m}");
    }
    out.write_all(text.as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(text)
}

/// The first -exit condition that holds, announced; `Some` result ends
/// the watch with it.
fn exit_now(
    plan: &Plan,
    tracker: &Tracker,
    now: &str,
) -> Result<Option<Result<(), CliError>>, CliError> {
    for cond in &plan.exits {
        if cond.holds(tracker.states()) {
            let mut out = io::stdout().lock();
            writeln!(
                out,
                "Exiting with code {} because of condition \"{}\" at {now}",
                cond.code, cond.text
            )?;
            out.flush()?;
            return Ok(Some(match cond.exit_status() {
                0 => Ok(()),
                c => Err(CliError::Reported(c)),
            }));
        }
    }
    Ok(None)
}

fn watch(plan: Plan) -> Result<(), CliError> {
    let env = ToolEnv::open("tern_watch_q")?;
    let queue = env.queue(false)?;
    let Some(mut f) = follow(&plan, queue.as_ref())? else {
        return Ok(());
    };
    let style = render::PathStyle {
        // Only shortens paths on the screen: the caller's HOME.
        home: crate::sys::privilege::caller_var("HOME").map(PathBuf::from),
        cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
        abbreviate: plan.abbreviate,
    };
    crate::sys::term::catch_interrupt();
    let mut previous: Option<String> = None;
    let mut last_frame: Option<Instant> = None;
    loop {
        let mut changed = false;
        if let (Some(qf), Some(q)) = (&mut f.queue, &queue) {
            changed |= qf.poll(q, &mut f.tracker)?;
        }
        let (log_changed, messages) = f.logs.poll(&mut f.tracker);
        changed |= log_changed;
        let due = last_frame.is_none_or(|t| t.elapsed() >= REDRAW);
        if changed || due || !messages.is_empty() {
            let now = timestamp();
            let text = draw(
                &plan,
                &f.tracker,
                &style,
                previous.as_deref(),
                &messages,
                &now,
            )?;
            previous = Some(text);
            last_frame = Some(Instant::now());
            if let Some(end) = exit_now(&plan, &f.tracker, &now)? {
                return end;
            }
        }
        let until = Instant::now() + POLL;
        while Instant::now() < until {
            if crate::sys::term::interrupted() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}
