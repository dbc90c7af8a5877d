//! `tern_status`: this machine's slots, as HTCondor's `condor_status`
//! shows a pool's.
//!
//! The slots come from the queue database's `slots` table (kept by the
//! negotiation pass); each row becomes the slot's ad with the machine
//! detected afresh ([`crate::machine`]). A database with no slots yet
//! (nothing has run) shows the configured layout, every slot Unclaimed, so
//! a fresh install shows what it will offer. Nothing is created.
//!
//! The default table, `-run`/`-claimed` and the totals follow
//! condor_status's print formats and totals (prettyPrint.cpp, totals.cpp)
//! as they come out when the output is not a terminal; `-long` and `-json`
//! ([`super::format`]), `-af` and `-format` ([`super::printmask`]) are
//! the same as in `tern_q` and `tern_history`.

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::rc::Rc;

use clap::{ArgMatches, Parser};

use super::env::ToolEnv;
use super::format;
use super::listing::{ListingArgs, View};
use super::{CliError, parse_args, run_tool};
use crate::classad::parser::parse_expr_old;
use crate::classad::{ClassAd, Expr, eval_in};
use crate::machine::{self, Machine};
use crate::negotiator::fetch;

/// Show this machine's slots.
///
/// By default every slot is one line (name, operating system, state,
/// activity, load, memory and how long it has been in its activity),
/// followed by totals per platform. -available, -claimed and -run choose
/// slots by state; -constraint and NAME arguments choose slots by their ad.
/// Options may be written with one dash or two and shortened to any unique
/// prefix.
#[derive(Parser, Debug)]
#[command(
    name = "tern_status",
    version,
    after_help = "Examples:\n  \
        tern_status\n  \
        tern_status -avail\n  \
        tern_status -af Name Cpus Memory State\n  \
        tern_status -constraint 'Cpus >= 4' -long\n  \
        tern_status -total\n  \
        tern_status -check"
)]
pub struct Args {
    /// Show only slots that can take a job now (Unclaimed, with cpus and
    /// memory left)
    #[arg(long, visible_alias = "avail")]
    pub available: bool,

    /// Show only claimed slots, with who holds them
    #[arg(long)]
    pub claimed: bool,

    /// Show only slots running jobs, with who runs them (as -claimed)
    #[arg(long)]
    pub run: bool,

    /// Show only slots for which EXPR is true (repeatable; all must hold)
    #[arg(long, value_name = "EXPR")]
    pub constraint: Vec<String>,

    /// Print only the totals
    #[arg(long)]
    pub total: bool,

    #[command(flatten)]
    pub listing: ListingArgs,

    /// Size the totals' platform column to its longest entry instead of
    /// 14 columns; lines are never cut to the terminal's width
    #[arg(long)]
    pub wide: bool,

    /// Show the scheduler ad instead of the slots: its job counts and what
    /// the SCHEDD_CRON hooks publish
    #[arg(long)]
    pub schedd: bool,

    /// Audit the installation instead: report every file whose owner or
    /// mode is wrong, one line each (exit 1), or "no problems found"
    #[arg(long, exclusive = true)]
    pub check: bool,

    /// Slots to show: a slot name (slot1, slot1_2), a full name
    /// (slot1@host) or the machine's name
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
}

pub fn main() -> ExitCode {
    run_tool("tern_status", run)
}

