//! The job router end to end: jobs submitted to tern as ordinary vanilla
//! jobs, routed by tern_job_router, their routed copies run elsewhere by
//! tern_gridmanager, and the sources completed with the copies' exits.
//! Nothing is faked: the passes run as cron would run them (only more
//! often), on the system clock.
//!
//! - 200 jobs to a real one-node Slurm (tests/slurm/slurm.sh, see
//!   [`crate::common::slurm`]) through the route README.md documents, read
//!   from README.md so the documentation cannot drift from what works.
//! - Routing to another tern queue (`GridResource = "condor <spool>"`): the
//!   copy runs there, under that queue's own passes.

use std::path::Path;
use std::time::{Duration, Instant};

use tern::userlog::{EventKind, Exit};

use crate::common::slurm::up;
use crate::common::{RunEnv, assert_job_events, check_logs_with_htcondor, wait_until};

/// The route of README.md's "When one machine is not enough": the first
/// fenced block of that section, as a user would paste it into their
/// configuration file.
fn readme_route() -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let section = readme
        .split_once("## When one machine is not enough")
        .expect("README.md has its section \"When one machine is not enough\"")
        .1;
    let block = section
        .split_once("```\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .expect("a fenced block with the route")
        .0;
    assert!(
        block.contains("JOB_ROUTER_ROUTE_NAMES") && block.contains("batch slurm"),
        "README's first block in the section is not the route: {block}"
    );
    block.to_string()
}

/// One tick of the cron the README sets up, `tern_negotiate` then
/// `tern_job_router` (a router the pass started in the background holds the
/// lock, and this one then does nothing).
fn cron_tick(env: &RunEnv) {
    env.negotiate();
    env.run_ok("tern_job_router", [] as [&str; 0]);
}

/// The jobs `tool` (`tern_q` or `tern_history`) prints for `args`
/// (`... -af ATTRS`), one line each, split on spaces.
fn rows(env: &RunEnv, tool: &str, args: &[&str]) -> Vec<Vec<String>> {
    env.run_ok(tool, args)
        .lines()
        .map(|l| l.split(' ').map(str::to_string).collect())
        .collect()
}

const COPY: &str = "RouteName =?= \"Slurm\"";

/// The exit code in each source's terminate event, by proc, read with
/// tern's reader (the same log is read by HTCondor's when it is at hand).
fn terminate_codes(log: &Path, cluster: i64) -> Vec<(i64, i64)> {
    let mut codes: Vec<(i64, i64)> = tern::userlog::read_file(log)
        .unwrap()
        .into_iter()
        .filter(|e| e.id.cluster == cluster)
        .filter_map(|e| match e.kind {
            EventKind::Terminated(t) => match t.exit {
                Exit::Normal { return_value } => Some((e.id.proc, return_value)),
                _ => None,
            },
            _ => None,
        })
        .collect();
    codes.sort();
    codes
}

