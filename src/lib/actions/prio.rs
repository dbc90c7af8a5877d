//! Setting or adjusting jobs' `JobPrio`, as HTCondor's `condor_prio`
//! (`src/condor_prio/prio.cpp`) does it through the schedd.
//!
//! Every job the targets name is changed in one transaction, each job once
//! however many targets name it. There is no range: any integer goes, and
//! an adjustment past the ends of the integers stops there. The priority
//! only orders a submitter's own idle jobs for the next pass: a running
//! job whose priority drops keeps running (tern never preempts on
//! JobPrio), so no shadow is told anything.

use std::collections::HashSet;
use std::rc::Rc;

use super::Authority;
use crate::classad::{Expr, Value};
use crate::queue::{Change, JobId, Queue, QueueError, Selection, matches_constraint};

/// What happens to each job's priority.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewPrio {
    Set(i64),
    Add(i64),
}

impl NewPrio {
    /// The priority a job at `old` gets.
    pub fn apply(self, old: i64) -> i64 {
        match self {
            NewPrio::Set(n) => n,
            NewPrio::Add(n) => old.saturating_add(n),
        }
    }
}

/// One way a command line names jobs.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    Job(JobId),
    Cluster(i64),
    Owner(String),
    /// `-all`, or a constraint with no cluster or user to narrow: only the
    /// jobs the user may change are chosen, so other users' jobs are left
    /// out without a word.
    Everything,
}

/// A job whose priority was not changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The job is not in the queue, or its JobPrio is no integer.
    NoPriority(JobId),
    /// The user may not change the job.
    Denied(JobId),
}

/// Changes the priority of every job the targets name (a cluster, user or
/// everything narrowed by `constraint`; a job id is not) in one
/// transaction for `authority`, and returns the jobs it could not change,
/// in the order of the targets.
pub fn set_prio(
    queue: &mut Queue,
    authority: &Authority,
    prio: NewPrio,
    targets: &[Target],
    constraint: Option<&Expr>,
    now: i64,
) -> Result<Vec<Refusal>, QueueError> {
    let mut refused = Vec::new();
    let mut seen: HashSet<JobId> = HashSet::new();
    queue.write_as(authority, now, |w| {
        for t in targets {
            let sel = target_selection(t, constraint);
            let rows = w.rows(&sel)?;
            if let Target::Job(id) = t
                && rows.is_empty()
            {
                refused.push(Refusal::NoPriority(*id));
            }
            for row in rows {
                if !seen.insert(row.id) {
                    continue;
                }
                let ad = Rc::new(w.full_ad(&row)?);
                if let Some(c) = &sel.constraint
                    && !matches_constraint(c, &ad)
                {
                    continue;
                }
                let mine = w.may_change(&row);
                if *t == Target::Everything && !mine {
                    continue;
                }
                // Only an integer: HTCondor's GetAttributeInt.
                let Value::Int(old) = ad.eval("JobPrio") else {
                    refused.push(Refusal::NoPriority(row.id));
                    continue;
                };
                if !mine {
                    refused.push(Refusal::Denied(row.id));
                    continue;
                }
                let new = Expr::int(prio.apply(old));
                w.change(&row, &ad, &Change::Set(vec![("JobPrio".into(), new)]))?;
            }
        }
        Ok(())
    })?;
    Ok(refused)
}

/// The jobs one target names; a job id is not narrowed by the constraint.
fn target_selection(t: &Target, constraint: Option<&Expr>) -> Selection {
    let mut sel = Selection {
        constraint: constraint.cloned(),
        ..Selection::default()
    };
    match t {
        Target::Job(id) => {
            sel.jobs.push(*id);
            sel.constraint = None;
        }
        Target::Cluster(c) => sel.clusters.push(*c),
        Target::Owner(o) => sel.owners.push(o.clone()),
        Target::Everything => {}
    }
    sel
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjustments_stop_at_the_ends_of_the_integers() {
        assert_eq!(NewPrio::Add(5).apply(-3), 2);
        assert_eq!(NewPrio::Add(1).apply(i64::MAX), i64::MAX);
        assert_eq!(NewPrio::Set(-9).apply(100), -9);
    }
}
