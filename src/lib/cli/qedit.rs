//! `tern_qedit`: changes attributes of queued jobs, as HTCondor's
//! `condor_qedit`.
//!
//! The first argument names the jobs (cluster, cluster.proc or user) unless
//! `-constraint` comes first; every `-constraint` narrows the choice. The
//! rest is the edit list: `Name Value` pairs or `Name=Value` words, each
//! value a ClassAd expression. Every name and value is checked before the
//! queue is opened, so one bad edit changes nothing; the attributes the
//! queue owns (ClusterId, Owner, JobStatus, the rest of
//! [`crate::vocab::job_attrs`] and IMMUTABLE_JOB_ATTRS) are refused, and a
//! PROTECTED_JOB_ATTRS attribute is for super users.
//!
//! [`crate::actions::attributes::edit`] makes the edits in one transaction,
//! to every chosen job the real user may change (their own, or any for a
//! user in `QUEUE_SUPER_USERS`); this module reads the command line and
//! words the result as condor_qedit does.

use std::ffi::OsString;
use std::io::{self, Write};
use std::process::ExitCode;

use clap::{ArgMatches, Parser};

use super::env::ToolEnv;
use super::jobsel::parse_id;
use super::{CliError, parse_args_with, run_tool};
use crate::actions::Authority;
use crate::actions::attributes::{Edits, edit};
use crate::classad::Expr;
use crate::classad::ast::BinOp;
use crate::classad::parser::parse_expr_old;
use crate::queue::{JobId, QueueError, Selection};

/// Change attributes of queued jobs.
///
/// The jobs are named by the first argument, a cluster, cluster.proc or
/// user, or by -constraint (which may also narrow the first argument; give
/// it several times and every one must hold). The edit list follows: pairs
/// of an attribute name and a value ('RequestMemory 2048'), or single words
/// 'Name=Value'. Each value is a ClassAd expression; quote string values
/// ('"fast"'). ClusterId, ProcId, Owner, JobStatus and the other attributes
/// the queue keeps itself cannot be changed. Nothing is changed if any name
/// or value is invalid, or if no job you may change matches.
#[derive(Parser, Debug)]
#[command(
    name = "tern_qedit",
    version,
    after_help = "Examples:\n  tern_qedit 12.0 RequestMemory 2048\n  tern_qedit alice 'JobPrio=5'\n  tern_qedit -constraint 'JobStatus == 5' Description '\"retry\"'"
)]
pub struct Args {
    /// Edit every job matching this ClassAd expression (with several, every
    /// one must match)
    #[arg(long, value_name = "EXPR")]
    pub constraint: Vec<String>,

    /// Accepted for compatibility with condor_qedit; has no effect
    #[arg(long)]
    pub debug: bool,

    /// The jobs (CLUSTER, CLUSTER.PROC or USER), then the edit list
    #[arg(value_name = "JOBS NAME VALUE")]
    pub items: Vec<String>,

    /// Values that start with a dash but are no option.
    #[arg(long = STRAYS, hide = true, allow_hyphen_values = true)]
    pub dash_items: Vec<String>,
}

const STRAYS: &str = "dash-item";

/// Which jobs to edit.
#[derive(Debug, Clone)]
enum Target {
    Job(JobId),
    /// A cluster, a user, constraints or a mix: one constraint, described
    /// the way condor_qedit prints it.
    Constraint {
        sel: Selection,
        text: String,
    },
}

/// A parsed command line: the jobs, and the `Name Value` pairs (checked
/// against the attribute rules once the configuration is read).
#[derive(Debug)]
struct Plan {
    target: Target,
    pairs: Vec<(String, String)>,
}

