//! The job event log (HTCondor's "user log"): the file a job's `log =`
//! command names, to which every change in the job's life is appended as
//! an event in HTCondor's classic text format, so that tools written for
//! HTCondor (`htcondor.JobEventLog`, DAGMan, condor_wait) can follow tern's
//! jobs.
//!
//! [`format`] writes one event as HTCondor does, [`read`] reads them back
//! (and reads HTCondor-written logs), [`append`] adds events to a log file
//! so that concurrent writers never interleave within an event. The tools
//! call [`log_submit`] (tern_submit, event 000) and [`log_job_events`]
//! (tern_rm 009, tern_hold 012, tern_release 013); the shadow will write
//! 001, 004, 005, 006, 010 and 011.
//!
//! tern has no daemons, so there is no real address to put where HTCondor
//! writes a daemon's "sinful string": tern writes [`local_sinful`],
//! `<127.0.0.1:0?alias=HOSTNAME>`, which has the shape HTCondor's readers
//! expect (port 0 says no one listens there).

mod format;
mod read;

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::classad::{ClassAd, Value};
use crate::queue::JobId;
use crate::sys::io_error_text as io_text;

pub use format::{DateForm, format, format_with};
pub use read::{ReadError, read, read_complete};

/// The id an event is about: cluster, proc and subproc (always 0 for tern).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventId {
    pub cluster: i64,
    pub proc: i64,
    pub subproc: i64,
}

impl From<JobId> for EventId {
    fn from(id: JobId) -> EventId {
        EventId {
            cluster: id.cluster,
            proc: id.proc,
            subproc: 0,
        }
    }
}

/// One event: what happened, to which job, when (unix seconds; the log
/// shows it in local time to the second).
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub id: EventId,
    pub time: i64,
    pub kind: EventKind,
}

/// CPU time, in whole seconds, as the usage lines show it
/// (`Usr 0 00:00:01, Sys 0 00:00:00`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rusage {
    pub user: i64,
    pub sys: i64,
}

/// How a job's process ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Exit {
    /// `(1) Normal termination (return value N)`.
    Normal { return_value: i64 },
    /// `(0) Abnormal termination (signal N)`, with the core file if one was
    /// kept.
    Signal {
        signal: i64,
        core_file: Option<String>,
    },
}

/// One row of the `Partitionable Resources` table of events 004 and 005.
/// Numbers print as HTCondor prints them: `%.2f` when they have a
/// fractional part, else as integers (so they read back to two decimals).
#[derive(Clone, Debug, PartialEq)]
pub struct Resource {
    /// `Cpus`, `Disk` (KB), `Memory` (MB), `Gpus`, ...
    pub name: String,
    pub usage: Option<f64>,
    pub request: Option<f64>,
    pub allocated: Option<f64>,
    /// The `Assigned` column (expression text, such as a GPU id list).
    pub assigned: Option<String>,
}

/// The second line of an eviction event.
#[derive(Clone, Debug, PartialEq)]
pub enum Eviction {
    /// `(0) CPU times`: evicted, will run again.
    CpuTimes,
    /// `(1) Job was checkpointed.`
    Checkpointed,
    /// `(0) Job terminated and was requeued`, with how it ended.
    Requeued(Exit),
}

