//! `tern_continue`: continue suspended jobs (HTCondor's `condor_continue`).
fn main() -> std::process::ExitCode {
    tern::cli::continue_job::main()
}
