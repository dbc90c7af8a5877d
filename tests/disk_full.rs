//! A full SPOOL, a full EXECUTE and a read-only SPOOL, each on a small
//! tmpfs of its own: the tools fail with a message naming the file and the
//! trouble, nothing is lost or half-written, and work resumes once space
//! (or the right to write) returns. And a /dev/null that a job cannot
//! open, named in its hold.
//!
//! Mounting needs root; as anyone else these print why and pass, unless
//! TERN_REQUIRE_SHARED=1 (CI, which runs the root-only tests as root).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::common::assert_job_events;
use crate::common::process::RunEnv;

/// A tmpfs mounted for one test, unmounted when dropped.
struct Mount {
    dir: PathBuf,
}

impl Mount {
    /// A `size` tmpfs at `dir`, or None (with why) when this process may
    /// not mount.
    fn tmpfs(dir: &Path, size: &str) -> Option<Mount> {
        std::fs::create_dir_all(dir).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0755")])
            .arg("tmpfs")
            .arg(dir)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Mount {
                dir: dir.to_path_buf(),
            }),
            Ok(o) => skip(&format!(
                "cannot mount a tmpfs: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            )),
            Err(e) => skip(&format!("cannot run mount: {e}")),
        }
    }

    fn remount(&self, opts: &str) {
        let o = Command::new("mount")
            .args(["-o", &format!("remount,{opts}")])
            .arg(&self.dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "remount {opts}: {o:?}");
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        // Lazily: a shadow that outlived a failed test may still be in it.
        let _ = Command::new("umount").arg("-l").arg(&self.dir).output();
    }
}

fn skip<T>(why: &str) -> Option<T> {
    if std::env::var("TERN_REQUIRE_SHARED").as_deref() == Ok("1") {
        panic!("TERN_REQUIRE_SHARED=1 but {why}");
    }
    eprintln!("skipped: {why}");
    None
}

fn as_root() -> bool {
    crate::common::users::is_root() || skip::<()>("mounting a tmpfs needs root").is_some()
}

/// A test environment whose SPOOL (`knob` "SPOOL", in a directory of the
/// mount) or EXECUTE (the mount itself) is on a `size` tmpfs; None, having
/// said why, where this process may not mount. Its fields drop in order:
/// the mount goes before the environment's directory is removed.
struct Small {
    m: Mount,
    env: RunEnv,
    /// The SPOOL or EXECUTE directory.
    dir: PathBuf,
}

fn on_tmpfs(knob: &str, size: &str) -> Option<Small> {
    if !as_root() {
        return None;
    }
    let base = RunEnv::new();
    let mnt = base.path("mnt");
    let dir = if knob == "SPOOL" {
        mnt.join("spool")
    } else {
        mnt.clone()
    };
    let env = base
        .knob(knob, dir.to_str().unwrap())
        .knob("NEGOTIATE_ON_SUBMIT", "false");
    let m = Mount::tmpfs(&mnt, size)?;
    Some(Small { m, env, dir })
}

/// Fills the file system holding `dir` with one file; the file.
fn fill(dir: &Path) -> PathBuf {
    use std::io::Write;
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).unwrap();
    let block = vec![0u8; 4096];
    while f.write_all(&block).is_ok() {}
    let _ = f.flush();
    path
}

/// The queue's jobs as `ClusterId.ProcId JobStatus`, sorted.
fn jobs(env: &RunEnv) -> Vec<String> {
    let out = env.run_ok("tern_q", ["-af", "ClusterId", "ProcId", "JobStatus"]);
    let mut v: Vec<String> = out.lines().map(str::to_string).collect();
    v.sort();
    v
}

