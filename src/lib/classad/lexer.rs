//! The ClassAd lexer.
//!
//! Numbers follow HTCondor's compatibility ("old ClassAd") rules: decimal
//! integers only (a leading `0` followed by more digits is refused, so are
//! `0x` literals and unit suffixes), reals need a digit after the `.`, and an
//! integer that does not fit in 64 bits reads as 0, as HTCondor reads it. A
//! `-` right before a digit joins the literal when the previous token was not
//! an operand. Strings use new-syntax escapes, or in old-syntax ad lines the
//! old rule where a backslash is literal except before `"`.

use std::borrow::Cow;

use super::ParseError;

/// A token. Names and escape-free strings borrow the source text, so
/// lexing allocates only for strings with escapes and quoted names.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok<'a> {
    Int(i64),
    Real(f64),
    Str(Cow<'a, str>),
    Ident(&'a str),
    /// A `'quoted name'`.
    QuotedIdent(String),
    True,
    False,
    Undefined,
    Error,
    Is,
    Isnt,
    Dot,
    Star,
    Slash,
    Percent,
    Plus,
    Minus,
    Tilde,
    Caret,
    Question,
    Colon,
    Semi,
    Comma,
    LBrack,
    RBrack,
    LParen,
    RParen,
    LBrace,
    RBrace,
    Amp,
    AndAnd,
    Pipe,
    OrOr,
    Lt,
    Le,
    Shl,
    Gt,
    Ge,
    Shr,
    UShr,
    Assign,
    EqEq,
    MetaEq,
    MetaNe,
    Bang,
    Ne,
    Eof,
}

impl Tok<'_> {
    /// Whether this token can end an operand, which decides whether a
    /// following `-` may start a negative literal.
    fn ends_operand(&self) -> bool {
        matches!(
            self,
            Tok::Int(_)
                | Tok::Real(_)
                | Tok::Str(_)
                | Tok::Ident(_)
                | Tok::QuotedIdent(_)
                | Tok::True
                | Tok::False
                | Tok::Undefined
                | Tok::Error
                | Tok::RParen
                | Tok::RBrack
                | Tok::RBrace
        )
    }

    pub fn describe(&self) -> String {
        match self {
            Tok::Int(i) => format!("integer {i}"),
            Tok::Real(r) => format!("real {r}"),
            Tok::Str(_) => "string literal".into(),
            Tok::Ident(s) => format!("name '{s}'"),
            Tok::QuotedIdent(s) => format!("name '{s}'"),
            Tok::Eof => "end of input".into(),
            other => format!("'{}'", other.symbol()),
        }
    }

    fn symbol(&self) -> &'static str {
        match self {
            Tok::True => "true",
            Tok::False => "false",
            Tok::Undefined => "undefined",
            Tok::Error => "error",
            Tok::Is => "is",
            Tok::Isnt => "isnt",
            Tok::Dot => ".",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::Percent => "%",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Tilde => "~",
            Tok::Caret => "^",
            Tok::Question => "?",
            Tok::Colon => ":",
            Tok::Semi => ";",
            Tok::Comma => ",",
            Tok::LBrack => "[",
            Tok::RBrack => "]",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::Amp => "&",
            Tok::AndAnd => "&&",
            Tok::Pipe => "|",
            Tok::OrOr => "||",
            Tok::Lt => "<",
            Tok::Le => "<=",
            Tok::Shl => "<<",
            Tok::Gt => ">",
            Tok::Ge => ">=",
            Tok::Shr => ">>",
            Tok::UShr => ">>>",
            Tok::Assign => "=",
            Tok::EqEq => "==",
            Tok::MetaEq => "=?=",
            Tok::MetaNe => "=!=",
            Tok::Bang => "!",
            Tok::Ne => "!=",
            _ => "?",
        }
    }
}

/// A token and where it starts (1-based line and column).
#[derive(Clone, Debug)]
pub struct Token<'a> {
    pub tok: Tok<'a>,
    pub line: u32,
    pub col: u32,
}

pub struct Lexer<'a> {
    text: &'a str,
    src: &'a [u8],
    pos: usize,
    line: u32,
    line_start: usize,
    old_strings: bool,
    prev_operand: bool,
}

