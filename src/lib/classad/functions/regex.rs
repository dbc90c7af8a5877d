//! Regular expressions: `regexp`, `regexps`, `replace`, `replaceall`,
//! `regexpMember` and `stringList_regexpMember`.
//!
//! HTCondor uses PCRE2; tern uses `fancy-regex`, which has the Perl
//! features people use in policies (backreferences, lookaround, atomic
//! groups) and `\Q...\E` is translated. Known differences: `.`, `\w`, `\d`
//! and `\s` are Unicode-aware here (PCRE2 without UTF mode sees bytes and
//! ASCII classes), and a few PCRE-only constructs (callouts, `\Z` before a
//! final newline) are not supported and make the pattern invalid (error).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use fancy_regex::Regex;

use super::eval_args;
use super::stringlist::tokens;
use crate::classad::ast::Expr;
use crate::classad::eval::{Evaluator, Scope};
use crate::classad::value::Value;

/// How many compiled patterns each thread keeps.
const CACHE_SIZE: usize = 64;
/// Backtracking steps one match may take before it is abandoned as an
/// error.
const BACKTRACK_LIMIT: usize = 1_000_000;

/// Compiled patterns by (pattern, flags); `None` remembers an invalid one.
type Cache = HashMap<(String, String), Option<Rc<Regex>>>;

thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(HashMap::new());
}

/// Compiles `pattern` with the flags in `opts` (`i m s x`, any others
/// ignored); `None` for an invalid pattern.
pub(super) fn compile(pattern: &str, opts: &str) -> Option<Rc<Regex>> {
    let mut flags = String::new();
    for f in ['i', 'm', 's', 'x'] {
        if opts.contains(f) {
            flags.push(f);
        }
    }
    let key = (pattern.to_string(), flags.clone());
    if let Some(hit) = CACHE.with(|c| c.borrow().get(&key).cloned()) {
        return hit;
    }
    let mut text = String::new();
    if !flags.is_empty() {
        text.push_str("(?");
        text.push_str(&flags);
        text.push(')');
    }
    text.push_str(&translate(pattern));
    let re = fancy_regex::RegexBuilder::new(&text)
        .backtrack_limit(BACKTRACK_LIMIT)
        .build()
        .ok()
        .map(Rc::new);
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= CACHE_SIZE {
            c.clear();
        }
        c.insert(key, re.clone());
    });
    re
}

const WORD: &str = "0-9A-Za-z_";
const SPACE: &str = "\\t\\n\\x0B\\x0C\\r ";

