use std::rc::Rc;

use super::detect::{linux_name, opsys_from_long_name, os_release_pretty_name, parse_meminfo};
use super::*;
use crate::classad::{ClassAd, Value, eval_attr, parse_ad};
use crate::config::Config;
use crate::queue::Queue;

fn cfg(text: &str) -> Config {
    let mut c = Config::defaults();
    c.parse_str(text, "test").unwrap();
    c
}

/// A machine of 30 cpus, 64000 MiB and 1000000 KiB named host.example.
fn machine(extra: &str) -> Machine {
    let text = format!(
        "NUM_CPUS = 30\nMEMORY = 64000\nDISK = 1000000\nFULL_HOSTNAME = host.example\n{extra}"
    );
    Machine::detect(&cfg(&text)).unwrap()
}

fn int(ad: &ClassAd, name: &str) -> i64 {
    match eval_attr(&Rc::new(ad.clone()), name) {
        Value::Int(i) => i,
        other => panic!("{name} = {other:?}"),
    }
}

fn string(ad: &ClassAd, name: &str) -> String {
    match eval_attr(&Rc::new(ad.clone()), name) {
        Value::Str(s) => s.to_string(),
        other => panic!("{name} = {other:?}"),
    }
}

#[test]
fn overrides_replace_detected_resources() {
    let m = machine("");
    assert_eq!((m.cpus, m.memory, m.disk), (30, 64000, 1_000_000));
    assert_eq!(m.host, "host.example");
    assert!(m.detected_cpus >= 1 && m.detected_memory >= 1);
    let plain = Machine::detect(&cfg("")).unwrap();
    assert_eq!(plain.cpus, plain.detected_cpus);
    assert!(plain.disk > 0);
}

#[test]
fn bad_resource_knobs_are_named() {
    let e = |t: &str| Machine::detect(&cfg(t)).unwrap_err().to_string();
    assert_eq!(e("NUM_CPUS = many"), "NUM_CPUS = many: not a whole number");
    assert_eq!(e("NUM_CPUS = 0"), "NUM_CPUS = 0: must be at least 1");
    assert_eq!(e("MEMORY = 1.5G"), "MEMORY = 1.5G: not a whole number");
    assert_eq!(e("DISK = -3"), "DISK = -3: must be at least 0");
    assert!(e("START = (").starts_with("START = (: not a ClassAd expression"));
    assert!(
        e("STARTD_ATTRS = Foo\nFoo = 1 +").starts_with("Foo = 1 +: not a ClassAd expression"),
        "{}",
        e("STARTD_ATTRS = Foo\nFoo = 1 +")
    );
}

#[test]
fn missing_execute_directory_reads_its_parent() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("a/b/c");
    let m = Machine::detect(&cfg(&format!("EXECUTE = {}", missing.display()))).unwrap();
    assert!(m.disk > 0);
    assert!(!missing.exists());
}

#[test]
fn operating_system_names_as_htcondor() {
    let d = opsys_from_long_name("Debian GNU/Linux 12 (bookworm)");
    assert_eq!((d.name.as_str(), d.major_ver, d.ver), ("Debian", 12, 1200));
    assert_eq!(d.and_ver, "Debian12");
    let u = opsys_from_long_name("Ubuntu 22.04.3 LTS");
    assert_eq!((u.and_ver.as_str(), u.ver), ("Ubuntu22", 2204));
    let r = opsys_from_long_name("Red Hat Enterprise Linux release 9.2 (Plow)");
    assert_eq!((r.and_ver.as_str(), r.ver), ("RedHat9", 902));
    assert_eq!(linux_name("Rocky Linux 9.3 (Blue Onyx)"), "Rocky");
    assert_eq!(linux_name("Arch Linux"), "LINUX");
    assert_eq!(opsys_from_long_name("Unknown").and_ver, "LINUX0");
    assert_eq!(
        os_release_pretty_name("NAME=x\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n")
            .as_deref(),
        Some("Debian GNU/Linux 12 (bookworm)")
    );
    assert_eq!(parse_meminfo("MemTotal:       24684084 kB\n"), Some(24105));
}

