//! `condor <schedd> <pool>`: another tern queue as the remote schedd, the
//! analogue of HTCondor-C (grid spec sections 6 and 8.2). The schedd token
//! is that queue's SPOOL directory, on this machine or a shared file
//! system; the pool token is only kept in the GridJobId.
//!
//! The job is submitted there as a vanilla job (the §6.1 ad), tracked by
//! its id in that queue, and removed, held and released there "by
//! gridmanager". The file system is shared, so there is no stage-in or
//! stage-out: the remote job is submitted Idle (StageInStart/StageInFinish
//! set, no spooling hold) and writes its outputs in place.
//!
//! The remote queue is a path the job's owner named. A root gridmanager
//! (shared mode) therefore does everything there as the job's owner
//! ([`super::owner::as_owner`]): each operation opens the queue, does its
//! work and closes it inside one scope with the owner's effective ids, so
//! the owner's rights decide whether the SPOOL and its database may be
//! made, read or written, whatever is made there is the owner's, and no
//! handle opened as the owner outlives the scope (root never uses a file
//! the owner could have swapped). The pass that wakes the remote queue
//! runs as the owner too. A personal gridmanager acts as itself.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::actions::{self, Action, JobAction, Named, Outcome};
use crate::classad::{ClassAd, Expr, Value};
use crate::queue::{Authority, Change, JobId, Queue, Selection};
use crate::sys::identity::JobOwner;
use crate::userlog::Exit;
use crate::vocab::{JobStatus, Universe, hold_code};

use super::GridError;
use super::changes::grid_hold;
use super::events;
use super::ids;
use super::manager::{Job, Round};

/// The attributes copied back from the remote job (§6.2).
const COPIED: &[&str] = &[
    "BytesSent",
    "BytesRecvd",
    "JobRunCount",
    "JobStartDate",
    "JobCurrentStartDate",
    "JobLastStartDate",
    "JobCurrentStartExecutingDate",
    "ExitCode",
    "ExitBySignal",
    "ExitSignal",
    "ExitReason",
    "ExitStatus",
    "RemoteSysCpu",
    "RemoteUserCpu",
    "NumJobStarts",
    "NumShadowStarts",
    "NumRestarts",
    "RemoteWallClockTime",
    "JobCoreDumped",
    "ImageSize",
    "MemoryUsage",
    "ResidentSetSize",
    "ProportionalSetSizeKb",
    "DiskUsage",
    "ScratchDirFileCount",
    "SpooledOutputFiles",
    "CpusUsage",
    "CpusProvisioned",
    "MemoryProvisioned",
    "DiskProvisioned",
];

/// Attributes the submit ad leaves behind (§6.1), by exact name or prefix.
const DROPPED: &[&str] = &[
    "ClusterId",
    "ProcId",
    "User",
    "GlobalJobId",
    "GridResource",
    "GridJobId",
    "GridJobStatus",
    "GridSubmitCount",
    "GridResourceUnavailableTime",
    "LastRemoteStatusUpdate",
    "CurrentStatusUnknown",
    "Managed",
    "UserLog",
    "NotifyUser",
    "CondorVersion",
    "CondorPlatform",
    "HoldReason",
    "HoldReasonCode",
    "HoldReasonSubCode",
    "ReleaseReason",
    "JobLeaseDuration",
    "JobLeaseExpiration",
    "FileSystemDomain",
];
const DROPPED_PREFIXES: &[&str] = &[
    "stagein",
    "onexit",
    "periodic",
    "allowed",
    "autocluster",
    "submit_",
];

/// The tag the remote job carries to name this one
/// (SubmitterGlobalJobId): our SPOOL, the id and the QDate.
fn submitter_tag(spool: &Path, id: JobId, qdate: i64) -> String {
    format!("{}#{id}#{qdate}", spool.display())
}

