//! Raw weighted moments — count of positive weights, Σw, Σw², shift, mean
//! offset and weighted M2 — with West's (1979) incremental step and the
//! pairwise merge.
//!
//! As in [`Moments`](super::moments::Moments), the shift is a value from the
//! data (the first with a positive weight) and the state holds
//! `mean − shift`, so data like `1e9 + U(0, 1)` keeps its digits; the
//! shift is re-based onto the mean by the same test when it goes stale.
//!
//! A weight of 0 leaves a finite value out entirely (it costs no accuracy
//! and never becomes the shift), but a NaN or ±∞ with weight 0 still makes
//! the statistics NaN, as `0·NaN` and `0·∞` are NaN (numpy's `average`
//! agrees). While Σw = 0 such a state is "poisoned": shift and M2 are NaN
//! and the statistics (`None` while Σw = 0) are NaN once a positive weight
//! arrives.
//!
//! `SPREAD = false` keeps only what a weighted mean needs: M2 and Σw² stay
//! 0, and the shift is re-based on the mean's own test.

use super::moments::{offset_is_large, rebase, shift_is_stale};
use crate::float::clamp_non_negative;
use crate::kernels::Schedule;
use crate::{Element, Error, Float};

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct WeightedMoments<F> {
    /// Values with a positive weight (saturating).
    pub(crate) count: u64,
    /// Σw.
    pub(crate) weight: F,
    /// Σw² (0 when `SPREAD` is off).
    pub(crate) weight_sq: F,
    pub(crate) shift: F,
    pub(crate) offset: F,
    /// Σw(x − μ)² (0 when `SPREAD` is off).
    pub(crate) m2: F,
}

impl<F: Float> Default for WeightedMoments<F> {
    fn default() -> Self {
        Self {
            count: 0,
            weight: F::zero(),
            weight_sq: F::zero(),
            shift: F::zero(),
            offset: F::zero(),
            m2: F::zero(),
        }
    }
}

/// Checks a weight: finite and non-negative.
pub(crate) fn check_weight<F: Float>(w: F) -> Result<(), Error> {
    if w.is_finite() && w >= F::zero() {
        Ok(())
    } else {
        Err(Error::parameter(
            "weight",
            w.as_f64(),
            "finite and non-negative",
        ))
    }
}

/// The weighted moments of `xs` with weights `ws` by the blocked kernels,
/// in `F`, on a given schedule. The kernel checks the weights in the pass
/// that sums them; only when it finds a bad one are they read again, to
/// name the first.
///
/// # Errors
///
/// Slices of unequal length, a weight that is negative, NaN or infinite,
/// or weights whose sum (or sum of squares, with `SPREAD`) overflows `F`.
pub(crate) fn of_slices<S: Element, F: Float, const SPREAD: bool>(
    schedule: Schedule,
    xs: &[S],
    ws: &[S],
) -> Result<WeightedMoments<F>, Error> {
    if xs.len() != ws.len() {
        return Err(Error::length("weights", xs.len(), ws.len()));
    }
    let m = crate::kernels::weighted_moments_on::<S, SPREAD>(schedule, xs, ws);
    let (sum, sum_sq) = match m {
        Some(m) => (m.weight, m.weight_sq),
        None => weight_sums(ws)?,
    };
    let limit = F::max_value().as_f64();
    match m {
        Some(m) if sum <= limit && (!SPREAD || sum_sq <= limit) => Ok(m.cast()),
        _ => Err(Error::parameter(
            "weights",
            sum,
            "small enough that the sums of the weights and of their squares stay finite",
        )),
    }
}

/// `(Σw, Σw²)` in order, or the first invalid weight's error.
fn weight_sums<S: Element>(ws: &[S]) -> Result<(f64, f64), Error> {
    let (mut sum, mut sum_sq) = (0.0_f64, 0.0_f64);
    for &w in ws {
        let w = w.widen();
        check_weight(w)?;
        sum += w;
        sum_sq += w * w;
    }
    Ok((sum, sum_sq))
}

/// Applies `push` to every pair of `iter` on a copy of `m`, and keeps the
/// copy only when every push succeeded.
pub(crate) fn try_extend<F: Float, const SPREAD: bool>(
    m: &mut WeightedMoments<F>,
    iter: impl IntoIterator<Item = (F, F)>,
) -> Result<(), Error> {
    let mut copy = *m;
    for (x, w) in iter {
        copy.push::<SPREAD>(x, w)?;
    }
    *m = copy;
    Ok(())
}

