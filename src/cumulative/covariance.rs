//! Covariance and Pearson correlation of pairs: a shifted Welford step for
//! the co-moment, Chan's merge.

use crate::float::exactly;
use crate::moments::Moments;
use crate::moments::comoments::CoMoments;
use crate::{Element, Error, Float};

/// Count, means, variances, covariance and Pearson correlation of every
/// pair `(x, y)` pushed, in constant space.
///
/// Each coordinate keeps a shift taken from the data (the first pair) and
/// is updated as [`Variance`](crate::Variance) is; the co-moment
/// `C = Σ(x − x̄)(y − ȳ)` takes a Welford step on the deviations from the
/// shifts, so data like `1e9 + U(0, 1)` keeps its digits (≤ 1e-12 relative
/// error on every path). [`merge`](crate::Merge::merge) is Chan, Golub &
/// LeVeque's pairwise formula for the co-moment. Slices go through blocked
/// kernels that accumulate in `f64`.
///
/// Empty → every statistic is `None`; the sample statistics need two
/// pairs; the correlation is `None` below two pairs or when either variance
/// is 0. The variances are never negative; NaN and ±∞ propagate: a NaN
/// or ±∞ in `x` makes the statistics of `x`, the covariance and the
/// correlation NaN (the mean of `x` becomes ±∞ for an infinity), and leaves
/// those of `y` alone.
///
/// **Checkpoints** (feature `serde`): serialized losslessly in any
/// format, and restored to a state that goes on bit for bit; see
/// [Checkpoints](crate#checkpoints).
///
/// # Example
///
/// ```
/// use momenta::Covariance;
///
/// let mut c = Covariance::<f64>::new();
/// for (x, y) in [(1.0, 2.0), (2.0, 4.0), (3.0, 6.5), (4.0, 7.5)] {
///     c.push(x, y);
/// }
/// assert_eq!(c.mean_x(), Some(2.5));
/// assert_eq!(c.mean_y(), Some(5.0));
/// assert_eq!(c.population_covariance(), Some(9.5 / 4.0));
/// assert_eq!(c.sample_covariance(), Some(9.5 / 3.0));
/// // r = 9.5 / √(5 · 18.5)
/// let r = c.correlation().unwrap();
/// assert!((r - 0.987_762_965_329).abs() < 1e-12);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(into = "CovarianceParts", bound = "F: Float")
)]
pub struct Covariance<F> {
    moments: CoMoments<F>,
}

#[cfg(feature = "serde")]
crate::checkpoint::path::restore_from!([F: Float] Covariance<F>, CovarianceParts);

/// The plain state of a [`Covariance`], for any transport (MPI, a socket,
/// a database row) and for serde: `f64` whatever the accumulator's float
/// type.
///
/// `mean_x = shift_x + offset_x`; `m2_x = Σ(x − x̄)²`; the same for `y`;
/// `comoment = Σ(x − x̄)(y − ȳ)`. The shifts are values from the data;
/// they are part of the state so that a restored accumulator continues bit
/// for bit. The serde form of [`Covariance`] is this struct, and is
/// stable.
///
/// Serialized (feature `serde`) losslessly in any format: in JSON each
/// float is an exact string ([Checkpoints](crate#checkpoints)).
///
/// # Example
///
/// ```
/// use momenta::{Covariance, CovarianceParts};
///
/// let c = Covariance::<f64>::from_slices(&[1.0, 2.0, 3.0], &[1.0, 0.0, -1.0])?;
/// let parts: CovarianceParts = c.to_parts();
/// assert_eq!(parts.count, 3);
/// assert_eq!(parts.comoment, -2.0);
/// assert_eq!(Covariance::from_parts(parts)?, c);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CovarianceParts {
    /// The number of pairs.
    pub count: u64,
    /// A value of `x` from the data that the `x` deviations are taken from.
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub shift_x: f64,
    /// `x̄ − shift_x`.
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub offset_x: f64,
    /// `Σ(x − x̄)²`.
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub m2_x: f64,
    /// A value of `y` from the data that the `y` deviations are taken from.
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub shift_y: f64,
    /// `ȳ − shift_y`.
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub offset_y: f64,
    /// `Σ(y − ȳ)²`.
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub m2_y: f64,
    /// `Σ(x − x̄)(y − ȳ)`.
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub comoment: f64,
}

