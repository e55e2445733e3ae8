//! The exponentially weighted mean and variance.

use alloc::vec::Vec;

use super::shifted::{SPREAD_EVERY, Shifted};
#[cfg(feature = "serde")]
use super::weighting::WeightsState;
use super::weighting::{Elapsed, Step, Weighting};
use crate::NanPolicy;
use crate::accumulator::impl_accumulator;
use crate::float::clamp_non_negative;
use crate::series::{check_output, each, each_at};
use crate::{Error, Float, Momentum};

/// Exponentially weighted mean and variance, in O(1) time and memory:
/// an [`Ema`](crate::Ema) with a ±σ band.
///
/// Each push is Tony Finch's incremental update ("Incremental calculation
/// of weighted mean and variance", 2009). With α the weight of the new
/// value at this update ([`Momentum::factor`]) and 1 − α the weight of the
/// old ([`Momentum::decay`]):
///
/// ```text
/// diff = x − mean
/// mean ← momentum.blend(mean, x)        // = mean + α·diff
/// var  ← (1 − α)·(var + diff·(α·diff))
/// ```
///
/// The mean is updated by the same [`Momentum::blend`] as [`Ema`](crate::Ema),
/// so both follow one formula. The average is seeded by the first value
/// (mean = x, variance = 0), like [`Ema::new`](crate::Ema::new). The
/// variance is the weighted population variance Σ wᵢ(xᵢ − mean)² under the
/// average's weights (which sum to 1); with `Cumulative` it is the plain
/// population variance Σ(xᵢ − x̄)²/n.
///
/// Unlike the textbook `E[x²] − E[x]²`, the update never subtracts two large
/// numbers, and the variance can not turn negative. As in
/// [`Variance`](crate::Variance), the state keeps a shift taken from the
/// data (the first value) and works on deviations from it, so data such as
/// `1e6 + noise` keeps its digits. Unlike a cumulative variance, an
/// exponential one forgets: when the mean moves away from the shift (an
/// outlier first, or a level that changes by orders of magnitude), the
/// shift is moved onto the running mean, exactly (the new shift is the
/// rounded mean, the offset keeps the rounding error, the variance is
/// untouched). The shift then stays within |mean| + |last step| of the
/// mean, so a push loses no more digits than the plain recursion
/// `mean ← (1 − α)·mean + α·x` that pandas uses (within a small factor of
/// rounding noise, in any order of the data), and, tested every eighth
/// value, within 4σ of it, so that data far from 0 after an outlier (or a
/// leading 0) keep the shift's accuracy rather than pandas'. On data
/// around one level the shift stays put.
///
/// A weight of 1 for the new value (`Factor(1)`, `Decay(0)`) keeps only
/// the last value, so each push seeds the state afresh: mean `x`, variance
/// 0, even after a NaN or ±∞.
///
/// pandas' options, as on [`Ema`](crate::Ema): [`EwVariance::new`] is
/// `ewm(adjust=False)` and [`EwVariance::adjusted`] `ewm(adjust=True)`;
/// [`variance`](EwVariance::variance) is `.var(bias=True)` and
/// [`unbiased_variance`](EwVariance::unbiased_variance) `.var(bias=False)`
/// (pandas' default `.var()`), [`std_dev`](EwVariance::std_dev)
/// `.std(bias=True)` and [`unbiased_std_dev`](EwVariance::unbiased_std_dev)
/// `.std()`; [`Momentum::from_com`], [`Momentum::from_span`] and
/// [`Momentum::from_half_life`] take pandas' `com`, `span` and `halflife`;
/// a clock ([`push_at`](EwVariance::push_at),
/// [`push_after`](EwVariance::push_after)) for irregular time, a
/// [`NanPolicy`] for missing values (pandas' `ignore_na`) and
/// [`with_min_periods`](EwVariance::with_min_periods). Every weighting goes
/// through the same Finch update above, with the weights `(α, 1 − α)` that
/// the weighting gives each push.
///
/// Empty → every statistic is `None`; one value → variance 0. NaN and ±∞
/// propagate by default (until a weight of 1 for the new value replaces
/// them).
///
/// **Checkpoints** (feature `serde`): serialized losslessly in any
/// format, and restored to a state that goes on bit for bit; see
/// [Checkpoints](crate#checkpoints).
///
/// # Example
///
/// ```
/// use momenta::{EwVariance, Momentum};
///
/// let mut ew = EwVariance::new(Momentum::Factor(0.5))?;
/// for x in [2.0, 4.0, 8.0] {
///     ew.push(x);
/// }
/// // mean: 2 → 3 → 5.5; variance: 0 → 0.5·(0 + 2·1) = 1 → 0.5·(1 + 5·2.5) = 6.75
/// assert_eq!(ew.mean(), Some(5.5));
/// assert_eq!(ew.variance(), Some(6.75));
///
/// // Cumulative: the plain population variance.
/// let mut all = EwVariance::new(Momentum::Cumulative)?;
/// all.extend_from_slice(&[1.0, 3.0]);
/// assert_eq!(all.variance(), Some(1.0));
///
/// // An outlier first: the shift follows the mean down, so the data after
/// // it keeps its digits (a shift left at 1e12 would round every deviation
/// // to a multiple of 1.2e-4).
/// let mut ew = EwVariance::new(Momentum::Factor(0.5))?;
/// ew.push(1e12_f64);
/// for _ in 0..100 {
///     ew.push(0.1);
///     ew.push(0.3);
/// }
/// // The mean settles at 0.2 ± 0.1/3, the variance at (8/9)·0.1².
/// assert!((ew.mean().unwrap() - 0.7_f64 / 3.0).abs() < 1e-15);
/// assert!((ew.variance().unwrap() / (0.08 / 9.0) - 1.0).abs() < 1e-12);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(into = "EwVarianceState<F>", bound = "F: Float")
)]
pub struct EwVariance<F> {
    /// The momentum, the options and the count.
    weights: Weighting<F>,
    /// The mean, around a shift near it.
    mean: Shifted<F>,
    var: F,
}

