//! Grid universe jobs run by tern_gridmanager against a fake Slurm
//! (tests/grid/fake_slurm.sh linked as sbatch, squeue, scontrol, sacct and
//! scancel on PATH), and tern-to-tern: fast, and always run. The real
//! Slurm tests are in `grid_slurm`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{RunEnv, TIMEOUT, assert_job_events, check_logs_with_htcondor, wait_until};

/// A test directory whose PATH starts with the fake Slurm, and the fake's
/// state directory.
fn fake_env() -> (RunEnv, PathBuf) {
    let env = RunEnv::new().knob("GRIDMANAGER_JOB_PROBE_INTERVAL", "1");
    let bin = env.path("fakebin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/grid/fake_slurm.sh");
    for n in ["sbatch", "squeue", "scontrol", "sacct", "scancel"] {
        std::os::unix::fs::symlink(&script, bin.join(n)).unwrap();
    }
    let state = env.path("slurm");
    let env = env
        .var_env("PATH", &format!("{}:/usr/bin:/bin", bin.display()))
        .var_env("SLURM_FAKE_STATE", state.to_str().unwrap());
    (env, state)
}

/// Sets fake Slurm job `id` to `line` (`state|exitcode|start|end|name`),
/// keeping its name.
fn set_job(state: &Path, id: u32, st: &str, exit: &str, start: i64, end: i64) {
    let f = state.join("jobs").join(id.to_string());
    let old = std::fs::read_to_string(&f).unwrap();
    let name = old.trim_end().rsplit('|').next().unwrap().to_string();
    std::fs::write(&f, format!("{st}|{exit}|{start}|{end}|{name}\n")).unwrap();
}

fn calls(state: &Path) -> String {
    std::fs::read_to_string(state.join("calls")).unwrap_or_default()
}

const GRID_JOB: &str = "universe = grid
grid_resource = batch slurm
executable = /bin/echo
arguments = hi
output = out
log = job.log
";

