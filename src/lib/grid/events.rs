//! The grid events HTCondor's gridmanager writes (grid spec 1.5), as
//! userlog events: 027, 026, 025, 029, 030 have no variant of their own
//! and are written as [`EventKind::Other`] with HTCondor's text.

use crate::queue::JobId;
use crate::userlog::{Event, EventKind, Exit, Rusage, Termination};

fn other(id: JobId, time: i64, number: u32, first: &str, body: Vec<String>) -> Event {
    Event {
        id: id.into(),
        time,
        kind: EventKind::Other {
            number,
            first_line: first.to_string(),
            body,
        },
    }
}

/// 027: the job is in the remote system.
pub fn submitted(id: JobId, now: i64, resource: &str, grid_job_id: &str) -> Event {
    let gid = if grid_job_id.is_empty() {
        "UNKNOWN"
    } else {
        grid_job_id
    };
    other(
        id,
        now,
        27,
        "Job submitted to grid resource",
        vec![
            format!("    GridResource: {resource}"),
            format!("    GridJobId: {gid}"),
        ],
    )
}

/// 026: the resource went down.
pub fn resource_down(id: JobId, now: i64, resource: &str) -> Event {
    other(
        id,
        now,
        26,
        "Detected Down Grid Resource",
        vec![format!("    GridResource: {resource}")],
    )
}

/// 025: the resource is back.
pub fn resource_up(id: JobId, now: i64, resource: &str) -> Event {
    other(
        id,
        now,
        25,
        "Grid Resource Back Up",
        vec![format!("    GridResource: {resource}")],
    )
}

/// 029: no status for too long.
pub fn status_unknown(id: JobId, now: i64) -> Event {
    other(id, now, 29, "The job's remote status is unknown", vec![])
}

/// 030: a status again.
pub fn status_known(id: JobId, now: i64) -> Event {
    other(
        id,
        now,
        30,
        "The job's remote status is known again",
        vec![],
    )
}

/// 001 with the resource as the host, at `time` (Slurm's start time when
/// the job was never seen running).
pub fn executing(id: JobId, time: i64, resource: &str) -> Event {
    Event {
        id: id.into(),
        time,
        kind: EventKind::Execute {
            host: resource.to_string(),
            slot_name: None,
            props: Vec::new(),
        },
    }
}

/// 005 for an exit or a signal.
pub fn terminated(id: JobId, now: i64, exit: Exit) -> Event {
    Event {
        id: id.into(),
        time: now,
        kind: EventKind::Terminated(Box::new(Termination {
            exit,
            run_remote: Rusage::default(),
            run_local: Rusage::default(),
            total_remote: Rusage::default(),
            total_local: Rusage::default(),
            sent_bytes: 0.0,
            received_bytes: 0.0,
            total_sent_bytes: 0.0,
            total_received_bytes: 0.0,
            resources: Vec::new(),
        })),
    }
}
