//! `tern_config_val`: the configuration files tern reads, in HTCondor's
//! order, and what the tool prints about them.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use crate::common::{NOW, Run, TestEnv, bin};

/// `tern_config_val` in `env`'s directory with an empty environment: the
/// pinned clock, PATH, HOME (the test directory, so no user configuration
/// unless a test writes one) and `vars`.
fn config_val(env: &TestEnv, vars: &[(&str, &str)], args: &[&str]) -> Run {
    let dir = env.path("");
    let mut c = Command::new(bin("tern_config_val"));
    c.env_clear()
        .current_dir(&dir)
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &dir)
        .env("TERN_NOW", NOW.to_string());
    for (n, v) in vars {
        c.env(n, v);
    }
    Run::from(c.args(args).output().expect("running tern_config_val"))
}

/// A test directory whose main configuration file (`TERN_CONFIG`) is
/// `main.conf` holding `text`.
fn with_main(text: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write("main.conf", text);
    env
}

/// Runs with `TERN_CONFIG=main.conf`.
fn cv(env: &TestEnv, args: &[&str]) -> Run {
    config_val(env, &[("TERN_CONFIG", "main.conf")], args)
}

#[test]
fn names_print_their_expanded_values_one_per_line() {
    let env = with_main("A = 1\nB = $(A)2\n");
    cv(&env, &["B", "a", "A"]).ok("12\n1\n1\n");
}

#[test]
fn expansion_is_lazy_and_uses_the_last_definition() {
    let env = with_main("A = xxx\nC = $(A)\nA = yyy\n");
    cv(&env, &["C"]).ok("yyy\n");
}

#[test]
fn a_self_reference_appends_to_the_value_so_far() {
    let env = with_main("A = x\nA = $(A) y\nA = $(a) z\n");
    cv(&env, &["A"]).ok("x y z\n");
}

#[test]
fn a_default_applies_only_to_an_undefined_macro() {
    let env = with_main("Set = here\nA = $(Set:unused) $(Unset:fallback)\n");
    cv(&env, &["A"]).ok("here fallback\n");
}

#[test]
fn values_are_trimmed_and_a_hash_inside_a_value_is_kept() {
    let env = with_main("   # a comment\nA =    spaced out   \nB = v # not a comment\n");
    cv(&env, &["A", "B"]).ok("spaced out\nv # not a comment\n");
}

