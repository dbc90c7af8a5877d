//! What must hold once a round is at rest, however many processes were
//! killed and wherever: each check returns the problems it found, one
//! line each (an empty list is a pass).
//!
//! - [`accounting`]: every job in exactly one place (queue or history,
//!   never both, never twice); a submit that printed its cluster has all
//!   its jobs there, a killed one all or none; each routed copy has at
//!   most one job in the other queue, and none there once the copy has
//!   left our queue; each piece of fetched work became at most one job.
//! - [`overlaps`]: no two runs of one job at the same time, by the stamps
//!   its runs left (a run killed with its shadow leaves no end stamp, but
//!   its beats stop when it dies: they must stop before the next run), and
//!   to the instant by the lock each run holds while it lives (a run that
//!   finds it held stamps so).
//! - [`outputs`]: the output files under their final names: a completed
//!   job's are complete; a job that did not complete has, without file
//!   transfer, at most a beginning of its Out and Err (it writes them
//!   itself as it runs), and with file transfer either nothing or a
//!   complete file (the shadow copies them back whole).
//! - [`event_log`]: the jobs' event log reads whole, but for events a
//!   kill cut short (counted).
//! - [`soundness`]: `PRAGMA integrity_check` is ok and the transaction
//!   log, replayed, is the queue.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::rc::Rc;

use tern::classad::ClassAd;
use tern::queue::{JobId, Queue, Selection};

use super::workload::{Outcome, Submit};
use super::world::World;
use crate::common::replay::{Replay, queue_view};

/// One job of one queue, where it was found.
pub struct Job {
    pub remote: bool,
    pub id: JobId,
    pub in_history: bool,
    pub status: i64,
    pub ad: Rc<ClassAd>,
}

impl Job {
    fn int(&self, name: &str) -> Option<i64> {
        self.ad.eval_int(name)
    }
    fn text(&self, name: &str) -> Option<String> {
        self.ad.eval_str(name)
    }
    fn place(&self) -> String {
        let q = if self.remote { "there" } else { "here" };
        let h = if self.in_history { "history" } else { "queue" };
        format!("{} ({q}, {h})", self.id)
    }
    /// The tag its runs stamp with: the source's id for submitted jobs,
    /// their copies and the copies' remote jobs, `F<n>` for fetched work.
    pub fn tag(&self) -> Option<String> {
        if let Some(n) = self.int("FaultFetch") {
            return Some(format!("F{n}"));
        }
        self.int("FaultSubmit")?;
        let args = self.text("Arguments")?;
        let first = args.split_whitespace().nth(2)?;
        first.strip_suffix(":start").map(str::to_string)
    }
}

/// Every job of both queues, from the queue and from the history.
pub fn load(world: &World) -> Result<Vec<Job>, String> {
    let mut jobs = Vec::new();
    for (remote, spool) in [(false, world.spool()), (true, world.remote_spool())] {
        let Some(q) = Queue::open(&spool, false).map_err(|e| e.to_string())? else {
            continue;
        };
        let sel = Selection::default();
        let queued = q.select(&sel).map_err(|e| e.to_string())?;
        let history = q.history(&sel, None).map_err(|e| e.to_string())?;
        for (in_history, rows) in [(false, queued), (true, history)] {
            jobs.extend(rows.into_iter().map(|(r, ad)| Job {
                remote,
                id: r.id,
                in_history,
                status: r.status,
                ad: Rc::new(ad),
            }));
        }
    }
    Ok(jobs)
}

