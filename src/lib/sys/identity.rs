//! Who a process runs as: the effective user, and a user's ids and groups
//! looked up by name in the passwd and group databases (NSS included).
//! The shadow uses these to run a job as its Owner when it runs as root.

use std::ffi::{CStr, CString};

/// A user to run as: ids and supplementary groups.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub uid: libc::uid_t,
    pub gid: libc::gid_t,
    pub groups: Vec<libc::gid_t>,
    /// The file-creation mask a process started as the user gets: 022
    /// unless the job says which (its OwnerUmask, the submitter's).
    pub umask: libc::mode_t,
}

/// The calling process's effective uid.
pub fn effective_uid() -> libc::uid_t {
    // SAFETY: geteuid has no preconditions and no side effects.
    unsafe { libc::geteuid() }
}

/// Whether the calling process runs as root (effective uid 0).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and no side effects.
    unsafe { libc::geteuid() == 0 }
}

/// Makes the child `cmd` starts unblock every signal and put every
/// signal back to its default action between fork and exec (the mask and
/// ignored signals are inherited, and a job or hook must see its signals)
/// and, with `id`, become that user for good ([`become_user`]) and only
/// then enter `dir`. std's `current_dir` changes directory before the
/// `pre_exec` closures run, that is, with the parent's ids: a root parent
/// would enter a directory the user cannot reach (and leave the job a
/// working directory inside it), so for another user the directory is
/// entered here. A failure there is the spawn's error.
pub fn child_runs_as(
    cmd: &mut std::process::Command,
    id: Option<Identity>,
    dir: Option<&std::path::Path>,
) {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::process::CommandExt;
    let dir = match (&id, dir) {
        (None, Some(d)) => {
            cmd.current_dir(d);
            None
        }
        // A path with a NUL cannot be a directory: chdir to "" fails.
        (Some(_), Some(d)) => Some(CString::new(d.as_os_str().as_bytes()).unwrap_or_default()),
        (_, None) => None,
    };
    // SAFETY: only async-signal-safe calls between fork and exec, on data
    // moved into the closure before the fork (no allocation).
    unsafe {
        cmd.pre_exec(move || {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
            for sig in 1..=libc::SIGRTMAX() {
                if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                    libc::signal(sig, libc::SIG_DFL);
                }
            }
            if let Some(id) = &id {
                become_user(id)?;
                libc::umask(id.umask & 0o777);
            }
            if let Some(d) = &dir
                && libc::chdir(d.as_ptr()) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Makes this process `id` for good: the supplementary groups, then the
/// real, effective and saved group, then the real, effective and saved
/// user (after that nothing else may change), and checks that root cannot
/// be taken back. Only between fork and exec, or in a process that is done
/// with its privileges: it allocates nothing.
fn become_user(id: &Identity) -> std::io::Result<()> {
    // SAFETY: plain system calls on values we own; each failure is
    // reported and stops the switch before the next step.
    unsafe {
        // A parent acting as a user ([`act_as`]) kept root as its saved
        // uid: take it back first, or setgroups is refused.
        libc::setresuid(KEEP, 0, KEEP);
        if libc::setgroups(id.groups.len(), id.groups.as_ptr()) != 0
            || libc::setresgid(id.gid, id.gid, id.gid) != 0
            || libc::setresuid(id.uid, id.uid, id.uid) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        if id.uid != 0 && libc::setuid(0) == 0 {
            return Err(std::io::Error::from_raw_os_error(libc::EPERM));
        }
    }
    Ok(())
}

/// Root acting as another user for file access: while this lives, the
/// process's effective user, effective group and supplementary groups are
/// the user's, so every open, create and lookup is checked as the user's
/// and what is made belongs to the user, with the user's umask (a job's
/// Out, Err and event log get the modes the submitter's own files would).
/// The real and saved ids stay root's, so the user cannot signal or trace
/// the process meanwhile (a change of effective ids also makes it
/// non-dumpable), and dropping the guard takes root's back. The ids and
/// the umask are the process's, every thread's: nothing may rely on
/// root's rights while a guard lives.
pub struct ActingAs {
    egid: libc::gid_t,
    groups: Vec<libc::gid_t>,
    umask: libc::mode_t,
}

const KEEP: libc::uid_t = libc::uid_t::MAX;

/// Starts acting as `id` (see [`ActingAs`]). Only for a root process.
pub fn act_as(id: &Identity) -> std::io::Result<ActingAs> {
    // Only from root's own ids: a nested switch would give root's back
    // when it ends, in the middle of the outer one.
    if !is_root() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "acting as a user needs root's effective ids",
        ));
    }
    let groups = current_groups()?;
    // SAFETY: getegid has no preconditions.
    let egid = unsafe { libc::getegid() };
    // SAFETY: umask cannot fail; the old mask is kept to be put back.
    let umask = unsafe { libc::umask(id.umask & 0o777) };
    let saved = ActingAs {
        egid,
        groups,
        umask,
    };
    // SAFETY: plain system calls; on a failure the guard built above
    // restores whatever had changed.
    unsafe {
        if libc::setgroups(id.groups.len(), id.groups.as_ptr()) != 0
            || libc::setresgid(KEEP, id.gid, KEEP) != 0
            || libc::setresuid(KEEP, id.uid, KEEP) != 0
        {
            let e = std::io::Error::last_os_error();
            drop(saved);
            return Err(e);
        }
    }
    Ok(saved)
}

