//! The integration tests: every tool run as a built binary. One module per
//! area; `common` holds the hermetic environment they share.

mod common;

mod bad_input;
mod cli_actions;
mod cli_analyze;
mod cli_config_val;
mod cli_cron;
mod cli_edit;
mod cli_eval;
mod cli_fairshare;
mod cli_grid;
mod cli_history;
mod cli_hooks_fetch;
mod cli_identity;
mod cli_leave_in_queue;
mod cli_linger;
mod cli_multicall;
mod cli_negotiate;
mod cli_printmask;
mod cli_prio;
mod cli_q;
mod cli_router;
mod cli_run;
mod cli_sandbox;
mod cli_shadow;
mod cli_status;
mod cli_submit;
mod cli_transfer_limits;
mod cli_transform_ads;
mod cli_userprio;
mod cli_vacate;
mod config_man;
mod e2e_dask_jobqueue;
mod grid_slurm;
mod man_pages;
mod queue_bad_input;
mod queue_concurrency;
mod queue_crash;
mod queue_model;
mod router_e2e;
mod userlog;
