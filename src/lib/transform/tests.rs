//! Unit tests of the transform language: one case per command and rule of
//! spec section 6 (expected values derived by hand from the spec and from
//! `xform_utils.cpp`, and checked against HTCondor's own transform code by
//! `tests/transform_diff/`).

use super::*;
use crate::classad::old::parse_old_ad;
use crate::classad::unparse::ad_to_old;
use crate::classad::{ClassAd, parse_expr};
use crate::config::Config;

fn cfg() -> Config {
    let mut c = Config::defaults();
    c.parse_str(
        "COLLECTOR_NAME = jira902\nSITE = west\nBIG = 1000\n",
        "test_config",
    )
    .unwrap();
    c
}

fn ad(text: &str) -> ClassAd {
    parse_old_ad(text).unwrap()
}

/// Applies `rules` to the ad and returns it in sorted long form, with the
/// warnings.
fn run_with(rules: &str, input: &str, macros: &mut Macros) -> (String, Vec<String>) {
    let t = Transform::parse(rules, "rules").unwrap();
    let mut a = ad(input);
    let w = t.apply(&mut a, macros, &cfg()).unwrap();
    (ad_to_old(&a, true), w)
}

fn run(rules: &str, input: &str) -> String {
    let (out, w) = run_with(rules, input, &mut Macros::new());
    assert!(w.is_empty(), "unexpected warnings {w:?}");
    out
}

/// The value of one attribute after the transform, in old syntax.
fn attr(rules: &str, input: &str, name: &str) -> Option<String> {
    let t = Transform::parse(rules, "rules").unwrap();
    let mut a = ad(input);
    t.apply(&mut a, &mut Macros::new(), &cfg()).unwrap();
    a.get(name).map(crate::classad::unparse::unparse_old)
}

fn parse_err(rules: &str) -> String {
    Transform::parse(rules, "rules.xfm")
        .unwrap_err()
        .to_string()
}

#[test]
fn set_stores_the_expression_unevaluated() {
    assert_eq!(
        run("SET ClusterId 200", "ClusterId = 1\n"),
        "ClusterId = 200\n"
    );
    assert_eq!(run("SET A = B + 1", "B = 2\n"), "A = B + 1\nB = 2\n");
    assert_eq!(run("set A, \"x\"", ""), "A = \"x\"\n");
    // A trailing `=` or `,` on the name is stripped.
    assert_eq!(run("SET A= 3", ""), "A = 3\n");
    assert_eq!(run("SET A, 3", ""), "A = 3\n");
}

#[test]
fn set_with_a_bad_expression_warns_and_continues() {
    let (out, w) = run_with("SET A = (1 +\nSET B = 2", "", &mut Macros::new());
    assert_eq!(out, "B = 2\n");
    assert_eq!(w.len(), 1);
    assert!(
        w[0].starts_with("rules, line 1: SET A invalid expression"),
        "{w:?}"
    );
}

#[test]
fn default_sets_only_a_missing_attribute() {
    assert_eq!(run("DEFAULT Fooo \"test\"", ""), "Fooo = \"test\"\n");
    assert_eq!(run("DEFAULT Fooo \"test\"", "fooo = 1\n"), "fooo = 1\n");
    // An attribute whose value is the literal undefined exists: kept.
    assert_eq!(run("DEFAULT A 5", "A = undefined\n"), "A = undefined\n");
}

#[test]
fn evalset_stores_the_value() {
    assert_eq!(
        attr(
            "EVALSET MemoryUsage (ResidentSetSize/100)",
            "ResidentSetSize = 500\n",
            "MemoryUsage"
        ),
        Some("5".into())
    );
    assert_eq!(
        attr("EVALSET L = {1, A}", "A = 2\n", "L"),
        // The list is copied as it evaluated: its items unevaluated, as
        // HTCondor copies an ExprList.
        Some("{ 1,A }".into())
    );
    assert_eq!(
        attr("EVALSET U = Missing", "", "U"),
        Some("undefined".into())
    );
    assert_eq!(
        attr("EVALSET S = strcat(\"a\", B)", "B = \"b\"\n", "S"),
        Some("\"ab\"".into())
    );
}

