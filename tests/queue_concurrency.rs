//! Concurrency: eight `tern_submit` processes each submit 200 clusters at
//! once into one SPOOL. Every submit succeeds, the 1,600 clusters get the
//! ids 1..=1600 once each, each id is the one its process printed, and the
//! transaction log holds each cluster as one whole transaction. Separately,
//! eight processes race to create a new SPOOL.

use std::sync::Barrier;
use std::time::Instant;

use tern::classad::unparse::unparse;
use tern::queue::Queue;

use crate::common::TestEnv;
use crate::common::replay::Replay;

const WRITERS: i64 = 8;
const CLUSTERS_EACH: i64 = 200;
const PROCS: usize = 2;

/// Submits `CLUSTERS_EACH` clusters one after another, each marked with the
/// writer and its sequence number; returns the cluster ids printed.
fn writer(env: &TestEnv, w: i64) -> Vec<(i64, i64)> {
    let mut ids = Vec::new();
    for i in 0..CLUSTERS_EACH {
        let out = env
            .command("tern_submit")
            .args(["-terse", "-a"])
            .arg(format!("+Writer = {w}"))
            .arg("-a")
            .arg(format!("+Seq = {i}"))
            .arg("small.sub")
            .output()
            .expect("tern_submit runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "writer {w}, submit {i}: {}{}",
            stdout,
            String::from_utf8_lossy(&out.stderr)
        );
        // "c.0 - c.1"
        let cluster = stdout
            .split('.')
            .next()
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("writer {w}: unexpected output {stdout:?}"));
        ids.push((cluster, i));
    }
    ids
}

