//! The scripted workload: a user (and cron) driving the round's queues
//! with the real tools, a few at a time, each action drawn from the
//! round's generator: submits of every job kind (single jobs and
//! clusters), work for the fetch hook, holds, releases, removals, vacates,
//! suspends and continues of jobs submitted earlier, passes on both
//! queues, router passes, and reads of the queue and the history.
//!
//! What each submit reported is kept: the checks hold every submit that
//! printed its cluster to that cluster's jobs, and a submit killed before
//! it printed to all of its jobs or none.

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, Stdio};

use super::world::{Kind, World};
use crate::common::rng::Rng;

/// How one submit ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Running,
    /// It printed its cluster.
    Submitted(i64),
    /// SIGKILL reached it first.
    Killed,
    /// It exited with an error of its own (a finding).
    Failed(String),
}

#[derive(Clone, Debug)]
pub struct Submit {
    pub seq: u64,
    pub kind: Kind,
    pub procs: u64,
    pub outcome: Outcome,
}

/// A tool the workload started and has not reaped.
struct InFlight {
    child: Child,
    argv: String,
    out: PathBuf,
    err: PathBuf,
    /// The index in `submits` of a submit's record.
    submit: Option<usize>,
}

pub struct Workload<'a> {
    world: &'a World,
    rng: Rng,
    inflight: Vec<InFlight>,
    pub submits: Vec<Submit>,
    /// Work items handed to the fetch hook, numbered from 1.
    pub work_items: u64,
    /// Tools that failed on their own: a panic, or an error naming the
    /// queue's database.
    pub failures: Vec<String>,
    /// Every error a tool printed, once each, but those a user meets
    /// acting on jobs that moved on ([`expected`]), for the round's summary.
    pub errors: std::collections::BTreeSet<String>,
    pub started: usize,
}

/// How many tools run at once at most.
const IN_FLIGHT: usize = 3;

