//! `tern_transform_ads` on files, compared output for output: every worked
//! case of the transform section of the spec (HTCondor's
//! `cmd_transform_ads.run`: "general", "EVAL", the iteration cases and
//! "regex"), routes from the configuration, the old route syntax, and the
//! errors.
//!
//! The expected outputs are derived by hand from the spec and from
//! `xform_utils.cpp` / `transform_ads.cpp`. HTCondor 24.0's Python bindings
//! have no transform API, but the wheel's `libcondor_utils` holds the
//! transform code itself: `tests/transform_diff/run.sh` drives it through a
//! small C++ shim and compares it with `tern_transform_ads` case by case
//! (the same spec cases and more); these tests pin tern's output on their
//! own, without the wheel or a compiler.

use crate::common::TestEnv;

/// Two job ads with the attributes the spec's cases touch.
const JOBS: &str = "\
ClusterId = 1
ProcId = 0
Owner = \"alice\"
ExitBySignal = false
NumCkpts = 0
TransferInputSizeMB = 0
TransferErr = false
Err = \"/dev/null\"
ResidentSetSize = 500
DiskUsage = 2500000
MaxHosts = 1
RemoteUser = \"alice@x\"
NiceUser = false
User = \"alice@x\"
RequestCpus = 1
RequestMemory = 128
RequestDisk = 1000

ClusterId = 1
ProcId = 1
Owner = \"bob\"
ExitBySignal = true
NumCkpts = 2
Err = \"e\"
";

fn env() -> TestEnv {
    let env = TestEnv::with_spool();
    env.write("jobs.ads", JOBS);
    env
}

/// Runs with `rules` as `r.xfm` on jobs.ads plus `args`.
fn transform(env: &TestEnv, rules: &str, args: &[&str]) -> crate::common::Run {
    env.write("r.xfm", rules);
    let mut argv = vec!["-rules", "r.xfm"];
    argv.extend_from_slice(args);
    argv.push("jobs.ads");
    env.run("tern_transform_ads", argv)
}

/// Just the values of `attr` in the output, one a line.
fn values(out: &str, attr: &str) -> Vec<String> {
    let prefix = format!("{attr} = ");
    out.lines()
        .filter_map(|l| l.strip_prefix(&prefix).map(String::from))
        .collect()
}

