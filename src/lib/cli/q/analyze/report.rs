//! The parts of an analysis that are not about Requirements: the run
//! analysis summary, condor_q's status line for a job that is not idle,
//! the last match failure the pass recorded, and tern's own notes (no
//! pass yet, deferral, periodic expressions).

use super::*;
use crate::vocab::JobStatus;

/// `12.000`, as condor_q names a job in the analysis headings.
pub(super) fn request_id(id: JobId) -> String {
    format!("{}.{:03}", id.cluster, id.proc)
}

/// `012.000`, as condor_q names a job in the summary.
pub(super) fn summary_id(id: JobId) -> String {
    format!("{:03}.{:03}", id.cluster, id.proc)
}

/// `: a, b, c` (at most ten names), condor_q -verbose's slot lists.
pub(super) fn names(list: &[String]) -> String {
    if list.is_empty() {
        return String::new();
    }
    let mut s = String::from(":");
    for (i, n) in list.iter().enumerate() {
        if i == 10 {
            s.push_str(", ...");
            break;
        }
        s.push_str(if i == 0 { " " } else { ", " });
        s.push_str(n);
    }
    s
}

/// condor_q's appendJobMatchTotalsToBuffer, without user priorities.
pub(super) fn summary(id: JobId, c: &Counts, start: &str) -> String {
    let mut out = format!(
        "\n{}:  Run analysis summary ignoring user priority.  Of {} slots on 1 machines,\n",
        summary_id(id),
        c.total
    );
    let line = |out: &mut String, n: usize, what: &str, list: &[String]| {
        out.push_str(&format!("  {n:5} slots {what}{}\n", names(list)));
    };
    line(
        &mut out,
        c.rejected_by_job.len(),
        "are rejected by your job's requirements",
        &c.rejected_by_job,
    );
    line(
        &mut out,
        c.reject_job.len(),
        "reject your job because of their own requirements",
        &c.reject_job,
    );
    if !c.running_yours.is_empty() {
        line(
            &mut out,
            c.running_yours.len(),
            "match and are already running your jobs",
            &[],
        );
    }
    if !c.serving_others.is_empty() {
        line(
            &mut out,
            c.serving_others.len(),
            "match but are serving other users",
            &c.serving_others,
        );
    }
    line(
        &mut out,
        c.willing.len(),
        "match and are willing to run your job",
        &c.willing,
    );
    if !c.if_drained.is_empty() {
        line(
            &mut out,
            c.if_drained.len(),
            "would match if drained",
            &c.if_drained,
        );
    }
    let job_matches = c.total - c.rejected_by_job.len();
    let both = job_matches - c.reject_job.len();
    if job_matches == 0 {
        out.push_str("\nWARNING:  Be advised:\n   No machines matched the jobs's constraints\n");
    } else if both == 0 {
        out.push_str(&format!(
            "\nWARNING:  Be advised:\n   Job did not match any machines's constraints\n   \
             The slots' Requirements include START, which is\n       {start}\n   \
             in this machine's configuration (tern_config_val START).\n"
        ));
    }
    out
}

/// A time as ctime(3) writes it, in local time.
pub(super) fn ctime(secs: i64) -> String {
    use chrono::{Local, TimeZone};
    match Local.timestamp_opt(secs, 0).single() {
        Some(t) => t.format("%a %b %e %H:%M:%S %Y").to_string(),
        None => format!("{secs}"),
    }
}

/// condor_q's job status line for a job that is not idle, with what tern
/// knows about why.
/// `job_status` is the stored number, so that one this tern does not know
/// can still be named.
pub(super) fn status_section(id: JobId, job_status: i64, ad: &Rc<ClassAd>, now: i64) -> String {
    let head = format!("\n{}:  ", summary_id(id));
    let mut out = head.clone();
    match JobStatus::from_code(job_status) {
        Some(JobStatus::Held) => {
            out.push_str("Job is held.\n\n");
            if let Some(r) = ad.eval_str("HoldReason").filter(|r| !r.is_empty()) {
                out.push_str(&format!("Hold reason: {r}\n"));
            }
            out.push_str(&format!(
                "Hold reason code: {}, subcode: {}\n",
                ad.eval_int("HoldReasonCode").unwrap_or(0),
                ad.eval_int("HoldReasonSubCode").unwrap_or(0)
            ));
            if let Some(t) = ad.eval_int("EnteredCurrentStatus") {
                out.push_str(&format!("Held since: {}\n", ctime(t)));
            }
            out.push_str(&format!(
                "Once the cause is fixed, tern_release {}.{} lets it run again.\n",
                id.cluster, id.proc
            ));
        }
        Some(JobStatus::Running | JobStatus::TransferringOutput) => {
            out.push_str("Job is running.\n\n");
            out.push_str(&running_on(ad, now));
        }
        Some(JobStatus::Suspended) => {
            out.push_str("Job is suspended.\n\n");
            out.push_str(&running_on(ad, now));
            out.push_str(&format!(
                "tern_continue {}.{} resumes it.\n",
                id.cluster, id.proc
            ));
        }
        Some(JobStatus::Removed) => out.push_str("Job is removed.\n"),
        Some(JobStatus::Completed) => out.push_str("Job is completed.\n"),
        _ => out.push_str(&format!("Job has status {job_status}.\n")),
    }
    out.push('\n');
    out
}

