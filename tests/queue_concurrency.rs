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
