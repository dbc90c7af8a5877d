//! Transparent huge pages at start-up.
//!
//! On a machine whose THP setting is `always`, a large anonymous mapping
//! (a tool's large stack, an allocator's arena) is backed by huge
//! pages, so its first touch faults in a whole huge page and the kernel
//! zeroes 2 MB for a process that needs a few hundred KB: about a fifth of
//! a short tool's run (tern_submit spent 13% of its samples in
//! `clear_page_erms` when mimalloc's 2 MB-aligned arena was the
//! allocator). So every tern process starts with THP off
//! ([`START_WITHOUT_HUGE_PAGES`], run before any other constructor that
//! might allocate). A process that
//! starts a user's program turns it back on for the start alone
//! ([`allow`], then [`disable`]): the flag survives fork and exec, and a
//! job must see the machine's own setting.

/// Turns THP off for this process (`PR_SET_THP_DISABLE`); errors are
/// ignored, the setting only changes speed.
pub fn disable() {
    // SAFETY: prctl with integer arguments has no memory effects.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

extern "C" fn disable_at_start() {
    disable();
}

/// Runs [`disable_at_start`] as a constructor of priority 100, before the
/// default-priority constructors of the libraries linked in.
#[used]
#[unsafe(link_section = ".init_array.00100")]
pub static START_WITHOUT_HUGE_PAGES: extern "C" fn() = disable_at_start;

/// Lets this process, and what it starts from now on, use huge pages
/// again: the shadow calls it just before it starts a job, since the flag
/// survives fork and exec and a job must see the machine's own setting,
/// and [`disable`] once the job is started. The flag belongs to the
/// address space: a child made by fork copies it then, and one made by
/// posix_spawn (vfork: the parent waits) takes it at its exec.
pub fn allow() {
    // SAFETY: as in disable_at_start.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 0, 0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_constructor_ran_before_main() {
        // The test harness links the library like any tool. A kernel
        // without the prctl answers -1, and nothing is to be done there.
        // SAFETY: prctl with integer arguments.
        let supported = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) } >= 0;
        // SAFETY: as above.
        let disabled = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) } == 1;
        assert!(!supported || disabled);
    }
}
