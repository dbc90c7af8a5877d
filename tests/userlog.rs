//! The job event log as the tools write it: tern_submit's submit events
//! (000), read back with tern's reader. HTCondor's reader checks the same
//! logs field by field in tests/userlog/ (run.sh).

use tern::userlog::{self, Event, EventKind};

use crate::common::{NOW, Run, TestEnv};

/// A SPOOL of its own in the local time zone of the tests: tern's reader,
/// run here, reads a log's times in this process's zone, so the tools
/// writing it must use the same one.
fn env() -> TestEnv {
    TestEnv::with_spool().var("TZ", std::env::var("TZ").ok().as_deref())
}

/// tern_submit in `env`.
fn submit(env: &TestEnv, args: &[&str]) -> Run {
    env.run("tern_submit", args)
}

fn submit_events(events: &[Event]) -> Vec<(i64, i64, i64, Option<String>)> {
    events
        .iter()
        .map(|e| match &e.kind {
            EventKind::Submit {
                host, log_notes, ..
            } => {
                assert_eq!(host, &userlog::local_sinful());
                (e.id.cluster, e.id.proc, e.time, log_notes.clone())
            }
            other => panic!("not a submit event: {other:?}"),
        })
        .collect()
}

#[test]
fn submit_writes_one_submit_event_per_job_to_its_log() {
    let env = env();
    env.write(
        "job.sub",
        "executable = /bin/true\nlog = job.log\nsubmit_event_notes = DAG Node: N$(Process)\nqueue 3\n",
    );
    submit(&env, &["job.sub"]).ok("3 job(s) submitted to cluster 1.\n");
    submit(&env, &["job.sub"]).ok("3 job(s) submitted to cluster 2.\n");
    let text = std::fs::read_to_string(env.path("job.log")).unwrap();
    assert!(
        text.starts_with("000 (001.000.000) "),
        "the log starts with cluster 1's first event:\n{text}"
    );
    let events = userlog::read(&text).unwrap();
    let note = |p: i64| Some(format!("DAG Node: N{p}"));
    assert_eq!(
        submit_events(&events),
        [
            (1, 0, NOW, note(0)),
            (1, 1, NOW, note(1)),
            (1, 2, NOW, note(2)),
            (2, 0, NOW, note(0)),
            (2, 1, NOW, note(1)),
            (2, 2, NOW, note(2)),
        ]
    );
}

#[test]
fn submit_logs_each_job_to_its_own_log_and_none_without_one() {
    let env = env();
    std::fs::create_dir(env.path("sub")).unwrap();
    env.write(
        "job.sub",
        "executable = /bin/true\nlog = $(Process).log\ninitialdir = sub\nqueue 2\n",
    );
    env.write("nolog.sub", "executable = /bin/true\nqueue 2\n");
    submit(&env, &["nolog.sub"]).ok("2 job(s) submitted to cluster 1.\n");
    submit(&env, &["job.sub"]).ok("2 job(s) submitted to cluster 2.\n");
    for p in 0..2 {
        let events = userlog::read_file(&env.path(&format!("sub/{p}.log"))).unwrap();
        assert_eq!(submit_events(&events), [(2, p, NOW, None)]);
    }
    let logs: Vec<_> = std::fs::read_dir(env.path(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".log"))
        .collect();
    assert_eq!(
        logs,
        Vec::<String>::new(),
        "no log for the jobs without one"
    );
}

#[test]
fn a_dry_run_writes_no_event() {
    let env = env();
    env.write("job.sub", "executable = /bin/true\nlog = job.log\nqueue\n");
    let r = submit(&env, &["-dry-run", "job.sub"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!env.path("job.log").exists());
}

#[test]
fn a_log_that_cannot_be_opened_refuses_the_submit_and_queues_nothing() {
    let env = env();
    env.write(
        "job.sub",
        "executable = /bin/true\nlog = no/such/dir/job.log\nqueue 2\n",
    );
    let r = submit(&env, &["job.sub"]);
    let log = env.path("no/such/dir/job.log");
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            1,
            "",
            format!(
                "ERROR: Invalid log file: \"{}\" (No such file or directory)\n",
                log.display()
            )
            .as_str()
        )
    );
    // Nothing was queued: the next submit takes cluster 1.
    env.write("ok.sub", "executable = /bin/true\nqueue\n");
    submit(&env, &["ok.sub"]).ok("1 job(s) submitted to cluster 1.\n");
    let q = env.run("tern_q", ["-af", "ClusterId", "ProcId"]);
    q.ok("1 0\n");
}

