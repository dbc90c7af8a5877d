//! `tern_cron`: the runner of the daemon ClassAd hooks started by tern_negotiate.
fn main() -> std::process::ExitCode {
    tern::cli::cron::main()
}
