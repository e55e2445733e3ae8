//! `MovingStats` against exact rational arithmetic: the mean correctly
//! rounded, the variances within the documented `ε` (relative), the
//! minimum and maximum bit-equal to `MovingMinMax`, on hostile data, and
//! the same bits whatever went through the window before.

use momenta::{MovingAverage, MovingMinMax, MovingStats, MovingVariance, NanPolicy};
use quickcheck::{QuickCheck, TestResult};

use crate::support::{Dd, SplitMix, big_offset_data, ulps_from_mean};

// Exact window statistics [mean, population variance, sample variance]
// after each push, each the exact rational rounded once to f64 (NaN:
// undefined), computed by Python 3.11's `fractions.Fraction`:
//
//     def stats(win):
//         fs = [Fraction(x) for x in win]; n = len(fs)
//         mean = sum(fs) / n; m2 = sum((f - mean) ** 2 for f in fs)
//         return mean, m2 / n, m2 / (n - 1) if n > 1 else None
//     [float(v) for v in stats(xs[max(0, i + 1 - w): i + 1])]

/// OUTLIER: window 3.
const OUTLIER_XS: [f64; 8] = [
    1000000000.25,
    1000000000.5,
    1000000000000000.0,
    1000000000.75,
    1000000000.125,
    1000000000.375,
    1000000000.0625,
    1000000000.0,
];
const OUTLIER: [[f64; 3]; 8] = [
    [1000000000.25, 0.0, f64::NAN],
    [1000000000.375, 0.015625, 0.03125],
    [
        333334000000000.25,
        2.2222177777799985e+29,
        3.3333266666699974e+29,
    ],
    [
        333334000000000.44,
        2.222217777779997e+29,
        3.333326666669996e+29,
    ],
    [
        333334000000000.3,
        2.222217777779998e+29,
        3.3333266666699974e+29,
    ],
    [1000000000.4166666, 0.06597222222222222, 0.09895833333333333],
    [1000000000.1875, 0.018229166666666668, 0.02734375],
    [
        1000000000.1458334,
        0.026909722222222224,
        0.040364583333333336,
    ],
];
/// LEVEL: window 3.
const LEVEL_XS: [f64; 9] = [
    0.001,
    0.0025,
    0.0015,
    0.0007,
    1000000.5,
    1000000.25,
    999999.25,
    1000000.125,
    1000000.0,
];
const LEVEL: [[f64; 3]; 9] = [
    [0.001, 0.0, f64::NAN],
    [0.00175, 5.625e-07, 1.125e-06],
    [
        0.0016666666666666668,
        3.888888888888889e-07,
        5.833333333333334e-07,
    ],
    [
        0.0015666666666666667,
        5.422222222222223e-07,
        8.133333333333334e-07,
    ],
    [333333.50073333335, 222222443955.61087, 333333665933.4163],
    [666666.9169, 222222388577.81934, 333333582866.729],
    [1000000.0, 0.2916666666666667, 0.4375],
    [999999.875, 0.19791666666666666, 0.296875],
    [999999.7916666666, 0.14930555555555555, 0.22395833333333334],
];
/// SIGNS: window 4.
const SIGNS_XS: [f64; 7] = [
    -999999999999.5,
    1000000000000.25,
    -1000000000000.75,
    1000000000001.5,
    -999999999999.875,
    1000000000000.0,
    -1000000000000.0,
];
const SIGNS: [[f64; 3]; 7] = [
    [-999999999999.5, 0.0, f64::NAN],
    [0.375, 9.9999999999975e+23, 1.9999999999995e+24],
    [
        -333333333333.3333,
        8.888888888892223e+23,
        1.3333333333338334e+24,
    ],
    [0.375, 1.000000000001e+24, 1.3333333333346666e+24],
    [0.28125, 1.0000000000011875e+24, 1.3333333333349165e+24],
    [0.21875, 1.0000000000010625e+24, 1.33333333333475e+24],
    [0.40625, 1.0000000000006874e+24, 1.33333333333425e+24],
];
/// MIXED: window 3.
const MIXED_XS: [f64; 14] = [
    1.0, 2.0, 1e+30, 1e-30, 3.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9,
];
const MIXED: [[f64; 3]; 14] = [
    [1.0, 0.0, f64::NAN],
    [1.5, 0.25, 0.5],
    [
        3.333333333333333e+29,
        2.2222222222222223e+59,
        3.3333333333333335e+59,
    ],
    [
        3.333333333333333e+29,
        2.2222222222222223e+59,
        3.3333333333333335e+59,
    ],
    [
        3.333333333333333e+29,
        2.2222222222222223e+59,
        3.3333333333333335e+59,
    ],
    [1.0333333333333334, 1.9355555555555555, 2.9033333333333333],
    [1.1, 1.8066666666666666, 2.71],
    [0.2, 0.006666666666666665, 0.009999999999999998],
    [0.3, 0.006666666666666667, 0.010000000000000002],
    [0.4, 0.006666666666666667, 0.010000000000000002],
    [0.5, 0.006666666666666664, 0.009999999999999995],
    [0.6, 0.006666666666666664, 0.009999999999999995],
    [0.7, 0.006666666666666671, 0.010000000000000007],
    [0.8, 0.006666666666666671, 0.010000000000000007],
];
/// SUBNORMAL: window 3.
const SUBNORMAL_XS: [f64; 5] = [5e-324, 1e-310, 2.5e-320, 2.2250738585072014e-308, 4e-323];
const SUBNORMAL: [[f64; 3]; 5] = [
    [5e-324, 0.0, f64::NAN],
    [5e-311, 0.0, 0.0],
    [3.3333333341666e-311, 0.0, 0.0],
    [7.450246195032336e-309, 0.0, 0.0],
    [7.41691286169902e-309, 0.0, 0.0],
];
/// HUGE: window 2.
const HUGE_XS: [f64; 6] = [
    1.7976931348623157e+308,
    1.7976931348623157e+308,
    8.988465674311579e+307,
    -1.7976931348623157e+308,
    1e+308,
    1e+308,
];
const HUGE: [[f64; 3]; 6] = [
    [1.7976931348623157e+308, 0.0, f64::NAN],
    [1.7976931348623157e+308, 0.0, 0.0],
    [1.3482698511467367e+308, f64::INFINITY, f64::INFINITY],
    [-4.4942328371557893e+307, f64::INFINITY, f64::INFINITY],
    [-3.9884656743115785e+307, f64::INFINITY, f64::INFINITY],
    [1e+308, 0.0, 0.0],
];

