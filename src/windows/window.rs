//! The engine shared by the moving-window statistics.
//!
//! `MovingAverage`, `MovingVariance` and `MovingStats` run it over
//! `ExactMoments` (`exact_moments.rs`: exact integer sums, with the
//! compensated sums below for the windows the integers cannot hold), and
//! `TimeWindow` keeps the compensated sums ([`ShiftedMoments`]) itself.
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
//! Adding and removing values forever would let rounding errors pile up.
//! The sums below are compensated, so a replacement costs the sum an
//! error of order `ε²` of its size, and M2 watches its own cancellation
//! ([Rebuilds](#rebuilds)). On top of that the statistics are taken afresh
//! from the values every [`REFRESH_PUSHES`] pushes (or every `window`
//! pushes for longer windows): once the window is full, the ring's head
//! wraps every `window` pushes, and at that moment the window holds exactly
//! the values pushed since the last wrap, in order, in one slice. The sum
//! is recomputed from them in compensated lanes and M2 by a two-pass
//! (`lanes.rs`), a fraction of an instruction per push.
//!
//! Every push into a full window of finite values, but the one that wraps
//! the head and those after a non-finite value, takes a fast path: one
//! comparison of the head against `fast_until`, the replacement, the sums
//! and their checks. Filling, non-finite values and the wrap take the slow
//! path.
//!
//! # The sums and the shift
//!
//! [`ShiftedSum`] keeps Σ(x − K) for a shift `K` as an unevaluated pair
//! `hi + lo`. Every value enters as its rounded shifted value, added with
//! Knuth's error-free TwoSum, plus the rounding error of the subtraction
//! itself; a replacement adds the exact difference `x_new − x_old`. So the
//! pair holds the exact sum up to the roundings of `lo`, whatever `K` is,
//! and the mean `K + Σ/n` is within an ulp or so of the exact mean of the
//! window as long as `K` is of the size of the values in it.
//!
//! The shift is therefore kept on a value that is in the window: when the
//! value that set it leaves (the first value, once the window is full; the
//! newest value at the last wrap, at every wrap), the shift moves onto the
//! value just pushed, which stays until the next wrap. The move is exact to
//! those same roundings and O(1): Σ(x − K') = Σ(x − K) − n·(K' − K), with
//! `K' − K` and its product by `n` formed without rounding.
//!
//! The roundings of `lo` are the pair's only error, at most `ε/2·|lo|`
//! each, so the pair keeps their sum, `Σ|lo|` since it was last taken
//! afresh, and checks it on every push against the size of what it is read
//! at, `n·|K| + |Σ|`. On ordinary data `lo` holds some `ε` of the sum and
//! the check never fires. It fires when values far larger than the rest
//! have gone through: their sums need more than two words, `lo` carries
//! their low words, and what the small values add is rounded off at that
//! size. While the large values are in the window that is below an ulp of
//! the sum; the push at which they have left (or the shift has moved off
//! an outlier) finds the sum small against `Σ|lo|` and takes it afresh.
//! (Without that check, a window of 5 that had held `1e300`, `3e299 +
//! 7e283` and `−1.3e300` read a mean of 1.1 for values whose mean is 0.7.)
//!
//! The count starts again from `|lo|` only where the pair is the exact sum
//! rounded to two words, taken by non-overlapping partials ([`ExactSum`],
//! in `lanes.rs`). A compensated sum of values that cancel hugely is not
//! that (its one `lo` rounds off what is small beside their low words),
//! so a sum taken afresh in compensated steps (a rebuild, the lanes of a
//! refresh) counts their roundings into `Σ|lo|`: a rebuild takes the sum
//! exactly when they come near the check, a refresh leaves it to the
//! check.
//! (When the pair taken afresh was a compensated sum, a window of 5 that
//! had held `3.3e38`, `−f64::MAX`, `f64::MAX` and `1e20` read a mean of
//! 1e20 for values whose mean is 2.5e19.)
//!
//! [`ShiftedMoments`] adds M2 = Σ(x − x̄)² with Welford's update for
//! additions, its inverse for removals, and the sliding update
//! `M2 += (x_new − x_old)·((x_new − x̄') + (x_old − x̄))` for a replacement,
//! every deviation measured from the accurate shifted mean.
//!
//! # Rebuilds
//!
//! Removing a value leaves in M2 an error of a few ulps of the terms that
//! went through it: when a huge value leaves, M2 falls and the error would
//! dominate it. The state keeps the sum of the magnitudes of M2's updates
//! since M2 was last computed afresh (its "churn"); when that exceeds
//! [`M2_CANCELLATION`] times M2, M2 is recomputed from the values in the
//! window (a two-pass from the exact mean), so its error stays within a few
//! dozen ulps. This costs O(window) and fires only when M2 has fallen by
//! that factor since it was last computed: about once per value that
//! leaves and is much larger than the rest, a bounded number of times per
//! factor-8 fall in a decaying signal, and on stationary data once every
//! five to seven windows' worth of pushes, as the churn of ordinary
//! updates adds up (`U(0, 1)`: 9362 times per million pushes with a window
//! of 20, 136 times with a window of 1000; measured).
//!
//! Values so large that the sums could overflow (near `f64::MAX`) are
//! handled the same way: an overflow (a NaN in the pair, which fails the
//! check) triggers a rebuild in which every value is multiplied by a power
//! of two small enough that the sum cannot overflow, so a representable
//! mean stays finite. M2 brings its deviations down by a power of two of
//! its own when their squares would overflow, so the mean is that of the
//! plain [`ShiftedSum`] bit for bit, and a variance too large to represent
//! is +∞, never NaN.

use super::lanes::{ExactSum, compensated_sum, squared_deviations};
use super::policy::Policy;
use super::ring::Ring;
#[cfg(feature = "serde")]
use super::state::{EngineState, M2State, SumsState, SumsWindowState};
use crate::Float;
use crate::NanPolicy;
use crate::error::{Error, ErrorKind};
use crate::float::{clamp_non_negative, two_sum};

/// `n` as a float.
#[inline]
fn count_to<F: Float>(n: usize) -> F {
    F::from_count(n as u64)
}

/// `a − b` as `(d, e)` with `d + e = a − b` exactly: `d` is the rounded
/// difference and `e` what rounding dropped (TwoSum on `a + (−b)`).
#[inline]
fn two_diff<F: Float>(a: F, b: F) -> (F, F) {
    two_sum(a, -b)
}

/// A window takes its statistics afresh from its values at the first wrap
/// of its head after this many pushes into it (and so at every wrap when
/// the window is longer). Between refreshes every replacement adds an
/// exact difference to a compensated sum, whose error grows by `ε²` of the
/// sum per push, and M2's error is held by its cancellation check
/// ([`M2_CANCELLATION`]); the refresh bounds the rest. A power of two well
/// above the windows people use, so the O(window) refresh costs a small
/// fraction of an instruction per push.
#[cfg(not(fuzzing))]
const REFRESH_PUSHES: usize = 1 << 16;
/// Under the fuzzer, whose inputs hold a few hundred pushes, a refresh
/// every 64 pushes, so that it reaches the refresh and what follows.
#[cfg(fuzzing)]
const REFRESH_PUSHES: usize = 1 << 6;

/// A rebuild of M2 is due when the sum of the magnitudes of its updates
/// since it was last computed afresh — its rounding error is a few ulps of
/// that — exceeds M2 by this factor: M2 has then fallen by that much since
/// the terms were large.
const M2_CANCELLATION: f64 = 8.0;

/// A sum taken afresh by compensated addition is kept when the bound on
/// its error (`ε·lo_churn`) is below this fraction of the size it is read
/// at, `n·|shift| + |Σ|`; otherwise it is taken exactly ([`ExactSum`]).
/// On ordinary data the bound is some `n·ε` of that size; only values
/// that cancel hugely reach this, and a pair kept so far below the check
/// of [`needs_rebuild`](WindowStats::needs_rebuild) does not call for the
/// sum afresh again soon.
const FRESH_CHURN: f64 = 1.0 / 1_048_576.0;

/// The power of two `s ≤ 1` that brings `max_abs · s` down to `limit`
/// (both positive and finite).
fn scale_for<F: Float>(max_abs: F, limit: F) -> F {
    let half = F::from_f64(0.5);
    let mut scale = F::one();
    while max_abs * scale > limit {
        scale = scale * half;
    }
    scale
}