#[test]
fn evalmacro_sets_a_macro_for_later_lines() {
    // Spec 6.4 "EVAL": the macro is the value, the SET stores the text.
    assert_eq!(
        attr(
            "EVALMACRO WantDisk = (DiskUsage*2)\nSET RequestDisk ($(WantDisk)/1024)",
            "DiskUsage = 2500000\n",
            "RequestDisk"
        ),
        Some("(5000000 / 1024)".into())
    );
    // A string value goes in without its quotes.
    assert_eq!(
        attr(
            "EVALMACRO W = strcat(\"a\", \"b\")\nSET X = \"$(W)\"",
            "",
            "X"
        ),
        Some("\"ab\"".into())
    );
}

#[test]
fn copy_rename_delete_plain_names() {
    assert_eq!(
        run("COPY ExitBySignal TransferIn", "ExitBySignal = false\n"),
        "ExitBySignal = false\nTransferIn = false\n"
    );
    assert_eq!(run("COPY Missing Other", "A = 1\n"), "A = 1\n");
    assert_eq!(
        run("RENAME NumCkpts NumCheckPoints", "NumCkpts = 3\n"),
        "NumCheckPoints = 3\n"
    );
    // Renaming to the same name in another case takes the new spelling.
    assert_eq!(
        run("RENAME numckpts NUMCKPTS", "NumCkpts = 3\n"),
        "NUMCKPTS = 3\n"
    );
    assert_eq!(
        run(
            "DELETE TransferInputSizeMB",
            "TransferInputSizeMB = 1\nErr = 2\n"
        ),
        "Err = 2\n"
    );
    let (out, w) = run_with("COPY A 1bad", "A = 1\n", &mut Macros::new());
    assert_eq!(out, "A = 1\n");
    assert_eq!(w, vec!["rules, line 1: COPY A new name 1bad is not valid"]);
}

#[test]
fn macros_expand_from_the_transform_then_the_ad_then_config() {
    let rules = "X = from_macro\nSET A = \"$(X)\"\nSET B = \"$(MY.Owner)\"\n\
                 SET C = \"$(COLLECTOR_NAME)\"\nSET D = $(MY.Expr)\nSET E = \"$(Nothing)\"";
    assert_eq!(
        run(rules, "Owner = \"alice\"\nExpr = X + 1\n"),
        "A = \"from_macro\"\nB = \"alice\"\nC = \"jira902\"\nD = X + 1\nE = \"\"\n\
         Expr = X + 1\nOwner = \"alice\"\n"
    );
    // A transform macro hides a configuration value of the same name.
    assert_eq!(
        attr("SITE = east\nSET S = \"$(SITE)\"", "", "S"),
        Some("\"east\"".into())
    );
    // A `$` in an attribute is literal.
    assert_eq!(
        attr("SET S = \"$(MY.P)\"", "P = \"a$(SITE)\"\n", "S"),
        Some("\"a$(SITE)\"".into())
    );
}

#[test]
fn macros_carry_over_between_transforms() {
    let mut m = Macros::new();
    run_with("Q = shared", "", &mut m);
    let (out, _) = run_with("SET Q = \"$(Q)\"", "", &mut m);
    assert_eq!(out, "Q = \"shared\"\n");
}

#[test]
fn self_reference_in_a_macro() {
    assert_eq!(
        attr("L = a\nL = $(L) b\nSET X = \"$(L)\"", "", "X"),
        Some("\"a b\"".into())
    );
}

#[test]
fn if_elif_else_endif() {
    let rules = "if defined MY.Fast\n SET Q = \"fast\"\nelif $(Slow:false)\n SET Q = \"slow\"\n\
                 else\n SET Q = \"normal\"\nendif";
    assert_eq!(attr(rules, "Fast = 1\n", "Q"), Some("\"fast\"".into()));
    assert_eq!(
        attr(&format!("Slow = true\n{rules}"), "", "Q"),
        Some("\"slow\"".into())
    );
    assert_eq!(attr(rules, "", "Q"), Some("\"normal\"".into()));
    // Nested, in a dead branch.
    assert_eq!(
        attr(
            "if false\n if true\n SET A 1\n endif\nelse\n SET A 2\nendif",
            "",
            "A"
        ),
        Some("2".into())
    );
    // `SET = x` is an assignment to the macro SET, not a command.
    assert_eq!(attr("SET = 4\nSET A $(SET)", "", "A"), Some("4".into()));
}

