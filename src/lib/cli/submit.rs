//! `tern_submit`: reads a submit description and turns it into jobs in the
//! queue, as HTCondor's `condor_submit`. `-dry-run` prints the job ads a
//! submit would create and changes nothing.

use std::ffi::OsString;
use std::io::{self, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use super::env::ToolEnv;
use super::{CliError, parse_args, run_tool};
use crate::classad::json::ads_to_json_array;
use crate::classad::unparse::ad_to_old;
use crate::queue::{Authority, QueueError};
use crate::submit::{self, SubmitOptions};

/// Submit jobs described by a submit description file.
///
/// FILE is the submit description (`-` reads it from standard input). With
/// -dry-run the job ads that would be created are printed, in old ClassAd
/// syntax sorted by attribute name (or as a JSON array with -dry-run:json),
/// and nothing is submitted. As condor_submit, `-dry-run OUTPUT FILE`
/// writes them to OUTPUT (`-`: standard output) and says how many jobs the
/// dry run made; `-dry-run FILE` alone prints them.
#[derive(Parser, Debug)]
#[command(
    name = "tern_submit",
    version,
    after_help = "Examples:\n  tern_submit -dry-run job.sub\n  tern_submit -dry-run ads.txt job.sub\n  tern_submit -dry-run:json job.sub\n  echo 'executable = /bin/true\nqueue 3' | tern_submit -dry-run -"
)]
pub struct Args {
    /// Print the job ads instead of submitting; with FILE given too,
    /// write them to OUTPUT (- for standard output), as condor_submit
    #[arg(long = "dry-run", value_name = "OUTPUT", num_args = 0..=1)]
    pub dry_run: Option<Option<String>>,

    /// Print the job ads as one JSON array instead of submitting
    /// (`-dry-run:json`, see [`super::COLON_FORMS`]), with an OUTPUT as
    /// -dry-run's
    #[arg(long = "json-dry-run", hide = true, num_args = 0..=1)]
    pub dry_run_json: Option<Option<String>>,

    /// Set the batch name of every job (as batch_name in the file)
    #[arg(long = "batch-name", value_name = "NAME")]
    pub batch_name: Option<String>,

    /// Add a line to the description, before its queue statement
    #[arg(long = "append", short = 'a', value_name = "LINE")]
    pub append: Vec<String>,

    /// Queue statement to use (the file must then have none), e.g. '3' or 'x in (a b)'
    #[arg(long = "queue", value_name = "QUEUE_ARGS")]
    pub queue: Option<String>,

    /// Print only the first and last job id
    #[arg(long)]
    pub terse: bool,

    /// The submit description file, or - for standard input
    #[arg(value_name = "FILE")]
    pub file: Option<String>,
}

pub fn main() -> ExitCode {
    run_tool("tern_submit", run)
}

