//! `tern_config_val`: prints configuration values, as HTCondor's
//! `condor_config_val`.

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use clap::Parser;

use super::{CliError, parse_args, run_tool};
use crate::config::{Config, ValueSource, knobs};

/// Print the values of configuration knobs.
///
/// Each NAME is printed expanded, one per line. A name that is undefined or
/// empty prints `Not defined: NAME` on stderr, and the exit status is 1.
#[derive(Parser, Debug)]
#[command(
    name = "tern_config_val",
    version,
    after_help = "Examples:\n  tern_config_val SPOOL\n  tern_config_val -verbose SPOOL LOCAL_CONFIG_DIR\n  tern_config_val -dump SPOOL"
)]
pub struct Args {
    /// Print values as written, without expanding $(...) references
    #[arg(long)]
    pub raw: bool,

    /// Also say where each value was set, its raw form and its default
    #[arg(long, short = 'v')]
    pub verbose: bool,

    /// List every definition (raw), or those whose names contain NAME
    #[arg(long)]
    pub dump: bool,

    /// List the configuration files read, in order
    #[arg(long)]
    pub config: bool,

    /// Knob names
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
}

pub fn main() -> ExitCode {
    run_tool("tern_config_val", run)
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (args, _) = parse_args::<Args>(argv)?;
    let cfg = Config::load()?;
    for w in cfg.warnings() {
        note!("tern_config_val: {w}");
    }
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    if args.config {
        if cfg.files().is_empty() {
            writeln!(
                out,
                "No configuration files were read (set TERN_CONFIG or create /etc/tern/tern_config)."
            )?;
        }
        for f in cfg.files() {
            writeln!(out, "{f}")?;
        }
    }
    if args.dump {
        let pats: Vec<String> = args.names.iter().map(|n| n.to_ascii_lowercase()).collect();
        writeln!(
            out,
            "# Configuration from: {}",
            if cfg.files().is_empty() {
                "<defaults only>".to_string()
            } else {
                cfg.files().join(", ")
            }
        )?;
        for e in cfg.entries() {
            let lower = e.name.to_ascii_lowercase();
            if pats.is_empty() || pats.iter().any(|p| lower.contains(p)) {
                writeln!(out, "{} = {}", e.name, e.raw.replace('\n', "\\n"))?;
            }
        }
        out.flush()?;
        return Ok(());
    }
    if args.names.is_empty() && !args.config {
        return Err(CliError::Usage {
            msg: "name at least one knob, or use -dump".into(),
            hint: Some("tern_config_val SPOOL".into()),
        });
    }
    let mut missing = false;
    for name in &args.names {
        let entry = cfg.lookup_entry(name);
        let value = if args.raw {
            entry
                .as_ref()
                .map(|e| e.raw.to_string())
                .filter(|v| !v.trim().is_empty())
        } else {
            cfg.get(name)?
        };
        let Some(value) = value else {
            out.flush()?;
            note!("Not defined: {}", name.to_ascii_uppercase());
            missing = true;
            continue;
        };
        if args.verbose {
            let e = entry.expect("a defined value has an entry");
            writeln!(out, "{} = {}", e.name, value)?;
            match &e.source {
                ValueSource::Default => writeln!(out, " # at: <Default>")?,
                ValueSource::File(o) => writeln!(out, " # at: {}, line {}", o.file, o.line)?,
                ValueSource::Environment(v) => writeln!(out, " # at: <Environment> {v}")?,
            }
            writeln!(out, " # raw: {}", e.raw)?;
            if let Some(k) = knobs::knob(name) {
                writeln!(out, " # default: {}", k.default)?;
                writeln!(out, " # type: {}; {}", k.ty.name(), k.desc)?;
            }
            writeln!(out)?;
        } else {
            writeln!(out, "{value}")?;
        }
    }
    out.flush()?;
    if missing {
        return Err(CliError::Reported(1));
    }
    Ok(())
}
