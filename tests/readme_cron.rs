//! The crontab lines the README gives work as written under cron, which
//! runs each command with `sh -c`, `HOME` set and `PATH=/usr/bin:/bin`:
//! the tools installed in `~/.cargo/bin` (as `./install.sh` puts them) are
//! found, and the pass the line runs starts a waiting job.

use std::path::Path;
use std::process::Command;

use crate::common::bin;
use crate::common::process::{TIMEOUT, wait_until};

/// The commands of the README's crontab lines (the part after the five
/// time fields), from the lines themselves and from `echo '...'` lines
/// that append them to a crontab.
fn readme_cron_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let mut out = Vec::new();
    for line in readme.lines() {
        let mut rest = line;
        while let Some(i) = rest.find("* * * * * ") {
            let tail = &rest[i + "* * * * * ".len()..];
            // Inside `echo '...'` the line ends at the closing quote.
            let end = if rest[..i].ends_with("echo '") {
                tail.find('\'').unwrap_or(tail.len())
            } else {
                tail.len()
            };
            out.push(tail[..end].trim().to_string());
            rest = &tail[end..];
        }
    }
    out
}

/// Runs `sh -c command` with cron's environment for a user whose home is
/// `home`.
fn as_cron(home: &Path, command: &str) -> std::process::Output {
    Command::new("/bin/sh")
        .env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/bin:/bin")
        .env("SHELL", "/bin/sh")
        .env("LOGNAME", crate::common::real_user())
        .current_dir(home)
        .args(["-c", command])
        .output()
        .expect("running /bin/sh")
}

#[test]
fn the_readme_cron_lines_run_the_installed_tools_under_cron() {
    let commands = readme_cron_commands();
    assert!(
        commands.iter().any(|c| c.contains("tern_negotiate")),
        "the README gives no crontab line for tern_negotiate: {commands:?}"
    );
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    // What ./install.sh leaves: the tools in ~/.cargo/bin.
    let bindir = home.join(".cargo/bin");
    std::fs::create_dir_all(&bindir).unwrap();
    for tool in [
        "tern_negotiate",
        "tern_shadow",
        "tern_job_router",
        "tern_submit",
        "tern_history",
    ] {
        std::os::unix::fs::symlink(bin(tool), bindir.join(tool)).unwrap();
    }
    // A job waiting for a pass: the submit starts none, so only the cron
    // line can run it.
    let cfg = home.join(".config/tern");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(
        cfg.join("tern_config"),
        "NEGOTIATE_ON_SUBMIT = false\nNUM_CPUS = 1\n",
    )
    .unwrap();
    std::fs::write(home.join("job.sub"), "executable = /bin/true\nqueue\n").unwrap();
    let submit = bindir.join("tern_submit");
    let out = as_cron(home, &format!("'{}' job.sub", submit.display()));
    assert!(out.status.success(), "{out:?}");
    for command in &commands {
        let out = as_cron(home, command);
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).as_ref()
            ),
            (Some(0), ""),
            "the README's crontab command {command} under cron's environment"
        );
    }
    let history = bindir.join("tern_history");
    let done = wait_until(TIMEOUT, || {
        let out = as_cron(home, &format!("'{}' 1.0 -af ExitCode", history.display()));
        String::from_utf8_lossy(&out.stdout).trim() == "0"
    });
    assert!(done, "the job the cron line's pass started did not finish");
}

#[test]
fn the_commands_are_read_from_both_forms() {
    let cmds = readme_cron_commands();
    assert!(
        cmds.contains(&"\"$HOME/.cargo/bin/tern_negotiate\"".to_string()),
        "{cmds:?}"
    );
    assert!(
        cmds.contains(&"\"$HOME/.cargo/bin/tern_job_router\"".to_string()),
        "{cmds:?}"
    );
}