#[test]
fn general() {
    let env = env();
    transform(
        &env,
        "SET ClusterId 200\nDEFAULT Fooo \"test\"\nCOPY ExitBySignal TransferIn\n\
         RENAME NumCkpts NumCheckPoints\nDELETE TransferInputSizeMB\nDELETE /(.+)Err/\nTRANSFORM 1",
        &[],
    )
    .ok("ClusterId = 200
DiskUsage = 2500000
Err = \"/dev/null\"
ExitBySignal = false
Fooo = \"test\"
MaxHosts = 1
NiceUser = false
NumCheckPoints = 0
Owner = \"alice\"
ProcId = 0
RemoteUser = \"alice@x\"
RequestCpus = 1
RequestDisk = 1000
RequestMemory = 128
ResidentSetSize = 500
TransferIn = false
User = \"alice@x\"

ClusterId = 200
Err = \"e\"
ExitBySignal = true
Fooo = \"test\"
NumCheckPoints = 2
Owner = \"bob\"
ProcId = 1
TransferIn = true

");
}

#[test]
fn eval() {
    let env = env();
    let r = transform(
        &env,
        "EVALSET MemoryUsage ( ResidentSetSize / 100 )\nEVALMACRO WantDisk = ( DiskUsage * 2 )\n\
         SET RequestDisk ( $(WantDisk) / 1024 )\nTRANSFORM 1",
        &[],
    );
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    // The second ad has neither attribute: undefined, and the macro is the
    // text "undefined".
    assert_eq!(values(&r.stdout, "MemoryUsage"), ["5", "undefined"]);
    assert_eq!(
        values(&r.stdout, "RequestDisk"),
        ["(5000000 / 1024)", "(undefined / 1024)"]
    );
}

#[test]
fn transform_num_gives_n_ads_per_input_ad() {
    let env = env();
    let eight: String = (0..8).map(|i| format!("ProcId = {i}\n\n")).collect();
    env.write("jobs.ads", &eight);
    let r = transform(&env, "TRANSFORM 5", &[]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let procs = values(&r.stdout, "ProcId");
    assert_eq!(procs.len(), 40);
    // Grouped per input ad.
    assert_eq!(&procs[..6], ["0", "0", "0", "0", "0", "1"]);
}

#[test]
fn transform_in() {
    let env = env();
    let r = transform(
        &env,
        "SET ARG1 $(argument)\nTRANSFORM argument in (2.0, 100, \"test\")",
        &[],
    );
    assert_eq!(
        values(&r.stdout, "ARG1"),
        ["2.0", "100", "\"test\"", "2.0", "100", "\"test\""]
    );
    let r = transform(
        &env,
        "SET ARG1 $(argument)\nTRANSFORM 2 argument in (2.0, 100, \"test\")",
        &[],
    );
    assert_eq!(
        values(&r.stdout, "ARG1")[..6],
        ["2.0", "2.0", "100", "100", "\"test\"", "\"test\""]
    );
    assert_eq!(values(&r.stdout, "ARG1").len(), 12);
}

#[test]
fn transform_from_rows_a_file_and_repeated() {
    let env = env();
    let rows = "SET SIZE_IMAGE $(macro1)\nSET SIZE_DISK $(macro2)\nTRANSFORM macro1, macro2 from (\n\
                1000 120.0\n2000 128.0\n)";
    let r = transform(&env, rows, &[]);
    assert_eq!(
        values(&r.stdout, "SIZE_IMAGE"),
        ["1000", "2000", "1000", "2000"]
    );
    assert_eq!(
        values(&r.stdout, "SIZE_DISK"),
        ["120.0", "128.0", "120.0", "128.0"]
    );
    env.write("rows.txt", "1000 120.0\n2000 128.0\n");
    let r = transform(
        &env,
        "SET SIZE_IMAGE $(macro1)\nSET SIZE_DISK $(macro2)\nTRANSFORM macro1, macro2 from rows.txt",
        &[],
    );
    assert_eq!(
        values(&r.stdout, "SIZE_DISK"),
        ["120.0", "128.0", "120.0", "128.0"]
    );
    let r = transform(
        &env,
        &rows.replace("TRANSFORM macro1", "TRANSFORM 2 macro1"),
        &[],
    );
    assert_eq!(
        values(&r.stdout, "SIZE_IMAGE"),
        [
            "1000", "1000", "2000", "2000", "1000", "1000", "2000", "2000"
        ]
    );
}

#[test]
fn regex() {
    let env = env();
    let r = transform(
        &env,
        "COPY /^Max(.+)/  TotalSuspensions\nRENAME /(.+)User/ Test\\0\nRENAME /^Request(.+)/ Time\\1\nTRANSFORM",
        &[],
    );
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let first = r.stdout.split("\n\n").next().unwrap();
    assert_eq!(
        first,
        "ClusterId = 1
DiskUsage = 2500000
Err = \"/dev/null\"
ExitBySignal = false
MaxHosts = 1
NumCkpts = 0
Owner = \"alice\"
ProcId = 0
ResidentSetSize = 500
TestNiceUser = false
TestRemoteUser = \"alice@x\"
TimeCpus = 1
TimeDisk = 1000
TimeMemory = 128
TotalSuspensions = 1
TransferErr = false
TransferInputSizeMB = 0
User = \"alice@x\""
    );
}

/// The ads of JOBS, each in sorted long form.
fn jobs_sorted() -> Vec<String> {
    JOBS.trim_end()
        .split("\n\n")
        .map(|ad| {
            let mut lines: Vec<&str> = ad.lines().collect();
            lines.sort_by_key(|l| l.split(' ').next().unwrap_or("").to_ascii_lowercase());
            lines.join("\n") + "\n"
        })
        .collect()
}

#[test]
fn requirements_if_and_config_macros() {
    let env = env();
    env.write("tern_config", "COLLECTOR_NAME = jira902\n");
    let env = env.var("TERN_CONFIG", Some("tern_config"));
    let rules = "REQUIREMENTS ProcId == 1\nSET CollHost \"$(COLLECTOR_NAME)\"\n\
                 if defined MY.NumCkpts\n SET Who \"$(MY.Owner) had $(MY.NumCkpts)\"\nelse\n\
                 SET Who \"none\"\nendif\nDELETE /^(Err|Exit|Num)/";
    // Ad 1 does not match and comes out as it went in.
    let jobs = jobs_sorted();
    transform(&env, rules, &[]).ok(&format!(
        "{}\nClusterId = 1\nCollHost = \"jira902\"\nOwner = \"bob\"\nProcId = 1\nWho = \"bob had 2\"\n\n",
        jobs[0]
    ));
}

#[test]
fn a_route_from_the_configuration() {
    let env = env();
    env.write(
        "tern_config",
        "JOB_ROUTER_ROUTE_Slurm @=end\n  REQUIREMENTS Owner == \"bob\"\n  UNIVERSE grid\n  \
         GridResource = batch slurm\n  SET GridResource \"$(GridResource)\"\n  SET Routed true\n@end\n\
         JOB_ROUTER_ROUTE_Old = [ Name = \"Old\"; TargetUniverse = 5; set_Old = 1; \
         Requirements = TARGET.Owner == \"alice\" ]\n",
    );
    let env = env.var("TERN_CONFIG", Some("tern_config"));
    let r = env.run(
        "tern_transform_ads",
        [
            "-jobroute",
            "Slurm",
            "-jobroute",
            "Old",
            "-verbose",
            "jobs.ads",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(values(&r.stdout, "GridResource"), ["\"batch slurm\""]);
    assert_eq!(values(&r.stdout, "Routed"), ["true"]);
    assert_eq!(values(&r.stdout, "Old"), ["1"]);
    assert_eq!(
        r.stderr,
        "# Applying transforms to ads from jobs.ads\n#   Job 1.0\n#   Transform Slurm Skipped\n\
         #   Transform Old \n#   Job 1.1\n#   Transform Slurm \n#   Transform Old Skipped\n"
    );
    let r = env.run("tern_transform_ads", ["-jobroute", "Nope", "jobs.ads"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            1,
            "",
            "tern_transform_ads: error: JOB_ROUTER_ROUTE_Nope is not defined in the configuration\n"
        )
    );
}

#[test]
fn convertoldroutes() {
    let env = env();
    env.write(
        "tern_config",
        "JOB_ROUTER_DEFAULTS = [ MaxIdleJobs = 10; set_Routed = true ]\n\
         JOB_ROUTER_ENTRIES = [ Name = \"A\"; GridResource = \"batch slurm\"; \
         Requirements = TARGET.Owner == \"alice\"; set_InputRSL = 1 ] \
         [ Name = \"B\"; TargetUniverse = 5; delete_X = true ]\n",
    );
    let env = env.var("TERN_CONFIG", Some("tern_config"));
    // As condor_transform_ads prints them: NAME, UNIVERSE (by name) and
    // REQUIREMENTS first, no blank lines, set_InputRSL dropped.
    let expected = "
##### JOB_ROUTER_ENTRIES [1] #####
NAME A
REQUIREMENTS Owner == \"alice\"
# autoconversion of route 'A' from old route syntax
GridResource = \"batch slurm\"
MaxIdleJobs = 10
# set_* rules
SET Routed true

##### JOB_ROUTER_ENTRIES [2] #####
NAME B
UNIVERSE VANILLA
# autoconversion of route 'B' from old route syntax
MaxIdleJobs = 10
# delete_* rules
DELETE X
# set_* rules
SET Routed true
";
    env.run("tern_transform_ads", ["-convertoldroutes"])
        .ok(expected);
    // Routes in JOB_ROUTER_ENTRIES_FILE follow.
    env.write("entries", "[ Name = \"C\"; set_Y = 2 ]");
    let cfg_text = std::fs::read_to_string(env.path("tern_config")).unwrap();
    env.write(
        "tern_config",
        &(cfg_text + "JOB_ROUTER_ENTRIES_FILE = entries\n"),
    );
    let r = env.run("tern_transform_ads", ["-convertoldroutes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.ends_with(
            "SET Routed true\n\n##### JOB_ROUTER_ENTRIES_FILE [1] #####\nNAME C\n\
             # autoconversion of route 'C' from old route syntax\nMaxIdleJobs = 10\n\
             # set_* rules\nSET Routed true\nSET Y 2\n"
        ),
        "{}",
        r.stdout
    );
    // From a file: JOB_ROUTER_ROUTE_<name> definitions and the names.
    let r = env.var("TERN_CONFIG", Some("/dev/null")).run(
        "tern_transform_ads",
        ["-convertoldroutes:file", "tern_config"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with(
        "\n##### Route 1\nJOB_ROUTER_ROUTE_A @=jre\n   REQUIREMENTS Owner == \"alice\"\n   # autoconversion of route 'A' from old route syntax\n"
    ), "{}", r.stdout);
    assert!(
        r.stdout.ends_with(
            "@jre\nneed JOB_ROUTER_ENTRIES_FILE entries\n\nJOB_ROUTER_ROUTE_NAMES = A B\n"
        ),
        "{}",
        r.stdout
    );
}

#[test]
fn formats_out_file_and_key_values() {
    let env = env();
    env.write("r.xfm", "SET Site \"$(SITE)\"\nSET M $(MY.ProcId) + 1");
    let r = env.run(
        "tern_transform_ads",
        [
            "-rules",
            "r.xfm",
            "SITE=west",
            "-out:json",
            "out.json",
            "-in:long",
            "jobs.ads",
        ],
    );
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "", ""));
    let json = std::fs::read_to_string(env.path("out.json")).unwrap();
    assert!(json.starts_with("[\n{\n  \"ClusterId\": 1,\n"), "{json}");
    assert!(json.contains("\"Site\": \"west\""), "{json}");
    assert!(json.contains("\n}\n,\n{\n"), "{json}");
    assert!(json.ends_with("\n}\n]\n"), "{json}");
    // JSON back in, one line per ad out in new syntax.
    env.write("one.ad", "[ A = 1; b = \"x\" ]");
    env.write("r2.xfm", "RENAME A Z");
    env.run(
        "tern_transform_ads",
        ["-rules", "r2.xfm", "-out:new", "-", "-in:new", "one.ad"],
    )
    .ok("{\n[ b = \"x\"; Z = 1 ]\n}\n");
    // What -out:new writes reads back in.
    let r = env.run(
        "tern_transform_ads",
        ["-rules", "r2.xfm", "-out:new", "two.new", "jobs.ads"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    env.write("r3.xfm", "SET Back 1");
    let r = env.run("tern_transform_ads", ["-rules", "r3.xfm", "two.new"]);
    assert_eq!(values(&r.stdout, "Back"), ["1", "1"]);
    // Unsorted long form keeps the ad's order.
    env.run(
        "tern_transform_ads",
        ["-rules", "r2.xfm", "-out:nosort", "-", "one.ad"],
    )
    .ok("b = \"x\"\nZ = 1\n\n");
}

#[test]
fn rules_from_stdin_and_ads_from_stdin() {
    use std::io::Write;
    use std::process::Stdio;
    let env = env();
    env.write("r.xfm", "SET B = A * 2");
    let mut child = env
        .command("tern_transform_ads")
        .args(["-rules", "r.xfm", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"A = 2\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "A = 2\nB = A * 2\n\n");
}

#[test]
fn errors_name_the_file_and_line_and_write_nothing() {
    let env = env();
    let r = transform(&env, "SET A 1\n\nFROB A", &["-out", "out.ads"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            1,
            "",
            "tern_transform_ads: error: r.xfm, line 3: FROB is not a valid transform keyword\n"
        )
    );
    assert!(!env.path("out.ads").exists());
    transform(&env, "if defined X\nSET A 1\n", &[]).fails(
        1,
        "tern_transform_ads: error: r.xfm, line 1: 'if' without 'endif' before the end of the transform\n",
    );
    transform(&env, "SET A 1\nTRANSFORM 2\nSET B 2\n", &[]).fails(
        1,
        "tern_transform_ads: error: r.xfm, line 3: TRANSFORM (line 2) must be the last statement of a rules file\n",
    );
    // A condition that cannot be tested fails the run, after the ads read.
    transform(&env, "if $(Nope:maybe)\nSET A 1\nendif\n", &[]).fails(
        1,
        "tern_transform_ads: error: r.xfm, line 1: bad 'if': '$(Nope:maybe)' expands to 'maybe', which is not a boolean\n",
    );
    env.write("bad.ads", "A = 1\nB = (\n");
    let r = env.run("tern_transform_ads", ["-rules", "r.xfm", "bad.ads"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .starts_with("tern_transform_ads: error: ads file 'bad.ads': line 2"),
        "{}",
        r.stderr
    );
    let hint = "hint: 'tern_transform_ads -help' lists the options\n";
    env.run("tern_transform_ads", ["jobs.ads"]).fails(
        1,
        &format!("tern_transform_ads: error: no transform rules specified\n{hint}"),
    );
    env.run("tern_transform_ads", ["-rules", "r.xfm"]).fails(
        1,
        &format!(
            "tern_transform_ads: error: no input file specified - nothing to transform\n{hint}"
        ),
    );
    env.run("tern_transform_ads", ["-rules", "missing.xfm", "jobs.ads"])
        .fails(
            1,
            "tern_transform_ads: error: cannot read 'missing.xfm': No such file or directory\n",
        );
    let r = env.run("tern_transform_ads", Vec::<&str>::new());
    assert_eq!((r.code, r.stdout.as_str()), (1, ""));
    assert!(
        r.stderr.starts_with("Transform ClassAds with rules"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_bad_set_warns_and_goes_on() {
    let env = env();
    env.write("one.ad", "A = 1\n");
    env.write("r.xfm", "SET B = (1 +\nSET C = 2\nCOPY A 9x");
    let r = env.run("tern_transform_ads", ["-rules", "r.xfm", "one.ad"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            0,
            "A = 1\nC = 2\n\n",
            "tern_transform_ads: warning: r.xfm, line 1: SET B invalid expression : (1 + \
             (line 1, column 5: expected an expression, found end of input)\n\
             tern_transform_ads: warning: r.xfm, line 3: COPY A new name 9x is not valid\n"
        )
    );
}

#[test]
fn help_forms() {
    let env = env();
    let r = env.run("tern_transform_ads", ["-help", "rules"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("\nTransform rules:\n"), "{}", r.stdout);
    let r = env.run("tern_transform_ads", ["-h"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("-convertoldroutes"), "{}", r.stdout);
}

/// The schedd's JOB_TRANSFORM_NAMES at submit time (HTCondor's
/// `job_transform_names_test`): transforms in order, a false REQUIREMENTS
/// skipped, config macros expanded, a per-proc EVALSET, a `+` attribute
/// deleted, and a transform that sets an immutable attribute failing the
/// whole submission.
#[test]
fn job_transform_names_at_submit_time() {
    let env = TestEnv::with_spool();
    env.write(
        "tern_config",
        "OPSYSANDVER = Linux9\n\
         JOB_TRANSFORM_NAMES = BAD ILLEGAL ALWAYS NEVER ALWAYS_NEWSCRIPT\n\
         JOB_TRANSFORM_BAD @=end\n[\n  set_NeverThere3 = \"Please work!\";\n  12foo = asd\"as\";\n]\n@end\n\
         JOB_TRANSFORM_ILLEGAL @=end\n[\n  requirements = illegal =?= true;\n  set_ClusterId = -999;\n]\n@end\n\
         JOB_TRANSFORM_ALWAYS @=end\n[\n  requirements = True;\n  \
         set_AlwaysThere = \"Please work on $(OPSYSANDVER)\";\n  delete_NeverThere2 = true;\n  \
         eval_set_OnlyProcZero = ProcId == 0 ? \"Please work - proc zero\" : \"Please work - proc non-zero\"\n]\n@end\n\
         JOB_TRANSFORM_NEVER @=end\n[\n  requirements = False;\n  set_NeverThere1 = \"Please work!\";\n]\n@end\n\
         JOB_TRANSFORM_ALWAYS_NEWSCRIPT @=end\n  SET AlwaysThereNew = \"Please work on $(OPSYSANDVER)\"\n  \
         DELETE NeverThereNew\n@end\n",
    );
    let env = env.var("TERN_CONFIG", Some("tern_config"));
    let sub = "executable = /bin/true\nhold = true\n+NeverThere2 = \"Please work!\"\n\
               +NeverThereNew = 1\n+illegal = ILLEGAL\nqueue 2\n";
    env.write("illegal.sub", &sub.replace("ILLEGAL", "true"));
    let r = env.run("tern_submit", ["illegal.sub"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "the transform ILLEGAL changes the immutable attribute ClusterId; nothing was submitted"
        ),
        "{}",
        r.stderr
    );
    env.run("tern_q", ["-af", "ProcId"]).ok("");
    env.write("job.sub", &sub.replace("ILLEGAL", "false"));
    let r = env.run("tern_submit", ["job.sub"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("WARNING: JOB_TRANSFORM_BAD is ignored"),
        "{}",
        r.stderr
    );
    env.run(
        "tern_q",
        ["-af", "AlwaysThere", "AlwaysThereNew", "OnlyProcZero", "NeverThere1", "NeverThere2", "NeverThere3", "NeverThereNew"],
    )
    .ok("Please work on Linux9 Please work on Linux9 Please work - proc zero undefined undefined undefined undefined\n\
         Please work on Linux9 Please work on Linux9 Please work - proc non-zero undefined undefined undefined undefined\n");
}
