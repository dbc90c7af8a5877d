//! The starter job hooks (tern_hooks(7), STARTER JOB HOOKS) with real
//! jobs: small sh scripts as hooks, run by the shadow around the job.
//! PREPARE_JOB changes the job and decides by its status; each failure
//! mode holds or requeues as the spec's table says; UPDATE_JOB_INFO runs
//! with each update; JOB_EXIT gets how the job ended; and around a job
//! with file transfer the hooks run in HTCondor's order.

use crate::common::{
    RunEnv, TIMEOUT, assert_job_events, check_logs_with_htcondor, job_events_when,
};

/// Writes `name` as an executable sh script in the test directory; its
/// path.
fn script(env: &RunEnv, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let p = env.write(name, &format!("#!/bin/sh\n{body}\n"));
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p.display().to_string()
}

/// A RunEnv whose keyword TEST has `hooks` (`(HOOK, body)`), each written
/// as `<hook>.sh`, with `knobs` set too.
fn hooked(hooks: &[(&str, &str)], knobs: &[(&str, &str)]) -> RunEnv {
    let mut env = RunEnv::new();
    for (hook, body) in hooks {
        let p = script(&env, &format!("{}.sh", hook.to_lowercase()), body);
        env = env.knob(&format!("TEST_HOOK_{hook}"), &p);
    }
    for (k, v) in knobs {
        env = env.knob(k, v);
    }
    env
}

/// Submits one job running `body` with HookKeyword TEST and the event log
/// t.log (plus `extra` submit lines); its id.
fn submit(env: &RunEnv, body: &str, extra: &str) -> String {
    script(env, "job.sh", body);
    let c = env.submit(
        "t.sub",
        &format!(
            "executable = job.sh\noutput = job.out\nerror = job.err\nlog = t.log\n\
             +HookKeyword = \"TEST\"\n{extra}queue\n"
        ),
    );
    format!("{c}.0")
}

#[track_caller]
fn wait_status(env: &RunEnv, job: &str, status: i64) {
    env.wait_for(&format!("job {job} in status {status}"), TIMEOUT, || {
        env.status(job) == Some(status)
    });
}

/// A held job's hold reason, code and subcode.
#[track_caller]
fn held(env: &RunEnv, job: &str) -> (String, i64, i64) {
    wait_status(env, job, 5);
    let reason = env.attr(job, "HoldReason").unwrap();
    let code = env.attr(job, "HoldReasonCode").unwrap().parse().unwrap();
    let sub = env.attr(job, "HoldReasonSubCode").unwrap().parse().unwrap();
    (reason, code, sub)
}

/// Job `job`'s attribute, `None` when it is not set.
#[track_caller]
fn attr(env: &RunEnv, job: &str, name: &str) -> Option<String> {
    env.attr(job, name).filter(|v| v != "undefined")
}

fn read(env: &RunEnv, name: &str) -> String {
    std::fs::read_to_string(env.path(name)).unwrap_or_default()
}

#[test]
fn prepare_job_changes_what_runs_and_sees_the_job() {
    let env = hooked(
        &[(
            "PREPARE_JOB",
            "cat > \"$_CONDOR_SCRATCH_DIR/../../../seen.ad\"\n\
             echo \"args=$* pwd=$(pwd) scratch=$_CONDOR_SCRATCH_DIR ad=$_CONDOR_JOB_AD\" > \"$_CONDOR_SCRATCH_DIR/../../../env.txt\"\n\
             echo \"Cmd = \\\"$_CONDOR_SCRATCH_DIR/../../../other.sh\\\"\"\n\
             echo 'FromHook = 7'\necho 'HookStatusMessage = \"prepared\"'",
        )],
        &[("TEST_HOOK_PREPARE_JOB_ARGS", "one 'two three'")],
    );
    script(&env, "other.sh", "echo \"other ran with FromHook\"");
    let id = submit(&env, "echo original ran", "");
    assert_eq!(env.wait_history(&id, TIMEOUT), 4, "{}", env.diagnosis());
    assert_eq!(read(&env, "job.out"), "other ran with FromHook\n");
    assert!(read(&env, "seen.ad").contains("HookKeyword = \"TEST\""));
    let said = read(&env, "env.txt");
    let scratch = env.path("spool/execute/dir_").display().to_string();
    assert!(said.starts_with("args=one two three pwd="), "{said}");
    assert!(said.contains(&format!("pwd={scratch}")), "{said}");
    assert!(said.contains("/.job.ad"), "{said}");
    // The change is in the queue (and so in the history).
    assert_eq!(env.attr(&id, "FromHook").as_deref(), Some("7"));
    assert!(env.attr(&id, "Cmd").unwrap().ends_with("other.sh"));
    // A message with status 0 is echoed, not an error.
    assert_job_events(&env.path("t.log"), &id, [0, 21, 1, 5]);
    let log = read(&env, "t.log");
    assert!(
        log.contains("Message from starter on slot")
            && log.contains(
                "PREPARE_JOB (prepare_job.sh) succeeded (exited with status 0): prepared"
            ),
        "{log}"
    );
    check_logs_with_htcondor(&[env.path("t.log")]);
}

