//! The queue against a model: random sequences of submit, rm, hold, release
//! and qedit (and the shadow's start and exit, so that rm meets running
//! jobs; log trims under a follower; reopening the handle) run through
//! `tern::queue::Queue`, through an in-memory model of what each should do,
//! and through a replay of the transaction log. After every step the three
//! must agree: the same jobs with the same status and attributes, the same
//! history, and each change one transaction in the log.
//!
//! A failure prints its seed and the steps that led to it.
//! `TERN_MODEL_SEED=<n>` replays that one sequence; `TERN_MODEL_CASES=<n>`
//! runs more (or fewer) than the default.
//!
//! The generator, the log follower and the views the model is compared
//! through (`common::rng`, `common::replay`) are shared with the crash,
//! concurrency and bad-input tests. Store bugs the sequences found are
//! pinned at the end, as ignored tests named after the bug, until the
//! store is fixed.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use tern::classad::unparse::unparse;
use tern::classad::{ClassAd, Expr, parse_expr};
use tern::queue::{Change, JobId, Limits, Queue, Selection};
use tern::vocab::JobStatus;

use crate::common::NOW;
use crate::common::queue::submit_text;
use crate::common::replay::{Attrs, Replay, queue_view};
use crate::common::rng::Rng;

/// Sequences run by default, and the steps in each.
const CASES: u64 = 200;
const STEPS: usize = 30;
/// Submits stop once the queue holds this many jobs, to keep each check
/// (every job's full ad) cheap.
const MAX_JOBS: usize = 30;

/// The clusters with a cluster ad in the store, read through `conn`, a
/// second connection to its database (the store does not list them).
fn stored_clusters(conn: &rusqlite::Connection) -> Result<BTreeSet<i64>, String> {
    let mut st = conn
        .prepare_cached("SELECT cluster FROM clusters")
        .map_err(|e| e.to_string())?;
    let rows = st.query_map([], |r| r.get(0)).map_err(|e| e.to_string())?;
    rows.collect::<Result<_, _>>().map_err(|e| e.to_string())
}

// ---------------------------------------------------------------------------
// The model.

/// What the model knows of one job: the hot attributes, and every other
/// attribute a step of the sequence set (lower-cased name -> text).
#[derive(Clone, Debug, PartialEq)]
struct MJob {
    owner: String,
    status: i64,
    entered: i64,
    prio: i64,
    attrs: Attrs,
}

impl MJob {
    /// Whether `constraint` holds over the attributes set by the sequence.
    fn holds(&self, constraint: &str) -> bool {
        let mut ad = ClassAd::new();
        for (name, value) in &self.attrs {
            ad.insert(name, parse_expr(value).expect("model values parse"));
        }
        tern::queue::matches_constraint(&parse_expr(constraint).expect("parses"), &ad)
    }
}

#[derive(Default)]
struct Model {
    jobs: BTreeMap<JobId, MJob>,
    history: BTreeMap<JobId, MJob>,
    clusters: BTreeSet<i64>,
    next_cluster: i64,
}

/// Constraints a selection may carry, each with the model's reading of it.
type Pred = fn(&JobId, &MJob) -> bool;
const CONSTRAINTS: &[(&str, Pred)] = &[
    ("JobStatus == 1", |_, j| j.status == JobStatus::Idle.code()),
    ("JobStatus == 5", |_, j| j.status == JobStatus::Held.code()),
    ("JobStatus =!= 2", |_, j| {
        j.status != JobStatus::Running.code()
    }),
    ("ProcId == 0", |id, _| id.proc == 0),
    ("Owner == \"bob\"", |_, j| j.owner == "bob"),
    // A may hold any value qedit gives it, so the ClassAd evaluator reads it.
    ("A > 3", |_, j| j.holds("A > 3")),
    ("JobPrio > 0", |_, j| j.prio > 0),
    ("HoldReasonCode =?= 1", |_, j| {
        j.attrs.get("holdreasoncode").is_some_and(|c| c == "1")
    }),
];

/// A selection as a step names it; the constraint is an index into
/// [`CONSTRAINTS`].
#[derive(Clone, Debug, Default)]
struct Sel {
    clusters: Vec<i64>,
    jobs: Vec<JobId>,
    owners: Vec<String>,
    constraint: Option<usize>,
}

