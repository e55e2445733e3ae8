//! The engine shared by the moving-window statistics.
//!
//! A [`Window`] keeps the last `window` values in a [`Ring`] and the
//! statistics of the finite ones in an `S: WindowStats`, updated in O(1) per
//! push: the value that enters is added and the value that leaves is
//! removed. NaN and ±∞ are only counted (in [`NonFinite`]), never fed to the
//! floating-point state, so the statistics are exact again the moment the
//! last non-finite value leaves the window.
//!
//! # Why it never drifts
//!
//! Adding and removing values forever would let rounding errors pile up. So
//! a second accumulator, `fresh`, takes only the values pushed since the last
//! refresh (additions only, no removals). After `window` such pushes the
//! window holds exactly those values, and `fresh` replaces `total`. The error
//! in `total` therefore comes from at most `window` additions and `window`
//! add/remove pairs, whatever the number of pushes, and every push stays
//! O(1) — there is no O(window) recomputation pass. A refresh also takes a
//! new shift from the data, so the shift follows a signal that wanders.
//!
//! # The sums
//!
//! [`ShiftedSum`] keeps Σ(x − K) for a shift `K` taken from the data (the
//! first finite value of its set) as an unevaluated pair `hi + lo`: every
//! addition is Knuth's error-free TwoSum, so the pair carries the sum of the
//! (rounded) shifted values with an error of about one ulp of the result
//! plus `n·u²` terms. On data such as `1e6 + U(0, 1)` the shifted values are
//! exact (Sterbenz), and the mean `K + Σ/n` is within an ulp or so of the
//! exact mean of the window. [`ShiftedMoments`] adds M2 = Σ(x − x̄)² with
//! Welford's update for additions, its inverse for removals, and the
//! sliding update `M2 += (x_new − x_old)·((x_new − x̄') + (x_old − x̄))` for
//! a replacement, every deviation measured from the accurate shifted mean.

#[cfg(feature = "serde")]
use alloc::vec::Vec;

use super::ring::Ring;
use crate::error::{Error, ErrorKind};
use crate::{Float, float::clamp_non_negative};

/// `n` as a float.
#[inline]
fn count_to<F: Float>(n: usize) -> F {
    F::from_count(n as u64)
}

/// Statistics of a multiset of finite values that supports adding and
/// removing values.
pub(crate) trait WindowStats<F>: Default + Clone {
    /// The number of values in the set.
    fn count(&self) -> usize;
    /// Adds a finite value.
    fn add(&mut self, x: F);
    /// Removes a finite value that was added earlier.
    fn remove(&mut self, x: F);
    /// Removes `old` and adds `new`, both finite.
    fn replace(&mut self, old: F, new: F);
    /// The compensated sum behind the mean.
    fn sum(&self) -> &ShiftedSum<F>;
}

/// Σ(x − shift) as an unevaluated pair `hi + lo`, with the count.
#[derive(Clone, Debug, Default)]
pub(crate) struct ShiftedSum<F> {
    count: usize,
    /// A value from the set (the first one added); 0 when empty.
    shift: F,
    hi: F,
    lo: F,
}

impl<F: Float> ShiftedSum<F> {
    #[inline]
    fn shifted(&self, x: F) -> F {
        x - self.shift
    }

    /// Adds `y` to `hi + lo` without losing the rounding error (TwoSum).
    #[inline]
    fn accumulate(&mut self, y: F) {
        let s = self.hi + y;
        let b = s - self.hi;
        let err = (self.hi - (s - b)) + (y - b);
        self.hi = s;
        self.lo = self.lo + err;
    }

    /// The mean minus the shift; 0 when empty.
    #[inline]
    pub(crate) fn offset(&self) -> F {
        if self.count == 0 {
            F::zero()
        } else {
            (self.hi + self.lo) / count_to(self.count)
        }
    }

    /// The mean of the set; 0 when empty.
    #[inline]
    pub(crate) fn mean(&self) -> F {
        self.shift + self.offset()
    }
}

impl<F: Float> WindowStats<F> for ShiftedSum<F> {
    #[inline]
    fn count(&self) -> usize {
        self.count
    }

    #[inline]
    fn add(&mut self, x: F) {
        if self.count == 0 {
            *self = Self {
                count: 1,
                shift: x,
                hi: F::zero(),
                lo: F::zero(),
            };
            return;
        }
        self.count += 1;
        self.accumulate(self.shifted(x));
    }