/// The vanilla job submitted to the remote queue.
fn remote_ad(ad: &Rc<ClassAd>, tag: &str, spool: &Path, now: i64) -> ClassAd {
    let mut out = ClassAd::new();
    let mut remote_overrides = Vec::new();
    for (n, e) in ad.iter() {
        let lower = n.to_ascii_lowercase();
        if let Some(rest) = lower.strip_prefix("remote_") {
            remote_overrides.push((n[n.len() - rest.len()..].to_string(), e.clone()));
            continue;
        }
        if DROPPED.iter().any(|d| d.eq_ignore_ascii_case(n))
            || DROPPED_PREFIXES.iter().any(|p| lower.starts_with(p))
        {
            continue;
        }
        out.insert(n, e.clone());
    }
    out.insert("JobUniverse", Expr::int(Universe::Vanilla.code()));
    out.insert("JobStatus", JobStatus::Idle.expr());
    out.insert("QDate", Expr::int(now));
    out.insert("EnteredCurrentStatus", Expr::int(now));
    out.insert("StageInStart", Expr::int(now));
    out.insert("StageInFinish", Expr::int(now));
    for n in [
        "NumJobStarts",
        "NumShadowStarts",
        "NumRestarts",
        "NumJobCompletions",
        "NumSystemHolds",
    ] {
        out.insert(n, Expr::int(0));
    }
    for n in ["RemoteWallClockTime", "RemoteUserCpu", "RemoteSysCpu"] {
        out.insert(n, Expr::Lit(Value::Real(0.0)));
    }
    out.insert("ExitBySignal", Expr::Lit(Value::Bool(false)));
    out.insert("JobNotification", Expr::int(0));
    if let (Some(cmd), Some(iwd)) = (ad.eval_str("Cmd"), ad.eval_str("Iwd"))
        && !cmd.starts_with('/')
    {
        out.insert(
            "Cmd",
            Expr::string(&Path::new(&iwd).join(cmd).display().to_string()),
        );
    }
    out.insert(
        "LeaveJobInQueue",
        crate::classad::parse_expr("JobStatus == 4").expect("constant parses"),
    );
    out.insert("SubmitterId", Expr::string(&spool.display().to_string()));
    out.insert("SubmitterGlobalJobId", Expr::string(tag));
    for (n, e) in remote_overrides {
        out.insert(&n, e);
    }
    out
}

/// Runs `work` on the queue at `remote_spool` (made when `create`) with
/// the rights of the job's `owner`: opened, used and closed in one
/// [`super::owner::as_owner`] scope. `None` when there is no queue there
/// (and `create` is false). [`GridError::Unreachable`] is why it could
/// not be opened (or why root may not act for the owner); an error of
/// `work` is returned as it is.
fn on_remote<T>(
    owner: &JobOwner,
    remote_spool: &Path,
    create: bool,
    work: impl FnOnce(&mut Queue) -> Result<T, GridError>,
) -> Result<Option<T>, GridError> {
    let scoped = super::owner::as_owner(owner, || {
        let mut rq = match Queue::open(remote_spool, create) {
            Ok(Some(q)) => q,
            Ok(None) => return Ok(None),
            Err(e) => return Err(GridError::Unreachable(e.to_string())),
        };
        let done = work(&mut rq);
        // Closed here, as the owner: closing checkpoints the log.
        drop(rq);
        done.map(Some)
    });
    scoped.map_err(|e| GridError::Unreachable(crate::sys::io_error_text(&e)))?
}

/// Does `action` "by gridmanager" to job `rid` in the queue at
/// `remote_spool` as `owner` (the job's; `user` its name); NotFound when
/// that queue or job is gone.
fn act_remote(
    remote_spool: &Path,
    owner: &JobOwner,
    user: &str,
    action: Action,
    rid: JobId,
    now: i64,
) -> Result<Outcome, GridError> {
    let authority = Authority::new(user, Vec::new());
    let what = JobAction {
        action,
        reason: "by gridmanager".into(),
        subcode: None,
    };
    let sel = Selection {
        jobs: vec![rid],
        ..Selection::default()
    };
    let done = on_remote(owner, remote_spool, false, |rq| {
        Ok(actions::act(rq, &authority, &what, &sel, Named::ById, now)?)
    })?;
    Ok(done
        .and_then(|d| d.outcomes.get(&rid).copied())
        .unwrap_or(Outcome::NotFound))
}

/// The remote job's status and ad: from its queue, or from its history
/// when it completed and left; None when it is gone otherwise.
fn remote_state(rq: &mut Queue, rid: JobId) -> Result<Option<(i64, Rc<ClassAd>)>, GridError> {
    if let Some(row) = rq.row(rid)? {
        let ad = rq.full_ad(&row)?;
        return Ok(Some((row.status, Rc::new(ad))));
    }
    let sel = Selection {
        jobs: vec![rid],
        ..Selection::default()
    };
    match rq.history(&sel, Some(1))?.into_iter().next() {
        Some((row, ad)) if row.status == JobStatus::Completed.code() => {
            Ok(Some((row.status, Rc::new(ad))))
        }
        _ => Ok(None),
    }
}

