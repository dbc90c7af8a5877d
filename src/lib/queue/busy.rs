//! How a writer waits for another writer's transaction.
//!
//! SQLite's own busy handler sleeps 1, 2, 5, 10, 15, 20, 25, 25, 25, 50,
//! 50, then 100 ms at a time. tern's transactions are short (a shadow
//! recording a start or an exit holds the lock for a fraction of a
//! millisecond), so that schedule makes a `tern_submit` that meets one
//! sleep ten times longer than the wait, and on a loaded machine, where
//! the holder may lose its cpu for a while, the sleeps grow to 100 ms
//! each. [`handler`] looks again every 100 µs for the first 2 ms, then
//! every millisecond, and gives up after [`TIMEOUT`] (the caller then
//! reports the queue busy).

use std::cell::Cell;
use std::time::{Duration, Instant};

/// How long a writer waits for another writer's transaction.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// Waits taken at the short interval before the long one.
const SHORT_WAITS: i32 = 20;

thread_local! {
    /// When the current wait began (SQLite calls the handler with 0 first).
    static SINCE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// The pause before the `n`th look (counting from 0).
pub fn pause(n: i32) -> Duration {
    if n < SHORT_WAITS {
        Duration::from_micros(100)
    } else {
        Duration::from_millis(1)
    }
}

/// SQLite's busy handler: sleeps [`pause`]`(n)` and asks to be called again
/// (`true`) until [`TIMEOUT`] has passed since the first call of this wait.
pub fn handler(n: i32) -> bool {
    wait(n, TIMEOUT)
}

/// A busy handler's body for a wait of at most `limit`: sleeps
/// [`pause`]`(n)` and asks to be called again until `limit` has passed
/// since the first call of this wait.
pub fn wait(n: i32, limit: Duration) -> bool {
    let since = SINCE.with(|s| {
        if n == 0 || s.get().is_none() {
            s.set(Some(Instant::now()));
        }
        s.get().unwrap_or_else(Instant::now)
    });
    if since.elapsed() >= limit {
        return false;
    }
    sleep(n);
    true
}

/// Sleeps [`pause`]`(n)`. The thread's timer slack is first set to 1 µs
/// (`PR_SET_TIMERSLACK`; Linux's default is 50 µs), so a 100 µs pause
/// ends near 100 µs rather than up to half as late again: the lock it
/// waits for is usually free within a pause or two.
pub fn sleep(n: i32) {
    thread_local! {
        static SLACK_SET: Cell<bool> = const { Cell::new(false) };
    }
    SLACK_SET.with(|s| {
        if !s.get() {
            crate::sys::fine_timer_slack();
            s.set(true);
        }
    });
    std::thread::sleep(pause(n));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_are_short_first_then_a_millisecond() {
        assert_eq!(pause(0), Duration::from_micros(100));
        assert_eq!(pause(SHORT_WAITS - 1), Duration::from_micros(100));
        assert_eq!(pause(SHORT_WAITS), Duration::from_millis(1));
        assert_eq!(pause(100_000), Duration::from_millis(1));
    }

    #[test]
    fn a_writer_waits_for_another_and_gets_the_lock_soon_after() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.db");
        let open = move |path: &std::path::Path| {
            let mut c = rusqlite::Connection::open(path).unwrap();
            c.busy_handler(Some(handler)).unwrap();
            c.pragma_update(None, "journal_mode", "WAL").unwrap();
            c
        };
        let a = open(&path);
        a.execute_batch("CREATE TABLE t (x); BEGIN IMMEDIATE; INSERT INTO t VALUES (1)")
            .unwrap();
        let waiter = std::thread::spawn(move || {
            let b = open(&path);
            let t = Instant::now();
            b.execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES (2); COMMIT")
                .unwrap();
            t.elapsed()
        });
        std::thread::sleep(Duration::from_millis(30));
        a.execute_batch("COMMIT").unwrap();
        let waited = waiter.join().unwrap();
        assert!(waited >= Duration::from_millis(25), "{waited:?}");
        // It got the lock once it was free (not the timeout's answer).
        assert!(waited < Duration::from_secs(5), "{waited:?}");
        let n: i64 = a
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 2);
    }
}
