//! Values: what an expression evaluates to.

use std::rc::Rc;

use super::ast::Expr;
use super::eval::Scope;

/// An absolute time: seconds since the epoch and the zone offset (seconds
/// east of UTC) it is shown in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbsTime {
    pub secs: i64,
    pub offset: i32,
}

/// A list value. Its elements stay unevaluated expressions until used
/// (`{1 + 1}` evaluates to itself), and are evaluated in `scope`, the scope
/// the list literal was evaluated in.
#[derive(Clone, Debug)]
pub struct ListValue {
    pub items: Rc<[Expr]>,
    pub scope: Option<Scope>,
}

/// The value of a ClassAd expression.
#[derive(Clone, Debug)]
pub enum Value {
    Undefined,
    Error,
    Bool(bool),
    Int(i64),
    Real(f64),
    Str(Rc<str>),
    List(ListValue),
    /// A ClassAd value: the frame that holds the ad and its lexical parent.
    Ad(Scope),
    AbsTime(AbsTime),
    /// A relative time in seconds.
    RelTime(f64),
}

impl Value {
    pub fn str(s: &str) -> Value {
        Value::Str(Rc::from(s))
    }
    pub fn string(s: String) -> Value {
        Value::Str(Rc::from(s))
    }
    /// A list of already-computed values.
    pub fn list(values: Vec<Value>) -> Value {
        let items: Vec<Expr> = values.into_iter().map(Expr::Lit).collect();
        Value::List(ListValue {
            items: Rc::from(items),
            scope: None,
        })
    }
    pub fn is_undefined(&self) -> bool {
        matches!(self, Value::Undefined)
    }
    pub fn is_error(&self) -> bool {
        matches!(self, Value::Error)
    }
    /// Int, real or bool as a number (bools count as 0/1).
    pub fn as_number(&self) -> Option<f64> {
        match *self {
            Value::Int(i) => Some(i as f64),
            Value::Real(r) => Some(r),
            Value::Bool(b) => Some(b as i64 as f64),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
    /// The type name used in messages and `tern_eval` diagnostics.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Undefined => "undefined",
            Value::Error => "error",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "integer",
            Value::Real(_) => "real",
            Value::Str(_) => "string",
            Value::List(_) => "list",
            Value::Ad(_) => "classad",
            Value::AbsTime(_) => "absolute time",
            Value::RelTime(_) => "relative time",
        }
    }

    /// Whether the value is true for `Requirements` and policy expressions:
    /// `true` or a non-zero number (HTCondor's `EvalBool` in compat mode).
    pub fn is_true(&self) -> bool {
        match *self {
            Value::Bool(b) => b,
            Value::Int(i) => i != 0,
            Value::Real(r) => r != 0.0,
            _ => false,
        }
    }
}
