//! Matchmaking: whether two ads match, and how one ranks the other.
//!
//! A matches B when A's `Requirements`, evaluated with MY = A and TARGET = B,
//! is `true` or a non-zero number. A symmetric match needs both directions.
//! A `Rank` that is not a number counts as 0.0.

use std::rc::Rc;

use super::ad::ClassAd;
use super::eval::{Evaluator, MatchContext};
use super::value::Value;

impl MatchContext {
    /// Evaluates `name` of the left ad in the match.
    pub fn eval_left(&self, ev: &mut Evaluator, key: &str) -> Value {
        ev.select(Value::Ad(self.left().clone()), key, self.left())
    }
    /// Evaluates `name` of the right ad in the match.
    pub fn eval_right(&self, ev: &mut Evaluator, key: &str) -> Value {
        ev.select(Value::Ad(self.right().clone()), key, self.right())
    }
    /// Whether the left ad's Requirements accept the right ad.
    pub fn left_matches_right(&self, ev: &mut Evaluator) -> bool {
        self.eval_left(ev, "requirements").is_true()
    }
    /// Whether the right ad's Requirements accept the left ad.
    pub fn right_matches_left(&self, ev: &mut Evaluator) -> bool {
        self.eval_right(ev, "requirements").is_true()
    }
    /// Both directions.
    pub fn symmetric(&self, ev: &mut Evaluator) -> bool {
        self.left_matches_right(ev) && self.right_matches_left(ev)
    }
    /// The left ad's Rank of the right ad (0.0 when not a number).
    pub fn left_rank(&self, ev: &mut Evaluator) -> f64 {
        rank_of(self.eval_left(ev, "rank"))
    }
    /// The right ad's Rank of the left ad (0.0 when not a number).
    pub fn right_rank(&self, ev: &mut Evaluator) -> f64 {
        rank_of(self.eval_right(ev, "rank"))
    }
}

fn rank_of(v: Value) -> f64 {
    match v {
        Value::Int(i) => i as f64,
        Value::Real(r) => r,
        Value::Bool(b) => b as i64 as f64,
        _ => 0.0,
    }
}

/// Whether `a` and `b` match in both directions.
pub fn symmetric_match(a: &Rc<ClassAd>, b: &Rc<ClassAd>) -> bool {
    let m = MatchContext::new(a.clone(), b.clone());
    m.symmetric(&mut Evaluator::new())
}

#[cfg(test)]
mod tests {
    use super::super::parse_ad;
    use super::*;

    fn ad(s: &str) -> Rc<ClassAd> {
        Rc::new(parse_ad(s).unwrap())
    }

    #[test]
    fn requirements_both_ways() {
        let job = ad(
            "[RequestMemory=2048; Requirements = TARGET.Memory >= RequestMemory; Rank = TARGET.Memory]",
        );
        let mach = ad("[Memory=4096; Requirements = TARGET.RequestMemory <= Memory]");
        let m = MatchContext::new(job.clone(), mach.clone());
        let mut ev = Evaluator::new();
        assert!(m.symmetric(&mut ev));
        assert_eq!(m.left_rank(&mut ev), 4096.0);
        let small = ad("[Memory=1024; Requirements = true]");
        assert!(!symmetric_match(&job, &small));
    }

    #[test]
    fn numbers_count_as_true_strings_do_not() {
        let a = ad("[Requirements = 2.5]");
        let b = ad("[Requirements = \"yes\"]");
        let t = ad("[Requirements = true]");
        assert!(symmetric_match(&a, &t));
        assert!(!symmetric_match(&b, &t));
    }
}
