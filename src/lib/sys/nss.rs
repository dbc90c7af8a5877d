//! The password and group databases in a statically linked build.
//!
//! `./install.sh` links the tools statically (a dynamically linked start
//! costs every tool about a quarter of its cpu: the loader maps and
//! relocates libc, libm and libgcc_s at every run). A static glibc program
//! must not let glibc load NSS modules: `dlopen` of a `libnss_*.so` brings
//! in the shared libc the machine has now, which need not be the one the
//! program was linked with. So in a static build a lookup goes:
//!
//! 1. to glibc's own `files` source, which is built into libc and loads
//!    nothing (the database is restricted to it once, with glibc's
//!    `__nss_configure_lookup`), when `/etc/nsswitch.conf` consults
//!    `files` first for that database, as every stock configuration does;
//! 2. on a miss (or when another source comes first), to `getent(1)`, a
//!    dynamically linked program of the installed glibc, which consults
//!    every source the configuration names (LDAP, SSSD, systemd, ...).
//!
//! A dynamically linked build (the Debian package, `cargo test`) uses
//! glibc's lookups directly; [`in_use`] says which applies. The functions
//! here are compiled in both, so the tests exercise them either way.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Once;

/// Whether this build resolves users and groups as this module describes.
pub fn in_use() -> bool {
    cfg!(target_feature = "crt-static")
}

/// An entry of the password database, as `getent passwd` prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PasswdEntry {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    pub home: String,
}

/// An entry of the group database, as `getent group` prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupEntry {
    pub name: String,
    pub gid: u32,
    pub members: Vec<String>,
}

/// The sources `nsswitch.conf` names for `db` (`passwd`, `group`,
/// `initgroups`), in order, without their `[STATUS=action]` items;
/// glibc's default (`files`) when the file or the line is missing.
pub fn sources(conf: &str, db: &str) -> Vec<String> {
    for line in conf.lines() {
        let line = line.split('#').next().unwrap_or("");
        let Some((name, rest)) = line.split_once(':') else {
            continue;
        };
        if name.trim() != db {
            continue;
        }
        let mut out = Vec::new();
        let mut in_action = false;
        for word in rest.split_whitespace() {
            // `[NOTFOUND=return]` may be split over words: skip to `]`.
            if in_action || word.starts_with('[') {
                in_action = !word.ends_with(']');
                continue;
            }
            out.push(word.to_string());
        }
        return out;
    }
    vec!["files".to_string()]
}

/// This machine's `/etc/nsswitch.conf`, read once.
fn conf() -> &'static str {
    static CONF: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    CONF.get_or_init(|| std::fs::read_to_string("/etc/nsswitch.conf").unwrap_or_default())
}

/// Whether glibc's built-in `files` source answers first for `db` on this
/// machine (then a hit there is what glibc itself would return).
pub fn files_first(db: &str) -> bool {
    sources(conf(), db).first().map(String::as_str) == Some("files")
}

/// Whether `files` is the only source of `db` that can list a user's
/// groups (`systemd` adds only its own dynamic users, which tern never
/// runs jobs as).
pub fn files_only(db: &str) -> bool {
    sources(conf(), db)
        .iter()
        .all(|s| s == "files" || s == "systemd")
}

/// A lookup in a static build: `files` (a glibc lookup, made once the
/// databases are restricted to the built-in source) when the configuration
/// consults files first for `db`, then `other` (getent) when that finds
/// nothing.
pub fn lookup<T>(
    db: &str,
    files: impl FnOnce() -> Option<T>,
    other: impl FnOnce() -> Option<T>,
) -> Option<T> {
    if files_first(db) {
        restrict_to_files();
        if let Some(found) = files() {
            return Some(found);
        }
    }
    other()
}

/// Every group of user `name` in a static build: glibc's getgrouplist
/// over the built-in `files` source (`files`) when files is the only
/// source of group memberships, else `getent initgroups`.
pub fn group_list(name: &str, gid: u32, files: impl FnOnce() -> Vec<u32>) -> Vec<u32> {
    if files_only("group") && files_only("initgroups") {
        restrict_to_files();
        return files();
    }
    getent_groups(name, gid)
}

unsafe extern "C" {
    /// glibc: use `service_line` for database `db` instead of what
    /// nsswitch.conf says.
    fn __nss_configure_lookup(
        db: *const libc::c_char,
        service_line: *const libc::c_char,
    ) -> libc::c_int;
}

/// Restricts glibc's passwd, group and initgroups databases to the
/// built-in `files` source, once per process, so that no lookup of this
/// process loads an NSS module. Only for a static build ([`in_use`]).
pub fn restrict_to_files() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for db in [c"passwd", c"group", c"initgroups"] {
            // SAFETY: both arguments are NUL-terminated strings that live
            // for the whole call; glibc copies what it keeps.
            unsafe {
                __nss_configure_lookup(db.as_ptr(), c"files".as_ptr());
            }
        }
    });
}

/// getent's path: the installed glibc's, never one found through PATH.
fn getent_path() -> Option<&'static Path> {
    ["/usr/bin/getent", "/bin/getent"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.is_file())
}

