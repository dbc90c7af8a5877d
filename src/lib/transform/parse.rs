//! Reading transform text into a [`Transform`]: the line reader of the
//! configuration and submit languages, the meta statements taken out
//! wherever they stand (so an `if` cannot make them conditional, as in
//! `MacroStreamXFormSource::open`), and each remaining line classified as a
//! macro assignment, a conditional or a command whose arguments are split
//! the way HTCondor's `tokener` splits them. Expansion of `$()` waits for
//! [`Transform::apply`](super::apply), because its values come from the ad.

use crate::classad::{self, Expr};
use crate::config::reader::{self, Logical};
use crate::config::{CondKw, cond_keyword};
use crate::vocab::Universe;

use super::TransformError;

/// One parsed transform: a route, a pre- or post-route transform, or a
/// rules file of `tern_transform_ads`.
#[derive(Clone, Debug)]
pub struct Transform {
    pub(crate) origin: String,
    pub(crate) name: Option<String>,
    /// `REQUIREMENTS` as written, and parsed (old ClassAd syntax).
    pub(crate) requirements: Option<(String, Expr)>,
    pub(crate) universe: Option<i64>,
    pub(crate) iterate: Option<IterateArgs>,
    pub(crate) stmts: Vec<Stmt>,
}

/// A non-trivial `TRANSFORM` statement: its arguments, unexpanded, and the
/// lines of a `( … )` item list that followed it in a rules file.
#[derive(Clone, Debug)]
pub struct IterateArgs {
    pub line: usize,
    pub args: String,
    pub block: Option<Vec<String>>,
}

/// A statement that runs when the transform is applied.
#[derive(Clone, Debug)]
pub(crate) struct Stmt {
    pub line: usize,
    pub kind: Kind,
}

#[derive(Clone, Debug)]
pub(crate) enum Kind {
    /// `name = value` or a `name @=tag` here-value: a macro, unexpanded.
    Assign {
        name: String,
        value: String,
    },
    If(String),
    Elif(String),
    Else,
    Endif,
    Cmd(Command),
}

/// The commands that act on the ad (and `EVALMACRO`, which sets a macro).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Set,
    Default,
    EvalSet,
    EvalMacro,
    Copy,
    Rename,
    Delete,
}

impl Op {
    pub fn keyword(self) -> &'static str {
        match self {
            Op::Set => "SET",
            Op::Default => "DEFAULT",
            Op::EvalSet => "EVALSET",
            Op::EvalMacro => "EVALMACRO",
            Op::Copy => "COPY",
            Op::Rename => "RENAME",
            Op::Delete => "DELETE",
        }
    }
}

/// The first argument of a command: an attribute (or macro) name, or for
/// `COPY`, `RENAME` and `DELETE` a `/regex/` matched against every name.
#[derive(Clone, Debug)]
pub(crate) enum Target {
    Name(String),
    Regex {
        text: String,
        re: Box<fancy_regex::Regex>,
    },
}

#[derive(Clone, Debug)]
pub(crate) struct Command {
    pub op: Op,
    pub target: Target,
    /// The rest of the line from the second argument on (the expression, the
    /// new name or the value), unexpanded; `None` for `DELETE`.
    pub rest: Option<String>,
}

/// Where the text comes from, which decides what `TRANSFORM` may do.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A configuration value: `TRANSFORM` ends the text.
    Config,
    /// A rules file: `TRANSFORM` is last, optionally followed by its `( … )`
    /// item list.
    RulesFile,
}

impl Transform {
    /// Parses transform text as a configuration value holds it (a route or a
    /// pre/post-route transform): `TRANSFORM` ends the text.
    pub fn parse(text: &str, origin: &str) -> Result<Transform, TransformError> {
        parse_text(text, origin, Mode::Config)
    }

    /// Parses a rules file of `tern_transform_ads`: a `TRANSFORM` statement
    /// must be its last statement, and may be followed by the lines of its
    /// `( … )` item list.
    pub fn parse_rules_file(text: &str, origin: &str) -> Result<Transform, TransformError> {
        parse_text(text, origin, Mode::RulesFile)
    }