/// Statistics of a multiset of finite values that supports adding and
/// removing values.
pub(crate) trait WindowStats<F>: Default + Clone {
    /// Adds a finite value.
    fn add(&mut self, x: F);
    /// Adds a finite value to a set that only ever grows from empty (a
    /// time window's `fresh` accumulator), where the shift need not be
    /// taken from the data until the set takes over the window.
    #[inline]
    fn add_fresh(&mut self, x: F) {
        self.add(x);
    }
    /// The set, filled by [`add_fresh`](Self::add_fresh) only, now holds
    /// exactly the window's finite values `values()`: completes whatever
    /// `add_fresh` left out. O(n), once per `window` pushes.
    #[inline]
    fn took_over<I: DoubleEndedIterator<Item = F>>(&mut self, values: impl Fn() -> I) {
        let _ = values;
    }
    /// The set is now exactly the values of `older` then `newer`, all
    /// finite, oldest first: recomputes the statistics from them, with the
    /// shift on the newest, in lanes. O(n).
    fn refresh(&mut self, older: &[F], newer: &[F]);
    /// [`rebuild`](Self::rebuild) from the values of `older` then `newer`,
    /// all finite, in lanes. O(n).
    fn rebuild_finite(&mut self, older: &[F], newer: &[F]);
    /// Removes a finite value that was added earlier.
    fn remove(&mut self, x: F);
    /// Removes `old`, a finite value of the set, and adds `new`, finite.
    fn replace(&mut self, old: F, new: F);
    /// Replaces `olds[j]` by `news[j]` for each `j` in order, as
    /// [`replace`](Self::replace) followed by the check of
    /// [`needs_rebuild`](Self::needs_rebuild) does, while the new value is
    /// finite and no rebuild is due. Returns how many replacements were
    /// made, and whether the last one left a rebuild due. The loop of a
    /// window's `extend_from_slice` between two wraps.
    #[inline]
    fn replace_run(&mut self, olds: &[F], news: &[F]) -> (usize, bool)
    where
        F: Float,
    {
        for (j, (&old, &new)) in olds.iter().zip(news).enumerate() {
            if !new.is_finite() {
                return (j, false);
            }
            self.replace(old, new);
            if self.needs_rebuild() {
                return (j + 1, true);
            }
        }
        (olds.len().min(news.len()), false)
    }

    /// Moves the shift onto `x`, a finite value of the set, without
    /// changing the statistics. O(1).
    fn rebase(&mut self, x: F);
    /// Whether rounding may have cost the state digits that only a pass
    /// over the values can restore: a sum that overflowed, or (for M2) a
    /// cancellation. Cheap: checked on every push.
    fn needs_rebuild(&self) -> bool;
    /// Recomputes what [`needs_rebuild`](Self::needs_rebuild) found
    /// unreliable from `values()`, the finite values of the set, oldest
    /// first. O(n); `values` is called more than once.
    fn rebuild<I: Iterator<Item = F>>(&mut self, values: impl Fn() -> I);
    /// Recomputes everything from `values()`, the sum included (a refresh
    /// of a window that holds non-finite values). O(n).
    fn resum<I: Iterator<Item = F>>(&mut self, values: impl Fn() -> I) {
        self.rebuild(values);
    }
    /// The ring's head has just wrapped (a full window, every `window`
    /// pushes), before the window moves its shift or refreshes.
    #[inline]
    fn wrapped(&mut self) {}
    /// The compensated sum behind the mean.
    fn sum(&self) -> &ShiftedSum<F>;
    /// The mean of the finite values.
    #[inline]
    fn mean(&self) -> F
    where
        F: Float,
    {
        self.sum().mean()
    }
    /// The state as it is, for a serialized window.
    #[cfg(feature = "serde")]
    fn to_state(&self) -> SumsState<F>;
    /// The state `state` describes, of a set whose finite values are
    /// `values()`. O(n).
    ///
    /// # Errors
    ///
    /// When it breaks an invariant, or differs from the values' own sums
    /// by more than its rounding can explain.
    #[cfg(feature = "serde")]
    fn from_state<I: Iterator<Item = F>>(
        state: SumsState<F>,
        values: impl Fn() -> I,
    ) -> Result<Self, Error>;
}

/// Σ(x·scale − shift) as an unevaluated pair `hi + lo`, with the count.
///
/// Each value enters as its rounded shifted value plus the rounding error
/// of that subtraction (`two_diff`), and is removed the same way, so the
/// pair holds the exact sum of the set's shifted values up to `ε²` terms,
/// whatever the shift. The shift therefore only matters through the final
/// rounding of `shift + offset`, and it can be moved in O(1)
/// ([`rebase`](WindowStats::rebase)).
#[derive(Clone, Debug)]
pub(crate) struct ShiftedSum<F> {
    count: usize,
    /// `count·|shift|`: with `|hi|`, the size of the sum an error is
    /// measured against.
    magnitude: F,
    /// A value from the set, scaled; 0 when empty.
    shift: F,
    hi: F,
    lo: F,
    /// A power of two ≤ 1 every value is multiplied by first: 1 unless the
    /// values are so large that their sums would overflow.
    scale: F,
    /// `1 / scale`, exactly.
    unscale: F,
    /// `Σ|lo|` over every update since the pair was last taken afresh: each
    /// update of `lo` rounds by at most `ε/2·|lo|`, so the pair is within
    /// `ε·lo_churn` of the exact sum (see [`needs_rebuild`]). Kept apart
    /// from `magnitude` in memory, so that the compiler does not load the
    /// two as one vector right after storing this one.
    ///
    /// [`needs_rebuild`]: WindowStats::needs_rebuild
    lo_churn: F,
}

impl<F: Float> Default for ShiftedSum<F> {
    fn default() -> Self {
        Self {
            count: 0,
            shift: F::zero(),
            hi: F::zero(),
            lo: F::zero(),
            lo_churn: F::zero(),
            magnitude: F::zero(),
            scale: F::one(),
            unscale: F::one(),
        }
    }
}

/// Adds `y + e` (a value and its rounding error) to the sum `hi + lo`,
/// the error-free way, and counts `|lo|` into `churn`: the one step of
/// [`ShiftedSum::accumulate_pair`], on values a run can keep in registers.
#[inline]
fn compensated_add<F: Float>(hi: F, lo: F, churn: F, y: F, e: F) -> (F, F, F) {
    let (s, err) = two_sum(hi, y);
    let lo = lo + (err + e);
    (s, lo, churn + lo.abs())
}

impl<F: Float> ShiftedSum<F> {
    /// `x·scale − shift` as a rounded value and its rounding error.
    #[inline]
    fn shifted(&self, x: F) -> (F, F) {
        two_diff(x * self.scale, self.shift)
    }

    /// Adds `y` to `hi + lo` without losing the rounding error (TwoSum).
    #[inline]
    fn accumulate(&mut self, y: F) {
        let (s, err) = two_sum(self.hi, y);
        self.hi = s;
        self.lo = self.lo + err;
        self.lo_churn = self.lo_churn + self.lo.abs();
    }

    /// Folds `lo` into `hi` (TwoSum, exact) once the pair has been taken
    /// afresh exactly ([`ExactSum`]: within `ε/2·|lo|` of the exact sum),
    /// and counts the roundings of `lo` from there: once normalised its
    /// `lo` is below an ulp of `hi`. A pair that is not the exact sum
    /// rounded must not come here: its error would go uncounted, and
    /// show when the values that hid it leave. (Unnormalised, after huge values that cancel, `lo`
    /// could carry the whole sum and `hi` next to nothing, and the bound
    /// would call for the sum afresh on every push: 1.8 µs a push, against
    /// 5 ns, in a window of 1000 that held `1e300` and `−1e300`.)
    fn normalize(&mut self) {
        let (hi, lo) = two_sum(self.hi, self.lo);
        self.hi = hi;
        self.lo = lo;
        self.lo_churn = lo.abs();
    }

    /// Sets [`magnitude`](Self::magnitude) after the count or the shift
    /// changed.
    #[inline]
    fn remeasure(&mut self) {
        self.magnitude = count_to::<F>(self.count) * self.shift.abs();
    }

    /// Adds `y + e`, where `e` is far below `y` (the rounding error of a
    /// difference): `y` by TwoSum, and `e` with TwoSum's error in one
    /// addition to `lo`, so that `lo` waits on one addition per step.
    #[inline]
    fn accumulate_pair(&mut self, y: F, e: F) {
        (self.hi, self.lo, self.lo_churn) = compensated_add(self.hi, self.lo, self.lo_churn, y, e);
    }

    /// Replaces `old`, a value of the set, by `new`: the sum moves by
    /// exactly `(new − old)·scale`, whatever the shift. Returns that
    /// difference rounded.
    #[inline]
    fn moved(&mut self, old: F, new: F) -> F {
        debug_assert!(self.count > 0);
        let (d, e) = if self.scale == F::one() {
            two_diff(new, old)
        } else {
            two_diff(new * self.scale, old * self.scale)
        };
        self.accumulate_pair(d, e);
        d
    }

    /// Σ(x·scale − shift), rounded once.
    #[inline]
    fn total(&self) -> F {
        self.hi + self.lo
    }

    /// The (scaled) mean minus the shift; 0 when empty.
    #[inline]
    pub(crate) fn offset(&self) -> F {
        if self.count == 0 {
            F::zero()
        } else {
            self.total() / count_to(self.count)
        }
    }

    /// The mean of the set; 0 when empty.
    #[inline]
    pub(crate) fn mean(&self) -> F {
        (self.shift + self.offset()) * self.unscale
    }

