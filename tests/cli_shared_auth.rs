//! Authorisation in shared mode, through the real tools run as real users
//! (issue 16, item 4): who a submitted job belongs to, which attributes
//! nobody may change, that no user can touch another's job with any tool
//! or set user priorities, that `%group` super users work, and that
//! another user's strings cannot drive the terminal.
//!
//! The multi-user tests need root to create the users `ternt_a` and
//! `ternt_b` (and the group `ternt_g`); as anyone else they say why and
//! pass, unless TERN_REQUIRE_SHARED=1 (CI), which makes the missing
//! precondition a failure. They run the tools unprivileged, on a SPOOL
//! both users may write: what they check is the queue's and the tools'
//! rules, not the setgid installation (the installed package's suite does
//! that).

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

use crate::common::{NOW, TestEnv, bin};

/// One shared-mode test at a time: they create and delete the same users.
static USERS: Mutex<()> = Mutex::new(());

fn is_root() -> bool {
    // SAFETY: geteuid has no side effects.
    unsafe { libc::geteuid() == 0 }
}

/// Whether a test that needs root may run; says why not when it may not.
fn can_make_users(test: &str) -> bool {
    if is_root() {
        return true;
    }
    assert!(
        std::env::var("TERN_REQUIRE_SHARED").as_deref() != Ok("1"),
        "{test}: TERN_REQUIRE_SHARED=1 but the tests do not run as root"
    );
    eprintln!("{test}: skipped: creating test users needs root");
    false
}

