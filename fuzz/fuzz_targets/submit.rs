//! The submit description language: parsing and materialising any text
//! never panics (an error names the problem instead). Inputs that would
//! include a file or run a command are skipped.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tern::config::Config;
use tern::submit::{SubmitOptions, materialize, parse};

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // A queue count of 10,000 or more materialises that many procs, which
    // tests memory, not the parser.
    let long_number = text.as_bytes().windows(5).any(|w| w.iter().all(u8::is_ascii_digit));
    if common::reaches_outside(text) || long_number {
        return;
    }
    let text = text.to_string();
    common::on_tool_stack(move || {
        let cfg = Config::defaults();
        let dir = std::env::temp_dir();
        if let Ok(file) = parse(&text, "fuzz.sub", &dir, &cfg) {
            let opts = SubmitOptions {
                cluster: 1,
                qdate: 1_700_000_000,
                owner: "fuzz".into(),
                cwd: dir.clone(),
                environ: Vec::new(),
                batch_name: None,
            };
            let _ = materialize(&file, &cfg, &opts);
        }
    });
});
