//! Facts about the process and the machine that every layer may need.

pub mod arena;
pub mod env;
pub mod fs;
pub mod group;
pub mod host;
pub mod identity;
pub mod inherited;
pub mod inotify;
pub mod lockprobe;
pub mod nss;
pub mod pids;
pub mod privilege;
pub mod sched;
pub mod term;
pub mod thp;
pub mod time;
pub mod tree;
pub mod tz;

/// The real user's login name (from the real uid, never from anything the
/// caller can set), or the uid as text when it has no passwd entry. The
/// answer is kept for the process's real uid (a tool asks for it while
/// reading the configuration and again when it starts a pass, and each
/// look reads the whole passwd file).
pub fn real_user_name() -> String {
    static KNOWN: std::sync::Mutex<Option<(u32, String)>> = std::sync::Mutex::new(None);
    let uid = real_uid();
    let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    match &*known {
        Some((u, name)) if *u == uid => name.clone(),
        _ => {
            let name = identity::passwd_uid(uid).map_or_else(|| uid.to_string(), |p| p.name);
            *known = Some((uid, name.clone()));
            name
        }
    }
}

/// This machine's name (from the kernel; `localhost` if unreadable or
/// empty), read once per process: the configuration's DETECTED_HOSTNAME
/// and the event logs' addresses both ask.
pub fn hostname() -> &'static str {
    static HOST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|s| s.trim().to_string())
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "localhost".into())
    })
}

/// Sets this thread's timer slack to 1 µs (`PR_SET_TIMERSLACK`), so its
/// short sleeps end when asked rather than up to 50 µs later (Linux's
/// default slack). Errors are ignored: the setting only changes timing.
pub fn fine_timer_slack() {
    // SAFETY: prctl with integer arguments has no memory effects.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1000, 0, 0, 0);
    }
}

/// The real user id.
pub fn real_uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// Makes the child `cmd` starts lead a session of its own (detached from
/// ours, as [`Spawn::new_session`] does), between fork and exec.
pub fn child_starts_session(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setsid is async-signal-safe and touches no memory.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// How [`spawn`] starts a program.
pub struct Spawn<'a> {
    pub exe: &'a std::path::Path,
    pub args: &'a [String],
    /// The whole environment; `None` inherits ours (plus `extra_env`).
    pub env: Option<&'a [(String, String)]>,
    pub extra_env: &'a [(String, String)],
    pub dir: Option<&'a std::path::Path>,
    /// Descriptors 0, 1 and 2 (`None`: /dev/null).
    pub stdio: [Option<std::os::fd::RawFd>; 3],
    /// A new session (detached, as a daemon) rather than only a new
    /// process group.
    pub new_session: bool,
    /// Close every descriptor above 2 in the child (a job's: it gets its
    /// standard files only); otherwise what is not close-on-exec crosses.
    pub only_stdio: bool,
}

/// `k=v` with room for the NUL that CString adds: a job's environment is
/// a few dozen entries, and `format!` made each one in several steps.
fn env_entry(k: &[u8], v: &[u8]) -> Vec<u8> {
    let mut kv = Vec::with_capacity(k.len() + v.len() + 2);
    kv.extend_from_slice(k);
    kv.push(b'=');
    kv.extend_from_slice(v);
    kv
}

