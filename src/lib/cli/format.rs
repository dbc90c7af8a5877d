//! How the tools that list job ads print them, shared by `tern_history` and
//! `tern_q`: HTCondor's print mask (`-af[:jlhVr,tng]` and `-format`), the
//! `-long` and `-json` forms, and the column renderers of the default
//! listings (dates, run times, the CMD column).
//!
//! The print mask follows HTCondor's `AttrListPrintMask`: each column names
//! an attribute or an expression and a printf-style conversion; a row is the
//! row prefix, the columns (a column prefix before all but the first, a
//! column suffix after all but the last), then the row suffix. Autoformat
//! sets those separators from its flags; `-format` sets none, so its format
//! strings carry their own spaces and newlines.

use std::rc::Rc;

use crate::classad::json::ads_to_json_array;
use crate::classad::parser::parse_expr_old;
use crate::classad::unparse::{Syntax, ad_to_old, format_e, format_g, unparse_old, write_value};
use crate::classad::{ClassAd, Expr, Value, eval_in};

use super::CliError;

/// What a conversion reads from the value, as HTCondor's `printf_fmt_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Int,
    Char,
    Float,
    Str,
    /// `%v` / `%V`: any value, strings raw for `v`.
    Value,
    /// `%r`: the expression unevaluated.
    Raw,
    /// `%T`: a number of seconds as `ddd+hh:mm:ss`.
    Time,
    /// `%Y`: a time as `mm/dd hh:mm`.
    Date,
}

/// One printf conversion and the literal text around it.
#[derive(Clone, Debug)]
struct Printf {
    before: String,
    after: String,
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
    letter: char,
    kind: Kind,
}

impl Printf {
    /// Finds the first conversion of `fmt`; `None` when there is none.
    fn parse(fmt: &str) -> Option<Printf> {
        let b = fmt.as_bytes();
        let mut i = 0;
        let mut before = String::new();
        while i < b.len() {
            if b[i] == b'%' {
                if b.get(i + 1) == Some(&b'%') {
                    before.push('%');
                    i += 2;
                    continue;
                }
                break;
            }
            let ch = fmt[i..].chars().next()?;
            before.push(ch);
            i += ch.len_utf8();
        }
        if i >= b.len() {
            return None;
        }
        let mut p = Printf {
            before,
            after: String::new(),
            left: false,
            plus: false,
            space: false,
            alt: false,
            zero: false,
            width: 0,
            precision: None,
            letter: 's',
            kind: Kind::Str,
        };
        i += 1;
        while i < b.len() {
            match b[i] {
                b'-' => p.left = true,
                b'+' => p.plus = true,
                b' ' => p.space = true,
                b'#' => p.alt = true,
                b'0' => p.zero = true,
                _ => break,
            }
            i += 1;
        }
        while i < b.len() && b[i].is_ascii_digit() {
            p.width = p.width * 10 + (b[i] - b'0') as usize;
            i += 1;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            let mut prec = 0;
            while i < b.len() && b[i].is_ascii_digit() {
                prec = prec * 10 + (b[i] - b'0') as usize;
                i += 1;
            }
            p.precision = Some(prec);
        }
        while i < b.len() && b"hlLqjzt".contains(&b[i]) {
            i += 1;
        }
        let letter = *b.get(i)? as char;
        p.kind = match letter {
            'd' | 'i' | 'u' | 'o' | 'x' | 'X' => Kind::Int,
            'c' => Kind::Char,
            'e' | 'E' | 'f' | 'F' | 'g' | 'G' | 'a' | 'A' => Kind::Float,
            's' => Kind::Str,
            'v' | 'V' => Kind::Value,
            'r' | 'R' => Kind::Raw,
            'T' => Kind::Time,
            'Y' => Kind::Date,
            _ => return None,
        };
        p.letter = letter;
        i += 1;
        p.after = fmt[i..].replace("%%", "%");
        Some(p)
    }

