//! `tern_q -better-analyze` and `-analyze`: why jobs do not run, on a
//! machine of pinned size (4 cpus, 8000 MiB, 1000000 KiB, host
//! `testhost`) with no pass started by submit, compared output for output.

use crate::common::{NOW, Run, TestEnv};

fn env() -> TestEnv {
    let env = TestEnv::with_spool()
        .var("_TERN_NUM_CPUS", Some("4"))
        .var("_TERN_MEMORY", Some("8000"))
        .var("_TERN_DISK", Some("1000000"))
        .var("_TERN_FULL_HOSTNAME", Some("testhost"))
        .var("_TERN_NEGOTIATE_ON_SUBMIT", Some("false"));
    // A tiny program, so that DiskUsage is the same anywhere.
    env.write_program("prog");
    env
}

/// Submits `body` (after `executable = prog`) with tern_submit.
fn submit(env: &TestEnv, body: &str) {
    env.write("job.sub", &format!("executable = prog\n{body}queue\n"));
    let r = env.run("tern_submit", ["job.sub"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
}

/// tern_q's output, normalized: `$SPOOL`, `$USER`.
/// tern_q's output, with the directory the tools run from written `$BIN`.
fn run_q(env: &TestEnv, args: &[&str]) -> Run {
    let mut r = env.run("tern_q", args).normalized(env);
    let bin = std::path::Path::new(crate::common::bin("tern_q"))
        .parent()
        .unwrap()
        .display()
        .to_string();
    r.stdout = r.stdout.replace(&bin, "$BIN");
    r
}

/// The title tern_q prints before an analysis, at NOW.
macro_rules! title {
    () => {
        "\n\n-- Schedd: $USER@testhost : <$SPOOL> @ 11/14/23 22:13:20\n"
    };
}

macro_rules! requirements {
    () => {
        "\
The Requirements expression for job 1.000 is

    (TARGET.Arch == \"X86_64\") && (TARGET.OpSys == \"LINUX\") &&
    (TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) &&
    ((TARGET.FileSystemDomain == MY.FileSystemDomain) ||
      (TARGET.HasFileTransfer))

"
    };
}

macro_rules! no_pass {
    () => {
        "\
No negotiation pass since submit: no pass has run since job 1.0 was
submitted, so nothing has tried to match it yet. Run tern_negotiate to
start one now; so that passes run even when none is started for you, add
this line to your crontab (crontab -e):

    * * * * * \"$BIN/tern_negotiate\"
"
    };
}

const NO_PASS: &str = no_pass!();

#[test]
fn a_job_asking_more_memory_than_the_machine_has_matches_no_slot() {
    let env = env();
    submit(&env, "request_memory = 100000\n");
    let expected = concat!(
        title!(),
        requirements!(),
        "\
Job 1.000 defines the following attributes:

    DiskUsage = 1
    FileSystemDomain = \"testhost\"
    RequestDisk = DiskUsage
    RequestMemory = 100000

slot1@testhost has the following attributes:

    TARGET.Arch = \"X86_64\"
    TARGET.Disk = 1000000
    TARGET.FileSystemDomain = \"testhost\"
    TARGET.HasFileTransfer = true
    TARGET.Memory = 8000
    TARGET.OpSys = \"LINUX\"

The Requirements expression for job 1.000 reduces to these conditions:

         Slots
Step    Matched  Condition
-----  --------  ---------
[0]           1  TARGET.Arch == \"X86_64\"
[1]           1  TARGET.OpSys == \"LINUX\"
[3]           1  TARGET.Disk >= RequestDisk
[5]           0  TARGET.Memory >= RequestMemory
[9]           1  (TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer)

Suggestions:

    Condition                         Machines Matched    Suggestion
    ---------                         ----------------    ----------
1   ( TARGET.Memory >= 100000 )       0                   MODIFY TO 8000
2   ( TARGET.Arch == \"X86_64\" )       1
3   ( TARGET.OpSys == \"LINUX\" )       1
4   ( TARGET.Disk >= 1 )              1
5   ( (TARGET.FileSystemDomain == \"testhost\") || (TARGET.HasFileTransfer) )
                                      1


001.000:  Run analysis summary ignoring user priority.  Of 1 slots on 1 machines,
      1 slots are rejected by your job's requirements: slot1@testhost
      0 slots reject your job because of their own requirements
      0 slots match and are willing to run your job

WARNING:  Be advised:
   No machines matched the jobs's constraints

",
        no_pass!()
    );
    run_q(&env, &["-better-analyze", "1.0"]).ok(expected);
    // The cluster, and no job named at all (your idle jobs), say the same.
    run_q(&env, &["-better-analyze", "1"]).ok(expected);
    run_q(&env, &["-better-analyze"]).ok(expected);
    // -analyze is the summary alone.
    run_q(&env, &["-analyze", "1.0"]).ok(concat!(
        title!(),
        "
001.000:  Run analysis summary ignoring user priority.  Of 1 slots on 1 machines,
      1 slots are rejected by your job's requirements: slot1@testhost
      0 slots reject your job because of their own requirements
      0 slots match and are willing to run your job

WARNING:  Be advised:
   No machines matched the jobs's constraints

",
        no_pass!()
    ));
}

#[test]
fn an_impossible_custom_requirement_is_the_clause_that_matches_nothing() {
    let env = env();
    submit(&env, "requirements = HasGPU == true\n");
    let r = run_q(&env, &["-better-analyze", "1.0"]);
    assert_eq!(r.code, 0, "{r:?}");
    let table = "\
         Slots
Step    Matched  Condition
-----  --------  ---------
[0]           0  HasGPU == true
[1]           1  TARGET.Arch == \"X86_64\"
";
    assert!(r.stdout.contains(table), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("1   ( HasGPU == true )                0                   REMOVE\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("      1 slots are rejected by your job's requirements: slot1@testhost\n"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_held_job_gives_its_hold_reason_and_is_not_analysed_by_default() {
    let env = env();
    submit(&env, "");
    let r = env.run("tern_hold", ["1.0"]);
    assert_eq!(r.code, 0, "{r:?}");
    run_q(&env, &["-better-analyze", "1.0"]).ok(concat!(
        title!(),
        "

001.000:  Job is held.

Hold reason: via tern_hold (by user $USER)
Hold reason code: 1, subcode: 0
Held since: Tue Nov 14 22:13:20 2023
Once the cause is fixed, tern_release 1.0 lets it run again.

"
    ));
    // With no job named only idle jobs are analysed: none here.
    run_q(&env, &["-better-analyze"]).ok(title!());
}

#[test]
fn after_a_pass_that_start_refuses_the_slots_reject_the_job() {
    let env = env().var("_TERN_START", Some("false"));
    submit(&env, "");
    let r = run_q(&env, &["-analyze", "1.0"]);
    assert!(r.stdout.contains(NO_PASS), "{}", r.stdout);
    // A dry run records nothing.
    let r = env.run("tern_negotiate", ["-dry-run"]);
    assert_eq!(r.code, 0, "{r:?}");
    let r = run_q(&env, &["-analyze", "1.0"]);
    assert!(r.stdout.contains(NO_PASS), "{}", r.stdout);
    // A real pass, a minute later, finds no slot.
    let later = (NOW + 60).to_string();
    let env = env.var("TERN_NOW", Some(&later));
    let r = env.run("tern_negotiate", Vec::<&str>::new());
    assert_eq!(r.code, 0, "{r:?}");
    let r = run_q(&env, &["-analyze", "1.0"]);
    r.ok("

-- Schedd: $USER@testhost : <$SPOOL> @ 11/14/23 22:14:20

001.000:  Run analysis summary ignoring user priority.  Of 1 slots on 1 machines,
      0 slots are rejected by your job's requirements
      1 slots reject your job because of their own requirements: slot1@testhost
      0 slots match and are willing to run your job

WARNING:  Be advised:
   Job did not match any machines's constraints
   The slots' Requirements include START, which is
       false
   in this machine's configuration (tern_config_val START).

No successful match recorded.
Last failed match: Tue Nov 14 22:14:20 2023
Reason for last match failure: no match found

Last negotiation pass: Tue Nov 14 22:14:20 2023
");
}

#[test]
fn deferral_and_periodic_hold_are_reported_for_an_idle_job() {
    let env = env();
    submit(
        &env,
        &format!("deferral_time = {}\nperiodic_hold = true\n", NOW + 3600),
    );
    let r = run_q(&env, &["-analyze", "1.0"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.contains(
            "Job 1.0 is waiting for its deferral time, Tue Nov 14 23:13:20 2023 (in 0+01:00:00).\n"
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.ends_with(
            "The next negotiation pass will hold this job:\n    \
             The job attribute PeriodicHold expression 'true' evaluated to TRUE\n"
        ),
        "{}",
        r.stdout
    );
}
