//! Submit commands to job attributes: one job ad from the commands visible
//! to one proc, as condor_submit builds it.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::classad::ast::{AttrRef, Expr};
use crate::classad::{self, ClassAd, Evaluator, Scope, Value};
use crate::config::reader::Origin;

use super::SubmitError;
use super::args;
use super::units::{self, Base, Size};

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
    pub environ: &'a [(String, String)],
    pub version: &'a str,
}

pub const UNIVERSE_VANILLA: i64 = 5;
pub const UNIVERSE_SCHEDULER: i64 = 7;
pub const UNIVERSE_LOCAL: i64 = 12;

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

fn eval_const(e: &Expr) -> Value {
    Evaluator::new().eval(e, &Scope::empty())
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
    let mut ad = ClassAd::new();
    let want = |cmds: &[&str]| only.is_none_or(|o| cmds.iter().any(|c| o.iter().any(|x| x == c)));
    let want_prefix = |p: &str| only.is_none_or(|o| o.iter().any(|c| c.starts_with(p)));
    // An attribute built here, or else the cluster's.
    fn lookup<'a>(ad: &'a ClassAd, base: Option<&'a ClassAd>, n: &str) -> Option<&'a Expr> {
        ad.get(n).or_else(|| base.and_then(|b| b.get(n)))
    }
    let q = c.queue_origin();
    let int = |i: i64| Expr::int(i);
    let real = |r: f64| Expr::Lit(Value::Real(r));
    let boolean = |b: bool| Expr::Lit(Value::Bool(b));

    // Universe.
    let universe = match c.command("universe")? {
        None => UNIVERSE_VANILLA,
        Some((u, o)) => match u.to_ascii_lowercase().as_str() {
            "vanilla" | "5" => UNIVERSE_VANILLA,
            "scheduler" | "7" => UNIVERSE_SCHEDULER,
            "local" | "12" => UNIVERSE_LOCAL,
            "grid" | "9" => {
                return Err(err(
                    &o,
                    "the grid universe needs the job router, which tern does not have yet",
                ));
            }
            "standard" | "1" => return Err(err(&o, "'Standard' is not a supported universe.")),
            "docker" | "container" | "java" | "parallel" | "vm" => {
                return Err(err(
                    &o,
                    format!(
                        "tern runs vanilla, local and scheduler universe jobs; '{u}' is not supported"
                    ),
                ));
            }
            _ => return Err(err(&o, format!("I don't know about the '{u}' universe."))),
        },
    };
    let local_like = universe != UNIVERSE_VANILLA;

    // Identity and fixed counters.
    if only.is_none() {
        for (n, v) in [
            ("ClusterId", ctx.cluster),
            ("ProcId", ctx.proc_id),
            ("QDate", ctx.qdate),
            ("EnteredCurrentStatus", ctx.qdate),
            ("JobStatus", 1),
            ("JobUniverse", universe),
            ("JobPrio", 0),
            ("JobNotification", 0),
            ("MinHosts", 1),
            ("MaxHosts", 1),
            ("CurrentHosts", 0),
            ("JobSubmitMethod", 0),
            ("TransferInputSizeMB", 0),
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
        if !local_like {
            ad.insert("JobLeaseDuration", int(2400));
        } else {
            ad.insert("KillSig", string("SIGTERM"));
        }
    }

    // Iwd, executable and standard streams.
    let iwd_cmds = [
        "initialdir",
        "initial_dir",
        "executable",
        "transfer_executable",
    ];
    let iwd: PathBuf = if !want(&iwd_cmds) && !want(&["log"]) {
        match lookup(&ad, base, "Iwd")
            .and_then(|e| e.literal_value())
            .and_then(|v| v.as_str())
        {
            Some(s) => PathBuf::from(s),
            None => ctx.cwd.to_path_buf(),
        }
    } else {
        match c.command("initialdir")?.or(c.command("initial_dir")?) {
            Some((d, o)) => {
                let p = absolute(ctx.cwd, &d);
                if !p.is_dir() {
                    return Err(err(&o, format!("No such directory: {}", p.display())));
                }
                p
            }
            None => ctx.cwd.to_path_buf(),
        }
    };
    if want(&iwd_cmds) {
        ad.insert("Iwd", string(&iwd.display().to_string()));
        let Some((exe, exe_o)) = c.command("executable")? else {
            return Err(err(&q, "No 'executable' parameter was provided"));
        };
        let exe_path = absolute(&iwd, &exe);
        let size_kib = match std::fs::metadata(&exe_path) {
            Ok(m) => m.len().div_ceil(1024) as i64,
            Err(e) => {
                let transfer = c
                    .command("transfer_executable")?
                    .and_then(|(v, _)| bool_value(&v));
                if transfer == Some(false) {
                    0
                } else {
                    return Err(err(
                        &exe_o,
                        format!("executable {} cannot be read: {e}", exe_path.display()),
                    ));
                }
            }
        };
        ad.insert("Cmd", string(&exe_path.display().to_string()));
        for n in ["ImageSize", "ExecutableSize", "DiskUsage"] {
            ad.insert(n, int(size_kib));
        }
    }
    for (cmds, attr, transfer, stream, stream_cmds) in [
        (
            &["input", "stdin"][..],
            "In",
            "TransferIn",
            "StreamIn",
            &["stream_input"][..],
        ),
        (
            &["output", "stdout"][..],
            "Out",
            "TransferOut",
            "StreamOut",
            &["stream_output"][..],
        ),
        (
            &["error", "stderr"][..],
            "Err",
            "TransferErr",
            "StreamErr",
            &["stream_error"][..],
        ),
    ] {
        if !want(cmds) && !want(stream_cmds) {
            continue;
        }
        let mut given = None;
        for n in cmds {
            if let Some(v) = c.command(n)? {
                given = Some(v);
                break;
            }
        }
        match given {
            Some((v, _)) if !v.is_empty() => {
                ad.insert(attr, string(&v));
                let s = match c.command(stream_cmds[0])? {
                    Some((b, o)) => bool_value(&b).ok_or_else(|| {
                        err(
                            &o,
                            format!("{}={b} is invalid, must eval to a boolean.", stream_cmds[0]),
                        )
                    })?,
                    None => false,
                };
                ad.insert(stream, boolean(s));
            }
            _ => {
                ad.insert(attr, string("/dev/null"));
                ad.insert(transfer, boolean(false));
            }
        }
    }
    if want(&["log", "initialdir", "initial_dir"])
        && let Some((log, _)) = c.command("log")?
        && !log.is_empty()
    {
        ad.insert(
            "UserLog",
            string(&absolute(&iwd, &log).display().to_string()),
        );
    }

    // Arguments and environment.
    if want(&["arguments", "args"]) {
        let mut saw_args = false;
        for n in ["arguments", "args"] {
            if let Some((v, o)) = c.command(n)? {
                let (attr, val) = args::arguments(&v).map_err(|m| err(&o, m))?;
                ad.insert(attr, string(&val));
                saw_args = true;
                break;
            }
        }
        if !saw_args {
            ad.insert("Arguments", string(""));
        }
    }
    if want(&["environment", "env", "getenv"]) {
        let mut env_pairs: Vec<(String, String)> = Vec::new();
        let mut legacy_env = false;
        if let Some((v, o)) = c.command("environment")? {
            env_pairs = args::environment_pairs(&v).map_err(|m| err(&o, m))?;
        } else if let Some((v, o)) = c.command("env")? {
            env_pairs = args::environment_pairs(&v).map_err(|m| err(&o, m))?;
            legacy_env = true;
        }
        if let Some((g, _)) = c.command("getenv")? {
            let names: Option<Vec<String>> = match bool_value(&g) {
                Some(true) => None,
                Some(false) => Some(Vec::new()),
                None => Some(
                    g.split([',', ' '])
                        .filter(|s| !s.is_empty())
                        .map(String::from)
                        .collect(),
                ),
            };
            for (k, v) in ctx.environ {
                let wanted = names.as_ref().is_none_or(|l| l.iter().any(|n| n == k));
                if wanted && !env_pairs.iter().any(|(n, _)| n == k) {
                    args::merge_pair(&mut env_pairs, k.clone(), v.clone());
                }
            }
        }
        if legacy_env {
            ad.insert("Env", string(&args::environment_v1(&env_pairs)));
            ad.insert("EnvDelim", string(";"));
        } else {
            ad.insert("Environment", string(&args::environment_v2(&env_pairs)));
        }
    }

    // Resource requests (also needed whenever Requirements is rebuilt).
    let cron_cmds = [
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
    let want_req = want(&["requirements", "universe", "should_transfer_files"])
        || want_prefix("request_")
        || want(&cron_cmds);
    let mut custom: Vec<(String, Expr)> = Vec::new();
    if want_req {
        let mut request =
            |name: &str, attr: &str, base: Option<Base>| -> Result<Option<Expr>, SubmitError> {
                let Some((v, o)) = c.command(name)? else {
                    return Ok(None);
                };
                if let Some(b) = base {
                    match units::parse_size(&v, b).map_err(|m| err(&o, m))? {
                        Size::Int(i) => return Ok(Some(int(i))),
                        Size::Expr => {}
                    }
                }
                Ok(Some(parse_rhs(attr, &v, &o)?))
            };
        let req_cpus = request("request_cpus", "RequestCpus", None)?;
        let req_mem = request("request_memory", "RequestMemory", Some(Base::MiB))?;
        let req_disk = request("request_disk", "RequestDisk", Some(Base::KiB))?;
        ad.insert("RequestCpus", req_cpus.unwrap_or_else(|| int(1)));
        ad.insert(
            "RequestDisk",
            req_disk.unwrap_or_else(|| Expr::attr("DiskUsage")),
        );
        ad.insert(
            "RequestMemory",
            req_mem.unwrap_or_else(|| {
                classad::parse_expr(
                    "ifthenelse(MemoryUsage isnt undefined,MemoryUsage,(ImageSize + 1023) / 1024)",
                )
                .expect("default RequestMemory parses")
            }),
        );
        let mut names = c.names();
        names.sort_by_key(|n| n.to_ascii_lowercase());
        for n in names {
            let lower = n.to_ascii_lowercase();
            let Some(tag) = lower.strip_prefix("request_") else {
                continue;
            };
            if matches!(tag, "cpus" | "memory" | "disk") || tag.len() < 2 {
                continue;
            }
            let Some((v, o)) = c.command(&n)? else {
                continue;
            };
            let tag_spelled = if tag == "gpus" {
                "GPUs".to_string()
            } else {
                n["request_".len()..].to_string()
            };
            let attr = format!("Request{tag_spelled}");
            let e = parse_rhs(&attr, &v, &o)?;
            ad.insert(&attr, e.clone());
            custom.push((tag_spelled, e));
        }
    }

    // Transfer settings.
    let should = match c.command("should_transfer_files")? {
        None => "IF_NEEDED".to_string(),
        Some((v, o)) => match v.to_ascii_uppercase().as_str() {
            "YES" | "TRUE" => "YES".into(),
            "NO" | "FALSE" => "NO".into(),
            "IF_NEEDED" => "IF_NEEDED".into(),
            _ => {
                return Err(err(
                    &o,
                    format!(
                        "ERROR: invalid value ({v}) for ShouldTransferFiles. Please either specify YES, NO, or IF_NEEDED and try again."
                    ),
                ));
            }
        },
    };
    if want(&[
        "should_transfer_files",
        "when_to_transfer_output",
        "transfer_input_files",
        "transfer_output_files",
        "transfer_executable",
    ]) {
        ad.insert("ShouldTransferFiles", string(&should));
        let when = match c.command("when_to_transfer_output")? {
            None => "ON_EXIT".to_string(),
            Some((v, o)) => match v.to_ascii_uppercase().as_str() {
                "ON_EXIT" => "ON_EXIT".into(),
                "ON_EXIT_OR_EVICT" => "ON_EXIT_OR_EVICT".into(),
                _ => {
                    return Err(err(
                        &o,
                        format!(
                            "when_to_transfer_output must be ON_EXIT or ON_EXIT_OR_EVICT, not '{v}'"
                        ),
                    ));
                }
            },
        };
        if should == "IF_NEEDED" && when == "ON_EXIT_OR_EVICT" {
            let o = c
                .command("when_to_transfer_output")?
                .map(|(_, o)| o)
                .unwrap_or_else(|| q.clone());
            return Err(err(
                &o,
                "\"when_to_transfer_output = ON_EXIT_OR_EVICT\" and \"should_transfer_files = IF_NEEDED\" \
                 are incompatible; use should_transfer_files = YES",
            ));
        }
        if should != "NO" {
            ad.insert("WhenToTransferOutput", string(&when));
        }
        if should != "YES" {
            ad.insert("FileSystemDomain", string(ctx.filesystem_domain));
        }
        for (cmd, attr) in [
            ("transfer_input_files", "TransferInput"),
            ("transfer_output_files", "TransferOutput"),
        ] {
            if let Some((v, _)) = c.command(cmd)? {
                let list: Vec<&str> = v
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect();
                ad.insert(attr, string(&list.join(",")));
            }
        }
        if let Some((v, o)) = c.command("transfer_executable")? {
            let b = bool_value(&v).ok_or_else(|| {
                err(
                    &o,
                    format!("transfer_executable={v} is invalid, must eval to a boolean."),
                )
            })?;
            ad.insert("TransferExecutable", boolean(b));
        }
    }

    // Policy.
    for n in ["priority", "prio"] {
        if !want(&[n]) {
            continue;
        }
        if let Some((v, o)) = c.command(n)? {
            let e = parse_rhs("JobPrio", &v, &o).ok();
            match e.map(|e| eval_const(&e)) {
                Some(Value::Int(i)) => ad.insert("JobPrio", int(i)),
                _ => {
                    return Err(err(
                        &o,
                        format!("priority={v} is invalid, must eval to an integer."),
                    ));
                }
            }
            break;
        }
    }
    if want(&["nice_user", "accounting_group", "accounting_group_user"]) {
        let nice = match c.command("nice_user")? {
            Some((v, o)) => bool_value(&v).ok_or_else(|| {
                err(
                    &o,
                    format!("nice_user={v} is invalid, must eval to a boolean."),
                )
            })?,
            None => false,
        };
        let group = c.command("accounting_group")?;
        let group_user = c.command("accounting_group_user")?;
        if nice {
            if let Some((_, o)) = &group {
                return Err(err(o, "nice_user cannot be combined with accounting_group"));
            }
            ad.insert(
                "AccountingGroup",
                string(&format!("nice-user.{}", ctx.owner)),
            );
            ad.insert("AcctGroup", string("nice-user"));
            ad.insert("AcctGroupUser", string(ctx.owner));
            ad.insert("MaxJobRetirementTime", int(0));
        } else if let Some((g, _)) = &group {
            let u = group_user
                .as_ref()
                .map(|(u, _)| u.clone())
                .unwrap_or_else(|| ctx.owner.to_string());
            ad.insert("AccountingGroup", string(&format!("{g}.{u}")));
            ad.insert("AcctGroup", string(g));
            ad.insert("AcctGroupUser", string(&u));
        }
    }
    for (cmd, attr) in [
        ("kill_sig", "KillSig"),
        ("remove_kill_sig", "RemoveKillSig"),
        ("hold_kill_sig", "HoldKillSig"),
    ] {
        if let Some((v, o)) = c.command(cmd)? {
            let name = signal_name(&v).ok_or_else(|| err(&o, format!("invalid signal {v}")))?;
            ad.insert(attr, string(&name));
        }
    }
    if want(&["hold"])
        && let Some((v, o)) = c.command("hold")?
    {
        match bool_value(&v) {
            Some(true) => {
                ad.insert("JobStatus", int(5));
                ad.insert("HoldReasonCode", int(15));
                ad.insert("HoldReason", string("submitted on hold at user's request"));
            }
            Some(false) => {}
            None => {
                return Err(err(
                    &o,
                    format!("hold={v} is invalid, must eval to a boolean."),
                ));
            }
        }
    }
    for (cmd, attr) in [
        ("on_exit_remove", "OnExitRemove"),
        ("on_exit_hold", "OnExitHold"),
        ("on_exit_hold_reason", "OnExitHoldReason"),
        ("on_exit_hold_subcode", "OnExitHoldSubCode"),
        ("periodic_hold", "PeriodicHold"),
        ("periodic_hold_reason", "PeriodicHoldReason"),
        ("periodic_hold_subcode", "PeriodicHoldSubCode"),
        ("periodic_release", "PeriodicRelease"),
        ("periodic_remove", "PeriodicRemove"),
        ("max_job_retirement_time", "MaxJobRetirementTime"),
        ("job_lease_duration", "JobLeaseDuration"),
        ("leave_in_queue", "LeaveJobInQueue"),
        ("allowed_job_duration", "AllowedJobDuration"),
        ("allowed_execute_duration", "AllowedExecuteDuration"),
        ("want_graceful_removal", "WantGracefulRemoval"),
        ("max_idle", "JobMaterializeMaxIdle"),
        ("coresize", "CoreSize"),
        ("run_as_owner", "RunAsOwner"),
        ("load_profile", "LoadProfile"),
        ("keep_claim_idle", "KeepClaimIdle"),
        ("next_job_start_delay", "NextJobStartDelay"),
        ("job_max_vacate_time", "JobMaxVacateTime"),
        ("rank", "Rank"),
    ] {
        if want(&[cmd])
            && let Some((v, o)) = c.command(cmd)?
            && !v.is_empty()
        {
            ad.insert(attr, parse_rhs(attr, &v, &o)?);
        }
    }
    for (cmd, attr) in [
        ("batch_name", "JobBatchName"),
        ("description", "JobDescription"),
        ("submit_event_notes", "SubmitEventNotes"),
        ("notify_user", "NotifyUser"),
    ] {
        if want(&[cmd])
            && let Some((v, _)) = c.command(cmd)?
        {
            ad.insert(attr, string(&v));
        }
    }
    if want(&["concurrency_limits"])
        && let Some((v, _)) = c.command("concurrency_limits")?
    {
        // HTCondor stores the limits lower-cased, sorted, comma-separated.
        let mut limits: Vec<String> = v
            .split(|ch: char| ch == ',' || ch.is_whitespace())
            .filter(|s| !s.is_empty())
            .map(|s| s.to_ascii_lowercase())
            .collect();
        limits.sort();
        ad.insert("ConcurrencyLimits", string(&limits.join(",")));
    }
    if want(&["notification"])
        && let Some((v, o)) = c.command("notification")?
    {
        let n = match v.to_ascii_lowercase().as_str() {
            "never" => 0,
            "always" => 1,
            "complete" => 2,
            "error" => 3,
            _ => {
                return Err(err(
                    &o,
                    "Notification must be 'Never', 'Always', 'Complete', or 'Error'",
                ));
            }
        };
        ad.insert("JobNotification", int(n));
    }
    // Retries.
    if want(&["max_retries", "success_exit_code", "retry_until"]) {
        let max_retries = c.command("max_retries")?;
        let success = c.command("success_exit_code")?;
        let retry_until = c.command("retry_until")?;
        if max_retries.is_some() || success.is_some() || retry_until.is_some() {
            let retries = match &max_retries {
                Some((v, o)) => match parse_rhs("JobMaxRetries", v, o)
                    .ok()
                    .map(|e| eval_const(&e))
                {
                    Some(Value::Int(i)) => i,
                    _ => {
                        return Err(err(
                            o,
                            format!("max_retries={v} is invalid, must eval to an integer."),
                        ));
                    }
                },
                None => 2,
            };
            ad.insert("JobMaxRetries", int(retries));
            let mut remove = String::from("NumJobCompletions > JobMaxRetries || ");
            match &success {
                Some((v, o)) => match parse_rhs("JobSuccessExitCode", v, o)
                    .ok()
                    .map(|e| eval_const(&e))
                {
                    Some(Value::Int(i)) => {
                        ad.insert("JobSuccessExitCode", int(i));
                        remove.push_str("ExitCode is JobSuccessExitCode");
                    }
                    _ => {
                        return Err(err(
                            o,
                            format!("success_exit_code={v} is invalid, must eval to an integer."),
                        ));
                    }
                },
                None => remove.push_str("ExitCode is 0"),
            }
            if let Some((v, o)) = &retry_until {
                parse_rhs("OnExitRemove", v, o)?;
                remove.push_str(" || ");
                remove.push_str(v);
            }
            ad.insert("OnExitRemove", parse_rhs("OnExitRemove", &remove, &q)?);
            ad.insert("OnExitHold", boolean(false));
        }
    }

    // CronTab and deferral.
    let mut timed = false;
    let mut timed_origin: Option<Origin> = None;
    let mut cron_values: Vec<(&str, String, Origin)> = Vec::new();
    for (cmd, attr) in [
        ("cron_minute", "CronMinute"),
        ("cron_hour", "CronHour"),
        ("cron_day_of_month", "CronDayOfMonth"),
        ("cron_month", "CronMonth"),
        ("cron_day_of_week", "CronDayOfWeek"),
    ] {
        if let Some((v, o)) = c.command(cmd)? {
            if want(&[cmd]) {
                ad.insert(attr, string(&v));
            }
            timed = true;
            cron_values.push((attr, v, o.clone()));
            timed_origin.get_or_insert(o);
        }
    }
    // HTCondor leaves the schedule's syntax to the schedd; tern reports a
    // bad one at submit, naming the command.
    if !cron_values.is_empty() {
        let field = |name: &str| {
            cron_values
                .iter()
                .find(|(a, _, _)| *a == name)
                .map(|(_, v, _)| v.as_str())
        };
        let fields = [
            field("CronMinute"),
            field("CronHour"),
            field("CronDayOfMonth"),
            field("CronMonth"),
            field("CronDayOfWeek"),
        ];
        if let Err(e) = crate::cron::Schedule::parse(fields) {
            let (_, _, o) = cron_values
                .iter()
                .find(|(a, _, _)| *a == e.attr())
                .unwrap_or(&cron_values[0]);
            return Err(err(o, format!("invalid cron schedule: {e}")));
        }
    }
    if let Some((v, o)) = c.command("deferral_time")? {
        let e = parse_rhs("DeferralTime", &v, &o)?;
        if let Expr::Lit(lit) = &e
            && !matches!(lit, Value::Int(i) if *i >= 0)
        {
            return Err(err(
                &o,
                format!("deferral_time = {v} is invalid, must eval to a non-negative integer."),
            ));
        }
        if want(&["deferral_time"]) {
            ad.insert("DeferralTime", e);
        }
        timed = true;
        timed_origin.get_or_insert(o);
    }
    if timed && want(&cron_cmds) {
        if universe == UNIVERSE_SCHEDULER {
            return Err(err(
                timed_origin.as_ref().unwrap_or(&q),
                "CronTab and deferral are not allowed in the scheduler universe; use the local universe",
            ));
        }
        let window = first_of(c, &["cron_window", "deferral_window"], 0, "window")?;
        let prep = first_of(
            c,
            &["cron_prep_time", "deferral_prep_time"],
            300,
            "prep time",
        )?;
        ad.insert("DeferralWindow", int(window));
        ad.insert("DeferralPrepTime", int(prep));
        ad.insert("ScheddInterval", int(ctx.schedd_interval));
    }

    // Requirements.
    if want_req {
        let user_req = c.command("requirements")?;
        let user_expr = match &user_req {
            Some((v, o)) if !v.is_empty() => Some((v.clone(), parse_rhs("Requirements", v, o)?)),
            _ => None,
        };
        let refs = user_expr
            .as_ref()
            .map(|(_, e)| machine_refs(e))
            .unwrap_or_default();
        let refers = |n: &str| refs.iter().any(|r| r.eq_ignore_ascii_case(n));
        let mut clauses: Vec<String> = Vec::new();
        if let Some((text, _)) = &user_expr {
            clauses.push(format!("({text})"));
        }
        let append = if universe == UNIVERSE_VANILLA {
            ctx.append_req_vanilla.clone()
        } else {
            None
        };
        if let Some(a) = append.or(ctx.append_requirements.clone()) {
            clauses.push(format!("({a})"));
        }
        if !refers("Arch") {
            clauses.push(format!("(TARGET.Arch == \"{}\")", ctx.arch));
        }
        if ![
            "OpSys",
            "OpSysAndVer",
            "OpSysName",
            "OpSysShortName",
            "OpSysLongName",
            "OpSysLegacy",
        ]
        .iter()
        .any(|n| refers(n))
        {
            clauses.push(format!("(TARGET.OpSys == \"{}\")", ctx.opsys));
        }
        let literal_num = |e: Option<&Expr>| {
            e.and_then(|e| e.literal_value())
                .and_then(|v| v.as_number())
        };
        if ad.get("RequestDisk").is_some()
            && !literal_num(ad.get("RequestDisk")).is_some_and(|n| n <= 0.0)
        {
            clauses.push("(TARGET.Disk >= RequestDisk)".into());
        }
        if !literal_num(lookup(&ad, base, "RequestMemory")).is_some_and(|n| n <= 1.0) {
            clauses.push("(TARGET.Memory >= RequestMemory)".into());
        }
        if !literal_num(lookup(&ad, base, "RequestCpus")).is_some_and(|n| n <= 1.0)
            && !refers("Cpus")
        {
            clauses.push("(TARGET.Cpus >= RequestCpus)".into());
        }
        for (tag, e) in &custom {
            match e.literal_value() {
                Some(Value::Str(_)) => clauses.push(format!("regexp(Request{tag}, TARGET.{tag})")),
                Some(v) if v.as_number().is_some_and(|n| n <= 0.0) => {}
                _ => clauses.push(format!("(TARGET.{tag} >= Request{tag})")),
            }
        }
        if !local_like {
            let fs = match should.as_str() {
                "YES" => Some("(TARGET.HasFileTransfer)"),
                "NO" => Some("(TARGET.FileSystemDomain == MY.FileSystemDomain)"),
                _ => Some(
                    "((TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer))",
                ),
            };
            if refers("HasFileTransfer") {
            } else if refers("FileSystemDomain") {
                clauses.push("(TARGET.HasFileTransfer)".into());
            } else if let Some(f) = fs {
                clauses.push(f.into());
            }
        }
        let mut req = clauses.join(" && ");
        if timed {
            let window = "(((time() + ScheddInterval) >= (DeferralTime - DeferralPrepTime)) && (time() < (DeferralTime + DeferralWindow)))";
            if universe == UNIVERSE_LOCAL {
                req = format!("{req} && {window}");
            } else {
                req = format!("{req} && TARGET.HasJobDeferral && {window}");
            }
        }
        ad.insert("Requirements", parse_rhs("Requirements", &req, &q)?);
    }

    // +Attr and MY.Attr override anything generated.
    for (name, value, o) in c.raw_attrs()? {
        match value {
            // `-Attr` leaves the attribute undefined, as condor_submit does.
            None => ad.insert(&name, Expr::Lit(Value::Undefined)),
            Some(v) if v.trim().is_empty() => ad.insert(&name, Expr::Lit(Value::Undefined)),
            Some(v) => {
                let e = parse_rhs(&name, v.trim(), &o)?;
                ad.insert(&name, e);
            }
        }
    }
    Ok(ad)
}

fn first_of(
    c: &mut dyn Commands,
    names: &[&str],
    default: i64,
    what: &str,
) -> Result<i64, SubmitError> {
    for n in names {
        if let Some((v, o)) = c.command(n)? {
            return match v.trim().parse::<i64>() {
                Ok(i) if i >= 0 => Ok(i),
                _ => Err(err(
                    &o,
                    format!("{n} = {v} is invalid: the {what} must be a non-negative integer"),
                )),
            };
        }
    }
    Ok(default)
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

/// A signal given by name (`SIGTERM`) or number (`15`) as its name.
pub fn signal_name(v: &str) -> Option<String> {
    const SIGNALS: &[(&str, i32)] = &[
        ("SIGHUP", 1),
        ("SIGINT", 2),
        ("SIGQUIT", 3),
        ("SIGILL", 4),
        ("SIGTRAP", 5),
        ("SIGABRT", 6),
        ("SIGBUS", 7),
        ("SIGFPE", 8),
        ("SIGKILL", 9),
        ("SIGUSR1", 10),
        ("SIGSEGV", 11),
        ("SIGUSR2", 12),
        ("SIGPIPE", 13),
        ("SIGALRM", 14),
        ("SIGTERM", 15),
        ("SIGCHLD", 17),
        ("SIGCONT", 18),
        ("SIGSTOP", 19),
        ("SIGTSTP", 20),
        ("SIGTTIN", 21),
        ("SIGTTOU", 22),
        ("SIGXCPU", 24),
        ("SIGXFSZ", 25),
        ("SIGVTALRM", 26),
        ("SIGPROF", 27),
        ("SIGWINCH", 28),
    ];
    let t = v.trim();
    if let Ok(n) = t.parse::<i32>() {
        return SIGNALS
            .iter()
            .find(|(_, k)| *k == n)
            .map(|(s, _)| s.to_string());
    }
    SIGNALS
        .iter()
        .find(|(s, _)| s.eq_ignore_ascii_case(t))
        .map(|(s, _)| s.to_string())
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
    use super::*;

    #[test]
    fn signals() {
        assert_eq!(signal_name("9").as_deref(), Some("SIGKILL"));
        assert_eq!(signal_name("SIGTERM").as_deref(), Some("SIGTERM"));
        assert_eq!(signal_name("TERM"), None);
    }
}
