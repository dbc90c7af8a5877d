//! The group database, for the audit of a shared installation (who is in
//! group tern) and the installer (its gid).

use std::ffi::{CStr, CString};

/// A group: its id and the users listed as its members (`gr_mem`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub gid: libc::gid_t,
    pub members: Vec<String>,
}

/// The group called `name`, or `None` when there is none: getgrnam_r, or
/// in a static build as `sys::nss` says.
pub fn by_name(name: &str) -> Option<Group> {
    if super::nss::in_use() {
        return super::nss::lookup(
            "group",
            || getgrnam(name),
            || {
                super::nss::getent_group(name).map(|g| Group {
                    gid: g.gid,
                    members: g.members,
                })
            },
        );
    }
    getgrnam(name)
}

/// getgrnam_r.
fn getgrnam(name: &str) -> Option<Group> {
    let cname = CString::new(name).ok()?;
    // SAFETY: an all-zero group is a valid value to be overwritten.
    let mut gr: libc::group = unsafe { std::mem::zeroed() };
    // A group with many members needs a larger buffer: grow on ERANGE.
    let mut buf = vec![0 as libc::c_char; 1 << 16];
    loop {
        let mut out: *mut libc::group = std::ptr::null_mut();
        // SAFETY: getgrnam_r fills the group and the buffer we own, and
        // sets `out` to `&gr` or null; we copy out everything we keep.
        let rc = unsafe {
            libc::getgrnam_r(
                cname.as_ptr(),
                &mut gr,
                buf.as_mut_ptr(),
                buf.len(),
                &mut out,
            )
        };
        if rc == libc::ERANGE && buf.len() < 1 << 24 {
            buf = vec![0; buf.len() * 4];
            continue;
        }
        if rc != 0 || out.is_null() {
            return None;
        }
        break;
    }
    let mut members = Vec::new();
    let mut p = gr.gr_mem;
    // SAFETY: gr_mem is a null-terminated array of NUL-terminated strings
    // inside `buf`, which is alive for the loop.
    unsafe {
        while !p.is_null() && !(*p).is_null() {
            members.push(CStr::from_ptr(*p).to_string_lossy().into_owned());
            p = p.add(1);
        }
    }
    Some(Group {
        gid: gr.gr_gid,
        members,
    })
}

/// The users whose primary group is `gid`, from /etc/passwd (users from
/// other NSS sources are not listed: getpwent over a directory service
/// can be endless).
pub fn primary_members(gid: libc::gid_t) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string("/etc/passwd") else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.len() >= 4 && f[3].parse::<libc::gid_t>().ok() == Some(gid))
                .then(|| f[0].to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_group_is_gid_0_and_a_made_up_name_is_none() {
        assert_eq!(by_name("root").map(|g| g.gid), Some(0));
        assert_eq!(by_name("no-such-group-tern-test"), None);
        assert!(primary_members(0).contains(&"root".to_string()));
    }
}
