//! `tern_transform_ads`: transform ClassAds with rules (HTCondor's `condor_transform_ads`).
fn main() -> std::process::ExitCode {
    tern::cli::transform_ads::main()
}
