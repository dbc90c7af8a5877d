//! The views of `tern_q` that print job ads as they are: `-long` and
//! `-json` (whole ads), and `-af`/`-format` through the shared print mask
//! ([`super::printmask`]), which reads the hot columns straight from the
//! queue rows when they are all it needs.

use std::io::Write;
use std::rc::Rc;

use super::format::project;
use super::printmask::Row;
use super::select::{HOT, Totals, hot_ad, hot_only, hot_value, prio_in_ad, select};
use super::{CliError, Context, Options, View};
use crate::classad::json::ad_to_json;
use crate::classad::{ClassAd, Expr, Value};
use crate::queue::Queue;
use crate::queue::listing::HotRow;

/// `-long` and `-json`: each shown job's full ad, with ServerTime.
pub(super) fn show_ads(
    q: Option<&Queue>,
    opts: &Options,
    ctx: &Context,
    totals: &mut Totals,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let json = opts.view == View::Json;
    let mut first = true;
    select(
        q,
        &opts.filter,
        &ctx.me,
        true,
        totals,
        |_| {},
        |_, ad| {
            let full = ad.expect("a full ad was asked for");
            let mut ad = (*full).clone();
            // condor_q asks the schedd for ServerTime with -long, so that a
            // saved listing still tells how old its times are.
            ad.insert("ServerTime", Expr::int(ctx.now));
            let ad = match &opts.attributes {
                Some(names) => project(&ad, Some(names)),
                None => ad,
            };
            if json {
                out.write_all(if first { b"[\n" } else { b",\n" })?;
                out.write_all(ad_to_json(&ad, 0).as_bytes())?;
            } else {
                out.write_all(crate::classad::unparse::ad_to_old(&ad, true).as_bytes())?;
                out.write_all(b"\n")?;
            }
            first = false;
            Ok(())
        },
    )?;
    if json && !first {
        out.write_all(b"\n]\n")?;
    }
    Ok(())
}

/// A queue row as the print mask reads it: the hot columns, and the ad
/// (full, or of the hot attributes only) when a column needs one.
struct QueueRow<'r, 'a> {
    row: &'r HotRow<'a>,
    ad: Option<Rc<ClassAd>>,
}

impl Row for QueueRow<'_, '_> {
    fn fast(&self, i: usize) -> Option<Value> {
        // The prio column is JobPrio only when that is an integer.
        (HOT[i] != "JobPrio" || !prio_in_ad(self.row)).then(|| hot_value(self.row, i))
    }
    fn ad(&self) -> Option<&Rc<ClassAd>> {
        self.ad.as_ref()
    }
}

/// `-af` and `-format`. Columns of hot attributes are read from the row;
/// expressions over hot attributes only are evaluated in a small ad of
/// them; anything else builds each job's full ad.
pub(super) fn show_custom(
    q: Option<&Queue>,
    opts: &Options,
    ctx: &Context,
    totals: &mut Totals,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let mask = opts.custom.as_ref().expect("custom columns");
    let full = !mask.reads_only(hot_only);
    let needs_tiny = !full && mask.needs_ad();
    let mut printer = mask.printer();
    select(
        q,
        &opts.filter,
        &ctx.me,
        full,
        totals,
        |_| {},
        |row, ad| {
            let ad = match ad {
                Some(a) => Some(a),
                None if needs_tiny => Some(Rc::new(hot_ad(row))),
                None => None,
            };
            printer.row(&QueueRow { row, ad }, out)?;
            Ok(())
        },
    )?;
    printer.finish(out)?;
    Ok(())
}
