//! Control and meta functions: `ifThenElse`, `eval`, `unparse`,
//! `unresolved`, `debug`, and the attribute dereferencing and
//! external-reference walk that `unresolved` and `countMatches` share.

use std::collections::BTreeMap;

use super::string_of;
use crate::classad::ast::{AttrRef, Expr, UnOp};
use crate::classad::eval::{Evaluator, Scope, Truth, truth_of};
use crate::classad::parse_expr;
use crate::classad::unparse::{self, Syntax};
use crate::classad::value::Value;

/// `ifThenElse(c, a, b)`: lazy; a string, list or time condition is an
/// error, an undefined one gives undefined.
pub fn if_then_else(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    if args.len() != 3 {
        return Value::Error;
    }
    match truth_of(ev.eval(&args[0], scope)) {
        Truth::True => ev.eval(&args[1], scope),
        Truth::False => ev.eval(&args[2], scope),
        Truth::Undefined => Value::Undefined,
        Truth::Error => Value::Error,
    }
}

/// `eval(s)`: parses `string(s)` and evaluates it in the current scope.
/// Undefined, error and unparsable text give error.
pub fn eval(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    let [a] = args else {
        return Value::Error;
    };
    let v = ev.eval(a, scope);
    let Some(text) = string_of(&v) else {
        return Value::Error;
    };
    match parse_expr(&text) {
        Ok(e) => ev.eval(&e, scope),
        Err(_) => Value::Error,
    }
}

/// `debug(e)`: the value of `e`. (HTCondor also logs it at D_FULLDEBUG;
/// tern has no such log.)
pub fn debug(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    match args {
        [a] => ev.eval(a, scope),
        _ => Value::Error,
    }
}

/// `unparse(attr)`: the text of the attribute's expression, unevaluated,
/// as HTCondor's pretty printer writes it (lists and nested ads on indented
/// lines). Only a plain name defined in the current ad is found; anything
/// else gives `""`. A non-reference argument is an error.
pub fn unparse(_ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    let [Expr::Attr(a)] = args else {
        return Value::Error;
    };
    // HTCondor looks the *printed* reference up as a name, so `MY.x` and
    // `.x` never match an attribute.
    let found = if a.base.is_none() && !a.absolute {
        scope.ad().get(a.name.as_str())
    } else {
        None
    };
    let mut out = String::new();
    if let Some(e) = found {
        Pretty::default().expr(&mut out, e);
    }
    Value::string(out)
}

/// HTCondor's `PrettyPrint`: the new-syntax unparser, except that lists
/// and ads open on a new, indented line and put each element on its own.
#[derive(Default)]
struct Pretty {
    indent: usize,
}

impl Pretty {
    const AD_INDENT: usize = 4;
    const LIST_INDENT: usize = 3;