/// Runs a tool on the other queue; its stdout.
fn remote_run(env: &RunEnv, remote: &Path, tool: &str, args: &[&str]) -> String {
    let out = env
        .command(tool)
        .env("_TERN_SPOOL", remote)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{tool}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[track_caller]
fn wait_for(env: &RunEnv, job: &str, attr: &str, want: &str) {
    let ok = wait_until(TIMEOUT, || env.attr(job, attr).as_deref() == Some(want));
    assert!(
        ok,
        "job {job}: {attr} is {:?}, not {want}; gridmanager log: {}",
        env.attr(job, attr),
        std::fs::read_to_string(env.spool().join("grid/GridmanagerLog")).unwrap_or_default()
    );
}

#[test]
fn a_grid_job_goes_through_slurm_with_its_exit_code_and_events() {
    let (env, state) = fake_env();
    env.submit(
        "j.sub",
        &format!("{GRID_JOB}batch_queue = debug\nrequest_cpus = 2\nqueue\n"),
    );
    // Claimed, 3 tokens committed, sbatch, 4 tokens.
    wait_for(&env, "1.0", "GridJobStatus", "IDLE");
    let gid = env.attr("1.0", "GridJobId").unwrap();
    assert!(gid.starts_with("batch slurm NoPool_"), "{gid}");
    assert!(gid.ends_with("/1"), "{gid}");
    assert_eq!(env.attr("1.0", "Managed").as_deref(), Some("External"));
    let script = std::fs::read_to_string(state.join("scripts/1")).unwrap();
    assert!(script.contains("#SBATCH -p debug\n"), "{script}");
    assert!(script.contains("#SBATCH --cpus-per-task=2\n"), "{script}");
    set_job(&state, 1, "RUNNING", "0:0", 1000, 0);
    wait_for(&env, "1.0", "JobStatus", "2");
    set_job(&state, 1, "FAILED", "3:0", 1000, 1007);
    wait_for(&env, "1.0", "JobStatus", "4");
    assert_eq!(env.attr("1.0", "ExitCode").as_deref(), Some("3"));
    assert_eq!(env.attr("1.0", "ExitBySignal").as_deref(), Some("false"));
    assert_eq!(env.attr("1.0", "Managed").as_deref(), Some("ScheddDone"));
    assert_eq!(
        env.attr("1.0", "RemoteWallClockTime").as_deref(),
        Some("7.0")
    );
    let log = env.path("job.log");
    assert_job_events(&log, "1.0", [0, 27, 1, 5]);
    check_logs_with_htcondor(&[log]);
}

#[test]
fn a_job_that_ends_between_polls_is_seen_running_with_slurms_times() {
    let (env, state) = fake_env();
    env.submit("j.sub", &format!("{GRID_JOB}queue\n"));
    wait_for(&env, "1.0", "GridJobStatus", "IDLE");
    // Started and ended before the next squeue, then purged from the
    // controller: only the completion log knows it.
    set_job(&state, 1, "COMPLETED", "0:9", 2000, 2004);
    std::fs::write(state.join("gone_1"), "").unwrap();
    wait_for(&env, "1.0", "JobStatus", "4");
    assert_eq!(env.attr("1.0", "ExitBySignal").as_deref(), Some("true"));
    assert_eq!(env.attr("1.0", "ExitSignal").as_deref(), Some("9"));
    assert_eq!(env.attr("1.0", "JobStartDate").as_deref(), Some("2000"));
    assert_eq!(
        env.attr("1.0", "RemoteWallClockTime").as_deref(),
        Some("4.0")
    );
    assert_job_events(&env.path("job.log"), "1.0", [0, 27, 1, 5]);
    check_logs_with_htcondor(&[env.path("job.log")]);
}

#[test]
fn an_unreachable_controller_completes_nothing_and_is_shown_down_then_up() {
    let (env, state) = fake_env();
    env.submit("j.sub", &format!("{GRID_JOB}queue\n"));
    wait_for(&env, "1.0", "GridJobStatus", "IDLE");
    std::fs::write(state.join("down"), "").unwrap();
    set_job(&state, 1, "COMPLETED", "0:0", 10, 11);
    let down = wait_until(TIMEOUT, || {
        env.attr("1.0", "GridResourceUnavailableTime").as_deref() != Some("undefined")
    });
    assert!(down, "no GridResourceUnavailableTime");
    std::thread::sleep(std::time::Duration::from_secs(2));
    // BLAHP would have read the failed squeue as "finished, exit 0".
    assert_eq!(env.attr("1.0", "JobStatus").as_deref(), Some("1"));
    set_job(&state, 1, "FAILED", "5:0", 10, 11);
    std::fs::remove_file(state.join("down")).unwrap();
    wait_for(&env, "1.0", "JobStatus", "4");
    assert_eq!(env.attr("1.0", "ExitCode").as_deref(), Some("5"));
    assert_eq!(
        env.attr("1.0", "GridResourceUnavailableTime").as_deref(),
        Some("undefined")
    );
    assert_job_events(&env.path("job.log"), "1.0", [0, 27, 26, 25, 1, 5]);
    check_logs_with_htcondor(&[env.path("job.log")]);
}

#[test]
fn a_failed_sbatch_holds_with_htcondors_message_and_a_release_submits_again() {
    let (env, state) = fake_env();
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(
        state.join("sbatch_fail"),
        "sbatch: error: invalid partition specified: nope\nsbatch: error: Batch job submission failed: Invalid partition name specified\n",
    )
    .unwrap();
    env.submit("j.sub", &format!("{GRID_JOB}batch_queue = nope\nqueue\n"));
    wait_for(&env, "1.0", "JobStatus", "5");
    assert_eq!(
        env.attr("1.0", "HoldReason").as_deref(),
        Some(
            "submission command failed (exit code = 1) (stdout:) (stderr:sbatch: error: invalid partition specified: nope-sbatch: error: Batch job submission failed: Invalid partition name specified)"
        )
    );
    assert_eq!(env.attr("1.0", "HoldReasonCode").as_deref(), Some("0"));
    assert_eq!(env.attr("1.0", "Managed").as_deref(), Some("Schedd"));
    let three = env.attr("1.0", "GridJobId").unwrap();
    assert_eq!(three.split_whitespace().count(), 3, "{three}");
    std::fs::remove_file(state.join("sbatch_fail")).unwrap();
    env.run_ok("tern_release", ["1.0"]);
    wait_for(&env, "1.0", "GridJobStatus", "IDLE");
    assert!(env.attr("1.0", "GridJobId").unwrap().starts_with(&three));
    assert_job_events(&env.path("job.log"), "1.0", [0, 12, 13, 27]);
}

#[test]
fn a_restarted_gridmanager_adopts_the_submission_instead_of_submitting_twice() {
    let (env, state) = fake_env();
    // The job as a gridmanager killed right after sbatch leaves it: the
    // 3-token id and the submission number committed, the Slurm id not.
    let env = env.var_env("_TERN_NEGOTIATE_ON_SUBMIT", "false");
    env.submit("j.sub", &format!("{GRID_JOB}queue\n"));
    let qdate = env.attr("1.0", "QDate").unwrap();
    let sandbox = format!("NoPool_{}_1.0_{qdate}", tern::sys::hostname());
    env.run_ok(
        "tern_qedit",
        [
            "1.0",
            "Managed",
            "\"External\"",
            "GridJobId",
            &format!("\"batch slurm {sandbox}\""),
            "GridSubmitCount",
            "1",
        ],
    );
    std::fs::create_dir_all(state.join("jobs")).unwrap();
    std::fs::write(
        state.join("jobs/1"),
        format!("RUNNING|0:0|5|0|tern_{sandbox}.1\n"),
    )
    .unwrap();
    std::fs::write(state.join("next"), "1").unwrap();
    env.negotiate();
    wait_for(&env, "1.0", "JobStatus", "2");
    assert!(env.attr("1.0", "GridJobId").unwrap().ends_with("/1"));
    assert!(!calls(&state).contains("sbatch"), "{}", calls(&state));
}

#[test]
fn removing_a_grid_job_cancels_its_slurm_job_before_it_leaves() {
    let (env, state) = fake_env();
    env.submit("j.sub", &format!("{GRID_JOB}queue\n"));
    wait_for(&env, "1.0", "GridJobStatus", "IDLE");
    set_job(&state, 1, "RUNNING", "0:0", 5, 0);
    wait_for(&env, "1.0", "JobStatus", "2");
    env.run_ok("tern_rm", ["1.0"]);
    let gone = wait_until(TIMEOUT, || env.q_af("1.0", &["JobStatus"]).is_none());
    assert!(gone, "the removed job stayed");
    assert!(calls(&state).contains("scancel 1"), "{}", calls(&state));
    assert_eq!(
        env.history_af("1.0", &["JobStatus", "Managed"]).as_deref(),
        Some("3 ScheddDone")
    );
    assert_job_events(&env.path("job.log"), "1.0", [0, 27, 1, 9]);
}

#[test]
fn holding_cancels_and_an_outside_scancel_holds_with_htcondors_reason() {
    let (env, state) = fake_env();
    env.submit("j.sub", &format!("{GRID_JOB}queue 2\n"));
    wait_for(&env, "1.0", "GridJobStatus", "IDLE");
    wait_for(&env, "1.1", "GridJobStatus", "IDLE");
    env.run_ok("tern_hold", ["1.0"]);
    wait_for(&env, "1.0", "Managed", "Schedd");
    assert!(calls(&state).contains("scancel 1"), "{}", calls(&state));
    assert_eq!(env.attr("1.0", "GridJobId").as_deref(), Some("undefined"));
    // Someone else cancels job 1.1's Slurm job.
    set_job(&state, 2, "CANCELLED", "0:15", 5, 6);
    wait_for(&env, "1.1", "JobStatus", "5");
    assert_eq!(
        env.attr("1.1", "HoldReason").as_deref(),
        Some("Job removed from batch queue manually")
    );
    // A release submits again: a new Slurm job.
    env.run_ok("tern_release", ["1.0"]);
    wait_for(&env, "1.0", "GridJobStatus", "IDLE");
    assert!(env.attr("1.0", "GridJobId").unwrap().ends_with("/3"));
}

#[test]
fn other_grid_types_are_held_at_once() {
    let (env, _) = fake_env();
    env.submit(
        "j.sub",
        "universe = grid\ngrid_resource = arc ce.example.org\nexecutable = /bin/echo\nlog = job.log\nqueue\n",
    );
    wait_for(&env, "1.0", "JobStatus", "5");
    assert_eq!(
        env.attr("1.0", "HoldReason").as_deref(),
        Some("grid type arc is not supported")
    );
    assert_eq!(env.attr("1.0", "HoldReasonCode").as_deref(), Some("0"));
    assert_job_events(&env.path("job.log"), "1.0", [0, 12]);
}

#[test]
fn a_grid_job_runs_on_another_tern_queue_and_comes_back() {
    let (env, _) = fake_env();
    let remote = env.path("remote-spool");
    let gr = format!("condor {} local", remote.display());
    env.write("run.sh", "#!/bin/sh\necho \"ran in $(pwd)\"\nexit 4\n");
    std::fs::set_permissions(
        env.path("run.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    env.submit(
        "j.sub",
        &format!(
            "universe = grid\ngrid_resource = {gr}\nexecutable = run.sh\noutput = out\nlog = job.log\nqueue\n"
        ),
    );
    wait_for(&env, "1.0", "JobStatus", "4");
    assert_eq!(env.attr("1.0", "ExitCode").as_deref(), Some("4"));
    let gid = env.attr("1.0", "GridJobId").unwrap();
    assert_eq!(gid, format!("{gr} 1.0"));
    let out = std::fs::read_to_string(env.path("out")).unwrap();
    assert!(out.starts_with("ran in "), "{out}");
    // The remote copy left its queue once the local job had its exit.
    assert_eq!(
        remote_run(&env, &remote, "tern_q", &["1.0", "-af", "JobStatus"]),
        ""
    );
    assert_eq!(
        remote_run(
            &env,
            &remote,
            "tern_history",
            &["1.0", "-af", "JobStatus", "SubmitterId"]
        ),
        format!("4 {}\n", env.spool().display())
    );
    assert_job_events(&env.path("job.log"), "1.0", [0, 27, 1, 5]);
    check_logs_with_htcondor(&[env.path("job.log")]);
}

#[test]
fn a_job_removed_from_the_other_queue_is_held_as_disappeared() {
    let (env, _) = fake_env();
    let remote = env.path("remote-spool");
    let gr = format!("condor {} local", remote.display());
    env.submit(
        "j.sub",
        &format!(
            "universe = grid\ngrid_resource = {gr}\nexecutable = /bin/sleep\narguments = 600\nqueue\n"
        ),
    );
    wait_for(&env, "1.0", "GridJobStatus", "RUNNING");
    remote_run(&env, &remote, "tern_rm", &["1.0"]);
    wait_for(&env, "1.0", "JobStatus", "5");
    assert_eq!(
        env.attr("1.0", "HoldReason").as_deref(),
        Some("Job disappeared from remote schedd")
    );
}

/// Kills (SIGKILL) the gridmanagers of this test: tern_gridmanager
/// processes whose environment names the test's fake Slurm.
fn kill_gridmanagers(state: &Path) -> usize {
    let mark = state.to_str().unwrap().as_bytes().to_vec();
    let mut n = 0;
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let envs = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        if String::from_utf8_lossy(&cmd).contains("tern_gridmanager")
            && envs.windows(mark.len()).any(|w| w == mark.as_slice())
        {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            n += 1;
        }
    }
    n
}

// HTCondor commits the Slurm id only after sbatch, so a gridmanager that
// dies in between submits the job again on restart.
#[test]
fn a_gridmanager_killed_again_and_again_submits_each_job_once() {
    let (env, state) = fake_env();
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("sbatch_delay"), "0.3").unwrap();
    env.submit("j.sub", &format!("{GRID_JOB}queue 4\n"));
    let jobs = ["1.0", "1.1", "1.2", "1.3"];
    let submitted = |env: &RunEnv| {
        jobs.iter()
            .filter(|j| env.attr(j, "GridJobStatus").as_deref() == Some("IDLE"))
            .count()
    };
    let mut kills = 0;
    for _ in 0..60 {
        if submitted(&env) == jobs.len() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        kills += kill_gridmanagers(&state);
        env.negotiate();
    }
    assert_eq!(submitted(&env), jobs.len(), "{}", calls(&state));
    assert!(kills > 0, "the gridmanager was never caught running");
    let in_slurm = std::fs::read_dir(state.join("jobs")).unwrap().count();
    assert_eq!(in_slurm, jobs.len(), "{}", calls(&state));
    let mut ids: Vec<String> = jobs
        .iter()
        .map(|j| env.attr(j, "GridJobId").unwrap())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), jobs.len());
    kill_gridmanagers(&state);
}

