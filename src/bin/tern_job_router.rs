//! `tern_job_router`: one pass of the job router.
fn main() -> std::process::ExitCode {
    tern::cli::job_router::main()
}
