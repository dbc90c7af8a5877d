//! Jobs that really run: tern_submit starts a tern_negotiate pass, the pass
//! starts a tern_shadow per job, and the shadow runs examples/fake_job.rs.
//! The tests hold the tools to the lifecycle contract (exit codes, usage,
//! events, stop requests, policies, crashes, concurrent passes) by
//! watching the queue, the history, the event logs and the processes.
//! Every wait polls with a generous timeout, and every RunEnv kills what it
//! left behind when dropped.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::{
    RunEnv, TIMEOUT, alive, assert_job_events, check_logs_with_htcondor, fake_job, has_tool,
    job_events_when, proc_state, wait_until,
};

/// A submit file running fake_job with `arguments` and the other `lines`.
fn job(arguments: &str, lines: &str) -> String {
    format!(
        "executable = {}\narguments = \"{arguments}\"\n{lines}",
        fake_job().display()
    )
}

/// The pids recorded by fake_job's `touch` in `file`: one line per run.
fn runs(env: &RunEnv, file: &str) -> Vec<i32> {
    std::fs::read_to_string(env.path(file))
        .unwrap_or_default()
        .lines()
        .map(|l| l.strip_prefix("run ").unwrap().parse().unwrap())
        .collect()
}

#[track_caller]
fn wait_status(env: &RunEnv, job: &str, status: i64) {
    env.wait_for(
        &format!("job {job} with JobStatus {status}"),
        TIMEOUT,
        || env.status(job) == Some(status),
    );
}

/// Waits until `job` runs (JobStatus 2) and its first run has touched
/// `file`; the job process's pid.
#[track_caller]
fn wait_running(env: &RunEnv, job: &str, file: &str) -> i32 {
    env.wait_for(&format!("job {job} running"), TIMEOUT, || {
        env.status(job) == Some(2) && !runs(env, file).is_empty()
    });
    runs(env, file)[0]
}

/// Waits until the first run of a job has touched `file`; that run's pid.
/// For a job whose policy ends its first run within a second or two of the
/// start: its JobStatus 2 may be gone before a loaded machine looks (the
/// job idle again, held, or in the history), the `touch` stays.
#[track_caller]
fn wait_first_run(env: &RunEnv, job: &str, file: &str) -> i32 {
    env.wait_for(&format!("job {job}'s first run"), TIMEOUT, || {
        !runs(env, file).is_empty()
    });
    runs(env, file)[0]
}

#[track_caller]
fn wait_dead(env: &RunEnv, what: &str, pid: i32) {
    env.wait_for(&format!("{what} (pid {pid}) to end"), TIMEOUT, || {
        !alive(pid)
    });
}

/// The pid of the shadow that holds job `id`'s lock.
#[track_caller]
fn shadow_of(env: &RunEnv, id: &str) -> i32 {
    env.shadow_pid(id)
        .unwrap_or_else(|| panic!("no shadow holds the job's lock\n{}", env.diagnosis()))
}

/// SIGKILLs shadow `pid` and waits until it has ended.
fn kill_shadow(env: &RunEnv, pid: i32) {
    // SAFETY: kill has no memory effects.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
    wait_dead(env, "the killed shadow", pid);
}

/// Runs passes until `cond` holds, for conditions that need a pass (the
/// periodic policies) or that one may speed up.
#[track_caller]
fn negotiate_until(env: &RunEnv, what: &str, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + TIMEOUT;
    while Instant::now() < end {
        env.negotiate();
        if wait_until(Duration::from_millis(700), &mut cond) {
            return;
        }
    }
    panic!(
        "no pass brought about {what} in {TIMEOUT:?}\n{}",
        env.diagnosis()
    );
}

/// Waits until the event log at `log` has an event `n` of `job`. The log
/// is read as far as its events are complete: a shadow may be writing.
#[track_caller]
fn wait_event(env: &RunEnv, log: &str, job: &str, n: u32) {
    // Any such event, not the job's last: after a vacate the job may have
    // run again already (a shadow starts a pass when it lets its slot go).
    let seen = || {
        let text = std::fs::read_to_string(env.path(log)).unwrap_or_default();
        let Ok((events, _)) = tern::userlog::read_complete(&text) else {
            return false;
        };
        events
            .iter()
            .any(|e| format!("{}.{}", e.id.cluster, e.id.proc) == job && e.kind.number() == n)
    };
    env.wait_for(&format!("event {n:03} for {job}"), TIMEOUT, seen);
}

/// History attributes of `job` as one `tern_history -af` line.
#[track_caller]
fn history(env: &RunEnv, job: &str, attrs: &[&str]) -> String {
    env.history_af(job, attrs)
        .unwrap_or_else(|| panic!("job {job} is not in the history"))
}

#[track_caller]
fn number(env: &RunEnv, job: &str, attr: &str) -> f64 {
    let v = env
        .attr(job, attr)
        .unwrap_or_else(|| panic!("no job {job}"));
    v.parse()
        .unwrap_or_else(|_| panic!("job {job}'s {attr} is {v:?}, not a number"))
}

#[test]
fn ten_jobs_complete_with_their_outputs_exit_codes_usage_and_events() {
    let env = RunEnv::new();
    std::fs::create_dir(env.path("run")).unwrap();
    let c = env.submit(
        "ten.sub",
        &job(
            "echo out$(Process) stderr err$(Process) exit $(Process)",
            "initialdir = run\noutput = $(Process).out\nerror = $(Process).err\n\
             log = ten.log\nqueue 10\n",
        ),
    );
    // One more that burns cpu, so that its RemoteUserCpu is above zero.
    let spin = env.submit(
        "spin.sub",
        &job(
            "spin 1.5 exit 0",
            "initialdir = run\nlog = ten.log\nqueue\n",
        ),
    );
    for p in 0..10 {
        let id = format!("{c}.{p}");
        assert_eq!(env.wait_history(&id, TIMEOUT), 4, "job {id} completed");
        assert_eq!(
            history(
                &env,
                &id,
                &["ExitCode", "ExitBySignal", "NumJobStarts", "JobStatus"]
            ),
            format!("{p} false 1 4"),
            "job {id}'s exit"
        );
        for attr in ["RemoteWallClockTime", "RemoteUserCpu", "RemoteSysCpu"] {
            assert!(number(&env, &id, attr) >= 0.0, "job {id}'s {attr}");
        }
        let done = number(&env, &id, "CompletionDate");
        let started = number(&env, &id, "JobStartDate");
        assert!(
            done >= started && started >= number(&env, &id, "QDate"),
            "job {id}: QDate <= JobStartDate <= CompletionDate"
        );
        assert_eq!(
            std::fs::read_to_string(env.path(&format!("run/{p}.out"))).unwrap(),
            format!("out{p}\n")
        );
        assert_eq!(
            std::fs::read_to_string(env.path(&format!("run/{p}.err"))).unwrap(),
            format!("err{p}\n")
        );
        assert_job_events(&env.path("run/ten.log"), &id, [0, 1, 5]);
    }
    let id = format!("{spin}.0");
    assert_eq!(env.wait_history(&id, TIMEOUT), 4);
    assert!(
        number(&env, &id, "RemoteUserCpu") > 0.0,
        "a job that spun 1.5 s of cpu has user cpu time"
    );
    assert_job_events(&env.path("run/ten.log"), &id, [0, 1, 5]);
    check_logs_with_htcondor(&[env.path("run/ten.log")]);
}

