//! This machine and its slots: what HTCondor's startd knows, without a
//! daemon.
//!
//! [`Machine::detect`] reads the machine once (cpus, memory, the free disk
//! under EXECUTE, the operating system, the load) and applies the
//! configuration: NUM_CPUS, MEMORY and DISK override what was detected, and
//! the slot layout comes from NUM_SLOTS or `NUM_SLOTS_TYPE_<n>` /
//! `SLOT_TYPE_<n>` ([`layout`]). The slots themselves live in the queue
//! database's `slots` table ([`store`]): the negotiation pass keeps the table
//! in step with the layout, carves dynamic slots out of partitionable ones,
//! and records claims. [`slot_ad`] turns one row into the ad HTCondor's
//! startd would advertise for it, which the pass matches jobs against and
//! `tern_status` prints.

pub mod ad;
pub mod detect;
pub mod layout;
pub mod store;

pub use ad::slot_ad;
pub use layout::{SlotKind, SlotSpec};
pub use store::{
    ClaimInfo, SlotRow, carve_dynamic, clear_claim, configured_rows, load_slot, load_slots,
    release_dynamic, set_activity, set_claim, sync_slots,
};

use crate::classad::Expr;
use crate::config::{Config, ConfigError};

/// Why the machine or its slots could not be read or changed. Every
/// configuration problem names its knob.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    /// A knob the configuration could not expand or that did not parse.
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// A knob whose value makes no sense for the machine.
    #[error("{knob} = {value}: {msg}")]
    Knob {
        knob: String,
        value: String,
        msg: String,
    },
    /// Something about the machine could not be read.
    #[error("cannot read {what}: {msg}")]
    Detect { what: String, msg: String },
    /// The slots table could not be read or written.
    #[error("slots table: {0}")]
    Db(#[from] rusqlite::Error),
    /// A slot that is not in the table.
    #[error("no slot named {0}")]
    NoSlot(String),
    /// An operation on a slot of the wrong kind (carving a static slot).
    #[error("{name} is a {kind} slot; {msg}")]
    WrongKind {
        name: String,
        kind: &'static str,
        msg: String,
    },
    /// A partitionable slot too small for a carve.
    #[error(
        "{name} has {cpus} cpus, {memory} MiB and {disk} KiB left; \
         {want_cpus} cpus, {want_memory} MiB and {want_disk} KiB asked for"
    )]
    Insufficient {
        name: String,
        cpus: i64,
        memory: i64,
        disk: i64,
        want_cpus: i64,
        want_memory: i64,
        want_disk: i64,
    },
}

/// Slot changes run inside the queue's transactions, whose closures return
/// a `QueueError`: a slots-table failure stays an SQLite error (so a busy
/// database is still told apart), anything else travels whole.
impl From<MachineError> for crate::queue::QueueError {
    fn from(e: MachineError) -> Self {
        match e {
            MachineError::Db(e) => crate::queue::QueueError::Sqlite(e),
            e => crate::queue::QueueError::Above(Box::new(e)),
        }
    }
}

/// What the operating system is, in HTCondor's attributes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpSysInfo {
    /// OpSys: LINUX.
    pub opsys: String,
    /// OpSysName and OpSysShortName: Debian, Ubuntu, RedHat, ...
    pub name: String,
    /// OpSysLongName: "Debian GNU/Linux 12 (bookworm)".
    pub long_name: String,
    /// OpSysMajorVer: 12.
    pub major_ver: i64,
    /// OpSysVer: major * 100 + minor (1200, 2204).
    pub ver: i64,
    /// OpSysAndVer: name and major version ("Debian12").
    pub and_ver: String,
}

/// This machine: its resources after the configuration's overrides, what
/// it is, its policy, and its configured slot layout.
#[derive(Clone, Debug)]
pub struct Machine {
    /// Machine: FULL_HOSTNAME.
    pub host: String,
    /// TotalCpus (NUM_CPUS, else detected).
    pub cpus: i64,
    /// DetectedCpus.
    pub detected_cpus: i64,
    /// TotalMemory in MiB (MEMORY, else detected).
    pub memory: i64,
    /// DetectedMemory in MiB.
    pub detected_memory: i64,
    /// TotalDisk in KiB (DISK, else the free space under EXECUTE).
    pub disk: i64,
    /// Arch (the ARCH knob).
    pub arch: String,
    pub opsys: OpSysInfo,
    /// TotalLoadAvg: the one-minute load average.
    pub load_avg: f64,
    pub filesystem_domain: String,
    pub uid_domain: String,
    /// The START, RANK and STARTD_ATTRS expressions.
    /// Shared with every slot ad built from them.
    pub start: std::rc::Rc<Expr>,
    pub rank: std::rc::Rc<Expr>,
    pub startd_attrs: Vec<(String, std::rc::Rc<Expr>)>,
    /// The configured slots, in SlotID order.
    pub layout: Vec<SlotSpec>,
    /// What the STARTD_CRON hooks published, merged into every slot ad
    /// ([`Machine::with_hooks`]; empty until then).
    pub hooks: std::rc::Rc<crate::hooks::cron::Published>,
    /// The slot ads' fixed parts built so far ([`ad::SlotBases`]).
    pub slot_bases: ad::SlotBases,
}

