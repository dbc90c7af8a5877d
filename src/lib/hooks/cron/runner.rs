//! `tern_cron`'s loop: runs the due cron jobs of both families beside the
//! negotiation pass, one process at a time (`hooks/cron.lock`).
//!
//! Every instance is recorded in `cron_jobs` (its process group) when it
//! starts and cleared when it ends, each in its own transaction, and its
//! stderr log stays locked by the instance itself (see [`crate::hooks::run`]).
//! So a runner that is killed leaves rows that the next runner reads: an
//! instance still holding its log is still running (its output, which
//! went to the dead runner, is lost): a WaitForExit one is killed and
//! restarted, a Periodic one with `_KILL` is killed when next due, others
//! are left to end; an instance whose log is free has ended, and is
//! recorded so.

use std::collections::{HashMap, HashSet};
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::output;
use super::params::{Job, Jobs, Mode};
use super::store::{self, State};
use super::{CronError, Family, LINGER};
use crate::classad::ClassAd;
use crate::config::Config;
use crate::hooks::run::{self, Invocation, Outcome, Running};
use crate::queue::Queue;

/// What the runner needs from above it.
pub trait Host {
    /// The configuration, read afresh.
    fn config(&self) -> Result<Config, CronError>;
    /// The daemon ad a job's `_CONDITION` is evaluated in (the first
    /// slot's ad for the startd, the scheduler ad for the schedd).
    fn daemon_ad(&self, cfg: &Config, fam: Family) -> Option<ClassAd>;
    /// What the hooks publish changed: a pass should look.
    fn changed(&self, cfg: &Config);
}

struct Instance {
    job: Job,
    running: Running,
    /// The reconfiguration count when it started.
    generation: i64,
    hup_sent: bool,
    /// Killed by `_KILL` because it was due again.
    replaced: bool,
    /// Bad lines in the blocks already streamed (WaitForExit).
    bad: usize,
}

const STILL_RUNNING: &str = "still running from before; not started again";

/// The size at which the hook log is rotated.
const LOG_MAX: u64 = 1 << 20;

/// How often the configuration is read again while the runner lives.
const REREAD: Duration = Duration::from_secs(2);

/// Runs until nothing runs and nothing is due within [`LINGER`] seconds,
/// or the queue is gone. Returns at once when another runner holds the
/// lock.
pub fn run(spool: &Path, host: &dyn Host) -> Result<(), CronError> {
    let lock_path = super::lock_path(spool);
    let io = |what: String| move |source| CronError::Io { what, source };
    if let Some(d) = lock_path.parent() {
        std::fs::create_dir_all(d).map_err(io(format!("cannot create {}", d.display())))?;
    }
    // A SPOOL file: a planted link or FIFO is refused, never followed.
    let lock = crate::sys::fs::spool_lock_file(&lock_path)
        .map_err(io(format!("cannot open {}", lock_path.display())))?;
    if lock.try_lock().is_err() {
        return Ok(());
    }
    let Some(mut q) = Queue::open(spool, false)? else {
        return Ok(());
    };
    let mut r = Runner {
        spool: spool.to_path_buf(),
        cfg: host.config()?,
        read_at: Instant::now(),
        instances: HashMap::new(),
        noted: HashSet::new(),
    };
    loop {
        if !crate::queue::db_path(spool).exists() {
            r.kill_all();
            return Ok(());
        }
        if r.read_at.elapsed() >= REREAD {
            if let Ok(c) = host.config() {
                r.cfg = c;
            }
            r.read_at = Instant::now();
        }
        let now = crate::clock::now();
        let mut changed = false;
        let mut next: Option<i64> = None;
        for fam in Family::ALL {
            let jobs = match super::params::family(&r.cfg, fam) {
                Ok(j) => j,
                Err(e) => {
                    // Every listed job shows why none runs.
                    let err = e.to_string();
                    for n in super::unmarked(&r.cfg, q.conn(), fam, &err)? {
                        q.write(now, |w| store::set_status(w.conn(), fam, &n, &err))?;
                    }
                    r.note(&format!("{} hooks not run: {e}", fam.prefix()));
                    continue;
                }
            };
            match r.tick(&mut q, host, fam, &jobs, now, &mut next) {
                Ok(c) => changed |= c,
                Err(e) => {
                    // Nobody would read their output: the next runner
                    // starts them afresh.
                    r.kill_all();
                    return Err(e);
                }
            }
        }
        if changed {
            host.changed(&r.cfg);
        }
        if r.instances.is_empty() && next.is_none_or(|t| t > now + LINGER) {
            return Ok(());
        }
        let pause = if r.instances.is_empty() {
            let wait = next.map_or(LINGER, |t| (t - now).clamp(0, 1));
            Duration::from_millis(200).max(Duration::from_secs(wait as u64))
        } else {
            Duration::from_millis(50)
        };
        std::thread::sleep(pause);
    }
}

