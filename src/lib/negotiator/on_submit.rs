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
//! A slot counts as taken as the pass itself counts it when it decides
//! whether any slot has room ([`matchmaking::has_room`]), and a slot that
//! names a job must also have that job's shadow alive. Anything else a
//! pass could do for new jobs keeps the pass: preemption
//! ([`super::may_preempt`]), the job router's routes, a universe other
//! than vanilla (scheduler and grid jobs need no slot), shadows that ask
//! for no pass when they end (NEGOTIATE_ON_EXIT false). So does a pass's periodic
//! work: once PERIODIC_EXPR_INTERVAL has passed since the last pass, or
//! since the last evaluation of every job's periodic policy, a submit asks
//! for a pass whatever the slots (the policies of running jobs, a slot
//! layout changed in the configuration, the cron and fetch hooks, all come
//! round within that interval, as from cron). Any doubt keeps it too.

use std::path::Path;

use super::{launch, matchmaking};
use crate::classad::Value;
use crate::config::Config;
use crate::machine;
use crate::queue::{JobId, Queue, joblock};
use crate::submit::Cluster;
use crate::vocab::Universe;

/// The vanilla universe, the one that runs on a slot of this machine.
const VANILLA: i64 = Universe::Vanilla.code();

/// Whether a pass started now could start or route any job of `cluster`,
/// just committed to `q`. `false` only when it certainly could not. The
/// look at every job comes last: a big cluster's is the costly one.
pub fn could_start(cfg: &Config, q: &Queue, spool: &Path, cluster: &Cluster, now: i64) -> bool {
    !(nothing_preempts_or_routes(cfg)
        && cfg.get_bool("NEGOTIATE_ON_EXIT", true) == Ok(true)
        && nothing_periodic_due(cfg, q, now)
        && every_slot_taken(q, spool)
        && every_job_vanilla(cluster))
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
    super::may_preempt(cfg).is_ok_and(|p| !p) && launch::routes_configured(cfg).is_ok_and(|r| !r)
}

/// Every job is in the vanilla universe, as a literal.
fn every_job_vanilla(cluster: &Cluster) -> bool {
    let vanilla = |e: &crate::classad::Expr| matches!(e.literal_value(), Some(Value::Int(VANILLA)));
    cluster.cluster_ad.get("JobUniverse").is_some_and(vanilla)
        && cluster
            .procs
            .iter()
            .all(|p| p.get("JobUniverse").is_none_or(vanilla))
}

/// No slot has room, as the pass judges room, and every slot that names a
/// job has that job's shadow alive (holding the job's lock, its recorded
/// pid running); and there is at least one slot.
fn every_slot_taken(q: &Queue, spool: &Path) -> bool {
    let Ok(slots) = machine::load_slots(q.conn()) else {
        return false;
    };
    !slots.is_empty()
        && slots.iter().all(|s| {
            !matchmaking::has_room(s)
                && match (s.cluster, s.proc) {
                    (Some(cluster), Some(proc)) => {
                        joblock::held_by_its_shadow(spool, JobId { cluster, proc })
                    }
                    _ => s.state != "Claimed",
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
            skip_file_checks: false,
        }
    }

    #[test]
    fn only_vanilla_jobs_as_literals_need_a_slot() {
        let vanilla = "[JobUniverse = 5; RequestCpus = 1]";
        assert!(every_job_vanilla(&cluster(vanilla, &["[ProcId = 0]"])));
        for (whole, procs) in [
            ("[JobUniverse = 7; RequestCpus = 1]", vec!["[ProcId = 0]"]),
            (
                "[JobUniverse = MY.u; RequestCpus = 1]",
                vec!["[ProcId = 0]"],
            ),
            ("[RequestCpus = 1]", vec!["[ProcId = 0]"]),
            (
                vanilla,
                vec!["[ProcId = 0]", "[ProcId = 1; JobUniverse = 12]"],
            ),
        ] {
            assert!(
                !every_job_vanilla(&cluster(whole, &procs)),
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
            "PREEMPTION_REQUIREMENTS = False\nRANK = Owner == \"alice\"\n"
        )));
        for text in [
            "PREEMPTION_REQUIREMENTS = True\n",
            "STARTD_RANK_PREEMPTION = true\n",
            "JOB_ROUTER_ROUTE_NAMES = slurm\n",
            "JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES = true\n",
        ] {
            assert!(!nothing_preempts_or_routes(&cfg(text)), "{text}");
        }
    }
}
