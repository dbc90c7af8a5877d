//! Every job operation on a temporary queue: a user who is not the owner
//! is refused and changes nothing; the owner and a super user are not.

use std::path::Path;

use super::attributes::{Edits, edit};
use super::prio::{NewPrio, Refusal, Target, set_prio};
use super::*;
use crate::classad::unparse::ad_to_string;
use crate::config::Config;
use crate::submit::{self, SubmitOptions};

const ALL: [Action; 8] = [
    Action::Remove,
    Action::ForceRemove,
    Action::Hold,
    Action::Release,
    Action::Vacate,
    Action::VacateFast,
    Action::Suspend,
    Action::Continue,
];

/// A queue in a temporary SPOOL with one job of alice's (1.0) in `status`.
fn alices_job(status: JobStatus) -> (tempfile::TempDir, Queue) {
    let dir = tempfile::tempdir().unwrap();
    let mut q = Queue::open(&dir.path().join("spool"), true)
        .unwrap()
        .unwrap();
    let cfg = Config::defaults();
    let f = submit::parse(
        "executable = /bin/echo\nqueue\n",
        "t.sub",
        Path::new("/"),
        &cfg,
    )
    .unwrap();
    q.submit::<QueueError>(&Authority::new("alice", vec![]), "alice", |cluster| {
        let opts = SubmitOptions {
            cluster,
            qdate: 1_700_000_000,
            owner: "alice".into(),
            cwd: std::env::temp_dir(),
            environ: vec![],
            batch_name: None,
        };
        submit::materialize(&f, &cfg, &opts).map_err(|e| QueueError::Invalid(e.to_string()))
    })
    .unwrap();
    // As a shadow or the pass would: the system writer.
    q.write(5, |w| {
        let row = w.rows(&Selection::default())?[0].clone();
        let ad = w.full_ad(&row)?;
        w.change(
            &row,
            &ad,
            &Change::Set(vec![("JobStatus".into(), status.expr())]),
        )
    })
    .unwrap();
    (dir, q)
}

/// The state an action applies to.
fn applies_to(action: Action) -> JobStatus {
    match action {
        Action::Remove | Action::Hold => JobStatus::Idle,
        Action::ForceRemove => JobStatus::Removed,
        Action::Release => JobStatus::Held,
        Action::Vacate | Action::VacateFast | Action::Suspend => JobStatus::Running,
        Action::Continue => JobStatus::Suspended,
    }
}

const JOB: JobId = JobId {
    cluster: 1,
    proc: 0,
};

/// Everything a refused operation must leave alone: the jobs, the
/// history, the shadow's requests and the transaction log.
fn snapshot(q: &Queue) -> String {
    let mut s = String::new();
    for (row, ad) in q.select(&Selection::default()).unwrap() {
        s += &format!("{} {} {}\n", row.id, row.status, ad_to_string(&ad));
    }
    s += &format!(
        "history {}\n",
        q.history(&Selection::default(), None).unwrap().len()
    );
    s += &format!("requests {:?}\n", q.requests(JOB).unwrap());
    s += &format!("log {:?}\n", q.log_since(0).unwrap().last().map(|r| r.seq));
    s
}

fn what(action: Action) -> JobAction {
    JobAction {
        action,
        reason: "via test".into(),
        subcode: None,
    }
}

fn by_id() -> Selection {
    Selection {
        jobs: vec![JOB],
        ..Selection::default()
    }
}

fn bob() -> Authority {
    Authority::new("bob", vec!["root".into()])
}

fn root() -> Authority {
    Authority::new("root", vec!["root".into()])
}

#[test]
fn a_user_who_is_not_the_owner_is_refused_every_action_and_changes_nothing() {
    for action in ALL {
        let (_d, mut q) = alices_job(applies_to(action));
        let before = snapshot(&q);
        for (sel, named) in [
            (by_id(), Named::ById),
            (Selection::default(), Named::ByConstraint),
        ] {
            let acted = act(&mut q, &bob(), &what(action), &sel, named, 10).unwrap();
            assert_eq!(
                acted.outcomes.into_iter().collect::<Vec<_>>(),
                [(JOB, Outcome::PermissionDenied)],
                "{action:?} {named:?}"
            );
            assert_eq!(snapshot(&q), before, "{action:?} {named:?}");
        }
    }
}

#[test]
fn the_owner_and_a_super_user_may_act() {
    for who in [Authority::new("alice", vec![]), root()] {
        for action in ALL {
            let (_d, mut q) = alices_job(applies_to(action));
            let before = snapshot(&q);
            let acted = act(&mut q, &who, &what(action), &by_id(), Named::ById, 10).unwrap();
            assert_eq!(
                acted.outcomes.into_iter().collect::<Vec<_>>(),
                [(JOB, Outcome::Success)],
                "{action:?} by {}",
                who.user()
            );
            assert_ne!(snapshot(&q), before, "{action:?} by {}", who.user());
        }
    }
}