    /// The sum of `values()` with `scale`, shifted by the newest value.
    fn of_values<I: Iterator<Item = F>>(
        values: &impl Fn() -> I,
        limit: impl Fn(usize) -> F,
    ) -> Self {
        let (mut count, mut max_abs, mut newest) = (0_usize, F::zero(), None);
        for x in values() {
            count += 1;
            max_abs = max_abs.max(x.abs());
            newest = Some(x);
        }
        let Some(newest) = newest else {
            return Self::default();
        };
        let scale = scale_for(max_abs, limit(count));
        let mut sum = Self {
            count,
            shift: newest * scale,
            scale,
            unscale: F::one() / scale,
            ..Self::default()
        };
        sum.remeasure();
        for x in values() {
            let (y, e) = sum.shifted(x);
            sum.accumulate_pair(y, e);
        }
        // The compensated pair is within `ε·lo_churn` of the exact sum: on
        // ordinary data that is some `n·ε` of the sum, and it is kept,
        // with that bound. Values that cancel hugely (±MAX beside 3e38)
        // leave roundings at very different sizes in its one `lo`, which
        // rounds off the small ones (the shift's share of ±MAX beside
        // 2e37): then the sum is taken exactly, so that the bound can
        // start again from `|lo|` without calling for the sum afresh at
        // the next push. Σ|y| + |e| stays below the largest float (the
        // scale), so no partial overflows.
        let room = (sum.magnitude + sum.hi.abs()) * F::from_f64(FRESH_CHURN);
        if sum.lo_churn <= room {
            let churn = sum.lo_churn;
            sum.normalize();
            sum.lo_churn = churn;
            return sum;
        }
        let mut exact = ExactSum::default();
        for x in values() {
            let (y, e) = sum.shifted(x);
            exact.add(y);
            if e != F::zero() {
                exact.add(e);
            }
        }
        (sum.hi, sum.lo) = exact.pair();
        sum.normalize();
        sum
    }
}

impl<F: Float> WindowStats<F> for ShiftedSum<F> {
    #[inline]
    fn add(&mut self, x: F) {
        if self.count == 0 {
            *self = Self {
                count: 1,
                shift: x,
                magnitude: x.abs(),
                ..Self::default()
            };
            return;
        }
        self.count += 1;
        self.remeasure();
        let (y, e) = self.shifted(x);
        self.accumulate_pair(y, e);
    }

    /// The plain sum Σx (shift 0), which TwoSum keeps exact: cheaper than
    /// a shifted sum, and [`rebase`](WindowStats::rebase) moves the shift
    /// into the data when the set takes over the window.
    #[inline]
    fn add_fresh(&mut self, x: F) {
        debug_assert!(self.shift == F::zero() && self.scale == F::one());
        // The shift is 0, and so is the magnitude.
        self.count += 1;
        self.accumulate(x);
    }

    /// The plain sum Σx in lanes, exact up to `ε²` terms on ordinary
    /// data, then moved onto the newest value exactly. The lanes' roundings
    /// of `lo` are counted into `lo_churn`, so the bound stays true: when
    /// values that cancel hugely made them large, the check calls for the
    /// exact sum ([`rebuild`](WindowStats::rebuild)) once they count, as it
    /// does when the plain sum overflows (unscaled).
    fn refresh(&mut self, older: &[F], newer: &[F]) {
        let ((h1, l1, b1), (h2, l2, b2)) = (compensated_sum(older), compensated_sum(newer));
        let (hi, e) = two_sum(h1, h2);
        let lanes = l1 + l2;
        let lo = lanes + e;
        *self = Self {
            count: older.len() + newer.len(),
            hi,
            lo,
            ..Self::default()
        };
        // The lanes' pair is within `ε/2` of this of the exact sum; the
        // fold below is exact.
        let churn = b1 + b2 + lanes.abs() + lo.abs();
        self.normalize();
        self.lo_churn = self.lo_churn + churn;
        if let Some(&newest) = newer.last().or(older.last()) {
            self.rebase(newest);
        }
    }

    /// The sum in lanes, or, when that overflows, scaled as
    /// [`rebuild`](WindowStats::rebuild) takes it.
    fn rebuild_finite(&mut self, older: &[F], newer: &[F]) {
        self.refresh(older, newer);
        if self.needs_rebuild() {
            self.rebuild(|| older.iter().chain(newer).copied());
        }
    }

    #[inline]
    fn remove(&mut self, x: F) {
        if self.count <= 1 {
            // Empty again: start from an exact zero.
            *self = Self::default();
            return;
        }
        self.count -= 1;
        self.remeasure();
        // The same `y + e` as when `x` was added: it leaves exactly.
        let (y, e) = self.shifted(x);
        self.accumulate_pair(-y, -e);
    }

    #[inline]
    fn replace(&mut self, old: F, new: F) {
        if self.count == 0 {
            return self.add(new);
        }
        self.moved(old, new);
    }

    /// Σ(x − K') = Σ(x − K) − n·(K' − K), with `K' − K` and its product by
    /// `n` formed exactly (TwoSum, then a fused multiply-add for the
    /// product's rounding error).
    fn rebase(&mut self, x: F) {
        if self.count == 0 {
            return;
        }
        let shift = x * self.scale;
        let (d, d_err) = two_diff(shift, self.shift);
        let n = count_to::<F>(self.count);
        let p = n * d;
        let p_err = n.mul_add(d, -p);
        self.accumulate_pair(-p, -(p_err + n * d_err));
        self.shift = shift;
        self.remeasure();
    }

    /// The pair is within `ε·lo_churn` of the exact sum; it is read
    /// within an ulp or so of `magnitude + |hi|` (the mean within an ulp of
    /// the window's values), so more than that calls for the sum afresh.
    /// That happens when values far larger than the rest have passed
    /// through (their sums' low words rounded off what the small values
    /// added) and left, or when the pair overflowed (NaN fails the test);
    /// on ordinary data `lo_churn` is some `ε` of the sum after millions
    /// of pushes.
    #[inline]
    fn needs_rebuild(&self) -> bool {
        // An overflow's NaN fails the comparison too.
        let bounded = self.lo_churn <= self.magnitude + self.hi.abs();
        !bounded
    }

    /// The sum afresh (after an overflow, or a huge value that has left),
    /// scaled so that it cannot overflow, with the newest value as the
    /// shift.
    fn rebuild<I: Iterator<Item = F>>(&mut self, values: impl Fn() -> I) {
        // Σ|x·scale − shift| ≤ 2n·max|x|·scale must stay below the largest
        // float.
        let four = F::from_f64(4.0);
        *self = Self::of_values(&values, |n| F::max_value() / four / count_to(n));
    }

    #[inline]
    fn sum(&self) -> &ShiftedSum<F> {
        self
    }

    #[cfg(feature = "serde")]
    fn to_state(&self) -> SumsState<F> {
        SumsState {
            shift: self.shift,
            hi: self.hi,
            lo: self.lo,
            lo_churn: self.lo_churn,
            scale: self.scale,
            m2: None,
        }
    }

    #[cfg(feature = "serde")]
    fn from_state<I: Iterator<Item = F>>(
        state: SumsState<F>,
        values: impl Fn() -> I,
    ) -> Result<Self, Error> {
        if state.m2.is_some() {
            return Err(Error::state("a moving average keeps no m2"));
        }
        Self::checked(&state, &values).map(|(sum, _)| sum)
    }
}

