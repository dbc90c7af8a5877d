//! File transfer: ShouldTransferFiles, WhenToTransferOutput, the lists of
//! files to move and the other transfer commands, and the Requirements
//! clauses they add (condor_submit 24.0's SetTransferFiles and its part of
//! SetRequirements).

use std::collections::BTreeMap;
use std::path::Path;

use super::super::units::{self, Base, Size};
use super::simple::As;
use super::{Build, SubmitError, absolute, bool_value, boolean, err, int, string};
use crate::classad::Value;
use crate::config::reader::Origin;

/// The transfer commands condor_submit copies as they are, in its order;
/// several key-file commands set the same attribute, the last given wins.
const SIMPLE: &[(&str, &str, As)] = &[
    ("transfer_plugins", "TransferPlugins", As::Str),
    ("output_destination", "OutputDestination", As::Str),
    (
        "encrypt_execute_directory",
        "EncryptExecuteDirectory",
        As::Bool,
    ),
    ("encrypt_input_files", "EncryptInputFiles", As::Str),
    ("encrypt_output_files", "EncryptOutputFiles", As::Str),
    ("dont_encrypt_input_files", "DontEncryptInputFiles", As::Str),
    (
        "dont_encrypt_output_files",
        "DontEncryptOutputFiles",
        As::Str,
    ),
    ("max_transfer_input_mb", "MaxTransferInputMB", As::Expr),
    ("max_transfer_output_mb", "MaxTransferOutputMB", As::Expr),
    ("checkpoint_exit_code", "SuccessCheckpointExitCode", As::Int),
    ("checkpoint_destination", "CheckpointDestination", As::Str),
    ("aws_region", "AWSRegion", As::Str),
    ("aws_access_key_id_file", "EC2AccessKeyId", As::Str),
    ("aws_secret_access_key_file", "EC2SecretAccessKey", As::Str),
    ("s3_access_key_id_file", "EC2AccessKeyId", As::Str),
    ("s3_secret_access_key_file", "EC2SecretAccessKey", As::Str),
    ("gs_access_key_id_file", "EC2AccessKeyId", As::Str),
    ("gs_secret_access_key_file", "EC2SecretAccessKey", As::Str),
    (
        "erase_output_and_error_on_restart",
        "EraseOutputAndErrorOnRestart",
        As::Bool,
    ),
    ("transfer_checkpoint_files", "TransferCheckpoint", As::Str),
    ("preserve_relative_paths", "PreserveRelativePaths", As::Bool),
];

/// The commands whose attributes the file-transfer part of Requirements
/// reads (for procs built with `only`).
pub(super) const REQUIREMENT_CMDS: &[&str] = &[
    "should_transfer_files",
    "when_to_transfer_output",
    "transfer_input_files",
    "transfer_output_remaps",
    "transfer_plugins",
    "output_destination",
    "encrypt_execute_directory",
    "encrypt_input_files",
    "encrypt_output_files",
    "dont_encrypt_input_files",
    "dont_encrypt_output_files",
    "checkpoint_exit_code",
    "transfer_checkpoint_files",
    "preserve_relative_paths",
    "aws_access_key_id_file",
    "aws_secret_access_key_file",
    "s3_access_key_id_file",
    "s3_secret_access_key_file",
    "gs_access_key_id_file",
    "gs_secret_access_key_file",
];

/// ShouldTransferFiles by name (condor_submit's translation table, any
/// case). HTCondor's table also maps `NULL` to a value that is none of
/// the three; tern refuses it (tern_submit(1)).
fn should_num(v: &str) -> Option<&'static str> {
    match v.to_ascii_uppercase().as_str() {
        "YES" | "TRUE" | "ALWAYS" => Some("YES"),
        "NO" | "FALSE" | "NEVER" => Some("NO"),
        "IF_NEEDED" | "AUTO" => Some("IF_NEEDED"),
        _ => None,
    }
}

