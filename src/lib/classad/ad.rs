//! The ClassAd: a set of named expressions with case-insensitive names.
//!
//! Attributes keep their insertion order (for `-long:nosort` style output) and
//! the first spelling of a name; assigning a name again in another case
//! replaces the expression but keeps that first spelling. Lookups go through
//! a hash index on the case-folded name.

use std::rc::Rc;

use super::ast::{Expr, Name, key_hash};
use super::value::Value;

/// Expressions are shared (`Rc`), so copying an ad, as the queue does to
/// give each job its cluster's attributes, costs reference counts, not
/// trees.
#[derive(Clone, Debug)]
struct Entry {
    name: Name,
    expr: Rc<Expr>,
}

/// An open-addressing index from key hashes to entry positions: each slot
/// holds a position (`EMPTY` when free) and the low half of its key's
/// hash, so a probe rarely touches an entry that does not match. At most
/// two thirds full; the slot count is a power of two (or zero for no
/// index).
#[derive(Clone, Debug, Default)]
struct Index {
    slots: Vec<(u32, u32)>,
}

const EMPTY: u32 = u32::MAX;

/// How many slots index `n` entries.
fn slots_for(n: usize) -> usize {
    (n * 3 / 2 + 1).next_power_of_two().max(8)
}

impl Index {
    fn with_capacity(n: usize) -> Index {
        if n == 0 {
            return Index::default();
        }
        Index {
            slots: vec![(EMPTY, 0); slots_for(n)],
        }
    }

