//! The accountant: each submitter's user priority, as HTCondor's negotiator
//! keeps it (`src/condor_negotiator.V6/Accountant.cpp`).
//!
//! Two tables of the queue database hold it (schema step 3): `accountant`,
//! one row per submitter (HTCondor's Customer records), and
//! `accountant_resources`, the claims the last update saw (its Resource
//! records). The time of the last update is the meta key [`LAST_UPDATE`].
//!
//! Once per negotiation pass, inside the pass's write transaction, the pass
//! computes what each submitter holds ([`in_use`], [`weights`]) and calls
//! [`update`], which moves every real priority towards that usage with a
//! half-life of `PRIORITY_HALFLIFE`:
//!
//! ```text
//! β = 0.5^(Δt/H);  P' = max(0.5, P·β + U·(1−β))
//! ```
//!
//! so a submitter holding 100 weighted cpus approaches 100 and, once it
//! stops, halves every H seconds down to 0.5. A claim that ends between two
//! updates is charged by [`unmatched`] (called from
//! [`super::free_slot`]) as HTCondor's UnchargedTime, so a job that starts
//! and ends between passes still counts. The effective priority the pie
//! spin divides slots by is `max(P, 0.5) × factor` ([`effective`]).
//!
//! Every function takes a plain connection and runs its statements there:
//! the caller owns the transaction.

use std::collections::HashMap;
use std::rc::Rc;

use rusqlite::{Connection, OptionalExtension, params};

use crate::classad::{ClassAd, Evaluator, Expr, Scope, Value};
use crate::config::{Config, ConfigError};
use crate::machine::{self, Machine, SlotKind, SlotRow};
use crate::queue::QueueError;

/// The meta key holding the time of the last priority update.
pub const LAST_UPDATE: &str = "accountant_last_update";

/// The lowest real priority, and a new submitter's.
pub const MIN_PRIORITY: f64 = 0.5;

/// The knobs the accountant reads.
#[derive(Clone, Debug)]
pub struct Knobs {
    /// PRIORITY_HALFLIFE, in seconds.
    pub half_life: f64,
    /// DEFAULT_PRIO_FACTOR.
    pub default_factor: f64,
    /// NICE_USER_PRIO_FACTOR.
    pub nice_factor: f64,
    /// NICE_USER_ACCOUNTING_GROUP_NAME: submitters whose name starts with
    /// it get `nice_factor`.
    pub nice_prefix: String,
    /// NEGOTIATOR_USE_SLOT_WEIGHTS: false counts every slot as 1.
    pub use_slot_weights: bool,
    /// SLOT_WEIGHT, evaluated on a claimed slot's ad.
    pub slot_weight: Expr,
    /// Whether SLOT_WEIGHT is plain `Cpus` (read from the row, no ad).
    slot_weight_is_cpus: bool,
}

impl Default for Knobs {
    /// HTCondor's defaults.
    fn default() -> Knobs {
        Knobs {
            half_life: 86400.0,
            default_factor: 1000.0,
            nice_factor: 1e10,
            nice_prefix: "nice-user".into(),
            use_slot_weights: true,
            slot_weight: Expr::attr("Cpus"),
            slot_weight_is_cpus: true,
        }
    }
}

impl Knobs {
    /// The accountant's knobs from the configuration (defaults from the
    /// knob table when unset).
    pub fn from_config(cfg: &Config) -> Result<Knobs, ConfigError> {
        let d = Knobs::default();
        let weight_text = cfg.get("SLOT_WEIGHT")?.unwrap_or_else(|| "Cpus".into());
        Ok(Knobs {
            half_life: real(cfg, "PRIORITY_HALFLIFE", d.half_life)?,
            default_factor: real(cfg, "DEFAULT_PRIO_FACTOR", d.default_factor)?,
            nice_factor: real(cfg, "NICE_USER_PRIO_FACTOR", d.nice_factor)?,
            nice_prefix: cfg
                .get("NICE_USER_ACCOUNTING_GROUP_NAME")?
                .unwrap_or(d.nice_prefix),
            use_slot_weights: cfg.get_bool("NEGOTIATOR_USE_SLOT_WEIGHTS", true)?,
            slot_weight: cfg.get_expr("SLOT_WEIGHT", "Cpus")?,
            slot_weight_is_cpus: weight_text.trim().eq_ignore_ascii_case("cpus"),
        })
    }

