//! Running a parsed description: its statements in order, each `queue`
//! statement expanded with the macros in force there into item rows, and a
//! job ad per row from [`super::job::build`], kept as one cluster ad plus
//! each proc's difference from it. Also the macros condor_submit
//! predefines, and the warning for lines nothing read.

use std::collections::HashSet;

use rustc_hash::FxHashMap as HashMap;

use super::inputs::Inputs;
use super::queue::{self, ItemSource, QueueSpec};
use super::{
    COMMANDS, Cluster, Kind, MacroDef, PROC_VARS, QueueStmt, SubmitError, SubmitFile,
    SubmitOptions, aliases_of, collect_refs, command_of_alias, job,
};
use crate::classad::{self, ClassAd, Evaluator, Expr, Scope, Value};
use crate::config::Config;
use crate::config::macros::{Expander, MacroSource};
use crate::config::reader::Origin;

/// One proc's view of the macros: queue variables, then the file's macros
/// as of the queue statement, then the proc's own numbers, then predefined
/// macros, then configuration.
///
/// condor_submit's queue variables are "live" entries of its macro table,
/// so they hide a definition in the file; `$(Process)`, `$(Step)`,
/// `$(Row)`, `$(ItemIndex)` and the other predefined macros are only
/// defaults under the table (submit_utils.cpp, `SubmitMacroDefaults`), so a
/// file that defines `Step = ...` gets its own value.
struct ProcMacros<'a> {
    table: &'a HashMap<String, MacroDef>,
    vars: &'a HashMap<String, String>,
    /// Process, ProcId, Step, Row and ItemIndex of this proc.
    numbers: &'a HashMap<String, String>,
    predefined: &'a HashMap<String, String>,
    config: &'a Config,
}

impl MacroSource for ProcMacros<'_> {
    fn env_missing(&self) -> &'static str {
        "UNDEFINED"
    }
    fn raw(&self, name: &str) -> Option<String> {
        let key = name.to_ascii_lowercase();
        if let Some(v) = self.vars.get(&key) {
            return Some(v.clone());
        }
        if let Some(d) = self.table.get(&key) {
            return Some(d.raw.clone());
        }
        if let Some(v) = self.numbers.get(&key) {
            return Some(v.clone());
        }
        if let Some(v) = self.predefined.get(&key) {
            return Some(v.clone());
        }
        self.config.raw(name)
    }
}

struct ProcCommands<'a> {
    m: ProcMacros<'a>,
    attrs: &'a [(String, Option<String>, Origin)],
    queue_origin: Origin,
}

impl job::Commands for ProcCommands<'_> {
    fn command(&mut self, name: &str) -> Result<Option<(String, Origin)>, SubmitError> {
        let lower = name.to_ascii_lowercase();
        // A queue variable may be the command itself (`queue arguments from
        // list`): condor_submit's item values are live macros that hide the
        // file's. A command not given is looked up under its alias.
        let lookup = |key: &str| -> Option<MacroDef> {
            if let Some(v) = self.m.vars.get(key) {
                return Some(MacroDef {
                    raw: v.clone(),
                    origin: self.queue_origin.clone(),
                });
            }
            self.m.table.get(key).cloned()
        };
        let found = lookup(&lower).or_else(|| aliases_of(&lower).find_map(lookup));
        let Some(def) = found else {
            return Ok(None);
        };
        let v = Expander::new(&self.m)
            .expand(&def.raw)
            .map_err(|e| SubmitError::At {
                origin: def.origin.clone(),
                msg: e.0,
            })?;
        Ok(Some((v.trim().to_string(), def.origin.clone())))
    }
    fn raw_attrs(&mut self) -> Result<Vec<(String, Option<String>, Origin)>, SubmitError> {
        let mut out = Vec::new();
        for (n, v, o) in self.attrs {
            let v = match v {
                Some(raw) => {
                    Some(
                        Expander::new(&self.m)
                            .expand(raw)
                            .map_err(|e| SubmitError::At {
                                origin: o.clone(),
                                msg: e.0,
                            })?,
                    )
                }
                None => None,
            };
            out.push((n.clone(), v, o.clone()));
        }
        Ok(out)
    }
    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.m.table.keys().cloned().collect();
        names.extend(
            self.m
                .vars
                .keys()
                .filter(|k| !self.m.table.contains_key(*k))
                .cloned(),
        );
        names
    }
    fn queue_origin(&self) -> Origin {
        self.queue_origin.clone()
    }
}

