//! The model, the rendering and the exit conditions, against what
//! condor_watch_q 24.0 does (the golden frames of whole runs are in
//! tests/watch_q, made by the real script).

use super::render::*;
use super::*;

fn id(cluster: i64, proc: i64) -> JobId {
    JobId { cluster, proc }
}

/// A tracker from `(cluster, proc, state)` triples, one batch per cluster.
fn tracker(jobs: &[(i64, i64, State)]) -> Tracker {
    let mut t = Tracker::default();
    for &(c, p, s) in jobs {
        t.set(id(c, p), s, || (None, None));
    }
    t
}

fn counts(done: usize, run: usize, idle: usize, held: usize) -> Counts {
    let mut c = Counts::default();
    for (s, n) in [
        (State::Done, done),
        (State::Run, run),
        (State::Idle, idle),
        (State::Held, held),
    ] {
        for _ in 0..n {
            c.add(s);
        }
    }
    c
}

/// The length of each run of one character in a bar, in order.
fn runs(bar: &str) -> Vec<(char, usize)> {
    let inner = bar.trim_start_matches('[').trim_end_matches(']');
    let mut out: Vec<(char, usize)> = Vec::new();
    for ch in inner.chars() {
        match out.last_mut() {
            Some((c, n)) if *c == ch => *n += 1,
            _ => out.push((ch, 1)),
        }
    }
    out
}

#[test]
fn events_map_to_states_as_24_0_maps_them() {
    for n in [0, 4, 7, 11, 13, 24] {
        assert_eq!(State::from_event(n), Some(State::Idle), "event {n}");
    }
    assert_eq!(State::from_event(1), Some(State::Run));
    assert_eq!(State::from_event(5), Some(State::Done));
    assert_eq!(State::from_event(9), Some(State::Removed));
    assert_eq!(State::from_event(10), Some(State::Suspended));
    assert_eq!(State::from_event(12), Some(State::Held));
    // Image size, file transfer, job ad information: no change.
    for n in [6, 28, 40, 2, 3] {
        assert_eq!(State::from_event(n), None, "event {n}");
    }
}

#[test]
fn statuses_map_to_states() {
    use crate::vocab::JobStatus as J;
    assert_eq!(State::from_status(J::Idle), State::Idle);
    assert_eq!(State::from_status(J::Running), State::Run);
    assert_eq!(State::from_status(J::TransferringOutput), State::Run);
    assert_eq!(State::from_status(J::Removed), State::Removed);
    assert_eq!(State::from_status(J::Completed), State::Done);
    assert_eq!(State::from_status(J::Held), State::Held);
    assert_eq!(State::from_status(J::Suspended), State::Suspended);
}

#[test]
fn the_last_state_of_a_job_wins() {
    let mut t = Tracker::default();
    for s in [State::Idle, State::Run, State::Suspended, State::Idle] {
        t.set(id(3, 0), s, || (None, None));
    }
    assert_eq!(t.states().collect::<Vec<_>>(), vec![State::Idle]);
}

#[test]
fn bar_shares_follow_the_spec_example() {
    // 6 done, 3 running, 4 idle, 1 held in 77 characters.
    let b = bar(&counts(6, 3, 4, 1), 79, false);
    assert_eq!(b.chars().count(), 79);
    assert_eq!(runs(&b), vec![('#', 34), ('=', 16), ('-', 22), ('!', 5)]);
}

#[test]
fn bar_of_nothing_is_all_first_segment() {
    let b = bar(&Counts::default(), 20, false);
    assert_eq!(b, format!("[{}]", "#".repeat(18)));
}

#[test]
fn bar_gives_the_rest_to_the_first_longest_part() {
    // 1 of 3 each: 26 + 26 + 26 = 78 > 77? int(77/3) = 25 each, 2 left,
    // and the first of the equal parts takes them.
    let b = bar(&counts(1, 1, 1, 0), 79, false);
    assert_eq!(runs(&b), vec![('#', 27), ('=', 25), ('-', 25)]);
}

#[test]
fn bar_is_never_wider_than_79() {
    assert_eq!(bar(&counts(1, 0, 0, 0), 200, false).chars().count(), 79);
}

