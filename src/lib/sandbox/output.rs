//! Output transfer: what a job leaves in its sandbox goes back to Iwd when
//! it exits (HTCondor's final transfer).
//!
//! The set is `TransferOutput` when the job has it (entries in the
//! sandbox; a directory `d` whole, `d/` its contents; a missing entry is
//! the hold 12/2 while every other file still lands, the missing one as
//! an empty file), else every top-level file that is new or changed since
//! the catalog taken after input transfer. `_condor_stdout` and
//! `_condor_stderr` always go, to Out and Err. Names go through
//! `TransferOutputRemaps` (then the std file rules); a relative
//! destination is under Iwd with missing parents made, an absolute one is
//! used as it is. Each file is written beside its destination under a
//! temporary name and renamed into place, so nobody sees half a file
//! under the final name and a failed copy leaves the old file whole.
//!
//! HTCondor notices a change by size or by mtime in whole seconds, and
//! so sleeps a second after input transfer; tern compares nanosecond
//! mtimes and does not wait.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::classad::ClassAd;
use crate::sys::identity::Identity;
use crate::vocab::{Hold, hold_code};

use super::input::{Budget, Copier, CopyError};
use super::remap::Remaps;
use super::{Moved, Sandbox, Sides};

/// The sandbox's top-level files after input transfer: size and mtime.
#[derive(Debug, Default)]
pub struct Catalog(HashMap<OsString, (u64, i64, i64)>);

impl Catalog {
    pub fn take(sb: &Sandbox) -> Catalog {
        let mut map = HashMap::new();
        if let Ok(rd) = fs::read_dir(&sb.dir) {
            for e in rd.flatten() {
                if let Ok(m) = e.metadata()
                    && !m.is_dir()
                {
                    map.insert(e.file_name(), stamp(&m));
                }
            }
        }
        Catalog(map)
    }

    /// Forgets the names restored from an earlier run's SPOOL copy: they
    /// count as this job's output at its final exit (HTCondor's
    /// TransferIntermediate).
    pub fn forget_restored(&mut self, spooled: &Path) {
        if let Ok(rd) = fs::read_dir(spooled) {
            for e in rd.flatten() {
                self.0.remove(&e.file_name());
            }
        }
    }

    fn changed(&self, name: &OsString, m: &fs::Metadata) -> bool {
        self.0.get(name) != Some(&stamp(m))
    }
}

fn stamp(m: &fs::Metadata) -> (u64, i64, i64) {
    (m.len(), m.mtime(), m.mtime_nsec())
}

/// One file or directory to send, by the name it is sent under.
enum Item {
    File {
        src: PathBuf,
        name: String,
    },
    Dir {
        name: String,
    },
    /// A listed entry that is not there: sent as an empty file.
    Missing {
        src: PathBuf,
        name: String,
    },
}