/// The shift and offset after a push of `x` whose weight outweighs the
/// rest (`w0` of the new total `weight`), `d` its deviation from the old
/// mean: `x` itself, and the small step to the new mean from there,
/// `μ' − x = −d·W₀/W`. (Stepped from the old mean, a weight 10²⁵⁰ times
/// the rest left μ' with μ's rounding, 10¹⁹ times x; from the old shift, a
/// weight 10¹⁰ times left it with the shift's, 10⁻⁶ of μ'.) Out of line:
/// it happens a few times in a stream, and as selects beside the usual
/// step, with its division computed on every push, it cost a push 8 %.
#[cold]
#[inline(never)]
fn onto<F: Float>(x: F, d: F, w0: F, weight: F) -> (F, F) {
    (x, -(d * (w0 / weight)))
}

impl<F: Float> WeightedMoments<F> {
    /// Whether a zero-weight NaN or ±∞ arrived while Σw = 0.
    fn poisoned(&self) -> bool {
        self.weight == F::zero() && self.shift.is_nan()
    }

    /// Makes every statistic NaN (or, while Σw = 0, once there are any).
    #[cold]
    fn poison(&mut self) {
        self.shift = F::nan();
        self.offset = F::zero();
        self.m2 = F::nan();
    }

    /// Adds `x` with weight `w`; an invalid weight, or one that would make
    /// Σw or Σw² overflow, is an error that changes nothing.
    #[inline]
    pub(crate) fn push<const SPREAD: bool>(&mut self, x: F, w: F) -> Result<(), Error> {
        check_weight(w)?;
        if w == F::zero() {
            if !x.is_finite() {
                self.poison();
            }
            return Ok(());
        }
        let weight = self.weight + w;
        let weight_sq = if SPREAD {
            self.weight_sq + w * w
        } else {
            F::zero()
        };
        if !(weight.is_finite() && weight_sq.is_finite()) {
            return Err(Error::parameter(
                "weight",
                w.as_f64(),
                "small enough that the sums of the weights and of their squares stay finite",
            ));
        }
        if self.weight == F::zero() {
            let poisoned = self.poisoned();
            *self = Self {
                count: 1,
                weight,
                weight_sq,
                shift: x,
                offset: F::zero(),
                m2: if x.is_finite() || !SPREAD {
                    F::zero()
                } else {
                    F::nan()
                },
            };
            if poisoned {
                self.poison();
            }
            return Ok(());
        }
        self.count = self.count.saturating_add(1);
        // w/W rather than w·(1/W): the reciprocal of a subnormal total
        // weight overflows. The test for a stale shift takes 1/W, which
        // may then be +∞ and only makes a re-base more likely.
        let ratio = w / weight;
        let before = self.weight;
        // West's M2 term w·d·(x − μ') is d²·w·W₀/W: taken as (d·j)·d with
        // j = W₀·(w/W) ≤ min(w, W₀), it is never negative, and no step
        // overflows unless the term does. (Formed from x − μ' it is not:
        // when w outweighs W₀ by far, μ' lands within its own rounding of
        // x, on either side, and a huge d made M2 −∞.)
        let joint = before * ratio;
        // When x outweighs the rest, the state moves onto it (see
        // `onto`), as a merge moves onto its heavier side.
        let heavy = w > before;
        self.weight = weight;
        self.weight_sq = weight_sq;
        let y = x - self.shift;
        let d = y - self.offset;
        if d.is_finite() {
            if heavy {
                (self.shift, self.offset) = onto(x, d, before, weight);
            } else {
                self.offset = self.offset + d * ratio;
            }
            if SPREAD {
                self.m2 = self.m2 + d * joint * d;
            }
            self.rebase_if_stale::<SPREAD>(F::one() / weight);
        } else if x.is_finite() && self.shift.is_finite() {
            // Halved, so that the difference fits; the mean then becomes
            // the shift.
            let two = F::one() + F::one();
            let y = x / two - self.shift / two;
            let half = self.offset / two;
            let d = y - half;
            if SPREAD {
                self.m2 = self.m2 + d * joint * d * (two * two);
            }
            let mean = if heavy {
                x / two - d * (before / weight)
            } else {
                self.shift / two + (half + d * ratio)
            };
            self.shift = mean * two;
            self.offset = F::zero();
        } else {
            self.absorb_limit(x);
        }
        Ok(())
    }

