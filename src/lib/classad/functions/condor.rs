//! The functions HTCondor's `condor_utils` registers on top of the ClassAd
//! library: environment and argument strings (`envV1ToV2`,
//! `mergeEnvironment`, `argsToList`, `listToArgs`), evaluation in nested
//! ads (`countMatches`, `evalInEachContext`), and `userHome`, `userMap`.
//!
//! The V1/V2 syntaxes are the submit file's: V1 environments are
//! `NAME=value` items between `;` (or a leading delimiter character), V1
//! arguments are split at white space; V2 items are separated by white
//! space, and single quotes quote, with `''` for a quote inside.

use std::collections::BTreeMap;

use super::control::{deref, target_expr};
use super::eval_args;
use crate::classad::ast::Expr;
use crate::classad::eval::{Evaluator, Scope, Truth, truth};
use crate::classad::value::Value;

/// White space between V1/V2 items.
fn is_arg_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// Splits a V2 string; `None` for an unterminated quote.
fn split_v2(s: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    let mut chars = s.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        if quoted {
            if c == '\'' {
                if chars.peek() == Some(&'\'') {
                    chars.next();
                    cur.get_or_insert_with(String::new).push('\'');
                } else {
                    quoted = false;
                }
            } else {
                cur.get_or_insert_with(String::new).push(c);
            }
        } else if c == '\'' {
            quoted = true;
            cur.get_or_insert_with(String::new);
        } else if is_arg_space(c) {
            if let Some(a) = cur.take() {
                out.push(a);
            }
        } else {
            cur.get_or_insert_with(String::new).push(c);
        }
    }
    if quoted {
        return None;
    }
    out.extend(cur);
    Some(out)
}

/// Joins items into a V2 string: an empty item is `''`, and each run of
/// white space or quotes in an item is wrapped in single quotes (a quote
/// written `''`).
fn join_v2<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let special = |c: char| is_arg_space(c) || c == '\'';
    let mut out = String::new();
    for (n, item) in items.into_iter().enumerate() {
        if n > 0 {
            out.push(' ');
        }
        if item.is_empty() {
            out.push_str("''");
            continue;
        }
        let mut in_quotes = false;
        for c in item.chars() {
            if special(c) != in_quotes {
                out.push('\'');
                in_quotes = !in_quotes;
            }
            if c == '\'' {
                out.push_str("''");
            } else {
                out.push(c);
            }
        }
        if in_quotes {
            out.push('\'');
        }
    }
    out
}

/// An environment: names in byte order, each with a value, or none for a
/// bare `$$(...)` entry kept verbatim.
type Env = BTreeMap<String, Option<String>>;

/// Adds one `NAME=value` entry; false when the name is missing.
fn set_env(env: &mut Env, entry: &str) -> bool {
    match entry.split_once('=') {
        Some((name, value)) if !name.is_empty() => {
            env.insert(name.to_string(), Some(value.to_string()));
            true
        }
        None if entry.contains("$$") => {
            env.insert(entry.to_string(), None);
            true
        }
        _ => false,
    }
}

/// Merges a V1 environment string, choosing the delimiter as HTCondor
/// does: `;`, or a leading punctuation character.
fn merge_v1(env: &mut Env, s: &str) -> bool {
    const PERMITTED: &str = "!#$%&*+,-/:;<>?@^`|~\x1F";
    let mut delim = ';';
    let mut rest = s;
    if let Some(c) = s.chars().next()
        && (c == ';' || PERMITTED.contains(c))
    {
        delim = c;
        rest = &s[c.len_utf8()..];
    }
    for entry in rest.split([delim, '\n']) {
        let entry = entry.trim_start_matches(is_arg_space);
        if !entry.is_empty() && !set_env(env, entry) {
            return false;
        }
    }
    true
}

fn merge_v2(env: &mut Env, s: &str) -> bool {
    match split_v2(s) {
        Some(items) => items.iter().all(|e| set_env(env, e)),
        None => false,
    }
}

fn env_v2(env: &Env) -> String {
    let items: Vec<String> = env
        .iter()
        .map(|(k, v)| match v {
            Some(v) => format!("{k}={v}"),
            None => k.clone(),
        })
        .collect();
    join_v2(items.iter().map(String::as_str))
}

/// `envV1ToV2(s)`: a V1 environment string in V2 syntax, names sorted.
/// Undefined stays undefined.
pub fn env_v1_to_v2(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    let [a] = args else {
        return Value::Error;
    };
    match ev.eval(a, scope) {
        Value::Undefined => Value::Undefined,
        Value::Str(s) => {
            let mut env = Env::new();
            if merge_v1(&mut env, &s) {
                Value::string(env_v2(&env))
            } else {
                Value::Error
            }
        }
        _ => Value::Error,
    }
}

