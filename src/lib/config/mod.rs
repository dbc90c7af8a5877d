//! The HTCondor configuration language, and tern's configuration.
//!
//! Files are read in order: `$TERN_CONFIG` if set, else `/etc/tern/tern_config`
//! if it exists; then the files of `LOCAL_CONFIG_DIR` (sorted, as HTCondor
//! reads them first) and `LOCAL_CONFIG_FILE` (left to right, or a command
//! when it ends in `|`); then `$XDG_CONFIG_HOME/tern/tern_config`;
//! finally the `_TERN_<KNOB>` environment variables. Defaults come from the
//! knob table ([`knobs`]). Values are stored raw and expanded when looked up,
//! so a later definition of a referenced macro wins; a self-reference
//! (`A = $(A) more`) is expanded at once.
//!
//! A privileged (set-group-id) tool reads only what root wrote: the system
//! file [`SYSTEM_CONFIG`] and what it names (`LOCAL_CONFIG_DIR`,
//! `LOCAL_CONFIG_FILE`, includes), each of them root-owned, a regular file
//! (a directory for `LOCAL_CONFIG_DIR`), writable by nobody else, and never
//! through a symbolic link; without the system file it refuses to run.
//! `TERN_CONFIG`, the XDG file and `_TERN_*` are ignored; `$ENV()` sees only HOME, the real user's from the password
//! database (so SPOOL's default still names that user's own directory);
//! commands must be absolute paths and run with the group given up, an
//! empty environment and `/` as their directory.

pub mod conditions;
pub mod knobs;
pub mod macros;
pub mod reader;

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use conditions::{CondKw, CondStack, cond_keyword, condition, parse_bool};
use macros::{Expander, MacroSource};
use reader::{Item, Logical, Origin};

/// The HTCondor version whose configuration language tern reads; `if version`
/// compares against it.
pub const COMPAT_VERSION: (u32, u32, u32) = (24, 0, 24);

/// Includes and nested command output may go this deep.
const MAX_INCLUDE_DEPTH: usize = 20;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A problem at a place in a file.
    #[error("{origin}: {msg}")]
    At { origin: Origin, msg: String },
    /// A file that cannot be read.
    #[error("cannot read configuration file {path}: {msg}")]
    Unreadable { path: String, msg: String },
    /// A configuration file a privileged tool may not trust.
    #[error("refusing configuration file {path}: {problem}")]
    Untrusted { path: String, problem: String },
    /// Expansion of a value failed.
    #[error("expanding {name}: {msg}")]
    Expand { name: String, msg: String },
}

/// Where a value was set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ValueSource {
    Default,
    File(Origin),
    Environment(String),
}

impl std::fmt::Display for ValueSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ValueSource::Default => write!(f, "<Default>"),
            ValueSource::File(o) => write!(f, "{}, line {}", o.file, o.line),
            ValueSource::Environment(v) => write!(f, "environment variable {v}"),
        }
    }
}

/// One knob's value. A default borrows the knob table's static text, so
/// the defaults every tool starts with cost one allocation a knob (its
/// lower-cased key), not three.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The name as first written.
    pub name: Cow<'static, str>,
    pub raw: Cow<'static, str>,
    pub source: ValueSource,
}

/// Knob `k`'s default, as an entry that borrows the knob table's text.
fn default_entry(k: &'static knobs::Knob) -> Entry {
    Entry {
        name: Cow::Borrowed(k.name),
        raw: Cow::Borrowed(k.default),
        source: ValueSource::Default,
    }
}

/// The system configuration file, fixed at build time
/// (`TERN_SYSTEM_CONFIG`): the only one a privileged tool reads.
pub const SYSTEM_CONFIG: &str = match option_env!("TERN_SYSTEM_CONFIG") {
    Some(p) => p,
    None => "/etc/tern/tern_config",
};

/// What the loader reads from the process environment; replaceable in tests.
pub struct Environment {
    pub vars: HashMap<String, String>,
    /// `/etc/tern/tern_config`, used when `TERN_CONFIG` is unset.
    pub system_config: PathBuf,
    /// `Some(uid)` for a privileged process: read only the system
    /// configuration, every file owned by `uid` (root) and checked, and no
    /// variable but `vars` (see the module documentation).
    pub trusted_owner: Option<u32>,
}

