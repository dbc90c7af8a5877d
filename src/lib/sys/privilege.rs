//! Privileged-process mode: what a set-group-id tern tool does so that the
//! user who runs it cannot turn the group's rights to other uses.
//!
//! In shared mode the one `tern` program is installed setgid `tern` (as
//! Debian's crontab is setgid `crontab`), so every tool starts with the
//! group that may write the queue. [`secure_start`], called first thing by
//! every tool, then:
//! * drops the group at once (egid = rgid, the saved set-group-id keeps
//!   `tern`), so everything the tool does for the user (submit files, logs,
//!   output, commands) happens with the user's own ids; [`raise_group`]
//!   takes the group back only around opening the queue and the spool's
//!   own files;
//! * keeps a copy of the caller's environment for what is the user's data
//!   (`getenv` and `$ENV()` in a submit file, [`caller_var`]) and replaces
//!   the process environment by a fixed minimal one, so nothing tern, std
//!   or SQLite reads later (`TERN_*`, `_TERN_*`, `XDG_*`, `HOME`, `TZ`,
//!   `RUST_*`, `SQLITE_TMPDIR`) comes from the caller;
//! * resets what the caller chose for it: umask, signal mask and
//!   dispositions, closed descriptors 0-2.
//!
//! "Privileged" is `secure_getenv`'s test (AT_SECURE, or real ids that
//! differ from effective ones) for a caller that is not root: root's own
//! environment is root's to use. A set-id exec already makes the process
//! non-dumpable (no ptrace, no core, `/proc/<pid>` owned by root), and
//! nothing here sets `PR_SET_DUMPABLE` back.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// Where the installed tools live. Helpers a privileged tool starts (a
/// pass, a shadow, tern_config_val) are started from here by absolute path,
/// never from `current_exe()` or `argv[0]`, which a user picks by copying
/// or linking the program.
pub const SYSTEM_BINDIR: &str = match option_env!("TERN_SYSTEM_BINDIR") {
    Some(d) => d,
    None => "/usr/bin",
};

/// The one environment a privileged tool keeps.
pub const SAFE_PATH: &str = "/usr/bin:/bin";

/// The ids and environment the process started with.
struct Start {
    /// Started set-id: AT_SECURE, or real ids different from effective.
    setid: bool,
    ruid: libc::uid_t,
    rgid: libc::gid_t,
    /// The effective gid at start: the group a setgid exec gave us.
    gid: libc::gid_t,
    /// The caller's environment, when it was taken away; `None` when the
    /// process environment is still the caller's.
    caller_env: Option<Vec<(String, String)>>,
    /// The caller's umask, when the tool's was reset.
    caller_umask: Option<libc::mode_t>,
}

static START: OnceLock<Start> = OnceLock::new();

/// How many [`GroupGuard`]s are alive; the group is raised while any is.
static RAISED: Mutex<usize> = Mutex::new(0);

fn ids() -> (bool, libc::uid_t, libc::gid_t, libc::gid_t) {
    // SAFETY: getauxval and the get*id calls have no preconditions and
    // only read process state.
    unsafe {
        let secure = libc::getauxval(libc::AT_SECURE) != 0;
        let (ruid, euid) = (libc::getuid(), libc::geteuid());
        let (rgid, egid) = (libc::getgid(), libc::getegid());
        (secure || ruid != euid || rgid != egid, ruid, rgid, egid)
    }
}

impl Start {
    /// The ids as they are now; nothing of the caller's taken away.
    fn now() -> Start {
        let (setid, ruid, rgid, gid) = ids();
        Start {
            setid,
            ruid,
            rgid,
            gid,
            caller_env: None,
            caller_umask: None,
        }
    }
}

fn start() -> &'static Start {
    START.get_or_init(Start::now)
}

/// Whether the process was started set-id (by anyone, root included).
pub fn is_setid() -> bool {
    start().setid
}

/// Whether the process runs with rights its caller does not have: started
/// set-id by a user other than root. Such a process trusts nothing its
/// caller controls (see the module documentation).
pub fn is_privileged() -> bool {
    let s = start();
    s.setid && s.ruid != 0
}

