//! Input transfer: the files a job names are copied into its sandbox
//! before it starts (HTCondor's `FileTransfer::SimpleInit` and upload).
//!
//! The list is `TransferInput` (comma-separated, relative to Iwd or
//! absolute), then stdin (`In`, unless /dev/null), then the executable
//! (`Cmd`, unless `TransferExecutable` is false), so a later entry wins a
//! clash of names as in HTCondor. A file lands at `sandbox/<base name>`
//! (a symlink is followed); a directory `d` is copied whole to
//! `sandbox/d`, and `d/` copies its contents to the top. `file://` URLs
//! are local paths; `http`, `https`, `ftp`, `dav` and `davs` URLs are
//! fetched with curl(1) as HTCondor's curl plugin fetches them; any other
//! scheme holds the job, naming it. The first failure holds the job with code 13, the
//! errno as subcode and HTCondor's text, and nothing of it runs.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::classad::ClassAd;
use crate::sys::fs::{open_regular, open_regular_to_read};
use crate::sys::identity::Identity;
use crate::sys::io_error_text;
use crate::vocab::{Hold, hold_code};

use super::{Moved, Sandbox, Sides};

/// One thing to copy in.
#[derive(Debug, PartialEq)]
enum Source {
    /// A local path, and whether it ended with a slash.
    Path(PathBuf, bool),
    /// A URL of a scheme tern cannot fetch.
    Url { scheme: String },
}

/// Copies the job's inputs into the sandbox; the totals, or the hold.
/// `spooled` is the job's SPOOL copy from an evicted run, if it has one.
/// `max_mb` is MAX_TRANSFER_INPUT_MB (the job's MaxTransferInputMB wins).
pub fn stage_in(
    sb: &Sandbox,
    ad: &Rc<ClassAd>,
    spooled: Option<&Path>,
    max_mb: i64,
    sides: &Sides,
    owner: Option<&Identity>,
) -> Result<Moved, Hold> {
    let mut budget = Budget::for_job(ad, "MaxTransferInputMB", max_mb);
    let iwd = PathBuf::from(ad.eval_str("Iwd").unwrap_or_else(|| "/".into()));
    let mut moved = Moved {
        started: crate::clock::now(),
        ..Moved::default()
    };
    for entry in entries(ad) {
        match source(&entry, &iwd) {
            Source::Url { scheme }
                if CURL_SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()) =>
            {
                fetch(&entry, &scheme, &sb.dir, sides, owner)?;
                // HTCondor counts a URL as the length of its text.
                moved.bytes += entry.len() as u64;
                moved.files += 1;
            }
            Source::Url { scheme } => {
                return Err(Hold::new(
                    format!(
                        "Transfer input files failure at execution point {} using protocol {scheme}. \
                         Details: FILETRANSFER: plugin for type {scheme} not found!",
                        sides.ep
                    ),
                    hold_code::TRANSFER_INPUT_ERROR,
                    0,
                ));
            }
            Source::Path(path, contents) => {
                let mut copier = Copier {
                    owner,
                    moved: &mut moved,
                    budget: &mut budget,
                };
                copier
                    .entry(&path, contents, &sb.dir)
                    .map_err(|e| input_hold(sides, &e))?;
            }
        }
    }
    // What an evicted run saved (ON_EXIT_OR_EVICT) comes last, over any
    // input of the same name.
    if let Some(saved) = spooled
        && saved.is_dir()
    {
        let mut copier = Copier {
            owner,
            moved: &mut moved,
            budget: &mut budget,
        };
        copier
            .entry(saved, true, &sb.dir)
            .map_err(|e| input_hold(sides, &e))?;
    }
    if let Some(text) = budget.exceeded("upload", sides) {
        return Err(Hold::new(
            text,
            hold_code::MAX_TRANSFER_INPUT_SIZE_EXCEEDED,
            0,
        ));
    }
    // The executable runs whatever mode it had.
    if let Some(exe) = sb.executable(ad) {
        let _ = fs::set_permissions(&exe, fs::Permissions::from_mode(0o755));
    }
    moved.finished = crate::clock::now();
    Ok(moved)
}

/// The entries to copy, in order: TransferInput, In, Cmd.
fn entries(ad: &Rc<ClassAd>) -> Vec<String> {
    let mut out: Vec<String> = ad
        .eval_str("TransferInput")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    if let Some(i) = ad
        .eval_str("In")
        .filter(|i| !i.is_empty() && i != "/dev/null")
    {
        out.push(i);
    }
    if super::transfers_executable(ad)
        && let Some(c) = ad.eval_str("Cmd").filter(|c| !c.is_empty())
    {
        out.push(c);
    }
    out
}

/// Where an entry comes from: a URL's scheme is a letter then letters,
/// digits, `+`, `-` or `.`, before `://`.
fn source(entry: &str, iwd: &Path) -> Source {
    if let Some((scheme, rest)) = entry.split_once("://")
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    {
        if scheme.eq_ignore_ascii_case("file") {
            return Source::Path(PathBuf::from(rest), rest.ends_with('/'));
        }
        return Source::Url {
            scheme: scheme.to_string(),
        };
    }
    Source::Path(iwd.join(entry), entry.ends_with('/'))
}

