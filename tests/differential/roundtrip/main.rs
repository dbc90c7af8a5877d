//! `tern_roundtrip`: reads one new-syntax ad per line on stdin and writes one
//! JSON object per line: the ad printed in new syntax, old syntax and JSON
//! (`new`, `old`, `json`), and in `read`, for each of those three texts, the
//! ad tern reads back from it printed in old syntax (`{"old": ...}`) or why
//! it could not (`{"error": ...}`). A line tern cannot read at all gives
//! `{"error": ...}`. driver.py compares all of it with what HTCondor prints
//! and reads.

use std::io::{self, BufRead, BufWriter, Write};

use serde_json::{Value, json};
use tern::classad::json::{ad_to_json, parse_json_ads};
use tern::classad::old::parse_old_ad;
use tern::classad::unparse::{ad_to_old, ad_to_string};
use tern::classad::{ClassAd, ParseError, parse_ad};

fn read_back(parsed: Result<Option<ClassAd>, ParseError>) -> Value {
    match parsed {
        Ok(Some(ad)) => json!({ "old": ad_to_old(&ad, true) }),
        Ok(None) => json!({ "error": "no ad" }),
        Err(e) => json!({ "error": e.to_string() }),
    }
}

fn one(line: &str) -> Value {
    let ad = match parse_ad(line) {
        Ok(ad) => ad,
        Err(e) => return json!({ "error": format!("reading the ad: {e}") }),
    };
    let new = ad_to_string(&ad);
    let old = ad_to_old(&ad, true);
    let js = ad_to_json(&ad, 0);
    json!({
        "new": new, "old": old, "json": js,
        "read": {
            "new": read_back(parse_ad(&new).map(Some)),
            "old": read_back(parse_old_ad(&old).map(Some)),
            "json": read_back(parse_json_ads(&js).map(|ads| ads.into_iter().next())),
        },
    })
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
