//! Tests that run as root and act for other users (the pass and the
//! shadow run as root, the jobs as their owners): a test user made for one
//! test and deleted after it, a test directory and SPOOL that user can
//! reach, and running a tool as that user. As anyone but root these tests
//! say why and pass without checking ([`root_with_user`]).

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use super::{RunEnv, bin};

pub fn is_root() -> bool {
    tern::sys::identity::is_root()
}

/// A system user for one test, deleted on drop.
pub struct User {
    pub name: String,
}

impl User {
    /// A new user called `name` (an older one of that name goes first);
    /// None when useradd fails.
    pub fn create(name: &str) -> Option<User> {
        // useradd takes /etc/passwd's lock: one at a time.
        static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _held = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let _ = Command::new("userdel").arg(name).output();
        let ok = Command::new("useradd")
            .args(["--no-create-home", "--shell", "/bin/sh", name])
            .status()
            .ok()?
            .success();
        ok.then(|| User { name: name.into() })
    }

    /// The user's ids and groups as the tools look them up.
    pub fn identity(&self) -> tern::sys::identity::Identity {
        tern::sys::identity::user(&self.name).expect("the test user exists")
    }

    pub fn uid(&self) -> u32 {
        self.identity().uid
    }

    pub fn gid(&self) -> u32 {
        self.identity().gid
    }
}

impl Drop for User {
    fn drop(&mut self) {
        let _ = Command::new("userdel").arg(&self.name).output();
    }
}

impl User {
    /// Adds the user to `group` (a supplementary group).
    pub fn join(&self, group: &str) {
        let ok = Command::new("usermod")
            .args(["-a", "-G", group, &self.name])
            .status()
            .unwrap()
            .success();
        assert!(ok, "usermod -a -G {group} {}", self.name);
    }
}

/// A group for one test, deleted on drop (make it before the users that
/// join it, so they go first).
pub struct Group {
    pub name: String,
}

impl Group {
    pub fn create(name: &str) -> Group {
        let _ = Command::new("groupdel").arg(name).output();
        let ok = Command::new("groupadd")
            .arg(name)
            .status()
            .unwrap()
            .success();
        assert!(ok, "groupadd {name}");
        Group { name: name.into() }
    }

    pub fn gid(&self) -> u32 {
        tern::sys::identity::group_gid(&self.name).expect("the test group exists")
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        let _ = Command::new("groupdel").arg(&self.name).output();
    }
}

/// Skips (saying why) unless root and a test user can be made.
pub fn root_with_user(name: &str) -> Option<User> {
    if !is_root() {
        eprintln!("not root: the identity switch is not checked");
        return None;
    }
    let user = User::create(name);
    if user.is_none() {
        eprintln!("useradd failed: the identity switch is not checked");
    }
    user
}

/// An environment whose directory and SPOOL another user can use.
pub fn shared_env() -> RunEnv {
    let env = RunEnv::new().knob("NEGOTIATE_ON_SUBMIT", "false");
    let dir = env.path("");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let spool = env.spool();
    std::fs::create_dir_all(&spool).unwrap();
    std::fs::set_permissions(&spool, std::fs::Permissions::from_mode(0o777)).unwrap();
    env
}

/// `tool args` as `user` in the test's directory and environment
/// (runuser: the user's groups, the test's variables).
pub fn run_as(env: &RunEnv, user: &str, tool: &str, args: &[&str]) -> Output {
    let mut c = Command::new("/usr/sbin/runuser");
    c.args(["-u", user, "--", bin(tool)])
        .args(args)
        .current_dir(env.path(""))
        .env_clear()
        .envs(env.vars().iter().map(|(k, v)| (k, v)));
    c.output().unwrap()
}

/// Submits `text` as `user`.
#[track_caller]
pub fn submit_as(env: &RunEnv, user: &str, text: &str) {
    let file = env.write("as.sub", text);
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = run_as(env, user, "tern_submit", &[&file.display().to_string()]);
    assert!(
        out.status.success(),
        "submit as {user}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A root pass in shared mode (SHARED_QUEUE from the environment: root's
/// own settings are root's), with `extra` variables; it waits for one
/// already running (a shadow's exit asks for one) rather than deferring.
#[track_caller]
pub fn shared_pass(env: &RunEnv, extra: &[(&str, &str)]) {
    let mut c = env.command("tern_negotiate");
    c.arg("-wait").env("_TERN_SHARED_QUEUE", "true");
    for (k, v) in extra {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Polls `cond` until it holds; a failure after 30 s names `what`.
#[track_caller]
pub fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(30);
    while Instant::now() < end {
        if cond() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("timed out waiting for {what}");
}

/// Waits for job `job` to be held; its HoldReasonCode and reason.
#[track_caller]
pub fn held_job(env: &RunEnv, job: &str) -> (String, String) {
    wait_for("the job to be held", || {
        env.q_af(job, &["JobStatus"]).as_deref() == Some("5")
    });
    (
        env.q_af(job, &["HoldReasonCode"]).unwrap(),
        env.q_af(job, &["HoldReason"]).unwrap(),
    )
}

/// Waits for job `job` to leave the queue.
#[track_caller]
pub fn wait_gone(env: &RunEnv, job: &str) {
    wait_for("the job to leave the queue", || {
        env.history_af(job, &["JobStatus"]).is_some()
    });
}
