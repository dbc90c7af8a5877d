//! Shell completion for every tool: `tern_complete`.
//!
//! The shells' scripts (see [`scripts`]) are a few lines each that hand the
//! words of the command line to `tern_complete -- WORDS...`; everything
//! else happens here, read from the tool's clap definition at completion
//! time, so the completions can never fall behind the options. Options are
//! offered as HTCondor's users type them, with one dash (`-constraint`;
//! `--constraint` when the word being completed starts with two dashes),
//! option values by what they are (attribute names for `-af`,
//! `-constraint` and `-attributes`; files where a file is wanted), and
//! positional arguments from the queue: cluster and cluster.proc ids of the
//! queued jobs, those of the history for `tern_history`, knob names for
//! `tern_config_val`.

pub mod scripts;

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::{Arg, Command, CommandFactory, Parser};

use super::env::ToolEnv;
use super::{CliError, parse_args, run_tool};

/// Complete a tern command line, or print a shell's completion script.
///
/// With -shell, prints the script that makes bash, zsh or fish complete
/// every tern tool (./install.sh installs them). Otherwise the arguments
/// after -- are the words of a command line up to the cursor, the last
/// being the word to complete (empty for a new word); the candidates are
/// printed one per line, or the single line __files__ when a file name is
/// wanted.
#[derive(Parser, Debug)]
#[command(
    name = "tern_complete",
    version,
    after_help = "Examples:\n  tern_complete -shell bash > ~/.local/share/bash-completion/completions/tern_q\n  tern_complete -- tern_q -con\n  tern_complete -- tern_rm ''"
)]
pub struct Args {
    /// Print the completion script for SHELL (bash, zsh or fish)
    #[arg(long, value_name = "SHELL", value_parser = ["bash", "zsh", "fish"])]
    pub shell: Option<String>,

    /// The command line to complete: the tool's name, its arguments, and
    /// the word being completed
    #[arg(last = true, value_name = "WORDS")]
    pub words: Vec<String>,
}

pub fn main() -> ExitCode {
    run_tool("tern_complete", run)
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (args, _) = parse_args::<Args>(argv)?;
    let mut out = std::io::stdout().lock();
    if let Some(shell) = &args.shell {
        out.write_all(scripts::script(shell).as_bytes())?;
        return Ok(());
    }
    let Some((tool, rest)) = args.words.split_first() else {
        return Err(CliError::Usage {
            msg: "give -shell SHELL, or the words to complete after --".into(),
            hint: Some("tern_complete -- tern_q -con".into()),
        });
    };
    let tool = tool_name(tool);
    let (done, current) = match rest.split_last() {
        Some((cur, done)) => (done, cur.as_str()),
        None => (&[][..], ""),
    };
    match candidates(&tool, done, current, &Sources) {
        Candidates::Files => out.write_all(b"__files__\n")?,
        Candidates::Words(words) => {
            for w in words {
                out.write_all(w.as_bytes())?;
                out.write_all(b"\n")?;
            }
        }
    }
    Ok(())
}

/// The tool a command word names: its file name, `condor_X` read as
/// `tern_X` (links named as HTCondor's tools complete too).
fn tool_name(word: &str) -> String {
    let base = word.rsplit('/').next().unwrap_or(word);
    match base.strip_prefix("condor_") {
        Some(rest) => format!("tern_{rest}"),
        None => base.to_string(),
    }
}

/// The clap definition of each tool a user completes (the hidden tools,
/// started by tern itself, are left out).
pub fn command_of(tool: &str) -> Option<Command> {
    use super::*;
    Some(match tool {
        "tern_complete" => Args::command(),
        "tern_config_val" => config_val::Args::command(),
        "tern_continue" => continue_job::Args::command(),
        "tern_eval" => eval::Args::command(),
        "tern_history" => history::Args::command(),
        "tern_hold" => hold::Args::command(),
        "tern_job_router" => job_router::Args::command(),
        "tern_negotiate" => negotiate::Args::command(),
        "tern_prio" => prio::Args::command(),
        "tern_q" => q::Args::command(),
        "tern_qedit" => qedit::Args::command(),
        "tern_release" => release::Args::command(),
        "tern_rm" => rm::Args::command(),
        "tern_router_history" => router_history::Args::command(),
        "tern_router_q" => router_q::Args::command(),
        "tern_router_rm" => router_rm::Args::command(),
        "tern_status" => status::Args::command(),
        "tern_submit" => submit::Args::command(),
        "tern_suspend" => suspend::Args::command(),
        "tern_transform_ads" => transform_ads::Args::command(),
        "tern_userprio" => userprio::Args::command(),
        "tern_vacate_job" => vacate_job::Args::command(),
        "tern_watch_q" => watch_q::Args::command(),
        _ => return None,
    })
}

