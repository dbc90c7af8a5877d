//! `tern_eval`: evaluates ClassAd expressions, as HTCondor's `classad_eval`.
//!
//! Arguments are taken in order. An ad (`[a = 1]`) or an assignment
//! (`a = 1`, `a = 1; b = 2`) updates the context ad, which starts empty;
//! anything else is an expression, evaluated in the context ad and printed in
//! new syntax. Before the first result, and before the first result after the
//! context ad changes, the context ad itself is printed, unless `-quiet` came
//! earlier. `-my-file` replaces the context ad with one read from a file;
//! `-target-file` reads a second ad and puts both into a match, so `TARGET.x`
//! works.
//!
//! Every argument and file is parsed before anything is evaluated, so a
//! syntax error anywhere prints nothing but the error.

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;

use clap::{ArgMatches, Parser};

use super::{CliError, parse_args_with, run_tool};
use crate::classad::unparse::{ad_to_string, value_to_string};
use crate::classad::{
    ClassAd, Evaluator, Expr, MatchContext, ParseError, Scope, parse_ad, parse_ads_any, parse_expr,
};

/// Evaluate ClassAd expressions in the context of an ad.
///
/// Each argument is an ad (`'[a = 1; b = 2]'`), an assignment (`'a = 1'`) or
/// an expression (`'a + b'`), taken in order. Ads and assignments update the
/// context ad, which starts empty; each expression is evaluated in the
/// context ad and its value printed on its own line, in new ClassAd syntax.
/// The context ad is printed before the first result and again before the
/// next result whenever it has changed, until -quiet. Options and arguments
/// may be mixed freely and take effect in order; options may be written with
/// one dash or two and shortened to any unique prefix.
#[derive(Parser, Debug)]
#[command(
    name = "tern_eval",
    version,
    after_help = "Examples:\n  \
        tern_eval 'x = 5' 'x * 2'\n  \
        tern_eval -quiet '[Memory = 2048]' 'Memory >= 1024'\n  \
        tern_eval -my-file job.ad -target-file machine.ad 'TARGET.Memory >= MY.RequestMemory'"
)]
pub struct Args {
    /// Replace the context ad (MY) with the first ad in FILE (new syntax,
    /// old syntax as `condor_q -long` prints it, or JSON)
    #[arg(
        long = "my-file",
        visible_alias = "file",
        alias = "ad-file",
        value_name = "FILE"
    )]
    pub my_file: Vec<PathBuf>,

    /// Evaluate from here on in a match with the first ad in FILE as TARGET
    #[arg(long = "target-file", value_name = "FILE")]
    pub target_file: Vec<PathBuf>,

    /// From here on print only results, never the context ad
    #[arg(long, action = clap::ArgAction::Count)]
    pub quiet: u8,

    /// Accepted for compatibility with classad_eval; has no effect
    #[arg(long)]
    pub debug: bool,

    /// Ads, assignments and expressions
    #[arg(value_name = "AD|ASSIGNMENT|EXPR")]
    pub items: Vec<String>,

    /// Where arguments that start with a dash but are no option go (`-x`,
    /// `-1 + y`), so they stay expressions like the rest.
    #[arg(long = STRAYS, hide = true, allow_hyphen_values = true)]
    pub dash_items: Vec<String>,
}

/// The hidden option that carries expressions starting with a dash.
const STRAYS: &str = "dash-item";

/// One step of a run, parsed and ready to act on.
#[derive(Debug)]
pub enum Step {
    /// Replace the context ad.
    SetMy(ClassAd),
    /// Evaluate in a match with this ad from now on.
    SetTarget(ClassAd),
    /// Stop printing the context ad.
    Quiet,
    /// Update the context ad with these attributes.
    Update(ClassAd),
    /// Evaluate and print.
    Eval(Expr),
}

pub fn main() -> ExitCode {
    run_tool("tern_eval", run)
}

/// The whole tool: parse every argument and file, then evaluate.
pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (_, matches) = parse_args_with::<Args>(argv, Some(STRAYS))?;
    let steps = prepare(&matches)?;
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    evaluate(&steps, &mut out)?;
    out.flush()?;
    Ok(())
}