impl Drop for ActingAs {
    fn drop(&mut self) {
        // SAFETY: plain system calls. Going on with the wrong ids would
        // do root's work as the user or the user's as root: abort.
        unsafe {
            if libc::setresuid(KEEP, 0, KEEP) != 0
                || libc::setresgid(KEEP, self.egid, KEEP) != 0
                || libc::setgroups(self.groups.len(), self.groups.as_ptr()) != 0
            {
                note!(
                    "tern: cannot take back root's ids: {}",
                    std::io::Error::last_os_error()
                );
                std::process::abort();
            }
            libc::umask(self.umask);
        }
    }
}

/// Runs `f` as `id` when given ([`act_as`]), else as this process.
pub fn as_user<T>(id: Option<&Identity>, f: impl FnOnce() -> T) -> std::io::Result<T> {
    let _acting = id.map(act_as).transpose()?;
    Ok(f())
}

/// getgroups: this process's supplementary groups.
fn current_groups() -> std::io::Result<Vec<libc::gid_t>> {
    // SAFETY: getgroups with size 0 only counts; then it fills at most
    // `n` entries of a buffer that holds `n`.
    unsafe {
        let n = libc::getgroups(0, std::ptr::null_mut());
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut v = vec![0; n as usize];
        let got = libc::getgroups(n, v.as_mut_ptr());
        if got < 0 {
            return Err(std::io::Error::last_os_error());
        }
        v.truncate(got as usize);
        Ok(v)
    }
}

/// The rules a root process follows to act for a job's owner (run the
/// job, open its files, write its event log), from the configuration
/// ([`set_owner_rules`], once a tool has read it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnerRules {
    /// SHARED_QUEUE: the queue is written by every user of the machine.
    pub shared: bool,
    /// ALLOW_ROOT_JOBS: a job whose owner is root (uid or gid 0) may run.
    pub allow_root: bool,
    /// MIN_OWNER_UID: no job runs as a uid below this.
    pub min_uid: libc::uid_t,
    /// The group of SPOOL in shared mode (`tern`): never one of a job's.
    pub spool_gid: Option<libc::gid_t>,
    /// The queue's database file. In personal mode a queue whose database
    /// root owns is root's own (root made it by submitting there), and
    /// runs root's jobs as root; any other user's database could say
    /// anything about its jobs' owners.
    pub queue_db: Option<std::path::PathBuf>,
}

impl OwnerRules {
    /// Whether a job whose owner is root may run as root: ALLOW_ROOT_JOBS,
    /// or, in personal mode, root's own queue. The database is looked at
    /// each time: a long-running pass may have made it after it started.
    /// Without a queue (no configuration read, no SPOOL: a library caller
    /// acting for itself) root stays root, as before shared mode.
    fn root_may_run(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        if self.allow_root {
            return true;
        }
        match (&self.queue_db, self.shared) {
            (_, true) => false,
            (None, false) => true,
            (Some(db), false) => std::fs::symlink_metadata(db).is_ok_and(|m| m.uid() == 0),
        }
    }

