//! `tern_eval`, run as a user runs it, compared output for output.

use std::io::Read;
use std::process::Stdio;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::common::{NOW, TestEnv};

/// `eval_ok!([args...] => "whole stdout")`: success, nothing on stderr.
macro_rules! eval_ok {
    ([$($arg:expr),* $(,)?] => $out:expr) => {
        {
        let args: &[&str] = &[$($arg),*];
        TestEnv::new().run("tern_eval", args).ok($out)
    }
    };
}

/// `eval_err!([args...] => code, "whole stderr")`: failure, nothing on stdout.
macro_rules! eval_err {
    ([$($arg:expr),* $(,)?] => $code:expr, $err:expr) => {
        {
        let args: &[&str] = &[$($arg),*];
        TestEnv::new().run("tern_eval", args).fails($code, $err)
    }
    };
}

const QUOTE_HINT: &str = "hint: quote each ad, assignment and expression for the shell, e.g. tern_eval 'x = 1' 'x + 1'\n";

#[test]
fn assignments_then_expressions_print_the_context_ad_first() {
    eval_ok!(["x = 5", "x * 2", "y = x + 1", "y", "x < y"]
        => "[ x = 5 ]\n10\n[ x = 5; y = x + 1 ]\n6\ntrue\n");
}

#[test]
fn no_arguments_print_nothing() {
    eval_ok!([] => "");
}

#[test]
fn an_expression_alone_shows_the_empty_ad() {
    eval_ok!(["1 + 2", "\"a\" == \"A\"", "undefined", "1/0"]
        => "[  ]\n3\ntrue\nundefined\nerror\n");
}

#[test]
fn whole_ads_and_several_assignments_update_the_context() {
    eval_ok!(["[Memory = 2048; Cpus = 4]", "a = 1; b = \"x\"", "Memory / Cpus", "b"]
        => "[ a = 1; b = \"x\"; Cpus = 4; Memory = 2048 ]\n512\n\"x\"\n");
}

#[test]
fn assignments_replace_attributes_in_any_case() {
    eval_ok!(["Memory = 1", "memory", "MEMORY = 2", "Memory"]
        => "[ Memory = 1 ]\n1\n[ Memory = 2 ]\n2\n");
}

#[test]
fn the_context_ad_is_printed_again_only_when_it_changed() {
    eval_ok!(["x = 1", "x", "x + 1", "x = 2", "x"]
        => "[ x = 1 ]\n1\n2\n[ x = 2 ]\n2\n");
}

#[test]
fn values_print_in_new_syntax() {
    eval_ok!(["-quiet", "1.5", "{ 1 + 1, x }", "[a = 1].a", "\"tab\\there\"", "2 * 0.5"]
        => "1.500000000000000E+00\n{ 1 + 1,x }\n1\n\"tab\\there\"\n1.000000000000000E+00\n");
}

#[test]
fn quiet_takes_effect_where_it_stands() {
    eval_ok!(["x = 1", "x", "-quiet", "x = 2", "x"] => "[ x = 1 ]\n1\n2\n");
    eval_ok!(["--quiet", "x = 1", "x"] => "1\n");
    eval_ok!(["-q", "x = 1", "-qui", "x"] => "1\n");
}

#[test]
fn expressions_may_start_with_a_dash() {
    eval_ok!(["-quiet", "-1", "-x", "-1 + 3", "x = 4", "-x", "-2.5"]
        => "-1\nundefined\n2\n-4\n-2.500000000000000E+00\n");
    eval_ok!(["--", "-quiet"] => "[  ]\nundefined\n");
}

#[test]
fn my_file_reads_old_syntax() {
    let env = TestEnv::new();
    env.write(
        "job.ad",
        "# a job\nOwner = \"alice\"\nRequestMemory = 1024\n\nOwner = \"bob\"\n",
    );
    env.run(
        "tern_eval",
        ["-my-file", "job.ad", "Owner", "RequestMemory * 2"],
    )
    .ok("[ Owner = \"alice\"; RequestMemory = 1024 ]\n\"alice\"\n2048\n");
}

