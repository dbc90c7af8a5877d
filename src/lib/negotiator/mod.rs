//! The negotiation pass: one short run that reconciles running jobs with
//! their shadows, applies the periodic job policies, matches idle jobs to
//! this machine's slots, claims them and starts a shadow per claim.
//!
//! Passes are serialised by `$(SPOOL)/negotiator.lock`. A pass that finds
//! the lock taken leaves a "pass wanted" mark and exits; the running pass
//! looks for the mark before it lets go of the lock (and once more after),
//! so work that arrives during a pass is never left waiting for cron.
//!
//! In shared mode only root runs passes; everyone else only leaves the
//! mark (see [`activation`]).

pub mod accountant;
pub mod activation;
pub mod cron_hooks;
pub mod deferral;
pub mod dollar;
pub mod fetch;
pub mod gridjobs;
pub mod launch;
pub mod linger;
pub mod matchmaking;
pub mod on_submit;
mod passlock;
pub mod periodic;
pub mod policy;
pub mod preempt;
pub mod reuse;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::classad::Value;
use crate::config::{Config, ConfigError};
use crate::machine::{self, Machine, MachineError};
use crate::queue::{Change, JobId, JobRow, Limits, Queue, QueueError, joblock};
use crate::userlog::{self, Event, EventKind, Eviction, Rusage};
use crate::vocab::{JobStatus, Request};

use passlock::{lock_within, mark_wanted, open_lock, try_lock};
pub use passlock::{request_pass, request_pass_after_submit};

#[derive(Debug, thiserror::Error)]
pub enum NegotiatorError {
    #[error(transparent)]
    Queue(#[from] QueueError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Machine(#[from] MachineError),
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> NegotiatorError {
    let what = what.into();
    move |source| NegotiatorError::Io { what, source }
}

#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Decide and report, change nothing.
    pub dry_run: bool,
    /// Wait for a running pass instead of leaving a mark.
    pub wait: bool,
    /// Wait at most this long for a running pass, then leave the mark
    /// (`-wait-lock`, the systemd service's way: leaving the mark at once
    /// would trigger the path unit again straight away).
    pub wait_for: Option<std::time::Duration>,
    /// Recompute every idle cron job's DeferralTime and rewrite every
    /// job's ScheddInterval from SCHEDD_INTERVAL (`-reconfig`).
    pub reconfig: bool,
}

/// What a pass did (or, dry, would do), one line per decision.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub lines: Vec<String>,
    pub started: usize,
    /// Rounds run (a pass runs another while marks keep coming).
    pub rounds: usize,
}

/// Whether this pass ran or left its work to the pass that holds the lock.
pub enum Ran {
    Ran(Report),
    Deferred,
}

pub fn lock_path(spool: &Path) -> PathBuf {
    spool.join("negotiator.lock")
}
pub fn wanted_path(spool: &Path) -> PathBuf {
    spool.join("negotiator.wanted")
}

/// Runs one pass under the pass lock (see the module docs).
pub fn negotiate(cfg: &Config, spool: &Path, opts: &Options) -> Result<Ran, NegotiatorError> {
    if opts.dry_run {
        return one_pass(cfg, spool, opts).map(|r| Ran::Ran(Report { rounds: 1, ..r }));
    }
    let shared = activation::is_shared(cfg)?;
    if activation::only_marks(cfg)? {
        // No user pass this round: the root pass takes the mark on.
        mark_wanted(spool)?;
        return Ok(Ran::Deferred);
    }
    // In shared mode the installer made SPOOL, with its owner and mode;
    // a pass never makes it (it would be root's, 0700 by the umask).
    if !shared {
        std::fs::create_dir_all(spool).map_err(io(format!("cannot create {}", spool.display())))?;
    }
    let lock = open_lock(spool)?;
    if opts.wait {
        lock.lock()
            .map_err(io("cannot lock the negotiator lock file"))?;
    } else if let Some(bound) = opts.wait_for
        && lock_within(&lock, bound)?
    {
        // Ours after waiting.
    } else if !try_lock(&lock)? {
        mark_wanted(spool)?;
        // The holder may have looked for marks just before we made ours.
        if !try_lock(&lock)? {
            return Ok(Ran::Deferred);
        }
    }
    let mut total = Report::default();
    // In shared mode each round first waits out the pause after the last
    // root round, this process's or an earlier pass's (see
    // activation::Pacer): users re-making the mark in a loop keep root
    // busy at most half the time.
    let pacer = shared.then(|| activation::Pacer::new(&lock));
    loop {
        if let Some(p) = &pacer {
            p.wait();
        }
        let _ = crate::sys::fs::remove_spool_file(&wanted_path(spool));
        let began = std::time::Instant::now();
        let r = one_pass(cfg, spool, opts);
        if let Some(p) = &pacer {
            p.record(began.elapsed());
        }
        let r = r?;
        total.started += r.started;
        total.lines.extend(r.lines);
        total.rounds += 1;
        let more = || wanted_path(spool).exists() && total.rounds < MAX_ROUNDS;
        if more() {
            continue;
        }
        let _ = lock.unlock();
        // A mark made between our look and the unlock: take it on.
        if more() && try_lock(&lock)? {
            continue;
        }
        // After MAX_ROUNDS a mark still there goes to a fresh pass, so no
        // submit waits for cron. Not in shared mode: the mark is left to
        // what starts root passes (the path unit starts the service again
        // at once, -loop -watch sees it, cron within the minute), whose
        // limits a pass started from here would escape.
        if !shared && total.rounds >= MAX_ROUNDS && wanted_path(spool).exists() {
            drop(lock);
            request_pass(cfg, spool)?;
        }
        if shared && let Some(line) = activation::restart_failed_path_unit() {
            total.lines.push(line);
        }
        return Ok(Ran::Ran(total));
    }
}

