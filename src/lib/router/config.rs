//! The router's configuration as HTCondor 24.0 reads it (spec 5.1-5.3):
//! JOB_ROUTER_ROUTE_NAMES in order (routes not listed are disabled), each
//! JOB_ROUTER_ROUTE_<name> in transform syntax read unexpanded, the pre-
//! and post-route transforms, JOB_ROUTER_SOURCE_JOB_CONSTRAINT, the route
//! macros with HTCondor's defaults, and the old JOB_ROUTER_DEFAULTS /
//! JOB_ROUTER_ENTRIES syntax when JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES
//! is true (converted by [`crate::transform::convert_old_route`]).
//!
//! A route that cannot be used is kept in [`RouterConfig::unusable`] with
//! its reason, never dropped silently: `tern_job_router -dry-run` and the
//! router's log name it.

use crate::classad::{ClassAd, Expr, Value};
use crate::config::Config;
use crate::transform::{Macros, Transform};
use crate::vocab::Universe;

use super::attr;
use super::throttle::Limits;

/// One usable route.
pub struct Route {
    pub name: String,
    pub transform: Transform,
    pub limits: Limits,
    /// The routed copy's universe (TargetUniverse / UNIVERSE; grid if unset).
    pub universe: i64,
    pub grid_resource: Option<String>,
    pub edit_in_place: bool,
    /// Evaluated against the source at finalize: true counts a failure.
    pub job_failure_test: Option<Expr>,
}

/// Everything the router reads from the configuration.
pub struct RouterConfig {
    /// JOB_ROUTER_NAME: RoutedBy and ManagedManager.
    pub name: String,
    pub routes: Vec<Route>,
    /// Routes that cannot be used: (name, reason).
    pub unusable: Vec<(String, String)>,
    /// Configuration problems that do not disable a route.
    pub warnings: Vec<String>,
    pub pre: Vec<Transform>,
    pub post: Vec<Transform>,
    pub source_constraint: Option<Expr>,
    /// JOB_ROUTER_MAX_JOBS; negative: no limit.
    pub max_jobs: i64,
    pub round_robin: bool,
    pub release_on_hold: bool,
    pub hook_timeout: u64,
}

impl RouterConfig {
    /// Reads the router's knobs. Only a knob of the router itself that is
    /// malformed (JOB_ROUTER_NAME empty, a constraint that does not parse)
    /// is an error; a bad route is [`RouterConfig::unusable`].
    pub fn load(cfg: &Config) -> Result<RouterConfig, super::RouterError> {
        let name = cfg.get("JOB_ROUTER_NAME")?.unwrap_or_default();
        if name.is_empty() {
            return Err(super::RouterError::Route {
                name: "JOB_ROUTER_NAME".into(),
                reason: "must not be empty".into(),
            });
        }
        let source_constraint = match cfg.get("JOB_ROUTER_SOURCE_JOB_CONSTRAINT")? {
            None => None,
            Some(text) => Some(crate::classad::parser::parse_expr_old(&text).map_err(|e| {
                super::RouterError::Route {
                    name: "JOB_ROUTER_SOURCE_JOB_CONSTRAINT".into(),
                    reason: format!("'{text}' is not a ClassAd expression: {e}"),
                }
            })?),
        };
        let mut rc = RouterConfig {
            name,
            routes: Vec::new(),
            unusable: Vec::new(),
            warnings: Vec::new(),
            pre: Vec::new(),
            post: Vec::new(),
            source_constraint,
            max_jobs: cfg.get_int("JOB_ROUTER_MAX_JOBS", -1)?,
            round_robin: cfg.get_bool("JOB_ROUTER_ROUND_ROBIN_SELECTION", false)?,
            release_on_hold: cfg.get_bool("JOB_ROUTER_RELEASE_ON_HOLD", true)?,
            hook_timeout: cfg.get_int("JOB_ROUTER_HOOK_TIMEOUT", 120)?.max(1) as u64,
        };
        rc.pre = rc.transforms(cfg, "JOB_ROUTER_PRE_ROUTE_TRANSFORM_NAMES")?;
        rc.post = rc.transforms(cfg, "JOB_ROUTER_POST_ROUTE_TRANSFORM_NAMES")?;
        // Each route's transform, read unexpanded in the transform syntax
        // (or, starting with '[', as a route ad in the old syntax).
        let mut texts: Vec<(String, Result<Transform, String>)> = Vec::new();
        for n in cfg.list_value("JOB_ROUTER_ROUTE_NAMES")? {
            let knob = format!("JOB_ROUTER_ROUTE_{n}");
            let t = match crate::transform::from_config(cfg, &knob) {
                Ok(Some(t)) => Ok(t),
                Ok(None) => Err(format!("{knob} is not defined")),
                Err(e) => Err(e.to_string()),
            };
            texts.push((n, t));
        }
        if cfg.get_bool("JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES", false)? {
            for (n, text) in old_routes(cfg)? {
                let origin = format!("JOB_ROUTER_ENTRIES route {n}");
                let text =
                    text.and_then(|t| Transform::parse(&t, &origin).map_err(|e| e.to_string()));
                match texts
                    .iter_mut()
                    .find(|(name, _)| name.eq_ignore_ascii_case(&n))
                {
                    Some(slot) => slot.1 = text,
                    None => texts.push((n, text)),
                }
            }
        }
        let default_max = cfg.get_int("JOB_ROUTER_DEFAULT_MAX_JOBS_PER_ROUTE", 100)?;
        let default_idle = cfg.get_int("JOB_ROUTER_DEFAULT_MAX_IDLE_JOBS_PER_ROUTE", 50)?;
        for (n, text) in texts {
            let made = text.and_then(|t| rc.route(cfg, &n, t, default_max, default_idle));
            match made {
                Ok(r) => rc.routes.push(r),
                Err(reason) => rc.unusable.push((n, reason)),
            }
        }
        Ok(rc)
    }

