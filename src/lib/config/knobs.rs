//! The table of every knob tern reads: name, default, type and a one-line
//! description. It is the single source of defaults (loaded before any file)
//! and of the knob list in tern_config(5).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KnobType {
    String,
    Path,
    Bool,
    Int,
    Real,
    Expr,
    List,
}

impl KnobType {
    pub fn name(self) -> &'static str {
        match self {
            KnobType::String => "string",
            KnobType::Path => "path",
            KnobType::Bool => "boolean",
            KnobType::Int => "integer",
            KnobType::Real => "real",
            KnobType::Expr => "ClassAd expression",
            KnobType::List => "list",
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Knob {
    pub name: &'static str,
    pub default: &'static str,
    pub ty: KnobType,
    pub desc: &'static str,
}

const fn k(name: &'static str, default: &'static str, ty: KnobType, desc: &'static str) -> Knob {
    Knob {
        name,
        default,
        ty,
        desc,
    }
}

use KnobType::*;

/// Every knob, sorted by name.
pub static KNOBS: &[Knob] = &[
    k(
        "ALLOW_ROOT_JOBS",
        "false",
        Bool,
        "Whether a job whose owner is root (uid or gid 0) may run as root. Without it a job runs as root only from root's own personal queue (SHARED_QUEUE false and the queue's database owned by root: root submitted there); anywhere else (shared mode, or a root pass over another user's queue, where that user could have written Owner = \"root\" into their own database) such a job is held with code 23. Read only from the system configuration in shared mode; setting it there lets anyone who can write a queue row run as root. See tern_security(7). HTCondor has no such knob: it never runs a job as root.",
    ),
    k(
        "APPEND_REQUIREMENTS",
        "",
        Expr,
        "Clause appended to the Requirements of every submitted job.",
    ),
    k(
        "APPEND_REQ_VANILLA",
        "",
        Expr,
        "Clause appended to the Requirements of vanilla-universe jobs.",
    ),
    k(
        "ARCH",
        "$(DETECTED_ARCH)",
        String,
        "This machine's architecture as HTCondor names it (X86_64, aarch64, ...).",
    ),
    k(
        "CONDOR_FSYNC",
        "true",
        Bool,
        "Whether tern syncs to disk what must survive a power cut: tern_submit's commit (the write-ahead log is synced before it reports success) and each write of a job event log. False trades the last moments before a power cut or kernel crash for speed (on tmpfs, or where jobs can be resubmitted); the queue is never left corrupt either way.",
    ),
    k(
        "CONDOR_Q_ONLY_MY_JOBS",
        "true",
        Bool,
        "Whether tern_q without job arguments or -allusers shows only the caller's jobs (as condor_q 24 does).",
    ),
    k(
        "DEFAULT_PRIO_FACTOR",
        "1000",
        Real,
        "Priority factor given to a submitter when the accountant first sees it (kept after).",
    ),
    k(
        "DISK",
        "",
        Int,
        "KiB of disk this machine offers; empty means the free space under EXECUTE.",
    ),
    k(
        "EXECUTE",
        "$(SPOOL)/execute",
        Path,
        "The directory under which each run gets its own scratch directory (the job's sandbox), dir_<pid>, removed when the run ends; its free space is the machine's Disk.",
    ),
    k(
        "FETCHWORKDELAY",
        "",
        Expr,
        "FetchWorkDelay: seconds between a slot's fetch-work hook runs, an expression over the slot ad (MY) and its current job (TARGET); undefined or not a number means 300. A slot also fetches at once when its job ends.",
    ),
    k(
        "FETCH_WORK_HOOK_TIMEOUT",
        "30",
        Int,
        "Seconds a fetch-work hook (FETCH_WORK, REPLY_FETCH, EVICT_CLAIM) may run before its process group is killed and the fetch counts as failed; tern-specific, HTCondor has no limit.",
    ),
    k(
        "FILESYSTEM_DOMAIN",
        "$(FULL_HOSTNAME)",
        String,
        "Machines sharing this value share a file system.",
    ),
    k(
        "FULL_HOSTNAME",
        "$(DETECTED_HOSTNAME)",
        String,
        "This machine's fully qualified host name.",
    ),
    k(
        "GRIDMANAGER",
        "",
        Path,
        "The tern_gridmanager program; empty means the one installed beside the tool that starts it.",
    ),
    k(
        "GRIDMANAGER_JOB_PROBE_INTERVAL",
        "1",
        Int,
        "Seconds between a gridmanager's status polls of its grid jobs (one squeue for all of an owner's Slurm jobs, cheap for the controller); HTCondor's default is 60, which would add up to a minute to every job on a local Slurm.",
    ),
    k(
        "GRIDMANAGER_MAX_SUBMITTED_JOBS_PER_RESOURCE",
        "1000",
        Int,
        "Grid jobs a gridmanager keeps submitted to Slurm at once; more wait Idle.",
    ),
    k(
        "GRIDMANAGER_STATUS_UNKNOWN_TIME",
        "900",
        Int,
        "Seconds without a status of a submitted grid job before CurrentStatusUnknown and event 029 (HTCondor's fixed 900).",
    ),
    k(
        "HISTORY_MAX_JOBS",
        "100000",
        Int,
        "Jobs kept in the queue's history; the oldest completions go first, down to nine tenths of it, when a job going to history takes it past.",
    ),
    k(
        "IMMUTABLE_JOB_ATTRS",
        "",
        List,
        "Job attributes nobody may change once a job is queued, besides Owner, User, OwnerUid, ClusterId, ProcId, JobUniverse, JobStatus, MyType and TargetType.",
    ),
    k(
        "JOB_RENICE_INCREMENT",
        "0",
        Expr,
        "How much nicer than its shadow a job runs: evaluated in the job ad (a real truncated, a boolean 0 or 1), clamped to 0-19; a value that is no number gives 10. Not for scheduler universe jobs (SCHED_UNIV_RENICE_INCREMENT).",
    ),
    k(
        "JOB_ROUTER_DEFAULTS",
        "",
        String,
        "Old-syntax route defaults (a ClassAd) merged under each JOB_ROUTER_ENTRIES ad; read only when JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES is true.",
    ),
    k(
        "JOB_ROUTER_DEFAULT_MAX_IDLE_JOBS_PER_ROUTE",
        "50",
        Int,
        "MaxIdleJobs of a route that sets none; a negative value is no idle limit.",
    ),
    k(
        "JOB_ROUTER_DEFAULT_MAX_JOBS_PER_ROUTE",
        "100",
        Int,
        "MaxJobs of a route that sets none.",
    ),
    k(
        "JOB_ROUTER_ENTRIES",
        "",
        String,
        "Old-syntax routes, a list of ClassAds; read only when JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES is true.",
    ),
    k(
        "JOB_ROUTER_ENTRIES_FILE",
        "",
        Path,
        "A file of old-syntax routes, read after JOB_ROUTER_ENTRIES when JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES is true.",
    ),
    k(
        "JOB_ROUTER_HOOK_KEYWORD",
        "",
        String,
        "The hook keyword of jobs without HookKeyword: the router runs <KEYWORD>_HOOK_TRANSLATE_JOB, _UPDATE_JOB_INFO, _JOB_FINALIZE and _JOB_CLEANUP.",
    ),
    k(
        "JOB_ROUTER_HOOK_TIMEOUT",
        "120",
        Int,
        "Seconds a router hook may run before it is killed and counts as failed; tern-specific, HTCondor has no limit.",
    ),
    k(
        "JOB_ROUTER_LOG",
        "$(SPOOL)/JobRouterLog",
        Path,
        "The file tern_job_router appends what each pass did to; empty for none.",
    ),
    k(
        "JOB_ROUTER_MAX_JOBS",
        "-1",
        Int,
        "The most jobs the router manages at once over all routes; negative for no limit.",
    ),
    k(
        "JOB_ROUTER_NAME",
        "jobrouter",
        String,
        "The router's name, written as RoutedBy and ManagedManager; must not be empty.",
    ),
    k(
        "JOB_ROUTER_POST_ROUTE_TRANSFORM_NAMES",
        "",
        List,
        "Transforms (JOB_ROUTER_TRANSFORM_<name>) applied to every routed copy after its route, in order.",
    ),
    k(
        "JOB_ROUTER_PRE_ROUTE_TRANSFORM_NAMES",
        "",
        List,
        "Transforms (JOB_ROUTER_TRANSFORM_<name>) applied to every routed copy before its route, in order.",
    ),
    k(
        "JOB_ROUTER_RELEASE_ON_HOLD",
        "true",
        Bool,
        "When a source held because its routed copy was held is given back, release it to Idle.",
    ),
    k(
        "JOB_ROUTER_ROUND_ROBIN_SELECTION",
        "false",
        Bool,
        "Spread jobs over every accepting route that matches, instead of taking the first in JOB_ROUTER_ROUTE_NAMES order.",
    ),
    k(
        "JOB_ROUTER_ROUTE_NAMES",
        "",
        List,
        "The enabled routes, in the order they are tried; each is JOB_ROUTER_ROUTE_<name> in transform syntax. Routes not listed are disabled.",
    ),
    k(
        "JOB_ROUTER_SOURCE_JOB_CONSTRAINT",
        "",
        Expr,
        "Only jobs matching this are routed; when set, routes need no REQUIREMENTS of their own.",
    ),
    k(
        "JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES",
        "false",
        Bool,
        "Also read routes in the old JOB_ROUTER_DEFAULTS / JOB_ROUTER_ENTRIES syntax.",
    ),
    k(
        "JOB_TRANSFORM_NAMES",
        "",
        List,
        "Transforms (JOB_TRANSFORM_<name>) applied in order to every submitted job.",
    ),
    k(
        "KEEP_SANDBOX",
        "false",
        Bool,
        "Keep each run's sandbox under EXECUTE after the run ends, for debugging; tern-specific, HTCondor always removes it.",
    ),
    k(
        "KILLING_TIMEOUT",
        "30",
        Int,
        "Seconds between a job's KillSig and SIGKILL when the job sets no job_max_vacate_time.",
    ),
    k(
        "LOCAL_CONFIG_DIR",
        "",
        List,
        "Directories whose files are read, in sorted order, before LOCAL_CONFIG_FILE.",
    ),
    k(
        "LOCAL_CONFIG_DIR_EXCLUDE_REGEXP",
        r"^((\..*)|(.*~)|(#.*)|(.*\.rpmsave)|(.*\.rpmnew)|(.*\.dpkg-.*)|(.*\.pl)|(.*\.py)|(.*\.sh))$",
        String,
        "Files in LOCAL_CONFIG_DIR whose names match this regular expression are skipped.",
    ),
    k(
        "LOCAL_CONFIG_FILE",
        "",
        List,
        "Files read after LOCAL_CONFIG_DIR, left to right; one entry ending in '|' is a command whose output is read.",
    ),
    k(
        "MAX_JOBS_PER_OWNER",
        "",
        Int,
        "Jobs one owner may have in the queue; a submission that would pass it is refused whole. Empty is no limit (a personal queue is its owner's alone); the shared package's configuration sets HTCondor's default, 100000.",
    ),
    k(
        "MAX_JOBS_PER_SUBMISSION",
        "",
        Int,
        "Jobs one tern_submit may queue; a submission over it is refused whole. Empty is no limit (a personal queue is its owner's alone); the shared package's configuration sets HTCondor's default, 20000.",
    ),
    k(
        "MAX_TRANSFER_INPUT_MB",
        "-1",
        Expr,
        "Largest input sandbox, in MiB, a job may have (evaluated with the job as MY; a job's MaxTransferInputMB overrides it); a job whose TransferInputSizeMB is larger is held when it is submitted (code 32). -1 is no limit.",
    ),
    k(
        "MAX_TRANSFER_OUTPUT_MB",
        "-1",
        Expr,
        "Largest output, in MiB, a job may transfer back (evaluated with the job as MY; a job's MaxTransferOutputMB overrides it); -1 is no limit. What is enforced at run time is described under FILE TRANSFER in tern_submit(1).",
    ),
    k(
        "MEMORY",
        "",
        Int,
        "MiB of memory this machine offers; empty means the detected physical memory.",
    ),
    k(
        "MIN_OWNER_UID",
        "1000",
        Int,
        "In shared mode, the lowest uid a job may run as; a job whose Owner has a smaller uid is held (code 23). tern-specific.",
    ),
    k(
        "NEGOTIATE_ON_EXIT",
        "true",
        Bool,
        "Whether a shadow starts a negotiation pass when its job ends and its claim is not reused.",
    ),
    k(
        "NEGOTIATE_ON_SUBMIT",
        "true",
        Bool,
        "Whether tern_submit starts a negotiation pass in the background.",
    ),
    k(
        "NEGOTIATOR_INTERVAL",
        "60",
        Int,
        "Seconds between passes of tern_negotiate -loop.",
    ),
    k(
        "NEGOTIATOR_POST_JOB_RANK",
        "(RemoteOwner =?= UNDEFINED) * (ifThenElse(isUndefined(KFlops), 1000, Kflops) - SlotID - 1.0e10*(Offline=?=True))",
        Expr,
        "Ranks candidate slots after the job's Rank (slot is MY, job is TARGET).",
    ),
    k(
        "NEGOTIATOR_PRE_JOB_RANK",
        "(10000000 * My.Rank) + (1000000 * (RemoteOwner =?= UNDEFINED)) - (100000 * Cpus) - Memory",
        Expr,
        "Ranks candidate slots before the job's Rank (slot is MY, job is TARGET).",
    ),
    k(
        "NEGOTIATOR_USE_SLOT_WEIGHTS",
        "true",
        Bool,
        "Whether a claimed slot counts as its SLOT_WEIGHT in user priorities (else as 1).",
    ),
    k(
        "NICE_USER_ACCOUNTING_GROUP_NAME",
        "nice-user",
        String,
        "Accounting group of nice_user jobs; submitters named with this prefix get NICE_USER_PRIO_FACTOR.",
    ),
    k(
        "NICE_USER_PRIO_FACTOR",
        "1e10",
        Real,
        "Priority factor given to a new nice-user submitter.",
    ),
    k(
        "NUM_CPUS",
        "",
        Int,
        "Cpus this machine offers; empty means the detected number of cpus.",
    ),
    k(
        "NUM_SLOTS",
        "",
        Int,
        "Number of static one-cpu slots; empty (and no NUM_SLOTS_TYPE_<n>) means one partitionable slot owning everything.",
    ),
    k(
        "OPSYS",
        "LINUX",
        String,
        "This machine's operating system as HTCondor names it.",
    ),
    k(
        "PERIODIC_EXPR_INTERVAL",
        "60",
        Int,
        "Seconds between two evaluations of the periodic expressions (PeriodicHold, PeriodicRelease, PeriodicRemove) of a job that has not changed (a changed job is evaluated by the next pass); 0 evaluates every job in every pass.",
    ),
    k(
        "PREEMPTION_RANK",
        "(RemoteUserPrio * 1000000) - ifThenElse(isUndefined(TotalJobRuntime), 0, TotalJobRuntime)",
        Expr,
        "Orders the candidate victims of preemption, best first (the slot is MY, the preempting job TARGET).",
    ),
    k(
        "PREEMPTION_REQUIREMENTS",
        "",
        Expr,
        "When set and true (the slot is MY with RemoteUserPrio, the waiting job TARGET with SubmitterUserPrio), a pass may vacate a job of a submitter above its fair share for one below it; unset, nothing is preempted.",
    ),
    k(
        "PRIORITY_HALFLIFE",
        "86400",
        Real,
        "Seconds in which a submitter's real priority moves halfway to its current usage.",
    ),
    k(
        "PROTECTED_JOB_ATTRS",
        "",
        List,
        "Job attributes only QUEUE_SUPER_USERS may change once a job is queued (tern_qedit).",
    ),
    k(
        "QUEUE_ALL_USERS_TRUSTED",
        "false",
        Bool,
        "Whether every user may change every user's jobs (the owner check is off).",
    ),
    k(
        "QUEUE_CHECK_INTERVAL",
        "3600",
        Int,
        "Seconds between two checks of every page of the queue database (PRAGMA quick_check) by tern_negotiate; 0 never checks.",
    ),
    k(
        "QUEUE_LOG_MAX_RECORDS",
        "1000000",
        Int,
        "Records kept in the queue's transaction log; never trimmed below a registered follower, and the newest record always stays (it carries the log's sequence on). The log may pass it by a hundredth before it is trimmed to nine tenths.",
    ),
    k(
        "QUEUE_SUPER_USERS",
        "",
        List,
        "Users who may change any user's jobs and the user priorities; %group names the members a group lists (gr_mem). In personal mode the SPOOL owner may also set user priorities.",
    ),
    k(
        "RANK",
        "0",
        Expr,
        "The slot's preference among jobs (the slot is MY, the job TARGET).",
    ),
    k(
        "SCHEDD_CRON_CONFIG_VAL",
        "",
        Path,
        "Exported to every SCHEDD_CRON job as the environment variable SCHEDD_CRON_CONFIG_VAL; empty means the tern_config_val installed beside tern_cron.",
    ),
    k(
        "SCHEDD_CRON_JOBLIST",
        "",
        List,
        "The schedd cron jobs (daemon ClassAd hooks), each configured by SCHEDD_CRON_<name>_EXECUTABLE, _ARGS, _ENV, _CWD, _MODE (Periodic, WaitForExit, OneShot), _PERIOD, _PREFIX, _KILL, _RECONFIG, _RECONFIG_RERUN, _JOB_LOAD, _CONDITION and tern's _TIMEOUT; run by tern_cron, see tern_hooks(7).",
    ),
    k(
        "SCHEDD_CRON_LOG_NON_ZERO_EXIT",
        "false",
        Bool,
        "Whether the stdout and stderr of a SCHEDD_CRON job that exits non-zero go to $(SPOOL)/hooks/cron.log.",
    ),
    k(
        "SCHEDD_CRON_MAX_JOB_LOAD",
        "0.1",
        Real,
        "The most SCHEDD_CRON job load (the sum of the running jobs' _JOB_LOAD, 0.01 each by default) at once; a job is started only within it.",
    ),
    k(
        "SCHEDD_INTERVAL",
        "60",
        Int,
        "Seconds between negotiation passes as jobs see it (ScheddInterval); HTCondor's default is 300, tern's pass runs every minute.",
    ),
    k(
        "SCHEDD_NAME",
        "",
        String,
        "The scheduler ad's Name (tern_status -schedd); empty means FULL_HOSTNAME.",
    ),
    k(
        "SCHED_UNIV_RENICE_INCREMENT",
        "0",
        Int,
        "How much nicer than its shadow a scheduler universe job runs (0-19).",
    ),
    k(
        "SHADOW",
        "",
        Path,
        "The tern_shadow program; empty means the one installed beside the tool that starts it.",
    ),
    k(
        "SHADOW_LINGER_MSEC",
        "250",
        Int,
        "Milliseconds a shadow whose job ended, with no idle job in the queue, keeps its claim Claimed/Idle and watches for a new job of the same submitter to run at once (a submit then starts no pass); any other idle job ends the wait; 0 never waits. tern-specific.",
    ),
    k(
        "SHARED_QUEUE",
        "false",
        Bool,
        "Whether SPOOL is one queue shared by every user of this machine (shared mode, see tern_security(7)); read only from the system configuration. tern-specific.",
    ),
    k(
        "SLOT_WEIGHT",
        "Cpus",
        Expr,
        "What a claimed slot counts for in user priorities, evaluated on the slot ad.",
    ),
    k(
        "SPOOL",
        "$ENV(XDG_DATA_HOME:$ENV(HOME)/.local/share)/tern",
        Path,
        "Directory holding the queue database and everything tern keeps.",
    ),
    k(
        "STALE_LOCK_SECONDS",
        "20",
        Int,
        "Shared mode: a root pass waiting for the queue's write lock kills another user's process that has held it this many seconds (a stopped one at once) and logs the kill; the killed transaction rolls back. tern's; HTCondor's schedd alone writes its queue.",
    ),
    k(
        "START",
        "true",
        Expr,
        "Whether a slot accepts a job (the slot is MY, the job TARGET); part of every slot's Requirements.",
    ),
    k(
        "STARTD_ATTRS",
        "",
        List,
        "Further configuration macros copied into every slot ad.",
    ),
    k(
        "STARTD_CRON_AUTOPUBLISH",
        "",
        String,
        "HTCondor's choice of when cron output is sent to the collector; tern has none (every pass reads the newest output), so only Never (or empty) is accepted.",
    ),
    k(
        "STARTD_CRON_CONFIG_VAL",
        "",
        Path,
        "Exported to every STARTD_CRON job as the environment variable STARTD_CRON_CONFIG_VAL; empty means the tern_config_val installed beside tern_cron.",
    ),
    k(
        "STARTD_CRON_JOBLIST",
        "",
        List,
        "The startd cron jobs (daemon ClassAd hooks), each configured by STARTD_CRON_<name>_EXECUTABLE, _ARGS, _ENV, _CWD, _MODE (Periodic, WaitForExit, OneShot), _PERIOD, _PREFIX, _KILL, _RECONFIG, _RECONFIG_RERUN, _JOB_LOAD, _CONDITION, _SLOTS and tern's _TIMEOUT; run by tern_cron, see tern_hooks(7).",
    ),
    k(
        "STARTD_CRON_LOG_NON_ZERO_EXIT",
        "false",
        Bool,
        "Whether the stdout and stderr of a STARTD_CRON job that exits non-zero go to $(SPOOL)/hooks/cron.log.",
    ),
    k(
        "STARTD_CRON_MAX_JOB_LOAD",
        "0.1",
        Real,
        "The most STARTD_CRON job load (the sum of the running jobs' _JOB_LOAD, 0.01 each by default) at once; a job is started only within it.",
    ),
    k(
        "STARTD_JOB_HOOK_KEYWORD",
        "",
        String,
        "The fetch-work hook keyword of slots without SLOT<N>_JOB_HOOK_KEYWORD: the pass runs <KEYWORD>_HOOK_FETCH_WORK, _REPLY_FETCH and _EVICT_CLAIM for them (tern_hooks(7)).",
    ),
    k(
        "STARTD_RANK_PREEMPTION",
        "false",
        Bool,
        "Whether a slot's RANK preempts a running job for a waiting one it prefers, as HTCondor's startd RANK does; off in tern unless set.",
    ),
    k(
        "STARTER_DEFAULT_JOB_HOOK_KEYWORD",
        "",
        String,
        "The starter hook keyword of a job whose HookKeyword is unset or names no configured <KEYWORD>_HOOK_*; see tern_hooks(7).",
    ),
    k(
        "STARTER_INITIAL_UPDATE_INTERVAL",
        "8",
        Int,
        "Seconds after a job starts before its first usage update and its first <KEYWORD>_HOOK_UPDATE_JOB_INFO.",
    ),
    k(
        "STARTER_JOB_ENVIRONMENT",
        "",
        String,
        "Environment variables every job starts with, before its own environment, in the syntax of the submit command environment.",
    ),
    k(
        "STARTER_JOB_HOOK_KEYWORD",
        "",
        String,
        "The starter hook keyword of every job, whatever its HookKeyword: the shadow runs <KEYWORD>_HOOK_PREPARE_JOB_BEFORE_TRANSFER, _PREPARE_JOB, _UPDATE_JOB_INFO and _JOB_EXIT; see tern_hooks(7).",
    ),
    k(
        "STARTER_NUM_THREADS_ENV_VARS",
        "CUBACORES GOMAXPROCS JULIA_NUM_THREADS MKL_NUM_THREADS NUMEXPR_NUM_THREADS OMP_NUM_THREADS OMP_THREAD_LIMIT OPENBLAS_NUM_THREADS PYTHON_CPU_COUNT ROOT_MAX_THREADS TF_LOOP_PARALLEL_ITERATIONS TF_NUM_THREADS",
        List,
        "Variables set to the slot's cpus in a job's environment when the job left them empty.",
    ),
    k(
        "STARTER_UPDATE_INTERVAL",
        "300",
        Int,
        "Seconds between a running job's usage updates (and its <KEYWORD>_HOOK_UPDATE_JOB_INFO runs).",
    ),
    k(
        "SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES",
        "",
        String,
        "should_transfer_files for a job whose submit description gives none (YES, NO, IF_NEEDED or their other names); empty or invalid means IF_NEEDED. Like a default, IF_NEEDED from here becomes YES with when_to_transfer_output = ON_EXIT_OR_EVICT.",
    ),
    k(
        "SUBMIT_MAX_INPUT_BYTES",
        "67108864",
        Int,
        "The largest submit description tern_submit reads (tern's own knob); a longer one is refused and nothing is queued.",
    ),
    k(
        "SUBMIT_MAX_VALUE_BYTES",
        "1048576",
        Int,
        "The longest value one line of a submit description may give (tern's own knob); a longer one is refused and nothing is queued.",
    ),
    k(
        "UID_DOMAIN",
        "$(FULL_HOSTNAME)",
        String,
        "Users with the same name in this domain are the same user.",
    ),
];

/// The knob called `name` (any case).
pub fn knob(name: &str) -> Option<&'static Knob> {
    // KNOBS is sorted by its upper-case names (a test says so).
    let upper = |b: &u8| b.to_ascii_uppercase();
    KNOBS
        .binary_search_by(|k| k.name.bytes().cmp(name.as_bytes().iter().map(upper)))
        .ok()
        .map(|i| &KNOBS[i])
}

// `KnobType::String` shadows the standard `String` in this file, hence
// the full paths below.

/// The knob list of tern_config(5) in roff: one `.TP` paragraph per knob
/// with its name, type, default and description. The page holds this text
/// between `.\" BEGIN KNOBS` and `.\" END KNOBS`, and a test keeps the two
/// equal, so the manual cannot drift from the table.
pub fn man_section() -> std::string::String {
    let mut out = std::string::String::new();
    for k in KNOBS {
        out.push_str(".TP\n");
        out.push_str(&format!(".B {}\n", roff_text(k.name)));
        let default = if k.default.is_empty() {
            "empty (not defined)".to_owned()
        } else {
            format!("\\fB{}\\fR", roff_breakable(&roff_value(k.default)))
        };
        out.push_str(&format!(
            "\\fI{}\\fR, default {default}\n",
            roff_text(k.ty.name())
        ));
        out.push_str(".br\n");
        out.push_str(&roff_line(&roff_text(k.desc)));
        out.push('\n');
    }
    out
}

/// Running text with roff's escape character escaped.
fn roff_text(s: &str) -> std::string::String {
    s.replace('\\', "\\e")
}

/// A value as typed: also `-` as a real minus, so that what is copied from
/// the page can be pasted into a file.
fn roff_value(s: &str) -> std::string::String {
    roff_text(s).replace('-', "\\-")
}

/// Lets a long unbroken value wrap after `|`, `/` and `)`.
fn roff_breakable(s: &str) -> std::string::String {
    let mut out = std::string::String::with_capacity(s.len() + s.len() / 4);
    for c in s.chars() {
        out.push(c);
        if matches!(c, '|' | '/' | ')') {
            out.push_str("\\:");
        }
    }
    out
}

/// A line of running text that roff will not take for a request.
fn roff_line(s: &str) -> std::string::String {
    if s.starts_with('.') || s.starts_with('\'') {
        format!("\\&{s}")
    } else {
        s.to_owned()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_knob_is_found_in_any_case_and_nothing_else() {
        for k in super::KNOBS {
            assert_eq!(super::knob(k.name).map(|f| f.name), Some(k.name));
            assert_eq!(
                super::knob(&k.name.to_ascii_lowercase()).map(|f| f.name),
                Some(k.name)
            );
            let mut extended = k.name.to_string();
            extended.push('_');
            assert!(super::knob(&extended).is_none_or(|f| f.name == extended));
        }
        for absent in ["", "A", "ZZZ", "SPOOL_", "_SPOOL", "SPOO"] {
            assert!(super::knob(absent).is_none(), "{absent}");
        }
    }

    #[test]
    fn sorted_upper_case_and_described() {
        for w in super::KNOBS.windows(2) {
            assert!(w[0].name < w[1].name, "{} before {}", w[0].name, w[1].name);
        }
        for k in super::KNOBS {
            assert_eq!(k.name, k.name.to_ascii_uppercase());
            assert!(k.desc.ends_with('.'), "{}", k.name);
        }
    }
}
