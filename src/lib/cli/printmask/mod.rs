//! The print mask: what `-af[:FLAGS] ATTR...` and `-format FMT ATTR` mean,
//! for every tool that lists ads (`tern_q`, `tern_history`, `tern_status`).
//!
//! It follows HTCondor's `AttrListPrintMask`: each column names an
//! attribute or an expression and a printf-style conversion; a row is the
//! row prefix, the columns (a column prefix before all but the first, a
//! column suffix after all but the last), then the row suffix. Each `-af`
//! sets those separators from its flags (condor_q's
//! `parse_autoformat_args`); `-format` sets none, so its format strings
//! carry their own spaces and newlines. Columns keep their command-line
//! order ([`PrintMask::from_matches`]).
//!
//! A row is anything that implements [`Row`]: an ad, or for `tern_q` a
//! queue row whose indexed columns can be read without building the ad.
//! [`PrintMask::bind_fast`] names those columns, and the mask then reads
//! them through [`Row::fast`]; that is the path that keeps `tern_q -af
//! ClusterId ProcId JobStatus` over a large queue from parsing any ad.

mod printf;

use std::io::{self, Write};
use std::rc::Rc;

use clap::ArgMatches;

pub use printf::{Printf, Spec};

use super::CliError;
use super::format::{collapse_escapes, date, run_time, value_old};
use crate::classad::parser::parse_expr_old;
use crate::classad::unparse::unparse_old;
use crate::classad::{ClassAd, Expr, Value, eval_attr, eval_in};
use printf::{Kind, pad};

/// One row to print: the values the mask reads.
pub trait Row {
    /// The value of fast attribute `i`, an index into the names given to
    /// [`PrintMask::bind_fast`]; `None` when this row's copy of it is not
    /// the ad's value (the column then reads [`Row::ad`], which must be
    /// the full ad).
    fn fast(&self, i: usize) -> Option<Value>;
    /// The ad the other columns read, when there is one.
    fn ad(&self) -> Option<&Rc<ClassAd>>;
}

impl Row for Rc<ClassAd> {
    fn fast(&self, _: usize) -> Option<Value> {
        None
    }
    fn ad(&self) -> Option<&Rc<ClassAd>> {
        Some(self)
    }
}

/// One output column of -af or -format.
#[derive(Debug)]
struct Column {
    /// Set when the text is a plain attribute name.
    attr: Option<String>,
    expr: Expr,
    /// The fast attribute the text names (see [`PrintMask::bind_fast`]).
    fast: Option<usize>,
    format: Printf,
    /// The heading (-af:h).
    heading: Option<String>,
    /// No separator before / after this column.
    no_prefix: bool,
    no_suffix: bool,
}

/// The -af/-format columns and the separators around them.
#[derive(Debug)]
pub struct PrintMask {
    columns: Vec<Column>,
    row_prefix: &'static str,
    col_prefix: &'static str,
    col_suffix: &'static str,
    row_suffix: &'static str,
    headings: bool,
}

fn usage(msg: impl Into<String>) -> CliError {
    CliError::Usage {
        msg: msg.into(),
        hint: None,
    }
}

impl PrintMask {
    fn new() -> PrintMask {
        PrintMask {
            columns: Vec::new(),
            row_prefix: "",
            col_prefix: "",
            col_suffix: "",
            row_suffix: "",
            headings: false,
        }
    }

