//! Reading the machine itself: cpus, memory, free disk, load, and the
//! operating system named the way HTCondor names it (sysapi's arch.cpp).

use std::path::Path;

use super::{MachineError, OpSysInfo};

/// The cpus this process may use.
pub fn cpus() -> i64 {
    std::thread::available_parallelism()
        .map(|n| n.get() as i64)
        .unwrap_or(1)
}

/// Physical memory in MiB, from /proc/meminfo's MemTotal.
pub fn memory_mib() -> Result<i64, MachineError> {
    let text = std::fs::read_to_string("/proc/meminfo").map_err(|e| MachineError::Detect {
        what: "/proc/meminfo".into(),
        msg: e.to_string(),
    })?;
    parse_meminfo(&text).ok_or_else(|| MachineError::Detect {
        what: "/proc/meminfo".into(),
        msg: "no MemTotal line".into(),
    })
}

/// MemTotal (kB) of a /proc/meminfo text, in MiB.
pub fn parse_meminfo(text: &str) -> Option<i64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: i64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024)
}

/// KiB free to unprivileged users under `dir`, or under its nearest
/// existing parent when `dir` does not exist yet.
pub fn free_disk_kib(dir: &Path) -> Result<i64, MachineError> {
    let mut at = dir;
    while !at.exists() {
        match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => at = p,
            _ => {
                at = Path::new(".");
                break;
            }
        }
    }
    crate::sys::fs::free_kib(at).map_err(|e| MachineError::Detect {
        what: format!("the free space of {}", at.display()),
        msg: e.to_string(),
    })
}

/// The one-minute load average; 0 when /proc/loadavg cannot be read.
pub fn load_avg() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

/// The operating system as HTCondor names it, from /etc/os-release's
/// PRETTY_NAME, else the first line of /etc/issue, /etc/redhat-release or
/// /etc/system-release (HTCondor reads the latter three; os-release is
/// where current distributions say the same thing).
pub fn opsys() -> OpSysInfo {
    let mut candidates = Vec::new();
    if let Ok(t) = std::fs::read_to_string("/etc/os-release") {
        candidates.extend(os_release_pretty_name(&t));
    }
    for f in [
        "/etc/issue",
        "/etc/redhat-release",
        "/etc/system-release",
        "/etc/issue.net",
    ] {
        if let Ok(t) = std::fs::read_to_string(f) {
            candidates.extend(t.lines().next().map(issue_line));
        }
    }
    let long = candidates
        .into_iter()
        .find(|c| linux_name(c) != "LINUX")
        .unwrap_or_else(|| "Unknown".into());
    opsys_from_long_name(&long)
}

/// PRETTY_NAME of an os-release text, unquoted.
pub fn os_release_pretty_name(text: &str) -> Option<String> {
    let v = text.lines().find_map(|l| l.strip_prefix("PRETTY_NAME="))?;
    Some(v.trim().trim_matches('"').trim_matches('\'').to_string())
}

/// An /etc/issue line without trailing blanks and the `\n \l` escapes
/// Debian and Ubuntu put there.
fn issue_line(line: &str) -> String {
    let mut s = line.trim_end().to_string();
    loop {
        let t = s.trim_end();
        if t.len() > 2 && (t.ends_with("\\n") || t.ends_with("\\l")) {
            s = t[..t.len() - 2].to_string();
        } else {
            return t.to_string();
        }
    }
}

/// OpSysInfo for a long name such as "Debian GNU/Linux 12 (bookworm)".
pub fn opsys_from_long_name(long: &str) -> OpSysInfo {
    let name = linux_name(long).to_string();
    let (major, ver) = versions(long);
    OpSysInfo {
        opsys: "LINUX".into(),
        and_ver: format!("{name}{major}"),
        name,
        long_name: long.to_string(),
        major_ver: major,
        ver,
    }
}

/// HTCondor's distribution name for a long name (sysapi_find_linux_name).
pub fn linux_name(long: &str) -> &'static str {
    let l = long.to_ascii_lowercase();
    let has = |s: &str| l.contains(s);
    if has("red") && has("hat") {
        "RedHat"
    } else if has("fedora") {
        "Fedora"
    } else if has("ubuntu") {
        "Ubuntu"
    } else if has("debian") {
        "Debian"
    } else if has("scientific") && has("cern") {
        "SLCern"
    } else if has("scientific") && has("slf") {
        "SLFermi"
    } else if has("scientific") {
        "SL"
    } else if has("centos") {
        "CentOS"
    } else if has("rocky") {
        "Rocky"
    } else if has("almalinux") {
        "AlmaLinux"
    } else if has("amazon linux") {
        "AmazonLinux"
    } else if has("opensuse") {
        "openSUSE"
    } else if has("suse") {
        "SUSE"
    } else {
        "LINUX"
    }
}

/// (major, major * 100 + minor) of the first number in `long`, as
/// sysapi_find_major_version and sysapi_translate_opsys_version read it:
/// at most two digits of minor version.
fn versions(long: &str) -> (i64, i64) {
    let b = long.as_bytes();
    let Some(start) = b.iter().position(u8::is_ascii_digit) else {
        return (0, 0);
    };
    let mut i = start;
    let mut major = 0i64;
    while i < b.len() && b[i].is_ascii_digit() {
        major = major
            .saturating_mul(10)
            .saturating_add((b[i] - b'0') as i64);
        i += 1;
    }
    let mut minor = 0i64;
    if b.get(i) == Some(&b'.') {
        i += 1;
        if let Some(d) = b.get(i).filter(|c| c.is_ascii_digit()) {
            minor = (d - b'0') as i64;
            i += 1;
            if let Some(d) = b.get(i).filter(|c| c.is_ascii_digit()) {
                minor = minor * 10 + (d - b'0') as i64;
            }
        }
    }
    (major, major.saturating_mul(100).saturating_add(minor))
}
