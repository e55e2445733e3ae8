//! A quantile (a median filter, by default) over a fixed moving window.

use alloc::collections::BTreeSet;
use core::cmp::Ordering;

use alloc::vec::Vec;

use super::extrema::below;
use super::policy::Policy;
use super::ring::Ring;
use super::series::sorted;
use crate::NanPolicy;
use crate::accumulator::impl_accumulator;
use crate::error::check_unit_interval;
use crate::series::check_output;
use crate::{Error, Float};

/// Slices shorter than this go through the push loop.
const SERIES_MIN: usize = 64;

/// A value ordered with `−0.0` below `+0.0`, tagged with its number in the
/// stream so that equal values are distinct keys. NaN never enters.
#[derive(Clone, Copy, Debug)]
struct Key<F>(F, u64);

impl<F: Float> Ord for Key<F> {
    fn cmp(&self, other: &Self) -> Ordering {
        if below(self.0, other.0) {
            Ordering::Less
        } else if below(other.0, self.0) {
            Ordering::Greater
        } else {
            self.1.cmp(&other.1)
        }
    }
}

impl<F: Float> PartialOrd for Key<F> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<F: Float> PartialEq for Key<F> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<F: Float> Eq for Key<F> {}

/// The value `frac` of the way from `lo` to `hi` (`lo ≤ hi`), by pandas'
/// formula `lo + (hi − lo)·frac` wherever that is finite: between equal
/// infinities it is that infinity, between an infinity and a finite value
/// the infinity, between `−∞` and `+∞` NaN, and a difference that
/// overflows is avoided.
pub(super) fn lerp<F: Float>(lo: F, hi: F, frac: f64) -> F {
    if frac == 0.0 {
        return lo;
    }
    if !lo.is_finite() || !hi.is_finite() {
        return lo + hi;
    }
    let f = F::from_f64(frac);
    let d = hi - lo;
    if d.is_finite() {
        lo + d * f
    } else {
        lo * (F::one() - f) + hi * f
    }
}

/// The rank `h = q·(m − 1)` of the `q`-quantile among `m ≥ 1` values, as
/// `(⌊h⌋, h − ⌊h⌋)`, computed in `f64` as pandas does.
#[inline]
pub(super) fn rank<F: Float>(q: F, m: usize) -> (usize, f64) {
    let h = q.as_f64() * (m - 1) as f64;
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "0 ≤ h ≤ m − 1, so its floor is a valid index"
    )]
    let idx = h as usize;
    (idx, h - idx as f64)
}

/// The `q`-quantile of the last `window` values pushed, exactly, in
/// O(log window) time per push: pandas'
/// `rolling(window, min_periods=1).quantile(q, interpolation="linear")`.
///
/// With `m` values in the window sorted as `v₀ ≤ … ≤ v₍ₘ₋₁₎`, the quantile
/// is at the fractional rank `h = q·(m − 1)`: `v⌊h⌋` when `h` is whole,
/// else `v⌊h⌋ + (v⌊h⌋₊₁ − v⌊h⌋)·(h − ⌊h⌋)` — pandas' formula, evaluated
/// the same way, so on finite data the results are pandas' to the bit.
/// [`median`](Self::median) is `q = 0.5`: a median filter, which removes
/// spikes that a moving average would smear.
///
/// The values are kept in two ordered sets, the `⌊h⌋ + 1` smallest and the
/// rest, so the two neighbours of the quantile are the largest of the first
/// set and the smallest of the second; a push removes the value that leaves,
/// inserts the new one and moves at most a value or two across. No
/// arithmetic touches the values except the final interpolation, so an
/// outlier of 1e9 costs nothing once it has left.
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
/// # Memory
///
/// The values in the window, once in a ring and once in the ordered sets
/// (a B-tree node per few values), all allocated as values arrive.
///
/// # Equality and serialization
///
/// Equal when the window, `q`, the options and the values in order are
/// equal; serialized as `{"window", "q", "values", "nan_policy",
/// "min_periods"}` with the ordered sets rebuilt on the way in (a `q`
/// outside `[0, 1]` or more values than the window is rejected).
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
    /// The `⌊q·(m − 1)⌋ + 1` smallest of the `m` values that are not NaN.
    lower: BTreeSet<Key<F>>,
    /// The other values that are not NaN.
    upper: BTreeSet<Key<F>>,
    /// NaN values in the window.
    nans: usize,
    /// Values pushed since the last reset: the next value's number.
    pushed: u64,
    policy: Policy,
}

