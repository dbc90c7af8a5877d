//! `tern_gridmanager`: the per-owner grid universe supervisor started by tern_negotiate.
fn main() -> std::process::ExitCode {
    tern::cli::gridmanager::main()
}
