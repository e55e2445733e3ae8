//! Blocked slice reductions to central moments up to the fourth, for
//! skewness and kurtosis.
//!
//! The same shape as the raw-moment reduction in the parent module: each
//! block of [`SLICE_BLOCK`](super::SLICE_BLOCK) values takes its first value as shift `K`, its lanes
//! sum the powers of `d = x − K` (`Σd`, `Σd²`, `Σd³`, `Σd⁴`), and the
//! block's central moments follow from them with μ = Σd/n:
//!
//! - M2 = Σd² − μΣd
//! - M3 = Σd³ − μ(3Σd² − 2μΣd)
//! - M4 = Σd⁴ − μ(4Σd³ − μ(6Σd² − 3μΣd))
//!
//! These cancel as μ grows against the spread, so a block whose first value
//! is far from its mean ([`shift_is_far`]) is summed again around that
//! mean rounded to its [`centre`], from L1 cache. The blocks are merged with Pébay's pairwise
//! formulas ([`HigherMoments::merge`]) in the fixed tree, so the result
//! does not depend on the number of threads.

use super::arch::{self, Path, detect};
use super::schedule::Schedule;
use super::{centre, from_sums, reduce_blocks, shift_is_far, summed_again};
use crate::Element;
use crate::moments::higher_moments::HigherMoments;

/// Central moments of `count` values from their power sums around `k`.
#[inline]
fn from_power_sums<const FOURTH: bool>(
    count: usize,
    k: f64,
    [s1, s2, s3, s4]: [f64; 4],
) -> HigherMoments<f64, FOURTH> {
    let base = from_sums(count, k, s1, s2);
    let mu = base.offset;
    let m3 = s3 - mu * (3.0 * s2 - 2.0 * mu * s1);
    let m4 = if FOURTH {
        let m4 = s4 - mu * (4.0 * s3 - mu * (6.0 * s2 - 3.0 * mu * s1));
        // Rounding may leave a tiny negative; NaN passes.
        if m4 < 0.0 { 0.0 } else { m4 }
    } else {
        0.0
    };
    HigherMoments { base, m3, m4 }
}

/// Central moments of one run of values (no tree), summed again around
/// the run's mean (its [`centre`]) when its first value was far from it; the robust scalar
/// path when the sums are not finite.
#[inline]
fn run<S: Element, const FOURTH: bool>(path: Path, xs: &[S]) -> HigherMoments<f64, FOURTH> {
    let Some(&first) = xs.first() else {
        return HigherMoments::default();
    };
    let sums =
        |k: f64| from_power_sums::<FOURTH>(xs.len(), k, arch::power_sums::<S, FOURTH>(path, xs, k));
    let finite = |m: &HigherMoments<f64, FOURTH>| {
        m.base.offset.is_finite() && m.base.m2.is_finite() && m.m3.is_finite() && m.m4.is_finite()
    };
    let far = |m: &HigherMoments<f64, FOURTH>| finite(m) && shift_is_far(&m.base);
    let mut m = sums(first.widen());
    if far(&m) {
        let mean = m.base.shift + m.base.offset;
        let variance = m.base.m2 / m.base.count as f64;
        m = summed_again(mean, centre(mean, variance), sums, far);
    }
    if finite(&m) {
        m
    } else {
        HigherMoments::of_values(xs.iter().copied())
    }
}

/// Central moments of `xs` on a given path and schedule.
pub(crate) fn higher_moments_on<S: Element, const FOURTH: bool>(
    path: Path,
    schedule: Schedule,
    xs: &[S],
) -> HigherMoments<f64, FOURTH> {
    let merge = |a: &mut HigherMoments<f64, FOURTH>, b: HigherMoments<f64, FOURTH>| a.merge(&b);
    reduce_blocks(schedule, xs, |b| run::<S, FOURTH>(path, b), merge).unwrap_or_default()
}

/// A block's central moments: a leaf of [`higher_moments`]' tree.
#[inline]
pub(crate) fn block_higher_moments<S: Element, const FOURTH: bool>(
    block: &[S],
) -> HigherMoments<f64, FOURTH> {
    run::<S, FOURTH>(detect(), block)
}

/// Central moments of `xs`, in `f64`.
pub(crate) fn higher_moments<S: Element, const FOURTH: bool>(
    xs: &[S],
) -> HigherMoments<f64, FOURTH> {
    higher_moments_on(detect(), Schedule::Sequential, xs)
}

/// Central moments of `xs` on every rayon thread: bit-for-bit
/// [`higher_moments`], whatever the number of threads.
#[cfg(feature = "rayon")]
pub(crate) fn par_higher_moments<S: Element, const FOURTH: bool>(
    xs: &[S],
) -> HigherMoments<f64, FOURTH> {
    higher_moments_on(detect(), Schedule::Parallel, xs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::SLICE_BLOCK;
    use crate::test_support::SplitMix;
    use alloc::vec::Vec;

    fn pushed(xs: &[f64]) -> HigherMoments<f64, true> {
        HigherMoments::of_values(xs.iter().copied())
    }

    fn rel(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    #[test]
    fn blocks_match_pushing_on_every_path_and_length() {
        let mut rng = SplitMix(11);
        for n in [
            1,
            2,
            3,
            7,
            16,
            17,
            SLICE_BLOCK - 1,
            SLICE_BLOCK,
            SLICE_BLOCK + 1,
            3 * SLICE_BLOCK + 5,
        ] {
            // Skewed data (u³) around 100.
            let xs: Vec<f64> = (0..n).map(|_| 100.0 + rng.unit().powi(3)).collect();
            let want = pushed(&xs);
            for path in [Path::Portable, detect()] {
                let got = higher_moments_on::<f64, true>(path, Schedule::Sequential, &xs);
                assert_eq!(got.base.count, n as u64);
                if n > 2 {
                    assert!(
                        rel(got.m3, want.m3) < 1e-10,
                        "n {n}: {} {}",
                        got.m3,
                        want.m3
                    );
                    assert!(rel(got.m4, want.m4) < 1e-10, "n {n}");
                }
                let xs32: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
                let got = higher_moments_on::<f32, false>(path, Schedule::Sequential, &xs32);
                assert_eq!(got.m4, 0.0);
            }
        }
    }

    #[test]
    fn a_far_first_value_is_summed_again() {
        let mut xs: Vec<f64> = (0..1000).map(|i| f64::from(i % 10)).collect();
        xs[0] = 1e4;
        let want = pushed(&xs);
        let got = higher_moments::<f64, true>(&xs);
        assert!(rel(got.m3, want.m3) < 1e-12);
        assert!(rel(got.m4, want.m4) < 1e-12);
    }
}
