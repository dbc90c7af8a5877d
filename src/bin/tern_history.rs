//! `tern_history`: list jobs that have left the queue (HTCondor's `condor_history`).
fn main() -> std::process::ExitCode {
    tern::cli::history::main()
}
