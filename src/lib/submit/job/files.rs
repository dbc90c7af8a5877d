//! The job's files: the initial directory, the executable, the standard
//! streams and the user log.

use std::path::PathBuf;

use super::{Build, Commands, SubmitError, absolute, bool_value, boolean, err, int, string};

/// The commands that decide Iwd and the executable's attributes.
const IWD_CMDS: [&str; 5] = [
    "initialdir",
    "initial_dir",
    "executable",
    "transfer_executable",
    "skip_filechecks",
];

impl Build<'_> {
    /// SetIWD: the initial directory, which must exist; relative paths of
    /// the later steps are taken from it.
    pub(super) fn set_iwd(&mut self) -> Result<(), SubmitError> {
        self.iwd = if !self.want(&IWD_CMDS) && !self.want(&["log"]) {
            match self
                .lookup("Iwd")
                .and_then(|e| e.literal_value())
                .and_then(|v| v.as_str())
            {
                Some(s) => PathBuf::from(s),
                None => self.ctx.cwd.to_path_buf(),
            }
        } else {
            match self
                .c
                .command("initialdir")?
                .or(self.c.command("initial_dir")?)
            {
                Some((d, o)) => {
                    let p = absolute(self.ctx.cwd, &d);
                    if !p.is_dir() {
                        return Err(err(&o, format!("No such directory: {}", p.display())));
                    }
                    p
                }
                None => self.ctx.cwd.to_path_buf(),
            }
        };
        if self.want(&IWD_CMDS) {
            self.ad
                .insert("Iwd", string(&self.iwd.display().to_string()));
        }
        Ok(())
    }

    /// SetExecutable: Cmd, and the executable's size as the first guess of
    /// ImageSize, ExecutableSize and DiskUsage.
    pub(super) fn set_executable(&mut self) -> Result<(), SubmitError> {
        if !self.want(&IWD_CMDS) {
            return Ok(());
        }
        let Some((exe, exe_o)) = self.c.command("executable")? else {
            return Err(err(&self.q, "No 'executable' parameter was provided"));
        };
        // Relative to where tern_submit runs, not to initialdir (condor_submit's
        // full_path(name, false)).
        let exe_path = absolute(self.ctx.cwd, &exe);
        let size_kib = match std::fs::metadata(&exe_path) {
            Ok(m) => m.len().div_ceil(1024) as i64,
            Err(e) => {
                let transfer = self
                    .c
                    .command("transfer_executable")?
                    .and_then(|(v, _)| bool_value(&v));
                if transfer == Some(false) || skips_file_checks(&mut *self.c)? {
                    0
                } else {
                    return Err(err(
                        &exe_o,
                        format!("executable {} cannot be read: {e}", exe_path.display()),
                    ));
                }
            }
        };
        self.ad
            .insert("Cmd", string(&exe_path.display().to_string()));
        for n in ["ImageSize", "ExecutableSize", "DiskUsage"] {
            self.ad.insert(n, int(size_kib));
        }
        Ok(())
    }

    /// SetStdin, SetStdout, SetStderr: In/Out/Err and their streaming;
    /// a stream not given is /dev/null and not transferred, and
    /// `transfer_input` (`_output`, `_error`) = false keeps a named one from
    /// being transferred: TransferIn (Out, Err) = false and no StreamIn.
    pub(super) fn set_std_files(&mut self) -> Result<(), SubmitError> {
        for (cmds, attr, transfer, transfer_cmd, stream, stream_cmd) in [
            (
                &["input", "stdin"][..],
                "In",
                "TransferIn",
                "transfer_input",
                "StreamIn",
                "stream_input",
            ),
            (
                &["output", "stdout"][..],
                "Out",
                "TransferOut",
                "transfer_output",
                "StreamOut",
                "stream_output",
            ),
            (
                &["error", "stderr"][..],
                "Err",
                "TransferErr",
                "transfer_error",
                "StreamErr",
                "stream_error",
            ),
        ] {
            if !self.want(cmds) && !self.want(&[stream_cmd, transfer_cmd]) {
                continue;
            }
            let mut given = None;
            for n in cmds {
                if let Some(v) = self.c.command(n)? {
                    given = Some(v);
                    break;
                }
            }
            let wanted = match self.c.command(transfer_cmd)? {
                Some((b, o)) => bool_value(&b).ok_or_else(|| {
                    err(
                        &o,
                        format!("{transfer_cmd}={b} is invalid, must eval to a boolean."),
                    )
                })?,
                None => true,
            };
            match given {
                Some((v, _)) if !v.is_empty() && v != "/dev/null" => {
                    self.ad.insert(attr, string(&v));
                    if !wanted {
                        self.ad.insert(transfer, boolean(false));
                        continue;
                    }
                    let s = match self.c.command(stream_cmd)? {
                        Some((b, o)) => bool_value(&b).ok_or_else(|| {
                            err(
                                &o,
                                format!("{stream_cmd}={b} is invalid, must eval to a boolean."),
                            )
                        })?,
                        None => false,
                    };
                    self.ad.insert(stream, boolean(s));
                }
                _ => {
                    self.ad.insert(attr, string("/dev/null"));
                    self.ad.insert(transfer, boolean(false));
                }
            }
        }
        Ok(())
    }

    /// SetUserLog: UserLog, absolute from the initial directory.
    pub(super) fn set_user_log(&mut self) -> Result<(), SubmitError> {
        if self.want(&["log", "initialdir", "initial_dir"])
            && let Some((log, _)) = self.c.command("log")?
            && !log.is_empty()
        {
            self.ad.insert(
                "UserLog",
                string(&absolute(&self.iwd, &log).display().to_string()),
            );
        }
        Ok(())
    }
}

/// `skip_filechecks`: true leaves out the submitter's checks of the
/// files (that the executable can be read, that the event logs open), as
/// condor_submit does. Its `warn` is refused, and any other value that is
/// not a boolean is an error.
pub fn skips_file_checks(c: &mut dyn Commands) -> Result<bool, SubmitError> {
    let Some((v, o)) = c.command("skip_filechecks")? else {
        return Ok(false);
    };
    if v.is_empty() {
        return Ok(false);
    }
    if v.eq_ignore_ascii_case("warn") {
        return Err(err(
            &o,
            "skip_filechecks = warn is not supported: tern checks the files or, with true, skips the checks",
        ));
    }
    bool_value(&v).ok_or_else(|| {
        err(
            &o,
            format!("skip_filechecks={v} is invalid, must be 'warn' or a boolean"),
        )
    })
}
