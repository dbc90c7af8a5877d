//! The schedd's submit-time transforms: `JOB_TRANSFORM_NAMES` lists
//! `JOB_TRANSFORM_<name>` knobs (transform text, or a route ad in the old
//! syntax), applied in order to every job of a submission before it is
//! queued (HTCondor's `SubmitTransforms` in the schedd). A transform whose
//! text cannot be read is skipped with a warning, as the schedd skips it; a
//! transform that changes an immutable attribute (`SYSTEM_IMMUTABLE_JOB_ATTRS`:
//! Owner, ClusterId, JobUniverse, ProcId, MyType, TargetType, User) fails
//! the whole submission, so nothing is queued.

use crate::classad::ClassAd;
use crate::classad::unparse::unparse_old;
use crate::config::Config;
use crate::submit::Cluster;

use super::{Macros, Transform, TransformError};

/// Attributes no transform may change: the queue's immutable ones
/// (HTCondor's `SYSTEM_IMMUTABLE_JOB_ATTRS`, and tern's OwnerUid and
/// OwnerUmask, which the queue sets after the transforms anyway).
const IMMUTABLE: &[&str] = crate::vocab::job_attrs::SYSTEM_IMMUTABLE;

/// The transforms `JOB_TRANSFORM_NAMES` lists, in order, and a warning for
/// each one that cannot be used (undefined, or text that does not parse).
pub fn load(cfg: &Config) -> (Vec<Transform>, Vec<String>) {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    let names = match cfg.list_value("JOB_TRANSFORM_NAMES") {
        Ok(n) => n,
        Err(e) => {
            warnings.push(format!("WARNING: JOB_TRANSFORM_NAMES: {e}"));
            return (out, warnings);
        }
    };
    for name in names {
        let knob = format!("JOB_TRANSFORM_{name}");
        match load_one(cfg, &knob) {
            Ok(mut t) => {
                t.set_name(&name);
                out.push(t);
            }
            Err(m) => warnings.push(format!("WARNING: {knob} is ignored: {m}")),
        }
    }
    (out, warnings)
}

