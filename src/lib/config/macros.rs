//! Macro expansion shared by the configuration and submit languages.
//!
//! `$(NAME)` and `$(NAME:default)` expand lazily and recursively (a cycle is an
//! error); an undefined name without a default expands to nothing; `$(DOLLAR)`
//! is a literal `$`; `$$(...)` is left for match time. The `$` functions are
//! case-sensitive: `$ENV`, `$INT`, `$REAL`, `$STRING`, `$EVAL`, `$SUBSTR`,
//! `$CHOICE`, `$RANDOM_CHOICE`, `$RANDOM_INTEGER`, `$DIRNAME`, `$BASENAME` and
//! `$F[fpdnxbqauw]`.

use std::rc::Rc;

use crate::classad::{self, Evaluator, Scope, Value};

/// Where macro values come from.
pub trait MacroSource {
    /// The raw (unexpanded) value of `name`, looked up case-insensitively.
    fn raw(&self, name: &str) -> Option<String>;
    /// An environment variable for `$ENV()`; the caller's environment
    /// (a privileged tool's own is not the caller's) unless the source
    /// carries its own.
    fn env(&self, var: &str) -> Option<String> {
        crate::sys::privilege::caller_var(var)
    }
    /// What `$ENV(V)` gives for an unset variable with no default: empty in
    /// configuration, `UNDEFINED` in submit files (as condor_submit does).
    fn env_missing(&self) -> &'static str {
        ""
    }
}

/// An expansion failure; the caller adds the file and line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MacroError(pub String);

fn err<T>(msg: impl Into<String>) -> Result<T, MacroError> {
    Err(MacroError(msg.into()))
}

/// A source of randomness for `$RANDOM_*`, replaceable in tests.
pub type RandFn = dyn FnMut(u64) -> u64;

pub struct Expander<'a> {
    src: &'a dyn MacroSource,
    stack: Vec<String>,
    rand: Box<RandFn>,
}