#[test]
fn prepare_job_exit_1_to_299_holds_with_code_19_and_its_stderr() {
    let env = hooked(
        &[(
            "PREPARE_JOB",
            "cat >/dev/null; echo 'no scratch space' >&2; exit 3",
        )],
        &[],
    );
    let id = submit(&env, "echo ran > ran.txt", "");
    let (reason, code, sub) = held(&env, &id);
    assert_eq!((code, sub), (19, 3));
    assert!(reason.starts_with("Error from slot"), "{reason}");
    assert!(
        reason.ends_with(
            "PREPARE_JOB (prepare_job.sh) failed (exited with status 3): no scratch space"
        ),
        "{reason}"
    );
    assert!(!env.path("ran.txt").exists(), "the job never ran");
    assert_eq!(env.attr(&id, "NumJobStarts").as_deref(), Some("0"));
    assert_job_events(&env.path("t.log"), &id, [0, 21, 12]);
    let log = read(&env, "t.log");
    assert!(log.contains("Error from starter on slot"), "{log}");
    assert!(log.contains("\tCode 19 Subcode 3"), "{log}");
    check_logs_with_htcondor(&[env.path("t.log")]);
}

#[test]
fn hook_status_code_overrides_the_exit_code_and_its_message_is_the_reason() {
    let env = hooked(
        &[(
            "PREPARE_JOB",
            "echo 'HookStatusCode = 42'\necho 'HookStatusMessage = \"licence server down\"'\nexit 0",
        )],
        &[],
    );
    let id = submit(&env, "true", "");
    let (reason, code, sub) = held(&env, &id);
    assert_eq!((code, sub), (19, 42));
    assert!(
        reason.ends_with("failed (reported status 042): licence server down"),
        "{reason}"
    );
    // And the other way: a failing exit code with HookStatusCode 0 runs.
    let env = hooked(&[("PREPARE_JOB", "echo 'HookStatusCode = 0'\nexit 7")], &[]);
    let id = submit(&env, "echo ran", "");
    assert_eq!(env.wait_history(&id, TIMEOUT), 4, "{}", env.diagnosis());
    assert_eq!(read(&env, "job.out"), "ran\n");
}

#[test]
fn a_status_of_300_or_more_requeues_the_job() {
    let env = hooked(
        &[(
            "PREPARE_JOB",
            "echo 'HookStatusCode = 310'\necho 'HookStatusMessage = \"try later\"'",
        )],
        &[
            ("NEGOTIATE_ON_EXIT", "false"),
            ("NEGOTIATE_ON_SUBMIT", "false"),
        ],
    );
    let id = submit(&env, "echo ran > ran.txt", "");
    env.negotiate();
    env.wait_for("the requeue", TIMEOUT, || {
        env.attr(&id, "VacateReasonSubCode").as_deref() == Some("310")
    });
    wait_status(&env, &id, 1);
    let reason = env.attr(&id, "VacateReason").unwrap();
    assert!(
        reason.ends_with("failed (reported status 310): try later"),
        "{reason}"
    );
    assert_eq!(env.attr(&id, "VacateReasonCode").as_deref(), Some("1007"));
    assert_eq!(env.attr(&id, "NumShadowExceptions").as_deref(), Some("1"));
    assert!(!env.path("ran.txt").exists());
    assert_job_events(&env.path("t.log"), &id, [0, 21]);
}