#[cfg(feature = "serde")]
impl<F: Float> ShiftedSum<F> {
    /// The sum `state` describes, checked: finite fields, a power-of-two
    /// scale, nothing held when the set is empty, no rebuild due, and the
    /// pair within its own rounding bound of the values' sum taken afresh
    /// about the same shift: the pair is within `ε·lo_churn` of what it
    /// held when last taken afresh (see [`needs_rebuild`]), which was
    /// within a few ulps of the values' sizes, and the fresh sum is within
    /// `ε` of its own churn. Returns the sum and that bound on the error of
    /// its total.
    ///
    /// [`needs_rebuild`]: WindowStats::needs_rebuild
    fn checked<I: Iterator<Item = F>>(
        state: &SumsState<F>,
        values: &impl Fn() -> I,
    ) -> Result<(Self, F), Error> {
        let SumsState {
            shift,
            hi,
            lo,
            lo_churn,
            scale,
            m2: _,
        } = *state;
        for (name, x) in [
            ("shift", shift),
            ("hi", hi),
            ("lo", lo),
            ("lo_churn", lo_churn),
        ] {
            if !x.is_finite() {
                return Err(Error::state(alloc::format!(
                    "engine.sums.{name} must be finite, got {x:?}"
                )));
            }
        }
        if lo_churn < F::zero() {
            return Err(Error::state(alloc::format!(
                "engine.sums.lo_churn must be non-negative, got {lo_churn:?}"
            )));
        }
        check_scale("engine.sums.scale", scale)?;
        let mut sum = Self {
            count: values().count(),
            shift,
            hi,
            lo,
            lo_churn,
            scale,
            unscale: F::one() / scale,
            magnitude: F::zero(),
        };
        sum.remeasure();
        if sum.count == 0 {
            let empty = Self::default();
            let untouched = (shift, hi, lo, lo_churn, scale)
                == (empty.shift, empty.hi, empty.lo, empty.lo_churn, empty.scale);
            return if untouched {
                Ok((empty, F::zero()))
            } else {
                Err(Error::state(
                    "the sums of a window without finite values must be 0",
                ))
            };
        }
        if sum.needs_rebuild() {
            return Err(Error::state(alloc::format!(
                "engine.sums.lo_churn {lo_churn:?} is beyond the bound a window keeps"
            )));
        }
        // The values' own sum about the same shift and in the same scale,
        // brought down by a power of two `k` when it overflows in this
        // order (the kept pair, which took the values in another order,
        // need not have).
        let afresh = |k: F| {
            let mut fresh = Self {
                hi: F::zero(),
                lo: F::zero(),
                lo_churn: F::zero(),
                shift: shift * k,
                scale: scale * k,
                ..sum.clone()
            };
            for x in values() {
                let (y, e) = fresh.shifted(x);
                fresh.accumulate_pair(y, e);
            }
            fresh
        };
        let max = values().fold(F::zero(), |m, x| m.max(x.abs())) * scale;
        let n = count_to::<F>(sum.count);
        let four = F::from_f64(4.0);
        let mut k = F::one();
        let mut fresh = afresh(k);
        if !fresh.total().is_finite() {
            k = scale_for(max, F::max_value() / four / n);
            fresh = afresh(k);
        }
        // The pair holds its sum to within `ε·lo_churn` of what it held
        // when last taken afresh, and that to within a few ulps of the
        // values' sizes: a sum taken afresh about a shift on a huge value
        // (the newest, at a rebuild) keeps the small values only to the
        // huge one's ulp, and keeps that error when the shift moves on.
        // So is the mean's accuracy stated: within an ulp or so of the
        // values in the window.
        let (kept, exact) = (sum.total() * k, fresh.total());
        let held = (lo_churn + n * max + sum.magnitude + hi.abs()) * k;
        let bound =
            four * F::epsilon() * (held + fresh.lo_churn + exact.abs()) + F::min_positive_value();
        // NaN fails too.
        if (kept - exact).abs() <= bound {
            Ok((sum, bound / k))
        } else {
            Err(Error::state(alloc::format!(
                "engine.sums (hi + lo = {kept:?}) does not match the values, whose sum is {exact:?}"
            )))
        }
    }
}

/// Checks that a serialized scale is a power of two in `(0, 1]`, as every
/// scale the windows choose is.
#[cfg(feature = "serde")]
fn check_scale<F: Float>(name: &str, scale: F) -> Result<(), Error> {
    let (mantissa, _, sign) = num_traits::Float::integer_decode(scale);
    if scale > F::zero() && scale <= F::one() && sign > 0 && mantissa.is_power_of_two() {
        Ok(())
    } else {
        Err(Error::state(alloc::format!(
            "{name} must be a power of two in (0, 1], got {scale:?}"
        )))
    }
}

/// A [`ShiftedSum`] and M2 = Σ(x − x̄)², each deviation in the sum's scale
/// times `dev_scale`, squared.
///
/// The sum keeps [`ShiftedSum`]'s own rule for its scale (rescaled only
/// when it overflows), so the mean is the plain sum's bit for bit;
/// deviations so large that their squares would overflow are brought down
/// by `dev_scale` instead.
#[derive(Clone, Debug)]
pub(crate) struct ShiftedMoments<F> {
    sum: ShiftedSum<F>,
    /// A power of two ≤ 1 every deviation is multiplied by before it is
    /// squared: 1 unless the values are so large (about 1e150 and up) that
    /// M2 would overflow.
    dev_scale: F,
    m2: F,
    /// The sum of the magnitudes of the updates M2 took since it was last
    /// computed afresh: its rounding error is a few ulps of this.
    churn: F,
    /// `1 / count` (0 when empty), so that a replacement, which keeps the
    /// count, divides nothing. Kept by every operation but
    /// [`add_fresh`](WindowStats::add_fresh), whose set gets it when it
    /// takes over.
    inv_count: F,
}

impl<F: Float> Default for ShiftedMoments<F> {
    fn default() -> Self {
        Self {
            sum: ShiftedSum::default(),
            dev_scale: F::one(),
            m2: F::zero(),
            churn: F::zero(),
            inv_count: F::zero(),
        }
    }
}

impl<F: Float> ShiftedMoments<F> {
    /// M2 / `divisor`, never negative (NaN passes through); +∞ when too
    /// large to represent.
    #[inline]
    pub(crate) fn variance(&self, divisor: F) -> F {
        // Both scales are powers of two: undoing them is exact.
        let unscale = self.sum.unscale / self.dev_scale;
        clamp_non_negative(self.m2) / divisor * unscale * unscale
    }

    /// The product of two deviations (in the sum's scale), each brought
    /// down by `dev_scale` first.
    #[inline]
    fn product(&self, a: F, b: F) -> F {
        (a * self.dev_scale) * (b * self.dev_scale)
    }

    /// Sets [`inv_count`](Self::inv_count) after the count changed.
    #[inline]
    fn count_changed(&mut self) {
        self.inv_count = if self.sum.count == 0 {
            F::zero()
        } else {
            F::one() / count_to(self.sum.count)
        };
    }

    /// M2 of one value or none: exactly 0, with no churn and no scale. A
    /// scale taken for huge deviations that have left must not stay: the
    /// next deviations would be brought down with it, and small ones
    /// would underflow to an M2 of 0 that no check could tell from a
    /// window of equal values (a window of 2 holding `5e-62` and 0, after
    /// `−5.8e304` had passed, read a variance of 0).
    #[inline]
    fn m2_is_zero(&mut self) {
        self.m2 = F::zero();
        self.churn = F::zero();
        self.dev_scale = F::one();
    }

    /// Adds `term` to M2 and its magnitude to the churn.
    #[inline]
    fn update(&mut self, term: F) {
        self.m2 = self.m2 + term;
        self.churn = self.churn + term.abs();
    }
}

impl<F: Float> WindowStats<F> for ShiftedMoments<F> {
    #[inline]
    fn add(&mut self, x: F) {
        let before = self.sum.offset();
        self.sum.add(x);
        self.count_changed();
        let y = x * self.sum.scale - self.sum.shift;
        let after = self.sum.total() * self.inv_count;
        self.update(self.product(y - before, y - after));
    }

    /// Only the sum: M2 of a set filled this way is computed afresh when
    /// the set takes over the window ([`took_over`](WindowStats::took_over)),
    /// once per `window` pushes, rather than updated on every push.
    #[inline]
    fn add_fresh(&mut self, x: F) {
        self.sum.add_fresh(x);
    }

    /// M2 by a two-pass, about a shift moved onto the newest value: on
    /// constant data every deviation is then exactly 0.
    fn took_over<I: DoubleEndedIterator<Item = F>>(&mut self, values: impl Fn() -> I) {
        if let Some(newest) = values().next_back() {
            self.sum.rebase(newest);
        }
        self.rebuild(values);
    }

    /// The sum as [`ShiftedSum`] takes it (scaled as its rebuild takes it
    /// when the plain sum overflows, as a window of the plain sum then
    /// does too), then M2.
    fn refresh(&mut self, older: &[F], newer: &[F]) {
        self.sum.rebuild_finite(older, newer);
        self.m2_finite(older, newer);
    }

    /// As [`rebuild`](WindowStats::rebuild), in lanes.
    fn rebuild_finite(&mut self, older: &[F], newer: &[F]) {
        if self.sum.needs_rebuild() {
            self.sum.rebuild_finite(older, newer);
        }
        self.m2_finite(older, newer);
    }

    #[inline]
    fn remove(&mut self, x: F) {
        if self.sum.count <= 2 {
            // One value or none is left, whose M2 is exactly 0.
            self.sum.remove(x);
            self.count_changed();
            self.m2_is_zero();
            return;
        }
        let before = self.sum.total() * self.inv_count;
        let y = x * self.sum.scale - self.sum.shift;
        self.sum.remove(x);
        self.count_changed();
        let after = self.sum.total() * self.inv_count;
        self.update(-self.product(y - before, y - after));
    }

    #[inline]
    fn replace(&mut self, old: F, new: F) {
        if self.sum.count <= 1 {
            self.sum.replace(old, new);
            self.count_changed();
            self.m2_is_zero();
            return;
        }
        // The count does not change: the kept reciprocal serves the mean
        // before and after (a division is the costliest step of a push).
        let inv = self.inv_count;
        let shift = self.sum.shift;
        let before = self.sum.total() * inv;
        if self.sum.scale == F::one() && self.dev_scale == F::one() {
            // Every value but a huge one: no scaling.
            let (d, e) = two_diff(new, old);
            self.sum.accumulate_pair(d, e);
            let after = self.sum.total() * inv;
            return self.update(d * (((new - shift) - after) + ((old - shift) - before)));
        }
        let y_old = old * self.sum.scale - shift;
        let y_new = new * self.sum.scale - shift;
        // The difference of the deviations is `new − old`, which the sum
        // forms rounded once.
        let d = self.sum.moved(old, new);
        let after = self.sum.total() * inv;
        self.update(self.product(d, (y_new - after) + (y_old - before)));
    }

