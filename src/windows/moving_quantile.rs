//! A quantile (a median filter, by default) over a fixed moving window.

use alloc::vec::Vec;

use super::interpolation::Interpolation;
use super::policy::Policy;
use super::ring::Ring;
use super::series::sorted;
use super::window_order::{WindowOrder, numbered};
use crate::NanPolicy;
use crate::accumulator::impl_accumulator;
use crate::error::check_unit_interval;
use crate::series::check_output;
use crate::{Error, Float};

/// Slices shorter than this go through the push loop.
const SERIES_MIN: usize = 64;

/// The `q`-quantile of the last `window` values pushed, exactly, in a
/// memory move or O(log window) per push: pandas'
/// `rolling(window, min_periods=1).quantile(q, interpolation="linear")`.
///
/// With `m` values in the window sorted as `v₀ ≤ … ≤ v₍ₘ₋₁₎`, the quantile
/// is at the fractional rank `h = q·(m − 1)`: `v⌊h⌋` when `h` is whole,
/// else `v⌊h⌋ + (v⌊h⌋₊₁ − v⌊h⌋)·(h − ⌊h⌋)` — pandas' formula, evaluated
/// the same way, so on finite data the results are pandas' to the bit.
/// [`with_interpolation`](Self::with_interpolation) picks pandas' other
/// readings of a rank between two values (`lower`, `higher`, `nearest`,
/// `midpoint`: [`Interpolation`]).
/// [`median`](Self::median) is `q = 0.5`: a median filter, which removes
/// spikes that a moving average would smear.
///
/// A window of up to 4096 values is kept as one sorted array (of the
/// values' keys, in the order with `−0.0 < +0.0`): a push moves the values
/// between the leaving value's place and the entering one's by one, O(w)
/// but one memory move (a push-and-read loop over 10⁷ values on an AMD
/// EPYC 7003 guest, three runs: 34–54 ns a push at windows of 5 and 20,
/// 51–60 at 101, 95–122 at 1000, against 78–144, 205–221 and 268–300
/// with the ordered sets). Longer windows are kept in two ordered sets,
/// the `⌊h⌋ + 1` smallest and the rest, so the two neighbours of the
/// quantile are the largest of the first set and the smallest of the
/// second; a push there is O(log window). No arithmetic touches the
/// values except the final interpolation, so an outlier of 1e9 costs
/// nothing once it has left.
///
/// # NaN, infinities, zeros
///
/// While a NaN is in the window the quantile is `Some(NaN)`, exact again
/// once it has left (the crate's policy); pandas instead leaves NaN out,
/// which [`NanPolicy::Skip`] does too. Infinities are ordered values:
/// interpolating towards one gives it, between `−∞` and `+∞` NaN (pandas'
/// skip list mishandles infinities — it reports 1 as the median of
/// `[1, ∞, ∞]` — so there the crate follows the sorted window instead).
/// `−0.0` sorts below `+0.0`.
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
/// The values in the window, once in a ring and once in the sorted array
/// (8 bytes a value) or, past 4096, the ordered sets (a B-tree node per
/// few values), all allocated as values arrive.
///
/// # Equality and serialization
///
/// Equal when the window, `q`, the options and the values in order are
/// equal; serialized as `{"window", "q", "values", "nan_policy",
/// "min_periods", "interpolation"}` with the window's order rebuilt on
/// the way in (a `q` outside `[0, 1]` or more values than the window is
/// rejected; a state without `interpolation` is `Linear`).
///
/// **Checkpoints** (feature `serde`): serialized losslessly in any
/// format, and restored to a state that goes on bit for bit; see
/// [Checkpoints](crate#checkpoints).
///
/// # Example
///
/// ```
/// use momenta::MovingQuantile;
///
/// let mut median = MovingQuantile::median(3)?;
/// let smoothed: Vec<f64> = [1.0, 2.0, 90.0, 3.0, 4.0]
///     .into_iter()
///     .map(|x| median.push(x))
///     .collect();
/// assert_eq!(smoothed, [1.0, 1.5, 2.0, 3.0, 4.0]); // the spike is gone
///
/// let mut p90 = MovingQuantile::new(5, 0.9)?;
/// p90.extend_from_slice(&[1.0, 2.0, 3.0, 4.0, 5.0]);
/// assert_eq!(p90.quantile(), Some(4.6));
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct MovingQuantile<F> {
    ring: Ring<F>,
    q: F,
    interpolation: Interpolation,
    /// The values that are not NaN, in order.
    order: WindowOrder<F>,
    /// NaN values in the window.
    nans: usize,
    /// Values pushed since the last reset: the next value's number.
    pushed: u64,
    policy: Policy,
}

