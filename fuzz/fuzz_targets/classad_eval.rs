//! The evaluator: every attribute of any ad that parses evaluates without
//! a panic or a runaway, alone and matched against a second ad.
#![no_main]

use std::rc::Rc;

use libfuzzer_sys::fuzz_target;
use tern::classad::{Evaluator, MatchContext, eval_attr, parse_ads_any};

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let text = text.to_string();
    common::on_tool_stack(move || {
        let Ok(ads) = parse_ads_any(&text) else {
            return;
        };
        let ads: Vec<Rc<_>> = ads.into_iter().map(Rc::new).collect();
        for ad in &ads {
            let names: Vec<String> = ad.iter_shared().map(|(n, _)| n.to_string()).collect();
            for n in &names {
                let _ = eval_attr(ad, n);
            }
        }
        if let [a, b, ..] = ads.as_slice() {
            let m = MatchContext::new(a.clone(), b.clone());
            let mut ev = Evaluator::new();
            for n in ["Requirements", "Rank", "x"] {
                let _ = m.eval_left(&mut ev, n);
            }
        }
    });
});