/// Turns the command line into steps in the order they were given: options
/// and arguments take effect where they stand.
pub fn prepare(m: &ArgMatches) -> Result<Vec<Step>, CliError> {
    enum Raw<'a> {
        My(&'a PathBuf),
        Target(&'a PathBuf),
        Quiet,
        Item(&'a String),
    }
    let mut raw: Vec<(usize, Raw)> = Vec::new();
    let paths = |id: &str| -> Vec<(usize, &PathBuf)> {
        match (m.indices_of(id), m.get_many::<PathBuf>(id)) {
            (Some(i), Some(v)) => i.zip(v).collect(),
            _ => Vec::new(),
        }
    };
    raw.extend(paths("my_file").into_iter().map(|(i, p)| (i, Raw::My(p))));
    raw.extend(
        paths("target_file")
            .into_iter()
            .map(|(i, p)| (i, Raw::Target(p))),
    );
    if let Some(i) = m.indices_of("quiet") {
        raw.extend(i.map(|i| (i, Raw::Quiet)));
    }
    for id in ["items", "dash_items"] {
        if let (Some(i), Some(v)) = (m.indices_of(id), m.get_many::<String>(id)) {
            raw.extend(i.zip(v).map(|(i, s)| (i, Raw::Item(s))));
        }
    }
    raw.sort_by_key(|(i, _)| *i);
    let mut item = 0;
    raw.into_iter()
        .map(|(_, r)| match r {
            Raw::My(p) => load_ad(p).map(Step::SetMy),
            Raw::Target(p) => load_ad(p).map(Step::SetTarget),
            Raw::Quiet => Ok(Step::Quiet),
            Raw::Item(s) => {
                item += 1;
                classify(item, s)
            }
        })
        .collect()
}

/// Runs the steps, writing results (and context ads) to `out`.
pub fn evaluate(steps: &[Step], out: &mut impl Write) -> io::Result<()> {
    let mut my = ClassAd::new();
    let mut target: Option<Rc<ClassAd>> = None;
    let mut quiet = false;
    let mut changed = true;
    for step in steps {
        match step {
            Step::SetMy(ad) => {
                my = ad.clone();
                changed = true;
            }
            Step::SetTarget(ad) => target = Some(Rc::new(ad.clone())),
            Step::Quiet => quiet = true,
            Step::Update(ad) => {
                my.update(ad);
                changed = true;
            }
            Step::Eval(e) => {
                if changed && !quiet {
                    writeln!(out, "{}", ad_to_string(&my))?;
                }
                changed = false;
                let me = Rc::new(my.clone());
                let v = match &target {
                    Some(t) => {
                        let ctx = MatchContext::new(me, t.clone());
                        Evaluator::new().eval(e, ctx.left())
                    }
                    None => Evaluator::new().eval(e, &Scope::root(me)),
                };
                writeln!(out, "{}", value_to_string(&v))?;
            }
        }
    }
    Ok(())
}

/// Decides what argument `n` is, the way `classad_eval` does: a whole ad,
/// then the attributes of an ad without its brackets, then an expression.
fn classify(n: usize, text: &str) -> Result<Step, CliError> {
    let as_ad = parse_ad(text);
    if let Ok(ad) = as_ad {
        return Ok(Step::Update(ad));
    }
    let as_body = parse_ad(&format!("[{text}]"));
    if let Ok(ad) = as_body {
        return Ok(Step::Update(ad));
    }
    let as_expr = parse_expr(text);
    let err = match as_expr {
        Ok(e) => return Ok(Step::Eval(e)),
        Err(e) => e,
    };
    // Report the reading the user most likely meant.
    let err = if text.trim_start().starts_with('[') {
        as_ad.err().unwrap_or(err)
    } else if looks_like_assignment(text) {
        match as_body {
            Err(mut e) => {
                if e.line == 1 {
                    e.col = e.col.saturating_sub(1).max(1);
                }
                e
            }
            Ok(_) => err,
        }
    } else {
        err
    };
    let one_line = !text.contains('\n');
    Err(CliError::Parse {
        what: format!("argument {n} '{}'", abbreviate(text)),
        line: (!one_line).then_some(err.line),
        col: err.col,
        msg: err.msg,
        // A word on its own ('=', '+') is what the shell makes of an
        // unquoted `x = 1`.
        hint: (!text.trim().contains(char::is_whitespace)).then(|| {
            "quote each ad, assignment and expression for the shell, e.g. tern_eval 'x = 1' 'x + 1'"
                .into()
        }),
    })
}

/// `name = ...`, but not `name == ...`, `name =?= ...` or `name =!= ...`.
fn looks_like_assignment(text: &str) -> bool {
    let t = text.trim_start();
    let name_len = t
        .char_indices()
        .take_while(|&(i, c)| c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit()))
        .count();
    if name_len == 0 {
        return false;
    }
    let rest = t[name_len..].trim_start();
    rest.starts_with('=')
        && !rest.starts_with("==")
        && !rest.starts_with("=?=")
        && !rest.starts_with("=!=")
}

/// An argument as quoted in an error message: long ones are cut.
fn abbreviate(text: &str) -> String {
    const MAX: usize = 60;
    let flat = text.replace('\n', "\\n");
    if flat.chars().count() <= MAX {
        flat
    } else {
        let cut: String = flat.chars().take(MAX).collect();
        format!("{cut}...")
    }
}

/// Reads the first ad of a file: new syntax, old syntax, JSON, or a
/// new-syntax list of ads (`{ [...], [...] }`, as `condor_q -long:new`
/// prints). An empty file is an empty ad.
pub fn load_ad(path: &Path) -> Result<ClassAd, CliError> {
    let bytes = std::fs::read(path).map_err(|source| CliError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let parsed = if is_ad_list(&text) {
        first_of_list(&text)
    } else {
        parse_ads_any(&text).map(|ads| ads.into_iter().next())
    };
    parsed
        .map(Option::unwrap_or_default)
        .map_err(|e| CliError::Parse {
            what: format!("file '{}'", path.display()),
            line: Some(e.line),
            col: e.col,
            msg: e.msg,
            hint: None,
        })
}

/// `{` then `[`: a ClassAd list, which no JSON document can be.
fn is_ad_list(text: &str) -> bool {
    text.trim_start()
        .strip_prefix('{')
        .is_some_and(|r| r.trim_start().starts_with('['))
}

fn first_of_list(text: &str) -> Result<Option<ClassAd>, ParseError> {
    match parse_expr(text)? {
        Expr::List(items) => Ok(items.iter().find_map(|e| match e {
            Expr::Ad(ad) => Some((**ad).clone()),
            _ => None,
        })),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(args: &[&str]) -> Result<Vec<Step>, CliError> {
        let mut argv = vec![OsString::from("tern_eval")];
        argv.extend(args.iter().map(OsString::from));
        let (_, m) = parse_args_with::<Args>(argv, Some(STRAYS))?;
        prepare(&m)
    }

    fn output(args: &[&str]) -> String {
        let mut out = Vec::new();
        evaluate(&steps(args).unwrap(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn assignments_ads_and_expressions_in_order() {
        assert_eq!(
            output(&["x = 1", "x + 1", "[y = 2]", "x + y", "x * 10"]),
            "[ x = 1 ]\n2\n[ x = 1; y = 2 ]\n3\n10\n"
        );
    }

    #[test]
    fn quiet_applies_from_where_it_stands() {
        assert_eq!(
            output(&["x = 1", "x", "-quiet", "x = 2", "x"]),
            "[ x = 1 ]\n1\n2\n"
        );
        assert_eq!(output(&["-q", "x = 1", "x"]), "1\n");
    }

    #[test]
    fn expressions_may_start_with_a_dash() {
        assert_eq!(
            output(&["-quiet", "-1", "-x", "- 2"]),
            "-1\nundefined\n-2\n"
        );
    }

    #[test]
    fn assignment_detection() {
        assert!(looks_like_assignment("x = 1"));
        assert!(looks_like_assignment(" Foo_2=bar"));
        assert!(!looks_like_assignment("x == 1"));
        assert!(!looks_like_assignment("x =?= 1"));
        assert!(!looks_like_assignment("x =!= 1"));
        assert!(!looks_like_assignment("2 = 1"));
        assert!(!looks_like_assignment("x + 1"));
    }

    #[test]
    fn argument_numbers_count_items_only() {
        let e = steps(&["-quiet", "x = 1", "x +"]).unwrap_err();
        assert!(
            e.to_string().starts_with("argument 2 'x +': column "),
            "{e}"
        );
    }

    #[test]
    fn ad_lists_are_not_json() {
        assert!(is_ad_list("{\n[ a = 1 ],\n[ a = 2 ]\n}\n"));
        assert!(!is_ad_list("{\"a\": 1}"));
        assert!(!is_ad_list("[ a = 1 ]"));
    }
}
