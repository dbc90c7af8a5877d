//! The queue's errors, and how SQLite's are told apart: damage (the file
//! is not a queue, a page is bad), rights (cannot open, read-only), room (a
//! full file system) and plain input/output trouble. Only damage suggests
//! moving the queue away.

use std::path::{Path, PathBuf};

use super::JobId;

#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error("cannot create the spool directory {path}: {msg}")]
    Spool { path: PathBuf, msg: String },
    #[error("cannot open the queue database {path} ({msg})")]
    Permission { path: PathBuf, msg: String },
    #[error("the queue database {path} is damaged ({msg}); nothing was changed")]
    Corrupt { path: PathBuf, msg: String },
    #[error(
        "the queue database has schema version {found}, newer than this tern understands ({supported}); use a newer tern"
    )]
    NewerSchema { found: i64, supported: i64 },
    /// Shared mode without its database: only root's installer makes it.
    #[error("no shared queue at {}: install tern's package, or run this tool once as root to create it", .path.display())]
    NoSharedQueue { path: PathBuf },
    #[error("the queue database is busy (another tool holds it for more than 30 s)")]
    Busy,
    /// SQLITE_FULL: the file system holding SPOOL has no room.
    #[error(
        "no space left for the queue database {path}: nothing was changed; free space on its file system and try again"
    )]
    Full { path: PathBuf },
    /// An input/output error other than a full file system: not damage,
    /// so nothing suggests moving the queue away.
    #[error("cannot read or write the queue database {path} ({msg}); nothing was changed")]
    Io { path: PathBuf, msg: String },
    /// A write to a queue this process may only read (a read-only mount).
    #[error("the queue database {path} cannot be written ({msg}): nothing was changed")]
    ReadOnly { path: PathBuf, msg: String },
    #[error("queue database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// An error of a layer above the queue (the machine's slots, ...) met
    /// inside a transaction, kept whole so that its caller can tell it.
    #[error(transparent)]
    Above(Box<dyn std::error::Error + Send + Sync>),
    #[error("{0}")]
    Invalid(String),
    /// A user's write touched a job the user may not change; the
    /// transaction was rolled back.
    #[error("permission denied: {user} may not change job {job}, which belongs to {owner}")]
    NotPermitted {
        job: JobId,
        user: String,
        owner: String,
    },
    /// A user asked to submit jobs owned by someone else; nothing was
    /// written.
    #[error("permission denied: {user} may not submit jobs owned by {owner}")]
    SubmitNotPermitted { user: String, owner: String },
    /// A submitted job set an attribute the queue decides (Owner, User,
    /// ClusterId, ProcId) to another value, or asked for a job owned by
    /// root in shared mode; nothing was written. `reason` is the schedd's
    /// sentence, `value` the attribute's value as written.
    #[error("{reason}")]
    SubmitRefused {
        job: JobId,
        attr: String,
        value: String,
        reason: String,
    },
    /// A user's write set an attribute nobody may change once the job is
    /// queued (immutable) or that only the queue sets (secure); rolled back.
    #[error("Attempt to edit {class} attribute {attr} in job {job}")]
    AttrNotPermitted {
        job: JobId,
        attr: String,
        class: &'static str,
    },
    /// A user who is no super user set a PROTECTED_JOB_ATTRS attribute;
    /// rolled back.
    #[error(
        "Unauthorized setting of protected attribute {attr} denied for user {user} in job {job}"
    )]
    ProtectedAttr {
        job: JobId,
        attr: String,
        user: String,
    },
    /// A submission over MAX_JOBS_PER_SUBMISSION or MAX_JOBS_PER_OWNER;
    /// nothing was written.
    #[error("{0}")]
    TooManyJobs(String),
}

pub(super) fn corrupt(path: &Path, e: rusqlite::Error) -> QueueError {
    use rusqlite::ErrorCode::*;
    match e {
        rusqlite::Error::SqliteFailure(f, _) if f.code == DatabaseBusy => QueueError::Busy,
        rusqlite::Error::SqliteFailure(f, _) if matches!(f.code, DiskFull | SystemIoFailure) => {
            io_error(path, e)
        }
        // Permissions are not damage: say so, and do not suggest moving a
        // healthy queue away.
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(
                f.code,
                CannotOpen | ReadOnly | PermissionDenied | AuthorizationForStatementDenied
            ) =>
        {
            QueueError::Permission {
                path: path.to_path_buf(),
                msg: e.to_string(),
            }
        }
        other => QueueError::Corrupt {
            path: path.to_path_buf(),
            msg: other.to_string(),
        },
    }
}

/// A write that met a damaged page (SQLite reports it on the read) is
/// the damage error, which names the file; the transaction rolled back.
/// So are a full file system and a read-only one.
pub(super) fn damage(path: &Path, e: QueueError) -> QueueError {
    match e {
        QueueError::Sqlite(e @ rusqlite::Error::SqliteFailure(f, _))
            if matches!(
                f.code,
                rusqlite::ErrorCode::DiskFull | rusqlite::ErrorCode::SystemIoFailure
            ) =>
        {
            io_error(path, e)
        }
        QueueError::Sqlite(rusqlite::Error::SqliteFailure(f, msg))
            if f.code == rusqlite::ErrorCode::ReadOnly =>
        {
            QueueError::ReadOnly {
                path: path.to_path_buf(),
                msg: rusqlite::Error::SqliteFailure(f, msg).to_string(),
            }
        }
        QueueError::Sqlite(rusqlite::Error::SqliteFailure(f, msg))
            if matches!(
                f.code,
                rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase
            ) =>
        {
            corrupt(path, rusqlite::Error::SqliteFailure(f, msg))
        }
        other => other,
    }
}

/// SQLITE_FULL, or an I/O error met where the file system holding the
/// database has no room left (the first reader after a writer rebuilds the
/// shared-memory index, which can need a page more): the full error. Any
/// other I/O error is itself, never damage.
fn io_error(path: &Path, e: rusqlite::Error) -> QueueError {
    let full = match &e {
        rusqlite::Error::SqliteFailure(f, _) => f.code == rusqlite::ErrorCode::DiskFull,
        _ => false,
    };
    let dir = path.parent().unwrap_or(path);
    if full || crate::sys::fs::free_kib(dir).is_ok_and(|k| k == 0) {
        return QueueError::Full {
            path: path.to_path_buf(),
        };
    }
    QueueError::Io {
        path: path.to_path_buf(),
        msg: e.to_string(),
    }
}

pub(super) fn busy(e: rusqlite::Error) -> QueueError {
    match e {
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::DatabaseBusy => {
            QueueError::Busy
        }
        other => QueueError::Sqlite(other),
    }
}