/// Sends the output set back; the totals, and the hold of the first
/// failure (every other file is still sent).
/// `max_mb` is MAX_TRANSFER_OUTPUT_MB (the job's MaxTransferOutputMB
/// wins); crossing it is hold 33 after every file was sent as far as it
/// could be.
pub fn stage_out(
    sb: &Sandbox,
    ad: &Rc<ClassAd>,
    catalog: &Catalog,
    max_mb: i64,
    sides: &Sides,
    owner: Option<&Identity>,
) -> (Moved, Option<Hold>) {
    let mut moved = Moved {
        started: crate::clock::now(),
        ..Moved::default()
    };
    let iwd = PathBuf::from(ad.eval_str("Iwd").unwrap_or_else(|| "/".into()));
    let mut first: Option<Hold> = None;
    let items = match ad.eval_str("TransferOutput") {
        Some(list) => listed(sb, ad, &list),
        None => changed(sb, ad, catalog),
    };
    let mut remaps = Remaps::parse(&ad.eval_str("TransferOutputRemaps").unwrap_or_default());
    let mut items = items;
    for (file, attr, stream) in [
        (super::STDOUT_FILE, "Out", "StreamOut"),
        (super::STDERR_FILE, "Err", "StreamErr"),
    ] {
        let dest = ad
            .eval_str(attr)
            .filter(|v| !v.is_empty() && v != "/dev/null" && !ad.eval(stream).is_true());
        if let Some(dest) = dest
            && sb.path(file).is_file()
        {
            remaps.push(file, &dest);
            items.push(Item::File {
                src: sb.path(file),
                name: file.to_string(),
            });
        }
    }
    let mut send = Sender {
        iwd: &iwd,
        owner,
        moved: &mut moved,
        budget: Budget::for_job(ad, "MaxTransferOutputMB", max_mb),
    };
    for item in items {
        let r = match &item {
            Item::File { src, name } => send.file(src, name, &remaps),
            Item::Dir { name } => send.dir(name, &remaps),
            Item::Missing { src, name } => {
                let _ = send.empty(name, &remaps);
                Err(Failure::Read(CopyError::io(
                    src,
                    &io::Error::from_raw_os_error(libc::ENOENT),
                )))
            }
        };
        if let Err(f) = r
            && first.is_none()
        {
            first = Some(f.hold(sides));
        }
    }
    if first.is_none()
        && let Some(text) = send.budget.exceeded("download", sides)
    {
        first = Some(Hold::new(
            text,
            hold_code::MAX_TRANSFER_OUTPUT_SIZE_EXCEEDED,
            0,
        ));
    }
    moved.finished = crate::clock::now();
    (moved, first)
}

/// Saves the output set of an evicted run (ON_EXIT_OR_EVICT) to the job's
/// SPOOL copy ([`super::spool`]), under the sandbox's own names (no
/// remaps), with `_condor_stdout` and `_condor_stderr`; the new copy
/// replaces the old one whole. Root (when the shadow is) only makes and
/// swaps the directories: the sandbox is read and the copy written as the
/// job's `owner`. A missing listed file is the same hold 12/2 as at exit.
pub fn spool_out(
    sb: &Sandbox,
    ad: &Rc<ClassAd>,
    catalog: &Catalog,
    job: (i64, i64),
    spool: &Path,
    owner: Option<&Identity>,
    sides: &Sides,
) -> (Moved, Option<Hold>) {
    let mut moved = Moved {
        started: crate::clock::now(),
        ..Moved::default()
    };
    let saved = super::spool::save(spool, job.0, job.1, owner, |into| {
        crate::sys::identity::as_user(owner, || {
            fill_spool(sb, ad, catalog, into, sides, &mut moved)
        })
    });
    let dest = super::spool::job_spool(spool, job.0, job.1);
    let hold = match saved {
        Ok(Ok(first)) => first,
        Ok(Err(e)) | Err(e) => Some(Failure::Write(CopyError::io(&dest, &e)).hold(sides)),
    };
    moved.finished = crate::clock::now();
    (moved, hold)
}

/// Copies the output set into `into` (a new SPOOL copy); the hold of the
/// first failure, every other file still copied.
fn fill_spool(
    sb: &Sandbox,
    ad: &Rc<ClassAd>,
    catalog: &Catalog,
    into: &Path,
    sides: &Sides,
    moved: &mut Moved,
) -> Option<Hold> {
    let mut items = match ad.eval_str("TransferOutput") {
        Some(list) => listed(sb, ad, &list),
        None => changed(sb, ad, catalog),
    };
    for f in [super::STDOUT_FILE, super::STDERR_FILE] {
        if sb.path(f).is_file()
            && !items
                .iter()
                .any(|i| matches!(i, Item::File { name, .. } if name == f))
        {
            items.push(Item::File {
                src: sb.path(f),
                name: f.to_string(),
            });
        }
    }
    let mut first = None;
    let none = Remaps::default();
    let mut send = Sender {
        iwd: into,
        owner: None,
        moved,
        budget: Budget::default(),
    };
    for item in items {
        let r = match &item {
            Item::File { src, name } => send.file(src, name, &none),
            Item::Dir { name } => send.dir(name, &none),
            Item::Missing { src, .. } => Err(Failure::Read(CopyError::io(
                src,
                &io::Error::from_raw_os_error(libc::ENOENT),
            ))),
        };
        if let Err(f) = r
            && first.is_none()
        {
            first = Some(f.hold(sides));
        }
    }
    first
}