#[test]
fn partitionable_slot_ad() {
    let m =
        machine("STARTD_ATTRS = Team, Missing\nTeam = \"blue\"\nSTART = TARGET.Owner != \"eve\"");
    let rows = configured_rows(&m, 100);
    assert_eq!(rows.len(), 1);
    let ad = slot_ad(&m, &rows[0], 160);
    assert_eq!(string(&ad, "Name"), "slot1@host.example");
    assert_eq!(string(&ad, "SlotType"), "Partitionable");
    assert_eq!(
        (int(&ad, "Cpus"), int(&ad, "Memory"), int(&ad, "Disk")),
        (30, 64000, 1_000_000)
    );
    assert_eq!(int(&ad, "TotalSlotCpus"), 30);
    assert_eq!(int(&ad, "MyCurrentTime"), 160);
    assert_eq!(int(&ad, "EnteredCurrentActivity"), 100);
    assert_eq!(string(&ad, "State"), "Unclaimed");
    assert_eq!(string(&ad, "Team"), "blue");
    assert!(!ad.contains("Missing"));
    assert!(ad.contains("PartitionableSlot") && !ad.contains("DynamicSlot"));
    assert!(!ad.contains("RemoteUser") && !ad.contains("JobId"));

    // Requirements: START and the resource limits, against a job.
    assert_eq!(
        crate::classad::unparse::unparse_old(ad.get("Requirements").unwrap()),
        "START && (WithinResourceLimits)"
    );
    let slot = Rc::new(ad);
    let job = |text: &str| Rc::new(parse_ad(text).unwrap());
    let base = "Requirements = true; RequestMemory = 1024; RequestDisk = 100";
    let matches = |j: &str| crate::classad::matching::symmetric_match(&slot, &job(j));
    assert!(matches(&format!(
        "[Owner = \"alice\"; RequestCpus = 30; {base}]"
    )));
    assert!(!matches(&format!(
        "[Owner = \"alice\"; RequestCpus = 31; {base}]"
    )));
    assert!(!matches(&format!(
        "[Owner = \"eve\"; RequestCpus = 1; {base}]"
    )));
}

/// The fixed part of a slot's ad is built once per shape: later ads of the
/// same slot carry their own state, a slot of another size its own
/// resources, and a clone of the machine builds afresh.
#[test]
fn slot_ads_share_their_fixed_part_by_shape() {
    let text = |ad: &ClassAd| crate::classad::unparse::ad_to_old(ad, false);
    let m = machine("NUM_SLOTS = 2");
    let rows = configured_rows(&m, 0);
    let first = slot_ad(&m, &rows[0], 10);
    let mut claimed = rows[0].clone();
    claimed.state = "Claimed".into();
    claimed.activity = "Busy".into();
    claimed.remote_user = Some("alice@host.example".into());
    claimed.cluster = Some(7);
    claimed.proc = Some(0);
    claimed.claim = Some("c1".into());
    let again = slot_ad(&m, &claimed, 20);
    assert_eq!(string(&again, "State"), "Claimed");
    assert_eq!(string(&again, "JobId"), "7.0");
    assert_eq!(int(&again, "MyCurrentTime"), 20);
    assert!(!first.contains("JobId"));
    // Built from a fresh machine, the same ads, attribute for attribute
    // and in the same order.
    let fresh = machine("NUM_SLOTS = 2");
    assert_eq!(text(&again), text(&slot_ad(&fresh, &claimed, 20)));
    assert_eq!(text(&first), text(&slot_ad(&fresh, &rows[0], 10)));
    // Another slot, and the same slot at another size.
    assert_eq!(
        string(&slot_ad(&m, &rows[1], 0), "Name"),
        "slot2@host.example"
    );
    let mut smaller = rows[0].clone();
    smaller.cpus = 3;
    assert_eq!(int(&slot_ad(&m, &smaller, 0), "Cpus"), 3);
    // A clone whose policy is changed builds its own.
    let mut other = m.clone();
    other.start = Rc::new(crate::classad::parser::parse_expr_old("false").unwrap());
    let ad = slot_ad(&other, &rows[0], 0);
    assert_eq!(
        crate::classad::unparse::unparse_old(ad.get("Start").unwrap()),
        "false"
    );
}

