//! CronTab schedules ("crondor"): the five `Cron*` job attributes parsed into
//! sets of values, and the next run time they give.
//!
//! Pure code over std and chrono: the schedd side (submit, the negotiation
//! pass, qedit) reads the attributes, calls [`Schedule::parse`] and
//! [`Schedule::next_after`] with `chrono::Local` (which honours `TZ`), and
//! writes the result to `DeferralTime`.
//!
//! Field parsing keeps HTCondor's quirks on purpose (spec section 1.3): steps
//! select the values divisible by the step (`1-10/3` is 3,6,9), range ends are
//! clamped to the field's bounds, an out-of-range single value means the whole
//! range, day of week 7 is Sunday, and `*` (with any step) adds nothing to the
//! day of week. The next-run search follows spec section 1.4 with the intended
//! behaviour where HTCondor has plain bugs: the day-of-week "day 0" bug is
//! gone, and a schedule that can never match (30 February) is an error instead
//! of a stack overflow.

use chrono::{
    DateTime, Datelike, Days, LocalResult, NaiveDate, NaiveDateTime, Offset, TimeZone, Timelike,
};

/// The job attributes, in field order (minute, hour, day of month, month, day of week).
pub const ATTRIBUTES: [&str; 5] = [
    "CronMinute",
    "CronHour",
    "CronDayOfMonth",
    "CronMonth",
    "CronDayOfWeek",
];

/// The submit keywords, in the same order as [`ATTRIBUTES`].
pub const SUBMIT_KEYS: [&str; 5] = [
    "cron_minute",
    "cron_hour",
    "cron_day_of_month",
    "cron_month",
    "cron_day_of_week",
];

// Field indices (minute = 0 and hour = 1 are only named in the tests).
const DAY_OF_MONTH: usize = 2;
const MONTH: usize = 3;
const DAY_OF_WEEK: usize = 4;

/// Bounds of each field, and the noun an error message uses for its values.
const BOUNDS: [(i64, i64, &str); 5] = [
    (0, 59, "minute"),
    (0, 23, "hour"),
    (1, 31, "day of the month"),
    (1, 12, "month"),
    (0, 7, "day of the week"),
];

/// How far ahead [`Schedule::next_after`] looks. The longest gap a schedule
/// that [`Schedule::parse`] accepts can have is 29 February across a
/// non-leap century year (2096 to 2104), a little over 8 years.
const SEARCH_DAYS: u64 = 3700;

/// Why a schedule was rejected. Every variant names the job attribute at
/// fault; a job whose schedule goes bad after submit is held with
/// HoldReasonCode 25 and this text after "Invalid cron schedule parameters: ".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CronError {
    /// HTCondor's character check: only digits, `,`, `-`, `.`, `/`, `*` and
    /// spaces may appear.
    #[error(
        "Invalid parameter value '{value}' for {attr}: only digits, ',', '-', '/', '*' and spaces are allowed"
    )]
    BadCharacter { attr: &'static str, value: String },
    /// A `/` step that reads as 0 (HTCondor rejects it with an empty message).
    #[error(
        "Invalid parameter value '{value}' for {attr}: a step after '/' must be a number other than 0"
    )]
    ZeroStep { attr: &'static str, value: String },
    /// The field selects no value at all, e.g. `7/5` or `30-10`.
    #[error("Invalid cron attribute: {attr} = '{value}' selects no {unit}")]
    Empty {
        attr: &'static str,
        value: String,
        unit: &'static str,
    },
    /// The days of the month exist in none of the months, and the day of the
    /// week adds no other days (30 February, 31 April).
    #[error(
        "Invalid cron schedule: no month in CronMonth = '{months}' has a day in {attr} = '{days}', so the job would never run"
    )]
    Impossible {
        attr: &'static str,
        days: String,
        months: String,
    },
}

impl CronError {
    /// The job attribute the error is about.
    pub fn attr(&self) -> &'static str {
        match self {
            CronError::BadCharacter { attr, .. }
            | CronError::ZeroStep { attr, .. }
            | CronError::Empty { attr, .. }
            | CronError::Impossible { attr, .. } => attr,
        }
    }
}

/// How the day-of-month and day-of-week sets combine into the days a schedule
/// runs on (spec 1.4). "Full" goes by count, as in HTCondor: a day-of-month
/// list of all 31 days behaves like `*`, whether written `*` or `1-31`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DayRule {
    /// Day of week is `*` (its set is empty): the day of month decides.
    DayOfMonth,
    /// Day of week lists all seven days: every day.
    Every,
    /// Day of month is full, day of week restricted: the day of week decides.
    DayOfWeek,
    /// Both restricted: either one matching is enough.
    Either,
}

/// A parsed CronTab schedule: one bit set per field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    minutes: u64,
    hours: u64,
    /// Bits 1..=31.
    days: u64,
    /// Bits 1..=12.
    months: u64,
    /// Bits 0..=6, Sunday = 0; empty means `*`.
    weekdays: u64,
    rule: DayRule,
}

