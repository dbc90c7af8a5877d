//! The views every listing tool shares: `-long`, `-json` (with
//! `-attributes`), `-af` and `-format`. tern_status, tern_history,
//! tern_userprio and tern_router_history take them as one clap group and
//! print through [`View::render`], so a value prints the same whichever tool
//! shows it; tern_q uses the same printers (`format::long`, `format::json`,
//! the print mask) on its own faster rows.

use clap::ArgMatches;

use super::CliError;
use super::format;
use super::printmask::PrintMask;
use crate::classad::ClassAd;

/// The listing options, flattened into a tool's arguments.
#[derive(clap::Args, Debug, Default)]
pub struct ListingArgs {
    /// Print each ad whole, one 'Name = value' line per attribute, sorted by
    /// name, with a blank line after each
    #[arg(long, short = 'l')]
    pub long: bool,

    /// Print the ads as one JSON array (nothing when there are none)
    #[arg(long)]
    pub json: bool,

    /// With -long or -json, print only these attributes (separated by
    /// commas)
    #[arg(long, value_name = "NAME,...")]
    pub attributes: Vec<String>,

    /// Print these attributes or expressions of each ad on one line;
    /// -af:FLAGS takes tern_q's flags (l h V r T Y , t n g, and j for jobs)
    #[arg(long = "autoformat", visible_alias = "af", num_args = 1.., value_name = "ATTR")]
    pub autoformat: Vec<String>,

    /// The flags of -af:FLAGS (see [`super::COLON_FORMS`]).
    #[arg(long = "af-flags", hide = true)]
    pub af_flags: Vec<String>,

    /// Print ATTR with the printf-style FORMAT (%d %f %s %v %V %r %T %Y);
    /// no newline is added
    #[arg(
        long,
        num_args = 2,
        value_names = ["FORMAT", "ATTR"],
        allow_hyphen_values = true
    )]
    pub format: Vec<String>,
}

/// How a listing tool prints its ads.
#[derive(Debug)]
pub enum View {
    /// The tool's own table.
    Table,
    Long(Option<Vec<String>>),
    Json(Option<Vec<String>>),
    Mask(PrintMask),
}

impl ListingArgs {
    /// The view the options ask for (`-json`, then `-long`, then
    /// `-af`/`-format`, else the tool's table); `-long` with `-json` is an
    /// error.
    pub fn view(&self, matches: &ArgMatches) -> Result<View, CliError> {
        if self.long && self.json {
            return Err(CliError::Usage {
                msg: "cannot print as both -long and -json".into(),
                hint: None,
            });
        }
        let attrs = (!self.attributes.is_empty()).then(|| format::attribute_list(&self.attributes));
        if self.json {
            return Ok(View::Json(attrs));
        }
        if self.long {
            return Ok(View::Long(attrs));
        }
        Ok(match PrintMask::from_matches(matches)? {
            Some(mask) => View::Mask(mask),
            None => View::Table,
        })
    }
}

impl View {
    /// The ads printed in this view; `None` for [`View::Table`], which the
    /// tool prints itself.
    pub fn render(&self, ads: &[ClassAd]) -> Option<String> {
        Some(match self {
            View::Table => return None,
            View::Long(attrs) => format::long(ads, attrs.as_deref()),
            View::Json(_) if ads.is_empty() => String::new(),
            View::Json(attrs) => format::json(ads, attrs.as_deref()),
            View::Mask(mask) => mask.render(ads),
        })
    }

    pub fn is_table(&self) -> bool {
        matches!(self, View::Table)
    }
}
