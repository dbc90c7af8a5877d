//! The event log reader: any text is read into events or refused, never a
//! panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = tern::userlog::read(text);
    let _ = tern::userlog::read_complete(text);
});