/// `mergeEnvironment(e1, ...)`: V2 environments merged left to right (the
/// last value of a name wins), undefined arguments skipped.
pub fn merge_environment(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    let mut env = Env::new();
    for a in args {
        match ev.eval(a, scope) {
            Value::Undefined => {}
            Value::Str(s) => {
                if !merge_v2(&mut env, &s) {
                    return Value::Error;
                }
            }
            _ => return Value::Error,
        }
    }
    Value::string(env_v2(&env))
}

/// The optional syntax version argument of the argument functions: 1 or 2.
fn version(v: Option<&Value>) -> Option<u8> {
    match v {
        None => Some(2),
        Some(Value::Int(1)) => Some(1),
        Some(Value::Int(2)) => Some(2),
        _ => None,
    }
}

/// `argsToList(s[, version])`: an argument string (V2 by default) as a
/// list of strings.
pub fn args_to_list(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    if !(1..=2).contains(&args.len()) {
        return Value::Error;
    }
    let v = eval_args(ev, args, scope);
    let Some(ver) = version(v.get(1)) else {
        return Value::Error;
    };
    let Value::Str(s) = &v[0] else {
        return Value::Error;
    };
    let items = if ver == 1 {
        s.split(is_arg_space)
            .filter(|a| !a.is_empty())
            .map(str::to_string)
            .collect()
    } else {
        match split_v2(s) {
            Some(items) => items,
            None => return Value::Error,
        }
    };
    Value::list(items.into_iter().map(Value::string).collect())
}

