//! Who a submitted job is: the schedd's `SetAttribute` rules for Owner,
//! User, ClusterId and ProcId (qmgmt.cpp), applied by [`super::Queue::submit`]
//! to whatever the submit side built, and tern's OwnerUid.
//!
//! The queue, not the client, decides these: a submit file's `+Owner`
//! naming someone else, a `+ClusterId` that is not the cluster's, or (in
//! shared mode) a job owned by root is refused before anything is written,
//! with the schedd's sentence; an `Owner` left undefined (`-Owner`) is the
//! submitter, as the schedd fills it in. OwnerUid is always the queue's.

use crate::classad::unparse::unparse;
use crate::classad::{ClassAd, Expr, Value};
use crate::submit::Cluster;

use super::{Authority, JobId, QueueError};

/// Owners the schedd never accepts ("root" on Unix, "LOCAL_SYSTEM" on
/// Windows; HTCondor refuses both everywhere).
const SYSTEM_OWNERS: [&str; 2] = ["root", "LOCAL_SYSTEM"];

/// Checks the identity attributes of every ad of `cluster` (numbered
/// `id`, owned by `owner`) and sets OwnerUid in its cluster ad to `uid`
/// (or -1, which no account has, when `owner` is unknown here), taking
/// it out of the procs.
pub(super) fn check(
    cluster: &mut Cluster,
    id: i64,
    owner: &str,
    authority: &Authority,
    uid: Option<u32>,
) -> Result<(), QueueError> {
    let first = JobId {
        cluster: id,
        proc: 0,
    };
    if authority.is_shared() && SYSTEM_OWNERS.contains(&owner) {
        return Err(refused(
            first,
            "Owner",
            &Expr::string(owner),
            format!("Setting job owner to \"{owner}\" is not permitted"),
        ));
    }
    check_ad(&mut cluster.cluster_ad, first, owner, authority)?;
    for (i, proc) in cluster.procs.iter_mut().enumerate() {
        let job = JobId {
            cluster: id,
            proc: i as i64,
        };
        check_ad(proc, job, owner, authority)?;
        if let Some(e) = proc.get("ProcId").cloned() {
            match e.literal_value() {
                Some(Value::Int(p)) if *p == i as i64 => {}
                _ => {
                    return Err(refused(
                        job,
                        "ProcId",
                        &e,
                        format!(
                            "Setting proc ID {i} to new value ({}) is not permitted",
                            unparse(&e)
                        ),
                    ));
                }
            }
        }
        proc.remove("OwnerUid");
        proc.remove("OwnerUmask");
    }
    let uid = uid.map_or(-1, i64::from);
    cluster.cluster_ad.insert("OwnerUid", Expr::int(uid));
    // The submitter's umask, which a job run as its owner gets (as at(1)
    // replays it); only the submitter's own jobs carry one.
    if owner == authority.user() {
        let mask = crate::sys::privilege::caller_umask();
        cluster
            .cluster_ad
            .insert("OwnerUmask", Expr::int(i64::from(mask)));
    }
    Ok(())
}

/// One ad's Owner, User and ClusterId (`job` is the job it stands for).
fn check_ad(
    ad: &mut ClassAd,
    job: JobId,
    owner: &str,
    authority: &Authority,
) -> Result<(), QueueError> {
    if let Some(e) = ad.get("Owner").cloned() {
        match e.literal_value() {
            // `-Owner`: the schedd fills in the submitter.
            Some(Value::Undefined) => ad.insert("Owner", Expr::string(owner)),
            Some(Value::Str(s)) if &**s == owner => {}
            Some(Value::Str(s)) => {
                let s = s.to_string();
                let reason = if authority.is_shared() && SYSTEM_OWNERS.contains(&s.as_str()) {
                    format!("Setting job owner to \"{s}\" is not permitted")
                } else {
                    format!(
                        "Setting owner to {s} when active owner is {} is not permitted",
                        authority.user()
                    )
                };
                return Err(refused(job, "Owner", &e, reason));
            }
            _ => {
                let reason = format!(
                    "Unable to set owner to {} as it is not a valid owner string",
                    unparse(&e)
                );
                return Err(refused(job, "Owner", &e, reason));
            }
        }
    }
    if let Some(e) = ad.get("User").cloned() {
        // The name part must be the owner's; the domain is UID_DOMAIN,
        // which the submit side fills in (HTCondor's is_same_user).
        let ok = match e.literal_value() {
            Some(Value::Str(s)) => s.rsplit_once('@').is_some_and(|(name, _)| name == owner),
            _ => false,
        };
        if !ok {
            let reason = format!(
                "Setting User to {} when active owner is {} is not permitted",
                unparse(&e),
                authority.user()
            );
            return Err(refused(job, "User", &e, reason));
        }
    }
    if let Some(e) = ad.get("ClusterId").cloned() {
        match e.literal_value() {
            Some(Value::Int(c)) if *c == job.cluster => {}
            _ => {
                let reason = format!(
                    "Setting cluster ID {} to new value ({}) is not permitted",
                    job.cluster,
                    unparse(&e)
                );
                return Err(refused(job, "ClusterId", &e, reason));
            }
        }
    }
    Ok(())
}

fn refused(job: JobId, attr: &str, value: &Expr, reason: String) -> QueueError {
    QueueError::SubmitRefused {
        job,
        attr: attr.to_string(),
        value: unparse(value),
        reason,
    }
}
