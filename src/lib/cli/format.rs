//! How the tools that list ads print them, apart from `-af`/`-format`
//! (which is [`super::printmask`]): the `-long` and `-json` forms, and the
//! renderers of the default listings' columns (dates, run times, the CMD
//! column) that `tern_q`, `tern_history` and `tern_status` share, and the
//! print mask uses for `%T` and `%Y`.

use std::rc::Rc;

use crate::classad::json::ads_to_json_array;
use crate::classad::unparse::{Syntax, ad_to_old, write_value};
use crate::classad::{ClassAd, Value};

/// A value in old syntax, as `condor_q` prints one.
pub fn value_old(v: &Value) -> String {
    let mut s = String::new();
    write_value(&mut s, v, Syntax::Old);
    s
}

/// Turns C escapes (`\n`, `\t`, `\\`, `\"`, `\ooo`, `\xhh`) into the
/// characters they stand for, as HTCondor does to `-format` strings.
pub fn collapse_escapes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('a') => out.push('\x07'),
            Some('b') => out.push('\x08'),
            Some('f') => out.push('\x0c'),
            Some('v') => out.push('\x0b'),
            Some(d @ '0'..='7') => {
                let mut n = d.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match it.peek().and_then(|c| c.to_digit(8)) {
                        Some(x) => {
                            n = n * 8 + x;
                            it.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(n).unwrap_or('?'));
            }
            Some('x') => {
                let mut n = 0;
                let mut any = false;
                while let Some(x) = it.peek().and_then(|c| c.to_digit(16)) {
                    n = n * 16 + x;
                    any = true;
                    it.next();
                }
                if any {
                    out.push(char::from_u32(n).unwrap_or('?'));
                } else {
                    out.push_str("\\x");
                }
            }
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// `-long`: each ad in old syntax, attributes sorted case-insensitively, a
/// blank line after each. `attrs`, when given, keeps only those attributes.
pub fn long(ads: &[ClassAd], attrs: Option<&[String]>) -> String {
    let mut out = String::new();
    for ad in ads {
        out.push_str(&ad_to_old(&project(ad, attrs), true));
        out.push('\n');
    }
    out
}

/// `-json`: one JSON array of the ads.
pub fn json(ads: &[ClassAd], attrs: Option<&[String]>) -> String {
    let projected: Vec<ClassAd> = ads.iter().map(|a| project(a, attrs)).collect();
    ads_to_json_array(projected.iter())
}

/// The attributes of `ad` named in `attrs` (all of them when `None`).
pub fn project(ad: &ClassAd, attrs: Option<&[String]>) -> ClassAd {
    let Some(names) = attrs else {
        return ad.clone();
    };
    let mut out = ClassAd::new();
    for (name, e) in ad.iter_shared() {
        if names.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            out.insert_shared(name, e.clone());
        }
    }
    out
}

/// `-attributes a,b c`: names separated by commas or spaces.
pub fn attribute_list(text: &[String]) -> Vec<String> {
    text.iter()
        .flat_map(|t| t.split([',', ' ']))
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// A time as the queue listings print it, `%2d/%-2d %02d:%02d` (month,
/// day, hour, minute) in local time.
pub fn date(secs: i64) -> String {
    use chrono::{Datelike, Local, TimeZone, Timelike};
    match Local.timestamp_opt(secs, 0).single() {
        Some(t) => format!(
            "{:2}/{:<2} {:02}:{:02}",
            t.month(),
            t.day(),
            t.hour(),
            t.minute()
        ),
        None => "    ???    ".to_string(),
    }
}

/// A duration in seconds as `ddd+hh:mm:ss` (days right-aligned in three
/// columns); a negative one as `[?????]`.
pub fn run_time(secs: i64) -> String {
    if secs < 0 {
        return "[?????]".to_string();
    }
    let (d, rest) = (secs / 86_400, secs % 86_400);
    format!(
        "{d:3}+{:02}:{:02}:{:02}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The CMD column: `(JobDescription)` when the job has one, otherwise the
/// base name of `Cmd` followed by the arguments.
pub fn job_description(ad: &Rc<ClassAd>) -> String {
    let Some(cmd) = ad.eval_str("Cmd") else {
        return String::new();
    };
    if let Some(d) = ad
        .eval_str("MATCH_EXP_JobDescription")
        .or_else(|| ad.eval_str("JobDescription"))
        .filter(|d| !d.is_empty())
    {
        return format!("({d})");
    }
    let base = cmd.rsplit('/').next().unwrap_or(&cmd).to_string();
    // ArgList::GetArgsStringForDisplay: Arguments as stored when the job
    // has it (an empty one too), else Args.
    let args = ad
        .eval_str("Arguments")
        .or_else(|| ad.eval_str("Args"))
        .unwrap_or_default();
    if args.is_empty() {
        base
    } else {
        format!("{base} {args}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::parse_ad;

    fn ad(text: &str) -> ClassAd {
        parse_ad(text).unwrap()
    }

    #[test]
    fn run_times_and_escapes() {
        assert_eq!(run_time(0), "  0+00:00:00");
        assert_eq!(run_time(90061), "  1+01:01:01");
        assert_eq!(run_time(-1), "[?????]");
        assert_eq!(collapse_escapes(r"a\tb\n\101\x42\\"), "a\tb\nAB\\");
    }

    #[test]
    fn cmd_column() {
        let a = ad(r#"[Cmd = "/bin/sleep"; Args = "10"]"#);
        assert_eq!(job_description(&Rc::new(a)), "sleep 10");
        let b = ad(r#"[Cmd = "/bin/sleep"; Arguments = ""; JobDescription = "nap"]"#);
        assert_eq!(job_description(&Rc::new(b)), "(nap)");
    }
}
