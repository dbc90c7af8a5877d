//! The pass's side of the daemon ClassAd hooks: it records
//! `tern_negotiate -reconfig` for them and starts `tern_cron` beside
//! itself when a cron job is due (see [`crate::hooks::cron`]), as it starts
//! gridmanagers ([`super::gridjobs`]).

use std::path::Path;

use super::NegotiatorError;
use crate::config::Config;
use crate::queue::{Queue, QueueError};

/// The daemon ClassAd hooks (see [`crate::hooks::cron`]): with `-reconfig`
/// the reconfiguration is recorded for them, and when a cron job is due and
/// no `tern_cron` runs, one is started beside the pass. Problems with their
/// knobs are report lines; the hooks never fail the pass.
pub fn start_cron(
    cfg: &Config,
    spool: &Path,
    q: &mut Queue,
    now: i64,
    reconfig: bool,
    lines: &mut Vec<String>,
) -> Result<(), NegotiatorError> {
    use crate::hooks::cron;
    if reconfig {
        // A count, not a time: two in one second are two.
        q.write(now, |w| {
            w.conn().execute(
                "INSERT INTO meta (key, value) VALUES ('cron_reconfig', 1) \
                 ON CONFLICT (key) DO UPDATE SET value = value + 1",
                [],
            )?;
            Ok(())
        })?;
    }
    // A knob that does not expand is the runner's to report (wanted()
    // below says it too): it must not fail the pass.
    let listed = |k: &str| !matches!(cfg.get(k), Ok(None));
    if !listed("STARTD_CRON_JOBLIST")
        && !listed("SCHEDD_CRON_JOBLIST")
        && !q
            .conn()
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM cron_jobs) OR EXISTS (SELECT 1 FROM cron_ads)",
                [],
                |r| r.get::<_, bool>(0),
            )
            .map_err(QueueError::from)?
    {
        return Ok(());
    }
    let lock = cron::lock_path(spool);
    if let Some(d) = lock.parent() {
        std::fs::create_dir_all(d).map_err(super::io(format!("cannot create {}", d.display())))?;
    }
    let held = crate::sys::fs::spool_lock_file(&lock)
        .map_err(super::io(format!("cannot open {}", lock.display())))?
        .try_lock()
        .is_err();
    if held {
        return Ok(());
    }
    let (wanted, warnings) = match cron::wanted(cfg, q.conn(), now) {
        Ok(w) => w,
        Err(e) => (false, vec![format!("cron hooks not run: {e}")]),
    };
    lines.extend(warnings.into_iter().map(|w| format!("warning: {w}")));
    if wanted {
        let err = crate::sys::fs::spool_log_file(&cron::log_path(spool)).ok();
        if let Err(e) = super::launch::spawn_detached(
            &super::launch::sibling(cfg, None, "tern_cron"),
            &[],
            err.as_ref(),
        ) {
            lines.push(format!("warning: cannot start tern_cron: {e}"));
        }
    }
    Ok(())
}