fn failed(msg: String) -> CliError {
    CliError::Failed { msg, hint: None }
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (args, _) = parse_args::<Args>(argv)?;
    let env = ToolEnv::open("tern_submit")?;
    let cfg = &env.cfg;
    let (file, dry) = dry_run_target(&args);
    // Relative paths in the description (include, queue from, matching)
    // are relative to the current directory, as condor_submit reads them.
    let dir = std::env::current_dir()
        .map_err(|e| failed(format!("cannot read the current directory: {e}")))?;
    let max_input = cfg.get_int("SUBMIT_MAX_INPUT_BYTES", 64 << 20)?;
    let (text, name) = read_description(&file, max_input.max(0) as u64)?;
    let desc = with_command_line(text, &args, name)?;
    let parsed = submit::parse(&desc.text, &desc.name, &dir, cfg).map_err(|e| desc.error(e))?;
    let owner = env.user.clone();
    let opts = SubmitOptions {
        cluster: 1,
        qdate: crate::clock::now(),
        owner: owner.clone(),
        cwd: dir.clone(),
        // The caller's, which a set-group-id tool has taken out of its
        // own environment: `getenv` copies the user's variables into the
        // user's job.
        environ: crate::sys::privilege::caller_env(),
        batch_name: args.batch_name.clone(),
    };
    if dry.is_none() {
        let mut queue = env.queue_created()?;
        // A job reported submitted survives a power cut (unless
        // CONDOR_FSYNC = false).
        if crate::sys::fs::fsync_on() {
            queue.set_durable()?;
        }
        let authority = Authority::from_config(cfg, owner.as_str())?;
        // The schedd's JOB_TRANSFORM_NAMES, read before the queue is locked.
        let (xforms, load_warnings) = crate::transform::jobs::load(cfg);
        let mut held = Vec::new();
        let inputs = submit::Inputs::default();
        let build = |cluster: i64, held: &mut Vec<(usize, String)>| {
            let opts = SubmitOptions {
                cluster,
                ..opts.clone()
            };
            let mut c = submit::materialize_with(&parsed, cfg, &opts, &inputs)
                .map_err(|e| Refusal::Tool(desc.error(e)))?;
            // The transforms apply before anything is queued.
            let mut w = load_warnings.clone();
            w.extend(
                crate::transform::jobs::apply(&mut c, &xforms, cfg)
                    .map_err(|e| Refusal::Tool(failed(e.to_string())))?,
            );
            c.warnings.extend(w);
            // The schedd's input-size check holds a job as it is queued.
            *held = submit::hold_over_input_limit(&mut c, cfg)
                .map_err(|e| Refusal::Tool(failed(e.to_string())))?;
            // Every event log must open before anything is queued, as
            // condor_submit checks (its file checks on): tern_submit writes
            // the submit events itself once the jobs are in the queue. The
            // log's name may hold the cluster id, so each build checks.
            if !c.skip_file_checks {
                crate::userlog::check_submit_logs(&c).map_err(|(path, e)| Refusal::Log(path, e))?;
            }
            Ok::<_, Refusal>(c)
        };
        let submitted = submit_outside_the_lock(&mut queue, &authority, &owner, &inputs, |id| {
            build(id, &mut held)
        });
        let (id, cluster) = submitted.map_err(Refusal::report)?;
        // Whether to ask for a pass; the slots are read after the commit
        // (see negotiator::on_submit).
        let ask_for_pass = !cluster.procs.is_empty()
            && cfg.get_bool("NEGOTIATE_ON_SUBMIT", true)?
            && crate::negotiator::on_submit::could_start(
                cfg,
                &queue,
                &env.spool,
                &cluster,
                crate::clock::now(),
            );
        // The process ends once the submission is announced.
        queue.leave_at_exit();
        return announce(cfg, &env.spool, &args, (id, &cluster), &held, ask_for_pass);
    }
    dry_run(&env, &args, &parsed, opts, &desc, (&file, dry.flatten()))
}

/// The submit description to read, and for a dry run where its ads go:
/// `None` without -dry-run; `Some(None)` to standard output, the ads
/// alone; `Some(Some(out))` as condor_submit's `-dry-run OUTPUT FILE`, to
/// OUTPUT (`-`: standard output) followed by the count of jobs. The value
/// of a -dry-run with no FILE is the description itself (`-dry-run
/// job.sub`, where condor_submit would refuse to take job.sub for its
/// output and find no description).
fn dry_run_target(args: &Args) -> (String, Option<Option<String>>) {
    match (
        args.dry_run.as_ref().or(args.dry_run_json.as_ref()),
        &args.file,
    ) {
        (Some(Some(out)), Some(file)) => (file.clone(), Some(Some(out.clone()))),
        (Some(Some(file)), None) => (file.clone(), Some(None)),
        (dry, file) => (file.clone().unwrap_or_else(|| "-".into()), dry.cloned()),
    }
}

/// How many times a submission is built outside the queue's write lock
/// before it is built inside it (see [`submit_outside_the_lock`]).
const BUILDS_OUTSIDE_THE_LOCK: usize = 3;