/// The rounds one pass runs while marks keep coming before it ends (and,
/// in personal mode, hands the mark to a fresh pass).
const MAX_ROUNDS: usize = 100;

/// The slot-ranking expressions from the configuration.
pub fn ranks(cfg: &Config) -> Result<matchmaking::Ranks, NegotiatorError> {
    let d = |n: &str| {
        crate::config::knobs::KNOBS
            .iter()
            .find(|k| k.name == n)
            .map(|k| k.default)
            .unwrap_or("0")
    };
    Ok(matchmaking::Ranks {
        pre: cfg.get_expr("NEGOTIATOR_PRE_JOB_RANK", d("NEGOTIATOR_PRE_JOB_RANK"))?,
        post: cfg.get_expr("NEGOTIATOR_POST_JOB_RANK", d("NEGOTIATOR_POST_JOB_RANK"))?,
    })
}

/// Fair-share inputs: effective priorities from the accountant and its
/// knobs (factors of new submitters, SLOT_WEIGHT).
pub fn fair_share(
    knobs: &accountant::Knobs,
    conn: &rusqlite::Connection,
) -> Result<matchmaking::FairShare, QueueError> {
    let eps = accountant::effective(conn)?
        .into_iter()
        .filter(|(_, s)| s.effective > 0.0)
        .map(|(n, s)| (n, s.effective))
        .collect();
    Ok(matchmaking::FairShare {
        eps,
        knobs: knobs.clone(),
    })
}

/// PREEMPTION_REQUIREMENTS and PREEMPTION_RANK, or `None` when preemption
/// is off (PREEMPTION_REQUIREMENTS unset, or the literal false).
pub fn preemption_policy(cfg: &Config) -> Result<Option<preempt::Policy>, NegotiatorError> {
    if cfg.get("PREEMPTION_REQUIREMENTS")?.is_none() {
        return Ok(None);
    }
    let requirements = cfg.get_expr("PREEMPTION_REQUIREMENTS", "false")?;
    if matches!(requirements.literal_value(), Some(Value::Bool(false))) {
        return Ok(None);
    }
    let d = crate::config::knobs::KNOBS
        .iter()
        .find(|k| k.name == "PREEMPTION_RANK")
        .map(|k| k.default)
        .unwrap_or("0");
    Ok(Some(preempt::Policy {
        requirements,
        rank: cfg.get_expr("PREEMPTION_RANK", d)?,
    }))
}

/// Whether a pass may preempt a running job for a waiting one: by user
/// priority (PREEMPTION_REQUIREMENTS) or by a slot's RANK
/// (STARTD_RANK_PREEMPTION).
pub fn may_preempt(cfg: &Config) -> Result<bool, NegotiatorError> {
    Ok(preemption_policy(cfg)?.is_some() || cfg.get_bool("STARTD_RANK_PREEMPTION", false)?)
}

/// The UID_DOMAIN submitters are named in.
pub fn uid_domain(cfg: &Config) -> Result<String, NegotiatorError> {
    Ok(cfg.get("UID_DOMAIN")?.unwrap_or_else(|| "localhost".into()))
}

