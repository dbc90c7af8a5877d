//! Running one hook program: stdin fed from a thread (a hook that prints
//! before it reads cannot deadlock against us), stdout collected, stderr
//! written to a log file under SPOOL, a timeout after which the hook's
//! whole process group is killed, and, for a job's hook, the job's owner.
//!
//! The stderr log is also the hook's lock: it is locked while the hook
//! runs, and the hook's own copy of the descriptor keeps the lock until
//! the hook and everything it started have exited, so a caller killed while
//! a hook runs does not let a second instance start ([`Outcome::Busy`]).

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use crate::sys::identity::Identity;

/// How to run one hook.
#[derive(Clone, Debug)]
pub struct Invocation<'a> {
    pub program: &'a Path,
    /// argv[0] when it is not the program's path (the daemon ClassAd hooks
    /// get their job's name).
    pub argv0: Option<&'a str>,
    pub args: &'a [String],
    /// The whole environment; `None` inherits the caller's.
    pub env: Option<&'a [(String, String)]>,
    /// The working directory; `None` keeps the caller's.
    pub cwd: Option<&'a Path>,
    pub stdin: &'a [u8],
    pub timeout: Duration,
    /// Who the hook runs as; `None` runs it as the caller.
    pub owner: Option<&'a Identity>,
    /// The file that receives the hook's stderr (emptied first) and is
    /// locked while it runs.
    pub stderr_log: &'a Path,
}

impl<'a> Invocation<'a> {
    /// A hook with no arguments, the caller's environment and directory.
    pub fn new(
        program: &'a Path,
        stdin: &'a [u8],
        timeout: Duration,
        stderr_log: &'a Path,
    ) -> Self {
        Invocation {
            program,
            argv0: None,
            args: &[],
            env: None,
            cwd: None,
            stdin,
            timeout,
            owner: None,
            stderr_log,
        }
    }
}

/// How a hook ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The previous instance (same stderr log) is still running; this one
    /// was not started.
    Busy,
    /// It could not be started: the reason.
    NotStarted(String),
    /// It exited by itself with `code`.
    Exited { code: i32, stdout: String },
    /// A signal killed it (not our timeout).
    Signalled { signal: i32, stdout: String },
    /// It outlived its timeout and its process group was killed.
    TimedOut { stdout: String },
}

impl Outcome {
    /// Exit 0: what it printed.
    pub fn success(&self) -> Option<&str> {
        match self {
            Outcome::Exited { code: 0, stdout } => Some(stdout),
            _ => None,
        }
    }

    /// Why this is a failure, for a log, a hold reason or an ad (`None` for
    /// exit 0). A non-zero exit quotes the first line of the hook's stderr.
    pub fn failure(&self, inv: &Invocation) -> Option<String> {
        let p = inv.program.display();
        Some(match self {
            Outcome::Exited { code: 0, .. } => return None,
            Outcome::Busy => format!("{p} is still running from before; not started again"),
            Outcome::NotStarted(why) => why.clone(),
            Outcome::Exited { code, .. } => {
                let said = stderr_excerpt(inv.stderr_log);
                if said.is_empty() {
                    format!("{p} exited with status {code}")
                } else {
                    format!("{p} exited with status {code} (stderr: {said})")
                }
            }
            Outcome::Signalled { signal, .. } => format!("{p} was killed by signal {signal}"),
            Outcome::TimedOut { .. } => format!(
                "{p} timed out after {} s and was killed",
                inv.timeout.as_secs_f64()
            ),
        })
    }
}

/// The first non-empty line a hook wrote to its stderr log, at most 200
/// characters.
pub fn stderr_excerpt(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    line.chars().take(200).collect()
}

/// A hook started and not yet finished.
pub struct Running {
    child: Child,
    pgid: i32,
    deadline: Instant,
    stdout: mpsc::Receiver<Vec<u8>>,
    partial: Arc<Mutex<Vec<u8>>>,
    program: PathBuf,
}

