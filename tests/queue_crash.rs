//! Crash safety: `tern_submit` of a large cluster is killed with SIGKILL at
//! random moments of its run, again and again into the same SPOOL. After
//! every kill the queue opens, `PRAGMA integrity_check` is ok, each cluster
//! in it has all its jobs (the submit was one transaction), the transaction
//! log holds exactly the committed clusters, and the next submit works.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tern::queue::Queue;

use crate::common::TestEnv;
use crate::common::replay::Replay;
use crate::common::rng::Rng;

/// Jobs per submit: enough that the debug build spends ~0.4 s in a run, so
/// that kills land in reading, building, inserting and committing alike.
const PROCS: i64 = 6_000;
/// Kills that must land while tern_submit is running.
const KILLS: usize = 50;

fn submit(env: &TestEnv) -> Command {
    let mut c = env.command("tern_submit");
    c.arg("big.sub")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

/// Jobs per cluster, read with a plain connection (cheaper than loading
/// every row through the store).
fn procs_per_cluster(db: &Path) -> BTreeMap<i64, i64> {
    let conn = rusqlite::Connection::open(db).expect("the queue opens");
    let mut st = conn
        .prepare("SELECT cluster, count(*) FROM procs GROUP BY cluster")
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The queue after a kill: it opens, is sound, and holds only whole
/// clusters, numbered without gaps; the log agrees. Returns the clusters.
fn check_after_kill(spool: &Path, replay: &mut Replay, attempt: usize) -> usize {
    let q = Queue::open(spool, false)
        .unwrap_or_else(|e| panic!("attempt {attempt}: the queue does not open: {e}"))
        .expect("the first full submit created the queue");
    assert_eq!(
        q.integrity_check().unwrap(),
        "ok",
        "attempt {attempt}: integrity_check"
    );
    let clusters = procs_per_cluster(q.path());
    for (c, n) in &clusters {
        assert_eq!(
            *n, PROCS,
            "attempt {attempt}: cluster {c} has {n} of {PROCS} jobs"
        );
    }
    let ids: Vec<i64> = clusters.keys().copied().collect();
    let want: Vec<i64> = (1..=ids.len() as i64).collect();
    assert_eq!(
        ids, want,
        "attempt {attempt}: cluster ids (a killed submit takes no id)"
    );
    assert_eq!(
        q.next_cluster().unwrap(),
        ids.len() as i64 + 1,
        "attempt {attempt}: next cluster"
    );
    let records = q.log_since(replay.position).unwrap();
    replay
        .apply(&records)
        .unwrap_or_else(|e| panic!("attempt {attempt}: the log: {e}"));
    assert!(
        !replay.in_transaction(),
        "attempt {attempt}: the log ends inside a transaction"
    );
    let logged = replay.procs_per_cluster();
    let logged: BTreeMap<i64, i64> = logged.into_iter().map(|(c, n)| (c, n as i64)).collect();
    assert_eq!(logged, clusters, "attempt {attempt}: the log's jobs");
    ids.len()
}

#[test]
fn a_killed_submit_leaves_the_whole_cluster_or_nothing() {
    let env = TestEnv::with_spool();
    let spool = env.spool();
    env.write(
        "big.sub",
        &format!("executable = /bin/echo\narguments = $(Process)\nqueue {PROCS}\n"),
    );

    // Whole runs, to know how long a run takes; the estimate follows every
    // run that finishes before its kill, so that the kills stay spread over
    // the run however loaded the machine is.
    let mut replay = Replay::default();
    let mut full = Duration::MAX;
    for attempt in 0..2 {
        let start = Instant::now();
        let out = submit(&env).output().expect("tern_submit runs");
        full = full.min(start.elapsed());
        assert!(out.status.success(), "{out:?}");
        assert_eq!(check_after_kill(&spool, &mut replay, attempt), attempt + 1);
    }
    let first = full;

    let mut rng = Rng::new(0x5EED);
    let (mut kills, mut finished, mut committed_then_killed) = (0, 0, 0);
    let mut clusters = 2;
    let mut attempt = 1;
    while kills < KILLS {
        attempt += 1;
        assert!(
            attempt < KILLS * 2,
            "too few kills landed in {attempt} runs"
        );
        let delay = full.mul_f64(rng.below(1250) as f64 / 1000.0);
        let start = Instant::now();
        let mut child = submit(&env).spawn().expect("tern_submit starts");
        let mut took = None;
        while took.is_none() && start.elapsed() < delay {
            std::thread::sleep(Duration::from_millis(1));
            took = child.try_wait().unwrap().map(|_| start.elapsed());
        }
        if took.is_none() {
            child.kill().expect("SIGKILL");
        }
        let status = child.wait().unwrap();
        let now = check_after_kill(&spool, &mut replay, attempt);
        if status.signal() == Some(libc::SIGKILL) {
            kills += 1;
            if now > clusters {
                committed_then_killed += 1;
            }
        } else {
            finished += 1;
            full = took.unwrap_or(full);
            assert!(status.success(), "attempt {attempt}: {status:?}");
            assert_eq!(now, clusters + 1, "attempt {attempt}: a finished submit");
        }
        clusters = now;
    }

    // The SPOOL is still good for a whole submit.
    let out = submit(&env).output().expect("tern_submit runs");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        check_after_kill(&spool, &mut replay, attempt + 1),
        clusters + 1
    );
    eprintln!(
        "crash: one run {first:?}; {kills} kills ({committed_then_killed} after the commit), \
         {finished} runs finished first; {} clusters",
        clusters + 1
    );
}
