//! Evaluation: scopes and attribute lookup; the operators themselves are
//! in [`super::operators`].
//!
//! A [`Scope`] is a chain of frames, each holding one ad and its lexical
//! parent. Unscoped names are looked up the way HTCondor's
//! `ClassAd::LookupInScope` does: the current ad, then each parent; the
//! special names (`self`, `my`, `parent`, `toplevel`, `root`, `CurrentTime`)
//! answer at the first level that lacks a real attribute of that name; and in a
//! match, a name found nowhere is finally looked up in the other ad (the
//! "alternate scope") and evaluated there.
//!
//! Evaluation never overflows the stack and never hangs: deep trees grow the
//! stack on demand, a reference cycle (`[a = b; b = a]`) evaluates to `error`,
//! and a step budget stops exponential blow-ups with `error` too.

use std::cell::OnceCell;
use std::fmt;
use std::rc::{Rc, Weak};

use super::ad::ClassAd;
use super::ast::{AttrRef, BinOp, Expr, Name, Side, Special, key_hash};
use super::value::{ListValue, Value};

pub use super::operators::{Truth, binary, cmp_ignore_case, identical, truth, truth_of, unary};
use super::operators::{discard, int_binary};

/// One level of scope: an ad, its lexical parent, and in a match the other
/// ad as the alternate scope.
pub struct Frame {
    ad: Rc<ClassAd>,
    parent: Option<Scope>,
    /// In a match: the other ad, where unscoped names not found here go last.
    alt: OnceCell<Weak<Frame>>,
    /// Only on a match root: the left and right ad frames.
    sides: OnceCell<Box<Sides>>,
    /// Only on a match's context ad (HTCondor's lCtx/rCtx): the ad its
    /// `target` and `other` name, so `TARGET.x` need not evaluate `.RIGHT`.
    target: OnceCell<Weak<Frame>>,
}

/// The two ads of a match, as its root frame knows them: their frames
/// (weakly, since they hold the root), and the ads themselves, so that the
/// match ad prints whole even once the match is over.
struct Sides {
    left: Weak<Frame>,
    right: Weak<Frame>,
    ads: (Rc<ClassAd>, Rc<ClassAd>),
}

/// A reference-counted handle to a [`Frame`].
#[derive(Clone)]
pub struct Scope(Rc<Frame>);

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Scope({} attrs)", self.0.ad.len())
    }
}

impl Scope {
    fn make(ad: Rc<ClassAd>, parent: Option<Scope>) -> Scope {
        Scope(Rc::new(Frame {
            ad,
            parent,
            alt: OnceCell::new(),
            target: OnceCell::new(),
            sides: OnceCell::new(),
        }))
    }
    /// A top-level scope for `ad`.
    pub fn root(ad: Rc<ClassAd>) -> Scope {
        Scope::make(ad, None)
    }
    /// An empty top-level scope, for evaluating expressions outside any ad.
    pub fn empty() -> Scope {
        Scope::root(Rc::new(ClassAd::new()))
    }
    /// A nested ad whose lexical parent is `parent`.
    pub fn child(ad: Rc<ClassAd>, parent: &Scope) -> Scope {
        Scope::make(ad, Some(parent.clone()))
    }
    pub fn ad(&self) -> &Rc<ClassAd> {
        &self.0.ad
    }
    pub fn parent(&self) -> Option<&Scope> {
        self.0.parent.as_ref()
    }
    /// The outermost frame of the chain (`toplevel`, and the start of `.x`).
    pub fn toplevel(&self) -> Scope {
        self.top().clone()
    }
    /// The outermost frame, borrowed.
    fn top(&self) -> &Scope {
        let mut cur = self;
        while let Some(p) = cur.parent() {
            cur = p;
        }
        cur
    }
    fn ptr(&self) -> *const Frame {
        Rc::as_ptr(&self.0)
    }
    /// In a match, the other ad's scope (where unscoped names not found
    /// here are looked up last).
    pub fn alternate(&self) -> Option<Scope> {
        self.0.alt.get().and_then(|w| w.upgrade()).map(Scope)
    }
    fn side(&self, side: Side) -> Option<Scope> {
        let sides = self.0.sides.get()?;
        match side {
            Side::Left => sides.left.upgrade(),
            Side::Right => sides.right.upgrade(),
        }
        .map(Scope)
    }
    pub fn same(&self, other: &Scope) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
    /// The ad as printed: a match ad holds its two ads themselves as
    /// `LEFT` and `RIGHT` (HTCondor prints them in full), where tern keeps
    /// a placeholder.
    pub fn printed_ad(&self) -> std::borrow::Cow<'_, ClassAd> {
        use std::borrow::Cow;
        let Some(sides) = self.0.sides.get() else {
            return Cow::Borrowed(&self.0.ad);
        };
        let mut ad = (*self.0.ad).clone();
        ad.insert("LEFT", Expr::Ad(sides.ads.0.clone()));
        ad.insert("RIGHT", Expr::Ad(sides.ads.1.clone()));
        Cow::Owned(ad)
    }
}