    fn expr(&mut self, out: &mut String, e: &Expr) {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.expr_inner(out, e))
    }

    fn expr_inner(&mut self, out: &mut String, e: &Expr) {
        match e {
            Expr::Lit(v) => self.value(out, v),
            Expr::Attr(a) => {
                if let Some(b) = &a.base {
                    self.expr(out, b);
                    out.push('.');
                } else if a.absolute {
                    out.push('.');
                }
                unparse::write_name(out, a.name.as_str());
            }
            Expr::Unary(op, x) => {
                out.push_str(match op {
                    UnOp::Neg => " -",
                    UnOp::Plus => " +",
                    UnOp::Not => " !",
                    UnOp::BitNot => " ~",
                });
                self.expr(out, x);
            }
            Expr::MatchSide(_) | Expr::RelTimeLit(_) => unparse::write_expr(out, e, Syntax::New),
            Expr::Binary(op, b) => {
                self.expr(out, &b.0);
                out.push(' ');
                out.push_str(op.new_syntax());
                out.push(' ');
                self.expr(out, &b.1);
            }
            Expr::Cond(c) => {
                self.expr(out, &c.0);
                out.push_str(" ? ");
                self.expr(out, &c.1);
                out.push_str(" : ");
                self.expr(out, &c.2);
            }
            Expr::Elvis(b) => {
                self.expr(out, &b.0);
                out.push_str(" ?: ");
                self.expr(out, &b.1);
            }
            Expr::Paren(x) => {
                out.push('(');
                self.expr(out, x);
                out.push(')');
            }
            Expr::Index(b) => {
                self.expr(out, &b.0);
                out.push('[');
                self.expr(out, &b.1);
                out.push(']');
            }
            Expr::Call(c) => {
                out.push_str(&c.name);
                out.push('(');
                for (i, a) in c.args.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    self.expr(out, a);
                }
                out.push(')');
            }
            Expr::List(items) => self.list(out, items),
            Expr::Ad(ad) => self.ad(out, ad.sorted()),
        }
    }

    fn value(&mut self, out: &mut String, v: &Value) {
        match v {
            Value::List(l) => self.list(out, &l.items),
            Value::Ad(f) => self.ad(out, f.ad().sorted()),
            other => unparse::write_value(out, other, Syntax::New),
        }
    }

    fn open(&mut self, out: &mut String, step: usize, c: char) {
        self.indent += step;
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', self.indent));
        out.push(c);
        self.indent += step;
    }

    fn close(&mut self, out: &mut String, step: usize, c: char) {
        self.indent -= step;
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', self.indent));
        out.push(c);
        self.indent -= step;
    }

    fn list(&mut self, out: &mut String, items: &[Expr]) {
        self.open(out, Self::LIST_INDENT, '{');
        for (i, e) in items.iter().enumerate() {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', self.indent));
            self.expr(out, e);
            if i + 1 < items.len() {
                out.push(',');
            }
        }
        self.close(out, Self::LIST_INDENT, '}');
    }

    fn ad(&mut self, out: &mut String, attrs: Vec<(&str, &Expr)>) {
        self.open(out, Self::AD_INDENT, '[');
        let n = attrs.len();
        for (i, (name, e)) in attrs.into_iter().enumerate() {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', self.indent));
            unparse::write_name(out, name);
            out.push_str(" = ");
            self.expr(out, e);
            if i + 1 < n {
                out.push_str("; ");
            }
        }
        self.close(out, Self::AD_INDENT, ']');
    }
}

/// What looking a name up from a scope found, as HTCondor's
/// `LookupInScope` does it: the ad chain first, then the special names.
pub(super) enum Lookup {
    /// Attribute `index` of `frame`'s ad.
    Attr(Scope, usize),
    /// One of the special names (`self`, `parent`, `CurrentTime`, ...).
    Special,
    Missing,
}

pub(super) fn lookup_in_scope(start: &Scope, key: &str) -> Lookup {
    let mut cur = start.clone();
    loop {
        if let Some(i) = cur.ad().index_of(key) {
            return Lookup::Attr(cur, i);
        }
        if matches!(
            key,
            "toplevel" | "root" | "self" | "my" | "parent" | "currenttime"
        ) {
            return Lookup::Special;
        }
        let Some(p) = cur.parent().cloned() else {
            return Lookup::Missing;
        };
        cur = p;
    }
}

/// Where an attribute reference points, like HTCondor's
/// `AttributeReference::Deref`: an attribute of some ad, or for the
/// special names the ad they name (`self`, `toplevel`, `parent`) or the
/// clock (`CurrentTime`). `None` when the base is not an ad or the name is
/// not defined.
pub(super) enum Target {
    Attr(Scope, usize),
    Expr(Expr),
}

