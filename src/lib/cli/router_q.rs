//! `tern_router_q`: the jobs the job router routed, as HTCondor's
//! `condor_router_q` shows them: its own options first (`-S`, `-R`, `-I`,
//! `-H`, `-idle`, `-held`, `-route`/`-site`, `-constraint`), which build a
//! constraint over the routed copies (`RouteName =!= UNDEFINED && ...`);
//! everything after them goes to `tern_q` (`-json`, `-af`, `-nobatch`, ...).
//! `-S` and the options that imply it print the per-route summary instead.

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use super::env::ToolEnv;
use super::{CliError, run_tool};
use crate::classad::{ClassAd, Value};
use crate::queue::Selection;

/// Show the jobs the job router routed (their routed copies). The options
/// below come first; the rest are tern_q's (see tern_q(1)), given the
/// constraint these build.
#[derive(Parser, Debug)]
#[command(
    name = "tern_router_q",
    version,
    after_help = "Examples:\n  tern_router_q\n  tern_router_q -S\n  tern_router_q -route Slurm -idle\n  tern_router_q -held -af ClusterId RouteName HoldReason"
)]
pub struct Args {
    /// Summarize the routed jobs: one line per route, status and GridResource
    #[arg(short = 'S')]
    pub summary: bool,
    /// Summarize the running routed jobs
    #[arg(short = 'R')]
    pub running: bool,
    /// Summarize the routed jobs that are not running
    #[arg(short = 'I')]
    pub not_running: bool,
    /// Summarize the held routed jobs
    #[arg(short = 'H')]
    pub held_summary: bool,
    #[command(flatten)]
    pub filter: Filter,
    /// tern_q's options, given the constraint built from the ones above
    #[arg(
        value_name = "TERN_Q_OPTIONS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub rest: Vec<String>,
}

/// The options that choose routed jobs, shared with tern_router_rm (their
/// help text; [`router_options`] reads them).
#[derive(clap::Args, Debug)]
pub struct Filter {
    /// Only idle routed jobs
    #[arg(long)]
    pub idle: bool,
    /// Only held routed jobs
    #[arg(long)]
    pub held: bool,
    /// Only the jobs of route NAME
    #[arg(long, value_name = "NAME", visible_alias = "site")]
    pub route: Option<String>,
    /// Only the jobs matching this ClassAd expression
    #[arg(long, value_name = "EXPR")]
    pub constraint: Option<String>,
}

pub fn main() -> ExitCode {
    run_tool("tern_router_q", run)
}

/// The router options at the front of `argv` (after the program name):
/// the constraint they build, whether they ask for the summary, and where
/// the rest begins. `-h` prints the help.
pub struct RouterOptions {
    pub constraint: String,
    pub summary: bool,
    pub rest: Vec<String>,
    /// `-h` (short help) or `-help` (long help) was asked for.
    pub help: Option<bool>,
}

/// Reads the leading router options as condor_router_q and condor_router_rm
/// do, each adding its clause; `summaries` says whether -S, -R, -I and -H
/// are options (router_q) or not (router_rm).
pub fn router_options(
    argv: &[String],
    summaries: bool,
    tool: &str,
) -> Result<RouterOptions, CliError> {
    let mut o = RouterOptions {
        constraint: "RouteName =!= UNDEFINED".into(),
        summary: false,
        rest: Vec::new(),
        help: None,
    };
    let mut i = 0;
    let value = |i: usize, opt: &str| -> Result<String, CliError> {
        argv.get(i + 1).cloned().ok_or_else(|| CliError::Usage {
            msg: format!("{opt} needs a value"),
            hint: Some(format!("'{tool} -help' lists the options")),
        })
    };
    while i < argv.len() {
        let a = argv[i].as_str();
        let long = a.trim_start_matches('-');
        let dashed = a.starts_with('-');
        match (dashed, a, long) {
            (true, "-S", _) if summaries => o.summary = true,
            (true, "-R", _) if summaries => {
                o.summary = true;
                o.constraint.push_str(" && JobStatus == 2");
            }
            (true, "-I", _) if summaries => {
                o.summary = true;
                o.constraint.push_str(" && JobStatus != 2");
            }
            (true, "-H", _) if summaries => {
                o.summary = true;
                o.constraint.push_str(" && JobStatus == 5");
            }
            (true, _, "idle") => o.constraint.push_str(" && JobStatus == 1"),
            (true, _, "held") => o.constraint.push_str(" && JobStatus == 5"),
            (true, _, "constraint") => {
                let v = value(i, a)?;
                crate::classad::parser::parse_expr_old(&v)
                    .map_err(|e| CliError::constraint(&v, e))?;
                o.constraint.push_str(&format!(" && ({v})"));
                i += 1;
            }
            (true, _, "route" | "site") => {
                let v = value(i, a)?;
                o.constraint.push_str(&format!(
                    " && RouteName =?= \"{}\"",
                    v.replace('\\', "\\\\").replace('"', "\\\"")
                ));
                i += 1;
            }
            (true, "-h", _) => o.help = Some(false),
            (true, "-help" | "--help", _) => o.help = Some(true),
            _ => break,
        }
        i += 1;
    }
    o.rest = argv[i..].to_vec();
    Ok(o)
}

