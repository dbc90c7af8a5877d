//! Queue store tests on a temporary SPOOL.

use crate::vocab::JobStatus;
use std::path::Path;

use super::*;
use crate::config::Config;
use crate::submit::{self, SubmitOptions};

mod old_schemas;
mod wal_upkeep;

fn submit_text(q: &mut Queue, text: &str, owner: &str) -> i64 {
    submit_text_as(q, &Authority::new(owner, vec![]), text, owner).unwrap()
}

fn submit_text_as(
    q: &mut Queue,
    authority: &Authority,
    text: &str,
    owner: &str,
) -> Result<i64, QueueError> {
    let cfg = Config::defaults();
    let f = submit::parse(text, "t.sub", Path::new("/"), &cfg).unwrap();
    let (id, _) = q.submit::<QueueError>(authority, owner, |cluster| {
        let opts = SubmitOptions {
            cluster,
            qdate: 1_700_000_000,
            owner: owner.into(),
            cwd: std::env::temp_dir(),
            environ: vec![],
            batch_name: None,
        };
        submit::materialize(&f, &cfg, &opts).map_err(|e| QueueError::Invalid(e.to_string()))
    })?;
    Ok(id)
}

#[test]
fn only_a_super_user_submits_for_another_owner() {
    let (_d, mut q) = queue();
    let bob = Authority::new("bob", vec!["root".into()]).trusting_all_users();
    let err =
        submit_text_as(&mut q, &bob, "executable = /bin/echo\nqueue 2\n", "alice").unwrap_err();
    assert!(
        matches!(&err, QueueError::SubmitNotPermitted { user, owner } if user == "bob" && owner == "alice"),
        "{err:?}"
    );
    // Nothing was written: no job, and the cluster id was not used up.
    assert!(q.rows(&Selection::default()).unwrap().is_empty());
    assert_eq!(
        submit_text(&mut q, "executable = /bin/echo\nqueue 1\n", "bob"),
        1
    );
    let root = Authority::new("root", vec!["root".into()]);
    assert_eq!(
        submit_text_as(&mut q, &root, "executable = /bin/echo\nqueue 1\n", "alice").unwrap(),
        2
    );
    let owners: Vec<String> = q
        .rows(&Selection::default())
        .unwrap()
        .into_iter()
        .map(|r| r.owner)
        .collect();
    assert_eq!(owners, ["bob", "alice"]);
}

fn queue() -> (tempfile::TempDir, Queue) {
    let dir = tempfile::tempdir().unwrap();
    let q = Queue::open(&dir.path().join("spool"), true)
        .unwrap()
        .unwrap();
    (dir, q)
}

#[test]
fn submit_stores_cluster_and_differences() {
    let (_d, mut q) = queue();
    assert_eq!(q.next_cluster().unwrap(), 1);
    let c = submit_text(
        &mut q,
        "executable = /bin/echo\narguments = $(Process)\nqueue 3\n",
        "alice",
    );
    assert_eq!(c, 1);
    assert_eq!(q.next_cluster().unwrap(), 2);
    let jobs = q.select(&Selection::default()).unwrap();
    assert_eq!(jobs.len(), 3);
    let (row, ad) = &jobs[2];
    assert_eq!(
        row.id,
        JobId {
            cluster: 1,
            proc: 2
        }
    );
    assert_eq!(row.status(), Some(JobStatus::Idle));
    assert_eq!(unparse(ad.get("Args").unwrap()), "\"2\"");
    assert_eq!(unparse(ad.get("ClusterId").unwrap()), "1");
    assert_eq!(unparse(ad.get("Owner").unwrap()), "\"alice\"");
    assert_eq!(q.integrity_check().unwrap(), "ok");
}

#[test]
fn cluster_ids_only_grow_even_when_history_is_trimmed() {
    let (_d, mut q) = queue();
    let a = submit_text(&mut q, "executable = /bin/echo\nqueue\n", "alice");
    q.modify(&Selection::default(), 5, |_, _| Change::Leave {
        set: vec![("JobStatus".into(), JobStatus::Removed.expr())],
    })
    .unwrap();
    q.trim(&Limits {
        log_max_records: 0,
        history_max_jobs: 0,
        ..Limits::default()
    })
    .unwrap();
    let b = submit_text(&mut q, "executable = /bin/echo\nqueue\n", "alice");
    assert!(b > a);
}

