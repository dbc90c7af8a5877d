//! `tern_roundtrip`: reads one new-syntax ad per line on stdin and writes one
//! JSON object per line: the ad printed in new syntax, old syntax and JSON
//! (`new`, `old`, `json`), and in `read`, for each of those three texts, the
//! ad tern reads back from it printed in old syntax (`{"old": ...}`) or why
//! it could not (`{"error": ...}`). A line tern cannot read at all gives
//! `{"error": ...}`. driver.py compares all of it with what HTCondor prints
//! and reads.
//!
//! run.sh compiles this file with rustc against the tern library that
//! `cargo build --release --bin tern_eval` just built, so it adds no package
//! to the build and no second compile of tern; it therefore uses nothing but
//! tern and std.

use std::io::{self, BufRead, BufWriter, Write};

use tern::classad::json::{ad_to_json, parse_json_ads};
use tern::classad::old::parse_old_ad;
use tern::classad::unparse::{ad_to_old, ad_to_string};
use tern::classad::{ClassAd, ParseError, parse_ad};

/// `s` as a JSON string literal.
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A JSON object whose member values are JSON texts already.
fn object(members: &[(&str, String)]) -> String {
    let body: Vec<String> = members.iter().map(|(k, v)| format!("{}: {}", quoted(k), v)).collect();
    format!("{{{}}}", body.join(", "))
}

fn read_back(parsed: Result<Option<ClassAd>, ParseError>) -> String {
    match parsed {
        Ok(Some(ad)) => object(&[("old", quoted(&ad_to_old(&ad, true)))]),
        Ok(None) => object(&[("error", quoted("no ad"))]),
        Err(e) => object(&[("error", quoted(&e.to_string()))]),
    }
}

fn one(line: &str) -> String {
    let ad = match parse_ad(line) {
        Ok(ad) => ad,
        Err(e) => return object(&[("error", quoted(&format!("reading the ad: {e}")))]),
    };
    let new = ad_to_string(&ad);
    let old = ad_to_old(&ad, true);
    let js = ad_to_json(&ad, 0);
    let read = object(&[
        ("new", read_back(parse_ad(&new).map(Some))),
        ("old", read_back(parse_old_ad(&old).map(Some))),
        ("json", read_back(parse_json_ads(&js).map(|ads| ads.into_iter().next()))),
    ]);
    object(&[("new", quoted(&new)), ("old", quoted(&old)), ("json", quoted(&js)), ("read", read)])
}

fn main() -> io::Result<()> {
    let stdin = io::stdin();
    let mut out = BufWriter::new(io::stdout().lock());
    for line in stdin.lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        writeln!(out, "{}", one(&line))?;
    }
    out.flush()
}
