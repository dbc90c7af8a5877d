//! `tern_userprio`: show and change user priorities, as HTCondor's
//! `condor_userprio` (`src/condor_tools/user_prio.cpp`).
//!
//! The records are the accountant's (see [`crate::negotiator::accountant`]),
//! read straight from the queue database. The table is laid out exactly as
//! condor_userprio lays it out without accounting groups: a `Last Priority
//! Update` line, two centred header rows, dashes, one row per submitter
//! sorted by effective priority (or, with only usage columns, by usage),
//! dashes, and a footer with the number of users and the totals. Each data
//! column is one space plus the value right-aligned (and cut) to its width.
//!
//! The edits (`-setprio`, `-setfactor`, `-resetusage`, `-resetall`,
//! `-delete`) are for super users: those named in QUEUE_SUPER_USERS and,
//! in personal mode, the owner of SPOOL.

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

use clap::Parser;

use crate::actions::userprio::{self, Edit, EditError};
use crate::classad::parser::parse_expr_old;
use crate::classad::{ClassAd, Expr, Value, eval_in};
use crate::negotiator::accountant::{self, Knobs, Submitter};
use crate::queue::{Authority, Queue};

use super::env::ToolEnv;
use super::listing::{ListingArgs, View};
use super::{CliError, parse_args, run_tool};
use crate::sys::time::local_time;

/// Show or change user priorities.
///
/// Without an edit option, prints each submitter's effective priority
/// (real priority × priority factor; lower is better), priority factor,
/// weighted slots in use, total usage and time since last usage, best
/// first. By default only submitters that used the machine in the last day
/// are shown; -allusers, or naming submitters, shows every one. The edit
/// options are for super users only (QUEUE_SUPER_USERS, or the owner of
/// SPOOL).
#[derive(Parser, Debug)]
#[command(
    name = "tern_userprio",
    version,
    after_help = "Examples:\n  tern_userprio\n  tern_userprio -all -allusers\n  tern_userprio -setfactor alice@example.org 2000"
)]
pub struct Args {
    /// Show every column: also the real priority, usage start and last usage times
    #[arg(long)]
    pub all: bool,

    /// Show the usage columns (in use, total usage, usage start and last usage times)
    #[arg(long)]
    pub usage: bool,

    /// Show the priority columns (effective and real priority, factor)
    #[arg(long)]
    pub priority: bool,

    /// Show every submitter, not only those that used the machine in the last day
    #[arg(long)]
    pub allusers: bool,

    /// Show the submitters that used the machine since this date
    #[arg(long, num_args = 3, value_names = ["MONTH", "DAY", "YEAR"])]
    pub activefrom: Option<Vec<String>>,

    /// Show only the submitters whose record (see -long) makes EXPR true
    /// (repeatable; all must hold)
    #[arg(long, value_name = "EXPR")]
    pub constraint: Vec<String>,

    #[command(flatten)]
    pub listing: ListingArgs,

    /// Set the real priority of USER (user@domain) to VALUE
    #[arg(long, num_args = 2, value_names = ["USER", "VALUE"])]
    pub setprio: Option<Vec<String>>,

    /// Set the priority factor of USER (user@domain) to VALUE (at least 1)
    #[arg(long, num_args = 2, value_names = ["USER", "VALUE"])]
    pub setfactor: Option<Vec<String>>,

    /// Reset the accumulated usage of USER (user@domain); its priority is unchanged
    #[arg(long, value_name = "USER")]
    pub resetusage: Option<String>,

    /// Reset the accumulated usage of every submitter
    #[arg(long)]
    pub resetall: bool,

    /// Remove the record of USER (user@domain); it starts afresh when it next submits
    #[arg(long, value_name = "USER")]
    pub delete: Option<String>,

    /// Show only these submitters: user@domain, or a user name for any domain
    #[arg(value_name = "SUBMITTER")]
    pub users: Vec<String>,
}

pub fn main() -> ExitCode {
    run_tool("tern_userprio", run)
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (args, matches) = parse_args::<Args>(argv)?;
    let view = args.listing.view(&matches)?;
    let edit = edit_of(&args)?;
    let env = ToolEnv::open("tern_userprio")?;
    let now = crate::clock::now();
    match edit {
        Some(e) => apply(&env, &e, now),
        None => show(&args, &view, &env.spool, now),
    }
}

