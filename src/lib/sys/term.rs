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

/// A writer that shows control characters instead of sending them: every
/// C0 character but the newline, DEL and the C1 characters (U+0080 to
/// U+009F, which some terminals also obey) are written as `\xNN`, so that
/// a string another user chose (a batch name, an argument) cannot move the
/// cursor, retitle the window or rewrite the lines above it. With
/// `escape` false it passes everything through.
pub struct ShowControls<W: std::io::Write> {
    inner: W,
    escape: bool,
    /// A UTF-8 lead byte 0xC2 seen at the end of the last write: the next
    /// byte decides whether the pair is a C1 character.
    pending_c2: bool,
}

impl<W: std::io::Write> ShowControls<W> {
    pub fn new(inner: W, escape: bool) -> ShowControls<W> {
        ShowControls {
            inner,
            escape,
            pending_c2: false,
        }
    }
}

/// `text` with its control characters shown as [`ShowControls`] shows them.
pub fn show_controls(text: &str) -> String {
    let mut out = ShowControls::new(Vec::new(), true);
    std::io::Write::write_all(&mut out, text.as_bytes()).expect("writing to a Vec");
    std::io::Write::flush(&mut out).expect("writing to a Vec");
    String::from_utf8(out.inner).expect("escapes are ASCII")
}

impl<W: std::io::Write> std::io::Write for ShowControls<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if !self.escape {
            return self.inner.write(buf);
        }
        let mut out = Vec::with_capacity(buf.len());
        for &b in buf {
            if self.pending_c2 {
                self.pending_c2 = false;
                if (0x80..=0x9f).contains(&b) {
                    out.extend_from_slice(format!("\\x{b:02x}").as_bytes());
                    continue;
                }
                out.push(0xc2);
            }
            match b {
                b'\n' => out.push(b),
                0x00..=0x1f | 0x7f => out.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
                0xc2 => self.pending_c2 = true,
                _ => out.push(b),
            }
        }
        self.inner.write_all(&out)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if std::mem::take(&mut self.pending_c2) {
            self.inner.write_all(&[0xc2])?;
        }
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn controls_are_shown_and_the_rest_passes() {
        assert_eq!(
            show_controls("a\x1b[31mred\rX\x7f\tb\n\u{9b}2J é ü"),
            "a\\x1b[31mred\\x0dX\\x7f\\x09b\n\\x9b2J é ü"
        );
        // A C1 character split across two writes is still shown.
        let mut w = ShowControls::new(Vec::new(), true);
        w.write_all(&[b'a', 0xc2]).unwrap();
        w.write_all(&[0x9b, b'b', 0xc2]).unwrap();
        w.write_all(&[0xa9]).unwrap();
        w.flush().unwrap();
        assert_eq!(String::from_utf8(w.inner).unwrap(), "a\\x9bb©");
        let mut raw = ShowControls::new(Vec::new(), false);
        raw.write_all(b"\x1b[0m").unwrap();
        assert_eq!(raw.inner, b"\x1b[0m");
    }
}
