//! The manual: every tool has a page, every page renders cleanly, and every
//! option a tool takes is documented on its page.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::TOOLS;
use crate::common::man::check_page;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every page in man/man1 (tools), man/man5 (file formats) and man/man7
/// (overviews).
fn pages() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = Vec::new();
    for section in ["1", "5", "7"] {
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
        // groff takes a stray control character (a "\\f" written as a
        // form feed) without a word: the page then shows "belRP".
        let text = std::fs::read_to_string(&page).unwrap();
        if let Some((n, line)) = text
            .lines()
            .enumerate()
            .find(|(_, l)| l.chars().any(|c| c.is_control() && c != '\t'))
        {
            panic!(
                "{}:{}: a control character: {line:?}",
                page.display(),
                n + 1
            );
        }
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

/// Whether man-db's `man` can be run here.
fn have_man() -> bool {
    Command::new("man")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The README installs with `./install.sh`; right after it `man tern_q` must
/// find the page with no MANPATH, because man-db searches `PREFIX/share/man`
/// for every `PREFIX/bin` on PATH. The pages part of the script is run alone
/// (`--man-only`: no release build in a test) into a fresh root whose `bin`
/// stands for the installed tools.
#[test]
fn install_script_puts_every_page_where_man_finds_it() {
    let tmp = tempfile::tempdir().unwrap();
    let inst = tmp.path().join("inst root");
    let bin = inst.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let out = Command::new("sh")
        .arg(root().join("install.sh"))
        .args(["--man-only", "--root"])
        .arg(&inst)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", tmp.path())
        .output()
        .expect("sh runs install.sh");
    assert!(
        out.status.success(),
        "install.sh --man-only failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pages = pages();
    for page in &pages {
        let section = page.parent().unwrap().file_name().unwrap();
        let installed = inst
            .join("share/man")
            .join(section)
            .join(page.file_name().unwrap());
        assert_eq!(
            std::fs::read(&installed).ok(),
            Some(std::fs::read(page).unwrap()),
            "{} is not installed as {}",
            page.display(),
            installed.display()
        );
    }
    if !have_man() {
        eprintln!("skipped the man -w half: no man here (apt-get install man-db)");
        return;
    }
    let path = format!("{}:/usr/bin:/bin", bin.display());
    for page in &pages {
        let name = page.file_stem().unwrap().to_string_lossy();
        let section = page.extension().unwrap().to_string_lossy();
        // No MANPATH, and a HOME with no ~/.manpath: only PATH leads man here.
        let out = Command::new("man")
            .args(["-w", &*section, &*name])
            .env_clear()
            .env("PATH", &path)
            .env("HOME", tmp.path())
            .output()
            .expect("man runs");
        let expected = inst
            .join(format!("share/man/man{section}"))
            .join(page.file_name().unwrap());
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim_end(),
            expected.to_string_lossy(),
            "man -w {section} {name} with {} on PATH: {}",
            bin.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