    #[inline]
    fn remove(&mut self, x: F) {
        if self.count <= 1 {
            // Empty again: start from an exact zero.
            *self = Self::default();
            return;
        }
        self.count -= 1;
        // `shift − x` is exactly `−(x − shift)`: rounding is symmetric.
        self.accumulate(self.shift - x);
    }

    #[inline]
    fn replace(&mut self, old: F, new: F) {
        if self.count == 0 {
            return self.add(new);
        }
        self.accumulate(self.shifted(new));
        self.accumulate(self.shift - old);
    }

    #[inline]
    fn sum(&self) -> &ShiftedSum<F> {
        self
    }
}

/// A [`ShiftedSum`] and M2 = Σ(x − x̄)².
#[derive(Clone, Debug, Default)]
pub(crate) struct ShiftedMoments<F> {
    sum: ShiftedSum<F>,
    m2: F,
}

impl<F: Float> ShiftedMoments<F> {
    /// M2, never negative (NaN passes through).
    #[inline]
    pub(crate) fn m2(&self) -> F {
        clamp_non_negative(self.m2)
    }
}

impl<F: Float> WindowStats<F> for ShiftedMoments<F> {
    #[inline]
    fn count(&self) -> usize {
        self.sum.count
    }

    #[inline]
    fn add(&mut self, x: F) {
        let before = self.sum.offset();
        self.sum.add(x);
        let y = self.sum.shifted(x);
        let after = self.sum.offset();
        self.m2 = self.m2 + (y - before) * (y - after);
    }

    #[inline]
    fn remove(&mut self, x: F) {
        if self.sum.count <= 2 {
            // One value or none is left, whose M2 is exactly 0.
            self.sum.remove(x);
            self.m2 = F::zero();
            return;
        }
        let before = self.sum.offset();
        let y = self.sum.shifted(x);
        self.sum.remove(x);
        let after = self.sum.offset();
        self.m2 = self.m2 - (y - before) * (y - after);
    }

    #[inline]
    fn replace(&mut self, old: F, new: F) {
        if self.sum.count <= 1 {
            self.sum.replace(old, new);
            self.m2 = F::zero();
            return;
        }
        let before = self.sum.offset();
        let y_old = self.sum.shifted(old);
        let y_new = self.sum.shifted(new);
        self.sum.replace(old, new);
        let after = self.sum.offset();
        self.m2 = self.m2 + (y_new - y_old) * ((y_new - after) + (y_old - before));
    }

    #[inline]
    fn sum(&self) -> &ShiftedSum<F> {
        &self.sum
    }
}

/// How many NaN, +∞ and −∞ the window holds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct NonFinite {
    nan: usize,
    pos_inf: usize,
    neg_inf: usize,
}

impl NonFinite {
    fn slot<F: Float>(&mut self, x: F) -> &mut usize {
        if x.is_nan() {
            &mut self.nan
        } else if x > F::zero() {
            &mut self.pos_inf
        } else {
            &mut self.neg_inf
        }
    }

    fn is_empty(&self) -> bool {
        self.nan == 0 && self.pos_inf == 0 && self.neg_inf == 0
    }

    /// The mean of a window that holds these non-finite values, `None` when
    /// it holds none: NaN if there is a NaN or both infinities, else the
    /// infinity.
    fn mean<F: Float>(&self) -> Option<F> {
        if self.nan > 0 || (self.pos_inf > 0 && self.neg_inf > 0) {
            Some(F::nan())
        } else if self.pos_inf > 0 {
            Some(F::infinity())
        } else if self.neg_inf > 0 {
            Some(F::neg_infinity())
        } else {
            None
        }
    }
}

/// The last `window` values and the statistics of their finite part.
#[derive(Clone, Debug)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Deserialize),
    serde(
        try_from = "WindowState<F>",
        bound = "F: Float + serde::de::DeserializeOwned, S: WindowStats<F>"
    )
)]
pub(crate) struct Window<F, S> {
    ring: Ring<F>,
    non_finite: NonFinite,
    /// Statistics of the finite values in the window.
    total: S,
    /// Statistics of the finite values pushed since the last refresh; only
    /// fed while the window is full.
    fresh: S,
    /// Pushes into a full window since the last refresh.
    since_refresh: usize,
}

