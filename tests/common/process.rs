//! Process tests: jobs that really run, started by tern_negotiate and
//! tern_shadow, in an environment ([`RunEnv`]) that cleans up after itself,
//! and the polling and `/proc` checks that watch them.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::{Run, TestEnv, bin};

/// How long a process test waits for something that should happen soon
/// (generous: the tests share a loaded machine).
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The built binary of any tool, found beside the ones cargo names, so a
/// tool can be run (or found missing) before [`TOOLS`](super::TOOLS) lists it.
pub fn tool_path(tool: &str) -> PathBuf {
    Path::new(bin("tern_q")).with_file_name(tool)
}

/// Whether `tool` is built.
pub fn has_tool(tool: &str) -> bool {
    tool_path(tool).is_file()
}

/// examples/fake_job.rs, built by cargo test beside the tools.
pub fn fake_job() -> PathBuf {
    Path::new(bin("tern_q"))
        .parent()
        .expect("the binaries' directory")
        .join("examples/fake_job")
}

/// Polls `cond` every 50 ms until it holds (true) or `timeout` passes
/// (false).
pub fn wait_until(timeout: Duration, cond: impl FnMut() -> bool) -> bool {
    wait_until_every(timeout, Duration::from_millis(50), cond)
}

/// [`wait_until`], looking every `every`: for a loop that waits for short
/// jobs many hundred times.
pub fn wait_until_every(
    timeout: Duration,
    every: Duration,
    mut cond: impl FnMut() -> bool,
) -> bool {
    let end = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(every);
    }
}

/// Whether process `pid` exists and is not a zombie.
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => false,
    }
}

/// The state letter of process `pid` (`R`, `S`, `T` for stopped, ...).
pub fn proc_state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// The pids of every process (other than this one) whose `/proc/<pid>/<file>`
/// satisfies `pred`, read as bytes.
fn processes_where(mut pred: impl FnMut(i32) -> bool) -> Vec<i32> {
    let me = std::process::id() as i32;
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me && alive(pid) && pred(pid))
        .collect()
}

/// A job that writes its scratch directory (named after its shadow's pid,
/// so two jobs that print the same one ran under the same shadow) to
/// `out`, then, with `wait_for_go`, runs until the file `go` exists in the
/// test's directory.
pub fn scratch_job(out: &str, wait_for_go: bool) -> String {
    let wait = if wait_for_go {
        "; while [ ! -e go ]; do sleep 0.05; done"
    } else {
        ""
    };
    format!(
        "executable = /bin/sh\narguments = \"-c 'echo $_CONDOR_SCRATCH_DIR{wait}'\"\n\
         output = {out}\nqueue\n"
    )
}

/// A TestEnv in which jobs run: its own SPOOL, no configuration file, a
/// machine of 4 cpus, 4 GiB of memory and 10 GiB of disk whatever the real
/// one has, and the system clock (a running `TERN_NOW` clock starts afresh
/// in every process, so a shadow and a pass would disagree on the time).
/// Dropping it kills every process it left behind: tools (their
/// environment names its SPOOL), and jobs and their children (they run in
/// its directory).
pub struct RunEnv {
    env: TestEnv,
}

impl std::ops::Deref for RunEnv {
    type Target = TestEnv;
    fn deref(&self) -> &TestEnv {
        &self.env
    }
}

impl RunEnv {
    pub fn new() -> RunEnv {
        let env = TestEnv::with_spool()
            .var("TERN_NOW", None)
            .var("_TERN_NEGOTIATE_ON_SUBMIT", None)
            .var("_TERN_NUM_CPUS", Some("4"))
            .var("_TERN_MEMORY", Some("4096"))
            .var("_TERN_DISK", Some("10485760"));
        RunEnv { env }
    }

    /// Sets the environment variable `name` for later runs.
    pub fn var_env(mut self, name: &str, value: &str) -> RunEnv {
        self.env.vars.retain(|(n, _)| n != name);
        self.env.vars.push((name.into(), value.into()));
        self
    }

