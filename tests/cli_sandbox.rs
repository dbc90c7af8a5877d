//! The job's sandbox with the real tools: a job with file transfer runs in
//! its own scratch directory under EXECUTE holding only what it named, its
//! output comes back to Iwd, failures hold it with HTCondor's codes and
//! texts, and the event log has the 040 events around 001 and 005.

use crate::common::{RunEnv, TIMEOUT, assert_job_events, check_logs_with_htcondor};

#[track_caller]
fn wait_held(env: &RunEnv, job: &str) {
    env.wait_for(&format!("job {job} held"), TIMEOUT, || {
        env.status(job) == Some(5)
    });
}

/// A shell script the job runs, written executable into the test dir.
fn script(env: &RunEnv, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    env.write(name, &format!("#!/bin/sh\n{body}"));
    let p = env.path(name);
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Whether every sandbox is gone: a shadow removes its own when it has
/// no more runs, a moment after its last job's end is committed, so this
/// waits for it.
fn execute_dir_is_empty(env: &RunEnv) -> bool {
    let dir = env.path("spool/execute");
    let empty = || std::fs::read_dir(&dir).map_or(true, |mut d| d.next().is_none());
    crate::common::wait_until(TIMEOUT, empty)
}

#[test]
fn a_transferring_job_runs_in_a_private_sandbox_and_its_output_comes_back() {
    let env = RunEnv::new();
    env.write("in.txt", "input\n");
    std::fs::create_dir_all(env.path("data/sub")).unwrap();
    env.write("data/sub/x", "x\n");
    script(
        &env,
        "job.sh",
        "echo \"pwd=$(pwd)\"\necho \"scratch=$_CONDOR_SCRATCH_DIR tmp=$TMPDIR iwd=$_CONDOR_JOB_IWD\"\n\
         echo \"argv0=$0\"\nls -a | tr '\\n' ' '; echo\nstat -c %a . \ncat data/sub/x\n\
         echo made > result.txt\necho changed > in.txt\nmkdir -p deep && echo lost > deep/f\n\
         echo oops >&2\n",
    );
    let c = env.submit(
        "t.sub",
        "executable = job.sh\nshould_transfer_files = YES\ntransfer_input_files = in.txt, data\n\
         output = out/job.out\nerror = job.err\nlog = t.log\nqueue\n",
    );
    let id = format!("{c}.0");
    assert_eq!(env.wait_history(&id, TIMEOUT), 4, "{}", env.diagnosis());
    let out = std::fs::read_to_string(env.path("out/job.out")).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    let pwd = lines[0].strip_prefix("pwd=").unwrap();
    assert!(
        pwd.starts_with(&env.path("spool/execute/dir_").display().to_string()),
        "{out}"
    );
    assert_eq!(lines[1], format!("scratch={pwd} tmp={pwd} iwd={pwd}"));
    assert_eq!(lines[2], format!("argv0={pwd}/job.sh"));
    assert_eq!(
        lines[3].trim(),
        ". .. .job.ad .machine.ad _condor_stderr _condor_stdout data in.txt job.sh"
    );
    assert_eq!(lines[4], "700");
    assert_eq!(lines[5], "x");
    assert_eq!(
        std::fs::read_to_string(env.path("result.txt")).unwrap(),
        "made\n"
    );
    assert_eq!(
        std::fs::read_to_string(env.path("in.txt")).unwrap(),
        "changed\n"
    );
    assert_eq!(
        std::fs::read_to_string(env.path("job.err")).unwrap(),
        "oops\n"
    );
    assert!(
        !env.path("deep").exists(),
        "new files in subdirectories stay behind"
    );
    assert!(!env.path(".job.ad").exists());
    assert!(execute_dir_is_empty(&env), "the sandbox is removed");
    assert_job_events(&env.path("t.log"), &id, [0, 40, 40, 1, 40, 40, 5]);
    check_logs_with_htcondor(&[env.path("t.log")]);
    let h = env
        .history_af(
            &id,
            &[
                "BytesRecvd",
                "BytesSent",
                "TransferInputStats.CedarFilesCountTotal",
            ],
        )
        .unwrap();
    let f: Vec<&str> = h.split_whitespace().collect();
    let script_len = std::fs::metadata(env.path("job.sh")).unwrap().len();
    assert_eq!(
        f[0].parse::<f64>().unwrap() as u64,
        6 + 2 + script_len,
        "{h}"
    );
    assert!(f[1].parse::<f64>().unwrap() > 0.0, "{h}");
    assert_eq!(f[2], "3", "{h}");
}

#[test]
fn without_transfer_the_job_runs_in_iwd_with_the_sandbox_as_scratch() {
    let env = RunEnv::new();
    script(
        &env,
        "job.sh",
        "echo \"$(pwd) $_CONDOR_SCRATCH_DIR $TMPDIR $_CONDOR_JOB_IWD\"\ntest -f \"$_CONDOR_JOB_AD\" && echo ad\n",
    );
    let c = env.submit(
        "n.sub",
        "executable = job.sh\noutput = n.out\nlog = n.log\nqueue\n",
    );
    let id = format!("{c}.0");
    assert_eq!(env.wait_history(&id, TIMEOUT), 4, "{}", env.diagnosis());
    let out = std::fs::read_to_string(env.path("n.out")).unwrap();
    let f: Vec<&str> = out.split_whitespace().collect();
    let iwd = env.path("").display().to_string();
    assert_eq!(f[0], iwd.trim_end_matches('/'));
    assert_ne!(f[1], f[0]);
    assert_eq!(f[1], f[2]);
    assert_eq!(f[3], f[0]);
    assert_eq!(f[4], "ad");
    assert_job_events(&env.path("n.log"), &id, [0, 1, 5]);
    assert!(execute_dir_is_empty(&env));
}

/// The workflow tools' pattern: a worker script sent as an input and run
/// by its base name through an interpreter.
#[test]
fn an_input_script_named_by_its_base_name_runs() {
    let env = RunEnv::new();
    std::fs::create_dir_all(env.path("lib")).unwrap();
    env.write(
        "lib/worker.sh",
        "echo worker ran in $(basename $(dirname $(pwd)/x))\n",
    );
    let c = env.submit(
        "w.sub",
        "executable = /bin/sh\narguments = worker.sh\nshould_transfer_files = YES\n\
         transfer_executable = false\ntransfer_input_files = lib/worker.sh\noutput = w.out\n\
         queue\n",
    );
    assert_eq!(
        env.wait_history(&format!("{c}.0"), TIMEOUT),
        4,
        "{}",
        env.diagnosis()
    );
    let out = std::fs::read_to_string(env.path("w.out")).unwrap();
    assert!(out.starts_with("worker ran in dir_"), "{out}");
}

#[test]
fn a_missing_input_holds_the_job_with_code_13_and_nothing_runs() {
    let env = RunEnv::new();
    script(&env, "job.sh", "touch ran\n");
    let c = env.submit(
        "m.sub",
        "executable = job.sh\nshould_transfer_files = YES\ntransfer_input_files = nope.dat\n\
         log = m.log\nqueue\n",
    );
    let id = format!("{c}.0");
    wait_held(&env, &id);
    assert_eq!(env.q_af(&id, &["RemoteHost"]).as_deref(), Some("undefined"));
    let code = env.q_af(
        &id,
        &["HoldReasonCode", "HoldReasonSubCode", "NumJobStarts"],
    );
    assert_eq!(code.as_deref(), Some("13 2 0"));
    let reason = env.q_af(&id, &["HoldReason"]).unwrap();
    let want = format!(
        "Details: reading from file {}: (errno 2) No such file or directory",
        env.path("nope.dat").display()
    );
    assert!(
        reason.starts_with("Transfer input files failure at access point ")
            && reason.contains(" while sending files to execution point slot")
            && reason.ends_with(&want),
        "{reason}"
    );
    assert!(!env.path("ran").exists());
    assert_job_events(&env.path("m.log"), &id, [0, 40, 12]);
    check_logs_with_htcondor(&[env.path("m.log")]);
    assert!(execute_dir_is_empty(&env));
}

#[test]
fn a_missing_listed_output_holds_with_code_12_and_the_rest_arrives() {
    let env = RunEnv::new();
    script(
        &env,
        "job.sh",
        "mkdir -p d1/deep; echo f > d1/deep/f; echo two > o2; echo r > remapped\n",
    );
    let c = env.submit(
        "o.sub",
        "executable = job.sh\nshould_transfer_files = YES\n\
         transfer_output_files = gone.dat, d1, o2, remapped\n\
         +TransferOutputRemaps = \"remapped = sub/dir/final.txt; o2 = o2.renamed\"\nqueue\n",
    );
    let id = format!("{c}.0");
    wait_held(&env, &id);
    let code = env.q_af(&id, &["HoldReasonCode", "HoldReasonSubCode"]);
    assert_eq!(code.as_deref(), Some("12 2"));
    let reason = env.q_af(&id, &["HoldReason"]).unwrap();
    assert!(
        reason.starts_with("Transfer output files failure at execution point slot")
            && reason.ends_with("/gone.dat: (errno 2) No such file or directory"),
        "{reason}"
    );
    assert_eq!(std::fs::read_to_string(env.path("gone.dat")).unwrap(), "");
    assert_eq!(
        std::fs::read_to_string(env.path("d1/deep/f")).unwrap(),
        "f\n"
    );
    assert_eq!(
        std::fs::read_to_string(env.path("o2.renamed")).unwrap(),
        "two\n"
    );
    assert_eq!(
        std::fs::read_to_string(env.path("sub/dir/final.txt")).unwrap(),
        "r\n"
    );
    let started = env.q_af(&id, &["NumJobStarts"]);
    assert_eq!(started.as_deref(), Some("1"));
    assert!(execute_dir_is_empty(&env));
}

#[test]
fn keep_sandbox_leaves_the_directory_for_debugging() {
    let env = RunEnv::new().knob("KEEP_SANDBOX", "true");
    script(&env, "job.sh", "echo kept > k.txt\n");
    let c = env.submit(
        "k.sub",
        "executable = job.sh\nshould_transfer_files = YES\nqueue\n",
    );
    assert_eq!(
        env.wait_history(&format!("{c}.0"), TIMEOUT),
        4,
        "{}",
        env.diagnosis()
    );
    let dirs: Vec<_> = std::fs::read_dir(env.path("spool/execute"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1);
    assert!(dirs[0].join("k.txt").is_file());
    assert!(dirs[0].join(".job.ad").is_file());
}

/// A one-thread HTTP server on the loopback address: `/data.txt` is
/// "served\n", anything else 404. Serves `n` requests, then stops.
fn http_server(n: usize) -> String {
    use std::io::{BufRead, BufReader, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in l.incoming().take(n) {
            let Ok(mut s) = stream else { continue };
            let mut first = String::new();
            let mut r = BufReader::new(s.try_clone().unwrap());
            r.read_line(&mut first).unwrap();
            let mut line = String::new();
            while r.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let resp = if first.starts_with("GET /data.txt") {
                "HTTP/1.0 200 OK\r\nContent-Length: 7\r\n\r\nserved\n".to_string()
            } else {
                "HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_string()
            };
            let _ = s.write_all(resp.as_bytes());
        }
    });
    format!("http://{addr}")
}

#[test]
fn http_inputs_are_fetched_and_a_scheme_without_a_plugin_never_matches() {
    let env = RunEnv::new();
    let base = http_server(2);
    let c = env.submit(
        "u.sub",
        &format!(
            "executable = /bin/cat\narguments = data.txt\nshould_transfer_files = YES\n\
             transfer_executable = false\n\
             transfer_input_files = {base}/data.txt?token=1\noutput = u.out\nqueue\n"
        ),
    );
    assert_eq!(
        env.wait_history(&format!("{c}.0"), TIMEOUT),
        4,
        "{}",
        env.diagnosis()
    );
    assert_eq!(
        std::fs::read_to_string(env.path("u.out")).unwrap(),
        "served\n"
    );
    // A URL that fails: hold 13, curl's exit code 22 (HTTP error) << 8.
    let c = env.submit(
        "bad.sub",
        &format!(
            "executable = /bin/true\nshould_transfer_files = YES\ntransfer_executable = false\n\
             transfer_input_files = {base}/missing.txt\nqueue\n"
        ),
    );
    let id = format!("{c}.0");
    wait_held(&env, &id);
    let code = env.q_af(&id, &["HoldReasonCode", "HoldReasonSubCode"]);
    assert_eq!(code.as_deref(), Some(&*format!("13 {}", 22 << 8)));
    let reason = env.q_af(&id, &["HoldReason"]).unwrap();
    assert!(
        reason.contains("using protocol http. Details: fetching"),
        "{reason}"
    );
    // A scheme no plugin serves never matches (submit requires it of the
    // slot's HasFileTransferPluginMethods), as in HTCondor: it stays idle.
    let c = env.submit(
        "g.sub",
        "executable = /bin/true\nshould_transfer_files = YES\ntransfer_executable = false\n\
         transfer_input_files = gopher://example.org/x\nqueue\n",
    );
    let id = format!("{c}.0");
    env.negotiate();
    assert_eq!(env.status(&id), Some(1));
    let why = env.q_af(&id, &["LastRejMatchReason"]);
    assert_eq!(why.as_deref(), Some("no match found"));
}

#[test]
fn on_exit_or_evict_saves_the_files_of_a_vacated_run_for_the_next() {
    let env = RunEnv::new().knob("PERIODIC_EXPR_INTERVAL", "1");
    let marker = env.path("first-run");
    script(
        &env,
        "job.sh",
        &format!(
            "if [ -f state.txt ]; then echo \"resumed from $(cat state.txt)\"; echo final > state.txt; exit 0; fi\n\
             echo first > state.txt\ntouch {}\nsleep 300\n",
            marker.display()
        ),
    );
    let c = env.submit(
        "e.sub",
        "executable = job.sh\nshould_transfer_files = YES\n\
         when_to_transfer_output = ON_EXIT_OR_EVICT\noutput = e.out\nlog = e.log\nqueue\n",
    );
    let id = format!("{c}.0");
    env.wait_for("the first run", TIMEOUT, || marker.exists());
    env.run_ok("tern_vacate_job", [&id]);
    assert_eq!(env.wait_history(&id, TIMEOUT), 4, "{}", env.diagnosis());
    assert_eq!(
        std::fs::read_to_string(env.path("e.out")).unwrap(),
        "resumed from first\n"
    );
    assert_eq!(
        std::fs::read_to_string(env.path("state.txt")).unwrap(),
        "final\n"
    );
    assert_job_events(
        &env.path("e.log"),
        &id,
        [0, 40, 40, 1, 40, 40, 4, 40, 40, 1, 40, 40, 5],
    );
    check_logs_with_htcondor(&[env.path("e.log")]);
    // The SPOOL copy goes once the job has left the queue.
    let saved = env.path(&format!("spool/{c}/0/cluster{c}.proc0.subproc0"));
    std::thread::sleep(std::time::Duration::from_millis(1100));
    env.negotiate();
    assert!(!saved.exists(), "{} is left", saved.display());
}

/// The peak resident size of a process so far (VmHWM), in KiB.
fn peak_rss_kib(pid: i32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A 1 GiB output comes back whole, copied by the kernel in pieces: the
/// shadow's memory stays small.
#[test]
fn a_one_gib_output_comes_back_with_the_shadows_memory_bounded() {
    let env = RunEnv::new();
    let marker = env.path("written");
    // The job ends once the test has found the shadow (the file `go`), not
    // on a timer: a loaded machine could look only after the shadow left.
    let go = env.path("go");
    script(
        &env,
        "big.sh",
        &format!(
            "head -c 1073741824 /dev/zero > big.out\ntouch {}\n\
             while [ ! -e {} ]; do sleep 0.05; done\n",
            marker.display(),
            go.display()
        ),
    );
    let c = env.submit(
        "big.sub",
        "executable = big.sh\nshould_transfer_files = YES\ntransfer_output_files = big.out\nqueue\n",
    );
    let id = format!("{c}.0");
    env.wait_for("the 1 GiB file written", TIMEOUT, || marker.exists());
    let shadow = env.shadow_pid(&id).expect("the job's shadow");
    let mut peak = peak_rss_kib(shadow).expect("the shadow's peak RSS");
    std::fs::write(&go, "").unwrap();
    while let Some(kib) = peak_rss_kib(shadow) {
        peak = peak.max(kib);
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(env.wait_history(&id, TIMEOUT), 4, "{}", env.diagnosis());
    let len = std::fs::metadata(env.path("big.out")).unwrap().len();
    assert_eq!(len, 1 << 30);
    assert!(
        peak > 0 && peak < 64 * 1024,
        "the shadow peaked at {peak} KiB"
    );
    std::fs::remove_file(env.path("big.out")).unwrap();
}
