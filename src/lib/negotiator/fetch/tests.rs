use super::*;

fn cfg(text: &str) -> Config {
    let mut c = Config::defaults();
    c.parse_str(text, "test").unwrap();
    c
}

#[test]
fn the_slot_keyword_comes_before_the_startd_keyword() {
    let c = cfg(
        "STARTD_JOB_HOOK_KEYWORD = ALL\nSLOT2_JOB_HOOK_KEYWORD = TWO\n\
                 ALL_HOOK_FETCH_WORK = /bin/all\nTWO_HOOK_REPLY_FETCH = /bin/reply\n",
    );
    assert_eq!(keyword(&c, 1).unwrap().as_deref(), Some("ALL"));
    assert_eq!(keyword(&c, 2).unwrap().as_deref(), Some("TWO"));
    assert_eq!(
        hooks(&c, 1).unwrap().unwrap().fetch,
        PathBuf::from("/bin/all")
    );
    // TWO has no FETCH_WORK: slot 2 fetches nothing.
    assert!(hooks(&c, 2).unwrap().is_none());
    assert!(hooks(&cfg(""), 1).unwrap().is_none());
}

#[test]
fn fetch_work_delay_sees_the_slot_and_its_job() {
    let slot = crate::classad::parse_ad("[State = \"Claimed\"]").unwrap();
    let job = crate::classad::parse_ad("[Wait = 7]").unwrap();
    assert_eq!(delay(&cfg(""), &slot, None).unwrap(), DEFAULT_DELAY);
    let c = cfg("FetchWorkDelay = ifThenElse(MY.State == \"Claimed\", TARGET.Wait, 60)\n");
    assert_eq!(delay(&c, &slot, Some(&job)).unwrap(), 7);
    // Undefined (no job) is the default.
    assert_eq!(delay(&c, &slot, None).unwrap(), DEFAULT_DELAY);
    assert!(delay(&cfg("FetchWorkDelay = (1 +\n"), &slot, None).is_err());
}

#[test]
fn a_bad_timeout_names_its_knob() {
    let e = timeout(&cfg("FETCH_WORK_HOOK_TIMEOUT = 0\n")).unwrap_err();
    assert!(e.to_string().contains("FETCH_WORK_HOOK_TIMEOUT"), "{e}");
    assert_eq!(timeout(&cfg("")).unwrap(), Duration::from_secs(30));
}

#[test]
fn a_fetched_ad_gets_the_defaults_and_loses_its_identity() {
    let ad = crate::classad::parse_ad(
        "[Cmd = \"/bin/true\"; ClusterId = 9; Owner = \"x\"; Out = \"o\"; StarterUserLog = \"/tmp/l\"]",
    )
    .unwrap();
    let c = work::job_cluster(ad, "alice", "dom", 100);
    let a = Rc::new(c.full_ad(0));
    assert_eq!(a.eval_str("Out").as_deref(), Some("o"));
    assert_eq!(a.eval_str("Err").as_deref(), Some("/dev/null"));
    assert_eq!(a.eval_int("JobUniverse"), Some(5));
    assert_eq!(a.eval_str("UserLog").as_deref(), Some("/tmp/l"));
    assert_eq!(a.eval_str("User").as_deref(), Some("alice@dom"));
    assert!(!a.contains("ClusterId") && !a.contains("Owner"));
    assert_eq!(a.eval_int("ProcId"), Some(0));
}

#[test]
fn a_reply_is_nothing_an_ad_or_discarded() {
    let p = Path::new("/h");
    assert!(work::parse_reply(p, " \n").unwrap().is_none());
    assert!(
        work::parse_reply(p, "Cmd = \"/bin/true\"\n")
            .unwrap()
            .is_some()
    );
    let e = work::parse_reply(p, "Cmd = \"/bin/true\"\nnonsense\n").unwrap_err();
    assert!(e.contains("bad output") && e.contains("line 2"), "{e}");
}
