//! When the job may run: CronTab schedules and deferral.

use super::{
    Build, CRON_CMDS, Commands, Expr, Origin, SubmitError, Universe, Value, err, int, parse_rhs,
    string,
};

impl Build<'_> {
    /// SetCronTab: the five CronMinute..CronDayOfWeek strings, checked as
    /// one schedule.
    pub(super) fn set_cron_tab(&mut self) -> Result<(), SubmitError> {
        let mut cron_values: Vec<(&str, String, Origin)> = Vec::new();
        for (cmd, attr) in [
            ("cron_minute", "CronMinute"),
            ("cron_hour", "CronHour"),
            ("cron_day_of_month", "CronDayOfMonth"),
            ("cron_month", "CronMonth"),
            ("cron_day_of_week", "CronDayOfWeek"),
        ] {
            if let Some((v, o)) = self.c.command(cmd)? {
                if self.want(&[cmd]) {
                    self.ad.insert(attr, string(&v));
                }
                self.timed = true;
                cron_values.push((attr, v, o.clone()));
                self.timed_origin.get_or_insert(o);
            }
        }
        // HTCondor leaves the schedule's syntax to the schedd; tern reports a
        // bad one at submit, naming the command.
        if cron_values.is_empty() {
            return Ok(());
        }
        let field = |name: &str| {
            cron_values
                .iter()
                .find(|(a, _, _)| *a == name)
                .map(|(_, v, _)| v.as_str())
        };
        let fields = [
            field("CronMinute"),
            field("CronHour"),
            field("CronDayOfMonth"),
            field("CronMonth"),
            field("CronDayOfWeek"),
        ];
        if let Err(e) = crate::cron::Schedule::parse(fields) {
            let (_, _, o) = cron_values
                .iter()
                .find(|(a, _, _)| *a == e.attr())
                .unwrap_or(&cron_values[0]);
            return Err(err(o, format!("invalid cron schedule: {e}")));
        }
        Ok(())
    }

    /// SetJobDeferral: DeferralTime, and for any timed job its window,
    /// prep time and the ScheddInterval its Requirements reads.
    pub(super) fn set_job_deferral(&mut self) -> Result<(), SubmitError> {
        if let Some((v, o)) = self.c.command("deferral_time")? {
            let e = parse_rhs("DeferralTime", &v, &o)?;
            if let Expr::Lit(lit) = &e
                && !matches!(lit, Value::Int(i) if *i >= 0)
            {
                return Err(err(
                    &o,
                    format!("deferral_time = {v} is invalid, must eval to a non-negative integer."),
                ));
            }
            if self.want(&["deferral_time"]) {
                self.ad.insert("DeferralTime", e);
            }
            self.timed = true;
            self.timed_origin.get_or_insert(o);
        }
        if !(self.timed && self.want(&CRON_CMDS)) {
            return Ok(());
        }
        if self.universe == Universe::Scheduler {
            return Err(err(
                self.timed_origin.as_ref().unwrap_or(&self.q),
                "CronTab and deferral are not allowed in the scheduler universe; use the local universe",
            ));
        }
        let window = first_of(self.c, &["cron_window", "deferral_window"], 0, "window")?;
        let prep = first_of(
            self.c,
            &["cron_prep_time", "deferral_prep_time"],
            300,
            "prep time",
        )?;
        self.ad.insert("DeferralWindow", int(window));
        self.ad.insert("DeferralPrepTime", int(prep));
        self.ad
            .insert("ScheddInterval", int(self.ctx.schedd_interval));
        Ok(())
    }
}

/// The first of `names` given, a non-negative integer, or `default`.
fn first_of(
    c: &mut dyn Commands,
    names: &[&str],
    default: i64,
    what: &str,
) -> Result<i64, SubmitError> {
    for n in names {
        if let Some((v, o)) = c.command(n)? {
            return match v.trim().parse::<i64>() {
                Ok(i) if i >= 0 => Ok(i),
                _ => Err(err(
                    &o,
                    format!("{n} = {v} is invalid: the {what} must be a non-negative integer"),
                )),
            };
        }
    }
    Ok(default)
}
