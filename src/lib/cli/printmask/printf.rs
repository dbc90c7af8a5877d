//! The printf of `-format` and `-af`: a format string's one conversion
//! and the literal text around it, with HTCondor's own conversions (`%v`,
//! `%V`, `%r`, `%T`, `%Y`) next to C's.

use crate::classad::unparse::{format_e, format_g};

/// A -format format: literal text around at most one conversion.
#[derive(Clone, Debug, PartialEq)]
pub struct Printf {
    pub before: String,
    pub spec: Option<Spec>,
    pub after: String,
}

/// One printf conversion: `%[flags][width][.precision][length]conv`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Spec {
    pub left: bool,
    pub plus: bool,
    pub space: bool,
    pub zero: bool,
    pub alt: bool,
    pub width: usize,
    pub precision: Option<usize>,
    pub conv: char,
}

/// What a conversion reads from the value, as HTCondor's `printf_fmt_t`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Int,
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

impl Spec {
    pub fn kind(&self) -> Kind {
        match self.conv {
            'd' | 'i' | 'u' | 'o' | 'x' | 'X' | 'c' => Kind::Int,
            'e' | 'E' | 'f' | 'F' | 'g' | 'G' | 'a' | 'A' => Kind::Float,
            'v' | 'V' => Kind::Value,
            'r' | 'R' => Kind::Raw,
            'T' => Kind::Time,
            'Y' => Kind::Date,
            _ => Kind::Str,
        }
    }
}

impl Printf {
    /// Finds the first conversion; `%%` is a literal `%` everywhere, and
    /// text after the conversion is literal.
    pub fn parse(fmt: &str) -> Printf {
        let chars: Vec<char> = fmt.chars().collect();
        let mut before = String::new();
        let mut i = 0;
        while i < chars.len() {
            if chars[i] != '%' {
                before.push(chars[i]);
                i += 1;
                continue;
            }
            if chars.get(i + 1) == Some(&'%') {
                before.push('%');
                i += 2;
                continue;
            }
            if let Some((spec, next)) = parse_spec(&chars, i + 1) {
                let after = chars[next..].iter().collect::<String>().replace("%%", "%");
                return Printf {
                    before,
                    spec: Some(spec),
                    after,
                };
            }
            before.push('%');
            i += 1;
        }
        Printf {
            before,
            spec: None,
            after: String::new(),
        }
    }

    /// The text of a format without a conversion.
    fn literal(&self) -> String {
        format!("{}{}", self.before, self.after)
    }

    fn wrap(&self, body: &str) -> String {
        format!("{}{body}{}", self.before, self.after)
    }

    /// Just the conversion: no text around it, no width, no precision.
    pub fn plain(&self) -> bool {
        self.before.is_empty()
            && self.after.is_empty()
            && self
                .spec
                .as_ref()
                .is_some_and(|s| s.width == 0 && s.precision.is_none())
    }

    /// `%s`-style: precision cuts, width pads.
    pub fn apply_str(&self, s: &str) -> String {
        let mut out = String::new();
        self.write_str(&mut out, s);
        out
    }

    /// [`Printf::apply_str`], appending to `out`.
    pub fn write_str(&self, out: &mut String, s: &str) {
        out.push_str(&self.before);
        match &self.spec {
            Some(sp) if sp.width > 0 || sp.precision.is_some() => {
                let cut: String = match sp.precision {
                    Some(p) => s.chars().take(p).collect(),
                    None => s.to_string(),
                };
                out.push_str(&pad(&cut, sp.width, sp.left));
            }
            Some(_) => out.push_str(s),
            None => {}
        }
        out.push_str(&self.after);
    }

    pub fn apply_int(&self, i: i64) -> String {
        let Some(sp) = &self.spec else {
            return self.literal();
        };
        if sp.kind() == Kind::Float {
            return self.apply_float(i as f64);
        }
        if sp.conv == 'c' {
            let ch = char::from_u32(i as u32).unwrap_or('?');
            return self.wrap(&pad(&ch.to_string(), sp.width, sp.left));
        }
        let signed = matches!(sp.conv, 'd' | 'i');
        let negative = i < 0 && signed;
        let u = if signed { i.unsigned_abs() } else { i as u64 };
        let mut digits = match sp.conv {
            'o' => format!("{u:o}"),
            'x' => format!("{u:x}"),
            'X' => format!("{u:X}"),
            _ => u.to_string(),
        };
        if let Some(p) = sp.precision {
            if p == 0 && u == 0 {
                digits.clear();
            }
            while digits.len() < p {
                digits.insert(0, '0');
            }
        }
        let prefix = if negative {
            "-"
        } else if sp.plus && signed {
            "+"
        } else if sp.space && signed {
            " "
        } else if sp.alt && u != 0 && sp.conv == 'x' {
            "0x"
        } else if sp.alt && u != 0 && sp.conv == 'X' {
            "0X"
        } else if sp.alt && sp.conv == 'o' && !digits.starts_with('0') {
            "0"
        } else {
            ""
        };
        self.wrap(&pad_number(
            prefix,
            &digits,
            sp.width,
            sp.left,
            sp.zero && sp.precision.is_none(),
        ))
    }

