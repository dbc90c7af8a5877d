//! The shadow's stop signal, as a real job (examples/fake_job.rs) receives
//! it: the job's `kill_sig` by any name submit accepts, SIGTERM without
//! one. The shadow once had a 12-name signal table of its own, so
//! `kill_sig = SIGXCPU` submitted fine and the job then got SIGTERM.
//! Then claim reuse, and last tern_shadow's own errors, which say what
//! they were about. A removal sends `remove_kill_sig` and a hold
//! `hold_kill_sig` when the job has one.

use crate::common::{RunEnv, TIMEOUT, TestEnv, alive, fake_job};

/// Submits fake_job recording the first signal it gets into `sig`, with
/// the submit `lines`, and waits until it runs (its `touch` has run, so
/// the handler is installed). Its id.
#[track_caller]
fn start(env: &RunEnv, lines: &str) -> String {
    let sub = format!(
        "executable = {}\narguments = \"record-signal sig touch pids sleep 300\"\n{lines}queue\n",
        fake_job().display()
    );
    let id = format!("{}.0", env.submit("job.sub", &sub));
    env.wait_for(&format!("job {id} running"), TIMEOUT, || {
        env.status(&id) == Some(2) && env.path("pids").exists()
    });
    id
}

/// The signal the job recorded, once it has.
#[track_caller]
fn recorded(env: &RunEnv) -> i32 {
    let read = || std::fs::read_to_string(env.path("sig")).unwrap_or_default();
    env.wait_for("the job to record a signal", TIMEOUT, || {
        read().ends_with('\n')
    });
    read().trim().parse().expect("a signal number")
}

#[test]
fn kill_sig_sigxcpu_reaches_a_vacated_job() {
    let env = RunEnv::new().knob("NEGOTIATE_ON_EXIT", "false");
    let id = start(&env, "kill_sig = SIGXCPU\n");
    env.run_ok("tern_vacate_job", [&id]);
    assert_eq!(recorded(&env), libc::SIGXCPU);
    env.wait_for("the vacated job idle", TIMEOUT, || {
        env.status(&id) == Some(1)
    });
    assert_eq!(env.q_af(&id, &["VacateReasonCode"]), Some("1004".into()));
}

#[test]
fn kill_sig_sigxcpu_reaches_a_removed_job() {
    let env = RunEnv::new().knob("NEGOTIATE_ON_EXIT", "false");
    let id = start(&env, "kill_sig = SIGXCPU\n");
    env.run_ok("tern_rm", [&id]);
    assert_eq!(recorded(&env), libc::SIGXCPU);
    env.wait_for("the removed job gone from the queue", TIMEOUT, || {
        env.status(&id).is_none()
    });
}

// remove_kill_sig and hold_kill_sig were accepted by submit and then
// ignored: the shadow sent KillSig for every stop.
#[test]
fn remove_kill_sig_reaches_a_removed_job() {
    let env = RunEnv::new().knob("NEGOTIATE_ON_EXIT", "false");
    let id = start(
        &env,
        "kill_sig = SIGUSR1\nremove_kill_sig = SIGXCPU\nhold_kill_sig = SIGUSR2\n",
    );
    env.run_ok("tern_rm", [&id]);
    assert_eq!(recorded(&env), libc::SIGXCPU);
}

#[test]
fn hold_kill_sig_reaches_a_held_job() {
    let env = RunEnv::new().knob("NEGOTIATE_ON_EXIT", "false");
    let id = start(
        &env,
        "kill_sig = SIGUSR1\nremove_kill_sig = SIGXCPU\nhold_kill_sig = SIGUSR2\n",
    );
    env.run_ok("tern_hold", [&id]);
    assert_eq!(recorded(&env), libc::SIGUSR2);
    env.wait_for("the held job held", TIMEOUT, || env.status(&id) == Some(5));
}

#[test]
fn a_job_without_kill_sig_gets_sigterm() {
    let env = RunEnv::new().knob("NEGOTIATE_ON_EXIT", "false");
    let id = start(&env, "");
    env.run_ok("tern_vacate_job", [&id]);
    assert_eq!(recorded(&env), libc::SIGTERM);
}

/// With one cpu and one pass, the jobs after the first can only run by
/// claim reuse: the shadow asks the negotiator for the owner's next job
/// that fits its slot and runs it without a new pass.
#[test]
fn one_pass_runs_a_whole_cluster_through_one_slot_by_claim_reuse() {
    let env = RunEnv::new()
        .knob("NEGOTIATE_ON_SUBMIT", "false")
        .knob("NEGOTIATE_ON_EXIT", "false")
        .knob("NUM_CPUS", "1");
    let sub = format!(
        "executable = {}\narguments = \"touch runs\"\nqueue 3\n",
        fake_job().display()
    );
    let c = env.submit("job.sub", &sub);
    let jobs: Vec<String> = (0..3).map(|p| format!("{c}.{p}")).collect();
    env.negotiate();
    env.wait_for("every job done", TIMEOUT, || {
        jobs.iter().all(|j| env.status(j).is_none())
    });
    for j in &jobs {
        assert_eq!(env.history_af(j, &["JobStatus"]), Some("4".into()), "{j}");
    }
    let runs = std::fs::read_to_string(env.path("runs")).unwrap();
    assert_eq!(runs.lines().count(), 3, "{runs}");
}

