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
mod input_limit;
mod inputs;
pub mod job;
mod materialize;
mod parse;
pub mod queue;
pub mod units;

pub use input_limit::hold_over_input_limit;
pub use inputs::Inputs;
pub use materialize::{materialize, materialize_with, os_release};
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
#[derive(Clone, Debug)]
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
    /// `skip_filechecks = true`: the submitter's checks of the files
    /// (the event logs) are not made.
    pub skip_file_checks: bool,
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
    "allow_arguments_v1",
    "allow_environment_v1",
    "allowed_execute_duration",
    "allowed_job_duration",
    "append_files",
    "args",
    "arguments",
    "arguments2",
    "aws_access_key_id_file",
    "aws_region",
    "aws_secret_access_key_file",
    "batch_extra_submit_args",
    "batch_id",
    "batch_name",
    "batch_project",
    "batch_queue",
    "batch_runtime",
    "buffer_block_size",
    "buffer_files",
    "buffer_size",
    "checkpoint_destination",
    "checkpoint_exit_code",
    "compress_files",
    "concurrency_limits",
    "concurrency_limits_expr",
    "container_image",
    "container_service_names",
    "container_target_dir",
    "copy_to_spool",
    "core_size",
    "cron_day_of_month",
    "cron_day_of_week",
    "cron_hour",
    "cron_minute",
    "cron_month",
    "cron_prep_time",
    "cron_window",
    "cuda_version",
    "dag_node_name",
    "dagman_job_id",
    "dagman_log",
    "deferral_prep_time",
    "deferral_time",
    "deferral_window",
    "description",
    "disk_usage",
    "docker_image",
    "docker_network_type",
    "docker_override_entrypoint",
    "docker_pull_policy",
    "dont_encrypt_input_files",
    "dont_encrypt_output_files",
    "email_attributes",
    "encrypt_execute_directory",
    "encrypt_input_files",
    "encrypt_output_files",
    "env",
    "environment",
    "environment2",
    "erase_output_and_error_on_restart",
    "error",
    "executable",
    "fetch_files",
    "file_remaps",
    "getenv",
    "gpus_maximum_capability",
    "gpus_minimum_capability",
    "gpus_minimum_memory",
    "gpus_minimum_runtime",
    "grid_resource",
    "gs_access_key_id_file",
    "gs_secret_access_key_file",
    "hold",
    "hold_kill_sig",
    "image_size",
    "initial_dir",
    "initialdir",
    "input",
    "jar_files",
    "job_ad_information_attrs",
    "job_lease_duration",
    "job_machine_attrs",
    "job_machine_attrs_history_length",
    "job_max_vacate_time",
    "jobset",
    "keep_claim_idle",
    "kill_sig",
    "kill_sig_timeout",
    "leave_in_queue",
    "load_profile",
    "local_files",
    "log",
    "log_xml",
    "manifest",
    "manifest_dir",
    "match_list_length",
    "max_idle",
    "max_job_retirement_time",
    "max_materialize",
    "max_retries",
    "max_transfer_input_mb",
    "max_transfer_output_mb",
    "next_job_start_delay",
    "nice_user",
    "noop_job",
    "noop_job_exit_code",
    "noop_job_exit_signal",
    "notification",
    "notify_user",
    "on_exit_hold",
    "on_exit_hold_reason",
    "on_exit_hold_subcode",
    "on_exit_remove",
    "output",
    "output_destination",
    "parallel_script_shadow",
    "parallel_script_starter",
    "periodic_hold",
    "periodic_hold_reason",
    "periodic_hold_subcode",
    "periodic_release",
    "periodic_remove",
    "periodic_vacate",
    "preserve_relative_paths",
    "prio",
    "priority",
    "rank",
    "remote_initialdir",
    "remove_kill_sig",
    "request_cpus",
    "request_disk",
    "request_memory",
    "require_gpus",
    "requirements",
    "retry_until",
    "run_as_owner",
    "s3_access_key_id_file",
    "s3_secret_access_key_file",
    "scitokens_file",
    "should_transfer_files",
    "skip_filechecks",
    "skip_if_dataflow",
    "stack_size",
    "starter_debug",
    "starter_log",
    "stderr",
    "stdin",
    "stdout",
    "stream_error",
    "stream_input",
    "stream_output",
    "submit_event_notes",
    "submit_event_user_notes",
    "success_exit_code",
    "suspend_job_at_exec",
    "tool_daemon_args",
    "tool_daemon_arguments",
    "tool_daemon_arguments2",
    "tool_daemon_cmd",
    "tool_daemon_error",
    "tool_daemon_input",
    "tool_daemon_output",
    "transfer_checkpoint_files",
    "transfer_container",
    "transfer_error",
    "transfer_executable",
    "transfer_input",
    "transfer_input_files",
    "transfer_output",
    "transfer_output_files",
    "transfer_output_remaps",
    "transfer_plugins",
    "ulog_execute_attrs",
    "universe",
    "use_oauth_services",
    "use_scitokens",
    "use_x509userproxy",
    "want_graceful_removal",
    "want_io_proxy",
    "when_to_transfer_output",
    "x509userproxy",
];

