//! Black-hole protection (spec 5.5): per route, how many jobs it may take
//! now, and how its throttle moves once every 600-second window from the
//! failures and successes seen in it. Pure arithmetic on the counters the
//! router keeps in `router_routes`; the clock is the caller's (TERN_NOW).

/// The length of a throttle window, in seconds: the throttle is in jobs
/// per window.
pub const WINDOW: i64 = 600;

/// A route's counters, as stored between passes.
#[derive(Clone, Debug, PartialEq)]
pub struct Counters {
    /// Jobs per [`WINDOW`]; 0 is no throttle.
    pub throttle: f64,
    pub window_start: i64,
    pub recent_routed: i64,
    pub recent_failed: i64,
    pub recent_succeeded: i64,
}

impl Counters {
    /// A route seen for the first time at `now`: no throttle.
    pub fn new(now: i64) -> Counters {
        Counters {
            throttle: 0.0,
            window_start: now,
            recent_routed: 0,
            recent_failed: 0,
            recent_succeeded: 0,
        }
    }
}

/// A route's limits (its MaxJobs, MaxIdleJobs and FailureRateThreshold).
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    pub max_jobs: i64,
    /// Negative: no idle limit.
    pub max_idle_jobs: i64,
    /// Failures per second.
    pub failure_rate_threshold: f64,
}

/// How many routed copies a route has now: all of them, and those
/// running (JobStatus 2 or 6).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Load {
    pub jobs: i64,
    pub running: i64,
}

/// `AcceptingMoreJobs`: the throttle, the idle limit and MaxJobs all
/// leave room.
pub fn accepting(c: &Counters, l: &Limits, load: Load) -> Result<(), String> {
    if c.throttle > 0.0 && c.recent_routed as f64 >= c.throttle {
        return Err(format!(
            "throttled: {} jobs routed in this window, throttle {}/{WINDOW} jobs/sec",
            c.recent_routed,
            fmt_num(c.throttle)
        ));
    }
    if l.max_idle_jobs >= 0 && load.jobs - load.running >= l.max_idle_jobs {
        return Err(format!(
            "{} idle jobs, MaxIdleJobs is {}",
            load.jobs - load.running,
            l.max_idle_jobs
        ));
    }
    if load.jobs >= l.max_jobs {
        return Err(format!("{} jobs, MaxJobs is {}", load.jobs, l.max_jobs));
    }
    Ok(())
}

/// Moves the throttle once the window has lasted [`WINDOW`] seconds and
/// starts a new window; before then nothing changes. Returns whether the
/// window turned over.
pub fn adjust(c: &mut Counters, l: &Limits, jobs: i64, now: i64) -> bool {
    let delta = now - c.window_start;
    if delta < WINDOW {
        return false;
    }
    let fail = c.recent_failed as f64;
    let succ = c.recent_succeeded as f64;
    let rate = fail / delta as f64;
    if rate > l.failure_rate_threshold && c.recent_failed > 0 {
        let ratio = fail / (fail + jobs as f64 + succ);
        c.throttle = WINDOW as f64 * l.failure_rate_threshold / ratio;
    } else {
        let mut a = 3.0 * succ - 2.0 * fail;
        if a > 0.0 {
            a /= succ + fail;
        }
        a += 2.0;
        if a > 1.0 {
            c.throttle *= a;
        }
        if c.throttle > WINDOW as f64 * l.failure_rate_threshold * 10000.0 {
            c.throttle = 0.0;
        }
        if c.throttle > 0.0 && c.throttle < 1.0 && c.recent_failed == 0 {
            c.throttle = 1.0;
        }
    }
    c.recent_routed = 0;
    c.recent_failed = 0;
    c.recent_succeeded = 0;
    c.window_start = now;
    true
}

/// A number as the log prints it: integers without a fraction.
pub fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            max_jobs: 100,
            max_idle_jobs: 50,
            failure_rate_threshold: 0.03,
        }
    }

    #[test]
    fn nothing_moves_before_the_window_ends() {
        let mut c = Counters::new(1000);
        c.recent_failed = 50;
        assert!(!adjust(&mut c, &limits(), 0, 1599));
        assert_eq!(c.throttle, 0.0);
        assert_eq!(c.recent_failed, 50);
    }

    #[test]
    fn failures_above_the_threshold_set_a_throttle() {
        // 30 failures in 600 s = 0.05/s > 0.03; ratio 30/(30+10+0) = 0.75;
        // throttle = 600 * 0.03 / 0.75 = 24.
        let mut c = Counters::new(0);
        c.recent_failed = 30;
        assert!(adjust(&mut c, &limits(), 10, 600));
        assert_eq!(c.throttle, 24.0);
        assert_eq!(
            (c.recent_failed, c.recent_routed, c.window_start),
            (0, 0, 600)
        );
    }

    #[test]
    fn successes_open_the_throttle_and_a_huge_one_becomes_none() {
        let mut c = Counters::new(0);
        c.throttle = 24.0;
        c.recent_succeeded = 10;
        adjust(&mut c, &limits(), 0, 600);
        // all succeeded: a = 3*10/10 + 2 = 5
        assert_eq!(c.throttle, 120.0);
        c.recent_succeeded = 5;
        c.recent_failed = 5;
        adjust(&mut c, &limits(), 0, 1200);
        // half: a = (15-10)/10 + 2 = 2.5 (the failure rate 5/600 is below 0.03)
        assert_eq!(c.throttle, 300.0);
        adjust(&mut c, &limits(), 0, 1800);
        // nothing finished: a = 2
        assert_eq!(c.throttle, 600.0);
        for k in 0..20 {
            adjust(&mut c, &limits(), 0, 2400 + 600 * k);
        }
        // past 600 * 0.03 * 10000 = 180000 it is no throttle at all
        assert_eq!(c.throttle, 0.0);
    }

    #[test]
    fn a_throttle_below_one_with_no_failures_becomes_one() {
        let mut c = Counters::new(0);
        c.throttle = 0.3;
        c.recent_succeeded = 0;
        adjust(&mut c, &limits(), 0, 600);
        // a = 2: 0.6, then raised to 1
        assert_eq!(c.throttle, 1.0);
    }

    #[test]
    fn accepting_checks_throttle_idle_and_max() {
        let l = limits();
        let mut c = Counters::new(0);
        assert!(
            accepting(
                &c,
                &l,
                Load {
                    jobs: 10,
                    running: 5
                }
            )
            .is_ok()
        );
        c.throttle = 3.0;
        c.recent_routed = 3;
        assert!(
            accepting(&c, &l, Load::default())
                .unwrap_err()
                .contains("throttled")
        );
        c.recent_routed = 2;
        assert!(
            accepting(
                &c,
                &l,
                Load {
                    jobs: 50,
                    running: 0
                }
            )
            .unwrap_err()
            .contains("MaxIdleJobs is 50")
        );
        assert!(
            accepting(
                &c,
                &l,
                Load {
                    jobs: 100,
                    running: 60
                }
            )
            .unwrap_err()
            .contains("MaxJobs is 100")
        );
        let no_idle_limit = Limits {
            max_idle_jobs: -1,
            ..l
        };
        assert!(
            accepting(
                &c,
                &no_idle_limit,
                Load {
                    jobs: 99,
                    running: 0
                }
            )
            .is_ok()
        );
    }
}