    /// The name the text or the caller gave it.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Sets the name (the router names a route after its knob suffix).
    pub fn set_name(&mut self, name: &str) {
        self.name = Some(name.to_string());
    }

    /// Where the text came from, as errors name it.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The `REQUIREMENTS` expression, unexpanded (as HTCondor parses it at
    /// load time).
    pub fn requirements(&self) -> Option<&Expr> {
        self.requirements.as_ref().map(|r| &r.1)
    }

    /// The `REQUIREMENTS` expression as written.
    pub fn requirements_text(&self) -> Option<&str> {
        self.requirements.as_ref().map(|r| r.0.as_str())
    }

    /// The `UNIVERSE` statement's universe number.
    pub fn universe(&self) -> Option<i64> {
        self.universe
    }

    /// Whether the text has any command (a rules file of definitions only
    /// is configuration for `tern_transform_ads`).
    pub fn has_commands(&self) -> bool {
        self.stmts.iter().any(|s| matches!(s.kind, Kind::Cmd(_)))
    }

    /// The `TRANSFORM` arguments when they ask for more than one pass.
    pub fn iterate_args(&self) -> Option<&IterateArgs> {
        self.iterate.as_ref()
    }
}

/// Reads transform text into a [`Transform`]: each logical line is a meta
/// statement, `TRANSFORM` (which ends the text), a conditional, or an
/// assignment or command; the `if`s must be closed at the end.
fn parse_text(text: &str, origin: &str, mode: Mode) -> Result<Transform, TransformError> {
    let err = |line: u32, msg: String| TransformError::new(origin, line as usize, msg);
    let items = reader::logical_lines(text).map_err(|e| err(e.line, e.msg))?;
    let mut t = Transform {
        origin: origin.to_string(),
        name: None,
        requirements: None,
        universe: None,
        iterate: None,
        stmts: Vec::new(),
    };
    // Open `if`s: (line, else seen), to refuse a bad nesting at load time
    // rather than half-way through an ad.
    let mut open: Vec<(u32, bool)> = Vec::new();
    let mut it = items.into_iter();
    while let Some(item) = it.next() {
        let line = item.line;
        let text = match item.item {
            Logical::Here { name, value } => {
                t.stmts.push(Stmt {
                    line: line as usize,
                    kind: Kind::Assign {
                        name: macro_name(&name),
                        value,
                    },
                });
                continue;
            }
            Logical::Text(text) => text,
        };
        if take_meta(&mut t, &text).map_err(|m| err(line, m))? {
            continue;
        }
        if let Some(rest) = meta(&text, "transform") {
            transform_statement(&mut t, rest, line, mode, &mut it)?;
            // In a configuration value TRANSFORM ends the text.
            break;
        }
        let kind = match cond_keyword(&text) {
            Some(kw) => conditional(kw, line, &mut open).map_err(|m| err(line, m))?,
            None => match assignment_or_command(&text).map_err(|m| err(line, m))? {
                Some(kind) => kind,
                // A bare TRANSFORM: nothing to do.
                None => continue,
            },
        };
        t.stmts.push(Stmt {
            line: line as usize,
            kind,
        });
    }
    if let Some((line, _)) = open.last() {
        return Err(err(
            *line,
            "'if' without 'endif' before the end of the transform".into(),
        ));
    }
    Ok(t)
}

/// Takes a `NAME`, `REQUIREMENTS` or `UNIVERSE` statement into `t`; whether
/// the line was one.
fn take_meta(t: &mut Transform, text: &str) -> Result<bool, String> {
    if let Some(rest) = meta(text, "name") {
        if !rest.is_empty() {
            t.name = Some(rest.to_string());
        }
        return Ok(true);
    }
    if let Some(rest) = meta(text, "requirements") {
        let e = classad::parser::parse_expr_old(rest)
            .map_err(|e| format!("invalid REQUIREMENTS : {rest} ({e})"))?;
        t.requirements = Some((rest.to_string(), e));
        return Ok(true);
    }
    if let Some(rest) = meta(text, "universe") {
        t.universe = Some(
            universe_number(rest)
                .ok_or_else(|| format!("UNIVERSE '{rest}' is not a universe name or number"))?,
        );
        return Ok(true);
    }
    Ok(false)
}