    fn rebase(&mut self, x: F) {
        self.sum.rebase(x);
    }

    /// Also true when M2 is NaN, negative, or +∞ (an overflow).
    #[inline]
    fn needs_rebuild(&self) -> bool {
        let limit = self.m2 * F::from_f64(M2_CANCELLATION);
        !(self.churn <= limit && self.m2 < F::infinity()) || self.sum.needs_rebuild()
    }

    /// M2 afresh; the sum too only when it overflowed, by [`ShiftedSum`]'s
    /// own rule, so the mean stays the plain sum's bit for bit.
    fn rebuild<I: Iterator<Item = F>>(&mut self, values: impl Fn() -> I) {
        if self.sum.needs_rebuild() {
            self.sum.rebuild(&values);
        }
        self.m2_afresh(values);
    }

    /// The sum afresh too, as a window of the plain sum takes it at the
    /// same push (the sums are the same, so both find them drifted
    /// together).
    fn resum<I: Iterator<Item = F>>(&mut self, values: impl Fn() -> I) {
        self.sum.rebuild(&values);
        self.m2_afresh(values);
    }

    #[inline]
    fn sum(&self) -> &ShiftedSum<F> {
        &self.sum
    }

    #[cfg(feature = "serde")]
    fn to_state(&self) -> SumsState<F> {
        SumsState {
            m2: Some(M2State {
                value: self.m2,
                churn: self.churn,
                scale: self.dev_scale,
            }),
            ..self.sum.to_state()
        }
    }

    /// The sum as [`ShiftedSum`] checks it, then M2: non-negative (or
    /// NaN), a power-of-two scale, and, where it and M2 taken afresh are
    /// finite, within `√ε` of it (M2's own error after the updates of up
    /// to a refresh period is some thousands of ulps: this catches a state
    /// whose M2 is not the values', not its rounding).
    #[cfg(feature = "serde")]
    fn from_state<I: Iterator<Item = F>>(
        state: SumsState<F>,
        values: impl Fn() -> I,
    ) -> Result<Self, Error> {
        let Some(M2State {
            value,
            churn,
            scale,
        }) = state.m2
        else {
            return Err(Error::state("a moving variance's sums must hold m2"));
        };
        let (sum, sum_bound) = ShiftedSum::checked(&state, &values)?;
        // +∞ is a variance too large to represent, which a window keeps
        // until the values that make it leave; NaN, deviations whose
        // rounding errors overflowed (checked against the values below).
        for (name, x) in [
            ("engine.sums.m2.value", value),
            ("engine.sums.m2.churn", churn),
        ] {
            if x < F::zero() {
                return Err(Error::state(alloc::format!(
                    "{name} must be non-negative, got {x:?}"
                )));
            }
        }
        // A push that leaves M2 due for a rebuild (its churn above
        // `M2_CANCELLATION` times it, or M2 NaN or +∞) takes it afresh at
        // once, and M2 taken afresh is its own churn: so a NaN or +∞ M2,
        // which a rebuild may leave where deviations overflow, has that
        // same churn, and a finite one has a finite churn.
        let same = value == churn || (value.is_nan() && churn.is_nan());
        if !(same || (value.is_finite() && churn.is_finite())) {
            return Err(Error::state(alloc::format!(
                "engine.sums.m2.value {value:?} and engine.sums.m2.churn {churn:?}: a NaN or \
                 infinite m2 is one just taken afresh, whose churn is itself"
            )));
        }
        check_scale("engine.sums.m2.scale", scale)?;
        let mut moments = Self {
            sum,
            dev_scale: scale,
            m2: value,
            churn,
            inv_count: F::zero(),
        };
        moments.count_changed();
        // M2 as the window itself would take it afresh. Where that or the
        // kept M2 is not finite, the values are so large that their
        // deviations overflow (rounding errors of deviations from a shift
        // on a huge value included): the variance reads +∞ or NaN whatever
        // M2 holds, a NaN or +∞ M2 is taken afresh at the next push, and
        // M2 cannot be checked, only kept.
        let fresh = moments.m2_at(&values, scale);
        if !(value.is_finite() && fresh.is_finite()) {
            return Ok(moments);
        }
        // The deviations are measured from the kept mean, which may be off
        // by the sum's own bound: M2 about it may differ by n·(bound/n)²,
        // doubled for either side.
        let off = sum_bound * scale;
        let n = count_to::<F>(moments.sum.count.max(1));
        let slack = (off + off) * (off + off) / n;
        let bound = F::epsilon().sqrt() * (value + fresh + churn) + slack + F::min_positive_value();
        if value == fresh || (value - fresh).abs() <= bound {
            Ok(moments)
        } else {
            Err(Error::state(alloc::format!(
                "engine.sums.m2.value {value:?} does not match the values, whose m2 is {fresh:?}"
            )))
        }
    }
}

impl<F: Float> ShiftedMoments<F> {
    /// M2 by a two-pass in lanes over the values of `older` then `newer`,
    /// all finite, when nothing is scaled and it fits; by
    /// [`m2_afresh`](Self::m2_afresh) otherwise.
    fn m2_finite(&mut self, older: &[F], newer: &[F]) {
        self.count_changed();
        if self.sum.scale == F::one() {
            let (shift, offset) = (self.sum.shift, self.sum.offset());
            let m2 =
                squared_deviations(older, shift, offset) + squared_deviations(newer, shift, offset);
            if m2.is_finite() {
                self.dev_scale = F::one();
                self.m2 = m2;
                self.churn = m2;
                return;
            }
        }
        self.m2_afresh(|| older.iter().chain(newer).copied());
    }

    /// M2 by a two-pass about the sum's mean, with `dev_scale` 1 if that
    /// fits and otherwise the power of two that keeps it (and the churn of
    /// a window's worth of updates) well below the largest float.
    fn m2_afresh<I: Iterator<Item = F>>(&mut self, values: impl Fn() -> I) {
        self.count_changed();
        let mut k = F::one();
        let mut m2 = self.m2_at(&values, k);
        if !m2.is_finite() && !self.sum.offset().is_nan() {
            // n·(k·max|d|)² must stay well below the largest float.
            let max = self
                .deviations(&values)
                .fold(F::zero(), |m, d| m.max(d.abs()));
            let sixty_four = F::from_f64(64.0);
            let limit = (F::max_value() / sixty_four / count_to(self.sum.count)).sqrt();
            if max.is_finite() {
                k = scale_for(max, limit);
                m2 = self.m2_at(&values, k);
            }
        }
        self.dev_scale = k;
        self.m2 = m2;
        self.churn = m2;
    }

    /// The deviations of `values()` from the sum's mean, in its scale.
    fn deviations<'a, I: Iterator<Item = F> + 'a>(
        &'a self,
        values: &'a impl Fn() -> I,
    ) -> impl Iterator<Item = F> + 'a {
        let offset = self.sum.offset();
        values().map(move |x| {
            let (y, e) = self.sum.shifted(x);
            (y - offset) + e
        })
    }

    /// The sum of the squared deviations, each brought down by `k` first.
    fn m2_at<I: Iterator<Item = F>>(&self, values: &impl Fn() -> I, k: F) -> F {
        self.deviations(values).fold(F::zero(), |m2, d| {
            let d = d * k;
            m2 + d * d
        })
    }
}

/// How many NaN, +∞ and −∞ the window holds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct NonFinite {
    pub(crate) nan: usize,
    pos_inf: usize,
    neg_inf: usize,
}

impl NonFinite {
    /// How many non-finite values, of any kind.
    pub(crate) fn total(&self) -> usize {
        self.nan + self.pos_inf + self.neg_inf
    }

    pub(crate) fn slot<F: Float>(&mut self, x: F) -> &mut usize {
        if x.is_nan() {
            &mut self.nan
        } else if x > F::zero() {
            &mut self.pos_inf
        } else {
            &mut self.neg_inf
        }
    }

    /// Whether none of the values that count (NaN only when not skipped)
    /// is non-finite.
    pub(crate) fn is_empty(&self, skip_nan: bool) -> bool {
        (skip_nan || self.nan == 0) && self.pos_inf == 0 && self.neg_inf == 0
    }

