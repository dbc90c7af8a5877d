//! The job router (spec 5): moves idle jobs that match a route to a routed
//! copy (a grid-universe job, or a job of another universe) and mirrors the
//! copy's progress back into the original, the source.
//!
//! There is no daemon: [`pass::run`] is one poll of HTCondor's loop, run by
//! `tern_job_router` from cron or from the negotiation pass. What must
//! survive between passes, and a router killed at any instant, lives in the
//! queue database: `router_jobs` (one row per managed job) and
//! `router_routes` (each route's throttle counters), see [`state`]. Every
//! state change is one transaction that also changes the jobs it concerns:
//! claiming a source, submitting its copy and recording both commit
//! together, so a job is never lost nor routed twice.
//!
//! By duty: [`config`] reads the routes, [`throttle`] is the black-hole
//! arithmetic, [`vanilla`] turns a job into its routed copy, [`mirror`]
//! copies the routed copy's state into its source, [`orphans`] finds copies
//! and sources no row accounts for, [`hooks`] runs the router hooks, and
//! [`owner`] is the one place the router acts as a job's owner.

pub mod config;
pub mod dryrun;
pub mod finish;
pub mod hooks;
pub mod mirror;
pub mod orphans;
pub mod owner;
pub mod pass;
pub mod state;
pub mod throttle;
pub mod vanilla;

#[cfg(test)]
mod tests;

use crate::queue::QueueError;

/// Attributes the router reads and writes.
pub mod attr {
    pub const MANAGED: &str = "Managed";
    pub const MANAGED_MANAGER: &str = "ManagedManager";
    pub const ROUTED_TO: &str = "RoutedToJobId";
    pub const ROUTED_FROM: &str = "RoutedFromJobId";
    pub const ROUTED_BY: &str = "RoutedBy";
    pub const ROUTE_NAME: &str = "RouteName";
    pub const HOLD_COPIED: &str = "HoldCopiedFromTargetJob";
}

/// The reason a routed copy is removed with when the router gives it up.
pub const ABORT_REASON: &str = "JobRouter aborted job";
/// The reason an orphaned routed copy is removed with.
pub const ORPHAN_REASON: &str = "JobRouter orphan";

#[derive(Debug, thiserror::Error)]
pub enum RouterError {
    #[error(transparent)]
    Queue(#[from] QueueError),
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// A route or transform that cannot be used, by name.
    #[error("route {name}: {reason}")]
    Route { name: String, reason: String },
    /// `-dry-run` of a job the queue does not hold.
    #[error("job {0} is not in the queue")]
    NoJob(crate::queue::JobId),
}
