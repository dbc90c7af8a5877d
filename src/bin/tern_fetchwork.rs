//! `tern_fetchwork`: the fetch-work hooks' runner started by tern_negotiate.
fn main() -> std::process::ExitCode {
    tern::cli::fetchwork::main()
}
