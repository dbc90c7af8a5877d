//! Submit commands to job attributes: one job ad from the commands visible
//! to one proc, as condor_submit builds it.
//!
//! [`build`] runs condor_submit's steps in its order, each a method of
//! `Build` named after condor_submit's own (`SetUniverse` is
//! `set_universe`, `SetExecutable` is `set_executable`, ...). The steps
//! live by topic: `files.rs` (initial directory, executable, standard
//! streams, user log), `process.rs` (arguments, environment),
//! `resources.rs` (resource requests and the Requirements built from
//! them), `transfer.rs` (file transfer), `policy.rs` (priority, accounting
//! group, signals, hold, the policy expressions, retries) and `timing.rs`
//! (CronTab and deferral).

mod files;
pub use files::skips_file_checks;
mod grid;
mod policy;
mod process;
mod resources;
mod simple;
mod timing;
mod transfer;

use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::classad::ast::{AttrRef, Expr};
use crate::classad::{self, ClassAd, Evaluator, Scope, Value};
use crate::config::reader::Origin;
use crate::vocab::{JobStatus, Universe};

use super::SubmitError;

/// What the builder asks of the submit description.
pub trait Commands {
    /// The expanded value of a command (any case), and where it was set.
    fn command(&mut self, name: &str) -> Result<Option<(String, Origin)>, SubmitError>;
    /// The `+Attr` / `MY.Attr` assignments, expanded, in file order
    /// (`None` value: `-Attr` deletes).
    fn raw_attrs(&mut self) -> Result<Vec<(String, Option<String>, Origin)>, SubmitError>;
    /// Names of every command defined, for `request_<tag>`.
    fn names(&self) -> Vec<String>;
    /// Where the queue statement is (for errors with no command of their own).
    fn queue_origin(&self) -> Origin;
}

/// Facts about the submission that do not come from the file.
pub struct JobContext<'a> {
    pub cluster: i64,
    pub proc_id: i64,
    pub qdate: i64,
    pub owner: &'a str,
    pub uid_domain: &'a str,
    pub cwd: &'a Path,
    pub arch: &'a str,
    pub opsys: &'a str,
    pub filesystem_domain: &'a str,
    pub schedd_interval: i64,
    pub append_requirements: Option<String>,
    pub append_req_vanilla: Option<String>,
    /// SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES, the site's default for
    /// `should_transfer_files`.
    pub default_should_transfer: Option<&'a str>,
    pub environ: &'a [(String, String)],
    pub version: &'a str,
}

/// The commands of CronTab and deferral: they decide whether the job is
/// timed, and a timed job's Requirements.
const CRON_CMDS: [&str; 10] = [
    "cron_minute",
    "cron_hour",
    "cron_day_of_month",
    "cron_month",
    "cron_day_of_week",
    "cron_window",
    "cron_prep_time",
    "deferral_time",
    "deferral_window",
    "deferral_prep_time",
];

/// The GPU property commands read with `request_gpus`.
const GPU_CMDS: [&str; 5] = [
    "require_gpus",
    "gpus_minimum_capability",
    "gpus_maximum_capability",
    "gpus_minimum_memory",
    "gpus_minimum_runtime",
];

fn err(origin: &Origin, msg: impl Into<String>) -> SubmitError {
    SubmitError::At {
        origin: origin.clone(),
        msg: msg.into(),
    }
}

fn parse_rhs(name: &str, text: &str, origin: &Origin) -> Result<Expr, SubmitError> {
    classad::parser::parse_expr_old(text).map_err(|_| {
        err(
            origin,
            format!("Parse error in expression: \n\t{name} = {text}\n\t"),
        )
    })
}

fn string(s: &str) -> Expr {
    Expr::Lit(Value::Str(Rc::from(s)))
}

fn int(i: i64) -> Expr {
    Expr::int(i)
}

fn real(r: f64) -> Expr {
    Expr::Lit(Value::Real(r))
}

fn boolean(b: bool) -> Expr {
    Expr::Lit(Value::Bool(b))
}

fn eval_const(e: &Expr) -> Value {
    Evaluator::new().eval(e, &Scope::empty())
}

/// One job ad being built, and what its steps tell the steps after them.
struct Build<'a> {
    c: &'a mut dyn Commands,
    ctx: &'a JobContext<'a>,
    /// Only the attributes of these commands (see [`build`]).
    only: Option<&'a [String]>,
    /// The cluster ad, under a proc built with `only`.
    base: Option<&'a ClassAd>,
    /// Where the queue statement is.
    q: Origin,
    ad: ClassAd,
    /// From `set_universe`.
    universe: Universe,
    /// From `set_iwd`.
    iwd: PathBuf,
    /// The `request_<tag>` requests beyond cpus, memory and disk, from
    /// `set_request_resources`, as (Tag, expression).
    custom: Vec<(String, Expr)>,
    /// ShouldTransferFiles, from `set_transfer_files`.
    should: String,
    /// Whether CronTab or deferral commands make this a timed job, and the
    /// first of them (from `set_cron_tab` and `set_job_deferral`).
    timed: bool,
    timed_origin: Option<Origin>,
}

