//! Kernel tests against naive and exact references.

use super::channels::channel_moments_on;
use super::*;
use crate::test_support::{Exact, SplitMix, big_offset_data, compensated_sum, rel, two_pass};
use alloc::vec::Vec;

fn paths() -> [Path; 2] {
    [Path::Portable, detect()]
}

#[test]
fn empty_and_single_values() {
    for path in paths() {
        assert_eq!(
            moments_on::<f64>(path, Schedule::Sequential, &[]),
            Moments::default()
        );
        assert_eq!(
            moments_on::<f32>(path, Schedule::Sequential, &[]),
            Moments::default()
        );
        let m = moments_on(path, Schedule::Sequential, &[2.5_f32]);
        assert_eq!((m.count, m.mean(), m.m2()), (1, Some(2.5), 0.0));
        assert_eq!(
            moments_on(path, Schedule::Sequential, &[-7.0_f64]).mean(),
            Some(-7.0)
        );
    }
}

#[test]
fn matches_two_pass_on_awkward_lengths() {
    let mut rng = SplitMix(1);
    for n in [
        2,
        3,
        15,
        16,
        17,
        SLICE_BLOCK - 1,
        SLICE_BLOCK,
        SLICE_BLOCK + 1,
        3 * SLICE_BLOCK + 17,
        40_000,
    ] {
        let xs: Vec<f64> = (0..n).map(|_| 5.0 + rng.signed_unit()).collect();
        let xs32: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
        let wide32: Vec<f64> = xs32.iter().map(|&x| f64::from(x)).collect();
        let (_, m2) = two_pass(&xs);
        let (_, m2_32) = two_pass(&wide32);
        let n_f = n as f64;
        let (mean, mean32) = (
            compensated_sum(xs.iter().copied()) / n_f,
            compensated_sum(wide32.iter().copied()) / n_f,
        );
        for path in paths() {
            let m = moments_on(path, Schedule::Sequential, &xs);
            assert_eq!(m.count, n as u64);
            assert!(
                rel(m.mean().unwrap(), mean) < 1e-14,
                "n = {n}: {:e}",
                rel(m.mean().unwrap(), mean)
            );
            assert!(rel(m.m2(), m2) < 1e-12, "n = {n}: {} vs {m2}", m.m2());
            assert!(
                rel(
                    moments_on(path, Schedule::Sequential, &xs).mean().unwrap(),
                    mean
                ) < 1e-14
            );
            let m = moments_on(path, Schedule::Sequential, &xs32);
            assert!(rel(m.mean().unwrap(), mean32) < 1e-14, "n = {n}");
            assert!(rel(m.m2(), m2_32) < 1e-12, "n = {n}");
        }
    }
}

#[test]
fn both_paths_agree() {
    let mut rng = SplitMix(2);
    let xs: Vec<f64> = (0..10_000).map(|_| 1e3 + rng.signed_unit()).collect();
    let a = moments_on(Path::Portable, Schedule::Sequential, &xs);
    let b = moments_on(detect(), Schedule::Sequential, &xs);
    assert_eq!(a.count, b.count);
    assert!(rel(a.mean().unwrap(), b.mean().unwrap()) < 1e-15);
    assert!(rel(a.m2(), b.m2()) < 1e-13);
}

#[test]
fn nan_and_infinity_propagate() {
    for path in paths() {
        let mut xs = alloc::vec![1.0_f64; 5000];
        xs[4000] = f64::NAN;
        assert!(moments_on(path, Schedule::Sequential, &xs).m2.is_nan());
        assert!(
            moments_on(path, Schedule::Sequential, &xs)
                .mean()
                .unwrap()
                .is_nan()
        );
        xs[4000] = f64::INFINITY;
        assert!(
            !moments_on(path, Schedule::Sequential, &xs)
                .mean()
                .unwrap()
                .is_finite()
        );
    }
}

