//! The minimum and maximum over a fixed moving window.

use alloc::vec::Vec;

use super::block_extrema::BlockExtrema;
use super::extrema::Extreme;
use super::policy::Policy;
use super::ring::Ring;
use super::series::extremes::{self, Which};
use crate::NanPolicy;
use crate::accumulator::impl_accumulator;
use crate::series::{check_output, or_nan};
use crate::{Error, Float};

/// The minimum, maximum and range of the last `window` values pushed, in
/// amortized O(1) time per push (pandas' `rolling(window).min()` and
/// `.max()`).
///
/// The values are cut into blocks of `window` (van Herk and Gil-Werman):
/// a window is a suffix of one block and a prefix of the next, so its
/// extremes are the previous block's suffix extremes (one backward pass
/// when a block fills) and the running extremes of the present block. A
/// push is a store and two comparisons, with no branch that depends on the
/// data (about 7 times as fast as monotonic deques on random data). No
/// arithmetic touches the values: the minimum and maximum are exactly
/// values of the window, whatever their magnitudes (an outlier of 1e9 is
/// reported as 1e9 and forgotten the push it leaves).
///
/// # Zeros
///
/// `−0.0` is below `+0.0` (IEEE 754's `minimum` and `maximum`): a window
/// holding both has minimum `−0.0` and maximum `+0.0`. (pandas compares
/// them as equal and reports whichever came last.)
///
/// # NaN and infinities
///
/// While a NaN is in the window every statistic is `Some(NaN)`; it is exact
/// again once the NaN has left. With [`NanPolicy::Skip`] NaN values are left
/// out, as pandas does. Infinities are ordinary values; the range is
/// `max − min`, so it is NaN when both are the same infinity and +∞ when
/// the difference overflows.
///
/// # Warm-up: `min_periods` is 1, not pandas' `window`
///
/// A streaming reading has an answer from the first value: the statistics
/// are those of the values pushed so far until the window fills (pandas'
/// `rolling(window, min_periods=1)`). pandas' `rolling(window)` defaults
/// to `min_periods=window` and reports NaN until the window is full;
/// `.with_min_periods(window)` gives its output.
///
/// # Memory
///
/// The values in the window (up to `window`) and the blocks' extremes (16
/// bytes a value, up to `window` of them), allocated as values arrive:
/// `new(usize::MAX)` works and is a running minimum and maximum.
///
/// # Equality and serialization
///
/// As for [`MovingAverage`](crate::MovingAverage): equal when the window,
/// the options and the values in order are equal; serialized as the window
/// length, the values oldest first and the options, with the blocks rebuilt
/// on the way in.
///
/// **Checkpoints** (feature `serde`): serialized losslessly in any
/// format, and restored to a state that goes on bit for bit; see
/// [Checkpoints](crate#checkpoints).
///
/// # Example
///
/// ```
/// use momenta::MovingMinMax;
///
/// let mut m = MovingMinMax::new(3)?;
/// m.extend_from_slice(&[4.0, 9.0, 1.0, 6.0, 5.0]);
/// // The window is [1, 6, 5].
/// assert_eq!(m.min(), Some(1.0));
/// assert_eq!(m.max(), Some(6.0));
/// assert_eq!(m.range(), Some(5.0));
/// m.push(7.0); // 1 has left
/// assert_eq!(m.min(), Some(5.0));
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct MovingMinMax<F> {
    ring: Ring<F>,
    extrema: BlockExtrema,
    /// NaN values in the window.
    nans: usize,
    policy: Policy,
}

#[cfg(feature = "serde")]
crate::checkpoint::path::restore_from!([F: Float] MovingMinMax<F>, super::state::WindowState<F>);

/// Slices shorter than this go through the push loop.
const SERIES_MIN: usize = 64;

