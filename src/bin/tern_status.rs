//! `tern_status`: show this machine's slots (HTCondor's `condor_status`).
fn main() -> std::process::ExitCode {
    tern::cli::status::main()
}