/// condor_submit's other names for commands: a command not given is looked
/// up under its alias, mostly the job attribute it sets (`JobBatchName = x`
/// is `batch_name = x`). From submit_utils.cpp (24.0): the simple-command
/// table and the `submit_param(command, alias)` calls. Lower case.
const ALIASES: &[(&str, &str)] = &[
    ("accounting_group", "accountinggroup"),
    ("accounting_group_user", "acctgroupuser"),
    ("allowed_execute_duration", "allowedexecuteduration"),
    ("allowed_job_duration", "allowedjobduration"),
    ("append_files", "appendfiles"),
    ("aws_access_key_id_file", "ec2accesskeyid"),
    ("aws_region", "awsregion"),
    ("aws_secret_access_key_file", "ec2secretaccesskey"),
    ("batch_id", "jobbatchid"),
    ("batch_name", "jobbatchname"),
    ("buffer_block_size", "bufferblocksize"),
    ("buffer_files", "bufferfiles"),
    ("buffer_size", "buffersize"),
    ("checkpoint_destination", "checkpointdestination"),
    ("checkpoint_exit_code", "successcheckpointexitcode"),
    ("compress_files", "compressfiles"),
    ("container_image", "containerimage"),
    ("container_target_dir", "containertargetdir"),
    ("core_size", "coresize"),
    ("cron_day_of_month", "crondayofmonth"),
    ("cron_day_of_week", "crondayofweek"),
    ("cron_hour", "cronhour"),
    ("cron_minute", "cronminute"),
    ("cron_month", "cronmonth"),
    ("cron_prep_time", "cronpreptime"),
    ("cron_window", "cronwindow"),
    ("cuda_version", "cudaversion"),
    ("dag_node_name", "dagnodename"),
    ("dagman_job_id", "dagmanjobid"),
    ("dagman_log", "dagmannodeslog"),
    ("deferral_prep_time", "deferralpreptime"),
    ("deferral_time", "deferraltime"),
    ("deferral_window", "deferralwindow"),
    ("description", "jobdescription"),
    ("disk_usage", "diskusage"),
    ("docker_image", "dockerimage"),
    ("docker_network_type", "dockernetworktype"),
    ("docker_override_entrypoint", "dockeroverrideentrypoint"),
    ("docker_pull_policy", "dockerpullpolicy"),
    ("dont_encrypt_input_files", "dontencryptinputfiles"),
    ("dont_encrypt_output_files", "dontencryptoutputfiles"),
    ("email_attributes", "emailattributes"),
    ("encrypt_execute_directory", "encryptexecutedirectory"),
    ("encrypt_input_files", "encryptinputfiles"),
    ("encrypt_output_files", "encryptoutputfiles"),
    (
        "erase_output_and_error_on_restart",
        "eraseoutputanderroronrestart",
    ),
    ("executable", "cmd"),
    ("fetch_files", "fetchfiles"),
    ("file_remaps", "fileremaps"),
    ("getenv", "get_env"),
    ("gpus_maximum_capability", "gpusmaxcapability"),
    ("gpus_minimum_capability", "gpusmincapability"),
    ("gpus_minimum_memory", "gpusminmemory"),
    ("gpus_minimum_runtime", "gpusminruntime"),
    ("gs_access_key_id_file", "ec2accesskeyid"),
    ("gs_secret_access_key_file", "ec2secretaccesskey"),
    ("hold_kill_sig", "holdkillsig"),
    ("image_size", "imagesize"),
    ("initial_dir", "job_iwd"),
    ("initialdir", "iwd"),
    ("jar_files", "jarfiles"),
    ("job_ad_information_attrs", "jobadinformationattrs"),
    ("job_lease_duration", "jobleaseduration"),
    ("job_machine_attrs", "jobmachineattrs"),
    (
        "job_machine_attrs_history_length",
        "jobmachineattrshistorylength",
    ),
    ("job_max_vacate_time", "jobmaxvacatetime"),
    ("jobset", "jobsetname"),
    ("keep_claim_idle", "keepclaimidle"),
    ("kill_sig", "killsig"),
    ("kill_sig_timeout", "killsigtimeout"),
    ("leave_in_queue", "leavejobinqueue"),
    ("load_profile", "loadprofile"),
    ("local_files", "localfiles"),
    ("log", "userlog"),
    ("log_xml", "userlogusexml"),
    ("manifest", "manifestdesired"),
    ("manifest_dir", "manifestdir"),
    ("match_list_length", "lastmatchlistlength"),
    ("max_idle", "jobmaterializemaxidle"),
    ("max_idle", "materialize_max_idle"),
    ("max_job_retirement_time", "maxjobretirementtime"),
    ("max_materialize", "jobmaterializelimit"),
    ("max_retries", "jobmaxretries"),
    ("max_transfer_input_mb", "maxtransferinputmb"),
    ("max_transfer_output_mb", "maxtransferoutputmb"),
    ("next_job_start_delay", "nextjobstartdelay"),
    ("nice_user", "niceuser"),
    ("noop_job", "isnoopjob"),
    ("noop_job_exit_code", "noopjobexitcode"),
    ("noop_job_exit_signal", "noopjobexitsignal"),
    ("notification", "jobnotification"),
    ("notify_user", "notifyuser"),
    ("on_exit_hold", "onexithold"),
    ("on_exit_hold_reason", "onexitholdreason"),
    ("on_exit_hold_subcode", "onexitholdsubcode"),
    ("on_exit_remove", "onexitremove"),
    ("output_destination", "outputdestination"),
    ("parallel_script_shadow", "parallelscriptshadow"),
    ("parallel_script_starter", "parallelscriptstarter"),
    ("periodic_hold", "periodichold"),
    ("periodic_hold_reason", "periodicholdreason"),
    ("periodic_hold_subcode", "periodicholdsubcode"),
    ("periodic_release", "periodicrelease"),
    ("periodic_remove", "periodicremove"),
    ("periodic_vacate", "periodicvacate"),
    ("preserve_relative_paths", "preserverelativepaths"),
    ("prio", "jobprio"),
    ("priority", "jobprio"),
    ("rank", "preferences"),
    ("remote_initialdir", "remoteiwd"),
    ("remove_kill_sig", "removekillsig"),
    ("request_cpus", "requestcpus"),
    ("request_disk", "requestdisk"),
    ("request_gpus", "requestgpus"),
    ("request_memory", "requestmemory"),
    ("require_gpus", "requiregpus"),
    ("run_as_owner", "runasowner"),
    ("s3_access_key_id_file", "ec2accesskeyid"),
    ("s3_secret_access_key_file", "ec2secretaccesskey"),
    ("scitokens_file", "scitokensfile"),
    ("should_transfer_files", "shouldtransferfiles"),
    ("skip_if_dataflow", "skipifdataflow"),
    ("stack_size", "stacksize"),
    ("starter_debug", "jobstarterdebug"),
    ("starter_log", "jobstarterlog"),
    ("stream_error", "streamerr"),
    ("stream_input", "streamin"),
    ("stream_output", "streamout"),
    ("submit_event_notes", "submiteventnotes"),
    ("submit_event_user_notes", "submiteventusernotes"),
    ("success_exit_code", "jobsuccessexitcode"),
    ("tool_daemon_arguments", "tooldaemonargs"),
    ("tool_daemon_cmd", "tooldaemoncmd"),
    ("tool_daemon_error", "tooldaemonerror"),
    ("tool_daemon_input", "tooldaemoninput"),
    ("tool_daemon_output", "tooldaemonoutput"),
    ("transfer_checkpoint_files", "transfercheckpoint"),
    ("transfer_container", "transfercontainer"),
    ("transfer_error", "transfererr"),
    ("transfer_executable", "transferexecutable"),
    ("transfer_input", "transferin"),
    ("transfer_input_files", "transferinputfiles"),
    ("transfer_output", "transferout"),
    ("transfer_output_files", "transferoutputfiles"),
    ("transfer_output_remaps", "transferoutputremaps"),
    ("transfer_plugins", "transferplugins"),
    ("ulog_execute_attrs", "userlogexecuteeventattrs"),
    ("universe", "jobuniverse"),
    ("use_oauth_services", "useoauthservices"),
    ("use_scitokens", "use_scitoken"),
    ("want_graceful_removal", "wantgracefulremoval"),
    ("want_io_proxy", "wantioproxy"),
    ("when_to_transfer_output", "whentotransferoutput"),
];

/// The command `name` (lower case) is the alias of, if any.
fn command_of_alias(name: &str) -> Option<&'static str> {
    ALIASES.iter().find(|(_, a)| *a == name).map(|(c, _)| *c)
}

/// The aliases of `command` (lower case): a binary search, as ALIASES is
/// sorted by command (the job builder asks for every command it knows,
/// given or not).
fn aliases_of(command: &str) -> impl Iterator<Item = &'static str> {
    let from = ALIASES.partition_point(|(c, _)| *c < command);
    ALIASES[from..]
        .iter()
        .take_while(move |(c, _)| *c == command)
        .map(|(_, a)| *a)
}

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