    pub fn apply_float(&self, r: f64) -> String {
        let Some(sp) = &self.spec else {
            return self.literal();
        };
        if sp.kind() == Kind::Int {
            return self.apply_int(r as i64);
        }
        let p = sp.precision.unwrap_or(6);
        let upper = sp.conv.is_ascii_uppercase();
        let a = r.abs();
        let body = if !a.is_finite() {
            let t = if a.is_nan() { "nan" } else { "inf" };
            if upper {
                t.to_uppercase()
            } else {
                t.to_string()
            }
        } else {
            match sp.conv.to_ascii_lowercase() {
                'f' => format!("{a:.p$}"),
                'g' => format_g(a, p, upper),
                _ => format_e(a, p, upper),
            }
        };
        let prefix = if r.is_sign_negative() && !r.is_nan() {
            "-"
        } else if sp.plus {
            "+"
        } else if sp.space {
            " "
        } else {
            ""
        };
        self.wrap(&pad_number(
            prefix,
            &body,
            sp.width,
            sp.left,
            sp.zero && a.is_finite(),
        ))
    }
}

fn parse_spec(chars: &[char], mut i: usize) -> Option<(Spec, usize)> {
    let mut sp = Spec::default();
    while let Some(&c) = chars.get(i) {
        match c {
            '-' => sp.left = true,
            '+' => sp.plus = true,
            ' ' => sp.space = true,
            '0' => sp.zero = true,
            '#' => sp.alt = true,
            _ => break,
        }
        i += 1;
    }
    while let Some(d) = chars.get(i).and_then(|c| c.to_digit(10)) {
        sp.width = sp.width * 10 + d as usize;
        i += 1;
    }
    if chars.get(i) == Some(&'.') {
        i += 1;
        let mut p = 0;
        while let Some(d) = chars.get(i).and_then(|c| c.to_digit(10)) {
            p = p * 10 + d as usize;
            i += 1;
        }
        sp.precision = Some(p);
    }
    while matches!(chars.get(i), Some('h' | 'l' | 'L' | 'q' | 'j' | 'z' | 't')) {
        i += 1;
    }
    let conv = *chars.get(i)?;
    if !"diouxXceEfFgGaAsvVrRTY".contains(conv) {
        return None;
    }
    sp.conv = conv;
    Some((sp, i + 1))
}

pub fn pad(s: &str, width: usize, left: bool) -> String {
    let n = s.chars().count();
    if n >= width {
        return s.to_string();
    }
    let fill = " ".repeat(width - n);
    if left {
        format!("{s}{fill}")
    } else {
        format!("{fill}{s}")
    }
}

fn pad_number(prefix: &str, digits: &str, width: usize, left: bool, zero: bool) -> String {
    let n = prefix.len() + digits.len();
    if n >= width {
        return format!("{prefix}{digits}");
    }
    let fill = width - n;
    if left {
        format!("{prefix}{digits}{}", " ".repeat(fill))
    } else if zero {
        format!("{prefix}{}{digits}", "0".repeat(fill))
    } else {
        format!("{}{prefix}{digits}", " ".repeat(fill))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printf_conversions() {
        let p = |f: &str| Printf::parse(f);
        assert_eq!(p("%d.").apply_int(12), "12.");
        assert_eq!(p("%-3d|").apply_int(7), "7  |");
        assert_eq!(p("%05d").apply_int(-42), "-0042");
        assert_eq!(p("%+d").apply_int(3), "+3");
        assert_eq!(p("%x %%").apply_int(255), "ff %");
        assert_eq!(p("%#o").apply_int(8), "010");
        assert_eq!(p("%.3d").apply_int(5), "005");
        assert_eq!(p("%f").apply_float(1.5), "1.500000");
        assert_eq!(p("%.2f").apply_int(3), "3.00");
        assert_eq!(p("%d").apply_float(2.9), "2");
        assert_eq!(p("%g").apply_float(0.0001), "0.0001");
        assert_eq!(p("%e").apply_float(12345.0), "1.234500e+04");
        assert_eq!(p("%8.3s|").apply_str("abcdef"), "     abc|");
        assert_eq!(p("%-6v|").apply_str("ab"), "ab    |");
        assert_eq!(p("no conversion").literal(), "no conversion");
        assert_eq!(p("100%% %s").apply_str("x"), "100% x");
        assert_eq!(p("%lld").apply_int(1), "1");
    }
}
