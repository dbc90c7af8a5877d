//! The job router: tern_job_router's passes on a pinned clock (route
//! order, throttles, mirroring both ways, holds, removals, orphans, hooks,
//! crash safety) and tern_router_q / tern_router_history / tern_router_rm
//! compared line for line with their expected output.

use std::time::Duration;

use crate::common::queue::db;
use crate::common::router::{
    ad, attr, copies_of, parse_id, pass, route_jobs, set, status, text, with_config,
};
use crate::common::{NOW, Run, TestEnv, assert_job_events, check_logs_with_htcondor, real_user};
use tern::queue::JobId;

fn id(c: i64, p: i64) -> JobId {
    JobId {
        cluster: c,
        proc: p,
    }
}

/// Two vanilla routes (the copies run under tern's own shadow) and one to
/// Slurm that only ProcId 0 matches.
const ROUTES: &str = r#"
JOB_ROUTER_ROUTE_NAMES = Slurm Local
JOB_ROUTER_ROUTE_Slurm @=end
  REQUIREMENTS ProcId == 0
  GridResource = "batch slurm"
@end
JOB_ROUTER_ROUTE_Local @=end
  UNIVERSE vanilla
  REQUIREMENTS true
  SET Foo 3
@end
"#;

#[test]
fn jobs_take_the_first_matching_route_and_the_source_is_claimed() {
    let env = with_config(ROUTES);
    let routed = route_jobs(&env, 3, "");
    assert_eq!(
        routed,
        vec![
            (id(1, 0), Some(id(2, 0))),
            (id(1, 1), Some(id(3, 0))),
            (id(1, 2), Some(id(4, 0)))
        ]
    );
    let src = id(1, 0);
    assert_eq!(text(&env, src, "Managed").as_deref(), Some("External"));
    assert_eq!(
        text(&env, src, "ManagedManager").as_deref(),
        Some("jobrouter")
    );
    let slurm = id(2, 0);
    for (a, v) in [
        ("RoutedFromJobId", "\"1.0\""),
        ("RoutedBy", "\"jobrouter\""),
        ("RouteName", "\"Slurm\""),
        ("JobUniverse", "9"),
        ("Remote_JobUniverse", "5"),
        ("GridResource", "\"batch slurm\""),
        ("JobStatus", "1"),
        ("LeaveJobInQueue", "JobStatus == 4"),
    ] {
        assert_eq!(attr(&env, slurm, a).as_deref(), Some(v), "{a}");
    }
    // The copy is nobody's managed job and has no log of its own.
    assert_eq!(attr(&env, slurm, "Managed"), None);
    assert_eq!(attr(&env, slurm, "UserLog"), None);
    let local = id(3, 0);
    assert_eq!(attr(&env, local, "JobUniverse").as_deref(), Some("5"));
    assert_eq!(attr(&env, local, "Foo").as_deref(), Some("3"));
    assert_eq!(text(&env, local, "RouteName").as_deref(), Some("Local"));
    // A second pass routes nothing again.
    let r = pass(&env, NOW + 10);
    assert_eq!(r.stdout, "");
    assert_eq!(copies_of(&env, src), vec![slurm]);
}

/// spec 6.4's job_router_xform: four vanilla routes, the first matching
/// one wins, a pre-route transform applies to every copy and expands a
/// configuration macro, the originals keep their attributes and never run.
#[test]
fn job_router_xform_route_order_and_pre_route_transform() {
    let env = with_config(
        r#"
COLLECTOR_NAME = jira902
JOB_ROUTER_ROUTE_NAMES = Production1 Analysis3 Production2 Analysis4
JOB_ROUTER_PRE_ROUTE_TRANSFORM_NAMES = Base
JOB_ROUTER_TRANSFORM_Base @=end
  DELETE RouteMe
  SET RoutedJob true
  SET Requirements true
  SET CollHost "$(COLLECTOR_NAME)"
@end
JOB_ROUTER_ROUTE_Production1 @=end
  UNIVERSE Vanilla
  REQUIREMENTS RouteMe && ProcId % 2 == 1
  SET Route "P1"
@end
JOB_ROUTER_ROUTE_Analysis3 @=end
  UNIVERSE VANILLA
  REQUIREMENTS RouteMe && ProcId % 2 == 0
  SET Route "A3"
@end
JOB_ROUTER_ROUTE_Production2 @=end
  UNIVERSE 5
  REQUIREMENTS RouteMe && ProcId % 2 == 1
  SET Route "P2"
@end
JOB_ROUTER_ROUTE_Analysis4 @=end
  UNIVERSE vanilla
  REQUIREMENTS RouteMe && ProcId % 2 == 0
  SET Route "A4"
@end
"#,
    );
    let routed = route_jobs(&env, 4, "+RouteMe = true");
    for (src, dest) in routed {
        let dest = dest.expect("every job is routed");
        let want = if src.proc % 2 == 1 {
            "Production1"
        } else {
            "Analysis3"
        };
        assert_eq!(text(&env, dest, "RouteName").as_deref(), Some(want));
        assert_eq!(attr(&env, dest, "RouteMe"), None);
        assert_eq!(attr(&env, dest, "RoutedJob").as_deref(), Some("true"));
        assert_eq!(attr(&env, dest, "Requirements").as_deref(), Some("true"));
        assert_eq!(text(&env, dest, "CollHost").as_deref(), Some("jira902"));
        assert_eq!(attr(&env, dest, "JobUniverse").as_deref(), Some("5"));
        assert_eq!(attr(&env, src, "RouteMe").as_deref(), Some("true"));
        assert_eq!(text(&env, src, "Managed").as_deref(), Some("External"));
    }
    // The originals are not matched by a negotiation pass; the copies are.
    let r = env.run("tern_negotiate", ["-dry-run"]);
    assert_eq!(r.code, 0, "{r:?}");
    for p in 0..4 {
        assert!(!r.stdout.contains(&format!("1.{p} ")), "{}", r.stdout);
    }
}

#[test]
fn max_idle_jobs_and_max_jobs_limit_a_route_and_the_rest_wait() {
    let env = with_config(
        r#"
JOB_ROUTER_ROUTE_NAMES = A
JOB_ROUTER_ROUTE_A @=end
  UNIVERSE vanilla
  REQUIREMENTS true
  MaxIdleJobs = 2
  MaxJobs = 3
@end
"#,
    );
    let routed = route_jobs(&env, 5, "");
    let n = routed.iter().filter(|(_, d)| d.is_some()).count();
    assert_eq!(n, 2, "MaxIdleJobs 2: {routed:?}");
    // One copy starts running: one more idle copy is allowed.
    set(&env, routed[0].1.unwrap(), NOW + 5, &[("JobStatus", "2")]);
    let r = pass(&env, NOW + 10);
    assert!(r.stdout.contains("job 1.2: routed to A"), "{}", r.stdout);
    // Now 3 jobs: MaxJobs.
    set(&env, routed[1].1.unwrap(), NOW + 15, &[("JobStatus", "2")]);
    let r = pass(&env, NOW + 20);
    assert!(!r.stdout.contains("routed to A"), "{}", r.stdout);
    let dry = env.run("tern_job_router", ["-dry-run", "1.3"]);
    assert_eq!(
        dry.stdout,
        "job 1.3: a candidate for routing\nroute A: matches but does not accept: 3 jobs, MaxJobs is 3\n"
    );
}