#[test]
fn undefined_and_empty_names_are_not_defined_and_exit_1() {
    let env = with_main("A = 1\nE =\n");
    let r = cv(&env, &["e", "A", "nope"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (1, "1\n", "Not defined: E\nNot defined: NOPE\n")
    );
}

#[test]
fn raw_prints_values_as_written() {
    let env = with_main("A = 1\nB = $(A)2\n");
    cv(&env, &["-raw", "B"]).ok("$(A)2\n");
}

#[test]
fn verbose_says_where_a_value_was_set_and_its_raw_form() {
    let env = with_main("A = 1\n\nB = $(A)2\n");
    cv(&env, &["-verbose", "B"]).ok("B = 12\n # at: main.conf, line 3\n # raw: $(A)2\n\n");
}

#[test]
fn verbose_shows_a_knobs_default_and_type() {
    let env = with_main("");
    let r = cv(&env, &["-verbose", "SCHEDD_INTERVAL"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(
        r.stdout.starts_with(
            "SCHEDD_INTERVAL = 60\n # at: <Default>\n # raw: 60\n # default: 60\n # type: integer; "
        ),
        "{r:?}"
    );
    assert!(r.stdout.ends_with("\n\n"), "{r:?}");
}

#[test]
fn dump_lists_raw_definitions_sorted_by_name() {
    let env = with_main("zeta = 1\nAlpha = $(zeta)\nmiddle = m\n");
    let r = cv(&env, &["-dump"]);
    assert_eq!(r.code, 0, "{r:?}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines[0], "# Configuration from: main.conf");
    for l in [
        "Alpha = $(zeta)",
        "middle = m",
        "zeta = 1",
        "SCHEDD_INTERVAL = 60",
    ] {
        assert!(lines.contains(&l), "{l:?} missing from {lines:?}");
    }
    let names: Vec<String> = lines[1..]
        .iter()
        .map(|l| l.split(" = ").next().unwrap().to_ascii_lowercase())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
}

#[test]
fn dump_with_a_pattern_keeps_names_containing_it() {
    let env = with_main("MY_SPECIAL_A = 1\nmy_special_b = 2\nOTHER = 3\n");
    cv(&env, &["-dump", "special"])
        .ok("# Configuration from: main.conf\nMY_SPECIAL_A = 1\nmy_special_b = 2\n");
}

#[test]
fn config_lists_the_files_read_in_order() {
    let env = with_main("include : inc.conf\nLOCAL_CONFIG_FILE = local.conf\n");
    env.write("inc.conf", "A = 1\n");
    env.write("local.conf", "B = 2\n");
    cv(&env, &["-config"]).ok("main.conf\ninc.conf\nlocal.conf\n");
}

#[test]
fn tern_overrides_beat_every_file() {
    let env = with_main("A = 1\nB = 2\n");
    config_val(
        &env,
        &[
            ("TERN_CONFIG", "main.conf"),
            ("_TERN_A", "9"),
            ("_tern_B", "8"),
        ],
        &["A", "B"],
    )
    .ok("9\n8\n");
}

#[test]
fn verbose_names_the_override_variable() {
    let env = with_main("A = 1\n");
    config_val(
        &env,
        &[("TERN_CONFIG", "main.conf"), ("_TERN_A", "9")],
        &["-v", "A"],
    )
    .ok("A = 9\n # at: <Environment> _TERN_A\n # raw: 9\n\n");
}

#[test]
fn an_override_needs_no_configuration_file() {
    let env = TestEnv::new();
    config_val(
        &env,
        &[("TERN_CONFIG", "/dev/null"), ("_TERN_FOO", "bar")],
        &["FOO"],
    )
    .ok("bar\n");
}

#[test]
fn tern_config_names_the_main_file_and_a_missing_one_is_an_error() {
    let env = TestEnv::new();
    let r = config_val(&env, &[("TERN_CONFIG", "missing.conf")], &["A"]);
    assert_eq!((r.code, r.stdout.as_str()), (1, ""), "{r:?}");
    assert!(
        r.stderr
            .starts_with("tern_config_val: error: cannot read configuration file missing.conf: "),
        "{r:?}"
    );
}

#[test]
fn local_config_file_is_a_list_read_left_to_right() {
    let env = with_main("LOCAL_CONFIG_FILE = a.conf, b.conf\nX = main\n");
    env.write("a.conf", "X = a\nY = a\n");
    env.write("b.conf", "X = b\n");
    cv(&env, &["X", "Y"]).ok("b\na\n");
}

#[test]
fn local_config_dir_files_are_read_sorted_skipping_excluded_names() {
    let env = with_main("LOCAL_CONFIG_DIR = conf.d\n");
    std::fs::create_dir(env.path("conf.d")).unwrap();
    env.write("conf.d/20-second", "X = second\nY = second\n");
    env.write("conf.d/10-first", "X = first\nY = first\nZ = first\n");
    // Excluded by the default LOCAL_CONFIG_DIR_EXCLUDE_REGEXP.
    env.write("conf.d/30-backup~", "X = backup\n");
    env.write("conf.d/.hidden", "Y = hidden\n");
    env.write("conf.d/40-script.sh", "Z = script\n");
    cv(&env, &["X", "Y", "Z"]).ok("second\nsecond\nfirst\n");
}

#[test]
fn local_config_dir_is_read_before_local_config_file() {
    // HTCondor's order (verified with the 24.0.24 bindings): the directory
    // first, then LOCAL_CONFIG_FILE, so the file's values win.
    let env = with_main("LOCAL_CONFIG_FILE = file.conf\nLOCAL_CONFIG_DIR = conf.d\n");
    std::fs::create_dir(env.path("conf.d")).unwrap();
    env.write("conf.d/10.conf", "X = dir\n");
    env.write("file.conf", "X = file\n");
    cv(&env, &["X"]).ok("file\n");
    cv(&env, &["-config"]).ok("main.conf\nconf.d/10.conf\nfile.conf\n");
}

#[test]
fn local_config_file_ending_in_a_bar_is_run_as_a_command() {
    // `LOCAL_CONFIG_FILE = /path/script |` (verified with the 24.0.24
    // bindings): the script's output is read as configuration.
    let env = with_main("");
    let script = env.write("gen.sh", "#!/bin/sh\necho 'Y = from command'\n");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    env.write(
        "main.conf",
        &format!("LOCAL_CONFIG_FILE = {} |\n", script.display()),
    );
    cv(&env, &["Y"]).ok("from command\n");
}

#[test]
fn include_reads_a_file_in_place() {
    let env = with_main("A = before\ninclude : inc.conf\nC = after\n");
    env.write("inc.conf", "A = included\nB = $(A)\nC = included\n");
    cv(&env, &["A", "B", "C"]).ok("included\nincluded\nafter\n");
}

#[test]
fn include_ifexist_skips_a_missing_file() {
    let env = with_main("include ifexist : no_such.conf\nA = 1\n");
    cv(&env, &["A"]).ok("1\n");
}

#[test]
fn include_of_a_command_reads_its_output() {
    let env = with_main("include : echo 'A = from echo' |\n");
    cv(&env, &["A"]).ok("from echo\n");
}

#[test]
fn conditionals_choose_what_is_defined() {
    let env = with_main(
        "HAVE = 1\n\
         if defined HAVE\n  A = yes\nelse\n  A = no\nendif\n\
         if defined MISSING\n  B = one\nelif version >= 24.0\n  B = two\nelse\n  B = three\nendif\n\
         if $(HAVE)\n  C = on\nendif\n\
         if ! defined HAVE\n  D = set\nendif\n",
    );
    let r = cv(&env, &["A", "B", "C", "D"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (1, "yes\ntwo\non\n", "Not defined: D\n")
    );
}

#[test]
fn here_values_keep_their_lines() {
    let env = with_main("HEREDOC_T @=end\n  one\n  two\n@end\nU = after\n");
    cv(&env, &["HEREDOC_T", "U"]).ok("one\ntwo\nafter\n");
    cv(&env, &["-dump", "heredoc"]).ok("# Configuration from: main.conf\nHEREDOC_T = one\\ntwo\n");
}

#[test]
fn warnings_go_to_stderr_and_do_not_fail() {
    let env = with_main("A : old style\nwarning : check this\n");
    let r = cv(&env, &["A"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            0,
            "old style\n",
            "tern_config_val: main.conf:1: warning: ':' as assignment is obsolete; use '='\n\
             tern_config_val: main.conf:2: warning: check this\n"
        )
    );
}

#[test]
fn tool_prefixed_names_win_for_tools() {
    let env = with_main("A = plain\nTOOL.A = for tools\n");
    cv(&env, &["A"]).ok("for tools\n");
}

#[test]
fn the_user_configuration_is_read_after_the_local_files() {
    let env = with_main("LOCAL_CONFIG_FILE = local.conf\nA = main\n");
    env.write("local.conf", "A = local\nB = local\n");
    std::fs::create_dir_all(env.path(".config/tern")).unwrap();
    env.write(".config/tern/tern_config", "A = user\n");
    cv(&env, &["A", "B"]).ok("user\nlocal\n");
}

#[test]
fn xdg_config_home_moves_the_user_configuration() {
    let env = with_main("A = main\n");
    std::fs::create_dir_all(env.path("xdg/tern")).unwrap();
    env.write("xdg/tern/tern_config", "A = xdg\n");
    let xdg = env.path("xdg");
    config_val(
        &env,
        &[
            ("TERN_CONFIG", "main.conf"),
            ("XDG_CONFIG_HOME", xdg.to_str().unwrap()),
        ],
        &["A"],
    )
    .ok("xdg\n");
}

#[test]
fn no_names_and_no_dump_is_a_usage_error() {
    let env = with_main("A = 1\n");
    cv(&env, &[]).fails(
        2,
        "tern_config_val: error: name at least one knob, or use -dump\nhint: tern_config_val SPOOL\n",
    );
}
