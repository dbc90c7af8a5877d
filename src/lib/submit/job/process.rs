//! What the job's process is given: its arguments and its environment.

use super::super::args;
use super::{Build, SubmitError, bool_value, err, string};
use crate::classad::Value;
use crate::classad::ast::Expr;

impl Build<'_> {
    /// SetArguments: Arguments (or the old syntax's Args); empty when none
    /// are given.
    pub(super) fn set_arguments(&mut self) -> Result<(), SubmitError> {
        if !self.want(&["arguments", "args"]) {
            return Ok(());
        }
        for n in ["arguments", "args"] {
            if let Some((v, o)) = self.c.command(n)? {
                let (attr, val) = args::arguments(&v).map_err(|m| err(&o, m))?;
                self.ad.insert(attr, string(&val));
                self.hide_other_arguments(attr);
                return Ok(());
            }
        }
        self.ad.insert("Arguments", string(""));
        self.hide_other_arguments("Arguments");
        Ok(())
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
        if !self.want(&["environment", "env", "getenv"]) {
            return Ok(());
        }
        let mut env_pairs: Vec<(String, String)> = Vec::new();
        let mut legacy_env = false;
        if let Some((v, o)) = self.c.command("environment")? {
            env_pairs = args::environment_pairs(&v).map_err(|m| err(&o, m))?;
        } else if let Some((v, o)) = self.c.command("env")? {
            env_pairs = args::environment_pairs(&v).map_err(|m| err(&o, m))?;
            legacy_env = true;
        }
        if let Some((g, _)) = self.c.command("getenv")? {
            let names: Option<Vec<String>> = match bool_value(&g) {
                Some(true) => None,
                Some(false) => Some(Vec::new()),
                None => Some(
                    g.split([',', ' '])
                        .filter(|s| !s.is_empty())
                        .map(String::from)
                        .collect(),
                ),
            };
            for (k, v) in self.ctx.environ {
                let wanted = names.as_ref().is_none_or(|l| l.iter().any(|n| n == k));
                if wanted && !env_pairs.iter().any(|(n, _)| n == k) {
                    args::merge_pair(&mut env_pairs, k.clone(), v.clone());
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