    /// Pads `body` (with its sign already in front) to the field width.
    fn pad(&self, body: String, numeric: bool) -> String {
        let len = body.chars().count();
        if len >= self.width {
            return body;
        }
        let fill = self.width - len;
        if self.left {
            format!("{body}{}", " ".repeat(fill))
        } else if self.zero && numeric {
            let (sign, digits) = match body.chars().next() {
                Some(c @ ('-' | '+' | ' ')) => (c.to_string(), &body[1..]),
                _ => (String::new(), body.as_str()),
            };
            let (prefix, digits) = match digits.get(..2) {
                Some("0x" | "0X") => (&digits[..2], &digits[2..]),
                _ => ("", digits),
            };
            format!("{sign}{prefix}{}{digits}", "0".repeat(fill))
        } else {
            format!("{}{body}", " ".repeat(fill))
        }
    }

    fn sign(&self, negative: bool) -> &'static str {
        if negative {
            "-"
        } else if self.plus {
            "+"
        } else if self.space {
            " "
        } else {
            ""
        }
    }

    fn int(&self, v: i64) -> String {
        let mag = v.unsigned_abs();
        let mut digits = match self.letter {
            'o' => format!("{mag:o}"),
            'x' => format!("{mag:x}"),
            'X' => format!("{mag:X}"),
            _ => mag.to_string(),
        };
        if let Some(p) = self.precision {
            if p == 0 && v == 0 {
                digits.clear();
            }
            while digits.len() < p {
                digits.insert(0, '0');
            }
        }
        if self.alt && v != 0 {
            match self.letter {
                'o' if !digits.starts_with('0') => digits.insert(0, '0'),
                'x' => digits.insert_str(0, "0x"),
                'X' => digits.insert_str(0, "0X"),
                _ => {}
            }
        }
        let signed = matches!(self.letter, 'd' | 'i');
        let body = format!("{}{digits}", self.sign(signed && v < 0));
        let zero_ok = self.precision.is_none();
        let mut me = self.clone();
        me.zero &= zero_ok;
        me.pad(body, true)
    }

    fn float(&self, v: f64) -> String {
        let prec = self.precision.unwrap_or(6);
        let upper = self.letter.is_ascii_uppercase();
        let mag = v.abs();
        let digits = if !v.is_finite() {
            let s = if v.is_nan() { "nan" } else { "inf" };
            if upper {
                s.to_uppercase()
            } else {
                s.to_string()
            }
        } else {
            match self.letter {
                'e' | 'E' => format_e(mag, prec, upper),
                'g' | 'G' => format_g(mag, prec, upper),
                _ => format!("{mag:.prec$}"),
            }
        };
        let body = format!("{}{digits}", self.sign(v.is_sign_negative() && !v.is_nan()));
        self.pad(body, v.is_finite())
    }

    fn string(&self, s: &str) -> String {
        let cut: String = match self.precision {
            Some(p) => s.chars().take(p).collect(),
            None => s.to_string(),
        };
        self.pad(cut, false)
    }

    /// The conversion applied to a rendered value, with its literal text.
    fn apply(&self, v: &Rendered) -> String {
        let middle = match (self.kind, v) {
            // HTCondor prints times and dates alone, without the literal
            // text of the format.
            (Kind::Time, Rendered::Num(n)) => return run_time(*n as i64),
            (Kind::Date, Rendered::Num(n)) => return date(*n as i64),
            (Kind::Date, Rendered::Text(t)) => return t.clone(),
            (Kind::Int, Rendered::Num(n)) => self.int(*n as i64),
            (Kind::Char, Rendered::Num(n)) => {
                let c = char::from_u32(*n as u32).unwrap_or('?');
                self.string(&c.to_string())
            }
            (Kind::Float, Rendered::Num(n)) => self.float(*n),
            (_, Rendered::Text(t)) => self.string(t),
            (_, Rendered::Num(n)) => self.string(&n.to_string()),
        };
        format!("{}{middle}{}", self.before, self.after)
    }
}