/// `got` within `1.5·ε` of `want` (relative): the documented `ε` of the
/// exact value, plus the half ulp of rounding `want` itself.
fn close(got: f64, want: f64) -> bool {
    if want.is_nan() {
        return got.is_nan();
    }
    got == want || (got - want).abs() <= 1.5 * f64::EPSILON * want.abs()
}

/// Pushes `xs` through a window of `w` and checks every push against the
/// recorded statistics: on the exact sums the mean bit for bit and the
/// variances within the bound; off them (values spanning too many
/// binades), within `tolerance` (relative).
fn check(name: &str, xs: &[f64], w: usize, want: &[[f64; 3]], tolerance: f64) -> Vec<bool> {
    let mut s = MovingStats::new(w).unwrap();
    let mut exact = Vec::new();
    for (i, (&x, row)) in xs.iter().zip(want).enumerate() {
        s.push(x);
        let got = [
            s.mean().unwrap(),
            s.population_variance().unwrap(),
            s.sample_variance().unwrap_or(f64::NAN),
        ];
        let on = s.is_exact();
        exact.push(on);
        for (k, (&g, &r)) in got.iter().zip(row).enumerate() {
            let ok = if on {
                if k == 0 {
                    g.to_bits() == r.to_bits()
                } else {
                    close(g, r)
                }
            } else {
                close(g, r) || (g - r).abs() <= tolerance * r.abs()
            };
            assert!(
                ok,
                "{name}, push {i}, stat {k}: {g:e} vs {r:e} (exact sums: {on})"
            );
        }
        let last = &xs[(i + 1).saturating_sub(w)..=i];
        let min = last.iter().copied().fold(f64::INFINITY, f64::min);
        let max = last.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(
            (s.min(), s.max()),
            (Some(min), Some(max)),
            "{name}, push {i}"
        );
    }
    exact
}

#[test]
fn an_outlier_entering_and_leaving_costs_no_digit() {
    let exact = check("outlier", &OUTLIER_XS, 3, &OUTLIER, 0.0);
    assert!(
        exact.iter().all(|&e| e),
        "1e15 beside 1e9 + U fits the integers"
    );
}

#[test]
fn a_level_change_is_exact_on_both_sides() {
    let exact = check("level", &LEVEL_XS, 3, &LEVEL, 0.0);
    assert!(exact.iter().all(|&e| e));
}

#[test]
fn values_of_both_signs_far_from_zero_keep_their_small_mean() {
    // The mean 0.375 of ±1e12: every digit of it survives the cancellation.
    let exact = check("signs", &SIGNS_XS, 4, &SIGNS, 0.0);
    assert!(exact.iter().all(|&e| e));
}