#[cfg(feature = "serde")]
crate::checkpoint::path::restore_from!([F: Float] EwVariance<F>, EwVarianceState<F>);

impl<F: Float> EwVariance<F> {
    /// An empty accumulator, seeded by the first value pushed, with pandas'
    /// `adjust=False` weighting.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `momentum` when the momentum's parameter is outside `[0, 1]`
    /// or NaN.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let ew = EwVariance::<f64>::new(Momentum::Decay(0.9))?;
    /// assert_eq!(ew.mean(), None);
    /// assert!(EwVariance::<f64>::new(Momentum::Decay(-0.1)).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn new(momentum: Momentum<F>) -> Result<Self, Error> {
        Ok(Self {
            weights: Weighting::new(momentum, false, false)?,
            mean: Shifted::default(),
            var: F::zero(),
        })
    }

    /// An empty accumulator with pandas' `adjust=True` weighting: after
    /// x₁ … xₙ the mean is Σ wᵢxᵢ / Σ wᵢ and the variance
    /// Σ wᵢ(xᵢ − mean)² / Σ wᵢ, with wᵢ = βⁿ⁻ⁱ (β the momentum's weight of
    /// the old value): `ewm(alpha=α).mean()` and `.var(bias=True)`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `momentum` when the momentum's parameter is outside `[0, 1]`
    /// or NaN.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// // Weights 1/2 and 1: mean (1 + 2·4)/3 = 3, variance (4 + 2·1)/3 = 2;
    /// // pandas' bias=False factor (Σw)²/((Σw)² − Σw²) = 2.25/1 → 4.5.
    /// let mut ew = EwVariance::adjusted(Momentum::Factor(0.5))?;
    /// ew.push(1.0);
    /// ew.push(4.0);
    /// assert_eq!((ew.mean(), ew.variance()), (Some(3.0), Some(2.0)));
    /// assert_eq!(ew.unbiased_variance(), Some(4.5));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn adjusted(momentum: Momentum<F>) -> Result<Self, Error> {
        Ok(Self {
            weights: Weighting::new(momentum, true, false)?,
            ..Self::new(momentum)?
        })
    }

    /// Sets what a NaN value does (default [`NanPolicy::Propagate`]).
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum, NanPolicy};
    /// let mut ew = EwVariance::new(Momentum::Factor(0.5))?.with_nan_policy(NanPolicy::Skip);
    /// ew.extend_from_slice(&[1.0, f64::NAN, 3.0]);
    /// assert_eq!((ew.mean(), ew.variance(), ew.count()), (Some(2.0), Some(1.0), 2));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn with_nan_policy(mut self, policy: NanPolicy) -> Self {
        self.weights.set_nan(policy);
        self
    }

    /// Keeps every statistic `None` until at least `n` values are in
    /// (pandas' `min_periods`; values skipped by the [`NanPolicy`] do not
    /// count).
    ///
    /// `n` is a `usize` as on every window (it was a `u64`), and any count
    /// can be reached, so this cannot fail and returns `Self`; the count
    /// windows' `with_min_periods` returns a `Result` because theirs must
    /// not exceed the window.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut ew = EwVariance::new(Momentum::Factor(0.5))?.with_min_periods(3);
    /// ew.extend_from_slice(&[1.0, 3.0]);
    /// assert_eq!((ew.mean(), ew.is_ready()), (None, false));
    /// ew.push(2.0);
    /// assert_eq!((ew.mean(), ew.is_ready()), (Some(2.0), true));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn with_min_periods(mut self, n: usize) -> Self {
        self.weights.min_periods = u64::try_from(n).unwrap_or(u64::MAX);
        self
    }

    /// Whether a value is in and at least
    /// [`min_periods`](EwVariance::with_min_periods) of them.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut ew = EwVariance::new(Momentum::Factor(0.5))?;
    /// assert!(!ew.is_ready());
    /// ew.push(1.0);
    /// assert!(ew.is_ready());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_ready(&self) -> bool {
        self.weights.ready()
    }

    /// The [`NanPolicy`] in force.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum, NanPolicy};
    /// let ew = EwVariance::<f64>::new(Momentum::Factor(0.5))?.with_nan_policy(NanPolicy::Gap);
    /// assert_eq!(ew.nan_policy(), NanPolicy::Gap);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn nan_policy(&self) -> NanPolicy {
        self.weights.nan
    }

    /// Whether the weighting is pandas' `adjust=True`
    /// ([`EwVariance::adjusted`]).
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// assert!(EwVariance::<f64>::adjusted(Momentum::Decay(0.9))?.is_adjusted());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_adjusted(&self) -> bool {
        self.weights.adjusted
    }

    /// Adds one value.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut ew = EwVariance::new(Momentum::Decay(0.75))?;
    /// ew.push(0.0);
    /// ew.push(4.0);
    /// // mean 0.75·0 + 0.25·4 = 1; variance 0.75·(0 + 4·1) = 3
    /// assert_eq!((ew.mean(), ew.variance()), (Some(1.0), Some(3.0)));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[inline]
    pub fn push(&mut self, x: F) {
        self.update(x, Elapsed::Sample);
    }

    /// Adds a value observed `dt` time units after the previous one: the
    /// past decays by 2^(−`dt`/h) for a half-life `h`, by β^`dt` for a
    /// `Decay` or `Factor` momentum, as in
    /// [`Ema::push_after`](crate::Ema::push_after) (whose documentation
    /// gives the weights of each weighting). `dt = 1` is exactly
    /// [`push`](EwVariance::push). `dt` is an `f64` whatever `F` is.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `elapsed time` when `dt` is negative or NaN (+∞ is allowed: it
    /// forgets the past, and moves a clock set by `push_at` to +∞, after
    /// which `push_at` fails until a reset). An error changes nothing.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut ew = EwVariance::new(Momentum::from_half_life(10.0)?)?;
    /// ew.push_after(0.0, 1.0)?;
    /// ew.push_after(10.0, 3.0)?; // one half-life: weights 1/2 and 1/2
    /// assert!((ew.mean().unwrap() - 2.0_f64).abs() < 1e-15);
    /// assert!((ew.variance().unwrap() - 1.0_f64).abs() < 1e-15);
    /// assert!(ew.push_after(f64::NAN, 3.0).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[inline]
    pub fn push_after(&mut self, dt: f64, x: F) -> Result<(), Error> {
        let elapsed = self.weights.after(dt)?;
        self.update(x, elapsed);
        Ok(())
    }

    /// Adds a value observed at time `t`, in the caller's unit: as
    /// [`push_after`](EwVariance::push_after) with the time since the
    /// previous `push_at` (the first only sets the clock).
    /// [`push`](EwVariance::push) does not move the clock. `t` is an `f64`
    /// whatever `F` is, as in [`Ema::push_at`](crate::Ema::push_at).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `time` when `t` is NaN, ±∞ or before the previous time. An
    /// error changes nothing.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// // Readings at irregular seconds, half-life 30 s.
    /// let mut ew = EwVariance::new(Momentum::from_half_life(30.0)?)?;
    /// for (t, x) in [(0.0, 20.0), (1.5, 20.5), (2.0, 20.25), (95.0, 23.0)] {
    ///     ew.push_at(t, x)?;
    /// }
    /// // 93 s later the old readings keep 2^(−93/30) ≈ 12 % of the weight.
    /// assert!((ew.mean().unwrap() - 22.7_f64).abs() < 0.1);
    /// assert!(ew.push_at(90.0, 21.0).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[inline]
    pub fn push_at(&mut self, t: f64, x: F) -> Result<(), Error> {
        let elapsed = self.weights.at(t)?;
        self.update(x, elapsed);
        Ok(())
    }

    // Always: with the clock's and the gaps' branches the body is past
    // the inliner's threshold, and a call per push keeps the state in
    // memory (2.7 to 3.9 times the time of `push`); inlined, `push`'s
    // constant `Elapsed::Sample` removes those branches.
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "measured: see the comment")]
    fn update(&mut self, x: F, elapsed: Elapsed) {
        // Every eighth value, the shift against the spread, on the state
        // the previous push left (`Shifted::is_far`).
        if self.weights.count.is_multiple_of(SPREAD_EVERY) && self.mean.is_far(self.var) {
            self.mean = self.mean.rebased();
        }
        match self.weights.step(x.is_nan(), elapsed) {
            Step::Skip => {}
            // The first value, or a weight of 1 for the new value
            // (`Factor(1)`, `Decay(0)`, an infinite time step): nothing of
            // the old state is left, so the value seeds the state afresh,
            // even after NaN or ±∞.
            Step::Seed => {
                self.mean = Shifted::seed(x);
                self.var = F::zero();
            }
            Step::Blend(alpha, beta) => {
                self.weights.track_squares(alpha, beta);
                let (diff, incr) = self.mean.blend(x, alpha, beta);
                self.var = beta * (self.var + diff * incr);
            }
        }
    }

    /// Adds every value of `xs`, in order.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut ew = EwVariance::new(Momentum::Cumulative)?;
    /// ew.extend_from_slice(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
    /// assert_eq!(ew.mean(), Some(5.0));
    /// assert!((ew.variance().unwrap() - 4.0_f64).abs() < 1e-14);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn extend_from_slice(&mut self, xs: &[F]) {
        for &x in xs {
            self.push(x);
        }
    }

    /// Pushes every value of `xs` in order and returns the mean after each
    /// push, NaN where [`mean`](Self::mean) is `None`: pandas' `s.ewm(alpha=α, adjust=False).mean()` for `Momentum::Factor(α)`
    /// (`adjust=True` for [`adjusted`](Self::adjusted)), polars'
    /// `s.ewm_mean(alpha=α, adjust=False)`.
    /// The statistic goes on from where it was and is left as the push
    /// loop leaves it, every value the push loop's bit for bit (it is the
    /// push loop, writing into one vector).
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut e = EwVariance::new(Momentum::Factor(0.5))?;
    /// assert_eq!(e.mean_series(&[4.0, 8.0, 0.0]), [4.0, 6.0, 3.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use = "the series is the result; use `extend_from_slice` to only push"]
    pub fn mean_series(&mut self, xs: &[F]) -> Vec<F> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        each(self, xs, &mut out, Self::push, Self::mean);
        out
    }

    /// [`mean_series`](Self::mean_series) into a caller's buffer, as long
    /// as `xs`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`; nothing is
    /// pushed then.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut e = EwVariance::new(Momentum::Factor(0.5))?;
    /// let mut out = [0.0; 2];
    /// e.mean_series_into(&[1.0, 2.0], &mut out)?;
    /// assert!(e.mean_series_into(&[1.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn mean_series_into(&mut self, xs: &[F], out: &mut [F]) -> Result<(), Error> {
        check_output("output", xs.len(), out.len())?;
        each(self, xs, out, Self::push, Self::mean);
        Ok(())
    }

    /// Every `*_series_at_into`: [`each_at`] with this statistic's clock.
    fn series_at_into(
        &mut self,
        times: &[f64],
        xs: &[F],
        out: &mut [F],
        read: fn(&Self) -> Option<F>,
    ) -> Result<(), Error> {
        each_at(
            self,
            self.weights.clock,
            "at or after the time of the previous push",
            (times, xs, out),
            Self::push_at,
            read,
        )
    }

    /// [`push_at`](Self::push_at) every `(times[i], xs[i])` in order and
    /// returns the mean after each push, NaN where [`mean`](Self::mean)
    /// is `None`: the series of a clock's samples (pandas' `times=`,
    /// polars' `*_by`). The times are checked first, so a bad one changes
    /// nothing.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `times`) when `times` is not as long as `xs`;
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// (naming `time`) when a time is NaN, infinite or earlier than the
    /// one before it, as [`push_at`](Self::push_at) says. Nothing is
    /// pushed then.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut e = EwVariance::new(Momentum::from_half_life(1.0)?)?;
    /// let s = e.mean_series_at(&[0.0, 1.0], &[4.0, 8.0])?;
    /// assert_eq!(s[1], 6.0);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn mean_series_at(&mut self, times: &[f64], xs: &[F]) -> Result<Vec<F>, Error> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.mean_series_at_into(times, xs, &mut out)?;
        Ok(out)
    }

    /// [`mean_series_at`](Self::mean_series_at) into a caller's buffer,
    /// as long as `xs`.
    ///
    /// # Errors
    ///
    /// As [`mean_series_at`](Self::mean_series_at), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut e = EwVariance::new(Momentum::Factor(0.5))?;
    /// let mut out = [0.0; 2];
    /// e.mean_series_at_into(&[0.0, 1.5], &[1.0, 2.0], &mut out)?;
    /// assert!(e.mean_series_at_into(&[1.0, 0.5], &[1.0, 2.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn mean_series_at_into(
        &mut self,
        times: &[f64],
        xs: &[F],
        out: &mut [F],
    ) -> Result<(), Error> {
        self.series_at_into(times, xs, out, Self::mean)
    }
    /// Pushes every value of `xs` in order and returns the biased variance after each
    /// push, NaN where [`variance`](Self::variance) is `None`: pandas' `s.ewm(alpha=α, adjust=False).var(bias=True)`, polars'
    /// `s.ewm_var(alpha=α, adjust=False, bias=True)`.
    /// The statistic goes on from where it was and is left as the push
    /// loop leaves it, every value the push loop's bit for bit (it is the
    /// push loop, writing into one vector).
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut e = EwVariance::new(Momentum::Factor(0.5))?;
    /// assert_eq!(e.variance_series(&[4.0, 8.0, 0.0]), [0.0, 4.0, 11.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use = "the series is the result; use `extend_from_slice` to only push"]
    pub fn variance_series(&mut self, xs: &[F]) -> Vec<F> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        each(self, xs, &mut out, Self::push, Self::variance);
        out
    }

    /// [`variance_series`](Self::variance_series) into a caller's buffer, as long
    /// as `xs`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`; nothing is
    /// pushed then.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut e = EwVariance::new(Momentum::Factor(0.5))?;
    /// let mut out = [0.0; 2];
    /// e.variance_series_into(&[1.0, 2.0], &mut out)?;
    /// assert!(e.variance_series_into(&[1.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn variance_series_into(&mut self, xs: &[F], out: &mut [F]) -> Result<(), Error> {
        check_output("output", xs.len(), out.len())?;
        each(self, xs, out, Self::push, Self::variance);
        Ok(())
    }

    /// [`push_at`](Self::push_at) every `(times[i], xs[i])` in order and
    /// returns the biased variance after each push, NaN where [`variance`](Self::variance)
    /// is `None`: the series of a clock's samples (pandas' `times=`,
    /// polars' `*_by`). The times are checked first, so a bad one changes
    /// nothing.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `times`) when `times` is not as long as `xs`;
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// (naming `time`) when a time is NaN, infinite or earlier than the
    /// one before it, as [`push_at`](Self::push_at) says. Nothing is
    /// pushed then.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut e = EwVariance::new(Momentum::from_half_life(1.0)?)?;
    /// let s = e.variance_series_at(&[0.0, 1.0], &[4.0, 8.0])?;
    /// assert_eq!(s[1], 4.0);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn variance_series_at(&mut self, times: &[f64], xs: &[F]) -> Result<Vec<F>, Error> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.variance_series_at_into(times, xs, &mut out)?;
        Ok(out)
    }

    /// [`variance_series_at`](Self::variance_series_at) into a caller's buffer,
    /// as long as `xs`.
    ///
    /// # Errors
    ///
    /// As [`variance_series_at`](Self::variance_series_at), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut e = EwVariance::new(Momentum::Factor(0.5))?;
    /// let mut out = [0.0; 2];
    /// e.variance_series_at_into(&[0.0, 1.5], &[1.0, 2.0], &mut out)?;
    /// assert!(e.variance_series_at_into(&[1.0, 0.5], &[1.0, 2.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn variance_series_at_into(
        &mut self,
        times: &[f64],
        xs: &[F],
        out: &mut [F],
    ) -> Result<(), Error> {
        self.series_at_into(times, xs, out, Self::variance)
    }
    /// Pushes every value of `xs` in order and returns the unbiased variance after each
    /// push, NaN where [`unbiased_variance`](Self::unbiased_variance) is `None`: pandas' `s.ewm(alpha=α, adjust=False).var()` (`bias=False`, its
    /// default), polars' `s.ewm_var(alpha=α, adjust=False)`.
    /// The statistic goes on from where it was and is left as the push
    /// loop leaves it, every value the push loop's bit for bit (it is the
    /// push loop, writing into one vector).
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut e = EwVariance::new(Momentum::Factor(0.5))?;
    /// let v: Vec<f64> = e.unbiased_variance_series(&[4.0, 8.0, 0.0]);
    /// assert!(v[0].is_nan()); // one value: no unbiased variance
    /// assert_eq!(v[1..], [8.0, 17.6]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use = "the series is the result; use `extend_from_slice` to only push"]
    pub fn unbiased_variance_series(&mut self, xs: &[F]) -> Vec<F> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        each(self, xs, &mut out, Self::push, Self::unbiased_variance);
        out
    }

    /// [`unbiased_variance_series`](Self::unbiased_variance_series) into a caller's buffer, as long
    /// as `xs`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`; nothing is
    /// pushed then.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut e = EwVariance::new(Momentum::Factor(0.5))?;
    /// let mut out = [0.0; 2];
    /// e.unbiased_variance_series_into(&[1.0, 2.0], &mut out)?;
    /// assert!(e.unbiased_variance_series_into(&[1.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn unbiased_variance_series_into(&mut self, xs: &[F], out: &mut [F]) -> Result<(), Error> {
        check_output("output", xs.len(), out.len())?;
        each(self, xs, out, Self::push, Self::unbiased_variance);
        Ok(())
    }

    /// [`push_at`](Self::push_at) every `(times[i], xs[i])` in order and
    /// returns the unbiased variance after each push, NaN where [`unbiased_variance`](Self::unbiased_variance)
    /// is `None`: the series of a clock's samples (pandas' `times=`,
    /// polars' `*_by`). The times are checked first, so a bad one changes
    /// nothing.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `times`) when `times` is not as long as `xs`;
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// (naming `time`) when a time is NaN, infinite or earlier than the
    /// one before it, as [`push_at`](Self::push_at) says. Nothing is
    /// pushed then.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut e = EwVariance::new(Momentum::from_half_life(1.0)?)?;
    /// let s = e.unbiased_variance_series_at(&[0.0, 1.0], &[4.0, 8.0])?;
    /// assert_eq!(s[1], 8.0);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn unbiased_variance_series_at(
        &mut self,
        times: &[f64],
        xs: &[F],
    ) -> Result<Vec<F>, Error> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.unbiased_variance_series_at_into(times, xs, &mut out)?;
        Ok(out)
    }

    /// [`unbiased_variance_series_at`](Self::unbiased_variance_series_at) into a caller's buffer,
    /// as long as `xs`.
    ///
    /// # Errors
    ///
    /// As [`unbiased_variance_series_at`](Self::unbiased_variance_series_at), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut e = EwVariance::new(Momentum::Factor(0.5))?;
    /// let mut out = [0.0; 2];
    /// e.unbiased_variance_series_at_into(&[0.0, 1.5], &[1.0, 2.0], &mut out)?;
    /// assert!(e.unbiased_variance_series_at_into(&[1.0, 0.5], &[1.0, 2.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn unbiased_variance_series_at_into(
        &mut self,
        times: &[f64],
        xs: &[F],
        out: &mut [F],
    ) -> Result<(), Error> {
        self.series_at_into(times, xs, out, Self::unbiased_variance)
    }
    /// Pushes every value of `xs` in order and returns the biased standard deviation after each
    /// push, NaN where [`std_dev`](Self::std_dev) is `None`: pandas' `s.ewm(alpha=α, adjust=False).std(bias=True)`, polars'
    /// `s.ewm_std(alpha=α, adjust=False, bias=True)`.
    /// The statistic goes on from where it was and is left as the push
    /// loop leaves it, every value the push loop's bit for bit (it is the
    /// push loop, writing into one vector).
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut e = EwVariance::new(Momentum::Factor(0.5))?;
    /// assert_eq!(e.std_dev_series(&[4.0, 8.0]), [0.0, 2.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use = "the series is the result; use `extend_from_slice` to only push"]
    pub fn std_dev_series(&mut self, xs: &[F]) -> Vec<F> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        each(self, xs, &mut out, Self::push, Self::std_dev);
        out
    }

    /// [`std_dev_series`](Self::std_dev_series) into a caller's buffer, as long
    /// as `xs`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`; nothing is
    /// pushed then.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut e = EwVariance::new(Momentum::Factor(0.5))?;
    /// let mut out = [0.0; 2];
    /// e.std_dev_series_into(&[1.0, 2.0], &mut out)?;
    /// assert!(e.std_dev_series_into(&[1.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn std_dev_series_into(&mut self, xs: &[F], out: &mut [F]) -> Result<(), Error> {
        check_output("output", xs.len(), out.len())?;
        each(self, xs, out, Self::push, Self::std_dev);
        Ok(())
    }

    /// [`push_at`](Self::push_at) every `(times[i], xs[i])` in order and
    /// returns the biased standard deviation after each push, NaN where [`std_dev`](Self::std_dev)
    /// is `None`: the series of a clock's samples (pandas' `times=`,
    /// polars' `*_by`). The times are checked first, so a bad one changes
    /// nothing.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `times`) when `times` is not as long as `xs`;
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// (naming `time`) when a time is NaN, infinite or earlier than the
    /// one before it, as [`push_at`](Self::push_at) says. Nothing is
    /// pushed then.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut e = EwVariance::new(Momentum::from_half_life(1.0)?)?;
    /// let s = e.std_dev_series_at(&[0.0, 1.0], &[4.0, 8.0])?;
    /// assert_eq!(s[1], 2.0);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn std_dev_series_at(&mut self, times: &[f64], xs: &[F]) -> Result<Vec<F>, Error> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.std_dev_series_at_into(times, xs, &mut out)?;
        Ok(out)
    }

    /// [`std_dev_series_at`](Self::std_dev_series_at) into a caller's buffer,
    /// as long as `xs`.
    ///
    /// # Errors
    ///
    /// As [`std_dev_series_at`](Self::std_dev_series_at), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut e = EwVariance::new(Momentum::Factor(0.5))?;
    /// let mut out = [0.0; 2];
    /// e.std_dev_series_at_into(&[0.0, 1.5], &[1.0, 2.0], &mut out)?;
    /// assert!(e.std_dev_series_at_into(&[1.0, 0.5], &[1.0, 2.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn std_dev_series_at_into(
        &mut self,
        times: &[f64],
        xs: &[F],
        out: &mut [F],
    ) -> Result<(), Error> {
        self.series_at_into(times, xs, out, Self::std_dev)
    }

    /// The number of values pushed (NaN values skipped by the
    /// [`NanPolicy`] do not count).
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut ew = EwVariance::new(Momentum::Factor(0.1))?;
    /// ew.extend_from_slice(&[1.0, 2.0, 3.0]);
    /// assert_eq!(ew.count(), 3);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn count(&self) -> u64 {
        self.weights.count
    }

    /// Kish's effective number of values, (Σw)²/Σw²: `n` for `Cumulative`,
    /// about (2 − α)/α once an exponential average has warmed up, and close
    /// to 1 right after a gap on a clock that left the past almost no
    /// weight. `None` when not [ready](EwVariance::is_ready).
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut ew = EwVariance::new(Momentum::from_half_life(1.0)?)?;
    /// for t in 0..100 {
    ///     ew.push_at(f64::from(t), 1.0)?;
    /// }
    /// assert!((ew.effective_count().unwrap() - 3.0_f64).abs() < 1e-12); // (2 − ½)/½
    /// ew.push_at(200.0, 1.0)?; // 100 half-lives later
    /// assert_eq!(ew.effective_count(), Some(1.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn effective_count(&self) -> Option<F> {
        self.weights.effective_count()
    }

    /// The momentum the accumulator was made with.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let ew = EwVariance::<f64>::new(Momentum::Factor(0.1))?;
    /// assert_eq!(ew.momentum(), Momentum::Factor(0.1));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn momentum(&self) -> Momentum<F> {
        self.weights.momentum
    }

    /// The exponentially weighted mean, or `None` when empty (or not
    /// [ready](EwVariance::is_ready)).
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut ew = EwVariance::new(Momentum::Factor(0.5))?;
    /// assert_eq!(ew.mean(), None);
    /// ew.extend_from_slice(&[1.0, 3.0]);
    /// assert_eq!(ew.mean(), Some(2.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn mean(&self) -> Option<F> {
        self.weights.ready().then(|| self.mean.mean())
    }

    /// The exponentially weighted (population) variance Σ w̃ᵢ(xᵢ − mean)²
    /// with normalised weights (pandas `.var(bias=True)`), or `None` when
    /// empty (or not [ready](EwVariance::is_ready)). Never negative; NaN
    /// passes through.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut ew = EwVariance::new(Momentum::Factor(0.5))?;
    /// ew.push(1.0);
    /// assert_eq!(ew.variance(), Some(0.0));
    /// ew.push(3.0); // 0.5·(0 + 2·1)
    /// assert_eq!(ew.variance(), Some(1.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn variance(&self) -> Option<F> {
        self.weights.ready().then(|| clamp_non_negative(self.var))
    }

    /// pandas' `.var(bias=False)`: the variance times (Σw)²/((Σw)² − Σw²),
    /// the reliability-weights correction. With `Cumulative` it is the
    /// sample variance (n/(n − 1)). `None` while one value carries all the
    /// weight (a single value, or the first after a gap that left the past
    /// no weight), and when not [ready](EwVariance::is_ready).
    ///
    /// The denominator 1 − Σw̃² (normalised weights) is kept by its own
    /// recurrence rather than formed from Σw̃², so it keeps its digits when
    /// it is tiny: after a gap of 48 half-lives one value carries all but
    /// 10⁻¹⁴ of the weight, and the correction is still right to the last
    /// digits (it was off by 10⁻⁵ to 10⁻³ there).
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut ew = EwVariance::new(Momentum::Factor(0.5))?;
    /// ew.push(1.0);
    /// assert_eq!(ew.unbiased_variance(), None);
    /// ew.push(3.0);
    /// // weights ½, ½: variance 1, Σw² = ½, factor 1/(1 − ½) = 2
    /// assert_eq!(ew.unbiased_variance(), Some(2.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn unbiased_variance(&self) -> Option<F> {
        let factor = self.weights.debias()?;
        Some(clamp_non_negative(self.var) * factor)
    }

    /// The exponentially weighted standard deviation √[variance](EwVariance::variance),
    /// the biased one: pandas' `.std(bias=True)`, or `None` when empty (or
    /// not [ready](EwVariance::is_ready)).
    ///
    /// pandas' default `ewm().std()` is `bias=False`:
    /// [`unbiased_std_dev`](EwVariance::unbiased_std_dev). This one is the
    /// width of the band the weights describe (the ±σ of a smoothed signal,
    /// 0 after one value).
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut ew = EwVariance::new(Momentum::Cumulative)?;
    /// ew.extend_from_slice(&[1.0, 5.0]);
    /// assert_eq!(ew.std_dev(), Some(2.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn std_dev(&self) -> Option<F> {
        self.variance().map(F::sqrt)
    }

    /// √[unbiased variance](EwVariance::unbiased_variance): pandas'
    /// `ewm().std()` (`bias=False`, its default). `None` while one value
    /// carries all the weight (pandas' NaN) and when not
    /// [ready](EwVariance::is_ready).
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// // pandas: pd.Series([1.0, 5.0]).expanding().std() is 2√2 at the end.
    /// let mut ew = EwVariance::new(Momentum::Cumulative)?;
    /// ew.push(1.0);
    /// assert_eq!(ew.unbiased_std_dev(), None);
    /// ew.push(5.0);
    /// assert_eq!(ew.unbiased_std_dev(), Some(8.0_f64.sqrt()));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn unbiased_std_dev(&self) -> Option<F> {
        self.unbiased_variance().map(F::sqrt)
    }

    /// How unusual `x` is: (x − mean)/σ with σ² the
    /// [unbiased variance](EwVariance::unbiased_variance). Call it before
    /// pushing `x`, to score a value against what came before it.
    ///
    /// The unbiased variance makes the score honest right after a start or
    /// a gap: while few values carry the weight it is large (or `None`), so
    /// a reading after a dropout is not flagged because the band collapsed
    /// onto the last value. `None` when not [ready](EwVariance::is_ready),
    /// while one value carries all the weight (pandas' NaN), and when the
    /// variance is 0 (where pandas divides by 0 into ±∞ or NaN);
    /// `Some(NaN)` when the variance is NaN (a NaN or an infinity pushed
    /// under [`NanPolicy::Propagate`]) or `x` is NaN.
    ///
    /// pandas: `(x - e.mean().shift()) / e.std().shift()` for
    /// `e = s.ewm(…)` (`std()` is `bias=False`).
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut ew = EwVariance::new(Momentum::Cumulative)?;
    /// ew.extend_from_slice(&[9.0, 11.0, 9.0, 11.0]); // mean 10, sample variance 4/3
    /// let z = ew.z_score(14.0).unwrap();
    /// assert!((z - 4.0 / (4.0_f64 / 3.0).sqrt()).abs() < 1e-15);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn z_score(&self, x: F) -> Option<F> {
        let sd = self.unbiased_std_dev()?;
        crate::float::z_score(x, self.mean.mean(), sd)
    }

    /// Forgets every value and the clock, keeping the momentum, the
    /// weighting and the options.
    ///
    /// ```
    /// use momenta::{EwVariance, Momentum};
    /// let mut ew = EwVariance::new(Momentum::Factor(0.5))?;
    /// ew.extend_from_slice(&[1.0, 3.0]);
    /// ew.reset();
    /// assert_eq!((ew.count(), ew.mean()), (0, None));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn reset(&mut self) {
        self.weights.reset(false);
        self.mean = Shifted::default();
        self.var = F::zero();
    }
}