/// Whether a job has a CronTab schedule: any of the five attributes is
/// present, whatever its value (HTCondor checks with `LookupExpr`, so an
/// attribute holding a non-string counts here and reads as `*` in parsing).
pub fn has_cron<T>(fields: [Option<T>; 5]) -> bool {
    fields.iter().any(Option::is_some)
}

impl Schedule {
    /// Parses the five fields in [`ATTRIBUTES`] order; a missing field is `*`.
    ///
    /// Rejects what HTCondor rejects (bad characters, a zero step, a field
    /// other than day of week that selects nothing) and, beyond HTCondor, a
    /// schedule whose days exist in none of its months.
    pub fn parse(fields: [Option<&str>; 5]) -> Result<Schedule, CronError> {
        let mut sets = [0u64; 5];
        for (i, set) in sets.iter_mut().enumerate() {
            *set = parse_field(i, fields[i].unwrap_or("*"))?;
        }
        let schedule = Schedule::from_sets(sets);
        if schedule.rule == DayRule::DayOfMonth && !schedule.some_day_exists() {
            return Err(CronError::Impossible {
                attr: ATTRIBUTES[DAY_OF_MONTH],
                days: fields[DAY_OF_MONTH].unwrap_or("*").to_string(),
                months: fields[MONTH].unwrap_or("*").to_string(),
            });
        }
        Ok(schedule)
    }

    fn from_sets([minutes, hours, days, months, weekdays]: [u64; 5]) -> Schedule {
        let rule = if weekdays == 0 {
            DayRule::DayOfMonth
        } else if weekdays.count_ones() == 7 {
            DayRule::Every
        } else if days.count_ones() == 31 {
            DayRule::DayOfWeek
        } else {
            DayRule::Either
        };
        Schedule {
            minutes,
            hours,
            days,
            months,
            weekdays,
            rule,
        }
    }

