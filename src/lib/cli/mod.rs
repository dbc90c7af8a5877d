//! The command-line tools: one module per tool, plus the plumbing they share.
//!
//! Every tool `tern_x` has a module here holding its clap `Args` next to its
//! `run()`, and a three-line binary in `src/bin/` that calls its `main()`.
//! `main()` hands `run()` to [`run_tool`], which owns everything a tool must
//! not get wrong on its own: the clock check, the error message and exit
//! code, a broken pipe, and a stack deep enough for any expression.
//!
//! Arguments go through [`normalize_argv`] before clap sees them, so the
//! HTCondor spellings users type (`-constraint`, `-const`, `-af`, `-long`)
//! and the `--` ones both work; the option table is the tool's clap command
//! itself, so a tool declares each option exactly once. The colon forms
//! (`-af:FLAGS`, `-wide:N`, `-dry-run:json`) are one table beside it,
//! [`COLON_FORMS`].

pub mod config_val;
pub mod continue_job;
pub mod edit;
pub mod env;
pub mod eval;
pub mod format;
pub mod history;
pub mod hold;
pub mod jobsel;
pub mod negotiate;
pub mod printmask;
pub mod prio;
pub mod q;
pub mod qedit;
pub mod release;
pub mod rm;
pub mod shadow;
pub mod status;
pub mod submit;
pub mod suspend;
pub mod userprio;
pub mod vacate_job;

use std::ffi::OsString;
use std::io::{self, Write};
use std::process::ExitCode;

use crate::sys::io_error_text as io_text;
use clap::error::ErrorKind;
use clap::{ArgMatches, Command, CommandFactory, FromArgMatches};

/// The stack every tool body runs on. Expressions nest as deep as their
/// author likes; the evaluator grows its own stack, but the parser, printer
/// and tool code get a generous one up front.
const TOOL_STACK: usize = 256 << 20;

/// Why a tool failed. Each variant carries what the user needs to find the
/// problem: the argument, file, line and column involved.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// clap rejected the arguments, or asked for help or the version (which
    /// are not failures: [`run_tool`] prints them and exits 0).
    #[error("{0}")]
    Clap(#[from] clap::Error),
    /// The arguments are wrong in a way clap cannot see.
    #[error("{msg}")]
    Usage { msg: String, hint: Option<String> },
    /// The environment the tool runs in is unusable (a malformed `TERN_NOW`).
    #[error("{msg}")]
    Environment { msg: String, hint: Option<String> },
    /// A syntax error in an argument or a file. `what` names it ("argument
    /// 3 'x +'", "file 'job.ad'"); `line` is left out for one-line inputs.
    #[error("{what}: {}column {col}: {msg}", line.map(|l| format!("line {l}, ")).unwrap_or_default())]
    Parse {
        what: String,
        line: Option<u32>,
        col: u32,
        msg: String,
        hint: Option<String>,
    },
    /// A file could not be read.
    #[error("cannot read '{path}': {}", io_text(.source))]
    Read {
        path: std::path::PathBuf,
        source: io::Error,
    },
    /// A library operation failed; the message names the file, line or
    /// job involved.
    #[error("{msg}")]
    Failed { msg: String, hint: Option<String> },
    /// The tool already said what went wrong (on stderr, in the format its
    /// HTCondor counterpart uses); only the exit code is left.
    #[error("exit status {0}")]
    Reported(u8),
    /// Writing the output failed. Any `io::Error` that reaches [`run_tool`]
    /// through `?` lands here; a broken pipe is not reported (see
    /// [`CliError::exit_code`]).
    #[error("cannot write the output: {}", io_text(.0))]
    Output(#[from] io::Error),
}

/// The machine's errors as a tool reports them. What `Machine::detect`
/// finds wrong is a slot knob (or the machine behind it), so the hint
/// points at the page that describes them; the slots table's own errors
/// have no hint to give.
impl From<crate::machine::MachineError> for CliError {
    fn from(e: crate::machine::MachineError) -> CliError {
        use crate::machine::MachineError as M;
        let hint = match &e {
            M::Config(_) | M::Knob { .. } | M::Detect { .. } => {
                Some("tern_status(1) describes the slot knobs".to_string())
            }
            _ => None,
        };
        CliError::Failed {
            msg: e.to_string(),
            hint,
        }
    }
}

/// A negotiation pass's errors keep the hints their layer's own
/// conversion gives (a queue error says what to do about the SPOOL).
impl From<crate::negotiator::NegotiatorError> for CliError {
    fn from(e: crate::negotiator::NegotiatorError) -> CliError {
        use crate::negotiator::NegotiatorError as N;
        match e {
            N::Queue(e) => env::queue_error(e),
            N::Config(e) => e.into(),
            N::Machine(e) => e.into(),
            e @ N::Io { .. } => CliError::Failed {
                msg: e.to_string(),
                hint: None,
            },
        }
    }
}

impl CliError {
    /// The process exit code: 2 for a tool used wrongly (bad options, bad
    /// environment), 0 for a reader that went away (`tern_q | head`), and 1
    /// for everything else.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Clap(e) => match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => 0,
                _ => 2,
            },
            CliError::Usage { .. } | CliError::Environment { .. } => 2,
            CliError::Output(e) if e.kind() == io::ErrorKind::BrokenPipe => 0,
            CliError::Reported(code) => *code,
            CliError::Parse { .. }
            | CliError::Read { .. }
            | CliError::Failed { .. }
            | CliError::Output(_) => 1,
        }
    }

    /// A `-constraint` argument that does not parse.
    pub fn constraint(text: &str, e: crate::classad::ParseError) -> CliError {
        CliError::Parse {
            what: format!("constraint '{text}'"),
            line: None,
            col: e.col,
            msg: e.msg,
            hint: None,
        }
    }

    /// A suggestion printed after the message, where one helps.
    pub fn hint(&self) -> Option<&str> {
        match self {
            CliError::Usage { hint, .. }
            | CliError::Environment { hint, .. }
            | CliError::Parse { hint, .. }
            | CliError::Failed { hint, .. } => hint.as_deref(),
            _ => None,
        }
    }
}

