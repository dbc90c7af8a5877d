//! What `tern_watch_q` (HTCondor's `condor_watch_q`) shows: the state of
//! each watched job, grouped into rows, drawn as a table with progress
//! bars, and the `-exit` conditions tested against it.
//!
//! [`Tracker`] holds the state of every job seen, by cluster. Its states
//! come from two places: the queue and its history ([`follow::QueueFollower`],
//! which reads only the jobs the transaction log says changed), and event
//! logs ([`follow::LogFollower`], for `-files`, read as HTCondor reads them:
//! the last mapped event wins, [`State::from_event`]). [`render`] turns a
//! tracker into the lines of one frame, byte for byte as condor_watch_q 24.0
//! draws them, and the bytes that refresh a terminal in place.

pub mod follow;
pub mod render;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::queue::JobId;
use crate::vocab::JobStatus;

/// A job's state as condor_watch_q counts it. The order is the table's
/// column order (`REMOVED HELD SUSPENDED IDLE RUN DONE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum State {
    Removed,
    Held,
    Suspended,
    Idle,
    Run,
    Done,
}

impl State {
    /// Every state, in column order.
    pub const ALL: [State; 6] = [
        State::Removed,
        State::Held,
        State::Suspended,
        State::Idle,
        State::Run,
        State::Done,
    ];

    /// The column header.
    pub const fn header(self) -> &'static str {
        match self {
            State::Removed => "REMOVED",
            State::Held => "HELD",
            State::Suspended => "SUSPENDED",
            State::Idle => "IDLE",
            State::Run => "RUN",
            State::Done => "DONE",
        }
    }

    /// The state an event of this number puts a job in, or `None` for an
    /// event that does not change it (condor_watch_q 24.0's table). An
    /// unsuspended job (011) counts as idle, as upstream counts it, even
    /// though it runs again: the next event corrects it.
    pub const fn from_event(number: u32) -> Option<State> {
        Some(match number {
            // submit, evicted, shadow exception, released, reconnect failed
            0 | 4 | 7 | 13 | 24 | 11 => State::Idle,
            1 => State::Run,
            5 => State::Done,
            9 => State::Removed,
            10 => State::Suspended,
            12 => State::Held,
            _ => return None,
        })
    }

    /// The state of a job whose `JobStatus` is `status`. A job transferring
    /// its output still counts as running: condor_watch_q 24.0 has a
    /// column for it that no event ever fills.
    pub const fn from_status(status: JobStatus) -> State {
        match status {
            JobStatus::Idle => State::Idle,
            JobStatus::Running | JobStatus::TransferringOutput => State::Run,
            JobStatus::Removed => State::Removed,
            JobStatus::Completed => State::Done,
            JobStatus::Held => State::Held,
            JobStatus::Suspended => State::Suspended,
        }
    }

    /// Whether the job is still in the queue's care (not done, not removed):
    /// the jobs listed in JOB_IDS and meant by `-exit ...,active`.
    pub const fn is_active(self) -> bool {
        !matches!(self, State::Done | State::Removed)
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One cluster's jobs and what groups it.
#[derive(Clone, Debug)]
pub struct Cluster {
    pub id: i64,
    /// The event log the cluster's jobs write (or were read from).
    pub log: Option<PathBuf>,
    /// `JobBatchName`, when the cluster was found in the queue with one.
    pub batch: Option<String>,
    pub jobs: BTreeMap<i64, State>,
}

impl Cluster {
    /// The BATCH key: the batch name, else `ID: <cluster>`.
    pub fn batch_key(&self) -> String {
        match &self.batch {
            Some(b) => b.clone(),
            None => format!("ID: {}", self.id),
        }
    }
}

/// The state of every job seen so far, by cluster.
#[derive(Clone, Debug, Default)]
pub struct Tracker {
    pub clusters: BTreeMap<i64, Cluster>,
}

impl Tracker {
    /// Records `state` for `id`. A cluster seen for the first time takes
    /// its log and batch from `origin`.
    pub fn set(
        &mut self,
        id: JobId,
        state: State,
        origin: impl FnOnce() -> (Option<PathBuf>, Option<String>),
    ) {
        let cluster = self.clusters.entry(id.cluster).or_insert_with(|| {
            let (log, batch) = origin();
            Cluster {
                id: id.cluster,
                log,
                batch,
                jobs: BTreeMap::new(),
            }
        });
        cluster.jobs.insert(id.proc, state);
    }

    /// Whether `cluster` has been seen.
    pub fn has_cluster(&self, cluster: i64) -> bool {
        self.clusters.contains_key(&cluster)
    }

    /// The state of every job seen.
    pub fn states(&self) -> impl Iterator<Item = State> + '_ {
        self.clusters
            .values()
            .flat_map(|c| c.jobs.values().copied())
    }
}

/// How many jobs are in each state, and how many in all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub by_state: [usize; 6],
    pub total: usize,
}

impl Counts {
    pub fn get(&self, s: State) -> usize {
        self.by_state[s.index()]
    }

    fn add(&mut self, s: State) {
        self.by_state[s.index()] += 1;
        self.total += 1;
    }
}

/// What `-groupby` groups the rows by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GroupBy {
    Batch,
    Log,
    Cluster,
}

