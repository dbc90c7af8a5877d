//! A process that holds a SQLite database's write lock, for the tests of
//! what a root pass does about a lock held too long
//! (tests/cli_shared_mode.rs):
//!
//! ```text
//! hold_write_lock DB SECONDS
//! ```
//!
//! opens DB (never creating it), begins an IMMEDIATE transaction (SQLite's
//! write lock), prints `locked`, sleeps SECONDS and exits without
//! committing, so nothing it did stays.

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [db, secs] = args.as_slice() else {
        eprintln!("usage: hold_write_lock DB SECONDS");
        return ExitCode::from(2);
    };
    let Ok(secs) = secs.parse::<f64>() else {
        eprintln!("hold_write_lock: not a number of seconds: {secs}");
        return ExitCode::from(2);
    };
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE;
    let conn = match rusqlite::Connection::open_with_flags(db, flags) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("hold_write_lock: cannot open {db}: {e}");
            return ExitCode::from(1);
        }
    };
    if let Err(e) = conn.execute_batch("BEGIN IMMEDIATE") {
        eprintln!("hold_write_lock: cannot lock {db}: {e}");
        return ExitCode::from(1);
    }
    println!("locked");
    let _ = std::io::stdout().flush();
    std::thread::sleep(std::time::Duration::from_secs_f64(secs));
    ExitCode::SUCCESS
}