    /// Whether some listed day of the month exists in some listed month
    /// (29 February counts: leap years come).
    fn some_day_exists(&self) -> bool {
        (1..=12u32).filter(|m| has(self.months, *m)).any(|m| {
            let longest = match m {
                2 => 29,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            self.days & ((1u64 << (longest + 1)) - 2) != 0
        })
    }

    fn runs_on(&self, date: NaiveDate) -> bool {
        let dom = has(self.days, date.day());
        let dow = has(self.weekdays, date.weekday().num_days_from_sunday());
        match self.rule {
            DayRule::DayOfMonth => dom,
            DayRule::Every => true,
            DayRule::DayOfWeek => dow,
            DayRule::Either => dom || dow,
        }
    }

    /// The next run time after `after` (unix seconds), in the time zone `tz`,
    /// or `None` if nothing matches within about ten years.
    ///
    /// The search starts at the next whole minute strictly after `after` (at
    /// exactly hh:mm:00 that is hh:mm+1) and walks local wall-clock minutes
    /// from that instant's local reading, as HTCondor does with `localtime`:
    ///
    /// * A local time that does not exist (the hour skipped when clocks go
    ///   forward) is read with the UTC offset in force before the gap, as
    ///   `mktime` does, so it runs the length of the gap later: in
    ///   Europe/Berlin, 02:30 on the spring-forward day runs at 03:30 CEST.
    /// * A local time that occurs twice (clocks go back) means its first
    ///   occurrence; only if that is already before the start does it mean
    ///   the second. The search moves forward in local time, so a job that
    ///   ran in the first pass of the repeated hour does not run again in the
    ///   second: `30 2 * * *` runs once on that day, and `*/15` pauses for
    ///   the repeated hour. HTCondor's `mktime` picks either occurrence, and
    ///   when that is in the past it falls back to now + 120 s; tern never
    ///   returns a time before the start.
    pub fn next_after<Tz: TimeZone>(&self, after: i64, tz: &Tz) -> Option<i64> {
        let start = after.checked_add(60 - after.rem_euclid(60))?;
        let local = DateTime::from_timestamp(start, 0)?
            .with_timezone(tz)
            .naive_local();
        let first_date = local.date();
        let last_date = first_date.checked_add_days(Days::new(SEARCH_DAYS))?;
        let mut date = first_date;
        while date <= last_date {
            if !has(self.months, date.month()) {
                date = first_of_next_month(date)?;
                continue;
            }
            if self.runs_on(date) {
                let today = date == first_date;
                for hour in bits(self.hours) {
                    if today && hour < local.hour() {
                        continue;
                    }
                    let this_hour = today && hour == local.hour();
                    for minute in bits(self.minutes) {
                        if this_hour && minute < local.minute() {
                            continue;
                        }
                        let wall = date.and_hms_opt(hour, minute, 0)?;
                        if let Some(t) = resolve(tz, wall, start) {
                            return Some(t);
                        }
                    }
                }
            }
            date = date.succ_opt()?;
        }
        None
    }
}

/// The instant of local wall-clock time `wall`, as documented on
/// [`Schedule::next_after`], if it is not before `not_before`.
fn resolve<Tz: TimeZone>(tz: &Tz, wall: NaiveDateTime, not_before: i64) -> Option<i64> {
    match tz.from_local_datetime(&wall) {
        LocalResult::Single(t) => Some(t.timestamp()).filter(|t| *t >= not_before),
        LocalResult::Ambiguous(first, second) => [first.timestamp(), second.timestamp()]
            .into_iter()
            .find(|t| *t >= not_before),
        LocalResult::None => {
            // In a gap: find the offset in force just before it.
            let offset = (1..=96).find_map(|quarters| {
                let earlier = wall - chrono::Duration::minutes(15 * quarters);
                tz.from_local_datetime(&earlier)
                    .latest()
                    .map(|t| t.offset().fix().local_minus_utc())
            })?;
            let t = wall.and_utc().timestamp() - i64::from(offset);
            Some(t).filter(|t| *t >= not_before)
        }
    }
}

fn first_of_next_month(date: NaiveDate) -> Option<NaiveDate> {
    let (y, m) = if date.month() == 12 {
        (date.year() + 1, 1)
    } else {
        (date.year(), date.month() + 1)
    };
    NaiveDate::from_ymd_opt(y, m, 1)
}

fn has(set: u64, value: u32) -> bool {
    value < 64 && set & (1 << value) != 0
}

/// The members of a set, ascending.
fn bits(set: u64) -> impl Iterator<Item = u32> {
    (0..64u32).filter(move |b| has(set, *b))
}

/// Expands one field into a bit set, as HTCondor's `expandParameter` does
/// (spec 1.3). Day-of-week 7 is stored as 0.
fn parse_field(index: usize, text: &str) -> Result<u64, CronError> {
    let attr = ATTRIBUTES[index];
    let (min, max, unit) = BOUNDS[index];
    let day_of_week = index == DAY_OF_WEEK;
    let allowed = |c: char| c.is_ascii_digit() || matches!(c, ',' | '-' | '.' | '/' | '*' | ' ');
    if !text.chars().all(allowed) {
        return Err(CronError::BadCharacter {
            attr,
            value: text.to_string(),
        });
    }
    let squeezed: String = text.chars().filter(|c| *c != ' ').collect();
    let mut set = 0u64;
    for token in squeezed.split(',').filter(|t| !t.is_empty()) {
        let (body, step) = match token.split_once('/') {
            Some((body, step)) => (body, atoi(step)),
            None => (token, 1),
        };
        if step == 0 {
            return Err(CronError::ZeroStep {
                attr,
                value: text.to_string(),
            });
        }
        let (lo, hi) = if let Some((lo, hi)) = body.split_once('-') {
            (atoi(lo).max(min), atoi(hi).min(max))
        } else if body.contains('*') {
            if day_of_week {
                continue;
            }
            (min, max)
        } else {
            let v = atoi(body);
            if (min..=max).contains(&v) {
                (v, v)
            } else {
                (min, max)
            }
        };
        for v in lo..=hi {
            let v = if day_of_week && v == 7 { 0 } else { v };
            if v % step == 0 {
                set |= 1u64 << v;
            }
        }
    }
    if set == 0 && !day_of_week {
        return Err(CronError::Empty {
            attr,
            value: text.to_string(),
            unit,
        });
    }
    Ok(set)
}

/// C's `atoi` on the characters a field may hold: an optional `-`, then
/// digits up to the first other character; nothing numeric reads as 0.
/// Saturates instead of wrapping on overflow.
fn atoi(text: &str) -> i64 {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let magnitude = digits
        .bytes()
        .take_while(u8::is_ascii_digit)
        .fold(0i64, |n, d| {
            n.saturating_mul(10).saturating_add(i64::from(d - b'0'))
        });
    if negative { -magnitude } else { magnitude }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{FixedOffset, Utc};
    use chrono_tz::{America::New_York, Europe::Berlin};
    use std::str::FromStr;

    const MINUTE: usize = 0;
    const HOUR: usize = 1;

    /// A field's set as text: ascending, runs of three or more as `a-b`,
    /// `empty` for none (day of week `*`), or `error: <message>`.
    fn expand(index: usize, text: &str) -> String {
        let set = match parse_field(index, text) {
            Ok(set) => set,
            Err(e) => return format!("error: {e}"),
        };
        let values: Vec<u32> = bits(set).collect();
        if values.is_empty() {
            return "empty".into();
        }
        let mut parts = Vec::new();
        let mut i = 0;
        while i < values.len() {
            let mut j = i;
            while j + 1 < values.len() && values[j + 1] == values[j] + 1 {
                j += 1;
            }
            match j - i {
                0 => parts.push(values[i].to_string()),
                1 => parts.push(format!("{},{}", values[i], values[j])),
                _ => parts.push(format!("{}-{}", values[i], values[j])),
            }
            i = j + 1;
        }
        parts.join(",")
    }

    /// A crontab-style line of five space-separated fields.
    fn schedule(line: &str) -> Result<Schedule, CronError> {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 5, "five fields in {line:?}");
        Schedule::parse([Some(f[0]), Some(f[1]), Some(f[2]), Some(f[3]), Some(f[4])])
    }

