//! What the fault harness found, one focused test each, named after the
//! finding and reproducing it without the harness's randomness.

use crate::common::queue::change;
use crate::common::{RunEnv, TIMEOUT, fake_job};

/// Found by the harness as a routed job that ran twice at once: its
/// routed copy (a grid universe job whose route sets `Requirements =
/// true`) was handed a slot by claim reuse when another job of the same
/// owner ended, and ran here under a shadow while its gridmanager ran it
/// in the other queue. Reuse must skip what the pass never matches: grid
/// universe jobs, and jobs the router manages (`Managed = "External"`).
#[test]
fn claim_reuse_never_hands_a_slot_to_a_grid_job_or_a_routed_source() {
    // One slot, one pass; no gridmanager acts on the grid job.
    let env = RunEnv::new()
        .knob("NEGOTIATE_ON_SUBMIT", "false")
        .knob("NEGOTIATE_ON_EXIT", "false")
        .knob("NUM_CPUS", "1")
        .knob("GRIDMANAGER", "/bin/true");
    let fake = fake_job().display().to_string();
    let first = env.submit(
        "first.sub",
        &format!("executable = {fake}\narguments = \"sleep 0.5\"\nqueue\n"),
    );
    let grid = env.submit(
        "grid.sub",
        &format!(
            "universe = grid\ngrid_resource = condor {} local\nexecutable = {fake}\n\
             arguments = \"touch grid-ran\"\nrequirements = true\nqueue\n",
            env.path("other").display()
        ),
    );
    let source = env.submit(
        "source.sub",
        &format!("executable = {fake}\narguments = \"touch source-ran\"\nqueue\n"),
    );
    // The router's claim on a source, as it makes it.
    change(
        &env,
        source,
        0,
        crate::common::NOW,
        tern::queue::Change::Set(vec![(
            "Managed".into(),
            tern::classad::Expr::string("External"),
        )]),
    );
    env.negotiate();
    env.wait_history(&format!("{first}.0"), TIMEOUT);
    env.wait_slots_unclaimed();
    for (job, ran) in [(grid, "grid-ran"), (source, "source-ran")] {
        let id = format!("{job}.0");
        assert_eq!(
            env.q_af(&id, &["JobStatus", "NumShadowStarts"]).as_deref(),
            Some("1 undefined"),
            "job {id}: {}",
            env.diagnosis()
        );
        assert!(!env.path(ran).exists(), "job {id} ran on the slot");
    }
}

/// A grid job of the other tern queue `remote`, with the gridmanager's
/// claim on it (`Managed = "External"`) and the remote job a gridmanager
/// submitted for it there (tagged as it tags them), but no GridJobId:
/// what a gridmanager killed between the remote submit and recording the
/// remote id leaves. The local job's id and the remote one's.
fn claimed_without_remote_id(env: &RunEnv, remote: &std::path::Path) -> (String, String) {
    let fake = fake_job().display().to_string();
    let c = env.submit(
        "grid.sub",
        &format!(
            "universe = grid\ngrid_resource = condor {} local\nexecutable = {fake}\n\
             arguments = \"sleep 300\"\nqueue\n",
            remote.display()
        ),
    );
    let id = format!("{c}.0");
    change(
        env,
        c,
        0,
        crate::common::NOW,
        tern::queue::Change::Set(vec![(
            "Managed".into(),
            tern::classad::Expr::string("External"),
        )]),
    );
    let qdate = env.q_af(&id, &["QDate"]).unwrap();
    env.write(
        "remote.sub",
        &format!(
            "executable = {fake}\narguments = \"sleep 300\"\n\
             +SubmitterGlobalJobId = \"{}#{id}#{qdate}\"\n+LeaveJobInQueue = JobStatus == 4\nqueue\n",
            env.spool().display()
        ),
    );
    let out = env
        .command("tern_submit")
        .env("_TERN_SPOOL", remote)
        .arg("remote.sub")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    (id, "1.0".into())
}

/// The remote job's status in the other queue's history, once it is
/// there.
fn remote_history_status(env: &RunEnv, remote: &std::path::Path, rid: &str) -> Option<String> {
    let out = env
        .command("tern_history")
        .env("_TERN_SPOOL", remote)
        .args([rid, "-af", "JobStatus"])
        .output()
        .unwrap();
    let s = String::from_utf8(out.stdout).unwrap();
    (!s.is_empty()).then(|| s.trim_end().to_string())
}

