//! `tern_config_val`: print configuration values (HTCondor's `condor_config_val`).
fn main() -> std::process::ExitCode {
    tern::cli::config_val::main()
}
