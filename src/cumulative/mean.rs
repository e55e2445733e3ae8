//! The cumulative mean.

use crate::accumulator::impl_accumulator;
use crate::float::exactly;
use crate::kernels::MomentsLeaf;
use crate::moments::mean_step;
use crate::{Element, Error, Float};

/// The arithmetic mean of every value pushed, in constant space.
///
/// Each push applies the incremental update μₙ = μₙ₋₁ + (xₙ − μₙ₋₁)·(1/n)
/// (the reciprocal is formed apart, so the update waits on no division), which
/// never forms the running sum: the mean of `[f64::MAX, f64::MAX]` is
/// `f64::MAX`, not `∞`. Slices go through the blocked kernels, which are
/// faster and more accurate than pushing one by one.
///
/// Empty → [`mean`](Mean::mean) is `None`. NaN and ±∞ propagate.
///
/// **Checkpoints** (feature `serde`): serialized losslessly in any
/// format, and restored to a state that goes on bit for bit; see
/// [Checkpoints](crate#checkpoints).
///
/// # Example
///
/// ```
/// use momenta::Mean;
///
/// let mut m = Mean::new();
/// for x in [3.0, 5.0, 10.0] {
///     m.push(x);
/// }
/// assert_eq!(m.count(), 3);
/// assert_eq!(m.mean(), Some(6.0));
///
/// // f32 data, f64 statistics:
/// let m = Mean::<f64>::from_slice(&[0.1_f32, 0.2, 0.3]);
/// assert!((m.mean().unwrap() - 0.2).abs() < 1e-8);
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(into = "MeanState<F>", bound = "F: Float")
)]
pub struct Mean<F> {
    count: u64,
    mean: F,
}

#[cfg(feature = "serde")]
crate::checkpoint::path::restore_from!([F: Float] Mean<F>, MeanState<F>);