/// Turns a parsed description into one cluster: the statements run in
/// order, macro definitions and `+Attr` lines accumulate, and each `queue`
/// statement makes its procs with what is in force there.
pub fn materialize(
    file: &SubmitFile,
    config: &Config,
    opts: &SubmitOptions,
) -> Result<Cluster, SubmitError> {
    materialize_with(file, config, opts, &Inputs::default())
}

/// [`materialize`] with the external inputs (item files and commands,
/// `matching`) read through `inputs`, which remembers them: a second
/// build with the same `inputs` reads and runs nothing again, and one
/// after [`Inputs::replay_only`] never does.
pub fn materialize_with(
    file: &SubmitFile,
    config: &Config,
    opts: &SubmitOptions,
    inputs: &Inputs,
) -> Result<Cluster, SubmitError> {
    let site = Site::from_config(config);
    let mut m = Materializer {
        file,
        config,
        opts,
        inputs,
        predefined: predefined(file, config, opts, &site.arch, &site.opsys),
        site,
        table: HashMap::default(),
        attrs: Vec::new(),
        cluster_ad: None,
        procs: Vec::new(),
        used: file.condition_refs.clone(),
        skip_file_checks: false,
    };
    let mut saw_queue = false;
    for st in &file.stmts {
        match &st.kind {
            Kind::Set { name, value } => {
                m.table.insert(
                    name.to_ascii_lowercase(),
                    MacroDef {
                        raw: value.clone(),
                        origin: st.origin.clone(),
                    },
                );
            }
            Kind::Attr { name, value } => {
                // condor_submit keeps `+Attr`/`MY.Attr` in its macro set
                // as `MY.Attr` too, so `$(MY.Attr)` and `$F(MY.Attr)` read
                // it (dask-jobqueue names its workers' output that way).
                if let Some(v) = value {
                    m.table.insert(
                        format!("my.{}", name.to_ascii_lowercase()),
                        MacroDef {
                            raw: v.clone(),
                            origin: st.origin.clone(),
                        },
                    );
                }
                m.attrs.retain(|(n, _, _)| !n.eq_ignore_ascii_case(name));
                m.attrs
                    .push((name.clone(), value.clone(), st.origin.clone()));
            }
            Kind::Queue(stmt) => {
                saw_queue = true;
                m.queue(stmt, &st.origin)?;
            }
        }
    }
    if !saw_queue {
        return Err(SubmitError::File {
            file: file.name.clone(),
            msg: format!(
                "\"{}\" doesn't contain any \"queue\" commands -- no jobs queued",
                file.name
            ),
        });
    }
    // `queue 0` or an empty item list (`queue x in ()`, an empty file)
    // queues nothing, which condor_submit says instead of the unused-line
    // warnings (nothing was built to use them).
    let warnings = if m.procs.is_empty() {
        vec![format!(
            "WARNING: \"{}\" has only empty \"queue\" commands -- no jobs queued",
            file.name
        )]
    } else {
        unused_warnings(file, &m.used)
    };
    Ok(Cluster {
        cluster_ad: m.cluster_ad.unwrap_or_default(),
        procs: m.procs,
        warnings,
        skip_file_checks: m.skip_file_checks,
    })
}

/// What the configuration says about the submit machine, for every proc.
struct Site {
    arch: String,
    opsys: String,
    fs_domain: String,
    uid_domain: String,
    schedd_interval: i64,
    version: String,
    append_requirements: Option<String>,
    append_req_vanilla: Option<String>,
    default_should_transfer: Option<String>,
}

impl Site {
    fn from_config(config: &Config) -> Site {
        let cfg = |n: &str| config.get(n).ok().flatten();
        Site {
            arch: cfg("ARCH").unwrap_or_else(|| "X86_64".into()),
            opsys: cfg("OPSYS").unwrap_or_else(|| "LINUX".into()),
            fs_domain: cfg("FILESYSTEM_DOMAIN").unwrap_or_else(|| "localhost".into()),
            uid_domain: cfg("UID_DOMAIN").unwrap_or_else(|| "localhost".into()),
            schedd_interval: cfg("SCHEDD_INTERVAL")
                .and_then(|s| s.parse().ok())
                .unwrap_or(60),
            version: format!("tern {}", env!("CARGO_PKG_VERSION")),
            append_requirements: cfg("APPEND_REQUIREMENTS"),
            append_req_vanilla: cfg("APPEND_REQ_VANILLA"),
            default_should_transfer: cfg("SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES"),
        }
    }
}

