//! `WeightedMean` and `WeightedVariance` against exact rational arithmetic
//! and numpy (values recorded from Python on the same SplitMix data), their
//! laws with quickcheck, hostile weights and checkpoints.

use crate::support::{SplitMix, in_pool, rel};
use momenta::{ErrorKind, Merge, WeightedMean, WeightedVariance, WeightedVarianceParts};
use quickcheck::{Arbitrary, Gen, QuickCheck};

/// x = 1e9 + U(0, 1), integer weights 0..15 (about 1 in 16 is 0), from
/// SplitMix(7) in turn.
fn data() -> (Vec<f64>, Vec<f64>) {
    let mut rng = SplitMix(7);
    (0..10_000)
        .map(|_| (1e9 + rng.unit(), (rng.next_u64() >> 60) as f64))
        .unzip()
}

// Exact (Python fractions, rounded once).
const TOTAL: f64 = 74_946.0;
const MEAN: f64 = 1_000_000_000.495_827_9;
const POPULATION: f64 = 0.083_851_353_689_545_23;
const FREQUENCY: f64 = 0.083_852_472_528_076_02;
const RELIABILITY: f64 = 0.083_862_836_422_810_57;
// numpy 2: np.average(x, weights=w), np.cov(x, aweights=w) and
// np.cov(x, fweights=w), within 2e-13 of the exact values.
const NUMPY_MEAN: f64 = 1_000_000_000.495_827_8;
const NUMPY_RELIABILITY: f64 = 0.083_862_836_422_825_34;
const NUMPY_FREQUENCY: f64 = 0.083_852_472_528_090_79;

fn check(v: &WeightedVariance<f64>, tol: f64, route: &str) {
    assert_eq!(v.total_weight(), TOTAL, "{route}");
    assert!(rel(v.mean().unwrap(), MEAN) <= 1e-16, "{route}");
    let errs = [
        rel(v.population_variance().unwrap(), POPULATION),
        rel(v.sample_variance().unwrap(), FREQUENCY),
        rel(v.reliability_variance().unwrap(), RELIABILITY),
    ];
    assert!(errs.iter().all(|&e| e <= tol), "{route}: {errs:?}");
}

#[test]
fn every_path_keeps_the_digits_of_a_large_offset() {
    let (xs, ws) = data();
    assert!(rel(NUMPY_MEAN, MEAN) < 1e-15);
    assert!(rel(NUMPY_RELIABILITY, RELIABILITY) < 1e-12 && rel(NUMPY_FREQUENCY, FREQUENCY) < 1e-12);
    let mut pushed = WeightedVariance::new();
    let mut mean = WeightedMean::new();
    for (&x, &w) in xs.iter().zip(&ws) {
        pushed.push(x, w).unwrap();
        mean.push(x, w).unwrap();
    }
    check(&pushed, 1e-12, "push");
    assert!(rel(mean.mean().unwrap(), MEAN) <= 1e-16);
    let mut merged = WeightedVariance::new();
    let mut merged_mean = WeightedMean::new();
    for (cx, cw) in xs.chunks(613).zip(ws.chunks(613)) {
        merged.merge(
            &WeightedVariance::try_from_iter(cx.iter().copied().zip(cw.iter().copied())).unwrap(),
        );
        merged_mean.merge(
            &WeightedMean::try_from_iter(cx.iter().copied().zip(cw.iter().copied())).unwrap(),
        );
    }
    check(&merged, 1e-12, "merge");
    assert!(rel(merged_mean.mean().unwrap(), MEAN) <= 1e-16);
    check(
        &WeightedVariance::from_slices(&xs, &ws).unwrap(),
        1e-14,
        "slices",
    );
    let m = WeightedMean::<f64>::from_slices(&xs, &ws).unwrap();
    assert!(rel(m.mean().unwrap(), MEAN) <= 1e-16);
}

