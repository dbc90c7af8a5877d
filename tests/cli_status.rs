//! `tern_status`: the configured layout before any pass, slots read from
//! the database (set up through the library, as a pass would leave them),
//! and every output form, on a machine of pinned size.

use tern::config::Config;
use tern::machine::{self, ClaimInfo, Machine};
use tern::queue::Queue;

use crate::common::{NOW, Run, TestEnv};

/// A 30-cpu machine named host.example with 64000 MiB and 1000000 KiB,
/// and a SPOOL with no queue yet.
fn env() -> TestEnv {
    TestEnv::with_spool()
        .var("_TERN_NUM_CPUS", Some("30"))
        .var("_TERN_MEMORY", Some("64000"))
        .var("_TERN_DISK", Some("1000000"))
        .var("_TERN_FULL_HOSTNAME", Some("host.example"))
}

fn status(env: &TestEnv, args: &[&str]) -> Run {
    env.run("tern_status", args)
}

#[track_caller]
fn ok(r: &Run, stdout: &str) {
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, stdout, ""),
        "unexpected outcome"
    );
}

const TOTALS_HEAD: &str =
    "               Total Owner Claimed Unclaimed Matched Preempting  Drain Backfill BkIdle\n\n";

/// The same machine as the environment, seen by the library, with slot
/// rows as a pass leaves them: slot1_1 (2 cpus) running 12.0 since NOW -
/// 20, slot1_2 (1 cpu) carved and claimed by 13.0 an hour ago.
fn with_claims(env: &TestEnv) {
    let mut cfg = Config::defaults();
    cfg.parse_str(
        "NUM_CPUS = 30\nMEMORY = 64000\nDISK = 1000000\nFULL_HOSTNAME = host.example\n",
        "test",
    )
    .unwrap();
    let m = Machine::detect(&cfg).unwrap();
    let q = Queue::open(&env.path("spool"), true).unwrap().unwrap();
    let conn = q.conn();
    machine::sync_slots(conn, &m, NOW - 600).unwrap();
    for (c, cpus, mem, at) in [(12, 2, 2048, NOW - 20), (13, 1, 1024, NOW - 3600)] {
        let d = machine::carve_dynamic(conn, "slot1", cpus, mem, 1000, at).unwrap();
        let info = ClaimInfo {
            remote_user: "alice@host.example".into(),
            remote_owner: "alice".into(),
            cluster: c,
            proc: 0,
            claim: format!("claim{c}"),
            job_start: at,
        };
        machine::set_claim(conn, &d.name, "Claimed", "Busy", &info, at).unwrap();
    }
}

#[test]
fn fresh_install_shows_one_partitionable_slot_and_creates_nothing() {
    let env = env();
    ok(
        &status(&env, &[]),
        &format!(
            "Name                OpSys      Arch   State     Activity LoadAv Mem    ActvtyTime\n\
             \n\
             slot1@host.example  LINUX      X86_64 Unclaimed Idle      0.000 64000  0+00:00:00\n\
             \n\
             {TOTALS_HEAD}\
             \x20 X86_64/LINUX     1     0       0         1       0          0      0        0      0\n\
             \n\
             \x20        Total     1     0       0         1       0          0      0        0      0\n"
        ),
    );
    assert!(!env.path("spool").exists());
}

#[test]
fn static_slots_divide_the_machine() {
    let env = env().var("_TERN_NUM_SLOTS", Some("4"));
    ok(
        &status(&env, &["-af", "Name", "SlotType", "Cpus", "Memory", "Disk"]),
        "slot1@host.example Static 7 16000 250000\n\
         slot2@host.example Static 7 16000 250000\n\
         slot3@host.example Static 7 16000 250000\n\
         slot4@host.example Static 7 16000 250000\n",
    );
    ok(
        &status(
            &env,
            &["slot2", "-long", "-attributes", "Requirements,SlotTypeID"],
        ),
        "Requirements = START\nSlotTypeID = 0\n\n",
    );
    let env = env
        .var("_TERN_NUM_SLOTS_TYPE_1", Some("1"))
        .var("_TERN_SLOT_TYPE_1", Some("cpus=2, memory=25%, disk=1/4"))
        .var("_TERN_NUM_SLOTS_TYPE_2", Some("2"))
        .var("_TERN_SLOT_TYPE_2", Some("auto"))
        .var("_TERN_SLOT_TYPE_2_PARTITIONABLE", Some("true"));
    ok(
        &status(
            &env,
            &[
                "-af:h",
                "Name",
                "SlotTypeID",
                "SlotType",
                "Cpus",
                "Memory",
                "Disk",
            ],
        ),
        "Name               SlotTypeID SlotType      Cpus Memory Disk\n\
         slot1@host.example 1          Static        2    16000  250000\n\
         slot2@host.example 2          Partitionable 14   24000  375000\n\
         slot3@host.example 2          Partitionable 14   24000  375000\n",
    );
}