    /// The mean of a window that holds these non-finite values, `None` when
    /// it holds none that count: NaN if there is a NaN (unless skipped) or
    /// both infinities, else the infinity.
    pub(crate) fn mean<F: Float>(&self, skip_nan: bool) -> Option<F> {
        if (self.nan > 0 && !skip_nan) || (self.pos_inf > 0 && self.neg_inf > 0) {
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
pub(crate) struct Window<F, S> {
    pub(super) ring: Ring<F>,
    non_finite: NonFinite,
    /// Statistics of the finite values in the window.
    pub(super) total: S,
    /// While the ring's head (the pushes into the full window since it
    /// last wrapped) is below this, a finite push takes the fast path:
    /// `window − 1` when the window is full of finite values and no re-base
    /// is pending, else 0. The push that wraps the head always takes the
    /// slow path, which moves the shift or refreshes the statistics.
    pub(super) fast_until: usize,
    /// Pushes into the full window since the statistics were last taken
    /// afresh, counted at each wrap.
    since_refresh: usize,
    /// The value that set the shift of `total` is about to leave or has
    /// left: move the shift onto the next finite value pushed.
    rebase_pending: bool,
    /// While a re-base is pending: the newest finite value of the ring,
    /// once searched for (only non-finite values come in until the re-base
    /// is done, so it stays the newest while the window holds any finite
    /// value). Cleared whenever a re-base becomes pending.
    newest_finite: Option<F>,
    /// NaN policy and readiness.
    policy: Policy,
    /// How many times the statistics were rebuilt (for the tests).
    #[cfg(test)]
    pub(super) rebuilds: usize,
    /// How many times the ring was searched for its newest finite value
    /// (for the tests).
    #[cfg(test)]
    pub(super) searches: usize,
}

#[cfg(feature = "serde")]
crate::checkpoint::path::restore_from!([F: Float, S: WindowStats<F>] Window<F, S>, SumsWindowState<F>);

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
            fast_until: 0,
            since_refresh: 0,
            rebase_pending: false,
            newest_finite: None,
            policy: Policy::default(),
            #[cfg(test)]
            rebuilds: 0,
            #[cfg(test)]
            searches: 0,
        })
    }

    pub(crate) fn set_nan_policy(&mut self, nan: NanPolicy) {
        self.policy.nan = nan;
    }

    /// # Errors
    ///
    /// When `min_periods` exceeds the window.
    pub(crate) fn set_min_periods(&mut self, min_periods: usize) -> Result<(), Error> {
        self.policy = self
            .policy
            .with_min_periods(min_periods, self.ring.window())?;
        Ok(())
    }

    /// The values the statistics are computed from: all of them, or the
    /// non-NaN ones under [`NanPolicy::Skip`].
    #[inline]
    pub(crate) fn counted(&self) -> usize {
        self.policy.counted(self.ring.len(), self.non_finite.nan)
    }

    /// Whether enough values count for the statistics to be defined.
    #[inline]
    pub(crate) fn is_ready(&self) -> bool {
        self.policy.ready(self.counted())
    }

    #[inline]
    pub(crate) fn push(&mut self, x: F) {
        // The common case first: a full window of finite values, a finite
        // value in, no re-base pending and no wrap due.
        if x.is_finite()
            && let Some(old) = self.ring.replace_below(self.fast_until, x)
        {
            self.total.replace(old, x);
            if self.total.needs_rebuild() {
                self.rebuild();
            }
            return;
        }
        self.push_slow(x);
    }

    /// [`push`](Self::push), then [`mean_or_nan`](Self::mean_or_nan): a
    /// push on the fast path leaves a full window of finite values, which
    /// is ready and whose mean is the sums', so it reads them without the
    /// checks (a moving average's push, which returns its mean).
    #[inline]
    pub(crate) fn push_mean(&mut self, x: F) -> F {
        if x.is_finite()
            && let Some(old) = self.ring.replace_below(self.fast_until, x)
        {
            self.total.replace(old, x);
            if self.total.needs_rebuild() {
                self.rebuild();
            }
            return self.total.mean();
        }
        self.push_slow(x);
        self.mean_or_nan()
    }

    /// Counts `wraps` wraps of the full window's head towards the next
    /// refresh, as that many windows' worth of pushes would: for a caller
    /// that skips pushes whose values leave before the ones it pushes next,
    /// on statistics that read the same bits whenever they are taken
    /// afresh (the exact sums of `MovingStats`).
    pub(crate) fn count_wraps(&mut self, wraps: usize) {
        if wraps == 0 {
            return;
        }
        let window = self.ring.window();
        let to_refresh = (REFRESH_PUSHES - self.since_refresh.min(REFRESH_PUSHES)).div_ceil(window);
        self.since_refresh = if wraps < to_refresh {
            self.since_refresh + wraps * window
        } else {
            ((wraps - to_refresh) % REFRESH_PUSHES.div_ceil(window)) * window
        };
    }

    /// Whether every value of the window is finite.
    #[inline]
    pub(crate) fn all_finite(&self) -> bool {
        self.non_finite.total() == 0
    }

    /// Whether the window holds a finite value: without one, a search of
    /// the ring for the newest finite value would read all of it for
    /// nothing (at every push of a window filled with infinities).
    #[inline]
    fn has_finite(&self) -> bool {
        self.non_finite.total() < self.ring.len()
    }

    /// The newest finite value of the window, while a re-base is pending
    /// and a non-finite value was just pushed: searched for once (O(window)
    /// at most), then remembered, so that a long run of non-finite values
    /// after it does not search back to it at every push.
    fn newest_finite_while_pending(&mut self) -> Option<F> {
        if !self.has_finite() {
            return None;
        }
        if self.newest_finite.is_none() {
            #[cfg(test)]
            {
                self.searches += 1;
            }
            self.newest_finite = self.ring.iter().rev().find(|v| v.is_finite());
        }
        self.newest_finite
    }

    /// Every other push: filling, non-finite values, the wrap, a re-base
    /// or a check due.
    fn push_slow(&mut self, x: F) {
        let finite = x.is_finite();
        match self.ring.push(x) {
            None => {
                if finite {
                    self.total.add(x);
                } else {
                    *self.non_finite.slot(x) += 1;
                }
                // The shift is the first value, which the next push drops.
                self.rebase_pending = self.ring.is_full();
                self.newest_finite = None;
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
                if self.ring.head() == 0 {
                    self.total.wrapped();
                    // The head wrapped: the value the shift moved onto at
                    // the last wrap, the newest then, has just left.
                    self.since_refresh = self.since_refresh.saturating_add(self.ring.window());
                    if self.since_refresh >= REFRESH_PUSHES {
                        self.since_refresh = 0;
                        self.refresh();
                    } else {
                        self.rebase_pending = true;
                        self.newest_finite = None;
                    }
                }
            }
        }
        if self.rebase_pending {
            if finite {
                // `x` stays until the next wrap.
                self.total.rebase(x);
                self.rebase_pending = false;
            } else if let Some(v) = self.newest_finite_while_pending() {
                // Meanwhile the newest finite value, which is in the
                // window now; the next finite value takes over until the
                // next wrap.
                self.total.rebase(v);
            }
        }
        // A shift that moved off a value far from the rest, or that value
        // leaving, shows here (see `ShiftedSum::needs_rebuild`).
        if self.total.needs_rebuild() {
            self.rebuild();
        }
        self.set_fast_until();
    }

    /// The push that wraps the head of a full window of finite values, with
    /// no re-base pending and no refresh due: [`push_slow`]'s steps for
    /// that case, in its order (the replacement, the shift moved onto the
    /// value just pushed, the check), without its other branches. Returns
    /// whether it applied; nothing changes when it did not.
    ///
    /// [`push_slow`]: Self::push_slow
    #[inline]
    pub(super) fn wrap_push(&mut self, x: F) -> bool {
        let window = self.ring.window();
        let since = self.since_refresh.saturating_add(window);
        let applies = x.is_finite()
            && self.ring.is_full()
            && self.ring.head() + 1 == window
            && !self.rebase_pending
            && self.non_finite.is_empty(false)
            && since < REFRESH_PUSHES;
        if !applies {
            return false;
        }
        let Some(old) = self.ring.push(x) else {
            return false;
        };
        self.total.replace(old, x);
        self.since_refresh = since;
        self.total.wrapped();
        // The value the shift moved onto at the last wrap has left: the
        // shift moves onto `x`, which stays until the next.
        self.total.rebase(x);
        if self.total.needs_rebuild() {
            self.rebuild();
        }
        true
    }

    /// Opens the fast path when the window is full of finite values and no
    /// re-base is pending, and closes it otherwise.
    fn set_fast_until(&mut self) {
        let fast = self.ring.is_full() && !self.rebase_pending && self.non_finite.is_empty(false);
        self.fast_until = if fast { self.ring.window() - 1 } else { 0 };
    }

    /// The head has wrapped and at least [`REFRESH_PUSHES`] values have
    /// been pushed since the last refresh: the window holds exactly the
    /// values pushed since the last wrap, and the statistics are taken
    /// afresh from them, with the shift on the newest (finite) value.
    /// O(window), at most once per [`REFRESH_PUSHES`] pushes unless the
    /// window is longer.
    #[cold]
    #[inline(never)]
    fn refresh(&mut self) {
        let (older, newer) = self.ring.as_slices();
        let newest_is_finite = newer.last().or(older.last()).is_some_and(|x| x.is_finite());
        if self.non_finite.is_empty(false) {
            self.total.refresh(older, newer);
        } else {
            let ring = &self.ring;
            self.total.resum(|| ring.iter().filter(|x| x.is_finite()));
        }
        // A shift on an older finite value may leave before the next
        // wrap: the next finite value pushed takes it over.
        self.rebase_pending = !newest_is_finite;
        self.newest_finite = None;
    }

    /// Recomputes the statistics of the window from its values.
    #[cold]
    #[inline(never)]
    pub(super) fn rebuild(&mut self) {
        #[cfg(test)]
        {
            self.rebuilds += 1;
        }
        if self.non_finite.is_empty(false) {
            let (older, newer) = self.ring.as_slices();
            self.total.rebuild_finite(older, newer);
        } else {
            let ring = &self.ring;
            self.total.rebuild(|| ring.iter().filter(|x| x.is_finite()));
        }
    }

    pub(crate) fn reset(&mut self) {
        self.ring.clear();
        self.non_finite = NonFinite::default();
        self.total = S::default();
        self.fast_until = 0;
        self.since_refresh = 0;
        self.rebase_pending = false;
        self.newest_finite = None;
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

    /// The mean, NaN when not ready (as pandas shows a missing value).
    #[inline]
    pub(crate) fn mean_or_nan(&self) -> F {
        if self.is_ready() {
            self.non_finite
                .mean(self.policy.skips_nan())
                .unwrap_or_else(|| self.total.mean())
        } else {
            F::nan()
        }
    }

    /// The mean, `None` until ready.
    #[inline]
    pub(crate) fn mean(&self) -> Option<F> {
        self.is_ready().then(|| self.mean_or_nan())
    }

    /// Whether a NaN counts in the window (it holds one and the policy
    /// propagates it).
    #[inline]
    pub(crate) fn nan_counts(&self) -> bool {
        !self.policy.skips_nan() && self.non_finite.nan > 0
    }

    /// The statistics of the finite values, or `None` when the window holds
    /// an infinity or a NaN that counts.
    #[inline]
    pub(crate) fn finite_stats(&self) -> Option<&S> {
        self.non_finite
            .is_empty(self.policy.skips_nan())
            .then_some(&self.total)
    }
}

