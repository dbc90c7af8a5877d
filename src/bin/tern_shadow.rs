//! `tern_shadow`: the per-claim job supervisor started by tern_negotiate.
fn main() -> std::process::ExitCode {
    tern::cli::shadow::main()
}