#[test]
fn failures_throttle_a_route_on_the_simulated_clock() {
    let env = with_config(
        r#"
JOB_ROUTER_ROUTE_NAMES = A
JOB_ROUTER_ROUTE_A @=end
  UNIVERSE vanilla
  REQUIREMENTS true
  MaxIdleJobs = 100
  FailureRateThreshold = 0.001
@end
"#,
    );
    let routed = route_jobs(&env, 8, "");
    assert!(routed.iter().all(|(_, d)| d.is_some()));
    // Every copy is removed (a black hole): each counts as a failure and
    // its source is routed again.
    let r = env.run("tern_router_rm", ["-route", "A"]);
    assert_eq!(r.code, 0, "{r:?}");
    let r = pass(&env, NOW + 60);
    assert_eq!(r.stdout.matches("(failure)").count(), 8, "{}", r.stdout);
    // At the window's end (600 s), 16 failures in 600 s = 0.027/s >
    // 0.001 with no job left on the route: ratio 16/(16+0+0) = 1, so the
    // throttle is 600 * 0.001 / 1 = 0.6 jobs per window: one job goes.
    env.run("tern_router_rm", ["-route", "A"]);
    let r = pass(&env, NOW + 600);
    assert!(
        r.stdout
            .contains("route A: throttle now 0.600/600 jobs/sec"),
        "{}",
        r.stdout
    );
    assert_eq!(r.stdout.matches("routed to A").count(), 1, "{}", r.stdout);
    let dry = env.run("tern_job_router", ["-dry-run", "1.7"]);
    assert_eq!(
        dry.stdout,
        "job 1.7: a candidate for routing\n\
         route A: matches but does not accept: throttled: 1 jobs routed in this window, throttle 0.600/600 jobs/sec\n"
    );
    // The next window: the one copy succeeds, none fail: the throttle
    // grows fivefold (a = 3*1/1 + 2) to 3 jobs per window.
    let copy = crate::common::router::copies_of(&env, id(1, 0));
    let copy = copy.first().copied().expect("1.0 routed again");
    set(&env, copy, NOW + 700, &[("JobStatus", "4")]);
    let r = pass(&env, NOW + 1200);
    assert!(
        r.stdout.contains("route A: throttle now 3/600 jobs/sec"),
        "{}",
        r.stdout
    );
    assert_eq!(r.stdout.matches("routed to A").count(), 3, "{}", r.stdout);
}

#[test]
fn the_source_mirrors_its_copy_to_completion() {
    let env = with_config(ROUTES);
    let routed = route_jobs(&env, 2, "");
    let (src, dest) = (routed[1].0, routed[1].1.unwrap());
    set(
        &env,
        dest,
        NOW + 10,
        &[("JobStatus", "2"), ("JobStartDate", "1700000010")],
    );
    pass(&env, NOW + 20);
    assert_eq!(status(&env, src), 2);
    assert_eq!(
        attr(&env, src, "JobStartDate").as_deref(),
        Some("1700000010")
    );
    set(
        &env,
        dest,
        NOW + 30,
        &[
            ("JobStatus", "5"),
            ("HoldReason", "\"site full\""),
            ("HoldReasonCode", "26"),
            ("HoldReasonSubCode", "2"),
        ],
    );
    pass(&env, NOW + 40);
    assert_eq!(status(&env, src), 5);
    assert_eq!(
        attr(&env, src, "HoldCopiedFromTargetJob").as_deref(),
        Some("true")
    );
    assert_eq!(text(&env, src, "HoldReason").as_deref(), Some("site full"));
    assert_eq!(attr(&env, src, "NumSystemHolds").as_deref(), Some("1"));
    set(&env, dest, NOW + 50, &[("JobStatus", "2")]);
    pass(&env, NOW + 60);
    assert_eq!(status(&env, src), 2);
    assert_eq!(attr(&env, src, "HoldCopiedFromTargetJob"), None);
    set(
        &env,
        dest,
        NOW + 70,
        &[
            ("JobStatus", "4"),
            ("ExitCode", "3"),
            ("ExitBySignal", "false"),
            ("RemoteWallClockTime", "60.0"),
            ("RemoteUserCpu", "12.0"),
            ("CompletionDate", "1700000070"),
        ],
    );
    let r = pass(&env, NOW + 80);
    assert_eq!(
        r.stdout,
        "job 1.1: Completed as its routed copy 3.0\n\
         job 1.1: routed copy 3.0 completed (success)\n\
         job 1.1: retired from route Local (success)\n"
    );
    // Both went to history: the source completed with the copy's exit.
    assert_eq!(status(&env, src), 0);
    assert_eq!(status(&env, dest), 0);
    let h = env.run(
        "tern_history",
        [
            "-af",
            "ClusterId",
            "ProcId",
            "JobStatus",
            "ExitCode",
            "Managed",
            "RouteName",
        ],
    );
    assert_eq!(
        h.stdout,
        "3 0 4 3 undefined Local\n1 1 4 3 ScheddDone undefined\n"
    );
    let events = std::fs::read_to_string(env.path("jobs.log")).unwrap();
    let kinds: Vec<&str> = events
        .lines()
        .filter(|l| l.contains("(001.001.000)"))
        .map(|l| &l[..3])
        .collect();
    // submit, execute, held, released, terminated
    assert_eq!(kinds, vec!["000", "001", "012", "013", "005"]);
    assert!(events.contains("Job executing on host: 3.0"), "{events}");
    assert!(
        events.contains("(1) Normal termination (return value 3)"),
        "{events}"
    );
    assert!(
        events.contains("\tsite full\n\tCode 26 Subcode 2"),
        "{events}"
    );
}

// A copy that started and ended between two passes (a short job on Slurm,
// polled every second, against a router run from cron) was never seen
// running: the source's log once went from submit straight to terminate.
#[test]
fn a_copy_that_ran_between_passes_still_gives_the_source_an_execute_event() {
    let env = with_config(ROUTES);
    let routed = route_jobs(&env, 2, "");
    let (src, dest) = (routed[1].0, routed[1].1.unwrap());
    set(
        &env,
        dest,
        NOW + 10,
        &[
            ("JobStatus", "4"),
            ("ExitCode", "3"),
            ("JobStartDate", "1700000005"),
            ("NumJobStarts", "1"),
            ("CompletionDate", "1700000010"),
        ],
    );
    pass(&env, NOW + 20);
    assert_eq!(status(&env, src), 0, "the source did not complete");
    let log = env.path("jobs.log");
    assert_job_events(&log, &src.to_string(), [0, 1, 5]);
    let events = std::fs::read_to_string(&log).unwrap();
    assert!(events.contains("Job executing on host: 3.0"), "{events}");
    check_logs_with_htcondor(&[log]);
}