#[test]
fn coloured_bar_paints_every_segment_even_empty_ones() {
    let b = bar(&counts(1, 0, 0, 0), 6, true);
    assert_eq!(
        b,
        "[\x1b[32m####\x1b[0m\x1b[36m\x1b[0m\x1b[93m\x1b[0m\x1b[31m\x1b[0m\x1b[31m\x1b[0m\x1b[31m\x1b[0m]"
    );
    assert_eq!(visible_len(&b), 6);
}

#[test]
fn job_ids_sort_numerically_and_shorten() {
    let jobs: Vec<(i64, i64, State)> = (0..11).map(|p| (5, p, State::Idle)).collect();
    let (r, _) = rows(&tracker(&jobs), GroupBy::Cluster, &|_| String::new());
    assert_eq!(r[0].job_ids, "5.0 ... 5.10");
    let (r, _) = rows(
        &tracker(&[
            (5, 10, State::Idle),
            (5, 2, State::Run),
            (5, 3, State::Done),
        ]),
        GroupBy::Cluster,
        &|_| String::new(),
    );
    assert_eq!(r[0].job_ids, "5.2, 5.10");
}

#[test]
fn rows_group_by_batch_and_sort_by_smallest_cluster() {
    let mut t = tracker(&[(9, 0, State::Idle), (4, 0, State::Done), (7, 0, State::Run)]);
    t.clusters.get_mut(&9).unwrap().batch = Some("a".into());
    t.clusters.get_mut(&4).unwrap().batch = Some("b".into());
    t.clusters.get_mut(&7).unwrap().batch = Some("a".into());
    let (r, totals) = rows(&t, GroupBy::Batch, &|_| String::new());
    let keys: Vec<&str> = r.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(keys, ["b", "a"]);
    assert_eq!(r[1].counts.total, 2);
    assert_eq!(totals.total, 3);
    assert_eq!(r[1].job_ids, "7.0, 9.0");
}

#[test]
fn removed_column_shows_only_after_a_removal() {
    let t = tracker(&[(1, 0, State::Idle)]);
    let (r, _) = rows(&t, GroupBy::Batch, &|_| String::new());
    let header = &table(&r, GroupBy::Batch, 80, false, false)[0];
    assert_eq!(header, "BATCH   IDLE  RUN  DONE  TOTAL  JOB_IDS");
    let t = tracker(&[(1, 0, State::Idle), (1, 1, State::Removed)]);
    let (r, _) = rows(&t, GroupBy::Batch, &|_| String::new());
    let lines = table(&r, GroupBy::Batch, 80, false, false);
    assert_eq!(lines[0], "BATCH   REMOVED  IDLE  RUN  DONE  TOTAL  JOB_IDS");
    assert_eq!(lines[1], "ID: 1        1     1    -     -      2   1.0    ");
}

#[test]
fn empty_table_has_only_the_columns_always_shown() {
    assert_eq!(
        table(&[], GroupBy::Batch, 80, true, false),
        vec!["BATCH  IDLE  RUN  DONE  TOTAL".to_string()]
    );
}

#[test]
fn rows_are_coloured_by_their_worst_state() {
    let colour = |jobs: &[(i64, i64, State)]| {
        let (r, _) = rows(&tracker(jobs), GroupBy::Batch, &|_| String::new());
        let line = table(&r, GroupBy::Batch, 80, false, true)[1].clone();
        line[2..4].to_string()
    };
    assert_eq!(colour(&[(1, 0, State::Held), (1, 1, State::Run)]), "31");
    assert_eq!(colour(&[(1, 0, State::Done)]), "32");
    assert_eq!(colour(&[(1, 0, State::Run), (1, 1, State::Idle)]), "36");
    assert_eq!(colour(&[(1, 0, State::Idle), (1, 1, State::Done)]), "33");
    assert_eq!(colour(&[(1, 0, State::Removed)]), "97");
}

#[test]
fn narrow_rows_are_cut_with_their_escape_codes() {
    let (r, _) = rows(&tracker(&[(1, 0, State::Idle)]), GroupBy::Batch, &|_| {
        String::new()
    });
    let line = table(&r, GroupBy::Batch, 20, true, true)[1].clone();
    assert_eq!(line.chars().count(), 20);
    assert!(line.starts_with("\x1b[33mID: 1"));
    assert!(!line.contains("\x1b[0m"));
}