pub fn main() -> ExitCode {
    run_tool("tern_qedit", run)
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (_, matches) = parse_args_with::<Args>(argv, Some(STRAYS))?;
    let plan = prepare(&matches)?;
    let env = ToolEnv::open("tern_qedit")?;
    let authority = Authority::from_config(&env.cfg, env.user.as_str())?;
    let edits = Edits::parse(plan.pairs.clone(), &authority).map_err(|e| {
        note!("{e}");
        note!("Transaction failed.  No attributes were set.");
        CliError::Reported(1)
    })?;
    let first = edits.names().next().unwrap_or_default().to_string();
    let failed = |what: String| -> CliError {
        note!("Failed to set attribute \"{first}\" {what}");
        note!("Transaction failed.  No attributes were set.");
        CliError::Reported(1)
    };
    let (sel, what) = match &plan.target {
        Target::Job(id) => (
            Selection {
                jobs: vec![*id],
                ..Selection::default()
            },
            format!("for job {id}."),
        ),
        Target::Constraint { sel, text } => (sel.clone(), format!("by constraint: {text}")),
    };
    let Some(mut queue) = env.queue(false)? else {
        return Err(failed(what));
    };
    let done = match edit(&mut queue, &authority, &sel, &edits, crate::clock::now()) {
        Ok(done) => done,
        Err(e) => {
            // The schedd's refusal, then condor_qedit's failure for the
            // attribute it refused.
            if let Some((job, attr)) = refused_attr(&e) {
                note!("{e}");
                note!("Failed to set attribute \"{attr}\" for job {job}.");
                note!("Transaction failed.  No attributes were set.");
                return Err(CliError::Reported(1));
            }
            return Err(e.into());
        }
    };
    if done.changed.is_empty() {
        return Err(failed(what));
    }
    let stdout = io::stdout();
    let mut out = stdout.lock();
    for name in edits.names() {
        writeln!(out, "Set attribute \"{name}\".")?;
    }
    out.flush()?;
    Ok(())
}

/// The job and attribute of the queue's refusal of an attribute (immutable,
/// secure or protected), if that is what `e` is.
fn refused_attr(e: &QueueError) -> Option<(JobId, &str)> {
    match e {
        QueueError::ProtectedAttr { job, attr, .. }
        | QueueError::AttrNotPermitted { job, attr, .. } => Some((*job, attr)),
        _ => None,
    }
}

/// Reads the command line in order: the jobs, the constraints, the edits,
/// checking every name and value.
fn prepare(m: &ArgMatches) -> Result<Plan, CliError> {
    let mut items: Vec<(usize, String)> = Vec::new();
    for id in ["items", "dash_items"] {
        if let (Some(i), Some(v)) = (m.indices_of(id), m.get_many::<String>(id)) {
            items.extend(i.zip(v.cloned()));
        }
    }
    items.sort_by_key(|(i, _)| *i);
    let constraints: Vec<(usize, String)> = match (
        m.indices_of("constraint"),
        m.get_many::<String>("constraint"),
    ) {
        (Some(i), Some(v)) => i.zip(v.cloned()).collect(),
        _ => Vec::new(),
    };
    let first_constraint = constraints.first().map(|(i, _)| *i);
    let mut rest: &[(usize, String)] = &items;
    let mut target: Option<Target> = None;
    // The first argument names the jobs unless a -constraint comes first.
    if let Some((i, first)) = items.first()
        && first_constraint.is_none_or(|c| *i < c)
    {
        target = Some(job_argument(first)?);
        rest = &items[1..];
    }
    if !constraints.is_empty() {
        target = Some(match target {
            Some(Target::Job(id)) => {
                note!("tern_qedit: proc_id specified. Ignoring constraint option");
                Target::Job(id)
            }
            other => with_constraints(other, &constraints)?,
        });
    }
    let Some(target) = target else {
        return Err(usage(
            "name the jobs to edit: a cluster, cluster.proc or user, or -constraint",
        ));
    };
    let pairs = edit_list(rest)?;
    Ok(Plan { target, pairs })
}

fn usage(msg: &str) -> CliError {
    CliError::Usage {
        msg: msg.to_string(),
        hint: Some(
            "tern_qedit {CLUSTER | CLUSTER.PROC | USER | -constraint EXPR} NAME VALUE ...".into(),
        ),
    }
}