    fn transforms(
        &mut self,
        cfg: &Config,
        list: &str,
    ) -> Result<Vec<Transform>, super::RouterError> {
        let mut out = Vec::new();
        for n in cfg.list_value(list)? {
            let knob = format!("JOB_ROUTER_TRANSFORM_{n}");
            match crate::transform::from_config(cfg, &knob) {
                Ok(Some(t)) => out.push(t),
                Err(err) => self.warnings.push(format!("transform {n} ignored: {err}")),
                Ok(None) => self
                    .warnings
                    .push(format!("transform {n} ignored: {knob} is not defined")),
            }
        }
        Ok(out)
    }

    fn route(
        &mut self,
        cfg: &Config,
        name: &str,
        t: Transform,
        default_max: i64,
        default_idle: i64,
    ) -> Result<Route, String> {
        if let Some(inner) = t.name()
            && !inner.eq_ignore_ascii_case(name)
        {
            self.warnings.push(format!(
                "route {name}: its NAME {inner} differs from the configuration name; {name} is used"
            ));
        }
        if t.requirements().is_none() && self.source_constraint.is_none() {
            return Err(
                "Missing Requirements (and JOB_ROUTER_SOURCE_JOB_CONSTRAINT is not set)".into(),
            );
        }
        // Route macros tern reads but does not carry out: a route that turns
        // one on is refused by name rather than routed without it.
        for m in ["JobShouldBeSandboxed", "UseSharedX509UserProxy"] {
            if let Some(v) = t.macro_value(m, cfg)
                && crate::config::parse_bool(v.trim()) == Some(true)
            {
                return Err(format!("{m} = {v} is not supported by tern's router"));
            }
        }
        if let Some(v) = t.macro_value("SendIDTokens", cfg)
            && !v.trim().is_empty()
        {
            return Err(format!(
                "SendIDTokens = {v} is not supported by tern's router"
            ));
        }
        let int = |m: &str, default: i64| -> Result<i64, String> {
            match t.macro_value(m, cfg) {
                None => Ok(default),
                Some(v) => v
                    .trim()
                    .parse::<f64>()
                    .map(|x| x as i64)
                    .map_err(|_| format!("{m} = {v} is not a number")),
            }
        };
        let max_jobs = int("MaxJobs", default_max)?;
        let max_idle_jobs = int("MaxIdleJobs", default_idle)?;
        let failure_rate_threshold = match t.macro_value("FailureRateThreshold", cfg) {
            None => 0.03,
            Some(v) => v
                .trim()
                .parse::<f64>()
                .map_err(|_| format!("FailureRateThreshold = {v} is not a number"))?,
        };
        let universe = match t.universe() {
            Some(u) => u,
            None => match t.macro_value("TargetUniverse", cfg) {
                None => Universe::Grid as i64,
                Some(v) => universe_of(&v)
                    .ok_or_else(|| format!("TargetUniverse = {v} is not a universe"))?,
            },
        };
        let grid_resource = t
            .macro_value("GridResource", cfg)
            .map(|g| g.trim().trim_matches('"').to_string())
            .filter(|g| !g.is_empty());
        let edit_in_place = t
            .macro_value("EditJobInPlace", cfg)
            .and_then(|v| crate::config::parse_bool(v.trim()))
            .unwrap_or(false);
        if universe == Universe::Grid as i64 && grid_resource.is_none() && !edit_in_place {
            return Err("routes to the grid universe but sets no GridResource".into());
        }
        let job_failure_test = match t.macro_value("JobFailureTest", cfg) {
            None => None,
            Some(v) if v.trim().is_empty() => None,
            Some(v) => Some(
                crate::classad::parser::parse_expr_old(&v)
                    .map_err(|e| format!("JobFailureTest = {v} is not an expression: {e}"))?,
            ),
        };
        Ok(Route {
            name: name.to_string(),
            transform: t,
            limits: Limits {
                max_jobs,
                max_idle_jobs,
                failure_rate_threshold,
            },
            universe,
            grid_resource,
            edit_in_place,
            job_failure_test,
        })
    }