/// The schemes HTCondor's curl plugin serves (24.0's FILETRANSFER_PLUGINS),
/// less `file`, which tern copies itself.
const CURL_SCHEMES: &[&str] = &["http", "https", "ftp", "dav", "davs"];

/// Fetches a URL into the sandbox as HTCondor's curl plugin does: with
/// curl(1) (the same library the plugin uses), following redirects,
/// failing on an HTTP error, to `sandbox/<last path component>` without
/// its query. A failure is hold 13 with curl's exit code shifted left by 8
/// as subcode (HTCondor's `exit << 8`) and curl's message.
fn fetch(
    url: &str,
    scheme: &str,
    dir: &Path,
    sides: &Sides,
    owner: Option<&Identity>,
) -> Result<(), Hold> {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let name = path
        .rsplit('/')
        .next()
        .filter(|n| !n.is_empty())
        .unwrap_or("index.html");
    let dest = dir.join(name);
    let fail = |detail: String, sub: i64| {
        Hold::new(
            format!(
                "Transfer input files failure at execution point {} using protocol {scheme}. \
                 Details: {detail}",
                sides.ep
            ),
            hold_code::TRANSFER_INPUT_ERROR,
            sub,
        )
    };
    let mut curl = std::process::Command::new("curl");
    if let Some(id) = owner {
        // curl runs as the owner for good, not with root's saved ids.
        crate::sys::identity::child_runs_as(&mut curl, Some(id.clone()), None);
    }
    let out = curl
        .args([
            "--fail",
            "--location",
            "--silent",
            "--show-error",
            "--retry",
            "2",
        ])
        .args(["--connect-timeout", "30", "--output"])
        .arg(&dest)
        .arg("--")
        .arg(url)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| {
            fail(
                format!("cannot run curl to fetch {url}: {}", io_error_text(&e)),
                0,
            )
        })?;
    if !out.status.success() {
        let code = out.status.code().unwrap_or(0) as i64;
        let msg = String::from_utf8_lossy(&out.stderr).trim().to_string();
        let _ = fs::remove_file(&dest);
        return Err(fail(format!("fetching {url}: {msg}"), code << 8));
    }
    if let Some(id) = owner {
        let _ = std::os::unix::fs::chown(&dest, Some(id.uid), Some(id.gid));
    }
    Ok(())
}

/// HTCondor's hold for a source it could not read (spec 6.3): code 13,
/// the errno as subcode, the absolute path.
fn input_hold(sides: &Sides, e: &CopyError) -> Hold {
    Hold::new(
        format!(
            "Transfer input files failure at access point {} while sending files to execution \
             point {}. Details: reading from file {}: (errno {}) {}",
            sides.ap,
            sides.ep,
            e.path.display(),
            e.errno,
            e.text
        ),
        hold_code::TRANSFER_INPUT_ERROR,
        e.errno as i64,
    )
}

/// Copies files and trees, counting what it moved.
pub(super) struct Copier<'a> {
    pub owner: Option<&'a Identity>,
    pub moved: &'a mut Moved,
    pub budget: &'a mut Budget,
}

/// What MAX_TRANSFER_INPUT_MB / MAX_TRANSFER_OUTPUT_MB leave of a
/// transfer: the file that crosses the limit is copied truncated to what
/// remains and every later one empty, as HTCondor sends them.
#[derive(Debug, Default)]
pub struct Budget {
    /// Bytes left; `None` for no limit.
    pub left: Option<u64>,
    /// The limit in MB, for the message.
    pub max_mb: i64,
    /// The first file over the limit and its size.
    pub over: Option<(PathBuf, u64)>,
}

impl Budget {
    /// A limit in MB (1 MB = 1048576 bytes); negative means none.
    pub fn of_mb(max_mb: i64) -> Budget {
        Budget {
            left: (max_mb >= 0).then(|| max_mb as u64 * 1_048_576),
            max_mb,
            over: None,
        }
    }

    /// The job's own limit (`attr`) or else the knob's.
    pub fn for_job(ad: &Rc<ClassAd>, attr: &str, knob: i64) -> Budget {
        Budget::of_mb(ad.eval_int(attr).unwrap_or(knob))
    }

    /// How many bytes of a file of `len` may be sent; notes the first
    /// file that crosses the limit.
    fn take(&mut self, src: &Path, len: u64) -> u64 {
        let Some(left) = self.left else { return len };
        let n = len.min(left);
        self.left = Some(left - n);
        if n < len && self.over.is_none() {
            self.over = Some((src.to_path_buf(), len));
        }
        n
    }

    /// HTCondor's text for the crossing (spec 6.3, codes 32 and 33).
    pub fn exceeded(&self, what: &str, sides: &Sides) -> Option<String> {
        let (path, len) = self.over.as_ref()?;
        let mb = |b: u64| b.div_ceil(1_048_576);
        Some(format!(
            "Error from {}: Failed to transfer files: |Error: sending file {}: max total {what} \
             bytes exceeded (max={} MB, this file={} MB)",
            sides.ep,
            path.display(),
            self.max_mb,
            mb(*len)
        ))
    }
}

