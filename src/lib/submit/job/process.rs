//! What the job's process is given: its arguments and its environment.

use super::super::args;
use super::{Build, SubmitError, bool_value, err, string};
use crate::classad::Value;
use crate::classad::ast::Expr;

/// condor_submit's words for `arguments` beside `arguments2`.
const BOTH_ARGUMENTS: &str = "If you wish to specify both 'arguments' and\n\
    'arguments2' for maximal compatibility with different\n\
    versions of Condor, then you must also specify\n\
    allow_arguments_v1=true.";

/// condor_submit's words for `environment` (or `env`) beside
/// `environment2`.
const BOTH_ENVIRONMENTS: &str = "If you wish to specify both 'environment' and\n\
    'environment2' for maximal compatibility with different\n\
    versions of Condor, then you must also specify\n\
    allow_environment_v1=true.";

impl Build<'_> {
    /// SetArguments: Arguments (or the old syntax's Args); empty when none
    /// are given. `arguments2` is the new syntax only, and wins over
    /// `arguments`, which may then be given beside it only with
    /// `allow_arguments_v1 = true` (for submit files written for old and
    /// new condor_submits alike).
    pub(super) fn set_arguments(&mut self) -> Result<(), SubmitError> {
        if !self.want(&["arguments", "args", "arguments2", "allow_arguments_v1"]) {
            return Ok(());
        }
        let mut v1 = None;
        for n in ["arguments", "args"] {
            if let Some(found) = self.c.command(n)? {
                v1 = Some(found);
                break;
            }
        }
        let v2 = self.given("arguments2")?;
        if let Some((v, o)) = &v2 {
            if v1.is_some() && !self.allowed_v1("allow_arguments_v1")? {
                return Err(err(o, BOTH_ARGUMENTS));
            }
            if !v.trim_start().starts_with('"') {
                return Err(err(
                    o,
                    format!(
                        "Expecting double-quoted input string (V2 format).\n\
                         The full arguments you specified were: {v}"
                    ),
                ));
            }
            v1 = v2.clone();
        }
        if let Some((v, o)) = v1 {
            let (attr, val) = args::arguments(&v).map_err(|m| err(&o, m))?;
            self.ad.insert(attr, string(&val));
            self.hide_other_arguments(attr);
            return Ok(());
        }
        self.ad.insert("Arguments", string(""));
        self.hide_other_arguments("Arguments");
        Ok(())
    }

    /// `allow_arguments_v1` or `allow_environment_v1`: false unless given
    /// true; a value that is not a boolean is an error.
    fn allowed_v1(&mut self, name: &str) -> Result<bool, SubmitError> {
        match self.c.command(name)? {
            Some((v, o)) => bool_value(&v).ok_or_else(|| {
                err(
                    &o,
                    format!("{name}={v} is invalid, must eval to a boolean."),
                )
            }),
            None => Ok(false),
        }
    }

    /// A proc built on the cluster ad must not inherit the other syntax's
    /// attribute: Arguments wins over Args when both are there, so a proc
    /// whose `arguments` are old syntax would run with the cluster's
    /// (often empty) Arguments. condor_submit leaves it inherited.
    fn hide_other_arguments(&mut self, set: &str) {
        let other = if set == "Args" { "Arguments" } else { "Args" };
        if self.base.is_some_and(|b| b.get(other).is_some()) {
            self.ad.insert(other, Expr::Lit(Value::Undefined));
        }
    }

    /// SetEnvironment: `environment` (new syntax) or `env` (old), plus
    /// what `getenv` takes from the submitter's environment.
    pub(super) fn set_environment(&mut self) -> Result<(), SubmitError> {
        if !self.want(&[
            "environment",
            "env",
            "getenv",
            "environment2",
            "allow_environment_v1",
        ]) {
            return Ok(());
        }
        let mut env_pairs: Vec<(String, String)> = Vec::new();
        let mut legacy_env = false;
        let v2 = self.given("environment2")?;
        let v1 = match self.c.command("environment")? {
            Some(e) => Some((e, false)),
            None => self.c.command("env")?.map(|e| (e, true)),
        };
        let given_v1 = v1.is_some();
        if let Some((v, o)) = &v2 {
            if given_v1 && !self.allowed_v1("allow_environment_v1")? {
                return Err(err(o, BOTH_ENVIRONMENTS));
            }
            if !v.trim_start().starts_with('"') {
                return Err(err(
                    o,
                    format!(
                        "Expecting a double-quoted environment string (V2 format).\n\
                         The environment you specified was: '{v}'"
                    ),
                ));
            }
            env_pairs = args::environment_pairs(v).map_err(|m| err(o, m))?;
        } else if let Some(((v, o), legacy)) = v1 {
            env_pairs = args::environment_pairs(&v).map_err(|m| err(&o, m))?;
            legacy_env = legacy;
        }
        if let Some((g, _)) = self.c.command("getenv")? {
            let filter = match bool_value(&g) {
                Some(true) => Some(EnvFilter::default()),
                Some(false) => None,
                None => Some(EnvFilter::new(&g)),
            };
            // With `environment`/`env` given, condor_submit also drops the
            // values its old syntax cannot hold.
            let v1_safe = given_v1;
            if let Some(f) = filter {
                for (k, v) in self.ctx.environ {
                    if f.wants(k, v, v1_safe) && !env_pairs.iter().any(|(n, _)| n == k) {
                        args::merge_pair(&mut env_pairs, k.clone(), v.clone());
                    }
                }
            }
        }
        if legacy_env {
            self.ad
                .insert("Env", string(&args::environment_v1(&env_pairs)));
            self.ad.insert("EnvDelim", string(";"));
        } else {
            self.ad
                .insert("Environment", string(&args::environment_v2(&env_pairs)));
        }
        Ok(())
    }
}

