//! `.job.ad` and `.machine.ad`: the starter's copy of the job ad and the
//! slot ad, in old ClassAd syntax (`Attr = value` lines, as `tern_q -l`
//! prints them, though in the ad's own order, unsorted, as HTCondor's
//! starter writes them in its hash order: sorting both ads was 4% of a
//! shadow's work per job), written into the sandbox before anything is
//! transferred and, as in HTCondor 24.0, not rewritten while the job
//! runs.

use std::rc::Rc;

use crate::classad::ClassAd;
use crate::classad::unparse::OldTexts;
use crate::sys::identity::Identity;
use crate::sys::io_error_text as io_text;
use crate::vocab::{Hold, hold_code};

use super::Sandbox;

/// Writes both files, the shared expressions' texts kept in `texts`; a
/// failure is a hold naming the file.
pub fn write(
    sb: &Sandbox,
    job: &ClassAd,
    machine: &ClassAd,
    owner: Option<&Identity>,
    texts: &mut OldTexts,
) -> Result<(), Hold> {
    for (name, ad) in [(super::JOB_AD_FILE, job), (super::MACHINE_AD_FILE, machine)] {
        let path = sb.path(name);
        let r = write_in_place(&path, texts.ad_to_old(ad).as_bytes()).and_then(|f| {
            if let Some(id) = owner {
                std::os::unix::fs::fchown(&f, Some(id.uid), Some(id.gid))?;
            }
            Ok(())
        });
        r.map_err(|e| {
            Hold::new(
                format!("Failed to write {}: {}", path.display(), io_text(&e)),
                hold_code::FAILED_TO_CREATE_PROCESS,
                e.raw_os_error().unwrap_or(0) as i64,
            )
        })?;
    }
    Ok(())
}

/// Writes `text` over the file at `path` (made if missing) without first
/// emptying it: a sandbox keeps its ad files from run to run, and ext4
/// writes a file emptied by truncation back to disk when it is closed
/// (`auto_da_alloc`), a disk write per file per job for files nobody
/// needs on disk. Cutting the tail off afterwards, when there is one,
/// does not count as that.
/// A symlink, FIFO or anything else but a regular file the last job left
/// in its place is never followed or waited on: it is removed and the file
/// made anew.
fn write_in_place(path: &std::path::Path, text: &[u8]) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::FileExt;
    let open = || crate::sys::fs::open_regular_sized(path, libc::O_WRONLY | libc::O_CREAT, 0o666);
    let (f, before) = match open() {
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
            std::fs::remove_file(path)?;
            open()?
        }
        r => r?,
    };
    f.write_all_at(text, 0)?;
    // Only a longer file has a tail to cut: a truncation to the same size
    // still costs ext4 an inode update (1.5% of a shadow's time on 2,000
    // short jobs, whose ads have the same length from job to job).
    if before > text.len() as u64 {
        f.set_len(text.len() as u64)?;
    }
    Ok(f)
}

/// The starter's copy of the job ad under file transfer
/// (`JICShadow::initWithFileTransfer`): Iwd is the sandbox (the old one
/// kept as OrigIwd, Cmd as OrigCmd), and a stdout or stderr that is a real
/// file and not streamed becomes `_condor_stdout` / `_condor_stderr`
/// (both `_condor_stdout` when Err names Out's file), the old names kept as
/// OriginalOut / OriginalErr.
pub fn starter_copy(ad: &Rc<ClassAd>, sb: &Sandbox) -> ClassAd {
    let mut out = (**ad).clone();
    if !sb.transfer {
        return out;
    }
    let s = |v: &str| crate::classad::Expr::string(v);
    if let Some(iwd) = ad.eval_str("Iwd") {
        out.insert("OrigIwd", s(&iwd));
    }
    out.insert("Iwd", s(&sb.dir.display().to_string()));
    if let Some(cmd) = ad.eval_str("Cmd") {
        out.insert("OrigCmd", s(&cmd));
    }
    let file = |attr: &str| {
        ad.eval_str(attr)
            .filter(|v| !v.is_empty() && v != "/dev/null")
    };
    let streamed = |attr: &str| ad.eval(attr).is_true();
    // A streamed file is written in place, under the old Iwd.
    let orig_iwd = std::path::PathBuf::from(ad.eval_str("Iwd").unwrap_or_else(|| "/".into()));
    for (attr, stream) in [("Out", "StreamOut"), ("Err", "StreamErr")] {
        if let Some(f) = file(attr).filter(|_| streamed(stream)) {
            out.insert(attr, s(&orig_iwd.join(f).display().to_string()));
        }
    }
    // stdin was copied in under its base name.
    if let Some(i) = file("In")
        && let Some(base) = std::path::Path::new(&i).file_name()
    {
        out.insert("In", s(&base.to_string_lossy()));
    }
    let out_name = file("Out").filter(|_| !streamed("StreamOut"));
    if let Some(o) = &out_name {
        out.insert("OriginalOut", s(o));
        out.insert("Out", s(super::STDOUT_FILE));
    }
    if let Some(e) = file("Err").filter(|_| !streamed("StreamErr")) {
        out.insert("OriginalErr", s(&e));
        let same = out_name.as_deref() == Some(e.as_str());
        out.insert(
            "Err",
            s(if same {
                super::STDOUT_FILE
            } else {
                super::STDERR_FILE
            }),
        );
    }
    out
}