#[test]
fn two_hundred_jobs_routed_by_the_readme_route_run_on_a_real_slurm() {
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let Some(slurm) = up(&tmp.path().join("slurm"), "16857", "16858") else {
        return;
    };
    let env = RunEnv::new();
    let config = env.write("tern_config", &readme_route());
    let env = env
        .var_env("TERN_CONFIG", config.to_str().unwrap())
        .var_env("SLURM_CONF", slurm.conf.to_str().unwrap())
        .knob("GRIDMANAGER_JOB_PROBE_INTERVAL", "1");
    // As the README says: jobs opt in with +WantSlurm, and requirements no
    // local slot meets keep them for Slurm. Every tenth exits 3.
    let n = 200;
    let cluster = env.submit(
        "sources.sub",
        &format!(
            "executable = /bin/sh\n\
             arguments = \"-c 'echo job $(Process); case $(Process) in *9) exit 3;; esac'\"\n\
             output = out.$(Process)\n\
             log = sources.log\n\
             +WantSlurm = true\n\
             requirements = false\n\
             queue {n}\n"
        ),
    );
    let src = |p: i64| format!("{cluster}.{p}");

    // Cron, every 0.3 s. While copies wait, the route's MaxIdleJobs holds
    // (at most 20 copies idle) and tern_router_q -S shows them by route:
    // idle and running copies, and completed ones that the router has not
    // finalized yet (condor_router_q -S shows those as C too).
    let mut summaries = Vec::new();
    let mut most_idle = 0;
    let done = wait_until(Duration::from_secs(150), || {
        cron_tick(&env);
        let idle = rows(&env, "tern_q", &["-constraint", COPY, "-af", "JobStatus"])
            .iter()
            .filter(|r| r[0] == "1")
            .count();
        most_idle = most_idle.max(idle);
        let s = env.run_ok("tern_router_q", ["-S"]);
        if s.lines().count() > 1 && summaries.len() < 5 {
            summaries.push(s);
        }
        std::thread::sleep(Duration::from_millis(300));
        env.run_ok("tern_q", [cluster.to_string().as_str(), "-af", "ProcId"])
            .is_empty()
    });
    assert!(
        done,
        "the sources did not all complete\n{}\nrouter log:\n{}",
        env.diagnosis(),
        std::fs::read_to_string(env.spool().join("JobRouterLog")).unwrap_or_default()
    );
    assert!(
        most_idle <= 20,
        "{most_idle} routed copies idle at once; the route says MaxIdleJobs = 20"
    );
    assert!(
        !summaries.is_empty(),
        "tern_router_q -S never showed a routed job"
    );
    for s in &summaries {
        let mut lines = s.lines();
        assert_eq!(
            lines.next(),
            Some("   JOBS ST Route                GridResource"),
            "{s}"
        );
        for l in lines {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert!(
                matches!(&f[..], [jobs, "I" | "R" | "C", "Slurm", "batch", "slurm"] if jobs.parse::<u32>().is_ok()),
                "{s}"
            );
        }
    }

    // Each source completed with its copy's exit code and output, was let
    // go by the router, and names its copy; each copy names its source and
    // route and ran on Slurm.
    let c = cluster.to_string();
    let sources = rows(
        &env,
        "tern_history",
        &[
            &c,
            "-af",
            "ProcId",
            "JobStatus",
            "ExitCode",
            "Managed",
            "RoutedToJobId",
        ],
    );
    assert_eq!(sources.len(), n, "{}", env.diagnosis());
    let mut copy_of = std::collections::HashMap::new();
    for r in &sources {
        let p: i64 = r[0].parse().unwrap();
        let code = if p % 10 == 9 { "3" } else { "0" };
        assert_eq!(r[1..4], ["4", code, "ScheddDone"], "source {}", src(p));
        copy_of.insert(r[4].clone(), p);
        let out = std::fs::read_to_string(env.path(&format!("out.{p}"))).unwrap();
        assert_eq!(out, format!("job {p}\n"), "source {}", src(p));
    }
    let copies = rows(
        &env,
        "tern_history",
        &[
            "-constraint",
            COPY,
            "-af",
            "ClusterId",
            "ProcId",
            "RoutedFromJobId",
            "JobUniverse",
            "JobStatus",
            "ExitCode",
            "GridResource",
            "GridJobId",
        ],
    );
    assert_eq!(copies.len(), n);
    for r in &copies {
        let id = format!("{}.{}", r[0], r[1]);
        let p = copy_of
            .remove(&id)
            .unwrap_or_else(|| panic!("copy {id} is no source's RoutedToJobId"));
        let code = if p % 10 == 9 { "3" } else { "0" };
        // GridJobId is "batch slurm <HTCondor's id> slurm/<date>/<id>".
        assert_eq!(
            r[2..10],
            [&src(p), "9", "4", code, "batch", "slurm", "batch", "slurm"],
            "copy {id}"
        );
    }
    assert!(copy_of.is_empty(), "sources without a copy: {copy_of:?}");
    // The route's SET BatchRuntime 3600 reached Slurm as a time limit.
    let slurm_job = copies[0].last().unwrap().rsplit('/').next().unwrap();
    let shown = slurm.scontrol(slurm_job);
    assert!(shown.contains("TimeLimit=01:00:00"), "{shown}");

    // The sources' log: submit, then the execute and the terminate the
    // router wrote, with the copy's exit code.
    let log = env.path("sources.log");
    for p in 0..n as i64 {
        assert_job_events(&log, &src(p), [0, 1, 5]);
    }
    let want: Vec<(i64, i64)> = (0..n as i64)
        .map(|p| (p, if p % 10 == 9 { 3 } else { 0 }))
        .collect();
    assert_eq!(terminate_codes(&log, cluster), want);
    check_logs_with_htcondor(&[log]);

    // The router's history: 200 completed on route Slurm, none aborted.
    let h = env.run_ok("tern_router_history", [] as [&str; 0]);
    let body: Vec<&str> = h.lines().skip(1).collect();
    assert_eq!(
        body,
        [
            "",
            "Site            Hours    Jobs    Runs",
            "                      Completed Aborted",
            "-------------------------------------------------------",
            "Slurm               0     200     0",
            "-------------------------------------------------------",
            "TOTAL               0     200     0",
        ],
        "{h}"
    );
    assert!(h.starts_with("Routed job history from "), "{h}");
    // Nothing is left routed.
    assert_eq!(env.run_ok("tern_router_q", ["-S"]).lines().count(), 1);
    eprintln!(
        "200 jobs routed to Slurm and completed in {:?}, Slurm's bring-up included",
        started.elapsed()
    );
}