#[test]
fn bad_output_holds_and_names_the_line() {
    let env = hooked(
        &[(
            "PREPARE_JOB",
            "echo 'Good = 1'\necho 'this is not an attribute'",
        )],
        &[],
    );
    let id = submit(&env, "true", "");
    let (reason, code, sub) = held(&env, &id);
    assert_eq!((code, sub), (19, 0));
    assert!(
        reason.contains("failed (printed output that is not attributes): output line 2:"),
        "{reason}"
    );
    assert_eq!(
        attr(&env, &id, "Good"),
        None,
        "nothing of a bad output is merged"
    );
}

#[test]
fn a_prepare_hook_that_hangs_is_killed_at_its_timeout_and_holds() {
    let env = hooked(
        &[("PREPARE_JOB", "echo 'waiting' >&2; sleep 60")],
        &[("TEST_HOOK_PREPARE_JOB_TIMEOUT", "1")],
    );
    let id = submit(&env, "true", "");
    let (reason, code, sub) = held(&env, &id);
    assert_eq!((code, sub), (19, 0));
    assert!(
        reason.ends_with("failed (timed out after 1 s and was killed): waiting"),
        "{reason}"
    );
    assert!(env.leftovers().iter().all(|&p| {
        !std::fs::read(format!("/proc/{p}/cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains("sleep"))
    }));
}

#[test]
fn a_prepare_hook_killed_by_a_signal_requeues() {
    let env = hooked(
        &[("PREPARE_JOB", "echo 'HookStatusCode = 0'; kill -9 $$")],
        &[
            ("NEGOTIATE_ON_EXIT", "false"),
            ("NEGOTIATE_ON_SUBMIT", "false"),
        ],
    );
    let id = submit(&env, "true", "");
    env.negotiate();
    env.wait_for("the requeue", TIMEOUT, || {
        env.attr(&id, "VacateReasonSubCode").as_deref() == Some("-9")
    });
    let reason = env.attr(&id, "VacateReason").unwrap();
    assert!(
        reason.contains("failed (was killed by signal 9)"),
        "{reason}"
    );
}

#[test]
fn a_missing_or_unsafe_prepare_hook_holds() {
    let env = RunEnv::new().knob("TEST_HOOK_PREPARE_JOB", "/no/such/hook");
    let id = submit(&env, "true", "");
    let (reason, code, _) = held(&env, &id);
    assert_eq!(code, 19);
    assert!(
        reason.contains(
            "failed to execute PREPARE_JOB (/no/such/hook): TEST_HOOK_PREPARE_JOB: \
             cannot run /no/such/hook: No such file or directory"
        ),
        "{reason}"
    );
    let env = RunEnv::new();
    let p = script(&env, "prep.sh", "true");
    let env = env.knob("TEST_HOOK_PREPARE_JOB", &p);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o777)).unwrap();
    let id = submit(&env, "true", "");
    let (reason, code, _) = held(&env, &id);
    assert_eq!(code, 19);
    assert!(reason.contains("is writable by everyone"), "{reason}");
}

/// sh that waits (at most a minute) for `file` to exist.
fn wait_for_file(file: &str) -> String {
    format!("i=0; while [ ! -e {file} ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done")
}

#[test]
fn update_job_info_runs_with_each_update_and_its_failure_is_noted() {
    let env = hooked(
        &[(
            "UPDATE_JOB_INFO",
            "grep -E '^(JobState|JobPid|NumPids|RemoteUserCpu|JobStartDate) ' | tr '\\n' ' ' >> \"$_CONDOR_SCRATCH_DIR/../../../updates.txt\"\n\
             echo >> \"$_CONDOR_SCRATCH_DIR/../../../updates.txt\"\n\
             [ $(wc -l < \"$_CONDOR_SCRATCH_DIR/../../../updates.txt\") -ge 2 ] && touch \"$_CONDOR_SCRATCH_DIR/../../../two\"\n\
             echo 'update broke' >&2\nexit 2",
        )],
        &[
            ("STARTER_INITIAL_UPDATE_INTERVAL", "1"),
            ("STARTER_UPDATE_INTERVAL", "1"),
        ],
    );
    // The job lasts until the second update has run, however slow the
    // machine is.
    let id = submit(&env, &wait_for_file("two"), "");
    env.wait_for(
        "tern_q -better-analyze to name the failure",
        TIMEOUT,
        || {
            let r = env.run("tern_q", ["-better-analyze", id.as_str()]);
            r.stdout.contains("Last starter hook failure (")
                && r.stdout
                    .contains("UPDATE_JOB_INFO (update_job_info.sh) failed")
        },
    );
    assert_eq!(env.wait_history(&id, TIMEOUT), 4, "{}", env.diagnosis());
    let updates = read(&env, "updates.txt");
    let lines: Vec<&str> = updates.lines().collect();
    assert!(lines.len() >= 2, "{updates}");
    for l in &lines {
        assert!(l.contains("JobState = \"Running\""), "{l}");
        assert!(
            l.contains("NumPids = ") && l.contains("RemoteUserCpu = "),
            "{l}"
        );
        assert!(!l.contains("JobStartDate = 0"), "{l}");
    }
    let failure = env.attr(&id, "StarterHookFailure").unwrap();
    assert!(
        failure.contains(
            "UPDATE_JOB_INFO (update_job_info.sh) failed (exited with status 2): update broke"
        ),
        "{failure}"
    );
    let done = |e: &[u32]| e.iter().filter(|&&n| n == 21).count() >= 2 && e.last() == Some(&5);
    let events = job_events_when(&env.path("t.log"), &id, done);
    assert!(done(&events), "{events:?}");
    check_logs_with_htcondor(&[env.path("t.log")]);
}

