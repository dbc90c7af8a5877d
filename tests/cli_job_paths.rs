//! Paths a job names that are not regular files never block a pass or a
//! shadow: its event log, its output and the files it transfers are opened
//! without waiting, and a FIFO where a file belongs is refused with the
//! reason (a note in the pass's output, or the job's hold), the way
//! HTCondor's schedd skips a log it cannot open and its shadow holds the
//! job (22, UnableToInitUserLog).

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::{Run, RunEnv, TIMEOUT};

fn mkfifo(p: &std::path::Path) {
    let _ = std::fs::remove_file(p);
    tern::sys::fs::mkfifo(p, 0o644).unwrap();
}

/// A RunEnv whose submits start no pass: the test's own pass is the one
/// that meets the FIFO.
fn quiet_env() -> RunEnv {
    RunEnv::new().knob("NEGOTIATE_ON_SUBMIT", "false")
}

/// One pass, which must end within a minute (one blocked on a FIFO never
/// would: it is killed and the test fails).
fn pass_within_a_minute(env: &RunEnv) -> Run {
    let mut child = env
        .command("tern_negotiate")
        .arg("-wait")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let end = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the pass did not end: blocked on the FIFO");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Run::from(child.wait_with_output().unwrap())
}

/// Waits for job 1.0 to be held; its code and reason.
fn held(env: &RunEnv) -> (String, String) {
    env.wait_for("job 1.0 held", TIMEOUT, || env.status("1.0") == Some(5));
    (
        env.q_af("1.0", &["HoldReasonCode"]).unwrap(),
        env.q_af("1.0", &["HoldReason"]).unwrap(),
    )
}

#[test]
fn a_periodic_hold_of_a_job_whose_log_is_a_fifo_does_not_hang_the_pass() {
    let env = quiet_env();
    env.submit(
        "j.sub",
        "executable = /bin/true\nlog = job.log\nperiodic_hold = true\nqueue\n",
    );
    mkfifo(&env.path("job.log"));
    let r = pass_within_a_minute(&env);
    assert_eq!(r.code, 0, "{r:?}");
    let said = format!("{}{}", r.stdout, r.stderr);
    assert!(
        said.contains("job.log") && said.contains("not a regular file"),
        "the pass notes the refused log: {r:?}"
    );
    let (code, _) = held(&env);
    assert_eq!(code, "3", "held by its periodic_hold");
}

#[test]
fn a_job_whose_log_is_a_fifo_is_held_22_before_it_starts() {
    let env = quiet_env();
    env.submit(
        "j.sub",
        "executable = /usr/bin/touch\narguments = ran\nlog = job.log\nqueue\n",
    );
    mkfifo(&env.path("job.log"));
    pass_within_a_minute(&env);
    let (code, reason) = held(&env);
    assert_eq!(code, "22", "{reason}");
    assert!(
        reason.starts_with("Failed to initialize user log") && reason.contains("job.log"),
        "{reason}"
    );
    assert!(!env.path("ran").exists(), "the job never started");
}

#[test]
fn an_output_that_is_a_fifo_nobody_reads_is_held_7_not_waited_on() {
    let env = quiet_env();
    mkfifo(&env.path("out.fifo"));
    env.submit(
        "j.sub",
        "executable = /bin/echo\narguments = hi\noutput = out.fifo\nqueue\n",
    );
    pass_within_a_minute(&env);
    let (code, reason) = held(&env);
    assert_eq!(code, "7", "{reason}");
    assert!(reason.contains("out.fifo"), "{reason}");
}

#[test]
fn a_transferred_output_that_is_a_fifo_is_a_hold_not_a_hung_shadow() {
    let env = quiet_env();
    env.submit(
        "j.sub",
        "executable = /bin/sh\narguments = \"-c 'mkfifo result'\"\n\
         should_transfer_files = YES\ntransfer_output_files = result\nqueue\n",
    );
    pass_within_a_minute(&env);
    let (code, reason) = held(&env);
    assert_eq!(code, "12", "{reason}");
    assert!(
        reason.contains("result") && reason.contains("not a regular file"),
        "{reason}"
    );
}
