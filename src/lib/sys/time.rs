//! Local time as the C library computes it (honouring `TZ` and the
//! system's zone files), for the tools that print times the way their
//! HTCondor counterparts do through `localtime` and `mktime`.

/// Local calendar fields.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalTime {
    pub year: i64,
    pub mon: u32,
    pub mday: u32,
    pub hour: u32,
    pub min: u32,
    pub sec: u32,
}

/// `secs` since the epoch in local time; the epoch itself when the C
/// library cannot convert it.
pub fn local_time(secs: i64) -> LocalTime {
    let tm = super::tz::local_tm(secs);
    match tm {
        Some(tm) => LocalTime {
            year: tm.tm_year as i64 + 1900,
            mon: (tm.tm_mon + 1) as u32,
            mday: tm.tm_mday as u32,
            hour: tm.tm_hour as u32,
            min: tm.tm_min as u32,
            sec: tm.tm_sec as u32,
        },
        None => LocalTime {
            year: 1970,
            mon: 1,
            mday: 1,
            hour: 0,
            min: 0,
            sec: 0,
        },
    }
}

/// Local midnight of a date, as `mktime` reads it: `year` counts from
/// 1900, `month` from 1, and out-of-range fields are normalised (day 0 is
/// the last of the month before).
pub fn local_midnight(year: i32, month: i32, day: i32) -> i64 {
    // SAFETY: tm is plain data we own and fill in; mktime reads and
    // normalises it.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        tm.tm_year = year;
        tm.tm_mon = month - 1;
        tm.tm_mday = day;
        tm.tm_isdst = -1;
        libc::mktime(&mut tm) as i64
    }
}

/// The time since boot, suspend included (CLOCK_BOOTTIME): the same in
/// every process, and never set back, unlike the wall clock.
pub fn boot_time() -> std::time::Duration {
    // SAFETY: an all-zero timespec is valid for clock_gettime to fill.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: clock_gettime writes only into `ts`, which we own.
    unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}
