//! `tern_status -check`: the audit of an installation's owners and modes
//! (tern_security(7), "Auditing"; `package` checks what the package
//! installs beside SPOOL and /etc/tern). Every file whose owner or mode lets
//! someone other than root (shared mode) or the user (personal mode)
//! change the queue is one line: the path, what is wrong, what it should
//! be. Nothing is changed and nothing is followed: a symlink where a file
//! should be is itself a problem.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

mod package;

/// Where a shared installation keeps its files, and its group.
#[derive(Clone, Debug)]
pub struct Layout {
    /// `/etc/tern`.
    pub etc: PathBuf,
    /// `/etc/tern/tern_config`.
    pub config: PathBuf,
    /// LOCAL_CONFIG_DIR's directories.
    pub local_dirs: Vec<PathBuf>,
    /// SPOOL (`/var/lib/tern`).
    pub spool: PathBuf,
    /// The setgid multicall program (`/usr/bin/tern`).
    pub binary: PathBuf,
    /// The group the tools are setgid to (`tern`).
    pub group: String,
    /// EXECUTE, where each run's sandbox is made (`None`: not set).
    pub execute: Option<PathBuf>,
    /// The tools' names, each a symbolic link to `binary`.
    pub links: Vec<PathBuf>,
    /// The cron file and systemd units: root's, writable by nobody else.
    pub package_files: Vec<PathBuf>,
}

impl Layout {
    /// The installed layout: the package's paths, and SPOOL,
    /// LOCAL_CONFIG_DIR and EXECUTE as configured.
    pub fn installed(spool: &Path, local_dirs: Vec<PathBuf>, execute: Option<PathBuf>) -> Layout {
        Layout {
            etc: PathBuf::from("/etc/tern"),
            config: PathBuf::from("/etc/tern/tern_config"),
            local_dirs,
            spool: spool.to_path_buf(),
            binary: PathBuf::from("/usr/bin/tern"),
            group: "tern".into(),
            execute,
            links: package::installed_links(),
            package_files: package::installed_files(),
        }
    }
}

/// The queue database and its SQLite side files.
fn database_files(spool: &Path) -> [(PathBuf, bool); 3] {
    let db = crate::queue::db_path(spool);
    let side = |ext: &str| {
        let mut s = db.clone().into_os_string();
        s.push(ext);
        PathBuf::from(s)
    };
    [
        (db.clone(), true),
        (side("-wal"), false),
        (side("-shm"), false),
    ]
}

fn mode_text(m: u32) -> String {
    format!("{:04o}", m & 0o7777)
}

/// What is wrong with `path`, judged by `lstat`: missing (when required),
/// of the wrong kind, or with the wrong owner, group or mode.
struct Want<'a> {
    path: &'a Path,
    dir: bool,
    required: bool,
    uid: Option<u32>,
    gid: Option<(u32, &'a str)>,
    /// The exact mode, or `None` for "not group- or other-writable".
    mode: Option<u32>,
}

fn check(w: &Want<'_>, out: &mut Vec<String>) {
    let p = w.path.display();
    let md = match std::fs::symlink_metadata(w.path) {
        Ok(md) => md,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if w.required {
                out.push(format!("{p}: missing"));
            }
            return;
        }
        Err(e) => {
            out.push(format!("{p}: cannot stat: {e}"));
            return;
        }
    };
    let ft = md.file_type();
    if ft.is_symlink() {
        out.push(format!("{p}: a symbolic link, want a real {}", kind(w.dir)));
        return;
    }
    if ft.is_dir() != w.dir || (!w.dir && !ft.is_file()) {
        out.push(format!("{p}: not a {}", kind(w.dir)));
        return;
    }
    if let Some(uid) = w.uid
        && md.uid() != uid
    {
        out.push(format!(
            "{p}: owner uid {}, want {}",
            md.uid(),
            user_text(uid)
        ));
    }
    if let Some((gid, name)) = w.gid
        && md.gid() != gid
    {
        out.push(format!("{p}: group gid {}, want {name} ({gid})", md.gid()));
    }
    let mode = md.mode() & 0o7777;
    match w.mode {
        Some(m) if mode != m => out.push(format!(
            "{p}: mode {}, want {}",
            mode_text(mode),
            mode_text(m)
        )),
        None if mode & 0o022 != 0 => out.push(format!(
            "{p}: mode {}, writable by {}",
            mode_text(mode),
            if mode & 0o002 != 0 {
                "others"
            } else {
                "its group"
            }
        )),
        _ => {}
    }
    if !w.dir && md.nlink() > 1 {
        out.push(format!("{p}: {} hard links, want 1", md.nlink()));
    }
}

