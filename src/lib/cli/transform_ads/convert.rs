//! `tern_transform_ads -convertoldroutes`: old-syntax routes printed in the
//! transform language, as `ConvertJobRouterRoutes` of `transform_ads.cpp`
//! prints them.

use std::io::{self, Write};
use std::path::PathBuf;

use super::failed;
use crate::classad::{self, ClassAd};
use crate::cli::CliError;
use crate::config::Config;
use crate::transform::{Transform, oldroutes};

/// `-convertoldroutes`: JOB_ROUTER_ENTRIES of the configuration, or of
/// `file`, printed as routes in the transform syntax.
pub(super) fn convert_routes(cfg: &Config, file: Option<&str>) -> Result<(), CliError> {
    let cfg = match file {
        Some(f) => {
            let text = std::fs::read_to_string(f).map_err(|e| CliError::Read {
                path: PathBuf::from(f),
                source: e,
            })?;
            let mut c = Config::defaults();
            c.parse_str(&text, f)?;
            c
        }
        None => cfg.clone(),
    };
    let defaults = match cfg.get("JOB_ROUTER_DEFAULTS")? {
        Some(d) => Some(parse_defaults(&d)?),
        None => None,
    };
    let entries = cfg.get("JOB_ROUTER_ENTRIES")?.unwrap_or_default();
    let ads = classad::parse_ads(&entries).map_err(|e| {
        failed(format!(
            "JOB_ROUTER_ENTRIES: cannot parse the route ads: {e}"
        ))
    })?;
    let mut o = io::stdout().lock();
    let mut names = Vec::new();
    for (i, ad) in ads.iter().enumerate() {
        let text =
            oldroutes::convert(defaults.as_ref(), ad, true).map_err(|e| failed(e.to_string()))?;
        match file {
            Some(_) => {
                let t = Transform::parse(&text, "converted").map_err(|e| failed(e.to_string()))?;
                let tag = crate::sys::fs::file_safe(t.name().unwrap_or(""));
                if tag.is_empty() {
                    continue;
                }
                writeln!(
                    o,
                    "\n##### Route {}\nJOB_ROUTER_ROUTE_{tag} @=jre",
                    names.len() + 1
                )?;
                // The name is the knob's suffix when it matches.
                let keep_name = t.name() != Some(tag.as_str());
                writeln!(o, "{}\n@jre", formatted(&text, "   ", keep_name))?;
                names.push(tag);
            }
            None => {
                writeln!(o, "\n##### JOB_ROUTER_ENTRIES [{}] #####", i + 1)?;
                writeln!(o, "{}", formatted(&text, "", true))?;
            }
        }
    }
    // Routes in JOB_ROUTER_ENTRIES_FILE, of the current configuration only
    // (a foreign configuration's file is not ours to read).
    if let Some(path) = cfg.get("JOB_ROUTER_ENTRIES_FILE")? {
        if file.is_some() {
            writeln!(o, "need JOB_ROUTER_ENTRIES_FILE {path}")?;
        } else {
            let text = std::fs::read_to_string(&path).map_err(|e| CliError::Read {
                path: PathBuf::from(&path),
                source: e,
            })?;
            let ads = classad::parse_ads(&text)
                .map_err(|e| failed(format!("{path}: cannot parse the route ads: {e}")))?;
            for (i, ad) in ads.iter().enumerate() {
                let text = oldroutes::convert(defaults.as_ref(), ad, true)
                    .map_err(|e| failed(e.to_string()))?;
                writeln!(o, "\n##### JOB_ROUTER_ENTRIES_FILE [{}] #####", i + 1)?;
                writeln!(o, "{}", formatted(&text, "", true))?;
            }
        }
    }
    // Empty is unset: the knob table gives every knob a (here empty) default.
    if file.is_some() && cfg.get("JOB_ROUTER_ROUTE_NAMES").ok().flatten().is_none() {
        writeln!(o, "\nJOB_ROUTER_ROUTE_NAMES = {}", names.join(" "))?;
    }
    o.flush()?;
    Ok(())
}

/// A converted route as condor_transform_ads prints it
/// (`MacroStreamXFormSource::getFormattedText`): `NAME`, `UNIVERSE` by its
/// upper-case name and `REQUIREMENTS` first, then the other lines with
/// their comments, without blank lines, each after `prefix`.
fn formatted(text: &str, prefix: &str, with_name: bool) -> String {
    let mut head: [Option<String>; 3] = [None, None, None];
    let mut body = Vec::new();
    for l in text.lines() {
        if let Some(n) = l.strip_prefix("NAME ") {
            head[0] = with_name.then(|| format!("NAME {n}"));
        } else if let Some(u) = l.strip_prefix("UNIVERSE ") {
            let name = u
                .trim()
                .parse::<i64>()
                .ok()
                .and_then(crate::vocab::Universe::from_code)
                .map(|u| u.name().to_ascii_uppercase())
                .unwrap_or_else(|| u.to_string());
            head[1] = Some(format!("UNIVERSE {name}"));
        } else if l.starts_with("REQUIREMENTS ") {
            head[2] = Some(l.to_string());
        } else if !l.trim().is_empty() {
            body.push(l.to_string());
        }
    }
    head.into_iter()
        .flatten()
        .chain(body)
        .map(|l| format!("{prefix}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// JOB_ROUTER_DEFAULTS: one ad, or attributes without brackets.
fn parse_defaults(text: &str) -> Result<ClassAd, CliError> {
    let t = text.trim();
    let wrapped = if t.starts_with('[') {
        t.to_string()
    } else {
        format!("[ {t} ]")
    };
    classad::parse_ad(&wrapped).map_err(|e| {
        failed(format!(
            "JOB_ROUTER_DEFAULTS: cannot parse the defaults ad: {e}"
        ))
    })
}
