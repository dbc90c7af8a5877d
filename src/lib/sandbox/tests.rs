use std::path::Path;
use std::rc::Rc;

use super::output::Catalog;
use super::*;
use crate::classad::{ClassAd, parse_ad};

/// A parsed ad, shared as the evaluation methods want it.
fn rc_ad(text: &str) -> Result<Rc<ClassAd>, String> {
    parse_ad(text).map(Rc::new).map_err(|e| e.to_string())
}

fn knobs(dir: &Path) -> Knobs {
    Knobs {
        execute: dir.join("execute"),
        filesystem_domain: "here.example".into(),
        keep: false,
        spool: dir.join("spool"),
        max_input_mb: -1,
        max_output_mb: -1,
        job_environment: String::new(),
        thread_vars: vec!["OMP_NUM_THREADS".into()],
    }
}

fn sides() -> Sides {
    Sides {
        ep: "slot1@here.example".into(),
        ap: "here.example".into(),
    }
}

#[test]
fn if_needed_transfers_only_to_another_filesystem_domain() {
    let ad = |t: &str| rc_ad(t).unwrap();
    assert!(transfers(&ad("[ShouldTransferFiles = \"YES\"]"), "x"));
    assert!(!transfers(&ad("[ShouldTransferFiles = \"NO\"]"), "x"));
    assert!(!transfers(
        &ad("[ShouldTransferFiles = \"IF_NEEDED\"; FileSystemDomain = \"X\"]"),
        "x"
    ));
    assert!(transfers(
        &ad("[ShouldTransferFiles = \"IF_NEEDED\"; FileSystemDomain = \"y\"]"),
        "x"
    ));
    assert!(transfers(&ad("[ShouldTransferFiles = \"IF_NEEDED\"]"), "x"));
}

#[test]
fn a_sandbox_is_private_fresh_emptied_after_each_run_and_removed() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let k = knobs(dir.path());
    let sb = Sandbox::create(&k, "42", true, None).unwrap();
    std::fs::write(sb.path("left"), "x").unwrap();
    std::fs::create_dir(sb.path("sub")).unwrap();
    std::fs::write(sb.path(JOB_AD_FILE), "A = 1\n").unwrap();
    std::fs::set_permissions(&sb.dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    sb.finish();
    let d = dir.path().join("execute/dir_42");
    assert!(
        !d.join("left").exists() && !d.join("sub").exists(),
        "the run's files go"
    );
    let again = Sandbox::create(&k, "42", true, None).unwrap();
    assert_eq!(again.dir, d);
    let mode = std::fs::metadata(&again.dir).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    again.finish();
    Sandbox::remove(&k, "42");
    assert!(!d.exists());
}

#[test]
fn inputs_land_by_base_name_directories_whole_or_by_contents() {
    let dir = tempfile::tempdir().unwrap();
    let iwd = dir.path().join("iwd");
    std::fs::create_dir_all(iwd.join("d/sub")).unwrap();
    std::fs::create_dir_all(iwd.join("e")).unwrap();
    std::fs::write(iwd.join("a.txt"), "a").unwrap();
    std::fs::write(iwd.join("d/sub/x"), "xx").unwrap();
    std::fs::write(iwd.join("e/y"), "yyy").unwrap();
    std::fs::write(iwd.join("run.sh"), "#!/bin/sh\n").unwrap();
    let ad = rc_ad(&format!(
        "[Iwd = \"{}\"; TransferInput = \"a.txt,d,e/\"; Cmd = \"{}\"]",
        iwd.display(),
        iwd.join("run.sh").display()
    ))
    .unwrap();
    let sb = Sandbox::create(&knobs(dir.path()), "1", true, None).unwrap();
    let moved = input::stage_in(&sb, &ad, None, -1, &sides(), None).unwrap();
    assert_eq!(moved.files, 4);
    assert_eq!(moved.bytes, 1 + 2 + 3 + 10);
    assert_eq!(std::fs::read_to_string(sb.path("d/sub/x")).unwrap(), "xx");
    assert_eq!(std::fs::read_to_string(sb.path("y")).unwrap(), "yyy");
    assert!(sb.path("run.sh").is_file());
}

#[test]
fn a_missing_input_is_hold_13_with_the_absolute_path() {
    let dir = tempfile::tempdir().unwrap();
    let ad = rc_ad(&format!(
        "[Iwd = \"{}\"; TransferInput = \"nope.dat\"; TransferExecutable = false]",
        dir.path().display()
    ))
    .unwrap();
    let sb = Sandbox::create(&knobs(dir.path()), "1", true, None).unwrap();
    let h = input::stage_in(&sb, &ad, None, -1, &sides(), None).unwrap_err();
    assert_eq!((h.code, h.subcode), (13, 2));
    assert_eq!(
        h.reason,
        format!(
            "Transfer input files failure at access point here.example while sending files to \
             execution point slot1@here.example. Details: reading from file {}/nope.dat: \
             (errno 2) No such file or directory",
            dir.path().display()
        )
    );
}