    /// Builds the mask from a tool's parsed arguments, in command-line
    /// order; `None` when there is no `-af` or `-format`. The tool's clap
    /// command declares the arguments `autoformat` (1 or more values),
    /// `format` (2 values a time) and `af_flags`, the hidden option that
    /// the colon form `-af:FLAGS` becomes just before its `--autoformat`
    /// (see [`super::COLON_FORMS`]).
    pub fn from_matches(m: &ArgMatches) -> Result<Option<PrintMask>, CliError> {
        enum Item<'a> {
            Af(&'a str, Vec<&'a String>),
            Format(&'a String, &'a String),
        }
        let occurrences = |id: &str| -> Vec<(usize, Vec<&String>)> {
            let (Ok(Some(occ)), Some(idx)) =
                (m.try_get_occurrences::<String>(id), m.indices_of(id))
            else {
                return Vec::new();
            };
            let idx: Vec<usize> = idx.collect();
            let mut k = 0;
            let mut out = Vec::new();
            for o in occ {
                let vals: Vec<&String> = o.collect();
                out.push((idx[k], vals.clone()));
                k += vals.len();
            }
            out
        };
        let flags = occurrences("af_flags");
        let mut items: Vec<(usize, Item)> = Vec::new();
        let mut last_af = 0;
        for (i, vals) in occurrences("autoformat") {
            // The flags of this -af are the ones given right before it.
            let f = flags
                .iter()
                .rev()
                .find(|(fi, _)| *fi < i && *fi >= last_af)
                .and_then(|(_, v)| v.first())
                .map_or("", |s| s.as_str());
            items.push((i, Item::Af(f, vals)));
            last_af = i;
        }
        for (i, vals) in occurrences("format") {
            for pair in vals.chunks(2) {
                if let [f, a] = pair {
                    items.push((i, Item::Format(f, a)));
                }
            }
        }
        if items.is_empty() {
            return Ok(None);
        }
        items.sort_by_key(|(i, _)| *i);
        let mut mask = PrintMask::new();
        for (_, item) in items {
            match item {
                Item::Format(f, a) => mask.format(f, a)?,
                Item::Af(flags, vals) => {
                    let attrs: Vec<&str> = vals.iter().map(|s| s.as_str()).collect();
                    mask.autoformat(flags, &attrs)?;
                }
            }
        }
        Ok(Some(mask))
    }

    /// Adds a `-format FMT ATTR` column (C escapes in FMT collapsed).
    pub fn format(&mut self, fmt: &str, attr: &str) -> Result<(), CliError> {
        let format = Printf::parse(&collapse_escapes(fmt));
        self.columns.push(column(attr, format, None)?);
        Ok(())
    }

    /// One -af occurrence: its flags set the separators, as each -af does
    /// in condor_q (`parse_autoformat_args`), and its attributes become
    /// columns.
    pub fn autoformat(&mut self, flags: &str, attrs: &[&str]) -> Result<(), CliError> {
        if attrs.is_empty() {
            return Err(usage("-autoformat requires at least one attribute"));
        }
        let (mut label, mut quote, mut raw, mut heads, mut jobid) =
            (false, false, false, false, false);
        let mut conv = None;
        self.row_prefix = "";
        self.col_prefix = " ";
        self.col_suffix = "";
        // As HTCondor's parse_autoformat_args: other letters are ignored,
        // and of `,` and `n` the last one wins.
        for ch in flags.chars() {
            match ch {
                ',' => self.col_suffix = ",",
                'n' => self.col_suffix = "\n",
                'g' => {
                    self.col_prefix = "";
                    self.row_prefix = "\n";
                }
                't' => self.col_prefix = "\t",
                'l' => label = true,
                'V' => quote = true,
                'r' | 'o' => raw = true,
                'h' => heads = true,
                'j' => jobid = true,
                'T' => conv = Some('T'),
                'Y' => conv = Some('Y'),
                _ => {}
            }
        }
        self.row_suffix = "\n";
        heads |= self.headings;
        self.headings = heads;
        if jobid {
            self.job_id_columns(heads, label)?;
        }
        let letter = match (raw, conv, quote) {
            (true, _, _) => 'r',
            (false, Some(c), _) => c,
            (false, None, true) => 'V',
            (false, None, false) => 'v',
        };
        for a in attrs {
            // Headings replace labels.
            let fmt = if label && !heads {
                format!("{a} = %{letter}")
            } else {
                format!("%{letter}")
            };
            self.columns.push(column(
                a,
                Printf::parse(&fmt),
                heads.then(|| a.to_string()),
            )?);
        }
        Ok(())
    }

    /// `-af:j`: ClusterId and ProcId as one `c.p` column.
    fn job_id_columns(&mut self, heads: bool, label: bool) -> Result<(), CliError> {
        let (cf, pf) = match (heads, label) {
            (true, true) => ("ID = %4d.", "%-3d"),
            (true, false) => ("%4d.", "%-3d"),
            (false, true) => ("ID = %d.", "%d"),
            (false, false) => ("%d.", "%d"),
        };
        let mut c = column(
            "ClusterId",
            Printf::parse(cf),
            heads.then(|| " ID".to_string()),
        )?;
        c.no_suffix = true;
        self.columns.push(c);
        let mut p = column("ProcId", Printf::parse(pf), heads.then(|| " ".to_string()))?;
        p.no_prefix = true;
        self.columns.push(p);
        Ok(())
    }

    /// Reads the columns that name one of `names` (plain attribute names,
    /// matched without regard to case) through [`Row::fast`] from now on.
    pub fn bind_fast(&mut self, names: &[&str]) {
        for c in &mut self.columns {
            c.fast = c
                .attr
                .as_deref()
                .and_then(|a| names.iter().position(|n| n.eq_ignore_ascii_case(a)));
        }
    }

    /// Whether every column can be printed without the full ad: each
    /// conversion reads a fast attribute or an expression `cheap` accepts.
    pub fn reads_only(&self, cheap: impl Fn(&Expr) -> bool) -> bool {
        self.columns
            .iter()
            .all(|c| c.format.spec.is_none() || c.fast.is_some() || cheap(&c.expr))
    }

    /// Whether some column's conversion reads an expression `pred`
    /// accepts (a fast column's expression is its attribute name).
    pub fn reads_any(&self, pred: impl Fn(&Expr) -> bool) -> bool {
        self.columns
            .iter()
            .any(|c| c.format.spec.is_some() && pred(&c.expr))
    }

    /// Whether some column reads an ad (a conversion not bound to a fast
    /// attribute).
    pub fn needs_ad(&self) -> bool {
        self.columns
            .iter()
            .any(|c| c.format.spec.is_some() && c.fast.is_none())
    }

    pub fn len(&self) -> usize {
        self.columns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// Whether a heading line comes first (-af:h).
    pub fn headings(&self) -> bool {
        self.headings
    }

    /// A printer that takes the rows one at a time.
    pub fn printer(&self) -> Printer<'_> {
        Printer {
            mask: self,
            table: Vec::new(),
            cells: Vec::with_capacity(self.columns.len()),
            line: String::new(),
        }
    }

    /// Prints `ads`, the heading line first when the mask has headings.
    pub fn render(&self, ads: &[ClassAd]) -> String {
        let mut out: Vec<u8> = Vec::new();
        let mut p = self.printer();
        for ad in ads {
            // Writing to a Vec cannot fail.
            let _ = p.row(&Rc::new(ad.clone()), &mut out);
        }
        let _ = p.finish(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// One output row: the row prefix, the cells with their separators
    /// (padded to `widths` when given), the row suffix.
    fn join_row(&self, cells: &[String], widths: Option<&[usize]>, out: &mut String) {
        out.push_str(self.row_prefix);
        let n = cells.len();
        for (i, (c, cell)) in self.columns.iter().zip(cells).enumerate() {
            if i > 0 && !c.no_prefix {
                out.push_str(self.col_prefix);
            }
            match widths {
                Some(w) => {
                    let _ = std::fmt::Write::write_fmt(out, format_args!("{cell:<w$}", w = w[i]));
                }
                None => out.push_str(cell),
            }
            if i + 1 < n && !c.no_suffix {
                out.push_str(self.col_suffix);
            }
        }
        out.push_str(self.row_suffix);
    }
}

/// Prints rows as they come; with headings, rows wait until
/// [`Printer::finish`] knows every column's width.
pub struct Printer<'m> {
    mask: &'m PrintMask,
    table: Vec<Vec<String>>,
    cells: Vec<String>,
    line: String,
}

