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

/// Whether process `pid` exists (kill(pid, 0); one of another user's
/// counts too).
pub fn exists(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks the process; no memory effects.
    let sent = unsafe { libc::kill(pid, 0) == 0 };
    sent || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
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
    // One read into a buffer that holds the whole line (under 1 KB: 52
    // numbers and a name of at most 64 bytes): `read_to_string` would
    // stat the file and, procfs giving no size, grow its buffer from 32
    // bytes in five more reads. A shadow asks once per job.
    let mut file = std::fs::File::open(format!("/proc/{pid}/stat")).ok()?;
    let mut buf = [0u8; 2048];
    let mut len = 0;
    while len < buf.len() {
        match std::io::Read::read(&mut file, &mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    // The command name (field 2) is in parentheses and may hold blanks,
    // parentheses and bytes that are not UTF-8: count the fields after its
    // last ')', which is field 3 (the state).
    let close = buf[..len].iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(&buf[close + 1..len]).ok()?;
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

/// Runs test `name` of this test binary again, alone, in a process of its
/// own with `var` set, for a test whose check changes something of the
/// whole process (its ids, its policy, process-wide rules) that the other
/// tests' threads share; the test sees `var` and does the check there.
/// Panics unless that run passed exactly the one test.
#[cfg(test)]
pub(crate) fn rerun_test_alone(name: &str, var: &str) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--test-threads=1"])
        .env(var, "1")
        .output()
        .unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "{name} in a process of its own: {out:?}"
    );
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

    /// A command name with blanks, parentheses and a byte that is not
    /// UTF-8 (the name the program was run by) still gives the start.
    #[test]
    fn a_child_with_an_awkward_name_has_a_start_after_ours() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let name = std::ffi::OsStr::from_bytes(b"a) (b\xff)");
        let prog = dir.path().join(name);
        // A link, not a copy: a copy just written may be busy to exec
        // while another test's fork holds it open. The name is the
        // link's, as exec was given it.
        std::os::unix::fs::symlink("/bin/sleep", &prog).unwrap();
        let mut child = std::process::Command::new(&prog).arg("30").spawn().unwrap();
        let pid = child.id() as i32;
        // The name is the program's once it has executed.
        let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut comm = Vec::new();
        while std::time::Instant::now() < end {
            comm = std::fs::read(format!("/proc/{pid}/comm")).unwrap_or_default();
            if comm.starts_with(b"a) (b") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let started = start_time(pid);
        let _ = child.kill();
        let _ = child.wait();
        assert!(comm.starts_with(b"a) (b\xff)"), "comm {comm:?}");
        let (ours, theirs) = (own_start_time().unwrap(), started.unwrap());
        assert!(theirs >= ours, "child {theirs} before us {ours}");
        assert_eq!(start_time(-1), None);
    }
}