#[test]
fn summary_words_shrink_to_fit_but_not_below_two() {
    let c = counts(6, 3, 4, 1);
    assert_eq!(
        summary_totals(&c, 80),
        "Total: 14 jobs; 6 completed, 4 idle, 3 running, 1 held"
    );
    assert_eq!(
        summary_totals(&c, 40),
        "Total: 14 jobs; 6 co, 4 id, 3 ru, 1 he"
    );
    assert_eq!(
        summary_totals(&c, 5),
        "Total: 14 jobs; 6 co, 4 id, 3 ru, 1 he"
    );
    assert_eq!(summary_totals(&Counts::default(), 80), "Total: 0 jobs; ");
}

#[test]
fn percentages_round_half_to_even() {
    // 1 of 8 is 12.5%: Python rounds it to 12; 7 of 8 is 87.5%: 88.
    assert_eq!(
        summary_percentages(&counts(1, 0, 7, 0)),
        "Total: 8 jobs; 12% completed, 0% removed, 88% idle, 0% running, 0% held, 0% suspended"
    );
    assert_eq!(
        summary_percentages(&Counts::default()),
        "Total: 0 jobs; 0% completed, 0% removed, 0% idle, 0% running, 0% held, 0% suspended"
    );
}

fn look() -> Look {
    Look {
        table: true,
        progress: true,
        row_progress: true,
        summary: Some(SummaryType::Totals),
        updated_at: true,
        color: false,
        refresh: false,
        footer: true,
    }
}

#[test]
fn frame_cut_to_the_terminal_height() {
    let t = tracker(&[(1, 0, State::Idle)]);
    let (r, c) = rows(&t, GroupBy::Batch, &|_| String::new());
    let size = Size {
        columns: 80,
        rows: 5,
    };
    let f = frame(&r, &c, GroupBy::Batch, &look(), size, "T");
    let lines: Vec<&str> = f.lines().collect();
    assert_eq!(
        lines[3],
        "Insufficient terminal height to display full output!"
    );
    assert_eq!(&lines[4..], ["...", "Input ^C to exit"]);
    assert_eq!(lines.len(), 6);
}

#[test]
fn frame_sections_are_separated_by_one_blank_line() {
    let f = frame(
        &[],
        &Counts::default(),
        GroupBy::Batch,
        &Look {
            table: false,
            refresh: true,
            footer: false,
            ..look()
        },
        Size {
            columns: 10,
            rows: 24,
        },
        "2024-05-01 10:06:00",
    );
    assert_eq!(
        f,
        "[########]\n\nTotal: 0 jobs; \n\nUpdated at 2024-05-01 10:06:00"
    );
}

#[test]
fn refresh_moves_up_blanks_and_moves_up_again() {
    let prev = "ab\n\x1b[31mxyz\x1b[0m\n\nInput ^C to exit";
    assert_eq!(
        erase(prev),
        format!(
            "\x1b[4A\r  \n   \n\n{}\n\x1b[4A\r",
            " ".repeat("Input ^C to exit".len())
        )
    );
    assert_eq!(processing_done(), format!("\r{}\r", " ".repeat(24)));
}

#[test]
fn strip_ansi_removes_csi_and_two_byte_escapes() {
    assert_eq!(strip_ansi("\x1b[1;31mred\x1b[0m \x1bMx"), "red x");
    // Upstream's pattern leaves ESC 7 (save cursor) alone; so does this.
    assert_eq!(strip_ansi("\x1b7x"), "\x1b7x");
}

#[test]
fn exit_conditions_parse_with_upstream_messages() {
    let c = ExitCondition::parse("all,done").unwrap();
    assert_eq!(
        (c.grouper, c.test, c.code),
        (Grouper::All, StatusTest::Done, 0)
    );
    assert_eq!(c.text, "all done");
    assert_eq!(
        ExitCondition::parse("any,held,-1").unwrap().exit_status(),
        255
    );
    assert_eq!(
        ExitCondition::parse("any,held,256").unwrap().exit_status(),
        0
    );
    assert_eq!(ExitCondition::parse("any,held, 7").unwrap().code, 7);
    assert_eq!(
        ExitCondition::parse("all").unwrap_err(),
        "invalid -exit specification"
    );
    assert_eq!(
        ExitCondition::parse("all,done,1,2").unwrap_err(),
        "invalid -exit specification"
    );
    assert_eq!(
        ExitCondition::parse("ALL,done").unwrap_err(),
        "invalid GROUPER \"ALL\", must be one of {all, any, none}"
    );
    assert_eq!(
        ExitCondition::parse("all,running").unwrap_err(),
        "invalid JOB_STATUS \"running\", must be one of {active, done, idle, held}"
    );
    assert_eq!(
        ExitCondition::parse("all,done,x").unwrap_err(),
        "exit_status must be an integer, but was \"x\""
    );
}