impl Printer<'_> {
    pub fn row(&mut self, row: &impl Row, out: &mut impl Write) -> io::Result<()> {
        let mask = self.mask;
        self.cells.resize(mask.columns.len(), String::new());
        for (c, cell) in mask.columns.iter().zip(self.cells.iter_mut()) {
            cell.clear();
            render_cell(c, row, cell);
        }
        if mask.headings {
            self.table.push(self.cells.clone());
            return Ok(());
        }
        self.line.clear();
        mask.join_row(&self.cells, None, &mut self.line);
        out.write_all(self.line.as_bytes())
    }

    /// Prints what waited for the column widths: the heading line and the
    /// rows, each without the padding of its last column.
    pub fn finish(mut self, out: &mut impl Write) -> io::Result<()> {
        let mask = self.mask;
        if !mask.headings {
            return Ok(());
        }
        let mut widths: Vec<usize> = mask
            .columns
            .iter()
            .map(|c| c.heading.as_deref().map_or(0, |h| h.chars().count()))
            .collect();
        for row in &self.table {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let heads: Vec<String> = mask
            .columns
            .iter()
            .map(|c| c.heading.clone().unwrap_or_default())
            .collect();
        let mut head = String::new();
        mask.join_row(&heads, Some(&widths), &mut head);
        out.write_all(trim_lines(&head).as_bytes())?;
        for row in &self.table {
            self.line.clear();
            mask.join_row(row, Some(&widths), &mut self.line);
            out.write_all(trim_lines(&self.line).as_bytes())?;
        }
        Ok(())
    }
}