impl Environment {
    pub fn from_process() -> Environment {
        if crate::sys::privilege::is_privileged() {
            return Environment::privileged();
        }
        Environment {
            vars: std::env::vars().collect(),
            system_config: PathBuf::from(SYSTEM_CONFIG),
            trusted_owner: None,
        }
    }

    /// A privileged process's: the system file, root's files only, and
    /// HOME from the password database as the one variable.
    pub fn privileged() -> Environment {
        let mut vars = HashMap::new();
        if let Some(h) = crate::sys::privilege::real_home() {
            vars.insert("HOME".to_string(), h);
        }
        Environment {
            vars,
            system_config: PathBuf::from(SYSTEM_CONFIG),
            trusted_owner: Some(0),
        }
    }
}

/// A loaded configuration.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// What was set (files, the environment, the detected values), by
    /// lower-cased name. Fx, not std's SipHash: the names come from the
    /// configuration, not from an adversary.
    table: rustc_hash::FxHashMap<String, Entry>,
    /// Whether a knob nothing set has its default from the knob table
    /// (looked up there when asked for, so that a tool does not build an
    /// entry for each of several hundred knobs at every start).
    knob_defaults: bool,
    /// Whether any `TOOL.NAME` entry is set: a lookup tries that name
    /// first only then.
    tool_scoped: bool,
    files: Vec<String>,
    warnings: Vec<String>,
    /// The environment `$ENV()` reads; the process's when `None`.
    env: Option<HashMap<String, String>>,
    /// The owner every file must have (privileged mode), see [`Environment`].
    trusted_owner: Option<u32>,
}

impl MacroSource for Config {
    fn raw(&self, name: &str) -> Option<String> {
        self.lookup_entry(name).map(|e| e.raw.to_string())
    }
    fn env(&self, var: &str) -> Option<String> {
        match &self.env {
            Some(vars) => vars.get(var).cloned(),
            None => std::env::var(var).ok(),
        }
    }
}

impl Config {
    /// The defaults alone.
    pub fn defaults() -> Config {
        let mut c = Config {
            knob_defaults: true,
            ..Config::default()
        };
        let (arch, host) = detected();
        for (n, v) in [("DETECTED_ARCH", arch), ("DETECTED_HOSTNAME", host)] {
            c.table.insert(
                n.to_ascii_lowercase(),
                Entry {
                    name: Cow::Borrowed(n),
                    raw: Cow::Owned(v),
                    source: ValueSource::Default,
                },
            );
        }
        c
    }

    /// Loads the configuration the way every tool does.
    /// The rules for acting as a job's owner
    /// ([`crate::sys::identity::OwnerRules`]) and whether to sync to disk
    /// (CONDOR_FSYNC, [`crate::sys::fs::set_fsync`]) are set from it, for
    /// the whole process, as HTCondor's `config()` does.
    pub fn load() -> Result<Config, ConfigError> {
        let c = Config::load_with(&Environment::from_process())?;
        crate::sys::identity::set_owner_rules(c.owner_rules()?);
        crate::sys::fs::set_fsync(c.get_bool("CONDOR_FSYNC", true)?);
        Ok(c)
    }

    /// SHARED_QUEUE, ALLOW_ROOT_JOBS, MIN_OWNER_UID, the queue's database
    /// (whose owner says whether a personal queue is root's own) and, in
    /// shared mode, the group of SPOOL.
    pub fn owner_rules(&self) -> Result<crate::sys::identity::OwnerRules, ConfigError> {
        use std::os::unix::fs::MetadataExt;
        let shared = self.get_bool("SHARED_QUEUE", false)?;
        let spool = self.get("SPOOL")?.filter(|s| !s.is_empty());
        let spool_gid = match &spool {
            Some(s) if shared => std::fs::metadata(s).ok().map(|m| m.gid()),
            _ => None,
        };
        Ok(crate::sys::identity::OwnerRules {
            shared,
            allow_root: self.get_bool("ALLOW_ROOT_JOBS", false)?,
            min_uid: self
                .get_int("MIN_OWNER_UID", 1000)?
                .clamp(0, u32::MAX.into()) as u32,
            spool_gid,
            // The name queue::db_path gives it (config sits below queue).
            queue_db: spool.map(|s| PathBuf::from(s).join("queue.db")),
        })
    }

