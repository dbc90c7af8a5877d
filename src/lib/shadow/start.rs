//! The start of a run: [`prepare`] turns the job ad (its `$$()` already
//! expanded) into a [`Plan`] (who the job runs as, its executable,
//! arguments, environment, working directory and open standard files),
//! and [`Shadow::start`] writes the execute event and spawns the plan.
//! Whatever stops a job from starting is a [`Hold`] with HTCondor's code
//! (`condor_holdcodes.h`) and a reason that names the path or user.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::rc::Rc;

use crate::classad::{ClassAd, Expr, Value};
use crate::queue::{Change, JobId, QueueError, Writer};
use crate::submit::args::split_v2;
use crate::sys::identity::{self, Identity};
use crate::sys::io_error_text as io_text;
use crate::userlog::{self, Event, EventKind};
use crate::vocab::{Hold, hold_code};

use super::{Shadow, ShadowError};

/// What the shadow needs to start a job.
pub(super) struct Plan {
    /// Who the job runs as, when the shadow runs as root.
    ident: Option<Identity>,
    exe: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
    iwd: PathBuf,
    /// The standard files; `None` is /dev/null, which the job's process
    /// opens for itself (see [`Files`]).
    stdin: Option<File>,
    stdout: Option<File>,
    stderr: Option<File>,
}

/// Resolves the job's files. A missing Iwd or executable, or an input or
/// output file that cannot be opened, is a hold with HTCondor's code and a
/// reason that names the path.
/// `env` is the job's whole environment (see [`crate::sandbox::env`]);
/// `ident` whom the job runs as when the shadow is root ([`identity`]).
/// Every check and open happens as that user (effective ids switched):
/// root never looks up, opens or creates a path a job ad names, so an
/// `Out` symlinked to a root file, or an Iwd the owner cannot enter, fails
/// as it would for the owner, and what is created belongs to the owner.
pub(super) fn prepare(
    ad: Rc<ClassAd>,
    env: Vec<(String, String)>,
    ident: Option<Identity>,
) -> Result<Plan, Hold> {
    let opened = as_owner(ident.as_ref(), || open_files(&ad))?;
    let (iwd, exe, [stdin, stdout, stderr]) = opened;
    Ok(Plan {
        ident,
        exe,
        args: arguments(&ad)?,
        env,
        iwd,
        stdin,
        stdout,
        stderr,
    })
}

/// Runs `f` as the job's owner when given (the shadow is root; see
/// [`identity::act_as`]); a failure to switch is hold 23.
pub(super) fn as_owner<T>(
    owner: Option<&Identity>,
    f: impl FnOnce() -> Result<T, Hold>,
) -> Result<T, Hold> {
    identity::as_user(owner, f).map_err(|e| {
        Hold::new(
            format!("Failed to act as the job's owner: {}", io_text(&e)),
            hold_code::FAILED_TO_ACCESS_USER_ACCOUNT,
            e.raw_os_error().unwrap_or(0) as i64,
        )
    })?
}

/// Iwd, Cmd and the standard files, checked and opened by the caller's
/// (effective) user.
fn open_files(ad: &Rc<ClassAd>) -> Result<(PathBuf, PathBuf, [Option<File>; 3]), Hold> {
    let iwd = working_dir(ad)?;
    let exe = executable(ad, &iwd)?;
    let files = Files { ad, iwd: &iwd };
    let stdin = files.input("In")?;
    let stdout = files.output("Out")?;
    let stderr = files.error()?;
    Ok((iwd, exe, [stdin, stdout, stderr]))
}

