//! The slot layout the configuration asks for, as HTCondor's startd builds
//! it (slot_builder.cpp).
//!
//! - Nothing configured: one partitionable slot, `slot1`, owning everything
//!   (HTCondor's default since 23.0; SlotTypeID 1).
//! - `NUM_SLOTS = n`: n static slots of slot type 0, each with an equal
//!   (`auto`) share of cpus, memory and disk.
//! - `NUM_SLOTS_TYPE_<n> = k` with `SLOT_TYPE_<n> = ...`: k slots of type n,
//!   types in order; `SLOT_TYPE_<n>_PARTITIONABLE = true` makes them
//!   partitionable. NUM_SLOTS is then ignored, as in HTCondor.
//!
//! A slot type is a comma-separated list. An item `name=share` gives one
//! resource (cpus/c, memory/mem/ram/m/r, disk/d, swap/s: any prefix,
//! case-insensitive); a bare item is the share of every resource not listed.
//! A share is `auto` (an equal part of what the explicit shares leave), a
//! percentage (`25%`), a fraction (`1/4`), or an absolute amount (cpus,
//! MiB of memory; disk only as a percentage or fraction, since free disk
//! changes). Cpus and memory are at least 1 per slot.

use crate::config::Config;

use super::MachineError;

/// Static, partitionable or dynamic (carved from a partitionable slot).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotKind {
    Static,
    Partitionable,
    Dynamic,
}

impl SlotKind {
    /// The spelling in the `slots` table.
    pub fn as_str(self) -> &'static str {
        match self {
            SlotKind::Static => "static",
            SlotKind::Partitionable => "partitionable",
            SlotKind::Dynamic => "dynamic",
        }
    }

    pub fn parse(s: &str) -> Option<SlotKind> {
        match s {
            "static" => Some(SlotKind::Static),
            "partitionable" => Some(SlotKind::Partitionable),
            "dynamic" => Some(SlotKind::Dynamic),
            _ => None,
        }
    }

    /// SlotType as the startd advertises it.
    pub fn slot_type(self) -> &'static str {
        match self {
            SlotKind::Static => "Static",
            SlotKind::Partitionable => "Partitionable",
            SlotKind::Dynamic => "Dynamic",
        }
    }
}

/// One configured slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotSpec {
    /// slot1, slot2, ...
    pub name: String,
    pub slot_id: i64,
    /// The n of SLOT_TYPE_n; 0 for NUM_SLOTS slots.
    pub slot_type: i64,
    pub kind: SlotKind,
    pub cpus: i64,
    /// MiB.
    pub memory: i64,
    /// KiB.
    pub disk: i64,
}

/// A share of one resource.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Share {
    Auto,
    /// A part of the whole, 0..=1.
    Fraction(f64),
    /// An amount (cpus or MiB).
    Absolute(f64),
}

/// The shares of one slot type.
#[derive(Clone, Copy, Debug, PartialEq)]
struct TypeShares {
    cpus: Share,
    memory: Share,
    disk: Share,
}

const AUTO: TypeShares = TypeShares {
    cpus: Share::Auto,
    memory: Share::Auto,
    disk: Share::Auto,
};

/// The configured slots of a machine with `cpus` cpus, `memory` MiB and
/// `disk` KiB, in SlotID order.
pub fn layout(
    cfg: &Config,
    cpus: i64,
    memory: i64,
    disk: i64,
) -> Result<Vec<SlotSpec>, MachineError> {
    // (type, count, shares, partitionable, the knob that asked for them)
    let mut types: Vec<(i64, i64, TypeShares, bool, String)> = Vec::new();
    for n in slot_types_configured(cfg) {
        let knob = format!("NUM_SLOTS_TYPE_{n}");
        let count = super::positive_knob(cfg, &knob, 0)?.unwrap_or(0);
        if count == 0 {
            continue;
        }
        let type_knob = format!("SLOT_TYPE_{n}");
        let shares = match cfg.get(&type_knob)? {
            Some(text) => parse_slot_type(&text).map_err(|msg| MachineError::Knob {
                knob: type_knob.clone(),
                value: text.clone(),
                msg,
            })?,
            None => AUTO,
        };
        let pknob = format!("SLOT_TYPE_{n}_PARTITIONABLE");
        let partitionable = cfg.get_bool(&pknob, false)?;
        types.push((n, count, shares, partitionable, knob));
    }
    if types.is_empty() {
        match super::positive_knob(cfg, "NUM_SLOTS", 0)? {
            Some(n) => types.push((0, n, AUTO, false, "NUM_SLOTS".into())),
            None => {
                let all = TypeShares {
                    cpus: Share::Fraction(1.0),
                    memory: Share::Fraction(1.0),
                    disk: Share::Fraction(1.0),
                };
                types.push((1, 1, all, true, "NUM_SLOTS_TYPE_1".into()));
            }
        }
    }
    allocate(&types, cpus, memory, disk)
}