/// Takes the `TRANSFORM` statement on `line` into `t`, with the item list
/// lines that follow it in a rules file; refuses any statement after it
/// in a rules file.
fn transform_statement(
    t: &mut Transform,
    rest: &str,
    line: u32,
    mode: Mode,
    it: &mut std::vec::IntoIter<reader::Item>,
) -> Result<(), TransformError> {
    let origin = t.origin.clone();
    let err = |line: u32, msg: String| TransformError::new(&origin, line as usize, msg);
    let block = if rest.trim_end().ends_with('(') && !rest.contains(')') {
        if mode == Mode::Config {
            return Err(err(
                line,
                "a TRANSFORM item list '( … )' over several lines is only allowed in a \
                 rules file"
                    .into(),
            ));
        }
        Some(item_list(it, line).map_err(|(at, m)| err(at, m))?)
    } else {
        None
    };
    if non_trivial_iterate(rest) || block.is_some() {
        t.iterate = Some(IterateArgs {
            line: line as usize,
            args: rest.to_string(),
            block,
        });
    }
    if mode == Mode::RulesFile
        && let Some(after) = it.next()
    {
        return Err(err(
            after.line,
            format!("TRANSFORM (line {line}) must be the last statement of a rules file"),
        ));
    }
    Ok(())
}

/// The lines of the `( … )` item list opened by the `TRANSFORM` on `line`,
/// up to the one starting with `)`; an error is (its line, message).
fn item_list(
    it: &mut std::vec::IntoIter<reader::Item>,
    line: u32,
) -> Result<Vec<String>, (u32, String)> {
    let mut rows = Vec::new();
    for next in it.by_ref() {
        let Logical::Text(row) = next.item else {
            return Err((
                next.line,
                "a here-value inside a TRANSFORM item list".into(),
            ));
        };
        if row.starts_with(')') {
            return Ok(rows);
        }
        rows.push(row);
    }
    Err((
        line,
        format!(
            "Reached end of file without finding closing brace ')' for TRANSFORM \
             command on line {line}"
        ),
    ))
}

/// The statement of an `if`, `elif`, `else` or `endif` on `line`, checked
/// against the open `if`s, which it updates.
fn conditional(kw: CondKw<'_>, line: u32, open: &mut Vec<(u32, bool)>) -> Result<Kind, String> {
    Ok(match kw {
        CondKw::If(c) => {
            open.push((line, false));
            Kind::If(c.to_string())
        }
        CondKw::Elif(c) => {
            match open.last() {
                None => return Err("'elif' without 'if'".into()),
                Some((_, true)) => return Err("'elif' after 'else'".into()),
                _ => {}
            }
            Kind::Elif(c.to_string())
        }
        CondKw::Else(rest) => {
            if !rest.is_empty() {
                return Err(format!("unexpected text after 'else': '{rest}'"));
            }
            match open.last_mut() {
                None => return Err("'else' without 'if'".into()),
                Some((_, true)) => return Err("a second 'else' for one 'if'".into()),
                Some(l) => l.1 = true,
            }
            Kind::Else
        }
        CondKw::Endif => {
            if open.pop().is_none() {
                return Err("'endif' without 'if'".into());
            }
            Kind::Endif
        }
    })
}

/// A macro assignment or a command; `None` for a bare `TRANSFORM`.
fn assignment_or_command(text: &str) -> Result<Option<Kind>, String> {
    match assignment(text) {
        Some((name, value)) => {
            if !reader::is_macro_name(name.trim_start_matches('+')) {
                return Err(format!("'{name}' is not a valid macro name"));
            }
            Ok(Some(Kind::Assign {
                name: macro_name(name),
                value: value.to_string(),
            }))
        }
        None => Ok(command(text)?.map(Kind::Cmd)),
    }
}

