//! Sizes with units for `request_memory` (MiB) and `request_disk` (KiB).

/// The base unit a size is stored in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base {
    MiB,
    KiB,
}

/// Outcome of reading a size.
#[derive(Debug, PartialEq)]
pub enum Size {
    /// `<number>[ ][unit]`, converted and rounded up.
    Int(i64),
    /// Not a number with a unit: keep it as an expression.
    Expr,
}

/// Reads `<number>[ ]<unit>` with K/KB/M/MB/G/GB/T/TB in any case. A
/// number followed by any other letters is an error.
pub fn parse_size(text: &str, base: Base) -> Result<Size, String> {
    let t = text.trim();
    let num_len = t
        .char_indices()
        .take_while(|(i, c)| {
            c.is_ascii_digit() || *c == '.' || (*i == 0 && (*c == '-' || *c == '+'))
        })
        .count();
    if num_len == 0 {
        return Ok(Size::Expr);
    }
    let (num, rest) = t.split_at(num_len);
    let unit = rest.trim_start();
    let Ok(n) = num.parse::<f64>() else {
        return Ok(Size::Expr);
    };
    if unit.is_empty() {
        return Ok(Size::Int(round_up(n, 1.0, 1.0)));
    }
    if !unit.chars().all(|c| c.is_ascii_alphabetic()) {
        return Ok(Size::Expr);
    }
    let kib: f64 = match unit.to_ascii_uppercase().as_str() {
        "K" | "KB" => 1.0,
        "M" | "MB" => 1024.0,
        "G" | "GB" => 1024.0 * 1024.0,
        "T" | "TB" => 1024.0 * 1024.0 * 1024.0,
        _ => {
            return Err(format!(
                "'{t}' is not a size: the unit must be K, KB, M, MB, G, GB, T or TB"
            ));
        }
    };
    Ok(Size::Int(round_up(n, kib, 1.0 / base_kib(base))))
}

fn base_kib(b: Base) -> f64 {
    match b {
        Base::MiB => 1024.0,
        Base::KiB => 1.0,
    }
}

/// `n * unit * scale`, rounded up, negatives clamped to 0.
fn round_up(n: f64, unit: f64, scale: f64) -> i64 {
    let v = (n * unit * scale).ceil();
    if v <= 0.0 { 0 } else { v as i64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_and_disk() {
        let m = |s: &str| parse_size(s, Base::MiB);
        let d = |s: &str| parse_size(s, Base::KiB);
        assert_eq!(m("1G"), Ok(Size::Int(1024)));
        assert_eq!(m("1.5G"), Ok(Size::Int(1536)));
        assert_eq!(m("2048K"), Ok(Size::Int(2)));
        assert_eq!(m("100K"), Ok(Size::Int(1)));
        assert_eq!(m("1.5"), Ok(Size::Int(2)));
        assert_eq!(m("-1"), Ok(Size::Int(0)));
        assert_eq!(m("512 mb"), Ok(Size::Int(512)));
        assert!(m("1GiB").is_err());
        assert!(m("10B").is_err());
        assert!(m("1P").is_err());
        assert_eq!(m("2 * 1024"), Ok(Size::Expr));
        assert_eq!(m("MemoryUsage*2"), Ok(Size::Expr));
        assert_eq!(m("\"1G\""), Ok(Size::Expr));
        assert_eq!(m("1e3"), Ok(Size::Expr));
        assert_eq!(d("1G"), Ok(Size::Int(1048576)));
        assert_eq!(d("10 MB"), Ok(Size::Int(10240)));
        assert_eq!(d("0.5K"), Ok(Size::Int(1)));
    }
}
