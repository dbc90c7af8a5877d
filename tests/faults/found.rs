//! What the fault harness found, one focused test each, named after the
//! finding and reproducing it without the harness's randomness.

use crate::common::queue::change;
use crate::common::{RunEnv, TIMEOUT, fake_job};

/// Found by the harness as a routed job that ran twice at once: its
/// routed copy (a grid universe job whose route sets `Requirements =
/// true`) was handed a slot by claim reuse when another job of the same
/// owner ended, and ran here under a shadow while its gridmanager ran it
/// in the other queue. Reuse must skip what the pass never matches: grid
/// universe jobs, and jobs the router manages (`Managed = "External"`).
#[test]
fn claim_reuse_never_hands_a_slot_to_a_grid_job_or_a_routed_source() {
    // One slot, one pass; no gridmanager acts on the grid job.
    let env = RunEnv::new()
        .knob("NEGOTIATE_ON_SUBMIT", "false")
        .knob("NEGOTIATE_ON_EXIT", "false")
        .knob("NUM_CPUS", "1")
        .knob("GRIDMANAGER", "/bin/true");
    let fake = fake_job().display().to_string();
    let first = env.submit(
        "first.sub",
        &format!("executable = {fake}\narguments = \"sleep 0.5\"\nqueue\n"),
    );
    let grid = env.submit(
        "grid.sub",
        &format!(
            "universe = grid\ngrid_resource = condor {} local\nexecutable = {fake}\n\
             arguments = \"touch grid-ran\"\nrequirements = true\nqueue\n",
            env.path("other").display()
        ),
    );
    let source = env.submit(
        "source.sub",
        &format!("executable = {fake}\narguments = \"touch source-ran\"\nqueue\n"),
    );
    // The router's claim on a source, as it makes it.
    change(
        &env,
        source,
        0,
        crate::common::NOW,
        tern::queue::Change::Set(vec![(
            "Managed".into(),
            tern::classad::Expr::string("External"),
        )]),
    );
    env.negotiate();
    env.wait_history(&format!("{first}.0"), TIMEOUT);
    env.wait_slots_unclaimed();
    for (job, ran) in [(grid, "grid-ran"), (source, "source-ran")] {
        let id = format!("{job}.0");
        assert_eq!(
            env.q_af(&id, &["JobStatus", "NumShadowStarts"]).as_deref(),
            Some("1 undefined"),
            "job {id}: {}",
            env.diagnosis()
        );
        assert!(!env.path(ran).exists(), "job {id} ran on the slot");
    }
}
