//! The raw SQLite floor under `tern_submit` and `tern_rm` of a 100,000-job
//! cluster: the same rows written by a bare rusqlite loop (prepared
//! statements, one transaction, the store's schema and pragmas), with no
//! ClassAd work at all. bench/queue_100k.sh prints tern's times as ratios to
//! these.
//!
//! - submit floor: the cluster row, every proc row and every transaction
//!   log record of the cluster, the next-cluster counter and the kept job
//!   count.
//! - rm floor: what removing every job writes: per job a history row, the
//!   proc row deleted, and two log records (the attributes set, then
//!   destroy); the kept counts once; then the cluster moves to
//!   history_clusters and is destroyed.
//!
//! The rows are read from a queue tern made (`--db PATH`, as the script
//! passes); without one, the library submits `queue 100000` into a
//! temporary SPOOL first (not timed). Each figure is the best of `--runs N`
//! (default 3) and includes the commit and the close (the WAL checkpoint),
//! as a tool's run does.
//!
//! Run: `cargo bench --bench sqlite_floor [-- --db PATH] [--runs N]`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, TransactionBehavior, params};
use tern::config::Config;
use tern::queue::{Authority, Queue, QueueError, schema};
use tern::submit::{self, SubmitOptions};

const PROCS: usize = 100_000;

/// A procs row: cluster, proc, status, owner, prio, qdate, entered, ad.
type ProcRow = (i64, i64, i64, String, i64, i64, i64, String);

struct Rows {
    cluster: (i64, String, String),
    procs: Vec<ProcRow>,
    log: Vec<(i64, String, String, String)>,
}

/// A queue made by the library: `queue 100000` into a temporary SPOOL.
fn make_queue(dir: &Path) -> PathBuf {
    let spool = dir.join("made");
    let cfg = Config::defaults();
    let text = format!("executable = /bin/echo\nqueue {PROCS}\n");
    let file = submit::parse(&text, "bench.sub", Path::new("/"), &cfg).expect("parses");
    let mut q = Queue::open(&spool, true).expect("opens").expect("creates");
    q.submit::<QueueError>(&Authority::new("alice", vec![]), "alice", |cluster| {
        let opts = SubmitOptions {
            cluster,
            qdate: 1_700_000_000,
            owner: "alice".into(),
            cwd: "/".into(),
            environ: vec![],
            batch_name: None,
        };
        submit::materialize(&file, &cfg, &opts).map_err(|e| QueueError::Invalid(e.to_string()))
    })
    .expect("submits");
    spool.join("queue.db")
}

/// The first cluster's rows, as tern wrote them.
fn read_rows(db: &Path) -> Rows {
    let conn = Connection::open(db).expect("the queue opens");
    let cluster = conn
        .query_row(
            "SELECT cluster, owner, ad FROM clusters ORDER BY cluster LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("a cluster");
    let mut st = conn
        .prepare(
            "SELECT cluster, proc, status, owner, prio, qdate, entered, ad FROM procs WHERE cluster = ?1",
        )
        .unwrap();
    let procs = st
        .query_map([cluster.0], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
            ))
        })
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    // The cluster's transaction: from its first BEGIN to the next END.
    let mut st = conn
        .prepare("SELECT op, key, name, value FROM txlog ORDER BY seq")
        .unwrap();
    let mut log = Vec::new();
    let mut rows = st.query([]).unwrap();
    while let Some(r) = rows.next().unwrap() {
        let rec: (i64, String, String, String) = (
            r.get(0).unwrap(),
            r.get(1).unwrap(),
            r.get(2).unwrap(),
            r.get(3).unwrap(),
        );
        let end = rec.0 == tern::queue::op::END;
        log.push(rec);
        if end {
            break;
        }
    }
    Rows {
        cluster,
        procs,
        log,
    }
}

/// A new database with the store's pragmas and schema.
fn fresh(path: &Path) -> Connection {
    let _ = std::fs::remove_file(path);
    let conn = Connection::open(path).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.pragma_update(None, "synchronous", "NORMAL").unwrap();
    for step in schema::MIGRATIONS {
        conn.execute_batch(step).unwrap();
    }
    conn
}