impl Sel {
    fn selection(&self) -> Selection {
        Selection {
            clusters: self.clusters.clone(),
            jobs: self.jobs.clone(),
            owners: self.owners.clone(),
            constraint: self
                .constraint
                .map(|i| parse_expr(CONSTRAINTS[i].0).expect("constraints parse")),
        }
    }

    fn matches(&self, id: &JobId, j: &MJob) -> bool {
        let named = (self.clusters.is_empty() && self.jobs.is_empty() && self.owners.is_empty())
            || self.clusters.contains(&id.cluster)
            || self.jobs.contains(id)
            || self.owners.contains(&j.owner);
        named && self.constraint.is_none_or(|i| CONSTRAINTS[i].1(id, j))
    }
}

/// What the tools do, in small: each decides a job's fate from its status
/// through `Queue::modify`, as tern_rm, tern_hold, tern_release, tern_qedit
/// and the shadow do.
#[derive(Clone, Debug)]
enum Action {
    /// Idle and held jobs leave for history as removed; a running job is
    /// marked removed and stays until its shadow is done.
    Rm,
    Hold(String),
    Release,
    /// Sets one attribute (name, value text).
    Qedit(String, String),
    /// Deletes one attribute: afterwards the job's ad reads it as
    /// undefined, even when its cluster ad has it.
    Delete(String),
    /// The shadow starts an idle job.
    Start,
    /// The shadow's job exits (or, when it was removed, is gone).
    Exit(i64),
}

fn set(attrs: &[(&str, Expr)]) -> Vec<(String, Expr)> {
    attrs
        .iter()
        .map(|(n, e)| (n.to_string(), e.clone()))
        .collect()
}

fn decide(action: &Action, job_status: i64, now: i64) -> Change {
    use JobStatus::*;
    match (action, JobStatus::from_code(job_status)) {
        (Action::Rm, Some(Idle | Held)) => Change::Leave {
            set: set(&[
                ("JobStatus", Removed.expr()),
                ("RemoveReason", Expr::string("via tern_rm")),
            ]),
        },
        (Action::Rm, Some(Running)) => Change::Set(set(&[
            ("JobStatus", Removed.expr()),
            ("RemoveReason", Expr::string("via tern_rm")),
        ])),
        (Action::Rm, _) => Change::Skip("already being removed".into()),
        (Action::Hold(why), Some(Idle | Running)) => Change::Set(set(&[
            ("JobStatus", Held.expr()),
            ("HoldReason", Expr::string(why)),
            ("HoldReasonCode", Expr::int(1)),
        ])),
        (Action::Hold(_), _) => Change::Skip("not idle or running".into()),
        (Action::Release, Some(Held)) => Change::Update {
            set: set(&[
                ("ReleaseReason", Expr::string("via tern_release")),
                ("JobStatus", Idle.expr()),
            ]),
            delete: vec!["HoldReason".into()],
        },
        (Action::Release, _) => Change::Skip("not held".into()),
        (Action::Delete(name), _) => Change::Update {
            set: vec![],
            delete: vec![name.clone()],
        },
        (Action::Qedit(name, value), _) => Change::Set(vec![(
            name.clone(),
            parse_expr(value).expect("qedit values parse"),
        )]),
        (Action::Start, Some(Idle)) => Change::Set(set(&[
            ("JobStatus", Running.expr()),
            ("JobCurrentStartDate", Expr::int(now)),
        ])),
        (Action::Start, _) => Change::Skip("not idle".into()),
        (Action::Exit(code), Some(Running)) => Change::Leave {
            set: set(&[
                ("JobStatus", Completed.expr()),
                ("ExitCode", Expr::int(*code)),
                ("CompletionDate", Expr::int(now)),
            ]),
        },
        (Action::Exit(_), Some(Removed)) => Change::Leave { set: vec![] },
        (Action::Exit(_), _) => Change::Skip("not running".into()),
    }
}

