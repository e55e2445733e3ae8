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

/// The series of a statistic on a clock: the times checked against the
/// clock's `last` time first, so a bad one changes nothing (`previous`
/// says what a time must be at least, in the error), then `push_at` each
/// `(times[i], xs[i])` and `read` after each push (NaN for `None`) into
/// `out`, as long as `xs`.
pub(crate) fn each_at<S, F: Float>(
    state: &mut S,
    last: Option<f64>,
    previous: &'static str,
    (times, xs, out): (&[f64], &[F], &mut [F]),
    push_at: fn(&mut S, f64, F) -> Result<(), Error>,
    read: fn(&S) -> Option<F>,
) -> Result<(), Error> {
    check_output("output", xs.len(), out.len())?;
    check_times(last, times, xs.len(), previous)?;
    for ((&t, &x), slot) in times.iter().zip(xs).zip(out) {
        push_at(state, t, x)?;
        *slot = or_nan(read(state));
    }
    Ok(())
}

/// Pushes each value of `xs` with `push` and writes `read` after each
/// push (NaN for `None`) to `out`: the series of the statistics without a
/// faster path of their own (the exponential ones, whose one recurrence
/// is already the fastest way through, and the time window).
#[inline]
pub(crate) fn each<S, X: Copy, F: Float>(
    state: &mut S,
    xs: &[X],
    out: &mut [F],
    push: impl Fn(&mut S, X),
    read: impl Fn(&S) -> Option<F>,
) {
    for (&x, slot) in xs.iter().zip(out) {
        push(state, x);
        *slot = or_nan(read(state));
    }
}

/// Checks the times of a timed series before anything is pushed, so that
/// a bad time changes nothing: as many as the values, each finite and no
/// earlier than the one before it (the first no earlier than `clock`, the
/// time of the previous push).
///
/// # Errors
///
/// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch) naming
/// `times`, or [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
/// naming `time`, as `push_at` names it.
pub(crate) fn check_times(
    clock: Option<f64>,
    times: &[f64],
    values: usize,
    previous: &'static str,
) -> Result<(), Error> {
    check_output("times", values, times.len())?;
    let mut last = clock;
    for &t in times {
        if !t.is_finite() {
            return Err(Error::parameter("time", t, "finite"));
        }
        if last.is_some_and(|l| t < l) {
            return Err(Error::parameter("time", t, previous));
        }
        last = Some(t);
    }
    Ok(())
}
