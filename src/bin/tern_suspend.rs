//! `tern_suspend`: suspend running jobs (HTCondor's `condor_suspend`).
fn main() -> std::process::ExitCode {
    tern::cli::suspend::main()
}
