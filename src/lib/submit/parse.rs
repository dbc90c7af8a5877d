//! Reading a submit description into statements: logical lines,
//! `if`/`elif`/`else`/`endif`, `include`, `queue` statements with their
//! item lists, `+Attr`/`MY.Attr`/`-Attr` lines and macro definitions.
//! Macros are recorded, not expanded (except in conditions, include
//! targets and a definition's reference to itself): [`super::materialize`]
//! expands them with the definitions in force at each `queue` statement.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap as HashMap;

use super::{Kind, MacroDef, QueueStmt, Statement, SubmitError, SubmitFile, collect_refs, queue};
use crate::config::macros::{Expander, MacroSource};
use crate::config::reader::{self, Item, Logical, Origin};
use crate::config::{CondKw, CondStack, Config};

/// Parses a submit description. `config` supplies fallback macros for
/// `if` conditions and expansion.
pub fn parse(
    text: &str,
    name: &str,
    dir: &Path,
    config: &Config,
) -> Result<SubmitFile, SubmitError> {
    let mut file = SubmitFile {
        name: name.to_string(),
        dir: dir.to_path_buf(),
        stmts: Vec::new(),
        condition_refs: HashSet::new(),
    };
    // The top file counts for include loops when it is a real file.
    let seen: Vec<PathBuf> = dir.join(name).canonicalize().into_iter().collect();
    let max_value = config
        .get_int(MAX_VALUE_KNOB, 1 << 20)
        .map_err(|e| SubmitError::File {
            file: name.to_string(),
            msg: e.to_string(),
        })?;
    Parser {
        file: &mut file,
        config,
        table: HashMap::default(),
        seen,
        max_value,
    }
    .parse_into(text, name, dir)?;
    Ok(file)
}

/// One parse, across the files it includes: the statements so far, the
/// macros in force, and the files being read.
struct Parser<'a> {
    file: &'a mut SubmitFile,
    config: &'a Config,
    table: HashMap<String, MacroDef>,
    /// The files being read, innermost last (an include loop is an error).
    seen: Vec<PathBuf>,
    /// SUBMIT_MAX_VALUE_BYTES: the longest value a line may give.
    max_value: i64,
}

/// The knob that caps one value of a submit description: a 10 MB
/// expression would be stored, copied into every read of the job, and
/// evaluated by every pass.
pub const MAX_VALUE_KNOB: &str = "SUBMIT_MAX_VALUE_BYTES";

/// The `if` nesting of one file: it must close in the file that opens it.
#[derive(Default)]
struct Conditions {
    stack: CondStack,
    /// The lines of the open `if`s, for the error when one is not closed.
    if_lines: Vec<u32>,
}

fn at(origin: &Origin, msg: String) -> SubmitError {
    SubmitError::At {
        origin: origin.clone(),
        msg,
    }
}

