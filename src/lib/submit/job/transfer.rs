//! File transfer: ShouldTransferFiles, WhenToTransferOutput and the lists
//! of files to move.

use std::path::Path;

use super::super::units::{self, Base, Size};
use super::{Build, SubmitError, absolute, bool_value, boolean, err, int, string};
use crate::classad::Value;

impl Build<'_> {
    /// SetTransferFiles. `should_transfer_files` is checked and kept
    /// whatever is built, as Requirements depends on it.
    pub(super) fn set_transfer_files(&mut self) -> Result<(), SubmitError> {
        self.should = match self.c.command("should_transfer_files")? {
            None => "IF_NEEDED".to_string(),
            Some((v, o)) => match v.to_ascii_uppercase().as_str() {
                "YES" | "TRUE" => "YES".into(),
                "NO" | "FALSE" => "NO".into(),
                "IF_NEEDED" => "IF_NEEDED".into(),
                _ => {
                    return Err(err(
                        &o,
                        format!(
                            "ERROR: invalid value ({v}) for ShouldTransferFiles. Please either specify YES, NO, or IF_NEEDED and try again."
                        ),
                    ));
                }
            },
        };
        if !self.want(&[
            "should_transfer_files",
            "when_to_transfer_output",
            "transfer_input_files",
            "transfer_output_files",
            "transfer_executable",
        ]) {
            return Ok(());
        }
        let should = self.should.clone();
        self.ad.insert("ShouldTransferFiles", string(&should));
        let when = match self.c.command("when_to_transfer_output")? {
            None => "ON_EXIT".to_string(),
            Some((v, o)) => match v.to_ascii_uppercase().as_str() {
                "ON_EXIT" => "ON_EXIT".into(),
                "ON_EXIT_OR_EVICT" => "ON_EXIT_OR_EVICT".into(),
                _ => {
                    return Err(err(
                        &o,
                        format!(
                            "when_to_transfer_output must be ON_EXIT or ON_EXIT_OR_EVICT, not '{v}'"
                        ),
                    ));
                }
            },
        };
        if should == "IF_NEEDED" && when == "ON_EXIT_OR_EVICT" {
            let o = self
                .c
                .command("when_to_transfer_output")?
                .map(|(_, o)| o)
                .unwrap_or_else(|| self.q.clone());
            return Err(err(
                &o,
                "\"when_to_transfer_output = ON_EXIT_OR_EVICT\" and \"should_transfer_files = IF_NEEDED\" \
                 are incompatible; use should_transfer_files = YES",
            ));
        }
        if should != "NO" {
            self.ad.insert("WhenToTransferOutput", string(&when));
        }
        if should != "YES" {
            self.ad
                .insert("FileSystemDomain", string(self.ctx.filesystem_domain));
        }
        // Files named for transfer when transfer is off: condor_submit's
        // check (F). `transfer_output_files = ""` counts as naming some.
        let mut named = Vec::new();
        for (cmd, attr) in [
            ("transfer_input_files", "TransferInput"),
            ("transfer_output_files", "TransferOutput"),
        ] {
            if let Some((v, _)) = self.c.command(cmd)? {
                let list: Vec<&str> = strip_quotes(&v)
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect();
                if !list.is_empty() || (cmd == "transfer_output_files" && v.trim() == "\"\"") {
                    named.push(cmd);
                }
                self.ad.insert(attr, string(&list.join(",")));
            }
        }
        if should == "NO" && !named.is_empty() {
            let o = self
                .c
                .command("should_transfer_files")?
                .map(|(_, o)| o)
                .unwrap_or_else(|| self.q.clone());
            return Err(err(
                &o,
                format!(
                    "you specified files you want Condor to transfer via \"{}\", but you disabled \
                     should_transfer_files.",
                    named.join("\" and \"")
                ),
            ));
        }
        if let Some((v, o)) = self.c.command("transfer_executable")? {
            let b = bool_value(&v).ok_or_else(|| {
                err(
                    &o,
                    format!("transfer_executable={v} is invalid, must eval to a boolean."),
                )
            })?;
            self.ad.insert("TransferExecutable", boolean(b));
        }
        Ok(())
    }
}

impl Build<'_> {
    /// The end of SetTransferFiles: DiskUsage is `disk_usage` when given,
    /// else the executable's size plus the sizes of the input files and of
    /// a transferred stdin, each in KiB rounded up; TransferInputSizeMB is
    /// that sum in whole MiB.
    pub(super) fn set_disk_usage(&mut self) -> Result<(), SubmitError> {
        if !self.want(&[
            "initialdir",
            "initial_dir",
            "executable",
            "transfer_executable",
            "transfer_input_files",
            "input",
            "stdin",
            "transfer_input",
            "disk_usage",
        ]) {
            return Ok(());
        }
        if let Some((v, o)) = self.c.command("disk_usage")? {
            let kib = match units::parse_size(&v, Base::KiB) {
                Ok(Size::Int(n)) if n >= 1 => n,
                _ => {
                    return Err(err(
                        &o,
                        format!("'{v}' is not valid for disk_usage. It must be >= 1"),
                    ));
                }
            };
            self.ad.insert("DiskUsage", int(kib));
            return Ok(());
        }
        let exe_kib = self
            .lookup("ExecutableSize")
            .and_then(|e| e.literal_value())
            .and_then(|v| match v {
                Value::Int(i) => Some(*i),
                _ => None,
            })
            .unwrap_or(0);
        let mut inputs_kib = 0;
        if let Some((v, _)) = self.c.command("transfer_input_files")? {
            for f in strip_quotes(&v).split(',').map(str::trim) {
                if !f.is_empty() {
                    inputs_kib += size_kib(&self.iwd, f);
                }
            }
        }
        let transfer_in = match self.c.command("transfer_input")? {
            Some((v, _)) => bool_value(&v).unwrap_or(true),
            None => true,
        };
        if transfer_in
            && let Some(Some(stdin)) = self.lookup("In").map(|e| e.literal_value())
            && let Some(stdin) = stdin.as_str()
            && !stdin.is_empty()
        {
            inputs_kib += size_kib(&self.iwd, stdin);
        }
        let total = exe_kib + inputs_kib;
        // 24.0 truncates here (later versions round up).
        self.ad.insert("TransferInputSizeMB", int(total / 1024));
        self.ad.insert("DiskUsage", int(total));
        Ok(())
    }
}

/// condor_submit's calc_image_size_kb: a file's size in KiB rounded up, a
/// directory's total (rounded once), 0 for a URL or what cannot be read.
fn size_kib(iwd: &Path, name: &str) -> i64 {
    if let Some(p) = name.find("://")
        && p > 0
        && name[..p]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    {
        return 0;
    }
    let path = absolute(iwd, name);
    let path = path.as_path();
    let bytes = match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => dir_bytes(path),
        Ok(m) => m.len(),
        Err(_) => 0,
    };
    bytes.div_ceil(1024) as i64
}

/// The bytes of the files under a directory, links not followed.
fn dir_bytes(dir: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    rd.flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            Ok(_) => e.metadata().map(|m| m.len()).unwrap_or(0),
            Err(_) => 0,
        })
        .sum()
}

/// The list as condor_submit 24.0 reads it: exactly `""` is the empty
/// list (and no file named `""`); anything else is split as it is.
pub(super) fn strip_quotes(v: &str) -> &str {
    if v.trim() == "\"\"" { "" } else { v }
}
