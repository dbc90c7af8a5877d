//! The host's password database as the ClassAd functions need it.

use std::ffi::CString;

/// The home directory of `user` from the password database; `None` for an
/// unknown user (or a name holding a NUL byte).
pub fn home_dir(user: &str) -> Option<String> {
    let name = CString::new(user).ok()?;
    super::identity::passwd(&name)?.home
}
