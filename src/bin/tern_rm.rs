//! `tern_rm`: remove jobs from the queue (HTCondor's `condor_rm`).
fn main() -> std::process::ExitCode {
    tern::cli::rm::main()
}
