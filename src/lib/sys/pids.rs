//! Signals to processes and process groups by id (kill(2)).

/// Sends `sig` to the process `pid`. Whether it arrived is not reported:
/// callers signal processes that may have exited meanwhile.
pub fn signal_process(pid: i32, sig: i32) {
    if pid <= 0 {
        // kill(0 or -n) would reach a whole group: not what this promises.
        return;
    }
    // SAFETY: kill(2) with a valid signal number has no memory effects.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// Sends `sig` to every process of the group `pgid` (kill(-pgid)).
pub fn signal_group(pgid: i32, sig: i32) {
    if pgid <= 1 {
        // -1 is every process we may signal, -0 our own group.
        return;
    }
    // SAFETY: as above.
    unsafe {
        libc::kill(-pgid, sig);
    }
}
