//! A follower of the queue's transaction log ([`Replay`]) and the queue
//! as plain text ([`View`]), so that what the store holds and what its log
//! says can be compared: the model, crash and concurrency tests all check
//! the store against a replay of its log.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use tern::classad::ClassAd;
use tern::classad::unparse::unparse;
use tern::queue::{JobId, JobRow, LogRecord, Queue, QueueError, Selection, op};

/// An ad's attributes as text: lower-cased name -> value in new syntax.
pub type Attrs = BTreeMap<String, String>;

/// The queue as a follower of the transaction log sees it: each ad key
/// (`0c.-1` for a cluster, `c.p` for a job) with its attributes. A
/// transaction takes effect at its END record, so a follower never sees
/// half of one.
#[derive(Clone, Debug, Default)]
pub struct Replay {
    pub ads: BTreeMap<String, Attrs>,
    /// The last record read.
    pub position: i64,
    /// The records of the transaction being read.
    open: Option<Vec<LogRecord>>,
    /// Transactions completed.
    pub transactions: usize,
}

impl Replay {
    /// Reads `records`, which must continue the log where the last call
    /// left it: each one's seq is the next number.
    pub fn apply(&mut self, records: &[LogRecord]) -> Result<(), String> {
        for r in records {
            if r.seq != self.position + 1 {
                return Err(format!(
                    "log record {} follows {}: the log has a gap or is out of order",
                    r.seq, self.position
                ));
            }
            self.position = r.seq;
            match (r.op, &mut self.open) {
                (op::BEGIN, None) => self.open = Some(Vec::new()),
                (op::BEGIN, Some(_)) => {
                    return Err(format!("record {}: BEGIN inside a transaction", r.seq));
                }
                (op::END, Some(_)) => {
                    let recs = self.open.take().unwrap_or_default();
                    self.commit(&recs)?;
                    self.transactions += 1;
                }
                (_, None) => {
                    return Err(format!("record {} ({}) outside a transaction", r.seq, r.op));
                }
                (_, Some(recs)) => recs.push(r.clone()),
            }
        }
        Ok(())
    }

    /// Whether a transaction was begun and not ended.
    pub fn in_transaction(&self) -> bool {
        self.open.is_some()
    }

    fn commit(&mut self, recs: &[LogRecord]) -> Result<(), String> {
        for r in recs {
            match r.op {
                op::NEW_AD => {
                    if self.ads.insert(r.key.clone(), Attrs::new()).is_some() {
                        return Err(format!("record {}: new ad {} exists", r.seq, r.key));
                    }
                }
                op::DESTROY_AD => {
                    if self.ads.remove(&r.key).is_none() {
                        return Err(format!("record {}: destroys missing ad {}", r.seq, r.key));
                    }
                }
                op::SET_ATTR | op::SET_ATTRS => {
                    let sets = r.sets().map_err(|e| format!("record {}: {e}", r.seq))?;
                    let Some(ad) = self.ads.get_mut(&r.key) else {
                        return Err(format!(
                            "record {}: sets attributes of missing ad {}",
                            r.seq, r.key
                        ));
                    };
                    for (name, value) in sets {
                        ad.insert(name.to_ascii_lowercase(), value);
                    }
                }
                op::DELETE_ATTR => {
                    // A job's ad is chained to its cluster ad: deleting an
                    // attribute the cluster ad has masks it with undefined,
                    // as HTCondor's ClassAd::Delete does.
                    let name = r.name.to_ascii_lowercase();
                    let masks = job_of_key(&r.key).is_some_and(|id| {
                        self.ads
                            .get(&tern::queue::cluster_key(id.cluster))
                            .is_some_and(|c| c.contains_key(&name))
                    });
                    match self.ads.get_mut(&r.key) {
                        Some(ad) if masks => {
                            ad.insert(name, "undefined".into());
                        }
                        Some(ad) => {
                            ad.remove(&name);
                        }
                        None => {
                            return Err(format!(
                                "record {}: deletes from missing ad {}",
                                r.seq, r.key
                            ));
                        }
                    }
                }
                other => return Err(format!("record {}: unknown op {other}", r.seq)),
            }
        }
        Ok(())
    }

    /// The clusters with a cluster ad.
    pub fn clusters(&self) -> BTreeSet<i64> {
        self.ads.keys().filter_map(|k| cluster_of_key(k)).collect()
    }

    /// How many jobs each cluster has.
    pub fn procs_per_cluster(&self) -> BTreeMap<i64, usize> {
        let mut out = BTreeMap::new();
        for key in self.ads.keys() {
            if let Some(id) = job_of_key(key) {
                *out.entry(id.cluster).or_default() += 1;
            }
        }
        out
    }

