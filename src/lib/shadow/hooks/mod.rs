//! Starter job hooks (spec section 8.2; HTCondor's `StarterHookMgr`): the
//! site programs the shadow, as the job's starter, runs around a run.
//!
//! - `<KW>_HOOK_PREPARE_JOB_BEFORE_TRANSFER`: after the sandbox and its ad
//!   files are made, before the input transfer; waited for.
//! - `<KW>_HOOK_PREPARE_JOB` (arguments `<KW>_HOOK_PREPARE_JOB_ARGS`):
//!   after the input transfer, before the job is started; waited for.
//!   Both read the job ad on stdin and print attributes merged into it
//!   ([`merge`]); HookStatusCode / HookStatusMessage decide as the spec's
//!   table says ([`JobHooks::prepare`]).
//! - `<KW>_HOOK_UPDATE_JOB_INFO`: with each usage update while the job
//!   runs, and on suspend and continue; started by the supervise loop and
//!   reaped later ([`Updating`]), never two at once, killed if it still
//!   runs when the job ends (nothing waits for it). Its processes, and
//!   every hook's leftovers, are never the job's (`procs::spare_group`).
//! - `<KW>_HOOK_JOB_EXIT`: when the job's process is gone, with how it
//!   ended as argv[1]; waited for, before the output transfer and before
//!   the end is recorded.
//!
//! The keyword ([`JobHooks::resolve`]): STARTER_JOB_HOOK_KEYWORD, else the
//! job's HookKeyword when it has a starter hook, else
//! STARTER_DEFAULT_JOB_HOOK_KEYWORD. Every hook runs as the job's owner
//! (when the shadow runs as root), with the job's environment, in the
//! scratch directory, with a timeout (`<KW>_HOOK_<HOOK>_TIMEOUT`), its
//! stderr in `$(SPOOL)/hooks/starter.<cluster>.<proc>.<HOOK>.stderr`
//! ([`crate::hooks::starter_logs`]). Failures go to the job's event log as
//! event 021 (HTCondor's RemoteErrorEvent) and, for the hooks whose exit
//! decides nothing, to the job's StarterHookFailure attributes.

use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::classad::unparse::ad_to_old;
use crate::classad::{ClassAd, Value};
use crate::config::Config;
use crate::hooks::run::{self, stderr_excerpt};
use crate::hooks::{Invocation, Outcome, Running, parse_attributes, starter_logs};
use crate::queue::JobId;
use crate::sys::identity::Identity;
use crate::userlog::{self, Event, EventKind};
use crate::vocab::{Hold, hold_code};

/// The four starter hooks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Hook {
    PrepareJobBeforeTransfer,
    PrepareJob,
    UpdateJobInfo,
    JobExit,
}

impl Hook {
    const ALL: [Hook; 4] = [
        Hook::PrepareJobBeforeTransfer,
        Hook::PrepareJob,
        Hook::UpdateJobInfo,
        Hook::JobExit,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Hook::PrepareJobBeforeTransfer => "PREPARE_JOB_BEFORE_TRANSFER",
            Hook::PrepareJob => "PREPARE_JOB",
            Hook::UpdateJobInfo => "UPDATE_JOB_INFO",
            Hook::JobExit => "JOB_EXIT",
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    /// Seconds when `<KW>_HOOK_<HOOK>_TIMEOUT` is unset: HTCondor's 30
    /// for JOB_EXIT; HTCondor sets no limit on the others, tern does (a
    /// hung hook must not hold a slot for ever).
    fn default_timeout(self) -> i64 {
        match self {
            Hook::PrepareJobBeforeTransfer | Hook::PrepareJob => 300,
            Hook::UpdateJobInfo => 60,
            Hook::JobExit => 30,
        }
    }
}

/// Attributes a hook's output never changes: the job's identity and
/// state belong to the queue (and Owner decides who the job runs as).
const PROTECTED: [&str; 9] = [
    "ClusterId",
    "ProcId",
    "Owner",
    "User",
    "OwnerUid",
    "JobStatus",
    "GlobalJobId",
    "MyType",
    "TargetType",
];

/// The job attributes that keep a starter hook's last failure (tern's;
/// HTCondor only logs it).
pub(super) const FAILURE_ATTR: &str = "StarterHookFailure";
pub(super) const FAILURE_TIME_ATTR: &str = "StarterHookFailureTime";

/// How a PREPARE hook refused the run.
#[derive(Debug)]
pub(super) enum Refusal {
    /// Held (code 19, or what a failure before the hooks means).
    Hold(Hold),
    /// Back to Idle (a status of 300 or more, or a hook killed by a
    /// signal): the VacateReason and its subcode (the status).
    Requeue { reason: String, subcode: i64 },
}

impl From<Hold> for Refusal {
    fn from(h: Hold) -> Refusal {
        Refusal::Hold(h)
    }
}

/// Where a hook runs: the job's environment and the scratch directory.
pub(super) struct Ctx<'a> {
    pub env: &'a [(String, String)],
    pub cwd: &'a Path,
}