pub(super) fn deref(ev: &mut Evaluator, a: &AttrRef, scope: &Scope) -> Option<Target> {
    let start = match &a.base {
        Some(b) => match ev.eval(b, scope) {
            Value::Ad(f) => f,
            _ => return None,
        },
        None if a.absolute => scope.toplevel(),
        None => scope.clone(),
    };
    match lookup_in_scope(&start, a.name.key()) {
        Lookup::Attr(f, i) => Some(Target::Attr(f, i)),
        // In a match an unscoped name falls back to the other ad.
        Lookup::Missing if a.base.is_none() && !a.absolute => {
            match lookup_in_scope(&start.alternate()?, a.name.key()) {
                Lookup::Attr(f, i) => Some(Target::Attr(f, i)),
                _ => None,
            }
        }
        Lookup::Missing => None,
        Lookup::Special => {
            // The special name answered at the first ad lacking it.
            let mut cur = start.clone();
            while cur.ad().index_of(a.name.key()).is_some() {
                cur = cur.parent()?.clone();
            }
            Some(Target::Expr(match a.name.key() {
                "toplevel" | "root" => Expr::Ad(start.toplevel().ad().clone()),
                "self" | "my" => Expr::Ad(cur.ad().clone()),
                "parent" => Expr::Ad(cur.parent()?.ad().clone()),
                _ => Expr::Lit(Value::Int(ev.now())),
            }))
        }
    }
}

/// The expression a [`Target`] names.
pub(super) fn target_expr(t: &Target) -> Expr {
    match t {
        Target::Attr(f, i) => f.ad().expr_at(*i).clone(),
        Target::Expr(e) => e.clone(),
    }
}

/// The external references of an expression, keyed case-insensitively and
/// kept in that order, the first spelling winning (HTCondor's
/// `References` set).
type Refs = BTreeMap<String, String>;

/// The state of one external-reference walk: the attributes being walked
/// (to refuse cycles) and a step budget, since a chain of attributes that
/// each use the previous one twice would take exponential time otherwise.
struct Walk {
    visiting: Vec<(Scope, usize)>,
    /// Attributes already walked: their references are in the set, so a
    /// second visit adds nothing.
    done: Vec<(Scope, usize)>,
    steps: u64,
}

impl Walk {
    const MAX_STEPS: u64 = 1_000_000;
}

/// HTCondor's `_GetExternalReferences` with full names: every attribute
/// the expression would look up and not find, following the ones it does
/// find. A reference whose base is undefined is recorded whole
/// (`k.l.m`); a name missing from a found ad is recorded bare. Returns
/// false where HTCondor's walk fails (a cycle, a base that is neither an
/// ad nor undefined).
fn external_refs(
    ev: &mut Evaluator,
    e: &Expr,
    scope: &Scope,
    refs: &mut Refs,
    walk: &mut Walk,
) -> bool {
    walk.steps += 1;
    if walk.visiting.len() > 1000 || walk.steps > Walk::MAX_STEPS {
        return false;
    }
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || match e {
        Expr::Lit(_) | Expr::RelTimeLit(_) => true,
        // A match ad holds its two ads themselves as LEFT and RIGHT, so
        // they are walked like nested ads: `unresolved(TARGET)` reports
        // what the other ad's attributes lack at the top of the match.
        Expr::MatchSide(_) => match ev.eval(e, scope) {
            Value::Ad(side) => side
                .ad()
                .iter()
                .map(|(_, x)| x.clone())
                .collect::<Vec<_>>()
                .iter()
                .all(|x| external_refs(ev, x, scope, refs, walk)),
            _ => true,
        },
        Expr::Attr(a) => {
            let start = match &a.base {
                Some(b) => match ev.eval(b, scope) {
                    Value::Undefined => {
                        insert_ref(refs, unparse::unparse(e));
                        return true;
                    }
                    Value::Ad(f) => f,
                    _ => return false,
                },
                None if a.absolute => scope.toplevel(),
                None => scope.clone(),
            };
            match lookup_in_scope(&start, a.name.key()) {
                Lookup::Attr(f, i) => {
                    if walk.visiting.iter().any(|(s, j)| s.same(&f) && *j == i) {
                        return false;
                    }
                    if walk.done.iter().any(|(s, j)| s.same(&f) && *j == i) {
                        return true;
                    }
                    walk.visiting.push((f.clone(), i));
                    let sub = f.ad().expr_at(i).clone();
                    let ok = external_refs(ev, &sub, &f, refs, walk);
                    walk.visiting.pop();
                    walk.done.push((f, i));
                    ok
                }
                Lookup::Special => true,
                Lookup::Missing => {
                    insert_ref(refs, a.name.as_str().to_string());
                    true
                }
            }
        }
        Expr::Unary(_, x) | Expr::Paren(x) => external_refs(ev, x, scope, refs, walk),
        Expr::Binary(_, b) | Expr::Elvis(b) | Expr::Index(b) => {
            external_refs(ev, &b.0, scope, refs, walk) && external_refs(ev, &b.1, scope, refs, walk)
        }
        Expr::Cond(c) => {
            external_refs(ev, &c.0, scope, refs, walk)
                && external_refs(ev, &c.1, scope, refs, walk)
                && external_refs(ev, &c.2, scope, refs, walk)
        }
        Expr::Call(c) => c
            .args
            .iter()
            .all(|a| external_refs(ev, a, scope, refs, walk)),
        Expr::List(items) => items
            .iter()
            .all(|a| external_refs(ev, a, scope, refs, walk)),
        // HTCondor walks a nested ad's attributes with the *outer* ad as
        // the scope, so `[c = a; d = {c}]` reports `c`.
        Expr::Ad(ad) => ad
            .iter()
            .map(|(_, x)| x.clone())
            .collect::<Vec<_>>()
            .iter()
            .all(|x| external_refs(ev, x, scope, refs, walk)),
    })
}

