//! tern: HTCondor's scheduling model on one Linux workstation.
//!
//! The library holds every concept as its own module; the binaries under
//! `src/bin/` are thin wrappers around [`cli`]. Layering, lowest first:
//! `clock`, `classad` <- `config` <- `submit` <- `queue` <- (`userlog`,
//! `machine`, `negotiator`, `shadow`, `router`) <- `cli`. A lower module never
//! imports a higher one.

pub mod classad;
pub mod cli;
pub mod clock;
pub mod config;
pub mod cron;
pub mod machine;
pub mod negotiator;
pub mod queue;
pub mod shadow;
pub mod submit;
pub mod sys;
pub mod userlog;