/// The edit the arguments ask for, checked as condor_userprio checks it
/// before it contacts the negotiator.
fn edit_of(args: &Args) -> Result<Option<Edit>, CliError> {
    let mut edits = Vec::new();
    if let Some(v) = &args.setprio {
        full_name(&v[0], "to update the priority of")?;
        edits.push(Edit::SetPrio(v[0].clone(), number(&v[1])?));
    }
    if let Some(v) = &args.setfactor {
        full_name(&v[0], "to update the priority of")?;
        let f = number(&v[1])?;
        if f < 1.0 {
            note!("Priority factors must be greater than or equal to 1.");
            return Err(CliError::Reported(1));
        }
        edits.push(Edit::SetFactor(v[0].clone(), f));
    }
    if let Some(u) = &args.resetusage {
        // `-resetusage -all` is the spelling of -resetall.
        if u == "-all" {
            edits.push(Edit::ResetAll);
        } else {
            full_name(u, "to update the priority of")?;
            edits.push(Edit::ResetUsage(u.clone()));
        }
    }
    if args.resetall {
        edits.push(Edit::ResetAll);
    }
    if let Some(u) = &args.delete {
        if !u.contains('@') {
            note!(
                "tern_userprio: You must specify the full name of the record you wish\n\
                 \tto delete (user@uid.domain or user@full.host.name)"
            );
            return Err(CliError::Reported(1));
        }
        edits.push(Edit::Delete(u.clone()));
    }
    if edits.len() > 1 {
        return Err(CliError::Usage {
            msg: "give one of -setprio, -setfactor, -resetusage, -resetall and -delete".into(),
            hint: None,
        });
    }
    Ok(edits.pop())
}

fn full_name(name: &str, what: &str) -> Result<(), CliError> {
    if name.contains('@') {
        return Ok(());
    }
    note!(
        "tern_userprio: You must specify the full name of the submittor you wish\n\
         \t{what} (user@uid.domain or user@full.host.name)"
    );
    Err(CliError::Reported(1))
}

fn number(text: &str) -> Result<f64, CliError> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(CliError::Usage {
            msg: format!("'{text}' is not a number"),
            hint: None,
        }),
    }
}

fn apply(env: &ToolEnv, edit: &Edit, now: i64) -> Result<(), CliError> {
    let (cfg, spool) = (&env.cfg, env.spool.as_path());
    let authority = Authority::from_config(cfg, crate::sys::real_user_name())?.at_spool(spool);
    let denied = || CliError::Failed {
        msg: format!(
            "permission denied: {} may not change user priorities",
            authority.user()
        ),
        hint: Some(if authority.is_shared() {
            "only super users may: those in QUEUE_SUPER_USERS (names, or %group members)"
                .to_string()
        } else {
            format!(
                "only super users may: those in QUEUE_SUPER_USERS and the owner of SPOOL ({})",
                spool.display()
            )
        }),
    };
    // Asked before the queue is opened, so a refused user creates no
    // queue; userprio::edit asks again and is what guarantees the rule.
    if !authority.may_edit_priorities() {
        return Err(denied());
    }
    let knobs = Knobs::from_config(cfg)?;
    let mut q = env.queue_created()?;
    userprio::edit(&mut q, &authority, edit, &knobs, now).map_err(|e| match e {
        EditError::NotPermitted { .. } => denied(),
        EditError::Queue(e) => e.into(),
    })?;
    let mut out = io::stdout().lock();
    match edit {
        Edit::SetPrio(u, v) => writeln!(out, "The priority of {u} was set to {v:.6}")?,
        Edit::SetFactor(u, v) => writeln!(out, "The priority factor of {u} was set to {v:.6}")?,
        Edit::ResetUsage(u) => writeln!(out, "The accumulated usage of {u} was reset")?,
        Edit::ResetAll => writeln!(out, "The accumulated usage was reset for all users")?,
        Edit::Delete(u) => writeln!(out, "The accountant record named {u} was deleted")?,
    }
    Ok(())
}