impl_accumulator!(EwVariance);

/// The serialized form of [`EwVariance`], validated on the way in.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(bound = "F: Float")]
struct EwVarianceState<F> {
    momentum: Momentum<F>,
    count: u64,
    #[serde(with = "crate::checkpoint::float")]
    shift: F,
    #[serde(with = "crate::checkpoint::float")]
    offset: F,
    #[serde(with = "crate::checkpoint::float")]
    variance: F,
    #[serde(default)]
    weights: WeightsState<F>,
}

#[cfg(feature = "serde")]
impl<F: Float> TryFrom<EwVarianceState<F>> for EwVariance<F> {
    type Error = Error;
    fn try_from(s: EwVarianceState<F>) -> Result<Self, Error> {
        let weights = Weighting::restore(s.momentum, s.count, false, &s.weights)?;
        if s.count == 0
            && (s.shift != F::zero() || s.offset != F::zero() || s.variance != F::zero())
        {
            return Err(Error::state("count is 0 but the statistics are not"));
        }
        if s.variance < F::zero() {
            return Err(Error::state(alloc::format!(
                "variance must be non-negative, got {:?}",
                s.variance
            )));
        }
        if s.count == 1 && s.variance != F::zero() {
            return Err(Error::state(alloc::format!(
                "variance must be 0 when count is 1, got {:?}",
                s.variance
            )));
        }
        super::shifted::check_shift("", s.shift)?;
        Ok(Self {
            weights,
            mean: Shifted {
                shift: s.shift,
                offset: s.offset,
            },
            var: s.variance,
        })
    }
}

