//! Which jobs `tern_q` shows, read through the queue's indexes: the
//! [`Filter`] built from the command line, the hot columns of each row
//! (ClusterId, ProcId, JobStatus, Owner, JobPrio, QDate,
//! EnteredCurrentStatus) that answer most of it without an ad, and the
//! counts for the totals lines.

use std::rc::Rc;

use crate::classad::ast::{AttrRef, Expr};
use crate::classad::{ClassAd, Value, eval_in};
use crate::negotiator::matchmaking::contains_lower;
use crate::queue::listing::{AdBuilder, HotRow, ScanRange, StatusCounts};
use crate::queue::{JobId, JobRow, Queue};
use crate::vocab::JobStatus;

use super::CliError;

/// The attributes kept as columns of every job row, and so known without
/// reading the job's ad.
pub const HOT: [&str; 7] = [
    "ClusterId",
    "ProcId",
    "JobStatus",
    "Owner",
    "JobPrio",
    "QDate",
    "EnteredCurrentStatus",
];

/// Which jobs are shown. Owners are alternatives, and so are ids; when
/// both are given a job must match one of each (condor_q's rule). Every
/// constraint must hold.
#[derive(Debug, Default)]
pub struct Filter {
    /// Only this user's jobs: condor_q's default when no owner or id is
    /// named and -allusers is not given.
    pub only_mine: bool,
    pub owners: Vec<String>,
    pub clusters: Vec<i64>,
    pub jobs: Vec<JobId>,
    /// -run or -hold.
    pub statuses: Option<&'static [JobStatus]>,
    pub constraints: Vec<Expr>,
    /// The constraints read only hot attributes.
    pub constraints_hot: bool,
    /// Something read from the hot columns (a constraint or a column)
    /// reads JobPrio. The prio column holds the job's JobPrio only when
    /// that is an integer; a job whose ad sets it to an expression is
    /// then read from its full ad (see [`prio_in_ad`]).
    pub reads_prio: bool,
}

impl Filter {
    /// The test that needs no ad.
    pub(super) fn hot_match(&self, row: &HotRow<'_>, me: &str) -> bool {
        if self.only_mine && row.owner != me {
            return false;
        }
        if !self.owners.is_empty() && !self.owners.iter().any(|o| o == row.owner) {
            return false;
        }
        if (!self.clusters.is_empty() || !self.jobs.is_empty())
            && !self.clusters.contains(&row.id.cluster)
            && !self.jobs.contains(&row.id)
        {
            return false;
        }
        if let Some(s) = self.statuses
            && !row.status().is_some_and(|st| s.contains(&st))
        {
            return false;
        }
        true
    }

    /// The rows the filter can show, for the scan to read through the
    /// indexes; [`Filter::hot_match`] still decides each one.
    pub(super) fn range(&self, me: &str) -> ScanRange {
        ScanRange {
            clusters: self.clusters.clone(),
            jobs: self.jobs.clone(),
            owners: if self.only_mine {
                vec![me.to_string()]
            } else {
                self.owners.clone()
            },
            statuses: self.statuses.map(<[JobStatus]>::to_vec).unwrap_or_default(),
        }
    }

    /// The whole test, for a job whose full ad is at hand (the -run and
    /// -hold status filter aside: the caller chose the statuses).
    pub(super) fn matches_row(&self, row: &JobRow, ad: &Rc<ClassAd>, me: &str) -> bool {
        let hot = HotRow {
            id: row.id,
            status: self
                .statuses
                .and_then(|s| s.first().map(|st| st.code()))
                .unwrap_or(row.status),
            owner: &row.owner,
            prio: row.prio,
            qdate: row.qdate,
            entered: row.entered,
            diff: None,
        };
        self.hot_match(&hot, me) && self.constraints.iter().all(|c| eval_in(ad, c).is_true())
    }

    /// Only some jobs of a cluster may be shown, so the batch view cannot
    /// tell how many have left the queue (condor_q's
    /// `querying_partial_clusters`).
    pub(super) fn partial(&self) -> bool {
        !self.constraints.is_empty() || !self.jobs.is_empty() || self.statuses.is_some()
    }
}

/// Job counts for the totals lines.
#[derive(Default)]
pub(super) struct Totals {
    pub query: StatusCounts,
    pub mine: StatusCounts,
    pub all: StatusCounts,
}

pub(super) fn count(c: &mut StatusCounts, status: i64) {
    if JobStatus::from_code(status).is_some() {
        c[status as usize] += 1;
    }
}

