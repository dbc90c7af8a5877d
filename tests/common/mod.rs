//! The test environment every integration test runs tools in: a temporary
//! directory as the working directory, an empty environment, and a clock
//! pinned by `TERN_NOW`, so that a tool's whole output can be compared.
//!
//! This module holds [`TestEnv`], what a run gave ([`Run`], with
//! [`Run::normalized`] for output that names the test's own paths or user),
//! and the one table of tools ([`TOOLS`]). The rest is by topic:
//! - [`process`]: [`RunEnv`], where jobs really run, and the waiting and
//!   `/proc` checks process tests need;
//! - [`queue`]: reading and changing a test's queue database directly, and
//!   putting jobs with fixed owners into it;
//! - [`replay`]: a follower of the transaction log, and views of the queue
//!   to compare it with;
//! - [`events`]: job event logs, read by tern and by HTCondor;
//! - [`man`]: checking a tool's options against its manual page;
//! - [`rng`]: the small seeded generator of the random tests;
//! - [`router`]: routes, router passes and routed jobs;
//! - [`users`]: test users, and root's passes acting for them.

pub mod events;
pub mod man;
pub mod process;
pub mod queue;
pub mod replay;
pub mod rng;
pub mod router;
pub mod slurm;
pub mod users;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use tempfile::TempDir;

pub use events::{
    assert_job_events, check_logs_with_htcondor, job_events_when, log_events, oracle_execute_attrs,
};
pub use process::{
    RunEnv, TIMEOUT, alive, fake_job, has_tool, proc_state, scratch_job, tool_path, wait_until,
    wait_until_every,
};

/// The instant `TERN_NOW` pins by default: 2023-11-14 22:13:20 UTC.
pub const NOW: i64 = 1_700_000_000;

/// A built tool: its name, its binary, and its clap command (whose options
/// its manual page must document).
pub struct Tool {
    pub name: &'static str,
    pub exe: &'static str,
    pub command: fn() -> clap::Command,
}

/// `runs!(env, [tool, args...] => code, stdout, stderr)`: runs a tool and
/// asserts its whole outcome (one line a case, for the job tools' tests).
macro_rules! runs {
    ($env:expr, [$($arg:expr),+] => $code:expr, $out:expr, $err:expr) => {{
        let argv: Vec<String> = vec![$($arg.to_string()),+];
        let r = $env.run(&argv[0], &argv[1..]);
        let got = (r.code, r.stdout.as_str(), r.stderr.as_str());
        assert_eq!(got, ($code, &*$out, &*$err), "{argv:?}");
    }};
}
pub(crate) use runs;

macro_rules! tools {
    ($($name:ident => $module:ident),* $(,)?) => {
        &[$(Tool {
            name: stringify!($name),
            exe: env!(concat!("CARGO_BIN_EXE_", stringify!($name))),
            command: <tern::cli::$module::Args as clap::CommandFactory>::command,
        }),*]
    };
}

/// Every tool, once. A new binary goes here, and nowhere else in the tests.
pub const TOOLS: &[Tool] = tools![
    tern_eval => eval,
    tern_complete => complete,
    tern_submit => submit,
    tern_config_val => config_val,
    tern_q => q,
    tern_rm => rm,
    tern_hold => hold,
    tern_release => release,
    tern_qedit => qedit,
    tern_history => history,
    tern_status => status,
    tern_negotiate => negotiate,
    tern_shadow => shadow,
    tern_gridmanager => gridmanager,
    tern_cron => cron,
    tern_fetchwork => fetchwork,
    tern_vacate_job => vacate_job,
    tern_suspend => suspend,
    tern_continue => continue_job,
    tern_userprio => userprio,
    tern_prio => prio,
    tern_job_router => job_router,
    tern_router_q => router_q,
    tern_router_history => router_history,
    tern_router_rm => router_rm,
    tern_transform_ads => transform_ads,
    tern_watch_q => watch_q,
];

