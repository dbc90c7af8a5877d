//! Grid universe jobs on a real one-node Slurm, brought up by
//! tests/slurm/slurm.sh in a temporary directory (root only: slurmctld and
//! slurmd run as root). Without root or the packages the test is skipped
//! with the reason printed, unless `TERN_REQUIRE_SLURM` is set (as CI sets
//! it, having installed the packages). One test, in phases, so the cluster
//! is brought up and torn down once: 200 jobs with their outputs, exit
//! codes and event logs, the spec's cases (directives, signals, a bad
//! partition, an outside scancel, file transfer, argument expansion), and
//! the controller going away and coming back.

use std::process::Command;
use std::time::Duration;

use crate::common::slurm::up;
use crate::common::{RunEnv, assert_job_events, check_logs_with_htcondor, wait_until};

fn slurm_id(env: &RunEnv, job: &str) -> String {
    let gid = env.attr(job, "GridJobId").unwrap();
    gid.rsplit('/').next().unwrap().to_string()
}

#[track_caller]
fn wait_attr(env: &RunEnv, job: &str, attr: &str, want: &str, secs: u64) {
    let ok = wait_until(Duration::from_secs(secs), || {
        env.attr(job, attr).as_deref() == Some(want)
    });
    assert!(
        ok,
        "job {job}: {attr} is {:?}, not {want}\n{}\ngridmanager log: {}",
        env.attr(job, attr),
        env.diagnosis(),
        std::fs::read_to_string(env.spool().join("grid/GridmanagerLog")).unwrap_or_default()
    );
}

