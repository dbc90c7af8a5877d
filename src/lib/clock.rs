//! The clock every tool reads.
//!
//! `TERN_NOW=<unix seconds>` pins the clock to that instant, and
//! `TERN_NOW=<unix seconds>+` starts it there and lets it run forward in real
//! time from the moment the process first read it. Tests and simulations use it;
//! without it the clock is the system clock.
//!
//! A privileged (set-group-id) tool ignores `TERN_NOW`: the queue's times
//! are not its caller's to choose.
//!
//! A running clock must read the same in every process of one run (a pass
//! and the shadows it starts), so it can be anchored:
//! `TERN_NOW=<unix seconds>+@<real unix seconds>` reads `<unix seconds>` at
//! the real instant given and runs from there. A tool started with the
//! plain `N+` form anchors it and passes the anchored form to the programs
//! it starts.

use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// How the process clock was configured, decided once per process.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ClockMode {
    System,
    Fixed(i64),
    Running {
        start: i64,
        origin: Instant,
    },
    /// Reads `start` at the real instant `anchor` (unix seconds).
    Anchored {
        start: i64,
        anchor: f64,
    },
}

static MODE: OnceLock<ClockMode> = OnceLock::new();

/// Parses a `TERN_NOW` value: `N` is a fixed instant, `N+` a running clock.
pub fn parse_tern_now(text: &str) -> Result<ClockMode, String> {
    let t = text.trim();
    if let Some((digits, anchor)) = t.split_once("+@") {
        let bad = || {
            format!(
                "TERN_NOW must be unix seconds, optionally followed by '+' or '+@<real unix seconds>'; got '{text}'"
            )
        };
        let start: i64 = digits.parse().map_err(|_| bad())?;
        let anchor: f64 = anchor.parse().map_err(|_| bad())?;
        return Ok(ClockMode::Anchored { start, anchor });
    }
    let (digits, running) = match t.strip_suffix('+') {
        Some(d) => (d, true),
        None => (t, false),
    };
    let secs: i64 = digits.parse().map_err(|_| {
        format!("TERN_NOW must be unix seconds, optionally followed by '+'; got '{text}'")
    })?;
    Ok(if running {
        ClockMode::Running {
            start: secs,
            origin: Instant::now(),
        }
    } else {
        ClockMode::Fixed(secs)
    })
}

/// The clock mode from the environment. A malformed `TERN_NOW` is reported by
/// [`check_env`]; here it falls back to the system clock.
pub fn mode() -> ClockMode {
    *MODE.get_or_init(|| match tern_now() {
        Ok(v) => parse_tern_now(&v).unwrap_or(ClockMode::System),
        Err(_) => ClockMode::System,
    })
}

/// Validates `TERN_NOW`, so a tool can refuse to run with a clock it cannot read.
pub fn check_env() -> Result<(), String> {
    match tern_now() {
        Ok(v) => parse_tern_now(&v).map(|_| ()),
        Err(_) => Ok(()),
    }
}

/// `TERN_NOW`, unless the process is privileged.
fn tern_now() -> Result<String, std::env::VarError> {
    if crate::sys::privilege::is_privileged() {
        return Err(std::env::VarError::NotPresent);
    }
    std::env::var("TERN_NOW")
}

fn system_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The current time as fractional unix seconds.
pub fn now_f64() -> f64 {
    match mode() {
        ClockMode::System => system_now(),
        ClockMode::Fixed(s) => s as f64,
        ClockMode::Running { start, origin } => start as f64 + origin.elapsed().as_secs_f64(),
        ClockMode::Anchored { start, anchor } => start as f64 + (system_now() - anchor),
    }
}

/// The `TERN_NOW` value that gives another process this process's clock:
/// a running clock in its anchored form; `None` when the environment's
/// value already does.
pub fn for_children() -> Option<String> {
    match mode() {
        ClockMode::Running { start, origin } => {
            let anchor = system_now() - origin.elapsed().as_secs_f64();
            Some(format!("{start}+@{anchor:.6}"))
        }
        _ => None,
    }
}

/// The current time in whole unix seconds.
pub fn now() -> i64 {
    now_f64().floor() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fixed_and_running() {
        assert_eq!(
            parse_tern_now("1700000000").unwrap(),
            ClockMode::Fixed(1_700_000_000)
        );
        assert!(matches!(
            parse_tern_now("5+").unwrap(),
            ClockMode::Running { start: 5, .. }
        ));
        assert_eq!(
            parse_tern_now("100+@50.5").unwrap(),
            ClockMode::Anchored {
                start: 100,
                anchor: 50.5
            }
        );
        assert!(parse_tern_now("100+@x").is_err());
        assert!(parse_tern_now("soon").is_err());
        assert!(parse_tern_now("+").is_err());
    }
}
