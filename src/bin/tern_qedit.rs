//! `tern_qedit`: change attributes of queued jobs (HTCondor's `condor_qedit`).
fn main() -> std::process::ExitCode {
    tern::cli::qedit::main()
}
