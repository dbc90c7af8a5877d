//! Math: `floor`, `ceiling`/`ceil`, `round`, `pow`, `quantize`, `random`.

use std::cell::Cell;

use super::{eval_args, f64_to_i64, to_real};
use crate::classad::ast::Expr;
use crate::classad::eval::{Evaluator, Scope};
use crate::classad::value::Value;

/// The shared shape of `floor`, `ceiling` and `round`: an int stays as it
/// is; anything else goes through `real()` and is rounded to an int (x86
/// cast semantics, so out-of-range results are `i64::MIN`).
fn rounding(ev: &mut Evaluator, args: &[Expr], scope: &Scope, f: fn(f64) -> f64) -> Value {
    let [a] = args else {
        return Value::Error;
    };
    match ev.eval(a, scope) {
        Value::Int(i) => Value::Int(i),
        v => match to_real(&v) {
            Value::Real(r) => Value::Int(f64_to_i64(f(r))),
            _ => Value::Error,
        },
    }
}

pub fn floor(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    rounding(ev, args, scope, f64::floor)
}

pub fn ceiling(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    rounding(ev, args, scope, f64::ceil)
}

/// `round(x)` rounds half to even, as C's `rint` does.
pub fn round(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    rounding(ev, args, scope, f64::round_ties_even)
}

/// `pow(b, e)`: an int to a non-negative int power is an int (rounded from
/// the floating-point power, so overflow gives `i64::MIN`); anything else
/// is a real.
pub fn pow(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    if args.len() != 2 {
        return Value::Error;
    }
    let v = eval_args(ev, args, scope);
    if let (Value::Int(b), Value::Int(e)) = (&v[0], &v[1])
        && *e >= 0
    {
        let p = (*b as f64).powf(*e as f64);
        // Differs from HTCondor 24.0 (which gives -26 for pow(-3, 3)):
        // HTCondor computes (long long)(pow(b, e) + 0.5), which is off by
        // one for every negative result. tern rounds the magnitude the same
        // way and keeps the sign, so pow(-3, 3) is -27 and non-negative
        // results are unchanged.
        let r = if p < 0.0 {
            f64_to_i64(-p + 0.5).wrapping_neg()
        } else {
            f64_to_i64(p + 0.5)
        };
        return Value::Int(r);
    }
    match (to_real(&v[0]), to_real(&v[1])) {
        (Value::Real(b), Value::Real(e)) => Value::Real(b.powf(e)),
        _ => Value::Error,
    }
}

/// `quantize(a, b)`: the smallest multiple of `b` not below `a`, in `b`'s
/// type. With a list `b`, the first element not below `a`, else a
/// multiple of the last element. A base within 1e-8 of zero returns `a`
/// unchanged.
pub fn quantize(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    if args.len() != 2 {
        return Value::Error;
    }
    let v = eval_args(ev, args, scope);
    let (arg, mut base) = (v[0].clone(), v[1].clone());
    let Value::Real(rval) = to_real(&arg) else {
        return Value::Error;
    };
    let rbase;
    if let Value::List(l) = &base {
        let items = ev.list_values(&l.clone(), scope);
        // An empty list means "don't quantize".
        let mut last = Value::Real(0.0);
        let mut last_real = 0.0;
        for item in items {
            match to_real(&item) {
                Value::Real(r) => {
                    if r >= rval {
                        // HTCondor returns the element itself, whatever
                        // its type (quantize(3, {"4"}) is "4").
                        return item;
                    }
                    last_real = r;
                    last = item;
                }
                _ => return Value::Error,
            }
        }
        base = last;
        rbase = last_real;
    } else {
        match to_real(&base) {
            Value::Real(r) => rbase = r,
            _ => return Value::Error,
        }
    }
    if let Value::Int(ibase) = base {
        if ibase == 0 {
            return arg;
        }
        if let Value::Int(ival) = arg {
            return Value::Int(
                ival.wrapping_add(ibase.wrapping_sub(1))
                    .wrapping_div(ibase)
                    .wrapping_mul(ibase),
            );
        }
        return Value::Real((rval / ibase as f64).ceil() * ibase as f64);
    }
    if (-1e-8..=1e-8).contains(&rbase) {
        return arg;
    }
    Value::Real((rval / rbase).ceil() * rbase)
}

thread_local! {
    static RNG: Cell<u64> = const { Cell::new(0) };
}

/// A xorshift64* generator seeded from the clock and the thread; enough for
/// `random()`, which promises no particular sequence.
fn next_random() -> u64 {
    RNG.with(|s| {
        let mut x = s.get();
        if x == 0 {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0);
            let addr = std::ptr::from_ref(s) as usize as u64;
            x = (t ^ addr.rotate_left(32)) | 1;
        }
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        s.set(x);
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    })
}