/// The command line, checked.
struct Options {
    view: View,
    /// -claimed / -run: the table of running slots.
    run: bool,
    /// -available / -claimed / -run: a slot must match one of these.
    modes: Vec<Expr>,
    /// -constraint: a slot must match all of these.
    constraints: Vec<Expr>,
    names: Vec<String>,
    total_only: bool,
    wide: bool,
    schedd: bool,
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let opts = match parse_args::<Args>(argv).and_then(|(a, m)| {
        if a.check {
            return Ok(None);
        }
        options(&a, &m).map(Some)
    }) {
        Ok(Some(o)) => o,
        Ok(None) => return check(),
        Err(e) => return Err(super::usage_exits_one("tern_status", e)),
    };
    let env = ToolEnv::open("tern_status")?;
    let cfg = &env.cfg;
    let now = crate::clock::now();
    let mut machine = Machine::detect(cfg)?;
    let q = env.queue(false)?;
    let ads: Vec<ClassAd> =
        if opts.schedd {
            let ad = crate::hooks::cron::schedd_ad(cfg, q.as_ref().map(|q| q.conn()), now)
                .map_err(|e| CliError::Failed {
                    msg: e.to_string(),
                    hint: None,
                })?;
            vec![ad]
                .into_iter()
                .filter(|ad| chosen(&opts, ad))
                .collect()
        } else {
            let (mut rows, fetching, fetched) = match &q {
                Some(q) => {
                    machine = machine.with_hooks(q.conn())?;
                    (
                        machine::load_slots(q.conn())?,
                        fetch::work::states(q.conn())?,
                        fetch::fetched_jobs(q.conn())?,
                    )
                }
                None => (Vec::new(), Vec::new(), Vec::new()),
            };
            if rows.is_empty() {
                rows = machine::configured_rows(&machine, now);
            }
            rows.iter()
                .map(|r| {
                    let mut ad = machine::slot_ad(&machine, r, now);
                    // A slot that fetches work shows its last fetch (and failure).
                    if let Some((_, st)) = fetching.iter().find(|(n, _)| *n == r.name) {
                        let delay = fetch::delay(cfg, &ad, None).ok();
                        fetch::publish(&mut ad, Some(st), delay);
                    }
                    // A claim running fetched work says so, with its keyword.
                    if let (Some(cluster), Some(proc)) = (r.cluster, r.proc)
                        && let Some((_, kw)) = fetched
                            .iter()
                            .find(|(id, _)| id.cluster == cluster && id.proc == proc)
                    {
                        ad.insert("FetchedWorkKeyword", crate::classad::Expr::string(kw));
                    }
                    ad
                })
                .filter(|ad| chosen(&opts, ad))
                .collect()
        };
    let text = render(&opts, &ads, now);
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// `-check`: the audit of [`super::audit`], for shared mode (the system's
/// files) or personal mode (the user's SPOOL).
fn check() -> Result<(), CliError> {
    let env = ToolEnv::open("tern_status")?;
    let problems = if crate::negotiator::activation::is_shared(&env.cfg)? {
        // SPOOL is closed to everyone outside group tern, so a user's
        // audit could not see inside it.
        if crate::sys::real_uid() != 0 {
            return Err(CliError::Failed {
                msg: "auditing a shared installation needs root".into(),
                hint: Some("sudo tern_status -check".into()),
            });
        }
        let dirs = env
            .cfg
            .list_value("LOCAL_CONFIG_DIR")?
            .into_iter()
            .map(std::path::PathBuf::from)
            .collect();
        let execute = env.cfg.get("EXECUTE")?.map(std::path::PathBuf::from);
        super::audit::shared(&super::audit::Layout::installed(&env.spool, dirs, execute))
    } else {
        super::audit::personal(&env.spool, crate::sys::real_uid())
    };
    let mut out = io::stdout().lock();
    if problems.is_empty() {
        writeln!(out, "no problems found")?;
        return Ok(());
    }
    for p in &problems {
        writeln!(out, "{p}")?;
    }
    out.flush()?;
    Err(CliError::Reported(1))
}

fn options(args: &Args, matches: &ArgMatches) -> Result<Options, CliError> {
    let mut constraints = Vec::new();
    for c in &args.constraint {
        let e = parse_expr_old(c).map_err(|e| CliError::constraint(c, e))?;
        constraints.push(e);
    }
    let mut modes = Vec::new();
    let built_in = |t: &str| parse_expr_old(t).expect("a built-in constraint parses");
    if args.available {
        modes.push(built_in("State == \"Unclaimed\" && Cpus > 0 && Memory > 0"));
    }
    if args.claimed || args.run {
        modes.push(built_in("State == \"Claimed\""));
    }
    let view = args.listing.view(matches)?;
    Ok(Options {
        view,
        run: args.claimed || args.run,
        modes,
        constraints,
        names: args.names.clone(),
        total_only: args.total,
        wide: args.wide,
        schedd: args.schedd,
    })
}

/// Whether a slot passes the options' tests.
fn chosen(opts: &Options, ad: &ClassAd) -> bool {
    let shared = Rc::new(ad.clone());
    if !opts.names.is_empty() {
        let name = shared.eval_str("Name").unwrap_or_default();
        let machine = shared.eval_str("Machine").unwrap_or_default();
        let slot = name.split('@').next().unwrap_or("");
        if !opts
            .names
            .iter()
            .any(|n| *n == name || *n == machine || *n == slot)
        {
            return false;
        }
    }
    let test = |e: &Expr| eval_in(&shared, e).is_true();
    (opts.modes.is_empty() || opts.modes.iter().any(test)) && opts.constraints.iter().all(test)
}

fn render(opts: &Options, ads: &[ClassAd], now: i64) -> String {
    match opts.view.render(ads) {
        Some(text) => text,
        None if ads.is_empty() => String::new(),
        None if opts.schedd && !opts.run => {
            let mut out = String::new();
            if !opts.total_only {
                out.push_str(&table(&schedd_columns(), ads, now));
            }
            out.push('\n');
            out.push_str(&schedd_totals(ads));
            out
        }
        None => {
            let run = opts.run;
            let mut out = String::new();
            if !opts.total_only {
                let columns = if run { run_columns() } else { normal_columns() };
                out.push_str(&table(&columns, ads, now));
            }
            out.push('\n');
            out.push_str(&totals(ads, run, opts.wide));
            out
        }
    }
}

// ---------------------------------------------------------------------------
// The tables

/// What a column shows.
#[derive(Clone, Copy)]
enum Cell {
    /// A string attribute, left-aligned.
    Text(&'static str),
    /// A number attribute as `%.3f`.
    Load(&'static str),
    /// An integer attribute as `%4d`.
    Int(&'static str),
    /// An integer attribute right-aligned in a width.
    Count(&'static str, usize),
    /// The time since EnteredCurrentActivity, `%T`.
    ActivityTime,
}

struct Column {
    heading: &'static str,
    cell: Cell,
    /// The least width; a column grows to its widest value.
    width: usize,
    right: bool,
    /// No blank before this column.
    no_prefix: bool,
}

const fn col(heading: &'static str, cell: Cell, width: usize, right: bool) -> Column {
    Column {
        heading,
        cell,
        width,
        right,
        no_prefix: false,
    }
}

/// condor_status's slot columns (ppSetStartdNormalCols) as they come out
/// when the output is not a terminal.
fn normal_columns() -> Vec<Column> {
    vec![
        col("Name", Cell::Text("Name"), 19, false),
        col("OpSys", Cell::Text("OpSys"), 10, false),
        col("Arch", Cell::Text("Arch"), 6, false),
        col("State", Cell::Text("State"), 9, false),
        col("Activity", Cell::Text("Activity"), 8, false),
        col("LoadAv", Cell::Load("CondorLoadAvg"), 6, true),
        col("Mem", Cell::Int("Memory"), 0, true),
        Column {
            no_prefix: true,
            ..col("  ActvtyTime", Cell::ActivityTime, 12, true)
        },
    ]
}

/// The -run / -claimed columns (ppSetRunCols).
fn run_columns() -> Vec<Column> {
    vec![
        col("Name", Cell::Text("Name"), 17, false),
        col("OpSys", Cell::Text("OpSys"), 11, false),
        col("Arch", Cell::Text("Arch"), 6, false),
        col("LoadAv", Cell::Load("CondorLoadAvg"), 6, true),
        col("RemoteUser", Cell::Text("RemoteUser"), 20, false),
        col("ClientMachine", Cell::Text("ClientMachine"), 16, false),
    ]
}

/// condor_status -schedd's columns (scheddNormal_PrintFormat).
fn schedd_columns() -> Vec<Column> {
    vec![
        col("Name", Cell::Text("Name"), 0, false),
        col("Machine", Cell::Text("Machine"), 0, false),
        col("RunningJobs", Cell::Count("TotalRunningJobs", 11), 11, true),
        col("  IdleJobs", Cell::Count("TotalIdleJobs", 10), 10, true),
        col("  HeldJobs", Cell::Count("TotalHeldJobs", 10), 10, true),
    ]
}

/// condor_status -schedd's totals (ScheddNormalTotal): every scheduler ad
/// has the same key, a blank one.
fn schedd_totals(ads: &[ClassAd]) -> String {
    let mut t = [0i64; 3];
    for ad in ads {
        let ad = Rc::new(ad.clone());
        for (i, a) in ["TotalRunningJobs", "TotalIdleJobs", "TotalHeldJobs"]
            .iter()
            .enumerate()
        {
            t[i] += ad.eval_int(a).unwrap_or(0);
        }
    }
    format!(
        "{:14}{:>18} {:>18} {:>18}\n\n{:14}\n{:>14}{:18} {:18} {:18}\n",
        "", "TotalRunningJobs", "TotalIdleJobs", "TotalHeldJobs", "", "Total", t[0], t[1], t[2]
    )
}

fn cell_text(cell: Cell, ad: &Rc<ClassAd>, now: i64) -> String {
    match cell {
        Cell::Text(a) => ad.eval_str(a).unwrap_or_default(),
        Cell::Load(a) => ad
            .eval_real(a)
            .map_or_else(|| "[???]".into(), |v| format!("{v:.3}")),
        Cell::Int(a) => ad
            .eval_int(a)
            .map_or_else(|| "[??]".into(), |v| format!("{v:4}")),
        Cell::Count(a, w) => ad
            .eval_int(a)
            .map_or_else(|| "[??]".into(), |v| format!("{v:w$}")),
        Cell::ActivityTime => {
            let at = ad.eval_int("MyCurrentTime").unwrap_or(now);
            match ad.eval_int("EnteredCurrentActivity") {
                Some(t) => format::run_time(at - t),
                None => "-".into(),
            }
        }
    }
}

/// The heading line, a blank line, then one line per slot. Columns are
/// separated by one blank and grow to fit their values; trailing blanks
/// are dropped.
fn table(columns: &[Column], ads: &[ClassAd], now: i64) -> String {
    let cells: Vec<Vec<String>> = ads
        .iter()
        .map(|ad| {
            let ad = Rc::new(ad.clone());
            columns
                .iter()
                .map(|c| cell_text(c.cell, &ad, now))
                .collect()
        })
        .collect();
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            cells.iter().map(|r| r[i].chars().count()).fold(
                c.width.max(if c.width == 0 { c.heading.len() } else { 0 }),
                usize::max,
            )
        })
        .collect();
    let line = |texts: &[&str], heading: bool| {
        let mut s = String::new();
        for (i, (c, t)) in columns.iter().zip(texts).enumerate() {
            if i > 0 && !c.no_prefix {
                s.push(' ');
            }
            let w = widths[i];
            if c.right && !heading {
                s.push_str(&format!("{t:>w$}"));
            } else {
                s.push_str(&format!("{t:<w$}"));
            }
        }
        let mut s = s.trim_end().to_string();
        s.push('\n');
        s
    };
    let headings: Vec<&str> = columns.iter().map(|c| c.heading).collect();
    let mut out = line(&headings, true);
    out.push('\n');
    for row in &cells {
        let texts: Vec<&str> = row.iter().map(String::as_str).collect();
        out.push_str(&line(&texts, false));
    }
    out
}

// ---------------------------------------------------------------------------
// Totals

/// The totals block (TrackTotals::displayTotals): a heading, a row per
/// Arch/OpSys, a blank line and the Total row.
fn totals(ads: &[ClassAd], run: bool, wide: bool) -> String {
    // Per key: state counts, or (slots, load sum) for -run.
    let mut keys: std::collections::BTreeMap<String, [i64; 9]> = Default::default();
    let mut loads: std::collections::BTreeMap<String, f64> = Default::default();
    let mut all = [0i64; 9];
    let mut all_load = 0.0;
    for ad in ads {
        let ad = Rc::new(ad.clone());
        let (Some(arch), Some(opsys)) = (ad.eval_str("Arch"), ad.eval_str("OpSys")) else {
            continue;
        };
        let key = format!("{arch}/{opsys}");
        let counts = keys.entry(key.clone()).or_default();
        if run {
            let load = ad.eval_real("LoadAvg").unwrap_or(0.0);
            counts[0] += 1;
            all[0] += 1;
            *loads.entry(key).or_default() += load;
            all_load += load;
            continue;
        }
        let state = ad.eval_str("State").unwrap_or_default();
        // Total Owner Claimed Unclaimed Matched Preempting Drain Backfill BkIdle
        let i = match state.as_str() {
            "Owner" => 1,
            "Claimed" => 2,
            "Unclaimed" => 3,
            "Matched" => 4,
            "Preempting" => 5,
            "Drained" => 6,
            "Backfill" => 7,
            _ => continue,
        };
        for c in [&mut *counts, &mut all] {
            c[0] += 1;
            c[i] += 1;
        }
    }
    let width = if wide {
        keys.keys().map(|k| k.chars().count()).fold(5, usize::max)
    } else {
        14
    };
    let key_cell = |k: &str| {
        let cut: String = k.chars().take(width).collect();
        format!("{cut:>width$}")
    };
    let info = |c: &[i64; 9], load: f64| {
        if run {
            let avg = if c[0] > 0 { load / c[0] as f64 } else { 0.0 };
            format!("{:9}  {:11}  {:11}   {avg:.3}\n", c[0], 0, 0)
        } else {
            format!(
                "{:6} {:5} {:7} {:9} {:7} {:10} {:6} {:8} {:6}\n",
                c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]
            )
        }
    };
    let mut out = " ".repeat(width);
    out.push_str(if run {
        " Machines         MIPS       KFLOPS   AvgLoadAvg\n\n"
    } else {
        " Total Owner Claimed Unclaimed Matched Preempting  Drain Backfill BkIdle\n\n"
    });
    for (k, c) in &keys {
        out.push_str(&key_cell(k));
        out.push_str(&info(c, loads.get(k).copied().unwrap_or(0.0)));
    }
    if !keys.is_empty() {
        out.push('\n');
    }
    out.push_str(&key_cell("Total"));
    out.push_str(&info(&all, all_load));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // The cells read attributes through the ClassAd typed readers: a
    // boolean is not a number (it used to print as 1).
    #[test]
    fn cells_print_a_bool_as_no_number() {
        let ad = Rc::new(crate::classad::parse_ad("[Cpus = true; LoadAvg = false]").unwrap());
        assert_eq!(cell_text(Cell::Int("Cpus"), &ad, 0), "[??]");
        assert_eq!(cell_text(Cell::Load("LoadAvg"), &ad, 0), "[???]");
        let ad = Rc::new(crate::classad::parse_ad("[Cpus = 2.5; LoadAvg = 1]").unwrap());
        assert_eq!(cell_text(Cell::Int("Cpus"), &ad, 0), "   2");
        assert_eq!(cell_text(Cell::Load("LoadAvg"), &ad, 0), "1.000");
    }
}
