//! The job's processes as the shadow sees them: signals (blocked and read
//! from a signalfd, so none is lost while the shadow is busy), the process
//! tree under the shadow (it is a child subreaper, so every process the job
//! starts stays below it, whatever it does with its process group), usage
//! summed over that tree, and reaping.

use std::collections::HashMap;
use std::io;
use std::sync::Mutex;

/// The signals the shadow takes through its signalfd.
const SIGNALS: [libc::c_int; 6] = [
    libc::SIGCHLD,
    libc::SIGUSR1,
    libc::SIGTERM,
    libc::SIGINT,
    libc::SIGHUP,
    libc::SIGQUIT,
];

pub struct Signals {
    fd: libc::c_int,
    /// The shadow's doorbell ([`crate::queue::joblock::doorbell_path`]):
    /// a tool that may not signal the shadow (a root shadow in shared
    /// mode) writes a byte here instead of sending SIGUSR1.
    doorbell: Option<std::fs::File>,
}

/// What woke the shadow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    Child,
    Request,
    Stop,
    Timeout,
}

fn sigset() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise the set we own.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in SIGNALS {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// Blocks the shadow's signals in the calling thread (and so in every
/// thread it starts later).
pub fn block() {
    let set = sigset();
    // SAFETY: a plain syscall on a set we own.
    unsafe {
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
        libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

impl Signals {
    /// Blocks the shadow's signals and opens a signalfd for them. Call
    /// before anything could send one.
    pub fn install() -> io::Result<Signals> {
        let set = sigset();
        // SAFETY: plain syscalls on a set we own.
        unsafe {
            // A parent may have left SIGCHLD ignored, which would make the
            // kernel reap our children for us.
            libc::signal(libc::SIGCHLD, libc::SIG_DFL);
            if libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error());
            }
            let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(Signals { fd, doorbell: None })
        }
    }

    /// Also wakes for a byte written to `doorbell` (a FIFO this shadow
    /// made and opened for reading and writing, so it never reads EOF).
    pub fn ring_with(&mut self, doorbell: std::fs::File) {
        self.doorbell = Some(doorbell);
    }

    /// Waits up to `timeout_ms` (negative: forever) and returns the most
    /// important thing that happened: a stop signal, a request, a child.
    pub fn wait(&self, timeout_ms: i64) -> Wake {
        use std::os::fd::AsRawFd;
        let bell = self.doorbell.as_ref().map_or(-1, |f| f.as_raw_fd());
        let mut pfd = [
            libc::pollfd {
                fd: self.fd,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: bell,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let t = timeout_ms.clamp(-1, i32::MAX as i64) as libc::c_int;
        // SAFETY: two pollfds we own (a negative fd is ignored by poll).
        let n = unsafe { libc::poll(pfd.as_mut_ptr(), 2, t) };
        if n <= 0 {
            return Wake::Timeout;
        }
        let mut best = Wake::Timeout;
        if pfd[1].revents & libc::POLLIN != 0 {
            let mut buf = [0u8; 64];
            // SAFETY: reading into a buffer we own; the FIFO is
            // non-blocking, so this drains what is there and returns.
            while unsafe { libc::read(bell, buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
            best = Wake::Request;
        }
        loop {
            let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
            let size = std::mem::size_of::<libc::signalfd_siginfo>();
            // SAFETY: reading into a buffer of the right size.
            let r = unsafe { libc::read(self.fd, &mut info as *mut _ as *mut libc::c_void, size) };
            if r != size as isize {
                break;
            }
            let w = match info.ssi_signo as libc::c_int {
                libc::SIGCHLD => Wake::Child,
                libc::SIGUSR1 => Wake::Request,
                _ => Wake::Stop,
            };
            best = match (best, w) {
                (Wake::Stop, _) | (_, Wake::Stop) => Wake::Stop,
                (Wake::Request, _) | (_, Wake::Request) => Wake::Request,
                _ => w,
            };
        }
        best
    }
}

/// Unblocks every signal (in a child between fork and exec: the mask is
/// inherited, and a job must see its signals).
pub fn unblock_all() {
    // SAFETY: async-signal-safe calls on a set we own.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
    }
}

/// Makes orphans of the job our children, so none escapes.
pub fn become_subreaper() {
    // SAFETY: prctl with integer arguments.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// One reaped child: pid, wait status and its rusage (which includes the
/// descendants it waited for), and whether it belonged to a starter hook
/// (see [`spare_group`]).
pub struct Reaped {
    pub pid: i32,
    pub status: libc::c_int,
    pub user: f64,
    pub sys: f64,
    pub hook: bool,
}

/// The next child that has ended, not yet reaped.
fn ended_child() -> Option<i32> {
    // SAFETY: waitid with WNOWAIT only looks, into a siginfo we own.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let r = libc::waitid(
            libc::P_ALL,
            0,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        let pid = info.si_pid();
        (r == 0 && pid > 0).then_some(pid)
    }
}

/// Reaps every child that has ended, without blocking. Each one's process
/// group is read while it is still a zombie, so a hook's leftover is told
/// from the job's processes.
pub fn reap() -> Vec<Reaped> {
    let mut out = Vec::new();
    while let Some(pid) = ended_child() {
        // Without hooks there is no group to tell apart: no /proc read.
        let hook = !hook_groups().is_empty() && stat(pid).is_some_and(|st| is_spared(st.pgrp));
        let mut status: libc::c_int = 0;
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 writes into the status and rusage we own.
        let got = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        if got != pid {
            break;
        }
        let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
        out.push(Reaped {
            pid,
            status,
            user: t(ru.ru_utime),
            sys: t(ru.ru_stime),
            hook,
        });
    }
    out
}

/// Whether the calling process has any child left (running or not yet
/// reaped).
pub fn has_children() -> bool {
    // SAFETY: waitid with WNOWAIT only looks.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let r = libc::waitid(
            libc::P_ALL,
            0,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT | libc::WSTOPPED | libc::WCONTINUED,
        );
        !(r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD))
    }
}

/// Usage of a set of processes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Usage {
    pub user: f64,
    pub sys: f64,
    /// KiB.
    pub image_size: i64,
    /// KiB.
    pub rss: i64,
    pub processes: i64,
}