/// Runs a user-administration command, retrying while another test holds
/// /etc/passwd's lock.
fn admin(args: &[&str]) -> bool {
    for _ in 0..50 {
        match Command::new(args[0]).args(&args[1..]).output() {
            Ok(o) if o.status.success() => return true,
            Ok(o) if String::from_utf8_lossy(&o.stderr).contains("lock") => {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            _ => return false,
        }
    }
    false
}

/// A Unix user (or group) made for one test and deleted when dropped.
struct Account {
    name: &'static str,
    group: bool,
}

impl Account {
    fn user(name: &'static str, extra: &[&str]) -> Account {
        admin(&["userdel", name]);
        let mut args = vec!["useradd", "--no-create-home", "--shell", "/bin/sh"];
        args.extend_from_slice(extra);
        args.push(name);
        assert!(admin(&args), "useradd {name}");
        Account { name, group: false }
    }

    fn group(name: &'static str) -> Account {
        admin(&["groupdel", name]);
        assert!(admin(&["groupadd", name]), "groupadd {name}");
        Account { name, group: true }
    }

    fn id(&self, flag: &str) -> u32 {
        let out = Command::new("id").args([flag, self.name]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    }
}

impl Drop for Account {
    fn drop(&mut self) {
        if self.group {
            admin(&["groupdel", self.name]);
        } else {
            admin(&["userdel", self.name]);
        }
    }
}

/// What a run gave.
#[derive(Debug)]
struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

/// A shared SPOOL and configuration that every test user can use, and
/// the tools to run as any of them.
struct Shared {
    dir: tempfile::TempDir,
    vars: Vec<(String, String)>,
}

impl Shared {
    /// SHARED_QUEUE on, `extra` added to the configuration.
    fn new(extra: &str) -> Shared {
        let dir = tempfile::Builder::new()
            .prefix("tern-shared-auth")
            .tempdir_in("/tmp")
            .unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let spool = dir.path().join("spool");
        std::fs::create_dir(&spool).unwrap();
        std::fs::set_permissions(&spool, std::fs::Permissions::from_mode(0o777)).unwrap();
        let cfg = dir.path().join("tern_config");
        std::fs::write(
            &cfg,
            format!(
                "SHARED_QUEUE = True\nQUEUE_SUPER_USERS = root\nUID_DOMAIN = test.example\n{extra}"
            ),
        )
        .unwrap();
        let vars = [
            ("TERN_CONFIG", cfg.display().to_string()),
            ("_TERN_SPOOL", spool.display().to_string()),
            ("TERN_NOW", NOW.to_string()),
            ("_TERN_NEGOTIATE_ON_SUBMIT", "false".into()),
            ("TZ", "UTC".into()),
            ("PATH", "/usr/bin:/bin".into()),
            ("HOME", dir.path().display().to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        // Users' tools never create a shared queue: the installer (here
        // the test, as root) does.
        drop(tern::queue::Queue::open(&spool, true).unwrap());
        let shared = Shared { dir, vars };
        shared.open_spool();
        shared
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes a file every user can read.
    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        p
    }

    /// Runs `tool` as `user` (root when `None`) with `extra` variables.
    fn run_env(
        &self,
        user: Option<&Account>,
        extra: &[(&str, &str)],
        tool: &str,
        args: &[&str],
    ) -> Out {
        use std::os::unix::process::CommandExt;
        let mut c = Command::new(bin(tool));
        c.args(args).current_dir(self.dir.path()).env_clear();
        c.envs(self.vars.iter().map(|(k, v)| (k, v)));
        c.envs(extra.iter().copied());
        if let Some(u) = user {
            c.uid(u.id("-u")).gid(u.id("-g"));
        }
        let o = c.output().unwrap();
        // The queue's files stay usable by every test user, whoever made
        // them (the setgid installation does this with the group).
        self.open_spool();
        Out {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    fn run(&self, user: Option<&Account>, tool: &str, args: &[&str]) -> Out {
        self.run_env(user, &[], tool, args)
    }

    fn open_spool(&self) {
        for e in std::fs::read_dir(self.path("spool")).unwrap().flatten() {
            if e.file_type().is_ok_and(|t| t.is_file()) {
                let _ = std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o666));
            }
        }
    }

    /// Submits `text` as `user`; returns the run.
    fn submit(&self, user: Option<&Account>, text: &str) -> Out {
        let f = self.write("job.sub", text);
        self.run(user, "tern_submit", &[f.to_str().unwrap()])
    }

    /// A job's whole ad as root reads it (`-long`, pinned clock).
    fn ad(&self, id: &str) -> String {
        let r = self.run(None, "tern_q", &["-long", id]);
        assert_eq!(r.code, 0, "{r:?}");
        r.stdout
    }

    /// The ids of every job in the queue.
    fn ids(&self) -> String {
        self.run(None, "tern_q", &["-allusers", "-af", "ClusterId", "ProcId"])
            .stdout
    }
}

const JOB: &str = "executable = /bin/true\nqueue\n";

fn attr(ad: &str, name: &str) -> Option<String> {
    ad.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} = ")).map(str::to_string))
}

#[test]
fn submit_takes_the_owner_from_the_real_uid_and_refuses_a_forged_one() {
    let _one = USERS.lock().unwrap_or_else(|e| e.into_inner());
    if !can_make_users("submit_takes_the_owner_from_the_real_uid") {
        return;
    }
    let a = Account::user("ternt_a", &[]);
    let _b = Account::user("ternt_b", &[]);
    let s = Shared::new("");
    // USER, LOGNAME and HOME name b: the owner is still a.
    let r = s.run_env(
        Some(&a),
        &[
            ("USER", "ternt_b"),
            ("LOGNAME", "ternt_b"),
            ("HOME", "/tmp"),
        ],
        "tern_submit",
        &[s.write(
            "job.sub",
            "executable = /bin/true\n+OwnerUid = 0\n+ShadowPid = 1\n+JobStatus = 2\nqueue\n",
        )
        .to_str()
        .unwrap()],
    );
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    let ad = s.ad("1.0");
    assert_eq!(attr(&ad, "Owner").as_deref(), Some("\"ternt_a\""));
    assert_eq!(
        attr(&ad, "User").as_deref(),
        Some("\"ternt_a@test.example\"")
    );
    // OwnerUid is the queue's, the secure attributes are ignored.
    assert_eq!(attr(&ad, "OwnerUid"), Some(a.id("-u").to_string()));
    assert_eq!(attr(&ad, "ShadowPid"), None);
    assert_eq!(attr(&ad, "JobStatus").as_deref(), Some("1"));
    // A forged Owner or User: HTCondor's words, exit 1, nothing queued.
    for (line, attr_value, reason) in [
        (
            "+Owner = \"ternt_b\"",
            "Owner=\"ternt_b\"",
            "Setting owner to ternt_b when active owner is ternt_a is not permitted",
        ),
        (
            "MY.Owner = \"ternt_b\"",
            "Owner=\"ternt_b\"",
            "Setting owner to ternt_b when active owner is ternt_a is not permitted",
        ),
        (
            "+User = \"ternt_b@test.example\"",
            "User=\"ternt_b@test.example\"",
            "Setting User to \"ternt_b@test.example\" when active owner is ternt_a is not permitted",
        ),
        (
            "+Owner = \"root\"",
            "Owner=\"root\"",
            "Setting job owner to \"root\" is not permitted",
        ),
    ] {
        let r = s.submit(
            Some(&a),
            &format!("executable = /bin/true\n{line}\nqueue 2\n"),
        );
        assert_eq!(
            (r.code, r.stdout.as_str(), r.stderr.as_str()),
            (
                1,
                "",
                format!("{reason}\nERROR: Failed to set {attr_value} for job 2.0 (13)\n").as_str()
            ),
            "{line}"
        );
        assert_eq!(s.ids(), "1 0\n", "{line}");
    }
    // Root owns no job in shared mode.
    let r = s.submit(None, JOB);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            1,
            "Setting job owner to \"root\" is not permitted\nERROR: Failed to set Owner=\"root\" for job 2.0 (13)\n"
        ),
        "{r:?}"
    );
    assert_eq!(s.ids(), "1 0\n");
}

#[test]
fn no_tool_changes_another_users_job() {
    let _one = USERS.lock().unwrap_or_else(|e| e.into_inner());
    if !can_make_users("no_tool_changes_another_users_job") {
        return;
    }
    let a = Account::user("ternt_a", &[]);
    let b = Account::user("ternt_b", &[]);
    let s = Shared::new("");
    assert_eq!(s.submit(Some(&a), JOB).code, 0);
    assert_eq!(s.submit(Some(&b), JOB).code, 0);
    let before = s.ad("2.0");
    // Everyone sees every job; the default is one's own.
    let all = s.run(Some(&a), "tern_q", &["-allusers", "-af", "Owner"]);
    assert_eq!(all.stdout, "ternt_a\nternt_b\n");
    let mine = s.run(Some(&a), "tern_q", &["-af", "Owner"]);
    assert_eq!(mine.stdout, "ternt_a\n");
    // By id: each tool's "Permission denied", exit 1.
    for (tool, verb) in [
        ("tern_rm", "remove"),
        ("tern_hold", "hold"),
        ("tern_release", "release"),
        ("tern_vacate_job", "vacate"),
        ("tern_suspend", "suspend"),
        ("tern_continue", "continue"),
    ] {
        let r = s.run(Some(&a), tool, &["2.0"]);
        assert_eq!(
            (r.code, r.stdout.as_str(), r.stderr.as_str()),
            (
                1,
                "",
                format!("Permission denied to {verb} job 2.0\n").as_str()
            ),
            "{tool}"
        );
    }
    // By user: condor_rm's summary.
    let r = s.run(Some(&a), "tern_rm", &["ternt_b"]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (1, "Couldn't find/remove all jobs of user \"ternt_b\"\n"),
        "{r:?}"
    );
    let r = s.run(Some(&a), "tern_hold", &["ternt_b"]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (1, "Couldn't find/hold all jobs of user \"ternt_b\"\n"),
        "{r:?}"
    );
    // qedit and prio.
    let r = s.run(Some(&a), "tern_qedit", &["2.0", "Foo", "1"]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            1,
            "Failed to set attribute \"Foo\" for job 2.0.\nTransaction failed.  No attributes were set.\n"
        ),
        "{r:?}"
    );
    let r = s.run(Some(&a), "tern_qedit", &["ternt_b", "Foo", "1"]);
    assert_eq!(r.code, 1, "{r:?}");
    let r = s.run(Some(&a), "tern_prio", &["-p", "5", "2.0"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("2.0"), "{r:?}");
    // -constraint and -all act on the caller's jobs only: a's own job is
    // held, b's is not.
    let r = s.run(Some(&a), "tern_hold", &["-constraint", "true"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "All jobs matching constraint (true) have been held\n"),
        "{r:?}"
    );
    let r = s.run(Some(&a), "tern_qedit", &["-constraint", "true", "Foo", "1"]);
    assert_eq!(r.code, 0, "{r:?}");
    let r = s.run(Some(&a), "tern_rm", &["-all"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "All jobs have been marked for removal\n")
    );
    // Only b's job is left: nothing of a's matches.
    let r = s.run(Some(&a), "tern_rm", &["-constraint", "true"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            1,
            "",
            "Couldn't find/remove all jobs matching constraint (true)\n"
        ),
        "{r:?}"
    );
    let r = s.run(Some(&a), "tern_rm", &["-all"]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (1, "Couldn't find/remove all jobs\n"),
        "{r:?}"
    );
    assert_eq!(s.ids(), "2 0\n");
    assert_eq!(s.ad("2.0"), before, "b's job changed");
    // Root, the super user, may.
    let r = s.run(None, "tern_hold", &["2.0"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "Job 2.0 held\n"), "{r:?}");
}

#[test]
fn immutable_and_protected_attributes_are_refused() {
    let _one = USERS.lock().unwrap_or_else(|e| e.into_inner());
    if !can_make_users("immutable_and_protected_attributes_are_refused") {
        return;
    }
    let a = Account::user("ternt_a", &[]);
    let s = Shared::new("PROTECTED_JOB_ATTRS = AcctGroup\nIMMUTABLE_JOB_ATTRS = Color\n");
    assert_eq!(s.submit(Some(&a), JOB).code, 0);
    let before = s.ad("1.0");
    for name in [
        "Owner",
        "User",
        "ClusterId",
        "ProcId",
        "JobUniverse",
        "JobStatus",
        "OwnerUid",
        "Color",
    ] {
        let r = s.run(Some(&a), "tern_qedit", &["1.0", name, "1"]);
        assert_eq!(
            (r.code, r.stdout.as_str(), r.stderr.as_str()),
            (
                1,
                "",
                format!(
                    "Update of immutable attribute \"{name}\" is not allowed.\nTransaction failed.  No attributes were set.\n"
                )
                .as_str()
            ),
            "{name}"
        );
        // Not even a super user.
        assert_eq!(
            s.run(None, "tern_qedit", &["1.0", name, "1"]).code,
            1,
            "{name}"
        );
    }
    let r = s.run(Some(&a), "tern_qedit", &["1.0", "AcctGroup", "\"x\""]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            1,
            "Unauthorized setting of protected attribute AcctGroup denied for user ternt_a in job 1.0\n\
             Failed to set attribute \"AcctGroup\" for job 1.0.\n\
             Transaction failed.  No attributes were set.\n"
        ),
        "{r:?}"
    );
    assert_eq!(s.ad("1.0"), before);
    let r = s.run(None, "tern_qedit", &["1.0", "AcctGroup", "\"x\""]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "Set attribute \"AcctGroup\".\n")
    );
}

