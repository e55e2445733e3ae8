//! The exponentially weighted covariance of two signals.

use alloc::vec::Vec;

use super::shifted::{SPREAD_EVERY, Shifted};
#[cfg(feature = "serde")]
use super::weighting::WeightsState;
use super::weighting::{Elapsed, Step, Weighting};
use crate::NanPolicy;
use crate::float::clamp_non_negative;
use crate::series::{check_output, check_times, or_nan};
use crate::{Error, Float, Momentum};

/// Exponentially weighted means, variances, covariance and correlation of
/// pairs `(x, y)`, in O(1) time and memory: pandas'
/// `ewm(...).cov(other)` and `.corr(other)`.
///
/// Each push is Finch's update for both coordinates at once, with α the
/// weight of the new pair at this push:
///
/// ```text
/// dx = x − mean_x;  dy = y − mean_y
/// mean_x += α·dx;   mean_y += α·dy
/// cov ← (1 − α)·(cov + dx·(α·dy))
/// ```
///
/// and the same for each variance. Each mean is kept around a shift taken
/// from the data and re-based exactly when the mean leaves it behind (by
/// more than 4σ of its own coordinate, or than its distance from 0), as in
/// [`EwVariance`](crate::EwVariance), so `1e9 + noise` keeps its digits,
/// after a leading outlier too.
/// Everything else is [`EwVariance`](crate::EwVariance)'s: the weighting
/// ([`EwCovariance::new`]: `adjust=False`; [`EwCovariance::adjusted`]:
/// `adjust=True`), the clock ([`push_at`](EwCovariance::push_at),
/// [`push_after`](EwCovariance::push_after)), the [`NanPolicy`] (a pair is
/// missing when either value is NaN, as in pandas), and
/// [`with_min_periods`](EwCovariance::with_min_periods).
///
/// Empty → every statistic is `None`; one pair → covariance 0, correlation
/// `None`. NaN and ±∞ propagate by default. It takes pairs, so it is
/// [`Extend`]`<(F, F)>` rather than an [`Accumulator`](crate::Accumulator).
///
/// **Checkpoints** (feature `serde`): serialized losslessly in any
/// format, and restored to a state that goes on bit for bit; see
/// [Checkpoints](crate#checkpoints).
///
/// # Example
///
/// ```
/// use momenta::{EwCovariance, Momentum};
///
/// let mut c = EwCovariance::new(Momentum::Factor(0.5))?;
/// c.extend([(1.0, 2.0), (3.0, 6.0), (2.0, 4.0)]);
/// // y = 2x exactly: the correlation is 1 and cov = 2·var_x.
/// assert!((c.correlation().unwrap() - 1.0_f64).abs() < 1e-15);
/// assert_eq!(c.covariance(), Some(2.0 * c.variance_x().unwrap()));
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(into = "EwCovarianceState<F>", bound = "F: Float")
)]
pub struct EwCovariance<F> {
    weights: Weighting<F>,
    x: Shifted<F>,
    y: Shifted<F>,
    var_x: F,
    var_y: F,
    cov: F,
}

#[cfg(feature = "serde")]
crate::checkpoint::path::restore_from!([F: Float] EwCovariance<F>, EwCovarianceState<F>);

