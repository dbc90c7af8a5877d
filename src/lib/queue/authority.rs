//! Whose jobs a user may change: HTCondor's owner check (the schedd's
//! `OwnerCheck2`), as the queue enforces it.
//!
//! An [`Authority`] is the real user a tool runs as, with the users named
//! in `QUEUE_SUPER_USERS` and whether `QUEUE_ALL_USERS_TRUSTED` turns the
//! check off (HTCondor: "all queue access checks disabled"). [`super::Queue::write_as`] hands out a
//! [`super::Writer`] that refuses to change, remove or leave a request for
//! a job whose Owner the authority may not touch, so the check lives in
//! one place and no tool can forget it. The negotiator's pass and the
//! shadows are the system, not a user, and keep the plain
//! [`super::Queue::write`].
//!
//! The same authority decides the writes that are not job changes: whom a
//! user may submit for ([`Authority::may_submit_for`], checked by
//! [`super::Queue::submit`]) and whether they may edit the accountant's
//! priorities ([`Authority::may_edit_priorities`], checked by
//! `actions::userprio`), and which attributes a user may set on a queued
//! job ([`Authority::attr_class`]: immutable, secure and protected, as
//! the schedd's `ModifyAttrCheck`).
//!
//! `QUEUE_SUPER_USERS` names users, and `%group` for the members a group
//! lists in the group database (`gr_mem`): as in HTCondor, a user whose
//! primary group it is, but who is not listed, is not matched.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::config::{Config, ConfigError};
use crate::vocab::job_attrs;

/// What the pass says on every round when QUEUE_ALL_USERS_TRUSTED is on in
/// shared mode.
pub const ALL_TRUSTED_WARNING: &str =
    "QUEUE_ALL_USERS_TRUSTED is true in shared mode: every user may change every other user's jobs";

/// The user a write is made for, and who may change anyone's jobs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Authority {
    user: String,
    super_users: Vec<String>,
    /// Whether `user` is a super user (named, or a member of a `%group`),
    /// decided once when the authority is made.
    is_super: bool,
    all_users_trusted: bool,
    /// Whether the user owns SPOOL (personal mode: the user who made the
    /// pool is its administrator for the accountant).
    owns_spool: bool,
    /// SHARED_QUEUE: one queue for every user of the machine.
    shared: bool,
    /// The real uid of the user, when the authority is the process's own
    /// (what the queue records as a job's OwnerUid).
    uid: Option<u32>,
    /// IMMUTABLE_JOB_ATTRS: the configuration's additions to
    /// [`job_attrs::SYSTEM_IMMUTABLE`].
    immutable: Vec<String>,
    /// PROTECTED_JOB_ATTRS: attributes only super users may change.
    protected: Vec<String>,
}

/// Why a user may not set an attribute of a queued job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrClass {
    /// Anyone who may change the job may set it.
    Normal,
    /// Nobody may change it once the job is queued.
    Immutable,
    /// The queue's own: nobody may set it.
    Secure,
    /// Only a super user (or anyone, when all users are trusted).
    Protected,
}

impl AttrClass {
    /// The word condor_qedit prints for the class.
    pub fn word(self) -> &'static str {
        match self {
            AttrClass::Normal => "normal",
            AttrClass::Immutable => "immutable",
            AttrClass::Secure => "secure",
            AttrClass::Protected => "protected",
        }
    }
}

impl Authority {
    /// `user`, with `super_users` as QUEUE_SUPER_USERS.
    pub fn new(user: impl Into<String>, super_users: Vec<String>) -> Authority {
        let user = user.into();
        Authority {
            is_super: is_listed(&user, &super_users),
            user,
            super_users,
            all_users_trusted: false,
            owns_spool: false,
            shared: false,
            uid: None,
            immutable: Vec::new(),
            protected: Vec::new(),
        }
    }

    /// The same user, who owns `spool` when its owner is the real user of
    /// this process (or when it does not exist yet: it will be the user's
    /// own once made). Read once, here, where a tool builds its authority.
    pub fn at_spool(self, spool: &Path) -> Authority {
        let owns_spool = match std::fs::metadata(spool) {
            Ok(m) => m.uid() == crate::sys::real_uid(),
            Err(e) => e.kind() == io::ErrorKind::NotFound,
        };
        Authority { owns_spool, ..self }
    }

    /// The same user, with SPOOL's ownership given rather than read
    /// (for callers that know it, and for tests).
    pub fn owning_spool(self, owns_spool: bool) -> Authority {
        Authority { owns_spool, ..self }
    }

    /// The same user, every user trusted (QUEUE_ALL_USERS_TRUSTED): any
    /// job may be changed.
    pub fn trusting_all_users(self) -> Authority {
        Authority {
            all_users_trusted: true,
            ..self
        }
    }

    /// The same user, in shared mode or not (SHARED_QUEUE).
    pub fn sharing(self, shared: bool) -> Authority {
        Authority { shared, ..self }
    }

