//! The momentum conventions of exponential averages.

use crate::Float;
use crate::error::{Error, check_unit_interval};

/// How much weight an exponential average gives the old value and the new.
///
/// Frameworks disagree on what "momentum" means; each variant names one
/// convention, so a number never changes meaning on its way in:
///
/// | variant | meaning | used by |
/// |---|---|---|
/// | `Decay(β)` | weight of the **old** value: r ← β·r + (1 − β)·x | Keras/TF `momentum=0.99`, TF EMA `decay` |
/// | `Factor(α)` | weight of the **new** value: r ← (1 − α)·r + α·x | PyTorch `momentum=0.1`, cuDNN `exponentialAverageFactor` |
/// | `Cumulative` | equal weights: α = 1/n at the n-th update | PyTorch `momentum=None`, cuDNN factor 1/(1 + k) |
/// | `HalfLife(h)` | a value's weight halves every `h` updates (or `h` units of time on a clock): β = 2^(−1/h) | pandas `halflife`, polars `half_life` |
///
/// `Decay(β)` and `Factor(1 − β)` describe the same average; each evaluates
/// the update the way its frameworks write it, so results match them to
/// the last bit, and match each other exactly whenever `1 − β` is exact.
///
/// # Example
///
/// ```
/// use momenta::Momentum;
///
/// let keras = Momentum::Decay(0.75_f64);
/// let torch = Momentum::Factor(0.25_f64);
/// assert_eq!(keras.blend(8.0, 0.0, 1), 6.0);
/// assert_eq!(keras.blend(8.0, 0.0, 1), torch.blend(8.0, 0.0, 1));
/// // Cumulative: the n-th update gives the new value weight 1/n.
/// assert_eq!(Momentum::<f64>::Cumulative.blend(3.0, 6.0, 3), 4.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(bound = "F: Float")
)]
#[non_exhaustive]
pub enum Momentum<F> {
    /// Weight of the old value, in `[0, 1]` (Keras/TF `momentum`, TF EMA `decay`).
    Decay(#[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))] F),
    /// Weight of the new value, in `[0, 1]` (PyTorch `momentum`, cuDNN
    /// `exponentialAverageFactor`).
    Factor(#[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))] F),
    /// Equal weight for every value: the cumulative average.
    Cumulative,
    /// A half-life, positive and finite (pandas `halflife`, polars
    /// `half_life`): a value's weight halves every `h` updates, so the
    /// weight of the old value at an update is β = 2^(−1/h). On a clock
    /// (`push_at`, `push_after` of the exponential statistics) `h` is a
    /// time in the caller's unit and a step of Δt decays the past by
    /// 2^(−Δt/h), computed from the ratio Δt/h as pandas does, so the
    /// result does not depend on the unit: the same stream in seconds or
    /// in nanoseconds gives the same bits whenever the times and `h` are
    /// exact in both. `h` is an `f64` whatever the value type, as every
    /// time in the crate is. Made by [`Momentum::from_half_life`], which
    /// checks it.
    HalfLife(#[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))] f64),
}

impl<F: Float> Momentum<F> {
    /// Checks that the parameter is in `[0, 1]` (NaN is rejected), or for
    /// `HalfLife`, positive and finite.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `momentum` when the value is outside `[0, 1]` or NaN, or
    /// naming `half_life` when a half-life is not positive and finite.
    ///
    /// ```
    /// use momenta::Momentum;
    /// assert!(Momentum::Factor(0.1_f64).validate().is_ok());
    /// let err = Momentum::Decay(1.5_f64).validate().unwrap_err();
    /// assert_eq!(err.to_string(), "momentum must be in [0, 1], got 1.5");
    /// assert!(Momentum::<f32>::HalfLife(0.0).validate().is_err());
    /// ```
    pub fn validate(self) -> Result<Self, Error> {
        match self {
            Self::Decay(m) | Self::Factor(m) => check_unit_interval("momentum", m.as_f64())?,
            Self::Cumulative => {}
            Self::HalfLife(h) => {
                if !(h > 0.0 && h.is_finite()) {
                    return Err(Error::parameter("half_life", h, "a positive finite number"));
                }
            }
        }
        Ok(self)
    }

    /// The momentum whose average has a center of mass like a simple moving
    /// average over `span` values: α = 2/(span + 1) (pandas' `span`).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `span` unless `span ≥ 1` and finite.
    ///
    /// ```
    /// use momenta::Momentum;
    /// assert_eq!(Momentum::<f64>::from_span(3.0).unwrap(), Momentum::Factor(0.5));
    /// assert!(Momentum::<f64>::from_span(0.5).is_err());
    /// ```
    pub fn from_span(span: F) -> Result<Self, Error> {
        if !(span >= F::one() && span.is_finite()) {
            return Err(Error::parameter(
                "span",
                span.as_f64(),
                "a finite number ≥ 1",
            ));
        }
        let two = F::one() + F::one();
        Ok(Self::Factor(two / (span + F::one())))
    }

    /// The momentum of pandas' `com` (center of mass): α = 1/(1 + `com`),
    /// the weight of the new value, as `Factor(α)`. `com = 0` keeps only
    /// the last value; `com = (span − 1)/2` is [`from_span`](Self::from_span)'s
    /// average.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `com` unless `com ≥ 0` and finite (pandas also refuses a
    /// negative `com`).
    ///
    /// ```
    /// use momenta::Momentum;
    /// // pandas: ewm(com=3) is alpha = 1/(1 + 3)
    /// assert_eq!(Momentum::<f64>::from_com(3.0)?, Momentum::Factor(0.25));
    /// assert_eq!(Momentum::<f64>::from_com(0.0)?, Momentum::Factor(1.0));
    /// assert_eq!(
    ///     Momentum::<f64>::from_com(-1.0).unwrap_err().to_string(),
    ///     "com must be a finite number ≥ 0, got -1"
    /// );
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn from_com(com: F) -> Result<Self, Error> {
        if !(com >= F::zero() && com.is_finite()) {
            return Err(Error::parameter("com", com.as_f64(), "a finite number ≥ 0"));
        }
        Ok(Self::Factor((F::one() + com).recip()))
    }

    /// The momentum under which a value's weight halves every `half_life`
    /// updates: [`Momentum::HalfLife`], with β = 2^(−1/`half_life`) at
    /// each update. On a clock (`push_at`, `push_after` of the exponential
    /// statistics) the weight halves every `half_life` units of the
    /// caller's time (seconds, say), and a step of Δt decays the past by
    /// 2^(−Δt/`half_life`), whatever the unit.
    ///
    /// The half-life is an `f64` whatever `F` is: a time, like every time
    /// in the crate. (It was an `F`, and the momentum kept only β rounded
    /// to `F`, from which the clock's decay lost digits in proportion to
    /// the half-life in the clock's unit: 10⁻⁷ for 2.5 s counted in
    /// nanoseconds.)
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `half_life` unless it is positive and finite.
    ///
    /// ```
    /// use momenta::Momentum;
    /// let m = Momentum::<f32>::from_half_life(1.0).unwrap();
    /// assert_eq!(m, Momentum::HalfLife(1.0));
    /// assert_eq!(m.weights(1), (0.5, 0.5));
    /// assert!(Momentum::<f64>::from_half_life(0.0).is_err());
    /// ```
    pub fn from_half_life(half_life: f64) -> Result<Self, Error> {
        Self::HalfLife(half_life).validate()
    }

    /// The weight of the old value at the `n`-th update (`n` counted from
    /// 1): β for `Decay(β)`, 1 − α for `Factor(α)`, 1 − 1/n for
    /// `Cumulative`, 2^(−1/h) for `HalfLife(h)`.
    ///
    /// ```
    /// use momenta::Momentum;
    /// assert_eq!(Momentum::Factor(0.25_f64).decay(1), 0.75);
    /// assert_eq!(Momentum::<f64>::Cumulative.decay(4), 0.75);
    /// ```
    #[must_use]
    pub fn decay(self, n: u64) -> F {
        self.weights(n).1
    }

    /// The weight of the new value at the `n`-th update (`n` counted from
    /// 1): 1 − β for `Decay(β)`, α for `Factor(α)`, 1/n for `Cumulative`,
    /// 1 − 2^(−1/h) for `HalfLife(h)`.
    ///
    /// ```
    /// use momenta::Momentum;
    /// assert_eq!(Momentum::Decay(0.75_f64).factor(1), 0.25);
    /// assert_eq!(Momentum::<f64>::Cumulative.factor(4), 0.25);
    /// ```
    #[must_use]
    pub fn factor(self, n: u64) -> F {
        self.weights(n).0
    }

    /// Both weights of the `n`-th update (`n` counted from 1):
    /// `(factor(n), decay(n))`, the new value's and the old value's. The
    /// parameter given is used as is and the other weight is 1 minus it,
    /// so `Decay(β)` and `Factor(1 − β)` have the same weights whenever
    /// `1 − β` is exact. `HalfLife(h)` has the weights of `Decay(β)` with
    /// β = 2^(−1/h) computed in `f64` and rounded to `F`.
    ///
    /// ```
    /// use momenta::Momentum;
    /// assert_eq!(Momentum::Decay(0.75_f64).weights(1), (0.25, 0.75));
    /// assert_eq!(Momentum::Factor(0.25_f64).weights(1), (0.25, 0.75));
    /// assert_eq!(Momentum::<f64>::Cumulative.weights(4), (0.25, 0.75));
    /// assert_eq!(Momentum::<f64>::HalfLife(0.5).weights(1), (0.75, 0.25));
    /// ```
    #[inline]
    #[must_use]
    pub fn weights(self, n: u64) -> (F, F) {
        match self {
            Self::Decay(beta) => (F::one() - beta, beta),
            Self::Factor(alpha) => (alpha, F::one() - alpha),
            Self::Cumulative => {
                let alpha = F::from_count(n.max(1)).recip();
                (alpha, F::one() - alpha)
            }
            Self::HalfLife(h) => {
                let beta = F::from_f64(half_life_decay(1.0, h));
                (F::one() - beta, beta)
            }
        }
    }

    /// One update of an average `old` with a new value `new`, at the `n`-th
    /// update (`n` counted from 1; only `Cumulative` uses it):
    /// `α·new + β·old` with `(α, β)` the [`weights`](Momentum::weights).
    /// That is each convention's formula as its frameworks write it, to
    /// the last bit (products and sums commute exactly):
    ///
    /// - `Decay(β)`: `old·β + new·(1 − β)` (Keras, TensorFlow);
    /// - `Factor(α)` and `Cumulative`: `α·new + (1 − α)·old` (PyTorch,
    ///   cuDNN), with α = 1/n for `Cumulative`.
    ///
    /// When the old value keeps no weight at all (β = 0: `Decay(0)`,
    /// `Factor(1)`, or the first update of `Cumulative`) the result is
    /// `new`, even when `old` is infinite or NaN (0·NaN would be NaN):
    /// nothing of the old value is left, as in a fresh cumulative average.
    /// The conventions agree there too.
    ///
    /// ```
    /// use momenta::Momentum;
    /// assert_eq!(Momentum::Decay(0.5_f64).blend(1.0, 3.0, 1), 2.0);
    /// assert_eq!(Momentum::Factor(0.1_f64).blend(0.0, 10.0, 1), 1.0);
    /// assert_eq!(Momentum::<f64>::Cumulative.blend(f64::NAN, 3.0, 1), 3.0);
    /// assert_eq!(Momentum::Decay(0.0_f64).blend(f64::NAN, 3.0, 2), 3.0);
    /// assert_eq!(Momentum::Factor(1.0_f64).blend(f64::INFINITY, 3.0, 2), 3.0);
    /// ```
    #[inline]
    #[must_use]
    pub fn blend(self, old: F, new: F, n: u64) -> F {
        if self.forgets(n) {
            return new;
        }
        let (alpha, beta) = self.weights(n);
        alpha * new + beta * old
    }

    /// Whether the `n`-th update leaves the old value no weight at all:
    /// `decay(n) == 0`, read from the parameter without computing a weight
    /// (`Decay(0)`, `Factor(1)`, the first update of `Cumulative`, a
    /// half-life so short that 2^(−1/h) underflows). Then the new value
    /// replaces the old, whatever the old is.
    #[inline]
    pub(crate) fn forgets(self, n: u64) -> bool {
        match self {
            Self::Decay(beta) => beta == F::zero(),
            Self::Factor(alpha) => alpha == F::one(),
            Self::Cumulative => n <= 1,
            Self::HalfLife(_) => self.decay(n) == F::zero(),
        }
    }
}

/// 2^(−`dt`/`h`): what a half-life `h` leaves of a weight after a time
/// `dt` (0 for `dt` = +∞), from the ratio of the two, as pandas computes
/// 0.5^(Δt/h): one rounding of the ratio and one of the power, whatever
/// the unit of the two times.
#[inline]
pub(crate) fn half_life_decay(dt: f64, h: f64) -> f64 {
    num_traits::Float::exp2(-(dt / h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conventions_agree_when_the_complement_is_exact() {
        for (old, new) in [(1.0, 5.0), (-3.25, 0.5), (1e6, 1e6 + 1.0)] {
            assert_eq!(
                Momentum::Decay(0.75_f64).blend(old, new, 1),
                Momentum::Factor(0.25).blend(old, new, 1)
            );
        }
    }

    #[test]
    fn forgets_exactly_when_the_old_weight_is_zero() {
        let momenta = [
            Momentum::Decay(0.0_f64),
            Momentum::Decay(0.5),
            Momentum::Decay(1.0),
            Momentum::Factor(0.0),
            Momentum::Factor(0.5),
            Momentum::Factor(1.0),
            Momentum::Factor(1.0 - f64::EPSILON / 2.0),
            Momentum::Cumulative,
            Momentum::HalfLife(1.0),
            Momentum::HalfLife(1e-3),
            Momentum::HalfLife(1e-4),
        ];
        for m in momenta {
            for n in [0, 1, 2, 3, u64::MAX] {
                assert_eq!(m.forgets(n), m.decay(n) == 0.0, "{m:?} at {n}");
            }
        }
    }

    #[test]
    fn cumulative_is_the_running_mean() {
        // 3, 5, 10 → 6, from any initial value.
        let mut r = 123.0_f64;
        for (k, b) in [3.0, 5.0, 10.0].into_iter().enumerate() {
            r = Momentum::Cumulative.blend(r, b, k as u64 + 1);
        }
        assert_eq!(r, 6.0);
    }

    #[test]
    fn invalid_momenta_are_rejected() {
        assert!(Momentum::Factor(-0.1_f64).validate().is_err());
        assert!(Momentum::Decay(f32::NAN).validate().is_err());
        assert!(Momentum::<f64>::Cumulative.validate().is_ok());
        assert!(Momentum::<f64>::from_span(f64::INFINITY).is_err());
        assert!(Momentum::<f64>::from_half_life(f64::NAN).is_err());
        assert!(Momentum::<f32>::from_half_life(f64::INFINITY).is_err());
        assert!(Momentum::<f32>::HalfLife(-1.0).validate().is_err());
    }

    #[test]
    fn half_life_halves_the_weight() {
        let m = Momentum::<f64>::from_half_life(10.0).unwrap();
        assert_eq!(m, Momentum::HalfLife(10.0));
        assert!((m.decay(1).powi(10) - 0.5).abs() < 1e-15);
        assert_eq!(half_life_decay(20.0, 10.0), 0.25);
        assert_eq!(half_life_decay(f64::INFINITY, 10.0), 0.0);
        assert_eq!(half_life_decay(0.0, 10.0), 1.0);
    }
}