/// Builds the job ad for one proc.
///
/// With `only`, just the attributes that come from those commands (and the
/// Requirements when anything it depends on is among them) are built, on top
/// of `base`, the cluster ad: this is how procs after the first are made
/// when only a few commands depend on per-proc variables.
pub fn build(
    c: &mut dyn Commands,
    ctx: &JobContext,
    only: Option<&[String]>,
    base: Option<&ClassAd>,
) -> Result<ClassAd, SubmitError> {
    let q = c.queue_origin();
    let mut b = Build {
        c,
        ctx,
        only,
        base,
        q,
        ad: ClassAd::new(),
        universe: Universe::Vanilla,
        iwd: PathBuf::new(),
        custom: Vec::new(),
        should: String::new(),
        timed: false,
        timed_origin: None,
    };
    b.set_universe()?;
    b.refuse_unsupported()?;
    b.init_job_ad();
    b.set_iwd()?;
    b.set_executable()?;
    b.set_image_size()?;
    b.set_std_files()?;
    b.set_user_log()?;
    b.set_arguments()?;
    b.set_environment()?;
    b.set_grid_params()?;
    b.set_request_resources()?;
    b.set_transfer_files()?;
    b.set_disk_usage()?;
    b.set_priority()?;
    b.set_accounting_group()?;
    b.set_kill_sig()?;
    b.set_hold()?;
    b.set_policy_exprs()?;
    b.set_descriptions()?;
    b.set_simple_commands()?;
    b.set_concurrency_limits()?;
    b.set_notification()?;
    b.set_job_retries()?;
    b.set_cron_tab()?;
    b.set_job_deferral()?;
    b.set_requirements()?;
    b.set_forced_attributes()?;
    Ok(b.ad)
}

