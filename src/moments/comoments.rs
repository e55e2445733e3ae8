//! Raw co-moments of pairs: the raw moments of each coordinate and the
//! co-moment `C = Σ (x − x̄)(y − ȳ)`, with their Welford step and Chan merge.
//!
//! Each coordinate is a [`Moments`] — its own shift taken from the data
//! (the first pair), the mean's offset from it, M2 — so it is pushed,
//! merged and re-based exactly as a variance is. The co-moment is kept
//! around the means, so re-basing a shift never touches it; its update
//! reads the deviations the coordinates' steps form from their shifts,
//! which are of the size of the spread, so data like `1e9 + U(0, 1)` loses
//! no digits to the offset.

use super::Moments;
use crate::{Element, Float};

/// The moments of `x`, of `y`, and their co-moment. Both coordinates always
/// hold the same count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CoMoments<F> {
    pub(crate) x: Moments<F>,
    pub(crate) y: Moments<F>,
    /// `Σ (x − x̄)(y − ȳ)`.
    pub(crate) c: F,
}

impl<F: Float> Default for CoMoments<F> {
    /// No pairs.
    fn default() -> Self {
        Self {
            x: Moments::default(),
            y: Moments::default(),
            c: F::zero(),
        }
    }
}

impl<F: Float> CoMoments<F> {
    /// The co-moments of a run of pairs, one Welford step each: the robust
    /// path the slice kernels fall back to when their sums are not finite.
    pub(crate) fn of_pairs<S: Element>(xs: &[S], ys: &[S]) -> CoMoments<F> {
        let mut m = Self::default();
        for (x, y) in xs.iter().zip(ys) {
            m.push(F::from_f64(x.widen()), F::from_f64(y.widen()));
        }
        m
    }

    #[inline]
    pub(crate) fn count(&self) -> u64 {
        self.x.count
    }

    /// One Welford step: `C += (x − x̄ₙ₋₁)(y − ȳₙ)`, with both deviations
    /// taken from the coordinates' shifts.
    ///
    /// Finite pairs whose deviations overflow (`f64::MAX` after
    /// `-f64::MAX`) take the step on halved operands, so a co-moment too
    /// large to represent is ±∞; a non-finite value makes it NaN.
    #[inline]
    pub(crate) fn push(&mut self, x: F, y: F) {
        if self.x.count == 0 {
            self.x.push(x);
            self.y.push(y);
            self.c = if x.is_finite() && y.is_finite() {
                F::zero()
            } else {
                F::nan()
            };
            return;
        }
        let dx = (x - self.x.shift) - self.x.offset;
        let mean_x = self.x.shift + self.x.offset;
        self.x.push(x);
        self.y.push(y);
        let dy = (y - self.y.shift) - self.y.offset;
        let t = dx * dy;
        if t.is_finite() {
            self.c = self.c + t;
        } else {
            self.c = self.c + self.halved_step(x, y, mean_x);
        }
    }

    /// `(x − x̄ₙ₋₁)(y − ȳₙ)` for a step whose product overflowed, or NaN
    /// when a value is not finite.
    #[cold]
    fn halved_step(&self, x: F, y: F, mean_x: F) -> F {
        if !(x.is_finite() && y.is_finite()) {
            return F::nan();
        }
        let two = F::one() + F::one();
        let mean_y = self.y.shift + self.y.offset;
        let hx = x / two - mean_x / two;
        let hy = y / two - mean_y / two;
        hx * hy * (two * two)
    }

    /// Chan, Golub & LeVeque's update of the co-moment,
    /// `C = Cₐ + C_b + δx·δy·nₐn_b/n`, then each coordinate's own merge
    /// (which keeps the shift of the side with more values). The co-moment
    /// is symmetric in the sides, so it needs no side.
    #[inline]
    pub(crate) fn merge(&mut self, other: &Self) {
        if other.count() == 0 {
            return;
        }
        if self.count() == 0 {
            *self = *other;
            return;
        }
        let na = F::from_count(self.count());
        let nb = F::from_count(other.count());
        // As `Moments::merge`: a count that would overflow saturates, and
        // the co-moment is scaled as M2 is.
        let (n, scale) = match self.count().checked_add(other.count()) {
            Some(count) => (F::from_count(count), F::one()),
            None => (na + nb, F::from_count(u64::MAX) / (na + nb)),
        };
        let weight = na * (nb / n);
        let dx = (other.x.shift - self.x.shift) + (other.x.offset - self.x.offset);
        let dy = (other.y.shift - self.y.shift) + (other.y.offset - self.y.offset);
        let mut t = dx * dy * weight;
        if !t.is_finite() {
            t = halved_delta_product(&self.x, &other.x, &self.y, &other.y) * weight;
        }
        self.c = (self.c + other.c + t) * scale;
        self.x.merge(&other.x);
        self.y.merge(&other.y);
    }

    /// `C / (n − ddof)`, `None` unless `count > ddof`.
    #[inline]
    pub(crate) fn covariance(&self, ddof: u64) -> Option<F> {
        (self.count() > ddof).then(|| self.c / F::from_count(self.count() - ddof))
    }

    /// Pearson's r, clamped to `[−1, 1]` (NaN passes); `None` below two
    /// pairs or when either M2 is 0.
    pub(crate) fn correlation(&self) -> Option<F> {
        let (mx, my) = (self.x.m2(), self.y.m2());
        if self.count() < 2 || mx == F::zero() || my == F::zero() {
            return None;
        }
        // √(M2x·M2y) rounds once where the product is a normal number;
        // √M2x·√M2y, which rounds three times, only where it is not.
        let product = mx * my;
        let norm = if product.is_normal() {
            product.sqrt()
        } else {
            mx.sqrt() * my.sqrt()
        };
        let r = self.c / norm;
        let one = F::one();
        Some(if r > one {
            one
        } else if r < -one {
            -one
        } else {
            r
        })
    }