#[test]
fn subnormals_and_the_largest_floats_are_exact_too() {
    assert!(
        check("subnormal", &SUBNORMAL_XS, 3, &SUBNORMAL, 0.0)
            .iter()
            .all(|&e| e)
    );
    assert!(check("huge", &HUGE_XS, 2, &HUGE, 0.0).iter().all(|&e| e));
}

#[test]
fn mixed_binades_fall_back_and_return_to_the_integers() {
    let exact = check("mixed", &MIXED_XS, 3, &MIXED, 1e-13);
    // 1e30 beside 1 and 1e-30 beside 3 span more than the integers hold.
    assert_eq!(&exact[..2], [true, true]);
    assert_eq!(&exact[2..6], [false; 4]);
    // Back on them within a window of the last such value leaving.
    assert!(exact[9..].iter().all(|&e| e), "{exact:?}");
    // A subnormal beside an ordinary value: off, then back.
    let mut s = MovingStats::new(2).unwrap();
    s.extend_from_slice(&[1.0, 5e-324]);
    assert!(!s.is_exact());
    s.extend_from_slice(&[0.5, 0.25, 0.125, 0.0625]);
    assert!(s.is_exact());
    assert_eq!(s.mean(), Some(0.09375));
}

#[test]
fn every_push_on_a_billion_plus_uniform_data_is_exact() {
    // 1e9 + k·2^-20: the exact sums of the k over the window give the
    // exact mean and M2 in integers.
    let (xs, _) = big_offset_data(20_000, 11);
    let ks: Vec<u64> = xs
        .iter()
        .map(|x| ((x - 1e9) * 1_048_576.0) as u64)
        .collect();
    for w in [1, 7, 1000] {
        let mut s = MovingStats::new(w).unwrap();
        for i in 0..xs.len() {
            s.push(xs[i]);
            let last = &ks[(i + 1).saturating_sub(w)..=i];
            let n = last.len() as u128;
            let sum: u128 = last.iter().map(|&k| u128::from(k)).sum();
            let sum_sq: u128 = last.iter().map(|&k| u128::from(k) * u128::from(k)).sum();
            // Σx·2^20 = n·1e9·2^20 + Σk.
            let total = n as i128 * 1_000_000_000 * 1_048_576 + sum as i128;
            let ulps = ulps_from_mean(s.mean().unwrap(), total, n as u64, 20);
            assert!(ulps.abs() <= 0.5, "w {w}, push {i}: {ulps} ulps");
            // M2·n = nΣk² − (Σk)², in units of 2^-40: the population
            // variance is that over n²·2^40, in double-double.
            let num = n * sum_sq - sum * sum;
            let dd = |v: u128| {
                Dd::new((v >> 64) as f64 * 18_446_744_073_709_551_616.0)
                    .add(Dd::new(((v >> 32) & 0xffff_ffff) as f64 * 4_294_967_296.0))
                    .add(Dd::new((v & 0xffff_ffff) as f64))
            };
            let want = dd(num).div(dd(n * n)).scale(2f64.powi(-40)).to_f64();
            let got = s.population_variance().unwrap();
            assert!(close(got, want), "w {w}, push {i}: {got:e} vs {want:e}");
            assert!(s.is_exact());
        }
    }
}

#[test]
fn non_finite_values_count_per_nan_policy_and_leave_no_trace() {
    let xs = [1.0, f64::NAN, 3.0, f64::INFINITY, 5.0, 6.0, 7.5];
    let mut p = MovingStats::new(3).unwrap();
    let mut k = MovingStats::new(3)
        .unwrap()
        .with_nan_policy(NanPolicy::Skip);
    let mut seen = Vec::new();
    for &x in &xs {
        p.push(x);
        k.push(x);
        seen.push((
            p.mean(),
            p.sample_variance(),
            p.min(),
            p.max(),
            k.mean(),
            k.max(),
        ));
    }
    let nan = |o: Option<f64>| o.is_some_and(f64::is_nan);
    // [1, NaN, 3]: NaN everywhere under Propagate; [1, 3] under Skip.
    let (m, v, lo, hi, km, kh) = seen[2];
    assert!(nan(m) && nan(v) && nan(lo) && nan(hi));
    assert_eq!((km, kh), (Some(2.0), Some(3.0)));
    assert_eq!(k.iter().count(), 3);
    // [3, ∞, 5]: the mean is +∞, the variance NaN, the maximum +∞.
    let (m, v, lo, hi, _, _) = seen[4];
    assert_eq!(
        (m, lo, hi),
        (Some(f64::INFINITY), Some(3.0), Some(f64::INFINITY))
    );
    assert!(nan(v));
    // [5, 6, 7.5]: exact again.
    assert!(p.is_exact());
    assert_eq!(p.mean(), Some(6.166666666666667)); // float(Fraction(37, 6))
    assert_eq!(p.sample_variance(), Some(1.5833333333333333)); // 19/12
    assert_eq!((p.min(), p.max()), (Some(5.0), Some(7.5)));
    assert_eq!(k.sample_variance(), p.sample_variance());
    // [-∞, +∞]: the mean is NaN.
    p.extend_from_slice(&[f64::NEG_INFINITY, f64::INFINITY]);
    assert!(nan(p.mean()));
}