#[test]
fn default_output_is_new_or_changed_top_level_files_with_std_files_remapped() {
    let dir = tempfile::tempdir().unwrap();
    let iwd = dir.path().join("iwd");
    std::fs::create_dir_all(&iwd).unwrap();
    let sb = Sandbox::create(&knobs(dir.path()), "1", true, None).unwrap();
    std::fs::write(sb.path("kept.in"), "same").unwrap();
    std::fs::write(sb.path("changed.in"), "old").unwrap();
    let catalog = Catalog::take(&sb);
    std::fs::write(sb.path("changed.in"), "new!").unwrap();
    std::fs::write(sb.path("new.out"), "n").unwrap();
    std::fs::create_dir(sb.path("sub")).unwrap();
    std::fs::write(sb.path("sub/lost"), "l").unwrap();
    std::fs::write(sb.path(STDOUT_FILE), "hello\n").unwrap();
    let ad = rc_ad(&format!(
        "[Iwd = \"{}\"; Out = \"logs/out.txt\"; Err = \"/dev/null\"; \
          TransferOutputRemaps = \"new.out = renamed.out\"]",
        iwd.display()
    ))
    .unwrap();
    let (moved, hold) = output::stage_out(&sb, &ad, &catalog, -1, &sides(), None);
    assert!(hold.is_none(), "{hold:?}");
    assert_eq!(moved.files, 3);
    let mut names: Vec<String> = std::fs::read_dir(&iwd)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["changed.in", "logs", "renamed.out"]);
    assert_eq!(
        std::fs::read_to_string(iwd.join("logs/out.txt")).unwrap(),
        "hello\n"
    );
}

#[test]
fn a_missing_listed_output_is_hold_12_and_the_rest_still_lands() {
    let dir = tempfile::tempdir().unwrap();
    let iwd = dir.path().join("iwd");
    std::fs::create_dir_all(&iwd).unwrap();
    let sb = Sandbox::create(&knobs(dir.path()), "1", true, None).unwrap();
    std::fs::create_dir_all(sb.path("d1/deep")).unwrap();
    std::fs::write(sb.path("d1/deep/f"), "f").unwrap();
    std::fs::write(sb.path("o2"), "2").unwrap();
    let ad = rc_ad(&format!(
        "[Iwd = \"{}\"; TransferOutput = \"gone.dat,d1,o2\"]",
        iwd.display()
    ))
    .unwrap();
    let (_, hold) = output::stage_out(&sb, &ad, &Catalog::default(), -1, &sides(), None);
    let h = hold.unwrap();
    assert_eq!((h.code, h.subcode), (12, 2));
    assert_eq!(
        h.reason,
        format!(
            "Transfer output files failure at execution point slot1@here.example while sending \
             files to access point here.example. Details: reading from file {}: (errno 2) \
             No such file or directory",
            sb.path("gone.dat").display()
        )
    );
    assert_eq!(std::fs::read_to_string(iwd.join("gone.dat")).unwrap(), "");
    assert_eq!(std::fs::read_to_string(iwd.join("d1/deep/f")).unwrap(), "f");
    assert_eq!(std::fs::read_to_string(iwd.join("o2")).unwrap(), "2");
}

#[test]
fn ad_files_are_rewritten_in_place_and_a_planted_symlink_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::create(&knobs(dir.path()), "1", true, None).unwrap();
    let long = parse_ad("[A = \"a long value of the first run\"; B = 2]").unwrap();
    let short = parse_ad("[C = 3]").unwrap();
    adfiles::write(&sb, &long, &long, None, &mut Default::default()).unwrap();
    // A shorter ad over a longer one leaves no tail of the old one.
    adfiles::write(&sb, &short, &short, None, &mut Default::default()).unwrap();
    let text = std::fs::read_to_string(sb.path(JOB_AD_FILE)).unwrap();
    assert_eq!(text, "C = 3\n");
    // A job replaced the file with a link to a file of someone else's.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    std::fs::remove_file(sb.path(JOB_AD_FILE)).unwrap();
    std::os::unix::fs::symlink(&victim, sb.path(JOB_AD_FILE)).unwrap();
    adfiles::write(&sb, &short, &short, None, &mut Default::default()).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    let meta = std::fs::symlink_metadata(sb.path(JOB_AD_FILE)).unwrap();
    assert!(meta.file_type().is_file());
}

