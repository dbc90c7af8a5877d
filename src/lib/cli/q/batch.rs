//! The default view of `tern_q`: one line per batch (condor_q's
//! `reduce_results`), then the totals. It reads only the hot columns of
//! the jobs, and one cluster ad per cluster for the batch names.

use std::collections::HashMap;
use std::io::Write;
use std::rc::Rc;

use super::format::date;
use super::select::{Totals, count, select};
use super::{CliError, Context, Options, write_line, write_title, write_totals};
use crate::classad::{ClassAd, Value};
use crate::queue::listing::StatusCounts;
use crate::queue::{JobId, Queue, QueueError};
use crate::vocab::{JobStatus, Universe};

/// The shown jobs of one cluster.
#[derive(Debug)]
struct ClusterRows {
    cluster: i64,
    /// The first shown job's owner and QDate.
    owner: String,
    qdate: i64,
    first_proc: i64,
    min_proc: i64,
    max_proc: i64,
    count: i64,
    states: StatusCounts,
    /// The highest proc of the cluster in the queue, shown or not.
    max_proc_in_queue: i64,
}

impl ClusterRows {
    /// The lowest and highest shown job.
    fn id_range(&self) -> (JobId, JobId) {
        let id = |proc| JobId {
            cluster: self.cluster,
            proc,
        };
        (id(self.min_proc), id(self.max_proc))
    }
}

/// What the batch view needs from a cluster's ad (and its first shown
/// job's differences).
#[derive(Debug, Default)]
struct ClusterInfo {
    batch_name: Option<String>,
    /// `None` when the ad names no universe tern knows.
    universe: Option<Universe>,
    dagman_job_id: Option<i64>,
    dag_node_name: Option<String>,
    total_submit_procs: Option<i64>,
    dag_nodes_total: i64,
    dag_nodes_done: i64,
}

/// One line of the batch view.
#[derive(Debug, PartialEq)]
pub struct BatchLine {
    pub owner: String,
    pub name: String,
    pub qdate: i64,
    pub done: i64,
    pub run: i64,
    pub idle: i64,
    pub held: i64,
    pub total: i64,
    pub ids: String,
}

pub(super) fn show_batch(
    q: Option<&Queue>,
    opts: &Options,
    ctx: &Context,
    totals: &mut Totals,
    out: &mut impl Write,
) -> Result<(), CliError> {
    // Both closures below update the clusters: `seen` the highest proc in
    // the queue, `take` the shown jobs.
    let clusters_cell = std::cell::RefCell::new(Vec::<ClusterRows>::new());
    {
        select(
            q,
            &opts.filter,
            &ctx.me,
            false,
            totals,
            |row| {
                if let Some(c) = clusters_cell.borrow_mut().last_mut()
                    && c.cluster == row.id.cluster
                {
                    c.max_proc_in_queue = row.id.proc;
                }
            },
            |row, _| {
                let mut cs = clusters_cell.borrow_mut();
                match cs.last_mut() {
                    Some(c) if c.cluster == row.id.cluster => {
                        c.count += 1;
                        c.min_proc = c.min_proc.min(row.id.proc);
                        c.max_proc = c.max_proc.max(row.id.proc);
                        count(&mut c.states, row.status);
                    }
                    _ => {
                        let mut states = StatusCounts::default();
                        count(&mut states, row.status);
                        cs.push(ClusterRows {
                            cluster: row.id.cluster,
                            owner: row.owner.to_string(),
                            qdate: row.qdate,
                            first_proc: row.id.proc,
                            min_proc: row.id.proc,
                            max_proc: row.id.proc,
                            count: 1,
                            states,
                            max_proc_in_queue: row.id.proc,
                        });
                    }
                }
                Ok(())
            },
        )?;
    }
    let clusters = clusters_cell.into_inner();
    let lines = match q {
        Some(q) => batch_lines(q, &clusters, opts.filter.partial())?,
        None => Vec::new(),
    };
    write_title(ctx, out)?;
    for l in render_batch(&lines, ctx.width) {
        write_line(out, &l, ctx.width)?;
    }
    writeln!(out)?;
    write_totals(ctx, totals, out)?;
    Ok(())
}