/// The router options of a whole argv (program name first); `None` when
/// they asked for the help, which is then printed from `cmd`.
pub fn read_args(
    argv: &[OsString],
    summaries: bool,
    tool: &str,
    mut cmd: clap::Command,
) -> Result<Option<RouterOptions>, CliError> {
    let args: Vec<String> = argv
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let o = router_options(&args, summaries, tool)?;
    if let Some(long) = o.help {
        print!("{}", super::argv::help_text(&mut cmd, long));
        return Ok(None);
    }
    Ok(Some(o))
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let Some(o) = read_args(&argv, true, "tern_router_q", Args::command())? else {
        return Ok(());
    };
    if !o.summary {
        let mut q_argv: Vec<OsString> = vec![
            "tern_router_q".into(),
            "-constraint".into(),
            o.constraint.into(),
        ];
        q_argv.extend(o.rest.into_iter().map(OsString::from));
        return super::q::run(q_argv);
    }
    let expr = crate::classad::parser::parse_expr_old(&o.constraint)
        .map_err(|e| CliError::constraint(&o.constraint, e))?;
    let env = ToolEnv::open("tern_router_q")?;
    let ads: Vec<ClassAd> = match env.queue(false)? {
        None => Vec::new(),
        Some(q) => q
            .select(&Selection {
                constraint: Some(expr),
                ..Selection::default()
            })?
            .into_iter()
            .map(|(_, ad)| ad)
            .collect(),
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    out.write_all(summary(&ads).as_bytes())?;
    Ok(())
}

/// `-S`: `printf("%7s %2s %-20s %s")` header, then the lines
/// `%2s %-20s %s` (status letter, route, GridResource) counted as
/// `sort | uniq -c | sort -k 3` counts and orders them (byte order).
pub fn summary(ads: &[ClassAd]) -> String {
    let mut out = format!(
        "{:>7} {:>2} {:<20} {}\n",
        "JOBS", "ST", "Route", "GridResource"
    );
    let mut lines: Vec<String> = ads
        .iter()
        .map(|ad| {
            let st = match ad.get("JobStatus").and_then(|e| e.literal_value()) {
                Some(Value::Int(s)) => match s {
                    0 => "U".to_string(),
                    1 => "I".into(),
                    2 => "R".into(),
                    3 => "X".into(),
                    4 => "C".into(),
                    5 => "H".into(),
                    6 => "E".into(),
                    n => n.to_string(),
                },
                _ => String::new(),
            };
            let text = |a: &str| match ad.get(a).and_then(|e| e.literal_value()) {
                Some(Value::Str(s)) => s.to_string(),
                Some(v) => crate::classad::unparse::value_to_string(v),
                None => String::new(),
            };
            format!("{st:>2} {:<20} {}", text("RouteName"), text("GridResource"))
        })
        .collect();
    lines.sort();
    let mut counted: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let mut j = i;
        while j < lines.len() && lines[j] == lines[i] {
            j += 1;
        }
        counted.push(format!("{:>7} {}", j - i, lines[i]));
        i = j;
    }
    // sort -k 3: from the third blank-separated field (with its leading
    // blank) to the end of the line, then the whole line.
    counted.sort_by(|a, b| key3(a).cmp(key3(b)).then(a.cmp(b)));
    for l in counted {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// The text from the start of the third field (its leading blanks
/// included, as sort counts them without -b) to the end.
fn key3(line: &str) -> &str {
    let b = line.as_bytes();
    let mut i = 0;
    for _ in 0..2 {
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        while i < b.len() && b[i] != b' ' && b[i] != b'\t' {
            i += 1;
        }
    }
    &line[i..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_third_key_starts_at_the_route() {
        assert_eq!(
            key3("      2  I Site1                x"),
            " Site1                x"
        );
    }

    #[test]
    fn options_build_the_constraint() {
        let argv: Vec<String> = [
            "-route",
            "A",
            "-idle",
            "-constraint",
            "x > 1",
            "-af",
            "ClusterId",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let o = router_options(&argv, true, "t").unwrap();
        assert_eq!(
            o.constraint,
            "RouteName =!= UNDEFINED && RouteName =?= \"A\" && JobStatus == 1 && (x > 1)"
        );
        assert_eq!(o.rest, vec!["-af", "ClusterId"]);
        assert!(!o.summary);
    }
}