/// Found as a routed copy's job left in the other queue (it ran there to
/// completion and stayed, LeaveJobInQueue, for good): the copy's
/// gridmanager was killed after submitting it there and before recording
/// its id, and the copy was then removed here; its next gridmanager,
/// seeing no GridJobId, removed nothing there. It must look for the job
/// by its tag, as a resubmit does.
#[test]
fn a_grid_job_removed_after_a_gridmanager_died_mid_submit_is_removed_there_too() {
    let env = RunEnv::new()
        .knob("NEGOTIATE_ON_SUBMIT", "false")
        .knob("NEGOTIATE_ON_EXIT", "false");
    let remote = env.path("other");
    let (id, rid) = claimed_without_remote_id(&env, &remote);
    env.run_ok("tern_rm", [&id]);
    env.run_ok("tern_gridmanager", [crate::common::real_user()]);
    assert_eq!(env.status(&id), None, "{}", env.diagnosis());
    assert_eq!(
        remote_history_status(&env, &remote, &rid).as_deref(),
        Some("3"),
        "the job there was not removed"
    );
}

/// The same gridmanager death, then a hold here: the job there is held
/// too, and adopted, so that a release releases it rather than submitting
/// a second one beside it.
#[test]
fn a_grid_job_held_after_a_gridmanager_died_mid_submit_is_held_there_and_adopted() {
    let env = RunEnv::new()
        .knob("NEGOTIATE_ON_SUBMIT", "false")
        .knob("NEGOTIATE_ON_EXIT", "false");
    let remote = env.path("other");
    let (id, rid) = claimed_without_remote_id(&env, &remote);
    env.run_ok("tern_hold", [&id]);
    env.run_ok("tern_gridmanager", [crate::common::real_user()]);
    let there = |attrs: &[&str]| {
        let out = env
            .command("tern_q")
            .env("_TERN_SPOOL", &remote)
            .args([&[rid.as_str(), "-af"], attrs].concat())
            .output()
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .trim_end()
            .to_string()
    };
    assert_eq!(there(&["JobStatus"]), "5", "the job there is held");
    let gid = env.q_af(&id, &["GridJobId"]).unwrap();
    assert!(gid.ends_with(&format!(" {rid}")), "{gid}");
}

/// Applies `change` to job `rid` of the queue in `spool`.
fn change_in(spool: &std::path::Path, rid: &str, change: tern::queue::Change) {
    let mut q = tern::queue::Queue::open(spool, false).unwrap().unwrap();
    let id = crate::common::router::parse_id(rid);
    let sel = tern::queue::Selection {
        jobs: vec![id],
        ..Default::default()
    };
    let done = q
        .modify(&sel, crate::common::NOW, |_, _| change.clone())
        .unwrap();
    assert_eq!(done.len(), 1, "job {rid} is not in {}", spool.display());
}

/// Found as a routed copy's job left in the other queue, completed, for
/// good: the gridmanager completed the copy here and was killed before it
/// let the job there go (LeaveJobInQueue), and no gridmanager looks at a
/// job that has left. It now lets the job there go first. A kill between
/// the two steps cannot be placed by a test; what it leaves now can: the
/// job there completed and gone to its history, the job here still
/// running. The next gridmanager completes it from that history.
#[test]
fn a_grid_job_whose_remote_job_was_let_go_before_it_completed_here_completes() {
    use tern::classad::Expr;
    let env = RunEnv::new()
        .knob("NEGOTIATE_ON_SUBMIT", "false")
        .knob("NEGOTIATE_ON_EXIT", "false");
    let remote = env.path("other");
    let (id, rid) = claimed_without_remote_id(&env, &remote);
    let (c, _) = id.split_once('.').unwrap();
    change(
        &env,
        c.parse().unwrap(),
        0,
        crate::common::NOW,
        tern::queue::Change::Set(vec![
            (
                "GridJobId".into(),
                Expr::string(&format!("condor {} local {rid}", remote.display())),
            ),
            ("JobStatus".into(), Expr::int(2)),
        ]),
    );
    change_in(
        &remote,
        &rid,
        tern::queue::Change::Leave {
            set: vec![
                ("JobStatus".into(), Expr::int(4)),
                ("ExitCode".into(), Expr::int(3)),
                (
                    "ExitBySignal".into(),
                    tern::classad::parse_expr("false").unwrap(),
                ),
            ],
        },
    );
    env.run_ok("tern_gridmanager", [crate::common::real_user()]);
    assert_eq!(
        env.history_af(&id, &["JobStatus", "ExitCode"]).as_deref(),
        Some("4 3"),
        "{}",
        env.diagnosis()
    );
}