// --- The table --------------------------------------------------------------

/// The columns condor_userprio can show without accounting groups, in its
/// order: (width, first header line, second header line).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Col {
    Priority,
    RealPrio,
    Factor,
    ResUsed,
    WtResUsed,
    UseTime1,
    UseTime2,
    UseDeltaT,
    Floor,
    Ceiling,
}

impl Col {
    const ALL: [Col; 10] = [
        Col::Priority,
        Col::RealPrio,
        Col::Factor,
        Col::ResUsed,
        Col::WtResUsed,
        Col::UseTime1,
        Col::UseTime2,
        Col::UseDeltaT,
        Col::Floor,
        Col::Ceiling,
    ];

    fn head(self) -> (usize, &'static str, &'static str) {
        match self {
            Col::Priority => (12, "Effective", "Priority"),
            Col::RealPrio => (8, "Real", "Priority"),
            Col::Factor => (9, "Priority", "Factor"),
            Col::ResUsed => (6, "Wghted", "In Use"),
            Col::WtResUsed => (12, "Total Usage", "(wghted-hrs)"),
            Col::UseTime1 => (16, "Usage", "Start Time"),
            Col::UseTime2 => (16, "Last", "Usage Time"),
            Col::UseDeltaT => (10, "Time Since", "Last Usage"),
            Col::Floor => (9, "Submitter", "Floor"),
            Col::Ceiling => (9, "Submitter", "Ceiling"),
        }
    }
}

/// The columns the display options select (condor_userprio's DetailFlag
/// less the group columns, which are dropped without groups).
fn columns(args: &Args) -> Vec<Col> {
    use Col::*;
    let mut want: Vec<Col> = Vec::new();
    if args.all {
        want.extend([
            Priority, RealPrio, Factor, ResUsed, WtResUsed, UseTime1, UseTime2, UseDeltaT, Floor,
            Ceiling,
        ]);
    }
    if args.usage {
        want.extend([ResUsed, WtResUsed, UseTime1, UseTime2]);
    }
    if args.priority {
        want.extend([Priority, RealPrio, Factor]);
    }
    if want.is_empty() {
        want.extend([
            Priority, Factor, ResUsed, WtResUsed, UseDeltaT, Floor, Ceiling,
        ]);
    }
    Col::ALL
        .iter()
        .copied()
        .filter(|c| want.contains(c))
        .collect()
}

/// Whether `name` is one of the submitters asked for (all when none is):
/// a full name matches itself, a bare user name every domain.
fn named(users: &[String], name: &str) -> bool {
    users.is_empty()
        || users.iter().any(|u| {
            if u.contains('@') {
                u == name
            } else {
                name.split('@').next() == Some(u.as_str())
            }
        })
}