impl<'a> Expander<'a> {
    pub fn new(src: &'a dyn MacroSource) -> Expander<'a> {
        Expander {
            src,
            stack: Vec::new(),
            rand: Box::new(default_rand()),
        }
    }

    /// Replaces the random source (`f(n)` returns a value in `0..n`).
    pub fn with_rand(mut self, f: impl FnMut(u64) -> u64 + 'static) -> Self {
        self.rand = Box::new(f);
        self
    }

    /// Expands every macro reference in `text`.
    pub fn expand(&mut self, text: &str) -> Result<String, MacroError> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(pos) = rest.find('$') {
            out.push_str(&rest[..pos]);
            let after = &rest[pos..];
            // `$$(...)` stays for match time.
            if let Some(tail) = after.strip_prefix("$$(") {
                match matching_paren(&after[2..]) {
                    Some(close) => {
                        out.push_str(&after[..2 + close + 1]);
                        rest = &after[2 + close + 1..];
                    }
                    None => {
                        out.push_str("$$(");
                        rest = tail;
                    }
                }
                continue;
            }
            let word_len = after[1..]
                .bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                .count();
            let word = &after[1..1 + word_len];
            let paren = &after[1 + word_len..];
            if !paren.starts_with('(') || !(word.is_empty() || is_function(word)) {
                out.push('$');
                rest = &after[1..];
                continue;
            }
            let Some(close) = matching_paren(paren) else {
                return err(format!(
                    "unterminated macro reference '{}'",
                    truncate(after)
                ));
            };
            let inner = &paren[1..close];
            let value = if word.is_empty() {
                self.reference(inner)?
            } else {
                self.function(word, inner)?
            };
            out.push_str(&value);
            rest = &paren[close + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// `$(NAME)` or `$(NAME:default)`.
    fn reference(&mut self, inner: &str) -> Result<String, MacroError> {
        let (name_part, default) = match inner.find(':') {
            Some(c) => (&inner[..c], Some(&inner[c + 1..])),
            None => (inner, None),
        };
        let name = if name_part.contains('$') {
            self.expand(name_part)?
        } else {
            name_part.to_string()
        };
        // condor_config takes only letters, digits, '_', '.' and '/' in a
        // macro's name: any other `$(...)`, `$(+Foo)` or `$( N )` say, is
        // no macro and stays as written (what it holds is still expanded,
        // once).
        if !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/'))
        {
            let default = match default {
                Some(d) => format!(":{}", self.expand(d)?),
                None => String::new(),
            };
            return Ok(format!("$({name}{default})"));
        }
        if name.eq_ignore_ascii_case("DOLLAR") {
            return Ok("$".into());
        }
        match self.src.raw(&name) {
            Some(raw) => self.expand_named(&name, &raw),
            None => match default {
                Some(d) => self.expand(d),
                None => Ok(String::new()),
            },
        }
    }

    /// Expands the value of macro `name`, refusing cycles.
    fn expand_named(&mut self, name: &str, raw: &str) -> Result<String, MacroError> {
        let key = name.to_ascii_lowercase();
        if self.stack.contains(&key) {
            let mut chain = self.stack.clone();
            chain.push(key);
            return err(format!(
                "macro '{name}' refers to itself ({})",
                chain.join(" -> ")
            ));
        }
        self.stack.push(key);
        let r = self.expand(raw);
        self.stack.pop();
        r
    }

    /// The value of a macro named by a function argument, or the argument
    /// text itself when no macro has that name.
    fn arg_value(&mut self, arg: &str) -> Result<String, MacroError> {
        let a = arg.trim();
        if super::reader::is_macro_name(a)
            && let Some(raw) = self.src.raw(a)
        {
            return self.expand_named(a, &raw);
        }
        self.expand(a)
    }

    fn function(&mut self, word: &str, inner: &str) -> Result<String, MacroError> {
        let args = split_args(inner);
        match word {
            "ENV" => {
                let (var, default) = match inner.find(':') {
                    Some(c) => (&inner[..c], Some(&inner[c + 1..])),
                    None => (inner, None),
                };
                let var = self.expand(var.trim())?;
                // A variable set to the empty string counts as unset when a
                // default is given (as XDG_DATA_HOME= must not make SPOOL
                // '/tern').
                match self
                    .src
                    .env(&var)
                    .filter(|v| !(v.is_empty() && default.is_some()))
                {
                    Some(v) => Ok(v),
                    None => match default {
                        Some(d) => self.expand(d),
                        None => Ok(self.src.env_missing().to_string()),
                    },
                }
            }
            "INT" => {
                let (text, v) = self.eval_arg(args.first().copied().unwrap_or(""), "$INT")?;
                let i = match v {
                    Value::Int(i) => i,
                    Value::Real(r) => r as i64,
                    Value::Bool(b) => b as i64,
                    _ => {
                        return err(format!(
                            "$INT() macro: {} does not evaluate to an integer!",
                            text.trim()
                        ));
                    }
                };
                let fmt = args.get(1).map(|s| s.trim()).unwrap_or("%d");
                printf_int(fmt, i)
            }
            "REAL" => {
                let (text, v) = self.eval_arg(args.first().copied().unwrap_or(""), "$REAL")?;
                let r = match v.as_number() {
                    Some(r) => r,
                    None => {
                        return err(format!(
                            "$REAL() macro: {} does not evaluate to a number!",
                            text.trim()
                        ));
                    }
                };
                match args.get(1).map(|s| s.trim()) {
                    // condor_config's "force it to look like a real": a
                    // format of the user's that printed no '.' gets ".0"
                    // ($REAL(N,%g) of 7 is 7.0; the default format's 7
                    // stays 7).
                    Some(fmt) => printf_real(fmt, r).map(|mut t| {
                        if !t.contains('.') {
                            t.push_str(".0");
                        }
                        t
                    }),
                    None => printf_real("%.16G", r),
                }
            }
            "STRING" => {
                // As config.cpp does it: an expression whose value is a
                // string gives that string; any other text is taken as it
                // is (`$STRING(MY.Owner)` of a transform is the owner).
                let text = self.arg_value(args.first().copied().unwrap_or(""))?;
                let v = classad::parse_expr(&text).map(|e| {
                    Evaluator::new().eval(&e, &Scope::root(Rc::new(classad::ClassAd::new())))
                });
                let s = match v {
                    Ok(Value::Str(s)) => s.to_string(),
                    _ => text,
                };
                match args.get(1).map(|s| s.trim()) {
                    Some(fmt) => Ok(fmt.replacen("%s", &s, 1)),
                    None => Ok(s),
                }
            }
            "EVAL" => {
                let (_, v) = self.eval_arg(inner, "$EVAL")?;
                Ok(match v {
                    Value::Str(s) => s.to_string(),
                    other => classad::unparse::value_to_string(&other),
                })
            }
            "SUBSTR" => {
                if args.len() < 2 {
                    return err("$SUBSTR() needs a macro name and a start position");
                }
                let s: Vec<char> = self.arg_value(args[0])?.chars().collect();
                let start = self.int_arg(args[1], "$SUBSTR start")?;
                let len = match args.get(2) {
                    Some(a) => Some(self.int_arg(a, "$SUBSTR length")?),
                    None => None,
                };
                Ok(substr(&s, start, len))
            }
            "CHOICE" => {
                if args.len() < 2 {
                    return err("$CHOICE() needs an index and a list");
                }
                // The index is read as condor_submit's string_is_long_param
                // does: an integer, else any expression with an integer
                // value (a real is truncated, a boolean is 0 or 1).
                let i = match self.eval_arg(args[0], "$CHOICE index")?.1 {
                    Value::Int(i) => i,
                    Value::Real(r) => r as i64,
                    Value::Bool(b) => b as i64,
                    _ => {
                        return err(format!(
                            "$CHOICE index: '{}' is not an integer",
                            args[0].trim()
                        ));
                    }
                };
                // Empty entries do not count: in a list macro those that are
                // blank, inline only those with no characters at all (`a,,b`
                // has two entries, `a, ,b` three), as HTCondor's tokenizer
                // splits them.
                let items: Vec<String> = if args.len() == 2 {
                    let list = self.arg_value(args[1])?;
                    list.split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect()
                } else {
                    args[1..]
                        .iter()
                        .filter(|a| !a.is_empty())
                        .map(|a| self.expand(a.trim()))
                        .collect::<Result<_, _>>()?
                };
                if i < 0 || i as usize >= items.len() {
                    return err(format!(
                        "$CHOICE() index {i} is out of range (0..{})",
                        items.len()
                    ));
                }
                Ok(items[i as usize].clone())
            }
            "RANDOM_CHOICE" => {
                let items: Vec<String> = args
                    .iter()
                    .map(|a| self.expand(a.trim()))
                    .collect::<Result<_, _>>()?;
                if items.is_empty() || (items.len() == 1 && items[0].is_empty()) {
                    return err("$RANDOM_CHOICE() needs at least one choice");
                }
                let i = (self.rand)(items.len() as u64) as usize;
                Ok(items[i].clone())
            }
            "RANDOM_INTEGER" => {
                if args.len() < 2 {
                    return err("$RANDOM_INTEGER() needs a minimum and a maximum");
                }
                let lo = self.int_arg(args[0], "$RANDOM_INTEGER minimum")?;
                let hi = self.int_arg(args[1], "$RANDOM_INTEGER maximum")?;
                let step = match args.get(2) {
                    Some(a) => self.int_arg(a, "$RANDOM_INTEGER step")?,
                    None => 1,
                };
                if hi < lo || step <= 0 {
                    return err(format!("$RANDOM_INTEGER({lo},{hi},{step}): empty range"));
                }
                let n = ((hi - lo) / step + 1) as u64;
                Ok((lo + (self.rand)(n) as i64 * step).to_string())
            }
            "DIRNAME" => Ok(path_parts(&self.arg_value(inner)?, "p")),
            "BASENAME" => Ok(path_parts(&self.arg_value(inner)?, "nx")),
            w if w.starts_with('F') => {
                let flags = &w[1..];
                let path = self.arg_value(inner)?;
                Ok(path_parts(&path, flags))
            }
            _ => err(format!("unknown macro function ${word}()")),
        }
    }

    fn int_arg(&mut self, arg: &str, what: &str) -> Result<i64, MacroError> {
        match self.eval_arg(arg, what)?.1 {
            Value::Int(i) => Ok(i),
            Value::Real(r) => Ok(r as i64),
            _ => err(format!("{what}: '{}' is not an integer", arg.trim())),
        }
    }

    /// Evaluates a function argument (a macro name or text) as a ClassAd
    /// expression.
    fn eval_arg(&mut self, arg: &str, what: &str) -> Result<(String, Value), MacroError> {
        let text = self.arg_value(arg)?;
        let e = classad::parse_expr(&text).map_err(|e| {
            MacroError(format!(
                "{what}(): '{text}' is not a valid expression: {}",
                e.msg
            ))
        })?;
        let v = Evaluator::new().eval(&e, &Scope::root(Rc::new(classad::ClassAd::new())));
        Ok((text, v))
    }
}

fn is_function(word: &str) -> bool {
    matches!(
        word,
        "ENV"
            | "INT"
            | "REAL"
            | "STRING"
            | "EVAL"
            | "SUBSTR"
            | "CHOICE"
            | "RANDOM_CHOICE"
            | "RANDOM_INTEGER"
            | "DIRNAME"
            | "BASENAME"
    ) || (word.starts_with('F')
        && word[1..]
            .bytes()
            .all(|b| b"fpdnxbqauw".contains(&(b | 0x20))))
}

/// The index of the `)` matching the `(` at the start of `s`.
fn matching_paren(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in s.bytes().enumerate() {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Splits function arguments at top-level commas.
fn split_args(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        match b {
            b'(' => depth += 1,
            b')' => depth -= 1,
            b',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

fn truncate(s: &str) -> String {
    s.chars().take(40).collect()
}

/// `$SUBSTR`: a negative start counts from the end, a negative length drops
/// that many characters from the end.
fn substr(s: &[char], start: i64, len: Option<i64>) -> String {
    let n = s.len() as i64;
    let mut from = if start < 0 {
        (n + start).max(0)
    } else {
        start.min(n)
    };
    let to = match len {
        None => n,
        Some(l) if l < 0 => (n + l).max(0),
        Some(l) => (from + l).min(n),
    };
    if to <= from {
        return String::new();
    }
    from = from.max(0);
    s[from as usize..to as usize].iter().collect()
}

/// `$F` path pieces, exactly as HTCondor's config.cpp computes them (its
/// quirks included). Flags, in any case and combination: `p` directory path,
/// `d` the last directory (`dd` the last two, ...), `n` name without
/// extension, `x` extension, `b` bare (no trailing `/` for `p`/`d`, no
/// leading `.` for `x`), `f` full path from the current directory first, `q`
/// double quotes (`a`: single), `u`/`w` forward/back slashes. Enclosing
/// quotes of the value are dropped. `$DIRNAME` is `p`, `$BASENAME` is `nx`.
pub fn path_parts(path: &str, flags: &str) -> String {
    let (mut parts, mut num_dirs) = (0u8, 0usize);
    let (mut quoted, mut full, mut bare, mut arg_quote) = (false, false, false, false);
    let mut to: u8 = 0;
    for c in flags.bytes() {
        match c | 0x20 {
            b'x' => parts |= 1,
            b'n' => parts |= 2,
            b'p' => parts |= 4,
            b'd' => {
                parts |= 8;
                num_dirs += 1;
            }
            b'a' => arg_quote = true,
            b'b' => bare = true,
            b'f' => full = true,
            b'w' => to = b'\\',
            b'u' => to = b'/',
            b'q' => quoted = true,
            _ => {}
        }
    }
    let q = match (quoted, arg_quote) {
        (false, _) => 0,
        (true, true) => b'\'',
        (true, false) => b'"',
    };
    let v = unquote(path.as_bytes());
    let mut buf = if full && !v.starts_with(b"/") {
        match std::env::current_dir() {
            Ok(cwd) => full_path_quoted(cwd.to_string_lossy().as_bytes(), v, q, to),
            Err(_) => path_quoted(v, q, to),
        }
    } else if full || parts != 0 || to != 0 || bare {
        path_quoted(v, q, to)
    } else {
        strip_and_quote(v, q)
    };
    let mut ixend = buf.len();
    // condor_basename (only '/' on Unix) and the extension's '.', which is
    // never the name's first character.
    let ixn = buf.iter().rposition(|&c| c == b'/').map_or(0, |i| i + 1);
    let ixx = (ixn + 1..ixend)
        .rev()
        .find(|&i| buf[i] == b'.')
        .unwrap_or(ixend);
    if ixn == 0 && parts & 3 != 0 {
        parts &= !(4 | 8);
    }
    // Room for the quotes the fix-up below may write past the end.
    buf.extend_from_slice(&[0, 0, 0]);
    let mut tv;
    match parts & 0xF {
        1 => {
            tv = ixx;
            if bare && ixx < ixend {
                tv += 1;
            }
        }
        3 => tv = ixn,
        2 => {
            tv = ixn;
            ixend = ixx;
        }
        0 | 7 | 5 => tv = 0,
        4 => {
            tv = 0;
            ixend = if bare && ixn > 0 { ixn - 1 } else { ixn };
        }
        6 => {
            tv = 0;
            ixend = ixx;
        }
        _ if ixn > 0 => {
            tv = basename_plus_dirs(&buf[..ixend], num_dirs);
            match parts & 3 {
                2 => ixend = ixx,
                0 => ixend = if bare { ixn - 1 } else { ixn },
                _ => {}
            }
        }
        _ => {
            // Only directories wanted and there are none.
            ixend = 1;
            tv = 1;
        }
    }
    if quoted {
        if buf[tv] != q {
            tv -= 1;
            buf[tv] = q;
        }
        if ixend > 1 && buf[ixend - 1] == q {
            ixend -= 1;
        }
        buf[ixend] = q;
        ixend += 1;
    }
    if tv >= ixend {
        return String::new();
    }
    String::from_utf8_lossy(&buf[tv..ixend]).into_owned()
}

/// strlen_unquote: the value without one pair of enclosing `"` or `'`.
fn unquote(v: &[u8]) -> &[u8] {
    match v {
        [f, inner @ .., l] if f == l && (*f == b'"' || *f == b'\'') => inner,
        _ => v,
    }
}

/// strcpy_quoted: drops a leading `"` (or `q`) and its partner at the end,
/// then encloses in `q` when `q` is not 0.
fn strip_and_quote(v: &[u8], q: u8) -> Vec<u8> {
    let mut s = v;
    let mut qc = 0;
    if let Some(&f) = s.first()
        && (f == b'"' || (q != 0 && f == q))
    {
        qc = f;
        s = &s[1..];
    }
    if qc != 0 && s.last() == Some(&qc) {
        s = &s[..s.len() - 1];
    }
    let mut out = Vec::with_capacity(s.len() + 2);
    if q != 0 {
        out.push(q);
    }
    out.extend_from_slice(s);
    if q != 0 {
        out.push(q);
    }
    out
}

/// strdup_path_quoted: [`strip_and_quote`] with the path separators made
/// `to` (when not 0).
fn path_quoted(v: &[u8], q: u8, to: u8) -> Vec<u8> {
    let mut out = strip_and_quote(v, q);
    to_separator(&mut out, to);
    out
}

fn to_separator(s: &mut [u8], to: u8) {
    if to != 0 {
        let from = if to == b'/' { b'\\' } else { b'/' };
        for c in s.iter_mut().filter(|c| **c == from) {
            *c = to;
        }
    }
}

/// strdup_full_path_quoted for a relative `name`: `cwd` (less one trailing
/// separator) and `name` (less a leading `./`) joined.
fn full_path_quoted(cwd: &[u8], name: &[u8], q: u8, to: u8) -> Vec<u8> {
    let mut cwd = cwd;
    if let Some(&l) = cwd.last()
        && (l == b'/' || (to != 0 && l == to))
    {
        cwd = &cwd[..cwd.len() - 1];
    }
    let mut name = name;
    if name.len() > 2 && name[0] == b'.' && (name[1] == b'/' || (to != 0 && name[1] == to)) {
        name = &name[2..];
    }
    let mut out = Vec::new();
    if q != 0 {
        out.push(q);
    }
    out.extend_from_slice(&strip_and_quote(cwd, 0));
    out.push(if to != 0 { to } else { b'/' });
    let n = strip_and_quote(name, q);
    out.extend_from_slice(if q != 0 { &n[1..n.len() - 1] } else { &n[..] });
    to_separator(&mut out, to);
    if q != 0 {
        out.push(q);
    }
    out
}

/// condor_basename_plus_dirs: where the name and its last `num_dirs`
/// directories start.
fn basename_plus_dirs(path: &[u8], num_dirs: usize) -> usize {
    let seps: Vec<usize> = path
        .iter()
        .enumerate()
        .filter(|(_, c)| **c == b'/' || **c == b'\\')
        .map(|(i, _)| i + 1)
        .collect();
    let keep = seps.len().saturating_sub(num_dirs);
    if keep > 0 { seps[keep - 1] } else { 0 }
}

/// printf of one integer with `%d`-family conversions and flags.
pub fn printf_int(fmt: &str, v: i64) -> Result<String, MacroError> {
    printf_one(fmt, |spec| {
        let conv = spec.conv;
        let body = match conv {
            'd' | 'i' | 'u' => v.unsigned_abs().to_string(),
            'x' => format!("{:x}", v),
            'X' => format!("{:X}", v),
            'o' => format!("{:o}", v),
            'c' => ((v as u8) as char).to_string(),
            _ => return None,
        };
        let neg = v < 0 && matches!(conv, 'd' | 'i');
        Some(pad_number(spec, body, neg))
    })
}

/// printf of one real with `%f`, `%e`, `%g` conversions.
pub fn printf_real(fmt: &str, v: f64) -> Result<String, MacroError> {
    use crate::classad::unparse::{format_e, format_g};
    printf_one(fmt, |spec| {
        let prec = spec.prec.unwrap_or(6);
        let a = v.abs();
        let body = match spec.conv {
            'f' | 'F' => format!("{:.*}", prec, a),
            'e' => format_e(a, prec, false),
            'E' => format_e(a, prec, true),
            'g' => format_g(a, prec, false),
            'G' => format_g(a, prec, true),
            'd' | 'i' => (a as i64).to_string(),
            _ => return None,
        };
        Some(pad_number(spec, body, v.is_sign_negative() && v != 0.0))
    })
}

struct Spec {
    left: bool,
    zero: bool,
    plus: bool,
    space: bool,
    width: usize,
    prec: Option<usize>,
    conv: char,
}

fn pad_number(spec: &Spec, body: String, neg: bool) -> String {
    let sign = if neg {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    };
    let len = sign.len() + body.len();
    if len >= spec.width {
        return format!("{sign}{body}");
    }
    let fill = spec.width - len;
    if spec.left {
        format!("{sign}{body}{}", " ".repeat(fill))
    } else if spec.zero {
        format!("{sign}{}{body}", "0".repeat(fill))
    } else {
        format!("{}{sign}{body}", " ".repeat(fill))
    }
}

/// Formats with a printf string holding exactly one conversion.
fn printf_one(fmt: &str, conv: impl Fn(&Spec) -> Option<String>) -> Result<String, MacroError> {
    let bad = || {
        MacroError(format!(
            "bad format '{fmt}': it needs exactly one numeric conversion"
        ))
    };
    let pct = fmt.find('%').ok_or_else(bad)?;
    let b = fmt.as_bytes();
    let mut i = pct + 1;
    let mut spec = Spec {
        left: false,
        zero: false,
        plus: false,
        space: false,
        width: 0,
        prec: None,
        conv: ' ',
    };
    while i < b.len() && b"-0+ #".contains(&b[i]) {
        match b[i] {
            b'-' => spec.left = true,
            b'0' => spec.zero = true,
            b'+' => spec.plus = true,
            b' ' => spec.space = true,
            _ => {}
        }
        i += 1;
    }
    while i < b.len() && b[i].is_ascii_digit() {
        spec.width = spec.width * 10 + (b[i] - b'0') as usize;
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let mut p = 0;
        while i < b.len() && b[i].is_ascii_digit() {
            p = p * 10 + (b[i] - b'0') as usize;
            i += 1;
        }
        spec.prec = Some(p);
    }
    while i < b.len() && b"lhqjzt".contains(&b[i]) {
        i += 1;
    }
    if i >= b.len() {
        return Err(bad());
    }
    spec.conv = b[i] as char;
    let rest = &fmt[i + 1..];
    if rest.replace("%%", "").contains('%') {
        return Err(bad());
    }
    let body = conv(&spec).ok_or_else(bad)?;
    Ok(format!(
        "{}{}{}",
        fmt[..pct].replace("%%", "%"),
        body,
        rest.replace("%%", "%")
    ))
}

/// A small xorshift generator seeded from the clock and pid.
fn default_rand() -> impl FnMut(u64) -> u64 {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
        ^ ((std::process::id() as u64) << 32);
    let mut state = seed | 1;
    move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        if n == 0 { 0 } else { state % n }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct Map(HashMap<String, String>);
    impl MacroSource for Map {
        fn raw(&self, name: &str) -> Option<String> {
            self.0.get(&name.to_ascii_lowercase()).cloned()
        }
    }
    fn map(pairs: &[(&str, &str)]) -> Map {
        Map(pairs
            .iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
            .collect())
    }
    fn x(m: &Map, s: &str) -> String {
        Expander::new(m).expand(s).unwrap()
    }

    #[test]
    fn references_and_defaults() {
        let m = map(&[("A", "x$(B)y"), ("B", "b"), ("E", "")]);
        assert_eq!(x(&m, "$(a)"), "xby");
        assert_eq!(x(&m, "[$(nosuch)]"), "[]");
        assert_eq!(x(&m, "$(nosuch:dflt)"), "dflt");
        assert_eq!(x(&m, "$(nosuch:$(B))"), "b");
        assert_eq!(x(&m, "$(DOLLAR)(A)"), "$(A)");
        assert_eq!(
            x(&m, "keep $$(Memory) and $$([1+1])"),
            "keep $$(Memory) and $$([1+1])"
        );
        assert_eq!(x(&m, "cost $5"), "cost $5");
    }

    #[test]
    fn cycles_are_errors() {
        let m = map(&[("A", "$(B)"), ("B", "$(A)")]);
        let e = Expander::new(&m).expand("$(A)").unwrap_err();
        assert!(e.0.contains("refers to itself"), "{e}");
    }

    #[test]
    fn functions() {
        let m = map(&[
            ("X", "10"),
            ("S", "abcdef"),
            ("L", "a, b, c"),
            ("P", "/path/to/sim.tar.gz"),
        ]);
        assert_eq!(x(&m, "$INT(X,%04d)"), "0010");
        assert_eq!(x(&m, "$INT(X)"), "10");
        assert_eq!(x(&m, "$REAL(X,%.2f)"), "10.00");
        // A name with a character condor_config does not take in one
        // is no macro: it stays, what it holds expanded.
        assert_eq!(x(&m, "a$(+X)b$( X )c$(+$(X))"), "a$(+X)b$( X )c$(+10)");
        assert_eq!(x(&m, "$( DOLLAR )$(DOLLAR)"), "$( DOLLAR )$");
        // A format of the user's that prints no '.' gets ".0"; the
        // default format's does not.
        assert_eq!(x(&m, "$REAL(X,%g)"), "10.0");
        assert_eq!(x(&m, "$REAL(X,%.0f)"), "10.0");
        assert_eq!(x(&m, "$REAL(X)"), "10");
        assert_eq!(x(&m, "$SUBSTR(S,2)"), "cdef");
        assert_eq!(x(&m, "$SUBSTR(S,0,-2)"), "abcd");
        assert_eq!(x(&m, "$SUBSTR(S,1,3)"), "bcd");
        assert_eq!(x(&m, "$SUBSTR(S,-1)"), "f");
        assert_eq!(x(&m, "$SUBSTR(S,4,-3)"), "");
        assert_eq!(x(&m, "$CHOICE(1,L)"), "b");
        assert_eq!(x(&m, "$CHOICE(2,p,q,r)"), "r");
        assert!(Expander::new(&m).expand("$CHOICE(5,L)").is_err());
        // Regression: a boolean or real index, and empty entries skipped.
        assert_eq!(x(&m, "$CHOICE(true,p,q,r)"), "q");
        assert_eq!(x(&m, "$CHOICE(1.0,p,,q)"), "q");
        assert_eq!(x(&m, "$CHOICE(1,p, ,q)"), "");
        assert_eq!(x(&m, "$Fp(P)"), "/path/to/");
        assert_eq!(x(&m, "$Fd(P)"), "to/");
        assert_eq!(x(&m, "$Fdb(P)"), "to");
        assert_eq!(x(&m, "$Fn(P)"), "sim.tar");
        assert_eq!(x(&m, "$Fx(P)"), ".gz");
        assert_eq!(x(&m, "$Fxb(P)"), "gz");
        assert_eq!(x(&m, "$Fnx(P)"), "sim.tar.gz");
        assert_eq!(x(&m, "$Fq(P)"), "\"/path/to/sim.tar.gz\"");
        assert_eq!(x(&m, "$Fqa(P)"), "'/path/to/sim.tar.gz'");
        // Regression: combined flags, as HTCondor computes them.
        assert_eq!(x(&m, "$Fdnx(P)"), "to/sim.tar.gz");
        assert_eq!(x(&m, "$Fddn(P)"), "path/to/sim.tar");
        assert_eq!(x(&m, "$FDNX(P)"), "to/sim.tar.gz");
        assert_eq!(x(&m, "$Fdnxq(P)"), "\"to/sim.tar.gz\"");
        assert_eq!(x(&m, "$Fpnb(P)"), "/path/to/sim.tar");
        // Regression: no flags at all is the value, unquoted.
        assert_eq!(x(&m, "$F(P)"), "/path/to/sim.tar.gz");
        assert_eq!(x(&m, "$F(L)"), "a, b, c");
        assert_eq!(x(&m, "$BASENAME(P)"), "sim.tar.gz");
        assert_eq!(x(&m, "$DIRNAME(P)"), "/path/to/");
        assert!(Expander::new(&m).expand("$INT(S)").is_err());
    }

    #[test]
    fn random_functions_use_the_given_source() {
        let m = map(&[]);
        let mut e = Expander::new(&m).with_rand(|n| n - 1);
        assert_eq!(e.expand("$RANDOM_CHOICE(a,b,c)").unwrap(), "c");
        assert_eq!(e.expand("$RANDOM_INTEGER(10,20,5)").unwrap(), "20");
    }
}