impl GroupBy {
    /// The key column's header.
    pub const fn header(self) -> &'static str {
        match self {
            GroupBy::Batch => "BATCH",
            GroupBy::Log => "LOG",
            GroupBy::Cluster => "CLUSTER",
        }
    }
}

/// One row of the table before it is drawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The key as shown (the batch, the log as `render::PathStyle` shows
    /// it, or the cluster id).
    pub key: String,
    pub counts: Counts,
    /// The active jobs: `a`, `a, b`, or `first ... last`.
    pub job_ids: String,
}

/// The rows of `tracker` grouped by `by` (`log_key` shows a log path), in
/// the order condor_watch_q 24.0 lists them (by the smallest cluster id of
/// each group), and the counts over all of them.
pub fn rows(
    tracker: &Tracker,
    by: GroupBy,
    log_key: &dyn Fn(Option<&std::path::Path>) -> String,
) -> (Vec<Row>, Counts) {
    // Groups by their key, each with its smallest cluster id; clusters are
    // visited in id order, so the first cluster of a group is its smallest.
    let mut groups: Vec<(String, Vec<&Cluster>)> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for c in tracker.clusters.values() {
        if c.jobs.is_empty() {
            continue;
        }
        let key = match by {
            GroupBy::Batch => c.batch_key(),
            GroupBy::Log => log_key(c.log.as_deref()),
            GroupBy::Cluster => c.id.to_string(),
        };
        match index.get(&key) {
            Some(&i) => groups[i].1.push(c),
            None => {
                index.insert(key.clone(), groups.len());
                groups.push((key, vec![c]));
            }
        }
    }
    let mut totals = Counts::default();
    let rows = groups
        .into_iter()
        .map(|(key, clusters)| {
            let mut counts = Counts::default();
            let mut active: Vec<JobId> = Vec::new();
            for c in clusters {
                for (&proc, &s) in &c.jobs {
                    counts.add(s);
                    totals.add(s);
                    if s.is_active() {
                        active.push(JobId {
                            cluster: c.id,
                            proc,
                        });
                    }
                }
            }
            active.sort();
            let job_ids = match active.as_slice() {
                [a, .., b] if active.len() > 2 => format!("{a} ... {b}"),
                ids => ids
                    .iter()
                    .map(|j| j.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            Row {
                key,
                counts,
                job_ids,
            }
        })
        .collect();
    (rows, totals)
}

/// `all`, `any` or `none` of an `-exit` condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grouper {
    All,
    Any,
    None,
}

/// The job states an `-exit` condition tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusTest {
    Active,
    Done,
    Idle,
    Held,
}

/// One `-exit GROUPER,JOB_STATUS[,EXIT_STATUS]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExitCondition {
    pub grouper: Grouper,
    pub test: StatusTest,
    /// The exit status as given; the process exits with it modulo 256.
    pub code: i64,
    /// `G S` as typed, for the exit message.
    pub text: String,
}

impl ExitCondition {
    /// Parses `G,S[,CODE]`; the error is condor_watch_q's message.
    pub fn parse(spec: &str) -> Result<ExitCondition, String> {
        let parts: Vec<&str> = spec.split(',').collect();
        let (g, s, code) = match parts.as_slice() {
            [g, s] => (*g, *s, None),
            [g, s, c] => (*g, *s, Some(*c)),
            _ => return Err("invalid -exit specification".into()),
        };
        let grouper = match g {
            "all" => Grouper::All,
            "any" => Grouper::Any,
            "none" => Grouper::None,
            _ => {
                return Err(format!(
                    "invalid GROUPER \"{g}\", must be one of {{all, any, none}}"
                ));
            }
        };
        let test = match s {
            "active" => StatusTest::Active,
            "done" => StatusTest::Done,
            "idle" => StatusTest::Idle,
            "held" => StatusTest::Held,
            _ => {
                return Err(format!(
                    "invalid JOB_STATUS \"{s}\", must be one of {{active, done, idle, held}}"
                ));
            }
        };
        let code = match code {
            None => 0,
            // Python's int() takes surrounding blanks and one sign.
            Some(c) => c
                .trim()
                .parse::<i64>()
                .map_err(|_| format!("exit_status must be an integer, but was \"{c}\""))?,
        };
        Ok(ExitCondition {
            grouper,
            test,
            code,
            text: format!("{g} {s}"),
        })
    }

    /// Whether the condition holds over these job states. With no jobs,
    /// `all` and `none` hold and `any` does not, as Python's `all` and
    /// `any` of nothing.
    pub fn holds(&self, states: impl Iterator<Item = State>) -> bool {
        let test = |s: State| match self.test {
            StatusTest::Active => s.is_active(),
            StatusTest::Done => s == State::Done,
            StatusTest::Idle => s == State::Idle,
            StatusTest::Held => s == State::Held,
        };
        let mut states = states;
        match self.grouper {
            Grouper::All => states.all(test),
            Grouper::Any => states.any(test),
            Grouper::None => !states.any(test),
        }
    }

    /// The process exit status: the code modulo 256, as the shell sees
    /// Python's `sys.exit(code)` (-1 is 255, 256 is 0).
    pub fn exit_status(&self) -> u8 {
        self.code.rem_euclid(256) as u8
    }
}

#[cfg(test)]
mod tests;
