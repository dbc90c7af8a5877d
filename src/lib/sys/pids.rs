//! Signals to processes and process groups by id (kill(2)).

/// Sends `sig` to the process `pid`; whether it was delivered (false for a
/// process that has exited meanwhile, which callers mostly do not mind).
pub fn signal_process(pid: i32, sig: i32) -> bool {
    if pid <= 0 {
        // kill(0 or -n) would reach a whole group: not what this promises.
        return false;
    }
    // SAFETY: kill(2) with a valid signal number has no memory effects.
    unsafe { libc::kill(pid, sig) == 0 }
}

/// Sends `sig` to every process of the group `pgid` (kill(-pgid));
/// whether any process received it.
pub fn signal_group(pgid: i32, sig: i32) -> bool {
    if pgid <= 1 {
        // -1 is every process we may signal, -0 our own group.
        return false;
    }
    // SAFETY: as above.
    unsafe { libc::kill(-pgid, sig) == 0 }
}

/// When process `pid` started, in clock ticks after boot (field 22 of
/// `/proc/PID/stat`); `None` when there is no such process. With the pid
/// it names one process for good: a reused pid has a later start.
pub fn start_time(pid: i32) -> Option<u64> {
    if pid <= 0 {
        return None;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold blanks
    // and parentheses: count the fields after its last ')', which is
    // field 3 (the state).
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(22 - 3)?.parse().ok()
}

/// [`start_time`] of this process, read once per process (a lingering
/// shadow records it with every job it runs); a child forked since the
/// read reads its own, and a read that failed is tried again next time.
pub fn own_start_time() -> Option<u64> {
    static OWN: std::sync::OnceLock<(u32, u64)> = std::sync::OnceLock::new();
    let me = std::process::id();
    match OWN.get() {
        Some(&(pid, started)) if pid == me => Some(started),
        Some(_) => start_time(me as i32),
        None => {
            let started = start_time(me as i32)?;
            let _ = OWN.set((me, started));
            Some(started)
        }
    }
}

/// Sends `sig` to the group `pgid` only if it is still the group whose
/// leader (pid `pgid`) started at `started`. A live process with that pid
/// and another start time means the pid was given out again, which Linux
/// does only once the old group has no process left: nothing of ours to
/// signal. A leader that has exited may have left members behind, and a
/// pid that leads a live group is not given out, so the group is signalled.
pub fn signal_group_started(pgid: i32, started: u64, sig: i32) -> bool {
    match start_time(pgid) {
        Some(t) if t != started => false,
        _ => signal_group(pgid, sig),
    }
}

/// State letter, session id and start time of process `pid` (fields 3,
/// 6 and 22 of `/proc/PID/stat`).
fn state_session_start(pid: i32) -> Option<(char, i32, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let state = f.first()?.chars().next()?;
    Some((
        state,
        f.get(6 - 3)?.parse().ok()?,
        f.get(22 - 3)?.parse().ok()?,
    ))
}

/// Sends `sig` to every process left in the session of a leader that is
/// gone: the session `sid` whose leader (pid `sid`) started at `started`,
/// once that leader has exited (or is a zombie). A live leader is left
/// alone, and so is a live process with that pid and another start time
/// (Linux gives a pid out again only once no process has it as its
/// session, so that session is someone else's). Looks again while it
/// finds members (one may fork as it dies). Returns how many it signalled.
pub fn signal_dead_session(sid: i32, started: u64, sig: i32) -> usize {
    if sid <= 1 {
        return 0;
    }
    match state_session_start(sid) {
        Some((state, _, t)) if t != started || !matches!(state, 'Z' | 'X') => return 0,
        _ => {}
    }
    let me = std::process::id() as i32;
    let mut total = 0;
    for _ in 0..10 {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            break;
        };
        let members: Vec<i32> = dir
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .filter(|&pid| pid != me && pid != sid)
            .filter(|&pid| state_session_start(pid).is_some_and(|(st, s, _)| s == sid && st != 'Z'))
            .collect();
        if members.is_empty() {
            break;
        }
        total += members.iter().filter(|&&p| signal_process(p, sig)).count();
    }
    total
}

/// Whether our child `pid` has exited, without reaping it (waitid with
/// WNOWAIT): while it is a zombie its pid, and so its process group id,
/// cannot be given out again, so the group can still be signalled safely.
pub fn child_exited(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: an all-zero siginfo_t is a valid value for waitid to fill.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: waitid writes only into `info`, which we own.
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // SAFETY: si_pid is valid to read once waitid has filled the struct
    // (0 when WNOHANG found the child still running).
    r == 0 && unsafe { info.si_pid() } == pid
}