impl<F: Float> Default for Mean<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: Float> Mean<F> {
    /// An empty mean.
    ///
    /// ```
    /// let m = momenta::Mean::<f32>::new();
    /// assert_eq!(m.mean(), None);
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self {
            count: 0,
            mean: F::zero(),
        }
    }

    /// The mean of a slice of `f32` or `f64`, computed by the blocked
    /// kernels in `f64`.
    ///
    /// Name the accumulator's float type (`Mean::<f64>::from_slice`, or a
    /// typed binding): it cannot be inferred from the slice's, as
    /// [`Variance::from_slice`](crate::Variance::from_slice) explains.
    ///
    /// ```
    /// let m = momenta::Mean::<f64>::from_slice(&[1.0, 2.0, 3.0, 4.0]);
    /// assert_eq!(m.mean(), Some(2.5));
    /// ```
    #[must_use]
    pub fn from_slice<S: Element>(xs: &[S]) -> Self {
        let mut m = Self::new();
        m.extend_from_slice(xs);
        m
    }

    /// The mean of a slice of `f32` or `f64` on every rayon thread: the
    /// blocked kernels over fixed blocks, merged in a fixed tree, so the
    /// result is bit-for-bit [`from_slice`](Mean::from_slice)'s whatever the
    /// number of threads.
    ///
    /// ```
    /// use momenta::Mean;
    ///
    /// let xs: Vec<f32> = (0..100_000).map(|i| (i % 10) as f32).collect();
    /// let m = Mean::<f64>::par_from_slice(&xs);
    /// assert_eq!(m.mean(), Some(4.5));
    /// assert_eq!(m, Mean::from_slice(&xs));
    /// ```
    #[cfg(feature = "rayon")]
    #[must_use]
    pub fn par_from_slice<S: Element>(xs: &[S]) -> Self {
        let mut m = Self::new();
        if let Some(mean) = crate::kernels::par_moments(xs).mean() {
            m.absorb(xs.len() as u64, F::from_f64(mean));
        }
        m
    }

    /// Adds one value.
    ///
    /// `push` takes the accumulator's own float type: push an `f32` into a
    /// `Mean<f64>` with `m.push(x.into())` (see
    /// [`Variance::push`](crate::Variance::push) for why `push` is not
    /// generic).
    ///
    /// ```
    /// let mut m = momenta::Mean::new();
    /// m.push(4.0);
    /// assert_eq!(m.mean(), Some(4.0));
    ///
    /// let mut wide = momenta::Mean::<f64>::new();
    /// wide.push(0.5_f32.into());
    /// assert_eq!(wide.mean(), Some(0.5));
    /// ```
    #[inline]
    pub fn push(&mut self, x: F) {
        // The count saturates rather than wrap (a restored or merged count
        // can be near u64::MAX); the mean stays an average.
        self.count = self.count.saturating_add(1);
        // The reciprocal depends only on the count: formed off the chain
        // mean → x − mean → mean, which is then a subtraction, a
        // multiplication and an addition instead of waiting on a division
        // (twice the rate; the step is within an ulp of the quotient).
        let inv = F::one() / F::from_count(self.count);
        self.mean = mean_step(self.mean, x, inv);
    }

    /// Adds every value of a slice of `f32` or `f64`.
    ///
    /// ```
    /// let mut m = momenta::Mean::<f32>::new();
    /// m.extend_from_slice(&[1.0_f32, 2.0]);
    /// m.extend_from_slice(&[6.0_f64]);
    /// assert_eq!(m.mean(), Some(3.0));
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
    /// assert_eq!(momenta::Mean::<f64>::from_slice(&[1.0; 7]).count(), 7);
    /// ```
    #[must_use]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The mean, or `None` when no value was pushed.
    ///
    /// ```
    /// let m = momenta::Mean::<f64>::from_slice(&[1.0, 2.0]);
    /// assert_eq!(m.mean(), Some(1.5));
    /// ```
    #[must_use]
    pub fn mean(&self) -> Option<F> {
        (self.count > 0).then_some(self.mean)
    }

    /// Forgets every value.
    ///
    /// ```
    /// let mut m = momenta::Mean::<f64>::from_slice(&[1.0, 2.0]);
    /// m.reset();
    /// assert_eq!(m.count(), 0);
    /// ```
    pub fn reset(&mut self) {
        *self = Self::new();
    }

    /// The whole state as plain `f64` data, to send to another process
    /// and rebuild there with [`from_parts`](Mean::from_parts); lossless
    /// for either `F`, NaN and ±∞ included.
    ///
    /// ```
    /// use momenta::{Mean, MeanParts};
    /// let m = Mean::<f32>::from_slice(&[1.0_f32, 2.0]);
    /// assert_eq!(m.to_parts(), MeanParts { count: 2, mean: 1.5 });
    /// assert_eq!(Mean::<f32>::from_parts(m.to_parts())?, m);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn to_parts(&self) -> MeanParts {
        MeanParts {
            count: self.count,
            mean: self.mean.as_f64(),
        }
    }

    /// Rebuilds the value [`to_parts`](Mean::to_parts) described; it
    /// continues bit for bit as the original would.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidState`](crate::ErrorKind::InvalidState) when
    /// `count` is 0 and `mean` is not, or when `mean` is not representable
    /// in `F`.
    ///
    /// ```
    /// use momenta::{Mean, MeanParts};
    /// let m = Mean::<f64>::from_parts(MeanParts { count: 4, mean: 2.5 })?;
    /// assert_eq!(m.mean(), Some(2.5));
    /// assert!(Mean::<f64>::from_parts(MeanParts { count: 0, mean: 1.0 }).is_err());
    /// assert!(Mean::<f32>::from_parts(MeanParts { count: 1, mean: 0.1 }).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn from_parts(parts: MeanParts) -> Result<Self, Error> {
        Self::validated(parts.count, exactly("mean", parts.mean)?)
    }

    /// The state `(count, mean)`, if it is one a `Mean` can be in.
    fn validated(count: u64, mean: F) -> Result<Self, Error> {
        if count == 0 && mean != F::zero() {
            return Err(Error::state(alloc::format!(
                "count is 0 but mean is {mean:?}"
            )));
        }
        Ok(Self { count, mean })
    }

    fn absorb(&mut self, count: u64, mean: F) {
        if count == 0 {
            return;
        }
        if self.count == 0 {
            *self = Self { count, mean };
            return;
        }
        // μ + (μ_b − μ)·n_b/n, the incremental update with a batch for a
        // value. The count saturates; n is then formed in floating point.
        let n = match self.count.checked_add(count) {
            Some(n) => F::from_count(n),
            None => F::from_count(self.count) + F::from_count(count),
        };
        self.count = self.count.saturating_add(count);
        self.mean = mean_step(self.mean, mean, F::from_count(count) / n);
    }
}

