//! Users holding the shared queue hostage. In shared mode every user runs
//! the setgid tools, and a user may stop their own tool (SIGSTOP cannot be
//! ignored) in the middle of a transaction: it then holds SQLite's write
//! lock until someone intervenes, and every pass waits behind it. The root
//! pass intervenes: a process of another user that has the database open
//! and is stopped is killed, and the kill is reported. That is safe
//! because every change is one SQLite transaction: the killed one rolls
//! back as if it had never begun.

use std::path::Path;

use crate::sys::pids::{self, Holder};

/// Kills every stopped (or traced) process of a user other than root that
/// holds the queue of `spool` open (the database, its WAL or its shared
/// memory), and says what it killed, one line each.
pub fn kill_stopped(spool: &Path) -> Vec<String> {
    let db = super::db_path(spool);
    let mut paths = vec![db.clone()];
    for side in ["-wal", "-shm"] {
        let mut p = db.clone().into_os_string();
        p.push(side);
        paths.push(p.into());
    }
    pids::holders_of(&paths)
        .into_iter()
        .filter(is_hostage_taker)
        .filter(|h| pids::signal_process(h.pid, libc::SIGKILL))
        .map(|h| {
            format!(
                "killed process {} (uid {}): it was stopped while holding the queue {}",
                h.pid,
                h.uid,
                db.display()
            )
        })
        .collect()
}

/// A stopped or traced process that is not root's.
fn is_hostage_taker(h: &Holder) -> bool {
    h.uid != 0 && matches!(h.state, 'T' | 't')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_another_users_stopped_holders_are_taken_for_hostage_takers() {
        let h = |uid, state| Holder { pid: 7, uid, state };
        assert!(is_hostage_taker(&h(1000, 'T')));
        assert!(is_hostage_taker(&h(1000, 't')));
        assert!(!is_hostage_taker(&h(1000, 'S')), "a sleeping tool waits");
        assert!(!is_hostage_taker(&h(0, 'T')), "root's own are root's");
    }
}