#[cfg(feature = "serde")]
impl<F: Float> From<EwVariance<F>> for EwVarianceState<F> {
    fn from(e: EwVariance<F>) -> Self {
        Self {
            momentum: e.weights.momentum,
            count: e.weights.count,
            shift: e.mean.shift,
            offset: e.mean.offset,
            variance: e.var,
            weights: e.weights.save(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn infinity_and_nan_propagate() {
        let mut ew = EwVariance::new(Momentum::Factor(0.5_f64)).unwrap();
        ew.extend_from_slice(&[f64::INFINITY, 2.0]);
        assert_eq!(ew.mean(), Some(f64::INFINITY));
        assert_eq!(ew.variance(), Some(f64::INFINITY));
        let mut ew = EwVariance::new(Momentum::Factor(0.5_f64)).unwrap();
        ew.extend_from_slice(&[1.0, f64::NAN, 2.0]);
        assert!(ew.mean().unwrap().is_nan());
        assert!(ew.variance().unwrap().is_nan());
    }

    #[test]
    fn mean_is_the_ema_of_the_same_values() {
        // Dyadic values: every step is exact in both, shift or no shift.
        let xs = [3.0, -5.0, 0.5, 12.0, 7.25];
        let mut ew = EwVariance::new(Momentum::Decay(0.75_f64)).unwrap();
        let mut ema = crate::Ema::new(Momentum::Decay(0.75_f64)).unwrap();
        ew.extend_from_slice(&xs);
        ema.extend_from_slice(&xs);
        assert_eq!(ew.mean(), ema.value());
    }

    #[test]
    fn weight_one_keeps_only_the_last_value() {
        let mut ew = EwVariance::new(Momentum::Factor(1.0_f64)).unwrap();
        ew.extend_from_slice(&[1.0, 5.0, -2.0]);
        assert_eq!((ew.mean(), ew.variance()), (Some(-2.0), Some(0.0)));
    }
}
