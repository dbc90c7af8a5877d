//! Running jobs as their owner when the pass runs as root (the shared
//! mode): the job gets the owner's uid, gid and groups, its output files
//! belong to the owner, and an owner this machine does not know is a hold.
//! These tests need root (to create users); as anyone else they say so and
//! pass without checking.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::process::Command;
use std::time::Instant;

use crate::common::users::{
    User, held_job, is_root, root_with_user, run_as, shared_env, shared_pass, submit_as, wait_for,
    wait_gone,
};
use crate::common::{RunEnv, bin};

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
    wait_gone(&env, "1.0");
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

/// A root-owned file with known contents, to be aimed at.
fn victim(env: &RunEnv, name: &str, mode: u32) -> std::path::PathBuf {
    let p = env.write(name, "precious\n");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    p
}

fn untouched(p: &std::path::Path) {
    let meta = std::fs::metadata(p).unwrap();
    assert_eq!(
        (meta.uid(), meta.gid()),
        (0, 0),
        "{} changed owner",
        p.display()
    );
    assert_eq!(std::fs::read_to_string(p).unwrap(), "precious\n");
}

#[test]
fn an_output_symlinked_to_a_root_file_is_opened_as_the_owner_and_held() {
    let Some(user) = root_with_user("ternjobout") else {
        return;
    };
    let env = shared_env();
    let target = victim(&env, "victim", 0o644);
    std::os::unix::fs::symlink(&target, env.path("out.link")).unwrap();
    submit_as(
        &env,
        &user.name,
        "executable = /bin/echo\narguments = overwritten\noutput = out.link\nqueue\n",
    );
    env.negotiate();
    let (code, reason) = held_job(&env, "1.0");
    assert_eq!(code, "7", "{reason}");
    assert!(reason.contains("Permission denied"), "{reason}");
    untouched(&target);
}

#[test]
fn an_input_only_root_can_read_is_held_not_read() {
    let Some(user) = root_with_user("ternjobin") else {
        return;
    };
    let env = shared_env();
    let secret = victim(&env, "secret", 0o600);
    submit_as(
        &env,
        &user.name,
        &format!(
            "executable = /bin/cat\ninput = {}\noutput = leak.out\nqueue\n",
            secret.display()
        ),
    );
    env.negotiate();
    let (code, reason) = held_job(&env, "1.0");
    assert_eq!(code, "8", "{reason}");
    assert!(
        !env.path("leak.out").exists(),
        "nothing was opened for output"
    );
    untouched(&secret);
}

#[test]
fn an_iwd_the_owner_cannot_enter_is_held_and_nothing_is_made_there() {
    let Some(user) = root_with_user("ternjobiwd") else {
        return;
    };
    let env = shared_env();
    let closed = env.path("closed");
    std::fs::create_dir(&closed).unwrap();
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
    submit_as(
        &env,
        &user.name,
        &format!(
            "executable = /bin/true\niwd = {}\noutput = made.out\nqueue\n",
            closed.display()
        ),
    );
    env.negotiate();
    let (code, reason) = held_job(&env, "1.0");
    assert_eq!(code, "14", "{reason}");
    assert_eq!(std::fs::read_dir(&closed).unwrap().count(), 0);
}

#[test]
fn an_event_log_symlinked_to_a_root_file_is_not_written_by_root() {
    let Some(user) = root_with_user("ternjoblog") else {
        return;
    };
    let env = shared_env();
    let target = victim(&env, "victim.log", 0o644);
    std::os::unix::fs::symlink(&target, env.path("job.log")).unwrap();
    // The submit event is the submitter's own write: it fails for them.
    let file = env.write("as.sub", "executable = /bin/true\nlog = job.log\nqueue\n");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut c = Command::new("/usr/sbin/runuser");
    c.args(["-u", &user.name, "--", bin("tern_submit")])
        .arg(&file)
        .current_dir(env.path(""))
        .env_clear()
        .envs(env.vars().iter().map(|(k, v)| (k, v)));
    let _ = c.output().unwrap();
    if env.q_af("1.0", &["Owner"]).is_none() {
        // Refused at submit: nothing ran, nothing was written.
        untouched(&target);
        return;
    }
    env.negotiate();
    // The root shadow cannot open the log as the owner (nor would it
    // follow the link): held 22, as HTCondor's shadow holds a job whose
    // log it cannot initialize.
    let (code, reason) = held_job(&env, "1.0");
    assert_eq!(code, "22", "{reason}");
    untouched(&target);
}