impl<F: Float, S: WindowStats<F>> Window<F, S> {
    /// # Errors
    ///
    /// [`ErrorKind::InvalidWindow`] when `window` is 0.
    pub(crate) fn new(window: usize) -> Result<Self, Error> {
        if window == 0 {
            return Err(Error::from(ErrorKind::InvalidWindow { window }));
        }
        Ok(Self {
            ring: Ring::new(window),
            non_finite: NonFinite::default(),
            total: S::default(),
            fresh: S::default(),
            since_refresh: 0,
        })
    }

    #[inline]
    pub(crate) fn push(&mut self, x: F) {
        let finite = x.is_finite();
        match self.ring.push(x) {
            None => {
                if finite {
                    self.total.add(x);
                } else {
                    *self.non_finite.slot(x) += 1;
                }
            }
            Some(old) => {
                match (old.is_finite(), finite) {
                    (true, true) => self.total.replace(old, x),
                    (true, false) => {
                        self.total.remove(old);
                        *self.non_finite.slot(x) += 1;
                    }
                    (false, true) => {
                        *self.non_finite.slot(old) -= 1;
                        self.total.add(x);
                    }
                    (false, false) => {
                        *self.non_finite.slot(old) -= 1;
                        *self.non_finite.slot(x) += 1;
                    }
                }
                if finite {
                    self.fresh.add(x);
                }
                self.since_refresh += 1;
                if self.since_refresh == self.ring.window() {
                    // The window now holds exactly the values in `fresh`.
                    debug_assert_eq!(self.fresh.count(), self.total.count());
                    self.total = core::mem::take(&mut self.fresh);
                    self.since_refresh = 0;
                }
            }
        }
    }

    pub(crate) fn extend_from_slice(&mut self, xs: &[F]) {
        let window = self.ring.window();
        let xs = if xs.len() >= window {
            // Only the last `window` values stay: skip the others.
            self.reset();
            xs.get(xs.len() - window..).unwrap_or(xs)
        } else {
            xs
        };
        for &x in xs {
            self.push(x);
        }
    }

    pub(crate) fn reset(&mut self) {
        self.ring.clear();
        self.non_finite = NonFinite::default();
        self.total = S::default();
        self.fresh = S::default();
        self.since_refresh = 0;
    }

    pub(crate) fn window(&self) -> usize {
        self.ring.window()
    }

    pub(crate) fn len(&self) -> usize {
        self.ring.len()
    }

    pub(crate) fn is_full(&self) -> bool {
        self.ring.is_full()
    }

    pub(crate) fn as_slices(&self) -> (&[F], &[F]) {
        self.ring.as_slices()
    }

    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = F> + '_ {
        self.ring.iter()
    }

    /// The mean of a non-empty window (0 when empty).
    #[inline]
    pub(crate) fn mean_unchecked(&self) -> F {
        self.non_finite
            .mean()
            .unwrap_or_else(|| self.total.sum().mean())
    }

    /// The mean, `None` when empty.
    #[inline]
    pub(crate) fn mean(&self) -> Option<F> {
        (self.len() > 0).then(|| self.mean_unchecked())
    }

    /// The statistics of the finite values, or `None` when the window holds
    /// a NaN or an infinity.
    #[inline]
    pub(crate) fn finite_stats(&self) -> Option<&S> {
        self.non_finite.is_empty().then_some(&self.total)
    }
}

impl<F: Float, S> PartialEq for Window<F, S> {
    /// Same window length and the same values in the same order.
    fn eq(&self, other: &Self) -> bool {
        self.ring.window() == other.ring.window()
            && self.ring.len() == other.ring.len()
            && self.ring.iter().eq(other.ring.iter())
    }
}

/// The serialized form of a window: its length and its values, oldest
/// first. The statistics are recomputed on the way in.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WindowState<F> {
    window: usize,
    values: Vec<F>,
}

#[cfg(feature = "serde")]
impl<F: Float, S: WindowStats<F>> TryFrom<WindowState<F>> for Window<F, S> {
    type Error = Error;

    fn try_from(state: WindowState<F>) -> Result<Self, Error> {
        let mut w = Self::new(state.window)?;
        if state.values.len() > state.window {
            return Err(Error::state(alloc::format!(
                "window of {} holds {} values",
                state.window,
                state.values.len()
            )));
        }
        for x in state.values {
            w.push(x);
        }
        Ok(w)
    }
}

#[cfg(feature = "serde")]
impl<F: Float + serde::Serialize, S> serde::Serialize for Window<F, S> {
    fn serialize<Z: serde::Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
        use serde::ser::SerializeStruct;

