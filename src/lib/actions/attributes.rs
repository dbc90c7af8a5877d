//! Editing job attributes, as HTCondor's `condor_qedit` asks the schedd
//! to (`SetAttribute` for each edit, in one transaction).
//!
//! An edit list is checked whole before anything is written: a name must
//! be a ClassAd attribute name and not one the queue owns
//! ([`crate::queue::PROTECTED`]), and a value must parse as an (old-syntax)
//! expression. [`Edits`] can only be made by that check, so [`edit`] never
//! writes an attribute the queue owns.

use crate::classad::Expr;
use crate::classad::parser::parse_expr_old;
use crate::queue::{Change, JobId, PROTECTED, Queue, QueueError, Selection, matches_constraint};

use super::Authority;

/// Why an edit list was refused, in condor_qedit's words.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error("Update of attribute \"{0}\" is not allowed.")]
    Protected(String),
    #[error("Update aborted, illegal attribute-name specified for attribute \"{0}\".")]
    BadName(String),
    #[error("Update aborted, illegal attribute-value specified for attribute \"{0}\".")]
    BadValue(String),
}

/// A checked edit list: names and the expressions they get, in order.
#[derive(Clone, Debug)]
pub struct Edits(Vec<(String, Expr)>);

impl Edits {
    /// Checks `Name Value` pairs in order, refusing the first protected or
    /// malformed name, or value that is no expression.
    pub fn parse(pairs: Vec<(String, String)>) -> Result<Edits, EditError> {
        let mut edits = Vec::new();
        for (name, value) in pairs {
            check_name(&name)?;
            let parsed = if value.trim().is_empty() {
                None
            } else {
                parse_expr_old(&value).ok()
            };
            let Some(e) = parsed else {
                return Err(EditError::BadValue(name));
            };
            edits.push((name, e));
        }
        Ok(Edits(edits))
    }

    /// The attribute names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(n, _)| n.as_str())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A name a user may set: a ClassAd attribute name the queue does not own.
fn check_name(name: &str) -> Result<(), EditError> {
    if PROTECTED.iter().any(|p| p.eq_ignore_ascii_case(name)) {
        return Err(EditError::Protected(name.to_string()));
    }
    if !valid_name(name) {
        return Err(EditError::BadName(name.to_string()));
    }
    Ok(())
}

/// A ClassAd attribute name: a letter or `_`, then letters, digits and `_`.
fn valid_name(name: &str) -> bool {
    let mut cs = name.chars();
    cs.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && cs.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// What an edit did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Edited {
    /// The jobs changed, in id order.
    pub changed: Vec<JobId>,
    /// The jobs matched that the user may not change, left alone.
    pub denied: Vec<JobId>,
}

/// Makes the edits on every job `sel` names that `authority` may change,
/// in one transaction.
pub fn edit(
    queue: &mut Queue,
    authority: &Authority,
    sel: &Selection,
    edits: &Edits,
    now: i64,
) -> Result<Edited, QueueError> {
    let mut done = Edited::default();
    queue.write_as(authority, now, |w| {
        for row in w.rows(sel)? {
            let ad = w.full_ad(&row)?;
            if let Some(c) = &sel.constraint
                && !matches_constraint(c, &ad)
            {
                continue;
            }
            if !w.may_change(&row) {
                done.denied.push(row.id);
                continue;
            }
            w.change(&row, &ad, &Change::Set(edits.0.clone()))?;
            done.changed.push(row.id);
        }
        Ok(())
    })?;
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn names_are_checked() {
        assert!(valid_name("_a1"));
        assert!(!valid_name("1a"));
        assert!(!valid_name("a-b"));
        assert!(!valid_name(""));
    }

    #[test]
    fn names_and_values_are_checked_in_order() {
        let ok = Edits::parse(pairs(&[("A", "1"), ("_b2", "x + 1")])).unwrap();
        assert_eq!(ok.names().collect::<Vec<_>>(), ["A", "_b2"]);
        let refused = |list| Edits::parse(pairs(list)).unwrap_err();
        assert_eq!(
            refused(&[("A", "1"), ("owner", "\"bob\"")]),
            EditError::Protected("owner".into())
        );
        assert_eq!(refused(&[("1a", "1")]), EditError::BadName("1a".into()));
        assert_eq!(refused(&[("a-b", "1")]), EditError::BadName("a-b".into()));
        assert_eq!(refused(&[("", "1")]), EditError::BadName("".into()));
        assert_eq!(refused(&[("A", " ")]), EditError::BadValue("A".into()));
        assert_eq!(refused(&[("A", "1 +")]), EditError::BadValue("A".into()));
        assert_eq!(
            refused(&[("JobStatus", "1")]).to_string(),
            "Update of attribute \"JobStatus\" is not allowed."
        );
    }
}
