//! The runtime side of shared mode, seen from inside what root starts for
//! a user: grid commands, router and shadow hooks and the job itself run
//! as the job's owner, with the owner's groups, umask and nothing of
//! root's environment or descriptors. Root-only (test users); as anyone
//! else each test says why and passes without checking, but for the
//! personal-mode counterpart of the descriptor test.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use std::process::Command;

use crate::common::users::{
    Group, held_job, root_with_user, run_as, shared_env, shared_pass, submit_as, wait_for,
    wait_gone,
};
use crate::common::{RunEnv, bin, fake_job};

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// tests/grid/fake_slurm.sh as sbatch, squeue, scontrol, sacct and
/// scancel first on PATH, with a state directory anyone can write (the
/// fake runs as the job's owner).
fn with_fake_slurm(env: RunEnv) -> (RunEnv, PathBuf) {
    let bin = env.path("fakebin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/grid/fake_slurm.sh");
    for n in ["sbatch", "squeue", "scontrol", "sacct", "scancel"] {
        std::os::unix::fs::symlink(&script, bin.join(n)).unwrap();
    }
    let state = env.path("slurm");
    std::fs::create_dir(&state).unwrap();
    chmod(&state, 0o777);
    let env = env
        .knob("GRIDMANAGER_JOB_PROBE_INTERVAL", "1")
        .var_env("PATH", &format!("{}:/usr/bin:/bin", bin.display()))
        .var_env("SLURM_FAKE_STATE", state.to_str().unwrap());
    (env, state)
}

/// In shared mode every grid job failed ("no OwnerUid": the gridmanager
/// acted for a bare owner name). Its Slurm commands now run as the job's
/// owner, from the job's OwnerUid: sbatch's files are the owner's.
#[test]
fn in_shared_mode_a_grid_jobs_slurm_commands_run_as_its_owner() {
    let Some(user) = root_with_user("terngridown") else {
        return;
    };
    let (env, state) = with_fake_slurm(shared_env());
    submit_as(
        &env,
        &user.name,
        "universe = grid\ngrid_resource = batch slurm\nexecutable = /bin/true\nqueue\n",
    );
    shared_pass(&env, &[]);
    wait_for("the grid job to reach Slurm", || {
        env.attr("1.0", "GridJobStatus").as_deref() == Some("IDLE")
    });
    let script = state.join("scripts/1");
    assert_eq!(std::fs::metadata(&script).unwrap().uid(), user.uid());
    // Let it finish, so its gridmanager has nothing left and exits.
    let job = state.join("jobs/1");
    let line = std::fs::read_to_string(&job).unwrap();
    let name = line.trim_end().rsplit('|').next().unwrap().to_string();
    std::fs::write(&job, format!("COMPLETED|0:0|1000|1001|{name}\n")).unwrap();
    wait_for("the grid job to complete", || {
        env.attr("1.0", "JobStatus").as_deref() == Some("4")
    });
}

/// A hook program in a directory only root may change (hooks in a
/// directory anyone can write are refused), writing `record` (shell, with
/// `$OUT` a directory anyone can write) before `body`.
fn hook_program(env: &RunEnv, name: &str, record: &str, body: &str) -> PathBuf {
    let dir = env.path("hooks");
    let out = env.path("seen");
    for (d, mode) in [(&dir, 0o755), (&out, 0o777)] {
        std::fs::create_dir_all(d).unwrap();
        chmod(d, mode);
    }
    let p = dir.join(name);
    std::fs::write(
        &p,
        format!("#!/bin/sh\nOUT={}\n{record}\n{body}\n", out.display()),
    )
    .unwrap();
    chmod(&p, 0o755);
    p
}