#[test]
fn eight_processes_submitting_at_once_get_every_id_once() {
    let env = TestEnv::with_spool();
    let spool = env.spool();
    // The queue exists before the writers start: creating it concurrently
    // is `eight_first_submits_into_a_new_spool_all_succeed`.
    drop(Queue::open(&spool, true).unwrap());
    env.write(
        "small.sub",
        &format!("executable = /bin/echo\narguments = $(Process)\nqueue {PROCS}\n"),
    );

    let start = Instant::now();
    let barrier = Barrier::new(WRITERS as usize);
    let printed: Vec<Vec<(i64, i64)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (env, barrier) = (&env, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    writer(env, w)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let elapsed = start.elapsed();

    let mut all: Vec<i64> = printed.iter().flatten().map(|(c, _)| *c).collect();
    all.sort();
    let want: Vec<i64> = (1..=WRITERS * CLUSTERS_EACH).collect();
    assert_eq!(all, want, "cluster ids");
    for ids in &printed {
        assert!(
            ids.windows(2).all(|p| p[0].0 < p[1].0),
            "one writer's ids grow"
        );
    }

    let q = Queue::open(&spool, false)
        .unwrap()
        .expect("the queue exists");
    assert_eq!(q.integrity_check().unwrap(), "ok");
    assert_eq!(q.next_cluster().unwrap(), WRITERS * CLUSTERS_EACH + 1);
    let rows = q.rows(&Default::default()).unwrap();
    assert_eq!(rows.len(), all.len() * PROCS);
    // Each id is the cluster its process submitted.
    for (w, ids) in printed.iter().enumerate() {
        for (cluster, seq) in ids {
            let ad = q.cluster_ad(*cluster).unwrap();
            let mark = (ad.get("Writer").map(unparse), ad.get("Seq").map(unparse));
            assert_eq!(
                mark,
                (Some(w.to_string()), Some(seq.to_string())),
                "cluster {cluster}"
            );
        }
    }
    let mut replay = Replay::default();
    replay.apply(&q.log_since(0).unwrap()).unwrap();
    assert!(!replay.in_transaction());
    assert_eq!(replay.transactions, all.len(), "one transaction per submit");
    let per_cluster = replay.procs_per_cluster();
    assert_eq!(per_cluster.len(), all.len());
    assert!(per_cluster.values().all(|n| *n == PROCS));
    eprintln!(
        "concurrency: {} submits by {WRITERS} processes in {elapsed:?}",
        all.len()
    );
}

/// The first moments of a SPOOL are the riskiest: every process finds no
/// database, and they race to create it, switch it to WAL and migrate it.
#[test]

fn eight_first_submits_into_a_new_spool_all_succeed() {
    // Each round names a SPOOL of its own, over the default one.
    let env = TestEnv::with_spool();
    env.write("small.sub", "executable = /bin/echo\nqueue\n");
    for round in 0..10 {
        let spool = env.path(&format!("spool{round}"));
        let barrier = Barrier::new(WRITERS as usize);
        let outs: Vec<std::process::Output> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..WRITERS)
                .map(|_| {
                    let mut c = env.command("tern_submit");
                    c.env("_TERN_SPOOL", &spool).args(["-terse", "small.sub"]);
                    let barrier = &barrier;
                    s.spawn(move || {
                        barrier.wait();
                        c.output().expect("tern_submit runs")
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut ids: Vec<String> = outs
            .iter()
            .map(|o| {
                assert!(
                    o.status.success(),
                    "round {round}: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
                String::from_utf8_lossy(&o.stdout).into_owned()
            })
            .collect();
        ids.sort_by_key(|s| s.split('.').next().unwrap().parse::<i64>().unwrap());
        let want: Vec<String> = (1..=WRITERS).map(|c| format!("{c}.0 - {c}.0\n")).collect();
        assert_eq!(ids, want, "round {round}");
        let q = Queue::open(&spool, false).unwrap().unwrap();
        assert_eq!(q.integrity_check().unwrap(), "ok");
    }
}

/// A `queue … from cmd |` command runs before tern_submit takes the
/// queue's write lock: while it is blocked (here on a FIFO nobody writes
/// yet), another submit and a pass go through, and the blocked submit
/// then takes the next free id, its command run once.
#[test]
fn a_blocked_queue_item_command_holds_no_lock() {
    let env = TestEnv::with_spool().var("_TERN_START", Some("false"));
    env.write("fast.sub", "executable = /bin/true\nqueue\n");
    assert_eq!(submit_terse(&env, "fast.sub"), "1.0 - 1.0");
    let gate = env.path("gate");
    let made = std::process::Command::new("mkfifo")
        .arg(&gate)
        .status()
        .unwrap();
    assert!(made.success());
    env.write(
        "slow.sub",
        "executable = /bin/true\narguments = $(x)\nqueue x from sh -c 'echo run >> runs; cat gate' |\n",
    );
    let slow = env
        .command("tern_submit")
        .args(["-terse", "slow.sub"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let runs = env.path("runs");
    assert!(
        crate::common::wait_until(std::time::Duration::from_secs(60), || runs.exists()),
        "the item command never ran"
    );
    let t = Instant::now();
    assert_eq!(submit_terse(&env, "fast.sub"), "2.0 - 2.0");
    let pass = env.run("tern_negotiate", [] as [&str; 0]);
    assert_eq!((pass.code, pass.stderr.as_str()), (0, ""), "{pass:?}");
    let waited = t.elapsed();
    std::fs::write(&gate, "a\nb\n").unwrap();
    let out = slow.wait_with_output().unwrap();
    assert!(
        waited < std::time::Duration::from_secs(20),
        "the submit and the pass waited {waited:?} for the blocked one"
    );
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).trim()
        ),
        (Some(0), "3.0 - 3.1"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&runs).unwrap(), "run\n");
    let r = env.run("tern_q", ["3", "-af", "Args"]);
    assert_eq!(r.stdout, "a\nb\n");
}

/// When another submission takes the cluster id a build was made for,
/// the build is made again for the next one: an item command whose name
/// depends on `$(Cluster)` runs again (here it submits a job of its own
/// the first time). One that keeps losing the race is built inside the
/// transaction from what was read already, and an input never read is
/// refused there rather than read under the lock.
#[test]
fn a_submit_that_loses_its_cluster_id_builds_again() {
    let env = TestEnv::with_spool();
    env.write("fast.sub", "executable = /bin/true\nqueue\n");
    let inner = format!("{} fast.sub >/dev/null", crate::common::bin("tern_submit"));
    env.write(
        "once.sub",
        &format!(
            "executable = /bin/true\narguments = $(x)\n\
             queue x from sh -c 'test -e once || {{ touch once; {inner}; }}; echo $(Cluster)' |\n"
        ),
    );
    assert_eq!(submit_terse(&env, "once.sub"), "2.0 - 2.0");
    assert_eq!(env.run("tern_q", ["2", "-af", "Args"]).stdout, "2\n");
    env.write(
        "always.sub",
        &format!(
            "executable = /bin/true\n\
             queue x from sh -c '{inner}; echo $(Cluster)' |\n"
        ),
    );
    let r = env.run("tern_submit", ["always.sub"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .starts_with("tern_submit: error: always.sub:2: the queue item command 'sh -c '")
            && r.stderr
                .contains("echo 6'' was not read before the queue was locked"),
        "{}",
        r.stderr
    );
    // Three builds lost their id to the command's own submits (3, 4, 5);
    // nothing of always.sub was queued.
    let r = env.run("tern_q", ["-af", "ClusterId"]);
    assert_eq!(r.stdout, "1\n2\n3\n4\n5\n");
}

/// `tern_submit -terse FILE` in `env`, which must succeed: its "c.0 - c.n".
fn submit_terse(env: &TestEnv, file: &str) -> String {
    let r = env.run("tern_submit", ["-terse", file]);
    assert_eq!(r.code, 0, "{r:?}");
    r.stdout.trim().to_string()
}
