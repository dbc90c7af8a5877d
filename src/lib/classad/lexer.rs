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
            while let Some(&c) = self.src.get(self.pos) {
                if BYTE_CLASS[c as usize] & SPACE == 0 {
                    break;
                }
                if c == b'\n' {
                    self.newline(self.pos);
                }
                self.pos += 1;
            }
            let c = self.peek();
            if c == b'/' && self.peek_at(1) == b'/' {
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
        // Plain white space here; comments (and any after them) in
        // `skip_space`.
        while let Some(&c) = self.src.get(self.pos) {
            if BYTE_CLASS[c as usize] & SPACE == 0 {
                break;
            }
            if c == b'\n' {
                self.newline(self.pos);
            }
            self.pos += 1;
        }
        if self.peek() == b'/' {
            self.skip_space()?;
        }
        let start = self.pos;
        let (line, col) = (self.line, self.col(start));
        let tok = self.scan(start)?;
        self.prev_operand = tok.ends_operand();
        Ok(Token { tok, line, col })
    }

    /// A name (not a keyword) and the `=` after it, consumed, when they
    /// come next, as they do at each attribute of an ad; `None` with only
    /// white space and comments consumed otherwise, so that the tokens
    /// read as usual.
    pub fn name_and_assign(&mut self) -> Result<Option<&'a str>, ParseError> {
        self.skip_space()?;
        let start = self.pos;
        let first = self.peek();
        if !(first.is_ascii_alphabetic() || first == b'_') {
            return Ok(None);
        }
        let mut i = start + 1;
        while let Some(&b) = self.src.get(i) {
            if BYTE_CLASS[b as usize] & NAME == 0 {
                break;
            }
            i += 1;
        }
        let end = i;
        while matches!(self.src.get(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        // `=` alone, not the start of `==`, `=?=` or `=!=`.
        if self.src.get(i) != Some(&b'=') || matches!(self.src.get(i + 1), Some(b'=' | b'?' | b'!'))
        {
            return Ok(None);
        }
        let word = &self.text[start..end];
        if matches!(word.len(), 2 | 4 | 5 | 9)
            && ["is", "isnt", "true", "false", "error", "undefined"]
                .iter()
                .any(|k| word.eq_ignore_ascii_case(k))
        {
            return Ok(None);
        }
        self.pos = i + 1;
        self.prev_operand = false;
        Ok(Some(word))
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
            self.pos += 1;
            while let Some(&b) = self.src.get(self.pos) {
                if BYTE_CLASS[b as usize] & NAME == 0 {
                    break;
                }
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
            return self.quoted_name(start);
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
            return Ok(Tok::Real(
                short_real(&self.src[digits_start..self.pos], negative)
                    .unwrap_or_else(|| text.parse::<f64>().unwrap_or(0.0)),
            ));
        }
        if int_digits.len() > 1 && int_digits[0] == b'0' {
            return Err(self.err(
                start,
                "integers with a leading 0 are not allowed (no octal literals)",
            ));
        }
        // As `text.parse::<i64>()`, with an out-of-range literal reading 0.
        let mut v: u64 = 0;
        for &d in int_digits {
            match v
                .checked_mul(10)
                .and_then(|v| v.checked_add((d - b'0') as u64))
            {
                Some(n) => v = n,
                None => return Ok(Tok::Int(0)),
            }
        }
        Ok(Tok::Int(if negative {
            if v <= 1 << 63 {
                (v as i64).wrapping_neg()
            } else {
                0
            }
        } else {
            i64::try_from(v).unwrap_or(0)
        }))
    }

    /// The raw text between quotes (escapes not yet converted), as the
    /// range of the source it spans, and whether it holds a backslash. A
    /// raw NUL byte is refused: it could not be printed back in a form that
    /// reads again.
    fn raw_quoted(&mut self, start: usize, delim: u8) -> Result<(usize, usize, bool), ParseError> {
        self.pos += 1;
        let from = self.pos;
        let mut escaped = false;
        loop {
            self.pos = scan_plain(self.src, self.pos, delim);
            let Some(&c) = self.src.get(self.pos) else {
                return Err(self.err(start, "unterminated quoted text"));
            };
            match c {
                b'\\' => {
                    escaped = true;
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
                    let to = self.pos;
                    self.pos += 1;
                    return Ok((from, to, escaped));
                }
                0 => return Err(self.err(start, "NUL character in quoted text")),
                _ => {
                    // A newline.
                    self.newline(self.pos);
                    self.pos += 1;
                }
            }
        }
    }

    fn quoted_name(&mut self, start: usize) -> Result<Tok<'a>, ParseError> {
        let (from, to, _) = self.raw_quoted(start, b'\'')?;
        let s = convert_escapes(&self.src[from..to])
            .ok_or_else(|| self.err(start, "NUL character in quoted name"))?;
        Ok(Tok::QuotedIdent(s.into_owned()))
    }

    fn string(&mut self, start: usize) -> Result<Tok<'a>, ParseError> {
        if self.old_strings {
            return self.old_string(start);
        }
        let (from, to, mut escaped) = self.raw_quoted(start, b'"')?;
        let mut more: Option<Vec<u8>> = None;
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
                let (f, t, e) = self.raw_quoted(self.pos, b'"')?;
                escaped |= e;
                more.get_or_insert_with(|| self.src[from..to].to_vec())
                    .extend_from_slice(&self.src[f..t]);
            } else {
                (self.pos, self.line, self.line_start) = save;
                break;
            }
        }
        let raw = match &more {
            Some(v) => &v[..],
            // No escapes: the source text itself (cut at quotes, so on
            // character boundaries).
            None if !escaped => return Ok(Tok::Str(Cow::Borrowed(&self.text[from..to]))),
            None => &self.src[from..to],
        };
        if !escaped {
            return Ok(Tok::Str(Cow::Owned(
                String::from_utf8_lossy(raw).into_owned(),
            )));
        }
        let s = convert_escapes(raw)
            .ok_or_else(|| self.err(start, "NUL character in string literal"))?;
        Ok(Tok::Str(s))
    }

    /// Old-syntax string: a backslash is literal except right before `"`,
    /// and a `\"` that ends the line closes the string with a trailing
    /// backslash.
    fn old_string(&mut self, start: usize) -> Result<Tok<'a>, ParseError> {
        self.pos += 1;
        let from = self.pos;
        // Built only when a `\"` changes the text; `seg` is where the part
        // not yet copied into it starts.
        let mut out: Option<Vec<u8>> = None;
        let mut seg = from;
        loop {
            let i = scan_plain(self.src, self.pos, b'"');
            let Some(&c) = self.src.get(i) else {
                return Err(self.err(start, "unterminated string literal"));
            };
            match c {
                b'"' => {
                    self.pos = i + 1;
                    return Ok(Tok::Str(match out {
                        None => Cow::Borrowed(&self.text[from..i]),
                        Some(mut o) => {
                            o.extend_from_slice(&self.src[seg..i]);
                            Cow::Owned(owned_text(o))
                        }
                    }));
                }
                b'\\' if self.src.get(i + 1) == Some(&b'"') => {
                    let o = out.get_or_insert_with(Vec::new);
                    o.extend_from_slice(&self.src[seg..i]);
                    self.pos = i + 2;
                    seg = self.pos;
                    let line_rest = self.src[i + 2..].iter().take_while(|&&b| b != b'\n');
                    if line_rest.clone().all(|b| b.is_ascii_whitespace()) {
                        o.push(b'\\');
                        return Ok(Tok::Str(Cow::Owned(owned_text(out.unwrap_or_default()))));
                    }
                    o.push(b'"');
                }
                // A literal backslash.
                b'\\' => self.pos = i + 1,
                b'\n' => return Err(self.err(start, "unterminated string literal")),
                _ => return Err(self.err(start, "NUL character in string literal")),
            }
        }
    }
}

