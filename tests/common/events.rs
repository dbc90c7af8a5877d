//! Job event logs: the events tern's reader sees, and the same logs read
//! by HTCondor's own `JobEventLog` when its Python bindings are at hand.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::{Run, bin};

/// How long [`job_events_when`] waits: the shadow, the pass and the tools
/// write a change's events just after the queue's commit (tern_shadow(1)),
/// so a job is seen in its new state, or in the history, a moment before
/// its event is in the log.
const EVENT_WAIT: Duration = Duration::from_secs(10);

/// The events of a job event log as `(cluster.proc, event number)`, read
/// with tern's reader.
#[track_caller]
pub fn log_events(path: &Path) -> Vec<(String, u32)> {
    tern::userlog::read_file(path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
        .iter()
        .map(|e| (format!("{}.{}", e.id.cluster, e.id.proc), e.kind.number()))
        .collect()
}

/// The event numbers of job `job` in the log at `path` once `done` holds
/// for them, or after [`EVENT_WAIT`] as they are then. A log that cannot
/// be read then fails the test with the reader's error.
#[track_caller]
pub fn job_events_when(path: &Path, job: &str, mut done: impl FnMut(&[u32]) -> bool) -> Vec<u32> {
    let read = || -> Result<Vec<u32>, String> {
        let events = tern::userlog::read_file(path).map_err(|e| e.to_string())?;
        Ok(events
            .iter()
            .filter(|e| format!("{}.{}", e.id.cluster, e.id.proc) == job)
            .map(|e| e.kind.number())
            .collect())
    };
    let mut last = Err(String::from("not read yet"));
    super::process::wait_until(EVENT_WAIT, || {
        last = read();
        last.as_deref().is_ok_and(&mut done)
    });
    last.unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Asserts that job `job`'s events in the log at `path` are `want`, giving
/// the last of them [`EVENT_WAIT`] to arrive.
#[track_caller]
pub fn assert_job_events(path: &Path, job: &str, want: impl AsRef<[u32]>) {
    let want = want.as_ref();
    let got = job_events_when(path, job, |e| e == want);
    assert_eq!(got, want, "the events of job {job} in {}", path.display());
}

/// The Python of a virtual environment with HTCondor's bindings:
/// `TERN_ORACLE_VENV`, else the one tests/userlog/run.sh makes under the
/// target directory, else /tmp/oracle.
fn oracle_python() -> Option<PathBuf> {
    let target = Path::new(bin("tern_q")).parent()?.parent()?.to_path_buf();
    let venvs = match std::env::var_os("TERN_ORACLE_VENV") {
        Some(v) => vec![PathBuf::from(v)],
        None => vec![target.join("oracle-venv"), PathBuf::from("/tmp/oracle")],
    };
    venvs.into_iter().map(|v| v.join("bin/python")).find(|py| {
        Command::new(py)
            .args(["-c", "import htcondor"])
            .env("CONDOR_CONFIG", "/dev/null")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// The attributes of the first execute event (001) of the log at `path`
/// as HTCondor's `JobEventLog` reads them, `name = value` a line, sorted;
/// `None` without the bindings (unless `TERN_REQUIRE_ORACLE` is set).
pub fn oracle_execute_attrs(path: &Path) -> Option<String> {
    const READ: &str = "import sys, htcondor
for e in htcondor.JobEventLog(sys.argv[1]).events(stop_after=0):
    if int(e.type) == 1:
        for k in sorted(e.keys()):
            print(k, '=', repr(e[k]))
        break
";
    let Some(py) = oracle_python() else {
        assert!(
            std::env::var_os("TERN_REQUIRE_ORACLE").is_none(),
            "TERN_REQUIRE_ORACLE is set but no virtual environment has htcondor"
        );
        return None;
    };
    let out = Command::new(py)
        .args(["-c", READ])
        .arg(path)
        .env("CONDOR_CONFIG", "/dev/null")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Reads each log with HTCondor's `htcondor.JobEventLog` and asserts it
/// sees the same events as tern's reader. Without the bindings it says so
/// and checks nothing, unless `TERN_REQUIRE_ORACLE` is set. The two reads
/// are moments apart, and a shadow may append a job's last event between
/// them (its events follow the queue's commit), so a difference is read
/// again for up to [`EVENT_WAIT`] before it fails the test.
#[track_caller]
pub fn check_logs_with_htcondor(paths: &[PathBuf]) {
    let Some(py) = oracle_python() else {
        assert!(
            std::env::var_os("TERN_REQUIRE_ORACLE").is_none(),
            "TERN_REQUIRE_ORACLE is set but no virtual environment has htcondor"
        );
        eprintln!(
            "skipped: no htcondor bindings (set TERN_ORACLE_VENV, or run \
             tests/userlog/run.sh once), so the logs were not read with JobEventLog"
        );
        return;
    };
    let mut read = (String::new(), String::new());
    let same = super::process::wait_until(EVENT_WAIT, || {
        read = (oracle_events(&py, paths), tern_events(paths));
        read.0 == read.1
    });
    if !same {
        assert_eq!(read.0, read.1, "JobEventLog and tern read different events");
    }
}

/// The events of `paths` as HTCondor's `JobEventLog` reads them, a line
/// each: path, job, event number.
#[track_caller]
fn oracle_events(py: &Path, paths: &[PathBuf]) -> String {
    const READ: &str = "import sys, htcondor
for p in sys.argv[1:]:
    for e in htcondor.JobEventLog(p).events(stop_after=0):
        print(p, f'{e.cluster}.{e.proc}', int(e.type))
";
    let out = Command::new(py)
        .arg("-c")
        .arg(READ)
        .args(paths)
        .env("CONDOR_CONFIG", "/dev/null")
        .output()
        .expect("running the oracle's python");
    let r = Run::from(out);
    assert_eq!(r.code, 0, "JobEventLog failed: {}", r.stderr);
    r.stdout
}

/// The same lines as tern's reader sees them.
#[track_caller]
fn tern_events(paths: &[PathBuf]) -> String {
    let mut lines = String::new();
    for p in paths {
        for (job, n) in log_events(p) {
            lines += &format!("{} {job} {n}\n", p.display());
        }
    }
    lines
}
