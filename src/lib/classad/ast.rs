//! The expression tree.
//!
//! Parsing produces an [`Expr`]; evaluation walks it (see [`super::eval`]) and
//! the unparser prints it back (see [`super::unparse`]). The tree keeps enough of
//! the source shape (parentheses, quoted names, function-name spelling) to print
//! expressions exactly as HTCondor prints them.

use std::rc::Rc;

use super::ad::ClassAd;
use super::functions::Builtin;
use super::value::Value;

/// An attribute name as written, with its lower-case key for lookups, the
/// key's hash (see [`key_hash`]) and whether the key is one of the names
/// evaluation treats specially. One shared allocation, so copying a name
/// costs a reference count.
#[derive(Clone)]
pub struct Name(Rc<NameInner>);

struct NameInner {
    hash: u64,
    special: Special,
    text: Box<str>,
    /// `None` when the spelling is already lower case.
    key: Option<Box<str>>,
}

/// Names that scoped lookup answers itself when no ad defines them, known
/// when the name is made so that evaluation need not compare strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    None,
    /// `toplevel` or `root`.
    TopLevel,
    /// `self` or `my`.
    SelfAd,
    Parent,
    CurrentTime,
    /// `target` or `other` (names the context ad defines in a match).
    Target,
}

impl Special {
    /// The special meaning of a lower-case key.
    pub fn of_key(key: &str) -> Special {
        match key {
            "toplevel" | "root" => Special::TopLevel,
            "self" | "my" => Special::SelfAd,
            "parent" => Special::Parent,
            "currenttime" => Special::CurrentTime,
            "target" | "other" => Special::Target,
            _ => Special::None,
        }
    }
}

impl std::fmt::Debug for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Name")
            .field("text", &self.as_str())
            .field("key", &self.key())
            .finish()
    }
}

/// The multiplier of rustc's Fx hash.
const K: u64 = 0xf135_7aea_2e62_a9c5;

/// ASCII upper-case letters of eight bytes made lower case (other bytes,
/// UTF-8 ones included, unchanged), as `make_ascii_lowercase` does.
#[inline(always)]
fn lower8(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let heptets = x & (ONES * 0x7f);
    let ge_a = heptets + ONES * (0x80 - b'A' as u64);
    let gt_z = heptets + ONES * (0x80 - b'Z' as u64 - 1);
    let upper = ge_a & !gt_z & !x & (ONES * 0x80);
    x | (upper >> 2)
}

/// The hash of a name's lower-case key, computed from any spelling of it
/// without allocating: ads index their attributes by it, and a [`Name`]
/// computes it once when made.
#[inline]
pub fn key_hash(name: &str) -> u64 {
    let b = name.as_bytes();
    let n = b.len();
    let word = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes"));
    let half = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("four bytes")) as u64;
    let mut h = (n as u64).wrapping_mul(K);
    let mut mix = |x: u64| h = (h.rotate_left(26) ^ lower8(x)).wrapping_mul(K);
    if n >= 8 {
        let mut i = 0;
        while i + 8 < n {
            mix(word(i));
            i += 8;
        }
        // The last eight bytes, overlapping the ones before if need be.
        mix(word(n - 8));
    } else if n >= 4 {
        mix(half(0) | (half(n - 4) << 32));
    } else if n > 0 {
        mix(b[0] as u64 | ((b[n / 2] as u64) << 8) | ((b[n - 1] as u64) << 16));
    }
    h ^ (h >> 29)
}

/// The shared names: an open-addressing table on [`key_hash`], at most
/// half full, compared by exact spelling.
struct NameTable {
    slots: Vec<Option<Name>>,
    len: usize,
}