impl Model {
    /// What `Change` should do to a job, written from what the tools
    /// promise rather than from the store's code.
    fn apply(&mut self, id: JobId, change: &Change, now: i64) {
        let (attrs, leave, delete) = match change {
            Change::Skip(_) => return,
            Change::Set(s) => (s, false, &[][..]),
            Change::Leave { set } => (set, true, &[][..]),
            Change::Update { set, delete } => (set, false, &delete[..]),
        };
        let job = self.jobs.get_mut(&id).expect("the model selected it");
        for name in delete {
            job.attrs
                .insert(name.to_ascii_lowercase(), "undefined".into());
        }
        for (name, e) in attrs {
            let text = unparse(e);
            match name.to_ascii_lowercase().as_str() {
                "jobstatus" => {
                    let s: i64 = text.parse().expect("statuses are integers");
                    if s != job.status {
                        job.status = s;
                        job.entered = now;
                    }
                }
                "jobprio" => job.prio = text.parse().expect("the model sets integer priorities"),
                lc => {
                    job.attrs.insert(lc.to_string(), text);
                }
            }
        }
        if leave {
            let job = self.jobs.remove(&id).expect("present");
            self.history.insert(id, job);
            if !self.jobs.keys().any(|j| j.cluster == id.cluster) {
                self.clusters.remove(&id.cluster);
            }
        }
    }
}

/// A random submit description and the attributes the model expects of
/// each of its procs.
#[derive(Clone, Debug)]
struct SubmitSpec {
    owner: String,
    procs: i64,
    a: Option<i64>,
    b: Option<&'static str>,
    c_is_proc: bool,
    args_are_proc: bool,
    priority: Option<i64>,
}

impl SubmitSpec {
    fn random(rng: &mut Rng) -> SubmitSpec {
        SubmitSpec {
            owner: rng.pick(&["alice", "bob"]).to_string(),
            procs: *rng.pick(&[0, 1, 1, 2, 3, 4, 5]),
            a: rng.chance(60).then(|| rng.range(-2, 9)),
            b: rng
                .chance(40)
                .then(|| *rng.pick(&["x", "hello world", "semi;colon"])),
            c_is_proc: rng.chance(40),
            args_are_proc: rng.chance(50),
            priority: rng.chance(30).then(|| rng.range(-3, 3)),
        }
    }

    fn text(&self) -> String {
        let mut t = String::from("executable = /bin/echo\n");
        if self.args_are_proc {
            t.push_str("arguments = $(Process)\n");
        }
        if let Some(a) = self.a {
            writeln!(t, "+A = {a}").unwrap();
        }
        if let Some(b) = self.b {
            writeln!(t, "+B = \"{b}\"").unwrap();
        }
        if self.c_is_proc {
            t.push_str("+C = $(Process)\n");
        }
        if let Some(p) = self.priority {
            writeln!(t, "priority = {p}").unwrap();
        }
        writeln!(t, "queue {}", self.procs).unwrap();
        t
    }

    fn job(&self, proc: i64, now: i64) -> MJob {
        let mut attrs = Attrs::new();
        if let Some(a) = self.a {
            attrs.insert("a".into(), a.to_string());
        }
        if let Some(b) = self.b {
            attrs.insert("b".into(), format!("\"{b}\""));
        }
        if self.c_is_proc {
            attrs.insert("c".into(), proc.to_string());
        }
        if self.args_are_proc {
            attrs.insert("args".into(), format!("\"{proc}\""));
        }
        MJob {
            owner: self.owner.clone(),
            status: JobStatus::Idle.code(),
            entered: now,
            prio: self.priority.unwrap_or(0),
            attrs,
        }
    }
}

/// Values tern_qedit may be given: every kind of literal, strings that need
/// escaping, and expressions.
const QEDIT_VALUES: &[&str] = &[
    "0",
    "7",
    "-12",
    "2.5",
    "true",
    "undefined",
    "\"plain\"",
    "\"\"",
    r#""quote\" inside""#,
    r#""back\\slash""#,
    r#""new\nline and\ttab""#,
    "\"ünïcødé ☃\"",
    "\"semi; ] [ brackets\"",
    "A + 1",
    "ifThenElse(B =?= undefined, 1, 2)",
    "{ 1, \"two\", 3.0 }",
    "[ x = 1; y = \"z\" ]",
    "9223372036854775807",
    "-9223372036854775808",
    "1e300",
    "-0.0",
    "0.1",
    "\"control \u{1} char\"",
    "relTime(\"1:02:03\")",
    "error",
];
/// Names qedit sets; submits set the first three in cluster ads.
const QEDIT_NAMES: &[&str] = &["A", "a", "B", "Foo", "HoldReason", "Weird_Name_2"];
/// Whether deletes may name attributes a cluster ad has. Off until the
/// store masks a job's own value too (see
/// `deleting_a_job_value_over_a_cluster_value_leaves_it_undefined`).
const DELETE_OVER_CLUSTER_VALUES: bool = false;