#[test]
fn a_bad_condition_is_an_error_with_its_line() {
    let t = Transform::parse("SET A 1\nif Owner + 1\nendif", "r.xfm").unwrap();
    let e = t
        .apply(&mut ClassAd::new(), &mut Macros::new(), &cfg())
        .unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.to_string().starts_with("r.xfm, line 2: bad 'if'"), "{e}");
}

#[test]
fn meta_statements_anywhere_and_not_conditional() {
    let t = Transform::parse(
        "SET A 1\nif false\nNAME Inside\nREQUIREMENTS JobUniverse == 5\nUNIVERSE vanilla\nendif",
        "r",
    )
    .unwrap();
    assert_eq!(t.name(), Some("Inside"));
    assert_eq!(t.universe(), Some(5));
    assert_eq!(t.requirements_text(), Some("JobUniverse == 5"));
    assert_eq!(
        Transform::parse("UNIVERSE 9", "r").unwrap().universe(),
        Some(9)
    );
    assert_eq!(
        Transform::parse("universe Grid", "r").unwrap().universe(),
        Some(9)
    );
    // `NAME = x` is a macro.
    let t = Transform::parse("NAME = x", "r").unwrap();
    assert_eq!(t.name(), None);
    assert!(parse_err("UNIVERSE bogus").contains("line 1: UNIVERSE 'bogus'"));
}

#[test]
fn requirements_decide_matches() {
    let t = Transform::parse("REQUIREMENTS ProcId % 2 == 1", "r").unwrap();
    assert!(t.matches(&ad("ProcId = 1\n")));
    assert!(!t.matches(&ad("ProcId = 2\n")));
    // Undefined does not match; a non-zero number does; a string does not.
    assert!(!t.matches(&ad("")));
    let t = Transform::parse("REQUIREMENTS X", "r").unwrap();
    assert!(t.matches(&ad("X = 3\n")));
    assert!(t.matches(&ad("X = 0.5\n")));
    assert!(!t.matches(&ad("X = 0\n")));
    assert!(!t.matches(&ad("X = \"yes\"\n")));
    assert!(Transform::parse("SET A 1", "r").unwrap().matches(&ad("")));
    let shared = std::rc::Rc::new(ad("X = 2\n"));
    assert!(t.matches_shared(&shared));
    assert!(!t.matches_shared(&std::rc::Rc::new(ad("X = false\n"))));
    // Evaluated against the ad as it is, before any SET.
    let t = Transform::parse("REQUIREMENTS Routed =!= true\nSET Routed = true", "r").unwrap();
    assert!(t.matches(&ad("")));
    assert_eq!(
        t.requirements().map(crate::classad::unparse::unparse_old),
        parse_expr("Routed =!= true")
            .ok()
            .map(|e| crate::classad::unparse::unparse_old(&e))
    );
    assert!(parse_err("REQUIREMENTS (a ==").starts_with("rules.xfm, line 1: invalid REQUIREMENTS"));
}

#[test]
fn macro_value_reads_route_macros() {
    let t = Transform::parse(
        "MaxJobs = 10\nGridResource = \"batch slurm $(SITE)\"\nif $(Huge:false)\n MaxIdleJobs = 99\n\
         else\n MaxIdleJobs = $(BIG)\nendif\nSET A $(MaxJobs)",
        "route",
    )
    .unwrap();
    let c = cfg();
    assert_eq!(t.macro_value("maxjobs", &c).as_deref(), Some("10"));
    assert_eq!(
        t.macro_value("GridResource", &c).as_deref(),
        Some("\"batch slurm west\"")
    );
    assert_eq!(t.macro_value("MaxIdleJobs", &c).as_deref(), Some("1000"));
    // Not assigned by the transform: none, even when the configuration has it.
    assert_eq!(t.macro_value("SITE", &c), None);
}

#[test]
fn parse_errors_name_the_line() {
    assert_eq!(
        parse_err("SET A 1\nFROB A 1"),
        "rules.xfm, line 2: FROB is not a valid transform keyword"
    );
    assert_eq!(
        parse_err("SET A"),
        "rules.xfm, line 1: SET needs 2 arguments"
    );
    assert_eq!(
        parse_err("\nDELETE"),
        "rules.xfm, line 2: DELETE needs an argument"
    );
    assert_eq!(
        parse_err("if true\nSET A 1"),
        "rules.xfm, line 1: 'if' without 'endif' before the end of the transform"
    );
    assert_eq!(
        parse_err("endif"),
        "rules.xfm, line 1: 'endif' without 'if'"
    );
    assert!(parse_err("include : x").contains("'include' is not allowed"));
    assert!(parse_err("DELETE /(/").contains("line 1: invalid regex"));
}

