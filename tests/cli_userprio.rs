//! `tern_userprio`: the decay of user priorities through the real tools
//! (`-setprio` and passes at pinned times), the table as condor_userprio
//! lays it out, the edits and who may make them.

use crate::common::{NOW, Run, TestEnv};

const DAY: i64 = 86400;

/// A hermetic SPOOL, a pinned 2-cpu machine, UTC, and the clock at `at`.
fn env_at(at: i64) -> TestEnv {
    TestEnv::with_spool()
        .var("_TERN_NUM_CPUS", Some("2"))
        .var("_TERN_MEMORY", Some("2048"))
        .var("_TERN_DISK", Some("1000000"))
        .var("TERN_NOW", Some(&at.to_string()))
}

#[track_caller]
fn ok(r: &Run, stdout: &str) {
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, stdout, ""),
        "unexpected outcome"
    );
}

/// A pass at `at`.
fn pass(env: &TestEnv, at: i64) {
    let r = env
        .command("tern_negotiate")
        .env("TERN_NOW", at.to_string())
        .output()
        .expect("running tern_negotiate");
    assert!(r.status.success(), "{r:?}");
}

fn userprio(env: &TestEnv, at: i64, args: &[&str]) -> Run {
    let out = env
        .command("tern_userprio")
        .env("TERN_NOW", at.to_string())
        .args(args)
        .output()
        .expect("running tern_userprio");
    Run::from(out)
}

/// The -priority table of one submitter that never ran anything.
fn priority_table(update: &str, name: &str, ep: &str, real: &str) -> String {
    format!(
        "Last Priority Update: {update}\n\
         \x20                   Effective     Real   Priority \n\
         User Name            Priority   Priority  Factor  \n\
         ------------------ ------------ -------- ---------\n\
         {name:<18} {ep:>12} {real:>8}   1000.00\n\
         ------------------ ------------ -------- ---------\n\
         Number of users: 1                                \n"
    )
}

#[test]
fn decay_numbers_exactly_100_then_50_then_25() {
    let env = env_at(NOW);
    ok(
        &userprio(&env, NOW, &["-setprio", "alice@ws", "100"]),
        "The priority of alice@ws was set to 100.000000\n",
    );
    // The first pass starts the accountant's clock.
    pass(&env, NOW);
    ok(
        &userprio(&env, NOW, &["-priority", "-allusers"]),
        &priority_table("11/14 22:13", "alice@ws", "100000.00", "100.00"),
    );
    pass(&env, NOW + DAY);
    ok(
        &userprio(&env, NOW + DAY, &["-priority", "-allusers"]),
        &priority_table("11/15 22:13", "alice@ws", "50000.00", "50.00"),
    );
    pass(&env, NOW + 2 * DAY);
    ok(
        &userprio(&env, NOW + 2 * DAY, &["-priority", "alice@ws"]),
        &priority_table("11/16 22:13", "alice@ws", "25000.00", "25.00"),
    );
    let json = userprio(&env, NOW + 2 * DAY, &["-json"]);
    assert!(
        json.stdout.contains("\"RealPriority\": 25.0"),
        "{}",
        json.stdout
    );
}

#[test]
fn the_default_table_hides_submitters_idle_for_a_day() {
    let env = env_at(NOW);
    userprio(&env, NOW, &["-setprio", "bob@ws", "3"]);
    pass(&env, NOW);
    pass(&env, NOW + 60);
    let empty = "Last Priority Update: 11/14 22:14\n\
        \x20                   Effective   Priority  Wghted Total Usage  Time Since Submitter Submitter\n\
        User Name            Priority    Factor   In Use (wghted-hrs) Last Usage   Floor    Ceiling \n\
        ------------------ ------------ --------- ------ ------------ ---------- --------- ---------\n\
        ------------------ ------------ --------- ------ ------------ ---------- --------- ---------\n\
        Number of users: 0                             0         0.00    1+00:00                    \n";
    ok(&userprio(&env, NOW + 60, &[]), empty);
    // -all, every submitter: a record never used shows no usage times.
    let r = userprio(&env, NOW + 60, &["-all", "-allusers"]);
    assert_eq!(r.code, 0, "{r:?}");
    let row = r.stdout.lines().nth(4).unwrap();
    assert_eq!(
        row,
        "bob@ws                  2998.56     3.00   1000.00      0         0.00                                   19675+22:1                    "
    );
}