/// The scopes of a match between two ads, laid out as HTCondor's
/// `MatchClassAd` lays them out: each ad's parent is a context ad holding
/// `my`/`ad` (itself) and `target`/`other` (the other ad), under a match ad
/// holding `LEFT`, `RIGHT`, `symmetricMatch`, `leftMatchesRight`,
/// `rightMatchesLeft`, `leftRankValue` and `rightRankValue`. Each ad's
/// alternate scope is the other ad.
pub struct MatchContext {
    left: Scope,
    right: Scope,
}

thread_local! {
    static MATCH_ADS: (Rc<ClassAd>, Rc<ClassAd>, Rc<ClassAd>) = build_match_ads();
}

fn build_match_ads() -> (Rc<ClassAd>, Rc<ClassAd>, Rc<ClassAd>) {
    use super::parser::parse_expr;
    let p = |s: &str| parse_expr(s).expect("built-in match expression parses");
    let mut root = ClassAd::new();
    root.insert(
        "symmetricMatch",
        p("RIGHT.requirements && LEFT.requirements"),
    );
    root.insert("leftMatchesRight", p("RIGHT.requirements"));
    root.insert("rightMatchesLeft", p("LEFT.requirements"));
    root.insert("leftRankValue", p("LEFT.rank"));
    root.insert("rightRankValue", p("RIGHT.rank"));
    root.insert("LEFT", Expr::MatchSide(Side::Left));
    root.insert("RIGHT", Expr::MatchSide(Side::Right));
    let ctx = |me: &str, other: &str| {
        let mut c = ClassAd::new();
        c.insert("other", p(other));
        c.insert("target", p(other));
        c.insert("my", p(me));
        c.insert("ad", p(me));
        Rc::new(c)
    };
    let (lctx, rctx) = (ctx(".LEFT", ".RIGHT"), ctx(".RIGHT", ".LEFT"));
    // HTCondor also inserts the two context ads into the match ad, where
    // names can reach them (`lCtx.my.x`, `size(toplevel)` is 9).
    root.insert("lCtx", Expr::Ad(lctx.clone()));
    root.insert("rCtx", Expr::Ad(rctx.clone()));
    (Rc::new(root), lctx, rctx)
}

impl MatchContext {
    /// Puts `left` (MY, typically the job) and `right` (TARGET, typically the
    /// machine) into one match.
    pub fn new(left: Rc<ClassAd>, right: Rc<ClassAd>) -> MatchContext {
        let (root_ad, lctx_ad, rctx_ad) = MATCH_ADS.with(|m| m.clone());
        let root = Scope::root(root_ad);
        let lctx = Scope::child(lctx_ad, &root);
        let rctx = Scope::child(rctx_ad, &root);
        let l = Scope::child(left, &lctx);
        let r = Scope::child(right, &rctx);
        let _ = l.0.alt.set(Rc::downgrade(&r.0));
        let _ = r.0.alt.set(Rc::downgrade(&l.0));
        let _ = lctx.0.target.set(Rc::downgrade(&r.0));
        let _ = rctx.0.target.set(Rc::downgrade(&l.0));
        let _ = root.0.sides.set(Box::new(Sides {
            left: Rc::downgrade(&l.0),
            right: Rc::downgrade(&r.0),
            ads: (l.ad().clone(), r.ad().clone()),
        }));
        MatchContext { left: l, right: r }
    }
    /// The left ad's scope: MY is the left ad, TARGET the right.
    pub fn left(&self) -> &Scope {
        &self.left
    }
    /// The right ad's scope: MY is the right ad, TARGET the left.
    pub fn right(&self) -> &Scope {
        &self.right
    }
}

