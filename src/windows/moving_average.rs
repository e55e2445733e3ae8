//! The simple moving average over a fixed window.

use alloc::vec::Vec;

use super::exact_window::{ExactWindow, Stat};
use crate::series::check_output;
use crate::{Error, Float, NanPolicy};

/// The mean of the last `window` values pushed (a simple moving average, or
/// boxcar filter), in O(1) time per push, for ever, without drift.
///
/// Made for real-time smoothing: a sensor or audio loop pushes one sample and
/// reads the smoothed value back from the same call. Every push costs a few
/// integer and floating-point operations, never a pass over the window, and
/// once the window is full it never allocates.
///
/// It is the engine of [`MovingStats`](crate::MovingStats) without the
/// minimum and maximum: the same exact sums, the same bits for the same
/// pushes, and the same series.
///
/// # Accuracy
///
/// The window's sum is kept **exactly**, in integers: while the window's
/// finite values span at most 94 binary orders of magnitude (`1e9 + U(0,
/// 1)` spans 53), a push adds one value's integer and takes away the
/// leaving value's, and nothing is rounded or drifts, however long the
/// stream. The mean is the exact mean of the window's values **correctly
/// rounded** (to nearest, ties to even) for `f64`; for `f32`, that `f64`
/// rounded to `f32` (within an `f32` ulp). So it depends only on the values
/// in the window: two streams that leave the same values in it read the
/// same bits, whatever went through before.
///
/// Windows whose values span more (`1e300` beside `1e-300`, subnormals
/// beside ordinary values) keep compensated running sums until those
/// values have left (at most `window` pushes later): there the mean stays
/// within a few ulps of the largest value in the window, no worse than a
/// two-pass over the window.
///
/// # Warm-up: `min_periods` is 1, not pandas' `window`
///
/// A streaming reading has an answer from the first value: the statistics
/// are those of the values pushed so far until the window fills (pandas'
/// `rolling(window, min_periods=1)`). pandas' `rolling(window)` defaults
/// to `min_periods=window` and reports NaN until the window is full;
/// `.with_min_periods(window)` gives its output.
///
/// # Memory
///
/// Memory grows with the values actually pushed, up to `window` values:
/// `MovingAverage::new(usize::MAX)` is a valid cumulative average that
/// allocates as it goes.
///
/// # NaN and infinities
///
/// While the window holds a NaN, or both `+∞` and `−∞`, the mean is NaN;
/// while it holds only one kind of infinity, the mean is that infinity. They
/// are counted rather than summed, so the mean is exact again as soon as the
/// last of them has left the window. Finite values whose float sum would
/// overflow, such as `f64::MAX` and `-f64::MAX`, are summed exactly, so
/// their mean stays finite: `[MAX, -MAX]` gives 0.
///
/// # No `Merge`
///
/// A window is a sequence, not a set: "the last `window` values" of two
/// streams put together has no meaning, so `MovingAverage` does not
/// implement [`Merge`](crate::Merge). Feed one stream, or use
/// [`Mean`](crate::Mean) for mergeable statistics.
///
/// # Equality and serialization
///
/// Two moving averages are equal when they have the same window length and
/// hold the same values in the same order. With the `serde` feature the
/// serialized form is `MovingStats`' — `{"window": 3, "values": [...]}`,
/// oldest first, with the options — and the engine: where the window
/// stands between its wraps, and the mark of the exact sums (taken afresh
/// from the values on the way in, which gives them exactly), or, off them,
/// the compensated sums as they are, checked against the values. The
/// restored average goes on bit for bit as the original would have, in any
/// format ([Checkpoints](crate#checkpoints)). A window of 0, more values
/// than the window, or sums that do not match the values are rejected with
/// an [`Error`]. A state saved before the exact sums (its compensated sum,
/// or no engine at all) is checked and takes its sums afresh from the
/// values.
///
/// # Example
///
/// ```
/// use momenta::MovingAverage;
///
/// let mut smooth = MovingAverage::new(3)?;
/// assert_eq!(smooth.push(3.0), 3.0);
/// assert_eq!(smooth.push(6.0), 4.5);
/// assert_eq!(smooth.push(9.0), 6.0);
/// assert_eq!(smooth.push(12.0), 9.0); // 3.0 has left the window
/// assert!(smooth.is_full());
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Debug)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(transparent, bound = "F: Float")
)]
pub struct MovingAverage<F> {
    inner: ExactWindow<F>,
}

