//! The host's password database, read re-entrantly (getpwnam_r).

use std::ffi::{CStr, CString};

/// The home directory of `user` from the password database; `None` for an
/// unknown user (or a name holding a NUL byte).
pub fn home_dir(user: &str) -> Option<String> {
    let name = CString::new(user).ok()?;
    let mut buf = vec![0u8; 16 * 1024];
    // SAFETY: all pointers refer to live, correctly sized storage for the
    // duration of the call; `result` is only read after success, and the
    // strings it points to live in `buf`.
    unsafe {
        let mut pw: libc::passwd = std::mem::zeroed();
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwnam_r(
            name.as_ptr(),
            &mut pw,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut result,
        );
        if rc != 0 || result.is_null() || pw.pw_dir.is_null() {
            return None;
        }
        Some(CStr::from_ptr(pw.pw_dir).to_string_lossy().into_owned())
    }
}
