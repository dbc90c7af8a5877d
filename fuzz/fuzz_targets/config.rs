//! The configuration language: any text is read into a table or refused
//! with an error, never a panic; every knob it set can then be looked up.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tern::config::Config;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Some(text) = common::contained_text(data) else {
        return;
    };
    common::on_tool_stack(move || {
        let mut cfg = Config::defaults();
        if cfg.parse_str(&text, "fuzz.config").is_ok() {
            let names: Vec<String> = cfg.entries().iter().map(|e| e.name.to_string()).collect();
            for n in names {
                let _ = cfg.get(&n);
            }
        }
    });
});
