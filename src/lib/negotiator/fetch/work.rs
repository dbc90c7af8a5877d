//! `tern_fetchwork`'s work: the due slots' FETCH_WORK hooks run side by
//! side, each with FETCH_WORK_HOOK_TIMEOUT, outside any pass; each reply
//! is decided (the ad's Cmd, the slot's START, on a busy slot its RANK
//! against the current job), an accepted job enters the queue bound to its
//! slot in one transaction with the slot's fetch record, and a pass is
//! asked for at once so that it starts. REPLY_FETCH and EVICT_CLAIM are
//! started as decisions are made and waited for (with the same timeout)
//! only at the end.

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use super::{Bound, Due, FetchState, Hooks};
use crate::classad::unparse::ad_to_old;
use crate::classad::{ClassAd, Evaluator, Expr, MatchContext};
use crate::config::Config;
use crate::hooks::run::{self, Invocation, Outcome, Running};
use crate::machine::{Machine, SlotKind};
use crate::negotiator::{NegotiatorError, launch};
use crate::queue::{JobId, Limits, Queue, QueueError, Selection, joblock};
use crate::vocab::Request;

/// The separator between the ads of REPLY_FETCH's and EVICT_CLAIM's stdin.
pub const SEPARATOR: &str = "-----";

/// How many rounds one `tern_fetchwork` runs when passes keep leaving
/// their mark (each round runs only the slots due then); after that a new
/// pass is asked for.
const MAX_ROUNDS: usize = 100;

/// An advisory hook started and not waited for yet.
struct Advisory {
    running: Running,
    program: PathBuf,
    log: PathBuf,
    timeout: Duration,
}

/// What one run did, one line per decision (written to the fetch log).
#[derive(Debug, Default)]
pub struct Report {
    pub lines: Vec<String>,
    /// Jobs fetched and queued.
    pub fetched: usize,
}

/// One `tern_fetchwork`: under the fetch lock, rounds of the due slots'
/// fetches while passes leave their mark, then the advisory hooks' ends.
pub fn run(cfg: &Config, spool: &Path) -> Result<Report, NegotiatorError> {
    let mut report = Report::default();
    let dir = super::hooks_dir(spool);
    std::fs::create_dir_all(&dir).map_err(crate::negotiator::io(format!(
        "cannot create {}",
        dir.display()
    )))?;
    let lock = crate::sys::fs::spool_lock_file(&super::lock_path(spool))
        .map_err(crate::negotiator::io("cannot open the fetch-work lock"))?;
    if lock.try_lock().is_err() {
        crate::sys::fs::spool_lock_file(&super::wanted_path(spool))
            .map_err(crate::negotiator::io("cannot leave the fetch-wanted mark"))?;
        // The holder may have looked for marks just before we made ours:
        // then it is gone or going, and the lock is ours to take.
        if lock.try_lock().is_err() {
            report
                .lines
                .push("another tern_fetchwork runs; it looks again".into());
            return Ok(report);
        }
    }
    let mut advisory = Vec::new();
    let wanted = || super::wanted_path(spool).exists();
    let mut rounds = 0;
    loop {
        let _ = std::fs::remove_file(super::wanted_path(spool));
        round(cfg, spool, &mut report, &mut advisory)?;
        rounds += 1;
        if wanted() && rounds < MAX_ROUNDS {
            continue;
        }
        for a in advisory.drain(..) {
            let inv = Invocation::new(&a.program, b"", a.timeout, &a.log);
            if let Some(why) = a.running.wait().failure(&inv) {
                report.lines.push(format!("advisory hook failed: {why}"));
            }
        }
        // A mark left while we waited for them, or between our last look
        // and the unlock, is taken on: no pass's request is lost.
        if wanted() && rounds < MAX_ROUNDS {
            continue;
        }
        let _ = lock.unlock();
        if wanted() && rounds < MAX_ROUNDS && lock.try_lock().is_ok() {
            continue;
        }
        break;
    }
    // Passes kept asking: a fresh pass (which starts a fresh tern_fetchwork
    // when slots are due) takes the mark on.
    if rounds >= MAX_ROUNDS
        && wanted()
        && let Err(e) = crate::negotiator::request_pass(cfg, spool)
    {
        report
            .lines
            .push(format!("warning: cannot ask for a pass: {e}"));
    }
    Ok(report)
}