/// What a hook recorded with `{ id -u; ...; } > $OUT/<name>`.
fn recorded(env: &RunEnv, name: &str) -> Vec<String> {
    std::fs::read_to_string(env.path("seen").join(name))
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

/// A shared environment whose router has one route and a translate hook
/// that runs `record`, then hands the job back as the copy (the part after
/// the route).
fn with_translate_hook(record: &str) -> RunEnv {
    let env = shared_env();
    let translate = hook_program(&env, "translate", record, "sed '1,/^------$/d'");
    let cfg = env.write(
        "router.config",
        &format!(
            "JOB_ROUTER_HOOK_KEYWORD = TEST\nJOB_ROUTER_ROUTE_NAMES = A\n\
             JOB_ROUTER_ROUTE_A @=end\n  UNIVERSE vanilla\n  REQUIREMENTS true\n@end\n\
             TEST_HOOK_TRANSLATE_JOB = {}\n",
            translate.display()
        ),
    );
    chmod(&cfg, 0o644);
    env.var_env("TERN_CONFIG", cfg.to_str().unwrap())
}

/// A root router refused every hook of another user's job ("cannot yet
/// act as ... (no shared mode)"); in shared mode it runs the hook as the
/// job's owner, as the shadow runs its hooks.
/// One `tern_job_router -verbose` round in shared mode, which must
/// succeed; what it printed.
fn shared_router(cmd: &mut std::process::Command) -> String {
    let out = cmd
        .env("_TERN_SHARED_QUEUE", "true")
        .arg("-verbose")
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    said
}

#[test]
fn in_shared_mode_a_router_hook_runs_as_the_jobs_owner() {
    let Some(user) = root_with_user("ternroutehook") else {
        return;
    };
    // It hands the job back as the copy (the part after the route).
    let env = with_translate_hook("{ id -u; umask; } > \"$OUT/translate\"");
    submit_as(&env, &user.name, "executable = /bin/true\nqueue\n");
    let said = shared_router(&mut env.command("tern_job_router"));
    let mask: u32 = env.attr("1.0", "OwnerUmask").unwrap().parse().unwrap();
    assert_eq!(
        recorded(&env, "translate"),
        [user.uid().to_string(), format!("{mask:04o}")],
        "the hook ran as the job's owner, with the submitter's umask: {said}"
    );
    assert_eq!(
        env.attr("1.0", "Managed").as_deref(),
        Some("External"),
        "{said}"
    );
}

/// A root router's hook ran with root's whole environment and in root's
/// working directory; it now gets only PATH and the owner's HOME, USER and
/// LOGNAME, and runs in the job's Iwd (as the owner), else in `/`.
#[test]
fn a_root_routers_hook_gets_none_of_roots_environment_or_directory() {
    let Some(user) = root_with_user("ternroutenv") else {
        return;
    };
    let env = with_translate_hook("{ env | sort; echo \"cwd=$(pwd)\"; } > \"$OUT/translate\"");
    // A job in a directory its owner may enter.
    let iwd = env.path("iwd");
    std::fs::create_dir(&iwd).unwrap();
    chmod(&iwd, 0o777);
    submit_as(
        &env,
        &user.name,
        &format!(
            "executable = /bin/true\ninitialdir = {}\nqueue\n",
            iwd.display()
        ),
    );
    let rootonly = env.path("rootonly");
    std::fs::create_dir(&rootonly).unwrap();
    chmod(&rootonly, 0o700);
    let said = shared_router(
        env.command("tern_job_router")
            .current_dir(&rootonly)
            .env("ROOTS_SECRET", "only-root-may-see-this")
            .env("HOME", "/root"),
    );
    let home = std::fs::read_to_string("/etc/passwd")
        .unwrap()
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f[0] == user.name).then(|| f[5].to_string())
        })
        .unwrap();
    let seen = recorded(&env, "translate");
    let vars: Vec<&str> = seen
        .iter()
        .map(String::as_str)
        .filter(|l| {
            !l.starts_with("cwd=")
                && !l.starts_with("PWD=")
                && !l.starts_with("SHLVL=")
                && !l.starts_with("_=")
                && !l.starts_with("OLDPWD=")
        })
        .collect();
    assert_eq!(
        vars,
        [
            format!("HOME={home}"),
            format!("LOGNAME={}", user.name),
            "PATH=/usr/bin:/bin".to_string(),
            format!("USER={}", user.name),
        ],
        "only these (the shell adds PWD, SHLVL and _): {said}"
    );
    assert!(
        seen.contains(&format!("cwd={}", iwd.display())),
        "the hook ran in the job's Iwd: {seen:?}"
    );
    // A second job whose Iwd its owner may no longer enter: its hook runs
    // in /.
    submit_as(
        &env,
        &user.name,
        &format!(
            "executable = /bin/true\ninitialdir = {}\nqueue\n",
            iwd.display()
        ),
    );
    chmod(&iwd, 0o700);
    let said = shared_router(env.command("tern_job_router").current_dir(&rootonly));
    assert!(
        recorded(&env, "translate").contains(&"cwd=/".to_string()),
        "{said}"
    );
    // Job 1.0's copy is 2.0: the second source is 3.0.
    assert_eq!(env.attr("3.0", "Managed").as_deref(), Some("External"));
}