#[derive(Clone, Debug)]
enum Step {
    Submit(SubmitSpec),
    Modify(Action, Sel),
    /// Registers a follower this many records behind the replay, trims the
    /// log to `keep` records, and checks nothing the follower needs went.
    Trim {
        lag: i64,
        keep: i64,
    },
    /// Drops the handle and opens the queue again.
    Reopen,
}

fn random_sel(rng: &mut Rng, m: &Model) -> Sel {
    let ids: Vec<JobId> = m.jobs.keys().chain(m.history.keys()).copied().collect();
    let any_job = |rng: &mut Rng| -> JobId {
        if ids.is_empty() || rng.chance(10) {
            JobId {
                cluster: rng.range(1, m.next_cluster + 1),
                proc: rng.range(0, 5),
            }
        } else {
            *rng.pick(&ids)
        }
    };
    let mut sel = Sel::default();
    for _ in 0..rng.range(0, 2) {
        match rng.below(3) {
            0 => sel.clusters.push(any_job(rng).cluster),
            1 => sel.jobs.push(any_job(rng)),
            _ => sel
                .owners
                .push(rng.pick(&["alice", "bob", "carol"]).to_string()),
        }
    }
    if rng.chance(35) {
        sel.constraint = Some(rng.below(CONSTRAINTS.len() as u64) as usize);
    }
    sel
}

fn random_step(rng: &mut Rng, m: &Model) -> Step {
    loop {
        let step = match rng.below(100) {
            0..=24 => {
                if m.jobs.len() >= MAX_JOBS {
                    continue;
                }
                Step::Submit(SubmitSpec::random(rng))
            }
            25..=36 => Step::Modify(Action::Rm, random_sel(rng, m)),
            37..=48 => {
                let why = rng.pick(&["because", "disk \"full\""]).to_string();
                Step::Modify(Action::Hold(why), random_sel(rng, m))
            }
            49..=60 => Step::Modify(Action::Release, random_sel(rng, m)),
            61..=73 => {
                let name = rng.pick(QEDIT_NAMES).to_string();
                let value = if rng.chance(15) {
                    // tern_prio's edit, which goes to the JobPrio column.
                    return Step::Modify(
                        Action::Qedit("JobPrio".into(), rng.range(-5, 5).to_string()),
                        random_sel(rng, m),
                    );
                } else {
                    rng.pick(QEDIT_VALUES).to_string()
                };
                Step::Modify(Action::Qedit(name, value), random_sel(rng, m))
            }
            74..=76 => {
                let names = if DELETE_OVER_CLUSTER_VALUES {
                    QEDIT_NAMES
                } else {
                    &QEDIT_NAMES[3..]
                };
                Step::Modify(
                    Action::Delete(rng.pick(names).to_string()),
                    random_sel(rng, m),
                )
            }
            77..=87 => Step::Modify(Action::Start, random_sel(rng, m)),
            88..=94 => Step::Modify(Action::Exit(rng.range(0, 3)), random_sel(rng, m)),
            95..=97 => Step::Trim {
                lag: rng.range(0, 40),
                keep: rng.range(0, 100),
            },
            _ => Step::Reopen,
        };
        return step;
    }
}

/// One sequence: its state, and the steps taken so far for the report.
struct Run {
    dir: tempfile::TempDir,
    q: Option<Queue>,
    /// A reader of the same database, for what the store does not show.
    reader: rusqlite::Connection,
    model: Model,
    replay: Replay,
    /// The jobs in history already compared with the model.
    checked_history: BTreeSet<JobId>,
    now: i64,
}