/// The start-up step of every tool; call it first thing, before any other
/// thread exists. Does nothing for a process that is not set-id. For a
/// set-id one it drops the group (keeping it saved for [`raise_group`]),
/// and when [`is_privileged`] it also replaces the environment and resets
/// the umask, signals and standard descriptors. Calling it again does
/// nothing.
pub fn secure_start() {
    if START.get().is_some() {
        return;
    }
    let mut st = Start::now();
    let (setid, ruid, rgid) = (st.setid, st.ruid, st.rgid);
    if setid {
        // SAFETY: setegid to the real gid is always permitted and keeps
        // the saved set-group-id, so the group can be raised again.
        if unsafe { libc::setegid(rgid) } != 0 {
            // Never go on with the group held.
            note!(
                "tern: cannot drop the set-group-id group: {}",
                std::io::Error::last_os_error()
            );
            std::process::exit(1);
        }
    }
    if setid && ruid != 0 {
        st.caller_env = Some(replace_environment());
        st.caller_umask = Some(reset_inherited_state());
    }
    let _ = START.set(st);
}

/// Takes the caller's environment out of the process, leaving only
/// `PATH=/usr/bin:/bin`, and returns it (entries that are not UTF-8 are
/// left out: nothing tern passes on can hold them).
fn replace_environment() -> Vec<(String, String)> {
    let kept = std::env::vars_os()
        .filter_map(|(k, v): (OsString, OsString)| {
            Some((k.into_string().ok()?, v.into_string().ok()?))
        })
        .collect();
    // SAFETY: called from secure_start, before any other thread exists,
    // so nothing reads the environment while it changes. clearenv also
    // removes entries std cannot name (an empty or '='-holding name).
    unsafe {
        libc::clearenv();
        std::env::set_var("PATH", SAFE_PATH);
    }
    kept
}

/// umask 022 (SQLite fchmods its side files, but the tool's own files get
/// a known mode), every signal at its default and unblocked except the job
/// control stops (a transaction is not suspended from the terminal),
/// SIGXFSZ ignored (a write past RLIMIT_FSIZE fails, and the transaction
/// rolls back, rather than killing the tool mid-write) and SIGPIPE ignored
/// as Rust's runtime set it; closed descriptors 0-2 opened on /dev/null, so
/// no file the tool opens lands on them.
fn reset_inherited_state() -> libc::mode_t {
    // SAFETY: umask, sigaction, sigprocmask, fcntl and open have no memory
    // effects beyond the structures passed, which live on our stack.
    let caller_umask = unsafe { libc::umask(0o022) };
    unsafe {
        for sig in 1..=libc::SIGRTMAX() {
            if sig == libc::SIGKILL || sig == libc::SIGSTOP {
                continue;
            }
            let action = match sig {
                libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU | libc::SIGXFSZ | libc::SIGPIPE => {
                    libc::SIG_IGN
                }
                _ => libc::SIG_DFL,
            };
            libc::signal(sig, action);
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        for fd in 0..3 {
            if libc::fcntl(fd, libc::F_GETFD) < 0 {
                // open returns the lowest free descriptor: this one.
                libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            }
        }
    }
    caller_umask
}

/// The caller's umask (the user's data, as at(1) records it for the
/// job): the one the tool started with.
pub fn caller_umask() -> libc::mode_t {
    match start().caller_umask {
        Some(m) => m,
        // SAFETY: umask only swaps the mask; it is put straight back.
        None => unsafe {
            let m = libc::umask(0o022);
            libc::umask(m);
            m
        },
    }
}

/// The caller's environment: what it was when the process started, also
/// in a privileged tool whose own environment was replaced. For the user's
/// own data only (submit's `getenv`, `$ENV()` in a submit file, commands a
/// submit file runs as the user), never for tern's behaviour.
pub fn caller_env() -> Vec<(String, String)> {
    match &start().caller_env {
        Some(v) => v.clone(),
        None => std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect(),
    }
}

/// One variable of [`caller_env`].
pub fn caller_var(name: &str) -> Option<String> {
    match &start().caller_env {
        Some(v) => v.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
        None => std::env::var(name).ok(),
    }
}

/// The group raised for as long as it lives (see [`raise_group`]).
#[must_use = "the group is dropped again when the guard is"]
pub struct GroupGuard {
    raised: bool,
}

/// Raises the effective group to the one the process started set-id to,
/// until the guard is dropped: only around opening the queue and the
/// spool's files. A no-op (an inert guard) in a process that is not
/// set-id. Guards nest; the group drops with the last.
pub fn raise_group() -> GroupGuard {
    let s = start();
    if !s.setid || s.gid == s.rgid {
        return GroupGuard { raised: false };
    }
    let mut n = RAISED.lock().unwrap_or_else(|e| e.into_inner());
    if *n == 0 {
        // SAFETY: setegid to the saved set-group-id is permitted.
        unsafe { libc::setegid(s.gid) };
    }
    *n += 1;
    GroupGuard { raised: true }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if !self.raised {
            return;
        }
        let mut n = RAISED.lock().unwrap_or_else(|e| e.into_inner());
        *n -= 1;
        if *n == 0 {
            drop_group();
        }
    }
}