/// The updates every poll makes: GridJobStatus, LastRemoteStatusUpdate and
/// the §6.2 attributes whose remote value differs from ours.
fn copied_back(j: &Job, rstatus: i64, rad: &ClassAd, now: i64) -> Vec<(String, Expr)> {
    let mut s: Vec<(String, Expr)> = vec![
        (
            "GridJobStatus".into(),
            Expr::string(ids::status_name(rstatus)),
        ),
        ("LastRemoteStatusUpdate".into(), Expr::int(now)),
    ];
    for n in COPIED {
        if let Some(e) = rad.get(n)
            && j.ad.get(n).map(crate::classad::unparse::unparse)
                != Some(crate::classad::unparse::unparse(e))
        {
            s.push((n.to_string(), e.clone()));
        }
    }
    s
}

/// How the remote job ended, from its ad.
fn remote_exit(rad: &Rc<ClassAd>) -> Exit {
    if rad.eval("ExitBySignal").is_true() {
        Exit::Signal {
            signal: rad.eval_int("ExitSignal").unwrap_or(0),
            core_file: None,
        }
    } else {
        Exit::Normal {
            return_value: rad.eval_int("ExitCode").unwrap_or(0),
        }
    }
}

/// Lets the completed remote job leave its queue (LeaveJobInQueue false).
fn let_remote_go(rq: &mut Queue, rid: JobId, now: i64) -> Result<(), GridError> {
    rq.write(now, |w| {
        if let Some(row) = w.row(rid)? {
            let ad = w.full_ad(&row)?;
            w.change(
                &row,
                &ad,
                &Change::Leave {
                    set: vec![("LeaveJobInQueue".into(), Expr::Lit(Value::Bool(false)))],
                },
            )?;
        }
        Ok(())
    })?;
    Ok(())
}

