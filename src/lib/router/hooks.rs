//! Router hooks (spec 5.8): `<KW>_HOOK_TRANSLATE_JOB`, `_UPDATE_JOB_INFO`,
//! `_JOB_FINALIZE` (old name `_JOB_EXIT`) and `_JOB_CLEANUP`, with the
//! keyword from the job's HookKeyword, else JOB_ROUTER_HOOK_KEYWORD.
//!
//! A hook runs as the job's owner ([`super::owner`]) with no arguments,
//! ClassAds on stdin in the old (long) form, and prints attributes, one
//! `Attr = value` a line; one bad line fails the whole output. One
//! instance per job per hook runs at a time: the file
//! `$(SPOOL)/router-hooks/<HOOK>.<job>.stderr` is locked while it runs and
//! is the hook's stderr, so the hook itself holds the lock (a router killed
//! while a hook runs does not let a second one start) and what it printed
//! there is kept for the log. The lock is per whole job id: unlike
//! HTCondor, job 1.1's hook does not block 1.10's. A hook that outlives
//! JOB_ROUTER_HOOK_TIMEOUT is killed and counts as failed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::classad::{ClassAd, Expr};
use crate::config::Config;
use crate::hooks::{Invocation, Outcome, parse_attributes};
use crate::queue::JobId;
use crate::sys::identity::JobOwner;

/// The four router hooks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hook {
    TranslateJob,
    UpdateJobInfo,
    JobFinalize,
    JobCleanup,
}

impl Hook {
    pub fn name(self) -> &'static str {
        match self {
            Hook::TranslateJob => "TRANSLATE_JOB",
            Hook::UpdateJobInfo => "UPDATE_JOB_INFO",
            Hook::JobFinalize => "JOB_FINALIZE",
            Hook::JobCleanup => "JOB_CLEANUP",
        }
    }
}

/// What running a hook gave.
#[derive(Debug)]
pub enum Ran {
    /// No hook of this type for the job's keyword.
    NotConfigured,
    /// The job's previous instance of this hook is still running.
    Busy,
    /// Exit 0; the attributes it printed (empty when it printed nothing).
    Output(ClassAd),
    /// Exit 0 with output that does not parse: the reason names the line.
    BadOutput(String),
    /// A non-zero exit, a kill by a signal, a timeout or a failure to
    /// start, with the reason for the log.
    Failed { reason: String, signalled: bool },
}

/// The hook program configured for `job`'s keyword, if any.
pub fn program(
    cfg: &Config,
    job: &ClassAd,
    hook: Hook,
) -> Result<Option<PathBuf>, crate::config::ConfigError> {
    let keyword = match job.get("HookKeyword").and_then(|e| e.literal_value()) {
        Some(crate::classad::Value::Str(s)) if !s.is_empty() => Some(s.to_string()),
        _ => cfg.get("JOB_ROUTER_HOOK_KEYWORD")?,
    };
    let Some(kw) = keyword else {
        return Ok(None);
    };
    let mut path = cfg.get(&format!("{kw}_HOOK_{}", hook.name()))?;
    if path.is_none() && hook == Hook::JobFinalize {
        path = cfg.get(&format!("{kw}_HOOK_JOB_EXIT"))?;
    }
    Ok(path.map(PathBuf::from))
}

/// The stdin of a hook: the ads in old form, separated by `------` lines.
pub fn stdin_of(ads: &[&ClassAd]) -> String {
    crate::hooks::output::ads_stdin(ads, "------")
}

/// The TRANSLATE_JOB input's first part: the route as a new-syntax ad on
/// one line.
pub fn route_line(name: &str, universe: i64, grid_resource: Option<&str>) -> String {
    let mut ad = ClassAd::new();
    ad.insert("Name", Expr::string(name));
    ad.insert("TargetUniverse", Expr::int(universe));
    if let Some(g) = grid_resource {
        ad.insert("GridResource", Expr::string(g));
    }
    crate::classad::unparse::ad_to_string(&ad)
}

/// Runs `program` for job `id` as its `owner` with `stdin`, at most
/// `timeout`.
pub fn run(
    spool: &Path,
    owner: &JobOwner,
    id: JobId,
    hook: Hook,
    program: &Path,
    stdin: &str,
    timeout: Duration,
) -> Ran {
    let ident = match super::owner::hook_identity(owner) {
        Ok(i) => i,
        Err(why) => return failed(format!("{}: not run: {why}", program.display())),
    };
    let log = spool
        .join("router-hooks")
        .join(format!("{}.{}.stderr", hook.name(), id));
    let mut inv = Invocation::new(program, stdin.as_bytes(), timeout, &log);
    inv.owner = ident.as_ref();
    let outcome = crate::hooks::run::run(&inv);
    if let Some(out) = outcome.success() {
        return match parse_attributes(out) {
            Ok(ad) => Ran::Output(ad),
            Err(reason) => Ran::BadOutput(format!("{}: {reason}", program.display())),
        };
    }
    match outcome {
        Outcome::Busy => Ran::Busy,
        ref o => Ran::Failed {
            reason: o.failure(&inv).unwrap_or_default(),
            signalled: matches!(o, Outcome::Signalled { .. }),
        },
    }
}

/// Removes a retired job's hook files.
pub fn forget(spool: &Path, id: JobId) {
    let dir = spool.join("router-hooks");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let suffix = format!(".{id}.stderr");
    for e in entries.flatten() {
        if e.file_name().to_string_lossy().ends_with(&suffix) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

fn failed(reason: String) -> Ran {
    Ran::Failed {
        reason,
        signalled: false,
    }
}