/// One pass, in its phases: open the queue (and record the pass), put right
/// the jobs whose shadows are gone, apply the periodic policies, schedule
/// cron jobs, plan the matches and the preemptions, report them, and (not
/// dry) claim the slots and start the shadows.
fn one_pass(cfg: &Config, spool: &Path, opts: &Options) -> Result<Report, NegotiatorError> {
    let now = crate::clock::now();
    // Every user may change every user's jobs: said on every pass, where
    // the administrator (cron's mail, the journal) sees it.
    if cfg.get_bool("SHARED_QUEUE", false)? && cfg.get_bool("QUEUE_ALL_USERS_TRUSTED", false)? {
        note!(
            "tern_negotiate: warning: {}",
            crate::queue::authority::ALL_TRUSTED_WARNING
        );
    }
    let machine = Machine::detect(cfg)?;
    let mut report = Report::default();
    if crate::sys::identity::is_root() && cfg.get_bool("SHARED_QUEUE", false)? {
        for line in crate::queue::holders::kill_stopped(spool) {
            note!("tern_negotiate: {line}");
            report.lines.push(line);
        }
    }
    let Some(mut q) = open_queue(cfg, spool, opts, &machine, now)? else {
        report.lines.push("no queue yet: nothing to do".into());
        return Ok(report);
    };
    let machine = machine.with_hooks(q.conn())?;
    let mut events: Vec<(crate::userlog::UserLog, Event)> = Vec::new();
    reconcile(&mut q, spool, now, opts.dry_run, &mut report, &mut events)?;
    let mut due = periodic::due(cfg, &q, now, opts.reconfig)?;
    let changed = periodic::periodic(
        &mut q,
        &due.rows,
        spool,
        now,
        opts.dry_run,
        &mut report,
        &mut events,
    )?;
    if changed {
        // Jobs the policies removed are gone, others changed status.
        due.refresh(&q)?;
    }
    let cron_changed = schedule_cron(cfg, &mut q, &due.rows, now, opts, &mut report, &mut events)?;
    // The events of those changes go out now, before the matching, so a
    // tool acting on a state they made (tern_release of a job a policy
    // held) logs after them. A log that cannot be written (a FIFO or link
    // in its place, a directory its owner may not write) loses the job its
    // events, never the pass: noted where the administrator sees it, as
    // the schedd logs "Invalid user log file specified".
    if !opts.dry_run
        && let Err(e) = userlog::log_job_events(&events)
    {
        note!("tern_negotiate: warning: {e}");
        report.lines.push(format!("warning: {e}"));
    }
    // Held grid jobs are looked at with the full evaluation only: the
    // read of every job is there already.
    let held = due.all.then_some(due.rows.as_slice());
    let grid_owners = gridjobs::owners_with_work(&q, held)?;
    let idle: Vec<JobRow> = if due.all && !cron_changed {
        // The read of every job (refreshed after the policies changed
        // some) serves the matching too.
        std::mem::take(&mut due.rows)
            .into_iter()
            .filter(|r| r.status() == Some(JobStatus::Idle))
            .collect()
    } else {
        idle_to_match(cfg, &q, opts.dry_run)?
    };
    let idle = gridjobs::without_grid(&q, idle)?;
    // Fetched jobs run on the slot that fetched them, claimed first.
    let idle = fetch::without_bound(&q, idle)?;
    let idle = deferral::without_marked(&q, idle)?;
    let fetched = if opts.dry_run {
        Vec::new()
    } else {
        fetch::claim_bound(&mut q, spool, &machine, &uid_domain(cfg)?, now)?
    };
    let (outcome, victims) = plan_pass(cfg, &q, &machine, idle, now, opts.dry_run)?;
    report_plan(&mut report, &outcome, &victims);
    if opts.dry_run {
        report.lines.extend(fetch::dry_run(cfg, &q, &machine, now)?);
        return Ok(report);
    }
    let mut claims = launch::claim(&mut q, spool, &machine, &outcome, now)?;
    claims.extend(fetched);
    request_preemptions(&mut q, spool, &victims, now)?;
    periodic::record(&mut q, &due, now)?;
    if due.all {
        clear_leftovers(cfg, &machine, spool, &q, &mut report)?;
    }
    let route = launch::router_wanted(cfg, &q)?;
    cron_hooks::start_cron(cfg, spool, &mut q, now, opts.reconfig, &mut report.lines)?;
    if let Err(e) = fetch::start_when_due(cfg, spool, &q, &machine, now) {
        report
            .lines
            .push(format!("warning: cannot start tern_fetchwork: {e}"));
    }
    drop(q);
    if route && let Err(e) = launch::spawn_router(cfg) {
        report
            .lines
            .push(format!("warning: cannot start tern_job_router: {e}"));
    }
    if let Err(e) = gridjobs::start(cfg, spool, &grid_owners) {
        report
            .lines
            .push(format!("warning: cannot start tern_gridmanager: {e}"));
    }
    for c in claims {
        match launch::start_shadow(cfg, spool, c) {
            Ok(()) => report.started += 1,
            Err(e) => report.lines.push(format!("warning: {e}")),
        }
    }
    Ok(report)
}