    #[inline]
    fn rebase_if_stale<const SPREAD: bool>(&mut self, inv: F) {
        let stale = if SPREAD {
            shift_is_stale(self.shift, self.offset, self.m2, inv)
        } else {
            offset_is_large(
                self.shift,
                self.offset,
                self.offset * self.offset,
                F::zero(),
            )
        };
        if stale {
            rebase(&mut self.shift, &mut self.offset);
        }
    }

    /// A non-finite mean meets this state: the mean becomes their limit,
    /// M2 NaN.
    #[cold]
    fn absorb_limit(&mut self, other_mean: F) {
        let mean = self.shift + self.offset;
        self.shift = if mean.is_finite() {
            other_mean
        } else if other_mean.is_finite() {
            mean
        } else {
            mean + other_mean
        };
        self.offset = F::zero();
        self.m2 = F::nan();
    }

    /// The pairwise update `μ = μₐ + δ·W_b/W`,
    /// `M2 = M2ₐ + M2_b + δ²·WₐW_b/W`, on the shift of the side with more
    /// weight (this side on a tie). A Σw that overflows is +∞; the
    /// statistics are then NaN.
    #[inline]
    pub(crate) fn merge<const SPREAD: bool>(&mut self, other: &Self) {
        if other.weight == F::zero() {
            if other.poisoned() {
                self.poison();
            }
            return;
        }
        if self.weight == F::zero() {
            let poisoned = self.poisoned();
            *self = *other;
            if poisoned {
                self.poison();
            }
            return;
        }
        if other.weight > self.weight {
            let mut merged = *other;
            merged.merge_onto_self::<SPREAD>(self);
            *self = merged;
        } else {
            self.merge_onto_self::<SPREAD>(other);
        }
    }

    fn merge_onto_self<const SPREAD: bool>(&mut self, other: &Self) {
        let wa = self.weight;
        let weight = wa + other.weight;
        let two = F::one() + F::one();
        // W_b/W, also when W overflows.
        let ratio = if weight.is_finite() {
            other.weight / weight
        } else {
            (other.weight / two) / (wa / two + other.weight / two)
        };
        self.count = self.count.saturating_add(other.count);
        self.weight = weight;
        if SPREAD {
            self.weight_sq = self.weight_sq + other.weight_sq;
        }
        let delta = (other.shift - self.shift) + (other.offset - self.offset);
        if delta.is_finite() {
            self.offset = self.offset + delta * ratio;
            if SPREAD {
                // δ²·WₐW_b/W as (δ·j)·δ, j = Wₐ·(W_b/W) ≤ min(Wₐ, W_b): no
                // step overflows unless the term does (δ² alone may, when
                // one side weighs next to nothing).
                let joint = wa * ratio;
                self.m2 = self.m2 + other.m2 + delta * joint * delta;
            }
            self.rebase_if_stale::<SPREAD>(F::one() / weight);
        } else if self.shift.is_finite() && other.shift.is_finite() {
            let half =
                (other.shift / two - self.shift / two) + (other.offset / two - self.offset / two);
            if SPREAD {
                self.m2 = self.m2 + other.m2 + half * (wa * ratio) * half * (two * two);
            }
            self.shift = (self.shift / two + (self.offset / two + half * ratio)) * two;
            self.offset = F::zero();
        } else {
            self.absorb_limit(other.shift + other.offset);
        }
    }

    #[inline]
    pub(crate) fn mean(&self) -> Option<F> {
        (self.weight > F::zero()).then(|| self.shift + self.offset)
    }

    /// `m2 / divisor`, never negative; NaN when Σw overflowed.
    fn ratio(&self, divisor: F) -> F {
        if self.weight.is_finite() && self.weight_sq.is_finite() {
            clamp_non_negative(self.m2) / divisor
        } else {
            F::nan()
        }
    }

    pub(crate) fn population_variance(&self) -> Option<F> {
        (self.weight > F::zero()).then(|| self.ratio(self.weight))
    }

    pub(crate) fn sample_variance(&self) -> Option<F> {
        (self.weight > F::one()).then(|| self.ratio(self.weight - F::one()))
    }

