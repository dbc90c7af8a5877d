//! `tern_submit`: its options, run as a user runs them. What the submit
//! language turns into is checked against HTCondor by tests/submit_diff/;
//! malformed files by tests/bad_input/.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

use crate::common::{NOW, Run, TestEnv, bin, real_user};

/// `tern_submit` in `env`'s directory with an empty environment: the pinned
/// clock, PATH, HOME (the test directory), no configuration file unless
/// `vars` names one, and `vars`.
fn submit_cmd(env: &TestEnv, vars: &[(&str, &str)], args: &[&str]) -> Command {
    let dir = env.path("");
    let mut c = Command::new(bin("tern_submit"));
    c.env_clear()
        .current_dir(&dir)
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &dir)
        .env("TERN_NOW", NOW.to_string())
        .env("TERN_CONFIG", "/dev/null");
    for (n, v) in vars {
        c.env(n, v);
    }
    c.args(args);
    c
}

fn submit(env: &TestEnv, args: &[&str]) -> Run {
    submit_with(env, &[], args)
}

fn submit_with(env: &TestEnv, vars: &[(&str, &str)], args: &[&str]) -> Run {
    Run::from(
        submit_cmd(env, vars, args)
            .output()
            .expect("running tern_submit"),
    )
}

/// Runs with `stdin` as standard input.
fn submit_stdin(env: &TestEnv, args: &[&str], stdin: &str) -> Run {
    let mut child = submit_cmd(env, &[], args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting tern_submit");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    Run::from(child.wait_with_output().expect("running tern_submit"))
}

type Ad = BTreeMap<String, String>;

/// The ads of a successful `-dry-run` (old syntax, one `Name = value` line
/// per attribute, a blank line after each ad), with nothing on stderr.
fn dry_run_ads(r: &Run) -> Vec<Ad> {
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    old_ads(&r.stdout)
}

fn old_ads(text: &str) -> Vec<Ad> {
    if text.is_empty() {
        return Vec::new();
    }
    assert!(
        text.ends_with("\n\n"),
        "each ad ends with a blank line: {text:?}"
    );
    text.split_terminator("\n\n")
        .map(|block| {
            block
                .lines()
                .map(|l| {
                    let (n, v) = l
                        .split_once(" = ")
                        .unwrap_or_else(|| panic!("not an attribute line: {l:?}"));
                    (n.to_string(), v.to_string())
                })
                .collect()
        })
        .collect()
}

fn attr<'a>(ad: &'a Ad, name: &str) -> &'a str {
    ad.get(name)
        .unwrap_or_else(|| panic!("no {name} in {ad:?}"))
        .as_str()
}

#[test]
fn dry_run_prints_one_ad_per_job_sorted_by_name() {
    let env = TestEnv::new();
    env.write(
        "job.sub",
        "executable = /bin/echo\narguments = job $(Process)\nqueue 2\n",
    );
    let r = submit(&env, &["-dry-run", "job.sub"]);
    let ads = dry_run_ads(&r);
    assert_eq!(ads.len(), 2);
    for (i, ad) in ads.iter().enumerate() {
        assert_eq!(attr(ad, "ClusterId"), "1");
        assert_eq!(attr(ad, "ProcId"), i.to_string());
        assert_eq!(attr(ad, "Args"), format!("\"job {i}\""));
        assert_eq!(attr(ad, "Cmd"), "\"/bin/echo\"");
        assert_eq!(attr(ad, "JobStatus"), "1");
        assert_eq!(attr(ad, "MyType"), "\"Job\"");
    }
    // Sorted case-insensitively, as HTCondor's tools print long ads.
    for block in r.stdout.split_terminator("\n\n") {
        let names: Vec<String> = block
            .lines()
            .map(|l| l.split(" = ").next().unwrap().to_ascii_lowercase())
            .collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
    }
}