/// skip_filechecks = true leaves the log unchecked, as condor_submit
/// does: the jobs are queued, and a log that cannot be written costs the
/// submit events, with a warning, not the submission.
#[test]
fn skip_filechecks_queues_the_jobs_of_a_log_that_cannot_be_opened() {
    let env = env();
    env.write(
        "job.sub",
        "executable = /bin/true\nlog = no/such/dir/job.log\nskip_filechecks = true\nqueue 2\n",
    );
    let r = submit(&env, &["job.sub"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "2 job(s) submitted to cluster 1.\n"),
        "{r:?}"
    );
    assert!(
        r.stderr.starts_with(
            "tern_submit: warning: the submit events of cluster 1 were not logged (skip_filechecks): "
        ),
        "{r:?}"
    );
    env.run("tern_q", ["-af", "ClusterId", "ProcId"])
        .ok("1 0\n1 1\n");
}

#[test]
fn the_log_check_refuses_a_fifo_and_a_symbolic_link_without_waiting() {
    let env = env();
    let fifo = env.path("fifo.log");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    std::os::unix::fs::symlink("target.log", env.path("link.log")).unwrap();
    for (name, why) in [
        ("fifo.log", "it is not a regular file"),
        ("link.log", "it is a symbolic link"),
    ] {
        env.write(
            "job.sub",
            &format!("executable = /bin/true\nlog = {name}\nqueue\n"),
        );
        let r = submit(&env, &["job.sub"]);
        let path = env.path(name);
        assert_eq!(
            (r.code, r.stderr.as_str()),
            (
                1,
                format!(
                    "ERROR: Invalid log file: \"{}\" (refusing {}: {why})\n",
                    path.display(),
                    path.display()
                )
                .as_str()
            ),
            "{name}"
        );
    }
    assert!(
        !env.path("target.log").exists(),
        "the link was not followed"
    );
    env.run("tern_q", ["-af", "ClusterId"]).ok("");
}

/// The log is checked for each proc (its name may hold $(Process)): one
/// bad log among good ones refuses the whole cluster.
#[test]
fn one_bad_log_among_the_procs_refuses_them_all() {
    let env = env();
    std::fs::create_dir(env.path("d0")).unwrap();
    env.write(
        "job.sub",
        "executable = /bin/true\nlog = d$(Process)/job.log\nqueue 2\n",
    );
    let r = submit(&env, &["job.sub"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains(&format!(
            "\"{}\" (No such file or directory)",
            env.path("d1/job.log").display()
        )),
        "{r:?}"
    );
    env.run("tern_q", ["-af", "ClusterId"]).ok("");
}

#[test]
fn concurrent_submits_to_one_log_never_mix_within_an_event() {
    const SUBMITS: usize = 8;
    const PROCS: usize = 500;
    let env = env();
    env.write(
        "job.sub",
        &format!("executable = /bin/true\nlog = shared.log\nqueue {PROCS}\n"),
    );
    let children: Vec<_> = (0..SUBMITS)
        .map(|_| {
            env.command("tern_submit")
                .args(["-terse", "job.sub"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("starting tern_submit")
        })
        .collect();
    for c in children {
        let r = Run::from(c.wait_with_output().unwrap());
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    }
    let events = userlog::read_file(&env.path("shared.log")).unwrap();
    assert_eq!(events.len(), SUBMITS * PROCS);
    let mut next = [0; SUBMITS + 1];
    for (c, p, t, _) in submit_events(&events) {
        assert_eq!(t, NOW);
        assert_eq!(p, next[c as usize], "cluster {c}'s events in proc order");
        next[c as usize] += 1;
    }
    assert_eq!(next[1..], [PROCS as i64; SUBMITS]);
}
