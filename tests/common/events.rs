//! Job event logs: the events tern's reader sees, and the same logs read
//! by HTCondor's own `JobEventLog` when its Python bindings are at hand.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{Run, bin};

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

/// The event numbers of job `job` in the log at `path`, in order.
#[track_caller]
pub fn job_events(path: &Path, job: &str) -> Vec<u32> {
    log_events(path)
        .into_iter()
        .filter(|(j, _)| j == job)
        .map(|(_, n)| n)
        .collect()
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

/// Reads each log with HTCondor's `htcondor.JobEventLog` and asserts it
/// sees the same events as tern's reader. Without the bindings it says so
/// and checks nothing, unless `TERN_REQUIRE_ORACLE` is set.
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
    const READ: &str = "import sys, htcondor
for p in sys.argv[1:]:
    for e in htcondor.JobEventLog(p).events(stop_after=0):
        print(p, f'{e.cluster}.{e.proc}', int(e.type))
";
    let out = Command::new(&py)
        .arg("-c")
        .arg(READ)
        .args(paths)
        .env("CONDOR_CONFIG", "/dev/null")
        .output()
        .expect("running the oracle's python");
    let r = Run::from(out);
    assert_eq!(r.code, 0, "JobEventLog failed: {}", r.stderr);
    let mut want = String::new();
    for p in paths {
        for (job, n) in log_events(p) {
            want += &format!("{} {job} {n}\n", p.display());
        }
    }
    assert_eq!(r.stdout, want, "JobEventLog and tern read different events");
}