fn insert_submit(conn: &mut Connection, rows: &Rows) {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .unwrap();
    {
        let (c, owner, ad) = &rows.cluster;
        tx.execute(
            "INSERT INTO clusters (cluster, owner, ad) VALUES (?1, ?2, ?3)",
            params![c, owner, ad],
        )
        .unwrap();
        let mut ins = tx
            .prepare(
                "INSERT INTO procs (cluster, proc, status, owner, prio, qdate, entered, ad) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )
            .unwrap();
        for p in &rows.procs {
            ins.execute(params![p.0, p.1, p.2, p.3, p.4, p.5, p.6, p.7])
                .unwrap();
        }
        let mut log = tx
            .prepare("INSERT INTO txlog (op, key, name, value) VALUES (?1, ?2, ?3, ?4)")
            .unwrap();
        for r in &rows.log {
            log.execute(params![r.0, r.1, r.2, r.3]).unwrap();
        }
        tx.execute(
            "UPDATE meta SET value = ?1 WHERE key = 'next_cluster'",
            [c + 1],
        )
        .unwrap();
        tx.execute(
            "INSERT INTO job_counts (owner, status, n) VALUES (?1, 1, ?2) \
             ON CONFLICT (owner, status) DO UPDATE SET n = n + ?2",
            params![owner, rows.procs.len() as i64],
        )
        .unwrap();
    }
    tx.commit().unwrap();
}

fn remove_all(conn: &mut Connection, rows: &Rows) {
    let c = rows.cluster.0;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .unwrap();
    {
        let mut log = tx
            .prepare("INSERT INTO txlog (op, key, name, value) VALUES (?1, ?2, ?3, ?4)")
            .unwrap();
        let mut hist = tx
            .prepare(
                "INSERT OR REPLACE INTO history (cluster, proc, owner, status, completed, ad) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .unwrap();
        let mut del = tx
            .prepare("DELETE FROM procs WHERE cluster = ?1 AND proc = ?2")
            .unwrap();
        let now = 1_700_000_100_i64;
        log.execute(params![tern::queue::op::BEGIN, "", "", ""])
            .unwrap();
        let set = format!(
            "[ EnteredCurrentStatus = {now}; JobStatus = 3; RemoveReason = \"via tern_rm\" ]"
        );
        for p in &rows.procs {
            let key = format!("{}.{}", p.0, p.1);
            log.execute(params![tern::queue::op::SET_ATTRS, key, "", set])
                .unwrap();
            hist.execute(params![p.0, p.1, p.3, 3, now, p.7]).unwrap();
            del.execute(params![p.0, p.1]).unwrap();
            log.execute(params![tern::queue::op::DESTROY_AD, key, "", ""])
                .unwrap();
        }
        // The kept counts, once for the cluster.
        let n = rows.procs.len() as i64;
        tx.execute(
            "UPDATE job_counts SET n = n - ?1 WHERE owner = ?2 AND status = 1",
            params![n, rows.cluster.1],
        )
        .unwrap();
        tx.execute(
            "UPDATE meta SET value = value + ?1 WHERE key = 'history_jobs'",
            [n],
        )
        .unwrap();
        tx.execute(
            "INSERT OR REPLACE INTO history_clusters (cluster, ad) SELECT cluster, ad FROM clusters WHERE cluster = ?1",
            [c],
        )
        .unwrap();
        tx.execute("DELETE FROM clusters WHERE cluster = ?1", [c])
            .unwrap();
        log.execute(params![
            tern::queue::op::DESTROY_AD,
            format!("0{c}.-1"),
            "",
            ""
        ])
        .unwrap();
        log.execute(params![tern::queue::op::END, "", "", ""])
            .unwrap();
    }
    tx.commit().unwrap();
}

/// Opens `db` (as a tool does), runs `f`, closes: the time of all three.
fn timed(db: &Path, f: impl FnOnce(&mut Connection)) -> Duration {
    let start = Instant::now();
    let mut conn = Connection::open(db).unwrap();
    conn.pragma_update(None, "synchronous", "NORMAL").unwrap();
    f(&mut conn);
    conn.close().map_err(|(_, e)| e).unwrap();
    start.elapsed()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut db, mut runs) = (None, 3);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--db" => db = args.next().map(PathBuf::from),
            "--runs" => runs = args.next().and_then(|n| n.parse().ok()).unwrap_or(3),
            // `cargo bench` passes --bench; anything else is ignored.
            _ => {}
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let db = db.unwrap_or_else(|| make_queue(dir.path()));
    let rows = read_rows(&db);
    let (mut submit, mut rm) = (Duration::MAX, Duration::MAX);
    let path = dir.path().join("floor.db");
    for _ in 0..runs {
        drop(fresh(&path));
        submit = submit.min(timed(&path, |c| insert_submit(c, &rows)));
        rm = rm.min(timed(&path, |c| remove_all(c, &rows)));
    }
    println!(
        "floor_procs={} floor_log_records={}",
        rows.procs.len(),
        rows.log.len()
    );
    println!("floor_submit_s={:.3}", submit.as_secs_f64());
    println!("floor_rm_s={:.3}", rm.as_secs_f64());
}
