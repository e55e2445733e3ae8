//! The exponential moving average.

use alloc::vec::Vec;

#[cfg(feature = "serde")]
use super::weighting::WeightsState;
use super::weighting::{Elapsed, Step, Weighting};
use crate::NanPolicy;
use crate::accumulator::impl_accumulator;
use crate::series::{check_output, each, each_at};
use crate::{Error, Float, Momentum};

/// An exponential moving average: each push blends the new value into the
/// average with the weights of a [`Momentum`], in O(1) time and memory.
///
/// Every update is [`Momentum::blend`], so a `Decay(β)` average follows
/// Keras' formula `β·r + (1 − β)·x` and a `Factor(α)` average PyTorch's and
/// cuDNN's `α·x + (1 − α)·r`, to the last bit. With `Cumulative` the
/// average is the plain mean of the values pushed.
///
/// Two ways to start:
///
/// - [`Ema::new`] is **seeded by the first value**: the first push sets the
///   average, later pushes blend. This is a smoothing filter without a
///   start-up transient (pandas' `ewm(adjust=False)`). The state remembers
///   whether it was seeded, so a stream that starts with 0 or whose average
///   passes through 0 never restarts.
/// - [`Ema::with_initial`] **starts at a given value**, and every push
///   blends. BatchNorm's running statistics start this way, at 0 (mean) or
///   1 (variance). Add [`with_bias_correction`](Ema::with_bias_correction)
///   to a zero-initialised average to remove the pull towards 0 at the
///   start, as Adam does.
///
/// Options, each a builder on any of the constructors (the exponential
/// family shares them):
///
/// - **weighting**: [`Ema::new`] is pandas' `ewm(adjust=False)`, the
///   recursion above; [`Ema::adjusted`] is `ewm(adjust=True)`, weights
///   (1 − α)ⁱ normalised by their sum, which pulls no early value towards
///   the first;
/// - **a clock**: [`push_at`](Ema::push_at) and
///   [`push_after`](Ema::push_after) decay the past over the time Δt
///   since the previous value, in the caller's unit: by 2^(−Δt/h) with a
///   half-life of `h` time units ([`Momentum::from_half_life`]`(h)`),
///   from the ratio Δt/h as pandas computes it, so that the unit does not
///   matter; by β^Δt with the weight β of the old value per unit of a
///   `Decay` or `Factor` momentum. Times are `f64` whatever `F` is;
/// - **missing values**: [`with_nan_policy`](Ema::with_nan_policy) skips
///   NaN ([`NanPolicy`]) instead of propagating it;
/// - **readiness**: [`with_min_periods`](Ema::with_min_periods) keeps the
///   value `None` until that many values are in (pandas' `min_periods`).
///
/// Empty (seeded by the first value, nothing pushed) →
/// [`value`](Ema::value) is `None`. NaN and ±∞ propagate by default: once
/// pushed, they stay in the average (except under a weight of 1 for the
/// new value, which replaces it).
///
/// **Checkpoints** (feature `serde`): serialized losslessly in any
/// format, and restored to a state that goes on bit for bit; see
/// [Checkpoints](crate#checkpoints).
///
/// # Example
///
/// ```
/// use momenta::{Ema, Momentum};
///
/// // Keras' momentum=0.75 and PyTorch's momentum=0.25 are the same average.
/// let mut keras = Ema::new(Momentum::Decay(0.75))?;
/// let mut torch = Ema::new(Momentum::Factor(0.25))?;
/// for x in [8.0, 0.0, 4.0] {
///     keras.push(x);
///     torch.push(x);
/// }
/// // 8 → 0.75·8 + 0.25·0 = 6 → 0.75·6 + 0.25·4 = 5.5
/// assert_eq!(keras.value(), Some(5.5));
/// assert_eq!(keras.value(), torch.value());
///
/// // A BatchNorm running mean starts at 0.
/// let mut running = Ema::with_initial(0.0, Momentum::Factor(0.1))?;
/// running.push(10.0);
/// assert_eq!(running.value(), Some(1.0));
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(into = "EmaState<F>", bound = "F: Float")
)]
pub struct Ema<F> {
    /// The momentum, the options and the count.
    weights: Weighting<F>,
    /// The starting value; `None` when seeded by the first value pushed.
    initial: Option<F>,
    /// The average; meaningful once a value is in or when `initial` is set.
    value: F,
    /// The weight the starting value still carries: the product of the
    /// decay weights of the updates so far (βᵗ). 1 before any update; 0
    /// once seeded by a value, or after a `Cumulative` update.
    residual: F,
    bias_correction: bool,
}