/// One materialisation in progress: the macros and attributes in force,
/// and the cluster ad and procs made so far.
struct Materializer<'a> {
    file: &'a SubmitFile,
    config: &'a Config,
    opts: &'a SubmitOptions,
    inputs: &'a Inputs,
    site: Site,
    predefined: HashMap<String, String>,
    table: HashMap<String, MacroDef>,
    attrs: Vec<(String, Option<String>, Origin)>,
    /// The first proc's ad, less its ProcId.
    cluster_ad: Option<ClassAd>,
    /// Each proc as its difference from the cluster ad.
    procs: Vec<ClassAd>,
    /// The macros something reads, for the unused-line warnings.
    used: HashSet<String>,
    /// `skip_filechecks` as the first proc read it.
    skip_file_checks: bool,
}

impl Materializer<'_> {
    fn ctx(&self, proc_id: i64) -> job::JobContext<'_> {
        let (opts, site) = (self.opts, &self.site);
        job::JobContext {
            cluster: opts.cluster,
            proc_id,
            qdate: opts.qdate,
            owner: &opts.owner,
            uid_domain: &site.uid_domain,
            cwd: &opts.cwd,
            arch: &site.arch,
            opsys: &site.opsys,
            filesystem_domain: &site.fs_domain,
            schedd_interval: site.schedd_interval,
            append_requirements: site.append_requirements.clone(),
            append_req_vanilla: site.append_req_vanilla.clone(),
            default_should_transfer: site.default_should_transfer.as_deref(),
            environ: &opts.environ,
            version: &site.version,
        }
    }

    /// The macros this statement's procs see (tern_submit -batch-name
    /// included), noting what they read.
    fn scope(&mut self, stmt: &QueueStmt, origin: &Origin) -> HashMap<String, MacroDef> {
        let mut scoped = self.table.clone();
        if let Some(b) = &self.opts.batch_name {
            scoped.insert(
                "batch_name".into(),
                MacroDef {
                    raw: b.clone(),
                    origin: origin.clone(),
                },
            );
        }
        collect_refs(&stmt.rest, &mut self.used);
        for l in stmt.block.iter().flatten() {
            collect_refs(l, &mut self.used);
        }
        for d in scoped.values() {
            collect_refs(&d.raw, &mut self.used);
        }
        for (_, v, _) in &self.attrs {
            if let Some(v) = v {
                collect_refs(v, &mut self.used);
            }
        }
        scoped
    }

    /// One `queue` statement: a proc per item row. The statement's first
    /// proc is built in full; a later one copies its difference when no
    /// command depends on the proc's variables, else rebuilds only the
    /// commands that do.
    fn queue(&mut self, stmt: &QueueStmt, origin: &Origin) -> Result<(), SubmitError> {
        let scoped = self.scope(stmt, origin);
        // The queue line is macro-expanded before it is read, as
        // condor_submit does, with the macros in force here.
        let spec = &expand_queue(stmt, &scoped, &self.predefined, self.config, origin)?;
        // MAX_JOBS_PER_SUBMISSION (no limit unless configured; shared
        // mode's configuration sets 20000), checked before any row is
        // made: a `queue 10000000` is refused, not built (the queue checks
        // again).
        let max = self
            .config
            .get_int("MAX_JOBS_PER_SUBMISSION", i64::MAX)
            .map_err(|e| SubmitError::At {
                origin: origin.clone(),
                msg: e.to_string(),
            })?;
        let room = (max - self.procs.len() as i64).max(0);
        let empty = HashMap::default();
        let view = ProcMacros {
            table: &scoped,
            vars: &empty,
            numbers: &empty,
            predefined: &self.predefined,
            config: self.config,
        };
        let rows = queue_rows(spec, &view, (self.file, self.inputs), origin, room)?;
        let (dyn_cmds, dyn_attrs) = dynamic_commands(&scoped, &self.attrs, spec);
        let dynamic = !dyn_cmds.is_empty() || dyn_attrs;
        // This statement's first proc, in full, and how it differs from the
        // cluster ad: later procs of the statement start from them.
        let mut first: Option<(ClassAd, ClassAd)> = None;
        for (vars, mut numbers) in rows {
            let proc_id = self.procs.len() as i64;
            numbers.insert("process".into(), proc_id.to_string());
            numbers.insert("procid".into(), proc_id.to_string());
            if let (false, Some((_, stmt_diff))) = (dynamic, &first) {
                let mut diff = stmt_diff.clone();
                diff.insert("ProcId", Expr::int(proc_id));
                self.procs.push(diff);
                continue;
            }
            let mut cmds = ProcCommands {
                m: ProcMacros {
                    table: &scoped,
                    vars: &vars,
                    numbers: &numbers,
                    predefined: &self.predefined,
                    config: self.config,
                },
                attrs: &self.attrs,
                queue_origin: origin.clone(),
            };
            let ctx = self.ctx(proc_id);
            let mut diff = match (&first, &self.cluster_ad) {
                (Some((stmt_full, stmt_diff)), Some(base))
                    if !dyn_cmds.iter().any(|c| c == "universe") =>
                {
                    let part = job::build(&mut cmds, &ctx, Some(&dyn_cmds), Some(stmt_full))?;
                    let mut diff = stmt_diff.clone();
                    for (n, e) in part.iter() {
                        if same_expr(base.get(n), e) {
                            diff.remove(n);
                        } else {
                            diff.insert(n, e.clone());
                        }
                    }
                    diff
                }
                _ => {
                    let ad = job::build(&mut cmds, &ctx, None, None)?;
                    if self.cluster_ad.is_none() {
                        // The build has checked its value.
                        self.skip_file_checks = job::skips_file_checks(&mut cmds)?;
                    }
                    let stmt_diff = match &self.cluster_ad {
                        None => {
                            let mut c = ad.clone();
                            c.remove("ProcId");
                            self.cluster_ad = Some(c);
                            ClassAd::new()
                        }
                        Some(base) => {
                            let mut d = diff_ads(base, &ad);
                            d.remove("ProcId");
                            // The cluster's arguments in the other syntax
                            // would win over this statement's (see
                            // job::process).
                            for (set, other) in [("Args", "Arguments"), ("Arguments", "Args")] {
                                if ad.get(set).is_some()
                                    && ad.get(other).is_none()
                                    && base.get(other).is_some()
                                {
                                    d.insert(other, Expr::Lit(Value::Undefined));
                                }
                            }
                            d
                        }
                    };
                    let diff = stmt_diff.clone();
                    if first.is_none() {
                        first = Some((ad, stmt_diff));
                    }
                    diff
                }
            };
            diff.insert("ProcId", Expr::int(proc_id));
            self.procs.push(diff);
        }
        Ok(())
    }
}

