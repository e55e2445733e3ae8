//! Blocked slice reductions to the smallest and largest value.
//!
//! Each block of [`SLICE_BLOCK`](super::SLICE_BLOCK) values is scanned in lanes of its own type (no
//! widening: comparisons are exact), and the blocks' extremes are combined
//! in the fixed tree with IEEE 754-2019 `minimum` and `maximum`, which are
//! associative and commutative to the bit; the result is the same on any
//! number of threads, and the same as pushing value by value.

use super::arch::{self, Path, detect};
use super::reduce_blocks;
use super::schedule::Schedule;
use crate::Float;
use crate::float::{maximum, minimum};

/// The count, smallest and largest value of a slice, in `f64`; `(+∞, −∞)`
/// when empty, both NaN when a NaN was seen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Extremes {
    pub(crate) count: u64,
    pub(crate) min: f64,
    pub(crate) max: f64,
}

impl Extremes {
    pub(crate) fn merge(&mut self, other: &Self) {
        self.count = self.count.saturating_add(other.count);
        self.min = minimum(self.min, other.min);
        self.max = maximum(self.max, other.max);
    }
}

/// The extremes of `xs` on a given path and schedule.
pub(crate) fn extremes_on<S: Float>(path: Path, schedule: Schedule, xs: &[S]) -> Extremes {
    let merge = |a: &mut Extremes, b: Extremes| a.merge(&b);
    reduce_blocks(schedule, xs, |b| extremes_of(path, b), merge).unwrap_or(Extremes {
        count: 0,
        min: f64::INFINITY,
        max: f64::NEG_INFINITY,
    })
}

/// The extremes of one block.
#[inline]
fn extremes_of<S: Float>(path: Path, block: &[S]) -> Extremes {
    let (min, max) = arch::extremes(path, block);
    Extremes {
        count: block.len() as u64,
        min,
        max,
    }
}

/// A block's extremes: a leaf of [`extremes`]' tree.
#[inline]
pub(crate) fn block_extremes<S: Float>(block: &[S]) -> Extremes {
    extremes_of(detect(), block)
}

/// The extremes of `xs`.
pub(crate) fn extremes<S: Float>(xs: &[S]) -> Extremes {
    extremes_on(detect(), Schedule::Sequential, xs)
}

/// The extremes of `xs` on every rayon thread (the same result).
#[cfg(feature = "rayon")]
pub(crate) fn par_extremes<S: Float>(xs: &[S]) -> Extremes {
    extremes_on(detect(), Schedule::Parallel, xs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::SLICE_BLOCK;
    use crate::test_support::SplitMix;
    use alloc::vec::Vec;

    fn naive(xs: &[f64]) -> (f64, f64) {
        xs.iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
                (minimum(lo, x), maximum(hi, x))
            })
    }

    fn bits((a, b): (f64, f64)) -> (u64, u64) {
        (a.to_bits(), b.to_bits())
    }

    #[test]
    fn every_path_matches_a_scalar_fold_bit_for_bit() {
        let mut rng = SplitMix(5);
        for n in [
            1,
            2,
            7,
            8,
            15,
            16,
            17,
            33,
            SLICE_BLOCK - 1,
            SLICE_BLOCK,
            SLICE_BLOCK + 1,
            3 * SLICE_BLOCK + 7,
        ] {
            let mut xs: Vec<f64> = (0..n).map(|_| rng.signed_unit()).collect();
            for case in 0..6 {
                let at = (rng.next_u64() % n as u64) as usize;
                match case {
                    1 => xs[at] = -0.0,
                    2 => xs
                        .iter_mut()
                        .for_each(|x| *x = if *x < 0.0 { -0.0 } else { 0.0 }),
                    3 => xs[at] = f64::NEG_INFINITY,
                    4 => xs[at] = f64::NAN,
                    5 => xs.iter_mut().for_each(|x| *x = 0.0),
                    _ => {}
                }
                let want = naive(&xs);
                for path in [Path::Portable, detect()] {
                    let got = extremes_on(path, Schedule::Sequential, &xs);
                    assert_eq!(got.count, n as u64);
                    if want.0.is_nan() {
                        assert!(got.min.is_nan() && got.max.is_nan(), "n {n} case {case}");
                    } else {
                        assert_eq!(bits((got.min, got.max)), bits(want), "n {n} case {case}");
                    }
                    let xs32: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
                    let got = extremes_on(path, Schedule::Sequential, &xs32);
                    let wide: Vec<f64> = xs32.iter().map(|&x| f64::from(x)).collect();
                    let want = naive(&wide);
                    if want.0.is_nan() {
                        assert!(got.min.is_nan() && got.max.is_nan());
                    } else {
                        assert_eq!(
                            bits((got.min, got.max)),
                            bits(want),
                            "f32 n {n} case {case}"
                        );
                    }
                }
            }
        }
    }
}
