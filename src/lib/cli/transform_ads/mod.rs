//! `tern_transform_ads`: applies transform rules to ads read from files, as
//! HTCondor's `condor_transform_ads` (`src/condor_tools/transform_ads.cpp`).
//!
//! Rules come from `-rules FILE` (`-` for stdin), from the configuration
//! (`-jobroute NAME`, `-jobtransforms NAMES`, `-rules config://KNOB_%s/names`)
//! and apply in the order given; only the last may iterate. A rules file
//! with no commands is configuration: its definitions serve later
//! `config://` rules. `key=value` arguments set macros before any rules
//! are read. Every input is read and every transform run before anything
//! is written, so an error leaves no partial output; `-out FILE` is written
//! to a temporary name and renamed.
//!
//! condor_transform_ads's colon forms (`-in:json FILE`, `-out:json,nosort
//! FILE`, `-convertoldroutes:file FILE`) are turned into hidden long options
//! before the shared argument normaliser sees them.

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{ArgMatches, CommandFactory, Parser};

use super::{CliError, normalize_argv, run_tool};

mod convert;
use crate::classad::unparse::{ad_to_old, ad_to_string};
use crate::classad::{self, ClassAd};
use crate::config::Config;
use crate::transform::{Macros, Transform};
use convert::convert_routes;

/// Transform ClassAds with rules, as condor_transform_ads does.
///
/// Reads ads from each INFILE (or -in FILE; '-' is stdin), applies the
/// transforms given by -rules, -jobroute and -jobtransforms in order, and
/// writes the results to stdout (or -out FILE) in long form, attributes
/// sorted, a blank line after each ad. KEY=VALUE arguments set transform
/// macros before the rules are read. Options may be written with one dash
/// or two and shortened to any unique prefix.
#[derive(Parser, Debug)]
#[command(
    name = "tern_transform_ads",
    version,
    disable_help_flag = true,
    after_help = "Examples:\n  \
        tern_transform_ads -rules route.xfm jobs.ads\n  \
        tern_q -long | tern_transform_ads -rules route.xfm -\n  \
        tern_transform_ads -jobroute Slurm -out:json routed.json -in:long jobs.ads\n  \
        tern_transform_ads -convertoldroutes"
)]
pub struct Args {
    /// Read transform rules from FILE ('-' for stdin; config://KNOB_%s/NAMES
    /// reads the knobs KNOB_<name> for each of NAMES)
    #[arg(long, value_name = "FILE")]
    pub rules: Vec<String>,

    /// Apply the JOB_TRANSFORM_<name> transforms of the configuration for
    /// each of NAMES (commas or spaces between them)
    #[arg(long, value_name = "NAMES")]
    pub jobtransforms: Vec<String>,

    /// Apply the route JOB_ROUTER_ROUTE_<NAME> of the configuration
    #[arg(long, value_name = "NAME")]
    pub jobroute: Vec<String>,

    /// Read ads from FILE ('-' for stdin); -in:FORM FILE reads them in FORM
    /// (long, json, new or auto)
    #[arg(long = "in", value_name = "FILE")]
    pub inputs: Vec<String>,

    /// Write the ads to FILE instead of stdout; -out:FORM[,nosort] FILE
    /// writes them in FORM (long, json or new), nosort keeping each ad's
    /// attributes in their order
    #[arg(long, value_name = "FILE")]
    pub out: Option<String>,

    /// Read and write ads in long form (the default output)
    #[arg(long)]
    pub long: bool,

    /// Read and write ads as JSON
    #[arg(long)]
    pub json: bool,

    /// XML ads: refused, tern has no XML form
    #[arg(long)]
    pub xml: bool,

    /// Say on stderr which ads and transforms are applied
    #[arg(long, short = 'v')]
    pub verbose: bool,

    /// Accepted for compatibility; the output is the same
    #[arg(long)]
    pub terse: bool,

    /// Accepted for compatibility; has no effect
    #[arg(long)]
    pub debug: bool,

