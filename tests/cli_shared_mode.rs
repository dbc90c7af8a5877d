//! Shared mode's activation and audit, as far as they show without the
//! installed package (tests/shared/run.sh tests that): a user's
//! tern_negotiate only leaves the pass-wanted mark, `-loop -watch` runs a
//! pass when the mark appears, and `tern_status -check` reports wrong
//! owners and modes in both modes.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::time::Duration;

use crate::common::process::wait_until;
use crate::common::{Run, TestEnv, bin};

fn chmod(p: &std::path::Path, m: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
}

/// A configuration saying shared mode with SPOOL in the test directory.
fn shared_env() -> TestEnv {
    let env = TestEnv::with_spool();
    let spool = env.spool();
    std::fs::create_dir(&spool).unwrap();
    let cfg = env.write(
        "tern_config",
        &format!(
            "SPOOL = {}\nSHARED_QUEUE = True\nEXECUTE = {}\n",
            spool.display(),
            env.path("execute").display()
        ),
    );
    env.var("TERN_CONFIG", Some(cfg.to_str().unwrap()))
        .var("_TERN_SPOOL", None)
}

#[test]
fn status_check_personal_mode_reports_a_spool_others_can_write() {
    let env = TestEnv::with_spool();
    let r = env.run("tern_status", ["-check"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "no problems found\n"),
        "{r:?}"
    );
    std::fs::create_dir(env.spool()).unwrap();
    chmod(&env.spool(), 0o700);
    let r = env.run("tern_status", ["-check"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "no problems found\n"),
        "{r:?}"
    );
    chmod(&env.spool(), 0o775);
    let r = env.run("tern_status", ["-check"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(
        env.normalize(&r.stdout),
        "$SPOOL: mode 0775, writable by its group\n"
    );
}

#[test]
fn status_check_shared_mode_reports_each_wrong_file_on_one_line() {
    if tern::sys::real_uid() != 0 {
        eprintln!("skipped: auditing a shared installation needs root");
        return;
    }
    let env = shared_env();
    chmod(&env.spool(), 0o755);
    let r = env.run("tern_status", ["-check"]);
    assert_eq!(r.code, 1, "{r:?}");
    let out = env.normalize(&r.stdout);
    let lines: Vec<&str> = out.lines().collect();
    // The test SPOOL is not the installer's: wrong mode, no group tern
    // (on this machine the group may not exist at all), no subdirectories
    // and no database.
    assert!(lines.contains(&"$SPOOL: mode 0755, want 2770"), "{out}");
    assert!(lines.contains(&"$SPOOL/queue.db: missing"), "{out}");
    assert!(lines.contains(&"$SPOOL/ctl: missing"), "{out}");
    for l in &lines {
        assert!(
            !l.is_empty() && l.contains(": "),
            "one problem a line: {out}"
        );
    }
    // -check takes no other option.
    let r = env.run("tern_status", ["-check", "-long"]);
    assert_ne!(r.code, 0);
}

/// A user's tern_negotiate in shared mode leaves the mark, runs no pass
/// (no queue is made) and says so with -verbose; -loop and -reconfig are
/// refused. Runs as `nobody`, so only as root.
#[test]
fn a_users_negotiate_in_shared_mode_only_leaves_the_mark() {
    if tern::sys::real_uid() != 0 {
        eprintln!("skipped: needs root to run a tool as another user");
        return;
    }
    let env = shared_env();
    // nobody must reach the configuration and write the mark.
    chmod(&env.path(""), 0o755);
    chmod(&env.spool(), 0o777);
    let as_nobody = |args: &[&str]| {
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid",
            "nobody",
            "--regid",
            "nogroup",
            "--clear-groups",
            "--",
        ])
        .arg(bin("tern_negotiate"))
        .args(args)
        .env_clear()
        .current_dir("/");
        for (n, v) in env.vars() {
            c.env(n, v);
        }
        Run::from(c.output().expect("running setpriv"))
    };
    let r = as_nobody(&["-verbose"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            0,
            "shared mode: left the pass-wanted mark for a root pass\n",
            ""
        ),
        "{r:?}"
    );
    assert!(env.spool().join("negotiator.wanted").exists());
    assert!(!env.spool().join("queue.db").exists(), "no pass ran");
    for opt in ["-loop", "-reconfig"] {
        let r = as_nobody(&[opt]);
        assert_eq!(r.code, 1, "{r:?}");
        assert!(r.stderr.contains("only root does in shared mode"), "{r:?}");
    }
    // The audit of a shared installation is root's.
    let mut c = Command::new("setpriv");
    c.args([
        "--reuid",
        "nobody",
        "--regid",
        "nogroup",
        "--clear-groups",
        "--",
    ])
    .arg(bin("tern_status"))
    .arg("-check")
    .env_clear()
    .current_dir("/");
    for (n, v) in env.vars() {
        c.env(n, v);
    }
    let r = Run::from(c.output().unwrap());
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .contains("auditing a shared installation needs root"),
        "{r:?}"
    );
    // Root's pass takes the mark on.
    let r = env.run("tern_negotiate", [] as [&str; 0]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!env.spool().join("negotiator.wanted").exists());
}

