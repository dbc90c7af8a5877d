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
//!
//! Either running form may end in `*<rate>`: the clock runs `rate` times as
//! fast as real time (`TERN_NOW=1700000000+*48` lives a day in half an
//! hour), for soaks and simulations. Waits that are real (a shadow's
//! linger, a pass's lock wait) stay real.

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
        rate: f64,
    },
    /// Reads `start` at the real instant `anchor` (unix seconds).
    Anchored {
        start: i64,
        anchor: f64,
        rate: f64,
    },
}

static MODE: OnceLock<ClockMode> = OnceLock::new();

/// Parses a `TERN_NOW` value: `N` is a fixed instant, `N+` a running clock.
pub fn parse_tern_now(text: &str) -> Result<ClockMode, String> {
    let bad = || {
        format!(
            "TERN_NOW must be unix seconds, optionally followed by '+' or \
             '+@<real unix seconds>', and then by '*<rate>' for a running clock; got '{text}'"
        )
    };
    let t = text.trim();
    let (t, rate) = match t.split_once('*') {
        Some((clock, rate)) if clock.ends_with('+') || clock.contains("+@") => {
            let rate: f64 = rate.parse().map_err(|_| bad())?;
            if !(rate.is_finite() && rate > 0.0) {
                return Err(bad());
            }
            (clock, rate)
        }
        Some(_) => return Err(bad()),
        None => (t, 1.0),
    };
    if let Some((digits, anchor)) = t.split_once("+@") {
        let start: i64 = digits.parse().map_err(|_| bad())?;
        let anchor: f64 = anchor.parse().map_err(|_| bad())?;
        return Ok(ClockMode::Anchored {
            start,
            anchor,
            rate,
        });
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
            rate,
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
    read(mode())
}

/// What the clock `m` reads now.
fn read(m: ClockMode) -> f64 {
    match m {
        ClockMode::System => system_now(),
        ClockMode::Fixed(s) => s as f64,
        ClockMode::Running {
            start,
            origin,
            rate,
        } => start as f64 + origin.elapsed().as_secs_f64() * rate,
        ClockMode::Anchored {
            start,
            anchor,
            rate,
        } => start as f64 + (system_now() - anchor) * rate,
    }
}

/// The `TERN_NOW` value that gives another process this process's clock:
/// a running clock in its anchored form; `None` when the environment's
/// value already does.
pub fn for_children() -> Option<String> {
    passed_on(mode())
}

/// The `TERN_NOW` value that gives another process the clock `m`.
fn passed_on(m: ClockMode) -> Option<String> {
    match m {
        ClockMode::Running {
            start,
            origin,
            rate,
        } => {
            let anchor = system_now() - origin.elapsed().as_secs_f64();
            Some(if rate == 1.0 {
                format!("{start}+@{anchor:.6}")
            } else {
                format!("{start}+@{anchor:.6}*{rate}")
            })
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
    fn a_fast_clock_runs_at_its_rate_and_is_passed_on_anchored() {
        let origin = Instant::now() - std::time::Duration::from_secs(10);
        let here = ClockMode::Running {
            start: 1000,
            origin,
            rate: 48.0,
        };
        let passed = passed_on(here).unwrap();
        assert!(passed.ends_with("*48"), "{passed}");
        let there = parse_tern_now(&passed).unwrap();
        let (a, b) = (read(here), read(there));
        // Ten real seconds at 48 times real time, and both read alike.
        assert!((a - 1480.0).abs() < 48.0, "{a}");
        assert!((a - b).abs() < 1.0, "{a} vs {b} ({passed})");
    }

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
                anchor: 50.5,
                rate: 1.0
            }
        );
        assert_eq!(
            parse_tern_now("100+@50.5*48").unwrap(),
            ClockMode::Anchored {
                start: 100,
                anchor: 50.5,
                rate: 48.0
            }
        );
        assert!(matches!(
            parse_tern_now("5+*2.5").unwrap(),
            ClockMode::Running {
                start: 5,
                rate: 2.5,
                ..
            }
        ));
        assert!(parse_tern_now("5*2").is_err(), "a fixed clock has no rate");
        assert!(parse_tern_now("5+*0").is_err());
        assert!(parse_tern_now("5+*-1").is_err());
        assert!(parse_tern_now("5+*x").is_err());
        assert!(parse_tern_now("100+@x").is_err());
        assert!(parse_tern_now("soon").is_err());
        assert!(parse_tern_now("+").is_err());
    }
}
