//! GridResource: which backend runs a grid job, read as HTCondor 24.0's
//! gridmanager reads it (section 1.1 of the grid spec), with its hold
//! messages for strings it cannot use.

/// What a job's GridResource names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resource {
    /// `batch slurm` (or the legacy `slurm`-less spellings are refused):
    /// the local Slurm found on PATH.
    Slurm,
    /// `condor <schedd> <pool>`: another tern queue. The schedd token is
    /// that queue's SPOOL directory (an absolute path); the pool is kept
    /// only for the GridJobId.
    Condor { schedd: String, pool: String },
    /// A string the job cannot run with: hold it with this reason.
    Unusable(String),
}

/// The batch types the gridmanager's batch handler takes, as a prefix of
/// the string (case-insensitive).
const BATCH_PREFIXES: &[&str] = &["batch", "blah", "pbs", "lsf", "nqs", "sge", "naregi"];

/// Reads a GridResource string (`None`: the attribute is missing).
pub fn parse(gr: Option<&str>) -> Resource {
    let Some(gr) = gr.map(str::trim).filter(|s| !s.is_empty()) else {
        return Resource::Unusable("GridResource is not set properly in the job ad".into());
    };
    let words: Vec<&str> = gr.split_whitespace().collect();
    let first = words[0].to_ascii_lowercase();
    if first == "condor" {
        let Some(schedd) = words.get(1) else {
            return Resource::Unusable("GridResource missing schedd name".into());
        };
        let Some(pool) = words.get(2) else {
            return Resource::Unusable("GridResource missing pool name".into());
        };
        return Resource::Condor {
            schedd: schedd.to_string(),
            pool: pool.to_string(),
        };
    }
    let lower = gr.to_ascii_lowercase();
    if BATCH_PREFIXES.iter().any(|p| lower.starts_with(p)) {
        // `batch <type> [remote args]`, or the legacy `<type> [args]`.
        let (ty, rest) = if first == "batch" {
            match words.get(1) {
                Some(t) => (t.to_ascii_lowercase(), &words[2..]),
                None => {
                    return Resource::Unusable(
                        "GridResource is not set properly in the job ad".into(),
                    );
                }
            }
        } else {
            (first.clone(), &words[1..])
        };
        if ty != "slurm" {
            return Resource::Unusable(format!("grid type batch {ty} is not supported"));
        }
        if !rest.is_empty() {
            // The ssh form (`batch slurm user@host`): tern runs sbatch on
            // this machine only.
            return Resource::Unusable(format!(
                "grid type batch slurm with a remote host ({}) is not supported",
                rest.join(" ")
            ));
        }
        return Resource::Slurm;
    }
    Resource::Unusable(format!("grid type {} is not supported", words[0]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_resources_read_as_the_gridmanager_reads_them() {
        let u = |s: &str| Resource::Unusable(s.to_string());
        for (gr, want) in [
            (Some("batch slurm"), Resource::Slurm),
            (Some("  BATCH Slurm "), Resource::Slurm),
            (None, u("GridResource is not set properly in the job ad")),
            (
                Some(""),
                u("GridResource is not set properly in the job ad"),
            ),
            (
                Some("batch"),
                u("GridResource is not set properly in the job ad"),
            ),
            (Some("batch pbs"), u("grid type batch pbs is not supported")),
            (Some("pbs"), u("grid type batch pbs is not supported")),
            (
                Some("batch slurm alice@login"),
                u("grid type batch slurm with a remote host (alice@login) is not supported"),
            ),
            (Some("condor"), u("GridResource missing schedd name")),
            (Some("condor /s"), u("GridResource missing pool name")),
            (
                Some("condor /s p"),
                Resource::Condor {
                    schedd: "/s".into(),
                    pool: "p".into(),
                },
            ),
            (
                Some("arc ce.example.org"),
                u("grid type arc is not supported"),
            ),
        ] {
            assert_eq!(parse(gr), want, "{gr:?}");
        }
    }
}
