//! The grid universe: condor_submit's SetGridParams (GridResource and the
//! batch attributes), and how the grid type changes the job's defaults.
//! What runs a grid job is `crate::grid`; here only the ad is built.

use super::{Build, SubmitError, err, parse_rhs, string};

/// The grid types condor_submit 24.0 accepts as the first word of
/// `grid_resource` (case-insensitive): the current ones and the legacy
/// batch names the gridmanager still routes to its batch handler.
const GRID_TYPES: &[&str] = &[
    "condor", "batch", "arc", "ec2", "gce", "azure", "pbs", "lsf", "sge", "nqs", "naregi", "blah",
];

/// Grid types whose submission needs credentials and parameters tern does
/// not model; tern refuses them at submit (tern_submit(1) says so).
const CLOUD_TYPES: &[&str] = &["ec2", "gce", "azure"];

/// The grid type of a `grid_resource` value: its first word, lower-cased.
pub(super) fn grid_type(resource: &str) -> String {
    resource
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_lowercase()
}

impl Build<'_> {
    /// The grid type of this job's `grid_resource`, when it is a grid job.
    pub(super) fn grid_type(&mut self) -> Result<Option<String>, SubmitError> {
        if self.universe != super::Universe::Grid {
            return Ok(None);
        }
        Ok(self.c.command("grid_resource")?.map(|(v, _)| grid_type(&v)))
    }

    /// SetGridParams: GridResource (required in the grid universe, its type
    /// checked as condor_submit checks it) and the batch attributes.
    pub(super) fn set_grid_params(&mut self) -> Result<(), SubmitError> {
        if self.universe != super::Universe::Grid
            || !self.want(&[
                "universe",
                "grid_resource",
                "batch_queue",
                "batch_project",
                "batch_runtime",
                "batch_extra_submit_args",
            ])
        {
            return Ok(());
        }
        let Some((gr, o)) = self.c.command("grid_resource")? else {
            return Err(err(
                &self.q,
                "grid_resource attribute not defined for grid universe job",
            ));
        };
        let t = grid_type(&gr);
        if !GRID_TYPES.contains(&t.as_str()) {
            let first = gr.split_whitespace().next().unwrap_or("");
            return Err(err(
                &o,
                format!(
                    "Invalid value '{first}' for grid type\nMust be one of: condor, batch, arc, ec2, gce, or azure"
                ),
            ));
        }
        if CLOUD_TYPES.contains(&t.as_str()) {
            return Err(err(
                &o,
                format!("tern does not submit grid type '{t}' jobs (they need cloud credentials)"),
            ));
        }
        self.ad.insert("GridResource", string(&gr));
        for (cmd, attr) in [
            ("batch_queue", "BatchQueue"),
            ("batch_project", "BatchProject"),
            ("batch_extra_submit_args", "BatchExtraSubmitArgs"),
        ] {
            if let Some((v, _)) = self.c.command(cmd)? {
                self.ad.insert(attr, string(&v));
            }
        }
        if let Some((v, o)) = self.c.command("batch_runtime")? {
            self.ad
                .insert("BatchRuntime", parse_rhs("BatchRuntime", &v, &o)?);
        }
        Ok(())
    }
}