    /// Print JOB_ROUTER_ENTRIES (with JOB_ROUTER_DEFAULTS) of the
    /// configuration as transform routes, or with -convertoldroutes:file
    /// FILE (or -convertoldroutes FILE) those of a configuration file
    #[arg(long)]
    pub convertoldroutes: bool,

    /// Print this help; -help rules describes the rules, -help convert
    /// -convertoldroutes
    #[arg(long)]
    pub help: bool,

    /// Input files and KEY=VALUE macro assignments
    #[arg(value_name = "INFILE|KEY=VALUE")]
    pub items: Vec<String>,

    /// `FORM:FILE` of an -in:FORM FILE.
    #[arg(long = "x-in-form", hide = true)]
    pub in_form: Vec<String>,

    /// The FORM of -out (from -out:FORM).
    #[arg(long = "x-out-format", hide = true)]
    pub out_format: Option<String>,

    /// The file of -convertoldroutes:file.
    #[arg(long = "x-old-routes-file", hide = true)]
    pub old_routes_file: Option<String>,
}

pub fn main() -> ExitCode {
    run_tool("tern_transform_ads", run)
}

const NAME: &str = "tern_transform_ads";

/// How ads are read or written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Long,
    Json,
    New,
    Auto,
}

fn form(text: &str, what: &str) -> Result<Form, CliError> {
    match text.to_ascii_lowercase().as_str() {
        "long" => Ok(Form::Long),
        "json" => Ok(Form::Json),
        "new" => Ok(Form::New),
        "auto" => Ok(Form::Auto),
        "xml" => Err(no_xml()),
        other => Err(usage(format!(
            "{what}: unknown ad form '{other}' (long, json, new or auto)"
        ))),
    }
}

fn no_xml() -> CliError {
    usage("XML ads are not supported; use -long or -json".into())
}

fn usage(msg: String) -> CliError {
    CliError::Usage {
        msg,
        hint: Some(format!("'{NAME} -help' lists the options")),
    }
}

/// `-in:FORM`, `-out:FORMS`, `-convertoldroutes:file` and `-debug:FLAGS`
/// rewritten as the hidden long options clap reads.
fn colon_forms(argv: Vec<OsString>) -> Result<Vec<OsString>, CliError> {
    let mut out = Vec::with_capacity(argv.len());
    let mut it = argv.into_iter().enumerate();
    while let Some((i, a)) = it.next() {
        let Some(text) = a.to_str().filter(|_| i > 0) else {
            out.push(a);
            continue;
        };
        let body = text
            .strip_prefix("--")
            .or_else(|| text.strip_prefix('-'))
            .filter(|b| b.contains(':'));
        let Some(body) = body else {
            out.push(a);
            continue;
        };
        let (name, value) = body.split_once(':').unwrap_or((body, ""));
        let is = |word: &str, min: usize| name.len() >= min && word.starts_with(name);
        if is("in", 1) {
            // The form travels with its file, so that it applies to this
            // -in alone.
            match it.next() {
                Some((_, file)) => {
                    let mut v = OsString::from(format!("--x-in-form={value}:"));
                    v.push(file);
                    out.push(v);
                }
                None => return Err(usage(format!("{text} requires another argument"))),
            }
        } else if is("out", 1) {
            out.push(format!("--x-out-format={value}").into());
            out.push("--out".into());
        } else if is("convertoldroutes", 4) {
            out.push("--convertoldroutes".into());
            // `:N` picks HTCondor's conversion styles; tern has one.
            if value
                .split(',')
                .any(|v| "file".starts_with(v) && !v.is_empty())
            {
                out.push("--x-old-routes-file".into());
            } else if value.parse::<i64>().is_err() {
                return Err(usage(format!("{text}: unknown option ':{value}'")));
            }
        } else if is("debug", 2) {
            out.push("--debug".into());
        } else {
            out.push(a);
        }
    }
    Ok(out)
}

/// The tool; a command line it cannot use exits 1, as condor_transform_ads
/// does.
pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    run_args(argv).map_err(exit_one)
}

