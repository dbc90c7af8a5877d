//! `tern_router_rm`: remove routed jobs.
fn main() -> std::process::ExitCode {
    tern::cli::router_rm::main()
}
