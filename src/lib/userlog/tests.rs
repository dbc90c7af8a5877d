//! The event log: exact text per event, read-back of every event, both
//! date forms, errors with their lines, and appends from many writers.

use std::path::Path;

use chrono::{Datelike, Local, TimeZone};

use super::*;

const T: i64 = 1_700_000_000;

fn id(c: i64, p: i64) -> EventId {
    EventId {
        cluster: c,
        proc: p,
        subproc: 0,
    }
}

fn ev(c: i64, p: i64, kind: EventKind) -> Event {
    Event {
        id: id(c, p),
        time: T,
        kind,
    }
}

fn local_date(t: i64, pattern: &str) -> String {
    Local
        .timestamp_opt(t, 0)
        .unwrap()
        .format(pattern)
        .to_string()
}

/// Asserts the whole text of `e` (the date filled in as local time) and
/// that it reads back as `e`.
#[track_caller]
fn text_is(e: &Event, header_ids: &str, rest: &str) {
    let date = local_date(e.time, "%Y-%m-%d %H:%M:%S");
    let want = format!("{header_ids} {date} {rest}");
    let got = format(e);
    assert_eq!(got, want);
    assert_eq!(read(&got).unwrap(), vec![e.clone()], "read back of\n{got}");
}

fn usage(user: i64, sys: i64) -> Rusage {
    Rusage { user, sys }
}

fn res(name: &str, u: Option<f64>, r: Option<f64>, a: Option<f64>) -> Resource {
    Resource {
        name: name.into(),
        usage: u,
        request: r,
        allocated: a,
        assigned: None,
    }
}

fn termination(exit: Exit, resources: Vec<Resource>) -> EventKind {
    EventKind::Terminated(Box::new(Termination {
        exit,
        run_remote: usage(1, 2),
        run_local: usage(0, 0),
        total_remote: usage(90061, 3600),
        total_local: usage(0, 59),
        sent_bytes: 10.0,
        received_bytes: 2048.0,
        total_sent_bytes: 30.0,
        total_received_bytes: 4096.0,
        resources,
    }))
}

#[test]
fn submit_event() {
    text_is(
        &ev(
            1,
            0,
            EventKind::Submit {
                host: "<127.0.0.1:0?alias=vm>".into(),
                log_notes: None,
                user_notes: None,
            },
        ),
        "000 (001.000.000)",
        "Job submitted from host: <127.0.0.1:0?alias=vm>\n...\n",
    );
    text_is(
        &ev(
            1234567,
            12,
            EventKind::Submit {
                host: "<127.0.0.1:0?alias=vm>".into(),
                log_notes: Some("DAG Node: A".into()),
                user_notes: Some("my notes".into()),
            },
        ),
        "000 (1234567.012.000)",
        "Job submitted from host: <127.0.0.1:0?alias=vm>\n    DAG Node: A\n    my notes\n...\n",
    );
}

#[test]
fn execute_event_sorts_its_properties() {
    let e = ev(
        2,
        1,
        EventKind::Execute {
            host: "<127.0.0.1:0?alias=vm>".into(),
            slot_name: Some("slot1_1@vm".into()),
            props: vec![
                ("Memory".into(), "128".into()),
                ("cpus".into(), "1".into()),
                ("Disk".into(), "1024".into()),
            ],
        },
    );
    let text = format(&e);
    assert!(
        text.ends_with(
            " Job executing on host: <127.0.0.1:0?alias=vm>\n\tSlotName: slot1_1@vm\n\
             \tcpus = 1\n\tDisk = 1024\n\tMemory = 128\n...\n"
        ),
        "{text}"
    );
    let EventKind::Execute { props, .. } = &read(&text).unwrap()[0].kind else {
        panic!("not an execute event");
    };
    assert_eq!(
        props,
        &[
            ("cpus".to_string(), "1".to_string()),
            ("Disk".into(), "1024".into()),
            ("Memory".into(), "128".into())
        ]
    );
    text_is(
        &ev(
            2,
            0,
            EventKind::Execute {
                host: "<h>".into(),
                slot_name: None,
                props: vec![],
            },
        ),
        "001 (002.000.000)",
        "Job executing on host: <h>\n...\n",
    );
}