    /// `YYYY-MM-DD HH:MM[:SS]` read in `tz` (it must be unambiguous there),
    /// or with a trailing ` +hh:mm` to pick the instant outright.
    fn instant<Tz: TimeZone>(tz: &Tz, text: &str) -> i64 {
        let (wall, offset) = match text.rsplit_once(' ') {
            Some((w, o)) if o.starts_with(['+', '-']) => (w, Some(o)),
            _ => (text, None),
        };
        let wall = NaiveDateTime::parse_from_str(wall, "%Y-%m-%d %H:%M:%S")
            .or_else(|_| NaiveDateTime::parse_from_str(wall, "%Y-%m-%d %H:%M"))
            .unwrap_or_else(|e| panic!("bad time {text:?}: {e}"));
        match offset {
            Some(o) => {
                let o = FixedOffset::from_str(o).expect("offset");
                o.from_local_datetime(&wall).unwrap().timestamp()
            }
            None => tz
                .from_local_datetime(&wall)
                .single()
                .unwrap_or_else(|| panic!("{text:?} is not one instant in the zone"))
                .timestamp(),
        }
    }

    /// Successive runs of `line` from `from`, as many as `want` lists
    /// (comma-separated), each shown in `tz` with `fmt`.
    fn runs<Tz: TimeZone>(tz: &Tz, fmt: &str, line: &str, from: &str, want: &str) -> String
    where
        Tz::Offset: std::fmt::Display,
    {
        let s = match schedule(line) {
            Ok(s) => s,
            Err(e) => return format!("error: {e}"),
        };
        let mut t = instant(tz, from);
        let mut out = Vec::new();
        for _ in 0..want.split(", ").count() {
            match s.next_after(t, tz) {
                Some(next) => {
                    assert!(next > t, "{line} from {from}: {next} not after {t}");
                    assert_eq!(next % 60, 0, "{line} from {from}: not a whole minute");
                    out.push(tz.timestamp_opt(next, 0).unwrap().format(fmt).to_string());
                    t = next;
                }
                None => {
                    out.push("none".into());
                    break;
                }
            }
        }
        out.join(", ")
    }

    /// Runs a table of (schedule, from, expected runs) in `tz` and reports
    /// every failing line at once.
    fn check<Tz: TimeZone>(tz: &Tz, fmt: &str, cases: &[(&str, &str, &str)])
    where
        Tz::Offset: std::fmt::Display,
    {
        let failures: Vec<String> = cases
            .iter()
            .filter_map(|(line, from, want)| {
                let got = runs(tz, fmt, line, from, want);
                (got != *want)
                    .then(|| format!("{line:?} from {from}\n   want {want}\n    got {got}"))
            })
            .collect();
        assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    }

    const DAY: &str = "%Y-%m-%d %a %H:%M";
    const ZONED: &str = "%Y-%m-%d %a %H:%M %:z";

