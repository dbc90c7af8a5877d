//! The job's environment, as HTCondor 24.0's starter builds it
//! (`Starter::GetJobEnv`): STARTER_JOB_ENVIRONMENT, then the job's own
//! (`Environment`, else the old `Env`), then the starter's variables,
//! which win over the user's except the thread counts (set only when the
//! job left them empty); last, every `#CoNdOrScRaTcHdIr#` in a value
//! becomes the scratch directory. Nothing of the shadow's own environment
//! is inherited (`getenv` was resolved at submit).

use std::path::Path;
use std::rc::Rc;

use crate::classad::ClassAd;
use crate::submit::args::split_v2;

/// What the slot's `CondorScratchDir` holds, replaced in every value.
pub const SCRATCH_MARK: &str = "#CoNdOrScRaTcHdIr#";

/// The facts of this run the starter's variables carry.
pub struct Context<'a> {
    /// The sandbox.
    pub scratch: &'a Path,
    /// `_CONDOR_JOB_IWD`: the sandbox when transferring, else Iwd.
    pub job_iwd: &'a Path,
    /// The slot's name without `@host`.
    pub slot: &'a str,
    /// The slot's cpus.
    pub cpus: i64,
    /// Whether files are transferred (where a proxy is found).
    pub transfer: bool,
}

/// The environment a job starts with; an error names the attribute whose
/// syntax is wrong.
pub fn build(
    ad: &Rc<ClassAd>,
    starter_env: &str,
    thread_vars: &[String],
    ctx: &Context<'_>,
) -> Result<Vec<(String, String)>, String> {
    let mut env = Env::default();
    for (k, v) in parse_config_env(starter_env)? {
        env.set(k, v);
    }
    for (k, v) in job_env(ad)? {
        env.set(k, v);
    }
    let scratch = ctx.scratch.display().to_string();
    for name in [
        "_CONDOR_SCRATCH_DIR",
        "TMPDIR",
        "TEMP",
        "TMP",
        "APPTAINER_CACHEDIR",
        "SINGULARITY_CACHEDIR",
    ] {
        env.set(name.into(), scratch.clone());
    }
    env.set("BATCH_SYSTEM".into(), "HTCondor".into());
    env.set("_CONDOR_SLOT".into(), ctx.slot.into());
    let file = |n: &str| ctx.scratch.join(n).display().to_string();
    env.set("_CONDOR_JOB_AD".into(), file(super::JOB_AD_FILE));
    env.set("_CONDOR_MACHINE_AD".into(), file(super::MACHINE_AD_FILE));
    env.set("_CONDOR_JOB_IWD".into(), ctx.job_iwd.display().to_string());
    // The job's own pids are not known before it starts.
    env.set("_CONDOR_JOB_PIDS".into(), String::new());
    if let Some(proxy) = ad.eval_str("X509UserProxy").filter(|p| !p.is_empty()) {
        let p = Path::new(&proxy);
        let at = match (ctx.transfer, p.file_name()) {
            (true, Some(base)) => ctx.job_iwd.join(base),
            _ => ctx.job_iwd.join(p),
        };
        env.set("X509_USER_PROXY".into(), at.display().to_string());
    }
    if ctx.cpus > 0 {
        for name in thread_vars {
            if env.get(name).is_none_or(str::is_empty) {
                env.set(name.clone(), ctx.cpus.to_string());
            }
        }
    }
    Ok(env
        .0
        .into_iter()
        .map(|(k, v)| (k, with_scratch(v, &scratch)))
        .collect())
}

/// `value` with SCRATCH_MARK replaced by `scratch`; as it is (no copy, no
/// search) when it does not hold the mark's first byte, as most of a
/// job's variables do not.
fn with_scratch(value: String, scratch: &str) -> String {
    let first = SCRATCH_MARK.as_bytes()[0];
    if value.bytes().any(|b| b == first) && value.contains(SCRATCH_MARK) {
        value.replace(SCRATCH_MARK, scratch)
    } else {
        value
    }
}

/// Variables in insertion order; setting one again replaces its value.
#[derive(Default)]
struct Env(Vec<(String, String)>);

impl Env {
    fn set(&mut self, k: String, v: String) {
        match self.0.iter_mut().find(|(n, _)| *n == k) {
            Some(slot) => slot.1 = v,
            None => self.0.push((k, v)),
        }
    }

    fn get(&self, k: &str) -> Option<&str> {
        self.0.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
    }
}

/// The job's `Environment` (V2: space-separated, quoted words), else its
/// `Env` (V1: `;`-separated).
pub fn job_env(ad: &Rc<ClassAd>) -> Result<Vec<(String, String)>, String> {
    match ad.eval_str("Environment") {
        Some(e) if !e.is_empty() => v2(&e).map_err(|m| format!("Environment: {m}")),
        _ => Ok(ad.eval_str("Env").map(|e| v1(&e)).unwrap_or_default()),
    }
}

/// STARTER_JOB_ENVIRONMENT: V2 in double quotes, else V1.
fn parse_config_env(text: &str) -> Result<Vec<(String, String)>, String> {
    let t = text.trim();
    match t.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(inner) => v2(inner).map_err(|m| format!("STARTER_JOB_ENVIRONMENT: {m}")),
        None => Ok(v1(t)),
    }
}

fn pair(w: &str) -> Option<(String, String)> {
    w.split_once('=')
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .filter(|(a, _)| !a.is_empty())
}

fn v2(text: &str) -> Result<Vec<(String, String)>, String> {
    Ok(split_v2(text, text, "environment")?
        .iter()
        .filter_map(|w| pair(w))
        .collect())
}

fn v1(text: &str) -> Vec<(String, String)> {
    text.split(';').filter_map(|w| pair(w.trim())).collect()
}

#[cfg(test)]
mod scratch_tests {
    use super::*;

    #[test]
    fn the_mark_is_replaced_wherever_it_is_and_nothing_else_changes() {
        let m = SCRATCH_MARK;
        assert_eq!(with_scratch(format!("{m}/a:{m}"), "/s"), "/s/a:/s");
        assert_eq!(
            with_scratch("#not the mark#".into(), "/s"),
            "#not the mark#"
        );
        assert_eq!(with_scratch(String::new(), "/s"), "");
        assert_eq!(with_scratch(m[1..].to_string(), "/s"), &m[1..]);
    }
}