/// Job 1.0 held by root, by id.
fn hold_by_root(q: &mut Queue) -> Acted {
    act(q, &root(), &what(Action::Hold), &by_id(), Named::ById, 10).unwrap()
}

#[test]
fn a_running_job_gets_its_shadow_request_and_the_reason_names_the_asker() {
    let (_d, mut q) = alices_job(JobStatus::Running);
    hold_by_root(&mut q);
    assert_eq!(q.requests(JOB).unwrap(), [Request::Hold]);
    let (row, ad) = q.select(&by_id()).unwrap().remove(0);
    assert_eq!(row.status, JobStatus::Held.code());
    let ad = Rc::new(ad);
    assert_eq!(
        ad.eval_str("HoldReason").as_deref(),
        Some("via test (by user root)")
    );
    assert_eq!(ad.eval_int("HoldReasonCode"), Some(hold_code::USER_REQUEST));
}

#[test]
fn states_the_action_does_not_apply_to_are_reported_by_id_and_skipped_by_constraint() {
    let (_d, mut q) = alices_job(JobStatus::Idle);
    let alice = Authority::new("alice", vec![]);
    for (action, outcome) in [
        (Action::Release, Outcome::BadStatus),
        (Action::Vacate, Outcome::BadStatus),
        (Action::Continue, Outcome::BadStatus),
        (Action::ForceRemove, Outcome::BadStatus),
    ] {
        let acted = act(&mut q, &alice, &what(action), &by_id(), Named::ById, 10).unwrap();
        assert_eq!(acted.outcomes[&JOB], outcome, "{action:?}");
        let acted = act(
            &mut q,
            &alice,
            &what(action),
            &Selection::default(),
            Named::ByConstraint,
            10,
        )
        .unwrap();
        assert!(acted.outcomes.is_empty(), "{action:?}");
    }
    act(
        &mut q,
        &alice,
        &what(Action::Hold),
        &by_id(),
        Named::ById,
        10,
    )
    .unwrap();
    let acted = act(
        &mut q,
        &alice,
        &what(Action::Hold),
        &by_id(),
        Named::ById,
        10,
    )
    .unwrap();
    assert_eq!(acted.outcomes[&JOB], Outcome::AlreadyDone);
}

#[test]
fn prio_refuses_a_user_who_is_not_the_owner_and_changes_nothing() {
    let (_d, mut q) = alices_job(JobStatus::Idle);
    let before = snapshot(&q);
    let refused = set_prio(
        &mut q,
        &bob(),
        NewPrio::Set(5),
        &[Target::Job(JOB)],
        None,
        10,
    )
    .unwrap();
    assert_eq!(refused, [Refusal::Denied(JOB)]);
    let refused = set_prio(
        &mut q,
        &bob(),
        NewPrio::Add(1),
        &[Target::Cluster(1)],
        None,
        10,
    )
    .unwrap();
    assert_eq!(refused, [Refusal::Denied(JOB)]);
    // Everything means every job of the user's own: alice's is left out.
    let refused = set_prio(
        &mut q,
        &bob(),
        NewPrio::Add(1),
        &[Target::Everything],
        None,
        10,
    )
    .unwrap();
    assert!(refused.is_empty());
    assert_eq!(snapshot(&q), before);
    let refused = set_prio(
        &mut q,
        &root(),
        NewPrio::Add(3),
        &[Target::Everything],
        None,
        10,
    )
    .unwrap();
    assert!(refused.is_empty());
    assert_eq!(q.rows(&by_id()).unwrap()[0].prio, 3);
    let missing = JobId {
        cluster: 9,
        proc: 0,
    };
    let refused = set_prio(
        &mut q,
        &root(),
        NewPrio::Set(1),
        &[Target::Job(missing)],
        None,
        10,
    )
    .unwrap();
    assert_eq!(refused, [Refusal::NoPriority(missing)]);
}

#[test]
fn attribute_edits_refuse_a_user_who_is_not_the_owner_and_change_nothing() {
    let (_d, mut q) = alices_job(JobStatus::Idle);
    let edits = Edits::parse(vec![("Note".into(), "\"x\"".into())], &bob()).unwrap();
    let before = snapshot(&q);
    let done = edit(&mut q, &bob(), &Selection::default(), &edits, 10).unwrap();
    assert_eq!((done.changed, done.denied), (vec![], vec![JOB]));
    assert_eq!(snapshot(&q), before);
    let done = edit(&mut q, &root(), &by_id(), &edits, 10).unwrap();
    assert_eq!((done.changed, done.denied), (vec![JOB], vec![]));
    let ad = Rc::new(q.select(&by_id()).unwrap().remove(0).1);
    assert_eq!(ad.eval_str("Note").as_deref(), Some("x"));
}