    #[test]
    fn fields_expand_as_htcondor_does() {
        #[rustfmt::skip]
        let cases: &[(usize, &str, &str)] = &[
            // The manual's examples (time-scheduling-for-job-execution.rst).
            (MONTH, "*", "1-12"),
            (HOUR, "0-4", "0-4"),
            (MINUTE, "15,20,25,30", "15,20,25,30"),
            (HOUR, "0-3,9-12,15", "0-3,9-12,15"),
            (MINUTE, "10-30/5", "10,15,20,25,30"),
            (HOUR, "*/3", "0,3,6,9,12,15,18,21"),
            (MINUTE, "23", "23"),
            (HOUR, "0-23/2", "0,2,4,6,8,10,12,14,16,18,20,22"),
            (DAY_OF_MONTH, "10-20", "10-20"),
            (MONTH, "5", "5"),
            (DAY_OF_WEEK, "2", "2"),
            (MINUTE, "*/10,*/6", "0,6,10,12,18,20,24,30,36,40,42,48,50,54"),
            (MINUTE, "0,15,30,45", "0,15,30,45"),
            // Spec 1.3's table.
            (MINUTE, "*/15", "0,15,30,45"),
            (MINUTE, "5-20/5", "5,10,15,20"),
            (MINUTE, "1-10/3", "3,6,9"),
            (MINUTE, "7/5", "error: Invalid cron attribute: CronMinute = '7/5' selects no minute"),
            (MINUTE, "50-70", "50-59"),
            (MINUTE, "30-10", "error: Invalid cron attribute: CronMinute = '30-10' selects no minute"),
            (MINUTE, "5-", "error: Invalid cron attribute: CronMinute = '5-' selects no minute"),
            (MINUTE, "", "error: Invalid cron attribute: CronMinute = '' selects no minute"),
            (MINUTE, "60", "0-59"),
            (HOUR, "*/5", "0,5,10,15,20"),
            (DAY_OF_WEEK, "1-5/2", "2,4"),
            (DAY_OF_WEEK, "7", "0"),
            (DAY_OF_WEEK, "mon", "error: Invalid parameter value 'mon' for CronDayOfWeek: only digits, ',', '-', '/', '*' and spaces are allowed"),
            // Steps count from 0, not from the start of the range.
            (DAY_OF_MONTH, "*/10", "10,20,30"),
            (MONTH, "*/2", "2,4,6,8,10,12"),
            (MINUTE, "*/70", "0"),
            (MINUTE, "2/1", "2"),
            (MINUTE, "*/-15", "0,15,30,45"),
            (MINUTE, "*/0", "error: Invalid parameter value '*/0' for CronMinute: a step after '/' must be a number other than 0"),
            (MINUTE, "5/", "error: Invalid parameter value '5/' for CronMinute: a step after '/' must be a number other than 0"),
            (DAY_OF_WEEK, "*/0", "error: Invalid parameter value '*/0' for CronDayOfWeek: a step after '/' must be a number other than 0"),
            // Ranges are clamped; a missing end reads as 0.
            (MINUTE, "-5", "0-5"),
            (DAY_OF_MONTH, "0-3", "1-3"),
            (DAY_OF_MONTH, "28-40", "28-31"),
            (MINUTE, "1-2-3", "1,2"),
            (MINUTE, "*-3", "0-3"),
            // An out-of-range single value is the whole range.
            (DAY_OF_MONTH, "0", "1-31"),
            (DAY_OF_MONTH, "32", "1-31"),
            (MONTH, "13", "1-12"),
            (HOUR, "24", "0-23"),
            (MINUTE, "60/15", "0,15,30,45"),
            (MINUTE, "99999999999999999999", "0-59"),
            // Day of week: 7 is Sunday, `*` (with any step) adds nothing.
            (DAY_OF_WEEK, "*", "empty"),
            (DAY_OF_WEEK, "*/2", "empty"),
            (DAY_OF_WEEK, "", "empty"),
            (DAY_OF_WEEK, "3/2", "empty"),
            (DAY_OF_WEEK, "7/2", "0"),
            (DAY_OF_WEEK, "5-7", "0,5,6"),
            (DAY_OF_WEEK, "1-7", "0-6"),
            (DAY_OF_WEEK, "0,7", "0"),
            (DAY_OF_WEEK, "8", "0-6"),
            (DAY_OF_WEEK, "1,*", "1"),
            // Characters: spaces vanish, empty list items are skipped, '.' is
            // let through by accident and ends the number.
            (MINUTE, ",5,", "5"),
            (MINUTE, " 1 , 2 ", "1,2"),
            (HOUR, "1 - 3", "1-3"),
            (MINUTE, "1.5", "1"),
            (MINUTE, ".", "0"),
            (MINUTE, "1\t2", "error: Invalid parameter value '1\t2' for CronMinute: only digits, ',', '-', '/', '*' and spaces are allowed"),
            (MINUTE, "+5", "error: Invalid parameter value '+5' for CronMinute: only digits, ',', '-', '/', '*' and spaces are allowed"),
        ];
        let failures: Vec<String> = cases
            .iter()
            .filter_map(|(i, text, want)| {
                let got = expand(*i, text);
                (got != *want).then(|| {
                    format!(
                        "{} = {text:?}\n   want {want}\n    got {got}",
                        ATTRIBUTES[*i]
                    )
                })
            })
            .collect();
        assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    }

    #[test]
    fn missing_fields_are_wildcards() {
        let s = Schedule::parse([Some("30"), None, None, None, None]).unwrap();
        assert_eq!(s, schedule("30 * * * *").unwrap());
        assert_eq!(s.hours.count_ones(), 24);
        assert_eq!(s.weekdays, 0);
    }

    #[test]
    fn has_cron_when_any_field_is_present() {
        assert!(!has_cron::<&str>([None; 5]));
        assert!(has_cron([None, None, None, None, Some("*")]));
        assert!(has_cron([Some(""), None, None, None, None]));
    }

    #[test]
    fn errors_name_the_attribute() {
        #[rustfmt::skip]
        let cases: &[(&str, &str, &str)] = &[
            ("x * * * *", "CronMinute", "Invalid parameter value 'x' for CronMinute: only digits, ',', '-', '/', '*' and spaces are allowed"),
            ("* 30-10 * * *", "CronHour", "Invalid cron attribute: CronHour = '30-10' selects no hour"),
            ("* * 5/3 * *", "CronDayOfMonth", "Invalid cron attribute: CronDayOfMonth = '5/3' selects no day of the month"),
            ("* * * jan *", "CronMonth", "Invalid parameter value 'jan' for CronMonth: only digits, ',', '-', '/', '*' and spaces are allowed"),
            ("* * * * */0", "CronDayOfWeek", "Invalid parameter value '*/0' for CronDayOfWeek: a step after '/' must be a number other than 0"),
            ("0 0 30 2 *", "CronDayOfMonth", "Invalid cron schedule: no month in CronMonth = '2' has a day in CronDayOfMonth = '30', so the job would never run"),
            ("0 0 30,31 2 *", "CronDayOfMonth", "Invalid cron schedule: no month in CronMonth = '2' has a day in CronDayOfMonth = '30,31', so the job would never run"),
            ("0 0 31 4,6,9,11 *", "CronDayOfMonth", "Invalid cron schedule: no month in CronMonth = '4,6,9,11' has a day in CronDayOfMonth = '31', so the job would never run"),
        ];
        for (line, attr, message) in cases {
            let e = schedule(line).unwrap_err();
            assert_eq!(
                (e.attr(), e.to_string().as_str()),
                (*attr, *message),
                "{line}"
            );
        }
        // The first bad field wins.
        assert_eq!(schedule("x y * * *").unwrap_err().attr(), "CronMinute");
    }