/// Whom the job runs as when the shadow runs as root: its Owner, with the
/// owner's groups (see [`identity::job_owner`] for who is refused: an
/// unknown user, an OwnerUid that does not match, root, a uid below
/// MIN_OWNER_UID), or a hold 23 (FailedToAccessUserAccount). Otherwise
/// the job runs as the shadow's user, who submitted it.
pub(super) fn identity(ad: &Rc<ClassAd>) -> Result<Option<Identity>, Hold> {
    if !identity::is_root() {
        return Ok(None);
    }
    // With the submitter's umask, as at(1) replays it (HTCondor uses
    // 022): the job's and that of the files made for it as the owner.
    crate::vocab::owner_of(ad)
        .identity()
        .map_err(|why| Hold::new(why, hold_code::FAILED_TO_ACCESS_USER_ACCOUNT, 0))
}

/// Iwd, which must be a directory the (effective) user may enter (`/`
/// when the ad has none).
fn working_dir(ad: &Rc<ClassAd>) -> Result<PathBuf, Hold> {
    let iwd = PathBuf::from(ad.eval_str("Iwd").unwrap_or_else(|| "/".into()));
    let fail = |errno: i32| {
        Hold::new(
            format!(
                "Initial working directory '{}' does not exist or is not a directory",
                iwd.display()
            ),
            hold_code::IWD_ERROR,
            errno as i64,
        )
    };
    if !iwd.is_dir() {
        return Err(fail(libc::ENOENT));
    }
    if let Err(e) = crate::sys::fs::may_enter(&iwd) {
        return Err(Hold::new(
            format!(
                "Cannot enter the initial working directory '{}': {}",
                iwd.display(),
                io_text(&e)
            ),
            hold_code::IWD_ERROR,
            e.raw_os_error().unwrap_or(0) as i64,
        ));
    }
    Ok(iwd)
}

/// Cmd, relative to Iwd unless absolute; it must be a file.
fn executable(ad: &Rc<ClassAd>, iwd: &Path) -> Result<PathBuf, Hold> {
    let cmd = ad.eval_str("Cmd").unwrap_or_default();
    let exe = if Path::new(&cmd).is_absolute() {
        PathBuf::from(&cmd)
    } else {
        iwd.join(&cmd)
    };
    if cmd.is_empty() || !exe.is_file() {
        return Err(Hold::new(
            format!(
                "Failed to execute '{}': the executable does not exist",
                exe.display()
            ),
            hold_code::FAILED_TO_CREATE_PROCESS,
            libc::ENOENT as i64,
        ));
    }
    Ok(exe)
}

/// Arguments (the V2 syntax), else the old Args split at white space.
fn arguments(ad: &Rc<ClassAd>) -> Result<Vec<String>, Hold> {
    match ad.eval_str("Arguments") {
        Some(a) if !a.is_empty() => split_v2(&a, &a, "arguments").map_err(|m| {
            Hold::new(
                format!("Arguments: {m}"),
                hold_code::FAILED_TO_CREATE_PROCESS,
                0,
            )
        }),
        _ => Ok(ad
            .eval_str("Args")
            .map(|a| a.split_whitespace().map(String::from).collect())
            .unwrap_or_default()),
    }
}

/// Opens the job's standard files (In, Out, Err; relative to Iwd,
/// /dev/null when unset). /dev/null itself, what most jobs have for at
/// least one of them, is not opened here but by the job's process before
/// its exec (`None`; on the fork path, by the shadow just before the
/// fork): an open there instead of an open, two `fcntl`s and a close here,
/// for each of the three, in every job of a stream. Only the exact name
/// `/dev/null` is: `/dev/null/` or a relative path that leads there is
/// opened here as before. (Where /dev/null could not be opened, the hold
/// names it, as an open here did, but after the execute event, which is
/// written before the start: [`dev_null_failed`].)
struct Files<'a> {
    ad: &'a Rc<ClassAd>,
    iwd: &'a Path,
}