/// Runs a tool on the other queue (its SPOOL); its stdout.
fn remote_run(env: &RunEnv, remote: &Path, tool: &str, args: &[&str]) -> String {
    let out = env
        .command(tool)
        .env("_TERN_SPOOL", remote)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{tool}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// An environment whose route sends jobs with +WantOther to another tern
/// queue (its SPOOL, returned). The same user's configuration, so the
/// other queue's passes (started by the gridmanager there) see the route
/// too.
fn routed_to_another_queue() -> (RunEnv, std::path::PathBuf) {
    let env = RunEnv::new();
    let remote = env.path("other-spool");
    let config = env.write(
        "tern_config",
        &format!(
            "JOB_ROUTER_ROUTE_NAMES = Other\n\
             JOB_ROUTER_ROUTE_Other @=end\n\
             \x20 REQUIREMENTS WantOther =?= true\n\
             \x20 GridResource = \"condor {} local\"\n\
             \x20 SET Requirements true\n\
             @end\n",
            remote.display()
        ),
    );
    let env = env
        .var_env("TERN_CONFIG", config.to_str().unwrap())
        .knob("GRIDMANAGER_JOB_PROBE_INTERVAL", "1");
    (env, remote)
}

// With no cron at all, a routed job once stopped after its first pass: the
// router submitted the copy and nothing started its gridmanager, and a
// copy that completed waited for a pass to start the router. Now the
// router asks for a pass after routing (as tern_submit after a submit) and
// the gridmanager when a routed copy's status moves (as a shadow when its
// slot falls free).
#[test]
fn a_routed_job_completes_without_cron() {
    let (env, _remote) = routed_to_another_queue();
    let cluster = env.submit(
        "sources.sub",
        "executable = /bin/sh\n\
         arguments = \"-c 'exit 5'\"\n\
         log = sources.log\n\
         +WantOther = true\n\
         requirements = false\n\
         queue 2\n",
    );
    let c = cluster.to_string();
    env.wait_for("the sources to complete", Duration::from_secs(60), || {
        env.run_ok("tern_q", [c.as_str(), "-af", "ProcId"])
            .is_empty()
    });
    assert_eq!(
        env.run_ok("tern_history", [c.as_str(), "-af", "ProcId", "ExitCode"]),
        "1 5\n0 5\n"
    );
    for p in 0..2 {
        assert_job_events(&env.path("sources.log"), &format!("{c}.{p}"), [0, 1, 5]);
    }
}

// More jobs than the other queue has slots, so some wait there while its
// own passes (cron there) start its router: that router once took them
// for orphans of its own (RoutedBy ours, RoutedFromJobId naming a job it
// does not have) and removed them, and the sources were held with "Job
// disappeared from remote schedd".
#[test]
fn jobs_routed_to_another_tern_queue_run_there_and_complete_here() {
    let (env, remote) = routed_to_another_queue();
    let cluster = env.submit(
        "sources.sub",
        "executable = /bin/sh\n\
         arguments = \"-c 'sleep 2; echo job $(Process) in $PWD; exit $(Process)'\"\n\
         output = out.$(Process)\n\
         log = sources.log\n\
         +WantOther = true\n\
         requirements = false\n\
         queue 6\n",
    );
    let done = wait_until(Duration::from_secs(60), || {
        cron_tick(&env);
        // The other queue's own cron.
        remote_run(&env, &remote, "tern_negotiate", &["-wait"]);
        std::thread::sleep(Duration::from_millis(300));
        env.run_ok("tern_q", [cluster.to_string().as_str(), "-af", "ProcId"])
            .is_empty()
    });
    assert!(
        done,
        "the sources did not all complete\n{}\nrouter log:\n{}\nother queue:\n{}",
        env.diagnosis(),
        std::fs::read_to_string(env.spool().join("JobRouterLog")).unwrap_or_default(),
        remote_run(
            &env,
            &remote,
            "tern_q",
            &["-af", "ClusterId", "ProcId", "JobStatus", "HoldReason"]
        )
    );
    // Each source completed here with its exit code, its copy (a grid job
    // here) completed with it, and the job the copy submitted to the other
    // queue ran there, left its queue, and was not taken for an orphan by
    // the other queue's router (it carries our RoutedBy).
    let c = cluster.to_string();
    let sources = rows(
        &env,
        "tern_history",
        &[
            &c,
            "-af",
            "ProcId",
            "JobStatus",
            "ExitCode",
            "Managed",
            "RoutedToJobId",
        ],
    );
    assert_eq!(sources.len(), 6, "{}", env.diagnosis());
    let gr = format!("condor {} local", remote.display());
    for r in &sources {
        let p: i64 = r[0].parse().unwrap();
        assert_eq!(r[1..4], ["4", &r[0], "ScheddDone"], "source {cluster}.{p}");
        let copy = &r[4];
        let got = env.history_af(
            copy,
            &["RoutedFromJobId", "JobStatus", "ExitCode", "GridJobId"],
        );
        let got = got.unwrap_or_else(|| panic!("copy {copy} not in history"));
        let remote_id = got
            .strip_prefix(&format!("{cluster}.{p} 4 {p} {gr} "))
            .unwrap_or_else(|| panic!("copy {copy}: {got}"));
        let there = remote_run(
            &env,
            &remote,
            "tern_history",
            &[
                remote_id,
                "-af",
                "JobStatus",
                "ExitCode",
                "RemoveReason",
                "SubmitterGlobalJobId",
            ],
        );
        assert!(
            there.starts_with(&format!(
                "4 {p} undefined {}#{copy}#",
                env.spool().display()
            )),
            "job {remote_id} of the other queue: {there}"
        );
        let out = std::fs::read_to_string(env.path(&format!("out.{p}"))).unwrap();
        let ran_in = format!("job {p} in {}/execute/", remote.display());
        assert!(out.starts_with(&ran_in), "{out}");
    }
    assert_eq!(remote_run(&env, &remote, "tern_q", &["-af", "ProcId"]), "");
    let log = env.path("sources.log");
    for p in 0..6 {
        assert_job_events(&log, &format!("{cluster}.{p}"), [0, 1, 5]);
    }
    let want: Vec<(i64, i64)> = (0..6).map(|p| (p, p)).collect();
    assert_eq!(terminate_codes(&log, cluster), want);
    check_logs_with_htcondor(&[log]);
}
