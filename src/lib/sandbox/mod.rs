//! The job's sandbox: what HTCondor's starter does around a run.
//!
//! Each run gets a fresh scratch directory `$(EXECUTE)/dir_<pid>` (the
//! shadow's pid, as HTCondor names it after the starter's), mode 0700 and
//! owned by the job's user. With file transfer the job runs inside it: the
//! executable, the input files and stdin are copied in ([`input`]), the
//! job writes `_condor_stdout`/`_condor_stderr` there, and at exit the
//! output set goes back to Iwd ([`output`]). Without transfer the job runs
//! in Iwd and the sandbox is only its scratch space (`TMPDIR`). Either
//! way the job's environment is built as the starter builds it ([`env`])
//! and `.job.ad`/`.machine.ad` are written first ([`adfiles`]). The
//! directory goes when the run ends, unless `KEEP_SANDBOX` says otherwise.
//!
//! One machine means one file system: "transfer" is a local copy, and
//! IF_NEEDED resolves by comparing the job's FileSystemDomain with this
//! machine's, which for a job submitted here means no transfer.

pub mod adfiles;
pub mod env;
pub mod input;
pub mod output;
pub mod remap;
pub mod spool;

use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::classad::ClassAd;
use crate::config::{Config, ConfigError};
use crate::sys::identity::Identity;
use crate::sys::io_error_text as io_text;
use crate::vocab::{Hold, hold_code};

/// The names the starter writes into a sandbox, never returned as output.
pub const JOB_AD_FILE: &str = ".job.ad";
pub const MACHINE_AD_FILE: &str = ".machine.ad";
pub const STDOUT_FILE: &str = "_condor_stdout";
pub const STDERR_FILE: &str = "_condor_stderr";

/// The knobs a sandbox reads, once per shadow.
#[derive(Clone, Debug)]
pub struct Knobs {
    /// EXECUTE: where sandboxes are made.
    pub execute: PathBuf,
    /// FILESYSTEM_DOMAIN: IF_NEEDED transfers only to another one.
    pub filesystem_domain: String,
    /// KEEP_SANDBOX: leave each sandbox in place after its run.
    pub keep: bool,
    /// SPOOL: where ON_EXIT_OR_EVICT keeps a job's files between runs.
    pub spool: PathBuf,
    /// MAX_TRANSFER_INPUT_MB and MAX_TRANSFER_OUTPUT_MB (-1: no limit).
    pub max_input_mb: i64,
    pub max_output_mb: i64,
    /// STARTER_JOB_ENVIRONMENT: variables every job starts with.
    pub job_environment: String,
    /// STARTER_NUM_THREADS_ENV_VARS: set to the slot's cpus when empty.
    pub thread_vars: Vec<String>,
}

impl Knobs {
    /// `filesystem_domain` is the machine's (FILESYSTEM_DOMAIN, by default
    /// the host name).
    pub fn from_config(cfg: &Config, filesystem_domain: &str) -> Result<Knobs, ConfigError> {
        let spool = cfg.get("SPOOL")?.unwrap_or_default();
        let execute = cfg
            .get("EXECUTE")?
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| format!("{spool}/execute"));
        Ok(Knobs {
            execute: PathBuf::from(execute),
            spool: PathBuf::from(&spool),
            max_input_mb: cfg.get_int("MAX_TRANSFER_INPUT_MB", -1)?,
            max_output_mb: cfg.get_int("MAX_TRANSFER_OUTPUT_MB", -1)?,
            filesystem_domain: filesystem_domain.to_string(),
            keep: cfg.get_bool("KEEP_SANDBOX", false)?,
            job_environment: cfg.get("STARTER_JOB_ENVIRONMENT")?.unwrap_or_default(),
            thread_vars: cfg
                .get("STARTER_NUM_THREADS_ENV_VARS")?
                .unwrap_or_default()
                .split([',', ' ', '\t'])
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect(),
        })
    }
}