    #[test]
    fn next_runs_in_utc() {
        #[rustfmt::skip]
        check(&Utc, DAY, &[
            // The manual's examples. Its "10:30pm ... every remaining Monday"
            // is really cron_hour = 20 and day of week 2, Tuesday.
            ("23 0-23/2 * * *", "2024-05-06 21:30", "2024-05-06 Mon 22:23, 2024-05-07 Tue 00:23, 2024-05-07 Tue 02:23"),
            ("30 20 10-20 5 2", "2024-05-01 00:00", "2024-05-07 Tue 20:30, 2024-05-10 Fri 20:30, 2024-05-11 Sat 20:30"),
            ("30 20 10-20 5 2", "2024-05-20 21:00", "2024-05-21 Tue 20:30, 2024-05-28 Tue 20:30, 2025-05-06 Tue 20:30, 2025-05-10 Sat 20:30"),
            ("*/10,*/6 0-11 18 1 *", "2024-01-17 12:00", "2024-01-18 Thu 00:00, 2024-01-18 Thu 00:06, 2024-01-18 Thu 00:10, 2024-01-18 Thu 00:12"),
            ("*/10,*/6 0-11 18 1 *", "2024-01-18 11:50", "2024-01-18 Thu 11:54, 2025-01-18 Sat 00:00"),
            ("0 * * * *", "2024-05-06 09:30", "2024-05-06 Mon 10:00, 2024-05-06 Mon 11:00"),
            ("0,15,30,45 * * * *", "2024-05-06 09:30", "2024-05-06 Mon 09:45, 2024-05-06 Mon 10:00"),
            ("* * * * *", "2024-05-06 09:30", "2024-05-06 Mon 09:31"),
            ("10-30/5 */3 * * *", "2024-05-06 01:00", "2024-05-06 Mon 03:10, 2024-05-06 Mon 03:15"),
            ("15,20,25,30 0-3,9-12,15 * * *", "2024-05-06 03:30", "2024-05-06 Mon 09:15"),
            ("0 0-4 * * *", "2024-05-06 04:00", "2024-05-07 Tue 00:00"),
            // Strictly after, rounded up to the minute.
            ("* * * * *", "2024-05-06 10:00:00", "2024-05-06 Mon 10:01"),
            ("* * * * *", "2024-05-06 10:00:01", "2024-05-06 Mon 10:01"),
            ("* * * * *", "2024-05-06 09:59:59", "2024-05-06 Mon 10:00"),
            ("0 10 * * *", "2024-05-06 10:00:00", "2024-05-07 Tue 10:00"),
            ("0 10 * * *", "2024-05-06 09:59:59", "2024-05-06 Mon 10:00"),
            // Rollover of hour, day, month and year.
            ("0 0 1 1 *", "2024-12-31 23:59:30", "2025-01-01 Wed 00:00, 2026-01-01 Thu 00:00"),
            ("59 23 31 12 *", "2024-12-31 23:58", "2024-12-31 Tue 23:59, 2025-12-31 Wed 23:59"),
            ("5 * * * *", "2024-02-29 23:10", "2024-03-01 Fri 00:05"),
            // Month ends: days a month lacks are skipped.
            ("0 0 31 * *", "2024-01-31 00:00", "2024-03-31 Sun 00:00, 2024-05-31 Fri 00:00, 2024-07-31 Wed 00:00, 2024-08-31 Sat 00:00, 2024-10-31 Thu 00:00"),
            ("0 0 30 * *", "2024-01-30 00:00", "2024-03-30 Sat 00:00, 2024-04-30 Tue 00:00"),
            ("0 0 29 * *", "2023-01-29 00:00", "2023-03-29 Wed 00:00"),
            ("0 0 29 * *", "2024-01-29 00:00", "2024-02-29 Thu 00:00"),
            ("0 0 30 2,3 *", "2024-01-01 00:00", "2024-03-30 Sat 00:00, 2025-03-30 Sun 00:00"),
            ("0 0 31 2,4,5 *", "2024-01-01 00:00", "2024-05-31 Fri 00:00"),
            ("0 0 29-31 2 *", "2023-03-01 00:00", "2024-02-29 Thu 00:00, 2028-02-29 Tue 00:00"),
            // Leap years by the Gregorian rule: 2100 is not one, 2000 is.
            ("0 12 29 2 *", "2024-03-01 00:00", "2028-02-29 Tue 12:00"),
            ("0 12 29 2 *", "2096-03-01 00:00", "2104-02-29 Fri 12:00"),
            ("0 12 29 2 *", "1999-03-01 00:00", "2000-02-29 Tue 12:00"),
            ("0 0 * * *", "2100-02-28 00:00", "2100-03-01 Mon 00:00"),
            ("0 0 * 2 *", "2100-02-28 00:00", "2101-02-01 Tue 00:00"),
            // Day of week alone, with 7 as Sunday; HTCondor's day-0 bug would
            // answer Wed 2024-01-31 00:00 for the first line.
            ("0 0 * * 1", "2024-01-30 12:00", "2024-02-05 Mon 00:00, 2024-02-12 Mon 00:00"),
            ("0 0 * * 7", "2024-02-26 00:00", "2024-03-03 Sun 00:00"),
            ("0 0 * * 0", "2024-02-26 00:00", "2024-03-03 Sun 00:00"),
            ("0 9 * * 1-5/2", "2024-05-04 00:00", "2024-05-07 Tue 09:00, 2024-05-09 Thu 09:00, 2024-05-14 Tue 09:00"),
            ("0 0 * 3 5", "2024-01-01 00:00", "2024-03-01 Fri 00:00, 2024-03-08 Fri 00:00"),
            // A full day-of-month list counts as `*` even when spelled out.
            ("0 0 1-31 * 1", "2024-01-30 12:00", "2024-02-05 Mon 00:00"),
            // A full day-of-week list means every day.
            ("0 0 15 * 0-6", "2024-01-30 12:00", "2024-01-31 Wed 00:00, 2024-02-01 Thu 00:00"),
            ("0 0 15 * 1-7", "2024-01-30 12:00", "2024-01-31 Wed 00:00"),
            // Day of week `*/n` is `*`: the day of month alone decides.
            ("0 0 15 * */2", "2024-01-30 12:00", "2024-02-15 Thu 00:00"),
            // Both restricted: either matches (Vixie's OR rule).
            ("0 0 13 * 5", "2024-09-01 00:00", "2024-09-06 Fri 00:00, 2024-09-13 Fri 00:00, 2024-09-20 Fri 00:00, 2024-09-27 Fri 00:00, 2024-10-04 Fri 00:00, 2024-10-11 Fri 00:00, 2024-10-13 Sun 00:00"),
            ("0 0 1,15 * 3", "2024-05-01 00:00", "2024-05-08 Wed 00:00, 2024-05-15 Wed 00:00, 2024-05-22 Wed 00:00, 2024-05-29 Wed 00:00, 2024-06-01 Sat 00:00"),
            // 30 February with a weekday still runs on that weekday in February.
            ("0 0 30 2 1", "2024-01-01 00:00", "2024-02-05 Mon 00:00, 2024-02-12 Mon 00:00, 2024-02-19 Mon 00:00, 2024-02-26 Mon 00:00, 2025-02-03 Mon 00:00"),
            // Quirky fields through to the run time.
            ("1-10/3 * * * *", "2024-05-06 10:00", "2024-05-06 Mon 10:03, 2024-05-06 Mon 10:06, 2024-05-06 Mon 10:09, 2024-05-06 Mon 11:03"),
            ("60 25 32 13 8", "2024-05-06 10:00", "2024-05-06 Mon 10:01"),
            ("0 0 */10 * *", "2024-02-20 00:00", "2024-03-10 Sun 00:00"),
        ]);
    }