impl NameTable {
    fn find_or_add(&mut self, text: &str) -> Name {
        let hash = key_hash(text);
        if !self.slots.is_empty() {
            let mask = self.slots.len() - 1;
            let mut i = (hash >> 32) as usize & mask;
            while let Some(n) = &self.slots[i] {
                if n.hash() == hash && n.as_str() == text {
                    return n.clone();
                }
                i = (i + 1) & mask;
            }
        }
        let name = Name::fresh(text, hash);
        if self.len < MAX_SHARED_NAMES {
            if (self.len + 1) * 2 > self.slots.len() {
                let size = (self.slots.len() * 2).max(256);
                let old = std::mem::replace(&mut self.slots, vec![None; size]);
                for n in old.into_iter().flatten() {
                    self.put(n);
                }
            }
            self.put(name.clone());
            self.len += 1;
        }
        name
    }

    fn put(&mut self, name: Name) {
        let mask = self.slots.len() - 1;
        let mut i = (name.hash() >> 32) as usize & mask;
        while self.slots[i].is_some() {
            i = (i + 1) & mask;
        }
        self.slots[i] = Some(name);
    }
}

thread_local! {
    /// Attribute names are few and repeated in every ad (a job ad's sixty
    /// names recur in every job), so spellings are shared: parsing an ad
    /// costs a reference count instead of allocations per name. Bounded
    /// so that arbitrary input cannot grow it without limit.
    static NAMES: std::cell::RefCell<NameTable> = const {
        std::cell::RefCell::new(NameTable {
            slots: Vec::new(),
            len: 0,
        })
    };
}

/// How many distinct spellings the name table keeps.
const MAX_SHARED_NAMES: usize = 16_384;

impl Name {
    pub fn new(text: &str) -> Name {
        NAMES.with(|t| t.borrow_mut().find_or_add(text))
    }

    /// A new name whose key hashes to `hash`.
    fn fresh(text: &str, hash: u64) -> Name {
        let key = if text.bytes().any(|b| b.is_ascii_uppercase()) {
            Some(Box::from(text.to_ascii_lowercase()))
        } else {
            None
        };
        let special = Special::of_key(key.as_deref().unwrap_or(text));
        Name(Rc::new(NameInner {
            hash,
            special,
            text: Box::from(text),
            key,
        }))
    }
    /// The spelling as written.
    #[inline]
    pub fn as_str(&self) -> &str {
        &self.0.text
    }
    /// The case-folded key used for lookups.
    #[inline]
    pub fn key(&self) -> &str {
        self.0.key.as_deref().unwrap_or(&self.0.text)
    }
    /// The hash of the key, as [`key_hash`] computes it.
    #[inline]
    pub fn hash(&self) -> u64 {
        self.0.hash
    }
    /// Whether evaluation treats the name specially.
    #[inline]
    pub fn special(&self) -> Special {
        self.0.special
    }
    /// Whether both are the same shared name (a sufficient, not a
    /// necessary, condition for equal keys).
    #[inline]
    pub fn same(&self, other: &Name) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Name) -> bool {
        self.same(other) || (self.hash() == other.hash() && self.key() == other.key())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Plus,
    Not,
    BitNot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Mul,
    Div,
    Mod,
    Add,
    Sub,
    Shl,
    Shr,
    UShr,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    MetaEq,
    MetaNe,
    BitAnd,
    BitXor,
    BitOr,
    And,
    Or,
}

impl BinOp {
    /// Binding strength: higher binds tighter (spec table, levels 3..12).
    pub fn precedence(self) -> u8 {
        use BinOp::*;
        match self {
            Mul | Div | Mod => 10,
            Add | Sub => 9,
            Shl | Shr | UShr => 8,
            Lt | Le | Gt | Ge => 7,
            Eq | Ne | MetaEq | MetaNe => 6,
            BitAnd => 5,
            BitXor => 4,
            BitOr => 3,
            And => 2,
            Or => 1,
        }
    }

    /// The operator as the new-syntax unparser writes it.
    pub fn new_syntax(self) -> &'static str {
        match self {
            BinOp::MetaEq => "is",
            BinOp::MetaNe => "isnt",
            other => other.old_syntax(),
        }
    }

    /// The operator as the old-syntax (long form) unparser writes it.
    pub fn old_syntax(self) -> &'static str {
        use BinOp::*;
        match self {
            Mul => "*",
            Div => "/",
            Mod => "%",
            Add => "+",
            Sub => "-",
            Shl => "<<",
            Shr => ">>",
            UShr => ">>>",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            Eq => "==",
            Ne => "!=",
            MetaEq => "=?=",
            MetaNe => "=!=",
            BitAnd => "&",
            BitXor => "^",
            BitOr => "|",
            And => "&&",
            Or => "||",
        }
    }
}