impl<F: Float, S> PartialEq for Window<F, S> {
    /// Same window length and policy, and the same values in the same order.
    fn eq(&self, other: &Self) -> bool {
        self.ring.window() == other.ring.window()
            && self.policy == other.policy
            && self.ring.len() == other.ring.len()
            && self.ring.iter().eq(other.ring.iter())
    }
}

#[cfg(feature = "serde")]
impl<F: Float, S: WindowStats<F>> TryFrom<SumsWindowState<F>> for Window<F, S> {
    type Error = Error;

    /// The window as it was saved: its ring with the head where it was,
    /// its sums as they were (checked against the values), and where it
    /// stood between refreshes. State saved without its engine (before the
    /// sums were carried) is pushed again from its values.
    fn try_from(state: SumsWindowState<F>) -> Result<Self, Error> {
        let (state, engine) = state.into();
        let mut w = Self::new(state.window)?;
        w.policy = state.checked_policy()?;
        let Some(engine) = engine else {
            for x in state.values {
                w.push(x);
            }
            return Ok(w);
        };
        let len = state.values.len();
        let ring = Ring::from_values(state.window, state.values, engine.head).ok_or_else(|| {
            Error::state(alloc::format!(
                "head {:?} does not fit a window of {:?} holding {len:?} values",
                engine.head,
                state.window
            ))
        })?;
        for x in ring.iter().filter(|x| !x.is_finite()) {
            *w.non_finite.slot(x) += 1;
        }
        w.total = S::from_state(engine.sums, || ring.iter().filter(|x| x.is_finite()))?;
        w.ring = ring;
        w.since_refresh = engine.since_refresh;
        w.rebase_pending = engine.rebase_pending;
        w.set_fast_until();
        Ok(w)
    }
}

#[cfg(feature = "serde")]
impl<F: Float, S: WindowStats<F>> serde::Serialize for Window<F, S> {
    fn serialize<Z: serde::Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
        let engine = EngineState {
            head: self.ring.head(),
            since_refresh: self.since_refresh,
            rebase_pending: self.rebase_pending,
            sums: self.total.to_state(),
        };
        super::state::serialize(
            serializer,
            &self.ring,
            &super::state::Extra::Engine(&engine),
            self.policy,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    /// Exact reference: the set of values as a plain vector.
    use crate::test_support::two_pass as naive;

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
        assert_eq!(s.count, 0);
        assert_eq!(s.mean(), 0.0);
        // The next value becomes the new shift.
        s.add(-3.0);
        assert_eq!(s.mean(), -3.0);
    }

    /// The set through a plain [`Window`]'s steps: the replacement, then
    /// the check and a rebuild from `values` when it calls for one.
    fn replace_checked(s: &mut ShiftedSum<f64>, old: f64, new: f64, values: &[f64]) {
        s.replace(old, new);
        if s.needs_rebuild() {
            s.rebuild(|| values.iter().copied());
        }
    }

    #[test]
    fn a_sum_taken_afresh_keeps_what_cancelling_values_hide() {
        // 3.3e38 − MAX + 7.98 + MAX + 1: taken afresh, 7.98 must survive
        // the huge values beside it, in the lanes of a refresh (where it
        // is rounded off, and the rounding counted) and in a rebuild
        // (scaled, and exact).
        let values = [3.3e38, -f64::MAX, 7.98, f64::MAX, 1.0];
        let mut fresh = [ShiftedSum::<f64>::default(), ShiftedSum::default()];
        fresh[0].refresh(&values, &[]);
        fresh[1].rebuild(|| values.iter().copied());
        assert!(fresh[1].scale < 1.0);
        for mut s in fresh {
            // Σ(x·scale − shift), shift = scale (on the newest value, 1),
            // is exactly scale·(3.3e38 + 3.98) (7.98 − 4, exact): `hi` the
            // first, and `lo` the second within `ε·lo_churn`.
            let remainder = s.scale * (7.98 - 4.0);
            assert_eq!(s.hi, s.scale * 3.3e38);
            assert!(
                (s.lo - remainder).abs() <= f64::EPSILON * s.lo_churn,
                "{s:?}"
            );
            // The huge values leave, one by one, the way a window replaces
            // them, rebuilding when its check calls for it.
            let mut now = values.to_vec();
            for (j, new) in [(0, 2.0), (1, 3.0), (3, 4.0)] {
                let old = core::mem::replace(&mut now[j], new);
                replace_checked(&mut s, old, new, &now);
            }
            let want = (7.98 + 1.0 + 2.0 + 3.0 + 4.0) / 5.0;
            assert!(
                (s.mean() - want).abs() <= 2.0 * f64::EPSILON * 7.98,
                "{}",
                s.mean()
            );
        }
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
            let got = m.variance(1.0);
            assert!((got - m2).abs() < 1e-12, "{got} vs {m2}");
        }
        m.remove(6.0);
        m.remove(1.0);
        assert_eq!(m.sum.count, 1);
        assert_eq!(m.variance(1.0), 0.0);
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
    fn the_shift_moves_at_every_wrap_and_the_sums_refresh_after_enough_pushes() {
        let mut w = Window::<f64, ShiftedSum<f64>>::new(4).unwrap();
        for x in 0..4_i32 {
            w.push(f64::from(x));
            assert_eq!(w.ring.head(), 0);
        }
        // Filling moved the shift onto the newest value at once.
        assert_eq!(w.total.shift, 3.0);
        assert_eq!(w.fast_until, 3);
        for x in 4..12_i32 {
            w.push(f64::from(x));
            let head = usize::try_from(x - 3).unwrap() % 4;
            assert_eq!(w.ring.head(), head);
            // Every push but the one that wraps may take the fast path.
            assert_eq!(w.fast_until, 3);
            if head == 0 {
                // Wrapped: the shift is the newest value.
                assert_eq!(w.total.shift, f64::from(x));
                assert_eq!(w.since_refresh, usize::try_from(x - 3).unwrap());
            }
        }
        assert_eq!(w.mean(), Some(9.5));
        // At the wrap that completes REFRESH_PUSHES pushes into the full
        // window (8 so far), the sums are taken afresh and the count starts
        // again.
        for i in 0..REFRESH_PUSHES - 8 {
            w.push(f64::from(u16::try_from(i % 1000).unwrap()));
            if w.ring.head() == 0 && i + 1 < REFRESH_PUSHES - 8 {
                assert!(w.since_refresh > 0);
            }
        }
        assert_eq!(w.ring.head(), 0);
        assert_eq!(w.since_refresh, 0);
        // The last four: 65524..=65527 mod 1000.
        assert_eq!(w.mean(), Some(525.5));
    }