fn run_args(argv: Vec<OsString>) -> Result<(), CliError> {
    if argv.len() <= 1 {
        // condor_transform_ads with no arguments prints its usage and fails.
        let mut err = io::stderr();
        write!(
            err,
            "{}",
            super::argv::help_text(&mut Args::command(), true)
        )?;
        return Err(CliError::Reported(1));
    }
    let mut cmd = Args::command();
    let argv = colon_forms(argv)?;
    let argv = normalize_argv(&mut cmd, argv, None).map_err(exit_one)?;
    let matches = cmd
        .try_get_matches_from(argv)
        .map_err(|e| exit_one(e.into()))?;
    let args = <Args as clap::FromArgMatches>::from_arg_matches(&matches)?;
    if args.help {
        return help(&args);
    }
    if args.xml {
        return Err(exit_one(no_xml()));
    }
    let mut cfg = Config::load()?;
    let mut base = Macros::new();
    let mut inputs = Vec::new();
    for (name, value) in key_values(&args)? {
        base.set(&name, &value);
    }
    if args.convertoldroutes {
        let file = args
            .old_routes_file
            .clone()
            .or_else(|| args.items.iter().find(|i| !i.contains('=')).cloned());
        return convert_routes(&cfg, file.as_deref());
    }
    let default_form = if args.json {
        Form::Json
    } else if args.long {
        Form::Long
    } else {
        Form::Auto
    };
    for (file, f) in input_files(&matches)? {
        inputs.push((file, f.unwrap_or(default_form)));
    }
    let (out_form, sort) = match &args.out_format {
        Some(spec) => out_form(spec, default_form)?,
        None => (default_form, true),
    };
    let out_form = if out_form == Form::Auto {
        Form::Long
    } else {
        out_form
    };
    let transforms = load_rules(&matches, &mut cfg)?;
    if transforms.is_empty() {
        return Err(exit_one(usage("no transform rules specified".into())));
    }
    if inputs.is_empty() {
        return Err(exit_one(usage(
            "no input file specified - nothing to transform".into(),
        )));
    }
    let dir = std::env::current_dir()?;
    let last = transforms.last().expect("not empty");
    if last.iterate_args().is_some() {
        base.set_iterating();
    }
    let passes = last
        .passes(&base, &cfg, &dir)
        .map_err(|e| failed(e.to_string()))?;
    let mut ads_out: Vec<ClassAd> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    let mut n = 0;
    for (file, f) in &inputs {
        if args.verbose {
            note!("# Applying transforms to ads from {file}");
        }
        for ad in read_ads(file, *f)? {
            n += 1;
            if args.verbose {
                note!("#   {}", identity(&ad, n));
            }
            match &passes {
                None => {
                    let mut a = ad.clone();
                    let mut m = base.clone();
                    apply_all(
                        &transforms,
                        &mut a,
                        &mut m,
                        &cfg,
                        args.verbose,
                        &mut warnings,
                    )?;
                    ads_out.push(a);
                }
                Some(passes) => {
                    // HTCondor keeps the macros of one item across its
                    // repetitions and starts each item afresh.
                    let mut m = base.clone();
                    for p in passes {
                        if p.step == 0 {
                            m = base.clone();
                        }
                        p.set_into(&mut m);
                        let mut a = ad.clone();
                        apply_all(
                            &transforms,
                            &mut a,
                            &mut m,
                            &cfg,
                            args.verbose,
                            &mut warnings,
                        )?;
                        ads_out.push(a);
                    }
                }
            }
        }
    }
    for w in &warnings {
        note!("{NAME}: warning: {w}");
    }
    let text = render(&ads_out, out_form, sort);
    match args.out.as_deref() {
        None | Some("-") => {
            let mut o = io::stdout().lock();
            o.write_all(text.as_bytes())?;
            o.flush()?;
        }
        Some(path) => write_atomically(Path::new(path), &text)?,
    }
    Ok(())
}

/// condor_transform_ads exits 1 on a bad command line.
fn exit_one(e: CliError) -> CliError {
    super::usage_exits_one(NAME, e)
}

fn failed(msg: String) -> CliError {
    CliError::Failed { msg, hint: None }
}

