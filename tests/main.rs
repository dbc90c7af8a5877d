//! The integration tests: every tool run as a built binary. One module per
//! area; `common` holds the hermetic environment they share.

mod common;

mod cli_eval;
mod man_pages;