/// A JOB_EXIT that records its argument and the exit attributes it read.
const RECORD_EXIT: &str = "{ echo \"how=$1\"; grep -E '^(ExitCode|ExitBySignal|ExitSignal|JobDuration|JobPid) '; } \
                           >> \"$_CONDOR_SCRATCH_DIR/../../../exit.txt\"";

#[test]
fn job_exit_is_told_the_job_exited_with_its_exit_attributes() {
    let env = hooked(&[("JOB_EXIT", RECORD_EXIT)], &[]);
    let id = submit(&env, "exit 3", "");
    assert_eq!(env.wait_history(&id, TIMEOUT), 4, "{}", env.diagnosis());
    let said = read(&env, "exit.txt");
    assert!(said.starts_with("how=exit\n"), "{said}");
    assert!(
        said.contains("ExitBySignal = false\nExitCode = 3\n"),
        "{said}"
    );
    assert!(
        said.contains("JobDuration = ") && said.contains("JobPid = "),
        "{said}"
    );
    assert_eq!(attr(&env, &id, "StarterHookFailure"), None);
}

/// Runs a sleeping job with RECORD_EXIT, waits until it runs, stops it
/// with `tool`, and returns JOB_EXIT's first line.
fn exit_argument_after(tool: &str) -> String {
    let env = hooked(
        &[("JOB_EXIT", RECORD_EXIT)],
        &[("NEGOTIATE_ON_EXIT", "false")],
    );
    let id = submit(&env, "exec sleep 60", "");
    wait_status(&env, &id, 2);
    env.wait_for("the job's process", TIMEOUT, || {
        env.leftovers().iter().any(|&p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).starts_with("sleep"))
        })
    });
    env.run_ok(tool, [id.as_str()]);
    env.wait_for("JOB_EXIT", TIMEOUT, || {
        read(&env, "exit.txt").contains("ExitBySignal")
    });
    let said = read(&env, "exit.txt");
    assert!(
        said.contains("ExitBySignal = true\nExitSignal = 15\n"),
        "{said}"
    );
    said.lines().next().unwrap_or_default().to_string()
}

#[test]
fn job_exit_is_told_remove() {
    assert_eq!(exit_argument_after("tern_rm"), "how=remove");
}

#[test]
fn job_exit_is_told_hold() {
    assert_eq!(exit_argument_after("tern_hold"), "how=hold");
}

#[test]
fn job_exit_is_told_evict_for_a_vacate() {
    assert_eq!(exit_argument_after("tern_vacate_job"), "how=evict");
}

#[test]
fn a_failing_job_exit_is_noted_with_the_end() {
    let env = hooked(
        &[("JOB_EXIT", "sleep 30")],
        &[("TEST_HOOK_JOB_EXIT_TIMEOUT", "1")],
    );
    let id = submit(&env, "true", "");
    assert_eq!(env.wait_history(&id, TIMEOUT), 4, "{}", env.diagnosis());
    let failure = env.attr(&id, "StarterHookFailure").unwrap();
    assert!(
        failure.contains("JOB_EXIT (job_exit.sh) failed (timed out after 1 s and was killed)"),
        "{failure}"
    );
    assert_job_events(&env.path("t.log"), &id, [0, 1, 21, 5]);
}