/// `-help`, `-help rules`, `-help convert`.
fn help(args: &Args) -> Result<(), CliError> {
    let mut o = io::stdout().lock();
    match args.items.first().map(String::as_str) {
        Some("rules") => o.write_all(RULES_HELP.as_bytes())?,
        Some(w) if w.len() >= 4 && "convert".starts_with(w) => {
            o.write_all(CONVERT_HELP.as_bytes())?;
            write!(o, "{}", super::argv::help_text(&mut Args::command(), true))?;
        }
        _ => write!(o, "{}", super::argv::help_text(&mut Args::command(), true))?,
    }
    Ok(())
}

const RULES_HELP: &str = "\nTransform rules:\n\n\
A rules file holds macro assignments (NAME = value), if/elif/else/endif and\n\
transform commands, run top to bottom. $(NAME) expands macros, then $(MY.attr)\n\
the ad's attributes, then configuration values.\n\n\
   SET     <attr> <expr>        Set <attr> to <expr>\n\
   EVALSET <attr> <expr>        Evaluate <expr> and set <attr> to the result\n\
   DEFAULT <attr> <expr>        Set <attr> to <expr> if the ad has no <attr>\n\
   COPY    <attr> <newattr>     Copy the value of <attr> to <newattr>\n\
   COPY    /<regex>/ <newattrs> Copy the attributes matching <regex>\n\
   RENAME  <attr> <newattr>     Rename <attr> to <newattr>\n\
   RENAME  /<regex>/ <newattrs> Rename the attributes matching <regex>\n\
   DELETE  <attr>               Delete <attr>\n\
   DELETE  /<regex>/            Delete the attributes matching <regex>\n\
   EVALMACRO <key> <expr>       Evaluate <expr> and set the macro <key> to it\n\
   REQUIREMENTS <expr>          Apply the transform only if <expr> is true\n\
   TRANSFORM [<N>] [<vars>] [in <list> | from <file> | matching <pattern>]\n\n\
In <newattrs>, \\0 is the whole matched name and \\1 to \\9 its groups. A TRANSFORM\n\
statement must be the last of a rules file; it takes the options of a submit\n\
file's queue statement. Without one, each ad is transformed once.\n\n";

const CONVERT_HELP: &str = "\nConverting old JobRouter routes:\n\n\
   tern_transform_ads -convertoldroutes\n\
   tern_transform_ads -convertoldroutes:file <config-file>\n\n\
The first form converts JOB_ROUTER_ENTRIES of the current configuration (with\n\
JOB_ROUTER_DEFAULTS); the second those of a configuration file. Each route is\n\
printed in the transform syntax of JOB_ROUTER_ROUTE_<name>.\n\n";

/// The `KEY=VALUE` arguments, checked.
fn key_values(args: &Args) -> Result<Vec<(String, String)>, CliError> {
    let mut out = Vec::new();
    for item in args.items.iter().filter(|i| i.contains('=')) {
        let (n, v) = item.split_once('=').expect("has '='");
        let mut name = n.trim().to_string();
        if let Some(attr) = name.strip_prefix('+') {
            name = format!("MY.{attr}");
        }
        if name.is_empty() || !crate::config::reader::is_macro_name(&name) {
            return Err(exit_one(usage(format!(
                "invalid attribute name '{}' for attrib=value assignment",
                n.trim()
            ))));
        }
        out.push((name, v.trim().to_string()));
    }
    Ok(out)
}

/// The input files in command-line order, each with the form of its
/// `-in:FORM`.
fn input_files(m: &ArgMatches) -> Result<Vec<(String, Option<Form>)>, CliError> {
    let mut v: Vec<(usize, String, Option<Form>)> = Vec::new();
    let take = |id: &str| -> Vec<(usize, String)> {
        match (m.indices_of(id), m.get_many::<String>(id)) {
            (Some(i), Some(s)) => i.zip(s.cloned()).collect(),
            _ => Vec::new(),
        }
    };
    for (i, f) in take("inputs") {
        v.push((i, f, None));
    }
    for (i, spec) in take("in_form") {
        let (f, file) = spec.split_once(':').unwrap_or(("", &spec));
        v.push((i, file.to_string(), Some(form(f, "-in")?)));
    }
    for (i, item) in take("items") {
        if !item.contains('=') {
            v.push((i, item, None));
        }
    }
    v.sort_by_key(|(i, _, _)| *i);
    Ok(v.into_iter().map(|(_, f, fm)| (f, fm)).collect())
}

