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
//! `actions::userprio`).

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::config::{Config, ConfigError};

/// The user a write is made for, and who may change anyone's jobs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Authority {
    user: String,
    super_users: Vec<String>,
    all_users_trusted: bool,
    /// Whether the user owns SPOOL (personal mode: the user who made the
    /// pool is its administrator for the accountant).
    owns_spool: bool,
}

impl Authority {
    /// `user`, with `super_users` as QUEUE_SUPER_USERS.
    pub fn new(user: impl Into<String>, super_users: Vec<String>) -> Authority {
        Authority {
            user: user.into(),
            super_users,
            all_users_trusted: false,
            owns_spool: false,
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

    /// `user` with the configuration's QUEUE_SUPER_USERS and
    /// QUEUE_ALL_USERS_TRUSTED: the one place a tool's authority is read
    /// from the configuration.
    pub fn from_config(cfg: &Config, user: impl Into<String>) -> Result<Authority, ConfigError> {
        Ok(Authority {
            all_users_trusted: cfg.get_bool("QUEUE_ALL_USERS_TRUSTED", false)?,
            ..Authority::new(user, cfg.list_value("QUEUE_SUPER_USERS")?)
        })
    }

    /// The user the changes are made for (who a reason says asked).
    pub fn user(&self) -> &str {
        &self.user
    }

    /// Whether the user is named in QUEUE_SUPER_USERS.
    pub fn is_super_user(&self) -> bool {
        self.super_users.contains(&self.user)
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
    /// setters): a super user, or the owner of SPOOL (see
    /// [`Authority::at_spool`]). Trusting all users is not enough.
    pub fn may_edit_priorities(&self) -> bool {
        self.is_super_user() || self.owns_spool
    }
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
