//! Count, mean, variance, minimum and maximum over one moving window, from
//! exact integer sums.

use super::block_extrema::BlockExtrema;
use super::exact_window::{ExactWindow, Stat};
use super::extrema::Extreme;
use super::window::Window;
use crate::accumulator::impl_accumulator;
use crate::series::check_output;
use crate::{Error, Float, NanPolicy};
use alloc::vec::Vec;

/// Count, mean, variance, standard deviation, minimum and maximum of the
/// last `window` values pushed, over one ring, in O(1) time per push
/// (amortized, for the minimum and maximum).
///
/// The sums behind the mean and the variance are kept **exactly**, in
/// integers: a finite float is an integer times a power of two, so while
/// the window's values span at most 94 binary orders of magnitude (from
/// the finest bit of the smallest to the top bit of the largest: `1e9 +
/// U(0, 1)` spans 53), Σx and Σx² divided by that power of two are
/// integers, kept in 128 and 256 bits. A push adds one value's integers
/// and takes away the leaving value's: nothing is rounded, nothing drifts,
/// nothing is refreshed. Windows whose values span more (`1e300` beside
/// `1e-300`, subnormals beside ordinary values) keep compensated running
/// sums and M2 until those values have left
/// ([`is_exact`](Self::is_exact) tells which).
///
/// [`MovingAverage`](crate::MovingAverage) and
/// [`MovingVariance`](crate::MovingVariance) are this engine without the
/// minimum and maximum: the same bits for the same pushes, and the same
/// series.
///
/// The minimum and maximum come from blocks of `window` values (van Herk
/// and Gil-Werman), as in [`MovingMinMax`](crate::MovingMinMax), with the
/// same bits.
///
/// # Accuracy
///
/// On the exact sums:
///
/// - the **mean** is the exact mean of the window's values rounded to
///   nearest (ties to even) for `f64`; for `f32`, that `f64` rounded to
///   `f32` (within an `f32` ulp);
/// - the **variances** are `D = n·Σx² − (Σx)²` (an exact integer, scaled)
///   divided by `n²` or `n(n − 1)` and rounded once to `f64` (to nearest,
///   ties to even; subnormal results too) for `f64`; for `f32`, that
///   `f64` rounded to `f32`. A variance too large for an `f64` is +∞. The
///   standard deviations are their square roots.
///
/// So the statistics depend only on the values in the window: two streams
/// that leave the same values in it read the same bits, whatever went
/// through before. Off the exact sums, the mean and both variances stay
/// within twice the error of a two-pass over the window plus about a
/// hundred ulps.
///
/// # Windows, NaN and infinities
///
/// As for [`MovingVariance`](crate::MovingVariance): empty → `None`, the
/// sample variance needs two values, `min_periods` holds every statistic
/// back, NaN and ±∞ are counted and not summed (the mean is NaN or the
/// infinity, the variances NaN while one is in the window, and everything
/// is exact again when it leaves). The minimum and maximum order `−0.0`
/// below `+0.0`, take infinities as values, and are NaN while a NaN
/// counts; under [`NanPolicy::Skip`] every statistic is that of the other
/// values.
///
/// # Equality and serialization
///
/// Equal when the window length, the options and the values, in order,
/// are equal. Serialized as `MovingAverage` and `MovingVariance` are (one
/// form for the three); on the exact sums, the sums are taken afresh from
/// the values on the way in, which gives them exactly. **Checkpoints** (feature `serde`): restored to a state that
/// goes on bit for bit; see [Checkpoints](crate#checkpoints).
///
/// # Example
///
/// ```
/// use momenta::MovingStats;
///
/// let mut s = MovingStats::new(4)?;
/// s.extend_from_slice(&[100.0, 2.0, 4.0, 4.0, 6.0]);
/// // The window is [2, 4, 4, 6].
/// assert_eq!(s.len(), 4);
/// assert_eq!(s.mean(), Some(4.0));
/// assert_eq!(s.population_variance(), Some(2.0));
/// assert_eq!(s.sample_variance(), Some(8.0 / 3.0));
/// assert_eq!((s.min(), s.max()), (Some(2.0), Some(6.0)));
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct MovingStats<F> {
    inner: ExactWindow<F>,
    extrema: BlockExtrema,
}

