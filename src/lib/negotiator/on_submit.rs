//! Whether a pass asked for by a submit could start anything now.
//!
//! tern_submit asks for a pass so that its jobs start at once, not at the
//! next cron pass. When every slot is taken by a live shadow, a pass could
//! start nothing: a shell loop of submits beside running jobs then paid a
//! whole `tern_negotiate` process (start-up, configuration, the queue's
//! schema, a pass that finds no slot) for about one submit in five, on
//! the cpus its own jobs run on. [`could_start`] says when the pass can be
//! left out.
//!
//! No job waits for it: a shadow whose job ends either takes the next idle
//! job of its submitter (claim reuse) or lets its slot go and then asks for
//! a pass (NEGOTIATE_ON_EXIT, as every shadow does when it ends). The
//! submit commits its jobs before it reads the slots, so for every slot it
//! found taken, the shadow's next decision comes after the jobs are in the
//! queue; a slot let go before that read is seen free, and the submit asks
//! for the pass itself. A shadow about to linger takes the lingering mark
//! after its decision, and its first look finds the jobs (see
//! [`super::linger`]). A shadow that died holds no job lock: its slot
//! counts as free, and the pass that puts it right is asked for.
//!
//! Anything else a pass could do for new jobs keeps the pass: preemption
//! (PREEMPTION_REQUIREMENTS or a slot RANK), the job router's routes, a
//! universe that needs no slot, a request the leftover of a partitionable
//! slot may fit, a slot in any state but Claimed, shadows that ask for no
//! pass when they end (NEGOTIATE_ON_EXIT false). So does a pass's periodic
//! work: once PERIODIC_EXPR_INTERVAL has passed since the last pass, or
//! since the last evaluation of every job's periodic policy, a submit asks
//! for a pass whatever the slots (the policies of running jobs, a slot
//! layout changed in the configuration, the cron and fetch hooks, all come
//! round within that interval, as from cron). Any doubt keeps it too.

use std::path::Path;

use crate::classad::{ClassAd, Value};
use crate::config::Config;
use crate::machine::{self, SlotKind};
use crate::queue::{JobId, Queue, joblock};
use crate::submit::Cluster;

/// The vanilla universe, the one that runs on a slot of this machine.
const VANILLA: i64 = 5;

/// Whether a pass started now could start or route any job of `cluster`,
/// just committed to `q`. `false` only when it certainly could not.
pub fn could_start(cfg: &Config, q: &Queue, spool: &Path, cluster: &Cluster, now: i64) -> bool {
    !(nothing_preempts_or_routes(cfg)
        && cfg.get_bool("NEGOTIATE_ON_EXIT", true) == Ok(true)
        && every_job_needs_a_slot(cluster)
        && nothing_periodic_due(cfg, q, now)
        && every_slot_taken(q, spool))
}

/// A pass, and a full periodic evaluation, within PERIODIC_EXPR_INTERVAL
/// (an interval of 0 or less evaluates in every pass: never).
fn nothing_periodic_due(cfg: &Config, q: &Queue, now: i64) -> bool {
    let Ok(interval) = cfg.get_int("PERIODIC_EXPR_INTERVAL", 60) else {
        return false;
    };
    let recent = |key: &str| {
        q.meta(key)
            .ok()
            .flatten()
            .is_some_and(|at| at <= now && now - at < interval)
    };
    interval > 0 && recent("last_pass") && recent("periodic_at")
}

/// No preemption and no routes configured.
fn nothing_preempts_or_routes(cfg: &Config) -> bool {
    let unset = |knob: &str, none: &[&str]| match cfg.get(knob) {
        Ok(None) => true,
        Ok(Some(v)) => none.iter().any(|n| v.trim().eq_ignore_ascii_case(n)),
        Err(_) => false,
    };
    unset("PREEMPTION_REQUIREMENTS", &["false"])
        && unset("RANK", &["0", "false"])
        && cfg
            .list_value("JOB_ROUTER_ROUTE_NAMES")
            .is_ok_and(|names| names.is_empty())
        && cfg.get_bool("JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES", false) == Ok(false)
}

