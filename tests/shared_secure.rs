//! Privileged (set-group-id) mode, on a real setgid copy of the multicall
//! program run as a test user: what the caller controls (environment,
//! configuration files, clock, descriptors, limits, umask) changes
//! nothing, and the spool's own files refuse what a user planted.
//!
//! These need root (to make the group, the user and the setgid copy); as
//! anyone else they print why and pass, unless TERN_REQUIRE_SHARED=1 (CI),
//! which makes a missing precondition a failure. The system configuration
//! the copy reads, `/etc/tern/tern_config`, is given to it inside a private
//! mount namespace (an overlay on /etc), so the machine's own /etc is never
//! touched.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::bin;

const TERN: &str = env!("CARGO_BIN_EXE_tern");

/// The precondition is missing: skip, saying why, or fail under CI.
fn skip(why: &str) -> Option<Shared> {
    if std::env::var("TERN_REQUIRE_SHARED").as_deref() == Ok("1") {
        panic!("TERN_REQUIRE_SHARED=1 but {why}");
    }
    eprintln!("skipped: {why}");
    None
}

fn sh(cmd: &mut Command) -> Output {
    cmd.output().expect("running a setup command")
}

fn ok(cmd: &mut Command) {
    let out = sh(cmd);
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A setgid copy of tern, a test user, a shared SPOOL installed by root and
/// a system configuration naming it, all under one temporary directory.
struct Shared {
    dir: tempfile::TempDir,
    user: String,
    uid: u32,
    gid: u32,
    tern_gid: u32,
}

impl Shared {
    fn new(tag: &str) -> Option<Shared> {
        if !tern::sys::identity::is_root() {
            return skip("the set-group-id tests need root");
        }
        if tern::sys::identity::group_gid("tern").is_none() {
            ok(Command::new("groupadd").args(["--system", "tern"]));
        }
        let tern_gid = tern::sys::identity::group_gid("tern").expect("group tern");
        let user = format!("ternt_{tag}{}", std::process::id() % 100_000);
        let _ = sh(Command::new("userdel").arg(&user));
        ok(Command::new("useradd")
            .args(["--no-create-home", "--user-group", "--shell", "/bin/sh"])
            .arg(&user));
        let id = tern::sys::identity::user(&user).expect("the new user");
        let dir = tempfile::Builder::new()
            .prefix("tern-setgid-")
            .tempdir_in("/tmp")
            .unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let s = Shared {
            dir,
            user,
            uid: id.uid,
            gid: id.gid,
            tern_gid,
        };
        // The program, installed as the package does: root:tern 2755,
        // each tool a symbolic link to it.
        let bindir = s.path("bin");
        std::fs::create_dir(&bindir).unwrap();
        let tern = bindir.join("tern");
        std::fs::copy(TERN, &tern).unwrap();
        std::os::unix::fs::chown(&tern, Some(0), Some(tern_gid)).unwrap();
        std::fs::set_permissions(&tern, std::fs::Permissions::from_mode(0o2755)).unwrap();
        for t in ["tern_config_val", "tern_submit", "tern_q"] {
            std::os::unix::fs::symlink("tern", bindir.join(t)).unwrap();
        }
        // The user's own directory (as a home would be).
        let home = s.path("home");
        std::fs::create_dir(&home).unwrap();
        std::os::unix::fs::chown(&home, Some(s.uid), Some(s.gid)).unwrap();
        // The shared queue and the system configuration naming it.
        tern::queue::shared::install(&s.spool(), tern_gid).unwrap();
        let etc = s.path("etc-upper/tern");
        std::fs::create_dir_all(&etc).unwrap();
        std::fs::create_dir_all(s.path("etc-work")).unwrap();
        // A configuration command that reports how it was run.
        let show = bindir.join("show-ids");
        std::fs::write(
            &show,
            format!(
                "#!/bin/sh\n{{ grep ^Gid: /proc/self/status; pwd; env | grep -v '^PWD=\\|^SHLVL=\\|^_='; }} > {}/ids\n\
                 echo FROM_COMMAND = yes\n",
                s.home().display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&show, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(
            etc.join("tern_config"),
            format!(
                "SPOOL = {}\nSHARED_QUEUE = True\nQUEUE_SUPER_USERS = root\ninclude command : {} |\n",
                s.spool().display(),
                show.display()
            ),
        )
        .unwrap();
        // The tests give the copy its system configuration in a private
        // mount namespace; a container without that right cannot run them.
        let probe = sh(Command::new("unshare")
            .args(["--mount", "--propagation", "private", "--", "/bin/sh", "-c"])
            .arg(format!(
                "mount -t overlay overlay -o lowerdir=/etc,upperdir={},workdir={} /etc",
                s.path("etc-upper").display(),
                s.path("etc-work").display()
            )));
        if !probe.status.success() {
            return skip(&format!(
                "cannot mount an overlay on /etc in a private mount namespace: {}",
                text(&probe.stderr).trim()
            ));
        }
        Some(s)
    }

    fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    fn spool(&self) -> PathBuf {
        self.path("spool")
    }

    fn home(&self) -> PathBuf {
        self.path("home")
    }

    /// `tool args` as the test user through the setgid copy, with the
    /// system configuration in place, the environment exactly `vars`, and
    /// `prelude` (shell: ulimit, umask, redirections) applied first.
    fn command(&self, prelude: &str, tool: &str, args: &[&str], vars: &[(&str, &str)]) -> Command {
        let script = format!(
            "mount -t overlay overlay -o lowerdir=/etc,upperdir={up},workdir={work} /etc || exit 99\n\
             cd {home} || exit 98\n\
             {prelude}\n\
             exec setpriv --reuid {uid} --regid {gid} --init-groups -- \"$@\"",
            up = self.path("etc-upper").display(),
            work = self.path("etc-work").display(),
            home = self.home().display(),
            uid = self.uid,
            gid = self.gid,
        );
        let mut c = Command::new("unshare");
        c.args(["--mount", "--propagation", "private", "--", "/bin/sh", "-c"])
            .arg(script)
            .arg("sh")
            .arg(self.path("bin").join(tool))
            .args(args)
            .env_clear()
            .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        for (k, v) in vars {
            c.env(k, v);
        }
        c
    }

    fn run(&self, tool: &str, args: &[&str], vars: &[(&str, &str)]) -> Output {
        let out = self
            .command("", tool, args, vars)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_ne!(out.status.code(), Some(99), "overlay mount failed");
        out
    }

    /// The jobs in the shared queue, read by root through the library.
    fn owners(&self) -> Vec<String> {
        let q = tern::queue::Queue::open(&self.spool(), false)
            .unwrap()
            .unwrap();
        let owners: Vec<String> = q
            .conn()
            .prepare("SELECT owner FROM procs ORDER BY cluster, proc")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        owners
    }

    fn integrity(&self) -> String {
        let q = tern::queue::Queue::open(&self.spool(), false)
            .unwrap()
            .unwrap();
        q.conn()
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap()
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // --force: a tool the test left running (after a failed
        // assertion) must not leave the account behind.
        let _ = Command::new("userdel")
            .args(["--force", &self.user])
            .output();
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Every override a user could try, with a canary for commands.
fn attack_env(s: &Shared) -> Vec<(String, String)> {
    let canary = s.home().join("canary");
    let evil = s.home().join("evil_config");
    std::fs::write(
        &evil,
        format!(
            "SPOOL = /tmp/evil-spool\nQUEUE_SUPER_USERS = {}\ninclude command : touch {} |\n",
            s.user,
            canary.display()
        ),
    )
    .unwrap();
    let xdg = s.home().join("xdg/tern");
    std::fs::create_dir_all(&xdg).unwrap();
    std::fs::write(
        xdg.join("tern_config"),
        format!(
            "SPOOL = /tmp/evil-xdg\ninclude command : touch {} |\n",
            canary.display()
        ),
    )
    .unwrap();
    for p in [&s.home(), &s.home().join("xdg"), &xdg] {
        std::os::unix::fs::chown(p, Some(s.uid), Some(s.gid)).unwrap();
    }
    [
        ("TERN_CONFIG", evil.display().to_string()),
        (
            "XDG_CONFIG_HOME",
            s.home().join("xdg").display().to_string(),
        ),
        ("HOME", s.home().display().to_string()),
        ("_TERN_SPOOL", "/tmp/evil-env".to_string()),
        ("_TERN_QUEUE_SUPER_USERS", s.user.clone()),
        ("_TERN_SHARED_QUEUE", "false".to_string()),
        ("TERN_NOW", "1000".to_string()),
        ("USER", "root".to_string()),
        ("LOGNAME", "root".to_string()),
        ("SQLITE_TMPDIR", s.home().display().to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

#[test]
fn a_setgid_tool_ignores_its_callers_environment_and_configuration() {
    let Some(s) = Shared::new("env") else { return };
    let vars = attack_env(&s);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let out = s.run(
        "tern_config_val",
        &["SPOOL", "QUEUE_SUPER_USERS", "SHARED_QUEUE"],
        &vars,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("{}\nroot\nTrue\n", s.spool().display())
    );
    // The system configuration's command ran as the user with the group
    // given up for good, in /, with nothing of the caller's environment.
    let ids = std::fs::read_to_string(s.home().join("ids")).unwrap();
    let g = s.gid;
    assert_eq!(ids, format!("Gid:\t{g}\t{g}\t{g}\t{g}\n/\n"));
    // Where the value came from: the system file, as tern_config_val says.
    let out = s.run("tern_config_val", &["-v", "SPOOL"], &vars);
    assert!(
        text(&out.stdout).contains("/etc/tern/tern_config, line 1"),
        "{}",
        text(&out.stdout)
    );
    // A submit under the same environment lands in the shared queue, owned
    // by the real user, at the real time.
    std::fs::write(
        s.home().join("job.sub"),
        "executable = /bin/true\nlog = job.log\nqueue\n",
    )
    .unwrap();
    // A fake helper beside the program: a set-id tool starts its helpers
    // (here the pass after a submit) only from the installed directory.
    let fake = s.path("bin/tern_negotiate");
    std::fs::write(
        &fake,
        format!("#!/bin/sh\ntouch {}/fake-ran\n", s.home().display()),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let before = tern::clock::now();
    let out = s.run("tern_submit", &["job.sub"], &vars);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(s.owners(), std::slice::from_ref(&s.user));
    let q = tern::queue::Queue::open(&s.spool(), false)
        .unwrap()
        .unwrap();
    let qdate: i64 = q
        .conn()
        .query_row("SELECT qdate FROM procs", [], |r| r.get(0))
        .unwrap();
    assert!(qdate >= before, "QDate {qdate} came from TERN_NOW");
    drop(q);
    // The user's log is the user's, in the user's group, not tern's.
    let log = std::fs::metadata(s.home().join("job.log")).unwrap();
    assert_eq!((log.uid(), log.gid()), (s.uid, s.gid));
    assert!(!s.home().join("canary").exists(), "a config command ran");
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !s.home().join("fake-ran").exists(),
        "the helper beside the program ran"
    );
    for evil in ["/tmp/evil-spool", "/tmp/evil-xdg", "/tmp/evil-env"] {
        assert!(!Path::new(evil).exists(), "{evil} was created");
    }
    // The caller's environment is still the user's data for the user's
    // own job: `getenv` and `$ENV()` in the submit file see it.
    std::fs::write(
        s.home().join("env.sub"),
        "executable = /bin/true\ngetenv = MYVAR\n+FromEnv = \"$ENV(MYVAR)\"\nqueue\n",
    )
    .unwrap();
    let mut with_var = vars.clone();
    with_var.push(("MYVAR", "mine"));
    let out = s.run("tern_submit", &["env.sub"], &with_var);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let q = Command::new(bin("tern_q"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", s.path(""))
        .env("_TERN_SPOOL", s.spool())
        .args([
            "-allusers",
            "-af",
            "Environment",
            "FromEnv",
            "-constraint",
            "ClusterId == 2",
        ])
        .output()
        .unwrap();
    assert_eq!(text(&q.stdout), "MYVAR=mine mine\n", "{q:?}");
    // The database and its side files are still root's, group tern.
    for f in ["queue.db", "queue.db-wal", "queue.db-shm"] {
        let m = std::fs::metadata(s.spool().join(f)).unwrap();
        assert_eq!(
            (m.uid(), m.gid(), m.mode() & 0o777),
            (0, s.tern_gid, 0o660),
            "{f}"
        );
    }
    assert_eq!(s.integrity(), "ok");
}

#[test]
fn a_setgid_tool_runs_undumpable_with_the_group_dropped() {
    let Some(s) = Shared::new("dump") else { return };
    let mut child = s
        .command("", "tern_submit", &["-"], &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Once the tool has started (its ids are the user's), and while it
    // waits for its submit description on stdin.
    let deadline = Instant::now() + Duration::from_secs(60);
    let gids = loop {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let uid_line = status.lines().find(|l| l.starts_with("Uid:"));
        let gid_line = status.lines().find(|l| l.starts_with("Gid:"));
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if comm.trim() == "tern_submit"
            && let (Some(u), Some(g)) = (uid_line, gid_line)
        {
            let g: Vec<u32> = g
                .split_whitespace()
                .skip(1)
                .map(|x| x.parse().unwrap())
                .collect();
            let u: Vec<u32> = u
                .split_whitespace()
                .skip(1)
                .map(|x| x.parse().unwrap())
                .collect();
            if u[0] == s.uid && g[1] == s.gid {
                break g;
            }
        }
        assert!(Instant::now() < deadline, "the tool never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    // Real, effective, saved, file-system gid: the group is dropped but
    // kept saved, to be raised around the queue's open only.
    assert_eq!(gids, [s.gid, s.gid, s.tern_gid, s.gid]);
    // A set-id exec made it non-dumpable: its /proc files (mem, environ)
    // belong to root, so the user can neither ptrace it nor read its
    // memory. (The /proc/<pid> directory itself shows the task's ids.)
    for f in ["mem", "environ"] {
        let m = std::fs::metadata(format!("/proc/{pid}/{f}")).unwrap();
        assert_eq!(m.uid(), 0, "the setgid tool is dumpable: {f} is the user's");
    }
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"executable = /bin/true\nqueue\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(s.owners(), std::slice::from_ref(&s.user));
}

#[test]
fn inherited_state_makes_a_setgid_tool_fail_cleanly_with_the_queue_intact() {
    use std::os::unix::process::ExitStatusExt;
    let Some(s) = Shared::new("inh") else { return };
    std::fs::write(
        s.home().join("job.sub"),
        "executable = /bin/true\nqueue 20\n",
    )
    .unwrap();
    // Closed standard descriptors and umask 0: the tool still works,
    // writing nothing where its descriptors 0-2 would be.
    let out = s
        .command(
            "umask 0; exec 0<&- 1>&- 2>&-",
            "tern_submit",
            &["job.sub"],
            &[],
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(s.owners().len(), 20);
    // A file-size limit far below the queue's: the write fails (SIGXFSZ is
    // ignored), the transaction rolls back, the tool says so and exits 1.
    let out = s
        .command("ulimit -f 1", "tern_submit", &["job.sub"], &[])
        .output()
        .unwrap();
    assert_eq!(out.status.signal(), None, "killed: {out:?}");
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    assert!(
        text(&out.stderr).starts_with("tern_submit: "),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(s.owners().len(), 20, "a half-written cluster");
    assert_eq!(s.integrity(), "ok");
    // Four descriptors: too few to open the queue and its log; the tool
    // says so and exits 1, adding nothing.
    let out = s
        .command("ulimit -n 4", "tern_submit", &["job.sub"], &[])
        .output()
        .unwrap();
    assert_eq!(out.status.signal(), None, "killed: {out:?}");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        text(&out.stderr).starts_with("tern_submit: "),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(s.owners().len(), 20, "a half-written cluster");
    assert_eq!(s.integrity(), "ok");
}

#[test]
fn planted_spool_links_and_fifos_are_refused_and_their_targets_kept() {
    let Some(s) = Shared::new("plant") else {
        return;
    };
    let target = s.path("precious");
    std::fs::write(&target, "root's file\n").unwrap();
    // The pass lock planted as a link: a root pass refuses it.
    let lock = s.spool().join("negotiator.lock");
    std::os::unix::fs::symlink(&target, &lock).unwrap();
    let pass = |what: &str| {
        let out = Command::new(bin("tern_negotiate"))
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("_TERN_SPOOL", s.spool())
            .env("HOME", s.path(""))
            .output()
            .unwrap();
        assert_ne!(out.status.code(), Some(0), "{what}: {out:?}");
        let err = text(&out.stderr);
        assert!(err.contains("refusing"), "{what}: {err}");
        err
    };
    let err = pass("a symlinked lock");
    assert!(err.contains("symbolic link"), "{err}");
    std::fs::remove_file(&lock).unwrap();
    // A FIFO in its place: refused at once, never waited on.
    ok(Command::new("mkfifo").arg(&lock));
    let err = pass("a FIFO lock");
    assert!(err.contains("not a regular file"), "{err}");
    std::fs::remove_file(&lock).unwrap();
    // The mark planted as a link: the pass removes the link, never what it
    // points to.
    let mark = s.spool().join("negotiator.wanted");
    std::os::unix::fs::symlink(&target, &mark).unwrap();
    let out = Command::new(bin("tern_negotiate"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("_TERN_SPOOL", s.spool())
        .env("HOME", s.path(""))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(std::fs::symlink_metadata(&mark).is_err(), "the link stayed");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "root's file\n");
    let m = std::fs::metadata(&target).unwrap();
    assert_eq!((m.uid(), m.mode() & 0o777), (0, 0o644));
}

#[test]
fn a_setgid_tool_never_creates_a_missing_shared_queue() {
    let Some(s) = Shared::new("nodb") else { return };
    std::fs::rename(s.spool(), s.path("spool.away")).unwrap();
    std::fs::write(s.home().join("job.sub"), "executable = /bin/true\nqueue\n").unwrap();
    for (tool, args) in [("tern_submit", &["job.sub"][..]), ("tern_q", &[][..])] {
        let out = s.run(tool, args, &[]);
        assert_eq!(out.status.code(), Some(1), "{tool}: {out:?}");
        assert!(
            text(&out.stderr).starts_with(&format!(
                "{tool}: error: no shared queue at {}/queue.db: install tern's package",
                s.spool().display()
            )),
            "{tool}: {}",
            text(&out.stderr)
        );
    }
    assert!(!s.spool().exists(), "a user's tool created SPOOL");
}

#[test]
fn root_finding_no_shared_queue_makes_the_shared_layout() {
    let Some(s) = Shared::new("root") else { return };
    let spool = s.path("fresh");
    std::fs::write(
        s.path("root.conf"),
        // No pass after the submit: it would still write in the
        // directory while the test removes it.
        format!(
            "SPOOL = {}\nSHARED_QUEUE = True\nNEGOTIATE_ON_SUBMIT = False\n",
            spool.display()
        ),
    )
    .unwrap();
    std::fs::write(s.path("job.sub"), "executable = /bin/true\nqueue\n").unwrap();
    let out = Command::new(bin("tern_submit"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", s.path(""))
        .env("TERN_CONFIG", s.path("root.conf"))
        .current_dir(s.path(""))
        .arg("job.sub")
        .output()
        .unwrap();
    // Root's own job is refused in shared mode, once the queue is made.
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Setting job owner to \"root\""),
        "{out:?}"
    );
    let m = |p: &Path| {
        let m = std::fs::symlink_metadata(p).unwrap();
        (m.uid(), m.gid(), m.mode() & 0o7777)
    };
    assert_eq!(m(&spool), (0, s.tern_gid, 0o2770));
    assert_eq!(m(&spool.join("shadow")), (0, s.tern_gid, 0o2770));
    assert_eq!(m(&spool.join("queue.db")), (0, s.tern_gid, 0o660));
}