/// One round: the slots due now, their hooks run side by side, each
/// reply decided and recorded.
fn round(
    cfg: &Config,
    spool: &Path,
    report: &mut Report,
    advisory: &mut Vec<Advisory>,
) -> Result<(), NegotiatorError> {
    let now = crate::clock::now();
    let machine = Machine::detect(cfg)?;
    let Some(mut q) = Queue::open(spool, false)? else {
        return Ok(());
    };
    q.set_limits(Limits::from_config(cfg)?);
    let due = super::due_slots(cfg, &q, &machine, now)?;
    if due.is_empty() {
        return Ok(());
    }
    let timeout = super::timeout(cfg)?;
    q.write(now, |w| {
        for d in &due {
            w.conn()
                .prepare_cached(
                    "INSERT INTO fetch_slots (slot, keyword, spawned) VALUES (?1, ?2, ?3) \
                     ON CONFLICT (slot) DO UPDATE SET keyword = ?2, spawned = ?3",
                )?
                .execute(rusqlite::params![d.slot.name, d.hooks.keyword, now])?;
        }
        Ok(())
    })?;
    let mut started = Vec::new();
    for d in due {
        let st = super::state(q.conn(), &d.slot.name)?;
        let slot_ad = super::fetch_slot_ad(&machine, &d.slot, st.as_ref(), None, now);
        let stdin = ad_to_old(&slot_ad, true);
        let log = stderr_log(spool, "fetch", &d.slot.name);
        let inv = Invocation::new(&d.hooks.fetch, stdin.as_bytes(), timeout, &log);
        let r = run::start(&inv);
        started.push((d, slot_ad, log, r));
    }
    // Side by side, each decided as soon as it ends: a hanging hook costs
    // its own timeout, and delays neither the others nor their jobs.
    let mut pause = Duration::from_millis(1);
    while !started.is_empty() {
        let mut i = 0;
        while i < started.len() {
            let ended = match &mut started[i].3 {
                Ok(running) => running.try_finish(),
                Err(o) => Some(o.clone()),
            };
            let Some(outcome) = ended else {
                i += 1;
                continue;
            };
            let (d, slot_ad, log, _) = started.remove(i);
            let fetched = report.fetched;
            handle(
                cfg, spool, &mut q, &d, &slot_ad, &log, outcome, timeout, report, advisory,
            )?;
            // The pass that starts the job, at once.
            if report.fetched > fetched
                && let Err(e) = crate::negotiator::request_pass(cfg, spool)
            {
                report
                    .lines
                    .push(format!("warning: cannot ask for a pass: {e}"));
            }
        }
        if !started.is_empty() {
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(20));
        }
    }
    Ok(())
}

/// Decides one fetch by how its hook ended.
#[allow(clippy::too_many_arguments)]
fn handle(
    cfg: &Config,
    spool: &Path,
    q: &mut Queue,
    d: &Due,
    slot_ad: &ClassAd,
    log: &Path,
    outcome: Outcome,
    timeout: Duration,
    report: &mut Report,
    advisory: &mut Vec<Advisory>,
) -> Result<(), NegotiatorError> {
    let inv = Invocation::new(&d.hooks.fetch, b"", timeout, log);
    let reply = match &outcome {
        // The exit code is ignored (spec 8.1); what it printed counts.
        Outcome::Exited { stdout, .. } => parse_reply(&d.hooks.fetch, stdout),
        _ => Err(outcome.failure(&inv).unwrap_or_default()),
    };
    let ctx = Ctx {
        notes: Default::default(),
        spool,
        cfg,
        timeout,
        now: crate::clock::now(),
    };
    match reply {
        Err(why) => {
            report
                .lines
                .push(format!("{}: fetch failed: {why}", d.slot.name));
            finish_without(&ctx, q, d, slot_ad, "failed", Some(&why), advisory)?;
        }
        Ok(None) => {
            report.lines.push(format!("{}: no work", d.slot.name));
            finish_without(&ctx, q, d, slot_ad, "none", None, advisory)?;
        }
        Ok(Some(job)) => decide(&ctx, q, d, slot_ad, job, report, advisory)?,
    }
    report.lines.extend(ctx.notes.take());
    Ok(())
}

