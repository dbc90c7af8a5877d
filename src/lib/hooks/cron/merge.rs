//! Merging published startd cron ads into a slot ad (spec 8.3, HTCondor's
//! `StartdNamedClassAd::ShouldMergeInto`): the first rule that applies of
//! SlotMergeConstraint (the slot as TARGET), SlotName or Name (a prefix of
//! the slot's Name), SlotTypeId, SlotId, else every slot; `_SLOTS` narrows
//! it further. The attributes that steer the merge are not merged.

use std::rc::Rc;

use super::store::{HookAd, Published};
use crate::classad::eval::{Evaluator, MatchContext};
use crate::classad::{ClassAd, Value};

const STEERING: [&str; 5] = [
    "Name",
    "SlotId",
    "SlotMergeConstraint",
    "SlotName",
    "SlotTypeId",
];

fn lit<'a>(ad: &'a ClassAd, name: &str) -> Option<&'a Value> {
    ad.get(name).and_then(|e| e.literal_value())
}

fn lit_str(ad: &ClassAd, name: &str) -> Option<String> {
    match lit(ad, name) {
        Some(Value::Str(s)) => Some(s.to_string()),
        _ => None,
    }
}

fn lit_int(ad: &ClassAd, name: &str) -> Option<i64> {
    match lit(ad, name) {
        Some(Value::Int(i)) => Some(*i),
        _ => None,
    }
}

/// Whether `h` merges into `slot`.
pub fn merges_into(h: &HookAd, slot: &ClassAd) -> bool {
    if !h.slots.is_empty() && !lit_int(slot, "SlotID").is_some_and(|id| h.slots.contains(&id)) {
        return false;
    }
    if let Some(c) = h.ad.get("SlotMergeConstraint") {
        let ctx = MatchContext::new(Rc::new(h.ad.clone()), Rc::new(slot.clone()));
        return Evaluator::new().eval(c, ctx.left()).is_true();
    }
    let from = lit_str(&h.ad, "SlotName").or_else(|| lit_str(&h.ad, "Name"));
    if let (Some(from), Some(to)) = (from, lit_str(slot, "Name"))
        && !from.is_empty()
    {
        return to.starts_with(&from);
    }
    if let (Some(from), Some(to)) = (lit_int(&h.ad, "SlotTypeId"), lit_int(slot, "SlotTypeID")) {
        return from == to;
    }
    if let (Some(from), Some(to)) = (lit_int(&h.ad, "SlotId"), lit_int(slot, "SlotID")) {
        return from == to;
    }
    true
}

/// Adds to `slot` every published ad that merges into it, then the jobs'
/// status attributes.
pub fn merge(slot: &mut ClassAd, p: &Published) {
    for h in &p.ads {
        if !merges_into(h, slot) {
            continue;
        }
        for (n, e) in h.ad.iter_shared() {
            if !STEERING.iter().any(|s| s.eq_ignore_ascii_case(n)) {
                slot.insert_shared(n, e.clone());
            }
        }
    }
    for (n, e) in &p.status {
        slot.insert(n, e.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::old::parse_old_ad;

    fn hook(text: &str, slots: &[i64]) -> HookAd {
        HookAd {
            job: "j".into(),
            tag: String::new(),
            ad: parse_old_ad(text).unwrap(),
            slots: slots.to_vec(),
        }
    }

    fn slot(name: &str, id: i64, ty: i64) -> ClassAd {
        parse_old_ad(&format!(
            "Name = \"{name}@h\"\nSlotID = {id}\nSlotTypeID = {ty}\nCpus = {id}\n"
        ))
        .unwrap()
    }

    #[test]
    fn rules_in_order() {
        let s1 = slot("slot1", 1, 1);
        let s2 = slot("slot2", 2, 2);
        let by_name = hook("SlotName = \"slot2\"\nA = 1", &[]);
        assert!(!merges_into(&by_name, &s1) && merges_into(&by_name, &s2));
        let by_id = hook("SlotId = 1\nA = 1", &[]);
        assert!(merges_into(&by_id, &s1) && !merges_into(&by_id, &s2));
        let by_type = hook("SlotTypeId = 2\nA = 1", &[]);
        assert!(!merges_into(&by_type, &s1) && merges_into(&by_type, &s2));
        let by_expr = hook(
            "SlotMergeConstraint = TARGET.Cpus > 1\nSlotId = 1\nA = 1",
            &[],
        );
        assert!(!merges_into(&by_expr, &s1) && merges_into(&by_expr, &s2));
        let all = hook("A = 1", &[]);
        assert!(merges_into(&all, &s1) && merges_into(&all, &s2));
        let listed = hook("A = 1", &[2]);
        assert!(!merges_into(&listed, &s1) && merges_into(&listed, &s2));
    }

    #[test]
    fn steering_attributes_stay_out() {
        let mut s = slot("slot1", 1, 1);
        let p = Published {
            ads: vec![hook("SlotId = 1\nGpuFree = 3", &[])],
            status: vec![],
        };
        merge(&mut s, &p);
        assert_eq!(lit_int(&s, "GpuFree"), Some(3));
        assert_eq!(lit_int(&s, "SlotID"), Some(1));
        assert!(s.spelling("SlotId") == Some("SlotID"));
    }
}