#[test]
fn my_file_reads_new_syntax_json_and_long_new_lists() {
    let env = TestEnv::new();
    env.write("new.ad", "[ a = 1; b = a + 1 ]\n[ a = 100 ]\n");
    env.write(
        "ads.json",
        "[\n{\n  \"a\": 2,\n  \"b\": \"\\/Expr(a * 10)\\/\",\n  \"c\": null\n}\n]\n",
    );
    env.write("one.json", "{ \"a\": 3.5 }");
    env.write("list.ad", "{\n[ a = 4; b = 5 ],\n[ a = 6 ]\n}\n");
    env.run("tern_eval", ["-quiet", "-my-file", "new.ad", "b"])
        .ok("2\n");
    env.run("tern_eval", ["-quiet", "-my-file", "ads.json", "b", "c"])
        .ok("20\nundefined\n");
    env.run("tern_eval", ["-quiet", "-file", "one.json", "a"])
        .ok("3.500000000000000E+00\n");
    env.run("tern_eval", ["-quiet", "--ad-file", "list.ad", "a + b"])
        .ok("9\n");
}

#[test]
fn my_file_replaces_the_context_and_later_arguments_update_it() {
    let env = TestEnv::new();
    env.write("a.ad", "[ a = 1 ]");
    env.write("empty.ad", "");
    env.run(
        "tern_eval",
        ["x = 7", "x", "-my-file", "a.ad", "x", "b = 2", "a + b"],
    )
    .ok("[ x = 7 ]\n7\n[ a = 1 ]\nundefined\n[ a = 1; b = 2 ]\n3\n");
    env.run("tern_eval", ["-my", "empty.ad", "a"])
        .ok("[  ]\nundefined\n");
}

#[test]
fn target_file_makes_a_match() {
    let env = TestEnv::new();
    env.write(
        "job.ad",
        "RequestMemory = 1024\nRequirements = TARGET.Memory >= RequestMemory\n",
    );
    env.write(
        "machine.ad",
        "[ Memory = 2048; Name = \"slot1\"; Requirements = TARGET.RequestMemory <= 4096; \
         Rank = TARGET.RequestMemory ]",
    );
    env.run(
        "tern_eval",
        [
            "-my-file",
            "job.ad",
            "-target-file",
            "machine.ad",
            "Requirements",
            "TARGET.Requirements",
            "Memory",
            "MY.Memory",
            "TARGET.Name",
            "Rank",
        ],
    )
    .ok(
        "[ RequestMemory = 1024; Requirements = TARGET.Memory >= RequestMemory ]\n\
         true\ntrue\n2048\nundefined\n\"slot1\"\n1024\n",
    );
}

#[test]
fn target_file_applies_from_where_it_stands() {
    let env = TestEnv::new();
    env.write("m.json", "{ \"Memory\": 64 }");
    env.run(
        "tern_eval",
        [
            "-quiet",
            "TARGET.Memory",
            "-target-file",
            "m.json",
            "TARGET.Memory",
            "Memory",
        ],
    )
    .ok("undefined\n64\n64\n");
}

#[test]
fn a_syntax_error_names_the_argument_and_column_and_prints_nothing_else() {
    eval_err!(["x = 1", "x", "x +"] => 1,
        "tern_eval: error: argument 3 'x +': column 4: expected an expression, found end of input\n");
    eval_err!(["-quiet", "x = = 1"] => 1,
        "tern_eval: error: argument 1 'x = = 1': column 5: expected an expression, found '='\n");
    eval_err!(["[a = 1; b = ]"] => 1,
        "tern_eval: error: argument 1 '[a = 1; b = ]': column 13: expected an expression, found ']'\n");
}

#[test]
fn an_unquoted_assignment_gets_a_hint() {
    eval_err!(["x", "=", "1"] => 1,
        &format!("tern_eval: error: argument 2 '=': column 1: expected an expression, found '='\n{QUOTE_HINT}"));
}

