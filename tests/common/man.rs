//! The manual checked against the code: every option clap knows for a tool
//! is written on its page.

use std::path::Path;

/// Fails unless every option of `cmd`, and every visible alias, is
/// documented on `tool`'s page.
#[track_caller]
pub fn check_page(tool: &str, cmd: clap::Command) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join(format!("man/man1/{tool}.1")))
        .unwrap_or_else(|e| panic!("{tool}.1: {e}"));
    for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        if let Some(long) = arg.get_long() {
            let written = format!("\\-{}", long.replace('-', "\\-"));
            assert!(
                page.contains(&written),
                "{tool}.1 does not document -{long}"
            );
        }
        for alias in arg.get_visible_aliases().into_iter().flatten() {
            let written = format!("\\-{}", alias.replace('-', "\\-"));
            assert!(
                page.contains(&written),
                "{tool}.1 does not document -{alias}"
            );
        }
    }
}
