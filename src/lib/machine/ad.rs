//! A slot's ad, as HTCondor's startd advertises it (Resource.cpp,
//! ResAttributes.cpp, Reqexp.cpp), trimmed to what a one-machine pool
//! uses.

use std::cell::RefCell;
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

/// What a slot's ad is made of that no claim or state changes: its name,
/// kind and size. Ads of slots of the same shape share their fixed part.
#[derive(Debug, PartialEq)]
struct Shape {
    name: String,
    kind: SlotKind,
    ids: [i64; 3],
    parent: Option<String>,
    size: [i64; 6],
}

impl Shape {
    fn of(row: &SlotRow) -> Shape {
        Shape {
            name: row.name.clone(),
            kind: row.kind,
            ids: [row.slot_id, row.sub_id, row.slot_type],
            parent: row.parent.clone(),
            size: [
                row.cpus,
                row.memory,
                row.disk,
                row.total_cpus,
                row.total_memory,
                row.total_disk,
            ],
        }
    }
}

/// The fixed parts of the slot ads a [`Machine`] built, by shape, so that
/// a shadow that builds its slot's ad twice a job (to match the next job,
/// and for the job's `.machine.ad`) builds that part once. At most
/// [`SlotBases::KEPT`] shapes are kept (a pass over many dynamic slots
/// starts again when full). A clone of the machine starts empty: what it
/// is built from may then be changed.
#[derive(Debug, Default)]
pub struct SlotBases(RefCell<Vec<(Shape, ClassAd)>>);

impl SlotBases {
    const KEPT: usize = 64;
}

impl Clone for SlotBases {
    fn clone(&self) -> SlotBases {
        SlotBases::default()
    }
}

/// The ad of slot `row` on `machine` at `now`.
pub fn slot_ad(machine: &Machine, row: &SlotRow, now: i64) -> ClassAd {
    let shape = Shape::of(row);
    let mut ad = {
        let mut bases = machine.slot_bases.0.borrow_mut();
        match bases.iter().find(|(s, _)| *s == shape) {
            Some((_, base)) => base.clone(),
            None => {
                let base = fixed_part(machine, row);
                if bases.len() >= SlotBases::KEPT {
                    bases.clear();
                }
                bases.push((shape, base.clone()));
                base
            }
        }
    };
    state_part(&mut ad, machine, row, now);
    ad
}

/// The part of a slot's ad its [`Shape`] decides.
fn fixed_part(machine: &Machine, row: &SlotRow) -> ClassAd {
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
    ad
}

/// The slot's state, its claim and its job, and what the STARTD_CRON
/// hooks published.
fn state_part(ad: &mut ClassAd, machine: &Machine, row: &SlotRow, now: i64) {
    let s = |ad: &mut ClassAd, n: &str, v: &str| ad.insert(n, Expr::string(v));
    let i = |ad: &mut ClassAd, n: &str, v: i64| ad.insert(n, Expr::int(v));
    s(ad, "State", &row.state);
    s(ad, "Activity", &row.activity);
    i(ad, "EnteredCurrentState", row.entered_state);
    i(ad, "EnteredCurrentActivity", row.entered_activity);
    i(ad, "MyCurrentTime", now);
    i(ad, "LastHeardFrom", now);
    if let Some(u) = &row.remote_user {
        s(ad, "RemoteUser", u);
    }
    if let Some(o) = &row.remote_owner {
        s(ad, "RemoteOwner", o);
    }
    if row.claim.is_some() {
        s(ad, "ClientMachine", &machine.host);
    }
    if let (Some(c), Some(p)) = (row.cluster, row.proc) {
        s(ad, "JobId", &format!("{c}.{p}"));
    }
    if let Some(t) = row.job_start {
        i(ad, "JobStart", t);
    }
    if !machine.hooks.is_empty() {
        crate::hooks::cron::merge::merge(ad, &machine.hooks);
    }
}
