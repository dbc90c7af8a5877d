//! `tern_userprio`: show and change user priorities (HTCondor's `condor_userprio`).
fn main() -> std::process::ExitCode {
    tern::cli::userprio::main()
}