impl Run {
    fn new() -> Result<Run, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let q = Queue::open(&dir.path().join("spool"), true)
            .map_err(|e| e.to_string())?
            .ok_or("no queue")?;
        let reader = rusqlite::Connection::open(q.path()).map_err(|e| e.to_string())?;
        Ok(Run {
            dir,
            q: Some(q),
            reader,
            model: Model {
                next_cluster: 1,
                ..Default::default()
            },
            replay: Replay::default(),
            checked_history: BTreeSet::new(),
            now: NOW,
        })
    }

    fn q(&mut self) -> &mut Queue {
        self.q.as_mut().expect("the queue is open")
    }

    fn step(&mut self, step: &Step) -> Result<(), String> {
        let before = self.replay.transactions;
        let mut changes = false;
        match step {
            Step::Submit(spec) => {
                let now = self.now;
                let id = submit_text(self.q(), &spec.text(), &spec.owner, now)?;
                if id != self.model.next_cluster {
                    return Err(format!(
                        "submit gave cluster {id}, the model expected {}",
                        self.model.next_cluster
                    ));
                }
                self.model.next_cluster += 1;
                self.model.clusters.insert(id);
                for p in 0..spec.procs {
                    self.model.jobs.insert(
                        JobId {
                            cluster: id,
                            proc: p,
                        },
                        spec.job(p, now),
                    );
                }
                changes = true;
            }
            Step::Modify(action, sel) => {
                let now = self.now;
                let expected: Vec<(JobId, Change)> = self
                    .model
                    .jobs
                    .iter()
                    .filter(|(id, j)| sel.matches(id, j))
                    .map(|(id, j)| (*id, decide(action, j.status, now)))
                    .collect();
                let done = self
                    .q()
                    .modify(&sel.selection(), now, |row, _| {
                        decide(action, row.status, now)
                    })
                    .map_err(|e| format!("modify: {e}"))?;
                let want: Vec<JobId> = expected.iter().map(|(id, _)| *id).collect();
                let got: Vec<JobId> = done.iter().map(|(id, _)| *id).collect();
                if want != got {
                    return Err(format!(
                        "modify touched {got:?}, the model selects {want:?}"
                    ));
                }
                for (id, change) in &expected {
                    changes |= !matches!(change, Change::Skip(_));
                    self.model.apply(*id, change, now);
                }
            }
            Step::Trim { lag, keep } => {
                let position = self.replay.position;
                let q = self.q();
                // A follower can only start where the log still is.
                let start = q.log_start().map_err(|e| e.to_string())?;
                let oldest = if start == 0 { position } else { start - 1 };
                let follower = (position - lag).max(oldest);
                q.set_follower("model", follower)
                    .map_err(|e| e.to_string())?;
                q.trim(&Limits {
                    log_max_records: *keep,
                    history_max_jobs: 1_000_000,
                    ..Limits::default()
                })
                .map_err(|e| e.to_string())?;
                let kept = q.log_since(follower).map_err(|e| e.to_string())?;
                let seqs: Vec<i64> = kept.iter().map(|r| r.seq).collect();
                let want: Vec<i64> = (follower + 1..=position).collect();
                if seqs != want {
                    return Err(format!(
                        "after a trim under a follower at {follower}, the log holds {seqs:?} after it"
                    ));
                }
                q.remove_follower("model").map_err(|e| e.to_string())?;
            }
            Step::Reopen => {
                self.q = None;
                self.q = Some(
                    Queue::open(&self.dir.path().join("spool"), false)
                        .map_err(|e| e.to_string())?
                        .ok_or("the queue is gone")?,
                );
            }
        }
        self.now += 1;
        let position = self.replay.position;
        let records = self.q().log_since(position).map_err(|e| e.to_string())?;
        self.replay.apply(&records)?;
        if self.replay.in_transaction() {
            return Err("the log ends inside a transaction".into());
        }
        let made = self.replay.transactions - before;
        if made != usize::from(changes) {
            return Err(format!(
                "the step wrote {made} transactions to the log; the model expects {}",
                usize::from(changes)
            ));
        }
        self.check()
    }

    /// The queue, the model and the replayed log agree.
    fn check(&mut self) -> Result<(), String> {
        let q = self.q.as_ref().expect("open");
        let (view, jobs) = queue_view(q).map_err(|e| format!("select: {e}"))?;
        if let Some(d) = view.difference(&self.replay.view()?, ("the queue", "the log")) {
            return Err(d);
        }
        let clusters = stored_clusters(&self.reader)?;
        if clusters != self.replay.clusters() || clusters != self.model.clusters {
            return Err(format!(
                "cluster ads: the store has {clusters:?}, the log {:?}, the model {:?}",
                self.replay.clusters(),
                self.model.clusters
            ));
        }
        let ids: Vec<&JobId> = jobs.iter().map(|(row, _)| &row.id).collect();
        let model_ids: Vec<&JobId> = self.model.jobs.keys().collect();
        if ids != model_ids {
            return Err(format!("the queue holds {ids:?}, the model {model_ids:?}"));
        }
        for (row, ad) in &jobs {
            agree(&row.id, ad, &self.model.jobs[&row.id], "queue")?;
        }
        // History only grows here: the jobs that just left are checked now,
        // all of it at the end of the sequence.
        let left: Vec<JobId> = self
            .model
            .history
            .keys()
            .filter(|id| !self.checked_history.contains(id))
            .copied()
            .collect();
        if !left.is_empty() {
            self.check_history(left.clone())?;
            self.checked_history.extend(left);
        }
        Ok(())
    }

    /// History holds exactly the jobs the model says left, among `ids` (all
    /// when empty).
    fn check_history(&self, ids: Vec<JobId>) -> Result<(), String> {
        let q = self.q.as_ref().expect("open");
        let sel = Selection {
            jobs: ids.clone(),
            ..Default::default()
        };
        let history = q.history(&sel, None).map_err(|e| format!("history: {e}"))?;
        let got: BTreeSet<&JobId> = history.iter().map(|(row, _)| &row.id).collect();
        let want: BTreeSet<&JobId> = self
            .model
            .history
            .keys()
            .filter(|id| ids.is_empty() || ids.contains(id))
            .collect();
        if got != want {
            return Err(format!("history holds {got:?}, the model {want:?}"));
        }
        for (row, ad) in &history {
            agree(&row.id, ad, &self.model.history[&row.id], "history")?;
        }
        Ok(())
    }
}

