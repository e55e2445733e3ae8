//! The smallest and largest value seen.

use crate::accumulator::impl_accumulator;
use crate::float::{exactly, maximum, minimum};
use crate::kernels::ExtremesLeaf;
use crate::{Error, Float};

/// The count, smallest and largest of every value pushed, in constant
/// space.
///
/// Comparisons follow IEEE 754-2019 `minimum` and `maximum`:
///
/// - **NaN propagates**: once a NaN is pushed (or merged in), `min()` and
///   `max()` are NaN for good. This differs from [`f64::min`] and
///   [`f64::max`], which drop a NaN and return the other operand, and from
///   numpy's `nanmin`; it is what `numpy.min` and `numpy.max` do.
/// - **−0.0 is below +0.0**: `min()` of `[0.0, -0.0]` is `-0.0` and
///   `max()` is `+0.0`, in any order. `f64::min` may return either zero.
///
/// Both rules make the result independent of the order of the values, so
/// push, the slice kernels (any thread count) and merges give the same
/// bits. Slices are scanned at memory speed in lanes of their own type,
/// without widening; a `MinMax<f32>` fed `f64` data stores the extremes
/// rounded to `f32` (rounding keeps the order, so they are the rounded
/// extremes of the data).
///
/// Empty → `min()`, `max()` and `range()` are `None`.
///
/// **Serialized form** (feature `serde`, stable):
/// `{"count":3,"min":"-1.0","max":"2.5"}` in JSON, the fields of
/// [`MinMaxParts`] with each float an exact string (`min` and `max` are 0
/// when `count` is 0; see [Checkpoints](crate#checkpoints)), validated on
/// the way in.
///
/// # Example
///
/// ```
/// use momenta::MinMax;
///
/// let mut m = MinMax::new();
/// for x in [3.0, -1.0, 2.5] {
///     m.push(x);
/// }
/// assert_eq!((m.min(), m.max(), m.range()), (Some(-1.0), Some(3.0), Some(4.0)));
///
/// // NaN propagates, unlike f64::min.
/// m.push(f64::NAN);
/// assert!(m.min().unwrap().is_nan() && m.max().unwrap().is_nan());
/// assert_eq!(f64::NAN.min(1.0), 1.0);
///
/// // −0.0 < +0.0.
/// let z = MinMax::<f64>::from_slice(&[0.0, -0.0]);
/// assert!(z.min().unwrap().is_sign_negative() && z.max().unwrap().is_sign_positive());
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(into = "MinMaxParts", bound = "F: Float")
)]
pub struct MinMax<F> {
    count: u64,
    /// 0 when empty; NaN (the canonical one) when a NaN was seen.
    min: F,
    max: F,
}

#[cfg(feature = "serde")]
crate::checkpoint::path::restore_from!([F: Float] MinMax<F>, MinMaxParts);