/// Runs a tool: checks `TERN_NOW`, runs `body` with the process arguments on
/// a thread with a large stack, and turns its result into an exit code,
/// printing `name: error: message` (and `hint: ...`) on failure.
pub fn run_tool<F>(name: &'static str, body: F) -> ExitCode
where
    F: FnOnce(Vec<OsString>) -> Result<(), CliError> + Send + 'static,
{
    if let Err(e) = check_clock() {
        return report(name, &e);
    }
    let argv: Vec<OsString> = std::env::args_os().collect();
    let worker = std::thread::Builder::new()
        .name(name.to_string())
        .stack_size(TOOL_STACK)
        .spawn(move || body(argv));
    let outcome = match worker {
        Ok(handle) => handle.join(),
        Err(e) => {
            return report(
                name,
                &CliError::Environment {
                    msg: format!("cannot start the worker thread: {e}"),
                    hint: None,
                },
            );
        }
    };
    match outcome {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => report(name, &e),
        // The panic message is already on stderr; 101 is Rust's panic code.
        Err(_) => ExitCode::from(101),
    }
}

/// Refuses a malformed `TERN_NOW`, and otherwise starts the clock now, so a
/// running clock (`TERN_NOW=N+`) counts from the start of the process.
fn check_clock() -> Result<(), CliError> {
    crate::clock::check_env().map_err(|msg| CliError::Environment {
        msg,
        hint: Some(
            "use TERN_NOW=1700000000 for a fixed clock, TERN_NOW=1700000000+ for one \
             that runs from there, or unset it for the system clock"
                .into(),
        ),
    })?;
    crate::clock::mode();
    // Programs this tool starts (a pass, shadows) read the same running
    // clock. No other thread exists yet, so changing the environment is
    // sound here.
    if let Some(v) = crate::clock::for_children() {
        crate::sys::env::set_before_threads("TERN_NOW", &v);
    }
    Ok(())
}

/// For tools that, like condor_q and condor_status, exit 1 on a bad
/// command line where the shared plumbing says 2: the error is reported
/// now, as every tool reports it, and the exit code becomes 1. Help and
/// version stay 0.
pub fn usage_exits_one(name: &str, e: CliError) -> CliError {
    if e.exit_code() != 2 {
        return e;
    }
    let _ = report(name, &e);
    CliError::Reported(1)
}

/// Prints the error the way every tool does and returns its exit code.
fn report(name: &str, e: &CliError) -> ExitCode {
    let code = e.exit_code();
    match e {
        // Help and version go to stdout; a reader that went away is fine.
        CliError::Clap(ce) if code == 0 => {
            let _ = write!(io::stdout(), "{}", ce.render());
            let _ = io::stdout().flush();
            return ExitCode::SUCCESS;
        }
        // Help in place of an error message: no `error:` in front of it.
        CliError::Clap(ce) if ce.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = write!(io::stderr(), "{}", ce.render());
            return ExitCode::from(code);
        }
        CliError::Reported(_) => return ExitCode::from(code),
        // A broken pipe: the reader has all it wanted.
        _ if code == 0 => return ExitCode::SUCCESS,
        _ => {}
    }
    let mut msg = match e {
        CliError::Clap(ce) => clap_message(ce),
        other => other.to_string(),
    };
    while msg.ends_with('\n') {
        msg.pop();
    }
    let mut text = format!("{name}: error: {msg}\n");
    if let Some(h) = e.hint() {
        text.push_str(&format!("hint: {h}\n"));
    }
    let _ = io::stderr().write_all(text.as_bytes());
    ExitCode::from(code)
}

