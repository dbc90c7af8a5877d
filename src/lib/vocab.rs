//! HTCondor's vocabulary: the numbers and names every layer speaks.
//!
//! JobStatus values, universes, hold and vacate reason codes, signal names
//! and the requests a tool leaves for a job's shadow are defined here once,
//! low in the house (only `classad` is below it), so the submit side, the
//! queue, the pass, the shadow and the tools cannot drift apart. The
//! numbers are HTCondor's (`condor_holdcodes.h`, `proc.h`); the queue
//! stores them as plain integers, so a database written by HTCondor's
//! numbering stays readable.

use std::fmt;

use crate::classad::Expr;

/// A job's `JobStatus`.
///
/// SQL that selects by status writes the number as a literal
/// (`status = 1 /* Idle */`), not as a bound parameter: with the value
/// bound, SQLite prepares such a statement again at each run, which
/// doubled the parse work of a shadow's loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(i64)]
pub enum JobStatus {
    Idle = 1,
    Running = 2,
    Removed = 3,
    Completed = 4,
    Held = 5,
    TransferringOutput = 6,
    Suspended = 7,
}

impl JobStatus {
    /// Every status, in numeric order.
    pub const ALL: [JobStatus; 7] = [
        JobStatus::Idle,
        JobStatus::Running,
        JobStatus::Removed,
        JobStatus::Completed,
        JobStatus::Held,
        JobStatus::TransferringOutput,
        JobStatus::Suspended,
    ];

    /// The number stored in `JobStatus`.
    pub const fn code(self) -> i64 {
        self as i64
    }

    /// The status with this number, if HTCondor defines one.
    pub fn from_code(code: i64) -> Option<JobStatus> {
        JobStatus::ALL.into_iter().find(|s| s.code() == code)
    }

    /// The one-letter code condor_q prints (`I`, `R`, `X`, `C`, `H`, `>`, `S`).
    pub const fn letter(self) -> &'static str {
        match self {
            JobStatus::Idle => "I",
            JobStatus::Running => "R",
            JobStatus::Removed => "X",
            JobStatus::Completed => "C",
            JobStatus::Held => "H",
            JobStatus::TransferringOutput => ">",
            JobStatus::Suspended => "S",
        }
    }

    /// condor_q's letter for any stored number; `?` for one HTCondor does
    /// not define.
    pub fn letter_of(code: i64) -> &'static str {
        JobStatus::from_code(code).map_or("?", JobStatus::letter)
    }

    /// HTCondor's name for the status (`Idle`, `Running`, ...), as
    /// `-better-analyze` and the totals line spell it.
    pub const fn name(self) -> &'static str {
        match self {
            JobStatus::Idle => "Idle",
            JobStatus::Running => "Running",
            JobStatus::Removed => "Removed",
            JobStatus::Completed => "Completed",
            JobStatus::Held => "Held",
            JobStatus::TransferringOutput => "Transferring Output",
            JobStatus::Suspended => "Suspended",
        }
    }

    /// A job in this status holds a slot (its shadow is alive).
    pub const fn is_active(self) -> bool {
        matches!(
            self,
            JobStatus::Running | JobStatus::TransferringOutput | JobStatus::Suspended
        )
    }

    /// The status as a ClassAd literal.
    pub fn expr(self) -> Expr {
        Expr::int(self.code())
    }
}

impl fmt::Display for JobStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A job's `JobUniverse`. tern runs vanilla, scheduler and local universe
/// jobs; the others are named so that submit can refuse them clearly and
/// the tools can print ads written elsewhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i64)]
pub enum Universe {
    Standard = 1,
    Vanilla = 5,
    Scheduler = 7,
    Grid = 9,
    Java = 10,
    Parallel = 11,
    Local = 12,
    Vm = 13,
}

impl Universe {
    const ALL: [Universe; 8] = [
        Universe::Standard,
        Universe::Vanilla,
        Universe::Scheduler,
        Universe::Grid,
        Universe::Java,
        Universe::Parallel,
        Universe::Local,
        Universe::Vm,
    ];

    /// The number stored in `JobUniverse`.
    pub const fn code(self) -> i64 {
        self as i64
    }