impl<F: Float> Default for Covariance<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: Float> Covariance<F> {
    /// An empty accumulator.
    ///
    /// ```
    /// let c = momenta::Covariance::<f64>::new();
    /// assert_eq!(c.count(), 0);
    /// assert_eq!(c.population_covariance(), None);
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self {
            moments: CoMoments::default(),
        }
    }

    /// Statistics of the pairs `(xs[i], ys[i])`, computed by the blocked
    /// kernels in `f64` (the slices may be `f32` or `f64` for either `F`).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch) when
    /// the slices differ in length.
    ///
    /// ```
    /// use momenta::Covariance;
    ///
    /// let c = Covariance::<f64>::from_slices(&[1.0_f32, 2.0, 3.0], &[2.0, 4.0, 6.0])?;
    /// assert_eq!(c.sample_covariance(), Some(2.0));
    /// assert_eq!(c.correlation(), Some(1.0));
    ///
    /// let err = Covariance::<f64>::from_slices(&[1.0, 2.0], &[1.0]).unwrap_err();
    /// assert_eq!(err.to_string(), "ys must have length 2, got 1");
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn from_slices<S: Element>(xs: &[S], ys: &[S]) -> Result<Self, Error> {
        check_lengths(xs, ys)?;
        Ok(Self {
            moments: crate::kernels::comoments(xs, ys).cast(),
        })
    }

    /// [`from_slices`](Covariance::from_slices) on every rayon thread: the
    /// same fixed blocks and merge tree, so the result is bit for bit
    /// `from_slices`' with 1, 2 or 16 threads.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch) when
    /// the slices differ in length.
    ///
    /// ```
    /// use momenta::Covariance;
    ///
    /// let xs: Vec<f64> = (0..100_000).map(f64::from).collect();
    /// let ys: Vec<f64> = xs.iter().map(|x| 3.0 - 2.0 * x).collect();
    /// let c = Covariance::<f64>::par_from_slices(&xs, &ys)?;
    /// assert_eq!(c.correlation(), Some(-1.0));
    /// assert_eq!(c, Covariance::from_slices(&xs, &ys)?);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[cfg(feature = "rayon")]
    pub fn par_from_slices<S: Element>(xs: &[S], ys: &[S]) -> Result<Self, Error> {
        check_lengths(xs, ys)?;
        Ok(Self {
            moments: crate::kernels::par_comoments(xs, ys).cast(),
        })
    }

    /// Adds one pair.
    ///
    /// ```
    /// let mut c = momenta::Covariance::new();
    /// c.push(1.0, 10.0);
    /// c.push(3.0, 6.0);
    /// assert_eq!(c.sample_covariance(), Some(-4.0));
    /// ```
    #[inline]
    pub fn push(&mut self, x: F, y: F) {
        self.moments.push(x, y);
    }

    /// Adds the pairs `(xs[i], ys[i])`, through the kernels.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch) when
    /// the slices differ in length; nothing is added then.
    ///
    /// ```
    /// let mut c = momenta::Covariance::<f64>::new();
    /// c.extend_from_slices(&[1.0, 2.0], &[1.0, 3.0])?;
    /// c.extend_from_slices(&[3.0], &[5.0])?;
    /// assert_eq!(c.sample_covariance(), Some(2.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn extend_from_slices<S: Element>(&mut self, xs: &[S], ys: &[S]) -> Result<(), Error> {
        check_lengths(xs, ys)?;
        self.moments
            .merge(&crate::kernels::comoments(xs, ys).cast());
        Ok(())
    }

    /// The number of pairs pushed. It saturates at `u64::MAX` (which only
    /// merges or restored state can reach).
    ///
    /// ```
    /// let c = momenta::Covariance::<f32>::from_slices(&[0.0_f32; 5], &[1.0; 5]).unwrap();
    /// assert_eq!(c.count(), 5);
    /// ```
    #[must_use]
    pub fn count(&self) -> u64 {
        self.moments.count()
    }

    /// The mean of `x`, or `None` when empty.
    ///
    /// ```
    /// let c = momenta::Covariance::<f64>::from_slices(&[1.0, 4.0], &[0.0, 0.0]).unwrap();
    /// assert_eq!(c.mean_x(), Some(2.5));
    /// ```
    #[must_use]
    pub fn mean_x(&self) -> Option<F> {
        self.moments.x.mean()
    }

    /// The mean of `y`, or `None` when empty.
    ///
    /// ```
    /// let c = momenta::Covariance::<f64>::from_slices(&[0.0, 0.0], &[1.0, 4.0]).unwrap();
    /// assert_eq!(c.mean_y(), Some(2.5));
    /// ```
    #[must_use]
    pub fn mean_y(&self) -> Option<F> {
        self.moments.y.mean()
    }

    /// The population (biased) covariance `Σ(x − x̄)(y − ȳ)/n`, or `None`
    /// when empty: numpy's `np.cov(x, y, bias=True)[0, 1]`.
    ///
    /// ```
    /// let c = momenta::Covariance::<f64>::from_slices(&[1.0, 3.0], &[1.0, 5.0]).unwrap();
    /// assert_eq!(c.population_covariance(), Some(2.0));
    /// ```
    #[must_use]
    pub fn population_covariance(&self) -> Option<F> {
        self.moments.covariance(0)
    }

    /// The sample (unbiased) covariance `Σ(x − x̄)(y − ȳ)/(n − 1)`, or
    /// `None` below two pairs: numpy's `np.cov(x, y)[0, 1]`, pandas'
    /// `Series.cov`.
    ///
    /// ```
    /// let c = momenta::Covariance::<f64>::from_slices(&[1.0, 3.0], &[1.0, 5.0]).unwrap();
    /// assert_eq!(c.sample_covariance(), Some(4.0));
    /// ```
    #[must_use]
    pub fn sample_covariance(&self) -> Option<F> {
        self.moments.covariance(1)
    }

    /// Pearson's correlation coefficient `r = C/√(M2x·M2y)`, or `None` below
    /// two pairs or when either variance is 0. Rounding can push `|r|` past
    /// 1 on (nearly) collinear data; the result is clamped to `[−1, 1]`
    /// (NaN passes).
    ///
    /// ```
    /// use momenta::Covariance;
    /// let c = Covariance::<f64>::from_slices(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]).unwrap();
    /// assert_eq!(c.correlation(), Some(-1.0));
    /// let flat = Covariance::<f64>::from_slices(&[1.0, 2.0, 3.0], &[5.0; 3]).unwrap();
    /// assert_eq!(flat.correlation(), None);
    /// ```
    #[must_use]
    pub fn correlation(&self) -> Option<F> {
        self.moments.correlation()
    }

    /// The population variance of `x`, `Σ(x − x̄)²/n`, or `None` when empty.
    ///
    /// ```
    /// let c = momenta::Covariance::<f64>::from_slices(&[1.0, 3.0], &[0.0, 0.0]).unwrap();
    /// assert_eq!(c.population_variance_x(), Some(1.0));
    /// ```
    #[must_use]
    pub fn population_variance_x(&self) -> Option<F> {
        self.moments.x.variance(0)
    }

    /// The sample variance of `x`, `Σ(x − x̄)²/(n − 1)`, or `None` below two
    /// pairs.
    ///
    /// ```
    /// let c = momenta::Covariance::<f64>::from_slices(&[1.0, 3.0], &[0.0, 0.0]).unwrap();
    /// assert_eq!(c.sample_variance_x(), Some(2.0));
    /// ```
    #[must_use]
    pub fn sample_variance_x(&self) -> Option<F> {
        self.moments.x.variance(1)
    }

    /// The population variance of `y`, `Σ(y − ȳ)²/n`, or `None` when empty.
    ///
    /// ```
    /// let c = momenta::Covariance::<f64>::from_slices(&[0.0, 0.0], &[1.0, 3.0]).unwrap();
    /// assert_eq!(c.population_variance_y(), Some(1.0));
    /// ```
    #[must_use]
    pub fn population_variance_y(&self) -> Option<F> {
        self.moments.y.variance(0)
    }

    /// The sample variance of `y`, `Σ(y − ȳ)²/(n − 1)`, or `None` below two
    /// pairs.
    ///
    /// ```
    /// let c = momenta::Covariance::<f64>::from_slices(&[0.0, 0.0], &[1.0, 3.0]).unwrap();
    /// assert_eq!(c.sample_variance_y(), Some(2.0));
    /// ```
    #[must_use]
    pub fn sample_variance_y(&self) -> Option<F> {
        self.moments.y.variance(1)
    }

    /// Forgets every pair.
    ///
    /// ```
    /// let mut c = momenta::Covariance::<f64>::from_slices(&[1.0], &[2.0]).unwrap();
    /// c.reset();
    /// assert_eq!(c, momenta::Covariance::new());
    /// ```
    pub fn reset(&mut self) {
        *self = Self::new();
    }

    /// The whole state as plain `f64` data; see [`CovarianceParts`].
    ///
    /// ```
    /// use momenta::Covariance;
    /// let c = Covariance::<f32>::from_slices(&[1.0_f32, 2.0], &[4.0, 2.0]).unwrap();
    /// let parts = c.to_parts();
    /// assert_eq!((parts.count, parts.comoment), (2, -1.0));
    /// ```
    #[must_use]
    pub fn to_parts(&self) -> CovarianceParts {
        let m = &self.moments;
        CovarianceParts {
            count: m.count(),
            shift_x: m.x.shift.as_f64(),
            offset_x: m.x.offset.as_f64(),
            m2_x: m.x.m2.as_f64(),
            shift_y: m.y.shift.as_f64(),
            offset_y: m.y.offset.as_f64(),
            m2_y: m.y.m2.as_f64(),
            comoment: m.c.as_f64(),
        }
    }

    /// Rebuilds the accumulator [`to_parts`](Covariance::to_parts)
    /// described; it continues bit for bit as the original would.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidState`](crate::ErrorKind::InvalidState) naming
    /// the broken invariant: a negative M2, a count of 0 with non-zero
    /// fields, M2 or a co-moment other than 0 for one pair, a co-moment
    /// larger than `√(m2_x·m2_y)` (Cauchy–Schwarz), a NaN or ±∞ where no
    /// stream puts one (in a coordinate, as
    /// [`Variance::from_parts`](crate::Variance::from_parts) says; a
    /// `comoment` of NaN or ±∞ beside two finite M2), or a field that `F`
    /// cannot hold exactly.
    ///
    /// ```
    /// use momenta::{Covariance, CovarianceParts};
    ///
    /// let mut parts = Covariance::<f64>::from_slices(&[1.0, 2.0], &[1.0, 2.0])?.to_parts();
    /// parts.comoment = 10.0;
    /// assert!(Covariance::<f64>::from_parts(parts).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn from_parts(parts: CovarianceParts) -> Result<Self, Error> {
        let moments = |shift: (&str, f64), offset: (&str, f64), m2: (&str, f64)| {
            Ok::<_, Error>(Moments {
                count: parts.count,
                shift: exactly::<F>(shift.0, shift.1)?,
                offset: exactly::<F>(offset.0, offset.1)?,
                m2: exactly::<F>(m2.0, m2.1)?,
            })
        };
        let m = CoMoments {
            x: moments(
                ("shift_x", parts.shift_x),
                ("offset_x", parts.offset_x),
                ("m2_x", parts.m2_x),
            )?,
            y: moments(
                ("shift_y", parts.shift_y),
                ("offset_y", parts.offset_y),
                ("m2_y", parts.m2_y),
            )?,
            c: exactly::<F>("comoment", parts.comoment)?,
        };
        m.validate()?;
        Ok(Self { moments: m })
    }
}