/// Queues the cluster `build` makes for a cluster id. The build reads the
/// description's external inputs (`queue … from cmd |` runs a command of
/// the user's, for as long as it likes: [`submit::Inputs`]), so it runs
/// before the write transaction, for the id the queue would give next;
/// the transaction then only checks that id is still the next and writes.
/// Another submission may take the id first: the build is made again for
/// the new one, its inputs replayed, not read again. After
/// [`BUILDS_OUTSIDE_THE_LOCK`] builds that lost the race (others
/// submitting in a loop) it is built inside the transaction, from the
/// inputs already read, so it cannot be starved; anything not read by
/// then is an error, never read under the lock.
fn submit_outside_the_lock(
    queue: &mut crate::queue::Queue,
    authority: &Authority,
    owner: &str,
    inputs: &submit::Inputs,
    mut build: impl FnMut(i64) -> Result<submit::Cluster, Refusal>,
) -> Result<(i64, submit::Cluster), Refusal> {
    for _ in 0..BUILDS_OUTSIDE_THE_LOCK {
        let predicted = queue.next_cluster().map_err(Refusal::Queue)?;
        let mut built = Some(build(predicted)?);
        let r = queue.submit(authority, owner, |id| match built.take() {
            Some(c) if id == predicted => Ok(c),
            _ => Err(Refusal::Moved),
        });
        match r {
            Err(Refusal::Moved) => continue,
            done => return done,
        }
    }
    inputs.replay_only();
    queue.submit(authority, owner, build)
}

/// Why a submission queued nothing: the tool's own error, a job event log
/// that cannot be opened, or the queue's; the log and the queue's
/// refusals are reported in condor_submit's words.
/// `Moved` is no refusal: another submission took the cluster id a build
/// was made for (see [`submit_outside_the_lock`]).
enum Refusal {
    Tool(CliError),
    /// A job's event log cannot be opened to append to.
    Log(PathBuf, io::Error),
    Queue(QueueError),
    Moved,
}

impl From<QueueError> for Refusal {
    fn from(e: QueueError) -> Refusal {
        Refusal::Queue(e)
    }
}

impl Refusal {
    /// Prints a refusal of the queue as condor_submit does (the schedd's
    /// reason, then its `ERROR: Failed to set Owner="b" for job 5.0 (13)`
    /// with EACCES, or `ERROR: Failed to create proc` and the limit it
    /// met) and a log that cannot be opened as condor_submit does
    /// (`ERROR: Invalid log file: "/p/job.log" (No such file or
    /// directory)`), exit status 1; any other error as usual.
    fn report(self) -> CliError {
        match self {
            Refusal::Tool(e) => e,
            Refusal::Log(path, e) => {
                eprintln!(
                    "ERROR: Invalid log file: \"{}\" ({})",
                    path.display(),
                    crate::sys::io_error_text(&e)
                );
                CliError::Reported(1)
            }
            Refusal::Queue(QueueError::SubmitRefused {
                job,
                attr,
                value,
                reason,
            }) => {
                note!("{reason}");
                note!(
                    "ERROR: Failed to set {attr}={value} for job {job} ({})",
                    libc::EACCES
                );
                CliError::Reported(1)
            }
            Refusal::Queue(QueueError::TooManyJobs(msg)) => {
                note!("ERROR: Failed to create proc");
                note!("{msg}");
                CliError::Reported(1)
            }
            Refusal::Queue(e) => e.into(),
            Refusal::Moved => {
                failed("other submissions kept taking the cluster id; nothing was submitted".into())
            }
        }
    }
}

/// The description's text and the name its errors give it: standard
/// input for `-` (or no file). A description longer than `max` bytes
/// (SUBMIT_MAX_INPUT_BYTES) is refused unread past the limit.
fn read_description(file: &str, max: u64) -> Result<(String, String), CliError> {
    let (mut input, path, name): (Box<dyn Read>, PathBuf, String) = if file == "-" {
        (Box::new(io::stdin()), "<stdin>".into(), "<stdin>".into())
    } else {
        let p = PathBuf::from(file);
        let f = std::fs::File::open(&p).map_err(|e| CliError::Read {
            path: p.clone(),
            source: e,
        })?;
        (Box::new(f), p, file.to_string())
    };
    let mut bytes = Vec::new();
    input
        .by_ref()
        .take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::Read {
            path: path.clone(),
            source: e,
        })?;
    if bytes.len() as u64 > max {
        return Err(failed(format!(
            "{name} is longer than SUBMIT_MAX_INPUT_BYTES ({max} bytes); nothing was submitted"
        )));
    }
    let text = String::from_utf8(bytes).map_err(|_| CliError::Read {
        path,
        source: io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        ),
    })?;
    Ok((text, name))
}

