//! The least one process can do to write one row durably to a SQLite
//! database the way tern's tools keep theirs: WAL mode, the commit synced
//! (`synchronous = FULL`, as tern_submit's), no checkpoint when the handle
//! closes, and the log started again in place once it is past 64 frames
//! (src/lib/queue/wal.rs). bench/loop_submit.sh runs it in the same shell
//! loop as tern_submit: the floor under any design that gives each submit
//! a process of its own.
//!
//! ```text
//! durable_write DB
//! ```
//!
//! makes DB (one table) when it is missing, then inserts one row.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use rusqlite::Connection;
use rusqlite::config::DbConfig;

/// Frames past which the log is started again (wal.rs's KEEP_FRAMES).
const KEEP_FRAMES: i64 = 64;

fn write(path: &str) -> rusqlite::Result<()> {
    let fresh = !std::path::Path::new(path).exists();
    let mut c = Connection::open(path)?;
    if fresh {
        c.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))?;
        c.execute_batch("CREATE TABLE t (x TEXT)")?;
    }
    c.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
    c.pragma_update(None, "synchronous", "FULL")?;
    // The log's length after the commit, as wal.rs learns it.
    let frames = Arc::new(AtomicI64::new(0));
    let seen = Arc::clone(&frames);
    c.wal_hook(Some(move |_: &mut rusqlite::hooks::Wal, pages: i32| {
        seen.store(i64::from(pages), Ordering::Relaxed);
        Ok(())
    }))?;
    c.execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES ('x'); COMMIT;")?;
    if frames.load(Ordering::Relaxed) > KEEP_FRAMES {
        c.query_row("PRAGMA wal_checkpoint(RESTART)", [], |_| Ok(()))?;
        c.execute_batch("INSERT INTO t VALUES ('restart')")?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [db] = args.as_slice() else {
        eprintln!("usage: durable_write DB");
        return ExitCode::from(2);
    };
    match write(db) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("durable_write: {db}: {e}");
            ExitCode::from(1)
        }
    }
}
