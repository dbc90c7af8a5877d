//! Hooks: site programs that tern runs at set points (spec section 8 and
//! 5.8), and the one way every hook is run.
//!
//! [`run`] starts a hook program with its stdin, a timeout, its stderr kept
//! in a log file under SPOOL (locked while it runs, so one instance runs at
//! a time) and, where a job is involved, as the job's owner. [`output`]
//! reads what hooks print. [`starter_logs`] names the starter job hooks'
//! stderr logs and removes those of jobs that left the queue. The callers (the router's hooks, the starter job
//! hooks in the shadow, the fetch-work hooks and the daemon ClassAd hooks of
//! the negotiation pass) decide when a hook runs and what its result does.
//!
//! Layering: `hooks` sits on `classad`, `config` and `sys`, below
//! `negotiator`, `shadow` and `router`.

pub mod cron;
pub mod output;
pub mod run;
pub mod starter_logs;

pub use output::parse_attributes;
pub use run::{Invocation, Outcome, Running};
