//! `tern_prio`: changes the priority of queued jobs (their `JobPrio`), as
//! HTCondor's `condor_prio` (`src/condor_prio/prio.cpp`).
//!
//! `-p N` sets the priority, `+N` and `-N` add to or take from it; with
//! both, `-p` wins, and of several of one kind the last counts. The
//! arguments are read and checked before the queue is opened; then
//! [`crate::actions::prio::set_prio`] changes every job they name in one
//! queue transaction, and this module words what it refused.
//!
//! As in HTCondor, nothing is printed for a job that was changed. A job
//! whose `JobPrio` is no integer (or that does not exist) gets `Couldn't
//! retrieve current priority for 12.0.`, and one the real user may not
//! change (only its owner, or a user in `QUEUE_SUPER_USERS`, may) gets
//! `Couldn't set new priority for 12.0.`; either makes the exit status 1.
//! `-all` and a `-constraint` standing alone choose only among the jobs the
//! user may change, as `tern_rm -all` does, so other users' jobs are left
//! out without a word.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{ArgMatches, Parser};

use super::env::ToolEnv;
use super::jobsel::{owner_arg, parse_id, selection};
use super::{CliError, parse_args_with, run_tool};
use crate::actions::Authority;
use crate::actions::prio::{NewPrio, Refusal, Target, set_prio};
use crate::classad::Expr;
use crate::classad::ast::BinOp;
use crate::queue::JobId;

/// Change the priority of jobs in the queue.
///
/// Give a new priority with -p N, or raise or lower the current one with +N
/// or -N; the priority is any integer, higher running sooner among your own
/// jobs. Jobs are named by cluster (every job in it), cluster.proc, user
/// (every job of that user), -constraint or -all; only your own jobs can be
/// changed, unless you are named in QUEUE_SUPER_USERS. Nothing is printed
/// for a job that was changed. A running job keeps running whatever its
/// new priority.
#[derive(Parser, Debug)]
#[command(
    name = "tern_prio",
    version,
    after_help = "Examples:\n  tern_prio -p 10 12.0\n  tern_prio +5 12\n  tern_prio -3 alice\n  tern_prio -p 0 -all"
)]
pub struct Args {
    /// Set the priority to N (wins over +N and -N)
    #[arg(
        long = "prio",
        alias = "p",
        value_name = "N",
        allow_negative_numbers = true
    )]
    pub prio: Vec<i64>,

    /// Change every job matching this ClassAd expression (with several,
    /// every one must match); with cluster or user arguments, it narrows them
    #[arg(long, value_name = "EXPR")]
    pub constraint: Vec<String>,

    /// Change every job (every job of yours, unless you are a queue super
    /// user)
    #[arg(long)]
    pub all: bool,

    /// Priority adjustments (+N) and the jobs to change: CLUSTER,
    /// CLUSTER.PROC or USER
    #[arg(value_name = "+N|CLUSTER|CLUSTER.PROC|USER")]
    pub targets: Vec<String>,

    /// Arguments that start with a dash but are no option: -N.
    #[arg(long = STRAYS, hide = true, allow_hyphen_values = true)]
    pub dash_args: Vec<String>,
}

const STRAYS: &str = "dash-arg";

/// A checked command line.
#[derive(Debug)]
struct Plan {
    prio: NewPrio,
    targets: Vec<Target>,
    /// Every `-constraint`, joined with `&&`.
    constraint: Option<Expr>,
    /// Arguments refused while reading (cluster 0), already reported.
    bad_args: bool,
}

