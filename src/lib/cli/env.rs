//! The preamble every tool that reads the configuration shares.
//!
//! [`ToolEnv::open`] loads the configuration (printing its warnings under
//! the tool's name), finds SPOOL and the real user, and opens the queue
//! with the log and history bounds the configuration sets. The error
//! conversions here turn the library's typed errors into what a tool
//! prints, with a hint where one helps, so no tool maps them by hand.

use std::path::PathBuf;

use super::CliError;
use crate::config::{Config, ConfigError};
use crate::queue::{Limits, Queue, QueueError};

/// What a tool knows about where and as whom it runs.
pub struct ToolEnv {
    /// The tool's name, for warnings (`tern_q`).
    pub name: &'static str,
    pub cfg: Config,
    /// `$(SPOOL)`, where the queue lives.
    pub spool: PathBuf,
    /// The real user running the tool.
    pub user: String,
}

impl ToolEnv {
    /// Loads the configuration, prints its warnings as `name: ...` and
    /// finds SPOOL.
    pub fn open(name: &'static str) -> Result<ToolEnv, CliError> {
        let cfg = Config::load()?;
        for w in cfg.warnings() {
            note!("{name}: {w}");
        }
        let spool = spool_dir(&cfg)?;
        Ok(ToolEnv {
            name,
            cfg,
            spool,
            user: crate::sys::real_user_name(),
        })
    }

    /// The queue in SPOOL with the configured bounds; `None` when there is
    /// none yet and `create` is false.
    ///
    /// In shared mode (SHARED_QUEUE) only root makes the queue, with the
    /// shared layout (`queue::shared::install`); for anyone else a missing
    /// shared queue is an error, for readers too.
    pub fn queue(&self, create: bool) -> Result<Option<Queue>, CliError> {
        let shared = self.cfg.get_bool("SHARED_QUEUE", false)?;
        let root = crate::sys::identity::is_root();
        let db = crate::queue::db_path(&self.spool);
        if shared && create && root && std::fs::symlink_metadata(&db).is_err() {
            crate::queue::shared::install_for_group(&self.spool)?;
        }
        let Some(mut q) = Queue::open(&self.spool, create && !shared)? else {
            if shared && !root {
                // Not there, or not ours to reach: a copy of the program
                // (not setgid) cannot enter SPOOL.
                let denied = std::fs::symlink_metadata(&db)
                    .is_err_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied);
                if denied {
                    return Err(CliError::Failed {
                        msg: format!("cannot reach the shared queue {}: permission denied", db.display()),
                        hint: Some(
                            "run the installed tools (/usr/bin/tern_*, set-group-id tern), not a copy"
                                .into(),
                        ),
                    });
                }
                return Err(QueueError::NoSharedQueue { path: db }.into());
            }
            return Ok(None);
        };
        q.set_limits(Limits::from_config(&self.cfg)?);
        Ok(Some(q))
    }

    /// The queue in SPOOL, created if it does not exist yet.
    pub fn queue_created(&self) -> Result<Queue, CliError> {
        match self.queue(true)? {
            Some(q) => Ok(q),
            // Only root makes a shared queue, and it has just done so.
            None => Err(QueueError::NoSharedQueue {
                path: crate::queue::db_path(&self.spool),
            }
            .into()),
        }
    }
}

/// The SPOOL directory from the configuration.
pub fn spool_dir(cfg: &Config) -> Result<PathBuf, CliError> {
    match cfg.get("SPOOL")? {
        // A set-group-id tool's directory is its caller's choice: its
        // SPOOL must not depend on it.
        Some(s) if crate::sys::privilege::is_privileged() && !s.starts_with('/') => {
            Err(CliError::Failed {
                msg: format!("SPOOL '{s}' is not an absolute path"),
                hint: Some("set SPOOL to an absolute path in /etc/tern/tern_config".into()),
            })
        }
        Some(s) => Ok(PathBuf::from(s)),
        None => Err(CliError::Failed {
            msg: "SPOOL is not set".into(),
            hint: Some("set SPOOL in the configuration or _TERN_SPOOL in the environment".into()),
        }),
    }
}

/// A queue error as the tools report it.
pub fn queue_error(e: QueueError) -> CliError {
    let hint = match &e {
        QueueError::NewerSchema { .. } => {
            Some("this SPOOL was written by a newer tern".to_string())
        }
        QueueError::Corrupt { .. } => Some(
            "restore queue.db from a backup, or move it away to start an empty queue".to_string(),
        ),
        QueueError::Spool { .. } => {
            Some("set SPOOL (or _TERN_SPOOL) to a directory you can write".to_string())
        }
        QueueError::NoSharedQueue { .. } => Some(
            "tern_config_val SHARED_QUEUE SPOOL shows the system configuration's shared queue"
                .to_string(),
        ),
        QueueError::Permission { .. } => Some(
            "check the permissions of SPOOL and queue.db: the tools read and write both"
                .to_string(),
        ),
        _ => None,
    };
    CliError::Failed {
        msg: e.to_string(),
        hint,
    }
}

impl From<QueueError> for CliError {
    fn from(e: QueueError) -> CliError {
        queue_error(e)
    }
}

impl From<ConfigError> for CliError {
    fn from(e: ConfigError) -> CliError {
        CliError::Failed {
            msg: e.to_string(),
            hint: None,
        }
    }
}

/// The crontab line that runs `tool` every minute. cron runs commands with
/// `PATH=/usr/bin:/bin`, where the tools are seldom installed, so the line
/// names `tool` by its path: the directory this tool runs from.
pub fn cron_line(tool: &str) -> String {
    match std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join(tool)))
    {
        Some(p) => format!("* * * * * \"{}\"", p.display()),
        None => format!("* * * * * {tool}"),
    }
}
