//! `tern`: every tool in one program, chosen by the name it runs under
//! (see `tern::cli::multicall`); `./install.sh` links the tools' names to it.
fn main() -> std::process::ExitCode {
    tern::cli::multicall::main()
}