#[cfg(feature = "serde")]
crate::serde_path::restore_from!([F: Float] MovingQuantile<F>, super::state::QuantileState<F>);

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
            lower: BTreeSet::new(),
            upper: BTreeSet::new(),
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
            .with_min_periods(min_periods, Some(self.ring.window()))?;
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

    /// The rank of the quantile among `m ≥ 1` values ([`rank`]).
    #[inline]
    fn rank(&self, m: usize) -> (usize, f64) {
        rank(self.q, m)
    }

    /// Moves values across so that `lower` holds the `⌊h⌋ + 1` smallest.
    #[inline]
    fn rebalance(&mut self) {
        let m = self.lower.len() + self.upper.len();
        let k = if m == 0 { 0 } else { self.rank(m).0 + 1 };
        while self.lower.len() > k {
            if let Some(key) = self.lower.pop_last() {
                self.upper.insert(key);
            }
        }
        while self.lower.len() < k {
            match self.upper.pop_first() {
                Some(key) => self.lower.insert(key),
                None => break,
            };
        }
    }

    /// Adds one value, dropping the oldest once the window is full, and
    /// returns the quantile of the window after it (NaN while a NaN counts
    /// or until the window is [ready](Self::is_ready)). O(log window).
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
        if let Some(old) = self.ring.push(x) {
            if old.is_nan() {
                self.nans -= 1;
            } else {
                let key = Key(old, seq - self.ring.window() as u64);
                if !self.lower.remove(&key) {
                    self.upper.remove(&key);
                }
            }
        }
        if x.is_nan() {
            self.nans += 1;
        } else {
            let key = Key(x, seq);
            if self.lower.last().is_some_and(|top| key < *top) {
                self.lower.insert(key);
            } else {
                self.upper.insert(key);
            }
        }
        self.rebalance();
        self.quantile_or_nan()
    }

    /// The quantile, NaN when there is none.
    #[inline]
    fn quantile_or_nan(&self) -> F {
        if !self.is_ready() || (self.nans > 0 && !self.policy.skips_nan()) {
            return F::nan();
        }
        let m = self.lower.len() + self.upper.len();
        if m == 0 {
            return F::nan();
        }
        let (_, frac) = self.rank(m);
        let lo = self.lower.last().map_or_else(F::nan, |k| k.0);
        if frac == 0.0 {
            return lo;
        }
        let hi = self.upper.first().map_or_else(F::nan, |k| k.0);
        lerp(lo, hi, frac)
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
    /// pushes leave it (its head too), and the ordered sets and the NaN
    /// count of the values then in the window, numbered as the pushes
    /// number them. O(window · log window): the sets depend only on the
    /// window's values and their numbers.
    fn pushed_all(&mut self, xs: &[F]) {
        self.ring.extend(xs);
        self.pushed += xs.len() as u64;
        let first = self.pushed - self.ring.len() as u64;
        let mut keys: Vec<Key<F>> = (first..)
            .zip(self.ring.iter())
            .filter(|(_, x)| !x.is_nan())
            .map(|(seq, x)| Key(x, seq))
            .collect();
        self.nans = self.ring.len() - keys.len();
        keys.sort_unstable();
        let k = if keys.is_empty() {
            0
        } else {
            self.rank(keys.len()).0 + 1
        };
        let upper = keys.split_off(k.min(keys.len()));
        self.lower = keys.into_iter().collect();
        self.upper = upper.into_iter().collect();
    }

    /// Pushes every value of `xs` in order and returns the quantile after
    /// each push — what [`push`](Self::push) returns, NaN where
    /// [`quantile`](Self::quantile) is `None` — as a new vector: pandas'
    /// `s.rolling(window, min_periods=1).quantile(q)` (and, for a
    /// [`median`](Self::median), `.median()`), polars'
    /// `s.rolling_quantile(q, "linear", window, min_samples=1)` (and
    /// `s.rolling_median(window, min_samples=1)`).
    ///
    /// Every value is the one the push loop returns, bit for bit, and the
    /// window is left as the push loop leaves it. A long slice through a
    /// window of up to 4096 values is not pushed value by value: the window
    /// is kept as a sorted array, which a push changes by two binary
    /// searches and one memory move, and the ordered sets are rebuilt from
    /// the last window.
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
    /// for a long enough slice through a window it serves, else the push
    /// loop.
    fn series_to(&mut self, xs: &[F], out: &mut [F]) {
        let window = self.ring.window();
        if window > sorted::MAX_WINDOW || xs.len() < SERIES_MIN.max(window / 2) {
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
        self.lower.clear();
        self.upper.clear();
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
        let (state, q): (super::state::WindowState<F>, f64) = state.into();
        let mut m = Self::new(state.window, crate::float::exactly("q", q)?)?;
        m.policy = state.checked_policy()?;
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
            &super::state::Extra::Quantile(self.q.as_f64()),
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
    fn interpolation_follows_the_limits_at_infinities() {
        assert_eq!(lerp(1.0, 3.0, 0.25), 1.5);
        assert_eq!(lerp(f64::NEG_INFINITY, 2.0, 0.5), f64::NEG_INFINITY);
        assert_eq!(lerp(2.0, f64::INFINITY, 0.5), f64::INFINITY);
        assert_eq!(lerp(f64::INFINITY, f64::INFINITY, 0.5), f64::INFINITY);
        assert!(lerp(f64::NEG_INFINITY, f64::INFINITY, 0.5).is_nan());
        assert_eq!(lerp(-f64::MAX, f64::MAX, 0.5), 0.0);
        assert_eq!(lerp(f64::INFINITY, f64::INFINITY, 0.0), f64::INFINITY);
    }

    #[test]
    fn the_sets_split_at_the_rank_and_never_outgrow_the_window() {
        let mut m = MovingQuantile::<f64>::new(5, 0.3).unwrap();
        for i in 0..40 {
            m.push(f64::from((i * 7) % 11));
            let n = m.lower.len() + m.upper.len();
            assert_eq!(n, m.len());
            assert_eq!(m.lower.len(), m.rank(n).0 + 1);
            assert!(m.lower.last() <= m.upper.first().or(m.lower.last()));
        }
    }
}