#[test]
fn the_job_gets_its_owners_groups_without_root_and_a_clean_umask() {
    let Some(user) = root_with_user("ternjobgrp") else {
        return;
    };
    let env = shared_env();
    submit_as(
        &env,
        &user.name,
        "executable = /bin/sh\narguments = \"-c 'id -u; id -g; id -G; umask; pwd'\"\noutput = id.out\nqueue\n",
    );
    env.negotiate();
    wait_gone(&env, "1.0");
    let out = std::fs::read_to_string(env.path("id.out")).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    let uid = user.uid().to_string();
    assert_eq!(lines[0], uid, "{out}");
    assert_ne!(lines[1], "0", "{out}");
    assert!(
        !lines[2].split_whitespace().any(|g| g == "0"),
        "root's group is not the job's: {out}"
    );
    assert_eq!(lines[3], "0022", "{out}");
    let iwd = env.path("").display().to_string();
    assert_eq!(lines[4], iwd.trim_end_matches('/'), "{out}");
}

#[test]
fn in_shared_mode_a_root_job_is_held_not_run_as_root() {
    if !is_root() {
        eprintln!("not root: the identity switch is not checked");
        return;
    }
    let env = shared_env();
    // Root's own job from its personal queue, then the pass in shared
    // mode: the row as a forger with the group's rights would leave it.
    env.submit(
        "root.sub",
        "executable = /usr/bin/touch\narguments = ran-as-root\nqueue\n",
    );
    shared_pass(&env, &[]);
    let (code, reason) = held_job(&env, "1.0");
    assert_eq!(code, "23", "{reason}");
    assert!(reason.contains("root"), "{reason}");
    assert!(!env.path("ran-as-root").exists());
}

#[test]
fn in_shared_mode_a_job_needs_its_owner_uid_and_a_uid_above_the_minimum() {
    let Some(user) = root_with_user("ternjobuid") else {
        return;
    };
    let env = shared_env();
    // No OwnerUid matching the owner: the row was not written by them (a
    // forger with the group's rights; the queue itself never lets a user
    // set it).
    submit_as(
        &env,
        &user.name,
        "executable = /usr/bin/touch\narguments = ran\nqueue\n",
    );
    {
        let mut q = tern::queue::Queue::open(&env.spool(), false)
            .unwrap()
            .unwrap();
        let sel = tern::queue::Selection {
            jobs: vec![tern::queue::JobId {
                cluster: 1,
                proc: 0,
            }],
            ..Default::default()
        };
        let forged = i64::from(user.uid()) + 1;
        q.modify(&sel, 0, |_, _| {
            tern::queue::Change::Set(vec![(
                "OwnerUid".to_string(),
                tern::classad::Expr::int(forged),
            )])
        })
        .unwrap();
    }
    shared_pass(&env, &[]);
    let (code, reason) = held_job(&env, "1.0");
    assert_eq!(code, "23", "{reason}");
    assert!(reason.contains("submitted by uid"), "{reason}");
    assert!(!env.path("ran").exists());

    let env = shared_env();
    submit_as(
        &env,
        &user.name,
        "executable = /usr/bin/touch\narguments = ran\nqueue\n",
    );
    let min = (user.uid() + 1).to_string();
    shared_pass(&env, &[("_TERN_MIN_OWNER_UID", &min)]);
    let (code, reason) = held_job(&env, "1.0");
    assert_eq!(code, "23", "{reason}");
    assert!(
        reason.contains("MIN_OWNER_UID") || reason.contains("OwnerUid"),
        "{reason}"
    );
    assert!(!env.path("ran").exists());
}