impl<F: Float> EwCovariance<F> {
    /// An empty accumulator, seeded by the first pair, with pandas'
    /// `adjust=False` weighting.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `momentum` when the momentum's parameter is outside `[0, 1]`
    /// or NaN.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let c = EwCovariance::<f64>::new(Momentum::Decay(0.9))?;
    /// assert_eq!(c.covariance(), None);
    /// assert!(EwCovariance::<f64>::new(Momentum::Factor(2.0)).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn new(momentum: Momentum<F>) -> Result<Self, Error> {
        Ok(Self {
            weights: Weighting::new(momentum, false, false)?,
            x: Shifted::default(),
            y: Shifted::default(),
            var_x: F::zero(),
            var_y: F::zero(),
            cov: F::zero(),
        })
    }

    /// An empty accumulator with pandas' `adjust=True` weighting (weights
    /// βⁿ⁻ⁱ normalised by their sum).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `momentum` when the momentum's parameter is outside `[0, 1]`
    /// or NaN.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// // Weights 1/2 and 1: means 3 and 1/3, cov (½·(−2)·(2/3) + 1·1·(−1/3))/1.5
    /// let mut c = EwCovariance::adjusted(Momentum::Factor(0.5))?;
    /// c.push(1.0, 1.0);
    /// c.push(4.0, 0.0);
    /// assert!((c.covariance().unwrap() + 2.0_f64 / 3.0).abs() < 1e-15);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn adjusted(momentum: Momentum<F>) -> Result<Self, Error> {
        Ok(Self {
            weights: Weighting::new(momentum, true, false)?,
            ..Self::new(momentum)?
        })
    }

    /// Sets what a pair with a NaN does (default
    /// [`NanPolicy::Propagate`]).
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum, NanPolicy};
    /// let mut c = EwCovariance::new(Momentum::Factor(0.5))?.with_nan_policy(NanPolicy::Skip);
    /// c.extend([(1.0, 1.0), (f64::NAN, 5.0), (3.0, 3.0)]);
    /// assert_eq!((c.covariance(), c.count()), (Some(1.0), 2));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn with_nan_policy(mut self, policy: NanPolicy) -> Self {
        self.weights.set_nan(policy);
        self
    }

    /// Keeps every statistic `None` until at least `n` pairs are in
    /// (pandas' `min_periods`).
    ///
    /// `n` is a `usize` as on every window (it was a `u64`), and any count
    /// can be reached, so this cannot fail and returns `Self`; the count
    /// windows' `with_min_periods` returns a `Result` because theirs must
    /// not exceed the window.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut c = EwCovariance::new(Momentum::Factor(0.5))?.with_min_periods(2);
    /// c.push(1.0, 1.0);
    /// assert_eq!((c.mean_x(), c.is_ready()), (None, false));
    /// c.push(3.0, 3.0);
    /// assert_eq!(c.mean_x(), Some(2.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn with_min_periods(mut self, n: usize) -> Self {
        self.weights.min_periods = u64::try_from(n).unwrap_or(u64::MAX);
        self
    }

    /// Whether a pair is in and at least
    /// [`min_periods`](EwCovariance::with_min_periods) of them.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut c = EwCovariance::new(Momentum::Factor(0.5))?;
    /// assert!(!c.is_ready());
    /// c.push(1.0, 2.0);
    /// assert!(c.is_ready());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_ready(&self) -> bool {
        self.weights.ready()
    }

    /// Adds one pair.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut c = EwCovariance::new(Momentum::Factor(0.5))?;
    /// c.push(0.0, 0.0);
    /// c.push(2.0, -4.0); // dx = 2, dy = −4: cov 0.5·(2·(0.5·−4)) = −2
    /// assert_eq!(c.covariance(), Some(-2.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[inline]
    pub fn push(&mut self, x: F, y: F) {
        self.update(x, y, Elapsed::Sample);
    }

    /// Adds a pair observed `dt` time units after the previous one, as
    /// [`Ema::push_after`](crate::Ema::push_after); `dt` is an `f64`
    /// whatever `F` is.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `elapsed time` when `dt` is negative or NaN. An error changes
    /// nothing.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut c = EwCovariance::new(Momentum::from_half_life(5.0)?)?;
    /// c.push_after(0.0, 1.0, 1.0)?;
    /// c.push_after(5.0, 3.0, -1.0)?; // weights ½, ½
    /// assert!((c.covariance().unwrap() + 1.0_f64).abs() < 1e-15);
    /// assert!(c.push_after(-1.0, 0.0, 0.0).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[inline]
    pub fn push_after(&mut self, dt: f64, x: F, y: F) -> Result<(), Error> {
        let elapsed = self.weights.after(dt)?;
        self.update(x, y, elapsed);
        Ok(())
    }

    /// Adds a pair observed at time `t`, as
    /// [`Ema::push_at`](crate::Ema::push_at); `t` is an `f64` whatever `F`
    /// is.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `time` when `t` is NaN, ±∞ or before the previous time. An
    /// error changes nothing.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut c = EwCovariance::new(Momentum::from_half_life(5.0)?)?;
    /// c.push_at(100.0, 1.0, 1.0)?;
    /// c.push_at(105.0, 3.0, -1.0)?;
    /// assert!(c.push_at(104.0, 0.0, 0.0).is_err());
    /// assert_eq!(c.count(), 2);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[inline]
    pub fn push_at(&mut self, t: f64, x: F, y: F) -> Result<(), Error> {
        let elapsed = self.weights.at(t)?;
        self.update(x, y, elapsed);
        Ok(())
    }

    // Always: with the clock's and the gaps' branches the body is past
    // the inliner's threshold, and a call per push keeps the state in
    // memory (2.7 to 3.9 times the time of `push`); inlined, `push`'s
    // constant `Elapsed::Sample` removes those branches.
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "measured: see the comment")]
    fn update(&mut self, x: F, y: F, elapsed: Elapsed) {
        // One branch for both coordinates (two cost a register spill on
        // every push).
        if self.weights.count.is_multiple_of(SPREAD_EVERY) {
            let far = (self.x.is_far(self.var_x), self.y.is_far(self.var_y));
            if far.0 | far.1 {
                if far.0 {
                    self.x = self.x.rebased();
                }
                if far.1 {
                    self.y = self.y.rebased();
                }
            }
        }
        match self.weights.step(x.is_nan() || y.is_nan(), elapsed) {
            Step::Skip => {}
            Step::Seed => {
                self.x = Shifted::seed(x);
                self.y = Shifted::seed(y);
                self.var_x = F::zero();
                self.var_y = F::zero();
                self.cov = F::zero();
            }
            Step::Blend(alpha, beta) => {
                self.weights.track_squares(alpha, beta);
                let (dx, incr_x) = self.x.blend(x, alpha, beta);
                let (dy, incr_y) = self.y.blend(y, alpha, beta);
                self.var_x = beta * (self.var_x + dx * incr_x);
                self.var_y = beta * (self.var_y + dy * incr_y);
                self.cov = beta * (self.cov + dx * incr_y);
            }
        }
    }

    /// Every `*_series_into` and `*_series_at_into`: the lengths (and the
    /// times, when given) checked first, so a bad one changes nothing; then
    /// the push loop, `read` after each push (NaN where it is `None`).
    fn pairs_into(
        &mut self,
        times: Option<&[f64]>,
        xs: &[F],
        ys: &[F],
        out: &mut [F],
        read: fn(&Self) -> Option<F>,
    ) -> Result<(), Error> {
        check_output("ys", xs.len(), ys.len())?;
        check_output("output", xs.len(), out.len())?;
        let Some(times) = times else {
            for ((&x, &y), slot) in xs.iter().zip(ys).zip(out) {
                self.push(x, y);
                *slot = or_nan(read(self));
            }
            return Ok(());
        };
        check_times(
            self.weights.clock,
            times,
            xs.len(),
            "at or after the time of the previous push",
        )?;
        for (((&t, &x), &y), slot) in times.iter().zip(xs).zip(ys).zip(out) {
            self.push_at(t, x, y)?;
            *slot = or_nan(read(self));
        }
        Ok(())
    }

    /// Pushes every pair `(xs[i], ys[i])` in order and returns the biased covariance
    /// after each push, NaN where [`covariance`](Self::covariance) is `None`:
    /// pandas' `x.ewm(alpha=α, adjust=False).cov(y, bias=True)` (polars has no
    /// exponentially weighted covariance). The statistic goes on from where it was and is left as
    /// the push loop leaves it, every value the push loop's bit for bit.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `ys`) when `ys` is not as long as `xs`; nothing is pushed
    /// then.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut e = EwCovariance::new(Momentum::Factor(0.5))?;
    /// assert_eq!(e.covariance_series(&[1.0, 3.0], &[2.0, 6.0])?, [0.0, 2.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn covariance_series(&mut self, xs: &[F], ys: &[F]) -> Result<Vec<F>, Error> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.covariance_series_into(xs, ys, &mut out)?;
        Ok(out)
    }

    /// [`covariance_series`](Self::covariance_series) into a caller's buffer, as long
    /// as `xs`.
    ///
    /// # Errors
    ///
    /// As [`covariance_series`](Self::covariance_series), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut e = EwCovariance::new(Momentum::Factor(0.5))?;
    /// let mut out = [0.0; 2];
    /// e.covariance_series_into(&[1.0, 2.0], &[2.0, 5.0], &mut out)?;
    /// assert!(e.covariance_series_into(&[1.0, 2.0], &[2.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn covariance_series_into(
        &mut self,
        xs: &[F],
        ys: &[F],
        out: &mut [F],
    ) -> Result<(), Error> {
        self.pairs_into(None, xs, ys, out, Self::covariance)
    }

    /// [`push_at`](Self::push_at) every `(times[i], xs[i], ys[i])` in order
    /// and returns the biased covariance after each push, NaN where
    /// [`covariance`](Self::covariance) is `None`. The times are checked first, so a
    /// bad one changes nothing.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `ys` or `times`) when the slices differ in length;
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// (naming `time`) when a time is NaN, infinite or earlier than the
    /// one before it. Nothing is pushed then.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut e = EwCovariance::new(Momentum::from_half_life(1.0)?)?;
    /// let s = e.covariance_series_at(&[0.0, 1.0], &[1.0, 3.0], &[2.0, 6.0])?;
    /// assert_eq!(s[1], 2.0);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn covariance_series_at(
        &mut self,
        times: &[f64],
        xs: &[F],
        ys: &[F],
    ) -> Result<Vec<F>, Error> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.covariance_series_at_into(times, xs, ys, &mut out)?;
        Ok(out)
    }

    /// [`covariance_series_at`](Self::covariance_series_at) into a caller's buffer,
    /// as long as `xs`.
    ///
    /// # Errors
    ///
    /// As [`covariance_series_at`](Self::covariance_series_at), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut e = EwCovariance::new(Momentum::Factor(0.5))?;
    /// let mut out = [0.0; 2];
    /// e.covariance_series_at_into(&[0.0, 2.0], &[1.0, 2.0], &[2.0, 5.0], &mut out)?;
    /// assert!(e.covariance_series_at_into(&[0.0, 2.0], &[1.0, 2.0], &[2.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn covariance_series_at_into(
        &mut self,
        times: &[f64],
        xs: &[F],
        ys: &[F],
        out: &mut [F],
    ) -> Result<(), Error> {
        self.pairs_into(Some(times), xs, ys, out, Self::covariance)
    }
    /// Pushes every pair `(xs[i], ys[i])` in order and returns the unbiased covariance
    /// after each push, NaN where [`unbiased_covariance`](Self::unbiased_covariance) is `None`:
    /// pandas' `x.ewm(alpha=α, adjust=False).cov(y)` (`bias=False`, its default;
    /// polars has no exponentially weighted covariance). The statistic goes on from where it was and is left as
    /// the push loop leaves it, every value the push loop's bit for bit.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `ys`) when `ys` is not as long as `xs`; nothing is pushed
    /// then.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut e = EwCovariance::new(Momentum::Factor(0.5))?;
    /// let c: Vec<f64> = e.unbiased_covariance_series(&[1.0, 3.0], &[2.0, 6.0])?;
    /// assert!(c[0].is_nan());
    /// assert_eq!(c[1], 4.0);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn unbiased_covariance_series(&mut self, xs: &[F], ys: &[F]) -> Result<Vec<F>, Error> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.unbiased_covariance_series_into(xs, ys, &mut out)?;
        Ok(out)
    }

    /// [`unbiased_covariance_series`](Self::unbiased_covariance_series) into a caller's buffer, as long
    /// as `xs`.
    ///
    /// # Errors
    ///
    /// As [`unbiased_covariance_series`](Self::unbiased_covariance_series), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut e = EwCovariance::new(Momentum::Factor(0.5))?;
    /// let mut out = [0.0; 2];
    /// e.unbiased_covariance_series_into(&[1.0, 2.0], &[2.0, 5.0], &mut out)?;
    /// assert!(e.unbiased_covariance_series_into(&[1.0, 2.0], &[2.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn unbiased_covariance_series_into(
        &mut self,
        xs: &[F],
        ys: &[F],
        out: &mut [F],
    ) -> Result<(), Error> {
        self.pairs_into(None, xs, ys, out, Self::unbiased_covariance)
    }

    /// [`push_at`](Self::push_at) every `(times[i], xs[i], ys[i])` in order
    /// and returns the unbiased covariance after each push, NaN where
    /// [`unbiased_covariance`](Self::unbiased_covariance) is `None`. The times are checked first, so a
    /// bad one changes nothing.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `ys` or `times`) when the slices differ in length;
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// (naming `time`) when a time is NaN, infinite or earlier than the
    /// one before it. Nothing is pushed then.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut e = EwCovariance::new(Momentum::from_half_life(1.0)?)?;
    /// let s = e.unbiased_covariance_series_at(&[0.0, 1.0], &[1.0, 3.0], &[2.0, 6.0])?;
    /// assert_eq!(s[1], 4.0);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn unbiased_covariance_series_at(
        &mut self,
        times: &[f64],
        xs: &[F],
        ys: &[F],
    ) -> Result<Vec<F>, Error> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.unbiased_covariance_series_at_into(times, xs, ys, &mut out)?;
        Ok(out)
    }

    /// [`unbiased_covariance_series_at`](Self::unbiased_covariance_series_at) into a caller's buffer,
    /// as long as `xs`.
    ///
    /// # Errors
    ///
    /// As [`unbiased_covariance_series_at`](Self::unbiased_covariance_series_at), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut e = EwCovariance::new(Momentum::Factor(0.5))?;
    /// let mut out = [0.0; 2];
    /// e.unbiased_covariance_series_at_into(&[0.0, 2.0], &[1.0, 2.0], &[2.0, 5.0], &mut out)?;
    /// assert!(e.unbiased_covariance_series_at_into(&[0.0, 2.0], &[1.0, 2.0], &[2.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn unbiased_covariance_series_at_into(
        &mut self,
        times: &[f64],
        xs: &[F],
        ys: &[F],
        out: &mut [F],
    ) -> Result<(), Error> {
        self.pairs_into(Some(times), xs, ys, out, Self::unbiased_covariance)
    }
    /// Pushes every pair `(xs[i], ys[i])` in order and returns the correlation
    /// after each push, NaN where [`correlation`](Self::correlation) is `None`:
    /// pandas' `x.ewm(alpha=α, adjust=False).corr(y)` (polars has no exponentially
    /// weighted correlation). The statistic goes on from where it was and is left as
    /// the push loop leaves it, every value the push loop's bit for bit.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `ys`) when `ys` is not as long as `xs`; nothing is pushed
    /// then.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut e = EwCovariance::new(Momentum::Factor(0.5))?;
    /// let r: Vec<f64> = e.correlation_series(&[1.0, 3.0, 2.0], &[2.0, 6.0, 4.0])?;
    /// assert!(r[0].is_nan()); // no spread yet
    /// assert_eq!(r[1..], [1.0, 1.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn correlation_series(&mut self, xs: &[F], ys: &[F]) -> Result<Vec<F>, Error> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.correlation_series_into(xs, ys, &mut out)?;
        Ok(out)
    }

    /// [`correlation_series`](Self::correlation_series) into a caller's buffer, as long
    /// as `xs`.
    ///
    /// # Errors
    ///
    /// As [`correlation_series`](Self::correlation_series), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut e = EwCovariance::new(Momentum::Factor(0.5))?;
    /// let mut out = [0.0; 2];
    /// e.correlation_series_into(&[1.0, 2.0], &[2.0, 5.0], &mut out)?;
    /// assert!(e.correlation_series_into(&[1.0, 2.0], &[2.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn correlation_series_into(
        &mut self,
        xs: &[F],
        ys: &[F],
        out: &mut [F],
    ) -> Result<(), Error> {
        self.pairs_into(None, xs, ys, out, Self::correlation)
    }

    /// [`push_at`](Self::push_at) every `(times[i], xs[i], ys[i])` in order
    /// and returns the correlation after each push, NaN where
    /// [`correlation`](Self::correlation) is `None`. The times are checked first, so a
    /// bad one changes nothing.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `ys` or `times`) when the slices differ in length;
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// (naming `time`) when a time is NaN, infinite or earlier than the
    /// one before it. Nothing is pushed then.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut e = EwCovariance::new(Momentum::from_half_life(1.0)?)?;
    /// let s = e.correlation_series_at(&[0.0, 1.0], &[1.0, 3.0], &[2.0, 6.0])?;
    /// assert_eq!(s[1], 1.0);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn correlation_series_at(
        &mut self,
        times: &[f64],
        xs: &[F],
        ys: &[F],
    ) -> Result<Vec<F>, Error> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.correlation_series_at_into(times, xs, ys, &mut out)?;
        Ok(out)
    }

    /// [`correlation_series_at`](Self::correlation_series_at) into a caller's buffer,
    /// as long as `xs`.
    ///
    /// # Errors
    ///
    /// As [`correlation_series_at`](Self::correlation_series_at), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut e = EwCovariance::new(Momentum::Factor(0.5))?;
    /// let mut out = [0.0; 2];
    /// e.correlation_series_at_into(&[0.0, 2.0], &[1.0, 2.0], &[2.0, 5.0], &mut out)?;
    /// assert!(e.correlation_series_at_into(&[0.0, 2.0], &[1.0, 2.0], &[2.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn correlation_series_at_into(
        &mut self,
        times: &[f64],
        xs: &[F],
        ys: &[F],
        out: &mut [F],
    ) -> Result<(), Error> {
        self.pairs_into(Some(times), xs, ys, out, Self::correlation)
    }

    /// The number of pairs pushed (pairs skipped by the [`NanPolicy`] do
    /// not count).
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut c = EwCovariance::new(Momentum::Factor(0.5))?;
    /// c.extend([(1.0, 2.0), (3.0, 4.0)]);
    /// assert_eq!(c.count(), 2);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn count(&self) -> u64 {
        self.weights.count
    }

    /// The momentum the accumulator was made with.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let c = EwCovariance::<f64>::new(Momentum::Decay(0.9))?;
    /// assert_eq!(c.momentum(), Momentum::Decay(0.9));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn momentum(&self) -> Momentum<F> {
        self.weights.momentum
    }

    /// The weighted mean of the first values, or `None` when empty (or not
    /// [ready](EwCovariance::is_ready)).
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut c = EwCovariance::new(Momentum::Factor(0.5))?;
    /// c.extend([(1.0, 10.0), (3.0, 30.0)]);
    /// assert_eq!((c.mean_x(), c.mean_y()), (Some(2.0), Some(20.0)));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn mean_x(&self) -> Option<F> {
        self.weights.ready().then(|| self.x.mean())
    }

    /// The weighted mean of the second values, or `None` when empty (or
    /// not [ready](EwCovariance::is_ready)).
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut c = EwCovariance::new(Momentum::Cumulative)?;
    /// c.extend([(1.0, 10.0), (3.0, 20.0), (5.0, 60.0)]);
    /// assert_eq!(c.mean_y(), Some(30.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn mean_y(&self) -> Option<F> {
        self.weights.ready().then(|| self.y.mean())
    }

    /// The weighted (population) variance of the first values, as
    /// [`EwVariance::variance`](crate::EwVariance::variance).
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut c = EwCovariance::new(Momentum::Cumulative)?;
    /// c.extend([(1.0, 0.0), (5.0, 0.0)]);
    /// assert_eq!(c.variance_x(), Some(4.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn variance_x(&self) -> Option<F> {
        self.weights.ready().then(|| clamp_non_negative(self.var_x))
    }

    /// The weighted (population) variance of the second values, as
    /// [`EwVariance::variance`](crate::EwVariance::variance).
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut c = EwCovariance::new(Momentum::Cumulative)?;
    /// c.extend([(0.0, 1.0), (0.0, 3.0)]);
    /// assert_eq!(c.variance_y(), Some(1.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn variance_y(&self) -> Option<F> {
        self.weights.ready().then(|| clamp_non_negative(self.var_y))
    }

    /// The weighted covariance Σ w̃ᵢ(xᵢ − x̄)(yᵢ − ȳ) with
    /// normalised weights: pandas `.cov(other, bias=True)`. `None` when
    /// empty (or not [ready](EwCovariance::is_ready)).
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut c = EwCovariance::new(Momentum::Cumulative)?;
    /// c.extend([(1.0, 3.0), (3.0, 1.0)]);
    /// assert_eq!(c.covariance(), Some(-1.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn covariance(&self) -> Option<F> {
        self.weights.ready().then_some(self.cov)
    }

    /// pandas' `.cov(other, bias=False)`: the covariance times
    /// (Σw)²/((Σw)² − Σw²). With `Cumulative`, the sample covariance.
    /// `None` while one pair carries all the weight, and when not
    /// [ready](EwCovariance::is_ready).
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut c = EwCovariance::new(Momentum::Cumulative)?;
    /// c.push(1.0, 3.0);
    /// assert_eq!(c.unbiased_covariance(), None);
    /// c.push(3.0, 1.0);
    /// assert_eq!(c.unbiased_covariance(), Some(-2.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn unbiased_covariance(&self) -> Option<F> {
        Some(self.cov * self.weights.debias()?)
    }

    /// Pearson's correlation of the weighted pairs, cov/√(`var_x`·`var_y`)
    /// (pandas `.corr(other)`; the debiasing factors cancel). `None` when
    /// not [ready](EwCovariance::is_ready) or when either variance is 0.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut c = EwCovariance::new(Momentum::Factor(0.25))?;
    /// c.extend([(1.0, -1.0), (2.0, -2.0), (0.0, 0.0)]);
    /// assert!((c.correlation().unwrap() + 1.0_f64).abs() < 1e-15);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn correlation(&self) -> Option<F> {
        let (vx, vy) = (self.variance_x()?, self.variance_y()?);
        let denominator = (vx * vy).sqrt();
        if denominator > F::zero() {
            // Rounding can take |r| a hair past 1.
            Some((self.cov / denominator).max(-F::one()).min(F::one()))
        } else if denominator.is_nan() || self.cov.is_nan() {
            Some(F::nan())
        } else {
            None
        }
    }

    /// Kish's effective number of pairs, as
    /// [`EwVariance::effective_count`](crate::EwVariance::effective_count).
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut c = EwCovariance::new(Momentum::Cumulative)?;
    /// c.extend([(1.0, 1.0), (2.0, 2.0), (3.0, 5.0), (4.0, 4.0)]);
    /// assert_eq!(c.effective_count(), Some(4.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn effective_count(&self) -> Option<F> {
        self.weights.effective_count()
    }

    /// Forgets every pair and the clock, keeping the momentum, the
    /// weighting and the options.
    ///
    /// ```
    /// use momenta::{EwCovariance, Momentum};
    /// let mut c = EwCovariance::new(Momentum::Factor(0.5))?;
    /// c.push(1.0, 2.0);
    /// c.reset();
    /// assert_eq!((c.count(), c.covariance()), (0, None));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn reset(&mut self) {
        self.weights.reset(false);
        self.x = Shifted::default();
        self.y = Shifted::default();
        self.var_x = F::zero();
        self.var_y = F::zero();
        self.cov = F::zero();
    }
}