#[test]
fn slots_in_the_database_with_claims() {
    let env = env();
    with_claims(&env);
    ok(
        &status(&env, &[]),
        &format!(
            "Name                 OpSys      Arch   State     Activity LoadAv Mem    ActvtyTime\n\
             \n\
             slot1@host.example   LINUX      X86_64 Unclaimed Idle      0.000 60928  0+00:10:00\n\
             slot1_1@host.example LINUX      X86_64 Claimed   Busy      0.000  2048  0+00:00:20\n\
             slot1_2@host.example LINUX      X86_64 Claimed   Busy      0.000  1024  0+01:00:00\n\
             \n\
             {TOTALS_HEAD}\
             \x20 X86_64/LINUX     3     0       2         1       0          0      0        0      0\n\
             \n\
             \x20        Total     3     0       2         1       0          0      0        0      0\n"
        ),
    );
    ok(
        &status(&env, &["-claimed"]),
        "Name                 OpSys       Arch   LoadAv RemoteUser           ClientMachine\n\
         \n\
         slot1_1@host.example LINUX       X86_64  0.000 alice@host.example   host.example\n\
         slot1_2@host.example LINUX       X86_64  0.000 alice@host.example   host.example\n\
         \n\
         \x20              Machines         MIPS       KFLOPS   AvgLoadAvg\n\
         \n\
         \x20 X86_64/LINUX        2            0            0   0.000\n\
         \n\
         \x20        Total        2            0            0   0.000\n",
    );
    assert_eq!(
        status(&env, &["-run"]).stdout,
        status(&env, &["-claimed"]).stdout
    );
    ok(
        &status(&env, &["-avail", "-af", "Name", "Cpus"]),
        "slot1@host.example 27\n",
    );
    ok(
        &status(&env, &["-avail", "-claimed", "-af", "Name"]),
        "slot1@host.example\nslot1_1@host.example\nslot1_2@host.example\n",
    );
    ok(
        &status(
            &env,
            &[
                "-constraint",
                "DynamicSlot",
                "-const",
                "Cpus > 1",
                "-af",
                "JobId",
                "RemoteOwner",
                "JobStart",
                "SlotType",
            ],
        ),
        &format!("12.0 alice {} Dynamic\n", NOW - 20),
    );
    ok(
        &status(&env, &["slot1_2", "-af", "Name"]),
        "slot1_2@host.example\n",
    );
    ok(
        &status(&env, &["slot1@host.example", "-af", "Name"]),
        "slot1@host.example\n",
    );
    ok(
        &status(&env, &["host.example", "-af", "Name"]),
        "slot1@host.example\nslot1_1@host.example\nslot1_2@host.example\n",
    );
    ok(&status(&env, &["-constraint", "false"]), "");
    ok(
        &status(&env, &["-total", "-const", "State == \"Claimed\""]),
        &format!(
            "\n{TOTALS_HEAD}\
             \x20 X86_64/LINUX     2     0       2         0       0          0      0        0      0\n\
             \n\
             \x20        Total     2     0       2         0       0          0      0        0      0\n"
        ),
    );
}