#[test]
fn big_offset_is_exact_to_1e_14() {
    let n = 1 << 20;
    let (xs, exact) = big_offset_data(n, 3);
    for path in paths() {
        let m = moments_on(path, Schedule::Sequential, &xs);
        assert!(
            rel(m.m2(), exact.m2(20)) <= 1e-14,
            "{}",
            rel(m.m2(), exact.m2(20))
        );
        assert!((m.mean().unwrap() - 1e9 - exact.mean_offset(20)).abs() <= 2.5e-7);
        let m = moments_on(path, Schedule::Sequential, &xs);
        assert!((m.mean().unwrap() - 1e9 - exact.mean_offset(20)).abs() <= 2.5e-7);
    }
}

/// `[outer, channels, inner]` data with channel `c` around `1e9 + c`, and
/// each channel's exact sums.
fn channel_data(outer: usize, channels: usize, inner: usize, seed: u64) -> (Vec<f64>, Vec<Exact>) {
    let mut rng = SplitMix(seed);
    let mut exact = alloc::vec![Exact::default(); channels];
    let mut xs = Vec::with_capacity(outer * channels * inner);
    for _ in 0..outer {
        for (c, e) in exact.iter_mut().enumerate() {
            for _ in 0..inner {
                let k = rng.next_u64() >> 44;
                e.add(k);
                xs.push(1e9 + c as f64 + k as f64 / (1u64 << 20) as f64);
            }
        }
    }
    (xs, exact)
}

fn check_channels(got: &[Moments<f64>], exact: &[Exact]) {
    assert_eq!(got.len(), exact.len());
    for (c, (m, e)) in got.iter().zip(exact).enumerate() {
        assert_eq!(u128::from(m.count), e.n);
        let want = e.m2(20);
        let err = if want == 0.0 {
            m.m2()
        } else {
            rel(m.m2(), want)
        };
        assert!(err <= 1e-14, "channel {c}: {err}");
        let mean = m.mean().unwrap() - 1e9 - c as f64;
        assert!((mean - e.mean_offset(20)).abs() <= 2.5e-7, "channel {c}");
    }
}

#[test]
fn channel_moments_are_exact_to_1e_14_in_both_layouts() {
    // NCHW-like (rows loop), NHWC-like (lanes loop), NC-like and odd shapes.
    for (outer, channels, inner) in [
        (8, 3, 4096 + 5),
        (5000, 7, 1),
        (300, 5, 13),
        (3, 2, 300),
        (1, 1, 1),
        (9000, 600, 1),
        // Narrow slabs, fused into wider rows, with leftover rows.
        (50_001, 3, 1),
        (9_999, 1, 2),
        // Short runs (lanes loop): several channels per group, one channel
        // per group, and a block of 4096 rows of 1000 values per channel.
        (70, 10, 49),
        (300, 3, 700),
        (4200, 1, 1000),
        // One outer position: short runs many to a kernel call (runs of 1,
        // 7, 32, 63 and 255, more than one call's worth of runs), and
        // longer runs by the slice kernel.
        (1, 9, 1),
        (1, 20_000, 7),
        (1, 5000, 32),
        (1, 300, 63),
        (1, 600, 255),
        (1, 50, 256),
        // Runs long enough to go two at a time (`PAIR_MIN`): an odd
        // channel count (the last one alone), runs of several blocks, and
        // one outer position (a layer norm's long rows).
        (4, 5, 8192 + 3),
        (2, 2, 3 * 65536 + 7),
        (1, 3, 9000),
    ] {
        let (xs, exact) = channel_data(outer, channels, inner, 4);
        for path in paths() {
            check_channels(
                &channel_moments_on(path, Schedule::Sequential, &xs, outer, channels, inner),
                &exact,
            );
        }
    }
}

