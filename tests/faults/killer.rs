//! The killer: a thread that, at random instants, picks one of the round's
//! live tern processes (a kind first, then a process of that kind) and
//! kills it with SIGKILL. The round's processes are found in /proc, as
//! bench/common.sh's `own_pids` finds them: every process whose
//! environment names the round's directory (tools, passes, shadows, hook
//! runners), whose command line does (hooks, jobs), or that works in it
//! (jobs).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::common::rng::Rng;

/// One live process of the round.
#[derive(Clone, Debug)]
pub struct Proc {
    pub pid: i32,
    pub comm: String,
    /// Since boot, in clock ticks (`/proc/<pid>/stat` field 22): with the
    /// pid, it names the process even after the pid is given out again.
    pub start: u64,
    pub state: char,
    /// It leads its session (every process the passes start detached).
    pub leader: bool,
}

/// Process `pid` as `/proc/<pid>/stat` shows it.
fn stat(pid: i32) -> Option<Proc> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text[open + 1..close].to_string();
    // Fields from 3 (the state): the session is field 6, the start 22.
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    let state = rest.first()?.chars().next()?;
    let session: i32 = rest.get(3)?.parse().ok()?;
    let start = rest.get(19)?.parse().ok()?;
    Some(Proc {
        pid,
        comm,
        start,
        state,
        leader: session == pid,
    })
}

/// Whether process `pid` belongs to the round in `dir`: it works in the
/// directory, or its environment or its command line names a path inside
/// it (a hook runs with an environment of its own, and its command line
/// names its script). `dir_slash` is the directory with a trailing slash,
/// so that a directory whose name begins with this one's is not taken
/// for it.
fn is_ours(pid: i32, dir: &Path, dir_slash: &[u8]) -> bool {
    let names = |what: &str| {
        std::fs::read(format!("/proc/{pid}/{what}"))
            .is_ok_and(|text| text.windows(dir_slash.len()).any(|w| w == dir_slash))
    };
    std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(dir))
        || names("environ")
        || names("cmdline")
}

/// Every live (not zombie) process of the round in `dir`, but this one.
pub fn processes(dir: &Path) -> Vec<Proc> {
    scan(dir, |_| true)
}

/// The live processes of the round that pass `wanted` (tested first:
/// reading a process's environment costs more).
fn scan(dir: &Path, wanted: impl Fn(&Proc) -> bool) -> Vec<Proc> {
    let me = std::process::id() as i32;
    let mut dir_slash = dir.as_os_str().as_encoded_bytes().to_vec();
    dir_slash.push(b'/');
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .filter_map(|pid| {
            let p = stat(pid)?;
            let live = !matches!(p.state, 'Z' | 'X');
            (live && wanted(&p) && is_ours(pid, dir, &dir_slash)).then_some(p)
        })
        .collect()
}

/// What a kill may hit: the category of a process by its command name
/// (jobs and the shell tools hooks run are not targets). What a shadow
/// starts is named after it until its exec: a tern_shadow that does not
/// lead its session is a job being started, not a shadow (the harness
/// once killed jobs so, and took their signal exits for tern's).
pub fn category(p: &Proc) -> Option<&'static str> {
    if p.comm == "tern_shadow" && !p.leader {
        return None;
    }
    Some(match p.comm.as_str() {
        "tern_submit" => "submit",
        "tern_q" | "tern_history" | "tern_rm" | "tern_hold" | "tern_release"
        | "tern_vacate_job" | "tern_suspend" | "tern_continue" => "queue tool",
        "tern_negotiate" => "pass",
        "tern_shadow" => "shadow",
        "tern_job_router" => "router",
        "tern_fetchwork" | "tern_cron" => "hook runner",
        "fetch.sh" | "reply.sh" | "evict.sh" | "probe.sh" => "hook",
        c if c.starts_with("tern_gridmanag") => "gridmanager",
        _ => return None,
    })
}

/// A shadow's job (from its command line), that job's lock record and
/// the shadow's children, for the kill log: a run that outlives its
/// shadow is explained by what the lock said when the shadow died.
fn shadow_state(dir: &Path, pid: i32) -> String {
    let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let args: Vec<String> = cmd
        .split(|&b| b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let job = args.get(1).cloned().unwrap_or_default();
    // The shadow works in a thread of its own: every task's children.
    let children: String = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| {
            d.flatten()
                .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
                .collect()
        })
        .unwrap_or_default();
    let kids: Vec<String> = children
        .split_whitespace()
        .filter_map(|c| c.parse().ok())
        .filter_map(|c: i32| Some(format!("{c} {}", stat(c)?.comm)))
        .collect();
    let locks: Vec<String> = ["spool", "remote-spool"]
        .iter()
        .filter_map(|s| {
            let text =
                std::fs::read_to_string(dir.join(s).join("shadow").join(format!("{job}.lock")))
                    .ok()?;
            Some(format!("{s}: {:?}", text.trim_end()))
        })
        .collect();
    format!(" (job {job}; lock {locks:?}; children {kids:?})")
}