#[cfg(feature = "serde")]
crate::checkpoint::path::restore_from!([F: Float] Ema<F>, EmaState<F>);

impl<F: Float> Ema<F> {
    /// An average seeded by the first value pushed.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `momentum` when the momentum's parameter is outside `[0, 1]`
    /// or NaN.
    ///
    /// ```
    /// use momenta::{Ema, Momentum};
    ///
    /// let mut e = Ema::new(Momentum::Factor(0.5))?;
    /// assert_eq!(e.value(), None);
    /// e.push(0.0); // a first value of 0 seeds the average like any other
    /// e.push(4.0);
    /// assert_eq!(e.value(), Some(2.0));
    ///
    /// let err = Ema::<f64>::new(Momentum::Factor(1.5)).unwrap_err();
    /// assert_eq!(err.to_string(), "momentum must be in [0, 1], got 1.5");
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn new(momentum: Momentum<F>) -> Result<Self, Error> {
        Ok(Self {
            weights: Weighting::new(momentum, false, false)?,
            initial: None,
            value: F::zero(),
            residual: F::one(),
            bias_correction: false,
        })
    }

    /// An average with pandas' `adjust=True` weighting, seeded by the first
    /// value: after values x₁ … xₙ it is Σ wᵢxᵢ / Σ wᵢ with wᵢ = βⁿ⁻ⁱ (β the
    /// momentum's weight of the old value). Early values are not pulled
    /// towards the first, as they are under [`Ema::new`] (`adjust=False`);
    /// the two agree once βⁿ is negligible. `Cumulative` gives the plain
    /// mean either way.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `momentum` when the momentum's parameter is outside `[0, 1]`
    /// or NaN.
    ///
    /// ```
    /// use momenta::{Ema, Momentum};
    ///
    /// // pandas: Series([1, 2, 3]).ewm(alpha=0.5).mean() → 1, 5/3, 17/7
    /// let mut e = Ema::adjusted(Momentum::Factor(0.5))?;
    /// e.push(1.0);
    /// e.push(2.0);
    /// assert!((e.value().unwrap() - 5.0_f64 / 3.0).abs() < 1e-15); // (0.5·1 + 2) / 1.5
    /// e.push(3.0);
    /// assert!((e.value().unwrap() - 17.0_f64 / 7.0).abs() < 1e-15);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn adjusted(momentum: Momentum<F>) -> Result<Self, Error> {
        Ok(Self {
            weights: Weighting::new(momentum, true, false)?,
            ..Self::new(momentum)?
        })
    }

    /// An average that starts at `initial`; every push blends into it.
    ///
    /// With `Cumulative` the first push replaces the initial value (its
    /// weight is 1/1), so the average is the plain mean of the values
    /// pushed, as with cuDNN's factor 1/(1 + k) at the k-th call.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `momentum` when the momentum's parameter is outside `[0, 1]`
    /// or NaN, and naming `initial` when the initial value is NaN or ±∞ (an
    /// average that starts there never leaves, and formats without NaN,
    /// such as JSON, could not restore it).
    ///
    /// ```
    /// use momenta::{Ema, Momentum};
    ///
    /// assert!(Ema::with_initial(f64::NAN, Momentum::Decay(0.5)).is_err());
    /// let mut var = Ema::with_initial(1.0, Momentum::Decay(0.5))?;
    /// assert_eq!(var.value(), Some(1.0));
    /// var.push(3.0);
    /// assert_eq!(var.value(), Some(2.0));
    ///
    /// let mut cumulative = Ema::with_initial(100.0, Momentum::Cumulative)?;
    /// cumulative.extend_from_slice(&[3.0, 5.0, 10.0]);
    /// assert_eq!(cumulative.value(), Some(6.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn with_initial(initial: F, momentum: Momentum<F>) -> Result<Self, Error> {
        if !initial.is_finite() {
            return Err(Error::parameter("initial", initial.as_f64(), "finite"));
        }
        Ok(Self {
            weights: Weighting::new(momentum, false, true)?,
            initial: Some(initial),
            value: initial,
            residual: F::one(),
            bias_correction: false,
        })
    }

    /// Sets what a NaN value does (default [`NanPolicy::Propagate`]).
    ///
    /// ```
    /// use momenta::{Ema, Momentum, NanPolicy};
    /// let mut e = Ema::new(Momentum::Factor(0.5))?.with_nan_policy(NanPolicy::Skip);
    /// e.extend_from_slice(&[f64::NAN, 2.0, f64::NAN, 4.0]);
    /// assert_eq!((e.value(), e.count()), (Some(3.0), 2));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn with_nan_policy(mut self, policy: NanPolicy) -> Self {
        self.weights.set_nan(policy);
        self
    }

    /// Keeps [`value`](Ema::value) `None` until at least `n` values are in
    /// (pandas' `min_periods`; values skipped by the [`NanPolicy`] do not
    /// count). `n = 0` (the default) puts no condition beyond the
    /// average's own.
    ///
    /// A count and not a time span, so that one rule holds for every
    /// weighting; after a long gap on a clock,
    /// [`EwVariance::effective_count`](crate::EwVariance::effective_count)
    /// tells how many values the statistics really rest on.
    ///
    /// `n` is a `usize` as on every window (it was a `u64`), and any count
    /// can be reached, so this cannot fail and returns `Self`; the count
    /// windows' `with_min_periods` returns a `Result` because theirs must
    /// not exceed the window.
    ///
    /// ```
    /// use momenta::{Ema, Momentum};
    /// let mut e = Ema::new(Momentum::Factor(0.5))?.with_min_periods(2);
    /// e.push(1.0);
    /// assert_eq!((e.value(), e.is_ready()), (None, false));
    /// e.push(3.0);
    /// assert_eq!((e.value(), e.is_ready()), (Some(2.0), true));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn with_min_periods(mut self, n: usize) -> Self {
        self.weights.min_periods = u64::try_from(n).unwrap_or(u64::MAX);
        self
    }

    /// Whether at least [`min_periods`](Ema::with_min_periods) values are in
    /// and the average has a value (or starts at one).
    ///
    /// ```
    /// use momenta::{Ema, Momentum};
    /// let mut e = Ema::new(Momentum::Factor(0.5))?;
    /// assert!(!e.is_ready());
    /// e.push(1.0);
    /// assert!(e.is_ready());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_ready(&self) -> bool {
        self.weights.ready()
    }

    /// The [`NanPolicy`] in force.
    ///
    /// ```
    /// use momenta::{Ema, Momentum, NanPolicy};
    /// let e = Ema::<f64>::new(Momentum::Factor(0.5))?;
    /// assert_eq!(e.nan_policy(), NanPolicy::Propagate);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn nan_policy(&self) -> NanPolicy {
        self.weights.nan
    }

    /// Whether the average has pandas' `adjust=True` weighting
    /// ([`Ema::adjusted`]).
    ///
    /// ```
    /// use momenta::{Ema, Momentum};
    /// assert!(Ema::<f64>::adjusted(Momentum::Factor(0.5))?.is_adjusted());
    /// assert!(!Ema::<f64>::new(Momentum::Factor(0.5))?.is_adjusted());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_adjusted(&self) -> bool {
        self.weights.adjusted
    }

    /// Turns on Adam's bias correction: [`value`](Ema::value) returns
    /// `r / (1 − βᵗ)`, where `r` is the average and βᵗ the product of the
    /// weights the old value received at the `t` updates so far (for
    /// `Factor(α)`, (1 − α)ᵗ; for `Cumulative`, 0 after the first update).
    ///
    /// It is meant for **zero-initialised** averages
    /// (`Ema::with_initial(0.0, m)`): there `1 − βᵗ` is exactly the total
    /// weight the pushed values carry, so the corrected value is their
    /// properly weighted average and a constant input `c` gives `c` (up to
    /// the average's own rounding, a few ulps) from the first push on. On a non-zero initial value the correction keeps
    /// a bias of `βᵗ·v₀ / (1 − βᵗ)`. On an average seeded by its first value
    /// it changes nothing: the weights already sum to 1.
    ///
    /// With the correction on, `value()` is `None` until the first push
    /// (before it no value has any weight, and `r / (1 − β⁰)` would be
    /// 0/0), and `None` while the pushed values still have no weight at all
    /// (`Decay(1)` or `Factor(0)`, which never move from the initial value).
    ///
    /// ```
    /// use momenta::{Ema, Momentum};
    ///
    /// let mut m = Ema::with_initial(0.0, Momentum::Decay(0.5))?.with_bias_correction();
    /// assert_eq!(m.value(), None);
    /// m.push(8.0); // raw average 4 = 8·(1 − 0.5)
    /// assert_eq!(m.value(), Some(8.0));
    /// m.push(8.0); // raw average 6 = 8·(1 − 0.25)
    /// assert_eq!(m.value(), Some(8.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn with_bias_correction(mut self) -> Self {
        self.bias_correction = true;
        self
    }

    /// Whether [`value`](Ema::value) is bias-corrected.
    ///
    /// ```
    /// use momenta::{Ema, Momentum};
    /// let e = Ema::<f64>::with_initial(0.0, Momentum::Decay(0.9))?;
    /// assert!(!e.is_bias_corrected());
    /// assert!(e.with_bias_correction().is_bias_corrected());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_bias_corrected(&self) -> bool {
        self.bias_correction
    }

    /// Adds one value: the first value seeds an average made by
    /// [`Ema::new`]; every other push is
    /// `self.value = momentum.blend(self.value, x, n)` at the `n`-th update.
    ///
    /// ```
    /// use momenta::{Ema, Momentum};
    /// let mut e = Ema::new(Momentum::Decay(0.5))?;
    /// e.push(2.0);
    /// e.push(-2.0); // passes through 0 …
    /// e.push(4.0); // … and goes on: 0·0.5 + 4·0.5
    /// assert_eq!(e.value(), Some(2.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[inline]
    pub fn push(&mut self, x: F) {
        self.update(x, Elapsed::Sample);
    }

    /// Adds a value observed `dt` time units after the previous one: the
    /// past decays by 2^(−`dt`/h) with [`Momentum::from_half_life`]`(h)`
    /// (an old value's weight halves every `h` units, whatever the unit),
    /// by β^`dt` with a `Decay` or `Factor` momentum (β its weight of the
    /// old value per unit). `dt = 1` is exactly [`push`](Ema::push).
    ///
    /// `dt` is an `f64` whatever `F` is, as every time in the crate (it
    /// was an `F`, and an `f32` time step loses digits that an `f32`
    /// value does not need).
    ///
    /// The recursive average ([`Ema::new`]) gives the new value weight
    /// 1 − β^`dt` (polars' `ewm_mean_by`, pandas' `ewm(times=…,
    /// adjust=False)`): a value at the same time as the previous one
    /// (`dt = 0`) changes nothing, and after a long gap the new value all
    /// but replaces the average. The adjusted average ([`Ema::adjusted`])
    /// gives every value weight β^(age) (pandas' `ewm(halflife=h,
    /// times=t)`). `Cumulative` weighs every value equally whatever the
    /// time.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `elapsed time` when `dt` is negative or NaN (+∞ is allowed: it
    /// forgets the past, and moves a clock set by `push_at` to +∞, after
    /// which `push_at` fails until a reset). An error changes nothing.
    ///
    /// ```
    /// use momenta::{Ema, Momentum};
    /// // A half-life of 2 seconds.
    /// let mut e = Ema::new(Momentum::from_half_life(2.0)?)?;
    /// e.push_after(0.0, 8.0)?; // the first value seeds
    /// e.push_after(2.0, 0.0)?; // 8 has lost half its weight
    /// assert!((e.value().unwrap() - 4.0_f64).abs() < 1e-15);
    /// assert!(e.push_after(-1.0, 3.0).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[inline]
    pub fn push_after(&mut self, dt: f64, x: F) -> Result<(), Error> {
        let elapsed = self.weights.after(dt)?;
        self.update(x, elapsed);
        Ok(())
    }

    /// Adds a value observed at time `t`, in the caller's unit: as
    /// [`push_after`](Ema::push_after) with the time since the previous
    /// `push_at`. The first `push_at` only sets the clock (and counts as
    /// one step from a start at an initial value). [`push`](Ema::push)
    /// does not move the clock.
    ///
    /// `t` is an `f64` whatever `F` is, as every time in the crate (it
    /// was an `F`: consecutive `f32` values are 128 apart at 1.7·10⁹, so
    /// Unix seconds in an `f32` lost the time between most values).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `time` when `t` is NaN, ±∞ or before the previous time. An
    /// error changes nothing.
    ///
    /// ```
    /// use momenta::{Ema, Momentum};
    /// // polars: ewm_mean_by(by=t, half_life="1s") on t = 0, 1, 3
    /// let mut e = Ema::new(Momentum::from_half_life(1.0)?)?;
    /// for (t, x) in [(0.0, 4.0), (1.0, 8.0), (3.0, 0.0)] {
    ///     e.push_at(t, x)?;
    /// }
    /// // 4 → 6 (half each) → 6/4 = 1.5 (6 keeps a quarter)
    /// assert!((e.value().unwrap() - 1.5_f64).abs() < 1e-15);
    /// assert!(e.push_at(2.0, 1.0).is_err()); // time went backwards
    /// assert!(e.push_at(f64::NAN, 1.0).is_err());
    /// assert!((e.value().unwrap() - 1.5_f64).abs() < 1e-15);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[inline]
    pub fn push_at(&mut self, t: f64, x: F) -> Result<(), Error> {
        let elapsed = self.weights.at(t)?;
        self.update(x, elapsed);
        Ok(())
    }

    #[inline]
    fn update(&mut self, x: F, elapsed: Elapsed) {
        match self.weights.step(x.is_nan(), elapsed) {
            Step::Skip => {}
            Step::Seed => {
                // Seeded by this value, or the old value keeps no weight (as
                // in `Momentum::blend`): `x` replaces it, even NaN or ±∞.
                self.value = x;
                self.residual = F::zero();
            }
            Step::Blend(alpha, beta) => {
                self.value = alpha * x + beta * self.value;
                // Once 0 the residual stays 0 (always, when seeded by a
                // value): the branch skips its chain of multiplies. Flushing
                // subnormals keeps the multiply fast; 1 − βᵗ is already 1
                // there.
                if self.residual != F::zero() {
                    let residual = self.residual * beta;
                    self.residual = if residual < F::min_positive_value() {
                        F::zero()
                    } else {
                        residual
                    };
                }
            }
        }
    }

    /// Adds every value of `xs`, in order, as [`push`](Ema::push) would.
    ///
    /// ```
    /// use momenta::{Ema, Momentum};
    /// let mut e = Ema::new(Momentum::Factor(0.5))?;
    /// e.extend_from_slice(&[4.0, 8.0, 0.0]);
    /// assert_eq!(e.value(), Some(3.0));
    /// assert_eq!(e.count(), 3);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn extend_from_slice(&mut self, xs: &[F]) {
        for &x in xs {
            self.push(x);
        }
    }

    /// Pushes every value of `xs` in order and returns the average after each
    /// push, NaN where [`value`](Self::value) is `None`: pandas' `s.ewm(alpha=α, adjust=False).mean()` for [`new`](Self::new) with
    /// `Momentum::Factor(α)` (`adjust=True` for [`adjusted`](Self::adjusted)),
    /// polars' `s.ewm_mean(alpha=α, adjust=False)`.
    /// The statistic goes on from where it was and is left as the push
    /// loop leaves it, every value the push loop's bit for bit (it is the
    /// push loop, writing into one vector).
    ///
    /// ```
    /// use momenta::{Ema, Momentum};
    /// let mut e = Ema::new(Momentum::Factor(0.5))?;
    /// assert_eq!(e.value_series(&[4.0, 8.0, 0.0]), [4.0, 6.0, 3.0]);
    /// e.push(3.0); // it goes on
    /// assert_eq!(e.value(), Some(3.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use = "the series is the result; use `extend_from_slice` to only push"]
    pub fn value_series(&mut self, xs: &[F]) -> Vec<F> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        each(self, xs, &mut out, Self::push, Self::value);
        out
    }

    /// [`value_series`](Self::value_series) into a caller's buffer, as long
    /// as `xs`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`; nothing is
    /// pushed then.
    ///
    /// ```
    /// use momenta::{Ema, Momentum};
    /// let mut e = Ema::new(Momentum::Factor(0.5))?;
    /// let mut out = [0.0; 2];
    /// e.value_series_into(&[1.0, 2.0], &mut out)?;
    /// assert!(e.value_series_into(&[1.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn value_series_into(&mut self, xs: &[F], out: &mut [F]) -> Result<(), Error> {
        check_output("output", xs.len(), out.len())?;
        each(self, xs, out, Self::push, Self::value);
        Ok(())
    }

    /// [`push_at`](Self::push_at) every `(times[i], xs[i])` in order and
    /// returns the average after each push, NaN where [`value`](Self::value)
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
    /// use momenta::{Ema, Momentum};
    /// // A half-life of one time unit: a gap of two decays the past to a quarter.
    /// let mut e = Ema::new(Momentum::from_half_life(1.0)?)?;
    /// let v = e.value_series_at(&[0.0, 1.0, 3.0], &[4.0, 8.0, 0.0])?;
    /// assert_eq!(v, [4.0, 6.0, 1.5]);
    /// assert!(e.value_series_at(&[2.0], &[1.0]).is_err()); // before 3.0
    /// assert_eq!(e.count(), 3);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn value_series_at(&mut self, times: &[f64], xs: &[F]) -> Result<Vec<F>, Error> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.value_series_at_into(times, xs, &mut out)?;
        Ok(out)
    }

    /// [`value_series_at`](Self::value_series_at) into a caller's buffer,
    /// as long as `xs`.
    ///
    /// # Errors
    ///
    /// As [`value_series_at`](Self::value_series_at), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`.
    ///
    /// ```
    /// use momenta::{Ema, Momentum};
    /// let mut e = Ema::new(Momentum::Factor(0.5))?;
    /// let mut out = [0.0; 2];
    /// e.value_series_at_into(&[0.0, 1.5], &[1.0, 2.0], &mut out)?;
    /// assert!(e.value_series_at_into(&[1.0, 0.5], &[1.0, 2.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn value_series_at_into(
        &mut self,
        times: &[f64],
        xs: &[F],
        out: &mut [F],
    ) -> Result<(), Error> {
        each_at(
            self,
            self.weights.clock,
            "at or after the time of the previous push",
            (times, xs, out),
            Self::push_at,
            Self::value,
        )
    }

    /// The average: `None` before the first push when seeded by the first
    /// value, the initial value before the first push otherwise. With
    /// [bias correction](Ema::with_bias_correction), the corrected average,
    /// `None` before the first push.
    ///
    /// ```
    /// use momenta::{Ema, Momentum};
    /// assert_eq!(Ema::<f64>::new(Momentum::Cumulative)?.value(), None);
    /// assert_eq!(Ema::with_initial(1.0, Momentum::Cumulative)?.value(), Some(1.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn value(&self) -> Option<F> {
        if !self.weights.ready() {
            return None;
        }
        if self.bias_correction {
            let weight = F::one() - self.residual;
            return (self.weights.count > 0 && weight > F::zero()).then(|| self.value / weight);
        }
        Some(self.value)
    }

    /// The number of values pushed (updates so far).
    ///
    /// ```
    /// use momenta::{Ema, Momentum};
    /// let mut e = Ema::with_initial(0.0, Momentum::Factor(0.1))?;
    /// e.extend_from_slice(&[1.0, 2.0]);
    /// assert_eq!(e.count(), 2);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn count(&self) -> u64 {
        self.weights.count
    }

    /// The momentum the average was made with.
    ///
    /// ```
    /// use momenta::{Ema, Momentum};
    /// let e = Ema::<f32>::new(Momentum::Decay(0.99))?;
    /// assert_eq!(e.momentum(), Momentum::Decay(0.99));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn momentum(&self) -> Momentum<F> {
        self.weights.momentum
    }

    /// Forgets every value and the clock: back to the state the constructor
    /// made (seeded by the next value, or at the initial value), keeping the
    /// momentum, the weighting, the bias correction and the options.
    ///
    /// ```
    /// use momenta::{Ema, Momentum};
    /// let mut e = Ema::with_initial(1.0, Momentum::Factor(0.5))?;
    /// e.push(3.0);
    /// e.reset();
    /// assert_eq!((e.value(), e.count()), (Some(1.0), 0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn reset(&mut self) {
        self.value = self.initial.unwrap_or_else(F::zero);
        self.weights.reset(self.initial.is_some());
        self.residual = F::one();
    }
}