/// `-out:FORM[,nosort]`.
fn out_form(spec: &str, default: Form) -> Result<(Form, bool), CliError> {
    let mut f = default;
    let mut sort = true;
    for w in spec.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        if w == "nosort" {
            sort = false;
        } else {
            f = form(w, "-out")?;
        }
    }
    Ok((f, sort))
}

/// The transforms of `-rules`, `-jobroute` and `-jobtransforms`, in
/// command-line order. Rules files without commands feed `cfg` instead.
fn load_rules(m: &ArgMatches, cfg: &mut Config) -> Result<Vec<Transform>, CliError> {
    let mut specs: Vec<(usize, String)> = Vec::new();
    let mut add = |id: &str, make: &dyn Fn(&str) -> String| {
        if let (Some(i), Some(v)) = (m.indices_of(id), m.get_many::<String>(id)) {
            specs.extend(i.zip(v).map(|(i, s)| (i, make(s))));
        }
    };
    add("rules", &|s| s.to_string());
    add("jobroute", &|s| format!("config://JOB_ROUTER_ROUTE_%s/{s}"));
    add("jobtransforms", &|s| {
        format!("config://JOB_TRANSFORM_%s/{s}")
    });
    specs.sort_by_key(|(i, _)| *i);
    let mut out: Vec<Transform> = Vec::new();
    for (_, spec) in specs {
        if out.last().is_some_and(|t| t.iterate_args().is_some()) {
            return Err(exit_one(usage(format!(
                "error at {spec}: the previous transform was an iterating transform, which must be last"
            ))));
        }
        if let Some(rest) = spec.strip_prefix("config://") {
            out.extend(config_rules(rest, cfg)?);
            continue;
        }
        let (text, origin) = if spec == "-" {
            let mut s = String::new();
            io::stdin().read_to_string(&mut s)?;
            (s, "<stdin>".to_string())
        } else {
            let text = std::fs::read_to_string(&spec).map_err(|e| CliError::Read {
                path: PathBuf::from(&spec),
                source: e,
            })?;
            (text, spec.clone())
        };
        let mut t =
            Transform::parse_rules_file(&text, &origin).map_err(|e| failed(e.to_string()))?;
        if !t.has_commands() && t.iterate_args().is_none() {
            // Only definitions: a configuration file for later config://
            // rules, as condor_transform_ads treats it.
            cfg.parse_str(&text, &origin)?;
            continue;
        }
        if t.name().is_none() {
            t.set_name(&origin);
        }
        out.push(t);
    }
    Ok(out)
}

/// `config://KNOB_%s/NAMES`: one transform per name (the knob itself when
/// no names are given). A knob that is not defined is an error.
fn config_rules(rest: &str, cfg: &Config) -> Result<Vec<Transform>, CliError> {
    let (pattern, list) = rest.split_once('/').unwrap_or((rest, ""));
    let mut names: Vec<&str> = list
        .split([',', ' ', '\t'])
        .filter(|s| !s.is_empty())
        .collect();
    if names.is_empty() {
        names.push("_");
    }
    let mut out = Vec::new();
    for name in names {
        let knob = pattern.replace("%s", name);
        let mut t = crate::transform::from_config(cfg, &knob)
            .map_err(|e| failed(e.to_string()))?
            .ok_or_else(|| failed(format!("{knob} is not defined in the configuration")))?;
        t.set_name(name);
        out.push(t);
    }
    Ok(out)
}

/// Applies every transform whose requirements the ad meets, in order.
fn apply_all(
    transforms: &[Transform],
    ad: &mut ClassAd,
    macros: &mut Macros,
    cfg: &Config,
    verbose: bool,
    warnings: &mut Vec<String>,
) -> Result<(), CliError> {
    for t in transforms {
        let matched = t.matches(ad);
        if verbose {
            note!(
                "#   Transform {} {}",
                t.name().unwrap_or(""),
                if matched { "" } else { "Skipped" }
            );
        }
        if !matched {
            continue;
        }
        let w = t
            .apply(ad, macros, cfg)
            .map_err(|e| failed(e.to_string()))?;
        warnings.extend(w);
    }
    Ok(())
}