/// Claim reuse looks past an owner's best idle job that does not fit the
/// slot: the best (JobPrio 10) asks for more memory than the machine has,
/// so the one pass starts the next best (5), and the last (0) can only
/// run when that job's reuse reads on past the first row.
#[test]
fn claim_reuse_reads_on_past_a_best_job_that_does_not_fit() {
    let env = RunEnv::new()
        .knob("NEGOTIATE_ON_SUBMIT", "false")
        .knob("NEGOTIATE_ON_EXIT", "false")
        .knob("NUM_CPUS", "1");
    let job = |file: &str, extra: &str| {
        format!(
            "executable = {}\narguments = \"touch {file}\"\n{extra}queue\n",
            fake_job().display()
        )
    };
    let last = format!(
        "{}.0",
        env.submit("last.sub", &job("last", "priority = 0\n"))
    );
    let big = format!(
        "{}.0",
        env.submit(
            "big.sub",
            &job("big", "priority = 10\nrequest_memory = 1000000000\n")
        )
    );
    let next = format!(
        "{}.0",
        env.submit("next.sub", &job("next", "priority = 5\n"))
    );
    env.negotiate();
    env.wait_for("both jobs that fit done", TIMEOUT, || {
        env.status(&next).is_none() && env.status(&last).is_none()
    });
    assert_eq!(
        env.history_af(&last, &["JobStatus"]),
        Some("4".into()),
        "{}",
        env.diagnosis()
    );
    assert!(env.path("next").exists() && env.path("last").exists());
    assert_eq!(
        env.status(&big),
        Some(1),
        "the job that does not fit stays idle"
    );
    assert!(!env.path("big").exists());
}

/// tern_shadow run by hand: its errors name what is missing.
#[test]
fn a_shadow_started_by_hand_says_what_it_lacks() {
    let env = TestEnv::new();
    let spool = env.path("spool");
    let env = env.var("_TERN_SPOOL", Some(spool.to_str().unwrap()));
    let want = format!(
        "tern_shadow: error: there is no queue in {}\n",
        spool.display()
    );
    env.run("tern_shadow", ["1.0", "slot1", "c1"])
        .fails(1, &want);
    let env = env.var("TERN_SHADOW_LOCK_FD", Some("x"));
    let want = "tern_shadow: error: TERN_SHADOW_LOCK_FD 'x' is not a descriptor number\n\
                hint: TERN_SHADOW_LOCK_FD is set by tern_negotiate only\n";
    env.run("tern_shadow", ["1.0", "slot1", "c1"])
        .fails(1, want);
}

/// HTCondor counts a start (NumJobStarts) and dates it
/// (JobCurrentStartExecutingDate) only once the job executes; the shadow's
/// start is NumShadowStarts and JobRunCount. tern counted a start whose
/// exec failed: here the executable is not a program (ENOEXEC), the job
/// goes on hold, and it never started.
#[test]
fn a_start_whose_exec_failed_is_not_counted() {
    use std::os::unix::fs::PermissionsExt;
    let env = RunEnv::new().knob("NEGOTIATE_ON_EXIT", "false");
    let prog = env.path("not-a-program");
    std::fs::write(&prog, "neither a script nor a binary\n").unwrap();
    std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
    let id = format!(
        "{}.0",
        env.submit(
            "bad.sub",
            &format!("executable = {}\nqueue\n", prog.display())
        )
    );
    env.negotiate();
    env.wait_for(&format!("job {id} held"), TIMEOUT, || {
        env.status(&id) == Some(5)
    });
    assert_eq!(
        env.q_af(
            &id,
            &[
                "HoldReasonCode",
                "NumShadowStarts",
                "JobRunCount",
                "NumJobStarts",
                "JobCurrentStartExecutingDate"
            ]
        )
        .as_deref(),
        Some("6 1 1 0 undefined"),
        "{}",
        env.diagnosis()
    );
    // A job that runs counts one start of each kind.
    let sub = format!(
        "executable = {}\narguments = \"exit 0\"\nqueue\n",
        fake_job().display()
    );
    let ok = format!("{}.0", env.submit("ok.sub", &sub));
    env.negotiate();
    env.wait_for(&format!("job {ok} done"), TIMEOUT, || {
        env.status(&ok).is_none()
    });
    let h = env.history_af(&ok, &["NumShadowStarts", "JobRunCount", "NumJobStarts"]);
    assert_eq!(h.as_deref(), Some("1 1 1"));
    let exec = env.history_af(&ok, &["JobCurrentStartExecutingDate > 0"]);
    assert_eq!(exec.as_deref(), Some("true"));
}

/// A dead shadow's job group is killed by the next pass only while it is
/// still the job's: the lock records the group's leader with its start
/// time, and a group id given out again since (here a stranger leading a
/// group with that id, but started at another time) is left alone. The
/// pass once killed any group with the recorded id.
#[test]
fn reconcile_leaves_a_reused_process_group_alone() {
    use std::os::unix::process::CommandExt;
    let env = RunEnv::new().knob("NEGOTIATE_ON_SUBMIT", "false");
    // A job no slot can run, so the passes only reconcile it.
    let c = env.submit(
        "job.sub",
        "executable = /bin/sleep\narguments = 300\nrequirements = TARGET.Memory < 0\nqueue\n",
    );
    let mut stranger = std::process::Command::new("sleep")
        .arg("300")
        .process_group(0)
        .spawn()
        .unwrap();
    let pgid = stranger.id() as i32;
    let started = tern::sys::pids::start_time(pgid).expect("the stranger's start time");
    let lock = env.spool().join("shadow").join(format!("{c}.0.lock"));
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    // As a dead shadow left it: its pid, the job group and its start.
    let dead_shadow = |start: u64| {
        crate::common::queue::set_status(&env, c, 0, 2);
        std::fs::write(&lock, format!("4194303\n{pgid} {start}\n")).unwrap();
        env.negotiate();
        assert_eq!(env.status(&format!("{c}.0")), Some(1), "requeued");
    };
    dead_shadow(started + 1);
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(alive(pgid), "a reused group was killed");
    // The group still led by the recorded process is the job's: killed.
    dead_shadow(started);
    let status = stranger.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGKILL));
}
