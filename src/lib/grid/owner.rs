//! Acting as the job's owner, one function per concern (issue 14, item 7).
//!
//! tern's tools run as the user who runs them, and a personal gridmanager
//! runs as its queue's user. A gridmanager run as root (a root pass) does
//! each of these as the job's owner: commands run as the owner for good
//! (ids switched between fork and exec, the working directory entered as
//! the owner), and paths are looked at with the owner's effective ids
//! ([`crate::sys::identity`]).

use std::path::Path;
use std::process::Command;

use crate::sys::identity::JobOwner;

/// A command that runs as the job's `owner`: sbatch, squeue, scancel,
/// sacct, scontrol, in `dir` when given. Slurm's times are asked for as
/// epoch seconds. A root gridmanager runs it as the owner for good
/// ([`JobOwner::identity`]: the job's OwnerUid must be the owner's uid;
/// shared mode refuses a job without one), entering `dir` as the owner.
pub fn command(owner: &JobOwner, program: &str, dir: Option<&Path>) -> std::io::Result<Command> {
    let mut c = Command::new(program);
    let ident = acting_for(owner)?;
    // A root gridmanager hands the owner's Slurm commands only the owner's
    // bare environment, as the router's hooks get (sbatch passes its own
    // on to the batch job), with the administrator's PATH and SLURM_*
    // settings, which find and configure Slurm; `/` rather than root's
    // working directory.
    let dir = match &ident {
        Some(i) => {
            c.env_clear()
                .envs(crate::router::hooks::owner_env(i, &owner.name))
                .envs(std::env::vars_os().filter(|(k, _)| {
                    k == "PATH" || k.to_str().is_some_and(|k| k.starts_with("SLURM_"))
                }));
            Some(dir.unwrap_or(Path::new("/")))
        }
        None => dir,
    };
    c.env("SLURM_TIME_FORMAT", "%s");
    crate::sys::identity::child_runs_as(&mut c, ident, dir);
    crate::sys::privilege::child_drops_group(&mut c);
    Ok(c)
}

/// Whom a root process acts as for `owner` (`None`: itself).
fn acting_for(owner: &JobOwner) -> std::io::Result<Option<crate::sys::identity::Identity>> {
    if !crate::sys::identity::is_root() {
        return Ok(None);
    }
    owner
        .identity()
        .map_err(|why| std::io::Error::new(std::io::ErrorKind::PermissionDenied, why))
}

/// Whether `owner` may use `dir` as a job's working directory (the check
/// sbatch would make as the owner, made before anything is submitted).
pub fn can_enter(owner: &JobOwner, dir: &Path) -> Result<(), std::io::Error> {
    as_owner(owner, || std::fs::read_dir(dir).map(|_| ()))?
}

/// Runs `f` with `owner`'s rights: a root gridmanager acts as the owner
/// ([`crate::sys::identity::act_as`]) until `f` returns, so every path `f`
/// opens or creates is checked as the owner's and what it makes is the
/// owner's; any other gridmanager runs `f` as itself. Whatever `f` opens
/// must be closed before it returns: nothing opened as the owner is used
/// with root's ids, and nothing opened as root is used as the owner. The
/// error is why root may not act for the owner (`f` did not run).
pub fn as_owner<T>(owner: &JobOwner, f: impl FnOnce() -> T) -> std::io::Result<T> {
    let id = acting_for(owner)?;
    crate::sys::identity::as_user(id.as_ref(), f)
}

/// Starts `program` detached (a session of its own, standard files on
/// /dev/null, not waited for) with `extra_env`, as the job's `owner` for
/// good when this is a root gridmanager (with the owner's bare environment
/// in `/`, root's supplementary groups and tern's given up), else as
/// ourselves with our environment.
pub fn start_detached(
    owner: &JobOwner,
    program: &Path,
    extra_env: &[(String, String)],
) -> std::io::Result<()> {
    let Some(id) = acting_for(owner)? else {
        crate::sys::spawn(&crate::sys::Spawn {
            exe: program,
            args: &[],
            env: None,
            extra_env,
            dir: None,
            stdio: [None, None, None],
            new_session: true,
            only_stdio: false,
        })?;
        return Ok(());
    };
    let mut c = Command::new(program);
    c.env_clear()
        .envs(crate::router::hooks::owner_env(&id, &owner.name))
        .envs(extra_env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    crate::sys::child_starts_session(&mut c);
    crate::sys::identity::child_runs_as(&mut c, Some(id), Some(Path::new("/")));
    crate::sys::privilege::child_drops_group(&mut c);
    c.spawn().map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In shared mode a job's owner is known only with its OwnerUid:
    /// every grid step acts for the job's recorded owner, never for a
    /// bare name (which shared mode refuses, failing every grid job).
    #[test]
    fn a_root_gridmanager_acts_as_the_jobs_owner_with_its_owner_uid() {
        use crate::sys::identity::{OwnerRules, set_owner_rules, user};
        if !crate::sys::identity::is_root() {
            return;
        }
        let Some(nobody) = user("nobody") else { return };
        // A test binary of its own: the rules are the whole process's.
        if std::env::var_os("TERN_GRID_OWNER_CHILD").is_none() {
            let name =
                "grid::owner::tests::a_root_gridmanager_acts_as_the_jobs_owner_with_its_owner_uid";
            crate::sys::pids::rerun_test_alone(name, "TERN_GRID_OWNER_CHILD");
            return;
        }
        set_owner_rules(OwnerRules {
            shared: true,
            min_uid: 0,
            ..OwnerRules::default()
        });
        let owner = JobOwner {
            name: "nobody".into(),
            uid: Some(i64::from(nobody.uid)),
            umask: None,
        };
        // The command's child reports the ids it ran with.
        let out = command(&owner, "/usr/bin/id", Some(Path::new("/")))
            .unwrap()
            .arg("-u")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            nobody.uid.to_string()
        );
        can_enter(&owner, Path::new("/")).unwrap();
        let closed = tempfile::tempdir().unwrap();
        std::fs::set_permissions(
            closed.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .unwrap();
        let e = can_enter(&owner, closed.path()).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied);
        // What is made as the owner is the owner's, where the owner may
        // write only; root's ids come back after.
        let open = tempfile::tempdir().unwrap();
        std::fs::set_permissions(
            open.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o777),
        )
        .unwrap();
        let made = open.path().join("made");
        as_owner(&owner, || std::fs::write(&made, "x"))
            .unwrap()
            .unwrap();
        use std::os::unix::fs::MetadataExt;
        assert_eq!(std::fs::metadata(&made).unwrap().uid(), nobody.uid);
        let e = as_owner(&owner, || std::fs::write(closed.path().join("f"), "x"))
            .unwrap()
            .unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied);
        assert!(crate::sys::identity::is_root(), "root's ids are back");
        // Without the OwnerUid shared mode refuses, with the reason.
        let bare = JobOwner { uid: None, ..owner };
        let e = command(&bare, "/usr/bin/id", None).unwrap_err();
        assert!(e.to_string().contains("no OwnerUid"), "{e}");
    }
}
