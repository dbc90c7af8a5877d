//! The terminal standard output writes to, for tools that cut their lines
//! to its width as their HTCondor counterparts do.

/// The width of the terminal on standard output: `None` when standard
/// output is not a terminal, 80 when the terminal does not say.
pub fn stdout_width() -> Option<usize> {
    // SAFETY: isatty and ioctl(TIOCGWINSZ) only read the descriptor's state
    // into the winsize struct, which lives for the call.
    unsafe {
        if libc::isatty(1) != 1 {
            return None;
        }
        let mut ws: libc::winsize = std::mem::zeroed();
        if libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) == 0 && ws.ws_col > 0 {
            Some(ws.ws_col as usize)
        } else {
            Some(80)
        }
    }
}