fn kind(dir: bool) -> &'static str {
    if dir { "directory" } else { "regular file" }
}

fn user_text(uid: u32) -> String {
    if uid == 0 {
        "root (0)".into()
    } else {
        uid.to_string()
    }
}

/// The audit of a shared installation: one line per problem, none when
/// all is well.
pub fn shared(l: &Layout) -> Vec<String> {
    let mut out = Vec::new();
    let group = crate::sys::group::by_name(&l.group);
    let gid = match &group {
        Some(g) => Some((g.gid, l.group.as_str())),
        None => {
            out.push(format!("group {}: missing", l.group));
            None
        }
    };
    fn root_only(path: &Path, dir: bool) -> Want<'_> {
        Want {
            path,
            dir,
            required: true,
            uid: Some(0),
            gid: None,
            mode: None,
        }
    }
    check(&root_only(&l.etc, true), &mut out);
    check(&root_only(&l.config, false), &mut out);
    for d in &l.local_dirs {
        check(
            &Want {
                required: false,
                ..root_only(d, true)
            },
            &mut out,
        );
        let mut files: Vec<PathBuf> = std::fs::read_dir(d)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        files.sort();
        for f in &files {
            check(&root_only(f, false), &mut out);
        }
    }
    let spool_dir = |path| Want {
        path,
        dir: true,
        required: true,
        uid: Some(0),
        gid,
        mode: Some(0o2770),
    };
    check(&spool_dir(&l.spool), &mut out);
    for d in &crate::queue::shared::directories(&l.spool) {
        check(&spool_dir(d), &mut out);
    }
    for (f, is_db) in &database_files(&l.spool) {
        // -wal and -shm belong to whoever made them (SQLite creates them
        // with the database's mode); their group and mode are what count.
        check(
            &Want {
                path: f,
                dir: false,
                required: *is_db,
                uid: is_db.then_some(0),
                gid,
                mode: Some(0o660),
            },
            &mut out,
        );
    }
    check(
        &Want {
            path: &l.binary,
            dir: false,
            required: true,
            uid: Some(0),
            gid,
            mode: Some(0o2755),
        },
        &mut out,
    );
    package::check_package(l, &mut out);
    if let Some(g) = &group {
        // root may be listed: it can do everything anyway.
        let mut members: Vec<String> = Vec::new();
        for m in g
            .members
            .iter()
            .cloned()
            .chain(crate::sys::group::primary_members(g.gid))
        {
            if m != "root" && !members.contains(&m) {
                members.push(m);
            }
        }
        if !members.is_empty() {
            out.push(format!(
                "group {}: has members ({}), want none: a member can write the queue directly",
                l.group,
                members.join(", ")
            ));
        }
    }
    if let Some(m) = nosuid_mount(&l.binary) {
        out.push(format!(
            "{}: on a nosuid mount ({m}), so its setgid bit has no effect",
            l.binary.display()
        ));
    }
    out
}

/// The audit of a personal SPOOL: it and the database are the user's and
/// writable by nobody else. A SPOOL not made yet is no problem.
pub fn personal(spool: &Path, uid: u32) -> Vec<String> {
    let mut out = Vec::new();
    if std::fs::symlink_metadata(spool).is_err() {
        return out;
    }
    let mine = |path, dir, required| Want {
        path,
        dir,
        required,
        uid: Some(uid),
        gid: None,
        mode: None,
    };
    check(&mine(spool, true, true), &mut out);
    for (f, _) in &database_files(spool) {
        check(&mine(f, false, false), &mut out);
    }
    out
}

/// The mount point of the mount holding `path`, when that mount is
/// nosuid (from /proc/self/mountinfo: the longest mount point that is a
/// prefix of the path's canonical form).
pub fn nosuid_mount(path: &Path) -> Option<String> {
    let real = std::fs::canonicalize(path).ok()?;
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut best: Option<(PathBuf, bool)> = None;
    for line in info.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        if f.len() < 6 {
            continue;
        }
        let point = PathBuf::from(f[4].replace("\\040", " "));
        if !real.starts_with(&point) {
            continue;
        }
        let nosuid = f[5].split(',').any(|o| o == "nosuid");
        // Later lines mount over earlier ones at the same point.
        if best
            .as_ref()
            .is_none_or(|(b, _)| point.as_os_str().len() >= b.as_os_str().len())
        {
            best = Some((point, nosuid));
        }
    }
    match best {
        Some((p, true)) => Some(p.display().to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
