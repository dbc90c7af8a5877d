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

/// A command that runs as `owner`: sbatch, squeue, scancel, sacct,
/// scontrol, in `dir` when given. Slurm's times are asked for as epoch
/// seconds. A root gridmanager runs it as the owner for good
/// ([`crate::sys::identity::job_owner`]'s rules; jobs without OwnerUid
/// are refused in shared mode), entering `dir` as the owner.
pub fn command(owner: &str, program: &str, dir: Option<&Path>) -> std::io::Result<Command> {
    let mut c = Command::new(program);
    c.env("SLURM_TIME_FORMAT", "%s");
    crate::sys::identity::child_runs_as(&mut c, acting_for(owner)?, dir);
    crate::sys::privilege::child_drops_group(&mut c);
    Ok(c)
}

/// Whom a root process acts as for `owner` (`None`: itself).
fn acting_for(owner: &str) -> std::io::Result<Option<crate::sys::identity::Identity>> {
    if !crate::sys::identity::is_root() {
        return Ok(None);
    }
    crate::sys::identity::job_owner(owner, None)
        .map_err(|why| std::io::Error::new(std::io::ErrorKind::PermissionDenied, why))
}

/// Whether `owner` may use `dir` as a job's working directory (the check
/// sbatch would make as the owner, made before anything is submitted).
pub fn can_enter(owner: &str, dir: &Path) -> Result<(), std::io::Error> {
    let id = acting_for(owner)?;
    crate::sys::identity::as_user(id.as_ref(), || std::fs::read_dir(dir).map(|_| ()))?
}