fn load_one(cfg: &Config, knob: &str) -> Result<Transform, String> {
    match super::from_config(cfg, knob) {
        Ok(Some(t)) => Ok(t),
        Ok(None) => Err("it is not defined".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// Applies `transforms` to every job of `cluster` (each job with its own
/// macros), then splits the results back into the cluster ad and the procs'
/// differences. Returns the warnings of commands that did nothing.
pub fn apply(
    cluster: &mut Cluster,
    transforms: &[Transform],
    cfg: &Config,
) -> Result<Vec<String>, TransformError> {
    if transforms.is_empty() || cluster.procs.is_empty() {
        return Ok(Vec::new());
    }
    let mut warnings = Vec::new();
    let mut jobs: Vec<ClassAd> = Vec::with_capacity(cluster.procs.len());
    for i in 0..cluster.procs.len() {
        let mut ad = cluster.full_ad(i);
        let mut macros = Macros::new();
        for t in transforms {
            if !t.matches(&ad) {
                continue;
            }
            let before: Vec<Option<String>> = IMMUTABLE
                .iter()
                .map(|a| ad.get(a).map(unparse_old))
                .collect();
            warnings.extend(t.apply(&mut ad, &mut macros, cfg)?);
            for (a, was) in IMMUTABLE.iter().zip(before) {
                if ad.get(a).map(unparse_old) != was {
                    return Err(TransformError::new(
                        t.origin(),
                        0,
                        format!(
                            "the transform {} changes the immutable attribute {a}; nothing was \
                             submitted",
                            t.name().unwrap_or("")
                        ),
                    ));
                }
            }
        }
        jobs.push(ad);
    }
    // The cluster ad keeps what every job has alike (set by a transform or
    // not); an attribute every job lost leaves it; an attribute some jobs
    // lost stays, since a proc ad cannot hide a cluster attribute.
    let old = std::mem::take(&mut cluster.cluster_ad);
    let mut cad = ClassAd::with_capacity(old.len());
    let alike = |name: &str| -> Option<crate::classad::Expr> {
        let first = jobs[0].get(name)?;
        let text = unparse_old(first);
        jobs[1..]
            .iter()
            .all(|j| j.get(name).is_some_and(|e| unparse_old(e) == text))
            .then(|| first.clone())
    };
    for (name, e) in old.iter() {
        match alike(name) {
            Some(now) => cad.insert(name, now),
            None if jobs.iter().any(|j| j.contains(name)) => cad.insert(name, e.clone()),
            None => {}
        }
    }
    for (name, _) in jobs[0].iter() {
        if !cad.contains(name)
            && !name.eq_ignore_ascii_case("ProcId")
            && let Some(e) = alike(name)
        {
            cad.insert(name, e);
        }
    }
    for (i, job) in jobs.iter().enumerate() {
        let mut diff = ClassAd::new();
        for (name, e) in job.iter() {
            let same = cad
                .get(name)
                .is_some_and(|c| unparse_old(c) == unparse_old(e));
            if !same || name.eq_ignore_ascii_case("ProcId") {
                diff.insert(name, e.clone());
            }
        }
        cluster.procs[i] = diff;
    }
    cluster.cluster_ad = cad;
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::parse_ad;

    fn cluster(n: i64) -> Cluster {
        Cluster {
            cluster_ad: parse_ad(
                "[ ClusterId = 7; Owner = \"alice\"; NeverThere2 = \"x\"; JobUniverse = 5 ]",
            )
            .unwrap(),
            procs: (0..n)
                .map(|p| parse_ad(&format!("[ ProcId = {p} ]")).unwrap())
                .collect(),
            warnings: Vec::new(),
            skip_file_checks: false,
        }
    }

    fn cfg(text: &str) -> Config {
        let mut c = Config::defaults();
        c.parse_str(text, "cfg").unwrap();
        c
    }

    #[test]
    fn transforms_in_order_with_requirements_and_old_syntax() {
        let c = cfg(
            "OPSYSANDVER = Linux9\nJOB_TRANSFORM_NAMES = BAD ALWAYS NEVER NEW MISSING\n\
             JOB_TRANSFORM_BAD @=end\n[\n 12foo = asd\"as\";\n]\n@end\n\
             JOB_TRANSFORM_ALWAYS @=end\n[\n requirements = True;\n set_AlwaysThere = \"on $(OPSYSANDVER)\";\n \
             delete_NeverThere2 = true;\n eval_set_OnlyProcZero = ProcId == 0 ? \"zero\" : \"non-zero\"\n]\n@end\n\
             JOB_TRANSFORM_NEVER @=end\n[ requirements = False; set_NeverThere1 = 1 ]\n@end\n\
             JOB_TRANSFORM_NEW @=end\n SET AlwaysThereNew = \"on $(OPSYSANDVER)\"\n@end\n",
        );
        let (ts, warnings) = load(&c);
        assert_eq!(
            ts.iter().map(|t| t.name().unwrap()).collect::<Vec<_>>(),
            ["ALWAYS", "NEVER", "NEW"]
        );
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].starts_with("WARNING: JOB_TRANSFORM_BAD is ignored"));
        assert_eq!(
            warnings[1],
            "WARNING: JOB_TRANSFORM_MISSING is ignored: it is not defined"
        );
        let mut cl = cluster(2);
        apply(&mut cl, &ts, &c).unwrap();
        let show = |i: usize| crate::classad::unparse::ad_to_old(&cl.full_ad(i), true);
        assert_eq!(
            show(0),
            "AlwaysThere = \"on Linux9\"\nAlwaysThereNew = \"on Linux9\"\nClusterId = 7\n\
             JobUniverse = 5\nOnlyProcZero = \"zero\"\nOwner = \"alice\"\nProcId = 0\n"
        );
        assert!(show(1).contains("OnlyProcZero = \"non-zero\""));
        // The shared attributes stay in the cluster ad.
        assert!(cl.cluster_ad.contains("AlwaysThere"));
        assert!(!cl.cluster_ad.contains("NeverThere2"));
        assert_eq!(
            crate::classad::unparse::ad_to_old(&cl.procs[1], true),
            "OnlyProcZero = \"non-zero\"\nProcId = 1\n"
        );
    }

    #[test]
    fn changing_an_immutable_attribute_fails_the_submission() {
        let c = cfg(
            "JOB_TRANSFORM_NAMES = ILLEGAL\nJOB_TRANSFORM_ILLEGAL @=end\n\
             [ requirements = illegal =?= true; set_ClusterId = -999; ]\n@end\n",
        );
        let (ts, w) = load(&c);
        assert!(w.is_empty(), "{w:?}");
        let mut cl = cluster(2);
        // Not matching: nothing happens.
        apply(&mut cl, &ts, &c).unwrap();
        cl.cluster_ad.insert(
            "illegal",
            crate::classad::Expr::Lit(crate::classad::Value::Bool(true)),
        );
        let e = apply(&mut cl, &ts, &c).unwrap_err();
        assert!(
            e.to_string()
                .contains("the transform ILLEGAL changes the immutable attribute ClusterId"),
            "{e}"
        );
    }
}