#[cfg(feature = "serde")]
crate::checkpoint::path::restore_from!([F: Float] MovingQuantile<F>, super::state::QuantileState<F>);

impl<F: Float> MovingQuantile<F> {
    /// An empty window over the last `window` values that reports their
    /// `q`-quantile.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidWindow`](crate::ErrorKind::InvalidWindow) when
    /// `window` is 0;
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// when `q` is outside `[0, 1]` or NaN.
    ///
    /// ```
    /// use momenta::MovingQuantile;
    /// assert_eq!(MovingQuantile::<f64>::new(9, 0.25)?.q(), 0.25);
    /// assert_eq!(
    ///     MovingQuantile::<f64>::new(9, 1.5).unwrap_err().to_string(),
    ///     "q must be in [0, 1], got 1.5"
    /// );
    /// assert!(MovingQuantile::<f64>::new(0, 0.5).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn new(window: usize, q: F) -> Result<Self, Error> {
        if window == 0 {
            return Err(Error::from(crate::ErrorKind::InvalidWindow { window }));
        }
        check_unit_interval("q", q.as_f64())?;
        Ok(Self {
            ring: Ring::new(window),
            q,
            interpolation: Interpolation::Linear,
            order: WindowOrder::for_window(window),
            nans: 0,
            pushed: 0,
            policy: Policy::default(),
        })
    }

    /// A median filter over the last `window` values: `new(window, 0.5)`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidWindow`](crate::ErrorKind::InvalidWindow) when
    /// `window` is 0.
    ///
    /// ```
    /// let mut m = momenta::MovingQuantile::median(4)?;
    /// m.extend_from_slice(&[7.0, 1.0, 3.0, 100.0]);
    /// assert_eq!(m.quantile(), Some(5.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn median(window: usize) -> Result<Self, Error> {
        Self::new(window, F::from_f64(0.5))
    }

    /// Reads a rank between two values as `how` says (pandas'
    /// `interpolation=`); the default is [`Interpolation::Linear`].
    ///
    /// ```
    /// use momenta::{Interpolation, MovingQuantile};
    /// let mut m = MovingQuantile::median(4)?.with_interpolation(Interpolation::Lower);
    /// m.extend_from_slice(&[7.0, 1.0, 3.0, 100.0]);
    /// assert_eq!(m.quantile(), Some(3.0)); // linear: 5
    /// assert_eq!(m.interpolation(), Interpolation::Lower);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn with_interpolation(mut self, how: Interpolation) -> Self {
        self.interpolation = how;
        self
    }

    /// The [`Interpolation`] in force.
    ///
    /// ```
    /// use momenta::{Interpolation, MovingQuantile};
    /// assert_eq!(MovingQuantile::<f64>::median(3)?.interpolation(), Interpolation::Linear);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// Skips NaN values instead of propagating them ([`NanPolicy`]): the
    /// quantile of the other values, as pandas computes it.
    ///
    /// ```
    /// use momenta::{MovingQuantile, NanPolicy};
    /// let mut m = MovingQuantile::median(4)?.with_nan_policy(NanPolicy::Skip);
    /// m.extend_from_slice(&[1.0, f64::NAN, 3.0, 8.0]);
    /// assert_eq!(m.quantile(), Some(3.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn with_nan_policy(mut self, policy: NanPolicy) -> Self {
        self.policy.nan = policy;
        self
    }

    /// Holds the quantile back (`None`, and NaN from [`push`](Self::push))
    /// until the window holds `min_periods` values that count — every
    /// value, or the non-NaN ones under [`NanPolicy::Skip`] — as pandas'
    /// `min_periods`. The default is 1; 0 acts as 1.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// when `min_periods` exceeds the window.
    ///
    /// ```
    /// let mut m = momenta::MovingQuantile::median(5)?.with_min_periods(3)?;
    /// assert!(m.push(1.0_f64).is_nan());
    /// assert!(m.push(2.0).is_nan());
    /// assert_eq!(m.push(9.0), 2.0);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn with_min_periods(mut self, min_periods: usize) -> Result<Self, Error> {
        self.policy = self
            .policy
            .with_min_periods(min_periods, self.ring.window())?;
        Ok(self)
    }

    /// Whether the window holds enough values for a quantile (see
    /// [`with_min_periods`](Self::with_min_periods)).
    ///
    /// ```
    /// let mut m = momenta::MovingQuantile::median(2)?;
    /// assert!(!m.is_ready());
    /// m.push(1.0);
    /// assert!(m.is_ready());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_ready(&self) -> bool {
        self.policy
            .ready(self.policy.counted(self.ring.len(), self.nans))
    }

    /// The `q` given to [`new`](Self::new).
    ///
    /// ```
    /// assert_eq!(momenta::MovingQuantile::<f32>::median(3)?.q(), 0.5);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn q(&self) -> F {
        self.q
    }

    /// Adds one value, dropping the oldest once the window is full, and
    /// returns the quantile of the window after it (NaN while a NaN counts
    /// or until the window is [ready](Self::is_ready)). One memory move
    /// of the values between the leaving and the entering one (windows of
    /// up to 4096), O(log window) beyond.
    ///
    /// A moving quantile is a filter, and a filter's push returns its
    /// output, as [`MovingAverage::push`](crate::MovingAverage::push) does.
    ///
    /// ```
    /// let mut m = momenta::MovingQuantile::median(3)?;
    /// assert_eq!(m.push(5.0), 5.0);
    /// assert_eq!(m.push(1.0), 3.0);
    /// assert_eq!(m.push(2.0), 2.0);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[inline]
    pub fn push(&mut self, x: F) -> F {
        let seq = self.pushed;
        self.pushed += 1;
        let leaving = self.ring.push(x).and_then(|old| {
            if old.is_nan() {
                self.nans -= 1;
                None
            } else {
                Some((old, seq - self.ring.window() as u64))
            }
        });
        let entering = if x.is_nan() {
            self.nans += 1;
            None
        } else {
            Some((x, seq))
        };
        self.order.exchange(leaving, entering, self.q.as_f64());
        self.quantile_or_nan()
    }

    /// The quantile, NaN when there is none.
    #[inline]
    fn quantile_or_nan(&self) -> F {
        if !self.is_ready() || (self.nans > 0 && !self.policy.skips_nan()) {
            return F::nan();
        }
        self.order.quantile(self.q.as_f64(), self.interpolation)
    }

    /// Adds every value of `xs`, in order; only the last `window` of them
    /// can stay, so longer slices skip straight to those (the window is
    /// left as pushing them one by one leaves it).
    ///
    /// ```
    /// let mut m = momenta::MovingQuantile::median(3)?;
    /// m.extend_from_slice(&[50.0, 1.0, 2.0, 3.0]);
    /// assert_eq!(m.quantile(), Some(2.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn extend_from_slice(&mut self, xs: &[F]) {
        if xs.len() >= self.ring.window() {
            self.pushed_all(xs);
        } else {
            for &x in xs {
                self.push(x);
            }
        }
    }

    /// The state pushing every value of `xs` leaves: the ring as the
    /// pushes leave it (its head too), and the order and the NaN count of
    /// the values then in the window, numbered as the pushes number them.
    /// O(window · log window): the order depends only on the window's
    /// values and their numbers.
    fn pushed_all(&mut self, xs: &[F]) {
        self.ring.extend(xs);
        self.pushed += xs.len() as u64;
        let first = self.pushed - self.ring.len() as u64;
        self.nans = self.ring.iter().filter(|x| x.is_nan()).count();
        self.order
            .refill(numbered(first, self.ring.iter()), self.q.as_f64());
    }

    /// Pushes every value of `xs` in order and returns the quantile after
    /// each push — what [`push`](Self::push) returns, NaN where
    /// [`quantile`](Self::quantile) is `None` — as a new vector: pandas'
    /// `s.rolling(window, min_periods=1).quantile(q, interpolation)` (and,
    /// for a [`median`](Self::median), `.median()`), polars'
    /// `s.rolling_quantile(q, interpolation, window, min_samples=1)` (and
    /// `s.rolling_median(window, min_samples=1)`).
    ///
    /// Every value is the one the push loop returns, bit for bit, and the
    /// window is left as the push loop leaves it. With the default linear
    /// interpolation a long slice through a window of up to 4096 values is
    /// not pushed value by value: the window is kept as a sorted array,
    /// which a push changes by two binary searches and one memory move (on
    /// a CPU with AVX2, a full window of up to 48 values is kept in
    /// registers and a push has no branch on the data; from 400 values,
    /// full windows go through sorted blocks), and the push path's order
    /// is rebuilt from the last window. The other interpolations take the
    /// push loop.
    ///
    /// ```
    /// let mut median = momenta::MovingQuantile::median(3)?;
    /// let smooth = median.quantile_series(&[1.0, 2.0, 90.0, 3.0, 4.0]);
    /// assert_eq!(smooth, [1.0, 1.5, 2.0, 3.0, 4.0]); // the spike is gone
    /// assert_eq!(median.push(5.0), 4.0); // it goes on: [3, 4, 5]
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use = "the series is the result; use `extend_from_slice` to only push"]
    pub fn quantile_series(&mut self, xs: &[F]) -> Vec<F> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.series_to(xs, &mut out);
        out
    }

    /// [`quantile_series`](Self::quantile_series) into a caller's buffer,
    /// as long as `xs`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`; nothing is
    /// pushed then.
    ///
    /// ```
    /// let mut m = momenta::MovingQuantile::median(3)?;
    /// let mut out = [0.0; 4];
    /// m.quantile_series_into(&[5.0, 1.0, 2.0, 8.0], &mut out)?;
    /// assert_eq!(out, [5.0, 3.0, 2.0, 2.0]);
    /// assert!(m.quantile_series_into(&[1.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn quantile_series_into(&mut self, xs: &[F], out: &mut [F]) -> Result<(), Error> {
        check_output("output", xs.len(), out.len())?;
        self.series_to(xs, out);
        Ok(())
    }

    /// The series into `out`: the sorted array (`windows/series/sorted.rs`)
    /// for a long enough slice through a window it serves under linear
    /// interpolation, else the push loop.
    fn series_to(&mut self, xs: &[F], out: &mut [F]) {
        let window = self.ring.window();
        if self.interpolation != Interpolation::Linear
            || window > sorted::MAX_WINDOW
            || xs.len() < SERIES_MIN.max(window / 2)
        {
            for (&x, slot) in xs.iter().zip(out) {
                *slot = self.push(x);
            }
            return;
        }
        sorted::series(self.ring.as_slices(), xs, window, self.q, self.policy, out);
        self.pushed_all(xs);
    }

    /// The `q`-quantile of the window: `None` until it is
    /// [ready](Self::is_ready), `Some(NaN)` while a NaN counts.
    ///
    /// ```
    /// let mut m = momenta::MovingQuantile::new(4, 0.25)?;
    /// assert_eq!(m.quantile(), None);
    /// m.extend_from_slice(&[4.0, 3.0, 2.0, 1.0]);
    /// assert_eq!(m.quantile(), Some(1.75));
    /// m.push(f64::NAN);
    /// assert!(m.quantile().unwrap().is_nan());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn quantile(&self) -> Option<F> {
        self.is_ready().then(|| self.quantile_or_nan())
    }

    /// The number of values in the window: `min(n, window)` after `n`
    /// pushes.
    ///
    /// ```
    /// let mut m = momenta::MovingQuantile::median(2)?;
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
    /// assert!(momenta::MovingQuantile::<f64>::median(2)?.is_empty());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ring.len() == 0
    }

    /// The window length given to [`new`](Self::new).
    ///
    /// ```
    /// assert_eq!(momenta::MovingQuantile::<f64>::median(7)?.window(), 7);
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
    /// let mut m = momenta::MovingQuantile::median(1)?;
    /// m.push(2.0);
    /// assert!(m.is_full());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_full(&self) -> bool {
        self.ring.is_full()
    }

    /// Forgets every value; the window length, `q` and the options stay.
    ///
    /// ```
    /// let mut m = momenta::MovingQuantile::median(3)?;
    /// m.extend_from_slice(&[1.0, 2.0]);
    /// m.reset();
    /// assert_eq!(m.quantile(), None);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn reset(&mut self) {
        self.ring.clear();
        self.order.clear();
        self.nans = 0;
        self.pushed = 0;
    }

    /// The values in the window, oldest first.
    ///
    /// ```
    /// let mut m = momenta::MovingQuantile::median(2)?;
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
    /// let mut m = momenta::MovingQuantile::median(2)?;
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

