//! The conditionals of the configuration and submit languages: `if`,
//! `elif`, `else` and `endif` lines, the conditions they test (a macro's
//! truth, `defined`, `version`, comparisons) and the stack of open blocks.

use super::COMPAT_VERSION;
use super::macros::{Expander, MacroSource};

/// Evaluates an `if`/`elif` condition of the configuration or submit
/// language against the macros `src` defines so far.
pub fn condition(c: &str, src: &dyn MacroSource) -> Result<bool, String> {
    let c = c.trim();
    let (neg, body) = match c.strip_prefix('!') {
        Some(r) => (true, r.trim_start()),
        None => (false, c),
    };
    let lower = body.to_ascii_lowercase();
    let v = if let Some(rest) = lower
        .strip_prefix("defined")
        .filter(|r| r.starts_with(char::is_whitespace))
    {
        let name = body[body.len() - rest.len()..].trim();
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(format!(
                "bad 'if': 'defined' takes one name, got '{}'",
                name
            ));
        }
        match src.raw(name) {
            Some(raw) => !Expander::new(src)
                .expand(&raw)
                .map_err(|e| e.0)?
                .trim()
                .is_empty(),
            None => false,
        }
    } else if let Some(rest) = lower
        .strip_prefix("version")
        .filter(|r| r.starts_with(char::is_whitespace))
    {
        version_test(rest.trim())?
    } else if body.starts_with("$(") {
        let v = Expander::new(src).expand(body).map_err(|e| e.0)?;
        let v = v.trim();
        if v.is_empty() {
            false
        } else {
            parse_bool(v).ok_or_else(|| {
                format!("bad 'if': '{body}' expands to '{v}', which is not a boolean")
            })?
        }
    } else {
        parse_bool(body).ok_or_else(|| {
            format!(
                "bad 'if' condition '{c}': use 'defined NAME', 'version >= x.y', true/false, or $(NAME); \
                 compound conditions are not supported"
            )
        })?
    };
    Ok(v != neg)
}

/// `true`/`yes`/`1` and `false`/`no`/`0`, in any case.
pub fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "1" | "t" | "y" => Some(true),
        "false" | "no" | "0" | "f" | "n" => Some(false),
        _ => None,
    }
}

fn version_test(rest: &str) -> Result<bool, String> {
    let (op, v) = ["==", ">=", "<=", ">", "<"]
        .iter()
        .find_map(|op| rest.strip_prefix(op).map(|v| (*op, v.trim())))
        .ok_or_else(|| {
            format!("bad 'if version': expected ==, >=, <=, > or < before a version, got '{rest}'")
        })?;
    let parts: Vec<&str> = v.split('.').collect();
    if parts.len() < 2 || parts.len() > 3 || parts.iter().any(|p| p.parse::<u32>().is_err()) {
        return Err(format!(
            "bad 'if version': '{v}' is not a version x.y or x.y.z"
        ));
    }
    let n: Vec<u32> = parts.iter().map(|p| p.parse().unwrap_or(0)).collect();
    let have = [COMPAT_VERSION.0, COMPAT_VERSION.1, COMPAT_VERSION.2];
    let want = [n[0], n[1], n.get(2).copied().unwrap_or(0)];
    // x.y compares only major and minor.
    let len = n.len();
    let ord = have[..len].cmp(&want[..len]);
    Ok(match op {
        "==" => ord.is_eq(),
        ">=" => ord.is_ge(),
        "<=" => ord.is_le(),
        ">" => ord.is_gt(),
        _ => ord.is_lt(),
    })
}

/// An `if`/`elif`/`else`/`endif` line of the configuration, submit and
/// transform languages, with the text after the keyword.
pub enum CondKw<'a> {
    If(&'a str),
    Elif(&'a str),
    Else(&'a str),
    Endif,
}

/// Reads a conditional line; `None` for any other line (including
/// `if = value`, an assignment).
pub fn cond_keyword(t: &str) -> Option<CondKw<'_>> {
    let word_end = t.find(char::is_whitespace).unwrap_or(t.len());
    let (w, rest) = (&t[..word_end], t[word_end..].trim());
    if rest.starts_with('=') {
        return None;
    }
    match w.to_ascii_lowercase().as_str() {
        "if" => Some(CondKw::If(rest)),
        "elif" => Some(CondKw::Elif(rest)),
        "else" => Some(CondKw::Else(rest)),
        "endif" => Some(CondKw::Endif),
        _ => None,
    }
}

/// The state of nested `if`s.
#[derive(Default)]
pub struct CondStack {
    /// Per level: (this branch live, some branch already taken, parent live, else seen).
    levels: Vec<(bool, bool, bool, bool)>,
}

impl CondStack {
    pub fn active(&self) -> bool {
        self.levels.last().is_none_or(|l| l.0)
    }
    pub fn depth(&self) -> usize {
        self.levels.len()
    }
    pub fn push_if(&mut self, v: bool) {
        let parent = self.active();
        self.levels.push((parent && v, parent && v, parent, false));
    }
    /// Whether an `elif` condition must be evaluated (None: no open `if`).
    pub fn elif_needs_test(&self) -> Option<bool> {
        self.levels.last().map(|l| l.2 && !l.1)
    }
    pub fn elif(&mut self, v: bool) -> Result<(), String> {
        let Some(l) = self.levels.last_mut() else {
            return Err("'elif' without 'if'".into());
        };
        if l.3 {
            return Err("'elif' after 'else'".into());
        }
        l.0 = l.2 && !l.1 && v;
        l.1 |= l.0;
        Ok(())
    }
    pub fn else_(&mut self) -> Result<(), String> {
        let Some(l) = self.levels.last_mut() else {
            return Err("'else' without 'if'".into());
        };
        if l.3 {
            return Err("a second 'else' for one 'if'".into());
        }
        l.3 = true;
        l.0 = l.2 && !l.1;
        l.1 = true;
        Ok(())
    }
    pub fn endif(&mut self) -> Result<(), String> {
        self.levels
            .pop()
            .map(|_| ())
            .ok_or_else(|| "'endif' without 'if'".into())
    }
    /// The line of the last unclosed `if` in `text` (for the error message).
    pub(super) fn open_line(&self, text: &str) -> u32 {
        let mut open: Vec<u32> = Vec::new();
        for (n, l) in text.lines().enumerate() {
            match cond_keyword(l.trim()) {
                Some(CondKw::If(_)) => open.push(n as u32 + 1),
                Some(CondKw::Endif) => {
                    open.pop();
                }
                _ => {}
            }
        }
        open.last().copied().unwrap_or(1)
    }
}
