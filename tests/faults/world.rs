//! One round's world: a test directory with two tern queues (the local
//! SPOOL and `remote-spool`, which the route `Other` sends jobs to), the
//! configuration every process of the round reads, the hook programs, a
//! clock every process shares, and the submit descriptions of the
//! workload's job kinds.
//!
//! Every job is fake_job: it stamps `stamps` when it starts, every 20 ms
//! while it runs and when it ends (each line names the job and the pid),
//! holds a lock named after the job while it lives (stamping `overlap`
//! when an earlier run of the job still holds it),
//! writes two lines to Out around its run, one to Err, and (with file
//! transfer) a result file, so the checks know what each job's complete
//! output is.

use std::path::PathBuf;

use crate::common::{RunEnv, fake_job};

/// The instant of the first minute boundary a round's clock reaches, and
/// how many seconds into the round it comes: cron jobs submitted before it
/// run at it.
const MINUTE: i64 = 1_700_000_040;
const MINUTE_AFTER: i64 = 8;

/// What a submit asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Plain,
    Transfer,
    Cron,
    Deferred,
    Routed,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Plain => "plain",
            Kind::Transfer => "transfer",
            Kind::Cron => "cron",
            Kind::Deferred => "deferred",
            Kind::Routed => "routed",
        }
    }
}

pub struct World {
    pub env: RunEnv,
    /// The test directory, which every process of the round names in its
    /// environment or works in.
    pub dir: PathBuf,
    config: PathBuf,
    /// The anchored clock's reading at real time `anchor`.
    start: i64,
    anchor: f64,
}

