//! Daemon ClassAd hooks (STARTD_CRON, SCHEDD_CRON): fake hook programs
//! whose output the slot ads and the scheduler ad show, run by
//! `tern_cron` beside the negotiation pass.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::common::{RunEnv, TIMEOUT};

/// An executable sh script `name` in the test directory.
fn hook(env: &RunEnv, name: &str, body: &str) -> PathBuf {
    let p = env.write(name, &format!("#!/bin/sh\n{body}\n"));
    let mut perm = std::fs::metadata(&p).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&p, perm).unwrap();
    p
}

/// An environment with the startd cron job `job` running `prog`, and the
/// extra knobs `STARTD_CRON_<job>_<k> = v`.
fn startd(env: RunEnv, job: &str, prog: &std::path::Path, knobs: &[(&str, &str)]) -> RunEnv {
    let mut env = env.knob("STARTD_CRON_JOBLIST", job).knob(
        &format!("STARTD_CRON_{job}_EXECUTABLE"),
        prog.to_str().unwrap(),
    );
    for (k, v) in knobs {
        env = env.knob(&format!("STARTD_CRON_{job}_{k}"), v);
    }
    env
}

/// The queue must exist for passes to do anything: one job that needs a
/// slot attribute no slot has, so it stays idle.
fn make_queue(env: &RunEnv) {
    env.submit(
        "idle.sub",
        "executable = /bin/true\nrequirements = NoSuchAttribute == 1\nqueue\n",
    );
}

fn status_af(env: &RunEnv, args: &[&str]) -> String {
    env.run_ok("tern_status", [&["-af"], args].concat())
}

/// Runs passes until `tern_status -af ATTR` (slot ads) has a line equal to
/// `want`.
fn wait_slot_attr(env: &RunEnv, attr: &str, want: &str) {
    env.wait_for(&format!("a slot with {attr} = {want}"), TIMEOUT, || {
        env.negotiate();
        status_af(env, &[attr]).lines().any(|l| l == want)
    });
}

fn cron_log(env: &RunEnv) -> String {
    std::fs::read_to_string(env.spool().join("hooks/cron.log")).unwrap_or_default()
}

#[test]
fn cli_hooks_cron_a_job_needing_a_hook_attribute_starts_only_after_the_hook_ran() {
    let env = RunEnv::new();
    let gate = env.path("gate");
    let prog = hook(
        &env,
        "gpu.sh",
        &format!(
            "while [ ! -e {} ]; do sleep 0.05; done\necho 'HasLicence = true'",
            gate.display()
        ),
    );
    let env = startd(env, "lic", &prog, &[("PERIOD", "1h")]);
    env.submit(
        "a.sub",
        "executable = /bin/true\nrequirements = HasLicence =?= true\nqueue\n",
    );
    env.negotiate();
    // The hook waits for the gate: no pass can match the job yet.
    assert_eq!(env.status("1.0"), Some(1), "{}", env.diagnosis());
    assert!(
        env.run_ok("tern_q", ["-better-analyze", "1.0"])
            .contains("HasLicence"),
        "the analysis names the missing attribute"
    );
    std::fs::write(&gate, "").unwrap();
    // The runner asks for a pass when the hook's output arrives: no
    // further tern_negotiate is needed for the job to run.
    env.wait_for("job 1.0 to run and leave the queue", TIMEOUT, || {
        env.history_af("1.0", &["JobStatus"]).as_deref() == Some("4")
    });
    assert!(status_af(&env, &["HasLicence"]).contains("true"));
}

#[test]
fn cli_hooks_cron_tags_publish_into_two_slots() {
    let env = RunEnv::new().knob("NUM_SLOTS", "2");
    let prog = hook(
        &env,
        "temp.sh",
        "printf 'SlotId = 1\\nTemp = 40\\n- one\\nSlotId = 2\\nTemp = 50\\n- two\\n'",
    );
    let env = startd(env, "temp", &prog, &[("PERIOD", "1h")]);
    make_queue(&env);
    wait_slot_attr(&env, "Temp", "50");
    let mut got = status_af(&env, &["Name", "Temp"]);
    got = got.replace(&hostname_of(&env), "HOST");
    assert_eq!(got, "slot1@HOST 40\nslot2@HOST 50\n");
}

fn hostname_of(env: &RunEnv) -> String {
    let n = status_af(env, &["Machine"]);
    n.lines().next().unwrap_or("").to_string()
}