#[cfg(feature = "serde")]
crate::checkpoint::path::restore_from!([F: Float] MovingStats<F>, super::state::SumsWindowState<F>);

impl<F: Float> MovingStats<F> {
    /// An empty window over the last `window` values. Nothing is
    /// allocated until values are pushed.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidWindow`](crate::ErrorKind::InvalidWindow) when
    /// `window` is 0.
    ///
    /// ```
    /// use momenta::MovingStats;
    ///
    /// assert_eq!(MovingStats::<f64>::new(8)?.window(), 8);
    /// assert_eq!(
    ///     MovingStats::<f32>::new(0).unwrap_err().to_string(),
    ///     "window must be at least 1, got 0"
    /// );
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn new(window: usize) -> Result<Self, Error> {
        Ok(Self {
            inner: Window::new(window)?,
            extrema: BlockExtrema::new(window),
        })
    }

    /// Skips NaN values instead of propagating them ([`NanPolicy`]): every
    /// statistic is that of the other values in the window, as pandas'
    /// `rolling(window)` computes them.
    ///
    /// ```
    /// use momenta::{MovingStats, NanPolicy};
    /// let mut s = MovingStats::new(4)?.with_nan_policy(NanPolicy::Skip);
    /// s.extend_from_slice(&[1.0, f64::NAN, 3.0, f64::NAN]);
    /// assert_eq!(s.mean(), Some(2.0));
    /// assert_eq!(s.sample_variance(), Some(2.0));
    /// assert_eq!(s.max(), Some(3.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn with_nan_policy(mut self, policy: NanPolicy) -> Self {
        self.inner.set_nan_policy(policy);
        self
    }

    /// Holds every statistic back (`None`) until the window holds
    /// `min_periods` values that count — every value, or the non-NaN ones
    /// under [`NanPolicy::Skip`] — as pandas' `min_periods`. The default
    /// is 1; 0 acts as 1. The sample variance needs two values whatever
    /// this says.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// when `min_periods` exceeds the window.
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(5)?.with_min_periods(3)?;
    /// s.extend_from_slice(&[1.0, 3.0]);
    /// assert_eq!(s.mean(), None);
    /// s.push(5.0);
    /// assert_eq!(s.sample_variance(), Some(4.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn with_min_periods(mut self, min_periods: usize) -> Result<Self, Error> {
        self.inner.set_min_periods(min_periods)?;
        Ok(self)
    }

    /// Whether the window holds enough values for its statistics (see
    /// [`with_min_periods`](Self::with_min_periods)).
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(3)?.with_min_periods(2)?;
    /// s.push(1.0);
    /// assert!(!s.is_ready());
    /// s.push(2.0);
    /// assert!(s.is_ready());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_ready(&self) -> bool {
        self.inner.is_ready()
    }

    /// Adds one value, dropping the oldest once the window is full. O(1)
    /// (amortized, for the minimum and maximum).
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(2)?;
    /// s.push(1.0);
    /// s.push(3.0);
    /// assert_eq!(s.sample_variance(), Some(2.0));
    /// s.push(3.0);
    /// assert_eq!(s.sample_variance(), Some(0.0));
    /// assert_eq!(s.min(), Some(3.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[inline]
    pub fn push(&mut self, x: F) {
        self.inner.push_along(&mut self.extrema, x);
    }

    /// Adds every value of `xs`, in order: the window is left as pushing
    /// them one by one would leave it.
    ///
    /// ```
    /// let xs = [5.0_f64, 1.0, 2.0, 3.0];
    /// let mut s = momenta::MovingStats::new(3)?;
    /// s.extend_from_slice(&xs);
    /// let mut pushed = momenta::MovingStats::new(3)?;
    /// for &x in &xs {
    ///     pushed.push(x);
    /// }
    /// assert_eq!(s.sample_variance(), pushed.sample_variance());
    /// assert_eq!(s.sample_variance(), Some(1.0)); // [1, 2, 3]
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn extend_from_slice(&mut self, xs: &[F]) {
        self.inner.extend_along(&mut self.extrema, xs);
    }

    /// Pushes every value of `xs` in order and returns the mean after each
    /// push — what [`mean`](Self::mean) reads, NaN until the window is
    /// [ready](Self::is_ready) — as a new vector: pandas'
    /// `s.rolling(window, min_periods=1).mean()`, polars'
    /// `s.rolling_mean(window, min_samples=1)`, but exact.
    ///
    /// Each mean is the correct rounding of the window's exact mean, the
    /// bits [`mean`](Self::mean) reads after the same pushes; the window
    /// goes on from where it was and is left holding the values the push
    /// loop leaves. While the values sit on one grid — integer multiples
    /// of a power of two whose distances from a middle value stay below
    /// `2^(52 − log2 window)` grid steps (`1e6 + U(0, 1)` for any window up
    /// to 2^18 values; whole numbers), or whose magnitudes span up to
    /// `min(105 − 2·log2 window, 94)` binary digits of the grid (values of
    /// any spread within a few binades) — the windows' sums are kept
    /// exactly in float registers and the series runs at a few operations
    /// a value (on a CPU with AVX2 and FMA, in one pass in vector
    /// registers). Values off the grid (NaN, ±∞, a value finer or
    /// far larger than the ones before) go through the push loop, as does
    /// the filling window.
    ///
    /// ```
    /// use momenta::MovingStats;
    ///
    /// let mut s = MovingStats::new(3)?;
    /// assert_eq!(s.mean_series(&[3.0, 6.0, 9.0, 12.0]), [3.0, 4.5, 6.0, 9.0]);
    /// // It goes on: the window is [6, 9, 12].
    /// s.push(0.0);
    /// assert_eq!(s.mean(), Some(7.0));
    ///
    /// // Correctly rounded where a running float sum drifts: the window's
    /// // mean after 1e16 has left is exactly 1.
    /// let mut t = MovingStats::new(2)?;
    /// let m: Vec<f64> = t.mean_series(&[1e16, 1.0, 1.0]);
    /// assert_eq!(m[2], 1.0);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use = "the series is the result; use `extend_from_slice` to only push"]
    pub fn mean_series(&mut self, xs: &[F]) -> Vec<F> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.series_to(xs, &mut out, Stat::Mean);
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
    /// let mut s = momenta::MovingStats::new(2)?;
    /// let mut out = [0.0; 3];
    /// s.mean_series_into(&[1.0, 3.0, 7.0], &mut out)?;
    /// assert_eq!(out, [1.0, 2.0, 5.0]);
    /// assert!(s.mean_series_into(&[1.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn mean_series_into(&mut self, xs: &[F], out: &mut [F]) -> Result<(), Error> {
        check_output("output", xs.len(), out.len())?;
        self.series_to(xs, out, Stat::Mean);
        Ok(())
    }

    /// The series of `stat` into `out`, as long as `xs` (see
    /// `ExactWindow::series_along`).
    fn series_to(&mut self, xs: &[F], out: &mut [F], stat: Stat) {
        self.inner.series_along(&mut self.extrema, xs, out, stat);
    }

    /// Pushes every value of `xs` in order and returns the sample variance
    /// after each push — what [`sample_variance`](Self::sample_variance)
    /// reads, NaN until the window holds two values and is
    /// [ready](Self::is_ready) — as a new vector: pandas'
    /// `s.rolling(window, min_periods=1).var()`, polars'
    /// `s.rolling_var(window, min_samples=1)`, bottleneck's
    /// `move_var(x, window, min_count=1, ddof=1)`, but correctly rounded.
    ///
    /// Each value is the push loop's, bit for bit: the correct rounding of
    /// the window's exact variance. The window goes on from where it was.
    /// While the values sit on one grid with an offset (as for
    /// [`mean_series`](Self::mean_series): `1e6 + U(0, 1)`, whole numbers),
    /// the series keeps `n·Σx² − (Σx)²` as one 128-bit integer, updated by
    /// one product and one addition a value, and divides it by a checked
    /// float quotient: a few operations a value. Everything else goes
    /// through the push loop.
    ///
    /// ```
    /// use momenta::MovingStats;
    ///
    /// let mut s = MovingStats::new(3)?;
    /// let v: Vec<f64> = s.sample_variance_series(&[1.0, 3.0, 5.0, 13.0]);
    /// assert!(v[0].is_nan()); // one value: no sample variance
    /// assert_eq!(&v[1..], [2.0, 4.0, 28.0]);
    /// // Exact where running float sums drift: after 1e16 has left, the
    /// // window [3, 5] has a variance of exactly 2.
    /// let mut t = MovingStats::new(2)?;
    /// assert_eq!(t.sample_variance_series(&[1e16, 3.0, 5.0])[2], 2.0);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use = "the series is the result; use `extend_from_slice` to only push"]
    pub fn sample_variance_series(&mut self, xs: &[F]) -> Vec<F> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.series_to(xs, &mut out, Stat::SAMPLE_VARIANCE);
        out
    }

    /// [`sample_variance_series`](Self::sample_variance_series) into a
    /// caller's buffer, as long as `xs`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`; nothing is
    /// pushed then.
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(2)?;
    /// let mut out = [0.0; 3];
    /// s.sample_variance_series_into(&[1.0, 3.0, 7.0], &mut out)?;
    /// assert_eq!(&out[1..], [2.0, 8.0]);
    /// assert!(s.sample_variance_series_into(&[1.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn sample_variance_series_into(&mut self, xs: &[F], out: &mut [F]) -> Result<(), Error> {
        check_output("output", xs.len(), out.len())?;
        self.series_to(xs, out, Stat::SAMPLE_VARIANCE);
        Ok(())
    }

    /// The population variance after each push of `xs`, as
    /// [`sample_variance_series`](Self::sample_variance_series) gives the
    /// sample one: pandas' `rolling(window, min_periods=1).var(ddof=0)`.
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(2)?;
    /// let v: Vec<f64> = s.population_variance_series(&[1.0, 3.0, 7.0]);
    /// assert_eq!(v, [0.0, 1.0, 4.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use = "the series is the result; use `extend_from_slice` to only push"]
    pub fn population_variance_series(&mut self, xs: &[F]) -> Vec<F> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.series_to(xs, &mut out, Stat::POPULATION_VARIANCE);
        out
    }

    /// [`population_variance_series`](Self::population_variance_series)
    /// into a caller's buffer, as long as `xs`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`; nothing is
    /// pushed then.
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(2)?;
    /// let mut out = [0.0; 2];
    /// s.population_variance_series_into(&[2.0, 6.0], &mut out)?;
    /// assert_eq!(out, [0.0, 4.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn population_variance_series_into(
        &mut self,
        xs: &[F],
        out: &mut [F],
    ) -> Result<(), Error> {
        check_output("output", xs.len(), out.len())?;
        self.series_to(xs, out, Stat::POPULATION_VARIANCE);
        Ok(())
    }

    /// The sample standard deviation after each push of `xs`: the square
    /// roots of [`sample_variance_series`](Self::sample_variance_series)'s
    /// values, as [`sample_std_dev`](Self::sample_std_dev) reads them
    /// (pandas' `rolling(window, min_periods=1).std()`).
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(2)?;
    /// let v: Vec<f64> = s.sample_std_dev_series(&[1.0, 3.0, 7.0]);
    /// assert!(v[0].is_nan());
    /// assert_eq!(&v[1..], [2.0_f64.sqrt(), 8.0_f64.sqrt()]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use = "the series is the result; use `extend_from_slice` to only push"]
    pub fn sample_std_dev_series(&mut self, xs: &[F]) -> Vec<F> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.series_to(xs, &mut out, Stat::SAMPLE_STD_DEV);
        out
    }

    /// [`sample_std_dev_series`](Self::sample_std_dev_series) into a
    /// caller's buffer, as long as `xs`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`; nothing is
    /// pushed then.
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(3)?;
    /// let mut out = [0.0; 3];
    /// s.sample_std_dev_series_into(&[0.0, 4.0, 8.0], &mut out)?;
    /// assert_eq!(out[2], 4.0);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn sample_std_dev_series_into(&mut self, xs: &[F], out: &mut [F]) -> Result<(), Error> {
        check_output("output", xs.len(), out.len())?;
        self.series_to(xs, out, Stat::SAMPLE_STD_DEV);
        Ok(())
    }

    /// The population standard deviation after each push of `xs`: the
    /// square roots of
    /// [`population_variance_series`](Self::population_variance_series)'s
    /// values (pandas' `rolling(window, min_periods=1).std(ddof=0)`).
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(2)?;
    /// let v: Vec<f64> = s.population_std_dev_series(&[1.0, 3.0, 7.0]);
    /// assert_eq!(v, [0.0, 1.0, 2.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use = "the series is the result; use `extend_from_slice` to only push"]
    pub fn population_std_dev_series(&mut self, xs: &[F]) -> Vec<F> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.series_to(xs, &mut out, Stat::POPULATION_STD_DEV);
        out
    }

    /// [`population_std_dev_series`](Self::population_std_dev_series) into
    /// a caller's buffer, as long as `xs`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`; nothing is
    /// pushed then.
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(2)?;
    /// let mut out = [0.0; 2];
    /// s.population_std_dev_series_into(&[1.0, 5.0], &mut out)?;
    /// assert_eq!(out, [0.0, 2.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn population_std_dev_series_into(&mut self, xs: &[F], out: &mut [F]) -> Result<(), Error> {
        check_output("output", xs.len(), out.len())?;
        self.series_to(xs, out, Stat::POPULATION_STD_DEV);
        Ok(())
    }

    /// The mean of the window, or `None` when it is empty: NaN while a NaN
    /// counts in it or it holds both infinities, the infinity while it
    /// holds one kind.
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(2)?;
    /// assert_eq!(s.mean(), None);
    /// s.extend_from_slice(&[1.0, 2.0, 4.0]);
    /// assert_eq!(s.mean(), Some(3.0));
    /// s.push(f64::INFINITY);
    /// assert_eq!(s.mean(), Some(f64::INFINITY));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn mean(&self) -> Option<F> {
        self.inner.mean()
    }

    /// The population (biased) variance Σ(x − x̄)²/n of the window, or
    /// `None` when it is empty. Never negative.
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(2)?;
    /// s.extend_from_slice(&[10.0, 1.0, 3.0]);
    /// assert_eq!(s.population_variance(), Some(1.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn population_variance(&self) -> Option<F> {
        self.inner.population_variance()
    }

    /// The sample (unbiased) variance Σ(x − x̄)²/(n − 1) of the window, or
    /// `None` when it holds fewer than two values. Never negative.
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(3)?;
    /// s.push(4.0);
    /// assert_eq!(s.sample_variance(), None);
    /// s.push(8.0);
    /// assert_eq!(s.sample_variance(), Some(8.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn sample_variance(&self) -> Option<F> {
        self.inner.sample_variance()
    }

    /// The population standard deviation, √(population variance).
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(2)?;
    /// s.extend_from_slice(&[1.0, 3.0]);
    /// assert_eq!(s.population_std_dev(), Some(1.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn population_std_dev(&self) -> Option<F> {
        self.inner.read(Stat::POPULATION_STD_DEV)
    }

    /// The sample standard deviation, √(sample variance).
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(3)?;
    /// s.extend_from_slice(&[0.0, 4.0, 8.0]);
    /// assert_eq!(s.sample_std_dev(), Some(4.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn sample_std_dev(&self) -> Option<F> {
        self.inner.read(Stat::SAMPLE_STD_DEV)
    }

    /// The least value in the window, `None` until ready, NaN while a NaN
    /// counts in it. `−0.0` is below `+0.0`.
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(3)?;
    /// s.extend_from_slice(&[-7.0, 4.0, 9.0, 1.0]);
    /// assert_eq!(s.min(), Some(1.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn min(&self) -> Option<F> {
        Extreme::Min.of(&self.extrema, self.is_ready(), self.inner.nan_counts())
    }

    /// The greatest value in the window, `None` until ready, NaN while a
    /// NaN counts in it. `+0.0` is above `−0.0`.
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(3)?;
    /// s.extend_from_slice(&[70.0, 4.0, 9.0, 1.0]);
    /// assert_eq!(s.max(), Some(9.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn max(&self) -> Option<F> {
        Extreme::Max.of(&self.extrema, self.is_ready(), self.inner.nan_counts())
    }

    /// Whether the mean and variances come from the exact integer sums
    /// (true unless the window's finite values span more binary orders of
    /// magnitude than they hold; see the type's doc).
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(2)?;
    /// s.extend_from_slice(&[1e300, 1e-300]);
    /// assert!(!s.is_exact());
    /// s.extend_from_slice(&[1.0, 2.0]);
    /// assert!(s.is_exact());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_exact(&self) -> bool {
        self.inner.is_exact()
    }

    /// The number of values in the window: `min(n, window)` after `n`
    /// pushes.
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(2)?;
    /// s.extend_from_slice(&[1.0, 2.0, 3.0]);
    /// assert_eq!(s.len(), 2);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether the window holds no value.
    ///
    /// ```
    /// assert!(momenta::MovingStats::<f64>::new(2)?.is_empty());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.inner.len() == 0
    }

    /// The window length given to [`new`](Self::new).
    ///
    /// ```
    /// assert_eq!(momenta::MovingStats::<f32>::new(3)?.window(), 3);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn window(&self) -> usize {
        self.inner.window()
    }

    /// Whether `window` values have been pushed, so every push now drops
    /// the oldest.
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(1)?;
    /// assert!(!s.is_full());
    /// s.push(2.0);
    /// assert!(s.is_full());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_full(&self) -> bool {
        self.inner.is_full()
    }

    /// Forgets every value; the window length and options stay, and so
    /// does the allocated buffer.
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(3)?;
    /// s.extend_from_slice(&[1.0, 2.0]);
    /// s.reset();
    /// assert_eq!((s.mean(), s.max()), (None, None));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn reset(&mut self) {
        self.inner.reset();
        self.extrema.clear();
    }

    /// The values in the window, oldest first.
    ///
    /// ```
    /// let mut s = momenta::MovingStats::new(2)?;
    /// s.extend_from_slice(&[1.0, 2.0, 3.0]);
    /// assert!(s.iter().eq([2.0, 3.0]));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = F> + '_ {
        self.inner.iter()
    }
}

