//! Type tests (`isInteger`, ...) and conversions (`int`, `real`, `string`,
//! `bool`). The time conversions `absTime` and `relTime` live in `time.rs`.

use super::{to_int as conv_int, to_real as conv_real, to_str_value};
use crate::classad::ast::Expr;
use crate::classad::eval::{Evaluator, Scope};
use crate::classad::value::Value;

/// The single argument's value, or `None` when there is not exactly one.
fn one(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Option<Value> {
    match args {
        [a] => Some(ev.eval(a, scope)),
        _ => None,
    }
}

fn is_type(ev: &mut Evaluator, args: &[Expr], scope: &Scope, test: fn(&Value) -> bool) -> Value {
    match one(ev, args, scope) {
        Some(v) => Value::Bool(test(&v)),
        None => Value::Error,
    }
}

pub fn is_undefined(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    is_type(ev, args, scope, |v| matches!(v, Value::Undefined))
}
pub fn is_error(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    is_type(ev, args, scope, |v| matches!(v, Value::Error))
}
pub fn is_string(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    is_type(ev, args, scope, |v| matches!(v, Value::Str(_)))
}
pub fn is_integer(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    is_type(ev, args, scope, |v| matches!(v, Value::Int(_)))
}
pub fn is_real(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    is_type(ev, args, scope, |v| matches!(v, Value::Real(_)))
}
/// True only for the boolean type: `isBoolean(1)` is false.
pub fn is_boolean(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    is_type(ev, args, scope, |v| matches!(v, Value::Bool(_)))
}
pub fn is_list(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    is_type(ev, args, scope, |v| matches!(v, Value::List(_)))
}
pub fn is_classad(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    is_type(ev, args, scope, |v| matches!(v, Value::Ad(_)))
}
pub fn is_abstime(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    is_type(ev, args, scope, |v| matches!(v, Value::AbsTime(_)))
}
pub fn is_reltime(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    is_type(ev, args, scope, |v| matches!(v, Value::RelTime(_)))
}

/// `int(x)`: reals truncate toward zero, strings are read by prefix
/// (`"42xyz"` is 42, `"0x10"` is 16), undefined stays undefined.
pub fn to_int(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    one(ev, args, scope).map_or(Value::Error, |v| conv_int(&v))
}

/// `real(x)`: strings go through a `strtod` parse (`"INF"`, `"NaN"`).
pub fn to_real(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    one(ev, args, scope).map_or(Value::Error, |v| conv_real(&v))
}

/// `string(x)`: non-strings are unparsed in new syntax.
pub fn to_string(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    one(ev, args, scope).map_or(Value::Error, |v| to_str_value(&v))
}

/// `bool(x)`: numbers test non-zero; only `"true"`/`"false"` (any case)
/// convert from strings, other strings give undefined.
pub fn to_bool(ev: &mut Evaluator, args: &[Expr], scope: &Scope) -> Value {
    let Some(v) = one(ev, args, scope) else {
        return Value::Error;
    };
    match v {
        Value::Undefined => Value::Undefined,
        Value::Bool(b) => Value::Bool(b),
        Value::Int(i) => Value::Bool(i != 0),
        Value::Real(r) => Value::Bool(r != 0.0),
        Value::RelTime(r) => Value::Bool(super::f64_to_i64(r) != 0),
        Value::Str(s) => {
            if s.eq_ignore_ascii_case("true") {
                Value::Bool(true)
            } else if s.eq_ignore_ascii_case("false") {
                Value::Bool(false)
            } else {
                Value::Undefined
            }
        }
        _ => Value::Error,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::check;

    #[test]
    fn type_tests() {
        check(&[
            ("isUndefined(undefined)", "true"),
            ("isUndefined(1)", "false"),
            ("isError(error)", "true"),
            ("isError(1/0)", "true"),
            ("isString(\"\")", "true"),
            ("isInteger(3.0)", "false"),
            ("isInteger(true)", "false"),
            ("isReal(3.0)", "true"),
            ("isBoolean(1)", "false"),
            ("isBoolean(false)", "true"),
            ("isList({})", "true"),
            ("isClassAd([])", "true"),
            ("isAbstime(absTime(0))", "true"),
            ("isReltime(relTime(0))", "true"),
            ("isList(undefined)", "false"),
            ("isUndefined()", "error"),
            ("isUndefined(1, 2)", "error"),
        ]);
    }

    #[test]
    fn int_conversion() {
        check(&[
            ("int(3)", "3"),
            ("int(-9.99)", "-9"),
            ("int(9.99)", "9"),
            ("int(1e300)", "-9223372036854775808"),
            ("int(-1e300)", "-9223372036854775808"),
            ("int(real(\"NaN\"))", "-9223372036854775808"),
            ("int(\"42xyz\")", "42"),
            ("int(\"  42\")", "42"),
            ("int(\"+42\")", "42"),
            ("int(\"-42\")", "-42"),
            ("int(\"0x10\")", "16"),
            ("int(\"0X1f\")", "31"),
            ("int(\"010\")", "10"),
            ("int(\"xyz\")", "error"),
            ("int(\"\")", "error"),
            ("int(\" \")", "error"),
            ("int(\"9223372036854775807\")", "-9223372036854775808"),
            ("int(\"123456789012345678\")", "123456789012345680"),
            ("int(\"4.7e2\")", "470"),
            ("int(\" -0x\")", "0"),
            ("int(\"  -inf\")", "-9223372036854775808"),
            ("int(true)", "1"),
            ("int(false)", "0"),
            ("int(undefined)", "undefined"),
            ("int(error)", "error"),
            ("int({1})", "error"),
            ("int([a=1])", "error"),
            ("int(absTime(100))", "100"),
            ("int(relTime(-100.7))", "-100"),
            ("int()", "error"),
            ("int(1,2)", "error"),
        ]);
    }

    #[test]
    fn real_conversion() {
        check(&[
            ("real(3)", "3.000000000000000E+00"),
            ("real(\"2.5e2\")", "2.500000000000000E+02"),
            ("real(\"INF\")", "real(\"INF\")"),
            ("real(\"-INF\")", "real(\"-INF\")"),
            ("real(\"Infinity\")", "real(\"INF\")"),
            ("real(\"nan\")", "real(\"NaN\")"),
            ("real(\"nan(123)\")", "real(\"NaN\")"),
            ("real(\"1e400\")", "real(\"INF\")"),
            ("real(\"-1e400\")", "real(\"-INF\")"),
            ("real(\"junk\")", "error"),
            ("real(\"\")", "error"),
            ("real(\" 2.5\")", "2.500000000000000E+00"),
            ("real(\"2.5x\")", "2.500000000000000E+00"),
            ("real(\"0x10\")", "1.600000000000000E+01"),
            ("real(\"0x1p3\")", "8.000000000000000E+00"),
            ("real(\"1e\")", "1.000000000000000E+00"),
            ("real(\".5\")", "5.000000000000000E-01"),
            ("real(\"5.\")", "5.000000000000000E+00"),
            ("real(true)", "1.000000000000000E+00"),
            ("real(false)", "0.0"),
            ("real(undefined)", "undefined"),
            ("real(error)", "error"),
            ("real({1})", "error"),
            ("real(absTime(100))", "1.000000000000000E+02"),
            ("real(relTime(100.5))", "1.000000000000000E+02"),
        ]);
    }

    #[test]
    fn string_conversion() {
        check(&[
            ("string(7.0)", "\"7.000000000000000E+00\""),
            ("string(7)", "\"7\""),
            ("string(undefined)", "undefined"),
            ("string(error)", "error"),
            ("string({1, 2})", "\"{ 1,2 }\""),
            ("string({1+1, x})", "\"{ 1 + 1,x }\""),
            ("string([a=1;b=\"x\"])", "\"[ a = 1; b = \\\"x\\\" ]\""),
            ("string(true)", "\"true\""),
            ("string(\"a\\\"b\")", "\"a\\\"b\""),
            ("string(absTime(0, 0))", "\"1970-01-01T00:00:00-00:00\""),
            ("string(relTime(3661))", "\"01:01:01\""),
            ("string(real(\"INF\"))", "\"real(\\\"INF\\\")\""),
            ("string(1e100)", "\"1.000000000000000E+100\""),
            ("string(0.0)", "\"0.0\""),
            ("string(-0.0)", "\"-0.0\""),
        ]);
    }

    #[test]
    fn bool_conversion() {
        check(&[
            ("bool(\"yes\")", "undefined"),
            ("bool(\"TRUE\")", "true"),
            ("bool(\"False\")", "false"),
            ("bool(\" true\")", "undefined"),
            ("bool(\"1\")", "undefined"),
            ("bool(0)", "false"),
            ("bool(2)", "true"),
            ("bool(0.0)", "false"),
            ("bool(0.1)", "true"),
            ("bool(undefined)", "undefined"),
            ("bool(error)", "error"),
            ("bool({})", "error"),
            ("bool([a=1])", "error"),
            ("bool(absTime(0))", "error"),
            ("bool(relTime(0))", "false"),
            ("bool(relTime(5))", "true"),
            ("bool(true)", "true"),
        ]);
    }
}