/// Back to egid = rgid (the saved set-group-id still holds the group).
pub fn drop_group() {
    let s = start();
    // SAFETY: setegid to the real gid is always permitted.
    if s.setid && unsafe { libc::setegid(s.rgid) } != 0 {
        // Going on with the group held would do the user's work with it.
        std::process::abort();
    }
}

/// Gives up the group for good: real, effective and saved gid all become
/// the real gid as it is now (so that it also holds after an earlier step
/// of the same child switched to a job's owner). For the child of a fork,
/// just before exec: only async-signal-safe calls, no allocation.
pub fn drop_group_for_good() -> std::io::Result<()> {
    let Some(s) = START.get() else {
        return Ok(());
    };
    if !s.setid {
        return Ok(());
    }
    // SAFETY: getgid cannot fail; setresgid to the real gid is always
    // permitted; neither touches memory.
    let r = unsafe { libc::getgid() };
    if unsafe { libc::setresgid(r, r, r) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Makes the child `cmd` starts give up the group for good before its
/// exec (nothing for a process that is not set-id).
pub fn child_drops_group(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    if !is_setid() {
        return;
    }
    // SAFETY: the closure only calls setresgid on ids read before the fork.
    unsafe {
        cmd.pre_exec(drop_group_for_good);
    }
}

/// The absolute path a set-id tool starts the helper `name` from
/// ([`SYSTEM_BINDIR`]); `None` when the process is not set-id and may look
/// beside itself.
pub fn helper(name: &str) -> Option<PathBuf> {
    is_setid().then(|| PathBuf::from(SYSTEM_BINDIR).join(name))
}

/// The real user's home directory from the password database (never
/// `HOME`), for a privileged process's `~` and the configuration's HOME.
pub fn real_home() -> Option<String> {
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    super::identity::passwd_uid(uid)?.home
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ordinary_process_is_not_privileged() {
        // The test runner is started plainly, by root or a user.
        assert!(!is_setid());
        assert!(!is_privileged());
        assert!(helper("tern_shadow").is_none());
        // Its environment is its caller's, and raising is a no-op.
        // SAFETY: getegid has no preconditions.
        let before = unsafe { libc::getegid() };
        {
            let _g = raise_group();
            let _h = raise_group();
            assert_eq!(unsafe { libc::getegid() }, before);
        }
        assert_eq!(unsafe { libc::getegid() }, before);
        assert!(drop_group_for_good().is_ok());
    }

    #[test]
    fn caller_variables_read_the_process_environment_when_not_privileged() {
        assert_eq!(caller_var("PATH"), std::env::var("PATH").ok());
        assert!(caller_env().iter().any(|(k, _)| k == "PATH"));
    }

    #[test]
    fn helpers_come_from_a_fixed_absolute_directory() {
        assert!(std::path::Path::new(SYSTEM_BINDIR).is_absolute());
    }

    #[test]
    fn the_real_home_comes_from_passwd() {
        // SAFETY: getuid has no preconditions.
        let uid = unsafe { libc::getuid() };
        let want = super::super::identity::passwd_uid(uid).and_then(|p| p.home);
        assert_eq!(real_home(), want);
    }
}