#[test]
fn the_starter_copy_moves_iwd_and_std_files_into_the_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    let sb = Sandbox::create(&knobs(dir.path()), "1", true, None).unwrap();
    let ad = rc_ad(
        "[Iwd = \"/home/a/job\"; Cmd = \"/home/a/job/run.sh\"; In = \"sub/in.txt\"; \
          Out = \"o.txt\"; Err = \"o.txt\"]",
    )
    .unwrap();
    let c = Rc::new(adfiles::starter_copy(&ad, &sb));
    assert_eq!(c.eval_str("Iwd").unwrap(), sb.dir.display().to_string());
    assert_eq!(c.eval_str("OrigIwd").unwrap(), "/home/a/job");
    assert_eq!(c.eval_str("OrigCmd").unwrap(), "/home/a/job/run.sh");
    assert_eq!(c.eval_str("Out").unwrap(), STDOUT_FILE);
    assert_eq!(c.eval_str("Err").unwrap(), STDOUT_FILE);
    assert_eq!(c.eval_str("OriginalOut").unwrap(), "o.txt");
    assert_eq!(c.eval_str("In").unwrap(), "in.txt");
}

#[test]
fn the_environment_is_the_starters() {
    let ad = rc_ad(
        "[Environment = \"TMPDIR=/mine OMP_NUM_THREADS=3 X=$$(CondorScratchDir)/sub\"]"
            .replace("$$(CondorScratchDir)", env::SCRATCH_MARK)
            .as_str(),
    )
    .unwrap();
    let ctx = env::Context {
        scratch: Path::new("/ex/dir_9"),
        job_iwd: Path::new("/ex/dir_9"),
        slot: "slot1",
        cpus: 4,
        transfer: true,
    };
    let vars = env::build(
        &ad,
        "\"FROM_CONFIG=1 X=0\"",
        &["OMP_NUM_THREADS".into(), "MKL_NUM_THREADS".into()],
        &ctx,
    )
    .unwrap();
    let get = |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("TMPDIR"), Some("/ex/dir_9"), "the starter's value wins");
    assert_eq!(
        get("OMP_NUM_THREADS"),
        Some("3"),
        "the user's thread count wins"
    );
    assert_eq!(get("MKL_NUM_THREADS"), Some("4"));
    assert_eq!(get("X"), Some("/ex/dir_9/sub"));
    assert_eq!(get("FROM_CONFIG"), Some("1"));
    assert_eq!(get("_CONDOR_SLOT"), Some("slot1"));
    assert_eq!(get("_CONDOR_JOB_AD"), Some("/ex/dir_9/.job.ad"));
    assert_eq!(get("_CONDOR_JOB_PIDS"), Some(""));
    assert_eq!(get("BATCH_SYSTEM"), Some("HTCondor"));
    assert_eq!(get("PATH"), None);
}

#[test]
fn over_the_input_limit_a_file_is_cut_later_ones_are_empty_and_the_job_is_held_32() {
    let dir = tempfile::tempdir().unwrap();
    let iwd = dir.path().join("iwd");
    std::fs::create_dir_all(&iwd).unwrap();
    std::fs::write(iwd.join("a"), vec![b'a'; 700_000]).unwrap();
    std::fs::write(iwd.join("b"), vec![b'b'; 700_000]).unwrap();
    std::fs::write(iwd.join("c"), "c").unwrap();
    let ad = rc_ad(&format!(
        "[Iwd = \"{}\"; TransferInput = \"a,b,c\"; TransferExecutable = false]",
        iwd.display()
    ))
    .unwrap();
    let sb = Sandbox::create(&knobs(dir.path()), "1", true, None).unwrap();
    let h = input::stage_in(&sb, &ad, None, 1, &sides(), None).unwrap_err();
    assert_eq!((h.code, h.subcode), (32, 0));
    assert_eq!(
        h.reason,
        format!(
            "Error from slot1@here.example: Failed to transfer files: |Error: sending file {}: \
             max total upload bytes exceeded (max=1 MB, this file=1 MB)",
            iwd.join("b").display()
        )
    );
    let len = |n: &str| std::fs::metadata(sb.path(n)).unwrap().len();
    assert_eq!(
        (len("a"), len("b"), len("c")),
        (700_000, 1_048_576 - 700_000, 0)
    );
    // The job's own limit wins over the knob's.
    let ad = rc_ad(&format!(
        "[Iwd = \"{}\"; TransferInput = \"a,b,c\"; TransferExecutable = false; MaxTransferInputMB = 2]",
        iwd.display()
    ))
    .unwrap();
    assert!(input::stage_in(&sb, &ad, None, 1, &sides(), None).is_ok());
}

