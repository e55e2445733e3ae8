//! An exponential mean kept as a shift and an offset from it, the shift
//! re-based exactly when the mean leaves it behind.

use crate::Float;
use crate::moments::rebase;

/// Values between two tests of the shift against the spread (see
/// [`Shifted::is_far`]): a power of two, so the test is a mask of the
/// count, as in the cumulative family.
pub(crate) const SPREAD_EVERY: u64 = 8;

/// mean = `shift` + `offset`, with `shift` a value near the mean (the first
/// finite value, moved onto the mean when the mean leaves it behind).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Shifted<F> {
    pub(crate) shift: F,
    pub(crate) offset: F,
}

impl<F: Float> Shifted<F> {
    /// The mean of the single value `x`. An infinite shift would turn every
    /// later deviation into NaN, so a non-finite `x` goes into the offset.
    #[inline]
    pub(crate) fn seed(x: F) -> Self {
        if x.is_finite() {
            Self {
                shift: x,
                offset: F::zero(),
            }
        } else {
            Self {
                shift: F::zero(),
                offset: x,
            }
        }
    }

    #[inline]
    pub(crate) fn mean(&self) -> F {
        self.shift + self.offset
    }

    /// Whether the shift lies further than 4σ from the mean, with
    /// `variance` the weighted variance σ²: tested every [`SPREAD_EVERY`]
    /// values before the step, on the state the previous step left, and
    /// then [`rebased`](Self::rebased).
    ///
    /// Each deviation `x − shift` is rounded at the scale of the offset
    /// rather than of the spread, which multiplies the variance's relative
    /// error by `|offset|/σ` (as in the cumulative family's
    /// `shift_is_stale`). [`blend`](Self::blend)'s own test does not see
    /// that on data far from 0: a leading outlier (or a leading 0 from a
    /// sensor warming up) before data at 10⁶ ± 1 would leave the shift
    /// `|offset|` ≈ 4·10⁵ away for good, and the variance with pandas'
    /// accuracy (10⁻¹⁰) instead of the shift's (10⁻¹⁴). Data around a level
    /// re-base a few times while the outlier's weight decays, then seldom
    /// or never (data around a level without an outlier keep their bits,
    /// bar a rare re-base when α is large); data that drift re-base each
    /// time the mean has moved 4σ.
    ///
    /// Between two tests a stale shift costs at most seven deviations
    /// rounded at the offset's scale, whose errors the decay of their
    /// weights then shrinks like every other error. On every push, or
    /// after the step on the new variance, the test cost `EwVariance::push`
    /// up to twice its time; `EwCovariance` tests both coordinates under
    /// one branch, which keeps its state in registers.
    #[inline]
    pub(crate) fn is_far(&self, variance: F) -> bool {
        self.offset * self.offset > variance * F::from_count(16)
    }

    /// Blends `x` in with weights `(α, β)` and returns `(diff, α·diff)`,
    /// where `diff = x − mean` before the update: the terms of Finch's
    /// variance update.
    ///
    /// Then re-bases when the shift lies further from the mean than the
    /// mean from 0 plus this update's step: `x − shift` would cost more
    /// digits than the plain recursion loses on `x − mean`, and each push
    /// rounds the offset at its own scale. On data that keeps its level
    /// away from 0 it never fires; [`is_far`](Self::is_far) covers the
    /// rest.
    #[inline]
    pub(crate) fn blend(&mut self, x: F, alpha: F, beta: F) -> (F, F) {
        let y = x - self.shift;
        let diff = y - self.offset;
        let incr = alpha * diff;
        // `Momentum::blend(offset, y, n)`, with its weights at hand.
        self.offset = alpha * y + beta * self.offset;
        let mean = self.shift + self.offset;
        if self.offset.abs() > mean.abs() + incr.abs() {
            *self = self.rebased();
        }
        (diff, incr)
    }

    /// The shift moved onto the mean, exactly (TwoSum: the new offset is
    /// what rounding the mean left; a mean that rounds to ±∞ keeps the
    /// pair). Out of line and by value: the branch to it is almost never
    /// taken, and a reference passed out of line would pin the caller's
    /// state to memory on the hot path.
    #[cold]
    #[inline(never)]
    pub(crate) fn rebased(mut self) -> Self {
        rebase(&mut self.shift, &mut self.offset);
        self
    }
}

/// Checks a restored shift (`axis` follows the field's name: `""`, or
/// `"_x"` and `"_y"` for the coordinates of a covariance): a finite value
/// pushed, or 0 (a NaN or ±∞ seeds the offset, [`Shifted::seed`]), moved
/// only onto a finite mean ([`Shifted::rebased`]). The offset and the
/// variance may hold NaN or ±∞ in many combinations: a deviation
/// `x − mean` overflows between finite values, and a time step of 0 gives
/// the new value a weight of 0, which turns an infinite deviation into a
/// NaN variance beside a finite mean.
#[cfg(feature = "serde")]
pub(crate) fn check_shift<F: Float>(axis: &str, shift: F) -> Result<(), crate::Error> {
    if shift.is_finite() {
        Ok(())
    } else {
        Err(crate::Error::state(alloc::format!(
            "shift{axis} must be finite (a value pushed, or 0: a NaN or infinite value goes \
             into the offset), got {shift:?}"
        )))
    }
}