    #[test]
    fn impossible_schedule_finds_nothing() {
        // parse() rejects these; next_after() still gives a bounded answer.
        let thirty_feb = Schedule::from_sets([1, 1, 1 << 30, 1 << 2, 0]);
        assert_eq!(thirty_feb.next_after(0, &Utc), None);
        assert_eq!(thirty_feb.next_after(1_700_000_000, &Utc), None);
    }

    #[test]
    fn next_run_in_a_fixed_offset() {
        let india = FixedOffset::east_opt(5 * 3600 + 1800).unwrap();
        #[rustfmt::skip]
        check(&india, ZONED, &[
            ("0 9 * * *", "2024-01-01 10:00", "2024-01-02 Tue 09:00 +05:30, 2024-01-03 Wed 09:00 +05:30"),
            ("30 0 1 * *", "2024-01-31 23:00", "2024-02-01 Thu 00:30 +05:30"),
        ]);
        // The same instant gives different local fields in another zone.
        let s = schedule("0 0 * * *").unwrap();
        let t = instant(&Utc, "2024-01-01 20:00");
        assert_eq!(
            s.next_after(t, &india),
            Some(instant(&india, "2024-01-03 00:00"))
        );
        assert_eq!(
            s.next_after(t, &Utc),
            Some(instant(&Utc, "2024-01-02 00:00"))
        );
    }

    /// Clocks go forward at 02:00 (Berlin 2024-03-31 CET -> CEST, New York
    /// 2024-03-10 EST -> EDT): a wall time in the gap runs the gap's length
    /// later, as mktime reads it.
    #[test]
    fn dst_spring_forward() {
        #[rustfmt::skip]
        check(&Berlin, ZONED, &[
            ("30 2 * * *", "2024-03-31 00:00", "2024-03-31 Sun 03:30 +02:00, 2024-04-01 Mon 02:30 +02:00"),
            ("0 2 * * *", "2024-03-30 12:00", "2024-03-31 Sun 03:00 +02:00, 2024-04-01 Mon 02:00 +02:00"),
            ("*/15 * * * *", "2024-03-31 01:50", "2024-03-31 Sun 03:00 +02:00, 2024-03-31 Sun 03:15 +02:00"),
            ("30 2,3 * * *", "2024-03-31 01:00", "2024-03-31 Sun 03:30 +02:00, 2024-04-01 Mon 02:30 +02:00"),
            ("0 3 * * *", "2024-03-31 01:59:59", "2024-03-31 Sun 03:00 +02:00"),
            ("0 12 * * *", "2024-03-30 12:00", "2024-03-31 Sun 12:00 +02:00"),
        ]);
        #[rustfmt::skip]
        check(&New_York, ZONED, &[
            ("30 2 * * *", "2024-03-10 00:00", "2024-03-10 Sun 03:30 -04:00, 2024-03-11 Mon 02:30 -04:00"),
            ("45 * * * *", "2024-03-10 01:50", "2024-03-10 Sun 03:45 -04:00, 2024-03-10 Sun 04:45 -04:00"),
        ]);
    }