/// A job's full ad holds what the model says.
fn agree(id: &JobId, ad: &ClassAd, m: &MJob, place: &str) -> Result<(), String> {
    let mut want: Attrs = m.attrs.clone();
    // A deleted attribute may be gone or undefined.
    want.retain(|name, value| !(value == "undefined" && ad.get(name).is_none()));
    want.insert("clusterid".into(), id.cluster.to_string());
    want.insert("procid".into(), id.proc.to_string());
    want.insert("owner".into(), format!("\"{}\"", m.owner));
    want.insert("jobstatus".into(), m.status.to_string());
    want.insert("enteredcurrentstatus".into(), m.entered.to_string());
    want.insert("jobprio".into(), m.prio.to_string());
    for (name, value) in &want {
        let v = ad.get(name).map(unparse);
        let expected = unparse(&parse_expr(value).map_err(|e| format!("{value}: {e}"))?);
        if v.as_deref() != Some(expected.as_str()) {
            return Err(format!(
                "{place} job {id}: {name} is {v:?}, the model says {expected}"
            ));
        }
    }
    Ok(())
}

/// Runs one sequence; on failure, the steps that led to it.
fn run_sequence(seed: u64) -> Result<usize, String> {
    let mut rng = Rng::new(seed);
    let mut run = Run::new()?;
    let mut trace = String::new();
    for i in 0..STEPS {
        let step = if i == 0 {
            Step::Submit(SubmitSpec::random(&mut rng))
        } else {
            random_step(&mut rng, &run.model)
        };
        writeln!(trace, "  {i:2}: {step:?}").unwrap();
        if let Err(e) = run.step(&step) {
            return Err(format!("seed {seed}, step {i}: {e}\nsteps:\n{trace}"));
        }
    }
    run.check_history(vec![])
        .map_err(|e| format!("seed {seed}, at the end: {e}\nsteps:\n{trace}"))?;
    let q = run.q.as_ref().expect("open");
    let ok = q.integrity_check().map_err(|e| e.to_string())?;
    if ok != "ok" {
        return Err(format!("seed {seed}: integrity_check: {ok}"));
    }
    // A follower starting from the beginning (when nothing was trimmed)
    // arrives at the same queue.
    if q.log_start().map_err(|e| e.to_string())? <= 1 {
        let mut fresh = Replay::default();
        fresh.apply(&q.log_since(0).map_err(|e| e.to_string())?)?;
        if fresh.ads != run.replay.ads {
            return Err(format!(
                "seed {seed}: a fresh replay differs\nsteps:\n{trace}"
            ));
        }
    }
    Ok(run.replay.transactions)
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[test]
fn random_sequences_agree_with_the_model_and_the_log() {
    let seeds: Vec<u64> = match env_u64("TERN_MODEL_SEED") {
        Some(s) => vec![s],
        None => (0..env_u64("TERN_MODEL_CASES").unwrap_or(CASES)).collect(),
    };
    let mut transactions = 0;
    for seed in seeds {
        match run_sequence(seed) {
            Ok(n) => transactions += n,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(transactions > 0);
}

// ---------------------------------------------------------------------------
// Cases the random sequences found, pinned.

/// A queue holding one cluster of `text`, and a replay of its log.
fn queue_with(text: &str) -> (tempfile::TempDir, Queue, Replay) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut q = Queue::open(&dir.path().join("spool"), true)
        .expect("opens")
        .expect("creates");
    submit_text(&mut q, text, "alice", NOW).expect("submits");
    let mut replay = Replay::default();
    replay.apply(&q.log_since(0).unwrap()).unwrap();
    (dir, q, replay)
}

/// Applies `change` to every job, then returns job 1.0's `name` as the
/// queue has it and as the log says.
fn after(q: &mut Queue, replay: &mut Replay, change: Change, name: &str) -> (String, String) {
    q.modify(&Selection::default(), NOW + 1, |_, _| change.clone())
        .unwrap();
    replay
        .apply(&q.log_since(replay.position).unwrap())
        .unwrap();
    let (view, jobs) = queue_view(q).unwrap();
    if let Some(d) = view.difference(&replay.view().unwrap(), ("the queue", "the log")) {
        eprintln!("{d}");
    }
    let in_queue = jobs[0].1.get(name).map_or("<absent>".into(), unparse);
    let jid = JobId {
        cluster: 1,
        proc: 0,
    };
    let logged = replay.view().unwrap();
    let in_log = logged.jobs[&jid]
        .get(&name.to_ascii_lowercase())
        .or(logged.clusters[&1].get(&name.to_ascii_lowercase()))
        .cloned()
        .unwrap_or("<absent>".into());
    (in_queue, in_log)
}

#[test]
fn deleting_an_inherited_attribute_masks_it_in_the_queue_and_the_log() {
    let (_d, mut q, mut replay) = queue_with("executable = /bin/echo\n+A = 1\nqueue\n");
    let delete = Change::Update {
        set: vec![],
        delete: vec!["A".into()],
    };
    let got = after(&mut q, &mut replay, delete, "A");
    assert_eq!(got, ("undefined".into(), "undefined".into()));
}

#[test]

fn deleting_a_job_value_over_a_cluster_value_leaves_it_undefined() {
    let (_d, mut q, mut replay) = queue_with("executable = /bin/echo\n+A = 1\nqueue\n");
    let edit = Change::Set(vec![("A".into(), Expr::int(2))]);
    assert_eq!(
        after(&mut q, &mut replay, edit, "A"),
        ("2".into(), "2".into())
    );
    let delete = Change::Update {
        set: vec![],
        delete: vec!["A".into()],
    };
    // The log's DELETE_ATTR on a chained job ad masks the cluster's value
    // (HTCondor's ClassAd::Delete); the store uncovers it: A = 1 again.
    let got = after(&mut q, &mut replay, delete, "A");
    assert_eq!(got, ("undefined".into(), "undefined".into()));
}

#[test]

fn jobprio_set_to_an_expression_reads_the_same_in_the_queue_and_the_log() {
    let (_d, mut q, mut replay) = queue_with("executable = /bin/echo\nqueue\n");
    let edit = Change::Set(vec![("JobPrio".into(), parse_expr("2 + 3").unwrap())]);
    let got = after(&mut q, &mut replay, edit, "JobPrio");
    assert_eq!(got.0, got.1);
}