    /// Why a job of `owner` (uid `uid`, gid `gid`) may not run as root.
    fn root_refused(&self, owner: &str, uid: libc::uid_t, gid: libc::gid_t) -> String {
        let queue = match (&self.queue_db, self.shared) {
            (Some(db), false) => format!(", and the queue {} is not root's own", db.display()),
            _ => String::new(),
        };
        format!(
            "Running a job as root is not permitted (the owner '{owner}' is uid {uid} gid {gid}; \
             ALLOW_ROOT_JOBS is false{queue})"
        )
    }
}

static RULES: std::sync::RwLock<Option<OwnerRules>> = std::sync::RwLock::new(None);

/// Sets the rules [`job_owner`] follows, for the rest of the process.
pub fn set_owner_rules(rules: OwnerRules) {
    *RULES.write().unwrap_or_else(|e| e.into_inner()) = Some(rules);
}

/// The rules in force: those set, else the knobs' defaults (personal
/// mode, no root jobs for others, uids from 1000), as an empty
/// configuration would give.
pub fn owner_rules() -> OwnerRules {
    RULES
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .unwrap_or(OwnerRules {
            shared: false,
            allow_root: false,
            min_uid: 1000,
            spool_gid: None,
            queue_db: None,
        })
}

/// A job's owner as its ad records them (see `vocab::owner_of`): Owner,
/// OwnerUid (the uid that submitted it) and OwnerUmask (the submitter's
/// umask).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct JobOwner {
    pub name: String,
    pub uid: Option<i64>,
    pub umask: Option<i64>,
}

impl JobOwner {
    /// Whom a root process acts as for this job ([`job_owner`]), with the
    /// submitter's umask when the ad has a valid one (else 022, HTCondor's).
    pub fn identity(&self) -> Result<Option<Identity>, String> {
        self.identity_under(&owner_rules())
    }

    fn identity_under(&self, rules: &OwnerRules) -> Result<Option<Identity>, String> {
        let mut id = job_owner_under(rules, &self.name, self.uid)?;
        if let (Some(id), Some(mask)) = (id.as_mut(), self.umask)
            && (0..=0o777).contains(&mask)
        {
            id.umask = mask as libc::mode_t;
        }
        Ok(id)
    }
}

/// Whom a root process acts as for a job of `owner` (the job's Owner)
/// submitted by `owner_uid` (its OwnerUid, when the job has one): `None`
/// means root itself (root's own job in its personal queue, or a root job
/// ALLOW_ROOT_JOBS permits); an error is the reason the job may not run
/// (HTCondor's hold 23, FailedToAccessUserAccount). The owner's groups
/// lose 0 and SPOOL's group.
pub fn job_owner(owner: &str, owner_uid: Option<i64>) -> Result<Option<Identity>, String> {
    job_owner_under(&owner_rules(), owner, owner_uid)
}

/// [`job_owner`] under the given rules.
fn job_owner_under(
    rules: &OwnerRules,
    owner: &str,
    owner_uid: Option<i64>,
) -> Result<Option<Identity>, String> {
    // Root's own personal queue records no OwnerUid worth checking: root
    // wrote it. Anyone else's may claim root for any job.
    if !rules.shared && owner == "root" {
        return match rules.root_may_run() {
            true => Ok(None),
            false => Err(rules.root_refused(owner, 0, 0)),
        };
    }
    let Some(mut id) = user(owner).filter(|_| !owner.is_empty()) else {
        return Err(format!(
            "Failed to run the job as its owner '{owner}': no such user on this machine"
        ));
    };
    match owner_uid {
        Some(u) if u != i64::from(id.uid) => {
            return Err(format!(
                "The job's owner '{owner}' is uid {}, but the job was submitted by uid {u}",
                id.uid
            ));
        }
        None if rules.shared => {
            return Err(format!(
                "The job of '{owner}' has no OwnerUid: it was not submitted through tern"
            ));
        }
        _ => {}
    }
    if id.uid == 0 || id.gid == 0 {
        if rules.root_may_run() {
            return Ok(None);
        }
        return Err(rules.root_refused(owner, id.uid, id.gid));
    }
    if id.uid < rules.min_uid {
        return Err(format!(
            "The job's owner '{owner}' is uid {}, below MIN_OWNER_UID ({})",
            id.uid, rules.min_uid
        ));
    }
    id.groups.retain(|&g| g != 0 && Some(g) != rules.spool_gid);
    Ok(Some(id))
}