impl<'a> Lexer<'a> {
    pub fn new(src: &'a str, old_strings: bool) -> Lexer<'a> {
        Lexer {
            text: src,
            src: src.as_bytes(),
            pos: 0,
            line: 1,
            line_start: 0,
            old_strings,
            prev_operand: false,
        }
    }

    /// Starts line and column counting at the given place (for text cut out
    /// of a larger file).
    pub fn set_origin(&mut self, line: u32, col: u32) {
        self.line = line;
        self.line_start = 0usize.wrapping_sub(col.saturating_sub(1) as usize);
    }

    fn col(&self, at: usize) -> u32 {
        (at.wrapping_sub(self.line_start) + 1) as u32
    }

    fn err(&self, at: usize, msg: impl Into<String>) -> ParseError {
        ParseError {
            line: self.line,
            col: self.col(at),
            msg: msg.into(),
        }
    }

    fn peek(&self) -> u8 {
        self.src.get(self.pos).copied().unwrap_or(0)
    }
    fn peek_at(&self, n: usize) -> u8 {
        self.src.get(self.pos + n).copied().unwrap_or(0)
    }

    fn newline(&mut self, at: usize) {
        self.line += 1;
        self.line_start = at + 1;
    }

    fn skip_space(&mut self) -> Result<(), ParseError> {
        loop {
            let c = self.peek();
            if c == b'\n' {
                self.newline(self.pos);
                self.pos += 1;
            } else if c.is_ascii_whitespace() {
                self.pos += 1;
            } else if c == b'/' && self.peek_at(1) == b'/' {
                while self.pos < self.src.len() && self.peek() != b'\n' {
                    self.pos += 1;
                }
            } else if c == b'/' && self.peek_at(1) == b'*' {
                let start = self.pos;
                self.pos += 2;
                loop {
                    if self.pos >= self.src.len() {
                        return Err(self.err(start, "unterminated /* comment"));
                    }
                    if self.peek() == b'*' && self.peek_at(1) == b'/' {
                        self.pos += 2;
                        break;
                    }
                    if self.peek() == b'\n' {
                        self.newline(self.pos);
                    }
                    self.pos += 1;
                }
            } else {
                return Ok(());
            }
        }
    }

    pub fn next_token(&mut self) -> Result<Token<'a>, ParseError> {
        self.skip_space()?;
        let start = self.pos;
        let (line, col) = (self.line, self.col(start));
        let tok = self.scan(start)?;
        self.prev_operand = tok.ends_operand();
        Ok(Token { tok, line, col })
    }