#[test]
fn evicted_events() {
    let base = |how, code, reason: Option<&str>, resources| {
        ev(
            3,
            0,
            EventKind::Evicted {
                code,
                how,
                run_remote: usage(1, 0),
                run_local: usage(0, 0),
                sent_bytes: 0.0,
                received_bytes: 1500.0,
                reason: reason.map(str::to_string),
                resources,
            },
        )
    };
    text_is(
        &base(Eviction::CpuTimes, None, Some("preempted"), vec![]),
        "004 (003.000.000)",
        "Job was evicted.\n\t(0) CPU times\n\
         \t\tUsr 0 00:00:01, Sys 0 00:00:00  -  Run Remote Usage\n\
         \t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n\
         \t0  -  Run Bytes Sent By Job\n\t1500  -  Run Bytes Received By Job\n\
         \tReason: preempted\n...\n",
    );
    text_is(
        &base(Eviction::Checkpointed, Some((21, 3)), None, vec![]),
        "004 (003.000.000)",
        "Job was evicted. Code 21 Subcode 3\n\t(1) Job was checkpointed.\n\
         \t\tUsr 0 00:00:01, Sys 0 00:00:00  -  Run Remote Usage\n\
         \t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n\
         \t0  -  Run Bytes Sent By Job\n\t1500  -  Run Bytes Received By Job\n...\n",
    );
    text_is(
        &base(
            Eviction::Requeued(Exit::Signal {
                signal: 9,
                core_file: Some("/tmp/core.1".into()),
            }),
            None,
            Some("OnExitRemove was false"),
            vec![res("Cpus", Some(0.5), Some(1.0), Some(1.0))],
        ),
        "004 (003.000.000)",
        "Job was evicted.\n\t(0) Job terminated and was requeued\n\
         \t\tUsr 0 00:00:01, Sys 0 00:00:00  -  Run Remote Usage\n\
         \t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n\
         \t0  -  Run Bytes Sent By Job\n\t1500  -  Run Bytes Received By Job\n\
         \t(0) Abnormal termination (signal 9)\n\t(1) Corefile in: /tmp/core.1\n\
         \tOnExitRemove was false\n\
         \tPartitionable Resources :    Usage  Request Allocated \n\
         \t   Cpus                 :     0.50        1         1 \n...\n",
    );
    let requeued_normally = base(
        Eviction::Requeued(Exit::Normal { return_value: 3 }),
        None,
        None,
        vec![],
    );
    assert_eq!(
        read(&format(&requeued_normally)).unwrap(),
        vec![requeued_normally]
    );
}

#[test]
fn terminated_events() {
    text_is(
        &ev(4, 2, termination(Exit::Normal { return_value: 0 }, vec![])),
        "005 (004.002.000)",
        "Job terminated.\n\t(1) Normal termination (return value 0)\n\
         \t\tUsr 0 00:00:01, Sys 0 00:00:02  -  Run Remote Usage\n\
         \t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n\
         \t\tUsr 1 01:01:01, Sys 0 01:00:00  -  Total Remote Usage\n\
         \t\tUsr 0 00:00:00, Sys 0 00:00:59  -  Total Local Usage\n\
         \t10  -  Run Bytes Sent By Job\n\t2048  -  Run Bytes Received By Job\n\
         \t30  -  Total Bytes Sent By Job\n\t4096  -  Total Bytes Received By Job\n...\n",
    );
    text_is(
        &ev(
            4,
            3,
            termination(
                Exit::Signal {
                    signal: 11,
                    core_file: None,
                },
                vec![
                    res("Cpus", Some(0.05), Some(1.0), Some(1.0)),
                    res("Disk", Some(40.0), Some(1024.0), Some(2048.0)),
                    res("Memory", Some(3.0), Some(128.0), Some(128.0)),
                ],
            ),
        ),
        "005 (004.003.000)",
        "Job terminated.\n\t(0) Abnormal termination (signal 11)\n\t(0) No core file\n\
         \t\tUsr 0 00:00:01, Sys 0 00:00:02  -  Run Remote Usage\n\
         \t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n\
         \t\tUsr 1 01:01:01, Sys 0 01:00:00  -  Total Remote Usage\n\
         \t\tUsr 0 00:00:00, Sys 0 00:00:59  -  Total Local Usage\n\
         \t10  -  Run Bytes Sent By Job\n\t2048  -  Run Bytes Received By Job\n\
         \t30  -  Total Bytes Sent By Job\n\t4096  -  Total Bytes Received By Job\n\
         \tPartitionable Resources :    Usage  Request Allocated \n\
         \t   Cpus                 :     0.05        1         1 \n\
         \t   Disk (KB)            :    40        1024      2048 \n\
         \t   Memory (MB)          :     3         128       128 \n...\n",
    );
}