#[test]
fn user_priorities_are_set_by_super_users_and_group_members_only() {
    let _one = USERS.lock().unwrap_or_else(|e| e.into_inner());
    if !can_make_users("user_priorities_are_set_by_super_users") {
        return;
    }
    let g = Account::group("ternt_g");
    let a = Account::user("ternt_a", &["-G", g.name]);
    // b has the group as its primary group only: not a member.
    let b = Account::user("ternt_b", &["-g", g.name]);
    let s = Shared::new("QUEUE_SUPER_USERS = root, %ternt_g\n");
    assert_eq!(s.submit(Some(&b), JOB).code, 0);
    let table = || s.run(None, "tern_userprio", &["-allusers", "-all"]).stdout;
    let before = table();
    for args in [
        &["-setprio", "ternt_b@test.example", "5"][..],
        &["-setfactor", "ternt_b@test.example", "5"],
        &["-resetusage", "ternt_b@test.example"],
        &["-resetall"],
        &["-delete", "ternt_b@test.example"],
    ] {
        let r = s.run(Some(&b), "tern_userprio", args);
        assert_eq!(r.code, 1, "{args:?}: {r:?}");
        assert!(
            r.stderr.starts_with(
                "tern_userprio: error: permission denied: ternt_b may not change user priorities"
            ),
            "{args:?}: {r:?}"
        );
        assert_eq!(table(), before, "{args:?}");
    }
    let r = s.run(
        Some(&a),
        "tern_userprio",
        &["-setfactor", "ternt_b@test.example", "5"],
    );
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (
            0,
            "The priority factor of ternt_b@test.example was set to 5.000000\n"
        ),
        "{r:?}"
    );
    // A %group member is a queue super user for jobs too; b is not.
    assert_eq!(s.submit(Some(&a), JOB).code, 0);
    let r = s.run(Some(&a), "tern_hold", &["1.0"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "Job 1.0 held\n"), "{r:?}");
    let r = s.run(Some(&b), "tern_rm", &["2.0"]);
    assert_eq!(r.stderr, "Permission denied to remove job 2.0\n");
    assert_eq!(
        s.run(Some(&b), "tern_rm", &["-all"]).stdout,
        "All jobs have been marked for removal\n"
    );
    assert_eq!(s.ids(), "2 0\n");
}

