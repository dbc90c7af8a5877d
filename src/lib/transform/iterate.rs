//! `TRANSFORM [N] [vars] [in | from | matching …]`: the iteration of a rules
//! file (`MacroStreamXFormSource::parse_iterate_args`, `first_iteration`,
//! `next_iteration`). The arguments are `$()`-expanded with the macros and
//! the configuration (no ad), then read by the submit language's `queue`
//! statement parser. Each input ad yields N passes per item, all passes of
//! one ad before the next ad.

use std::path::Path;

use crate::classad::{self, Evaluator, Scope, Value};
use crate::config::Config;
use crate::config::macros::Expander;
use crate::submit::queue::{self, ItemSource};

use super::apply::View;
use super::parse::Transform;
use super::{Macros, TransformError};

/// One pass of an iterating transform: the loop variables and the built-in
/// `Row`, `Step`, `XFormId`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pass {
    pub vars: Vec<(String, String)>,
    /// The item's index (`Row`, `ItemIndex`).
    pub row: usize,
    /// The repetition within the item (`Step`).
    pub step: i64,
    /// The running number of the pass (`XFormId`).
    pub id: usize,
}

impl Pass {
    /// Sets the pass's variables into `macros` (`set_iter_item`,
    /// `set_iterate_row`, `set_iterate_step`).
    pub fn set_into(&self, macros: &mut Macros) {
        for (n, v) in &self.vars {
            // Item text is literal: a `$` in it is no reference.
            macros.set(n, &v.replace('$', "$(DOLLAR)"));
        }
        macros.set("Row", &self.row.to_string());
        macros.set("ItemIndex", &self.row.to_string());
        macros.set("Step", &self.step.to_string());
        macros.set("XFormId", &self.id.to_string());
        macros.set("Iterating", "1");
    }
}

impl Transform {
    /// The passes the `TRANSFORM` statement asks for; `None` for a single
    /// plain pass (no statement, `TRANSFORM` or `TRANSFORM 1`). Files and
    /// globs are read relative to `dir`.
    pub fn passes(
        &self,
        macros: &Macros,
        cfg: &Config,
        dir: &Path,
    ) -> Result<Option<Vec<Pass>>, TransformError> {
        let Some(it) = &self.iterate else {
            return Ok(None);
        };
        let err = |m: String| TransformError::new(&self.origin, it.line, m);
        let empty = classad::ClassAd::new();
        let view = View {
            macros,
            ad: &empty,
            cfg,
        };
        let expand = |t: &str| Expander::new(&view).expand(t).map_err(|e| err(e.0));
        let args = expand(&it.args)?;
        let block = it.block.clone();
        let spec = queue::parse(args.trim(), block)
            .map_err(|m| err(format!("invalid TRANSFORM statement: {m}")))?;
        let count = count(&spec.count).map_err(err)?;
        let rows: Option<Vec<String>> = match &spec.source {
            ItemSource::None => None,
            ItemSource::In(items) => Some(items.clone()),
            ItemSource::FromLines(lines) => {
                Some(lines.iter().map(|l| l.trim().to_string()).collect())
            }
            ItemSource::FromFile(f) => {
                let p = dir.join(f.trim());
                let text = std::fs::read_to_string(&p).map_err(|e| {
                    err(format!(
                        "cannot read TRANSFORM items from {}: {e}",
                        p.display()
                    ))
                })?;
                Some(lines(&text))
            }
            ItemSource::FromCommand(cmd) => {
                let mut command = std::process::Command::new("/bin/sh");
                command.arg("-c").arg(cmd).current_dir(dir);
                crate::sys::privilege::child_drops_group(&mut command);
                let out = command
                    .output()
                    .map_err(|e| err(format!("cannot run '{cmd}': {e}")))?;
                if !out.status.success() {
                    return Err(err(format!(
                        "TRANSFORM item command '{cmd}' failed: {}",
                        out.status
                    )));
                }
                Some(lines(&String::from_utf8_lossy(&out.stdout)))
            }
            ItemSource::Matching { globs, files, dirs } => {
                Some(queue::matching(dir, globs, *files, *dirs).map_err(err)?)
            }
        };
        let rows = rows.map(|r| {
            spec.slice
                .indices(r.len())
                .into_iter()
                .map(|i| r[i].clone())
                .collect::<Vec<_>>()
        });
        let single = rows.is_none() && count == 1;
        if single {
            return Ok(None);
        }
        let mut out = Vec::new();
        // No item list, or an empty one: the count alone (an empty list
        // still gives its variables, empty).
        let rows = match rows {
            Some(r) if !r.is_empty() => r.into_iter().map(Some).collect(),
            _ => vec![None],
        };
        for (row, item) in rows.iter().enumerate() {
            let vars = match item {
                Some(item) => split_item(item, &spec.vars),
                None => spec
                    .vars
                    .iter()
                    .map(|v| (v.clone(), String::new()))
                    .collect(),
            };
            for step in 0..count.max(1) {
                out.push(Pass {
                    vars: vars.clone(),
                    row,
                    step,
                    id: out.len(),
                });
            }
        }
        Ok(Some(out))
    }
}

