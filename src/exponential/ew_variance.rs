//! The exponentially weighted mean and variance.

use crate::accumulator::impl_accumulator;
use crate::float::{clamp_non_negative, two_sum};
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
/// rounding noise, in any order of the data), and on data around one level
/// the shift stays put.
///
/// A weight of 1 for the new value (`Factor(1)`, `Decay(0)`) keeps only
/// the last value, so each push seeds the state afresh: mean `x`, variance
/// 0, even after a NaN or ±∞.
///
/// Empty → every statistic is `None`; one value → variance 0. NaN and ±∞
/// propagate (until a weight of 1 for the new value replaces them).
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
/// assert!((ew.mean().unwrap() - 0.7 / 3.0).abs() < 1e-15);
/// assert!((ew.variance().unwrap() / (0.08 / 9.0) - 1.0).abs() < 1e-12);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(
        try_from = "EwVarianceState<F>",
        into = "EwVarianceState<F>",
        bound = "F: Float + serde::Serialize + serde::de::DeserializeOwned"
    )
)]
pub struct EwVariance<F> {
    momentum: Momentum<F>,
    count: u64,
    /// A value near the mean: the first value (when finite), moved onto
    /// the running mean when the mean leaves it behind.
    shift: F,
    /// mean − shift.
    offset: F,
    var: F,
}

impl<F: Float> EwVariance<F> {
    /// An empty accumulator, seeded by the first value pushed.
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
            momentum: momentum.validate()?,
            count: 0,
            shift: F::zero(),
            offset: F::zero(),
            var: F::zero(),
        })
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
        let n = self.count.saturating_add(1);
        if self.count == 0 || self.momentum.forgets(n) {
            // The first value, or a weight of 1 for the new value
            // (`Factor(1)`, `Decay(0)`): nothing of the old state is left,
            // so the value seeds the state afresh, even after NaN or ±∞.
            self.seed(x, n);
            return;
        }
        let (alpha, beta) = self.momentum.weights(n);
        let y = x - self.shift;
        let diff = y - self.offset;
        let incr = alpha * diff;
        // `Momentum::blend(offset, y, n)`, with its weights at hand.
        self.offset = alpha * y + beta * self.offset;
        self.var = beta * (self.var + diff * incr);
        self.count = n;
        // Re-base when the shift lies further from the mean than the mean
        // from 0 plus this update's step: then `x − shift` would cost more
        // digits than the plain recursion loses on `x − mean`. The move is
        // exact (mean = shift + offset before and after), and on data that
        // keeps its level it never fires.
        let mean = self.shift + self.offset;
        if self.offset.abs() > mean.abs() + incr.abs() {
            (self.shift, self.offset) = two_sum(self.shift, self.offset);
        }
    }

    /// Starts afresh at `x`, the `n`-th value: mean `x`, variance 0.
    #[inline]
    fn seed(&mut self, x: F, n: u64) {
        // An infinite shift would turn every later deviation into NaN.
        (self.shift, self.offset) = if x.is_finite() {
            (x, F::zero())
        } else {
            (F::zero(), x)
        };
        self.var = F::zero();
        self.count = n;
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

    /// The number of values pushed.
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
        self.count
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
        self.momentum
    }

    /// The exponentially weighted mean, or `None` when empty.
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
        (self.count > 0).then(|| self.shift + self.offset)
    }

    /// The exponentially weighted (population) variance, or `None` when
    /// empty. Never negative; NaN passes through.
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
        (self.count > 0).then(|| clamp_non_negative(self.var))
    }

    /// The exponentially weighted standard deviation, √variance, or `None`
    /// when empty.
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

    /// Forgets every value, keeping the momentum.
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
        self.count = 0;
        self.shift = F::zero();
        self.offset = F::zero();
        self.var = F::zero();
    }
}

impl_accumulator!(EwVariance);

/// The serialized form of [`EwVariance`], validated on the way in.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct EwVarianceState<F> {
    momentum: Momentum<F>,
    count: u64,
    shift: F,
    offset: F,
    variance: F,
}

#[cfg(feature = "serde")]
impl<F: Float> TryFrom<EwVarianceState<F>> for EwVariance<F> {
    type Error = Error;
    fn try_from(s: EwVarianceState<F>) -> Result<Self, Error> {
        let momentum = s.momentum.validate()?;
        if s.count == 0
            && (s.shift != F::zero() || s.offset != F::zero() || s.variance != F::zero())
        {
            return Err(Error::state("count is 0 but the statistics are not"));
        }
        if s.variance < F::zero() {
            return Err(Error::state(alloc::format!(
                "variance must be non-negative, got {}",
                s.variance
            )));
        }
        if s.count == 1 && s.variance != F::zero() {
            return Err(Error::state(alloc::format!(
                "variance must be 0 when count is 1, got {}",
                s.variance
            )));
        }
        Ok(Self {
            momentum,
            count: s.count,
            shift: s.shift,
            offset: s.offset,
            var: s.variance,
        })
    }
}

#[cfg(feature = "serde")]
impl<F> From<EwVariance<F>> for EwVarianceState<F> {
    fn from(e: EwVariance<F>) -> Self {
        Self {
            momentum: e.momentum,
            count: e.count,
            shift: e.shift,
            offset: e.offset,
            variance: e.var,
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
