//! Vanilla-to-grid (`VanillaToGrid.cpp`): the routed copy is a new job,
//! so the source's identity and bookkeeping go, its counters start again,
//! and it takes the route's universe (keeping the old one as
//! `Remote_JobUniverse`).

use crate::classad::{ClassAd, Expr, Value};
use crate::vocab::Universe;

/// Removed from the copy: per-job identity and bookkeeping.
const DELETED: &[&str] = &[
    "ClusterId",
    "ProcId",
    "BufferBlockSize",
    "BufferSize",
    "CondorPlatform",
    "CondorVersion",
    "CoreSize",
    "GlobalJobId",
    "User",
    "OsUser",
    "QDate",
    "RemoteWallClockTime",
    "LastRemoteWallClockTime",
    "ServerTime",
    "AutoClusterId",
    "AutoClusterAttrs",
    "TotalSubmitProcs",
    "StageInFinish",
    "StageInStart",
    "UserLog",
    "UserLogUseXML",
    "DAGManNodesLog",
    "DAGManNodesMask",
    "TimerRemove",
    "SUBMIT_Iwd",
    "EnteredCurrentStatus",
];

/// Set on the copy as a new job has them.
const ZEROED: &[(&str, f64)] = &[("RemoteUserCpu", 0.0), ("RemoteSysCpu", 0.0)];
const ZEROED_INT: &[&str] = &[
    "ExitStatus",
    "CompletionDate",
    "NumCkpts",
    "NumRestarts",
    "NumSystemHolds",
    "JobCommittedTime",
    "CommittedSlotTime",
    "CumulativeSlotTime",
    "TotalSuspensions",
    "LastSuspensionTime",
    "CumulativeSuspensionTime",
    "CommittedSuspensionTime",
];

/// Turns `ad` (a copy of the source) into a new job of `universe`; for the
/// grid universe, with `grid_resource`. Output and error remaps are undone
/// for a copy that is not sandboxed, as HTCondor does.
pub fn vanilla_to_grid(
    ad: &mut ClassAd,
    universe: i64,
    grid_resource: Option<&str>,
    sandboxed: bool,
) {
    for name in DELETED {
        ad.remove(name);
    }
    ad.insert("JobStatus", Expr::int(1));
    for (name, v) in ZEROED {
        ad.insert(name, Expr::Lit(Value::Real(*v)));
    }
    for name in ZEROED_INT {
        ad.insert(name, Expr::int(0));
    }
    ad.insert("OnExitBySignal", Expr::Lit(Value::Bool(false)));
    let old = ad.get("JobUniverse").cloned().unwrap_or(Expr::int(5));
    ad.insert("JobUniverse", Expr::int(universe));
    ad.insert("Remote_JobUniverse", old);
    if universe == Universe::Grid as i64 {
        ad.remove("CurrentHosts");
        if let Some(g) = grid_resource {
            ad.insert("GridResource", Expr::string(g));
        }
        let text = |ad: &ClassAd, a: &str| match ad.get(a).and_then(|e| e.literal_value()) {
            Some(Value::Str(s)) => Some(s.to_string()),
            _ => None,
        };
        if let Some(remaps) = text(ad, "TransferOutputRemaps")
            && !sandboxed
            && !remaps.is_empty()
        {
            ad.remove("TransferOutputRemaps");
            for a in ["Out", "Err"] {
                if let Some(name) = text(ad, a)
                    && let Some(to) = remap_of(&remaps, &name)
                {
                    ad.insert(a, Expr::string(&to));
                }
            }
        }
    }
}

/// Where `remaps` (`name = dest; name2 = dest2`) sends `name`.
fn remap_of(remaps: &str, name: &str) -> Option<String> {
    remaps.split(';').find_map(|pair| {
        let (from, to) = pair.split_once('=')?;
        (from.trim() == name).then(|| to.trim().to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::parse_ad;

    #[test]
    fn the_copy_is_a_new_grid_job() {
        let mut ad = parse_ad(
            r#"[ClusterId = 3; ProcId = 1; QDate = 5; JobStatus = 2; JobUniverse = 5;
                GlobalJobId = "x"; RemoteUserCpu = 7.0; Out = "o"; Err = "e";
                TransferOutputRemaps = "o = /tmp/out; x = y"; CurrentHosts = 1; Cmd = "/bin/true"]"#,
        )
        .unwrap();
        vanilla_to_grid(&mut ad, 9, Some("batch slurm"), false);
        for gone in [
            "ClusterId",
            "ProcId",
            "QDate",
            "GlobalJobId",
            "CurrentHosts",
            "TransferOutputRemaps",
        ] {
            assert!(ad.get(gone).is_none(), "{gone}");
        }
        let s = crate::classad::unparse::ad_to_string(&ad);
        for want in [
            "JobStatus = 1",
            "JobUniverse = 9",
            "Remote_JobUniverse = 5",
            r#"GridResource = "batch slurm""#,
            r#"Out = "/tmp/out""#,
            r#"Err = "e""#,
            "RemoteUserCpu = 0.0",
            "Cmd = \"/bin/true\"",
        ] {
            assert!(s.contains(want), "{want} not in {s}");
        }
    }
}