impl<F: Float> MovingAverage<F> {
    /// An empty moving average over the last `window` values.
    ///
    /// Nothing is allocated until values are pushed.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidWindow`](crate::ErrorKind::InvalidWindow) when
    /// `window` is 0.
    ///
    /// ```
    /// use momenta::{ErrorKind, MovingAverage};
    ///
    /// let a = MovingAverage::<f64>::new(10)?;
    /// assert_eq!(a.window(), 10);
    ///
    /// let err = MovingAverage::<f64>::new(0).unwrap_err();
    /// assert_eq!(err.kind(), &ErrorKind::InvalidWindow { window: 0 });
    /// assert_eq!(err.to_string(), "window must be at least 1, got 0");
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn new(window: usize) -> Result<Self, Error> {
        Ok(Self {
            inner: ExactWindow::new(window)?,
        })
    }

    /// Skips NaN values instead of propagating them ([`NanPolicy`]): the
    /// mean is that of the other values in the window, as pandas'
    /// `rolling(window).mean()` computes it.
    ///
    /// ```
    /// use momenta::{MovingAverage, NanPolicy};
    /// let mut a = MovingAverage::new(3)?.with_nan_policy(NanPolicy::Skip);
    /// a.extend_from_slice(&[1.0, f64::NAN, 4.0]);
    /// assert_eq!(a.mean(), Some(2.5));
    /// a.extend_from_slice(&[f64::NAN, f64::NAN]);
    /// assert_eq!(a.mean(), Some(4.0));
    /// a.push(f64::NAN);
    /// assert_eq!(a.mean(), None); // nothing but NaN in the window
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn with_nan_policy(mut self, policy: NanPolicy) -> Self {
        self.inner.set_nan_policy(policy);
        self
    }