#[test]
fn resource_rows_are_written_sorted_by_name() {
    let rows = |names: &[&str]| {
        let e = ev(
            5,
            0,
            termination(
                Exit::Normal { return_value: 0 },
                names
                    .iter()
                    .map(|n| res(n, Some(1.0), Some(1.0), Some(1.0)))
                    .collect(),
            ),
        );
        format(&e)
    };
    assert_eq!(
        rows(&["memory", "Disk", "Cpus"]),
        rows(&["Cpus", "Disk", "memory"])
    );
}

#[test]
fn resource_table_widens_for_wide_values_and_assigned_ids() {
    let mut gpus = res("Gpus", Some(0.25), Some(1.0), Some(1.0));
    gpus.assigned = Some("\"GPU-0f3a\"".into());
    let e = ev(
        5,
        0,
        termination(
            Exit::Normal { return_value: 1 },
            vec![
                res("Cpus", None, Some(1.0), Some(1.0)),
                res("Disk", Some(123456789012.0), Some(1.0), None),
                gpus,
            ],
        ),
    );
    let text = format(&e);
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("\tPartitionable"))
        .collect();
    assert_eq!(
        table,
        [
            "\tPartitionable Resources :           Usage  Request Allocated Assigned",
            "\t   Cpus                 :                        1         1 ",
            "\t   Disk (KB)            : 123456789012           1           ",
            "\t   Gpus (Average)       :            0.25        1         1 \"GPU-0f3a\"",
            "...",
        ]
    );
    assert_eq!(read(&text).unwrap(), vec![e]);
}

#[test]
fn image_size_events() {
    text_is(
        &ev(
            6,
            0,
            EventKind::ImageSize {
                size_kb: 2048,
                memory_usage_mb: Some(2),
                resident_set_size_kb: Some(1900),
                proportional_set_size_kb: Some(1800),
            },
        ),
        "006 (006.000.000)",
        "Image size of job updated: 2048\n\t2  -  MemoryUsage of job (MB)\n\
         \t1900  -  ResidentSetSize of job (KB)\n\
         \t1800  -  ProportionalSetSize of job (KB)\n...\n",
    );
    text_is(
        &ev(
            6,
            1,
            EventKind::ImageSize {
                size_kb: 7,
                memory_usage_mb: None,
                resident_set_size_kb: None,
                proportional_set_size_kb: None,
            },
        ),
        "006 (006.001.000)",
        "Image size of job updated: 7\n...\n",
    );
}