/// What every decision needs.
struct Ctx<'a> {
    /// What went wrong with advisory hooks, for the report.
    notes: std::cell::RefCell<Vec<String>>,
    spool: &'a Path,
    cfg: &'a Config,
    timeout: Duration,
    now: i64,
}

/// The stderr log of hook `what` on `slot`: `$(SPOOL)/hooks/fetch-*`.
pub fn stderr_log(spool: &Path, what: &str, slot: &str) -> PathBuf {
    let safe = crate::sys::fs::file_safe(slot);
    super::hooks_dir(spool).join(format!("fetch-{what}-{safe}.stderr"))
}

/// A FETCH_WORK reply: nothing (no work), or a job ad; a line that is not
/// `Attr = value` discards the whole reply.
pub fn parse_reply(program: &Path, stdout: &str) -> Result<Option<ClassAd>, String> {
    if stdout.trim().is_empty() {
        return Ok(None);
    }
    crate::hooks::parse_attributes(stdout)
        .map(Some)
        .map_err(|e| format!("{}: bad output, reply discarded: {e}", program.display()))
}

/// Why the slot cannot take `job`, if it cannot: a bad ad (no Cmd, a
/// universe tern does not run, no requests on a partitionable slot) is the
/// hook's failure (`Err(Err)`), a refusal by the slot's policy (START, or
/// RANK against the current job) is a rejection (`Err(Ok)`).
fn check(
    job: &ClassAd,
    slot_ad: &ClassAd,
    kind: SlotKind,
    current: Option<&ClassAd>,
) -> Result<(), Result<String, String>> {
    let job = &Rc::new(job.clone());
    if job.eval_str("Cmd").is_none_or(|c| c.is_empty()) {
        return Err(Err("the fetched job ad has no Cmd".into()));
    }
    if let Some(u) = job.eval_int("JobUniverse")
        && u != crate::vocab::Universe::Vanilla.code()
    {
        return Err(Err(format!(
            "the fetched job's JobUniverse is {u}; tern runs fetched jobs in the vanilla universe (5) only"
        )));
    }
    if kind == SlotKind::Partitionable {
        for r in ["RequestCpus", "RequestMemory", "RequestDisk"] {
            if !job.contains(r) {
                return Err(Err(format!(
                    "the fetched job ad has no {r}, which a partitionable slot needs"
                )));
            }
        }
    }
    let ctx = MatchContext::new(Rc::new(slot_ad.clone()), job.clone());
    let mut ev = Evaluator::new();
    if !ctx.left_matches_right(&mut ev) {
        return Err(Ok("the slot's START (Requirements) refuses the job".into()));
    }
    if let Some(c) = current {
        let new = ctx.left_rank(&mut ev);
        let cur = MatchContext::new(Rc::new(slot_ad.clone()), Rc::new(c.clone()))
            .left_rank(&mut Evaluator::new());
        if new <= cur {
            return Err(Ok(format!(
                "the slot's RANK prefers its current job ({cur} against {new})"
            )));
        }
    }
    Ok(())
}