#[test]
fn long_json_and_format() {
    let env = env();
    let long = status(&env, &["-long"]);
    assert_eq!(long.code, 0, "{long:?}");
    for line in [
        "Name = \"slot1@host.example\"",
        "MyType = \"Machine\"",
        "SlotType = \"Partitionable\"",
        "PartitionableSlot = true",
        "Cpus = 30",
        "TotalCpus = 30",
        "TotalSlotMemory = 64000",
        "Disk = 1000000",
        "State = \"Unclaimed\"",
        "Activity = \"Idle\"",
        "Start = true",
        "Requirements = START && (WithinResourceLimits)",
        "HasFileTransfer = true",
        "HasJobDeferral = true",
        &format!("MyCurrentTime = {NOW}"),
        &format!("EnteredCurrentState = {NOW}"),
    ] {
        assert!(
            long.stdout.lines().any(|l| l == line),
            "no {line} in\n{}",
            long.stdout
        );
    }
    assert!(long.stdout.ends_with("\n\n"));
    ok(
        &status(&env, &["-long", "-attributes", "Name,Cpus"]),
        "Cpus = 30\nName = \"slot1@host.example\"\n\n",
    );
    ok(
        &status(&env, &["-json", "-attributes", "Name,SlotID"]),
        "[\n{\n  \"Name\": \"slot1@host.example\",\n  \"SlotID\": 1\n}\n]\n",
    );
    ok(&status(&env, &["-json", "-const", "false"]), "");
    ok(
        &status(
            &env,
            &[
                "-format",
                "%s has ",
                "Name",
                "-format",
                "%d cpus\\n",
                "Cpus",
            ],
        ),
        "slot1@host.example has 30 cpus\n",
    );
}

#[test]
fn policy_knobs_reach_the_ad() {
    let env = env()
        .var("_TERN_START", Some("TARGET.Owner != \"eve\""))
        .var("_TERN_RANK", Some("TARGET.JobPrio * 2"))
        .var("_TERN_STARTD_ATTRS", Some("Team"))
        .var("_TERN_Team", Some("\"blue\""));
    ok(
        &status(&env, &["-af:r", "Start", "Rank", "Team"]),
        "TARGET.Owner != \"eve\" TARGET.JobPrio * 2 \"blue\"\n",
    );
}

#[test]
fn bad_values_are_errors_naming_the_knob() {
    let env = env();
    let bad = |var: &str, value: &str, msg: &str| {
        let r = env.command("tern_status").env(var, value).output().unwrap();
        let r = Run::from(r);
        r.fails(
            1,
            &format!("tern_status: error: {msg}\nhint: tern_status(1) describes the slot knobs\n"),
        );
    };
    bad(
        "_TERN_NUM_CPUS",
        "lots",
        "NUM_CPUS = lots: not a whole number",
    );
    bad("_TERN_MEMORY", "0", "MEMORY = 0: must be at least 1");
    bad(
        "_TERN_NUM_SLOTS",
        "31",
        "NUM_SLOTS = 31: not enough cpus for every slot (the machine has 30 cpus, 64000 MiB \
         of memory and 1000000 KiB of disk)",
    );
    let r = Run::from(
        env.command("tern_status")
            .env("_TERN_NUM_SLOTS_TYPE_1", "2")
            .env("_TERN_SLOT_TYPE_1", "cpus=2, disk=500")
            .output()
            .unwrap(),
    );
    r.fails(
        1,
        "tern_status: error: SLOT_TYPE_1 = cpus=2, disk=500: 'disk=500': disk must be a \
         percentage, a fraction or auto, as free disk changes\n\
         hint: tern_status(1) describes the slot knobs\n",
    );
    status(&env, &["-constraint", "Cpus >"]).fails(
        1,
        "tern_status: error: constraint 'Cpus >': column 7: expected an expression, found end of input\n",
    );
    let r = status(&env, &["-bogus"]);
    assert_eq!((r.code, r.stdout.as_str()), (1, ""));
    assert!(
        r.stderr
            .starts_with("tern_status: error: unknown option '-bogus'\n"),
        "{}",
        r.stderr
    );
    assert_eq!(status(&env, &["-help"]).code, 0);
}

#[test]
fn every_option_is_documented() {
    use clap::CommandFactory;
    crate::common::man::check_page("tern_status", tern::cli::status::Args::command());
}
