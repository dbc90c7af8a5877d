//! Facts about the process and the machine that every layer may need.

/// The real user's login name (from the real uid, never from anything the
/// caller can set), or the uid as text when it has no passwd entry.
pub fn real_user_name() -> String {
    // SAFETY: getuid has no preconditions; getpwuid returns a pointer into
    // static storage that we copy out of before any other passwd call.
    unsafe {
        let uid = libc::getuid();
        let pw = libc::getpwuid(uid);
        if pw.is_null() || (*pw).pw_name.is_null() {
            return uid.to_string();
        }
        std::ffi::CStr::from_ptr((*pw).pw_name)
            .to_string_lossy()
            .into_owned()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn real_user_has_a_name() {
        assert!(!super::real_user_name().is_empty());
    }
}