/// What an event says, by event number. Single-line texts (hosts, notes,
/// reasons) are written with newlines turned into `|` and carriage returns
/// into spaces, as HTCondor stores them; the reader trims them.
#[derive(Clone, Debug, PartialEq)]
pub enum EventKind {
    /// 000 `Job submitted from host: <host>`, then the log notes (the job's
    /// `SubmitEventNotes`) and user notes (`SubmitEventUserNotes`), each on
    /// its own line indented by four spaces. HTCondor's reader takes the
    /// first unrecognized note line as log notes, so user notes without log
    /// notes read back as log notes.
    Submit {
        host: String,
        log_notes: Option<String>,
        user_notes: Option<String>,
    },
    /// 001 `Job executing on host: <host>`, then `SlotName: <name>` and the
    /// execute properties as `Attr = value` lines (value is ClassAd
    /// expression text), written sorted by name.
    Execute {
        host: String,
        slot_name: Option<String>,
        props: Vec<(String, String)>,
    },
    /// 004 `Job was evicted.` (with `Code C Subcode S` when `code` is set).
    Evicted {
        code: Option<(i64, i64)>,
        how: Eviction,
        run_remote: Rusage,
        run_local: Rusage,
        sent_bytes: f64,
        received_bytes: f64,
        reason: Option<String>,
        resources: Vec<Resource>,
    },
    /// 005 `Job terminated.`
    Terminated(Box<Termination>),
    /// 006 `Image size of job updated: <KB>` and the optional memory lines.
    ImageSize {
        size_kb: i64,
        memory_usage_mb: Option<i64>,
        resident_set_size_kb: Option<i64>,
        proportional_set_size_kb: Option<i64>,
    },
    /// 009 `Job was aborted.` (removed), with the reason.
    Aborted { reason: Option<String> },
    /// 010 `Job was suspended.` and how many processes were stopped.
    Suspended { processes: i64 },
    /// 011 `Job was unsuspended.`
    Unsuspended,
    /// 012 `Job was held.`, the reason (`Reason unspecified` when there is
    /// none) and `Code C Subcode S` (HoldReasonCode, HoldReasonSubCode).
    Held {
        reason: Option<String>,
        code: i64,
        subcode: i64,
    },
    /// 013 `Job was released.`, with the reason.
    Released { reason: Option<String> },
    /// Any other event number, as read: the text after the date and the
    /// body lines verbatim (without their newlines). tern writes none of
    /// these; the reader keeps them so HTCondor-written logs read whole.
    Other {
        number: u32,
        first_line: String,
        body: Vec<String>,
    },
}

/// The body of a termination event (005).
#[derive(Clone, Debug, PartialEq)]
pub struct Termination {
    pub exit: Exit,
    pub run_remote: Rusage,
    pub run_local: Rusage,
    pub total_remote: Rusage,
    pub total_local: Rusage,
    pub sent_bytes: f64,
    pub received_bytes: f64,
    pub total_sent_bytes: f64,
    pub total_received_bytes: f64,
    pub resources: Vec<Resource>,
}

impl EventKind {
    /// The event number (`ULogEventNumber`).
    pub fn number(&self) -> u32 {
        match self {
            EventKind::Submit { .. } => 0,
            EventKind::Execute { .. } => 1,
            EventKind::Evicted { .. } => 4,
            EventKind::Terminated(_) => 5,
            EventKind::ImageSize { .. } => 6,
            EventKind::Aborted { .. } => 9,
            EventKind::Suspended { .. } => 10,
            EventKind::Unsuspended => 11,
            EventKind::Held { .. } => 12,
            EventKind::Released { .. } => 13,
            EventKind::Other { number, .. } => *number,
        }
    }
}

impl Event {
    /// An event about `id` that happens now (by [`crate::clock::now`]).
    pub fn now(id: impl Into<EventId>, kind: EventKind) -> Event {
        Event {
            id: id.into(),
            time: crate::clock::now(),
            kind,
        }
    }

    /// 009 with `reason`, now.
    pub fn aborted(id: impl Into<EventId>, reason: &str) -> Event {
        Event::now(
            id,
            EventKind::Aborted {
                reason: non_empty(reason),
            },
        )
    }

    /// 012 with `reason` and HoldReasonCode/HoldReasonSubCode, now.
    pub fn held(id: impl Into<EventId>, reason: &str, code: i64, subcode: i64) -> Event {
        Event::now(
            id,
            EventKind::Held {
                reason: non_empty(reason),
                code,
                subcode,
            },
        )
    }

    /// 040, a step of a file transfer, now (HTCondor's
    /// `FileTransferEvent`; tern never queues a transfer, so there are no
    /// "Entered queue" steps). It reads back as [`EventKind::Other`].
    pub fn file_transfer(id: impl Into<EventId>, step: TransferStep) -> Event {
        let (first, body) = match step {
            TransferStep::InputStarted => (
                "Started transferring input files",
                vec![format!("\tTransferring to host: {STARTER_ADDRESS}")],
            ),
            TransferStep::InputFinished => ("Finished transferring input files", vec![]),
            TransferStep::OutputStarted => ("Started transferring output files", vec![]),
            TransferStep::OutputFinished => ("Finished transferring output files", vec![]),
        };
        Event::now(
            id,
            EventKind::Other {
                number: 40,
                first_line: first.to_string(),
                body,
            },
        )
    }