impl<F: Float> PartialEq for MovingQuantile<F> {
    /// Equal when the window lengths, `q` and the options are equal and
    /// the windows hold the same values in the same order.
    ///
    /// ```
    /// use momenta::MovingQuantile;
    /// let mut a = MovingQuantile::median(2)?;
    /// let mut b = MovingQuantile::median(2)?;
    /// a.extend_from_slice(&[5.0, 1.0, 2.0]);
    /// b.extend_from_slice(&[1.0, 2.0]);
    /// assert_eq!(a, b);
    /// assert_ne!(a, MovingQuantile::new(2, 0.1)?);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    fn eq(&self, other: &Self) -> bool {
        self.ring.window() == other.ring.window()
            && self.q == other.q
            && self.interpolation == other.interpolation
            && self.policy == other.policy
            && self.ring.len() == other.ring.len()
            && self.ring.iter().eq(other.ring.iter())
    }
}

impl_accumulator!(MovingQuantile);

#[cfg(feature = "serde")]
impl<F: Float> TryFrom<super::state::QuantileState<F>> for MovingQuantile<F> {
    type Error = Error;

    fn try_from(state: super::state::QuantileState<F>) -> Result<Self, Error> {
        let (state, q, how): (super::state::WindowState<F>, f64, Interpolation) = state.into();
        let mut m = Self::new(state.window, crate::float::exactly("q", q)?)?;
        m.policy = state.checked_policy()?;
        m.interpolation = how;
        for x in state.values {
            m.push(x);
        }
        Ok(m)
    }
}

