//! The weighted mean: West's incremental step with a shift, the pairwise
//! merge.

use crate::float::exactly;
use crate::kernels::Schedule;
use crate::kernels::weighted_moments_of;
use crate::moments::weighted_moments::{WeightedMoments, try_extend};
use crate::{Element, Error, Float};

/// Total weight and weighted mean `Σwx/Σw` of every value pushed with a
/// weight, in constant space.
///
/// The state is [`WeightedVariance`](crate::WeightedVariance)'s without the
/// spread: a shift taken from the data (the first value with a positive
/// weight) and the mean's offset from it, updated by West's (1979) step and
/// merged pairwise. Weights must be finite and non-negative: anything else
/// is an `Err` that changes nothing. A finite value with weight 0 is left
/// out; NaN or ±∞ with weight 0 makes the mean NaN (as `0·NaN` does in
/// numpy). While Σw = 0 the mean is `None`.
///
/// There is no `Extend<(F, F)>` nor `FromIterator<(F, F)>`, which could not
/// report an invalid weight; use [`try_extend`](Self::try_extend) and
/// [`try_from_iter`](Self::try_from_iter).
///
/// **Checkpoints** (feature `serde`): serialized losslessly in any
/// format, and restored to a state that goes on bit for bit; see
/// [Checkpoints](crate#checkpoints).
///
/// # Example
///
/// ```
/// use momenta::WeightedMean;
///
/// // Grades 12, 15 and 9 with credits 2, 3 and 1.
/// let mut m = WeightedMean::new();
/// m.push(12.0, 2.0)?;
/// m.push(15.0, 3.0)?;
/// m.push(9.0, 1.0)?;
/// assert_eq!(m.total_weight(), 6.0);
/// assert_eq!(m.mean(), Some(13.0));
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(into = "WeightedMeanParts", bound = "F: Float")
)]
pub struct WeightedMean<F> {
    moments: WeightedMoments<F>,
}

#[cfg(feature = "serde")]
crate::checkpoint::path::restore_from!([F: Float] WeightedMean<F>, WeightedMeanParts);

/// The plain state of a [`WeightedMean`], for any transport and for serde:
/// `f64` whatever the accumulator's float type. `mean = shift + offset`.
/// The serde form of [`WeightedMean`] is this struct, and is stable.
///
/// Serialized (feature `serde`) losslessly in any format: in JSON each
/// float is an exact string ([Checkpoints](crate#checkpoints)).
///
/// # Example
///
/// ```
/// use momenta::WeightedMean;
/// let m = WeightedMean::<f64>::from_slices(&[1.0, 3.0], &[1.0, 3.0])?;
/// let parts = m.to_parts();
/// assert_eq!((parts.count, parts.total_weight), (2, 4.0));
/// assert_eq!(WeightedMean::from_parts(parts)?, m);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct WeightedMeanParts {
    /// Values pushed with a positive weight.
    pub count: u64,
    /// Σw.
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub total_weight: f64,
    /// A value from the data (with a positive weight).
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub shift: f64,
    /// `mean − shift`.
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub offset: f64,
}

