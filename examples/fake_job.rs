//! A job for process tests: does what its arguments say, in order, so one
//! submit file line describes a whole job's behaviour. The integration
//! tests (tests/cli_run.rs) run it as a real job's executable.
//!
//! ```text
//! fake_job echo hi sleep 0.5 exit 3
//! ```
//!
//! Verbs (and how many arguments each takes):
//!
//! - `exit N`: exit with code N now.
//! - `sleep S`: sleep S seconds (fractions allowed).
//! - `spin S`: burn S seconds of cpu time, so the job has user cpu time.
//! - `ignore-term`: ignore SIGTERM from now on.
//! - `pidfile F`: later `fork-sleep`s append their child's pid to F.
//! - `fork-sleep S`: fork a child that sleeps S seconds; it outlives this
//!   process and stays in its process group. Its pid goes to the pid file
//!   (one line), or to stdout without one.
//! - `write F TEXT`: write TEXT and a newline to F (replacing it).
//! - `touch F`: append `run <pid>` to F, so the lines count the runs.
//! - `stamp F WORD`: append `WORD <pid> <unix time in ns>` to F in one
//!   write, so runs of many jobs can share one file of stamps.
//! - `beat F WORD S`: for S seconds, stamp F with WORD every 20 ms: a run
//!   that outlives its supervisor keeps leaving stamps, which shows it.
//! - `lock L F WORD`: take an exclusive flock on L for the rest of the
//!   run; when another process holds it, stamp F with WORD first (and go
//!   on without it). A run that starts while an earlier one of the same
//!   job still lives says so, to the instant: the kernel drops the lock
//!   only when its holder dies.
//! - `echo TEXT` / `stderr TEXT`: TEXT and a newline to stdout / stderr.
//! - `grow MiB`: allocate MiB mebibytes, touch every page, and keep them.
//! - `env NAME`: print `NAME=value`, or `NAME unset`.
//! - `cwd`: print the working directory.
//! - `fds`: print the descriptors open now, as `fds 0 1 2` (each number
//!   probed with fcntl, which opens nothing itself).
//! - `procstate`: print how the job was started, as `leader true sigblk
//!   HEX sigign HEX sched N`: whether it leads its own process group, its
//!   blocked and ignored signal sets (from /proc/self/status) and its
//!   scheduling policy.
//! - `stdin`: copy standard input to standard output.
//! - `args`: print every remaining argument as `[arg]`, one a line, and
//!   stop reading verbs (so the arguments can be anything).
//! - `kill-self SIG`: send itself SIG (a number or a name like TERM).
//! - `record-signal F`: from now on, the first signal that reaches the job
//!   (any it can catch but CHLD, CONT, URG and WINCH, which come without
//!   anyone asking it to stop) is written to F as its number and a
//!   newline, and the job exits 0. Tests see what a stop sends this way.
//! - `if-missing F N`: do the next N verbs only if F does not exist (now);
//!   otherwise skip them. With `touch F` among them, a job can behave one
//!   way on its first run and another way when it runs again.
//!
//! A bad verb or argument prints `fake_job: ...` on stderr and exits 99.