#[test]
fn aborted_suspended_held_released_events() {
    text_is(
        &Event {
            time: T,
            ..Event::aborted(
                JobId {
                    cluster: 7,
                    proc: 0,
                },
                &by_user_reason("tern_rm", "alice"),
            )
        },
        "009 (007.000.000)",
        "Job was aborted.\n\tvia tern_rm (by user alice)\n...\n",
    );
    text_is(
        &ev(7, 0, EventKind::Aborted { reason: None }),
        "009 (007.000.000)",
        "Job was aborted.\n...\n",
    );
    text_is(
        &ev(7, 1, EventKind::Suspended { processes: 3 }),
        "010 (007.001.000)",
        "Job was suspended.\n\tNumber of processes actually suspended: 3\n...\n",
    );
    text_is(
        &ev(7, 1, EventKind::Unsuspended),
        "011 (007.001.000)",
        "Job was unsuspended.\n...\n",
    );
    text_is(
        &ev(
            7,
            2,
            EventKind::Held {
                reason: Some("via tern_hold (by user alice)".into()),
                code: crate::vocab::hold_code::USER_REQUEST,
                subcode: 0,
            },
        ),
        "012 (007.002.000)",
        "Job was held.\n\tvia tern_hold (by user alice)\n\tCode 1 Subcode 0\n...\n",
    );
    text_is(
        &ev(
            7,
            2,
            EventKind::Held {
                reason: None,
                code: 0,
                subcode: 0,
            },
        ),
        "012 (007.002.000)",
        "Job was held.\n\tReason unspecified\n\tCode 0 Subcode 0\n...\n",
    );
    text_is(
        &ev(
            7,
            2,
            EventKind::Released {
                reason: Some("via tern_release (by user alice)".into()),
            },
        ),
        "013 (007.002.000)",
        "Job was released.\n\tvia tern_release (by user alice)\n...\n",
    );
    text_is(
        &ev(7, 2, EventKind::Released { reason: None }),
        "013 (007.002.000)",
        "Job was released.\n...\n",
    );
}

#[test]
fn reasons_stay_on_one_line() {
    let e = ev(
        8,
        0,
        EventKind::Held {
            reason: Some("first\nsecond\r".into()),
            code: 3,
            subcode: 4,
        },
    );
    let text = format(&e);
    assert!(
        text.contains("\tfirst|second \n\tCode 3 Subcode 4\n"),
        "{text}"
    );
    let EventKind::Held { reason, .. } = &read(&text).unwrap()[0].kind else {
        panic!()
    };
    assert_eq!(reason.as_deref(), Some("first|second"));
}

#[test]
fn htcondor_bodies_with_extra_lines_read() {
    // A termination with an Assigned column and odd cells, then the
    // "terminated of its own accord" line older HTCondor adds, which is not
    // a table row though it has colons.
    let text = "005 (001.000.000) 2023-11-14 22:13:20 Job terminated.\n\
                \t(1) Normal termination (return value 2)\n\
                \t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Remote Usage\n\
                \t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n\
                \t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Remote Usage\n\
                \t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Local Usage\n\
                \t0  -  Run Bytes Sent By Job\n\t0  -  Run Bytes Received By Job\n\
                \tPartitionable Resources :    Usage  Request Allocated Assigned\n\
                \t   Cpus                 :        0        1         1 \n\
                \t   Gpus (Average)       :    false        1         1 GPU-1\n\
                \tJob terminated of its own accord at 2023-11-14T22:13:20Z with exit-code 2.\n\
                ...\n";
    let events = read(text).unwrap();
    let EventKind::Terminated(t) = &events[0].kind else {
        panic!()
    };
    assert_eq!(t.exit, Exit::Normal { return_value: 2 });
    assert_eq!(
        t.resources,
        [
            res("Cpus", Some(0.0), Some(1.0), Some(1.0)),
            Resource {
                assigned: Some("GPU-1".into()),
                ..res("Gpus", None, Some(1.0), Some(1.0))
            }
        ]
    );
}

#[test]
fn other_events_read_verbatim() {
    let text = "040 (001.000.000) 2023-11-14 22:13:20 Started transferring input files\n\
                \tTransferring to host: <127.0.0.1:0>\n...\n";
    let events = read(text).unwrap();
    let EventKind::Other {
        number,
        first_line,
        body,
    } = &events[0].kind
    else {
        panic!()
    };
    assert_eq!(
        (*number, first_line.as_str(), body.as_slice()),
        (
            40,
            "Started transferring input files",
            &["\tTransferring to host: <127.0.0.1:0>".to_string()][..]
        )
    );
    assert_eq!(
        format(&events[0]).split_once(' ').unwrap().1,
        text.split_once(' ').unwrap().1
    );
}

