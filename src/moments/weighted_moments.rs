//! Raw weighted moments — count of positive weights, Σw, the reliability
//! divisor Σw − Σw²/Σw, shift, mean offset and weighted M2 — with West's
//! (1979) incremental step and the pairwise merge.
//!
//! As in [`Moments`](super::Moments), the shift is a value from the
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
//! The divisor is not formed from Σw²: with one weight far above the rest,
//! Σw² holds none of the others' squares, and `Σw − Σw²/Σw` cancels them
//! away (weights `[1e10, 0.3, 0.7, 0.2]` kept six digits of its 2.4). It is
//! `Σᵢ≠ⱼ wᵢwⱼ / Σw`, a sum of positive terms, kept by its own step: a push
//! of `w` onto `W₀` adds `2W₀w` to the pairs, a merge `2WₐW_b`, so
//! `D' = D·W₀/W + 2·W₀·w/W` and `D = Dₐ·Wₐ/W + D_b·W_b/W + 2·Wₐ·W_b/W`.
//! Held divided by Σw, it overflows only with Σw itself. Exactly it never
//! exceeds Σw; it is kept so after rounding too.
//!
//! `SPREAD = false` keeps only what a weighted mean needs: M2 and the
//! divisor stay 0, and the shift is re-based on the mean's own test.

use super::{offset_is_large, rebase, shift_is_stale};
use crate::float::clamp_non_negative;
use crate::{Error, Float};

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct WeightedMoments<F> {
    /// Values with a positive weight (saturating).
    pub(crate) count: u64,
    /// Σw.
    pub(crate) weight: F,
    /// Σw − Σw²/Σw = Σᵢ≠ⱼ wᵢwⱼ / Σw, the reliability weights' divisor
    /// (0 when `SPREAD` is off).
    pub(crate) divisor: F,
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
            divisor: F::zero(),
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

/// `d`, or `limit` when `d` rounded above it (`min`, without a NaN case:
/// neither is NaN here).
#[inline]
fn at_most<F: Float>(d: F, limit: F) -> F {
    if d > limit { limit } else { d }
}

/// The divisor's step `r·(2a − d + e)`, with `r` the share of the new
/// weight in the total, `a` and `d` the old side's Σw and divisor
/// (`d ≤ a`) and `e` the new side's divisor (0 for a push). The step is
/// at most the total weight, but `2a` need not be finite: past `MAX/2`
/// the sum is halved first (a tiny `r` times +∞ was NaN: a weight of
/// 1e-71 after one of 1.79e308 left the divisor NaN and the state
/// refused by its own validation).
#[inline]
fn divisor_step<F: Float>(r: F, a: F, d: F, e: F) -> F {
    let sum = ((a + a) - d) + e;
    if sum.is_finite() {
        r * sum
    } else {
        let half = F::from_f64(0.5);
        let halved = (a - d * half) + e * half;
        (r * halved) + (r * halved)
    }
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
    /// Σw overflow, is an error that changes nothing.
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
        if !weight.is_finite() {
            return Err(Error::parameter(
                "weight",
                w.as_f64(),
                "small enough that the sum of the weights stays finite",
            ));
        }
        if self.weight == F::zero() {
            let poisoned = self.poisoned();
            *self = Self {
                count: 1,
                weight,
                divisor: F::zero(),
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
        if SPREAD {
            // D·W₀/W + 2·W₀·w/W as D + (w/W)·(2W₀ − D): a positive step
            // (D ≤ W₀) from a difference of at least W₀, so that each push
            // rounds D about once, as a plain sum rounds. (Formed as
            // D·(1 − w/W) + 2·W₀·(w/W), three roundings of D's size a
            // push left it 8e-13 off after 70 000 pushes; now 3e-14.)
            let step = divisor_step(ratio, before, self.divisor, F::zero());
            self.divisor = at_most(self.divisor + step, weight);
        }
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
            // Dₐ·Wₐ/W + D_b·W_b/W + 2·Wₐ·W_b/W as a step from Dₐ, as in
            // `push`: Dₐ + (W_b/W)·(2Wₐ − Dₐ + D_b), a positive step from
            // a sum of at least Wₐ.
            let step = divisor_step(ratio, wa, self.divisor, other.divisor);
            self.divisor = at_most(self.divisor + step, weight);
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
        if self.weight.is_finite() {
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
        (self.divisor > F::zero() || !self.weight.is_finite()).then(|| self.ratio(self.divisor))
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
            divisor: G::from_f64(self.divisor.as_f64()),
            shift,
            offset: G::from_f64(lost + self.offset.as_f64()),
            m2: G::from_f64(self.m2.as_f64()),
        }
    }

    /// Checks the invariants of restored state.
    pub(crate) fn validate<const SPREAD: bool>(&self) -> Result<(), Error> {
        let zero = F::zero();
        let non_negative = |v: F| v >= zero;
        // Once Σw has overflowed every statistic is NaN, and so may the
        // divisor be (its step multiplies the overflow by a share of it).
        let divisor_ok =
            non_negative(self.divisor) || (self.divisor.is_nan() && self.weight.is_infinite());
        if !non_negative(self.weight) || !divisor_ok {
            return Err(Error::state(alloc::format!(
                "the total weight and the reliability divisor must be non-negative, got {:?} and {:?}",
                self.weight,
                self.divisor
            )));
        }
        if self.m2 < zero {
            return Err(Error::state(alloc::format!(
                "m2 must be non-negative, got {:?}",
                self.m2
            )));
        }
        if !SPREAD && (self.divisor != zero || self.m2 != zero) {
            return Err(Error::state("a weighted mean keeps no m2 nor divisor"));
        }
        if (self.count == 0) != (self.weight == zero) {
            return Err(Error::state(
                "count (values with a positive weight) must be 0 exactly when the total weight is",
            ));
        }
        if self.count == 0 {
            let clean = self.shift == zero && self.m2 == zero;
            let poisoned = self.shift.is_nan() && (self.m2.is_nan() || !SPREAD);
            if self.divisor != zero || self.offset != zero || !(clean || poisoned) {
                return Err(Error::state(
                    "the total weight is 0 but the moments are not (only a NaN shift and m2 may record a NaN of weight 0)",
                ));
            }
            return Ok(());
        }
        // The mean and M2 hold NaN and ±∞ where `Moments`' do (a push
        // steps, a merge re-bases, a non-finite value or a NaN of weight 0
        // leaves the limit in the shift with an offset of 0 and M2 NaN);
        // once Σw has overflowed, a merge's weights are ∞/∞ and anything
        // may follow, and every statistic reads NaN.
        if self.weight.is_finite() {
            super::check_limits(self.shift, self.offset, SPREAD.then_some(self.m2))?;
        }
        if SPREAD {
            if self.count == 1 && self.divisor != zero {
                return Err(Error::state(
                    "the reliability divisor must be 0 for one weight",
                ));
            }
            if self.count == 1 && self.m2 != zero && !self.m2.is_nan() {
                return Err(Error::state("m2 must be 0 for one weight"));
            }
            // Σw − Σw²/Σw ≤ Σw: push and merge keep it so after rounding.
            if self.divisor > self.weight {
                return Err(Error::state(alloc::format!(
                    "the reliability divisor {:?} must not exceed the total weight {:?}",
                    self.divisor,
                    self.weight
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
        // Σᵢ≠ⱼ wᵢwⱼ = 2·(1 + 2 + 2) = 10, over Σw = 4.
        assert_eq!(m.divisor, 2.5);
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