/// With the full evaluation (every PERIODIC_EXPR_INTERVAL): the SPOOL
/// copies of jobs that left the queue, and the sandboxes of shadows that
/// died, go.
fn clear_leftovers(
    cfg: &Config,
    machine: &Machine,
    spool: &Path,
    q: &Queue,
    report: &mut Report,
) -> Result<(), NegotiatorError> {
    let knobs = crate::sandbox::Knobs::from_config(cfg, &machine.filesystem_domain)?;
    let spools = crate::sandbox::spool::remove_stale_spools(spool, |cluster, proc| {
        q.row(JobId { cluster, proc }).ok().flatten().is_some()
    });
    let sandboxes = crate::sandbox::remove_orphan_sandboxes(&knobs);
    crate::hooks::starter_logs::remove_stale(spool, |id| q.row(id).ok().flatten().is_some());
    if spools + sandboxes > 0 {
        report.lines.push(format!(
            "removed {spools} spooled job directories and {sandboxes} orphaned sandboxes"
        ));
    }
    Ok(())
}

/// The queue with its limits, or `None` before the first submit. A pass
/// that changes things records itself (tern_q -better-analyze tells "no
/// pass since submit" by it), brings the slots table in line with the
/// machine and charges the submitters for their slots.
fn open_queue(
    cfg: &Config,
    spool: &Path,
    opts: &Options,
    machine: &Machine,
    now: i64,
) -> Result<Option<Queue>, NegotiatorError> {
    // A shared queue is the installer's to make (root:tern, 0660), never
    // a pass's.
    let create = !opts.dry_run && !activation::is_shared(cfg)?;
    let Some(mut q) = Queue::open(spool, create)? else {
        return Ok(None);
    };
    q.set_limits(Limits::from_config(cfg)?);
    // A user's tool stuck inside a transaction would hold every pass up.
    if crate::sys::identity::is_root() && activation::is_shared(cfg)? {
        let limit = cfg.get_int("STALE_LOCK_SECONDS", 20)?.max(1) as u64;
        q.kill_stale_writers(
            std::time::Duration::from_secs(limit),
            Box::new(|line| note!("tern_negotiate: {line}")),
        )?;
    }
    if !opts.dry_run {
        check_when_due(cfg, &mut q, now)?;
        q.write(now, |w| {
            w.set_meta("last_pass", now)?;
            machine::sync_slots(w.conn(), machine, now)?;
            Ok(())
        })?;
        charge_usage(cfg, &mut q, machine, now)?;
    }
    Ok(Some(q))
}

/// Every QUEUE_CHECK_INTERVAL seconds, a pass reads every page of the
/// database (`PRAGMA quick_check`) before it writes anything, and a
/// damaged database stops it with the damage error (which cron mails).
/// The tools' own writes do not check: a check reads the whole database,
/// and SQLite refuses a damaged page that any read reaches. The kept job
/// counts are checked against the jobs then too ([`Queue::recount`]).
fn check_when_due(cfg: &Config, q: &mut Queue, now: i64) -> Result<(), NegotiatorError> {
    let interval = cfg.get_int("QUEUE_CHECK_INTERVAL", 3600)?;
    if interval <= 0 {
        return Ok(());
    }
    // A clock set back counts as due rather than never.
    if let Some(last) = q.meta("last_check")?
        && last <= now
        && now - last < interval
    {
        return Ok(());
    }
    q.quick_check()?;
    q.recount()?;
    q.write(now, |w| w.set_meta("last_check", now))?;
    Ok(())
}

