//! Editing job attributes, as HTCondor's `condor_qedit` asks the schedd
//! to (`SetAttribute` for each edit, in one transaction).
//!
//! An edit list is checked whole before anything is written, as
//! condor_qedit checks it on the client: a name must be a ClassAd
//! attribute name, a value must parse as an (old-syntax) expression, and
//! no name may be immutable or secure ([`Authority::attr_class`]: Owner,
//! ClusterId, JobStatus, the queue's bookkeeping, IMMUTABLE_JOB_ATTRS).
//! A protected attribute (PROTECTED_JOB_ATTRS) passes here and the queue
//! decides, as the schedd does: only a super user may set it
//! ([`crate::queue::Writer::set_attrs`]).

use crate::classad::Expr;
use crate::classad::parser::parse_expr_old;
use crate::queue::{AttrClass, JobId, Queue, QueueError, Selection, matches_constraint};

use super::Authority;

/// Why an edit list was refused, in condor_qedit's words.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// Immutable and secure attributes, each with its class's word, in
    /// the order condor_qedit reports them (by name).
    #[error("{}", refusals(.0))]
    Protected(Vec<(&'static str, String)>),
    #[error("Update aborted, illegal attribute-name specified for attribute \"{0}\".")]
    BadName(String),
    #[error("Update aborted, illegal attribute-value specified for attribute \"{0}\".")]
    BadValue(String),
}

/// One line per refused attribute, as condor_qedit prints them.
fn refusals(list: &[(&'static str, String)]) -> String {
    list.iter()
        .map(|(class, name)| format!("Update of {class} attribute \"{name}\" is not allowed."))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A checked edit list: names and the expressions they get, in order.
#[derive(Clone, Debug)]
pub struct Edits(Vec<(String, Expr)>);

impl Edits {
    /// Checks `Name Value` pairs in order, refusing the first malformed
    /// name or value that is no expression; then refuses the list if any
    /// name is immutable or secure for `authority`, naming every such one.
    pub fn parse(pairs: Vec<(String, String)>, authority: &Authority) -> Result<Edits, EditError> {
        let mut edits = Vec::new();
        for (name, value) in pairs {
            if !valid_name(&name) {
                return Err(EditError::BadName(name));
            }
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
        // condor_qedit keeps its edits in a map and reports every refused
        // name, in the map's order.
        let mut refused: Vec<(&'static str, String)> = edits
            .iter()
            .filter_map(|(n, _)| match authority.attr_class(n) {
                c @ (AttrClass::Immutable | AttrClass::Secure) => Some((c.word(), n.clone())),
                _ => None,
            })
            .collect();
        refused.sort_by(|a, b| a.1.cmp(&b.1));
        refused.dedup_by(|a, b| a.1 == b.1);
        if !refused.is_empty() {
            return Err(EditError::Protected(refused));
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
/// in one transaction. A protected attribute set by a user who is no
/// super user is [`QueueError::ProtectedAttr`], and nothing is changed.
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
            w.set_attrs(&row, &ad, &edits.0)?;
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
        let alice = Authority::new("alice", vec![]);
        let ok = Edits::parse(pairs(&[("A", "1"), ("_b2", "x + 1")]), &alice).unwrap();
        assert_eq!(ok.names().collect::<Vec<_>>(), ["A", "_b2"]);
        let refused = |list| Edits::parse(pairs(list), &alice).unwrap_err();
        assert_eq!(
            refused(&[("A", "1"), ("owner", "\"bob\"")]),
            EditError::Protected(vec![("immutable", "owner".into())])
        );
        assert_eq!(refused(&[("1a", "1")]), EditError::BadName("1a".into()));
        assert_eq!(refused(&[("a-b", "1")]), EditError::BadName("a-b".into()));
        assert_eq!(refused(&[("", "1")]), EditError::BadName("".into()));
        assert_eq!(refused(&[("A", " ")]), EditError::BadValue("A".into()));
        assert_eq!(refused(&[("A", "1 +")]), EditError::BadValue("A".into()));
        assert_eq!(
            refused(&[("JobStatus", "1")]).to_string(),
            "Update of immutable attribute \"JobStatus\" is not allowed."
        );
    }

    #[test]
    fn every_immutable_and_secure_name_is_reported_by_name() {
        let alice = Authority::new("alice", vec![]).with_attr_lists(vec!["Color".into()], vec![]);
        let e = Edits::parse(
            pairs(&[
                ("User", "\"b@h\""),
                ("QDate", "1"),
                ("A", "1"),
                ("Color", "2"),
                ("OwnerUid", "0"),
            ]),
            &alice,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "Update of immutable attribute \"Color\" is not allowed.\n\
             Update of immutable attribute \"OwnerUid\" is not allowed.\n\
             Update of secure attribute \"QDate\" is not allowed.\n\
             Update of immutable attribute \"User\" is not allowed."
        );
        // A protected attribute is the queue's to refuse.
        let bob = Authority::new("bob", vec![]).with_attr_lists(vec![], vec!["AcctGroup".into()]);
        assert!(Edits::parse(pairs(&[("AcctGroup", "\"x\"")]), &bob).is_ok());
    }
}