    /// 013 with `reason`, now.
    pub fn released(id: impl Into<EventId>, reason: &str) -> Event {
        Event::now(
            id,
            EventKind::Released {
                reason: non_empty(reason),
            },
        )
    }
}

/// The steps of a file transfer a 040 event reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransferStep {
    InputStarted,
    InputFinished,
    OutputStarted,
    OutputFinished,
}

/// The starter's address in a 040 event: tern's sandbox is on this
/// machine and has no port.
pub const STARTER_ADDRESS: &str = "<127.0.0.1:0>";

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_string())
}

/// The reason HTCondor's tools give when a user acts on a job without
/// `-reason`: `via tern_rm (by user alice)`.
pub fn by_user_reason(tool: &str, user: &str) -> String {
    format!("via {tool} (by user {user})")
}

/// What tern writes where HTCondor writes a daemon's address:
/// `<127.0.0.1:0?alias=HOSTNAME>`.
pub fn local_sinful() -> String {
    format!("<127.0.0.1:0?alias={}>", crate::sys::hostname())
}

/// Failure to write or read a job event log, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum UserLogError {
    #[error("cannot write the job event log '{}': {}{}", .path.display(), io_text(.source), more_logs(*.others))]
    Write {
        path: PathBuf,
        source: io::Error,
        /// How many other logs of the same call also failed.
        others: usize,
    },
    #[error("cannot read the job event log '{}': {}", .path.display(), io_text(.source))]
    Read { path: PathBuf, source: io::Error },
    #[error("{}: {source}", .path.display())]
    Parse { path: PathBuf, source: ReadError },
}

fn more_logs(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => " (and 1 other log)".into(),
        n => format!(" (and {n} other logs)"),
    }
}

/// Writes are cut at event boundaries into pieces of about this size, so
/// that a submit of 100k procs is not one buffer of many megabytes.
const WRITE_CHUNK: usize = 1 << 20;

/// Appends `events` to the log at `path`, creating it (mode 0644, less the
/// umask) if needed, and syncs it to disk as HTCondor does by default (not
/// with CONDOR_FSYNC = false).
/// The log must be a regular file reached without a final symbolic link:
/// a FIFO or device in its place is refused at once, never waited on (a
/// root pass writes events while it holds its lock), and a link is not
/// followed ([`crate::sys::fs::open_regular`]).
///
/// The file is opened `O_APPEND` and every write(2) carries whole events
/// only: all events of a call go in one write unless they exceed about
/// 1 MiB, when they are cut, between events, into several. So writers in
/// other processes may come between two events of one call but never inside
/// an event. (A write the kernel cuts short, which on a local file system
/// happens only when it is full, is completed by further writes.)
pub fn append(path: &Path, events: &[Event]) -> io::Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    let mut file = open_to_append(path)?;
    let mut buf = String::with_capacity(events.len().min(8192) * 128);
    let mut dates = format::Dates::new(DateForm::Iso);
    for e in events {
        let start = buf.len();
        format::write_event(&mut buf, e, &mut dates);
        if buf.len() > WRITE_CHUNK && start > 0 {
            write_whole(&mut file, &buf.as_bytes()[..start])?;
            buf.drain(..start);
        }
    }
    write_whole(&mut file, buf.as_bytes())?;
    if crate::sys::fs::fsync_on() {
        file.sync_data()?;
    }
    Ok(())
}

/// Opens the log at `path` as [`append`] does: to append, created (mode
/// 0644, less the umask) if missing, a regular file reached without a final
/// symbolic link, never waited on.
fn open_to_append(path: &Path) -> io::Result<std::fs::File> {
    crate::sys::fs::open_regular(path, libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT, 0o644)
}