/// A removed copy sends its source back to Idle (routed again, a failure);
/// a held or removed source removes its copy (interrupted, neither).
#[test]
fn removals_and_holds_go_both_ways() {
    let env = with_config(ROUTES);
    let routed = route_jobs(&env, 3, "");
    let (s0, d0) = (routed[0].0, routed[0].1.unwrap());
    let (s1, d1) = (routed[1].0, routed[1].1.unwrap());
    let (s2, d2) = (routed[2].0, routed[2].1.unwrap());
    // The copy of 1.0 runs (its gridmanager manages it), then is removed
    // by someone.
    set(
        &env,
        d0,
        NOW + 5,
        &[("JobStatus", "2"), ("Managed", "\"External\"")],
    );
    pass(&env, NOW + 6);
    assert_eq!(status(&env, s0), 2);
    // Marked removed (it runs), then taken out.
    let r = env.run("tern_rm", [&d0.to_string()]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(status(&env, d0), 3);
    let r = pass(&env, NOW + 8);
    assert_eq!(r.stdout, "", "a copy being removed is waited for");
    let r = env.run("tern_rm", ["-forcex", &d0.to_string()]);
    assert_eq!(r.code, 0, "{r:?}");
    let r = pass(&env, NOW + 10);
    assert!(
        r.stdout.starts_with(&format!(
            "job {s0}: routed copy {d0} is gone (removed); the job is routed again\njob {s0}: retired from route Slurm (failure)\n"
        )),
        "{}",
        r.stdout
    );
    // Back to Idle (with an evict event, it was running) and routed anew.
    let again = copies_of(&env, s0);
    assert_eq!(again.len(), 1);
    assert_ne!(again[0], d0);
    assert_eq!(text(&env, s0, "RoutedToJobId"), Some(again[0].to_string()));
    // The user holds 1.1: its copy is removed, the hold stays.
    env.run("tern_hold", [&s1.to_string()]);
    let r = pass(&env, NOW + 20);
    assert!(
        r.stdout.contains(&format!(
            "job {s1}: source was held; its routed copy is removed"
        )),
        "{}",
        r.stdout
    );
    assert_eq!(status(&env, d1), 0);
    assert_eq!(status(&env, s1), 5);
    assert_eq!(text(&env, s1, "Managed").as_deref(), Some("Schedd"));
    // The user removes 1.2: so goes its copy.
    env.run("tern_rm", [&s2.to_string()]);
    let r = pass(&env, NOW + 30);
    assert!(
        r.stdout.contains(&format!(
            "job {s2}: source is gone; its routed copy is removed"
        )),
        "{}",
        r.stdout
    );
    assert_eq!(status(&env, d2), 0);
    let h = env.run(
        "tern_history",
        ["-af", "ClusterId", "ProcId", "RemoveReason"],
    );
    assert!(
        h.stdout
            .contains(&format!("{} {} JobRouter aborted job", d1.cluster, d1.proc)),
        "{}",
        h.stdout
    );
    let events = std::fs::read_to_string(env.path("jobs.log")).unwrap();
    assert!(
        events.contains("004 (001.000.000)"),
        "an evict event for 1.0: {events}"
    );
    // The held source released is routed again.
    env.run("tern_release", [&s1.to_string()]);
    let r = pass(&env, NOW + 40);
    assert!(
        r.stdout.contains(&format!("job {s1}: routed to")),
        "{}",
        r.stdout
    );
}

#[test]
fn orphans_are_adopted_removed_or_yielded() {
    let env = with_config(ROUTES);
    let routed = route_jobs(&env, 3, "");
    let conn = db(&env);
    // The router lost its rows (as after a restore): the copies whose
    // sources exist are adopted.
    conn.execute("DELETE FROM router_jobs", []).unwrap();
    let r = pass(&env, NOW + 10);
    assert_eq!(
        r.stdout,
        "job 1.0: adopted its routed copy 2.0 on route Slurm\n\
         job 1.1: adopted its routed copy 3.0 on route Local\n\
         job 1.2: adopted its routed copy 4.0 on route Local\n"
    );
    // A copy whose source is gone (deleted around the tools) is removed.
    conn.execute("DELETE FROM router_jobs WHERE src_proc = 2", [])
        .unwrap();
    conn.execute("DELETE FROM procs WHERE cluster = 1 AND proc = 2", [])
        .unwrap();
    let r = pass(&env, NOW + 20);
    assert_eq!(r.stdout, "job 4.0: orphaned routed copy removed\n");
    let h = env.run("tern_history", ["-af", "ClusterId", "RemoveReason"]);
    assert_eq!(h.stdout, "4 JobRouter orphan\n");
    // A source marked as ours with no copy is given back and routed again.
    conn.execute("DELETE FROM router_jobs WHERE src_proc = 1", [])
        .unwrap();
    conn.execute("DELETE FROM procs WHERE cluster = 3", [])
        .unwrap();
    conn.execute("DELETE FROM clusters WHERE cluster = 3", [])
        .unwrap();
    let r = pass(&env, NOW + 30);
    assert!(
        r.stdout
            .starts_with("job 1.1: managed by us with no routed copy; yielded\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("job 1.1: routed to Local as job 5.0"),
        "{}",
        r.stdout
    );
    let _ = routed;
}

/// Kill tern_job_router at many instants of a pass over many jobs: after
/// a final pass, every job has exactly one routed copy, and every copy
/// belongs to its source.
#[test]
fn killing_the_router_at_any_instant_neither_loses_nor_doubles_a_job() {
    let env = with_config(
        r#"
JOB_ROUTER_ROUTE_NAMES = A
JOB_ROUTER_ROUTE_A @=end
  UNIVERSE vanilla
  REQUIREMENTS true
  MaxIdleJobs = -1
  MaxJobs = 1000
@end
"#,
    );
    env.write("many.sub", "executable = /bin/true\nqueue 300\n");
    assert_eq!(env.run("tern_submit", ["many.sub"]).code, 0);
    let mut rng = crate::common::rng::Rng::new(14);
    for round in 0..12 {
        let mut child = env
            .command("tern_job_router")
            .env("TERN_NOW", (NOW + round).to_string())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.below(60_000)));
        let _ = child.kill();
        let _ = child.wait();
    }
    pass(&env, NOW + 100);
    let conn = db(&env);
    let copies: i64 = conn
        .query_row("SELECT count(*) FROM procs WHERE cluster > 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(copies, 300);
    let rows: i64 = conn
        .query_row("SELECT count(*) FROM router_jobs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 300);
    for p in 0..300 {
        let src = id(1, p);
        let c = copies_of(&env, src);
        assert_eq!(c.len(), 1, "job {src}: {c:?}");
        assert_eq!(text(&env, src, "RoutedToJobId"), Some(c[0].to_string()));
    }
}

/// A fake hook: a shell script in the test directory.
fn hook(env: &TestEnv, name: &str, body: &str) -> String {
    let p = env.write(name, &format!("#!/bin/sh\n{body}\n"));
    let mut perm = std::fs::metadata(&p).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&p, perm).unwrap();
    p.to_str().unwrap().to_string()
}

fn hooked(env_hooks: &[(&str, &str, &str)]) -> TestEnv {
    let env = TestEnv::with_spool();
    let mut cfg = String::from(
        "JOB_ROUTER_HOOK_KEYWORD = TEST\nJOB_ROUTER_HOOK_TIMEOUT = 5\nJOB_ROUTER_ROUTE_NAMES = A\n\
         JOB_ROUTER_ROUTE_A @=end\n  UNIVERSE vanilla\n  REQUIREMENTS true\n@end\n",
    );
    for (knob, file, body) in env_hooks {
        let path = hook(&env, file, body);
        cfg.push_str(&format!("TEST_HOOK_{knob} = {path}\n"));
    }
    let path = env.write("router.config", &cfg);
    env.var("TERN_CONFIG", Some(path.to_str().unwrap()))
}

#[test]
fn translate_hook_gets_the_route_and_the_job_and_its_output_is_the_copy() {
    let env = hooked(&[(
        "TRANSLATE_JOB",
        "translate",
        "cat > translate.in\necho 'Cmd = \"/bin/echo\"'\necho 'Owner = \"'$(id -un)'\"'\necho 'JobUniverse = 5'\necho 'FromHook = 1'",
    )]);
    let routed = route_jobs(&env, 1, "+Tag = 7");
    let dest = routed[0].1.expect("routed");
    let input = std::fs::read_to_string(env.path("translate.in")).unwrap();
    let (route, job) = input.split_once("\n------\n").unwrap();
    assert_eq!(route, "[ Name = \"A\"; TargetUniverse = 5 ]");
    assert!(job.contains("Tag = 7\n"), "{job}");
    assert_eq!(attr(&env, dest, "FromHook").as_deref(), Some("1"));
    assert_eq!(text(&env, dest, "Cmd").as_deref(), Some("/bin/echo"));
    // The hook's ad replaced the copy: the job's own attributes are gone.
    assert_eq!(attr(&env, dest, "Tag"), None);
    assert_eq!(text(&env, dest, "RouteName").as_deref(), Some("A"));
}

/// A hook runs in its job's Iwd, not wherever the router was started;
/// in `/` when the Iwd is gone.
#[test]
fn a_hook_runs_in_the_jobs_iwd_else_in_the_root_directory() {
    let env = hooked(&[(
        "TRANSLATE_JOB",
        "translate",
        "pwd >> \"$TERN_TEST_PWD\"\nsed '1,/^------$/d'",
    )]);
    let seen = env.path("pwd.txt");
    let env = env.var("TERN_TEST_PWD", Some(seen.to_str().unwrap()));
    for d in ["iwd", "gone", "elsewhere"] {
        std::fs::create_dir(env.path(d)).unwrap();
    }
    for d in ["iwd", "gone"] {
        env.write(
            &format!("{d}.sub"),
            &format!(
                "executable = /bin/true\ninitialdir = {}\nqueue\n",
                env.path(d).display()
            ),
        );
        assert_eq!(env.run("tern_submit", [format!("{d}.sub")]).code, 0);
    }
    std::fs::remove_dir(env.path("gone")).unwrap();
    let r = Run::from(
        env.command("tern_job_router")
            .current_dir(env.path("elsewhere"))
            .env("TERN_NOW", NOW.to_string())
            .arg("-verbose")
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0, "{r:?}");
    let pwd = std::fs::read_to_string(&seen).unwrap();
    let mut lines: Vec<&str> = pwd.lines().collect();
    lines.sort();
    let iwd = env.path("iwd");
    assert_eq!(lines, ["/", iwd.to_str().unwrap()], "{r:?}");
}

#[test]
fn a_bad_hook_line_fails_the_whole_output_and_the_job_waits() {
    let env = hooked(&[(
        "TRANSLATE_JOB",
        "translate",
        "cat >/dev/null\necho 'A = 1'\necho 'not an attribute'",
    )]);
    let routed = route_jobs(&env, 1, "");
    assert_eq!(routed[0].1, None);
    let log = std::fs::read_to_string(env.spool().join("JobRouterLog")).unwrap();
    assert!(
        log.contains("job 1.0: hook TRANSLATE_JOB output refused: ")
            && log.contains("output line 2: not 'Attr = value': not an attribute"),
        "{log}"
    );
    assert_eq!(text(&env, id(1, 0), "Managed"), None);
}

#[test]
fn a_failing_finalize_hook_routes_the_job_again_and_cleanup_retries() {
    let env = hooked(&[
        ("JOB_FINALIZE", "finalize", "cat >/dev/null\nexit 1"),
        (
            "JOB_CLEANUP",
            "cleanup",
            "cat >/dev/null\n[ -e cleanup.ok ] || exit 1",
        ),
    ]);
    let routed = route_jobs(&env, 1, "");
    let (src, dest) = (routed[0].0, routed[0].1.unwrap());
    set(
        &env,
        dest,
        NOW + 5,
        &[("JobStatus", "4"), ("ExitCode", "0")],
    );
    let r = pass(&env, NOW + 10);
    assert!(
        r.stdout
            .contains("job 1.0: JOB_FINALIZE failed; the job is routed again"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("hook JOB_CLEANUP failed"), "{}", r.stdout);
    // Cleanup not done: the copy is still there, the job waits.
    assert_eq!(status(&env, dest), 4);
    std::fs::write(env.path("cleanup.ok"), "").unwrap();
    let r = pass(&env, NOW + 20);
    assert!(
        r.stdout
            .contains("job 1.0: retired from route A (to be routed again)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("job 1.0: routed to A as job 3.0"),
        "{}",
        r.stdout
    );
    assert_eq!(status(&env, src), 1);
}

#[test]
fn finalize_output_is_merged_into_the_source() {
    let env = hooked(&[(
        "JOB_FINALIZE",
        "finalize",
        "cat > finalize.in\necho 'Finalized = true'",
    )]);
    let routed = route_jobs(&env, 1, "leave_in_queue = true");
    let (src, dest) = (routed[0].0, routed[0].1.unwrap());
    set(
        &env,
        dest,
        NOW + 5,
        &[("JobStatus", "4"), ("ExitCode", "0")],
    );
    pass(&env, NOW + 10);
    let input = std::fs::read_to_string(env.path("finalize.in")).unwrap();
    assert_eq!(input.matches("\n------\n").count(), 1, "{input}");
    assert!(input.contains("RoutedToJobId = \"2.0\""), "{input}");
    // The source stays (LeaveJobInQueue), completed and finalized.
    assert_eq!(status(&env, src), 4);
    assert_eq!(attr(&env, src, "Finalized").as_deref(), Some("true"));
    assert_eq!(text(&env, src, "Managed").as_deref(), Some("ScheddDone"));
}

#[test]
fn unusable_routes_are_named_with_their_reason() {
    let env = with_config(
        r#"
JOB_ROUTER_ROUTE_NAMES = NoReq Missing Grid Good
JOB_ROUTER_ROUTE_NoReq @=end
  UNIVERSE vanilla
@end
JOB_ROUTER_ROUTE_Grid @=end
  REQUIREMENTS true
@end
JOB_ROUTER_ROUTE_Good @=end
  UNIVERSE vanilla
  REQUIREMENTS true
@end
"#,
    );
    let routed = route_jobs(&env, 1, "");
    assert!(routed[0].1.is_some());
    let log = std::fs::read_to_string(env.spool().join("JobRouterLog")).unwrap();
    let lines: Vec<&str> = log.lines().map(|l| &l[18..]).collect();
    assert_eq!(
        lines,
        vec![
            "route NoReq is not used: Missing Requirements (and JOB_ROUTER_SOURCE_JOB_CONSTRAINT is not set)",
            "route Missing is not used: JOB_ROUTER_ROUTE_Missing is not defined",
            "route Grid is not used: routes to the grid universe but sets no GridResource",
            "job 1.0: routed to Good as job 2.0",
        ]
    );
    let dry = env.run("tern_job_router", ["-dry-run", "1.0"]);
    assert_eq!(
        dry.stderr,
        "tern_job_router: warning: route NoReq is not used: Missing Requirements (and JOB_ROUTER_SOURCE_JOB_CONSTRAINT is not set)\n\
         tern_job_router: warning: route Missing is not used: JOB_ROUTER_ROUTE_Missing is not defined\n\
         tern_job_router: warning: route Grid is not used: routes to the grid universe but sets no GridResource\n"
    );
    assert_eq!(
        dry.stdout,
        "job 1.0: not a candidate: Managed is \"External\" (already managed)\n\
         job 1.0: managed on route Good as job 2.0\n\
         route Good: matches and accepts: the job would be routed here\n\
         route NoReq: not used: Missing Requirements (and JOB_ROUTER_SOURCE_JOB_CONSTRAINT is not set)\n\
         route Missing: not used: JOB_ROUTER_ROUTE_Missing is not defined\n\
         route Grid: not used: routes to the grid universe but sets no GridResource\n"
    );
}

#[test]
fn old_router_entries_are_read_when_asked_for() {
    let env = with_config(
        r#"
JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES = true
JOB_ROUTER_DEFAULTS = [ requirements = target.WantRoute =?= true; MaxIdleJobs = 10; set_Routed = true; ]
JOB_ROUTER_ENTRIES = [ Name = "Old"; GridResource = "batch slurm"; ]
"#,
    );
    let routed = route_jobs(&env, 2, "+WantRoute = true");
    for (_, d) in routed {
        let d = d.expect("routed");
        assert_eq!(text(&env, d, "RouteName").as_deref(), Some("Old"));
        assert_eq!(
            text(&env, d, "GridResource").as_deref(),
            Some("batch slurm")
        );
        assert_eq!(attr(&env, d, "Routed").as_deref(), Some("true"));
    }
}

/// Routed copies in several states on two routes, and one plain job.
fn routed_queue() -> TestEnv {
    let env = with_config(
        r#"
JOB_ROUTER_ROUTE_NAMES = Site2 Site1
JOB_ROUTER_ROUTE_Site2 @=end
  REQUIREMENTS ProcId < 2
  GridResource = "condor /elsewhere/spool"
  MaxIdleJobs = 10
@end
JOB_ROUTER_ROUTE_Site1 @=end
  REQUIREMENTS true
  GridResource = "batch slurm"
  MaxIdleJobs = 10
@end
"#,
    );
    let routed = route_jobs(&env, 5, "");
    set(&env, routed[0].1.unwrap(), NOW + 1, &[("JobStatus", "2")]);
    set(&env, routed[2].1.unwrap(), NOW + 1, &[("JobStatus", "2")]);
    set(&env, routed[3].1.unwrap(), NOW + 1, &[("JobStatus", "5")]);
    env
}

#[test]
fn router_q_summary_is_htcondors_layout() {
    let env = routed_queue();
    let r = env.run("tern_router_q", ["-S"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            0,
            "   JOBS ST Route                GridResource\n\
             \x20     1  H Site1                batch slurm\n\
             \x20     1  I Site1                batch slurm\n\
             \x20     1  R Site1                batch slurm\n\
             \x20     1  I Site2                condor /elsewhere/spool\n\
             \x20     1  R Site2                condor /elsewhere/spool\n",
            ""
        )
    );
    let r = env.run("tern_router_q", ["-R"]);
    assert_eq!(
        r.stdout,
        "   JOBS ST Route                GridResource\n\
         \x20     1  R Site1                batch slurm\n\
         \x20     1  R Site2                condor /elsewhere/spool\n"
    );
    let r = env.run("tern_router_q", ["-I", "-route", "Site1"]);
    assert_eq!(
        r.stdout,
        "   JOBS ST Route                GridResource\n\
         \x20     1  H Site1                batch slurm\n\
         \x20     1  I Site1                batch slurm\n"
    );
    let r = env.run("tern_router_q", ["-H"]);
    assert_eq!(
        r.stdout,
        "   JOBS ST Route                GridResource\n\
         \x20     1  H Site1                batch slurm\n"
    );
}

// tern_router_q -S read the jobs' rows, then each one's cluster ad, one
// statement at a time: a routed copy that completed in between (its
// cluster gone) failed it with "cluster N has no cluster ad".
#[test]
fn router_q_summary_reads_one_snapshot_while_copies_leave() {
    let env = TestEnv::with_spool();
    let clusters: Vec<i64> = {
        let mut q = tern::queue::Queue::open(&env.spool(), true)
            .unwrap()
            .unwrap();
        (0..300)
            .map(|_| {
                crate::common::queue::submit_text(
                    &mut q,
                    "executable = /bin/true\n+RouteName = \"R\"\nqueue\n",
                    &real_user(),
                    NOW,
                )
                .unwrap()
            })
            .collect()
    };
    let spool = env.spool();
    let leaving = std::thread::spawn(move || {
        let mut q = tern::queue::Queue::open(&spool, false).unwrap().unwrap();
        for c in clusters {
            let sel = tern::queue::Selection {
                jobs: vec![id(c, 0)],
                ..Default::default()
            };
            q.modify(&sel, NOW, |_, _| tern::queue::Change::Leave { set: vec![] })
                .unwrap();
        }
    });
    let mut runs = 0;
    while !leaving.is_finished() || runs == 0 {
        let r = env.run("tern_router_q", ["-S"]);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "run {runs}");
        runs += 1;
    }
    leaving.join().unwrap();
}

#[test]
fn router_q_passes_the_rest_to_tern_q() {
    let env = routed_queue();
    let r = env.run(
        "tern_router_q",
        ["-af", "ClusterId", "RouteName", "JobStatus"],
    );
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "2 Site2 2\n3 Site2 1\n4 Site1 2\n5 Site1 5\n6 Site1 1\n")
    );
    let r = env.run(
        "tern_router_q",
        ["-site", "Site1", "-idle", "-af", "ClusterId"],
    );
    assert_eq!(r.stdout, "6\n");
    let r = env.run("tern_router_q", ["-held", "-af", "ClusterId"]);
    assert_eq!(r.stdout, "5\n");
    let r = env.run(
        "tern_router_q",
        ["-constraint", "ClusterId > 4", "-af", "ClusterId"],
    );
    assert_eq!(r.stdout, "5\n6\n");
    let r = env.run(
        "tern_router_q",
        ["-route", "Site2", "-json", "-attributes", "ClusterId"],
    );
    assert_eq!(
        r.stdout,
        "[\n{\n  \"ClusterId\": 2\n},\n{\n  \"ClusterId\": 3\n}\n]\n"
    );
    let r = env.run("tern_router_q", ["-constraint", "x +"]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            1,
            "tern_router_q: error: constraint 'x +': column 4: expected an expression, found end of input\n"
        )
    );
}