fn lock(m: &Mutex<Vec<u8>>) -> std::sync::MutexGuard<'_, Vec<u8>> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running")
            .field("pid", &self.child.id())
            .field("program", &self.program)
            .finish()
    }
}

/// Whether `program` may be run as a hook, as HTCondor's hook managers
/// check their paths: an absolute path to an executable file that exists,
/// which nobody but its owner may change: neither the file nor its
/// directory is writable by everyone (a directory with the sticky bit, like
/// /tmp, protects a file that exists). A missing program is refused here,
/// not left to the start: in a directory others can write, whoever creates
/// it first would choose what runs.
pub fn validate(program: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let p = program.display();
    if !program.is_absolute() {
        return Err(format!("{p} is not an absolute path"));
    }
    let meta = std::fs::metadata(program)
        .map_err(|e| format!("cannot run {p}: {}", crate::sys::io_error_text(&e)))?;
    let mode = meta.permissions().mode();
    if !meta.is_file() || mode & 0o111 == 0 {
        return Err(format!("{p} is not an executable file"));
    }
    if mode & 0o002 != 0 {
        return Err(format!("{p} is writable by everyone; refusing to run it"));
    }
    if let Some(dir) = program.parent()
        && let Ok(d) = std::fs::metadata(dir)
        && d.permissions().mode() & 0o002 != 0
        && d.permissions().mode() & 0o1000 == 0
    {
        return Err(format!(
            "{p}: its directory {} is writable by everyone; refusing to run it",
            dir.display()
        ));
    }
    Ok(())
}

/// Starts the hook; `Err` carries [`Outcome::Busy`] or
/// [`Outcome::NotStarted`] (also for a program [`validate`] refuses).
pub fn start(inv: &Invocation) -> Result<Running, Outcome> {
    let not_started = |why: String| Outcome::NotStarted(why);
    validate(inv.program).map_err(not_started)?;
    if let Some(dir) = inv.stderr_log.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| not_started(format!("cannot create {}: {e}", dir.display())))?;
    }
    // A SPOOL file: a planted link or FIFO is refused, never followed.
    let log = crate::sys::fs::spool_log_file(inv.stderr_log)
        .map_err(|e| not_started(format!("cannot open {}: {e}", inv.stderr_log.display())))?;
    match log.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Err(Outcome::Busy),
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(not_started(format!(
                "cannot lock {}: {e}",
                inv.stderr_log.display()
            )));
        }
    }
    let stderr: File = log
        .set_len(0)
        .and_then(|()| log.try_clone())
        .map_err(|e| not_started(format!("cannot use {}: {e}", inv.stderr_log.display())))?;
    let mut cmd = std::process::Command::new(inv.program);
    {
        use std::os::unix::process::CommandExt;
        if let Some(a0) = inv.argv0 {
            cmd.arg0(a0);
        }
        // Its own process group, so that a timeout kills what it started too.
        cmd.process_group(0);
    }
    crate::sys::privilege::child_drops_group(&mut cmd);
    cmd.args(inv.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr));
    if let Some(env) = inv.env {
        cmd.env_clear();
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
    }
    // The owner's ids first, then the directory (as the owner).
    crate::sys::identity::child_runs_as(&mut cmd, inv.owner.cloned(), inv.cwd);
    let mut child = cmd
        .spawn()
        .map_err(|e| not_started(format!("cannot run {}: {e}", inv.program.display())))?;
    let input = inv.stdin.to_vec();
    if let Some(mut pipe) = child.stdin.take() {
        std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
    }
    let (tx, rx) = mpsc::channel();
    // What it printed so far, for callers that read its output as it
    // comes (the WaitForExit cron jobs); the rest is sent at its end.
    let partial: Arc<Mutex<Vec<u8>>> = Arc::default();
    if let Some(mut out) = child.stdout.take() {
        let partial = partial.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match out.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => lock(&partial).extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = tx.send(std::mem::take(&mut *lock(&partial)));
        });
    }
    let pgid = child.id() as i32;
    Ok(Running {
        child,
        pgid,
        deadline: Instant::now() + inv.timeout,
        stdout: rx,
        partial,
        program: inv.program.to_path_buf(),
    })
}