/// Rewrites PCRE syntax that means something else (or nothing) to
/// `fancy-regex`: `\Q...\E` quoting; octal escapes (`\0`, `\012`, and
/// `\101` when there are not that many groups); and the ASCII-only
/// meaning PCRE gives `\d \w \s \b` and their negations without UTF mode.
fn translate(pattern: &str) -> String {
    let groups = count_groups(pattern);
    let c: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut i = 0;
    let mut in_class = false;
    while i < c.len() {
        let ch = c[i];
        if ch == '\\' {
            let Some(&d) = c.get(i + 1) else {
                out.push('\\');
                break;
            };
            i += 2;
            match d {
                'Q' => {
                    let mut lit = String::new();
                    while i < c.len() && !(c[i] == '\\' && c.get(i + 1) == Some(&'E')) {
                        lit.push(c[i]);
                        i += 1;
                    }
                    i += 2;
                    out.push_str(&fancy_regex::escape(&lit));
                }
                'E' => {}
                'd' | 'D' | 'w' | 'W' | 's' | 'S' => {
                    let set = match d.to_ascii_lowercase() {
                        'd' => "0-9",
                        'w' => WORD,
                        _ => SPACE,
                    };
                    let neg = d.is_ascii_uppercase();
                    match (in_class, neg) {
                        (true, false) => out.push_str(set),
                        _ => {
                            out.push_str(if neg { "[^" } else { "[" });
                            out.push_str(set);
                            out.push(']');
                        }
                    }
                }
                'b' if in_class => out.push_str("\\x08"),
                'b' | 'B' => {
                    let w = format!("[{WORD}]");
                    out.push_str(&if d == 'b' {
                        format!("(?:(?<={w})(?!{w})|(?<!{w})(?={w}))")
                    } else {
                        format!("(?:(?<={w})(?={w})|(?<!{w})(?!{w}))")
                    });
                }
                '0'..='9' => {
                    let mut j = i - 1;
                    while j < c.len() && c[j].is_ascii_digit() {
                        j += 1;
                    }
                    let digits: String = c[i - 1..j].iter().collect();
                    let n: usize = digits.parse().unwrap_or(usize::MAX);
                    if d != '0' && !in_class && (n < 10 || n <= groups) {
                        out.push('\\');
                        out.push_str(&digits);
                        i = j;
                    } else {
                        // Octal: up to three digits in all.
                        let oct: String = digits
                            .chars()
                            .take(3)
                            .take_while(|x| x.is_digit(8))
                            .collect();
                        if oct.is_empty() {
                            // \8 and \9 without such a group: the digit.
                            out.push(d);
                        } else {
                            let v = u32::from_str_radix(&oct, 8).unwrap_or(0) & 0xff;
                            out.push_str(&format!("\\x{{{v:x}}}"));
                            i = i - 1 + oct.len();
                        }
                    }
                }
                _ => {
                    out.push('\\');
                    out.push(d);
                }
            }
            continue;
        }
        if in_class {
            if ch == '[' && c.get(i + 1) == Some(&':') {
                // A POSIX class such as [:alpha:], copied whole.
                let mut j = i + 2;
                while j + 1 < c.len() && !(c[j] == ':' && c[j + 1] == ']') {
                    j += 1;
                }
                let end = (j + 2).min(c.len());
                out.extend(&c[i..end]);
                i = end;
                continue;
            }
            if ch == ']' {
                in_class = false;
            }
            // Inside a PCRE class '[' is literal, and '&&'/'~~' are not set
            // operations as they are in Rust's syntax.
            if matches!(ch, '[' | '&' | '~') {
                out.push('\\');
            }
            out.push(ch);
            i += 1;
            continue;
        }
        // A '{' that starts no {n}, {n,} or {n,m} quantifier is a literal
        // in PCRE ('a{,2}' matches the text "a{,2}").
        if ch == '{' && !is_quantifier(&c[i + 1..]) {
            out.push_str("\\{");
            i += 1;
            continue;
        }
        out.push(ch);
        i += 1;
        if ch == '[' {
            in_class = true;
            if c.get(i) == Some(&'^') {
                out.push('^');
                i += 1;
            }
            // A ']' first in a class is a literal.
            if c.get(i) == Some(&']') {
                out.push_str("\\]");
                i += 1;
            }
        }
    }
    out
}

/// Whether the text after a '{' completes a PCRE quantifier.
fn is_quantifier(rest: &[char]) -> bool {
    let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return false;
    }
    match rest.get(digits) {
        Some('}') => true,
        Some(',') => {
            let more = rest[digits + 1..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            rest.get(digits + 1 + more) == Some(&'}')
        }
        _ => false,
    }
}