/// clap's rendering of a usage error, less its own `error: ` prefix (the
/// tool adds `tern_x: error: `).
fn clap_message(e: &clap::Error) -> String {
    let text = e.render().to_string();
    match text.strip_prefix("error: ") {
        Some(rest) => rest.to_string(),
        None => text,
    }
}

/// Normalises `argv` and parses it with the clap derive `A`. The matches are
/// returned too, for tools that need the order of their arguments
/// (`ArgMatches::indices_of`).
pub fn parse_args<A: CommandFactory + FromArgMatches>(
    argv: Vec<OsString>,
) -> Result<(A, ArgMatches), CliError> {
    parse_args_with::<A>(argv, None)
}

/// [`parse_args`] for tools whose positional arguments may themselves start
/// with a dash (`tern_eval '-x'`): such an argument that is no option is
/// passed on as the value of the long option `strays` (see
/// [`normalize_argv`]).
pub fn parse_args_with<A: CommandFactory + FromArgMatches>(
    argv: Vec<OsString>,
    strays: Option<&str>,
) -> Result<(A, ArgMatches), CliError> {
    let mut cmd = A::command();
    let argv = normalize_argv(&mut cmd, argv, strays)?;
    let matches = cmd.try_get_matches_from(argv)?;
    let args = A::from_arg_matches(&matches)?;
    Ok((args, matches))
}

/// Rewrites HTCondor-style options into the `--name` form clap expects.
///
/// `-name` and `--name` (with an optional `=value`) become `--name` when
/// `name` is one of `cmd`'s long options or aliases, or a prefix of exactly
/// one of them; a prefix of several is an error naming them all. A colon
/// form of [`COLON_FORMS`] (`-af:jh`) becomes the options it stands for
/// when `cmd` has them. A single letter that is one of `cmd`'s short
/// options stays as it is. Left alone: `argv[0]`, a lone `-`, everything
/// after `--`, the values of options that take one, and negative numbers. Anything else that matches no option is
/// an error, unless `strays` is set: then it and negative numbers become
/// `--<strays>=<arg>`, so a tool can take them as positional values without
/// clap's `allow_hyphen_values`, which would swallow every later option.
pub fn normalize_argv(
    cmd: &mut Command,
    argv: Vec<OsString>,
    strays: Option<&str>,
) -> Result<Vec<OsString>, CliError> {
    let mut n = Normalizer::new(cmd, strays, argv.len());
    let mut iter = argv.into_iter();
    n.out.extend(iter.next());
    for raw in iter {
        n.push(raw)?;
    }
    Ok(n.out)
}

/// The state of [`normalize_argv`] between arguments.
struct Normalizer<'a> {
    tool: String,
    table: OptionTable,
    strays: Option<&'a str>,
    out: Vec<OsString>,
    /// Arguments still to pass on as the last option's values.
    values_pending: usize,
    /// When the last option opens a list (`-af`): the error to give if its
    /// first value looks like an option, as condor_q refuses
    /// `-af:h -af ClusterId` ("requires at least one attribute").
    list_opened: Option<String>,
    /// After `--`: everything is passed on as it is.
    rest_verbatim: bool,
}

