//! One pass of the router (spec 5.4's `Poll`): adopt orphans, look after
//! every managed job (mirror, finalize, clean up, yield), recount the
//! routes and move their throttles, then route new candidates.
//!
//! New candidates come from the queue's transaction log, followed from the
//! router's own registered position (`router:<JOB_ROUTER_NAME>`): the idle
//! jobs that changed since the last pass. A pass that left a matching job
//! unrouted (its routes were full) or that met new routes reads every idle
//! job on the next pass instead. Every change is one transaction; the
//! events for a source's log are written as soon as the pass is done with
//! that job, after its commits.

use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;
use std::time::Duration;

use crate::classad::unparse::unparse;
use crate::classad::{ClassAd, Expr, Value};
use crate::config::Config;
use crate::queue::{Change, JobId, JobRow, Queue};
use crate::userlog::{Event, EventKind};
use crate::vocab::JobStatus;

use super::config::{Route, RouterConfig};
use super::hooks::{self, Hook, Ran};
use super::mirror;
use super::state::{self, Managed, Outcome, Stage};
use super::throttle::{self, Load};
use super::{RouterError, attr};

/// What a pass did, one line an action, for the router's log.
#[derive(Debug, Default)]
pub struct Report {
    pub lines: Vec<String>,
    pub routed: usize,
}

impl Report {
    pub(super) fn log(&mut self, line: impl Into<String>) {
        self.lines.push(line.into());
    }
}

/// The state a pass works in.
pub(super) struct Pass<'a> {
    pub(super) cfg: &'a Config,
    pub(super) rc: &'a RouterConfig,
    pub(super) spool: &'a Path,
    pub(super) now: i64,
    pub(super) q: Queue,
    pub(super) report: Report,
    pub(super) events: Vec<(crate::userlog::UserLog, Event)>,
    /// The owner the router may route for; `None` when run as root.
    pub(super) me: Option<String>,
}

/// The meta key that asks the next pass to read every idle job.
const RESCAN: &str = "router_rescan";
/// The meta key holding a digest of the routes the last pass routed with.
const ROUTES_DIGEST: &str = "router_routes_digest";
/// The meta key of the round-robin counter.
const ROUND_ROBIN: &str = "router_round_robin";

/// The router's follower name in the transaction log.
pub fn follower_name(rc: &RouterConfig) -> String {
    format!("router:{}", rc.name)
}

/// Runs one pass at `now` over the queue in `spool`.
pub fn run(cfg: &Config, rc: &RouterConfig, spool: &Path, now: i64) -> Result<Report, RouterError> {
    let mut report = Report::default();
    for (name, reason) in &rc.unusable {
        report.log(format!("route {name} is not used: {reason}"));
    }
    for w in &rc.warnings {
        report.log(format!("warning: {w}"));
    }
    let Some(mut q) = Queue::open(spool, false)? else {
        report.log("no queue yet: nothing to do");
        return Ok(report);
    };
    q.set_limits(crate::queue::Limits::from_config(cfg)?);
    let me = (!crate::sys::identity::is_root()).then(crate::sys::real_user_name);
    let mut p = Pass {
        cfg,
        rc,
        spool,
        now,
        q,
        report,
        events: Vec::new(),
        me,
    };
    let follower = follower_name(rc);
    let since: Option<i64> =
        p.q.conn()
            .query_row(
                "SELECT position FROM followers WHERE name = ?1",
                [&follower],
                |r| r.get(0),
            )
            .ok();
    let end = p.q.log_end()?;
    super::orphans::adopt(&mut p.q, rc, now, &mut p.report)?;
    let changed = p.changed_since(since)?;
    let managed = state::managed(p.q.conn())?;
    for m in managed {
        if changed.as_ref().is_none_or(|c| c.touches(&m)) {
            // Each job's events go out as soon as its changes are made,
            // not at the end of the pass: a script that sees the source
            // leave the queue then finds its terminate event in the log.
            let r = p.look_after(m);
            p.write_events();
            r?;
        }
    }
    let loads = p.recount()?;
    p.route_candidates(since, &loads)?;
    // Every record up to `end` has been seen; what this pass wrote itself
    // after it needs no second look.
    let pos = p.q.seen_through(end);
    p.q.set_follower(&follower, pos)?;
    p.write_events();
    Ok(p.report)
}

