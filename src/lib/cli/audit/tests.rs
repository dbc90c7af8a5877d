//! The audit's checks on made-up layouts.

use super::*;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

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
    let usr_bin = dir.join("usr/bin");
    std::fs::create_dir_all(&usr_bin).unwrap();
    let bin = usr_bin.join("tern");
    std::fs::write(&bin, "").unwrap();
    chmod(&bin, 0o2755);
    let (links, package_files) = package(dir);
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
        execute: Some(dir.join("execute")),
        links,
        package_files,
    })
}

/// What the package installs beside SPOOL, under `dir`: two tools and the
/// installer linked to usr/bin/tern, EXECUTE, the cron file and the units.
fn package(dir: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let libexec = dir.join("usr/libexec/tern");
    std::fs::create_dir_all(&libexec).unwrap();
    let links = vec![
        dir.join("usr/bin/tern_q"),
        dir.join("usr/bin/tern_submit"),
        libexec.join("tern_install"),
    ];
    std::os::unix::fs::symlink("tern", &links[0]).unwrap();
    std::os::unix::fs::symlink("tern", &links[1]).unwrap();
    std::os::unix::fs::symlink("../../bin/tern", &links[2]).unwrap();
    std::fs::create_dir(dir.join("execute")).unwrap();
    chmod(&dir.join("execute"), 0o755);
    std::fs::create_dir_all(dir.join("etc/cron.d")).unwrap();
    std::fs::create_dir_all(dir.join("lib/systemd/system")).unwrap();
    let mut files = vec![dir.join("etc/cron.d/tern")];
    for unit in ["path", "service", "timer"] {
        files.push(dir.join(format!("lib/systemd/system/tern-negotiate.{unit}")));
    }
    for f in &files {
        std::fs::write(f, "").unwrap();
        chmod(f, 0o644);
    }
    (links, files)
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

#[test]
fn each_wrong_link_execute_cron_file_and_unit_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    chmod(dir.path(), 0o755);
    let Some(mut l) = good_layout(dir.path()) else {
        return;
    };
    let mount_note = nosuid_mount(&l.binary).is_some() as usize;
    assert_eq!(shared(&l).len(), mount_note, "{:?}", shared(&l));
    let d = dir.path();
    // A tool's name pointing elsewhere, another a copy, the installer gone.
    std::fs::remove_file(&l.links[0]).unwrap();
    std::os::unix::fs::symlink("/tmp/evil", &l.links[0]).unwrap();
    std::fs::remove_file(&l.links[1]).unwrap();
    std::fs::write(&l.links[1], "").unwrap();
    std::fs::remove_file(&l.links[2]).unwrap();
    // EXECUTE writable by all, the cron file by its group, a unit not
    // root's and another a link.
    chmod(&d.join("execute"), 0o1777);
    chmod(&l.package_files[0], 0o664);
    std::os::unix::fs::chown(&l.package_files[1], Some(1), None).unwrap();
    std::fs::remove_file(&l.package_files[2]).unwrap();
    std::os::unix::fs::symlink("/dev/null", &l.package_files[2]).unwrap();
    let found: Vec<String> = shared(&l)
        .into_iter()
        .map(|f| f.replace(&d.display().to_string(), "$D"))
        .collect();
    let want = [
        "$D/usr/bin/tern_q: a symbolic link to /tmp/evil, want one to $D/usr/bin/tern",
        "$D/usr/bin/tern_submit: not a symbolic link, want one to $D/usr/bin/tern",
        "$D/usr/libexec/tern/tern_install: missing",
        "$D/execute: mode 1777, writable by others",
        "$D/etc/cron.d/tern: mode 0664, writable by its group",
        "$D/lib/systemd/system/tern-negotiate.path: owner uid 1, want root (0)",
        "$D/lib/systemd/system/tern-negotiate.service: a symbolic link, want a real regular file",
    ];
    assert_eq!(&found[..want.len()], want, "{found:?}");
    assert_eq!(found.len(), want.len() + mount_note, "{found:?}");
    // EXECUTE inside SPOOL, or not set at all.
    l.execute = Some(l.spool.join("execute"));
    assert!(shared(&l).iter().any(|f| f.ends_with(
        "execute: EXECUTE is inside SPOOL, want an absolute directory outside SPOOL \
         (job owners cannot reach their sandboxes)"
    )));
    l.execute = None;
    assert!(
        shared(&l)
            .iter()
            .any(|f| f == "EXECUTE: not set, want a directory outside SPOOL")
    );
}
