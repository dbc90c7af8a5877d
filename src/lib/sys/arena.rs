//! One malloc arena for the whole process.
//!
//! glibc gives every thread that allocates an arena of its own, a 64 MB
//! reservation whose heap grows by `mprotect`, one system call and one
//! split of the mapping for every step: about 40 of them for one
//! `tern_submit` when its body ran on a worker thread, against a handful
//! of `brk` calls for the main arena. tern's tools do their work on one
//! thread (the others only feed pipes), so nothing contends for a single
//! arena, and [`START_WITH_ONE_ARENA`] sets `M_ARENA_MAX` to 1 before any
//! thread starts. The setting lives in this process's memory
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
    /// The main arena's heap, the `[heap]` mapping (brk's), as a range.
    fn main_heap() -> std::ops::Range<usize> {
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let line = maps.lines().find(|l| l.ends_with("[heap]")).unwrap();
        let (a, b) = line
            .split_whitespace()
            .next()
            .unwrap()
            .split_once('-')
            .unwrap();
        usize::from_str_radix(a, 16).unwrap()..usize::from_str_radix(b, 16).unwrap()
    }

    /// A thread's allocation comes from the main arena's heap, not from an
    /// arena of its own (an mmap'ed region): the constructor ran in the
    /// test binary too, which links the library.
    #[test]
    fn a_worker_thread_allocates_from_the_main_arena() {
        let (addr, heap) = std::thread::spawn(|| {
            let block = vec![1u8; 16 << 10];
            let addr = block.as_ptr() as usize;
            (addr, main_heap())
        })
        .join()
        .unwrap();
        assert!(
            heap.contains(&addr),
            "{addr:#x} is outside the main heap {heap:x?}"
        );
    }
}
