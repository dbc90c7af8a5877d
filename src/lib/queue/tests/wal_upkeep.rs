//! Upkeep of the write-ahead log as handles write and close: short while
//! a process may open the queue alone, longer while another holds it
//! open, started again in place, and never left behind by a reader.

use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::super::*;
use super::submit_text;

/// A tool that leaves its handle to the process exit keeps the log as short
/// as one that closes it (the upkeep runs first), and what it wrote is
/// there for the next handle. (The handles stay open in this process, as
/// they would until a tool's exit.)
#[test]
fn leaving_at_exit_keeps_the_log_short_and_the_jobs_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    let wal = db_path(&spool).with_extension("db-wal");
    let mut most = 0;
    for _ in 0..40 {
        let mut q = Queue::open(&spool, true).unwrap().unwrap();
        submit_text(&mut q, "executable = /bin/echo\nqueue\n", "alice");
        q.leave_at_exit();
        most = most.max(std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0));
    }
    assert!(
        most < u64::from(wal::KEEP_FRAMES) * wal::FRAME_BYTES + (200 << 10),
        "log grew to {most}"
    );
    let q = Queue::open(&spool, false).unwrap().unwrap();
    assert_eq!(q.idle_rows().unwrap().len(), 40);
}

/// Closing leaves the write-ahead log for the next process, but never
/// lets it grow past [`wal::KEEP_FRAMES`] and one write: it is started
/// again in place, the file keeping its blocks (a commit then writes over
/// them rather than extending the file); a handle that wrote nothing to it
/// leaves no log behind.
#[test]
fn closing_keeps_the_log_short_and_in_place_and_a_reader_leaves_none() {
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    let wal = db_path(&spool).with_extension("db-wal");
    let (mut most, mut restarts, mut last) = (0, 0, 0);
    let mut lengths = Vec::new();
    for _ in 0..40 {
        let mut q = Queue::open(&spool, true).unwrap().unwrap();
        submit_text(&mut q, "executable = /bin/echo\nqueue\n", "alice");
        let frames = q.log_frames();
        assert!(frames > 0, "the hook saw the commit");
        assert!(
            frames <= wal::KEEP_FRAMES + 40,
            "log grew to {frames} frames"
        );
        if frames < last {
            restarts += 1;
        }
        last = frames;
        drop(q);
        let n = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        most = most.max(n);
        lengths.push(n);
    }
    assert!(restarts >= 2, "the log was started again {restarts} times");
    assert!(
        most < u64::from(wal::KEEP_FRAMES) * wal::FRAME_BYTES + (200 << 10),
        "log grew to {most}"
    );
    let first_long = lengths.iter().position(|&n| n > 200 << 10).unwrap();
    assert!(
        lengths[first_long..].iter().all(|&n| n > 200 << 10),
        "the log's file was cut: {lengths:?}"
    );
    // Copy everything into queue.db: then a reader writes nothing.
    Connection::open(db_path(&spool))
        .unwrap()
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    let q = Queue::open(&spool, false).unwrap().unwrap();
    assert_eq!(q.idle_rows().unwrap().len(), 40);
    drop(q);
    assert!(!wal.exists(), "a reader left a log behind");
}

/// A big write leaves a long log: the closing handle starts it again and
/// cuts its file to [`wal::FILE_LIMIT`], and the next process reads only
/// what was written since.
#[test]
fn a_long_log_is_cut_to_the_limit_when_closed() {
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    let wal = db_path(&spool).with_extension("db-wal");
    let mut q = Queue::open(&spool, true).unwrap().unwrap();
    // Each job's own ad holds a kilobyte: the log passes the limit.
    let pad = "x".repeat(1000);
    let text = format!("executable = /bin/echo\n+Pad = \"$(Process){pad}\"\nqueue 5000\n");
    submit_text(&mut q, &text, "alice");
    let frames = q.log_frames();
    drop(q);
    assert!(
        u64::from(frames) * wal::FRAME_BYTES > wal::FILE_LIMIT,
        "{frames} frames"
    );
    let n = std::fs::metadata(&wal).unwrap().len();
    assert!(n > 0 && n <= wal::FILE_LIMIT, "the log's file is {n} bytes");
    let mut q = Queue::open(&spool, true).unwrap().unwrap();
    submit_text(&mut q, "executable = /bin/echo\nqueue\n", "alice");
    assert!(q.log_frames() < 40, "{} frames", q.log_frames());
    assert_eq!(q.idle_rows().unwrap().len(), 5001);
}