/// A process that has one of `paths` open: its pid, real uid and state
/// letter (`/proc/PID/stat` field 3: `T` stopped, `t` traced, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    pub pid: i32,
    pub uid: u32,
    pub state: char,
}

/// Every other process with one of `paths` open, found through
/// `/proc/*/fd` (root sees every process's descriptors; anyone else only
/// their own processes').
pub fn holders_of(paths: &[std::path::PathBuf]) -> Vec<Holder> {
    let me = std::process::id() as i32;
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        let holds = fds
            .flatten()
            .filter_map(|fd| std::fs::read_link(fd.path()).ok())
            .any(|target| paths.contains(&target));
        if holds && let Some(h) = holder(pid) {
            found.push(h);
        }
    }
    found
}

/// The uid and state of `pid`, from `/proc/PID/status`.
pub fn holder(pid: i32) -> Option<Holder> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
    };
    Some(Holder {
        pid,
        state: field("State:")?.chars().next()?,
        uid: field("Uid:")?.split_whitespace().next()?.parse().ok()?,
    })
}

/// The process holding a POSIX (fcntl) write lock on byte `byte` of the
/// file `path`, from `/proc/locks` (readable by everyone, and read without
/// opening `path`: closing any descriptor of a file drops every fcntl lock
/// this process holds on it, SQLite's included).
pub fn posix_write_lock_holder(path: &std::path::Path, byte: u64) -> Option<i32> {
    let (locks, dev, ino) = proc_locks_for(path)?;
    posix_locks_on(&locks, dev, ino, byte)
        .find(|&(write, _)| write)
        .map(|(_, pid)| pid)
}

/// Whether a process other than this one holds a POSIX (fcntl) lock, read
/// or write, on byte `byte` of the file `path`; read from `/proc/locks`
/// for the reason [`posix_write_lock_holder`] gives. `None` when that
/// cannot be told (no such file, no `/proc/locks`).
pub fn others_lock_byte(path: &std::path::Path, byte: u64) -> Option<bool> {
    let (locks, dev, ino) = proc_locks_for(path)?;
    let me = std::process::id() as i32;
    Some(posix_locks_on(&locks, dev, ino, byte).any(|(_, pid)| pid != me))
}

/// `/proc/locks` and the device and inode of `path`, to find its lines.
fn proc_locks_for(path: &std::path::Path) -> Option<(String, (u32, u32), u64)> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::symlink_metadata(path).ok()?;
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    let dev = (libc::major(md.dev()), libc::minor(md.dev()));
    Some((locks, dev, md.ino()))
}

/// The granted POSIX locks of `/proc/locks` text `locks` that cover byte
/// `byte` of the file (`dev`, `ino`), as (whether a write lock, pid). A
/// line reads `1: POSIX  ADVISORY  WRITE 1234 fd:01:5678 120 120`; waiters
/// (`->`) and open-file-description locks (pid -1) hold nothing.
fn posix_locks_on<'a>(
    locks: &'a str,
    dev: (u32, u32),
    ino: u64,
    byte: u64,
) -> impl Iterator<Item = (bool, i32)> + 'a {
    let file = format!("{:02x}:{:02x}:{ino}", dev.0, dev.1);
    locks.lines().filter_map(move |line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 8 || f[1] != "POSIX" || f[5] != file {
            return None;
        }
        let start: u64 = f[6].parse().ok()?;
        let covers = match f[7] {
            "EOF" => byte >= start,
            end => byte >= start && byte <= end.parse().ok()?,
        };
        let pid: i32 = f[4].parse().ok()?;
        (covers && pid > 0).then_some((f[3] == "WRITE", pid))
    })
}

/// Starts the ignored test `name` of this test binary in a process of its
/// own, with `var` set to `value` (a helper that holds a lock or the queue
/// while the calling test looks on); `None` when it cannot be started.
#[cfg(test)]
pub(crate) fn spawn_helper_test(
    name: &str,
    var: &str,
    value: &std::path::Path,
) -> Option<std::process::Child> {
    std::process::Command::new(std::env::current_exe().ok()?)
        .args(["--exact", name, "--ignored", "--nocapture"])
        .env(var, value)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()
}

#[cfg(test)]
mod lock_tests {
    use super::*;