/// The built binary of `tool`.
pub fn bin(tool: &str) -> &'static str {
    match TOOLS.iter().find(|t| t.name == tool) {
        Some(t) => t.exe,
        None => panic!("no binary named {tool}; add it to TOOLS in tests/common/mod.rs"),
    }
}

/// The login name of the user running the tests, as the tools see it.
pub fn real_user() -> String {
    static USER: OnceLock<String> = OnceLock::new();
    USER.get_or_init(|| {
        let out = Command::new("id")
            .arg("-un")
            .output()
            .expect("running id -un");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    })
    .clone()
}

/// `text` with the real user written `$USER`, for output that names no
/// path (see [`normalize`]).
pub fn user_normalized(text: &str) -> String {
    replace_user(text, &real_user())
}

/// One hermetic place to run tools in.
pub struct TestEnv {
    dir: TempDir,
    vars: Vec<(String, String)>,
}

/// What a tool did: exit code and both streams.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        TestEnv {
            dir: tempfile::tempdir().expect("a temporary directory"),
            // Plain tool tests run no jobs: a submit starts no pass.
            vars: vec![
                ("TERN_NOW".into(), NOW.to_string()),
                ("_TERN_NEGOTIATE_ON_SUBMIT".into(), "false".into()),
            ],
        }
    }

    /// A test directory with its own SPOOL (`spool/`, made by the first
    /// tool that writes), no configuration file, UTC as the local zone, the
    /// directory as HOME and a fixed PATH.
    pub fn with_spool() -> TestEnv {
        let env = TestEnv::new();
        let dir = env.path("");
        let spool = env.spool();
        env.var("_TERN_SPOOL", Some(spool.to_str().unwrap()))
            .var("TERN_CONFIG", Some("/dev/null"))
            .var("TZ", Some("UTC"))
            .var("HOME", Some(dir.to_str().unwrap()))
            .var("PATH", Some("/usr/bin:/bin"))
    }

    /// Sets (or, with `None`, removes) an environment variable for later runs.
    pub fn var(mut self, name: &str, value: Option<&str>) -> TestEnv {
        self.vars.retain(|(n, _)| n != name);
        if let Some(v) = value {
            self.vars.push((name.into(), v.into()));
        }
        self
    }

    /// The environment variables runs get.
    pub fn vars(&self) -> &[(String, String)] {
        &self.vars
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The SPOOL of [`TestEnv::with_spool`].
    pub fn spool(&self) -> PathBuf {
        self.path("spool")
    }

    /// Writes `text` to the file `name` in the test directory.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, text).expect("writing a test file");
        p
    }

    /// Writes `name` as a tiny executable shell script, so that its size
    /// (a job's ImageSize, DiskUsage) is the same on every machine.
    pub fn write_program(&self, name: &str) -> PathBuf {
        let prog = self.write(name, "#!/bin/sh\nexit 0\n");
        let mut perm = std::fs::metadata(&prog).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
        std::fs::set_permissions(&prog, perm).unwrap();
        prog
    }

    /// The command for `tool` with this environment and nothing else.
    pub fn command(&self, tool: &str) -> Command {
        let mut c = Command::new(bin(tool));
        c.env_clear().current_dir(self.dir.path());
        for (n, v) in &self.vars {
            c.env(n, v);
        }
        c
    }

    pub fn run<I, S>(&self, tool: &str, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self
            .command(tool)
            .args(args)
            .output()
            .expect("running the tool");
        Run::from(out)
    }

    /// `text` with this environment's SPOOL written `$SPOOL`, its directory
    /// `$TEST_DIR` and the real user `$USER` (see [`normalize`]).
    pub fn normalize(&self, text: &str) -> String {
        normalize(text, &self.spool(), self.dir.path(), &real_user())
    }
}