/// See the module docs.
pub fn accounting(jobs: &[Job], submits: &[Submit], work_items: u64) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen: BTreeMap<(bool, JobId), Vec<String>> = BTreeMap::new();
    for j in jobs {
        seen.entry((j.remote, j.id)).or_default().push(j.place());
    }
    for places in seen.values().filter(|p| p.len() > 1) {
        problems.push(format!("one job in more than one place: {places:?}"));
    }
    // Submitted here by tern_submit: neither a routed copy nor fetched.
    let mut by_seq: BTreeMap<i64, BTreeMap<i64, BTreeSet<i64>>> = BTreeMap::new();
    for j in jobs
        .iter()
        .filter(|j| !j.remote && j.text("RoutedFromJobId").is_none())
    {
        if let Some(seq) = j.int("FaultSubmit") {
            let procs = by_seq
                .entry(seq)
                .or_default()
                .entry(j.id.cluster)
                .or_default();
            procs.insert(j.id.proc);
        }
    }
    for s in submits {
        let clusters = by_seq.remove(&(s.seq as i64)).unwrap_or_default();
        problems.extend(submit_problems(s, &clusters));
    }
    for (seq, clusters) in by_seq {
        problems.push(format!(
            "clusters {clusters:?} of submit {seq}, which was never made"
        ));
    }
    let mut remote_by_tag: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for j in jobs.iter().filter(|j| j.remote) {
        if let Some(t) = j.text("SubmitterGlobalJobId") {
            remote_by_tag.entry(t).or_default().push(j.place());
        }
    }
    for (tag, places) in remote_by_tag.iter().filter(|(_, p)| p.len() > 1) {
        problems.push(format!(
            "routed copy {tag} submitted there more than once: {places:?}"
        ));
    }
    problems.extend(orphans_there(jobs));
    let mut fetched: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for j in jobs {
        if let Some(n) = j.int("FaultFetch") {
            fetched.entry(n).or_default().push(j.place());
        }
    }
    for (n, places) in &fetched {
        if places.len() > 1 || *n < 1 || *n as u64 > work_items {
            problems.push(format!("work item {n} became {places:?}"));
        }
    }
    problems
}

/// Jobs left in the other queue whose copy here has left our queue: no
/// gridmanager looks after them any more (a completed one waits there,
/// LeaveJobInQueue, to be let go; nobody will).
fn orphans_there(jobs: &[Job]) -> Vec<String> {
    let here: BTreeSet<String> = jobs
        .iter()
        .filter(|j| !j.remote && !j.in_history)
        .map(|j| j.id.to_string())
        .collect();
    jobs.iter()
        .filter(|j| j.remote && !j.in_history)
        .filter_map(|j| {
            let tag = j.text("SubmitterGlobalJobId")?;
            let copy = tag.split('#').nth(1)?.to_string();
            (!here.contains(&copy)).then(|| {
                format!(
                    "{} (JobStatus {}) is left there for copy {copy}, which has left our queue",
                    j.place(),
                    j.status
                )
            })
        })
        .collect()
}

/// One submit against the clusters that carry its number.
fn submit_problems(s: &Submit, clusters: &BTreeMap<i64, BTreeSet<i64>>) -> Vec<String> {
    let mut problems = Vec::new();
    let whole: BTreeSet<i64> = (0..s.procs as i64).collect();
    for (c, procs) in clusters {
        if *procs != whole {
            problems.push(format!(
                "submit {} ({}, {:?}): cluster {c} has jobs {procs:?} of {}",
                s.seq,
                s.kind.name(),
                s.outcome,
                s.procs
            ));
        }
    }
    let ok = match &s.outcome {
        Outcome::Submitted(c) => clusters.len() == 1 && clusters.contains_key(c),
        Outcome::Killed => clusters.len() <= 1,
        Outcome::Failed(_) | Outcome::Running => clusters.is_empty(),
    };
    if !ok {
        let found: Vec<&i64> = clusters.keys().collect();
        problems.push(format!(
            "submit {} ({:?}) left clusters {found:?}",
            s.seq, s.outcome
        ));
    }
    if let Outcome::Failed(why) = &s.outcome {
        problems.push(format!("submit {} failed: {why}", s.seq));
    }
    problems
}

/// One run's stamps: its first and last, and whether it stamped its end.
#[derive(Debug)]
struct Run {
    pid: i32,
    first: u128,
    last: u128,
    ended: bool,
}

