//! `tern_router_history`: the job router's history per route.
fn main() -> std::process::ExitCode {
    tern::cli::router_history::main()
}
