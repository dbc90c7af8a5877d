//! Signals to processes and process groups by id (kill(2)).

/// Sends `sig` to the process `pid`; whether it was delivered (false for a
/// process that has exited meanwhile, which callers mostly do not mind).
pub fn signal_process(pid: i32, sig: i32) -> bool {
    if pid <= 0 {
        // kill(0 or -n) would reach a whole group: not what this promises.
        return false;
    }
    // SAFETY: kill(2) with a valid signal number has no memory effects.
    unsafe { libc::kill(pid, sig) == 0 }
}

/// Sends `sig` to every process of the group `pgid` (kill(-pgid));
/// whether any process received it.
pub fn signal_group(pgid: i32, sig: i32) -> bool {
    if pgid <= 1 {
        // -1 is every process we may signal, -0 our own group.
        return false;
    }
    // SAFETY: as above.
    unsafe { libc::kill(-pgid, sig) == 0 }
}