/// After cluster `id` is in the queue: its submit events (and the hold
/// events of the procs `held` at submit), a negotiation pass, the warnings
/// and the "submitted" line.
fn announce(
    cfg: &crate::config::Config,
    spool: &std::path::Path,
    args: &Args,
    (id, cluster): (i64, &submit::Cluster),
    held: &[(usize, String)],
    ask_for_pass: bool,
) -> Result<(), CliError> {
    // The jobs are in the queue now, whatever happens to their logs.
    let logged = crate::userlog::log_submit(cluster, id).and_then(|()| {
        let events: Vec<_> = held
            .iter()
            .filter_map(|(i, reason)| {
                let path = crate::userlog::user_log(&cluster.full_ad(*i))?;
                let job = crate::queue::JobId {
                    cluster: id,
                    proc: *i as i64,
                };
                let code = crate::vocab::hold_code::MAX_TRANSFER_INPUT_SIZE_EXCEEDED;
                Some((path, crate::userlog::Event::held(job, reason, code, 0)))
            })
            .collect();
        crate::userlog::log_job_events(&events)
    });
    // Start them now rather than at the next cron pass: a lingering
    // shadow takes them, a pass running now is left the mark, else one is
    // started; none when every slot's shadow takes the next job or asks
    // for a pass itself (negotiator::on_submit). A pass that cannot be
    // started is no failure: cron runs one every minute.
    if ask_for_pass && let Err(e) = crate::negotiator::request_pass_after_submit(cfg, spool) {
        note!(
            "tern_submit: warning: cannot start tern_negotiate ({e}); the jobs start at the next pass"
        );
    }
    print_warnings(args, cluster);
    let n = cluster.procs.len();
    print_count(args, n, id, "submitted")?;
    match logged {
        // With skip_filechecks the logs were not checked, as condor_submit
        // does not check them: a log that cannot be written costs its
        // event (and holds the job when it runs), not the submission.
        Err(e) if cluster.skip_file_checks => {
            note!(
                "tern_submit: warning: the submit events of cluster {id} were not logged \
                 (skip_filechecks): {e}"
            );
            Ok(())
        }
        Err(e) => Err(failed(format!(
            "{n} job(s) were submitted to cluster {id}, but their submit events were not logged: {e}"
        ))),
        Ok(()) => Ok(()),
    }
}

/// The cluster's warnings on standard error; `-terse` leaves out the one
/// that nothing was queued, as condor_submit does.
fn print_warnings(args: &Args, cluster: &submit::Cluster) {
    if args.terse && cluster.procs.is_empty() {
        return;
    }
    for w in &cluster.warnings {
        note!("{w}");
    }
}

/// `-dry-run` and `-dry-run:json`: the job ads a submit would store,
/// numbered as it would number them, with nothing written.
fn dry_run(
    env: &ToolEnv,
    args: &Args,
    parsed: &submit::SubmitFile,
    mut opts: SubmitOptions,
    desc: &Described,
    (file, to): (&str, Option<String>),
) -> Result<(), CliError> {
    let cfg = &env.cfg;
    if let Some(q) = env.queue(false)? {
        opts.cluster = q.next_cluster()?;
    }
    let cluster = submit::materialize(parsed, cfg, &opts).map_err(|e| desc.error(e))?;
    print_warnings(args, &cluster);
    let stdout = io::stdout();
    let output = match to.as_deref() {
        None | Some("-") => None,
        Some(path) if same_file(path, file) => {
            return Err(failed(format!(
                "the -dry-run output file {path} is the submit description {file}: \
                 nothing was written"
            )));
        }
        Some(path) => Some(std::fs::File::create(path).map_err(|e| {
            failed(format!(
                "cannot write the -dry-run output file {path}: {}",
                crate::sys::io_error_text(&e)
            ))
        })?),
    };
    let mut out: BufWriter<Box<dyn Write>> = BufWriter::new(match output {
        Some(f) => Box::new(f),
        None => Box::new(stdout.lock()),
    });
    write_dry_ads(&mut out, args, &cluster)?;
    out.flush()?;
    drop(out);
    // condor_submit's count, for its form of the command.
    if to.is_some() {
        print_count(args, cluster.procs.len(), opts.cluster, "dry-run")?;
    }
    Ok(())
}