/// Copies the write-ahead log into the database and empties its file, so
/// that the next commit needs new blocks: a closing handle leaves the log's
/// blocks in place, and a commit that fits in them needs no space at all.
fn empty_log(spool: &Path) {
    let c = rusqlite::Connection::open(spool.join("queue.db")).unwrap();
    c.busy_timeout(Duration::from_secs(10)).unwrap();
    let busy: i64 = c
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))
        .unwrap();
    assert_eq!(busy, 0, "the log could not be emptied");
    let wal = std::fs::metadata(spool.join("queue.db-wal")).map_or(0, |m| m.len());
    assert_eq!(wal, 0, "the log's file is {wal} bytes");
}

fn integrity(spool: &Path) -> String {
    let c = rusqlite::Connection::open(spool.join("queue.db")).unwrap();
    c.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_full_spool_fails_each_write_whole_and_work_resumes_when_space_returns() {
    let Some(t) = on_tmpfs("SPOOL", "2m") else {
        return;
    };
    let (m, env, spool) = (&t.m, &t.env, &t.dir);
    let c = env.submit("a.sub", "executable = /bin/true\nqueue 3\n");
    let before = jobs(env);
    assert_eq!(before.len(), 3);

    let filler = fill(&m.dir);
    // A cluster far bigger than what is left: refused whole.
    let long = "x".repeat(3000);
    env.write(
        "big.sub",
        &format!("executable = /bin/true\narguments = \"{long}\"\nqueue 500\n"),
    );
    let r = env.run("tern_submit", ["big.sub"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.stdout, "", "nothing may be reported submitted");
    let want = format!(
        "no space left for the queue database {}",
        spool.join("queue.db").display()
    );
    assert!(r.stderr.contains(&want), "{}", r.stderr);
    // The queue tools still read, and each write is all or nothing.
    assert_eq!(jobs(env), before);
    for (tool, args) in [
        (
            "tern_qedit",
            vec![format!("{c}.1"), "Long".into(), format!("\"{long}{long}\"")],
        ),
        ("tern_hold", vec![format!("{c}.0")]),
        ("tern_negotiate", vec![]),
    ] {
        let r = env.run(tool, &args);
        assert!(
            r.code == 0 || r.stderr.contains("no space left"),
            "{tool}: {r:?}"
        );
    }
    assert_eq!(integrity(spool), "ok");

    // Space returns: the refused cluster goes in, and every job runs.
    std::fs::remove_file(filler).unwrap();
    let r = env.run("tern_release", [&format!("{c}.0")]);
    assert!(r.code == 0 || r.stderr.contains("not held"), "{r:?}");
    let d = env.submit("more.sub", "executable = /bin/true\nqueue 20\n");
    env.negotiate();
    env.wait_for("every job done", Duration::from_secs(120), || {
        let _ = env.run("tern_negotiate", ["-wait"]);
        jobs(env).is_empty()
    });
    let done = env.run_ok("tern_history", ["-af", "ClusterId", "ExitCode"]);
    assert_eq!(
        done.lines().filter(|l| l.ends_with(" 0")).count(),
        23,
        "{done}"
    );
    assert!(done.lines().any(|l| l.starts_with(&format!("{d} "))));
    assert_eq!(integrity(spool), "ok");
}

#[test]
fn a_read_only_spool_still_reads_and_refuses_writes_by_name() {
    let Some(t) = on_tmpfs("SPOOL", "4m") else {
        return;
    };
    let (m, env, spool) = (&t.m, &t.env, &t.dir);
    let c = env.submit("a.sub", "executable = /bin/true\nqueue 2\n");
    m.remount("ro");
    assert_eq!(jobs(env).len(), 2);
    env.run_ok("tern_history", Vec::<&str>::new());
    let db = spool.join("queue.db");
    let want = format!("the queue database {} cannot be written", db.display());
    for (tool, args) in [
        ("tern_submit", vec!["a.sub".to_string()]),
        ("tern_hold", vec![format!("{c}.0")]),
        ("tern_rm", vec![format!("{c}")]),
    ] {
        let r = env.run(tool, &args);
        assert_eq!(r.code, 1, "{tool}: {r:?}");
        assert!(r.stderr.contains(&want), "{tool}: {}", r.stderr);
    }
    let r = env.run("tern_negotiate", Vec::<&str>::new());
    assert_ne!(r.code, 0);
    assert!(
        r.stderr
            .contains(&spool.join("negotiator.lock").display().to_string()),
        "{}",
        r.stderr
    );
    m.remount("rw");
    assert_eq!(jobs(env).len(), 2);
    env.submit("a.sub", "executable = /bin/true\nqueue 2\n");
    assert_eq!(jobs(env).len(), 4);
    assert_eq!(integrity(spool), "ok");
}

#[test]
fn a_full_execute_holds_the_job_whose_input_does_not_fit_and_it_runs_once_there_is_room() {
    let Some(t) = on_tmpfs("EXECUTE", "2m") else {
        return;
    };
    let (m, env) = (&t.m, &t.env);
    let input: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(env.path("big.in"), &input).unwrap();
    // request_disk small enough to match the 2 MB slot, input too big to
    // land in its sandbox.
    let c = env.submit(
        "x.sub",
        "executable = /bin/cat\narguments = big.in\nshould_transfer_files = YES\n\
         transfer_input_files = big.in\noutput = out.txt\nrequest_disk = 1\nqueue\n",
    );
    let job = format!("{c}.0");
    env.negotiate();
    env.wait_for("the job held", Duration::from_secs(60), || {
        env.status(&job) == Some(5)
    });
    let held = env
        .q_af(&job, &["HoldReasonCode", "HoldReasonSubCode", "HoldReason"])
        .unwrap();
    assert!(held.starts_with("13 28 "), "{held}");
    assert!(held.contains("No space left on device"), "{held}");
    env.wait_slots_unclaimed();
    let left: Vec<_> = std::fs::read_dir(&m.dir).unwrap().collect();
    assert!(left.is_empty(), "the sandbox stays behind: {left:?}");

    m.remount("size=16m");
    env.run_ok("tern_release", [&job]);
    env.negotiate();
    assert_eq!(env.wait_history(&job, Duration::from_secs(60)), 4);
    assert_eq!(std::fs::read(env.path("out.txt")).unwrap(), input);
}

#[test]
fn a_run_that_ends_while_spool_is_full_is_recorded_once_there_is_room_not_run_again() {
    let Some(t) = on_tmpfs("SPOOL", "2m") else {
        return;
    };
    let (m, env, spool) = (&t.m, &t.env, &t.dir);
    let log = env.path("job.log");
    let c = env.submit(
        "s.sub",
        &format!(
            "executable = /bin/sh\narguments = \"-c 'touch started; while [ ! -e go ]; do sleep 0.05; done; echo done'\"\noutput = out.txt\nlog = {}\nqueue\n",
            log.display()
        ),
    );
    let job = format!("{c}.0");
    env.negotiate();
    env.wait_for("the job started", Duration::from_secs(30), || {
        env.path("started").exists()
    });
    // The shadow records the start a moment after it: that commit must be
    // in before the log is emptied, or it would land in the log again.
    env.wait_for("the start recorded", Duration::from_secs(30), || {
        env.q_af(&job, &["NumJobStarts"]).as_deref() == Some("1")
    });
    empty_log(spool);
    let filler = fill(&m.dir);
    // The job ends (on the test's word, not a timer: a loaded machine can take
    // longer than one to get here); its shadow cannot record it, and waits.
    env.write("go", "");
    env.wait_for("the job's output", Duration::from_secs(30), || {
        std::fs::read_to_string(env.path("out.txt")).is_ok_and(|s| s == "done\n")
    });
    std::thread::sleep(Duration::from_secs(3));
    // A pass meanwhile must not take the waiting shadow for a dead one.
    let _ = env.run("tern_negotiate", Vec::<&str>::new());
    assert_eq!(env.status(&job), Some(2), "{}", env.diagnosis());
    std::fs::remove_file(filler).unwrap();
    assert_eq!(env.wait_history(&job, Duration::from_secs(30)), 4);
    assert_eq!(
        env.history_af(&job, &["NumJobStarts", "ExitCode"])
            .as_deref(),
        Some("1 0")
    );
    assert_job_events(&log, &job, [0, 1, 5]);
    assert_eq!(integrity(spool), "ok");
}

/// A /dev/null that can no longer be opened for writing once a shadow
/// runs (a read-only bind mount of a plain file over it, in a private
/// mount namespace of one pass and its shadow, made while the first job
/// run): the jobs their shadows start next, whose output is unset, are
/// held naming /dev/null as an output file that cannot be opened, not as
/// an executable that failed to start; on both start paths (posix_spawn
/// for job 2, fork for the reniced job 3).
#[test]
fn a_dev_null_the_job_cannot_open_holds_it_naming_dev_null() {
    if !as_root() {
        return;
    }
    // Root without the right to make a mount namespace (a container's)
    // cannot run it.
    let probe = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "true"])
        .output();
    match probe {
        Ok(o) if o.status.success() => {}
        other => {
            skip::<()>(&format!("cannot make a private mount namespace: {other:?}"));
            return;
        }
    }
    let env = RunEnv::new()
        .knob("NEGOTIATE_ON_SUBMIT", "false")
        .knob("NEGOTIATE_ON_EXIT", "false")
        .knob("NUM_CPUS", "2")
        .knob("SHADOW_LINGER_MSEC", "0")
        .knob("JOB_RENICE_INCREMENT", "ifThenElse(ProcId == 3, 5, 0)");
    let c = env.submit(
        "n.sub",
        "executable = /bin/sh\n\
         arguments = \"-c 'if [ $(ProcId) -lt 2 ]; then touch started$(ProcId); \
         while [ ! -e go ]; do sleep 0.05; done; fi'\"\nqueue 4\n",
    );
    let plain = env.write("plain", "");
    let pass = env.command("tern_negotiate");
    let mut cmd = Command::new("unshare");
    cmd.args(["--mount", "--propagation", "private", "--", "/bin/sh", "-c"])
        .arg(
            "\"$2\" -wait || exit 98\n\
             i=0; while [ ! -e started0 ] || [ ! -e started1 ]; do sleep 0.05; i=$((i+1)); [ $i -lt 1200 ] || exit 97; done\n\
             mount --bind \"$1\" /dev/null && mount -o remount,bind,ro /dev/null || exit 99\n\
             touch go",
        )
        .arg("sh")
        .arg(&plain)
        .arg(pass.get_program())
        .env_clear()
        .current_dir(env.path(""));
    for (k, v) in pass.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    let out = cmd.output().unwrap();
    if out.status.code() == Some(99) {
        std::fs::write(env.path("go"), "").unwrap();
        skip::<()>(&format!(
            "cannot bind-mount over /dev/null in a private mount namespace: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
        return;
    }
    assert!(out.status.success(), "{out:?}");
    for p in 0..2 {
        assert_eq!(
            env.wait_history(&format!("{c}.{p}"), Duration::from_secs(60)),
            4
        );
    }
    for p in 2..4 {
        let job = format!("{c}.{p}");
        env.wait_for("the job held", Duration::from_secs(60), || {
            env.status(&job) == Some(5)
        });
        let held = env
            .q_af(&job, &["HoldReasonCode", "HoldReasonSubCode", "HoldReason"])
            .unwrap();
        assert_eq!(
            held, "7 30 Cannot open output file '/dev/null': Read-only file system",
            "job {p}"
        );
    }
    // Released, outside that namespace, both run.
    env.wait_slots_unclaimed();
    env.run_ok("tern_release", [&c.to_string()]);
    env.negotiate();
    for p in 2..4 {
        let job = format!("{c}.{p}");
        assert_eq!(env.wait_history(&job, Duration::from_secs(60)), 4);
    }
}