/// A column's value once read from an ad.
#[derive(Clone, Debug)]
enum Rendered {
    Num(f64),
    Text(String),
}

/// One column of a print mask.
#[derive(Clone, Debug)]
struct Column {
    /// The attribute or expression as the user wrote it.
    attr: String,
    /// `attr` parsed as an expression, when it is one.
    expr: Option<Expr>,
    /// The format as given (escapes collapsed); `None` for the job id
    /// columns, which format their own numbers.
    format: String,
    printf: Option<Printf>,
    width: usize,
    left: bool,
    auto_width: bool,
    no_prefix: bool,
    no_suffix: bool,
    heading: Option<String>,
}

/// A print mask: columns and the separators around them.
#[derive(Clone, Debug, Default)]
pub struct PrintMask {
    columns: Vec<Column>,
    row_prefix: Option<String>,
    col_prefix: Option<String>,
    col_suffix: Option<String>,
    row_suffix: Option<String>,
    headings: bool,
}

/// The flags of `-af:FLAGS`, as HTCondor's `parse_autoformat_args` reads
/// them; other letters are ignored, as there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AfFlags {
    pub label: bool,
    pub quote: bool,
    pub raw: bool,
    pub headings: bool,
    pub job_id: bool,
    pub comma: bool,
    pub tab: bool,
    pub newline: bool,
    pub blank_line: bool,
}

impl AfFlags {
    pub fn parse(flags: &str) -> AfFlags {
        let mut f = AfFlags::default();
        for c in flags.chars() {
            match c {
                ',' => {
                    f.comma = true;
                    f.newline = false;
                }
                'n' => {
                    f.newline = true;
                    f.comma = false;
                }
                'g' => f.blank_line = true,
                't' => f.tab = true,
                'l' => f.label = true,
                'V' => f.quote = true,
                'r' | 'o' => f.raw = true,
                'h' => f.headings = true,
                'j' => f.job_id = true,
                _ => {}
            }
        }
        f
    }
}

/// Splits `-af:FLAGS` / `-autoformat:FLAGS` (one or two dashes) into the
/// option and its flags; `None` for any other argument.
pub fn split_af_option(arg: &str) -> Option<&str> {
    let body = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-'))?;
    let (name, flags) = body.split_once(':')?;
    let long = "autoformat";
    (name == "af" || (name.len() >= 5 && long.starts_with(name))).then_some(flags)
}

impl PrintMask {
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// Adds `-af:FLAGS attr...` columns, setting the separators from the
    /// flags.
    pub fn autoformat(&mut self, flags: AfFlags, attrs: &[String]) -> Result<(), CliError> {
        self.row_prefix = flags.blank_line.then(|| "\n".to_string());
        self.col_prefix = if flags.blank_line {
            None
        } else if flags.tab {
            Some("\t".into())
        } else {
            Some(" ".into())
        };
        self.col_suffix = if flags.comma {
            Some(",".into())
        } else if flags.newline {
            Some("\n".into())
        } else {
            None
        };
        self.row_suffix = Some("\n".into());
        self.headings |= flags.headings;
        if flags.job_id {
            let (cfmt, pfmt, cw, pw) = if self.headings {
                (if flags.label { "ID = %4d." } else { "%4d." }, "%-3d", 5, 3)
            } else {
                (if flags.label { "ID = %d." } else { "%d." }, "%d", 0, 0)
            };
            let mut c = column(cfmt, "ClusterId")?;
            c.width = cw;
            c.left = false;
            c.auto_width = self.headings;
            c.no_suffix = true;
            c.heading = self.headings.then(|| " ID".to_string());
            self.columns.push(c);
            let mut p = column(pfmt, "ProcId")?;
            p.width = pw;
            p.left = false;
            p.auto_width = self.headings;
            p.no_prefix = true;
            p.heading = self.headings.then(|| " ".to_string());
            self.columns.push(p);
        }
        for a in attrs {
            let conv = if flags.raw {
                "%r"
            } else if flags.quote {
                "%V"
            } else {
                "%v"
            };
            let mut c;
            if self.headings {
                c = column(conv, a)?;
                c.width = a.chars().count();
                c.left = true;
                c.auto_width = true;
                c.heading = Some(a.clone());
            } else if flags.label {
                c = column(&format!("{a} = {conv}"), a)?;
                c.width = 0;
            } else {
                c = column(conv, a)?;
            }
            self.columns.push(c);
        }
        Ok(())
    }