impl Files<'_> {
    /// The path of the file an attribute names, relative to Iwd; `None`
    /// when it is unset or names /dev/null, which the job opens itself.
    fn path(&self, attr: &str) -> Option<PathBuf> {
        self.ad
            .eval_str(attr)
            .filter(|s| !s.is_empty() && s != DEV_NULL)
            .map(|name| self.iwd.join(name))
    }

    /// In, Out and Err are opened without blocking (a FIFO there must not
    /// hang the shadow: [`crate::sys::fs::open_nonblocking`]); the job then
    /// gets ordinary blocking descriptors, whatever the file is.
    fn input(&self, attr: &str) -> Result<Option<File>, Hold> {
        let Some(path) = self.path(attr) else {
            return Ok(None);
        };
        crate::sys::fs::open_nonblocking(&path, libc::O_RDONLY, 0)
            .map_err(|e| input_hold(&path, &e))
            .map(Some)
    }

    fn output(&self, attr: &str) -> Result<Option<File>, Hold> {
        let Some(path) = self.path(attr) else {
            return Ok(None);
        };
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC;
        crate::sys::fs::open_nonblocking(&path, flags, 0o666)
            .map_err(|e| {
                let errno = e.raw_os_error().unwrap_or(0) as i64;
                output_hold(&path, &e, errno)
            })
            .map(Some)
    }

    /// Err: Out's own descriptor when both name the same file, so that
    /// writes interleave; else a file of its own.
    fn error(&self) -> Result<Option<File>, Hold> {
        let (out, err) = (self.ad.eval_str("Out"), self.ad.eval_str("Err"));
        let same = err.is_some() && err == out && out.as_deref() != Some(DEV_NULL);
        if !same {
            return self.output("Err");
        }
        let path = self.iwd.join(out.unwrap_or_default());
        crate::sys::fs::open_nonblocking(&path, libc::O_WRONLY | libc::O_APPEND, 0)
            .map_err(|e| output_hold(&path, &e, 0))
            .map(Some)
    }
}

fn input_hold(path: &Path, e: &std::io::Error) -> Hold {
    Hold::new(
        format!(
            "Cannot open input file '{}': {}",
            path.display(),
            io_text(e)
        ),
        hold_code::UNABLE_TO_OPEN_INPUT,
        e.raw_os_error().unwrap_or(0) as i64,
    )
}

fn output_hold(path: &Path, e: &std::io::Error, subcode: i64) -> Hold {
    Hold::new(
        format!(
            "Cannot open output file '{}': {}",
            path.display(),
            io_text(e)
        ),
        hold_code::UNABLE_TO_OPEN_OUTPUT,
        subcode,
    )
}

/// An I/O error's text without Rust's ` (os error N)` tail, as HTCondor
/// words its reasons.
impl Shadow {
    /// Writes the execute event and starts the plan; the job's pid, or the
    /// hold for a job that could not be started.
    pub(super) fn start(
        &self,
        id: JobId,
        ad: &Rc<ClassAd>,
        plan: &Plan,
        props: &[(String, String)],
    ) -> Result<i32, Hold> {
        // 001 before the job starts: a shadow killed just after the start
        // must not leave a run without its execute event.
        self.started(id, ad, props, crate::clock::now())?;
        spawn(plan, self.nice_increment(id, ad)).map_err(|e| {
            if let Some(hold) = dev_null_failed(plan, &e) {
                return hold;
            }
            Hold::new(
                format!(
                    "Error from {}@{}: Failed to execute '{}': {}",
                    self.slot,
                    self.host,
                    plan.exe.display(),
                    io_text(&e)
                ),
                hold_code::FAILED_TO_CREATE_PROCESS,
                e.raw_os_error().unwrap_or(0) as i64,
            )
        })
    }

