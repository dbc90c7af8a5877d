//! The configuration of the daemon ClassAd hooks: `<P>_JOBLIST` and every
//! `<P>_<J>_*` knob, checked. A knob tern cannot honour is refused with
//! its name, never silently ignored.

use std::path::PathBuf;
use std::time::Duration;

use super::{CronError, Family};
use crate::classad::Expr;
use crate::config::Config;

/// When a job runs (`<P>_<J>_MODE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every period from the start of the previous run.
    Periodic,
    /// The period after the previous run exited; its output streams in.
    WaitForExit,
    /// Once per configuration (and on `tern_negotiate -reconfig` with
    /// `_RECONFIG_RERUN`).
    OneShot,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Periodic => "Periodic",
            Mode::WaitForExit => "WaitForExit",
            Mode::OneShot => "OneShot",
        }
    }
}

/// One configured cron job.
#[derive(Clone, Debug)]
pub struct Job {
    pub family: Family,
    pub name: String,
    pub executable: PathBuf,
    pub args: Vec<String>,
    /// `_ENV` entries, added to the runner's environment.
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    pub mode: Mode,
    /// Seconds; 0 for a OneShot job without a period.
    pub period: i64,
    pub prefix: String,
    pub kill: bool,
    pub reconfig: bool,
    pub reconfig_rerun: bool,
    pub job_load: f64,
    /// `_SLOTS`: the SlotIDs the output may merge into (empty: all).
    pub slots: Vec<i64>,
    pub condition: Option<Expr>,
    /// `_TIMEOUT` (tern's): how long one run may take.
    pub timeout: Duration,
    /// Every knob of the job as written: a change makes it a new job
    /// (a OneShot job runs again).
    pub signature: String,
}

/// One family's configuration: its jobs, and the knobs shared by them.
#[derive(Clone, Debug)]
pub struct Jobs {
    pub jobs: Vec<Job>,
    /// Jobs whose knobs are wrong: (name, the error), shown where the
    /// job's status is.
    pub broken: Vec<(String, String)>,
    pub max_load: f64,
    pub log_non_zero: bool,
    pub config_val: String,
}

/// A run without `_TIMEOUT` that is not WaitForExit may take this long.
pub const DEFAULT_TIMEOUT: i64 = 300;

/// Ten years: WaitForExit jobs run until they exit or are killed.
const FOREVER: Duration = Duration::from_secs(10 * 365 * 86400);

fn bad(knob: String, value: &str, msg: impl Into<String>) -> CronError {
    CronError::Knob {
        knob,
        value: value.to_string(),
        msg: msg.into(),
    }
}

/// A period: digits with an optional `s`, `m` or `h`; at least 1 s.
pub fn parse_period(knob: &str, v: &str) -> Result<i64, CronError> {
    let v = v.trim();
    let (digits, mult) = match v.char_indices().last() {
        Some((i, 's' | 'S')) => (&v[..i], 1),
        Some((i, 'm' | 'M')) => (&v[..i], 60),
        Some((i, 'h' | 'H')) => (&v[..i], 3600),
        _ => (v, 1),
    };
    let n: i64 = digits.trim().parse().map_err(|_| {
        bad(
            knob.to_string(),
            v,
            "not a period (a whole number with an optional s, m or h suffix)",
        )
    })?;
    if n * mult < 1 {
        return Err(bad(knob.to_string(), v, "the least period is 1 s"));
    }
    Ok(n * mult)
}