    /// The same user, whose real uid is `uid` (the queue records it as
    /// OwnerUid on the jobs this user submits for themself).
    pub fn with_uid(self, uid: u32) -> Authority {
        Authority {
            uid: Some(uid),
            ..self
        }
    }

    /// The same user, with IMMUTABLE_JOB_ATTRS and PROTECTED_JOB_ATTRS.
    pub fn with_attr_lists(self, immutable: Vec<String>, protected: Vec<String>) -> Authority {
        Authority {
            immutable,
            protected,
            ..self
        }
    }

    /// `user` with the configuration's QUEUE_SUPER_USERS,
    /// QUEUE_ALL_USERS_TRUSTED, SHARED_QUEUE, IMMUTABLE_JOB_ATTRS and
    /// PROTECTED_JOB_ATTRS, and this process's real uid: the one place a
    /// tool's authority is read from the configuration.
    pub fn from_config(cfg: &Config, user: impl Into<String>) -> Result<Authority, ConfigError> {
        Ok(Authority {
            all_users_trusted: cfg.get_bool("QUEUE_ALL_USERS_TRUSTED", false)?,
            shared: cfg.get_bool("SHARED_QUEUE", false)?,
            uid: Some(crate::sys::real_uid()),
            immutable: cfg.list_value("IMMUTABLE_JOB_ATTRS")?,
            protected: cfg.list_value("PROTECTED_JOB_ATTRS")?,
            ..Authority::new(user, cfg.list_value("QUEUE_SUPER_USERS")?)
        })
    }

    /// The user the changes are made for (who a reason says asked).
    pub fn user(&self) -> &str {
        &self.user
    }

    /// Whether the user is a super user: named in QUEUE_SUPER_USERS, or
    /// listed as a member of a group it names as `%group`.
    pub fn is_super_user(&self) -> bool {
        self.is_super
    }

    /// Whether this is shared mode (SHARED_QUEUE).
    pub fn is_shared(&self) -> bool {
        self.shared
    }

    /// The real uid the authority was made for, if it is the process's own.
    pub fn uid(&self) -> Option<u32> {
        self.uid
    }

    /// Whether every user is trusted (QUEUE_ALL_USERS_TRUSTED).
    pub fn all_users_trusted(&self) -> bool {
        self.all_users_trusted
    }

    /// Whether the user may change a job owned by `owner`: their own, or
    /// anyone's for a super user or when all users are trusted.
    pub fn may_change(&self, owner: &str) -> bool {
        self.user == owner || self.is_super_user() || self.all_users_trusted
    }

    /// Whether the user may submit jobs owned by `owner`: their own, or
    /// anyone's for a super user. Trusting all users lets them change
    /// each other's jobs, not put jobs in under another name.
    pub fn may_submit_for(&self, owner: &str) -> bool {
        self.user == owner || self.is_super_user()
    }

    /// Whether the user may change the accountant's table (condor_userprio's
    /// setters, HTCondor's ADMINISTRATOR commands): a super user, or in
    /// personal mode the owner of SPOOL (see [`Authority::at_spool`]). In
    /// shared mode root owns SPOOL, and only super users may. Trusting all
    /// users is not enough.
    pub fn may_edit_priorities(&self) -> bool {
        self.is_super_user() || (self.owns_spool && !self.shared)
    }

    /// How the attribute `name` of a queued job is guarded, whoever asks:
    /// immutable ([`job_attrs::SYSTEM_IMMUTABLE`], JobStatus and
    /// IMMUTABLE_JOB_ATTRS), secure ([`job_attrs::SYSTEM_SECURE`]),
    /// protected (PROTECTED_JOB_ATTRS) or normal. Names ignore case.
    pub fn attr_class(&self, name: &str) -> AttrClass {
        let listed = |list: &[String]| list.iter().any(|a| a.eq_ignore_ascii_case(name));
        if job_attrs::is_in(job_attrs::SYSTEM_IMMUTABLE, name)
            || job_attrs::is_in(job_attrs::QEDIT_IMMUTABLE, name)
            || listed(&self.immutable)
        {
            AttrClass::Immutable
        } else if job_attrs::is_in(job_attrs::SYSTEM_SECURE, name) {
            AttrClass::Secure
        } else if listed(&self.protected) {
            AttrClass::Protected
        } else {
            AttrClass::Normal
        }
    }

    /// Whether this user may set `name` on a job they may change: never an
    /// immutable or secure attribute; a protected one only as a super
    /// user or when all users are trusted (as the schedd decides it).
    pub fn may_set(&self, name: &str) -> Result<(), AttrClass> {
        match self.attr_class(name) {
            AttrClass::Normal => Ok(()),
            AttrClass::Protected if self.is_super_user() || self.all_users_trusted => Ok(()),
            refused => Err(refused),
        }
    }
}