    /// The universe with this number.
    pub fn from_code(code: i64) -> Option<Universe> {
        Universe::ALL.into_iter().find(|u| u.code() == code)
    }

    /// The universe a submit file's `universe` names, in the spellings
    /// condor_submit takes: its name (any case) or its number as written
    /// (`5`, not `05`).
    pub fn from_submit(text: &str) -> Option<Universe> {
        Universe::ALL
            .into_iter()
            .find(|u| text.eq_ignore_ascii_case(u.name()) || text == u.code().to_string())
    }

    /// The submit-file name (`vanilla`, `scheduler`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Universe::Standard => "standard",
            Universe::Vanilla => "vanilla",
            Universe::Scheduler => "scheduler",
            Universe::Grid => "grid",
            Universe::Java => "java",
            Universe::Parallel => "parallel",
            Universe::Local => "local",
            Universe::Vm => "vm",
        }
    }

    /// Scheduler and local universe jobs run on the submit machine itself,
    /// without a slot of the pool.
    pub const fn runs_on_submit_host(self) -> bool {
        matches!(self, Universe::Scheduler | Universe::Local)
    }
}

/// Which job attributes a user may set, by class: HTCondor's
/// `SYSTEM_IMMUTABLE_JOB_ATTRS` and `SYSTEM_SECURE_JOB_ATTRS`
/// (`param_info.in`), with tern's additions. Here, below `submit` and
/// `queue`, so that the submit side drops what the queue would refuse and
/// both read one list. The configuration adds to them
/// (IMMUTABLE_JOB_ATTRS, PROTECTED_JOB_ATTRS: see `queue::Authority`).
pub mod job_attrs {
    /// Never changed once the job is queued, by anyone (HTCondor's
    /// `ModifyAttrCheck`); `OwnerUid` is tern's, set by the queue from the
    /// submitter's real uid, and what the root shadow checks the Owner
    /// against.
    pub const SYSTEM_IMMUTABLE: &[&str] = &[
        "Owner",
        "ClusterId",
        "JobUniverse",
        "ProcId",
        "MyType",
        "TargetType",
        "User",
        "OwnerUid",
        "OwnerUmask",
    ];

    /// What tern_qedit refuses besides the immutable ones, as immutable:
    /// condor_qedit's manual lists JobStatus (its 24.0 client lets it
    /// through; a user's JobStatus edit would bypass hold, release and the
    /// shadow), so tern refuses it.
    pub const QEDIT_IMMUTABLE: &[&str] = &["JobStatus"];

    /// Kept by the queue, the pass and the shadow, never by a user: a
    /// submit file's `+Attr` naming one is silently ignored (HTCondor's
    /// IGNORE_ATTEMPTS_TO_SET_SECURE_JOB_ATTRS), and tern_qedit refuses
    /// them. HTCondor's secure list first (the proxy and token fields,
    /// TotalSubmitProcs), then tern's bookkeeping: a forged ShadowPid,
    /// NumJobStarts or RemoteHost would mislead the pass or the shadow,
    /// and a forged JobStatus would queue a job as already running.
    pub const SYSTEM_SECURE: &[&str] = &[
        "x509userProxySubject",
        "x509UserProxyEmail",
        "x509UserProxyVOName",
        "x509UserProxyFirstFQAN",
        "x509UserProxyFQAN",
        "TotalSubmitProcs",
        "AuthTokenSubject",
        "AuthTokenIssuer",
        "AuthTokenGroups",
        "AuthTokenId",
        "AuthTokenScopes",
        "AuthTokenProject",
        "OsUser",
        "QDate",
        "EnteredCurrentStatus",
        "GlobalJobId",
        "NumJobStarts",
        "NumJobCompletions",
        "NumShadowStarts",
        "JobStartDate",
        "JobCurrentStartDate",
        "CompletionDate",
        "RemoteHost",
        "RemoteSlotId",
        "ShadowPid",
        "LastMatchTime",
        "HoldReasonCode",
        "HoldReasonSubCode",
        "RemoveReason",
    ];

    /// Attributes a submit file's `+Attr` (or `MY.Attr`) line cannot set:
    /// the secure ones, JobStatus (a job is queued idle, or held by
    /// `hold = true`) and OwnerUid (the queue's). They are dropped
    /// silently, as the schedd ignores a client's secure attributes.
    pub fn ignored_at_submit(name: &str) -> bool {
        is_in(SYSTEM_SECURE, name) || is_in(&["JobStatus", "OwnerUid", "OwnerUmask"], name)
    }

