//! The files the Debian package ships for activation (pkg/): the systemd
//! units carry the keys tern_security(7) says they must (parsed here, and
//! checked by `systemd-analyze verify` when it is installed), and the
//! cron.d file is one cron reads. tests/shared/run.sh checks them again
//! installed.

use std::path::PathBuf;

fn pkg(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("pkg")
        .join(name)
}

/// The `key=value` lines of one section of a unit file.
fn section(unit: &str, name: &str) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(pkg(&format!("systemd/{unit}"))).unwrap();
    let mut inside = false;
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == format!("[{name}]");
        } else if inside && !line.is_empty() && !line.starts_with('#') {
            let (k, v) = line.split_once('=').expect("key=value");
            out.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    out
}

#[track_caller]
fn has(unit: &str, sect: &str, want: &[(&str, &str)]) {
    let got = section(unit, sect);
    for (k, v) in want {
        assert!(
            got.iter().any(|(gk, gv)| gk == k && gv == v),
            "{unit} [{sect}] lacks {k}={v}: {got:?}"
        );
    }
}

#[test]
fn the_units_say_what_the_spec_says() {
    has(
        "tern-negotiate.path",
        "Path",
        &[
            ("PathExists", "/var/lib/tern/negotiator.wanted"),
            ("Unit", "tern-negotiate.service"),
            ("TriggerLimitIntervalSec", "2s"),
            ("TriggerLimitBurst", "200"),
        ],
    );
    has(
        "tern-negotiate.path",
        "Install",
        &[("WantedBy", "paths.target")],
    );
    has(
        "tern-negotiate.service",
        "Unit",
        &[("StartLimitIntervalSec", "10s"), ("StartLimitBurst", "30")],
    );
    has(
        "tern-negotiate.service",
        "Service",
        &[
            ("Type", "oneshot"),
            ("ExecStart", "/usr/bin/tern_negotiate -wait-lock 30"),
            ("KillMode", "process"),
            ("TimeoutStartSec", "10min"),
            ("UMask", "0022"),
        ],
    );
    // Sandboxing would be inherited by every job the pass starts.
    let service = section("tern-negotiate.service", "Service");
    for k in [
        "PrivateTmp",
        "ProtectSystem",
        "ProtectHome",
        "NoNewPrivileges",
    ] {
        assert!(!service.iter().any(|(gk, _)| gk == k), "{k} set");
    }
    has(
        "tern-negotiate.timer",
        "Timer",
        &[("OnCalendar", "minutely"), ("AccuracySec", "1s")],
    );
    has(
        "tern-negotiate.timer",
        "Install",
        &[("WantedBy", "timers.target")],
    );
}

/// systemd's own parser, when installed: no unknown keys or bad values.
/// Without the package installed the one complaint allowed is the missing
/// /usr/bin/tern_negotiate.
#[test]
fn systemd_analyze_verify_accepts_the_units() {
    let units: Vec<PathBuf> = ["path", "service", "timer"]
        .iter()
        .map(|e| pkg(&format!("systemd/tern-negotiate.{e}")))
        .collect();
    let out = match std::process::Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .args(&units)
        .output()
    {
        Ok(o) => o,
        Err(_) => {
            eprintln!("skipped: systemd-analyze is not installed");
            return;
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    let installed = std::path::Path::new("/usr/bin/tern_negotiate").exists();
    for line in stderr.lines() {
        assert!(
            !installed
                && line.ends_with(
                    "Command /usr/bin/tern_negotiate is not executable: No such file or directory"
                ),
            "systemd-analyze verify: {stderr}"
        );
    }
}

#[test]
fn the_cron_file_is_one_cron_reads() {
    let path = pkg("cron.d/tern");
    // Debian's cron ignores names with dots (run-parts rules).
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(
        name.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.ends_with('\n'),
        "cron drops a last line without a newline"
    );
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(
        lines,
        [
            "MAILTO=\"\"",
            "* * * * * root [ -d /run/systemd/system ] || exec /usr/bin/tern_negotiate",
        ]
    );
    // The opt-in resident pass, commented out.
    assert!(text.contains("\n#@reboot root /usr/bin/tern_negotiate -loop -watch\n"));
}

#[test]
fn the_config_says_shared_mode() {
    let mut cfg = tern::config::Config::defaults();
    let text = std::fs::read_to_string(pkg("tern_config")).unwrap();
    cfg.parse_str(&text, "pkg/tern_config").unwrap();
    assert_eq!(cfg.get("SPOOL").unwrap().as_deref(), Some("/var/lib/tern"));
    assert!(cfg.get_bool("SHARED_QUEUE", false).unwrap());
    assert_eq!(
        cfg.get("QUEUE_SUPER_USERS").unwrap().as_deref(),
        Some("root")
    );
    // HTCondor's limits on what one user may queue, which the built-in
    // defaults (personal mode) leave unlimited.
    let limits = tern::queue::Limits::from_config(&cfg).unwrap();
    assert_eq!(
        (limits.max_jobs_per_submission, limits.max_jobs_per_owner),
        (20_000, 100_000)
    );
    let defaults = tern::queue::Limits::from_config(&tern::config::Config::defaults()).unwrap();
    assert_eq!(
        (
            defaults.max_jobs_per_submission,
            defaults.max_jobs_per_owner
        ),
        (i64::MAX, i64::MAX)
    );
}
