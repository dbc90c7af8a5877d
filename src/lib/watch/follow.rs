//! Where job states come from: the queue and its history, followed
//! through the transaction log ([`QueueFollower`]), and event logs read as
//! HTCondor reads them ([`LogFollower`], for `-files`).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::{State, Tracker};
use crate::classad::{ClassAd, Value, eval_attr};
use crate::queue::{JobId, JobRow, Queue, QueueError, Selection};
use crate::userlog::{ReadError, read_complete, user_log_path};

/// Which clusters are watched: condor_watch_q's filters over what the
/// discovery found.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Only these clusters (`-clusters`, and with `-batches` the clusters
    /// the query found).
    pub ids: Option<BTreeSet<i64>>,
    /// No cluster below this one (`-larger-than`).
    pub since: Option<i64>,
}

impl Filter {
    pub fn admits(&self, cluster: i64) -> bool {
        self.ids.as_ref().is_none_or(|ids| ids.contains(&cluster))
            && self.since.is_none_or(|s| cluster >= s)
    }
}

/// What the discovery query asks for: `Owner == u || ClusterId == n ||
/// JobBatchName == "b"`, over the live queue.
#[derive(Clone, Debug, Default)]
pub struct Query {
    pub users: Vec<String>,
    pub clusters: Vec<i64>,
    pub batches: Vec<String>,
}

impl Query {
    pub fn is_empty(&self) -> bool {
        self.users.is_empty() && self.clusters.is_empty() && self.batches.is_empty()
    }
}

/// A cluster the query found: its log and batch name.
#[derive(Clone, Debug)]
pub struct Found {
    pub log: Option<PathBuf>,
    pub batch: Option<String>,
}

/// The clusters the query finds in the live queue, with their logs and
/// batch names, in id order.
pub fn discover(q: &Queue, query: &Query) -> Result<BTreeMap<i64, Found>, QueueError> {
    let mut rows: Vec<JobRow> = Vec::new();
    if !query.users.is_empty() || !query.clusters.is_empty() {
        rows = q.rows(&Selection {
            owners: query.users.clone(),
            clusters: query.clusters.clone(),
            ..Selection::default()
        })?;
    }
    let mut found: BTreeMap<i64, Found> = BTreeMap::new();
    for row in &rows {
        if let std::collections::btree_map::Entry::Vacant(e) = found.entry(row.id.cluster) {
            e.insert(describe(&q.full_ad(row)?));
        }
    }
    if !query.batches.is_empty() {
        // The batch name is in the ads, not a column: every job is read,
        // once, at startup.
        for (row, ad) in q.select(&Selection::default())? {
            if found.contains_key(&row.id.cluster) {
                continue;
            }
            if let Some(b) = str_attr(&ad, "JobBatchName")
                && query.batches.contains(&b)
            {
                found.insert(row.id.cluster, describe(&ad));
            }
        }
    }
    Ok(found)
}

fn describe(ad: &ClassAd) -> Found {
    Found {
        log: user_log_path(ad),
        batch: str_attr(ad, "JobBatchName"),
    }
}

fn str_attr(ad: &ClassAd, name: &str) -> Option<String> {
    ad.get(name)?;
    match eval_attr(&Rc::new(ad.clone()), name) {
        Value::Str(s) => Some(s.to_string()),
        _ => None,
    }
}

/// Follows the watched clusters in the queue: the first read takes every
/// job of the clusters found; after that only the jobs that a transaction
/// log record names are read again, a job that left the queue from the
/// history (by id). A cluster submitted later is watched when it writes
/// to the log of a watched cluster, as condor_watch_q sees such jobs.
pub struct QueueFollower {
    position: i64,
    filter: Filter,
    logs: HashSet<PathBuf>,
    /// Later clusters already looked at and not watched.
    passed_over: HashSet<i64>,
}

impl QueueFollower {
    /// Starts following `found` from the log's current end, after reading
    /// all of their jobs into `tracker`.
    pub fn start(
        q: &Queue,
        found: &BTreeMap<i64, Found>,
        filter: Filter,
        tracker: &mut Tracker,
    ) -> Result<QueueFollower, QueueError> {
        let position = q.log_end()?;
        let f = QueueFollower {
            position,
            filter,
            logs: found.values().filter_map(|c| c.log.clone()).collect(),
            passed_over: HashSet::new(),
        };
        for (&c, info) in found {
            if !f.filter.admits(c) {
                continue;
            }
            let sel = Selection {
                clusters: vec![c],
                ..Selection::default()
            };
            // The cluster's jobs that already left are in the history
            // (upstream reads them from the start of the log).
            let gone = q.history(&sel, None)?.into_iter().map(|(row, _)| row);
            for row in gone.chain(q.rows(&sel)?) {
                if let Some(s) = row.status() {
                    tracker.set(row.id, State::from_status(s), || {
                        (info.log.clone(), info.batch.clone())
                    });
                }
            }
        }
        // Jobs that changed between the log's end and the read above are
        // named by the next poll.
        Ok(f)
    }