#[test]
fn cli_hooks_cron_prefix_and_last_update() {
    let env = RunEnv::new();
    let prog = hook(&env, "disk.sh", "echo 'Free = 12'");
    let env = startd(
        env,
        "disk",
        &prog,
        &[("PERIOD", "1h"), ("PREFIX", "Scratch_")],
    );
    make_queue(&env);
    wait_slot_attr(&env, "Scratch_Free", "12");
    let when: i64 = status_af(&env, &["Scratch_LastUpdate"])
        .lines()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!((now - 120..=now + 1).contains(&when), "{when} vs {now}");
    assert_eq!(status_af(&env, &["Free"]).trim(), "undefined");
    let st = status_af(&env, &["StartdCron_disk_Status"]);
    assert_eq!(st.trim(), "ok");
}

#[test]
fn cli_hooks_cron_attributes_vanish_when_the_hook_stops_reporting_them() {
    let env = RunEnv::new();
    let said = env.write("said", "A = 1\nB = 2\n");
    let prog = hook(&env, "say.sh", &format!("cat {}", said.display()));
    let env = startd(env, "say", &prog, &[("PERIOD", "1")]);
    make_queue(&env);
    wait_slot_attr(&env, "B", "2");
    std::fs::write(&said, "A = 3\n").unwrap();
    wait_slot_attr(&env, "A", "3");
    assert_eq!(status_af(&env, &["B"]).trim(), "undefined");
}

#[test]
fn cli_hooks_cron_failures_are_shown_and_logged() {
    let env = RunEnv::new();
    let bad = hook(
        &env,
        "bad.sh",
        "echo 'Good = 1'\necho 'this is no attribute'",
    );
    let nonzero = hook(
        &env,
        "nz.sh",
        "echo 'Half = 1'\necho 'disk on fire' >&2\nexit 3",
    );
    let hang = hook(&env, "hang.sh", "echo 'Never = 1'\nexec sleep 60");
    let killed = hook(&env, "killed.sh", "kill -9 $$");
    let env = env
        .knob("STARTD_CRON_JOBLIST", "bad nz hang killed")
        .knob("STARTD_CRON_LOG_NON_ZERO_EXIT", "true");
    let mut env = env;
    for (j, p) in [
        ("bad", &bad),
        ("nz", &nonzero),
        ("hang", &hang),
        ("killed", &killed),
    ] {
        env = env
            .knob(&format!("STARTD_CRON_{j}_EXECUTABLE"), p.to_str().unwrap())
            .knob(&format!("STARTD_CRON_{j}_PERIOD"), "1h")
            .knob(&format!("STARTD_CRON_{j}_TIMEOUT"), "1");
    }
    make_queue(&env);
    let status = |j: &str| {
        status_af(&env, &[&format!("StartdCron_{j}_Status")])
            .lines()
            .next()
            .unwrap_or("")
            .to_string()
    };
    env.wait_for("every hook to have ended", TIMEOUT, || {
        env.negotiate();
        ["bad", "nz", "hang", "killed"]
            .iter()
            .all(|j| !matches!(status(j).as_str(), "" | "running" | "undefined"))
    });
    assert_eq!(
        status("bad"),
        "ok; 1 bad output line(s) skipped (see hooks/cron.log)"
    );
    assert!(
        status("nz").ends_with("exited with status 3 (stderr: disk on fire)"),
        "{}",
        status("nz")
    );
    assert!(
        status("hang").ends_with("timed out after 1 s and was killed"),
        "{}",
        status("hang")
    );
    assert!(
        status("killed").ends_with("was killed by signal 9"),
        "{}",
        status("killed")
    );
    // A bad line is skipped, the rest published; a non-zero exit's output
    // is still published, as HTCondor does; a run cut short publishes
    // only finished blocks.
    assert_eq!(
        status_af(&env, &["Good", "Half", "Never"]).lines().next(),
        Some("1 1 undefined")
    );
    let log = cron_log(&env);
    assert!(
        log.contains(
            "STARTD_CRON job bad: bad output line 2: not 'Attr = value': this is no attribute"
        ),
        "{log}"
    );
    assert!(log.contains("stderr:\ndisk on fire"), "{log}");
}

