//! Which samples a time window holds: its span, which of its ends are
//! closed, and the clock. Shared by [`TimeWindow`](crate::TimeWindow) and
//! [`TimeQuantile`](crate::TimeQuantile).

use alloc::vec::Vec;

use crate::Error;

/// Which ends of a time window `[t − span, t]` belong to it, at time `t`
/// of the latest push: pandas' and polars' `closed=`.
///
/// | variant | samples at `u` in the window | pandas |
/// |---|---|---|
/// | `Right` (default) | `t − span < u ≤ t` | `closed="right"`, the default for time windows |
/// | `Left` | `t − span ≤ u < t` | `closed="left"` |
/// | `Both` | `t − span ≤ u ≤ t` | `closed="both"` |
/// | `Neither` | `t − span < u < t` | `closed="neither"` |
///
/// An end open on the right leaves out the newest sample **and every
/// sample at the same time**, as pandas does: after a push at `t`, the
/// samples at `t` wait, and enter the window at the first push of a later
/// time (if they are still inside its span then). So `Left` answers "what
/// did the last `span` before this reading look like", the statistics a
/// new reading is compared against. A closed right end takes each sample
/// in as it is pushed: among samples at equal times, the ones pushed so
/// far.
///
/// # Example
///
/// ```
/// use momenta::{Closed, TimeWindow};
///
/// // pandas: s.rolling("3s", closed="left").sum() at t = 0, 1, 1, 2
/// let mut w = TimeWindow::new(3.0)?.with_closed(Closed::Left);
/// let mut sums = Vec::new();
/// for (t, x) in [(0.0, 1.0), (1.0, 2.0), (1.0, 3.0), (2.0, 4.0)] {
///     w.push_at(t, x)?;
///     sums.push(w.mean().map(|m| m * w.len() as f64));
/// }
/// assert_eq!(sums, [None, Some(1.0), Some(1.0), Some(6.0)]);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Closed {
    /// `(t − span, t]`: pandas' default for time windows.
    #[default]
    Right,
    /// `[t − span, t)`: the samples before the newest time.
    Left,
    /// `[t − span, t]`.
    Both,
    /// `(t − span, t)`.
    Neither,
}

impl Closed {
    /// Whether a sample exactly `span` old belongs to the window.
    #[inline]
    fn left(self) -> bool {
        matches!(self, Self::Left | Self::Both)
    }

    /// Whether a sample at the time of the latest push belongs to it.
    #[inline]
    pub(crate) fn right(self) -> bool {
        matches!(self, Self::Right | Self::Both)
    }
}

/// A time window's span, ends and clock, and the samples that wait at the
/// latest time for a window open on the right.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Bounds<F> {
    pub(crate) span: f64,
    pub(crate) closed: Closed,
    /// The time of the latest push, which may have left the window.
    pub(crate) last_time: Option<f64>,
    /// The values pushed at `last_time` that are not in the window yet
    /// (always empty when the window is closed on the right), oldest first.
    pub(crate) pending: Vec<F>,
}

impl<F: Copy> Bounds<F> {
    /// A window over the last `span` of time, closed on the right.
    ///
    /// # Errors
    ///
    /// `span` not positive (0, negative or NaN).
    pub(crate) fn new(span: f64) -> Result<Self, Error> {
        if span.is_nan() || span <= 0.0 {
            return Err(Error::parameter("span", span, "positive"));
        }
        Ok(Self {
            span,
            closed: Closed::Right,
            last_time: None,
            pending: Vec::new(),
        })
    }

    /// Checks that `t` may be pushed: finite, and not before the latest.
    ///
    /// # Errors
    ///
    /// `time` NaN, infinite or before the time of the previous push.
    #[inline]
    pub(crate) fn check(&self, t: f64) -> Result<(), Error> {
        if !t.is_finite() {
            return Err(Error::parameter("time", t, "finite"));
        }
        if self.last_time.is_some_and(|last| t < last) {
            return Err(Error::parameter(
                "time",
                t,
                "at least the time of the previous sample",
            ));
        }
        Ok(())
    }

    /// The values waiting at the latest time, taken out if `t` (checked)
    /// is later: they belong to the window from now on. Give the vector
    /// back with [`restore_pending`](Self::restore_pending) to keep its
    /// allocation.
    #[inline]
    pub(crate) fn release(&mut self, t: f64) -> Option<(f64, Vec<F>)> {
        match self.last_time {
            Some(last) if t > last && !self.pending.is_empty() => {
                Some((last, core::mem::take(&mut self.pending)))
            }
            _ => None,
        }
    }

    /// Hands back the vector [`release`](Self::release) took, emptied.
    #[inline]
    pub(crate) fn restore_pending(&mut self, mut values: Vec<F>) {
        values.clear();
        self.pending = values;
    }

    /// Moves the clock to `t` (checked) and returns `x` if it enters the
    /// window now, or keeps it waiting if the window is open on the right.
    #[inline]
    pub(crate) fn admit(&mut self, t: f64, x: F) -> Option<F> {
        self.last_time = Some(t);
        if self.closed.right() {
            Some(x)
        } else {
            self.pending.push(x);
            None
        }
    }

    /// Whether a sample at `u` is outside the window at time `t ≥ u`.
    #[inline]
    pub(crate) fn leaves(&self, u: f64, t: f64) -> bool {
        let age = t - u;
        if self.closed.left() {
            age > self.span
        } else {
            age >= self.span
        }
    }

    /// Forgets the clock and the waiting values.
    pub(crate) fn reset(&mut self) {
        self.last_time = None;
        self.pending.clear();
    }

    /// Checks restored times against the clock: each finite, in order,
    /// inside the window at `last_time`, and nothing waiting on a window
    /// closed on the right or without a clock.
    ///
    /// # Errors
    ///
    /// Any of those broken, as an invalid state.
    #[cfg(feature = "serde")]
    pub(crate) fn check_restored(&self, times: &[f64]) -> Result<(), Error> {
        let Some(last) = self.last_time else {
            if times.is_empty() && self.pending.is_empty() {
                return Ok(());
            }
            return Err(Error::state("samples without a last time"));
        };
        if !last.is_finite() {
            return Err(Error::state(alloc::format!(
                "last time {last:?} is not finite"
            )));
        }
        if self.closed.right() && !self.pending.is_empty() {
            return Err(Error::state(
                "values waiting in a window closed on the right",
            ));
        }
        // A time is refused at the push unless finite (with an infinite
        // span, a time of −∞ would otherwise pass for one inside it).
        if let Some(t) = times.iter().find(|t| !t.is_finite()) {
            return Err(Error::state(alloc::format!(
                "a sample time must be finite, got {t:?}"
            )));
        }
        for &t in times {
            let outside = t > last || self.leaves(t, last);
            // Open on the right, the samples at the latest time wait.
            let waiting = !self.closed.right() && t >= last;
            if outside || waiting {
                return Err(Error::state(alloc::format!(
                    "a sample at {t:?} is outside the span {:?} before {last:?}",
                    self.span
                )));
            }
        }
        if let Some((a, b)) = times.iter().zip(times.iter().skip(1)).find(|(a, b)| b < a) {
            return Err(Error::state(alloc::format!(
                "a sample time must be at least the previous one, got {b:?} after {a:?}"
            )));
        }
        Ok(())
    }
}