/// Starts a program with posix_spawn: glibc's is clone+exec, without
/// copying the caller's page tables, which for a short job or a pass
/// holding 100k rows is most of the cost of fork. The child gets every
/// signal unblocked and at its default action (a shadow blocks its own),
/// its own process group or session, and the scheduling policy this
/// process started with ([`sched::for_children`]). Descriptors the caller wants
/// inherited must not be close-on-exec. An exec failure is the error.
pub fn spawn(s: &Spawn<'_>) -> std::io::Result<i32> {
    use std::ffi::CString;
    use std::io;
    use std::os::unix::ffi::OsStrExt;
    let bad = |_| io::Error::from(io::ErrorKind::InvalidInput);
    let prog = CString::new(s.exe.as_os_str().as_bytes()).map_err(bad)?;
    let mut argv_c = vec![prog.clone()];
    for a in s.args {
        argv_c.push(CString::new(a.as_bytes()).map_err(bad)?);
    }
    let mut envp_c: Vec<CString> = Vec::new();
    match s.env {
        Some(env) => {
            for (k, v) in env {
                envp_c.push(CString::new(env_entry(k.as_bytes(), v.as_bytes())).map_err(bad)?);
            }
        }
        None => {
            for (k, v) in std::env::vars_os() {
                if s.extra_env
                    .iter()
                    .any(|(n, _)| k.as_bytes() == n.as_bytes())
                {
                    continue;
                }
                envp_c.push(CString::new(env_entry(k.as_bytes(), v.as_bytes())).map_err(bad)?);
            }
        }
    }
    for (k, v) in s.extra_env {
        envp_c.push(CString::new(env_entry(k.as_bytes(), v.as_bytes())).map_err(bad)?);
    }
    let cdir = match s.dir {
        Some(d) => Some(CString::new(d.as_os_str().as_bytes()).map_err(bad)?),
        None => None,
    };
    let null = CString::new("/dev/null").expect("no NUL");
    let mut argv: Vec<*mut libc::c_char> = argv_c.iter().map(|c| c.as_ptr() as *mut _).collect();
    argv.push(std::ptr::null_mut());
    let mut envp: Vec<*mut libc::c_char> = envp_c.iter().map(|c| c.as_ptr() as *mut _).collect();
    envp.push(std::ptr::null_mut());
    // SAFETY: the attribute and action objects are initialised before use
    // and destroyed after; every pointer outlives the call.
    unsafe {
        let mut fa: libc::posix_spawn_file_actions_t = std::mem::zeroed();
        let mut at: libc::posix_spawnattr_t = std::mem::zeroed();
        libc::posix_spawn_file_actions_init(&mut fa);
        libc::posix_spawnattr_init(&mut at);
        let mut rc = 0;
        for (i, fd) in s.stdio.iter().enumerate() {
            if rc != 0 {
                break;
            }
            rc = match fd {
                Some(fd) => libc::posix_spawn_file_actions_adddup2(&mut fa, *fd, i as libc::c_int),
                None => libc::posix_spawn_file_actions_addopen(
                    &mut fa,
                    i as libc::c_int,
                    null.as_ptr(),
                    if i == 0 {
                        libc::O_RDONLY
                    } else {
                        libc::O_WRONLY
                    },
                    0,
                ),
            };
        }
        if rc == 0
            && let Some(d) = &cdir
        {
            rc = libc::posix_spawn_file_actions_addchdir_np(&mut fa, d.as_ptr());
        }
        // After the dup2s above: glibc's closefrom, close_range where the
        // kernel has it, else each descriptor /proc/self/fd lists.
        if rc == 0 && s.only_stdio {
            rc = libc::posix_spawn_file_actions_addclosefrom_np(&mut fa, 3);
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::sigdelset(&mut all, libc::SIGKILL);
        libc::sigdelset(&mut all, libc::SIGSTOP);
        if rc == 0 {
            rc = libc::posix_spawnattr_setsigmask(&mut at, &empty);
        }
        if rc == 0 {
            rc = libc::posix_spawnattr_setsigdefault(&mut at, &all);
        }
        let mut flags = libc::POSIX_SPAWN_SETSIGMASK | libc::POSIX_SPAWN_SETSIGDEF;
        // A set-id process's child starts with effective ids = real ids,
        // so its exec also makes them the saved ones: the group is given
        // up for good, even if another thread holds it raised now.
        if privilege::is_setid() {
            flags |= libc::POSIX_SPAWN_RESETIDS;
        }
        // A job of a shadow, which runs itself as SCHED_BATCH while it
        // lingers, starts under the policy the shadow started with (see
        // [`sched`]).
        if let Some(policy) = sched::for_children() {
            let param = libc::sched_param { sched_priority: 0 };
            flags |= libc::POSIX_SPAWN_SETSCHEDULER;
            if rc == 0 {
                rc = libc::posix_spawnattr_setschedpolicy(&mut at, policy);
            }
            if rc == 0 {
                rc = libc::posix_spawnattr_setschedparam(&mut at, &param);
            }
        }
        if s.new_session {
            flags |= libc::POSIX_SPAWN_SETSID as libc::c_int;
        } else {
            flags |= libc::POSIX_SPAWN_SETPGROUP;
            if rc == 0 {
                rc = libc::posix_spawnattr_setpgroup(&mut at, 0);
            }
        }
        if rc == 0 {
            rc = libc::posix_spawnattr_setflags(&mut at, flags as libc::c_short);
        }
        let mut pid: libc::pid_t = 0;
        if rc == 0 {
            rc = libc::posix_spawn(
                &mut pid,
                prog.as_ptr(),
                &fa,
                &at,
                argv.as_ptr(),
                envp.as_ptr(),
            );
        }
        libc::posix_spawn_file_actions_destroy(&mut fa);
        libc::posix_spawnattr_destroy(&mut at);
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(pid)
    }
}

/// An I/O error as a sentence, without the ` (os error N)` Rust appends:
/// what the tools print and what hold reasons and event logs record.
pub fn io_error_text(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(i) if text.ends_with(')') => text[..i].to_string(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn fine_timer_slack_is_this_threads_alone() {
        // A thread of its own, so the test harness's thread keeps its slack.
        let (mine, before) = std::thread::spawn(|| {
            // SAFETY: prctl with integer arguments.
            let before = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
            super::fine_timer_slack();
            // SAFETY: as above.
            (
                unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) },
                before,
            )
        })
        .join()
        .unwrap();
        assert_eq!(mine, 1000);
        assert_ne!(before, 1000, "the default slack is Linux's 50 us");
    }

    #[test]
    fn hostname_is_the_kernels_and_never_empty() {
        let h = super::hostname();
        assert!(!h.is_empty());
        let kernel = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        if !kernel.trim().is_empty() {
            assert_eq!(h, kernel.trim());
        }
    }

    #[test]
    fn real_user_has_a_name() {
        assert!(!super::real_user_name().is_empty());
    }

    #[test]
    fn io_errors_read_as_sentences() {
        let e = std::io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(super::io_error_text(&e), "No such file or directory");
        let plain = std::io::Error::other("a plain (message)");
        assert_eq!(super::io_error_text(&plain), "a plain (message)");
    }
}