/// An environment whose route `Other` sends jobs with `+WantOther` to the
/// tern queue in `other` (returned), with no passes started by tools.
fn routing_env() -> (RunEnv, std::path::PathBuf) {
    let env = RunEnv::new();
    let remote = env.path("other");
    let config = env.write(
        "tern_config",
        &format!(
            "JOB_ROUTER_ROUTE_NAMES = Other\nJOB_ROUTER_ROUTE_Other @=end\n\
             \x20 REQUIREMENTS WantOther =?= true\n\
             \x20 GridResource = \"condor {} local\"\n\
             \x20 SET Requirements true\n@end\n",
            remote.display()
        ),
    );
    let env = env
        .var_env("TERN_CONFIG", config.to_str().unwrap())
        .knob("NEGOTIATE_ON_SUBMIT", "false")
        .knob("NEGOTIATE_ON_EXIT", "false");
    (env, remote)
}

/// A long job submitted for the route, and routed: its cluster and the
/// copy's id (`RoutedToJobId`).
fn routed_source(env: &RunEnv, fake: &str) -> (i64, String) {
    let src = env.submit(
        "src.sub",
        &format!(
            "executable = {fake}\narguments = \"sleep 300\"\n+WantOther = true\n\
             requirements = false\nqueue\n"
        ),
    );
    env.run_ok("tern_job_router", [] as [&str; 0]);
    let copy = env
        .q_af(&format!("{src}.0"), &["RoutedToJobId"])
        .expect("the source is routed");
    (src, copy)
}

/// Found as a routed copy's job left running in the other queue: the
/// source was removed while its copy was idle here, its job there already
/// submitted (the gridmanager had not polled it since), and the router
/// removed the copy by moving it straight to the history. No gridmanager
/// then looked at it, so the job there ran on. A grid copy its
/// gridmanager manages now stays, removed, until the gridmanager has
/// removed its job there (as tern_rm leaves one).
#[test]
fn a_routed_copy_removed_by_the_router_has_its_job_there_removed_first() {
    use tern::classad::Expr;
    let (env, remote) = routing_env();
    let fake = fake_job().display().to_string();
    let (src, copy) = routed_source(&env, &fake);
    // The copy's gridmanager submitted its job there and recorded it;
    // the job is idle there and the copy idle here.
    env.write(
        "remote.sub",
        &format!("executable = {fake}\narguments = \"sleep 300\"\nqueue\n"),
    );
    let out = env
        .command("tern_submit")
        .env("_TERN_SPOOL", &remote)
        .arg("remote.sub")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let c = crate::common::router::parse_id(&copy);
    change(
        &env,
        c.cluster,
        c.proc,
        crate::common::NOW,
        tern::queue::Change::Set(vec![
            ("Managed".into(), Expr::string("External")),
            (
                "GridJobId".into(),
                Expr::string(&format!("condor {} local 1.0", remote.display())),
            ),
        ]),
    );
    env.run_ok("tern_rm", [&format!("{src}.0")]);
    env.run_ok("tern_job_router", [] as [&str; 0]);
    env.run_ok("tern_gridmanager", [crate::common::real_user()]);
    assert_eq!(
        remote_history_status(&env, &remote, "1.0").as_deref(),
        Some("3"),
        "the job there was not removed"
    );
    assert_eq!(env.status(&copy), None, "{}", env.diagnosis());
}

/// The transaction log of the queue in `spool`, replayed, against the
/// queue: the first difference, if any.
fn log_disagrees(spool: &std::path::Path) -> Option<String> {
    use crate::common::replay::{Replay, queue_view};
    let q = tern::queue::Queue::open(spool, false).unwrap().unwrap();
    let mut replay = Replay::default();
    if let Err(e) = replay.apply(&q.log_since(0).unwrap()) {
        return Some(e);
    }
    let (queue, _) = queue_view(&q).unwrap();
    replay
        .view()
        .unwrap()
        .difference(&queue, ("the log", "the queue"))
}