#[test]
fn cli_hooks_cron_a_hanging_hook_does_not_stall_passes() {
    let env = RunEnv::new();
    let prog = hook(&env, "hang.sh", "exec sleep 60");
    let env = startd(env, "hang", &prog, &[("PERIOD", "1"), ("TIMEOUT", "50")]);
    make_queue(&env);
    env.negotiate();
    env.wait_for("the hook to be running", TIMEOUT, || {
        status_af(&env, &["StartdCron_hang_Status"]).contains("running")
    });
    let t = Instant::now();
    for _ in 0..3 {
        env.negotiate();
    }
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}

#[test]
fn cli_hooks_cron_periodic_kill_restarts_a_hook_still_running() {
    let env = RunEnv::new();
    let prog = hook(&env, "slow.sh", "exec sleep 60");
    let env = startd(env, "slow", &prog, &[("PERIOD", "1"), ("KILL", "true")]);
    make_queue(&env);
    wait_slot_attr(
        &env,
        "StartdCron_slow_Status",
        "killed: still running when due again (KILL is true)",
    );
}

#[test]
fn cli_hooks_cron_oneshot_runs_once_per_configuration_and_on_reconfig() {
    let env = RunEnv::new();
    let count = env.path("count");
    let prog = hook(
        &env,
        "once.sh",
        &format!(
            "echo x >> {}\necho \"Runs = $(wc -l < {})\"",
            count.display(),
            count.display()
        ),
    );
    let env = startd(
        env,
        "once",
        &prog,
        &[("MODE", "OneShot"), ("RECONFIG_RERUN", "true")],
    );
    make_queue(&env);
    wait_slot_attr(&env, "Runs", "1");
    for _ in 0..3 {
        env.negotiate();
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(std::fs::read_to_string(&count).unwrap(), "x\n");
    env.run_ok("tern_negotiate", ["-wait", "-reconfig"]);
    wait_slot_attr(&env, "Runs", "2");
}

#[test]
fn cli_hooks_cron_waitforexit_publishes_each_block_as_it_arrives() {
    let env = RunEnv::new();
    let gate = env.path("gate");
    let prog = hook(
        &env,
        "stream.sh",
        &format!(
            "echo 'Step = 1'\necho -\nwhile [ ! -e {} ]; do sleep 0.05; done\necho 'Step = 2'",
            gate.display()
        ),
    );
    let env = startd(
        env,
        "stream",
        &prog,
        &[("MODE", "WaitForExit"), ("PERIOD", "1h")],
    );
    make_queue(&env);
    wait_slot_attr(&env, "Step", "1");
    assert!(status_af(&env, &["StartdCron_stream_Status"]).contains("running"));
    std::fs::write(&gate, "").unwrap();
    wait_slot_attr(&env, "Step", "2");
}

#[test]
fn cli_hooks_cron_bad_knobs_are_named() {
    let env = RunEnv::new();
    let prog = hook(&env, "x.sh", "echo 'X = 1'");
    let env = startd(env, "od", &prog, &[("MODE", "OnDemand"), ("PERIOD", "1")]);
    make_queue(&env);
    env.wait_for("the error in the slot ad", TIMEOUT, || {
        env.negotiate();
        status_af(&env, &["StartdCron_od_Status"])
            .contains("STARTD_CRON_od_MODE = OnDemand: OnDemand is for BENCHMARKS jobs only")
    });
    let r = env.run("tern_negotiate", ["-wait", "-verbose"]);
    assert!(
        r.stdout.contains("STARTD_CRON_od_MODE") || r.stderr.contains("STARTD_CRON_od_MODE"),
        "{r:?}"
    );
}

#[test]
fn cli_hooks_cron_schedd_cron_shows_in_tern_status_schedd() {
    let env = RunEnv::new();
    let prog = hook(&env, "lic.sh", "echo 'SiteLicenses = 7'");
    let env = env
        .knob("SCHEDD_CRON_JOBLIST", "lic")
        .knob("SCHEDD_CRON_lic_EXECUTABLE", prog.to_str().unwrap())
        .knob("SCHEDD_CRON_lic_PERIOD", "1h")
        .knob("SCHEDD_NAME", "sched@here")
        .knob("FULL_HOSTNAME", "here");
    make_queue(&env);
    env.wait_for("the scheduler ad to show the hook", TIMEOUT, || {
        env.negotiate();
        env.run_ok("tern_status", ["-schedd", "-af", "SiteLicenses"]) == "7\n"
    });
    let long = env.run_ok("tern_status", ["-schedd", "-long"]);
    assert!(long.contains("MyType = \"Scheduler\"\n"), "{long}");
    assert!(long.contains("ScheddCron_lic_Status = \"ok\"\n"), "{long}");
    assert_eq!(
        env.run_ok("tern_status", ["-schedd"]),
        "Name       Machine RunningJobs   IdleJobs   HeldJobs\n\
         \n\
         sched@here here              0          1          0\n\
         \n                TotalRunningJobs      TotalIdleJobs      TotalHeldJobs\n\
         \n\
         \x20             \n\
         \x20        Total                 0                  1                  0\n"
    );
}

#[test]
fn cli_hooks_cron_a_hook_gets_its_name_as_argv0_its_args_env_and_cwd() {
    let env = RunEnv::new();
    let dir = env.path("work");
    std::fs::create_dir_all(&dir).unwrap();
    // sh runs the script with the job's argv[0] left in /proc/$$/cmdline
    // (a #! script would lose it to the interpreter).
    let script = env.write(
        "inside.sh",
        "echo \"Argv0 = \\\"$(tr '\\000' '\\n' < /proc/$$/cmdline | head -1)\\\"\"\n\
         echo \"Arg = \\\"$1\\\"\"\n\
         echo \"Foo = \\\"$FOO\\\"\"\n\
         echo \"Dir = \\\"$(pwd)\\\"\"\n\
         echo \"ConfigVal = \\\"$STARTD_CRON_CONFIG_VAL\\\"\"\n",
    );
    let args = format!("{} two", script.display());
    let env = startd(
        env,
        "probe",
        std::path::Path::new("/bin/sh"),
        &[
            ("PERIOD", "1h"),
            ("ARGS", &args),
            ("ENV", "FOO=bar"),
            ("CWD", dir.to_str().unwrap()),
        ],
    )
    .knob("STARTD_CRON_CONFIG_VAL", "/opt/x/tern_config_val");
    make_queue(&env);
    wait_slot_attr(&env, "Arg", "two");
    let got = status_af(&env, &["Argv0", "Foo", "Dir", "ConfigVal"]);
    assert_eq!(
        got.lines().next().unwrap(),
        format!("probe bar {} /opt/x/tern_config_val", dir.display())
    );
}

#[test]
fn cli_hooks_cron_a_killed_runner_leaves_nothing_stuck() {
    let env = RunEnv::new();
    let starts = env.path("starts");
    let prog = hook(
        &env,
        "stream.sh",
        &format!(
            "echo x >> {s}\necho \"Gen = $(wc -l < {s})\"\necho \"HookPid = $$\"\necho -\nexec sleep 60",
            s = starts.display()
        ),
    );
    let env = startd(
        env,
        "stream",
        &prog,
        &[("MODE", "WaitForExit"), ("PERIOD", "1h")],
    );
    make_queue(&env);
    wait_slot_attr(&env, "Gen", "1");
    let first: i32 = status_af(&env, &["HookPid"]).trim().parse().unwrap();
    // Two passes close together may each start a runner; the one that
    // finds the lock taken leaves at once.
    env.wait_for("one runner", TIMEOUT, || runners(&env).len() == 1);
    let runners = runners(&env);
    assert_eq!(runners.len(), 1, "one runner: {runners:?}");
    unsafe {
        libc::kill(runners[0], libc::SIGKILL);
    }
    // The next pass starts a runner, which kills the instance nobody reads
    // and starts the job again.
    wait_slot_attr(&env, "Gen", "2");
    env.wait_for("the first instance to be gone", TIMEOUT, || {
        !crate::common::alive(first)
    });
}

#[test]
fn cli_hooks_cron_a_job_taken_off_the_list_takes_its_attributes_along() {
    let env = RunEnv::new();
    let prog = hook(&env, "say.sh", "echo 'Said = 1'");
    let env = startd(env, "say", &prog, &[("PERIOD", "1h")]);
    make_queue(&env);
    wait_slot_attr(&env, "Said", "1");
    let env = env.knob("STARTD_CRON_JOBLIST", "");
    wait_slot_attr(&env, "Said", "undefined");
    assert_eq!(
        status_af(&env, &["StartdCron_say_Status"]).trim(),
        "undefined"
    );
}

#[test]
fn cli_hooks_cron_a_false_condition_keeps_the_job_from_running() {
    let env = RunEnv::new();
    let ran = env.path("ran");
    let prog = hook(
        &env,
        "c.sh",
        &format!("touch {}\necho 'C = 1'", ran.display()),
    );
    let env = startd(
        env,
        "c",
        &prog,
        &[("PERIOD", "1h"), ("CONDITION", "TotalCpus > 100")],
    );
    make_queue(&env);
    wait_slot_attr(
        &env,
        "StartdCron_c_Status",
        "not run: its CONDITION is not true",
    );
    assert!(!ran.exists());
}

#[test]
fn cli_hooks_cron_jobs_start_only_within_the_max_job_load() {
    let env = RunEnv::new();
    let trace = env.path("trace");
    let prog = |n: &str| {
        hook(
            &env,
            &format!("{n}.sh"),
            &format!(
                "echo start >> {t}\nsleep 0.5\necho end >> {t}\necho 'Done_{n} = true'",
                t = trace.display()
            ),
        )
    };
    let (one, two) = (prog("one"), prog("two"));
    let env = env
        .knob("STARTD_CRON_JOBLIST", "one two")
        .knob("STARTD_CRON_MAX_JOB_LOAD", "1")
        .knob("STARTD_CRON_one_EXECUTABLE", one.to_str().unwrap())
        .knob("STARTD_CRON_one_PERIOD", "1h")
        .knob("STARTD_CRON_one_JOB_LOAD", "1")
        .knob("STARTD_CRON_two_EXECUTABLE", two.to_str().unwrap())
        .knob("STARTD_CRON_two_PERIOD", "1h")
        .knob("STARTD_CRON_two_JOB_LOAD", "1");
    make_queue(&env);
    wait_slot_attr(&env, "Done_one && Done_two", "true");
    let t = std::fs::read_to_string(&trace).unwrap();
    // One at a time: the second starts after the first ended.
    assert_eq!(t, "start\nend\nstart\nend\n");
}

#[test]
fn cli_hooks_cron_reconfig_sends_sighup_to_a_running_job_with_reconfig() {
    let env = RunEnv::new();
    let prog = hook(
        &env,
        "hup.sh",
        "trap 'echo \"Hupped = true\"; echo -' HUP\necho 'Up = true'\necho -\nwhile :; do sleep 0.1; done",
    );
    let env = startd(
        env,
        "hup",
        &prog,
        &[
            ("MODE", "WaitForExit"),
            ("PERIOD", "1h"),
            ("RECONFIG", "true"),
        ],
    );
    make_queue(&env);
    wait_slot_attr(&env, "Up", "true");
    env.run_ok("tern_negotiate", ["-wait", "-reconfig"]);
    wait_slot_attr(&env, "Hupped", "true");
}

fn runners(env: &RunEnv) -> Vec<i32> {
    env.leftovers()
        .into_iter()
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("tern_cron"))
        })
        .collect()
}