/// The user called `name`, with their primary group and every group
/// that lists them; `None` when this machine does not know the name (or
/// it holds a NUL, which no user name does).
pub fn user(name: &str) -> Option<Identity> {
    let cname = CString::new(name).ok()?;
    let pw = passwd(&cname)?;
    Some(Identity {
        uid: pw.uid,
        gid: pw.gid,
        groups: group_list(&cname, pw.gid),
        umask: 0o022,
    })
}

/// A user's entry in the password database.
pub(crate) struct Passwd {
    pub name: String,
    pub uid: libc::uid_t,
    pub gid: libc::gid_t,
    /// `None` when the entry has no home directory.
    pub home: Option<String>,
}

impl From<super::nss::PasswdEntry> for Passwd {
    fn from(e: super::nss::PasswdEntry) -> Passwd {
        Passwd {
            name: e.name,
            uid: e.uid,
            gid: e.gid,
            home: Some(e.home).filter(|h| !h.is_empty()),
        }
    }
}

/// The one password-database lookup (uid, primary gid, home), for running
/// a job as its Owner and for the ClassAd `userHome()`: getpwnam_r, or in
/// a static build as `sys::nss` says.
pub(crate) fn passwd(name: &CStr) -> Option<Passwd> {
    if super::nss::in_use() {
        let text = name.to_str().ok()?;
        return super::nss::lookup(
            "passwd",
            || getpwnam(name),
            || super::nss::getent_passwd(text).map(Passwd::from),
        );
    }
    getpwnam(name)
}

/// getpwnam_r.
fn getpwnam(name: &CStr) -> Option<Passwd> {
    // SAFETY: an all-zero passwd is a valid value to be overwritten.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16384];
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: getpwnam_r fills the passwd and the buffer we own, and sets
    // `out` to `&pw` or null; nothing outlives the call but what we copy.
    let rc = unsafe {
        libc::getpwnam_r(
            name.as_ptr(),
            &mut pw,
            buf.as_mut_ptr(),
            buf.len(),
            &mut out,
        )
    };
    if rc != 0 || out.is_null() || pw.pw_name.is_null() {
        return None;
    }
    let home = if pw.pw_dir.is_null() {
        None
    } else {
        // SAFETY: pw_dir points to a NUL-terminated string inside `buf`,
        // which is still alive; we copy it out.
        Some(
            unsafe { CStr::from_ptr(pw.pw_dir) }
                .to_string_lossy()
                .into_owned(),
        )
    };
    Some(Passwd {
        // SAFETY: pw_name points to a NUL-terminated string inside `buf`.
        name: unsafe { CStr::from_ptr(pw.pw_name) }
            .to_string_lossy()
            .into_owned(),
        uid: pw.pw_uid,
        gid: pw.pw_gid,
        home,
    })
}

/// The entry of a uid (the real user's home for `~`): getpwuid_r, or in a
/// static build as `sys::nss` says.
pub(crate) fn passwd_uid(uid: libc::uid_t) -> Option<Passwd> {
    if super::nss::in_use() {
        return super::nss::lookup(
            "passwd",
            || getpwuid(uid),
            || super::nss::getent_passwd(&uid.to_string()).map(Passwd::from),
        );
    }
    getpwuid(uid)
}

/// getpwuid_r.
fn getpwuid(uid: libc::uid_t) -> Option<Passwd> {
    // SAFETY: an all-zero passwd is a valid value to be overwritten.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16384];
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: getpwuid_r fills the passwd and the buffer we own, and sets
    // `out` to `&pw` or null; nothing outlives the call but what we copy.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() || pw.pw_name.is_null() {
        return None;
    }
    Some(Passwd {
        // SAFETY: pw_name points to a NUL-terminated string inside `buf`.
        name: unsafe { CStr::from_ptr(pw.pw_name) }
            .to_string_lossy()
            .into_owned(),
        uid: pw.pw_uid,
        gid: pw.pw_gid,
        // SAFETY: pw_dir, when set, points to a NUL-terminated string in
        // `buf`, still alive; we copy it out.
        home: (!pw.pw_dir.is_null()).then(|| {
            unsafe { CStr::from_ptr(pw.pw_dir) }
                .to_string_lossy()
                .into_owned()
        }),
    })
}

