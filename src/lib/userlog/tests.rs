use super::*;

fn id(c: i64, p: i64) -> EventId {
    EventId {
        cluster: c,
        proc: p,
        subproc: 0,
    }
}

#[test]
fn held_event_text() {
    let e = Event {
        id: id(12, 3),
        time: 1_700_000_000,
        kind: EventKind::Held {
            reason: Some("via tern_hold (by user alice)".into()),
            code: 1,
            subcode: 0,
        },
    };
    let text = format(&e);
    assert!(text.starts_with("012 (012.003.000) "), "{text}");
    assert!(
        text.ends_with(
            " Job was held.\n\tvia tern_hold (by user alice)\n\tCode 1 Subcode 0\n...\n"
        ),
        "{text}"
    );
    assert_eq!(read(&text).unwrap(), vec![e]);
}
