//! Mean and variance over a fixed moving window.

use alloc::vec::Vec;

use super::exact_window::{ExactWindow, Stat};
use crate::accumulator::impl_accumulator;
use crate::series::check_output;
use crate::{Error, Float, NanPolicy};

/// Mean and variance of the last `window` values pushed, in O(1) time per
/// push, for ever, without drift.
///
/// It is the engine of [`MovingStats`](crate::MovingStats) without the
/// minimum and maximum (so a push does not pay for them): Σx and Σx² of
/// the window kept exactly, in integers, a push adding one value's
/// integers and taking away the leaving value's; the same bits as
/// `MovingStats` for the same pushes, and the same series.
///
/// Empty → every statistic is `None`; the sample variance needs two values
/// in the window. The variance is never negative.
///
/// # Accuracy
///
/// While the window's finite values span at most 94 binary orders of
/// magnitude (`1e9 + U(0, 1)` spans 53):
///
/// - the **mean** is the exact mean of the window's values correctly
///   rounded (to nearest, ties to even) for `f64`; for `f32`, that `f64`
///   rounded to `f32` (within an `f32` ulp);
/// - the **variances** are `D = n·Σx² − (Σx)²` (an exact integer, scaled)
///   divided by `n²` or `n(n − 1)` and rounded once to `f64` (to nearest,
///   ties to even; subnormal results too) for `f64`; for `f32`, that `f64`
///   rounded to `f32`. The standard deviations are their square roots.
///
/// So the statistics depend only on the values in the window: two streams
/// that leave the same values in it read the same bits, whatever went
/// through before. Windows whose values span more (`1e300` beside
/// `1e-300`, subnormals beside ordinary values) keep compensated running
/// sums and M2 until those values have left (at most `window` pushes
/// later): there the mean and both variances stay within twice the error
/// of a two-pass over the window plus about a hundred ulps.
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
/// As for [`MovingAverage`](crate::MovingAverage): memory follows the values
/// pushed, up to `window` of them, so `new(usize::MAX)` works.
///
/// # NaN and infinities
///
/// Values near `f64::MAX` follow the crate's policy: `[MAX, -MAX]` has mean
/// 0 and variance +∞ (a variance too large to represent is +∞, never NaN).
///
/// While the window holds a NaN or an infinity, the variance and standard
/// deviations are NaN; the mean follows the rule of
/// [`MovingAverage`](crate::MovingAverage) (NaN, or the infinity when only
/// one kind is present). Non-finite values are counted rather than fed to
/// the sums, so everything is exact again as soon as the last of them leaves
/// the window.
///
/// # No `Merge`
///
/// A window is a sequence, so there is no meaningful merge of two windows;
/// use [`Variance`](crate::Variance) for mergeable statistics.
///
/// # Equality and serialization
///
/// As for [`MovingAverage`](crate::MovingAverage): equal when the window
/// length and the values, in order, are equal; serialized as `MovingStats`
/// is (`{"window": n, "values": [...]}`, the options and the engine; the
/// exact sums are taken afresh from the values on the way in, which gives
/// them exactly).
///
/// **Checkpoints** (feature `serde`): serialized losslessly in any
/// format, and restored to a state that goes on bit for bit; see
/// [Checkpoints](crate#checkpoints). A state saved before the exact sums
/// goes on from the compensated sums it carries, checked against the
/// values, until the ring's head next wraps (at most `window` pushes),
/// and from the exact sums after.
///
/// # Example
///
/// ```
/// use momenta::MovingVariance;
///
/// let mut v = MovingVariance::new(4)?;
/// v.extend_from_slice(&[100.0, 2.0, 4.0, 4.0, 6.0]);
/// // The window is [2, 4, 4, 6].
/// assert_eq!(v.mean(), Some(4.0));
/// assert_eq!(v.population_variance(), Some(2.0));
/// assert_eq!(v.sample_variance(), Some(8.0 / 3.0));
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Debug)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(transparent, bound = "F: Float")
)]
pub struct MovingVariance<F> {
    inner: ExactWindow<F>,
}

