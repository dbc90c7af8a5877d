//! `tern_hold`: put jobs on hold (HTCondor's `condor_hold`).
fn main() -> std::process::ExitCode {
    tern::cli::hold::main()
}