    /// Loads with an explicit environment (tests).
    pub fn load_with(env: &Environment) -> Result<Config, ConfigError> {
        let mut c = Config::defaults();
        c.env = Some(env.vars.clone());
        c.trusted_owner = env.trusted_owner;
        let privileged = env.trusted_owner.is_some();
        // Without root's configuration a set-group-id tool would run on
        // defaults (a personal SPOOL its user can point anywhere): refuse.
        if privileged && std::fs::symlink_metadata(&env.system_config).is_err() {
            return Err(ConfigError::Untrusted {
                path: env.system_config.display().to_string(),
                problem: "it is missing, and a set-group-id tern reads no other configuration \
                          (reinstall tern's package)"
                    .into(),
            });
        }
        let main = match env.vars.get("TERN_CONFIG") {
            Some(p) if !p.is_empty() && !privileged => Some(PathBuf::from(p)),
            // symlink_metadata: a dangling link is there, and refused.
            _ => std::fs::symlink_metadata(&env.system_config)
                .is_ok()
                .then(|| env.system_config.clone()),
        };
        if let Some(p) = main {
            c.read_file(&p, None, &mut Vec::new())?;
        }
        // HTCondor's order: LOCAL_CONFIG_DIR, then LOCAL_CONFIG_FILE, and the
        // directories again if the files changed LOCAL_CONFIG_DIR.
        let dirs = c.list_value("LOCAL_CONFIG_DIR")?;
        for d in &dirs {
            c.read_dir(Path::new(d))?;
        }
        let files = c.get("LOCAL_CONFIG_FILE")?.unwrap_or_default();
        if let Some(cmd) = files.trim().strip_suffix('|') {
            c.read_command(cmd.trim(), None, false, &mut Vec::new())?;
        } else {
            for f in c.list_value("LOCAL_CONFIG_FILE")? {
                c.read_file(Path::new(&f), None, &mut Vec::new())?;
            }
        }
        let dirs_after = c.list_value("LOCAL_CONFIG_DIR")?;
        if dirs_after != dirs {
            for d in dirs_after.iter().filter(|d| !dirs.contains(d)) {
                c.read_dir(Path::new(d))?;
            }
        }
        if privileged {
            return Ok(c);
        }
        let xdg = env
            .vars
            .get("XDG_CONFIG_HOME")
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .or_else(|| env.vars.get("HOME").map(|h| Path::new(h).join(".config")));
        if let Some(x) = xdg {
            let user = x.join("tern").join("tern_config");
            if user.exists() {
                c.read_file(&user, None, &mut Vec::new())?;
            }
        }
        let mut overrides: Vec<(&String, &String)> = env
            .vars
            .iter()
            .filter(|(k, _)| k.starts_with("_TERN_") || k.starts_with("_tern_"))
            .collect();
        overrides.sort();
        for (k, v) in overrides {
            let name = &k[6..];
            if reader::is_macro_name(name) {
                c.set(name, v, ValueSource::Environment(k.clone()));
            }
        }
        Ok(c)
    }

    /// The files read, in order.
    pub fn files(&self) -> &[String] {
        &self.files
    }

