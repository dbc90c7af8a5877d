//! The ClassAd: a set of named expressions with case-insensitive names.
//!
//! Attributes keep their insertion order (for `-long:nosort` style output) and
//! the first spelling of a name; assigning a name again in another case
//! replaces the expression but keeps that first spelling. Lookups go through
//! a hash index on the case-folded name.

use std::rc::Rc;

use rustc_hash::FxHashMap;

use super::ast::{Expr, Name};

/// Expressions are shared (`Rc`), so copying an ad, as the queue does to
/// give each job its cluster's attributes, costs reference counts, not
/// trees.
#[derive(Clone, Debug)]
struct Entry {
    name: Rc<str>,
    expr: Rc<Expr>,
}

#[derive(Clone, Debug, Default)]
pub struct ClassAd {
    entries: Vec<Entry>,
    index: FxHashMap<Rc<str>, usize>,
}

impl ClassAd {
    pub fn new() -> ClassAd {
        ClassAd::default()
    }

    /// An empty ad with room for `n` attributes.
    pub fn with_capacity(n: usize) -> ClassAd {
        ClassAd {
            entries: Vec::with_capacity(n),
            index: FxHashMap::with_capacity_and_hasher(n, Default::default()),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Sets `name` to `expr`. A name already present (in any case) keeps its
    /// first spelling and position.
    pub fn insert(&mut self, name: &str, expr: Expr) {
        self.insert_shared(name, Rc::new(expr));
    }

    /// Sets a parsed name (whose spelling and key are already shared) to
    /// `expr`, without copying either.
    pub fn insert_named(&mut self, name: &Name, expr: Expr) {
        let expr = Rc::new(expr);
        if let Some(&i) = self.index.get(name.key()) {
            self.entries[i].expr = expr;
            return;
        }
        self.index.insert(name.key_rc().clone(), self.entries.len());
        self.entries.push(Entry {
            name: name.text_rc().clone(),
            expr,
        });
    }

    /// Sets `name` to an expression shared with other ads.
    pub fn insert_shared(&mut self, name: &str, expr: Rc<Expr>) {
        if !name.bytes().any(|b| b.is_ascii_uppercase()) {
            // Already lower case: the spelling is the key.
            if let Some(&i) = self.index.get(name) {
                self.entries[i].expr = expr;
                return;
            }
            let rc: Rc<str> = Rc::from(name);
            self.index.insert(rc.clone(), self.entries.len());
            self.entries.push(Entry { name: rc, expr });
            return;
        }
        let key = name.to_ascii_lowercase();
        if let Some(&i) = self.index.get(key.as_str()) {
            self.entries[i].expr = expr;
            return;
        }
        self.index.insert(Rc::from(key), self.entries.len());
        self.entries.push(Entry {
            name: Rc::from(name),
            expr,
        });
    }

    /// Attributes with their shared expressions, in insertion order.
    pub fn iter_shared(&self) -> impl Iterator<Item = (&str, &Rc<Expr>)> {
        self.entries.iter().map(|e| (&*e.name, &e.expr))
    }

    /// Looks up by a key that is already lower case (as `Name::key` is).
    #[inline]
    pub fn get_by_key(&self, key: &str) -> Option<&Expr> {
        self.index.get(key).map(|&i| &*self.entries[i].expr)
    }

    /// Looks a name up in any case.
    pub fn get(&self, name: &str) -> Option<&Expr> {
        if name.bytes().any(|b| b.is_ascii_uppercase()) {
            self.get_by_key(&name.to_ascii_lowercase())
        } else {
            self.get_by_key(name)
        }
    }

    /// The name as first spelled in this ad.
    pub fn spelling(&self, name: &str) -> Option<&str> {
        let key = name.to_ascii_lowercase();
        self.index
            .get(key.as_str())
            .map(|&i| &*self.entries[i].name)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Removes `name` (any case); returns its expression if it was there.
    pub fn remove(&mut self, name: &str) -> Option<Expr> {
        let key = name.to_ascii_lowercase();
        let i = self.index.remove(key.as_str())?;
        let entry = self.entries.remove(i);
        for v in self.index.values_mut() {
            if *v > i {
                *v -= 1;
            }
        }
        Some(Rc::try_unwrap(entry.expr).unwrap_or_else(|shared| (*shared).clone()))
    }

    /// Attributes in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Expr)> {
        self.entries.iter().map(|e| (&*e.name, &*e.expr))
    }

    /// Attributes sorted case-insensitively by name, as HTCondor prints ads.
    pub fn sorted(&self) -> Vec<(&str, &Expr)> {
        let mut v: Vec<(&str, &Expr)> = self.iter().collect();
        v.sort_by(|a, b| cmp_names(a.0, b.0));
        v
    }

    /// Copies every attribute of `other` into this ad (HTCondor's `Update`).
    pub fn update(&mut self, other: &ClassAd) {
        for (n, e) in other.iter_shared() {
            self.insert_shared(n, e.clone());
        }
    }
}

/// Case-insensitive byte order of attribute names.
pub fn cmp_names(a: &str, b: &str) -> std::cmp::Ordering {
    a.bytes()
        .map(|c| c.to_ascii_lowercase())
        .cmp(b.bytes().map(|c| c.to_ascii_lowercase()))
}

impl ClassAd {
    /// The position of a lower-case key, for [`ClassAd::expr_at`].
    #[inline]
    pub fn index_of(&self, key: &str) -> Option<usize> {
        self.index.get(key).copied()
    }
    #[inline]
    pub fn expr_at(&self, i: usize) -> &Expr {
        &self.entries[i].expr
    }

    /// The shared expression at position `i`.
    pub fn shared_at(&self, i: usize) -> &Rc<Expr> {
        &self.entries[i].expr
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_spelling_kept_last_value_wins() {
        let mut ad = ClassAd::new();
        ad.insert("MyAttr", Expr::int(1));
        ad.insert("MYATTR", Expr::int(2));
        assert_eq!(ad.len(), 1);
        assert_eq!(ad.spelling("myattr"), Some("MyAttr"));
        assert!(matches!(
            ad.get("myATTR"),
            Some(Expr::Lit(super::super::value::Value::Int(2)))
        ));
    }

    #[test]
    fn remove_keeps_index_consistent() {
        let mut ad = ClassAd::new();
        for (i, n) in ["a", "b", "c"].iter().enumerate() {
            ad.insert(n, Expr::int(i as i64));
        }
        assert!(ad.remove("B").is_some());
        assert!(ad.get("c").is_some());
        assert!(ad.get("b").is_none());
        assert_eq!(
            ad.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            vec!["a", "c"]
        );
    }
}
