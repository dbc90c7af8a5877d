//! Letting a round's system come to rest once the killing stops: what the
//! workload left suspended is continued, cron jobs that would wait for the
//! next minute are removed (an ordinary removal: they are then in the
//! history), and passes run on both queues, with router passes, as cron
//! would run them, until nothing is running, no process of the round is
//! left, no work waits for the fetch hook, and no job of either queue
//! changes status between two rounds of passes. The hooks that
//! keep processes coming by design are taken out of the configuration on
//! the way: the startd cron hook at once (tern_cron stays while a hook is
//! due within a minute, and this one is due every two seconds), the
//! fetch hook once its work is all fetched (an idle slot fetches every
//! second), and back again should a fetch still under way when it went
//! give its item back (REPLY_FETCH reject puts it in `work/` again).

use std::time::{Duration, Instant};

use tern::queue::{Queue, Selection};

use super::killer::processes;
use super::world::World;

/// Statuses of a job that something is still doing something about:
/// running, removed but not yet gone, transferring output, suspended.
const BUSY: [i64; 4] = [2, 3, 6, 7];

fn run(world: &World, tool: &str, args: &[&str], remote: bool) {
    let mut c = world.env.command(tool);
    c.args(args);
    if remote {
        c.env("_TERN_SPOOL", world.remote_spool());
    }
    // A failure shows in the state the loop waits for.
    let _ = c.output();
}

/// A queue's jobs as (id, status, whether in the history), and its busy
/// jobs (`c.p status`). The log is no measure of rest: every pass
/// records, for each idle job that matches nothing (a deferred job past
/// its window matches nothing ever, as in HTCondor), when it last failed
/// to match.
fn state(spool: &std::path::Path) -> (Vec<(String, i64, bool)>, Vec<String>) {
    let Some(q) = Queue::open(spool, false).ok().flatten() else {
        return (Vec::new(), Vec::new());
    };
    let sel = Selection::default();
    let read = q
        .select(&sel)
        .and_then(|queued| Ok((queued, q.history(&sel, None)?)));
    let (queued, history) = match read {
        Ok(r) => r,
        Err(e) => return (Vec::new(), vec![format!("cannot read the queue: {e}")]),
    };
    let busy = queued
        .iter()
        .filter(|(r, _)| BUSY.contains(&r.status))
        .map(|(r, _)| format!("{} {}", r.id, r.status))
        .collect();
    let mut jobs: Vec<(String, i64, bool)> = queued
        .iter()
        .map(|(r, _)| (r.id.to_string(), r.status, false))
        .chain(
            history
                .iter()
                .map(|(r, _)| (r.id.to_string(), r.status, true)),
        )
        .collect();
    jobs.sort();
    (jobs, busy)
}

type Fingerprint = (Vec<(String, i64, bool)>, Vec<(String, i64, bool)>);

/// Why the round is not at rest yet, or None when it is.
fn unrest(world: &World, last: &mut Option<Fingerprint>) -> Option<String> {
    let (local, local_busy) = state(&world.spool());
    let (remote, remote_busy) = state(&world.remote_spool());
    let procs = processes(&world.dir);
    let work = std::fs::read_dir(world.path("work")).map_or(0, |d| d.count());
    let now = Some((local, remote));
    let moved = *last != now;
    *last = now;
    if local_busy.is_empty() && remote_busy.is_empty() && procs.is_empty() && work == 0 && !moved {
        return None;
    }
    let procs: Vec<String> = procs
        .iter()
        .map(|p| format!("{} {} {}", p.pid, p.state, p.comm))
        .collect();
    Some(format!(
        "busy here: {local_busy:?}\nbusy there: {remote_busy:?}\nprocesses: {procs:?}\n\
         work items waiting: {work}\njobs moved: {moved}"
    ))
}

/// Brings the round to rest within `limit`: how it went, or what was
/// still going on when it did not.
pub fn settle(world: &World, limit: Duration) -> Result<String, String> {
    let began = Instant::now();
    world.unconfigure("STARTD_CRON");
    for remote in [false, true] {
        run(world, "tern_continue", &["-all"], remote);
    }
    run(
        world,
        "tern_rm",
        &["-constraint", "FaultKind == \"cron\" && JobStatus =!= 4"],
        false,
    );
    let mut last = None;
    let mut fetched = None;
    let mut hook = None;
    let mut rounds = 0;
    loop {
        rounds += 1;
        let waiting = std::fs::read_dir(world.path("work")).map_or(0, |d| d.count());
        match (hook.take(), waiting) {
            (None, 0) => {
                hook = Some(world.unconfigure("STARTD_JOB_HOOK_KEYWORD"));
                fetched = Some(began.elapsed());
            }
            (Some(lines), 0) => hook = Some(lines),
            (Some(lines), _) => world.reconfigure(&lines),
            (None, _) => {}
        }
        run(world, "tern_negotiate", &["-wait"], false);
        run(world, "tern_job_router", &[], false);
        run(world, "tern_negotiate", &["-wait"], true);
        std::thread::sleep(Duration::from_millis(300));
        match unrest(world, &mut last) {
            None => {
                return Ok(format!(
                    "at rest after {:.1?} ({rounds} rounds of passes, the work fetched after {:.1?})",
                    began.elapsed(),
                    fetched.unwrap_or_default()
                ));
            }
            Some(why) if began.elapsed() > limit => {
                return Err(format!("not at rest after {limit:?}:\n{why}"));
            }
            Some(_) => {}
        }
    }
}