/// What a word may become.
#[derive(Debug, PartialEq, Eq)]
pub enum Candidates {
    /// These words (already filtered by what was typed).
    Words(Vec<String>),
    /// A file name: the shell completes it.
    Files,
}

/// Where the candidates that depend on the queue come from.
pub trait Data {
    /// `C` and `C.P` of the jobs in the queue (or, with `history`, of the
    /// newest jobs in the history).
    fn job_ids(&self, history: bool) -> Vec<String>;
    /// Attribute names worth offering for `tool` (job attributes, or slot
    /// attributes for tern_status).
    fn attributes(&self, tool: &str) -> Vec<String>;
}

/// The tools whose positional arguments are jobs.
const JOB_TOOLS: &[&str] = &[
    "tern_q",
    "tern_rm",
    "tern_hold",
    "tern_release",
    "tern_qedit",
    "tern_prio",
    "tern_vacate_job",
    "tern_suspend",
    "tern_continue",
    "tern_history",
];

/// The candidates for `current`, after the words `done` of `tool`'s
/// command line.
pub fn candidates(tool: &str, done: &[String], current: &str, data: &dyn Data) -> Candidates {
    let Some(cmd) = command_of(tool) else {
        return Candidates::Files;
    };
    if let Some(arg) = value_wanted(&cmd, done) {
        return value_candidates(tool, arg, current, data);
    }
    if current.starts_with('-') && !looks_negative(current) {
        return Candidates::Words(filtered(
            option_words(&cmd, current.starts_with("--")),
            current,
        ));
    }
    positional(tool, current, data)
}

fn looks_negative(word: &str) -> bool {
    word.len() > 1 && word[1..].chars().all(|c| c.is_ascii_digit() || c == '.')
}

/// The option, if any, whose value `current` is: the last option among
/// `done` that takes values, when fewer than all its values follow it
/// (an `-af` takes attributes until the next option).
fn value_wanted<'c>(cmd: &'c Command, done: &[String]) -> Option<&'c Arg> {
    for (i, w) in done.iter().enumerate().rev() {
        if !w.starts_with('-') || looks_negative(w) || w == "--" {
            continue;
        }
        let arg = option_named(cmd, w)?;
        if !arg.get_action().takes_values() {
            return None;
        }
        // `-constraint=EXPR` carries its value in the word itself.
        let inline = usize::from(w.contains('='));
        let given = done.len() - i - 1 + inline;
        let range = arg.get_num_args().unwrap_or_default();
        // A value that may be left out (tern_submit's `-dry-run
        // [OUTPUT]`, a file like the description after it): the word is
        // completed as whatever else may come there, options and files.
        if range.min_values() == 0 {
            return None;
        }
        if given < range.max_values() {
            return Some(arg);
        }
        return None;
    }
    None
}

/// The option `word` names: `-name`, `--name`, `-name=...` and `-af:FLAGS`
/// forms, a unique prefix of a long option or alias, or a short option.
fn option_named<'c>(cmd: &'c Command, word: &str) -> Option<&'c Arg> {
    let name = word.trim_start_matches('-');
    let name = name.split(['=', ':']).next().unwrap_or(name);
    if name.is_empty() {
        return None;
    }
    let args: Vec<&Arg> = cmd.get_arguments().filter(|a| !a.is_positional()).collect();
    let longs = |a: &Arg| -> Vec<String> {
        let mut v: Vec<String> = a.get_long().map(str::to_string).into_iter().collect();
        v.extend(
            a.get_all_aliases()
                .unwrap_or_default()
                .into_iter()
                .map(str::to_string),
        );
        v
    };
    if let Some(a) = args.iter().find(|a| longs(a).iter().any(|l| l == name)) {
        return Some(a);
    }
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next())
        && let Some(a) = args.iter().find(|a| a.get_short() == Some(c))
    {
        return Some(a);
    }
    let mut matching = args
        .iter()
        .filter(|a| longs(a).iter().any(|l| l.starts_with(name)));
    match (matching.next(), matching.next()) {
        (Some(a), None) => Some(a),
        _ => None,
    }
}

/// Every visible long option and alias of `cmd`, with one dash (two with
/// `double`).
fn option_words(cmd: &Command, double: bool) -> Vec<String> {
    let dash = if double { "--" } else { "-" };
    let mut out = BTreeSet::new();
    for a in cmd
        .get_arguments()
        .filter(|a| !a.is_positional() && !a.is_hide_set())
    {
        if let Some(l) = a.get_long() {
            out.insert(format!("{dash}{l}"));
        }
        for alias in a.get_visible_aliases().unwrap_or_default() {
            out.insert(format!("{dash}{alias}"));
        }
    }
    for flag in ["help", "version"] {
        if cmd.get_arguments().any(|a| a.get_long() == Some(flag))
            || !cmd.is_disable_help_flag_set() && flag == "help"
        {
            out.insert(format!("{dash}{flag}"));
        }
    }
    out.into_iter().collect()
}

