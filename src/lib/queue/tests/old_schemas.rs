//! Databases left by an older tern: each older schema opens migrated with
//! its rows, and schema 8's rebuild of the transaction log keeps the log's
//! sequence.

use std::path::Path;

use rusqlite::Connection;

use super::super::*;
use super::{assert_counts_agree, submit_text};
use crate::vocab::JobStatus;

/// What a queue holds, as text to compare: the next cluster id, every job
/// (its row and full ad) with its pending requests, and the history.
fn contents(q: &Queue) -> Vec<String> {
    let mut out = vec![format!("next cluster {}", q.next_cluster().unwrap())];
    for (row, ad) in q.select(&Selection::default()).unwrap() {
        out.push(format!(
            "job {row:?} {} requests {:?}",
            ad_to_string(&ad),
            q.requests(row.id).unwrap()
        ));
    }
    for (row, ad) in q.history(&Selection::default(), None).unwrap() {
        out.push(format!("history {row:?} {}", ad_to_string(&ad)));
    }
    out
}

/// The tables (and indexes) of a database, by name.
fn tables(conn: &Connection) -> Vec<String> {
    let mut st = conn
        .prepare("SELECT type || ' ' || name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY 1")
        .unwrap();
    let rows = st.query_map([], |r| r.get(0)).unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

/// A queue with something in every table schema `k` has: two clusters of
/// two owners, a job removed to the history and, from schema 2 on (which
/// added the `requests` table), a running job with a request for its
/// shadow. Made by today's store; the rows are then copied into the old
/// schema's tables.
fn populated(spool: &Path, k: usize) -> Queue {
    let mut q = Queue::open(spool, true).unwrap().unwrap();
    submit_text(
        &mut q,
        "executable = /bin/echo\narguments = $(Process)\nqueue 3\n",
        "alice",
    );
    submit_text(
        &mut q,
        "executable = /bin/sleep\n+Weight = 2.5\nqueue 1\n",
        "bob",
    );
    let job = |cluster, proc| JobId { cluster, proc };
    let one = |id: JobId| Selection {
        jobs: vec![id],
        ..Selection::default()
    };
    q.modify(&one(job(1, 0)), 1_700_000_100, |_, _| Change::Leave {
        set: vec![("JobStatus".into(), JobStatus::Removed.expr())],
    })
    .unwrap();
    if k >= 2 {
        q.modify(&one(job(2, 0)), 1_700_000_200, |_, _| {
            Change::Set(vec![("JobStatus".into(), JobStatus::Running.expr())])
        })
        .unwrap();
        q.write(1_700_000_300, |w| w.request(job(2, 0), Request::Hold))
            .unwrap();
    }
    q
}

/// A new database in `spool` at schema version `k`: the first `k`
/// migrations and user_version `k`, in WAL mode, as that tern made it.
fn schema_at(spool: &Path, k: usize) -> Connection {
    std::fs::create_dir_all(spool).unwrap();
    let mut conn = Connection::open(db_path(spool)).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    for (i, step) in schema::MIGRATIONS[..k].iter().enumerate() {
        let tx = conn.transaction().unwrap();
        tx.execute_batch(step).unwrap();
        tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))
            .unwrap();
        tx.commit().unwrap();
    }
    conn
}