#[test]
fn exact_on_binary_fractions_and_zero_weights_first() {
    // Zero-weight outliers first cost nothing; values k·2⁻²⁰ + 1e6 with
    // weights 1..4: exact sums in i128.
    let mut rng = SplitMix(5);
    let mut v = WeightedVariance::<f64>::new();
    for _ in 0..10 {
        v.push(-1e300, 0.0).unwrap();
    }
    let (mut sw, mut swk, mut swkk) = (0i128, 0i128, 0i128);
    for _ in 0..5000 {
        let k = rng.k20();
        let w = (rng.next_u64() >> 62) as i128 + 1;
        v.push(1e6 + k as f64 / 1048576.0, w as f64).unwrap();
        sw += w;
        swk += w * i128::from(k);
        swkk += w * i128::from(k) * i128::from(k);
    }
    // Σw(x − μ)² = (Σw·Σwk² − (Σwk)²) / (Σw · 2⁴⁰).
    let m2 = (sw * swkk - swk * swk) as f64 / sw as f64 / 2f64.powi(40);
    assert!(rel(v.population_variance().unwrap() * sw as f64, m2) <= 1e-12);
    assert!(rel(v.mean().unwrap() - 1e6, swk as f64 / sw as f64 / 1048576.0) <= 1e-9);
}

#[test]
fn invalid_weights_are_errors_that_change_nothing() {
    let mut v = WeightedVariance::<f64>::from_slices(&[1.0, 2.0], &[1.0, 1.0]).unwrap();
    let before = v.clone();
    for bad in [
        -1.0,
        -0.0 - 1e-300,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ] {
        let e = v.push(5.0, bad).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::InvalidParameter { name: "weight", .. }),
            "{e}"
        );
        assert!(v.try_extend([(3.0, 1.0), (4.0, bad)]).is_err());
        assert!(WeightedVariance::<f64>::from_slices(&[1.0, 2.0], &[1.0, bad]).is_err());
        assert!(WeightedMean::<f64>::from_slices(&[1.0], &[bad]).is_err());
    }
    assert_eq!(v, before);
    // Sums that would overflow are refused too (squares that would are
    // not: see `hostile_values`).
    assert!(v.try_extend([(1.0, 1e308), (1.0, 1e308)]).is_err());
    assert!(WeightedMean::<f32>::from_slices(&[1.0, 2.0], &[3e38_f64, 3e38]).is_err());
    assert_eq!(v, before);
    let e = WeightedVariance::<f64>::from_slices(&[1.0], &[]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::LengthMismatch { .. }));
}