impl Parser<'_> {
    /// Parses the text of one file (the top one or an included one): each
    /// logical line is a conditional, a queue statement, an include or an
    /// assignment, and lines in a false branch are skipped.
    fn parse_into(&mut self, text: &str, name: &str, dir: &Path) -> Result<(), SubmitError> {
        let items = reader::logical_lines(text).map_err(|e| SubmitError::At {
            origin: Origin {
                file: name.to_string(),
                line: e.line,
            },
            msg: e.msg,
        })?;
        let mut conds = Conditions::default();
        let mut it = items.into_iter();
        while let Some(Item { line, item }) = it.next() {
            let origin = Origin {
                file: name.to_string(),
                line,
            };
            let t = match item {
                Logical::Here { name: n, value } => {
                    if conds.stack.active() {
                        self.set_macro(n, value, origin);
                    }
                    continue;
                }
                Logical::Text(t) => t,
            };
            if let Some(kw) = crate::config::cond_keyword(&t) {
                self.conditional(kw, line, &mut conds)
                    .map_err(|m| at(&origin, m))?;
                continue;
            }
            if !conds.stack.active() {
                continue;
            }
            if queue::is_queue_line(&t) {
                self.queue_statement(&t, &mut it, origin)?;
            } else if let Some(target) = include_target(&t) {
                self.include(target, dir, &origin)?;
            } else {
                self.assignment(&t, origin)?;
            }
        }
        if conds.stack.depth() > 0 {
            return Err(SubmitError::At {
                origin: Origin {
                    file: name.to_string(),
                    line: conds.if_lines.last().copied().unwrap_or(1),
                },
                msg: "endif(s) not found before end-of-file".into(),
            });
        }
        Ok(())
    }

    /// `if`, `elif`, `else`, `endif`: a condition is tested only where its
    /// branch could be taken.
    fn conditional(
        &mut self,
        kw: CondKw<'_>,
        line: u32,
        conds: &mut Conditions,
    ) -> Result<(), String> {
        let view = View {
            table: &self.table,
            config: self.config,
        };
        match kw {
            CondKw::If(c) => {
                conds.if_lines.push(line);
                note_condition_refs(c, &mut self.file.condition_refs);
                let v = if conds.stack.active() {
                    crate::config::condition(c, &view)?
                } else {
                    false
                };
                conds.stack.push_if(v);
                Ok(())
            }
            CondKw::Elif(c) => {
                note_condition_refs(c, &mut self.file.condition_refs);
                let v = if conds.stack.elif_needs_test() == Some(true) {
                    crate::config::condition(c, &view)?
                } else {
                    false
                };
                conds.stack.elif(v)
            }
            CondKw::Else(_) => conds.stack.else_(),
            CondKw::Endif => {
                conds.if_lines.pop();
                conds.stack.endif()
            }
        }
    }

    /// A `queue` statement, with the lines of its `( ... )` item list when
    /// it opens one. Its arguments are checked now for early errors and
    /// read again after macro expansion.
    fn queue_statement(
        &mut self,
        t: &str,
        it: &mut impl Iterator<Item = Item>,
        origin: Origin,
    ) -> Result<(), SubmitError> {
        let rest = t.trim_start()[5..].to_string();
        let block = if queue::opens_block(&rest) {
            let mut lines = Vec::new();
            let mut closed = false;
            for Item { item, .. } in it {
                let l = match item {
                    Logical::Text(l) => l,
                    Logical::Here { name, value } => format!("{name} @= {value}"),
                };
                if l.trim() == ")" {
                    closed = true;
                    break;
                }
                lines.push(l);
            }
            if !closed {
                return Err(at(
                    &origin,
                    "the '(' item list of this queue statement is not closed by ')'".into(),
                ));
            }
            Some(lines)
        } else {
            None
        };
        let spec = queue::parse(&rest, block.clone()).map_err(|m| at(&origin, m))?;
        self.file.stmts.push(Statement {
            origin,
            kind: Kind::Queue(QueueStmt { spec, rest, block }),
        });
        Ok(())
    }

    /// `include : file` or `include : command |`: the file's (or the
    /// command's output's) lines are parsed here, in place.
    fn include(&mut self, target: &str, dir: &Path, origin: &Origin) -> Result<(), SubmitError> {
        let view = View {
            table: &self.table,
            config: self.config,
        };
        let target = Expander::new(&view)
            .expand(target.trim())
            .map_err(|e| at(origin, e.0))?;
        let target = target.trim();
        let (content, inc_name) = if let Some(cmd) = target.strip_suffix('|') {
            let out = user_command(cmd.trim())
                .output()
                .map_err(|e| at(origin, format!("cannot run '{}': {e}", cmd.trim())))?;
            if !out.status.success() {
                return Err(at(
                    origin,
                    format!("include command '{}' failed: {}", cmd.trim(), out.status),
                ));
            }
            (
                String::from_utf8_lossy(&out.stdout).into_owned(),
                format!("command '{}'", cmd.trim()),
            )
        } else {
            let p = dir.join(target);
            let canon = p.canonicalize().unwrap_or(p.clone());
            if self.seen.contains(&canon) {
                return Err(at(
                    origin,
                    format!("include loop: {target} includes itself"),
                ));
            }
            let c = std::fs::read_to_string(&p)
                .map_err(|e| at(origin, format!("cannot read included file {target}: {e}")))?;
            self.seen.push(canon);
            (c, target.to_string())
        };
        // Names inside an included file are relative to the current
        // directory too.
        self.parse_into(&content, &inc_name, dir)?;
        if !target.ends_with('|') {
            self.seen.pop();
        }
        Ok(())
    }

    /// `+Attr = value`, `MY.Attr = value`, `-Attr =`, or a macro
    /// (command) definition `name = value`.
    fn assignment(&mut self, t: &str, origin: Origin) -> Result<(), SubmitError> {
        let Some(eq) = t.find('=') else {
            return Err(at(
                &origin,
                format!("Syntax Error, missing : or = in '{t}'"),
            ));
        };
        let lower = t.to_ascii_lowercase();
        let lhs = t[..eq].trim();
        let value = t[eq + 1..].trim().to_string();
        if value.len() as i64 > self.max_value {
            return Err(at(
                &origin,
                format!(
                    "the value of {lhs} is {} bytes, more than {MAX_VALUE_KNOB} ({})",
                    value.len(),
                    self.max_value
                ),
            ));
        }
        let attr = if let Some(attr) = lhs
            .strip_prefix('+')
            .or_else(|| (lower.starts_with("my.")).then(|| &lhs[3..]))
        {
            Some((attr, Some(value.clone())))
        } else {
            lhs.strip_prefix('-').map(|attr| (attr, None))
        };
        if let Some((attr, value)) = attr {
            check_attr_name(attr).map_err(|m| at(&origin, m))?;
            self.file.stmts.push(Statement {
                origin,
                kind: Kind::Attr {
                    name: attr.to_string(),
                    value,
                },
            });
            return Ok(());
        }
        if !reader::is_macro_name(lhs) {
            return Err(at(&origin, format!("Illegal Identifier: {lhs}")));
        }
        let value = self_reference(&self.table, self.config, lhs, &value);
        self.set_macro(lhs.to_string(), value, origin);
        Ok(())
    }

    /// A macro definition: in force from here on, and a statement.
    fn set_macro(&mut self, name: String, value: String, origin: Origin) {
        self.table.insert(
            name.to_ascii_lowercase(),
            MacroDef {
                raw: value.clone(),
                origin: origin.clone(),
            },
        );
        self.file.stmts.push(Statement {
            origin,
            kind: Kind::Set { name, value },
        });
    }
}