/// Makes `spool`'s database as a tern of schema version `k` left it: the
/// first `k` migrations, user_version `k`, and `from`'s rows in every table
/// that schema has (in the columns it has).
fn old_database(spool: &Path, k: usize, from: &Path) {
    let conn = schema_at(spool, k);
    conn.execute("ATTACH ?1 AS src", [db_path(from).to_str().unwrap()])
        .unwrap();
    let names: Vec<String> = {
        let mut st = conn
            .prepare("SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            .unwrap();
        let rows = st.query_map([], |r| r.get(0)).unwrap();
        rows.collect::<Result<_, _>>().unwrap()
    };
    for table in names {
        let cols: Vec<String> = {
            let mut st = conn
                .prepare(&format!("PRAGMA main.table_info({table})"))
                .unwrap();
            let rows = st.query_map([], |r| r.get(1)).unwrap();
            rows.collect::<Result<_, _>>().unwrap()
        };
        let cols = cols.join(", ");
        conn.execute(&format!("DELETE FROM main.{table}"), [])
            .unwrap();
        conn.execute(
            &format!("INSERT INTO main.{table} ({cols}) SELECT {cols} FROM src.{table}"),
            [],
        )
        .unwrap();
    }
    conn.execute("DETACH src", []).unwrap();
}

#[test]
fn a_database_of_every_older_schema_opens_migrated_with_its_rows() {
    const { assert!(schema::VERSION >= 2, "no older schema to open") };
    let fresh = tempfile::tempdir().unwrap();
    let want_tables = {
        let q = Queue::open(&fresh.path().join("spool"), true)
            .unwrap()
            .unwrap();
        tables(&q.conn)
    };
    for k in 1..schema::VERSION as usize {
        let dir = tempfile::tempdir().unwrap();
        let (source, old) = (dir.path().join("source"), dir.path().join("old"));
        let want = contents(&populated(&source, k));
        // The fixture holds what it promises.
        assert_eq!(want.iter().filter(|l| l.starts_with("history")).count(), 1);
        assert_eq!(want.iter().filter(|l| l.starts_with("job")).count(), 3);
        assert_eq!(want.iter().any(|l| l.ends_with("requests [Hold]")), k >= 2);
        old_database(&old, k, &source);
        let found: i64 = Connection::open(db_path(&old))
            .unwrap()
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(found, k as i64);

        let mut q = Queue::open(&old, false)
            .unwrap()
            .unwrap_or_else(|| panic!("schema {k}: no queue found"));
        let version: i64 = q
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, schema::VERSION, "schema {k} was not migrated");
        assert_eq!(tables(&q.conn), want_tables, "schema {k}: the tables");
        assert_eq!(contents(&q), want, "schema {k}: the rows read back");
        assert_eq!(q.integrity_check().unwrap(), "ok", "schema {k}");
        assert_counts_agree(&q);
        // And it takes new jobs after the old ones.
        let c = submit_text(&mut q, "executable = /bin/echo\nqueue\n", "carol");
        assert_eq!(c, 3, "schema {k}: the next cluster");
    }
}

/// Schema 8 rebuilt the transaction log without AUTOINCREMENT: the records
/// keep their numbers, and a log an older tern trimmed to nothing keeps its
/// place in the sequence, so a follower's position stays meaningful.
#[test]
fn the_log_keeps_its_sequence_across_the_rebuild_of_schema_8() {
    for emptied in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let spool = dir.path().join("spool");
        let conn = schema_at(&spool, 7);
        for n in 1..=40 {
            conn.execute(
                "INSERT INTO txlog (op, key) VALUES (103, ?1)",
                [format!("1.{n}")],
            )
            .unwrap();
        }
        let kept = if emptied { 41 } else { 31 };
        conn.execute("DELETE FROM txlog WHERE seq < ?1", [kept])
            .unwrap();
        drop(conn);

        let mut q = Queue::open(&spool, false).unwrap().unwrap();
        assert_eq!(q.log_end().unwrap(), 40, "emptied: {emptied}");
        let seqs: Vec<i64> = q.log_since(0).unwrap().iter().map(|r| r.seq).collect();
        let want: Vec<i64> = if emptied {
            vec![40]
        } else {
            (31..=40).collect()
        };
        assert_eq!(seqs, want, "emptied: {emptied}");
        if !emptied {
            assert_eq!(q.log_since(39).unwrap()[0].key, "1.40");
        }
        submit_text(&mut q, "executable = /bin/echo\nqueue\n", "alice");
        assert_eq!(q.log_since(40).unwrap()[0].seq, 41, "emptied: {emptied}");
        let autoinc: i64 = q
            .conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE sql LIKE '%AUTOINCREMENT%'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(autoinc, 0);
    }
}
