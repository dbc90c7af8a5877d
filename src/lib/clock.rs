//! The clock every tool reads.
//!
//! `TERN_NOW=<unix seconds>` pins the clock to that instant, and
//! `TERN_NOW=<unix seconds>+` starts it there and lets it run forward in real
//! time from the moment the process first read it. Tests and simulations use it;
//! without it the clock is the system clock.

use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// How the process clock was configured, decided once per process.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ClockMode {
    System,
    Fixed(i64),
    Running { start: i64, origin: Instant },
}

static MODE: OnceLock<ClockMode> = OnceLock::new();

/// Parses a `TERN_NOW` value: `N` is a fixed instant, `N+` a running clock.
pub fn parse_tern_now(text: &str) -> Result<ClockMode, String> {
    let t = text.trim();
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
    *MODE.get_or_init(|| match std::env::var("TERN_NOW") {
        Ok(v) => parse_tern_now(&v).unwrap_or(ClockMode::System),
        Err(_) => ClockMode::System,
    })
}

/// Validates `TERN_NOW`, so a tool can refuse to run with a clock it cannot read.
pub fn check_env() -> Result<(), String> {
    match std::env::var("TERN_NOW") {
        Ok(v) => parse_tern_now(&v).map(|_| ()),
        Err(_) => Ok(()),
    }
}

/// The current time as fractional unix seconds.
pub fn now_f64() -> f64 {
    match mode() {
        ClockMode::System => SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0),
        ClockMode::Fixed(s) => s as f64,
        ClockMode::Running { start, origin } => start as f64 + origin.elapsed().as_secs_f64(),
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
        assert!(parse_tern_now("soon").is_err());
        assert!(parse_tern_now("+").is_err());
    }
}
