//! Fault injection: a scripted workload drives two tern queues with the
//! real tools while a killer thread sends SIGKILL, at random instants, to
//! a random process of the round: tern_submit, the queue tools, passes,
//! shadows, the job router, the gridmanager, the hook runners
//! (tern_fetchwork, tern_cron) and the hooks themselves. Then the round is
//! left to come to rest and checked (see [`checks`]): every job accounted
//! for exactly once, no job running twice at once, no output file
//! half-written under its final name, no process left over, a sound
//! database whose transaction log replays to the queue.
//!
//! A round ([`world`]) is a fresh test directory with the local SPOOL, a
//! second queue that the route `Other` sends jobs to (`condor` grid
//! resource, as tests/router_e2e.rs does), a fetch-work hook fed from a
//! work directory, a startd cron hook, and a clock every process shares
//! (anchored `TERN_NOW`) that reaches a minute boundary eight seconds into
//! the round, so cron jobs run under the kills too. The workload
//! ([`workload`]) submits single jobs and clusters, with file transfer,
//! cron schedules, deferral times and routes, hands out fetch work, and
//! holds, releases, removes, vacates, suspends and continues jobs, a few
//! tools at a time; the killer ([`killer`]) strikes meanwhile. A round
//! ends after its share of kills; [`settle`] then runs passes until
//! nothing moves.
//!
//! The generators are seeded: the test prints each round's seed, and
//! `TERN_FAULTS_SEED=<seed>` makes the first round use it, so a failing
//! round replays its script and its choice of victims (the instants, on a
//! real machine, only approximately).
//!
//! Two forms:
//! - `cargo test --test main faults::` runs at least 1,000 kills (rounds
//!   of about 250), three to four minutes on two cores;
//! - `cargo test --test main faults:: -- --ignored` runs the full form,
//!   10,000 kills. `TERN_FAULTS_KILLS=<n>` sets the number for either.
//!
//! A round that finds a problem keeps its directory (`<dir>.kept`, with
//! the killer's log, `kills.log`); `TERN_FAULTS_KEEP=1` keeps every
//! round's.

mod checks;
mod found;
mod killer;
mod settle;
mod workload;
mod world;

use std::time::{Duration, Instant};

use crate::common::rng::Rng;

use killer::{Killer, Pace, Tally};
use workload::Workload;
use world::World;

/// Kills in one round: enough that the round's workload sees each kind of
/// process die many times, few enough that jobs still complete.
const KILLS_PER_ROUND: usize = 250;
/// The longest a round's workload runs, whatever its kills.
const ROUND_LIMIT: Duration = Duration::from_secs(90);
/// The killer's pause between two kills.
const PACE: Pace = Pace {
    min_ms: 5,
    max_ms: 60,
};
/// How long a round may take to come to rest.
const SETTLE_LIMIT: Duration = Duration::from_secs(120);

/// The next round's seed from this one's (SplitMix64's step).
fn next_seed(seed: u64) -> u64 {
    Rng::new(seed).next_u64()
}

fn first_seed() -> u64 {
    match std::env::var("TERN_FAULTS_SEED") {
        Ok(s) => s.parse().expect("TERN_FAULTS_SEED is a number"),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64,
    }
}

fn kills_wanted(default: usize) -> usize {
    std::env::var("TERN_FAULTS_KILLS").map_or(default, |s| {
        s.parse().expect("TERN_FAULTS_KILLS is a number")
    })
}

/// What a round did and found.
struct Round {
    tally: Tally,
    problems: Vec<String>,
    summary: String,
}

/// One round: the workload under the killer until `kills` kills landed,
/// rest, checks.
fn round(seed: u64, kills: usize) -> Round {
    let world = World::new();
    let killer = Killer::start(world.dir.clone(), next_seed(seed), PACE);
    let mut work = Workload::new(&world, seed);
    let mut pause = Rng::new(seed ^ 0x9A05E);
    let began = Instant::now();
    while killer.kills() < kills && began.elapsed() < ROUND_LIMIT {
        work.step();
        std::thread::sleep(Duration::from_millis(pause.range(10, 60) as u64));
    }
    let tally = killer.stop();
    let ran = began.elapsed();
    work.reap(true);
    let mut problems = work.failures.clone();
    let rest = settle::settle(&world, SETTLE_LIMIT);
    if let Err(why) = &rest {
        problems.push(why.clone());
    }
    let left = killer::processes(&world.dir);
    if !left.is_empty() {
        problems.push(format!("processes left over: {left:?}"));
    }
    let mut stats = String::new();
    match checks::load(&world) {
        Ok(jobs) => {
            problems.extend(checks::accounting(&jobs, &work.submits, work.work_items));
            problems.extend(checks::overlaps(&world, &jobs));
            problems.extend(checks::outputs(&world, &jobs));
            stats = checks::stats(&world, &jobs);
        }
        Err(e) => problems.push(format!("cannot read the queues: {e}")),
    }
    let (log_problems, torn) = checks::event_log(&world, tally.total());
    problems.extend(log_problems);
    problems.extend(checks::soundness(&world.spool()));
    problems.extend(checks::soundness(&world.remote_spool()));
    let summary = format!(
        "{} kills {:?} in {ran:.1?}; {}; {} tools, {} submits, {} work items; {stats}; \
         {torn} events torn by kills; unexpected tool errors: {:?}",
        tally.total(),
        tally.by_category,
        rest.unwrap_or_default(),
        work.started,
        work.submits.len(),
        work.work_items,
        work.errors
    );
    if !problems.is_empty() || std::env::var_os("TERN_FAULTS_KEEP").is_some() {
        // The evidence stays for a look: the round's directory, with the
        // killer's log.
        let _ = std::fs::write(world.path("kills.log"), tally.log.join("\n") + "\n");
        let kept = world.dir.with_extension("kept");
        let _ = std::fs::rename(&world.dir, &kept);
        eprintln!(
            "faults: the round's directory is kept in {}",
            kept.display()
        );
    }
    Round {
        tally,
        problems,
        summary,
    }
}

/// Rounds until `want` kills landed; panics with every problem found.
fn run(want: usize) {
    let mut seed = first_seed();
    let (mut total, mut rounds) = (0, 0);
    let began = Instant::now();
    while total < want {
        let n = KILLS_PER_ROUND.min(want - total);
        eprintln!("faults: round {rounds}: TERN_FAULTS_SEED={seed} ({n} kills)");
        let r = round(seed, n);
        eprintln!("faults: round {rounds}: {}", r.summary);
        if !r.problems.is_empty() {
            let last: Vec<&String> = r.tally.log.iter().rev().take(20).collect();
            panic!(
                "round {rounds} (replay: TERN_FAULTS_SEED={seed}) found:\n{}\nlast kills (newest first):\n{}",
                r.problems.join("\n"),
                last.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
        total += r.tally.total();
        rounds += 1;
        seed = next_seed(seed ^ 0xF00D);
    }
    eprintln!(
        "faults: {total} kills in {rounds} rounds, {:.1?}",
        began.elapsed()
    );
}

#[test]
fn a_thousand_kills_leave_every_job_accounted_for_once() {
    run(kills_wanted(1_000));
}

#[test]
#[ignore = "the full form: 10,000 kills, about half an hour"]
fn ten_thousand_kills_leave_every_job_accounted_for_once() {
    run(kills_wanted(10_000));
}