/// Runs `getent ARGS` with an empty environment; its output when it found
/// something (exit 0), `None` for "no such entry" or any failure.
fn getent(args: &[&str]) -> Option<String> {
    let out = Command::new(getent_path()?)
        .args(args)
        .env_clear()
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Parses one `passwd` line (`name:pw:uid:gid:gecos:home:shell`).
pub fn parse_passwd(line: &str) -> Option<PasswdEntry> {
    let f: Vec<&str> = line.trim_end_matches('\n').split(':').collect();
    if f.len() < 7 || f[0].is_empty() {
        return None;
    }
    Some(PasswdEntry {
        name: f[0].to_string(),
        uid: f[2].parse().ok()?,
        gid: f[3].parse().ok()?,
        home: f[5].to_string(),
    })
}

/// Parses one `group` line (`name:pw:gid:member,member`).
pub fn parse_group(line: &str) -> Option<GroupEntry> {
    let f: Vec<&str> = line.trim_end_matches('\n').split(':').collect();
    if f.len() < 4 || f[0].is_empty() {
        return None;
    }
    Some(GroupEntry {
        name: f[0].to_string(),
        gid: f[2].parse().ok()?,
        members: f[3]
            .split(',')
            .filter(|m| !m.is_empty())
            .map(str::to_string)
            .collect(),
    })
}

/// The user called `key` (a name, or a uid in decimal) through getent.
pub fn getent_passwd(key: &str) -> Option<PasswdEntry> {
    // A key getent would read as an option or as several keys is no user.
    if key.is_empty() || key.starts_with('-') || key.contains(char::is_whitespace) {
        return None;
    }
    parse_passwd(getent(&["passwd", key])?.lines().next()?)
}

/// The group called `name` through getent.
pub fn getent_group(name: &str) -> Option<GroupEntry> {
    if name.is_empty() || name.starts_with('-') || name.contains(char::is_whitespace) {
        return None;
    }
    parse_group(getent(&["group", name])?.lines().next()?)
}

/// Every group of user `name` through `getent initgroups` (which lists
/// the supplementary ones), with `gid` first as getgrouplist gives it.
pub fn getent_groups(name: &str, gid: u32) -> Vec<u32> {
    let mut out = vec![gid];
    let listed = if name.is_empty() || name.starts_with('-') || name.contains(char::is_whitespace) {
        None
    } else {
        getent(&["initgroups", name])
    };
    // `name gid gid ...`: the first word is the user's name.
    for g in listed.iter().flat_map(|l| l.split_whitespace().skip(1)) {
        if let Ok(g) = g.parse::<u32>()
            && !out.contains(&g)
        {
            out.push(g);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_read_the_line_of_the_database_without_actions() {
        let conf = "# comment\npasswd:   files systemd\ngroup: sss [NOTFOUND=return] files # x\n\
                    initgroups: files [ SUCCESS=continue ] sss\n";
        assert_eq!(sources(conf, "passwd"), ["files", "systemd"]);
        assert_eq!(sources(conf, "group"), ["sss", "files"]);
        assert_eq!(sources(conf, "initgroups"), ["files", "sss"]);
        assert_eq!(sources(conf, "hosts"), ["files"], "glibc's default");
        assert_eq!(sources("", "passwd"), ["files"]);
    }

    #[test]
    fn passwd_and_group_lines_parse_and_bad_ones_do_not() {
        assert_eq!(
            parse_passwd("alice:x:1001:1002:Alice A,,,:/home/alice:/bin/bash\n"),
            Some(PasswdEntry {
                name: "alice".into(),
                uid: 1001,
                gid: 1002,
                home: "/home/alice".into()
            })
        );
        assert_eq!(parse_passwd("alice:x:uid:1:::/bin/sh"), None);
        assert_eq!(parse_passwd("alice:x:1:1"), None);
        assert_eq!(
            parse_group("tern:x:998:alice,bob"),
            Some(GroupEntry {
                name: "tern".into(),
                gid: 998,
                members: vec!["alice".into(), "bob".into()]
            })
        );
        assert_eq!(parse_group("empty:x:5:").map(|g| g.members.len()), Some(0));
        assert_eq!(parse_group("bad:x:gid:"), None);
    }

    #[test]
    fn a_lookup_asks_files_first_and_getent_on_a_miss() {
        if !files_first("passwd") {
            eprintln!("skipped: nsswitch.conf does not consult files first");
            return;
        }
        assert_eq!(
            lookup("passwd", || Some(1), || panic!("files answered")),
            Some(1)
        );
        assert_eq!(lookup("passwd", || None, || Some(2)), Some(2));
        assert_eq!(lookup::<u32>("passwd", || None, || None), None);
        // Restricted to files, glibc still finds a user of /etc/passwd.
        let root = lookup(
            "passwd",
            || crate::sys::identity::passwd_uid(0).map(|p| p.name),
            || None,
        );
        assert_eq!(root.as_deref(), Some("root"));
    }

    #[test]
    fn getent_finds_root_by_name_and_uid_and_refuses_odd_keys() {
        if getent_path().is_none() {
            eprintln!("skipped: no getent on this machine");
            return;
        }
        let by_name = getent_passwd("root").expect("root through getent");
        assert_eq!((by_name.uid, by_name.gid), (0, 0));
        assert_eq!(getent_passwd("0").map(|p| p.name), Some("root".into()));
        assert_eq!(getent_passwd("no-such-user-tern-test"), None);
        assert_eq!(getent_passwd("-s"), None);
        assert_eq!(getent_passwd("root daemon"), None);
        assert_eq!(getent_group("root").map(|g| g.gid), Some(0));
        assert_eq!(getent_groups("root", 0).first(), Some(&0));
    }
}