/// The execute event lists what HTCondor's shadow lists from its
/// starter: the scratch directory, the slot's resources, and the slot
/// attributes the job names in ulog_execute_attrs.
#[test]
fn the_execute_event_lists_the_scratch_directory_the_slot_and_the_asked_attributes() {
    let env = RunEnv::new();
    let c = env.submit(
        "x.sub",
        &job(
            "exit 0",
            "log = x.log\nulog_execute_attrs = OpSys, NoSuchAttr Cpus\nqueue\n",
        ),
    );
    let id = format!("{c}.0");
    assert_eq!(env.wait_history(&id, TIMEOUT), 4);
    let log = std::fs::read_to_string(env.path("x.log")).unwrap();
    let execute: Vec<&str> = log
        .split("...\n")
        .find(|e| e.starts_with("001 "))
        .unwrap_or_else(|| panic!("no 001 in {log}"))
        .lines()
        .skip(1)
        .collect();
    let names: Vec<&str> = execute
        .iter()
        .filter_map(|l| l.trim().split_once(" = ").map(|(n, _)| n))
        .collect();
    assert_eq!(
        names,
        ["CondorScratchDir", "Cpus", "Disk", "Memory", "OpSys"],
        "{log}"
    );
    assert!(execute[0].starts_with("\tSlotName: slot1"), "{log}");
    let scratch = execute
        .iter()
        .find(|l| l.contains("CondorScratchDir"))
        .unwrap();
    assert!(
        scratch.contains(&format!("{}/execute/dir_", env.spool().display())),
        "{scratch}"
    );
    assert!(execute.contains(&"\tOpSys = \"LINUX\""), "{log}");
    if let Some(attrs) = crate::common::oracle_execute_attrs(&env.path("x.log")) {
        let props = attrs
            .lines()
            .find(|l| l.starts_with("ExecuteProps = {"))
            .unwrap_or_else(|| panic!("no ExecuteProps in JobEventLog's {attrs}"));
        for want in [
            "'CondorScratchDir': '/",
            "'Cpus': ",
            "'Disk': ",
            "'Memory': ",
            "'OpSys': 'LINUX'",
        ] {
            assert!(props.contains(want), "{want} in JobEventLog's {attrs}");
        }
        assert!(attrs.contains("SlotName = 'slot1"), "{attrs}");
    }
}

#[test]
fn a_job_killed_by_a_signal_exits_by_that_signal() {
    let env = RunEnv::new();
    let c = env.submit(
        "sig.sub",
        &job(
            "echo before kill-self USR1 echo after",
            "output = sig.out\nlog = sig.log\nqueue\n",
        ),
    );
    let id = format!("{c}.0");
    assert_eq!(env.wait_history(&id, TIMEOUT), 4);
    assert_eq!(
        history(&env, &id, &["ExitBySignal", "ExitSignal", "NumJobStarts"]),
        format!("true {} 1", libc::SIGUSR1)
    );
    assert_eq!(
        std::fs::read_to_string(env.path("sig.out")).unwrap(),
        "before\n"
    );
    assert_job_events(&env.path("sig.log"), &id, [0, 1, 5]);
    check_logs_with_htcondor(&[env.path("sig.log")]);
}

#[test]
fn a_job_runs_in_its_iwd_with_its_arguments_environment_and_input() {
    let env = RunEnv::new();
    std::fs::create_dir(env.path("iwd")).unwrap();
    env.write("iwd/in.txt", "input\n");
    let c = env.submit(
        "env.sub",
        &format!(
            "executable = {}\narguments = \"cwd stdin env FOO env _TERN_SPOOL args 'a b' c\"\n\
             environment = \"FOO=bar\"\ninitialdir = iwd\ninput = in.txt\noutput = out.txt\n\
             queue\n",
            fake_job().display()
        ),
    );
    assert_eq!(env.wait_history(&format!("{c}.0"), TIMEOUT), 4);
    let iwd = env.path("iwd");
    assert_eq!(
        std::fs::read_to_string(env.path("iwd/out.txt")).unwrap(),
        format!(
            "{}\ninput\nFOO=bar\n_TERN_SPOOL unset\n[a b]\n[c]\n",
            iwd.display()
        )
    );
}

/// tern's processes start with transparent huge pages off (a start-up
/// cost), and the flag survives fork and exec: the job must not inherit it.
/// The shadow turns it off again after each start, so the later jobs of
/// its claim are checked too, started by posix_spawn and (niced) by fork.
#[test]
fn a_job_sees_the_machines_huge_page_setting_not_terns() {
    let env = RunEnv::new()
        .knob("NUM_CPUS", "1")
        .knob("JOB_RENICE_INCREMENT", "ifThenElse(ProcId == 2, 5, 0)");
    let c = env.submit(
        "thp.sub",
        "executable = /bin/grep\narguments = \"THP_enabled /proc/self/status\"\n\
         output = thp$(Process).out\nqueue 3\n",
    );
    for p in 0..3 {
        assert_eq!(env.wait_history(&format!("{c}.{p}"), TIMEOUT), 4);
    }
    let mine = std::fs::read_to_string("/proc/self/status").unwrap();
    if !mine.contains("THP_enabled") {
        return; // a kernel older than 5.0 reports nothing to compare
    }
    // This test process is a tern process too (it links the library).
    assert!(mine.contains("THP_enabled:\t0"), "{mine}");
    for p in 0..3 {
        assert_eq!(
            std::fs::read_to_string(env.path(&format!("thp{p}.out"))).unwrap(),
            "THP_enabled:\t1\n",
            "job {p}"
        );
    }
}

#[test]
fn rm_of_a_running_job_kills_it_and_moves_it_to_the_history() {
    let env = RunEnv::new();
    let c = env.submit(
        "rm.sub",
        &job("touch runs sleep 300", "log = rm.log\nqueue\n"),
    );
    let id = format!("{c}.0");
    let pid = wait_running(&env, &id, "runs");
    env.run_ok("tern_rm", [&id]);
    assert!(
        env.status(&id) == Some(3) || env.history_af(&id, &["JobStatus"]).is_some(),
        "removed at once: {}",
        env.diagnosis()
    );
    assert_eq!(env.wait_history(&id, TIMEOUT), 3);
    wait_dead(&env, "the removed job", pid);
    assert_job_events(&env.path("rm.log"), &id, [0, 1, 9]);
    assert_eq!(runs(&env, "runs").len(), 1);
    check_logs_with_htcondor(&[env.path("rm.log")]);
}

#[test]
fn hold_of_a_running_job_kills_it_and_release_runs_it_again() {
    let env = RunEnv::new();
    let c = env.submit(
        "hold.sub",
        &job(
            "if-missing runs 2 touch runs sleep 300 touch runs exit 0",
            "log = hold.log\nqueue\n",
        ),
    );
    let id = format!("{c}.0");
    let pid = wait_running(&env, &id, "runs");
    env.run_ok("tern_hold", [&id]);
    assert_eq!(env.status(&id), Some(5), "held at once");
    wait_event(&env, "hold.log", &id, 12);
    wait_dead(&env, "the held job", pid);
    assert_eq!(env.status(&id), Some(5), "still held once stopped");
    env.run_ok("tern_release", [&id]);
    negotiate_until(&env, "the released job's completion", || {
        env.history_af(&id, &["JobStatus"]).is_some()
    });
    assert_eq!(
        history(&env, &id, &["JobStatus", "ExitCode", "NumJobStarts"]),
        "4 0 2"
    );
    assert_eq!(runs(&env, "runs").len(), 2);
    assert_job_events(&env.path("hold.log"), &id, [0, 1, 12, 13, 1, 5]);
    check_logs_with_htcondor(&[env.path("hold.log")]);
}

/// A job held while it ran and released before its shadow had it down:
/// the log keeps the queue's order (012 with the hold's reason, then 013),
/// and the job runs again. The first run ignores SIGTERM, so it lives on
/// for its vacate time after the hold.
#[test]
fn a_job_released_before_its_hold_has_stopped_it_logs_the_hold_then_the_release() {
    let env = RunEnv::new();
    let (id, first) = run_slow_to_stop(&env, "hr.log", 300, "");
    env.run_ok("tern_hold", [&id]);
    env.run_ok("tern_release", [&id]);
    end_the_stop(first);
    held_released_and_run_again(&env, &id, "hr.log");
    assert_eq!(history(&env, &id, &["NumJobStarts"]), "2");
}

/// The same, with the shadow killed while it stops the run: the pass that
/// puts the job right writes the 012 and the 013 the shadow owed.
#[test]
fn a_dead_shadows_released_job_gets_the_hold_and_the_release_from_the_pass() {
    released_then_shadow_killed("hk.log", "");
}