#[test]
fn both_date_forms_and_their_variants() {
    let when = Local
        .with_ymd_and_hms(2023, 11, 14, 22, 13, 20)
        .unwrap()
        .timestamp();
    let body = " Job was unsuspended.\n...\n";
    for date in [
        "2023-11-14 22:13:20",
        "2023-11-14T22:13:20",
        "2023-11-14 22:13:20.250",
    ] {
        let e = &read(&format!("011 (001.000.000) {date}{body}")).unwrap()[0];
        assert_eq!(e.time, when, "{date}");
    }
    let e = &read(&format!("011 (001.000.000) 2023-11-14 22:13:20.123Z{body}")).unwrap()[0];
    assert_eq!(e.time, 1_700_000_000);
    // The legacy form has no year: the reader takes the current one.
    let year = Local.timestamp_opt(crate::clock::now(), 0).unwrap().year();
    let legacy = Local
        .with_ymd_and_hms(year, 11, 14, 22, 13, 20)
        .unwrap()
        .timestamp();
    let e = &read(&format!("011 (001.000.000) 11/14 22:13:20{body}")).unwrap()[0];
    assert_eq!(e.time, legacy);
    let e = ev(1, 0, EventKind::Unsuspended);
    let text = format_with(
        &Event {
            time: legacy,
            ..e.clone()
        },
        DateForm::Legacy,
    );
    assert_eq!(text, format!("011 (001.000.000) 11/14 22:13:20{body}"));
}

