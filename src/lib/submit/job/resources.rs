//! The resources a job asks for and the Requirements condor_submit builds
//! around the user's own: the machine's Arch and OpSys, every request, the
//! file-system or transfer clause, and a timed job's window.

use super::super::units::{self, Base, Size};
use super::{
    Build, Expr, SubmitError, Universe, Value, classad, err, int, machine_refs, parse_rhs,
};
use crate::classad::ast::{AttrRef, BinOp};

impl Build<'_> {
    /// SetRequestResources: RequestCpus, RequestMemory, RequestDisk (with
    /// their defaults) and every other `request_<tag>` (also needed
    /// whenever Requirements is rebuilt).
    pub(super) fn set_request_resources(&mut self) -> Result<(), SubmitError> {
        if !self.want_requirements() {
            return Ok(());
        }
        let c = &mut *self.c;
        let mut request =
            |name: &str, attr: &str, base: Option<Base>| -> Result<Option<Expr>, SubmitError> {
                let Some((v, o)) = c.command(name)? else {
                    return Ok(None);
                };
                if let Some(b) = base {
                    match units::parse_size(&v, b).map_err(|m| err(&o, m))? {
                        Size::Int(i) => return Ok(Some(int(i))),
                        Size::Expr => {}
                    }
                }
                Ok(Some(parse_rhs(attr, &v, &o)?))
            };
        let req_cpus = request("request_cpus", "RequestCpus", None)?;
        let req_mem = request("request_memory", "RequestMemory", Some(Base::MiB))?;
        let req_disk = request("request_disk", "RequestDisk", Some(Base::KiB))?;
        // condor_submit gives a `batch` grid job no default requests: only
        // what the user asked for reaches the batch system.
        if self.grid_type()?.as_deref() == Some("batch") {
            for (n, e) in [
                ("RequestCpus", req_cpus),
                ("RequestDisk", req_disk),
                ("RequestMemory", req_mem),
            ] {
                if let Some(e) = e {
                    self.ad.insert(n, e);
                }
            }
            return self.set_custom_requests();
        }
        let ad = &mut self.ad;
        ad.insert("RequestCpus", req_cpus.unwrap_or_else(|| int(1)));
        ad.insert(
            "RequestDisk",
            req_disk.unwrap_or_else(|| Expr::attr("DiskUsage")),
        );
        ad.insert(
            "RequestMemory",
            req_mem.unwrap_or_else(|| {
                classad::parse_expr(
                    "ifthenelse(MemoryUsage isnt undefined,MemoryUsage,(ImageSize + 1023) / 1024)",
                )
                .expect("default RequestMemory parses")
            }),
        );
        self.set_custom_requests()?;
        self.set_gpu_properties()
    }

    /// With a GPU request, `require_gpus` and the GPU property limits
    /// (`gpus_minimum_capability`, `gpus_maximum_capability`,
    /// `gpus_minimum_memory`, `gpus_minimum_runtime`), and RequireGPUs
    /// completed with a clause for each limit its expression does not
    /// already test (SetRequestResources and SetResourceRequirements).
    fn set_gpu_properties(&mut self) -> Result<(), SubmitError> {
        if self.ad.get("RequestGPUs").is_none() {
            return Ok(());
        }
        if let Some((v, o)) = self.c.command("require_gpus")? {
            let e = parse_rhs("RequireGPUs", &v, &o)?;
            self.ad.insert("RequireGPUs", e);
        }
        for (cmd, attr) in [
            ("gpus_minimum_capability", "GPUsMinCapability"),
            ("gpus_maximum_capability", "GPUsMaxCapability"),
        ] {
            if let Some((v, o)) = self.c.command(cmd)? {
                let e = parse_rhs(attr, &v, &o)?;
                self.ad.insert(attr, e);
            }
        }
        if let Some((v, o)) = self.c.command("gpus_minimum_memory")? {
            let e = match units::parse_size(&v, Base::MiB) {
                Ok(Size::Int(mb)) => int(mb),
                _ => parse_rhs("GPUsMinMemory", &v, &o)?,
            };
            self.ad.insert("GPUsMinMemory", e);
        }
        if let Some((v, o)) = self.c.command("gpus_minimum_runtime")? {
            let e = match runtime_version(&v) {
                Some(ver) => int(ver),
                None => parse_rhs("GPUsMinRuntime", &v, &o)?,
            };
            self.ad.insert("GPUsMinRuntime", e);
        }
        // The GPU properties the user's own RequireGPUs already tests.
        let mut props: Vec<String> = Vec::new();
        if let Some(e) = self.ad.get("RequireGPUs") {
            e.walk_attrs(&mut |a: &AttrRef| {
                if a.base.is_none() {
                    props.push(a.name.as_str().to_ascii_lowercase());
                }
            });
        }
        let tests = |p: &str| props.iter().any(|x| x == p);
        let mut clauses: Vec<&str> = Vec::new();
        for (attr, prop, clause) in [
            (
                "GPUsMinCapability",
                "capability",
                "Capability >= GPUsMinCapability",
            ),
            (
                "GPUsMaxCapability",
                "capability",
                "Capability <= GPUsMaxCapability",
            ),
            (
                "GPUsMinMemory",
                "globalmemorymb",
                "GlobalMemoryMb >= GPUsMinMemory",
            ),
            (
                "GPUsMinRuntime",
                "maxsupportedversion",
                "MaxSupportedVersion >= GPUsMinRuntime",
            ),
        ] {
            if self.ad.get(attr).is_some() && !tests(prop) {
                clauses.push(clause);
            }
        }
        if !clauses.is_empty() {
            let mut text = clauses.join(" && ");
            if let Some(e) = self.ad.get("RequireGPUs") {
                let mine = classad::unparse::unparse(e);
                let wrapped = match e {
                    Expr::Binary(BinOp::Or, _) | Expr::Cond(_) | Expr::Elvis(_) => {
                        format!("({mine})")
                    }
                    _ => mine,
                };
                text = format!("{wrapped} && {text}");
            }
            let e = parse_rhs("RequireGPUs", &text, &self.q)?;
            self.ad.insert("RequireGPUs", e);
        }
        Ok(())
    }

    /// The `request_<tag>` requests beyond cpus, memory and disk. GPUs
    /// may also be asked for by the attribute's name (`RequestGPUs = 1`),
    /// as condor_submit takes it; `request_gpus` wins over it.
    fn set_custom_requests(&mut self) -> Result<(), SubmitError> {
        let mut names: Vec<(String, String)> = self
            .c
            .names()
            .into_iter()
            .map(|n| {
                let lower = n.to_ascii_lowercase();
                if lower == "requestgpus" {
                    ("request_gpus".to_string(), "request_gpus".to_string())
                } else {
                    (lower, n)
                }
            })
            .collect();
        names.sort();
        names.dedup_by(|a, b| a.0 == b.0);
        for (lower, n) in names {
            let Some(tag) = lower.strip_prefix("request_") else {
                continue;
            };
            if matches!(tag, "cpus" | "memory" | "disk") || tag.len() < 2 {
                continue;
            }
            // `request_gpus` is looked up with its alias.
            let Some((v, o)) = self.c.command(&n)? else {
                continue;
            };
            let tag_spelled = if tag == "gpus" {
                "GPUs".to_string()
            } else {
                n["request_".len()..].to_string()
            };
            let attr = format!("Request{tag_spelled}");
            let e = parse_rhs(&attr, &v, &o)?;
            self.ad.insert(&attr, e.clone());
            self.custom.push((tag_spelled, e));
        }
        Ok(())
    }

    /// SetRequirements: the user's `requirements` and the clauses
    /// condor_submit adds for what the user's expression does not say.
    pub(super) fn set_requirements(&mut self) -> Result<(), SubmitError> {
        if !self.want_requirements() {
            return Ok(());
        }
        let ctx = self.ctx;
        let user_req = self.c.command("requirements")?;
        let user_expr = match &user_req {
            Some((v, o)) if !v.is_empty() => Some((v.clone(), parse_rhs("Requirements", v, o)?)),
            _ => None,
        };
        let refs = user_expr
            .as_ref()
            .map(|(_, e)| machine_refs(e))
            .unwrap_or_default();
        let refers = |n: &str| refs.iter().any(|r| r.eq_ignore_ascii_case(n));
        let mut clauses: Vec<String> = Vec::new();
        if let Some((text, _)) = &user_expr {
            clauses.push(format!("({text})"));
        }
        // A grid job matches no slot: condor_submit adds nothing to its
        // Requirements but for `condor` (a remote schedd matches it), whose
        // clauses leave out how files reach the slot.
        if let Some(t) = self.grid_type()? {
            if t == "condor" {
                self.default_clauses(&refers, &mut clauses);
            }
            let req = if clauses.is_empty() {
                "true".to_string()
            } else {
                clauses.join(" && ")
            };
            self.ad
                .insert("Requirements", parse_rhs("Requirements", &req, &self.q)?);
            return Ok(());
        }
        let append = if self.universe == Universe::Vanilla {
            ctx.append_req_vanilla.clone()
        } else {
            None
        };
        if let Some(a) = append.or(ctx.append_requirements.clone()) {
            clauses.push(format!("({a})"));
        }
        self.default_clauses(&refers, &mut clauses);
        clauses.extend(self.encrypt_dir_clause(&refers));
        clauses.extend(self.transfer_clause(&refers)?);
        let mut req = clauses.join(" && ");
        if self.timed {
            let window = "(((time() + ScheddInterval) >= (DeferralTime - DeferralPrepTime)) && (time() < (DeferralTime + DeferralWindow)))";
            if self.universe == Universe::Local {
                req = format!("{req} && {window}");
            } else {
                req = format!("{req} && TARGET.HasJobDeferral && {window}");
            }
        }
        if let Some(c) = self.checkpoint_clause(&refers) {
            req = format!("{req} && {c}");
        }
        req.push_str(&self.cuda_clause()?);
        self.ad
            .insert("Requirements", parse_rhs("Requirements", &req, &self.q)?);
        Ok(())
    }

    /// `cuda_version` (`x` or `x.y`): CUDAVersion becomes x*1000 + y (a
    /// single x under 1000 is x*1000) and the job needs a slot whose
    /// CUDAMaxSupportedVersion reaches it.
    fn cuda_clause(&mut self) -> Result<String, SubmitError> {
        let Some(Value::Str(v)) = self.lookup("CUDAVersion").and_then(|e| e.literal_value()) else {
            return Ok(String::new());
        };
        let v = v.to_string();
        let num = |s: &str| {
            (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse::<i64>().ok())
                .flatten()
        };
        let version = match v.split_once('.') {
            Some((a, b)) => num(a).zip(num(b)).map(|(a, b)| a * 1000 + b % 100),
            None => num(&v).map(|a| if a < 1000 { a * 1000 } else { a }),
        };
        let Some(version) = version else {
            let o = match self.c.command("cuda_version")? {
                Some((_, o)) => o,
                None => self.q.clone(),
            };
            return Err(err(
                &o,
                "cuda_version must be of the form 'x' or 'x.y', where x and y are positive integers.",
            ));
        };
        self.ad.insert("CUDAVersion", int(version));
        Ok(" && CUDAVersion <= TARGET.CUDAMaxSupportedVersion".into())
    }

    /// The clauses condor_submit adds for what the user's requirements do
    /// not mention (`refers`): the submit machine's Arch and OpSys, each
    /// resource request, and how the job's files reach the slot.
    fn default_clauses(&self, refers: &dyn Fn(&str) -> bool, clauses: &mut Vec<String>) {
        let ctx = self.ctx;
        if !refers("Arch") {
            clauses.push(format!("(TARGET.Arch == \"{}\")", ctx.arch));
        }
        if ![
            "OpSys",
            "OpSysAndVer",
            "OpSysName",
            "OpSysShortName",
            "OpSysLongName",
            "OpSysLegacy",
        ]
        .iter()
        .any(|n| refers(n))
        {
            clauses.push(format!("(TARGET.OpSys == \"{}\")", ctx.opsys));
        }
        let literal_num = |e: Option<&Expr>| {
            e.and_then(|e| e.literal_value())
                .and_then(|v| v.as_number())
        };
        if self.ad.get("RequestDisk").is_some()
            && !literal_num(self.ad.get("RequestDisk")).is_some_and(|n| n <= 0.0)
        {
            clauses.push("(TARGET.Disk >= RequestDisk)".into());
        }
        if !literal_num(self.lookup("RequestMemory")).is_some_and(|n| n <= 1.0) {
            clauses.push("(TARGET.Memory >= RequestMemory)".into());
        }
        if !literal_num(self.lookup("RequestCpus")).is_some_and(|n| n <= 1.0) && !refers("Cpus") {
            clauses.push("(TARGET.Cpus >= RequestCpus)".into());
        }
        for (tag, e) in &self.custom {
            match e.literal_value() {
                Some(Value::Str(_)) => clauses.push(format!("regexp(Request{tag}, TARGET.{tag})")),
                Some(v) if v.as_number().is_some_and(|n| n <= 0.0) => {}
                // A Require<tag> picks the matching devices of the slot.
                _ if self.ad.get(&format!("Require{tag}")).is_some() => clauses.push(format!(
                    "(countMatches(MY.Require{tag},TARGET.Available{tag}) >= Request{tag})"
                )),
                _ => clauses.push(format!("(TARGET.{tag} >= Request{tag})")),
            }
        }
    }
}

/// `gpus_minimum_runtime` as condor_submit stores a version: `x` or `x.y`
/// is x*1000 + y*10, and a single number above 1000 is already in that
/// form (`12010`); `None` for anything else (kept as an expression).
fn runtime_version(v: &str) -> Option<i64> {
    let t = v.trim();
    let (major, minor) = match t.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (t, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(major) || !minor.is_none_or(digits) {
        return None;
    }
    let major: i64 = major.parse().ok()?;
    let minor: i64 = match minor {
        Some(m) => m.parse().ok()?,
        None => -1,
    };
    if minor >= 100 {
        return None;
    }
    Some(if minor == -1 && major > 1000 {
        major
    } else {
        major * 1000 + minor.max(0) * 10
    })
}

#[cfg(test)]
mod tests {
    use super::runtime_version;

    #[test]
    fn gpu_runtime_versions() {
        assert_eq!(runtime_version("12.1"), Some(12010));
        assert_eq!(runtime_version("11"), Some(11000));
        assert_eq!(runtime_version("12010"), Some(12010));
        assert_eq!(runtime_version("12.100"), None);
        assert_eq!(runtime_version("CUDAVersion"), None);
    }
}
