//! The ClassAd parser: recursive descent with precedence climbing.
//!
//! Precedence, tightest first: postfix `.name`, `[i]` and elvis `?:`; unary
//! `- + ! ~`; `* / %`; `+ -`; shifts; relations; equality and identity; `&`;
//! `^`; `|`; `&&`; `||`; and the right-associative `c ? a : b`.

use std::rc::Rc;

use super::ParseError;
use super::ad::ClassAd;
use super::ast::{AttrRef, BinOp, Call, Expr, Name, UnOp};
use super::functions;
use super::lexer::{Lexer, Tok, Token};
use super::value::Value;

/// How deeply an expression may nest before it is refused.
pub const MAX_NESTING: u32 = 10_000;

pub struct Parser<'a> {
    lex: Lexer<'a>,
    /// Up to two tokens of lookahead.
    buf: [Option<Token<'a>>; 2],
    depth: u32,
}

/// `absTime("…")` and `relTime("…")` of one string literal are read when
/// the expression is parsed, as HTCondor reads them: the result is a time
/// literal (printed in normal form), and a string that is no time is a
/// syntax error. A relTime literal evaluates to a real number of seconds,
/// as in HTCondor (see [`Expr::RelTimeLit`]).
fn fold_time_literal(call: Expr) -> Result<Expr, String> {
    let Expr::Call(c) = &call else {
        return Ok(call);
    };
    let lower = c.name.to_ascii_lowercase();
    if !(lower == "abstime" || lower == "reltime") || c.args.len() != 1 {
        return Ok(call);
    }
    let Some(Value::Str(text)) = c.args[0].literal_value() else {
        return Ok(call);
    };
    let v = super::Evaluator::new().eval(&call, &super::Scope::empty());
    match v {
        Value::AbsTime(_) => Ok(Expr::Lit(v)),
        Value::RelTime(secs) => Ok(Expr::RelTimeLit(secs)),
        _ => Err(format!(
            "'{text}' is not a valid {} string",
            if lower == "abstime" {
                "absTime"
            } else {
                "relTime"
            }
        )),
    }
}

/// Parses one expression (new-syntax strings).
pub fn parse_expr(src: &str) -> Result<Expr, ParseError> {
    let mut p = Parser::new(src, false);
    let e = p.expr()?;
    p.expect_eof()?;
    Ok(e)
}

/// Parses one expression whose strings use old-syntax escaping.
pub fn parse_expr_old(src: &str) -> Result<Expr, ParseError> {
    let mut p = Parser::new(src, true);
    let e = p.expr()?;
    p.expect_eof()?;
    Ok(e)
}

/// Parses one new-syntax ad, `[a = 1; b = "x"]`.
pub fn parse_ad(src: &str) -> Result<ClassAd, ParseError> {
    let mut p = Parser::new(src, false);
    let t = p.next()?;
    if t.tok != Tok::LBrack {
        return Err(p.err_at(
            &t,
            format!("expected '[' to open a ClassAd, found {}", t.tok.describe()),
        ));
    }
    let ad = p.ad_body_sized(capacity_for(src))?;
    p.expect_eof()?;
    Ok(ad)
}

/// How many attributes an ad written in `text` likely has (about one per
/// 30 bytes), so that its index is sized once.
pub fn capacity_for(text: &str) -> usize {
    text.len() / 30 + 1
}

/// Parses a sequence of new-syntax ads, `[...] [...]`.
pub fn parse_ads(src: &str) -> Result<Vec<ClassAd>, ParseError> {
    let mut p = Parser::new(src, false);
    let mut out = Vec::new();
    loop {
        let t = p.next()?;
        match t.tok {
            Tok::Eof => return Ok(out),
            Tok::LBrack => out.push(p.ad_body()?),
            _ => {
                return Err(p.err_at(
                    &t,
                    format!("expected '[' to open a ClassAd, found {}", t.tok.describe()),
                ));
            }
        }
    }
}