use std::io::Write;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.into_iter();
    let mut pidfile: Option<String> = None;
    // Memory `grow` keeps until the process exits.
    let mut kept: Vec<Vec<u8>> = Vec::new();
    // Locks `lock` holds until the process exits.
    let mut locked: Vec<std::fs::File> = Vec::new();
    while let Some(verb) = it.next() {
        let mut arg = || {
            it.next()
                .unwrap_or_else(|| fail(&format!("{verb} needs an argument")))
        };
        match verb.as_str() {
            "if-missing" => {
                let file = arg();
                let n = number(&arg());
                if std::path::Path::new(&file).exists() {
                    for _ in 0..n {
                        let skipped = it
                            .next()
                            .unwrap_or_else(|| fail("if-missing: too few verbs"));
                        for _ in 0..arity(&skipped) {
                            it.next();
                        }
                    }
                }
            }
            "exit" => std::process::exit(number(&arg()) as i32),
            "sleep" => std::thread::sleep(seconds(&arg())),
            "spin" => spin(seconds(&arg())),
            "ignore-term" => unsafe {
                libc::signal(libc::SIGTERM, libc::SIG_IGN);
            },
            "pidfile" => pidfile = Some(arg()),
            "record-signal" => record_signals(&arg()),
            "fork-sleep" => fork_sleep(seconds(&arg()), pidfile.as_deref()),
            "write" => {
                let file = arg();
                let text = arg();
                std::fs::write(&file, format!("{text}\n"))
                    .unwrap_or_else(|e| fail(&format!("cannot write {file}: {e}")));
            }
            "touch" => append(&arg(), &format!("run {}\n", std::process::id())),
            "stamp" => {
                let (file, word) = (arg(), arg());
                stamp(&file, &word);
            }
            "lock" => {
                let (lock, file, word) = (arg(), arg(), arg());
                locked.push(take_lock(&lock, &file, &word));
            }
            "beat" => {
                let (file, word) = (arg(), arg());
                let end = std::time::Instant::now() + seconds(&arg());
                while std::time::Instant::now() < end {
                    stamp(&file, &word);
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            "echo" => println!("{}", arg()),
            "stderr" => eprintln!("{}", arg()),
            "grow" => kept.push(grow(number(&arg()) as usize)),
            "env" => {
                let name = arg();
                match std::env::var(&name) {
                    Ok(v) => println!("{name}={v}"),
                    Err(_) => println!("{name} unset"),
                }
            }
            "stdin" => {
                std::io::copy(&mut std::io::stdin(), &mut std::io::stdout())
                    .unwrap_or_else(|e| fail(&format!("cannot copy stdin: {e}")));
            }
            "cwd" => println!("{}", std::env::current_dir().unwrap().display()),
            "fds" => println!("fds{}", open_fds()),
            "procstate" => println!("{}", proc_state()),
            "args" => {
                for a in it.by_ref() {
                    println!("[{a}]");
                }
            }
            "kill-self" => {
                let sig = signal(&arg());
                std::io::stdout().flush().ok();
                unsafe {
                    libc::kill(libc::getpid(), sig);
                }
                // A caught or ignored signal lets the job go on.
            }
            other => fail(&format!("unknown verb {other:?}")),
        }
        std::io::stdout().flush().ok();
    }
    drop(kept);
    drop(locked);
}

/// How many arguments `verb` takes (`args` takes the rest, so cannot be
/// skipped).
fn arity(verb: &str) -> usize {
    match verb {
        "ignore-term" | "cwd" | "stdin" | "fds" | "procstate" => 0,
        "write" | "if-missing" | "stamp" => 2,
        "beat" | "lock" => 3,
        "args" => fail("if-missing cannot skip args"),
        "exit" | "sleep" | "spin" | "pidfile" | "fork-sleep" | "touch" | "echo" | "stderr"
        | "grow" | "env" | "kill-self" | "record-signal" => 1,
        other => fail(&format!("unknown verb {other:?}")),
    }
}

/// ` N` for every open descriptor below 4096.
fn open_fds() -> String {
    (0..4096)
        // SAFETY: F_GETFD only reads a descriptor's flags (EBADF if closed).
        .filter(|&fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0)
        .map(|fd| format!(" {fd}"))
        .collect()
}

/// `leader B sigblk HEX sigign HEX sched N` (see `procstate`).
fn proc_state() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map_or(String::from("?"), |v| v.trim().to_string())
    };
    // SAFETY: getpgrp, getpid and sched_getscheduler only read.
    let (leader, sched) = unsafe {
        (
            libc::getpgrp() == libc::getpid(),
            libc::sched_getscheduler(0),
        )
    };
    format!(
        "leader {leader} sigblk {} sigign {} sched {sched}",
        field("SigBlk:"),
        field("SigIgn:")
    )
}

fn fail(msg: &str) -> ! {
    eprintln!("fake_job: {msg}");
    std::process::exit(99)
}

fn number(s: &str) -> i64 {
    s.parse()
        .unwrap_or_else(|_| fail(&format!("not a number: {s:?}")))
}

