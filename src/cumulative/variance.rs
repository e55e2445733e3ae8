//! Mean and variance: Welford's update, Chan's merge.

use crate::accumulator::impl_accumulator;
use crate::float::exactly;
use crate::kernels::MomentsLeaf;
use crate::moments::Moments;
use crate::{Element, Error, Float};

/// Count, mean and variance of every value pushed, in constant space.
///
/// Each push is a Welford step on the value minus a shift taken from the
/// data (the first value), so data whose mean is far larger than its spread
/// — `1e9 + U(0, 1)`, say — keeps its digits. [`merge`](crate::Merge::merge)
/// is Chan, Golub & LeVeque's pairwise formula, exact in real arithmetic,
/// which is what makes parallel and distributed reductions correct.
/// Slices go through blocked kernels that accumulate in `f64`.
///
/// Empty → every statistic is `None`; the sample variance needs two values.
/// The variance is never negative; NaN and ±∞ propagate.
///
/// **Checkpoints** (feature `serde`): serialized losslessly in any
/// format, and restored to a state that goes on bit for bit; see
/// [Checkpoints](crate#checkpoints).
///
/// # Example
///
/// ```
/// use momenta::Variance;
///
/// let mut v = Variance::new();
/// for x in [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0] {
///     v.push(x);
/// }
/// assert_eq!(v.mean(), Some(5.0));
/// assert_eq!(v.population_variance(), Some(4.0));
/// assert_eq!(v.population_std_dev(), Some(2.0));
/// assert_eq!(v.sample_variance(), Some(32.0 / 7.0));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(into = "Moments<F>", bound = "F: Float")
)]
pub struct Variance<F> {
    moments: Moments<F>,
}

#[cfg(feature = "serde")]
crate::checkpoint::path::restore_from!([F: Float] Variance<F>, Moments<F>);