// The pass's periodic policies once treated a running grid job as a
// shadow's (a request nobody read) and let a removed one leave the queue
// before its Slurm job was cancelled.
#[test]
fn a_periodic_remove_of_a_running_grid_job_cancels_it_in_slurm() {
    let (env, state) = fake_env();
    let env = env.knob("PERIODIC_EXPR_INTERVAL", "0");
    env.submit(
        "j.sub",
        &format!("{GRID_JOB}periodic_remove = JobStatus == 2\nqueue\n"),
    );
    wait_for(&env, "1.0", "GridJobStatus", "IDLE");
    set_job(&state, 1, "RUNNING", "0:0", 5, 0);
    wait_for(&env, "1.0", "JobStatus", "2");
    env.negotiate();
    let gone = wait_until(TIMEOUT, || env.q_af("1.0", &["JobStatus"]).is_none());
    assert!(gone, "the removed job stayed");
    assert!(calls(&state).contains("scancel 1"), "{}", calls(&state));
    assert_job_events(&env.path("job.log"), "1.0", [0, 27, 1, 9]);
}

#[test]
fn a_status_unknown_too_long_is_029_and_known_again_is_030() {
    let (env, state) = fake_env();
    let env = env.knob("GRIDMANAGER_STATUS_UNKNOWN_TIME", "1");
    env.submit("j.sub", &format!("{GRID_JOB}queue\n"));
    wait_for(&env, "1.0", "GridJobStatus", "IDLE");
    std::fs::write(state.join("down"), "").unwrap();
    wait_for(&env, "1.0", "CurrentStatusUnknown", "true");
    set_job(&state, 1, "COMPLETED", "0:0", 10, 12);
    std::fs::remove_file(state.join("down")).unwrap();
    wait_for(&env, "1.0", "JobStatus", "4");
    assert_eq!(
        env.attr("1.0", "CurrentStatusUnknown").as_deref(),
        Some("false")
    );
    let log = env.path("job.log");
    assert_job_events(&log, "1.0", [0, 27, 26, 29, 25, 30, 1, 5]);
    check_logs_with_htcondor(&[log]);
}