    /// The factor a submitter gets when first seen (spec 2.4): the nice-user
    /// prefix gives NICE_USER_PRIO_FACTOR, anything else DEFAULT_PRIO_FACTOR.
    pub fn factor_for(&self, name: &str) -> f64 {
        let f = if !self.nice_prefix.is_empty() && name.starts_with(&self.nice_prefix) {
            self.nice_factor
        } else {
            self.default_factor
        };
        f.max(1.0)
    }
}

fn real(cfg: &Config, name: &str, default: f64) -> Result<f64, ConfigError> {
    match cfg.get(name)? {
        None => Ok(default),
        Some(v) => v.parse::<f64>().map_err(|_| ConfigError::Expand {
            name: name.to_string(),
            msg: format!("'{v}' is not a number"),
        }),
    }
}

/// One submitter's record, as the pie spin and tern_userprio read it.
#[derive(Clone, Debug, PartialEq)]
pub struct Submitter {
    pub name: String,
    /// The real priority (never below 0.5 once an update has run).
    pub priority: f64,
    /// The priority factor; 0 when not yet assigned (the next update
    /// assigns it).
    pub factor: f64,
    /// EP = max(priority, 0.5) × factor (0 while the factor is unassigned).
    pub effective: f64,
    /// Slots held at the last update, and their SLOT_WEIGHT.
    pub resources_used: f64,
    pub weighted_resources_used: f64,
    /// Slot-seconds used, unweighted and weighted.
    pub accumulated_usage: f64,
    pub weighted_accumulated_usage: f64,
    /// When usage was first charged (0: never), and last seen (0: never).
    pub begin_usage_time: i64,
    pub last_usage_time: i64,
    /// 0: none.
    pub floor: f64,
    /// -1: unlimited.
    pub ceiling: f64,
}

/// One claimed slot as the accountant charges it.
#[derive(Clone, Debug, PartialEq)]
pub struct SlotUse {
    pub slot: String,
    pub claim: Option<String>,
    /// The submitter holding it (the slot's RemoteUser).
    pub submitter: String,
    pub weight: f64,
}

/// Every claimed slot of the `slots` table (partitionable slots excepted:
/// their dynamic slots are what is held), with its weight: SLOT_WEIGHT
/// evaluated on the slot's ad (the row's Cpus when SLOT_WEIGHT is the
/// default `Cpus`), or 1 when NEGOTIATOR_USE_SLOT_WEIGHTS is false. A
/// weight that does not evaluate to a number counts as 1.
pub fn in_use(
    conn: &Connection,
    machine: &Machine,
    knobs: &Knobs,
    now: i64,
) -> Result<Vec<SlotUse>, QueueError> {
    let mut ev: Option<Evaluator> = None;
    let mut out = Vec::new();
    for s in machine::load_slots(conn)? {
        let Some(user) = &s.remote_user else { continue };
        if s.kind == SlotKind::Partitionable {
            continue;
        }
        let weight = if !knobs.use_slot_weights {
            1.0
        } else if knobs.slot_weight_is_cpus {
            s.cpus as f64
        } else {
            let ad: Rc<ClassAd> = Rc::new(machine::slot_ad(machine, &s, now));
            match ev
                .get_or_insert_with(Evaluator::new)
                .eval(&knobs.slot_weight, &Scope::root(ad))
            {
                Value::Int(i) => i as f64,
                Value::Real(r) if r.is_finite() => r,
                _ => 1.0,
            }
        };
        out.push(SlotUse {
            slot: s.name.clone(),
            claim: s.claim.clone(),
            submitter: user.clone(),
            weight,
        });
    }
    Ok(out)
}