fn show(args: &Args, view: &View, spool: &Path, now: i64) -> Result<(), CliError> {
    let mut constraints = Vec::new();
    for c in &args.constraint {
        constraints.push(parse_expr_old(c).map_err(|e| CliError::constraint(c, e))?);
    }
    let (mut recs, last_update) = match Queue::open(spool, false)? {
        None => (Vec::new(), 0),
        Some(q) => (
            accountant::records(q.conn())?,
            accountant::last_update(q.conn())?.unwrap_or(0),
        ),
    };
    recs.retain(|r| named(&args.users, &r.name));
    if !constraints.is_empty() {
        recs.retain(|r| {
            let ad = std::rc::Rc::new(ad_of(r, last_update));
            constraints.iter().all(|e| eval_in(&ad, e).is_true())
        });
    }
    let mut out = io::stdout().lock();
    // The records as ads: every submitter the names and constraints
    // choose, whatever its last usage (condor_userprio -long prints the
    // accountant's ads before it filters by activity).
    let ads: Vec<ClassAd> = recs.iter().map(|r| ad_of(r, last_update)).collect();
    if let Some(text) = view.render(&ads) {
        out.write_all(text.as_bytes())?;
        return Ok(());
    }
    let min_last_usage = if args.allusers || !args.users.is_empty() {
        -1
    } else if let Some(v) = &args.activefrom {
        let n = |i: usize| -> Result<i32, CliError> {
            v[i].trim().parse::<i32>().map_err(|_| CliError::Usage {
                msg: format!("-activefrom: '{}' is not a number", v[i]),
                hint: Some("give the date as MONTH DAY YEAR, e.g. -activefrom 11 14 2023".into()),
            })
        };
        local_midnight(n(0)?, n(1)?, n(2)?)
    } else {
        now - 86400
    };
    let text = table(&recs, &columns(args), last_update, min_last_usage);
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// A record as the accounting ad HTCondor's negotiator publishes.
fn ad_of(r: &Submitter, last_update: i64) -> ClassAd {
    let mut ad = ClassAd::new();
    let real = |v: f64| Expr::Lit(Value::Real(v));
    ad.insert("MyType", Expr::string("Accounting"));
    ad.insert("Name", Expr::string(&r.name));
    ad.insert("AccountingGroup", Expr::string("<none>"));
    ad.insert("IsAccountingGroup", Expr::Lit(Value::Bool(false)));
    ad.insert("Priority", real(r.effective));
    ad.insert("PriorityFactor", real(r.factor));
    ad.insert(
        "RealPriority",
        real(r.priority.max(accountant::MIN_PRIORITY)),
    );
    ad.insert("ResourcesUsed", Expr::int(r.resources_used.round() as i64));
    ad.insert("WeightedResourcesUsed", real(r.weighted_resources_used));
    ad.insert("AccumulatedUsage", real(r.accumulated_usage));
    ad.insert(
        "WeightedAccumulatedUsage",
        real(r.weighted_accumulated_usage),
    );
    ad.insert("BeginUsageTime", Expr::int(r.begin_usage_time));
    ad.insert("LastUsageTime", Expr::int(r.last_usage_time));
    ad.insert("Floor", real(r.floor));
    ad.insert("Ceiling", real(r.ceiling));
    ad.insert("LastUpdate", Expr::int(last_update));
    ad
}

/// condor_userprio's table (its PrintInfo), for the records `recs`, the
/// accountant's last update `tm_last`, showing records whose last usage is
/// at least `min_last_usage` (-1: all). No records at all print nothing.
fn table(recs: &[Submitter], cols: &[Col], tm_last: i64, min_last_usage: i64) -> String {
    if recs.is_empty() {
        return String::new();
    }
    let visible = visible_rows(recs, cols, min_last_usage);
    let max_name = visible
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(10, 99)
        .max(format!("Number of users: {}", recs.len()).len());

    let mut s = String::new();
    s.push_str(&format!("Last Priority Update: {}\n", format_date(tm_last)));
    push_heads(&mut s, cols, max_name);
    let (mut total_in_use, mut total_usage) = (0.0, 0.0);
    for r in &visible {
        let cells = cols.iter().map(|c| cell(c, r, tm_last)).collect();
        push_line(&mut s, fit_left(&r.name, max_name), cells);
        total_in_use += r.weighted_resources_used;
        total_usage += r.weighted_accumulated_usage;
    }
    push_dashes(&mut s, cols, max_name);
    let cells = cols
        .iter()
        .map(|c| {
            let w = c.head().0;
            match c {
                Col::ResUsed => float(w, 0, total_in_use),
                Col::WtResUsed => float(w, 2, total_usage / 3600.0),
                Col::UseTime2 => date_time(w, min_last_usage),
                Col::UseDeltaT if min_last_usage > 0 => delta(w, tm_last - min_last_usage),
                _ => " ".repeat(w),
            }
        })
        .collect();
    push_line(
        &mut s,
        fit_left(&format!("Number of users: {}", visible.len()), max_name),
        cells,
    );
    s
}

/// The submitters the table shows, in its order: by effective priority
/// when it shows one, else by usage when it shows that, each then by name;
/// those last used before `min_last_usage` left out.
fn visible_rows<'a>(
    recs: &'a [Submitter],
    cols: &[Col],
    min_last_usage: i64,
) -> Vec<&'a Submitter> {
    let mut rows: Vec<&Submitter> = recs.iter().collect();
    if cols.contains(&Col::Priority) {
        rows.sort_by(|a, b| {
            a.effective
                .total_cmp(&b.effective)
                .then(a.name.cmp(&b.name))
        });
    } else if cols.contains(&Col::ResUsed) {
        rows.sort_by(|a, b| {
            a.weighted_accumulated_usage
                .total_cmp(&b.weighted_accumulated_usage)
                .then(a.name.cmp(&b.name))
        });
    }
    rows.retain(|r| last_usage(r) >= min_last_usage);
    rows
}