/// The n of every NUM_SLOTS_TYPE_<n> the configuration defines, ascending.
fn slot_types_configured(cfg: &Config) -> Vec<i64> {
    let mut v: Vec<i64> = cfg
        .entries()
        .iter()
        .filter_map(|e| {
            let upper = e.name.to_ascii_uppercase();
            upper.strip_prefix("NUM_SLOTS_TYPE_")?.parse::<i64>().ok()
        })
        .filter(|n| *n >= 1)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Hands out the explicit shares first, then divides what is left evenly
/// among the `auto` shares (AvailAttributes::decrement and
/// computeAutoShares).
fn allocate(
    types: &[(i64, i64, TypeShares, bool, String)],
    cpus: i64,
    memory: i64,
    disk: i64,
) -> Result<Vec<SlotSpec>, MachineError> {
    struct Pending {
        slot_type: i64,
        kind: SlotKind,
        cpus: Option<i64>,
        memory: Option<i64>,
        disk: Option<f64>,
        knob: String,
    }
    let mut left_cpus = cpus;
    let mut left_memory = memory;
    let mut left_disk = 1.0f64;
    let (mut auto_cpus, mut auto_memory, mut auto_disk) = (0i64, 0i64, 0i64);
    let mut pending = Vec::new();
    let out_of = |knob: &str, what: &str, count: i64| MachineError::Knob {
        knob: knob.to_string(),
        value: count.to_string(),
        msg: format!(
            "not enough {what} for every slot (the machine has {cpus} cpus, {memory} MiB \
             of memory and {disk} KiB of disk)"
        ),
    };
    for (slot_type, count, shares, partitionable, knob) in types {
        for _ in 0..*count {
            let c = match shares.cpus {
                Share::Auto => None,
                Share::Fraction(f) => Some(((f * cpus as f64) as i64).max(1)),
                Share::Absolute(a) => Some((a as i64).max(1)),
            };
            let m = match shares.memory {
                Share::Auto => None,
                Share::Fraction(f) => Some(((f * memory as f64) as i64).max(1)),
                Share::Absolute(a) => Some((a as i64).max(1)),
            };
            let d = match shares.disk {
                Share::Auto => None,
                Share::Fraction(f) => Some(f),
                Share::Absolute(_) => None,
            };
            match c {
                Some(c) => left_cpus -= c,
                None => auto_cpus += 1,
            }
            match m {
                Some(m) => left_memory -= m,
                None => auto_memory += 1,
            }
            match d {
                Some(d) => left_disk -= d,
                None => auto_disk += 1,
            }
            if left_cpus < 0 {
                return Err(out_of(knob, "cpus", *count));
            }
            if left_memory < 0 {
                return Err(out_of(knob, "memory", *count));
            }
            if left_disk < -1e-9 {
                return Err(out_of(knob, "disk", *count));
            }
            pending.push(Pending {
                slot_type: *slot_type,
                kind: if *partitionable {
                    SlotKind::Partitionable
                } else {
                    SlotKind::Static
                },
                cpus: c,
                memory: m,
                disk: d,
                knob: knob.clone(),
            });
        }
    }
    let mut out = Vec::with_capacity(pending.len());
    for (i, p) in pending.into_iter().enumerate() {
        let count = types.iter().find(|t| t.4 == p.knob).map_or(0, |t| t.1);
        let c = match p.cpus {
            Some(c) => c,
            None => {
                let share = left_cpus / auto_cpus;
                if share < 1 {
                    return Err(out_of(&p.knob, "cpus", count));
                }
                share
            }
        };
        let m = match p.memory {
            Some(m) => m,
            None => {
                let share = left_memory / auto_memory;
                if share < 1 {
                    return Err(out_of(&p.knob, "memory", count));
                }
                share
            }
        };
        let fraction = match p.disk {
            Some(d) => d,
            None => {
                let share = left_disk.max(0.0) / auto_disk as f64;
                if share <= 0.0 {
                    return Err(out_of(&p.knob, "disk", count));
                }
                share
            }
        };
        let id = i as i64 + 1;
        out.push(SlotSpec {
            name: format!("slot{id}"),
            slot_id: id,
            slot_type: p.slot_type,
            kind: p.kind,
            cpus: c,
            memory: m,
            disk: (fraction * disk as f64 + 1e-6).floor() as i64,
        });
    }
    Ok(out)
}

/// Parses a SLOT_TYPE_<n> value; the error says what is wrong with it.
fn parse_slot_type(text: &str) -> Result<TypeShares, String> {
    let mut default = Share::Auto;
    let (mut cpus, mut memory, mut disk) = (None, None, None);
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((name, value)) = item.split_once('=') else {
            default = parse_share(item)?;
            if let Share::Absolute(_) = default {
                return Err(format!(
                    "'{item}' is not a share of every resource; give a percentage (25%), \
                     a fraction (1/4) or auto, or name the resources (cpus=1, memory=25%, disk=1/4)"
                ));
            }
            continue;
        };
        let (name, value) = (name.trim(), value.trim());
        if value.is_empty() {
            return Err(format!("'{item}' gives {name} no share"));
        }
        let share = parse_share(value)?;
        let n = name.to_ascii_lowercase();
        let prefix_of = |word: &str| !n.is_empty() && word.starts_with(n.as_str());
        if prefix_of("cpus") {
            cpus = Some(share);
        } else if prefix_of("ram") || prefix_of("memory") {
            memory = Some(share);
        } else if prefix_of("disk") {
            if let Share::Absolute(_) = share {
                return Err(format!(
                    "'{item}': disk must be a percentage, a fraction or auto, as free disk changes"
                ));
            }
            disk = Some(share);
        } else if prefix_of("swap") || prefix_of("virtualmemory") {
            // tern does not account swap; HTCondor accepts only shares here.
            if let Share::Absolute(_) = share {
                return Err(format!(
                    "'{item}': swap must be a percentage, a fraction or auto"
                ));
            }
        } else if let Share::Absolute(a) = share
            && a > 0.0
        {
            return Err(format!("'{item}': unknown resource '{name}'"));
        }
    }
    Ok(TypeShares {
        cpus: cpus.unwrap_or(default),
        memory: memory.unwrap_or(default),
        disk: disk.unwrap_or(default),
    })
}