impl<'a> Normalizer<'a> {
    fn new(cmd: &mut Command, strays: Option<&'a str>, len: usize) -> Self {
        Normalizer {
            tool: cmd.get_name().to_string(),
            table: option_table(cmd),
            strays,
            out: Vec::with_capacity(len),
            values_pending: 0,
            list_opened: None,
            rest_verbatim: false,
        }
    }

    /// Passes on one argument, rewritten if it is an option.
    fn push(&mut self, raw: OsString) -> Result<(), CliError> {
        if self.rest_verbatim {
            self.out.push(raw);
            return Ok(());
        }
        if self.values_pending > 0 {
            return self.value(raw);
        }
        let Some(text) = raw.to_str().map(str::to_string) else {
            self.out.push(raw);
            return Ok(());
        };
        if text == "--" {
            self.rest_verbatim = true;
            self.out.push(raw);
            return Ok(());
        }
        if text == "-" {
            self.out.push(raw);
            return Ok(());
        }
        if is_negative_number(&text) {
            let stray = self.stray(&text);
            self.out.push(stray);
            return Ok(());
        }
        let Some(body) = text.strip_prefix("--").or_else(|| text.strip_prefix('-')) else {
            self.out.push(raw);
            return Ok(());
        };
        if let Some(words) = colon_form(&self.table.longs, body) {
            return self.colon(&text, words);
        }
        self.option(raw, &text, body)
    }

    /// One value of the last option, passed on verbatim; but the first
    /// value of a list must not be the next option.
    fn value(&mut self, raw: OsString) -> Result<(), CliError> {
        self.values_pending -= 1;
        if let Some(msg) = self.list_opened.take()
            && raw.to_str().is_some_and(|t| t.starts_with('-'))
        {
            return Err(CliError::Usage {
                msg,
                hint: Some(format!("{} -af Owner ClusterId", self.tool)),
            });
        }
        self.out.push(raw);
        Ok(())
    }

    /// A colon form: the options it stands for; the last one's values
    /// follow, if it takes any.
    fn colon(&mut self, text: &str, words: Vec<String>) -> Result<(), CliError> {
        if let Some(last) = words.last().filter(|w| !w.contains('=')) {
            let long = resolve_long(&self.table.longs, last, text)?;
            self.expect_values(long);
        }
        self.out
            .extend(words.into_iter().map(|w| OsString::from(format!("--{w}"))));
        Ok(())
    }

    /// `-name`, `--name` or `-name=value`: the long option it names (or a
    /// short option's letter, or a stray).
    fn option(&mut self, raw: OsString, text: &str, body: &str) -> Result<(), CliError> {
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (body, None),
        };
        let single_dash = !text.starts_with("--");
        let mut chars = name.chars();
        if single_dash
            && value.is_none()
            && let (Some(c), None) = (chars.next(), chars.next())
            && self.table.shorts.contains(&c)
        {
            self.out.push(raw);
            return Ok(());
        }
        let Some((long, takes)) = resolve_long(&self.table.longs, name, text)? else {
            if self.strays.is_none() {
                return Err(CliError::Usage {
                    msg: format!("unknown option '{text}'"),
                    hint: Some(format!(
                        "'{} -help' lists the options; put '--' before an argument that starts with '-'",
                        self.tool
                    )),
                });
            }
            let stray = self.stray(text);
            self.out.push(stray);
            return Ok(());
        };
        match value {
            Some(v) => self.out.push(OsString::from(format!("--{long}={v}"))),
            None => {
                self.out.push(OsString::from(format!("--{long}")));
                self.expect_values(Some((long, takes)));
            }
        }
        Ok(())
    }

    /// Counts the values the option `long` (as resolved) takes.
    fn expect_values(&mut self, long: Option<(String, usize)>) {
        let Some((long, takes)) = long else {
            return;
        };
        self.values_pending = takes;
        self.list_opened = self.table.list_error(&long);
    }

    /// An argument that names no option, for a tool that takes them.
    fn stray(&self, text: &str) -> OsString {
        match self.strays {
            Some(s) => OsString::from(format!("--{s}={text}")),
            None => OsString::from(text),
        }
    }
}

