//! Raw moments — count, shift, mean offset and M2 — and their Chan merge:
//! the floor every statistic and every kernel stands on.
//!
//! The slice kernels return these (and the co-moments, higher moments and
//! weighted moments beside them: [`comoments`], [`higher_moments`],
//! [`weighted_moments`]); the families build their types on them. They
//! use nothing of the crate but the float bound and the error type.
//!
//!
//! Every variance in the crate (push by push, slice kernels, merges,
//! parallel and per-channel reductions) is kept in this form. The shift `K`
//! is a value taken from the data (the first one pushed); the state holds
//! `mean − K` rather than the mean itself, so on data like `1e9 + U(0, 1)`
//! the quantities that are updated are of the size of the spread, not of the
//! offset, and lose no digits to it. A merge re-bases the other side onto
//! this side's shift; the difference of two shifts taken from the data is
//! exact when they are close (Sterbenz), which is the case that matters.

use crate::float::{clamp_non_negative, two_sum};
use crate::{Element, Float};

pub(crate) mod comoments;
pub(crate) mod higher_moments;
pub(crate) mod weighted_moments;

/// Pushes between two tests of [`Moments::push`]'s shift (see
/// `Moments::step`): a power of two, so the test is a mask of the count.
const STALE_EVERY: u64 = 8;

/// Count, shift, mean offset and sum of squared deviations of a set of
/// values. `mean = shift + offset`; `m2 = Σ (x − mean)²`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(bound = "F: Float")
)]
pub(crate) struct Moments<F> {
    pub(crate) count: u64,
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub(crate) shift: F,
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub(crate) offset: F,
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float"))]
    pub(crate) m2: F,
}

impl<F: Float> Default for Moments<F> {
    /// No values.
    fn default() -> Self {
        Self {
            count: 0,
            shift: F::zero(),
            offset: F::zero(),
            m2: F::zero(),
        }
    }
}

impl<F: Float> Moments<F> {
    /// The moments of one value. A non-finite value has no finite
    /// deviation, so its M2 is NaN.
    #[inline]
    fn single(x: F) -> Self {
        let m2 = if x.is_finite() { F::zero() } else { F::nan() };
        Self {
            count: 1,
            shift: x,
            offset: F::zero(),
            m2,
        }
    }

    /// The moments of a run of values, one Welford step each: the robust
    /// path the slice kernels fall back to when their sums are not finite.
    pub(crate) fn of_values<S: Element>(xs: impl IntoIterator<Item = S>) -> Moments<F> {
        let mut m = Self::default();
        for x in xs {
            m.push(F::from_f64(x.widen()));
        }
        m
    }

