//! The schedd's check of a new job's input size: a job whose
//! TransferInputSizeMB exceeds its limit is held the moment it is queued
//! (HTCondor's qmgmt.cpp, at the commit of a new cluster).

use std::rc::Rc;

use super::{Cluster, SubmitError};
use crate::classad::{self, ClassAd, Expr};
use crate::config::Config;
use crate::vocab::{JobStatus, hold_code};

/// The knob with the site's limit, in MiB; -1 (the default) is none.
pub const KNOB: &str = "MAX_TRANSFER_INPUT_MB";

/// Holds, in `cluster`, every proc whose TransferInputSizeMB is greater than
/// its limit: the job's MaxTransferInputMB when it evaluates to a number,
/// else MAX_TRANSFER_INPUT_MB, which may be an expression over the job ad.
/// A negative limit is none. Returns the held procs' indices and reasons,
/// for their 012 events (written after the 000 ones, as the schedd does).
pub fn hold_over_input_limit(
    cluster: &mut Cluster,
    cfg: &Config,
) -> Result<Vec<(usize, String)>, SubmitError> {
    let knob = cfg.get(KNOB).map_err(|e| SubmitError::File {
        file: "configuration".into(),
        msg: e.to_string(),
    })?;
    let knob = match knob {
        None => None,
        Some(text) => Some(classad::parse_expr(&text).map_err(|_| SubmitError::File {
            file: "configuration".into(),
            msg: format!("{KNOB} = {text} is not a ClassAd expression"),
        })?),
    };
    // A literal negative limit (the default -1) is none.
    let knob = knob
        .filter(|e| !matches!(e.literal_value(), Some(crate::classad::Value::Int(n)) if *n < 0));
    // With no knob and no job limit nothing can be held; a large cluster
    // is not copied proc by proc to find that out.
    let job_limits = cluster.cluster_ad.contains("MaxTransferInputMB")
        || cluster
            .procs
            .iter()
            .any(|p| p.contains("MaxTransferInputMB"));
    if knob.is_none() && !job_limits {
        return Ok(Vec::new());
    }
    let mut held = Vec::new();
    for i in 0..cluster.procs.len() {
        let ad = Rc::new(cluster.full_ad(i));
        let limit = match ad.eval_int("MaxTransferInputMB") {
            Some(n) => n,
            None => match &knob {
                Some(e) => knob_limit(&ad, e)?,
                None => -1,
            },
        };
        if limit < 0 {
            continue;
        }
        let Some(size) = ad.eval_int("TransferInputSizeMB") else {
            continue;
        };
        if size <= limit {
            continue;
        }
        let reason =
            format!("TransferInputSizeMB ({size}) is greater than {KNOB} ({limit}) at submit time");
        let p = &mut cluster.procs[i];
        p.insert("JobStatus", JobStatus::Held.expr());
        p.insert("HoldReason", Expr::string(&reason));
        p.insert(
            "HoldReasonCode",
            Expr::int(hold_code::MAX_TRANSFER_INPUT_SIZE_EXCEEDED),
        );
        p.insert("HoldReasonSubCode", Expr::int(0));
        // holdJob counts a system hold, and NumHolds as every hold does.
        for n in ["NumSystemHolds", "NumHolds"] {
            p.insert(n, Expr::int(ad.eval_int(n).unwrap_or(0) + 1));
        }
        held.push((i, reason));
    }
    Ok(held)
}

/// MAX_TRANSFER_INPUT_MB evaluated with the job as MY; what is not a
/// number is an error naming the knob (HTCondor quietly takes -1).
fn knob_limit(ad: &Rc<ClassAd>, e: &Expr) -> Result<i64, SubmitError> {
    let mut scratch = (**ad).clone();
    scratch.insert("_tern_MaxTransferInputMB", e.clone());
    Rc::new(scratch)
        .eval_int("_tern_MaxTransferInputMB")
        .ok_or_else(|| SubmitError::File {
            file: "configuration".into(),
            msg: format!(
                "{KNOB} = {} does not evaluate to a number for this job",
                classad::unparse::unparse(e)
            ),
        })
}