/// Decides one fetched job: accepted, it enters the queue bound to the
/// slot (with the current job's preemption asked for); rejected, the hook
/// is told. REPLY_FETCH hears either way.
fn decide(
    ctx: &Ctx<'_>,
    q: &mut Queue,
    d: &Due,
    slot_ad: &ClassAd,
    mut job: ClassAd,
    report: &mut Report,
    advisory: &mut Vec<Advisory>,
) -> Result<(), NegotiatorError> {
    job.insert("HookKeyword", Expr::string(&d.hooks.keyword));
    let current = match d.current {
        Some(id) => q.row(id)?.map(|r| q.full_ad(&r)).transpose()?,
        None => None,
    };
    if let Err(refusal) = check(&job, slot_ad, d.slot.kind, current.as_ref()) {
        // A job the hook got wrong is a failure of the fetch; one the slot
        // will not run is a rejection. Either way REPLY_FETCH hears reject.
        let (line, result, error) = match refusal {
            Err(why) => {
                let why = format!("{}: {why}", d.hooks.fetch.display());
                (
                    format!("fetch failed: {why}"),
                    "failed".to_string(),
                    Some(why),
                )
            }
            Ok(why) => (
                format!("rejected a fetched job: {why}"),
                format!("rejected: {why}"),
                None,
            ),
        };
        report.lines.push(format!("{}: {line}", d.slot.name));
        reply(
            ctx,
            &d.hooks,
            &d.slot.name,
            "reject",
            &job,
            slot_ad,
            None,
            advisory,
        );
        return finish_without(ctx, q, d, slot_ad, &result, error.as_deref(), advisory);
    }
    let now = ctx.now;
    let claim = launch::claim_id(now);
    let uid = crate::negotiator::uid_domain(ctx.cfg)?;
    let owner = owner_of(&job);
    let cluster = job_cluster(job.clone(), &owner, &uid, now);
    let (slot, kw) = (&d.slot.name, &d.hooks.keyword);
    // A fetched job preempted here loses its claim (EVICT_CLAIM) and its
    // binding: requeued, it runs again like any job.
    let evicted: Option<Bound> = match d.current {
        Some(c) => super::bound_rows(q.conn(), Some(slot))?
            .into_iter()
            .find(|b| b.id == c),
        None => None,
    };
    let cluster_id = q.write(now, |w| {
        let id = w.submit(&owner, &cluster)?;
        w.conn()
            .prepare_cached(
                "INSERT INTO fetch_jobs (cluster, proc, slot, keyword, claim) \
                 VALUES (?1, 0, ?2, ?3, ?4)",
            )?
            .execute(rusqlite::params![id, slot, kw, claim])?;
        record(w.conn(), slot, kw, now, "work", None)?;
        w.conn()
            .prepare_cached("UPDATE fetch_slots SET fetched = fetched + 1 WHERE slot = ?1")?
            .execute([slot])?;
        forget(w.conn(), &d.ended)?;
        forget(w.conn(), evicted.as_slice())?;
        if let Some(c) = d.current {
            w.request(c, Request::PreemptRank)?;
        }
        Ok(id)
    })?;
    let id = JobId {
        cluster: cluster_id,
        proc: 0,
    };
    report.fetched += 1;
    report
        .lines
        .push(format!("{slot}: fetched job {id} (claim {claim})"));
    if let Some(c) = d.current {
        joblock::wake(ctx.spool, c);
        report
            .lines
            .push(format!("{slot}: preempting {c} by RANK for {id}"));
        if let Some(b) = &evicted {
            evict(ctx, q, &d.hooks, slot_ad, b, advisory)?;
        }
    }
    let stored = match q.row(id)? {
        Some(r) => q.full_ad(&r)?,
        None => job,
    };
    reply(
        ctx,
        &d.hooks,
        slot,
        "accept",
        &stored,
        slot_ad,
        Some(&claim),
        advisory,
    );
    Ok(())
}

/// The end of a fetch that brought no job (none, failed, or rejected): its
/// record, and the eviction of the claims of the slot's fetched jobs that
/// ended (the claim has no more work).
fn finish_without(
    ctx: &Ctx<'_>,
    q: &mut Queue,
    d: &Due,
    slot_ad: &ClassAd,
    result: &str,
    error: Option<&str>,
    advisory: &mut Vec<Advisory>,
) -> Result<(), NegotiatorError> {
    for b in &d.ended {
        evict(ctx, q, &d.hooks, slot_ad, b, advisory)?;
    }
    q.write(ctx.now, |w| {
        record(
            w.conn(),
            &d.slot.name,
            &d.hooks.keyword,
            ctx.now,
            result,
            error,
        )?;
        forget(w.conn(), &d.ended)
    })?;
    Ok(())
}