    #[test]
    fn a_refresh_takes_the_sum_afresh_from_the_values() {
        // A sum that went through many replacements of huge values holds
        // the window's values exactly after the refresh, shifted by the
        // newest one.
        let mut w = Window::<f64, ShiftedMoments<f64>>::new(8).unwrap();
        for i in 0..8 + REFRESH_PUSHES {
            w.push(if i % 3 == 0 {
                1e15
            } else {
                f64::from(u8::try_from(i % 64).unwrap()) * 0.25
            });
        }
        // The push that completed REFRESH_PUSHES into the full window
        // wrapped the head and refreshed.
        assert_eq!((w.ring.head(), w.since_refresh), (0, 0));
        let values: Vec<f64> = w.iter().collect();
        let mut fresh = ShiftedMoments::<f64>::default();
        for &x in &values {
            fresh.add(x);
        }
        assert_eq!(w.total.sum.shift, values[7]);
        assert_eq!(w.total.sum.mean(), fresh.sum.mean());
        // The last eight pushes: 0, 0.25, 1e15, 0.75, 1, 1e15, 1.5, 1.75.
        // Exact fractions: the mean is 8000000000000021/32, M2 is
        // 191999999999999664000000000000447/128.
        assert_eq!(values[..4], [0.0, 0.25, 1e15, 0.75]);
        assert_eq!(w.total.sum.mean(), 8_000_000_000_000_021.0 / 32.0);
        let exact_m2 = 1.499_999_999_999_997_4e30;
        assert!((w.total.m2 - exact_m2).abs() <= 8.0 * f64::EPSILON * exact_m2);
    }

    #[test]
    fn counting_wraps_is_wrapping_that_many_times() {
        // The refresh count after `wraps` wraps, as the push loop moves it:
        // a window's worth at each wrap, back to 0 when it reaches
        // `REFRESH_PUSHES`.
        for window in [1, 3, 7, 64, 100, 1000, REFRESH_PUSHES + 5] {
            // Every count the push loop can leave: below `REFRESH_PUSHES`.
            for since in [
                0,
                1,
                window % REFRESH_PUSHES,
                REFRESH_PUSHES / 2,
                REFRESH_PUSHES - 1,
            ] {
                for wraps in [0, 1, 2, 5, 63, 64, 65, 1000, 70_000] {
                    let mut w = Window::<f64, ShiftedMoments<f64>>::new(window).unwrap();
                    w.since_refresh = since;
                    w.count_wraps(wraps);
                    let mut want = since;
                    for _ in 0..wraps {
                        want += window;
                        if want >= REFRESH_PUSHES {
                            want = 0;
                        }
                    }
                    assert_eq!(
                        w.since_refresh, want,
                        "window {window}, from {since}, {wraps} wraps"
                    );
                }
            }
        }
    }

    #[test]
    fn a_run_of_nan_after_a_finite_value_searches_the_ring_once() {
        // A full window of finite values, then `window − 1` more: the next
        // push wraps the head and makes a re-base pending, and it is a NaN,
        // as are the `2·window` after it. While the newest finite value
        // stays (until `window − 1` pushes later), every NaN push needs it:
        // a search back through the NaN run at every push (O(window²) in
        // all) without the remembered value, one with it.
        let window = 1000;
        let new = || {
            let mut w = Window::<f64, ShiftedMoments<f64>>::new(window).unwrap();
            for i in 0..2 * window - 1 {
                w.push(1e9 + i as f64);
            }
            w
        };
        let (mut w, mut reference) = (new(), new());
        for _ in 0..2 * window {
            w.push(f64::NAN);
            // The reference forgets what it found: the search every time.
            reference.newest_finite = None;
            reference.push(f64::NAN);
        }
        assert!(w.searches <= 2, "{} searches", w.searches);
        assert!(reference.searches >= window - 2, "{}", reference.searches);
        // The same bits: the statistics follow the values, not the memo.
        assert_eq!(
            alloc::format!("{:?}", w.total),
            alloc::format!("{:?}", reference.total)
        );
        for x in [1.0, 2.0, 3.0] {
            w.push(x);
            reference.push(x);
            assert_eq!(
                alloc::format!("{:?}", w.total),
                alloc::format!("{:?}", reference.total)
            );
        }
    }

    #[test]
    fn a_refresh_over_non_finite_values_recovers_exactly_once_they_leave() {
        // At the refresh the ring holds a NaN, and the newest value, which
        // the shift would move onto, is +∞: the sums are taken from the
        // finite values, and the next finite value takes the shift.
        let n = 8 + REFRESH_PUSHES;
        let value = |i: usize| match n.checked_sub(i) {
            Some(3) => f64::NAN,
            Some(1) => f64::INFINITY,
            _ => f64::from(u8::try_from(i % 16).unwrap()) * 0.25,
        };
        let mut w = Window::<f64, ShiftedMoments<f64>>::new(8).unwrap();
        for i in 0..n {
            w.push(value(i));
        }
        assert_eq!((w.ring.head(), w.since_refresh), (0, 0));
        assert!(w.rebase_pending);
        assert!(w.finite_stats().is_none());
        for i in n..n + 8 {
            w.push(value(i));
        }
        // Eight small multiples of 1/4: the two-pass formula is exact.
        let values: Vec<f64> = w.iter().collect();
        assert!(values.iter().all(|x| x.is_finite()));
        let (mean, m2) = naive(&values);
        let stats = w.finite_stats().unwrap();
        assert_eq!(stats.sum.mean(), mean);
        assert_eq!(stats.m2, m2);
        assert_eq!(w.fast_until, 7);
    }

    #[test]
    fn huge_values_that_cancel_cost_one_rebuild_not_one_a_push() {
        // While 1e300 and −1e300 are in the window, the small values' sum
        // can sit in the low word of a pair whose high word has cancelled:
        // the bound on its roundings calls for the sum afresh, and the
        // fresh pair, normalised, must satisfy it, or every push would
        // take it afresh again. A NaN in the window sends the rebuilds
        // through the one-value-at-a-time sum, where the small values
        // pile up in the low word while the high word holds 1e300.
        let mut w = Window::<f64, ShiftedMoments<f64>>::new(1000).unwrap();
        w.push(f64::NAN);
        for i in 0..990_u32 {
            w.push(1.0 + f64::from(i % 7) * 0.125);
        }
        w.push(1e300);
        w.push(-1e300);
        let before = w.rebuilds;
        for i in 0..8_u32 {
            w.push(1.0 + f64::from(i % 5) * 0.25);
        }
        assert!(w.rebuilds - before <= 1, "{} rebuilds", w.rebuilds - before);
        let sum = &w.total.sum;
        assert!(!sum.needs_rebuild());
        assert!(
            sum.lo.abs() <= f64::EPSILON * sum.hi.abs(),
            "{} {}",
            sum.hi,
            sum.lo
        );
    }

    #[test]
    fn the_shift_moves_when_its_value_leaves() {
        let mut w = Window::<f64, ShiftedSum<f64>>::new(3).unwrap();
        for x in [1e12, 0.25, 0.5] {
            w.push(x);
        }
        // The first value set the shift; filling the window schedules the
        // move, which happens on the newest value at once.
        assert_eq!(w.total.shift, 0.5);
        assert_eq!(w.mean(), Some((1e12 + 0.75) / 3.0));
        w.push(0.125);
        // 1e12 has left: the mean is within an ulp, not off by an ulp of
        // 1e12.
        let exact = 0.875 / 3.0;
        assert!((w.mean().unwrap() - exact).abs() <= f64::EPSILON * exact);
    }

    #[test]
    fn a_rebase_keeps_the_sum_exact() {
        let mut s = ShiftedSum::<f64>::default();
        for x in [1e12, 0.1, 0.2, 0.3] {
            s.add(x);
        }
        s.rebase(0.2);
        s.remove(1e12);
        // 0.1 + 0.2 + 0.3 exactly, divided by 3, up to the two roundings
        // of the mean.
        let exact = 0.6 / 3.0;
        assert!((s.mean() - exact).abs() <= 2.0 * f64::EPSILON * exact);
        assert_eq!(s.shift, 0.2);
    }

    #[test]
    fn a_cancelled_m2_is_rebuilt_from_the_values() {
        let mut w = Window::<f64, ShiftedMoments<f64>>::new(4).unwrap();
        for x in [1e12, 1.0, 2.0, 3.0, 4.0] {
            w.push(x);
        }
        // The window is [1, 2, 3, 4]: M2 = 5 exactly, not a few ulps of
        // the 1e24 it was.
        let stats = w.finite_stats().unwrap();
        assert_eq!(stats.variance(1.0), 5.0);
        assert_eq!(w.mean(), Some(2.5));
    }

    #[test]
    fn sums_that_would_overflow_are_scaled() {
        let mut w = Window::<f64, ShiftedMoments<f64>>::new(3).unwrap();
        w.push(f64::MAX);
        w.push(-f64::MAX);
        assert_eq!(w.mean(), Some(0.0));
        let stats = w.finite_stats().unwrap();
        assert!(stats.sum.scale < 1.0);
        assert_eq!(stats.variance(2.0), f64::INFINITY);
        w.push(f64::MAX);
        let third = f64::MAX / 3.0;
        assert!((w.mean().unwrap() - third).abs() <= f64::EPSILON * third);
        for x in [1.0, 2.0, 3.0] {
            w.push(x);
        }
        // The huge values have left: unscaled and exact again.
        assert_eq!(w.mean(), Some(2.0));
        assert_eq!(w.finite_stats().unwrap().variance(2.0), 1.0);
    }
}