#[test]
fn a_non_finite_value_in_one_of_two_runs_read_together_stays_in_its_channel() {
    // Runs of 8193 go two at a time; a NaN in channel 1 and an infinity
    // in channel 2 (each with a partner) leave channels 0 and 3 exact.
    let (outer, channels, inner) = (2, 4, 8193);
    let (mut xs, exact) = channel_data(outer, channels, inner, 9);
    xs[inner + 17] = f64::NAN;
    xs[channels * inner + 2 * inner + 5] = f64::INFINITY;
    for path in paths() {
        let got = channel_moments_on(path, Schedule::Sequential, &xs, outer, channels, inner);
        assert!(got[1].mean().unwrap().is_nan(), "{:?}", got[1]);
        assert_eq!(got[2].mean(), Some(f64::INFINITY));
        check_channels(&[got[0]], &exact[..1]);
        let (m3, e3) = (got[3], &exact[3]);
        let err = rel(m3.m2(), e3.m2(20));
        assert!(err <= 1e-14, "channel 3: {err}");
        assert!((m3.mean().unwrap() - 1e9 - 3.0 - e3.mean_offset(20)).abs() <= 2.5e-7);
    }
}

#[test]
fn short_runs_keep_outliers_non_finite_values_and_overflow_apart() {
    // One outer position, runs of 40 (the short-runs kernel): an outlier
    // first, a NaN, an infinity, sums that overflow, and an ordinary run.
    let run = 40;
    let ordinary = |i: usize| 5.0 + (i % 3) as f64;
    let rows: [Vec<f64>; 5] = [
        (0..run)
            .map(|i| if i == 0 { 1e15 } else { 1.0 + i as f64 / 64.0 })
            .collect(),
        (0..run)
            .map(|i| if i == 7 { f64::NAN } else { ordinary(i) })
            .collect(),
        (0..run)
            .map(|i| if i == 3 { f64::INFINITY } else { ordinary(i) })
            .collect(),
        (0..run)
            .map(|i| if i % 2 == 0 { f64::MAX } else { -f64::MAX })
            .collect(),
        (0..run).map(ordinary).collect(),
    ];
    let xs: Vec<f64> = rows.iter().flatten().copied().collect();
    for path in paths() {
        let got = channel_moments_on(path, Schedule::Sequential, &xs, 1, rows.len(), run);
        for (c, (m, row)) in got.iter().zip(&rows).enumerate() {
            assert_eq!(m.count, run as u64, "run {c}");
            let (mean, m2) = two_pass(row);
            match c {
                1 => assert!(m.mean().unwrap().is_nan() && m.m2().is_nan(), "{m:?}"),
                2 => assert!(m.mean() == Some(f64::INFINITY) && m.m2().is_nan(), "{m:?}"),
                // ±f64::MAX alternating: the mean is 0 to rounding at the
                // values' scale, M2 too large to represent, +∞ (never NaN).
                3 => assert!(
                    m.mean().unwrap().abs() <= 4.0 * f64::EPSILON * f64::MAX
                        && m.m2() == f64::INFINITY,
                    "{m:?}"
                ),
                _ => {
                    assert!(rel(m.mean().unwrap(), mean) <= 1e-15, "run {c}: {m:?}");
                    assert!(rel(m.m2(), m2) <= 1e-14, "run {c}: {m:?}");
                }
            }
        }
    }
}

#[test]
fn channel_moments_match_slices_on_f32() {
    let mut rng = SplitMix(5);
    let (outer, channels, inner) = (70, 3, 9);
    let xs: Vec<f32> = (0..outer * channels * inner)
        .map(|_| 3.0 + rng.signed_unit() as f32)
        .collect();
    let got = channel_moments(&xs, outer, channels, inner);
    for (c, m) in got.iter().enumerate() {
        let vals: Vec<f64> = xs
            .chunks_exact(inner)
            .skip(c)
            .step_by(channels)
            .flatten()
            .map(|&x| f64::from(x))
            .collect();
        let (mean, m2) = two_pass(&vals);
        assert_eq!(m.count, (outer * inner) as u64);
        assert!(rel(m.mean().unwrap(), mean) < 1e-14);
        assert!(rel(m.m2(), m2) < 1e-12);
    }
}