/// Runs the query: the jobs in the filter's range ([`Filter::range`]) go
/// through the filter, and `take` gets the shown ones, with the job's full
/// ad when `full` (built once per job and shared with the constraint).
/// `seen` sees every job of the range first. The totals of all jobs and of
/// `me`'s come from the queue's counts, not from the scan.
pub(super) fn select(
    q: Option<&Queue>,
    filter: &Filter,
    me: &str,
    full: bool,
    totals: &mut Totals,
    mut seen: impl FnMut(&HotRow<'_>),
    mut take: impl FnMut(&HotRow<'_>, Option<Rc<ClassAd>>) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let Some(q) = q else { return Ok(()) };
    // Reading JobPrio from the columns needs the stored differences too,
    // as text only, to tell the rows whose JobPrio is an expression.
    let need_ads = full || !filter.constraints_hot || filter.reads_prio;
    let mut builder = AdBuilder::new();
    (totals.all, totals.mine) = q.job_counts(me)?;
    q.scan_range(&filter.range(me), need_ads, |row| -> Result<(), CliError> {
        seen(row);
        if !filter.hot_match(row, me) {
            return Ok(());
        }
        let mut ad: Option<Rc<ClassAd>> = None;
        let prio_expr = filter.reads_prio && prio_in_ad(row);
        if prio_expr {
            ad = Some(Rc::new(builder.full_ad(q, row)?));
        }
        if !filter.constraints.is_empty() {
            let test = if let Some(a) = &ad {
                a.clone()
            } else if filter.constraints_hot {
                Rc::new(hot_ad(row))
            } else {
                let a = Rc::new(builder.full_ad(q, row)?);
                ad = Some(a.clone());
                a
            };
            if !filter
                .constraints
                .iter()
                .all(|c| eval_in(&test, c).is_true())
            {
                return Ok(());
            }
        }
        count(&mut totals.query, row.status);
        if full && ad.is_none() {
            ad = Some(Rc::new(builder.full_ad(q, row)?));
        }
        take(row, ad)
    })
}

/// The totals of a query that selects whole owners (no id, status or
/// constraint: all jobs, or `me`'s), taken from the queue's kept counts
/// without reading a job row, so `tern_q -totals` costs the same at any
/// queue size. Returns false, counting nothing, for any other query.
pub(super) fn counted_totals(
    q: Option<&Queue>,
    filter: &Filter,
    me: &str,
    totals: &mut Totals,
) -> Result<bool, CliError> {
    let whole_owners = filter.constraints.is_empty()
        && filter.clusters.is_empty()
        && filter.jobs.is_empty()
        && filter.statuses.is_none()
        && filter.owners.is_empty();
    if !whole_owners {
        return Ok(false);
    }
    if let Some(q) = q {
        (totals.all, totals.mine) = q.job_counts(me)?;
        totals.query = if filter.only_mine {
            totals.mine
        } else {
            totals.all
        };
    }
    Ok(true)
}

/// Whether the job's JobPrio is an expression kept in its stored
/// differences (the queue keeps an integer JobPrio in the prio column
/// and anything else in the ad, where it wins). A textual test on the
/// new-syntax difference text: a false positive only costs building the
/// full ad.
pub(super) fn prio_in_ad(row: &HotRow<'_>) -> bool {
    row.diff
        .is_some_and(|d| d.len() > 4 && contains_lower(d, b" jobprio = "))
}

/// A job's hot attributes as an ad.
pub(super) fn hot_ad(row: &HotRow<'_>) -> ClassAd {
    let mut ad = ClassAd::new();
    ad.insert("ClusterId", Expr::int(row.id.cluster));
    ad.insert("ProcId", Expr::int(row.id.proc));
    ad.insert("JobStatus", Expr::int(row.status));
    ad.insert("Owner", Expr::string(row.owner));
    ad.insert("JobPrio", Expr::int(row.prio));
    ad.insert("QDate", Expr::int(row.qdate));
    ad.insert("EnteredCurrentStatus", Expr::int(row.entered));
    ad
}

/// The value of a hot attribute (an index into [`HOT`]) of a row.
pub(super) fn hot_value(row: &HotRow<'_>, which: usize) -> Value {
    match which {
        0 => Value::Int(row.id.cluster),
        1 => Value::Int(row.id.proc),
        2 => Value::Int(row.status),
        3 => Value::str(row.owner),
        4 => Value::Int(row.prio),
        5 => Value::Int(row.qdate),
        _ => Value::Int(row.entered),
    }
}

fn hot_index(name: &str) -> Option<usize> {
    HOT.iter().position(|h| h.eq_ignore_ascii_case(name))
}

/// Whether an expression reads JobPrio (see [`Filter::reads_prio`]).
pub fn reads_jobprio(e: &Expr) -> bool {
    let mut found = false;
    e.walk_attrs(&mut |a| found |= a.name.key() == "jobprio");
    found
}

/// Whether an expression reads nothing but hot attributes of the job (so
/// it has the same value in [`hot_ad`] as in the full ad). Nested ads,
/// other scopes and functions that evaluate text count as reading
/// anything.
pub fn hot_only(e: &Expr) -> bool {
    fn attr_ok(a: &AttrRef) -> bool {
        let base_ok = match &a.base {
            None => true,
            Some(Expr::Attr(b)) => b.base.is_none() && !b.absolute && b.name.key() == "my",
            Some(_) => false,
        };
        base_ok && hot_index(a.name.as_str()).is_some()
    }
    match e {
        Expr::Lit(_) | Expr::RelTimeLit(_) => true,
        Expr::MatchSide(_) | Expr::Ad(_) => false,
        Expr::Attr(a) => attr_ok(a),
        Expr::Unary(_, x) | Expr::Paren(x) => hot_only(x),
        Expr::Binary(_, b) => hot_only(&b.0) && hot_only(&b.1),
        Expr::Elvis(b) | Expr::Index(b) => hot_only(&b.0) && hot_only(&b.1),
        Expr::Cond(b) => hot_only(&b.0) && hot_only(&b.1) && hot_only(&b.2),
        Expr::Call(c) => {
            let dynamic = matches!(
                c.name.to_ascii_lowercase().as_str(),
                "eval" | "evalineachcontext" | "countmatches" | "unresolved" | "debug"
            );
            !dynamic && c.args.iter().all(hot_only)
        }
        Expr::List(items) => items.iter().all(hot_only),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::parse_expr;

    #[test]
    fn hot_expressions_are_recognised() {
        let h = |s: &str| hot_only(&parse_expr(s).unwrap());
        assert!(h("JobStatus == 1 && Owner == \"x\""));
        assert!(h("MY.ProcId > 3 || time() > QDate"));
        assert!(h("true"));
        assert!(!h("Cmd == \"x\""));
        assert!(!h("TARGET.JobStatus == 1"));
        assert!(!h("eval(\"JobStatus\") == 1"));
        assert!(!h("[a = JobStatus].a == 1"));
        assert!(!h("MY"));
    }
}