/// A failed copy: the path that failed, the errno and the text.
#[derive(Debug)]
pub(super) struct CopyError {
    pub path: PathBuf,
    pub errno: i32,
    pub text: String,
}

impl CopyError {
    pub fn io(path: &Path, e: &io::Error) -> CopyError {
        CopyError {
            path: path.to_path_buf(),
            errno: e.raw_os_error().unwrap_or(0),
            text: io_error_text(e),
        }
    }
}

/// `map_err` for an I/O step on `path`.
fn at(path: &Path) -> impl FnOnce(io::Error) -> CopyError + '_ {
    move |e| CopyError::io(path, &e)
}

impl Copier<'_> {
    /// One entry into `dest_dir`: a file to `dest_dir/<base>`, a directory
    /// whole to `dest_dir/<base>`, or with `contents` (a trailing slash)
    /// the directory's entries to `dest_dir`.
    pub fn entry(&mut self, src: &Path, contents: bool, dest_dir: &Path) -> Result<(), CopyError> {
        let meta = fs::metadata(src).map_err(at(src))?;
        if contents && meta.is_dir() {
            return self.dir_contents(src, dest_dir);
        }
        let Some(base) = src.file_name() else {
            return Err(CopyError::io(
                src,
                &io::Error::from_raw_os_error(libc::EISDIR),
            ));
        };
        if meta.is_dir() {
            // HTCondor refuses a symlink to a directory named without a
            // trailing slash, its text glued to the errno's.
            if fs::symlink_metadata(src).is_ok_and(|m| m.file_type().is_symlink()) {
                let mut e = CopyError::io(src, &io::Error::from_raw_os_error(libc::EISDIR));
                e.text
                    .push_str("- Transfer of symlinks to directories is not supported.");
                return Err(e);
            }
            let dest = dest_dir.join(base);
            self.make_dir(&dest, &meta)?;
            return self.dir_contents(src, &dest);
        }
        if meta.is_file() {
            return self.file(src, &dest_dir.join(base), &meta);
        }
        // Sockets, FIFOs and devices are skipped, as HTCondor does.
        Ok(())
    }

    fn dir_contents(&mut self, src: &Path, dest: &Path) -> Result<(), CopyError> {
        let rd = fs::read_dir(src).map_err(at(src))?;
        let mut names: Vec<_> = rd.flatten().map(|e| e.file_name()).collect();
        names.sort();
        for n in names {
            let p = src.join(&n);
            let meta = fs::metadata(&p).map_err(at(&p))?;
            if meta.is_dir() {
                let d = dest.join(&n);
                self.make_dir(&d, &meta)?;
                self.dir_contents(&p, &d)?;
            } else if meta.is_file() {
                self.file(&p, &dest.join(&n), &meta)?;
            }
        }
        Ok(())
    }

    fn make_dir(&mut self, dest: &Path, meta: &fs::Metadata) -> Result<(), CopyError> {
        match fs::create_dir(dest) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dest.is_dir() => {}
            Err(e) => return Err(CopyError::io(dest, &e)),
        }
        // Writable by the copy itself while it fills the directory.
        let mode = meta.permissions().mode() & 0o7777 | 0o700;
        fs::set_permissions(dest, fs::Permissions::from_mode(mode)).map_err(at(dest))?;
        self.chown(dest)
    }

    /// A regular file: its bytes and permission bits (the mtime is the
    /// copy's), streamed, never read whole into memory. Both ends are
    /// opened without blocking and must be regular files: a FIFO or device
    /// swapped in for either (by the job, or by its owner in Iwd) is a
    /// failure naming it, never a shadow waiting forever.
    pub fn file(&mut self, src: &Path, dest: &Path, meta: &fs::Metadata) -> Result<(), CopyError> {
        if dest.is_dir() {
            fs::remove_dir_all(dest).map_err(at(dest))?;
        }
        let allowed = self.budget.take(src, meta.len());
        let from = open_regular_to_read(src).map_err(at(src))?;
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC;
        let mut to = open_regular(dest, flags, 0o600).map_err(at(dest))?;
        let n = io::copy(&mut io::Read::take(from, allowed), &mut to).map_err(at(dest))?;
        let mode = meta.permissions().mode() & 0o7777;
        to.set_permissions(fs::Permissions::from_mode(mode))
            .map_err(at(dest))?;
        if let Some(id) = self.owner {
            std::os::unix::fs::fchown(&to, Some(id.uid), Some(id.gid)).map_err(at(dest))?;
        }
        self.moved.bytes += n;
        self.moved.files += 1;
        Ok(())
    }

    fn chown(&self, p: &Path) -> Result<(), CopyError> {
        if let Some(id) = self.owner {
            std::os::unix::fs::lchown(p, Some(id.uid), Some(id.gid)).map_err(at(p))?;
        }
        Ok(())
    }
}
