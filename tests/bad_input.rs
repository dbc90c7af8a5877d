//! Malformed input: the submit files in `tests/bad_input/submit/` and the
//! configuration files in `tests/bad_input/config/`. Each file's first line
//! says what must happen, `# expect: FILE:LINE: message` (or `# expect:
//! FILE: message` for a problem with the file as a whole): the tool exits
//! with status 1, its stderr starts with `tool: error: FILE:LINE: ` and holds
//! the message, and nothing else happens: nothing on stdout and no file
//! created or removed.
//!
//! Every file is checked and every mismatch listed before the test fails, so
//! one run shows them all.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{NOW, bin};

/// What a file's `# expect:` line promises.
#[derive(Debug)]
struct Expect {
    file: String,
    line: Option<u32>,
    msg: String,
}

fn expectation(path: &Path) -> Expect {
    let text = std::fs::read_to_string(path).expect("reading a corpus file");
    let spec = text
        .lines()
        .find_map(|l| l.strip_prefix("# expect: "))
        .unwrap_or_else(|| panic!("{} has no '# expect:' line", path.display()));
    // FILE:LINE: message, or FILE: message.
    let (file, rest) = spec
        .split_once(':')
        .unwrap_or_else(|| panic!("{}: malformed expectation", path.display()));
    let rest = rest.trim_start();
    let (line, msg) = match rest.split_once(':') {
        Some((n, m)) if n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty() => {
            (Some(n.parse().expect("a line number")), m.trim_start())
        }
        _ => (None, rest),
    };
    Expect {
        file: file.to_string(),
        line,
        msg: msg.to_string(),
    }
}

fn corpus_dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/bad_input")
        .join(kind)
}

/// The corpus files with extension `ext`, sorted.
fn corpus(kind: &str, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(corpus_dir(kind))
        .expect("the corpus directory")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    v.sort();
    v
}

/// A temporary copy of the corpus directory (cases may include their
/// neighbours), to run each case in.
fn scratch(kind: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for e in std::fs::read_dir(corpus_dir(kind)).expect("the corpus directory") {
        let p = e.expect("a directory entry").path();
        if p.is_file() {
            std::fs::copy(&p, dir.path().join(p.file_name().expect("a file name")))
                .expect("copying a corpus file");
        }
    }
    dir
}

/// Every path under `dir`, sorted, to see that a run left it as it was.
fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).expect("listing the scratch directory") {
            let p = e.expect("a directory entry").path();
            if p.is_dir() {
                todo.push(p.clone());
            }
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Runs `cmd` (already set up) in `dir` and checks it against `want`; `None`
/// when all is as promised, else what went wrong.
fn check(tool: &str, mut cmd: Command, dir: &Path, case: &str, want: &Expect) -> Option<String> {
    let before = listing(dir);
    let out = cmd.output().expect("running the tool");
    let after = listing(dir);
    let code = out.status.code().unwrap_or(-1);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let place = match want.line {
        Some(n) => format!("{}:{n}", want.file),
        None => want.file.clone(),
    };
    let mut wrong = Vec::new();
    if code != 1 {
        wrong.push(format!("exit status {code}, not 1"));
    }
    if !stdout.is_empty() {
        wrong.push(format!("stdout is not empty: {:?}", truncate(&stdout, 200)));
    }
    if before != after {
        wrong.push("the run created or removed files".to_string());
    }
    // The file may be shown as given or with a leading ./ (the directory of
    // a submit file named without one is ".").
    let prefixes = [
        format!("{tool}: error: {place}: "),
        format!("{tool}: error: ./{place}: "),
    ];
    match prefixes.iter().find(|p| stderr.starts_with(p.as_str())) {
        None => wrong.push(format!("stderr does not start with {:?}", prefixes[0])),
        Some(p) => {
            if !stderr[p.len()..].contains(&want.msg) {
                wrong.push(format!("the message does not contain {:?}", want.msg));
            }
        }
    }
    if wrong.is_empty() {
        return None;
    }
    Some(format!(
        "{case}: {}\n    expected: {}: error: {place}: ...{}...\n    stderr:   {}",
        wrong.join("; "),
        tool,
        want.msg,
        truncate(&stderr, 600).replace('\n', "\n              ")
    ))
}

fn truncate(s: &str, max: usize) -> String {
    let s = s.trim_end();
    if s.chars().count() > max {
        s.chars().take(max).collect::<String>() + "..."
    } else {
        s.to_string()
    }
}

/// The command for `bin` in `dir` with nothing but PATH, HOME (the scratch
/// directory, so no user configuration is read) and the pinned clock.
fn command(bin: &str, dir: &Path) -> Command {
    let mut c = Command::new(bin);
    c.env_clear()
        .current_dir(dir)
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", dir)
        .env("TERN_NOW", NOW.to_string());
    c
}

fn report(kind: &str, total: usize, failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{} of {total} bad {kind} files were not rejected as promised:\n\n{}\n",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn the_corpora_are_large_enough() {
    assert!(corpus("submit", "sub").len() >= 20);
    assert!(corpus("config", "conf").len() >= 10);
}

#[test]
fn every_bad_submit_file_fails_at_its_line() {
    let dir = scratch("submit");
    let cases = corpus("submit", "sub");
    let mut failures = Vec::new();
    for path in &cases {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let want = expectation(path);
        let mut cmd = command(bin("tern_submit"), dir.path());
        cmd.env("TERN_CONFIG", "/dev/null")
            .args(["-dry-run", &name]);
        failures.extend(check("tern_submit", cmd, dir.path(), &name, &want));
    }
    report("submit", cases.len(), failures);
}

#[test]
fn every_bad_config_file_fails_at_its_line() {
    let dir = scratch("config");
    let cases = corpus("config", "conf");
    let mut failures = Vec::new();
    for path in &cases {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let want = expectation(path);
        let mut cmd = command(bin("tern_config_val"), dir.path());
        cmd.env("TERN_CONFIG", &name).arg("SPOOL");
        failures.extend(check("tern_config_val", cmd, dir.path(), &name, &want));
    }
    report("configuration", cases.len(), failures);
}

#[test]
fn a_bad_configuration_stops_tern_submit_too() {
    // The configuration is read before the submit file; its error wins.
    let dir = scratch("config");
    std::fs::write(
        dir.path().join("job.sub"),
        "executable = /bin/echo\nqueue\n",
    )
    .unwrap();
    let want = expectation(&corpus_dir("config").join("no_operator.conf"));
    let mut cmd = command(bin("tern_submit"), dir.path());
    cmd.env("TERN_CONFIG", "no_operator.conf")
        .args(["-dry-run", "job.sub"]);
    if let Some(f) = check("tern_submit", cmd, dir.path(), "job.sub", &want) {
        panic!("{f}");
    }
}