    /// The jobs as a [`View`].
    pub fn view(&self) -> Result<View, String> {
        let mut view = View::default();
        for (key, attrs) in &self.ads {
            if cluster_of_key(key).is_some() {
                continue;
            }
            let id = job_of_key(key).ok_or_else(|| format!("bad ad key '{key}' in the log"))?;
            let cluster = self
                .ads
                .get(&tern::queue::cluster_key(id.cluster))
                .ok_or_else(|| format!("job {id} has no cluster ad in the log"))?;
            let own = attrs
                .iter()
                .filter(|(k, v)| cluster.get(*k) != Some(*v))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            view.jobs.insert(id, own);
            view.clusters.insert(id.cluster, cluster.clone());
        }
        Ok(view)
    }
}

/// Jobs as their cluster ads (of the clusters with jobs) and each job's
/// attributes that differ from its cluster ad: the same thing as every
/// job's full ad, and much cheaper to compare.
#[derive(Debug, Default, PartialEq)]
pub struct View {
    pub clusters: BTreeMap<i64, Attrs>,
    pub jobs: BTreeMap<JobId, Attrs>,
}

impl View {
    /// Where two views first differ, for a failure message.
    pub fn difference(&self, other: &View, what: (&str, &str)) -> Option<String> {
        let ids = |v: &View| v.jobs.keys().copied().collect::<Vec<_>>();
        if ids(self) != ids(other) {
            return Some(format!(
                "{} holds jobs {:?}, {} {:?}",
                what.0,
                ids(self),
                what.1,
                ids(other)
            ));
        }
        for (c, ad) in &self.clusters {
            if let Some(d) = first_difference(what, ad, &other.clusters[c]) {
                return Some(format!("cluster {c}: {d}"));
            }
        }
        for (id, ad) in &self.jobs {
            if let Some(d) = first_difference(what, ad, &other.jobs[id]) {
                return Some(format!("job {id}: {d}"));
            }
        }
        None
    }
}

fn cluster_of_key(key: &str) -> Option<i64> {
    key.strip_prefix('0')?.strip_suffix(".-1")?.parse().ok()
}

fn job_of_key(key: &str) -> Option<JobId> {
    if cluster_of_key(key).is_some() {
        return None;
    }
    let (c, p) = key.split_once('.')?;
    Some(JobId {
        cluster: c.parse().ok()?,
        proc: p.parse().ok()?,
    })
}

fn attrs_of(ad: &ClassAd) -> Attrs {
    ad.iter()
        .map(|(n, e)| (n.to_ascii_lowercase(), unparse(e)))
        .collect()
}

/// The queue as a [`View`], and every job with its full ad.
pub fn queue_view(q: &Queue) -> Result<(View, Vec<(JobRow, ClassAd)>), QueueError> {
    let jobs = q.select(&Selection::default())?;
    let mut view = View::default();
    let mut cluster_ads: BTreeMap<i64, Rc<ClassAd>> = BTreeMap::new();
    for (row, ad) in &jobs {
        let c = row.id.cluster;
        if let std::collections::btree_map::Entry::Vacant(e) = cluster_ads.entry(c) {
            let cad = q.cluster_ad(c)?;
            view.clusters.insert(c, attrs_of(&cad));
            e.insert(cad);
        }
        let (cad, cattrs) = (&cluster_ads[&c], &view.clusters[&c]);
        let mut own = Attrs::new();
        for (name, e) in ad.iter_shared() {
            // An expression shared with the cluster ad is the cluster's.
            if cad.get(name).is_some_and(|ce| std::ptr::eq(ce, &**e)) {
                continue;
            }
            let lc = name.to_ascii_lowercase();
            let text = unparse(e);
            if cattrs.get(&lc) != Some(&text) {
                own.insert(lc, text);
            }
        }
        view.jobs.insert(row.id, own);
    }
    Ok((view, jobs))
}

/// Where two maps first differ, for a failure message.
pub fn first_difference<K: Ord + std::fmt::Debug, V: PartialEq + std::fmt::Debug>(
    what: (&str, &str),
    a: &BTreeMap<K, V>,
    b: &BTreeMap<K, V>,
) -> Option<String> {
    for (k, v) in a {
        match b.get(k) {
            None => return Some(format!("{k:?} is in {} but not in {}", what.0, what.1)),
            Some(w) if w != v => {
                return Some(format!("{k:?}: {} has {v:?}, {} has {w:?}", what.0, what.1));
            }
            _ => {}
        }
    }
    b.keys()
        .find(|k| !a.contains_key(k))
        .map(|k| format!("{k:?} is in {} but not in {}", what.1, what.0))
}
