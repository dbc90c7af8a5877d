//! Router hooks (spec 5.8): `<KW>_HOOK_TRANSLATE_JOB`, `_UPDATE_JOB_INFO`,
//! `_JOB_FINALIZE` (old name `_JOB_EXIT`) and `_JOB_CLEANUP`, with the
//! keyword from the job's HookKeyword, else JOB_ROUTER_HOOK_KEYWORD.
//!
//! A hook runs as the job's owner ([`super::owner`]) with no arguments,
//! ClassAds on stdin in the old (long) form, and prints attributes, one
//! `Attr = value` a line; one bad line fails the whole output. It runs in
//! the job's Iwd when the owner may enter it, else in `/`, never in the
//! router's own directory. A router run by its user hands its environment
//! on, as an HTCondor daemon hands its own to its hooks; a root router
//! hands on nothing of root's: the hook gets only [`owner_env`]. One
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
use crate::sys::identity::{Identity, JobOwner};

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

/// The environment a root router gives a hook it runs as a job's owner,
/// built from nothing (as atd runs a job): `PATH` (`/usr/bin:/bin`, the
/// path a privileged tern tool keeps), and the owner's `HOME` (from the
/// password database, `/` without one), `USER` and `LOGNAME`.
pub fn owner_env(owner: &Identity, name: &str) -> Vec<(String, String)> {
    let home = crate::sys::identity::passwd_uid(owner.uid)
        .and_then(|p| p.home)
        .unwrap_or_else(|| "/".into());
    vec![
        ("PATH".into(), crate::sys::privilege::SAFE_PATH.to_string()),
        ("HOME".into(), home),
        ("USER".into(), name.to_string()),
        ("LOGNAME".into(), name.to_string()),
    ]
}

/// Where a hook runs: the job's `iwd` when it is absolute and the hook's
/// user (`owner`, `None` for this process) may enter it (looked at with
/// that user's ids: `iwd/.` is found only through a directory one may
/// search), else `/`.
pub fn working_dir(owner: Option<&Identity>, iwd: Option<&Path>) -> PathBuf {
    let enterable = |d: &Path| {
        crate::sys::identity::as_user(owner, || std::fs::metadata(d.join(".")))
            .is_ok_and(|m| m.is_ok_and(|m| m.is_dir()))
    };
    match iwd {
        Some(d) if d.is_absolute() && enterable(d) => d.to_path_buf(),
        _ => PathBuf::from("/"),
    }
}

/// Runs `program` for job `id` as its `owner` with `stdin`, in the job's
/// `iwd` ([`working_dir`]), at most `timeout`.
#[allow(clippy::too_many_arguments)]
pub fn run(
    spool: &Path,
    owner: &JobOwner,
    iwd: Option<&Path>,
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
    // Root's environment is not the owner's to see.
    let env = ident.as_ref().map(|i| owner_env(i, &owner.name));
    inv.env = env.as_deref();
    let cwd = working_dir(ident.as_ref(), iwd);
    inv.cwd = Some(&cwd);
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

/// Removes a retired job's hook files, by descriptor: `router-hooks` is
/// opened without following a link and each file removed as what it is,
/// a link as a link, so a root router never removes through a link
/// planted in a SPOOL someone else may write.
pub fn forget(spool: &Path, id: JobId) {
    let Ok(dir) = crate::sys::tree::Dir::in_spool(spool, "router-hooks") else {
        return;
    };
    let suffix = format!(".{id}.stderr");
    for name in dir.entries().unwrap_or_default() {
        if name.ends_with(&suffix) {
            let _ = dir.remove(&name);
        }
    }
}

fn failed(reason: String) -> Ran {
    Ran::Failed {
        reason,
        signalled: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `router-hooks` planted as a link, then a link planted with a hook
    /// file's name: neither is followed.
    #[test]
    fn forget_never_follows_a_planted_link() {
        let d = tempfile::tempdir().unwrap();
        let (spool, elsewhere) = (d.path().join("spool"), d.path().join("elsewhere"));
        std::fs::create_dir_all(&spool).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        let id = JobId {
            cluster: 4,
            proc: 0,
        };
        let name = format!("TRANSLATE_JOB.{id}.stderr");
        let victim = elsewhere.join(&name);
        std::fs::write(&victim, "keep").unwrap();
        let dir = spool.join("router-hooks");
        std::os::unix::fs::symlink(&elsewhere, &dir).unwrap();
        forget(&spool, id);
        assert!(victim.exists(), "not removed through the linked directory");
        std::fs::remove_file(&dir).unwrap();
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join(&name)).unwrap();
        std::fs::write(dir.join(format!("JOB_CLEANUP.{id}.stderr")), "").unwrap();
        forget(&spool, id);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "both went");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    }
}
