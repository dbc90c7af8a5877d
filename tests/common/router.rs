//! The job router's test helpers: a test environment whose configuration
//! holds routes, passes of `tern_job_router` on a pinned clock, and jobs
//! routed through it ([`route_jobs`], for any test that needs N routed
//! jobs, such as an end-to-end run on a grid resource).

use tern::classad::unparse::unparse;
use tern::classad::{ClassAd, Expr};
use tern::queue::{Change, JobId, Queue, Selection};

use super::{NOW, Run, TestEnv};

/// A test environment with its own SPOOL and `config` as its whole
/// configuration file.
pub fn with_config(config: &str) -> TestEnv {
    let env = TestEnv::with_spool();
    let path = env.write("router.config", config);
    env.var("TERN_CONFIG", Some(path.to_str().unwrap()))
}

/// One pass of `tern_job_router -verbose` at `now`; asserts it succeeded
/// with nothing on stderr but warnings about unusable routes.
#[track_caller]
pub fn pass(env: &TestEnv, now: i64) -> Run {
    let r = Run::from(
        env.command("tern_job_router")
            .env("TERN_NOW", now.to_string())
            .arg("-verbose")
            .output()
            .expect("running tern_job_router"),
    );
    let other = r
        .stderr
        .lines()
        .any(|l| !l.starts_with("tern_job_router: warning: route "));
    assert!(r.code == 0 && !other, "{r:?}");
    r
}

/// Submits `n` jobs of `/bin/true` (with `extra` submit lines, and a log
/// `jobs.log`), runs one router pass at [`NOW`], and returns each source
/// with its routed copy (`None` when it was not routed), in source order.
pub fn route_jobs(env: &TestEnv, n: usize, extra: &str) -> Vec<(JobId, Option<JobId>)> {
    env.write(
        "route.sub",
        &format!("executable = /bin/true\nlog = jobs.log\n{extra}\nqueue {n}\n"),
    );
    let r = env.run("tern_submit", ["route.sub"]);
    assert_eq!(r.code, 0, "{r:?}");
    let cluster: i64 = r
        .stdout
        .trim_end()
        .trim_end_matches('.')
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    pass(env, NOW);
    (0..n as i64)
        .map(|p| {
            let id = JobId { cluster, proc: p };
            let dest = text(env, id, "RoutedToJobId").map(|t| parse_id(&t));
            (id, dest)
        })
        .collect()
}

pub fn parse_id(t: &str) -> JobId {
    let (c, p) = t.split_once('.').expect("c.p");
    JobId {
        cluster: c.parse().unwrap(),
        proc: p.parse().unwrap(),
    }
}

/// Job `id`'s full ad, if it is in the queue.
pub fn ad(env: &TestEnv, id: JobId) -> Option<ClassAd> {
    let q = Queue::open(&env.spool(), false).unwrap()?;
    let row = q.row(id).unwrap()?;
    Some(q.full_ad(&row).unwrap())
}

/// Job `id`'s attribute as written (`None` when missing or the job is gone).
pub fn attr(env: &TestEnv, id: JobId, name: &str) -> Option<String> {
    ad(env, id).and_then(|a| a.get(name).map(unparse))
}

/// A string attribute without its quotes.
pub fn text(env: &TestEnv, id: JobId, name: &str) -> Option<String> {
    attr(env, id, name).map(|s| s.trim_matches('"').to_string())
}

/// Job `id`'s JobStatus (0 when it is not in the queue).
pub fn status(env: &TestEnv, id: JobId) -> i64 {
    attr(env, id, "JobStatus").map_or(0, |s| s.parse().unwrap())
}

/// Sets attributes of job `id` at `now` through the queue, as a shadow or
/// a grid manager would (each value is ClassAd text).
pub fn set(env: &TestEnv, id: JobId, now: i64, attrs: &[(&str, &str)]) {
    let mut q = Queue::open(&env.spool(), false).unwrap().unwrap();
    let set: Vec<(String, Expr)> = attrs
        .iter()
        .map(|(n, v)| (n.to_string(), tern::classad::parse_expr(v).unwrap()))
        .collect();
    let sel = Selection {
        jobs: vec![id],
        ..Selection::default()
    };
    let done = q
        .modify(&sel, now, |_, _| Change::Set(set.clone()))
        .unwrap();
    assert_eq!(done.len(), 1, "job {id} is not in the queue");
}

/// Every job in the queue whose RoutedFromJobId is `src`.
pub fn copies_of(env: &TestEnv, src: JobId) -> Vec<JobId> {
    let Some(q) = Queue::open(&env.spool(), false).unwrap() else {
        return Vec::new();
    };
    q.select(&Selection::default())
        .unwrap()
        .into_iter()
        .filter(|(_, a)| a.get("RoutedFromJobId").map(unparse) == Some(format!("\"{src}\"")))
        .map(|(r, _)| r.id)
        .collect()
}
