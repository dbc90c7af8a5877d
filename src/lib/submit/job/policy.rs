//! The job's policy: its priority and accounting group, the signals that
//! stop it, submitting on hold, the periodic and on-exit expressions,
//! descriptive attributes, concurrency limits, notification and retries.

use crate::vocab::{JobStatus, hold_code, signal_name};

use super::simple::As;
use super::{
    Build, Expr, SubmitError, Value, absolute, bool_value, boolean, err, eval_const, int,
    parse_rhs, string,
};
use crate::submit::units::{self, Base, Size};

impl Build<'_> {
    /// SetPriority: JobPrio from `priority` (or `prio`), an integer.
    pub(super) fn set_priority(&mut self) -> Result<(), SubmitError> {
        for n in ["priority", "prio"] {
            if !self.want(&[n]) {
                continue;
            }
            if let Some((v, o)) = self.c.command(n)? {
                let e = parse_rhs("JobPrio", &v, &o).ok();
                match e.map(|e| eval_const(&e)) {
                    Some(Value::Int(i)) => self.ad.insert("JobPrio", int(i)),
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
        Ok(())
    }

    /// SetAccountingGroup (with SetNiceUser): AccountingGroup, AcctGroup and
    /// AcctGroupUser; a nice user is the group `nice-user`.
    pub(super) fn set_accounting_group(&mut self) -> Result<(), SubmitError> {
        if !self.want(&["nice_user", "accounting_group", "accounting_group_user"]) {
            return Ok(());
        }
        let owner = self.ctx.owner;
        let nice = match self.c.command("nice_user")? {
            Some((v, o)) => bool_value(&v).ok_or_else(|| {
                err(
                    &o,
                    format!("nice_user={v} is invalid, must eval to a boolean."),
                )
            })?,
            None => false,
        };
        // An empty value is no value, for both.
        let group = self.given("accounting_group")?;
        let given_user = self.given("accounting_group_user")?.map(|(u, _)| u);
        let u = given_user.clone().unwrap_or_else(|| owner.to_string());
        let ad = &mut self.ad;
        if nice {
            if let Some((_, o)) = &group {
                return Err(err(o, "nice_user cannot be combined with accounting_group"));
            }
            ad.insert("AccountingGroup", string(&format!("nice-user.{u}")));
            ad.insert("AcctGroup", string("nice-user"));
            ad.insert("AcctGroupUser", string(&u));
            ad.insert("MaxJobRetirementTime", int(0));
        } else if let Some((g, _)) = &group {
            ad.insert("AccountingGroup", string(&format!("{g}.{u}")));
            ad.insert("AcctGroup", string(g));
            ad.insert("AcctGroupUser", string(&u));
        } else if let Some(u) = &given_user {
            // A user without a group is charged as that user alone: no
            // AcctGroup (condor_submit's SetAccountingGroup).
            ad.insert("AccountingGroup", string(u));
            ad.insert("AcctGroupUser", string(u));
        }
        Ok(())
    }

    /// SetKillSig: KillSig, RemoveKillSig and HoldKillSig by name, from
    /// the one signal table the shadow also sends from.
    pub(super) fn set_kill_sig(&mut self) -> Result<(), SubmitError> {
        for (cmd, attr) in [
            ("kill_sig", "KillSig"),
            ("remove_kill_sig", "RemoveKillSig"),
            ("hold_kill_sig", "HoldKillSig"),
        ] {
            if let Some((v, o)) = self.c.command(cmd)? {
                let name = signal_name(&v).ok_or_else(|| err(&o, format!("invalid signal {v}")))?;
                self.ad.insert(attr, string(name));
            }
        }
        // As condor_submit reads it, with atoi: "30s" is 30, "x" is 0.
        if self.want(&["kill_sig_timeout"])
            && let Some((v, _)) = self.c.command("kill_sig_timeout")?
        {
            self.ad.insert("KillSigTimeout", int(atoi(&v)));
        }
        Ok(())
    }

    /// SetHold: `hold = true` submits the job held.
    pub(super) fn set_hold(&mut self) -> Result<(), SubmitError> {
        if self.want(&["hold"])
            && let Some((v, o)) = self.c.command("hold")?
        {
            match bool_value(&v) {
                Some(true) => {
                    self.ad.insert("JobStatus", JobStatus::Held.expr());
                    self.ad
                        .insert("HoldReasonCode", int(hold_code::SUBMITTED_ON_HOLD));
                    self.ad
                        .insert("HoldReason", string("submitted on hold at user's request"));
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
        Ok(())
    }

    /// SetPeriodicExpressions and the other commands that are ClassAd
    /// expressions copied as given (leases, retirement, rank, ...).
    pub(super) fn set_policy_exprs(&mut self) -> Result<(), SubmitError> {
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
            ("periodic_vacate", "PeriodicVacate"),
            ("max_job_retirement_time", "MaxJobRetirementTime"),
            ("job_lease_duration", "JobLeaseDuration"),
            ("leave_in_queue", "LeaveJobInQueue"),
            ("allowed_job_duration", "AllowedJobDuration"),
            ("allowed_execute_duration", "AllowedExecuteDuration"),
            ("want_graceful_removal", "WantGracefulRemoval"),
            ("max_idle", "JobMaterializeMaxIdle"),
            ("core_size", "CoreSize"),
            ("run_as_owner", "RunAsOwner"),
            ("load_profile", "LoadProfile"),
            ("keep_claim_idle", "KeepClaimIdle"),
            ("next_job_start_delay", "NextJobStartDelay"),
            ("job_max_vacate_time", "JobMaxVacateTime"),
            ("stack_size", "StackSize"),
            ("rank", "Rank"),
        ] {
            if self.want(&[cmd])
                && let Some((v, o)) = self.c.command(cmd)?
                && !v.is_empty()
            {
                self.ad.insert(attr, parse_rhs(attr, &v, &o)?);
            }
        }
        Ok(())
    }

    /// SetDescription and its kin: the string attributes copied as given.
    pub(super) fn set_descriptions(&mut self) -> Result<(), SubmitError> {
        for (cmd, attr) in [
            ("batch_name", "JobBatchName"),
            ("description", "JobDescription"),
            ("submit_event_notes", "SubmitEventNotes"),
            ("notify_user", "NotifyUser"),
        ] {
            if self.want(&[cmd])
                && let Some((v, _)) = self.c.command(cmd)?
            {
                self.ad.insert(attr, string(&v));
            }
        }
        Ok(())
    }

    /// The rest of condor_submit's simple commands (its
    /// `prunable_keywords` table): each copied to one attribute as a
    /// string, a comma-joined list or an integer.
    pub(super) fn set_simple_commands(&mut self) -> Result<(), SubmitError> {
        self.copy_simple(SIMPLE)?;
        // SetUserLog's DAGMan workflow log: a path under the initial directory.
        if self.want(&["dagman_log", "initialdir", "initial_dir"])
            && let Some((v, _)) = self.c.command("dagman_log")?
            && !v.is_empty()
        {
            self.ad.insert(
                "DAGManNodesLog",
                string(&absolute(&self.iwd, &v).display().to_string()),
            );
        }
        // tern's event logs are text only.
        if self.want(&["log_xml"])
            && let Some((v, o)) = self.c.command("log_xml")?
        {
            match bool_value(&v) {
                Some(false) => self.ad.insert("UserLogUseXML", boolean(false)),
                Some(true) => {
                    return Err(err(
                        &o,
                        "log_xml = true is not supported: tern writes event logs only in the text format",
                    ));
                }
                None => {
                    return Err(err(
                        &o,
                        format!("log_xml={v} is invalid, must eval to a boolean."),
                    ));
                }
            }
        }
        Ok(())
    }

    /// SetImageSize: `image_size` (KiB, or with a unit K, M, G or T) is
    /// the job's first ImageSize instead of the executable's size.
    pub(super) fn set_image_size(&mut self) -> Result<(), SubmitError> {
        if !self.want(&["image_size"]) {
            return Ok(());
        }
        if let Some((v, o)) = self.c.command("image_size")?
            && !v.is_empty()
        {
            let kib = match units::parse_size(&v, Base::KiB) {
                Ok(Size::Int(n)) => n,
                _ => {
                    return Err(err(
                        &o,
                        format!("'{v}' is not valid for Image Size\nImage Size must be positive"),
                    ));
                }
            };
            if kib < 1 {
                return Err(err(&o, "Image Size must be positive"));
            }
            self.ad.insert("ImageSize", int(kib));
        }
        Ok(())
    }

    /// Commands asking for what tern does not do (containers, remote I/O,
    /// credentials, ...): refused with their line, unless the value turns
    /// the feature off, when the job gets what condor_submit stores.
    pub(super) fn refuse_unsupported(&mut self) -> Result<(), SubmitError> {
        for &(cmd, attr, off, why) in REFUSED {
            if !self.want(&[cmd]) {
                continue;
            }
            let Some((v, o)) = self.given(cmd)? else {
                continue;
            };
            match off {
                Off::Bool if bool_value(&v) == Some(false) => {
                    self.ad.insert(attr, boolean(false));
                    continue;
                }
                Off::BoolNothing if bool_value(&v) == Some(false) => continue,
                Off::Expr => {
                    if let Ok(e) = parse_rhs(attr, &v, &o)
                        && matches!(e.literal_value(), Some(Value::Bool(false)))
                    {
                        self.ad.insert(attr, e);
                        continue;
                    }
                }
                _ => {}
            }
            return Err(err(&o, format!("{cmd} is not supported: {why}")));
        }
        Ok(())
    }

    /// SetConcurrencyLimits.
    pub(super) fn set_concurrency_limits(&mut self) -> Result<(), SubmitError> {
        if !self.want(&["concurrency_limits", "concurrency_limits_expr"]) {
            return Ok(());
        }
        let expr = self.given("concurrency_limits_expr")?;
        if let Some((v, _)) = self.c.command("concurrency_limits")?
            && !v.is_empty()
        {
            if let Some((_, o)) = expr {
                return Err(err(
                    &o,
                    "concurrency_limits and concurrency_limits_expr can't be used together",
                ));
            }
            // HTCondor stores the limits lower-cased, sorted, comma-separated.
            let mut limits: Vec<String> = v
                .split(|ch: char| ch == ',' || ch.is_whitespace())
                .filter(|s| !s.is_empty())
                .map(|s| s.to_ascii_lowercase())
                .collect();
            limits.sort();
            self.ad
                .insert("ConcurrencyLimits", string(&limits.join(",")));
        } else if let Some((v, o)) = expr {
            self.ad
                .insert("ConcurrencyLimits", parse_rhs("ConcurrencyLimits", &v, &o)?);
        }
        Ok(())
    }

    /// SetNotification: JobNotification by name.
    pub(super) fn set_notification(&mut self) -> Result<(), SubmitError> {
        if self.want(&["notification"])
            && let Some((v, o)) = self.c.command("notification")?
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
            self.ad.insert("JobNotification", int(n));
        }
        Ok(())
    }

    /// SetJobRetries: `max_retries`, `success_exit_code` and `retry_until`
    /// become JobMaxRetries and the OnExitRemove that retries.
    pub(super) fn set_job_retries(&mut self) -> Result<(), SubmitError> {
        if !self.want(&[
            "max_retries",
            "success_exit_code",
            "retry_until",
            "on_exit_remove",
            "on_exit_hold",
        ]) {
            return Ok(());
        }
        let max_retries = self.c.command("max_retries")?;
        let success = self.c.command("success_exit_code")?;
        let retry_until = self.c.command("retry_until")?;
        if max_retries.is_none() && success.is_none() && retry_until.is_none() {
            return Ok(());
        }
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
        self.ad.insert("JobMaxRetries", int(retries));
        let mut remove = String::from("NumJobCompletions > JobMaxRetries || ");
        match &success {
            Some((v, o)) => match parse_rhs("JobSuccessExitCode", v, o)
                .ok()
                .map(|e| eval_const(&e))
            {
                Some(Value::Int(i)) => {
                    self.ad.insert("JobSuccessExitCode", int(i));
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
            // An integer is a futility exit code; anything else is an
            // expression (condor_submit's SetJobRetries).
            let e = parse_rhs("OnExitRemove", v, o).map_err(|_| {
                err(
                    o,
                    format!(
                        "retry_until={v} is invalid, it must be an integer or boolean expression."
                    ),
                )
            })?;
            remove.push_str(" || ");
            // As string_is_long_param reads it: with no attribute
            // references, a number or boolean is the code (a real
            // truncated, true 1).
            let mut refs = false;
            e.walk_attrs(&mut |_| refs = true);
            let code = match eval_const(&e) {
                _ if refs => None,
                Value::Int(i) => Some(i),
                Value::Real(r) => Some(r as i64),
                Value::Bool(b) => Some(i64::from(b)),
                _ => None,
            };
            match code {
                Some(c) if i32::try_from(c).is_err() => {
                    return Err(err(
                        o,
                        format!(
                            "retry_until={v} is invalid, it must be an integer or boolean expression."
                        ),
                    ));
                }
                Some(c) => remove.push_str(&format!("ExitCode =?= {c}")),
                None => remove.push_str(&wrap_for_or(&e, v)),
            }
        }
        // A user's on_exit_remove is one more way out of the retries.
        if let Some((v, o)) = self.c.command("on_exit_remove")? {
            let e = parse_rhs("OnExitRemove", &v, &o)?;
            remove.push_str(" || ");
            remove.push_str(&wrap_for_or(&e, &v));
        }
        self.ad
            .insert("OnExitRemove", parse_rhs("OnExitRemove", &remove, &self.q)?);
        if self.lookup("OnExitHold").is_none() {
            self.ad.insert("OnExitHold", boolean(false));
        }
        Ok(())
    }
}

/// condor_submit's simple commands not handled elsewhere (submit_utils.cpp,
/// 24.0, `prunable_keywords`), with the attribute each sets.
const SIMPLE: &[(&str, &str, As)] = &[
    ("batch_id", "JobBatchId", As::Str),
    ("cuda_version", "CUDAVersion", As::Str),
    ("dag_node_name", "DAGNodeName", As::Str),
    ("dagman_job_id", "DAGManJobId", As::UInt),
    ("email_attributes", "EmailAttributes", As::List),
    ("job_ad_information_attrs", "JobAdInformationAttrs", As::Str),
    ("job_machine_attrs", "JobMachineAttrs", As::Str),
    ("jobset", "JobSetName", As::StrStrip),
    ("match_list_length", "LastMatchListLength", As::Int),
    ("remote_initialdir", "RemoteIwd", As::Str),
    (
        "job_machine_attrs_history_length",
        "JobMachineAttrsHistoryLength",
        As::Int,
    ),
    ("submit_event_user_notes", "SubmitEventUserNotes", As::Str),
    ("ulog_execute_attrs", "UserLogExecuteEventAttrs", As::Str),
];

/// What value of a refused command turns its feature off.
#[derive(Clone, Copy)]
enum Off {
    /// None does.
    Never,
    /// A false boolean, stored as `Attr = false`.
    Bool,
    /// A false boolean, stored as nothing.
    BoolNothing,
    /// The expression `false`, stored as given.
    Expr,
}

const CONTAINERS: &str = "tern runs jobs on the host, not in containers";
const REMOTE_IO: &str = "tern has no remote I/O for jobs; list files in transfer_input_files";

/// The commands condor_submit 24.0 knows that ask for what tern cannot do,
/// with the attribute an "off" value stores and why tern refuses them.
const REFUSED: &[(&str, &str, Off, &str)] = &[
    // A container image makes condor_submit's vanilla job a container
    // job: refused rather than run on the host without it.
    ("container_image", "ContainerImage", Off::Never, CONTAINERS),
    ("docker_image", "DockerImage", Off::Never, CONTAINERS),
    (
        "want_io_proxy",
        "WantIOProxy",
        Off::Bool,
        "tern has no I/O proxy (chirp) for jobs",
    ),
    (
        "transfer_container",
        "TransferContainer",
        Off::Bool,
        CONTAINERS,
    ),
    (
        "docker_network_type",
        "DockerNetworkType",
        Off::Never,
        CONTAINERS,
    ),
    (
        "docker_pull_policy",
        "DockerPullPolicy",
        Off::Never,
        CONTAINERS,
    ),
    (
        "docker_override_entrypoint",
        "DockerOverrideEntrypoint",
        Off::Bool,
        CONTAINERS,
    ),
    (
        "container_target_dir",
        "ContainerTargetDir",
        Off::Never,
        CONTAINERS,
    ),
    (
        "container_service_names",
        "ContainerServiceNames",
        Off::Never,
        CONTAINERS,
    ),
    (
        "manifest",
        "ManifestDesired",
        Off::Bool,
        "tern writes no job manifests",
    ),
    (
        "manifest_dir",
        "ManifestDir",
        Off::Never,
        "tern writes no job manifests",
    ),
    (
        "skip_if_dataflow",
        "SkipIfDataflow",
        Off::Bool,
        "tern runs every job it matches; it does not skip dataflow jobs",
    ),
    (
        "starter_debug",
        "JobStarterDebug",
        Off::Never,
        "tern has no per-job starter log",
    ),
    (
        "starter_log",
        "JobStarterLog",
        Off::Never,
        "tern has no per-job starter log",
    ),
    ("file_remaps", "FileRemaps", Off::Never, REMOTE_IO),
    ("buffer_files", "BufferFiles", Off::Never, REMOTE_IO),
    ("buffer_size", "BufferSize", Off::Never, REMOTE_IO),
    (
        "buffer_block_size",
        "BufferBlockSize",
        Off::Never,
        REMOTE_IO,
    ),
    ("fetch_files", "FetchFiles", Off::Never, REMOTE_IO),
    ("compress_files", "CompressFiles", Off::Never, REMOTE_IO),
    ("append_files", "AppendFiles", Off::Never, REMOTE_IO),
    ("local_files", "LocalFiles", Off::Never, REMOTE_IO),
    (
        "noop_job",
        "IsNoopJob",
        Off::Expr,
        "tern runs every job; it has no no-op jobs",
    ),
    (
        "noop_job_exit_signal",
        "NoopJobExitSignal",
        Off::Never,
        "tern runs every job; it has no no-op jobs",
    ),
    (
        "noop_job_exit_code",
        "NoopJobExitCode",
        Off::Never,
        "tern runs every job; it has no no-op jobs",
    ),
    (
        "jar_files",
        "JarFiles",
        Off::Never,
        "tern has no java universe",
    ),
    (
        "parallel_script_shadow",
        "ParallelScriptShadow",
        Off::Never,
        "tern has no parallel universe",
    ),
    (
        "parallel_script_starter",
        "ParallelScriptStarter",
        Off::Never,
        "tern has no parallel universe",
    ),
    (
        "tool_daemon_cmd",
        "ToolDaemonCmd",
        Off::Never,
        "tern has no tool daemons",
    ),
    (
        "tool_daemon_args",
        "ToolDaemonArgs",
        Off::Never,
        "tern has no tool daemons",
    ),
    (
        "tool_daemon_arguments",
        "ToolDaemonArgs",
        Off::Never,
        "tern has no tool daemons",
    ),
    (
        "tool_daemon_arguments2",
        "ToolDaemonArguments",
        Off::Never,
        "tern has no tool daemons",
    ),
    (
        "tool_daemon_input",
        "ToolDaemonInput",
        Off::Never,
        "tern has no tool daemons",
    ),
    (
        "tool_daemon_output",
        "ToolDaemonOutput",
        Off::Never,
        "tern has no tool daemons",
    ),
    (
        "tool_daemon_error",
        "ToolDaemonError",
        Off::Never,
        "tern has no tool daemons",
    ),
    (
        "copy_to_spool",
        "CopyToSpool",
        Off::BoolNothing,
        "tern runs the executable from where it is; copy it first if it may change",
    ),
    (
        "suspend_job_at_exec",
        "SuspendJobAtExec",
        Off::BoolNothing,
        "tern has no tool daemons",
    ),
    (
        "x509userproxy",
        "x509userproxy",
        Off::Never,
        "tern has no X.509 proxies",
    ),
    (
        "use_x509userproxy",
        "x509userproxy",
        Off::BoolNothing,
        "tern has no X.509 proxies",
    ),
    (
        "use_scitokens",
        "ScitokensFile",
        Off::BoolNothing,
        "tern has no SciTokens",
    ),
    (
        "scitokens_file",
        "ScitokensFile",
        Off::Never,
        "tern has no SciTokens",
    ),
    (
        "use_oauth_services",
        "OAuthServicesNeeded",
        Off::Never,
        "tern has no credential manager for OAuth tokens",
    ),
    (
        "max_materialize",
        "JobMaterializeLimit",
        Off::Never,
        "tern materializes every job of a submission at once",
    ),
];

/// C's atoi: optional white space and sign, then the leading digits; 0
/// when there are none (condor_submit reads `kill_sig_timeout` so).
fn atoi(v: &str) -> i64 {
    let t = v.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let n: i64 = digits
        .bytes()
        .take_while(u8::is_ascii_digit)
        .fold(0i64, |n, d| {
            n.saturating_mul(10).saturating_add(i64::from(d - b'0'))
        });
    if neg { -n } else { n }
}

/// `text` as an operand of `||`: in parentheses when its top operator binds
/// less tightly (condor_submit's WrapExprTreeInParensForOp). Only `?:` with
/// three operands: HTCondor's precedence table leaves `x ?: y` bare.
fn wrap_for_or(e: &Expr, text: &str) -> String {
    match e {
        Expr::Cond(_) => format!("({})", text.trim()),
        _ => text.trim().to_string(),
    }
}
