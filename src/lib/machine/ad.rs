//! A slot's ad, as HTCondor's startd advertises it (Resource.cpp,
//! ResAttributes.cpp, Reqexp.cpp), trimmed to what a one-machine pool
//! uses.

use std::rc::Rc;

use crate::classad::parser::parse_expr_old;
use crate::classad::{ClassAd, Expr, Value};

use super::Machine;
use super::layout::SlotKind;
use super::store::SlotRow;

/// WithinResourceLimits of partitionable and dynamic slots: the job fits
/// in what the slot has (HTCondor's form when STARTD_JOB_HAS_REQUEST_ATTRS
/// is true, its default).
pub const WITHIN_RESOURCE_LIMITS: &str = "(MY.Cpus > 0 && TARGET.RequestCpus <= MY.Cpus && \
     MY.Memory > 0 && TARGET.RequestMemory <= MY.Memory && \
     MY.Disk > 0 && TARGET.RequestDisk <= MY.Disk)";

thread_local! {
    /// WithinResourceLimits, `START` and `START && (WithinResourceLimits)`,
    /// parsed once per thread (expressions are not `Sync`).
    static BUILT_IN: [Rc<Expr>; 3] = [
        WITHIN_RESOURCE_LIMITS,
        "START",
        "START && (WithinResourceLimits)",
    ]
    .map(|t| Rc::new(parse_expr_old(t).expect("a built-in expression parses")));
}

/// A built-in expression, shared (every slot ad holds it).
fn built_in(i: usize) -> Rc<Expr> {
    BUILT_IN.with(|b| Rc::clone(&b[i]))
}

fn real(x: f64) -> Expr {
    Expr::Lit(Value::Real(x))
}

fn boolean(b: bool) -> Expr {
    Expr::Lit(Value::Bool(b))
}

/// The ad of slot `row` on `machine` at `now`.
pub fn slot_ad(machine: &Machine, row: &SlotRow, now: i64) -> ClassAd {
    let mut ad = ClassAd::with_capacity(64);
    let s = |ad: &mut ClassAd, n: &str, v: &str| ad.insert(n, Expr::string(v));
    let i = |ad: &mut ClassAd, n: &str, v: i64| ad.insert(n, Expr::int(v));

    s(&mut ad, "MyType", "Machine");
    s(&mut ad, "Name", &format!("{}@{}", row.name, machine.host));
    s(&mut ad, "Machine", &machine.host);
    i(&mut ad, "SlotID", row.slot_id);
    if row.kind == SlotKind::Dynamic {
        i(&mut ad, "DSlotId", row.sub_id);
    }
    // A dynamic slot advertises its parent's type negated.
    let type_id = if row.kind == SlotKind::Dynamic {
        -row.slot_type
    } else {
        row.slot_type
    };
    i(&mut ad, "SlotTypeID", type_id);
    s(&mut ad, "SlotType", row.kind.slot_type());
    match row.kind {
        SlotKind::Partitionable => ad.insert("PartitionableSlot", boolean(true)),
        SlotKind::Dynamic => {
            ad.insert("DynamicSlot", boolean(true));
            if let Some(p) = &row.parent {
                s(&mut ad, "ParentSlotName", &format!("{p}@{}", machine.host));
            }
        }
        SlotKind::Static => {}
    }

    // Resources: the slot's, the slot's whole size, the machine's.
    i(&mut ad, "Cpus", row.cpus);
    i(&mut ad, "Memory", row.memory);
    i(&mut ad, "Disk", row.disk);
    i(&mut ad, "TotalSlotCpus", row.total_cpus);
    i(&mut ad, "TotalSlotMemory", row.total_memory);
    i(&mut ad, "TotalSlotDisk", row.total_disk);
    i(&mut ad, "TotalCpus", machine.cpus);
    i(&mut ad, "TotalMemory", machine.memory);
    i(&mut ad, "TotalDisk", machine.disk);
    i(&mut ad, "DetectedCpus", machine.detected_cpus);
    i(&mut ad, "DetectedMemory", machine.detected_memory);

    // What the machine is.
    s(&mut ad, "Arch", &machine.arch);
    s(&mut ad, "OpSys", &machine.opsys.opsys);
    s(&mut ad, "OpSysAndVer", &machine.opsys.and_ver);
    s(&mut ad, "OpSysName", &machine.opsys.name);
    s(&mut ad, "OpSysShortName", &machine.opsys.name);
    s(&mut ad, "OpSysLongName", &machine.opsys.long_name);
    i(&mut ad, "OpSysMajorVer", machine.opsys.major_ver);
    i(&mut ad, "OpSysVer", machine.opsys.ver);
    s(&mut ad, "OpSysLegacy", &machine.opsys.opsys);
    s(&mut ad, "FileSystemDomain", &machine.filesystem_domain);
    s(&mut ad, "UidDomain", &machine.uid_domain);
    ad.insert("HasFileTransfer", boolean(true));
    // The URL schemes the sandbox fetches (HTCondor's curl plugin's, and
    // file, which it copies itself): jobs with URL inputs match on them.
    s(
        &mut ad,
        "HasFileTransferPluginMethods",
        "http,https,ftp,file,dav,davs",
    );
    ad.insert("HasJobDeferral", boolean(true));
    // tern does not measure load per slot: the jobs' share is not known.
    ad.insert("LoadAvg", real(0.0));
    ad.insert("CondorLoadAvg", real(0.0));
    ad.insert("TotalLoadAvg", real(machine.load_avg));
    ad.insert("TotalCondorLoadAvg", real(0.0));

    // Policy.
    ad.insert_shared("Start", Rc::clone(&machine.start));
    ad.insert_shared("Rank", Rc::clone(&machine.rank));
    ad.insert("CurrentRank", real(0.0));
    if row.kind == SlotKind::Static {
        ad.insert_shared("Requirements", built_in(1));
    } else {
        ad.insert_shared("WithinResourceLimits", built_in(0));
        ad.insert_shared("Requirements", built_in(2));
    }
    for (name, e) in &machine.startd_attrs {
        ad.insert_shared(name, Rc::clone(e));
    }

    // State.
    s(&mut ad, "State", &row.state);
    s(&mut ad, "Activity", &row.activity);
    i(&mut ad, "EnteredCurrentState", row.entered_state);
    i(&mut ad, "EnteredCurrentActivity", row.entered_activity);
    i(&mut ad, "MyCurrentTime", now);
    i(&mut ad, "LastHeardFrom", now);
    if let Some(u) = &row.remote_user {
        s(&mut ad, "RemoteUser", u);
    }
    if let Some(o) = &row.remote_owner {
        s(&mut ad, "RemoteOwner", o);
    }
    if row.claim.is_some() {
        s(&mut ad, "ClientMachine", &machine.host);
    }
    if let (Some(c), Some(p)) = (row.cluster, row.proc) {
        s(&mut ad, "JobId", &format!("{c}.{p}"));
    }
    if let Some(t) = row.job_start {
        i(&mut ad, "JobStart", t);
    }
    if !machine.hooks.is_empty() {
        crate::hooks::cron::merge::merge(&mut ad, &machine.hooks);
    }
    ad
}