#[test]
fn starter_hooks_around_a_job_with_file_transfer() {
    let record = "\"$_CONDOR_SCRATCH_DIR/../../../order.txt\"";
    let env = hooked(
        &[
            (
                "PREPARE_JOB_BEFORE_TRANSFER",
                &format!("cat >/dev/null; echo \"before: $(ls | tr '\\n' ' ')\" >> {record}"),
            ),
            (
                "PREPARE_JOB",
                &format!(
                    "cat >/dev/null; echo \"prepare: $(ls | tr '\\n' ' ')\" >> {record}\n\
                     echo staged > staged.txt"
                ),
            ),
            (
                "JOB_EXIT",
                &format!(
                    "cat >/dev/null; iwd=\"$_CONDOR_SCRATCH_DIR/../../..\"\n\
                     if [ -e \"$iwd/result.txt\" ]; then echo 'exit: output back' >> {record};\n\
                     else echo 'exit: output not back yet' >> {record}; fi\n\
                     echo noted > exit_note.txt"
                ),
            ),
        ],
        &[],
    );
    env.write("in.txt", "input\n");
    let id = submit(
        &env,
        "cat in.txt staged.txt > result.txt",
        "should_transfer_files = YES\ntransfer_input_files = in.txt\n",
    );
    assert_eq!(env.wait_history(&id, TIMEOUT), 4, "{}", env.diagnosis());
    let order = read(&env, "order.txt");
    let lines: Vec<&str> = order.lines().collect();
    assert_eq!(lines.len(), 3, "{order}");
    assert!(
        lines[0].starts_with("before: ")
            && !lines[0].contains("in.txt")
            && !lines[0].contains("job.sh"),
        "{order}"
    );
    assert!(
        lines[1].contains("in.txt") && lines[1].contains("job.sh"),
        "{order}"
    );
    assert_eq!(lines[2], "exit: output not back yet", "{order}");
    assert_eq!(read(&env, "result.txt"), "input\nstaged\n");
    // What JOB_EXIT wrote in the sandbox came back with the output.
    assert_eq!(read(&env, "exit_note.txt"), "noted\n");
    assert_job_events(&env.path("t.log"), &id, [0, 40, 40, 1, 40, 40, 5]);
    // The hooks' stderr logs go with the job (when its claim ends).
    env.wait_for("the hook logs removed", TIMEOUT, || {
        std::fs::read_dir(env.path("spool/hooks")).map_or(true, |mut d| d.next().is_none())
    });
}

#[test]
fn the_keyword_can_be_forced_or_defaulted() {
    // A job naming a keyword nothing configures gets the default one.
    let env = RunEnv::new();
    let p = script(
        &env,
        "prep.sh",
        "cat >/dev/null; echo 'Picked = \"default\"'",
    );
    let env = env
        .knob("DEF_HOOK_PREPARE_JOB", &p)
        .knob("STARTER_DEFAULT_JOB_HOOK_KEYWORD", "DEF");
    let id = submit(&env, "true", "");
    assert_eq!(env.wait_history(&id, TIMEOUT), 4, "{}", env.diagnosis());
    assert_eq!(env.attr(&id, "Picked").as_deref(), Some("default"));
    // STARTER_JOB_HOOK_KEYWORD wins over a job's configured keyword.
    let env = RunEnv::new();
    let mine = script(&env, "mine.sh", "cat >/dev/null; echo 'Picked = \"job\"'");
    let forced = script(
        &env,
        "forced.sh",
        "cat >/dev/null; echo 'Picked = \"forced\"'",
    );
    let env = env
        .knob("TEST_HOOK_PREPARE_JOB", &mine)
        .knob("SITE_HOOK_PREPARE_JOB", &forced)
        .knob("STARTER_JOB_HOOK_KEYWORD", "SITE");
    let id = submit(&env, "true", "");
    assert_eq!(env.wait_history(&id, TIMEOUT), 4, "{}", env.diagnosis());
    assert_eq!(env.attr(&id, "Picked").as_deref(), Some("forced"));
}