impl<F: Float> Default for WeightedMean<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: Float> WeightedMean<F> {
    /// An empty accumulator.
    ///
    /// ```
    /// let m = momenta::WeightedMean::<f32>::new();
    /// assert_eq!(m.mean(), None);
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self {
            moments: WeightedMoments::default(),
        }
    }

    /// The weighted mean of `xs` with weights `ws`, by blocked kernels in
    /// `f64`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch) when
    /// the slices differ in length;
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// for a weight that is negative, NaN or ±∞, or weights whose sum
    /// overflows `F`.
    ///
    /// ```
    /// use momenta::WeightedMean;
    /// let m = WeightedMean::<f64>::from_slices(&[1.0_f32, 4.0], &[2.0, 1.0])?;
    /// assert_eq!(m.mean(), Some(2.0));
    /// assert!(WeightedMean::<f64>::from_slices(&[1.0], &[-1.0]).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn from_slices<S: Element>(xs: &[S], ws: &[S]) -> Result<Self, Error> {
        Ok(Self {
            moments: weighted_moments_of::<S, F, false>(Schedule::Sequential, xs, ws)?,
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
    /// use momenta::WeightedMean;
    ///
    /// let xs: Vec<f64> = (0..100_000).map(|i| f64::from(i % 7)).collect();
    /// let ws: Vec<f64> = (0..100_000).map(|i| f64::from(i % 3)).collect();
    /// let par = WeightedMean::<f64>::par_from_slices(&xs, &ws)?;
    /// assert_eq!(par, WeightedMean::<f64>::from_slices(&xs, &ws)?);
    /// assert!(WeightedMean::<f64>::par_from_slices(&xs, &ws[1..]).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[cfg(feature = "rayon")]
    pub fn par_from_slices<S: Element>(xs: &[S], ws: &[S]) -> Result<Self, Error> {
        Ok(Self {
            moments: weighted_moments_of::<S, F, false>(Schedule::Parallel, xs, ws)?,
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
    /// let mut m = momenta::WeightedMean::new();
    /// m.push(10.0, 1.0)?;
    /// m.push(20.0, 3.0)?;
    /// assert_eq!(m.mean(), Some(17.5));
    /// let err = m.push(0.0, -2.0).unwrap_err();
    /// assert_eq!(err.to_string(), "weight must be finite and non-negative, got -2");
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[inline]
    pub fn push(&mut self, x: F, w: F) -> Result<(), Error> {
        self.moments.push::<false>(x, w)
    }

    /// Adds every pair `(x, w)` of `iter`, or none of them.
    ///
    /// # Errors
    ///
    /// The first invalid weight's error, as [`push`](Self::push); the
    /// accumulator is then unchanged.
    ///
    /// ```
    /// let mut m = momenta::WeightedMean::new();
    /// m.try_extend([(1.0, 1.0), (3.0, 1.0)])?;
    /// assert!(m.try_extend([(5.0, f64::NAN)]).is_err());
    /// assert_eq!(m.mean(), Some(2.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn try_extend<I: IntoIterator<Item = (F, F)>>(&mut self, iter: I) -> Result<(), Error> {
        try_extend::<F, false>(&mut self.moments, iter)
    }

    /// An accumulator of every pair `(x, w)` of `iter`.
    ///
    /// # Errors
    ///
    /// The first invalid weight's error, as [`push`](Self::push).
    ///
    /// ```
    /// let m = momenta::WeightedMean::try_from_iter([(2.0, 3.0), (6.0, 1.0)])?;
    /// assert_eq!(m.mean(), Some(3.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn try_from_iter<I: IntoIterator<Item = (F, F)>>(iter: I) -> Result<Self, Error> {
        let mut m = Self::new();
        m.try_extend(iter)?;
        Ok(m)
    }

    /// The number of values pushed with a positive weight (saturating).
    ///
    /// ```
    /// let m = momenta::WeightedMean::<f64>::from_slices(&[1.0, 2.0], &[0.0, 2.0]).unwrap();
    /// assert_eq!(m.count(), 1);
    /// ```
    #[must_use]
    pub fn count(&self) -> u64 {
        self.moments.count
    }

    /// Σw, 0 when empty.
    ///
    /// ```
    /// let m = momenta::WeightedMean::<f64>::from_slices(&[1.0, 2.0], &[0.25, 0.5]).unwrap();
    /// assert_eq!(m.total_weight(), 0.75);
    /// ```
    #[must_use]
    pub fn total_weight(&self) -> F {
        self.moments.weight
    }

    /// The weighted mean `Σwx/Σw`, or `None` while Σw = 0: numpy's
    /// `np.average(x, weights=w)`.
    ///
    /// ```
    /// let m = momenta::WeightedMean::<f64>::from_slices(&[1.0, 4.0], &[2.0, 1.0]).unwrap();
    /// assert_eq!(m.mean(), Some(2.0));
    /// ```
    #[must_use]
    pub fn mean(&self) -> Option<F> {
        self.moments.mean()
    }

    /// Forgets every value.
    ///
    /// ```
    /// let mut m = momenta::WeightedMean::<f64>::from_slices(&[1.0], &[1.0]).unwrap();
    /// m.reset();
    /// assert_eq!(m, momenta::WeightedMean::new());
    /// ```
    pub fn reset(&mut self) {
        *self = Self::new();
    }

    /// The whole state as plain `f64` data; see [`WeightedMeanParts`].
    ///
    /// ```
    /// let m = momenta::WeightedMean::<f32>::from_slices(&[1.0_f32, 3.0], &[1.0, 1.0]).unwrap();
    /// assert_eq!(m.to_parts().total_weight, 2.0);
    /// ```
    #[must_use]
    pub fn to_parts(&self) -> WeightedMeanParts {
        let m = &self.moments;
        WeightedMeanParts {
            count: m.count,
            total_weight: m.weight.as_f64(),
            shift: m.shift.as_f64(),
            offset: m.offset.as_f64(),
        }
    }

    /// Rebuilds the accumulator [`to_parts`](Self::to_parts) described; it
    /// continues bit for bit as the original would.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidState`](crate::ErrorKind::InvalidState) naming
    /// the broken invariant: a negative total weight, a count of 0 with a
    /// non-zero total weight (or the reverse), a NaN or ±∞ where no stream
    /// puts one (while the total weight is finite: an `offset` of NaN, or
    /// other than 0 beside a NaN `shift` or, in `f64`, an infinite one),
    /// or a field that `F` cannot hold exactly.
    ///
    /// ```
    /// use momenta::{WeightedMean, WeightedMeanParts};
    /// let bad = WeightedMeanParts { count: 2, total_weight: -1.0, shift: 0.0, offset: 0.0 };
    /// assert!(WeightedMean::<f64>::from_parts(bad).is_err());
    /// ```
    pub fn from_parts(p: WeightedMeanParts) -> Result<Self, Error> {
        let m = WeightedMoments {
            count: p.count,
            weight: exactly("total_weight", p.total_weight)?,
            divisor: F::zero(),
            shift: exactly("shift", p.shift)?,
            offset: exactly("offset", p.offset)?,
            m2: F::zero(),
        };
        m.validate::<false>()?;
        Ok(Self { moments: m })
    }
}

impl<F: Float> crate::Merge for WeightedMean<F> {
    /// ```
    /// use momenta::{Merge, WeightedMean};
    /// let mut a = WeightedMean::<f64>::from_slices(&[1.0], &[2.0]).unwrap();
    /// a.merge(&WeightedMean::from_slices(&[4.0], &[1.0]).unwrap());
    /// assert_eq!(a.mean(), Some(2.0));
    /// ```
    fn merge(&mut self, other: &Self) {
        self.moments.merge::<false>(&other.moments);
    }
}

impl<F: Float> TryFrom<WeightedMeanParts> for WeightedMean<F> {
    type Error = Error;
    fn try_from(p: WeightedMeanParts) -> Result<Self, Error> {
        Self::from_parts(p)
    }
}

impl<F: Float> From<WeightedMean<F>> for WeightedMeanParts {
    fn from(m: WeightedMean<F>) -> Self {
        m.to_parts()
    }
}