/// What the stamps file says.
struct Stamps {
    /// The runs, by job tag, in the order they started.
    runs: BTreeMap<String, Vec<Run>>,
    /// The runs (tag, pid) that found an earlier run of their job alive
    /// when they started.
    overlapped: Vec<(String, i32)>,
}

/// Reads the stamps file.
fn runs(stamps: &Path) -> Stamps {
    let text = std::fs::read_to_string(stamps).unwrap_or_default();
    let mut by: BTreeMap<(String, i32), Run> = BTreeMap::new();
    let mut overlapped = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let [word, pid, ns] = f[..] else { continue };
        let (Some((tag, kind)), Ok(pid), Ok(ns)) = (word.rsplit_once(':'), pid.parse(), ns.parse())
        else {
            continue;
        };
        if kind == "overlap" {
            overlapped.push((tag.to_string(), pid));
        }
        let r = by.entry((tag.to_string(), pid)).or_insert(Run {
            pid,
            first: ns,
            last: ns,
            ended: false,
        });
        r.first = r.first.min(ns);
        r.last = r.last.max(ns);
        r.ended |= kind == "end";
    }
    let mut out: BTreeMap<String, Vec<Run>> = BTreeMap::new();
    for ((tag, _), r) in by {
        out.entry(tag).or_default().push(r);
    }
    for v in out.values_mut() {
        v.sort_by_key(|r| r.first);
    }
    Stamps {
        runs: out,
        overlapped,
    }
}

/// See the module docs. Also: a job that completed stamped an end, and
/// exited 0 (no job is killed but by its own shadow's stop).
pub fn overlaps(world: &World, jobs: &[Job]) -> Vec<String> {
    let Stamps { runs, overlapped } = runs(&world.stamps());
    let mut problems: Vec<String> = overlapped
        .iter()
        .map(|(tag, pid)| {
            format!(
                "job {tag} ran twice at once: run {pid} started while an earlier run held its lock"
            )
        })
        .collect();
    for (tag, rs) in &runs {
        for w in rs.windows(2) {
            if w[0].last >= w[1].first {
                let ms = (w[0].last - w[1].first) as f64 / 1e6;
                problems.push(format!(
                    "job {tag} ran twice at once: pid {} ({}) was still running {ms:.1} ms \
                     into pid {}'s run",
                    w[0].pid,
                    if w[0].ended { "ended" } else { "never ended" },
                    w[1].pid
                ));
            }
        }
    }
    for j in jobs.iter().filter(|j| j.status == 4) {
        let Some(tag) = j.tag() else { continue };
        if !runs.get(&tag).is_some_and(|rs| rs.iter().any(|r| r.ended)) {
            problems.push(format!(
                "{} completed, but no run of {tag} ended",
                j.place()
            ));
        }
        let (code, signal) = (j.int("ExitCode"), j.ad.eval("ExitBySignal").is_true());
        if code != Some(0) || signal {
            problems.push(format!(
                "{} completed with ExitCode {code:?}, ExitBySignal {signal}",
                j.place()
            ));
        }
    }
    problems
}

/// The jobs' event log, which tools append to from many processes, reads
/// whole but for events torn by a kill; returns the problems and how many
/// events were torn.
///
/// Each event goes out in one write(2) with O_APPEND, so writers never
/// interleave; but a SIGKILL that lands while the kernel copies a write
/// that straddles a page of the file ends the write at the page boundary
/// (Linux checks for a fatal signal between pages). The rest of that event
/// never comes, and the next writer's event follows it, glued mid-line
/// (found so: `...  -  Run Local Usa000 (008.000.000) ...` at byte 4096).
/// No writer can prevent that; HTCondor's readers, and tern_watch_q's,
/// skip such an event. So a torn event (one not ended by its `...` line
/// before the next event's header) is counted, not a problem, as long as
/// torn events stay rarer than the kills that make them; every other
/// event must read.
pub fn event_log(world: &World, kills: usize) -> (Vec<String>, usize) {
    let path = world.path("jobs.log");
    let text = match std::fs::read(&path) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => return (vec![format!("the event log {}: {e}", path.display())], 0),
    };
    let (whole, torn) = without_torn_events(&text);
    let mut problems = Vec::new();
    if let Err(e) = tern::userlog::read(&whole) {
        problems.push(format!("the event log, torn events left out: {e}"));
    }
    if torn * 100 > kills {
        problems.push(format!(
            "the event log has {torn} torn events, for {kills} kills"
        ));
    }
    (problems, torn)
}