impl Round<'_> {
    /// One step of a job on another tern queue.
    pub(super) fn condor_step(
        &mut self,
        j: &Job,
        schedd: &str,
        pool: &str,
        spool: &Path,
    ) -> Result<(), GridError> {
        let now = self.now;
        let id = j.row.id;
        let remote_spool = PathBuf::from(schedd);
        let gid = j.str("GridJobId");
        let remote = gid.as_deref().and_then(ids::condor_remote);
        let qdate = j.ad.eval_int("QDate").unwrap_or(j.row.qdate);
        let tag = submitter_tag(spool, id, qdate);
        let stopping = matches!(j.status(), Some(JobStatus::Removed | JobStatus::Held));
        // Claimed without a remote id: a gridmanager may have died between
        // the remote submit and recording the id. A job stopped here must
        // stop there too, so the remote job is looked for by its tag.
        let remote = match remote {
            None if stopping && j.managed_externally() && remote_spool.is_absolute() => {
                let found = self.left_there(j, &remote_spool, &tag)?;
                if let Some(rid) = found {
                    self.record_remote(j, schedd, pool, rid)?;
                }
                found
            }
            r => r,
        };
        match j.status() {
            Some(JobStatus::Removed) => return self.condor_removed(j, &remote_spool, remote),
            Some(JobStatus::Held) => return self.condor_held(j, &remote_spool, remote),
            Some(JobStatus::Idle | JobStatus::Running) => {}
            _ => return Ok(()),
        }
        if !remote_spool.is_absolute() {
            let why = format!(
                "GridResource schedd '{schedd}' is not the SPOOL directory of a tern queue (an absolute path)"
            );
            self.commit(id, j.row.status, |ad| {
                grid_hold(ad, id, now, &why, hold_code::UNSPECIFIED, 0, false, false)
            })?;
            return Ok(());
        }
        let Some(rid) = remote else {
            return self.condor_submit(j, &remote_spool, schedd, pool, &tag);
        };
        self.condor_follow(j, &remote_spool, rid)
    }

    /// Removed here: removes the remote job, if any, and leaves the
    /// removed job to its end.
    fn condor_removed(
        &mut self,
        j: &Job,
        remote_spool: &Path,
        remote: Option<JobId>,
    ) -> Result<(), GridError> {
        if let Some(rid) = remote {
            let owner = j.owner();
            act_remote(
                remote_spool,
                &owner,
                self.owner,
                Action::Remove,
                rid,
                self.now,
            )?;
            wake_remote(&owner, remote_spool);
        }
        self.commit(j.row.id, j.row.status, |ad| {
            (super::changes::leave_removed(ad), vec![])
        })?;
        Ok(())
    }

    /// Held here: holds the remote job, if any, and hands the job back to
    /// the schedd (Managed = "Schedd").
    fn condor_held(
        &mut self,
        j: &Job,
        remote_spool: &Path,
        remote: Option<JobId>,
    ) -> Result<(), GridError> {
        if let Some(rid) = remote {
            act_remote(
                remote_spool,
                &j.owner(),
                self.owner,
                Action::Hold,
                rid,
                self.now,
            )?;
        }
        self.commit(j.row.id, j.row.status, |_| {
            (
                Change::Set(vec![("Managed".into(), Expr::string("Schedd"))]),
                vec![],
            )
        })?;
        Ok(())
    }

    /// Polls the remote job `rid` and mirrors its state here: holds the
    /// job when the remote one disappeared, else one arm per remote state.
    fn condor_follow(&mut self, j: &Job, remote_spool: &Path, rid: JobId) -> Result<(), GridError> {
        let now = self.now;
        let id = j.row.id;
        let Some(state) = on_remote(&j.owner(), remote_spool, false, |rq| remote_state(rq, rid))?
        else {
            return Ok(());
        };
        let Some((rstatus, rad)) = state else {
            let running = j.status() == Some(JobStatus::Running);
            self.commit(id, j.row.status, |ad| {
                grid_hold(
                    ad,
                    id,
                    now,
                    "Job disappeared from remote schedd",
                    hold_code::UNSPECIFIED,
                    0,
                    running,
                    false,
                )
            })?;
            return Ok(());
        };
        let s = copied_back(j, rstatus, &rad, now);
        match JobStatus::from_code(rstatus) {
            Some(JobStatus::Idle) => self.condor_remote_idle(j, s)?,
            Some(JobStatus::Running | JobStatus::TransferringOutput) => {
                self.condor_remote_running(j, s)?
            }
            Some(JobStatus::Held) => self.condor_remote_held(j, remote_spool, rid, &rad, s)?,
            Some(JobStatus::Completed) => {
                self.condor_remote_completed(j, remote_spool, rid, &rad, s)?
            }
            _ => {}
        }
        Ok(())
    }

    /// Remote idle: claims the job (Managed = "External") and, when it ran
    /// here, makes it idle again with an eviction event.
    fn condor_remote_idle(&mut self, j: &Job, mut s: Vec<(String, Expr)>) -> Result<(), GridError> {
        let id = j.row.id;
        if !j.managed_externally() {
            s.push(("Managed".into(), Expr::string("External")));
        }
        let mut evs = Vec::new();
        if j.status() == Some(JobStatus::Running) {
            s.push(("JobStatus".into(), JobStatus::Idle.expr()));
            evs.push(crate::negotiator::evicted(id, self.now, None));
        }
        self.commit(id, j.row.status, |_| (Change::Set(s), evs))?;
        Ok(())
    }

    /// Remote running (or transferring output): running here too, with
    /// the execute event the first time.
    fn condor_remote_running(
        &mut self,
        j: &Job,
        mut s: Vec<(String, Expr)>,
    ) -> Result<(), GridError> {
        let id = j.row.id;
        let mut evs = Vec::new();
        if j.status() != Some(JobStatus::Running) {
            let gr = j.str("GridResource").unwrap_or_default();
            s.push(("JobStatus".into(), JobStatus::Running.expr()));
            evs.push(events::executing(id, self.now, &gr));
        }
        self.commit(id, j.row.status, |_| (Change::Set(s), evs))?;
        Ok(())
    }

    /// Remote held: released there when we released it here after our
    /// hold, else held here with the remote hold reason.
    fn condor_remote_held(
        &mut self,
        j: &Job,
        remote_spool: &Path,
        rid: JobId,
        rad: &Rc<ClassAd>,
        mut s: Vec<(String, Expr)>,
    ) -> Result<(), GridError> {
        let now = self.now;
        let id = j.row.id;
        if !j.managed_externally() {
            // Released here after our hold: release it there too.
            let owner = j.owner();
            act_remote(remote_spool, &owner, self.owner, Action::Release, rid, now)?;
            wake_remote(&owner, remote_spool);
            s.push(("Managed".into(), Expr::string("External")));
            self.commit(id, j.row.status, |_| (Change::Set(s), vec![]))?;
            return Ok(());
        }
        let reason = rad.eval_str("HoldReason").unwrap_or_default();
        let code = rad.eval_int("HoldReasonCode").unwrap_or(0);
        let sub = rad.eval_int("HoldReasonSubCode").unwrap_or(0);
        let local_running = j.status() == Some(JobStatus::Running);
        self.commit(id, j.row.status, |ad| {
            let (c, e) = grid_hold(ad, id, now, &reason, code, sub, local_running, true);
            (super::changes::with(c, s), e)
        })?;
        Ok(())
    }

    /// Remote completed: lets the remote job go, then completes the job
    /// here with the remote exit (and the execute event it never logged).
    /// In this order a gridmanager killed between the two leaves the
    /// remote job in its history, where the next one finds it completed
    /// ([`remote_state`]); the other way round it left the remote job in
    /// its queue (LeaveJobInQueue) for good, with no job here to let it go.
    fn condor_remote_completed(
        &mut self,
        j: &Job,
        remote_spool: &Path,
        rid: JobId,
        rad: &Rc<ClassAd>,
        s: Vec<(String, Expr)>,
    ) -> Result<(), GridError> {
        let now = self.now;
        let id = j.row.id;
        let gr = j.str("GridResource").unwrap_or_default();
        let local_running = j.status() == Some(JobStatus::Running);
        let exit = remote_exit(rad);
        on_remote(&j.owner(), remote_spool, false, |rq| {
            let_remote_go(rq, rid, now)
        })?;
        self.commit(id, j.row.status, |ad| {
            let mut evs = Vec::new();
            if !local_running {
                let start = rad.eval_int("JobCurrentStartDate").unwrap_or(now);
                evs.push(events::executing(id, start, &gr));
            }
            let (c, mut more) =
                super::changes::finish(ad, id, now, s, exit, rad.eval_int("CompletionDate"));
            evs.append(&mut more);
            (c, evs)
        })?;
        Ok(())
    }

    /// The job a gridmanager that died after submitting left in the
    /// remote queue for ours (tagged `tag`), if any.
    fn left_there(
        &self,
        j: &Job,
        remote_spool: &Path,
        tag: &str,
    ) -> Result<Option<JobId>, GridError> {
        let found = on_remote(&j.owner(), remote_spool, false, |rq| {
            tagged(rq, self.owner, tag)
        })?;
        Ok(found.flatten())
    }

    /// Claims the job, then submits it to the remote queue (or adopts the
    /// remote job a gridmanager that died after submitting left there),
    /// then records the remote id and writes 027.
    fn condor_submit(
        &mut self,
        j: &Job,
        remote_spool: &Path,
        schedd: &str,
        pool: &str,
        tag: &str,
    ) -> Result<(), GridError> {
        let now = self.now;
        let id = j.row.id;
        let claimed_before = j.managed_externally();
        if !claimed_before {
            let ok = self.commit(id, j.row.status, |_| {
                (
                    Change::Set(vec![("Managed".into(), Expr::string("External"))]),
                    vec![],
                )
            })?;
            if !ok {
                return Ok(());
            }
        }
        let user = self.owner.to_string();
        let ad = remote_ad(&j.ad, tag, self.spool, now);
        let owner = j.owner();
        // Made, looked in and written as the job's owner.
        let placed = on_remote(&owner, remote_spool, true, |rq| {
            if claimed_before && let Some(rid) = tagged(rq, &user, tag)? {
                return Ok(rid);
            }
            let authority = Authority::new(&user, Vec::new());
            let (cluster, _) = rq.submit(&authority, &user, |_| {
                let mut proc0 = ClassAd::new();
                proc0.insert("ProcId", Expr::int(0));
                Ok::<_, crate::queue::QueueError>(crate::submit::Cluster {
                    cluster_ad: ad,
                    procs: vec![proc0],
                    warnings: Vec::new(),
                    skip_file_checks: false,
                })
            })?;
            Ok(JobId { cluster, proc: 0 })
        });
        let why = match placed {
            Ok(Some(rid)) => return self.condor_submitted(j, remote_spool, schedd, pool, rid),
            Ok(None) => "no tern queue there".to_string(),
            Err(GridError::Unreachable(why)) => why,
            Err(e) => return Err(e),
        };
        let why = format!("Failed to connect to schedd {schedd}: {why}");
        self.commit(id, j.row.status, |ad| {
            grid_hold(ad, id, now, &why, hold_code::UNSPECIFIED, 0, false, false)
        })?;
        Ok(())
    }

    /// The job is in the remote queue as `rid`: wakes that queue, records
    /// the remote id and writes 027.
    fn condor_submitted(
        &mut self,
        j: &Job,
        remote_spool: &Path,
        schedd: &str,
        pool: &str,
        rid: JobId,
    ) -> Result<(), GridError> {
        wake_remote(&j.owner(), remote_spool);
        self.record_remote(j, schedd, pool, rid)
    }

    /// Records the remote job `rid` as the job's (GridJobId) and writes
    /// 027.
    fn record_remote(
        &mut self,
        j: &Job,
        schedd: &str,
        pool: &str,
        rid: JobId,
    ) -> Result<(), GridError> {
        let (id, now) = (j.row.id, self.now);
        let gid = format!("condor {schedd} {pool} {rid}");
        let gr = j.str("GridResource").unwrap_or_default();
        self.commit(id, j.row.status, |_| {
            (
                Change::Set(vec![
                    ("GridJobId".into(), Expr::string(&gid)),
                    ("GridJobStatus".into(), Expr::string("IDLE")),
                    ("LastRemoteStatusUpdate".into(), Expr::int(now)),
                ]),
                vec![events::submitted(id, now, &gr, &gid)],
            )
        })?;
        Ok(())
    }
}