#[test]
fn router_rm_honours_every_router_option() {
    let env = routed_queue();
    // HTCondor would remove every held job here (only -held counts).
    let r = env.run("tern_router_rm", ["-held", "-route", "Site2"]);
    assert_ne!(r.code, 0, "no held job on Site2: {r:?}");
    assert_eq!(status(&env, id(5, 0)), 5);
    let r = env.run(
        "tern_router_rm",
        ["-idle", "-route", "Site1", "-reason", "gone"],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(status(&env, id(6, 0)), 0);
    assert_eq!(status(&env, id(3, 0)), 1, "Site2's idle job stays");
    let h = env.run("tern_history", ["-af", "ClusterId", "RemoveReason"]);
    assert_eq!(h.stdout, format!("6 gone (by user {})\n", real_user()));
    // The source goes back to Idle at the next pass.
    let r = pass(&env, NOW + 10);
    assert!(
        r.stdout
            .contains("job 1.4: retired from route Site1 (failure)"),
        "{}",
        r.stdout
    );
}

/// History rows of routed copies written directly: three routes, one with
/// no completed job and two with the same hours (HTCondor's script dies
/// on both).
fn history_queue() -> TestEnv {
    let env = TestEnv::with_spool();
    crate::common::queue::submit_sleeps(&env, 1, false);
    let conn = db(&env);
    let me = real_user();
    let rows: &[(i64, i64, i64, &str, f64, &str)] = &[
        // cluster, status, completed, route, wall clock, iwd
        (10, 4, NOW - 3600, "Slurm", 7200.0, "/home/a"),
        (11, 4, NOW - 1800, "Slurm", 5400.4, "/home/b"),
        (12, 3, NOW - 600, "Slurm", 30.0, "/home/c"),
        (13, 4, NOW - 500, "Other", 12600.0, "/home/d"),
        (14, 3, NOW - 400, "Dead", 0.0, "/home/e"),
        (15, 4, NOW - 200_000, "Slurm", 3600.0, "/home/f"),
        (16, 4, NOW - 300, "Twin", 12600.0, "/home/g"),
    ];
    for (c, st, done, route, wall, iwd) in rows {
        conn.execute(
            "INSERT INTO history_clusters (cluster, ad) VALUES (?1, ?2)",
            rusqlite::params![c, format!("[ ClusterId = {c}; Owner = \"{me}\"; RouteName = \"{route}\"; SUBMIT_Iwd = \"{iwd}\" ]")],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO history (cluster, proc, owner, status, completed, ad) VALUES (?1, 0, ?2, ?3, ?4, ?5)",
            rusqlite::params![
                c,
                me,
                st,
                done,
                format!("[ ProcId = 0; JobStatus = {st}; CompletionDate = {}; RemoteWallClockTime = {wall:.1} ]", if *st == 4 { *done } else { 0 })
            ],
        )
        .unwrap();
    }
    // A plain job in history is not counted.
    env.run("tern_rm", ["1.0"]);
    env
}

#[test]
fn router_history_summary_without_htcondors_crashes() {
    let env = history_queue();
    let r = env.run("tern_router_history", [] as [&str; 0]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            0,
            "Routed job history from 2023-11-13 22:13 to 2023-11-14 22:13\n\
             \n\
             Site            Hours    Jobs    Runs\n\
             \x20                     Completed Aborted\n\
             -------------------------------------------------------\n\
             Other               4       1     0\n\
             Slurm               4       2     1\n\
             Twin                4       1     0\n\
             Dead                0       0     1\n\
             -------------------------------------------------------\n\
             TOTAL              10       4     2\n",
            ""
        )
    );
}