/// WhenToTransferOutput by name; `NONE` goes only with
/// should_transfer_files = NO.
fn when_num(v: &str) -> Option<&'static str> {
    match v.to_ascii_uppercase().as_str() {
        "ON_EXIT_OR_EVICT" | "ALWAYS" => Some("ON_EXIT_OR_EVICT"),
        "ON_EXIT" | "ONEXIT" => Some("ON_EXIT"),
        "NONE" | "NULL" => Some("NONE"),
        "ON_SUCCESS" | "ONSUCCESS" => Some("ON_SUCCESS"),
        _ => None,
    }
}

/// A transfer list as condor_submit 24.0 reads it: exactly `""` is the
/// empty list; anything else is split at commas, trimmed, empty entries
/// dropped.
fn file_list(v: &str) -> Vec<&str> {
    strip_quotes(v)
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// The end of the scheme of a URL as HTCondor's IsUrl sees one: a letter,
/// then letters, digits, `+`, `-` or `.`, then `://` and something more.
fn url_scheme_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    if !b.first()?.is_ascii_alphabetic() {
        return None;
    }
    let end = 1 + b[1..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || b"+-.".contains(c))
        .count();
    (b[end..].starts_with(b"://") && b.len() > end + 3).then_some(end)
}

/// The plugin method of a URL (getURLType with the scheme suffix): the
/// part of the scheme after its last `+`, `-` or `.`.
fn url_method(s: &str) -> Option<&str> {
    let end = url_scheme_end(s)?;
    let scheme = &s[..end];
    Some(match scheme.rfind(['+', '-', '.']) {
        Some(p) => &scheme[p + 1..],
        None => scheme,
    })
}

