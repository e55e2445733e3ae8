//! The add/remove engine of `MovingAverage` and `MovingVariance` over a
//! slice, with the push loop's bits.
//!
//! A push into a full window of finite values whose ring head has not
//! reached its wrap is a replacement of the oldest value: the engine's
//! fast path. Over a slice those pushes come in runs (up to `window − 1`
//! of them between two wraps), and within a run the value that leaves is
//! the ring's next one and the value that enters the slice's next one. A
//! run goes through [`WindowStats::replace_run`]: the replacement, the
//! check for a rebuild and the statistic, in one loop over the two slices,
//! and the ring takes the run's values in one copy afterwards. Every other
//! push — filling, a non-finite value, the wrap (which moves the shift or
//! refreshes the sums), and the rebuild a check calls for — is the push
//! itself. So the state after a series, and every statistic along it, is
//! the push loop's bit for bit.

use super::super::window::{ShiftedMoments, ShiftedSum, Window, WindowStats};
use crate::Float;

/// A statistic read from the engine's sums of a full window of finite
/// values (the state a run leaves after each replacement).
pub(crate) trait Read<F, S> {
    /// The statistic of the window whose sums are `s`.
    fn read(&self, s: &S) -> F;
    /// The same from a run's running values: the pair's total `hi + lo`
    /// and M2 (0 for a plain sum), the rest of `s` as it is (constant
    /// through a run), so that a run keeps them in registers.
    fn read_run(&self, s: &S, total: F, m2: F) -> F;
}

/// The mean.
pub(crate) struct MeanOf;

impl<F: Float> Read<F, ShiftedSum<F>> for MeanOf {
    #[inline]
    fn read(&self, s: &ShiftedSum<F>) -> F {
        s.mean()
    }
    #[inline]
    fn read_run(&self, s: &ShiftedSum<F>, total: F, _: F) -> F {
        s.mean_of(total)
    }
}

impl<F: Float> Read<F, ShiftedMoments<F>> for MeanOf {
    #[inline]
    fn read(&self, s: &ShiftedMoments<F>) -> F {
        s.sum().mean()
    }
    #[inline]
    fn read_run(&self, s: &ShiftedMoments<F>, total: F, _: F) -> F {
        s.sum().mean_of(total)
    }
}

/// M2 divided by `divisor` (the count, or the count − 1), or its square
/// root.
pub(crate) struct VarianceOf<F> {
    pub(crate) divisor: F,
    pub(crate) sqrt: bool,
}

impl<F: Float> Read<F, ShiftedMoments<F>> for VarianceOf<F> {
    #[inline]
    fn read(&self, s: &ShiftedMoments<F>) -> F {
        self.read_run(s, F::zero(), s.m2())
    }
    #[inline]
    fn read_run(&self, s: &ShiftedMoments<F>, _: F, m2: F) -> F {
        let v = s.variance_of(m2, self.divisor);
        if self.sqrt { v.sqrt() } else { v }
    }
}

/// Nothing to read (a series that is all NaN, e.g. a sample variance of a
/// window of one).
pub(crate) struct NothingOf;

impl<F: Float, S> Read<F, S> for NothingOf {
    #[inline]
    fn read(&self, _: &S) -> F {
        F::nan()
    }
    #[inline]
    fn read_run(&self, _: &S, _: F, _: F) -> F {
        F::nan()
    }
}

impl<F: Float, S: WindowStats<F>> Window<F, S> {
    /// Pushes every value of `xs` in order and puts the statistic after
    /// each push into `out`: `read` where the push was a replacement of a
    /// run, `slow` (the statistic's own reader, which handles readiness and
    /// non-finite values) elsewhere. The two agree wherever both apply.
    pub(crate) fn series<R: Read<F, S>>(
        &mut self,
        xs: &[F],
        read: &R,
        slow: impl Fn(&Self) -> F,
        mut out: Option<&mut [F]>,
    ) {
        let mut i = 0;
        while let Some(&x) = xs.get(i) {
            let olds = self.ring.run_below(self.fast_until);
            if !olds.is_empty() {
                let news = xs.get(i..).unwrap_or(&[]);
                let run = out.as_deref_mut().and_then(|o| o.get_mut(i..));
                let (k, due) = self.total.replace_run(olds, news, read, run);
                self.ring.overwrite_run(news.get(..k).unwrap_or(&[]));
                i += k;
                if due {
                    self.rebuild();
                    put(&mut out, i - 1, || slow(self));
                }
                if k > 0 {
                    continue;
                }
            }
            if !self.wrap_push(x) {
                self.push(x);
            }
            put(&mut out, i, || slow(self));
            i += 1;
        }
    }
}

/// Writes `value()` at `i` of `out`, if there is an `out`.
#[inline]
fn put<F>(out: &mut Option<&mut [F]>, i: usize, value: impl FnOnce() -> F) {
    if let Some(slot) = out.as_deref_mut().and_then(|o| o.get_mut(i)) {
        *slot = value();
    }
}
