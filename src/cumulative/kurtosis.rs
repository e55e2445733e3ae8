//! Kurtosis: the fourth central moment, Pébay's update and merge.

use super::shape::shape_statistics;
use crate::float::exactly;
use crate::moments::higher_moments::HigherMoments;
use crate::{Error, Float, VarianceParts};

/// Count, mean, variance, skewness and kurtosis of every value pushed, in
/// constant space.
///
/// Everything [`Skewness`](crate::Skewness) has, plus the fourth central
/// sum M4 = Σ(x − x̄)⁴, updated and merged by Pébay's formulas on
/// deviations from a shifted mean (P. Pébay, *Formulas for robust,
/// one-pass parallel computation of covariances and arbitrary-order
/// statistical moments*, 2008); slices go through blocked kernels that sum
/// the powers of deviations in `f64` lanes.
///
/// - [`kurtosis`](Kurtosis::kurtosis) is the excess kurtosis
///   g2 = m4/m2² − 3 with mₚ = Mₚ/n: `scipy.stats.kurtosis(x)`
///   (`fisher=True, bias=True`);
/// - [`sample_kurtosis`](Kurtosis::sample_kurtosis) is
///   G2 = ((n + 1)·g2 + 6)·(n − 1)/((n − 2)(n − 3)):
///   `scipy.stats.kurtosis(x, bias=False)` and pandas' `Series.kurt()`.
///
/// Empty → every statistic is `None`; skewness and kurtosis are `None` when
/// the variance is 0 (scipy gives NaN there), G1 below three values and G2
/// below four. NaN and ±∞ propagate: the statistics become NaN, as they do
/// when the data's deviations overflow (values near `f64::MAX`).
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
/// `{"count":3,"shift":"1.0","offset":"1.0","m2":"14.0","m3":"18.0","m4":"98.0"}`
/// in JSON, the fields of [`KurtosisParts`] with each float an exact string
/// ([Checkpoints](crate#checkpoints)), validated on the way in.
///
/// # Example
///
/// ```
/// use momenta::Kurtosis;
///
/// let k: Kurtosis<f64> = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0].into_iter().collect();
/// assert_eq!(k.population_variance(), Some(4.0));
/// // scipy.stats.kurtosis: -0.21875; bias=False (and pandas): 0.9406249999999998
/// assert!((k.kurtosis().unwrap() + 0.21875).abs() < 1e-15);
/// assert!((k.sample_kurtosis().unwrap() - 0.9406249999999998).abs() < 1e-14);
/// assert!((k.skewness().unwrap() - 0.65625).abs() < 1e-15);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(into = "KurtosisParts", bound = "F: Float")
)]
pub struct Kurtosis<F> {
    moments: HigherMoments<F, true>,
}

#[cfg(feature = "serde")]
crate::checkpoint::path::restore_from!([F: Float] Kurtosis<F>, KurtosisParts);

shape_statistics!(Kurtosis, true);

impl<F: Float> Kurtosis<F> {
    /// The excess kurtosis g2 = m4/m2² − 3 (mₚ = Σ(x − x̄)ᵖ/n), as
    /// `scipy.stats.kurtosis(x)` computes it; `None` when empty or when
    /// the variance is 0.
    ///
    /// ```
    /// use momenta::Kurtosis;
    /// let k = Kurtosis::<f64>::from_slice(&[1.0, 2.0, 3.0, 4.0, 5.0, 9.0]);
    /// assert!((k.kurtosis().unwrap() + 0.285).abs() < 1e-15);
    /// assert_eq!(Kurtosis::<f64>::from_slice(&[2.0, 2.0]).kurtosis(), None);
    /// ```
    #[must_use]
    pub fn kurtosis(&self) -> Option<F> {
        self.moments.kurtosis()
    }

    /// The sample excess kurtosis G2 = ((n + 1)·g2 + 6)·(n − 1)/((n − 2)(n − 3)),
    /// as `scipy.stats.kurtosis(x, bias=False)` and pandas' `Series.kurt()`
    /// compute it; `None` below four values or when the variance is 0.
    ///
    /// ```
    /// use momenta::Kurtosis;
    /// let k = Kurtosis::<f64>::from_slice(&[1.0, 2.0, 3.0, 4.0, 5.0, 9.0]);
    /// assert!((k.sample_kurtosis().unwrap() - 1.66875).abs() < 1e-14);
    /// assert_eq!(Kurtosis::<f64>::from_slice(&[1.0, 2.0, 4.0]).sample_kurtosis(), None);
    /// ```
    #[must_use]
    pub fn sample_kurtosis(&self) -> Option<F> {
        self.moments.sample_kurtosis()
    }