    /// Whether `name` is in `list` (attribute names ignore case).
    pub fn is_in(list: &[&str], name: &str) -> bool {
        list.iter().any(|a| a.eq_ignore_ascii_case(name))
    }
}

/// Who a job belongs to, as a root process acts for it (see
/// [`crate::sys::identity::JobOwner`]): its Owner, OwnerUid and
/// OwnerUmask, all three the queue's (immutable, never taken from a submit
/// file). A value that is not a literal is evaluated; one of the wrong
/// type counts as missing.
pub fn owner_of(ad: &crate::classad::ClassAd) -> crate::sys::identity::JobOwner {
    use crate::classad::Value;
    let value = |name: &str| match ad.get(name).map(|e| e.literal_value()) {
        None => None,
        Some(Some(v)) => Some(v.clone()),
        Some(None) => Some(crate::classad::eval_attr(
            &std::rc::Rc::new(ad.clone()),
            name,
        )),
    };
    let int = |name: &str| match value(name) {
        Some(Value::Int(i)) => Some(i),
        _ => None,
    };
    crate::sys::identity::JobOwner {
        name: match value("Owner") {
            Some(Value::Str(s)) => s.to_string(),
            _ => String::new(),
        },
        uid: int("OwnerUid"),
        umask: int("OwnerUmask"),
    }
}

/// `HoldReasonCode` values, and the vacate reason codes (1000 and up)
/// HTCondor records in `VacateReasonCode`; from `condor_holdcodes.h`.
pub mod hold_code {
    pub const UNSPECIFIED: i64 = 0;
    pub const USER_REQUEST: i64 = 1;
    pub const JOB_POLICY: i64 = 3;
    pub const JOB_POLICY_UNDEFINED: i64 = 5;
    pub const FAILED_TO_CREATE_PROCESS: i64 = 6;
    pub const UNABLE_TO_OPEN_OUTPUT: i64 = 7;
    pub const UNABLE_TO_OPEN_INPUT: i64 = 8;
    pub const TRANSFER_OUTPUT_ERROR: i64 = 12;
    pub const TRANSFER_INPUT_ERROR: i64 = 13;
    pub const IWD_ERROR: i64 = 14;
    pub const SUBMITTED_ON_HOLD: i64 = 15;
    pub const HOOK_PREPARE_JOB_FAILURE: i64 = 19;
    pub const MISSED_DEFERRED_EXECUTION_TIME: i64 = 20;
    pub const STARTD_HELD_JOB: i64 = 21;
    pub const UNABLE_TO_INIT_USER_LOG: i64 = 22;
    pub const FAILED_TO_ACCESS_USER_ACCOUNT: i64 = 23;
    pub const INVALID_CRON_SETTINGS: i64 = 25;
    pub const SYSTEM_POLICY: i64 = 26;
    pub const SYSTEM_POLICY_UNDEFINED: i64 = 27;
    pub const MAX_TRANSFER_INPUT_SIZE_EXCEEDED: i64 = 32;
    pub const MAX_TRANSFER_OUTPUT_SIZE_EXCEEDED: i64 = 33;
    pub const JOB_OUT_OF_RESOURCES: i64 = 34;

    /// Vacate reasons: why a running job was stopped without being held.
    pub const SYSTEM_POLICY_VACATE: i64 = 1001;
    /// A vacate by the job's own PeriodicVacate (JobPolicyVacate).
    pub const JOB_POLICY_VACATE: i64 = 1000;
    pub const USER_VACATE_JOB: i64 = 1004;
    pub const STARTER_ERROR: i64 = 1007;
    pub const STARTD_PREEMPTING_CLAIM_RANK: i64 = 1018;
    pub const STARTD_PREEMPTING_CLAIM_USER_PRIO: i64 = 1019;
}

/// Why a job is held: what `HoldReason`, `HoldReasonCode` and
/// `HoldReasonSubCode` say, carried as one value from where the hold is
/// decided to the transaction and the event log that record it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hold {
    pub reason: String,
    pub code: i64,
    pub subcode: i64,
}

