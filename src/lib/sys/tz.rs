//! The C library's local time and `strftime`, for the ClassAd time
//! functions that must agree with HTCondor's C++ to the byte.

use std::ffi::CStr;

/// A broken-down time, as the C library fills and reads it.
pub use libc::tm as Tm;

/// A broken-down time with every field 0 (and no zone name).
pub fn zero_tm() -> Tm {
    // SAFETY: libc::tm is plain data; all-zero is a valid value (a null
    // tm_zone included).
    unsafe { std::mem::zeroed() }
}

/// The local time of `secs` as `localtime_r` computes it, or `None` when
/// it cannot (a year beyond `int`).
pub fn local_tm(secs: i64) -> Option<Tm> {
    let t: libc::time_t = secs;
    let mut tm = zero_tm();
    // SAFETY: `tm` is plain data that localtime_r fills in; both pointers
    // are valid for the call. (glibc reads TZ on first use.)
    if unsafe { libc::localtime_r(&t, &mut tm) }.is_null() {
        None
    } else {
        Some(tm)
    }
}

/// `strftime` of `tm` into a buffer of `max` bytes plus the NUL; the bytes
/// written, or nothing when the text does not fit (as C's strftime
/// returns 0).
pub fn strftime(tm: &Tm, format: &CStr, max: usize) -> Vec<u8> {
    let mut buf = vec![0u8; max + 1];
    // SAFETY: the buffer holds max + 1 bytes and strftime writes at most
    // the `max` it is told; the format is NUL-terminated; glibc's strftime
    // checks the ranges of the fields it uses as table indexes and accepts
    // a null tm_zone.
    let n = unsafe { libc::strftime(buf.as_mut_ptr().cast(), max, format.as_ptr(), tm) };
    buf.truncate(n);
    buf
}