#[test]
fn modify_sets_attributes_logs_and_moves_to_history() {
    let (_d, mut q) = queue();
    submit_text(&mut q, "executable = /bin/echo\nqueue 2\n", "alice");
    let start = q.log_start().unwrap();
    let sel = Selection {
        jobs: vec![JobId {
            cluster: 1,
            proc: 0,
        }],
        ..Default::default()
    };
    let done = q
        .modify(&sel, 100, |_, _| {
            Change::Set(vec![
                ("JobStatus".into(), JobStatus::Held.expr()),
                ("HoldReason".into(), Expr::string("why")),
            ])
        })
        .unwrap();
    assert_eq!(done.len(), 1);
    let rows = q.rows(&Selection::default()).unwrap();
    assert_eq!(
        (rows[0].status(), rows[0].entered),
        (Some(JobStatus::Held), 100)
    );
    let log = q.log_since(start).unwrap();
    let ops: Vec<i64> = log.iter().filter(|r| r.seq > start).map(|r| r.op).collect();
    assert!(ops.starts_with(&[op::BEGIN]) || ops.contains(&op::BEGIN));
    assert!(log.iter().any(|r| {
        r.sets()
            .unwrap()
            .contains(&("HoldReason".into(), "\"why\"".into()))
    }));
    q.modify(
        &Selection {
            clusters: vec![1],
            ..Default::default()
        },
        200,
        |_, _| Change::Leave {
            set: vec![("JobStatus".into(), JobStatus::Removed.expr())],
        },
    )
    .unwrap();
    assert!(q.rows(&Selection::default()).unwrap().is_empty());
    let hist = q.history(&Selection::default(), None).unwrap();
    assert_eq!(hist.len(), 2);
    assert_eq!(unparse(hist[0].1.get("JobStatus").unwrap()), "3");
    assert_eq!(unparse(hist[1].1.get("HoldReason").unwrap()), "\"why\"");
    assert!(
        q.log_since(0)
            .unwrap()
            .iter()
            .any(|r| r.op == op::DESTROY_AD && r.key == "01.-1")
    );
}

#[test]
fn the_log_is_never_cut_below_a_follower() {
    let (_d, mut q) = queue();
    submit_text(&mut q, "executable = /bin/echo\nqueue 5\n", "alice");
    q.set_follower("router", 3).unwrap();
    q.trim(&Limits {
        log_max_records: 0,
        history_max_jobs: 10,
        ..Limits::default()
    })
    .unwrap();
    assert_eq!(q.log_start().unwrap(), 4);
    q.remove_follower("router").unwrap();
    let end = q.log_end().unwrap();
    q.trim(&Limits {
        log_max_records: 0,
        history_max_jobs: 10,
        ..Limits::default()
    })
    .unwrap();
    // Only the newest record stays, and the sequence goes on after it.
    let left: Vec<i64> = q.log_since(0).unwrap().iter().map(|r| r.seq).collect();
    assert_eq!(left, vec![end]);
    assert_eq!(q.log_end().unwrap(), end);
    submit_text(&mut q, "executable = /bin/echo\nqueue\n", "alice");
    assert_eq!(q.log_since(end).unwrap()[0].seq, end + 1);
}

#[test]
fn readers_do_not_create_a_queue() {
    let dir = tempfile::tempdir().unwrap();
    assert!(
        Queue::open(&dir.path().join("spool"), false)
            .unwrap()
            .is_none()
    );
    assert!(!dir.path().join("spool").exists());
}

#[test]
fn bad_databases_are_refused_without_damage() {
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    std::fs::create_dir_all(&spool).unwrap();
    std::fs::write(
        spool.join("queue.db"),
        b"this is not a database at all, just text",
    )
    .unwrap();
    let e = Queue::open(&spool, true).err().unwrap();
    assert!(matches!(e, QueueError::Corrupt { .. }), "{e}");
    assert_eq!(
        std::fs::read(spool.join("queue.db")).unwrap(),
        b"this is not a database at all, just text"
    );
    let spool2 = dir.path().join("spool2");
    {
        // A handle opened before a newer tern migrated the database
        // finds out when it asks.
        let q = Queue::open(&spool2, true).unwrap().unwrap();
        q.check_schema().unwrap();
        let other = Connection::open(db_path(&spool2)).unwrap();
        other.execute_batch("PRAGMA user_version = 99").unwrap();
        let e = q.check_schema().err().unwrap();
        assert!(
            matches!(e, QueueError::NewerSchema { found: 99, .. }),
            "{e}"
        );
    }
    let e = Queue::open(&spool2, true).err().unwrap();
    assert!(
        matches!(e, QueueError::NewerSchema { found: 99, .. }),
        "{e}"
    );
}