pub fn main() -> ExitCode {
    run_tool("tern_prio", run)
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (args, matches) = parse_args_with::<Args>(argv, Some(STRAYS))?;
    let plan = prepare(&args, &matches)?;
    let env = ToolEnv::open("tern_prio")?;
    let authority = Authority::from_config(&env.cfg, env.user.as_str())?;
    let mut queue = env.queue(false)?;
    let refused = match queue.as_mut() {
        Some(q) => set_prio(
            q,
            &authority,
            plan.prio,
            &plan.targets,
            plan.constraint.as_ref(),
            crate::clock::now(),
        )?,
        // No queue yet: only the jobs named by id are missed.
        None => plan
            .targets
            .iter()
            .filter_map(|t| match t {
                Target::Job(id) => Some(Refusal::NoPriority(*id)),
                _ => None,
            })
            .collect(),
    };
    for r in &refused {
        // condor_prio's words.
        match r {
            Refusal::NoPriority(id) => note!("Couldn't retrieve current priority for {id}."),
            Refusal::Denied(id) => note!("Couldn't set new priority for {id}."),
        }
    }
    if plan.bad_args || !refused.is_empty() {
        return Err(CliError::Reported(1));
    }
    Ok(())
}

/// Reads the command line in order: the new priority (the last `-p`, else
/// the last adjustment), the jobs and the constraints.
fn prepare(args: &Args, m: &ArgMatches) -> Result<Plan, CliError> {
    let mut words: Vec<(usize, String)> = Vec::new();
    for id in ["targets", "dash_args"] {
        if let (Some(i), Some(v)) = (m.indices_of(id), m.get_many::<String>(id)) {
            words.extend(i.zip(v.cloned()));
        }
    }
    words.sort_by_key(|(i, _)| *i);
    let mut adjustment = None;
    let mut targets = Vec::new();
    let mut bad_args = false;
    for (_, w) in &words {
        if let Some(n) = adjustment_arg(w)? {
            adjustment = Some(n);
            continue;
        }
        match parse_id(w) {
            Some((c, _)) if c <= 0 => {
                note!("Invalid cluster # from {w}");
                bad_args = true;
            }
            Some((c, Some(p))) => targets.push(Target::Job(JobId {
                cluster: c,
                proc: p,
            })),
            Some((c, None)) => targets.push(Target::Cluster(c)),
            None => targets.push(Target::Owner(owner_arg(w)?)),
        }
    }
    let prio = match (args.prio.last(), adjustment) {
        (Some(p), _) => NewPrio::Set(*p),
        (None, Some(a)) => NewPrio::Add(a),
        (None, None) => {
            return Err(CliError::Usage {
                msg: "you must specify a new priority or priority adjustment".into(),
                hint: Some("give -p N to set the priority, or +N or -N to change it".into()),
            });
        }
    };
    let mut constraint: Option<Expr> = None;
    for c in &args.constraint {
        // Parsed (and refused) as the other job tools parse theirs.
        let Some(e) = selection(&[], Some(c))?.constraint else {
            continue;
        };
        let e = Expr::Paren(Box::new(e));
        constraint = Some(match constraint {
            Some(prev) => Expr::binary(BinOp::And, prev, e),
            None => e,
        });
    }
    let narrowed = targets
        .iter()
        .any(|t| matches!(t, Target::Cluster(_) | Target::Owner(_)));
    if args.all || (constraint.is_some() && !narrowed) {
        targets.push(Target::Everything);
    }
    if targets.is_empty() && !bad_args {
        return Err(CliError::Usage {
            msg: "you did not specify any jobs".into(),
            hint: Some(
                "give a cluster, cluster.proc or user, -constraint EXPR or -all; \
                 'tern_prio -help' says more"
                    .into(),
            ),
        });
    }
    if constraint.is_some() && targets.iter().any(|t| matches!(t, Target::Job(_))) {
        note!("Warning, -constraint is ignored for fully qualified job ids");
    }
    Ok(Plan {
        prio,
        targets,
        constraint,
        bad_args,
    })
}