/// The first argument: a job, a cluster or a user.
fn job_argument(a: &str) -> Result<Target, CliError> {
    if a.starts_with(|c: char| c.is_ascii_digit()) {
        return match parse_id(a) {
            Some((c, _)) if c <= 0 => {
                note!("Invalid cluster # from {a}.");
                Err(CliError::Reported(1))
            }
            Some((c, Some(p))) => Ok(Target::Job(JobId {
                cluster: c,
                proc: p,
            })),
            Some((c, None)) => Ok(Target::Constraint {
                sel: Selection {
                    clusters: vec![c],
                    ..Selection::default()
                },
                text: format!("(ClusterId == {c})"),
            }),
            None => Err(usage(&format!("'{a}' is not a cluster or a cluster.proc"))),
        };
    }
    if a.is_empty() || !a.chars().all(|c| c.is_alphanumeric() || "._-@".contains(c)) {
        return Err(usage(&format!(
            "'{a}' is not a cluster, a cluster.proc or a user name"
        )));
    }
    Ok(Target::Constraint {
        sel: Selection {
            owners: vec![a.to_string()],
            ..Selection::default()
        },
        text: format!("(Owner == \"{a}\")"),
    })
}

/// Narrows a target by the `-constraint` options, building condor_qedit's
/// text for messages: `( (ClusterId == 3) ) && JobStatus == 1`.
fn with_constraints(
    target: Option<Target>,
    constraints: &[(usize, String)],
) -> Result<Target, CliError> {
    let (mut sel, mut text) = match target {
        Some(Target::Constraint { sel, text }) => (sel, Some(text)),
        _ => (Selection::default(), None),
    };
    for (_, c) in constraints {
        let e = parse_expr_old(c).map_err(|e| CliError::constraint(c, e))?;
        let e = Expr::Paren(Box::new(e));
        sel.constraint = Some(match sel.constraint.take() {
            Some(prev) => Expr::binary(BinOp::And, prev, e),
            None => e,
        });
        text = Some(match text {
            Some(t) => format!("( {t} ) && {c}"),
            None => c.clone(),
        });
    }
    Ok(Target::Constraint {
        sel,
        text: text.unwrap_or_default(),
    })
}

/// Reads the edit list, `Name Value` pairs and `Name=Value` words (the
/// library checks every name and value, as condor_qedit does, once the
/// configuration's attribute lists are known).
fn edit_list(items: &[(usize, String)]) -> Result<Vec<(String, String)>, CliError> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut it = items.iter().map(|(_, s)| s);
    while let Some(a) = it.next() {
        match a.split_once('=') {
            Some((n, v)) => pairs.push((n.trim().to_string(), v.trim().to_string())),
            None => match it.next() {
                Some(v) => pairs.push((a.clone(), v.clone())),
                None => return Err(usage(&format!("attribute '{a}' has no value"))),
            },
        }
    }
    if pairs.is_empty() {
        return Err(usage("give at least one attribute and its value"));
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(args: &[&str]) -> Result<Plan, CliError> {
        let mut argv = vec![OsString::from("tern_qedit")];
        argv.extend(args.iter().map(OsString::from));
        let (_, m) = parse_args_with::<Args>(argv, Some(STRAYS))?;
        prepare(&m)
    }

    fn names(p: &Plan) -> Vec<&str> {
        p.pairs.iter().map(|(n, _)| n.as_str()).collect()
    }

    #[test]
    fn pairs_and_assignments_mix() {
        let p = plan(&["12.0", "A", "1", "B=2", "C", "-3", "D = x + 1"]).unwrap();
        assert!(matches!(
            p.target,
            Target::Job(JobId {
                cluster: 12,
                proc: 0
            })
        ));
        assert_eq!(names(&p), ["A", "B", "C", "D"]);
    }

    #[test]
    fn constraints_narrow_the_first_argument_or_stand_alone() {
        let p = plan(&["3", "-constraint", "JobStatus == 1", "A", "1"]).unwrap();
        let Target::Constraint { sel, text } = &p.target else {
            panic!("{p:?}")
        };
        assert_eq!(sel.clusters, [3]);
        assert_eq!(text, "( (ClusterId == 3) ) && JobStatus == 1");
        let p = plan(&["-constraint", "X", "-const", "Y", "alice", "1"]).unwrap();
        let Target::Constraint { text, .. } = &p.target else {
            panic!("{p:?}")
        };
        assert_eq!(text, "( X ) && Y");
        assert_eq!(names(&p), ["alice"]);
    }
}