/// The gid of the group called `name`; `None` when there is no such
/// group.
pub fn group_gid(name: &str) -> Option<libc::gid_t> {
    super::group::by_name(name).map(|g| g.gid)
}

/// The members the group database lists for the group called `name`
/// (`gr_mem`: users whose primary group it is are not listed unless named
/// there too); `None` when there is no such group.
pub fn group_members(name: &str) -> Option<Vec<String>> {
    super::group::by_name(name).map(|g| g.members)
}

/// Every group of the user, `gid` included: getgrouplist, or in a static
/// build as `sys::nss` says.
fn group_list(name: &CString, gid: libc::gid_t) -> Vec<libc::gid_t> {
    if super::nss::in_use() {
        let text = name.to_string_lossy();
        return super::nss::group_list(&text, gid, || getgrouplist(name, gid));
    }
    getgrouplist(name, gid)
}

/// getgrouplist, growing the list until it fits.
fn getgrouplist(name: &CString, gid: libc::gid_t) -> Vec<libc::gid_t> {
    let mut n: libc::c_int = 64;
    let mut groups: Vec<libc::gid_t> = vec![0; n as usize];
    loop {
        // SAFETY: getgrouplist writes at most n entries into groups, which
        // holds n, and sets n to the number it has (or needs).
        let r = unsafe { libc::getgrouplist(name.as_ptr(), gid, groups.as_mut_ptr(), &mut n) };
        if r >= 0 {
            groups.truncate(n as usize);
            return groups;
        }
        groups.resize(n as usize + 16, 0);
        n = groups.len() as libc::c_int;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_known_and_a_made_up_name_is_not() {
        let root = user("root").expect("every Linux has root");
        assert_eq!((root.uid, root.gid), (0, 0));
        assert!(root.groups.contains(&0));
        assert_eq!(user("no-such-user-tern-test"), None);
        assert_eq!(user("nul\0name"), None);
    }

    fn rules(shared: bool) -> OwnerRules {
        OwnerRules {
            shared,
            allow_root: false,
            min_uid: 1000,
            spool_gid: None,
            queue_db: None,
        }
    }

    #[test]
    fn who_a_root_process_may_act_for() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("queue.db");
        std::fs::write(&db, "").unwrap();
        let personal = OwnerRules {
            queue_db: Some(db),
            ..rules(false)
        };
        let shared = rules(true);
        // Root's own personal queue runs root's jobs (when the test runs
        // as root, its database is root's); shared mode never.
        if is_root() {
            assert_eq!(job_owner_under(&personal, "root", None), Ok(None));
        }
        let e = job_owner_under(&shared, "root", Some(0)).unwrap_err();
        assert!(e.contains("ALLOW_ROOT_JOBS"), "{e}");
        let allowed = OwnerRules {
            allow_root: true,
            ..rules(true)
        };
        assert_eq!(job_owner_under(&allowed, "root", Some(0)), Ok(None));
        let e = job_owner_under(&shared, "no-such-user-tern-test", Some(1)).unwrap_err();
        assert!(e.contains("no such user"), "{e}");
        assert!(job_owner_under(&shared, "", Some(1)).is_err());
        // nobody (65534 on Debian) stands in for an ordinary user.
        let Some(nobody) = user("nobody") else { return };
        let uid = i64::from(nobody.uid);
        let e = job_owner_under(&shared, "nobody", None).unwrap_err();
        assert!(e.contains("no OwnerUid"), "{e}");
        let e = job_owner_under(&shared, "nobody", Some(uid + 1)).unwrap_err();
        assert!(e.contains("submitted by uid"), "{e}");
        let high = OwnerRules {
            min_uid: nobody.uid + 1,
            ..rules(true)
        };
        let e = job_owner_under(&high, "nobody", Some(uid)).unwrap_err();
        assert!(e.contains("MIN_OWNER_UID"), "{e}");
        let strip = OwnerRules {
            spool_gid: Some(nobody.gid),
            ..rules(true)
        };
        let id = job_owner_under(&strip, "nobody", Some(uid))
            .unwrap()
            .unwrap();
        assert_eq!(id.uid, nobody.uid);
        assert!(!id.groups.contains(&0) && !id.groups.contains(&nobody.gid));
        // Personal mode needs no OwnerUid (jobs from before it existed).
        assert!(
            job_owner_under(&personal, "nobody", None)
                .unwrap()
                .is_some()
        );
    }

    /// A user whose personal queue a root pass serves writes Owner="root"
    /// (or OwnerUid 0) into their own database: root is refused unless
    /// ALLOW_ROOT_JOBS says otherwise or the database is root's.
    #[test]
    fn a_root_owner_in_a_users_personal_queue_is_refused() {
        let Some(nobody) = user("nobody") else { return };
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("queue.db");
        std::fs::write(&db, "").unwrap();
        if is_root() {
            std::os::unix::fs::chown(&db, Some(nobody.uid), Some(nobody.gid)).unwrap();
        }
        let theirs = OwnerRules {
            queue_db: Some(db.clone()),
            ..rules(false)
        };
        for (owner, uid) in [("root", None), ("root", Some(0))] {
            let e = job_owner_under(&theirs, owner, uid).unwrap_err();
            assert!(e.contains("ALLOW_ROOT_JOBS is false"), "{e}");
            assert!(
                e.contains(&format!("{} is not root's own", db.display())),
                "{e}"
            );
        }
        let allowed = OwnerRules {
            allow_root: true,
            ..theirs
        };
        assert_eq!(job_owner_under(&allowed, "root", None), Ok(None));
    }

    #[test]
    fn a_job_owner_carries_the_submitters_umask() {
        let Some(nobody) = user("nobody") else { return };
        let uid = Some(i64::from(nobody.uid));
        let low = OwnerRules {
            min_uid: 0,
            ..rules(false)
        };
        let of = |umask| JobOwner {
            name: "nobody".into(),
            uid,
            umask,
        };
        let mask = |o: JobOwner| o.identity_under(&low).unwrap().unwrap().umask;
        assert_eq!(mask(of(Some(0o077))), 0o077);
        assert_eq!(mask(of(None)), 0o022);
        assert_eq!(mask(of(Some(0o1000))), 0o022, "out of range: 022");
    }

    #[test]
    fn acting_as_a_user_makes_their_files_and_gives_root_back() {
        if !is_root() {
            return;
        }
        // The ids are the whole process's: switching them here would make
        // the other tests' threads run as nobody. The check runs in a
        // process of its own: this test binary, run again for this test.
        if std::env::var_os("TERN_ACT_AS_CHILD").is_none() {
            crate::sys::pids::rerun_test_alone(
                "sys::identity::tests::acting_as_a_user_makes_their_files_and_gives_root_back",
                "TERN_ACT_AS_CHILD",
            );
            return;
        }
        let Some(nobody) = user("nobody") else { return };
        let dir = tempfile::tempdir().unwrap();
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let closed = dir.path().join("closed");
        std::fs::create_dir(&closed).unwrap();
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
        let made = dir.path().join("made");
        let (created, refused) = as_user(Some(&nobody), || {
            (
                std::fs::write(&made, "x"),
                std::fs::write(closed.join("f"), "x"),
            )
        })
        .unwrap();
        created.unwrap();
        assert_eq!(
            refused.unwrap_err().kind(),
            std::io::ErrorKind::PermissionDenied
        );
        assert_eq!(std::fs::metadata(&made).unwrap().uid(), nobody.uid);
        assert!(is_root(), "root's ids are back");
        std::fs::write(closed.join("f"), "x").unwrap();
    }

    #[test]
    fn group_members_are_read_and_a_made_up_group_is_none() {
        assert!(group_members("root").is_some());
        assert_eq!(group_members("no-such-group-tern-test"), None);
        assert_eq!(group_members("nul\0name"), None);
    }

    #[test]
    fn one_lookup_gives_ids_and_home() {
        let pw = passwd(c"root").expect("every Linux has root");
        assert_eq!((pw.uid, pw.gid), (0, 0));
        assert_eq!(pw.home, super::super::host::home_dir("root"));
        assert!(pw.home.is_some());
    }
}