/// One share: auto, N%, A/B or a number.
fn parse_share(text: &str) -> Result<Share, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("auto") || t.eq_ignore_ascii_case("automatic") {
        return Ok(Share::Auto);
    }
    let number = |s: &str| -> Result<f64, String> {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("'{t}' is not auto, a percentage, a fraction or a number"))
    };
    let share = if let Some(p) = t.strip_suffix('%') {
        Share::Fraction(number(p)? / 100.0)
    } else if let Some((a, b)) = t.split_once('/') {
        let (a, b) = (number(a)?, number(b)?);
        if b <= 0.0 {
            return Err(format!("'{t}' divides by zero"));
        }
        Share::Fraction(a / b)
    } else {
        Share::Absolute(number(t)?)
    };
    if let Share::Fraction(f) = share
        && f > 1.0
    {
        return Err(format!("'{t}' is more than the whole machine"));
    }
    Ok(share)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(text: &str) -> Config {
        let mut c = Config::defaults();
        c.parse_str(text, "test").unwrap();
        c
    }

    fn slots(
        text: &str,
        cpus: i64,
        memory: i64,
        disk: i64,
    ) -> Vec<(String, SlotKind, i64, i64, i64, i64)> {
        layout(&cfg(text), cpus, memory, disk)
            .unwrap()
            .into_iter()
            .map(|s| (s.name, s.kind, s.slot_type, s.cpus, s.memory, s.disk))
            .collect()
    }

    fn err(text: &str) -> String {
        layout(&cfg(text), 8, 8192, 80000).unwrap_err().to_string()
    }

    use SlotKind::*;

    #[test]
    fn default_is_one_partitionable_slot_owning_everything() {
        assert_eq!(
            slots("", 30, 64000, 1_000_000),
            [("slot1".into(), Partitionable, 1, 30, 64000, 1_000_000)]
        );
    }

    #[test]
    fn num_slots_divides_evenly() {
        assert_eq!(
            slots("NUM_SLOTS = 4", 8, 8000, 1000),
            [
                ("slot1".into(), Static, 0, 2, 2000, 250),
                ("slot2".into(), Static, 0, 2, 2000, 250),
                ("slot3".into(), Static, 0, 2, 2000, 250),
                ("slot4".into(), Static, 0, 2, 2000, 250),
            ]
        );
        assert_eq!(
            slots("NUM_SLOTS = 3", 4, 1000, 900)[2],
            ("slot3".into(), Static, 0, 1, 333, 300)
        );
    }

    #[test]
    fn slot_types_with_every_share_form() {
        let text = "NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = cpus=2, memory=25%, disk=1/4\n\
                    NUM_SLOTS_TYPE_2 = 2\nSLOT_TYPE_2 = c=1, mem=1024, auto\n\
                    NUM_SLOTS_TYPE_3 = 1\nSLOT_TYPE_3 = 25%\nSLOT_TYPE_3_PARTITIONABLE = true\n\
                    NUM_SLOTS = 99\n";
        assert_eq!(
            slots(text, 8, 8192, 80000),
            [
                ("slot1".into(), Static, 1, 2, 2048, 20000),
                ("slot2".into(), Static, 2, 1, 1024, 20000),
                ("slot3".into(), Static, 2, 1, 1024, 20000),
                ("slot4".into(), Partitionable, 3, 2, 2048, 20000),
            ]
        );
    }

    #[test]
    fn auto_shares_divide_what_explicit_shares_leave() {
        let text = "NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = memory=10%\nNUM_SLOTS_TYPE_2 = 3\n";
        let s = slots(text, 8, 1000, 900);
        assert_eq!(s[0], ("slot1".into(), Static, 1, 2, 100, 225));
        assert_eq!(s[3], ("slot4".into(), Static, 2, 2, 300, 225));
    }

    #[test]
    fn bad_layouts_name_their_knob() {
        assert_eq!(
            err("NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = cpus=2, disk=100"),
            "SLOT_TYPE_1 = cpus=2, disk=100: 'disk=100': disk must be a percentage, a fraction \
             or auto, as free disk changes"
        );
        assert_eq!(
            err("NUM_SLOTS_TYPE_2 = 1\nSLOT_TYPE_2 = cpus=lots"),
            "SLOT_TYPE_2 = cpus=lots: 'lots' is not auto, a percentage, a fraction or a number"
        );
        assert_eq!(
            err("NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 64"),
            "SLOT_TYPE_1 = 64: '64' is not a share of every resource; give a percentage (25%), \
             a fraction (1/4) or auto, or name the resources (cpus=1, memory=25%, disk=1/4)"
        );
        assert_eq!(
            err("NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = gpus=2"),
            "SLOT_TYPE_1 = gpus=2: 'gpus=2': unknown resource 'gpus'"
        );
        assert_eq!(
            err("NUM_SLOTS = two"),
            "NUM_SLOTS = two: not a whole number"
        );
        assert_eq!(err("NUM_SLOTS = -1"), "NUM_SLOTS = -1: must be at least 0");
        assert!(
            err("NUM_SLOTS = 9").starts_with("NUM_SLOTS = 9: not enough cpus for every slot"),
            "{}",
            err("NUM_SLOTS = 9")
        );
        assert!(
            err("NUM_SLOTS_TYPE_1 = 3\nSLOT_TYPE_1 = 1/2")
                .starts_with("NUM_SLOTS_TYPE_1 = 3: not enough cpus")
        );
        assert_eq!(
            err("NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 3/2"),
            "SLOT_TYPE_1 = 3/2: '3/2' is more than the whole machine"
        );
    }

    #[test]
    fn unknown_resources_with_no_amount_are_ignored_and_zero_slots_are_none() {
        assert_eq!(
            slots(
                "NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = gpus=0, swap=25%, 50%",
                4,
                1000,
                100
            ),
            [("slot1".into(), Static, 1, 2, 500, 50)]
        );
        assert!(slots("NUM_SLOTS = 0", 4, 1000, 100).is_empty());
    }
}