#[test]
fn errors_name_their_line() {
    let good = format(&ev(1, 0, EventKind::Unsuspended));
    let cases = [
        (
            format!("{good}garbage\n"),
            "line 3: expected an event header like '000 (1.000.000) 2024-01-31 12:00:00 ...', found 'garbage'",
        ),
        (
            format!("{good}012 (001.000.000) 2023-13-40 10:00:00 Job was held.\n...\n"),
            "line 3: expected an event header like '000 (1.000.000) 2024-01-31 12:00:00 ...', found '012 (001.000.000) 2023-13-40 10:00:00 Job was held.'",
        ),
        (
            format!("{good}{good}011 (001.000.000) 2023-11-14 10:00:00 Job was unsuspended.\n"),
            "line 5: event 011 does not end with a '...' line",
        ),
        (
            "005 (001.000.000) 2023-11-14 10:00:00 Job terminated.\n\t(1) Normal termination (return value 0)\n\
             \t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Remote Usage\n\tbogus\n...\n"
                .to_string(),
            "line 4: event 005: expected the Run Local Usage line, found '\tbogus'",
        ),
        (
            "005 (001.000.000) 2023-11-14 10:00:00 Job terminated.\n\t(1) Normal termination (return value 0)\n...\n"
                .to_string(),
            "line 2: event 005: the Run Remote Usage line is missing",
        ),
        (
            "012 (001.000.000) 2023-11-14 10:00:00 Job was released.\n...\n".to_string(),
            "line 1: event 012: expected 'Job was held....', found 'Job was released.'",
        ),
        (
            "010 (001.000.000) 2023-11-14 10:00:00 Job was suspended.\n\tsome\n...\n".to_string(),
            "line 2: event 010: expected 'Number of processes actually suspended: N', found '\tsome'",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(read(&text).unwrap_err().to_string(), want, "{text}");
    }
}

#[test]
fn fuzz_a_usage_time_past_what_seconds_hold_is_refused_not_overflowed() {
    // Found by the `userlog` target once it ran with overflow checks.
    let text = "005 (001.000.000) 2023-11-14 10:00:00 Job terminated.\n\t(1) Normal termination (return value 0)\n\
                \t\tUsr 0 111111111113111100:00:00, Sys 0 00:00:00  -  Run Remote Usage\n...\n";
    assert_eq!(
        read(text).unwrap_err().to_string(),
        "line 3: event 005: expected the Run Remote Usage line, found '\t\tUsr 0 111111111113111100:00:00, Sys 0 00:00:00  -  Run Remote Usage'"
    );
}

#[test]
fn crlf_logs_and_blank_lines_between_events_read() {
    let text = "011 (001.000.000) 2023-11-14 10:00:00 Job was unsuspended.\r\n...\r\n\n\
                013 (001.000.000) 2023-11-14 10:00:01 Job was released.\r\n\tok\r\n...";
    let events = read(text).unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(
        events[1].kind,
        EventKind::Released {
            reason: Some("ok".into())
        }
    );
}

#[test]
fn read_complete_leaves_an_event_being_written() {
    let one = format(&ev(1, 0, EventKind::Unsuspended));
    let two = format(&ev(
        1,
        1,
        EventKind::Held {
            reason: Some("r".into()),
            code: 1,
            subcode: 0,
        },
    ));
    let all = format!("{one}{two}");
    for cut in 0..=all.len() {
        let (events, used) = read_complete(&all[..cut]).unwrap();
        let want = if cut == all.len() {
            2
        } else if cut >= one.len() {
            1
        } else {
            0
        };
        assert_eq!(events.len(), want, "cut at {cut}");
        assert_eq!(used, [0, one.len(), all.len()][want], "cut at {cut}");
    }
}

/// The Event for writer `w`'s `i`th append, some of them large.
fn concurrent_event(w: i64, i: i64) -> Event {
    let reason = if i % 50 == 0 {
        format!("{w}:{i} {}", "x".repeat(20_000))
    } else {
        format!("{w}:{i}")
    };
    ev(
        w,
        i,
        EventKind::Released {
            reason: Some(reason),
        },
    )
}

#[test]
fn concurrent_appends_never_interleave_within_an_event() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.log");
    const WRITERS: i64 = 8;
    const EACH: i64 = 500;
    std::thread::scope(|s| {
        for w in 0..WRITERS {
            let path = &path;
            s.spawn(move || {
                for i in 0..EACH {
                    append(path, &[concurrent_event(w, i)]).unwrap();
                }
            });
        }
    });
    let events = read_file(&path).unwrap();
    assert_eq!(events.len() as i64, WRITERS * EACH);
    let mut next = vec![0; WRITERS as usize];
    for e in &events {
        let w = e.id.cluster as usize;
        assert_eq!(e.id.proc, next[w], "writer {w}'s events in its order");
        assert_eq!(*e, concurrent_event(e.id.cluster, e.id.proc));
        next[w] += 1;
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    // 0644 less the umask: never more, and the owner can write.
    assert_eq!(
        (mode & 0o7777 & !0o644, mode & 0o600),
        (0, 0o600),
        "mode {mode:o}"
    );
}

#[test]
fn large_batches_are_cut_between_events() {
    // Several writers each append batches much larger than one write's
    // share; every event must still read back whole.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.log");
    let batch = |w: i64, b: i64| -> Vec<Event> {
        (0..30_000)
            .map(|i| {
                ev(
                    w,
                    b * 30_000 + i,
                    EventKind::Aborted {
                        reason: Some(format!("via tern_rm (by user u{w})")),
                    },
                )
            })
            .collect()
    };
    let b = batch(0, 0);
    assert!(format(&b[0]).len() * b.len() > 2 * WRITE_CHUNK);
    std::thread::scope(|s| {
        for w in 0..3 {
            let (path, batch) = (&path, &batch);
            s.spawn(move || {
                for b in 0..2 {
                    append(path, &batch(w, b)).unwrap();
                }
            });
        }
    });
    let events = read_file(&path).unwrap();
    assert_eq!(events.len(), 3 * 2 * 30_000);
    let mut next = [0; 3];
    for e in &events {
        let w = e.id.cluster as usize;
        assert_eq!(e.id.proc, next[w]);
        next[w] += 1;
    }
}

/// A log of this process's user.
fn mine(path: PathBuf) -> UserLog {
    UserLog {
        path,
        owner: crate::sys::identity::JobOwner {
            name: crate::sys::real_user_name(),
            ..Default::default()
        },
    }
}

#[test]
fn log_job_events_groups_by_file_and_names_the_failing_one() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.log");
    let b = dir.path().join("b.log");
    let held = |p| {
        Event::held(
            JobId {
                cluster: 9,
                proc: p,
            },
            "r",
            1,
            0,
        )
    };
    log_job_events(&[
        (mine(a.clone()), held(0)),
        (mine(b.clone()), held(1)),
        (mine(a.clone()), held(2)),
    ])
    .unwrap();
    let procs =
        |p: &Path| -> Vec<i64> { read_file(p).unwrap().iter().map(|e| e.id.proc).collect() };
    assert_eq!((procs(&a), procs(&b)), (vec![0, 2], vec![1]));
    let missing = dir.path().join("no/such/dir.log");
    let err = log_job_events(&[
        (mine(missing.clone()), held(0)),
        (mine(a.clone()), held(3)),
        (mine(dir.path().join("no/x.log")), held(4)),
        (mine(dir.path().join("no/y.log")), held(5)),
    ])
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot write the job event log '{}': No such file or directory (and 2 other logs)",
            missing.display()
        )
    );
    assert_eq!(procs(&a), vec![0, 2, 3], "the good log is still written");
}