impl Hold {
    pub fn new(reason: impl Into<String>, code: i64, subcode: i64) -> Hold {
        Hold {
            reason: reason.into(),
            code,
            subcode,
        }
    }
}

impl fmt::Display for Hold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (code {}, subcode {})",
            self.reason, self.code, self.subcode
        )
    }
}

/// The signals a submit file may name in `kill_sig`, `remove_kill_sig` and
/// `hold_kill_sig`, with their numbers on Linux. The shadow sends what this
/// table says, so a name submit accepts is a name the shadow knows.
pub const SIGNALS: &[(&str, i32)] = &[
    ("SIGHUP", libc::SIGHUP),
    ("SIGINT", libc::SIGINT),
    ("SIGQUIT", libc::SIGQUIT),
    ("SIGILL", libc::SIGILL),
    ("SIGTRAP", libc::SIGTRAP),
    ("SIGABRT", libc::SIGABRT),
    ("SIGBUS", libc::SIGBUS),
    ("SIGFPE", libc::SIGFPE),
    ("SIGKILL", libc::SIGKILL),
    ("SIGUSR1", libc::SIGUSR1),
    ("SIGSEGV", libc::SIGSEGV),
    ("SIGUSR2", libc::SIGUSR2),
    ("SIGPIPE", libc::SIGPIPE),
    ("SIGALRM", libc::SIGALRM),
    ("SIGTERM", libc::SIGTERM),
    ("SIGCHLD", libc::SIGCHLD),
    ("SIGCONT", libc::SIGCONT),
    ("SIGSTOP", libc::SIGSTOP),
    ("SIGTSTP", libc::SIGTSTP),
    ("SIGTTIN", libc::SIGTTIN),
    ("SIGTTOU", libc::SIGTTOU),
    ("SIGXCPU", libc::SIGXCPU),
    ("SIGXFSZ", libc::SIGXFSZ),
    ("SIGVTALRM", libc::SIGVTALRM),
    ("SIGPROF", libc::SIGPROF),
    ("SIGWINCH", libc::SIGWINCH),
];

/// A signal given as a name (`SIGTERM`, `sigterm`, or `TERM`) or a number
/// (`15`): its number, if the table knows it. Any number is taken as
/// given, as HTCondor sends a numeric `KillSig` unchecked.
pub fn signal_number(text: &str) -> Option<i32> {
    let t = text.trim();
    if let Ok(n) = t.parse::<i32>() {
        return Some(n);
    }
    let upper = t.to_ascii_uppercase();
    let bare = upper.strip_prefix("SIG").unwrap_or(&upper);
    SIGNALS
        .iter()
        .find(|(name, _)| &name[3..] == bare)
        .map(|&(_, n)| n)
}

/// The table's name for a signal given as submit accepts it: a number
/// (`15`) or a full name in any case (`sigterm`); `None` for one the table
/// does not know. As condor_submit, a bare `TERM` is not a signal name.
pub fn signal_name(text: &str) -> Option<&'static str> {
    let t = text.trim();
    match t.parse::<i32>() {
        Ok(n) => SIGNALS
            .iter()
            .find(|&&(_, k)| k == n)
            .map(|&(name, _)| name),
        Err(_) => SIGNALS
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(t))
            .map(|&(name, _)| name),
    }
}

/// What a tool or the pass asks of a running job's shadow. Stored in the
/// queue's `requests` table under [`Request::as_str`], which is also the
/// name a database written by earlier versions uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Request {
    /// tern_rm: stop the job (kill_sig, then SIGKILL) and remove it.
    Remove,
    /// tern_hold or a periodic hold: stop the job and hold it.
    Hold,
    /// tern_vacate_job: stop the job gracefully and requeue it.
    Vacate,
    /// tern_vacate_job -fast: SIGKILL at once and requeue.
    VacateFast,
    /// tern_suspend: SIGSTOP the job's processes.
    Suspend,
    /// tern_continue: SIGCONT them.
    Continue,
    /// The pass preempts the claim for a submitter with a better priority.
    Preempt,
    /// The pass preempts the claim for a job the slot's RANK prefers.
    PreemptRank,
    /// The job's PeriodicVacate became true: vacate it back to Idle.
    PolicyVacate,
}