/// What the hooks of a running job need: the hooks, the ad the job was
/// started from, and where they run.
pub(super) struct Around<'a> {
    pub hooks: &'a JobHooks,
    pub run: &'a ClassAd,
    pub ctx: Ctx<'a>,
}

/// One job's starter hooks, resolved from the configuration.
#[derive(Debug)]
pub(super) struct JobHooks {
    keyword: String,
    /// By [`Hook::index`].
    programs: Programs,
    timeouts: [Duration; 4],
    prepare_args: Vec<String>,
    spool: PathBuf,
    id: JobId,
    /// Who the hooks run as (the job's identity when the shadow is root).
    owner: Option<Identity>,
    /// `slot1@host`, as the messages name the starter.
    ep: String,
    /// The job's event log.
    user_log: Option<userlog::UserLog>,
}

impl JobHooks {
    /// The hooks job `id` (its queue ad `ad`) runs with, `None` when it has
    /// none. A knob that cannot be used (a timeout that is not a positive
    /// number, PREPARE_JOB_ARGS that do not parse) holds the job with
    /// code 19 and a reason naming the knob.
    pub fn resolve(
        cfg: &Config,
        spool: &Path,
        id: JobId,
        ad: &Rc<ClassAd>,
        ep: &str,
        owner: Option<Identity>,
    ) -> Result<Option<JobHooks>, Hold> {
        let bad = |knob: &str, why: String| {
            Hold::new(
                format!("Error from {ep}: {knob}: {why}"),
                hold_code::HOOK_PREPARE_JOB_FAILURE,
                0,
            )
        };
        let get = |name: &str| -> Result<Option<String>, Hold> {
            cfg.get(name)
                .map(|v| v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()))
                .map_err(|e| bad(name, e.to_string()))
        };
        let Some((keyword, programs)) = pick(&get, ad)? else {
            return Ok(None);
        };
        let mut timeouts = [Duration::ZERO; 4];
        for h in Hook::ALL {
            let knob = format!("{keyword}_HOOK_{}_TIMEOUT", h.name());
            let secs = cfg
                .get_int(&knob, h.default_timeout())
                .map_err(|e| bad(&knob, e.to_string()))?;
            if secs <= 0 {
                return Err(bad(
                    &knob,
                    format!("{secs} is not a positive number of seconds"),
                ));
            }
            timeouts[h.index()] = Duration::from_secs(secs as u64);
        }
        let args_knob = format!("{keyword}_HOOK_PREPARE_JOB_ARGS");
        let prepare_args = match get(&args_knob)? {
            Some(a) => crate::submit::args::split_v2(&a, &a, "arguments")
                .map_err(|why| bad(&args_knob, why))?,
            None => Vec::new(),
        };
        Ok(Some(JobHooks {
            keyword,
            programs,
            timeouts,
            prepare_args,
            spool: spool.to_path_buf(),
            id,
            owner,
            ep: ep.to_string(),
            user_log: userlog::user_log(ad),
        }))
    }

    fn program(&self, h: Hook) -> Option<&Path> {
        self.programs[h.index()].as_deref()
    }

    pub fn has(&self, h: Hook) -> bool {
        self.program(h).is_some()
    }

    /// Whether a PREPARE hook runs before the job starts.
    pub fn prepares(&self) -> bool {
        self.has(Hook::PrepareJobBeforeTransfer) || self.has(Hook::PrepareJob)
    }

    fn knob(&self, h: Hook) -> String {
        format!("{}_HOOK_{}", self.keyword, h.name())
    }

    fn log(&self, h: Hook) -> PathBuf {
        starter_logs::path(&self.spool, self.id, h.name())
    }

    /// The hook's invocation; `Err` when its program may not be run.
    fn invocation<'a>(
        &'a self,
        h: Hook,
        program: &'a Path,
        args: &'a [String],
        stdin: &'a [u8],
        log: &'a Path,
        ctx: &Ctx<'a>,
    ) -> Result<Invocation<'a>, String> {
        check_program(&self.knob(h), program)?;
        let mut inv = Invocation::new(program, stdin, self.timeouts[h.index()], log);
        inv.args = args;
        inv.env = Some(ctx.env);
        inv.cwd = Some(ctx.cwd);
        inv.owner = self.owner.as_ref();
        Ok(inv)
    }

    /// Runs PREPARE_JOB_BEFORE_TRANSFER or PREPARE_JOB with `job` on stdin
    /// and waits for it. `Ok` with what it printed (empty when the hook is
    /// not configured); else the hold or requeue its status means (the
    /// status is HookStatusCode when it printed one of 0 or more and was
    /// not killed by a signal, else its exit code): 1-299 holds with code
    /// 19 and the status as subcode, 300 and above (and a kill by a
    /// signal) requeue, and a hook that cannot be started, outlives its
    /// timeout or prints lines that are not attributes holds with code 19.
    /// A failure, or a HookStatusMessage, is echoed to the event log.
    pub fn prepare(&self, h: Hook, job: &ClassAd, ctx: &Ctx<'_>) -> Result<ClassAd, Refusal> {
        let Some(program) = self.program(h) else {
            return Ok(ClassAd::new());
        };
        let stdin = ad_to_old(job, true);
        let log = self.log(h);
        let args: &[String] = if h == Hook::PrepareJob {
            &self.prepare_args
        } else {
            &[]
        };
        let inv = match self.invocation(h, program, args, stdin.as_bytes(), &log, ctx) {
            Ok(inv) => inv,
            Err(why) => return Err(self.not_started(h, program, &why)),
        };
        let outcome = run::run(&inv);
        let Some(how) = how(&outcome, inv.timeout) else {
            let why = outcome.failure(&inv).unwrap_or_default();
            return Err(self.not_started(h, program, &why));
        };
        let (status, signalled, stdout) = match &outcome {
            Outcome::Exited { code, stdout } => (i64::from(*code), false, stdout),
            Outcome::Signalled { signal, stdout } => (-i64::from(*signal), true, stdout),
            // Timed out: held, whatever it printed.
            _ => return Err(self.hold(h, program, &how, self.excerpt(&log), 0)),
        };
        let ended = Ended {
            status,
            signalled,
            how,
            stdout,
        };
        self.decide(h, program, &log, ended)
    }

    /// What a PREPARE hook that ended by itself or by a signal means (see
    /// [`JobHooks::prepare`]).
    fn decide(
        &self,
        h: Hook,
        program: &Path,
        log: &Path,
        ended: Ended<'_>,
    ) -> Result<ClassAd, Refusal> {
        let Ended {
            mut status,
            signalled,
            mut how,
            stdout,
        } = ended;
        let update = match parse_attributes(stdout) {
            Ok(u) => u,
            // A failed hook's exit status decides even when what it
            // printed does not parse.
            Err(_) if status != 0 => ClassAd::new(),
            Err(why) => {
                let how = "printed output that is not attributes";
                return Err(self.hold(h, program, how, Some(why), 0));
            }
        };
        if !signalled
            && let Some(Value::Int(code)) =
                update.get("HookStatusCode").and_then(|e| e.literal_value())
            && *code >= 0
        {
            status = *code;
            how = format!("reported status {code:03}");
        }
        let message = match update
            .get("HookStatusMessage")
            .and_then(|e| e.literal_value())
        {
            Some(Value::Str(m)) if !m.is_empty() => Some(m.to_string()),
            _ if status != 0 => self.excerpt(log),
            _ => None,
        };
        let text = log_message(h, program, status != 0, &how, message.as_deref());
        if status == 0 {
            if message.is_some() {
                self.note(false, &text, None);
            }
            return Ok(update);
        }
        let reason = format!("Error from {}: {text}", self.ep);
        if (1..300).contains(&status) {
            let code = hold_code::HOOK_PREPARE_JOB_FAILURE;
            self.note(true, &text, Some((code, status)));
            return Err(Refusal::Hold(Hold::new(reason, code, status)));
        }
        self.note(true, &text, None);
        Err(Refusal::Requeue {
            reason,
            subcode: status,
        })
    }

    /// A PREPARE hook that failed without a status: held with code 19
    /// (subcode `subcode`), echoed to the event log.
    fn hold(
        &self,
        h: Hook,
        program: &Path,
        how: &str,
        message: Option<String>,
        subcode: i64,
    ) -> Refusal {
        let code = hold_code::HOOK_PREPARE_JOB_FAILURE;
        let text = log_message(h, program, true, how, message.as_deref());
        self.note(true, &text, Some((code, subcode)));
        Refusal::Hold(Hold::new(
            format!("Error from {}: {text}", self.ep),
            code,
            subcode,
        ))
    }

    /// A PREPARE hook that could not be started: HTCondor's "failed to
    /// execute" hold, code 19.
    fn not_started(&self, h: Hook, program: &Path, why: &str) -> Refusal {
        let code = hold_code::HOOK_PREPARE_JOB_FAILURE;
        let text = format!(
            "failed to execute {} ({}): {why}",
            h.name(),
            program.display()
        );
        self.note(true, &text, Some((code, 0)));
        Refusal::Hold(Hold::new(
            format!("Error from {}: {text}", self.ep),
            code,
            0,
        ))
    }

    fn excerpt(&self, log: &Path) -> Option<String> {
        Some(stderr_excerpt(log)).filter(|s| !s.is_empty())
    }

    /// Starts UPDATE_JOB_INFO with `stdin` (the job ad and its update
    /// attributes), not waiting for it: `None` when it is not configured,
    /// `Some(Err(failure))` when it could not be started.
    pub fn start_update(&self, stdin: &str, ctx: &Ctx<'_>) -> Option<Result<Updating, String>> {
        let h = Hook::UpdateJobInfo;
        let program = self.program(h)?;
        let log = self.log(h);
        let started = self
            .invocation(h, program, &[], stdin.as_bytes(), &log, ctx)
            .map_err(Outcome::NotStarted)
            .and_then(|inv| run::start(&inv));
        Some(match started {
            Ok(running) => Ok(Updating {
                pid: running.pid() as i32,
                running,
                program: program.to_path_buf(),
                log,
                timeout: self.timeouts[h.index()],
                deadline: Instant::now() + self.timeouts[h.index()],
            }),
            Err(o) => {
                Err(failure_text(h, program, &o, self.timeouts[h.index()], &log)
                    .unwrap_or_default())
            }
        })
    }

    /// Runs JOB_EXIT with `how` (`exit`, `remove`, `hold` or `evict`) as its
    /// argument and `stdin` (the job ad with its update and exit
    /// attributes), and waits for it: `None` when it is not configured,
    /// else its failure, if any.
    pub fn job_exit(&self, how: &str, stdin: &str, ctx: &Ctx<'_>) -> Option<Option<String>> {
        let h = Hook::JobExit;
        let program = self.program(h)?;
        let log = self.log(h);
        let args = [how.to_string()];
        let outcome = match self.invocation(h, program, &args, stdin.as_bytes(), &log, ctx) {
            Ok(inv) => run::run(&inv),
            Err(why) => Outcome::NotStarted(why),
        };
        Some(failure_text(
            h,
            program,
            &outcome,
            self.timeouts[h.index()],
            &log,
        ))
    }

    /// Echoes `text` to the job's event log as event 021: "Error from
    /// starter" when `critical` (with the hold's code when it holds),
    /// else "Message from starter".
    pub fn note(&self, critical: bool, text: &str, code: Option<(i64, i64)>) {
        let Some(p) = &self.user_log else { return };
        let kind = if critical { "Error" } else { "Message" };
        let mut body: Vec<String> = text.lines().map(|l| format!("\t{l}")).collect();
        if let Some((c, s)) = code {
            body.push(format!("\tCode {c} Subcode {s}"));
        }
        let e = Event::now(
            self.id,
            EventKind::Other {
                number: 21,
                first_line: format!("{kind} from starter on {}:", self.ep),
                body,
            },
        );
        if let Err(e) = userlog::log_job_events(&[(p.clone(), e)]) {
            note!("tern_shadow: {e}");
        }
    }
}