/// `owner`'s job in the remote queue `rq` that carries `tag`
/// (SubmitterGlobalJobId), if any.
fn tagged(rq: &Queue, owner: &str, tag: &str) -> Result<Option<JobId>, GridError> {
    let c = crate::classad::parse_expr(&format!(
        "SubmitterGlobalJobId == {}",
        crate::classad::unparse::unparse(&Expr::string(tag))
    ))
    .expect("constraint parses");
    let sel = Selection {
        owners: vec![owner.to_string()],
        constraint: Some(c),
        ..Selection::default()
    };
    Ok(rq.select(&sel)?.first().map(|(r, _)| r.id))
}

/// Asks the remote queue for a negotiation pass, as its own tern_submit
/// would: its tern_negotiate, with its SPOOL, run as the job's `owner`
/// (a root gridmanager never starts a root pass over a queue a user
/// named).
fn wake_remote(owner: &JobOwner, remote_spool: &Path) {
    let prog = crate::negotiator::launch::sibling(
        &crate::config::Config::defaults(),
        None,
        "tern_negotiate",
    );
    let extra = [(
        "_TERN_SPOOL".to_string(),
        remote_spool.display().to_string(),
    )];
    let _ = super::owner::start_detached(owner, &prog, &extra);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::parse_ad;

    #[test]
    fn the_remote_ad_is_a_vanilla_job_without_local_identity() {
        let ad = parse_ad(
            r#"[ClusterId = 4; ProcId = 0; JobUniverse = 9; GridResource = "condor /r p"; Managed = "External";
                UserLog = "/l"; PeriodicHold = false; OnExitRemove = true; Cmd = "x"; Iwd = "/w";
                Remote_JobUniverse = 7; RemoteWallClockTime = 9.0; JobStatus = 2; Owner = "u"]"#,
        )
        .unwrap();
        let r = Rc::new(remote_ad(&Rc::new(ad), "tag", Path::new("/s"), 100));
        for gone in [
            "ClusterId",
            "ProcId",
            "GridResource",
            "Managed",
            "UserLog",
            "PeriodicHold",
            "OnExitRemove",
            "Remote_JobUniverse",
        ] {
            assert!(!r.contains(gone), "{gone}");
        }
        assert_eq!(r.eval_int("JobUniverse"), Some(7));
        assert_eq!(r.eval_int("JobStatus"), Some(1));
        assert_eq!(r.eval_str("Cmd").as_deref(), Some("/w/x"));
        assert_eq!(r.eval_real("RemoteWallClockTime"), Some(0.0));
        assert_eq!(r.eval_str("SubmitterGlobalJobId").as_deref(), Some("tag"));
        assert_eq!(r.eval_str("Owner").as_deref(), Some("u"));
    }
}