struct Runner {
    spool: PathBuf,
    cfg: Config,
    read_at: Instant,
    instances: HashMap<(Family, String), Instance>,
    /// Configuration errors already logged.
    noted: HashSet<String>,
}

fn status_of(job: &Job, o: &Outcome, log: &Path, bad: usize, replaced: bool) -> String {
    let env = Vec::new();
    let inv = invocation(job, log, &env);
    let mut s = if replaced {
        "killed: still running when due again (KILL is true)".to_string()
    } else {
        o.failure(&inv).unwrap_or_else(|| "ok".into())
    };
    if bad > 0 {
        s.push_str(&format!(
            "; {bad} bad output line(s) skipped (see hooks/cron.log)"
        ));
    }
    s
}

fn invocation<'a>(job: &'a Job, log: &'a Path, env: &'a [(String, String)]) -> Invocation<'a> {
    Invocation {
        program: &job.executable,
        argv0: Some(&job.name),
        args: &job.args,
        env: Some(env),
        cwd: job.cwd.as_deref(),
        stdin: b"",
        timeout: job.timeout,
        owner: None,
        stderr_log: log,
    }
}

/// Whether some process holds `log`'s lock (an instance still runs).
fn log_locked(log: &Path) -> bool {
    let Ok(f) = OpenOptions::new().read(true).append(true).open(log) else {
        return false;
    };
    match f.try_lock() {
        Ok(()) => {
            let _ = f.unlock();
            false
        }
        Err(_) => true,
    }
}

impl Runner {
    /// Logs a configuration error once per runner (it is seen every tick).
    fn note(&mut self, line: &str) {
        if self.noted.insert(line.to_string()) {
            self.log(line);
        }
    }

    /// Appends a line, with the time, to the hook log.
    fn log(&self, line: &str) {
        let path = super::log_path(&self.spool);
        // A hook failing every second must not fill the disk: the log is
        // kept to about a MiB, with one older generation, as HTCondor's
        // daemon logs are rotated.
        if std::fs::metadata(&path).is_ok_and(|m| m.len() > LOG_MAX) {
            let _ = std::fs::rename(&path, path.with_extension("log.old"));
        }
        if let Ok(mut f) = OpenOptions::new().create(true).append(true).open(&path) {
            let t = crate::clock::now();
            let _ = writeln!(f, "{t} {line}");
        }
    }

    fn kill_all(&mut self) {
        for (_, mut i) in self.instances.drain() {
            i.running.kill();
        }
    }