fn seconds(s: &str) -> Duration {
    match s.parse::<f64>() {
        Ok(x) if x >= 0.0 && x.is_finite() => Duration::from_secs_f64(x),
        _ => fail(&format!("not a number of seconds: {s:?}")),
    }
}

fn signal(s: &str) -> i32 {
    if let Ok(n) = s.parse() {
        return n;
    }
    match s.trim_start_matches("SIG") {
        "HUP" => libc::SIGHUP,
        "INT" => libc::SIGINT,
        "QUIT" => libc::SIGQUIT,
        "ABRT" => libc::SIGABRT,
        "KILL" => libc::SIGKILL,
        "SEGV" => libc::SIGSEGV,
        "TERM" => libc::SIGTERM,
        "USR1" => libc::SIGUSR1,
        "USR2" => libc::SIGUSR2,
        _ => fail(&format!("unknown signal {s:?}")),
    }
}

fn append(file: &str, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .unwrap_or_else(|e| fail(&format!("cannot open {file}: {e}")));
    f.write_all(text.as_bytes())
        .unwrap_or_else(|e| fail(&format!("cannot write {file}: {e}")));
}

fn take_lock(lock: &str, file: &str, word: &str) -> std::fs::File {
    use std::os::fd::AsRawFd;
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(lock)
        .unwrap_or_else(|e| fail(&format!("cannot open {lock}: {e}")));
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        stamp(file, word);
    }
    f
}

fn stamp(file: &str, word: &str) {
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    append(file, &format!("{word} {} {ns}\n", std::process::id()));
}

fn spin(d: Duration) {
    // Counted in this process's cpu time, not wall time, so a loaded
    // machine still gets a job with at least S seconds of user cpu.
    let start = cpu_time();
    let mut x: u64 = 1;
    while cpu_time() - start < d {
        for _ in 0..100_000 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
}

fn cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe {
        libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts);
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn grow(mib: usize) -> Vec<u8> {
    let mut v = vec![0u8; mib << 20];
    // Write every page so it is resident, not just reserved.
    for i in (0..v.len()).step_by(4096) {
        v[i] = 1;
    }
    std::hint::black_box(&mut v);
    v
}

fn fork_sleep(d: Duration, pidfile: Option<&str>) {
    std::io::stdout().flush().ok();
    match unsafe { libc::fork() } {
        -1 => fail("fork failed"),
        0 => {
            // The child: sleep, then leave without running the parent's
            // remaining verbs or its exit handlers.
            std::thread::sleep(d);
            unsafe { libc::_exit(0) }
        }
        pid => match pidfile {
            Some(f) => append(f, &format!("{pid}\n")),
            None => println!("{pid}"),
        },
    }
}

/// Where `record-signal` writes: a descriptor opened before any handler
/// is installed, so the handler only has to write.
static RECORD_FD: AtomicI32 = AtomicI32::new(-1);

fn record_signals(file: &str) {
    use std::os::fd::IntoRawFd;
    let f =
        std::fs::File::create(file).unwrap_or_else(|e| fail(&format!("cannot create {file}: {e}")));
    RECORD_FD.store(f.into_raw_fd(), Ordering::SeqCst);
    let skip = [
        libc::SIGKILL,
        libc::SIGSTOP,
        libc::SIGCHLD,
        libc::SIGCONT,
        libc::SIGURG,
        libc::SIGWINCH,
    ];
    for sig in (1..32).filter(|s| !skip.contains(s)) {
        unsafe {
            libc::signal(sig, record as *const () as libc::sighandler_t);
        }
    }
}

/// The handler: the signal's number in decimal, by hand (nothing that
/// allocates or locks is safe in a handler), then exit.
extern "C" fn record(sig: libc::c_int) {
    let mut buf = [0u8; 12];
    let mut i = buf.len() - 1;
    buf[i] = b'\n';
    let mut n = sig.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let fd = RECORD_FD.load(Ordering::SeqCst);
    unsafe {
        libc::write(fd, buf[i..].as_ptr().cast(), buf.len() - i);
        libc::_exit(0);
    }
}