impl<'a> Parser<'a> {
    pub fn new(src: &'a str, old_strings: bool) -> Parser<'a> {
        Parser {
            lex: Lexer::new(src, old_strings),
            buf: [None, None],
            depth: 0,
        }
    }

    /// Reports positions relative to (line, col) of a larger file.
    pub fn with_origin(mut self, line: u32, col: u32) -> Self {
        self.lex.set_origin(line, col);
        self
    }

    fn fill(&mut self, n: usize) -> Result<(), ParseError> {
        for i in 0..=n {
            if self.buf[i].is_none() {
                self.buf[i] = Some(self.lex.next_token()?);
            }
        }
        Ok(())
    }
    fn peek(&mut self) -> Result<&Token<'a>, ParseError> {
        if self.buf[0].is_none() {
            self.buf[0] = Some(self.lex.next_token()?);
        }
        Ok(self.buf[0].as_ref().expect("filled above"))
    }
    fn peek2_is(&mut self, t: &Tok<'_>) -> Result<bool, ParseError> {
        self.fill(1)?;
        Ok(self.buf[1].as_ref().is_some_and(|b| &b.tok == t))
    }
    fn next(&mut self) -> Result<Token<'a>, ParseError> {
        // The buffer fills in order, so an empty first slot means an
        // empty buffer.
        match self.buf[0].take() {
            Some(t) => {
                self.buf[0] = self.buf[1].take();
                Ok(t)
            }
            None => self.lex.next_token(),
        }
    }
    fn err_at(&self, t: &Token<'_>, msg: impl Into<String>) -> ParseError {
        ParseError {
            line: t.line,
            col: t.col,
            msg: msg.into(),
        }
    }
    fn expect(&mut self, want: Tok<'_>, what: &str) -> Result<Token<'a>, ParseError> {
        self.expect_with(want, || what.to_string())
    }
    /// Like `expect`, building the description only for the error.
    fn expect_with(
        &mut self,
        want: Tok<'_>,
        what: impl FnOnce() -> String,
    ) -> Result<Token<'a>, ParseError> {
        let t = self.next()?;
        if t.tok == want {
            Ok(t)
        } else {
            Err(self.err_at(
                &t,
                format!("expected {}, found {}", what(), t.tok.describe()),
            ))
        }
    }
    pub fn expect_eof(&mut self) -> Result<(), ParseError> {
        let t = self.next()?;
        if t.tok == Tok::Eof {
            Ok(())
        } else {
            Err(self.err_at(
                &t,
                format!(
                    "unexpected {} after the end of the expression",
                    t.tok.describe()
                ),
            ))
        }
    }

    fn enter(&mut self, at: &Token<'_>) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.err_at(
                at,
                format!("expression nested more than {MAX_NESTING} levels deep"),
            ));
        }
        Ok(())
    }

    /// A whole expression: the ternary level.
    pub fn expr(&mut self) -> Result<Expr, ParseError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            let at = self.peek()?;
            return Err(ParseError {
                line: at.line,
                col: at.col,
                msg: format!("expression nested more than {MAX_NESTING} levels deep"),
            });
        }
        let r = match self.single_token()? {
            Some(e) => Ok(e),
            // Each level takes well under 8 KiB of stack, so checking every
            // fourth level keeps within the 64 KiB red zone.
            None if self.depth % 4 == 1 => {
                stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.ternary())
            }
            None => self.ternary(),
        };
        self.depth -= 1;
        r
    }

    /// A whole expression that is one literal or one name, as most
    /// attribute values are, read without descending through every
    /// precedence level: the token after it must end an expression. `None`
    /// (nothing consumed) otherwise.
    fn single_token(&mut self) -> Result<Option<Expr>, ParseError> {
        let simple = matches!(
            self.peek()?.tok,
            Tok::Int(_)
                | Tok::Real(_)
                | Tok::Str(_)
                | Tok::Ident(_)
                | Tok::True
                | Tok::False
                | Tok::Undefined
                | Tok::Error
        );
        if !simple {
            return Ok(None);
        }
        self.fill(1)?;
        let ends = matches!(
            self.buf[1].as_ref().map(|t| &t.tok),
            Some(Tok::Semi | Tok::RBrack | Tok::Eof | Tok::Comma | Tok::RParen | Tok::RBrace)
        );
        if !ends {
            return Ok(None);
        }
        let t = self.next()?;
        Ok(Some(match t.tok {
            Tok::Int(i) => Expr::Lit(Value::Int(i)),
            Tok::Real(r) => Expr::Lit(Value::Real(r)),
            Tok::Str(s) => Expr::Lit(Value::Str(Rc::from(&*s))),
            Tok::True => Expr::Lit(Value::Bool(true)),
            Tok::False => Expr::Lit(Value::Bool(false)),
            Tok::Undefined => Expr::Lit(Value::Undefined),
            Tok::Error => Expr::Lit(Value::Error),
            Tok::Ident(s) => Expr::Attr(Box::new(AttrRef {
                base: None,
                name: Name::new(s),
                absolute: false,
            })),
            _ => unreachable!("checked above"),
        }))
    }

    fn ternary(&mut self) -> Result<Expr, ParseError> {
        let cond = self.binary(1)?;
        if self.peek()?.tok == Tok::Question {
            self.next()?;
            let a = self.expr()?;
            self.expect(Tok::Colon, "':' of a conditional expression")?;
            let b = self.expr()?;
            return Ok(Expr::Cond(Box::new((cond, a, b))));
        }
        Ok(cond)
    }

    fn binop(tok: &Tok) -> Option<BinOp> {
        Some(match tok {
            Tok::Star => BinOp::Mul,
            Tok::Slash => BinOp::Div,
            Tok::Percent => BinOp::Mod,
            Tok::Plus => BinOp::Add,
            Tok::Minus => BinOp::Sub,
            Tok::Shl => BinOp::Shl,
            Tok::Shr => BinOp::Shr,
            Tok::UShr => BinOp::UShr,
            Tok::Lt => BinOp::Lt,
            Tok::Le => BinOp::Le,
            Tok::Gt => BinOp::Gt,
            Tok::Ge => BinOp::Ge,
            Tok::EqEq => BinOp::Eq,
            Tok::Ne => BinOp::Ne,
            Tok::MetaEq | Tok::Is => BinOp::MetaEq,
            Tok::MetaNe | Tok::Isnt => BinOp::MetaNe,
            Tok::Amp => BinOp::BitAnd,
            Tok::Caret => BinOp::BitXor,
            Tok::Pipe => BinOp::BitOr,
            Tok::AndAnd => BinOp::And,
            Tok::OrOr => BinOp::Or,
            _ => return None,
        })
    }

    /// Left-associative binary operators of precedence `min` and tighter.
    fn binary(&mut self, min: u8) -> Result<Expr, ParseError> {
        let mut lhs = self.unary()?;
        let mut chain = 0u32;
        while let Some(op) = Self::binop(&self.peek()?.tok) {
            let prec = op.precedence();
            if prec < min {
                break;
            }
            let at = self.next()?;
            let rhs = self.binary(prec + 1)?;
            chain += 1;
            if chain + self.depth > MAX_NESTING {
                return Err(self.err_at(
                    &at,
                    format!("expression nested more than {MAX_NESTING} levels deep"),
                ));
            }
            lhs = Expr::binary(op, lhs, rhs);
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        let op = match self.peek()?.tok {
            Tok::Minus => UnOp::Neg,
            Tok::Plus => UnOp::Plus,
            Tok::Bang => UnOp::Not,
            Tok::Tilde => UnOp::BitNot,
            _ => return self.postfix(),
        };
        let at = self.next()?;
        self.enter(&at)?;
        let r = stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.unary());
        self.depth -= 1;
        Ok(Expr::Unary(op, Box::new(r?)))
    }

    fn postfix(&mut self) -> Result<Expr, ParseError> {
        let e = self.primary()?;
        self.suffixes(e, true)
    }

    /// The right side of `?:`: a primary with its `.name` and `[i]`
    /// suffixes (`a ?: b.c` is `a ?: (b.c)`, as HTCondor reads it).
    fn selection(&mut self) -> Result<Expr, ParseError> {
        let e = self.primary()?;
        self.suffixes(e, false)
    }

    /// The `.name` and `[i]` suffixes after `e`, and with `elvis` also
    /// `?: rhs`, all at the tightest level, left to right.
    fn suffixes(&mut self, mut e: Expr, elvis: bool) -> Result<Expr, ParseError> {
        let mut chain = 0u32;
        loop {
            let (line, col) = {
                let t = self.peek()?;
                (t.line, t.col)
            };
            let is_elvis =
                elvis && self.peek()?.tok == Tok::Question && self.peek2_is(&Tok::Colon)?;
            match self.peek()?.tok {
                Tok::Dot => {
                    self.next()?;
                    let name = self.attr_name("an attribute name after '.'")?;
                    e = Expr::Attr(Box::new(AttrRef {
                        base: Some(e),
                        name,
                        absolute: false,
                    }));
                }
                Tok::LBrack => {
                    self.next()?;
                    let idx = self.expr()?;
                    self.expect(Tok::RBrack, "']' to close a subscript")?;
                    e = Expr::Index(Box::new((e, idx)));
                }
                Tok::Question if is_elvis => {
                    self.next()?;
                    self.next()?;
                    let rhs = self.selection()?;
                    e = Expr::Elvis(Box::new((e, rhs)));
                }
                _ => return Ok(e),
            }
            chain += 1;
            if chain + self.depth > MAX_NESTING {
                return Err(ParseError {
                    line,
                    col,
                    msg: format!("expression nested more than {MAX_NESTING} levels deep"),
                });
            }
        }
    }

    fn attr_name(&mut self, what: &str) -> Result<Name, ParseError> {
        let t = self.next()?;
        match t.tok {
            Tok::Ident(s) => Ok(Name::new(s)),
            Tok::QuotedIdent(ref s) => Ok(Name::new(s)),
            // After '.', keywords are names too, so `a.true` (as HTCondor
            // prints a selection of 'true') reads back.
            Tok::True => Ok(Name::new("true")),
            Tok::False => Ok(Name::new("false")),
            Tok::Undefined => Ok(Name::new("undefined")),
            Tok::Error => Ok(Name::new("error")),
            Tok::Is => Ok(Name::new("is")),
            Tok::Isnt => Ok(Name::new("isnt")),
            ref other => {
                Err(self.err_at(&t, format!("expected {what}, found {}", other.describe())))
            }
        }
    }

    fn primary(&mut self) -> Result<Expr, ParseError> {
        let t = self.next()?;
        let (at_line, at_col) = (t.line, t.col);
        Ok(match t.tok {
            Tok::Int(i) => Expr::Lit(Value::Int(i)),
            Tok::Real(r) => Expr::Lit(Value::Real(r)),
            Tok::Str(s) => Expr::Lit(Value::Str(Rc::from(&*s))),
            Tok::True => Expr::Lit(Value::Bool(true)),
            Tok::False => Expr::Lit(Value::Bool(false)),
            Tok::Undefined => Expr::Lit(Value::Undefined),
            Tok::Error => Expr::Lit(Value::Error),
            Tok::QuotedIdent(s) => Expr::Attr(Box::new(AttrRef {
                base: None,
                name: Name::new(&s),
                absolute: false,
            })),
            Tok::Ident(s) => {
                if self.peek()?.tok == Tok::LParen {
                    self.next()?;
                    let args = self.items(Tok::RParen, "')' to close the argument list")?;
                    let call = Expr::Call(Box::new(Call {
                        builtin: functions::lookup(s),
                        name: Rc::from(s),
                        args,
                    }));
                    fold_time_literal(call).map_err(|msg| ParseError {
                        line: at_line,
                        col: at_col,
                        msg,
                    })?
                } else {
                    Expr::Attr(Box::new(AttrRef {
                        base: None,
                        name: Name::new(s),
                        absolute: false,
                    }))
                }
            }
            Tok::Dot => {
                let name = self.attr_name("an attribute name after '.'")?;
                Expr::Attr(Box::new(AttrRef {
                    base: None,
                    name,
                    absolute: true,
                }))
            }
            Tok::LParen => {
                let inner = self.expr()?;
                self.expect(Tok::RParen, "')'")?;
                Expr::Paren(Box::new(inner))
            }
            Tok::LBrace => Expr::List(Rc::from(self.items(Tok::RBrace, "'}' to close the list")?)),
            Tok::LBrack => Expr::Ad(Rc::new(self.ad_body()?)),
            ref other => {
                return Err(self.err_at(
                    &t,
                    format!("expected an expression, found {}", other.describe()),
                ));
            }
        })
    }

    /// Comma-separated expressions up to `close` (already past the opener).
    fn items(&mut self, close: Tok, what: &str) -> Result<Vec<Expr>, ParseError> {
        let mut out = Vec::new();
        if self.peek()?.tok == close {
            self.next()?;
            return Ok(out);
        }
        loop {
            out.push(self.expr()?);
            let t = self.next()?;
            if t.tok == close {
                return Ok(out);
            }
            if t.tok != Tok::Comma {
                return Err(self.err_at(
                    &t,
                    format!("expected ',' or {what}, found {}", t.tok.describe()),
                ));
            }
        }
    }

    /// `name = expr; ...]` (already past the `[`).
    pub fn ad_body(&mut self) -> Result<ClassAd, ParseError> {
        self.ad_body_sized(0)
    }

    /// [`Parser::ad_body`] with room for `n` attributes.
    pub fn ad_body_sized(&mut self, n: usize) -> Result<ClassAd, ParseError> {
        let mut ad = ClassAd::with_capacity(n);
        loop {
            // The usual `Name =`, read straight from the text.
            if self.buf[0].is_none()
                && let Some(s) = self.lex.name_and_assign()?
            {
                let name = Name::new(s);
                if self.value_of(&mut ad, name)? {
                    return Ok(ad);
                }
                continue;
            }
            let t = self.next()?;
            match t.tok {
                Tok::RBrack => return Ok(ad),
                Tok::Semi => continue,
                Tok::Ident(_) | Tok::QuotedIdent(_) => {
                    let name = match &t.tok {
                        Tok::Ident(s) => Name::new(s),
                        Tok::QuotedIdent(s) => Name::new(s),
                        _ => unreachable!("matched a name above"),
                    };
                    self.expect_with(Tok::Assign, || {
                        format!("'=' after attribute name '{}'", name.as_str())
                    })?;
                    if self.value_of(&mut ad, name)? {
                        return Ok(ad);
                    }
                }
                ref other => {
                    return Err(self.err_at(
                        &t,
                        format!(
                            "expected an attribute name or ']', found {}",
                            other.describe()
                        ),
                    ));
                }
            }
        }
    }

    /// The value after `name =` and the `;` or `]` after it; true at the
    /// `]` that ends the ad.
    fn value_of(&mut self, ad: &mut ClassAd, name: Name) -> Result<bool, ParseError> {
        let e = self.expr()?;
        ad.insert_named(&name, e);
        let t = self.next()?;
        match t.tok {
            Tok::Semi => Ok(false),
            Tok::RBrack => Ok(true),
            ref other => Err(self.err_at(
                &t,
                format!(
                    "expected ';' or ']' after the value of '{name}', found {}",
                    other.describe()
                ),
            )),
        }
    }
}