/// `-loop -watch`: a mark made while it waits starts a pass at once (the
/// pass removes the mark first), long before the 600 s interval.
#[test]
fn loop_watch_runs_a_pass_when_the_mark_appears() {
    let env = TestEnv::with_spool()
        .var("TERN_NOW", None)
        .var("_TERN_START", Some("false"));
    let mut child = env
        .command("tern_negotiate")
        .args(["-loop", "-watch", "-interval", "600"])
        .spawn()
        .unwrap();
    let lock = env.spool().join("negotiator.lock");
    let mark = env.spool().join("negotiator.wanted");
    // The first pass makes SPOOL and the lock.
    let first = wait_until(Duration::from_secs(60), || lock.exists());
    let mut seen = Vec::new();
    for _ in 0..2 {
        std::thread::sleep(Duration::from_millis(200));
        std::fs::write(&mark, "").unwrap();
        seen.push(wait_until(Duration::from_secs(30), || !mark.exists()));
    }
    // One loop per SPOOL.
    let second = env.run("tern_negotiate", ["-loop", "-watch"]);
    let _ = child.kill();
    let _ = child.wait();
    assert!(first, "the first pass never ran");
    assert_eq!(seen, [true, true], "a mark was left waiting");
    assert_eq!(second.code, 1, "{second:?}");
    assert!(
        second
            .stderr
            .contains("another tern_negotiate -loop is running"),
        "{second:?}"
    );
    let r = env.run("tern_negotiate", ["-watch"]);
    assert_eq!(r.code, 2, "{r:?}");
}

/// The hidden installer makes SPOOL, its subdirectories and the database
/// with their owner and mode, puts a wrong mode right without touching
/// what is inside, and refuses a non-root caller. Group `root` stands for
/// `tern`, which this machine need not have.
#[test]
fn tern_install_makes_the_shared_spool_and_puts_its_modes_right() {
    use std::os::unix::fs::MetadataExt;
    if tern::sys::real_uid() != 0 {
        eprintln!("skipped: tern_install is root's");
        return;
    }
    let env = shared_env();
    std::fs::remove_dir(env.spool()).unwrap();
    let tool = env.path("tern_install");
    std::os::unix::fs::symlink(crate::common::process::tool_path("tern"), &tool).unwrap();
    let install = || {
        let mut c = Command::new(&tool);
        c.env_clear().args(["-group", "root"]);
        for (n, v) in env.vars() {
            c.env(n, v);
        }
        Run::from(c.output().unwrap())
    };
    let r = install();
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    let mode = |p: &std::path::Path| std::fs::symlink_metadata(p).unwrap().mode() & 0o7777;
    for d in ["", "shadow", "ctl"] {
        assert_eq!(mode(&env.spool().join(d)), 0o2770, "{d}");
    }
    assert_eq!(mode(&env.spool().join("queue.db")), 0o660);
    let wal: String = tern::queue::Queue::open(&env.spool(), false)
        .unwrap()
        .unwrap()
        .conn()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(wal, "wal");
    // Again: nothing to do. A wrong mode on SPOOL is put right, a user's
    // file inside is left as it is.
    let r = install();
    assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{r:?}");
    chmod(&env.spool(), 0o777);
    std::fs::write(env.spool().join("users.file"), "").unwrap();
    chmod(&env.spool().join("users.file"), 0o666);
    let r = install();
    assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{r:?}");
    assert_eq!(mode(&env.spool()), 0o2770);
    assert_eq!(mode(&env.spool().join("users.file")), 0o666);
    // A database that is a symlink is refused, its target untouched.
    let db = env.spool().join("queue.db");
    std::fs::rename(&db, env.path("moved.db")).unwrap();
    std::os::unix::fs::symlink(env.path("moved.db"), &db).unwrap();
    let r = install();
    assert_eq!(r.code, 1, "{r:?}");
    chmod(&env.path(""), 0o755);
    let mut c = Command::new("setpriv");
    c.args([
        "--reuid",
        "nobody",
        "--regid",
        "nogroup",
        "--clear-groups",
        "--",
    ])
    .arg(&tool)
    .env_clear();
    let r = Run::from(c.output().unwrap());
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains("only root installs the shared queue"),
        "{r:?}"
    );
}

