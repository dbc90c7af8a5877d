//! GridJobId and GridJobStatus as HTCondor keeps them (grid spec 1.2, 1.3).
//!
//! A Slurm job's id goes through two stages: `batch slurm <sandbox-id>`,
//! committed before sbatch runs (so a gridmanager that dies in between
//! finds the submission by its job name instead of submitting twice), and
//! `batch slurm <sandbox-id> slurm/<YYYYMMDD>/<jobid>` once sbatch answered.
//! A job on another tern queue has `condor <schedd> <pool> <c>.<p>`.

use crate::queue::JobId;

/// The sandbox id, `<pool>_<GlobalJobId>` with `#` and `@` made `_`. tern
/// has no collector (`NoPool`) and no GlobalJobId attribute; the one
/// HTCondor would give, `<host>#<c>.<p>#<QDate>`, is built here.
pub fn sandbox_id(host: &str, id: JobId, qdate: i64) -> String {
    format!("NoPool_{host}#{id}#{qdate}").replace(['#', '@'], "_")
}

/// The Slurm job name a submission carries, from which a restarted
/// gridmanager recovers it.
pub fn slurm_job_name(sandbox: &str) -> String {
    format!("tern_{sandbox}")
}

/// A Slurm GridJobId as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlurmId {
    pub sandbox: String,
    /// `(date, job id)` once sbatch answered.
    pub submitted: Option<(String, String)>,
}

impl SlurmId {
    pub fn parse(s: &str) -> Option<SlurmId> {
        let w: Vec<&str> = s.split_whitespace().collect();
        if w.len() < 3 || !w[0].eq_ignore_ascii_case("batch") {
            return None;
        }
        let sandbox = w[2].to_string();
        let submitted = match w.get(3) {
            None => None,
            Some(t) => {
                let mut parts = t.splitn(3, '/');
                let (_, date, job) = (parts.next()?, parts.next()?, parts.next()?);
                Some((date.to_string(), job.to_string()))
            }
        };
        Some(SlurmId { sandbox, submitted })
    }

    pub fn job(&self) -> Option<&str> {
        self.submitted.as_ref().map(|(_, j)| j.as_str())
    }

    pub fn format(&self) -> String {
        match &self.submitted {
            None => format!("batch slurm {}", self.sandbox),
            Some((d, j)) => format!("batch slurm {} slurm/{d}/{j}", self.sandbox),
        }
    }
}

/// The remote job of a `condor` GridJobId (its last token).
pub fn condor_remote(grid_job_id: &str) -> Option<JobId> {
    let w: Vec<&str> = grid_job_id.split_whitespace().collect();
    if w.len() != 4 || !w[0].eq_ignore_ascii_case("condor") {
        return None;
    }
    let (c, p) = w[3].split_once('.')?;
    Some(JobId {
        cluster: c.parse().ok()?,
        proc: p.parse().ok()?,
    })
}

/// GridJobStatus names by JobStatus number (0 is UNKNOWN).
pub fn status_name(code: i64) -> &'static str {
    match code {
        1 => "IDLE",
        2 => "RUNNING",
        3 => "REMOVED",
        4 => "COMPLETED",
        5 => "HELD",
        6 => "TRANSFERRING_OUTPUT",
        7 => "SUSPENDED",
        _ => "UNKNOWN",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurm_ids_go_from_three_tokens_to_four_and_back() {
        let id = JobId {
            cluster: 12,
            proc: 0,
        };
        let sb = sandbox_id("submit.example.org", id, 1700000000);
        assert_eq!(sb, "NoPool_submit.example.org_12.0_1700000000");
        let three = SlurmId {
            sandbox: sb.clone(),
            submitted: None,
        };
        assert_eq!(three.format(), format!("batch slurm {sb}"));
        assert_eq!(SlurmId::parse(&three.format()), Some(three.clone()));
        let four = SlurmId {
            sandbox: sb.clone(),
            submitted: Some(("20240501".into(), "4242".into())),
        };
        assert_eq!(
            four.format(),
            format!("batch slurm {sb} slurm/20240501/4242")
        );
        assert_eq!(SlurmId::parse(&four.format()).unwrap().job(), Some("4242"));
        assert_eq!(SlurmId::parse("condor a b 1.0"), None);
        assert_eq!(
            condor_remote("condor /spool local 7.3"),
            Some(JobId {
                cluster: 7,
                proc: 3
            })
        );
        assert_eq!(status_name(0), "UNKNOWN");
        assert_eq!(status_name(2), "RUNNING");
    }
}
