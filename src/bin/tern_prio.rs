//! `tern_prio`: change the priority of jobs (HTCondor's `condor_prio`).
fn main() -> std::process::ExitCode {
    tern::cli::prio::main()
}