/// What happened to a source that ends its routing ("removed", or
/// "held" when the hold is not the routed copy's, mirrored), if anything.
fn source_interrupted(src: &ClassAd) -> Option<&'static str> {
    let s = status_of(src);
    if s == JobStatus::Removed.code() {
        Some("removed")
    } else if s == JobStatus::Held.code() && !mirror::hold_copied(src) {
        Some("held")
    } else {
        None
    }
}

/// Runs `f` on job `id` as it is now, in one transaction, if it is still
/// in the queue with the status `status` it had when the pass read it;
/// whether it did. The router reads a job, runs hooks, then changes it:
/// meanwhile a user may remove, hold or release it, and a change made
/// from the old row once wrote the log records of a job that had left
/// (and, from an old ad, would undo what changed meanwhile).
pub(super) fn change_unmoved(
    q: &mut Queue,
    now: i64,
    id: JobId,
    status: i64,
    f: impl FnOnce(
        &mut crate::queue::Writer<'_>,
        &JobRow,
        &ClassAd,
    ) -> Result<(), crate::queue::QueueError>,
) -> Result<bool, RouterError> {
    Ok(q.write(now, |w| {
        let Some(row) = w.row(id)? else {
            return Ok(false);
        };
        if row.status != status {
            return Ok(false);
        }
        let ad = w.full_ad(&row)?;
        f(w, &row, &ad)?;
        Ok(true)
    })?)
}

pub(super) fn status_of(ad: &ClassAd) -> i64 {
    match ad.get("JobStatus").and_then(|e| e.literal_value()) {
        Some(Value::Int(s)) => *s,
        _ => 0,
    }
}

pub(super) fn text_of(ad: &ClassAd, name: &str) -> Option<String> {
    match ad.get(name).and_then(|e| e.literal_value()) {
        Some(Value::Str(s)) => Some(s.to_string()),
        _ => None,
    }
}

/// The jobs and clusters the transaction log says changed since the
/// router's last pass.
struct Changed {
    jobs: std::collections::HashSet<JobId>,
    clusters: std::collections::HashSet<i64>,
}

impl Changed {
    /// Whether a managed job needs looking after: it is past submission
    /// (its cleanup is retried every pass), or its source or copy changed.
    fn touches(&self, m: &Managed) -> bool {
        let hit = |id: JobId| self.jobs.contains(&id) || self.clusters.contains(&id.cluster);
        m.stage != Stage::Submitted || hit(m.src) || m.dest.is_some_and(hit)
    }
}

