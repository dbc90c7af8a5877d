//! tern_watch_q as a built binary: the frames condor_watch_q 24.0 prints
//! on the same event logs (tests/watch_q, made by make_frames.sh with the
//! real script), the queue followed as jobs change (piped, and on a
//! terminal under tmux), and the -exit conditions with their codes.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::{RunEnv, TIMEOUT, TestEnv, bin, fake_job, wait_until};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/watch_q")
}

/// Times as `YYYY-MM-DD HH:MM:SS`, as make_frames.sh masks them.
fn mask_times(text: &str) -> String {
    let re = regex::Regex::new(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}").unwrap();
    re.replace_all(text, "YYYY-MM-DD HH:MM:SS").into_owned()
}

/// Every case of tests/watch_q/cases.txt gives condor_watch_q's stdout
/// and exit status; for a refused command line, its error line (usage
/// lines are each tool's own).
#[test]
fn frames_match_condor_watch_q_24() {
    let dir = data_dir();
    let env = TestEnv::with_spool();
    let cases = std::fs::read_to_string(dir.join("cases.txt")).unwrap();
    let mut failures = Vec::new();
    for line in cases
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let f: Vec<&str> = line.splitn(4, '\t').collect();
        let (name, cols, lines, args) = (f[0], f[1], f[2], f[3]);
        let out = env
            .command("tern_watch_q")
            .current_dir(&dir)
            .env("COLUMNS", cols)
            .env("LINES", lines)
            .env("HOME", "/nonexistent")
            .args(args.split(' '))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let read = |ext: &str| std::fs::read_to_string(dir.join(format!("{name}.{ext}"))).unwrap();
        let here = dir.to_str().unwrap();
        let stdout = mask_times(&String::from_utf8_lossy(&out.stdout)).replace(here, "$DIR");
        let stderr = String::from_utf8_lossy(&out.stderr).replace(here, "$DIR");
        let code: i32 = read("code").trim().parse().unwrap();
        if out.status.code() != Some(code) {
            failures.push(format!(
                "{name}: exit {:?}, want {code}\n{stderr}",
                out.status.code()
            ));
            continue;
        }
        if name.starts_with("hint") || name.starts_with("bad") {
            let want = read("err");
            let want = want
                .lines()
                .find(|l| l.contains("error:"))
                .unwrap()
                .replace("condor_watch_q", "tern_watch_q");
            if !stderr.lines().any(|l| l == want) {
                failures.push(format!("{name}: stderr {stderr:?} lacks {want:?}"));
            }
            continue;
        }
        if stdout != read("out") {
            failures.push(format!("{name}: stdout\n{stdout}\nwant\n{}", read("out")));
        }
        // The oracle had no schedd to ask; tern's queue is there.
        let want_err: String = read("err")
            .lines()
            .filter(|l| !l.contains("Was not able to query"))
            .map(|l| format!("{l}\n"))
            .collect();
        if stderr != want_err {
            failures.push(format!("{name}: stderr {stderr:?}, want {want_err:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// 24.0 turns the row bars off for `-row-progress` as for
/// `-no-row-progress` (both forms set the toggle false); tern turns them
/// on, as 25.x does.
#[test]
fn row_progress_keeps_the_row_bars_regression_24_0_negate_action() {
    let env = TestEnv::with_spool();
    let run = |extra: &str| {
        let out = env
            .command("tern_watch_q")
            .current_dir(data_dir())
            .env("COLUMNS", "80")
            .env("LINES", "30")
            .args([
                "-files",
                "s9.log",
                "-exit",
                "any,active",
                "-exit",
                "none,active",
            ])
            .arg(extra)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let with = run("-row-progress");
    assert!(
        with.lines()
            .nth(1)
            .unwrap()
            .ends_with("[###############=====--]"),
        "{with}"
    );
    let without = run("-no-row-progress");
    assert!(!without.lines().nth(1).unwrap().contains('['), "{without}");
}

/// Not a terminal: no colour even when asked for, and no refresh bytes.
#[test]
fn color_needs_a_terminal() {
    let env = TestEnv::with_spool();
    let out = env
        .command("tern_watch_q")
        .current_dir(data_dir())
        .args([
            "-files",
            "s9.log",
            "-color",
            "-exit",
            "any,active",
            "-exit",
            "none,active",
        ])
        .output()
        .unwrap();
    assert!(
        !out.stdout.contains(&0x1b),
        "{:?}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn option_errors() {
    let env = TestEnv::with_spool();
    let r = env.run("tern_watch_q", ["-clusters", "abc"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("'abc' is not a cluster id"), "{r:?}");
    let r = env.run("tern_watch_q", ["-clusters", "3", "-larger-than", "2"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("-clusters and -larger-than"), "{r:?}");
    let r = env.run("tern_watch_q", ["-larger-than", "x"]);
    assert_eq!(r.code, 2, "{r:?}");
    let r = env.run("tern_watch_q", ["-groupby", "owner"]);
    assert_eq!(r.code, 2, "{r:?}");
    let r = env.run("tern_watch_q", ["-summary-type", "pie"]);
    assert_eq!(r.code, 2, "{r:?}");
    let r = env.run("tern_watch_q", ["-frobnicate"]);
    assert_eq!(r.code, 2, "{r:?}");
    // Unique prefixes, one dash: -no-t is -no-table.
    let r = env.run(
        "tern_watch_q",
        [
            "-no-t", "-no-p", "-no-s", "-no-u", "-files", "none.log", "-exit", "all,done",
        ],
    );
    assert_eq!(r.code, 0, "{r:?}");
    // Every section off: an empty frame, as upstream prints it.
    assert_eq!(
        r.stdout,
        "\n...\nExiting with code 0 because of condition \"all done\" at 2023-11-14 22:13:20\n"
    );
    let r = env.run("tern_watch_q", ["-help"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("-exit"), "{r:?}");
}

#[test]
fn nothing_to_watch_exits_0() {
    let env = TestEnv::with_spool();
    let r = env.run("tern_watch_q", ["-users", "nobody"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{r:?}");
    assert_eq!(r.stderr, "WARNING: No jobs found, exiting...\n");
}

/// A running tern_watch_q whose stdout is collected as it comes.
struct Watcher {
    child: Child,
    out: Arc<Mutex<String>>,
    /// The thread reading stdout, until its end.
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Watcher {
    fn start(mut cmd: Command) -> Watcher {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let out = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stdout.take().unwrap();
        let sink = out.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Watcher {
            child,
            out,
            reader: Some(reader),
        }
    }

    fn text(&self) -> String {
        self.out.lock().unwrap().clone()
    }

    /// The last frame printed: frames end with `...`, and each has a
    /// summary line.
    fn last_frame(&self) -> String {
        let t = self.text();
        let frames: Vec<&str> = t.split("...\n").collect();
        frames
            .iter()
            .rev()
            .find(|f| f.contains("Total: "))
            .unwrap_or(&"")
            .to_string()
    }

    #[track_caller]
    fn wait_frame(&self, what: &str, cond: impl Fn(&str) -> bool) {
        if !wait_until(TIMEOUT, || cond(&self.last_frame())) {
            panic!("no frame with {what}; output:\n{}", self.text());
        }
    }

    /// Waits for the process to end; its exit code.
    fn wait_exit(&mut self) -> Option<i32> {
        let mut code = None;
        wait_until(TIMEOUT, || match self.child.try_wait() {
            Ok(Some(s)) => {
                code = s.code();
                true
            }
            _ => false,
        });
        // What it printed last may still be in the pipe: read to the end
        // before anyone looks at the output (the last frame went missing
        // once under a loaded CI run).
        if code.is_some()
            && let Some(r) = self.reader.take()
        {
            let _ = r.join();
        }
        code
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A cluster submitted later shows when it writes to a watched log, under
/// `ID: N` (24.0 knows batch names only from its first query); one with
/// another log does not. A watched cluster's jobs that left the queue
/// before the start count too (upstream reads its log from the start).
/// Nothing runs: the states are the queue's and the history's.
#[test]
fn later_clusters_in_a_watched_log_appear() {
    let env = TestEnv::with_spool();
    let sub = |log: &str, batch: &str| {
        env.write(
            "j.sub",
            &format!("executable = /bin/true\nlog = {log}\nbatch_name = {batch}\nqueue 2\n"),
        );
        let r = env.run("tern_submit", ["j.sub"]);
        assert_eq!(r.code, 0, "{r:?}");
    };
    let rm = |what: &str| {
        let r = env.run("tern_rm", [what]);
        assert_eq!(r.code, 0, "{r:?}");
    };
    sub("a.log", "first");
    rm("1.0");
    let mut cmd = env.command("tern_watch_q");
    cmd.env("COLUMNS", "100").env("LINES", "40");
    let w = Watcher::start(cmd);
    w.wait_frame("the first cluster", |f| {
        f.contains("\nfirst ") && f.contains("Total: 2 jobs; 1 removed, 1 idle")
    });
    sub("a.log", "second");
    sub("b.log", "third");
    w.wait_frame("the second cluster", |f| f.contains("\nID: 2 "));
    let f = w.last_frame();
    assert!(!f.contains("third") && !f.contains("ID: 3"), "{f}");
    assert!(f.contains("Total: 4 jobs; 1 removed, 3 idle"), "{f}");
    // Removed jobs leave the queue; their state comes from the history.
    rm("2");
    w.wait_frame("the removal", |f| {
        f.contains("Total: 4 jobs; 3 removed, 1 idle")
    });
}

/// A submit file of `n` jobs that sleep on their first run and exit 0 when
/// run again (after a hold and release).
fn second_run_finishes(n: usize) -> String {
    format!(
        "executable = {}\narguments = \"if-missing ran$(Process) 2 touch ran$(Process) sleep 600 exit 0\"\n\
         log = jobs.log\nbatch_name = sweep\nqueue {n}\n",
        fake_job().display()
    )
}

/// Piped: jobs run, are held, released and finish; `-exit any,held,5`
/// would end it at the hold, so the watcher with `all,done,7` sees it
/// through and exits 7; the other exits 5 at the hold.
#[test]
fn follows_jobs_through_hold_release_and_done_and_exits_with_the_code() {
    let env = RunEnv::new();
    let cluster = env.submit("jobs.sub", &second_run_finishes(2));
    let c = cluster.to_string();
    env.wait_for("both jobs running", TIMEOUT, || {
        (0..2).all(|p| env.status(&format!("{c}.{p}")) == Some(2))
    });
    let watcher = |exit: &str| {
        let mut cmd = env.command("tern_watch_q");
        cmd.env("COLUMNS", "100")
            .env("LINES", "40")
            .args(["-clusters", &c, "-exit", exit]);
        Watcher::start(cmd)
    };
    let mut done = watcher("all,done,7");
    let mut held = watcher("any,held,5");
    done.wait_frame("two running", |f| f.contains("Total: 2 jobs; 2 running"));
    env.run_ok("tern_hold", [&c]);
    assert_eq!(held.wait_exit(), Some(5), "{}", held.text());
    assert!(
        held.text()
            .contains("Exiting with code 5 because of condition \"any held\" at ")
    );
    done.wait_frame("two held", |f| f.contains("Total: 2 jobs; 2 held"));
    let f = done.last_frame();
    assert!(
        f.starts_with(
            "BATCH   HELD  IDLE  RUN  DONE  TOTAL  JOB_IDS\nsweep     2     -    -     -      2 "
        ),
        "{f}"
    );
    env.run_ok("tern_release", [&c]);
    env.negotiate();
    assert_eq!(done.wait_exit(), Some(7), "{}", done.text());
    let f = done.last_frame();
    assert!(f.contains("Total: 2 jobs; 2 completed"), "{f}");
    assert!(
        done.text()
            .contains("Exiting with code 7 because of condition \"all done\" at ")
    );
}

/// A tmux pane of a fixed size with a command running in it, on a tmux
/// server of its own (`-S`, its socket in the test's directory), so no one
/// else's sessions are touched.
struct Pane {
    name: String,
    /// The server's socket, in the test's directory.
    socket: String,
}

impl Pane {
    fn start(dir: &Path, name: &str, command: &str) -> Option<Pane> {
        let socket = dir.join("tmux.socket").to_str()?.to_string();
        let ok = Command::new("tmux")
            .args([
                "-S",
                &socket,
                "new-session",
                "-d",
                "-s",
                name,
                "-x",
                "100",
                "-y",
                "30",
                command,
            ])
            .env_remove("TMUX")
            .status()
            .ok()?
            .success();
        ok.then(|| Pane {
            name: name.to_string(),
            socket,
        })
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["-S", &self.socket, "capture-pane", "-p", "-t", &self.name])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen, lines right-trimmed, time masked, trailing blank lines
    /// dropped.
    fn masked(&self) -> String {
        let s = mask_times(&self.screen());
        let lines: Vec<&str> = s.lines().map(str::trim_end).collect();
        let n = lines
            .iter()
            .rposition(|l| !l.is_empty())
            .map_or(0, |i| i + 1);
        lines[..n].join("\n")
    }

    #[track_caller]
    fn wait_screen(&self, want: &str) {
        if !wait_until(TIMEOUT, || self.masked() == want) {
            panic!("screen\n{}\nnever became\n{want}", self.masked());
        }
    }

    fn keys(&self, keys: &str) {
        Command::new("tmux")
            .args(["-S", &self.socket, "send-keys", "-t", &self.name, keys])
            .status()
            .unwrap();
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        // The server is this pane's own (-S): ending it ends the pane.
        let _ = Command::new("tmux")
            .args(["-S", &self.socket, "kill-server"])
            .status();
    }
}

/// On a terminal: each frame is drawn over the last, so the screen shows
/// only the current one, whatever the previous was; ^C exits 0.
#[test]
fn terminal_screens_under_tmux() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("skipped: no tmux here");
        return;
    }
    let env = RunEnv::new();
    let cluster = env.submit("jobs.sub", &second_run_finishes(3));
    let c = cluster.to_string();
    env.wait_for("three jobs running", TIMEOUT, || {
        (0..3).all(|p| env.status(&format!("{c}.{p}")) == Some(2))
    });
    let vars: Vec<String> = env
        .vars()
        .iter()
        .map(|(n, v)| format!("{n}='{v}'"))
        .collect();
    let name = format!("tern-watch-q-{}", std::process::id());
    let command = format!(
        "cd '{}' && env -i TERM=screen {} '{}' -clusters {c}; echo \"EXIT=$?\"; sleep 60",
        env.path("").display(),
        vars.join(" "),
        bin("tern_watch_q")
    );
    let pane = Pane::start(&env.path(""), &name, &command).expect("tmux starts a session");
    let bar = |c: char, n: usize| c.to_string().repeat(n);
    let running = format!(
        "BATCH   IDLE  RUN  DONE  TOTAL  JOB_IDS\n\
         sweep     -    3     -      3   {c}.0 ... {c}.2 [{}]\n\n[{}]\n\n\
         Total: 3 jobs; 3 running\n\nUpdated at YYYY-MM-DD HH:MM:SS\nInput ^C to exit",
        bar('=', 100 - 44 - 2),
        bar('=', 77),
    );
    pane.wait_screen(&running);
    env.run_ok("tern_hold", [&c]);
    let held = format!(
        "BATCH   HELD  IDLE  RUN  DONE  TOTAL  JOB_IDS\n\
         sweep     3     -    -     -      3   {c}.0 ... {c}.2 [{}]\n\n[{}]\n\n\
         Total: 3 jobs; 3 held\n\nUpdated at YYYY-MM-DD HH:MM:SS\nInput ^C to exit",
        bar('!', 100 - 50 - 2),
        bar('!', 77),
    );
    pane.wait_screen(&held);
    env.run_ok("tern_release", [&c]);
    env.negotiate();
    let done = format!(
        "BATCH   IDLE  RUN  DONE  TOTAL  JOB_IDS\n\
         sweep     -    -     3      3          [{}]\n\n[{}]\n\n\
         Total: 3 jobs; 3 completed\n\nUpdated at YYYY-MM-DD HH:MM:SS\nInput ^C to exit",
        bar('#', 100 - 39 - 2),
        bar('#', 77),
    );
    pane.wait_screen(&done);
    pane.keys("C-c");
    let exited = wait_until(Duration::from_secs(10), || pane.screen().contains("EXIT=0"));
    assert!(exited, "no EXIT=0 after ^C:\n{}", pane.screen());
}

/// An event of `code` for `job` (`C.P`) at minute `min`, with `body`.
fn event(code: u32, job: (i64, i64), min: u32, body: &str) -> String {
    format!(
        "{code:03} ({:03}.{:03}.000) 2024-05-01 10:{min:02}:00 {body}\n...\n",
        job.0, job.1
    )
}

const TERMINATED: &str = "Job terminated.\n\t(1) Normal termination (return value 0)\n\
    \t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Remote Usage\n\
    \t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n\
    \t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Remote Usage\n\
    \t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Local Usage\n\
    \t0  -  Run Bytes Sent By Job\n\t0  -  Run Bytes Received By Job\n\
    \t0  -  Total Bytes Sent By Job\n\t0  -  Total Bytes Received By Job";

fn append(path: &Path, text: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// -files follows a log as it grows: an event written in two pieces is
/// read once whole, an event that does not parse is reported on stderr
/// (as upstream's `<time> | ERROR: Failed to parse event ...`) and skipped,
/// and the events after it count.
#[test]
fn files_are_followed_as_they_grow() {
    let env = TestEnv::with_spool();
    let log = env.write(
        "live.log",
        &[
            event(0, (1, 0), 0, "Job submitted from host: <127.0.0.1:0>"),
            event(0, (1, 1), 0, "Job submitted from host: <127.0.0.1:0>"),
        ]
        .concat(),
    );
    let errors = env.path("stderr");
    let mut cmd = env.command("tern_watch_q");
    cmd.args(["-files", "live.log", "-exit", "all,done,4"]);
    cmd.stderr(std::fs::File::create(&errors).unwrap());
    let mut w = Watcher::start(cmd);
    w.wait_frame("two idle", |f| f.contains("Total: 2 jobs; 2 idle"));
    let done = event(5, (1, 0), 1, TERMINATED);
    let (head, tail) = done.split_at(done.len() / 2);
    append(&log, head);
    // Half an event is not read yet: the frames drawn after it was written
    // (one every 2 s at the latest) still say two idle; the rest completes it.
    let frames = || w.text().matches("...\n").count();
    let before = frames();
    assert!(
        wait_until(TIMEOUT, || frames() >= before + 2),
        "no new frame; output:\n{}",
        w.text()
    );
    assert!(
        w.last_frame().contains("Total: 2 jobs; 2 idle"),
        "{}",
        w.text()
    );
    let mut rest = tail.to_string();
    rest.push_str("junk that is no event\n...\n");
    append(&log, &rest);
    w.wait_frame("one done", |f| {
        f.contains("Total: 2 jobs; 1 completed, 1 idle")
    });
    append(&log, &event(5, (1, 1), 2, TERMINATED));
    assert_eq!(w.wait_exit(), Some(4), "{}", w.text());
    assert!(
        w.last_frame().contains("Total: 2 jobs; 2 completed"),
        "{}",
        w.text()
    );
    let stderr = std::fs::read_to_string(&errors).unwrap();
    assert!(
        stderr.contains(" | ERROR: Failed to parse event from ")
            && stderr.contains("live.log. Reason: line "),
        "{stderr}"
    );
}

/// `-clusters` narrows what `-users` finds (upstream filters the events of
/// every log by it); `-batches` alone watches only the clusters it finds.
#[test]
fn clusters_and_batches_narrow_the_query() {
    let env = TestEnv::with_spool();
    for batch in ["one", "two", "three"] {
        env.write(
            "j.sub",
            &format!("executable = /bin/true\nbatch_name = {batch}\nqueue 1\n"),
        );
        assert_eq!(env.run("tern_submit", ["j.sub"]).code, 0);
    }
    let user = crate::common::real_user();
    let shown = |args: &[&str]| {
        let r = env.run(
            "tern_watch_q",
            [args, &["-no-progress", "-exit", "any,idle"]].concat(),
        );
        assert_eq!(r.code, 0, "{r:?}");
        let rows: Vec<String> = r
            .stdout
            .lines()
            .skip(1)
            .take_while(|l| !l.is_empty())
            .map(|l| l.split("  ").next().unwrap().to_string())
            .collect();
        rows
    };
    assert_eq!(shown(&["-users", &user]), ["one", "two", "three"]);
    assert_eq!(shown(&["-users", &user, "-clusters", "2"]), ["two"]);
    assert_eq!(shown(&["-batches", "three", "one"]), ["one", "three"]);
    assert_eq!(shown(&["-larger-than", "2"]), ["two", "three"]);
}
