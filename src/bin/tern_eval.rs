//! `tern_eval`: evaluate ClassAd expressions (HTCondor's `classad_eval`).
fn main() -> std::process::ExitCode {
    tern::cli::eval::main()
}