impl Running {
    /// The hook's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What it has printed so far and not yet [`consumed`](Self::consume).
    pub fn stdout_so_far(&self) -> String {
        String::from_utf8_lossy(&lock(&self.partial)).into_owned()
    }

    /// Drops the first `n` bytes of what it printed: the outcome's stdout
    /// will hold only what follows.
    pub fn consume(&self, n: usize) {
        let mut p = lock(&self.partial);
        let n = n.min(p.len());
        p.drain(..n);
    }

    /// Its outcome if it has ended (or has just been killed for its
    /// timeout); `None` while it runs within its time. When it has ended,
    /// whatever it left running in its process group is killed first, while
    /// its exit keeps the group id from being given out again: a hook's
    /// leftovers would hold its stdout (its output never ending) and its
    /// stderr log (the lock that keeps the next instance from starting).
    pub fn try_finish(&mut self) -> Option<Outcome> {
        if crate::sys::pids::child_exited(self.pgid) {
            crate::sys::pids::signal_group(self.pgid, libc::SIGKILL);
        }
        match self.child.try_wait() {
            Ok(Some(status)) => Some(self.ended(status)),
            Ok(None) if Instant::now() >= self.deadline => Some(self.kill()),
            Ok(None) => None,
            Err(e) => Some(Outcome::NotStarted(format!(
                "waiting for {}: {e}",
                self.program.display()
            ))),
        }
    }

    /// Waits for its outcome, at most until its deadline.
    pub fn wait(mut self) -> Outcome {
        let mut pause = Duration::from_millis(1);
        loop {
            if let Some(o) = self.try_finish() {
                return o;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(20));
        }
    }

    /// Its outcome when the caller's own wait for any child (a subreaper's
    /// `wait4(-1)`) reaped it with `status`: then `try_finish` cannot. Its
    /// leftovers are killed as there: a group with members left keeps its
    /// id, so the signal reaches only them.
    pub fn reaped(mut self, status: std::process::ExitStatus) -> Outcome {
        crate::sys::pids::signal_group(self.pgid, libc::SIGKILL);
        self.ended(status)
    }

    /// Kills its process group now: [`Outcome::TimedOut`].
    pub fn kill(&mut self) -> Outcome {
        crate::sys::pids::signal_group(self.pgid, libc::SIGKILL);
        let _ = self.child.kill();
        let _ = self.child.wait();
        Outcome::TimedOut {
            stdout: self.collect(Duration::from_millis(100)),
        }
    }

    fn ended(&mut self, status: std::process::ExitStatus) -> Outcome {
        use std::os::unix::process::ExitStatusExt;
        // Its group is gone, so stdout ends at once, after what is still in
        // the pipe; only a process that left the group (setsid) could keep
        // it open, and then what was read by now is the output.
        let stdout = self.collect(Duration::from_millis(200));
        match status.signal() {
            Some(signal) => Outcome::Signalled { signal, stdout },
            None => Outcome::Exited {
                code: status.code().unwrap_or(-1),
                stdout,
            },
        }
    }