impl<F: Float> MovingVariance<F> {
    /// An empty accumulator over the last `window` values.
    ///
    /// Nothing is allocated until values are pushed.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidWindow`](crate::ErrorKind::InvalidWindow) when
    /// `window` is 0.
    ///
    /// ```
    /// use momenta::MovingVariance;
    ///
    /// assert_eq!(MovingVariance::<f64>::new(8)?.window(), 8);
    /// assert_eq!(
    ///     MovingVariance::<f32>::new(0).unwrap_err().to_string(),
    ///     "window must be at least 1, got 0"
    /// );
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn new(window: usize) -> Result<Self, Error> {
        Ok(Self {
            inner: ExactWindow::new(window)?,
        })
    }

    /// Skips NaN values instead of propagating them ([`NanPolicy`]): the
    /// statistics are those of the other values in the window, as pandas'
    /// `rolling(window).var()` computes them (the sample variance needs two
    /// non-NaN values).
    ///
    /// ```
    /// use momenta::{MovingVariance, NanPolicy};
    /// let mut v = MovingVariance::new(4)?.with_nan_policy(NanPolicy::Skip);
    /// v.extend_from_slice(&[1.0, f64::NAN, 3.0, f64::NAN]);
    /// assert_eq!(v.sample_variance(), Some(2.0));
    /// assert_eq!(v.population_variance(), Some(1.0));
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
    /// let mut v = momenta::MovingVariance::new(5)?.with_min_periods(3)?;
    /// v.extend_from_slice(&[1.0, 3.0]);
    /// assert_eq!(v.sample_variance(), None);
    /// v.push(5.0);
    /// assert_eq!(v.sample_variance(), Some(4.0));
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
    /// let mut v = momenta::MovingVariance::new(3)?.with_min_periods(2)?;
    /// v.push(1.0);
    /// assert!(!v.is_ready());
    /// v.push(2.0);
    /// assert!(v.is_ready());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_ready(&self) -> bool {
        self.inner.is_ready()
    }

    /// Adds one value, dropping the oldest once the window is full. O(1).
    ///
    /// Returns nothing: this window offers several statistics, so none is
    /// singled out (only the one-output filters,
    /// [`MovingAverage`](crate::MovingAverage) and
    /// [`MovingQuantile`](crate::MovingQuantile), return theirs).
    ///
    /// ```
    /// let mut v = momenta::MovingVariance::new(2)?;
    /// v.push(1.0);
    /// v.push(3.0);
    /// assert_eq!(v.sample_variance(), Some(2.0));
    /// v.push(3.0);
    /// assert_eq!(v.sample_variance(), Some(0.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[inline]
    pub fn push(&mut self, x: F) {
        self.inner.push(x);
    }

    /// Adds every value of `xs`, in order: the window is left as pushing
    /// them one by one would leave it, and reads the same bits.
    ///
    /// ```
    /// let xs = [5.0_f64, 1.0, 2.0, 3.0];
    /// let mut v = momenta::MovingVariance::new(3)?;
    /// v.extend_from_slice(&xs);
    /// let mut pushed = momenta::MovingVariance::new(3)?;
    /// for &x in &xs {
    ///     pushed.push(x);
    /// }
    /// assert_eq!(v.sample_variance(), pushed.sample_variance()); // the same bits
    /// assert_eq!(v.sample_variance(), Some(1.0)); // [1, 2, 3]
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn extend_from_slice(&mut self, xs: &[F]) {
        self.inner.extend_from_slice(xs);
    }

    /// The mean of the window, or `None` when it is empty.
    ///
    /// ```
    /// let mut v = momenta::MovingVariance::new(2)?;
    /// assert_eq!(v.mean(), None);
    /// v.extend_from_slice(&[1.0, 2.0, 4.0]);
    /// assert_eq!(v.mean(), Some(3.0));
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
    /// let mut v = momenta::MovingVariance::new(2)?;
    /// v.extend_from_slice(&[10.0, 1.0, 3.0]);
    /// assert_eq!(v.population_variance(), Some(1.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn population_variance(&self) -> Option<F> {
        self.inner.read(Stat::POPULATION_VARIANCE)
    }

    /// The sample (unbiased) variance Σ(x − x̄)²/(n − 1) of the window, or
    /// `None` when it holds fewer than two values. Never negative.
    ///
    /// ```
    /// let mut v = momenta::MovingVariance::new(3)?;
    /// v.push(4.0);
    /// assert_eq!(v.sample_variance(), None);
    /// v.push(8.0);
    /// assert_eq!(v.sample_variance(), Some(8.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn sample_variance(&self) -> Option<F> {
        self.inner.read(Stat::SAMPLE_VARIANCE)
    }

    /// The population standard deviation, √(population variance).
    ///
    /// ```
    /// let mut v = momenta::MovingVariance::new(2)?;
    /// v.extend_from_slice(&[1.0, 3.0]);
    /// assert_eq!(v.population_std_dev(), Some(1.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn population_std_dev(&self) -> Option<F> {
        self.inner.read(Stat::POPULATION_STD_DEV)
    }

    /// The sample standard deviation, √(sample variance).
    ///
    /// ```
    /// let mut v = momenta::MovingVariance::new(3)?;
    /// v.extend_from_slice(&[0.0, 4.0, 8.0]);
    /// assert_eq!(v.sample_std_dev(), Some(4.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn sample_std_dev(&self) -> Option<F> {
        self.inner.read(Stat::SAMPLE_STD_DEV)
    }

    /// Pushes every value of `xs` in order and returns the mean after each
    /// push, NaN where [`mean`](Self::mean) is `None`: pandas' `s.rolling(window, min_periods=1).mean()`,
    /// polars' `s.rolling_mean(window, min_samples=1)`. The window goes on from where it was and is left as the
    /// push loop leaves it, with the push loop's bits throughout (by
    /// [`MovingStats`](crate::MovingStats)' algorithm, correctly rounded).
    ///
    /// ```
    /// let mut v = momenta::MovingVariance::new(2)?;
    /// assert_eq!(v.mean_series(&[2.0, 4.0, 8.0]), [2.0, 3.0, 6.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use = "the series is the result; use `extend_from_slice` to only push"]
    pub fn mean_series(&mut self, xs: &[F]) -> Vec<F> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.series_to(xs, Stat::Mean, &mut out);
        out
    }

    /// [`mean_series`](Self::mean_series) into a caller's buffer, as
    /// long as `xs`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`; nothing is
    /// pushed then.
    ///
    /// ```
    /// let mut v = momenta::MovingVariance::<f64>::new(4)?;
    /// let mut out = [0.0; 2];
    /// v.mean_series_into(&[1.0, 3.0], &mut out)?;
    /// assert!(v.mean_series_into(&[1.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn mean_series_into(&mut self, xs: &[F], out: &mut [F]) -> Result<(), Error> {
        check_output("output", xs.len(), out.len())?;
        self.series_to(xs, Stat::Mean, out);
        Ok(())
    }

    /// Pushes every value of `xs` in order and returns the sample variance after each
    /// push, NaN where [`sample_variance`](Self::sample_variance) is `None`: pandas' `s.rolling(window, min_periods=1).var()`,
    /// polars' `s.rolling_var(window, min_samples=1)`. The window goes on from where it was and is left as the
    /// push loop leaves it, with the push loop's bits throughout (by
    /// [`MovingStats`](crate::MovingStats)' algorithm, correctly rounded).
    ///
    /// ```
    /// let mut v = momenta::MovingVariance::new(3)?;
    /// let var: Vec<f64> = v.sample_variance_series(&[1.0, 3.0, 5.0, 9.0]);
    /// assert!(var[0].is_nan()); // one value: no sample variance
    /// assert_eq!(var[1..], [2.0, 4.0, 28.0 / 3.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use = "the series is the result; use `extend_from_slice` to only push"]
    pub fn sample_variance_series(&mut self, xs: &[F]) -> Vec<F> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.series_to(xs, Stat::SAMPLE_VARIANCE, &mut out);
        out
    }

    /// [`sample_variance_series`](Self::sample_variance_series) into a caller's buffer, as
    /// long as `xs`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`; nothing is
    /// pushed then.
    ///
    /// ```
    /// let mut v = momenta::MovingVariance::<f64>::new(4)?;
    /// let mut out = [0.0; 2];
    /// v.sample_variance_series_into(&[1.0, 3.0], &mut out)?;
    /// assert!(v.sample_variance_series_into(&[1.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn sample_variance_series_into(&mut self, xs: &[F], out: &mut [F]) -> Result<(), Error> {
        check_output("output", xs.len(), out.len())?;
        self.series_to(xs, Stat::SAMPLE_VARIANCE, out);
        Ok(())
    }

    /// Pushes every value of `xs` in order and returns the population variance after each
    /// push, NaN where [`population_variance`](Self::population_variance) is `None`: pandas' `s.rolling(window, min_periods=1).var(ddof=0)`,
    /// polars' `s.rolling_var(window, min_samples=1, ddof=0)`. The window goes on from where it was and is left as the
    /// push loop leaves it, with the push loop's bits throughout (by
    /// [`MovingStats`](crate::MovingStats)' algorithm, correctly rounded).
    ///
    /// ```
    /// let mut v = momenta::MovingVariance::new(2)?;
    /// assert_eq!(v.population_variance_series(&[1.0, 3.0, 3.0]), [0.0, 1.0, 0.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use = "the series is the result; use `extend_from_slice` to only push"]
    pub fn population_variance_series(&mut self, xs: &[F]) -> Vec<F> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.series_to(xs, Stat::POPULATION_VARIANCE, &mut out);
        out
    }

    /// [`population_variance_series`](Self::population_variance_series) into a caller's buffer, as
    /// long as `xs`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`; nothing is
    /// pushed then.
    ///
    /// ```
    /// let mut v = momenta::MovingVariance::<f64>::new(4)?;
    /// let mut out = [0.0; 2];
    /// v.population_variance_series_into(&[1.0, 3.0], &mut out)?;
    /// assert!(v.population_variance_series_into(&[1.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn population_variance_series_into(
        &mut self,
        xs: &[F],
        out: &mut [F],
    ) -> Result<(), Error> {
        check_output("output", xs.len(), out.len())?;
        self.series_to(xs, Stat::POPULATION_VARIANCE, out);
        Ok(())
    }

    /// Pushes every value of `xs` in order and returns the sample standard deviation after each
    /// push, NaN where [`sample_std_dev`](Self::sample_std_dev) is `None`: pandas' `s.rolling(window, min_periods=1).std()`,
    /// polars' `s.rolling_std(window, min_samples=1)`. The window goes on from where it was and is left as the
    /// push loop leaves it, with the push loop's bits throughout (by
    /// [`MovingStats`](crate::MovingStats)' algorithm, correctly rounded).
    ///
    /// ```
    /// let mut v = momenta::MovingVariance::new(3)?;
    /// assert_eq!(v.sample_std_dev_series(&[0.0, 4.0, 8.0])[2], 4.0);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use = "the series is the result; use `extend_from_slice` to only push"]
    pub fn sample_std_dev_series(&mut self, xs: &[F]) -> Vec<F> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.series_to(xs, Stat::SAMPLE_STD_DEV, &mut out);
        out
    }

    /// [`sample_std_dev_series`](Self::sample_std_dev_series) into a caller's buffer, as
    /// long as `xs`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`; nothing is
    /// pushed then.
    ///
    /// ```
    /// let mut v = momenta::MovingVariance::<f64>::new(4)?;
    /// let mut out = [0.0; 2];
    /// v.sample_std_dev_series_into(&[1.0, 3.0], &mut out)?;
    /// assert!(v.sample_std_dev_series_into(&[1.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn sample_std_dev_series_into(&mut self, xs: &[F], out: &mut [F]) -> Result<(), Error> {
        check_output("output", xs.len(), out.len())?;
        self.series_to(xs, Stat::SAMPLE_STD_DEV, out);
        Ok(())
    }

    /// Pushes every value of `xs` in order and returns the population standard deviation after each
    /// push, NaN where [`population_std_dev`](Self::population_std_dev) is `None`: pandas' `s.rolling(window, min_periods=1).std(ddof=0)`,
    /// polars' `s.rolling_std(window, min_samples=1, ddof=0)`. The window goes on from where it was and is left as the
    /// push loop leaves it, with the push loop's bits throughout (by
    /// [`MovingStats`](crate::MovingStats)' algorithm, correctly rounded).
    ///
    /// ```
    /// let mut v = momenta::MovingVariance::new(2)?;
    /// assert_eq!(v.population_std_dev_series(&[1.0, 3.0]), [0.0, 1.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use = "the series is the result; use `extend_from_slice` to only push"]
    pub fn population_std_dev_series(&mut self, xs: &[F]) -> Vec<F> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.series_to(xs, Stat::POPULATION_STD_DEV, &mut out);
        out
    }

    /// [`population_std_dev_series`](Self::population_std_dev_series) into a caller's buffer, as
    /// long as `xs`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`; nothing is
    /// pushed then.
    ///
    /// ```
    /// let mut v = momenta::MovingVariance::<f64>::new(4)?;
    /// let mut out = [0.0; 2];
    /// v.population_std_dev_series_into(&[1.0, 3.0], &mut out)?;
    /// assert!(v.population_std_dev_series_into(&[1.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn population_std_dev_series_into(&mut self, xs: &[F], out: &mut [F]) -> Result<(), Error> {
        check_output("output", xs.len(), out.len())?;
        self.series_to(xs, Stat::POPULATION_STD_DEV, out);
        Ok(())
    }

    /// The series of `stat` into `out`, as long as `xs`: `MovingStats`'
    /// own (see `ExactWindow::series_along`).
    fn series_to(&mut self, xs: &[F], stat: Stat, out: &mut [F]) {
        self.inner.series_along(&mut (), xs, out, stat);
    }

    /// How unusual `x` is against the window as it stands, without
    /// pushing it: (x − mean)/s with s the
    /// [sample standard deviation](Self::sample_std_dev). Call it before
    /// pushing `x`: pandas' `(x - r.mean().shift()) / r.std().shift()` for
    /// `r = s.rolling(window)`.
    ///
    /// `None` until the window is [ready](Self::is_ready), below two values
    /// (pandas' NaN), and while s is 0 (a flat window, where pandas divides
    /// by 0 into ±∞ or NaN). `Some(NaN)` while a NaN or an infinity counts
    /// in the window, or when `x` is NaN.
    ///
    /// ```
    /// let mut v = momenta::MovingVariance::new(4)?;
    /// v.extend_from_slice(&[9.0, 11.0, 9.0, 11.0]); // mean 10, s² = 4/3
    /// let z = v.z_score(14.0).unwrap();
    /// assert!((z - 4.0 / (4.0_f64 / 3.0).sqrt()).abs() < 1e-15);
    /// v.extend_from_slice(&[5.0; 4]);
    /// assert_eq!(v.z_score(6.0), None); // a flat window has no spread
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn z_score(&self, x: F) -> Option<F> {
        crate::float::z_score(x, self.mean()?, self.sample_std_dev()?)
    }

    /// The number of values in the window: `min(n, window)` after `n`
    /// pushes.
    ///
    /// ```
    /// let mut v = momenta::MovingVariance::new(2)?;
    /// v.extend_from_slice(&[1.0, 2.0, 3.0]);
    /// assert_eq!(v.len(), 2);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether the window holds no value.
    ///
    /// ```
    /// assert!(momenta::MovingVariance::<f64>::new(2)?.is_empty());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.inner.len() == 0
    }

    /// The window length given to [`new`](Self::new).
    ///
    /// ```
    /// assert_eq!(momenta::MovingVariance::<f32>::new(3)?.window(), 3);
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
    /// let mut v = momenta::MovingVariance::new(1)?;
    /// assert!(!v.is_full());
    /// v.push(2.0);
    /// assert!(v.is_full());
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
    /// let mut v = momenta::MovingVariance::new(3)?;
    /// v.extend_from_slice(&[1.0, 2.0]);
    /// v.reset();
    /// assert_eq!(v.population_variance(), None);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn reset(&mut self) {
        self.inner.reset();
    }

    /// The values in the window, oldest first.
    ///
    /// ```
    /// let mut v = momenta::MovingVariance::new(2)?;
    /// v.extend_from_slice(&[1.0, 2.0, 3.0]);
    /// assert!(v.iter().eq([2.0, 3.0]));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = F> + '_ {
        self.inner.iter()
    }

    /// The values in the window as two slices, oldest first (the second may
    /// be empty), without copying.
    ///
    /// ```
    /// let mut v = momenta::MovingVariance::new(2)?;
    /// v.extend_from_slice(&[1.0, 2.0, 3.0]);
    /// let (a, b) = v.as_slices();
    /// assert_eq!([a, b].concat(), [2.0, 3.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn as_slices(&self) -> (&[F], &[F]) {
        self.inner.as_slices()
    }
}