/// `listToArgs(list[, version])`: a list of strings as an argument string
/// (V2 by default). V1 cannot hold white space inside an argument.
pub fn list_to_args(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    if !(1..=2).contains(&args.len()) {
        return Value::Error;
    }
    let ver = match args.get(1) {
        None => Some(2),
        Some(a) => version(Some(&ev.eval(a, scope))),
    };
    let Some(ver) = ver else {
        return Value::Error;
    };
    let Value::List(list) = ev.eval(&args[0], scope) else {
        return Value::Error;
    };
    let mut items = Vec::new();
    for v in ev.list_values(&list, scope) {
        match v {
            Value::Str(s) => items.push(s),
            _ => return Value::Error,
        }
    }
    if ver == 2 {
        return Value::string(join_v2(items.iter().map(|s| &**s)));
    }
    let mut out = String::new();
    for s in &items {
        if s.contains(is_arg_space) {
            return Value::Error;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(s);
    }
    Value::string(out)
}

/// The expression and ad list of `countMatches` / `evalInEachContext`. An
/// attribute reference that resolves is replaced by the expression it
/// names, so `evalInEachContext(RequireGPUs, AvailableGPUs)` evaluates the
/// job's expression in each GPU ad. `Err` carries the result for an
/// undefined or non-list second argument.
fn contexts(
    ev: &mut Evaluator,
    args: &[Expr],
    scope: &Scope,
    undefined: Value,
) -> Result<(Expr, Vec<Value>), Value> {
    let [expr, list] = args else {
        return Err(Value::Error);
    };
    let expr = match expr {
        Expr::Attr(a) => match deref(ev, a, scope) {
            Some(t) => target_expr(&t),
            None => expr.clone(),
        },
        e => e.clone(),
    };
    let items = match list {
        Expr::List(items) => items.iter().map(|e| ev.eval(e, scope)).collect(),
        e => match ev.eval(e, scope) {
            Value::List(l) => ev.list_values(&l, scope),
            Value::Undefined => return Err(undefined),
            _ => return Err(Value::Error),
        },
    };
    Ok((expr, items))
}

/// `expr` evaluated inside the ad `item` (whose enclosing ads stay
/// visible); undefined for an undefined item, error for a non-ad.
fn in_context(ev: &mut Evaluator, expr: &Expr, item: Value) -> Value {
    match item {
        Value::Ad(frame) => ev.eval(expr, &frame),
        Value::Undefined => Value::Undefined,
        _ => Value::Error,
    }
}

/// `evalInEachContext(expr, ads)`: the list of `expr`'s values inside each
/// ad. An undefined list gives undefined.
pub fn eval_in_each_context(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    match contexts(ev, args, scope, Value::Undefined) {
        Ok((expr, items)) => {
            let out = items
                .into_iter()
                .map(|item| in_context(ev, &expr, item))
                .collect();
            Value::list(out)
        }
        Err(v) => v,
    }
}

/// `countMatches(expr, ads)`: how many ads make `expr` true (or a non-zero
/// number). Undefined and error results simply do not count, and an
/// undefined list counts 0, so the function is safe in Requirements.
pub fn count_matches(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    match contexts(ev, args, scope, Value::Int(0)) {
        Ok((expr, items)) => {
            let mut n = 0;
            for item in items {
                if truth(&in_context(ev, &expr, item)) == Truth::True {
                    n += 1;
                }
            }
            Value::Int(n)
        }
        Err(v) => v,
    }
}

/// `userHome(user[, default])`: the user's home directory from the
/// password database. A non-empty string default answers whenever the
/// lookup cannot (unknown user, non-string name); otherwise an unknown
/// user or an undefined name gives undefined and a non-string name error.
pub fn user_home(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    if !(1..=2).contains(&args.len()) {
        return Value::Error;
    }
    let v = eval_args(ev, args, scope);
    let default = match v.get(1) {
        Some(Value::Str(d)) if !d.is_empty() => Some(d.clone()),
        _ => None,
    };
    let fallback = |missing: Value| match &default {
        Some(d) => Value::Str(d.clone()),
        None => missing,
    };
    match &v[0] {
        Value::Str(user) => crate::sys::host::home_dir(user)
            .map_or_else(|| fallback(Value::Undefined), Value::string),
        Value::Undefined => fallback(Value::Undefined),
        _ => fallback(Value::Error),
    }
}

/// `userMap(map, name[, preferred[, default]])`. tern has no map files
/// configured yet, so every lookup takes HTCondor's "no mapping" path: the
/// default when given, else undefined (error when the map or name is
/// error).
pub fn user_map(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    if !(2..=4).contains(&args.len()) {
        return Value::Error;
    }
    let v = eval_args(ev, args, scope);
    if v[0].is_error() || v[1].is_error() {
        return Value::Error;
    }
    match v.get(3) {
        Some(d) => d.clone(),
        None => Value::Undefined,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{check, check_in};

    #[test]
    fn environments() {
        check(&[
            ("envV1ToV2(\"A=1;B=two words\")", "\"A=1 B=two' 'words\""),
            ("envV1ToV2(\"\")", "\"\""),
            ("envV1ToV2(undefined)", "undefined"),
            ("envV1ToV2(error)", "error"),
            ("envV1ToV2(1)", "error"),
            ("envV1ToV2(\"A=1;;B=2\")", "\"A=1 B=2\""),
            ("envV1ToV2(\"A\")", "error"),
            ("envV1ToV2(\"=1\")", "error"),
            ("envV1ToV2(\"A=\")", "\"A=\""),
            ("envV1ToV2(\"A=x'y\")", "\"A=x''''y\""),
            ("envV1ToV2(\"A=x\\\"y\")", "\"A=x\\\"y\""),
            ("envV1ToV2(\"A=1;A=2\")", "\"A=2\""),
            ("envV1ToV2(\"B=1;A=2\")", "\"A=2 B=1\""),
            ("envV1ToV2(\"|A=1|B=2\")", "\"A=1 B=2\""),
            ("envV1ToV2(\"A=1|B=2\")", "\"A=1|B=2\""),
            ("envV1ToV2(\"A=a b;B= c \")", "\"A=a' 'b B=' 'c' '\""),
            ("envV1ToV2(\" A=1\")", "\"A=1\""),
            ("envV1ToV2(\"A B=1\")", "\"A' 'B=1\""),
            ("envV1ToV2(\"A=1\\nB=2\")", "\"A=1 B=2\""),
            ("envV1ToV2(\"$$(FOO)\")", "error"),
            ("envV1ToV2(\"$$(FOO);A=1\")", "\"(FOO);A=1\""),
            ("envV1ToV2(\"A=1;\")", "\"A=1\""),
            ("envV1ToV2(\";A=1\")", "\"A=1\""),
            ("envV1ToV2(\"!A=1!B=2\")", "\"A=1 B=2\""),
            ("envV1ToV2(\"A=1\\r;B=2\")", "\"A=1'\\r' B=2\""),
            ("envV1ToV2(\"  \")", "\"\""),
            ("envV1ToV2(\"A=1\", 2)", "error"),
            ("envV1ToV2()", "error"),
            ("mergeEnvironment(\"A=1 B=2\", \"B=3\")", "\"A=1 B=3\""),
            ("mergeEnvironment()", "\"\""),
            ("mergeEnvironment(undefined)", "\"\""),
            (
                "mergeEnvironment(\"A=1\", undefined, \"C=3\")",
                "\"A=1 C=3\"",
            ),
            ("mergeEnvironment(\"A='x y'\")", "\"A=x' 'y\""),
            ("mergeEnvironment(\"A='x''y'\")", "\"A=x''''y\""),
            ("mergeEnvironment(\"A=\\\"x\\\"\")", "\"A=\\\"x\\\"\""),
            ("mergeEnvironment(\"A\")", "error"),
            ("mergeEnvironment(\"=1\")", "error"),
            ("mergeEnvironment(\"A='x\")", "error"),
            ("mergeEnvironment(1)", "error"),
            ("mergeEnvironment(\"A=1\", error)", "error"),
            ("mergeEnvironment(\"B=2 A=1\")", "\"A=1 B=2\""),
            ("mergeEnvironment(\"A=1  B=2\")", "\"A=1 B=2\""),
            ("mergeEnvironment(\"A=1;B=2\")", "\"A=1;B=2\""),
            ("mergeEnvironment(\" A=1 \")", "\"A=1\""),
            ("mergeEnvironment(\"A=x\\ty\")", "error"),
            ("mergeEnvironment(\"A=x'y'z\")", "\"A=xyz\""),
            ("mergeEnvironment(\"a=1 B=2\")", "\"B=2 a=1\""),
            (
                "mergeEnvironment(\"_=1 A=2 a=3 1=4\")",
                "\"1=4 A=2 _=1 a=3\"",
            ),
            ("mergeEnvironment(\"$$(FOO)\")", "\"$$(FOO)\""),
            ("mergeEnvironment(\"A=b=c\")", "\"A=b=c\""),
            ("mergeEnvironment(\"A=1\", \"A=\")", "\"A=\""),
            ("mergeEnvironment(\"A=1 'B=2 3'\")", "\"A=1 B=2' '3\""),
        ]);
    }

    #[test]
    fn arguments() {
        check(&[
            (
                "argsToList(\"-n 5 'two words'\")",
                "{ \"-n\",\"5\",\"two words\" }",
            ),
            ("argsToList(\"\")", "{  }"),
            ("argsToList(\"a  b\")", "{ \"a\",\"b\" }"),
            ("argsToList(\"'a''b'\")", "{ \"a'b\" }"),
            ("argsToList(\"'a\")", "error"),
            ("argsToList(\"a'b c'd\")", "{ \"ab cd\" }"),
            ("argsToList(\"\\\"a b\\\"\")", "{ \"\\\"a\",\"b\\\"\" }"),
            ("argsToList(undefined)", "error"),
            ("argsToList(1)", "error"),
            ("argsToList(\"a b\", 1)", "{ \"a\",\"b\" }"),
            ("argsToList(\"a 'b c'\", 1)", "{ \"a\",\"'b\",\"c'\" }"),
            ("argsToList(\"a b\", 3)", "error"),
            ("argsToList(\"a b\", 2)", "{ \"a\",\"b\" }"),
            ("argsToList(\"a b\", undefined)", "error"),
            ("argsToList(\"a\\tb\\nc\")", "{ \"a\",\"b\",\"c\" }"),
            ("argsToList(\"''\")", "{ \"\" }"),
            ("argsToList(\"a '' b\")", "{ \"a\",\"\",\"b\" }"),
            ("argsToList(\"a\\rb\\vc\\fd\")", "{ \"a\",\"b\\vc\\fd\" }"),
            ("argsToList(\"a' 'b\")", "{ \"a b\" }"),
            ("argsToList(\"'a'''\")", "{ \"a'\" }"),
            ("argsToList(\"a'\")", "error"),
            ("argsToList(\"  \", 1)", "{  }"),
            ("argsToList()", "error"),
            ("listToArgs({\"-x\",\"a b\"})", "\"-x a' 'b\""),
            ("listToArgs({})", "\"\""),
            ("listToArgs({\"a'b\"})", "\"a''''b\""),
            ("listToArgs({\"\"})", "\"''\""),
            ("listToArgs({\"a\", 1})", "error"),
            ("listToArgs(undefined)", "error"),
            ("listToArgs(\"a\")", "error"),
            ("listToArgs({\"a b\"}, 1)", "error"),
            ("listToArgs({\"a\",\"b\"}, 1)", "\"a b\""),
            ("listToArgs({\"a\\tb\"})", "\"a'\\t'b\""),
            ("listToArgs({\"a\\\"b\"})", "\"a\\\"b\""),
            ("listToArgs({\"a\",\"\",\"\"})", "\"a '' ''\""),
            ("listToArgs({undefined})", "error"),
            ("listToArgs({\"a  b\"})", "\"a'  'b\""),
            ("listToArgs({\"''\"})", "\"''''''\""),
            ("listToArgs({\"a\\vb\"})", "\"a\\vb\""),
            ("listToArgs({\"\", \"a\"}, 1)", "\"a\""),
            ("listToArgs({\"a\", \"\"}, 1)", "\"a \""),
            ("listToArgs({\"a\", \"\", \"b\"}, 1)", "\"a  b\""),
            ("listToArgs({\"a\\rb\"}, 1)", "error"),
            ("listToArgs({\"a\"}, 3)", "error"),
        ]);
    }

    #[test]
    fn contexts() {
        check(&[
            ("evalInEachContext(p * 2, {[p = 1], [p = 5]})", "{ 2,10 }"),
            ("countMatches(p > 2, {[p = 1], [p = 5], [q = 9]})", "1"),
            ("countMatches(p > 2, undefined)", "0"),
            ("evalInEachContext(p > 2, undefined)", "undefined"),
            ("countMatches(p > 2, 5)", "error"),
            ("evalInEachContext(p > 2, 5)", "error"),
            ("countMatches(p > 2, {1, [p=5]})", "1"),
            (
                "evalInEachContext(p, {1, [p=5], undefined, error})",
                "{ error,5,undefined,error }",
            ),
            ("evalInEachContext(p, {})", "{  }"),
            ("countMatches(p, {[p=1], [p=2.5], [p=\"x\"], [p=0]})", "2"),
            ("evalInEachContext(p)", "error"),
            ("countMatches(p, {[p=1]}, 1)", "error"),
            ("evalInEachContext({p, p}, {[p=1]})", "{ { p,p } }"),
            ("evalInEachContext([a=p], {[p=1]})", "{ [ a = p ] }"),
            ("evalInEachContext(q, {[p=1]})", "{ undefined }"),
        ]);
        check_in(
            "[q = 7; L = {[p=1], [p=2]}; E = p * 10; X = {[p=3]}]",
            &[
                ("evalInEachContext(q, L)", "{ 7,7 }"),
                ("evalInEachContext(p + q, L)", "{ 8,9 }"),
                ("evalInEachContext(E, L)", "{ 10,20 }"),
                ("countMatches(p > 1, L)", "1"),
                ("evalInEachContext(MY.q, L)", "{ 7,7 }"),
                ("evalInEachContext(parent.q, L)", "{ 7,7 }"),
                ("evalInEachContext(p, X)", "{ 3 }"),
                ("evalInEachContext(E, {[p=4], [E=3]})", "{ 40,undefined }"),
                ("evalInEachContext(nosuch, L)", "{ undefined,undefined }"),
                ("countMatches(self, L)", "0"),
            ],
        );
    }

    #[test]
    fn users() {
        check(&[
            ("userHome(\"root\")", "\"/root\""),
            ("userHome(\"root\", \"/d\")", "\"/root\""),
            ("userHome(undefined)", "undefined"),
            ("userHome(undefined, \"/d\")", "\"/d\""),
            ("userHome(1)", "error"),
            ("userHome(1, \"/d\")", "\"/d\""),
            ("userHome(\"root\", 1)", "\"/root\""),
            ("userHome(\"root\", \"\")", "\"/root\""),
            ("userHome(\"no such user here\")", "undefined"),
            ("userHome(\"no such user here\", \"/d\")", "\"/d\""),
            ("userHome()", "error"),
            ("userHome(error, \"/d\")", "\"/d\""),
            ("userMap(\"m\", \"u\")", "undefined"),
            ("userMap(\"m\", \"u\", \"p\")", "undefined"),
            ("userMap(\"m\", \"u\", \"p\", \"dflt\")", "\"dflt\""),
            ("userMap(\"m\", undefined, \"p\", \"dflt\")", "\"dflt\""),
            ("userMap(\"m\", error, \"p\", \"dflt\")", "error"),
            ("userMap(\"m\")", "error"),
            ("userMap(1, \"u\", \"p\", \"d\")", "\"d\""),
            ("userMap(\"m\", \"u\", \"p\", \"d\", \"e\")", "error"),
            ("userMap(\"m\", 1)", "undefined"),
            ("userMap(error, \"u\")", "error"),
        ]);
    }
}
