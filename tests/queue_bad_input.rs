//! A queue that cannot be used: queue.db as text, as random bytes, cut in
//! half or to its first page, with a damaged page, with a newer schema; and
//! a SPOOL that cannot be made or written. Every tool that touches the queue
//! refuses with one error naming the problem, and leaves queue.db byte for
//! byte as it was, with nothing new beside it.

use std::path::{Path, PathBuf};

use tern::queue::{Queue, schema};

use crate::common::TestEnv;
use crate::common::queue::submit_text;
use crate::common::rng::Rng;

/// Every tool that opens the queue, with arguments that would make it act
/// on cluster 1.
const TOOLS: &[(&str, &[&str])] = &[
    ("tern_submit", &["job.sub"]),
    ("tern_q", &["1"]),
    ("tern_history", &[]),
    ("tern_rm", &["1"]),
    ("tern_hold", &["1"]),
    ("tern_release", &["1"]),
    ("tern_qedit", &["1", "Foo", "2"]),
];

const DAMAGED_HINT: &str =
    "hint: restore queue.db from a backup, or move it away to start an empty queue\n";

/// A test directory whose SPOOL is `spool/`, with a submit description.
fn env() -> (TestEnv, PathBuf) {
    let env = TestEnv::with_spool();
    let spool = env.spool();
    env.write("job.sub", "executable = /bin/echo\nqueue 2\n");
    (env, spool)
}

/// The bytes of a good queue: three clusters of 300 jobs, one held.
fn good_queue() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    {
        let mut q = Queue::open(&spool, true).unwrap().unwrap();
        for _ in 0..3 {
            submit_text(
                &mut q,
                "executable = /bin/echo\narguments = $(Process)\nqueue 300\n",
                "alice",
                crate::common::NOW,
            )
            .unwrap();
        }
    }
    // The queue's last writes are still in its write-ahead log (closing
    // leaves it): copy them into queue.db, as a backup would.
    rusqlite::Connection::open(spool.join("queue.db"))
        .unwrap()
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    std::fs::read(spool.join("queue.db")).unwrap()
}

/// The page number (from 1) of the procs table's root in a database image.
fn procs_root_page(bytes: &[u8]) -> usize {
    root_page(bytes, "procs")
}

/// The page number (from 1) of table `name`'s root in a database image.
fn root_page(bytes: &[u8], name: &str) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("copy.db");
    std::fs::write(&p, bytes).unwrap();
    let c = rusqlite::Connection::open(&p).unwrap();
    let root: i64 = c
        .query_row(
            "SELECT rootpage FROM sqlite_master WHERE name = ?1",
            [name],
            |r| r.get(0),
        )
        .unwrap();
    root as usize
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Puts `bytes` in place as queue.db, runs every tool, and checks each
/// fails with `stderr` (`{tool}` and `{db}` filled in) and changes nothing.
#[track_caller]
fn refused_by_every_tool(bytes: &[u8], stderr: &str) {
    let (env, spool) = env();
    std::fs::create_dir_all(&spool).unwrap();
    let db = spool.join("queue.db");
    std::fs::write(&db, bytes).unwrap();
    for (tool, args) in TOOLS {
        let r = env.run(tool, *args);
        let want = stderr
            .replace("{tool}", tool)
            .replace("{db}", db.to_str().unwrap());
        assert_eq!(
            (r.code, r.stdout.as_str(), r.stderr.as_str()),
            (1, "", want.as_str()),
            "{tool}"
        );
        assert!(
            std::fs::read(&db).unwrap() == bytes,
            "{tool} changed queue.db"
        );
        assert_eq!(listing(&spool), ["queue.db"], "{tool} left files behind");
    }
}

fn damaged(why: &str) -> String {
    format!(
        "{{tool}}: error: the queue database {{db}} is damaged ({why}); nothing was changed\n{DAMAGED_HINT}"
    )
}

#[test]
fn a_text_file_as_queue_db_is_refused_untouched() {
    refused_by_every_tool(
        b"SQLite format 3? no, a shopping list\n",
        &damaged("file is not a database"),
    );
}

#[test]
fn random_bytes_as_queue_db_are_refused_untouched() {
    let mut rng = Rng::new(7);
    let bytes: Vec<u8> = (0..65536).map(|_| rng.next_u64() as u8).collect();
    refused_by_every_tool(&bytes, &damaged("file is not a database"));
}

