//! `tern_router_rm`: removes routed jobs, as HTCondor's `condor_router_rm`:
//! its options (`-idle`, `-held`, `-route`/`-site`, `-constraint`) build a
//! constraint over the routed copies that is handed to `tern_rm` with the
//! rest of the arguments. HTCondor's script honours only the first of its
//! options (a stray `break`); tern honours every one.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use super::router_q::read_args;
use super::{CliError, run_tool};

/// Remove jobs the job router routed (their routed copies). The options
/// below come first, and every one of them counts; the rest are tern_rm's
/// (see tern_rm(1)), given the constraint these build.
#[derive(Parser, Debug)]
#[command(
    name = "tern_router_rm",
    version,
    after_help = "Examples:\n  tern_router_rm -route Slurm\n  tern_router_rm -held -route Slurm\n  tern_router_rm -constraint 'RemoteWallClockTime > 3600'"
)]
pub struct Args {
    #[command(flatten)]
    pub filter: super::router_q::Filter,
    /// tern_rm's options (-reason, -forcex, ...)
    #[arg(
        value_name = "TERN_RM_OPTIONS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub rest: Vec<String>,
}

pub fn main() -> ExitCode {
    run_tool("tern_router_rm", run)
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let Some(o) = read_args(&argv, false, "tern_router_rm", Args::command())? else {
        return Ok(());
    };
    let mut rm_argv: Vec<OsString> = vec!["tern_router_rm".into()];
    rm_argv.extend(o.rest.into_iter().map(OsString::from));
    rm_argv.push("-constraint".into());
    rm_argv.push(o.constraint.into());
    super::rm::run(rm_argv)
}