impl<F: Float> PartialEq for MovingStats<F> {
    /// Equal when the window lengths and options are equal and the windows
    /// hold the same values in the same order (so, like `f64`, a window
    /// holding a NaN is not equal to itself).
    ///
    /// ```
    /// use momenta::MovingStats;
    /// let mut a = MovingStats::new(2)?;
    /// let mut b = MovingStats::new(2)?;
    /// a.extend_from_slice(&[5.0, 1.0, 2.0]);
    /// b.extend_from_slice(&[1.0, 2.0]);
    /// assert_eq!(a, b);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    fn eq(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
}

impl_accumulator!(MovingStats);

#[cfg(feature = "serde")]
impl<F: Float> TryFrom<super::state::SumsWindowState<F>> for MovingStats<F> {
    type Error = Error;

    fn try_from(state: super::state::SumsWindowState<F>) -> Result<Self, Error> {
        let inner = Window::try_from(state)?;
        let mut extrema = BlockExtrema::new(inner.window());
        extrema.refill(inner.iter());
        Ok(Self { inner, extrema })
    }
}

#[cfg(feature = "serde")]
impl<F: Float> serde::Serialize for MovingStats<F> {
    fn serialize<Z: serde::Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
        self.inner.serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn auto_traits() {
        assert_send_sync::<MovingStats<f32>>();
        assert_send_sync::<MovingStats<f64>>();
    }
}
