//! Unit tests of the router's pure parts: mirroring (spec 5.6's status
//! mapping and copied attributes) and the yield.

use crate::classad::parse_ad;
use crate::classad::unparse::unparse;
use crate::queue::{Change, JobId};
use crate::userlog::EventKind;

use super::finish::yield_change;
use super::mirror::mirror;

fn dest_id() -> JobId {
    JobId {
        cluster: 12,
        proc: 0,
    }
}

fn set_of(m: &super::mirror::Mirror) -> Vec<String> {
    m.set
        .iter()
        .map(|(n, e)| format!("{n} = {}", unparse(e)))
        .collect()
}

#[test]
fn idle_to_running_is_an_execute_event_on_the_copy_id() {
    let src = parse_ad("[JobStatus = 1]").unwrap();
    let dest = parse_ad("[JobStatus = 2; JobStartDate = 5]").unwrap();
    let m = mirror(&src, &dest, dest_id());
    assert_eq!(set_of(&m), vec!["JobStartDate = 5", "JobStatus = 2"]);
    assert!(matches!(&m.events[..], [EventKind::Execute { host, .. }] if host == "12.0"));
}

#[test]
fn running_to_idle_is_an_evict_event() {
    let src = parse_ad("[JobStatus = 2]").unwrap();
    let dest = parse_ad("[JobStatus = 1]").unwrap();
    let m = mirror(&src, &dest, dest_id());
    assert_eq!(set_of(&m), vec!["JobStatus = 1"]);
    assert!(matches!(&m.events[..], [EventKind::Evicted { .. }]));
}

#[test]
fn a_held_copy_holds_the_source_as_a_copy() {
    let src = parse_ad(r#"[JobStatus = 2; NumSystemHolds = 2; ReleaseReason = "r"]"#).unwrap();
    let dest =
        parse_ad(r#"[JobStatus = 5; HoldReason = "x"; HoldReasonCode = 3; HoldReasonSubCode = 1]"#)
            .unwrap();
    let m = mirror(&src, &dest, dest_id());
    assert_eq!(
        set_of(&m),
        vec![
            "JobStatus = 5",
            r#"HoldReason = "x""#,
            "HoldReasonCode = 3",
            "HoldReasonSubCode = 1",
            "HoldCopiedFromTargetJob = true",
            "NumSystemHolds = 3",
            r#"LastReleaseReason = "r""#,
        ]
    );
    assert_eq!(m.delete, vec!["ReleaseReason"]);
    assert!(matches!(
        &m.events[..],
        [EventKind::Held {
            code: 3,
            subcode: 1,
            ..
        }]
    ));
}

#[test]
fn a_source_the_user_held_or_removed_is_never_overwritten() {
    let dest = parse_ad("[JobStatus = 2; RemoteUserCpu = 4.0]").unwrap();
    for src in ["[JobStatus = 5]", "[JobStatus = 3]"] {
        let m = mirror(&parse_ad(src).unwrap(), &dest, dest_id());
        assert!(m.is_empty(), "{src}");
    }
    // A hold copied from the copy is overwritten: the copy runs again.
    let copied = parse_ad("[JobStatus = 5; HoldCopiedFromTargetJob = true]").unwrap();
    let m = mirror(&copied, &dest, dest_id());
    assert!(set_of(&m).contains(&"JobStatus = 2".to_string()));
    assert_eq!(m.delete, vec!["HoldCopiedFromTargetJob"]);
}

#[test]
fn a_removed_copy_is_not_propagated_but_completion_is() {
    let src = parse_ad("[JobStatus = 2]").unwrap();
    let m = mirror(&src, &parse_ad("[JobStatus = 3]").unwrap(), dest_id());
    assert!(m.is_empty());
    let m = mirror(
        &src,
        &parse_ad("[JobStatus = 4; ExitCode = 7; CompletionDate = 9]").unwrap(),
        dest_id(),
    );
    assert_eq!(
        set_of(&m),
        vec!["CompletionDate = 9", "ExitCode = 7", "JobStatus = 4"]
    );
}

fn change_text(c: &Change) -> String {
    match c {
        Change::Update { set, delete } => format!(
            "update {} delete {}",
            set.iter()
                .map(|(n, e)| format!("{n}={}", unparse(e)))
                .collect::<Vec<_>>()
                .join(","),
            delete.join(",")
        ),
        Change::Leave { set } => format!(
            "leave {}",
            set.iter()
                .map(|(n, e)| format!("{n}={}", unparse(e)))
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => format!("{other:?}"),
    }
}

#[test]
fn the_yield_gives_the_source_back() {
    let y = |ad: &str, finalized: bool, release: bool| {
        let (c, events) = yield_change(&parse_ad(ad).unwrap(), finalized, release);
        (change_text(&c), events.len())
    };
    // Finalized and completed: done, to history.
    assert_eq!(
        y("[JobStatus = 4]", true, true),
        (r#"leave Managed="ScheddDone",ManagedManager="""#.into(), 0)
    );
    // Completed but not finalized (JOB_FINALIZE failed): routed again.
    assert_eq!(
        y("[JobStatus = 4]", false, true),
        (
            r#"update Managed="Schedd",ManagedManager="",JobStatus=1 delete "#.into(),
            0
        )
    );
    // Running when the copy went: back to Idle with an evict event.
    assert_eq!(
        y("[JobStatus = 2]", false, true),
        (
            r#"update Managed="Schedd",ManagedManager="",JobStatus=1 delete "#.into(),
            1
        )
    );
    // A copied hold is released (JOB_ROUTER_RELEASE_ON_HOLD), a user's stays.
    assert_eq!(
        y("[JobStatus = 5; HoldCopiedFromTargetJob = true]", false, true),
        (
            r#"update Managed="Schedd",ManagedManager="",JobStatus=1 delete HoldCopiedFromTargetJob"#.into(),
            1
        )
    );
    assert_eq!(
        y(
            "[JobStatus = 5; HoldCopiedFromTargetJob = true]",
            false,
            false
        ),
        (
            r#"update Managed="Schedd",ManagedManager="" delete "#.into(),
            0
        )
    );
    assert_eq!(
        y("[JobStatus = 5]", false, true),
        (
            r#"update Managed="Schedd",ManagedManager="" delete "#.into(),
            0
        )
    );
    // Removed: it leaves.
    assert!(y("[JobStatus = 3]", false, true).0.starts_with("leave "));
}
