//! `tern_cron`: runs the daemon ClassAd hooks (STARTD_CRON and SCHEDD_CRON
//! jobs) that are due, beside the negotiation pass, which starts it (see
//! [`crate::hooks::cron`]). Not meant to be run by hand, though doing so is
//! harmless: a runner already running holds the lock and this one exits.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use super::env::ToolEnv;
use super::{CliError, parse_args, run_tool};
use crate::classad::ClassAd;
use crate::config::Config;
use crate::hooks::cron::{CronError, Family, runner};
use crate::machine::{self, Machine};
use crate::queue::Queue;

/// Run the due STARTD_CRON and SCHEDD_CRON jobs (started by tern_negotiate).
#[derive(Parser, Debug)]
#[command(name = "tern_cron", version)]
pub struct Args {}

pub fn main() -> ExitCode {
    run_tool("tern_cron", run)
}

struct Host {
    spool: PathBuf,
}

impl runner::Host for Host {
    fn config(&self) -> Result<Config, CronError> {
        Ok(Config::load()?)
    }

    fn daemon_ad(&self, cfg: &Config, fam: Family) -> Option<ClassAd> {
        let q = Queue::open(&self.spool, false).ok()??;
        let now = crate::clock::now();
        match fam {
            Family::Startd => {
                let m = Machine::detect(cfg).ok()?.with_hooks(q.conn()).ok()?;
                let rows = machine::load_slots(q.conn()).ok()?;
                let row = rows
                    .first()
                    .cloned()
                    .or_else(|| machine::configured_rows(&m, now).into_iter().next())?;
                Some(machine::slot_ad(&m, &row, now))
            }
            Family::Schedd => crate::hooks::cron::schedd_ad(cfg, Some(q.conn()), now).ok(),
        }
    }

    fn changed(&self, cfg: &Config) {
        // Cron runs a pass every minute anyway: a failure here only delays.
        let _ = crate::negotiator::request_pass(cfg, &self.spool);
    }
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let _ = parse_args::<Args>(argv)?;
    let env = ToolEnv::open("tern_cron")?;
    let host = Host {
        spool: env.spool.clone(),
    };
    runner::run(&env.spool, &host).map_err(|e| match e {
        CronError::Queue(q) => super::env::queue_error(q),
        CronError::Config(c) => c.into(),
        e => CliError::Failed {
            msg: e.to_string(),
            hint: None,
        },
    })
}