/// A column for `text`, which must be an expression (an attribute name is
/// one), read as HTCondor reads them, in old ClassAd syntax.
fn column(text: &str, format: Printf, heading: Option<String>) -> Result<Column, CliError> {
    let expr = parse_expr_old(text).map_err(|_| CliError::Usage {
        msg: format!("'{text}' is neither an attribute name nor a ClassAd expression"),
        hint: Some("quote an expression for the shell, e.g. -af 'RequestMemory * 2'".into()),
    })?;
    let attr = match &expr {
        Expr::Attr(a) if a.base.is_none() && !a.absolute => Some(a.name.as_str().to_string()),
        _ => None,
    };
    Ok(Column {
        attr,
        expr,
        fast: None,
        format,
        heading,
        no_prefix: false,
        no_suffix: false,
    })
}

/// Removes blanks at the ends of lines (the padding of a last column).
fn trim_lines(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for piece in text.split_inclusive('\n') {
        match piece.strip_suffix('\n') {
            Some(l) => {
                s.push_str(l.trim_end_matches(' '));
                s.push('\n');
            }
            None => s.push_str(piece.trim_end_matches(' ')),
        }
    }
    s
}

/// One cell, as condor_q's print mask renders a printf-style column: the
/// attribute itself when the row has it, else the text as an expression.
/// Appends to `out`; a value that does not suit the conversion prints
/// nothing, literal text included, as in HTCondor.
fn render_cell(c: &Column, row: &impl Row, out: &mut String) {
    let Some(spec) = &c.format.spec else {
        out.push_str(&c.format.before);
        out.push_str(&c.format.after);
        return;
    };
    let ad = row.ad();
    let fast = c.fast.and_then(|h| row.fast(h));
    let found = match (&fast, ad, c.attr.as_deref()) {
        (Some(_), _, _) => true,
        (None, Some(ad), Some(a)) => ad.contains(a),
        _ => false,
    };
    let value = || match (&fast, ad) {
        (Some(v), _) => v.clone(),
        (None, Some(ad)) if found => eval_attr(ad, c.attr.as_deref().unwrap_or_default()),
        (None, Some(ad)) => eval_in(ad, &c.expr),
        (None, None) => eval_in(&Rc::new(ClassAd::new()), &c.expr),
    };
    // condor_q's raw form (AttrListPrintMask::display): the attribute's
    // own expression when the row has it; else the text unparsed, except
    // that a bare attribute reference the row lacks is `undefined`, not
    // its own name.
    let raw = || match (&fast, ad, c.attr.as_deref()) {
        (Some(v), _, _) => unparse_old(&Expr::Lit(v.clone())),
        (None, Some(ad), Some(a)) if found => ad.get(a).map(unparse_old).unwrap_or_default(),
        _ if matches!(c.expr, Expr::Attr(_)) => "undefined".to_string(),
        _ => unparse_old(&c.expr),
    };
    let f = &c.format;
    match spec.kind() {
        Kind::Str => match value() {
            Value::Str(s) => f.write_str(out, &s),
            _ if found => f.write_str(out, &raw()),
            _ => {}
        },
        Kind::Raw => f.write_str(out, &raw()),
        Kind::Value => match value() {
            // The common cases without a detour through the unparser.
            Value::Str(s) if spec.conv == 'v' => f.write_str(out, &s),
            Value::Int(i) if f.plain() => {
                let _ = std::fmt::Write::write_fmt(out, format_args!("{i}"));
            }
            v => f.write_str(out, &value_old(&v)),
        },
        k => {
            let n = match value() {
                Value::Int(i) => Num::Int(i),
                Value::Real(r) => Num::Real(r),
                Value::Bool(b) => Num::Int(b as i64),
                Value::AbsTime(t) if k == Kind::Date => Num::Int(t.secs),
                _ => return,
            };
            out.push_str(&match k {
                // HTCondor prints times and dates alone, without the
                // literal text of the format.
                Kind::Time => pad(&run_time(n.as_int()), spec.width, spec.left),
                Kind::Date => pad(&date(n.as_int()), spec.width, spec.left),
                Kind::Float => f.apply_float(n.as_real()),
                _ => f.apply_int(n.as_int()),
            });
        }
    }
}