    #[test]
    fn the_write_lock_on_a_byte_is_found_in_proc_locks() {
        let locks = "1: POSIX  ADVISORY  READ 900 fd:01:77 128 128\n\
                     2: POSIX  ADVISORY  WRITE 901 fd:01:78 120 120\n\
                     2: -> POSIX  ADVISORY  WRITE 903 fd:01:77 120 120\n\
                     3: OFDLCK ADVISORY  WRITE -1 fd:01:77 120 120\n\
                     4: POSIX  ADVISORY  WRITE 902 fd:01:77 120 120\n\
                     5: POSIX  ADVISORY  WRITE 904 fd:01:79 100 EOF\n";
        let find_write_lock = |dev, ino, byte| {
            posix_locks_on(locks, dev, ino, byte)
                .find(|&(write, _)| write)
                .map(|(_, pid)| pid)
        };
        assert_eq!(find_write_lock((0xfd, 1), 77, 120), Some(902));
        assert_eq!(find_write_lock((0xfd, 1), 77, 128), None, "a read lock");
        assert_eq!(find_write_lock((0xfd, 1), 77, 121), None);
        assert_eq!(find_write_lock((0xfd, 2), 77, 120), None, "another device");
        assert_eq!(find_write_lock((0xfd, 1), 79, 120), Some(904));
        // Every lock on the byte, read locks too (SQLite's connections
        // each hold one on byte 128 of the -shm file).
        assert_eq!(
            posix_locks_on(locks, (0xfd, 1), 77, 128).collect::<Vec<_>>(),
            vec![(false, 900)]
        );
    }

    #[test]
    fn a_childs_fcntl_lock_is_seen_with_its_pid() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("locked");
        std::fs::write(&f, vec![0u8; 200]).unwrap();
        // flock(1) takes a whole-file flock, not fcntl: lock byte 120
        // with a child of our own instead.
        let Some(mut child) = spawn_helper_test(
            "sys::pids::lock_tests::hold_a_lock_helper",
            "TERN_TEST_LOCK_FILE",
            &f,
        ) else {
            return;
        };
        let pid = child.id() as i32;
        let end = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let mut seen = None;
        while std::time::Instant::now() < end && seen.is_none() {
            seen = posix_write_lock_holder(&f, 120);
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        signal_process(pid, libc::SIGKILL);
        let _ = child.wait();
        assert_eq!(seen, Some(pid));
        assert_eq!(
            posix_write_lock_holder(&f, 120),
            None,
            "gone with its holder"
        );
    }

    /// Run by the test above in a process of its own: write-locks byte 120
    /// of TERN_TEST_LOCK_FILE and sleeps.
    #[test]
    #[ignore = "a helper process of a_childs_fcntl_lock_is_seen_with_its_pid"]
    fn hold_a_lock_helper() {
        use std::os::fd::AsRawFd;
        let Some(path) = std::env::var_os("TERN_TEST_LOCK_FILE") else {
            return;
        };
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .unwrap();
        // SAFETY: an all-zero flock is a valid value to fill in.
        let mut fl: libc::flock = unsafe { std::mem::zeroed() };
        fl.l_type = libc::F_WRLCK as libc::c_short;
        fl.l_whence = libc::SEEK_SET as libc::c_short;
        fl.l_start = 120;
        fl.l_len = 1;
        // SAFETY: F_SETLK with a valid flock on a descriptor we own.
        assert_eq!(unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETLK, &fl) }, 0);
        std::thread::sleep(std::time::Duration::from_secs(60));
    }
}

#[cfg(test)]
mod holder_tests {
    use super::*;

    #[test]
    fn a_stopped_child_holding_a_file_is_found_with_its_state() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("held");
        std::fs::write(&f, "").unwrap();
        let mut child = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(format!("exec 3<'{}'; kill -STOP $$; sleep 30", f.display()))
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut seen = Vec::new();
        while std::time::Instant::now() < end {
            seen = holders_of(std::slice::from_ref(&f));
            if seen.iter().any(|h| h.pid == pid && h.state == 'T') {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        signal_process(pid, libc::SIGKILL);
        let _ = child.wait();
        let h = seen
            .iter()
            .find(|h| h.pid == pid)
            .expect("the child holds the file");
        assert_eq!(h.state, 'T');
        // SAFETY: getuid has no preconditions.
        assert_eq!(h.uid, unsafe { libc::getuid() });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_start_time_is_this_process_and_stays() {
        let me = std::process::id() as i32;
        let read = start_time(me);
        assert!(read.is_some());
        assert_eq!(own_start_time(), read);
        assert_eq!(own_start_time(), read);
    }
}