#[test]
fn another_users_batch_name_reaches_the_terminal_escaped() {
    let env = TestEnv::with_spool();
    env.write(
        "job.sub",
        "executable = /bin/true\nbatch_name = x\x1b]0;pwned\x07\x1b[2J\rY\x7f\narguments = \"a\x1b[31m\"\nqueue\n",
    );
    assert_eq!(env.run("tern_submit", ["job.sub"]).code, 0);
    let r = env.run("tern_q", ["-allusers"]);
    assert!(
        !r.stdout.contains('\x1b') && !r.stdout.contains('\r'),
        "{r:?}"
    );
    assert!(
        r.stdout.contains("x\\x1b]0;pwned\\x07\\x1b[2J\\x0dY\\x7f"),
        "{}",
        r.stdout
    );
    let r = env.run("tern_q", ["-nobatch"]);
    assert!(r.stdout.contains("true a\\x1b[31m"), "{}", r.stdout);
    // Piped, the machine formats keep the bytes (JSON escapes them itself).
    let r = env.run("tern_q", ["-af", "JobBatchName"]);
    assert_eq!(r.stdout, "x\x1b]0;pwned\x07\x1b[2J\rY\x7f\n");
}

#[test]
fn huge_submissions_are_refused_and_queue_nothing() {
    // The shared package's limit (pkg/tern_config); personal mode has none.
    let env = TestEnv::with_spool().var("_TERN_MAX_JOBS_PER_SUBMISSION", Some("20000"));
    let cases: Vec<(String, &str)> = vec![
        (
            "executable = /bin/true\nqueue 20001\n".into(),
            "Number of submitted jobs would exceed MAX_JOBS_PER_SUBMISSION (20000)",
        ),
        (
            "executable = /bin/true\nqueue 10000000\n".into(),
            "Number of submitted jobs would exceed MAX_JOBS_PER_SUBMISSION (20000)",
        ),
        (
            format!(
                "executable = /bin/true\n+Big = \"{}\"\nqueue\n",
                "x".repeat(2 << 20)
            ),
            "more than SUBMIT_MAX_VALUE_BYTES (1048576)",
        ),
        (
            format!(
                "executable = /bin/true\n+Deep = {}1{}\nqueue\n",
                "(".repeat(100_000),
                ")".repeat(100_000)
            ),
            "Parse error in expression",
        ),
    ];
    for (text, want) in cases {
        env.write("big.sub", &text);
        let r = env.run("tern_submit", ["big.sub"]);
        let head: String = r.stderr.chars().take(300).collect();
        assert_eq!(r.code, 1, "{want}: {head}");
        assert!(r.stderr.contains(want), "{want}: {head}");
        assert_eq!(
            env.run("tern_q", ["-allusers", "-af", "ClusterId"]).stdout,
            ""
        );
    }
    // The per-owner limit counts what is queued already.
    let env = env.var("_TERN_MAX_JOBS_PER_OWNER", Some("3"));
    env.write("two.sub", "executable = /bin/true\nqueue 2\n");
    assert_eq!(env.run("tern_submit", ["two.sub"]).code, 0);
    let r = env.run("tern_submit", ["two.sub"]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            1,
            "ERROR: Failed to create proc\nNumber of submitted jobs would exceed MAX_JOBS_PER_OWNER (3)\n"
        )
    );
    // So does the input's size.
    let env = env.var("_TERN_SUBMIT_MAX_INPUT_BYTES", Some("100"));
    env.write(
        "long.sub",
        &format!("# {}\nexecutable = /bin/true\nqueue\n", "x".repeat(200)),
    );
    let r = env.run("tern_submit", ["long.sub"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains("SUBMIT_MAX_INPUT_BYTES (100 bytes)"),
        "{r:?}"
    );
    assert_eq!(
        env.run("tern_q", ["-allusers", "-af", "ClusterId"]).stdout,
        "1\n1\n"
    );
}