/// Submits a job (with the submit lines `extra`) whose run is slow to
/// stop, holds and releases it, kills its shadow meanwhile, and checks
/// that the pass puts it right: the 012 and the 013 the shadow owed, the
/// first run killed, the job run again, no request left.
fn released_then_shadow_killed(log: &str, extra: &str) {
    let env = RunEnv::new();
    let (id, first) = run_slow_to_stop(&env, log, 300, extra);
    wait_event(&env, log, &id, 1);
    let shadow = shadow_of(&env, &id);
    env.run_ok("tern_hold", [&id]);
    env.run_ok("tern_release", [&id]);
    kill_shadow(&env, shadow);
    held_released_and_run_again(&env, &id, log);
    assert!(
        !alive(first),
        "the first run (pid {first}) outlived its shadow"
    );
    assert_no_requests(&env);
}

/// Held, released and held again, all before its shadow has the first
/// run down: the log has both holds, each with its own reason, and the
/// release between them, in that order; once down, the job stays held.
#[test]
fn a_job_held_again_before_its_first_hold_has_stopped_it_logs_both_holds_in_order() {
    let env = RunEnv::new();
    let (id, first) = run_slow_to_stop(&env, "hh.log", 300, "");
    env.run_ok("tern_hold", ["-reason", "first hold", &id]);
    env.run_ok("tern_release", [&id]);
    env.run_ok("tern_hold", ["-reason", "second hold", &id]);
    end_the_stop(first);
    let log = env.path("hh.log");
    let events = job_events_when(&log, &id, |e| e.len() >= 5);
    assert_eq!(events, [0, 1, 12, 13, 12], "{}", env.diagnosis());
    // The shadow has recorded the stop once no process holds the job.
    negotiate_until(&env, "the stop recorded", || env.shadow_pid(&id).is_none());
    assert_eq!(env.status(&id), Some(5), "still held once stopped");
    let text = std::fs::read_to_string(&log).unwrap();
    let holds: Vec<&str> = text
        .split("...\n")
        .filter(|e| e.starts_with("012 "))
        .collect();
    assert_eq!(holds.len(), 2, "{text}");
    assert!(holds[0].contains("\tfirst hold"), "{text}");
    assert!(holds[1].contains("\tsecond hold"), "{text}");
    assert_job_events(&log, &id, [0, 1, 12, 13, 12]);
    check_logs_with_htcondor(&[log]);
}

/// Held, released and removed before its shadow has the run down: the
/// log has the hold, the release and the abort, in that order.
#[test]
fn a_job_removed_after_a_release_before_its_hold_has_stopped_it_logs_in_order() {
    let env = RunEnv::new();
    let (id, first) = run_slow_to_stop(&env, "hx.log", 300, "");
    env.run_ok("tern_hold", [&id]);
    env.run_ok("tern_release", [&id]);
    env.run_ok("tern_rm", [&id]);
    end_the_stop(first);
    removed_while_stopping(&env, &id, first, "hx.log", [0, 1, 12, 13, 9]);
    assert_eq!(history(&env, &id, &["JobStatus"]), "3");
    assert_no_requests(&env);
}

/// Held, then removed before its shadow has the run down, with
/// LeaveJobInQueue keeping the removed job: the hold, then the abort,
/// once each (the shadow, which finds the job still in the queue, adds
/// no second 009).
#[test]
fn a_held_job_removed_before_its_hold_has_stopped_it_logs_the_hold_then_the_abort() {
    let env = RunEnv::new();
    let (id, first) = run_slow_to_stop(&env, "hy.log", 300, "leave_in_queue = true\n");
    env.run_ok("tern_hold", [&id]);
    env.run_ok("tern_rm", [&id]);
    end_the_stop(first);
    removed_while_stopping(&env, &id, first, "hy.log", [0, 1, 12, 9]);
    assert_eq!(env.status(&id), Some(3), "kept in the queue, removed");
}

/// The same with the shadow killed while it stops the run: the pass that
/// puts the job right adds no second 009 either.
#[test]
fn a_dead_shadows_held_job_removed_meanwhile_gets_no_second_abort() {
    let env = RunEnv::new();
    let (id, first) = run_slow_to_stop(&env, "hz.log", 300, "leave_in_queue = true\n");
    wait_event(&env, "hz.log", &id, 1);
    let shadow = shadow_of(&env, &id);
    env.run_ok("tern_hold", [&id]);
    env.run_ok("tern_rm", [&id]);
    kill_shadow(&env, shadow);
    removed_while_stopping(&env, &id, first, "hz.log", [0, 1, 12, 9]);
    assert_eq!(env.status(&id), Some(3), "kept in the queue, removed");
}

/// Removed, then forced out of the queue while its shadow still stops the
/// run: a pass leaves a live shadow's run alone, and the shadow, finding
/// the job gone, ends the run, clears its requests and logs no second 009.
#[test]
fn a_job_forced_out_while_its_shadow_stops_it_is_left_to_the_shadow() {
    let env = RunEnv::new();
    let (id, first) = run_slow_to_stop(&env, "fl.log", 300, "");
    wait_event(&env, "fl.log", &id, 1);
    env.run_ok("tern_rm", [&id]);
    env.run_ok("tern_rm", ["-forcex", &id]);
    assert_eq!(env.status(&id), None, "forced out of the queue");
    let pass = env.run_ok("tern_negotiate", ["-wait", "-verbose"]);
    assert!(!pass.contains("clean up"), "{pass}");
    assert!(alive(first), "the pass left the live shadow's run alone");
    end_the_stop(first);
    removed_while_stopping(&env, &id, first, "fl.log", [0, 1, 9]);
    assert_no_requests(&env);
}

/// A scheduler universe job (it has no slot) held and released while its
/// shadow stopped it, the shadow then killed: the pass finds the job by
/// its pending request, writes the 012 and the 013 the shadow owed, and
/// the job runs again.
#[test]
fn a_dead_shadows_released_scheduler_job_gets_the_hold_and_the_release_from_the_pass() {
    released_then_shadow_killed("hs.log", "universe = scheduler\n");
}

/// A scheduler universe job (it has no slot) whose shadow was killed, then
/// removed and forced out of the queue: the run its shadow left behind is
/// killed by the next pass, which finds it by the removal's pending
/// request, and the request goes with it.
#[test]
fn a_dead_shadows_scheduler_job_forced_out_of_the_queue_is_killed_by_the_pass() {
    let env = RunEnv::new();
    let (id, first) = run_slow_to_stop(&env, "fx.log", 300, "universe = scheduler\n");
    wait_event(&env, "fx.log", &id, 1);
    let shadow = shadow_of(&env, &id);
    kill_shadow(&env, shadow);
    env.run_ok("tern_rm", [&id]);
    env.run_ok("tern_rm", ["-forcex", &id]);
    assert_eq!(env.status(&id), None, "forced out of the queue");
    assert!(alive(first), "the run outlived its shadow, as it should");
    let said = format!("clean up {id} (it left the queue; its shadow is gone)\n");
    let dry = env.run_ok("tern_negotiate", ["-dry-run"]);
    assert!(dry.contains(&said), "{dry}");
    let pass = env.run_ok("tern_negotiate", ["-wait", "-verbose"]);
    assert!(pass.contains(&said), "{pass}");
    negotiate_until(&env, "the orphaned run killed", || !alive(first));
    assert_no_requests(&env);
}

/// No request is left in the queue (a leftover would wait for a shadow
/// forever).
fn assert_no_requests(env: &RunEnv) {
    let db = rusqlite::Connection::open(env.spool().join("queue.db")).unwrap();
    let n: i64 = db
        .query_row("SELECT count(*) FROM requests", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0, "requests left in the queue\n{}", env.diagnosis());
}

/// Runs passes until job `id`'s run `first` is down and no shadow holds
/// the job (the stop recorded by its shadow, or by the pass that put right
/// a dead one), then checks the job's events in `log` are `want`.
fn removed_while_stopping<const N: usize>(
    env: &RunEnv,
    id: &str,
    first: i32,
    log: &str,
    want: [u32; N],
) {
    negotiate_until(env, "the stop recorded", || {
        !alive(first) && env.shadow_pid(id).is_none()
    });
    let log = env.path(log);
    assert_job_events(&log, id, want);
    check_logs_with_htcondor(&[log]);
}

