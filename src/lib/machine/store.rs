//! The `slots` table: reading it, keeping it in step with the configured
//! layout, carving and releasing dynamic slots, and recording claims.
//!
//! Every function takes a plain connection and runs its statements there,
//! so the caller decides the transaction: the negotiation pass calls these
//! inside its own write transaction, together with the job changes they go
//! with.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::layout::SlotKind;
use super::{Machine, MachineError};

/// One row of the `slots` table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotRow {
    pub name: String,
    pub kind: SlotKind,
    pub slot_id: i64,
    /// The N of slot1_N (0 for static and partitionable slots).
    pub sub_id: i64,
    pub slot_type: i64,
    /// The partitionable slot a dynamic slot was carved from.
    pub parent: Option<String>,
    /// What the slot has: for a partitionable slot, what is left.
    pub cpus: i64,
    pub memory: i64,
    pub disk: i64,
    pub state: String,
    pub activity: String,
    pub entered_state: i64,
    pub entered_activity: i64,
    pub remote_user: Option<String>,
    pub remote_owner: Option<String>,
    pub cluster: Option<i64>,
    pub proc: Option<i64>,
    pub claim: Option<String>,
    pub job_start: Option<i64>,
    /// A partitionable slot's whole size (for other slots, their size).
    pub total_cpus: i64,
    pub total_memory: i64,
    pub total_disk: i64,
}

/// Who a claim is for and which job runs on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimInfo {
    /// RemoteUser: the submitter, user@UID_DOMAIN.
    pub remote_user: String,
    /// RemoteOwner: the job's Owner.
    pub remote_owner: String,
    pub cluster: i64,
    pub proc: i64,
    /// The claim id, new for every claim.
    pub claim: String,
    /// When the job started on the slot (JobStart).
    pub job_start: i64,
}

/// The slots table's columns, in [`from_row`]'s order: a macro, so that
/// the statements built from it are constants (a shadow looks its slot up
/// a few times per job, and `format!` grew the text anew each time).
macro_rules! columns {
    () => {
        "name, kind, slot_id, sub_id, slot_type, parent, cpus, memory, disk, \
         state, activity, entered_state, entered_activity, remote_user, remote_owner, cluster, \
         proc, claim, job_start, total_cpus, total_memory, total_disk"
    };
}

fn from_row(r: &Row<'_>) -> rusqlite::Result<SlotRow> {
    let kind: String = r.get(1)?;
    Ok(SlotRow {
        name: r.get(0)?,
        kind: SlotKind::parse(&kind).unwrap_or(SlotKind::Static),
        slot_id: r.get(2)?,
        sub_id: r.get(3)?,
        slot_type: r.get(4)?,
        parent: r.get(5)?,
        cpus: r.get(6)?,
        memory: r.get(7)?,
        disk: r.get(8)?,
        state: r.get(9)?,
        activity: r.get(10)?,
        entered_state: r.get(11)?,
        entered_activity: r.get(12)?,
        remote_user: r.get(13)?,
        remote_owner: r.get(14)?,
        cluster: r.get(15)?,
        proc: r.get(16)?,
        claim: r.get(17)?,
        job_start: r.get(18)?,
        total_cpus: r.get(19)?,
        total_memory: r.get(20)?,
        total_disk: r.get(21)?,
    })
}

