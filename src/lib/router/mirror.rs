//! How a source mirrors its routed copy (spec 5.6, `update_job_status`):
//! the status mapping, the attributes copied when they differ, and the
//! events the source's log gets. Pure: [`mirror`] says what to change and
//! the caller commits it in one transaction.

use crate::classad::unparse::unparse;
use crate::classad::{ClassAd, Expr, Value};
use crate::queue::JobId;
use crate::userlog::{EventKind, Eviction, Rusage};
use crate::vocab::JobStatus;

use super::attr;

/// The attributes copied from the copy into the source when they differ.
pub const COPIED: &[&str] = &[
    "BytesRecvd",
    "BytesSent",
    "CompletionDate",
    "CpusProvisioned",
    "CpusUsage",
    "DiskProvisioned",
    "DiskUsage",
    "ExitBySignal",
    "ExitCode",
    "ExitReason",
    "ExitSignal",
    "ExitStatus",
    "ImageSize",
    "JobCoreDumped",
    "JobCurrentStartDate",
    "JobCurrentStartExecutingDate",
    "JobLastStartDate",
    "JobRunCount",
    "JobStartDate",
    "LastRemoteWallClockTime",
    "MemoryProvisioned",
    "MemoryUsage",
    "NumCkpts",
    "NumJobMatches",
    "NumJobReconnects",
    "NumJobStarts",
    "NumRestarts",
    "NumShadowExceptions",
    "NumShadowStarts",
    "OnExitBySignal",
    "OnExitCode",
    "OnExitSignal",
    "ProportionalSetSize",
    "RemoteSysCpu",
    "RemoteUserCpu",
    "RemoteWallClockTime",
    "ResidentSetSize",
    "ScratchDirFileCount",
    "ShadowBday",
    "SpooledOutputFiles",
    "TransferInputSizeMB",
];

/// What mirroring changes in the source.
#[derive(Clone, Debug, Default)]
pub struct Mirror {
    pub set: Vec<(String, Expr)>,
    pub delete: Vec<String>,
    pub events: Vec<EventKind>,
}

impl Mirror {
    pub fn is_empty(&self) -> bool {
        self.set.is_empty() && self.delete.is_empty() && self.events.is_empty()
    }
}

fn status_of(ad: &ClassAd) -> i64 {
    match ad.get("JobStatus").and_then(|e| e.literal_value()) {
        Some(Value::Int(s)) => *s,
        _ => 0,
    }
}

/// Whether the source's hold is one mirrored from its copy.
pub fn hold_copied(src: &ClassAd) -> bool {
    matches!(
        src.get(attr::HOLD_COPIED).and_then(|e| e.literal_value()),
        Some(Value::Bool(true))
    )
}

/// The changes that make `src` mirror `dest` (the routed copy `dest_id`).
/// A source the user held, or one removed, is never overwritten.
pub fn mirror(src: &ClassAd, dest: &ClassAd, dest_id: JobId) -> Mirror {
    let mut m = Mirror::default();
    let s = status_of(src);
    let d = status_of(dest);
    let held = JobStatus::Held.code();
    if s == JobStatus::Removed.code() || (s == held && !hold_copied(src)) {
        return m;
    }
    for name in COPIED {
        if let Some(e) = dest.get(name)
            && src.get(name).map(unparse) != Some(unparse(e))
        {
            m.set.push((name.to_string(), e.clone()));
        }
    }
    if s != d {
        let set_status = |m: &mut Mirror, to: JobStatus| {
            m.set.push(("JobStatus".into(), Expr::int(to.code())));
        };
        let was_copied_hold = s == held && hold_copied(src);
        if was_copied_hold && d != held {
            // The copy was released: so is the source.
            m.delete.push(attr::HOLD_COPIED.into());
            m.events.push(EventKind::Released {
                reason: Some("routed job released".into()),
            });
        }
        match JobStatus::from_code(d) {
            Some(JobStatus::Idle) => {
                if s == JobStatus::Running.code() {
                    m.events.push(evicted());
                }
                set_status(&mut m, JobStatus::Idle);
            }
            Some(JobStatus::Running) | Some(JobStatus::TransferringOutput) => {
                if s != JobStatus::Running.code() {
                    if s == JobStatus::Idle.code() {
                        m.events.push(executed(dest_id));
                    }
                    set_status(&mut m, JobStatus::Running);
                }
            }
            Some(JobStatus::Held) => {
                if s != JobStatus::Completed.code() {
                    set_status(&mut m, JobStatus::Held);
                    for a in ["HoldReason", "HoldReasonCode", "HoldReasonSubCode"] {
                        if let Some(e) = dest.get(a) {
                            m.set.push((a.into(), e.clone()));
                        }
                    }
                    m.set
                        .push((attr::HOLD_COPIED.into(), Expr::Lit(Value::Bool(true))));
                    let n = match src.get("NumSystemHolds").and_then(|e| e.literal_value()) {
                        Some(Value::Int(n)) => *n,
                        _ => 0,
                    };
                    m.set.push(("NumSystemHolds".into(), Expr::int(n + 1)));
                    if let Some(r) = src.get("ReleaseReason") {
                        m.set.push(("LastReleaseReason".into(), r.clone()));
                        m.delete.push("ReleaseReason".into());
                    }
                    let text = |a: &str| match dest.get(a).and_then(|e| e.literal_value()) {
                        Some(Value::Str(s)) => Some(s.to_string()),
                        _ => None,
                    };
                    let int = |a: &str| match dest.get(a).and_then(|e| e.literal_value()) {
                        Some(Value::Int(n)) => *n,
                        _ => 0,
                    };
                    m.events.push(EventKind::Held {
                        reason: text("HoldReason"),
                        code: int("HoldReasonCode"),
                        subcode: int("HoldReasonSubCode"),
                    });
                }
            }
            // A removed copy is not propagated: the router cleans up.
            Some(JobStatus::Removed) => {}
            // A copy that started and ended between two passes was never
            // seen running. HTCondor then writes no execute event, so the
            // source's log shows a job that ended without starting; a
            // completed copy did run, so the source gets its 001 first.
            Some(JobStatus::Completed) => {
                if s == JobStatus::Idle.code() {
                    m.events.push(executed(dest_id));
                }
                set_status(&mut m, JobStatus::Completed);
            }
            _ => m.set.push(("JobStatus".into(), Expr::int(d))),
        }
    }
    m
}

/// 001 as the router writes it: the host is the routed copy's id.
fn executed(dest_id: JobId) -> EventKind {
    EventKind::Execute {
        host: dest_id.to_string(),
        slot_name: None,
        props: Vec::new(),
    }
}

/// 004 as the router writes it when a running copy went back to idle.
pub fn evicted() -> EventKind {
    EventKind::Evicted {
        code: None,
        how: Eviction::CpuTimes,
        run_remote: Rusage::default(),
        run_local: Rusage::default(),
        sent_bytes: 0.0,
        received_bytes: 0.0,
        reason: None,
        resources: Vec::new(),
    }
}
