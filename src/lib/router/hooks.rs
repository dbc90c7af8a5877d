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

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::classad::unparse::ad_to_old;
use crate::classad::{ClassAd, Expr};
use crate::config::Config;
use crate::queue::JobId;

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
    let mut s = String::new();
    for (i, ad) in ads.iter().enumerate() {
        if i > 0 {
            s.push_str("------\n");
        }
        s.push_str(&ad_to_old(ad, true));
    }
    s
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

/// Runs `program` for job `id` as `owner` with `stdin`, at most `timeout`.
pub fn run(
    spool: &Path,
    owner: &str,
    id: JobId,
    hook: Hook,
    program: &Path,
    stdin: &str,
    timeout: Duration,
) -> Ran {
    let dir = spool.join("router-hooks");
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return failed(format!("cannot create {}: {e}", dir.display()));
    }
    let lock_path = dir.join(format!("{}.{}.stderr", hook.name(), id));
    let lock = match std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(&lock_path)
    {
        Ok(f) => f,
        Err(e) => return failed(format!("cannot open {}: {e}", lock_path.display())),
    };
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Ran::Busy,
        Err(std::fs::TryLockError::Error(e)) => {
            return failed(format!("cannot lock {}: {e}", lock_path.display()));
        }
    }
    // Last run's stderr goes; the hook's own copy of the descriptor keeps
    // the lock for as long as it runs.
    let stderr = match lock.set_len(0).and_then(|()| lock.try_clone()) {
        Ok(f) => f,
        Err(e) => return failed(format!("cannot use {}: {e}", lock_path.display())),
    };
    let mut cmd = match super::owner::command(owner, program) {
        Ok(c) => c,
        Err(reason) => return failed(reason),
    };
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr));
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return failed(format!("cannot run {}: {e}", program.display())),
    };
    // stdin from a thread, so that a hook that prints before it reads
    // cannot deadlock against us.
    let input = stdin.to_string();
    let mut pipe = child.stdin.take();
    let writer = std::thread::spawn(move || {
        if let Some(p) = pipe.as_mut() {
            let _ = p.write_all(input.as_bytes());
        }
    });
    let mut out = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        if let Some(o) = out.as_mut() {
            let _ = o.read_to_end(&mut s);
        }
        s
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = writer.join();
                return Ran::Failed {
                    reason: format!(
                        "{} timed out after {} s and was killed",
                        program.display(),
                        timeout.as_secs()
                    ),
                    signalled: false,
                };
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return failed(format!("waiting for {}: {e}", program.display())),
        }
    };
    let _ = writer.join();
    let output = reader.join().unwrap_or_default();
    use std::os::unix::process::ExitStatusExt;
    if let Some(sig) = status.signal() {
        return Ran::Failed {
            reason: format!("{} was killed by signal {sig}", program.display()),
            signalled: true,
        };
    }
    if !status.success() {
        let said = std::fs::read_to_string(&lock_path).unwrap_or_default();
        let said = said.lines().next().unwrap_or("").trim();
        return Ran::Failed {
            reason: format!(
                "{} exited with status {}{}",
                program.display(),
                status.code().unwrap_or(-1),
                if said.is_empty() {
                    String::new()
                } else {
                    format!(" (stderr: {said})")
                }
            ),
            signalled: false,
        };
    }
    match parse_output(&String::from_utf8_lossy(&output)) {
        Ok(ad) => Ran::Output(ad),
        Err(reason) => Ran::BadOutput(format!("{}: {reason}", program.display())),
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

/// A hook's output: `Attr = value` lines (blank lines skipped); the first
/// line that is not one fails the whole output.
pub fn parse_output(text: &str) -> Result<ClassAd, String> {
    let mut ad = ClassAd::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() {
            continue;
        }
        let bad = |why: &str| format!("output line {}: {why}: {l}", i + 1);
        let Some((name, value)) = l.split_once('=') else {
            return Err(bad("not 'Attr = value'"));
        };
        let name = name.trim();
        if name.is_empty()
            || !name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            return Err(bad("not an attribute name"));
        }
        let e = crate::classad::parser::parse_expr_old(value.trim())
            .map_err(|e| bad(&format!("not an expression ({e})")))?;
        ad.insert(name, e);
    }
    Ok(ad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bad_line_fails_the_whole_output() {
        let ad = parse_output("A = 1\n\nB = \"x\"\n").unwrap();
        assert_eq!(ad.len(), 2);
        let e = parse_output("A = 1\nthis is not an attribute\nB = 2\n").unwrap_err();
        assert!(e.starts_with("output line 2:"), "{e}");
        assert!(parse_output("A = (1 +\n").is_err());
    }

    #[test]
    fn stdin_separates_ads() {
        let a = crate::classad::parse_ad("[A = 1]").unwrap();
        let b = crate::classad::parse_ad("[B = 2]").unwrap();
        assert_eq!(stdin_of(&[&a, &b]), "A = 1\n------\nB = 2\n");
    }
}