/// Reads what the batch view needs of each cluster.
fn cluster_info(q: &Queue, c: &ClusterRows) -> Result<ClusterInfo, QueueError> {
    let mut ad = q.load_cluster_ad(c.cluster)?.unwrap_or_default();
    if let Some(diff) = q.load_diff(JobId {
        cluster: c.cluster,
        proc: c.first_proc,
    })? {
        ad.update(&diff);
    }
    let ad: Rc<ClassAd> = Rc::new(ad);
    let int = |n: &str| ad.eval_int(n);
    let dagman_job_id = match ad.eval("DAGManJobId") {
        Value::Int(i) if i > 0 => Some(i),
        Value::Str(s) => s
            .split('.')
            .next()
            .and_then(|c| c.parse::<i64>().ok())
            .filter(|&i| i > 0),
        _ => None,
    };
    Ok(ClusterInfo {
        batch_name: ad.eval_str("JobBatchName"),
        universe: int("JobUniverse").and_then(Universe::from_code),
        dagman_job_id,
        dag_node_name: ad.eval_str("DAGNodeName"),
        total_submit_procs: int("TotalSubmitProcs"),
        dag_nodes_total: int("DAG_NodesTotal").unwrap_or(0),
        dag_nodes_done: int("DAG_NodesDone").unwrap_or(0),
    })
}

/// Folds clusters into batch lines as condor_q's reduce_results does:
/// clusters of one owner that share a batch name are one line, DAG node
/// clusters join their DAGMan job's line, every other cluster is a line.
fn batch_lines(
    q: &Queue,
    clusters: &[ClusterRows],
    partial: bool,
) -> Result<Vec<BatchLine>, CliError> {
    let infos: Vec<ClusterInfo> = clusters
        .iter()
        .map(|c| cluster_info(q, c))
        .collect::<Result<_, _>>()?;
    // TotalSubmitProcs is what the schedd records; without it, the highest
    // proc id the cluster ever had tells the same for clusters submitted
    // whole.
    let history = if infos.iter().any(|i| i.total_submit_procs.is_none()) {
        q.history_max_procs()?
    } else {
        HashMap::new()
    };
    let groups = group_clusters(clusters, &infos);
    Ok(groups
        .iter()
        .map(|members| batch_line(clusters, &infos, members, &history, partial))
        .collect())
}

/// Whether a cluster is a DAGMan job (a scheduler universe job).
fn is_dagman(info: &ClusterInfo) -> bool {
    info.universe == Some(Universe::Scheduler)
}

/// The clusters of each batch line, as indexes into `clusters`, in the
/// order the lines are shown.
fn group_clusters(clusters: &[ClusterRows], infos: &[ClusterInfo]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut by_cluster: HashMap<i64, usize> = HashMap::new();
    let mut by_name: HashMap<(String, String), usize> = HashMap::new();
    for (i, (c, info)) in clusters.iter().zip(infos).enumerate() {
        let parent = info.dagman_job_id.and_then(|d| by_cluster.get(&d).copied());
        let group = if let Some(g) = parent {
            g
        } else if let (Some(name), None, false) =
            (&info.batch_name, info.dagman_job_id, is_dagman(info))
        {
            *by_name
                .entry((name.clone(), c.owner.clone()))
                .or_insert_with(|| {
                    groups.push(Vec::new());
                    groups.len() - 1
                })
        } else {
            groups.push(Vec::new());
            groups.len() - 1
        };
        groups[group].push(i);
        by_cluster.insert(c.cluster, group);
    }
    groups
}