impl<F: Float> Extend<(F, F)> for EwCovariance<F> {
    fn extend<I: IntoIterator<Item = (F, F)>>(&mut self, iter: I) {
        for (x, y) in iter {
            self.push(x, y);
        }
    }
}

impl<'a, F: Float> Extend<&'a (F, F)> for EwCovariance<F> {
    fn extend<I: IntoIterator<Item = &'a (F, F)>>(&mut self, iter: I) {
        for &(x, y) in iter {
            self.push(x, y);
        }
    }
}

/// The serialized form of [`EwCovariance`], validated on the way in.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(bound = "F: Float")]
struct EwCovarianceState<F> {
    momentum: Momentum<F>,
    count: u64,
    #[serde(with = "crate::checkpoint::float")]
    shift_x: F,
    #[serde(with = "crate::checkpoint::float")]
    offset_x: F,
    #[serde(with = "crate::checkpoint::float")]
    shift_y: F,
    #[serde(with = "crate::checkpoint::float")]
    offset_y: F,
    #[serde(with = "crate::checkpoint::float")]
    variance_x: F,
    #[serde(with = "crate::checkpoint::float")]
    variance_y: F,
    #[serde(with = "crate::checkpoint::float")]
    covariance: F,
    #[serde(default)]
    weights: WeightsState<F>,
}