/// How many capturing groups a pattern has (for telling `\10` the
/// back-reference from `\10` the octal escape).
fn count_groups(pattern: &str) -> usize {
    let b = pattern.as_bytes();
    let mut n = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'(' => {
                let rest = &b[i + 1..];
                let named = rest.starts_with(b"?<")
                    && !rest.starts_with(b"?<=")
                    && !rest.starts_with(b"?<!")
                    || rest.starts_with(b"?P<")
                    || rest.starts_with(b"?'");
                if !rest.starts_with(b"?") || named {
                    n += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    n
}

/// Whether `re` matches somewhere in `s`; `None` when matching failed (the
/// backtracking limit).
fn is_match(re: &Regex, s: &str) -> Option<bool> {
    re.is_match(s).ok()
}

/// Whether `re` has a non-empty match in `s` (PCRE2's `NOTEMPTY`).
pub(super) fn matches_non_empty(re: &Regex, s: &str) -> bool {
    re.find_iter(s)
        .any(|m| m.is_ok_and(|m| m.end() > m.start()))
}

/// The common argument rules of `regexp` and friends: error beats
/// undefined, and the options, when given, must be a string.
fn check_args(v: &[Value], n_required: usize) -> Result<String, Value> {
    if v.iter().any(Value::is_error) {
        return Err(Value::Error);
    }
    if v.iter().any(Value::is_undefined) {
        return Err(Value::Undefined);
    }
    match v.get(n_required) {
        None => Ok(String::new()),
        Some(Value::Str(o)) => Ok(o.to_string()),
        Some(_) => Err(Value::Error),
    }
}

/// `regexp(re, s[, opts])`: whether `re` matches anywhere in `s`.
pub fn regexp(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    if !(2..=3).contains(&args.len()) {
        return Value::Error;
    }
    let v = eval_args(ev, args, scope);
    let opts = match check_args(&v, 2) {
        Ok(o) => o,
        Err(e) => return e,
    };
    let (Value::Str(p), Value::Str(s)) = (&v[0], &v[1]) else {
        return Value::Error;
    };
    match compile(p, &opts).and_then(|re| is_match(&re, s)) {
        Some(b) => Value::Bool(b),
        None => Value::Error,
    }
}

fn subst(ev: &mut Evaluator, args: &[Expr], scope: &Scope, extra: &str) -> Value {
    if !(3..=4).contains(&args.len()) {
        return Value::Error;
    }
    let v = eval_args(ev, args, scope);
    let mut opts = match check_args(&v, 3) {
        Ok(o) => o,
        Err(e) => return e,
    };
    opts.push_str(extra);
    let (Value::Str(p), Value::Str(s), Value::Str(r)) = (&v[0], &v[1], &v[2]) else {
        return Value::Error;
    };
    let Some(re) = compile(p, &opts) else {
        return Value::Error;
    };
    substitute(&re, s, r, opts.contains('f'), opts.contains('g'))
}

/// HTCondor's substitution loop. Without `full`, the result is just the
/// expanded replacement(s); with it, the whole target with the match(es)
/// replaced. With `all`, matching resumes after each match; after an empty
/// match a non-empty match at the same place is tried, else one character
/// is copied, and an empty match at the very end is an error, as in
/// HTCondor. `\0`..`\9` in the replacement name groups: a group beyond the
/// last one that took part is an error, an unset one before it is empty.
fn substitute(re: &Regex, target: &str, replacement: &str, full: bool, all: bool) -> Value {
    let mut out = String::new();
    let mut idx = 0;
    let mut after_empty = false;
    loop {
        let caps = match re.captures_from_pos(target, idx) {
            Ok(c) => c,
            Err(_) => return Value::Error,
        };
        let caps = if after_empty {
            caps.filter(|c| c.get(0).is_some_and(|m| m.start() == idx && m.end() > idx))
        } else {
            caps
        };
        let Some(caps) = caps else {
            if !after_empty {
                break;
            }
            // PCRE copies one byte and searches on; past the end that
            // search fails with a bad-offset error.
            let Some(ch) = target[idx..].chars().next() else {
                return Value::Error;
            };
            out.push(ch);
            idx += ch.len_utf8();
            after_empty = false;
            continue;
        };
        let Some(m) = caps.get(0) else {
            break;
        };
        let (start, end) = (m.start(), m.end());
        let ngroups = (0..caps.len())
            .rev()
            .find(|&i| caps.get(i).is_some())
            .map_or(1, |i| i + 1);
        if full {
            out.push_str(&target[idx..start]);
        }
        let mut rs = replacement.chars().peekable();
        while let Some(c) = rs.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match rs.peek().and_then(|d| d.to_digit(10)) {
                Some(n) => {
                    rs.next();
                    let n = n as usize;
                    if n >= ngroups {
                        return Value::Error;
                    }
                    if let Some(g) = caps.get(n) {
                        out.push_str(g.as_str());
                    }
                }
                None => out.push('\\'),
            }
        }
        idx = end;
        after_empty = start == end;
        if !all {
            break;
        }
    }
    if full {
        out.push_str(&target[idx..]);
    }
    Value::string(out)
}

/// `regexps(re, s, repl[, opts])`: the replacement with `\N` expanded for
/// the first match, or `""` without one. Option `f` returns the whole
/// target with the match replaced, `g` replaces every match.
pub fn regexps(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    subst(ev, args, scope, "")
}

/// `replace(re, s, repl[, opts])`: `s` with the first match replaced.
pub fn replace(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    subst(ev, args, scope, "f")
}

/// `replaceall(re, s, repl[, opts])`: `s` with every match replaced.
pub fn replace_all(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    subst(ev, args, scope, "fg")
}

/// `regexpMember(re, list[, opts])`: whether some string element matches.
/// A non-string element before a match is an error; an undefined one
/// makes a miss undefined. An invalid pattern matches nothing.
pub fn regexp_member(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    if !(2..=3).contains(&args.len()) {
        return Value::Error;
    }
    let v = eval_args(ev, args, scope);
    let opts = match check_args(&v, 2) {
        Ok(o) => o,
        Err(e) => return e,
    };
    let (Value::Str(p), Value::List(list)) = (&v[0], &v[1]) else {
        return Value::Error;
    };
    let re = compile(p, &opts);
    let mut undefined = false;
    for i in 0..list.items.len() {
        match ev.list_item(list, i, scope) {
            Value::Str(s) => {
                if re.as_ref().and_then(|re| is_match(re, &s)) == Some(true) {
                    return Value::Bool(true);
                }
            }
            Value::Undefined => undefined = true,
            _ => return Value::Error,
        }
    }
    if undefined {
        Value::Undefined
    } else {
        Value::Bool(false)
    }
}

/// `stringList_regexpMember(re, s[, delims[, opts]])`: whether some item
/// of the string list matches (default delimiters `", "`; options in
/// either case). All arguments must be strings; an empty list gives
/// undefined.
pub fn string_list_regexp_member(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    if !(2..=4).contains(&args.len()) {
        return Value::Error;
    }
    let v = eval_args(ev, args, scope);
    let strs: Option<Vec<&str>> = v
        .iter()
        .map(|x| match x {
            Value::Str(s) => Some(&**s),
            _ => None,
        })
        .collect();
    let Some(strs) = strs else {
        return Value::Error;
    };
    let delims = strs.get(2).copied().unwrap_or(", ");
    let opts = strs.get(3).copied().unwrap_or("").to_ascii_lowercase();
    let Some(re) = compile(strs[0], &opts) else {
        return Value::Error;
    };
    let items = tokens(strs[1], delims);
    if items.is_empty() {
        return Value::Undefined;
    }
    Value::Bool(items.iter().any(|t| is_match(&re, t) == Some(true)))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::check;

    #[test]
    fn regexp() {
        check(&[
            ("regexp(\"HOST\", \"myhost\", \"i\")", "true"),
            ("regexp(\"HOST\", \"myhost\")", "false"),
            ("regexp(\"[\", \"x\")", "error"),
            ("regexp(\"a\", undefined)", "undefined"),
            ("regexp(undefined, \"a\")", "undefined"),
            ("regexp(\"a\", error)", "error"),
            ("regexp(undefined, error)", "error"),
            ("regexp(\"a\", \"a\", undefined)", "undefined"),
            ("regexp(\"a\", \"a\", 1)", "error"),
            ("regexp(\"a\", 1)", "error"),
            ("regexp(1, \"1\")", "error"),
            ("regexp(\"^a.c$\", \"a\\nc\")", "false"),
            ("regexp(\"^a.c$\", \"a\\nc\", \"s\")", "true"),
            ("regexp(\"^c$\", \"a\\nc\")", "false"),
            ("regexp(\"^c$\", \"a\\nc\", \"m\")", "true"),
            ("regexp(\"a b\", \"ab\", \"x\")", "true"),
            ("regexp(\"(a)\\\\1\", \"aa\")", "true"),
            ("regexp(\"a\", \"A\", \"I\")", "false"),
            ("regexp(\"a\", \"A\", \"zzi\")", "true"),
            ("regexp(\"\", \"\")", "true"),
            ("regexp(\"\\\\d+\", \"x12\")", "true"),
            ("regexp(\"(?i)A\", \"a\")", "true"),
            ("regexp(\"a++\", \"aaa\")", "true"),
            ("regexp(\"(?<=a)b\", \"ab\")", "true"),
            ("regexp(\"\\\\Qa.b\\\\E\", \"a.b\")", "true"),
            ("regexp(\"\\\\Qa.b\\\\E\", \"axb\")", "false"),
            ("regexp(\"[[:alpha:]]\", \"1a\")", "true"),
            ("regexp(\"\\303\\251\", \"caf\\303\\251\")", "true"),
            ("regexp(\"a\")", "error"),
        ]);
    }

    #[test]
    fn substitutions() {
        check(&[
            (
                "regexps(\"(\\\\w+)@(\\\\w+)\", \"bob@site\", \"\\\\2/\\\\1\")",
                "\"site/bob\"",
            ),
            ("regexps(\"x\", \"abc\", \"y\")", "\"\""),
            ("regexps(\"b\", \"abc\", \"y\")", "\"y\""),
            ("regexps(\"b\", \"abc\", \"y\", \"f\")", "\"ayc\""),
            ("regexps(\"b\", \"abcb\", \"y\", \"g\")", "\"yy\""),
            ("regexps(\"b\", \"abcb\", \"y\", \"fg\")", "\"aycy\""),
            ("regexps(\"(b)\", \"abc\", \"\\\\2\")", "error"),
            ("regexps(\"(b)\", \"abc\", \"\\\\0\\\\0\")", "\"bb\""),
            ("regexps(\"(b)\", \"abc\", \"\\\\x\")", "\"\\\\x\""),
            ("regexps(\"(b)\", \"abc\", \"\\\\\")", "\"\\\\\""),
            ("regexps(\"(b)(x)?\", \"abc\", \"[\\\\2]\")", "error"),
            ("regexps(\"(x)?(b)\", \"abc\", \"[\\\\1]\")", "\"[]\""),
            ("regexps(\"b\", \"abc\", undefined)", "undefined"),
            ("regexps(\"b\", \"abc\", 1)", "error"),
            ("regexps(\"b\", \"abc\")", "error"),
            ("regexps(\"[\", \"abc\", \"x\")", "error"),
            ("replace(\"b\", \"abcb\", \"X\")", "\"aXcb\""),
            ("replaceall(\"a\", \"banana\", \"o\")", "\"bonono\""),
            ("replaceall(\"\", \"abc\", \"-\")", "error"),
            ("replaceall(\"x*\", \"abc\", \"-\")", "error"),
            ("replaceall(\"b*\", \"abbc\", \"-\")", "error"),
            ("replace(\"\", \"abc\", \"-\")", "\"-abc\""),
            ("replaceall(\"a\", \"banana\", \"o\", \"i\")", "\"bonono\""),
            ("replaceall(\"A\", \"banana\", \"o\", \"i\")", "\"bonono\""),
            ("replace(\"b\", \"abc\", \"X\", undefined)", "undefined"),
            (
                "replaceall(\"\\303\\251\", \"caf\\303\\251 \\303\\251\", \"e\")",
                "\"cafe e\"",
            ),
            ("replaceall(\"\", \"\\303\\251\", \"-\")", "error"),
            ("replaceall(\"(?=b)\", \"abab\", \"-\")", "\"a-ba-b\""),
        ]);
    }

    #[test]
    fn members() {
        check(&[
            ("regexpMember(\"^b\", {\"a\",\"b\"})", "true"),
            ("regexpMember(\"^b\", {\"a\",\"c\"})", "false"),
            ("regexpMember(\"^b\", {\"a\",undefined})", "undefined"),
            ("regexpMember(\"^b\", {undefined, \"b\"})", "true"),
            ("regexpMember(\"^b\", {1, \"b\"})", "error"),
            ("regexpMember(\"^b\", {\"b\", 1})", "true"),
            ("regexpMember(\"^B\", {\"b\"}, \"i\")", "true"),
            ("regexpMember(\"^b\", {})", "false"),
            ("regexpMember(\"^b\", \"b\")", "error"),
            ("regexpMember(\"[\", {\"b\"})", "false"),
            ("regexpMember(\"[\", {})", "false"),
            ("regexpMember(undefined, {\"b\"})", "undefined"),
            ("regexpMember(\"b\", undefined)", "undefined"),
            ("regexpMember(\"b\", {\"b\"}, undefined)", "undefined"),
            ("regexpMember(\"b\", {error})", "error"),
            (
                "stringList_regexpMember(\"^b$\", \"a; b ;c\", \";\")",
                "true",
            ),
            ("stringList_regexpMember(\"^b\", \"a,b,c\")", "true"),
            (
                "stringList_regexpMember(\"^B\", \"a,b,c\", \",\", \"i\")",
                "true",
            ),
            (
                "stringList_regexpMember(\"^B\", \"a,b,c\", \",\", \"I\")",
                "true",
            ),
            ("stringList_regexpMember(\"x\", \"\")", "undefined"),
            ("stringList_regexpMember(\"x\", \"a\")", "false"),
            ("stringList_regexpMember(\"[\", \"a\")", "error"),
            ("stringList_regexpMember(\"[\", \"\")", "error"),
            ("stringList_regexpMember(undefined, \"a\")", "error"),
            ("stringList_regexpMember(\"a\", undefined)", "error"),
            ("stringList_regexpMember(\"a\", \"a\", undefined)", "error"),
            ("stringList_regexpMember(\"a\", \"a\\tb\")", "true"),
            ("stringList_regexpMember(\"a\")", "error"),
        ]);
    }
}