    /// One look at one family: finish, stream, kill, start. Returns whether
    /// published attributes changed; lowers `next` to the next due time.
    fn tick(
        &mut self,
        q: &mut Queue,
        host: &dyn Host,
        fam: Family,
        jobs: &Jobs,
        now: i64,
        next: &mut Option<i64>,
    ) -> Result<bool, CronError> {
        let mut changed = false;
        let names: Vec<String> = jobs
            .jobs
            .iter()
            .map(|j| j.name.clone())
            .chain(jobs.broken.iter().map(|(n, _)| n.clone()))
            .collect();
        // Instances of jobs no longer configured (or no longer valid) are
        // stopped: nothing would attend them.
        let gone: Vec<(Family, String)> = self
            .instances
            .keys()
            .filter(|(f, n)| *f == fam && !jobs.jobs.iter().any(|j| j.name == *n))
            .cloned()
            .collect();
        for k in gone {
            if let Some(mut i) = self.instances.remove(&k) {
                i.running.kill();
            }
        }
        let states = store::states(q.conn())?;
        let reconfig = super::reconfig_count(q.conn())?;
        // Read first: this runs every tick, and most ticks have nothing to
        // write.
        let stale = store::stale(q.conn(), fam, &names)?;
        if !stale.is_empty() {
            changed |= q.write(now, |w| store::forget(w.conn(), fam, &stale))?;
        }
        for (name, err) in &jobs.broken {
            let st = states
                .iter()
                .find(|s| s.family == fam.prefix() && s.name == *name);
            if st.is_none_or(|s| s.status != *err) {
                q.write(now, |w| store::set_status(w.conn(), fam, name, err))?;
                self.log(&format!("{} job {name} not run: {err}", fam.prefix()));
            }
        }
        let mut load: f64 = self
            .instances
            .iter()
            .filter(|((f, _), _)| *f == fam)
            .map(|(_, i)| i.job.job_load)
            .sum();
        for job in &jobs.jobs {
            let key = (fam, job.name.clone());
            let st = states
                .iter()
                .find(|s| s.family == fam.prefix() && s.name == job.name);
            if let Some(held) = self.instances.get(&key).map(|i| i.job.job_load) {
                changed |= self.attend(q, fam, &key, job, jobs, st, reconfig, now)?;
                if self.instances.contains_key(&key) {
                    continue;
                }
                // It ended: its next run is decided with the fresh row.
                let fresh = store::states(q.conn())?;
                let st = fresh
                    .iter()
                    .find(|s| s.family == fam.prefix() && s.name == job.name);
                if let Some(t) = super::next_due(job, st, reconfig) {
                    *next = Some(next.map_or(t, |n| n.min(t)));
                }
                load -= held;
                continue;
            }
            let log = super::stderr_path(&self.spool, fam, &job.name);
            if let Some(s) = st
                && let Some(pgid) = s.pid
            {
                // Left by a runner that died.
                if !log_locked(&log) {
                    q.write(now, |w| {
                        store::finished(
                            w.conn(),
                            fam,
                            &job.name,
                            now,
                            "ended while no runner watched it; its output was lost",
                        )?;
                        if job.mode == Mode::WaitForExit {
                            // It was meant to be running: it starts again now.
                            store::forget_start(w.conn(), fam, &job.name)?;
                        }
                        Ok(())
                    })?;
                    *next = Some(now);
                    continue;
                }
                let due = super::next_due(job, Some(s), reconfig).is_some_and(|t| t <= now);
                if job.mode == Mode::WaitForExit || (job.kill && due) {
                    crate::sys::pids::signal_group(pgid, libc::SIGKILL);
                    self.log(&format!(
                        "{} job {}: killed the instance (process group {pgid}) a runner \
                         that died left behind",
                        fam.prefix(),
                        job.name
                    ));
                } else if due && s.status != STILL_RUNNING {
                    q.write(now, |w| {
                        store::set_status(w.conn(), fam, &job.name, STILL_RUNNING)
                    })?;
                }
                *next = Some(next.map_or(now + 1, |n| n.min(now + 1)));
                continue;
            }
            let Some(due) = super::next_due(job, st, reconfig) else {
                continue;
            };
            if due > now {
                *next = Some(next.map_or(due, |n| n.min(due)));
                continue;
            }
            if load + job.job_load > jobs.max_load + 1e-9 {
                // Waits for a running job to end.
                *next = Some(now);
                continue;
            }
            if let Some(c) = &job.condition {
                let ad = host.daemon_ad(&self.cfg, fam).unwrap_or_default();
                let ok = crate::classad::eval_in(&std::rc::Rc::new(ad), c).is_true();
                if !ok {
                    // Counted as a run, so it is looked at again a period
                    // later rather than every tick.
                    q.write(now, |w| {
                        store::started(w.conn(), job, now, 0, reconfig)?;
                        store::finished(
                            w.conn(),
                            fam,
                            &job.name,
                            now,
                            "not run: its CONDITION is not true",
                        )
                    })?;
                    continue;
                }
            }
            self.start(q, fam, job, jobs, now, reconfig)?;
            if self.instances.contains_key(&key) {
                load += job.job_load;
            }
        }
        Ok(changed)
    }

    fn start(
        &mut self,
        q: &mut Queue,
        fam: Family,
        job: &Job,
        jobs: &Jobs,
        now: i64,
        reconfig: i64,
    ) -> Result<(), CronError> {
        let log = super::stderr_path(&self.spool, fam, &job.name);
        let mut env: Vec<(String, String)> = std::env::vars().collect();
        let mut set = |n: &str, v: &str| {
            env.retain(|(k, _)| k != n);
            env.push((n.to_string(), v.to_string()));
        };
        set(&format!("{}_CONFIG_VAL", fam.prefix()), &jobs.config_val);
        for (n, v) in &job.env {
            set(n, v);
        }
        let mut inv = invocation(job, &log, &env);
        // Not the directory of whoever started the pass.
        let home = self.spool.clone();
        if inv.cwd.is_none() {
            inv.cwd = Some(&home);
        }
        match run::start(&inv) {
            Ok(running) => {
                let pid = running.pid() as i32;
                q.write(now, |w| store::started(w.conn(), job, now, pid, reconfig))?;
                self.instances.insert(
                    (fam, job.name.clone()),
                    Instance {
                        job: job.clone(),
                        running,
                        generation: reconfig,
                        hup_sent: false,
                        replaced: false,
                        bad: 0,
                    },
                );
            }
            Err(o) => {
                let why = o.failure(&inv).unwrap_or_default();
                q.write(now, |w| {
                    store::started(w.conn(), job, now, 0, reconfig)?;
                    store::finished(w.conn(), fam, &job.name, now, &why)
                })?;
                self.log(&format!("{} job {}: {why}", fam.prefix(), job.name));
            }
        }
        Ok(())
    }

