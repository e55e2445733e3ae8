//! An exponential mean kept as a shift and an offset from it, the shift
//! re-based exactly when the mean leaves it behind.

use crate::Float;
use crate::float::two_sum;

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

    /// Blends `x` in with weights `(α, β)` and returns `(diff, α·diff)`,
    /// where `diff = x − mean` before the update: the terms of Finch's
    /// variance update.
    ///
    /// Then re-bases when the shift lies further from the mean than the
    /// mean from 0 plus this update's step: `x − shift` would cost more
    /// digits than the plain recursion loses on `x − mean`. The move is
    /// exact (mean = shift + offset before and after), and on data that
    /// keeps its level it never fires.
    #[inline]
    pub(crate) fn blend(&mut self, x: F, alpha: F, beta: F) -> (F, F) {
        let y = x - self.shift;
        let diff = y - self.offset;
        let incr = alpha * diff;
        // `Momentum::blend(offset, y, n)`, with its weights at hand.
        self.offset = alpha * y + beta * self.offset;
        let mean = self.shift + self.offset;
        if self.offset.abs() > mean.abs() + incr.abs() {
            (self.shift, self.offset) = two_sum(self.shift, self.offset);
        }
        (diff, incr)
    }
}
