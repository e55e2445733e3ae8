//! The adapter's tests, one binary with a module per subject.

#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    reason = "test data: casts of small integers and counts on purpose"
)]
#![allow(
    clippy::needless_range_loop,
    reason = "the exact references index their sums as the formulas do"
)]

extern crate alloc;

// The core crate's seeded generator and double-double references.
#[path = "../../../tests/support/mod.rs"]
#[allow(unexpected_cfgs, reason = "the core crate's features")]
mod support;

#[cfg(feature = "ballista")]
mod ballista;
mod common;
mod edge;
mod exact;
mod order;
mod types;
mod window;