impl<F: Float> Default for MinMax<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: Float> MinMax<F> {
    /// An empty accumulator.
    ///
    /// ```
    /// let m = momenta::MinMax::<f64>::new();
    /// assert_eq!((m.count(), m.min(), m.max()), (0, None, None));
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self {
            count: 0,
            min: F::zero(),
            max: F::zero(),
        }
    }

    /// The extremes of a slice of `f32` or `f64`, by the blocked kernel.
    ///
    /// ```
    /// let m = momenta::MinMax::<f64>::from_slice(&[2.0_f32, -3.5, 7.25]);
    /// assert_eq!((m.min(), m.max()), (Some(-3.5), Some(7.25)));
    /// ```
    #[must_use]
    pub fn from_slice<S: Float>(xs: &[S]) -> Self {
        let mut m = Self::new();
        m.extend_from_slice(xs);
        m
    }

    /// The extremes of a slice of `f32` or `f64` on every rayon thread;
    /// the same result as [`from_slice`](MinMax::from_slice) on any number
    /// of threads.
    ///
    /// ```
    /// use momenta::MinMax;
    /// let xs: Vec<f32> = (0..100_000).map(|i| (i % 1000) as f32 - 500.0).collect();
    /// let m = MinMax::<f32>::par_from_slice(&xs);
    /// assert_eq!((m.min(), m.max()), (Some(-500.0), Some(499.0)));
    /// assert_eq!(m, MinMax::from_slice(&xs));
    /// ```
    #[cfg(feature = "rayon")]
    #[must_use]
    pub fn par_from_slice<S: Float>(xs: &[S]) -> Self {
        let mut m = Self::new();
        m.absorb(crate::kernels::par_extremes(xs));
        m
    }

    /// Adds one value.
    ///
    /// ```
    /// let mut m = momenta::MinMax::new();
    /// m.push(2.0_f32);
    /// m.push(-1.0);
    /// assert_eq!(m.range(), Some(3.0));
    /// ```
    #[inline]
    pub fn push(&mut self, x: F) {
        if self.count == 0 {
            let x = if x.is_nan() { F::nan() } else { x };
            self.min = x;
            self.max = x;
        } else {
            self.min = minimum(self.min, x);
            self.max = maximum(self.max, x);
        }
        self.count = self.count.saturating_add(1);
    }

    /// Adds every value of a slice of `f32` or `f64`, through the kernel.
    ///
    /// ```
    /// let mut m = momenta::MinMax::<f64>::new();
    /// m.extend_from_slice(&[1.0_f64, 5.0]);
    /// m.extend_from_slice(&[-2.0_f32]);
    /// assert_eq!((m.count(), m.min(), m.max()), (3, Some(-2.0), Some(5.0)));
    /// ```
    pub fn extend_from_slice<S: Float>(&mut self, xs: &[S]) {
        let root = ExtremesLeaf(crate::kernels::extremes(xs));
        crate::FromSlice::<S>::absorb_root(self, root);
    }

    /// The number of values pushed. It saturates at `u64::MAX`.
    ///
    /// ```
    /// assert_eq!(momenta::MinMax::<f64>::from_slice(&[1.0; 4]).count(), 4);
    /// ```
    #[must_use]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The smallest value (−0.0 below +0.0), NaN if a NaN was seen, or
    /// `None` when empty.
    ///
    /// ```
    /// let m = momenta::MinMax::<f64>::from_slice(&[4.0, -0.5, 2.0]);
    /// assert_eq!(m.min(), Some(-0.5));
    /// ```
    #[must_use]
    pub fn min(&self) -> Option<F> {
        (self.count > 0).then_some(self.min)
    }

    /// The largest value (+0.0 above −0.0), NaN if a NaN was seen, or
    /// `None` when empty.
    ///
    /// ```
    /// let m = momenta::MinMax::<f64>::from_slice(&[4.0, -0.5, 2.0]);
    /// assert_eq!(m.max(), Some(4.0));
    /// ```
    #[must_use]
    pub fn max(&self) -> Option<F> {
        (self.count > 0).then_some(self.max)
    }

    /// `max − min`, or `None` when empty. It rounds (and may be +∞ for
    /// finite extremes such as `±f64::MAX`); NaN if a NaN was seen, or when
    /// both extremes are the same infinity.
    ///
    /// ```
    /// let m = momenta::MinMax::<f64>::from_slice(&[4.0, -0.5, 2.0]);
    /// assert_eq!(m.range(), Some(4.5));
    /// ```
    #[must_use]
    pub fn range(&self) -> Option<F> {
        (self.count > 0).then(|| self.max - self.min)
    }

    /// Forgets every value.
    ///
    /// ```
    /// let mut m = momenta::MinMax::<f64>::from_slice(&[1.0]);
    /// m.reset();
    /// assert_eq!(m.min(), None);
    /// ```
    pub fn reset(&mut self) {
        *self = Self::new();
    }

    /// The whole state as plain `f64` data, to send to another process and
    /// rebuild there with [`from_parts`](MinMax::from_parts); lossless for
    /// either `F`, NaN and ±∞ included.
    ///
    /// ```
    /// use momenta::{MinMax, MinMaxParts};
    /// let m = MinMax::<f32>::from_slice(&[1.5_f32, -2.0]);
    /// assert_eq!(m.to_parts(), MinMaxParts { count: 2, min: -2.0, max: 1.5 });
    /// assert_eq!(MinMax::<f32>::from_parts(m.to_parts())?, m);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn to_parts(&self) -> MinMaxParts {
        MinMaxParts {
            count: self.count,
            min: self.min.as_f64(),
            max: self.max.as_f64(),
        }
    }

    /// Rebuilds the value [`to_parts`](MinMax::to_parts) described.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidState`](crate::ErrorKind::InvalidState), naming
    /// the broken invariant, when `count` is 0 and `min` or `max` is not
    /// +0.0, when only one of `min` and `max` is NaN, when `min` is above
    /// `max` (−0.0 counting as below +0.0), when `count` is 1 and `min`
    /// and `max` are not the same value, or when a field is not
    /// representable in `F`.
    ///
    /// ```
    /// use momenta::{MinMax, MinMaxParts};
    /// let m = MinMax::<f64>::from_parts(MinMaxParts { count: 2, min: -1.0, max: 3.0 })?;
    /// assert_eq!(m.range(), Some(4.0));
    /// let err = MinMax::<f64>::from_parts(MinMaxParts { count: 2, min: 3.0, max: -1.0 }).unwrap_err();
    /// assert_eq!(err.to_string(), "invalid state: min 3.0 must not be above max -1.0");
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn from_parts(parts: MinMaxParts) -> Result<Self, Error> {
        let min: F = exactly("min", parts.min)?;
        let max: F = exactly("max", parts.max)?;
        if parts.count == 0 {
            if min.as_f64().to_bits() != 0 || max.as_f64().to_bits() != 0 {
                return Err(Error::state("count is 0 but min and max are not 0"));
            }
        } else if min.is_nan() != max.is_nan() {
            return Err(Error::state("min and max must both be NaN or neither"));
        } else if !min.is_nan() && minimum(min, max).as_f64().to_bits() != min.as_f64().to_bits() {
            return Err(Error::state(alloc::format!(
                "min {min:?} must not be above max {max:?}"
            )));
        }
        let canonical = |x: F| if x.is_nan() { F::nan() } else { x };
        // One value is both extremes, to the bit (a NaN is the NaN).
        if parts.count == 1
            && canonical(min).as_f64().to_bits() != canonical(max).as_f64().to_bits()
        {
            return Err(Error::state(alloc::format!(
                "min {min:?} and max {max:?} must be the same value when count is 1"
            )));
        }
        Ok(Self {
            count: parts.count,
            min: canonical(min),
            max: canonical(max),
        })
    }

    /// Takes in a slice's extremes (kernel output, in `f64`).
    fn absorb(&mut self, e: crate::kernels::Extremes) {
        if e.count == 0 {
            return;
        }
        let other = Self {
            count: e.count,
            min: F::from_f64(e.min),
            max: F::from_f64(e.max),
        };
        crate::Merge::merge(self, &other);
    }
}