/// When a submitter last used the pool; a record never used counts as
/// last used at -1.
fn last_usage(r: &Submitter) -> i64 {
    if r.last_usage_time == 0 {
        -1
    } else {
        r.last_usage_time
    }
}

/// One line of the table: the name column, then each cell after a space.
fn push_line(s: &mut String, name: String, cells: Vec<String>) {
    s.push_str(&name);
    for c in cells {
        s.push(' ');
        s.push_str(&c);
    }
    s.push('\n');
}

/// The two heading lines and the dashes under them.
fn push_heads(s: &mut String, cols: &[Col], max_name: usize) {
    push_line(
        s,
        " ".repeat(max_name),
        cols.iter()
            .map(|c| center(c.head().1, c.head().0))
            .collect(),
    );
    push_line(
        s,
        fit_left("User Name", max_name),
        cols.iter()
            .map(|c| center(c.head().2, c.head().0))
            .collect(),
    );
    push_dashes(s, cols, max_name);
}

/// A line of dashes as wide as each column.
fn push_dashes(s: &mut String, cols: &[Col], max_name: usize) {
    push_line(
        s,
        "-".repeat(max_name),
        cols.iter().map(|c| "-".repeat(c.head().0)).collect(),
    );
}

/// Submitter `r`'s cell in column `c`.
fn cell(c: &Col, r: &Submitter, tm_last: i64) -> String {
    let w = c.head().0;
    match c {
        Col::Priority => float(w, 2, r.effective),
        Col::RealPrio => float(
            w,
            2,
            if r.factor > 0.0 {
                r.effective / r.factor
            } else {
                0.0
            },
        ),
        Col::Factor if r.factor > 0.0 => float(w, 2, r.factor),
        Col::Factor => " ".repeat(w),
        Col::ResUsed => float(w, 0, r.weighted_resources_used),
        Col::WtResUsed => float(w, 2, r.weighted_accumulated_usage / 3600.0),
        Col::UseTime1 => date_time(w, r.begin_usage_time),
        Col::UseTime2 => date_time(w, last_usage(r)),
        Col::UseDeltaT => delta(w, tm_last - last_usage(r)),
        Col::Floor if r.floor > 0.0 => float(w, 2, r.floor),
        Col::Ceiling if r.ceiling > -1.0 => float(w, 2, r.ceiling),
        Col::Floor | Col::Ceiling => " ".repeat(w),
    }
}

/// `text` left-aligned in `width` (cut to it).
fn fit_left(text: &str, width: usize) -> String {
    let t: String = text.chars().take(width).collect();
    format!("{t:<width$}")
}

/// `text` right-aligned in `width` (cut to its first `width` characters).
fn fit_right(text: &str, width: usize) -> String {
    let t: String = text.chars().take(width).collect();
    format!("{t:>width$}")
}

/// `text` centred in `width`, the extra space on the right.
fn center(text: &str, width: usize) -> String {
    let len = text.chars().count();
    let left = width.saturating_sub(len) / 2;
    fit_left(&format!("{}{text}", " ".repeat(left)), width)
}

/// condor_userprio's FormatFloat: `%W.Df`, or `%.(W-6)g` when that is too
/// wide, right-aligned in W.
fn float(width: usize, decimals: usize, v: f64) -> String {
    let f = format!("{v:width$.decimals$}");
    if f.len() <= width {
        return f;
    }
    fit_right(&format_g(v, width.saturating_sub(6)), width)
}

