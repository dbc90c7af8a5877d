//! `tern_negotiate`: one negotiation pass.
fn main() -> std::process::ExitCode {
    tern::cli::negotiate::main()
}