#[test]
fn over_the_output_limit_the_job_is_held_33() {
    let dir = tempfile::tempdir().unwrap();
    let iwd = dir.path().join("iwd");
    std::fs::create_dir_all(&iwd).unwrap();
    let sb = Sandbox::create(&knobs(dir.path()), "1", true, None).unwrap();
    std::fs::write(sb.path("big"), vec![b'x'; 1_500_000]).unwrap();
    let ad = rc_ad(&format!(
        "[Iwd = \"{}\"; MaxTransferOutputMB = 1]",
        iwd.display()
    ))
    .unwrap();
    let (_, hold) = output::stage_out(&sb, &ad, &Catalog::default(), -1, &sides(), None);
    let h = hold.unwrap();
    assert_eq!((h.code, h.subcode), (33, 0));
    assert!(
        h.reason
            .contains("max total download bytes exceeded (max=1 MB, this file=2 MB)"),
        "{h:?}"
    );
    assert_eq!(std::fs::metadata(iwd.join("big")).unwrap().len(), 1_048_576);
}

#[test]
fn a_url_of_a_scheme_without_a_plugin_holds_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let ad = rc_ad(&format!(
        "[Iwd = \"{}\"; TransferInput = \"gopher://example.org/x\"; TransferExecutable = false]",
        dir.path().display()
    ))
    .unwrap();
    let sb = Sandbox::create(&knobs(dir.path()), "1", true, None).unwrap();
    let h = input::stage_in(&sb, &ad, None, -1, &sides(), None).unwrap_err();
    assert_eq!((h.code, h.subcode), (13, 0));
    assert_eq!(
        h.reason,
        "Transfer input files failure at execution point slot1@here.example using protocol \
         gopher. Details: FILETRANSFER: plugin for type gopher not found!"
    );
}

#[test]
fn a_symlink_to_a_file_arrives_as_a_file_and_to_a_directory_needs_a_slash() {
    let dir = tempfile::tempdir().unwrap();
    let iwd = dir.path().join("iwd");
    std::fs::create_dir_all(iwd.join("real")).unwrap();
    std::fs::write(iwd.join("real/f"), "f").unwrap();
    std::os::unix::fs::symlink(iwd.join("real/f"), iwd.join("link")).unwrap();
    std::os::unix::fs::symlink(iwd.join("real"), iwd.join("dirlink")).unwrap();
    let ad = |list: &str| {
        rc_ad(&format!(
            "[Iwd = \"{}\"; TransferInput = \"{list}\"; TransferExecutable = false]",
            iwd.display()
        ))
        .unwrap()
    };
    let sb = Sandbox::create(&knobs(dir.path()), "1", true, None).unwrap();
    input::stage_in(&sb, &ad("link,dirlink/"), None, -1, &sides(), None).unwrap();
    let m = std::fs::symlink_metadata(sb.path("link")).unwrap();
    assert!(m.file_type().is_file(), "a regular file, not a link");
    assert_eq!(std::fs::read_to_string(sb.path("f")).unwrap(), "f");
    let h = input::stage_in(&sb, &ad("dirlink"), None, -1, &sides(), None).unwrap_err();
    assert_eq!((h.code, h.subcode), (13, libc::EISDIR as i64));
    assert!(
        h.reason.ends_with(&format!(
            "reading from file {}: (errno 21) Is a directory- Transfer of symlinks to \
             directories is not supported.",
            iwd.join("dirlink").display()
        )),
        "{}",
        h.reason
    );
}

#[test]
fn a_remap_cycle_and_a_missing_absolute_directory_hold_with_code_12() {
    let dir = tempfile::tempdir().unwrap();
    let iwd = dir.path().join("iwd");
    std::fs::create_dir_all(&iwd).unwrap();
    let sb = Sandbox::create(&knobs(dir.path()), "1", true, None).unwrap();
    std::fs::write(sb.path("a"), "a").unwrap();
    let run = |remaps: &str| {
        let ad = rc_ad(&format!(
            "[Iwd = \"{}\"; TransferOutput = \"a\"; TransferOutputRemaps = \"{remaps}\"]",
            iwd.display()
        ))
        .unwrap();
        output::stage_out(&sb, &ad, &Catalog::default(), -1, &sides(), None)
            .1
            .unwrap()
    };
    let h = run("a=b;b=a");
    assert_eq!((h.code, h.subcode), (12, libc::EPERM as i64));
    assert!(
        h.reason.ends_with("Details: remaps resulted in a cycle: a"),
        "{h:?}"
    );
    let h = run("a=/no/such/dir/blah");
    assert_eq!((h.code, h.subcode), (12, 2));
    assert_eq!(
        h.reason,
        "Transfer output files failure at access point here.example while receiving files \
         from execution point slot1@here.example. Details: writing to file /no/such/dir/blah: \
         (errno 2) No such file or directory"
    );
}