/// Which side of a match an internal reference names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Left,
    Right,
}

/// A function call: the name as written and the builtin it resolved to.
#[derive(Clone, Debug)]
pub struct Call {
    pub name: Rc<str>,
    pub builtin: Option<Builtin>,
    pub args: Vec<Expr>,
}

/// `base.name`, `name` or `.name`.
#[derive(Clone, Debug)]
pub struct AttrRef {
    pub base: Option<Expr>,
    pub name: Name,
    pub absolute: bool,
}

#[derive(Clone, Debug)]
pub enum Expr {
    /// A literal value. Parsed literals are scalars; evaluation-made lists
    /// (from functions such as `split`) hold any value.
    Lit(Value),
    Attr(Box<AttrRef>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<(Expr, Expr)>),
    Cond(Box<(Expr, Expr, Expr)>),
    Elvis(Box<(Expr, Expr)>),
    Paren(Box<Expr>),
    Index(Box<(Expr, Expr)>),
    Call(Box<Call>),
    List(Rc<[Expr]>),
    Ad(Rc<ClassAd>),
    /// Internal: the left or right ad of the match this expression is
    /// evaluated in. Never produced by the parser.
    MatchSide(Side),
    /// `relTime("…")` of a string literal, read when parsed. It prints in
    /// that form but evaluates to the real number of seconds, as in
    /// HTCondor, so that policies such as `RemoteWallClockTime >
    /// relTime("2:00:00")` compare numbers with numbers.
    RelTimeLit(f64),
}

impl Expr {
    pub fn attr(name: &str) -> Expr {
        Expr::Attr(Box::new(AttrRef {
            base: None,
            name: Name::new(name),
            absolute: false,
        }))
    }
    pub fn scoped(base: Expr, name: &str) -> Expr {
        Expr::Attr(Box::new(AttrRef {
            base: Some(base),
            name: Name::new(name),
            absolute: false,
        }))
    }
    pub fn binary(op: BinOp, l: Expr, r: Expr) -> Expr {
        Expr::Binary(op, Box::new((l, r)))
    }
    pub fn int(i: i64) -> Expr {
        Expr::Lit(Value::Int(i))
    }
    pub fn string(s: &str) -> Expr {
        Expr::Lit(Value::Str(Rc::from(s)))
    }

    /// True when the tree is a literal scalar, as HTCondor's `IsLiteral` tests.
    pub fn literal_value(&self) -> Option<&Value> {
        match self {
            Expr::Lit(v) => Some(v),
            _ => None,
        }
    }

    /// Visits every attribute reference in the tree, outermost first.
    pub fn walk_attrs<'a>(&'a self, f: &mut dyn FnMut(&'a AttrRef)) {
        match self {
            Expr::Lit(_) | Expr::MatchSide(_) | Expr::Ad(_) | Expr::RelTimeLit(_) => {}
            Expr::Attr(a) => {
                f(a);
                if let Some(b) = &a.base {
                    b.walk_attrs(f);
                }
            }
            Expr::Unary(_, e) | Expr::Paren(e) => e.walk_attrs(f),
            Expr::Binary(_, b) => {
                b.0.walk_attrs(f);
                b.1.walk_attrs(f);
            }
            Expr::Elvis(b) | Expr::Index(b) => {
                b.0.walk_attrs(f);
                b.1.walk_attrs(f);
            }
            Expr::Cond(b) => {
                b.0.walk_attrs(f);
                b.1.walk_attrs(f);
                b.2.walk_attrs(f);
            }
            Expr::Call(c) => c.args.iter().for_each(|a| a.walk_attrs(f)),
            Expr::List(items) => items.iter().for_each(|a| a.walk_attrs(f)),
        }
    }
}
