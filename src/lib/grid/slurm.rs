//! The Slurm commands a `batch slurm` job needs, run as its owner (see
//! [`super::owner`]) and found on PATH (SLURM_CONF honoured, as Slurm's
//! own commands read it), and their answers parsed.
//!
//! Status is read in bulk, one `squeue` per poll for every job of the
//! owner; a job squeue no longer lists is looked up with
//! `scontrol show job -o`, then in the completion log (`sacct -c`). Any
//! squeue failure is a failed poll (the controller may be down), never
//! "finished".

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};

use super::owner;
use crate::sys::identity::JobOwner;

/// What sbatch said when it did not submit: the hold reason, in the
/// gridmanager's format (newlines as `-`, the last one dropped).
#[derive(Debug, PartialEq, Eq)]
pub struct SubmitFailed(pub String);

/// A Slurm job's state as squeue lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    pub state: String,
    pub reason: String,
    /// How it ended, when squeue still lists a finished job (its
    /// `exit_code` is the raw wait status): no scontrol call per job.
    pub ended: Option<Ended>,
}

/// How a finished Slurm job ended, from scontrol or sacct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ended {
    pub state: String,
    /// `ExitCode=N:S`: the status and the signal.
    pub code: i64,
    pub signal: i64,
    pub start: Option<i64>,
    pub end: Option<i64>,
}

/// What a state means for the job (grid spec 3.3, with the states BLAHP
/// fails on mapped instead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Idle,
    Running,
    Finished,
    Cancelled,
}

pub fn phase(state: &str) -> Phase {
    // squeue may add a `+` (CANCELLED+) or a reason after a space.
    let s = state
        .split([' ', '+'])
        .next()
        .unwrap_or("")
        .to_ascii_uppercase();
    match s.as_str() {
        "PENDING" | "CONFIGURING" | "REQUEUED" | "REQUEUE_HOLD" | "REQUEUE_FED"
        | "RESV_DEL_HOLD" | "" => Phase::Idle,
        "RUNNING" | "COMPLETING" | "SUSPENDED" | "STOPPED" | "RESIZING" | "SIGNALING"
        | "STAGE_OUT" => Phase::Running,
        "CANCELLED" => Phase::Cancelled,
        // COMPLETED FAILED TIMEOUT NODE_FAIL PREEMPTED BOOT_FAIL
        // SPECIAL_EXIT OUT_OF_MEMORY DEADLINE, and anything newer: done.
        _ => Phase::Finished,
    }
}

fn run(
    owner: &JobOwner,
    program: &str,
    args: &[&str],
    input: Option<&str>,
    dir: Option<&Path>,
) -> std::io::Result<Output> {
    let mut c = owner::command(owner, program, dir)?;
    c.args(args);
    c.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn()?;
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        // A script larger than the pipe is read while we write.
        let _ = stdin.write_all(text.as_bytes());
    }
    child.wait_with_output()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The gridmanager's way of putting command output in one line.
fn one_line(s: &str) -> String {
    s.strip_suffix('\n').unwrap_or(s).replace('\n', "-")
}

/// Submits a script with sbatch from `dir`; the Slurm job id.
pub fn submit(owner: &JobOwner, script: &str, dir: &Path) -> Result<String, SubmitFailed> {
    let out = run(owner, "sbatch", &[], Some(script), Some(dir)).map_err(|e| {
        SubmitFailed(format!(
            "Error executing the submission command: {}",
            crate::sys::io_error_text(&e)
        ))
    })?;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    if !out.status.success() {
        return Err(SubmitFailed(format!(
            "submission command failed (exit code = {}) (stdout:{}) (stderr:{})",
            out.status.code().unwrap_or(-1),
            one_line(&stdout),
            one_line(&stderr)
        )));
    }
    parse_submitted(&stdout).ok_or_else(|| {
        SubmitFailed(format!(
            "no jobId in submission script's output (stdout:{}) (stderr:{})",
            one_line(&stdout),
            one_line(&stderr)
        ))
    })
}

/// The id in `Submitted batch job N` (other lines are ignored).
pub fn parse_submitted(stdout: &str) -> Option<String> {
    stdout.lines().find_map(|l| {
        let id = l
            .trim()
            .strip_prefix("Submitted batch job ")?
            .split_whitespace()
            .next()?;
        id.chars()
            .all(|c| c.is_ascii_digit())
            .then(|| id.to_string())
    })
}

