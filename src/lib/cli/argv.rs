//! HTCondor's spellings on clap: [`normalize_argv`] rewrites the options
//! users type (`-constraint`, `-const`, `-af:jh`, `-dry-run:json`) into the
//! `--name` forms clap derive expects, reading the option table from the
//! tool's clap command itself, so a tool declares each option once;
//! [`parse_args`] normalises and parses in one call.

use std::ffi::OsString;

use clap::{ArgMatches, Command, CommandFactory, FromArgMatches};

use super::CliError;

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

/// A tool's help as every tool prints it: the long help for `-help`, the
/// short one for `-h`, options written with one dash.
pub fn help_text(cmd: &mut Command, long: bool) -> String {
    let text = if long {
        cmd.render_long_help()
    } else {
        cmd.render_help()
    };
    single_dash(&text.to_string())
}

/// clap's help and messages with every long option written as HTCondor's
/// users type it, with one dash (`--constraint <EXPR>` becomes
/// `-constraint <EXPR>`); a lone `--` (the end of options) stays. A long
/// option is `--` at the start of a word (after a space, a bracket, a
/// quote, a comma or `|`) followed by a letter.
pub fn single_dash(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    let mut i = 0;
    while i + 2 < b.len() {
        let starts_word = i == 0
            || matches!(
                b[i - 1],
                b' ' | b'\n' | b'[' | b'(' | b'\'' | b'"' | b',' | b'|' | b'<'
            );
        if starts_word && b[i] == b'-' && b[i + 1] == b'-' && b[i + 2].is_ascii_alphabetic() {
            out.push_str(&text[last..i]);
            last = i + 1;
            i += 3;
            continue;
        }
        i += 1;
    }
    out.push_str(&text[last..]);
    out
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
    list_opened: Option<(String, String)>,
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
        if let Some((msg, example)) = self.list_opened.take()
            && raw.to_str().is_some_and(|t| t.starts_with('-'))
        {
            return Err(CliError::Usage {
                msg,
                hint: Some(format!("{} {example}", self.tool)),
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
    /// Each open list's argument, its error and its example.
    lists: Vec<(usize, String, String)>,
}

impl OptionTable {
    /// The error and example for an empty list after the long option
    /// `long`, if it opens one.
    fn list_error(&self, long: &str) -> Option<(String, String)> {
        let (_, i, _) = self.longs.iter().find(|(l, _, _)| l == long)?;
        self.lists
            .iter()
            .find(|(j, _, _)| j == i)
            .map(|(_, msg, example)| (msg.clone(), example.clone()))
    }
}

/// The long options, the short letters and the open lists of `cmd`.
fn option_table(cmd: &mut Command) -> OptionTable {
    cmd.build();
    let mut longs: Vec<Long> = Vec::new();
    let mut shorts: Vec<char> = Vec::new();
    let mut lists = Vec::new();
    for (i, arg) in cmd.get_arguments().enumerate() {
        // An option whose value may be left out (tern_submit's
        // `-dry-run [OUTPUT]`) takes none here: the next argument is
        // normalised as any other, and clap takes it for the value only
        // when it is no option.
        let takes = if arg.get_action().takes_values() {
            arg.get_num_args().map_or(1, |r| r.min_values())
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
                // -af's words are condor_q's; other lists (tern_watch_q's
                // -users, -clusters, ...) name what they take.
                let name = arg
                    .get_value_names()
                    .and_then(|v| v.first())
                    .map_or("VALUE".to_string(), |n| n.to_string());
                let attrs = name == "ATTR" || arg.get_id() == "autoformat";
                let what = if attrs {
                    "attribute".to_string()
                } else {
                    name.to_ascii_lowercase()
                };
                let example = if attrs {
                    "Owner ClusterId".to_string()
                } else {
                    name
                };
                lists.push((
                    i,
                    format!("-{l} requires at least one {what}"),
                    format!("-{l} {example}"),
                ));
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

    /// An option whose value may be left out takes the next argument only
    /// when that is no option: `-dry-run -append x` is two options.
    #[test]
    fn an_optional_value_is_never_the_next_option() {
        #[derive(Parser, Debug)]
        #[command(name = "tern_optional")]
        struct O {
            #[arg(long = "dry-run", num_args = 0..=1)]
            dry_run: Option<Option<String>>,
            #[arg(long)]
            append: Vec<String>,
            file: Option<String>,
        }
        let parse = |args: &[&str]| {
            let mut argv = vec![OsString::from("tern_optional")];
            argv.extend(args.iter().map(OsString::from));
            parse_args::<O>(argv).unwrap().0
        };
        let o = parse(&["-dry-run", "-append", "x", "job.sub"]);
        assert_eq!(o.dry_run, Some(None));
        assert_eq!(
            (o.append, o.file.as_deref()),
            (vec!["x".to_string()], Some("job.sub"))
        );
        let o = parse(&["-dry-run", "out", "job.sub"]);
        assert_eq!(o.dry_run, Some(Some("out".into())));
        assert_eq!(o.file.as_deref(), Some("job.sub"));
        let o = parse(&["-dry-run", "-", "-append", "x"]);
        assert_eq!(o.dry_run, Some(Some("-".into())));
        assert_eq!(parse(&["-dry-run"]).dry_run, Some(None));
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
    fn other_lists_name_what_they_take() {
        #[derive(clap::Parser, Debug)]
        #[command(name = "tern_watch_q")]
        struct W {
            #[arg(long, num_args = 1.., value_name = "USER")]
            users: Vec<String>,
            #[arg(long)]
            table: bool,
        }
        let argv = ["tern_watch_q", "-users", "-table"]
            .map(OsString::from)
            .to_vec();
        let e = normalize_argv(&mut W::command(), argv, None).unwrap_err();
        assert_eq!(e.to_string(), "-users requires at least one user");
        assert_eq!(e.hint(), Some("tern_watch_q -users USER"));
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
            super::super::clap_message(ce).starts_with("unexpected value 'yes'"),
            "{bad}"
        );
    }

    #[test]
    fn help_speaks_single_dash() {
        assert_eq!(
            single_dash("  -l, --long\n      --constraint <EXPR>  Only [alias: --const]\n"),
            "  -l, -long\n      -constraint <EXPR>  Only [alias: -const]\n"
        );
        // The end of options, a negative number, a dash inside a word and
        // an option in quotes.
        assert_eq!(
            single_dash("put -- before -1; re--try '--af' (--json)"),
            "put -- before -1; re--try '-af' (-json)"
        );
    }
}