/// condor_submit's form, `-dry-run OUTPUT FILE` (or FILE first): the ads
/// go to OUTPUT, `-` being standard output, and standard output says how
/// many jobs the dry run made (or, with -terse, their ids); nothing is
/// queued. `-dry-run FILE` alone stays tern's: FILE is the description.
#[test]
fn dry_run_with_an_output_file_writes_the_ads_there_as_condor_submit() {
    let env = TestEnv::new();
    env.write(
        "job.sub",
        "executable = /bin/echo\narguments = job $(Process)\nqueue 2\n",
    );
    let alone = submit(&env, &["-dry-run", "job.sub"]);
    assert_eq!(alone.code, 0, "{alone:?}");
    let r = submit(&env, &["-dry-run", "ads.txt", "job.sub"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, "2 job(s) dry-run to cluster 1.\n", "")
    );
    assert_eq!(
        std::fs::read_to_string(env.path("ads.txt")).unwrap(),
        alone.stdout
    );
    let r = submit(&env, &["job.sub", "-dry-run", "late.txt", "-terse"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "1.0 - 1.1\n"), "{r:?}");
    assert_eq!(
        std::fs::read_to_string(env.path("late.txt")).unwrap(),
        alone.stdout
    );
    let r = submit(&env, &["-dry-run", "-", "job.sub"]);
    assert_eq!(
        (r.code, r.stdout.clone()),
        (
            0,
            format!("{}2 job(s) dry-run to cluster 1.\n", alone.stdout)
        )
    );
    // An output that cannot be written is an error naming it.
    let r = submit(&env, &["-dry-run", "no/such/dir/ads.txt", "job.sub"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .contains("cannot write the -dry-run output file no/such/dir/ads.txt"),
        "{r:?}"
    );
    // -dry-run:json takes its output the same way.
    let json = submit(&env, &["-dry-run:json", "job.sub"]);
    let r = submit(&env, &["-dry-run:json", "ads.json", "job.sub"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "2 job(s) dry-run to cluster 1.\n"),
        "{r:?}"
    );
    assert_eq!(
        std::fs::read_to_string(env.path("ads.json")).unwrap(),
        json.stdout
    );
    // The description is never its output, by any name.
    let r = submit(&env, &["-dry-run", "./job.sub", "job.sub"]);
    r.fails(
        1,
        "tern_submit: error: the -dry-run output file ./job.sub is the submit description \
         job.sub: nothing was written\n",
    );
    assert!(
        std::fs::read_to_string(env.path("job.sub"))
            .unwrap()
            .starts_with("executable")
    );
    // Nothing was queued by any of them.
    let q = env.run("tern_q", ["-af", "ClusterId"]);
    assert_eq!((q.code, q.stdout.as_str()), (0, ""), "{q:?}");
}

#[test]
fn dry_run_prints_operators_in_old_syntax() {
    let env = TestEnv::new();
    env.write("job.sub", "executable = /bin/echo\nqueue\n");
    let ads = dry_run_ads(&submit(&env, &["-dry-run", "job.sub"]));
    assert_eq!(
        attr(&ads[0], "RequestMemory"),
        "ifthenelse(MemoryUsage =!= undefined,MemoryUsage,(ImageSize + 1023) / 1024)"
    );
}

#[test]
fn dry_run_json_prints_the_same_ads_as_a_json_array() {
    let env = TestEnv::new();
    env.write(
        "job.sub",
        "executable = /bin/echo\narguments = $(Process)\n+Weight = 2.5\nqueue 3\n",
    );
    let old = dry_run_ads(&submit(&env, &["-dry-run", "job.sub"]));
    let r = submit(&env, &["-dry-run:json", "job.sub"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    let json: serde_json::Value = serde_json::from_str(&r.stdout).expect("valid JSON");
    let ads = json.as_array().expect("a JSON array");
    assert_eq!(ads.len(), 3);
    for (i, ad) in ads.iter().enumerate() {
        let ad = ad.as_object().expect("a JSON object per job");
        let names: Vec<&String> = ad.keys().collect();
        let old_names: Vec<&String> = old[i].keys().collect();
        let mut a: Vec<String> = names.iter().map(|n| n.to_ascii_lowercase()).collect();
        let mut b: Vec<String> = old_names.iter().map(|n| n.to_ascii_lowercase()).collect();
        a.sort();
        b.sort();
        assert_eq!(a, b, "the same attributes in both forms");
        assert_eq!(ad["ProcId"], serde_json::json!(i));
        assert_eq!(ad["Args"], serde_json::json!(i.to_string()));
        assert_eq!(ad["Weight"], serde_json::json!(2.5));
        assert_eq!(ad["QDate"], serde_json::json!(NOW));
        // Expressions are HTCondor's "\/Expr(...)\/" strings.
        assert_eq!(ad["RequestDisk"], serde_json::json!("/Expr(DiskUsage)/"));
    }
    assert!(
        r.stdout.contains(r#""RequestDisk": "\/Expr(DiskUsage)\/""#),
        "{}",
        r.stdout
    );
}

#[test]
fn the_long_spelling_of_dry_run_json_works_too() {
    let env = TestEnv::new();
    env.write("job.sub", "executable = /bin/echo\nqueue\n");
    let r = submit(&env, &["--dry-run:json", "job.sub"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.starts_with('['), "{r:?}");
}

#[test]
fn a_dash_reads_the_description_from_stdin() {
    let env = TestEnv::new();
    let r = submit_stdin(
        &env,
        &["-dry-run", "-"],
        "executable = /bin/echo\narguments = from stdin\nqueue\n",
    );
    let ads = dry_run_ads(&r);
    assert_eq!(ads.len(), 1);
    assert_eq!(attr(&ads[0], "Args"), "\"from stdin\"");
    let iwd = env.path("").canonicalize().unwrap();
    assert_eq!(attr(&ads[0], "Iwd"), format!("\"{}\"", iwd.display()));
}

#[test]
fn no_file_reads_stdin_as_condor_submit_does() {
    let env = TestEnv::new();
    let r = submit_stdin(&env, &["-dry-run"], "executable = /bin/echo\nqueue 2\n");
    assert_eq!(dry_run_ads(&r).len(), 2);
}

#[test]
fn errors_in_stdin_are_placed_in_stdin() {
    let env = TestEnv::new();
    let r = submit_stdin(
        &env,
        &["-dry-run", "-"],
        "executable = /bin/echo\nfoo bar\nqueue\n",
    );
    r.fails(
        1,
        "tern_submit: error: <stdin>:2: Syntax Error, missing : or = in 'foo bar'\n",
    );
}

#[test]
fn iwd_is_the_current_directory_not_the_files() {
    let env = TestEnv::new();
    std::fs::create_dir(env.path("sub")).unwrap();
    env.write("sub/job.sub", "executable = /bin/echo\nqueue\n");
    let ads = dry_run_ads(&submit(&env, &["-dry-run", "sub/job.sub"]));
    let iwd = env.path("").canonicalize().unwrap();
    assert_eq!(attr(&ads[0], "Iwd"), format!("\"{}\"", iwd.display()));
}

#[test]
fn batch_name_sets_every_jobs_batch_name_over_the_files() {
    let env = TestEnv::new();
    env.write(
        "job.sub",
        "executable = /bin/echo\nbatch_name = from_file\nqueue 2\n",
    );
    let ads = dry_run_ads(&submit(
        &env,
        &["-dry-run", "-batch-name", "nightly", "job.sub"],
    ));
    assert_eq!(ads.len(), 2);
    for ad in &ads {
        assert_eq!(attr(ad, "JobBatchName"), "\"nightly\"");
    }
}

#[test]
fn append_adds_lines_before_the_queue_statement() {
    let env = TestEnv::new();
    env.write(
        "job.sub",
        "executable = /bin/echo\narguments = from file\nqueue 2\n",
    );
    let ads = dry_run_ads(&submit(
        &env,
        &[
            "-dry-run",
            "-append",
            "arguments = appended $(Process)",
            "-a",
            "+Extra = 1",
            "job.sub",
        ],
    ));
    assert_eq!(ads.len(), 2);
    for (i, ad) in ads.iter().enumerate() {
        assert_eq!(attr(ad, "Args"), format!("\"appended {i}\""));
        assert_eq!(attr(ad, "Extra"), "1");
    }
}

#[test]
fn queue_supplies_the_queue_statement() {
    let env = TestEnv::new();
    env.write("job.sub", "executable = /bin/echo\narguments = $(x)\n");
    let ads = dry_run_ads(&submit(
        &env,
        &["-dry-run", "-queue", "x in (a b c)", "job.sub"],
    ));
    let args: Vec<&str> = ads.iter().map(|a| attr(a, "Args")).collect();
    assert_eq!(args, ["\"a\"", "\"b\"", "\"c\""]);
    let ads = dry_run_ads(&submit(&env, &["-dry-run", "-queue", "2", "job.sub"]));
    assert_eq!(ads.len(), 2);
}

#[test]
fn queue_with_a_queue_statement_in_the_file_is_a_usage_error() {
    let env = TestEnv::new();
    env.write("job.sub", "executable = /bin/echo\nqueue\n");
    submit(&env, &["-dry-run", "-queue", "2", "job.sub"]).fails(
        2,
        "tern_submit: error: -queue was given, but job.sub has its own queue statement\n\
         hint: remove the queue statement from the file or drop -queue\n",
    );
}

/// An error in a line the command line added names the argument, as
/// condor_submit's "with -queue argument" does, and the file's own lines
/// keep their numbers in the file with -append lines before them.
#[test]
fn errors_in_command_line_lines_name_the_argument() {
    let env = TestEnv::new();
    env.write("job.sub", "executable = /bin/echo\n");
    submit(&env, &["-dry-run", "-queue", "x in (a b", "job.sub"]).fails(
        1,
        "tern_submit: error: -queue argument: a '(' item list is not closed by ')'\n",
    );
    env.write("args.sub", "executable = /bin/echo\nqueue\n");
    submit(
        &env,
        &[
            "-dry-run",
            "-a",
            "x = 1",
            "-a",
            "arguments = $(",
            "args.sub",
        ],
    )
    .fails(
        1,
        "tern_submit: error: -append argument #2: unterminated macro reference '$('\n",
    );
    env.write("late.sub", "executable = /bin/echo\n\nqueue x y z in\n");
    let out = submit(
        &env,
        &["-dry-run", "-a", "y = 1", "-a", "z = 2", "late.sub"],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .starts_with("tern_submit: error: late.sub:3: Invalid Queue count expression"),
        "{out:?}"
    );
}

/// skip_filechecks: a missing executable is no error (its sizes are 0);
/// `warn` is refused as not honoured, and a value that is not a boolean
/// is condor_submit's error.
#[test]
fn skip_filechecks_takes_a_boolean() {
    let env = TestEnv::new();
    env.write(
        "gone.sub",
        "executable = no/such/prog\nskip_filechecks = true\nqueue\n",
    );
    let ads = dry_run_ads(&submit(&env, &["-dry-run", "gone.sub"]));
    assert_eq!(attr(&ads[0], "ExecutableSize"), "0");
    env.write(
        "warn.sub",
        "executable = /bin/echo\nskip_filechecks = warn\nqueue\n",
    );
    submit(&env, &["-dry-run", "warn.sub"]).fails(
        1,
        "tern_submit: error: warn.sub:2: skip_filechecks = warn is not supported: \
         tern checks the files or, with true, skips the checks\n",
    );
    env.write(
        "bad.sub",
        "executable = /bin/echo\nskip_filechecks = maybe\nqueue\n",
    );
    submit(&env, &["-dry-run", "bad.sub"]).fails(
        1,
        "tern_submit: error: bad.sub:2: skip_filechecks=maybe is invalid, must be 'warn' or a boolean\n",
    );
}

#[test]
fn unused_lines_are_warned_about_on_stderr() {
    let env = TestEnv::new();
    env.write(
        "job.sub",
        "executable = /bin/echo\nfoo_bar_baz = 1\nused = x\narguments = $(used)\napp.setting = 2\n+Custom = 3\nqueue\n",
    );
    let r = submit(&env, &["-dry-run", "job.sub"]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            0,
            "WARNING: the line 'foo_bar_baz = 1' was unused by tern_submit. Is it a typo?\n"
        ),
        "{r:?}"
    );
    let ads = old_ads(&r.stdout);
    assert_eq!(attr(&ads[0], "Args"), "\"x\"");
    assert_eq!(attr(&ads[0], "Custom"), "3");
}

#[test]
fn a_submit_goes_into_the_queue_and_numbers_clusters() {
    let env = TestEnv::new();
    env.write("job.sub", "executable = /bin/echo\nqueue 3\n");
    let r = submit(&env, &["job.sub"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, "3 job(s) submitted to cluster 1.\n", "")
    );
    let r = submit(&env, &["-terse", "job.sub"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "2.0 - 2.2\n"));
    assert!(env.path(".local/share/tern/queue.db").exists());
    // A dry run numbers the next cluster without taking it.
    let ads = dry_run_ads(&submit(&env, &["-dry-run", "job.sub"]));
    assert_eq!(attr(&ads[0], "ClusterId"), "3");
    let r = submit(&env, &["job.sub"]);
    assert_eq!(r.stdout, "3 job(s) submitted to cluster 3.\n");
}

#[test]
fn a_missing_file_is_an_error() {
    let env = TestEnv::new();
    submit(&env, &["-dry-run", "nosuch.sub"]).fails(
        1,
        "tern_submit: error: cannot read 'nosuch.sub': No such file or directory\n",
    );
}

#[test]
fn an_error_names_the_file_and_line_and_prints_no_ads() {
    let env = TestEnv::new();
    env.write(
        "job.sub",
        "executable = /bin/echo\narguments = $(Process)\n\npriority = high\nqueue 3\n",
    );
    submit(&env, &["-dry-run", "job.sub"]).fails(
        1,
        "tern_submit: error: job.sub:4: priority=high is invalid, must eval to an integer.\n",
    );
}

#[test]
fn queue_zero_makes_no_jobs() {
    let env = TestEnv::new();
    env.write("job.sub", "executable = /bin/echo\nqueue 0\n");
    let r = submit(&env, &["-dry-run", "job.sub"]);
    let warning = "WARNING: \"job.sub\" has only empty \"queue\" commands -- no jobs queued\n";
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, "", warning)
    );
    let r = submit(&env, &["-dry-run:json", "job.sub"]);
    assert_eq!(r.code, 0, "{r:?}");
    let json: serde_json::Value = serde_json::from_str(&r.stdout).expect("valid JSON");
    assert_eq!(json, serde_json::json!([]));
}

#[test]
fn the_clock_gives_qdate_and_submit_time() {
    let env = TestEnv::new();
    env.write(
        "job.sub",
        "executable = /bin/echo\narguments = $(SUBMIT_TIME)\nqueue\n",
    );
    let ads = dry_run_ads(&submit(&env, &["-dry-run", "job.sub"]));
    assert_eq!(attr(&ads[0], "QDate"), NOW.to_string());
    assert_eq!(attr(&ads[0], "EnteredCurrentStatus"), NOW.to_string());
    assert_eq!(attr(&ads[0], "Args"), format!("\"{NOW}\""));
}

#[test]
fn owner_and_user_are_the_real_user() {
    let env = TestEnv::new();
    env.write(
        "job.sub",
        "executable = /bin/echo\nnice_user = true\nqueue\n",
    );
    let ads = dry_run_ads(&submit(&env, &["-dry-run", "job.sub"]));
    let me = real_user();
    assert_eq!(attr(&ads[0], "Owner"), format!("\"{me}\""));
    assert!(attr(&ads[0], "User").starts_with(&format!("\"{me}@")));
    assert_eq!(
        attr(&ads[0], "AccountingGroup"),
        format!("\"nice-user.{me}\"")
    );
}

#[test]
fn schedd_interval_reaches_cron_jobs() {
    let env = TestEnv::new();
    env.write(
        "job.sub",
        "executable = /bin/echo\ncron_minute = 5\nqueue\n",
    );
    let ads = dry_run_ads(&submit(&env, &["-dry-run", "job.sub"]));
    assert_eq!(attr(&ads[0], "ScheddInterval"), "60");
    let ads = dry_run_ads(&submit_with(
        &env,
        &[("_TERN_SCHEDD_INTERVAL", "300")],
        &["-dry-run", "job.sub"],
    ));
    assert_eq!(attr(&ads[0], "ScheddInterval"), "300");
}

#[test]
fn append_requirements_from_the_configuration_follow_the_users() {
    let env = TestEnv::new();
    env.write("tern.conf", "APPEND_REQUIREMENTS = TARGET.Foo\n");
    env.write(
        "job.sub",
        "executable = /bin/echo\nrequirements = Memory > 1\nqueue\n",
    );
    let ads = dry_run_ads(&submit_with(
        &env,
        &[("TERN_CONFIG", "tern.conf")],
        &["-dry-run", "job.sub"],
    ));
    // The host's Arch and OpSys clauses follow.
    let req = attr(&ads[0], "Requirements");
    assert!(
        req.starts_with("(Memory > 1) && (TARGET.Foo) && (TARGET.Arch == "),
        "{req}"
    );
}

#[test]
fn help_lists_the_options() {
    let env = TestEnv::new();
    let r = submit(&env, &["-help"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    for opt in ["-dry-run", "-batch-name", "-append", "-queue"] {
        assert!(r.stdout.contains(opt), "{opt} missing from the help");
    }
}

#[test]
fn an_unknown_option_is_a_usage_error() {
    let env = TestEnv::new();
    env.write("job.sub", "executable = /bin/echo\nqueue\n");
    let r = submit(&env, &["-bogus", "job.sub"]);
    assert_eq!((r.code, r.stdout.as_str()), (2, ""), "{r:?}");
    assert!(
        r.stderr
            .starts_with("tern_submit: error: unknown option '-bogus'\n"),
        "{r:?}"
    );
}

/// The one job ad `-dry-run` makes of `text`.
fn one_ad(env: &TestEnv, text: &str) -> Ad {
    env.write("job.sub", text);
    let mut ads = dry_run_ads(&submit(env, &["-dry-run", "job.sub"]));
    assert_eq!(ads.len(), 1, "{ads:?}");
    ads.remove(0)
}

#[test]
fn old_syntax_arguments_take_backslash_quote_as_a_literal_quote() {
    let env = TestEnv::new();
    let ad = one_ad(
        &env,
        "executable = /bin/echo\narguments = one \\\"two\\\" three\nqueue\n",
    );
    assert_eq!(attr(&ad, "Args"), r#""one \"two\" three""#);
    assert!(!ad.contains_key("Arguments"), "{ad:?}");
}

#[test]
fn queue_keyword_with_no_items_after_it_is_refused_with_its_line() {
    let env = TestEnv::new();
    env.write("job.sub", "executable = /bin/echo\n\nqueue x y z in\n");
    let r = submit(&env, &["-dry-run", "job.sub"]);
    r.fails(
        1,
        "tern_submit: error: job.sub:3: Invalid Queue count expression: 'x y z in' has no items \
         after 'in', so HTCondor reads all of it as the queue count\n",
    );
}

#[test]
fn max_retries_keeps_the_users_on_exit_remove_and_on_exit_hold() {
    let env = TestEnv::new();
    let ad = one_ad(
        &env,
        "executable = /bin/echo\nmax_retries = 2\nretry_until = 7\n\
         on_exit_remove = ExitCode =?= 3\non_exit_hold = ExitBySignal\nqueue\n",
    );
    assert_eq!(
        attr(&ad, "OnExitRemove"),
        "NumJobCompletions > JobMaxRetries || ExitCode =?= 0 || ExitCode =?= 7 || ExitCode =?= 3"
    );
    assert_eq!(attr(&ad, "OnExitHold"), "ExitBySignal");
}

#[test]
fn transfer_output_files_of_two_quotes_is_the_empty_list() {
    let env = TestEnv::new();
    let ad = one_ad(
        &env,
        "executable = /bin/echo\ntransfer_output_files = \"\"\nqueue\n",
    );
    assert_eq!(attr(&ad, "TransferOutput"), "\"\"");
}

#[test]
fn disk_usage_sums_the_executable_and_the_input_files() {
    let env = TestEnv::new();
    env.write("job.sh", &"#".repeat(1500)); // 2 KiB rounded up
    env.write("in.dat", &"x".repeat(2048)); // 2 KiB
    std::fs::create_dir(env.path("dir")).unwrap();
    env.write("dir/a", &"y".repeat(600));
    env.write("dir/b", &"y".repeat(600)); // 1200 bytes together: 2 KiB
    env.write("stdin.txt", "z"); // 1 KiB
    let ad = one_ad(
        &env,
        "executable = job.sh\ninput = stdin.txt\n\
         transfer_input_files = in.dat, dir, missing.dat\nqueue\n",
    );
    assert_eq!(attr(&ad, "DiskUsage"), "7");
    assert_eq!(attr(&ad, "TransferInputSizeMB"), "0");
}

#[test]
fn job_attribute_names_are_aliases_of_their_commands() {
    let env = TestEnv::new();
    let ad = one_ad(
        &env,
        "executable = /bin/echo\nJobBatchName = x_$(Cluster)\nRequestMemory = 100\n\
         ShouldTransferFiles = YES\nWhenToTransferOutput = ON_EXIT_OR_EVICT\nqueue\n",
    );
    assert_eq!(attr(&ad, "JobBatchName"), "\"x_1\"");
    assert_eq!(attr(&ad, "RequestMemory"), "100");
    assert_eq!(attr(&ad, "ShouldTransferFiles"), "\"YES\"");
    assert_eq!(attr(&ad, "WhenToTransferOutput"), "\"ON_EXIT_OR_EVICT\"");
}

#[test]
fn combined_file_part_macros_and_choice_with_a_boolean_index_expand() {
    let env = TestEnv::new();
    let ad = one_ad(
        &env,
        "executable = /bin/echo\nf = /data/run42/sim.tar.gz\n\
         arguments = $Fdnx(f) $Fddn(f) $CHOICE(true, a, b) $F(f)\nqueue\n",
    );
    assert_eq!(
        attr(&ad, "Args"),
        "\"run42/sim.tar.gz data/run42/sim.tar b /data/run42/sim.tar.gz\""
    );
}

#[test]
fn old_syntax_arguments_of_a_later_proc_are_not_hidden_by_the_clusters_arguments() {
    let env = TestEnv::new();
    env.write(
        "job.sub",
        "executable = /bin/echo\nqueue\narguments = x y\nqueue\n\
         arguments = $(a)\nqueue a from (\n\"q r\"\nold style\n)\n",
    );
    let ads = dry_run_ads(&submit(&env, &["-dry-run", "job.sub"]));
    assert_eq!(ads.len(), 4);
    assert_eq!(attr(&ads[0], "Arguments"), "\"\"");
    for (ad, args) in [(&ads[1], "\"x y\""), (&ads[3], "\"old style\"")] {
        assert_eq!(attr(ad, "Args"), args);
        assert_eq!(attr(ad, "Arguments"), "undefined");
    }
    assert_eq!(attr(&ads[2], "Arguments"), "\"q r\"");
    assert!(!ads[2].contains_key("Args"), "{:?}", ads[2]);
}

#[test]
fn an_empty_item_list_queues_nothing_with_condor_submits_warning() {
    let env = TestEnv::new();
    env.write("empty.txt", "");
    let warning = "WARNING: \"job.sub\" has only empty \"queue\" commands -- no jobs queued\n";
    // The unused-line warning is left out: nothing was built to use `unused`.
    for queue in [
        "queue x in ()",
        "queue x from empty.txt",
        "queue f matching *.none",
        "queue f matching ()",
        "queue x from (\n)",
    ] {
        env.write(
            "job.sub",
            &format!("executable = /bin/echo\nunused = 1\n{queue}\n"),
        );
        let r = submit(&env, &["-dry-run", "job.sub"]);
        assert_eq!(
            (r.code, r.stdout.as_str(), r.stderr.as_str()),
            (0, "", warning),
            "{queue}"
        );
        // -terse leaves the warning out, as condor_submit -terse does.
        submit(&env, &["-terse", "-dry-run", "job.sub"]).ok("");
    }
}

#[test]
fn transfer_output_false_keeps_the_stream_out_of_the_sandbox() {
    let env = TestEnv::new();
    let ad = one_ad(
        &env,
        "executable = /bin/echo\ninput = in.txt\noutput = out.txt\nerror = err.txt\n\
         stream_output = true\ntransfer_output = false\nTransferErr = false\nqueue\n",
    );
    assert_eq!(attr(&ad, "TransferOut"), "false");
    assert_eq!(attr(&ad, "TransferErr"), "false");
    assert!(!ad.contains_key("StreamOut"), "{ad:?}");
    assert!(!ad.contains_key("StreamErr"), "{ad:?}");
    assert_eq!(attr(&ad, "StreamIn"), "false");
    assert!(!ad.contains_key("TransferIn"), "{ad:?}");
}

#[test]
fn a_relative_executable_is_found_from_the_submit_directory_not_initialdir() {
    let env = TestEnv::new();
    std::fs::create_dir(env.path("run")).unwrap();
    std::fs::create_dir(env.path("bin")).unwrap();
    env.write("bin/job.sh", &"#".repeat(3000)); // 3 KiB
    let ad = one_ad(&env, "initialdir = run\nexecutable = bin/job.sh\nqueue\n");
    let cmd = env.path("bin/job.sh").display().to_string();
    assert_eq!(attr(&ad, "Cmd"), format!("\"{cmd}\""));
    assert_eq!(attr(&ad, "ExecutableSize"), "3");
    assert_eq!(attr(&ad, "DiskUsage"), "3");
}

#[test]
fn a_queue_variable_named_as_a_command_is_that_command() {
    let env = TestEnv::new();
    env.write(
        "job.sub",
        "executable = /bin/echo\narguments = ignored\n\
         queue JobBatchName, arguments from (\nb1 -n 10\nb2 \"-m 'x y'\"\n)\n",
    );
    let ads = dry_run_ads(&submit(&env, &["-dry-run", "job.sub"]));
    assert_eq!(ads.len(), 2);
    assert_eq!(attr(&ads[0], "Args"), "\"-n 10\"");
    assert_eq!(attr(&ads[0], "JobBatchName"), "\"b1\"");
    assert_eq!(attr(&ads[1], "Arguments"), "\"-m x' 'y\"");
    assert_eq!(attr(&ads[1], "JobBatchName"), "\"b2\"");
}

#[test]
fn retry_until_true_is_exit_code_one_as_htcondor_reads_it() {
    let env = TestEnv::new();
    let ad = one_ad(
        &env,
        "executable = /bin/echo\nmax_retries = 2\nretry_until = true\nqueue\n",
    );
    assert_eq!(
        attr(&ad, "OnExitRemove"),
        "NumJobCompletions > JobMaxRetries || ExitCode =?= 0 || ExitCode =?= 1"
    );
}

#[test]
fn an_empty_one_line_from_list_is_one_job_with_the_variable_empty() {
    let env = TestEnv::new();
    let ad = one_ad(
        &env,
        "executable = /bin/echo\narguments = [$(x)]\nqueue x from ()\n",
    );
    assert_eq!(attr(&ad, "Args"), "\"[]\"");
}

#[test]
fn a_submit_that_queues_nothing_prints_no_submitted_line() {
    let env = TestEnv::new();
    env.write("none.sub", "executable = /bin/echo\nqueue 0\n");
    let r = submit(&env, &["none.sub"]);
    let warning = "WARNING: \"none.sub\" has only empty \"queue\" commands -- no jobs queued\n";
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, "", warning)
    );
    submit(&env, &["-terse", "none.sub"]).ok("");
}

/// SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES in force: `(ShouldTransferFiles,
/// WhenToTransferOutput)` of the one job, or tern_submit's error.
fn site_default(value: &str, lines: &str) -> Result<(String, Option<String>), String> {
    let env = TestEnv::new();
    env.write(
        "job.sub",
        &format!("executable = /bin/echo\n{lines}queue\n"),
    );
    let r = submit_with(
        &env,
        &[("_TERN_SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES", value)],
        &["-dry-run", "job.sub"],
    );
    if r.code != 0 {
        return Err(r.stderr);
    }
    let ads = dry_run_ads(&r);
    Ok((
        attr(&ads[0], "ShouldTransferFiles").to_string(),
        ads[0].get("WhenToTransferOutput").cloned(),
    ))
}

#[test]
fn submit_default_should_transfer_files_is_the_sites_default() {
    let s = |v: &str| v.to_string();
    assert_eq!(
        site_default("always", ""),
        Ok((s("\"YES\""), Some(s("\"ON_EXIT\""))))
    );
    // A file's own value wins; an invalid site value is ignored.
    assert_eq!(
        site_default("YES", "should_transfer_files = IF_NEEDED\n"),
        Ok((s("\"IF_NEEDED\""), Some(s("\"ON_EXIT\""))))
    );
    assert_eq!(
        site_default("sometimes", ""),
        Ok((s("\"IF_NEEDED\""), Some(s("\"ON_EXIT\""))))
    );
    // A defaulted IF_NEEDED, the site's too, becomes YES with
    // ON_EXIT_OR_EVICT.
    assert_eq!(
        site_default("IF_NEEDED", "when_to_transfer_output = ON_EXIT_OR_EVICT\n"),
        Ok((s("\"YES\""), Some(s("\"ON_EXIT_OR_EVICT\""))))
    );
    // The site's NO needs no `when_to_transfer_output = NONE` (HTCondor
    // 24.0 refuses such a description: a bug tern fixes), but an explicit
    // ON_EXIT still contradicts it.
    assert_eq!(site_default("NO", ""), Ok((s("\"NO\""), None)));
    let e = site_default("NO", "when_to_transfer_output = ON_EXIT\n").unwrap_err();
    assert!(
        e.contains(
            "WhenToTransferOutput specified as ON_EXIT yet ShouldTransferFiles defined as NO."
        ),
        "{e}"
    );
}

/// dask-jobqueue's HTCondorCluster writes `MY.JobId = "$(ClusterId).$(ProcId)"`
/// and names each worker's output `worker-$F(MY.JobId).out`: condor_submit
/// reads `+Attr`/`MY.Attr` lines as macros `MY.Attr`, and tern expanded
/// `$F(MY.JobId)` to the text `MY.JobId`, so every worker wrote one file.
#[test]
fn my_attr_lines_are_macros_named_my_attr() {
    let env = TestEnv::new();
    env.write(
        "job.sub",
        "+Foo = \"a$(ProcId)\"\n\
         MY.JobId = \"$(ClusterId).$(ProcId)\"\n\
         my.Bar = \"$F(my.foo)_x\"\n\
         output = w-$F(MY.JobId)-$F(my.FOO).out\n\
         executable = /bin/sh\n\
         queue 2\n",
    );
    let ads = dry_run_ads(&submit(&env, &["-dry-run", "job.sub"]));
    assert_eq!(ads.len(), 2);
    for (i, ad) in ads.iter().enumerate() {
        assert_eq!(attr(ad, "JobId"), format!("\"1.{i}\""));
        assert_eq!(attr(ad, "Bar"), format!("\"a{i}_x\""));
        assert_eq!(attr(ad, "Out"), format!("\"w-1.{i}-a{i}.out\""));
    }
}

/// Personal mode has no MAX_JOBS_PER_SUBMISSION (shared mode's
/// configuration sets HTCondor's 20000): a user's own queue takes a
/// submission past it, as it did before shared mode.
#[test]
fn a_personal_queue_has_no_per_submission_limit_by_default() {
    let env = TestEnv::with_spool();
    env.write("big.sub", "executable = /bin/true\nqueue 20001\n");
    let r = env.run("tern_submit", ["-terse", "big.sub"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "1.0 - 1.20000\n"), "{r:?}");
}

/// Whether strace can trace a program here; without it the sync test is
/// skipped with a message, unless TERN_REQUIRE_STRACE is set (CI installs
/// it).
fn have_strace() -> bool {
    let ok = Command::new("strace")
        .args(["-qq", "-o", "/dev/null", "/bin/true"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("TERN_REQUIRE_STRACE").is_none(),
            "strace is required (TERN_REQUIRE_STRACE) but cannot trace here"
        );
        eprintln!("skipped: strace is not installed or cannot trace");
    }
    ok
}

/// The files a `tern_submit job.sub` in `env` syncs (fsync or fdatasync,
/// counted with strace), by name, each once; `fsync` sets CONDOR_FSYNC.
fn submit_syncs(env: &TestEnv, fsync: Option<&str>) -> Vec<String> {
    let text = submit_trace(env, "trace=fsync,fdatasync", fsync);
    let mut files: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let name = l.split_once('<')?.1.split_once('>')?.0;
            Some(name.rsplit('/').next()?.to_string())
        })
        .collect();
    files.sort();
    files.dedup();
    files
}

/// strace's record (`-f -y`, the calls `calls` names) of a `tern_submit
/// job.sub` in `env`; `fsync` sets CONDOR_FSYNC.
fn submit_trace(env: &TestEnv, calls: &str, fsync: Option<&str>) -> String {
    let trace = env.path("trace");
    let mut c = Command::new("strace");
    c.args(["-f", "-qq", "-y", "-e", calls, "-o"])
        .arg(&trace)
        .arg(bin("tern_submit"))
        .arg("job.sub")
        .env_clear()
        .current_dir(env.path(""));
    for (n, v) in env.vars() {
        c.env(n, v);
    }
    if let Some(v) = fsync {
        c.env("_TERN_CONDOR_FSYNC", v);
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    std::fs::read_to_string(&trace).unwrap()
}

/// SPOOL's directory is synced before the first commit to a write-ahead
/// log file whose entry no one synced (so that the log's entry survives a
/// power cut), not by every process that syncs the log, as SQLite itself
/// would; a log made again is a new file, and its first writer syncs it
/// whatever its CONDOR_FSYNC says.
#[test]
fn only_the_first_write_to_a_new_log_syncs_spool() {
    if !have_strace() {
        return;
    }
    let env = TestEnv::with_spool();
    env.write("job.sub", "executable = /bin/true\nqueue\n");
    let spool = env.spool();
    let log = spool.join("queue.db-wal");
    let dir = spool.file_name().unwrap().to_str().unwrap().to_string();
    // The first submit makes the queue: SPOOL is synced before anything
    // is written to the log.
    let first = submit_trace(&env, "trace=fdatasync,fsync,pwrite64", None);
    let at = |call: &str, file: &str| {
        first
            .lines()
            .position(|l| l.contains(call) && l.contains(&format!("{file}>")))
    };
    let spool_sync = at("sync(", &spool.display().to_string());
    let log_write = at("pwrite64(", "queue.db-wal");
    assert!(
        spool_sync.is_some() && spool_sync < log_write,
        "SPOOL synced at {spool_sync:?}, the log first written at {log_write:?}:\n{first}"
    );
    if tern::sys::fs::xattr(&log, "user.tern.entry-synced").is_none() {
        // A file system without extended attributes: every process syncs
        // SPOOL once, as SQLite did.
        eprintln!("skipped: no extended attributes on {}", spool.display());
        return;
    }
    for _ in 0..3 {
        let next = submit_syncs(&env, None);
        assert!(next.contains(&"queue.db-wal".to_string()), "{next:?}");
        assert!(!next.contains(&dir), "{next:?}");
    }
    // The log copied into the database and deleted (a plain SQLite
    // connection's close does both): the next log is a new file.
    for fsync in [Some("false"), None] {
        let conn = crate::common::queue::db(&env);
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
        drop(conn);
        assert!(!log.exists());
        let again = submit_syncs(&env, fsync);
        assert!(again.contains(&dir), "CONDOR_FSYNC {fsync:?}: {again:?}");
    }
}

/// CONDOR_FSYNC: by default a submit syncs the queue's write-ahead log
/// before it reports success, and the job's event log after writing the
/// submit event; with CONDOR_FSYNC = false it syncs neither (counted with
/// strace, each sync with the file it names).
#[test]
fn condor_fsync_false_leaves_out_the_submit_syncs() {
    if !have_strace() {
        return;
    }
    let env = TestEnv::with_spool();
    env.write("job.sub", "executable = /bin/true\nlog = job.log\nqueue\n");
    let synced = |fsync: Option<&str>| submit_syncs(&env, fsync);
    // The first submit makes the database (and syncs it as it does). A
    // closing handle that finds the log long copies it into the database
    // (which syncs the log and the database whatever CONDOR_FSYNC says: it
    // keeps the database whole, not only durable); a commit syncs the log
    // alone.
    synced(None);
    let has = |files: &[String], name: &str| files.iter().any(|f| f == name);
    let mut quiet = 0;
    for _ in 0..3 {
        let files = synced(Some("false"));
        assert!(!has(&files, "job.log"), "{files:?}");
        assert!(
            !has(&files, "queue.db-wal") || has(&files, "queue.db"),
            "a commit was synced: {files:?}"
        );
        quiet += usize::from(files.is_empty());
    }
    assert!(quiet >= 1, "every submit checkpointed");
    let default = synced(None);
    assert!(
        has(&default, "queue.db-wal") && has(&default, "job.log"),
        "{default:?}"
    );
    // Unsynced, the submit events were written all the same.
    let log = std::fs::read_to_string(env.path("job.log")).unwrap();
    assert_eq!(
        log.lines().filter(|l| l.starts_with("000 (")).count(),
        5,
        "{log}"
    );
}
