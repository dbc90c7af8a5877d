//! The shadow's side of the sandbox ([`crate::sandbox`]): makes a run's
//! scratch directory, writes the ad files, copies the inputs in with their
//! 040 events, and after the run copies the output back, records what
//! moved (HTCondor's transfer attributes) and removes the directory.

use std::rc::Rc;

use crate::classad::{ClassAd, Expr};
use crate::machine::{self, SlotRow};
use crate::queue::JobId;
use crate::sandbox::{self, Moved, Sandbox, Sides, adfiles, input, output, spool};
use crate::userlog::{self, Event, TransferStep};
use crate::vocab::Hold;

use super::Shadow;
use super::finish::RunEnd;
use super::hooks::{Ctx, Hook, JobHooks, Refusal};

/// A run's sandbox, ready for the job.
pub(super) struct Staged {
    sb: Sandbox,
    /// Who the job runs as when the shadow is root (output is theirs).
    pub owner: Option<crate::sys::identity::Identity>,
    catalog: output::Catalog,
    input: Option<Moved>,
    /// The ad the job is started from: the starter's copy, with Cmd in the
    /// sandbox when the executable was transferred, and what the PREPARE
    /// hooks printed merged in.
    pub run: Rc<ClassAd>,
    /// The job's environment.
    pub env: Vec<(String, String)>,
    /// The attributes the PREPARE hooks changed, for the queue.
    pub changed: Vec<(String, Expr)>,
    /// What the execute event says of the slot (empty without a log).
    pub execute_props: Vec<(String, String)>,
}

impl Staged {
    /// The run's scratch directory, where the starter hooks run.
    pub fn scratch(&self) -> &std::path::Path {
        &self.sb.dir
    }

    /// A sandbox whose job will not start after all: it goes.
    pub fn discard(self) {
        finish_as(self.sb, self.owner.as_ref());
    }
}

/// Empties the sandbox after a run as the job's owner, whose files they
/// are: root never walks, chmods or unlinks by path in a tree the owner
/// (or what the job left running) can change under it. A sandbox that
/// cannot be emptied so is left for the removal of the shadow's last run.
fn finish_as(sb: Sandbox, owner: Option<&crate::sys::identity::Identity>) {
    if let Err(e) = crate::sys::identity::as_user(owner, || sb.finish()) {
        note!("tern_shadow: cannot act as the job's owner to empty its sandbox: {e}");
    }
}

/// What filling a sandbox gives.
struct Filled {
    catalog: output::Catalog,
    input: Option<Moved>,
    run: Rc<ClassAd>,
    env: Vec<(String, String)>,
    changed: Vec<(String, Expr)>,
    execute_props: Vec<(String, String)>,
}

impl Shadow {
    fn sides(&self) -> Sides {
        Sides {
            ep: format!("{}@{}", self.slot, self.host),
            ap: self.host.clone(),
        }
    }

    /// Makes the sandbox of a run of `ad` (its `$$()` expanded), runs the
    /// PREPARE hooks of `hooks` around the input transfer. A failure is
    /// the hold or requeue it means, the sandbox gone.
    pub(super) fn stage(
        &mut self,
        id: JobId,
        ad: &Rc<ClassAd>,
        hooks: Option<&JobHooks>,
        slot: Option<&SlotRow>,
    ) -> Result<Staged, Refusal> {
        let owner = super::start::identity(ad)?;
        let transfer = sandbox::transfers(ad, &self.machine.filesystem_domain);
        let tag = std::process::id().to_string();
        let sb = Sandbox::create(&self.sandbox, &tag, transfer, owner.as_ref())?;
        match self.fill(id, ad, &sb, owner.as_ref(), hooks, slot) {
            Ok(f) => Ok(Staged {
                sb,
                owner,
                catalog: f.catalog,
                input: f.input,
                run: f.run,
                env: f.env,
                changed: f.changed,
                execute_props: f.execute_props,
            }),
            Err(r) => {
                finish_as(sb, owner.as_ref());
                Err(r)
            }
        }
    }

