//! The shadow's scheduling policy: `SCHED_BATCH` while it lingers, the
//! policy it started with otherwise, and that one for the jobs it starts.
//!
//! A lingering shadow (SHADOW_LINGER_MSEC) wakes every few milliseconds to
//! look for the next job. Under `SCHED_OTHER` the kernel lets a task that
//! just woke preempt the one running on its cpu, so those looks cut into
//! whatever the user ran meanwhile: in a shell loop of `tern_submit`
//! calls, the submit the loop waits for. Under `SCHED_BATCH` (sched(7):
//! "mildly disfavored in scheduling decisions" on wakeup, the same share
//! of cpu otherwise) it waits for the running task's turn to end instead
//! ([`batch`], for the wait). Around its jobs the shadow keeps the normal
//! policy: waking at a job's end, its bookkeeping and the next job's start
//! are the jobs' own critical path, and under `SCHED_BATCH` there too a
//! stream of 2,000 short jobs on two cpus took a tenth longer
//! (bench/README.md). The jobs themselves run under the policy the shadow
//! started with, as HTCondor's do, and as much nicer as
//! JOB_RENICE_INCREMENT says ([`child_renices`]).

use std::sync::atomic::{AtomicBool, Ordering};

/// This process's main thread has moved itself to `SCHED_BATCH` at some
/// time ([`batch`]): its children are then started under `SCHED_OTHER`
/// explicitly ([`for_children`]).
static BATCHED: AtomicBool = AtomicBool::new(false);

/// The calling thread under `SCHED_BATCH` until the guard is dropped
/// ([`batch`]).
#[must_use = "the policy goes back when the guard is dropped"]
pub struct Batched {
    moved: bool,
}

/// Moves the calling thread from `SCHED_OTHER` to `SCHED_BATCH` (allowed
/// without privilege; the nice value stays) until the returned guard is
/// dropped, which moves it back; a thread under any other policy, which
/// someone chose for it, keeps that. The policy is a thread's, and
/// threads and children inherit it: call it from the main thread of a
/// process with no other thread (the shadow's).
pub fn batch() -> Batched {
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
    Batched { moved }
}

#[cfg(test)]
impl Batched {
    /// Whether the guard moved the thread (it was under `SCHED_OTHER`).
    pub fn moved(&self) -> bool {
        self.moved
    }
}

impl Drop for Batched {
    fn drop(&mut self) {
        if !self.moved {
            return;
        }
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: as in batch. A failure leaves the thread under
        // SCHED_BATCH, which changes only how soon it gets a cpu.
        unsafe {
            if libc::sched_getscheduler(0) == libc::SCHED_BATCH {
                libc::sched_setscheduler(0, libc::SCHED_OTHER, &param);
            }
        }
    }
}

/// The policy a child of this process should start under, when it may
/// not be this process's own: `SCHED_OTHER` once [`batch`] has moved it. Never
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
    /// by posix_spawn and by fork, under the policy it had, and goes back
    /// to it when the guard goes; a nested guard moves nothing. (Run in a
    /// child of the test, which alone changes its own policy.)
    #[test]
    fn the_shadow_is_batch_and_its_children_are_not() {
        if std::env::var_os("TERN_TEST_SCHED_CHILD").is_some() {
            assert_eq!(policy(), libc::SCHED_OTHER);
            let guard = batch();
            assert!(guard.moved());
            assert_eq!(policy(), libc::SCHED_BATCH);
            let nested = batch();
            assert!(!nested.moved(), "a second move is no move");
            drop(nested);
            assert_eq!(
                policy(),
                libc::SCHED_BATCH,
                "the nested guard moved it back"
            );
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
            drop(guard);
            assert_eq!(policy(), libc::SCHED_OTHER);
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