#[test]
fn a_queue_db_cut_in_half_is_refused_untouched() {
    let good = good_queue();
    refused_by_every_tool(
        &good[..good.len() / 2],
        &damaged("database disk image is malformed"),
    );
}

#[test]
fn a_queue_db_cut_to_its_first_page_is_refused_untouched() {
    let good = good_queue();
    refused_by_every_tool(&good[..4096], &damaged("database disk image is malformed"));
}

#[test]
fn a_queue_db_cut_inside_its_header_is_refused_untouched() {
    let good = good_queue();
    refused_by_every_tool(&good[..50], &damaged("database disk image is malformed"));
}

/// A database as a newer tern would leave it: tern's own, with a higher
/// `user_version`.
fn newer(journal_mode: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("queue.db");
    std::fs::write(&db, good_queue()).unwrap();
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.pragma_update(None, "journal_mode", journal_mode)
            .unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
    }
    std::fs::read(&db).unwrap()
}

fn newer_schema_error() -> String {
    format!(
        "{{tool}}: error: the queue database has schema version 99, newer than this tern understands ({}); use a newer tern\n\
         hint: this SPOOL was written by a newer tern\n",
        schema::VERSION
    )
}

#[test]
fn a_newer_schema_is_refused_untouched() {
    refused_by_every_tool(&newer("WAL"), &newer_schema_error());
}

#[test]

fn a_newer_schema_in_rollback_journal_mode_is_refused_untouched() {
    refused_by_every_tool(&newer("DELETE"), &newer_schema_error());
}

#[test]
fn a_damaged_page_inside_queue_db_is_refused_untouched() {
    let mut bytes = good_queue();
    // The root page of the procs table, past the schema: the file still
    // opens, and every read of a job fails.
    let page = 4096 * (procs_root_page(&bytes) - 1);
    for b in &mut bytes[page..page + 4096] {
        *b = 0xde;
    }
    let (env, spool) = env();
    std::fs::create_dir_all(&spool).unwrap();
    let db = spool.join("queue.db");
    std::fs::write(&db, &bytes).unwrap();
    for (tool, args) in TOOLS {
        let r = env.run(tool, *args);
        // Writers meet the page when they read the job and refuse with the
        // damage message; readers fail when they reach the page. Either way
        // nothing is written.
        if *tool == "tern_q" {
            assert_eq!(r.code, 1, "{tool}: {r:?}");
            assert!(r.stderr.contains("malformed"), "{tool}: {}", r.stderr);
        } else if *tool != "tern_history" {
            // (tern_history reads only the history tables, which are whole.)
            assert_eq!(r.code, 1, "{tool}: {r:?}");
            let want = damaged("")
                .replace("{tool}", tool)
                .replace("{db}", db.to_str().unwrap());
            let prefix = want.split(" ()").next().unwrap();
            assert!(r.stderr.starts_with(prefix), "{tool}: {}", r.stderr);
        }
        assert!(
            std::fs::read(&db).unwrap() == bytes,
            "{tool} changed queue.db"
        );
        assert_eq!(listing(&spool), ["queue.db"], "{tool} left files behind");
    }
}