/// The explicit list, expanded: directories recursively.
fn listed(sb: &Sandbox, ad: &Rc<ClassAd>, list: &str) -> Vec<Item> {
    let keep_paths = ad.eval("PreserveRelativePaths").is_true();
    let mut out = Vec::new();
    for entry in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let src = sb.dir.join(entry);
        let contents = entry.ends_with('/');
        let trimmed = entry.trim_end_matches('/');
        let name = if keep_paths && !Path::new(entry).is_absolute() {
            trimmed.to_string()
        } else {
            Path::new(trimmed)
                .file_name()
                .map(|b| b.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        match fs::metadata(&src) {
            Err(_) => out.push(Item::Missing { src, name }),
            Ok(m) if m.is_dir() => {
                let prefix = if contents {
                    String::new()
                } else {
                    name.clone()
                };
                if !contents {
                    out.push(Item::Dir { name: name.clone() });
                }
                tree(&src, &prefix, &mut out);
            }
            Ok(_) => out.push(Item::File { src, name }),
        }
    }
    out
}

/// A directory's files and subdirectories, named under `prefix`.
fn tree(dir: &Path, prefix: &str, out: &mut Vec<Item>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let n = e.file_name().to_string_lossy().into_owned();
        let name = if prefix.is_empty() {
            n
        } else {
            format!("{prefix}/{n}")
        };
        match fs::metadata(e.path()) {
            Ok(m) if m.is_dir() => {
                out.push(Item::Dir { name: name.clone() });
                tree(&e.path(), &name, out);
            }
            Ok(m) if m.is_file() => out.push(Item::File {
                src: e.path(),
                name,
            }),
            _ => {}
        }
    }
}

/// The default set: new or changed top-level files, not the executable,
/// the proxy, the ad files or the std files (sent on their own).
fn changed(sb: &Sandbox, ad: &Rc<ClassAd>, catalog: &Catalog) -> Vec<Item> {
    let base = |attr: &str| {
        ad.eval_str(attr)
            .and_then(|p| Path::new(&p).file_name().map(|b| b.to_os_string()))
    };
    let mut never: Vec<OsString> = [
        super::JOB_AD_FILE,
        super::MACHINE_AD_FILE,
        super::STDOUT_FILE,
        super::STDERR_FILE,
    ]
    .iter()
    .map(OsString::from)
    .collect();
    never.extend(base("Cmd"));
    never.extend(base("X509UserProxy"));
    let mut out = Vec::new();
    let Ok(rd) = fs::read_dir(&sb.dir) else {
        return out;
    };
    let mut entries: Vec<_> = rd.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let n = e.file_name();
        if never.contains(&n) {
            continue;
        }
        if let Ok(m) = fs::metadata(e.path())
            && m.is_file()
            && catalog.changed(&n, &m)
        {
            out.push(Item::File {
                src: e.path(),
                name: n.to_string_lossy().into_owned(),
            });
        }
    }
    out
}

/// Why one file did not arrive.
enum Failure {
    /// The sandbox side (reading).
    Read(CopyError),
    /// The Iwd side (writing the destination).
    Write(CopyError),
    /// A parent directory of a relative destination could not be made.
    MakeDir(CopyError),
    Cycle(String),
}

