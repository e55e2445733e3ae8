//! The sums a window takes afresh from its values, at a refresh or a
//! rebuild: over the whole window, so they run in several independent
//! chains (the compiler keeps them in vector registers) rather than wait on
//! one addition per value.

use crate::Float;
use crate::float::two_sum;
use alloc::vec::Vec;

/// How many independent chains the sums run in.
const LANES: usize = 4;

/// `Σ values` as an unevaluated pair `hi + lo`, exact up to `ε²` terms:
/// Knuth's TwoSum in each lane, the rounding errors added into the lane's
/// `lo`, then the lanes (and the values past the last whole group) folded
/// the same way. The third word bounds the pair's error: it is the sum of
/// the magnitudes of every rounded addition's result (each rounds by at
/// most `ε/2` of it), so the pair is within `ε/2` of it of the exact sum.
/// On ordinary data that is some `n·ε` of the sum; values that cancel
/// hugely make it large, and the caller takes the sum exactly instead.
pub(crate) fn compensated_sum<F: Float>(values: &[F]) -> (F, F, F) {
    let mut hi = [F::zero(); LANES];
    let mut lo = [F::zero(); LANES];
    let mut churn = [F::zero(); LANES];
    let mut groups = values.chunks_exact(LANES);
    for group in &mut groups {
        for (((h, l), c), &x) in hi.iter_mut().zip(&mut lo).zip(&mut churn).zip(group) {
            let (s, e) = two_sum(*h, x);
            *h = s;
            *l = *l + e;
            *c = *c + l.abs();
        }
    }
    let (mut sum, mut err) = (F::zero(), F::zero());
    let mut bound = churn.iter().fold(F::zero(), |b, &c| b + c);
    for (&h, &l) in hi.iter().zip(&lo) {
        let (s, e) = two_sum(sum, h);
        sum = s;
        let part = e + l;
        err = err + part;
        bound = bound + part.abs() + err.abs();
    }
    for &x in groups.remainder() {
        let (s, e) = two_sum(sum, x);
        sum = s;
        err = err + e;
        bound = bound + err.abs();
    }
    // The bound's own roundings: below `n·ε` of it, far below the factor
    // of 2 between `ε/2` and the `ε` its users count per unit.
    (sum, err, bound)
}

/// An exact sum of floats as non-overlapping partials (Shewchuk 1997, the
/// method of Python's `math.fsum`): each addition splits into a rounded
/// sum and its exact error by TwoSum, and the errors that are not zero
/// are kept, so the partials always add up to the exact sum of what was
/// added, however it cancels. [`pair`](Self::pair) rounds that to two
/// words. The caller keeps the terms' sum of magnitudes below the largest
/// float (a partial is never larger): past that a partial overflows, and
/// the pair is NaN.
#[derive(Clone, Debug, Default)]
pub(crate) struct ExactSum<F> {
    /// Increasing in magnitude, none overlapping the next.
    partials: Vec<F>,
}

impl<F: Float> ExactSum<F> {
    /// Adds `x` exactly.
    pub(crate) fn add(&mut self, x: F) {
        let mut x = x;
        let mut kept = 0;
        for j in 0..self.partials.len() {
            let (s, e) = two_sum(x, self.partials[j]);
            if e != F::zero() {
                self.partials[kept] = e;
                kept += 1;
            }
            x = s;
        }
        self.partials.truncate(kept);
        self.partials.push(x);
    }

    /// The exact sum rounded to nearest (ties to even): the partials
    /// added from the largest down until an addition rounds, then the
    /// tie broken by the sign of what is below (as `fsum` does).
    fn rounded(partials: &[F]) -> F {
        let Some((&top, rest)) = partials.split_last() else {
            return F::zero();
        };
        let (mut hi, mut lo) = (top, F::zero());
        let mut below = rest.len();
        while below > 0 {
            below -= 1;
            let (s, e) = two_sum(hi, rest[below]);
            hi = s;
            lo = e;
            if lo != F::zero() {
                break;
            }
        }
        // `lo` is exactly half an ulp of `hi` only if doubling it and
        // adding is exact; the partials below then decide the tie.
        if below > 0 {
            let next = rest[below - 1];
            if (lo < F::zero() && next < F::zero()) || (lo > F::zero() && next > F::zero()) {
                let y = lo + lo;
                let x = hi + y;
                if x - hi == y {
                    hi = x;
                }
            }
        }
        hi
    }