/// Vacated, then held and released before its shadow has the run down:
/// the run ends as the hold's (012, then 013), not as the vacate's 004,
/// and the job runs again.
#[test]
fn a_vacated_job_held_and_released_meanwhile_logs_the_hold_then_the_release() {
    let env = RunEnv::new();
    let (id, first) = run_slow_to_stop(&env, "hv.log", 300, "");
    env.run_ok("tern_vacate_job", [&id]);
    env.run_ok("tern_hold", [&id]);
    env.run_ok("tern_release", [&id]);
    end_the_stop(first);
    held_released_and_run_again(&env, &id, "hv.log");
}

/// Held and released while it ran, then held by its periodic_hold in a
/// pass before its shadow has the run down: the tool's hold and release,
/// then the periodic hold, each once.
#[test]
fn a_periodic_hold_of_a_job_released_while_its_hold_stops_it_logs_in_order() {
    let env = RunEnv::new().knob("PERIODIC_EXPR_INTERVAL", "1");
    let (id, first) = run_slow_to_stop(
        &env,
        "hp.log",
        300,
        "periodic_hold = ReleaseReason =!= undefined\n",
    );
    env.run_ok("tern_hold", [&id]);
    env.run_ok("tern_release", [&id]);
    negotiate_until(&env, "the periodic hold", || env.status(&id) == Some(5));
    end_the_stop(first);
    negotiate_until(&env, "the stop recorded", || env.shadow_pid(&id).is_none());
    let log = env.path("hp.log");
    assert_job_events(&log, &id, [0, 1, 12, 13, 12]);
    let text = std::fs::read_to_string(&log).unwrap();
    let last = &text[text.rfind("\n012 ").expect("a 012")..];
    assert!(last.contains("PeriodicHold"), "{text}");
    check_logs_with_htcondor(&[log]);
}

/// Held and released while its shadow was stopped (SIGSTOP), and the run
/// ended by itself meanwhile: once the shadow goes on, the run ends as
/// the hold's (the queue's word wins over the exit), with the 012 and the
/// 013, and the job runs again. The run exits 0 when the test signals it,
/// after the release, not on a timer: one that ended before the shadow
/// was stopped (a loaded machine) had its exit recorded, and the job was
/// gone from the queue when tern_hold came.
#[test]
fn a_run_that_ends_before_its_hold_reaches_it_and_is_released_logs_the_hold_then_the_release() {
    let env = RunEnv::new();
    let c = env.submit(
        "quick.sub",
        &job(
            "if-missing runs 4 record-signal ended ignore-term touch runs sleep 300 exit 0",
            "log = hq.log\nqueue\n",
        ),
    );
    let id = format!("{c}.0");
    let first = wait_running(&env, &id, "runs");
    wait_event(&env, "hq.log", &id, 1);
    let shadow = shadow_of(&env, &id);
    stop_outside_a_write(&env, shadow);
    env.run_ok("tern_hold", [&id]);
    env.run_ok("tern_release", [&id]);
    // The run exits 0 by itself (its handler of SIGUSR1); its stopped
    // shadow has not reaped it.
    // SAFETY: kill has no memory effects.
    unsafe {
        libc::kill(first, libc::SIGUSR1);
    }
    env.wait_for("the first run to exit", TIMEOUT, || {
        proc_state(first).is_none_or(|s| s == 'Z')
    });
    unsafe {
        libc::kill(shadow, libc::SIGCONT);
    }
    held_released_and_run_again(&env, &id, "hq.log");
}