/// CronTab jobs: their next DeferralTime, before they are matched (and,
/// with `-reconfig`, every job's ScheddInterval). Returns whether it
/// changed any job.
fn schedule_cron(
    cfg: &Config,
    q: &mut Queue,
    all: &[JobRow],
    now: i64,
    opts: &Options,
    report: &mut Report,
    events: &mut Vec<(crate::userlog::UserLog, Event)>,
) -> Result<bool, NegotiatorError> {
    let decisions = deferral::decide(q, all, now, opts.reconfig)?;
    for d in &decisions {
        report.lines.push(match d {
            deferral::Decision::Schedule(id, t) => format!("schedule {id} at {t}"),
            deferral::Decision::Invalid(id, why) => {
                format!("hold {id} Invalid cron schedule parameters: {why}")
            }
        });
    }
    if opts.reconfig && !opts.dry_run {
        let interval = cfg.get_int("SCHEDD_INTERVAL", 60)?;
        let n = deferral::rewrite_schedd_interval(q, interval, now)?;
        report
            .lines
            .push(format!("ScheddInterval = {interval} in {n} job(s)"));
    }
    if !opts.dry_run {
        deferral::apply(q, &decisions, now, opts.reconfig, events)?;
    }
    Ok(!decisions.is_empty())
}

/// The idle jobs the matching looks at. With no slot free and preemption
/// off, only scheduler universe jobs can start (they need no slot), so a
/// pass on a busy machine reads only theirs: one probe per cluster with
/// idle jobs, not every idle job.
fn idle_to_match(cfg: &Config, q: &Queue, dry: bool) -> Result<Vec<JobRow>, NegotiatorError> {
    let slots = machine::load_slots(q.conn())?;
    let room = (slots.is_empty() && dry) || slots.iter().any(matchmaking::has_room);
    if room || may_preempt(cfg)? {
        return Ok(q.idle_rows()?);
    }
    let mut rows = Vec::new();
    for (cluster, _) in q.clusters_with_idle()? {
        if matchmaking::is_scheduler_universe_ad(&*q.cluster_ad(cluster)?) {
            rows.extend(q.idle_rows_of_cluster(cluster)?);
        }
    }
    Ok(rows)
}

/// The matches of the idle jobs to the slots, and (with preemption on) the
/// running jobs to preempt for the jobs still waiting. Changes nothing.
fn plan_pass(
    cfg: &Config,
    q: &Queue,
    machine: &Machine,
    idle: Vec<JobRow>,
    now: i64,
    dry: bool,
) -> Result<(matchmaking::Outcome, Vec<preempt::Victim>), NegotiatorError> {
    let slots = machine::load_slots(q.conn())?;
    let slots = if slots.is_empty() && dry {
        machine::configured_rows(machine, now)
    } else {
        slots
    };
    let uid = uid_domain(cfg)?;
    let fair = fair_share(&accountant::Knobs::from_config(cfg)?, q.conn())?;
    let preemption = preemption_policy(cfg)?;
    let rank_preemption = cfg.get_bool("STARTD_RANK_PREEMPTION", false)?;
    let waiting = (preemption.is_some() || rank_preemption).then(|| (idle.clone(), slots.clone()));
    let outcome = matchmaking::plan(q, idle, machine, slots, &ranks(cfg)?, &fair, &uid, now)?;
    let Some((idle, slots)) = waiting else {
        return Ok((outcome, Vec::new()));
    };
    let planned_ids: HashSet<JobId> = outcome.planned.iter().map(|p| p.id).collect();
    let left: Vec<JobRow> = idle
        .into_iter()
        .filter(|r| !planned_ids.contains(&r.id))
        .collect();
    let mut victims: Vec<preempt::Victim> = Vec::new();
    if rank_preemption {
        victims = preempt::rank_victims(q, machine, &slots, &left, &[], &uid, now)?;
    }
    if let Some(policy) = &preemption {
        let mut given: HashMap<String, f64> = HashMap::new();
        for p in &outcome.planned {
            *given.entry(p.submitter.clone()).or_insert(0.0) += p.cost;
        }
        let more = preempt::victims(q, machine, &slots, &left, &given, &fair, policy, &uid, now)?;
        victims.extend(
            more.into_iter()
                .filter(|m| !victims.iter().any(|v| v.slot == m.slot))
                .collect::<Vec<_>>(),
        );
    }
    Ok((outcome, victims))
}