fn real_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// Writes an executable sh script.
fn script(env: &RunEnv, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = env.write(name, &format!("#!/bin/sh\n{body}\n"));
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

impl World {
    pub fn new() -> World {
        let env = RunEnv::new();
        let d = env.path("").display().to_string();
        let d = d.trim_end_matches('/').to_string();
        for sub in ["out", "work", "taken", "staging", "locks"] {
            std::fs::create_dir(env.path(sub)).unwrap();
        }
        env.write("in.txt", "input\n");
        let fetch = script(
            &env,
            "fetch.sh",
            &format!(
                "cd {d}\nsleep 0.2\nfor f in work/*; do\n  [ -e \"$f\" ] || exit 0\n  \
                 if mv \"$f\" taken/ 2>/dev/null; then cat \"taken/${{f##*/}}\"; exit 0; fi\ndone"
            ),
        );
        // Each hook takes a moment, as a real one would (a query to a
        // work service): long enough to be killed at work.
        // A work source given its work back: a rejected item goes back to
        // work/ (the job ad names it), to be fetched again.
        let reply = script(
            &env,
            "reply.sh",
            &format!(
                "ad=$(cat)\nsleep 0.1\n[ \"$1\" = reject ] || exit 0\n\
                 n=$(printf '%s\\n' \"$ad\" | sed -n 's/^FaultFetch = \\([0-9]*\\)$/\\1/p' | head -1)\n\
                 [ -n \"$n\" ] && mv {d}/taken/$(printf %05d \"$n\") {d}/work/ 2>/dev/null\nexit 0"
            ),
        );
        let evict = script(&env, "evict.sh", "cat > /dev/null\nsleep 0.1");
        let probe = script(&env, "probe.sh", "sleep 0.2\necho 'FaultProbe = 1'");
        let config = env.write(
            "tern_config",
            &format!(
                "JOB_ROUTER_ROUTE_NAMES = Other\n\
                 JOB_ROUTER_ROUTE_Other @=end\n\
                 \x20 REQUIREMENTS WantOther =?= true\n\
                 \x20 GridResource = \"condor {d}/remote-spool local\"\n\
                 \x20 SET Requirements true\n\
                 @end\n\
                 SLOT_TYPE_1 = cpus=8, 80%\n\
                 SLOT_TYPE_1_PARTITIONABLE = true\n\
                 NUM_SLOTS_TYPE_1 = 1\n\
                 SLOT_TYPE_2 = cpus=1, 10%\n\
                 NUM_SLOTS_TYPE_2 = 2\n\
                 STARTD_JOB_HOOK_KEYWORD = F\n\
                 F_HOOK_FETCH_WORK = {}\n\
                 F_HOOK_REPLY_FETCH = {}\n\
                 F_HOOK_EVICT_CLAIM = {}\n\
                 FetchWorkDelay = 1\n\
                 STARTD_CRON_JOBLIST = probe\n\
                 STARTD_CRON_probe_EXECUTABLE = {}\n\
                 STARTD_CRON_probe_PERIOD = 2\n\
                 GRIDMANAGER_JOB_PROBE_INTERVAL = 1\n\
                 PERIODIC_EXPR_INTERVAL = 5\n\
                 SHADOW_LINGER_MSEC = 100\n\
                 JOB_MAX_VACATE_TIME = 1\n",
                fetch.display(),
                reply.display(),
                evict.display(),
                probe.display(),
            ),
        );
        let anchor = real_now();
        let start = MINUTE - MINUTE_AFTER;
        // RunEnv's machine knobs are environment variables, which outrank
        // the configuration file: the cpus are set there.
        let env = env
            .knob("NUM_CPUS", "10")
            .var_env("TERN_CONFIG", config.to_str().unwrap())
            .var_env("TERN_NOW", &format!("{start}+@{anchor:.6}"));
        World {
            dir: PathBuf::from(&d),
            config,
            env,
            start,
            anchor,
        }
    }

    /// Takes the lines starting with `prefix` out of the configuration,
    /// as an administrator would edit it (written aside and renamed in,
    /// so no process reads half of it), and returns them for
    /// [`World::reconfigure`].
    pub fn unconfigure(&self, prefix: &str) -> String {
        let text = std::fs::read_to_string(&self.config).unwrap();
        let (gone, kept): (Vec<&str>, Vec<&str>) =
            text.lines().partition(|l| l.starts_with(prefix));
        self.write_config(&kept);
        gone.iter().map(|l| format!("{l}\n")).collect()
    }

    /// Puts lines taken out by [`World::unconfigure`] back.
    pub fn reconfigure(&self, lines: &str) {
        let text = std::fs::read_to_string(&self.config).unwrap();
        let all: Vec<&str> = text.lines().chain(lines.lines()).collect();
        self.write_config(&all);
    }

    fn write_config(&self, lines: &[&str]) {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let aside = self.config.with_extension("new");
        std::fs::write(&aside, text).unwrap();
        std::fs::rename(&aside, &self.config).unwrap();
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.env.path(name)
    }

    pub fn spool(&self) -> PathBuf {
        self.env.spool()
    }

    pub fn remote_spool(&self) -> PathBuf {
        self.env.path("remote-spool")
    }

    pub fn stamps(&self) -> PathBuf {
        self.env.path("stamps")
    }

    /// Whether the round's clock has not reached its first minute
    /// boundary: a cron job submitted now runs at it.
    pub fn before_minute(&self) -> bool {
        self.now() < MINUTE
    }

    /// The round's clock now.
    pub fn now(&self) -> i64 {
        self.start + (real_now() - self.anchor).floor() as i64
    }

    /// fake_job's arguments for the job tagged `tag` (`$(Cluster).$(Process)`
    /// in a submit file, `F<n>` for fetched work): stamps around a run of
    /// `secs` seconds, Out and Err, and `extra` verbs before the end stamp.
    fn job_args(&self, tag: &str, secs: f64, extra: &str) -> String {
        let s = self.stamps().display().to_string();
        let l = self.path("locks").display().to_string();
        format!(
            "stamp {s} {tag}:start lock {l}/{tag} {s} {tag}:overlap echo 'out {tag} 1' \
             stderr 'err {tag}' beat {s} {tag}:beat {secs} echo 'out {tag} 2' {extra}\
             stamp {s} {tag}:end exit 0"
        )
    }

    /// The submit description of submit number `seq`: `procs` jobs of
    /// `kind`, each running about `secs` seconds.
    pub fn submit_text(&self, seq: u64, kind: Kind, procs: u64, secs: f64) -> String {
        let tag = "$(Cluster).$(Process)";
        let extra = match kind {
            Kind::Transfer => format!("write result.{tag}.txt 'result {tag}' "),
            _ => String::new(),
        };
        let lines = match kind {
            Kind::Plain => String::new(),
            Kind::Transfer => "should_transfer_files = YES\nwhen_to_transfer_output = ON_EXIT\n\
                               transfer_input_files = in.txt\ntransfer_executable = false\n"
                .into(),
            Kind::Cron => "cron_minute = *\ncron_window = 20\n".into(),
            Kind::Deferred => format!(
                "deferral_time = {}\ndeferral_window = 20\n",
                self.now() + 1 + (seq % 4) as i64
            ),
            Kind::Routed => "+WantOther = true\nrequirements = false\n".into(),
        };
        format!(
            "executable = {}\narguments = \"{}\"\noutput = out/{tag}.out\nerror = out/{tag}.err\n\
             log = jobs.log\n+FaultSubmit = {seq}\n+FaultKind = \"{}\"\n{lines}queue {procs}\n",
            fake_job().display(),
            self.job_args(tag, secs, &extra),
            kind.name()
        )
    }

    /// Puts work item `n` where the fetch hook finds it: written aside,
    /// then renamed in, so the hook never reads half an ad.
    pub fn add_work(&self, n: u64, secs: f64) {
        let tag = format!("F{n}");
        let ad = format!(
            "Cmd = \"{}\"\nArguments = \"{}\"\nIwd = \"{}\"\nOut = \"out/{tag}.out\"\n\
             Err = \"out/{tag}.err\"\nRequestCpus = 1\nRequestMemory = 64\nRequestDisk = 1024\n\
             FaultFetch = {n}\n",
            fake_job().display(),
            self.job_args(&tag, secs, ""),
            self.path("").display().to_string().trim_end_matches('/'),
        );
        let staged = self.path(&format!("staging/{n:05}"));
        std::fs::write(&staged, ad).unwrap();
        std::fs::rename(&staged, self.path(&format!("work/{n:05}"))).unwrap();
    }

    /// The complete Out, Err and result file of the job tagged `tag`.
    pub fn complete_out(tag: &str) -> String {
        format!("out {tag} 1\nout {tag} 2\n")
    }
    pub fn complete_err(tag: &str) -> String {
        format!("err {tag}\n")
    }
    pub fn complete_result(tag: &str) -> String {
        format!("result {tag}\n")
    }
}