/// Whether `user` is in a QUEUE_SUPER_USERS list: by name, or as a listed
/// member of a `%group`.
fn is_listed(user: &str, super_users: &[String]) -> bool {
    super_users.iter().any(|s| match s.strip_prefix('%') {
        Some(group) => crate::sys::identity::group_members(group)
            .is_some_and(|members| members.iter().any(|m| m == user)),
        None => s == user,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_and_super_users() {
        let alice = Authority::new("alice", vec![]);
        assert!(alice.may_change("alice"));
        assert!(!alice.may_change("bob"));
        assert!(!alice.is_super_user());
        let root = Authority::new("root", vec!["admin".into(), "root".into()]);
        assert!(root.may_change("alice"));
        assert!(root.is_super_user());
        // Naming someone else a super user gives this user nothing.
        let bob = Authority::new("bob", vec!["root".into()]);
        assert!(!bob.may_change("alice"));
    }

    #[test]
    fn super_users_come_from_the_configuration() {
        let mut cfg = Config::defaults();
        cfg.parse_str("QUEUE_SUPER_USERS = root, alice\n", "t.conf")
            .unwrap();
        let a = Authority::from_config(&cfg, "alice").unwrap();
        assert!(a.is_super_user());
        assert_eq!(a.user(), "alice");
        let b = Authority::from_config(&cfg, "bob").unwrap();
        assert!(!b.may_change("alice"));
        cfg.parse_str("QUEUE_ALL_USERS_TRUSTED = true\n", "t.conf")
            .unwrap();
        let b = Authority::from_config(&cfg, "bob").unwrap();
        assert!(b.may_change("alice"));
        // Trusted is not super: tern_userprio still asks for a super user.
        assert!(!b.is_super_user());
    }

    #[test]
    fn submitting_for_others_and_editing_priorities_need_a_super_user() {
        let bob = Authority::new("bob", vec!["root".into()]).trusting_all_users();
        assert!(bob.may_submit_for("bob"));
        assert!(!bob.may_submit_for("alice"));
        assert!(!bob.may_edit_priorities());
        assert!(bob.clone().owning_spool(true).may_edit_priorities());
        let root = Authority::new("root", vec!["root".into()]);
        assert!(root.may_submit_for("alice"));
        assert!(root.may_edit_priorities());
    }

    #[test]
    fn in_shared_mode_owning_spool_edits_no_priorities() {
        let bob = Authority::new("bob", vec![]).owning_spool(true);
        assert!(bob.may_edit_priorities());
        assert!(!bob.clone().sharing(true).may_edit_priorities());
        let root = Authority::new("root", vec!["root".into()]).sharing(true);
        assert!(root.may_edit_priorities());
    }

    #[test]
    fn a_group_admits_only_its_listed_members() {
        // No such group: nobody.
        let a = Authority::new("alice", vec!["%no-such-group-tern".into()]);
        assert!(!a.is_super_user());
        // A group's listed members are super users; a name that is no
        // member is not.
        let members = crate::sys::identity::group_members("root").unwrap_or_default();
        for m in &members {
            assert!(Authority::new(m.as_str(), vec!["%root".into()]).is_super_user());
        }
        if !members.iter().any(|m| m == "nobody-tern-test") {
            assert!(!Authority::new("nobody-tern-test", vec!["%root".into()]).is_super_user());
        }
    }

    #[test]
    fn attributes_are_classed_as_the_schedd_classes_them() {
        let a = Authority::new("alice", vec![])
            .with_attr_lists(vec!["Color".into()], vec!["AcctGroup".into()]);
        assert_eq!(a.attr_class("owner"), AttrClass::Immutable);
        assert_eq!(a.attr_class("JobStatus"), AttrClass::Immutable);
        assert_eq!(a.attr_class("color"), AttrClass::Immutable);
        assert_eq!(a.attr_class("TotalSubmitProcs"), AttrClass::Secure);
        assert_eq!(a.attr_class("AcctGroup"), AttrClass::Protected);
        assert_eq!(a.attr_class("RequestMemory"), AttrClass::Normal);
        assert_eq!(a.may_set("AcctGroup"), Err(AttrClass::Protected));
        assert_eq!(a.clone().trusting_all_users().may_set("AcctGroup"), Ok(()));
        assert_eq!(
            a.trusting_all_users().may_set("Owner"),
            Err(AttrClass::Immutable)
        );
    }

    #[test]
    fn a_spool_not_made_yet_is_the_users_own() {
        let dir = std::env::temp_dir().join(format!("tern-auth-{}", std::process::id()));
        let bob = Authority::new("bob", vec![]).at_spool(&dir.join("no-such-spool"));
        assert!(bob.may_edit_priorities());
    }

    #[test]
    fn all_users_trusted_turns_the_owner_check_off() {
        let bob = Authority::new("bob", vec![]).trusting_all_users();
        assert!(bob.may_change("alice"));
        assert!(!bob.is_super_user());
    }
}