#[test]
fn static_slots_require_start_alone() {
    let m = machine("NUM_SLOTS = 3");
    let rows = configured_rows(&m, 0);
    assert_eq!(rows.len(), 3);
    let ad = slot_ad(&m, &rows[2], 0);
    assert_eq!(string(&ad, "Name"), "slot3@host.example");
    assert_eq!(string(&ad, "SlotType"), "Static");
    assert_eq!(int(&ad, "Cpus"), 10);
    assert_eq!(int(&ad, "Memory"), 21333);
    assert_eq!(int(&ad, "SlotTypeID"), 0);
    assert_eq!(
        crate::classad::unparse::unparse_old(ad.get("Requirements").unwrap()),
        "START"
    );
    assert!(!ad.contains("WithinResourceLimits"));
}

fn queue() -> (tempfile::TempDir, Queue) {
    let dir = tempfile::tempdir().unwrap();
    let q = Queue::open(dir.path(), true).unwrap().unwrap();
    (dir, q)
}

fn claim(c: i64) -> ClaimInfo {
    ClaimInfo {
        remote_user: "alice@host.example".into(),
        remote_owner: "alice".into(),
        cluster: c,
        proc: 0,
        claim: format!("claim-{c}"),
        job_start: 500,
    }
}

#[test]
fn carve_claim_and_release_dynamic_slots() {
    let (_d, q) = queue();
    let conn = q.conn();
    let m = machine("");
    let rows = sync_slots(conn, &m, 100).unwrap();
    assert_eq!(rows.len(), 1);
    let a = carve_dynamic(conn, "slot1", 2, 1024, 1000, 200).unwrap();
    let b = carve_dynamic(conn, "slot1", 1, 512, 0, 210).unwrap();
    assert_eq!((a.name.as_str(), b.name.as_str()), ("slot1_1", "slot1_2"));
    let p = load_slot(conn, "slot1").unwrap().unwrap();
    assert_eq!((p.cpus, p.memory, p.disk), (27, 64000 - 1536, 999_000));
    assert_eq!((p.total_cpus, p.total_memory), (30, 64000));

    set_claim(conn, "slot1_1", "Claimed", "Busy", &claim(7), 300).unwrap();
    let s = load_slot(conn, "slot1_1").unwrap().unwrap();
    assert_eq!((s.entered_state, s.entered_activity), (300, 300));
    let s = set_activity(conn, "slot1_1", "Claimed", "Suspended", 400).unwrap();
    assert_eq!((s.entered_state, s.entered_activity), (300, 400));
    set_claim(conn, "slot1_1", "Claimed", "Busy", &claim(8), 450).unwrap();
    let s = load_slot(conn, "slot1_1").unwrap().unwrap();
    assert!(matches!(
        set_claim(conn, "slot1_9", "Claimed", "Busy", &claim(9), 450),
        Err(MachineError::NoSlot(n)) if n == "slot1_9"
    ));
    assert_eq!(
        (s.entered_state, s.entered_activity, s.cluster),
        (300, 450, Some(8))
    );
    let ad = slot_ad(&m, &s, 460);
    assert_eq!(string(&ad, "Name"), "slot1_1@host.example");
    assert_eq!(string(&ad, "JobId"), "8.0");
    assert_eq!(string(&ad, "RemoteUser"), "alice@host.example");
    assert_eq!(string(&ad, "ClientMachine"), "host.example");
    assert_eq!(int(&ad, "JobStart"), 500);
    assert_eq!(int(&ad, "SlotTypeID"), -1);
    assert!(ad.contains("DynamicSlot"));

    // Releasing frees the lowest number for the next carve.
    release_dynamic(conn, "slot1_1").unwrap();
    let p = load_slot(conn, "slot1").unwrap().unwrap();
    assert_eq!((p.cpus, p.memory, p.disk), (29, 64000 - 512, 1_000_000));
    let c = carve_dynamic(conn, "slot1", 1, 1, 1, 500).unwrap();
    assert_eq!(c.name, "slot1_1");
    let names: Vec<String> = load_slots(conn)
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(names, ["slot1", "slot1_1", "slot1_2"]);

    // Too big, or not partitionable.
    let e = carve_dynamic(conn, "slot1", 29, 1, 1, 0)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("slot1 has 28 cpus"), "{e}");
    let e = carve_dynamic(conn, "slot1_2", 1, 1, 1, 0)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "slot1_2 is a dynamic slot; only a partitionable slot can be divided"
    );
    assert_eq!(
        release_dynamic(conn, "slot1").unwrap_err().to_string(),
        "slot1 is a partitionable slot; only a dynamic slot can be released"
    );
    assert_eq!(
        clear_claim(conn, "slot9", 0).unwrap_err().to_string(),
        "no slot named slot9"
    );
}

