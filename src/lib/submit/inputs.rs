//! A submission's external inputs: the item lists a `queue` statement
//! reads from a file (`queue x from items.txt`) or a command's output
//! (`queue x from cmd |`), and the paths `queue … matching` finds.
//!
//! They are what a description can make take any time at all (a command
//! that sleeps, a FIFO, a hung mount). tern_submit reads them all while it
//! builds the cluster *before* it takes the queue's write lock, so in
//! shared mode no user can hold every other user's submit (and root's
//! pass) behind one. When it has to build again inside the write
//! transaction (see `cli::submit`), the build only replays what was read:
//! nothing runs and nothing is read there.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One external input, as named after macro expansion.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Source {
    File(PathBuf),
    Command {
        cmd: String,
        dir: PathBuf,
    },
    Matching {
        dir: PathBuf,
        globs: Vec<String>,
        files: bool,
        dirs: bool,
    },
}

impl Source {
    fn describe(&self) -> String {
        match self {
            Source::File(p) => format!("the queue item file {}", p.display()),
            Source::Command { cmd, .. } => format!("the queue item command '{cmd}'"),
            Source::Matching { globs, .. } => format!("the files matching '{}'", globs.join(" ")),
        }
    }
}

/// The external inputs one submission has read, by name. A fresh value
/// reads (and remembers) what it is asked for; after [`Inputs::replay_only`]
/// it answers only from memory.
#[derive(Debug, Default)]
pub struct Inputs {
    seen: RefCell<HashMap<Source, Vec<String>>>,
    replay_only: Cell<bool>,
}

impl Inputs {
    /// From now on nothing is read or run: an input not read before
    /// (its name depends on something that changed since, such as
    /// `$(Cluster)` or `$RANDOM_INTEGER()`) is an error asking to submit
    /// again.
    pub fn replay_only(&self) {
        self.replay_only.set(true);
    }

    /// The non-blank lines of the file `path`.
    pub(crate) fn file_lines(&self, path: &Path) -> Result<Vec<String>, String> {
        self.get(Source::File(path.to_path_buf()), || {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read queue item file {}: {e}", path.display()))?;
            Ok(non_blank(&text))
        })
    }

    /// The non-blank lines `cmd` prints, run by `/bin/sh` in `dir` as the
    /// submitter (see `parse::user_command`).
    pub(crate) fn command_lines(&self, cmd: &str, dir: &Path) -> Result<Vec<String>, String> {
        let source = Source::Command {
            cmd: cmd.to_string(),
            dir: dir.to_path_buf(),
        };
        self.get(source, || {
            let out = super::parse::user_command(cmd)
                .current_dir(dir)
                .output()
                .map_err(|e| format!("cannot run '{cmd}': {e}"))?;
            if !out.status.success() {
                return Err(format!("queue item command '{cmd}' failed: {}", out.status));
            }
            Ok(non_blank(&String::from_utf8_lossy(&out.stdout)))
        })
    }

    /// The paths under `dir` matching `globs` (see [`super::queue::matching`]).
    pub(crate) fn matching(
        &self,
        dir: &Path,
        globs: &[String],
        files: bool,
        dirs: bool,
    ) -> Result<Vec<String>, String> {
        let source = Source::Matching {
            dir: dir.to_path_buf(),
            globs: globs.to_vec(),
            files,
            dirs,
        };
        self.get(source, || super::queue::matching(dir, globs, files, dirs))
    }

    fn get(
        &self,
        source: Source,
        read: impl FnOnce() -> Result<Vec<String>, String>,
    ) -> Result<Vec<String>, String> {
        if let Some(rows) = self.seen.borrow().get(&source) {
            return Ok(rows.clone());
        }
        if self.replay_only.get() {
            return Err(format!(
                "{} was not read before the queue was locked: its name changed since \
                 (it depends on $(Cluster) or a random value, and other submissions \
                 took the cluster id meanwhile); submit again",
                source.describe()
            ));
        }
        let rows = read()?;
        self.seen.borrow_mut().insert(source, rows.clone());
        Ok(rows)
    }
}

fn non_blank(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_runs_once_and_replay_only_answers_from_memory() {
        let dir = tempfile::tempdir().unwrap();
        let inputs = Inputs::default();
        let counter = dir.path().join("runs");
        let cmd = format!("echo x >> '{}'; printf 'a\\n\\nb\\n'", counter.display());
        assert_eq!(inputs.command_lines(&cmd, dir.path()).unwrap(), ["a", "b"]);
        assert_eq!(inputs.command_lines(&cmd, dir.path()).unwrap(), ["a", "b"]);
        inputs.replay_only();
        assert_eq!(inputs.command_lines(&cmd, dir.path()).unwrap(), ["a", "b"]);
        let runs = std::fs::read_to_string(&counter).unwrap();
        assert_eq!(runs.lines().count(), 1, "the command ran once");
        let e = inputs.command_lines("echo other", dir.path()).unwrap_err();
        assert!(
            e.starts_with(
                "the queue item command 'echo other' was not read before the queue was locked"
            ),
            "{e}"
        );
        let e = inputs.file_lines(&dir.path().join("items")).unwrap_err();
        assert!(e.contains("items was not read before"), "{e}");
    }

    #[test]
    fn a_failed_read_is_not_remembered() {
        let dir = tempfile::tempdir().unwrap();
        let inputs = Inputs::default();
        let items = dir.path().join("items");
        assert!(inputs.file_lines(&items).is_err());
        std::fs::write(&items, "one\n").unwrap();
        assert_eq!(inputs.file_lines(&items).unwrap(), ["one"]);
    }
}