    /// How much nicer than the shadow job `id` runs: JOB_RENICE_INCREMENT
    /// evaluated in its ad, as the starter evaluates it (`Renice` in its
    /// copy of the job ad, read with `LookupInteger`: a real is truncated,
    /// a boolean is 0 or 1), clamped to 0-19; a value that is no number is
    /// 10, with a note. A scheduler universe job, which HTCondor's schedd
    /// starts itself, without a starter, gets SCHED_UNIV_RENICE_INCREMENT
    /// instead.
    fn nice_increment(&self, id: JobId, ad: &Rc<ClassAd>) -> i32 {
        if ad.eval_int("JobUniverse") == Some(crate::vocab::Universe::Scheduler.code()) {
            return self.sched_univ_renice;
        }
        let n = match crate::classad::eval_in(ad, &self.renice) {
            Value::Int(n) => n,
            Value::Real(r) => r as i64,
            Value::Bool(b) => i64::from(b),
            other => {
                note!(
                    "tern_shadow: job {id}: JOB_RENICE_INCREMENT ({}) is {}, not a number: the job runs 10 nicer",
                    crate::classad::unparse::unparse(&self.renice),
                    crate::classad::unparse::unparse(&Expr::Lit(other))
                );
                10
            }
        };
        n.clamp(0, 19) as i32
    }

    /// The job executes: count the start and date it. HTCondor's shadow
    /// does both (NumJobStarts, JobCurrentStartExecutingDate) only once
    /// the starter reports the job running, so a start whose exec failed
    /// counts nothing; the claim counted the shadow's start
    /// (NumShadowStarts, JobRunCount). The ad the shadow's policy reads
    /// gets the values at once; the queue gets them from
    /// [`Shadow::record_executing`], which supervision calls once the job
    /// has run `EXEC_RECORD_AFTER`, or with the end of the run in one
    /// transaction: a job of a few milliseconds (a stream of short jobs
    /// on a reused claim) then costs one commit, not two. A shadow killed
    /// before either loses the count, as a starter's lost update does.
    ///
    /// `changed` (what the PREPARE hooks changed, already in `ad`) goes to
    /// the queue in the same transaction: the job's attributes change only
    /// for a run that started.
    pub(super) fn executing(
        &mut self,
        id: JobId,
        ad: &Rc<ClassAd>,
        changed: Vec<(String, Expr)>,
    ) -> Rc<ClassAd> {
        let now = crate::clock::now();
        self.pending_exec = Some(PendingExec {
            id,
            at: now,
            changed,
        });
        let mut updated = (**ad).clone();
        for (n, e) in executing_attrs(ad, now) {
            updated.insert(&n, e);
        }
        Rc::new(updated)
    }

    /// Writes the pending execute attributes (see [`Shadow::executing`]).
    pub(super) fn record_executing(&mut self) -> Result<(), ShadowError> {
        let Some(p) = self.pending_exec.take() else {
            return Ok(());
        };
        match self.q.write(crate::clock::now(), |w| record_in(w, &p)) {
            // No room in SPOOL: they go in with the end of the run, which
            // waits for room (see `finish`).
            Err(crate::queue::QueueError::Full { .. }) => {
                self.pending_exec = Some(p);
                Ok(())
            }
            other => Ok(other?),
        }
    }
}

/// NumJobStarts one more than in `ad`, and the date the job executed.
fn executing_attrs(ad: &ClassAd, at: i64) -> Vec<(String, Expr)> {
    let starts = match ad.get("NumJobStarts").and_then(|e| e.literal_value()) {
        Some(Value::Int(i)) => *i,
        _ => 0,
    };
    vec![
        ("NumJobStarts".to_string(), Expr::int(starts + 1)),
        ("JobCurrentStartExecutingDate".to_string(), Expr::int(at)),
    ]
}

/// A run that executed, not yet recorded in the queue.
pub(super) struct PendingExec {
    pub id: JobId,
    /// When it executed.
    pub at: i64,
    /// What its PREPARE hooks changed in the job.
    pub changed: Vec<(String, Expr)>,
}

/// Records in `w`'s transaction that the job of `p` executed, with its
/// PREPARE hooks' changes.
pub(super) fn record_in(w: &mut Writer<'_>, p: &PendingExec) -> Result<(), QueueError> {
    let Some(r) = w.row(p.id)? else {
        return Ok(());
    };
    let cur = w.full_ad(&r)?;
    w.change(&r, &cur, &Change::Set(executed_set(&cur, p)))
}

