//! The submit description language: a file of commands and macros, `+Attr`
//! lines, `include`, `if`/`else`, and `queue` statements, turned into job ads
//! the way condor_submit turns them.
//!
//! Macros expand when jobs are materialised, with the definitions in force at
//! each `queue` statement, so a later redefinition of a macro counts for every
//! command that uses it before that statement. A submission is one cluster:
//! one cluster ad plus, per proc, only the attributes that differ from it.
//!
//! Here are the types both halves share. [`parse`] (parse.rs) reads the
//! file into statements; [`materialize`] (materialize.rs) runs them,
//! expanding macros and queue item lists, and asks [`job::build`] for each
//! proc's ad.

pub mod args;
pub mod job;
mod materialize;
mod parse;
pub mod queue;
pub mod units;

pub use materialize::materialize;
pub use parse::parse;

use std::collections::HashSet;
use std::path::PathBuf;

use crate::classad::ClassAd;
use crate::config::reader::Origin;

use queue::QueueSpec;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubmitError {
    #[error("{origin}: {msg}")]
    At { origin: Origin, msg: String },
    #[error("{file}: {msg}")]
    File { file: String, msg: String },
}

#[derive(Clone, Debug)]
pub enum Kind {
    Set {
        name: String,
        value: String,
    },
    /// `+Attr = value` / `MY.Attr = value`; `None` for `-Attr`.
    Attr {
        name: String,
        value: Option<String>,
    },
    Queue(QueueStmt),
}

/// A queue statement as written, and as first read.
#[derive(Clone, Debug)]
pub struct QueueStmt {
    pub spec: QueueSpec,
    pub rest: String,
    pub block: Option<Vec<String>>,
}

#[derive(Clone, Debug)]
pub struct Statement {
    pub origin: Origin,
    pub kind: Kind,
}

/// A parsed submit description.
#[derive(Clone, Debug)]
pub struct SubmitFile {
    pub name: String,
    pub dir: PathBuf,
    pub stmts: Vec<Statement>,
    /// Macro names that `if` conditions read (so they count as used).
    pub condition_refs: HashSet<String>,
}

/// Everything about a submission that is not in the file.
pub struct SubmitOptions {
    pub cluster: i64,
    pub qdate: i64,
    pub owner: String,
    pub cwd: PathBuf,
    /// The environment `getenv` copies from.
    pub environ: Vec<(String, String)>,
    /// `-batch-name`.
    pub batch_name: Option<String>,
}

/// The result of a submission.
#[derive(Clone, Debug)]
pub struct Cluster {
    pub cluster_ad: ClassAd,
    /// Per proc, the attributes that differ from the cluster ad (always
    /// including ProcId).
    pub procs: Vec<ClassAd>,
    pub warnings: Vec<String>,
}

impl Cluster {
    /// The full ad of proc `i`: the cluster ad updated with the proc's
    /// differences.
    pub fn full_ad(&self, i: usize) -> ClassAd {
        let mut ad = self.cluster_ad.clone();
        ad.update(&self.procs[i]);
        ad
    }
}

const PROC_VARS: &[&str] = &["process", "procid", "step", "itemindex", "row", "node"];

/// Every command the builder reads; other names are plain macros.
const COMMANDS: &[&str] = &[
    "accounting_group",
    "accounting_group_user",
    "allowed_execute_duration",
    "allowed_job_duration",
    "args",
    "arguments",
    "batch_name",
    "concurrency_limits",
    "coresize",
    "cron_day_of_month",
    "cron_day_of_week",
    "cron_hour",
    "cron_minute",
    "cron_month",
    "cron_prep_time",
    "cron_window",
    "deferral_prep_time",
    "deferral_time",
    "deferral_window",
    "description",
    "env",
    "environment",
    "error",
    "executable",
    "getenv",
    "hold",
    "hold_kill_sig",
    "initial_dir",
    "initialdir",
    "input",
    "job_lease_duration",
    "job_max_vacate_time",
    "keep_claim_idle",
    "kill_sig",
    "leave_in_queue",
    "load_profile",
    "log",
    "max_idle",
    "max_job_retirement_time",
    "max_retries",
    "next_job_start_delay",
    "nice_user",
    "notification",
    "notify_user",
    "on_exit_hold",
    "on_exit_hold_reason",
    "on_exit_hold_subcode",
    "on_exit_remove",
    "output",
    "periodic_hold",
    "periodic_hold_reason",
    "periodic_hold_subcode",
    "periodic_release",
    "periodic_remove",
    "prio",
    "priority",
    "rank",
    "remove_kill_sig",
    "request_cpus",
    "request_disk",
    "request_memory",
    "requirements",
    "retry_until",
    "run_as_owner",
    "should_transfer_files",
    "stderr",
    "stdin",
    "stdout",
    "stream_error",
    "stream_input",
    "stream_output",
    "submit_event_notes",
    "success_exit_code",
    "transfer_executable",
    "transfer_input_files",
    "transfer_output_files",
    "universe",
    "want_graceful_removal",
    "when_to_transfer_output",
];

#[derive(Clone, Debug)]
struct MacroDef {
    raw: String,
    origin: Origin,
}

/// Names referenced as `$(name…)` or as function arguments in `text`.
fn collect_refs(text: &str, out: &mut HashSet<String>) {
    let mut rest = text;
    while let Some(p) = rest.find('$') {
        rest = &rest[p + 1..];
        let Some(open) = rest.find('(') else { break };
        if rest[..open]
            .bytes()
            .any(|b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'$'))
        {
            continue;
        }
        let inner = &rest[open + 1..];
        let end = inner.find(')').unwrap_or(inner.len());
        for w in inner[..end].split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        {
            if !w.is_empty() {
                out.insert(w.to_ascii_lowercase());
            }
        }
    }
}

#[cfg(test)]
mod tests;
