//! The manual: every tool has a page, every page renders cleanly, and every
//! option a tool takes is documented on its page.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::TOOLS;
use crate::common::man::check_page;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every page in man/man1 (tools) and man/man5 (file formats).
fn pages() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = Vec::new();
    for section in ["1", "5"] {
        let dir = root().join(format!("man/man{section}"));
        v.extend(
            std::fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == section)),
        );
    }
    v.sort();
    v
}

#[test]
fn every_page_renders_without_warnings() {
    let pages = pages();
    assert!(!pages.is_empty(), "no man pages found");
    for page in pages {
        let out = Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(&page)
            .output()
            .expect("groff runs (install it: apt-get install groff-base)");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stderr.is_empty(),
            "{}: {stderr}",
            page.display()
        );
    }
}

#[test]
fn every_tool_has_a_page() {
    for entry in std::fs::read_dir(root().join("src/bin")).unwrap() {
        let path = entry.unwrap().path();
        let tool = path.file_stem().unwrap().to_string_lossy().into_owned();
        let page = root().join(format!("man/man1/{tool}.1"));
        assert!(
            page.exists(),
            "{tool} has no man page at {}",
            page.display()
        );
    }
}

#[test]
fn every_option_is_on_its_page() {
    // Every tool in src/bin is in the table of tools.
    for bin in std::fs::read_dir(root().join("src/bin")).unwrap() {
        let name = bin
            .unwrap()
            .file_name()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        assert!(
            TOOLS.iter().any(|t| t.name == name),
            "{name} is missing from TOOLS in tests/common/mod.rs"
        );
    }
    for tool in TOOLS {
        check_page(tool.name, (tool.command)());
    }
}
