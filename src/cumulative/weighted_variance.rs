//! Weighted mean and variance: West's incremental step with a shift, the
//! pairwise merge.

use crate::float::exactly;
use crate::kernels::Schedule;
use crate::kernels::weighted_moments_of;
use crate::moments::weighted_moments::{WeightedMoments, try_extend};
use crate::{Element, Error, Float};

/// Total weight, weighted mean and weighted variances of every value pushed
/// with a weight, in constant space.
///
/// Each push is West's (1979) incremental step on the value minus a shift
/// taken from the data (the first value with a positive weight), so data
/// like `1e9 + U(0, 1)` keeps its digits; [`merge`](crate::Merge::merge) is
/// the weighted pairwise formula. The mean steps from the heavier side: a
/// value whose weight outweighs everything before it becomes the shift,
/// so weights that differ by hundreds of orders of magnitude cost no
/// digits. The reliability weights' divisor `Σw − Σw²/Σw` is kept by its
/// own sums of positive terms rather than formed from Σw², which with one
/// weight far above the rest keeps none of the others' squares (weights
/// `[1e10, 0.3, 0.7, 0.2]` kept only six of its digits so). Three variances,
/// for the three meanings of a weight:
///
/// | method | divisor | weights are | numpy |
/// |---|---|---|---|
/// | [`population_variance`](Self::population_variance) | Σw | any | `np.cov(x, aweights=w, bias=True)` |
/// | [`sample_variance`](Self::sample_variance) | Σw − 1 | frequencies (counts) | `np.cov(x, fweights=w)` |
/// | [`reliability_variance`](Self::reliability_variance) | Σw − Σw²/Σw | reliabilities | `np.cov(x, aweights=w)` |
///
/// Weights must be finite and non-negative: anything else is an `Err` that
/// changes nothing. A value with weight 0 is left out (it never becomes
/// the shift), except that NaN or ±∞ with weight 0 makes the statistics NaN
/// as `0·NaN` does in numpy. While Σw = 0 every statistic is `None`. NaN
/// and ±∞ with a positive weight propagate as in
/// [`Variance`](crate::Variance).
///
/// There is no `Extend<(F, F)>` nor `FromIterator<(F, F)>`: those traits
/// cannot report an invalid weight, and dropping it silently or panicking
/// both break the crate's input policy. [`try_extend`](Self::try_extend)
/// and [`try_from_iter`](Self::try_from_iter) take pairs and return the
/// error instead.
///
/// **Checkpoints** (feature `serde`): serialized losslessly in any
/// format, and restored to a state that goes on bit for bit; see
/// [Checkpoints](crate#checkpoints).
///
/// # Example
///
/// ```
/// use momenta::WeightedVariance;
///
/// let mut v = WeightedVariance::new();
/// for (x, w) in [(2.0, 1.0), (4.0, 1.0), (8.0, 2.0)] {
///     v.push(x, w)?;
/// }
/// // μ = 5.5, Σw(x − μ)² = 12.25 + 2.25 + 2·6.25 = 27, Σw² = 6.
/// assert_eq!(v.total_weight(), 4.0);
/// assert_eq!(v.mean(), Some(5.5));
/// assert_eq!(v.population_variance(), Some(27.0 / 4.0));
/// assert_eq!(v.sample_variance(), Some(27.0 / 3.0));
/// assert_eq!(v.reliability_variance(), Some(27.0 / (4.0 - 6.0 / 4.0)));
/// assert!(v.push(3.0, -1.0).is_err());
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(into = "WeightedVarianceParts", bound = "F: Float")
)]
pub struct WeightedVariance<F> {
    moments: WeightedMoments<F>,
}

#[cfg(feature = "serde")]
crate::checkpoint::path::restore_from!([F: Float] WeightedVariance<F>, WeightedVarianceParts);