#[test]
fn the_kernels_find_a_bad_weight_anywhere_and_name_the_first() {
    // Past the first block, inside the vector chunks, on both schedules:
    // the error is the first bad weight in slice order, as `push` names it.
    let n: usize = 20_000;
    let xs: Vec<f64> = (0..n).map(|i| 1e6 + (i % 17) as f64).collect();
    for (at, bad, later) in [
        (9_000, -2.5, f64::NAN),
        (13_001, f64::NAN, -1.0),
        (4_100, f64::INFINITY, -3.0),
        (19_999, f64::NEG_INFINITY, 0.0),
    ] {
        let mut ws: Vec<f64> = (0..n).map(|i| (i % 3) as f64).collect();
        ws[at] = bad;
        if at + 1 < n {
            ws[n - 1] = later;
        }
        let expected = WeightedVariance::<f64>::new().push(0.0, bad).unwrap_err();
        let seq = WeightedVariance::<f64>::from_slices(&xs, &ws).unwrap_err();
        let par = WeightedVariance::<f64>::par_from_slices(&xs, &ws).unwrap_err();
        let mean = WeightedMean::<f64>::par_from_slices(&xs, &ws).unwrap_err();
        for e in [seq, par, mean] {
            assert_eq!(e.to_string(), expected.to_string(), "bad weight at {at}");
        }
    }
    // Finite weights whose sum overflows: refused by name.
    let ws = vec![1e305_f64; n];
    let e = WeightedMean::<f64>::par_from_slices(&xs, &ws).unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ErrorKind::InvalidParameter {
                name: "weights",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn the_parallel_kernel_is_the_sequential_one_bit_for_bit() {
    // 300 000 values: 74 blocks, enough for the tree to fork.
    let mut rng = SplitMix(8);
    let (xs, ws): (Vec<f64>, Vec<f64>) = (0..300_000)
        .map(|_| (1e9 + rng.unit(), (rng.next_u64() >> 60) as f64))
        .unzip();
    let seq = WeightedVariance::<f64>::from_slices(&xs, &ws).unwrap();
    let seq_mean = WeightedMean::<f64>::from_slices(&xs, &ws).unwrap();
    for threads in [1, 2, 3, 8] {
        let par = in_pool(threads, || {
            WeightedVariance::<f64>::par_from_slices(&xs, &ws)
        })
        .unwrap();
        assert_eq!(par.to_parts(), seq.to_parts(), "{threads} threads");
        let mean = in_pool(threads, || WeightedMean::<f64>::par_from_slices(&xs, &ws)).unwrap();
        assert_eq!(mean.to_parts(), seq_mean.to_parts(), "{threads} threads");
    }
    // And it is accurate: against the two-pass weighted formula.
    let total: f64 = ws.iter().sum();
    let mean = xs.iter().zip(&ws).map(|(x, w)| (x - 1e9) * w).sum::<f64>() / total + 1e9;
    let m2: f64 = xs
        .iter()
        .zip(&ws)
        .map(|(x, w)| w * (x - mean) * (x - mean))
        .sum();
    assert!(rel(seq.population_variance().unwrap(), m2 / total) < 1e-12);
}

#[test]
fn hostile_values() {
    // Σw = 0: every statistic is None.
    let mut v = WeightedVariance::<f64>::new();
    v.push(3.0, 0.0).unwrap();
    assert_eq!(
        (v.mean(), v.population_variance(), v.total_weight()),
        (None, None, 0.0)
    );
    // Σw ≤ 1: no frequency-weight variance; one positive weight: no
    // reliability variance.
    v.push(3.0, 0.5).unwrap();
    v.push(5.0, 0.25).unwrap();
    assert_eq!(v.sample_variance(), None);
    let mut one = WeightedVariance::<f64>::new();
    one.push(1.0, 4.0).unwrap();
    one.push(9.0, 0.0).unwrap();
    assert_eq!(
        (one.reliability_variance(), one.sample_variance()),
        (None, Some(0.0))
    );
    // NaN with a valid weight (0 included) propagates.
    for w in [0.0, 1.0] {
        let mut v = WeightedVariance::<f64>::from_slices(&[1.0, 2.0], &[1.0, 1.0]).unwrap();
        v.push(f64::NAN, w).unwrap();
        v.push(3.0, 1.0).unwrap();
        assert!(v.mean().unwrap().is_nan() && v.population_variance().unwrap().is_nan());
        let sliced =
            WeightedVariance::<f64>::from_slices(&[1.0, f64::NAN, 3.0], &[1.0, w, 1.0]).unwrap();
        assert!(sliced.mean().unwrap().is_nan());
    }
    let poisoned = WeightedMean::<f64>::try_from_iter([(f64::NAN, 0.0)]).unwrap();
    assert_eq!(poisoned.mean(), None);
    let mut m = WeightedMean::<f64>::try_from_iter([(2.0, 1.0)]).unwrap();
    m.merge(&poisoned);
    assert!(m.mean().unwrap().is_nan());
    // ±∞ with a positive weight: the mean is the infinity, the variance NaN.
    let inf = WeightedVariance::<f64>::try_from_iter([(1.0, 1.0), (f64::INFINITY, 2.0)]).unwrap();
    assert_eq!(inf.mean(), Some(f64::INFINITY));
    assert!(inf.population_variance().unwrap().is_nan());
    // Near f64::MAX: a representable mean stays finite, a variance too
    // large to represent is +∞.
    let big = WeightedVariance::<f64>::try_from_iter([(f64::MAX, 1.0), (-f64::MAX, 1.0)]).unwrap();
    assert_eq!(big.mean(), Some(0.0));
    assert_eq!(big.population_variance(), Some(f64::INFINITY));
    // Subnormal weights and values are ordinary numbers.
    let tiny = f64::from_bits(1);
    let s = WeightedVariance::<f64>::try_from_iter([(tiny, tiny), (0.0, tiny)]).unwrap();
    assert!(s.population_variance().unwrap() >= 0.0);
    // Weights whose squares overflow are ordinary weights (only their
    // sum must stay finite), and the variances stay exact: values 1 and 2
    // with weights 1e300 each, μ = 1.5, every variance 1/4 of Σw = 2e300
    // over its divisor: 1/4, and 1/2 for reliability weights (divisor
    // 2·1e300·1e300/2e300 = 1e300).
    let huge = WeightedVariance::<f64>::try_from_iter([(1.0, 1e300), (2.0, 1e300)]).unwrap();
    assert_eq!(huge.mean(), Some(1.5));
    assert_eq!(huge.population_variance(), Some(0.25));
    assert_eq!(huge.reliability_variance(), Some(0.5));
    let sliced = WeightedVariance::<f64>::from_slices(&[1.0, 2.0], &[1e300, 1e300]).unwrap();
    assert_eq!(sliced.reliability_variance(), Some(0.5));
    // Merges whose total weight overflows: +∞ total, NaN variances.
    let mut half = WeightedVariance::<f64>::try_from_iter([(1.0, 1e308), (3.0, 1e307)]).unwrap();
    half.merge(&half.clone());
    assert_eq!(half.total_weight(), f64::INFINITY);
    assert!(half.reliability_variance().unwrap().is_nan());
    let mut a = WeightedMean::<f64>::try_from_iter([(1.0, 1e308)]).unwrap();
    a.merge(&WeightedMean::try_from_iter([(3.0, 1e308)]).unwrap());
    assert_eq!(a.total_weight(), f64::INFINITY);
    assert_eq!(a.mean(), Some(2.0));
}

#[test]
fn a_weight_that_dwarfs_the_rest_keeps_mean_and_variance_in_either_order() {
    // Two values, a = 1e150 with a light weight and b = 3 with a weight
    // 10^k times heavier (10^−⌊k/2⌋ and 10^⌈k/2⌉), as pushes in both
    // orders, slices and a merge. Exact: the mean a·u + b·v and the
    // variance (a − b)²·u·v with u and v the two weights' shares, formed
    // here from positive terms only (a few ulps). Pushed light first, the
    // mean kept the light value's rounding (1e134 for k = 250) and M2 went
    // negative; stepped from the light value's shift, it kept the shift's
    // (10⁻⁶ of the mean for k = 10).
    let (a, b) = (1e150_f64, 3.0_f64);
    for k in [0, 1, 10, 17, 50, 100, 200, 250, 300] {
        let (light, heavy) = (10f64.powi(-(k / 2)), 10f64.powi(k - k / 2));
        let (u, v) = (light / (light + heavy), heavy / (light + heavy));
        let mean = a * u + b * v;
        let variance = ((a - b) * u) * ((a - b) * v);
        let pairs = [(a, light), (b, heavy)];
        let light_first = WeightedVariance::<f64>::try_from_iter(pairs).unwrap();
        let heavy_first = WeightedVariance::<f64>::try_from_iter([pairs[1], pairs[0]]).unwrap();
        let slices = WeightedVariance::<f64>::from_slices(&[a, b], &[light, heavy]).unwrap();
        let mut merged = WeightedVariance::<f64>::try_from_iter([pairs[0]]).unwrap();
        merged.merge(&WeightedVariance::try_from_iter([pairs[1]]).unwrap());
        for (route, s) in [
            ("light first", light_first),
            ("heavy first", heavy_first),
            ("slices", slices),
            ("merge", merged),
        ] {
            let (m, var) = (s.mean().unwrap(), s.population_variance().unwrap());
            assert!(
                rel(m, mean) <= 1e-14,
                "10^{k}, {route}: mean {m}, exact {mean}"
            );
            assert!(
                rel(var, variance) <= 1e-14,
                "10^{k}, {route}: {var}, exact {variance}"
            );
            assert!(s.to_parts().m2 >= 0.0, "10^{k}, {route}");
        }
    }
}

#[test]
fn one_dominant_weight_keeps_the_reliability_divisor() {
    // Weights [1e10, 0.3, 0.7, 0.2]: the divisor Σw − Σw²/Σw is about 2.4,
    // but Σw² ≈ 1e20 keeps none of the light weights' squares, and taken
    // from it the divisor was up to 9.5e-7 off (and 0, so `None`, with 1e30 for
    // the heavy weight). Every order of pushes, the slices and every
    // split into two merged halves. Exact: Python fractions on the same
    // binary values, rounded once (the reliability variance and the
    // divisor).
    let ws = [1e10, 0.3, 0.7, 0.2];
    // (name, values, weights, reliability variance, divisor)
    let cases = [
        (
            "small",
            [3.0, 1.0, 2.0, 5.0],
            ws,
            1.125_000_000_062_812_4,
            2.399_999_999_794,
        ),
        (
            "far",
            [1e6 + 3.0, 1e6 + 1.0, 1e6 + 2.0, 1e6 + 5.0],
            ws,
            1.125_000_000_062_812_4,
            2.399_999_999_794,
        ),
        (
            "negative",
            [-1e9 - 0.5, -1e9 + 0.25, -1e9 - 1.0, -1e9 + 2.0],
            ws,
            0.664_062_500_051_139_3,
            2.399_999_999_794,
        ),
        (
            "1e30",
            [3.0, 1.0, 2.0, 5.0],
            [1e30, 0.3, 0.7, 0.2],
            1.125,
            2.4,
        ),
    ];
    let orders = permutations4();
    for (name, xs, ws, exact, exact_divisor) in cases {
        let mut worst = (0.0_f64, 0.0_f64);
        for order in &orders {
            let pairs: Vec<(f64, f64)> = order.iter().map(|&i| (xs[i], ws[i])).collect();
            let (ox, ow): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
            let mut routes = vec![
                WeightedVariance::<f64>::try_from_iter(pairs.iter().copied()).unwrap(),
                WeightedVariance::<f64>::from_slices(&ox, &ow).unwrap(),
            ];
            for cut in 1..4 {
                let mut left =
                    WeightedVariance::try_from_iter(pairs[..cut].iter().copied()).unwrap();
                left.merge(&WeightedVariance::try_from_iter(pairs[cut..].iter().copied()).unwrap());
                routes.push(left);
            }
            for v in &routes {
                let got = v.reliability_variance();
                let e = got.map_or(f64::INFINITY, |g| rel(g, exact));
                let d = rel(v.to_parts().reliability_divisor, exact_divisor);
                worst = (worst.0.max(e), worst.1.max(d));
                assert!(
                    e <= 4e-15,
                    "{name} {order:?}: {got:?}, exact {exact} ({e:.1e})"
                );
                assert!(d <= 4e-15, "{name} {order:?}: divisor off by {d:.1e}");
            }
        }
        eprintln!(
            "{name}: worst relative error {:.1e}, divisor {:.1e}",
            worst.0, worst.1
        );
    }
}

/// The 24 orders of four indices.
fn permutations4() -> Vec<[usize; 4]> {
    let mut out = Vec::new();
    for a in 0..4 {
        for b in (0..4).filter(|&b| b != a) {
            for c in (0..4).filter(|&c| c != a && c != b) {
                out.push([a, b, c, 6 - a - b - c]);
            }
        }
    }
    out
}

#[test]
fn a_dominant_weight_inside_a_kernel_block_keeps_the_reliability_divisor() {
    // 70 000 values (two blocks) x = 1e6 + (i mod 17)/8 with weights
    // ((i mod 5) + 1)/4, but 3e15 at index 777. Exact (Python fractions):
    // reliability variance 0.312 522 024 124 700 7, divisor
    // 104 998.499 999 081 26. Taken from Σw² ≈ 9e30, which keeps none of
    // the light weights' squares, the divisor was 20 % off.
    const EXACT: f64 = 0.312_522_024_124_700_7;
    const DIVISOR: f64 = 104_998.499_999_081_26;
    let n = 70_000;
    let xs: Vec<f64> = (0..n).map(|i| 1e6 + (i % 17) as f64 / 8.0).collect();
    let mut ws: Vec<f64> = (0..n).map(|i| ((i % 5) + 1) as f64 / 4.0).collect();
    ws[777] = 3e15;
    let pushed =
        WeightedVariance::<f64>::try_from_iter(xs.iter().copied().zip(ws.iter().copied())).unwrap();
    let sliced = WeightedVariance::<f64>::from_slices(&xs, &ws).unwrap();
    let par = WeightedVariance::<f64>::par_from_slices(&xs, &ws).unwrap();
    let narrow = WeightedVariance::<f32>::from_slices(&xs, &ws).unwrap();
    for (route, v, tol) in [
        ("push", &pushed, 1e-13),
        ("slices", &sliced, 1e-13),
        ("par", &par, 1e-13),
    ] {
        let e = rel(v.reliability_variance().unwrap(), EXACT);
        let d = rel(v.to_parts().reliability_divisor, DIVISOR);
        eprintln!("{route}: relative error {e:.1e}, divisor {d:.1e}");
        assert!(e <= tol && d <= tol, "{route}: {e:.1e}, divisor {d:.1e}");
    }
    // In f32 state (sums in f64, rounded once): within f32's rounding.
    let e = rel(
        f64::from(narrow.to_parts().reliability_divisor as f32),
        DIVISOR,
    );
    assert!(e <= 1e-7, "f32: divisor {e:.1e}");
}

#[test]
fn parts_and_serde_round_trip_bit_for_bit() {
    let (xs, ws) = data();
    let mut live = WeightedVariance::<f64>::from_slices(&xs[..3000], &ws[..3000]).unwrap();
    let mut restored = WeightedVariance::from_parts(live.to_parts()).unwrap();
    let mut live_mean = WeightedMean::<f32>::new();
    for (&x, &w) in xs[..3000].iter().zip(&ws) {
        live_mean.push(x as f32 - 1e9, w as f32).unwrap();
    }
    let mut restored_mean = WeightedMean::from_parts(live_mean.to_parts()).unwrap();
    for (&x, &w) in xs[3000..].iter().zip(&ws[3000..]) {
        live.push(x, w).unwrap();
        restored.push(x, w).unwrap();
        live_mean.push(x as f32 - 1e9, w as f32).unwrap();
        restored_mean.push(x as f32 - 1e9, w as f32).unwrap();
    }
    assert_eq!(restored.to_parts(), live.to_parts());
    assert_eq!(restored_mean.to_parts(), live_mean.to_parts());
    // The poisoned empty state round-trips too.
    let p = WeightedVariance::<f64>::try_from_iter([(f64::NAN, 0.0)])
        .unwrap()
        .to_parts();
    let mut back = WeightedVariance::<f64>::from_parts(p).unwrap();
    back.push(1.0, 1.0).unwrap();
    assert!(back.mean().unwrap().is_nan());
}

#[test]
fn corrupt_parts_are_rejected_with_a_reason() {
    let good = WeightedVariance::<f64>::from_slices(&[1.0, 2.0], &[1.0, 3.0])
        .unwrap()
        .to_parts();
    let cases = [
        (
            WeightedVarianceParts { m2: -1.0, ..good },
            "m2 must be non-negative",
        ),
        (WeightedVarianceParts { count: 0, ..good }, "count"),
        (
            WeightedVarianceParts {
                reliability_divisor: 4.5,
                ..good
            },
            "must not exceed",
        ),
        (
            WeightedVarianceParts {
                reliability_divisor: -0.5,
                ..good
            },
            "non-negative",
        ),
        (
            WeightedVarianceParts {
                count: 1,
                m2: 0.0,
                reliability_divisor: 0.5,
                ..good
            },
            "0 for one weight",
        ),
        (
            WeightedVarianceParts {
                total_weight: -4.0,
                ..good
            },
            "non-negative",
        ),
    ];
    for (parts, why) in cases {
        let e = WeightedVariance::<f64>::from_parts(parts)
            .unwrap_err()
            .to_string();
        assert!(e.contains(why), "{parts:?}: {e}");
    }
}

/// The serde forms are stable: this JSON is what this version writes.
#[cfg(feature = "serde")]
#[test]
fn serde_forms_are_the_committed_fixtures() {
    const VARIANCE: &str = r#"{"count":3,"total_weight":"4.0","reliability_divisor":"2.5","shift":"5.5","offset":"0.0","m2":"27.0"}"#;
    const MEAN: &str = r#"{"count":3,"total_weight":"4.0","shift":"5.5","offset":"0.0"}"#;
    // The earlier form, floats as numbers, still restores.
    const LEGACY_MEAN: &str = r#"{"count":3,"total_weight":4.0,"shift":5.5,"offset":0.0}"#;
    let v = WeightedVariance::<f64>::from_slices(&[2.0, 4.0, 8.0], &[1.0, 1.0, 2.0]).unwrap();
    let mut pushed = WeightedVariance::<f64>::new();
    pushed
        .try_extend([(2.0, 1.0), (4.0, 1.0), (8.0, 2.0)])
        .unwrap();
    assert_eq!(serde_json::to_string(&pushed).unwrap(), VARIANCE);
    assert_eq!(v.mean(), Some(5.5));
    let back: WeightedVariance<f64> = serde_json::from_str(VARIANCE).unwrap();
    assert_eq!(back, pushed);
    let m = WeightedMean::<f64>::try_from_iter([(2.0, 1.0), (4.0, 1.0), (8.0, 2.0)]).unwrap();
    assert_eq!(serde_json::to_string(&m).unwrap(), MEAN);
    let back: WeightedMean<f64> = serde_json::from_str(MEAN).unwrap();
    assert_eq!(back, m);
    let back: WeightedMean<f64> = serde_json::from_str(LEGACY_MEAN).unwrap();
    assert_eq!(back, m);
    assert!(serde_json::from_str::<WeightedMean<f64>>(&MEAN.replace("4.0", "-4.0")).is_err());
}

#[derive(Clone, Debug)]
struct Weighted(Vec<(f64, f64)>);

impl Arbitrary for Weighted {
    fn arbitrary(g: &mut Gen) -> Self {
        let offset = *g.choose(&[0.0, 1.0, -250.5, 1e6, 1e9]).unwrap_or(&0.0);
        // Half the time, one weight far above the rest (where the
        // reliability divisor, formed from Σw², lost its digits).
        let heavy = *g.choose(&[1.0, 1.0, 1e6, 3e15]).unwrap_or(&1.0);
        let raw: Vec<(i16, u8)> = Arbitrary::arbitrary(g);
        let at = usize::from(u8::arbitrary(g)) % raw.len().max(1);
        Weighted(
            raw.into_iter()
                .enumerate()
                .map(|(i, (k, w))| {
                    let w = f64::from(w % 8) / 4.0;
                    (
                        offset + f64::from(k) / 64.0,
                        if i == at { w * heavy } else { w },
                    )
                })
                .collect(),
        )
    }
    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        Box::new(self.0.shrink().map(|v| {
            Weighted(
                v.into_iter()
                    .map(|(x, w): (f64, f64)| (x, w.abs().min(1e6)))
                    .filter(|p| p.1.is_finite())
                    .collect(),
            )
        }))
    }
}

fn same(a: &WeightedVariance<f64>, b: &WeightedVariance<f64>, p: &[(f64, f64)]) -> bool {
    let close = |p: Option<f64>, q: Option<f64>, scale: f64| match (p, q) {
        (None, None) => true,
        (Some(p), Some(q)) => p == q || (p - q).abs() <= 1e-9 * scale,
        _ => false,
    };
    let mag = p.iter().map(|v| v.0.abs()).fold(0.0, f64::max);
    let lo = p.iter().map(|v| v.0).fold(f64::INFINITY, f64::min);
    let hi = p.iter().map(|v| v.0).fold(f64::NEG_INFINITY, f64::max);
    let s2 = (hi - lo) * (hi - lo);
    a.count() == b.count()
        && close(
            Some(a.total_weight()),
            Some(b.total_weight()),
            a.total_weight(),
        )
        && close(a.mean(), b.mean(), mag)
        && close(a.population_variance(), b.population_variance(), s2)
        && close(a.reliability_variance(), b.reliability_variance(), s2 * 1e3)
        && divisors_agree(a, b)
}

/// The reliability divisors agree to 1e-12: sums of positive terms, in any
/// order and with any weight far above the rest.
fn divisors_agree(a: &WeightedVariance<f64>, b: &WeightedVariance<f64>) -> bool {
    let (p, q) = (
        a.to_parts().reliability_divisor,
        b.to_parts().reliability_divisor,
    );
    p == q || (p - q).abs() <= 1e-12 * q
}

fn pushed(p: &[(f64, f64)]) -> WeightedVariance<f64> {
    WeightedVariance::try_from_iter(p.iter().copied()).unwrap()
}

fn quick<T: quickcheck::Testable>(law: T) {
    // 10 000 cases with `MOMENTA_LONG_TESTS` (CI), 1000 by default.
    let cases = crate::support::long::size(10_000, 1000);
    QuickCheck::new()
        .tests(cases)
        .max_tests(cases * 10)
        .quickcheck(law);
}

#[test]
fn merge_equals_sequential_push() {
    fn law(a: Weighted, b: Weighted) -> bool {
        let all: Vec<_> = a.0.iter().chain(&b.0).copied().collect();
        let mut m = pushed(&a.0);
        m.merge(&pushed(&b.0));
        let mut wm = WeightedMean::try_from_iter(a.0.iter().copied()).unwrap();
        wm.merge(&WeightedMean::try_from_iter(b.0.iter().copied()).unwrap());
        let mag = all.iter().map(|v| v.0.abs()).fold(0.0, f64::max);
        let whole = pushed(&all);
        same(&m, &whole, &all)
            && match (wm.mean(), whole.mean()) {
                (None, None) => true,
                (Some(p), Some(q)) => (p - q).abs() <= 1e-9 * mag,
                _ => false,
            }
    }
    quick(law as fn(Weighted, Weighted) -> bool);
}

#[test]
fn merge_is_associative_and_empty_is_its_identity() {
    fn law(a: Weighted, b: Weighted, c: Weighted) -> bool {
        let all: Vec<_> = a.0.iter().chain(&b.0).chain(&c.0).copied().collect();
        let (va, vb, vc) = (pushed(&a.0), pushed(&b.0), pushed(&c.0));
        let mut left = va.clone();
        left.merge(&vb);
        left.merge(&vc);
        let mut bc = vb;
        bc.merge(&vc);
        let mut right = va.clone();
        right.merge(&bc);
        let mut id = WeightedVariance::new();
        id.merge(&va);
        same(&left, &right, &all) && id == va
    }
    quick(law as fn(Weighted, Weighted, Weighted) -> bool);
}

#[test]
fn from_slices_equals_pushing_and_parts_round_trip() {
    fn law(a: Weighted) -> bool {
        let (xs, ws): (Vec<f64>, Vec<f64>) = a.0.iter().copied().unzip();
        let p = pushed(&a.0);
        same(&WeightedVariance::from_slices(&xs, &ws).unwrap(), &p, &a.0)
            && WeightedVariance::from_parts(p.to_parts()) == Ok(p)
    }
    quick(law as fn(Weighted) -> bool);
}