    /// The entry holding `name` in any case, whose key's hash is `hash`.
    #[inline]
    fn find(&self, entries: &[Entry], hash: u64, name: &str) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let tag = hash as u32;
        let mut i = (hash >> 32) as usize & mask;
        loop {
            let (pos, t) = self.slots[i];
            if pos == EMPTY {
                return None;
            }
            if t == tag && entries[pos as usize].name.key().eq_ignore_ascii_case(name) {
                return Some(pos as usize);
            }
            i = (i + 1) & mask;
        }
    }

    /// The entry holding the lower-case `key` whose hash is `hash`; `name`,
    /// when given, is that key's shared name.
    #[inline(always)]
    fn find_key(
        &self,
        entries: &[Entry],
        hash: u64,
        key: &str,
        name: Option<&Name>,
    ) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let tag = hash as u32;
        let mut i = (hash >> 32) as usize & mask;
        loop {
            let (pos, t) = self.slots[i];
            if pos == EMPTY {
                return None;
            }
            if t == tag {
                let other = &entries[pos as usize].name;
                if name.is_some_and(|n| other.same(n)) || other.key() == key {
                    return Some(pos as usize);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// Records that entry `pos` (not yet indexed) has hash `hash`; `len`
    /// is the number of entries once it is added.
    fn add(&mut self, entries: &[Entry], hash: u64, pos: usize, len: usize) {
        if len * 3 > self.slots.len() * 2 {
            self.rebuild(entries, len);
        }
        self.put(hash, pos);
    }

    fn put(&mut self, hash: u64, pos: usize) {
        let mask = self.slots.len() - 1;
        let mut i = (hash >> 32) as usize & mask;
        while self.slots[i].0 != EMPTY {
            i = (i + 1) & mask;
        }
        self.slots[i] = (pos as u32, hash as u32);
    }

    /// A fresh index of `entries` (minus any not yet added), sized for
    /// `len` entries.
    fn rebuild(&mut self, entries: &[Entry], len: usize) {
        let size = slots_for(len);
        self.slots.clear();
        self.slots.resize(size, (EMPTY, 0));
        for (pos, e) in entries.iter().enumerate() {
            self.put(e.name.hash(), pos);
        }
    }
}

thread_local! {
    /// Shared expressions for the literals most attributes hold (`0`,
    /// `0.0`, `false`, `true`, small counts), made once per thread.
    static COMMON: [std::cell::OnceCell<Rc<Expr>>; COMMON_INTS + 4] =
        std::array::from_fn(|_| std::cell::OnceCell::new());
}

/// Integers from 0 up to this (exclusive) are shared.
const COMMON_INTS: usize = 64;

/// A shared copy of `e` when it is one of the common literals.
fn common_literal(e: &Expr) -> Option<Rc<Expr>> {
    let slot = match e {
        Expr::Lit(Value::Int(i)) if (0..COMMON_INTS as i64).contains(i) => *i as usize,
        Expr::Lit(Value::Bool(b)) => COMMON_INTS + *b as usize,
        // Only +0.0: -0.0 prints differently.
        Expr::Lit(Value::Real(r)) if r.to_bits() == 0 => COMMON_INTS + 2,
        Expr::Lit(Value::Undefined) => COMMON_INTS + 3,
        _ => return None,
    };
    COMMON.with(|c| Some(c[slot].get_or_init(|| Rc::new(e.clone())).clone()))
}

#[derive(Clone, Debug, Default)]
pub struct ClassAd {
    entries: Vec<Entry>,
    index: Index,
}

impl ClassAd {
    pub fn new() -> ClassAd {
        ClassAd::default()
    }

    /// An empty ad with room for `n` attributes.
    pub fn with_capacity(n: usize) -> ClassAd {
        ClassAd {
            entries: Vec::with_capacity(n),
            index: Index::with_capacity(n),
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

    /// Sets a parsed name to `expr`, without copying its spelling.
    pub fn insert_named(&mut self, name: &Name, expr: Expr) {
        let expr = common_literal(&expr).unwrap_or_else(|| Rc::new(expr));
        self.insert_name_shared(name, expr);
    }

    /// Sets a parsed name to an expression shared with other ads.
    pub fn insert_name_shared(&mut self, name: &Name, expr: Rc<Expr>) {
        if let Some(i) = self.index_of_name(name) {
            self.entries[i].expr = expr;
            return;
        }
        let pos = self.entries.len();
        self.index.add(&self.entries, name.hash(), pos, pos + 1);
        self.entries.push(Entry {
            name: name.clone(),
            expr,
        });
    }

    /// Sets `name` to an expression shared with other ads.
    pub fn insert_shared(&mut self, name: &str, expr: Rc<Expr>) {
        if let Some(i) = self.find(name) {
            self.entries[i].expr = expr;
            return;
        }
        self.insert_name_shared(&Name::new(name), expr);
    }

    /// The position of `name` in any case.
    #[inline]
    fn find(&self, name: &str) -> Option<usize> {
        self.index.find(&self.entries, key_hash(name), name)
    }

    /// Attributes with their shared expressions, in insertion order.
    pub fn iter_shared(&self) -> impl Iterator<Item = (&str, &Rc<Expr>)> {
        self.entries.iter().map(|e| (e.name.as_str(), &e.expr))
    }

    /// Looks up by a key that is already lower case (as `Name::key` is).
    #[inline]
    pub fn get_by_key(&self, key: &str) -> Option<&Expr> {
        self.index_of(key).map(|i| &*self.entries[i].expr)
    }

    /// Looks a name up in any case.
    pub fn get(&self, name: &str) -> Option<&Expr> {
        self.find(name).map(|i| &*self.entries[i].expr)
    }

    /// The name as first spelled in this ad.
    pub fn spelling(&self, name: &str) -> Option<&str> {
        self.find(name).map(|i| self.entries[i].name.as_str())
    }

    pub fn contains(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    /// Removes `name` (any case); returns its expression if it was there.
    pub fn remove(&mut self, name: &str) -> Option<Expr> {
        let i = self.find(name)?;
        let entry = self.entries.remove(i);
        let len = self.entries.len();
        self.index.rebuild(&self.entries, len);
        Some(Rc::try_unwrap(entry.expr).unwrap_or_else(|shared| (*shared).clone()))
    }

    /// Attributes in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Expr)> {
        self.entries.iter().map(|e| (e.name.as_str(), &*e.expr))
    }

    /// Attributes sorted case-insensitively by name, as HTCondor prints ads.
    pub fn sorted(&self) -> Vec<(&str, &Expr)> {
        let mut v: Vec<(&str, &Expr)> = self.iter().collect();
        v.sort_by(|a, b| cmp_names(a.0, b.0));
        v
    }

    /// Copies every attribute of `other` into this ad (HTCondor's `Update`).
    pub fn update(&mut self, other: &ClassAd) {
        for e in &other.entries {
            self.insert_name_shared(&e.name, e.expr.clone());
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
        self.index.find_key(&self.entries, key_hash(key), key, None)
    }
    /// The position of a name's key (its hash already known).
    #[inline]
    pub fn index_of_name(&self, name: &Name) -> Option<usize> {
        self.index
            .find_key(&self.entries, name.hash(), name.key(), Some(name))
    }
    /// The position of the lower-case `key` whose hash is `hash` (see
    /// [`key_hash`]); `name`, when given, is that key's shared name.
    #[inline]
    pub fn index_of_key(&self, hash: u64, key: &str, name: Option<&Name>) -> Option<usize> {
        self.index.find_key(&self.entries, hash, key, name)
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
