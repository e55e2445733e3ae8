//! What every whole-series method shares: where the series goes, how a
//! caller's buffer is checked, and how a missing statistic is shown.
//!
//! A `*_series` method pushes a slice into a statistic and returns the
//! statistic after each push; its `*_series_into` twin writes into a
//! caller's buffer. The algorithms behind the windows' fast paths are in
//! `windows/series/`; the exponential statistics push value by value,
//! which is already the fastest way through their one recurrence.

use crate::{Error, Float};

/// Checks that a caller's output buffer is as long as the input.
///
/// # Errors
///
/// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch), naming
/// `what`, when the lengths differ.
pub(crate) fn check_output(
    what: &'static str,
    expected: usize,
    actual: usize,
) -> Result<(), Error> {
    if expected == actual {
        Ok(())
    } else {
        Err(Error::length(what, expected, actual))
    }
}

/// A statistic's value as a series shows it: NaN where it has none (as
/// pandas shows a missing value).
#[inline]
pub(crate) fn or_nan<F: Float>(x: Option<F>) -> F {
    x.unwrap_or_else(F::nan)
}