#[test]
fn channel_moments_of_nothing_are_empty() {
    for (outer, channels, inner) in [(0, 3, 4), (2, 3, 0), (2, 0, 4)] {
        let xs = alloc::vec![1.0_f64; outer * channels * inner];
        let got = channel_moments(&xs, outer, channels, inner);
        assert_eq!(got.len(), channels);
        assert!(got.iter().all(|m| m.count == 0));
    }
    // A slice shorter than promised is read as far as whole outer positions go.
    let got = channel_moments(&[1.0_f64, 2.0, 3.0], 2, 2, 1);
    assert_eq!(got[0].mean(), Some(1.0));
    assert_eq!(got[1].mean(), Some(2.0));
}

#[cfg(feature = "rayon")]
mod parallel {
    use super::*;

    use crate::test_support::in_pool;

    fn bits(m: &Moments<f64>) -> (u64, u64, u64, u64) {
        (
            m.count,
            m.shift.to_bits(),
            m.offset.to_bits(),
            m.m2.to_bits(),
        )
    }

    #[test]
    fn par_moments_equal_moments_bit_for_bit_on_any_pool() {
        let (xs, exact) = big_offset_data((1 << 20) + 123, 6);
        let seq = moments(&xs);
        assert!(rel(seq.m2(), exact.m2(20)) <= 1e-14);
        for threads in [1, 2, 16] {
            let m = in_pool(threads, || par_moments(&xs));
            assert_eq!(bits(&m), bits(&seq), "{threads} threads");
            // Every path, not just the detected one.
            for path in paths() {
                let seq = moments_on(path, Schedule::Sequential, &xs);
                let par = in_pool(threads, || moments_on(path, Schedule::Parallel, &xs));
                assert_eq!(bits(&par), bits(&seq), "{path:?}, {threads} threads");
            }
        }
        let xs32: Vec<f32> = xs.iter().map(|&x| (x - 1e9) as f32).collect();
        let seq = moments(&xs32);
        for threads in [1, 2, 16] {
            assert_eq!(bits(&in_pool(threads, || par_moments(&xs32))), bits(&seq));
        }
    }

    #[test]
    fn par_channel_moments_equal_sequential_bit_for_bit() {
        for (outer, channels, inner) in [
            (4, 3, 1 << 15),
            (40, 3, 4096),
            (70_000, 5, 1),
            (3, 40_000, 1),
            (900, 3, 100),
            (30_001, 3, 1),
            (5000, 2, 300),
            (1, 40_000, 32),
            (1, 3000, 5),
        ] {
            let (xs, exact) = channel_data(outer, channels, inner, 7);
            let path = detect();
            let seq = channel_moments_on(path, Schedule::Sequential, &xs, outer, channels, inner);
            check_channels(&seq, &exact);
            for threads in [1, 2, 16] {
                let par = in_pool(threads, || {
                    channel_moments_on(path, Schedule::Parallel, &xs, outer, channels, inner)
                });
                assert!(
                    par.iter().map(bits).eq(seq.iter().map(bits)),
                    "{outer}x{channels}x{inner}, {threads} threads"
                );
            }
        }
    }
}