    /// Sets configuration knob `name` (as `_TERN_<name>`) for later runs.
    pub fn knob(mut self, name: &str, value: &str) -> RunEnv {
        let name = format!("_TERN_{name}");
        self.env.vars.retain(|(n, _)| *n != name);
        self.env.vars.push((name, value.into()));
        self
    }

    /// The command for any built tool, with this environment.
    pub fn command(&self, tool: &str) -> Command {
        let mut c = Command::new(tool_path(tool));
        c.env_clear().current_dir(self.path(""));
        for (n, v) in &self.env.vars {
            c.env(n, v);
        }
        c
    }

    pub fn run<I, S>(&self, tool: &str, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<S> = args.into_iter().collect();
        // A build in the same target directory replaces the binaries while
        // tests run; one missing for a moment is waited for, briefly.
        let mut tries = 0;
        loop {
            match self.command(tool).args(&args).output() {
                Ok(out) => return Run::from(out),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && tries < 50 => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(e) => panic!("running {tool}: {e}"),
            }
        }
    }

    /// Runs `tool` and asserts it succeeded with nothing on stderr; its
    /// stdout.
    #[track_caller]
    pub fn run_ok<I, S>(&self, tool: &str, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let r = self.run(tool, args);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{tool}: {r:?}");
        r.stdout
    }

    /// Writes the submit file `name` and submits it; the new cluster.
    #[track_caller]
    pub fn submit(&self, name: &str, text: &str) -> i64 {
        self.write(name, text);
        let out = self.run_ok("tern_submit", [name]);
        out.trim_end()
            .rsplit_once("cluster ")
            .and_then(|(_, c)| c.strip_suffix('.')?.parse().ok())
            .unwrap_or_else(|| panic!("no cluster in tern_submit's output {out:?}"))
    }

    /// One negotiation pass, waiting for a concurrent one to finish first.
    #[track_caller]
    pub fn negotiate(&self) {
        self.run_ok("tern_negotiate", ["-wait"]);
    }

    /// `ATTRS` of queued job `job` (`C.P`) as `tern_q -af` prints them, or
    /// None when the job is not in the queue.
    #[track_caller]
    pub fn q_af(&self, job: &str, attrs: &[&str]) -> Option<String> {
        let out = self.run_ok("tern_q", [&[job, "-af"], attrs].concat());
        (!out.is_empty()).then(|| out.trim_end().to_string())
    }

    /// The same from the history: None until the job has left the queue.
    #[track_caller]
    pub fn history_af(&self, job: &str, attrs: &[&str]) -> Option<String> {
        let out = self.run_ok("tern_history", [&[job, "-af"], attrs].concat());
        (!out.is_empty()).then(|| out.trim_end().to_string())
    }

    /// Job `job`'s attribute, from the queue or else from the history.
    #[track_caller]
    pub fn attr(&self, job: &str, attr: &str) -> Option<String> {
        self.q_af(job, &[attr])
            .or_else(|| self.history_af(job, &[attr]))
    }

    /// Job `job`'s JobStatus while it is in the queue.
    #[track_caller]
    pub fn status(&self, job: &str) -> Option<i64> {
        self.q_af(job, &["JobStatus"])
            .map(|s| s.parse().expect("a JobStatus"))
    }

    /// Waits until no slot is claimed: a shadow whose job left the queue
    /// may keep its claim a moment (SHADOW_LINGER_MSEC).
    #[track_caller]
    pub fn wait_slots_unclaimed(&self) {
        self.wait_for("every slot unclaimed", TIMEOUT, || {
            !self
                .run_ok("tern_status", ["-af", "State"])
                .contains("Claimed")
        });
    }

    /// Waits up to `timeout` for `cond`; panics naming `what`, with the
    /// queue, the history and the live processes, if it never holds.
    #[track_caller]
    pub fn wait_for(&self, what: &str, timeout: Duration, cond: impl FnMut() -> bool) {
        if !wait_until(timeout, cond) {
            panic!(
                "timed out after {timeout:?} waiting for {what}\n{}",
                self.diagnosis()
            );
        }
    }