/// One report line per preemption, rejection and match.
fn report_plan(report: &mut Report, outcome: &matchmaking::Outcome, victims: &[preempt::Victim]) {
    for v in victims {
        report.lines.push(format!(
            "preempt {} on {} for {}",
            v.job, v.slot, v.for_submitter
        ));
    }
    for r in &outcome.rejected {
        report.lines.push(format!("reject {} {}", r.id, r.reason));
    }
    for p in &outcome.planned {
        report.lines.push(match p.carve {
            Some((c, m, d)) => format!(
                "match {} {} (cpus {c}, memory {m} MiB, disk {d} KiB of {})",
                p.id, p.submitter, p.slot
            ),
            None => format!("match {} {} {}", p.id, p.submitter, p.slot),
        });
    }
}

/// Asks the shadows of the preempted jobs to stop them, and wakes them.
fn request_preemptions(
    q: &mut Queue,
    spool: &Path,
    victims: &[preempt::Victim],
    now: i64,
) -> Result<(), NegotiatorError> {
    if victims.is_empty() {
        return Ok(());
    }
    q.write(now, |w| {
        for v in victims {
            w.request(
                v.job,
                if v.by_rank {
                    Request::PreemptRank
                } else {
                    Request::Preempt
                },
            )?;
        }
        Ok(())
    })?;
    for v in victims {
        joblock::wake(spool, v.job);
    }
    Ok(())
}

/// The accountant's update at the start of a pass: every submitter is
/// charged for the slots it holds (SLOT_WEIGHT each) since the last pass,
/// and every submitter with idle jobs gets a record (see [`accountant`]).
fn charge_usage(
    cfg: &Config,
    q: &mut Queue,
    machine: &Machine,
    now: i64,
) -> Result<(), NegotiatorError> {
    let knobs = accountant::Knobs::from_config(cfg)?;
    let uid = uid_domain(cfg)?;
    q.write(now, |w| {
        let uses = accountant::in_use(w.conn(), machine, &knobs, now)?;
        accountant::update(w.conn(), &accountant::weights(&uses), now, &knobs)?;
        accountant::note_claims(w.conn(), &uses)?;
        for (cluster, owner) in crate::queue::clusters_with_idle(w.conn())? {
            let cad = w.cluster_ad(cluster)?;
            let name = matchmaking::submitter_of_job(&cad, &owner, &uid);
            accountant::ensure(w.conn(), &name, now, &knobs)?;
        }
        Ok(())
    })?;
    Ok(())
}

/// Step 1: a claimed job whose shadow is gone is put right. A running job
/// goes back to Idle (event 004, NumShadowExceptions + 1), a removed one
/// leaves (009), a held one stays held (012); its slot is freed.
fn reconcile(
    q: &mut Queue,
    spool: &Path,
    now: i64,
    dry: bool,
    report: &mut Report,
    events: &mut Vec<(crate::userlog::UserLog, Event)>,
) -> Result<(), NegotiatorError> {
    for id in claimed_jobs(q)? {
        if dry {
            if !joblock::is_held(spool, id) {
                report.lines.push(match q.row(id)? {
                    Some(_) => format!("requeue {id} (its shadow is gone)"),
                    None => gone_line(id),
                });
            }
            continue;
        }
        let Some(lock) =
            joblock::try_acquire(spool, id).map_err(io("cannot check a shadow's lock"))?
        else {
            continue;
        };
        // Whatever the dead shadow left running must not run beside the
        // job's next run; but the group id may have been given out again
        // since, so only the group whose leader started when recorded is
        // killed (a record without a start time cannot tell: left alone).
        if let Some((pgid, Some(started))) = lock.recorded_job_group() {
            crate::sys::pids::signal_group_started(pgid, started, libc::SIGKILL);
        }
        // A shadow killed while it started the job, before it could record
        // the job's group, left the job running in its session (the pass
        // starts each shadow in one of its own): that goes too, once the
        // shadow is gone, and only if it is that shadow's.
        if let Some((shadow, Some(started))) = lock.recorded_holder() {
            crate::sys::pids::signal_dead_session(shadow, started, libc::SIGKILL);
        }
        put_right(q, id, now, report, events)?;
        joblock::remove(spool, lock);
    }
    Ok(())
}