#[cfg(feature = "half")]
#[test]
fn half_precision_equals_its_f64_widening_on_every_path() {
    let mut rng = SplitMix(12);
    let xs: Vec<f64> = (0..10_007).map(|_| 3.0 + rng.signed_unit()).collect();
    let h: Vec<half::f16> = xs.iter().map(|&x| half::f16::from_f64(x)).collect();
    let b: Vec<half::bf16> = xs.iter().map(|&x| half::bf16::from_f64(x)).collect();
    let hw: Vec<f64> = h.iter().map(|x| x.to_f64()).collect();
    let bw: Vec<f64> = b.iter().map(|x| x.to_f64()).collect();
    for path in paths() {
        let s = Schedule::Sequential;
        assert_eq!(
            moments_on(path, s, &h),
            moments_on(path, s, &hw),
            "{path:?}"
        );
        assert_eq!(
            moments_on(path, s, &b),
            moments_on(path, s, &bw),
            "{path:?}"
        );
        let got = channel_moments_on(path, s, &h, 10, 7, 143);
        assert_eq!(
            got,
            channel_moments_on(path, s, &hw, 10, 7, 143),
            "{path:?}"
        );
        // Channels last: the lanes loop, with a partial step of lanes
        // (37 = 2·16 + 5) and leftover rows (270 = 4·67 + 2).
        let (rows, channels) = (10_007 / 37, 37);
        let len = rows * channels;
        assert_eq!(
            channel_moments_on(path, s, &h[..len], rows, channels, 1),
            channel_moments_on(path, s, &hw[..len], rows, channels, 1),
            "{path:?}"
        );
        assert_eq!(
            channel_moments_on(path, s, &b[..len], rows, channels, 1),
            channel_moments_on(path, s, &bw[..len], rows, channels, 1),
            "{path:?}"
        );
        // Short runs, many to a call.
        let (runs, run) = (10_007 / 31, 31);
        let len = runs * run;
        assert_eq!(
            channel_moments_on(path, s, &h[..len], 1, runs, run),
            channel_moments_on(path, s, &hw[..len], 1, runs, run),
            "{path:?}"
        );
        assert_eq!(
            channel_moments_on(path, s, &b[..len], 1, runs, run),
            channel_moments_on(path, s, &bw[..len], 1, runs, run),
            "{path:?}"
        );
    }
    // Weighted sums, the weights in the same type.
    let ws: Vec<f64> = (0..10_007).map(|_| rng.unit()).collect();
    let wh: Vec<half::f16> = ws.iter().map(|&w| half::f16::from_f64(w)).collect();
    let whw: Vec<f64> = wh.iter().map(|w| w.to_f64()).collect();
    let wb: Vec<half::bf16> = ws.iter().map(|&w| half::bf16::from_f64(w)).collect();
    let wbw: Vec<f64> = wb.iter().map(|w| w.to_f64()).collect();
    for path in paths() {
        assert_eq!(
            arch::shifted_weighted_sums(path, &h, &wh, 2.9),
            arch::shifted_weighted_sums(path, &hw, &whw, 2.9),
            "{path:?}"
        );
        assert_eq!(
            arch::shifted_weighted_sums(path, &b, &wb, 2.9),
            arch::shifted_weighted_sums(path, &bw, &wbw, 2.9),
            "{path:?}"
        );
    }
    // The backward pass's sums: runs of 1663 (the pair kernel), of 142
    // and of 1 (the lanes loop).
    let dy: Vec<f64> = (0..10_007).map(|_| rng.signed_unit()).collect();
    let dh: Vec<half::f16> = dy.iter().map(|&x| half::f16::from_f64(x)).collect();
    let dhw: Vec<f64> = dh.iter().map(|x| x.to_f64()).collect();
    let centre: Vec<f64> = (0..37).map(|c| 3.0 + 0.01 * f64::from(c)).collect();
    for (outer, channels, inner) in [(2, 3, 1663), (10, 7, 142), (270, 37, 1)] {
        let len = outer * channels * inner;
        let centre = &centre[..channels];
        assert_eq!(
            grad::channel_grad_sums(&h[..len], &dh[..len], outer, channels, inner, centre),
            grad::channel_grad_sums(&hw[..len], &dhw[..len], outer, channels, inner, centre),
            "{outer}×{channels}×{inner}"
        );
    }
}

#[test]
fn the_tests_know_the_block_length() {
    assert_eq!(crate::test_support::BLOCK_F64, SLICE_BLOCK);
}