/// The plain state of a [`WeightedVariance`], for any transport and for
/// serde: `f64` whatever the accumulator's float type.
///
/// `mean = shift + offset`; `m2 = Σw(x − mean)²`;
/// `reliability_divisor = Σw − Σw²/Σw`, which is `Σᵢ≠ⱼ wᵢwⱼ / Σw`. The
/// serde form of [`WeightedVariance`] is this struct, and is stable. A NaN
/// or ±∞ pushed with weight 0 before any positive weight is recorded as a
/// NaN `shift` and `m2` with `count` and `total_weight` 0.
///
/// Serialized (feature `serde`) losslessly in any format: in JSON each
/// float is an exact string ([Checkpoints](crate#checkpoints)).
///
/// # Example
///
/// ```
/// use momenta::WeightedVariance;
///
/// let v = WeightedVariance::<f64>::from_slices(&[1.0, 3.0], &[1.0, 3.0])?;
/// let parts = v.to_parts();
/// // Σw − Σw²/Σw = 4 − 10/4 = 2·1·3/4.
/// assert_eq!((parts.count, parts.total_weight, parts.reliability_divisor), (2, 4.0, 1.5));
/// assert_eq!(WeightedVariance::from_parts(parts)?, v);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct WeightedVarianceParts {
    /// Values pushed with a positive weight.
    pub count: u64,
    /// Σw.
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub total_weight: f64,
    /// `Σw − Σw²/Σw = Σᵢ≠ⱼ wᵢwⱼ / Σw`, the divisor of
    /// [`reliability_variance`](WeightedVariance::reliability_variance): 0
    /// for fewer than two positive weights, never above `total_weight`.
    /// (It replaced a field `sum_sq_weights`, Σw², from which the divisor
    /// lost its digits when one weight outweighed the rest.)
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub reliability_divisor: f64,
    /// A value from the data (with a positive weight).
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub shift: f64,
    /// `mean − shift`.
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub offset: f64,
    /// `Σw(x − mean)²`.
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub m2: f64,
}

