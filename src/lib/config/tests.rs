//! Configuration language tests: one small file per behaviour, read through
//! the real loader with an explicit environment.

use std::collections::HashMap;
use std::path::Path;

use super::*;

fn env_with(dir: &Path, main: &str, extra: &[(&str, &str)]) -> Environment {
    let path = dir.join("tern_config");
    std::fs::write(&path, main).unwrap();
    let mut vars: HashMap<String, String> = HashMap::new();
    vars.insert("TERN_CONFIG".into(), path.display().to_string());
    vars.insert("HOME".into(), dir.join("home").display().to_string());
    for (k, v) in extra {
        vars.insert(k.to_string(), v.to_string());
    }
    Environment {
        vars,
        system_config: dir.join("no-such-system-config"),
        trusted_owner: None,
    }
}

fn load(main: &str) -> Result<Config, ConfigError> {
    let dir = tempfile::tempdir().unwrap();
    Config::load_with(&env_with(dir.path(), main, &[]))
}

fn get(c: &Config, name: &str) -> Option<String> {
    c.get(name).unwrap()
}

#[test]
fn lazy_expansion_self_reference_and_defaults() {
    let c = load(
        "A = xxx\nC = $(A)\nA = yyy\nB = 1\nB = $(B) 2\nD = $(nosuch:dflt)\nE =\nG @=end\n  one\n two\n@end\n\
         H = a \\\n  b\nlower.case.name = v\nHASH = v # kept\n[Section]\n",
    )
    .unwrap();
    assert_eq!(get(&c, "c").as_deref(), Some("yyy"));
    assert_eq!(get(&c, "B").as_deref(), Some("1 2"));
    assert_eq!(get(&c, "D").as_deref(), Some("dflt"));
    assert_eq!(get(&c, "E"), None, "an empty value is not defined");
    assert_eq!(get(&c, "G").as_deref(), Some("one\ntwo"));
    assert_eq!(get(&c, "H").as_deref(), Some("a b"));
    assert_eq!(get(&c, "LOWER.CASE.NAME").as_deref(), Some("v"));
    assert_eq!(get(&c, "HASH").as_deref(), Some("v # kept"));
}

#[test]
fn conditionals() {
    let c = load(
        "E =\nT = true\nif defined E\n IFE = yes\nelse\n IFE = no\nendif\n\
         if version >= 9.0\n V = new\nelif true\n V = elif\nendif\n\
         if $(T)\n X = 1\nendif\nif !$(T)\n Y = 1\nendif\nif $(NONE)\n W = 1\nelse\n W = 2\nendif\n\
         if false\n if true\n  N = inner\n endif\nelse\n N = outer\nendif\nif no\nelif yes\n Q = 2\nelse\n Q = 3\nendif\n",
    )
    .unwrap();
    assert_eq!(get(&c, "IFE").as_deref(), Some("no"));
    assert_eq!(get(&c, "V").as_deref(), Some("new"));
    assert_eq!(get(&c, "X").as_deref(), Some("1"));
    assert_eq!(get(&c, "Y"), None);
    assert_eq!(get(&c, "W").as_deref(), Some("2"));
    assert_eq!(get(&c, "N").as_deref(), Some("outer"));
    assert_eq!(get(&c, "Q").as_deref(), Some("2"));
}

#[test]
fn includes_files_commands_and_loops() {
    // Relative include paths are relative to the current directory, as in
    // HTCondor; absolute ones keep the test independent of it.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    std::fs::write(dir.path().join("inc"), "FROM_INC = 1\n").unwrap();
    std::fs::write(dir.path().join("loop"), format!("include : {d}/loop\n")).unwrap();
    let main = format!(
        "include : {d}/inc\n@include : echo FROM_CMD = 2 |\ninclude ifexist : {d}/missing\n"
    );
    let c = Config::load_with(&env_with(dir.path(), &main, &[])).unwrap();
    assert_eq!(get(&c, "FROM_INC").as_deref(), Some("1"));
    assert_eq!(get(&c, "FROM_CMD").as_deref(), Some("2"));
    let e = Config::load_with(&env_with(
        dir.path(),
        &format!("X = 1\ninclude : {d}/loop\n"),
        &[],
    ))
    .unwrap_err();
    assert!(e.to_string().contains("include loop"), "{e}");
    let e = Config::load_with(&env_with(
        dir.path(),
        &format!("\ninclude : {d}/absent\n"),
        &[],
    ))
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("tern_config:2: cannot read included file"),
        "{e}"
    );
}