impl<F: Float> MovingMinMax<F> {
    /// An empty window over the last `window` values.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidWindow`](crate::ErrorKind::InvalidWindow) when
    /// `window` is 0.
    ///
    /// ```
    /// use momenta::MovingMinMax;
    /// assert_eq!(MovingMinMax::<f64>::new(4)?.window(), 4);
    /// assert!(MovingMinMax::<f64>::new(0).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn new(window: usize) -> Result<Self, Error> {
        if window == 0 {
            return Err(Error::from(crate::ErrorKind::InvalidWindow { window }));
        }
        Ok(Self {
            ring: Ring::new(window),
            extrema: BlockExtrema::new(window),
            nans: 0,
            policy: Policy::default(),
        })
    }

    /// Skips NaN values instead of propagating them ([`NanPolicy`]), as
    /// pandas' `rolling(window).min()` does.
    ///
    /// ```
    /// use momenta::{MovingMinMax, NanPolicy};
    /// let mut m = MovingMinMax::new(3)?.with_nan_policy(NanPolicy::Skip);
    /// m.extend_from_slice(&[2.0, f64::NAN, 5.0]);
    /// assert_eq!((m.min(), m.max()), (Some(2.0), Some(5.0)));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn with_nan_policy(mut self, policy: NanPolicy) -> Self {
        self.policy.nan = policy;
        self
    }

    /// Holds the statistics back (`None`) until the window holds
    /// `min_periods` values that count — every value, or the non-NaN ones
    /// under [`NanPolicy::Skip`] — as pandas' `min_periods`. The default
    /// is 1; 0 acts as 1.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// when `min_periods` exceeds the window.
    ///
    /// ```
    /// let mut m = momenta::MovingMinMax::new(3)?.with_min_periods(2)?;
    /// m.push(1.0);
    /// assert_eq!(m.max(), None);
    /// m.push(3.0);
    /// assert_eq!(m.max(), Some(3.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn with_min_periods(mut self, min_periods: usize) -> Result<Self, Error> {
        self.policy = self
            .policy
            .with_min_periods(min_periods, self.ring.window())?;
        Ok(self)
    }

    /// Whether the window holds enough values for its statistics (see
    /// [`with_min_periods`](Self::with_min_periods)).
    ///
    /// ```
    /// let mut m = momenta::MovingMinMax::new(2)?;
    /// assert!(!m.is_ready());
    /// m.push(0.5);
    /// assert!(m.is_ready());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_ready(&self) -> bool {
        self.policy
            .ready(self.policy.counted(self.ring.len(), self.nans))
    }

    /// Adds one value, dropping the oldest once the window is full.
    /// Amortized O(1) (each `window`-th push makes an O(`window`) pass);
    /// no allocation once the window and the blocks have grown to their
    /// largest.
    ///
    /// Returns nothing: the window offers three statistics, so none is
    /// singled out (only the one-output filters,
    /// [`MovingAverage`](crate::MovingAverage) and
    /// [`MovingQuantile`](crate::MovingQuantile), return theirs).
    ///
    /// ```
    /// let mut m = momenta::MovingMinMax::new(2)?;
    /// m.push(3.0);
    /// m.push(-1.0);
    /// assert_eq!(m.range(), Some(4.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[inline]
    pub fn push(&mut self, x: F) {
        if self.ring.push(x).is_some_and(F::is_nan) {
            self.nans -= 1;
        }
        if x.is_nan() {
            self.nans += 1;
        }
        self.extrema.push(x);
    }

    /// Adds every value of `xs`, in order; only the last `window` of them
    /// can stay, so longer slices skip straight to those.
    ///
    /// ```
    /// let mut m = momenta::MovingMinMax::new(2)?;
    /// m.extend_from_slice(&[-100.0, 1.0, 2.0]);
    /// assert_eq!(m.min(), Some(1.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn extend_from_slice(&mut self, xs: &[F]) {
        if xs.len() >= self.ring.window() {
            // Only the last `window` values stay: the blocks are those of
            // the window, whatever came before.
            self.pushed_all(xs);
        } else {
            for &x in xs {
                self.push(x);
            }
        }
    }

    /// The state pushing every value of `xs` leaves: the ring as the
    /// pushes leave it (its head too), and the blocks and the NaN count of
    /// the values then in the window. O(window): the extremes the blocks
    /// give depend only on the window's values.
    fn pushed_all(&mut self, xs: &[F]) {
        self.ring.extend(xs);
        self.extrema.refill(self.ring.iter());
        self.nans = self.ring.iter().filter(|x| x.is_nan()).count();
    }

    /// The series of `which` into `out`: van Herk and Gil-Werman's blocks
    /// (`windows/series/extremes.rs`) when the slice is long enough to
    /// repay rebuilding the blocks, else the push loop.
    fn series_to(&mut self, xs: &[F], which: Which, out: &mut [F]) {
        let read = |m: &Self| match which {
            Which::Min => m.min(),
            Which::Max => m.max(),
            Which::Range => m.range(),
        };
        if xs.len() < SERIES_MIN.max(self.ring.window() / 2) {
            for (&x, slot) in xs.iter().zip(out) {
                self.push(x);
                *slot = or_nan(read(self));
            }
            return;
        }
        let window = self.ring.window();
        extremes::series(self.ring.as_slices(), xs, window, self.policy, which, out);
        self.pushed_all(xs);
    }

    /// Whether a NaN in the window makes the statistics NaN.
    fn nan_counts(&self) -> bool {
        self.nans > 0 && !self.policy.skips_nan()
    }

    /// The least value in the window: `None` until ready, `Some(NaN)`
    /// while a NaN counts.
    ///
    /// ```
    /// let mut m = momenta::MovingMinMax::new(3)?;
    /// assert_eq!(m.min(), None);
    /// m.extend_from_slice(&[2.0, f64::NAN, 1.0]);
    /// assert!(m.min().unwrap().is_nan());
    /// m.extend_from_slice(&[5.0, 4.0]);
    /// assert_eq!(m.min(), Some(1.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn min(&self) -> Option<F> {
        Extreme::Min.of(&self.extrema, self.is_ready(), self.nan_counts())
    }

    /// The greatest value in the window: `None` until ready, `Some(NaN)`
    /// while a NaN counts.
    ///
    /// ```
    /// let mut m = momenta::MovingMinMax::new(2)?;
    /// m.extend_from_slice(&[-0.0_f64, 0.0]);
    /// assert!(m.max().unwrap().is_sign_positive());
    /// assert!(m.min().unwrap().is_sign_negative());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn max(&self) -> Option<F> {
        Extreme::Max.of(&self.extrema, self.is_ready(), self.nan_counts())
    }

    /// `max − min` over the window (rounded once): `None` until ready,
    /// `Some(NaN)` while a NaN counts.
    ///
    /// ```
    /// let mut m = momenta::MovingMinMax::new(4)?;
    /// m.extend_from_slice(&[1e9, 3.0, 1.0]);
    /// assert_eq!(m.range(), Some(1e9 - 1.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn range(&self) -> Option<F> {
        Extreme::Range.of(&self.extrema, self.is_ready(), self.nan_counts())
    }

    /// Pushes every value of `xs` in order and returns the minimum after each
    /// push, NaN where [`min`](Self::min) is `None`: pandas' `s.rolling(window, min_periods=1).min()`,
    /// polars' `s.rolling_min(window, min_samples=1)`.
    ///
    /// Every value is the one the push loop reads, bit for bit, and the
    /// window is left as the push loop leaves it. A long slice is not
    /// pushed value by value but cut into blocks of `window` values (van
    /// Herk and Gil-Werman: each window's extreme is that of a suffix of
    /// one block and a prefix of the next), three comparisons a value
    /// whatever the window; the blocks are then rebuilt from the last
    /// window.
    ///
    /// ```
    /// let mut m = momenta::MovingMinMax::new(3)?;
    /// assert_eq!(m.min_series(&[4.0, 9.0, 1.0, 6.0, 5.0]), [4.0, 4.0, 1.0, 1.0, 1.0]);
    /// m.push(7.0); // the window goes on: [6, 5, 7]
    /// assert_eq!(m.min(), Some(5.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use = "the series is the result; use `extend_from_slice` to only push"]
    pub fn min_series(&mut self, xs: &[F]) -> Vec<F> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.series_to(xs, Which::Min, &mut out);
        out
    }

    /// [`min_series`](Self::min_series) into a caller's buffer, as
    /// long as `xs`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`; nothing is
    /// pushed then.
    ///
    /// ```
    /// let mut m = momenta::MovingMinMax::<f64>::new(2)?;
    /// let mut out = [0.0; 3];
    /// m.min_series_into(&[4.0, 1.0, 3.0], &mut out)?;
    /// assert!(m.min_series_into(&[1.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn min_series_into(&mut self, xs: &[F], out: &mut [F]) -> Result<(), Error> {
        check_output("output", xs.len(), out.len())?;
        self.series_to(xs, Which::Min, out);
        Ok(())
    }

    /// Pushes every value of `xs` in order and returns the maximum after each
    /// push, NaN where [`max`](Self::max) is `None`: pandas' `s.rolling(window, min_periods=1).max()`,
    /// polars' `s.rolling_max(window, min_samples=1)`.
    ///
    /// Every value is the one the push loop reads, bit for bit, and the
    /// window is left as the push loop leaves it. A long slice is not
    /// pushed value by value but cut into blocks of `window` values (van
    /// Herk and Gil-Werman: each window's extreme is that of a suffix of
    /// one block and a prefix of the next), three comparisons a value
    /// whatever the window; the blocks are then rebuilt from the last
    /// window.
    ///
    /// ```
    /// let mut m = momenta::MovingMinMax::new(2)?;
    /// let max = m.max_series(&[1.0, f64::NAN, 3.0, 2.0]);
    /// assert!(max[1].is_nan() && max[2].is_nan()); // while the NaN is in the window
    /// assert_eq!((max[0], max[3]), (1.0, 3.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use = "the series is the result; use `extend_from_slice` to only push"]
    pub fn max_series(&mut self, xs: &[F]) -> Vec<F> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.series_to(xs, Which::Max, &mut out);
        out
    }

    /// [`max_series`](Self::max_series) into a caller's buffer, as
    /// long as `xs`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`; nothing is
    /// pushed then.
    ///
    /// ```
    /// let mut m = momenta::MovingMinMax::<f64>::new(2)?;
    /// let mut out = [0.0; 3];
    /// m.max_series_into(&[4.0, 1.0, 3.0], &mut out)?;
    /// assert!(m.max_series_into(&[1.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn max_series_into(&mut self, xs: &[F], out: &mut [F]) -> Result<(), Error> {
        check_output("output", xs.len(), out.len())?;
        self.series_to(xs, Which::Max, out);
        Ok(())
    }

    /// Pushes every value of `xs` in order and returns the range (maximum − minimum) after each
    /// push, NaN where [`range`](Self::range) is `None`: pandas' `s.rolling(window, min_periods=1).apply(np.ptp)`,
    /// polars' `s.rolling_max(window) - s.rolling_min(window)`.
    ///
    /// Every value is the one the push loop reads, bit for bit, and the
    /// window is left as the push loop leaves it. A long slice is not
    /// pushed value by value but cut into blocks of `window` values (van
    /// Herk and Gil-Werman: each window's extreme is that of a suffix of
    /// one block and a prefix of the next), three comparisons a value
    /// whatever the window; the blocks are then rebuilt from the last
    /// window.
    ///
    /// ```
    /// let mut m = momenta::MovingMinMax::new(2)?;
    /// assert_eq!(m.range_series(&[1.0, 4.0, 2.0]), [0.0, 3.0, 2.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use = "the series is the result; use `extend_from_slice` to only push"]
    pub fn range_series(&mut self, xs: &[F]) -> Vec<F> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.series_to(xs, Which::Range, &mut out);
        out
    }

    /// [`range_series`](Self::range_series) into a caller's buffer, as
    /// long as `xs`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`; nothing is
    /// pushed then.
    ///
    /// ```
    /// let mut m = momenta::MovingMinMax::<f64>::new(2)?;
    /// let mut out = [0.0; 3];
    /// m.range_series_into(&[4.0, 1.0, 3.0], &mut out)?;
    /// assert!(m.range_series_into(&[1.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn range_series_into(&mut self, xs: &[F], out: &mut [F]) -> Result<(), Error> {
        check_output("output", xs.len(), out.len())?;
        self.series_to(xs, Which::Range, out);
        Ok(())
    }

    /// The number of values in the window: `min(n, window)` after `n`
    /// pushes.
    ///
    /// ```
    /// let mut m = momenta::MovingMinMax::new(2)?;
    /// m.extend_from_slice(&[1.0, 2.0, 3.0]);
    /// assert_eq!(m.len(), 2);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.ring.len()
    }

    /// Whether the window holds no value.
    ///
    /// ```
    /// assert!(momenta::MovingMinMax::<f64>::new(2)?.is_empty());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ring.len() == 0
    }

    /// The window length given to [`new`](Self::new).
    ///
    /// ```
    /// assert_eq!(momenta::MovingMinMax::<f32>::new(3)?.window(), 3);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn window(&self) -> usize {
        self.ring.window()
    }

    /// Whether `window` values have been pushed, so every push now drops
    /// the oldest.
    ///
    /// ```
    /// let mut m = momenta::MovingMinMax::new(1)?;
    /// m.push(2.0);
    /// assert!(m.is_full());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_full(&self) -> bool {
        self.ring.is_full()
    }

    /// Forgets every value; the window length and options stay, and so do
    /// the allocations.
    ///
    /// ```
    /// let mut m = momenta::MovingMinMax::new(3)?;
    /// m.extend_from_slice(&[1.0, 2.0]);
    /// m.reset();
    /// assert_eq!(m.max(), None);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn reset(&mut self) {
        self.ring.clear();
        self.extrema.clear();
        self.nans = 0;
    }

    /// The values in the window, oldest first.
    ///
    /// ```
    /// let mut m = momenta::MovingMinMax::new(2)?;
    /// m.extend_from_slice(&[1.0, 2.0, 3.0]);
    /// assert!(m.iter().eq([2.0, 3.0]));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = F> + '_ {
        self.ring.iter()
    }

    /// The values in the window as two slices, oldest first (the second
    /// may be empty), without copying.
    ///
    /// ```
    /// let mut m = momenta::MovingMinMax::new(2)?;
    /// m.extend_from_slice(&[1.0, 2.0, 3.0]);
    /// let (a, b) = m.as_slices();
    /// assert_eq!([a, b].concat(), [2.0, 3.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn as_slices(&self) -> (&[F], &[F]) {
        self.ring.as_slices()
    }
}