/// The line of one group of clusters (see [`group_clusters`]).
fn batch_line(
    clusters: &[ClusterRows],
    infos: &[ClusterInfo],
    members: &[usize],
    history: &HashMap<i64, i64>,
    partial: bool,
) -> BatchLine {
    let first = &clusters[members[0]];
    let finfo = &infos[members[0]];
    let mut states = StatusCounts::default();
    let (mut done, mut total, mut unknown) = (0i64, 0i64, false);
    let mut ids: Option<(JobId, JobId)> = None;
    for &m in members {
        let (c, info) = (&clusters[m], &infos[m]);
        if is_dagman(info) {
            total += info.dag_nodes_total;
            done += info.dag_nodes_done;
            continue;
        }
        for (s, n) in c.states.iter().enumerate() {
            states[s] += n;
        }
        if info.dagman_job_id.is_none() {
            let submitted = info.total_submit_procs.or_else(|| {
                let hist = history.get(&c.cluster).copied().unwrap_or(-1);
                Some(c.max_proc_in_queue.max(hist) + 1)
            });
            match submitted {
                Some(t) => {
                    total += t;
                    if !partial {
                        done += t - c.count;
                    }
                }
                None => unknown = true,
            }
        }
        let (lo, hi) = c.id_range();
        ids = Some(match ids {
            None => (lo, hi),
            Some((a, b)) => (a.min(lo), b.max(hi)),
        });
    }
    // A DAGMan job alone stands for itself.
    let (lo, hi) = ids.unwrap_or_else(|| first.id_range());
    let name = match (&finfo.batch_name, &finfo.dag_node_name) {
        (Some(n), _) => n.clone(),
        _ if is_dagman(finfo) => format!("DAG: {}", first.cluster),
        (None, Some(node)) if finfo.dagman_job_id.is_some() => format!("NODE: {node}"),
        _ => format!("ID: {}", first.cluster),
    };
    BatchLine {
        owner: first.owner.clone(),
        name,
        qdate: first.qdate,
        done: if unknown { 0 } else { done },
        run: states[JobStatus::Running as usize] + states[JobStatus::TransferringOutput as usize],
        idle: states[JobStatus::Idle as usize] + states[JobStatus::Suspended as usize],
        held: states[JobStatus::Held as usize],
        total: if unknown { 0 } else { total },
        ids: job_ids_text(lo, hi),
    }
}

/// `c.p`, `c.p-q` or `c1.p1 ... c2.p2`.
pub fn job_ids_text(lo: JobId, hi: JobId) -> String {
    if lo == hi {
        format!("{lo}")
    } else if lo.cluster == hi.cluster {
        format!("{}.{}-{}", lo.cluster, lo.proc, hi.proc)
    } else {
        format!("{lo} ... {hi}")
    }
}

/// The header and lines of the batch view.
pub fn render_batch(lines: &[BatchLine], width: Option<usize>) -> Vec<String> {
    let any_held = lines.is_empty() || lines.iter().any(|l| l.held > 0);
    let (owner_w, name_w, truncate) = if lines.is_empty() {
        // The widths of the headings (condor_q fixes them up only when
        // there are rows).
        (5, 12, false)
    } else {
        let longest_owner = lines
            .iter()
            .map(|l| l.owner.chars().count())
            .max()
            .unwrap_or(0);
        let longest_name = lines
            .iter()
            .map(|l| l.name.chars().count())
            .max()
            .unwrap_or(0);
        let ids = lines.iter().map(|l| l.ids.len()).max().unwrap_or(0);
        let (o, n) = match width {
            Some(w) => shrink_batch_widths(
                w as i64,
                longest_owner as i64,
                longest_name as i64,
                ids as i64,
            ),
            None => (longest_owner as i64, longest_name as i64),
        };
        let heading_w = longest_owner.max(5) as i64;
        let owner_w = if o < heading_w { o.max(8) } else { o };
        (owner_w as usize, n.max(10) as usize, width.is_some())
    };
    let counter_heads: Vec<&str> = if any_held {
        vec!["  DONE", "  RUN ", "  IDLE", "  HOLD", " TOTAL"]
    } else {
        vec!["  DONE", "  RUN ", "  IDLE", " TOTAL"]
    };
    let mut out = Vec::with_capacity(lines.len() + 1);
    out.push(format!(
        "{:<owner_w$} {:<name_w$} {:>12} {} JOB_IDS",
        "OWNER",
        "BATCH_NAME",
        "SUBMITTED",
        counter_heads.join(" ")
    ));
    for l in lines {
        let counter = |n: i64| {
            if n > 0 {
                format!("{n:6}")
            } else {
                "     _".to_string()
            }
        };
        let mut counters = vec![counter(l.done), counter(l.run), counter(l.idle)];
        if any_held {
            counters.push(counter(l.held));
        }
        counters.push(counter(l.total));
        let cut = |s: &str, w: usize| -> String {
            if truncate {
                s.chars().take(w).collect()
            } else {
                s.to_string()
            }
        };
        out.push(format!(
            "{:<owner_w$} {:<name_w$} {:>12} {} {}",
            cut(&l.owner, owner_w),
            cut(&l.name, name_w),
            date(l.qdate),
            counters.join(" "),
            l.ids
        ));
    }
    out
}