/// `text` as it reads on any machine: the path `spool` becomes `$SPOOL`,
/// then (the SPOOL lies inside it) `dir` becomes `$TEST_DIR`, and the user
/// name `user`, where it stands as a word, becomes `$USER`. A name padded into a column (followed by two spaces or
/// more) keeps the column's width, so a fixed-width column (tern_q's OWNER
/// in -nobatch, -hold and -run is 14 wide) reads the same whatever the
/// name's length. Columns whose width follows the longest name (the batch
/// view's OWNER) cannot be made stable this way: tests pin their owners.
pub fn normalize(text: &str, spool: &Path, dir: &Path, user: &str) -> String {
    let mut out = text.replace(spool.to_str().unwrap(), "$SPOOL");
    out = out.replace(dir.to_str().unwrap(), "$TEST_DIR");
    replace_user(&out, user)
}

fn replace_user(text: &str, user: &str) -> String {
    const TOKEN: &str = "$USER";
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(user) {
        let before = rest[..at].chars().last().or_else(|| out.chars().last());
        let after = &rest[at + user.len()..];
        if word(before) || word(after.chars().next()) {
            let skip = at + user.chars().next().map_or(1, char::len_utf8);
            out.push_str(&rest[..skip]);
            rest = &rest[skip..];
            continue;
        }
        out.push_str(&rest[..at]);
        out.push_str(TOKEN);
        let spaces = after.len() - after.trim_start_matches(' ').len();
        if spaces >= 2 {
            let width = (user.chars().count() + spaces)
                .saturating_sub(TOKEN.len())
                .max(1);
            out.extend(std::iter::repeat_n(' ', width));
            rest = &after[spaces..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

impl From<Output> for Run {
    fn from(out: Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl Run {
    /// Both streams normalized for `env` (see [`TestEnv::normalize`]).
    pub fn normalized(self, env: &TestEnv) -> Run {
        Run {
            code: self.code,
            stdout: env.normalize(&self.stdout),
            stderr: env.normalize(&self.stderr),
        }
    }

    /// Asserts success with exactly `stdout` and nothing on stderr.
    #[track_caller]
    pub fn ok(&self, stdout: &str) {
        if (self.code, self.stderr.as_str()) == (0, "") && self.stdout != stdout {
            // A screen reads better as a picture than as one escaped line.
            panic!(
                "unexpected output:\n{}--- expected:\n{stdout}--- end",
                self.stdout
            );
        }
        assert_eq!(
            (self.code, self.stdout.as_str(), self.stderr.as_str()),
            (0, stdout, ""),
            "unexpected outcome"
        );
    }

    /// Asserts failure with `code`, nothing on stdout and exactly `stderr`.
    #[track_caller]
    pub fn fails(&self, code: i32, stderr: &str) {
        assert_eq!(
            (self.code, self.stdout.as_str(), self.stderr.as_str()),
            (code, "", stderr),
            "unexpected outcome"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_names_paths_and_keeps_padded_columns_wide() {
        let n =
            |t: &str, user: &str| normalize(t, Path::new("/t/x/spool"), Path::new("/t/x"), user);
        assert_eq!(
            n("<_TERN_/t/x/spool> /t/x/job.sub", "root"),
            "<_TERN_$SPOOL> $TEST_DIR/job.sub"
        );
        // A padded name keeps its column; a name in running text does not pad.
        assert_eq!(
            n("1.0   root           11/14", "root"),
            "1.0   $USER          11/14"
        );
        assert_eq!(
            n("1.0   abcdefghijklm  11/14", "abcdefghijklm"),
            "1.0   $USER          11/14"
        );
        assert_eq!(
            n("Total for root: 1 jobs; root@host", "root"),
            "Total for $USER: 1 jobs; $USER@host"
        );
        // Only whole words: not a name inside another one.
        assert_eq!(
            n("rooted root_x xroot root", "root"),
            "rooted root_x xroot $USER"
        );
    }
}