/// A long option's name (or alias), the index of its argument, and how
/// many values follow it.
type Long = (String, usize, usize);

/// What [`normalize_argv`] knows of a tool's options.
struct OptionTable {
    longs: Vec<Long>,
    shorts: Vec<char>,
    /// The options that take an open list of values (`-af`), by argument
    /// index, with the error for a list that is empty.
    lists: Vec<(usize, String)>,
}

impl OptionTable {
    /// The error for an empty list after the long option `long`, if it
    /// opens one.
    fn list_error(&self, long: &str) -> Option<String> {
        let (_, i, _) = self.longs.iter().find(|(l, _, _)| l == long)?;
        self.lists
            .iter()
            .find(|(j, _)| j == i)
            .map(|(_, msg)| msg.clone())
    }
}

/// The long options, the short letters and the open lists of `cmd`.
fn option_table(cmd: &mut Command) -> OptionTable {
    cmd.build();
    let mut longs: Vec<Long> = Vec::new();
    let mut shorts: Vec<char> = Vec::new();
    let mut lists = Vec::new();
    for (i, arg) in cmd.get_arguments().enumerate() {
        let takes = if arg.get_action().takes_values() {
            arg.get_num_args()
                .map(|r| r.min_values().max(1))
                .unwrap_or(1)
        } else {
            0
        };
        if let Some(l) = arg.get_long() {
            longs.push((l.to_string(), i, takes));
            if takes > 0
                && arg
                    .get_num_args()
                    .is_some_and(|r| r.max_values() == usize::MAX)
            {
                // The tools' only open lists are -af's, of attributes:
                // condor_q's words.
                lists.push((i, format!("-{l} requires at least one attribute")));
            }
        }
        for a in arg.get_all_aliases().into_iter().flatten() {
            longs.push((a.to_string(), i, takes));
        }
        shorts.extend(arg.get_short());
        shorts.extend(arg.get_all_short_aliases().into_iter().flatten());
    }
    OptionTable {
        longs,
        shorts,
        lists,
    }
}

/// An HTCondor option spelled `-name:value`, which clap cannot read, and
/// the long options it becomes.
#[derive(Debug)]
pub struct ColonForm {
    /// The option's name; any prefix of it at least `min` long is
    /// accepted too.
    pub name: &'static str,
    pub min: usize,
    /// Another name accepted whole (`af` for `autoformat`).
    pub alias: Option<&'static str>,
    /// The only value allowed after the colon; `None` takes any.
    pub value: Option<&'static str>,
    /// What it becomes: long options without their dashes, `{}` standing
    /// for the value. A form applies only to a tool whose command has
    /// every one of these options, so no other tool learns its spelling.
    pub becomes: &'static [&'static str],
}

/// Every colon form of every tool.
pub const COLON_FORMS: &[ColonForm] = &[
    // `-af:FLAGS ATTR...` (tern_q, tern_history, tern_status): the flags
    // go to a hidden option given right before the -af they belong to
    // (see printmask::PrintMask::from_matches).
    ColonForm {
        name: "autoformat",
        min: 5,
        alias: Some("af"),
        value: None,
        becomes: &["af-flags={}", "autoformat"],
    },
    // `-wide:N` (tern_q): cut lines to N columns.
    ColonForm {
        name: "wide",
        min: 1,
        alias: None,
        value: None,
        becomes: &["output-width={}"],
    },
    // `-dry-run:json` (tern_submit).
    ColonForm {
        name: "dry-run",
        min: 7,
        alias: None,
        value: Some("json"),
        becomes: &["json-dry-run"],
    },
];

