//! `tern_prio`, held to condor_prio's messages on jobs tern_submit put in a
//! temporary SPOOL (other users' jobs are made by changing the queue
//! database, as in tests/cli_edit.rs), and run on a real running job to
//! show that a lower priority never stops it.

use crate::common::queue::{db, set_owner, submit_sleeps as submit};
use crate::common::real_user;
use crate::common::{RunEnv, TIMEOUT, TestEnv, alive, fake_job};

/// A queue in a test directory in which no pass ever starts.
fn quiet_env() -> TestEnv {
    TestEnv::with_spool().var("_TERN_NEGOTIATE_ON_SUBMIT", Some("false"))
}

/// `prio!(env, [args...] => code, stderr)`: runs tern_prio, which prints
/// nothing on stdout, and asserts its exit code and whole stderr.
macro_rules! prio {
    ($env:expr, [$($arg:expr),*] => $code:expr, $err:expr) => {{
        let argv: Vec<String> = vec![$($arg.to_string()),*];
        let r = $env.run("tern_prio", &argv);
        let got = (r.code, r.stdout.as_str(), r.stderr.as_str());
        assert_eq!(got, ($code, "", &*$err), "tern_prio {argv:?}");
    }};
}

/// Every queued job's JobPrio as tern_q prints it, in id order, joined by
/// spaces.
fn prios(env: &TestEnv) -> String {
    let r = env.run("tern_q", ["-allusers", "-af", "JobPrio"]);
    assert_eq!(r.code, 0, "{r:?}");
    r.stdout.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Job `job`'s JobPrio as `tern_q -long` prints it (`-af` reads the
/// queue's column, which holds only integers).
fn prio_of(env: &TestEnv, job: &str) -> String {
    let r = env.run("tern_q", ["-long", job]);
    let line = r.stdout.lines().find_map(|l| l.strip_prefix("JobPrio = "));
    line.unwrap_or_else(|| panic!("no JobPrio for {job}: {r:?}"))
        .to_string()
}

/// Cluster 1 with jobs 1.0 and 1.1, cluster 2 with job 2.0.
fn three_jobs() -> TestEnv {
    let env = quiet_env();
    submit(&env, 2, false);
    submit(&env, 1, false);
    assert_eq!(prios(&env), "0 0 0");
    env
}

#[test]
fn p_sets_and_plus_and_minus_adjust_without_a_clamp() {
    let env = three_jobs();
    prio!(env, ["-p", "5", "1.0"] => 0, "");
    assert_eq!(prios(&env), "5 0 0");
    prio!(env, ["+3", "1.0", "1.1"] => 0, "");
    assert_eq!(prios(&env), "8 3 0");
    prio!(env, ["-2", "1.1"] => 0, "");
    assert_eq!(prios(&env), "8 1 0");
    prio!(env, ["-p", "-4", "2.0"] => 0, "");
    assert_eq!(prios(&env), "8 1 -4");
    // Far outside condor_prio's old -20..20.
    prio!(env, ["+1000", "1.0"] => 0, "");
    prio!(env, ["-5000", "1.1"] => 0, "");
    assert_eq!(prios(&env), "1008 -4999 -4");
    // The column the pass orders by follows the ad.
    let column: Vec<i64> = {
        let db = db(&env);
        let mut st = db
            .prepare("SELECT prio FROM procs ORDER BY cluster, proc")
            .unwrap();
        st.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(column, [1008, -4999, -4]);
}

#[test]
fn p_wins_over_an_adjustment_and_the_last_of_each_counts() {
    let env = three_jobs();
    prio!(env, ["+10", "-p", "7", "1.0"] => 0, "");
    prio!(env, ["-p", "7", "-10", "1.1"] => 0, "");
    assert_eq!(prios(&env), "7 7 0");
    prio!(env, ["+1", "+2", "2.0"] => 0, "");
    prio!(env, ["-p", "1", "-prio", "9", "1.0"] => 0, "");
    assert_eq!(prios(&env), "9 7 2");
    // A job named twice changes once.
    prio!(env, ["+1", "1", "1.0", "-a"] => 0, "");
    assert_eq!(prios(&env), "10 8 3");
}

#[test]
fn jobs_by_cluster_user_all_and_constraint() {
    let env = three_jobs();
    let me = real_user();
    prio!(env, ["-p", "4", "2"] => 0, "");
    assert_eq!(prios(&env), "0 0 4");
    prio!(env, ["+1", &me] => 0, "");
    assert_eq!(prios(&env), "1 1 5");
    prio!(env, ["-p", "9", "-a"] => 0, "");
    assert_eq!(prios(&env), "9 9 9");
    prio!(env, ["-all", "-3"] => 0, "");
    assert_eq!(prios(&env), "6 6 6");
    prio!(env, ["-constraint", "ProcId == 1", "-p", "2"] => 0, "");
    assert_eq!(prios(&env), "6 2 6");
    // A constraint narrows a cluster or user argument.
    prio!(env, ["-const", "ProcId == 0", "+1", "1"] => 0, "");
    assert_eq!(prios(&env), "7 2 6");
    prio!(env, ["-p", "0", &me, "-constraint", "JobPrio > 5", "-constraint", "ClusterId == 2"] => 0, "");
    assert_eq!(prios(&env), "7 2 0");
    // A cluster or user with no jobs is no error, as in condor_prio.
    prio!(env, ["+1", "7", "nobody"] => 0, "");
    prio!(env, ["+1", "-constraint", "false"] => 0, "");
    assert_eq!(prios(&env), "7 2 0");
}

#[test]
fn another_users_jobs_are_refused_unless_a_super_user_asks() {
    let env = three_jobs();
    set_owner(&env, 2, 0, "someoneelse");
    prio!(env, ["-p", "5", "2.0"] => 1, "Couldn't set new priority for 2.0.\n");
    prio!(env, ["+1", "2"] => 1, "Couldn't set new priority for 2.0.\n");
    prio!(env, ["+1", "someoneelse"] => 1, "Couldn't set new priority for 2.0.\n");
    assert_eq!(prios(&env), "0 0 0");
    // Mine are changed all the same.
    prio!(env, ["+2", "1", "2"] => 1, "Couldn't set new priority for 2.0.\n");
    assert_eq!(prios(&env), "2 2 0");
    // -all and a constraint alone choose among my jobs only.
    prio!(env, ["-a", "+1"] => 0, "");
    prio!(env, ["-constraint", "true", "+1"] => 0, "");
    assert_eq!(prios(&env), "4 4 0");
    let sup = env.var(
        "_TERN_QUEUE_SUPER_USERS",
        Some(&format!("root, {}", real_user())),
    );
    prio!(sup, ["-p", "5", "2.0"] => 0, "");
    prio!(sup, ["-a", "+1"] => 0, "");
    assert_eq!(prios(&sup), "5 5 6");
}

#[test]
fn a_job_whose_jobprio_is_no_integer_is_skipped() {
    let env = three_jobs();
    let r = env.run("tern_qedit", ["1.0", "JobPrio", "undefined"]);
    assert_eq!(r.code, 0, "{r:?}");
    let r = env.run("tern_qedit", ["1.1", "JobPrio", "2 + 3"]);
    assert_eq!(r.code, 0, "{r:?}");
    let err = "Couldn't retrieve current priority for 1.0.\n";
    prio!(env, ["+1", "1"] => 1, err);
    prio!(env, ["-p", "3", "1.0"] => 1, err);
    // An expression that evaluates to an integer is a priority.
    assert_eq!(prio_of(&env, "1.0"), "undefined");
    assert_eq!(prio_of(&env, "1.1"), "6");
    // So is a job that does not exist: nothing to read.
    prio!(env, ["-p", "1", "9.0", "2.0"] => 1, "Couldn't retrieve current priority for 9.0.\n");
    assert_eq!(prio_of(&env, "1.0"), "undefined");
    assert_eq!(prio_of(&env, "2.0"), "1");
    // No queue at all.
    prio!(quiet_env(), ["+1", "1.0", "1"] => 1, "Couldn't retrieve current priority for 1.0.\n");
}

#[test]
fn bad_arguments_change_nothing() {
    let env = three_jobs();
    let usage = |msg: &str, hint: &str| format!("tern_prio: error: {msg}\nhint: {hint}\n");
    let adj = "give +N or -N, N a whole number, or -p N to set the priority";
    prio!(env, ["+x", "1"] => 2, usage("'+x' is not a priority adjustment", adj));
    prio!(env, ["-p", "1", "+5.5", "1"] => 2, usage("'+5.5' is not a priority adjustment", adj));
    prio!(env, ["-3x", "1"] => 2, usage("'-3x' is not a priority adjustment", adj));
    prio!(env, ["-x", "1"] => 2, usage("unknown option '-x'", "'tern_prio -help' lists the options"));
    prio!(env, ["-n", "schedd", "+1", "1"] => 2, usage("unknown option '-n'", "'tern_prio -help' lists the options"));
    let none = "give -p N to set the priority, or +N or -N to change it";
    prio!(env, ["1.0"] => 2, usage("you must specify a new priority or priority adjustment", none));
    let jobs = "give a cluster, cluster.proc or user, -constraint EXPR or -all; 'tern_prio -help' says more";
    prio!(env, ["+1"] => 2, usage("you did not specify any jobs", jobs));
    prio!(env, ["+1", "a/b"] => 2, "tern_prio: error: 'a/b' is not a cluster, a cluster.proc or a user name\n");
    let r = env.run("tern_prio", ["-p", "high", "1"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("invalid value 'high'"), "{r:?}");
    let err = "tern_prio: error: constraint 'JobStatus ==': column 13: expected an expression, found end of input\n";
    prio!(env, ["+1", "-constraint", "JobStatus =="] => 1, err);
    assert_eq!(prios(&env), "0 0 0");
    // Cluster 0 is reported, the rest is done, and the exit status is 1.
    prio!(env, ["+1", "0", "2"] => 1, "Invalid cluster # from 0\n");
    assert_eq!(prios(&env), "0 0 1");
}

#[test]
fn lowering_a_running_jobs_priority_does_not_evict_it() {
    let env = RunEnv::new().knob("NEGOTIATE_ON_EXIT", "false");
    let sub = format!(
        "executable = {}\narguments = \"touch pids sleep 300\"\npriority = 10\nqueue\n",
        fake_job().display()
    );
    let id = format!("{}.0", env.submit("job.sub", &sub));
    // fake_job's `touch` writes `run <pid>` once the job runs.
    let pid = || -> Option<i32> {
        let text = std::fs::read_to_string(env.path("pids")).ok()?;
        text.strip_prefix("run ")?.trim().parse().ok()
    };
    env.wait_for("the job running", TIMEOUT, || {
        env.status(&id) == Some(2) && pid().is_some()
    });
    let pid = pid().unwrap();
    env.run_ok("tern_prio", ["-p", "-100", &id]);
    env.run_ok("tern_prio", ["-5", &id]);
    // Jobs that now outrank it, more than the free cpus, and passes to
    // place them.
    let more = format!(
        "executable = {}\narguments = \"sleep 300\"\npriority = 50\nqueue 4\n",
        fake_job().display()
    );
    let c = env.submit("more.sub", &more);
    env.negotiate();
    // Three take the free cpus; the fourth waits rather than take ours.
    let statuses = || env.run_ok("tern_q", [&c.to_string(), "-af", "JobStatus"]);
    env.wait_for("three of the four new jobs running", TIMEOUT, || {
        statuses().split_whitespace().filter(|s| *s == "2").count() == 3
    });
    env.negotiate();
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(
        statuses().split_whitespace().filter(|s| *s == "1").count(),
        1
    );
    assert!(
        alive(pid),
        "the job process was stopped\n{}",
        env.diagnosis()
    );
    assert_eq!(
        env.q_af(&id, &["JobStatus", "NumJobStarts", "JobPrio"]),
        Some("2 1 -105".into())
    );
    let requests: i64 = db(&env)
        .query_row("SELECT count(*) FROM requests", [], |r| r.get(0))
        .unwrap();
    assert_eq!(requests, 0, "a shadow was asked to do something");
    env.run_ok("tern_rm", ["-all"]);
}