impl_accumulator!(Ema);

/// The serialized form of [`Ema`], validated on the way in.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(bound = "F: Float")]
struct EmaState<F> {
    momentum: Momentum<F>,
    #[serde(with = "crate::checkpoint::float::option")]
    initial: Option<F>,
    #[serde(with = "crate::checkpoint::float::option")]
    value: Option<F>,
    count: u64,
    #[serde(with = "crate::checkpoint::float")]
    residual: F,
    bias_correction: bool,
    #[serde(default)]
    weights: WeightsState<F>,
}

#[cfg(feature = "serde")]
fn same<F: Float>(a: F, b: F) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

#[cfg(feature = "serde")]
impl<F: Float> TryFrom<EmaState<F>> for Ema<F> {
    type Error = Error;
    fn try_from(s: EmaState<F>) -> Result<Self, Error> {
        use alloc::format;
        let weights = Weighting::restore(s.momentum, s.count, s.initial.is_some(), &s.weights)?;
        let momentum = weights.momentum;
        if let Some(v0) = s.initial.filter(|v0| !v0.is_finite()) {
            return Err(Error::state(format!(
                "the initial value must be finite, got {v0:?}"
            )));
        }
        let value = match (s.initial, s.value, s.count) {
            (None, None, 0) => F::zero(),
            (None, None, n) => {
                return Err(Error::state(format!(
                    "count is {n:?} but there is no value"
                )));
            }
            (None, Some(v), 0) => {
                return Err(Error::state(format!(
                    "count is 0 but the value is {v:?} and there is no initial value"
                )));
            }
            (Some(_), None, _) => {
                return Err(Error::state("an average with an initial value has a value"));
            }
            (Some(v0), Some(v), 0) if !same(v0, v) => {
                return Err(Error::state(format!(
                    "count is 0 but the value {v:?} differs from the initial value {v0:?}"
                )));
            }
            (_, Some(v), _) => v,
        };
        if !(s.residual >= F::zero() && s.residual <= F::one()) {
            return Err(Error::state(format!(
                "residual weight must be in [0, 1], got {:?}",
                s.residual
            )));
        }
        if s.count == 0 && s.residual != F::one() {
            return Err(Error::state(format!(
                "count is 0 but the residual weight is {:?}",
                s.residual
            )));
        }
        let seeded = s.count > 0 && s.initial.is_none();
        let cumulative = s.count > 0 && momentum == Momentum::Cumulative;
        if (seeded || cumulative) && s.residual != F::zero() {
            return Err(Error::state(format!(
                "the initial value has no weight left after the first update, \
                 but the residual weight is {}",
                s.residual
            )));
        }
        // Gaps, time steps and adjusted weights follow no closed form.
        let free = weights.adjusted || weights.timed || weights.nan == NanPolicy::Gap;
        if !(seeded || cumulative || free || residual_is_consistent(s.residual, momentum, s.count))
        {
            return Err(Error::state(format!(
                "residual weight {:?} does not match the momentum's decay to the power of \
                 the count {}",
                s.residual, s.count
            )));
        }
        Ok(Self {
            weights,
            initial: s.initial,
            value,
            residual: s.residual,
            bias_correction: s.bias_correction,
        })
    }
}

