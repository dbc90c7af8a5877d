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

/// Whether standard output is a terminal.
pub fn stdout_is_tty() -> bool {
    // SAFETY: isatty only reads the descriptor's state.
    unsafe { libc::isatty(1) == 1 }
}

/// The size (columns, rows) of the terminal on standard output, `None`
/// when it is not a terminal or does not say.
pub fn stdout_size() -> Option<(usize, usize)> {
    // SAFETY: ioctl(TIOCGWINSZ) writes into the winsize struct, which lives
    // for the call.
    unsafe {
        let mut ws: libc::winsize = std::mem::zeroed();
        if libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0 {
            Some((ws.ws_col as usize, ws.ws_row as usize))
        } else {
            None
        }
    }
}

static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn note_interrupt(_: libc::c_int) {
    INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Makes ^C (SIGINT) set a flag instead of ending the process, for a tool
/// that ends cleanly, with its own exit status, when it is pressed; the
/// flag is read with [`interrupted`].
pub fn catch_interrupt() {
    // SAFETY: the handler only stores to an atomic, which is
    // async-signal-safe; sigaction is given a zeroed, then filled struct.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = note_interrupt as *const () as libc::sighandler_t;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
    }
}

/// Whether ^C was pressed since [`catch_interrupt`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)
}