    fn scan(&mut self, start: usize) -> Result<Tok<'a>, ParseError> {
        let c = self.peek();
        if c == 0 && self.pos >= self.src.len() {
            return Ok(Tok::Eof);
        }
        if c.is_ascii_digit() || (c == b'.' && self.peek_at(1).is_ascii_digit()) {
            return self.number(start, false);
        }
        if c == b'-'
            && !self.prev_operand
            && (self.peek_at(1).is_ascii_digit()
                || (self.peek_at(1) == b'.' && self.peek_at(2).is_ascii_digit()))
        {
            self.pos += 1;
            return self.number(start, true);
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            while self.peek().is_ascii_alphanumeric() || self.peek() == b'_' {
                self.pos += 1;
            }
            // ASCII only, so the slice is on character boundaries.
            let word = &self.text[start..self.pos];
            let kw = |k: &str| word.eq_ignore_ascii_case(k);
            return Ok(match word.len() {
                2 if kw("is") => Tok::Is,
                4 if kw("true") => Tok::True,
                4 if kw("isnt") => Tok::Isnt,
                5 if kw("false") => Tok::False,
                5 if kw("error") => Tok::Error,
                9 if kw("undefined") => Tok::Undefined,
                _ => Tok::Ident(word),
            });
        }
        if c == b'"' {
            return self.string(start);
        }
        if c == b'\'' {
            let raw = self.raw_quoted(start, b'\'')?;
            let s = convert_escapes(raw)
                .ok_or_else(|| self.err(start, "NUL character in quoted name"))?;
            return Ok(Tok::QuotedIdent(s.into_owned()));
        }
        self.pos += 1;
        let n = self.peek();
        let two = |lx: &mut Lexer<'a>, t: Tok<'a>| {
            lx.pos += 1;
            t
        };
        Ok(match c {
            b'.' => Tok::Dot,
            b'*' => Tok::Star,
            b'/' => Tok::Slash,
            b'%' => Tok::Percent,
            b'+' => Tok::Plus,
            b'-' => Tok::Minus,
            b'~' => Tok::Tilde,
            b'^' => Tok::Caret,
            b'?' => Tok::Question,
            b':' => Tok::Colon,
            b';' => Tok::Semi,
            b',' => Tok::Comma,
            b'[' => Tok::LBrack,
            b']' => Tok::RBrack,
            b'(' => Tok::LParen,
            b')' => Tok::RParen,
            b'{' => Tok::LBrace,
            b'}' => Tok::RBrace,
            b'&' if n == b'&' => two(self, Tok::AndAnd),
            b'&' => Tok::Amp,
            b'|' if n == b'|' => two(self, Tok::OrOr),
            b'|' => Tok::Pipe,
            b'<' if n == b'=' => two(self, Tok::Le),
            b'<' if n == b'<' => two(self, Tok::Shl),
            b'<' => Tok::Lt,
            b'>' if n == b'=' => two(self, Tok::Ge),
            b'>' if n == b'>' => {
                self.pos += 1;
                if self.peek() == b'>' {
                    self.pos += 1;
                    Tok::UShr
                } else {
                    Tok::Shr
                }
            }
            b'>' => Tok::Gt,
            b'=' if n == b'=' => two(self, Tok::EqEq),
            b'=' if n == b'?' => {
                if self.peek_at(1) == b'=' {
                    self.pos += 2;
                    Tok::MetaEq
                } else {
                    return Err(self.err(
                        start,
                        "'=?' must be followed by '=' (the operator is '=?=')",
                    ));
                }
            }
            b'=' if n == b'!' && self.peek_at(1) == b'=' => {
                self.pos += 2;
                Tok::MetaNe
            }
            b'=' => Tok::Assign,
            b'!' if n == b'=' => two(self, Tok::Ne),
            b'!' => Tok::Bang,
            _ => {
                let shown = std::str::from_utf8(&self.src[start..])
                    .ok()
                    .and_then(|s| s.chars().next())
                    .map(|ch| ch.to_string())
                    .unwrap_or_else(|| format!("\\x{c:02x}"));
                return Err(self.err(start, format!("unexpected character '{shown}'")));
            }
        })
    }

    fn number(&mut self, start: usize, negative: bool) -> Result<Tok<'a>, ParseError> {
        let digits_start = self.pos;
        while self.peek().is_ascii_digit() {
            self.pos += 1;
        }
        let int_digits = &self.src[digits_start..self.pos];
        let mut is_real = false;
        if self.peek() == b'.' {
            if !self.peek_at(1).is_ascii_digit() {
                return Err(self.err(start, "a '.' in a number must be followed by a digit"));
            }
            is_real = true;
            self.pos += 1;
            while self.peek().is_ascii_digit() {
                self.pos += 1;
            }
        }
        if self.peek() == b'e' || self.peek() == b'E' {
            is_real = true;
            self.pos += 1;
            if self.peek() == b'+' || self.peek() == b'-' {
                self.pos += 1;
            }
            if !self.peek().is_ascii_digit() {
                return Err(self.err(start, "an exponent needs digits"));
            }
            while self.peek().is_ascii_digit() {
                self.pos += 1;
            }
        }
        if self.peek().is_ascii_alphanumeric() || self.peek() == b'_' {
            return Err(self.err(
                start,
                "a number must not run into letters (no unit suffixes or hex in ClassAd literals)",
            ));
        }
        let text = &self.text[start..self.pos];
        if is_real {
            return Ok(Tok::Real(text.parse::<f64>().unwrap_or(0.0)));
        }
        if int_digits.len() > 1 && int_digits[0] == b'0' {
            return Err(self.err(
                start,
                "integers with a leading 0 are not allowed (no octal literals)",
            ));
        }
        let _ = negative;
        Ok(Tok::Int(text.parse::<i64>().unwrap_or(0)))
    }

    /// The raw text between quotes (escapes not yet converted), as a slice
    /// of the source. A raw NUL byte is refused: it could not be printed
    /// back in a form that reads again.
    fn raw_quoted(&mut self, start: usize, delim: u8) -> Result<&'a [u8], ParseError> {
        self.pos += 1;
        let from = self.pos;
        loop {
            let Some(&c) = self.src.get(self.pos) else {
                return Err(self.err(start, "unterminated quoted text"));
            };
            match c {
                b'\\' => {
                    self.pos += 1;
                    if let Some(&n) = self.src.get(self.pos) {
                        if n == b'\n' {
                            self.newline(self.pos);
                        }
                        if n == 0 {
                            return Err(self.err(start, "NUL character in quoted text"));
                        }
                        self.pos += 1;
                    }
                }
                _ if c == delim => {
                    let raw = &self.src[from..self.pos];
                    self.pos += 1;
                    return Ok(raw);
                }
                0 => return Err(self.err(start, "NUL character in quoted text")),
                b'\n' => {
                    self.newline(self.pos);
                    self.pos += 1;
                }
                _ => self.pos += 1,
            }
        }
    }

    fn string(&mut self, start: usize) -> Result<Tok<'a>, ParseError> {
        if self.old_strings {
            return self.old_string(start);
        }
        let first = self.raw_quoted(start, b'"')?;
        let mut raw: Cow<'a, [u8]> = Cow::Borrowed(first);
        // Adjacent literals separated only by white space are one string.
        loop {
            let save = (self.pos, self.line, self.line_start);
            while self.peek().is_ascii_whitespace() {
                if self.peek() == b'\n' {
                    self.newline(self.pos);
                }
                self.pos += 1;
            }
            if self.peek() == b'"' {
                let more = self.raw_quoted(self.pos, b'"')?;
                raw.to_mut().extend_from_slice(more);
            } else {
                (self.pos, self.line, self.line_start) = save;
                break;
            }
        }
        let s = match raw {
            // No escapes: the source text itself (valid UTF-8, cut at quotes).
            Cow::Borrowed(b) if !b.contains(&b'\\') => {
                Cow::Borrowed(std::str::from_utf8(b).unwrap_or_default())
            }
            other => convert_escapes(&other)
                .ok_or_else(|| self.err(start, "NUL character in string literal"))?,
        };
        Ok(Tok::Str(s))
    }

    /// Old-syntax string: a backslash is literal except right before `"`,
    /// and a `\"` that ends the line closes the string with a trailing
    /// backslash.
    fn old_string(&mut self, start: usize) -> Result<Tok<'a>, ParseError> {
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.src.get(self.pos) else {
                return Err(self.err(start, "unterminated string literal"));
            };
            if c == b'\\' && self.peek_at(1) == b'"' {
                let rest = &self.src[self.pos + 2..];
                let line_rest: Vec<u8> =
                    rest.iter().take_while(|&&b| b != b'\n').copied().collect();
                if line_rest.iter().all(|b| b.is_ascii_whitespace()) {
                    out.push(b'\\');
                    self.pos += 2;
                    break;
                }
                out.push(b'"');
                self.pos += 2;
                continue;
            }
            if c == b'"' {
                self.pos += 1;
                break;
            }
            if c == b'\n' {
                return Err(self.err(start, "unterminated string literal"));
            }
            if c == 0 {
                return Err(self.err(start, "NUL character in string literal"));
            }
            out.push(c);
            self.pos += 1;
        }
        Ok(Tok::Str(Cow::Owned(match String::from_utf8(out) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })))
    }
}

/// New-syntax escape conversion. `None` when the result would hold a NUL.
pub fn convert_escapes(raw: &[u8]) -> Option<Cow<'static, str>> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        if c != b'\\' || i + 1 >= raw.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let e = raw[i + 1];
        i += 2;
        match e {
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(11),
            b'0'..=b'7' => {
                let mut v: u32 = (e - b'0') as u32;
                if i < raw.len() && (b'0'..=b'7').contains(&raw[i]) {
                    v = v * 8 + (raw[i] - b'0') as u32;
                    i += 1;
                    if v < 0x20 && i < raw.len() && (b'0'..=b'7').contains(&raw[i]) {
                        v = v * 8 + (raw[i] - b'0') as u32;
                        i += 1;
                    }
                }
                if v == 0 {
                    return None;
                }
                out.push(v as u8);
            }
            other => out.push(other),
        }
    }
    Some(Cow::Owned(match String::from_utf8(out) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }))
}