/// The slot's fetch record: completed now with `result`; a failure's
/// reason and time kept until the next fetch that does not fail.
fn record(
    conn: &rusqlite::Connection,
    slot: &str,
    keyword: &str,
    now: i64,
    result: &str,
    error: Option<&str>,
) -> Result<(), QueueError> {
    conn.prepare_cached(
        "INSERT INTO fetch_slots (slot, keyword, completed, result, error, error_time) \
         VALUES (?1, ?2, ?3, ?4, ?5, CASE WHEN ?5 IS NULL THEN NULL ELSE ?3 END) \
         ON CONFLICT (slot) DO UPDATE SET keyword = ?2, completed = ?3, result = ?4, \
         error = ?5, error_time = CASE WHEN ?5 IS NULL THEN NULL ELSE ?3 END",
    )?
    .execute(rusqlite::params![slot, keyword, now, result, error])?;
    Ok(())
}

/// The bindings of ended fetched jobs go.
fn forget(conn: &rusqlite::Connection, ended: &[Bound]) -> Result<(), QueueError> {
    for b in ended {
        conn.prepare_cached("DELETE FROM fetch_jobs WHERE cluster = ?1 AND proc = ?2")?
            .execute([b.id.cluster, b.id.proc])?;
    }
    Ok(())
}

/// Starts EVICT_CLAIM (if configured) for the claim of fetched job `b`:
/// its ad (from the queue, or the history once it left), `-----`, the slot
/// ad with the ClaimId.
fn evict(
    ctx: &Ctx<'_>,
    q: &Queue,
    hooks: &Hooks,
    slot_ad: &ClassAd,
    b: &Bound,
    advisory: &mut Vec<Advisory>,
) -> Result<(), NegotiatorError> {
    let Some(program) = &hooks.evict else {
        return Ok(());
    };
    let job = match q.row(b.id)? {
        Some(r) => q.full_ad(&r)?,
        None => {
            let sel = Selection {
                jobs: vec![b.id],
                ..Selection::default()
            };
            q.history(&sel, Some(1))?
                .pop()
                .map(|(_, ad)| ad)
                .unwrap_or_default()
        }
    };
    let mut slot = slot_ad.clone();
    slot.insert("ClaimId", Expr::string(&b.claim));
    let stdin = crate::hooks::output::ads_stdin(&[&job, &slot], SEPARATOR);
    start_advisory(ctx, program, &[], &stdin, "evict", &b.slot, advisory);
    Ok(())
}

/// Starts REPLY_FETCH (if configured) with `accept` or `reject`: the job
/// ad, `-----`, the slot ad (with the ClaimId when accepted).
#[allow(clippy::too_many_arguments)]
fn reply(
    ctx: &Ctx<'_>,
    hooks: &Hooks,
    slot: &str,
    verdict: &str,
    job: &ClassAd,
    slot_ad: &ClassAd,
    claim: Option<&str>,
    advisory: &mut Vec<Advisory>,
) {
    let Some(program) = &hooks.reply else { return };
    let mut sad = slot_ad.clone();
    if let Some(c) = claim {
        sad.insert("ClaimId", Expr::string(c));
    }
    let stdin = crate::hooks::output::ads_stdin(&[job, &sad], SEPARATOR);
    start_advisory(
        ctx,
        program,
        &[verdict.to_string()],
        &stdin,
        "reply",
        slot,
        advisory,
    );
}

/// Starts an advisory hook, not waited for now. One that cannot start is
/// reported on stderr (the fetch log).
fn start_advisory(
    ctx: &Ctx<'_>,
    program: &Path,
    args: &[String],
    stdin: &str,
    what: &str,
    slot: &str,
    advisory: &mut Vec<Advisory>,
) {
    let log = stderr_log(ctx.spool, what, slot);
    // Several replies on one slot in one round: wait for the previous one,
    // whose log (the hook's lock) this one reuses.
    if let Some(i) = advisory.iter().position(|a| a.log == log) {
        let a = advisory.remove(i);
        let inv = Invocation::new(&a.program, b"", a.timeout, &a.log);
        if let Some(why) = a.running.wait().failure(&inv) {
            ctx.notes
                .borrow_mut()
                .push(format!("advisory hook failed: {why}"));
        }
    }
    let mut inv = Invocation::new(program, stdin.as_bytes(), ctx.timeout, &log);
    inv.args = args;
    match run::start(&inv) {
        Ok(running) => advisory.push(Advisory {
            running,
            program: program.to_path_buf(),
            log,
            timeout: ctx.timeout,
        }),
        Err(o) => {
            if let Some(why) = o.failure(&inv) {
                ctx.notes
                    .borrow_mut()
                    .push(format!("advisory hook failed: {why}"));
            }
        }
    }
}