/// What each submitter holds: the sum of its slots' weights, by name.
pub fn weights(uses: &[SlotUse]) -> Vec<(String, f64)> {
    let mut m: HashMap<&str, f64> = HashMap::new();
    for u in uses {
        *m.entry(&u.submitter).or_insert(0.0) += u.weight;
    }
    let mut v: Vec<(String, f64)> = m.into_iter().map(|(k, w)| (k.to_string(), w)).collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// The time of the last priority update, if one has run.
pub fn last_update(conn: &Connection) -> Result<Option<i64>, QueueError> {
    Ok(conn
        .query_row(
            "SELECT value FROM meta WHERE key = ?1",
            [LAST_UPDATE],
            |r| r.get(0),
        )
        .optional()?)
}

fn set_last_update(conn: &Connection, now: i64) -> Result<(), QueueError> {
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?1, ?2) \
         ON CONFLICT(key) DO UPDATE SET value = ?2",
        params![LAST_UPDATE, now],
    )?;
    Ok(())
}

/// Makes sure `name` has a record: a new one starts at priority 0.5 with
/// its factor assigned (spec 2.4); an existing one whose factor is
/// unassigned gets it now. Nothing else of an existing record changes.
/// `now` is unused today (HTCondor stamps nothing on creation) but kept so
/// callers need not change if a creation time is ever recorded.
pub fn ensure(conn: &Connection, name: &str, now: i64, knobs: &Knobs) -> Result<(), QueueError> {
    let _ = now;
    conn.prepare_cached("INSERT OR IGNORE INTO accountant (name, factor) VALUES (?1, ?2)")?
        .execute(params![name, knobs.factor_for(name)])?;
    conn.prepare_cached("UPDATE accountant SET factor = ?2 WHERE name = ?1 AND factor < 1")?
        .execute(params![name, knobs.factor_for(name)])?;
    Ok(())
}

/// The priority update of one pass (spec 2.3), to run once per pass inside
/// its write transaction. `weights` is what each submitter holds now (see
/// [`in_use`] and [`weights`]); a submitter not in it holds nothing.
///
/// Records are created for every submitter in `weights`, unassigned factors
/// are assigned, and the in-use figures are stored. Then, with
/// Δt = now − the last update (none yet, or Δt < 0: remember `now` and stop;
/// Δt = 0: stop), every record gets
/// `P' = max(0.5, max(P, 0.5)·β + U·(1−β))` with `β = 0.5^(Δt/H)` and
/// `U = weighted in use + weighted uncharged time / Δt`, its accumulated
/// usage grows by in-use·Δt + uncharged time, BeginUsageTime is set the
/// first time there is usage, LastUsageTime whenever there was usage in
/// the interval, and the uncharged times are cleared.
pub fn update(
    conn: &Connection,
    weights: &[(String, f64)],
    now: i64,
    knobs: &Knobs,
) -> Result<(), QueueError> {
    record_resources_used(conn, weights, now, knobs)?;
    let dt = match last_update(conn)? {
        Some(last) if now > last => (now - last) as f64,
        Some(last) if now == last => return Ok(()),
        _ => return set_last_update(conn, now),
    };
    decay_priorities(conn, dt, now, knobs)?;
    set_last_update(conn, now)
}

/// Every submitter's ResourcesUsed (slots held) and
/// WeightedResourcesUsed (`weights`) as of now, with a record for each
/// (and a factor for records made elsewhere).
fn record_resources_used(
    conn: &Connection,
    weights: &[(String, f64)],
    now: i64,
    knobs: &Knobs,
) -> Result<(), QueueError> {
    // The unweighted count is HTCondor's ResourcesUsed: slots held.
    let mut counts: HashMap<String, f64> = HashMap::new();
    {
        let mut st = conn.prepare_cached(
            "SELECT remote_user, count(*) FROM slots \
             WHERE remote_user IS NOT NULL AND kind <> 'partitionable' GROUP BY remote_user",
        )?;
        let rows = st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
        for row in rows {
            let (n, c) = row?;
            counts.insert(n, c as f64);
        }
    }
    for (name, _) in weights {
        ensure(conn, name, now, knobs)?;
    }
    for name in counts.keys() {
        ensure(conn, name, now, knobs)?;
    }
    // Records made elsewhere (an ended claim, tern_userprio) get their
    // factor here.
    let unassigned: Vec<String> = conn
        .prepare_cached("SELECT name FROM accountant WHERE factor < 1")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for name in unassigned {
        ensure(conn, &name, now, knobs)?;
    }
    conn.execute(
        "UPDATE accountant SET resources_used = 0, weighted_resources_used = 0",
        [],
    )?;
    {
        let mut st = conn.prepare_cached(
            "UPDATE accountant SET resources_used = ?2, weighted_resources_used = ?3 \
             WHERE name = ?1",
        )?;
        for (name, w) in weights {
            st.execute(params![name, counts.get(name).copied().unwrap_or(0.0), w])?;
        }
        for (name, c) in &counts {
            if !weights.iter().any(|(n, _)| n == name) {
                st.execute(params![name, c, 0.0])?;
            }
        }
    }
    Ok(())
}

