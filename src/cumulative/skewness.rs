//! Skewness: the third central moment, Pébay's update and merge.

use super::shape::shape_statistics;
use crate::float::exactly;
use crate::moments::higher_moments::HigherMoments;
use crate::{Error, Float, VarianceParts};

/// Count, mean, variance and skewness of every value pushed, in constant
/// space.
///
/// The state is the count, a shift taken from the data, the mean's offset
/// from it, and the central sums M2 = Σ(x − x̄)² and M3 = Σ(x − x̄)³. Each
/// push is Pébay's one-pass update and [`merge`](crate::Merge::merge) his
/// pairwise formula (P. Pébay, *Formulas for robust, one-pass parallel
/// computation of covariances and arbitrary-order statistical moments*,
/// 2008), both on deviations from the shifted mean, as
/// [`Variance`](crate::Variance) does: data whose mean is far larger than
/// its spread keep their digits. Slices go through blocked kernels that
/// sum the powers of deviations in `f64` lanes.
///
/// - [`skewness`](Skewness::skewness) is g1 = m3/m2^1.5 with mₚ = Mₚ/n:
///   `scipy.stats.skew(x)` (`bias=True`);
/// - [`sample_skewness`](Skewness::sample_skewness) is the adjusted
///   Fisher–Pearson G1 = g1·√(n(n − 1))/(n − 2): `scipy.stats.skew(x,
///   bias=False)` and pandas' `Series.skew()`.
///
/// Empty → every statistic is `None`; both skewnesses are `None` when the
/// variance is 0 (scipy gives NaN there), and G1 below three values. NaN
/// and ±∞ propagate: the skewness becomes NaN, as it does when the data's
/// deviations overflow (values near `f64::MAX`).
///
/// **Accuracy**, on data whose mean is 10⁶ times its spread (`1e6 +
/// U(0, 1)³`, and `1e6 + k·2⁻²⁰` on a grid): ≤ 1e-12 relative error pushed
/// one by one or merged, and ≤ 3e-11 through the slice kernels
/// (`tests/momenta/shape.rs` checks both against exact rational values).
/// A skewness below 1 in magnitude is held to that bound absolutely, and
/// the excess kurtosis's error is relative to m4/m2² = g2 + 3: a
/// statistic near 0 (symmetric data, a kurtosis near the normal one) has
/// no relative precision to keep. (scipy and pandas are off by
/// about 1e-9 on the same data.)
///
/// **Serialized form** (feature `serde`, stable):
/// `{"count":3,"shift":"1.0","offset":"1.0","m2":"14.0","m3":"18.0"}` in
/// JSON, the fields of [`SkewnessParts`] with each float an exact string
/// ([Checkpoints](crate#checkpoints)), validated on the way in.
///
/// # Example
///
/// ```
/// use momenta::Skewness;
///
/// let s: Skewness<f64> = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0].into_iter().collect();
/// assert_eq!(s.mean(), Some(5.0));
/// assert_eq!(s.population_variance(), Some(4.0));
/// // scipy.stats.skew: 0.65625; bias=False (and pandas): 0.8184875533567996
/// assert!((s.skewness().unwrap() - 0.65625).abs() < 1e-15);
/// assert!((s.sample_skewness().unwrap() - 0.8184875533567996).abs() < 1e-15);
///
/// // A constant has no skewness.
/// assert_eq!(Skewness::<f64>::from_slice(&[3.0; 10]).skewness(), None);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(into = "SkewnessParts", bound = "F: Float")
)]
pub struct Skewness<F> {
    moments: HigherMoments<F, false>,
}

#[cfg(feature = "serde")]
crate::checkpoint::path::restore_from!([F: Float] Skewness<F>, SkewnessParts);

shape_statistics!(Skewness, false);