impl<F: Float> PartialEq for MovingVariance<F> {
    /// Equal when the window lengths are equal and the windows hold the
    /// same values in the same order (so, like `f64`, a window holding a
    /// NaN is not equal to itself).
    ///
    /// ```
    /// use momenta::MovingVariance;
    /// let mut a = MovingVariance::new(2)?;
    /// let mut b = MovingVariance::new(2)?;
    /// a.extend_from_slice(&[5.0, 1.0, 2.0]);
    /// b.extend_from_slice(&[1.0, 2.0]);
    /// assert_eq!(a, b);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    fn eq(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
}

impl_accumulator!(MovingVariance);

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn auto_traits() {
        assert_send_sync::<MovingVariance<f32>>();
        assert_send_sync::<MovingVariance<f64>>();
    }

    #[test]
    fn exact_on_small_integers_through_fill_and_slide() {
        // Window 3 over 2, 4, 4, 4, 5, 5, 7, 9.
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        let mut v = MovingVariance::<f64>::new(3).unwrap();
        let mut seen = alloc::vec::Vec::new();
        for x in xs {
            v.push(x);
            seen.push(x);
            let w = &seen[seen.len().saturating_sub(3)..];
            let n = w.len() as f64;
            let mean = w.iter().sum::<f64>() / n;
            let m2: f64 = w.iter().map(|x| (x - mean) * (x - mean)).sum();
            assert!((v.mean().unwrap() - mean).abs() <= 1e-15 * mean);
            let pop = v.population_variance().unwrap();
            assert!((pop - m2 / n).abs() <= 1e-14, "{pop} vs {}", m2 / n);
        }
    }

    #[test]
    fn one_value_has_zero_population_variance_and_no_sample_variance() {
        let mut v = MovingVariance::<f64>::new(1).unwrap();
        for x in [0.1, 1e6 + 0.3, -2.7] {
            v.push(x);
            assert_eq!(v.mean(), Some(x));
            assert_eq!(v.population_variance(), Some(0.0));
            assert_eq!(v.sample_variance(), None);
        }
    }

    #[test]
    fn never_negative_on_constant_data_after_big_values() {
        let mut v = MovingVariance::<f64>::new(3).unwrap();
        v.extend_from_slice(&[1e10, -1e10, 3.0]);
        for _ in 0..10 {
            v.push(0.1);
            assert!(v.population_variance().unwrap() >= 0.0);
        }
        assert_eq!(v.population_variance(), Some(0.0));
    }
}