    /// The ad files, PREPARE_JOB_BEFORE_TRANSFER, the input transfer,
    /// PREPARE_JOB, the environment: in HTCondor's starter's order.
    fn fill(
        &mut self,
        id: JobId,
        ad: &Rc<ClassAd>,
        sb: &Sandbox,
        owner: Option<&crate::sys::identity::Identity>,
        hooks: Option<&JobHooks>,
        slot: Option<&SlotRow>,
    ) -> Result<Filled, Refusal> {
        let mut starter = adfiles::starter_copy(ad, sb);
        let now = crate::clock::now();
        let slot_ad = Rc::new(
            slot.map(|row| machine::slot_ad(&self.machine, row, now))
                .unwrap_or_default(),
        );
        let texts = &mut self.old_texts;
        super::start::as_owner(owner, || {
            adfiles::write(sb, &starter, &slot_ad, owner, texts)
        })?;
        // A scheduler universe job's 001 has no slot to list (HTCondor's
        // schedd writes it without props).
        let listed = self.slot != crate::negotiator::launch::SCHEDULER;
        let execute_props = match crate::userlog::user_log(ad) {
            Some(_) if listed => super::start::execute_props(&slot_ad, &sb.dir, ad),
            _ => Vec::new(),
        };
        let cpus =
            slot_ad_cpus(&slot_ad).unwrap_or_else(|| ad.eval_int("RequestCpus").unwrap_or(1));
        let mut changed = Vec::new();
        let mut ad = ad.clone();
        if let Some(h) = hooks.filter(|h| h.has(Hook::PrepareJobBeforeTransfer)) {
            let update = self.prepare(h, Hook::PrepareJobBeforeTransfer, &starter, sb, cpus)?;
            let ch = super::hooks::merge(&update, &mut starter);
            // The transfer reads the job's own ad: it sees the change.
            ad = super::hooks::with_changes(&ad, &ch);
            changed.extend(ch);
        }
        let mut input = None;
        // Without transfer nothing is copied in or sent back: no SPOOL
        // copy to restore and no catalog to tell the output by (each a
        // look at a directory, every job).
        let mut catalog = output::Catalog::default();
        if sb.transfer {
            // An evicted run's SPOOL copy, open: the owner reads it
            // through the descriptor (in shared mode they cannot reach
            // SPOOL).
            let uid = owner.map_or_else(crate::sys::identity::effective_uid, |o| o.uid);
            let spooled = spool::open_copy(&self.sandbox.spool, id.cluster, id.proc, uid);
            let saved = spooled.as_ref().map(|d| d.proc_path());
            self.log(&ad, id, TransferStep::InputStarted);
            // As the owner: root never reads a path the job names.
            let sides = self.sides();
            let max_mb = self.sandbox.max_input_mb;
            let moved = super::start::as_owner(owner, || {
                input::stage_in(sb, &ad, saved.as_deref(), max_mb, &sides, owner)
            })?;
            input = Some(moved);
            self.log(&ad, id, TransferStep::InputFinished);
            catalog = output::Catalog::take(sb);
            if let Some(saved) = &saved {
                catalog.forget_restored(saved);
            }
        }
        let mut run = starter;
        if let Some(exe) = sb.executable(&ad) {
            run.insert("Cmd", Expr::string(&exe.display().to_string()));
        }
        if let Some(h) = hooks.filter(|h| h.has(Hook::PrepareJob)) {
            let update = self.prepare(h, Hook::PrepareJob, &run, sb, cpus)?;
            changed.extend(super::hooks::merge(&update, &mut run));
        }
        let run = Rc::new(run);
        let env = self.job_env(&run, sb, cpus)?;
        Ok(Filled {
            catalog,
            input,
            run,
            env,
            changed,
            execute_props,
        })
    }