/// `digits.digits` (no exponent) with at most 15 digits, read exactly as
/// `parse::<f64>` reads it: the digits as an integer are exact in an f64,
/// and so is the power of ten, so their one correctly rounded quotient is
/// the correctly rounded value. `None` for any other form.
fn short_real(text: &[u8], negative: bool) -> Option<f64> {
    const POW10: [f64; 16] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    if text.len() > 16 {
        return None;
    }
    let mut m: u64 = 0;
    let mut frac = None;
    for (i, &c) in text.iter().enumerate() {
        match c {
            b'0'..=b'9' => m = m * 10 + (c - b'0') as u64,
            b'.' if frac.is_none() => frac = Some(text.len() - i - 1),
            _ => return None,
        }
    }
    let v = m as f64 / POW10[frac?];
    Some(if negative { -v } else { v })
}

/// Text from bytes that are valid UTF-8 in practice (cut from a `str` at
/// ASCII bytes), with any invalid sequence replaced.
fn owned_text(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// How many bytes at the start of `bytes` may continue a name.
#[inline]
pub(crate) fn name_len(bytes: &[u8]) -> usize {
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if BYTE_CLASS[b as usize] & NAME == 0 {
            break;
        }
        i += 1;
    }
    i
}

/// [`BYTE_CLASS`] bit of bytes that may continue a name.
const NAME: u8 = 1;
/// [`BYTE_CLASS`] bit of ASCII white space (as `u8::is_ascii_whitespace`).
const SPACE: u8 = 2;

/// The class bits of each byte value, so that the scanning loops test one
/// table entry per byte.
static BYTE_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() || c == b'_' {
            t[b] |= NAME;
        }
        if c.is_ascii_whitespace() {
            t[b] |= SPACE;
        }
        b += 1;
    }
    t
};

/// The position of the first byte at or after `i` that is `delim`, a
/// backslash, a newline or NUL (the end of `src` if none is), eight bytes
/// at a time.
#[inline]
fn scan_plain(src: &[u8], mut i: usize, delim: u8) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = ONES * 0x80;
    // The lowest flagged byte of `zeros(y)` is always a zero byte of `y`.
    let zeros = |y: u64| y.wrapping_sub(ONES) & !y & HIGH;
    while let Some(chunk) = src.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let m = zeros(x ^ (ONES * delim as u64))
            | zeros(x ^ (ONES * b'\\' as u64))
            | zeros(x ^ (ONES * b'\n' as u64))
            | zeros(x);
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < src.len() && !matches!(src[i], b'\\' | b'\n' | 0) && src[i] != delim {
        i += 1;
    }
    i
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