fn filtered(words: Vec<String>, current: &str) -> Vec<String> {
    words
        .into_iter()
        .filter(|w| w.starts_with(current))
        .collect()
}

fn value_candidates(tool: &str, arg: &Arg, current: &str, data: &dyn Data) -> Candidates {
    let possible: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|p| !p.is_hide_set())
        .map(|p| p.get_name().to_string())
        .collect();
    if !possible.is_empty() {
        return Candidates::Words(filtered(possible, current));
    }
    let names: Vec<String> = arg
        .get_value_names()
        .unwrap_or_default()
        .iter()
        .map(|n| n.to_string().to_ascii_uppercase())
        .collect();
    if names
        .iter()
        .any(|n| n.contains("FILE") || n.contains("DIR") || n.contains("PATH"))
    {
        return Candidates::Files;
    }
    let id = arg.get_id().as_str();
    if matches!(
        id,
        "autoformat" | "attributes" | "constraint" | "format" | "sort"
    ) || names
        .iter()
        .any(|n| n.contains("ATTR") || n == "EXPR" || n == "NAME,...")
    {
        // An attribute name, or the one being typed at the end of an
        // expression or a comma-separated list.
        let cut = current
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(0, |i| i + 1);
        let (head, tail) = current.split_at(cut);
        let words = data
            .attributes(tool)
            .into_iter()
            .filter(|a| {
                a.to_ascii_lowercase()
                    .starts_with(&tail.to_ascii_lowercase())
            })
            .map(|a| format!("{head}{a}"))
            .collect();
        return Candidates::Words(words);
    }
    Candidates::Words(Vec::new())
}

fn positional(tool: &str, current: &str, data: &dyn Data) -> Candidates {
    if JOB_TOOLS.contains(&tool) {
        return Candidates::Words(filtered(data.job_ids(tool == "tern_history"), current));
    }
    match tool {
        "tern_config_val" => {
            let upper = current.to_ascii_uppercase();
            Candidates::Words(
                crate::config::knobs::KNOBS
                    .iter()
                    .map(|k| k.name.to_string())
                    .filter(|n| n.starts_with(&upper))
                    .collect(),
            )
        }
        "tern_submit" | "tern_eval" | "tern_transform_ads" => Candidates::Files,
        _ => Candidates::Words(Vec::new()),
    }
}

/// The queue as it is, read when asked and only then.
struct Sources;

impl Data for Sources {
    fn job_ids(&self, history: bool) -> Vec<String> {
        let Ok(env) = ToolEnv::open("tern_complete") else {
            return Vec::new();
        };
        let Ok(Some(q)) = env.queue(false) else {
            return Vec::new();
        };
        let ids = if history {
            q.history_ids(200)
        } else {
            q.job_ids(2000)
        };
        let mut clusters = BTreeSet::new();
        let mut out = Vec::new();
        for id in ids.unwrap_or_default() {
            if clusters.insert(id.cluster) {
                out.push(id.cluster.to_string());
            }
            out.push(id.to_string());
        }
        out
    }

    fn attributes(&self, tool: &str) -> Vec<String> {
        let mut names: BTreeSet<String> = BTreeSet::new();
        if let Ok(env) = ToolEnv::open("tern_complete") {
            if tool == "tern_status" || tool == "tern_userprio" {
                if let Ok(m) = crate::machine::Machine::detect(&env.cfg) {
                    let now = crate::clock::now();
                    if let Some(r) = crate::machine::configured_rows(&m, now).first() {
                        let ad = crate::machine::slot_ad(&m, r, now);
                        names.extend(ad.iter_shared().map(|(n, _)| n.to_string()));
                    }
                }
            } else if let Ok(Some(q)) = env.queue(false)
                && let Ok(Some(ad)) = q.newest_ad(tool == "tern_history")
            {
                names.extend(ad.iter_shared().map(|(n, _)| n.to_string()));
            }
        }
        if names.is_empty() && tool != "tern_status" {
            names.extend(COMMON_JOB_ATTRIBUTES.iter().map(|s| s.to_string()));
        }
        names.into_iter().collect()
    }
}

/// Job attributes offered when the queue has no job to read names from.
const COMMON_JOB_ATTRIBUTES: &[&str] = &[
    "Args",
    "Arguments",
    "ClusterId",
    "Cmd",
    "CompletionDate",
    "EnteredCurrentStatus",
    "ExitCode",
    "HoldReason",
    "Iwd",
    "JobBatchName",
    "JobPrio",
    "JobStatus",
    "NumJobStarts",
    "Owner",
    "ProcId",
    "QDate",
    "RemoteWallClockTime",
    "RequestCpus",
    "RequestDisk",
    "RequestMemory",
    "Requirements",
    "UserLog",
];

#[cfg(test)]
mod tests;