/// A knob's value (trimmed, `None` when unset or empty), or the hold
/// naming a knob that cannot be read.
type Get<'a> = dyn Fn(&str) -> Result<Option<String>, Hold> + 'a;

/// A keyword's hook programs, by [`Hook::index`].
type Programs = [Option<PathBuf>; 4];

/// The keyword of job `ad`'s starter hooks and their programs (by
/// [`Hook::index`]): STARTER_JOB_HOOK_KEYWORD, else the job's HookKeyword,
/// else STARTER_DEFAULT_JOB_HOOK_KEYWORD. `None` when none applies.
fn pick(get: &Get<'_>, ad: &Rc<ClassAd>) -> Result<Option<(String, Programs)>, Hold> {
    // The job's keyword counts only when it has a starter hook: one
    // that names another family's keyword (the router's TRANSLATE_JOB,
    // say) or none at all must not escape the site's default hooks.
    let mut candidates = Vec::new();
    match get("STARTER_JOB_HOOK_KEYWORD")? {
        Some(k) => candidates.push(k),
        None => {
            if let Some(k) = ad.eval_str("HookKeyword") {
                let k = k.trim().to_string();
                if !k.is_empty() {
                    candidates.push(k);
                }
            }
            candidates.extend(get("STARTER_DEFAULT_JOB_HOOK_KEYWORD")?);
        }
    }
    for keyword in candidates {
        let mut programs: Programs = Default::default();
        for h in Hook::ALL {
            programs[h.index()] = get(&format!("{keyword}_HOOK_{}", h.name()))?.map(PathBuf::from);
        }
        if programs.iter().any(Option::is_some) {
            return Ok(Some((keyword, programs)));
        }
    }
    Ok(None)
}