#[test]
fn a_window_of_one_is_its_value() {
    let mut s = MovingStats::new(1).unwrap();
    for x in [0.1, 1e300, -2.5e-320, -0.0, 1e6 + 0.3] {
        s.push(x);
        // The exact sum of −0.0 is 0: the mean is +0.0.
        let mean = if x == 0.0 { 0.0 } else { x };
        assert_eq!(s.mean().map(f64::to_bits), Some(mean.to_bits()));
        assert_eq!(s.population_variance(), Some(0.0));
        assert_eq!(s.sample_variance(), None);
        assert_eq!(
            (s.min().map(f64::to_bits), s.max().map(f64::to_bits)),
            (Some(x.to_bits()), Some(x.to_bits()))
        );
    }
}

#[test]
fn the_same_window_reads_the_same_bits_whatever_came_before() {
    let w = 50;
    let mut rng = SplitMix(5);
    let window: Vec<f64> = (0..w).map(|_| 1e6 + rng.unit()).collect();
    let histories: [Vec<f64>; 3] = [
        vec![],
        (0..997)
            .map(|i| 1e15 * f64::from(i % 7) - 3.7e9 * rng.unit())
            .collect(),
        // Through the compensated sums and back.
        vec![1e300, -1e-300, 7.0, 1e-200, -3e250],
    ];
    let mut reads = Vec::new();
    for h in &histories {
        let mut s = MovingStats::new(w).unwrap();
        s.extend_from_slice(h);
        for &x in window.iter().chain(&window).chain(&window) {
            s.push(x);
        }
        assert!(s.is_exact());
        let bits = |o: Option<f64>| o.map(f64::to_bits);
        reads.push([
            bits(s.mean()),
            bits(s.population_variance()),
            bits(s.sample_std_dev()),
            bits(s.min()),
            bits(s.max()),
        ]);
    }
    assert_eq!(reads[0], reads[1]);
    assert_eq!(reads[0], reads[2]);
}

#[test]
fn f32_values_widen_exactly() {
    let xs: [f32; 4] = [1e6 + 0.25, 1e6 + 0.5, 1e6 - 0.125, 1e6];
    let mut s = MovingStats::<f32>::new(3).unwrap();
    s.extend_from_slice(&xs);
    // [1e6 + 0.5, 1e6 − 0.125, 1e6]: mean 1e6 + 0.125, M2 = 0.21875.
    assert_eq!(s.mean(), Some(1e6 + 0.125));
    assert_eq!(s.sample_variance(), Some(0.109375));
    assert_eq!((s.min(), s.max()), (Some(1e6 - 0.125), Some(1e6 + 0.5)));
}