#[test]
fn log_submit_writes_one_event_per_proc_with_a_log() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let cfg = crate::config::Config::defaults();
    let text = format!(
        "executable = /bin/true\nlog = {d}/a.log\nsubmit_event_notes = DAG Node: N$(Process)\nqueue 2\n\
         log = {d}/b.log\nqueue 1\n"
    );
    let f = crate::submit::parse(&text, "t.sub", dir.path(), &cfg).unwrap();
    let opts = crate::submit::SubmitOptions {
        cluster: 42,
        qdate: T,
        owner: "alice".into(),
        cwd: dir.path().to_path_buf(),
        environ: vec![],
        batch_name: None,
    };
    let cluster = crate::submit::materialize(&f, &cfg, &opts).unwrap();
    assert_eq!(cluster.procs.len(), 3);
    log_submit(&cluster, 42).unwrap();
    let a = read_file(&dir.path().join("a.log")).unwrap();
    let b = read_file(&dir.path().join("b.log")).unwrap();
    let ids: Vec<(i64, i64)> = a
        .iter()
        .chain(&b)
        .map(|e| (e.id.cluster, e.id.proc))
        .collect();
    assert_eq!(ids, [(42, 0), (42, 1), (42, 2)]);
    let EventKind::Submit {
        host, log_notes, ..
    } = &a[1].kind
    else {
        panic!()
    };
    assert_eq!(host, &local_sinful());
    assert_eq!(log_notes.as_deref(), Some("DAG Node: N1"));
}

#[test]
fn user_log_path_is_made_absolute_against_iwd() {
    let mut ad = ClassAd::new();
    assert_eq!(user_log_path(&ad), None);
    ad.insert("UserLog", crate::classad::Expr::string("sub/job.log"));
    ad.insert("Iwd", crate::classad::Expr::string("/home/alice"));
    assert_eq!(
        user_log_path(&ad),
        Some(PathBuf::from("/home/alice/sub/job.log"))
    );
    ad.insert("UserLog", crate::classad::Expr::string("/abs/job.log"));
    assert_eq!(user_log_path(&ad), Some(PathBuf::from("/abs/job.log")));
}

/// `log = ~/fifo` hung every root pass that wrote the job an event (it
/// writes them under its lock): a log that is not a regular file is
/// refused at once, with the reason, and nothing is waited on.
#[test]
fn a_log_that_is_a_fifo_or_a_link_is_refused_without_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    crate::sys::fs::mkfifo(&fifo, 0o644).unwrap();
    let e = ev(1, 0, EventKind::Aborted { reason: None });
    let started = std::time::Instant::now();
    let err = log_job_events(&[(mine(fifo.clone()), e.clone())]).unwrap_err();
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert!(err.to_string().contains("not a regular file"), "{err}");
    // Even with a reader holding it open, a FIFO is no log.
    let reader = crate::sys::fs::open_nonblocking(&fifo, libc::O_RDONLY, 0).unwrap();
    let err = log_job_events(&[(mine(fifo.clone()), e.clone())]).unwrap_err();
    assert!(err.to_string().contains("not a regular file"), "{err}");
    drop(reader);
    let target = dir.path().join("target.log");
    let link = dir.path().join("link.log");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let err = log_job_events(&[(mine(link), e)]).unwrap_err();
    assert!(err.to_string().contains("symbolic link"), "{err}");
    assert!(!target.exists());
}
