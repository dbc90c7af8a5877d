//! Tests of the router module.