/// While another process holds the queue open (a shadow, a pass), no one
/// rebuilds the log's index from the file, so a closing handle lets the
/// log grow to [`wal::KEEP_FRAMES_BESIDE`] before it starts it again, not
/// [`wal::KEEP_FRAMES`]: each start costs the closer checkpoint fsyncs.
/// The file stays within [`wal::FILE_LIMIT`] all along.
#[test]
fn closing_beside_another_process_leaves_the_log_longer() {
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    drop(Queue::open(&spool, true).unwrap().unwrap());
    let Some(mut holder) = crate::sys::pids::spawn_helper_test(
        "queue::tests::wal_upkeep::hold_the_queue_open_helper",
        "TERN_TEST_SPOOL",
        &spool,
    ) else {
        return;
    };
    let shm = db_path(&spool).with_extension("db-shm");
    let end = Instant::now() + Duration::from_secs(30);
    while crate::sys::lockprobe::others_lock_byte(&shm, wal::SHM_DMS_BYTE) != Some(true)
        && Instant::now() < end
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let wal_path = db_path(&spool).with_extension("db-wal");
    let (mut most, mut restarts, mut last, mut file) = (0, 0, 0, 0);
    // Until the log is started again once (about 11 frames a submit), and
    // one submit more; at most as many submits as the limit has frames.
    for _ in 0..wal::KEEP_FRAMES_BESIDE {
        let mut q = Queue::open(&spool, true).unwrap().unwrap();
        submit_text(&mut q, "executable = /bin/echo\nqueue\n", "alice");
        let frames = q.log_frames();
        if frames < last {
            restarts += 1;
        }
        (most, last) = (most.max(frames), frames);
        drop(q);
        // A restart cuts the file back to the limit: look at every step.
        file = file.max(std::fs::metadata(&wal_path).unwrap().len());
        if restarts >= 1 {
            break;
        }
    }
    crate::sys::pids::signal_process(holder.id() as i32, libc::SIGKILL);
    let _ = holder.wait();
    assert!(
        most > wal::KEEP_FRAMES + 40,
        "the log was started again at {most} frames"
    );
    assert!(
        most <= wal::KEEP_FRAMES_BESIDE + 40,
        "log grew to {most} frames"
    );
    assert!(restarts >= 1, "the log was never started again");
    assert!(
        file <= wal::FILE_LIMIT,
        "the log's file grew to {file} bytes"
    );
}

/// Run by the test above in a process of its own: opens the queue of
/// TERN_TEST_SPOOL and keeps it open.
#[test]
#[ignore = "a helper process of closing_beside_another_process_leaves_the_log_longer"]
fn hold_the_queue_open_helper() {
    let Some(spool) = std::env::var_os("TERN_TEST_SPOOL") else {
        return;
    };
    let q = Queue::open(std::path::Path::new(&spool), false).unwrap();
    std::thread::sleep(Duration::from_secs(60));
    drop(q);
}

/// A new queue in a temporary SPOOL holding one job: the directory (kept
/// alive), SPOOL, a handle and the job's id.
fn queue_with_one_job() -> (tempfile::TempDir, std::path::PathBuf, Queue, JobId) {
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    let mut q = Queue::open(&spool, true).unwrap().unwrap();
    let cluster = submit_text(&mut q, "executable = /bin/echo\nqueue\n", "alice");
    (dir, spool, q, JobId { cluster, proc: 0 })
}

/// Sets `Pad` on job `id` to a 3 KB string through the handle's write
/// path, a few frames of log each time.
fn pad_write(q: &mut Queue, id: JobId, i: usize) {
    let row = q.row(id).unwrap().unwrap();
    let ad = q.full_ad(&row).unwrap();
    let pad = "x".repeat(3000);
    let value = crate::classad::parse_expr(&format!("\"{i}{pad}\"")).unwrap();
    q.write(10, |w| {
        w.set_attrs(&row, &ad, &[("Pad".to_string(), value)])
    })
    .unwrap();
}

/// Writes through `q` (counting writes in `i`) until the log has started
/// again `restarts` times, failing past `rounds` times RESTART_FRAMES
/// writes; the most frames the log held, and the longest its file was.
fn write_until_restarts(
    q: &mut Queue,
    id: JobId,
    wal_path: &std::path::Path,
    i: &mut usize,
    restarts: usize,
    rounds: usize,
) -> (u32, u64) {
    let (mut most, mut file, mut last, mut seen) = (0, 0, 0, 0);
    while seen < restarts {
        *i += 1;
        assert!(
            *i < rounds * wal::RESTART_FRAMES as usize,
            "the log was started again {seen} times"
        );
        pad_write(q, id, *i);
        let frames = q.log_frames();
        if frames < last {
            seen += 1;
        }
        (most, last) = (most.max(frames), frames);
        file = file.max(std::fs::metadata(wal_path).unwrap().len());
    }
    (most, file)
}

/// A long-lived writer (a shadow, a pass) starts the log again after the
/// write whose commit takes it past [`wal::RESTART_FRAMES`], while another
/// handle has the queue open: the log never grows far past that, and its
/// file never past [`wal::FILE_LIMIT`], so commits write over blocks the
/// file has.
#[test]
fn a_long_lived_writer_starts_the_log_again_before_the_file_limit() {
    let (_dir, spool, mut q, id) = queue_with_one_job();
    let wal_path = db_path(&spool).with_extension("db-wal");
    // Another handle with the queue open (not reading meanwhile).
    let other = Queue::open(&spool, false).unwrap().unwrap();
    // Three restarts: a frame a write is the least a write adds.
    let mut i = 0;
    let (most, file) = write_until_restarts(&mut q, id, &wal_path, &mut i, 3, 3);
    assert!(
        most <= wal::RESTART_FRAMES + 40,
        "the log grew to {most} frames"
    );
    assert!(
        file <= wal::FILE_LIMIT,
        "the log's file grew to {file} bytes"
    );
    assert!(other.row(id).unwrap().is_some());
}

