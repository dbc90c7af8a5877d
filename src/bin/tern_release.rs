//! `tern_release`: release held jobs (HTCondor's `condor_release`).
fn main() -> std::process::ExitCode {
    tern::cli::release::main()
}