fn insert_ref(refs: &mut Refs, name: String) {
    refs.entry(name.to_ascii_lowercase()).or_insert(name);
}

/// `unresolved(attr)`: the external references of the attribute's
/// expression, comma-separated, in case-insensitive order of their full
/// names, with a leading `target.` dropped. `unresolved(attr, re)`:
/// whether any of them matches the (case-insensitive) regex. A missing
/// attribute gives undefined; a reference cycle gives `""` / false.
pub fn unresolved(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    let (Some(Expr::Attr(a)), 1..=2) = (args.first(), args.len()) else {
        return Value::Error;
    };
    let Some(target) = deref(ev, a, scope) else {
        return Value::Undefined;
    };
    let re = match args.get(1) {
        None => None,
        Some(p) => match ev.eval(p, scope) {
            // HTCondor's own evaluation fails here; tern gives error.
            Value::Str(s) => match super::regex::compile(&s, "i") {
                Some(re) => Some(re),
                None => return Value::Error,
            },
            _ => return Value::Error,
        },
    };
    let mut refs = Refs::new();
    let expr = target_expr(&target);
    // The expression is walked in the scope of the ad it was found in.
    let home = match &target {
        Target::Attr(f, _) => f.clone(),
        Target::Expr(_) => scope.clone(),
    };
    let visiting = match target {
        Target::Attr(f, i) => vec![(f, i)],
        Target::Expr(_) => Vec::new(),
    };
    let mut walk = Walk {
        visiting,
        done: Vec::new(),
        steps: 0,
    };
    let ok = external_refs(ev, &expr, &home, &mut refs, &mut walk);
    let names: Vec<&str> = if ok {
        refs.values()
            .map(|n| match n.get(..7) {
                Some(p) if p.eq_ignore_ascii_case("target.") => &n[7..],
                _ => n.as_str(),
            })
            .collect()
    } else {
        Vec::new()
    };
    match re {
        Some(re) => Value::Bool(
            names
                .iter()
                .any(|n| super::regex::matches_non_empty(&re, n)),
        ),
        None => Value::string(names.join(",")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{check, check_in};

    #[test]
    fn if_then_else() {
        check(&[
            ("ifThenElse(undefined, 1, 2)", "undefined"),
            ("ifThenElse(\"x\", 1, 2)", "error"),
            ("ifthenelse(1,2,3)", "2"),
            ("IFTHENELSE(0,2,3)", "3"),
            ("ifThenElse(1,2)", "error"),
            ("ifThenElse(2.5,\"a\",\"b\")", "\"a\""),
            ("ifThenElse(0.0,\"a\",\"b\")", "\"b\""),
            ("ifThenElse(error,1,2)", "error"),
            ("ifThenElse({1},1,2)", "error"),
            ("ifThenElse(relTime(1),1,2)", "error"),
            ("ifThenElse(true,nosuch,2)", "undefined"),
            ("ifThenElse(false, 1/0, 7)", "7"),
        ]);
    }

    #[test]
    fn eval_and_debug() {
        check(&[
            ("eval(\"1+2\")", "3"),
            ("eval(3)", "3"),
            ("eval(\"1+\")", "error"),
            ("eval(undefined)", "error"),
            ("eval(error)", "error"),
            ("eval(\"x\")", "undefined"),
            ("eval({1})", "{ 1 }"),
            ("eval(2.5)", "2.500000000000000E+00"),
            ("eval(true)", "true"),
            ("eval()", "error"),
            ("debug(1+2)", "3"),
            ("debug()", "error"),
            ("debug(1,2)", "error"),
        ]);
        check_in(
            "[slot5_State = \"Claimed\"; SlotID = 5]",
            &[("eval(strcat(\"slot\", SlotID, \"_State\"))", "\"Claimed\"")],
        );
        check_in(
            "[q = 7; L = {[p=1], [p=2]}; E = p * 10]",
            &[
                ("eval(\"q + 1\")", "8"),
                ("eval(\"E\")", "undefined"),
                ("eval(\"evalInEachContext(p, L)\")", "{ 1,2 }"),
            ],
        );
        // A self-referential eval is cut off, not a stack overflow.
        check_in("[a = eval(\"a\")]", &[("a", "error")]);
    }

    #[test]
    fn unparse() {
        check_in("[e = 2.0]", &[("unparse(e)", "\"2.000000000000000E+00\"")]);
        check(&[
            ("unparse(x)", "\"\""),
            ("unparse(1)", "error"),
            ("unparse(\"x\")", "error"),
        ]);
        check_in(
            "[q = 7; L = {[p=1], [p=2]}; E = p * 10; a5 = [z = w].z; a13 = [z = w]; \
             a14 = {g, h}; a17 = c1 ? c2 : c3; a26 = \"lit\"; a16 = u ?: v; a18 = -neg; \
             a2 = TARGET.d + target.D]",
            &[
                ("unparse(E)", "\"p * 10\""),
                (
                    "unparse(L)",
                    "\"\\n   {\\n      \\n          [\\n              p = 1\\n          ],\\n      \
                     \\n          [\\n              p = 2\\n          ]\\n   }\"",
                ),
                ("unparse(q)", "\"7\""),
                ("unparse(nosuch)", "\"\""),
                ("unparse(MY.E)", "\"\""),
                ("unparse(.E)", "\"\""),
                ("unparse(E, 1)", "error"),
                ("unparse(a5)", "\"\\n    [\\n        z = w\\n    ].z\""),
                ("unparse(a13)", "\"\\n    [\\n        z = w\\n    ]\""),
                ("unparse(a14)", "\"\\n   {\\n      g,\\n      h\\n   }\""),
                ("unparse(a17)", "\"c1 ? c2 : c3\""),
                ("unparse(a26)", "\"\\\"lit\\\"\""),
                ("unparse(a16)", "\"u ?: v\""),
                ("unparse(a18)", "\" -neg\""),
                ("unparse(a2)", "\"TARGET.d + target.D\""),
            ],
        );
        check_in(
            "[m = [a = 1; b = 2]]",
            &[(
                "unparse(m)",
                "\"\\n    [\\n        a = 1; \\n        b = 2\\n    ]\"",
            )],
        );
    }

    #[test]
    fn unresolved() {
        check_in(
            "[q = 7; L = {[p=1], [p=2]}; E = p * 10]",
            &[
                ("unresolved(E)", "\"p\""),
                ("unresolved(q)", "\"\""),
                ("unresolved(L)", "\"\""),
                ("unresolved(nosuch)", "undefined"),
                ("unresolved(E, \"^p$\")", "true"),
                ("unresolved(E, \"^P$\")", "true"),
                ("unresolved(E, \"^z\")", "false"),
                ("unresolved(E, \"\")", "false"),
                ("unresolved(E, \"[\")", "error"),
                ("unresolved(E, undefined)", "error"),
                ("unresolved(E, 1)", "error"),
                ("unresolved(1)", "error"),
                ("unresolved(E, \"p\", 3)", "error"),
                ("unresolved(MY.E)", "\"p\""),
                ("unresolved(TARGET.E)", "undefined"),
            ],
        );
        check_in(
            "[a = b + c; d = a]",
            &[
                ("unresolved(self)", "\"b,c\""),
                ("unresolved(toplevel)", "\"b,c\""),
                ("unresolved(my)", "\"b,c\""),
                ("unresolved(root)", "\"b,c\""),
                ("unresolved(self, \"b\")", "true"),
                ("unparse(self)", "\"\""),
                (
                    "evalInEachContext(self, {[p=1]})",
                    "{ [ a = b + c; d = a ] }",
                ),
            ],
        );
        check_in(
            "[Cpus = 1; R = TARGET.Cpus > 0 && OpSys == \"LINUX\" && Arch == \"X86_64\" && \
             Cpus > 1 && Memory > x.y && f(Disk) + MY.Cpus]",
            &[
                ("unresolved(R)", "\"Arch,Disk,Memory,OpSys,Cpus,x.y\""),
                ("unresolved(R, \"^mem\")", "true"),
            ],
        );
        check_in(
            "[a1 = b + c + b + B; a2 = TARGET.d + target.D; a3 = other.e; a4 = my.f; \
             a5 = [z = w].z; a6 = {g, h}[0]; a7 = strcat(i, j); a8 = k.l.m; a9 = .n; \
             a10 = parent.o; a11 = a1 + 1; a12 = self.zz; a13 = [z = w]; a14 = {g, h}; \
             a15 = x[0]; a16 = u ?: v; a17 = c1 ? c2 : c3; a18 = -neg; a19 = (par); \
             a20 = toplevel.tt; a21 = root.rr; a22 = CurrentTime; a23 = TARGET.x.y; \
             a24 = a25; a25 = nope; a26 = \"lit\"; a27 = k.l; a28 = undefined.x; \
             cyc = b + cyc; M = [c = a1; d = {a1, c}]]",
            &[
                ("unresolved(a1)", "\"b,c\""),
                ("unresolved(a2)", "\"d\""),
                ("unresolved(a3)", "\"other.e\""),
                ("unresolved(a4)", "\"f\""),
                ("unresolved(a5)", "\"w\""),
                ("unresolved(a6)", "\"g,h\""),
                ("unresolved(a7)", "\"i,j\""),
                ("unresolved(a8)", "\"k.l.m\""),
                ("unresolved(a9)", "\"n\""),
                ("unresolved(a10)", "\"'parent'.o\""),
                ("unresolved(a11)", "\"b,c\""),
                ("unresolved(a12)", "\"zz\""),
                ("unresolved(a13)", "\"w\""),
                ("unresolved(a14)", "\"g,h\""),
                ("unresolved(a15)", "\"x\""),
                ("unresolved(a16)", "\"u,v\""),
                ("unresolved(a17)", "\"c1,c2,c3\""),
                ("unresolved(a18)", "\"neg\""),
                ("unresolved(a19)", "\"par\""),
                ("unresolved(a20)", "\"tt\""),
                ("unresolved(a21)", "\"rr\""),
                ("unresolved(a22)", "\"\""),
                ("unresolved(a23)", "\"x.y\""),
                ("unresolved(a24)", "\"nope\""),
                ("unresolved(a26)", "\"\""),
                ("unresolved(a27)", "\"k.l\""),
                ("unresolved(a28)", "\"undefined.x\""),
                ("unresolved(cyc)", "\"\""),
                ("unresolved(cyc, \"b\")", "false"),
                ("unresolved(M)", "\"b,c\""),
                ("unresolved(parent)", "undefined"),
                ("unresolved(CurrentTime)", "\"\""),
            ],
        );
    }

    #[test]
    fn unresolved_walks_shared_attributes_once() {
        let mut ad = String::from("[a0 = x + y");
        for i in 1..=60 {
            ad.push_str(&format!("; a{i} = a{} + a{}", i - 1, i - 1));
        }
        ad.push(']');
        check_in(&ad, &[("unresolved(a60)", "\"x,y\"")]);
    }
}