/// What recording that the job of `p` executed sets in the job whose ad
/// is `cur`: its PREPARE hooks' changes, NumJobStarts and the date.
pub(super) fn executed_set(cur: &ClassAd, p: &PendingExec) -> Vec<(String, Expr)> {
    let mut set = p.changed.clone();
    set.extend(executing_attrs(cur, p.at));
    set
}

impl Shadow {
    /// Writes the start's event 001 (the start's attributes were recorded
    /// with the claim, so JobStatus 2 never shows beside the previous
    /// run's start date).
    /// A log that cannot be written (a FIFO or device in its place, a
    /// link, a directory the owner may not write) holds the job before it
    /// starts, as HTCondor's shadow holds a job whose log it cannot
    /// initialize: 22 (UnableToInitUserLog), the errno as subcode.
    fn started(
        &self,
        id: JobId,
        ad: &Rc<ClassAd>,
        props: &[(String, String)],
        now: i64,
    ) -> Result<(), Hold> {
        let Some(p) = userlog::user_log(ad) else {
            return Ok(());
        };
        let e = Event {
            id: id.into(),
            time: now,
            kind: EventKind::Execute {
                host: userlog::local_sinful(),
                slot_name: Some(format!("{}@{}", self.slot, self.host)),
                props: props.to_vec(),
            },
        };
        userlog::log_job_events(&[(p, e)]).map_err(|e| {
            let errno = match &e {
                userlog::UserLogError::Write { source, .. } => source.raw_os_error(),
                _ => None,
            };
            Hold::new(
                format!("Failed to initialize user log: {e}"),
                hold_code::UNABLE_TO_INIT_USER_LOG,
                errno.unwrap_or(0) as i64,
            )
        })
    }
}

/// What the execute event (001) lists of the slot, as HTCondor's shadow
/// fills it from its starter's ad: the run's scratch directory
/// (`CondorScratchDir`); each of the slot's resources (its
/// `MachineResources`, else Cpus, Disk and Memory) with its
/// `Available<resource>` when the slot has one; then the slot attributes
/// the job names in `UserLogExecuteEventAttrs` (submit's
/// `ulog_execute_attrs`) that the slot has, none replacing one already
/// listed. Each value is the attribute's expression as the slot ad holds
/// it.
pub(super) fn execute_props(
    slot: &Rc<ClassAd>,
    scratch: &Path,
    job: &Rc<ClassAd>,
) -> Vec<(String, String)> {
    use crate::classad::unparse::unparse;
    let mut props = vec![(
        "CondorScratchDir".to_string(),
        unparse(&Expr::string(&scratch.display().to_string())),
    )];
    let listed = |props: &[(String, String)], name: &str| {
        props.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
    };
    let resources = slot
        .eval_str("MachineResources")
        .unwrap_or_else(|| "Cpus, Disk, Memory".to_string());
    for tag in resources.split([',', ' ', '\t']).filter(|t| !t.is_empty()) {
        for name in [tag.to_string(), format!("Available{tag}")] {
            if let Some(e) = slot.get(&name)
                && !listed(&props, &name)
            {
                props.push((name, unparse(e)));
            }
        }
    }
    let asked = job.eval_str("UserLogExecuteEventAttrs").unwrap_or_default();
    for name in asked.split([',', ' ', '\t']).filter(|t| !t.is_empty()) {
        if let Some(e) = slot.get(name)
            && !listed(&props, name)
        {
            props.push((name.to_string(), unparse(e)));
        }
    }
    props
}