#[test]
fn removing_a_job_routed_to_another_queue_removes_it_there() {
    let (env, _) = fake_env();
    let remote = env.path("remote-spool");
    let gr = format!("condor {} local", remote.display());
    env.submit(
        "j.sub",
        &format!(
            "universe = grid\ngrid_resource = {gr}\nexecutable = /bin/sleep\narguments = 600\nlog = job.log\nqueue\n"
        ),
    );
    wait_for(&env, "1.0", "GridJobStatus", "RUNNING");
    env.run_ok("tern_rm", ["1.0"]);
    let gone = wait_until(TIMEOUT, || env.q_af("1.0", &["JobStatus"]).is_none());
    assert!(gone, "the removed job stayed");
    let left = wait_until(TIMEOUT, || {
        remote_run(&env, &remote, "tern_q", &["1.0", "-af", "JobStatus"]).is_empty()
    });
    assert!(left, "the remote job stayed");
    assert_eq!(
        remote_run(
            &env,
            &remote,
            "tern_history",
            &["1.0", "-af", "JobStatus", "RemoveReason"]
        ),
        format!(
            "3 by gridmanager (by user {})\n",
            crate::common::real_user()
        )
    );
    assert_job_events(&env.path("job.log"), "1.0", [0, 27, 1, 9]);
}