/// `-wait-lock`: with the pass lock held, the pass waits at most the bound
/// and then leaves the mark (exit 0); when the holder lets go within the
/// bound, the pass runs.
#[test]
fn wait_lock_waits_for_the_holder_within_its_bound() {
    let env = TestEnv::with_spool().var("_TERN_START", Some("false"));
    std::fs::create_dir(env.spool()).unwrap();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(env.spool().join("negotiator.lock"))
        .unwrap();
    lock.lock().unwrap();
    let t = std::time::Instant::now();
    let r = env.run("tern_negotiate", ["-wait-lock", "1"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    assert!(t.elapsed() >= Duration::from_secs(1));
    assert!(
        env.spool().join("negotiator.wanted").exists(),
        "the mark is left"
    );
    assert!(!env.spool().join("queue.db").exists(), "no pass ran");
    let mut child = env
        .command("tern_negotiate")
        .args(["-wait-lock", "30"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    drop(lock);
    let status = child.wait().unwrap();
    assert!(status.success());
    assert!(
        !env.spool().join("negotiator.wanted").exists(),
        "the pass took the mark"
    );
    let r = env.run("tern_negotiate", ["-wait", "-wait-lock", "1"]);
    assert_eq!(r.code, 2, "-wait and -wait-lock conflict: {r:?}");
}

/// The job router in shared mode: a user's submit only leaves the mark,
/// and the root pass that takes it on starts the router, which routes the
/// user's job. Runs as root (the pass) and nobody (the submitter).
#[test]
fn a_root_pass_starts_the_router_for_a_users_job() {
    if tern::sys::real_uid() != 0 {
        eprintln!("skipped: needs root for the pass and another user to submit");
        return;
    }
    // A submit asks for a pass, as it does outside tests.
    let env = shared_env().var("_TERN_NEGOTIATE_ON_SUBMIT", None);
    std::fs::remove_dir(env.spool()).unwrap();
    chmod(&env.path(""), 0o755);
    let cfg = env.path("tern_config");
    let routes = "START = false\nJOB_ROUTER_ROUTE_NAMES = Local\n\
                  JOB_ROUTER_ROUTE_Local @=end\n  UNIVERSE vanilla\n  REQUIREMENTS true\n@end\n";
    let text = std::fs::read_to_string(&cfg).unwrap() + routes;
    std::fs::write(&cfg, text).unwrap();
    chmod(&cfg, 0o644);
    // The installer's SPOOL, with nobody's group standing for tern.
    let install = env.path("tern_install");
    std::os::unix::fs::symlink(crate::common::process::tool_path("tern"), &install).unwrap();
    let mut c = Command::new(&install);
    c.env_clear().args(["-group", "nogroup"]);
    for (n, v) in env.vars() {
        c.env(n, v);
    }
    let r = Run::from(c.output().unwrap());
    assert_eq!(r.code, 0, "{r:?}");
    let sub = env.write("one.sub", "executable = /bin/true\nqueue\n");
    chmod(&sub, 0o644);
    let mut c = Command::new("setpriv");
    c.args([
        "--reuid",
        "nobody",
        "--regid",
        "nogroup",
        "--clear-groups",
        "--",
    ])
    .arg(bin("tern_submit"))
    .arg(&sub)
    .env_clear()
    .current_dir("/tmp");
    for (n, v) in env.vars() {
        c.env(n, v);
    }
    let r = Run::from(c.output().unwrap());
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        env.spool().join("negotiator.wanted").exists(),
        "the submit left the mark"
    );
    let managed = || {
        let r = env.run("tern_q", ["-allusers", "1.0", "-af", "Managed"]);
        r.stdout.trim().to_string()
    };
    assert_eq!(
        managed(),
        "undefined",
        "nothing routed before the root pass"
    );
    let r = env.run("tern_negotiate", [] as [&str; 0]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        wait_until(Duration::from_secs(60), || managed() == "External"),
        "the root pass did not start the router: {}",
        managed()
    );
}

/// A root pass that waits for the queue's write lock kills another user's
/// process that has held it for STALE_LOCK_SECONDS (here 2), says so, and
/// goes on; without the rule it would wait 30 s and fail. The holder is
/// examples/hold_write_lock.rs run as nobody, whose group stands for
/// tern. Root only.
#[test]
fn a_root_pass_kills_a_live_holder_of_the_write_lock_past_its_limit() {
    if tern::sys::real_uid() != 0 {
        eprintln!("skipped: needs root for the pass and another user to hold the lock");
        return;
    }
    let env = shared_env()
        .var("_TERN_START", Some("false"))
        .var("_TERN_STALE_LOCK_SECONDS", Some("2"));
    std::fs::remove_dir(env.spool()).unwrap();
    chmod(&env.path(""), 0o755);
    let install = env.path("tern_install");
    std::os::unix::fs::symlink(crate::common::process::tool_path("tern"), &install).unwrap();
    let mut c = Command::new(&install);
    c.env_clear().args(["-group", "nogroup"]);
    for (n, v) in env.vars() {
        c.env(n, v);
    }
    let r = Run::from(c.output().unwrap());
    assert_eq!(r.code, 0, "{r:?}");
    let holder_bin = crate::common::fake_job().with_file_name("hold_write_lock");
    let mut holder = Command::new("setpriv")
        .args([
            "--reuid",
            "nobody",
            "--regid",
            "nogroup",
            "--clear-groups",
            "--",
        ])
        .arg(&holder_bin)
        .arg(env.spool().join("queue.db"))
        .arg("300")
        .env_clear()
        .current_dir("/")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(holder.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "locked\n", "the holder did not take the lock");
    let t = std::time::Instant::now();
    let r = env.run("tern_negotiate", [] as [&str; 0]);
    let took = t.elapsed();
    let status = holder.try_wait().unwrap();
    let _ = holder.kill();
    let _ = holder.wait();
    assert_eq!(r.code, 0, "{r:?}");
    let pid = holder.id();
    assert!(
        r.stderr.contains(&format!(
            "tern_negotiate: killed process {pid} (uid {}): it went past STALE_LOCK_SECONDS \
             while holding the queue's write lock",
            tern::sys::identity::user("nobody").unwrap().uid
        )),
        "{r:?}"
    );
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.and_then(|s| s.signal()), Some(libc::SIGKILL));
    assert!(took < Duration::from_secs(20), "the pass took {took:?}");
}

/// The root pass's pace in shared mode: marks made as fast as a loop can
/// (a user's tern_submit or tern_negotiate in a loop) get at most about
/// one root round a second, whichever root passes run them (`-loop
/// -watch` here, a pass a shadow asks for), counted from the record every
/// root round leaves in negotiator.lock; and a pass started on its own (as
/// the path unit starts one) waits out the pause after the last round
/// too, so starting passes anew gains nothing. Root only (only root runs
/// passes in shared mode).
#[test]
fn a_mark_flood_gets_at_most_one_root_round_a_second() {
    if tern::sys::real_uid() != 0 {
        eprintln!("skipped: only root runs passes in shared mode");
        return;
    }
    let env = shared_env().var("_TERN_START", Some("false"));
    std::fs::remove_dir(env.spool()).unwrap();
    let install = env.path("tern_install");
    std::os::unix::fs::symlink(crate::common::process::tool_path("tern"), &install).unwrap();
    let mut c = Command::new(&install);
    c.env_clear().args(["-group", "root"]);
    for (n, v) in env.vars() {
        c.env(n, v);
    }
    assert_eq!(Run::from(c.output().unwrap()).code, 0);
    // The record's last field: every root round so far.
    let rounds = || -> u64 {
        std::fs::read_to_string(env.spool().join("negotiator.lock"))
            .ok()
            .and_then(|t| t.lines().next()?.split_whitespace().nth(3)?.parse().ok())
            .unwrap_or(0)
    };
    let mut child = env
        .command("tern_negotiate")
        .args(["-loop", "-watch", "-interval", "600"])
        .spawn()
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(60), || rounds() >= 1),
        "no first pass"
    );
    let mark = env.spool().join("negotiator.wanted");
    let flood = Duration::from_secs(6);
    let t = std::time::Instant::now();
    let before = rounds();
    let mut made = 0;
    while t.elapsed() < flood {
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&mark);
        made += 1;
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(2500));
    let n = rounds() - before;
    let window = t.elapsed().as_secs() + 1;
    let _ = child.kill();
    let _ = child.wait();
    eprintln!("flood: {n} rounds for {made} marks in {window} s");
    // About one a second: the marks are served, and no faster.
    assert!(
        (4..=window).contains(&n),
        "{n} rounds for {made} marks in {window} s"
    );
    // Two passes started one after the other: the second waits its turn.
    let t = std::time::Instant::now();
    assert_eq!(env.run("tern_negotiate", [] as [&str; 0]).code, 0);
    assert_eq!(env.run("tern_negotiate", [] as [&str; 0]).code, 0);
    let took = t.elapsed();
    assert!(took >= Duration::from_millis(950), "two passes in {took:?}");
}

