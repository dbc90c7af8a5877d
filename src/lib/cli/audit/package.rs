//! The audit of what the package installs beside SPOOL and /etc/tern:
//! the tool names linked to the setgid program, EXECUTE, the cron file and
//! the systemd units (tern_security(7), FILES). A link that leads anywhere
//! but the program would run something else under a tool's name, and a
//! cron file or unit someone else can write runs their commands as root.

use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use super::{Layout, Want, check};

/// The installed names of the program: every tool in /usr/bin and the
/// hidden installer in /usr/libexec/tern.
pub fn installed_links() -> Vec<PathBuf> {
    let mut links: Vec<PathBuf> = crate::cli::multicall::TOOLS
        .iter()
        .map(|(name, _)| Path::new("/usr/bin").join(name))
        .collect();
    links.extend(
        crate::cli::multicall::HIDDEN
            .iter()
            .map(|(name, _)| Path::new("/usr/libexec/tern").join(name)),
    );
    links
}

/// The files the package installs for activation, which must be root's
/// and writable by nobody else.
pub fn installed_files() -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from("/etc/cron.d/tern")];
    for unit in ["path", "service", "timer"] {
        files.push(PathBuf::from(format!(
            "/lib/systemd/system/tern-negotiate.{unit}"
        )));
    }
    files
}

/// Every problem of the package's files: links, EXECUTE, cron and units.
pub fn check_package(l: &Layout, out: &mut Vec<String>) {
    for link in &l.links {
        check_link(link, &l.binary, out);
    }
    check_execute(l, out);
    for f in &l.package_files {
        check(
            &Want {
                path: f,
                dir: false,
                required: true,
                uid: Some(0),
                gid: None,
                mode: None,
            },
            out,
        );
    }
}

/// A tool's name: a symbolic link, root's, whose target (one step, not
/// followed further: a link through another link could be re-pointed) is
/// the program itself.
fn check_link(link: &Path, binary: &Path, out: &mut Vec<String>) {
    let p = link.display();
    let md = match std::fs::symlink_metadata(link) {
        Ok(md) => md,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            out.push(format!("{p}: missing"));
            return;
        }
        Err(e) => {
            out.push(format!("{p}: cannot stat: {e}"));
            return;
        }
    };
    if !md.file_type().is_symlink() {
        out.push(format!(
            "{p}: not a symbolic link, want one to {}",
            binary.display()
        ));
        return;
    }
    if md.uid() != 0 {
        out.push(format!("{p}: owner uid {}, want root (0)", md.uid()));
    }
    match std::fs::read_link(link) {
        Ok(target) if points_at(link, &target, binary) => {}
        Ok(target) => out.push(format!(
            "{p}: a symbolic link to {}, want one to {}",
            target.display(),
            binary.display()
        )),
        Err(e) => out.push(format!("{p}: cannot read the link: {e}")),
    }
}

/// Whether the link `link` with target `target` names `binary` itself:
/// the target taken from the link's directory, `..` and `.` resolved by
/// name.
fn points_at(link: &Path, target: &Path, binary: &Path) -> bool {
    let joined = link.parent().unwrap_or(Path::new("/")).join(target);
    let mut resolved = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                resolved.pop();
            }
            Component::CurDir => {}
            other => resolved.push(other),
        }
    }
    resolved == binary
}

/// EXECUTE: a directory of root's that nobody else can write (each run's
/// sandbox inside is its owner's), outside SPOOL (which its owners cannot
/// enter).
fn check_execute(l: &Layout, out: &mut Vec<String>) {
    let Some(execute) = &l.execute else {
        out.push("EXECUTE: not set, want a directory outside SPOOL".into());
        return;
    };
    if !execute.is_absolute() || execute.starts_with(&l.spool) {
        out.push(format!(
            "{}: EXECUTE is {}, want an absolute directory outside SPOOL \
             (job owners cannot reach their sandboxes)",
            execute.display(),
            if execute.is_absolute() {
                "inside SPOOL"
            } else {
                "relative"
            }
        ));
        return;
    }
    check(
        &Want {
            path: execute,
            dir: true,
            required: true,
            uid: Some(0),
            gid: None,
            mode: None,
        },
        out,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_points_at_the_program_by_name_only() {
        let bin = Path::new("/usr/bin/tern");
        let link = Path::new("/usr/bin/tern_q");
        assert!(points_at(link, Path::new("tern"), bin));
        assert!(points_at(link, Path::new("/usr/bin/tern"), bin));
        assert!(points_at(link, Path::new("./tern"), bin));
        let hidden = Path::new("/usr/libexec/tern/tern_install");
        assert!(points_at(hidden, Path::new("../../bin/tern"), bin));
        assert!(!points_at(link, Path::new("/home/a/tern"), bin));
        assert!(!points_at(link, Path::new("tern_q"), bin));
        assert!(!points_at(hidden, Path::new("tern"), bin));
    }

    #[test]
    fn every_tool_and_the_installer_are_links_and_the_units_are_files() {
        let links = installed_links();
        assert!(links.contains(&PathBuf::from("/usr/bin/tern_submit")));
        assert!(links.contains(&PathBuf::from("/usr/libexec/tern/tern_install")));
        assert!(!links.iter().any(|l| l.ends_with("tern")));
        assert_eq!(installed_files().len(), 4);
    }
}