#[test]
fn router_history_records_iwd_and_windows() {
    let env = history_queue();
    let r = env.run("tern_router_history", ["-show_records", "-show_iwd"]);
    assert_eq!(
        r.stdout,
        "Routed job history from 2023-11-13 22:13 to 2023-11-14 22:13\n\
         \n\
         JobID Status Site Runtime IWD \n\
         10.0 C Slurm 7200 /home/a \n\
         11.0 C Slurm 5400 /home/b \n\
         12.0 X Slurm 30 /home/c \n\
         13.0 C Other 12600 /home/d \n\
         14.0 X Dead 0 /home/e \n\
         16.0 C Twin 12600 /home/g \n"
    );
    // Three days back, ending two days ago: only 15.0.
    let r = env.run(
        "tern_router_history",
        ["-show_records", "-age", "2", "-days", "3"],
    );
    assert_eq!(
        r.stdout,
        "Routed job history from 2023-11-09 22:13 to 2023-11-12 22:13\n\
         \n\
         JobID Status Site Runtime \n\
         15.0 C Slurm 3600 \n"
    );
    let r = env.run(
        "tern_router_history",
        ["-show_records", "-start", "2023-11-14 21:50"],
    );
    assert_eq!(
        r.stdout,
        "Routed job history from 2023-11-14 21:50 to 2023-11-14 22:13\n\
         \n\
         JobID Status Site Runtime \n\
         12.0 X Slurm 30 \n\
         13.0 C Other 12600 \n\
         14.0 X Dead 0 \n\
         16.0 C Twin 12600 \n"
    );
    let r = env.run("tern_router_history", ["-start", "yesterday"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(
        r.stderr,
        "tern_router_history: error: -start 'yesterday' is not a local time \"YYYY-MM-DD HH:MM\"\n\
         hint: for example -start '2026-11-01 08:00'\n"
    );
}

#[test]
fn no_routes_means_no_pass_and_nothing_written() {
    let env = TestEnv::with_spool();
    let r = env.run("tern_job_router", ["-verbose"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (
            0,
            "no routes configured (JOB_ROUTER_ROUTE_NAMES is empty): nothing to do\n"
        )
    );
    assert!(!env.spool().exists());
    let r = env.run("tern_job_router", ["-dry-run", "x"]);
    assert_eq!(r.code, 2, "{r:?}");
}

#[test]
fn the_pages_document_every_option() {
    use crate::common::man::check_page;
    use clap::CommandFactory;
    check_page("tern_job_router", tern::cli::job_router::Args::command());
    check_page("tern_router_q", tern::cli::router_q::Args::command());
    check_page("tern_router_rm", tern::cli::router_rm::Args::command());
    check_page(
        "tern_router_history",
        tern::cli::router_history::Args::command(),
    );
    let _ = parse_id;
    let _ = ad;
}

/// Regression: a source mirrored as Running has no shadow of its own; a
/// negotiation pass must not take it for one whose shadow died and
/// requeue it (its copy is what runs).
#[test]
fn a_negotiation_pass_leaves_a_running_source_alone() {
    let env = with_config(ROUTES);
    let routed = route_jobs(&env, 2, "");
    let (src, dest) = (routed[1].0, routed[1].1.unwrap());
    set(&env, dest, NOW + 5, &[("JobStatus", "2")]);
    pass(&env, NOW + 10);
    assert_eq!(status(&env, src), 2);
    let r = env.run("tern_negotiate", ["-dry-run"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout
            .contains(&format!("requeue {dest} (its shadow is gone)")),
        "{}",
        r.stdout
    );
    assert!(
        !r.stdout.contains(&format!("requeue {src} ")),
        "{}",
        r.stdout
    );
}

#[test]
fn edit_in_place_changes_the_source_and_makes_no_copy() {
    let env = with_config(
        r#"
JOB_ROUTER_ROUTE_NAMES = InPlace
JOB_ROUTER_ROUTE_InPlace @=end
  REQUIREMENTS true
  EditJobInPlace = true
  SET Edited true
@end
"#,
    );
    let routed = route_jobs(&env, 1, "");
    let src = routed[0].0;
    assert_eq!(routed[0].1, None);
    assert_eq!(attr(&env, src, "Edited").as_deref(), Some("true"));
    assert_eq!(text(&env, src, "RoutedBy").as_deref(), Some("jobrouter"));
    assert_eq!(text(&env, src, "RouteName").as_deref(), Some("InPlace"));
    assert_eq!(attr(&env, src, "Managed"), None);
    // Routed once: RoutedBy keeps it from being routed again.
    let r = pass(&env, NOW + 10);
    assert_eq!(r.stdout, "");
    // The only job routed from it is itself.
    assert_eq!(copies_of(&env, src), vec![src]);
}

#[test]
fn round_robin_spreads_jobs_over_the_matching_routes() {
    let env = with_config(
        r#"
JOB_ROUTER_ROUND_ROBIN_SELECTION = true
JOB_ROUTER_ROUTE_NAMES = A B C
JOB_ROUTER_ROUTE_A @=end
  UNIVERSE vanilla
  REQUIREMENTS true
@end
JOB_ROUTER_ROUTE_B @=end
  UNIVERSE vanilla
  REQUIREMENTS true
@end
JOB_ROUTER_ROUTE_C @=end
  UNIVERSE vanilla
  REQUIREMENTS ProcId > 100
@end
"#,
    );
    let routed = route_jobs(&env, 4, "");
    let routes: Vec<String> = routed
        .iter()
        .map(|(_, d)| text(&env, d.unwrap(), "RouteName").unwrap())
        .collect();
    assert_eq!(routes, vec!["A", "B", "A", "B"]);
}

#[test]
fn update_job_info_output_is_merged_into_the_copy_before_mirroring() {
    let env = hooked(&[(
        "UPDATE_JOB_INFO",
        "update",
        "cat > update.in\necho 'JobStatus = 2'\necho 'SiteNote = \"busy\"'",
    )]);
    let routed = route_jobs(&env, 1, "");
    let (src, dest) = (routed[0].0, routed[0].1.unwrap());
    pass(&env, NOW + 10);
    let input = std::fs::read_to_string(env.path("update.in")).unwrap();
    assert!(input.contains("RoutedFromJobId = \"1.0\"\n"), "{input}");
    assert_eq!(text(&env, dest, "SiteNote").as_deref(), Some("busy"));
    assert_eq!(status(&env, dest), 2);
    assert_eq!(status(&env, src), 2, "mirrored in the same pass");
}

#[test]
fn translate_with_no_output_waits_for_the_next_pass() {
    let env = hooked(&[(
        "TRANSLATE_JOB",
        "translate",
        "cat >/dev/null\n[ -e ready ] || exit 0\necho 'Cmd = \"/bin/true\"'\necho 'JobUniverse = 5'",
    )]);
    let routed = route_jobs(&env, 1, "");
    assert_eq!(routed[0].1, None);
    std::fs::write(env.path("ready"), "").unwrap();
    let r = pass(&env, NOW + 10);
    assert_eq!(r.stdout, "job 1.0: routed to A as job 2.0\n");
}

#[test]
fn a_cleanup_hook_killed_by_a_signal_counts_as_done() {
    let env = hooked(&[("JOB_CLEANUP", "cleanup", "cat >/dev/null\nkill -9 $$")]);
    let routed = route_jobs(&env, 1, "");
    let dest = routed[0].1.unwrap();
    set(&env, dest, NOW + 5, &[("JobStatus", "4")]);
    let r = pass(&env, NOW + 10);
    assert!(r.stdout.contains("was killed by signal 9"), "{}", r.stdout);
    assert!(
        r.stdout.contains("job 1.0: retired from route A (success)"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_hook_past_its_timeout_is_killed_and_fails() {
    let env = hooked(&[(
        "TRANSLATE_JOB",
        "translate",
        "cat >/dev/null\nexec sleep 30",
    )]);
    let env = env.var("_TERN_JOB_ROUTER_HOOK_TIMEOUT", Some("1"));
    let start = std::time::Instant::now();
    let routed = route_jobs(&env, 1, "");
    assert!(start.elapsed() < Duration::from_secs(20));
    assert_eq!(routed[0].1, None);
    let log = std::fs::read_to_string(env.spool().join("JobRouterLog")).unwrap();
    assert!(log.contains("timed out after 1 s and was killed"), "{log}");
}

/// The negotiation pass starts a router pass when routes are configured
/// and there are idle jobs.
#[test]
fn a_negotiation_pass_starts_the_router() {
    let env = with_config(&format!("START = false\n{ROUTES}"));
    env.write("one.sub", "executable = /bin/true\nqueue\n");
    assert_eq!(env.run("tern_submit", ["one.sub"]).code, 0);
    let r = env.run("tern_negotiate", [] as [&str; 0]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        crate::common::wait_until(crate::common::TIMEOUT, || {
            text(&env, id(1, 0), "Managed").as_deref() == Some("External")
        }),
        "the router did not run"
    );
}

/// Regression: the router's follower position keeps the transaction log
/// from being trimmed below it; once routes are gone, a pass drops it.
#[test]
fn a_router_without_routes_lets_go_of_the_log() {
    let env = with_config(ROUTES);
    route_jobs(&env, 1, "");
    let followers = |env: &TestEnv| -> i64 {
        db(env)
            .query_row(
                "SELECT count(*) FROM followers WHERE name = 'router:jobrouter'",
                [],
                |r| r.get(0),
            )
            .unwrap()
    };
    assert_eq!(followers(&env), 1);
    let env = env.var("TERN_CONFIG", Some("/dev/null"));
    assert_eq!(env.run("tern_job_router", [] as [&str; 0]).code, 0);
    assert_eq!(followers(&env), 0);
}

/// One instance per job and hook: while the job's TRANSLATE_JOB lock is
/// held (by a hook still running from an earlier pass), none is started.
#[test]
fn a_hook_still_running_is_not_started_again() {
    let env = hooked(&[(
        "TRANSLATE_JOB",
        "translate",
        "cat >/dev/null\necho 'JobUniverse = 5'",
    )]);
    std::fs::create_dir_all(env.spool().join("router-hooks")).unwrap();
    let held =
        std::fs::File::create(env.spool().join("router-hooks/TRANSLATE_JOB.1.0.stderr")).unwrap();
    held.lock().unwrap();
    let routed = route_jobs(&env, 2, "");
    assert_eq!(routed[0].1, None);
    assert!(
        routed[1].1.is_some(),
        "job 1.10 or 1.1 is not blocked by 1.0"
    );
    let log = std::fs::read_to_string(env.spool().join("JobRouterLog")).unwrap();
    assert!(
        log.contains("job 1.0: hook TRANSLATE_JOB is still running; not started again"),
        "{log}"
    );
    drop(held);
    let r = pass(&env, NOW + 10);
    assert!(r.stdout.contains("job 1.0: routed to A"), "{}", r.stdout);
}

/// JobFailureTest is evaluated against the source at finalize: true is a
/// failure of the route, though the job completes all the same.
#[test]
fn job_failure_test_counts_a_completed_job_as_a_failure() {
    let env = with_config(
        r#"
JOB_ROUTER_ROUTE_NAMES = A
JOB_ROUTER_ROUTE_A @=end
  UNIVERSE vanilla
  REQUIREMENTS true
  JobFailureTest = ExitCode =!= 0
@end
"#,
    );
    let routed = route_jobs(&env, 2, "");
    set(
        &env,
        routed[0].1.unwrap(),
        NOW + 5,
        &[("JobStatus", "4"), ("ExitCode", "0")],
    );
    set(
        &env,
        routed[1].1.unwrap(),
        NOW + 5,
        &[("JobStatus", "4"), ("ExitCode", "2")],
    );
    let r = pass(&env, NOW + 10);
    assert_eq!(
        r.stdout,
        "job 1.0: Completed as its routed copy 2.0\n\
         job 1.0: routed copy 2.0 completed (success)\n\
         job 1.0: retired from route A (success)\n\
         job 1.1: Completed as its routed copy 3.0\n\
         job 1.1: routed copy 3.0 completed (JobFailureTest: failure)\n\
         job 1.1: retired from route A (failure)\n"
    );
    let (failed, succeeded): (i64, i64) = db(&env)
        .query_row(
            "SELECT recent_failed, recent_succeeded FROM router_routes WHERE name = 'A'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((failed, succeeded), (1, 1));
    let h = env.run(
        "tern_history",
        ["-af", "ClusterId", "ProcId", "JobStatus", "Managed"],
    );
    assert!(h.stdout.contains("1 1 4 ScheddDone\n"), "{}", h.stdout);
}

/// The source's periodic policy still applies while it is routed (the
/// negotiation pass evaluates it); a periodic hold of the source removes
/// its copy at the next router pass.
#[test]
fn a_periodic_hold_of_the_source_removes_its_copy() {
    let env = with_config(&format!("START = false\n{ROUTES}"));
    let routed = route_jobs(&env, 2, "periodic_hold = ProcId == 1");
    let (src, dest) = (routed[1].0, routed[1].1.unwrap());
    let r = env.run("tern_negotiate", ["-reconfig"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(status(&env, src), 5);
    // The negotiation pass started a router pass in the background too;
    // whichever runs first removes the copy.
    assert!(crate::common::wait_until(crate::common::TIMEOUT, || {
        pass(&env, NOW + 10);
        status(&env, dest) == 0
    }));
    // The pass that removed it writes its log after its commit.
    let line = format!("job {src}: source was held; its routed copy is removed");
    let log = || std::fs::read_to_string(env.spool().join("JobRouterLog")).unwrap_or_default();
    assert!(
        crate::common::wait_until(crate::common::TIMEOUT, || log().contains(&line)),
        "{}",
        log()
    );
    assert_eq!(status(&env, src), 5);
}

/// A periodic removal of a source whose copy runs: no shadow runs the
/// source here, so the pass aborts it at once (009) and records no request;
/// the router then removes the copy and lets the source leave.
#[test]
fn a_periodic_remove_of_a_source_whose_copy_runs_logs_its_abort() {
    let env = with_config(&format!("START = false\n{ROUTES}"));
    let routed = route_jobs(&env, 1, "periodic_remove = JobStatus == 2");
    let (src, dest) = (routed[0].0, routed[0].1.unwrap());
    set(
        &env,
        dest,
        NOW + 5,
        &[("JobStatus", "2"), ("Managed", "\"External\"")],
    );
    pass(&env, NOW + 6);
    assert_eq!(status(&env, src), 2);
    let r = env.run("tern_negotiate", ["-reconfig"]);
    assert_eq!(r.code, 0, "{r:?}");
    // The negotiation pass started a router pass in the background too,
    // which may have removed the copy and let the source go already.
    let s = status(&env, src);
    assert!(s == 3 || s == 0, "the source is removed: {s}");
    let requests: i64 = db(&env)
        .query_row("SELECT count(*) FROM requests", [], |r| r.get(0))
        .unwrap();
    assert_eq!(requests, 0, "a request no shadow would serve");
    let log = env.path("jobs.log");
    assert_job_events(&log, &src.to_string(), [0, 1, 9]);
    assert!(crate::common::wait_until(crate::common::TIMEOUT, || {
        pass(&env, NOW + 10);
        status(&env, src) == 0
    }));
    // Kept, removed, until a router pass removed the copy: that pass saw
    // the source removed, not gone (its log comes after its commit).
    let line = format!("job {src}: source was removed; its routed copy is removed");
    let said = || std::fs::read_to_string(env.spool().join("JobRouterLog")).unwrap_or_default();
    assert!(
        crate::common::wait_until(crate::common::TIMEOUT, || said().contains(&line)),
        "{}",
        said()
    );
    assert_job_events(&log, &src.to_string(), [0, 1, 9]);
    check_logs_with_htcondor(&[log]);
}

/// A route knob that starts with '[' is a route ad in the old syntax,
/// converted as HTCondor 24 does.
#[test]
fn a_route_knob_may_hold_an_old_syntax_route_ad() {
    let env = with_config(
        r#"
JOB_ROUTER_ROUTE_NAMES = Old
JOB_ROUTER_ROUTE_Old = [ Name = "Old"; TargetUniverse = 5; Requirements = target.WantOld =?= true; set_Foo = 1; ]
"#,
    );
    let routed = route_jobs(&env, 2, "+WantOld = (ProcId == 1)");
    assert_eq!(routed[0].1, None);
    let d = routed[1].1.expect("1.1 wants the route");
    assert_eq!(text(&env, d, "RouteName").as_deref(), Some("Old"));
    assert_eq!(attr(&env, d, "JobUniverse").as_deref(), Some("5"));
    assert_eq!(attr(&env, d, "Foo").as_deref(), Some("1"));
}

#[test]
fn bad_input_is_named_and_changes_nothing() {
    let env = with_config(
        "JOB_ROUTER_ROUTE_NAMES = Bad\nJOB_ROUTER_ROUTE_Bad @=end\n  REQUIREMENTS true\n  SET\n@end\n",
    );
    let r = env.run("tern_job_router", ["-dry-run", "1.0"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            1,
            "",
            "tern_job_router: warning: route Bad is not used: JOB_ROUTER_ROUTE_Bad, line 2: SET needs 2 arguments\n\
             tern_job_router: error: job 1.0 is not in the queue\n"
        )
    );
    assert!(!env.spool().exists());
    let r = env.run("tern_router_q", ["-route"]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            2,
            "tern_router_q: error: -route needs a value\nhint: 'tern_router_q -help' lists the options\n"
        )
    );
    let r = env.run("tern_router_q", ["-S"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "   JOBS ST Route                GridResource\n")
    );
    assert!(!env.spool().exists());
}

/// Regression: a source the router mirrored to Completed left the queue at
/// the next full evaluation of a negotiation pass, before the router had
/// finalized and yielded it, and reached the history still "External".
#[test]
fn a_completed_source_the_router_still_manages_stays_for_the_router() {
    let env = with_config(ROUTES);
    let routed = route_jobs(&env, 1, "");
    let (source, _) = routed[0];
    assert_eq!(
        attr(&env, source, "Managed").as_deref(),
        Some("\"External\"")
    );
    set(&env, source, NOW + 5, &[("JobStatus", "4")]);
    // A pass long after: every job's periodic evaluation is due. The pass
    // starts no router here (no routes for it): a router started in the
    // background would mirror the idle copy into the source, and whether it
    // did so before the check below would be a race.
    let r = env
        .command("tern_negotiate")
        .env("TERN_NOW", (NOW + 3600).to_string())
        .env("_TERN_JOB_ROUTER_ROUTE_NAMES", "")
        .output()
        .unwrap();
    assert!(r.status.success(), "{r:?}");
    assert_eq!(status(&env, source), 4, "the source left the queue");
    assert_eq!(
        attr(&env, source, "Managed").as_deref(),
        Some("\"External\"")
    );
}

/// Route macros tern does not carry out make the route unusable, by name,
/// instead of routing without them.
#[test]
fn a_route_asking_for_what_tern_does_not_do_is_refused_by_name() {
    let env = with_config(
        r#"
JOB_ROUTER_ROUTE_NAMES = Boxed Good
JOB_ROUTER_ROUTE_Boxed @=end
  REQUIREMENTS true
  GridResource = "batch slurm"
  JobShouldBeSandboxed = true
@end
JOB_ROUTER_ROUTE_Good @=end
  UNIVERSE vanilla
  REQUIREMENTS true
@end
"#,
    );
    let routed = route_jobs(&env, 1, "");
    assert!(routed[0].1.is_some());
    let dry = env.run("tern_job_router", ["-dry-run", "1.0"]);
    assert_eq!(
        dry.stderr,
        "tern_job_router: warning: route Boxed is not used: JobShouldBeSandboxed = true is not supported by tern's router\n"
    );
    assert!(
        dry.stdout.contains("managed on route Good"),
        "{}",
        dry.stdout
    );
}

/// A source whose copy runs has no shadow here: tern_vacate_job and
/// tern_suspend report it done and change nothing (the schedd's
/// `abort_job_myself` leaves an externally managed job alone), and leave no
/// request behind; tern_rm marks it removed and writes its 009 at once, and
/// the router removes the copy and then lets the source leave.
#[test]
fn a_source_whose_copy_runs_gets_no_shadow_requests() {
    let env = with_config(ROUTES);
    let routed = route_jobs(&env, 2, "");
    let (s0, d0) = (routed[0].0, routed[0].1.unwrap());
    let (s1, d1) = (routed[1].0, routed[1].1.unwrap());
    set(
        &env,
        d0,
        NOW + 5,
        &[("JobStatus", "2"), ("Managed", "\"External\"")],
    );
    set(&env, d1, NOW + 5, &[("JobStatus", "2")]);
    pass(&env, NOW + 6);
    assert_eq!((status(&env, s0), status(&env, s1)), (2, 2));
    let requests_of_sources = |env: &TestEnv| -> Vec<String> {
        let c = db(env);
        let mut st = c
            .prepare(
                "SELECT cluster || '.' || proc || ' ' || kind FROM requests WHERE cluster = ?1",
            )
            .unwrap();
        st.query_map([s0.cluster], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    };
    let r = env.run("tern_vacate_job", [&s0.to_string()]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "Job 1.0 vacated\n"),
        "{r:?}"
    );
    let r = env.run("tern_vacate_job", ["-fast", &s0.to_string()]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "Job 1.0 fast-vacated\n"),
        "{r:?}"
    );
    assert_eq!(status(&env, s0), 2, "nothing vacated the source");
    let r = env.run("tern_suspend", [&s0.to_string()]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "Job 1.0 suspended\n"),
        "{r:?}"
    );
    assert_eq!(status(&env, s0), 2, "nothing suspended the source");
    let r = env.run("tern_continue", [&s0.to_string()]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.stderr, "Job 1.0 not running to be continued\n");
    // The copy suspended, the source shows it; continuing the source
    // leaves it to the copy's own queue as well.
    set(&env, d0, NOW + 6, &[("JobStatus", "7")]);
    pass(&env, NOW + 7);
    assert_eq!(status(&env, s0), 7, "the source mirrors its suspended copy");
    let r = env.run("tern_continue", [&s0.to_string()]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "Job 1.0 continued\n"),
        "{r:?}"
    );
    assert_eq!(status(&env, s0), 7, "nothing continued the source");
    assert_eq!(requests_of_sources(&env), Vec::<String>::new());
    set(&env, d0, NOW + 7, &[("JobStatus", "2")]);
    pass(&env, NOW + 7);
    assert_eq!(status(&env, s0), 2, "running again with its copy");
    let r = env.run("tern_rm", [&s1.to_string()]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "Job 1.1 marked for removal\n"),
        "{r:?}"
    );
    assert_eq!(
        status(&env, s1),
        3,
        "kept until the router removed the copy"
    );
    assert_eq!(requests_of_sources(&env), Vec::<String>::new());
    let log = env.path("jobs.log");
    assert_job_events(&log, &s1.to_string(), [0, 1, 9]);
    let r = pass(&env, NOW + 8);
    assert!(
        r.stdout.contains(&format!(
            "job {s1}: source was removed; its routed copy is removed"
        )),
        "{}",
        r.stdout
    );
    assert_eq!(
        status(&env, s1),
        0,
        "the source left once its copy was removed"
    );
    assert_eq!(status(&env, d1), 3, "the copy's shadow is asked to stop it");
    set(
        &env,
        d0,
        NOW + 9,
        &[
            ("JobStatus", "4"),
            ("ExitCode", "0"),
            ("CompletionDate", "1700000010"),
        ],
    );
    pass(&env, NOW + 20);
    assert_eq!(status(&env, s0), 0, "the source completed");
    assert_job_events(&log, &s0.to_string(), [0, 1, 5]);
    assert_job_events(&log, &s1.to_string(), [0, 1, 9]);
    assert_eq!(requests_of_sources(&env), Vec::<String>::new());
    check_logs_with_htcondor(&[log]);
}