/// How a PREPARE hook that ran ended: its status (the exit code, or minus
/// the signal), the words for it, and what it printed.
struct Ended<'a> {
    status: i64,
    signalled: bool,
    how: String,
    stdout: &'a str,
}

/// How a hook that ran ended, in [`Outcome::failure`]'s words but without
/// the program (HTCondor's lines put the program and the hook's message
/// around them); `None` for a hook that did not run.
fn how(o: &Outcome, timeout: Duration) -> Option<String> {
    Some(match o {
        Outcome::Busy | Outcome::NotStarted(_) => return None,
        Outcome::Exited { code, .. } => format!("exited with status {code}"),
        Outcome::Signalled { signal, .. } => format!("was killed by signal {signal}"),
        Outcome::TimedOut { .. } => {
            format!("timed out after {} s and was killed", timeout.as_secs())
        }
    })
}

/// An UPDATE_JOB_INFO hook running beside the job.
#[derive(Debug)]
pub(super) struct Updating {
    running: Running,
    pid: i32,
    program: PathBuf,
    log: PathBuf,
    timeout: Duration,
    deadline: Instant,
}

impl Updating {
    /// Its pid, which is also its process group.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// When it is killed if it still runs.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// `Some` once it has ended (or was just killed for its timeout),
    /// with its failure if it failed.
    pub fn try_finish(&mut self) -> Option<Option<String>> {
        let o = self.running.try_finish()?;
        Some(self.failure(&o))
    }