    /// One Welford step on the shifted value.
    ///
    /// Two cases leave the ordinary step, which keeps the hot path to one
    /// predictable branch:
    ///
    /// - a non-finite value (or state that already holds one) makes the
    ///   mean its limit — ±∞, or NaN for NaN or ∞ − ∞ — and M2 NaN;
    /// - finite values whose difference overflows (`f64::MAX` and
    ///   `-f64::MAX`) take the same step on halved operands and re-base
    ///   the shift on the mean, so a mean that is representable stays
    ///   finite and an M2 too large to represent becomes +∞, never NaN.
    ///
    /// The ordinary step is small enough to inline into the caller's loop,
    /// so the state stays in registers between pushes; every other case is
    /// a call out of line.
    #[inline]
    pub(crate) fn push(&mut self, x: F) {
        // 1 ≤ count < 2⁶³ − 1, in one comparison: the count then goes up
        // by one without saturating, and converts as a signed integer (one
        // instruction on x86-64; five for an unsigned one). A count near
        // u64::MAX, which only restored or merged state can have, takes the
        // out-of-line path.
        if self.count.wrapping_sub(1) < (i64::MAX as u64) - 1 {
            let count = self.count + 1;
            #[allow(
                clippy::cast_possible_wrap,
                clippy::cast_precision_loss,
                reason = "count < 2⁶³, checked above; a float holds it to rounding, as from_count does"
            )]
            let n = F::from_f64(count as i64 as f64);
            if self.step(x, count, n) {
                return;
            }
        }
        *self = self.pushed_rare(x);
    }

    /// The ordinary Welford step to `count` values (`n` as a float), or
    /// `false` when the deviation is not finite (the state is then as it
    /// was, up to an exact re-base).
    ///
    /// The shift is tested every [`STALE_EVERY`] pushes (when the new
    /// count is a multiple of it), before the step rather than after: the
    /// test then reads the state the previous push left, in parallel with
    /// the step instead of after it. (After the step, the same test made
    /// `Variance::push` take a fifth longer; on every push rather than
    /// every eighth, it held `Variance::push` to 1.64 times the naive
    /// loop's rate, against 2.09.)
    ///
    /// Between two tests, at most seven deviations are taken from a shift
    /// that has gone stale. Each is rounded at the scale of the offset
    /// rather than of the spread, which puts an error of about
    /// `2⁻⁵³ · |offset| · |x − mean|` into M2; and the data that moved the
    /// mean `|offset|` away from the shift put at least about `offset²`
    /// into M2 (the shift is a value of the data or an earlier mean), so
    /// the seven cost a few units of 2⁻⁵³ of M2 at most. The mean's
    /// rounding grows by at most seven roundings at the offset's scale.
    /// The tests of an outlier first, outliers at every block start and
    /// level changes hold to the same bars as with a test every push.
    #[inline]
    fn step(&mut self, x: F, count: u64, n: F) -> bool {
        // The reciprocal depends only on the count, so it is computed off
        // the update's dependency chain (offset → d → offset), which is
        // then a subtraction, a multiplication and an addition instead of
        // waiting on a division.
        let inv = F::one() / n;
        if count.is_multiple_of(STALE_EVERY) && self.shift_is_stale(inv) {
            self.rebase();
        }
        let y = x - self.shift;
        let d = y - self.offset;
        if !d.is_finite() {
            return false;
        }
        self.count = count;
        self.offset = self.offset + d * inv;
        self.m2 = self.m2 + d * (y - self.offset);
        true
    }

    /// The pushes [`push`](Moments::push) does not inline: the first value,
    /// a count near `u64::MAX`, and a deviation that is not finite. It
    /// takes and returns the state by value: a reference passed out of line
    /// would pin the caller's state to memory on the hot path too.
    #[cold]
    #[inline(never)]
    fn pushed_rare(mut self, x: F) -> Self {
        if self.count == 0 {
            return Self::single(x);
        }
        // Saturates rather than wrap: a restored or merged count can be
        // near u64::MAX.
        let count = self.count.saturating_add(1);
        let n = F::from_count(count);
        if self.step(x, count, n) {
            return self;
        }
        self.count = count;
        if x.is_finite() && self.shift.is_finite() {
            let two = F::one() + F::one();
            let y = x / two - self.shift / two;
            let half_offset = self.offset / two;
            let d = y - half_offset;
            let half_offset = half_offset + d / n;
            self.m2 = self.m2 + d * (y - half_offset) * (two * two);
            self.rebase_on_mean(half_offset);
        } else {
            self.absorb_limit(x);
        }
        self
    }

    /// Whether the shift has drifted so far from the mean that keeping it
    /// would cost digits (`inv` is the reciprocal of the count).
    ///
    /// Two things are lost when the shift is far from the data:
    ///
    /// - the deviations `x − shift` are rounded at the scale of the offset
    ///   rather than of the spread, which multiplies the variance's
    ///   relative error by `|offset|/σ`: so `|offset|` must stay within
    ///   `4σ`;
    /// - every push rounds the offset at the offset's own scale, and those
    ///   errors add up over the pushes: the mean is as accurate as a naive
    ///   sum only while `|offset|` stays well below the scale of the mean's
    ///   own rounding, `max(|mean|, σ/√n)`: within 1/32 of it.
    ///
    /// The test fires when the first value is not typical (an outlier, or
    /// data that change level) and then a few dozen times as the mean
    /// settles (every time it moves by 1/32); on data like `1e9 + U(0, 1)`
    /// it never fires. It reuses the step's reciprocal of the count: five
    /// multiplications, where the same test multiplied through by powers of
    /// `n` took eight (`Variance::push` ran at 1.62 times the naive loop's
    /// rate with those, 1.77 with these), and a branch that is almost
    /// always predicted.
    #[inline]
    fn shift_is_stale(&self, inv: F) -> bool {
        shift_is_stale(self.shift, self.offset, self.m2, inv)
    }

    /// Moves the shift onto the mean without changing the statistics: the
    /// new shift is the mean rounded, the new offset what rounding left
    /// (exact, by TwoSum), M2 untouched.
    #[cold]
    fn rebase(&mut self) {
        rebase(&mut self.shift, &mut self.offset);
    }

    /// Moves the shift onto the mean, given half the new offset: after an
    /// overflowing step `mean − shift` may itself not be representable,
    /// while the mean is. The shift is only a reference point, so any
    /// value will do, and the mean keeps later steps away from overflow.
    #[cold]
    fn rebase_on_mean(&mut self, half_offset: F) {
        let two = F::one() + F::one();
        self.shift = (self.shift / two + half_offset) * two;
        self.offset = F::zero();
    }

    /// Takes in a non-finite mean (or a finite one into a non-finite
    /// state): the mean becomes the limit of the two, M2 undefined.
    #[cold]
    fn absorb_limit(&mut self, other_mean: F) {
        let mean = self.shift + self.offset;
        let limit = if mean.is_finite() {
            other_mean
        } else if other_mean.is_finite() {
            mean
        } else {
            mean + other_mean
        };
        self.shift = limit;
        self.offset = F::zero();
        self.m2 = F::nan();
    }

    /// Chan, Golub & LeVeque's pairwise update, with the same two
    /// exceptional cases as [`push`](Self::push).
    ///
    /// The result keeps the shift of the side with more values (this side
    /// on a tie): a single outlier merged with a large set must not become
    /// the shift of the whole, and the shift is then re-based as after a
    /// push.
    #[inline]
    pub(crate) fn merge(&mut self, other: &Self) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *other;
            return;
        }
        if other.count > self.count {
            let mut merged = *other;
            merged.merge_onto_self(self);
            *self = merged;
        } else {
            self.merge_onto_self(other);
        }
    }

    /// [`merge`](Self::merge) on this side's shift; both sides non-empty.
    #[inline]
    fn merge_onto_self(&mut self, other: &Self) {
        let na = F::from_count(self.count);
        let nb = F::from_count(other.count);
        // A count that would overflow saturates, and M2 is scaled so that
        // the state stands for u64::MAX values of the merged mean and
        // variance (n is then formed in floating point).
        let (count, n, m2_scale) = match self.count.checked_add(other.count) {
            Some(count) => (count, F::from_count(count), F::one()),
            None => (u64::MAX, na + nb, F::from_count(u64::MAX) / (na + nb)),
        };
        self.count = count;
        let weight = nb / n;
        // mean_b − mean_a, with the large parts cancelled first.
        let delta = (other.shift - self.shift) + (other.offset - self.offset);
        if delta.is_finite() {
            self.offset = self.offset + delta * weight;
            self.m2 = (self.m2 + other.m2 + delta * delta * na * weight) * m2_scale;
            if self.shift_is_stale(F::one() / n) {
                self.rebase();
            }
        } else if self.shift.is_finite() && other.shift.is_finite() {
            let two = F::one() + F::one();
            let half =
                (other.shift / two - self.shift / two) + (other.offset / two - self.offset / two);
            self.m2 = (self.m2 + other.m2 + half * half * na * weight * (two * two)) * m2_scale;
            self.rebase_on_mean(self.offset / two + half * weight);
        } else {
            self.absorb_limit(other.shift + other.offset);
        }
    }

    #[inline]
    pub(crate) fn mean(&self) -> Option<F> {
        (self.count > 0).then(|| self.shift + self.offset)
    }

    /// M2, never negative (NaN passes through).
    #[inline]
    pub(crate) fn m2(&self) -> F {
        clamp_non_negative(self.m2)
    }

    /// `m2 / (count − ddof)`, `None` unless `count > ddof`.
    #[inline]
    pub(crate) fn variance(&self, ddof: u64) -> Option<F> {
        (self.count > ddof).then(|| self.m2() / F::from_count(self.count - ddof))
    }

    /// Converts to another float type, keeping as much of the mean as the
    /// target can hold: the part of the shift that rounding drops is moved
    /// into the offset.
    pub(crate) fn cast<G: Float>(&self) -> Moments<G> {
        let shift = G::from_f64(self.shift.as_f64());
        // An infinite shift (a limit, or beyond f32's range) loses nothing
        // that the offset could carry, and ∞ − ∞ would be NaN.
        let lost = if shift.is_finite() {
            self.shift.as_f64() - shift.as_f64()
        } else {
            0.0
        };
        Moments {
            count: self.count,
            shift,
            offset: G::from_f64(lost + self.offset.as_f64()),
            m2: G::from_f64(self.m2.as_f64()),
        }
    }

    /// Checks the invariants of restored state: those of
    /// [`validate_received`](Self::validate_received), and where a NaN or
    /// ±∞ may stand beside M2 ([`check_limits`]).
    pub(crate) fn validate(&self) -> Result<(), crate::Error> {
        self.validate_received()?;
        if self.count == 0 {
            return Ok(());
        }
        check_limits(self.shift, self.offset, Some(self.m2))
    }

    /// Checks the invariants that moments received from elsewhere keep
    /// too: `BatchStats::from_mean_m2` takes any mean beside any M2 (a
    /// framework's mean may have overflowed where its M2 did not), so a
    /// `BatchStats` channel is checked by this alone, with the shift and
    /// the offset as [`check_limits`] checks them without M2.
    pub(crate) fn validate_received(&self) -> Result<(), crate::Error> {
        if self.count == 0
            && (self.shift != F::zero() || self.offset != F::zero() || self.m2 != F::zero())
        {
            return Err(crate::Error::state("count is 0 but the moments are not"));
        }
        if self.m2 < F::zero() {
            return Err(crate::Error::state(alloc::format!(
                "m2 must be non-negative, got {:?}",
                self.m2
            )));
        }
        if self.count == 1 && self.m2 != F::zero() && !self.m2.is_nan() {
            return Err(crate::Error::state("m2 must be 0 when count is 1"));
        }
        if self.count == 0 {
            return Ok(());
        }
        check_limits(self.shift, self.offset, None)
    }
}