    /// Adds a `-format FMT ATTR` column.
    pub fn format(&mut self, fmt: &str, attr: &str) -> Result<(), CliError> {
        self.columns.push(column(&collapse_escapes(fmt), attr)?);
        Ok(())
    }

    /// Prints `ads`: the heading line first when the mask has headings
    /// (its widths fitted to every row), then one row per ad.
    pub fn render(&self, ads: &[ClassAd]) -> String {
        let mut cols = self.columns.clone();
        let cells: Vec<Vec<Option<String>>> = ads
            .iter()
            .map(|ad| cols.iter().map(|c| cell(c, ad)).collect())
            .collect();
        for (i, c) in cols.iter_mut().enumerate() {
            if c.auto_width {
                for row in &cells {
                    if let Some(t) = &row[i] {
                        c.width = c.width.max(t.chars().count());
                    }
                }
            }
        }
        let mut out = String::new();
        if self.headings {
            self.row(&mut out, &cols, |c, _| {
                let h = c.heading.clone().unwrap_or_default();
                format!("{h:<w$}", w = c.width)
            });
        }
        for row in &cells {
            self.row(&mut out, &cols, |c, i| {
                align(row[i].as_deref().unwrap_or(""), c.width, c.left)
            });
        }
        out
    }

    fn row(&self, out: &mut String, cols: &[Column], text: impl Fn(&Column, usize) -> String) {
        if let Some(p) = &self.row_prefix {
            out.push_str(p);
        }
        for (i, c) in cols.iter().enumerate() {
            if i > 0
                && !c.no_prefix
                && let Some(p) = &self.col_prefix
            {
                out.push_str(p);
            }
            out.push_str(&text(c, i));
            if i + 1 < cols.len()
                && !c.no_suffix
                && let Some(s) = &self.col_suffix
            {
                out.push_str(s);
            }
        }
        if let Some(s) = &self.row_suffix {
            out.push_str(s);
        }
    }
}

fn column(fmt: &str, attr: &str) -> Result<Column, CliError> {
    let expr = parse_expr_old(attr).ok();
    let printf = Printf::parse(fmt);
    if expr.is_none() && printf.is_some() {
        return Err(CliError::Usage {
            msg: format!("'{attr}' is neither an attribute name nor a ClassAd expression"),
            hint: Some("quote an expression for the shell, e.g. -af 'RequestMemory * 2'".into()),
        });
    }
    let width = printf.as_ref().map_or(0, |p| p.width);
    let left = printf.as_ref().is_some_and(|p| p.left);
    Ok(Column {
        attr: attr.to_string(),
        expr,
        format: fmt.to_string(),
        printf,
        width,
        left,
        auto_width: false,
        no_prefix: false,
        no_suffix: false,
        heading: None,
    })
}

fn align(text: &str, width: usize, left: bool) -> String {
    if width == 0 {
        text.to_string()
    } else if left {
        format!("{text:<width$}")
    } else {
        format!("{text:>width$}")
    }
}

/// One cell: `None` when the value does not suit the conversion (the
/// column then prints nothing, literal text included, as in HTCondor).
fn cell(c: &Column, ad: &ClassAd) -> Option<String> {
    let Some(p) = &c.printf else {
        // A format with no conversion prints as it is.
        return Some(c.format.clone());
    };
    let value = read(c, p, ad)?;
    Some(p.apply(&value))
}