#[test]
fn a_pass_warns_when_every_user_is_trusted_in_shared_mode() {
    let env = TestEnv::with_spool()
        .var("_TERN_SHARED_QUEUE", Some("true"))
        .var("_TERN_QUEUE_ALL_USERS_TRUSTED", Some("true"));
    // A shared SPOOL is the installer's to make.
    std::fs::create_dir_all(env.spool()).unwrap();
    let r = env.run("tern_negotiate", Vec::<&str>::new());
    assert!(
        r.stderr.contains(
            "tern_negotiate: warning: QUEUE_ALL_USERS_TRUSTED is true in shared mode: every user may change every other user's jobs"
        ),
        "{r:?}"
    );
    // Personal mode says nothing of it.
    let env = env.var("_TERN_SHARED_QUEUE", None);
    let r = env.run("tern_negotiate", Vec::<&str>::new());
    assert!(!r.stderr.contains("QUEUE_ALL_USERS_TRUSTED"), "{r:?}");
}

#[test]
fn tern_q_shows_only_the_callers_jobs_unless_told_otherwise() {
    let env = TestEnv::with_spool();
    crate::common::queue::submit_as(&env, "someone_else", JOB);
    crate::common::queue::submit_as(&env, &crate::common::real_user(), JOB);
    let me = crate::common::real_user();
    assert_eq!(
        env.run("tern_q", ["-af", "Owner"]).stdout,
        format!("{me}\n")
    );
    assert_eq!(
        env.run("tern_q", ["-allusers", "-af", "Owner"]).stdout,
        format!("someone_else\n{me}\n")
    );
    let env = env.var("_TERN_CONDOR_Q_ONLY_MY_JOBS", Some("false"));
    assert_eq!(
        env.run("tern_q", ["-af", "Owner"]).stdout,
        format!("someone_else\n{me}\n")
    );
}