    /// Holds the statistics back (`None`, and NaN from
    /// [`push`](Self::push)) until the window holds `min_periods` values
    /// that count — every value, or the non-NaN ones under
    /// [`NanPolicy::Skip`] — as pandas' `min_periods`. The default is 1,
    /// pandas' `min_periods=1`: a streaming filter answers from its first
    /// sample. 0 acts as 1.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// when `min_periods` exceeds the window: it could never be reached.
    ///
    /// ```
    /// let mut a = momenta::MovingAverage::new(3)?.with_min_periods(2)?;
    /// assert!(a.push(4.0_f64).is_nan());
    /// assert_eq!(a.mean(), None);
    /// assert!(!a.is_ready());
    /// assert_eq!(a.push(6.0), 5.0);
    /// assert!(a.is_ready());
    /// assert!(momenta::MovingAverage::<f64>::new(3)?.with_min_periods(4).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn with_min_periods(mut self, min_periods: usize) -> Result<Self, Error> {
        self.inner.set_min_periods(min_periods)?;
        Ok(self)
    }

    /// Whether the window holds enough values for a mean (see
    /// [`with_min_periods`](Self::with_min_periods)).
    ///
    /// ```
    /// let mut a = momenta::MovingAverage::new(2)?;
    /// assert!(!a.is_ready());
    /// a.push(1.0);
    /// assert!(a.is_ready());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_ready(&self) -> bool {
        self.inner.is_ready()
    }

    /// Adds one value and returns the mean of the last `min(n, window)`
    /// values, this one included. O(1).
    ///
    /// A moving average is a filter, and a filter's push returns its
    /// output: the same rule gives [`MovingQuantile::push`] its quantile.
    /// The windows that offer several statistics
    /// ([`MovingVariance`](crate::MovingVariance),
    /// [`MovingMinMax`](crate::MovingMinMax),
    /// [`TimeWindow`](crate::TimeWindow)) return nothing. Until the window
    /// is ready ([`with_min_periods`](Self::with_min_periods)) the returned
    /// mean is NaN, as pandas shows it; [`mean`](Self::mean) says `None`.
    ///
    /// [`MovingQuantile::push`]: crate::MovingQuantile::push
    ///
    /// ```
    /// let mut a = momenta::MovingAverage::new(2)?;
    /// assert_eq!(a.push(1.0), 1.0);
    /// assert_eq!(a.push(2.0), 1.5);
    /// assert_eq!(a.push(4.0), 3.0);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[inline]
    pub fn push(&mut self, x: F) -> F {
        self.inner.push_mean(x)
    }

    /// Adds every value of `xs`, in order: the window is left as pushing
    /// them one by one would leave it, and reads the same bits.
    ///
    /// ```
    /// let mut a = momenta::MovingAverage::new(2)?;
    /// a.extend_from_slice(&[100.0, 1.0, 2.0, 3.0]);
    /// assert_eq!(a.mean(), Some(2.5));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn extend_from_slice(&mut self, xs: &[F]) {
        self.inner.extend_from_slice(xs);
    }

    /// Pushes every value of `xs` in order and returns the mean after each
    /// push — what [`push`](Self::push) returns, NaN until the window is
    /// [ready](Self::is_ready) — as a new vector: pandas'
    /// `s.rolling(window, min_periods=1).mean()`, polars'
    /// `s.rolling_mean(window, min_samples=1)`, but correctly rounded.
    ///
    /// The window goes on from where it was and is left holding the values
    /// the push loop leaves: every value of the series, and every later
    /// push, gives the push loop's bits, by
    /// [`MovingStats::mean_series`](crate::MovingStats::mean_series)'s
    /// algorithm (a few operations a value while the values sit on one
    /// grid). pandas' and polars' default `min_periods` is the window; here
    /// it is [`with_min_periods`](Self::with_min_periods)'s.
    ///
    /// ```
    /// use momenta::MovingAverage;
    ///
    /// let mut a = MovingAverage::new(3)?;
    /// assert_eq!(a.mean_series(&[3.0, 6.0, 9.0, 12.0]), [3.0, 4.5, 6.0, 9.0]);
    /// // It goes on: the window is [6, 9, 12].
    /// assert_eq!(a.push(0.0), 7.0);
    ///
    /// // pandas' default min_periods=window: NaN until the window is full.
    /// let mut b = MovingAverage::new(2)?.with_min_periods(2)?;
    /// let m: Vec<f64> = b.mean_series(&[1.0, 2.0, 4.0]);
    /// assert!(m[0].is_nan());
    /// assert_eq!(m[1..], [1.5, 3.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use = "the series is the result; use `extend_from_slice` to only push"]
    pub fn mean_series(&mut self, xs: &[F]) -> Vec<F> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.series_to(xs, &mut out);
        out
    }

    /// [`mean_series`](Self::mean_series) into a caller's buffer, as long
    /// as `xs`: `out[i]` is the mean after pushing `xs[i]`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`; nothing is
    /// pushed then.
    ///
    /// ```
    /// let mut a = momenta::MovingAverage::new(2)?;
    /// let mut out = [0.0; 3];
    /// a.mean_series_into(&[1.0, 3.0, 7.0], &mut out)?;
    /// assert_eq!(out, [1.0, 2.0, 5.0]);
    /// assert!(a.mean_series_into(&[1.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn mean_series_into(&mut self, xs: &[F], out: &mut [F]) -> Result<(), Error> {
        check_output("output", xs.len(), out.len())?;
        self.series_to(xs, out);
        Ok(())
    }

    fn series_to(&mut self, xs: &[F], out: &mut [F]) {
        self.inner.series_along(&mut (), xs, out, Stat::Mean);
    }

    /// The mean of the values in the window, or `None` when it is empty
    /// (or not [ready](Self::is_ready)).
    ///
    /// ```
    /// let mut a = momenta::MovingAverage::<f64>::new(4)?;
    /// assert_eq!(a.mean(), None);
    /// a.extend_from_slice(&[1.0, 2.0]);
    /// assert_eq!(a.mean(), Some(1.5));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn mean(&self) -> Option<F> {
        self.inner.mean()
    }

    /// The number of values in the window: `min(n, window)` after `n`
    /// pushes.
    ///
    /// ```
    /// let mut a = momenta::MovingAverage::new(2)?;
    /// a.extend_from_slice(&[1.0, 2.0, 3.0]);
    /// assert_eq!(a.len(), 2);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether the window holds no value.
    ///
    /// ```
    /// let a = momenta::MovingAverage::<f32>::new(2)?;
    /// assert!(a.is_empty());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.inner.len() == 0
    }

    /// The window length given to [`new`](Self::new).
    ///
    /// ```
    /// assert_eq!(momenta::MovingAverage::<f64>::new(5)?.window(), 5);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn window(&self) -> usize {
        self.inner.window()
    }

    /// Whether `window` values have been pushed, so every push now drops the
    /// oldest.
    ///
    /// ```
    /// let mut a = momenta::MovingAverage::new(2)?;
    /// a.push(1.0);
    /// assert!(!a.is_full());
    /// a.push(1.0);
    /// assert!(a.is_full());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_full(&self) -> bool {
        self.inner.is_full()
    }

    /// Forgets every value; the window length stays, and so does the
    /// allocated buffer.
    ///
    /// ```
    /// let mut a = momenta::MovingAverage::new(3)?;
    /// a.extend_from_slice(&[1.0, 2.0]);
    /// a.reset();
    /// assert_eq!(a.mean(), None);
    /// assert_eq!(a.push(7.0), 7.0);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn reset(&mut self) {
        self.inner.reset();
    }

    /// The values in the window, oldest first.
    ///
    /// ```
    /// let mut a = momenta::MovingAverage::new(3)?;
    /// a.extend_from_slice(&[1.0, 2.0, 3.0, 4.0]);
    /// assert!(a.iter().eq([2.0, 3.0, 4.0]));
    /// assert_eq!(a.iter().next_back(), Some(4.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = F> + '_ {
        self.inner.iter()
    }

    /// The values in the window as two slices, oldest first (the second may
    /// be empty), without copying.
    ///
    /// ```
    /// let mut a = momenta::MovingAverage::new(3)?;
    /// for x in [1.0, 2.0, 3.0, 4.0] {
    ///     a.push(x);
    /// }
    /// let (older, newer) = a.as_slices();
    /// assert_eq!((older, newer), (&[2.0, 3.0][..], &[4.0][..]));
    /// assert_eq!([older, newer].concat(), [2.0, 3.0, 4.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn as_slices(&self) -> (&[F], &[F]) {
        self.inner.as_slices()
    }
}

