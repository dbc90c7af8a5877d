//! One malloc arena for the whole process.
//!
//! Every tool runs its body on a worker thread (for its large stack, see
//! `cli::run_tool`). glibc gives a thread its own arena, a 64 MB reservation
//! whose heap grows by `mprotect`, one system call and one split of the
//! mapping for every step: about 40 of them for one `tern_submit`, against
//! a handful of `brk` calls for the main arena. tern's tools do their work
//! on that one thread (the others only feed pipes), so nothing contends
//! for a single arena, and [`START_WITH_ONE_ARENA`] sets `M_ARENA_MAX` to 1
//! before any thread starts. The setting lives in this process's memory
//! only: a program it execs starts with glibc's default.

extern "C" fn one_arena_at_start() {
    // SAFETY: mallopt only changes the allocator's parameters; no thread
    // exists yet when constructors run.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Runs [`one_arena_at_start`] as a constructor, before `main`.
#[used]
#[unsafe(link_section = ".init_array.00101")]
pub static START_WITH_ONE_ARENA: extern "C" fn() = one_arena_at_start;

#[cfg(test)]
mod tests {
    /// A thread's allocations come from the main arena (its heap grows by
    /// brk), not from an arena of its own: the constructor ran in the test
    /// binary too, which links the library.
    #[test]
    fn a_worker_thread_allocates_from_the_main_arena() {
        // SAFETY: sbrk(0) only reads the current program break.
        let before = unsafe { libc::sbrk(0) } as usize;
        let grown = std::thread::spawn(|| {
            let v: Vec<Vec<u8>> = (0..64).map(|_| vec![1u8; 16 << 10]).collect();
            // SAFETY: as above.
            let end = unsafe { libc::sbrk(0) } as usize;
            drop(v);
            end
        })
        .join()
        .unwrap();
        assert!(
            grown > before,
            "the main heap did not grow: {before:#x} -> {grown:#x}"
        );
    }
}