/// Every job of `owner` the controller knows, by id; `Err` when squeue
/// fails (the controller cannot be asked: the resource is down).
pub fn list(owner: &JobOwner) -> Result<HashMap<String, Listed>, String> {
    let out = run(
        owner,
        "squeue",
        &["-h", "-t", "all", "-u", &owner.name, "-O", LIST_FORMAT],
        None,
        None,
    )
    .map_err(|e| format!("cannot run squeue: {}", crate::sys::io_error_text(&e)))?;
    if !out.status.success() {
        return Err(format!("squeue failed: {}", one_line(&text(&out.stderr))));
    }
    Ok(parse_list(&text(&out.stdout)))
}

/// squeue's fields (`-O`, each ended by `|`): id, state, reason, name, the
/// raw wait status, start and end (epoch seconds by SLURM_TIME_FORMAT).
const LIST_FORMAT: &str = "JobID:|,State:|,Reason:|,Name:|,exit_code:|,StartTime:|,EndTime:|";

pub fn parse_list(stdout: &str) -> HashMap<String, Listed> {
    let mut m = HashMap::new();
    for l in stdout.lines() {
        let f: Vec<&str> = l.trim().split('|').map(str::trim).collect();
        if f.len() < 2 || f[0].is_empty() {
            continue;
        }
        let state = f[1].to_string();
        let wait: Option<i64> = f.get(4).and_then(|w| w.parse().ok());
        let ended = match (phase(&state), wait) {
            (Phase::Finished, Some(w)) => Some(Ended {
                state: state.clone(),
                code: (w >> 8) & 0xff,
                signal: w & 0x7f,
                start: f.get(5).and_then(|t| t.parse().ok()),
                end: f.get(6).and_then(|t| t.parse().ok()),
            }),
            _ => None,
        };
        m.insert(
            f[0].to_string(),
            Listed {
                state,
                reason: f.get(2).unwrap_or(&"").to_string(),
                ended,
            },
        );
    }
    m
}

/// Jobs by name among the listed ones and in the completion log: how a
/// restarted gridmanager finds a submission it made but did not record.
pub fn find_by_name(owner: &JobOwner, name: &str) -> Result<Option<String>, String> {
    let out = run(
        owner,
        "squeue",
        &[
            "-h",
            "-t",
            "all",
            "-u",
            &owner.name,
            "-n",
            name,
            "-o",
            "%i|%j",
        ],
        None,
        None,
    )
    .map_err(|e| format!("cannot run squeue: {}", crate::sys::io_error_text(&e)))?;
    if !out.status.success() {
        return Err(format!("squeue failed: {}", one_line(&text(&out.stderr))));
    }
    if let Some(id) = by_name(&text(&out.stdout), name) {
        return Ok(Some(id));
    }
    // sacct -c ignores --name: the name column is matched here.
    match run(
        owner,
        "sacct",
        &["-c", "-P", "-n", "-o", "jobid,jobname"],
        None,
        None,
    ) {
        Ok(o) if o.status.success() => Ok(by_name(&text(&o.stdout), name)),
        _ => Ok(None),
    }
}

fn by_name(stdout: &str, name: &str) -> Option<String> {
    stdout.lines().rev().find_map(|l| {
        let (id, n) = l.trim().split_once('|')?;
        (n == name).then(|| id.to_string())
    })
}

/// How a job ended: `scontrol show job -o` while the controller still
/// holds it, else the completion log. `Ok(None)`: neither knows it.
pub fn ended(owner: &JobOwner, id: &str) -> Result<Option<Ended>, String> {
    let out = run(owner, "scontrol", &["show", "job", "-o", id], None, None)
        .map_err(|e| format!("cannot run scontrol: {}", crate::sys::io_error_text(&e)))?;
    if out.status.success() {
        if let Some(e) = parse_scontrol(&text(&out.stdout)) {
            return Ok(Some(e));
        }
    } else if !text(&out.stderr).contains("Invalid job id") {
        return Err(format!("scontrol failed: {}", one_line(&text(&out.stderr))));
    }
    let out = run(
        owner,
        "sacct",
        &[
            "-c",
            "-P",
            "-n",
            "-j",
            id,
            "-o",
            "jobid,state,exitcode,start,end",
        ],
        None,
        None,
    )
    .map_err(|e| format!("cannot run sacct: {}", crate::sys::io_error_text(&e)))?;
    if !out.status.success() {
        return Ok(None);
    }
    Ok(parse_sacct(&text(&out.stdout), id))
}

fn exit_pair(s: &str) -> Option<(i64, i64)> {
    let (c, sig) = s.split_once(':')?;
    Some((c.trim().parse().ok()?, sig.trim().parse().ok()?))
}

