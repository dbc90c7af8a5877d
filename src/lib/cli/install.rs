//! `tern_install`: the one root command that makes a shared SPOOL, run by
//! the Debian package's postinst (hidden: no man page of its own, not in
//! the completions; tern_security(7) documents it).
//!
//! It makes SPOOL and its `shadow/` and `ctl/` root:tern 2770, and the
//! queue database root:tern 0660 in WAL mode; the tools never create the
//! database in shared mode. An existing SPOOL is checked and its own mode
//! and group put right, never recursively: whatever users made inside is
//! left alone (chown -R as root in a directory others write is how cron's
//! postinst gave the crontab group root, CVE-2017-9525).
//!
//! [`install_spool`] stands for `queue::shared::install`, the library
//! function of the "secure" part of issue 16; once that lands this tool
//! calls it instead.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::process::ExitCode;

use clap::Parser;

use super::env::spool_dir;
use super::{CliError, parse_args, run_tool};
use crate::config::Config;
use crate::queue::Queue;

/// Make the shared SPOOL and queue database (root only; run by the
/// package's postinst).
#[derive(Parser, Debug)]
#[command(name = "tern_install", version, hide = true)]
pub struct Args {
    /// The group the tools are setgid to
    #[arg(long, value_name = "NAME", default_value = "tern")]
    pub group: String,
}

pub fn main() -> ExitCode {
    run_tool("tern_install", run)
}

pub fn run(argv: Vec<OsString>) -> Result<(), CliError> {
    let (args, _) = parse_args::<Args>(argv)?;
    let failed = |msg: String, hint: Option<&str>| CliError::Failed {
        msg,
        hint: hint.map(str::to_string),
    };
    if crate::sys::real_uid() != 0 {
        return Err(failed(
            "only root installs the shared queue".into(),
            Some("the package's postinst runs it; see tern_security(7)"),
        ));
    }
    let cfg = Config::load()?;
    if !crate::negotiator::activation::is_shared(&cfg)? {
        return Err(failed(
            "SHARED_QUEUE is not true in the configuration".into(),
            Some("set SHARED_QUEUE = True in /etc/tern/tern_config"),
        ));
    }
    let spool = spool_dir(&cfg)?;
    let Some(group) = crate::sys::group::by_name(&args.group) else {
        return Err(failed(
            format!("there is no group {}", args.group),
            Some("addgroup --system tern"),
        ));
    };
    for line in install_spool(&spool, group.gid)? {
        println!("{line}");
    }
    Ok(())
}

/// Makes (or puts right) SPOOL, its subdirectories and the database for
/// shared mode, owned root:`gid`; returns what it did, one line each.
pub fn install_spool(spool: &Path, gid: u32) -> Result<Vec<String>, CliError> {
    let mut did = Vec::new();
    // Modes are set on descriptors, after the umask has had its say; the
    // database is made only once SPOOL is 2770, so nobody outside group
    // tern sees it before its mode is right.
    let parent = spool.parent().unwrap_or(Path::new("/"));
    std::fs::create_dir_all(parent).map_err(|e| io_failed(parent, e))?;
    for dir in std::iter::once(spool.to_path_buf()).chain(super::audit::spool_subdirs(spool)) {
        match std::fs::create_dir(&dir) {
            Ok(()) => did.push(format!("made {}", dir.display())),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io_failed(&dir, e)),
        }
        let f = open_nofollow(&dir, libc::O_DIRECTORY)?;
        own(&f, &dir, gid, 0o2770, &mut did)?;
    }
    let db = crate::queue::db_path(spool);
    if std::fs::symlink_metadata(&db).is_err() {
        // Queue::open makes the schema and sets WAL mode (once, here: a
        // change of journal mode needs an exclusive lock).
        drop(Queue::open(spool, true)?);
        did.push(format!("made {} (WAL mode)", db.display()));
    }
    let mut side = vec![db.clone()];
    for ext in ["-wal", "-shm"] {
        let mut s = db.clone().into_os_string();
        s.push(ext);
        side.push(s.into());
    }
    for f in &side {
        if std::fs::symlink_metadata(f).is_err() {
            continue;
        }
        let file = open_nofollow(f, 0)?;
        let md = file.metadata().map_err(|e| io_failed(f, e))?;
        if !md.is_file() || md.nlink() != 1 {
            return Err(CliError::Failed {
                msg: format!("{} is not a plain file with one link", f.display()),
                hint: Some("move it away and run tern_install again".into()),
            });
        }
        own(&file, f, gid, 0o660, &mut did)?;
    }
    Ok(did)
}

fn io_failed(p: &Path, e: std::io::Error) -> CliError {
    CliError::Failed {
        msg: format!("{}: {e}", p.display()),
        hint: None,
    }
}

/// Opens `p` without following a final symlink (and without blocking on
/// a FIFO), for fchown and fchmod on what is really there.
fn open_nofollow(p: &Path, extra: libc::c_int) -> Result<File, CliError> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | extra)
        .open(p)
        .map_err(|e| io_failed(p, e))
}

/// Gives the open file owner root, group `gid` and `mode`, noting any
/// change.
fn own(f: &File, p: &Path, gid: u32, mode: u32, did: &mut Vec<String>) -> Result<(), CliError> {
    let md = f.metadata().map_err(|e| io_failed(p, e))?;
    if md.uid() != 0 || md.gid() != gid {
        std::os::unix::fs::fchown(f, Some(0), Some(gid)).map_err(|e| io_failed(p, e))?;
        did.push(format!("{}: owner root, group {gid}", p.display()));
    }
    // After the chown, which clears the setgid bit.
    if f.metadata().map_err(|e| io_failed(p, e))?.mode() & 0o7777 != mode {
        f.set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(|e| io_failed(p, e))?;
        did.push(format!("{}: mode {mode:04o}", p.display()));
    }
    Ok(())
}