impl<F: Float> PartialEq for MovingMinMax<F> {
    /// Equal when the window lengths and options are equal and the windows
    /// hold the same values in the same order.
    ///
    /// ```
    /// use momenta::MovingMinMax;
    /// let mut a = MovingMinMax::new(2)?;
    /// let mut b = MovingMinMax::new(2)?;
    /// a.extend_from_slice(&[5.0, 1.0, 2.0]);
    /// b.extend_from_slice(&[1.0, 2.0]);
    /// assert_eq!(a, b);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    fn eq(&self, other: &Self) -> bool {
        self.ring.window() == other.ring.window()
            && self.policy == other.policy
            && self.ring.len() == other.ring.len()
            && self.ring.iter().eq(other.ring.iter())
    }
}

impl_accumulator!(MovingMinMax);

#[cfg(feature = "serde")]
impl<F: Float> TryFrom<super::state::WindowState<F>> for MovingMinMax<F> {
    type Error = Error;

    fn try_from(state: super::state::WindowState<F>) -> Result<Self, Error> {
        let mut m = Self::new(state.window)?;
        m.policy = state.checked_policy()?;
        for x in state.values {
            m.push(x);
        }
        Ok(m)
    }
}

#[cfg(feature = "serde")]
impl<F: Float> serde::Serialize for MovingMinMax<F> {
    fn serialize<Z: serde::Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
        super::state::serialize(
            serializer,
            &self.ring,
            &super::state::Extra::None,
            self.policy,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn auto_traits() {
        assert_send_sync::<MovingMinMax<f32>>();
        assert_send_sync::<MovingMinMax<f64>>();
    }

    #[test]
    fn the_blocks_never_outgrow_the_window() {
        let mut m = MovingMinMax::<f64>::new(4).unwrap();
        for i in 0..100 {
            m.push(f64::from(i));
            assert!(m.extrema.cells() <= 4);
        }
        assert_eq!((m.min(), m.max()), (Some(96.0), Some(99.0)));
    }
}