    /// The exact sum as `hi + lo`: `hi` the sum rounded to nearest, `lo`
    /// the exact remainder rounded to nearest, so the pair is within
    /// `ε/2·|lo|` of the exact sum (a subnormal `lo` within half the
    /// smallest one). NaN when a partial is not finite.
    pub(crate) fn pair(&self) -> (F, F) {
        if self.partials.iter().any(|p| !p.is_finite()) {
            return (F::nan(), F::nan());
        }
        let hi = Self::rounded(&self.partials);
        let mut rest = self.clone();
        rest.add(-hi);
        (hi, Self::rounded(&rest.partials))
    }
}

/// `Σ ((x − shift) − offset)²` over `values`, each deviation formed from
/// the rounded difference and its rounding error (TwoSum), so that a shift
/// far from the values costs no digits before the offset is taken away.
pub(crate) fn squared_deviations<F: Float>(values: &[F], shift: F, offset: F) -> F {
    let deviation = |x: F| {
        let (y, e) = two_sum(x, -shift);
        (y - offset) + e
    };
    let mut m2 = [F::zero(); LANES];
    let mut groups = values.chunks_exact(LANES);
    for group in &mut groups {
        for (m, &x) in m2.iter_mut().zip(group) {
            let d = deviation(x);
            *m = *m + d * d;
        }
    }
    let tail = groups.remainder().iter().fold(F::zero(), |m, &x| {
        let d = deviation(x);
        m + d * d
    });
    m2.iter().fold(tail, |m, &l| m + l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compensated_sum_keeps_what_a_plain_sum_drops() {
        // Every lane and the tail: 9 values, two whole groups and one over.
        let xs: [f64; 9] = [1e16, 1.0, -1e16, 1.0, 3.0, 1e-3, 0.5, -2.0, 0.25];
        let (hi, lo, bound) = compensated_sum(&xs);
        // A few times the sizes `lo` went through (2, 4, ...).
        assert!(bound >= lo.abs() && bound <= 64.0, "{bound}");
        // Exactly 2 + 3 + 0.001 + 0.5 − 2 + 0.25 = 3.751, up to the
        // rounding of 1e-3 itself and of the final addition.
        assert!((hi + lo - 3.751).abs() <= 4.0 * f64::EPSILON * 3.751);
        let plain: f64 = xs.iter().sum();
        assert!(
            (plain - 3.751).abs() > 0.5,
            "the data must defeat a plain sum"
        );
        assert_eq!(compensated_sum::<f64>(&[]), (0.0, 0.0, 0.0));
        assert_eq!(compensated_sum(&[7.5_f32]), (7.5, 0.0, 0.0));
    }

    #[test]
    fn the_bound_of_the_compensated_sum_sees_what_it_drops() {
        // The shape of a scaled window that held ±MAX: the lanes' `lo`
        // takes errors of 2^65 next to errors of 2^122 and rounds the
        // small ones off; the bound says so.
        let big = f64::MAX / 16.0;
        let xs = [big, 3e20, -big, 1.0, 2.0, 3.0, 4.0, 5.0];
        let (hi, lo, bound) = compensated_sum(&xs);
        let exact = 3e20 + 15.0;
        assert!((hi + lo - exact).abs() <= f64::EPSILON / 2.0 * bound);
    }

    /// The exact sum, from two partials that add without rounding.
    fn exact_pair(xs: &[f64]) -> (f64, f64) {
        let mut sum = ExactSum::default();
        for &x in xs {
            sum.add(x);
        }
        sum.pair()
    }

    #[test]
    fn the_exact_sum_keeps_what_cancels() {
        // 2^1020 + 1 − 2^1020 + 2^-1074: only the small ones are left.
        let (big, tiny) = (2f64.powi(1020), f64::from_bits(1));
        assert_eq!(exact_pair(&[big, 1.0, -big, tiny]), (1.0, tiny));
        // 1 + 2^-60 + 2^-120: the pair keeps 2^-60 and rounds 2^-120 off
        // (beyond two words), to nearest.
        let (hi, lo) = exact_pair(&[2f64.powi(-120), 1.0, 2f64.powi(-60)]);
        assert_eq!((hi, lo), (1.0, 2f64.powi(-60)));
        // A tie in `hi` broken by what is below: 1 + 2^-53 + 2^-200 rounds
        // up, 1 + 2^-53 − 2^-200 down.
        let (hi, lo) = exact_pair(&[1.0, 2f64.powi(-53), 2f64.powi(-200)]);
        assert_eq!(hi, 1.0 + f64::EPSILON);
        assert_eq!(lo, -2f64.powi(-53) + 2f64.powi(-200));
        let (hi, lo) = exact_pair(&[1.0, 2f64.powi(-53), -2f64.powi(-200)]);
        assert_eq!(hi, 1.0);
        assert_eq!(lo, 2f64.powi(-53) - 2f64.powi(-200));
        assert_eq!(exact_pair(&[]), (0.0, 0.0));
        // The case of the windows' fallback: ±MAX/16, each with a shift of
        // 6.25e18 taken away, beside 2e37 (3.3e38 scaled): the shift's
        // share stays in `lo`, and is all that is left when 2e37 goes.
        let (big, shift) = (f64::MAX / 16.0, 6.25e18);
        let terms = [2.0625e37, -shift, -big, -shift, big, -shift];
        assert_eq!(exact_pair(&terms), (2.0625e37, -3.0 * shift));
        let mut sum = ExactSum::default();
        for t in terms {
            sum.add(t);
        }
        sum.add(-2.0625e37);
        assert_eq!(sum.pair(), (-3.0 * shift, 0.0));
        // f32 too, and an overflow is NaN.
        let mut small = ExactSum::<f32>::default();
        for x in [f32::MAX, 1.0, -f32::MAX, 0.5] {
            small.add(x);
        }
        assert_eq!(small.pair(), (1.5, 0.0));
        let (hi, lo) = exact_pair(&[f64::MAX, f64::MAX]);
        assert!(hi.is_nan() && lo.is_nan());
    }

    #[test]
    fn squared_deviations_are_the_two_pass_formula() {
        // 1e8 + {1, 2, 3, 4, 5, 6}: mean 1e8 + 3.5, M2 = 17.5 exactly,
        // shifted by a value of the set (1e8 + 6, offset −2.5).
        let xs: [f64; 6] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0].map(|x| 1e8 + x);
        assert_eq!(squared_deviations(&xs, 1e8 + 6.0, -2.5), 17.5);
        assert_eq!(squared_deviations::<f64>(&[], 1.0, 0.0), 0.0);
    }

    #[test]
    fn squared_deviations_keep_the_rounding_of_a_far_shift() {
        // A shift of 1e10 rounds every x − shift to a multiple of 2^-19;
        // the rounding errors put the deviations back. M2 of 0.1, 0.2, 0.3,
        // 0.4 is 0.05 (to 1e-16); the offset 0.25 − 1e10 is itself rounded,
        // which moves M2 by 4·(2^-20)² at most.
        let xs: [f64; 4] = [0.1, 0.2, 0.3, 0.4];
        let m2 = squared_deviations(&xs, 1e10, 0.25 - 1e10);
        assert!((m2 - 0.05).abs() < 1e-10, "{m2}");
    }
}