/// Starts the plan, `nice` nicer than the shadow: with posix_spawn as the
/// shadow's own user, or by fork and exec as the job's owner or to renice
/// it before its exec.
/// Either way the job starts under the scheduling policy the shadow
/// started with (`sys::sched`), never the lingering shadow's SCHED_BATCH, and with the
/// machine's huge-page setting, which the shadow itself goes without:
/// with them, each job's turn of the shadow's allocator zeroed huge pages
/// (a twentieth of the shadow's time on 2,000 short jobs).
fn spawn(plan: &Plan, nice: i32) -> std::io::Result<i32> {
    crate::sys::thp::allow();
    let started = match (plan.ident.clone(), nice) {
        (None, 0) => crate::sys::spawn(&crate::sys::Spawn {
            exe: &plan.exe,
            args: &plan.args,
            env: Some(&plan.env),
            extra_env: &[],
            dir: Some(&plan.iwd),
            stdio: [
                plan.stdin.as_ref().map(File::as_raw_fd),
                plan.stdout.as_ref().map(File::as_raw_fd),
                plan.stderr.as_ref().map(File::as_raw_fd),
            ],
            new_session: false,
            only_stdio: true,
        }),
        (ident, _) => spawn_forked(plan, ident, nice),
    };
    crate::sys::thp::disable();
    started
}

/// Starts a job by fork and exec: as another user when `id` is given (the
/// shadow runs as root: the user's groups and ids for good, then Iwd
/// entered as the user), `nice` nicer, every descriptor but 0, 1 and 2
/// closed.
fn spawn_forked(plan: &Plan, id: Option<Identity>, nice: i32) -> std::io::Result<i32> {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(&plan.exe);
    // As posix_spawn's POSIX_SPAWN_RESETIDS (nothing unless set-id).
    crate::sys::privilege::child_drops_group(&mut cmd);
    cmd.args(&plan.args)
        .env_clear()
        .envs(plan.env.iter().map(|(a, b)| (a, b)))
        .process_group(0)
        .stdin(stdio(&plan.stdin)?)
        .stdout(stdio(&plan.stdout)?)
        .stderr(stdio(&plan.stderr)?);
    identity::child_runs_as(&mut cmd, id, Some(&plan.iwd));
    crate::sys::sched::child_restores_policy(&mut cmd);
    crate::sys::sched::child_renices(&mut cmd, nice);
    crate::sys::inherited::child_keeps_only_stdio(&mut cmd);
    let child = cmd.spawn()?;
    let pid = child.id() as i32;
    // The Child handle is not used for waiting: we reap with wait4.
    std::mem::forget(child);
    Ok(pid)
}

/// The /dev/null that a job's standard file is when its attribute is
/// unset or names it.
const DEV_NULL: &str = "/dev/null";

/// For a job that failed to start with `failed`: when /dev/null, which
/// was to be opened for a standard file (by the job's process before its
/// exec, or on the fork path by the shadow, as the shadow's user either
/// way, and before anything else of the start), cannot be opened that way
/// either, and with the same error, the hold an open of it here would have
/// given, naming it, rather than a failure to execute the job. Asked only
/// after a failure, so a start pays nothing for it.
fn dev_null_failed(plan: &Plan, failed: &std::io::Error) -> Option<Hold> {
    let null = Path::new(DEV_NULL);
    let opens = [&plan.stdin, &plan.stdout, &plan.stderr]
        .into_iter()
        .enumerate()
        .filter(|(_, f)| f.is_none());
    for (fd, _) in opens {
        let flags = if fd == 0 {
            libc::O_RDONLY
        } else {
            libc::O_WRONLY
        };
        let Err(e) = crate::sys::fs::open_nonblocking(null, flags, 0) else {
            continue;
        };
        if e.raw_os_error() != failed.raw_os_error() {
            return None;
        }
        let errno = e.raw_os_error().unwrap_or(0) as i64;
        return Some(match fd {
            0 => input_hold(null, &e),
            _ => output_hold(null, &e, errno),
        });
    }
    None
}

