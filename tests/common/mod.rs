//! The test environment every integration test runs tools in: a temporary
//! directory as the working directory, an empty environment, and a clock
//! pinned by `TERN_NOW`, so that a tool's whole output can be compared.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Command, Output};

use tempfile::TempDir;

/// The instant `TERN_NOW` pins by default: 2023-11-14 22:13:20 UTC.
pub const NOW: i64 = 1_700_000_000;

/// The built binary of `tool`.
pub fn bin(tool: &str) -> &'static str {
    match tool {
        "tern_eval" => env!("CARGO_BIN_EXE_tern_eval"),
        "tern_submit" => env!("CARGO_BIN_EXE_tern_submit"),
        "tern_config_val" => env!("CARGO_BIN_EXE_tern_config_val"),
        "tern_q" => env!("CARGO_BIN_EXE_tern_q"),
        "tern_rm" => env!("CARGO_BIN_EXE_tern_rm"),
        "tern_hold" => env!("CARGO_BIN_EXE_tern_hold"),
        "tern_release" => env!("CARGO_BIN_EXE_tern_release"),
        "tern_qedit" => env!("CARGO_BIN_EXE_tern_qedit"),
        "tern_history" => env!("CARGO_BIN_EXE_tern_history"),
        other => panic!("no binary named {other}; add it to tests/common/mod.rs"),
    }
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
            vars: vec![("TERN_NOW".into(), NOW.to_string())],
        }
    }

    /// Sets (or, with `None`, removes) an environment variable for later runs.
    pub fn var(mut self, name: &str, value: Option<&str>) -> TestEnv {
        self.vars.retain(|(n, _)| n != name);
        if let Some(v) = value {
            self.vars.push((name.into(), v.into()));
        }
        self
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes `text` to the file `name` in the test directory.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, text).expect("writing a test file");
        p
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
    /// Asserts success with exactly `stdout` and nothing on stderr.
    #[track_caller]
    pub fn ok(&self, stdout: &str) {
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