/// Reads a column's value the way HTCondor's `AttrListPrintMask::render`
/// does: an attribute of the ad, else the text as an expression.
fn read(c: &Column, p: &Printf, ad: &ClassAd) -> Option<Rendered> {
    let own = ad.get(&c.attr).cloned();
    let is_expr = own.is_none();
    let tree = match own {
        Some(e) => e,
        None => c.expr.clone()?,
    };
    let shared = Rc::new(ad.clone());
    let mut kind = p.kind;
    if kind == Kind::Str && !is_expr {
        match eval_in(&shared, &tree) {
            Value::Str(s) => return Some(Rendered::Text(s.to_string())),
            _ => kind = Kind::Raw,
        }
    }
    if kind == Kind::Raw {
        return Some(Rendered::Text(match tree {
            Expr::Attr(_) => "undefined".to_string(),
            other => unparse_old(&other),
        }));
    }
    let v = eval_in(&shared, &tree);
    match kind {
        Kind::Int | Kind::Char | Kind::Time | Kind::Float => v.as_number().map(Rendered::Num),
        Kind::Date => match v {
            Value::AbsTime(t) => Some(Rendered::Num(t.secs as f64)),
            other => other.as_number().map(Rendered::Num),
        },
        Kind::Str => v.as_str().map(|s| Rendered::Text(s.to_string())),
        Kind::Value => Some(Rendered::Text(match &v {
            Value::Str(s) if p.letter == 'v' => s.to_string(),
            other => value_old(other),
        })),
        Kind::Raw => None,
    }
}

/// A value in old syntax, as `condor_q` prints one.
pub fn value_old(v: &Value) -> String {
    let mut s = String::new();
    write_value(&mut s, v, Syntax::Old);
    s
}

/// Turns C escapes (`\n`, `\t`, `\\`, `\"`, `\ooo`, `\xhh`) into the
/// characters they stand for, as HTCondor does to `-format` strings.
pub fn collapse_escapes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('a') => out.push('\x07'),
            Some('b') => out.push('\x08'),
            Some('f') => out.push('\x0c'),
            Some('v') => out.push('\x0b'),
            Some(d @ '0'..='7') => {
                let mut n = d.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match it.peek().and_then(|c| c.to_digit(8)) {
                        Some(x) => {
                            n = n * 8 + x;
                            it.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(n).unwrap_or('?'));
            }
            Some('x') => {
                let mut n = 0;
                let mut any = false;
                while let Some(x) = it.peek().and_then(|c| c.to_digit(16)) {
                    n = n * 16 + x;
                    any = true;
                    it.next();
                }
                if any {
                    out.push(char::from_u32(n).unwrap_or('?'));
                } else {
                    out.push_str("\\x");
                }
            }
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// `-long`: each ad in old syntax, attributes sorted case-insensitively, a
/// blank line after each. `attrs`, when given, keeps only those attributes.
pub fn long(ads: &[ClassAd], attrs: Option<&[String]>) -> String {
    let mut out = String::new();
    for ad in ads {
        out.push_str(&ad_to_old(&project(ad, attrs), true));
        out.push('\n');
    }
    out
}

/// `-json`: one JSON array of the ads.
pub fn json(ads: &[ClassAd], attrs: Option<&[String]>) -> String {
    let projected: Vec<ClassAd> = ads.iter().map(|a| project(a, attrs)).collect();
    ads_to_json_array(projected.iter())
}

/// The attributes of `ad` named in `attrs` (all of them when `None`).
pub fn project(ad: &ClassAd, attrs: Option<&[String]>) -> ClassAd {
    let Some(names) = attrs else {
        return ad.clone();
    };
    let mut out = ClassAd::new();
    for (name, e) in ad.iter_shared() {
        if names.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            out.insert_shared(name, e.clone());
        }
    }
    out
}