/// What `getenv` takes from the submitter's environment (HTCondor's
/// WhiteBlackEnvFilter): names separated by commas, semicolons or white
/// space, each a pattern with `*` wildcards matched in any case; a name
/// starting with `!` is excluded. No names: every variable. Values with a
/// newline are never taken.
#[derive(Default)]
struct EnvFilter {
    white: Vec<String>,
    black: Vec<String>,
}

impl EnvFilter {
    fn new(list: &str) -> EnvFilter {
        let mut f = EnvFilter::default();
        for item in list.split([',', ';', ' ', '\t', '\r', '\n']) {
            if let Some(b) = item.strip_prefix('!') {
                let b = b.trim();
                if !b.is_empty() {
                    f.black.push(b.to_string());
                }
            } else if !item.trim().is_empty() {
                f.white.push(item.trim().to_string());
            }
        }
        f
    }

    fn wants(&self, name: &str, value: &str, v1_safe: bool) -> bool {
        if value.contains('\n') || (v1_safe && value.contains(';')) {
            return false;
        }
        if self.black.iter().any(|p| wildcard_match(p, name)) {
            return false;
        }
        self.white.is_empty() || self.white.iter().any(|p| wildcard_match(p, name))
    }
}

/// HTCondor's matches_anycase_withwildcard: at most a leading, a middle
/// and a trailing `*` count (`a*`, `*a`, `a*b`, `*a*`, `a*b*`); any other
/// `*` is literal; case is ignored.
fn wildcard_match(pattern: &str, s: &str) -> bool {
    let p = pattern.to_ascii_lowercase();
    let s = s.to_ascii_lowercase();
    let Some(star) = p.find('*') else {
        return p == s;
    };
    let (start, mut end, mut prefix) = if star == 0 {
        ("", &p[1..], false)
    } else if star == p.len() - 1 {
        (&p[..star], "", true)
    } else {
        (&p[..star], &p[star + 1..], false)
    };
    if let Some(e) = end.strip_suffix('*') {
        end = e;
        prefix = true;
    }
    let Some(tail) = s.strip_prefix(start) else {
        return false;
    };
    if end.is_empty() {
        return true;
    }
    if prefix {
        tail.contains(end)
    } else {
        tail.ends_with(end)
    }
}

#[cfg(test)]
mod tests {
    use super::{EnvFilter, wildcard_match};

    #[test]
    fn wildcards_as_htcondor_matches_them() {
        assert!(wildcard_match("PATH", "path"));
        assert!(wildcard_match("LAN*", "LANG"));
        assert!(wildcard_match("*_DIR", "TMP_DIR"));
        assert!(!wildcard_match("*_DIR", "TMP_DIRS"));
        assert!(wildcard_match("*PATH*", "LD_LIBRARY_PATH_X"));
        assert!(wildcard_match("X*Y", "XaY"));
        assert!(!wildcard_match("X*Y", "XaYb"));
        assert!(wildcard_match("X*Y*", "XaYb"));
        assert!(wildcard_match("*", "anything"));
        assert!(!wildcard_match("LANG", "LANGUAGE"));
    }

    #[test]
    fn getenv_lists_with_exclusions() {
        let f = EnvFilter::new("PATH, LC_*; !LC_ALL");
        assert!(f.wants("PATH", "/bin", false));
        assert!(f.wants("lc_time", "C", false));
        assert!(!f.wants("LC_ALL", "C", false));
        assert!(!f.wants("HOME", "/h", false));
        let all_but = EnvFilter::new("!SECRET*");
        assert!(all_but.wants("HOME", "/h", false));
        assert!(!all_but.wants("SECRET_KEY", "x", false));
        assert!(!all_but.wants("A", "x\ny", false));
        assert!(!all_but.wants("A", "x;y", true));
        assert!(all_but.wants("A", "x;y", false));
    }
}
