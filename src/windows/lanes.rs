//! The sums a window takes afresh from its values, at a refresh or a
//! rebuild: over the whole window, so they run in several independent
//! chains (the compiler keeps them in vector registers) rather than wait on
//! one addition per value.

use crate::Float;
use crate::float::two_sum;

/// How many independent chains the sums run in.
const LANES: usize = 4;

/// `Σ values` as an unevaluated pair `hi + lo`, exact up to `ε²` terms:
/// Knuth's TwoSum in each lane, the rounding errors added into the lane's
/// `lo`, then the lanes (and the values past the last whole group) folded
/// the same way.
pub(crate) fn compensated_sum<F: Float>(values: &[F]) -> (F, F) {
    let mut hi = [F::zero(); LANES];
    let mut lo = [F::zero(); LANES];
    let mut groups = values.chunks_exact(LANES);
    for group in &mut groups {
        for ((h, l), &x) in hi.iter_mut().zip(&mut lo).zip(group) {
            let (s, e) = two_sum(*h, x);
            *h = s;
            *l = *l + e;
        }
    }
    let (mut sum, mut err) = (F::zero(), F::zero());
    for (&h, &l) in hi.iter().zip(&lo) {
        let (s, e) = two_sum(sum, h);
        sum = s;
        err = err + (e + l);
    }
    for &x in groups.remainder() {
        let (s, e) = two_sum(sum, x);
        sum = s;
        err = err + e;
    }
    (sum, err)
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
        let (hi, lo) = compensated_sum(&xs);
        // Exactly 2 + 3 + 0.001 + 0.5 − 2 + 0.25 = 3.751, up to the
        // rounding of 1e-3 itself and of the final addition.
        assert!((hi + lo - 3.751).abs() <= 4.0 * f64::EPSILON * 3.751);
        let plain: f64 = xs.iter().sum();
        assert!(
            (plain - 3.751).abs() > 0.5,
            "the data must defeat a plain sum"
        );
        assert_eq!(compensated_sum::<f64>(&[]), (0.0, 0.0));
        assert_eq!(compensated_sum(&[7.5_f32]), (7.5, 0.0));
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