/// The manual's example (admin manual, "Example Hook: Specifying the
/// Executable at Execution Time"): JAVA5_HOOK_PREPARE_JOB, the hook script
/// as printed (with the JVM's path where this machine has a stand-in), the
/// HasJava5PrepareHook machine attribute and the submit file (but for
/// `should_transfer_files = always`, which HTCondor's condor_submit
/// refuses too: `yes` is what it means).
#[test]
fn the_manuals_java5_prepare_hook_works_as_written() {
    let env = RunEnv::new();
    std::fs::create_dir_all(env.path("java5/bin")).unwrap();
    let java5 = script(
        &env,
        "java5/bin/java",
        "echo \"java5 $*: $(cat Hello.class)\"",
    );
    let hook = script(
        &env,
        "java5_prepare_hook",
        &format!("\n# Read and discard the job ClassAd\ncat > /dev/null\necho 'Cmd = \"{java5}\"'"),
    );
    // tern_hooks(7)'s JOB_EXIT example, as printed there.
    let exit_hook = script(
        &env,
        "java5_exit_hook",
        "# $1 is exit, remove, hold or evict; the job ad is on stdin.\n\
         # A file written here, in the job's scratch directory, comes\n\
         # back with the job's output when its files are transferred.\n\
         code=$(sed -n 's/^ExitCode = //p')\n\
         echo \"$1 ${code:-signal}\" > java5-exit.txt",
    );
    // The execute machine's configuration, as the manual writes it.
    let config = env.write(
        "condor_config",
        &format!(
            "JAVA5_HOOK_PREPARE_JOB = {hook}\nJAVA5_HOOK_JOB_EXIT = {exit_hook}\n\
             HasJava5PrepareHook = True\nSTARTD_ATTRS = HasJava5PrepareHook $(STARTD_ATTRS)\n"
        ),
    );
    let env = env.var_env("TERN_CONFIG", config.to_str().unwrap());
    script(&env, "java", "echo 'not the JVM the hook picks'");
    env.write("Hello.class", "bytecode");
    let c = env.submit(
        "hello.sub",
        "universe = vanilla\nexecutable = java\narguments = Hello\n\
         # match with a machine that has the hook\nrequirements = HasJava5PrepareHook\n\n\
         should_transfer_files = yes\nwhen_to_transfer_output = on_exit\n\
         transfer_input_files = Hello.class\n\noutput = hello.out\nerror  = hello.err\n\
         log    = hello.log\n\n+HookKeyword=\"JAVA5\"\n\nqueue\n",
    );
    let id = format!("{c}.0");
    assert_eq!(env.wait_history(&id, TIMEOUT), 4, "{}", env.diagnosis());
    assert_eq!(read(&env, "hello.out"), "java5 Hello: bytecode\n");
    assert_eq!(read(&env, "java5-exit.txt"), "exit 0\n");
}

#[test]
fn a_job_removed_while_prepare_job_runs_never_starts() {
    // It says it runs (`preparing`), waits for the test to create `go`,
    // and then sets FromHook.
    let prepare = format!(
        "cat >/dev/null; top=\"$_CONDOR_SCRATCH_DIR/../../..\"\n\
         touch \"$top/preparing\"\n{}\necho 'FromHook = 7'",
        wait_for_file("\"$top/go\"")
    );
    let env = hooked(&[("PREPARE_JOB", &prepare)], &[]);
    let id = submit(&env, "echo ran > ran.txt", "");
    env.wait_for("PREPARE_JOB to run", TIMEOUT, || {
        env.path("preparing").exists()
    });
    env.run_ok("tern_rm", [id.as_str()]);
    // The hook ends only once the removal is in the queue.
    env.write("go", "");
    assert_eq!(env.wait_history(&id, TIMEOUT), 3, "{}", env.diagnosis());
    assert!(!env.path("ran.txt").exists(), "the job never ran");
    assert_job_events(&env.path("t.log"), &id, [0, 9]);
    // What the hook printed was for a run that never started: the job
    // keeps none of it (it once went to the queue before the stop was
    // seen).
    assert_eq!(attr(&env, &id, "FromHook"), None);
}

// The output transfer once read the job's ad from before PREPARE_JOB:
// a TransferOutput the hook set was ignored.
#[test]
fn what_prepare_job_sets_decides_what_comes_back() {
    let env = hooked(
        &[(
            "PREPARE_JOB",
            "cat >/dev/null; echo 'TransferOutput = \"b.txt\"'",
        )],
        &[],
    );
    let id = submit(
        &env,
        "echo a > a.txt; echo b > b.txt",
        "should_transfer_files = YES\nwhen_to_transfer_output = ON_EXIT\n",
    );
    assert_eq!(env.wait_history(&id, TIMEOUT), 4, "{}", env.diagnosis());
    assert_eq!(read(&env, "b.txt"), "b\n");
    assert!(
        !env.path("a.txt").exists(),
        "only TransferOutput comes back"
    );
    assert_eq!(attr(&env, &id, "TransferOutput").as_deref(), Some("b.txt"));
}