/// Every job runs in the vanilla universe and asks for at least one cpu,
/// as literals (so no leftover of a partitionable slot without cpus fits).
fn every_job_needs_a_slot(cluster: &Cluster) -> bool {
    // Whether the ad's own attribute is such a literal; None when unset.
    let literal_at_least = |ad: &ClassAd, name: &str, min: i64| {
        ad.get(name)
            .map(|e| matches!(e.literal_value(), Some(Value::Int(i)) if *i >= min))
    };
    let universe_ok = |ad: &ClassAd| {
        ad.get("JobUniverse")
            .map(|e| matches!(e.literal_value(), Some(Value::Int(VANILLA))))
    };
    let whole = &cluster.cluster_ad;
    if universe_ok(whole) != Some(true) || literal_at_least(whole, "RequestCpus", 1) != Some(true) {
        return false;
    }
    cluster.procs.iter().all(|p| {
        universe_ok(p).unwrap_or(true) && literal_at_least(p, "RequestCpus", 1).unwrap_or(true)
    })
}

/// Every slot is Claimed by a live shadow (one that holds its job's lock
/// and runs), or is a partitionable slot with no cpu left; and there is at
/// least one slot.
fn every_slot_taken(q: &Queue, spool: &Path) -> bool {
    let Ok(slots) = machine::load_slots(q.conn()) else {
        return false;
    };
    !slots.is_empty()
        && slots.iter().all(|s| match s.kind {
            SlotKind::Partitionable => s.cpus <= 0 && s.state == "Unclaimed",
            SlotKind::Static | SlotKind::Dynamic => {
                s.state == "Claimed"
                    && match (s.cluster, s.proc) {
                        (Some(cluster), Some(proc)) => {
                            joblock::held_by_its_shadow(spool, JobId { cluster, proc })
                        }
                        _ => false,
                    }
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(whole: &str, procs: &[&str]) -> Cluster {
        Cluster {
            cluster_ad: crate::classad::parse_ad(whole).unwrap(),
            procs: procs
                .iter()
                .map(|p| crate::classad::parse_ad(p).unwrap())
                .collect(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn only_vanilla_jobs_asking_for_a_cpu_as_literals_need_a_slot() {
        let vanilla = "[JobUniverse = 5; RequestCpus = 1]";
        assert!(every_job_needs_a_slot(&cluster(vanilla, &["[ProcId = 0]"])));
        for (whole, procs) in [
            ("[JobUniverse = 7; RequestCpus = 1]", vec!["[ProcId = 0]"]),
            ("[JobUniverse = 5; RequestCpus = 0]", vec!["[ProcId = 0]"]),
            (
                "[JobUniverse = 5; RequestCpus = MY.x]",
                vec!["[ProcId = 0]"],
            ),
            ("[JobUniverse = 5]", vec!["[ProcId = 0]"]),
            (
                vanilla,
                vec!["[ProcId = 0]", "[ProcId = 1; JobUniverse = 12]"],
            ),
            (vanilla, vec!["[ProcId = 0; RequestCpus = 0]"]),
        ] {
            assert!(
                !every_job_needs_a_slot(&cluster(whole, &procs)),
                "{whole} {procs:?}"
            );
        }
    }

    #[test]
    fn preemption_and_routes_keep_the_pass() {
        let cfg = |text: &str| {
            let mut c = Config::defaults();
            c.parse_str(text, "test").unwrap();
            c
        };
        assert!(nothing_preempts_or_routes(&cfg("")));
        assert!(nothing_preempts_or_routes(&cfg(
            "PREEMPTION_REQUIREMENTS = False\nRANK = 0\n"
        )));
        for text in [
            "PREEMPTION_REQUIREMENTS = True\n",
            "RANK = Owner == \"alice\"\n",
            "JOB_ROUTER_ROUTE_NAMES = slurm\n",
            "JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES = true\n",
        ] {
            assert!(!nothing_preempts_or_routes(&cfg(text)), "{text}");
        }
    }
}