/// condor_q's fit of the OWNER, BATCH_NAME and JOB_IDS columns into a
/// terminal `width` columns wide (reduce_results): returns the owner and
/// batch name widths to use.
pub fn shrink_batch_widths(width: i64, owner: i64, name: i64, ids: i64) -> (i64, i64) {
    let var_wid = width - 50;
    let (mut owner_w, mut name_w, mut ids_w) = (owner, name, ids);
    if name_w + owner_w + ids_w > var_wid {
        let var_min = 8 + 10 + 9;
        let (mut bw, mut nw) = ((var_wid - var_min) / 3, (var_wid - var_min) / 3);
        let iw = (var_wid - var_min) / 3;
        if iw < ids_w {
            let needed = (name_w + owner_w) - (bw + nw + 10 + 8);
            if needed > 7 && bw < 10 {
                ids_w /= 2;
            }
        }
        if iw + 9 > ids_w {
            let rw = iw + 9 - ids_w;
            nw += rw / 2;
            bw += rw - rw / 2;
        }
        if bw + 10 > name_w {
            let rw = bw + 10 - name_w;
            nw = (8 + nw + rw).min(owner_w) - 8;
        }
        if nw + 8 > owner_w {
            let rw = nw + 8 - owner_w;
            bw = (10 + bw + rw).min(name_w) - 10;
        }
        name_w = name_w.min(bw + 10);
        owner_w = owner_w.min(nw + 8);
    }
    (owner_w, name_w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_ids_are_single_ranges_or_spans() {
        let j = |c, p| JobId {
            cluster: c,
            proc: p,
        };
        assert_eq!(job_ids_text(j(5, 0), j(5, 0)), "5.0");
        assert_eq!(job_ids_text(j(5, 0), j(5, 9)), "5.0-9");
        assert_eq!(job_ids_text(j(5, 2), j(7, 1)), "5.2 ... 7.1");
    }

    fn line(owner: &str, name: &str, idle: i64, held: i64, ids: &str) -> BatchLine {
        BatchLine {
            owner: owner.into(),
            name: name.into(),
            qdate: 0,
            done: 0,
            run: 0,
            idle,
            held,
            total: idle + held,
            ids: ids.into(),
        }
    }

    #[test]
    fn the_empty_batch_view_shows_the_hold_column() {
        assert_eq!(
            render_batch(&[], None),
            ["OWNER BATCH_NAME      SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS"]
        );
    }

    #[test]
    fn short_owners_get_eight_columns_and_hold_hides_without_held_jobs() {
        let head = &render_batch(&[line("nemo", "ID: 1", 1, 0, "1.0")], None)[0];
        assert_eq!(
            head,
            "OWNER    BATCH_NAME    SUBMITTED   DONE   RUN    IDLE  TOTAL JOB_IDS"
        );
        let head = &render_batch(&[line("wenger", "DAG: 3696", 0, 1, "1.0")], None)[0];
        assert_eq!(
            head,
            "OWNER  BATCH_NAME    SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS"
        );
    }

    #[test]
    fn batch_columns_shrink_to_the_terminal() {
        // Everything fits in 80 columns: nothing changes.
        assert_eq!(shrink_batch_widths(80, 6, 10, 13), (6, 10));
        // A long batch name gives way, down to what condor_q keeps.
        assert_eq!(shrink_batch_widths(80, 6, 40, 13), (6, 18));
    }
}
