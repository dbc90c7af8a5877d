//! `tern_router_q`: the jobs the job router routed.
fn main() -> std::process::ExitCode {
    tern::cli::router_q::main()
}