impl<'a> Workload<'a> {
    pub fn new(world: &'a World, seed: u64) -> Workload<'a> {
        std::fs::create_dir_all(world.path("toolout")).unwrap();
        std::fs::create_dir_all(world.path("sub")).unwrap();
        Workload {
            world,
            rng: Rng::new(seed),
            inflight: Vec::new(),
            submits: Vec::new(),
            work_items: 0,
            failures: Vec::new(),
            errors: Default::default(),
            started: 0,
        }
    }

    /// One action, when fewer than [`IN_FLIGHT`] tools run.
    pub fn step(&mut self) {
        self.reap(false);
        if self.inflight.len() >= IN_FLIGHT {
            return;
        }
        let roll = self.rng.below(100);
        match roll {
            0..=27 => self.submit(),
            28..=33 => {
                self.work_items += 1;
                let secs = self.secs();
                self.world.add_work(self.work_items, secs);
            }
            34..=40 => self.act("tern_hold", &[]),
            41..=48 => self.act("tern_release", &[]),
            49..=52 => self.act("tern_rm", &[]),
            53..=58 => {
                let fast: &[&str] = if self.rng.chance(30) { &["-fast"] } else { &[] };
                self.act("tern_vacate_job", fast)
            }
            59..=63 => self.act("tern_suspend", &[]),
            64..=69 => self.act("tern_continue", &[]),
            70..=79 => self.spawn("tern_negotiate", &[], false, None),
            80..=83 => self.spawn("tern_negotiate", &[], true, None),
            84..=88 => self.spawn("tern_job_router", &[], false, None),
            89..=94 => self.spawn(
                "tern_q",
                &["-af", "ClusterId", "ProcId", "JobStatus"],
                false,
                None,
            ),
            _ => self.spawn("tern_history", &["-af", "ClusterId", "ProcId"], false, None),
        }
    }

    /// A job's run time: short, so jobs end within a round, and long
    /// enough that stops and kills find them running.
    fn secs(&mut self) -> f64 {
        self.rng.range(2, 10) as f64 / 10.0
    }

    fn submit(&mut self) {
        // Cron jobs before the round's minute boundary, which they run at
        // (one submitted after it would wait a minute, past the round).
        let kind = if self.world.before_minute() && self.rng.chance(40) {
            Kind::Cron
        } else {
            *self.rng.pick(&[
                Kind::Plain,
                Kind::Plain,
                Kind::Transfer,
                Kind::Deferred,
                Kind::Routed,
                Kind::Routed,
            ])
        };
        let procs = match kind {
            Kind::Plain | Kind::Routed => self.rng.range(1, 4) as u64,
            _ => self.rng.range(1, 2) as u64,
        };
        let seq = self.submits.len() as u64 + 1;
        let secs = self.secs();
        let file = format!("sub/{seq}.sub");
        self.world
            .env
            .write(&file, &self.world.submit_text(seq, kind, procs, secs));
        self.submits.push(Submit {
            seq,
            kind,
            procs,
            outcome: Outcome::Running,
        });
        let index = self.submits.len() - 1;
        self.spawn("tern_submit", &[&file], false, Some(index));
    }

    /// `tool` on a job (`C.P`) or a whole cluster (`C`) submitted earlier.
    fn act(&mut self, tool: &str, opts: &[&str]) {
        let known: Vec<(i64, u64)> = self
            .submits
            .iter()
            .filter_map(|s| match s.outcome {
                Outcome::Submitted(c) => Some((c, s.procs)),
                _ => None,
            })
            .collect();
        if known.is_empty() {
            return;
        }
        let (c, procs) = *self.rng.pick(&known);
        let target = if self.rng.chance(20) {
            c.to_string()
        } else {
            format!("{c}.{}", self.rng.below(procs))
        };
        let mut args: Vec<&str> = opts.to_vec();
        args.push(&target);
        self.spawn(tool, &args, false, None);
    }

    fn spawn(&mut self, tool: &str, args: &[&str], remote: bool, submit: Option<usize>) {
        let n = self.started;
        self.started += 1;
        let out = self.world.path(&format!("toolout/{n}.out"));
        let err = self.world.path(&format!("toolout/{n}.err"));
        let mut cmd = self.world.env.command(tool);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(&err).unwrap());
        if remote {
            cmd.env("_TERN_SPOOL", self.world.remote_spool());
        }
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("starting {tool}: {e}"));
        let argv = format!(
            "{}{tool} {}",
            if remote { "remote " } else { "" },
            args.join(" ")
        );
        self.inflight.push(InFlight {
            child,
            argv,
            out,
            err,
            submit,
        });
    }

    /// Reaps the tools that ended (all of them, waiting, with `wait`).
    pub fn reap(&mut self, wait: bool) {
        let mut i = 0;
        while i < self.inflight.len() {
            let status = if wait {
                Some(self.inflight[i].child.wait().unwrap())
            } else {
                self.inflight[i].child.try_wait().unwrap()
            };
            match status {
                Some(st) => {
                    let f = self.inflight.swap_remove(i);
                    self.ended(f, st);
                }
                None => i += 1,
            }
        }
    }

    fn ended(&mut self, f: InFlight, st: std::process::ExitStatus) {
        let stdout = std::fs::read_to_string(&f.out).unwrap_or_default();
        let stderr = std::fs::read_to_string(&f.err).unwrap_or_default();
        let killed = st.signal() == Some(libc::SIGKILL);
        if !killed && !st.success() {
            self.errors
                .extend(stderr.lines().filter(|l| !expected(l)).map(str::to_string));
        }
        let broken = st.code() == Some(101)
            || stderr.contains("panicked")
            || stderr.to_ascii_lowercase().contains("database");
        if broken || st.signal().is_some_and(|s| s != libc::SIGKILL) {
            self.failures
                .push(format!("{}: {st:?}\n{stdout}{stderr}", f.argv));
        }
        let Some(i) = f.submit else { return };
        self.submits[i].outcome = if killed {
            Outcome::Killed
        } else if st.success() {
            match cluster_of(&stdout) {
                Some(c) => Outcome::Submitted(c),
                None => Outcome::Failed(format!("no cluster in {stdout:?}")),
            }
        } else {
            Outcome::Failed(format!("{st:?}: {stderr}"))
        };
    }
}

/// Whether an error line is one a user meets when a job has moved on
/// before the tool acted (it left, it stopped running, it was held or
/// released already).
fn expected(line: &str) -> bool {
    [
        "Couldn't find/",
        " not found",
        " not running to be ",
        " already held",
        " not held to be ",
    ]
    .iter()
    .any(|p| line.contains(p))
}

/// The cluster in tern_submit's "N job(s) submitted to cluster C.".
fn cluster_of(stdout: &str) -> Option<i64> {
    stdout
        .trim_end()
        .rsplit_once("cluster ")
        .and_then(|(_, c)| c.strip_suffix('.')?.parse().ok())
}
