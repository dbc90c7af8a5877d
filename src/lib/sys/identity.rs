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
}

/// Whether the calling process runs as root (effective uid 0).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and no side effects.
    unsafe { libc::geteuid() == 0 }
}

/// Makes the child `cmd` starts unblock every signal between fork and exec
/// (the mask is inherited, and a job or hook must see its signals) and,
/// with `id`, take that user: the supplementary groups, the group and the
/// user, in that order (after setuid nothing else may change). A failure
/// there is the spawn's error.
pub fn child_runs_as(cmd: &mut std::process::Command, id: Option<Identity>) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls between fork and exec, on data
    // moved into the closure before the fork.
    unsafe {
        cmd.pre_exec(move || {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
            if let Some(id) = &id
                && (libc::setgroups(id.groups.len(), id.groups.as_ptr()) != 0
                    || libc::setgid(id.gid) != 0
                    || libc::setuid(id.uid) != 0)
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
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
    })
}

/// A user's entry in the password database.
pub(crate) struct Passwd {
    pub uid: libc::uid_t,
    pub gid: libc::gid_t,
    /// `None` when the entry has no home directory.
    pub home: Option<String>,
}

/// getpwnam_r: the one password-database lookup (uid, primary gid, home),
/// for running a job as its Owner and for the ClassAd `userHome()`.
pub(crate) fn passwd(name: &CStr) -> Option<Passwd> {
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
    if rc != 0 || out.is_null() {
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
        uid: pw.pw_uid,
        gid: pw.pw_gid,
        home,
    })
}

/// The members the group database lists for the group called `name`
/// (`gr_mem`: users whose primary group it is are not listed unless named
/// there too); `None` when there is no such group.
pub fn group_members(name: &str) -> Option<Vec<String>> {
    let cname = CString::new(name).ok()?;
    // SAFETY: an all-zero group is a valid value to be overwritten.
    let mut gr: libc::group = unsafe { std::mem::zeroed() };
    let mut size = 16384;
    loop {
        let mut buf = vec![0 as libc::c_char; size];
        let mut out: *mut libc::group = std::ptr::null_mut();
        // SAFETY: getgrnam_r fills the group and the buffer we own, and
        // sets `out` to `&gr` or null; we copy the names out before `buf`
        // is dropped.
        let rc = unsafe {
            libc::getgrnam_r(
                cname.as_ptr(),
                &mut gr,
                buf.as_mut_ptr(),
                buf.len(),
                &mut out,
            )
        };
        if rc == libc::ERANGE && size < (1 << 24) {
            size *= 4;
            continue;
        }
        if rc != 0 || out.is_null() {
            return None;
        }
        let mut members = Vec::new();
        let mut p = gr.gr_mem;
        // SAFETY: gr_mem is a NULL-terminated array of NUL-terminated
        // strings inside `buf`, which is alive here.
        unsafe {
            while !p.is_null() && !(*p).is_null() {
                members.push(CStr::from_ptr(*p).to_string_lossy().into_owned());
                p = p.add(1);
            }
        }
        return Some(members);
    }
}

/// getgrouplist: every group of the user, `gid` included, growing the
/// list until it fits.
fn group_list(name: &CString, gid: libc::gid_t) -> Vec<libc::gid_t> {
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
