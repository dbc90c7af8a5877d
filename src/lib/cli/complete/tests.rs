use super::*;

/// A queue with two jobs of cluster 3 and one of 12, and a few attributes.
struct Fake;

impl Data for Fake {
    fn job_ids(&self, history: bool) -> Vec<String> {
        if history {
            vec!["7".into(), "7.0".into()]
        } else {
            vec![
                "3".into(),
                "3.0".into(),
                "3.1".into(),
                "12".into(),
                "12.0".into(),
            ]
        }
    }
    fn attributes(&self, _tool: &str) -> Vec<String> {
        vec![
            "ClusterId".into(),
            "Cmd".into(),
            "JobStatus".into(),
            "Owner".into(),
        ]
    }
}

fn words(tool: &str, line: &[&str]) -> Vec<String> {
    let (cur, done) = line.split_last().unwrap();
    let done: Vec<String> = done.iter().map(|s| s.to_string()).collect();
    match candidates(tool, &done, cur, &Fake) {
        Candidates::Words(w) => w,
        Candidates::Files => vec!["<files>".into()],
    }
}

#[test]
fn options_are_offered_with_one_dash_or_as_typed() {
    assert_eq!(words("tern_q", &["-con"]), ["-constraint"]);
    assert_eq!(words("tern_q", &["--con"]), ["--constraint"]);
    let all = words("tern_q", &["-"]);
    assert!(all.contains(&"-nobatch".to_string()), "{all:?}");
    assert!(all.contains(&"-af".to_string()), "{all:?}");
    assert!(all.contains(&"-help".to_string()), "{all:?}");
    // Hidden options are not offered.
    assert!(!all.iter().any(|w| w.contains("af-flags")), "{all:?}");
    // Names of HTCondor's tools complete as tern's.
    assert_eq!(
        words(&tool_name("/usr/bin/condor_q"), &["-con"]),
        ["-constraint"]
    );
}

#[test]
fn job_ids_for_job_tools_and_history_ids_for_history() {
    assert_eq!(words("tern_rm", &["3"]), ["3", "3.0", "3.1"]);
    assert_eq!(words("tern_q", &["-nobatch", "1"]), ["12", "12.0"]);
    assert_eq!(words("tern_history", &[""]), ["7", "7.0"]);
}

#[test]
fn option_values_are_attributes_files_or_choices() {
    // -af takes attributes until the next option.
    assert_eq!(words("tern_q", &["-af", "Cl"]), ["ClusterId"]);
    assert_eq!(
        words("tern_q", &["-af", "Owner", "c"]),
        ["ClusterId", "Cmd"]
    );
    assert_eq!(words("tern_q", &["-af:j", "Job"]), ["JobStatus"]);
    // In an expression, the name being typed.
    assert_eq!(
        words("tern_q", &["-constraint", "Owner==\"x\"&&Job"]),
        ["Owner==\"x\"&&JobStatus"]
    );
    assert_eq!(
        words("tern_status", &["-attributes", "Name,Own"]),
        ["Name,Owner"]
    );
    // A file, and the choices of -shell.
    assert_eq!(words("tern_submit", &[""]), ["<files>"]);
    // -dry-run's value may be left out: a file (its output or the
    // description) or the next option.
    for dry in ["-dry-run", "-dry-run:json"] {
        assert_eq!(words("tern_submit", &[dry, ""]), ["<files>"]);
        assert_eq!(words("tern_submit", &[dry, "-te"]), ["-terse"]);
    }
    assert_eq!(words("tern_complete", &["-shell", "b"]), ["bash"]);
    // After an option that takes one value, the next word is positional.
    assert_eq!(
        words("tern_rm", &["-constraint", "true", "12"]),
        ["12", "12.0"]
    );
}

#[test]
fn knob_names_for_config_val() {
    let w = words("tern_config_val", &["spo"]);
    assert!(w.contains(&"SPOOL".to_string()), "{w:?}");
}

#[test]
fn every_user_tool_completes() {
    for (name, _) in crate::cli::multicall::TOOLS {
        if matches!(
            *name,
            "tern_shadow" | "tern_gridmanager" | "tern_cron" | "tern_fetchwork"
        ) {
            continue;
        }
        assert!(command_of(name).is_some(), "{name} has no completion");
    }
}

#[test]
fn the_scripts_name_every_tool() {
    for shell in ["bash", "zsh", "fish"] {
        let s = scripts::script(shell);
        for name in ["tern_q", "condor_q", "tern_config_val", "tern_complete"] {
            assert!(s.contains(name), "{shell}: {name}");
        }
    }
}