/// SIGSTOPs shadow `pid` at a moment it holds no write transaction: one
/// stopped inside a write (the execute attributes it records a moment
/// after the start) would keep every tool out. While the queue's write
/// lock is taken, the shadow goes on for a moment and is stopped again.
fn stop_outside_a_write(env: &RunEnv, pid: i32) {
    let db = rusqlite::Connection::open(env.spool().join("queue.db")).unwrap();
    // A stopped holder frees nothing: the probe answers at once, where
    // rusqlite's default busy timeout (5 s) kept the shadow stopped.
    db.busy_timeout(Duration::ZERO).unwrap();
    let end = Instant::now() + TIMEOUT;
    loop {
        // SAFETY: kill has no memory effects.
        unsafe {
            libc::kill(pid, libc::SIGSTOP);
        }
        env.wait_for("the shadow to stop", TIMEOUT, || {
            proc_state(pid) == Some('T')
        });
        if db.execute_batch("BEGIN IMMEDIATE; ROLLBACK").is_ok() {
            return;
        }
        // SAFETY: as above.
        unsafe {
            libc::kill(pid, libc::SIGCONT);
        }
        assert!(
            Instant::now() < end,
            "the shadow held the write lock whenever it was stopped\n{}",
            env.diagnosis()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Ends a run that is being stopped (it ignores SIGTERM and was given
/// 300 s) once the test has done what it does meanwhile: the window is the
/// test's, not a timer's.
fn end_the_stop(first: i32) {
    assert!(alive(first), "the run (pid {first}) is still being stopped");
    unsafe {
        libc::kill(first, libc::SIGKILL);
    }
}

/// Submits a job whose first run ignores SIGTERM (so a stop takes its
/// `job_max_vacate_time`) and whose second exits 0; its id and the first
/// run's pid once it runs.
fn run_slow_to_stop(env: &RunEnv, log: &str, vacate_time: u32, extra: &str) -> (String, i32) {
    let c = env.submit(
        "slow.sub",
        &job(
            "if-missing runs 3 touch runs ignore-term sleep 300 exit 0",
            &format!("job_max_vacate_time = {vacate_time}\nlog = {log}\n{extra}queue\n"),
        ),
    );
    let id = format!("{c}.0");
    let first = wait_running(env, &id, "runs");
    (id, first)
}

/// Checks that job `id`, held while it ran and released, ran again to its
/// end, and that its log has the hold's 012 and then the release's 013,
/// each with its reason (not "Reason unspecified"). (A shadow killed
/// before it recorded the first start leaves NumJobStarts one short, so
/// the callers check that themselves.)
fn held_released_and_run_again(env: &RunEnv, id: &str, log: &str) {
    negotiate_until(env, "the released job's completion", || {
        env.history_af(id, &["JobStatus"]).is_some()
    });
    assert_eq!(history(env, id, &["JobStatus"]), "4", "{}", env.diagnosis());
    let log = env.path(log);
    assert_job_events(&log, id, [0, 1, 12, 13, 1, 5]);
    let text = std::fs::read_to_string(&log).unwrap();
    for (n, what) in [
        ("012", "Job was held.\n\tvia tern_hold"),
        ("013", "Job was released.\n\tvia tern_release"),
    ] {
        let at = text.find(&format!("\n{n} ")).expect("the event");
        let event = &text[at..at + text[at..].find("...").expect("its end")];
        assert!(event.contains(what), "{text}");
    }
    check_logs_with_htcondor(&[log]);
}

#[test]
fn vacate_of_a_running_job_requeues_it_and_it_runs_again() {
    let env = RunEnv::new();
    let c = env.submit(
        "vac.sub",
        &job(
            "if-missing runs 2 touch runs sleep 300 touch runs exit 0",
            "log = vac.log\nqueue\n",
        ),
    );
    let id = format!("{c}.0");
    let pid = wait_running(&env, &id, "runs");
    env.run_ok("tern_vacate_job", [&id]);
    wait_dead(&env, "the vacated job", pid);
    negotiate_until(&env, "the vacated job's second run ending", || {
        env.history_af(&id, &["JobStatus"]).is_some()
    });
    assert_eq!(
        history(&env, &id, &["JobStatus", "ExitCode", "NumJobStarts"]),
        "4 0 2"
    );
    assert_eq!(runs(&env, "runs").len(), 2);
    assert_job_events(&env.path("vac.log"), &id, [0, 1, 4, 1, 5]);
    check_logs_with_htcondor(&[env.path("vac.log")]);
}

#[test]
fn vacate_fast_kills_a_job_that_ignores_sigterm_at_once() {
    // The job would get 300 s after SIGTERM; -fast sends SIGKILL at once.
    let env = RunEnv::new().knob("NEGOTIATE_ON_EXIT", "false");
    let c = env.submit(
        "fast.sub",
        &job(
            "ignore-term touch runs sleep 300",
            "job_max_vacate_time = 300\nlog = fast.log\nqueue\n",
        ),
    );
    let id = format!("{c}.0");
    let pid = wait_running(&env, &id, "runs");
    env.run_ok("tern_vacate_job", ["-fast", &id]);
    wait_dead(&env, "the vacated job", pid);
    wait_event(&env, "fast.log", &id, 4);
    env.run_ok("tern_rm", [&id]);
    env.wait_history(&id, TIMEOUT);
    check_logs_with_htcondor(&[env.path("fast.log")]);
}

#[test]
fn suspend_and_continue_stop_and_resume_a_running_job() {
    let env = RunEnv::new();
    let c = env.submit(
        "sus.sub",
        &job(
            "touch runs sleep 300",
            "job_max_vacate_time = 2\nlog = sus.log\nqueue\n",
        ),
    );
    let id = format!("{c}.0");
    let pid = wait_running(&env, &id, "runs");
    env.run_ok("tern_suspend", [&id]);
    wait_status(&env, &id, 7);
    wait_event(&env, "sus.log", &id, 10);
    env.wait_for("the job process stopped", TIMEOUT, || {
        proc_state(pid) == Some('T')
    });
    env.run_ok("tern_continue", [&id]);
    wait_status(&env, &id, 2);
    wait_event(&env, "sus.log", &id, 11);
    env.wait_for("the job process resumed", TIMEOUT, || {
        proc_state(pid) != Some('T')
    });
    // A suspended job can still be removed.
    env.run_ok("tern_suspend", [&id]);
    wait_status(&env, &id, 7);
    env.run_ok("tern_rm", [&id]);
    assert_eq!(env.wait_history(&id, TIMEOUT), 3);
    wait_dead(&env, "the removed suspended job", pid);
    let events = job_events_when(&env.path("sus.log"), &id, |e| e.last() == Some(&9));
    assert_eq!(events[..5], [0, 1, 10, 11, 10], "{events:?}");
    assert_eq!(events.last(), Some(&9), "{events:?}");
    check_logs_with_htcondor(&[env.path("sus.log")]);
}

/// Removes a running job that ignores SIGTERM and says how long it lived
/// after the removal.
fn rm_sigterm_ignorer(env: &RunEnv, lines: &str) -> Duration {
    let c = env.submit(
        "term.sub",
        &job(
            "ignore-term touch runs sleep 300",
            &format!("{lines}queue\n"),
        ),
    );
    let id = format!("{c}.0");
    let pid = wait_running(env, &id, "runs");
    let t0 = Instant::now();
    env.run_ok("tern_rm", [&id]);
    wait_dead(env, "the job ignoring SIGTERM", pid);
    let lived = t0.elapsed();
    assert_eq!(env.wait_history(&id, TIMEOUT), 3);
    lived
}

#[test]
fn a_job_ignoring_sigterm_is_killed_after_its_job_max_vacate_time() {
    let env = RunEnv::new().knob("KILLING_TIMEOUT", "300");
    let lived = rm_sigterm_ignorer(&env, "job_max_vacate_time = 2\n");
    assert!(
        lived >= Duration::from_millis(1500),
        "SIGKILL came after the vacate time, not at once: {lived:?}"
    );
}

#[test]
fn a_job_ignoring_sigterm_is_killed_after_the_killing_timeout() {
    let env = RunEnv::new().knob("KILLING_TIMEOUT", "2");
    let lived = rm_sigterm_ignorer(&env, "");
    assert!(
        lived >= Duration::from_millis(1500),
        "SIGKILL came after KILLING_TIMEOUT, not at once: {lived:?}"
    );
}

fn pids(env: &RunEnv, file: &str) -> Vec<i32> {
    std::fs::read_to_string(env.path(file))
        .unwrap_or_default()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

#[test]
fn a_job_that_exits_leaves_no_forked_child_alive() {
    let env = RunEnv::new();
    let c = env.submit(
        "kids.sub",
        &job(
            "pidfile kids fork-sleep 300 fork-sleep 300 exit 0",
            "queue\n",
        ),
    );
    let id = format!("{c}.0");
    assert_eq!(env.wait_history(&id, TIMEOUT), 4);
    let kids = pids(&env, "kids");
    assert_eq!(kids.len(), 2);
    for kid in kids {
        wait_dead(&env, "a child the job left running", kid);
    }
}

#[test]
fn a_removed_job_leaves_no_forked_child_alive() {
    let env = RunEnv::new();
    let c = env.submit(
        "kids.sub",
        &job(
            "pidfile kids fork-sleep 300 touch runs sleep 300",
            "queue\n",
        ),
    );
    let id = format!("{c}.0");
    let pid = wait_running(&env, &id, "runs");
    let kids = pids(&env, "kids");
    assert_eq!(kids.len(), 1);
    env.run_ok("tern_rm", [&id]);
    assert_eq!(env.wait_history(&id, TIMEOUT), 3);
    wait_dead(&env, "the removed job", pid);
    wait_dead(&env, "the removed job's child", kids[0]);
}

#[test]
fn a_killed_shadow_requeues_its_job_which_runs_once_more() {
    // The first run sleeps until killed; the second exits at once.
    let env = RunEnv::new();
    let c = env.submit(
        "crash.sub",
        &job(
            "if-missing runs 2 touch runs sleep 300 touch runs exit 0",
            "log = crash.log\nqueue\n",
        ),
    );
    let id = format!("{c}.0");
    let first = wait_running(&env, &id, "runs");
    // The shadow records the start just after the exec: kill it after that.
    wait_event(&env, "crash.log", &id, 1);
    let shadow = shadow_of(&env, &id);
    kill_shadow(&env, shadow);
    // The next pass finds the job running without a shadow.
    negotiate_until(&env, "the requeued job's completion", || {
        env.history_af(&id, &["JobStatus"]).is_some()
    });
    assert_eq!(history(&env, &id, &["JobStatus", "ExitCode"]), "4 0");
    assert!(
        !alive(first),
        "the first run (pid {first}) outlived its shadow and the requeue"
    );
    assert_eq!(runs(&env, "runs").len(), 2, "one run, then one more");
    assert_job_events(&env.path("crash.log"), &id, [0, 1, 4, 1, 5]);
    check_logs_with_htcondor(&[env.path("crash.log")]);
}

#[test]
fn twenty_concurrent_passes_start_each_of_200_jobs_exactly_once() {
    const JOBS: usize = 200;
    let env = RunEnv::new().knob("NEGOTIATE_ON_SUBMIT", "false");
    std::fs::create_dir(env.path("runs")).unwrap();
    let c = env.submit(
        "many.sub",
        &job("touch runs/$(Process)", &format!("queue {JOBS}\n")),
    );
    let passes: Vec<_> = (0..20)
        .map(|_| {
            env.command("tern_negotiate")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("starting tern_negotiate")
        })
        .collect();
    for p in passes {
        let out = p.wait_with_output().unwrap();
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "a concurrent pass: {out:?}"
        );
    }
    // Passes started by the shadows as jobs end take it from here.
    env.wait_for(
        &format!("all {JOBS} jobs in the history"),
        Duration::from_secs(120),
        || {
            let r = env.run("tern_history", ["-af", "ProcId"]);
            r.stdout.lines().count() == JOBS
        },
    );
    let starts = env.run_ok(
        "tern_history",
        [&c.to_string(), "-af", "ProcId", "JobStatus", "NumJobStarts"],
    );
    for line in starts.lines() {
        assert!(line.ends_with(" 4 1"), "completed after one start: {line}");
    }
    for p in 0..JOBS {
        assert_eq!(
            runs(&env, &format!("runs/{p}")).len(),
            1,
            "job {c}.{p} ran exactly once"
        );
    }
}

#[test]
fn a_two_cpu_job_takes_two_cpus_of_the_partitionable_slot() {
    // Four cpus: two 2-cpu jobs run, the third waits.
    let env = RunEnv::new();
    std::fs::create_dir(env.path("runs")).unwrap();
    let c = env.submit(
        "two.sub",
        &job(
            "touch runs/$(Process) sleep 300",
            "request_cpus = 2\nrequest_memory = 100\nqueue 3\n",
        ),
    );
    let jobs: Vec<String> = (0..3).map(|p| format!("{c}.{p}")).collect();
    let running = || jobs.iter().filter(|j| env.status(j) == Some(2)).count();
    env.wait_for("two jobs running", TIMEOUT, || running() == 2);
    // A pass after both started has no cpus left for the third.
    env.negotiate();
    assert_eq!(running(), 2, "{}", env.diagnosis());
    assert_eq!(
        jobs.iter().filter(|j| env.status(j) == Some(1)).count(),
        1,
        "the third job waits: {}",
        env.diagnosis()
    );
    let mut hosts: Vec<String> = jobs
        .iter()
        .filter(|j| env.status(j) == Some(2))
        .map(|j| env.q_af(j, &["RemoteHost"]).unwrap())
        .collect();
    hosts.sort();
    hosts.dedup();
    assert_eq!(hosts.len(), 2, "two dynamic slots: {hosts:?}");
    assert!(
        hosts.iter().all(|h| h.starts_with("slot1_")),
        "dynamic slots of slot1: {hosts:?}"
    );
    if has_tool("tern_status") {
        let out = env.run_ok("tern_status", ["-af", "Name", "Cpus"]);
        let mut cpus: Vec<(String, i64)> = out
            .lines()
            .map(|l| {
                let (name, n) = l.split_once(' ').unwrap();
                let slot = name.split('@').next().unwrap().to_string();
                (slot, n.parse().unwrap())
            })
            .collect();
        cpus.sort();
        let dynamic: Vec<i64> = cpus
            .iter()
            .filter(|(s, _)| s.starts_with("slot1_"))
            .map(|&(_, n)| n)
            .collect();
        assert_eq!(dynamic, [2, 2], "tern_status:\n{out}");
        assert!(
            cpus.contains(&("slot1".into(), 0)),
            "the partitionable slot has no cpu left:\n{out}"
        );
    } else {
        eprintln!("tern_status is not built yet; slot cpus not checked");
    }
    // Removing a running job frees its cpus for the third.
    let first = jobs.iter().find(|j| env.status(j) == Some(2)).unwrap();
    env.run_ok("tern_rm", [first]);
    env.wait_history(first, TIMEOUT);
    negotiate_until(&env, "the third job running", || running() == 2);
    env.run_ok("tern_rm", [&c.to_string()]);
    for j in &jobs {
        env.wait_history(j, TIMEOUT);
    }
}

#[test]
fn periodic_remove_removes_a_running_job() {
    // Time-driven expressions of a job that does not change: evaluated
    // every PERIODIC_EXPR_INTERVAL (see cli_negotiate), here each second.
    // No usage sample (and so no 006 event) races the removal.
    let env = RunEnv::new()
        .knob("PERIODIC_EXPR_INTERVAL", "1")
        .knob("STARTER_INITIAL_UPDATE_INTERVAL", "300");
    let c = env.submit(
        "prm.sub",
        &job(
            "touch runs sleep 300",
            "periodic_remove = JobStatus == 2 && time() - JobCurrentStartDate >= 2\n\
             log = prm.log\nqueue\n",
        ),
    );
    let id = format!("{c}.0");
    let pid = wait_first_run(&env, &id, "runs");
    negotiate_until(&env, "the periodic removal", || {
        env.history_af(&id, &["JobStatus"]).is_some()
    });
    assert_eq!(history(&env, &id, &["JobStatus"]), "3");
    let reason = history(&env, &id, &["RemoveReason"]);
    assert!(reason.contains("PeriodicRemove"), "RemoveReason {reason:?}");
    wait_dead(&env, "the removed job", pid);
    assert_job_events(&env.path("prm.log"), &id, [0, 1, 9]);
    check_logs_with_htcondor(&[env.path("prm.log")]);
}

#[test]
fn periodic_hold_holds_a_running_job_and_periodic_release_releases_it() {
    // Held during its first run, released two seconds later; the second
    // run exits at once. The expressions are evaluated each second; no
    // usage sample (and so no 006 event) races the hold.
    let env = RunEnv::new()
        .knob("PERIODIC_EXPR_INTERVAL", "1")
        .knob("STARTER_INITIAL_UPDATE_INTERVAL", "300");
    let c = env.submit(
        "ph.sub",
        &job(
            "if-missing runs 2 touch runs sleep 300 touch runs exit 0",
            "periodic_hold = JobStatus == 2 && NumJobStarts == 1 && \
             time() - JobCurrentStartDate >= 2\n\
             periodic_release = NumJobStarts == 1 && time() - EnteredCurrentStatus >= 2\n\
             log = ph.log\nqueue\n",
        ),
    );
    let id = format!("{c}.0");
    let pid = wait_first_run(&env, &id, "runs");
    negotiate_until(&env, "the periodic hold", || env.status(&id) == Some(5));
    let code = env.q_af(&id, &["HoldReasonCode"]);
    let reason = env.q_af(&id, &["HoldReason"]).unwrap_or_default();
    wait_dead(&env, "the held job", pid);
    assert_eq!(code.as_deref(), Some("3"), "HoldReasonCode (JobPolicy)");
    assert!(reason.contains("PeriodicHold"), "HoldReason {reason:?}");
    negotiate_until(&env, "the released job's completion", || {
        env.history_af(&id, &["JobStatus"]).is_some()
    });
    assert_eq!(
        history(&env, &id, &["JobStatus", "ExitCode", "NumJobStarts"]),
        "4 0 2"
    );
    assert_job_events(&env.path("ph.log"), &id, [0, 1, 12, 13, 1, 5]);
    check_logs_with_htcondor(&[env.path("ph.log")]);
}

/// periodic_vacate stops a running job and puts it back to Idle, as the
/// shadow's user policy does in HTCondor: the run's 004, VacateReason and
/// VacateReasonCode 1000 (JobPolicyVacate); the next run completes.
#[test]
fn periodic_vacate_sends_a_running_job_back_to_idle_and_it_runs_again() {
    let env = RunEnv::new()
        .knob("PERIODIC_EXPR_INTERVAL", "1")
        .knob("STARTER_INITIAL_UPDATE_INTERVAL", "300");
    let c = env.submit(
        "pv.sub",
        &job(
            "if-missing runs 2 touch runs sleep 300 touch runs exit 0",
            "periodic_vacate = JobStatus == 2 && NumJobStarts == 1 && \
             time() - JobCurrentStartDate >= 1\nlog = pv.log\nqueue\n",
        ),
    );
    let id = format!("{c}.0");
    let pid = wait_first_run(&env, &id, "runs");
    // From the queue or the history: the second run exits at once, and a
    // loaded machine may see the job only once it has left the queue.
    negotiate_until(&env, "the periodic vacate", || {
        env.attr(&id, "VacateReasonCode").as_deref() == Some("1000")
    });
    wait_dead(&env, "the vacated run", pid);
    let reason = env.attr(&id, "VacateReason").unwrap_or_default();
    assert!(
        reason.contains("PeriodicVacate expression") && reason.ends_with("evaluated to TRUE"),
        "VacateReason {reason:?}"
    );
    negotiate_until(&env, "the second run's completion", || {
        env.history_af(&id, &["JobStatus"]).is_some()
    });
    assert_eq!(
        history(&env, &id, &["JobStatus", "ExitCode", "NumJobStarts"]),
        "4 0 2"
    );
    assert_job_events(&env.path("pv.log"), &id, [0, 1, 4, 1, 5]);
    check_logs_with_htcondor(&[env.path("pv.log")]);
}

#[test]
fn on_exit_remove_false_requeues_the_job_after_each_run() {
    let env = RunEnv::new();
    let c = env.submit(
        "again.sub",
        &job(
            "touch runs exit 0",
            "on_exit_remove = false\nlog = again.log\nqueue\n",
        ),
    );
    let id = format!("{c}.0");
    negotiate_until(&env, "a third start", || {
        env.q_af(&id, &["NumJobStarts"])
            .and_then(|n| n.parse::<i64>().ok())
            .is_some_and(|n| n >= 3)
    });
    assert!(runs(&env, "runs").len() >= 2, "{}", env.diagnosis());
    env.run_ok("tern_rm", [&id]);
    assert_eq!(env.wait_history(&id, TIMEOUT), 3);
    let starts = number(&env, &id, "NumJobStarts") as usize;
    let ran = runs(&env, "runs").len();
    assert!(starts >= 3 && ran <= starts, "{ran} runs, {starts} starts");
    // A tern_rm that lands between a requeue's commit and its 004 writes
    // its 009 first (tern_shadow(1), differences from HTCondor).
    let ends_removed = |e: &[u32]| e.ends_with(&[9]) || e.ends_with(&[9, 4]);
    let events = job_events_when(&env.path("again.log"), &id, ends_removed);
    assert_eq!(events.first(), Some(&0), "{events:?}");
    assert!(ends_removed(&events), "{events:?}");
    assert!(
        events.iter().filter(|&&e| e == 1).count() >= 3,
        "an execute event per start: {events:?}"
    );
    check_logs_with_htcondor(&[env.path("again.log")]);
}

#[test]
fn an_on_exit_remove_expression_completes_the_job_on_its_third_run() {
    let env = RunEnv::new();
    let c = env.submit(
        "three.sub",
        &job(
            "touch runs exit 0",
            "on_exit_remove = NumJobStarts >= 3\nlog = three.log\nqueue\n",
        ),
    );
    let id = format!("{c}.0");
    negotiate_until(&env, "the job's completion", || {
        env.history_af(&id, &["JobStatus"]).is_some()
    });
    assert_eq!(history(&env, &id, &["JobStatus", "NumJobStarts"]), "4 3");
    assert_eq!(runs(&env, "runs").len(), 3);
    let events = job_events_when(&env.path("three.log"), &id, |e| e.last() == Some(&5));
    assert_eq!(events.iter().filter(|&&e| e == 1).count(), 3, "{events:?}");
    assert_eq!(events.last(), Some(&5), "{events:?}");
    check_logs_with_htcondor(&[env.path("three.log")]);
}

#[test]
fn a_growing_job_reports_its_memory_and_an_image_size_event() {
    let env = RunEnv::new().knob("STARTER_INITIAL_UPDATE_INTERVAL", "1");
    let c = env.submit(
        "grow.sub",
        &job("grow 64 sleep 4 exit 0", "log = grow.log\nqueue\n"),
    );
    let id = format!("{c}.0");
    assert_eq!(env.wait_history(&id, TIMEOUT), 4);
    for attr in ["ImageSize", "ResidentSetSize"] {
        let kib = number(&env, &id, attr);
        assert!(kib >= 60_000.0, "{attr} {kib} KiB for 64 MiB touched");
    }
    let events = job_events_when(&env.path("grow.log"), &id, |e| e.last() == Some(&5));
    assert_eq!(events[..2], [0, 1], "{events:?}");
    assert!(events.contains(&6), "an image size event: {events:?}");
    assert_eq!(events.last(), Some(&5), "{events:?}");
    check_logs_with_htcondor(&[env.path("grow.log")]);
}

/// Submits `text` with no pass, breaks the job with `spoil`, runs a pass,
/// and returns the job's HoldReason once it is held.
fn hold_reason_after(env: &RunEnv, text: &str, spoil: impl FnOnce()) -> String {
    let c = env.submit("bad.sub", text);
    let id = format!("{c}.0");
    spoil();
    negotiate_until(env, "the job's hold", || env.status(&id) == Some(5));
    env.q_af(&id, &["HoldReason"]).unwrap()
}

#[test]
fn a_missing_iwd_holds_the_job_with_a_reason_naming_it() {
    let env = RunEnv::new().knob("NEGOTIATE_ON_SUBMIT", "false");
    std::fs::create_dir(env.path("gone")).unwrap();
    let reason = hold_reason_after(&env, &job("exit 0", "initialdir = gone\nqueue\n"), || {
        std::fs::remove_dir(env.path("gone")).unwrap()
    });
    assert!(reason.contains("gone"), "HoldReason {reason:?}");
}

#[test]
fn a_missing_executable_holds_the_job_with_a_reason_naming_it() {
    let env = RunEnv::new().knob("NEGOTIATE_ON_SUBMIT", "false");
    let prog = env.path("prog");
    std::fs::copy(fake_job(), &prog).unwrap();
    let text = format!(
        "executable = {}\narguments = \"exit 0\"\nqueue\n",
        prog.display()
    );
    let reason = hold_reason_after(&env, &text, || std::fs::remove_file(&prog).unwrap());
    assert!(reason.contains("prog"), "HoldReason {reason:?}");
}

#[test]
fn an_unwritable_output_holds_the_job_with_a_reason_naming_it() {
    let env = RunEnv::new().knob("NEGOTIATE_ON_SUBMIT", "false");
    std::fs::create_dir(env.path("outdir")).unwrap();
    let reason = hold_reason_after(
        &env,
        &job("echo hi", "output = outdir/job.out\nqueue\n"),
        || {
            std::fs::remove_dir_all(env.path("outdir")).unwrap();
        },
    );
    assert!(reason.contains("job.out"), "HoldReason {reason:?}");
}

/// The logs the other tests check one at a time, here all in one log, so
/// that a CI run with the bindings (TERN_REQUIRE_ORACLE) sees every event
/// kind a run writes: 000 001 005 (exit and signal) 006 009 012 013, and
/// 004 010 011 when their tools are built.
#[test]
fn event_logs_of_every_kind_parse_with_htcondor_job_event_log() {
    let env = RunEnv::new().knob("STARTER_INITIAL_UPDATE_INTERVAL", "1");
    let log = "all.log";
    let sub = |args: &str, lines: &str| {
        env.submit(
            "all.sub",
            &job(args, &format!("log = {log}\n{lines}queue\n")),
        )
    };
    let done = sub("grow 20 sleep 3 exit 7", "");
    let signalled = sub("kill-self USR2", "");
    let removed = sub("touch rm.runs sleep 300", "");
    let held = sub(
        "if-missing hold.runs 2 touch hold.runs sleep 300 exit 0",
        "",
    );
    let rm_pid = wait_running(&env, &format!("{removed}.0"), "rm.runs");
    let hold_pid = wait_running(&env, &format!("{held}.0"), "hold.runs");
    env.run_ok("tern_rm", [&format!("{removed}.0")]);
    env.run_ok("tern_hold", [&format!("{held}.0")]);
    wait_dead(&env, "the removed job", rm_pid);
    wait_dead(&env, "the held job", hold_pid);
    wait_event(&env, log, &format!("{held}.0"), 12);
    env.run_ok("tern_release", [&format!("{held}.0")]);
    let mut ids = vec![done, signalled, removed, held];
    if has_tool("tern_suspend") && has_tool("tern_continue") && has_tool("tern_vacate_job") {
        let c = sub("if-missing sv.runs 2 touch sv.runs sleep 300 exit 0", "");
        let id = format!("{c}.0");
        wait_running(&env, &id, "sv.runs");
        env.run_ok("tern_suspend", [&id]);
        wait_event(&env, log, &id, 10);
        env.run_ok("tern_continue", [&id]);
        wait_event(&env, log, &id, 11);
        env.run_ok("tern_vacate_job", [&id]);
        wait_event(&env, log, &id, 4);
        ids.push(c);
    } else {
        eprintln!("tern_suspend, tern_continue or tern_vacate_job missing: no 004/010/011");
    }
    negotiate_until(&env, "every job in the history", || {
        ids.iter()
            .all(|c| env.history_af(&format!("{c}.0"), &["JobStatus"]).is_some())
    });
    // The shadow writes a job's last event just after the end's commit.
    for c in &ids {
        let id = format!("{c}.0");
        let ended = |e: &[u32]| matches!(e.last(), Some(5 | 9));
        let events = job_events_when(&env.path(log), &id, ended);
        assert!(ended(&events), "job {id}: {events:?}");
    }
    let all: Vec<u32> = crate::common::log_events(&env.path(log))
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    for n in [0, 1, 5, 6, 9, 12, 13] {
        assert!(all.contains(&n), "event {n:03} in {all:?}");
    }
    check_logs_with_htcondor(&[env.path(log)]);
}

// The test machinery itself, which needs no pass.

#[test]
fn fake_job_does_what_its_arguments_say() {
    let env = RunEnv::new();
    let out = std::process::Command::new(fake_job())
        .current_dir(env.path(""))
        .args(["echo", "a", "stderr", "b", "touch", "m", "write", "f", "x"])
        .args(["if-missing", "m", "1", "echo", "skipped", "exit", "3"])
        .output()
        .unwrap();
    assert_eq!(
        (out.status.code(), &out.stdout[..], &out.stderr[..]),
        (Some(3), &b"a\n"[..], &b"b\n"[..])
    );
    assert_eq!(runs(&env, "m").len(), 1);
    assert_eq!(std::fs::read_to_string(env.path("f")).unwrap(), "x\n");
}

#[test]
fn a_run_env_kills_the_processes_it_left_behind() {
    let env = RunEnv::new();
    let mut job = std::process::Command::new(fake_job())
        .current_dir(env.path(""))
        .args(["pidfile", "kids", "fork-sleep", "300", "sleep", "300"])
        .spawn()
        .unwrap();
    env.wait_for("the child's pid", TIMEOUT, || pids(&env, "kids").len() == 1);
    let kid = pids(&env, "kids")[0];
    assert!(alive(kid));
    drop(env);
    assert!(job.wait().is_ok());
    assert!(!alive(kid), "the forked child was killed");
}

#[test]
fn the_oracle_check_reads_a_submit_log() {
    let env = RunEnv::new().knob("NEGOTIATE_ON_SUBMIT", "false");
    let c = env.submit("log.sub", &job("exit 0", "log = sub.log\nqueue 2\n"));
    assert_job_events(&env.path("sub.log"), &format!("{c}.1"), [0]);
    check_logs_with_htcondor(&[env.path("sub.log")]);
}

#[test]
fn a_scheduler_universe_job_starts_at_once_with_every_slot_busy() {
    // All four cpus taken by one job; the scheduler universe job needs no
    // slot.
    let env = RunEnv::new();
    let c = env.submit(
        "busy.sub",
        &job(
            "sleep 300",
            "request_cpus = 4\nrequest_memory = 100\nqueue\n",
        ),
    );
    env.wait_for("the 4-cpu job running", TIMEOUT, || {
        env.status(&format!("{c}.0")) == Some(2)
    });
    let s = env.submit("sched.sub", &job("exit 0", "universe = scheduler\nqueue\n"));
    let id = format!("{s}.0");
    negotiate_until(&env, "the scheduler universe job's completion", || {
        env.history_af(&id, &["JobStatus"]).is_some()
    });
    assert_eq!(history(&env, &id, &["JobStatus", "ExitCode"]), "4 0");
    assert_eq!(
        env.status(&format!("{c}.0")),
        Some(2),
        "the busy job runs on"
    );
    env.run_ok("tern_rm", [c.to_string()]);
}

/// JOB_RENICE_INCREMENT, evaluated in each job's ad: a job runs that much
/// nicer than its shadow, clamped to 0-19, read as HTCondor's
/// `LookupInteger` reads it (a real truncated, a boolean 0 or 1); a value
/// that is no number gives 10 (noted in the shadow's log). A scheduler
/// universe job gets SCHED_UNIV_RENICE_INCREMENT instead.
#[test]
fn job_renice_increment_sets_how_nice_each_job_runs() {
    // SAFETY: getpriority has no memory effects.
    let base = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
    let env = RunEnv::new()
        .knob(
            "JOB_RENICE_INCREMENT",
            "ifThenElse(isUndefined(Nicer), 3, Nicer)",
        )
        .knob("SCHED_UNIV_RENICE_INCREMENT", "5");
    let c = env.submit(
        "nice.sub",
        "executable = /usr/bin/nice\noutput = nice.$(Process).out\nqueue\n\
         +Nicer = 30\nqueue\n+Nicer = \"more\"\nqueue\n+Nicer = -5\nqueue\n\
         +Nicer = 2.9\nqueue\n+Nicer = true\nqueue\n\
         universe = scheduler\n+Nicer = 4\nqueue\n",
    );
    let want = [3, 19, 10, 0, 2, 1, 5].map(|inc| (base + inc).min(19));
    for (p, want) in want.iter().enumerate() {
        let id = format!("{c}.{p}");
        assert_eq!(env.wait_history(&id, TIMEOUT), 4, "{}", env.diagnosis());
        let out = std::fs::read_to_string(env.path(&format!("nice.{p}.out"))).unwrap();
        assert_eq!(out.trim(), want.to_string(), "job {id}");
    }
    let log = std::fs::read_to_string(env.spool().join("shadow/ShadowLog")).unwrap_or_default();
    assert!(
        log.contains(&format!(
            "job {c}.2: JOB_RENICE_INCREMENT (ifThenElse(isUndefined(Nicer),3,Nicer)) is \"more\", not a number: the job runs 10 nicer"
        )),
        "{log}"
    );
}

/// A shadow running a stream of short jobs, which leaves the log's restart
/// until its next job runs, still starts the log again soon after it
/// passes its restart length (768 frames), not only when a later write
/// finds it past the closers' length (832 frames): the log's file, which
/// only a restart bounds, never holds more than the restart length and a
/// few commits. (That the restart waits for the job is the queue's unit
/// test, `deferred_upkeep_waits_for_its_call_but_not_past_the_closers_length`.)
#[test]
fn a_shadow_starts_the_log_again_while_a_job_runs() {
    const FRAME: u64 = 24 + 4096;
    let env = RunEnv::new().knob("NUM_CPUS", "1");
    let c = env.submit("many.sub", "executable = /bin/true\nqueue 240\n");
    assert_eq!(env.wait_history(&format!("{c}.239"), TIMEOUT), 4);
    let done = env
        .run_ok("tern_history", ["-af", "ClusterId"])
        .lines()
        .count();
    assert_eq!(done, 240, "{}", env.diagnosis());
    let file = std::fs::metadata(env.spool().join("queue.db-wal"))
        .map(|m| m.len())
        .unwrap_or(0);
    assert!(file > 700 * FRAME, "the log never got long: {file} bytes");
    assert!(
        file <= (768 + 40) * FRAME + 32,
        "the log's file grew to {} frames",
        file / FRAME
    );
}

/// A standard file that is unset, or names /dev/null, is /dev/null in the
/// job, open for reading (0) or writing (1, 2), blocking, and not
/// close-on-exec; with JOB_RENICE_INCREMENT the job starts by fork and
/// exec, and gets the same.
#[test]
fn unset_standard_files_are_dev_null_open_the_right_way() {
    let env = RunEnv::new()
        .knob("NUM_CPUS", "1")
        .knob("JOB_RENICE_INCREMENT", "ifThenElse(ProcId == 1, 5, 0)");
    // The shell's own descriptors (/proc/$$), read from subshells whose
    // output is a pipe; the answers go to descriptor 3.
    let script = "exec 3> fds$(ProcId); for fd in 0 1 2; do echo $fd $(readlink /proc/$$/fd/$fd) \
                  $(sed -n s/^flags://p /proc/$$/fdinfo/$fd) >&3; done";
    let c = env.submit(
        "null.sub",
        &format!(
            "executable = /bin/sh\narguments = \"-c '{script}'\"\n\
             output = /dev/null\nqueue 2\n"
        ),
    );
    for p in 0..2 {
        assert_eq!(env.wait_history(&format!("{c}.{p}"), TIMEOUT), 4);
        let text = std::fs::read_to_string(env.path(&format!("fds{p}"))).unwrap();
        let lines: Vec<Vec<&str>> = text
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(lines.len(), 3, "job {p}: {text}");
        for (fd, l) in lines.iter().enumerate() {
            assert_eq!(
                l[..2],
                [fd.to_string().as_str(), "/dev/null"],
                "job {p}: {text}"
            );
            let flags = u32::from_str_radix(l[2], 8).unwrap();
            let mode = flags & libc::O_ACCMODE as u32;
            let want = if fd == 0 {
                libc::O_RDONLY
            } else {
                libc::O_WRONLY
            } as u32;
            assert_eq!(mode, want, "job {p} fd {fd}: {text}");
            assert_eq!(
                flags & libc::O_NONBLOCK as u32,
                0,
                "job {p} fd {fd}: {text}"
            );
            assert_eq!(flags & libc::O_CLOEXEC as u32, 0, "job {p} fd {fd}: {text}");
        }
    }
}