/// condor_submit's warning for each macro definition nothing read (not a
/// command, a `request_` or a dotted name).
fn unused_warnings(file: &SubmitFile, used: &HashSet<String>) -> Vec<String> {
    let mut warnings = Vec::new();
    for st in &file.stmts {
        if let Kind::Set { name, value } = &st.kind {
            let key = name.to_ascii_lowercase();
            if !COMMANDS.contains(&key.as_str())
                && command_of_alias(&key).is_none()
                && !key.starts_with("request_")
                && !key.contains('.')
                && !used.contains(&key)
            {
                warnings.push(format!(
                    "WARNING: the line '{name} = {value}' was unused by tern_submit. Is it a typo?"
                ));
            }
        }
    }
    warnings
}

/// Attributes of `ad` that differ from `base` (by their printed form).
fn diff_ads(base: &ClassAd, ad: &ClassAd) -> ClassAd {
    let mut out = ClassAd::new();
    for (n, e) in ad.iter() {
        if !same_expr(base.get(n), e) {
            out.insert(n, e.clone());
        }
    }
    out
}

fn same_expr(a: Option<&Expr>, b: &Expr) -> bool {
    a.is_some_and(|a| classad::unparse::unparse(a) == classad::unparse::unparse(b))
}

/// The commands whose values depend on per-proc variables (or on
/// randomness), and whether any `+Attr` does.
fn dynamic_commands(
    table: &HashMap<String, MacroDef>,
    attrs: &[(String, Option<String>, Origin)],
    spec: &QueueSpec,
) -> (Vec<String>, bool) {
    let mut dyn_names: HashSet<String> = PROC_VARS.iter().map(|s| s.to_string()).collect();
    dyn_names.insert("item".into());
    // The predefined $(JobId) is $(ClusterId).$(ProcId).
    if !table.contains_key("jobid") {
        dyn_names.insert("jobid".into());
    }
    for v in &spec.vars {
        dyn_names.insert(v.to_ascii_lowercase());
    }
    let refs_of = |text: &str| {
        let mut refs = HashSet::new();
        collect_refs(text, &mut refs);
        refs
    };
    // Fixed point: a macro referring to a dynamic name is dynamic.
    loop {
        let mut grew = false;
        for (k, d) in table {
            if dyn_names.contains(k) {
                continue;
            }
            if d.raw.contains("$RANDOM_") || refs_of(&d.raw).iter().any(|r| dyn_names.contains(r)) {
                dyn_names.insert(k.clone());
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    let touches = |text: &str| {
        text.contains("$RANDOM_") || refs_of(text).iter().any(|r| dyn_names.contains(r))
    };
    // An alias stands for its command (see ALIASES).
    let is_command = |k: &str| {
        COMMANDS.contains(&k) || command_of_alias(k).is_some() || k.starts_with("request_")
    };
    let as_command = |k: &String| command_of_alias(k).map_or_else(|| k.clone(), String::from);
    // A queue variable named as a command changes it per proc.
    let mut commands: Vec<String> = spec
        .vars
        .iter()
        .map(|v| v.to_ascii_lowercase())
        .filter(|v| is_command(v))
        .map(|v| as_command(&v))
        .collect();
    for (k, d) in table {
        if is_command(k) && touches(&d.raw) && !commands.contains(&as_command(k)) {
            commands.push(as_command(k));
        }
    }
    let attrs_dynamic = attrs
        .iter()
        .any(|(_, v, _)| v.as_deref().is_some_and(touches));
    (commands, attrs_dynamic)
}

fn predefined(
    file: &SubmitFile,
    config: &Config,
    opts: &SubmitOptions,
    arch: &str,
    opsys: &str,
) -> HashMap<String, String> {
    use chrono::{Datelike, TimeZone};
    let mut m = HashMap::default();
    let dt = chrono::Local
        .timestamp_opt(opts.qdate, 0)
        .single()
        .unwrap_or_default();
    for (k, v) in [
        ("arch", arch.to_string()),
        ("opsys", opsys.to_string()),
        ("submit_file", file.name.clone()),
        ("submit_time", opts.qdate.to_string()),
        ("year", dt.year().to_string()),
        ("month", format!("{:02}", dt.month())),
        ("day", format!("{:02}", dt.day())),
        ("cluster", opts.cluster.to_string()),
        ("clusterid", opts.cluster.to_string()),
        // condor_submit's SubmitMacroDefaults: JobId expands per proc.
        ("islinux", "1".to_string()),
        ("iswindows", "0".to_string()),
        ("jobid", "$(ClusterId).$(ProcId)".to_string()),
    ] {
        m.insert(k.to_string(), v);
    }
    for (k, v) in os_release(config) {
        m.insert(k, v);
    }
    m
}

/// OPSYSANDVER and friends from /etc/os-release.
pub fn os_release(config: &Config) -> Vec<(String, String)> {
    let _ = config;
    let text = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .map(|v| v.trim_matches('"').to_string())
            .unwrap_or_default()
    };
    let name = field("NAME");
    let short = name
        .split_whitespace()
        .next()
        .unwrap_or("Linux")
        .to_string();
    let ver = field("VERSION_ID");
    let major = ver.split('.').next().unwrap_or("").to_string();
    vec![
        ("opsysandver".into(), format!("{short}{major}")),
        ("opsysmajorver".into(), major.clone()),
        (
            "opsysver".into(),
            format!(
                "{}{:02}",
                major,
                ver.split('.')
                    .nth(1)
                    .and_then(|m| m.parse::<u32>().ok())
                    .unwrap_or(0)
            ),
        ),
        ("opsysname".into(), short),
    ]
}

/// The queue statement with its macros expanded, read again.
fn expand_queue(
    stmt: &QueueStmt,
    table: &HashMap<String, MacroDef>,
    predefined: &HashMap<String, String>,
    config: &Config,
    origin: &Origin,
) -> Result<QueueSpec, SubmitError> {
    let at = |msg: String| SubmitError::At {
        origin: origin.clone(),
        msg,
    };
    let has_macro = |t: &str| t.contains('$');
    if !has_macro(&stmt.rest) && !stmt.block.iter().flatten().any(|l| has_macro(l)) {
        return Ok(stmt.spec.clone());
    }
    let empty = HashMap::default();
    let view = ProcMacros {
        table,
        vars: &empty,
        numbers: &empty,
        predefined,
        config,
    };
    let rest = Expander::new(&view)
        .expand(&stmt.rest)
        .map_err(|e| at(e.0))?;
    let block = match &stmt.block {
        Some(lines) => Some(
            lines
                .iter()
                .map(|l| Expander::new(&view).expand(l))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| at(e.0))?,
        ),
        None => None,
    };
    queue::parse(&rest, block).map_err(at)
}

/// Per proc row: the queue variables (live: `Item` when none is named)
/// and the proc's Step, Row and ItemIndex (defaults under the file's
/// macros).
type Row = (HashMap<String, String>, HashMap<String, String>);

/// The proc variables of every job the queue statement makes.
fn queue_rows(
    spec: &QueueSpec,
    view: &ProcMacros,
    (file, inputs): (&SubmitFile, &Inputs),
    origin: &Origin,
    room: i64,
) -> Result<Vec<Row>, SubmitError> {
    let at = |msg: String| SubmitError::At {
        origin: origin.clone(),
        msg,
    };
    let config = view.config;
    let count = queue_count(spec, view).map_err(at)?;
    let items = queue_items(spec, view, file, inputs).map_err(at)?;
    let rows_per_step = match &items {
        None => 1,
        Some(rows) => spec.slice.indices(rows.len()).len() as i64,
    };
    if count.saturating_mul(rows_per_step) > room {
        return Err(at(format!(
            "Number of submitted jobs would exceed MAX_JOBS_PER_SUBMISSION ({})",
            config
                .get_int("MAX_JOBS_PER_SUBMISSION", i64::MAX)
                .unwrap_or(i64::MAX)
        )));
    }
    let numbers = |step: i64, row: i64| -> HashMap<String, String> {
        let mut n = HashMap::default();
        n.insert("step".to_string(), step.to_string());
        n.insert("itemindex".to_string(), row.to_string());
        n.insert("row".to_string(), row.to_string());
        n
    };
    let mut out = Vec::new();
    match items {
        None => {
            for step in 0..count {
                let mut v = HashMap::default();
                v.insert("item".to_string(), String::new());
                out.push((v, numbers(step, 0)));
            }
        }
        Some(rows) => {
            let multi = matches!(
                spec.source,
                ItemSource::FromLines(_) | ItemSource::FromFile(_) | ItemSource::FromCommand(_)
            );
            for idx in spec.slice.indices(rows.len()) {
                let fields = if multi {
                    queue::split_row(&rows[idx], spec.vars.len())
                } else {
                    vec![rows[idx].clone()]
                };
                for step in 0..count {
                    let mut v = HashMap::default();
                    for (n, f) in spec.vars.iter().zip(fields.iter()) {
                        v.insert(n.to_ascii_lowercase(), f.clone());
                    }
                    out.push((v, numbers(step, idx as i64)));
                }
            }
        }
    }
    Ok(out)
}

/// The statement's count (`queue 3`), expanded and evaluated; 1 when
/// none is given.
fn queue_count(spec: &QueueSpec, view: &ProcMacros) -> Result<i64, String> {
    let count_text = Expander::new(view).expand(&spec.count).map_err(|e| e.0)?;
    if count_text.trim().is_empty() {
        return Ok(1);
    }
    let e = classad::parse_expr(count_text.trim())
        .map_err(|_| "Invalid Queue count expression".to_string())?;
    match Evaluator::new().eval(&e, &Scope::empty()) {
        Value::Int(i) if i >= 0 => Ok(i),
        Value::Int(_) => Err("Queue count out of range".into()),
        _ => Err("Invalid Queue count expression".into()),
    }
}

/// The statement's items, one string a row (`in`, `from` lines, a file or
/// a command's output, or `matching` files); `None` without an item list.
/// Files, commands and directories are read through `inputs`.
fn queue_items(
    spec: &QueueSpec,
    view: &ProcMacros,
    file: &SubmitFile,
    inputs: &Inputs,
) -> Result<Option<Vec<String>>, String> {
    let expand = |t: &str| Expander::new(view).expand(t).map_err(|e| e.0);
    Ok(match &spec.source {
        ItemSource::None => None,
        ItemSource::In(items) => Some(items.clone()),
        ItemSource::FromLines(lines) => Some(lines.clone()),
        ItemSource::FromFile(f) => Some(inputs.file_lines(&file.dir.join(expand(f)?.trim()))?),
        ItemSource::FromCommand(cmd) => Some(inputs.command_lines(&expand(cmd)?, &file.dir)?),
        ItemSource::Matching { globs, files, dirs } => {
            let globs: Vec<String> = globs.iter().map(|g| expand(g)).collect::<Result<_, _>>()?;
            Some(inputs.matching(&file.dir, &globs, *files, *dirs)?)
        }
    })
}