/// How deep evaluation may recurse before it is cut off with `error`.
const MAX_DEPTH: u32 = 20_000;
/// How many attribute lookups one top-level evaluation may make.
const MAX_STEPS: u64 = 1_000_000;

/// A name to look up: its lower-case key, the key's hash, its special
/// meaning, and when it comes from the tree the shared [`Name`] (whose
/// identity answers most comparisons without reading the text).
#[derive(Clone, Copy)]
struct Key<'k> {
    text: &'k str,
    hash: u64,
    special: Special,
    name: Option<&'k Name>,
}

impl<'k> Key<'k> {
    #[inline]
    fn of_name(n: &'k Name) -> Key<'k> {
        Key {
            text: n.key(),
            hash: n.hash(),
            special: n.special(),
            name: Some(n),
        }
    }
    /// A key that is already lower case.
    fn of_str(key: &'k str) -> Key<'k> {
        Key {
            text: key,
            hash: key_hash(key),
            special: Special::of_key(key),
            name: None,
        }
    }
    #[inline]
    fn find(&self, ad: &ClassAd) -> Option<usize> {
        ad.index_of_key(self.hash, self.text, self.name)
    }
}

/// What a scoped lookup found.
enum Found<'s> {
    /// The attribute at `index` of the frame's ad.
    Attr(&'s Scope, usize),
    /// A special name answered directly.
    Special(Value),
    Missing,
}

/// The attributes being evaluated, innermost last: the first few in place
/// (most evaluations nest only a few attributes deep, and an evaluator
/// is often made for one evaluation), the rest in a vector.
struct InProgress {
    first: [(*const Frame, usize); IN_PLACE],
    len: usize,
    more: Vec<(*const Frame, usize)>,
}

const IN_PLACE: usize = 16;

impl Default for InProgress {
    fn default() -> Self {
        InProgress {
            first: [(std::ptr::null(), 0); IN_PLACE],
            len: 0,
            more: Vec::new(),
        }
    }
}

impl InProgress {
    #[inline]
    fn has(&self, token: (*const Frame, usize)) -> bool {
        self.first[..self.len.min(IN_PLACE)].contains(&token)
            || (self.len > IN_PLACE && self.more.contains(&token))
    }
    #[inline]
    fn push(&mut self, token: (*const Frame, usize)) {
        if self.len < IN_PLACE {
            self.first[self.len] = token;
        } else {
            self.more.push(token);
        }
        self.len += 1;
    }
    #[inline]
    fn pop(&mut self) {
        self.len -= 1;
        if self.len >= IN_PLACE {
            self.more.pop();
        }
    }
}

/// Evaluation state: recursion depth, the attributes being evaluated (for
/// cycle detection), a step budget, and the clock reading.
pub struct Evaluator {
    depth: u32,
    steps: u64,
    in_progress: InProgress,
    now: Option<i64>,
}

impl Default for Evaluator {
    fn default() -> Self {
        Evaluator::new()
    }
}

impl Evaluator {
    pub fn new() -> Evaluator {
        Evaluator {
            depth: 0,
            steps: 0,
            in_progress: InProgress::default(),
            now: None,
        }
    }

    /// The current time, read once per evaluator so that every `time()` in
    /// one evaluation agrees.
    pub fn now(&mut self) -> i64 {
        *self.now.get_or_insert_with(crate::clock::now)
    }

    /// Evaluates `e` in `scope`.
    pub fn eval(&mut self, e: &Expr, scope: &Scope) -> Value {
        self.ev(e, scope)
    }

    /// [`Evaluator::eval`], with literals answered in the caller.
    #[inline(always)]
    fn ev(&mut self, e: &Expr, scope: &Scope) -> Value {
        if let Expr::Lit(v) = e {
            // One level deeper, as a call would go.
            return if self.depth < MAX_DEPTH {
                v.clone()
            } else {
                Value::Error
            };
        }
        self.eval_nested(e, scope)
    }

    /// Evaluates `e` one level deeper (or more for parentheses).
    fn eval_nested(&mut self, e: &Expr, scope: &Scope) -> Value {
        // Literals and parentheses are answered here rather than by a call
        // per node; `parens` counts the levels that calls would have taken,
        // so the depth limit cuts off exactly where it would have.
        let mut e = e;
        let mut parens = 0;
        loop {
            match e {
                Expr::Lit(v) => {
                    return if self.depth + parens < MAX_DEPTH {
                        v.clone()
                    } else {
                        Value::Error
                    };
                }
                Expr::Paren(inner) => {
                    parens += 1;
                    e = inner;
                }
                _ => break,
            }
        }
        let outer = self.depth;
        self.depth += parens + 1;
        let v = if self.depth > MAX_DEPTH {
            Value::Error
        } else if self.depth / 32 != outer / 32 {
            stacker::maybe_grow(128 * 1024, 2 * 1024 * 1024, || {
                self.eval_node_outlined(e, scope)
            })
        } else {
            self.eval_node(e, scope)
        };
        self.depth = outer;
        v
    }

    #[inline(never)]
    fn eval_node_outlined(&mut self, e: &Expr, scope: &Scope) -> Value {
        self.eval_node(e, scope)
    }

    #[inline(always)]
    fn eval_node(&mut self, e: &Expr, scope: &Scope) -> Value {
        match e {
            Expr::Lit(v) => v.clone(),
            Expr::Attr(a) => self.eval_attr(a, scope),
            Expr::Paren(inner) => self.eval(inner, scope),
            Expr::Unary(op, x) => {
                let v = self.eval(x, scope);
                unary(*op, v)
            }
            Expr::Binary(op, b) => match op {
                BinOp::And => self.and(&b.0, &b.1, scope),
                BinOp::Or => self.or(&b.0, &b.1, scope),
                _ => {
                    let l = self.ev(&b.0, scope);
                    let r = self.ev(&b.1, scope);
                    if let (Value::Int(x), Value::Int(y)) = (&l, &r)
                        && let Some(v) = int_binary(*op, *x, *y)
                    {
                        discard(l);
                        discard(r);
                        return v;
                    }
                    if let (Value::Str(a), Value::Str(b)) = (&l, &r)
                        && matches!(op, BinOp::Eq | BinOp::Ne)
                    {
                        let same = a == b || a.eq_ignore_ascii_case(b);
                        return Value::Bool(same == (*op == BinOp::Eq));
                    }
                    binary(*op, l, r)
                }
            },
            Expr::Cond(c) => match truth_of(self.ev(&c.0, scope)) {
                Truth::True => self.eval(&c.1, scope),
                Truth::False => self.eval(&c.2, scope),
                Truth::Undefined => Value::Undefined,
                Truth::Error => Value::Error,
            },
            Expr::Elvis(b) => match self.eval(&b.0, scope) {
                Value::Undefined => self.eval(&b.1, scope),
                v => v,
            },
            Expr::Index(b) => {
                let base = self.eval(&b.0, scope);
                let idx = self.eval(&b.1, scope);
                self.index(base, idx)
            }
            Expr::Call(c) => match c.builtin {
                Some(f) => f(self, &c.args, scope),
                None => Value::Error,
            },
            Expr::List(items) => Value::List(ListValue {
                items: items.clone(),
                scope: Some(scope.clone()),
            }),
            Expr::Ad(ad) => Value::Ad(Scope::child(ad.clone(), scope)),
            Expr::RelTimeLit(secs) => Value::Real(*secs),
            Expr::MatchSide(side) => match scope.toplevel().side(*side) {
                Some(s) => Value::Ad(s),
                None => Value::Undefined,
            },
        }
    }

    /// Evaluates element `i` of a list value.
    pub fn list_item(&mut self, list: &ListValue, i: usize, scope: &Scope) -> Value {
        let s = list.scope.as_ref().unwrap_or(scope);
        self.eval(&list.items[i], s)
    }

    /// Evaluates every element of a list value.
    pub fn list_values(&mut self, list: &ListValue, scope: &Scope) -> Vec<Value> {
        (0..list.items.len())
            .map(|i| self.list_item(list, i, scope))
            .collect()
    }

    fn index(&mut self, base: Value, idx: Value) -> Value {
        // An error index wins, then an error base; an undefined index gives
        // undefined whatever the base.
        match (&base, &idx) {
            (_, Value::Error) | (Value::Error, _) => return Value::Error,
            (_, Value::Undefined) => return Value::Undefined,
            _ => {}
        }
        match base {
            Value::List(l) => match idx {
                Value::Int(i) => {
                    if i < 0 || i as u64 >= l.items.len() as u64 {
                        Value::Error
                    } else {
                        let s = l.scope.clone().unwrap_or_else(Scope::empty);
                        self.eval(&l.items[i as usize], &s)
                    }
                }
                Value::Undefined => Value::Undefined,
                _ => Value::Error,
            },
            Value::Ad(frame) => match idx {
                Value::Str(name) => {
                    let key = name.to_ascii_lowercase();
                    match frame.ad().index_of(&key) {
                        Some(i) => self.eval_found(&frame, i),
                        None => Value::Undefined,
                    }
                }
                Value::Undefined => Value::Undefined,
                _ => Value::Error,
            },
            Value::Undefined => Value::Undefined,
            _ => Value::Error,
        }
    }

    fn eval_attr(&mut self, a: &AttrRef, scope: &Scope) -> Value {
        let key = Key::of_name(&a.name);
        match &a.base {
            None => {
                let start = if a.absolute { scope.top() } else { scope };
                match self.lookup_in_scope(start, key) {
                    Found::Attr(frame, i) => self.eval_found(frame, i),
                    Found::Special(v) => v,
                    Found::Missing => {
                        if a.absolute {
                            return Value::Undefined;
                        }
                        match start.0.alt.get().and_then(|w| w.upgrade()) {
                            Some(alt) => {
                                let alt = Scope(alt);
                                match self.lookup_in_scope(&alt, key) {
                                    Found::Attr(frame, i) => self.eval_found(frame, i),
                                    Found::Special(v) => v,
                                    Found::Missing => Value::Undefined,
                                }
                            }
                            None => Value::Undefined,
                        }
                    }
                }
            }
            Some(base) => match self.target_shortcut(base, scope) {
                Some(t) => self.select_in(&t, key),
                None => {
                    let b = self.eval(base, scope);
                    self.select_key(b, key, scope)
                }
            },
        }
    }

    /// `TARGET` or `OTHER` in `TARGET.x`, found without evaluating the
    /// context ad's `.RIGHT`: when no ad between here and the match's
    /// context ad defines the name, it is the context's other ad. This is
    /// exactly what the general lookup would find, only cheaper.
    fn target_shortcut(&mut self, base: &Expr, scope: &Scope) -> Option<Scope> {
        let Expr::Attr(b) = base else { return None };
        if b.base.is_some() || b.absolute || b.name.special() != Special::Target {
            return None;
        }
        let key = Key::of_name(&b.name);
        let mut cur = scope;
        loop {
            // The context ad's own `target` is the other ad.
            if let Some(t) = cur.0.target.get() {
                return t.upgrade().map(Scope);
            }
            if key.find(cur.ad()).is_some() {
                return None;
            }
            cur = cur.parent()?;
        }
    }

    /// `value.name`: a lookup in an ad, mapped over a list.
    pub fn select(&mut self, base: Value, key: &str, scope: &Scope) -> Value {
        self.select_key(base, Key::of_str(key), scope)
    }

    /// `name` looked up from the ad of `frame`.
    fn select_in(&mut self, frame: &Scope, key: Key<'_>) -> Value {
        match self.lookup_in_scope(frame, key) {
            Found::Attr(f, i) => self.eval_found(f, i),
            Found::Special(v) => v,
            Found::Missing => Value::Undefined,
        }
    }

    fn select_key(&mut self, base: Value, key: Key<'_>, scope: &Scope) -> Value {
        match base {
            Value::Ad(frame) => self.select_in(&frame, key),
            Value::List(l) => {
                let mut out = Vec::with_capacity(l.items.len());
                for i in 0..l.items.len() {
                    let item = self.list_item(&l, i, scope);
                    let v = match item {
                        Value::Undefined => Value::Undefined,
                        Value::Ad(_) | Value::List(_) => self.select_key(item, key, scope),
                        _ => Value::Error,
                    };
                    out.push(v);
                }
                // HTCondor makes `list.name` a list like a written one (for
                // `is`, see `identical`).
                let items: Vec<Expr> = out.into_iter().map(Expr::Lit).collect();
                Value::List(ListValue {
                    items: Rc::from(items),
                    scope: Some(scope.clone()),
                })
            }
            Value::Undefined => Value::Undefined,
            _ => Value::Error,
        }
    }

    /// Evaluates attribute `i` of the frame's ad in that frame, refusing
    /// cycles.
    fn eval_found(&mut self, frame: &Scope, i: usize) -> Value {
        let token = (frame.ptr(), i);
        if self.in_progress.has(token) {
            return Value::Error;
        }
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Value::Error;
        }
        self.in_progress.push(token);
        let v = self.ev(frame.ad().expr_at(i), frame);
        self.in_progress.pop();
        v
    }

    fn lookup_in_scope<'s>(&mut self, start: &'s Scope, key: Key<'_>) -> Found<'s> {
        let mut cur = start;
        loop {
            if let Some(i) = key.find(cur.ad()) {
                return Found::Attr(cur, i);
            }
            let special = match key.special {
                Special::None | Special::Target => None,
                Special::TopLevel => Some(Value::Ad(start.toplevel())),
                Special::SelfAd => Some(Value::Ad(cur.clone())),
                Special::Parent => Some(match cur.parent() {
                    Some(p) => Value::Ad(p.clone()),
                    None => Value::Undefined,
                }),
                Special::CurrentTime => Some(Value::Int(self.now())),
            };
            if let Some(v) = special {
                return Found::Special(v);
            }
            match cur.parent() {
                Some(p) => cur = p,
                None => return Found::Missing,
            }
        }
    }

    fn and(&mut self, l: &Expr, r: &Expr, scope: &Scope) -> Value {
        let lt = truth_of(self.ev(l, scope));
        match lt {
            Truth::False => return Value::Bool(false),
            Truth::Error => return Value::Error,
            _ => {}
        }
        match truth_of(self.ev(r, scope)) {
            Truth::False => Value::Bool(false),
            Truth::True => {
                if lt == Truth::True {
                    Value::Bool(true)
                } else {
                    Value::Undefined
                }
            }
            Truth::Undefined => Value::Undefined,
            Truth::Error => Value::Error,
        }
    }

    fn or(&mut self, l: &Expr, r: &Expr, scope: &Scope) -> Value {
        let lt = truth_of(self.ev(l, scope));
        match lt {
            Truth::True => return Value::Bool(true),
            Truth::Error => return Value::Error,
            _ => {}
        }
        match truth_of(self.ev(r, scope)) {
            Truth::True => Value::Bool(true),
            Truth::False => {
                if lt == Truth::False {
                    Value::Bool(false)
                } else {
                    Value::Undefined
                }
            }
            Truth::Undefined => Value::Undefined,
            Truth::Error => Value::Error,
        }
    }
}