impl<F: Float> Default for Variance<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: Float> Variance<F> {
    /// An empty accumulator.
    ///
    /// ```
    /// let v = momenta::Variance::<f64>::new();
    /// assert_eq!(v.count(), 0);
    /// assert_eq!(v.mean(), None);
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self {
            moments: Moments::default(),
        }
    }

    /// Statistics of a slice of `f32` or `f64`, computed by the blocked
    /// kernels in `f64`: `Variance::<f64>::from_slice(&data_f32)` gives
    /// f64-accurate statistics of f32 data.
    ///
    /// # Name the accumulator's float type
    ///
    /// The data's float type and the accumulator's are independent (either
    /// accumulator takes either slice), so the compiler cannot infer one
    /// from the other: `let v = Variance::from_slice(&xs);` alone is
    /// error E0282/E0283, "type annotations needed". Write
    /// `Variance::<f64>::from_slice(&xs)` or `let v: Variance<f64> = …`.
    /// (It compiles without either when a later use fixes the type, e.g.
    /// comparing `v.mean()` with `Some(2.5)`.)
    ///
    /// ```
    /// use momenta::Variance;
    /// let xs = [1.0_f32, 2.0, 3.0, 4.0];
    /// let v = Variance::<f64>::from_slice(&xs);
    /// assert_eq!(v.population_variance(), Some(1.25));
    /// let w: Variance<f32> = Variance::from_slice(&xs);
    /// assert_eq!(w.population_variance(), Some(1.25));
    /// ```
    ///
    /// ```compile_fail
    /// // error[E0282]: type annotations needed
    /// let v = momenta::Variance::from_slice(&[1.0_f64, 2.0]);
    /// println!("{:?}", v.mean());
    /// ```
    #[must_use]
    pub fn from_slice<S: Element>(xs: &[S]) -> Self {
        Self {
            moments: crate::kernels::moments(xs).cast(),
        }
    }

    /// Statistics of a slice of `f32` or `f64` on every rayon thread.
    ///
    /// The slice is cut into the same fixed blocks as
    /// [`from_slice`](Variance::from_slice) and their moments are merged in
    /// the same fixed tree, parts of which run on different threads: the
    /// result is bit-for-bit `from_slice`'s, with 1, 2 or 16 threads.
    ///
    /// ```
    /// use momenta::Variance;
    ///
    /// let xs: Vec<f64> = (0..100_000).map(|i| f64::from(i % 2)).collect();
    /// let v = Variance::<f64>::par_from_slice(&xs);
    /// assert_eq!(v.mean(), Some(0.5));
    /// assert_eq!(v.population_variance(), Some(0.25));
    /// assert_eq!(v, Variance::from_slice(&xs));
    /// ```
    #[cfg(feature = "rayon")]
    #[must_use]
    pub fn par_from_slice<S: Element>(xs: &[S]) -> Self {
        Self {
            moments: crate::kernels::par_moments(xs).cast(),
        }
    }

    /// Adds one value.
    ///
    /// `push` takes the accumulator's own float type `F`. To push an `f32`
    /// into a `Variance<f64>`, write `v.push(x.into())` (exact). `push` is
    /// not generic over the input type, unlike
    /// [`extend_from_slice`](Variance::extend_from_slice): the type of the
    /// first value pushed is what fixes `F` in `let mut v =
    /// Variance::new(); v.push(x);`, and a generic `push` would make that
    /// "type annotations needed". (Generic code can also use
    /// [`Accumulator<f32>`](crate::Accumulator), which `Variance<f64>`
    /// implements.)
    ///
    /// ```
    /// let mut v = momenta::Variance::new();
    /// v.push(1.0);
    /// v.push(3.0);
    /// assert_eq!(v.sample_variance(), Some(2.0));
    ///
    /// let mut wide = momenta::Variance::<f64>::new();
    /// wide.push(0.1_f32.into());
    /// assert_eq!(wide.mean(), Some(f64::from(0.1_f32)));
    /// ```
    #[inline]
    pub fn push(&mut self, x: F) {
        self.moments.push(x);
    }

    /// Adds every value of a slice of `f32` or `f64`, through the kernels.
    ///
    /// ```
    /// let mut v = momenta::Variance::<f64>::new();
    /// v.extend_from_slice(&[1.0_f64, 2.0]);
    /// v.extend_from_slice(&[3.0_f32]);
    /// assert_eq!(v.sample_variance(), Some(1.0));
    /// ```
    pub fn extend_from_slice<S: Element>(&mut self, xs: &[S]) {
        let root = MomentsLeaf(crate::kernels::moments(xs));
        crate::FromSlice::<S>::absorb_root(self, root);
    }

    /// The number of values pushed. It saturates at `u64::MAX` (which only
    /// merges or restored state can reach); past that the statistics stay
    /// those of the values seen, weighted as if there were `u64::MAX`.
    ///
    /// ```
    /// assert_eq!(momenta::Variance::<f32>::from_slice(&[0.0_f32; 5]).count(), 5);
    /// ```
    #[must_use]
    pub fn count(&self) -> u64 {
        self.moments.count
    }

    /// The mean, or `None` when empty.
    ///
    /// ```
    /// assert_eq!(momenta::Variance::<f64>::from_slice(&[1.0, 4.0]).mean(), Some(2.5));
    /// ```
    #[must_use]
    pub fn mean(&self) -> Option<F> {
        self.moments.mean()
    }

    /// The sum of squared deviations from the mean, Σ(x − x̄)², or `None`
    /// when empty. Never negative.
    ///
    /// ```
    /// assert_eq!(momenta::Variance::<f64>::from_slice(&[1.0, 3.0]).sum_squared_deviations(), Some(2.0));
    /// ```
    #[must_use]
    pub fn sum_squared_deviations(&self) -> Option<F> {
        (self.moments.count > 0).then(|| self.moments.m2())
    }

    /// The population (biased) variance Σ(x − x̄)²/n, or `None` when empty.
    ///
    /// ```
    /// assert_eq!(momenta::Variance::<f64>::from_slice(&[1.0, 3.0]).population_variance(), Some(1.0));
    /// ```
    #[must_use]
    pub fn population_variance(&self) -> Option<F> {
        self.moments.variance(0)
    }

    /// The sample (unbiased) variance Σ(x − x̄)²/(n − 1), or `None` below two
    /// values.
    ///
    /// ```
    /// use momenta::Variance;
    /// assert_eq!(Variance::<f64>::from_slice(&[1.0, 3.0]).sample_variance(), Some(2.0));
    /// assert_eq!(Variance::<f64>::from_slice(&[1.0]).sample_variance(), None);
    /// ```
    #[must_use]
    pub fn sample_variance(&self) -> Option<F> {
        self.moments.variance(1)
    }

    /// The population standard deviation, √(population variance).
    ///
    /// ```
    /// assert_eq!(momenta::Variance::<f64>::from_slice(&[1.0, 3.0]).population_std_dev(), Some(1.0));
    /// ```
    #[must_use]
    pub fn population_std_dev(&self) -> Option<F> {
        self.population_variance().map(F::sqrt)
    }

    /// The sample standard deviation, √(sample variance).
    ///
    /// ```
    /// assert_eq!(momenta::Variance::<f64>::from_slice(&[0.0, 4.0, 8.0]).sample_std_dev(), Some(4.0));
    /// ```
    #[must_use]
    pub fn sample_std_dev(&self) -> Option<F> {
        self.sample_variance().map(F::sqrt)
    }

    /// Forgets every value.
    ///
    /// ```
    /// let mut v = momenta::Variance::<f64>::from_slice(&[1.0, 2.0]);
    /// v.reset();
    /// assert_eq!(v, momenta::Variance::new());
    /// ```
    pub fn reset(&mut self) {
        *self = Self::new();
    }

    /// The whole state as plain `f64` data, to send to another process
    /// and rebuild there with [`from_parts`](Variance::from_parts).
    ///
    /// Lossless for either `F`: the rebuilt value equals this one and
    /// continues bit for bit as it would (later pushes and merges give
    /// identical bits), NaN and ±∞ states included.
    ///
    /// ```
    /// use momenta::{Merge, Variance};
    /// let v = Variance::<f32>::from_slice(&[1e4_f32, 1e4 + 0.01, 1e4 + 0.02]);
    /// let parts = v.to_parts();
    /// assert_eq!(parts.count, 3);
    /// // ... send `parts` (four numbers) to another rank ...
    /// let mut there = Variance::<f32>::from_parts(parts)?;
    /// assert_eq!(there, v);
    /// there.merge(&v);
    /// assert_eq!(there.count(), 6);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn to_parts(&self) -> VarianceParts {
        VarianceParts::of(&self.moments)
    }

    /// Rebuilds the value [`to_parts`](Variance::to_parts) described.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidState`](crate::ErrorKind::InvalidState), naming
    /// the broken invariant, when `m2` is negative, when `count` is 0 and
    /// another field is not 0, when `count` is 1 and `m2` is neither 0 nor
    /// NaN, when a NaN or ±∞ stands where no stream puts one (an `offset`
    /// of NaN; a NaN `shift` beside an `offset` other than 0 or a finite
    /// `m2`; a NaN `m2` beside a finite `shift`; in `f64`, an infinite
    /// `shift` beside an `offset` other than 0 or an `m2` other than NaN),
    /// or when a field is not representable in `F` (parts of a
    /// `Variance<f64>` rebuilt as a `Variance<f32>`).
    ///
    /// ```
    /// use momenta::{Variance, VarianceParts};
    /// let v = Variance::<f64>::from_slice(&[1.0, 2.0, 4.0]);
    /// assert_eq!(Variance::from_parts(v.to_parts())?, v);
    ///
    /// let bad = VarianceParts { count: 3, shift: 1.0, offset: 0.0, m2: -1.0 };
    /// let err = Variance::<f64>::from_parts(bad).unwrap_err();
    /// assert_eq!(err.to_string(), "invalid state: m2 must be non-negative, got -1.0");
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn from_parts(parts: VarianceParts) -> Result<Self, Error> {
        parts.moments().map(|moments| Self { moments })
    }
}

