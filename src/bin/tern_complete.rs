//! `tern_complete`: shell completion for every tool.
fn main() -> std::process::ExitCode {
    tern::cli::complete::main()
}