pub(super) fn running_on(ad: &Rc<ClassAd>, now: i64) -> String {
    let host = ad
        .eval_str("RemoteHost")
        .unwrap_or_else(|| "an unknown slot".into());
    match ad
        .eval_int("JobCurrentStartDate")
        .or_else(|| ad.eval_int("JobStartDate"))
    {
        Some(t) => format!(
            "Running on {host} since {} ({}).\n",
            ctime(t),
            run_time(now - t).trim_start()
        ),
        None => format!("Running on {host}.\n"),
    }
}

/// condor_q's appendBasicJobRunAnalysisToBuffer: the last match and the
/// last match failure the pass recorded.
pub(super) fn match_history(ad: &Rc<ClassAd>) -> String {
    let mut out = String::new();
    let last_match = ad.eval_int("LastMatchTime").unwrap_or(0);
    let last_rej = ad.eval_int("LastRejMatchTime").unwrap_or(0);
    if last_match != 0 {
        out.push_str(&format!("Last successful match: {}\n", ctime(last_match)));
    } else if last_rej != 0 {
        out.push_str("No successful match recorded.\n");
    }
    if last_rej > last_match {
        out.push_str(&format!("Last failed match: {}\n", ctime(last_rej)));
        if let Some(r) = ad.eval_str("LastRejMatchReason") {
            out.push_str(&format!("Reason for last match failure: {r}\n"));
        }
    }
    out
}

/// What only tern says about an idle job: a deferral time ahead, and a
/// queue no pass has looked at since the job came.
pub(super) fn idle_notes(
    id: JobId,
    ad: &Rc<ClassAd>,
    last_pass: Option<i64>,
    now: i64,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(t) = ad.eval_int("DeferralTime").filter(|&t| t > now) {
        out.push(format!(
            "Job {}.{} is waiting for its deferral time, {} (in {}).\n",
            id.cluster,
            id.proc,
            ctime(t),
            run_time(t - now).trim_start()
        ));
    }
    let qdate = ad.eval_int("QDate").unwrap_or(0);
    match last_pass {
        Some(p) if p >= qdate => {
            out.push(format!("Last negotiation pass: {}\n", ctime(p)));
        }
        _ => {
            out.push(format!(
                "No negotiation pass since submit: no pass has run since job {}.{} was\n\
                 submitted, so nothing has tried to match it yet. Run tern_negotiate to\n\
                 start one now; so that passes run even when none is started for you, add\n\
                 this line to your crontab (crontab -e):\n\n    {}\n",
                id.cluster,
                id.proc,
                crate::cli::env::cron_line("tern_negotiate")
            ));
        }
    }
    out
}

/// A periodic expression that the next pass will act on.
pub(super) fn policy_notes(ad: &Rc<ClassAd>, job_status: Option<JobStatus>) -> String {
    let (what, reason) = match policy::periodic(ad, job_status) {
        Some(Action::Hold { reason, .. }) => ("hold", reason),
        Some(Action::Release { reason }) => ("release", reason),
        Some(Action::Remove { reason }) => ("remove", reason),
        Some(Action::Vacate { reason }) => ("vacate", reason),
        None => return String::new(),
    };
    format!("The next negotiation pass will {what} this job:\n    {reason}\n")
}

/// The last failure of a starter hook whose exit decides nothing
/// (UPDATE_JOB_INFO, JOB_EXIT; see tern_hooks(7)), which the shadow keeps
/// in the job ad.
pub(super) fn hook_note(ad: &Rc<ClassAd>) -> String {
    let Some(text) = ad.eval_str("StarterHookFailure").filter(|t| !t.is_empty()) else {
        return String::new();
    };
    match ad.eval_int("StarterHookFailureTime") {
        Some(t) => format!("Last starter hook failure ({}):\n    {text}\n", ctime(t)),
        None => format!("Last starter hook failure:\n    {text}\n"),
    }
}

/// The non-empty parts, a blank line between each two.
pub(super) fn paragraphs(parts: Vec<String>) -> String {
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lists_ten_at_most() {
        let v: Vec<String> = (1..=12).map(|i| format!("slot{i}")).collect();
        assert_eq!(names(&v[..2]), ": slot1, slot2");
        assert!(names(&v).ends_with("slot10, ..."));
        assert_eq!(names(&[]), "");
    }
}