    /// Waits up to `timeout` until `job` has left the queue; its history
    /// JobStatus.
    #[track_caller]
    pub fn wait_history(&self, job: &str, timeout: Duration) -> i64 {
        let mut status = None;
        self.wait_for(&format!("job {job} in the history"), timeout, || {
            status = self.history_af(job, &["JobStatus"]);
            status.is_some()
        });
        status.unwrap().parse().unwrap()
    }

    /// The queue, the history and this environment's processes, for a
    /// failure message.
    pub fn diagnosis(&self) -> String {
        let cols = [
            "-af",
            "ClusterId",
            "ProcId",
            "JobStatus",
            "NumJobStarts",
            "RemoteHost",
            "HoldReason",
            "LastRejMatchReason",
        ];
        let q = self.run("tern_q", cols);
        let h = self.run("tern_history", cols);
        let procs: Vec<String> = self
            .leftovers()
            .into_iter()
            .map(|pid| {
                let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
                format!("{pid} {} {cmd}", proc_state(pid).unwrap_or('?'))
            })
            .collect();
        // What a pass would do now, the slots, and the ends of the logs a
        // stuck job leaves its reasons in (read-only: -dry-run changes
        // nothing).
        let dry = self.run("tern_negotiate", ["-dry-run"]);
        let slots = self.run("tern_status", ["-af", "Name", "State", "Activity", "JobId"]);
        let tail = |rel: &str| {
            let text = std::fs::read_to_string(self.spool().join(rel)).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(20)..].join("\n")
        };
        format!(
            "queue:\n{}{}history:\n{}{}processes:\n{}\nslots:\n{}{}a pass now (-dry-run):\n{}{}\
             ShadowLog (end):\n{}\nfetch.log (end):\n{}",
            q.stdout,
            q.stderr,
            h.stdout,
            h.stderr,
            procs.join("\n"),
            slots.stdout,
            slots.stderr,
            dry.stdout,
            dry.stderr,
            tail("shadow/ShadowLog"),
            tail("hooks/fetch.log"),
        )
    }

    /// The pid of job `job`'s live shadow: the job's ShadowPid when it has
    /// one, else the tern_shadow process holding its lock file.
    pub fn shadow_pid(&self, job: &str) -> Option<i32> {
        if let Some(pid) = self
            .q_af(job, &["ShadowPid"])
            .and_then(|s| s.parse::<i32>().ok())
            .filter(|&p| alive(p))
        {
            return Some(pid);
        }
        let lock = self.spool().join(format!("shadow/{job}.lock"));
        let holders = processes_where(|pid| {
            std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|fds| {
                fds.filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
                    .any(|target| target == lock)
            })
        });
        let shadow = holders.iter().copied().find(|&pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("tern_shadow"))
        });
        shadow.or(holders.first().copied())
    }

    /// Every live process this environment started: tools whose environment
    /// names its SPOOL, and processes working in its directory.
    pub fn leftovers(&self) -> Vec<i32> {
        let dir = self.path("");
        let mark = format!("_TERN_SPOOL={}", self.spool().display());
        processes_where(|pid| {
            let in_dir = std::fs::read_link(format!("/proc/{pid}/cwd"))
                .is_ok_and(|cwd| cwd.starts_with(&dir));
            in_dir
                || std::fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|env| env.split(|&b| b == 0).any(|var| var == mark.as_bytes()))
        })
    }
}

impl Drop for RunEnv {
    fn drop(&mut self) {
        // Processes may start others while they die (a shadow's pass), so
        // sweep until none is left.
        for _ in 0..100 {
            let pids = self.leftovers();
            if pids.is_empty() {
                return;
            }
            for pid in pids {
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!("left behind: {:?}", self.leftovers());
    }
}
