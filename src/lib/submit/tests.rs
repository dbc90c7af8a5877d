//! Submit-language tests through `parse` and `materialize`.

use std::path::Path;

use super::*;
use crate::classad::unparse::unparse;
use crate::config::Config;

fn submit(text: &str) -> Result<Cluster, SubmitError> {
    let cfg = Config::defaults();
    let f = parse(text, "t.sub", Path::new("/"), &cfg)?;
    let opts = SubmitOptions {
        cluster: 7,
        qdate: 1_700_000_000,
        owner: "alice".into(),
        cwd: std::env::temp_dir(),
        environ: vec![("HOME".into(), "/home/alice".into())],
        batch_name: None,
    };
    materialize(&f, &cfg, &opts)
}

fn attr(c: &Cluster, proc_: usize, name: &str) -> String {
    c.full_ad(proc_)
        .get(name)
        .map(unparse)
        .unwrap_or_else(|| "<absent>".into())
}

#[test]
fn each_queue_statement_uses_the_commands_in_force_there() {
    let c = submit("executable = /bin/echo\narguments = a\nqueue\narguments = b\nqueue\n").unwrap();
    assert_eq!(
        (attr(&c, 0, "Args"), attr(&c, 1, "Args")),
        ("\"a\"".into(), "\"b\"".into())
    );
    let c =
        submit("executable = /bin/echo\narguments = a $(Process)\nqueue\narguments = b\nqueue 2\n")
            .unwrap();
    let args: Vec<String> = (0..3).map(|i| attr(&c, i, "Args")).collect();
    assert_eq!(args, vec!["\"a 0\"", "\"b\"", "\"b\""]);
    let c =
        submit("executable = /bin/echo\narguments = x\nqueue\narguments = y $(Process)\nqueue 2\n")
            .unwrap();
    let args: Vec<String> = (0..3).map(|i| attr(&c, i, "Args")).collect();
    assert_eq!(args, vec!["\"x\"", "\"y 1\"", "\"y 2\""]);
}

#[test]
fn procs_store_only_their_differences() {
    let c = submit("executable = /bin/echo\narguments = $(Item)\nqueue in (p, q, r)\n").unwrap();
    assert_eq!(c.procs.len(), 3);
    assert!(c.procs.iter().all(|p| p.len() <= 2), "{:?}", c.procs);
    assert_eq!(attr(&c, 2, "Args"), "\"r\"");
    assert_eq!(attr(&c, 2, "ProcId"), "2");
    let c = submit("executable = /bin/echo\nqueue 1000\n").unwrap();
    assert!(c.procs.iter().all(|p| p.len() == 1));
}

#[test]
fn the_queue_line_is_macro_expanded() {
    let c = submit("executable = /bin/echo\nLIST = a b\narguments = $(Item)\nqueue in ($(LIST))\n")
        .unwrap();
    assert_eq!(c.procs.len(), 2);
    assert_eq!(attr(&c, 1, "Args"), "\"b\"");
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    let c = submit("executable = /bin/echo\nN = 2\nqueue $(N) + 1\n").unwrap();
    assert_eq!(c.procs.len(), 3);
}

#[test]
fn errors_name_the_line() {
    let e = submit("executable = /bin/echo\npriority = high\nqueue\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.sub:2: priority=high is invalid, must eval to an integer."
    );
    let e = submit("executable = /bin/echo\nif defined X\nqueue\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.sub:2: endif(s) not found before end-of-file"
    );
    let e = submit("arguments = x\nqueue\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.sub:2: No 'executable' parameter was provided"
    );
    let e = submit("executable = /bin/echo\n").unwrap_err();
    assert!(
        e.to_string()
            .contains("doesn't contain any \"queue\" commands"),
        "{e}"
    );
}

// The universe now comes from vocab::Universe; every answer submit gave by
// name and by number, error messages included, stays as it was.
#[test]
fn universes_keep_their_answers() {
    let universe =
        |u: &str| match submit(&format!("universe = {u}\nexecutable = /bin/echo\nqueue\n")) {
            Ok(c) => attr(&c, 0, "JobUniverse"),
            Err(e) => e.to_string(),
        };
    for (u, want) in [
        ("vanilla", "5"),
        ("5", "5"),
        ("Scheduler", "7"),
        ("12", "12"),
    ] {
        assert_eq!(universe(u), want, "universe = {u}");
    }
    for (u, want) in [
        (
            "grid",
            "grid_resource attribute not defined for grid universe job",
        ),
        ("1", "'Standard' is not a supported universe."),
        (
            "java",
            "tern runs vanilla, local and scheduler universe jobs; 'java' is not supported",
        ),
        ("docker", "'docker' is not supported"),
        ("10", "I don't know about the '10' universe."),
        ("05", "I don't know about the '05' universe."),
        ("bogus", "I don't know about the 'bogus' universe."),
    ] {
        let got = universe(u);
        assert!(got.contains(want), "universe = {u}: {got}");
    }
}