#[test]
fn tern_q_grid_shows_grid_jobs_as_condor_q_does() {
    let (env, _) = fake_env();
    env.submit("j.sub", &format!("{GRID_JOB}queue\n"));
    env.submit(
        "v.sub",
        "executable = /bin/sleep\narguments = 60\nhold = true\nqueue\n",
    );
    wait_for(&env, "1.0", "GridJobStatus", "IDLE");
    let out = env.run_ok("tern_q", ["-grid"]);
    let lines: Vec<&str> = out.lines().filter(|l| !l.is_empty()).collect();
    let user = crate::common::real_user();
    let gid = env.attr("1.0", "GridJobId").unwrap();
    let (_, tail) = gid.rsplit_once(" slurm/").unwrap();
    let expect = format!(
        " ID      OWNER          STATUS     GRID->MANAGER    HOST       GRID_JOB_ID\n   1.0   {user:<14} IDLE       batch->[?] slurm            /{tail}"
    );
    assert_eq!(lines[1..].join("\n"), expect, "{out}");
    env.run_ok("tern_rm", ["1", "2"]);
}

#[test]
fn five_failed_status_queries_in_a_row_hold_the_job() {
    let (env, state) = fake_env();
    env.submit("j.sub", &format!("{GRID_JOB}queue\n"));
    wait_for(&env, "1.0", "GridJobStatus", "IDLE");
    // squeue no longer lists it and scontrol cannot answer.
    std::fs::write(state.join("scontrol_fail"), "").unwrap();
    std::fs::write(state.join("gone_1"), "").unwrap();
    wait_for(&env, "1.0", "JobStatus", "5");
    assert_eq!(
        env.attr("1.0", "HoldReason").as_deref(),
        Some(
            "status command failed: scontrol failed: slurm_load_jobs error: Socket timed out on send/recv operation"
        )
    );
    assert_eq!(calls(&state).matches("scontrol show job").count(), 5);
}