impl<F: Float> crate::Merge for Mean<F> {
    /// ```
    /// use momenta::{Mean, Merge};
    /// let mut a = Mean::<f64>::from_slice(&[1.0, 2.0, 3.0]);
    /// a.merge(&Mean::from_slice(&[10.0]));
    /// assert_eq!(a.mean(), Some(4.0));
    /// ```
    fn merge(&mut self, other: &Self) {
        self.absorb(other.count, other.mean);
    }
}

impl<F: Float> crate::kernels::Sealed for Mean<F> {}

impl<F: Float, S: Element> crate::FromSlice<S> for Mean<F> {
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
        if let Some(mean) = root.0.mean() {
            self.absorb(root.0.count, F::from_f64(mean));
        }
    }
}

impl_accumulator!(Mean, from_iter);
impl_accumulator!(Mean, f32_into_f64);

/// The whole state of a [`Mean`] as plain `f64` data, for any transport:
/// what [`Mean::to_parts`] gives and [`Mean::from_parts`] takes.
///
/// Serialized (feature `serde`) losslessly in any format: in JSON each
/// float is an exact string ([Checkpoints](crate#checkpoints)).
///
/// # Example
///
/// ```
/// use momenta::{Mean, MeanParts, Merge};
/// let parts = MeanParts { count: 3, mean: 2.0 }; // received from elsewhere
/// let mut m = Mean::<f64>::from_slice(&[10.0]);
/// m.merge(&Mean::from_parts(parts)?);
/// assert_eq!(m.mean(), Some(4.0));
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MeanParts {
    /// The number of values.
    pub count: u64,
    /// Their mean (0 when `count` is 0).
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub mean: f64,
}

/// The serialized form of [`Mean`], validated on the way in.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(bound = "F: Float")]
struct MeanState<F> {
    count: u64,
    #[serde(with = "crate::checkpoint::float")]
    mean: F,
}

#[cfg(feature = "serde")]
impl<F: Float> TryFrom<MeanState<F>> for Mean<F> {
    type Error = crate::Error;
    fn try_from(s: MeanState<F>) -> Result<Self, Self::Error> {
        Self::validated(s.count, s.mean)
    }
}

#[cfg(feature = "serde")]
impl<F> From<Mean<F>> for MeanState<F> {
    fn from(m: Mean<F>) -> Self {
        Self {
            count: m.count,
            mean: m.mean,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Merge;

    #[test]
    fn empty_is_none_and_merge_identity_holds() {
        let mut m = Mean::<f64>::new();
        assert_eq!(m.mean(), None);
        m.merge(&Mean::new());
        assert_eq!(m, Mean::new());
        let full = Mean::<f64>::from_slice(&[2.0, 4.0]);
        m.merge(&full);
        assert_eq!(m, full);
    }

    #[test]
    fn incremental_update_matches_exact_fractions() {
        // 1/3, 2/3, ... small integers: every intermediate mean is exact.
        let mut m = Mean::<f64>::new();
        let mut sum = 0.0;
        for (i, x) in [4.0, 8.0, 0.0, 12.0, -4.0].into_iter().enumerate() {
            m.push(x);
            sum += x;
            assert_eq!(m.mean(), Some(sum / (i + 1) as f64));
        }
    }

    #[test]
    fn does_not_overflow_on_extremes() {
        let m: Mean<f64> = [f64::MAX, f64::MAX].into_iter().collect();
        assert_eq!(m.mean(), Some(f64::MAX));
        let m: Mean<f64> = [f64::MAX, -f64::MAX].into_iter().collect();
        assert_eq!(m.mean(), Some(0.0));
    }

    #[test]
    fn nan_propagates() {
        let m: Mean<f64> = [1.0, f64::NAN, 2.0].into_iter().collect();
        assert!(m.mean().unwrap().is_nan());
    }
}