    /// Runs PREPARE hook `hook` of `h` on `job` in `sb`, with the
    /// environment the job would have now.
    fn prepare(
        &self,
        h: &JobHooks,
        hook: Hook,
        job: &ClassAd,
        sb: &Sandbox,
        cpus: i64,
    ) -> Result<ClassAd, Refusal> {
        let env = self.job_env(&Rc::new(job.clone()), sb, cpus)?;
        let ctx = Ctx {
            env: &env,
            cwd: &sb.dir,
        };
        h.prepare(hook, job, &ctx)
    }

    /// The job's environment for a run of `run` in `sb` (also the one its
    /// hooks get).
    fn job_env(
        &self,
        run: &Rc<ClassAd>,
        sb: &Sandbox,
        cpus: i64,
    ) -> Result<Vec<(String, String)>, Hold> {
        let job_iwd = run.eval_str("Iwd").unwrap_or_else(|| "/".into());
        let ctx = sandbox::env::Context {
            scratch: &sb.dir,
            job_iwd: std::path::Path::new(&job_iwd),
            slot: &self.slot,
            cpus,
            transfer: sb.transfer,
        };
        sandbox::env::build(
            run,
            &self.sandbox.job_environment,
            &self.sandbox.thread_vars,
            &ctx,
        )
        .map_err(|m| Hold::new(m, crate::vocab::hold_code::FAILED_TO_CREATE_PROCESS, 0))
    }

    /// After the run: a job that exited by itself sends its output back
    /// (a failure becomes the run's hold); the transfer attributes go with
    /// the end; the sandbox goes.
    pub(super) fn unstage(
        &mut self,
        id: JobId,
        ad: &Rc<ClassAd>,
        staged: Staged,
        mut end: RunEnd,
    ) -> RunEnd {
        let Staged {
            sb,
            owner,
            catalog,
            input,
            ..
        } = staged;
        let exited = end.status.is_some() && end.stop.is_none() && end.failed.is_none();
        let mut out = None;
        if sb.transfer && exited {
            self.log(ad, id, TransferStep::OutputStarted);
            // As the owner: the sandbox is the job's, and so is Iwd.
            let sides = self.sides();
            let max_mb = self.sandbox.max_output_mb;
            let (moved, hold) = super::start::as_owner(owner.as_ref(), || {
                Ok(output::stage_out(
                    &sb,
                    ad,
                    &catalog,
                    max_mb,
                    &sides,
                    owner.as_ref(),
                ))
            })
            .unwrap_or_else(|h| (Default::default(), Some(h)));
            self.log(ad, id, TransferStep::OutputFinished);
            out = Some(moved);
            end.output_failed = hold;
        } else if sb.transfer && end.stop.is_some() && spools_on_evict(ad) {
            // Told to stop (vacate, preemption, shutdown, hold, remove):
            // the files so far wait in SPOOL for the next run, written as
            // the owner into a copy root made for them (sandbox::spool).
            self.log(ad, id, TransferStep::OutputStarted);
            let sides = self.sides();
            let job = (id.cluster, id.proc);
            let (moved, hold) = output::spool_out(
                &sb,
                ad,
                &catalog,
                job,
                &self.sandbox.spool,
                owner.as_ref(),
                &sides,
            );
            self.log(ad, id, TransferStep::OutputFinished);
            out = Some(moved);
            end.output_failed = hold;
        }
        if sb.transfer {
            // The sandbox is the owner's, and what the job left running
            // may still change it: it is walked as the owner.
            let usage = crate::sys::identity::as_user(owner.as_ref(), || usage_of(&sb.dir))
                .unwrap_or_default();
            end.attrs.extend(transfer_attrs(ad, input, out, usage));
        }
        end.received = input.map_or(0, |m| m.bytes) as f64;
        end.sent = out.map_or(0, |m| m.bytes) as f64;
        finish_as(sb, owner.as_ref());
        end
    }