#[test]
fn errors_name_file_and_line() {
    for (text, line, needle) in [
        ("A = 1\nB @=end\nno end\n", 2, "not closed"),
        ("A = 1\nif bogus words\nendif\n", 2, "bad 'if'"),
        ("if true\nA = 1\n", 1, "without 'endif'"),
        ("endif\n", 1, "without 'if'"),
        ("A = 1\nelse\n", 2, "without 'if'"),
        ("A = 1\njust words\n", 2, "expected 'NAME = value'"),
        ("'quoted' = 1\n", 1, "not a valid configuration name"),
        ("[Section header]\n", 1, "expected 'NAME = value'"),
        ("error : stop here\n", 1, "stop here"),
        ("use ROLE : Personal\n", 1, "templates"),
        ("if true\nelse\nelse\nendif\n", 3, "second 'else'"),
        ("if version >= nine\nendif\n", 1, "not a version"),
    ] {
        let e = load(text).unwrap_err();
        let s = e.to_string();
        assert!(
            s.contains(&format!("tern_config:{line}:")) && s.contains(needle),
            "{text:?}: {s}"
        );
    }
}

#[test]
fn file_order_and_environment_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("conf.d")).unwrap();
    std::fs::write(d.join("conf.d/20-b"), "ORDER = $(ORDER) dir-b\n").unwrap();
    std::fs::write(d.join("conf.d/10-a"), "ORDER = $(ORDER) dir-a\n").unwrap();
    std::fs::write(d.join("conf.d/skip.sh"), "ORDER = wrong\n").unwrap();
    std::fs::write(d.join("local"), "ORDER = $(ORDER) local\n").unwrap();
    std::fs::create_dir_all(d.join("xdg/tern")).unwrap();
    std::fs::write(d.join("xdg/tern/tern_config"), "ORDER = $(ORDER) user\n").unwrap();
    let main = format!(
        "ORDER = main\nLOCAL_CONFIG_FILE = {0}/local\nLOCAL_CONFIG_DIR = {0}/conf.d\n",
        d.display()
    );
    let xdg = d.join("xdg").display().to_string();
    let env = env_with(
        d,
        &main,
        &[
            ("XDG_CONFIG_HOME", &xdg),
            ("_TERN_SPOOL", "/tmp/spool-from-env"),
        ],
    );
    let c = Config::load_with(&env).unwrap();
    assert_eq!(
        get(&c, "ORDER").as_deref(),
        Some("main dir-a dir-b local user")
    );
    assert_eq!(get(&c, "SPOOL").as_deref(), Some("/tmp/spool-from-env"));
    assert_eq!(
        c.lookup_entry("spool").unwrap().source,
        ValueSource::Environment("_TERN_SPOOL".into())
    );
    assert_eq!(c.files().len(), 5);
}

#[test]
fn defaults_come_from_the_knob_table() {
    let dir = tempfile::tempdir().unwrap();
    let env = env_with(dir.path(), "", &[("XDG_DATA_HOME", "/data")]);
    let c = Config::load_with(&env).unwrap();
    assert_eq!(get(&c, "SPOOL").as_deref(), Some("/data/tern"));
    assert_eq!(
        c.lookup_entry("SPOOL").unwrap().source,
        ValueSource::Default
    );
    let env = env_with(dir.path(), "", &[]);
    let c = Config::load_with(&env).unwrap();
    let home = dir.path().join("home").display().to_string();
    assert_eq!(get(&c, "SPOOL"), Some(format!("{home}/.local/share/tern")));
}

#[test]
fn tool_prefix_wins_and_cycles_are_reported() {
    let c = load("X = plain\nTOOL.X = tool\nA = $(B)\nB = $(A)\n").unwrap();
    assert_eq!(get(&c, "X").as_deref(), Some("tool"));
    let e = c.get("A").unwrap_err();
    assert!(e.to_string().contains("refers to itself"), "{e}");
}

/// Found by fuzzing (fuzz/config): a line whose seventh byte falls inside
/// a multi-byte character made the `include` check slice the text there and
/// panic. Such a line is now read like any other.
#[test]
fn fuzz_a_multibyte_character_near_the_start_of_a_line_is_no_panic() {
    let mut cfg = Config::defaults();
    let r = cfg.parse_str(
        "SPOOL/\u{78a}\n x=/p$SPOOL = /tmp/x\nA =\"$(",
        "fuzz.config",
    );
    assert!(r.is_err(), "{r:?}");
    // Refused with the name in the message, not a panic.
    let mut cfg = Config::defaults();
    let e = cfg
        .parse_str("INCLUD\u{e9} = 1\n", "fuzz.config")
        .unwrap_err();
    assert!(
        e.to_string().contains("is not a valid configuration name"),
        "{e}"
    );
}

/// A privileged loader over `dir`: the system file `dir/system` holding
/// `main`, files trusted when owned by the test's own uid.
fn privileged_env(dir: &Path, main: &str, vars: &[(&str, &str)]) -> Environment {
    use std::os::unix::fs::PermissionsExt;
    let sys = dir.join("system");
    std::fs::write(&sys, main).unwrap();
    std::fs::set_permissions(&sys, std::fs::Permissions::from_mode(0o644)).unwrap();
    Environment {
        vars: vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        system_config: sys,
        trusted_owner: Some(crate::sys::real_uid()),
    }
}