#[test]
fn cli_hooks_cron_short_periods_are_kept_by_the_runner_without_passes() {
    let env = RunEnv::new();
    let count = env.path("count");
    let prog = hook(&env, "tick.sh", &format!("echo x >> {}", count.display()));
    let env = startd(env, "tick", &prog, &[("PERIOD", "1s")]);
    make_queue(&env);
    env.negotiate();
    // No pass from here on: the runner stays while the job is due within
    // a minute, and runs it every second.
    env.wait_for("three runs", TIMEOUT, || {
        std::fs::read_to_string(&count).is_ok_and(|t| t.lines().count() >= 3)
    });
    assert_eq!(runners(&env).len(), 1);
}

#[test]
fn cli_hooks_cron_the_runner_leaves_when_nothing_is_due_within_a_minute() {
    let env = RunEnv::new();
    let prog = hook(&env, "once.sh", "echo 'Hourly = 1'");
    let env = startd(env, "hourly", &prog, &[("PERIOD", "1h")]);
    make_queue(&env);
    wait_slot_attr(&env, "Hourly", "1");
    env.wait_for("the runner to exit", TIMEOUT, || runners(&env).is_empty());
}

#[test]
fn cli_hooks_cron_a_bad_shared_knob_shows_on_every_listed_job() {
    let env = RunEnv::new();
    let prog = hook(&env, "x.sh", "echo 'X = 1'");
    let env = startd(env, "x", &prog, &[("PERIOD", "1")]).knob("STARTD_CRON_AUTOPUBLISH", "Always");
    make_queue(&env);
    env.wait_for("the error in the slot ad", TIMEOUT, || {
        env.negotiate();
        status_af(&env, &["StartdCron_x_Status"])
            .contains("STARTD_CRON_AUTOPUBLISH = Always: tern has no collector")
    });
    assert_eq!(status_af(&env, &["X"]).lines().next(), Some("undefined"));
}