/// Whether `F` is narrower than `f64` (`f32`): its slice kernels sum in
/// `f64` and round the moments to `F` once (`cast`), so the moments of
/// `f64` data beyond `F`'s range hold a shift of ±∞ beside any offset and
/// M2.
pub(crate) fn is_narrow<F: Float>() -> bool {
    F::max_value().as_f64() < f64::MAX
}

/// Checks the mean `shift + offset` of a non-empty state, and its M2 when
/// given, against what pushes and merges can leave there (the weighted
/// moments keep theirs the same way):
///
/// - the offset is never NaN, and a NaN mean is kept in the shift alone,
///   with an offset of 0 (`absorb_limit`, `single`, the halved step's
///   re-base); in `f64` so is an infinite one;
/// - M2 is NaN only beside such a mean: a NaN or ±∞ pushed or merged in,
///   or ∞ − ∞ in a step's deviation;
/// - a NaN mean has an M2 of NaN, or of +∞ where a merge re-based onto a
///   mean that an overflowing offset made NaN (a finite shift's offset
///   overflows where merges move the mean further than `f64::MAX` from
///   it, beside an M2 of +∞); never a finite M2, which would read a
///   finite variance of values whose mean is NaN;
/// - in `f64`, an infinite shift has a NaN M2. In `f32`, moments of `f64`
///   data beyond its range keep a shift of ±∞ beside any offset and M2
///   (`is_narrow`).
///
/// The error names the field and the rule.
pub(crate) fn check_limits<F: Float>(
    shift: F,
    offset: F,
    m2: Option<F>,
) -> Result<(), crate::Error> {
    use alloc::format;
    let state = crate::Error::state;
    let narrow = is_narrow::<F>();
    if offset.is_nan() {
        return Err(state(format!(
            "offset is NaN beside the shift {shift:?}: no push or merge leaves one \
             (a NaN mean is kept in the shift, with an offset of 0)"
        )));
    }
    let limit_in_shift = if narrow {
        shift.is_nan()
    } else {
        !shift.is_finite()
    };
    if limit_in_shift && offset != F::zero() {
        return Err(state(format!(
            "the shift is {shift:?} but the offset is {offset:?}: a NaN or infinite mean \
             is kept in the shift alone, with an offset of 0"
        )));
    }
    let Some(m2) = m2 else {
        return Ok(());
    };
    if m2.is_nan() && (shift.is_finite() || offset != F::zero()) {
        return Err(state(format!(
            "m2 is NaN but the mean is not NaN or infinite (shift {shift:?}, offset \
             {offset:?}): only a NaN or infinite value makes m2 NaN, and it leaves the mean \
             NaN or infinite, in the shift with an offset of 0"
        )));
    }
    if shift.is_nan() && m2.is_finite() {
        return Err(state(format!(
            "the shift is NaN but m2 is {m2:?}: a NaN mean makes m2 NaN (or +inf)"
        )));
    }
    if !narrow && shift.is_infinite() && !m2.is_nan() {
        return Err(state(format!(
            "the shift is {shift:?} but m2 is {m2:?}: an infinite mean makes m2 NaN"
        )));
    }
    Ok(())
}