/// A restart that a reader holds off is tried again 64 writes later, not
/// at every write; and a handle's first write never tries (its close
/// starts the log again, without waiting).
#[test]
fn a_held_off_restart_waits_64_writes_and_a_first_write_never_tries() {
    let (_dir, spool, mut q, id) = queue_with_one_job();
    // A reader inside a read transaction, on a snapshot the log must keep.
    let reader = Connection::open(db_path(&spool)).unwrap();
    reader
        .execute_batch("BEGIN; SELECT count(*) FROM procs;")
        .unwrap();
    let mut i = 0;
    while q.log_frames() <= wal::RESTART_FRAMES {
        pad_write(&mut q, id, i);
        i += 1;
        assert!(i < 10 * wal::RESTART_FRAMES as usize, "the log never grew");
    }
    assert_eq!(
        q.restart_after,
        q.writes + 64,
        "the held-off restart backs off"
    );
    assert_eq!(q.restarted_at, None);
    let before = q.restart_after;
    pad_write(&mut q, id, i);
    assert_eq!(q.restart_after, before, "no new attempt before 64 writes");
    // A new handle's one write, with the log past the threshold.
    let mut one = Queue::open(&spool, false).unwrap().unwrap();
    pad_write(&mut one, id, i + 1);
    assert!(one.log_frames() > wal::RESTART_FRAMES);
    assert_eq!(one.restart_after, 2, "a first write tried a restart");
    reader.execute_batch("COMMIT").unwrap();
}

/// A long-lived writer that restarted the log and then closes, as the
/// queue's last handle, still starts it again: the next process to open
/// the queue alone reads only what was written since.
#[test]
fn a_writer_that_restarted_and_closes_leaves_a_short_log() {
    let (_dir, spool, mut q, id) = queue_with_one_job();
    let mut i = 0;
    while q.restarted_at.is_none() {
        pad_write(&mut q, id, i);
        i += 1;
        assert!(i < 10 * wal::RESTART_FRAMES as usize, "never restarted");
    }
    assert!(q.log_frames() > wal::RESTART_FRAMES);
    drop(q);
    let mut q = Queue::open(&spool, false).unwrap().unwrap();
    submit_text(&mut q, "executable = /bin/echo\nqueue\n", "alice");
    assert!(q.log_frames() < 40, "{} frames", q.log_frames());
}

/// A handle whose owner does the upkeep later (a shadow,
/// [`Queue::defer_log_upkeep`]) leaves the log alone after its writes
/// until [`Queue::log_upkeep`], which starts it again; a log that no call
/// came for is started again by the write that takes it past
/// [`wal::KEEP_FRAMES_BESIDE`], so the file still stays within
/// [`wal::FILE_LIMIT`].
#[test]
fn deferred_upkeep_waits_for_its_call_but_not_past_the_closers_length() {
    let (_dir, spool, mut q, id) = queue_with_one_job();
    let wal_path = db_path(&spool).with_extension("db-wal");
    let _other = Queue::open(&spool, false).unwrap().unwrap();
    q.defer_log_upkeep();
    let mut i = 0;
    while q.log_frames() <= wal::RESTART_FRAMES {
        pad_write(&mut q, id, i);
        i += 1;
        assert!(i < 10 * wal::RESTART_FRAMES as usize, "the log never grew");
    }
    assert_eq!(q.restarted_at, None, "a deferred write restarted the log");
    q.log_upkeep();
    assert!(
        q.restarted_at.is_some(),
        "the upkeep did not restart the log"
    );
    // Its record started the log at its first block.
    let restarts = |q: &Queue| -> i64 {
        q.conn()
            .query_row(
                "SELECT value FROM meta WHERE key = 'log_restarts'",
                [],
                |r| r.get(0),
            )
            .unwrap()
    };
    let first = restarts(&q);
    assert!(
        q.log_frames() < 10,
        "{} frames after the restart",
        q.log_frames()
    );
    pad_write(&mut q, id, i);
    assert!(
        q.log_frames() < 40,
        "{} frames after the restart",
        q.log_frames()
    );
    q.log_upkeep();
    assert_eq!(restarts(&q), first, "an upkeep with nothing to do wrote");
    // No upkeep call: the write past the closers' length restarts it.
    let (most, file) = write_until_restarts(&mut q, id, &wal_path, &mut i, 2, 20);
    assert!(
        most > wal::RESTART_FRAMES && most <= wal::KEEP_FRAMES_BESIDE + 40,
        "the log grew to {most} frames"
    );
    assert!(
        file <= wal::FILE_LIMIT,
        "the log's file grew to {file} bytes"
    );
}