#[test]
fn a_spool_without_a_queue_has_no_records() {
    let env = env_at(NOW);
    ok(&userprio(&env, NOW, &[]), "");
    ok(&userprio(&env, NOW, &["-json"]), "");
    assert!(!env.path("spool/queue.db").exists());
}

#[test]
fn edits_print_condor_userprios_messages() {
    let env = env_at(NOW);
    ok(
        &userprio(&env, NOW, &["-setfactor", "carol@ws", "2500"]),
        "The priority factor of carol@ws was set to 2500.000000\n",
    );
    ok(
        &userprio(&env, NOW, &["-resetusage", "carol@ws"]),
        "The accumulated usage of carol@ws was reset\n",
    );
    ok(
        &userprio(&env, NOW, &["-resetall"]),
        "The accumulated usage was reset for all users\n",
    );
    let r = userprio(&env, NOW, &["-priority", "carol"]);
    assert!(r.stdout.contains("carol@ws"), "{r:?}");
    assert!(r.stdout.contains("   2500.00"), "{r:?}");
    ok(
        &userprio(&env, NOW, &["-delete", "carol@ws"]),
        "The accountant record named carol@ws was deleted\n",
    );
    ok(&userprio(&env, NOW, &["-json"]), "");

    userprio(&env, NOW, &["-setfactor", "carol@ws", "0.5"])
        .fails(1, "Priority factors must be greater than or equal to 1.\n");
    userprio(&env, NOW, &["-setprio", "carol", "5"]).fails(
        1,
        "tern_userprio: You must specify the full name of the submittor you wish\n\
         \tto update the priority of (user@uid.domain or user@full.host.name)\n",
    );
}

#[test]
fn only_super_users_may_edit() {
    let env = env_at(NOW);
    let spool = env.path("spool");
    std::fs::create_dir_all(&spool).unwrap();
    // Only root can give the SPOOL away; elsewhere the owner is the user.
    if std::os::unix::fs::chown(&spool, Some(65534), Some(65534)).is_err() {
        return;
    }
    let r = userprio(&env, NOW, &["-setprio", "dave@ws", "5"]);
    assert_eq!((r.code, r.stdout.as_str()), (1, ""), "{r:?}");
    assert!(
        r.stderr
            .starts_with("tern_userprio: error: permission denied: "),
        "{r:?}"
    );
    assert!(!spool.join("queue.db").exists());
    let me = String::from_utf8(
        std::process::Command::new("id")
            .arg("-un")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let env = env.var("_TERN_QUEUE_SUPER_USERS", Some(me.trim()));
    ok(
        &userprio(&env, NOW, &["-setprio", "dave@ws", "5"]),
        "The priority of dave@ws was set to 5.000000\n",
    );
}

/// A number attribute of the first ad `tern_userprio -json` prints.
fn json_number(json: &str, attr: &str) -> f64 {
    let v: serde_json::Value = serde_json::from_str(json).expect("a JSON array");
    v[0][attr]
        .as_f64()
        .unwrap_or_else(|| panic!("no {attr} in {json}"))
}

#[test]
fn a_job_that_starts_and_ends_between_passes_is_charged() {
    let env = crate::common::RunEnv::new();
    env.submit(
        "job.sub",
        &format!(
            "executable = {}\narguments = \"sleep 2\"\nqueue\n",
            crate::common::fake_job().display()
        ),
    );
    env.wait_for("job 1.0 in the history", crate::common::TIMEOUT, || {
        env.history_af("1.0", &["JobStatus"]).is_some()
    });
    env.wait_slots_unclaimed();
    env.negotiate();
    let json = env.run_ok("tern_userprio", ["-json"]);
    // About 2 cpu-seconds on a 1-cpu slot, wherever the passes fell.
    let used = json_number(&json, "WeightedAccumulatedUsage");
    assert!((1.0..=10.0).contains(&used), "{json}");
    assert!(json_number(&json, "LastUsageTime") > 0.0, "{json}");
    assert_eq!(json_number(&json, "WeightedResourcesUsed"), 0.0, "{json}");
    // The default table shows it: it used the machine within the day.
    let table = env.run_ok("tern_userprio", &[] as &[&str]);
    assert!(table.contains("Number of users: 1"), "{table}");
}