/// [`Moments`]' test for a shift gone stale, on the raw fields: `inv` is
/// the reciprocal of the count (or, for weighted moments, of the total
/// weight) and `m2` the sum of squared deviations (weighted). See
/// `Moments::shift_is_stale`.
#[inline]
pub(crate) fn shift_is_stale<F: Float>(shift: F, offset: F, m2: F, inv: F) -> bool {
    let offset2 = offset * offset;
    let variance = m2 * inv;
    // offset² > 16σ²; `|`, not `||`: a second branch costs more than the
    // other test's few operations.
    (offset2 > variance * F::from_count(16))
        | offset_is_large(shift, offset, offset2, variance * inv)
}

/// The second half of [`shift_is_stale`]: `offset² > max(mean², σ²/n)/32²`,
/// the test a mean without a spread (`σ²/n = 0`) re-bases on, given
/// `offset²` and `σ²/n`.
#[inline]
pub(crate) fn offset_is_large<F: Float>(
    shift: F,
    offset: F,
    offset2: F,
    variance_of_mean: F,
) -> bool {
    let mean = shift + offset;
    let mean2 = mean * mean;
    // A plain comparison rather than `max`, whose NaN handling costs four
    // instructions on the push path; a NaN spread (which only a non-finite
    // mean has, and those never get here) picks `mean²`, as `max` would.
    let bound = if variance_of_mean > mean2 {
        variance_of_mean
    } else {
        mean2
    };
    offset2 * F::from_count(32 * 32) > bound
}

