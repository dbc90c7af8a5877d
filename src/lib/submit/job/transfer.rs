//! File transfer: ShouldTransferFiles, WhenToTransferOutput and the lists
//! of files to move.

use super::{Build, SubmitError, bool_value, boolean, err, string};

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
        for (cmd, attr) in [
            ("transfer_input_files", "TransferInput"),
            ("transfer_output_files", "TransferOutput"),
        ] {
            if let Some((v, _)) = self.c.command(cmd)? {
                let list: Vec<&str> = v
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect();
                self.ad.insert(attr, string(&list.join(",")));
            }
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