    /// Warnings met while reading (obsolete syntax and the like).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn set(&mut self, name: &str, raw: &str, source: ValueSource) {
        let key = name.to_ascii_lowercase();
        self.tool_scoped |= key.starts_with("tool.");
        let first = self
            .table
            .get(&key)
            .map(|e| e.name.clone())
            .or_else(|| self.knob_default(&key).map(|e| e.name))
            .unwrap_or_else(|| Cow::Owned(name.to_string()));
        self.table.insert(
            key,
            Entry {
                name: first,
                raw: Cow::Owned(raw.to_string()),
                source,
            },
        );
    }

    /// The entry for `name`, trying `TOOL.NAME` first as HTCondor's tools do.
    pub fn lookup_entry(&self, name: &str) -> Option<Cow<'_, Entry>> {
        let key = name.to_ascii_lowercase();
        if self.tool_scoped
            && !key.contains('.')
            && let Some(e) = self.table.get(&format!("tool.{key}"))
        {
            return Some(Cow::Borrowed(e));
        }
        match self.table.get(&key) {
            Some(e) => Some(Cow::Borrowed(e)),
            None => self.knob_default(&key).map(Cow::Owned),
        }
    }

    /// The knob table's default of `name` (any case), as an entry that
    /// borrows the table's text, when this configuration has defaults.
    fn knob_default(&self, name: &str) -> Option<Entry> {
        if !self.knob_defaults {
            return None;
        }
        knobs::knob(name).map(default_entry)
    }

    /// The expanded value of `name`; `None` when undefined or empty.
    pub fn get(&self, name: &str) -> Result<Option<String>, ConfigError> {
        let Some(e) = self.lookup_entry(name) else {
            return Ok(None);
        };
        let v = self.expand(&e.raw).map_err(|m| ConfigError::Expand {
            name: name.to_string(),
            msg: m.0,
        })?;
        Ok(if v.trim().is_empty() {
            None
        } else {
            Some(v.trim().to_string())
        })
    }

    /// Expands `text` against this configuration.
    pub fn expand(&self, text: &str) -> Result<String, macros::MacroError> {
        Expander::new(self).expand(text)
    }

    /// A list knob: items separated by commas and/or white space.
    pub fn list_value(&self, name: &str) -> Result<Vec<String>, ConfigError> {
        Ok(self
            .get(name)?
            .map(|v| {
                v.split([',', ' ', '\t', '\n'])
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default())
    }

    /// A boolean knob; `default` when undefined. A value that is not a
    /// boolean is an error naming the knob.
    pub fn get_bool(&self, name: &str, default: bool) -> Result<bool, ConfigError> {
        match self.get(name)? {
            None => Ok(default),
            Some(v) => parse_bool(&v).ok_or_else(|| ConfigError::Expand {
                name: name.to_string(),
                msg: format!("'{v}' is not a boolean (true/false)"),
            }),
        }
    }

    /// An integer knob; `default` when undefined. A value that is not an
    /// integer is an error naming the knob.
    pub fn get_int(&self, name: &str, default: i64) -> Result<i64, ConfigError> {
        match self.get(name)? {
            None => Ok(default),
            Some(v) => v.parse::<i64>().map_err(|_| ConfigError::Expand {
                name: name.to_string(),
                msg: format!("'{v}' is not an integer"),
            }),
        }
    }

    /// An integer knob that may be unset (`None`), e.g. NUM_CPUS.
    pub fn get_int_opt(&self, name: &str) -> Result<Option<i64>, ConfigError> {
        match self.get(name)? {
            None => Ok(None),
            Some(_) => self.get_int(name, 0).map(Some),
        }
    }

    /// A ClassAd-expression knob; `default` (itself an expression) when
    /// undefined. A value that does not parse is an error naming the knob.
    pub fn get_expr(&self, name: &str, default: &str) -> Result<crate::classad::Expr, ConfigError> {
        let text = self.get(name)?.unwrap_or_else(|| default.to_string());
        crate::classad::parse_expr(&text).map_err(|e| ConfigError::Expand {
            name: name.to_string(),
            msg: format!("'{text}' is not a ClassAd expression: {e}"),
        })
    }

    /// Every entry, sorted by name (for `-dump`).
    pub fn entries(&self) -> Vec<Cow<'_, Entry>> {
        let mut v: Vec<Cow<'_, Entry>> = self
            .table
            .values()
            .filter(|e| !e.name.to_ascii_uppercase().starts_with("DETECTED_"))
            .map(Cow::Borrowed)
            .collect();
        if self.knob_defaults {
            let unset = knobs::KNOBS
                .iter()
                .filter(|k| !self.table.contains_key(&k.name.to_ascii_lowercase()))
                .map(default_entry);
            v.extend(unset.map(Cow::Owned));
        }
        v.sort_by_key(|e| e.name.to_ascii_lowercase());
        v
    }

    fn read_dir(&mut self, dir: &Path) -> Result<(), ConfigError> {
        let exclude = self.get("LOCAL_CONFIG_DIR_EXCLUDE_REGEXP")?;
        let re = match exclude {
            Some(r) => Some(regex::Regex::new(&r).map_err(|e| ConfigError::Expand {
                name: "LOCAL_CONFIG_DIR_EXCLUDE_REGEXP".into(),
                msg: e.to_string(),
            })?),
            None => None,
        };
        if let Some(owner) = self.trusted_owner {
            trusted_open(dir, owner, true)?;
        }
        let rd = std::fs::read_dir(dir).map_err(|e| ConfigError::Unreadable {
            path: dir.display().to_string(),
            msg: e.to_string(),
        })?;
        let mut names: Vec<PathBuf> = rd
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            // A privileged reader refuses what is not a regular file
            // (trusted_open says why) rather than skipping it unseen.
            .filter(|p| self.trusted_owner.is_some() || p.is_file())
            .filter(|p| {
                let n = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                !re.as_ref().is_some_and(|r| r.is_match(&n))
            })
            .collect();
        names.sort();
        for p in names {
            self.read_file(&p, None, &mut Vec::new())?;
        }
        Ok(())
    }

    /// Reads one file; `from` is the include statement that named it.
    fn read_file(
        &mut self,
        path: &Path,
        from: Option<&Origin>,
        stack: &mut Vec<PathBuf>,
    ) -> Result<(), ConfigError> {
        let canon = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let shown = path.display().to_string();
        if stack.contains(&canon) {
            let o = from.cloned().unwrap_or(Origin {
                file: shown.clone(),
                line: 0,
            });
            return Err(ConfigError::At {
                origin: o,
                msg: format!("include loop: {shown} includes itself"),
            });
        }
        if stack.len() >= MAX_INCLUDE_DEPTH {
            let o = from.cloned().unwrap_or(Origin {
                file: shown.clone(),
                line: 0,
            });
            return Err(ConfigError::At {
                origin: o,
                msg: format!("includes nested more than {MAX_INCLUDE_DEPTH} deep"),
            });
        }
        let text = match self.trusted_owner {
            Some(owner) => trusted_open(path, owner, false).and_then(|f| {
                std::io::read_to_string(f).map_err(|e| ConfigError::Unreadable {
                    path: shown.clone(),
                    msg: e.to_string(),
                })
            })?,
            None => std::fs::read_to_string(path).map_err(|e| match from {
                Some(o) => ConfigError::At {
                    origin: o.clone(),
                    msg: format!("cannot read included file {shown}: {e}"),
                },
                None => ConfigError::Unreadable {
                    path: shown.clone(),
                    msg: e.to_string(),
                },
            })?,
        };
        self.files.push(shown.clone());
        stack.push(canon);
        let r = self.parse_text(&text, &shown, stack);
        stack.pop();
        r
    }

    fn read_command(
        &mut self,
        cmd: &str,
        from: Option<&Origin>,
        ifexist: bool,
        stack: &mut Vec<PathBuf>,
    ) -> Result<(), ConfigError> {
        let where_ = || {
            from.cloned().unwrap_or(Origin {
                file: format!("command '{cmd}'"),
                line: 0,
            })
        };
        let mut command = std::process::Command::new("/bin/sh");
        command
            .arg("-c")
            .arg(cmd)
            .stderr(std::process::Stdio::inherit());
        crate::sys::privilege::child_drops_group(&mut command);
        if self.trusted_owner.is_some() {
            if !cmd.starts_with('/') {
                return Err(ConfigError::At {
                    origin: where_(),
                    msg: format!(
                        "command '{cmd}': a set-group-id tool runs configuration commands \
                         only by absolute path"
                    ),
                });
            }
            command.env_clear().current_dir("/");
        }
        let out = command.output().map_err(|e| ConfigError::At {
            origin: where_(),
            msg: format!("cannot run '{cmd}': {e}"),
        })?;
        if !out.status.success() {
            if ifexist {
                return Ok(());
            }
            return Err(ConfigError::At {
                origin: where_(),
                msg: format!("command '{cmd}' failed: {}", out.status),
            });
        }
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let name = format!("command '{cmd}'");
        self.files.push(name.clone());
        self.parse_text(&text, &name, stack)
    }

    /// Parses configuration text as if it were the file `file`.
    pub fn parse_str(&mut self, text: &str, file: &str) -> Result<(), ConfigError> {
        self.parse_text(text, file, &mut Vec::new())
    }

    fn parse_text(
        &mut self,
        text: &str,
        file: &str,
        stack: &mut Vec<PathBuf>,
    ) -> Result<(), ConfigError> {
        let items = reader::logical_lines(text).map_err(|e| ConfigError::At {
            origin: Origin {
                file: file.to_string(),
                line: e.line,
            },
            msg: e.msg,
        })?;
        let mut conds = CondStack::default();
        for Item { line, item } in items {
            let origin = Origin {
                file: file.to_string(),
                line,
            };
            let at = |msg: String| ConfigError::At {
                origin: origin.clone(),
                msg,
            };
            match item {
                Logical::Here { name, value } => {
                    if conds.active() {
                        let v = self.self_reference(&name, &value);
                        self.set(&name, &v, ValueSource::File(origin.clone()));
                    }
                }
                Logical::Text(t) => {
                    if let Some(kind) = cond_keyword(&t) {
                        let r = match kind {
                            CondKw::If(c) => {
                                let v = if conds.active() {
                                    condition(c, self).map_err(at)?
                                } else {
                                    false
                                };
                                conds.push_if(v);
                                Ok(())
                            }
                            CondKw::Elif(c) => {
                                let live = conds.elif_needs_test();
                                let v = if live == Some(true) {
                                    condition(c, self).map_err(at)?
                                } else {
                                    false
                                };
                                conds.elif(v)
                            }
                            CondKw::Else(rest) => {
                                if !rest.is_empty() {
                                    return Err(at(format!(
                                        "unexpected text after 'else': '{rest}'"
                                    )));
                                }
                                conds.else_()
                            }
                            CondKw::Endif => conds.endif(),
                        };
                        r.map_err(at)?;
                        continue;
                    }
                    if !conds.active() {
                        continue;
                    }
                    self.statement(&t, &origin, stack)?;
                }
            }
        }
        if conds.depth() > 0 {
            return Err(ConfigError::At {
                origin: Origin {
                    file: file.to_string(),
                    line: conds.open_line(text),
                },
                msg: "'if' without 'endif' before the end of the file".into(),
            });
        }
        Ok(())
    }

    fn statement(
        &mut self,
        t: &str,
        origin: &Origin,
        stack: &mut Vec<PathBuf>,
    ) -> Result<(), ConfigError> {
        let at = |msg: String| ConfigError::At {
            origin: origin.clone(),
            msg,
        };
        if let Some(inc) = parse_include(t) {
            let target = self.expand(inc.target.trim()).map_err(|e| at(e.0))?;
            let target = target.trim();
            if target.is_empty() {
                return Err(at("'include' names no file".into()));
            }
            if inc.command || target.ends_with('|') {
                let cmd = target.strip_suffix('|').unwrap_or(target).trim();
                return self.read_command(cmd, Some(origin), inc.ifexist, stack);
            }
            // Relative to the current directory, as HTCondor resolves it.
            let p = Path::new(target).to_path_buf();
            if inc.ifexist && !p.exists() {
                return Ok(());
            }
            return self.read_file(&p, Some(origin), stack);
        }
        let lower = t.to_ascii_lowercase();
        for (kw, is_err) in [("warning", false), ("error", true)] {
            if let Some(rest) = lower.strip_prefix(kw)
                && rest.trim_start().starts_with(':')
            {
                let msg = t[t.find(':').unwrap_or(0) + 1..].trim();
                let msg = self.expand(msg).map_err(|e| at(e.0))?;
                if is_err {
                    return Err(at(format!("error: {msg}")));
                }
                self.warnings.push(format!("{origin}: warning: {msg}"));
                return Ok(());
            }
        }
        if (lower.starts_with("use ") || lower.starts_with("use:") || lower == "use")
            && !t.contains('=')
        {
            return Err(at(format!(
                "'{t}': tern has no HTCondor configuration templates (use ROLE/FEATURE/POLICY); \
                     set the knobs you need directly"
            )));
        }
        // NAME = value, or the obsolete NAME : value.
        let eq = t.find('=');
        let colon = t.find(':');
        let (pos, obsolete) = match (eq, colon) {
            (Some(e), Some(c)) if c < e => (c, true),
            (Some(e), _) => (e, false),
            (None, Some(c)) => (c, true),
            (None, None) => {
                if t.starts_with('[') && !t.contains(char::is_whitespace) {
                    return Ok(());
                }
                return Err(at(format!("expected 'NAME = value', found '{t}'")));
            }
        };
        let name = t[..pos].trim();
        if !reader::is_macro_name(name) || name.contains('/') {
            return Err(at(format!(
                "'{name}' is not a valid configuration name (letters, digits, '_' and '.')"
            )));
        }
        if obsolete {
            self.warnings.push(format!(
                "{origin}: warning: ':' as assignment is obsolete; use '='"
            ));
        }
        let value = t[pos + 1..].trim();
        let v = self.self_reference(name, value);
        self.set(name, &v, ValueSource::File(origin.clone()));
        Ok(())
    }

    /// Replaces `$(NAME)` and `$(NAME:default)` inside NAME's own new value by
    /// the current raw value.
    fn self_reference(&self, name: &str, value: &str) -> String {
        let current = self.lookup_entry(name).map(|e| e.raw.to_string());
        let mut out = String::new();
        let mut rest = value;
        while let Some(p) = rest.find("$(") {
            out.push_str(&rest[..p]);
            let after = &rest[p + 2..];
            let end = after.find(')').unwrap_or(after.len());
            let inner = &after[..end];
            let (n, d) = match inner.find(':') {
                Some(c) => (&inner[..c], Some(&inner[c + 1..])),
                None => (inner, None),
            };
            if n.trim().eq_ignore_ascii_case(name) && end < after.len() {
                match (&current, d) {
                    (Some(c), _) => out.push_str(c),
                    (None, Some(d)) => out.push_str(d),
                    (None, None) => {}
                }
                rest = &after[end + 1..];
            } else {
                out.push_str("$(");
                rest = after;
            }
        }
        out.push_str(rest);
        out
    }
}