#[test]
fn sync_follows_the_layout_and_spares_claims() {
    let (_d, q) = queue();
    let conn = q.conn();
    let m = machine("");
    sync_slots(conn, &m, 100).unwrap();
    carve_dynamic(conn, "slot1", 4, 4000, 0, 110).unwrap();
    set_claim(conn, "slot1_1", "Claimed", "Busy", &claim(1), 110).unwrap();

    // A bigger machine: the partitionable slot grows, less its child.
    let big = machine("NUM_CPUS = 40");
    let rows = sync_slots(conn, &big, 120).unwrap();
    assert_eq!((rows[0].cpus, rows[0].total_cpus), (36, 40));
    assert_eq!(rows[1].state, "Claimed");

    // Static slots instead: slot1 keeps its child, so it stays until the
    // claim ends; slot2 and slot3 appear.
    let stat = machine("NUM_SLOTS = 3");
    let rows = sync_slots(conn, &stat, 130).unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["slot1", "slot1_1", "slot2", "slot3"]);
    assert_eq!(rows[0].kind, SlotKind::Partitionable);
    assert_eq!(
        (rows[2].kind, rows[2].cpus, rows[2].entered_state),
        (SlotKind::Static, 10, 130)
    );

    release_dynamic(conn, "slot1_1").unwrap();
    let rows = sync_slots(conn, &stat, 140).unwrap();
    assert!(rows.iter().all(|r| r.kind == SlotKind::Static));
    assert_eq!(rows.len(), 3);

    // Fewer slots: an unclaimed one goes, a claimed one stays.
    set_claim(conn, "slot3", "Claimed", "Busy", &claim(2), 150).unwrap();
    let rows = sync_slots(conn, &machine("NUM_SLOTS = 1"), 160).unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["slot1", "slot3"]);
    assert_eq!(rows[0].cpus, 30);
    let s = clear_claim(conn, "slot3", 170).unwrap();
    assert_eq!(
        (s.state.as_str(), s.entered_state, s.claim),
        ("Unclaimed", 170, None)
    );
    let rows = sync_slots(conn, &machine("NUM_SLOTS = 1"), 180).unwrap();
    assert_eq!(rows.len(), 1);
}

// Slot errors inside a queue transaction used to become strings; they now
// reach the caller as the MachineError they were.
#[test]
fn machine_errors_cross_a_transaction_whole() {
    let q: crate::queue::QueueError = MachineError::NoSlot("slot9".into()).into();
    assert_eq!(q.to_string(), "no slot named slot9");
    let crate::queue::QueueError::Above(e) = &q else {
        panic!("expected QueueError::Above, got {q:?}");
    };
    assert!(matches!(
        e.downcast_ref::<MachineError>(),
        Some(MachineError::NoSlot(n)) if n == "slot9"
    ));
}