    /// Whether `src` may be routed at all (the umbrella constraint less the
    /// routes' own requirements): idle, a real proc, not managed, not one of
    /// our routed copies, and matching JOB_ROUTER_SOURCE_JOB_CONSTRAINT.
    /// `Err` says why not.
    pub fn candidate(&self, src: &std::rc::Rc<ClassAd>, me: Option<&str>) -> Result<(), String> {
        if src.eval_int("ProcId").is_none_or(|p| p < 0) {
            return Err("not a job (ProcId < 0)".into());
        }
        if src.eval_int("JobStatus") != Some(1) {
            return Err("not idle".into());
        }
        if src.eval_int("StageInStart").is_some() && src.get("StageInFinish").is_none() {
            return Err("its input is still being staged".into());
        }
        match src.eval_str(attr::MANAGED).as_deref() {
            Some("ScheddDone") => return Err("Managed is \"ScheddDone\" (routed before)".into()),
            Some("External") => return Err("Managed is \"External\" (already managed)".into()),
            _ => {}
        }
        let Some(owner) = src.eval_str("Owner") else {
            return Err("it has no Owner".into());
        };
        if src.eval_str(attr::ROUTED_BY).as_deref() == Some(self.name.as_str()) {
            return Err(format!(
                "it is a routed copy (RoutedBy is \"{}\")",
                self.name
            ));
        }
        if let Some(me) = me
            && owner != me
        {
            return Err(format!(
                "it belongs to {owner}, and the router runs as {me}"
            ));
        }
        if let Some(c) = &self.source_constraint
            && !crate::queue::matches_constraint(c, src)
        {
            return Err("JOB_ROUTER_SOURCE_JOB_CONSTRAINT is not true".into());
        }
        Ok(())
    }