/// The whole state of a [`Variance`] — or of one channel of
/// [`BatchStats`](crate::batchnorm::BatchStats) — as plain `f64` data, for
/// any transport (MPI, a socket, a database row): what
/// [`Variance::to_parts`] gives and [`Variance::from_parts`] takes.
///
/// The fields are the accumulator's internal moments, not a rounded mean:
/// the mean is `shift + offset`, where the shift is a value taken from the
/// data and the offset is small, so data like `1e4 + 0.01·U(0, 1)` keep
/// their digits. Every field is exact for `Variance<f32>` too, so the
/// exchange loses nothing; merge the rebuilt values, never the means.
///
/// Serialized (feature `serde`) losslessly in any format: in JSON each
/// float is an exact string ([Checkpoints](crate#checkpoints)).
///
/// # Example
///
/// ```
/// use momenta::{Merge, Variance, VarianceParts};
///
/// // Each rank's statistics, as four numbers each.
/// let sent: Vec<VarianceParts> = [&[1.0, 2.0, 3.0, 4.0, 5.0][..], &[10.0, 11.0, 12.0]]
///     .iter()
///     .map(|xs| Variance::<f64>::from_slice(xs).to_parts())
///     .collect();
/// let mut total = Variance::<f64>::new();
/// for parts in sent {
///     total.merge(&Variance::from_parts(parts)?);
/// }
/// assert_eq!(total.population_variance(), Some(16.5));
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct VarianceParts {
    /// The number of values.
    pub count: u64,
    /// A reference point taken from the data (0 when `count` is 0).
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub shift: f64,
    /// The mean minus the shift.
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub offset: f64,
    /// The sum of squared deviations from the mean, Σ(x − mean)².
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub m2: f64,
}

