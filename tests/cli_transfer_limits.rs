//! The submit-time input-size hold: a job whose TransferInputSizeMB is
//! greater than its limit (its MaxTransferInputMB, else the knob
//! MAX_TRANSFER_INPUT_MB) is held as it is queued, code 32 subcode 0, with
//! HTCondor's reason, and its event log gets 000 then 012.

use crate::common::TestEnv;
use crate::common::events::{assert_job_events, check_logs_with_htcondor};

/// A test directory with a tiny executable, `big.dat` (3 MiB, so
/// TransferInputSizeMB = 3) and `small.dat`.
fn sandbox() -> TestEnv {
    let env = TestEnv::with_spool();
    env.write_program("job.sh");
    env.write("big.dat", &"x".repeat(3 * 1024 * 1024));
    env.write("small.dat", "small\n");
    env
}

/// `tern_q -af` of the hold attributes, one line per job.
fn holds(env: &TestEnv, cluster: &str) -> String {
    let r = env.run(
        "tern_q",
        [
            cluster,
            "-af",
            "ProcId",
            "JobStatus",
            "TransferInputSizeMB",
            "HoldReasonCode",
            "HoldReasonSubCode",
            "NumSystemHolds",
            "HoldReason",
        ],
    );
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "tern_q failed");
    r.stdout
}

const TWO_JOBS: &str = "executable = job.sh\nshould_transfer_files = YES\n\
                        log = job.log\ntransfer_input_files = $(f)\nqueue f in (big.dat, small.dat)\n";

#[test]
fn a_job_over_max_transfer_input_mb_is_held_at_submit() {
    let env = sandbox().var("_TERN_MAX_TRANSFER_INPUT_MB", Some("1"));
    env.write("job.sub", TWO_JOBS);
    env.run("tern_submit", ["job.sub"])
        .ok("2 job(s) submitted to cluster 1.\n");
    assert_eq!(
        holds(&env, "1"),
        "0 5 3 32 0 1 TransferInputSizeMB (3) is greater than MAX_TRANSFER_INPUT_MB (1) at submit time\n\
         1 1 0 undefined undefined 0 undefined\n"
    );
    let log = env.path("job.log");
    assert_job_events(&log, "1.0", vec![0, 12]);
    assert_job_events(&log, "1.1", vec![0]);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains(
            "012 (001.000.000) 2023-11-14 22:13:20 Job was held.\n\
             \tTransferInputSizeMB (3) is greater than MAX_TRANSFER_INPUT_MB (1) at submit time\n\
             \tCode 32 Subcode 0\n"
        ),
        "{text}"
    );
    check_logs_with_htcondor(&[log]);
}

#[test]
fn the_jobs_max_transfer_input_mb_overrides_the_knob() {
    let env = sandbox().var("_TERN_MAX_TRANSFER_INPUT_MB", Some("1"));
    env.write(
        "job.sub",
        "executable = job.sh\nshould_transfer_files = YES\nmax_transfer_input_mb = 10\n\
         transfer_input_files = big.dat\nqueue\n",
    );
    env.run("tern_submit", ["job.sub"])
        .ok("1 job(s) submitted to cluster 1.\n");
    assert_eq!(holds(&env, "1"), "0 1 3 undefined undefined 0 undefined\n");
    // And with no knob at all, the job's own limit holds it.
    let env = sandbox();
    env.write(
        "job.sub",
        "executable = job.sh\nshould_transfer_files = YES\nmax_transfer_input_mb = 2\n\
         transfer_input_files = big.dat\nqueue\n",
    );
    env.run("tern_submit", ["job.sub"])
        .ok("1 job(s) submitted to cluster 1.\n");
    assert_eq!(
        holds(&env, "1"),
        "0 5 3 32 0 1 TransferInputSizeMB (3) is greater than MAX_TRANSFER_INPUT_MB (2) at submit time\n"
    );
}

#[test]
fn the_knob_is_an_expression_over_the_job_and_negative_means_no_limit() {
    let env = sandbox().var(
        "_TERN_MAX_TRANSFER_INPUT_MB",
        Some("ifThenElse(ProcId == 0, -1, 0)"),
    );
    env.write("job.sub", TWO_JOBS);
    env.run("tern_submit", ["job.sub"])
        .ok("2 job(s) submitted to cluster 1.\n");
    // Proc 0 has no limit; proc 1's small input is 0 MiB, not more than 0.
    assert_eq!(
        holds(&env, "1"),
        "0 1 3 undefined undefined 0 undefined\n1 1 0 undefined undefined 0 undefined\n"
    );
}

#[test]
fn a_knob_that_is_not_a_number_refuses_the_submit_and_queues_nothing() {
    let env = sandbox().var("_TERN_MAX_TRANSFER_INPUT_MB", Some("\"lots\""));
    env.write("job.sub", TWO_JOBS);
    let r = env.run("tern_submit", ["job.sub"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains(
            "MAX_TRANSFER_INPUT_MB = \"lots\" does not evaluate to a number for this job"
        ),
        "{r:?}"
    );
    assert_eq!(env.run("tern_q", ["-af", "ProcId"]).stdout, "");
    assert!(!env.path("job.log").exists());
}