/// Moves a shift onto the mean `shift + offset` it stands for, exactly
/// (TwoSum): the new offset is what rounding the mean left. A mean that
/// rounds to ±∞ keeps the old pair.
#[cold]
pub(crate) fn rebase<F: Float>(shift: &mut F, offset: &mut F) {
    let (s, o) = two_sum(*shift, *offset);
    if s.is_finite() {
        *shift = s;
        *offset = o;
    }
}

/// The incremental mean update `μ + (x − μ)·w`, with `w = 1/n` for one
/// value or `n_b/n` for a batch, which stays finite where the mean is
/// finite even when `x − μ` overflows (e.g. `μ = f64::MAX`,
/// `x = −f64::MAX`). The weight is a multiplier rather than a divisor so
/// that a caller can form it off the update's dependency chain.
#[inline]
pub(crate) fn mean_step<F: Float>(mean: F, x: F, w: F) -> F {
    let d = x - mean;
    if d.is_finite() || !x.is_finite() || !mean.is_finite() {
        mean + d * w
    } else {
        mean + (x * w - mean * w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_support::two_pass as naive;
    use crate::test_support::{SplitMix, compensated_sum, rel};
    use alloc::vec::Vec;

    /// The mean and M2 of `xs` by compensated two-pass sums.
    fn reference(xs: &[f64]) -> (f64, f64) {
        let mean = compensated_sum(xs.iter().copied()) / xs.len() as f64;
        (
            mean,
            compensated_sum(xs.iter().map(|x| (x - mean) * (x - mean))),
        )
    }

    #[test]
    fn a_shift_tested_every_eighth_push_keeps_the_policy_wherever_it_goes_stale() {
        // Data at 1e6 + U(0, 1) (mean 1e6 times the spread), with the shift
        // made stale at every position of the eight-push cycle: a level
        // change of 1e3, or an outlier of 1e9 arriving first and again
        // later, each at offsets 0 to 15 into the stream.
        let mut rng = SplitMix(21);
        let base: Vec<f64> = (0..2000).map(|_| 1e6 + rng.unit()).collect();
        for at in 0..16 {
            let mut level = base.clone();
            level[at..].iter_mut().for_each(|x| *x += 1e3);
            let mut outlier = base.clone();
            outlier[0] = 1e9;
            outlier[at + 100] = -1e9;
            for xs in [&level, &outlier] {
                let mut m = Moments::<f64>::default();
                xs.iter().for_each(|&x| m.push(x));
                let (mean, m2) = reference(xs);
                let (e_mean, e_m2) = (rel(m.mean().unwrap(), mean), rel(m.m2(), m2));
                assert!(
                    e_mean <= 1e-15 && e_m2 <= 1e-12,
                    "at {at}: {e_mean:e} {e_m2:e}"
                );
            }
        }
    }

    #[test]
    fn push_matches_the_two_pass_formula() {
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        let mut m = Moments::<f64>::default();
        xs.iter().for_each(|&x| m.push(x));
        let (mean, m2) = naive(&xs);
        assert_eq!(m.mean(), Some(mean));
        assert_eq!(m.m2(), m2);
        assert_eq!(m.variance(0), Some(4.0));
        assert_eq!(m.variance(8), None);
    }

    #[test]
    fn merge_matches_push_and_has_an_identity() {
        let mut a = Moments::<f64>::default();
        let mut b = Moments::<f64>::default();
        let mut all = Moments::<f64>::default();
        for (i, x) in [1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 11.0, 12.0]
            .into_iter()
            .enumerate()
        {
            if i < 5 {
                a.push(x)
            } else {
                b.push(x)
            }
            all.push(x);
        }
        a.merge(&Moments::default());
        let mut e = Moments::default();
        e.merge(&a);
        assert_eq!(e, a);
        a.merge(&b);
        assert_eq!(a.count, 8);
        assert_eq!(a.mean(), Some(6.0));
        assert_eq!(a.variance(0), Some(16.5));
        assert_eq!(all.variance(0), Some(16.5));
    }

    #[test]
    fn cast_keeps_the_mean_of_an_f64_shift() {
        let mut m = Moments::<f64>::default();
        m.push(1.0 + 1e-9);
        m.push(1.0 + 3e-9);
        let c: Moments<f32> = m.cast();
        assert!((c.mean().unwrap() as f64 - (1.0 + 2e-9)).abs() < 1e-7);
    }

    #[test]
    fn cast_keeps_infinite_means() {
        let mut m = Moments::<f64>::default();
        m.push(1.0);
        m.push(f64::NEG_INFINITY);
        assert_eq!(m.cast::<f64>().mean(), Some(f64::NEG_INFINITY));
        let mut big = Moments::<f64>::default();
        big.push(1e300);
        assert_eq!(big.cast::<f32>().mean(), Some(f32::INFINITY));
    }

    #[test]
    fn push_at_counts_near_the_ends_of_the_signed_and_unsigned_ranges() {
        // The inline step takes counts below 2⁶³ − 1, the out-of-line one
        // the rest; both must add one value (saturating at u64::MAX).
        let top = i64::MAX as u64;
        for count in [1, 2, top - 2, top - 1, top, top + 1, u64::MAX - 1, u64::MAX] {
            let mut m = Moments::<f64> {
                count,
                shift: 0.0,
                offset: 0.0,
                m2: 0.0,
            };
            m.push(1.0);
            let n = count.saturating_add(1) as f64;
            assert_eq!(m.count, count.saturating_add(1), "{count}");
            // mean = 1/n; M2 = 1·(1 − 1/n).
            let mean = m.mean().unwrap();
            assert!((mean - 1.0 / n).abs() <= 1e-15 / n, "{count}: {mean}");
            assert!((m.m2 - (1.0 - 1.0 / n)).abs() <= 1e-15, "{count}: {}", m.m2);
        }
    }

    #[test]
    fn mean_step_survives_opposite_extremes() {
        let m = mean_step(f64::MAX, -f64::MAX, 0.5);
        assert_eq!(m, 0.0);
        assert_eq!(mean_step(f64::MAX, f64::MAX, 0.5), f64::MAX);
        assert!(mean_step(1.0, f64::NAN, 0.5).is_nan());
        assert_eq!(mean_step(1.0, f64::INFINITY, 0.5), f64::INFINITY);
    }
}