/// `-attributes a,b c`: names separated by commas or spaces.
pub fn attribute_list(text: &[String]) -> Vec<String> {
    text.iter()
        .flat_map(|t| t.split([',', ' ']))
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// A time as the queue listings print it, `%2d/%-2d %02d:%02d` (month,
/// day, hour, minute) in local time.
pub fn date(secs: i64) -> String {
    use chrono::{Datelike, Local, TimeZone, Timelike};
    match Local.timestamp_opt(secs, 0).single() {
        Some(t) => format!(
            "{:2}/{:<2} {:02}:{:02}",
            t.month(),
            t.day(),
            t.hour(),
            t.minute()
        ),
        None => "    ???    ".to_string(),
    }
}

/// A duration in seconds as `ddd+hh:mm:ss` (days right-aligned in three
/// columns); a negative one as `[?????]`.
pub fn run_time(secs: i64) -> String {
    if secs < 0 {
        return "[?????]".to_string();
    }
    let (d, rest) = (secs / 86_400, secs % 86_400);
    format!(
        "{d:3}+{:02}:{:02}:{:02}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// An attribute of `ad` evaluated to a number.
pub fn number(ad: &ClassAd, name: &str) -> Option<f64> {
    let e = ad.get(name)?;
    eval_in(&Rc::new(ad.clone()), e).as_number()
}

/// An attribute of `ad` evaluated to a string.
pub fn string(ad: &ClassAd, name: &str) -> Option<String> {
    let e = ad.get(name)?;
    match eval_in(&Rc::new(ad.clone()), e) {
        Value::Str(s) => Some(s.to_string()),
        _ => None,
    }
}

/// The CMD column: `(JobDescription)` when the job has one, otherwise the
/// base name of `Cmd` followed by the arguments.
pub fn job_description(ad: &ClassAd) -> String {
    let Some(cmd) = string(ad, "Cmd") else {
        return String::new();
    };
    if let Some(d) = string(ad, "MATCH_EXP_JobDescription")
        .or_else(|| string(ad, "JobDescription"))
        .filter(|d| !d.is_empty())
    {
        return format!("({d})");
    }
    let base = cmd.rsplit('/').next().unwrap_or(&cmd).to_string();
    let args = string(ad, "Arguments")
        .filter(|a| !a.is_empty())
        .or_else(|| string(ad, "Args"))
        .unwrap_or_default();
    if args.is_empty() {
        base
    } else {
        format!("{base} {args}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::parse_ad;

    fn ad(text: &str) -> ClassAd {
        parse_ad(text).unwrap()
    }

    fn af(flags: &str, attrs: &[&str], ads: &[ClassAd]) -> String {
        let mut m = PrintMask::default();
        let attrs: Vec<String> = attrs.iter().map(|s| s.to_string()).collect();
        m.autoformat(AfFlags::parse(flags), &attrs).unwrap();
        m.render(ads)
    }

    fn fmt(f: &str, attr: &str, a: &ClassAd) -> String {
        let mut m = PrintMask::default();
        m.format(f, attr).unwrap();
        m.render(std::slice::from_ref(a))
    }

    #[test]
    fn autoformat_prints_strings_raw_and_the_rest_in_old_syntax() {
        let a = ad(r#"[Owner = "alice"; Cpus = 2; R = 1.5; L = {1, "x"}; E = Cpus * 2]"#);
        assert_eq!(
            af(
                "",
                &["Owner", "Cpus", "R", "L", "E", "Nope", "Cpus + 1"],
                &[a]
            ),
            "alice 2 1.5 { 1,\"x\" } 4 undefined 3\n"
        );
    }

    #[test]
    fn autoformat_flags() {
        let a = ad(r#"[ClusterId = 3; ProcId = 1; Owner = "al\"ice"; E = Cpus * 2]"#);
        let b = ad(r#"[ClusterId = 12; ProcId = 0; Owner = "bo"; E = 1]"#);
        assert_eq!(
            af("V", &["Owner"], std::slice::from_ref(&a)),
            "\"al\\\"ice\"\n"
        );
        assert_eq!(
            af("r", &["E", "Owner"], std::slice::from_ref(&a)),
            "Cpus * 2 \"al\\\"ice\"\n"
        );
        assert_eq!(
            af("j", &["Owner"], std::slice::from_ref(&a)),
            "3.1 al\"ice\n"
        );
        assert_eq!(af("l", &["E"], std::slice::from_ref(&b)), "E = 1\n");
        assert_eq!(
            af("jl", &["E"], std::slice::from_ref(&b)),
            "ID = 12.0 E = 1\n"
        );
        assert_eq!(
            af(",", &["E", "Owner"], std::slice::from_ref(&b)),
            "1, bo\n"
        );
        assert_eq!(
            af("t", &["E", "Owner"], std::slice::from_ref(&b)),
            "1\tbo\n"
        );
        assert_eq!(
            af("n", &["E", "Owner"], std::slice::from_ref(&b)),
            "1\n bo\n"
        );
        assert_eq!(
            af("lrng", &["E", "Owner"], std::slice::from_ref(&b)),
            "\nE = 1\nOwner = \"bo\"\n"
        );
        assert_eq!(
            af("h", &["Owner", "E"], &[a.clone(), b.clone()]),
            "Owner  E        \nal\"ice undefined\nbo     1        \n"
        );
        assert_eq!(
            af("jh", &["Owner"], &[a, b]),
            " ID      Owner \n   3.1   al\"ice\n  12.0   bo    \n"
        );
    }

    #[test]
    fn format_conversions() {
        let a = ad(r#"[Owner = "alice"; N = 42; R = 2.5; T = 3725; Q = 1700000000; S = 1 + 2]"#);
        assert_eq!(fmt("%s\\n", "Owner", &a), "alice\n");
        assert_eq!(fmt("[%-7s]", "Owner", &a), "[alice  ]");
        assert_eq!(fmt("%d/%5.1f", "N", &a), "42/%5.1f");
        assert_eq!(fmt("%05d", "N", &a), "00042");
        assert_eq!(fmt("%x", "N", &a), "2a");
        assert_eq!(fmt("%.2f", "R", &a), "2.50");
        assert_eq!(fmt("%d", "R", &a), "2");
        assert_eq!(fmt("%s", "S", &a), "1 + 2");
        assert_eq!(fmt("%v", "S", &a), "3");
        assert_eq!(fmt("%V", "Owner", &a), "\"alice\"");
        assert_eq!(fmt("x=%T", "T", &a), "  0+01:02:05");
        assert_eq!(fmt("%d", "Owner", &a), "");
        assert_eq!(fmt("%d", "Missing", &a), "");
        assert_eq!(fmt("hello\\n", "Missing", &a), "hello\n");
        assert_eq!(fmt("100%% %d", "N", &a), "100% 42");
    }

    #[test]
    fn run_times_and_escapes() {
        assert_eq!(run_time(0), "  0+00:00:00");
        assert_eq!(run_time(90061), "  1+01:01:01");
        assert_eq!(run_time(-1), "[?????]");
        assert_eq!(collapse_escapes(r"a\tb\n\101\x42\\"), "a\tb\nAB\\");
    }

    #[test]
    fn af_option_spellings() {
        assert_eq!(split_af_option("-af:jh"), Some("jh"));
        assert_eq!(split_af_option("--autoformat:l"), Some("l"));
        assert_eq!(split_af_option("-autof:V"), Some("V"));
        assert_eq!(split_af_option("-af"), None);
        assert_eq!(split_af_option("-a:x"), None);
    }

    #[test]
    fn cmd_column() {
        let a = ad(r#"[Cmd = "/bin/sleep"; Args = "10"]"#);
        assert_eq!(job_description(&a), "sleep 10");
        let b = ad(r#"[Cmd = "/bin/sleep"; Arguments = ""; JobDescription = "nap"]"#);
        assert_eq!(job_description(&b), "(nap)");
    }
}