/// A job lock planted in SPOOL as a symbolic link or a FIFO (what a bug in
/// a setgid tool could leave; simulated here by the test): the pass
/// refuses to take it, says so, leaves that job idle and the link's target
/// alone, and still starts the other jobs.
#[test]
fn a_planted_job_lock_is_refused_and_the_rest_of_the_queue_runs() {
    // No pass on submit: one started in the background could take job 0's
    // lock before the link is planted.
    let env = crate::common::RunEnv::new().knob("NEGOTIATE_ON_SUBMIT", "false");
    let c = env.submit("two.sub", "executable = /bin/true\nqueue 2\n");
    let canary = env.write("canary", "canary\n");
    let locks = env.spool().join("shadow");
    std::fs::create_dir_all(&locks).unwrap();
    let planted = locks.join(format!("{c}.0.lock"));
    std::os::unix::fs::symlink(&canary, &planted).unwrap();
    let r = env.run("tern_negotiate", ["-wait"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stderr.contains(&format!(
            "tern_negotiate: job {c}.0 not started: refusing {}: it is a symbolic link",
            planted.display()
        )),
        "{r:?}"
    );
    env.wait_history(&format!("{c}.1"), Duration::from_secs(60));
    assert_eq!(env.status(&format!("{c}.0")), Some(1), "the job stays idle");
    assert_eq!(std::fs::read_to_string(&canary).unwrap(), "canary\n");
    // The FIFO replaces the link in one rename: with the name free for a
    // moment, a pass asked for by job 1's end took job 0 in between.
    let fifo = env.path("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    std::fs::rename(&fifo, &planted).unwrap();
    let r = env.run("tern_negotiate", ["-wait"]);
    assert!(
        r.stderr.contains(&format!(
            "job {c}.0 not started: refusing {}: it is not a regular file",
            planted.display()
        )),
        "{r:?}"
    );
    std::fs::remove_file(&planted).unwrap();
    env.negotiate();
    env.wait_history(&format!("{c}.0"), Duration::from_secs(60));
}