/// Appends `lines` to the fetch log, each after the time (seconds since
/// the epoch, as the clock reads it).
pub fn log(spool: &Path, lines: &[String]) -> std::io::Result<()> {
    use std::io::Write;
    if lines.is_empty() {
        return Ok(());
    }
    let now = crate::clock::now();
    let text: String = lines.iter().map(|l| format!("{now} {l}\n")).collect();
    crate::sys::fs::spool_log_file(&super::log_path(spool))?.write_all(text.as_bytes())
}

/// Who a fetched job runs as: the user running the pass; as root, the
/// ad's Owner when it names one (as HTCondor's startd requires then).
fn owner_of(job: &ClassAd) -> String {
    if crate::sys::identity::is_root()
        && let Some(o) = Rc::new(job.clone())
            .eval_str("Owner")
            .filter(|o| !o.is_empty())
    {
        return o;
    }
    crate::sys::real_user_name()
}

/// The queue's cluster of one fetched job: the fetched ad with HTCondor's
/// defaults for what it may leave out (vanilla universe, In/Out/Err
/// /dev/null) and tern's (Iwd /tmp, no file transfer), StarterUserLog as
/// the job's event log, and the queue's own identity attributes.
pub fn job_cluster(
    mut ad: ClassAd,
    owner: &str,
    uid_domain: &str,
    now: i64,
) -> crate::submit::Cluster {
    for n in [
        "ClusterId",
        "ProcId",
        "JobStatus",
        "QDate",
        "EnteredCurrentStatus",
        "Owner",
        "User",
    ] {
        ad.remove(n);
    }
    let mut default = |n: &str, e: Expr| {
        if !ad.contains(n) {
            ad.insert(n, e);
        }
    };
    default("MyType", Expr::string("Job"));
    default("TargetType", Expr::string("Machine"));
    default(
        "JobUniverse",
        Expr::int(crate::vocab::Universe::Vanilla.code()),
    );
    for f in ["In", "Out", "Err"] {
        default(f, Expr::string("/dev/null"));
    }
    default("Iwd", Expr::string("/tmp"));
    default("ShouldTransferFiles", Expr::string("NO"));
    default("JobPrio", Expr::int(0));
    // Bound to its slot, it is never matched; should the binding go (its
    // slot fetched again while it was held), it may run on any slot.
    default("Requirements", Expr::Lit(crate::classad::Value::Bool(true)));
    if let Some(log) = Rc::new(ad.clone()).eval_str("StarterUserLog")
        && !ad.contains("UserLog")
    {
        ad.insert("UserLog", Expr::string(&log));
    }
    ad.insert("User", Expr::string(&format!("{owner}@{uid_domain}")));
    ad.insert("QDate", Expr::int(now));
    ad.insert("EnteredCurrentStatus", Expr::int(now));
    ad.insert("JobStatus", Expr::int(crate::vocab::JobStatus::Idle.code()));
    let mut proc = ClassAd::new();
    proc.insert("ProcId", Expr::int(0));
    crate::submit::Cluster {
        cluster_ad: ad,
        procs: vec![proc],
        warnings: Vec::new(),
        skip_file_checks: false,
    }
}

/// The fetch state for tern_status: every fetching slot's record.
pub fn states(conn: &rusqlite::Connection) -> Result<Vec<(String, FetchState)>, QueueError> {
    let mut st = conn.prepare_cached("SELECT slot FROM fetch_slots ORDER BY slot")?;
    let names: Vec<String> = st
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut out = Vec::new();
    for n in names {
        if let Some(s) = super::state(conn, &n)? {
            out.push((n, s));
        }
    }
    Ok(out)
}