/// SIGKILL to `p`, only if it is still the process seen (a pidfd pins the
/// pid while its start time is compared); whether it landed.
fn kill(p: &Proc) -> bool {
    // SAFETY: plain syscalls on integers; the descriptor is closed below.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, p.pid, 0) } as i32;
    if fd < 0 {
        return false;
    }
    // The same process, not yet executing another program.
    let same = stat(p.pid).is_some_and(|now| {
        now.start == p.start && now.comm == p.comm && !matches!(now.state, 'Z' | 'X')
    });
    let sent = same
        && unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                fd,
                libc::SIGKILL,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            )
        } == 0;
    unsafe { libc::close(fd) };
    sent
}

/// How often the killer strikes: a pause drawn from `min_ms..=max_ms`
/// before each kill.
#[derive(Clone, Copy, Debug)]
pub struct Pace {
    pub min_ms: i64,
    pub max_ms: i64,
}

/// What a killer did.
#[derive(Debug, Default)]
pub struct Tally {
    pub by_category: BTreeMap<&'static str, usize>,
    /// One line per kill (time into the round, category, command, pid).
    pub log: Vec<String>,
}

impl Tally {
    pub fn total(&self) -> usize {
        self.by_category.values().sum()
    }
}

pub struct Killer {
    stop: Arc<AtomicBool>,
    kills: Arc<std::sync::atomic::AtomicUsize>,
    handle: JoinHandle<Tally>,
}

impl Killer {
    /// Starts killing the round's processes in `dir`, drawing from `seed`.
    pub fn start(dir: PathBuf, seed: u64, pace: Pace) -> Killer {
        let stop = Arc::new(AtomicBool::new(false));
        let kills = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (s, k) = (stop.clone(), kills.clone());
        let handle = std::thread::spawn(move || strike(&dir, seed, pace, &s, &k));
        Killer {
            stop,
            kills,
            handle,
        }
    }

    /// Kills so far.
    pub fn kills(&self) -> usize {
        self.kills.load(Ordering::Relaxed)
    }

    pub fn stop(self) -> Tally {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().expect("the killer thread")
    }
}

/// Every kind of process a kill may hit, as [`category`] names them.
const CATEGORIES: [&str; 8] = [
    "submit",
    "queue tool",
    "pass",
    "shadow",
    "router",
    "gridmanager",
    "hook runner",
    "hook",
];

/// How long the killer looks for a process of the kind it picked before
/// it takes any process of the round instead.
const HUNT: Duration = Duration::from_millis(100);

/// The killer's loop: a pause, a kind of process drawn uniformly (so the
/// short-lived kinds, a submit or a hook, are hit about as often as
/// shadows), a hunt for one, polling /proc (failing that, any kind
/// present), and the kill at a random instant after it is found (up to
/// 40 ms later, about a submit's whole run).
fn strike(
    dir: &Path,
    seed: u64,
    pace: Pace,
    stop: &AtomicBool,
    kills: &std::sync::atomic::AtomicUsize,
) -> Tally {
    let mut rng = Rng::new(seed);
    let mut tally = Tally::default();
    let began = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        let pause = rng.range(pace.min_ms, pace.max_ms) as u64;
        std::thread::sleep(Duration::from_millis(pause));
        let wanted = *rng.pick(&CATEGORIES);
        let hunt = Instant::now();
        let found = loop {
            let procs = scan(dir, |p| category(p).is_some());
            let of_kind: Vec<&Proc> = procs
                .iter()
                .filter(|p| category(p) == Some(wanted))
                .collect();
            if !of_kind.is_empty() {
                break Some((*rng.pick(&of_kind)).clone());
            }
            if hunt.elapsed() > HUNT && !procs.is_empty() {
                break Some(rng.pick(&procs).clone());
            }
            if stop.load(Ordering::Relaxed) {
                break None;
            }
            std::thread::sleep(Duration::from_millis(3));
        };
        let Some(victim) = found else { continue };
        let cat = category(&victim).expect("scanned for a kind");
        std::thread::sleep(Duration::from_millis(rng.below(40)));
        // What a shadow was doing, read just before it dies.
        let doing = match cat {
            "shadow" => shadow_state(dir, victim.pid),
            _ => String::new(),
        };
        if kill(&victim) {
            *tally.by_category.entry(cat).or_default() += 1;
            kills.fetch_add(1, Ordering::Relaxed);
            tally.log.push(format!(
                "{:>8.3}s {cat} {} {}{doing}",
                began.elapsed().as_secs_f64(),
                victim.comm,
                victim.pid
            ));
        }
    }
    tally
}