/// Every slot, in SlotID order, each partitionable slot followed by its
/// dynamic slots (slot1, slot1_1, slot1_2, slot2, ...).
pub fn load_slots(conn: &Connection) -> Result<Vec<SlotRow>, MachineError> {
    let mut st = conn.prepare_cached(concat!(
        "SELECT ",
        columns!(),
        " FROM slots ORDER BY slot_id, sub_id, name"
    ))?;
    let rows = st
        .query_map([], from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// One slot, if it exists.
pub fn load_slot(conn: &Connection, name: &str) -> Result<Option<SlotRow>, MachineError> {
    let mut st = conn.prepare_cached(concat!(
        "SELECT ",
        columns!(),
        " FROM slots WHERE name = ?1"
    ))?;
    Ok(st.query_row([name], from_row).optional()?)
}

fn need_slot(conn: &Connection, name: &str) -> Result<SlotRow, MachineError> {
    load_slot(conn, name)?.ok_or_else(|| MachineError::NoSlot(name.to_string()))
}

fn insert(conn: &Connection, s: &SlotRow) -> Result<(), MachineError> {
    conn.prepare_cached(concat!(
        "INSERT INTO slots (",
        columns!(),
        ") VALUES \
         (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, \
          ?20, ?21, ?22)"
    ))?
    .execute(params![
        s.name,
        s.kind.as_str(),
        s.slot_id,
        s.sub_id,
        s.slot_type,
        s.parent,
        s.cpus,
        s.memory,
        s.disk,
        s.state,
        s.activity,
        s.entered_state,
        s.entered_activity,
        s.remote_user,
        s.remote_owner,
        s.cluster,
        s.proc,
        s.claim,
        s.job_start,
        s.total_cpus,
        s.total_memory,
        s.total_disk,
    ])?;
    Ok(())
}

/// The configured layout as rows, every slot Unclaimed and Idle since
/// `now`: what a machine with an empty table has.
pub fn configured_rows(machine: &Machine, now: i64) -> Vec<SlotRow> {
    machine
        .layout
        .iter()
        .map(|s| SlotRow {
            name: s.name.clone(),
            kind: s.kind,
            slot_id: s.slot_id,
            sub_id: 0,
            slot_type: s.slot_type,
            parent: None,
            cpus: s.cpus,
            memory: s.memory,
            disk: s.disk,
            state: "Unclaimed".into(),
            activity: "Idle".into(),
            entered_state: now,
            entered_activity: now,
            remote_user: None,
            remote_owner: None,
            cluster: None,
            proc: None,
            claim: None,
            job_start: None,
            total_cpus: s.cpus,
            total_memory: s.memory,
            total_disk: s.disk,
        })
        .collect()
}

/// Makes the table match the configured layout and returns it.
///
/// Missing slots are created Unclaimed. An unclaimed static slot takes its
/// configured size; a partitionable slot takes its configured whole size
/// and has that less what its dynamic slots hold (never below zero). A slot
/// no longer configured is deleted once it is unclaimed and has no dynamic
/// slots; until then it stays as it is. No claim is touched.
pub fn sync_slots(
    conn: &Connection,
    machine: &Machine,
    now: i64,
) -> Result<Vec<SlotRow>, MachineError> {
    let existing = load_slots(conn)?;
    let children = |parent: &str| -> (i64, i64, i64, usize) {
        existing
            .iter()
            .filter(|r| r.parent.as_deref() == Some(parent))
            .fold((0, 0, 0, 0), |(c, m, d, n), r| {
                (c + r.cpus, m + r.memory, d + r.disk, n + 1)
            })
    };
    for want in configured_rows(machine, now) {
        let Some(have) = existing.iter().find(|r| r.name == want.name) else {
            insert(conn, &want)?;
            continue;
        };
        let (cc, cm, cd, nchildren) = children(&have.name);
        let unclaimed = have.state == "Unclaimed" && have.claim.is_none();
        if have.kind != want.kind {
            // A slot changing kind is replaced once nothing uses it.
            if unclaimed && nchildren == 0 {
                conn.execute("DELETE FROM slots WHERE name = ?1", [&have.name])?;
                insert(conn, &want)?;
            }
            continue;
        }
        match want.kind {
            SlotKind::Partitionable => {
                conn.prepare_cached(
                    "UPDATE slots SET slot_id = ?2, slot_type = ?3, \
                     total_cpus = ?4, total_memory = ?5, total_disk = ?6, \
                     cpus = ?7, memory = ?8, disk = ?9 WHERE name = ?1",
                )?
                .execute(params![
                    want.name,
                    want.slot_id,
                    want.slot_type,
                    want.total_cpus,
                    want.total_memory,
                    want.total_disk,
                    (want.total_cpus - cc).max(0),
                    (want.total_memory - cm).max(0),
                    (want.total_disk - cd).max(0),
                ])?;
            }
            _ if unclaimed => {
                conn.prepare_cached(
                    "UPDATE slots SET slot_id = ?2, slot_type = ?3, cpus = ?4, memory = ?5, \
                     disk = ?6, total_cpus = ?4, total_memory = ?5, total_disk = ?6 \
                     WHERE name = ?1",
                )?
                .execute(params![
                    want.name,
                    want.slot_id,
                    want.slot_type,
                    want.cpus,
                    want.memory,
                    want.disk,
                ])?;
            }
            _ => {}
        }
    }
    for old in &existing {
        let configured = machine.layout.iter().any(|s| s.name == old.name);
        if configured || old.kind == SlotKind::Dynamic {
            continue;
        }
        let unclaimed = old.state == "Unclaimed" && old.claim.is_none();
        if unclaimed && children(&old.name).3 == 0 {
            conn.execute("DELETE FROM slots WHERE name = ?1", [&old.name])?;
        }
    }
    load_slots(conn)
}

/// Carves a dynamic slot of `cpus`, `memory` MiB and `disk` KiB out of the
/// partitionable slot `parent`: `slotP_N` with the lowest free N,
/// Unclaimed and Idle until the caller claims it. The parent keeps what is
/// left.
pub fn carve_dynamic(
    conn: &Connection,
    parent: &str,
    cpus: i64,
    memory: i64,
    disk: i64,
    now: i64,
) -> Result<SlotRow, MachineError> {
    let p = need_slot(conn, parent)?;
    if p.kind != SlotKind::Partitionable {
        return Err(MachineError::WrongKind {
            name: p.name,
            kind: p.kind.as_str(),
            msg: "only a partitionable slot can be divided".into(),
        });
    }
    if cpus > p.cpus || memory > p.memory || disk > p.disk || cpus < 0 || memory < 0 || disk < 0 {
        return Err(MachineError::Insufficient {
            name: p.name,
            cpus: p.cpus,
            memory: p.memory,
            disk: p.disk,
            want_cpus: cpus,
            want_memory: memory,
            want_disk: disk,
        });
    }
    let used: Vec<i64> = conn
        .prepare_cached(
            "SELECT sub_id FROM slots WHERE slot_id = ?1 AND sub_id > 0 ORDER BY sub_id",
        )?
        .query_map([p.slot_id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut sub = 1;
    for u in used {
        if u == sub {
            sub += 1;
        } else if u > sub {
            break;
        }
    }
    let row = SlotRow {
        name: format!("slot{}_{sub}", p.slot_id),
        kind: SlotKind::Dynamic,
        slot_id: p.slot_id,
        sub_id: sub,
        slot_type: p.slot_type,
        parent: Some(p.name.clone()),
        cpus,
        memory,
        disk,
        state: "Unclaimed".into(),
        activity: "Idle".into(),
        entered_state: now,
        entered_activity: now,
        remote_user: None,
        remote_owner: None,
        cluster: None,
        proc: None,
        claim: None,
        job_start: None,
        total_cpus: cpus,
        total_memory: memory,
        total_disk: disk,
    };
    insert(conn, &row)?;
    conn.prepare_cached(
        "UPDATE slots SET cpus = cpus - ?2, memory = memory - ?3, disk = disk - ?4 \
         WHERE name = ?1",
    )?
    .execute(params![p.name, cpus, memory, disk])?;
    Ok(row)
}

/// Deletes the dynamic slot `name` and gives its resources back to its
/// partitionable slot (when that still exists).
pub fn release_dynamic(conn: &Connection, name: &str) -> Result<(), MachineError> {
    let d = need_slot(conn, name)?;
    if d.kind != SlotKind::Dynamic {
        return Err(MachineError::WrongKind {
            name: d.name,
            kind: d.kind.as_str(),
            msg: "only a dynamic slot can be released".into(),
        });
    }
    conn.execute("DELETE FROM slots WHERE name = ?1", [name])?;
    if let Some(parent) = &d.parent {
        conn.prepare_cached(
            "UPDATE slots SET cpus = min(total_cpus, cpus + ?2), \
             memory = min(total_memory, memory + ?3), disk = min(total_disk, disk + ?4) \
             WHERE name = ?1",
        )?
        .execute(params![parent, d.cpus, d.memory, d.disk])?;
    }
    Ok(())
}

/// Records a claim: State and Activity (Claimed/Busy when a job starts),
/// who holds the claim and which job runs. EnteredCurrentState changes
/// only when the state does, EnteredCurrentActivity when either does.
/// Nothing is read back: a shadow claims its slot's next job this way at
/// every job's end, and the row it would return (RETURNING builds it in a
/// table of its own) cost as much as the update.
pub fn set_claim(
    conn: &Connection,
    name: &str,
    state: &str,
    activity: &str,
    claim: &ClaimInfo,
    now: i64,
) -> Result<(), MachineError> {
    let changed = conn
        .prepare_cached(
            "UPDATE slots SET \
             entered_state = CASE WHEN state = ?2 THEN entered_state ELSE ?10 END, \
             entered_activity = CASE WHEN state = ?2 AND activity = ?3 THEN entered_activity \
                                     ELSE ?10 END, \
             state = ?2, activity = ?3, remote_user = ?4, remote_owner = ?5, cluster = ?6, \
             proc = ?7, claim = ?8, job_start = ?9 WHERE name = ?1",
        )?
        .execute(params![
            name,
            state,
            activity,
            claim.remote_user,
            claim.remote_owner,
            claim.cluster,
            claim.proc,
            claim.claim,
            claim.job_start,
            now,
        ])?;
    match changed {
        0 => Err(MachineError::NoSlot(name.to_string())),
        _ => Ok(()),
    }
}

/// Changes only State and Activity (Claimed/Suspended, Preempting/Vacating,
/// back to Claimed/Busy), with the same rule for the entered times.
pub fn set_activity(
    conn: &Connection,
    name: &str,
    state: &str,
    activity: &str,
    now: i64,
) -> Result<SlotRow, MachineError> {
    let row = conn
        .prepare_cached(concat!(
            "UPDATE slots SET \
             entered_state = CASE WHEN state = ?2 THEN entered_state ELSE ?4 END, \
             entered_activity = CASE WHEN state = ?2 AND activity = ?3 THEN entered_activity \
                                     ELSE ?4 END, \
             state = ?2, activity = ?3 WHERE name = ?1 RETURNING ",
            columns!()
        ))?
        .query_row(params![name, state, activity, now], from_row)
        .optional()?;
    row.ok_or_else(|| MachineError::NoSlot(name.to_string()))
}

/// Ends the claim on `name`: Unclaimed and Idle, no user, job or claim id.
/// (A dynamic slot is usually released instead.)
pub fn clear_claim(conn: &Connection, name: &str, now: i64) -> Result<SlotRow, MachineError> {
    let row = conn
        .prepare_cached(concat!(
            "UPDATE slots SET \
             entered_state = CASE WHEN state = 'Unclaimed' THEN entered_state ELSE ?2 END, \
             entered_activity = CASE WHEN state = 'Unclaimed' AND activity = 'Idle' \
                                     THEN entered_activity ELSE ?2 END, \
             state = 'Unclaimed', activity = 'Idle', remote_user = NULL, remote_owner = NULL, \
             cluster = NULL, proc = NULL, claim = NULL, job_start = NULL WHERE name = ?1 \
             RETURNING ",
            columns!()
        ))?
        .query_row(params![name, now], from_row)
        .optional()?;
    row.ok_or_else(|| MachineError::NoSlot(name.to_string()))
}
