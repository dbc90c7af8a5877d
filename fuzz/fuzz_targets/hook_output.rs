//! What hooks print: attribute lines are read or refused with the line
//! named, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(ad) = tern::hooks::output::parse_attributes(text) {
        // What was read prints back as lines that read the same.
        let mut lines = String::new();
        for (n, e) in ad.iter_shared() {
            lines.push_str(&format!("{n} = {}\n", tern::classad::unparse::unparse_old(e)));
        }
        let again = tern::hooks::output::parse_attributes(&lines)
            .unwrap_or_else(|e| panic!("{text:?} read, printed as {lines:?}, refused: {e}"));
        assert_eq!(again.len(), ad.len(), "{text:?}");
    }
});
