//! The sizes of the long sweeps: full when `MOMENTA_LONG_TESTS` is set (CI
//! sets it), smaller by default, so that a plain `cargo test` stays short.
//!
//! A test asks [`size`] for its data length, its count of quickcheck cases
//! or of pushes, and runs the same checks at either size: the smaller one
//! is chosen to reach every path the full one reaches (a block boundary, a
//! refresh of the windows' sums, a window that wraps), with fewer
//! repetitions. A sweep over data sets, windows and options may also run
//! one combination in a few by default ([`sample`]). No test is skipped.
//!
//! Needs `std` (the environment), so it is compiled with the `std`
//! feature only.

use std::sync::OnceLock;

/// The environment variable that asks for the full sizes.
pub const VAR: &str = "MOMENTA_LONG_TESTS";

/// Whether the full sizes are asked for: [`VAR`] is set to anything but
/// the empty string or `0`.
pub fn on() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os(VAR).is_some_and(|v| !v.is_empty() && v != "0"))
}

/// `full` when the full sizes are asked for ([`on`]), `short` otherwise.
pub fn size<T>(full: T, short: T) -> T {
    if on() { full } else { short }
}

/// Whether a sweep runs its combination number `i`: every combination
/// when the full sizes are asked for ([`on`]), one in `stride` otherwise.
///
/// Numbering a combination by the sum of its coordinates' indices (data
/// set + window + option, say) keeps, by default, one option in `stride`
/// for each data set and window, a different one in turn: every option
/// still meets every window (given at least `stride` data sets) and every
/// data set (given at least `stride` windows), only not in every triple.
pub fn sample(i: usize, stride: usize) -> bool {
    on() || i.is_multiple_of(stride)
}
