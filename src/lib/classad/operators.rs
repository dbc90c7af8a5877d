//! The operators' semantics, as HTCondor's `operators.cpp` has them: how a
//! value acts as a condition, the unary and binary operators (arithmetic
//! with integer overflow wrapping, time arithmetic, comparisons with
//! case-insensitive strings, `=?=`/`is`, the bitwise and shift
//! operators). [`super::eval`] applies them while it walks an expression.

use super::ast::{BinOp, UnOp};
use super::value::{AbsTime, Value};

/// How a value acts as a condition (`&&`, `||`, `?:`, `ifThenElse`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Truth {
    True,
    False,
    Undefined,
    Error,
}

/// Bools and numbers are conditions (non-zero is true); undefined stays
/// undefined; anything else is an error.
pub fn truth(v: &Value) -> Truth {
    match *v {
        Value::Bool(b) => {
            if b {
                Truth::True
            } else {
                Truth::False
            }
        }
        Value::Int(i) => {
            if i != 0 {
                Truth::True
            } else {
                Truth::False
            }
        }
        Value::Real(r) => {
            if r != 0.0 {
                Truth::True
            } else {
                Truth::False
            }
        }
        Value::Undefined => Truth::Undefined,
        _ => Truth::Error,
    }
}

/// [`truth`] of a value no longer needed.
#[inline]
pub fn truth_of(v: Value) -> Truth {
    let t = truth(&v);
    discard(v);
    t
}

/// Drops a value, without a call to the drop glue for the kinds that own
/// nothing (most values in conditions and comparisons).
#[inline(always)]
pub(super) fn discard(v: Value) {
    match v {
        Value::Str(_) | Value::List(_) | Value::Ad(_) => drop(v),
        // Owns nothing: forgetting it is dropping it.
        _ => std::mem::forget(v),
    }
}

/// A unary operator applied to a value.
pub fn unary(op: UnOp, v: Value) -> Value {
    match (op, v) {
        (_, Value::Error) => Value::Error,
        (_, Value::Undefined) => Value::Undefined,
        (UnOp::Neg, Value::Int(i)) => Value::Int(i.wrapping_neg()),
        // Only binary arithmetic turns +infinity into error (-(-INF) is INF).
        (UnOp::Neg, Value::Real(r)) => Value::Real(-r),
        (UnOp::Neg, Value::RelTime(r)) => Value::RelTime(-r),
        (UnOp::Plus, v @ (Value::Int(_) | Value::Real(_) | Value::RelTime(_))) => v,
        (UnOp::Not, Value::Bool(b)) => Value::Bool(!b),
        (UnOp::Not, Value::Int(i)) => Value::Bool(i == 0),
        (UnOp::Not, Value::Real(r)) => Value::Bool(r == 0.0),
        (UnOp::BitNot, Value::Int(i)) => Value::Int(!i),
        _ => Value::Error,
    }
}

/// A real result: +infinity becomes `error`, as in HTCondor.
fn real_result(r: f64) -> Value {
    if r == f64::INFINITY {
        Value::Error
    } else {
        Value::Real(r)
    }
}

/// A strict binary operator (everything but `&&` and `||`).
pub fn binary(op: BinOp, l: Value, r: Value) -> Value {
    use BinOp::*;
    match op {
        MetaEq => return identical(&l, &r),
        MetaNe => {
            return match identical(&l, &r) {
                Value::Bool(b) => Value::Bool(!b),
                other => other,
            };
        }
        _ => {}
    }
    if l.is_error() || r.is_error() {
        return Value::Error;
    }
    if l.is_undefined() || r.is_undefined() {
        return Value::Undefined;
    }
    match op {
        Add | Sub | Mul | Div | Mod => arith(op, l, r),
        Lt | Le | Gt | Ge | Eq | Ne => compare(op, &l, &r),
        BitAnd | BitOr | BitXor | Shl | Shr | UShr => bitwise(op, l, r),
        And | Or | MetaEq | MetaNe => unreachable!("handled above"),
    }
}

