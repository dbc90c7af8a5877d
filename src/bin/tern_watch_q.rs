//! `tern_watch_q`: follow jobs with progress bars (HTCondor's `condor_watch_q`).
fn main() -> std::process::ExitCode {
    tern::cli::watch_q::main()
}