/// A standard file of the plan for `Command`: a copy of the open file, or
/// /dev/null.
fn stdio(f: &Option<File>) -> std::io::Result<Stdio> {
    Ok(match f {
        Some(f) => Stdio::from(f.try_clone()?),
        None => Stdio::null(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job ad run as root's own (so no other user is looked up).
    fn job(iwd: &Path, rest: &str) -> Rc<ClassAd> {
        let text = format!("[Owner = \"root\"; Iwd = \"{}\"; {rest}]", iwd.display());
        Rc::new(crate::classad::parse_ad(&text).unwrap())
    }

    fn hold_of(ad: Rc<ClassAd>) -> Hold {
        match prepare(ad, Vec::new(), None) {
            Ok(_) => panic!("expected a hold"),
            Err(h) => h,
        }
    }

    #[test]
    fn what_cannot_start_is_a_hold_with_condors_code() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let h = hold_of(job(&d.join("nope"), "Cmd = \"/bin/true\""));
        assert_eq!(
            (h.code, h.subcode),
            (hold_code::IWD_ERROR, libc::ENOENT as i64)
        );
        let h = hold_of(job(d, "Cmd = \"missing\""));
        assert_eq!(h.code, hold_code::FAILED_TO_CREATE_PROCESS);
        assert!(
            h.reason.contains(&d.join("missing").display().to_string()),
            "{h}"
        );
        let h = hold_of(job(d, "Cmd = \"/bin/true\"; In = \"absent.txt\""));
        assert_eq!(
            (h.code, h.subcode),
            (hold_code::UNABLE_TO_OPEN_INPUT, libc::ENOENT as i64)
        );
        assert!(
            h.reason.ends_with("absent.txt': No such file or directory"),
            "{h}"
        );
        let h = hold_of(job(d, "Cmd = \"/bin/true\"; Out = \"no/dir/out\""));
        assert_eq!(h.code, hold_code::UNABLE_TO_OPEN_OUTPUT);
    }

    #[test]
    fn a_plan_has_the_arguments_and_the_environment_it_is_given() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let ad = job(d, "Cmd = \"/bin/true\"; Arguments = \"a 'b c'\"");
        let env = vec![("X".to_string(), "1".to_string())];
        let plan = prepare(ad, env.clone(), None)
            .map_err(|h| h.to_string())
            .unwrap();
        assert_eq!(plan.args, ["a", "b c"]);
        assert_eq!(plan.env, env);
        assert_eq!(plan.ident, None);
    }

    #[test]
    fn the_execute_events_props_follow_the_slots_resources_and_the_jobs_list() {
        let ad = |t: &str| Rc::new(crate::classad::parse_ad(t).unwrap());
        let slot = ad("[Cpus = 2; Memory = 512; Disk = 100; OpSys = \"LINUX\"; Arch = \"X86_64\"]");
        let job = ad("[UserLogExecuteEventAttrs = \"Arch, cpus Missing\"]");
        let props = execute_props(&slot, Path::new("/x/dir_1"), &job);
        let text: Vec<String> = props.iter().map(|(n, v)| format!("{n} = {v}")).collect();
        assert_eq!(
            text,
            [
                "CondorScratchDir = \"/x/dir_1\"",
                "Cpus = 2",
                "Disk = 100",
                "Memory = 512",
                "Arch = \"X86_64\""
            ]
        );
        // A slot's own MachineResources, with Available<resource>.
        let slot = ad(
            "[MachineResources = \"Cpus Foo\"; Cpus = 1; Foo = 2; AvailableFoo = {\"a\", \"b\"}; Memory = 9]",
        );
        let props = execute_props(&slot, Path::new("/s"), &ad("[]"));
        let names: Vec<&str> = props.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["CondorScratchDir", "Cpus", "Foo", "AvailableFoo"]);
    }

    #[test]
    fn an_unknown_owner_is_a_hold_when_running_as_root() {
        if !identity::is_root() {
            return;
        }
        let ad = Rc::new(crate::classad::parse_ad("[Owner = \"no-such-user-tern\"]").unwrap());
        let h = identity(&ad).unwrap_err();
        assert_eq!(h.code, hold_code::FAILED_TO_ACCESS_USER_ACCOUNT);
        assert!(h.reason.contains("'no-such-user-tern'"), "{h}");
    }
}