/// Outside shared mode a root pass over a user's personal queue is the
/// ALLOW_ROOT_JOBS case: the user may write anything into their own
/// database, Owner = "root" included. Such a job is held, not run as root.
#[test]
fn a_root_owner_written_into_a_users_own_queue_is_held_not_run_as_root() {
    let Some(user) = root_with_user("ternjobforge") else {
        return;
    };
    let env = shared_env();
    submit_as(
        &env,
        &user.name,
        "executable = /usr/bin/touch\narguments = ran-as-root\nqueue\n",
    );
    let db = env.spool().join("queue.db");
    assert_eq!(std::fs::metadata(&db).unwrap().uid(), user.uid());
    {
        let mut q = tern::queue::Queue::open(&env.spool(), false)
            .unwrap()
            .unwrap();
        q.modify(&tern::queue::Selection::default(), 0, |_, _| {
            tern::queue::Change::Set(vec![
                ("Owner".to_string(), tern::classad::Expr::string("root")),
                ("OwnerUid".to_string(), tern::classad::Expr::int(0)),
            ])
        })
        .unwrap();
    }
    env.negotiate();
    let (code, reason) = held_job(&env, "1.0");
    assert_eq!(code, "23", "{reason}");
    assert!(reason.contains("ALLOW_ROOT_JOBS is false"), "{reason}");
    assert!(reason.contains("is not root's own"), "{reason}");
    assert!(!env.path("ran-as-root").exists());
}

#[test]
fn the_job_and_the_files_made_for_it_get_the_submitters_umask() {
    let Some(user) = root_with_user("ternjobmask") else {
        return;
    };
    let env = shared_env();
    let file = env.write(
        "mask.sub",
        "executable = /bin/sh\narguments = \"-c umask\"\noutput = mask.out\nlog = mask.log\n\
         +OwnerUmask = 0\nqueue\n",
    );
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let script = format!("umask 077; exec {} {}", bin("tern_submit"), file.display());
    let out = Command::new("/usr/sbin/runuser")
        .args(["-u", &user.name, "--", "/bin/sh", "-c", &script])
        .current_dir(env.path(""))
        .env_clear()
        .envs(env.vars().iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The submit file's own OwnerUmask is not the queue's.
    assert_eq!(env.q_af("1.0", &["OwnerUmask"]).as_deref(), Some("63"));
    // The root shadow makes the event log anew, as the owner.
    std::fs::remove_file(env.path("mask.log")).unwrap();
    env.negotiate();
    wait_gone(&env, "1.0");
    let out = std::fs::read_to_string(env.path("mask.out")).unwrap();
    assert_eq!(out.trim(), "0077");
    // What root made as the owner has the owner's umask too.
    for f in ["mask.out", "mask.log"] {
        let meta = std::fs::metadata(env.path(f)).unwrap();
        assert_eq!(meta.uid(), user.uid(), "{f}");
        assert_eq!(meta.permissions().mode() & 0o777, 0o600, "{f}");
    }
}

#[test]
fn an_owner_who_may_not_signal_the_root_shadow_rings_its_doorbell() {
    let Some(user) = root_with_user("ternjobbell") else {
        return;
    };
    let env = shared_env();
    // As in shared mode, where the job locks' directory gives its files
    // the queue's group: here the owner's own group.
    let locks = env.spool().join("shadow");
    std::fs::create_dir(&locks).unwrap();
    std::os::unix::fs::chown(&locks, None, Some(user.gid())).unwrap();
    std::fs::set_permissions(&locks, std::fs::Permissions::from_mode(0o2775)).unwrap();
    submit_as(
        &env,
        &user.name,
        "executable = /bin/sleep\narguments = 300\nqueue\n",
    );
    env.negotiate();
    wait_for("the job to run", || {
        env.q_af("1.0", &["JobStatus"]).as_deref() == Some("2")
    });
    // The shadow writes its pid on the job lock's first line.
    let lock = env.spool().join("shadow/1.0.lock");
    let mut pid = String::new();
    wait_for("the shadow's pid", || {
        pid = std::fs::read_to_string(&lock).unwrap_or_default();
        pid.lines()
            .next()
            .is_some_and(|l| l.trim().parse::<i32>().is_ok())
    });
    let pid: i32 = pid.lines().next().unwrap().trim().parse().unwrap();
    assert!(
        env.spool().join(format!("shadow/{pid}.bell")).exists(),
        "the root shadow has a doorbell"
    );
    let asked = Instant::now();
    let out = run_as(&env, &user.name, "tern_rm", &["1.0"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    wait_for("the job to leave the queue", || {
        env.history_af("1.0", &["JobStatus"]).as_deref() == Some("3")
    });
    eprintln!("removed {:?} after tern_rm", asked.elapsed());
}

#[test]
fn a_root_pass_in_shared_mode_kills_a_user_stopped_while_holding_the_queue() {
    let Some(user) = root_with_user("ternjobstop") else {
        return;
    };
    let env = shared_env();
    env.submit("a.sub", "executable = /bin/true\nqueue\n");
    let db = env.spool().join("queue.db");
    for f in ["queue.db", "queue.db-wal", "queue.db-shm"] {
        let p = env.spool().join(f);
        if p.exists() {
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o666)).unwrap();
        }
    }
    // The user takes the write lock and stops.
    let script = format!(
        "import os, signal, sqlite3\n\
         c = sqlite3.connect('{}', isolation_level=None)\n\
         c.execute('BEGIN IMMEDIATE')\n\
         os.kill(os.getpid(), signal.SIGSTOP)\n",
        db.display()
    );
    let uid = user.uid();
    let gid = user.gid();
    let mut holder = {
        use std::os::unix::process::CommandExt;
        Command::new("python3")
            .args(["-c", &script])
            .uid(uid)
            .gid(gid)
            .spawn()
            .unwrap()
    };
    let pid = holder.id();
    let stopped = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('T'))
        })
    };
    wait_for("the user's process to stop holding the lock", stopped);
    let out = env
        .command("tern_negotiate")
        .env("_TERN_SHARED_QUEUE", "true")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("killed process"), "{stderr}");
    let _ = holder.wait();
    // The pass went on past the lock: root's job is held, as shared mode
    // holds every root job.
    assert_eq!(held_job(&env, "1.0").0, "23");
}