#[test]
fn transform_ends_a_configuration_value() {
    let t = Transform::parse("SET A 1\nTRANSFORM\nSET B 2", "r").unwrap();
    let mut a = ClassAd::new();
    t.apply(&mut a, &mut Macros::new(), &cfg()).unwrap();
    assert_eq!(ad_to_old(&a, true), "A = 1\n");
    assert!(t.iterate_args().is_none());
    let t = Transform::parse("SET A 1\nTRANSFORM 3", "r").unwrap();
    assert_eq!(t.iterate_args().map(|i| i.args.as_str()), Some("3"));
}

#[test]
fn regex_forms() {
    let input = "MaxHosts = 1\nRemoteUser = \"u\"\nNiceUser = false\nUser = \"x\"\n\
                 RequestCpus = 1\nRequestMemory = 2\nRequestDisk = 3\nTransferErr = 1\nErr = 2\n";
    assert_eq!(
        attr(
            "COPY /^Max(.+)/ TotalSuspensions",
            input,
            "TotalSuspensions"
        ),
        Some("1".into())
    );
    let out = run("RENAME /(.+)User/ Test\\0", input);
    assert!(out.contains("TestRemoteUser = \"u\"\n") && out.contains("TestNiceUser = false\n"));
    assert!(out.contains("\nUser = \"x\"\n") && !out.contains("\nRemoteUser"));
    let out = run("RENAME /^Request(.+)/ Time\\1", input);
    assert!(
        out.contains("TimeCpus = 1\nTimeDisk = 3\nTimeMemory = 2\n"),
        "{out}"
    );
    assert!(!out.contains("Request"));
    let out = run("DELETE /(.+)Err/", input);
    assert!(
        out.starts_with("Err = 2\n") && !out.contains("TransferErr"),
        "{out}"
    );
    // Case-insensitive and unanchored.
    assert!(!run("DELETE /MAXH/", input).contains("MaxHosts"));
    // `\2` with one group is left as written (and so is an invalid name).
    let (out, w) = run_with("COPY /^(Max)Hosts/ A\\1\\2", input, &mut Macros::new());
    assert!(!out.contains("AMax"), "{out}");
    assert_eq!(w.len(), 1, "{w:?}");
}

#[test]
fn evalset_and_evalmacro_read_new_syntax_set_reads_old() {
    // Regression (found by tests/transform_diff): ClassAd::EvaluateExpr
    // parses new syntax, where "\\" is one backslash; SET parses old
    // syntax, where a backslash is literal.
    assert_eq!(
        attr("EVALSET Q strcat(\"a\\\"b\", \"\\\\\")", "", "Q"),
        Some("\"a\\\"b\\\"".into())
    );
    assert_eq!(
        attr(
            "EVALMACRO M strcat(\"x\", \"\\\\\")\nSET S \"$(M)y\"",
            "",
            "S"
        ),
        Some("\"x\\y\"".into())
    );
    assert_eq!(
        attr("SET P \"C:\\dir\"", "", "P"),
        Some("\"C:\\dir\"".into())
    );
}

#[test]
fn string_function_takes_text_that_is_no_string_as_it_is() {
    // Regression (found by tests/transform_diff): $STRING of a value that
    // does not evaluate to a string is that text, as config.cpp has it.
    assert_eq!(
        attr("SET A = \"$STRING(MY.Owner)\"", "Owner = \"alice\"\n", "A"),
        Some("\"alice\"".into())
    );
    assert_eq!(
        attr("X = 1 + 1\nSET A = \"$STRING(X)\"", "", "A"),
        Some("\"1 + 1\"".into())
    );
}