/// Runs a job whose UPDATE_JOB_INFO (run every second) is `body`, with
/// `knobs`; the StarterHookFailure it leaves. The job ends once the failure
/// is recorded (the file `go`), not on a timer: a run that ended first
/// (a loaded machine, a hook late to time out) killed the hook with it,
/// which is no failure.
fn update_failure(body: &str, knobs: &[(&str, &str)]) -> String {
    let mut all = vec![
        ("STARTER_INITIAL_UPDATE_INTERVAL", "1"),
        ("STARTER_UPDATE_INTERVAL", "1"),
    ];
    all.extend_from_slice(knobs);
    let env = hooked(&[("UPDATE_JOB_INFO", body)], &all);
    let id = submit(&env, &format!("{}\necho done", wait_for_file("go")), "");
    env.wait_for("the hook's failure recorded", TIMEOUT, || {
        attr(&env, &id, "StarterHookFailure").is_some()
    });
    env.write("go", "");
    assert_eq!(env.wait_history(&id, TIMEOUT), 4, "{}", env.diagnosis());
    // The hook's failure costs the job nothing.
    assert_eq!(read(&env, "job.out"), "done\n");
    assert_eq!(env.attr(&id, "ExitCode").as_deref(), Some("0"));
    attr(&env, &id, "StarterHookFailure").expect("a failure recorded")
}

#[test]
fn an_update_hook_that_hangs_is_killed_at_its_timeout() {
    let f = update_failure(
        "cat >/dev/null; sleep 30",
        &[("TEST_HOOK_UPDATE_JOB_INFO_TIMEOUT", "1")],
    );
    assert!(
        f.contains(
            "UPDATE_JOB_INFO (update_job_info.sh) failed (timed out after 1 s and was killed)"
        ),
        "{f}"
    );
}

#[test]
fn an_update_hook_killed_by_a_signal_is_noted() {
    let f = update_failure("cat >/dev/null; kill -9 $$", &[]);
    assert!(f.contains("failed (was killed by signal 9)"), "{f}");
}

#[test]
fn a_job_exit_hook_that_fails_or_is_killed_is_noted() {
    for (body, says) in [
        (
            "echo 'no database' >&2; exit 4",
            "JOB_EXIT (job_exit.sh) failed (exited with status 4): no database",
        ),
        (
            "kill -TERM $$",
            "JOB_EXIT (job_exit.sh) failed (was killed by signal 15)",
        ),
    ] {
        let env = hooked(&[("JOB_EXIT", body)], &[]);
        let id = submit(&env, "echo done", "");
        assert_eq!(env.wait_history(&id, TIMEOUT), 4, "{}", env.diagnosis());
        assert_eq!(read(&env, "job.out"), "done\n");
        let f = attr(&env, &id, "StarterHookFailure").unwrap_or_default();
        assert!(f.contains(says), "{f}");
        assert!(read(&env, "t.log").contains("Message from starter on slot"));
    }
}

#[test]
fn the_hook_logs_of_a_held_job_go_when_it_is_removed() {
    let env = hooked(&[("PREPARE_JOB", "echo 'broken' >&2; exit 1")], &[]);
    let id = submit(&env, "true", "");
    held(&env, &id);
    let log = env.path(&format!("spool/hooks/starter.{id}.PREPARE_JOB.stderr"));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "broken\n");
    env.run_ok("tern_rm", [id.as_str()]);
    // The pass's sweep of what left the queue (every job evaluated).
    env.run_ok("tern_negotiate", ["-reconfig", "-wait"]);
    assert!(!log.exists());
}

/// The pids listed in file `name`, one a line.
fn pids_in(env: &RunEnv, name: &str) -> Vec<i32> {
    read(env, name)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|st| st.rsplit(") ").next().is_some_and(|f| !f.starts_with('Z')))
}