/// What [`binary`] gives for two integers, for the operators that need no
/// more than a machine instruction (`None` for the others).
#[inline]
pub(super) fn int_binary(op: BinOp, x: i64, y: i64) -> Option<Value> {
    use BinOp::*;
    Some(match op {
        Add => Value::Int(x.wrapping_add(y)),
        Sub => Value::Int(x.wrapping_sub(y)),
        Mul => Value::Int(x.wrapping_mul(y)),
        Lt => Value::Bool(x < y),
        Le => Value::Bool(x <= y),
        Gt => Value::Bool(x > y),
        Ge => Value::Bool(x >= y),
        Eq | MetaEq => Value::Bool(x == y),
        Ne | MetaNe => Value::Bool(x != y),
        _ => return None,
    })
}

fn num(v: &Value) -> Option<Num> {
    match *v {
        Value::Int(i) => Some(Num::I(i)),
        Value::Bool(b) => Some(Num::I(b as i64)),
        Value::Real(r) => Some(Num::R(r)),
        _ => None,
    }
}

#[derive(Clone, Copy)]
enum Num {
    I(i64),
    R(f64),
}

impl Num {
    fn f(self) -> f64 {
        match self {
            Num::I(i) => i as f64,
            Num::R(r) => r,
        }
    }
}

fn arith(op: BinOp, l: Value, r: Value) -> Value {
    use BinOp::*;
    if let (Some(a), Some(b)) = (num(&l), num(&r)) {
        return match (a, b) {
            (Num::I(x), Num::I(y)) => match op {
                Add => Value::Int(x.wrapping_add(y)),
                Sub => Value::Int(x.wrapping_sub(y)),
                Mul => Value::Int(x.wrapping_mul(y)),
                Div => {
                    if y == 0 {
                        Value::Error
                    } else if x == i64::MIN && y == -1 {
                        Value::Int(i64::MAX)
                    } else {
                        Value::Int(x / y)
                    }
                }
                Mod => {
                    if y == 0 {
                        Value::Error
                    } else {
                        Value::Int(x.wrapping_rem(y))
                    }
                }
                _ => Value::Error,
            },
            (a, b) => {
                let (x, y) = (a.f(), b.f());
                match op {
                    Add => real_result(x + y),
                    Sub => real_result(x - y),
                    Mul => real_result(x * y),
                    Div => real_result(x / y),
                    _ => Value::Error,
                }
            }
        };
    }
    time_arith(op, &l, &r)
}

fn time_arith(op: BinOp, l: &Value, r: &Value) -> Value {
    use BinOp::*;
    match (op, l, r) {
        (Add, Value::AbsTime(a), Value::RelTime(d))
        | (Add, Value::RelTime(d), Value::AbsTime(a)) => Value::AbsTime(AbsTime {
            secs: a.secs.wrapping_add(*d as i64),
            offset: a.offset,
        }),
        (Sub, Value::AbsTime(a), Value::RelTime(d)) => Value::AbsTime(AbsTime {
            secs: a.secs.wrapping_sub(*d as i64),
            offset: a.offset,
        }),
        (Sub, Value::AbsTime(a), Value::AbsTime(b)) => Value::RelTime((a.secs - b.secs) as f64),
        (Add, Value::RelTime(a), Value::RelTime(b)) => Value::RelTime(a + b),
        (Sub, Value::RelTime(a), Value::RelTime(b)) => Value::RelTime(a - b),
        (Mul, Value::RelTime(a), other) | (Mul, other, Value::RelTime(a)) => match num(other) {
            Some(n) if !matches!(other, Value::Bool(_)) => Value::RelTime(a * n.f()),
            _ => Value::Error,
        },
        (Div, Value::RelTime(a), other) => match num(other) {
            Some(n) if !matches!(other, Value::Bool(_)) => {
                let d = n.f();
                if d == 0.0 {
                    Value::Error
                } else {
                    Value::RelTime(a / d)
                }
            }
            _ => Value::Error,
        },
        _ => Value::Error,
    }
}

