//! The transform language of HTCondor (`xform_utils.cpp`): job-router
//! routes, the router's pre- and post-route transforms, and the rules files
//! of `tern_transform_ads`.
//!
//! A transform is read once ([`Transform::parse`], in [`parse`]): the meta
//! statements `NAME`, `REQUIREMENTS`, `UNIVERSE` and `TRANSFORM` are taken
//! out wherever they stand, and the rest becomes a list of statements
//! (macro assignments, `if`/`elif`/`else`/`endif`, and the commands `SET`,
//! `DEFAULT`, `EVALSET`, `EVALMACRO`, `COPY`, `RENAME`, `DELETE`). Applying
//! it ([`Transform::apply`], in [`apply`]) runs the statements top to bottom
//! against one ad, expanding `$()` in each line first: transform macros,
//! then `$(MY.attr)` from the ad, then the configuration. [`iterate`] runs a
//! rules file's `TRANSFORM` iteration and [`oldroutes`] converts the old
//! `JOB_ROUTER_ENTRIES` syntax to transform text; [`jobs`] applies the
//! submit-time `JOB_TRANSFORM_NAMES` transforms.
//!
//! For the router, in short: [`from_config`] reads a route or transform
//! knob (either syntax); [`Transform::name`], [`Transform::requirements`],
//! [`Transform::universe`] and [`Transform::macro_value`] (`MaxJobs`,
//! `GridResource`, ...) describe it; [`Transform::matches`] (or
//! [`Transform::matches_shared`] for an ad already in an `Rc`) applies the
//! REQUIREMENTS rule to the untransformed ad; [`Transform::apply`] edits the
//! ad, with one [`Macros`] shared by the pre-route transforms, the route and
//! the post-route transforms of one job. Errors are [`TransformError`]s
//! that name the knob or file and the line.
//!
//! The module sits beside `queue`: it uses `classad`, `vocab`, `config`
//! and the submit language (its `queue` statement parser, and `Cluster`
//! for the submit-time transforms), nothing higher. Its behaviour is
//! compared with HTCondor's own code by `tests/transform_diff/`.

pub mod apply;
pub mod iterate;
pub mod jobs;
pub mod oldroutes;
pub mod parse;

use std::collections::HashMap;

use crate::config;

pub use oldroutes::convert_old_route;
pub use parse::Transform;

/// A problem in a transform, at a line of its text. `origin` names the text:
/// a file name, or a configuration knob such as `JOB_ROUTER_ROUTE_Slurm`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{origin}, line {line}: {message}")]
pub struct TransformError {
    pub origin: String,
    pub line: usize,
    pub message: String,
}

impl TransformError {
    pub fn new(origin: &str, line: usize, message: impl Into<String>) -> TransformError {
        TransformError {
            origin: origin.to_string(),
            line,
            message: message.into(),
        }
    }
}

/// The transform a configuration knob holds (`JOB_ROUTER_ROUTE_<name>`,
/// `JOB_ROUTER_TRANSFORM_<name>`, `JOB_TRANSFORM_<name>`): its raw,
/// unexpanded text in the transform language, or, when the text starts with
/// `[`, a route ad in the old syntax, which is expanded, read and converted
/// ([`convert_old_route`]) as HTCondor does. `Ok(None)` when the knob is not
/// defined; errors name the knob.
pub fn from_config(cfg: &config::Config, knob: &str) -> Result<Option<Transform>, TransformError> {
    let Some(entry) = cfg.lookup_entry(knob) else {
        return Ok(None);
    };
    let raw = entry.raw.trim_start();
    let text = if raw.starts_with('[') {
        let expanded = cfg
            .get(knob)
            .map_err(|e| TransformError::new(knob, 1, e.to_string()))?
            .unwrap_or_default();
        let ad = crate::classad::parse_ad(&expanded)
            .map_err(|e| TransformError::new(knob, 1, format!("not a ClassAd: {e}")))?;
        oldroutes::convert(None, &ad, false)?
    } else {
        raw.to_string()
    };
    Transform::parse(&text, knob).map(Some)
}

/// The macros of the transforms applied to one ad. HTCondor keeps one macro
/// table per job across the pre-route transforms, the route and the
/// post-route transforms, so a variable one sets is seen by the next; the
/// caller makes one `Macros` per ad and passes it to each
/// [`Transform::apply`]. Values are kept unexpanded and expanded when used,
/// as HTCondor does. Names are case-insensitive.
#[derive(Clone, Debug, Default)]
pub struct Macros {
    vars: HashMap<String, String>,
    /// The table of an iterating rules file (HTCondor's `Iterating`
    /// flavor of `XFormHash`), whose built-in defaults differ.
    iterating: bool,
}

impl Macros {
    /// An empty table (the built-in defaults such as `IsLinux` answer from
    /// [`Macros::get`] without being stored).
    pub fn new() -> Macros {
        Macros::default()
    }

    /// Makes this the table of a rules file whose `TRANSFORM` asks for more
    /// than one pass, as `condor_transform_ads` promotes its table (even
    /// when the expanded arguments give a single pass): `Row`, `Step`,
    /// `ItemIndex` and `XFormId` default to 0, and `IsClusterAd` and
    /// `LateMaterialization` are no longer defined.
    pub fn set_iterating(&mut self) {
        self.iterating = true;
    }

    /// Sets `name` to the unexpanded `value`.
    pub fn set(&mut self, name: &str, value: &str) {
        self.vars
            .insert(name.to_ascii_lowercase(), value.to_string());
    }

    /// The unexpanded value of `name`: a value set by a transform (or by
    /// iteration), else one of the defaults every transform sees.
    pub fn get(&self, name: &str) -> Option<String> {
        let key = name.to_ascii_lowercase();
        if let Some(v) = self.vars.get(&key) {
            return Some(v.clone());
        }
        // XFormBasicMacroDefaults of xform_utils.cpp (what the router, the
        // schedd and a rules file without iteration see), or
        // XFormMacroDefaults for an iterating rules file (whose passes set
        // Row, Step, ItemIndex and XFormId). ARCH and OPSYS* come from the
        // configuration or the system (see `apply::View`); RulesFile is
        // empty in HTCondor (set_flavor clears it), which expands as an
        // undefined macro does.
        match key.as_str() {
            "islinux" => Some("1".into()),
            "iswindows" | "iterating" => Some("0".into()),
            "isclusterad" | "latematerialization" if !self.iterating => Some("0".into()),
            "row" | "step" | "itemindex" | "xformid" if self.iterating => Some("0".into()),
            _ => None,
        }
    }

    /// Removes `name`.
    pub fn remove(&mut self, name: &str) {
        self.vars.remove(&name.to_ascii_lowercase());
    }
}

#[cfg(test)]
mod tests;