    /// A running instance: SIGHUP on reconfig, its streamed blocks, its
    /// end, or its kill when due again with `_KILL`.
    #[allow(clippy::too_many_arguments)]
    fn attend(
        &mut self,
        q: &mut Queue,
        fam: Family,
        key: &(Family, String),
        job: &Job,
        jobs: &Jobs,
        st: Option<&State>,
        reconfig: i64,
        now: i64,
    ) -> Result<bool, CronError> {
        let mut changed = false;
        let inst = self.instances.get_mut(key).expect("the instance is there");
        if inst.job.reconfig && !inst.hup_sent && reconfig > inst.generation {
            crate::sys::pids::signal_group(inst.running.pid() as i32, libc::SIGHUP);
            inst.hup_sent = true;
        }
        if inst.job.mode == Mode::WaitForExit {
            // Each finished block replaces the job's ad as it arrives.
            let text = inst.running.stdout_so_far();
            let p = output::parse(&text, &inst.job.prefix, false);
            if p.consumed > 0 {
                inst.running.consume(p.consumed);
                inst.bad += p.bad.len();
                let j = inst.job.clone();
                changed |= q.write(now, |w| store::publish(w.conn(), &j, &p.blocks, false, now))?;
                for b in &p.bad {
                    self.log(&format!(
                        "{} job {}: bad output {b}",
                        fam.prefix(),
                        job.name
                    ));
                }
            }
        }
        let inst = self.instances.get_mut(key).expect("the instance is there");
        let mut outcome = inst.running.try_finish();
        if outcome.is_none()
            && inst.job.mode == Mode::Periodic
            && inst.job.kill
            && super::next_due(&inst.job, st, reconfig).is_some_and(|t| t <= now)
        {
            inst.replaced = true;
            outcome = Some(inst.running.kill());
        }
        let Some(o) = outcome else {
            return Ok(changed);
        };
        let inst = self.instances.remove(key).expect("the instance is there");
        let ijob = &inst.job;
        let log = super::stderr_path(&self.spool, fam, &ijob.name);
        let (stdout, exited) = match &o {
            Outcome::Exited { stdout, .. } => (stdout.as_str(), true),
            Outcome::Signalled { stdout, .. } | Outcome::TimedOut { stdout } => {
                (stdout.as_str(), false)
            }
            Outcome::Busy | Outcome::NotStarted(_) => ("", false),
        };
        // A run cut short keeps only its finished blocks.
        let p = output::parse(stdout, &ijob.prefix, exited);
        let whole = exited && ijob.mode != Mode::WaitForExit;
        let status = status_of(ijob, &o, &log, inst.bad + p.bad.len(), inst.replaced);
        changed |= q.write(now, |w| {
            let c = if whole || !p.blocks.is_empty() {
                store::publish(w.conn(), ijob, &p.blocks, whole, now)?
            } else {
                false
            };
            store::finished(w.conn(), fam, &ijob.name, now, &status)?;
            Ok(c)
        })?;
        for b in &p.bad {
            self.log(&format!(
                "{} job {}: bad output {b}",
                fam.prefix(),
                ijob.name
            ));
        }
        if status != "ok" && !status.starts_with("ok;") {
            self.log(&format!("{} job {}: {status}", fam.prefix(), ijob.name));
        }
        if jobs.log_non_zero && matches!(o, Outcome::Exited { code, .. } if code != 0) {
            let err = std::fs::read_to_string(&log).unwrap_or_default();
            self.log(&format!(
                "{} job {} exited non-zero; stdout:\n{stdout}\nstderr:\n{err}",
                fam.prefix(),
                ijob.name
            ));
        }
        Ok(changed)
    }
}
