//! `tern_job_router -dry-run JOBID`: what a pass would do with one job,
//! route by route, read from the queue and changing nothing.

use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;

use crate::config::Config;
use crate::queue::{JobId, Queue};
use crate::vocab::JobStatus;

use super::RouterError;
use super::config::RouterConfig;
use super::state::{self, Stage};
use super::throttle::{self, Load};

/// `-dry-run JOBID`: for one job, each route in order: whether it matches,
/// whether it accepts, and why not. Changes nothing.
pub fn dry_run(
    cfg: &Config,
    rc: &RouterConfig,
    spool: &Path,
    id: JobId,
    now: i64,
) -> Result<Vec<String>, RouterError> {
    let _ = cfg;
    let mut out = Vec::new();
    let Some(q) = Queue::open(spool, false)? else {
        return Err(RouterError::NoJob(id));
    };
    let Some(row) = q.row(id)? else {
        return Err(RouterError::NoJob(id));
    };
    let src = Rc::new(q.full_ad(&row)?);
    let me = (!crate::sys::identity::is_root()).then(crate::sys::real_user_name);
    match rc.candidate(&src, me.as_deref()) {
        Ok(()) => out.push(format!("job {id}: a candidate for routing")),
        Err(why) => out.push(format!("job {id}: not a candidate: {why}")),
    }
    let managed = state::managed(q.conn())?;
    if let Some(m) = managed.iter().find(|m| m.src == id) {
        out.push(format!(
            "job {id}: managed on route {} as job {}",
            m.route,
            m.dest.map(|d| d.to_string()).unwrap_or_default()
        ));
    }
    let mut loads: HashMap<String, Load> = HashMap::new();
    for m in &managed {
        if m.stage != Stage::Submitted {
            continue;
        }
        let l = loads.entry(m.route.clone()).or_default();
        l.jobs += 1;
        if let Some(d) = m.dest
            && let Some(r) = q.row(d)?
            && matches!(
                r.status(),
                Some(JobStatus::Running | JobStatus::TransferringOutput)
            )
        {
            l.running += 1;
        }
    }
    let mut chosen = false;
    for r in &rc.routes {
        let matches = r.transform.matches_shared(&src);
        let c = state::counters(q.conn(), &r.name, now)?;
        let accepts = throttle::accepting(
            &c,
            &r.limits,
            loads.get(&r.name).copied().unwrap_or_default(),
        );
        let verdict = match (matches, &accepts) {
            (false, _) => "does not match (REQUIREMENTS is not true)".to_string(),
            (true, Ok(())) if !chosen => {
                chosen = true;
                "matches and accepts: the job would be routed here".to_string()
            }
            (true, Ok(())) => "matches and accepts, but an earlier route is chosen".to_string(),
            (true, Err(why)) => format!("matches but does not accept: {why}"),
        };
        out.push(format!("route {}: {verdict}", r.name));
    }
    for (name, reason) in &rc.unusable {
        out.push(format!("route {name}: not used: {reason}"));
    }
    Ok(out)
}