/// `text` without its torn events (see [`event_log`]), and how many there
/// were: the text is cut at every event header, at a line's start or glued
/// mid-line, and a piece that does not end with its `...` line is torn.
fn without_torn_events(text: &str) -> (String, usize) {
    let b = text.as_bytes();
    let starts: Vec<usize> = (0..b.len())
        .filter(|&i| (i == 0 || !b[i - 1].is_ascii_digit()) && is_header_at(b, i))
        .collect();
    let mut whole = text[..starts.first().copied().unwrap_or(b.len())].to_string();
    let mut torn = 0;
    for (k, &s) in starts.iter().enumerate() {
        let e = starts.get(k + 1).copied().unwrap_or(b.len());
        let piece = &text[s..e];
        if piece.ends_with("\n...\n") {
            whole.push_str(piece);
        } else {
            torn += 1;
        }
    }
    (whole, torn)
}

/// Whether an event header (`NNN (C.P.S) `) starts at byte `i`.
fn is_header_at(b: &[u8], i: usize) -> bool {
    let rest = &b[i..];
    if rest.len() < 12 || !rest[..3].iter().all(u8::is_ascii_digit) || &rest[3..5] != b" (" {
        return false;
    }
    let Some(close) = rest.iter().take(64).position(|&c| c == b')') else {
        return false;
    };
    let ids = &rest[5..close];
    let parts: Vec<&[u8]> = ids.split(|&c| c == b'.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.iter().all(u8::is_ascii_digit))
        && rest.get(close + 1) == Some(&b' ')
}

#[test]
fn an_event_torn_by_a_kill_is_left_out_and_the_events_around_it_read() {
    let terminated = |id: &str| {
        format!(
            "005 ({id}) 2023-11-14 22:13:53 Job terminated.\n\t(1) Normal termination (return value 0)\n\
             \t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Remote Usage\n\
             \t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n\
             \t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Remote Usage\n\
             \t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Local Usage\n\
             \t0  -  Run Bytes Sent By Job\n\t0  -  Run Bytes Received By Job\n\
             \t0  -  Total Bytes Sent By Job\n\t0  -  Total Bytes Received By Job\n...\n"
        )
    };
    let submitted = "000 (008.000.000) 2023-11-14 22:13:54 Job submitted from host: <127.0.0.1:0?alias=vm>\n...\n";
    let whole = terminated("005.001.000");
    let torn = &terminated("005.000.000")[..199];
    assert!(torn.ends_with("Run Local Usa"), "{torn:?}");
    // Glued mid-line, as found; and cut at a line's end.
    for cut in [
        torn.to_string(),
        terminated("005.002.000")[..149].to_string(),
    ] {
        let text = format!("{whole}{cut}{submitted}{whole}");
        assert!(tern::userlog::read(&text).is_err());
        let (kept, n) = without_torn_events(&text);
        assert_eq!(n, 1, "{text}");
        assert_eq!(kept, format!("{whole}{submitted}{whole}"));
        assert_eq!(tern::userlog::read(&kept).unwrap().len(), 3);
    }
    // An event cut off at the end of the log is torn too; a whole log has
    // none.
    assert_eq!(without_torn_events(&format!("{whole}{torn}")).1, 1);
    assert_eq!(without_torn_events(&format!("{whole}{submitted}")).1, 0);
}

/// What the round's jobs went through, for its summary: a check that
/// finds nothing wrong means little if nothing happened. Per kind (the
/// submitted ones here, fetched ones in either queue): how many jobs
/// completed of how many; then removals, holds, runs and runs cut short.
pub fn stats(world: &World, jobs: &[Job]) -> String {
    let runs = runs(&world.stamps()).runs;
    let all_runs: usize = runs.values().map(Vec::len).sum();
    let cut: usize = runs.values().flatten().filter(|r| !r.ended).count();
    let mut kinds: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for j in jobs {
        let kind = match (j.int("FaultFetch"), j.text("FaultKind")) {
            (Some(_), _) => "fetched".to_string(),
            (None, Some(k)) if !j.remote && j.text("RoutedFromJobId").is_none() => k,
            _ => continue,
        };
        let e = kinds.entry(kind).or_default();
        e.0 += usize::from(j.status == 4);
        e.1 += 1;
    }
    let kinds: Vec<String> = kinds
        .iter()
        .map(|(k, (done, all))| format!("{k} {done}/{all}"))
        .collect();
    let count = |s: i64| jobs.iter().filter(|j| !j.remote && j.status == s).count();
    format!(
        "completed: {}; {} removed, {} held here; {all_runs} runs, {cut} cut short",
        kinds.join(", "),
        count(3),
        count(5),
    )
}

/// See the module docs.
pub fn outputs(world: &World, jobs: &[Job]) -> Vec<String> {
    let mut by_tag: BTreeMap<String, (bool, bool)> = BTreeMap::new();
    for j in jobs {
        if let Some(tag) = j.tag() {
            let e = by_tag.entry(tag).or_default();
            e.0 |= j.status == 4;
            e.1 |= j.text("FaultKind").as_deref() == Some("transfer");
        }
    }
    let mut problems = Vec::new();
    for (tag, (completed, transfer)) in by_tag {
        let mut files = vec![
            (format!("out/{tag}.out"), World::complete_out(&tag)),
            (format!("out/{tag}.err"), World::complete_err(&tag)),
        ];
        if transfer {
            files.push((format!("result.{tag}.txt"), World::complete_result(&tag)));
        }
        for (name, want) in files {
            let got = std::fs::read_to_string(world.path(&name)).ok();
            let fine = match &got {
                _ if completed => got.as_deref() == Some(want.as_str()),
                None => true,
                Some(g) if transfer => *g == want,
                Some(g) => want.starts_with(g.as_str()),
            };
            if !fine {
                let how = if completed {
                    "completed"
                } else {
                    "did not complete"
                };
                problems.push(format!("{name} of job {tag}, which {how}: {got:?}"));
            }
        }
    }
    problems
}

/// See the module docs.
pub fn soundness(spool: &Path) -> Vec<String> {
    let name = spool.display();
    let q = match Queue::open(spool, false) {
        Ok(Some(q)) => q,
        Ok(None) => return Vec::new(),
        Err(e) => return vec![format!("{name}: the queue does not open: {e}")],
    };
    let mut problems = Vec::new();
    match q.integrity_check() {
        Ok(s) if s == "ok" => {}
        other => problems.push(format!("{name}: integrity_check: {other:?}")),
    }
    let mut replay = Replay::default();
    let records = q.log_since(0).unwrap_or_default();
    if let Err(e) = replay.apply(&records) {
        problems.push(format!("{name}: the log does not replay: {e}"));
        return problems;
    }
    if replay.in_transaction() {
        problems.push(format!("{name}: the log ends inside a transaction"));
    }
    let queue = queue_view(&q).map(|(v, _)| v);
    match (replay.view(), queue) {
        (Ok(log), Ok(queue)) => {
            if let Some(d) = log.difference(&queue, ("the log", "the queue")) {
                problems.push(format!("{name}: {d}"));
            }
        }
        (log, queue) => problems.push(format!(
            "{name}: views: log {:?}, queue {:?}",
            log.err(),
            queue.err()
        )),
    }
    problems
}