/// Opens a configuration file (or, with `dir`, directory) for a privileged
/// reader: never through a symbolic link, never blocking on a FIFO, and
/// only when it is a regular file (a directory), owned by `owner` and not
/// writable by group or others. The error names the file and the problem.
fn trusted_open(path: &Path, owner: u32, dir: bool) -> Result<std::fs::File, ConfigError> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let refuse = |problem: String| ConfigError::Untrusted {
        path: path.display().to_string(),
        problem,
    };
    let mut flags = libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
    if dir {
        flags |= libc::O_DIRECTORY;
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => refuse("it is a symbolic link".into()),
            Some(libc::ENOTDIR) if dir => refuse("it is not a directory".into()),
            _ => refuse(crate::sys::io_error_text(&e)),
        })?;
    let m = f
        .metadata()
        .map_err(|e| refuse(crate::sys::io_error_text(&e)))?;
    let kind_ok = if dir {
        m.file_type().is_dir()
    } else {
        m.file_type().is_file()
    };
    if !kind_ok {
        return Err(refuse(if dir {
            "it is not a directory".into()
        } else {
            "it is not a regular file".into()
        }));
    }
    if m.uid() != owner {
        return Err(refuse(format!(
            "it is owned by uid {}, not {}",
            m.uid(),
            if owner == 0 {
                "root".to_string()
            } else {
                format!("uid {owner}")
            }
        )));
    }
    if m.mode() & 0o022 != 0 {
        return Err(refuse(format!(
            "it is writable by group or others (mode {:04o})",
            m.mode() & 0o7777
        )));
    }
    Ok(f)
}