fn check_lengths<S>(xs: &[S], ys: &[S]) -> Result<(), Error> {
    if xs.len() == ys.len() {
        Ok(())
    } else {
        Err(Error::length("ys", xs.len(), ys.len()))
    }
}

impl<F: Float> crate::Merge for Covariance<F> {
    /// ```
    /// use momenta::{Covariance, Merge};
    /// let mut a = Covariance::<f64>::from_slices(&[1.0, 2.0], &[2.0, 1.0]).unwrap();
    /// a.merge(&Covariance::from_slices(&[3.0, 4.0], &[4.0, 3.0]).unwrap());
    /// assert_eq!(a.count(), 4);
    /// assert_eq!(a.sample_covariance(), Some(1.0));
    /// assert_eq!(a.correlation(), Some(0.6));
    /// ```
    fn merge(&mut self, other: &Self) {
        self.moments.merge(&other.moments);
    }
}

impl<F: Float> Extend<(F, F)> for Covariance<F> {
    fn extend<I: IntoIterator<Item = (F, F)>>(&mut self, iter: I) {
        for (x, y) in iter {
            self.push(x, y);
        }
    }
}

impl<'a, F: Float> Extend<&'a (F, F)> for Covariance<F> {
    fn extend<I: IntoIterator<Item = &'a (F, F)>>(&mut self, iter: I) {
        for &(x, y) in iter {
            self.push(x, y);
        }
    }
}