/// HTCondor's priority decay over `dt` seconds since the last update
/// (PRIORITY_HALFLIFE), and the accumulated usage and usage times, of
/// every record.
fn decay_priorities(conn: &Connection, dt: f64, now: i64, knobs: &Knobs) -> Result<(), QueueError> {
    let beta = 0.5f64.powf(dt / knobs.half_life);
    struct Rec {
        name: String,
        priority: f64,
        used: f64,
        wused: f64,
        unch: f64,
        wunch: f64,
        acc: f64,
        wacc: f64,
        begin: i64,
        last: i64,
    }
    let recs: Vec<Rec> = conn
        .prepare_cached(
            "SELECT name, priority, resources_used, weighted_resources_used, uncharged_time, \
             weighted_uncharged_time, accumulated_usage, weighted_accumulated_usage, \
             begin_usage_time, last_usage_time FROM accountant",
        )?
        .query_map([], |r| {
            Ok(Rec {
                name: r.get(0)?,
                priority: r.get(1)?,
                used: r.get(2)?,
                wused: r.get(3)?,
                unch: r.get(4)?,
                wunch: r.get(5)?,
                acc: r.get(6)?,
                wacc: r.get(7)?,
                begin: r.get(8)?,
                last: r.get(9)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    let mut st = conn.prepare_cached(
        "UPDATE accountant SET priority = ?2, accumulated_usage = ?3, \
         weighted_accumulated_usage = ?4, begin_usage_time = ?5, last_usage_time = ?6, \
         uncharged_time = 0, weighted_uncharged_time = 0 WHERE name = ?1",
    )?;
    for r in recs {
        let p = r.priority.max(MIN_PRIORITY);
        let u = r.wused + r.wunch / dt;
        let p2 = (p * beta + u * (1.0 - beta)).max(MIN_PRIORITY);
        let acc = r.acc + r.used * dt + r.unch;
        let wacc = r.wacc + r.wused * dt + r.wunch;
        let begin = if (acc > 0.0 || wacc > 0.0) && r.begin == 0 {
            now
        } else {
            r.begin
        };
        let last = if r.used + r.unch / dt > 0.0 || u > 0.0 {
            now
        } else {
            r.last
        };
        st.execute(params![r.name, p2, acc, wacc, begin, last])?;
    }
    Ok(())
}

/// Remembers the claims this update saw (replacing the previous set), so
/// that [`unmatched`] knows what an ending claim weighed.
pub fn note_claims(conn: &Connection, uses: &[SlotUse]) -> Result<(), QueueError> {
    conn.execute("DELETE FROM accountant_resources", [])?;
    let mut st = conn.prepare_cached(
        "INSERT OR REPLACE INTO accountant_resources (slot, claim, name, weight) \
         VALUES (?1, ?2, ?3, ?4)",
    )?;
    for u in uses {
        st.execute(params![u.slot, u.claim, u.submitter, u.weight])?;
    }
    Ok(())
}

/// Charges the claim on `slot` (as it is just before it is freed) for its
/// time since the last update, as HTCondor does at unmatch:
/// UnchargedTime += now − max(claim start, last update), and the weighted
/// time likewise. The weight is the one the last update saw for this claim,
/// else (a claim made since) the slot's Cpus; the claim start is the last
/// update for a claim it saw, else the time the slot entered its state.
/// A slot without a RemoteUser, or no update yet, charges nothing.
pub fn unmatched(conn: &Connection, slot: &SlotRow, now: i64) -> Result<(), QueueError> {
    let Some(user) = &slot.remote_user else {
        return Ok(());
    };
    let Some(last) = last_update(conn)? else {
        return Ok(());
    };
    let seen: Option<(Option<String>, f64)> = conn
        .prepare_cached("SELECT claim, weight FROM accountant_resources WHERE slot = ?1")?
        .query_row([&slot.name], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let (start, weight) = match seen {
        Some((claim, w)) if claim == slot.claim => (last, w),
        _ => (slot.entered_state.max(last), slot.cpus as f64),
    };
    let t = (now - start).max(0) as f64;
    conn.prepare_cached("DELETE FROM accountant_resources WHERE slot = ?1")?
        .execute([&slot.name])?;
    if t <= 0.0 {
        return Ok(());
    }
    conn.prepare_cached("INSERT OR IGNORE INTO accountant (name) VALUES (?1)")?
        .execute([user])?;
    conn.prepare_cached(
        "UPDATE accountant SET uncharged_time = uncharged_time + ?2, \
         weighted_uncharged_time = weighted_uncharged_time + ?3 WHERE name = ?1",
    )?
    .execute(params![user, t, t * weight])?;
    Ok(())
}

/// Every record, by submitter name, with its effective priority
/// (EP = max(P, 0.5) × factor; 0 while the factor is unassigned).
pub fn effective(conn: &Connection) -> Result<HashMap<String, Submitter>, QueueError> {
    Ok(records(conn)?
        .into_iter()
        .map(|s| (s.name.clone(), s))
        .collect())
}

/// Every record, in name order (see [`effective`]).
pub fn records(conn: &Connection) -> Result<Vec<Submitter>, QueueError> {
    let mut st = conn.prepare_cached(
        "SELECT name, priority, factor, resources_used, weighted_resources_used, \
         accumulated_usage, weighted_accumulated_usage, begin_usage_time, last_usage_time, \
         floor, ceiling FROM accountant ORDER BY name",
    )?;
    let rows = st.query_map([], |r| {
        let priority: f64 = r.get(1)?;
        let factor: f64 = r.get(2)?;
        Ok(Submitter {
            name: r.get(0)?,
            priority,
            factor,
            effective: priority.max(MIN_PRIORITY) * factor,
            resources_used: r.get(3)?,
            weighted_resources_used: r.get(4)?,
            accumulated_usage: r.get(5)?,
            weighted_accumulated_usage: r.get(6)?,
            begin_usage_time: r.get(7)?,
            last_usage_time: r.get(8)?,
            floor: r.get(9)?,
            ceiling: r.get(10)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

// --- Edits (tern_userprio) -------------------------------------------------

/// Sets the real priority of `name` (creating its record). The next update
/// still raises it to at least 0.5.
pub fn set_priority(
    conn: &Connection,
    name: &str,
    priority: f64,
    now: i64,
    knobs: &Knobs,
) -> Result<(), QueueError> {
    ensure(conn, name, now, knobs)?;
    conn.execute(
        "UPDATE accountant SET priority = ?2 WHERE name = ?1",
        params![name, priority],
    )?;
    Ok(())
}

/// Sets the priority factor of `name` (creating its record); below 1 it is
/// clamped to 1.
pub fn set_factor(
    conn: &Connection,
    name: &str,
    factor: f64,
    now: i64,
    knobs: &Knobs,
) -> Result<(), QueueError> {
    ensure(conn, name, now, knobs)?;
    conn.execute(
        "UPDATE accountant SET factor = ?2 WHERE name = ?1",
        params![name, factor.max(1.0)],
    )?;
    Ok(())
}

/// Forgets the accumulated usage of `name` (or, with `None`, of everyone):
/// both usages become 0 and BeginUsageTime `now`. Priorities are unchanged.
pub fn reset_usage(conn: &Connection, name: Option<&str>, now: i64) -> Result<(), QueueError> {
    let set = "UPDATE accountant SET accumulated_usage = 0, weighted_accumulated_usage = 0, \
               begin_usage_time = ?1";
    match name {
        Some(n) => conn.execute(&format!("{set} WHERE name = ?2"), params![now, n])?,
        None => conn.execute(set, params![now])?,
    };
    Ok(())
}

/// Removes the record of `name`; it is made afresh (priority 0.5, the
/// factor the configuration gives) when the submitter next appears.
/// Returns whether there was one.
pub fn delete(conn: &Connection, name: &str) -> Result<bool, QueueError> {
    conn.execute("DELETE FROM accountant_resources WHERE name = ?1", [name])?;
    Ok(conn.execute("DELETE FROM accountant WHERE name = ?1", [name])? > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_700_000_000;
    const DAY: i64 = 86400;

    fn db() -> Connection {
        let mut c = Connection::open_in_memory().unwrap();
        crate::queue::schema::migrate(&mut c).unwrap();
        c
    }

    fn prio(c: &Connection, name: &str) -> f64 {
        effective(c).unwrap()[name].priority
    }

    fn run(c: &Connection, w: f64, now: i64) {
        update(c, &[("alice@ws".into(), w)], now, &Knobs::default()).unwrap();
    }

    #[test]
    fn a_new_submitter_starts_at_the_floor_with_the_default_factor() {
        let c = db();
        ensure(&c, "alice@ws", T0, &Knobs::default()).unwrap();
        ensure(&c, "nice-user.bob@ws", T0, &Knobs::default()).unwrap();
        let e = effective(&c).unwrap();
        assert_eq!(e["alice@ws"].priority, 0.5);
        assert_eq!(e["alice@ws"].factor, 1000.0);
        assert_eq!(e["alice@ws"].effective, 500.0);
        assert_eq!(e["nice-user.bob@ws"].factor, 1e10);
        assert_eq!(e["alice@ws"].ceiling, -1.0);
        assert_eq!(e["alice@ws"].floor, 0.0);
    }

    #[test]
    fn the_first_update_only_starts_the_clock() {
        let c = db();
        run(&c, 100.0, T0);
        assert_eq!(last_update(&c).unwrap(), Some(T0));
        assert_eq!(prio(&c, "alice@ws"), 0.5);
        assert_eq!(
            effective(&c).unwrap()["alice@ws"].weighted_resources_used,
            100.0
        );
    }

    #[test]
    fn usage_of_100_approaches_100_in_one_large_step() {
        let c = db();
        run(&c, 100.0, T0);
        run(&c, 100.0, T0 + 30 * DAY);
        let p = prio(&c, "alice@ws");
        assert!((p - 100.0).abs() < 1e-6, "{p}");
        // One half-life from the floor: exactly halfway.
        let c = db();
        run(&c, 100.0, T0);
        run(&c, 100.0, T0 + DAY);
        assert_eq!(prio(&c, "alice@ws"), 0.5 * 0.5 + 100.0 * 0.5);
    }

    #[test]
    fn usage_of_100_approaches_100_in_many_small_steps() {
        let c = db();
        run(&c, 100.0, T0);
        // A pass every 10 minutes for 30 half-lives.
        let mut t = T0;
        while t < T0 + 30 * DAY {
            t += 600;
            run(&c, 100.0, t);
        }
        let p = prio(&c, "alice@ws");
        assert!((p - 100.0).abs() < 1e-6, "{p}");
        let e = &effective(&c).unwrap()["alice@ws"];
        assert_eq!(e.weighted_accumulated_usage, 100.0 * 30.0 * DAY as f64);
        assert_eq!(e.begin_usage_time, T0 + 600);
        assert_eq!(e.last_usage_time, t);
    }

    #[test]
    fn priority_halves_each_half_life_after_usage_stops() {
        let c = db();
        run(&c, 0.0, T0);
        set_priority(&c, "alice@ws", 100.0, T0, &Knobs::default()).unwrap();
        run(&c, 0.0, T0 + DAY);
        assert_eq!(prio(&c, "alice@ws"), 50.0);
        run(&c, 0.0, T0 + 2 * DAY);
        assert_eq!(prio(&c, "alice@ws"), 25.0);
        // Two days in one step: the same 25.
        let c = db();
        run(&c, 0.0, T0);
        set_priority(&c, "alice@ws", 100.0, T0, &Knobs::default()).unwrap();
        run(&c, 0.0, T0 + 2 * DAY);
        assert_eq!(prio(&c, "alice@ws"), 25.0);
    }

    #[test]
    fn priority_never_falls_below_the_floor() {
        let c = db();
        run(&c, 0.0, T0);
        set_priority(&c, "alice@ws", 0.1, T0, &Knobs::default()).unwrap();
        run(&c, 0.0, T0 + 1);
        assert_eq!(prio(&c, "alice@ws"), 0.5);
        run(&c, 0.0, T0 + 365 * DAY);
        assert_eq!(prio(&c, "alice@ws"), 0.5);
        // A repeated or backwards clock changes nothing.
        run(&c, 100.0, T0 + 365 * DAY);
        run(&c, 100.0, T0);
        assert_eq!(prio(&c, "alice@ws"), 0.5);
        assert_eq!(last_update(&c).unwrap(), Some(T0));
    }

    #[test]
    fn the_factor_is_kept_across_configuration_changes() {
        let c = db();
        run(&c, 1.0, T0);
        let changed = Knobs {
            default_factor: 7.0,
            ..Knobs::default()
        };
        update(&c, &[("alice@ws".into(), 1.0)], T0 + 60, &changed).unwrap();
        ensure(&c, "alice@ws", T0 + 60, &changed).unwrap();
        ensure(&c, "bob@ws", T0 + 60, &changed).unwrap();
        let e = effective(&c).unwrap();
        assert_eq!(e["alice@ws"].factor, 1000.0);
        assert_eq!(e["bob@ws"].factor, 7.0);
        set_factor(&c, "bob@ws", 0.2, T0, &changed).unwrap();
        assert_eq!(effective(&c).unwrap()["bob@ws"].factor, 1.0);
    }

    #[test]
    fn a_claim_ended_between_updates_is_charged() {
        let c = db();
        run(&c, 0.0, T0);
        // A 100-cpu claim made at T0 + 100 and freed half a day later.
        let slot = SlotRow {
            name: "slot1_1".into(),
            kind: SlotKind::Dynamic,
            slot_id: 1,
            sub_id: 1,
            slot_type: 0,
            parent: Some("slot1".into()),
            cpus: 100,
            memory: 1,
            disk: 1,
            state: "Claimed".into(),
            activity: "Busy".into(),
            entered_state: T0 + 100,
            entered_activity: T0 + 100,
            remote_user: Some("alice@ws".into()),
            remote_owner: Some("alice".into()),
            cluster: Some(1),
            proc: Some(0),
            claim: Some("c1".into()),
            job_start: Some(T0 + 100),
            total_cpus: 100,
            total_memory: 1,
            total_disk: 1,
        };
        unmatched(&c, &slot, T0 + 100 + DAY / 2).unwrap();
        run(&c, 0.0, T0 + DAY);
        let e = &effective(&c).unwrap()["alice@ws"];
        assert_eq!(e.accumulated_usage, (DAY / 2) as f64);
        assert_eq!(e.weighted_accumulated_usage, 100.0 * (DAY / 2) as f64);
        assert_eq!(e.last_usage_time, T0 + DAY);
        // As if it had held 50 cpus all day.
        assert_eq!(e.priority, 0.5 * 0.5 + 50.0 * 0.5);
    }

    #[test]
    fn resets_and_deletes() {
        let c = db();
        run(&c, 2.0, T0);
        run(&c, 2.0, T0 + 3600);
        reset_usage(&c, Some("alice@ws"), T0 + 7200).unwrap();
        let e = &effective(&c).unwrap()["alice@ws"];
        assert_eq!(e.weighted_accumulated_usage, 0.0);
        assert_eq!(e.begin_usage_time, T0 + 7200);
        assert!(e.priority > 0.5);
        assert!(delete(&c, "alice@ws").unwrap());
        assert!(!delete(&c, "alice@ws").unwrap());
        assert!(effective(&c).unwrap().is_empty());
    }
}
