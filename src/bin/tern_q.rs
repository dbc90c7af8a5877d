//! `tern_q`: show the jobs in the queue (HTCondor's `condor_q`).
fn main() -> std::process::ExitCode {
    tern::cli::q::main()
}