impl Failure {
    /// HTCondor's hold for it (spec 6.3): code 12, the errno as subcode.
    fn hold(&self, sides: &Sides) -> Hold {
        let ep_side = format!(
            "Transfer output files failure at execution point {} while sending files to access point {}",
            sides.ep, sides.ap
        );
        let ap_side = format!(
            "Transfer output files failure at access point {} while receiving files from execution point {}",
            sides.ap, sides.ep
        );
        let file = |side: &str, verb: &str, e: &CopyError| {
            let text = format!(
                "{side}. Details: {verb} file {}: (errno {}) {}",
                e.path.display(),
                e.errno,
                e.text
            );
            (text, e.errno)
        };
        let (text, errno) = match self {
            Failure::Read(e) => file(&ep_side, "reading from", e),
            Failure::Write(e) => file(&ap_side, "writing to", e),
            Failure::MakeDir(e) => (
                format!(
                    "{ap_side}. Details: SHADOW at {} failed to create directory {}: {} (errno {})",
                    sides.ap,
                    e.path.display(),
                    e.text,
                    e.errno
                ),
                e.errno,
            ),
            Failure::Cycle(name) => (
                format!("{ep_side}. Details: remaps resulted in a cycle: {name}"),
                libc::EPERM,
            ),
        };
        Hold::new(text, hold_code::TRANSFER_OUTPUT_ERROR, errno as i64)
    }
}

struct Sender<'a> {
    iwd: &'a Path,
    owner: Option<&'a Identity>,
    moved: &'a mut Moved,
    budget: Budget,
}

impl Sender<'_> {
    /// Where a name lands: remapped, under Iwd unless absolute; relative
    /// destinations get their missing parents.
    fn dest(&self, name: &str, remaps: &Remaps) -> Result<PathBuf, Failure> {
        let to = remaps.apply(name).map_err(Failure::Cycle)?;
        let p = Path::new(&to);
        if p.is_absolute() {
            return Ok(p.to_path_buf());
        }
        let dest = self.iwd.join(p);
        if let Some(parent) = dest.parent()
            && !parent.is_dir()
        {
            use std::os::unix::fs::DirBuilderExt;
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)
                .map_err(|e| Failure::MakeDir(CopyError::io(parent, &e)))?;
        }
        Ok(dest)
    }

    fn file(&mut self, src: &Path, name: &str, remaps: &Remaps) -> Result<(), Failure> {
        let dest = self.dest(name, remaps)?;
        let meta = fs::metadata(src).map_err(|e| Failure::Read(CopyError::io(src, &e)))?;
        // Beside the destination under a temporary name, then renamed.
        let tmp = temp_beside(&dest);
        let mut copier = Copier {
            owner: self.owner,
            moved: self.moved,
            budget: &mut self.budget,
        };
        let r = copier.file(src, &tmp, &meta);
        if let Err(e) = r {
            let _ = fs::remove_file(&tmp);
            return Err(if e.path == src {
                Failure::Read(e)
            } else {
                Failure::Write(CopyError { path: dest, ..e })
            });
        }
        fs::rename(&tmp, &dest).map_err(|e| {
            let _ = fs::remove_file(&tmp);
            Failure::Write(CopyError::io(&dest, &e))
        })
    }

    fn dir(&mut self, name: &str, remaps: &Remaps) -> Result<(), Failure> {
        let dest = self.dest(name, remaps)?;
        match fs::create_dir(&dest) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dest.is_dir() => Ok(()),
            Err(e) => Err(Failure::Write(CopyError::io(&dest, &e))),
        }
    }

    /// A missing source arrives as an empty file, as HTCondor's sender
    /// sends 0 bytes in its place.
    fn empty(&mut self, name: &str, remaps: &Remaps) -> Result<(), Failure> {
        let dest = self.dest(name, remaps)?;
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC;
        crate::sys::fs::open_regular(&dest, flags, 0o666)
            .map(|_| ())
            .map_err(|e| Failure::Write(CopyError::io(&dest, &e)))
    }
}

/// `dir/.name.tern-<pid>`: a name beside `dest` no other run uses now.
fn temp_beside(dest: &Path) -> PathBuf {
    let base = dest
        .file_name()
        .map(|b| b.to_string_lossy().into_owned())
        .unwrap_or_default();
    dest.with_file_name(format!(".{base}.tern-{}", std::process::id()))
}