impl<F: Float> Skewness<F> {
    /// The whole state as plain `f64` data, to send to another process and
    /// rebuild there with [`from_parts`](Skewness::from_parts). Lossless for
    /// either `F`: the rebuilt value equals this one and continues bit for
    /// bit, NaN and ±∞ states included.
    ///
    /// ```
    /// use momenta::{Merge, Skewness};
    /// let s = Skewness::<f32>::from_slice(&[1.0_f32, 2.0, 6.0]);
    /// let mut there = Skewness::<f32>::from_parts(s.to_parts())?;
    /// assert_eq!(there, s);
    /// there.merge(&s);
    /// assert_eq!(there.count(), 6);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn to_parts(&self) -> SkewnessParts {
        let m = &self.moments;
        SkewnessParts {
            count: m.base.count,
            shift: m.base.shift.as_f64(),
            offset: m.base.offset.as_f64(),
            m2: m.base.m2.as_f64(),
            m3: m.m3.as_f64(),
        }
    }

    /// Rebuilds the value [`to_parts`](Skewness::to_parts) described.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidState`](crate::ErrorKind::InvalidState), naming
    /// the broken invariant, when `m2` is negative, when `count` is 0 and
    /// another field is not 0, when `count` is 1 and `m2` or `m3` is neither
    /// 0 nor NaN, when a NaN or ±∞ stands where no stream puts one (as
    /// [`Variance::from_parts`](crate::Variance::from_parts) says; and
    /// `m3` not NaN beside a NaN `m2`, or not 0 for one finite value), or
    /// when a field is not representable in `F`.
    ///
    /// ```
    /// use momenta::{Skewness, SkewnessParts};
    /// let parts = SkewnessParts { count: 3, shift: 1.0, offset: 1.0, m2: 14.0, m3: 18.0 };
    /// let s = Skewness::<f64>::from_parts(parts)?;
    /// assert_eq!(s.mean(), Some(2.0));
    /// let bad = SkewnessParts { m2: -1.0, ..parts };
    /// assert!(Skewness::<f64>::from_parts(bad).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn from_parts(parts: SkewnessParts) -> Result<Self, Error> {
        let base = VarianceParts {
            count: parts.count,
            shift: parts.shift,
            offset: parts.offset,
            m2: parts.m2,
        };
        let moments = HigherMoments {
            base: base.moments()?,
            m3: exactly("m3", parts.m3)?,
            m4: F::zero(),
        };
        moments.validate()?;
        Ok(Self { moments })
    }
}

/// The whole state of a [`Skewness`] as plain `f64` data, for any
/// transport: what [`Skewness::to_parts`] gives and
/// [`Skewness::from_parts`] takes. The mean is `shift + offset`; `m2` and
/// `m3` are Σ(x − mean)² and Σ(x − mean)³.
///
/// # Example
///
/// ```
/// use momenta::{Merge, Skewness, SkewnessParts};
/// let sent: Vec<SkewnessParts> = [&[1.0, 2.0, 3.0][..], &[4.0, 5.0, 9.0]]
///     .iter()
///     .map(|xs| Skewness::<f64>::from_slice(xs).to_parts())
///     .collect();
/// let mut total = Skewness::<f64>::new();
/// for parts in sent {
///     total.merge(&Skewness::from_parts(parts)?);
/// }
/// assert!((total.skewness().unwrap() - 0.8714212528966688).abs() < 1e-15);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SkewnessParts {
    /// The number of values.
    pub count: u64,
    /// A reference point taken from the data (0 when `count` is 0).
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub shift: f64,
    /// The mean minus the shift.
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub offset: f64,
    /// Σ(x − mean)².
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub m2: f64,
    /// Σ(x − mean)³.
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub m3: f64,
}

#[cfg(feature = "serde")]
impl<F: Float> TryFrom<SkewnessParts> for Skewness<F> {
    type Error = Error;
    fn try_from(parts: SkewnessParts) -> Result<Self, Error> {
        Self::from_parts(parts)
    }
}

#[cfg(feature = "serde")]
impl<F: Float> From<Skewness<F>> for SkewnessParts {
    fn from(s: Skewness<F>) -> Self {
        s.to_parts()
    }
}