/// The long options (without dashes) that `body`, an argument less its
/// dashes, becomes when it is a colon form the tool knows.
fn colon_form(longs: &[Long], body: &str) -> Option<Vec<String>> {
    let (name, value) = body.split_once(':')?;
    if name.is_empty() || name.contains('=') {
        return None;
    }
    let known = |word: &str| {
        let option = word.split_once('=').map_or(word, |(o, _)| o);
        longs.iter().any(|(l, _, _)| l == option)
    };
    let form = COLON_FORMS.iter().find(|f| {
        let named = f.alias == Some(name) || (name.len() >= f.min && f.name.starts_with(name));
        named && f.value.is_none_or(|v| v == value) && f.becomes.iter().all(|w| known(w))
    })?;
    Some(
        form.becomes
            .iter()
            .map(|w| w.replace("{}", value))
            .collect(),
    )
}

/// The long option `name` stands for: itself, or the one option it is a
/// prefix of. Returns the spelling to pass on and how many values follow.
fn resolve_long(
    longs: &[Long],
    name: &str,
    typed: &str,
) -> Result<Option<(String, usize)>, CliError> {
    if let Some((l, _, takes)) = longs.iter().find(|(l, _, _)| l == name) {
        return Ok(Some((l.clone(), *takes)));
    }
    let mut found: Vec<&Long> = Vec::new();
    for entry in longs.iter().filter(|(l, _, _)| l.starts_with(name)) {
        // Two aliases of one option are one candidate.
        if !found.iter().any(|f| f.1 == entry.1) {
            found.push(entry);
        }
    }
    match found.as_slice() {
        [] => Ok(None),
        [(l, _, takes)] => Ok(Some((l.clone(), *takes))),
        many => {
            let dash = if typed.starts_with("--") { "--" } else { "-" };
            let names: Vec<String> = many.iter().map(|(l, _, _)| format!("{dash}{l}")).collect();
            Err(CliError::Usage {
                msg: format!(
                    "option '{typed}' is ambiguous: it could be {}",
                    join_or(&names)
                ),
                hint: Some("type more of the option's name".into()),
            })
        }
    }
}