#[test]
fn the_pass_checks_every_page_when_its_check_is_due() {
    // History's root: a page no pass reads, so only the check finds it.
    let mut bytes = good_queue();
    let page = 4096 * (root_page(&bytes, "history") - 1);
    for b in &mut bytes[page..page + 4096] {
        *b = 0xde;
    }
    let (env, spool) = env();
    // No slot starts a job: a pass that runs changes only its own records.
    let env = env.var("_TERN_START", Some("False"));
    std::fs::create_dir_all(&spool).unwrap();
    let db = spool.join("queue.db");
    std::fs::write(&db, &bytes).unwrap();
    let damage = damaged("")
        .replace("{tool}", "tern_negotiate")
        .replace("{db}", db.to_str().unwrap());
    let prefix = damage.split(" ()").next().unwrap();
    for args in [&[][..], &["-check"][..]] {
        let r = env.run("tern_negotiate", args);
        assert_eq!(r.code, 1, "{args:?}: {r:?}");
        assert!(r.stderr.starts_with(prefix), "{args:?}: {}", r.stderr);
        assert!(
            std::fs::read(&db).unwrap() == bytes,
            "{args:?} changed queue.db"
        );
    }
    // With the check off, the pass never reads the page and runs.
    let off = env.var("_TERN_QUEUE_CHECK_INTERVAL", Some("0"));
    let r = off.run("tern_negotiate", [] as [&str; 0]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
}

#[test]
fn a_healthy_queue_checks_ok_once_per_interval() {
    let (env, spool) = env();
    let env = env.var("_TERN_START", Some("False"));
    assert_eq!(env.run("tern_submit", ["job.sub"]).code, 0);
    let r = env.run("tern_negotiate", ["-check"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "ok\n"), "{r:?}");
    let last_check = || -> Option<i64> {
        rusqlite::Connection::open(spool.join("queue.db"))
            .unwrap()
            .query_row("SELECT value FROM meta WHERE key = 'last_check'", [], |r| {
                r.get(0)
            })
            .ok()
    };
    let pass_at = |t: i64| {
        let out = env
            .command("tern_negotiate")
            .env("TERN_NOW", t.to_string())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    let t0 = crate::common::NOW;
    pass_at(t0);
    assert_eq!(last_check(), Some(t0));
    // Within the hour: no check; past it: checked again.
    pass_at(t0 + 3000);
    assert_eq!(last_check(), Some(t0));
    pass_at(t0 + 3600);
    assert_eq!(last_check(), Some(t0 + 3600));
}

const SPOOL_HINT: &str = "hint: set SPOOL (or _TERN_SPOOL) to a directory you can write\n";

#[test]
fn a_spool_under_a_regular_file_cannot_be_made() {
    let (env, _) = env();
    let file = env.write("plain", "a regular file\n");
    let spool = file.join("spool");
    let env = env.var("_TERN_SPOOL", Some(spool.to_str().unwrap()));
    let r = env.run("tern_submit", ["job.sub"]);
    let want = format!(
        "tern_submit: error: cannot create the spool directory {}: Not a directory (os error 20)\n{SPOOL_HINT}",
        spool.display()
    );
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (1, "", want.as_str())
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "a regular file\n");
}

#[test]
fn a_spool_that_is_a_regular_file_cannot_be_made() {
    let (env, _) = env();
    let file = env.write("plain", "a regular file\n");
    let env = env.var("_TERN_SPOOL", Some(file.to_str().unwrap()));
    let r = env.run("tern_submit", ["job.sub"]);
    let want = format!(
        "tern_submit: error: cannot create the spool directory {}: File exists (os error 17)\n{SPOOL_HINT}",
        file.display()
    );
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (1, "", want.as_str())
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "a regular file\n");
}

/// Whether permissions bind this process (they do not bind root).
fn permissions_apply(dir: &Path) -> bool {
    std::fs::write(dir.join("probe"), "").is_err()
}

#[test]

fn an_unwritable_spool_is_refused_as_a_permission_problem() {
    use std::os::unix::fs::PermissionsExt;
    let (env, spool) = env();
    std::fs::create_dir_all(&spool).unwrap();
    let db = spool.join("queue.db");
    let good = good_queue();
    std::fs::write(&db, &good).unwrap();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::set_permissions(&spool, std::fs::Permissions::from_mode(0o555)).unwrap();
    if !permissions_apply(&spool) {
        std::fs::set_permissions(&spool, std::fs::Permissions::from_mode(0o700)).unwrap();
        eprintln!("skipped: running as root, so a read-only SPOOL is writable");
        return;
    }
    for (tool, args) in TOOLS {
        let r = env.run(tool, *args);
        // A reader may manage to read; a writer must fail.
        if r.code != 0 || !matches!(*tool, "tern_q" | "tern_history") {
            assert_eq!(r.code, 1, "{tool}: {r:?}");
            assert!(
                r.stderr.starts_with(&format!("{tool}: error: ")) && !r.stderr.contains("damaged"),
                "{tool}: a permission problem is not damage: {}",
                r.stderr
            );
        }
        assert!(
            std::fs::read(&db).unwrap() == good,
            "{tool} changed queue.db"
        );
    }
    std::fs::set_permissions(&spool, std::fs::Permissions::from_mode(0o700)).unwrap();
}
