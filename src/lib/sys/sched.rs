//! The shadow's scheduling policy: `SCHED_BATCH` for itself, the caller's
//! own for the jobs it starts.
//!
//! A shadow wakes for a few hundred microseconds around each job's start
//! and end. Under `SCHED_OTHER` the kernel lets a task that just woke
//! preempt the one running on its cpu, so on a busy machine the shadow's
//! bookkeeping cut into whatever the user ran meanwhile: in a shell loop
//! of `tern_submit` calls, the submit the loop waits for. Under
//! `SCHED_BATCH` (sched(7): "mildly disfavored in scheduling decisions"
//! on wakeup, the same share of cpu otherwise) it waits for the running
//! task's turn to end instead. The jobs themselves run under the policy
//! the shadow started with, as HTCondor's do, and as much nicer as
//! JOB_RENICE_INCREMENT says ([`child_renices`]).

use std::sync::atomic::{AtomicBool, Ordering};

/// This process's main thread moved itself to `SCHED_BATCH` ([`batch_self`]).
static BATCHED: AtomicBool = AtomicBool::new(false);

/// Moves the calling thread from `SCHED_OTHER` to `SCHED_BATCH` (allowed
/// without privilege; the nice value stays); a thread under any other
/// policy, which someone chose for it, keeps that. The policy is a
/// thread's, and threads and children inherit it: call it from the main
/// thread before any other thread exists (the shadow does, first thing).
/// Says whether it moved.
pub fn batch_self() -> bool {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: sched_getscheduler and sched_setscheduler on this thread,
    // with a parameter that lives on this stack.
    let moved = unsafe {
        libc::sched_getscheduler(0) == libc::SCHED_OTHER
            && libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) == 0
    };
    if moved {
        BATCHED.store(true, Ordering::Relaxed);
    }
    moved
}

/// The policy a child of this process should start under, when it is not
/// this process's own: `SCHED_OTHER` after [`batch_self`]. Never
/// `SCHED_BATCH` or `SCHED_IDLE`, which glibc's
/// `posix_spawnattr_setschedpolicy` refuses (EINVAL).
pub fn for_children() -> Option<libc::c_int> {
    BATCHED.load(Ordering::Relaxed).then_some(libc::SCHED_OTHER)
}

/// In a forked child before its exec: back to the policy the parent
/// started with (see [`for_children`]). Only async-signal-safe calls. A
/// failure is ignored: the policy only changes how soon the job's
/// processes get a cpu, and a job must not fail to start over it.
pub fn restore_in_child() -> std::io::Result<()> {
    if let Some(policy) = for_children() {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: sched_setscheduler on this thread, with a parameter
        // that lives on this stack; async-signal-safe.
        unsafe { libc::sched_setscheduler(0, policy, &param) };
    }
    Ok(())
}

/// Has `cmd`'s child start under the policy this process started with
/// ([`restore_in_child`], before its exec).
pub fn child_restores_policy(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: restore_in_child makes one async-signal-safe call.
    unsafe {
        cmd.pre_exec(restore_in_child);
    }
}

/// Has `cmd`'s child run `inc` nicer than this process (HTCondor's
/// JOB_RENICE_INCREMENT), set before its exec so that nothing it starts
/// runs at the parent's priority; nothing for an `inc` of 0. The nice value
/// is a thread's, inherited by a child: it cannot be given through
/// posix_spawn, hence the fork. A failure is ignored, as for the policy.
pub fn child_renices(cmd: &mut std::process::Command, inc: i32) {
    use std::os::unix::process::CommandExt;
    if inc == 0 {
        return;
    }
    // SAFETY: nice(2) is one async-signal-safe system call.
    unsafe {
        cmd.pre_exec(move || {
            libc::nice(inc);
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calling thread's policy.
    fn policy() -> libc::c_int {
        // SAFETY: sched_getscheduler has no memory effects.
        unsafe { libc::sched_getscheduler(0) }
    }

    /// A process that moves itself to SCHED_BATCH starts its children,
    /// by posix_spawn and by fork, under the policy it had. (Run in a
    /// child of the test, which alone changes its own policy.)
    #[test]
    fn the_shadow_is_batch_and_its_children_are_not() {
        if std::env::var_os("TERN_TEST_SCHED_CHILD").is_some() {
            assert_eq!(policy(), libc::SCHED_OTHER);
            assert!(batch_self());
            assert_eq!(policy(), libc::SCHED_BATCH);
            assert!(!batch_self(), "a second move is no move");
            for spawned in [true, false] {
                let out = tempfile::NamedTempFile::new().unwrap();
                let fd = std::os::fd::AsRawFd::as_raw_fd(out.as_file());
                let script = "chrt -p $$ | sed -n 's/.*policy: //p'".to_string();
                let args = ["-c".to_string(), script];
                let pid = if spawned {
                    crate::sys::spawn(&crate::sys::Spawn {
                        exe: std::path::Path::new("/bin/sh"),
                        args: &args,
                        env: None,
                        extra_env: &[],
                        dir: None,
                        stdio: [None, Some(fd), None],
                        new_session: false,
                        only_stdio: true,
                    })
                    .unwrap()
                } else {
                    let mut cmd = std::process::Command::new("/bin/sh");
                    cmd.args(&args).stdout(out.reopen().unwrap());
                    child_restores_policy(&mut cmd);
                    let child = cmd.spawn().unwrap();
                    let pid = child.id() as i32;
                    std::mem::forget(child);
                    pid
                };
                let mut status = 0;
                // SAFETY: waitpid on our own child.
                unsafe { libc::waitpid(pid, &mut status, 0) };
                let seen = std::fs::read_to_string(out.path()).unwrap();
                assert_eq!(seen.trim(), "SCHED_OTHER", "spawned: {spawned}");
            }
            return;
        }
        if std::process::Command::new("chrt")
            .arg("--version")
            .output()
            .is_err()
        {
            eprintln!("skipped: no chrt");
            return;
        }
        if policy() != libc::SCHED_OTHER {
            eprintln!("skipped: the tests run under another policy");
            return;
        }
        crate::sys::pids::rerun_test_alone(
            "sys::sched::tests::the_shadow_is_batch_and_its_children_are_not",
            "TERN_TEST_SCHED_CHILD",
        );
    }
}