    /// Reads what changed since the last poll; whether anything did.
    pub fn poll(&mut self, q: &Queue, tracker: &mut Tracker) -> Result<bool, QueueError> {
        // Upgraded under us: our reading of the log may no longer hold.
        q.check_schema()?;
        let touched = q.touched_since(self.position)?;
        let jobs: Vec<JobId> = if touched.trimmed {
            // The records in between are gone: read every watched job again.
            tracker
                .clusters
                .values()
                .flat_map(|c| {
                    c.jobs.keys().map(|&p| JobId {
                        cluster: c.id,
                        proc: p,
                    })
                })
                .chain(touched.jobs.iter().copied())
                .collect()
        } else {
            touched.jobs
        };
        self.position = touched.end;
        let mut changed = false;
        for id in jobs {
            if !tracker.has_cluster(id.cluster) && !self.adopt(q, id)? {
                continue;
            }
            let Some(state) = job_state(q, id)? else {
                continue;
            };
            let before = tracker
                .clusters
                .get(&id.cluster)
                .and_then(|c| c.jobs.get(&id.proc));
            if before == Some(&state) {
                continue;
            }
            // Only a cluster new to the tracker needs its log (which costs
            // a read of its jobs); a later cluster's batch is not known to
            // 24.0: `ID: N`.
            let log = if tracker.has_cluster(id.cluster) {
                None
            } else {
                self.cluster_log(q, id)?
            };
            tracker.set(id, state, || (log, None));
            changed = true;
        }
        Ok(changed)
    }

    /// Whether a cluster not yet watched is to be: one the filters admit
    /// that writes to a watched log.
    fn adopt(&mut self, q: &Queue, id: JobId) -> Result<bool, QueueError> {
        if self.passed_over.contains(&id.cluster) {
            return Ok(false);
        }
        if !self.filter.admits(id.cluster) {
            self.passed_over.insert(id.cluster);
            return Ok(false);
        }
        let log = self.cluster_log(q, id)?;
        let yes = log.is_some_and(|l| self.logs.contains(&l));
        if !yes {
            self.passed_over.insert(id.cluster);
        }
        Ok(yes)
    }

    /// The event log of `id`'s cluster, read from `id`'s own ad (in the
    /// queue, else in the history).
    fn cluster_log(&self, q: &Queue, id: JobId) -> Result<Option<PathBuf>, QueueError> {
        if let Some(row) = q.row(id)? {
            return Ok(user_log_path(&q.full_ad(&row)?));
        }
        let sel = Selection {
            jobs: vec![id],
            ..Selection::default()
        };
        Ok(q.history(&sel, Some(1))?
            .first()
            .and_then(|(_, ad)| user_log_path(ad)))
    }
}

/// A job's state: from the queue while it is there, else from the
/// history; `None` when it is in neither or has a status tern does not
/// know.
fn job_state(q: &Queue, id: JobId) -> Result<Option<State>, QueueError> {
    let status = match q.row(id)? {
        Some(row) => row.status(),
        None => {
            let sel = Selection {
                jobs: vec![id],
                ..Selection::default()
            };
            q.history(&sel, Some(1))?
                .first()
                .and_then(|(row, _)| row.status())
        }
    };
    Ok(status.map(State::from_status))
}

/// An event log being read: where it is and how far it has been read.
struct LogReader {
    path: PathBuf,
    file: File,
    /// Bytes read but not yet a whole event.
    pending: Vec<u8>,
}

/// Reads event logs from the start and then as they grow, mapping each
/// event to the state of its job ([`State::from_event`]).
pub struct LogFollower {
    readers: Vec<LogReader>,
    filter: Filter,
    batches: BTreeMap<i64, Option<String>>,
}

impl LogFollower {
    /// Opens every log; one that cannot be opened is reported with
    /// condor_watch_q's warning (through `warn`) and never tried again.
    pub fn open(
        paths: &[PathBuf],
        filter: Filter,
        batches: BTreeMap<i64, Option<String>>,
        warn: &mut dyn FnMut(String),
    ) -> LogFollower {
        let mut readers = Vec::new();
        for path in paths {
            match File::open(path) {
                Ok(file) => readers.push(LogReader {
                    path: path.clone(),
                    file,
                    pending: Vec::new(),
                }),
                Err(e) => {
                    let reason = if path.exists() {
                        crate::sys::io_error_text(&e)
                    } else {
                        "File path does not exist".to_string()
                    };
                    warn(format!(
                        "Could not open event log at {} for reading, so it will be ignored. Reason: {reason}",
                        path.display()
                    ));
                }
            }
        }
        LogFollower {
            readers,
            filter,
            batches,
        }
    }