/// Runs a pass (`shared`: in shared mode) that inherits descriptor 7, as
/// a careless parent (cron, a shell, a harness) leaves one to the pass,
/// which hands on what it inherits to its shadows. Only the pass's child
/// gets it: a descriptor left open in this process would reach every
/// test's children.
fn pass_with_a_leaked_descriptor(env: &RunEnv, shared: bool) {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let leak = std::fs::File::open("/dev/null").unwrap();
    let mut c = env.command("tern_negotiate");
    c.arg("-wait");
    if shared {
        c.env("_TERN_SHARED_QUEUE", "true");
    }
    // SAFETY: dup2 is async-signal-safe; the copy at 7 is not
    // close-on-exec, so the pass inherits it.
    unsafe {
        c.pre_exec(move || {
            if libc::dup2(leak.as_raw_fd(), 7) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "{out:?}");
}

const FDS_JOB: &str = "arguments = fds\noutput = fds.out\nqueue\n";

/// The job's child closed nothing it inherited that was not
/// close-on-exec: it now keeps 0, 1 and 2 only (spec section 6, step 4).
#[test]
fn a_job_starts_with_only_its_standard_descriptors() {
    let env = RunEnv::new().knob("NEGOTIATE_ON_SUBMIT", "false");
    env.submit(
        "fds.sub",
        &format!("executable = {}\n{FDS_JOB}", fake_job().display()),
    );
    pass_with_a_leaked_descriptor(&env, false);
    env.wait_history("1.0", crate::common::TIMEOUT);
    let fds = std::fs::read_to_string(env.path("fds.out")).unwrap();
    assert_eq!(fds, "fds 0 1 2\n");
}

/// A job with a nice increment is started by fork and exec rather than
/// posix_spawn: it starts the same way (descriptors, process group, signal
/// mask and dispositions, scheduling policy), only nicer.
#[test]
fn a_reniced_job_starts_as_a_spawned_one_does() {
    let start = |renice: &str| {
        let env = RunEnv::new()
            .knob("NEGOTIATE_ON_SUBMIT", "false")
            .knob("JOB_RENICE_INCREMENT", renice);
        env.submit(
            "state.sub",
            &format!(
                "executable = {}\narguments = fds procstate\noutput = state.out\nqueue\n",
                fake_job().display()
            ),
        );
        pass_with_a_leaked_descriptor(&env, false);
        env.wait_history("1.0", crate::common::TIMEOUT);
        std::fs::read_to_string(env.path("state.out")).unwrap()
    };
    let spawned = start("0");
    assert!(
        spawned.starts_with("fds 0 1 2\nleader true sigblk "),
        "{spawned}"
    );
    assert_eq!(start("1"), spawned);
}

#[test]
fn a_job_run_as_its_owner_starts_with_only_its_standard_descriptors() {
    let Some(user) = root_with_user("ternjobfds") else {
        return;
    };
    let env = shared_env();
    submit_as(
        &env,
        &user.name,
        &format!("executable = {}\n{FDS_JOB}", fake_job().display()),
    );
    pass_with_a_leaked_descriptor(&env, true);
    wait_gone(&env, "1.0");
    let fds = std::fs::read_to_string(env.path("fds.out")).unwrap();
    assert_eq!(fds, "fds 0 1 2\n");
}

/// ON_EXIT_OR_EVICT was silently dropped in shared mode (root would have
/// copied into a SPOOL the owner cannot enter). Root now makes the job's
/// SPOOL copy for the owner, who fills it and reads it back through a
/// descriptor: the evicted run's file reaches the next run, the copy is
/// the owner's (0700) though SPOOL is closed to them, and it goes, as its
/// owner, once the job has left the queue.
#[test]
fn in_shared_mode_on_exit_or_evict_keeps_a_vacated_runs_files_as_the_owners() {
    let Some(user) = root_with_user("ternjobspool") else {
        return;
    };
    let env = shared_env();
    // Sandboxes outside SPOOL, as the installer puts them.
    let execute = env.path("execute");
    std::fs::create_dir(&execute).unwrap();
    let env = env.knob("EXECUTE", execute.to_str().unwrap());
    let marker = env.path("first-run");
    let script = env.write(
        "job.sh",
        &format!(
            "#!/bin/sh\nif [ -f state.txt ]; then echo \"resumed from $(cat state.txt)\"; exit 0; fi\n\
             echo first > state.txt\ntouch {}\nsleep 300\n",
            marker.display()
        ),
    );
    chmod(&script, 0o755);
    submit_as(
        &env,
        &user.name,
        "executable = job.sh\nshould_transfer_files = YES\n\
         when_to_transfer_output = ON_EXIT_OR_EVICT\noutput = e.out\nqueue\n",
    );
    // SPOOL closed to the owner, as shared mode's 2770 root:tern is.
    chmod(&env.spool(), 0o700);
    shared_pass(&env, &[]);
    wait_for("the first run", || marker.exists());
    // Root, a queue super user, vacates it.
    let out = env
        .command("tern_vacate_job")
        .env("_TERN_QUEUE_SUPER_USERS", "root")
        .arg("1.0")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    wait_for("the second run to end", || {
        shared_pass(&env, &[]);
        env.history_af("1.0", &["JobStatus"]).is_some()
    });
    assert_eq!(
        std::fs::read_to_string(env.path("e.out")).unwrap(),
        "resumed from first\n"
    );
    let copy = env.spool().join("1/0/cluster1.proc0.subproc0");
    let meta = std::fs::metadata(&copy).unwrap();
    assert_eq!((meta.uid(), meta.mode() & 0o777), (user.uid(), 0o700));
    assert_eq!(
        std::fs::metadata(copy.join("state.txt")).unwrap().uid(),
        user.uid()
    );
    // A pass that evaluates every job clears what left the queue.
    shared_pass(&env, &[("_TERN_PERIODIC_EXPR_INTERVAL", "0")]);
    assert!(!copy.exists(), "the copy is left");
}

/// `id -G` as a set of numbers.
fn group_set(line: &str) -> std::collections::BTreeSet<u32> {
    line.split_whitespace()
        .map(|g| g.parse().unwrap())
        .collect()
}

/// A starter hook (PREPARE_JOB) of a job run as its owner runs as the
/// owner too: uid, groups and umask checked from inside the hook.
#[test]
fn a_shadow_hook_runs_as_the_jobs_owner() {
    let Some(user) = root_with_user("ternjobhook") else {
        return;
    };
    let env = shared_env();
    let prepare = hook_program(
        &env,
        "prepare",
        "{ id -u; id -G; umask; } > \"$OUT/prepare\"",
        "cat >/dev/null",
    );
    let env = env.knob("TEST_HOOK_PREPARE_JOB", prepare.to_str().unwrap());
    submit_as(
        &env,
        &user.name,
        "executable = /bin/true\n+HookKeyword = \"TEST\"\nqueue\n",
    );
    shared_pass(&env, &[]);
    wait_gone(&env, "1.0");
    let seen = recorded(&env, "prepare");
    let mask: u32 = env.attr("1.0", "OwnerUmask").unwrap().parse().unwrap();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert_eq!(seen[0], user.uid().to_string(), "{seen:?}");
    assert_eq!(group_set(&seen[1]), group_set(&user.gid().to_string()));
    assert_eq!(seen[2], format!("{mask:04o}"));
}

/// The job's groups are exactly its owner's, less root's group and
/// SPOOL's (shared mode's `tern`), however the owner is listed in them.
#[test]
fn a_jobs_groups_are_exactly_its_owners_but_root_and_spools() {
    if !crate::common::users::is_root() {
        eprintln!("not root: the identity switch is not checked");
        return;
    }
    let extra = Group::create("terntgextra");
    let spools = Group::create("terntgspool");
    let Some(user) = root_with_user("ternjobgroups") else {
        return;
    };
    for g in [extra.name.as_str(), spools.name.as_str(), "root"] {
        user.join(g);
    }
    let env = shared_env();
    std::os::unix::fs::chown(env.spool(), None, Some(spools.gid())).unwrap();
    submit_as(
        &env,
        &user.name,
        "executable = /usr/bin/id\narguments = -G\noutput = groups.out\nqueue\n",
    );
    shared_pass(&env, &[]);
    wait_gone(&env, "1.0");
    let out = std::fs::read_to_string(env.path("groups.out")).unwrap();
    let want: std::collections::BTreeSet<u32> = [user.gid(), extra.gid()].into();
    assert_eq!(group_set(&out), want, "{out}");
}

/// A job run as its owner (forked, its ids switched) runs as much nicer
/// than its shadow as JOB_RENICE_INCREMENT says.
#[test]
fn a_job_run_as_its_owner_is_reniced_by_job_renice_increment() {
    let Some(user) = root_with_user("ternjobnice") else {
        return;
    };
    let env = shared_env();
    submit_as(
        &env,
        &user.name,
        "executable = /usr/bin/nice\noutput = nice.out\nqueue\n",
    );
    shared_pass(&env, &[("_TERN_JOB_RENICE_INCREMENT", "7")]);
    wait_gone(&env, "1.0");
    // SAFETY: getpriority has no memory effects.
    let base = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
    let out = std::fs::read_to_string(env.path("nice.out")).unwrap();
    assert_eq!(out.trim(), (base + 7).min(19).to_string());
}

/// The job's environment is built from nothing: its own Environment and
/// the starter's variables (tern_shadow(1); HTCondor's
/// Starter::GetJobEnv), never what the pass or the shadow had.
#[test]
fn a_jobs_environment_holds_nothing_of_the_pass_or_the_shadow() {
    let Some(user) = root_with_user("ternjobenv") else {
        return;
    };
    let env = shared_env();
    submit_as(
        &env,
        &user.name,
        "executable = /usr/bin/env\nenvironment = \"JOBVAR=mine\"\noutput = env.out\nqueue\n",
    );
    let canaries = [
        ("TERN_CANARY", "from-the-pass"),
        ("HOME", "/canary-home"),
        ("LANG", "canary-lang"),
        ("_TERN_STARTER_UPDATE_INTERVAL", "301"),
    ];
    shared_pass(&env, &canaries);
    wait_gone(&env, "1.0");
    let out = std::fs::read_to_string(env.path("env.out")).unwrap();
    // What the starter sets, besides the job's own and _CONDOR_*.
    let starter = [
        "TMPDIR",
        "TEMP",
        "TMP",
        "APPTAINER_CACHEDIR",
        "SINGULARITY_CACHEDIR",
        "BATCH_SYSTEM",
    ];
    let threads = tern::config::knobs::KNOBS
        .iter()
        .find(|k| k.name == "STARTER_NUM_THREADS_ENV_VARS")
        .unwrap()
        .default;
    for line in out.lines() {
        let (name, value) = line.split_once('=').unwrap();
        let allowed = name == "JOBVAR"
            || name.starts_with("_CONDOR_")
            || starter.contains(&name)
            || threads.split_whitespace().any(|t| t == name);
        assert!(allowed, "{name} is not the job's: {out}");
        assert!(
            !canaries.iter().any(|(_, v)| value.contains(v)),
            "{line} comes from the pass: {out}"
        );
    }
    assert!(out.lines().any(|l| l == "JOBVAR=mine"), "{out}");
}

/// A `condor` grid job whose other queue's SPOOL is `remote`.
fn remote_grid_job(remote: &Path, rest: &str) -> String {
    format!(
        "universe = grid\ngrid_resource = condor {} local\n{rest}queue\n",
        remote.display()
    )
}

/// A root gridmanager opened (and made) the other queue a user's grid job
/// names as root: a user could have root make a queue in another user's
/// private directory or in a directory only root may write. It now does
/// so as the job's owner, whose rights refuse both: the job is held with
/// the reason, and nothing appears there.
#[test]
fn in_shared_mode_a_grid_job_cannot_have_root_make_its_remote_queue() {
    let Some(user) = root_with_user("terngridfar") else {
        return;
    };
    let Some(other) = root_with_user("terngridother") else {
        return;
    };
    let env = shared_env().knob("GRIDMANAGER_JOB_PROBE_INTERVAL", "1");
    let roots = env.path("roots");
    let theirs = env.path("theirs");
    for d in [&roots, &theirs] {
        std::fs::create_dir(d).unwrap();
    }
    chmod(&roots, 0o755);
    std::os::unix::fs::chown(&theirs, Some(other.uid()), Some(other.gid())).unwrap();
    chmod(&theirs, 0o700);
    for dir in [&roots, &theirs] {
        submit_as(
            &env,
            &user.name,
            &remote_grid_job(&dir.join("spool"), "executable = /bin/true\n"),
        );
    }
    shared_pass(&env, &[]);
    for (job, dir) in [("1.0", &roots), ("2.0", &theirs)] {
        let (_, reason) = held_job(&env, job);
        let schedd = dir.join("spool");
        assert!(
            reason.starts_with(&format!(
                "Failed to connect to schedd {}: ",
                schedd.display()
            )) && reason.contains("Permission denied"),
            "{job}: {reason}"
        );
        let left: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        assert!(left.is_empty(), "{job}: made {left:?}");
    }
}

/// Every file under `dir` (itself included), with its owner.
fn owners_under(dir: &Path) -> Vec<(PathBuf, u32)> {
    let mut out = vec![(
        dir.to_path_buf(),
        std::fs::symlink_metadata(dir).unwrap().uid(),
    )];
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if e.file_type().unwrap().is_dir() {
            out.extend(owners_under(&p));
        } else {
            out.push((p, e.metadata().unwrap().uid()));
        }
    }
    out
}

/// The other queue of a user's grid job, in a directory of the user's, is
/// made, written and woken as the user: its files are the user's, never
/// root's, and removing the job removes the remote copy, as the user.
#[test]
fn in_shared_mode_a_grid_jobs_remote_queue_is_its_owners() {
    let Some(user) = root_with_user("terngridmine") else {
        return;
    };
    let env = shared_env().knob("GRIDMANAGER_JOB_PROBE_INTERVAL", "1");
    let home = env.path("home");
    std::fs::create_dir(&home).unwrap();
    std::os::unix::fs::chown(&home, Some(user.uid()), Some(user.gid())).unwrap();
    chmod(&home, 0o700);
    let remote = home.join("spool");
    submit_as(
        &env,
        &user.name,
        &remote_grid_job(&remote, "executable = /bin/sleep\narguments = 600\n"),
    );
    shared_pass(&env, &[]);
    wait_for("the job to reach the other queue", || {
        matches!(
            env.attr("1.0", "GridJobStatus").as_deref(),
            Some("IDLE" | "RUNNING")
        )
    });
    assert_eq!(
        env.attr("1.0", "GridJobId").unwrap(),
        format!("condor {} local 1.0", remote.display())
    );
    let mine = |when: &str| {
        let files = owners_under(&home);
        assert!(
            files.iter().any(|(p, _)| p.ends_with("queue.db")),
            "{when}: {files:?}"
        );
        let roots: Vec<_> = files.iter().filter(|(_, u)| *u != user.uid()).collect();
        assert!(roots.is_empty(), "{when}: not the user's: {roots:?}");
    };
    mine("submitted");
    let out = run_as(&env, &user.name, "tern_rm", &["1.0"]);
    assert!(out.status.success(), "{out:?}");
    wait_gone(&env, "1.0");
    // The remote copy went too, read as the user.
    let history = Command::new("/usr/sbin/runuser")
        .args(["-u", &user.name, "--", bin("tern_history")])
        .args(["1.0", "-af", "JobStatus", "Owner"])
        .env_clear()
        .envs(env.vars().iter().map(|(k, v)| (k, v)))
        .env("_TERN_SPOOL", &remote)
        .current_dir("/")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&history.stdout),
        format!("3 {}\n", user.name),
        "{history:?}"
    );
    mine("removed");
}