impl<F: Float> crate::Merge for MinMax<F> {
    /// ```
    /// use momenta::{Merge, MinMax};
    /// let mut a = MinMax::<f64>::from_slice(&[1.0, 2.0]);
    /// a.merge(&MinMax::from_slice(&[-4.0]));
    /// assert_eq!((a.min(), a.max(), a.count()), (Some(-4.0), Some(2.0), 3));
    /// ```
    fn merge(&mut self, other: &Self) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = other.clone();
            return;
        }
        self.count = self.count.saturating_add(other.count);
        self.min = minimum(self.min, other.min);
        self.max = maximum(self.max, other.max);
    }
}

impl<F: Float> crate::kernels::Sealed for MinMax<F> {}

impl<F: Float, S: Float> crate::FromSlice<S> for MinMax<F> {
    type Leaf = ExtremesLeaf;

    #[inline]
    fn leaf(block: &[S]) -> ExtremesLeaf {
        ExtremesLeaf(crate::kernels::block_extremes(block))
    }

    #[inline]
    fn merge_leaves(a: &mut ExtremesLeaf, b: ExtremesLeaf) {
        a.0.merge(&b.0);
    }

    fn absorb_root(&mut self, root: ExtremesLeaf) {
        self.absorb(root.0);
    }
}

impl_accumulator!(MinMax, from_iter);
impl_accumulator!(MinMax, f32_into_f64);

/// The whole state of a [`MinMax`] as plain `f64` data, for any transport:
/// what [`MinMax::to_parts`] gives and [`MinMax::from_parts`] takes.
///
/// # Example
///
/// ```
/// use momenta::{Merge, MinMax, MinMaxParts};
/// let received = MinMaxParts { count: 10, min: -3.0, max: 8.0 };
/// let mut m = MinMax::<f64>::from_slice(&[9.0]);
/// m.merge(&MinMax::from_parts(received)?);
/// assert_eq!((m.count(), m.min(), m.max()), (11, Some(-3.0), Some(9.0)));
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MinMaxParts {
    /// The number of values.
    pub count: u64,
    /// The smallest value (0 when `count` is 0, NaN when a NaN was seen).
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub min: f64,
    /// The largest value (0 when `count` is 0, NaN when a NaN was seen).
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub max: f64,
}

#[cfg(feature = "serde")]
impl<F: Float> TryFrom<MinMaxParts> for MinMax<F> {
    type Error = Error;
    fn try_from(parts: MinMaxParts) -> Result<Self, Error> {
        Self::from_parts(parts)
    }
}

#[cfg(feature = "serde")]
impl<F: Float> From<MinMax<F>> for MinMaxParts {
    fn from(m: MinMax<F>) -> Self {
        m.to_parts()
    }
}
