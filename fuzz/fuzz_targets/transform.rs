//! The transform language: any text parses or is refused, and what parses
//! applies to a job ad without a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tern::classad::parse_ad;
use tern::config::Config;
use tern::transform::{Macros, Transform};

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Some(text) = common::contained_text(data) else {
        return;
    };
    common::on_tool_stack(move || {
        let Ok(t) = Transform::parse(&text, "fuzz") else {
            return;
        };
        let mut ad = parse_ad(
            "[ClusterId = 1; ProcId = 0; Owner = \"u\"; Cmd = \"/bin/true\"; \
             RequestMemory = 128; Requirements = true; JobUniverse = 5]",
        )
        .expect("the job ad parses");
        let cfg = Config::defaults();
        let _ = t.apply(&mut ad, &mut Macros::new(), &cfg);
    });
});