#[test]
fn a_nonessential_job_is_removed_where_another_would_be_held() {
    let (env, state) = fake_env();
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("sbatch_fail"), "sbatch: error: no\n").unwrap();
    env.submit("j.sub", &format!("{GRID_JOB}+Nonessential = true\nqueue\n"));
    let gone = wait_until(TIMEOUT, || env.q_af("1.0", &["JobStatus"]).is_none());
    assert!(gone, "the job stayed");
    assert_eq!(
        env.history_af("1.0", &["JobStatus", "RemoveReason"])
            .as_deref(),
        Some("3 submission command failed (exit code = 1) (stdout:) (stderr:sbatch: error: no)")
    );
    assert_job_events(&env.path("job.log"), "1.0", [0, 9]);
}

#[test]
fn a_held_grid_job_whose_gridmanager_died_is_cancelled_by_the_next_one() {
    let (env, state) = fake_env();
    let env = env
        .var_env("_TERN_NEGOTIATE_ON_SUBMIT", "false")
        .knob("PERIODIC_EXPR_INTERVAL", "0");
    env.submit("j.sub", &format!("{GRID_JOB}queue\n"));
    // As a gridmanager that died leaves it: managed, submitted, running.
    env.run_ok(
        "tern_qedit",
        [
            "1.0",
            "Managed",
            "\"External\"",
            "GridJobId",
            "\"batch slurm sb slurm/20240101/1\"",
        ],
    );
    std::fs::create_dir_all(state.join("jobs")).unwrap();
    std::fs::write(state.join("jobs/1"), "RUNNING|0:0|5|0|tern_sb.1\n").unwrap();
    env.run_ok("tern_hold", ["1.0"]);
    env.negotiate();
    wait_for(&env, "1.0", "Managed", "Schedd");
    assert!(calls(&state).contains("scancel 1"), "{}", calls(&state));
}