/// Whether `residual` is a product that `count` updates under `momentum`
/// (`Decay` or `Factor`) can have left: βᵗ with β = `decay(1)` and t =
/// `count`, computed as the running product of `push`, whose t roundings
/// move it by at most a factor (1 ± ε/2)ᵗ, that is by at most t·ε in the
/// logarithm; the reference βᵗ (one rounding of t, ln and the product)
/// adds a few more ε. Once βᵗ may have fallen below the smallest normal
/// number, the product may have been flushed to 0.
#[cfg(feature = "serde")]
fn residual_is_consistent<F: Float>(residual: F, momentum: Momentum<F>, count: u64) -> bool {
    if count == 0 {
        return residual == F::one();
    }
    let t = F::from_count(count);
    // t·ln β, the logarithm of βᵗ (−∞ for β = 0).
    let log_expected = t * momentum.decay(1).ln();
    // The running product's bound, plus ample room for the reference's
    // own rounding (|ln| of a normal number is below 2¹⁰ = 1024).
    let slack = F::epsilon() * (t + F::from_f64(2048.0));
    if residual == F::zero() {
        return log_expected - slack < F::min_positive_value().ln();
    }
    (residual.ln() - log_expected).abs() <= slack
}

#[cfg(feature = "serde")]
impl<F: Float> From<Ema<F>> for EmaState<F> {
    fn from(e: Ema<F>) -> Self {
        Self {
            momentum: e.weights.momentum,
            initial: e.initial,
            value: e.weights.primed.then_some(e.value),
            count: e.weights.count,
            residual: e.residual,
            bias_correction: e.bias_correction,
            weights: e.weights.save(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "serde")]
    #[test]
    fn restoring_a_non_finite_initial_value_fails() {
        // JSON writes NaN and ±∞ as null and would read the state back
        // without its initial value; other formats carry them.
        for v0 in [f64::NAN, f64::INFINITY] {
            let state = EmaState {
                momentum: Momentum::Factor(1.0),
                initial: Some(v0),
                value: Some(v0),
                count: 0,
                residual: 1.0,
                bias_correction: false,
                weights: WeightsState::default(),
            };
            assert!(Ema::try_from(state).is_err());
        }
    }

    #[test]
    fn seeded_average_does_not_restart_at_zero() {
        let mut e = Ema::new(Momentum::Factor(0.5_f64)).unwrap();
        for x in [0.0, 0.0, 8.0] {
            e.push(x);
        }
        // 0 → 0 → 4; a zero sentinel would have restarted at 8.
        assert_eq!(e.value(), Some(4.0));
    }

    #[test]
    fn residual_is_the_product_of_decays() {
        let mut e = Ema::with_initial(0.0, Momentum::Decay(0.5_f64)).unwrap();
        e.extend_from_slice(&[1.0, 1.0, 1.0]);
        assert_eq!(e.residual, 0.125);
        let mut e = Ema::new(Momentum::Decay(0.5_f64)).unwrap();
        e.extend_from_slice(&[1.0, 1.0, 1.0]);
        assert_eq!(e.residual, 0.0);
        let mut e = Ema::with_initial(5.0, Momentum::<f64>::Cumulative).unwrap();
        e.push(1.0);
        assert_eq!(e.residual, 0.0);
    }

    #[test]
    fn residual_flushes_subnormals() {
        let mut e = Ema::with_initial(0.0, Momentum::Decay(0.5_f64)).unwrap();
        for _ in 0..1100 {
            e.push(1.0);
        }
        assert_eq!(e.residual, 0.0);
        assert_eq!(e.with_bias_correction().value(), Some(1.0));
    }

    #[test]
    fn bias_correction_without_weight_is_none() {
        let mut e = Ema::with_initial(0.0, Momentum::Decay(1.0_f64))
            .unwrap()
            .with_bias_correction();
        e.push(3.0);
        assert_eq!(e.value(), None);
    }

    #[test]
    fn infinity_and_nan_propagate() {
        let mut e = Ema::new(Momentum::Factor(0.5_f64)).unwrap();
        e.extend_from_slice(&[1.0, f64::INFINITY, 2.0]);
        assert_eq!(e.value(), Some(f64::INFINITY));
        e.push(f64::NAN);
        assert!(e.value().unwrap().is_nan());
        let mut e = Ema::new(Momentum::Factor(1.0_f64)).unwrap();
        e.extend_from_slice(&[f64::NAN, 2.0]);
        assert_eq!(e.value(), Some(2.0));
    }

    #[test]
    fn saturated_count_does_not_panic() {
        let mut e = Ema::new(Momentum::<f64>::Cumulative).unwrap();
        e.push(1.0);
        e.weights.count = u64::MAX;
        e.push(3.0);
        assert_eq!(e.count(), u64::MAX);
        assert!(e.value().unwrap() >= 1.0);
    }
}