/// The line condor_submit ends with: `N job(s) <done> to cluster C.`, or
/// with -terse the first and last job id; none when nothing was queued
/// (no cluster), as condor_submit prints none.
fn print_count(args: &Args, n: usize, id: i64, done: &str) -> Result<(), CliError> {
    if n == 0 {
        return Ok(());
    }
    let mut out = io::stdout().lock();
    if args.terse {
        writeln!(out, "{id}.0 - {id}.{}", n - 1)?;
    } else {
        writeln!(out, "{n} job(s) {done} to cluster {id}.")?;
    }
    Ok(())
}

/// Whether `a` and `b` name one existing file (by device and inode, so
/// through `./` or a link too); `-` is standard input, no file.
fn same_file(a: &str, b: &str) -> bool {
    use std::os::unix::fs::MetadataExt;
    if b == "-" {
        return false;
    }
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => (x.dev(), x.ino()) == (y.dev(), y.ino()),
        _ => false,
    }
}

/// The ads of a dry run, in old syntax or (`-dry-run:json`) as a JSON array.
fn write_dry_ads(
    out: &mut impl Write,
    args: &Args,
    cluster: &submit::Cluster,
) -> Result<(), CliError> {
    if args.dry_run_json.is_some() {
        let ads: Vec<_> = (0..cluster.procs.len())
            .map(|i| cluster.full_ad(i))
            .collect();
        out.write_all(ads_to_json_array(ads.iter()).as_bytes())?;
    } else {
        for i in 0..cluster.procs.len() {
            out.write_all(ad_to_old(&cluster.full_ad(i), true).as_bytes())?;
            out.write_all(b"\n")?;
        }
    }
    Ok(())
}

/// Where a line of the description tern_submit reads came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LineFrom {
    /// The file's own line, by its number there.
    File(u32),
    /// The `-append` argument of this number (from 1).
    Append(usize),
    /// The `-queue` argument.
    Queue,
}

/// The description as read: the file with the command line's lines, and
/// where each line came from (empty when they are the file's alone).
struct Described {
    text: String,
    name: String,
    lines: Vec<LineFrom>,
}

impl Described {
    /// The error of a line, located as condor_submit locates it: the
    /// file's line by its number in the file (the `-append` lines before
    /// the queue statement do not move it), or the argument it came from.
    fn error(&self, e: submit::SubmitError) -> CliError {
        let submit::SubmitError::At { origin, msg } = &e else {
            return failed(e.to_string());
        };
        if origin.file != self.name || self.lines.is_empty() {
            return failed(e.to_string());
        }
        let from = (origin.line as usize)
            .checked_sub(1)
            .and_then(|i| self.lines.get(i));
        failed(match from {
            Some(LineFrom::File(n)) => format!("{}:{n}: {msg}", self.name),
            Some(LineFrom::Append(k)) => format!("-append argument #{k}: {msg}"),
            Some(LineFrom::Queue) => format!("-queue argument: {msg}"),
            None => e.to_string(),
        })
    }
}

/// Adds `-append` lines before the first queue statement and the `-queue`
/// statement at the end.
fn with_command_line(text: String, args: &Args, name: String) -> Result<Described, CliError> {
    if args.append.is_empty() && args.queue.is_none() {
        return Ok(Described {
            text,
            name,
            lines: Vec::new(),
        });
    }
    let has_queue = text.lines().any(|l| submit::queue::is_queue_line(l.trim()));
    if args.queue.is_some() && has_queue {
        return Err(CliError::Usage {
            msg: format!("-queue was given, but {name} has its own queue statement"),
            hint: Some("remove the queue statement from the file or drop -queue".into()),
        });
    }
    let mut lines: Vec<String> = Vec::new();
    let mut from = Vec::new();
    let append = |lines: &mut Vec<String>, from: &mut Vec<LineFrom>| {
        for (k, a) in args.append.iter().enumerate() {
            lines.push(a.clone());
            from.push(LineFrom::Append(k + 1));
        }
    };
    let mut appended = false;
    for (i, l) in text.lines().enumerate() {
        if !appended && submit::queue::is_queue_line(l.trim()) {
            append(&mut lines, &mut from);
            appended = true;
        }
        lines.push(l.to_string());
        from.push(LineFrom::File(i as u32 + 1));
    }
    if !appended {
        append(&mut lines, &mut from);
    }
    if let Some(q) = &args.queue {
        lines.push(format!("queue {q}"));
        from.push(LineFrom::Queue);
    }
    Ok(Described {
        text: lines.join("\n") + "\n",
        name,
        lines: from,
    })
}
