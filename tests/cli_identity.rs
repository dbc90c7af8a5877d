//! Running jobs as their owner when the pass runs as root (the shared
//! mode): the job gets the owner's uid, gid and groups, its output files
//! belong to the owner, and an owner this machine does not know is a hold.
//! These tests need root (to create users); as anyone else they say so and
//! pass without checking.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{RunEnv, bin};

fn is_root() -> bool {
    // SAFETY: geteuid has no side effects.
    unsafe { libc::geteuid() == 0 }
}

/// A system user for one test, deleted on drop.
struct User {
    name: String,
}

impl User {
    fn create(name: &str) -> Option<User> {
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
    fn uid(&self) -> u32 {
        let out = Command::new("id")
            .args(["-u", &self.name])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    }
}

impl Drop for User {
    fn drop(&mut self) {
        let _ = Command::new("userdel").arg(&self.name).output();
    }
}

/// An environment whose directory and SPOOL another user can use.
fn shared_env() -> RunEnv {
    let env = RunEnv::new().knob("NEGOTIATE_ON_SUBMIT", "false");
    let dir = env.path("");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let spool = env.spool();
    std::fs::create_dir_all(&spool).unwrap();
    std::fs::set_permissions(&spool, std::fs::Permissions::from_mode(0o777)).unwrap();
    env
}

/// Submits `text` as `user` (runuser keeps the test's environment).
fn submit_as(env: &RunEnv, user: &str, text: &str) {
    let file = env.write("as.sub", text);
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let args: Vec<String> = vec![
        "-u".into(),
        user.into(),
        "--".into(),
        bin("tern_submit").into(),
        file.display().to_string(),
    ];
    let mut c = Command::new("/usr/sbin/runuser");
    c.args(&args).current_dir(env.path(""));
    c.env_clear();
    for (k, v) in env.vars() {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "submit as {user}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(30);
    while Instant::now() < end {
        if cond() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("timed out waiting for {what}");
}

#[test]
fn a_root_pass_runs_the_job_as_its_owner_with_the_owners_files() {
    if !is_root() {
        eprintln!("not root: the identity switch is not checked");
        return;
    }
    let Some(user) = User::create("ternjobtest") else {
        eprintln!("useradd failed: the identity switch is not checked");
        return;
    };
    let env = shared_env();
    submit_as(
        &env,
        &user.name,
        "executable = /usr/bin/id\narguments = -u\noutput = who.out\nerror = who.err\nqueue\n",
    );
    assert_eq!(env.q_af("1.0", &["Owner"]).as_deref(), Some("ternjobtest"));
    env.negotiate();
    wait_for("the job to complete", || {
        env.history_af("1.0", &["JobStatus"]).is_some()
    });
    let out = std::fs::read_to_string(env.path("who.out")).unwrap();
    assert_eq!(
        out.trim(),
        user.uid().to_string(),
        "the job ran as its owner"
    );
    let meta = std::fs::metadata(env.path("who.out")).unwrap();
    assert_eq!(meta.uid(), user.uid(), "the owner owns the job's output");
}

#[test]
fn an_owner_unknown_to_the_machine_is_a_hold() {
    if !is_root() {
        eprintln!("not root: the identity switch is not checked");
        return;
    }
    let Some(user) = User::create("ternjobgone") else {
        eprintln!("useradd failed: the identity switch is not checked");
        return;
    };
    let env = shared_env();
    submit_as(&env, &user.name, "executable = /bin/true\nqueue\n");
    drop(user);
    env.negotiate();
    wait_for("the job to be held", || {
        env.q_af("1.0", &["JobStatus"]).as_deref() == Some("5")
    });
    assert_eq!(env.q_af("1.0", &["HoldReasonCode"]).as_deref(), Some("23"));
    let reason = env.q_af("1.0", &["HoldReason"]).unwrap();
    assert!(reason.contains("ternjobgone"), "{reason}");
}