    /// Converts to another float type (see `Moments::cast`).
    pub(crate) fn cast<G: Float>(&self) -> CoMoments<G> {
        CoMoments {
            x: self.x.cast(),
            y: self.y.cast(),
            c: G::from_f64(self.c.as_f64()),
        }
    }

    /// Checks the invariants of restored state.
    pub(crate) fn validate(&self) -> Result<(), crate::Error> {
        let with = |axis: &str, e: crate::Error| match e.kind() {
            crate::ErrorKind::InvalidState { reason } => {
                crate::Error::state(alloc::format!("{axis}: {reason}"))
            }
            _ => e,
        };
        self.x.validate().map_err(|e| with("x", e))?;
        self.y.validate().map_err(|e| with("y", e))?;
        if self.x.count != self.y.count {
            return Err(crate::Error::state("x and y must have the same count"));
        }
        self.check_limits()?;
        if self.c.is_nan() {
            return Ok(());
        }
        if self.count() <= 1 && self.c != F::zero() {
            return Err(crate::Error::state(
                "the co-moment must be 0 below two pairs",
            ));
        }
        // Cauchy–Schwarz, with room for rounding: |C| ≤ √M2x·√M2y. The
        // squares behind an M2 underflow before the products behind C do
        // (deviations of 1e-300 square to 0), each losing up to the
        // smallest normal number: each M2 gets that much room per pair.
        let (c, mx, my) = (self.c.as_f64(), self.x.m2.as_f64(), self.y.m2.as_f64());
        let underflow = F::min_positive_value().as_f64() * self.count() as f64;
        let bound =
            num_traits::Float::sqrt(mx + underflow) * num_traits::Float::sqrt(my + underflow);
        if num_traits::Float::abs(c) > bound * (1.0 + 1e-6) {
            return Err(crate::Error::state(alloc::format!(
                "the co-moment {c:e} must not exceed √(m2_x·m2_y) = {bound:e} in magnitude"
            )));
        }
        Ok(())
    }
}

impl<F: Float> CoMoments<F> {
    /// Where the co-moment may be NaN or ±∞ (in `f64`; see
    /// `moments::is_narrow` for why `f32` state filled from `f64` data is
    /// left to the coordinates' own checks): only where a deviation was
    /// not finite, or a product of two deviations overflowed, whose square
    /// is the product of the two M2 increments. An M2 is then NaN or +∞
    /// too, and stays so. (The reverse does not hold: a NaN pushed beside
    /// an offset that overflowed leaves the co-moment ±∞.)
    fn check_limits(&self) -> Result<(), crate::Error> {
        if super::is_narrow::<F>() {
            return Ok(());
        }
        let (c, mx, my) = (self.c, self.x.m2, self.y.m2);
        let overflowed = |m2: F| m2.is_nan() || m2 == F::infinity();
        if !(c.is_finite() || overflowed(mx) || overflowed(my)) {
            return Err(crate::Error::state(alloc::format!(
                "the comoment is {c:?} beside the finite m2 of x {mx:?} and of y {my:?}: \
                 it overflows or turns NaN only with an m2 that is +inf or NaN"
            )));
        }
        Ok(())
    }
}

/// `(δx/2)(δy/2)·4`, for deltas of means whose product overflowed; NaN
/// when a shift is not finite.
#[cold]
fn halved_delta_product<F: Float>(
    ax: &Moments<F>,
    bx: &Moments<F>,
    ay: &Moments<F>,
    by: &Moments<F>,
) -> F {
    if !(ax.shift.is_finite()
        && bx.shift.is_finite()
        && ay.shift.is_finite()
        && by.shift.is_finite())
    {
        return F::nan();
    }
    let two = F::one() + F::one();
    let half = |a: &Moments<F>, b: &Moments<F>| {
        (b.shift / two - a.shift / two) + (b.offset / two - a.offset / two)
    };
    half(ax, bx) * half(ay, by) * (two * two)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_and_merge_match_the_two_pass_co_moment() {
        let xs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let ys = [2.0, 1.0, 4.0, 3.0, 7.0, 5.0];
        // x̄ = 3.5, ȳ = 11/3; C = Σ(x − x̄)(y − ȳ) = Σxy − n·x̄·ȳ = 93 − 77 = 16.
        let mut all = CoMoments::<f64>::default();
        let (mut a, mut b) = (CoMoments::<f64>::default(), CoMoments::<f64>::default());
        for (i, (&x, &y)) in xs.iter().zip(&ys).enumerate() {
            all.push(x, y);
            if i < 2 { a.push(x, y) } else { b.push(x, y) }
        }
        assert!((all.c - 16.0).abs() < 1e-14);
        a.merge(&b);
        assert!((a.c - 16.0).abs() < 1e-14);
        assert_eq!(a.count(), 6);
        assert!(all.validate().is_ok());
    }

    #[test]
    fn overflowing_deviations_give_an_infinite_co_moment() {
        let mut m = CoMoments::<f64>::default();
        m.push(f64::MAX, f64::MAX);
        m.push(-f64::MAX, -f64::MAX);
        assert_eq!(m.c, f64::INFINITY);
        let mut a = CoMoments::<f64>::of_pairs(&[f64::MAX], &[-f64::MAX]);
        a.merge(&CoMoments::of_pairs(&[-f64::MAX], &[f64::MAX]));
        assert_eq!(a.c, f64::NEG_INFINITY);
    }
}