    /// Kills it (and its process group) now, its outcome unused: the job
    /// has ended and nothing waits for this hook.
    pub fn kill(&mut self) {
        drop(self.running.kill());
    }

    /// Its end when the shadow's own wait reaped it with `status`.
    pub fn reaped(self, status: ExitStatus) -> Option<String> {
        let (program, log, timeout) = (self.program.clone(), self.log.clone(), self.timeout);
        let o = self.running.reaped(status);
        failure_text(Hook::UpdateJobInfo, &program, &o, timeout, &log)
    }

    fn failure(&self, o: &Outcome) -> Option<String> {
        failure_text(
            Hook::UpdateJobInfo,
            &self.program,
            o,
            self.timeout,
            &self.log,
        )
    }
}

/// HTCondor's line about a PREPARE hook's end: `PREPARE_JOB (name)
/// failed (exited with status 3): message`.
fn log_message(h: Hook, program: &Path, failed: bool, how: &str, message: Option<&str>) -> String {
    let base = program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(
        "{} ({base}) {} ({how}): {}",
        h.name(),
        if failed { "failed" } else { "succeeded" },
        message.unwrap_or("<no message>")
    )
}

/// Why a hook whose exit decides nothing failed, in the same words;
/// `None` for exit 0.
fn failure_text(
    h: Hook,
    program: &Path,
    o: &Outcome,
    timeout: Duration,
    log: &Path,
) -> Option<String> {
    let how = match o {
        Outcome::Exited { code: 0, .. } => return None,
        Outcome::Busy => {
            return Some(format!(
                "{} ({}) is still running from before; not started again",
                h.name(),
                program.display()
            ));
        }
        Outcome::NotStarted(why) => {
            return Some(format!(
                "failed to execute {} ({}): {why}",
                h.name(),
                program.display()
            ));
        }
        _ => how(o, timeout)?,
    };
    let said = stderr_excerpt(log);
    let message = (!said.is_empty()).then_some(said.as_str());
    Some(log_message(h, program, true, &how, message))
}

/// The hook program must be one nobody but its owner can change (see
/// [`crate::hooks::run::validate`]); the refusal names the knob.
fn check_program(knob: &str, program: &Path) -> Result<(), String> {
    crate::hooks::run::validate(program).map_err(|e| format!("{knob}: {e}"))
}

mod attrs;
#[cfg(test)]
mod tests;

pub(super) use attrs::{
    ad_with, exit_argument, exit_attrs, failure_attrs, merge, update_attrs, with_changes,
};