/// `+N` or `-N` as the number it adds, None for an argument that is no
/// adjustment, and an error for one that starts like an adjustment or an
/// option but is neither.
fn adjustment_arg(w: &str) -> Result<Option<i64>, CliError> {
    let Some(sign) = w.chars().next().filter(|c| *c == '+' || *c == '-') else {
        return Ok(None);
    };
    let digits = &w[1..];
    if digits.starts_with(|c: char| c.is_ascii_digit())
        && digits.bytes().all(|b| b.is_ascii_digit())
        && let Ok(n) = digits.parse::<i64>()
    {
        return Ok(Some(if sign == '-' { -n } else { n }));
    }
    if sign == '-' && !digits.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(CliError::Usage {
            msg: format!("unknown option '{w}'"),
            hint: Some("'tern_prio -help' lists the options".into()),
        });
    }
    Err(CliError::Usage {
        msg: format!("'{w}' is not a priority adjustment"),
        hint: Some("give +N or -N, N a whole number, or -p N to set the priority".into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(args: &[&str]) -> Result<Plan, CliError> {
        let mut argv = vec![OsString::from("tern_prio")];
        argv.extend(args.iter().map(OsString::from));
        let (a, m) = parse_args_with::<Args>(argv, Some(STRAYS))?;
        prepare(&a, &m)
    }

    fn prio(args: &[&str]) -> NewPrio {
        plan(args).unwrap().prio
    }

    #[test]
    fn the_last_adjustment_counts_and_p_wins() {
        assert_eq!(prio(&["+3", "1"]), NewPrio::Add(3));
        assert_eq!(prio(&["-3", "1"]), NewPrio::Add(-3));
        assert_eq!(prio(&["1", "+3", "-2"]), NewPrio::Add(-2));
        assert_eq!(prio(&["-2", "1", "+3"]), NewPrio::Add(3));
        assert_eq!(prio(&["+3", "-p", "-7", "1"]), NewPrio::Set(-7));
        assert_eq!(prio(&["-p=4", "-9", "1"]), NewPrio::Set(4));
        assert_eq!(prio(&["--prio", "1", "-p", "2", "1"]), NewPrio::Set(2));
        assert_eq!(prio(&["+0", "--", "-5", "1"]), NewPrio::Add(-5));
    }

    #[test]
    fn targets_in_every_form() {
        let p = plan(&["+1", "3", "4.1", "bob", "-a"]).unwrap();
        assert_eq!(
            p.targets,
            [
                Target::Cluster(3),
                Target::Job(JobId {
                    cluster: 4,
                    proc: 1
                }),
                Target::Owner("bob".into()),
                Target::Everything
            ]
        );
        let p = plan(&["+1", "-const", "ProcId == 0"]).unwrap();
        assert_eq!(p.targets, [Target::Everything]);
        assert!(p.constraint.is_some());
        let p = plan(&["+1", "-constraint", "A", "-constraint", "B", "bob"]).unwrap();
        assert_eq!(p.targets, [Target::Owner("bob".into())]);
    }

    #[test]
    fn bad_arguments_are_refused() {
        let msg = |args: &[&str]| plan(args).unwrap_err().to_string();
        assert_eq!(msg(&["+x", "1"]), "'+x' is not a priority adjustment");
        assert_eq!(msg(&["+", "1"]), "'+' is not a priority adjustment");
        assert_eq!(msg(&["-5x", "1"]), "'-5x' is not a priority adjustment");
        assert_eq!(msg(&["-1e3", "1"]), "'-1e3' is not a priority adjustment");
        assert_eq!(msg(&["-x", "1"]), "unknown option '-x'");
        assert_eq!(
            msg(&["1"]),
            "you must specify a new priority or priority adjustment"
        );
        assert_eq!(msg(&["+1"]), "you did not specify any jobs");
        assert_eq!(
            msg(&["+1", "a/b"]),
            "'a/b' is not a cluster, a cluster.proc or a user name"
        );
        assert_eq!(plan(&["-p", "x", "1"]).unwrap_err().exit_code(), 2);
    }
}