    fn collect(&mut self, within: Duration) -> String {
        let bytes = self
            .stdout
            .recv_timeout(within)
            .unwrap_or_else(|_| std::mem::take(&mut *lock(&self.partial)));
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// Runs the hook and waits for it, at most its timeout.
pub fn run(inv: &Invocation) -> Outcome {
    match start(inv) {
        Ok(r) => r.wait(),
        Err(o) => o,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn stdin_in_stdout_out_stderr_logged() {
        let d = tempfile::tempdir().unwrap();
        let p = script(d.path(), "h", "cat; echo oops >&2; exit 3");
        let log = d.path().join("logs/h.stderr");
        let inv = Invocation::new(&p, b"A = 1\n", Duration::from_secs(5), &log);
        let o = run(&inv);
        assert_eq!(
            o,
            Outcome::Exited {
                code: 3,
                stdout: "A = 1\n".into()
            }
        );
        let why = o.failure(&inv).unwrap();
        assert!(
            why.ends_with("exited with status 3 (stderr: oops)"),
            "{why}"
        );
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        let d = tempfile::tempdir().unwrap();
        // The grandchild holds stdout open; the kill must reach it too.
        let p = script(d.path(), "h", "sleep 30 & sleep 30");
        let log = d.path().join("h.stderr");
        let inv = Invocation::new(&p, b"", Duration::from_millis(200), &log);
        let t = Instant::now();
        let o = run(&inv);
        assert!(matches!(o, Outcome::TimedOut { .. }), "{o:?}");
        assert!(t.elapsed() < Duration::from_secs(5));
        assert!(o.failure(&inv).unwrap().contains("timed out after 0.2 s"));
    }

    #[test]
    fn leftovers_of_an_ended_hook_are_killed_and_its_output_kept() {
        let d = tempfile::tempdir().unwrap();
        let marker = d.path().join("left");
        // It prints, leaves a child holding stdout and stderr, and exits.
        let p = script(
            d.path(),
            "h",
            &format!(
                "echo 'A = 1'; (sleep 30; touch {}) & exit 0",
                marker.display()
            ),
        );
        let log = d.path().join("h.stderr");
        let inv = Invocation::new(&p, b"", Duration::from_secs(20), &log);
        let t = Instant::now();
        let o = run(&inv);
        assert_eq!(o.success(), Some("A = 1\n"), "{o:?}");
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        // The child is gone: the lock is free for the next instance.
        let next = start(&inv).expect("the next instance starts");
        assert!(matches!(next.wait(), Outcome::Exited { code: 0, .. }));
        std::thread::sleep(Duration::from_millis(100));
        assert!(!marker.exists());
    }

    #[test]
    fn busy_while_the_previous_instance_runs() {
        let d = tempfile::tempdir().unwrap();
        let p = script(d.path(), "h", "sleep 2");
        let log = d.path().join("h.stderr");
        let inv = Invocation::new(&p, b"", Duration::from_secs(5), &log);
        let mut first = start(&inv).unwrap();
        assert_eq!(start(&inv).unwrap_err(), Outcome::Busy);
        assert!(matches!(first.kill(), Outcome::TimedOut { .. }));
    }

    #[test]
    fn argv0_args_env_and_cwd() {
        let d = tempfile::tempdir().unwrap();
        let p = script(d.path(), "h", "echo \"$0 $1 $X $(pwd)\"");
        let log = d.path().join("h.stderr");
        let args = vec!["one".to_string()];
        let env = vec![("X".to_string(), "ex".to_string())];
        let mut inv = Invocation::new(&p, b"", Duration::from_secs(5), &log);
        inv.args = &args;
        inv.env = Some(&env);
        inv.cwd = Some(d.path());
        let o = run(&inv);
        let want = format!("{} one ex {}\n", p.display(), d.path().display());
        assert_eq!(o.success(), Some(want.as_str()));
    }

    #[test]
    fn programs_others_could_change_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let p = script(d.path(), "h", "true");
        assert!(validate(&p).is_ok());
        assert!(
            validate(Path::new("rel/h"))
                .unwrap_err()
                .contains("not an absolute path")
        );
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o757)).unwrap();
        assert!(validate(&p).unwrap_err().contains("writable by everyone"));
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(validate(&p).unwrap_err().contains("not an executable file"));
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(validate(&p).unwrap_err().contains("its directory"));
        // The sticky bit protects a file that exists.
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(validate(&p).is_ok());
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    }

    #[test]
    fn a_missing_program_is_not_started() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("h.stderr");
        let p = d.path().join("absent");
        let inv = Invocation::new(&p, b"", Duration::from_secs(5), &log);
        let o = run(&inv);
        assert!(
            matches!(&o, Outcome::NotStarted(w) if w.contains("cannot run")),
            "{o:?}"
        );
    }
}
