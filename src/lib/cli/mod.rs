//! The command-line tools: one module per tool, plus shared plumbing.
