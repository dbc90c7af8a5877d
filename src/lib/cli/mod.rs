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

pub mod argv;
pub mod audit;
pub mod complete;
pub mod config_val;
pub mod continue_job;
pub mod cron;
pub mod edit;
pub mod env;
pub mod eval;
pub mod fetchwork;
pub mod format;
pub mod gridmanager;
pub mod history;
pub mod hold;
pub mod install;
pub mod job_router;
pub mod jobsel;
pub mod listing;
pub mod multicall;
pub mod negotiate;
pub mod printmask;
pub mod prio;
pub mod q;
pub mod qedit;
pub mod release;
pub mod rm;
pub mod router_history;
pub mod router_q;
pub mod router_rm;
pub mod shadow;
pub mod status;
pub mod submit;
pub mod suspend;
pub mod transform_ads;
pub mod userprio;
pub mod vacate_job;
pub mod watch_q;

use std::ffi::OsString;
use std::io::{self, Write};
use std::process::ExitCode;

use crate::sys::io_error_text as io_text;
use clap::error::ErrorKind;

pub use argv::{COLON_FORMS, ColonForm, normalize_argv, parse_args, parse_args_with};

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
/// The tools only root's passes start (a shadow, the gridmanager, the
/// router, the hooks' runners) and root's installer. Run set-group-id by a
/// user they would write any job's row with the queue's group (a shadow
/// told to run another user's job would run it as the caller), so a
/// privileged start refuses them.
const SYSTEM_TOOLS: &[&str] = &[
    "tern_cron",
    "tern_fetchwork",
    "tern_gridmanager",
    "tern_install",
    "tern_job_router",
    "tern_shadow",
];

fn refuse_system_tool(name: &str) -> Result<(), CliError> {
    if crate::sys::privilege::is_privileged() && SYSTEM_TOOLS.contains(&name) {
        return Err(CliError::Failed {
            msg: format!("{name} is started by root's negotiation pass, not by users"),
            hint: Some("submit jobs with tern_submit; see tern_security(7)".into()),
        });
    }
    Ok(())
}

pub fn run_tool<F>(name: &'static str, body: F) -> ExitCode
where
    F: FnOnce(Vec<OsString>) -> Result<(), CliError>,
{
    // The multicall entry has done this already; the per-tool binaries
    // come here first.
    crate::sys::privilege::secure_start();
    if let Err(e) = check_clock().and_then(|()| refuse_system_tool(name)) {
        return report(name, &e);
    }
    let argv: Vec<OsString> = std::env::args_os().collect();
    // The body gets its large stack in this thread (stacker maps it and
    // switches to it): a worker thread for it cost a short tool its
    // creation, a second cpu's wakeup to join it and its exit, about a
    // tenth of a `tern_submit`'s time.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        stacker::grow(TOOL_STACK, move || body(argv))
    }));
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
            let text = ce.render().to_string();
            let text = match ce.kind() {
                ErrorKind::DisplayHelp => argv::single_dash(&text),
                _ => text,
            };
            let _ = write!(io::stdout(), "{text}");
            let _ = io::stdout().flush();
            return ExitCode::SUCCESS;
        }
        // Help in place of an error message: no `error:` in front of it.
        CliError::Clap(ce) if ce.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = write!(
                io::stderr(),
                "{}",
                argv::single_dash(&ce.render().to_string())
            );
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
    let text = argv::single_dash(&e.render().to_string());
    match text.strip_prefix("error: ") {
        Some(rest) => rest.to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A tool's body has [`TOOL_STACK`] in the caller's own thread: here a
    /// test thread's 2 MB, and 8 MB is all a process's main thread gets by
    /// default. A panic in it is Rust's exit 101, as it was when the body
    /// ran on a thread of its own.
    #[test]
    fn a_tool_body_runs_on_its_large_stack_in_this_thread() {
        fn dig(n: usize) -> usize {
            let pad = std::hint::black_box([n as u8; 64 << 10]);
            if n == 0 {
                usize::from(pad[0])
            } else {
                dig(n - 1) + usize::from(pad[1])
            }
        }
        let caller = std::thread::current().id();
        let code = run_tool("tern_test", move |_| {
            assert_eq!(std::thread::current().id(), caller);
            // 1,000 frames of 64 KB: 64 MB of stack.
            std::hint::black_box(dig(1000));
            Ok(())
        });
        assert_eq!(code, ExitCode::SUCCESS);
        let code = run_tool("tern_test", |_| panic!("a tool's bug"));
        assert_eq!(code, ExitCode::from(101));
    }
}