#[test]
fn centres_are_coarse_and_close_to_the_mean() {
    for (mean, variance) in [
        (244.638_911_971_734_93, 2.4e8),
        (-244.638_911_971_734_93, 2.4e8),
        (1e9 + 0.123_456_789, 1.0 / 12.0),
        (0.1, 1e-30),
        (3.0e150, 1e290),
        (-7.5e-300, 1e-290),
    ] {
        let k = centre(mean, variance);
        let sigma = variance.sqrt();
        // Within 2⁻¹⁷σ of the mean, and a multiple of a power of two
        // g ≥ 2⁻¹⁸σ: no bit below g.
        assert!(
            (k - mean).abs() <= sigma * 2f64.powi(-17),
            "{mean} {variance}: {k}"
        );
        let g = 2f64.powi((variance.log2() / 2.0).floor() as i32 - CENTRE_BITS);
        assert!(g >= sigma * 2f64.powi(-18));
        assert_eq!((k / g).fract(), 0.0, "{mean} {variance}: {k}");
    }
    // The mean itself where no power of two fits: no spread, a spread
    // that is not a normal number, a non-finite mean, a mean whose ulp is
    // coarser than g already.
    for (mean, variance) in [
        (0.1, 0.0),
        (0.1, f64::NAN),
        (0.1, f64::INFINITY),
        (0.1, 1e-310),
        (f64::INFINITY, 1.0),
        (1e300, 1.0),
    ] {
        assert_eq!(centre(mean, variance).to_bits(), mean.to_bits());
    }
}

#[test]
fn a_centre_that_leaves_the_shift_far_is_replaced_by_the_mean() {
    use core::cell::RefCell;
    let asked = RefCell::new(Vec::new());
    let sums = |k: f64| {
        asked.borrow_mut().push(k);
        k
    };
    // Far around the centre: summed again around the mean.
    assert_eq!(summed_again(1.5, 1.0, sums, |&k| k == 1.0), 1.5);
    assert_eq!(*asked.borrow(), [1.0, 1.5]);
    asked.borrow_mut().clear();
    // Not far, or the centre is the mean: one pass.
    assert_eq!(summed_again(1.5, 1.0, sums, |_| false), 1.0);
    assert_eq!(summed_again(1.5, 1.5, sums, |_| true), 1.5);
    assert_eq!(*asked.borrow(), [1.0, 1.5]);
}

#[test]
fn dividing_by_a_count_is_the_division_bit_for_bit() {
    // Quotients of every size, subnormal ones (whose rounding the
    // multiplication by 2⁻ᵉ must repeat), ±0, ±∞ and NaN, by powers of two
    // and by other counts.
    let mut rng = SplitMix(3);
    let mut xs: Vec<f64> = (0..4000)
        .map(|i| {
            let e = i32::try_from(rng.next_u64() % 2000).unwrap_or(0) - 1000;
            let v = rng.signed_unit() * 2f64.powi(e);
            if i % 5 == 0 {
                f64::from_bits(rng.next_u64() >> 12)
            } else {
                v
            }
        })
        .collect();
    xs.extend([
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MIN_POSITIVE,
        f64::MAX,
    ]);
    for n in [
        1_u64,
        2,
        3,
        4,
        32,
        33,
        128,
        768,
        4096,
        1 << 40,
        1 << 52,
        1 << 53,
        1 << 60,
        u64::MAX,
    ] {
        for &x in &xs {
            #[allow(clippy::cast_precision_loss, reason = "the reference")]
            let want = x / n as f64;
            let got = divide_by_count(x, n);
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{x:e} / {n}: {got:e}, {want:e}"
            );
        }
    }
}

/// The means `path` writes over `rest` after a window holding `held`, as
/// far as its run goes (each widened to `f64`, exactly, for its bits).
fn exact_mean_bits<F: crate::Float>(path: Path, held: &[F], rest: &[F]) -> Vec<u64> {
    let mut out = alloc::vec![F::zero(); rest.len()];
    let n = arch::exact_mean_run(path, held, &[], rest, &mut out);
    out[..n].iter().map(|m| m.as_f64().to_bits()).collect()
}