impl Build<'_> {
    /// SetTransferFiles, checked in condor_submit's order: the lists,
    /// `should_transfer_files` (A, F), `when_to_transfer_output` (B, C, D,
    /// E). `should` is kept whatever is built, as Requirements depends on
    /// it.
    pub(super) fn set_transfer_files(&mut self) -> Result<(), SubmitError> {
        let inputs = self.c.command("transfer_input_files")?;
        let in_list: Vec<String> = inputs
            .as_ref()
            .map(|(v, _)| file_list(v).into_iter().map(String::from).collect())
            .unwrap_or_default();
        let outputs = self.c.command("transfer_output_files")?;
        let out_list: Vec<String> = outputs
            .as_ref()
            .map(|(v, _)| file_list(v).into_iter().map(String::from).collect())
            .unwrap_or_default();
        let out_specified =
            outputs.as_ref().is_some_and(|(v, _)| v.trim() == "\"\"") || !out_list.is_empty();
        let in_specified = !in_list.is_empty();

        let should_cmd = self.c.command("should_transfer_files")?;
        let default_should = should_cmd.is_none();
        // The site's default counts as a default (an invalid one is
        // ignored, as condor_submit ignores it: users could not fix it).
        let site_default = self.ctx.default_should_transfer.and_then(should_num);
        let (mut should, should_typed) = match &should_cmd {
            None => match (site_default, self.ctx.default_should_transfer) {
                (Some(s), Some(typed)) => (s, typed.to_string()),
                _ => ("IF_NEEDED", "IF_NEEDED".to_string()),
            },
            Some((v, o)) => match should_num(v) {
                Some(s) => (s, v.clone()),
                None => {
                    return Err(err(
                        o,
                        format!(
                            "ERROR: invalid value ({v}) for ShouldTransferFiles. Please either specify YES, NO, or IF_NEEDED and try again."
                        ),
                    ));
                }
            },
        };
        let should_origin = should_cmd
            .as_ref()
            .map(|(_, o)| o.clone())
            .unwrap_or_else(|| self.q.clone());
        if should == "NO" && (in_specified || out_specified) {
            let via = match (in_specified, out_specified) {
                (true, true) => "transfer_input_files\" and \"transfer_output_files",
                (true, false) => "transfer_input_files",
                _ => "transfer_output_files",
            };
            return Err(err(
                &should_origin,
                format!(
                    "ERROR: you specified files you want Condor to transfer via \"{via}\", but you disabled should_transfer_files."
                ),
            ));
        }
        let when_cmd = self.c.command("when_to_transfer_output")?;
        let mut when = match &when_cmd {
            None => "ON_EXIT",
            Some((v, o)) => when_num(v).ok_or_else(|| {
                err(
                    o,
                    format!(
                        "ERROR: invalid value ({v}) for WhenToTransferOutput. Please either specify ON_EXIT, or ON_EXIT_OR_EVICT and try again."
                    ),
                )
            })?,
        };
        // condor_submit does this only for a NO the file gives, so a site
        // default of NO refuses every description without
        // `when_to_transfer_output = NONE`; tern takes the site's NO too
        // (tern_submit(1), DIFFERENCES FROM HTCONDOR).
        if when_cmd.is_none() && should == "NO" {
            when = "NONE";
        }
        if (should == "NO") != (when == "NONE") {
            let (typed, o) = when_cmd
                .as_ref()
                .map(|(v, o)| (v.clone(), o.clone()))
                .unwrap_or_else(|| (when.to_string(), should_origin.clone()));
            return Err(err(
                &o,
                format!(
                    "ERROR: WhenToTransferOutput specified as {typed} yet ShouldTransferFiles defined as {should_typed}. Please remove this contradiction from your submit file and try again."
                ),
            ));
        }
        if when == "ON_EXIT_OR_EVICT" && should == "IF_NEEDED" {
            if default_should {
                should = "YES";
            } else {
                let o = when_cmd.as_ref().map_or(&should_origin, |(_, o)| o);
                return Err(err(
                    o,
                    "ERROR: \"when_to_transfer_output = ON_EXIT_OR_EVICT\" and \"should_transfer_files = IF_NEEDED\" are incompatible. \
                     The behavior of these two settings together would produce incorrect file access in some cases. \
                     Please decide which one of those two settings you're more interested in. \
                     If you really want \"IF_NEEDED\", set \"when_to_transfer_output = ON_EXIT\". \
                     If you really want \"ON_EXIT_OR_EVICT\", please set \"should_transfer_files = YES\". \
                     After you have corrected this incompatibility, please try running condor_submit again.",
                ));
            }
        }
        self.should = should.to_string();
        let transfer_exe = match self.c.command("transfer_executable")? {
            Some((v, o)) => Some(bool_value(&v).ok_or_else(|| {
                err(
                    &o,
                    format!("transfer_executable={v} is invalid, must eval to a boolean."),
                )
            })?)
            .map(|b| (b, o)),
            None => None,
        };
        // condor_submit checks this in every universe but grid, java and
        // vm, which tern does not run.
        if should == "NO"
            && let Some((true, o)) = &transfer_exe
        {
            return Err(err(
                o,
                "ERROR: You explicitly requested that the executable be transfered, but for this to work, \
                 you must enable Condor's file transfer functionality. You need to define either: \
                 \"when_to_transfer_output = ON_EXIT\" or \"when_to_transfer_output = ON_EXIT_OR_EVICT\". \
                 Optionally, you can define \"should_transfer_files = IF_NEEDED\" if you do not want any files \
                 to be transfered if the job executes on a machine in the same FileSystemDomain. \
                 See the Condor manual for more details.",
            ));
        }
        let remaps = match self.c.command("transfer_output_remaps")? {
            Some((v, o)) => {
                if !(v.len() >= 2 && v.starts_with('"') && v.ends_with('"')) {
                    return Err(err(
                        &o,
                        format!("transfer_output_remaps must be a quoted string, not: {v}"),
                    ));
                }
                Some(v[1..v.len() - 1].to_string())
            }
            None => None,
        };
        self.set_simple_transfer_commands()?;
        if !self.want(&[
            "should_transfer_files",
            "when_to_transfer_output",
            "transfer_input_files",
            "transfer_output_files",
            "transfer_executable",
            "transfer_output_remaps",
        ]) {
            return Ok(());
        }
        self.ad.insert("ShouldTransferFiles", string(should));
        if should != "NO" {
            self.ad.insert("WhenToTransferOutput", string(when));
        }
        if should != "YES" {
            self.ad
                .insert("FileSystemDomain", string(self.ctx.filesystem_domain));
        }
        if should != "NO" {
            if in_specified {
                self.ad.insert("TransferInput", string(&in_list.join(",")));
            }
            if out_specified {
                self.ad
                    .insert("TransferOutput", string(&out_list.join(",")));
            }
        }
        if let Some((false, _)) = transfer_exe {
            self.ad.insert("TransferExecutable", boolean(false));
        }
        if let Some(r) = remaps {
            self.ad.insert("TransferOutputRemaps", string(&r));
        }
        Ok(())
    }

    /// The transfer commands copied as they are (and WantFTOnCheckpoint,
    /// which a checkpoint exit code implies).
    fn set_simple_transfer_commands(&mut self) -> Result<(), SubmitError> {
        let set = self.copy_simple(SIMPLE)?;
        if set.contains(&"SuccessCheckpointExitCode") {
            self.ad.insert("WantFTOnCheckpoint", boolean(true));
        }
        Ok(())
    }

    /// The Requirements clause for HasEncryptExecuteDirectory, which
    /// condor_submit puts before the file-transfer clause.
    pub(super) fn encrypt_dir_clause(&self, refers: &dyn Fn(&str) -> bool) -> Option<String> {
        let on = self
            .lookup("EncryptExecuteDirectory")
            .and_then(|e| e.literal_value())
            .is_some_and(|v| matches!(v, Value::Bool(true)));
        (on && !refers("EncryptExecuteDirectory"))
            .then(|| "TARGET.HasEncryptExecuteDirectory".to_string())
    }

    /// The file-transfer clause of Requirements: the shared file system or
    /// file transfer as `should` says, and with transfer the per-file
    /// encryption, version and plugin-method tests; WantTransferPluginMethods
    /// names the methods the job needs but does not bring.
    pub(super) fn transfer_clause(
        &mut self,
        refers: &dyn Fn(&str) -> bool,
    ) -> Result<Option<String>, SubmitError> {
        if self.universe.runs_on_submit_host() {
            return Ok(None);
        }
        let domain = "(TARGET.FileSystemDomain == MY.FileSystemDomain)";
        let checks_fsdomain = refers("FileSystemDomain");
        if self.should == "NO" {
            return Ok((!checks_fsdomain).then(|| domain.to_string()));
        }
        if refers("HasFileTransfer") || refers("HasJobTransferPlugins") {
            return Ok(None);
        }
        let text = |n: &str| -> Option<String> {
            self.lookup(n)
                .and_then(|e| e.literal_value())
                .and_then(|v| v.as_str().map(String::from))
        };
        let mut clause = String::new();
        let mut close = ")";
        if self.should == "IF_NEEDED" && !checks_fsdomain {
            clause.push_str(&format!("({domain} || ("));
            close = "))";
        } else {
            clause.push('(');
        }
        let plugins = text("TransferPlugins").unwrap_or_default();
        clause.push_str(if plugins.is_empty() {
            "TARGET.HasFileTransfer"
        } else {
            "TARGET.HasJobTransferPlugins"
        });
        if !refers("HasPerFileEncryption")
            && [
                "EncryptInputFiles",
                "EncryptOutputFiles",
                "DontEncryptInputFiles",
                "DontEncryptOutputFiles",
            ]
            .iter()
            .any(|n| self.lookup(n).is_some())
        {
            clause.push_str(" && TARGET.HasPerFileEncryption");
        }
        let relative = self
            .lookup("PreserveRelativePaths")
            .and_then(|e| e.literal_value())
            .is_some_and(|v| matches!(v, Value::Bool(true)));
        let on_success =
            text("WhenToTransferOutput").is_some_and(|w| when_num(&w) == Some("ON_SUCCESS"));
        if text("TransferCheckpoint").is_some() || relative || on_success {
            clause.push_str(" && versioncmp( split(TARGET.CondorVersion)[1], \"8.9.7\" ) >= 0");
        }
        // Methods the job brings: `"tag=path; t2,t3=path2"`, split as
        // condor_submit does (so a leading quote sticks to the first tag).
        let mut brought: Vec<String> = Vec::new();
        for plug in plugins.split(';') {
            if let Some((methods, _)) = plug.trim().split_once('=') {
                brought.extend(
                    methods
                        .split([',', ' ', '\t', '\r', '\n'])
                        .filter(|m| !m.is_empty())
                        .map(str::to_ascii_lowercase),
                );
            }
        }
        // Case-insensitive and sorted, the first spelling kept (a
        // classad::References set).
        let mut methods: BTreeMap<String, String> = BTreeMap::new();
        let mut want = |url: &str| {
            if let Some(m) = url_method(url)
                && !brought.contains(&m.to_ascii_lowercase())
            {
                methods
                    .entry(m.to_ascii_lowercase())
                    .or_insert_with(|| m.to_string());
            }
        };
        for f in text("TransferInput").unwrap_or_default().split(',') {
            want(f.trim());
        }
        if let Some(d) = text("OutputDestination") {
            want(&d);
        }
        for r in text("TransferOutputRemaps").unwrap_or_default().split(';') {
            if let Some((_, url)) = r.split_once('=') {
                want(url.trim());
            }
        }
        for m in methods.values() {
            if refers("HasFileTransferPluginMethods") {
                continue;
            }
            clause.push_str(&format!(
                " && stringListIMember(\"{m}\",TARGET.HasFileTransferPluginMethods)"
            ));
            if m.eq_ignore_ascii_case("s3") || m.eq_ignore_ascii_case("gs") {
                let mut missing = Vec::new();
                if self.lookup("EC2AccessKeyId").is_none() {
                    missing
                        .push("[s3|gs]:// URLs require [s3|aws|gs]_access_key_id_file to be set.");
                }
                if self.lookup("EC2SecretAccessKey").is_none() {
                    missing.push(
                        "[s3|gs]:// URLS require [s3|aws|gs]_secret_access_key_file to be set.",
                    );
                }
                if !missing.is_empty() {
                    let o = self.origin_of("transfer_input_files")?;
                    return Err(err(&o, missing.join("\n")));
                }
            }
        }
        if !methods.is_empty() {
            let list: Vec<&str> = methods.values().map(String::as_str).collect();
            self.ad
                .insert("WantTransferPluginMethods", string(&list.join(",")));
        }
        clause.push_str(close);
        Ok(Some(clause))
    }

    /// The clause a self-checkpointing job adds at the very end.
    pub(super) fn checkpoint_clause(&self, refers: &dyn Fn(&str) -> bool) -> Option<String> {
        let on = self
            .lookup("WantFTOnCheckpoint")
            .and_then(|e| e.literal_value())
            .is_some_and(|v| matches!(v, Value::Bool(true)));
        (on && !refers("HasSelfCheckpointTransfers"))
            .then(|| "TARGET.HasSelfCheckpointTransfers".to_string())
    }

    /// Where a command was given, or the queue statement.
    fn origin_of(&mut self, cmd: &str) -> Result<Origin, SubmitError> {
        Ok(self
            .c
            .command(cmd)?
            .map(|(_, o)| o)
            .unwrap_or_else(|| self.q.clone()))
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
    if url_scheme_end(name).is_some() {
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