fn compare(op: BinOp, l: &Value, r: &Value) -> Value {
    use std::cmp::Ordering;
    if let (Value::Str(a), Value::Str(b)) = (l, r)
        && matches!(op, BinOp::Eq | BinOp::Ne)
    {
        let same = a == b || a.eq_ignore_ascii_case(b);
        return Value::Bool(same == (op == BinOp::Eq));
    }
    let ord: Option<Ordering> = match (l, r) {
        (Value::Str(a), Value::Str(b)) => Some(cmp_ignore_case(a, b)),
        (Value::AbsTime(a), Value::AbsTime(b)) => Some(a.secs.cmp(&b.secs)),
        (Value::RelTime(a), Value::RelTime(b)) => a.partial_cmp(b),
        _ => match (num(l), num(r)) {
            (Some(Num::I(a)), Some(Num::I(b))) => Some(a.cmp(&b)),
            (Some(a), Some(b)) => {
                let (x, y) = (a.f(), b.f());
                return Value::Bool(match op {
                    BinOp::Lt => x < y,
                    BinOp::Le => x <= y,
                    BinOp::Gt => x > y,
                    BinOp::Ge => x >= y,
                    BinOp::Eq => x == y,
                    _ => x != y,
                });
            }
            _ => return Value::Error,
        },
    };
    let Some(o) = ord else {
        return Value::Bool(op == BinOp::Ne);
    };
    Value::Bool(match op {
        BinOp::Lt => o == Ordering::Less,
        BinOp::Le => o != Ordering::Greater,
        BinOp::Gt => o == Ordering::Greater,
        BinOp::Ge => o != Ordering::Less,
        BinOp::Eq => o == Ordering::Equal,
        _ => o != Ordering::Equal,
    })
}

/// Byte-wise comparison ignoring ASCII case, as `strcasecmp`.
pub fn cmp_ignore_case(a: &str, b: &str) -> std::cmp::Ordering {
    a.bytes()
        .map(|c| c.to_ascii_lowercase())
        .cmp(b.bytes().map(|c| c.to_ascii_lowercase()))
}

/// `=?=`: same type and same value, strings case-sensitively.
pub fn identical(l: &Value, r: &Value) -> Value {
    Value::Bool(match (l, r) {
        // HTCondor 24.0 cannot compare two ads, nor two lists of the same
        // kind (both written in the source, or both made by functions), for
        // identity; a written list and a made one are simply not identical.
        (Value::Ad(_), Value::Ad(_)) => return Value::Error,
        (Value::List(a), Value::List(b)) => {
            if a.scope.is_some() == b.scope.is_some() {
                return Value::Error;
            }
            false
        }
        (Value::Undefined, Value::Undefined) | (Value::Error, Value::Error) => true,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Int(a), Value::Int(b)) => a == b,
        (Value::Real(a), Value::Real(b)) => a == b,
        (Value::Str(a), Value::Str(b)) => a == b,
        // `=?=` on two times also compares their zone offsets (HTCondor's
        // compareAbsoluteTimes), where `==` compares the instants only.
        (Value::AbsTime(a), Value::AbsTime(b)) => a.secs == b.secs && a.offset == b.offset,
        (Value::RelTime(a), Value::RelTime(b)) => a == b,
        _ => false,
    })
}

fn bitwise(op: BinOp, l: Value, r: Value) -> Value {
    use BinOp::*;
    let (Value::Int(a), Value::Int(b)) = (l, r) else {
        return Value::Error;
    };
    let sh = (b & 63) as u32;
    Value::Int(match op {
        BitAnd => a & b,
        BitOr => a | b,
        BitXor => a ^ b,
        Shl => a.wrapping_shl(sh),
        // HTCondor shifts a negative number right one place at a time,
        // setting the sign bit each time, at most 64 times; a negative count
        // leaves it alone.
        Shr if a < 0 => {
            let mut v = a;
            for _ in 0..b.clamp(0, 64) {
                v = (v >> 1) | i64::MIN;
            }
            v
        }
        Shr => a.wrapping_shr(sh),
        // A negative number: one logical place, then (count - 1) more, with
        // the count taken mod 64 as the hardware does (so `-1 >>> 0` is 0).
        UShr if a < 0 => ((a >> 1) & i64::MAX).wrapping_shr((b.wrapping_sub(1) & 63) as u32),
        UShr => a.wrapping_shr(sh),
        _ => return Value::Error,
    })
}