/// One write(2) of `bytes`, continued only if the kernel took part of it.
fn write_whole(file: &mut std::fs::File, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match file.write(bytes) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Reads a whole log file.
pub fn read_file(path: &Path) -> Result<Vec<Event>, UserLogError> {
    let bytes = std::fs::read(path).map_err(|source| UserLogError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    // Reasons and notes are the user's bytes; a stray non-UTF-8 byte in
    // one should not make the whole log unreadable.
    read(&String::from_utf8_lossy(&bytes)).map_err(|source| UserLogError::Parse {
        path: path.to_path_buf(),
        source,
    })
}

/// Where a job's events go: its log file, and the job's owner, as whom
/// (and with whose umask) a root process writes it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UserLog {
    pub path: PathBuf,
    pub owner: crate::sys::identity::JobOwner,
}

/// The event log of a job ad ([`user_log_path`]) with the job's owner.
pub fn user_log(ad: &ClassAd) -> Option<UserLog> {
    Some(UserLog {
        path: user_log_path(ad)?,
        owner: crate::vocab::owner_of(ad),
    })
}

/// Appends each event to its log, one [`append`] per file, keeping the
/// order of `items` within each file. Every file is tried; the error names
/// the first that failed and counts the others.
///
/// A root process writes each log as the job's owner (effective ids
/// switched, see [`crate::sys::identity::act_as`]): the log is created
/// owned by the owner, and a path the owner may not write (a symlink to a
/// root file, another user's directory) fails as it would for the owner.
/// Root never writes a log for a job it may not run as
/// ([`crate::sys::identity::job_owner`]).
pub fn log_job_events(items: &[(UserLog, Event)]) -> Result<(), UserLogError> {
    let mut order: Vec<&UserLog> = Vec::new();
    let mut groups: HashMap<&UserLog, Vec<Event>> = HashMap::new();
    for (log, e) in items {
        groups
            .entry(log)
            .or_insert_with(|| {
                order.push(log);
                Vec::new()
            })
            .push(e.clone());
    }
    let mut first: Option<(PathBuf, io::Error)> = None;
    let mut others = 0;
    for log in order {
        if let Err(e) = append_as_owner(log, &groups[log]) {
            if first.is_none() {
                first = Some((log.path.clone(), e));
            } else {
                others += 1;
            }
        }
    }
    match first {
        None => Ok(()),
        Some((path, source)) => Err(UserLogError::Write {
            path,
            source,
            others,
        }),
    }
}

/// [`append`], as the log's owner when this process is root.
fn append_as_owner(log: &UserLog, events: &[Event]) -> io::Result<()> {
    as_owner(log, || append(&log.path, events))
}

/// Runs `f` as the log's owner when this process is root (effective ids
/// switched), else as this process is: a set-group-id tool has already
/// dropped its group (see [`crate::sys::privilege`]), so it runs as the
/// real user.
fn as_owner<T>(log: &UserLog, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    use crate::sys::identity;
    if !identity::is_root() {
        return f();
    }
    let owner = log
        .owner
        .identity()
        .map_err(|why| io::Error::new(io::ErrorKind::PermissionDenied, why))?;
    identity::as_user(owner.as_ref(), f)?
}

/// The job event log a job ad names: its `UserLog`, made absolute against
/// its `Iwd` if relative. `None` when the job has no log.
pub fn user_log_path(ad: &ClassAd) -> Option<PathBuf> {
    let log = string_attr(ad, "UserLog").filter(|s| !s.is_empty())?;
    let p = PathBuf::from(log);
    if p.is_absolute() {
        return Some(p);
    }
    match string_attr(ad, "Iwd") {
        Some(iwd) => Some(Path::new(&iwd).join(p)),
        None => Some(p),
    }
}

/// A string attribute: the literal when it is one, else evaluated.
fn string_attr(ad: &ClassAd, name: &str) -> Option<String> {
    let e = ad.get(name)?;
    let v = match e.literal_value() {
        Some(v) => v.clone(),
        None => crate::classad::eval_attr(&Rc::new(ad.clone()), name),
    };
    match v {
        Value::Str(s) => Some(s.to_string()),
        _ => None,
    }
}

/// The event log of proc `i` of a cluster being submitted, with its
/// `SubmitEventNotes` and `SubmitEventUserNotes`; `None` when it has no
/// log.
fn proc_log(
    cluster: &crate::submit::Cluster,
    i: usize,
) -> Option<(PathBuf, Option<String>, Option<String>)> {
    // Look in the proc's differences, then the cluster ad, before building
    // a full ad: with 100k procs that copy is the cost. `Some(None)`: not
    // there; `None`: not a plain string, so evaluate it in the full ad.
    let literal = |name: &str| -> Option<Option<String>> {
        let e = cluster.procs[i]
            .get(name)
            .or_else(|| cluster.cluster_ad.get(name));
        match e {
            None => Some(None),
            Some(e) => match e.literal_value() {
                Some(Value::Str(s)) => Some(Some(s.to_string())),
                _ => None,
            },
        }
    };
    match (
        literal("UserLog"),
        literal("SubmitEventNotes"),
        literal("SubmitEventUserNotes"),
    ) {
        (Some(None), ..) => None,
        (Some(Some(log)), Some(n), Some(u)) if Path::new(&log).is_absolute() => {
            Some((PathBuf::from(log), n, u))
        }
        _ => {
            let ad = cluster.full_ad(i);
            let p = user_log_path(&ad)?;
            Some((
                p,
                string_attr(&ad, "SubmitEventNotes"),
                string_attr(&ad, "SubmitEventUserNotes"),
            ))
        }
    }
}

/// The submitter, as whom tern_submit opens and writes the submit events'
/// logs: the real user.
fn submitter() -> crate::sys::identity::JobOwner {
    crate::sys::identity::JobOwner {
        name: crate::sys::real_user_name(),
        uid: Some(i64::from(crate::sys::real_uid())),
        umask: None,
    }
}

/// Checks, before a cluster is queued, that the submitter can open the
/// event log of every proc that has one to append to it, as
/// [`log_submit`] will (creating it if missing, refusing a FIFO, a device
/// or a final symbolic link; each log is opened once). This is
/// condor_submit's log check (`ERROR: Invalid log file`), which it makes
/// before it queues anything. The first log that cannot be opened is
/// returned with why.
pub fn check_submit_logs(cluster: &crate::submit::Cluster) -> Result<(), (PathBuf, io::Error)> {
    let owner = submitter();
    let mut seen = std::collections::HashSet::new();
    for i in 0..cluster.procs.len() {
        let Some((path, ..)) = proc_log(cluster, i) else {
            continue;
        };
        if !seen.insert(path.clone()) {
            continue;
        }
        let log = UserLog {
            path,
            owner: owner.clone(),
        };
        if let Err(e) = as_owner(&log, || open_to_append(&log.path)) {
            return Err((log.path, e));
        }
    }
    Ok(())
}

/// Writes the submit event (000) of every proc of a just-submitted cluster
/// whose ad has a `UserLog`, one [`append`] per log file, with the job's
/// `SubmitEventNotes` and `SubmitEventUserNotes` as notes. The submitter
/// writes its own submit events.
pub fn log_submit(cluster: &crate::submit::Cluster, cluster_id: i64) -> Result<(), UserLogError> {
    let host = local_sinful();
    let time = crate::clock::now();
    let owner = submitter();
    let mut items: Vec<(UserLog, Event)> = Vec::new();
    for i in 0..cluster.procs.len() {
        let Some((log, log_notes, user_notes)) = proc_log(cluster, i) else {
            continue;
        };
        let proc = match cluster.procs[i]
            .get("ProcId")
            .and_then(|e| e.literal_value())
        {
            Some(Value::Int(p)) => *p,
            _ => i as i64,
        };
        items.push((
            UserLog {
                path: log,
                owner: owner.clone(),
            },
            Event {
                id: EventId {
                    cluster: cluster_id,
                    proc,
                    subproc: 0,
                },
                time,
                kind: EventKind::Submit {
                    host: host.clone(),
                    log_notes: log_notes.filter(|s| !s.is_empty()),
                    user_notes: user_notes.filter(|s| !s.is_empty()),
                },
            },
        ));
    }
    log_job_events(&items)
}

#[cfg(test)]
mod tests;