/// The process groups of the starter hooks this shadow started (see
/// `shadow/hooks/`), each kept until none of its processes is left. Their
/// processes are the shadow's children too (it is a subreaper, so a hook's
/// leftovers come back to it), but not the job's: [`descendants`] leaves
/// them out, so the job's usage, signals and leftover kill never touch
/// them, and [`reap`] marks them.
static HOOK_GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

fn hook_groups() -> std::sync::MutexGuard<'static, Vec<i32>> {
    HOOK_GROUPS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Leaves process group `pgid`, a hook's, out of the job's processes
/// (and forgets the groups of earlier hooks that are all gone and reaped).
pub fn spare_group(pgid: i32) {
    let mut g = hook_groups();
    g.retain(|&old| group_alive(old));
    if !g.contains(&pgid) {
        g.push(pgid);
    }
}

/// Whether group `pgid` has a process, zombies not yet reaped included.
fn group_alive(pgid: i32) -> bool {
    // SAFETY: signal 0 only asks whether the group has a process.
    unsafe { libc::kill(-pgid, 0) == 0 }
}

fn is_spared(pgrp: i32) -> bool {
    hook_groups().contains(&pgrp)
}

/// Before a job starts, whatever runs below the shadow is a hook's
/// leftover (a PREPARE hook's, or JOB_EXIT's of the run before on this
/// claim): its groups are spared, and the ended ones are reaped, uncounted.
pub fn spare_strays() {
    drop(reap());
    let me = std::process::id() as i32;
    for pid in descendants(me) {
        if let Some(st) = stat(pid) {
            spare_group(st.pgrp);
        }
    }
}

/// Kills every hook group's processes, waits (at most `grace`) for them to
/// go, reaping them uncounted, and forgets the groups that are empty.
pub fn kill_hook_groups(grace: std::time::Duration) {
    use crate::sys::pids::signal_group;
    let groups = hook_groups().clone();
    if groups.is_empty() {
        return;
    }
    for &g in &groups {
        signal_group(g, libc::SIGCONT);
        signal_group(g, libc::SIGKILL);
    }
    let until = std::time::Instant::now() + grace;
    loop {
        drop(reap());
        hook_groups().retain(|&g| group_alive(g));
        if hook_groups().is_empty() || std::time::Instant::now() >= until {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Every process below `root` (not `root` itself), from /proc, but for
/// those of the hooks' groups (see [`spare_group`]) and theirs.
pub fn descendants(root: i32) -> Vec<i32> {
    let spared = hook_groups().clone();
    let mut parent: HashMap<i32, i32> = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if let Some(st) = stat(pid)
            && !spared.contains(&st.pgrp)
        {
            parent.insert(pid, st.ppid);
        }
    }
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for (&c, &pp) in &parent {
        children.entry(pp).or_default().push(c);
    }
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for &c in children.get(&p).map(|v| v.as_slice()).unwrap_or(&[]) {
            if c != root {
                out.push(c);
                frontier.push(c);
            }
        }
    }
    out
}

struct Stat {
    ppid: i32,
    pgrp: i32,
    utime: u64,
    stime: u64,
    vsize: u64,
    rss_pages: i64,
}

fn stat(pid: i32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command may hold spaces and parentheses: fields start after the
    // last ')'.
    let rest = &text[text.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Fields from 3 (state) on: ppid is 4, pgrp 5, utime 14, stime 15, vsize 23,
    // rss 24 (1-based in proc(5)); here index = field - 3.
    Some(Stat {
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        utime: f.get(11)?.parse().ok()?,
        stime: f.get(12)?.parse().ok()?,
        vsize: f.get(20)?.parse().ok()?,
        rss_pages: f.get(21)?.parse().ok()?,
    })
}

/// Usage summed over the given processes (the live ones; the dead are
/// counted from their rusage when reaped).
pub fn usage(pids: &[i32]) -> Usage {
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let page_kib = (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) / 1024) as i64;
    let mut u = Usage::default();
    for &p in pids {
        if let Some(s) = stat(p) {
            u.user += s.utime as f64 / hz;
            u.sys += s.stime as f64 / hz;
            u.image_size += (s.vsize / 1024) as i64;
            u.rss += s.rss_pages * page_kib;
            u.processes += 1;
        }
    }
    u
}

/// Sends `sig` to the job's process group and to every process below the
/// shadow (those that left the group too).
pub fn signal_all(pgid: i32, sig: libc::c_int) -> i64 {
    use crate::sys::pids::{signal_group, signal_process};
    let me = std::process::id() as i32;
    let group = i64::from(signal_group(pgid, sig));
    let below = descendants(me)
        .into_iter()
        .filter(|&p| signal_process(p, sig))
        .count() as i64;
    group + below
}