/// Reads `<P>_JOBLIST` and every listed job. A job whose knobs are wrong
/// is left out and listed in `broken` with the error; the others run.
pub fn family(cfg: &Config, fam: Family) -> Result<Jobs, CronError> {
    let p = fam.prefix();
    let names = cfg.list_value(&format!("{p}_JOBLIST"))?;
    let max_knob = format!("{p}_MAX_JOB_LOAD");
    let max_load = match cfg.get(&max_knob)? {
        None => 0.1,
        Some(v) => match v.parse::<f64>() {
            Ok(x) if x > 0.0 => x,
            _ => return Err(bad(max_knob, &v, "not a positive number")),
        },
    };
    if fam == Family::Startd
        && let Some(v) = cfg.get("STARTD_CRON_AUTOPUBLISH")?
    {
        // The collector updates it chooses between do not exist here:
        // every pass reads the newest results. Only its default makes sense.
        if !v.eq_ignore_ascii_case("never") {
            return Err(bad(
                "STARTD_CRON_AUTOPUBLISH".into(),
                &v,
                "tern has no collector to publish to: every pass and tern_status read \
                 the newest hook output; leave it unset (Never)",
            ));
        }
    }
    let log_non_zero = cfg.get_bool(&format!("{p}_LOG_NON_ZERO_EXIT"), false)?;
    let config_val = match cfg.get(&format!("{p}_CONFIG_VAL"))? {
        Some(v) => v,
        // The installed one in a set-id process, else the tern_config_val
        // beside the running tool (tern_cron).
        None => match crate::sys::privilege::helper("tern_config_val") {
            Some(p) => p.display().to_string(),
            None => std::env::current_exe()
                .ok()
                .and_then(|e| Some(e.parent()?.join("tern_config_val")))
                .filter(|p| p.exists())
                .map_or_else(|| "tern_config_val".into(), |p| p.display().to_string()),
        },
    };
    let mut jobs: Vec<Job> = Vec::new();
    let mut broken = Vec::new();
    for name in names {
        if jobs.iter().any(|j| j.name.eq_ignore_ascii_case(&name)) {
            continue;
        }
        match job(cfg, fam, &name, max_load) {
            Ok(j) => jobs.push(j),
            Err(e) => broken.push((name, e.to_string())),
        }
    }
    Ok(Jobs {
        jobs,
        broken,
        max_load,
        log_non_zero,
        config_val,
    })
}

fn job(cfg: &Config, fam: Family, name: &str, max_load: f64) -> Result<Job, CronError> {
    let p = fam.prefix();
    let knob = |s: &str| format!("{p}_{name}_{s}");
    let get = |s: &str| cfg.get(&knob(s));
    let mut signature = String::new();
    for s in [
        "EXECUTABLE",
        "ARGS",
        "ENV",
        "CWD",
        "MODE",
        "PERIOD",
        "PREFIX",
        "KILL",
        "RECONFIG",
        "RECONFIG_RERUN",
        "JOB_LOAD",
        "SLOTS",
        "CONDITION",
        "TIMEOUT",
    ] {
        signature.push_str(&format!("{s}={}\n", get(s)?.unwrap_or_default()));
    }
    if !valid_name(name) {
        return Err(bad(
            format!("{p}_JOBLIST"),
            name,
            "a job name is letters, digits and _",
        ));
    }
    let executable = get("EXECUTABLE")?
        .ok_or_else(|| bad(knob("EXECUTABLE"), "", "required: the program to run"))?;
    let mode = match get("MODE")? {
        None => Mode::Periodic,
        Some(m) => match m.to_ascii_lowercase().as_str() {
            "periodic" => Mode::Periodic,
            "waitforexit" => Mode::WaitForExit,
            "oneshot" => Mode::OneShot,
            "ondemand" => {
                return Err(bad(
                    knob("MODE"),
                    &m,
                    "OnDemand is for BENCHMARKS jobs only; use Periodic, WaitForExit or OneShot",
                ));
            }
            _ => {
                return Err(bad(
                    knob("MODE"),
                    &m,
                    "not a mode (Periodic, WaitForExit or OneShot)",
                ));
            }
        },
    };
    let period = match get("PERIOD")? {
        Some(v) => parse_period(&knob("PERIOD"), &v)?,
        None if mode == Mode::OneShot => 0,
        None => {
            return Err(bad(
                knob("PERIOD"),
                "",
                format!("required in {} mode", mode.as_str()),
            ));
        }
    };
    let prefix = get("PREFIX")?.unwrap_or_default();
    if !prefix
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(bad(
            knob("PREFIX"),
            &prefix,
            "a prefix is letters, digits and _",
        ));
    }
    let args = match get("ARGS")? {
        None => Vec::new(),
        // HTCondor's V1 raw form (split at white space) or a V2 string in
        // double quotes.
        Some(a) => match a.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
            Some(body) => crate::submit::args::split_v2(body, &a, "arguments")
                .map_err(|e| bad(knob("ARGS"), &a, e))?,
            None => a.split_whitespace().map(String::from).collect(),
        },
    };
    let env = match get("ENV")? {
        None => Vec::new(),
        Some(e) => {
            crate::submit::args::environment_pairs(&e).map_err(|m| bad(knob("ENV"), &e, m))?
        }
    };
    let flag = |s: &str| cfg.get_bool(&knob(s), false);
    let kill = flag("KILL")?;
    if kill && mode == Mode::WaitForExit {
        return Err(bad(
            knob("KILL"),
            "true",
            "KILL is for Periodic and OneShot jobs: a WaitForExit job is never due while it runs",
        ));
    }
    let job_load = match get("JOB_LOAD")? {
        None => 0.01,
        Some(v) => match v.parse::<f64>() {
            Ok(x) if (0.0..=100.0).contains(&x) => x,
            _ => return Err(bad(knob("JOB_LOAD"), &v, "not a number from 0 to 100")),
        },
    };
    if job_load > max_load {
        return Err(bad(
            knob("JOB_LOAD"),
            &job_load.to_string(),
            format!("more than {p}_MAX_JOB_LOAD ({max_load}): the job could never start"),
        ));
    }
    let mut slots = Vec::new();
    if let Some(v) = get("SLOTS")? {
        if fam == Family::Schedd {
            return Err(bad(
                knob("SLOTS"),
                &v,
                "only startd cron jobs merge into slots",
            ));
        }
        for s in v.split([',', ' ']).filter(|s| !s.is_empty()) {
            slots.push(
                s.parse::<i64>()
                    .map_err(|_| bad(knob("SLOTS"), &v, format!("'{s}' is not a slot number")))?,
            );
        }
    }
    if let Some(v) = get("METRICS")? {
        return Err(bad(
            knob("METRICS"),
            &v,
            "resource usage metrics (SUM/PEAK) are not supported by tern",
        ));
    }
    let condition = match get("CONDITION")? {
        None => None,
        Some(c) => Some(crate::classad::parser::parse_expr_old(&c).map_err(|e| {
            bad(
                knob("CONDITION"),
                &c,
                format!("not a ClassAd expression ({e})"),
            )
        })?),
    };
    let timeout = match get("TIMEOUT")? {
        Some(v) => Duration::from_secs(parse_period(&knob("TIMEOUT"), &v)? as u64),
        None if mode == Mode::WaitForExit => FOREVER,
        None => Duration::from_secs(DEFAULT_TIMEOUT as u64),
    };
    Ok(Job {
        family: fam,
        name: name.to_string(),
        executable: PathBuf::from(executable),
        args,
        env,
        cwd: get("CWD")?.map(PathBuf::from),
        mode,
        period,
        prefix,
        kill,
        reconfig: flag("RECONFIG")?,
        reconfig_rerun: flag("RECONFIG_RERUN")?,
        job_load,
        slots,
        condition,
        timeout,
        signature,
    })
}

