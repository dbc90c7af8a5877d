use super::*;
use crate::classad::unparse::unparse;

fn ad(text: &str) -> ClassAd {
    crate::classad::parse_ad(text).unwrap()
}

fn cfg(text: &str) -> Config {
    let mut c = Config::defaults();
    c.parse_str(text, "test").unwrap();
    c
}

/// The keyword job `ad` gets under `config`, or the hold.
fn keyword(config: &str, ad: &str) -> Result<Option<String>, String> {
    let ad = Rc::new(crate::classad::parse_ad(ad).unwrap());
    let id = JobId {
        cluster: 1,
        proc: 0,
    };
    JobHooks::resolve(&cfg(config), Path::new("/s"), id, &ad, "slot1@h", None)
        .map(|h| h.map(|h| h.keyword))
        .map_err(|h| format!("{} {}", h.code, h.reason))
}

#[test]
fn the_keyword_is_forced_then_the_jobs_then_the_default() {
    let both = "A_HOOK_PREPARE_JOB = /a\nB_HOOK_JOB_EXIT = /b\n";
    let job = "[HookKeyword = \"A\"]";
    assert_eq!(keyword(both, job).unwrap().as_deref(), Some("A"));
    let forced = format!("{both}STARTER_JOB_HOOK_KEYWORD = B\n");
    assert_eq!(keyword(&forced, job).unwrap().as_deref(), Some("B"));
    let default = format!("{both}STARTER_DEFAULT_JOB_HOOK_KEYWORD = B\n");
    assert_eq!(keyword(&default, job).unwrap().as_deref(), Some("A"));
    // A job keyword nothing configures falls back to the default, as
    // the manual says (not as HTCondor's code does).
    let nothing = "[HookKeyword = \"NONE\"]";
    assert_eq!(keyword(&default, nothing).unwrap().as_deref(), Some("B"));
    // A keyword with only other families' hooks (fetch, the router's
    // TRANSLATE_JOB) once won and the job ran with no hook at all: it
    // falls back to the default too.
    for other in ["FETCH_WORK", "TRANSLATE_JOB"] {
        let config = format!(
            "F_HOOK_{other} = /f\nSTARTER_DEFAULT_JOB_HOOK_KEYWORD = B\nB_HOOK_JOB_EXIT = /b\n"
        );
        let f = "[HookKeyword = \"F\"]";
        assert_eq!(
            keyword(&config, f).unwrap().as_deref(),
            Some("B"),
            "{other}"
        );
    }
    assert_eq!(keyword("", job).unwrap(), None);
    // Forced, a keyword without starter hooks means no hooks.
    let forced_empty = format!("{both}STARTER_JOB_HOOK_KEYWORD = NONE\n");
    assert_eq!(keyword(&forced_empty, job).unwrap(), None);
}

#[test]
fn a_bad_timeout_or_arguments_knob_holds_naming_it() {
    let job = "[HookKeyword = \"A\"]";
    let e = keyword(
        "A_HOOK_PREPARE_JOB = /a\nA_HOOK_PREPARE_JOB_TIMEOUT = 0\n",
        job,
    )
    .unwrap_err();
    assert!(
        e.starts_with("19 Error from slot1@h: A_HOOK_PREPARE_JOB_TIMEOUT: 0 is not"),
        "{e}"
    );
    let e = keyword(
        "A_HOOK_JOB_EXIT = /a\nA_HOOK_UPDATE_JOB_INFO_TIMEOUT = soon\n",
        job,
    )
    .unwrap_err();
    assert!(e.contains("A_HOOK_UPDATE_JOB_INFO_TIMEOUT"), "{e}");
    let e = keyword(
        "A_HOOK_PREPARE_JOB = /a\nA_HOOK_PREPARE_JOB_ARGS = 'open\n",
        job,
    )
    .unwrap_err();
    assert!(e.contains("A_HOOK_PREPARE_JOB_ARGS"), "{e}");
}

#[test]
fn only_changed_unprotected_attributes_reach_the_queue() {
    let mut run = ad("[Cmd = \"/bin/a\"; Iwd = \"/x\"; Owner = \"me\"]");
    let update = ad("[Cmd = \"/bin/b\"; Iwd = \"/x\"; Owner = \"root\"; New = 1]");
    let changed = merge(&update, &mut run);
    let names: Vec<&str> = changed.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.len(), 2);
    assert!(names.contains(&"Cmd") && names.contains(&"New"));
    assert_eq!(unparse(run.get("Owner").unwrap()), "\"me\"");
    assert_eq!(unparse(run.get("Cmd").unwrap()), "\"/bin/b\"");
}

#[test]
fn exit_arguments_and_attributes() {
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(exit_argument(None), "exit");
    assert_eq!(exit_argument(Some(super::super::Stop::Vacate)), "evict");
    let a = exit_attrs(Some(ExitStatus::from_raw(3 << 8)), Duration::from_secs(2));
    let text: Vec<String> = a
        .iter()
        .map(|(n, e)| format!("{n}={}", unparse(e)))
        .collect();
    assert_eq!(
        text,
        [
            "ExitBySignal=false",
            "ExitCode=3",
            "JobDuration=2.000000000000000E+00"
        ]
    );
    let a = exit_attrs(Some(ExitStatus::from_raw(9)), Duration::ZERO);
    assert!(a.iter().any(|(n, _)| n == "ExitReason"));
}

#[test]
fn a_hook_others_could_replace_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("h");
    std::fs::write(&p, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o757)).unwrap();
    let e = check_program("K_HOOK_PREPARE_JOB", &p).unwrap_err();
    assert!(e.contains("writable by everyone"), "{e}");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(check_program("K", &p).is_ok());
    assert!(check_program("K", Path::new("rel/h")).is_err());
}