struct Include<'a> {
    ifexist: bool,
    command: bool,
    target: &'a str,
}

/// `include [ifexist] [command] [into FILE] : target` (also `@include`).
fn parse_include(t: &str) -> Option<Include<'_>> {
    let body = t.strip_prefix('@').unwrap_or(t);
    let rest = reader::strip_prefix_ci(body, "include")?;
    let colon = rest.find(':')?;
    let words = &rest[..colon];
    if !(words.is_empty() || words.starts_with(char::is_whitespace)) || rest[..colon].contains('=')
    {
        return None;
    }
    let mut inc = Include {
        ifexist: false,
        command: false,
        target: &rest[colon + 1..],
    };
    let mut it = words.split_whitespace();
    while let Some(w) = it.next() {
        match w.to_ascii_lowercase().as_str() {
            "ifexist" => inc.ifexist = true,
            "command" => inc.command = true,
            "into" => {
                it.next()?;
            }
            _ => return None,
        }
    }
    Some(inc)
}

/// The detected architecture and host name.
fn detected() -> (String, String) {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "X86_64",
        "x86" => "INTEL",
        "aarch64" => "aarch64",
        "powerpc64" => "PPC64",
        other => other,
    }
    .to_string();
    (arch, crate::sys::hostname().to_string())
}

#[cfg(test)]
mod tests;
