//! Shell completion (issue 17, item 2): the scripts tern_complete prints,
//! run in real bash, zsh and fish, complete options with HTCondor's
//! single-dash spellings and job ids from the queue. A shell that is not
//! installed is skipped with a message, unless TERN_REQUIRE_SHELLS is set
//! (CI installs them).

use std::path::Path;
use std::process::Command;

use crate::common::{TestEnv, bin};

fn have(shell: &str) -> bool {
    let ok = Command::new(shell)
        .args(["-c", "true"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("TERN_REQUIRE_SHELLS").is_none(),
            "{shell} is required (TERN_REQUIRE_SHELLS) but cannot be run"
        );
        eprintln!("skipped: {shell} is not installed");
    }
    ok
}

/// Runs `script` in `shell` with the tools first on PATH and the test's
/// queue; its stdout lines.
fn in_shell(env: &TestEnv, shell: &str, script: &str) -> Vec<String> {
    let bindir = Path::new(bin("tern_q")).parent().unwrap();
    let mut c = Command::new(shell);
    c.env_clear().current_dir(env.path(""));
    for (n, v) in env.vars() {
        c.env(n, v);
    }
    c.env("PATH", format!("{}:/usr/bin:/bin", bindir.display()));
    let out = c.args(["-c", script]).output().unwrap();
    assert!(out.status.success(), "{shell}: {out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// A queue with jobs 1.0 and 1.1, held so that nothing runs them.
fn queue() -> TestEnv {
    let env = TestEnv::with_spool().var("_TERN_NEGOTIATE_ON_SUBMIT", Some("false"));
    env.write("two.sub", "executable = /bin/true\nhold = true\nqueue 2\n");
    let r = env.run("tern_submit", ["two.sub"]);
    assert_eq!(r.code, 0, "{r:?}");
    env
}

#[test]
fn bash_completes_options_and_job_ids() {
    if !have("bash") {
        return;
    }
    let env = queue();
    let complete = |words: &str, cword: usize| {
        in_shell(
            &env,
            "bash",
            &format!(
                "source <(tern_complete -shell bash); COMP_WORDS=({words}); COMP_CWORD={cword}; \
                 _tern_complete; printf '%s\\n' \"${{COMPREPLY[@]}}\""
            ),
        )
    };
    assert_eq!(complete("tern_q -con", 1), ["-constraint"]);
    assert_eq!(complete("condor_rm ''", 1), ["1", "1.0", "1.1"]);
    let attrs = complete("tern_q -af Job", 2);
    assert!(
        attrs.contains(&"JobStatus".to_string()) && attrs.iter().all(|a| a.starts_with("Job")),
        "{attrs:?}"
    );
}

#[test]
fn zsh_completes_options_and_job_ids() {
    if !have("zsh") {
        return;
    }
    let env = queue();
    // compadd and _files as the completion system would call them, printing
    // what they are given; compdef as compinit defines it.
    let complete = |words: &str| {
        in_shell(
            &env,
            "zsh",
            &format!(
                "compdef() {{ : }}; compadd() {{ shift 2; print -l -- \"$@\" }}; \
                 _files() {{ print FILES }}; source <(tern_complete -shell zsh); \
                 words=({words}); CURRENT=${{#words}}; _tern"
            ),
        )
    };
    assert_eq!(complete("tern_q -con"), ["-constraint"]);
    assert_eq!(complete("tern_hold 1."), ["1.0", "1.1"]);
    assert_eq!(complete("tern_submit ''"), ["FILES"]);
}

#[test]
fn fish_completes_options_and_job_ids() {
    if !have("fish") {
        return;
    }
    let env = queue();
    let complete = |line: &str| {
        in_shell(
            &env,
            "fish",
            &format!("tern_complete -shell fish | source; complete -C '{line}'"),
        )
    };
    assert_eq!(complete("tern_q -con"), ["-constraint"]);
    assert_eq!(complete("tern_release 1"), ["1", "1.0", "1.1"]);
}

/// `./install.sh` puts the scripts where each shell finds them: for a root
/// in the user's home, bash's and fish's under `$XDG_DATA_HOME` too, under
/// every tool's name; a tool's bash file, sourced as bash-completion
/// sources it, registers the completion.
#[test]
fn install_script_installs_the_completions() {
    let tmp = tempfile::tempdir().unwrap();
    let inst = tmp.path().join("inst");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(inst.join("bin")).unwrap();
    std::os::unix::fs::symlink(bin("tern_complete"), inst.join("bin/tern_complete")).unwrap();
    let out = Command::new("sh")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh"))
        .args(["--man-only", "--root"])
        .arg(&inst)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", tmp.path())
        .env("XDG_DATA_HOME", &data)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("fpath=("),
        "{out:?}"
    );
    for dir in [inst.join("share"), data.clone()] {
        for tool in ["tern_q", "tern_complete", "condor_rm"] {
            let f = dir.join("bash-completion/completions").join(tool);
            assert!(f.is_file(), "{} missing", f.display());
            let fish = dir
                .join("fish/vendor_completions.d")
                .join(format!("{tool}.fish"));
            assert!(fish.is_file(), "{} missing", fish.display());
        }
    }
    assert!(inst.join("share/zsh/site-functions/_tern").is_file());
    if have("bash") {
        let f = data.join("bash-completion/completions/tern_q");
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!(". '{}' && complete -p tern_q", f.display()))
            .output()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("-F _tern_complete"),
            "{out:?}"
        );
    }
}