/// How `-verbose` names an ad: its Name, its job id, or its number.
fn identity(ad: &ClassAd, n: usize) -> String {
    let rc = std::rc::Rc::new(ad.clone());
    if let Some(name) = rc.eval_str("Name") {
        return name;
    }
    match (rc.eval_int("ClusterId"), rc.eval_int("ProcId")) {
        (Some(c), Some(p)) => format!("Job {c}.{p}"),
        _ => format!("Ad {n}"),
    }
}

/// Reads the ads of one input.
fn read_ads(file: &str, f: Form) -> Result<Vec<ClassAd>, CliError> {
    let text = if file == "-" {
        let mut s = String::new();
        io::stdin().read_to_string(&mut s)?;
        s
    } else {
        std::fs::read_to_string(file).map_err(|e| CliError::Read {
            path: PathBuf::from(file),
            source: e,
        })?
    };
    let parsed = match f {
        Form::Long => classad::old::parse_old_ads(&text),
        Form::Json => classad::json::parse_json_ads(&text),
        Form::New | Form::Auto if is_ad_list(&text) => ad_list(&text),
        Form::New => classad::parse_ads(&text),
        Form::Auto => classad::parse_ads_any(&text),
    };
    parsed.map_err(|e| CliError::Parse {
        what: format!("ads file '{file}'"),
        line: Some(e.line),
        col: e.col,
        msg: e.msg,
        hint: None,
    })
}

/// `{` then `[`: a list of new-syntax ads as `-out:new` writes it (and
/// HTCondor's `-long:new`), which no JSON document can be.
fn is_ad_list(text: &str) -> bool {
    text.trim_start()
        .strip_prefix('{')
        .is_some_and(|r| r.trim_start().starts_with('['))
}

/// The ads of a `{ [...], [...] }` list.
fn ad_list(text: &str) -> Result<Vec<ClassAd>, classad::ParseError> {
    match classad::parse_expr(text)? {
        classad::Expr::List(items) => Ok(items
            .iter()
            .filter_map(|e| match e {
                classad::Expr::Ad(ad) => Some((**ad).clone()),
                _ => None,
            })
            .collect()),
        _ => Ok(Vec::new()),
    }
}

/// The output as condor_transform_ads's ad list writer makes it: empty ads
/// are left out.
fn render(ads: &[ClassAd], f: Form, sort: bool) -> String {
    let mut s = String::new();
    let ads: Vec<&ClassAd> = ads.iter().filter(|a| !a.is_empty()).collect();
    match f {
        Form::Json => {
            for (i, ad) in ads.iter().enumerate() {
                s.push_str(if i == 0 { "[\n" } else { ",\n" });
                s.push_str(&classad::json::ad_to_json(ad, 0));
                s.push('\n');
            }
            if !ads.is_empty() {
                s.push_str("]\n");
            }
        }
        Form::New => {
            for (i, ad) in ads.iter().enumerate() {
                s.push_str(if i == 0 { "{\n" } else { ",\n" });
                s.push_str(&ad_to_string(ad));
                s.push('\n');
            }
            if !ads.is_empty() {
                s.push_str("}\n");
            }
        }
        Form::Long | Form::Auto => {
            for ad in ads {
                s.push_str(&ad_to_old(ad, sort));
                s.push('\n');
            }
        }
    }
    s
}

/// Writes `text` to `path` through a temporary file in the same directory.
fn write_atomically(path: &Path, text: &str) -> Result<(), CliError> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    let fail = |e: io::Error| {
        failed(format!(
            "cannot write '{}': {}",
            path.display(),
            crate::sys::io_error_text(&e)
        ))
    };
    let mut f = std::fs::File::create(&tmp).map_err(fail)?;
    f.write_all(text.as_bytes()).map_err(fail)?;
    f.sync_all().map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail(e)
    })
}