/// `aliases_of` searches ALIASES by halves: it must stay sorted, and give
/// every alias of a command, in the table's order.
#[test]
fn aliases_are_sorted_by_command_and_each_is_found() {
    assert!(
        ALIASES.windows(2).all(|w| w[0] <= w[1]),
        "ALIASES is not sorted"
    );
    for (command, alias) in ALIASES {
        assert!(
            aliases_of(command).any(|a| a == *alias),
            "{command} -> {alias}"
        );
        let want: Vec<&str> = ALIASES
            .iter()
            .filter(|(c, _)| c == command)
            .map(|(_, a)| *a)
            .collect();
        assert_eq!(aliases_of(command).collect::<Vec<_>>(), want);
    }
    assert_eq!(aliases_of("no_such_command").count(), 0);
    assert_eq!(aliases_of("").count(), 0);
}

#[test]
fn the_files_macros_hide_the_predefined_proc_numbers() {
    // condor_submit's Process, Step, Row and ItemIndex are defaults under
    // the file's macros; queue variables are live and hide the file's.
    let c = submit(
        "executable = /bin/echo\nStep = $(Process) * 100 + 5\nRow = r\narguments = $INT(Step) $(Row) $(Item) $(JobId)\nItem = mine\nqueue 2\n",
    )
    .unwrap();
    assert_eq!(attr(&c, 0, "Args"), "\"5 r 7.0\"");
    assert_eq!(attr(&c, 1, "Args"), "\"105 r 7.1\"");
    let c =
        submit("executable = /bin/echo\nx = file\narguments = $(x)\nqueue x in (a, b)\n").unwrap();
    assert_eq!(attr(&c, 1, "Args"), "\"b\"");
}

#[test]
fn features_tern_cannot_honour_are_refused_with_the_line() {
    for (text, what) in [
        (
            "executable = /bin/echo\ncontainer_image = docker://alpine\nqueue\n",
            "container_image",
        ),
        (
            "executable = /bin/echo\ndocker_image = alpine\nqueue\n",
            "docker_image",
        ),
        (
            "executable = /bin/echo\nlog = x.log\nlog_xml = true\nqueue\n",
            "log_xml",
        ),
    ] {
        let e = submit(text).unwrap_err().to_string();
        assert!(e.contains(what) && e.contains("t.sub:"), "{e}");
    }
    let c =
        submit("executable = /bin/echo\nlog_xml = false\nkill_sig_timeout = 30s\nqueue\n").unwrap();
    assert_eq!(attr(&c, 0, "UserLogUseXML"), "false");
    assert_eq!(attr(&c, 0, "KillSigTimeout"), "30");
}

#[test]
fn commands_for_features_tern_lacks_are_refused_unless_off() {
    for (line, what) in [
        ("want_io_proxy = true", "want_io_proxy is not supported"),
        ("WantIOProxy = true", "want_io_proxy is not supported"),
        (
            "x509userproxy = /tmp/x509up_u1",
            "x509userproxy is not supported",
        ),
        ("use_scitokens = auto", "use_scitokens is not supported"),
        (
            "use_oauth_services = box",
            "use_oauth_services is not supported",
        ),
        ("compress_files = *.gz", "compress_files is not supported"),
        ("buffer_size = 1000", "buffer_size is not supported"),
        ("manifest = true", "manifest is not supported"),
        (
            "docker_pull_policy = always",
            "docker_pull_policy is not supported",
        ),
        ("noop_job = true", "noop_job is not supported"),
        ("max_materialize = 10", "max_materialize is not supported"),
        ("copy_to_spool = true", "copy_to_spool is not supported"),
    ] {
        let e = submit(&format!("executable = /bin/echo\n{line}\nqueue\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains(what) && e.contains("t.sub:2"), "{line}: {e}");
    }
    let c = submit(
        "executable = /bin/echo\nwant_io_proxy = false\nperiodic_vacate = false\nuse_x509userproxy = false\ncopy_to_spool = false\nqueue\n",
    )
    .unwrap();
    assert_eq!(attr(&c, 0, "WantIOProxy"), "false");
    assert_eq!(attr(&c, 0, "PeriodicVacate"), "false");
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}