#[test]
fn grid_jobs_run_on_a_real_slurm() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(slurm) = up(&tmp.path().join("slurm"), "16837", "16838") else {
        return;
    };
    let env = RunEnv::new()
        .knob("GRIDMANAGER_JOB_PROBE_INTERVAL", "1")
        .var_env("SLURM_CONF", slurm.conf.to_str().unwrap());
    let head = "universe = grid\ngrid_resource = batch slurm\nlog = grid.log\n";

    // 1. 200 jobs, each with its own output and exit code.
    env.submit(
        "many.sub",
        &format!(
            "{head}executable = /bin/sh\narguments = \"-c 'echo job $(Process); exit `expr $(Process) % 7`'\"\noutput = many.$(Process)\nqueue 200\n"
        ),
    );
    // 2. The spec's first case: partition, runtime and memory reach Slurm.
    env.submit(
        "spec.sub",
        &format!(
            "{head}executable = /bin/sleep\narguments = 1\nbatch_queue = debug\nbatch_runtime = 600\nrequest_memory = 100\nrequest_cpus = 2\nbatch_extra_submit_args = --comment=from-tern\nqueue\n"
        ),
    );
    // 3. A job that kills itself with SIGKILL.
    env.submit(
        "kill.sub",
        &format!("{head}executable = /bin/sh\narguments = \"-c 'kill -KILL 0'\"\nqueue\n"),
    );
    // 4. A partition Slurm does not have.
    env.submit(
        "bad.sub",
        &format!("{head}executable = /bin/true\nbatch_queue = nope\nqueue\n"),
    );
    // 5. A long job someone cancels outside tern.
    env.submit(
        "long.sub",
        &format!("{head}executable = /bin/sleep\narguments = 300\nqueue\n"),
    );
    // 6. Files: an input copied in, a remapped output back, a stray file
    //    gone; Out equal to Err.
    env.write("in.txt", "input\n");
    std::fs::create_dir_all(env.path("results")).unwrap();
    env.submit(
        "files.sub",
        &format!(
            "{head}executable = /bin/sh\narguments = \"-c 'cat in.txt > r.txt; echo stray > stray.txt; echo out; echo err >&2'\"\nshould_transfer_files = YES\ntransfer_input_files = in.txt\ntransfer_output_files = r.txt\ntransfer_output_remaps = \"r.txt = results/r.txt\"\noutput = both.txt\nerror = both.txt\nqueue\n"
        ),
    );
    // 7. $HOME in the arguments is expanded by the batch shell, as in
    //    HTCondor.
    env.submit(
        "home.sub",
        &format!("{head}executable = /bin/echo\narguments = $HOME\noutput = home.txt\nqueue\n"),
    );

    wait_attr(&env, "4.0", "JobStatus", "5", 60);
    assert_eq!(
        env.attr("4.0", "HoldReason").as_deref(),
        Some(
            "submission command failed (exit code = 1) (stdout:) (stderr:sbatch: error: invalid partition specified: nope-sbatch: error: Batch job submission failed: Invalid partition name specified)"
        )
    );
    assert_eq!(env.attr("4.0", "HoldReasonCode").as_deref(), Some("0"));
    env.run_ok("tern_qedit", ["4.0", "BatchQueue", "\"debug\""]);
    env.run_ok("tern_release", ["4.0"]);

    wait_attr(&env, "5.0", "JobStatus", "2", 60);
    let long = slurm_id(&env, "5.0");
    let out = Command::new("scancel")
        .arg(&long)
        .env("SLURM_CONF", &slurm.conf)
        .output()
        .unwrap();
    assert!(out.status.success());
    wait_attr(&env, "5.0", "JobStatus", "5", 30);
    assert_eq!(
        env.attr("5.0", "HoldReason").as_deref(),
        Some("Job removed from batch queue manually")
    );

    wait_attr(&env, "2.0", "JobStatus", "4", 60);
    let spec = slurm.scontrol(&slurm_id(&env, "2.0"));
    for want in [
        "Partition=debug",
        "TimeLimit=00:10:00",
        "MinMemoryNode=100M",
        "Comment=from-tern",
        "NumCPUs=2",
    ] {
        assert!(spec.contains(want), "{want} not in {spec}");
    }
    assert_eq!(env.attr("2.0", "ExitCode").as_deref(), Some("0"));
    assert_eq!(env.attr("2.0", "Managed").as_deref(), Some("ScheddDone"));

    wait_attr(&env, "3.0", "JobStatus", "4", 60);
    assert_eq!(env.attr("3.0", "ExitBySignal").as_deref(), Some("true"));
    assert_eq!(env.attr("3.0", "ExitSignal").as_deref(), Some("9"));

    wait_attr(&env, "6.0", "JobStatus", "4", 60);
    assert_eq!(
        std::fs::read_to_string(env.path("results/r.txt")).unwrap(),
        "input\n"
    );
    assert!(!env.path("stray.txt").exists());
    let both = std::fs::read_to_string(env.path("both.txt")).unwrap();
    assert!(both.contains("out\n") && both.contains("err\n"), "{both:?}");
    assert!(
        std::fs::read_dir(env.path("")).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("home_bl_")),
        "the scratch directory is left"
    );

    wait_attr(&env, "7.0", "JobStatus", "4", 60);
    let home = std::fs::read_to_string(env.path("home.txt")).unwrap();
    assert!(home.starts_with('/'), "$HOME not expanded: {home:?}");

    wait_attr(&env, "4.0", "JobStatus", "4", 60);

    let all_done = wait_until(Duration::from_secs(120), || {
        env.run_ok("tern_q", ["1", "-af", "ProcId"]).is_empty()
    });
    assert!(all_done, "{}", env.diagnosis());
    let lines = env.run_ok(
        "tern_history",
        ["1", "-af", "ProcId", "JobStatus", "ExitCode"],
    );
    let mut seen = 0;
    for l in lines.lines() {
        let f: Vec<i64> = l.split(' ').map(|x| x.parse().unwrap()).collect();
        assert_eq!(f[1], 4, "{l}");
        assert_eq!(f[2], f[0] % 7, "{l}");
        let out = std::fs::read_to_string(env.path(&format!("many.{}", f[0]))).unwrap();
        assert_eq!(out, format!("job {}\n", f[0]));
        seen += 1;
    }
    assert_eq!(seen, 200);
    let log = env.path("grid.log");
    for p in [0, 99, 199] {
        assert_job_events(&log, &format!("1.{p}"), [0, 27, 1, 5]);
    }
    assert_job_events(&log, "4.0", [0, 12, 13, 27, 1, 5]);
    assert_job_events(&log, "5.0", [0, 27, 1, 12]);

    // 8. The controller goes away while a job runs: nothing completes,
    //    026; it comes back: 025, and the job completes with its code. The
    //    job ends once the controller is away (the file `go8`), not on a
    //    timer: a loaded machine can take longer than one to stop it.
    let (go, ended) = (env.path("go8"), env.path("ended8"));
    env.submit(
        "down.sub",
        &format!(
            "universe = grid\ngrid_resource = batch slurm\nlog = down.log\nexecutable = /bin/sh\n\
             arguments = \"-c 'while [ ! -e {} ]; do sleep 0.1; done; touch {}; exit 2'\"\nqueue\n",
            go.display(),
            ended.display()
        ),
    );
    wait_attr(&env, "8.0", "JobStatus", "2", 60);
    let o = slurm.script("ctld-stop");
    assert!(o.status.success(), "{o:?}");
    let down = wait_until(Duration::from_secs(30), || {
        env.attr("8.0", "GridResourceUnavailableTime").as_deref() != Some("undefined")
    });
    assert!(down, "no GridResourceUnavailableTime\n{}", env.diagnosis());
    // The job ends while the controller is away; nothing may complete it.
    std::fs::write(&go, "").unwrap();
    let gone = wait_until(Duration::from_secs(30), || ended.exists());
    assert!(gone, "the job did not end\n{}", env.diagnosis());
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(env.attr("8.0", "JobStatus").as_deref(), Some("2"));
    let o = slurm.script("ctld-start");
    assert!(o.status.success(), "{o:?}");
    wait_attr(&env, "8.0", "JobStatus", "4", 60);
    assert_eq!(env.attr("8.0", "ExitCode").as_deref(), Some("2"));
    let down_log = env.path("down.log");
    assert_job_events(&down_log, "8.0", [0, 27, 1, 26, 25, 5]);
    check_logs_with_htcondor(&[log, down_log]);
}
