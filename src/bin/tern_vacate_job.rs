//! `tern_vacate_job`: requeue running jobs (HTCondor's `condor_vacate_job`).
fn main() -> std::process::ExitCode {
    tern::cli::vacate_job::main()
}