#[test]
fn a_bad_file_is_named_with_line_and_column() {
    let env = TestEnv::new();
    env.write("bad.ad", "a = 1\nb = (2\n");
    env.run("tern_eval", ["x", "-my-file", "bad.ad"]).fails(
        1,
        "tern_eval: error: file 'bad.ad': line 2, column 7: expected ')', found end of input\n",
    );
    env.run("tern_eval", ["-target-file", "missing.ad", "x"])
        .fails(
            1,
            "tern_eval: error: cannot read 'missing.ad': No such file or directory\n",
        );
}

#[test]
fn a_missing_option_value_is_a_usage_error() {
    let r = TestEnv::new().run("tern_eval", ["x", "-my-file"]);
    assert_eq!((r.code, r.stdout.as_str()), (2, ""));
    assert!(
        r.stderr
            .starts_with("tern_eval: error: a value is required for '-my-file <FILE>'"),
        "{}",
        r.stderr
    );
}

#[test]
fn debug_is_accepted_and_does_nothing() {
    eval_ok!(["-debug", "-q", "1"] => "1\n");
}

#[test]
fn version_and_help_in_both_spellings() {
    for flag in ["-version", "--version", "-V", "-vers"] {
        eval_ok!([flag] => "tern_eval 0.1.0\n");
    }
    for flag in ["-help", "--help", "-h"] {
        let r = TestEnv::new().run("tern_eval", [flag]);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{flag}");
        assert!(
            r.stdout.contains("Usage: tern_eval [OPTIONS]"),
            "{flag}: {}",
            r.stdout
        );
        assert!(
            r.stdout.contains("-target-file <FILE>") && !r.stdout.contains("--target-file"),
            "{flag}: {}",
            r.stdout
        );
    }
}

#[test]
fn tern_now_pins_the_clock() {
    eval_ok!(["-quiet", "CurrentTime", "time() - 60", "time() == CurrentTime"]
        => &format!("{NOW}\n{}\ntrue\n", NOW - 60));
}

#[test]
fn tern_now_plus_runs_the_clock_from_there() {
    let r = TestEnv::new()
        .var("TERN_NOW", Some("1000+"))
        .run("tern_eval", ["-quiet", "CurrentTime", "CurrentTime"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    for line in r.stdout.lines() {
        let t: i64 = line.parse().expect("an integer time");
        assert!((1000..1060).contains(&t), "{t}");
    }
    assert_eq!(r.stdout.lines().count(), 2);
}

#[test]
fn without_tern_now_the_clock_is_the_system_clock() {
    let r = TestEnv::new()
        .var("TERN_NOW", None)
        .run("tern_eval", ["-quiet", "CurrentTime"]);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let t: i64 = r.stdout.trim().parse().expect("an integer time");
    assert!((t - now).abs() < 60, "{t} vs {now}");
}

#[test]
fn a_malformed_tern_now_is_refused() {
    for bad in ["soon", "12+3", "", "1.5"] {
        TestEnv::new()
            .var("TERN_NOW", Some(bad))
            .run("tern_eval", ["1"])
            .fails(
                2,
                &format!(
                    "tern_eval: error: TERN_NOW must be unix seconds, optionally followed by '+'; \
                     got '{bad}'\nhint: use TERN_NOW=1700000000 for a fixed clock, \
                     TERN_NOW=1700000000+ for one that runs from there, or unset it for the \
                     system clock\n"
                ),
            );
    }
}

#[test]
fn deep_expressions_do_not_overflow_the_stack() {
    let deep = format!("{}1{}", "(".repeat(5000), ")".repeat(5000));
    eval_ok!(["-quiet", &deep] => "1\n");
}

#[test]
fn a_closed_pipe_is_success() {
    let env = TestEnv::new();
    // Far more than a pipe buffer holds, so writing must hit the closed end.
    let big = format!("\"{}\"", "a".repeat(100_000));
    let mut child = env
        .command("tern_eval")
        .args(["-quiet", &big, &big, &big, &big, &big])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning tern_eval");
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!((status.code(), stderr.as_str()), (Some(0), ""));
}