/// Non-blank lines, trimmed (`getline_trim`).
fn lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

/// The count before the variables, evaluated; 1 when none is given.
fn count(text: &str) -> Result<i64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(1);
    }
    let e = classad::parse_expr(t).map_err(|_| format!("invalid TRANSFORM count '{t}'"))?;
    match Evaluator::new().eval(&e, &Scope::empty()) {
        Value::Int(i) if i >= 0 => Ok(i),
        _ => Err(format!("invalid TRANSFORM count '{t}'")),
    }
}

/// `set_iter_item`: the first variable takes the text up to the first `,`,
/// space or tab; each later one starts after that separator and the spaces
/// or tabs after it; the last takes the rest of the item.
fn split_item(item: &str, vars: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = item;
    for (i, v) in vars.iter().enumerate() {
        if i + 1 == vars.len() {
            out.push((v.clone(), rest.to_string()));
            break;
        }
        match rest.find([',', ' ', '\t']) {
            Some(p) => {
                out.push((v.clone(), rest[..p].to_string()));
                rest = rest[p + 1..].trim_start_matches([' ', '\t']);
            }
            None => {
                out.push((v.clone(), rest.to_string()));
                rest = "";
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passes(rules: &str) -> Vec<Pass> {
        let t = Transform::parse_rules_file(rules, "r").unwrap();
        t.passes(&Macros::new(), &Config::defaults(), Path::new("/"))
            .unwrap()
            .unwrap_or_default()
    }

    fn values(rules: &str, var: &str) -> Vec<String> {
        passes(rules)
            .into_iter()
            .map(|p| {
                p.vars
                    .into_iter()
                    .find(|(n, _)| n == var)
                    .map(|(_, v)| v)
                    .unwrap_or_default()
            })
            .collect()
    }

    #[test]
    fn counts_and_items() {
        assert_eq!(passes("SET A 1\nTRANSFORM 5").len(), 5);
        assert!(passes("SET A 1\nTRANSFORM 1").is_empty());
        assert_eq!(
            values("TRANSFORM argument in (2.0, 100, \"test\")", "argument"),
            vec!["2.0", "100", "\"test\""]
        );
        assert_eq!(
            values("TRANSFORM 2 argument in (2.0, 100)", "argument"),
            vec!["2.0", "2.0", "100", "100"]
        );
        let p = passes("TRANSFORM 2 a in (x y)");
        assert_eq!(
            p.iter().map(|p| (p.row, p.step, p.id)).collect::<Vec<_>>(),
            vec![(0, 0, 0), (0, 1, 1), (1, 0, 2), (1, 1, 3)]
        );
        assert_eq!(values("TRANSFORM in (a b)", "Item"), vec!["a", "b"]);
    }

    #[test]
    fn rows_from_a_block_split_over_the_variables() {
        let rules = "SET A 1\nTRANSFORM m1, m2 from (\n  1000 120.0\n  2000 128.0 extra\n)\n";
        assert_eq!(values(rules, "m1"), vec!["1000", "2000"]);
        assert_eq!(values(rules, "m2"), vec!["120.0", "128.0 extra"]);
        assert_eq!(
            split_item("a,  b,c", &["x".into(), "y".into(), "z".into()])[1].1,
            "b"
        );
    }

    #[test]
    fn text_after_transform_in_a_rules_file_is_an_error() {
        let e = Transform::parse_rules_file("TRANSFORM 2\nSET A 1", "r.xfm").unwrap_err();
        assert_eq!(
            e.to_string(),
            "r.xfm, line 2: TRANSFORM (line 1) must be the last statement of a rules file"
        );
        let e = Transform::parse_rules_file("TRANSFORM a from (\n x\n", "r.xfm").unwrap_err();
        assert!(
            e.to_string().contains("without finding closing brace"),
            "{e}"
        );
    }
}