    /// The routed copy of `src` on `route`: the TRANSLATE_JOB hook's ad
    /// when there is one, else a copy of the source; vanilla-to-grid
    /// (unless editing in place); the pre-route transforms whose
    /// REQUIREMENTS match, the route, the post-route transforms, sharing
    /// one macro set; then the routing attributes. Returns the copy and the
    /// transforms' warnings.
    pub fn build(
        &self,
        cfg: &Config,
        route: &Route,
        src: &ClassAd,
        src_id: crate::queue::JobId,
        translated: Option<ClassAd>,
    ) -> Result<(ClassAd, Vec<String>), String> {
        let mut dest = translated.unwrap_or_else(|| src.clone());
        if !route.edit_in_place {
            super::vanilla::vanilla_to_grid(
                &mut dest,
                route.universe,
                route.grid_resource.as_deref(),
                false,
            );
        }
        let mut macros = Macros::default();
        let mut warnings = Vec::new();
        for t in &self.pre {
            if t.matches(&dest) {
                warnings.extend(
                    t.apply(&mut dest, &mut macros, cfg)
                        .map_err(|e| e.to_string())?,
                );
            }
        }
        warnings.extend(
            route
                .transform
                .apply(&mut dest, &mut macros, cfg)
                .map_err(|e| e.to_string())?,
        );
        for t in &self.post {
            if t.matches(&dest) {
                warnings.extend(
                    t.apply(&mut dest, &mut macros, cfg)
                        .map_err(|e| e.to_string())?,
                );
            }
        }
        if let Some(g) = &route.grid_resource
            && route.universe == Universe::Grid as i64
        {
            dest.insert("GridResource", Expr::string(g));
        }
        dest.insert(attr::ROUTED_FROM, Expr::string(&src_id.to_string()));
        dest.insert(attr::ROUTED_BY, Expr::string(&self.name));
        dest.insert(attr::ROUTE_NAME, Expr::string(&route.name));
        dest.remove(attr::ROUTED_TO);
        // The copy is a job of its own, managed by nobody.
        dest.remove(attr::MANAGED);
        dest.remove(attr::MANAGED_MANAGER);
        Ok((dest, warnings))
    }
}

/// A universe by name or number.
pub fn universe_of(text: &str) -> Option<i64> {
    let t = text.trim().trim_matches('"');
    if let Ok(n) = t.parse::<i64>() {
        return Universe::from_code(n).map(|u| u as i64);
    }
    Universe::from_submit(t).map(|u| u as i64)
}

/// A route's name and its transform text, or why there is none.
type RouteText = (String, Result<String, String>);

/// The routes of the old syntax: JOB_ROUTER_DEFAULTS merged with each ad of
/// JOB_ROUTER_ENTRIES (or JOB_ROUTER_ENTRIES_FILE), converted to transform
/// text, by the route's Name; a route that does not convert keeps its reason.
fn old_routes(cfg: &Config) -> Result<Vec<RouteText>, super::RouterError> {
    let defaults = cfg.get("JOB_ROUTER_DEFAULTS")?.map(|text| {
        parse_old_ads(&text).and_then(|mut v| {
            v.pop()
                .ok_or_else(|| "JOB_ROUTER_DEFAULTS holds no ad".to_string())
        })
    });
    let mut entries_text = cfg.get("JOB_ROUTER_ENTRIES")?.unwrap_or_default();
    if let Some(file) = cfg.get("JOB_ROUTER_ENTRIES_FILE")? {
        match std::fs::read_to_string(&file) {
            Ok(t) => entries_text.push_str(&t),
            Err(e) => {
                return Ok(vec![(
                    "JOB_ROUTER_ENTRIES_FILE".into(),
                    Err(format!("cannot read {file}: {e}")),
                )]);
            }
        }
    }
    let entries = match parse_old_ads(&entries_text) {
        Ok(v) => v,
        Err(e) => return Ok(vec![("JOB_ROUTER_ENTRIES".into(), Err(e))]),
    };
    let mut out = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let name = match entry.get("Name").and_then(|e| e.literal_value()) {
            Some(Value::Str(s)) => s.to_string(),
            _ => format!("route{}", i + 1),
        };
        let text = match &defaults {
            Some(Err(e)) => Err(e.clone()),
            Some(Ok(d)) => {
                crate::transform::convert_old_route(Some(d), entry).map_err(|e| e.to_string())
            }
            None => crate::transform::convert_old_route(None, entry).map_err(|e| e.to_string()),
        };
        out.push((name, text));
    }
    Ok(out)
}

/// A sequence of new-syntax ads `[ ... ] [ ... ]`, as JOB_ROUTER_ENTRIES
/// holds them.
fn parse_old_ads(text: &str) -> Result<Vec<ClassAd>, String> {
    crate::classad::parse_ads(text).map_err(|e| format!("not a list of ClassAds: {e}"))
}