impl Pass<'_> {
    /// What changed since `since`, from the log's records (a job that left
    /// the queue included); `None` when every managed job must be looked
    /// at: the first pass, a log trimmed past `since`, or an
    /// UPDATE_JOB_INFO hook, which runs every pass.
    fn changed_since(&self, since: Option<i64>) -> Result<Option<Changed>, RouterError> {
        let Some(since) = since else {
            return Ok(None);
        };
        let any_update_hook = self.cfg.get("JOB_ROUTER_HOOK_KEYWORD")?.is_some()
            || self.cfg.entries().iter().any(|e| {
                e.name
                    .to_ascii_uppercase()
                    .ends_with("_HOOK_UPDATE_JOB_INFO")
            });
        let trimmed = self.q.log_end()? > since && self.q.log_start()? > since + 1;
        if any_update_hook || trimmed {
            return Ok(None);
        }
        let mut c = Changed {
            jobs: Default::default(),
            clusters: Default::default(),
        };
        for r in self.q.log_since(since)? {
            let Some((cl, pr)) = r.key.split_once('.') else {
                continue;
            };
            let (Ok(cl), Ok(pr)) = (cl.parse::<i64>(), pr.parse::<i64>()) else {
                continue;
            };
            if pr < 0 {
                c.clusters.insert(cl);
            } else {
                c.jobs.insert(JobId {
                    cluster: cl,
                    proc: pr,
                });
            }
        }
        Ok(Some(c))
    }

    pub(super) fn route_named(&self, name: &str) -> Option<&Route> {
        self.rc.routes.iter().find(|r| r.name == name)
    }

    /// Writes the events made so far to their logs (a failure is a
    /// warning in the report).
    fn write_events(&mut self) {
        let events = std::mem::take(&mut self.events);
        if let Err(e) = super::owner::log_events(&events) {
            self.report.log(format!("warning: {e}"));
        }
    }

    /// Queues an event for `src`'s log; it is written once the job's
    /// changes of this pass are made ([`Pass::write_events`]).
    pub(super) fn event(&mut self, src: &ClassAd, id: JobId, kind: EventKind) {
        if let Some(path) = crate::userlog::user_log(src) {
            self.events.push((
                path,
                Event {
                    id: id.into(),
                    time: self.now,
                    kind,
                },
            ));
        }
    }

    pub(super) fn hook_timeout(&self) -> Duration {
        Duration::from_secs(self.rc.hook_timeout)
    }

    /// Runs `hook` for `src`'s job if one is configured for it.
    pub(super) fn hook(
        &mut self,
        src: &ClassAd,
        id: JobId,
        hook: Hook,
        stdin: &str,
    ) -> Result<Ran, RouterError> {
        let Some(program) = hooks::program(self.cfg, src, hook)? else {
            return Ok(Ran::NotConfigured);
        };
        let iwd = match src.get("Iwd").and_then(|e| e.literal_value()) {
            Some(Value::Str(s)) => Some(std::path::PathBuf::from(s.to_string())),
            _ => None,
        };
        let ran = hooks::run(
            self.spool,
            &crate::vocab::owner_of(src),
            iwd.as_deref(),
            id,
            hook,
            &program,
            stdin,
            self.hook_timeout(),
        );
        match &ran {
            Ran::Failed { reason, .. } => self
                .report
                .log(format!("job {id}: hook {} failed: {reason}", hook.name())),
            Ran::BadOutput(reason) => self.report.log(format!(
                "job {id}: hook {} output refused: {reason}",
                hook.name()
            )),
            Ran::Busy => self.report.log(format!(
                "job {id}: hook {} is still running; not started again",
                hook.name()
            )),
            _ => {}
        }
        Ok(ran)
    }

    /// One managed job, one step of its state machine.
    fn look_after(&mut self, m: Managed) -> Result<(), RouterError> {
        let (src_row, src) = self.row_and_ad(Some(m.src))?;
        let (dest_row, dest) = self.row_and_ad(m.dest)?;
        if m.stage != Stage::Submitted {
            return self.cleanup(m, src_row, src, dest_row, dest);
        }
        let (Some(src_row), Some(src)) = (src_row, src) else {
            // The source left the queue (removed): so does its copy.
            self.report.log(format!(
                "job {}: source is gone; its routed copy is removed",
                m.src
            ));
            return self.finish(m, Outcome::Interrupted, None, None, dest_row, dest, false);
        };
        if let Some(what) = source_interrupted(&src) {
            self.report.log(format!(
                "job {}: source was {what}; its routed copy is removed",
                m.src
            ));
            return self.finish(
                m,
                Outcome::Interrupted,
                Some(src_row),
                Some(src),
                dest_row,
                dest,
                false,
            );
        }
        let (Some(dest_row), Some(mut dest)) = (dest_row, dest) else {
            self.report.log(format!(
                "job {}: routed copy {} is gone (removed); the job is routed again",
                m.src,
                m.dest.map(|d| d.to_string()).unwrap_or_default()
            ));
            return self.finish(
                m,
                Outcome::Failure,
                Some(src_row),
                Some(src),
                None,
                None,
                false,
            );
        };
        if !self.update_job_info(m.src, &src, &dest_row, &mut dest)? {
            // No mirroring this pass.
            return Ok(());
        }
        let ds = status_of(&dest);
        if ds == JobStatus::Removed.code() {
            // Being removed: it leaves the queue once stopped.
            return Ok(());
        }
        let Some(src_now) = self.mirror_to_source(m.src, &src_row, &src, &dest, dest_row.id)?
        else {
            return Ok(());
        };
        if ds == JobStatus::Completed.code() {
            return self.finalize(m, src_row, src_now, dest_row, dest);
        }
        Ok(())
    }

    /// Job `id`'s row and full ad, when it is (still) in the queue.
    fn row_and_ad(
        &mut self,
        id: Option<JobId>,
    ) -> Result<(Option<JobRow>, Option<ClassAd>), RouterError> {
        let row = match id {
            Some(id) => self.q.row(id)?,
            None => None,
        };
        let ad = match &row {
            Some(r) => Some(self.q.full_ad(r)?),
            None => None,
        };
        Ok((row, ad))
    }

    /// Runs the UPDATE_JOB_INFO hook, if any, on the routed copy and
    /// applies its attributes to the copy (in the queue and in `dest`).
    /// Whether the pass goes on to mirror the copy into the source.
    fn update_job_info(
        &mut self,
        src_id: JobId,
        src: &ClassAd,
        dest_row: &JobRow,
        dest: &mut ClassAd,
    ) -> Result<bool, RouterError> {
        match self.hook(src, src_id, Hook::UpdateJobInfo, &hooks::stdin_of(&[dest]))? {
            Ran::NotConfigured => Ok(true),
            Ran::Output(update) => {
                let set: Vec<(String, Expr)> = update
                    .iter()
                    .filter(|(n, _)| {
                        !n.eq_ignore_ascii_case("MyType") && !n.eq_ignore_ascii_case("TargetType")
                    })
                    .map(|(n, e)| (n.to_string(), e.clone()))
                    .collect();
                if !set.is_empty() {
                    let change = Change::Set(set.clone());
                    let (id, status) = (dest_row.id, dest_row.status);
                    if !change_unmoved(&mut self.q, self.now, id, status, |w, row, ad| {
                        w.change(row, ad, &change)
                    })? {
                        // Moved while the hook ran: the next pass.
                        return Ok(false);
                    }
                    for (n, e) in set {
                        dest.insert(&n, e);
                    }
                }
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Mirrors the routed copy `dest_id` into the source (one
    /// transaction, its events queued, a status change logged); the
    /// source's ad as it is now, or None when the source left or changed
    /// status since this pass read it (the next pass mirrors afresh).
    fn mirror_to_source(
        &mut self,
        src_id: JobId,
        src_row: &JobRow,
        src: &ClassAd,
        dest: &ClassAd,
        dest_id: JobId,
    ) -> Result<Option<ClassAd>, RouterError> {
        let mut src_now = src.clone();
        let mm = mirror::mirror(src, dest, dest_id);
        if mm.is_empty() {
            return Ok(Some(src_now));
        }
        let change = Change::Update {
            set: mm.set.clone(),
            delete: mm.delete.clone(),
        };
        if !change_unmoved(
            &mut self.q,
            self.now,
            src_id,
            src_row.status,
            |w, row, ad| w.change(row, ad, &change),
        )? {
            return Ok(None);
        }
        for (n, e) in &mm.set {
            src_now.insert(n, e.clone());
        }
        for n in &mm.delete {
            src_now.remove(n);
        }
        for kind in mm.events {
            self.event(src, src_id, kind);
        }
        if let Some((_, e)) = mm.set.iter().find(|(n, _)| n == "JobStatus")
            && let Some(Value::Int(to)) = e.literal_value()
        {
            self.report.log(format!(
                "job {src_id}: {} as its routed copy {dest_id}",
                JobStatus::from_code(*to).map_or("?", |s| s.name())
            ));
        }
        Ok(Some(src_now))
    }

    /// Each route's jobs and running jobs now; the throttles move once
    /// their window has passed.
    fn recount(&mut self) -> Result<HashMap<String, Load>, RouterError> {
        let mut loads: HashMap<String, Load> = HashMap::new();
        for m in state::managed(self.q.conn())? {
            let l = loads.entry(m.route.clone()).or_default();
            if m.stage != Stage::Submitted {
                continue;
            }
            l.jobs += 1;
            if let Some(d) = m.dest
                && let Some(row) = self.q.row(d)?
                && matches!(
                    row.status(),
                    Some(JobStatus::Running | JobStatus::TransferringOutput)
                )
            {
                l.running += 1;
            }
        }
        let now = self.now;
        for r in &self.rc.routes {
            let jobs = loads.get(&r.name).map_or(0, |l| l.jobs);
            let mut c = state::counters(self.q.conn(), &r.name, now)?;
            let before = c.clone();
            if throttle::adjust(&mut c, &r.limits, jobs, now) && c.throttle != before.throttle {
                self.report.log(format!(
                    "route {}: throttle now {}/{} jobs/sec",
                    r.name,
                    throttle::fmt_num(c.throttle),
                    throttle::WINDOW
                ));
            }
            if c != before {
                self.q
                    .write(now, |w| state::put_counters(w.conn(), &r.name, &c))?;
            }
        }
        Ok(loads)
    }

    /// Finds candidates and routes each to the first accepting route.
    fn route_candidates(
        &mut self,
        since: Option<i64>,
        loads: &HashMap<String, Load>,
    ) -> Result<(), RouterError> {
        if self.rc.routes.is_empty() {
            return Ok(());
        }
        let total: i64 = loads.values().map(|l| l.jobs).sum();
        if self.rc.max_jobs >= 0 && total >= self.rc.max_jobs {
            self.report.log(format!(
                "{total} jobs managed, JOB_ROUTER_MAX_JOBS is {}: no new jobs",
                self.rc.max_jobs
            ));
            self.q.write(self.now, |w| w.set_meta(RESCAN, 1))?;
            return Ok(());
        }
        let digest = routes_digest(self.rc);
        let rows = self.candidate_rows(since, digest)?;
        let mut loads = loads.clone();
        let mut counters = self.route_counters()?;
        let mut left_behind = false;
        let mut batch: Vec<Ready> = Vec::new();
        let mut rr = self.q.meta(ROUND_ROBIN)?.unwrap_or(0);
        for row in rows {
            let src = Rc::new(self.q.full_ad(&row)?);
            if self.rc.candidate(&src, self.me.as_deref()).is_err() {
                continue;
            }
            let Some(accepting) = self.accepting_routes(&src, &loads, &counters) else {
                continue;
            };
            if accepting.is_empty() {
                left_behind = true;
                if self.every_route_full(&loads, &counters) {
                    break;
                }
                continue;
            }
            let pick = if self.rc.round_robin {
                rr += 1;
                accepting[(rr as usize - 1) % accepting.len()]
            } else {
                accepting[0]
            };
            let route = &self.rc.routes[pick];
            let c = counters
                .get_mut(&route.name)
                .expect("every route has counters");
            c.recent_routed += 1;
            match self.route_one(&row, &src, route)? {
                Routed::Ready(r) => {
                    loads.entry(route.name.clone()).or_default().jobs += 1;
                    batch.push(*r);
                    if batch.len() >= BATCH {
                        self.submit_batch(&mut batch)?;
                    }
                }
                Routed::InPlace => self.report.routed += 1,
                Routed::NotNow => left_behind = true,
                Routed::No => {}
            }
        }
        self.submit_batch(&mut batch)?;
        self.store_routing_state(&counters, left_behind, digest, rr)
    }

    /// The jobs to consider: the idle jobs changed since `since`, or every
    /// idle job when the last pass asked for a rescan, the routes changed
    /// (their digest is not `digest`), or this is the first pass.
    fn candidate_rows(
        &mut self,
        since: Option<i64>,
        digest: i64,
    ) -> Result<Vec<JobRow>, RouterError> {
        let rescan = self.q.meta(RESCAN)?.unwrap_or(1) != 0
            || self.q.meta(ROUTES_DIGEST)? != Some(digest)
            || since.is_none();
        Ok(match (rescan, since) {
            (false, Some(pos)) => match self.q.rows_changed_since(pos)? {
                Some(rows) => rows
                    .into_iter()
                    .filter(|r| r.status() == Some(JobStatus::Idle))
                    .collect(),
                None => self.q.idle_rows()?,
            },
            _ => self.q.idle_rows()?,
        })
    }

    /// Every route's throttle counters, by route name.
    fn route_counters(&self) -> Result<HashMap<String, throttle::Counters>, RouterError> {
        let mut counters = HashMap::new();
        for r in &self.rc.routes {
            counters.insert(
                r.name.clone(),
                state::counters(self.q.conn(), &r.name, self.now)?,
            );
        }
        Ok(counters)
    }

    /// The routes (indices) whose transform matches `src` and whose
    /// throttle accepts a job now; `None` when no route matches at all.
    fn accepting_routes(
        &self,
        src: &Rc<ClassAd>,
        loads: &HashMap<String, Load>,
        counters: &HashMap<String, throttle::Counters>,
    ) -> Option<Vec<usize>> {
        let matching: Vec<usize> = (0..self.rc.routes.len())
            .filter(|&i| self.rc.routes[i].transform.matches_shared(src))
            .collect();
        if matching.is_empty() {
            return None;
        }
        Some(
            matching
                .into_iter()
                .filter(|&i| {
                    let r = &self.rc.routes[i];
                    let load = loads.get(&r.name).copied().unwrap_or_default();
                    throttle::accepting(&counters[&r.name], &r.limits, load).is_ok()
                })
                .collect(),
        )
    }

    /// Whether no route at all accepts a job now (the pass can stop).
    fn every_route_full(
        &self,
        loads: &HashMap<String, Load>,
        counters: &HashMap<String, throttle::Counters>,
    ) -> bool {
        self.rc.routes.iter().all(|r| {
            let load = loads.get(&r.name).copied().unwrap_or_default();
            throttle::accepting(&counters[&r.name], &r.limits, load).is_err()
        })
    }

    /// Stores, in one transaction, what the next pass needs: each route's
    /// recently routed count, whether to rescan, the routes' digest and
    /// the round-robin counter.
    fn store_routing_state(
        &mut self,
        counters: &HashMap<String, throttle::Counters>,
        left_behind: bool,
        digest: i64,
        rr: i64,
    ) -> Result<(), RouterError> {
        let now = self.now;
        let routes = &self.rc.routes;
        let round_robin = self.rc.round_robin;
        self.q.write(now, |w| {
            for r in routes {
                let stored = state::counters(w.conn(), &r.name, now)?;
                let mine = &counters[&r.name];
                if stored.recent_routed != mine.recent_routed {
                    let mut c = stored;
                    c.recent_routed = mine.recent_routed;
                    state::put_counters(w.conn(), &r.name, &c)?;
                }
            }
            w.set_meta(RESCAN, i64::from(left_behind))?;
            w.set_meta(ROUTES_DIGEST, digest)?;
            if round_robin {
                w.set_meta(ROUND_ROBIN, rr)?;
            }
            Ok(())
        })?;
        Ok(())
    }

    /// Routes one job: TRANSLATE_JOB and the copy built (to be submitted
    /// by [`Pass::submit_batch`]), or the source edited in place.
    fn route_one(
        &mut self,
        row: &JobRow,
        src: &Rc<ClassAd>,
        route: &Route,
    ) -> Result<Routed, RouterError> {
        let id = row.id;
        let translated = {
            let stdin = format!(
                "{}\n------\n{}",
                hooks::route_line(&route.name, route.universe, route.grid_resource.as_deref()),
                crate::classad::unparse::ad_to_old(src, true)
            );
            match self.hook(src, id, Hook::TranslateJob, &stdin)? {
                Ran::NotConfigured => None,
                Ran::Output(ad) if ad.is_empty() => {
                    self.report.log(format!(
                        "job {id}: TRANSLATE_JOB printed nothing; it runs again next pass"
                    ));
                    return Ok(Routed::NotNow);
                }
                Ran::Output(ad) => Some(ad),
                Ran::Busy => return Ok(Routed::NotNow),
                Ran::Failed { .. } | Ran::BadOutput(_) => {
                    self.report.log(format!(
                        "job {id}: TRANSLATE_JOB failed; the job is not routed"
                    ));
                    return Ok(Routed::NotNow);
                }
            }
        };
        let (dest, warnings) = match self.rc.build(self.cfg, route, src, id, translated) {
            Ok(x) => x,
            Err(e) => {
                self.report
                    .log(format!("job {id}: route {} failed: {e}", route.name));
                return Ok(Routed::No);
            }
        };
        for w in warnings {
            self.report
                .log(format!("job {id}: route {}: {w}", route.name));
        }
        let owner = row.owner.clone();
        let now = self.now;
        if route.edit_in_place {
            let done = self.q.write(now, |w| {
                let Some(cur) = w.row(id)? else {
                    return Ok(false);
                };
                let ad = w.full_ad(&cur)?;
                if !still_candidate(&ad) {
                    return Ok(false);
                }
                let set: Vec<(String, Expr)> = dest
                    .iter()
                    .filter(|(n, e)| ad.get(n).map(unparse) != Some(unparse(e)) && !is_identity(n))
                    .map(|(n, e)| (n.to_string(), e.clone()))
                    .collect();
                let delete: Vec<String> = ad
                    .iter()
                    .filter(|(n, _)| dest.get(n).is_none() && !is_identity(n))
                    .map(|(n, _)| n.to_string())
                    .collect();
                w.change(&cur, &ad, &Change::Update { set, delete })?;
                Ok(true)
            })?;
            if done {
                self.report
                    .log(format!("job {id}: edited in place by route {}", route.name));
                return Ok(Routed::InPlace);
            }
            return Ok(Routed::No);
        }
        Ok(Routed::Ready(Box::new(Ready {
            src: id,
            owner,
            route: route.name.clone(),
            cluster: copy_cluster(dest, now),
        })))
    }

    /// Claims the sources, submits their copies and records both, for a
    /// batch of jobs in one transaction (each job's claim checks again that
    /// its source is still an unmanaged idle job; one that is not is left).
    fn submit_batch(&mut self, batch: &mut Vec<Ready>) -> Result<(), RouterError> {
        if batch.is_empty() {
            return Ok(());
        }
        let now = self.now;
        let name = self.rc.name.clone();
        let jobs = std::mem::take(batch);
        let done = self.q.write(now, |w| {
            let mut done: Vec<(JobId, String, JobId)> = Vec::new();
            for r in &jobs {
                let Some(cur) = w.row(r.src)? else {
                    continue;
                };
                let ad = w.full_ad(&cur)?;
                if !still_candidate(&ad) {
                    continue;
                }
                let c = w.submit(&r.owner, &r.cluster)?;
                let dest_id = JobId {
                    cluster: c,
                    proc: 0,
                };
                w.change(
                    &cur,
                    &ad,
                    &Change::Set(vec![
                        (attr::MANAGED.into(), Expr::string("External")),
                        (attr::MANAGED_MANAGER.into(), Expr::string(&name)),
                        (attr::ROUTED_TO.into(), Expr::string(&dest_id.to_string())),
                    ]),
                )?;
                state::put(
                    w.conn(),
                    &Managed {
                        src: r.src,
                        stage: Stage::Submitted,
                        route: r.route.clone(),
                        dest: Some(dest_id),
                        outcome: Outcome::None,
                        since: now,
                    },
                )?;
                done.push((r.src, r.route.clone(), dest_id));
            }
            Ok(done)
        })?;
        for (src, route, dest) in done {
            self.report
                .log(format!("job {src}: routed to {route} as job {dest}"));
            self.report.routed += 1;
        }
        Ok(())
    }
}

/// A routed copy built, to be submitted with its batch.
struct Ready {
    src: JobId,
    owner: String,
    route: String,
    cluster: crate::submit::Cluster,
}

/// How many jobs are claimed and submitted in one transaction: the claim
/// of each is atomic either way, and a batch writes the shared pages (the
/// log's tail, meta) once instead of once per job.
const BATCH: usize = 64;

enum Routed {
    Ready(Box<Ready>),
    InPlace,
    /// Not now (a hook asked for another try): look again next pass.
    NotNow,
    No,
}

/// The identity attributes an in-place edit never touches.
fn is_identity(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "clusterid" | "procid" | "owner" | "jobstatus" | "qdate" | "enteredcurrentstatus"
    )
}

/// Still an idle job nobody manages (checked again inside the claiming
/// transaction).
fn still_candidate(ad: &ClassAd) -> bool {
    let managed = text_of(ad, attr::MANAGED);
    status_of(ad) == JobStatus::Idle.code() && matches!(managed.as_deref(), None | Some("Schedd"))
}

/// The routed copy as a cluster of one job.
fn copy_cluster(mut dest: ClassAd, now: i64) -> crate::submit::Cluster {
    dest.insert("QDate", Expr::int(now));
    dest.insert("EnteredCurrentStatus", Expr::int(now));
    dest.insert("JobStatus", Expr::int(JobStatus::Idle.code()));
    // The copy stays in the queue once completed until the router has
    // finalized it (spec 7).
    dest.insert(
        "LeaveJobInQueue",
        crate::classad::parse_expr("JobStatus == 4").expect("a constant expression"),
    );
    dest.remove("ProcId");
    let mut proc = ClassAd::new();
    proc.insert("ProcId", Expr::int(0));
    crate::submit::Cluster {
        cluster_ad: dest,
        procs: vec![proc],
        warnings: Vec::new(),
        skip_file_checks: false,
    }
}

/// A digest of the routes: a change of routes makes the next pass read
/// every idle job.
fn routes_digest(rc: &RouterConfig) -> i64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for r in &rc.routes {
        r.name.hash(&mut h);
        r.limits.max_jobs.hash(&mut h);
        r.limits.max_idle_jobs.hash(&mut h);
        r.universe.hash(&mut h);
        r.grid_resource.hash(&mut h);
    }
    rc.source_constraint
        .as_ref()
        .map(crate::classad::unparse::unparse)
        .hash(&mut h);
    h.finish() as i64
}
