//! A real one-node Slurm for the tests that run jobs on it, brought up by
//! tests/slurm/slurm.sh in a temporary directory (root only: slurmctld and
//! slurmd run as root). Without root or the packages [`up`] returns None
//! with the reason printed, unless `TERN_REQUIRE_SLURM` is set (as CI sets
//! it, having installed the packages).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/slurm/slurm.sh");

/// One Slurm at a time: two clusters of 16 oversubscribed cpus on a
/// machine of 2 would slow each other past their tests' timeouts.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A Slurm of our own, torn down (no process left) when dropped.
pub struct Slurm {
    pub dir: PathBuf,
    /// Its slurm.conf, for `SLURM_CONF`.
    pub conf: PathBuf,
    ports: [(&'static str, &'static str); 3],
    _turn: MutexGuard<'static, ()>,
}

impl Slurm {
    /// Runs `slurm.sh WHAT DIR` for this cluster (`ctld-stop`, ...).
    pub fn script(&self, what: &str) -> Output {
        Command::new("bash")
            .args([SCRIPT, what])
            .arg(&self.dir)
            .envs(self.ports)
            .output()
            .expect("bash runs slurm.sh")
    }

    /// `scontrol show job -o` of Slurm job `id`, as `Key=Value` words.
    pub fn scontrol(&self, id: &str) -> String {
        let out = Command::new("scontrol")
            .args(["show", "job", "-o", id])
            .env("SLURM_CONF", &self.conf)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        let _ = self.script("purge");
    }
}

/// Brings up a Slurm in `dir` whose controller and slurmd listen on ports
/// of their own (so a developer's Slurm on the default ones, or another
/// test's, is left alone), with 16 cpus: oversubscribed, so 200 trivial
/// jobs take seconds, not minutes. None when it cannot run here.
pub fn up(dir: &Path, ctld_port: &'static str, slurmd_port: &'static str) -> Option<Slurm> {
    let turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let ports = [
        ("SLURM_LOCAL_CTLD_PORT", ctld_port),
        ("SLURM_LOCAL_SLURMD_PORT", slurmd_port),
        ("SLURM_LOCAL_CPUS", "16"),
    ];
    // munged wants its socket's directories world-executable.
    if let Some(parent) = dir.parent() {
        std::fs::set_permissions(parent, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    let out = Command::new("bash")
        .args([SCRIPT, "up"])
        .arg(dir)
        .envs(ports)
        .output()
        .expect("bash runs slurm.sh");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(77) && std::env::var_os("TERN_REQUIRE_SLURM").is_none() {
        eprintln!("skipped: {}", stderr.trim_end());
        return None;
    }
    let slurm = Slurm {
        dir: dir.to_path_buf(),
        conf: dir.join("etc/slurm.conf"),
        ports,
        _turn: turn,
    };
    assert!(out.status.success(), "slurm.sh up failed: {stderr}");
    Some(slurm)
}