impl Request {
    pub const ALL: [Request; 9] = [
        Request::Remove,
        Request::Hold,
        Request::Vacate,
        Request::VacateFast,
        Request::Suspend,
        Request::Continue,
        Request::Preempt,
        Request::PreemptRank,
        Request::PolicyVacate,
    ];

    /// The name stored in the queue.
    pub const fn as_str(self) -> &'static str {
        match self {
            Request::Remove => "remove",
            Request::Hold => "hold",
            Request::Vacate => "vacate",
            Request::VacateFast => "vacate-fast",
            Request::Suspend => "suspend",
            Request::Continue => "continue",
            Request::Preempt => "preempt",
            Request::PreemptRank => "preempt-rank",
            Request::PolicyVacate => "policy-vacate",
        }
    }

    /// The request stored under `name`.
    pub fn parse(name: &str) -> Option<Request> {
        Request::ALL.into_iter().find(|r| r.as_str() == name)
    }

    /// The request ends the run (everything but suspend and continue).
    pub const fn stops(self) -> bool {
        !matches!(self, Request::Suspend | Request::Continue)
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jobs_owner_is_read_from_its_three_attributes() {
        let ad = crate::classad::parse_ad("[Owner = \"alice\"; OwnerUid = 1001; OwnerUmask = 63]")
            .unwrap();
        let o = owner_of(&ad);
        assert_eq!(
            (o.name.as_str(), o.uid, o.umask),
            ("alice", Some(1001), Some(63))
        );
        let ad =
            crate::classad::parse_ad("[Owner = strcat(\"b\", \"ob\"); OwnerUid = \"x\"]").unwrap();
        let o = owner_of(&ad);
        assert_eq!((o.name.as_str(), o.uid, o.umask), ("bob", None, None));
    }

    #[test]
    fn status_codes_round_trip() {
        for s in JobStatus::ALL {
            assert_eq!(JobStatus::from_code(s.code()), Some(s));
        }
        assert_eq!(JobStatus::from_code(0), None);
        assert_eq!(JobStatus::letter_of(5), "H");
        assert_eq!(JobStatus::letter_of(9), "?");
    }

    #[test]
    fn universes_by_name_and_number() {
        assert_eq!(Universe::from_submit("Vanilla"), Some(Universe::Vanilla));
        assert_eq!(Universe::from_submit("12"), Some(Universe::Local));
        assert_eq!(Universe::from_submit("docker"), None);
        assert_eq!(Universe::from_submit("05"), None);
        assert_eq!(Universe::from_submit(" vanilla"), None);
        assert_eq!(Universe::from_submit("nonsense"), None);
        assert!(Universe::Scheduler.runs_on_submit_host());
        assert!(!Universe::Vanilla.runs_on_submit_host());
    }

    // kill_sig = SIGXCPU was accepted by submit while the shadow's own table
    // did not know it and sent SIGTERM: one table now serves both.
    #[test]
    fn every_name_submit_accepts_has_a_number() {
        for &(name, n) in SIGNALS {
            assert_eq!(signal_number(name), Some(n), "{name}");
            assert_eq!(signal_number(&name[3..]), Some(n), "{name}");
            assert_eq!(signal_name(&n.to_string()), Some(name));
        }
        assert_eq!(signal_number("sigxcpu"), Some(libc::SIGXCPU));
        assert_eq!(signal_number("XCPU"), Some(libc::SIGXCPU));
        assert_eq!(signal_name("sigxcpu"), Some("SIGXCPU"));
        assert_eq!(signal_name("XCPU"), None);
        assert_eq!(signal_number("SIGNOPE"), None);
        assert_eq!(signal_number(" 64 "), Some(64));
        assert_eq!(signal_name("64"), None);
    }

    #[test]
    fn requests_keep_their_stored_names() {
        for r in Request::ALL {
            assert_eq!(Request::parse(r.as_str()), Some(r));
        }
        assert_eq!(Request::parse("vacate-fast"), Some(Request::VacateFast));
        assert_eq!(Request::parse("bogus"), None);
        assert!(!Request::Suspend.stops());
        assert!(Request::PreemptRank.stops());
    }
}