impl VarianceParts {
    /// The parts of `m`, exactly.
    pub(crate) fn of<F: Float>(m: &Moments<F>) -> Self {
        Self {
            count: m.count,
            shift: m.shift.as_f64(),
            offset: m.offset.as_f64(),
            m2: m.m2.as_f64(),
        }
    }

    /// The moments these parts describe, validated as deserialized state
    /// is, and held exactly by `F`.
    pub(crate) fn moments<F: Float>(self) -> Result<Moments<F>, Error> {
        let m = self.read::<F>()?;
        m.validate()?;
        Ok(m)
    }

    /// The moments these parts describe, validated as moments received
    /// from elsewhere are (`Moments::validate_received`: a `BatchStats`
    /// channel, which `BatchStats::from_mean_m2` may have filled with any
    /// mean beside any M2).
    pub(crate) fn received_moments<F: Float>(self) -> Result<Moments<F>, Error> {
        let m = self.read::<F>()?;
        m.validate_received()?;
        Ok(m)
    }

    /// The moments, each field held exactly by `F`, not yet validated.
    fn read<F: Float>(self) -> Result<Moments<F>, Error> {
        Ok(Moments {
            count: self.count,
            shift: exactly::<F>("shift", self.shift)?,
            offset: exactly::<F>("offset", self.offset)?,
            m2: exactly::<F>("m2", self.m2)?,
        })
    }
}

impl<F: Float> crate::Merge for Variance<F> {
    /// ```
    /// use momenta::{Merge, Variance};
    /// let mut a = Variance::<f64>::from_slice(&[1.0, 2.0, 3.0, 4.0, 5.0]);
    /// a.merge(&Variance::from_slice(&[10.0, 11.0, 12.0]));
    /// assert_eq!(a.population_variance(), Some(16.5));
    /// ```
    fn merge(&mut self, other: &Self) {
        self.moments.merge(&other.moments);
    }
}

impl<F: Float> crate::kernels::Sealed for Variance<F> {}

impl<F: Float, S: Element> crate::FromSlice<S> for Variance<F> {
    type Leaf = MomentsLeaf;

    #[inline]
    fn leaf(block: &[S]) -> MomentsLeaf {
        MomentsLeaf(crate::kernels::block_moments(block))
    }

    #[inline]
    fn merge_leaves(a: &mut MomentsLeaf, b: MomentsLeaf) {
        a.0.merge(&b.0);
    }

    fn absorb_root(&mut self, root: MomentsLeaf) {
        self.moments.merge(&root.0.cast());
    }
}

impl_accumulator!(Variance, from_iter);
impl_accumulator!(Variance, f32_into_f64);

#[cfg(feature = "serde")]
impl<F: Float> TryFrom<Moments<F>> for Variance<F> {
    type Error = crate::Error;
    fn try_from(m: Moments<F>) -> Result<Self, Self::Error> {
        m.validate()?;
        Ok(Self { moments: m })
    }
}

#[cfg(feature = "serde")]
impl<F> From<Variance<F>> for Moments<F> {
    fn from(v: Variance<F>) -> Self {
        v.moments
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_offset_keeps_its_digits() {
        // 1e9 + k/8 for k = 0..8: the spread is exact in f64, and so is
        // its variance: Σ(k − 3.5)²/64 / 8 = 42/512.
        let xs: alloc::vec::Vec<f64> = (0..8).map(|k| 1e9 + f64::from(k) / 8.0).collect();
        let mut v = Variance::new();
        xs.iter().for_each(|&x| v.push(x));
        assert_eq!(v.population_variance(), Some(42.0 / 512.0));
        assert_eq!(
            Variance::<f64>::from_slice(&xs).population_variance(),
            Some(42.0 / 512.0)
        );
    }

    #[test]
    fn statistics_need_enough_values() {
        let v = Variance::<f64>::new();
        assert_eq!(v.population_variance(), None);
        assert_eq!(v.sum_squared_deviations(), None);
        let v: Variance<f64> = [7.0].into_iter().collect();
        assert_eq!(v.population_variance(), Some(0.0));
        assert_eq!(v.sample_variance(), None);
    }

    #[test]
    fn infinity_and_nan_propagate_without_panic() {
        let v: Variance<f64> = [1.0, f64::NAN].into_iter().collect();
        assert!(v.population_variance().unwrap().is_nan());
        let v: Variance<f64> = [1.0, f64::INFINITY].into_iter().collect();
        assert!(v.mean().unwrap().is_infinite());
    }
}