/// The macro an assignment sets: in submit syntax `+Attr` is `MY.Attr`
/// (as `Parse_macros` reads it with `READ_MACROS_SUBMIT_SYNTAX`), so that
/// `$(MY.Attr)` and `if defined MY.Attr` see it.
pub(crate) fn macro_name(name: &str) -> String {
    match name.strip_prefix('+') {
        Some(attr) => format!("MY.{attr}"),
        None => name.to_string(),
    }
}

/// `KEYWORD args` for a meta statement: the keyword in any case, white space,
/// and text that does not start with `=` or `:` (which would make the line
/// an assignment). Returns the trimmed arguments.
fn meta<'a>(line: &'a str, keyword: &str) -> Option<&'a str> {
    let n = keyword.len();
    let head = line.get(..n)?;
    if !head.eq_ignore_ascii_case(keyword) {
        return None;
    }
    let rest = &line[n..];
    // A bare TRANSFORM ends the text as well (HTCondor reads it as a no-op
    // command and goes on, which the spec's "TRANSFORM ends the text" does
    // not foresee).
    if rest.is_empty() && keyword == "transform" {
        return Some("");
    }
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let rest = rest.trim();
    if rest.starts_with('=') || rest.starts_with(':') {
        return None;
    }
    Some(rest)
}

/// `is_non_trivial_iterate`: no arguments, `1`, or `0` alone mean one pass.
fn non_trivial_iterate(args: &str) -> bool {
    let a = args.trim();
    if a.is_empty() {
        return false;
    }
    let digits = a
        .char_indices()
        .take_while(|(i, c)| c.is_ascii_digit() || (*i == 0 && (*c == '-' || *c == '+')))
        .count();
    let num: i64 = a[..digits].parse().unwrap_or(0);
    (num != 0 && num != 1) || !a[digits..].trim().is_empty()
}

/// A universe by name (any case) or number, as `CondorUniverseNumberEx`
/// reads it.
pub fn universe_number(text: &str) -> Option<i64> {
    let t = text.trim();
    if let Ok(n) = t.parse::<i64>()
        && n != 0
    {
        return Some(n);
    }
    Universe::from_submit(t).map(|u| u.code())
}

/// `name = value` in submit syntax: the first word (up to white space or
/// `=`) followed by `=`. `SET A = 1` is not one, `SET = 1` is.
fn assignment(line: &str) -> Option<(&str, &str)> {
    let end = line
        .find(|c: char| c.is_whitespace() || c == '=')
        .unwrap_or(line.len());
    let rest = line[end..].trim_start();
    let value = rest.strip_prefix('=')?;
    Some((&line[..end], value.trim()))
}

/// A token of a command line as HTCondor's `tokener` cuts it: white space
/// separates, and a token that starts with a quote runs to the matching
/// quote (the quotes not part of it).
struct Token {
    start: usize,
    end: usize,
    /// Where the next token search starts.
    next: usize,
    quoted: bool,
}

fn next_token(line: &str, from: usize) -> Option<Token> {
    let b = line.as_bytes();
    let mut i = from;
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\r' | b'\n') {
        i += 1;
    }
    if i >= b.len() {
        return None;
    }
    if b[i] == b'"' || b[i] == b'\'' {
        let q = b[i];
        let end = line[i + 1..]
            .bytes()
            .position(|c| c == q)
            .map(|p| i + 1 + p)
            .unwrap_or(b.len());
        return Some(Token {
            start: i + 1,
            end,
            next: (end + 1).min(b.len()),
            quoted: true,
        });
    }
    let end = line[i..]
        .find([' ', '\t', '\r', '\n'])
        .map(|p| i + p)
        .unwrap_or(b.len());
    Some(Token {
        start: i,
        end,
        next: end,
        quoted: false,
    })
}