/// C's `%.Pg`.
fn format_g(v: f64, precision: usize) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v.is_finite() {
            "0".into()
        } else {
            v.to_string()
        };
    }
    let p = precision.max(1);
    let e_form = format!("{:.*e}", p - 1, v);
    let (mant, exp) = e_form.split_once('e').unwrap_or((&e_form, "0"));
    let x: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if x < -4 || x >= p as i32 {
        let sign = if x < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mant), x.abs())
    } else {
        trim(&format!("{:.*}", (p as i32 - 1 - x) as usize, v))
    }
}

/// `M/DD/YYYY HH:MM` (local time) right-aligned, blank for no time.
fn date_time(width: usize, t: i64) -> String {
    if t <= 0 {
        return " ".repeat(width);
    }
    let l = local_time(t);
    fit_right(
        &format!(
            "{:2}/{:02}/{:<4} {:02}:{:02}",
            l.mon, l.mday, l.year, l.hour, l.min
        ),
        width,
    )
}

/// `D+HH:MM` (days in at least 3 characters) right-aligned, `<now>` for
/// none.
fn delta(width: usize, secs: i64) -> String {
    if secs <= 0 {
        return fit_right("<now>", width);
    }
    let (d, h, m) = (secs / 86400, secs % 86400 / 3600, secs % 3600 / 60);
    fit_right(&format!("{d:3}+{h:02}:{m:02}"), width)
}

/// `M/D HH:MM` in local time, as HTCondor's format_date.
fn format_date(t: i64) -> String {
    if t < 0 {
        return "    ???    ".into();
    }
    let l = local_time(t);
    format!("{:2}/{:<2} {:02}:{:02}", l.mon, l.mday, l.hour, l.min)
}

/// Local midnight of a date, as condor_userprio's -activefrom reads it (a
/// year below 50 is 20YY, one below 1900 is 19YY).
fn local_midnight(month: i32, day: i32, year: i32) -> i64 {
    let mut year = year;
    if year < 50 {
        year += 100;
    }
    if year > 1900 {
        year -= 1900;
    }
    crate::sys::time::local_midnight(year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(name: &str, p: f64, in_use: f64, usage_hours: f64, last: i64) -> Submitter {
        Submitter {
            name: name.into(),
            priority: p,
            factor: 1000.0,
            effective: p.max(0.5) * 1000.0,
            resources_used: in_use,
            weighted_resources_used: in_use,
            accumulated_usage: usage_hours * 3600.0,
            weighted_accumulated_usage: usage_hours * 3600.0,
            begin_usage_time: 0,
            last_usage_time: last,
            floor: 0.0,
            ceiling: -1.0,
        }
    }

    #[test]
    fn floats_as_condor_userprio_prints_them() {
        assert_eq!(float(12, 2, 500.0), "      500.00");
        assert_eq!(float(6, 0, 2.0), "     2");
        assert_eq!(float(12, 2, 5e9), "       5e+09");
        assert_eq!(float(9, 2, 1e10), "    1e+10");
        assert_eq!(format_g(123456.0, 6), "123456");
        assert_eq!(format_g(1234567.0, 6), "1.23457e+06");
        assert_eq!(format_g(0.0001, 6), "0.0001");
        assert_eq!(format_g(0.00001, 6), "1e-05");
    }

    #[test]
    fn the_default_table_matches_the_spec_example() {
        let now = 1_700_000_000;
        let recs = vec![rec("alice@ap.example", 0.5, 2.0, 2.0, now)];
        let t = table(
            &recs,
            &columns(&Args::parse_from(["tern_userprio"])),
            now,
            now - 86400,
        );
        let lines: Vec<&str> = t.lines().map(|l| l.trim_end()).collect();
        assert_eq!(
            lines[1..5],
            [
                "                    Effective   Priority  Wghted Total Usage  Time Since Submitter Submitter",
                "User Name            Priority    Factor   In Use (wghted-hrs) Last Usage   Floor    Ceiling",
                "------------------ ------------ --------- ------ ------------ ---------- --------- ---------",
                "alice@ap.example         500.00   1000.00      2         2.00      <now>",
            ]
        );
        assert!(lines[0].starts_with("Last Priority Update: "));
        assert_eq!(
            lines[6],
            "Number of users: 1                             2         2.00    1+00:00"
        );
    }
}