    /// The whole state as plain `f64` data, to send to another process and
    /// rebuild there with [`from_parts`](Kurtosis::from_parts). Lossless for
    /// either `F`: the rebuilt value equals this one and continues bit for
    /// bit, NaN and ±∞ states included.
    ///
    /// ```
    /// use momenta::{Kurtosis, Merge};
    /// let k = Kurtosis::<f32>::from_slice(&[1.0_f32, 2.0, 6.0, 7.0]);
    /// let mut there = Kurtosis::<f32>::from_parts(k.to_parts())?;
    /// assert_eq!(there, k);
    /// there.merge(&k);
    /// assert_eq!(there.count(), 8);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn to_parts(&self) -> KurtosisParts {
        let m = &self.moments;
        KurtosisParts {
            count: m.base.count,
            shift: m.base.shift.as_f64(),
            offset: m.base.offset.as_f64(),
            m2: m.base.m2.as_f64(),
            m3: m.m3.as_f64(),
            m4: m.m4.as_f64(),
        }
    }

    /// Rebuilds the value [`to_parts`](Kurtosis::to_parts) described.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidState`](crate::ErrorKind::InvalidState), naming
    /// the broken invariant, when `m2` or `m4` is negative, when `count` is
    /// 0 and another field is not 0, when `count` is 1 and `m2`, `m3` or
    /// `m4` is neither 0 nor NaN, when a NaN or ±∞ stands where no stream
    /// puts one (as [`Variance::from_parts`](crate::Variance::from_parts)
    /// says; and `m3` or `m4` not NaN beside a NaN `m2`, or not 0 for one
    /// finite value), or when a field is not representable in `F`.
    ///
    /// ```
    /// use momenta::{Kurtosis, KurtosisParts};
    /// let parts = KurtosisParts { count: 3, shift: 1.0, offset: 1.0, m2: 14.0, m3: 18.0, m4: 98.0 };
    /// let k = Kurtosis::<f64>::from_parts(parts)?;
    /// assert_eq!(k.mean(), Some(2.0));
    /// let err = Kurtosis::<f64>::from_parts(KurtosisParts { m4: -1.0, ..parts }).unwrap_err();
    /// assert_eq!(err.to_string(), "invalid state: m4 must be non-negative, got -1.0");
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn from_parts(parts: KurtosisParts) -> Result<Self, Error> {
        let base = VarianceParts {
            count: parts.count,
            shift: parts.shift,
            offset: parts.offset,
            m2: parts.m2,
        };
        let moments = HigherMoments {
            base: base.moments()?,
            m3: exactly("m3", parts.m3)?,
            m4: exactly("m4", parts.m4)?,
        };
        moments.validate()?;
        Ok(Self { moments })
    }
}

/// The whole state of a [`Kurtosis`] as plain `f64` data, for any
/// transport: what [`Kurtosis::to_parts`] gives and
/// [`Kurtosis::from_parts`] takes. The mean is `shift + offset`; `m2`,
/// `m3` and `m4` are Σ(x − mean)², Σ(x − mean)³ and Σ(x − mean)⁴.
///
/// # Example
///
/// ```
/// use momenta::{Kurtosis, KurtosisParts, Merge};
/// let sent: Vec<KurtosisParts> = [&[1.0, 2.0, 3.0][..], &[4.0, 5.0, 9.0]]
///     .iter()
///     .map(|xs| Kurtosis::<f64>::from_slice(xs).to_parts())
///     .collect();
/// let mut total = Kurtosis::<f64>::new();
/// for parts in sent {
///     total.merge(&Kurtosis::from_parts(parts)?);
/// }
/// assert!((total.kurtosis().unwrap() + 0.285).abs() < 1e-15);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct KurtosisParts {
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
    /// Σ(x − mean)⁴.
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub m4: f64,
}

#[cfg(feature = "serde")]
impl<F: Float> TryFrom<KurtosisParts> for Kurtosis<F> {
    type Error = Error;
    fn try_from(parts: KurtosisParts) -> Result<Self, Error> {
        Self::from_parts(parts)
    }
}

#[cfg(feature = "serde")]
impl<F: Float> From<Kurtosis<F>> for KurtosisParts {
    fn from(k: Kurtosis<F>) -> Self {
        k.to_parts()
    }
}