/// The kept job counts are what counting the rows gives.
fn assert_counts_agree(q: &Queue) {
    let rows = |sql: &str| -> Vec<(String, i64, i64)> {
        q.conn
            .prepare(sql)
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let counted =
        rows("SELECT owner, status, count(*) FROM procs GROUP BY owner, status ORDER BY 1, 2");
    let kept = rows("SELECT owner, status, n FROM job_counts WHERE n > 0 ORDER BY 1, 2");
    assert_eq!(kept, counted);
}

#[test]
fn job_counts_follow_every_write() {
    let (_d, mut q) = queue();
    submit_text(&mut q, "executable = /bin/echo\nqueue 3\n", "alice");
    submit_text(&mut q, "executable = /bin/echo\nqueue 2\n", "bob");
    assert_counts_agree(&q);
    let one = |c, p| Selection {
        jobs: vec![JobId {
            cluster: c,
            proc: p,
        }],
        ..Default::default()
    };
    q.modify(&one(1, 1), 10, |_, _| {
        Change::Set(vec![("JobStatus".into(), JobStatus::Held.expr())])
    })
    .unwrap();
    assert_counts_agree(&q);
    q.modify(&one(2, 0), 11, |_, _| Change::Leave {
        set: vec![("JobStatus".into(), JobStatus::Removed.expr())],
    })
    .unwrap();
    assert_counts_agree(&q);
    assert_eq!(q.meta("history_jobs").unwrap(), Some(1));
    q.modify(&one(1, 2), 12, |_, _| Change::Update {
        set: vec![("JobStatus".into(), JobStatus::Held.expr())],
        delete: vec!["Cmd".into()],
    })
    .unwrap();
    q.modify(&one(1, 2), 13, |_, _| {
        Change::Set(vec![("JobStatus".into(), JobStatus::Idle.expr())])
    })
    .unwrap();
    assert_counts_agree(&q);
    let (all, mine) = q.job_counts("alice").unwrap();
    assert_eq!(all[JobStatus::Idle as usize], 3);
    assert_eq!(all[JobStatus::Held as usize], 1);
    assert_eq!(mine[JobStatus::Idle as usize], 2);
    assert_eq!(mine.iter().sum::<i64>(), 3);
}

/// Counts changed around the writes (by a process of an older build,
/// still running after the schema moved them out of triggers) are put
/// right by a recount, and a recount of right counts writes nothing.
#[test]
fn a_recount_puts_right_counts_changed_around_the_writes() {
    let (_d, mut q) = queue();
    submit_text(&mut q, "executable = /bin/echo\nqueue 3\n", "alice");
    assert!(!q.recount().unwrap());
    // As an older build's shadow would: a job held, another gone to
    // history, the counts untouched.
    q.conn
        .execute_batch(
            "UPDATE procs SET status = 5 WHERE cluster = 1 AND proc = 0; \
             INSERT INTO history (cluster, proc, owner, status, completed, ad) \
                 SELECT cluster, proc, owner, 4, 9, ad FROM procs WHERE proc = 1; \
             DELETE FROM procs WHERE cluster = 1 AND proc = 1;",
        )
        .unwrap();
    let before = q.log_end().unwrap();
    assert!(q.recount().unwrap());
    assert_counts_agree(&q);
    assert_eq!(q.meta("history_jobs").unwrap(), Some(1));
    let (all, _) = q.job_counts("alice").unwrap();
    assert_eq!(all[JobStatus::Held as usize], 1);
    assert_eq!(all.iter().sum::<i64>(), 2);
    // Counts are not job changes: nothing for the log's followers.
    assert_eq!(q.log_end().unwrap(), before);
    assert!(!q.recount().unwrap());
}

/// A submit logs each new ad's attributes in one record, and a change
/// the attributes it sets in one, which read back as the attributes.
#[test]
fn new_ads_and_changes_log_their_attributes_in_one_record() {
    let (_d, mut q) = queue();
    submit_text(&mut q, "executable = /bin/echo\nqueue\n", "alice");
    let log = q.log_since(0).unwrap();
    let shape: Vec<(i64, &str)> = log.iter().map(|r| (r.op, r.key.as_str())).collect();
    assert_eq!(
        shape,
        [
            (op::BEGIN, ""),
            (op::NEW_AD, "01.-1"),
            (op::SET_ATTRS, "01.-1"),
            (op::NEW_AD, "1.0"),
            (op::SET_ATTRS, "1.0"),
            (op::END, ""),
        ]
    );
    let cluster = log[2].sets().unwrap();
    assert!(
        cluster.contains(&("Owner".into(), "\"alice\"".into())),
        "{cluster:?}"
    );
    assert!(
        cluster.contains(&("Cmd".into(), "\"/bin/echo\"".into())),
        "{cluster:?}"
    );
    let end = log.last().unwrap().seq;
    q.modify(&Selection::default(), 10, |_, _| {
        Change::Set(vec![
            ("JobStatus".into(), JobStatus::Held.expr()),
            ("HoldReason".into(), Expr::string("why")),
        ])
    })
    .unwrap();
    let log = q.log_since(end).unwrap();
    let ops: Vec<i64> = log.iter().map(|r| r.op).collect();
    assert_eq!(ops, [op::BEGIN, op::SET_ATTRS, op::END]);
    let mut sets = log[1].sets().unwrap();
    sets.sort();
    assert_eq!(
        sets,
        [
            ("EnteredCurrentStatus".to_string(), "10".to_string()),
            ("HoldReason".into(), "\"why\"".into()),
            ("JobStatus".into(), "5".into()),
        ]
    );
}

#[test]
fn writes_keep_the_log_and_history_within_their_limits() {
    let (_d, mut q) = queue();
    q.set_limits(Limits {
        log_max_records: 20,
        history_max_jobs: 3,
        ..Limits::default()
    });
    for _ in 0..5 {
        submit_text(&mut q, "executable = /bin/echo\nqueue 4\n", "alice");
    }
    assert!(q.log_since(0).unwrap().len() <= 20);
    q.modify(&Selection::default(), 9, |_, _| Change::Leave {
        set: vec![("JobStatus".into(), JobStatus::Removed.expr())],
    })
    .unwrap();
    assert_eq!(q.history(&Selection::default(), None).unwrap().len(), 3);
    assert_eq!(q.meta("history_jobs").unwrap(), Some(3));
    assert!(q.log_since(0).unwrap().len() <= 20);
}

#[test]
fn a_stride_of_growth_is_looked_at_once_whatever_the_writes() {
    assert_eq!(limit_stride(1_000_000), 10_000);
    assert_eq!(limit_stride(150), 1);
    assert_eq!(limit_stride(0), 1);
    assert!(holds_multiple(1, 6, 5));
    assert!(holds_multiple(5, 5, 5));
    assert!(!holds_multiple(6, 9, 5));
    assert!(holds_multiple(6, 10, 5));
    assert!(!holds_multiple(4, 3, 1), "an empty range holds nothing");
    // Ranges that follow one another, of any lengths, see each multiple
    // exactly once.
    let (mut from, mut seen) = (1, 0);
    for len in [1, 6, 3, 40, 2, 9, 1, 1, 25] {
        let to = from + len - 1;
        if holds_multiple(from, to, 7) {
            seen += to / 7 - (from - 1) / 7;
        }
        from = to + 1;
    }
    assert_eq!(seen, (from - 1) / 7);
}

/// Several handles (as several processes) writing small transactions in
/// turn keep the log within a stride (1%) of its limit and history within
/// its limit, and each is trimmed when it passes.
#[test]
fn small_writes_of_many_handles_keep_the_log_and_history_near_their_limits() {
    let (d, mut first) = queue();
    let limits = Limits {
        log_max_records: 1000,
        history_max_jobs: 200,
        ..Limits::default()
    };
    submit_text(&mut first, "executable = /bin/echo\nqueue 400\n", "alice");
    let mut handles: Vec<Queue> = (0..3)
        .map(|_| {
            Queue::open(&d.path().join("spool"), false)
                .unwrap()
                .unwrap()
        })
        .collect();
    for h in &mut handles {
        h.set_limits(limits.clone());
    }
    let (mut log_peak, mut history_peak, mut log_trims, mut last_len) = (0, 0, 0, 0);
    for (i, row) in first
        .rows(&Selection::default())
        .unwrap()
        .iter()
        .enumerate()
    {
        let h = &mut handles[i % 3];
        let id = Selection {
            jobs: vec![row.id],
            ..Selection::default()
        };
        // A small change, then the job leaves: 3 records, then 4 and a
        // history entry.
        h.modify(&id, 10, |_, _| {
            Change::Set(vec![("Note".into(), Expr::int(i as i64))])
        })
        .unwrap();
        h.modify(&id, 11, |_, _| Change::Leave {
            set: vec![("JobStatus".into(), JobStatus::Removed.expr())],
        })
        .unwrap();
        let len = h.log_end().unwrap() - h.log_start().unwrap() + 1;
        if len < last_len {
            log_trims += 1;
        }
        last_len = len;
        log_peak = log_peak.max(len);
        history_peak = history_peak.max(h.meta("history_jobs").unwrap().unwrap());
    }
    assert!(log_peak > 1000 * 9 / 10, "the log grew to {log_peak}");
    assert!(log_peak <= 1000 + 10 + 4, "the log reached {log_peak}");
    assert!(log_trims >= 2, "{log_trims} trims");
    assert!(history_peak <= 200, "history reached {history_peak}");
    let kept = first.history(&Selection::default(), None).unwrap().len() as i64;
    assert!((180..=200).contains(&kept), "{kept} jobs in history");
    assert_eq!(first.meta("history_jobs").unwrap(), Some(kept));
}

/// `Change::after` leaves a job as the two changes in a row leave it.
#[test]
fn a_change_after_a_set_leaves_what_the_two_in_a_row_leave() {
    let (_d, mut q) = queue();
    let text = "executable = /bin/echo\n+Kept = 1\n+Gone = 2\nqueue 2\n";
    let c = submit_text(&mut q, text, "alice");
    let first = || {
        vec![
            ("NumJobStarts".to_string(), Expr::int(1)),
            ("Gone".to_string(), Expr::int(7)),
            ("Both".to_string(), Expr::int(1)),
            ("JobPrio".to_string(), Expr::int(4)),
        ]
    };
    let then = || Change::Update {
        set: vec![
            ("Both".to_string(), Expr::int(2)),
            ("JobStatus".to_string(), JobStatus::Held.expr()),
        ],
        delete: vec!["gone".to_string(), "Kept".to_string()],
    };
    let job = |proc| Selection {
        jobs: vec![JobId { cluster: c, proc }],
        ..Selection::default()
    };
    q.modify(&job(0), 20, |_, _| Change::Set(first())).unwrap();
    q.modify(&job(0), 20, |_, _| then()).unwrap();
    q.modify(&job(1), 20, |_, _| then().after(first())).unwrap();
    let ads = q.select(&Selection::default()).unwrap();
    let shown = |i: usize| {
        let (row, ad) = &ads[i];
        let mut ad = ad.clone();
        ad.remove("ProcId");
        (row.status, row.prio, ad_to_string(&ad))
    };
    assert_eq!(shown(0), shown(1));
    let (row, ad) = &ads[1];
    let get = |n: &str| ad.get(n).map(unparse);
    assert_eq!(get("Both").as_deref(), Some("2"));
    assert_eq!(get("NumJobStarts").as_deref(), Some("1"));
    assert_eq!(get("Gone").as_deref(), Some("undefined"));
    assert_eq!(get("Kept").as_deref(), Some("undefined"));
    assert_eq!((row.status, row.prio), (JobStatus::Held.code(), 4));
    // Leave, Set and Skip take `first` too; nothing to set changes nothing.
    let leave = Change::Leave { set: vec![] }.after(first());
    assert!(matches!(leave, Change::Leave { set } if set.len() == 4));
    assert!(matches!(Change::Skip("x".into()).after(first()), Change::Set(s) if s.len() == 4));
    assert!(matches!(
        Change::Skip("x".into()).after(vec![]),
        Change::Skip(_)
    ));
}

/// What a refusal must leave alone: every job, its status and ad, the
/// requests and the log.
fn snapshot(q: &Queue) -> (Vec<String>, Vec<Request>, i64) {
    let jobs = q
        .select(&Selection::default())
        .unwrap()
        .iter()
        .map(|(row, ad)| format!("{} {} {}", row.id, row.status, ad_to_string(ad)))
        .collect();
    let id = JobId {
        cluster: 1,
        proc: 0,
    };
    let last = q.log_since(0).unwrap().last().map_or(0, |r| r.seq);
    (jobs, q.requests(id).unwrap(), last)
}

#[test]
fn write_as_refuses_every_write_to_another_users_job_and_changes_nothing() {
    let (_d, mut q) = queue();
    submit_text(&mut q, "executable = /bin/echo\nqueue\n", "alice");
    submit_text(&mut q, "executable = /bin/echo\nqueue\n", "bob");
    let bob = Authority::new("bob", vec!["root".into()]);
    let alices = q.rows(&Selection::default()).unwrap()[0].clone();
    let before = snapshot(&q);
    let set = Change::Set(vec![("A".into(), Expr::int(1))]);
    let leave = Change::Leave {
        set: vec![("JobStatus".into(), JobStatus::Removed.expr())],
    };
    let update = Change::Update {
        set: vec![],
        delete: vec!["Cmd".into()],
    };
    for change in [set, leave, update] {
        let e = q
            .write_as(&bob, 10, |w| {
                // Bob's own job first: the refusal undoes it too.
                let own = w.rows(&Selection::default())?[1].clone();
                let ad = w.full_ad(&own)?;
                w.change(&own, &ad, &Change::Set(vec![("B".into(), Expr::int(2))]))?;
                let ad = w.full_ad(&alices)?;
                w.change(&alices, &ad, &change)
            })
            .unwrap_err();
        assert!(
            matches!(&e, QueueError::NotPermitted { job, user, owner }
                if *job == alices.id && user == "bob" && owner == "alice"),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            "permission denied: bob may not change job 1.0, which belongs to alice"
        );
        assert_eq!(snapshot(&q), before);
    }
    let e = q
        .write_as(&bob, 10, |w| w.request(alices.id, Request::Remove))
        .unwrap_err();
    assert!(matches!(e, QueueError::NotPermitted { .. }), "{e}");
    q.write(10, |w| w.request(alices.id, Request::Hold))
        .unwrap();
    let before = snapshot(&q);
    let e = q
        .write_as(&bob, 10, |w| w.clear_requests(alices.id, None))
        .unwrap_err();
    assert!(matches!(e, QueueError::NotPermitted { .. }), "{e}");
    assert_eq!(snapshot(&q), before);
    // A row whose owner was changed by the caller is checked all the same.
    let mut forged = alices.clone();
    forged.owner = "bob".into();
    let e = q
        .write_as(&bob, 10, |w| {
            let ad = w.full_ad(&forged)?;
            w.change(&forged, &ad, &Change::Set(vec![("A".into(), Expr::int(1))]))
        })
        .unwrap_err();
    assert!(matches!(e, QueueError::NotPermitted { .. }), "{e}");
    assert_eq!(snapshot(&q), before);
}

#[test]
fn write_as_lets_owners_and_super_users_write() {
    let (_d, mut q) = queue();
    submit_text(&mut q, "executable = /bin/echo\nqueue\n", "alice");
    let row = q.rows(&Selection::default()).unwrap()[0].clone();
    for who in [
        Authority::new("alice", vec![]),
        Authority::new("root", vec!["root".into()]),
    ] {
        q.write_as(&who, 10, |w| {
            assert!(w.may_change(&row));
            let ad = w.full_ad(&row)?;
            w.change(&row, &ad, &Change::Set(vec![("A".into(), Expr::int(1))]))?;
            w.request(row.id, Request::Vacate)?;
            w.clear_requests(row.id, None)
        })
        .unwrap();
    }
    let bob = Authority::new("bob", vec![]);
    q.write_as(&bob, 10, |w| {
        assert!(!w.may_change(&row));
        Ok(())
    })
    .unwrap();
    // The system writer may change anyone's job.
    q.write(10, |w| {
        assert!(w.may_change(&row));
        Ok(())
    })
    .unwrap();
}

#[test]
fn a_missing_cluster_ad_is_one_error_for_readers_and_writers() {
    let (_dir, mut q) = queue();
    let want = "cluster 77 has no cluster ad";
    match q.cluster_ad(77) {
        Err(QueueError::Invalid(m)) => assert_eq!(m, want),
        other => panic!("reader: {other:?}"),
    }
    match q.write(10, |w| w.cluster_ad(77).map(|_| ())) {
        Err(QueueError::Invalid(m)) => assert_eq!(m, want),
        other => panic!("writer: {other:?}"),
    }
}

/// The "cluster 130 has no cluster ad" that failed a pass in the router's
/// end-to-end test: a reader holds a row, the cluster's last job leaves
/// through another handle, and the reader asks for the job's ad.
#[test]
fn a_reader_gets_the_ad_of_a_job_whose_cluster_left_after_the_row_was_read() {
    let (dir, mut q) = queue();
    let c = submit_text(
        &mut q,
        "executable = /bin/echo\narguments = 7\nqueue\n",
        "alice",
    );
    let rows = q.idle_rows().unwrap();
    let mut other = Queue::open(&dir.path().join("spool"), false)
        .unwrap()
        .unwrap();
    other
        .modify(&Selection::default(), 5, |_, _| Change::Leave {
            set: vec![("JobStatus".into(), JobStatus::Removed.expr())],
        })
        .unwrap();
    assert!(q.row(rows[0].id).unwrap().is_none(), "the job has left");
    let ad = q.full_ad(&rows[0]).unwrap();
    assert_eq!(unparse(ad.get("ClusterId").unwrap()), c.to_string());
    assert_eq!(unparse(ad.get("Args").unwrap()), "\"7\"");
}

#[test]
fn changes_since_a_position_name_the_changed_jobs_and_skip_our_own() {
    let (d, mut q) = queue();
    submit_text(&mut q, "executable = /bin/echo\nqueue 3\n", "alice");
    submit_text(&mut q, "executable = /bin/echo\nqueue 2\n", "bob");
    let start = q.log_end().unwrap();
    let ids =
        |rows: Vec<JobRow>| -> Vec<String> { rows.iter().map(|r| r.id.to_string()).collect() };
    assert_eq!(
        ids(q.rows_changed_since(start).unwrap().unwrap()),
        Vec::<String>::new()
    );
    let one = |c, p| Selection {
        jobs: vec![JobId {
            cluster: c,
            proc: p,
        }],
        ..Default::default()
    };
    let hold =
        |_: &JobRow, _: &ClassAd| Change::Set(vec![("JobStatus".into(), JobStatus::Held.expr())]);
    // Another handle's change, then ours: we see through nothing of it.
    let mut other = Queue::open(&d.path().join("spool"), false)
        .unwrap()
        .unwrap();
    other.modify(&one(1, 1), 10, hold).unwrap();
    q.modify(&one(2, 0), 11, hold).unwrap();
    assert_eq!(
        ids(q.rows_changed_since(start).unwrap().unwrap()),
        ["1.1", "2.0"]
    );
    assert_eq!(q.seen_through(start), start);
    // Only ours after it: all of it is seen.
    let mid = q.log_end().unwrap();
    q.modify(&one(1, 2), 12, hold).unwrap();
    assert_eq!(q.seen_through(mid), q.log_end().unwrap());
    // A job that left is not a row; a trimmed log answers None.
    q.modify(&one(1, 0), 13, |_, _| Change::Leave {
        set: vec![("JobStatus".into(), JobStatus::Removed.expr())],
    })
    .unwrap();
    assert_eq!(ids(q.rows_changed_since(mid).unwrap().unwrap()), ["1.2"]);
    q.conn
        .execute("DELETE FROM txlog WHERE seq <= ?1", [mid + 1])
        .unwrap();
    assert!(q.rows_changed_since(mid).unwrap().is_none());
    assert!(q.rows_changed_since(mid + 1).unwrap().is_some());
}

/// The refusal a submission of `text` by `authority` (for its own user)
/// meets, and that it left the queue empty.
fn refused_submit(authority: &Authority, text: &str) -> QueueError {
    let (_d, mut q) = queue();
    let e = submit_text_as(&mut q, authority, text, authority.user()).unwrap_err();
    assert!(q.rows(&Selection::default()).unwrap().is_empty(), "{e}");
    assert_eq!(q.next_cluster().unwrap(), 1, "{e}");
    e
}

#[test]
fn a_forged_owner_user_or_id_is_refused_in_the_schedds_words() {
    let alice = Authority::new("alice", vec![]).with_uid(1234);
    let cases = [
        (
            "+Owner = \"bob\"\n",
            "Owner",
            "\"bob\"",
            "Setting owner to bob when active owner is alice is not permitted",
        ),
        (
            "MY.Owner = \"root\"\n",
            "Owner",
            "\"root\"",
            "Setting owner to root when active owner is alice is not permitted",
        ),
        (
            "+Owner = Owner\n",
            "Owner",
            "Owner",
            "Unable to set owner to Owner as it is not a valid owner string",
        ),
        (
            "+User = \"bob@h\"\n",
            "User",
            "\"bob@h\"",
            "Setting User to \"bob@h\" when active owner is alice is not permitted",
        ),
        (
            "+ClusterId = 7\n",
            "ClusterId",
            "7",
            "Setting cluster ID 1 to new value (7) is not permitted",
        ),
    ];
    for (line, attr, value, reason) in cases {
        let text = format!("executable = /bin/echo\n{line}queue 2\n");
        let (_d, mut q) = queue();
        let got = submit_text_as(&mut q, &alice, &text, "alice");
        assert!(got.is_err(), "{line} was queued");
        match refused_submit(&alice, &text) {
            QueueError::SubmitRefused {
                attr: a,
                value: v,
                reason: r,
                ..
            } => assert_eq!((a.as_str(), v.as_str(), r.as_str()), (attr, value, reason)),
            other => panic!("{line}: {other:?}"),
        }
    }
    // A super user impersonates nobody either: the queue has no
    // QUEUE_SUPER_USER_MAY_IMPERSONATE.
    let root = Authority::new("root", vec!["root".into()]);
    assert!(matches!(
        refused_submit(&root, "executable = /bin/echo\n+Owner = \"bob\"\nqueue\n"),
        QueueError::SubmitRefused { .. }
    ));
}

#[test]
fn owner_uid_is_the_queues_and_undefined_owner_is_the_submitter() {
    let (_d, mut q) = queue();
    let alice = Authority::new("alice", vec![]).with_uid(1234);
    // The builder numbers the procs whatever `+ProcId` says.
    let text = "executable = /bin/echo\n+OwnerUid = 0\n+Owner = undefined\n+ProcId = 0\narguments = $(Process)\nqueue 2\n";
    let c = submit_text_as(&mut q, &alice, text, "alice").unwrap();
    let jobs = q.select(&Selection::default()).unwrap();
    assert_eq!(jobs.len(), 2);
    for (i, (row, ad)) in jobs.into_iter().enumerate() {
        assert_eq!(
            row.id,
            JobId {
                cluster: c,
                proc: i as i64
            }
        );
        assert_eq!(Rc::new(ad.clone()).eval_int("ProcId"), Some(i as i64));
        assert_eq!(Rc::new(ad.clone()).eval_int("OwnerUid"), Some(1234));
        assert_eq!(
            Rc::new(ad.clone()).eval_str("Owner").as_deref(),
            Some("alice")
        );
    }
    // An owner this machine does not know gets a uid no account has.
    let (_d, mut q) = queue();
    let root = Authority::new("root", vec!["root".into()]).with_uid(0);
    submit_text_as(
        &mut q,
        &root,
        "executable = /bin/echo\nqueue\n",
        "no-such-user-tern",
    )
    .unwrap();
    let (_, ad) = &q.select(&Selection::default()).unwrap()[0];
    assert_eq!(Rc::new(ad.clone()).eval_int("OwnerUid"), Some(-1));
}

#[test]
fn root_owns_no_job_in_shared_mode_but_may_in_personal_mode() {
    let root = Authority::new("root", vec!["root".into()]).with_uid(0);
    match refused_submit(
        &root.clone().sharing(true),
        "executable = /bin/echo\nqueue\n",
    ) {
        QueueError::SubmitRefused { reason, .. } => {
            assert_eq!(reason, "Setting job owner to \"root\" is not permitted")
        }
        other => panic!("{other:?}"),
    }
    let alice = Authority::new("alice", vec![]).sharing(true);
    match refused_submit(&alice, "executable = /bin/echo\n+Owner = \"root\"\nqueue\n") {
        QueueError::SubmitRefused { reason, .. } => {
            assert_eq!(reason, "Setting job owner to \"root\" is not permitted")
        }
        other => panic!("{other:?}"),
    }
    let (_d, mut q) = queue();
    assert_eq!(
        submit_text_as(&mut q, &root, "executable = /bin/echo\nqueue\n", "root").unwrap(),
        1
    );
}

#[test]
fn submissions_over_the_job_limits_queue_nothing() {
    let (_d, mut q) = queue();
    q.set_limits(Limits {
        max_jobs_per_submission: 3,
        max_jobs_per_owner: 5,
        ..Limits::default()
    });
    let alice = Authority::new("alice", vec![]);
    let e =
        submit_text_as(&mut q, &alice, "executable = /bin/echo\nqueue 4\n", "alice").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Number of submitted jobs would exceed MAX_JOBS_PER_SUBMISSION (3)"
    );
    submit_text_as(&mut q, &alice, "executable = /bin/echo\nqueue 3\n", "alice").unwrap();
    let e =
        submit_text_as(&mut q, &alice, "executable = /bin/echo\nqueue 3\n", "alice").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Number of submitted jobs would exceed MAX_JOBS_PER_OWNER (5)"
    );
    // The limit is the owner's: bob has his own.
    submit_text(&mut q, "executable = /bin/echo\nqueue 3\n", "bob");
    assert_eq!(q.rows(&Selection::default()).unwrap().len(), 6);
}