#[test]
fn privileged_mode_ignores_tern_config_xdg_and_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other");
    std::fs::write(&other, "SPOOL = /from/tern_config\n").unwrap();
    let xdg = dir.path().join("xdg");
    std::fs::create_dir_all(xdg.join("tern")).unwrap();
    std::fs::write(xdg.join("tern/tern_config"), "SPOOL = /from/xdg\n").unwrap();
    let env = privileged_env(
        dir.path(),
        "SPOOL = /var/lib/tern\nHOMEDIR = $ENV(HOME)\nSECRET = [$ENV(SECRET)]\n",
        &[
            ("TERN_CONFIG", &other.display().to_string()),
            ("XDG_CONFIG_HOME", &xdg.display().to_string()),
            ("_TERN_SPOOL", "/from/env"),
            ("_TERN_QUEUE_SUPER_USERS", "mallory"),
            ("HOME", "/home/real"),
        ],
    );
    let c = Config::load_with(&env).unwrap();
    assert_eq!(get(&c, "SPOOL").as_deref(), Some("/var/lib/tern"));
    assert_eq!(
        get(&c, "QUEUE_SUPER_USERS"),
        get(&Config::defaults(), "QUEUE_SUPER_USERS")
    );
    assert_eq!(get(&c, "HOMEDIR").as_deref(), Some("/home/real"));
    assert_eq!(get(&c, "SECRET").as_deref(), Some("[]"));
    assert_eq!(c.files(), [env.system_config.display().to_string()]);
}

#[test]
fn privileged_mode_refuses_files_others_could_have_written() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let refused = |env: &Environment, what: &str| {
        let e = Config::load_with(env).unwrap_err().to_string();
        assert!(e.starts_with("refusing configuration file "), "{e}");
        assert!(e.contains(what), "{e} should say {what}");
    };
    // Group-writable.
    let env = privileged_env(dir.path(), "A = 1\n", &[]);
    std::fs::set_permissions(&env.system_config, std::fs::Permissions::from_mode(0o664)).unwrap();
    refused(&env, "writable by group or others (mode 0664)");
    // Someone else's.
    let mut env = privileged_env(dir.path(), "A = 1\n", &[]);
    env.trusted_owner = Some(crate::sys::real_uid() + 1);
    refused(&env, "it is owned by uid");
    // A symbolic link, even to a good file.
    let env = privileged_env(dir.path(), "A = 1\n", &[]);
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&env.system_config, &link).unwrap();
    let linked = Environment {
        system_config: link,
        ..privileged_env(dir.path(), "A = 1\n", &[])
    };
    refused(&linked, "it is a symbolic link");
    // A FIFO is refused at once, not waited on.
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .args(["-m", "644"])
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let env = privileged_env(dir.path(), &format!("include : {}\n", fifo.display()), &[]);
    refused(&env, "it is not a regular file");
    // No system file at all.
    let mut env = privileged_env(dir.path(), "A = 1\n", &[]);
    env.system_config = dir.path().join("none");
    refused(&env, "none: it is missing");
    // LOCAL_CONFIG_DIR: the directory and each file in it.
    let d = dir.path().join("conf.d");
    std::fs::create_dir(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(d.join("10-ok"), "B = 2\n").unwrap();
    std::fs::set_permissions(d.join("10-ok"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let env = privileged_env(
        dir.path(),
        &format!("LOCAL_CONFIG_DIR = {}\n", d.display()),
        &[],
    );
    assert_eq!(
        get(&Config::load_with(&env).unwrap(), "B").as_deref(),
        Some("2")
    );
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
    refused(&env, "conf.d: it is writable by group or others");
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", d.join("20-link")).unwrap();
    refused(&env, "20-link: it is a symbolic link");
}

#[test]
fn privileged_commands_are_absolute_and_run_with_nothing_inherited() {
    let dir = tempfile::tempdir().unwrap();
    let env = privileged_env(dir.path(), "include command : env |\n", &[]);
    let e = Config::load_with(&env).unwrap_err().to_string();
    assert!(e.contains("only by absolute path"), "{e}");
    use std::os::unix::fs::PermissionsExt;
    let script = dir.path().join("show");
    std::fs::write(
        &script,
        "#!/bin/sh\necho \"WHERE = $(pwd)\"\necho \"N = $(env | grep -cv ^PWD=)\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let env = privileged_env(
        dir.path(),
        &format!("include command : {} |\n", script.display()),
        &[],
    );
    let c = Config::load_with(&env).unwrap();
    assert_eq!(get(&c, "WHERE").as_deref(), Some("/"));
    // sh itself sets PWD (excluded), and may set SHLVL and _.
    let n: usize = get(&c, "N").unwrap().parse().unwrap();
    assert!(n <= 2, "the command inherited {n} variables");
}