        /// The values oldest first, without copying them.
        struct Values<'a, F>(&'a Ring<F>);

        impl<F: Float + serde::Serialize> serde::Serialize for Values<'_, F> {
            fn serialize<Z: serde::Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
                serializer.collect_seq(self.0.iter())
            }
        }

        let mut state = serializer.serialize_struct("WindowState", 2)?;
        state.serialize_field("window", &self.ring.window())?;
        state.serialize_field("values", &Values(&self.ring))?;
        state.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    /// Exact reference: the set of values as a plain vector.
    fn naive(xs: &[f64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        (mean, xs.iter().map(|x| (x - mean) * (x - mean)).sum())
    }

    #[test]
    fn shifted_sum_adds_removes_and_replaces_exactly_on_small_integers() {
        let mut s = ShiftedSum::<f64>::default();
        for x in [5.0, 7.0, 9.0] {
            s.add(x);
        }
        assert_eq!(s.mean(), 7.0);
        s.remove(5.0);
        assert_eq!(s.mean(), 8.0);
        s.replace(7.0, 1.0);
        assert_eq!(s.mean(), 5.0);
        s.remove(9.0);
        s.remove(1.0);
        assert_eq!(s.count(), 0);
        assert_eq!(s.mean(), 0.0);
        // The next value becomes the new shift.
        s.add(-3.0);
        assert_eq!(s.mean(), -3.0);
    }

    #[test]
    fn compensation_keeps_what_plain_addition_drops() {
        let mut s = ShiftedSum::<f64>::default();
        s.add(0.0);
        s.add(1.0);
        s.add(1e-16);
        s.add(1e-16);
        s.remove(1.0);
        // Plain addition would have lost both 1e-16 against 1.0.
        assert_eq!(s.mean() * 3.0, 2e-16);
    }

    #[test]
    fn moments_follow_the_two_pass_formula_through_every_operation() {
        let mut m = ShiftedMoments::<f64>::default();
        let mut set: Vec<f64> = Vec::new();
        let ops: [(Option<f64>, Option<f64>); 7] = [
            (None, Some(2.0)),
            (None, Some(4.0)),
            (None, Some(9.0)),
            (Some(2.0), Some(6.0)),
            (Some(4.0), None),
            (None, Some(1.0)),
            (Some(9.0), Some(3.0)),
        ];
        for (old, new) in ops {
            match (old, new) {
                (Some(o), Some(n)) => m.replace(o, n),
                (Some(o), None) => m.remove(o),
                (None, Some(n)) => m.add(n),
                (None, None) => {}
            }
            if let Some(o) = old {
                let i = set.iter().position(|&v| v == o).unwrap();
                set.remove(i);
            }
            set.extend(new);
            let (mean, m2) = naive(&set);
            // Within an ulp or two: both are rounded.
            assert!((m.sum().mean() - mean).abs() <= 2.0 * f64::EPSILON * mean.abs());
            assert!((m.m2() - m2).abs() < 1e-12, "{} vs {m2}", m.m2());
        }
        m.remove(6.0);
        m.remove(1.0);
        assert_eq!(m.count(), 1);
        assert_eq!(m.m2(), 0.0);
    }

    #[test]
    fn non_finite_values_are_counted_not_summed() {
        let mut w = Window::<f64, ShiftedSum<f64>>::new(3).unwrap();
        w.push(1.0);
        w.push(f64::INFINITY);
        assert_eq!(w.mean(), Some(f64::INFINITY));
        w.push(f64::NEG_INFINITY);
        assert!(w.mean().unwrap().is_nan());
        w.push(f64::NAN);
        assert!(w.mean().unwrap().is_nan());
        assert!(w.finite_stats().is_none());
        w.push(4.0);
        w.push(6.0);
        assert!(w.mean().unwrap().is_nan());
        w.push(8.0);
        assert_eq!(w.mean(), Some(6.0));
        assert!(w.finite_stats().is_some());
    }

    #[test]
    fn refresh_happens_every_window_pushes_once_full() {
        let mut w = Window::<f64, ShiftedSum<f64>>::new(4).unwrap();
        for x in 0..4 {
            w.push(f64::from(x));
            assert_eq!(w.since_refresh, 0);
        }
        for x in 4..12 {
            w.push(f64::from(x));
            assert_eq!(w.since_refresh, (x - 3) as usize % 4);
        }
        // After a refresh the shift is the oldest value in the window.
        assert_eq!(w.total.shift, 8.0);
        assert_eq!(w.mean(), Some(9.5));
    }
}