impl Build<'_> {
    /// The value of command `cmd` when the file gives it a non-empty one
    /// (condor_submit takes an empty value for none).
    fn given(&mut self, cmd: &str) -> Result<Option<(String, Origin)>, SubmitError> {
        Ok(self.c.command(cmd)?.filter(|(v, _)| !v.is_empty()))
    }

    /// Whether any of `cmds` is to be built.
    fn want(&self, cmds: &[&str]) -> bool {
        self.only
            .is_none_or(|o| cmds.iter().any(|c| o.iter().any(|x| x == c)))
    }

    /// Whether any command starting with `p` is to be built.
    fn want_prefix(&self, p: &str) -> bool {
        self.only.is_none_or(|o| o.iter().any(|c| c.starts_with(p)))
    }

    /// Whether the resource requests and Requirements are to be built.
    fn want_requirements(&self) -> bool {
        self.want(&["requirements", "universe"])
            || self.want(&GPU_CMDS)
            || self.want(transfer::REQUIREMENT_CMDS)
            || self.want_prefix("request_")
            || self.want(&CRON_CMDS)
            || self.want(&["cuda_version"])
    }

    /// An attribute built here, or else the cluster's.
    fn lookup(&self, n: &str) -> Option<&Expr> {
        self.ad.get(n).or_else(|| self.base.and_then(|b| b.get(n)))
    }

    /// SetUniverse: JobUniverse, refusing the universes tern cannot run
    /// with condor_submit's messages (or tern's, where tern differs).
    fn set_universe(&mut self) -> Result<(), SubmitError> {
        let Some((u, o)) = self.c.command("universe")? else {
            self.universe = Universe::Vanilla;
            return Ok(());
        };
        let lower = u.to_ascii_lowercase();
        let named = Universe::from_submit(&lower);
        let by_name = lower.parse::<i64>().is_err();
        self.universe = match named {
            Some(
                v @ (Universe::Vanilla | Universe::Scheduler | Universe::Local | Universe::Grid),
            ) => v,
            Some(Universe::Standard) => {
                return Err(err(&o, "'Standard' is not a supported universe."));
            }
            Some(Universe::Java | Universe::Parallel | Universe::Vm) if by_name => {
                return Err(unsupported(&o, &u));
            }
            None if matches!(lower.as_str(), "docker" | "container") => {
                return Err(unsupported(&o, &u));
            }
            _ => return Err(err(&o, format!("I don't know about the '{u}' universe."))),
        };
        Ok(())
    }

    /// The attributes every job starts with: its identity, status and
    /// zeroed counters (condor_submit's base job ad).
    fn init_job_ad(&mut self) {
        if self.only.is_some() {
            return;
        }
        let ctx = self.ctx;
        let ad = &mut self.ad;
        for (n, v) in [
            ("ClusterId", ctx.cluster),
            ("ProcId", ctx.proc_id),
            ("QDate", ctx.qdate),
            ("EnteredCurrentStatus", ctx.qdate),
            ("JobStatus", JobStatus::Idle.code()),
            ("JobUniverse", self.universe.code()),
            ("JobPrio", 0),
            ("JobNotification", 0),
            ("MinHosts", 1),
            ("MaxHosts", 1),
            ("CurrentHosts", 0),
            ("JobSubmitMethod", 0),
        ] {
            ad.insert(n, int(v));
        }
        for n in [
            "NumCkpts",
            "NumJobStarts",
            "NumJobCompletions",
            "NumRestarts",
            "NumSystemHolds",
            "CommittedTime",
            "CommittedSlotTime",
            "CumulativeSlotTime",
            "CommittedSuspensionTime",
            "CumulativeSuspensionTime",
            "TotalSuspensions",
            "LastSuspensionTime",
            "ExitStatus",
        ] {
            ad.insert(n, int(0));
        }
        for n in [
            "RemoteWallClockTime",
            "RemoteUserCpu",
            "RemoteSysCpu",
            "CumulativeRemoteUserCpu",
            "CumulativeRemoteSysCpu",
        ] {
            ad.insert(n, real(0.0));
        }
        ad.insert("ExitBySignal", boolean(false));
        ad.insert("LeaveJobInQueue", boolean(false));
        ad.insert("MyType", string("Job"));
        ad.insert("TargetType", string("Machine"));
        ad.insert("Owner", string(ctx.owner));
        ad.insert("User", string(&format!("{}@{}", ctx.owner, ctx.uid_domain)));
        ad.insert(
            "CondorVersion",
            string(&format!("$CondorVersion: {} $", ctx.version)),
        );
        ad.insert(
            "CondorPlatform",
            string(&format!("$CondorPlatform: {}-{} $", ctx.arch, ctx.opsys)),
        );
        ad.insert("Rank", real(0.0));
        // A grid job has no lease with a shadow; condor_submit gives it the
        // KillSig of a job that runs beside the schedd.
        if !self.universe.runs_on_submit_host() && self.universe != Universe::Grid {
            ad.insert("JobLeaseDuration", int(2400));
        } else {
            ad.insert("KillSig", string("SIGTERM"));
        }
    }

    /// SetForcedAttributes: `+Attr` and `MY.Attr` override anything
    /// generated, except the attributes the queue keeps itself, which are
    /// ignored without a word ([`crate::vocab::job_attrs::ignored_at_submit`]).
    fn set_forced_attributes(&mut self) -> Result<(), SubmitError> {
        for (name, value, o) in self.c.raw_attrs()? {
            if crate::vocab::job_attrs::ignored_at_submit(&name) {
                continue;
            }
            match value {
                // `-Attr` leaves the attribute undefined, as condor_submit does.
                None => self.ad.insert(&name, Expr::Lit(Value::Undefined)),
                Some(v) if v.trim().is_empty() => {
                    self.ad.insert(&name, Expr::Lit(Value::Undefined))
                }
                Some(v) => {
                    let e = parse_rhs(&name, v.trim(), &o)?;
                    self.ad.insert(&name, e);
                }
            }
        }
        Ok(())
    }
}

fn unsupported(o: &Origin, u: &str) -> SubmitError {
    err(
        o,
        format!("tern runs vanilla, local and scheduler universe jobs; '{u}' is not supported"),
    )
}

/// Attribute names the expression reads from the machine: unscoped names
/// and `TARGET.`/`OTHER.` ones.
fn machine_refs(e: &Expr) -> Vec<String> {
    let mut out = Vec::new();
    e.walk_attrs(&mut |a: &AttrRef| match &a.base {
        None => out.push(a.name.as_str().to_string()),
        Some(Expr::Attr(b)) if b.base.is_none() => {
            let s = b.name.key();
            if s == "target" || s == "other" {
                out.push(a.name.as_str().to_string());
            }
        }
        _ => {}
    });
    out
}

/// `true`/`false` (any case) or a ClassAd expression that evaluates to a
/// boolean or number.
pub fn bool_value(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "t" | "yes" | "y" | "1" => Some(true),
        "false" | "f" | "no" | "n" | "0" => Some(false),
        _ => match classad::parse_expr(v).ok().map(|e| eval_const(&e)) {
            Some(Value::Bool(b)) => Some(b),
            Some(Value::Int(i)) => Some(i != 0),
            _ => None,
        },
    }
}

fn absolute(base: &Path, p: &str) -> PathBuf {
    let p = Path::new(p);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

#[cfg(test)]
mod tests {
    use crate::vocab::signal_name;

    // The signal table moved to vocab; submit still takes what it took.
    #[test]
    fn signals() {
        assert_eq!(signal_name("9"), Some("SIGKILL"));
        assert_eq!(signal_name("SIGTERM"), Some("SIGTERM"));
        assert_eq!(signal_name("TERM"), None);
    }
}