/// The jobs a shadow should be looking after: those on a claimed slot,
/// those whose status says running, and those with a request pending (a
/// scheduler universe job, which has no slot, held and released while its
/// shadow stopped it, or one gone from the queue). The caller checks each
/// one's lock.
fn claimed_jobs(q: &Queue) -> Result<Vec<JobId>, NegotiatorError> {
    let slots = machine::load_slots(q.conn())?;
    let mut suspects: Vec<JobId> = slots
        .iter()
        .filter_map(|s| {
            Some(JobId {
                cluster: s.cluster?,
                proc: s.proc?,
            })
        })
        .collect();
    for row in q.rows_in(&[
        JobStatus::Running,
        JobStatus::Suspended,
        JobStatus::TransferringOutput,
    ])? {
        if matchmaking::managed_externally(q, &row)? {
            continue;
        }
        // A running grid job has a gridmanager, not a shadow.
        if !suspects.contains(&row.id) && !gridjobs::is_grid_ad(&*q.cluster_ad(row.id.cluster)?) {
            suspects.push(row.id);
        }
    }
    for id in q.jobs_with_requests()? {
        if suspects.contains(&id) {
            continue;
        }
        // A job forced out of the queue while its shadow was dead: what
        // that shadow left running is still to be killed, and the
        // requests to be dropped (`put_right`).
        let Some(row) = q.row(id)? else {
            suspects.push(id);
            continue;
        };
        if matchmaking::managed_externally(q, &row)?
            || gridjobs::is_grid_ad(&*q.cluster_ad(id.cluster)?)
        {
            continue;
        }
        suspects.push(id);
    }
    Ok(suspects)
}

/// Puts right one job whose shadow is gone (its lock is ours): frees its
/// slot, drops its requests, and requeues, removes or keeps it held, with
/// the event its user log is owed.
fn put_right(
    q: &mut Queue,
    id: JobId,
    now: i64,
    report: &mut Report,
    events: &mut Vec<(crate::userlog::UserLog, Event)>,
) -> Result<(), NegotiatorError> {
    let mut logged: Vec<Event> = Vec::new();
    let mut log_path = None;
    q.write(now, |w| {
        for s in machine::load_slots(w.conn())? {
            if s.cluster == Some(id.cluster) && s.proc == Some(id.proc) {
                free_slot(w.conn(), &s, now)?;
            }
        }
        let requests = w.requests(id)?;
        let held_while_running = requests.contains(&Request::Hold);
        w.clear_requests(id, None)?;
        let Some(row) = w.row(id)? else {
            report.lines.push(gone_line(id));
            return Ok(());
        };
        let ad = Rc::new(w.full_ad(&row)?);
        log_path = userlog::user_log(&ad);
        match row.status() {
            Some(s) if s.is_active() => {
                w.change(&row, &ad, &policy::requeue(&ad, now, None, true))?;
                logged.push(evicted(id, now, None));
                report
                    .lines
                    .push(format!("requeue {id} (its shadow is gone)"));
            }
            Some(JobStatus::Removed) => {
                let reason = ad.eval_str("RemoveReason").unwrap_or_default();
                let change = policy::leave_or_stay(&ad, vec![]);
                w.change(&row, &ad, &change)?;
                // Unless a tool removed it, and logged it, while its run
                // was being stopped for a hold.
                if !policy::aborted_by_a_tool(row.status(), &requests) {
                    logged.push(Event::aborted(id, &reason));
                }
                report
                    .lines
                    .push(format!("remove {id} (its shadow is gone)"));
            }
            // Held while it ran; or held, then released before its shadow
            // stopped it, when the 012 the shadow owed comes with the 013
            // the release left to it.
            Some(s) if s == JobStatus::Held || held_while_running => {
                let change = Change::Update {
                    set: policy::end_of_run(&ad, now),
                    delete: policy::running_attrs(&ad),
                };
                w.change(&row, &ad, &change)?;
                logged.extend(policy::hold_stop_events(&ad, id, Some(s)));
                let what = if s == JobStatus::Held {
                    "held"
                } else {
                    "released"
                };
                report
                    .lines
                    .push(format!("{what} {id} stopped (its shadow is gone)"));
            }
            _ => {}
        }
        Ok(())
    })?;
    if let Some(p) = log_path {
        events.extend(logged.into_iter().map(|e| (p.clone(), e)));
    }
    Ok(())
}

/// What the pass says of a job that left the queue while its shadow was
/// dead: what that shadow left running is killed, its requests dropped.
fn gone_line(id: JobId) -> String {
    format!("clean up {id} (it left the queue; its shadow is gone)")
}