    /// Clocks go back (Berlin 2024-10-27 03:00 CEST -> 02:00 CET, New York
    /// 2024-11-03 02:00 EDT -> 01:00 EST): a repeated wall time is its first
    /// occurrence, and the search does not go back for the second one.
    #[test]
    fn dst_fall_back() {
        #[rustfmt::skip]
        check(&Berlin, ZONED, &[
            ("30 2 * * *", "2024-10-27 00:00", "2024-10-27 Sun 02:30 +02:00, 2024-10-28 Mon 02:30 +01:00"),
            ("*/15 * * * *", "2024-10-27 02:40 +02:00", "2024-10-27 Sun 02:45 +02:00, 2024-10-27 Sun 03:00 +01:00"),
            ("0 * * * *", "2024-10-27 01:30", "2024-10-27 Sun 02:00 +02:00, 2024-10-27 Sun 03:00 +01:00"),
            // Starting inside the second pass (a recompute then): its own times.
            ("*/15 * * * *", "2024-10-27 02:05 +01:00", "2024-10-27 Sun 02:15 +01:00, 2024-10-27 Sun 02:30 +01:00"),
            ("30 2 * * *", "2024-10-27 02:10 +01:00", "2024-10-27 Sun 02:30 +01:00, 2024-10-28 Mon 02:30 +01:00"),
            // The last second of the first pass rounds up into the second.
            ("*/15 * * * *", "2024-10-27 02:59:30 +02:00", "2024-10-27 Sun 02:00 +01:00"),
        ]);
        #[rustfmt::skip]
        check(&New_York, ZONED, &[
            ("30 1 * * *", "2024-11-03 00:00", "2024-11-03 Sun 01:30 -04:00, 2024-11-04 Mon 01:30 -05:00"),
            ("0 */1 * * *", "2024-11-03 00:30", "2024-11-03 Sun 01:00 -04:00, 2024-11-03 Sun 02:00 -05:00"),
        ]);
    }

    /// A small xorshift PRNG: fixed seed, no dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn range(&mut self, lo: i64, hi: i64) -> i64 {
            lo + self.below((hi - lo + 1) as u64) as i64
        }
    }

    /// A random field without steps: `*`, or a list of values and ranges.
    fn random_field(rng: &mut Rng, lo: i64, hi: i64) -> String {
        if rng.below(3) == 0 {
            return "*".into();
        }
        let items: Vec<String> = (0..1 + rng.below(3))
            .map(|_| {
                let a = rng.range(lo, hi);
                if rng.below(2) == 0 {
                    a.to_string()
                } else {
                    format!("{a}-{}", {
                        let span = 1 + rng.below(8) as i64;
                        rng.range(a, (a + span).min(hi))
                    })
                }
            })
            .collect();
        items.join(",")
    }

    /// Against croner (Vixie semantics: day of month OR day of week when both
    /// are restricted) on the schedules where the two agree: no steps, and no
    /// spelled-out full day-of-month list (tern counts that as `*`, croner
    /// as restricted).
    #[test]
    fn agrees_with_croner_without_steps() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let lo = instant(&Utc, "2000-01-01 00:00");
        let hi = instant(&Utc, "2090-01-01 00:00");
        let (mut compared, mut impossible) = (0, 0);
        while compared < 3000 {
            let mut fields = [
                random_field(&mut rng, 0, 59),
                random_field(&mut rng, 0, 23),
                random_field(&mut rng, 1, 31),
                random_field(&mut rng, 1, 12),
                random_field(&mut rng, 0, 7),
            ];
            if parse_field(DAY_OF_MONTH, &fields[2]).unwrap().count_ones() == 31 {
                fields[2] = "*".into();
            }
            let line = fields.join(" ");
            let ours = match schedule(&line) {
                Ok(s) => s,
                Err(CronError::Impossible { .. }) => {
                    impossible += 1;
                    continue;
                }
                Err(e) => panic!("{line}: {e}"),
            };
            let theirs =
                croner::Cron::from_str(&line).unwrap_or_else(|e| panic!("croner {line}: {e}"));
            for _ in 0..3 {
                let t = rng.range(lo, hi);
                let want = theirs
                    .find_next_occurrence(&DateTime::from_timestamp(t, 0).unwrap(), false)
                    .unwrap()
                    .timestamp();
                assert_eq!(ours.next_after(t, &Utc), Some(want), "{line} after {t}");
            }
            compared += 1;
        }
        assert!(impossible < 300, "{impossible} impossible schedules");
    }
}