/// `random([x])`: an int in `[0, x)` for an int `x` (taken as a C `int`,
/// as HTCondor does), a real in `[0, x)` for a real, a real in `[0, 1)`
/// without an argument. A bound that is not positive is an error (HTCondor
/// fails the whole evaluation there).
pub fn random(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    let arg = match args {
        [] => Value::Real(1.0),
        [a] => ev.eval(a, scope),
        _ => return Value::Error,
    };
    match arg {
        Value::Int(i) => {
            let max = i as i32;
            if max <= 0 {
                return Value::Error;
            }
            let r = (next_random() >> 33) as i64; // in [0, 2^31)
            Value::Int(r % max as i64)
        }
        Value::Real(r) => {
            if r.is_nan() || r <= 0.0 {
                return Value::Error;
            }
            let unit = (next_random() >> 11) as f64 / (1u64 << 53) as f64;
            Value::Real(r * unit)
        }
        _ => Value::Error,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{check, ev};

    #[test]
    fn rounding() {
        check(&[
            ("floor(-2.5)", "-3"),
            ("floor(2.5)", "2"),
            ("floor(3)", "3"),
            ("floor(\"2.7\")", "2"),
            ("floor(\"x\")", "error"),
            ("floor(true)", "1"),
            ("floor(undefined)", "error"),
            ("floor(error)", "error"),
            ("floor(1e300)", "-9223372036854775808"),
            ("floor(real(\"NaN\"))", "-9223372036854775808"),
            ("floor(relTime(5))", "5"),
            ("floor(absTime(5))", "5"),
            ("floor({})", "error"),
            ("floor()", "error"),
            ("ceiling(2.1)", "3"),
            ("ceil(-2.1)", "-2"),
            ("ceil(\"2.1\")", "3"),
            ("round(2.5)", "2"),
            ("round(3.5)", "4"),
            ("round(-2.5)", "-2"),
            ("round(0.5)", "0"),
            ("round(1.5)", "2"),
            ("round(-0.4)", "0"),
            ("round(\"2.5\")", "2"),
            ("round(true)", "1"),
            ("round(9.3e18)", "-9223372036854775808"),
        ]);
    }

    #[test]
    fn pow() {
        check(&[
            // Differs from HTCondor 24.0, which gives -26 and -7.
            ("pow(-3, 3)", "-27"),
            ("pow(-2, 3)", "-8"),
            ("pow(-2, 63)", "-9223372036854775808"),
            ("pow(2, 63)", "-9223372036854775808"),
            ("pow(2, 64)", "-9223372036854775808"),
            ("pow(2, -2)", "2.500000000000000E-01"),
            ("pow(9, 0.5)", "3.000000000000000E+00"),
            ("pow(2, 10)", "1024"),
            ("pow(0, 0)", "1"),
            ("pow(-8, 1.0/3)", "real(\"NaN\")"),
            ("pow(\"2\", 3)", "8.000000000000000E+00"),
            ("pow(2, \"3\")", "8.000000000000000E+00"),
            ("pow(true, 2)", "1.000000000000000E+00"),
            ("pow(2, true)", "2.000000000000000E+00"),
            ("pow(undefined, 2)", "error"),
            ("pow(2, undefined)", "error"),
            ("pow(error, 2)", "error"),
            ("pow(2)", "error"),
            ("pow(10, 400)", "-9223372036854775808"),
            ("pow(2.0, 3)", "8.000000000000000E+00"),
            ("pow(-1, 0)", "1"),
            ("pow(3, 40)", "-9223372036854775808"),
            ("pow(7, 22)", "3909821048582988288"),
        ]);
    }

    #[test]
    fn quantize() {
        check(&[
            ("quantize(5, 4)", "8"),
            ("quantize(20, {2, 4, 8})", "24"),
            ("quantize(2.5, 1)", "3.000000000000000E+00"),
            ("quantize(7.2, 1.2)", "7.199999999999999E+00"),
            ("quantize(8, 4)", "8"),
            ("quantize(0, 4)", "0"),
            ("quantize(-5, 4)", "0"),
            ("quantize(5, 0)", "5"),
            ("quantize(5.5, 0)", "5.500000000000000E+00"),
            ("quantize(5, 0.0)", "5"),
            ("quantize(5, 1e-9)", "5"),
            ("quantize(5, 2.5)", "5.000000000000000E+00"),
            ("quantize(5, -4)", "0"),
            ("quantize(3, {})", "3"),
            ("quantize(3, {4.5, 8})", "4.500000000000000E+00"),
            ("quantize(5, {4.5, 8})", "8"),
            ("quantize(9, {4.5, 8})", "16"),
            ("quantize(9, {4.5, 8.0})", "1.600000000000000E+01"),
            ("quantize(3, {\"a\"})", "error"),
            ("quantize(3, {undefined})", "error"),
            ("quantize(3, {1, undefined})", "error"),
            ("quantize(3, {\"4\"})", "\"4\""),
            ("quantize(\"5\", 4)", "8.000000000000000E+00"),
            ("quantize(5, \"4\")", "8.000000000000000E+00"),
            ("quantize(true, 4)", "4.000000000000000E+00"),
            ("quantize(5, true)", "5.000000000000000E+00"),
            ("quantize(undefined, 4)", "error"),
            ("quantize(5, undefined)", "error"),
            ("quantize(error, 4)", "error"),
            ("quantize(5, error)", "error"),
            ("quantize(5)", "error"),
            ("quantize(9223372036854775807, 2)", "-9223372036854775808"),
            ("quantize(5.5, 2)", "6.000000000000000E+00"),
            ("quantize(5, -9223372036854775808)", "0"),
        ]);
    }

    #[test]
    fn random() {
        check(&[
            ("random(10) < 10", "true"),
            ("random(10) >= 0", "true"),
            ("random(1.5) < 1.5", "true"),
            ("isReal(random())", "true"),
            ("random() < 1", "true"),
            ("random(0)", "error"),
            ("random(-5)", "error"),
            ("random(0.0)", "error"),
            ("random(\"x\")", "error"),
            ("random(1, 2)", "error"),
            ("random(undefined)", "error"),
            ("random(true)", "error"),
            ("random(2147483648)", "error"),
            ("random(4294967297)", "0"),
            ("random(1)", "0"),
        ]);
        for _ in 0..200 {
            let v: i64 = ev("random(3)").parse().unwrap();
            assert!((0..3).contains(&v));
        }
    }
}
