//! `tern_status -check`: the audit of an installation's owners and modes
//! (tern_security(7), "Auditing"). Every file whose owner or mode lets
//! someone other than root (shared mode) or the user (personal mode)
//! change the queue is one line: the path, what is wrong, what it should
//! be. Nothing is changed and nothing is followed: a symlink where a file
//! should be is itself a problem.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

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
}

impl Layout {
    /// The installed layout: the package's paths, SPOOL and
    /// LOCAL_CONFIG_DIR as configured.
    pub fn installed(spool: &Path, local_dirs: Vec<PathBuf>) -> Layout {
        Layout {
            etc: PathBuf::from("/etc/tern"),
            config: PathBuf::from("/etc/tern/tern_config"),
            local_dirs,
            spool: spool.to_path_buf(),
            binary: PathBuf::from("/usr/bin/tern"),
            group: "tern".into(),
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
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn chmod(p: &Path, m: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    }

    /// A correct shared layout in a temp dir, owned root:root (group
    /// `root` standing for `tern`): only as root, which owns what it makes.
    fn good_layout(dir: &Path) -> Option<Layout> {
        if crate::sys::real_uid() != 0 {
            eprintln!("skipped: the shared layout needs root to own its files");
            return None;
        }
        let etc = dir.join("etc");
        std::fs::create_dir(&etc).unwrap();
        chmod(&etc, 0o755);
        std::fs::write(etc.join("tern_config"), "SHARED_QUEUE = True\n").unwrap();
        chmod(&etc.join("tern_config"), 0o644);
        let spool = dir.join("spool");
        std::fs::create_dir(&spool).unwrap();
        chmod(&spool, 0o2770);
        for d in crate::queue::shared::directories(&spool) {
            std::fs::create_dir(&d).unwrap();
            chmod(&d, 0o2770);
        }
        let db = crate::queue::db_path(&spool);
        std::fs::write(&db, "").unwrap();
        chmod(&db, 0o660);
        let bin = dir.join("tern");
        std::fs::write(&bin, "").unwrap();
        chmod(&bin, 0o2755);
        // A group with no members but root: root's may list some on odd
        // systems.
        if crate::sys::group::by_name("root").is_some_and(|g| g.members.iter().any(|m| m != "root"))
            || crate::sys::group::primary_members(0)
                .iter()
                .any(|m| m != "root")
        {
            eprintln!("skipped: group root has members here");
            return None;
        }
        Some(Layout {
            config: etc.join("tern_config"),
            etc,
            local_dirs: vec![],
            spool,
            binary: bin,
            group: "root".into(),
        })
    }

    #[test]
    fn a_correct_shared_layout_has_no_problems_and_each_fault_is_one_line() {
        let dir = tempfile::tempdir().unwrap();
        chmod(dir.path(), 0o755);
        let Some(l) = good_layout(dir.path()) else {
            return;
        };
        // The temp dir's mount may be nosuid; that is the machine's, not the layout's.
        let mount_note = nosuid_mount(&l.binary).is_some() as usize;
        assert_eq!(shared(&l).len(), mount_note, "{:?}", shared(&l));
        chmod(&l.spool, 0o2775);
        chmod(&l.config, 0o664);
        let found = shared(&l);
        assert_eq!(found.len(), 2 + mount_note, "{found:?}");
        assert!(
            found[0].ends_with("tern_config: mode 0664, writable by its group"),
            "{found:?}"
        );
        assert!(
            found[1].ends_with("spool: mode 2775, want 2770"),
            "{found:?}"
        );
        chmod(&l.spool, 0o2770);
        chmod(&l.config, 0o644);
        // A symlink where the database should be, and a world-writable
        // -wal left by a user.
        let db = crate::queue::db_path(&l.spool);
        std::fs::remove_file(&db).unwrap();
        std::os::unix::fs::symlink("/etc/shadow", &db).unwrap();
        let wal = l.spool.join("queue.db-wal");
        std::fs::write(&wal, "").unwrap();
        chmod(&wal, 0o666);
        let found = shared(&l);
        assert!(
            found
                .iter()
                .any(|f| f.ends_with("queue.db: a symbolic link, want a real regular file")),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|f| f.ends_with("queue.db-wal: mode 0666, want 0660")),
            "{found:?}"
        );
    }

    #[test]
    fn a_personal_spool_writable_by_others_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let spool = dir.path().join("spool");
        let uid = crate::sys::real_uid();
        assert!(personal(&spool, uid).is_empty(), "no SPOOL yet is fine");
        std::fs::create_dir(&spool).unwrap();
        chmod(&spool, 0o700);
        std::fs::write(crate::queue::db_path(&spool), "").unwrap();
        chmod(&crate::queue::db_path(&spool), 0o644);
        assert!(personal(&spool, uid).is_empty());
        chmod(&spool, 0o777);
        let found = personal(&spool, uid);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].ends_with("spool: mode 0777, writable by others"));
        chmod(&spool, 0o700);
        let found = personal(&spool, uid + 1);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[1].ends_with(&format!("queue.db: owner uid {uid}, want {}", uid + 1)));
    }
}