#[test]
fn a_users_writer_sets_no_immutable_secure_or_protected_attribute() {
    let (_d, mut q) = queue();
    submit_text(&mut q, "executable = /bin/echo\nqueue\n", "alice");
    let alice = Authority::new("alice", vec!["root".into()])
        .with_attr_lists(vec!["Color".into()], vec!["AcctGroup".into()]);
    let root = Authority::new("root", vec!["root".into()])
        .with_attr_lists(vec![], vec!["AcctGroup".into()]);
    let set = |q: &mut Queue, a: &Authority, name: &str| {
        q.write_as(a, 5, |w| {
            let row = w.rows(&Selection::default())?.remove(0);
            let ad = w.full_ad(&row)?;
            w.set_attrs(&row, &ad, &[(name.to_string(), Expr::int(1))])
        })
    };
    for (name, class) in [
        ("owner", "immutable"),
        ("OwnerUid", "immutable"),
        ("JobStatus", "immutable"),
        ("Color", "immutable"),
        ("ShadowPid", "secure"),
    ] {
        match set(&mut q, &alice, name) {
            Err(QueueError::AttrNotPermitted { attr, class: c, .. }) => {
                assert_eq!((attr.as_str(), c), (name, class))
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    assert!(matches!(
        set(&mut q, &alice, "AcctGroup"),
        Err(QueueError::ProtectedAttr { .. })
    ));
    set(&mut q, &root, "AcctGroup").unwrap();
    set(&mut q, &alice, "Note").unwrap();
    // An action's change that would touch who the job is is refused too.
    let e = q
        .write_as(&alice, 6, |w| {
            let row = w.rows(&Selection::default())?.remove(0);
            let ad = w.full_ad(&row)?;
            w.change(&row, &ad, &Change::Set(vec![("User".into(), Expr::int(1))]))
        })
        .unwrap_err();
    assert!(matches!(e, QueueError::AttrNotPermitted { .. }), "{e}");
    let (_, ad) = &q.select(&Selection::default()).unwrap()[0];
    assert_eq!(Rc::new(ad.clone()).eval_int("AcctGroup"), Some(1));
    assert_eq!(Rc::new(ad.clone()).eval_int("Note"), Some(1));
    assert!(
        Rc::new(ad.clone())
            .eval_str("User")
            .unwrap()
            .starts_with("alice@")
    );
}