fn valid_name(n: &str) -> bool {
    !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(text: &str) -> Config {
        let mut c = Config::defaults();
        c.parse_str(text, "test").unwrap();
        c
    }

    #[test]
    fn periods_take_suffixes_and_refuse_zero() {
        assert_eq!(parse_period("K", "90").unwrap(), 90);
        assert_eq!(parse_period("K", "2m").unwrap(), 120);
        assert_eq!(parse_period("K", "1h").unwrap(), 3600);
        assert!(parse_period("K", "0s").is_err());
        assert!(
            parse_period("K", "soon")
                .unwrap_err()
                .to_string()
                .contains("K = soon")
        );
    }

    #[test]
    fn a_job_and_its_knobs() {
        let c = cfg("STARTD_CRON_JOBLIST = gpu, bad, od\n\
             STARTD_CRON_gpu_EXECUTABLE = /bin/gpu\n\
             STARTD_CRON_gpu_PERIOD = 5m\n\
             STARTD_CRON_gpu_ARGS = \"-a 'b c'\"\n\
             STARTD_CRON_gpu_ENV = \"A=1 B=2\"\n\
             STARTD_CRON_gpu_PREFIX = Gpu_\n\
             STARTD_CRON_gpu_SLOTS = 1, 3\n\
             STARTD_CRON_bad_EXECUTABLE = /bin/x\n\
             STARTD_CRON_od_EXECUTABLE = /bin/x\n\
             STARTD_CRON_od_MODE = OnDemand\n");
        let f = family(&c, Family::Startd).unwrap();
        assert_eq!(f.jobs.len(), 1);
        let j = &f.jobs[0];
        assert_eq!(j.period, 300);
        assert_eq!(j.args, vec!["-a", "b c"]);
        assert_eq!(j.env.len(), 2);
        assert_eq!(j.slots, vec![1, 3]);
        assert_eq!(j.prefix, "Gpu_");
        assert!(
            f.broken[0].1.contains("STARTD_CRON_bad_PERIOD"),
            "{:?}",
            f.broken
        );
        assert!(
            f.broken[1].1.contains("OnDemand is for BENCHMARKS"),
            "{:?}",
            f.broken
        );
    }

    #[test]
    fn autopublish_other_than_never_is_refused() {
        let c = cfg("STARTD_CRON_AUTOPUBLISH = If_Changed\n");
        let e = family(&c, Family::Startd).unwrap_err().to_string();
        assert!(e.contains("STARTD_CRON_AUTOPUBLISH = If_Changed"), "{e}");
    }
}