/// `a`, `a or b`, `a, b or c`.
fn join_or(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// `-1`, `-2.5`, `-.5`, `-1e3`: arguments that are values, not options.
fn is_negative_number(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('-') else {
        return false;
    };
    rest.starts_with(|c: char| c.is_ascii_digit() || c == '.') && rest.parse::<f64>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// A tool with the shapes of option real tools have.
    #[derive(Parser, Debug)]
    #[command(name = "tern_test", version)]
    struct T {
        #[arg(long)]
        constraint: Option<String>,
        #[arg(long)]
        columns: bool,
        #[arg(long = "autoformat", alias = "af", num_args = 1..)]
        autoformat: Vec<String>,
        #[arg(long)]
        long: bool,
        #[arg(long)]
        nobatch: bool,
        #[arg(long = "my-file", alias = "file")]
        my_file: Option<String>,
        #[arg(long, num_args = 2)]
        pair: Vec<String>,
        rest: Vec<String>,
    }

    fn norm(args: &[&str]) -> Result<Vec<String>, CliError> {
        let mut argv = vec![OsString::from("tern_test")];
        argv.extend(args.iter().map(OsString::from));
        let out = normalize_argv(&mut T::command(), argv, None)?;
        Ok(out[1..]
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect())
    }

    fn ok(args: &[&str], want: &[&str]) {
        assert_eq!(norm(args).unwrap(), want, "normalising {args:?}");
    }

    #[test]
    fn single_dash_long_options_become_double_dash() {
        ok(&["-long", "-nobatch"], &["--long", "--nobatch"]);
        ok(&["-constraint", "x == 1"], &["--constraint", "x == 1"]);
        ok(&["--long"], &["--long"]);
        ok(&["-help", "-version"], &["--help", "--version"]);
    }

    #[test]
    fn unique_prefixes_and_aliases_resolve() {
        ok(&["-const", "x"], &["--constraint", "x"]);
        ok(&["--cons", "x"], &["--constraint", "x"]);
        ok(&["-af", "Owner"], &["--af", "Owner"]);
        ok(&["-auto", "Owner"], &["--autoformat", "Owner"]);
        ok(&["-lo"], &["--long"]);
        ok(&["-file", "f"], &["--file", "f"]);
        ok(&["-my", "f"], &["--my-file", "f"]);
        ok(&["-nob"], &["--nobatch"]);
    }

    #[test]
    fn equals_values_keep_their_value() {
        ok(&["-const=x == -1"], &["--constraint=x == -1"]);
        ok(&["--my=a=b"], &["--my-file=a=b"]);
    }

    #[test]
    fn ambiguous_prefix_names_every_candidate() {
        let e = norm(&["-co", "x"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "option '-co' is ambiguous: it could be -constraint or -columns"
        );
        assert_eq!(e.exit_code(), 2);
        let e = norm(&["--co=1"]).unwrap_err();
        assert!(
            e.to_string().contains("could be --constraint or --columns"),
            "{e}"
        );
    }

    #[test]
    fn unknown_options_are_refused_or_passed_on() {
        let e = norm(&["-zzz", "x"]).unwrap_err();
        assert_eq!(e.to_string(), "unknown option '-zzz'");
        assert_eq!(e.exit_code(), 2);
        assert!(e.hint().unwrap().starts_with("'tern_test -help' lists"));
        let mut argv = vec![OsString::from("t")];
        argv.extend(["-zzz", "-1", "-long", "x", "-"].map(OsString::from));
        let out = normalize_argv(&mut T::command(), argv, Some("item")).unwrap();
        assert_eq!(
            out[1..],
            ["--item=-zzz", "--item=-1", "--long", "x", "-"].map(OsString::from)
        );
    }

    #[test]
    fn values_of_options_are_left_alone() {
        ok(&["-constraint", "-long"], &["--constraint", "-long"]);
        ok(
            &["-my-file", "-nobatch", "-long"],
            &["--my-file", "-nobatch", "--long"],
        );
        ok(
            &["-pair", "-a", "-b", "-long"],
            &["--pair", "-a", "-b", "--long"],
        );
    }

    #[test]
    fn numbers_dashes_shorts_and_unknowns_are_left_alone() {
        ok(
            &["-1", "-2.5", "-.5", "-1e3"],
            &["-1", "-2.5", "-.5", "-1e3"],
        );
        ok(&["-"], &["-"]);
        ok(&["-h", "-V"], &["-h", "-V"]);
        ok(&["--", "-long", "-const"], &["--", "-long", "-const"]);
    }

    /// A tool with every colon form's options.
    #[derive(Parser, Debug)]
    #[command(name = "tern_colons")]
    struct C {
        #[arg(long = "autoformat", alias = "af", num_args = 1..)]
        autoformat: Vec<String>,
        #[arg(long = "af-flags", hide = true)]
        af_flags: Vec<String>,
        #[arg(long)]
        wide: bool,
        #[arg(long = "output-width", hide = true)]
        output_width: Option<usize>,
        #[arg(long = "dry-run")]
        dry_run: bool,
        #[arg(long = "json-dry-run", hide = true)]
        json_dry_run: bool,
        #[arg(long)]
        constraint: Option<String>,
        #[arg(long, num_args = 2)]
        format: Vec<String>,
    }

    fn colons(args: &[&str]) -> Result<Vec<String>, CliError> {
        let mut argv = vec![OsString::from("tern_colons")];
        argv.extend(args.iter().map(OsString::from));
        let out = normalize_argv(&mut C::command(), argv, None)?;
        Ok(out[1..]
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect())
    }

    #[test]
    fn colon_forms_become_hidden_options() {
        let ok = |args: &[&str], want: &[&str]| {
            assert_eq!(colons(args).unwrap(), want, "normalising {args:?}");
        };
        ok(
            &["-af:jl", "A", "B"],
            &["--af-flags=jl", "--autoformat", "A", "B"],
        );
        ok(
            &["--autoformat:h", "A"],
            &["--af-flags=h", "--autoformat", "A"],
        );
        ok(&["-autof:V", "A"], &["--af-flags=V", "--autoformat", "A"]);
        // The attribute right after the flags is a value, whatever it is.
        ok(&["-af:", "x:y"], &["--af-flags=", "--autoformat", "x:y"]);
        ok(&["-wide:90"], &["--output-width=90"]);
        ok(&["-w:90"], &["--output-width=90"]);
        ok(&["-dry-run:json"], &["--json-dry-run"]);
        ok(&["--dry-run:json"], &["--json-dry-run"]);
        // Values of options are left alone, colons and all.
        ok(
            &["-constraint", "-af:x", "-format", "-af:y", "-wide:1"],
            &["--constraint", "-af:x", "--format", "-af:y", "-wide:1"],
        );
        ok(&["-const=a:b"], &["--constraint=a:b"]);
    }

    #[test]
    fn an_autoformat_list_without_attributes_is_a_usage_error() {
        // condor_q: "-autoformat requires at least one attribute parameter"
        // when the next argument starts with '-', colon form or not; the
        // next -af used to be taken as the first one's attribute.
        for args in [
            &["-af:h", "-af", "ClusterId"][..],
            &["-af", "-af", "ClusterId"],
            &["-af:", "-x"],
            &["-autoformat:j", "-const", "true", "-af", "Owner"],
        ] {
            let e = colons(args).unwrap_err();
            assert_eq!(e.to_string(), "-autoformat requires at least one attribute");
            assert_eq!(e.exit_code(), 2, "{args:?}");
        }
        // Only the first value is checked: a later one is clap's to read.
        assert_eq!(
            colons(&["-af:h", "A", "-af", "B"]).unwrap(),
            ["--af-flags=h", "--autoformat", "A", "--af", "B"]
        );
    }

    #[test]
    fn colon_forms_outside_their_table_are_unknown() {
        for bad in ["-a:x", "-auto:x", "-dry-run:xml", "-dry:json", "-x:1"] {
            let e = colons(&[bad]).unwrap_err();
            assert_eq!(e.to_string(), format!("unknown option '{bad}'"));
        }
        // A tool without the hidden options does not learn the spelling.
        let e = norm(&["-af:j", "Owner"]).unwrap_err();
        assert_eq!(e.to_string(), "unknown option '-af:j'");
    }

    #[test]
    fn normalised_args_parse() {
        let argv = [
            "tern_test",
            "-const",
            "JobStatus == 1",
            "-nob",
            "-af",
            "Owner",
            "Cmd",
        ];
        let (t, _) = parse_args::<T>(argv.iter().map(OsString::from).collect()).unwrap();
        assert_eq!(t.constraint.as_deref(), Some("JobStatus == 1"));
        assert!(t.nobatch);
        assert_eq!(t.autoformat, ["Owner", "Cmd"]);
    }

    #[test]
    fn help_and_version_exit_zero_and_usage_errors_two() {
        let run = |a: &[&str]| {
            let mut argv = vec![OsString::from("tern_test")];
            argv.extend(a.iter().map(OsString::from));
            parse_args::<T>(argv).unwrap_err()
        };
        let v = run(&["-version"]);
        assert_eq!(v.exit_code(), 0);
        let CliError::Clap(ce) = &v else {
            panic!("{v:?}")
        };
        assert_eq!(ce.render().to_string(), "tern_test 0.1.0\n");
        assert_eq!(run(&["-help"]).exit_code(), 0);
        assert_eq!(run(&["--help"]).exit_code(), 0);
        let bad = run(&["--columns=yes"]);
        assert_eq!(bad.exit_code(), 2);
        let CliError::Clap(ce) = &bad else {
            panic!("{bad:?}")
        };
        assert!(
            clap_message(ce).starts_with("unexpected value 'yes'"),
            "{bad}"
        );
    }

    #[test]
    fn broken_pipe_is_success_other_output_errors_are_not() {
        let pipe = CliError::from(io::Error::from(io::ErrorKind::BrokenPipe));
        assert_eq!(pipe.exit_code(), 0);
        let full = CliError::from(io::Error::from(io::ErrorKind::StorageFull));
        assert_eq!(full.exit_code(), 1);
    }

    #[test]
    fn parse_errors_name_line_only_when_it_helps() {
        let e = CliError::Parse {
            what: "argument 2 'x +'".into(),
            line: None,
            col: 4,
            msg: "expected an expression".into(),
            hint: None,
        };
        assert_eq!(
            e.to_string(),
            "argument 2 'x +': column 4: expected an expression"
        );
        let e = CliError::Parse {
            what: "file 'a.ad'".into(),
            line: Some(3),
            col: 1,
            msg: "bad".into(),
            hint: None,
        };
        assert_eq!(e.to_string(), "file 'a.ad': line 3, column 1: bad");
        assert_eq!(e.exit_code(), 1);
    }
}