#[test]
fn exit_conditions_over_no_jobs_and_removed_jobs() {
    let holds = |spec: &str, states: &[State]| {
        ExitCondition::parse(spec)
            .unwrap()
            .holds(states.iter().copied())
    };
    assert!(holds("all,done", &[]));
    assert!(holds("none,held", &[]));
    assert!(!holds("any,idle", &[]));
    // A removed job is neither done nor active.
    assert!(!holds("all,done", &[State::Done, State::Removed]));
    assert!(holds("none,active", &[State::Done, State::Removed]));
    assert!(holds(
        "all,active",
        &[State::Held, State::Suspended, State::Run]
    ));
}

#[test]
fn log_keys_take_the_shortest_form() {
    let style = PathStyle {
        home: Some("/home/alice".into()),
        cwd: "/home/alice/runs/a".into(),
        abbreviate: false,
    };
    let key = |p: &str| style.key(Some(std::path::Path::new(p)));
    assert_eq!(key("/home/alice/runs/a/x.log"), "./x.log");
    assert_eq!(key("/home/alice/runs/b/x.log"), "~/runs/b/x.log");
    assert_eq!(key("/tmp/x.log"), "/tmp/x.log");
    // Above the working directory: not a ./ form.
    assert_eq!(key("/home/alice/runs/x.log"), "~/runs/x.log");
    assert_eq!(style.key(None), "-");
}

#[test]
fn abbreviation_keeps_a_unique_prefix_of_each_directory() {
    let dir = tempfile_dir();
    let root = dir.join("root");
    for d in ["wizbang/deep", "wizard", "other"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::write(root.join("wizbang/deep/events.log"), "").unwrap();
    let style = PathStyle {
        home: None,
        cwd: root.clone(),
        abbreviate: true,
    };
    // In root: wizbang, wizard, other share nothing: 1 character... but
    // the common prefix of all three is empty, so "w"; deep is alone.
    let key = style.key(Some(&root.join("wizbang/deep/events.log")));
    assert_eq!(key, "./w/d/events.log");
    std::fs::remove_dir_all(root.join("other")).unwrap();
    let key = style.key(Some(&root.join("wizbang/deep/events.log")));
    assert_eq!(key, "./wizb/d/events.log");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A fresh directory under the system's temporary directory.
fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!(
        "tern-watch-test-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// An event holding a byte that is not UTF-8 (a Latin-1 hold reason) is
/// read whole, and the event after it too: the follower cuts its buffer at
/// event ends found on the bytes, not at offsets into decoded text.
#[test]
fn an_event_with_a_latin1_byte_does_not_cut_the_next_one() {
    use crate::watch::follow::{Filter, LogFollower};
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("job.log");
    let mut text: Vec<u8> = Vec::new();
    text.extend_from_slice(
        b"000 (001.000.000) 2026-11-25 01:13:28 Job submitted from host: <127.0.0.1:0>\n...\n",
    );
    text.extend_from_slice(b"012 (001.000.000) 2026-11-25 01:13:29 Job was held.\n\tr\xe9ason\n\tCode 1 Subcode 0\n...\n");
    text.extend_from_slice(
        b"000 (001.001.000) 2026-11-25 01:13:30 Job submitted from host: <127.0.0.1:0>\n...\n",
    );
    std::fs::write(&log, &text).unwrap();
    let mut f = LogFollower::open(&[log], Filter::default(), Default::default(), &mut |w| {
        panic!("{w}")
    });
    let mut t = Tracker::default();
    let (_, messages) = f.poll(&mut t);
    assert!(messages.is_empty(), "{messages:?}");
    let states: Vec<State> = t.states().collect();
    assert_eq!(states, [State::Held, State::Idle], "{states:?}");
}

#[test]
fn whole_events_are_found_on_the_bytes() {
    use crate::watch::follow::complete_events;
    assert_eq!(complete_events(b""), 0);
    assert_eq!(complete_events(b"000 x\n..."), 0);
    assert_eq!(complete_events(b"000 x\n...\n001 y\n"), 10);
    assert_eq!(complete_events(b"000 \xe9...\n...\n"), 13);
}