// A busy loop UPDATE_JOB_INFO left behind was counted as the job's: its
// cpu time went into RemoteUserCpu and it ran until the job ended.
#[test]
fn an_update_hooks_leftovers_are_not_the_jobs() {
    let env = hooked(
        &[(
            "UPDATE_JOB_INFO",
            "cat >/dev/null; top=\"$_CONDOR_SCRATCH_DIR/../../..\"\n\
             (while :; do :; done) </dev/null >/dev/null 2>&1 &\n\
             echo $! >> \"$top/spun\"",
        )],
        &[
            ("STARTER_INITIAL_UPDATE_INTERVAL", "1"),
            ("STARTER_UPDATE_INTERVAL", "1"),
        ],
    );
    let id = submit(&env, &format!("{}\nsleep 3", wait_for_file("spun")), "");
    assert_eq!(env.wait_history(&id, TIMEOUT), 4, "{}", env.diagnosis());
    let spun = pids_in(&env, "spun");
    assert!(!spun.is_empty(), "the hook ran");
    for pid in spun {
        assert!(!alive(pid), "leftover {pid} outlived the job");
    }
    let cpu: f64 = env.attr(&id, "RemoteUserCpu").unwrap().parse().unwrap();
    assert!(cpu < 1.0, "the job only slept, yet used {cpu} s");
}

// The end of a job once waited for a running UPDATE_JOB_INFO (up to its
// timeout); HTCondor never waits for it. A suspend and a continue run it,
// with JobState saying which.
#[test]
fn update_job_info_runs_on_suspend_and_continue_and_never_delays_the_end() {
    let env = hooked(
        &[(
            "UPDATE_JOB_INFO",
            "top=\"$_CONDOR_SCRATCH_DIR/../../..\"\n\
             grep '^JobState ' >> \"$top/states.txt\"\n\
             [ -e \"$top/hang\" ] && { touch \"$top/hanging\"; sleep 100; }\n\
             touch \"$top/updated\"",
        )],
        &[
            ("TEST_HOOK_UPDATE_JOB_INFO_TIMEOUT", "120"),
            // Only the suspend and the continue run it.
            ("STARTER_INITIAL_UPDATE_INTERVAL", "1000"),
            ("STARTER_UPDATE_INTERVAL", "1000"),
        ],
    );
    let id = submit(
        &env,
        &format!("{}\n{}", wait_for_file("resumed"), wait_for_file("end")),
        "",
    );
    wait_status(&env, &id, 2);
    env.run_ok("tern_suspend", [id.as_str()]);
    env.wait_for("the suspend's update to end", TIMEOUT, || {
        env.path("updated").exists()
    });
    env.write("hang", "");
    env.run_ok("tern_continue", [id.as_str()]);
    env.wait_for("the continue's update to hang", TIMEOUT, || {
        env.path("hanging").exists()
    });
    env.write("resumed", "");
    env.write("end", "");
    let ended = std::time::Instant::now();
    assert_eq!(env.wait_history(&id, TIMEOUT), 4, "{}", env.diagnosis());
    assert!(
        ended.elapsed() < std::time::Duration::from_secs(60),
        "the end waited for the hanging hook"
    );
    assert_eq!(
        read(&env, "states.txt"),
        "JobState = \"Suspended\"\nJobState = \"Running\"\n"
    );
    // Killed because the job ended, it is no failure.
    assert_eq!(attr(&env, &id, "StarterHookFailure"), None);
}

// What a PREPARE hook leaves running is below the shadow when the job
// starts: it must not count as the job's, and it goes with the run.
#[test]
fn a_prepare_hooks_leftovers_are_not_the_jobs() {
    let env = hooked(
        &[(
            "PREPARE_JOB",
            "cat >/dev/null; top=\"$_CONDOR_SCRATCH_DIR/../../..\"\n\
             (while :; do :; done) </dev/null >/dev/null 2>&1 &\n\
             echo $! >> \"$top/spun\"",
        )],
        &[
            ("STARTER_INITIAL_UPDATE_INTERVAL", "1"),
            ("STARTER_UPDATE_INTERVAL", "1"),
        ],
    );
    let id = submit(&env, "sleep 3", "");
    assert_eq!(env.wait_history(&id, TIMEOUT), 4, "{}", env.diagnosis());
    let spun = pids_in(&env, "spun");
    assert_eq!(spun.len(), 1, "the hook ran once");
    assert!(!alive(spun[0]), "leftover {} outlived the job", spun[0]);
    let cpu: f64 = env.attr(&id, "RemoteUserCpu").unwrap().parse().unwrap();
    assert!(cpu < 1.0, "the job only slept, yet used {cpu} s");
}