/// `MovingStats`' mean series over a run: the portable chunks and this
/// CPU's path (with AVX2, the one-pass offset loop) write the same bits,
/// over offset runs (ties at a window of 98), split runs and a value off
/// the grid, for `f64` and `f32`, and stop at the same place.
#[test]
fn exact_mean_runs_agree_across_paths() {
    let mut rng = SplitMix(41);
    let calm: Vec<f64> = (0..20_000).map(|_| 1e6 + rng.unit()).collect();
    let spread: Vec<f64> = (0..20_000).map(|_| 15.0 + 10.0 * rng.unit()).collect();
    let mut off = calm.clone();
    off[13_001] = 0.1;
    #[allow(clippy::cast_possible_truncation, reason = "the test's f32 data")]
    let narrow: Vec<f32> = calm.iter().map(|&x| x as f32).collect();
    for window in [1_usize, 5, 98, 1000] {
        for xs in [&calm, &spread, &off] {
            let (held, rest) = xs.split_at(window);
            let portable = exact_mean_bits(Path::Portable, held, rest);
            assert!(portable.len() > 1000, "window {window}: a long run");
            assert!(
                portable == exact_mean_bits(detect(), held, rest),
                "window {window}"
            );
        }
        let (held, rest) = narrow.split_at(window);
        let portable = exact_mean_bits(Path::Portable, held, rest);
        assert!(portable.len() > 1000, "f32, window {window}: a long run");
        assert!(
            portable == exact_mean_bits(detect(), held, rest),
            "f32, window {window}"
        );
    }
}

/// The quantile series of full windows kept sorted: each path (the loop,
/// and with AVX2 the registers, up to 48 keys and past them) writes the
/// quantile of a window sorted afresh and leaves the last window's keys
/// sorted, for every window from 1 to 52, on ties, signed zeros,
/// infinities and values of every magnitude, in `f64` and `f32`.
#[test]
fn sorted_windows_agree_with_a_fresh_sort() {
    use crate::kernels::sorted_keys::{at_rank, key};
    let mut rng = SplitMix(43);
    let pool = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e300,
        -5e-324,
    ];
    let xs: Vec<f64> = (0..2000)
        .map(|i| match rng.next_u64() % 4 {
            0 => pool[(rng.next_u64() % 8) as usize],
            1 => (i % 3) as f64,
            2 => rng.signed_unit() * 1e6,
            _ => 1e6 + rng.unit(),
        })
        .collect();
    for window in 1..=52 {
        for q in [0.0, 0.5, 0.77, 1.0] {
            let rank = crate::windows::ordered::rank(q, window);
            let mut want = Vec::new();
            for end in window..xs.len() {
                let mut keys: Vec<i64> =
                    xs[end + 1 - window..=end].iter().map(|&x| key(x)).collect();
                keys.sort_unstable();
                want.push(at_rank::<f64>(&keys, rank).to_bits());
            }
            let mut last: Vec<i64> = xs[xs.len() - window..].iter().map(|&x| key(x)).collect();
            last.sort_unstable();
            for path in paths() {
                let mut sorted: Vec<i64> = xs[..window].iter().map(|&x| key(x)).collect();
                sorted.sort_unstable();
                let mut out = alloc::vec![0.0; xs.len() - window];
                let (olds, news) = (&xs[..xs.len() - window], &xs[window..]);
                arch::sorted_replace_run(path, &mut sorted, olds, news, rank, &mut out);
                let got: Vec<u64> = out.iter().map(|x| x.to_bits()).collect();
                assert!(got == want, "{path:?}, window {window}, q {q}");
                assert!(
                    sorted == last,
                    "{path:?}, window {window}, q {q}: the keys left"
                );
            }
            #[allow(clippy::cast_possible_truncation, reason = "the test's f32 data")]
            let narrow: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
            let mut sorted: Vec<i64> = narrow[..window].iter().map(|&x| key(x)).collect();
            sorted.sort_unstable();
            let mut by_path = Vec::new();
            for path in paths() {
                let mut keys = sorted.clone();
                let mut out = alloc::vec![0.0_f32; narrow.len() - window];
                let (olds, news) = (&narrow[..narrow.len() - window], &narrow[window..]);
                arch::sorted_replace_run(path, &mut keys, olds, news, rank, &mut out);
                by_path.push((out.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), keys));
            }
            assert!(by_path[0] == by_path[1], "f32, window {window}, q {q}");
        }
    }
}
