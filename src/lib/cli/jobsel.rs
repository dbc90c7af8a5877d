//! Job selection shared by the queue tools: `cluster`, `cluster.proc` and
//! `owner` arguments (their union), `-constraint EXPR`, and `-all`. Whose
//! jobs a user may change is the queue's rule ([`crate::queue::Authority`]).

use crate::classad::parse_expr;
use crate::queue::{JobId, Selection};

use super::CliError;

/// Builds a selection from positional arguments and an optional
/// constraint. `what` names the tool's arguments in messages.
pub fn selection(args: &[String], constraint: Option<&str>) -> Result<Selection, CliError> {
    let mut sel = Selection::default();
    for a in args {
        match parse_id(a) {
            Some((c, Some(p))) => sel.jobs.push(JobId {
                cluster: c,
                proc: p,
            }),
            Some((c, None)) => sel.clusters.push(c),
            None => sel.owners.push(owner_arg(a)?),
        }
    }
    if let Some(c) = constraint {
        let e = parse_expr(c).map_err(|e| CliError::constraint(c, e))?;
        sel.constraint = Some(e);
    }
    Ok(sel)
}

/// An argument that is no job id must be a user name.
pub fn owner_arg(a: &str) -> Result<String, CliError> {
    if a.is_empty()
        || a.starts_with('-')
        || !a.chars().all(|c| c.is_alphanumeric() || "._-@".contains(c))
    {
        return Err(CliError::Usage {
            msg: format!("'{a}' is not a cluster, a cluster.proc or a user name"),
            hint: None,
        });
    }
    Ok(a.to_string())
}

/// `12` → (12, None); `12.3` → (12, Some(3)); anything else → None.
pub fn parse_id(s: &str) -> Option<(i64, Option<i64>)> {
    let (c, p) = match s.split_once('.') {
        Some((c, p)) => (c, Some(p)),
        None => (s, None),
    };
    if c.is_empty() || !c.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let c: i64 = c.parse().ok()?;
    match p {
        None => Some((c, None)),
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
            Some((c, Some(p.parse().ok()?)))
        }
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_owners() {
        assert_eq!(parse_id("12"), Some((12, None)));
        assert_eq!(parse_id("12.3"), Some((12, Some(3))));
        assert_eq!(parse_id("12."), None);
        assert_eq!(parse_id("alice"), None);
        let s = selection(
            &["3".into(), "4.1".into(), "bob".into()],
            Some("JobStatus == 1"),
        )
        .unwrap();
        assert_eq!(s.clusters, vec![3]);
        assert_eq!(
            s.jobs,
            vec![JobId {
                cluster: 4,
                proc: 1
            }]
        );
        assert_eq!(s.owners, vec!["bob".to_string()]);
        assert!(s.constraint.is_some());
        assert!(selection(&[], Some("JobStatus ==")).is_err());
    }
}