#[test]
fn from_config_reads_new_and_old_syntax() {
    let c = {
        let mut c = Config::defaults();
        c.parse_str(
            "JOB_ROUTER_ROUTE_A @=end\n  REQUIREMENTS Owner == \"a\"\n  SET X 1\n@end\n\
             JOB_ROUTER_ROUTE_B = [ Name = \"B\"; set_Y = \"$(SITE)\" ]\nSITE = west\n\
             JOB_ROUTER_ROUTE_C = [ broken\n",
            "cfg",
        )
        .unwrap();
        c
    };
    let a = from_config(&c, "JOB_ROUTER_ROUTE_A").unwrap().unwrap();
    assert_eq!(a.requirements_text(), Some("Owner == \"a\""));
    // The old syntax is expanded first, then converted.
    let b = from_config(&c, "JOB_ROUTER_ROUTE_B").unwrap().unwrap();
    assert_eq!(b.name(), Some("B"));
    let mut ad = ClassAd::new();
    b.apply(&mut ad, &mut Macros::new(), &c).unwrap();
    assert_eq!(ad_to_old(&ad, true), "Y = \"west\"\n");
    assert!(from_config(&c, "JOB_ROUTER_ROUTE_Z").unwrap().is_none());
    let e = from_config(&c, "JOB_ROUTER_ROUTE_C").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("JOB_ROUTER_ROUTE_C, line 1: not a ClassAd"),
        "{e}"
    );
}

#[test]
fn plus_attr_assignment_is_the_macro_my_attr() {
    // Submit syntax: `+Foo = 1` defines MY.Foo, which `$(MY.Foo)` and
    // `if defined MY.Foo` find before the ad's attribute.
    let rules = "+Foo = 1\n+Owner = \"zed\"\nSET A $(MY.Foo:none)\nSET O $(MY.Owner)\n\
                 if defined MY.Foo\n SET D 1\nendif\n";
    assert_eq!(
        run(rules, "Owner = \"alice\"\n"),
        "A = 1\nD = 1\nO = \"zed\"\nOwner = \"alice\"\n"
    );
}

#[test]
fn basic_and_iterating_tables_have_their_own_defaults() {
    let rules = "SET A \"$(IsClusterAd:u) $(LateMaterialization:u) $(Step:u) $(Row:u)\"";
    let (out, _) = run_with(rules, "", &mut Macros::new());
    assert_eq!(out, "A = \"0 0 u u\"\n");
    let mut it = Macros::new();
    it.set_iterating();
    let (out, _) = run_with(rules, "", &mut it);
    assert_eq!(out, "A = \"u u 0 0\"\n");
}

#[test]
fn a_failed_expansion_stops_the_transform() {
    // HTCondor aborts (EXCEPT) on $INT of a non-integer or a bad $CHOICE
    // index; tern reports the line and leaves the rest undone.
    for rules in [
        "SET A 1\nSET B $INT(MY.Owner)\nSET C 3",
        "SET A 1\nSET B \"$CHOICE(7, x, y)\"\nSET C 3",
    ] {
        let t = Transform::parse(rules, "r.xfm").unwrap();
        let mut a = ad("Owner = \"alice\"\n");
        let e = t.apply(&mut a, &mut Macros::new(), &cfg()).unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(a.contains("A") && !a.contains("C"));
    }
}

#[test]
fn if_takes_a_classad_expression_evaluated_against_the_ad() {
    let rules = "N = 3\nif $(N) > 2\n SET A 1\nendif\n\
                 if ProcId == 0 && Owner =!= \"x\"\n SET B 1\nelse\n SET B 2\nendif\n\
                 if ! $(MY.ProcId) > 5\n SET C 1\nelse\n SET C 2\nendif\n";
    assert_eq!(
        run(rules, "ProcId = 0\nOwner = \"a\"\n"),
        "A = 1\nB = 1\nC = 1\nOwner = \"a\"\nProcId = 0\n"
    );
    assert_eq!(
        attr(rules, "ProcId = 9\nOwner = \"a\"\n", "B").as_deref(),
        Some("2")
    );
    // A bare name, or a value that is neither boolean nor number, is not a
    // condition.
    for bad in [
        "if Owner\nendif",
        "if Owner + 1\nendif",
        "if \"a\" == \nendif",
    ] {
        let t = Transform::parse(bad, "r").unwrap();
        let mut a = ad("Owner = \"a\"\n");
        assert!(
            t.apply(&mut a, &mut Macros::new(), &cfg()).is_err(),
            "{bad}"
        );
    }
}
