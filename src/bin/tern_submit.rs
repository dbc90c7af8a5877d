//! `tern_submit`: submit jobs from a submit description (HTCondor's `condor_submit`).
fn main() -> std::process::ExitCode {
    tern::cli::submit::main()
}