impl Machine {
    /// Reads this machine and the configuration's view of it. Nothing is
    /// created: the free disk of a missing EXECUTE directory is that of
    /// its nearest existing parent.
    pub fn detect(cfg: &Config) -> Result<Machine, MachineError> {
        let detected_cpus = detect::cpus();
        let detected_memory = detect::memory_mib()?;
        let cpus = positive_knob(cfg, "NUM_CPUS", 1)?.unwrap_or(detected_cpus);
        let memory = positive_knob(cfg, "MEMORY", 1)?.unwrap_or(detected_memory);
        let disk = match positive_knob(cfg, "DISK", 0)? {
            Some(d) => d,
            None => {
                let dir = cfg
                    .get("EXECUTE")?
                    .or(cfg.get("SPOOL")?)
                    .unwrap_or_else(|| "/".into());
                detect::free_disk_kib(std::path::Path::new(&dir))?
            }
        };
        let host = cfg
            .get("FULL_HOSTNAME")?
            .unwrap_or_else(|| "localhost".into());
        let opsys_knob = cfg.get("OPSYS")?.unwrap_or_else(|| "LINUX".into());
        let mut opsys = detect::opsys();
        opsys.opsys = opsys_knob;
        let mut startd_attrs = Vec::new();
        for name in cfg.list_value("STARTD_ATTRS")? {
            if let Some(text) = cfg.get(&name)? {
                let e = crate::classad::parser::parse_expr_old(&text).map_err(|e| {
                    MachineError::Knob {
                        knob: name.clone(),
                        value: text.clone(),
                        msg: format!("not a ClassAd expression ({e}); STARTD_ATTRS lists it"),
                    }
                })?;
                startd_attrs.push((name, std::rc::Rc::new(e)));
            }
        }
        let layout = layout::layout(cfg, cpus, memory, disk)?;
        Ok(Machine {
            filesystem_domain: cfg
                .get("FILESYSTEM_DOMAIN")?
                .unwrap_or_else(|| host.clone()),
            uid_domain: cfg.get("UID_DOMAIN")?.unwrap_or_else(|| host.clone()),
            host,
            cpus,
            detected_cpus,
            memory,
            detected_memory,
            disk,
            arch: cfg.get("ARCH")?.unwrap_or_else(|| "X86_64".into()),
            opsys,
            load_avg: detect::load_avg(),
            start: std::rc::Rc::new(expr_knob(cfg, "START", "true")?),
            rank: std::rc::Rc::new(expr_knob(cfg, "RANK", "0")?),
            startd_attrs,
            layout,
            hooks: Default::default(),
            slot_bases: Default::default(),
        })
    }

    /// The machine with the STARTD_CRON hooks' newest ads, read from the
    /// queue database, so that every slot ad built from it has them.
    pub fn with_hooks(mut self, conn: &rusqlite::Connection) -> Result<Machine, MachineError> {
        let p = crate::hooks::cron::Published::load(conn, crate::hooks::cron::Family::Startd)
            .map_err(|e| match e {
                crate::queue::QueueError::Sqlite(e) => MachineError::Db(e),
                e => MachineError::Detect {
                    what: "the STARTD_CRON hooks' ads".into(),
                    msg: e.to_string(),
                },
            })?;
        self.hooks = std::rc::Rc::new(p);
        Ok(self)
    }
}

/// An integer knob that must be at least `min`; `None` when unset.
pub(crate) fn positive_knob(
    cfg: &Config,
    knob: &str,
    min: i64,
) -> Result<Option<i64>, MachineError> {
    let Some(v) = cfg.get(knob)? else {
        return Ok(None);
    };
    let bad = |msg: String| MachineError::Knob {
        knob: knob.to_string(),
        value: v.clone(),
        msg,
    };
    let n: i64 = v
        .parse()
        .map_err(|_| bad("not a whole number".to_string()))?;
    if n < min {
        return Err(bad(format!("must be at least {min}")));
    }
    Ok(Some(n))
}

/// A ClassAd-expression knob, read in old syntax as HTCondor reads policy
/// knobs.
fn expr_knob(cfg: &Config, knob: &str, default: &str) -> Result<Expr, MachineError> {
    let text = cfg.get(knob)?.unwrap_or_else(|| default.to_string());
    crate::classad::parser::parse_expr_old(&text).map_err(|e| MachineError::Knob {
        knob: knob.to_string(),
        value: text.clone(),
        msg: format!("not a ClassAd expression ({e})"),
    })
}

#[cfg(test)]
mod tests;