/// Found as a transaction log that no longer replayed to the queue ("sets
/// BytesRecvd of missing ad"): the router read a source, ran its hooks,
/// then mirrored the routed copy into the source from the row it had read,
/// but the user had removed the source meanwhile; the write logged the
/// changes of a job that had left (and, from the old ad, would have undone
/// anything changed meanwhile). Here the router's own UPDATE_JOB_INFO hook
/// removes the source, right between the read and the write.
#[test]
fn the_router_never_mirrors_into_a_source_removed_while_its_hooks_ran() {
    use tern::classad::Expr;
    let (env, _remote) = routing_env();
    let fake = fake_job().display().to_string();
    let (src, copy) = routed_source(&env, &fake);
    // The copy runs (as its gridmanager would report it): there is
    // something to mirror.
    let c = crate::common::router::parse_id(&copy);
    change(
        &env,
        c.cluster,
        c.proc,
        crate::common::NOW,
        tern::queue::Change::Set(vec![("JobStatus".into(), Expr::int(2))]),
    );
    let rm = std::path::Path::new(crate::common::bin("tern_q")).with_file_name("tern_rm");
    let vars: String = env
        .vars()
        .iter()
        .map(|(n, v)| format!("{n}='{v}' "))
        .collect();
    let hook = env.write(
        "update.sh",
        &format!(
            "#!/bin/sh\ncat > /dev/null\nenv -i {vars}{} {src}.0 > /dev/null\n",
            rm.display()
        ),
    );
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let env = env
        .knob("JOB_ROUTER_HOOK_KEYWORD", "H")
        .knob("H_HOOK_UPDATE_JOB_INFO", hook.to_str().unwrap());
    env.run_ok("tern_job_router", [] as [&str; 0]);
    assert_eq!(
        env.status(&format!("{src}.0")),
        None,
        "the hook removed the source"
    );
    assert_eq!(log_disagrees(&env.spool()), None);
}

/// Found as jobs that ran twice at once, the first run's shadow killed
/// while it was starting the job: its kill-log record shows the lock with
/// the shadow's pid and no job group yet, and the job's process, still
/// named tern_shadow, not yet executed. The pass kills what a dead shadow
/// left by the group the lock records; with none recorded it killed
/// nothing, requeued the job, and the orphan ran on beside the next run.
/// The job is in the dead shadow's session, which the pass now kills. A
/// test cannot place a kill inside a spawn; it builds what one leaves: a
/// session whose leader (the shadow) is gone, a process left in it, and
/// the lock naming the leader and no group.
#[test]
fn a_shadow_killed_while_it_starts_its_job_leaves_no_job_running() {
    use std::io::BufRead;
    use std::os::unix::process::CommandExt;
    let env = RunEnv::new().knob("NEGOTIATE_ON_SUBMIT", "false");
    // A job no slot can run, so the passes only reconcile it.
    let c = env.submit(
        "job.sub",
        "executable = /bin/sleep\narguments = 300\nrequirements = TARGET.Memory < 0\nqueue\n",
    );
    let mut shadow = std::process::Command::new("sh");
    shadow
        .args(["-c", "sleep 300 & echo $!; echo $$; read x"])
        // In the test directory, so that the environment's cleanup finds
        // the orphan if the pass leaves it.
        .current_dir(env.path(""))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    // SAFETY: setsid is async-signal-safe.
    unsafe {
        shadow.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let mut shadow = shadow.spawn().unwrap();
    let mut lines = std::io::BufReader::new(shadow.stdout.take().unwrap()).lines();
    let mut next = || -> i32 { lines.next().unwrap().unwrap().parse().unwrap() };
    let (orphan, leader) = (next(), next());
    let started = tern::sys::pids::start_time(leader).unwrap();
    drop(shadow.stdin.take());
    shadow.wait().unwrap();
    let lock = env.spool().join("shadow").join(format!("{c}.0.lock"));
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    std::fs::write(&lock, format!("{leader}\n\n{started}\n")).unwrap();
    crate::common::queue::set_status(&env, c, 0, 2);
    env.negotiate();
    assert_eq!(env.status(&format!("{c}.0")), Some(1), "requeued");
    assert!(
        crate::common::wait_until(TIMEOUT, || !crate::common::alive(orphan)),
        "the job the dead shadow left is still running"
    );
}