/// Removes sandboxes whose shadow is gone (killed before it could clean
/// up), as HTCondor's startd clears its starters' leftovers: a
/// `dir_<pid>` whose process no longer exists. A live process of that pid,
/// a shadow or not, keeps its directory. Nothing is removed when
/// KEEP_SANDBOX keeps them on purpose. Returns how many it removed.
pub fn remove_orphan_sandboxes(knobs: &Knobs) -> usize {
    if knobs.keep {
        return 0;
    }
    let Ok(rd) = std::fs::read_dir(&knobs.execute) else {
        return 0;
    };
    let mut removed = 0;
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("dir_")
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if crate::sys::pids::start_time(pid).is_none() && remove_tree(&e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Whether the executable is one of the inputs: TransferExecutable is
/// absent unless false.
pub(crate) fn transfers_executable(ad: &Rc<ClassAd>) -> bool {
    !matches!(
        ad.eval("TransferExecutable"),
        crate::classad::Value::Bool(false)
    )
}

/// Whether the job's files are transferred (HTCondor's
/// `JICShadow::initFileTransfer`): YES always, NO never, IF_NEEDED only
/// when the job's FileSystemDomain (missing counts as different) is not
/// this machine's.
pub fn transfers(ad: &Rc<ClassAd>, filesystem_domain: &str) -> bool {
    match ad
        .eval_str("ShouldTransferFiles")
        .unwrap_or_default()
        .to_ascii_uppercase()
        .as_str()
    {
        "YES" => true,
        "IF_NEEDED" => !ad
            .eval_str("FileSystemDomain")
            .is_some_and(|d| d.eq_ignore_ascii_case(filesystem_domain)),
        _ => false,
    }
}

/// One run's scratch directory.
#[derive(Debug)]
pub struct Sandbox {
    pub dir: PathBuf,
    /// Whether the job's files are copied in and out.
    pub transfer: bool,
    keep: bool,
}

impl Sandbox {
    /// Makes `$(EXECUTE)/dir_<tag>` ready for a run, mode 0700, owned by
    /// `owner` when the shadow runs as root: a new directory, or the one an
    /// earlier run of the same shadow emptied (claim reuse), emptied again.
    /// Reusing the directory and its two ad files saves the file system
    /// three inodes made and freed per job, most of what a sandbox cost a
    /// short job. A sandbox that cannot be made is a hold naming the path.
    pub fn create(
        knobs: &Knobs,
        tag: &str,
        transfer: bool,
        owner: Option<&Identity>,
    ) -> Result<Sandbox, Hold> {
        use std::os::unix::fs::DirBuilderExt;
        let dir = knobs.execute.join(format!("dir_{tag}"));
        let fail = |what: &str, e: std::io::Error| {
            Hold::new(
                format!(
                    "Failed to {what} the job's scratch directory {}: {}",
                    dir.display(),
                    io_text(&e)
                ),
                hold_code::FAILED_TO_CREATE_PROCESS,
                e.raw_os_error().unwrap_or(0) as i64,
            )
        };
        match dir.symlink_metadata() {
            Ok(m) if m.is_dir() => {
                crate::sys::tree::empty_dir(&dir, &[JOB_AD_FILE, MACHINE_AD_FILE])
                    .map_err(|e| fail("clear", e))?;
            }
            Ok(_) => {
                std::fs::remove_file(&dir).map_err(|e| fail("clear", e))?;
                return Sandbox::create(knobs, tag, transfer, owner);
            }
            Err(_) => {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o755)
                    .create(&knobs.execute)
                    .map_err(|e| fail("make the parent of", e))?;
                std::fs::DirBuilder::new()
                    .mode(0o700)
                    .create(&dir)
                    .map_err(|e| fail("make", e))?;
            }
        }
        protect(&dir, owner).map_err(|e| fail("protect", e))?;
        Ok(Sandbox {
            dir,
            transfer,
            keep: knobs.keep,
        })
    }

    /// A path inside the sandbox.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Where the job's executable is when it was transferred in: under
    /// its own base name (`None` without transfer, or with
    /// `TransferExecutable = false`).
    pub fn executable(&self, ad: &Rc<ClassAd>) -> Option<PathBuf> {
        if !self.transfer || !transfers_executable(ad) {
            return None;
        }
        let cmd = ad.eval_str("Cmd")?;
        Path::new(&cmd).file_name().map(|b| self.dir.join(b))
    }

    /// Ends the run: everything the run left goes (unless KEEP_SANDBOX),
    /// and the directory waits for the shadow's next run; [`Sandbox::remove`]
    /// removes it when the shadow is done. A failure is reported, not
    /// fatal: the next run, or the pass, clears it.
    pub fn finish(self) {
        if self.keep {
            return;
        }
        if let Err(e) = crate::sys::tree::empty_dir(&self.dir, &[JOB_AD_FILE, MACHINE_AD_FILE]) {
            eprintln!(
                "tern_shadow: cannot empty the sandbox {}: {}",
                self.dir.display(),
                io_text(&e)
            );
        }
    }

    /// Removes the sandbox `dir_<tag>` whole, when its shadow has no more
    /// runs (unless KEEP_SANDBOX).
    pub fn remove(knobs: &Knobs, tag: &str) {
        if knobs.keep {
            return;
        }
        let dir = knobs.execute.join(format!("dir_{tag}"));
        if let Err(e) = remove_tree(&dir) {
            eprintln!(
                "tern_shadow: cannot remove the sandbox {}: {}",
                dir.display(),
                io_text(&e)
            );
        }
    }
}

/// Mode 0700 and, for a job run as its owner, the owner's ids, set on the
/// sandbox's descriptor (opened without following a link).
fn protect(dir: &Path, owner: Option<&Identity>) -> std::io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(dir)?;
    if let Some(id) = owner {
        std::os::unix::fs::fchown(&f, Some(id.uid), Some(id.gid))?;
    }
    f.set_permissions(std::fs::Permissions::from_mode(0o700))
}

/// Removes a tree a job had (a sandbox, a SPOOL copy), which what the job
/// left running may still be changing: by descriptor, never following a
/// link, and as the tree's owner when run as root ([`crate::sys::tree`]).
pub(crate) fn remove_tree(dir: &Path) -> std::io::Result<()> {
    crate::sys::tree::remove_tree(dir)
}

/// Where a transfer happened, for HTCondor's hold texts: this machine is
/// both the access point and the execution point.
#[derive(Clone, Debug)]
pub struct Sides {
    /// `<slot>@<host>`.
    pub ep: String,
    /// The host name.
    pub ap: String,
}

/// The totals of one direction of a transfer.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Moved {
    pub bytes: u64,
    pub files: u64,
    pub started: i64,
    pub finished: i64,
}

#[cfg(test)]
mod tests;