#[test]
fn a_sandboxed_job_of_another_user_moves_its_files_as_that_user() {
    let Some(user) = root_with_user("ternjobsbx") else {
        return;
    };
    let env = shared_env();
    let input = env.write("in.txt", "data\n");
    std::fs::set_permissions(&input, std::fs::Permissions::from_mode(0o644)).unwrap();
    // A root-only file the job names as input: copied as the owner, it
    // cannot be read.
    let secret = victim(&env, "secret", 0o600);
    submit_as(
        &env,
        &user.name,
        "executable = /bin/sh\narguments = \"-c 'id -u > made.txt; cat in.txt >> made.txt'\"\n\
         should_transfer_files = YES\ntransfer_input_files = in.txt\nqueue\n",
    );
    submit_as(
        &env,
        &user.name,
        &format!(
            "executable = /bin/true\nshould_transfer_files = YES\ntransfer_input_files = {}\nqueue\n",
            secret.display()
        ),
    );
    env.negotiate();
    wait_gone(&env, "1.0");
    let made = env.path("made.txt");
    assert_eq!(
        std::fs::read_to_string(&made).unwrap(),
        format!("{}\ndata\n", user.uid())
    );
    assert_eq!(std::fs::metadata(&made).unwrap().uid(), user.uid());
    wait_for("the second job to be held", || {
        env.q_af("2.0", &["JobStatus"]).as_deref() == Some("5")
    });
    assert_eq!(env.q_af("2.0", &["HoldReasonCode"]).as_deref(), Some("13"));
    untouched(&secret);
}