impl<F: Float> FromIterator<(F, F)> for Covariance<F> {
    /// ```
    /// use momenta::Covariance;
    /// let c: Covariance<f64> = [(1.0, 1.0), (2.0, 3.0)].into_iter().collect();
    /// assert_eq!(c.sample_covariance(), Some(1.0));
    /// ```
    fn from_iter<I: IntoIterator<Item = (F, F)>>(iter: I) -> Self {
        let mut c = Self::new();
        c.extend(iter);
        c
    }
}

impl<'a, F: Float> FromIterator<&'a (F, F)> for Covariance<F> {
    fn from_iter<I: IntoIterator<Item = &'a (F, F)>>(iter: I) -> Self {
        let mut c = Self::new();
        c.extend(iter);
        c
    }
}

impl<F: Float> TryFrom<CovarianceParts> for Covariance<F> {
    type Error = Error;
    fn try_from(parts: CovarianceParts) -> Result<Self, Error> {
        Self::from_parts(parts)
    }
}

impl<F: Float> From<Covariance<F>> for CovarianceParts {
    fn from(c: Covariance<F>) -> Self {
        c.to_parts()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_offset_keeps_its_digits() {
        // x = 1e9 + k/8, y = −2e9 + (k mod 3)/4: spreads exact in f64.
        let xs: alloc::vec::Vec<f64> = (0..8).map(|k| 1e9 + f64::from(k) / 8.0).collect();
        let ys: alloc::vec::Vec<f64> = (0..8).map(|k| -2e9 + f64::from(k % 3) / 4.0).collect();
        // Σ(k − 3.5)((k mod 3) − 7/8)/32 = (Σ k·(k mod 3) − 8·3.5·7/8)/32
        // = (25 − 24.5)/32... with Σ k·(k mod 3) = 0+1+4+0+4+10+0+7 = 26: 1.5/32.
        let expected = 1.5 / 32.0 / 8.0;
        let mut c = Covariance::new();
        xs.iter().zip(&ys).for_each(|(&x, &y)| c.push(x, y));
        assert_eq!(c.population_covariance(), Some(expected));
        let s = Covariance::<f64>::from_slices(&xs, &ys).unwrap();
        assert_eq!(s.population_covariance(), Some(expected));
    }

    #[test]
    fn parts_round_trip() {
        let c = Covariance::<f32>::from_slices(&[1.0_f32, 2.5, 4.0], &[0.5, 0.25, 3.0]).unwrap();
        assert_eq!(Covariance::from_parts(c.to_parts()), Ok(c));
        let mut p = Covariance::<f64>::from_slices(&[1.0, 2.0], &[3.0, 1.0])
            .unwrap()
            .to_parts();
        p.shift_x = 0.1;
        assert!(Covariance::<f32>::from_parts(p).is_err());
    }
}
