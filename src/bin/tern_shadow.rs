//! `tern_shadow`: the per-claim job supervisor started by tern_negotiate.

// The shadow lives for many jobs and allocates a few hundred times a job
// (ads, SQL rows); mimalloc's allocation and free cost a third of glibc's
// there. The short tools keep glibc's malloc: mimalloc's start-up page
// faults cost them more than it saves (bench/README.md).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    tern::cli::shadow::main()
}
