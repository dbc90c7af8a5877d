//! The process environment, where changing it needs care.

/// Sets an environment variable that the programs this process starts
/// inherit. Only for the start of a process, before it starts any
/// thread: the C library's environment is not safe to change while
/// another thread may read it.
pub fn set_before_threads(key: &str, value: &str) {
    // SAFETY: the caller runs before any other thread exists (see above);
    // then nothing can read the environment while it changes.
    unsafe { std::env::set_var(key, value) };
}