impl<F: Float> PartialEq for MovingAverage<F> {
    /// Equal when the window lengths are equal and the windows hold the
    /// same values in the same order (so, like `f64`, a window holding a
    /// NaN is not equal to itself).
    ///
    /// ```
    /// use momenta::MovingAverage;
    /// let mut a = MovingAverage::new(2)?;
    /// let mut b = MovingAverage::new(2)?;
    /// a.extend_from_slice(&[5.0, 1.0, 2.0]);
    /// b.extend_from_slice(&[1.0, 2.0]);
    /// assert_eq!(a, b);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    fn eq(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
}

// By hand, not by `impl_accumulator!`: the trait's push returns nothing,
// so it pushes without reading the mean (which the inherent push returns),
// and so does `Extend`.
impl<F: Float> crate::Accumulator<F> for MovingAverage<F> {
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a forwarding shim, as impl_accumulator! makes it"
    )]
    fn push(&mut self, x: F) {
        self.inner.push(x);
    }

    fn extend_from_slice(&mut self, xs: &[F]) {
        self.inner.extend_from_slice(xs);
    }
}

impl<F: Float> Extend<F> for MovingAverage<F> {
    fn extend<I: IntoIterator<Item = F>>(&mut self, iter: I) {
        for x in iter {
            self.inner.push(x);
        }
    }
}

impl<'a, F: Float> Extend<&'a F> for MovingAverage<F> {
    fn extend<I: IntoIterator<Item = &'a F>>(&mut self, iter: I) {
        for &x in iter {
            self.inner.push(x);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Accumulator;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn auto_traits() {
        assert_send_sync::<MovingAverage<f32>>();
        assert_send_sync::<MovingAverage<f64>>();
    }

    #[test]
    fn small_integers_give_exact_means() {
        let mut a = MovingAverage::<f64>::new(4).unwrap();
        let xs = [8.0, 0.0, 4.0, 12.0, -4.0, 20.0, 16.0];
        let expected = [8.0, 4.0, 4.0, 6.0, 3.0, 8.0, 11.0];
        for (x, e) in xs.into_iter().zip(expected) {
            assert_eq!(a.push(x), e);
            assert_eq!(a.mean(), Some(e));
        }
    }

    #[test]
    fn window_zero_is_an_error_and_one_is_the_latest_value() {
        assert!(MovingAverage::<f32>::new(0).is_err());
        let mut a = MovingAverage::<f32>::new(1).unwrap();
        for x in [1.5_f32, -7.25, 1e30, 3.0] {
            assert_eq!(a.push(x), x);
        }
    }

    #[test]
    fn extend_skipping_equals_pushing_one_by_one() {
        let xs: alloc::vec::Vec<f64> = (0..50).map(|i| f64::from(i * i % 17)).collect();
        let mut one = MovingAverage::new(7).unwrap();
        xs.iter().for_each(|&x| {
            one.push(x);
        });
        let mut slice = MovingAverage::new(7).unwrap();
        slice.push(1000.0);
        slice.extend_from_slice(&xs);
        assert_eq!(one, slice);
        assert_eq!(one.mean(), slice.mean());
        let mut generic = MovingAverage::new(7).unwrap();
        Accumulator::extend_from_slice(&mut generic, &xs[..3]);
        generic.extend(&xs[3..]);
        assert_eq!(generic.mean(), one.mean());
    }

    #[test]
    fn equality_is_by_contents_not_history() {
        let mut a = MovingAverage::<f64>::new(2).unwrap();
        let mut b = MovingAverage::<f64>::new(2).unwrap();
        a.extend_from_slice(&[9.0, 1.0, 2.0]);
        b.extend_from_slice(&[1.0, 2.0]);
        assert_eq!(a, b);
        b.push(3.0);
        assert_ne!(a, b);
        assert_ne!(a, MovingAverage::new(3).unwrap());
    }
}
