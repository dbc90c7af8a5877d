//! tern: HTCondor's scheduling model on one Linux workstation.
//!
//! The library holds every concept as its own module; the binaries under
//! `src/bin/` are thin wrappers around [`cli`]. Layering, lowest first:
//! `sys`, `clock`, `cron`, `classad` <- `vocab` <- `config` <- `submit` <- `queue` <- `hooks` <-
//! (`userlog`, `machine`, `sandbox`, `transform`, `negotiator`, `shadow`,
//! `router`, `watch`) <- `actions` <- `grid` <- `cli`. A lower module never imports a
//! higher one.
//!
//! Calls into the C library live in [`sys`] (and the shadow's process
//! layer, `shadow::procs`), each behind a safe function with its SAFETY
//! argument; everywhere else `unsafe` is refused by the compiler.

#![deny(unsafe_code)]

/// A line on stderr, as `eprintln!` writes it but never panicking: a
/// tool whose stderr is a log on a full file system (a shadow's ShadowLog
/// in a full SPOOL) or a closed pipe loses the line, not its work, where
/// `eprintln!` panics when the write fails.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod actions;
pub mod classad;
pub mod cli;
pub mod clock;
pub mod config;
pub mod cron;
pub mod grid;
pub mod hooks;
pub mod machine;
pub mod negotiator;
pub mod queue;
pub mod router;
pub mod sandbox;
pub mod shadow;
pub mod submit;
#[allow(unsafe_code)]
pub mod sys;
pub mod transform;
pub mod userlog;
pub mod vocab;
pub mod watch;