#[cfg(feature = "serde")]
impl<F: Float> TryFrom<EwCovarianceState<F>> for EwCovariance<F> {
    type Error = Error;
    fn try_from(s: EwCovarianceState<F>) -> Result<Self, Error> {
        use alloc::format;
        let weights = Weighting::restore(s.momentum, s.count, false, &s.weights)?;
        let fields = [
            s.shift_x,
            s.offset_x,
            s.shift_y,
            s.offset_y,
            s.variance_x,
            s.variance_y,
            s.covariance,
        ];
        if s.count == 0 && fields.iter().any(|&f| f != F::zero()) {
            return Err(Error::state("count is 0 but the statistics are not"));
        }
        for (name, v) in [("variance_x", s.variance_x), ("variance_y", s.variance_y)] {
            if v < F::zero() {
                return Err(Error::state(format!(
                    "{name} must be non-negative, got {v:?}"
                )));
            }
        }
        if s.count == 1
            && (s.variance_x, s.variance_y, s.covariance) != (F::zero(), F::zero(), F::zero())
        {
            return Err(Error::state(
                "variances and covariance must be 0 when count is 1",
            ));
        }
        super::shifted::check_shift("_x", s.shift_x)?;
        super::shifted::check_shift("_y", s.shift_y)?;
        // A covariance that overflows or turns NaN does so with the
        // product of two deviations, whose square is the product of the
        // variances' increments: one of them is then +∞ or NaN too.
        if !s.covariance.is_finite() && s.variance_x.is_finite() && s.variance_y.is_finite() {
            return Err(Error::state(format!(
                "covariance is {:?} beside the finite variance_x {:?} and variance_y {:?}: \
                 it overflows or turns NaN only with a variance that is +inf or NaN",
                s.covariance, s.variance_x, s.variance_y
            )));
        }
        // Cauchy–Schwarz, with room for rounding. The squares behind a
        // variance underflow before the products behind the covariance do
        // (deviations of 1e-300 square to 0): each variance gets room for
        // a few such losses. (A product of the two square roots cannot
        // underflow to 0.)
        let underflow = F::from_f64(4.0) * F::min_positive_value();
        let bound = (s.variance_x + underflow).sqrt() * (s.variance_y + underflow).sqrt();
        if s.covariance.abs() > bound * (F::one() + F::from_f64(1e-6)) {
            return Err(Error::state(format!(
                "|covariance| {:?} exceeds √(variance_x·variance_y) = {bound:?}",
                s.covariance
            )));
        }
        Ok(Self {
            weights,
            x: Shifted {
                shift: s.shift_x,
                offset: s.offset_x,
            },
            y: Shifted {
                shift: s.shift_y,
                offset: s.offset_y,
            },
            var_x: s.variance_x,
            var_y: s.variance_y,
            cov: s.covariance,
        })
    }
}

#[cfg(feature = "serde")]
impl<F: Float> From<EwCovariance<F>> for EwCovarianceState<F> {
    fn from(c: EwCovariance<F>) -> Self {
        Self {
            momentum: c.weights.momentum,
            count: c.weights.count,
            shift_x: c.x.shift,
            offset_x: c.x.offset,
            shift_y: c.y.shift,
            offset_y: c.y.offset,
            variance_x: c.var_x,
            variance_y: c.var_y,
            covariance: c.cov,
            weights: c.weights.save(),
        }
    }
}