#[test]
fn quickcheck_moving_stats_agrees_with_the_single_statistic_windows() {
    // x = k·2^-s: the window's sums at 2^-40 are exact integers.
    fn value(k: i16, s: u8) -> f64 {
        f64::from(k) * 2f64.powi(-i32::from(s % 41))
    }
    fn prop(raw: Vec<(i16, u8, u8)>, window: u8, skip: bool) -> TestResult {
        let window = usize::from(window % 40) + 1;
        let policy = if skip {
            NanPolicy::Skip
        } else {
            NanPolicy::Propagate
        };
        let xs: Vec<f64> = raw
            .iter()
            .map(|&(k, s, kind)| match kind % 40 {
                0 => f64::NAN,
                1 => f64::INFINITY,
                2 => 4096.0 + f64::from(k),
                _ => value(k, s),
            })
            .collect();
        let mut st = MovingStats::new(window).unwrap().with_nan_policy(policy);
        let mut a = MovingAverage::new(window).unwrap().with_nan_policy(policy);
        let mut v = MovingVariance::new(window).unwrap().with_nan_policy(policy);
        let mut m = MovingMinMax::new(window).unwrap().with_nan_policy(policy);
        for (i, &x) in xs.iter().enumerate() {
            st.push(x);
            a.push(x);
            v.push(x);
            m.push(x);
            let bits = |o: Option<f64>| o.map(f64::to_bits);
            if bits(st.min()) != bits(m.min()) || bits(st.max()) != bits(m.max()) {
                return TestResult::error(format!("push {i}: min/max differ"));
            }
            let last = &xs[(i + 1).saturating_sub(window)..=i];
            let finite: Vec<f64> = last.iter().copied().filter(|x| !x.is_nan()).collect();
            let clean = last.iter().all(|x| x.is_finite());
            let (sm, am, vv, sv) = (
                st.mean(),
                a.mean(),
                v.sample_variance(),
                st.sample_variance(),
            );
            if !clean {
                // The rules for non-finite values are the other windows'.
                let same = |p: Option<f64>, q: Option<f64>| match (p, q) {
                    (Some(p), Some(q)) => p.is_nan() == q.is_nan() && (p.is_nan() || p == q),
                    (p, q) => p.is_none() == q.is_none(),
                };
                if finite.len() == last.len() || !skip || finite.iter().any(|x| x.is_infinite()) {
                    if !same(sm, am) || vv.is_some() != sv.is_some() {
                        return TestResult::error(format!("push {i}: non-finite rules differ"));
                    }
                    continue;
                }
            }
            // The exact mean and M2 of the finite values, at 2^-40.
            let ks: Vec<i128> = finite
                .iter()
                .map(|&x| (x * 2f64.powi(40)) as i128)
                .collect();
            let n = ks.len() as i128;
            if n == 0 {
                continue;
            }
            let sum: i128 = ks.iter().sum();
            let got = sm.unwrap();
            if got != 0.0 || sum != 0 {
                let ulps = ulps_from_mean(got, sum, n as u64, 40);
                if ulps.abs() > 0.5 {
                    return TestResult::error(format!("push {i}: mean {ulps} ulps off"));
                }
            }
            if (got - am.unwrap()).abs()
                > 1e-12 * finite.iter().fold(0.0, |m: f64, x| m.max(x.abs()))
            {
                return TestResult::error(format!("push {i}: MovingAverage differs"));
            }
            if n > 1 {
                let sq: i128 = ks.iter().map(|k| k * k).sum();
                let num = n * sq - sum * sum; // < 2^125: |k| < 2^56, n ≤ 40
                let dd = |v: i128| {
                    Dd::new((v >> 64) as f64 * 18_446_744_073_709_551_616.0)
                        .add(Dd::new(((v >> 32) & 0xffff_ffff) as f64 * 4_294_967_296.0))
                        .add(Dd::new((v & 0xffff_ffff) as f64))
                };
                let want = dd(num).div(dd(n * (n - 1))).scale(2f64.powi(-80)).to_f64();
                let got = sv.unwrap();
                if !close(got, want) {
                    return TestResult::error(format!("push {i}: variance {got:e} vs {want:e}"));
                }
                let other = vv.unwrap();
                let max = finite.iter().fold(0.0, |m: f64, x| m.max(x.abs()));
                if (other - want).abs() > 1e-9 * want + 1e-12 * max * max {
                    return TestResult::error(format!(
                        "push {i}: MovingVariance {other:e} vs {want:e}"
                    ));
                }
            }
        }
        TestResult::passed()
    }
    QuickCheck::new()
        .tests(500)
        .quickcheck(prop as fn(Vec<(i16, u8, u8)>, u8, bool) -> TestResult);
}

#[test]
fn extend_from_slice_leaves_the_push_loops_state() {
    let mut rng = SplitMix(9);
    let xs: Vec<f64> = (0..3000)
        .map(|i| match i % 397 {
            13 => f64::NAN,
            101 => 1e300,
            102 => -1e-300,
            250 => f64::NEG_INFINITY,
            _ => 1e9 + rng.unit(),
        })
        .collect();
    for w in [1, 2, 5, 64, 1000] {
        let mut pushed = MovingStats::new(w).unwrap();
        let mut extended = MovingStats::new(w).unwrap();
        for chunk in xs.chunks(37) {
            for &x in chunk {
                pushed.push(x);
            }
            extended.extend_from_slice(chunk);
            let bits = |s: &MovingStats<f64>| {
                [s.mean(), s.sample_variance(), s.min(), s.max()].map(|o| o.map(f64::to_bits))
            };
            assert_eq!(bits(&pushed), bits(&extended), "window {w}");
            assert_eq!(pushed.is_exact(), extended.is_exact());
        }
    }
}