/// `scontrol show job -o` (one line of `Key=Value` words), with
/// SLURM_TIME_FORMAT=%s.
pub fn parse_scontrol(stdout: &str) -> Option<Ended> {
    let mut state = None;
    let mut exit = None;
    let (mut start, mut end) = (None, None);
    for w in stdout.split_whitespace() {
        let Some((k, v)) = w.split_once('=') else {
            continue;
        };
        match k {
            "JobState" => state = Some(v.to_string()),
            "ExitCode" => exit = exit_pair(v),
            "StartTime" => start = v.parse().ok(),
            "EndTime" => end = v.parse().ok(),
            _ => {}
        }
    }
    let state = state?;
    let (code, signal) = exit?;
    Some(Ended {
        state,
        code,
        signal,
        start,
        end,
    })
}

/// `sacct -c -P -n -o jobid,state,exitcode,start,end`: the row of `id`.
pub fn parse_sacct(stdout: &str, id: &str) -> Option<Ended> {
    stdout.lines().rev().find_map(|l| {
        let f: Vec<&str> = l.trim().split('|').collect();
        if f.len() < 3 || f[0] != id {
            return None;
        }
        let (code, signal) = exit_pair(f[2])?;
        Some(Ended {
            state: f[1].to_string(),
            code,
            signal,
            start: f.get(3).and_then(|s| s.parse().ok()),
            end: f.get(4).and_then(|s| s.parse().ok()),
        })
    })
}

/// scancel; an id Slurm no longer knows counts as cancelled.
pub fn cancel(owner: &JobOwner, id: &str) -> Result<(), String> {
    let out = run(owner, "scancel", &[id], None, None)
        .map_err(|e| format!("cannot run scancel: {}", crate::sys::io_error_text(&e)))?;
    let err = text(&out.stderr);
    if out.status.success() || err.contains("Invalid job id") {
        return Ok(());
    }
    Err(format!("scancel failed: {}", one_line(&err)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurm_answers_parse() {
        assert_eq!(
            parse_submitted("Submitted batch job 42\n"),
            Some("42".into())
        );
        assert_eq!(
            parse_submitted("warning: x\nSubmitted batch job 7 on cluster c\n"),
            Some("7".into())
        );
        assert_eq!(parse_submitted("nothing\n"), None);
        let l = parse_list(
            "1|FAILED|NonZeroExitCode|tern_a|768|100|104|\n2|PENDING|Resources|b|0|NONE|NONE|\n3|FAILED|JobLaunchFailure|c|9|5|5|\n4|COMPLETED|None|d\n",
        );
        assert_eq!(l["2"].state, "PENDING");
        assert_eq!(l["2"].ended, None);
        assert_eq!(l.len(), 4);
        let e = l["1"].ended.clone().unwrap();
        assert_eq!(
            (e.code, e.signal, e.start, e.end),
            (3, 0, Some(100), Some(104))
        );
        let e = l["3"].ended.clone().unwrap();
        assert_eq!((e.code, e.signal), (0, 9));
        // Without the status (an older squeue), scontrol is asked.
        assert_eq!(l["4"].ended, None);
        let e = parse_scontrol(
            "JobId=1 JobName=wrap JobState=FAILED Reason=NonZeroExitCode ExitCode=3:0 StartTime=100 EndTime=105 X=y\n",
        )
        .unwrap();
        assert_eq!(
            (e.code, e.signal, e.start, e.end),
            (3, 0, Some(100), Some(105))
        );
        let e = parse_sacct("1|COMPLETED|0:0|5|6\n2|FAILED|0:9|7|7\n", "2").unwrap();
        assert_eq!((e.state.as_str(), e.code, e.signal), ("FAILED", 0, 9));
        assert_eq!(parse_sacct("1|COMPLETED|0:0\n", "3"), None);
        assert_eq!(by_name("1|a\n2|tern_x\n", "tern_x"), Some("2".into()));
    }

    #[test]
    fn every_slurm_state_has_a_meaning() {
        for (s, p) in [
            ("PENDING", Phase::Idle),
            ("REQUEUE_HOLD", Phase::Idle),
            ("RUNNING", Phase::Running),
            ("SUSPENDED", Phase::Running),
            ("SIGNALING", Phase::Running),
            ("COMPLETED", Phase::Finished),
            ("OUT_OF_MEMORY", Phase::Finished),
            ("DEADLINE", Phase::Finished),
            ("TIMEOUT", Phase::Finished),
            ("CANCELLED", Phase::Cancelled),
            ("CANCELLED+", Phase::Cancelled),
        ] {
            assert_eq!(phase(s), p, "{s}");
        }
    }
}
