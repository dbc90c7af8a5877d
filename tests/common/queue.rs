//! A test's queue, reached around the tools: the database read and changed
//! directly (as only a shadow or another user could change it), and jobs
//! put in through the library with the owner the test chooses, so that a
//! screen does not depend on who runs the tests.

use std::path::Path;

use tern::classad::Expr;
use tern::config::Config;
use tern::queue::{Authority, Change, JobId, Queue, QueueError, Selection};
use tern::submit::{self, SubmitOptions};

use super::{NOW, TestEnv, real_user};

/// A second connection to `env`'s queue database.
pub fn db(env: &TestEnv) -> rusqlite::Connection {
    rusqlite::Connection::open(env.spool().join("queue.db")).expect("the queue database")
}

/// Gives job `c.p` (and its cluster's ad) to `owner`.
pub fn set_owner(env: &TestEnv, c: i64, p: i64, owner: &str) {
    let me = real_user();
    let db = db(env);
    db.execute(
        "UPDATE procs SET owner = ?3 WHERE cluster = ?1 AND proc = ?2",
        rusqlite::params![c, p, owner],
    )
    .unwrap();
    recount(env);
    db.execute(
        "UPDATE clusters SET owner = ?2, ad = replace(ad, ?3, ?4) WHERE cluster = ?1",
        rusqlite::params![
            c,
            owner,
            format!("Owner = \"{me}\""),
            format!("Owner = \"{owner}\"")
        ],
    )
    .unwrap();
}

/// Sets job `c.p`'s JobStatus, as a shadow would.
pub fn set_status(env: &TestEnv, c: i64, p: i64, status: i64) {
    let db = db(env);
    db.execute(
        "UPDATE procs SET status = ?3 WHERE cluster = ?1 AND proc = ?2",
        rusqlite::params![c, p, status],
    )
    .unwrap();
    recount(env);
}

/// Counts the jobs by owner and status again, as tern's own writes keep
/// them (`job_counts`), after a change made around them.
fn recount(env: &TestEnv) {
    let mut q = Queue::open(&env.spool(), false).unwrap().unwrap();
    q.recount().unwrap();
}

/// Submits `n` jobs of `/bin/sleep 100` with tern_submit (logging to
/// `jobs.log` when `log`).
pub fn submit_sleeps(env: &TestEnv, n: usize, log: bool) {
    let log = if log { "log = jobs.log\n" } else { "" };
    env.write(
        "job.sub",
        &format!("executable = /bin/sleep\narguments = 100\n{log}queue {n}\n"),
    );
    let r = env.run("tern_submit", ["job.sub"]);
    assert_eq!(r.code, 0, "{r:?}");
}

/// Submits the description `text` into `env`'s queue as `owner`, submitted
/// at [`NOW`] from the test directory, as tern_submit would for that user;
/// the new cluster.
#[track_caller]
pub fn submit_as(env: &TestEnv, owner: &str, text: &str) -> i64 {
    let mut q = Queue::open(&env.spool(), true)
        .unwrap()
        .expect("a queue, created");
    submit_from(&mut q, text, "job.sub", &env.path(""), owner, NOW).unwrap()
}

/// Submits a description through the store as tern_submit does, from `/`.
pub fn submit_text(q: &mut Queue, text: &str, owner: &str, qdate: i64) -> Result<i64, String> {
    submit_from(q, text, "model.sub", Path::new("/"), owner, qdate)
}

fn submit_from(
    q: &mut Queue,
    text: &str,
    file: &str,
    cwd: &Path,
    owner: &str,
    qdate: i64,
) -> Result<i64, String> {
    let cfg = Config::defaults();
    let parsed = submit::parse(text, file, cwd, &cfg).map_err(|e| e.to_string())?;
    // A super user: only one may put jobs in under the owner a test picks.
    let root = Authority::new("root", vec!["root".into()]);
    let (id, _) = q
        .submit::<QueueError>(&root, owner, |cluster| {
            let opts = SubmitOptions {
                cluster,
                qdate,
                owner: owner.into(),
                cwd: cwd.to_path_buf(),
                environ: vec![],
                batch_name: None,
            };
            submit::materialize(&parsed, &cfg, &opts)
                .map_err(|e| QueueError::Invalid(e.to_string()))
        })
        .map_err(|e| e.to_string())?;
    Ok(id)
}

/// Applies `change` to job `cluster.proc` of `env`'s queue, as of `now`.
#[track_caller]
pub fn change(env: &TestEnv, cluster: i64, proc: i64, now: i64, change: Change) {
    let mut q = Queue::open(&env.spool(), false).unwrap().unwrap();
    let sel = Selection {
        jobs: vec![JobId { cluster, proc }],
        ..Selection::default()
    };
    let done = q.modify(&sel, now, |_, _| change.clone()).unwrap();
    assert_eq!(done.len(), 1, "job {cluster}.{proc} is not in the queue");
}

/// Makes job `cluster.proc` run since `since` on `slot1@testhost`, as a
/// shadow would.
pub fn start(env: &TestEnv, cluster: i64, proc: i64, since: i64) {
    change(
        env,
        cluster,
        proc,
        since,
        Change::Set(vec![
            ("JobStatus".into(), Expr::int(2)),
            ("ShadowBday".into(), Expr::int(since)),
            ("RemoteHost".into(), Expr::string("slot1@testhost")),
        ]),
    );
}