#[test]
fn only_a_super_user_or_the_spool_owner_edits_priorities_and_a_refusal_writes_nothing() {
    use super::userprio::{Edit, EditError, edit};
    use crate::negotiator::accountant::{self, Knobs};
    let (_dir, mut q) = alices_job(JobStatus::Idle);
    let knobs = Knobs::from_config(&Config::defaults()).unwrap();
    let names = |q: &Queue| -> Vec<(String, f64)> {
        accountant::records(q.conn())
            .unwrap()
            .into_iter()
            .map(|s| (s.name, s.priority))
            .collect()
    };
    let before = names(&q);
    let set = Edit::SetPrio("dave@ws".into(), 5.0);
    // Trusting all users is not enough, and the owner check of jobs does
    // not apply: the accountant needs a super user or the SPOOL's owner.
    let bob = Authority::new("bob", vec!["root".into()])
        .trusting_all_users()
        .owning_spool(false);
    for e in [set.clone(), Edit::ResetAll, Edit::Delete("dave@ws".into())] {
        let err = edit(&mut q, &bob, &e, &knobs, 10).unwrap_err();
        assert!(
            matches!(&err, EditError::NotPermitted { user } if user == "bob"),
            "{err:?}"
        );
    }
    assert_eq!(names(&q), before);
    edit(&mut q, &root(), &set, &knobs, 10).unwrap();
    assert!(names(&q).contains(&("dave@ws".to_string(), 5.0)));
    let owner = Authority::new("bob", vec![]).owning_spool(true);
    edit(
        &mut q,
        &owner,
        &Edit::SetPrio("dave@ws".into(), 7.0),
        &knobs,
        11,
    )
    .unwrap();
    assert!(names(&q).contains(&("dave@ws".to_string(), 7.0)));
}

/// A job held while it ran, released, and its shadow still stopping it
/// (the Hold request pending): a later hold or removal owes the log the
/// stop's 012 and 013 first; a hold leaves its own 012 to the stop's
/// recorder, a removal writes its 009 itself. A job the router manages
/// has no shadow to record a stop, whatever request it was left.
#[test]
fn a_pending_hold_stop_owes_its_events_to_a_later_action_unless_the_router_manages_the_job() {
    let (_dir, mut q) = alices_job(JobStatus::Idle);
    q.write(6, |w| {
        let row = w.rows(&Selection::default())?[0].clone();
        let ad = w.full_ad(&row)?;
        let set = vec![
            ("LastHoldReason".into(), Expr::string("first")),
            ("ReleaseReason".into(), Expr::string("go")),
        ];
        w.change(&row, &ad, &Change::Set(set))?;
        w.request(row.id, Request::Hold)
    })
    .unwrap();
    let mut owed = |action: Action, managed: bool| -> (Vec<u32>, bool) {
        q.write(7, |w| {
            let row = w.rows(&Selection::default())?[0].clone();
            let mut ad = w.full_ad(&row)?;
            if managed {
                ad.insert("Managed", Expr::string("External"));
            }
            let ad = Rc::new(ad);
            let (events, theirs) = owed_by_the_stop(w, action, row.id, row.status(), false, &ad)?;
            Ok((events.iter().map(|e| e.kind.number()).collect(), theirs))
        })
        .unwrap()
    };
    assert_eq!(owed(Action::Hold, false), (vec![12, 13], true));
    assert_eq!(owed(Action::Remove, false), (vec![12, 13], false));
    assert_eq!(owed(Action::Hold, true), (vec![], false));
    assert_eq!(owed(Action::Remove, true), (vec![], false));
}

/// A running job the router manages has no shadow: its hold is recorded
/// with no request for one (which nothing would ever take or clear), and
/// its 012 is written at once. (alice is no user here, so the write is
/// refused: what shows it was not left to a shadow is that it was tried.)
#[test]
fn a_routed_running_job_is_held_without_a_shadow_request_and_logged_at_once() {
    let (dir, mut q) = alices_job(JobStatus::Running);
    let log = dir.path().join("routed.log");
    q.write(6, |w| {
        let row = w.rows(&Selection::default())?[0].clone();
        let ad = w.full_ad(&row)?;
        let set = vec![
            ("Managed".into(), Expr::string("External")),
            ("UserLog".into(), Expr::string(log.to_str().unwrap())),
        ];
        w.change(&row, &ad, &Change::Set(set))
    })
    .unwrap();
    let acted = hold_by_root(&mut q);
    assert!(
        matches!(&acted.log_error, Some(UserLogError::Write { path, .. }) if path == &log),
        "{:?}",
        acted.log_error
    );
    assert_eq!(q.requests(JOB).unwrap(), []);
    let (row, _) = q.select(&by_id()).unwrap().remove(0);
    assert_eq!(row.status, JobStatus::Held.code());
}