/// The 004 event of a run that stopped and will run again.
pub fn evicted(id: JobId, now: i64, reason: Option<String>) -> Event {
    Event {
        id: id.into(),
        time: now,
        kind: EventKind::Evicted {
            code: None,
            how: Eviction::CpuTimes,
            run_remote: Rusage::default(),
            run_local: Rusage::default(),
            sent_bytes: 0.0,
            received_bytes: 0.0,
            reason,
            resources: Vec::new(),
        },
    }
}

/// Ends the claim on a slot: a dynamic slot goes back to its partitionable
/// slot, any other becomes Unclaimed.
pub fn free_slot(
    conn: &rusqlite::Connection,
    s: &machine::SlotRow,
    now: i64,
) -> Result<(), QueueError> {
    // A claim that ends between passes is charged for its time since the
    // last one.
    accountant::unmatched(conn, s, now)?;
    if s.kind == machine::SlotKind::Dynamic {
        machine::release_dynamic(conn, &s.name)?;
    } else {
        machine::clear_claim(conn, &s.name, now)?;
    }
    Ok(())
}

/// Whether another submitter is owed the slot `submitter` (a job of
/// `owner`) holds, so that its claim should end rather than be reused:
/// someone else has idle jobs and `submitter` holds more than its fair
/// share (the pass's pie spin then decides who gets the slot). Slots weigh
/// their cpus here. Other owners are found by two index reads, so the
/// common case, one user, costs almost nothing.
pub fn owed_elsewhere(
    conn: &rusqlite::Connection,
    submitter: &str,
    owner: &str,
    knobs: &accountant::Knobs,
    uid_domain: &str,
) -> Result<bool, QueueError> {
    let mut any_other = false;
    for sql in [
        "SELECT owner FROM procs WHERE status = 1 /* Idle */ AND owner < ?1 ORDER BY owner DESC LIMIT 1",
        "SELECT owner FROM procs WHERE status = 1 /* Idle */ AND owner > ?1 ORDER BY owner LIMIT 1",
    ] {
        let mut st = conn.prepare_cached(sql)?;
        let mut rows = st.query([owner])?;
        if rows.next()?.is_some() {
            any_other = true;
        }
    }
    if !any_other {
        return Ok(false);
    }
    let mut st = conn.prepare_cached(
        "SELECT DISTINCT owner FROM procs WHERE status = 1 /* Idle */ AND owner <> ?1 LIMIT 64",
    )?;
    let others: Vec<String> = st
        .query_map([owner], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let total: i64 = conn
        .prepare_cached(
            "SELECT coalesce(sum(CASE kind WHEN 'partitionable' THEN total_cpus WHEN 'static' THEN cpus ELSE 0 END), 0) FROM slots",
        )?
        .query_row([], |r| r.get(0))?;
    let held: i64 = conn
        .prepare_cached(
            "SELECT coalesce(sum(cpus), 0) FROM slots WHERE remote_user = ?1 AND kind <> 'partitionable'",
        )?
        .query_row([submitter], |r| r.get(0))?;
    // Only now, with others waiting, are the priorities read.
    let fair = fair_share(knobs, conn)?;
    let mine = 1.0 / fair.ep(submitter);
    let all: f64 = mine
        + others
            .iter()
            .map(|o| 1.0 / fair.ep(&matchmaking::submitter_of(o, uid_domain)))
            .sum::<f64>();
    Ok(held as f64 > mine / all * total as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_while_a_pass_holds_the_lock_leaves_the_mark_and_starts_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let spool = dir.path();
        let held = open_lock(spool).unwrap();
        held.lock().unwrap();
        // false: no pass was started; the holder takes the mark on.
        assert!(!request_pass(&Config::defaults(), spool).unwrap());
        assert!(wanted_path(spool).exists());
    }

    #[test]
    fn a_bounded_wait_takes_the_lock_when_the_holder_lets_go_and_gives_up_after_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let held = open_lock(dir.path()).unwrap();
        held.lock().unwrap();
        let mine = open_lock(dir.path()).unwrap();
        let t = std::time::Instant::now();
        assert!(!lock_within(&mine, std::time::Duration::from_millis(200)).unwrap());
        assert!(t.elapsed() >= std::time::Duration::from_millis(200));
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            drop(held);
        });
        assert!(lock_within(&mine, std::time::Duration::from_secs(30)).unwrap());
        release.join().unwrap();
    }
}