/// The macros an `if` condition reads: `$(X)` references and the name
/// after `defined`.
fn note_condition_refs(c: &str, out: &mut HashSet<String>) {
    collect_refs(c, out);
    let t = c.trim().trim_start_matches('!').trim_start();
    if let Some(name) = reader::strip_prefix_ci(t, "defined")
        && !name.is_empty()
    {
        out.insert(name.trim().to_ascii_lowercase());
    }
}

fn check_attr_name(a: &str) -> Result<(), String> {
    let ok = a
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    if ok {
        Ok(())
    } else {
        Err(format!("Illegal Identifier: {a}"))
    }
}

/// `A = $(A) more`: the old value replaces the self-reference at once.
fn self_reference(
    table: &HashMap<String, MacroDef>,
    config: &Config,
    name: &str,
    value: &str,
) -> String {
    let pat = format!("$({})", name.to_ascii_lowercase());
    if !value.to_ascii_lowercase().contains(&pat) {
        return value.to_string();
    }
    let old = table
        .get(&name.to_ascii_lowercase())
        .map(|d| d.raw.clone())
        .or_else(|| config.raw(name))
        .unwrap_or_default();
    let mut out = String::new();
    let lower = value.to_ascii_lowercase();
    let mut i = 0;
    while let Some(p) = lower[i..].find(&pat) {
        out.push_str(&value[i..i + p]);
        out.push_str(&old);
        i += p + pat.len();
    }
    out.push_str(&value[i..]);
    out
}

fn include_target(t: &str) -> Option<&str> {
    let lower = t.to_ascii_lowercase();
    let rest = lower.strip_prefix("include")?;
    let r = rest.trim_start();
    if !r.starts_with(':') {
        return None;
    }
    let colon = t.find(':')?;
    Some(&t[colon + 1..])
}

/// Macros defined so far, then configuration.
struct View<'a> {
    table: &'a HashMap<String, MacroDef>,
    config: &'a Config,
}

impl MacroSource for View<'_> {
    fn env_missing(&self) -> &'static str {
        "UNDEFINED"
    }
    fn raw(&self, name: &str) -> Option<String> {
        self.table
            .get(&name.to_ascii_lowercase())
            .map(|d| d.raw.clone())
            .or_else(|| self.config.raw(name))
    }
}

/// `/bin/sh -c cmd` as the submit file's author runs it: with the caller's
/// environment and ids, the group of a set-group-id tool given up for good.
pub(crate) fn user_command(cmd: &str) -> std::process::Command {
    let mut c = std::process::Command::new("/bin/sh");
    c.arg("-c").arg(cmd);
    if crate::sys::privilege::is_privileged() {
        c.env_clear().envs(crate::sys::privilege::caller_env());
    }
    crate::sys::privilege::child_drops_group(&mut c);
    c
}