#[cfg(feature = "serde")]
impl<F: Float> serde::Serialize for MovingQuantile<F> {
    fn serialize<Z: serde::Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
        super::state::serialize(
            serializer,
            &self.ring,
            &super::state::Extra::Quantile(self.q.as_f64(), self.interpolation),
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
        assert_send_sync::<MovingQuantile<f32>>();
        assert_send_sync::<MovingQuantile<f64>>();
    }

    #[test]
    fn the_order_holds_the_window_in_order_and_never_outgrows_it() {
        // A short window keeps sorted keys, a long one the ordered sets;
        // each gets a value three times, a NaN and a bulk refill.
        for window in [5, crate::windows::series::sorted::MAX_WINDOW + 1] {
            let mut m = MovingQuantile::<f64>::new(window, 0.3).unwrap();
            let long = matches!(m.order, WindowOrder::Sets(_));
            assert_eq!(long, window > 5, "window {window}");
            for i in 0..(window + 40) {
                let x = if i % 17 == 3 {
                    f64::NAN
                } else {
                    f64::from((i * 7 % 11) as u8)
                };
                m.push(x);
                let nans = m.iter().filter(|x| x.is_nan()).count();
                assert_eq!(m.order.len() + nans, m.len(), "window {window}, push {i}");
                assert!(m.order.is_in_order(0.3), "window {window}, push {i}");
            }
            m.extend_from_slice(&alloc::vec![2.0; 6000]);
            assert_eq!(m.order.len(), m.len());
            assert!(m.order.is_in_order(0.3));
        }
    }
}