    pub(crate) fn reliability_variance(&self) -> Option<F> {
        if self.count < 2 {
            return None;
        }
        let divisor = self.weight - self.weight_sq / self.weight;
        (divisor > F::zero() || !self.weight.is_finite() || !self.weight_sq.is_finite())
            .then(|| self.ratio(divisor))
    }

    /// Converts to another float type (see `Moments::cast`).
    pub(crate) fn cast<G: Float>(&self) -> WeightedMoments<G> {
        let shift = G::from_f64(self.shift.as_f64());
        let lost = if shift.is_finite() {
            self.shift.as_f64() - shift.as_f64()
        } else {
            0.0
        };
        WeightedMoments {
            count: self.count,
            weight: G::from_f64(self.weight.as_f64()),
            weight_sq: G::from_f64(self.weight_sq.as_f64()),
            shift,
            offset: G::from_f64(lost + self.offset.as_f64()),
            m2: G::from_f64(self.m2.as_f64()),
        }
    }

    /// Checks the invariants of restored state.
    pub(crate) fn validate<const SPREAD: bool>(&self) -> Result<(), Error> {
        let zero = F::zero();
        let non_negative = |v: F| v >= zero;
        if !non_negative(self.weight) || !non_negative(self.weight_sq) {
            return Err(Error::state(alloc::format!(
                "the sums of the weights and of their squares must be non-negative, got {} and {}",
                self.weight,
                self.weight_sq
            )));
        }
        if self.m2 < zero {
            return Err(Error::state(alloc::format!(
                "m2 must be non-negative, got {}",
                self.m2
            )));
        }
        if !SPREAD && (self.weight_sq != zero || self.m2 != zero) {
            return Err(Error::state("a weighted mean keeps no m2 nor Σw²"));
        }
        if (self.count == 0) != (self.weight == zero) {
            return Err(Error::state(
                "count (values with a positive weight) must be 0 exactly when the total weight is",
            ));
        }
        if self.count == 0 {
            let clean = self.shift == zero && self.m2 == zero;
            let poisoned = self.shift.is_nan() && (self.m2.is_nan() || !SPREAD);
            if self.weight_sq != zero || self.offset != zero || !(clean || poisoned) {
                return Err(Error::state(
                    "the total weight is 0 but the moments are not (only a NaN shift and m2 may record a NaN of weight 0)",
                ));
            }
            return Ok(());
        }
        if SPREAD {
            if self.count == 1 && self.weight_sq != self.weight * self.weight {
                return Err(Error::state("Σw² must be (Σw)² for one weight"));
            }
            if self.count == 1 && self.m2 != zero && !self.m2.is_nan() {
                return Err(Error::state("m2 must be 0 for one weight"));
            }
            // Σw² ≤ (Σw)², up to rounding.
            let (w, w2) = (self.weight.as_f64(), self.weight_sq.as_f64());
            if w2 > w * w * (1.0 + 1e-9) {
                return Err(Error::state(alloc::format!(
                    "Σw² = {w2:e} must not exceed (Σw)² = {:e}",
                    w * w
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn west_matches_the_weighted_two_pass() {
        // x = 2, 4, 8 with weights 1, 1, 2: Σw = 4, μ = 5.5,
        // Σw(x − μ)² = 12.25 + 2.25 + 2·6.25 = 27.
        let mut m = WeightedMoments::<f64>::default();
        for (x, w) in [(2.0, 1.0), (4.0, 1.0), (8.0, 2.0)] {
            m.push::<true>(x, w).unwrap();
        }
        assert_eq!(m.mean(), Some(5.5));
        assert_eq!(m.m2, 27.0);
        assert_eq!(m.weight_sq, 6.0);
        assert!(m.validate::<true>().is_ok());
    }

    #[test]
    fn zero_weights_are_absent_unless_not_finite() {
        let mut m = WeightedMoments::<f64>::default();
        m.push::<true>(1e300, 0.0).unwrap();
        assert_eq!(m, WeightedMoments::default());
        m.push::<true>(f64::NAN, 0.0).unwrap();
        assert_eq!(m.mean(), None);
        assert!(m.validate::<true>().is_ok());
        m.push::<true>(1.0, 1.0).unwrap();
        assert!(m.mean().unwrap().is_nan());
    }
}