impl<F: Float> Default for WeightedVariance<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: Float> WeightedVariance<F> {
    /// An empty accumulator.
    ///
    /// ```
    /// let v = momenta::WeightedVariance::<f64>::new();
    /// assert_eq!((v.total_weight(), v.mean()), (0.0, None));
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self {
            moments: WeightedMoments::default(),
        }
    }

    /// Statistics of the values `xs` with weights `ws`, by blocked kernels
    /// in `f64` (the slices may be `f32` or `f64` for either `F`).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch) when
    /// the slices differ in length;
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `weight` for a weight that is negative, NaN or ±∞, or
    /// `weights` when their sum overflows `F`.
    ///
    /// ```
    /// use momenta::WeightedVariance;
    ///
    /// let v = WeightedVariance::<f64>::from_slices(&[1.0, 2.0, 4.0], &[1.0, 2.0, 1.0])?;
    /// assert_eq!(v.mean(), Some(2.25));
    /// let err = WeightedVariance::<f64>::from_slices(&[1.0, 2.0], &[1.0, f64::NAN]).unwrap_err();
    /// assert_eq!(err.to_string(), "weight must be finite and non-negative, got NaN");
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn from_slices<S: Element>(xs: &[S], ws: &[S]) -> Result<Self, Error> {
        Ok(Self {
            moments: weighted_moments_of::<S, F, true>(Schedule::Sequential, xs, ws)?,
        })
    }

    /// [`from_slices`](Self::from_slices) on every rayon thread (feature
    /// `rayon`): the same result, bit for bit, whatever the number of
    /// threads.
    ///
    /// # Errors
    ///
    /// As [`from_slices`](Self::from_slices).
    ///
    /// ```
    /// use momenta::WeightedVariance;
    ///
    /// let xs: Vec<f64> = (0..100_000).map(|i| f64::from(i % 7)).collect();
    /// let ws: Vec<f64> = (0..100_000).map(|i| f64::from(i % 3)).collect();
    /// let par = WeightedVariance::<f64>::par_from_slices(&xs, &ws)?;
    /// assert_eq!(par, WeightedVariance::<f64>::from_slices(&xs, &ws)?);
    /// assert!(WeightedVariance::<f64>::par_from_slices(&xs, &ws[1..]).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[cfg(feature = "rayon")]
    pub fn par_from_slices<S: Element>(xs: &[S], ws: &[S]) -> Result<Self, Error> {
        Ok(Self {
            moments: weighted_moments_of::<S, F, true>(Schedule::Parallel, xs, ws)?,
        })
    }

    /// Adds `x` with weight `w`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `weight` when `w` is negative, NaN or ±∞, or so large that Σw
    /// would overflow; the accumulator is then unchanged.
    ///
    /// ```
    /// let mut v = momenta::WeightedVariance::new();
    /// v.push(1.0, 0.5)?;
    /// v.push(3.0, 1.5)?;
    /// assert_eq!(v.mean(), Some(2.5));
    /// assert!(v.push(9.0, f64::INFINITY).is_err());
    /// assert_eq!(v.mean(), Some(2.5));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[inline]
    pub fn push(&mut self, x: F, w: F) -> Result<(), Error> {
        self.moments.push::<true>(x, w)
    }

    /// Adds every pair `(x, w)` of `iter`, or none of them.
    ///
    /// # Errors
    ///
    /// The first invalid weight's error, as [`push`](Self::push); the
    /// accumulator is then unchanged.
    ///
    /// ```
    /// let mut v = momenta::WeightedVariance::new();
    /// v.try_extend([(1.0, 1.0), (3.0, 1.0)])?;
    /// assert!(v.try_extend([(5.0, 1.0), (7.0, -1.0)]).is_err());
    /// assert_eq!(v.mean(), Some(2.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn try_extend<I: IntoIterator<Item = (F, F)>>(&mut self, iter: I) -> Result<(), Error> {
        try_extend::<F, true>(&mut self.moments, iter)
    }

    /// An accumulator of every pair `(x, w)` of `iter`.
    ///
    /// # Errors
    ///
    /// The first invalid weight's error, as [`push`](Self::push).
    ///
    /// ```
    /// use momenta::WeightedVariance;
    /// let v = WeightedVariance::try_from_iter([(2.0, 3.0), (6.0, 1.0)])?;
    /// assert_eq!(v.mean(), Some(3.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn try_from_iter<I: IntoIterator<Item = (F, F)>>(iter: I) -> Result<Self, Error> {
        let mut v = Self::new();
        v.try_extend(iter)?;
        Ok(v)
    }

    /// The number of values pushed with a positive weight. It saturates at
    /// `u64::MAX`.
    ///
    /// ```
    /// let v = momenta::WeightedVariance::<f64>::from_slices(&[1.0, 2.0, 3.0], &[1.0, 0.0, 2.0]).unwrap();
    /// assert_eq!(v.count(), 2);
    /// ```
    #[must_use]
    pub fn count(&self) -> u64 {
        self.moments.count
    }

    /// Σw, 0 when empty.
    ///
    /// ```
    /// let v = momenta::WeightedVariance::<f64>::from_slices(&[1.0, 2.0], &[0.25, 0.5]).unwrap();
    /// assert_eq!(v.total_weight(), 0.75);
    /// ```
    #[must_use]
    pub fn total_weight(&self) -> F {
        self.moments.weight
    }

    /// The weighted mean `Σwx/Σw`, or `None` while Σw = 0: numpy's
    /// `np.average(x, weights=w)`.
    ///
    /// ```
    /// let v = momenta::WeightedVariance::<f64>::from_slices(&[1.0, 4.0], &[2.0, 1.0]).unwrap();
    /// assert_eq!(v.mean(), Some(2.0));
    /// ```
    #[must_use]
    pub fn mean(&self) -> Option<F> {
        self.moments.mean()
    }

    /// The weighted population variance `Σw(x − μ)²/Σw`, or `None` while
    /// Σw = 0. Never negative. NaN when a merge made Σw overflow.
    ///
    /// ```
    /// let v = momenta::WeightedVariance::<f64>::from_slices(&[1.0, 4.0], &[2.0, 1.0]).unwrap();
    /// assert_eq!(v.population_variance(), Some(2.0));
    /// ```
    #[must_use]
    pub fn population_variance(&self) -> Option<F> {
        self.moments.population_variance()
    }

    /// The variance for frequency weights (a weight counts repetitions),
    /// `Σw(x − μ)²/(Σw − 1)`, or `None` while Σw ≤ 1: numpy's
    /// `np.cov(x, fweights=w)`.
    ///
    /// ```
    /// use momenta::WeightedVariance;
    /// // [1, 1, 4] as frequencies: the sample variance of 1, 1, 4.
    /// let v = WeightedVariance::<f64>::from_slices(&[1.0, 4.0], &[2.0, 1.0]).unwrap();
    /// assert_eq!(v.sample_variance(), Some(3.0));
    /// ```
    #[must_use]
    pub fn sample_variance(&self) -> Option<F> {
        self.moments.sample_variance()
    }

    /// The unbiased variance for reliability weights,
    /// `Σw(x − μ)²/(Σw − Σw²/Σw)`, or `None` with fewer than two positive
    /// weights (or when the divisor underflows to 0): numpy's
    /// `np.cov(x, aweights=w)`. It does not change when every weight is
    /// scaled by the same factor. The divisor keeps its digits when one
    /// weight outweighs the rest (see the type's documentation).
    ///
    /// ```
    /// use momenta::WeightedVariance;
    /// let v = WeightedVariance::<f64>::from_slices(&[1.0, 4.0], &[2.0, 1.0]).unwrap();
    /// assert_eq!(v.reliability_variance(), Some(6.0 / (3.0 - 5.0 / 3.0)));
    /// let one = WeightedVariance::<f64>::from_slices(&[1.0, 4.0], &[2.0, 0.0]).unwrap();
    /// assert_eq!(one.reliability_variance(), None);
    /// ```
    #[must_use]
    pub fn reliability_variance(&self) -> Option<F> {
        self.moments.reliability_variance()
    }

    /// Forgets every value.
    ///
    /// ```
    /// let mut v = momenta::WeightedVariance::<f64>::from_slices(&[1.0], &[1.0]).unwrap();
    /// v.reset();
    /// assert_eq!(v, momenta::WeightedVariance::new());
    /// ```
    pub fn reset(&mut self) {
        *self = Self::new();
    }

    /// The whole state as plain `f64` data; see [`WeightedVarianceParts`].
    ///
    /// ```
    /// let v = momenta::WeightedVariance::<f32>::from_slices(&[1.0_f32, 3.0], &[1.0, 1.0]).unwrap();
    /// assert_eq!(v.to_parts().m2, 2.0);
    /// ```
    #[must_use]
    pub fn to_parts(&self) -> WeightedVarianceParts {
        let m = &self.moments;
        WeightedVarianceParts {
            count: m.count,
            total_weight: m.weight.as_f64(),
            reliability_divisor: m.divisor.as_f64(),
            shift: m.shift.as_f64(),
            offset: m.offset.as_f64(),
            m2: m.m2.as_f64(),
        }
    }

    /// Rebuilds the accumulator [`to_parts`](Self::to_parts) described; it
    /// continues bit for bit as the original would.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidState`](crate::ErrorKind::InvalidState) naming
    /// the broken invariant: a negative total weight, divisor or M2, a
    /// count of 0 with a non-zero total weight (or the reverse), a divisor
    /// above the total weight or not 0 for one weight, a NaN or ±∞ where
    /// no stream puts one (while the total weight is finite, as
    /// [`Variance::from_parts`](crate::Variance::from_parts) says of the
    /// `shift`, `offset` and `m2`), or a field that `F` cannot hold
    /// exactly.
    ///
    /// ```
    /// use momenta::{WeightedVariance, WeightedVarianceParts};
    /// let bad = WeightedVarianceParts { count: 1, total_weight: 0.0, ..Default::default() };
    /// assert!(WeightedVariance::<f64>::from_parts(bad).is_err());
    /// ```
    pub fn from_parts(p: WeightedVarianceParts) -> Result<Self, Error> {
        let m = WeightedMoments {
            count: p.count,
            weight: exactly("total_weight", p.total_weight)?,
            divisor: exactly("reliability_divisor", p.reliability_divisor)?,
            shift: exactly("shift", p.shift)?,
            offset: exactly("offset", p.offset)?,
            m2: exactly("m2", p.m2)?,
        };
        m.validate::<true>()?;
        Ok(Self { moments: m })
    }
}

impl<F: Float> crate::Merge for WeightedVariance<F> {
    /// ```
    /// use momenta::{Merge, WeightedVariance};
    /// let mut a = WeightedVariance::<f64>::from_slices(&[1.0], &[2.0]).unwrap();
    /// a.merge(&WeightedVariance::from_slices(&[4.0], &[1.0]).unwrap());
    /// assert_eq!(a.population_variance(), Some(2.0));
    /// ```
    fn merge(&mut self, other: &Self) {
        self.moments.merge::<true>(&other.moments);
    }
}

impl<F: Float> TryFrom<WeightedVarianceParts> for WeightedVariance<F> {
    type Error = Error;
    fn try_from(p: WeightedVarianceParts) -> Result<Self, Error> {
        Self::from_parts(p)
    }
}

impl<F: Float> From<WeightedVariance<F>> for WeightedVarianceParts {
    fn from(v: WeightedVariance<F>) -> Self {
        v.to_parts()
    }
}