/// Parses a command line (`ParseRulesCallback`): the keyword, the first
/// argument (a name, or a regex for `COPY`, `RENAME` and `DELETE`), an
/// optional `=` or `,` token, and the rest of the line. `Ok(None)` for a
/// bare `TRANSFORM`.
fn command(line: &str) -> Result<Option<Command>, String> {
    let Some(kw_tok) = next_token(line, 0) else {
        return Ok(None);
    };
    let kw = &line[kw_tok.start..kw_tok.end];
    let (op, nargs, regex_ok) = match kw.to_ascii_lowercase().as_str() {
        "set" => (Op::Set, 2, false),
        "default" => (Op::Default, 2, false),
        "evalset" => (Op::EvalSet, 2, false),
        "evalmacro" => (Op::EvalMacro, 2, false),
        "copy" => (Op::Copy, 2, true),
        "rename" => (Op::Rename, 2, true),
        "delete" => (Op::Delete, 1, true),
        "transform" => return Ok(None),
        "name" | "requirements" | "universe" => {
            return Err(format!("{} needs an argument", kw.to_ascii_uppercase()));
        }
        "include" | "@include" => {
            return Err("'include' is not allowed in a transform".into());
        }
        _ => return Err(format!("{kw} is not a valid transform keyword")),
    };
    let needs = || {
        if nargs == 2 {
            format!("{} needs 2 arguments", op.keyword())
        } else {
            format!("{} needs an argument", op.keyword())
        }
    };
    let Some(first) = next_token(line, kw_tok.next) else {
        return Err(needs());
    };
    let mut after_first = first.next;
    let target = if regex_ok && !first.quoted && line[first.start..].starts_with('/') {
        let (target, next) = regex_target(line, first.start)?;
        after_first = next;
        target
    } else {
        let mut name = &line[first.start..first.end];
        if let Some(n) = name.strip_suffix([',', '=']) {
            name = n;
        }
        Target::Name(name.to_string())
    };
    if nargs == 1 {
        return Ok(Some(Command {
            op,
            target,
            rest: None,
        }));
    }
    let mut tok = next_token(line, after_first).ok_or_else(needs)?;
    let t = &line[tok.start..tok.end];
    if t == "=" || t == "," {
        tok = next_token(line, tok.next).ok_or_else(needs)?;
    }
    // The rest starts at the token, its opening quote included.
    let start = if tok.quoted { tok.start - 1 } else { tok.start };
    Ok(Some(Command {
        op,
        target,
        rest: Some(line[start..].trim_end().to_string()),
    }))
}

/// `/pattern/flags` at `at` (HTCondor's `copy_regex`: the pattern ends at the
/// next `/`, with no escape; flags `i`, `m`, `U` and `g` follow directly).
/// Matching is always case-insensitive. Returns the target and where the
/// next token search starts.
fn regex_target(line: &str, at: usize) -> Result<(Target, usize), String> {
    let body = &line[at + 1..];
    let Some(close) = body.find('/') else {
        return Err(format!(
            "invalid regex: '{}' has no closing '/'",
            &line[at..]
        ));
    };
    let pat = &body[..close];
    let after = at + 1 + close + 1;
    let flags_end = line[after..]
        .find([' ', '\t'])
        .map(|p| after + p)
        .unwrap_or(line.len());
    // Always case-insensitive, as HTCondor adds PCRE2_CASELESS.
    let mut flags = String::from("i");
    for c in line[after..flags_end].chars() {
        match c {
            'i' | 'g' => {}
            'm' => flags.push('m'),
            'U' => flags.push('U'),
            other => {
                return Err(format!(
                    "invalid regex: unknown flag '{other}' after /{pat}/"
                ));
            }
        }
    }
    let re = fancy_regex::RegexBuilder::new(&format!("(?{flags}){pat}"))
        .build()
        .map_err(|e| format!("invalid regex /{pat}/: {e}"))?;
    Ok((
        Target::Regex {
            text: pat.to_string(),
            re: Box::new(re),
        },
        flags_end,
    ))
}