    /// Reads the events appended since the last poll. Whether any state
    /// changed, and the messages about events that did not parse.
    pub fn poll(&mut self, tracker: &mut Tracker) -> (bool, Vec<String>) {
        let mut changed = false;
        let mut messages = Vec::new();
        for r in &mut self.readers {
            let mut buf = Vec::new();
            let pos = r.file.stream_position().unwrap_or(0);
            if let Err(e) = r.file.read_to_end(&mut buf) {
                messages.push(format!(
                    "ERROR: Failed to read events from {}. Reason: {}",
                    r.path.display(),
                    crate::sys::io_error_text(&e)
                ));
                let _ = r.file.seek(SeekFrom::Start(pos));
                continue;
            }
            if buf.is_empty() {
                continue;
            }
            r.pending.extend_from_slice(&buf);
            // Whole events only, found on the bytes: decoding first would
            // turn each invalid byte into three, and an offset into the
            // text would then cut the bytes in the wrong place.
            let end = complete_events(&r.pending);
            if end == 0 {
                continue;
            }
            let chunk = r.pending[..end].to_vec();
            let text = String::from_utf8_lossy(&chunk);
            let (events, used) = parse_events(&text, &r.path, &mut messages);
            let consumed = if text.len() == chunk.len() {
                used.min(end)
            } else {
                end
            };
            r.pending.drain(..consumed);
            for e in events {
                if !self.filter.admits(e.id.cluster) {
                    continue;
                }
                let Some(state) = State::from_event(e.kind.number()) else {
                    continue;
                };
                let id = JobId {
                    cluster: e.id.cluster,
                    proc: e.id.proc,
                };
                let before = tracker
                    .clusters
                    .get(&id.cluster)
                    .and_then(|c| c.jobs.get(&id.proc));
                if before != Some(&state) {
                    changed = true;
                }
                let batch = self.batches.get(&id.cluster).cloned().flatten();
                let path = r.path.clone();
                tracker.set(id, state, || (Some(path), batch));
            }
        }
        (changed, messages)
    }
}

/// The complete events at the start of `text` and the bytes they take. An
/// event that does not parse is skipped (through its `...` line) with
/// condor_watch_q's message, and reading goes on after it.
fn parse_events(
    text: &str,
    path: &Path,
    messages: &mut Vec<String>,
) -> (Vec<crate::userlog::Event>, usize) {
    let mut events = Vec::new();
    let mut used = 0;
    loop {
        match read_complete(&text[used..]) {
            Ok((mut evs, n)) => {
                events.append(&mut evs);
                return (events, used + n);
            }
            Err(e) => {
                messages.push(format!(
                    "ERROR: Failed to parse event from {}. Reason: {e}",
                    path.display()
                ));
                let line = match &e {
                    ReadError::Header { line, .. }
                    | ReadError::Body { line, .. }
                    | ReadError::Unterminated { line, .. } => *line,
                };
                // The events before the bad one read fine; read them, then
                // go on after the bad event's end.
                let rest = &text[used..];
                let start = line_offset(rest, line);
                if let Ok((mut evs, _)) = read_complete(&rest[..event_start(rest, start)]) {
                    events.append(&mut evs);
                }
                match rest[start..].find("\n...") {
                    Some(i) => {
                        let after = start + i + 4;
                        let skip = rest[after..]
                            .find('\n')
                            .map_or(rest.len(), |j| after + j + 1);
                        used += skip;
                    }
                    // The bad event is not finished yet: wait for more.
                    None => return (events, used + event_start(rest, start)),
                }
            }
        }
    }
}

/// The byte offset of line `line` (counting from 1) of `text`.
fn line_offset(text: &str, line: usize) -> usize {
    if line <= 1 {
        return 0;
    }
    text.match_indices('\n')
        .nth(line - 2)
        .map_or(text.len(), |(i, _)| i + 1)
}

/// The start of the event holding the byte `at`: just after the last
/// `...` line before it.
fn event_start(text: &str, at: usize) -> usize {
    match text[..at].rfind("\n...\n") {
        Some(i) => i + 5,
        None if text.starts_with("...\n") && at >= 4 => 4,
        None => 0,
    }
}

/// How many leading bytes of `pending` are whole events: up to the end of
/// the last `...` line (0 when there is none yet).
pub(crate) fn complete_events(pending: &[u8]) -> usize {
    let mut end = 0;
    let mut i = 0;
    while let Some(off) = pending[i..].windows(4).position(|w| w == b"...\n") {
        let at = i + off;
        if at == 0 || pending[at - 1] == b'\n' {
            end = at + 4;
        }
        i = at + 4;
    }
    end
}