    fn log(&self, ad: &Rc<ClassAd>, id: JobId, step: TransferStep) {
        if let Some(p) = userlog::user_log(ad) {
            let _ = userlog::log_job_events(&[(p, Event::file_transfer(id, step))]);
        }
    }
}

/// ON_EXIT_OR_EVICT, unless SpoolOnEvict is false.
fn spools_on_evict(ad: &Rc<ClassAd>) -> bool {
    ad.eval_str("WhenToTransferOutput")
        .is_some_and(|w| w.eq_ignore_ascii_case("ON_EXIT_OR_EVICT"))
        && !matches!(ad.eval("SpoolOnEvict"), crate::classad::Value::Bool(false))
}

fn slot_ad_cpus(slot_ad: &ClassAd) -> Option<i64> {
    match slot_ad.get("Cpus").and_then(|e| e.literal_value()) {
        Some(crate::classad::Value::Int(i)) => Some(*i),
        _ => None,
    }
}

/// HTCondor's record of a run's transfers (spec section 4): the dates of
/// each direction, the bytes (cumulative over runs), the file counts and
/// the sandbox's size (KiB, files) in DiskUsage (the largest seen).
fn transfer_attrs(
    ad: &Rc<ClassAd>,
    input: Option<Moved>,
    out: Option<Moved>,
    (kib, files): (i64, i64),
) -> Vec<(String, Expr)> {
    let mut set = Vec::new();
    let real = |v: f64| Expr::Lit(crate::classad::Value::Real(v));
    let prev = |n: &str| -> f64 {
        match ad.eval(n) {
            crate::classad::Value::Int(i) => i as f64,
            crate::classad::Value::Real(r) => r,
            _ => 0.0,
        }
    };
    for (m, start, finish, dstart, dfinish, bytes, stats) in [
        (
            input,
            "TransferInStarted",
            "TransferInFinished",
            "JobCurrentStartTransferInputDate",
            "JobCurrentFinishTransferInputDate",
            "BytesRecvd",
            "TransferInputStats",
        ),
        (
            out,
            "TransferOutStarted",
            "TransferOutFinished",
            "JobCurrentStartTransferOutputDate",
            "JobCurrentFinishTransferOutputDate",
            "BytesSent",
            "TransferOutputStats",
        ),
    ] {
        let Some(m) = m else { continue };
        set.push((start.to_string(), Expr::int(m.started)));
        set.push((finish.to_string(), Expr::int(m.finished)));
        set.push((dstart.to_string(), Expr::int(m.started)));
        set.push((dfinish.to_string(), Expr::int(m.finished)));
        set.push((bytes.to_string(), real(prev(bytes) + m.bytes as f64)));
        let total = prev_count(ad, stats);
        let text = format!(
            "[ CedarFilesCountLastRun = {}; CedarFilesCountTotal = {} ]",
            m.files,
            total + m.files as i64
        );
        if let Ok(e) = crate::classad::parse_expr(&text) {
            set.push((stats.to_string(), e));
        }
    }
    let disk = ad.eval_int("DiskUsage").unwrap_or(0).max(kib);
    set.push(("DiskUsage".into(), Expr::int(disk)));
    set.push(("ScratchDirFileCount".into(), Expr::int(files)));
    set
}

/// The total count kept in a stats ad from an earlier run.
fn prev_count(ad: &Rc<ClassAd>, stats: &str) -> i64 {
    match ad.eval(stats) {
        crate::classad::Value::Ad(inner) => {
            inner.ad().eval_int("CedarFilesCountTotal").unwrap_or(0)
        }
        _ => 0,
    }
}

/// A tree's size in KiB (rounded up) and its file count.
fn usage_of(dir: &std::path::Path) -> (i64, i64) {
    let (mut bytes, mut files) = (0u64, 0i64);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => stack.push(e.path()),
                Ok(m) => {
                    bytes += m.len();
                    files += 1;
                }
                Err(_) => {}
            }
        }
    }
    (bytes.div_ceil(1024) as i64, files)
}