#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Real(f64),
}

impl Num {
    fn as_int(self) -> i64 {
        match self {
            Num::Int(i) => i,
            Num::Real(r) => r as i64,
        }
    }
    fn as_real(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Real(r) => r,
        }
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
        let mut m = PrintMask::new();
        m.autoformat(flags, attrs).unwrap();
        m.render(ads)
    }

    fn fmt(f: &str, attr: &str, a: &ClassAd) -> String {
        let mut m = PrintMask::new();
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
        let one =
            |flags: &str, attrs: &[&str], x: &ClassAd| af(flags, attrs, std::slice::from_ref(x));
        assert_eq!(one("V", &["Owner"], &a), "\"al\\\"ice\"\n");
        assert_eq!(one("r", &["E", "Owner"], &a), "Cpus * 2 \"al\\\"ice\"\n");
        assert_eq!(one("j", &["Owner"], &a), "3.1 al\"ice\n");
        assert_eq!(one("l", &["E"], &b), "E = 1\n");
        assert_eq!(one("jl", &["E"], &b), "ID = 12.0 E = 1\n");
        assert_eq!(one(",", &["E", "Owner"], &b), "1, bo\n");
        assert_eq!(one("t", &["E", "Owner"], &b), "1\tbo\n");
        assert_eq!(one("n", &["E", "Owner"], &b), "1\n bo\n");
        assert_eq!(
            one("lrng", &["E", "Owner"], &b),
            "\nE = 1\nOwner = \"bo\"\n"
        );
        assert_eq!(one("T", &["E * 3661"], &b), "  0+01:01:01\n");
        // Headings: every column as wide as its longest cell, no padding
        // at the ends of lines.
        assert_eq!(
            af("h", &["Owner", "E"], &[a.clone(), b.clone()]),
            "Owner  E\nal\"ice undefined\nbo     1\n"
        );
        assert_eq!(
            af("jh", &["Owner"], &[a, b]),
            " ID      Owner\n   3.1   al\"ice\n  12.0   bo\n"
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

    /// A row whose ClusterId and ProcId come from outside any ad.
    struct Fast(i64, i64);

    impl Row for Fast {
        fn fast(&self, i: usize) -> Option<Value> {
            Some(Value::Int([self.0, self.1][i]))
        }
        fn ad(&self) -> Option<&Rc<ClassAd>> {
            None
        }
    }

    #[test]
    fn fast_columns_are_read_from_the_row() {
        let mut m = PrintMask::new();
        m.autoformat("j", &["procid", "ClusterId * 2"]).unwrap();
        assert!(m.needs_ad());
        m.bind_fast(&["ClusterId", "ProcId"]);
        assert!(m.needs_ad(), "an expression still reads an ad");
        assert!(!m.reads_only(|_| false));
        assert!(m.reads_only(|_| true));
        let mut out = Vec::new();
        let mut p = m.printer();
        p.row(&Fast(7, 3), &mut out).unwrap();
        p.finish(&mut out).unwrap();
        // Without an ad the expression reads nothing: undefined.
        assert_eq!(String::from_utf8(out).unwrap(), "7.3 3 undefined\n");
    }

    #[test]
    fn columns_must_be_expressions() {
        let mut m = PrintMask::new();
        assert!(m.autoformat("", &["Owner Cmd"]).is_err());
        assert!(m.format("%d", "1 +").is_err());
        assert!(m.autoformat("h", &[]).is_err());
    }
}
