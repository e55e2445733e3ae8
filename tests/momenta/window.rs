//! Moving-window statistics against exact fractions and naive
//! recomputation over the last `window` values.

use crate::support::{SplitMix, compensated_sum};
use momenta::{Accumulator, ErrorKind, Mean, MovingAverage, MovingVariance};
use quickcheck::{QuickCheck, TestResult};

/// `num/den` rounded to f64 (both exact in f64 here, so the quotient is
/// correctly rounded).
fn frac(num: i64, den: i64) -> f64 {
    num as f64 / den as f64
}

/// `got` is within `ulps` units in the last place of `want`.
fn assert_ulps(got: f64, want: f64, ulps: f64, what: &str) {
    let tol = ulps * f64::EPSILON * want.abs();
    assert!(
        (got - want).abs() <= tol,
        "{what}: got {got:e}, want {want:e} (error {:e} > {tol:e})",
        (got - want).abs()
    );
}

#[test]
fn window_three_on_integers_matches_hand_computed_fractions() {
    // Window 3 over 3, 1, 4, 1, 5, 9, 2, 6. Each row: the window, its mean,
    // population variance and sample variance as fractions (worked by hand
    // from Σx and Σx²: pop = (nΣx² − (Σx)²)/n²).
    type Row = ((i64, i64), (i64, i64), Option<(i64, i64)>);
    let table: [(f64, Row); 8] = [
        (3.0, ((3, 1), (0, 1), None)),            // [3]
        (1.0, ((2, 1), (1, 1), Some((2, 1)))),    // [3, 1]
        (4.0, ((8, 3), (14, 9), Some((7, 3)))),   // [3, 1, 4]
        (1.0, ((2, 1), (2, 1), Some((3, 1)))),    // [1, 4, 1]
        (5.0, ((10, 3), (26, 9), Some((13, 3)))), // [4, 1, 5]
        (9.0, ((5, 1), (32, 3), Some((16, 1)))),  // [1, 5, 9]
        (2.0, ((16, 3), (74, 9), Some((37, 3)))), // [5, 9, 2]
        (6.0, ((17, 3), (74, 9), Some((37, 3)))), // [9, 2, 6]
    ];
    let mut a = MovingAverage::<f64>::new(3).unwrap();
    let mut v = MovingVariance::<f64>::new(3).unwrap();
    for (x, (mean, pop, sample)) in table {
        let m = a.push(x);
        v.push(x);
        assert_ulps(m, frac(mean.0, mean.1), 2.0, "moving average");
        assert_ulps(v.mean().unwrap(), frac(mean.0, mean.1), 2.0, "moving mean");
        assert_ulps(
            v.population_variance().unwrap(),
            frac(pop.0, pop.1),
            8.0,
            "population variance",
        );
        match sample {
            None => assert_eq!(v.sample_variance(), None),
            Some((n, d)) => assert_ulps(v.sample_variance().unwrap(), frac(n, d), 8.0, "sample"),
        }
    }
    assert!(a.iter().eq([9.0, 2.0, 6.0]));
    assert!(v.iter().eq([9.0, 2.0, 6.0]));
}

#[test]
fn window_zero_is_rejected_with_its_kind_and_message() {
    let e = MovingAverage::<f64>::new(0).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::InvalidWindow { window: 0 });
    assert_eq!(e.to_string(), "window must be at least 1, got 0");
    let e = MovingVariance::<f32>::new(0).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::InvalidWindow { window: 0 });
}

/// Exact statistics of `offset + k/2^20` over `ks`, from integer sums.
/// Returns (mean − offset, population variance), each rounded once or
/// twice from the exact rational.
fn exact_fixed_point(ks: &[i64]) -> (f64, f64) {
    let n = ks.len() as i128;
    let s: i128 = ks.iter().map(|&k| i128::from(k)).sum();
    let s2: i128 = ks.iter().map(|&k| i128::from(k) * i128::from(k)).sum();
    let scale = (1u64 << 20) as f64;
    let mean_off = s as f64 / (n as f64 * scale);
    let var = (n * s2 - s * s) as f64 / ((n * n) as f64 * scale * scale);
    (mean_off, var)
}

#[test]
fn matches_exact_recomputation_on_random_fixed_point_data() {
    for window in [1_usize, 2, 7, 1000] {
        for offset in [0.0, 1e6, -3.5e6] {
            let mut rng = SplitMix(window as u64 * 7919 + offset as u64);
            let mut a = MovingAverage::<f64>::new(window).unwrap();
            let mut v = MovingVariance::<f64>::new(window).unwrap();
            let mut ks: Vec<i64> = Vec::new();
            let pushes = 3 * window + 2000;
            let mut worst_mean = 0.0_f64;
            let mut worst_var = 0.0_f64;
            for i in 0..pushes {
                let k = rng.k20();
                let x = offset + k as f64 / (1u64 << 20) as f64;
                ks.push(k);
                let m = a.push(x);
                v.push(x);
                let last = &ks[ks.len().saturating_sub(window)..];
                let (mean_off, var) = exact_fixed_point(last);
                // Errors in units of the rounding of the mean's magnitude
                // (|x| ≤ |offset| + 1).
                let unit = f64::EPSILON * (offset.abs() + 1.0);
                worst_mean = worst_mean.max(((m - offset) - mean_off).abs() / unit);
                assert_eq!(v.mean(), Some(m), "both types share the mean");
                let got = v.population_variance().unwrap();
                if var > 0.0 {
                    worst_var = worst_var.max((got - var).abs() / var);
                } else {
                    assert_eq!(got, 0.0, "window {window} push {i}");
                }
                if last.len() >= 2 {
                    let n = last.len() as f64;
                    let sample = v.sample_variance().unwrap();
                    assert!((sample - var * n / (n - 1.0)).abs() <= 1e-12 * var * n / (n - 1.0));
                }
            }
            assert!(
                worst_mean <= 2.0,
                "window {window}, offset {offset}: mean off by {worst_mean} units"
            );
            assert!(
                worst_var <= 1e-12,
                "window {window}, offset {offset}: variance relative error {worst_var:e}"
            );
        }
    }
}

/// The naive two-pass statistics of a slice, the mean refined by one
/// correction pass (a plain sum of a thousand values is itself some ulps
/// off).
fn naive(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let rough = xs.iter().sum::<f64>() / n;
    let mean = rough + xs.iter().map(|x| x - rough).sum::<f64>() / n;
    let m2: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
    (mean, m2 / n)
}

#[test]
fn matches_naive_recomputation_on_random_floats_of_every_scale() {
    for window in [1_usize, 2, 7, 1000] {
        let mut rng = SplitMix(42 + window as u64);
        let mut a = MovingAverage::<f64>::new(window).unwrap();
        let mut v = MovingVariance::<f64>::new(window).unwrap();
        let mut xs = Vec::new();
        for i in 0..3 * window + 1000 {
            // Level shifts every 500 values, spread of varying scale.
            let level = 10f64.powi((i / 500) as i32 % 7) * 1e3;
            let x = level + (rng.unit() - 0.5) * 10f64.powf(rng.unit() * 4.0 - 2.0);
            xs.push(x);
            let m = a.push(x);
            v.push(x);
            let last = &xs[xs.len().saturating_sub(window)..];
            let (mean, var) = naive(last);
            let max = last.iter().fold(0.0_f64, |acc, x| acc.max(x.abs()));
            assert!(
                (m - mean).abs() <= 4.0 * f64::EPSILON * max,
                "window {window} push {i}: {m:e} vs {mean:e}, max {max:e}"
            );
            // Removing values leaves an error of a few ulps of the largest
            // M2 since the last refresh, at most 2·window pushes back.
            let recent = &xs[xs.len().saturating_sub(2 * window)..];
            let spread = recent
                .iter()
                .fold(0.0_f64, |acc, x| acc.max((x - mean).abs()));
            let got = v.population_variance().unwrap();
            assert!(got >= 0.0);
            // The naive two-pass result itself is only this good: its mean
            // carries an error of about ε·max.
            let tol = 1e-12 * spread * spread + 8.0 * f64::EPSILON * max * spread;
            assert!(
                (got - var).abs() <= tol,
                "window {window} push {i}: {got:e} vs {var:e}"
            );
        }
    }
}

#[test]
fn quickcheck_moving_average_is_the_mean_of_the_last_window_values() {
    fn prop(xs: Vec<f64>, window: u8) -> TestResult {
        let window = usize::from(window % 64) + 1;
        // Finite values whose window sums cannot overflow.
        let xs: Vec<f64> = xs
            .into_iter()
            .map(|x| {
                if x.is_finite() && x.abs() <= 1e300 {
                    x
                } else {
                    0.5
                }
            })
            .collect();
        let mut a = MovingAverage::new(window).unwrap();
        for (i, &x) in xs.iter().enumerate() {
            let got = a.push(x);
            let last = &xs[(i + 1).saturating_sub(window)..=i];
            let want = last.iter().sum::<f64>() / last.len() as f64;
            // The shift may be a value from up to 2·window pushes back.
            let recent = &xs[(i + 1).saturating_sub(2 * window)..=i];
            let max = recent.iter().fold(0.0_f64, |acc, x| acc.max(x.abs()));
            if (got - want).abs() > 1e-12 * max {
                return TestResult::error(format!(
                    "window {window}, push {i}: {got:e} vs {want:e}"
                ));
            }
        }
        TestResult::passed()
    }
    QuickCheck::new()
        .tests(300)
        .quickcheck(prop as fn(Vec<f64>, u8) -> TestResult);
}

#[test]
fn quickcheck_the_mean_is_within_ulps_of_the_values_in_the_window_whatever_passed_before() {
    // Values of every size, huge ones whose sums need more than two words
    // among them (1e300, 3e299 + 7e283·k): once they have left, the mean
    // must be as accurate as the values in the window allow, not as the
    // values that passed through before.
    fn value(kind: u8, k: i16) -> f64 {
        let k = f64::from(k);
        match kind % 6 {
            0 | 1 => k / 8.0,
            2 => k * 1e-3 + 1e6,
            3 => k * 1e10,
            4 => 1e300 + k * 1e284,
            _ => -(3e299 + k * 7e283),
        }
    }
    fn prop(raw: Vec<(u8, i16)>, window: u8) -> TestResult {
        let window = usize::from(window % 40) + 1;
        let xs: Vec<f64> = raw.iter().map(|&(kind, k)| value(kind, k)).collect();
        let mut a = MovingAverage::new(window).unwrap();
        let mut v = MovingVariance::new(window).unwrap();
        for (i, &x) in xs.iter().enumerate() {
            a.push(x);
            v.push(x);
            let last = &xs[(i + 1).saturating_sub(window)..=i];
            let want = compensated_sum(last.iter().copied()) / last.len() as f64;
            let max = last.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
            let got = a.mean().unwrap();
            if (got - want).abs() > 64.0 * f64::EPSILON * max {
                return TestResult::error(format!(
                    "window {window}, push {i}: {got:e} vs {want:e} (largest {max:e})"
                ));
            }
            if v.mean() != Some(got) {
                return TestResult::error(format!("push {i}: the two means differ"));
            }
        }
        TestResult::passed()
    }
    QuickCheck::new()
        .tests(500)
        .quickcheck(prop as fn(Vec<(u8, i16)>, u8) -> TestResult);
}

#[test]
fn quickcheck_fixed_point_windows_are_exact_to_an_ulp_or_two() {
    fn prop(ks: Vec<i32>, offset: i32, window: u8) -> TestResult {
        let window = usize::from(window % 32) + 1;
        let offset = f64::from(offset);
        let ks: Vec<i64> = ks.into_iter().map(|k| i64::from(k >> 8)).collect();
        let mut a = MovingAverage::new(window).unwrap();
        let mut v = MovingVariance::new(window).unwrap();
        for i in 0..ks.len() {
            let x = offset + ks[i] as f64 / (1u64 << 20) as f64;
            let got = a.push(x);
            v.push(x);
            let last = &ks[(i + 1).saturating_sub(window)..=i];
            let (mean_off, var) = exact_fixed_point(last);
            let max =
                offset.abs() + last.iter().map(|k| k.abs()).max().unwrap_or(0) as f64 / 1048576.0;
            if ((got - offset) - mean_off).abs() > 3.0 * f64::EPSILON * max {
                return TestResult::error(format!("mean: {got} vs {offset} + {mean_off}"));
            }
            let got_var = v.population_variance().unwrap();
            if (got_var - var).abs() > 1e-12 * var + 1e-300 {
                return TestResult::error(format!("variance: {got_var:e} vs {var:e}"));
            }
        }
        TestResult::passed()
    }
    QuickCheck::new()
        .tests(300)
        .quickcheck(prop as fn(Vec<i32>, i32, u8) -> TestResult);
}

#[test]
fn statistics_recover_once_a_nan_leaves_the_window() {
    let mut a = MovingAverage::<f64>::new(4).unwrap();
    let mut v = MovingVariance::<f64>::new(4).unwrap();
    let base = 1e6;
    let xs: Vec<f64> = (0..40).map(|i| base + f64::from(i % 5) / 4.0).collect();
    for &x in &xs[..10] {
        a.push(x);
        v.push(x);
    }
    a.push(f64::NAN);
    v.push(f64::NAN);
    assert!(a.mean().unwrap().is_nan());
    assert!(v.population_variance().unwrap().is_nan());
    assert!(v.sample_std_dev().unwrap().is_nan());
    // Three more pushes: the NaN is still in the window.
    for &x in &xs[10..13] {
        assert!(a.push(x).is_nan());
        v.push(x);
        assert!(v.mean().unwrap().is_nan());
        assert!(v.sample_variance().unwrap().is_nan());
    }
    // The fourth pushes it out: exact again at once, and for ever after.
    for (j, &x) in xs[13..].iter().enumerate() {
        let m = a.push(x);
        v.push(x);
        let last = &xs[10 + j..14 + j];
        let (mean, var) = naive(last);
        assert_ulps(m, mean, 1.0, "mean after NaN");
        assert_eq!(v.mean(), Some(m));
        assert!((v.population_variance().unwrap() - var).abs() <= 1e-9 * var);
    }
}

#[test]
fn infinities_give_the_infinite_mean_and_a_nan_variance_then_recover() {
    let mut a = MovingAverage::<f32>::new(3).unwrap();
    let mut v = MovingVariance::<f32>::new(3).unwrap();
    for x in [1.0, 2.0, f32::INFINITY] {
        a.push(x);
        v.push(x);
    }
    assert_eq!(a.mean(), Some(f32::INFINITY));
    assert_eq!(v.mean(), Some(f32::INFINITY));
    assert!(v.population_variance().unwrap().is_nan());
    a.push(f32::NEG_INFINITY);
    assert!(a.mean().unwrap().is_nan());
    a.push(f32::NEG_INFINITY);
    a.push(4.0);
    assert_eq!(a.mean(), Some(f32::NEG_INFINITY));
    for x in [5.0, 6.0] {
        a.push(x);
        v.push(x);
    }
    v.push(7.0);
    assert_eq!(a.mean(), Some(5.0));
    assert_eq!(v.mean(), Some(6.0));
    assert_eq!(v.population_variance(), Some(2.0 / 3.0));
}

#[test]
fn finite_values_whose_difference_overflows_stay_finite_and_recover() {
    // Sums that would overflow are scaled: the mean of [MAX, −MAX] is 0,
    // and the statistics are exact again once those values have left.
    let mut a = MovingAverage::<f64>::new(2).unwrap();
    let mut v = MovingVariance::<f64>::new(2).unwrap();
    for x in [f64::MAX, -f64::MAX, 1.0, 2.0, 3.0, 5.0] {
        assert!(a.push(x).is_finite());
        v.push(x);
        assert!(v.mean().unwrap().is_finite());
        assert!(!v.population_variance().unwrap().is_nan());
    }
    assert_eq!(a.mean(), Some(4.0));
    assert_eq!(v.mean(), Some(4.0));
    assert_eq!(v.sample_variance(), Some(2.0));
}

#[test]
fn window_of_usize_max_is_a_cumulative_average() {
    let mut a = MovingAverage::<f64>::new(usize::MAX).unwrap();
    let mut v = MovingVariance::<f64>::new(usize::MAX).unwrap();
    let mut m = Mean::new();
    assert_eq!(a.window(), usize::MAX);
    for i in 0..10_000 {
        let x = f64::from(i % 97) - 3.0;
        let got = a.push(x);
        v.push(x);
        m.push(x);
        assert!((got - m.mean().unwrap()).abs() <= 1e-12);
    }
    assert_eq!(a.len(), 10_000);
    assert!(!a.is_full());
    assert_eq!(v.len(), 10_000);
    // Mean of (i mod 97) − 3 over i < 10 000, exactly: 103 full cycles of
    // 0..97 (sum 4656 each) plus 0..9 (sum 36).
    let sum = 103 * 4656 + 36 - 3 * 10_000;
    assert_ulps(a.mean().unwrap(), frac(sum, 10_000), 2.0, "cumulative mean");
    a.reset();
    assert!(a.is_empty());
    assert_eq!(a.window(), usize::MAX);
}

#[test]
fn accumulator_trait_extend_and_bundles_agree_with_push() {
    let xs: Vec<f64> = (0..100).map(|i| f64::from(i * 37 % 101)).collect();
    let mut by_push = MovingVariance::new(10).unwrap();
    for &x in &xs {
        by_push.push(x);
    }
    let mut bundle = (
        MovingAverage::new(10).unwrap(),
        MovingVariance::new(10).unwrap(),
    );
    Accumulator::extend_from_slice(&mut bundle, &xs[..50]);
    bundle.extend_from_slice(&xs[50..]);
    assert_eq!(bundle.1, by_push);
    assert_eq!(bundle.0.mean(), by_push.mean());
    let mut by_extend = MovingVariance::new(10).unwrap();
    by_extend.extend(xs.iter().copied());
    assert_eq!(by_extend, by_push);
    assert_eq!(
        by_extend.population_variance(),
        by_push.population_variance()
    );
}

#[test]
fn serde_round_trip_keeps_the_window_and_continues_alike() {
    let mut rng = SplitMix(7);
    let mut a = MovingAverage::<f64>::new(7).unwrap();
    let mut v = MovingVariance::<f64>::new(7).unwrap();
    let xs: Vec<f64> = (0..40).map(|_| 1e6 + rng.unit()).collect();
    for &x in &xs[..20] {
        a.push(x);
        v.push(x);
    }
    let json = serde_json::to_string(&a).unwrap();
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let values: Vec<String> = xs[13..20].iter().map(|x| format!("{x:?}")).collect();
    assert_eq!(value["window"], 7);
    assert_eq!(value["values"], serde_json::json!(values));
    assert_eq!(value["nan_policy"], "Propagate");
    assert_eq!(value["min_periods"], 1);
    // 20 pushes into a window of 7: the head is 6 past its last wrap.
    assert_eq!(value["engine"]["head"], 6);
    assert_eq!(value["engine"]["sums"]["m2"], serde_json::Value::Null);
    let mut a2: MovingAverage<f64> = serde_json::from_str(&json).unwrap();
    let mut v2: MovingVariance<f64> =
        serde_json::from_str(&serde_json::to_string(&v).unwrap()).unwrap();
    assert_eq!(a2, a);
    assert_eq!(v2, v);
    for &x in &xs[20..] {
        assert_eq!(a2.push(x).to_bits(), a.push(x).to_bits(), "restored mean");
        v.push(x);
        v2.push(x);
        assert_eq!(
            v2.sample_variance().map(f64::to_bits),
            v.sample_variance().map(f64::to_bits),
            "restored variance"
        );
    }
    // Partly filled and empty windows round-trip too.
    let mut part = MovingVariance::<f32>::new(5).unwrap();
    part.extend_from_slice(&[1.0, 2.0]);
    let back: MovingVariance<f32> =
        serde_json::from_str(&serde_json::to_string(&part).unwrap()).unwrap();
    assert_eq!(back, part);
    assert_eq!(back.sample_variance(), Some(0.5));
    let empty: MovingAverage<f64> = serde_json::from_str(r#"{"window":3,"values":[]}"#).unwrap();
    assert_eq!(empty.mean(), None);
    assert_eq!(empty.window(), 3);
    // A state saved before the engine was carried (no engine, numbers)
    // takes its sums afresh from the values.
    let old: MovingVariance<f64> =
        serde_json::from_str(r#"{"window":3,"values":[1.0,2.0,3.0]}"#).unwrap();
    assert_eq!(old.mean(), Some(2.0));
    assert_eq!(old.population_variance(), Some(2.0 / 3.0));
}

#[test]
fn corrupt_json_is_rejected() {
    let bad = [
        (
            r#"{"window":0,"values":[]}"#,
            "window must be at least 1, got 0",
        ),
        (
            r#"{"window":2,"values":[1.0,2.0,3.0]}"#,
            "invalid state: window of 2 holds 3 values",
        ),
        (r#"{"window":-1,"values":[]}"#, "invalid value"),
        (r#"{"values":[1.0]}"#, "missing field `window`"),
        (r#"{"window":3}"#, "missing field `values`"),
        (
            r#"{"window":3,"values":["a"]}"#,
            r#"cannot read "a" as f64"#,
        ),
        (
            r#"{"window":3,"values":[null]}"#,
            "a null where a float belongs",
        ),
        (
            r#"{"window":3,"values":[],"sum":1.0}"#,
            "unknown field `sum`",
        ),
        (r#"[3,[1.0]"#, "EOF"),
    ];
    for (json, message) in bad {
        let e = serde_json::from_str::<MovingAverage<f64>>(json).unwrap_err();
        assert!(e.to_string().contains(message), "{json}: {e}");
        let e = serde_json::from_str::<MovingVariance<f64>>(json).unwrap_err();
        assert!(e.to_string().contains(message), "{json}: {e}");
    }
}

/// The engine a window carries must fit its values: a head past the
/// window, compensated sums or M2 that are not the values', a scale that
/// no window chooses. The window is on its compensated sums (`1e-300`
/// beside `1e6` spans more binades than the exact sums hold, and it stays
/// on them until its head next wraps), whose state is checked as a
/// `MovingVariance` saved before the move to the exact sums was.
#[test]
fn corrupt_engines_are_rejected() {
    let mut v = MovingVariance::<f64>::new(4).unwrap();
    v.extend_from_slice(&[1e-300, 1e6 + 0.25, 1e6, 1e6 + 1.0, 1e6 + 0.75]);
    let good: serde_json::Value = serde_json::to_value(&v).unwrap();
    assert!(good["engine"]["sums"]["m2"].is_object(), "{good}");
    let edit = |change: &dyn Fn(&mut serde_json::Value)| {
        let mut state = good.clone();
        change(&mut state);
        serde_json::from_value::<MovingVariance<f64>>(state)
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    type Edit<'a> = &'a dyn Fn(&mut serde_json::Value);
    let cases: [(Edit, &str); 6] = [
        (
            &|s| s["engine"]["head"] = 4.into(),
            "head 4 does not fit a window of 4",
        ),
        (
            &|s| s["values"][0] = "1000000.6".into(),
            "does not match the values",
        ),
        (
            &|s| s["engine"]["sums"]["hi"] = "3.0".into(),
            "does not match the values",
        ),
        (
            &|s| s["engine"]["sums"]["m2"]["value"] = "0.75".into(),
            "engine.sums.m2.value 0.75 does not match the values",
        ),
        (
            &|s| s["engine"]["sums"]["scale"] = "0.75".into(),
            "engine.sums.scale must be a power of two in (0, 1]",
        ),
        (
            &|s| s["engine"]["sums"]["lo_churn"] = "1e30".into(),
            "beyond the bound",
        ),
    ];
    for (change, message) in cases {
        let e = edit(change);
        assert!(e.contains(message), "{message}: {e}");
    }
    // The untouched state restores.
    assert_eq!(
        serde_json::from_value::<MovingVariance<f64>>(good.clone()).unwrap(),
        v
    );
    // The three windows share one engine and one serialized form: the
    // moving variance's state restores as a moving average, and the sums
    // without M2 (a moving average's, saved before the move to the exact
    // sums) restore as a moving variance, checked, then taken exactly
    // from the values: [1e6 + 0.25, 1e6, 1e6 + 1, 1e6 + 0.75] has mean
    // 1e6 + 0.5 and M2 0.625.
    let a: MovingAverage<f64> = serde_json::from_value(good.clone()).unwrap();
    assert_eq!(a.mean(), Some(1e6 + 0.5));
    let mut plain_sum = good;
    plain_sum["engine"]["sums"]["m2"] = serde_json::Value::Null;
    let back: MovingVariance<f64> = serde_json::from_value(plain_sum.clone()).unwrap();
    assert_eq!(back.population_variance(), Some(0.625 / 4.0));
    assert_eq!(back.sample_variance(), Some(0.625 / 3.0));
    plain_sum["engine"]["sums"]["hi"] = "3.0".into();
    let e = serde_json::from_value::<MovingVariance<f64>>(plain_sum).unwrap_err();
    assert!(e.to_string().contains("does not match the values"), "{e}");
}

#[test]
fn f32_windows_track_the_f64_truth() {
    let mut rng = SplitMix(99);
    let mut a = MovingAverage::<f32>::new(16).unwrap();
    let mut v = MovingVariance::<f32>::new(16).unwrap();
    let mut xs = Vec::new();
    for _ in 0..2000 {
        let x = 1000.0 + rng.unit() as f32;
        xs.push(f64::from(x));
        a.push(x);
        v.push(x);
        let (mean, var) = naive(&xs[xs.len().saturating_sub(16)..]);
        assert!(
            (f64::from(a.mean().unwrap()) - mean).abs() <= 2.0 * f64::from(f32::EPSILON) * mean
        );
        let got = f64::from(v.population_variance().unwrap());
        assert!((got - var).abs() <= 1e-3 * var + 1e-6, "{got} vs {var}");
    }
}

// ---------------------------------------------------------------------------
// Hostile orders against a naive two-pass over the window.
//
// Every value is `k / 2^20` for an integer `k` (exact in f64), so the exact
// statistics of the window come from integer sums: the mean from Σk, M2 from
// the exact deviations `n·k − Σk`. At each checked push the error of the
// moving statistics must be at most twice the error of a naive two-pass
// (plain sum for the mean, then Σ(x − mean)²) over the same window, plus a
// few rounding units: for the mean, units of the largest |x| in the window
// (the scale of any summation's rounding); for the variances, of the exact
// value.

const FIX: f64 = (1u64 << 20) as f64;

/// Exact mean, population and sample variance of the window `ks / 2^20`,
/// each within about two ulps.
fn exact_window(ks: &[i64]) -> (f64, f64, Option<f64>) {
    let n = ks.len() as i128;
    let s: i128 = ks.iter().map(|&k| i128::from(k)).sum();
    let mean = s as f64 / (n as f64 * FIX);
    // Σ (n·k − s)², each deviation exact in i128 and rounded once to f64,
    // summed with a compensated sum.
    let (mut hi, mut lo) = (0.0_f64, 0.0_f64);
    for &k in ks {
        let d = (n * i128::from(k) - s) as f64;
        let sq = d * d;
        let t = hi + sq;
        lo += if hi.abs() >= sq {
            (hi - t) + sq
        } else {
            (sq - t) + hi
        };
        hi = t;
    }
    let m2 = (hi + lo) / (n as f64 * n as f64 * FIX * FIX);
    let sample = (n >= 2).then(|| m2 / (n as f64 - 1.0));
    (mean, m2 / n as f64, sample)
}

/// The naive two-pass statistics of `xs`, in order.
fn two_pass(xs: &[f64]) -> (f64, f64, Option<f64>) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let m2: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
    (mean, m2 / n, (xs.len() >= 2).then(|| m2 / (n - 1.0)))
}

/// Largest error seen, as a multiple of the allowed error.
#[derive(Default, Debug)]
struct Worst {
    mean: f64,
    population: f64,
    sample: f64,
    /// Largest relative error of the moving mean and variance, for the
    /// report.
    mean_rel: f64,
    var_rel: f64,
}

/// Checks one statistic: `got` against `exact`, given the naive two-pass
/// value; `unit` is one rounding unit. Returns the error as a fraction of
/// the allowed error (≤ 1 passes).
fn ratio(got: f64, naive: f64, exact: f64, units: f64, unit: f64) -> f64 {
    let allowed = 2.0 * (naive - exact).abs() + units * unit;
    if allowed == 0.0 {
        if got == exact { 0.0 } else { f64::INFINITY }
    } else {
        (got - exact).abs() / allowed
    }
}

/// Pushes the fixed-point values `ks` through a `MovingAverage` and a
/// `MovingVariance` of `window`, checking every push for which `check(i)`
/// holds (and that the two types agree on the mean at every push).
fn run_against_two_pass(ks: &[i64], window: usize, check: impl Fn(usize) -> bool) -> Worst {
    let mut a = MovingAverage::<f64>::new(window).unwrap();
    let mut v = MovingVariance::<f64>::new(window).unwrap();
    let xs: Vec<f64> = ks.iter().map(|&k| k as f64 / FIX).collect();
    let mut worst = Worst::default();
    for (i, &x) in xs.iter().enumerate() {
        let m = a.push(x);
        v.push(x);
        if !check(i) {
            continue;
        }
        let lo = (i + 1).saturating_sub(window);
        let (w, wk) = (&xs[lo..=i], &ks[lo..=i]);
        let (mean, pop, sample) = exact_window(wk);
        let (n_mean, n_pop, n_sample) = two_pass(w);
        let max = w.iter().fold(0.0_f64, |acc, x| acc.max(x.abs()));
        let eps = f64::EPSILON;
        let r = ratio(m, n_mean, mean, 4.0, eps * max);
        assert!(
            r <= 1.0,
            "push {i}: moving average {m:e}, exact {mean:e}, naive {n_mean:e}"
        );
        let vm = v.mean().unwrap();
        let r = r.max(ratio(vm, n_mean, mean, 4.0, eps * max));
        assert!(
            r <= 1.0,
            "push {i}: moving variance's mean {vm:e}, exact {mean:e}, naive {n_mean:e}"
        );
        worst.mean = worst.mean.max(r);
        worst.mean_rel = worst.mean_rel.max((m - mean).abs() / mean.abs().max(eps));
        let got = v.population_variance().unwrap();
        let r = ratio(got, n_pop, pop, 128.0, eps * pop);
        assert!(
            r <= 1.0,
            "push {i}: population variance {got:e}, exact {pop:e}, naive {n_pop:e}"
        );
        worst.population = worst.population.max(r);
        worst.var_rel = worst
            .var_rel
            .max((got - pop).abs() / pop.max(f64::MIN_POSITIVE));
        if let (Some(got), Some(sample), Some(n_sample)) = (v.sample_variance(), sample, n_sample) {
            let r = ratio(got, n_sample, sample, 128.0, eps * sample);
            assert!(
                r <= 1.0,
                "push {i}: sample variance {got:e}, exact {sample:e}, naive {n_sample:e}"
            );
            worst.sample = worst.sample.max(r);
        }
    }
    worst
}

/// `count` values `U(0, 1)` in steps of 2⁻²⁰ (as integers `k`).
fn unit_ks(rng: &mut SplitMix, count: usize) -> Vec<i64> {
    (0..count).map(|_| (rng.next_u64() >> 44) as i64).collect()
}

const OUTLIER: i64 = 1_000_000_000_000 << 20; // 1e12

/// Every push is checked for small windows; large windows every sixteenth
/// push and every push within 64 after a value leaves that is far from the
/// rest (the moments where a stale shift or a cancellation would show).
fn checked(window: usize, exits: Vec<usize>) -> impl Fn(usize) -> bool {
    move |i| {
        window <= 100
            || i % 16 == 0
            || exits
                .binary_search_by(|&e| {
                    if e > i {
                        core::cmp::Ordering::Greater
                    } else if i - e <= 64 {
                        core::cmp::Ordering::Equal
                    } else {
                        core::cmp::Ordering::Less
                    }
                })
                .is_ok()
    }
}

/// The length of the streams below: 10⁶ pushes with `MOMENTA_LONG_TESTS`
/// (CI), 70 000 by default (the running sums are still taken afresh, at
/// the first wrap after 65 536 pushes).
fn stream() -> usize {
    crate::support::long::size(1_000_000, 70_000)
}

#[test]
fn an_outlier_first_costs_no_digits_once_it_has_left() {
    for window in [100, 1000] {
        let mut rng = SplitMix(11 + window as u64);
        let mut ks = vec![OUTLIER];
        ks.extend(unit_ks(&mut rng, stream() - 1));
        let w = run_against_two_pass(&ks, window, checked(window, vec![window]));
        eprintln!("outlier first, window {window}: {w:?}");
    }
}

#[test]
fn outliers_first_after_a_refresh_or_anywhere_cost_no_digits() {
    for window in [100, 1000] {
        let mut rng = SplitMix(23 + window as u64);
        let mut ks = unit_ks(&mut rng, stream());
        let mut exits = Vec::new();
        for (i, k) in ks.iter_mut().enumerate() {
            // Every seventh refresh of a full window (the push after
            // 2·window, 3·window, … pushes), and about one value in
            // 3·window at random, with either sign.
            let after_refresh = i >= 2 * window && i % (7 * window) == 0;
            if after_refresh || rng.next_u64().is_multiple_of(3 * window as u64) {
                *k = if rng.next_u64().is_multiple_of(2) {
                    OUTLIER
                } else {
                    -OUTLIER / 3
                };
                exits.push(i + window);
            }
        }
        let w = run_against_two_pass(&ks, window, checked(window, exits));
        eprintln!("outliers after refreshes and at random, window {window}: {w:?}");
    }
}

#[test]
fn a_level_change_costs_no_digits_once_the_old_level_has_left() {
    for window in [100, 1000] {
        let mut rng = SplitMix(37 + window as u64);
        let mut ks = Vec::with_capacity(stream());
        let mut exits = Vec::new();
        while ks.len() < stream() {
            // 1e9 + U(0, 1) for a window and a half, then U(0, 1) near 0
            // for five windows.
            let high = (rng.next_u64() % (window as u64) + window as u64 / 2) as usize;
            ks.extend(
                unit_ks(&mut rng, high)
                    .iter()
                    .map(|k| k + (1_000_000_000 << 20)),
            );
            exits.push(ks.len() + window);
            ks.extend(unit_ks(&mut rng, 5 * window));
        }
        ks.truncate(stream());
        let w = run_against_two_pass(&ks, window, checked(window, exits));
        eprintln!("level changes, window {window}: {w:?}");
    }
}

#[test]
fn a_huge_value_leaving_a_small_window_leaves_an_exact_variance() {
    // Window 5 over values of wildly different sizes, one huge value at a
    // time, each checked at every push.
    let mut rng = SplitMix(5);
    let ks: Vec<i64> = (0..stream())
        .map(|i| {
            let k = (rng.next_u64() >> 44) as i64;
            match i % 13 {
                0 => k + OUTLIER,
                6 => -k * 1024,
                _ => k,
            }
        })
        .collect();
    let w = run_against_two_pass(&ks, 5, |_| true);
    eprintln!("huge values through window 5: {w:?}");
}

#[test]
fn non_finite_values_entering_and_leaving_cost_no_digits() {
    let window = 100;
    let mut rng = SplitMix(77);
    let mut a = MovingAverage::<f64>::new(window).unwrap();
    let mut v = MovingVariance::<f64>::new(window).unwrap();
    let mut xs: Vec<f64> = Vec::new();
    let mut ks: Vec<i64> = Vec::new();
    // 200 000 pushes with `MOMENTA_LONG_TESTS`, 70 000 by default (past a
    // refresh of the sums).
    for i in 0..crate::support::long::size(200_000_usize, 70_000) {
        let (x, k) = match rng.next_u64() % 500 {
            0 => (f64::NAN, 0),
            1 => (f64::INFINITY, 0),
            2 => (f64::NEG_INFINITY, 0),
            3 => (1e12, OUTLIER),
            _ => {
                let k = (rng.next_u64() >> 44) as i64;
                (k as f64 / FIX, k)
            }
        };
        xs.push(x);
        ks.push(k);
        let m = a.push(x);
        v.push(x);
        let lo = (i + 1).saturating_sub(window);
        let w = &xs[lo..=i];
        if w.iter().any(|x| !x.is_finite()) {
            assert!(!m.is_finite() && !v.population_variance().unwrap().is_finite());
            continue;
        }
        let (mean, pop, _) = exact_window(&ks[lo..=i]);
        let (n_mean, n_pop, _) = two_pass(w);
        let max = w.iter().fold(0.0_f64, |acc, x| acc.max(x.abs()));
        let eps = f64::EPSILON;
        assert!(
            ratio(m, n_mean, mean, 4.0, eps * max) <= 1.0,
            "push {i}: mean {m:e} vs {mean:e}"
        );
        let got = v.population_variance().unwrap();
        assert!(
            ratio(got, n_pop, pop, 128.0, eps * pop) <= 1.0,
            "push {i}: variance {got:e} vs {pop:e}"
        );
    }
}

/// A value some 10¹⁹⁰ times the rest that sets the shift leaves a trace of
/// ε² its size in the compensated sums, far above the values left; the
/// windows notice and take the sum afresh, so from the push it leaves on
/// the mean is as accurate as
/// a naive two-pass over the window and the variance within 64 ulps, on
/// every push (checked against exact fractions). Before, the mean of a
/// window of 3 read 0 instead of 1/3 until the next refresh.
#[test]
fn a_huge_value_costs_no_digits_once_it_has_left() {
    use momenta::TimeWindow;
    for window in [3_usize, 20, 1000] {
        for spike in [1e200, -1e300, 3e20] {
            let mut rng = SplitMix(window as u64 + 5);
            let n = 4 * window + 50;
            let ks: Vec<i64> = (0..n)
                .map(|_| (rng.next_u64() % 2048) as i64 - 1024)
                .collect();
            let mut xs: Vec<f64> = ks.iter().map(|&k| k as f64 / 1024.0).collect();
            // First, so it sets the shift (the case that left a trace),
            // and again where a refresh moves the shift onto it.
            let at = 0;
            xs[at] = spike;
            xs[2 * window] = spike;
            let mut a = MovingAverage::<f64>::new(window).unwrap();
            let mut v = MovingVariance::<f64>::new(window).unwrap();
            let mut t = TimeWindow::<f64>::new(window as f64).unwrap();
            for (i, &x) in xs.iter().enumerate() {
                let m = a.push(x);
                v.push(x);
                t.push_at(i as f64, x).unwrap();
                if i < at + window || (2 * window..3 * window).contains(&i) {
                    continue;
                }
                let wk = &ks[i + 1 - window..=i];
                let (sum, sum_sq) = wk.iter().fold((0_i128, 0_i128), |(s, q), &k| {
                    (s + i128::from(k), q + i128::from(k) * i128::from(k))
                });
                let w = window as i128;
                let mean = sum as f64 / (w as f64 * 1024.0);
                let pop = (w * sum_sq - sum * sum) as f64 / ((w * w) as f64 * 1024.0 * 1024.0);
                let max = wk.iter().map(|k| k.abs()).max().unwrap_or(0) as f64 / 1024.0;
                let what = format!("window {window}, spike {spike:e}, push {i}");
                for (got, who) in [
                    (m, "MovingAverage"),
                    (v.mean().unwrap(), "MovingVariance"),
                    (t.mean().unwrap(), "TimeWindow"),
                ] {
                    assert!(
                        (got - mean).abs() <= 4.0 * f64::EPSILON * max,
                        "{what}: {who} mean {got:e}, exact {mean:e}"
                    );
                }
                for (got, who) in [
                    (v.population_variance().unwrap(), "MovingVariance"),
                    (t.population_variance().unwrap(), "TimeWindow"),
                ] {
                    assert!(
                        (got - pop).abs() <= 64.0 * f64::EPSILON * pop,
                        "{what}: {who} variance {got:e}, exact {pop:e}"
                    );
                }
            }
        }
    }
}

#[test]
fn values_beyond_the_sums_precision_leave_no_trace_once_gone() {
    // Three huge values whose sums need more than two words (1e300,
    // 3e299 + 7e283, −1.3e300) enter a window of ones at every position of
    // the head's cycle; once they have left, the window holds only ones and
    // halves, whose mean and variance are exact fractions. The sums' low
    // word held the huge values' rounding residue, far above what the small
    // values added, and a mean read 1.1 instead of 0.7 in a window of 5
    // before the sums checked what their low word's roundings may have
    // cost.
    for window in [3_usize, 5, 64, 1000] {
        for start in (0..window).step_by(window.div_ceil(7)) {
            let mut both = (
                MovingAverage::<f64>::new(window).unwrap(),
                MovingVariance::<f64>::new(window).unwrap(),
            );
            for _ in 0..window + start {
                both.push(1.0);
            }
            for huge in [1e300, 3e299 + 7e283, -1.3e300] {
                both.push(huge);
            }
            // Ones until the huge values are gone, then halves one by one.
            for _ in 0..window {
                both.push(1.0);
            }
            let (avg, var) = &mut both;
            for halves in 1..=window.min(40) as i64 {
                avg.push(0.5);
                var.push(0.5);
                let n = window as i64;
                // Σx = (n − h) + h/2 = (2n − h)/2; Σx² = (4n − 3h)/4.
                let mean = frac(2 * n - halves, 2 * n);
                let pop = frac(halves * (n - halves), 4 * n * n);
                let what = format!("window {window}, start {start}, {halves} halves");
                assert_ulps(avg.mean().unwrap(), mean, 2.0, &format!("mean, {what}"));
                assert_eq!(var.mean(), avg.mean(), "{what}");
                let got = var.population_variance().unwrap();
                assert!(
                    (got - pop).abs() <= 1e-12 * pop,
                    "variance, {what}: {got} vs {pop}"
                );
            }
        }
    }
}

#[test]
fn a_time_window_forgets_values_beyond_its_sums_precision() {
    // The same three huge values through a time window of `span` seconds,
    // one sample a second: once they have left, only ones and halves.
    // Before the sums checked their low word's roundings, such windows read
    // means off by up to half their value.
    for samples in [5_i64, 1000] {
        let mut w = momenta::TimeWindow::<f64>::new(samples as f64 - 0.5).unwrap();
        let mut t = 0.0;
        let mut push = |w: &mut momenta::TimeWindow<f64>, x: f64| {
            w.push_at(t, x).unwrap();
            t += 1.0;
        };
        let values = std::iter::repeat_n(1.0, samples as usize)
            .chain([1e300, 3e299 + 7e283, -1.3e300])
            .chain(std::iter::repeat_n(1.0, samples as usize));
        for x in values {
            push(&mut w, x);
        }
        for halves in 1..=3 {
            push(&mut w, 0.5);
            assert_eq!(w.len(), samples as usize);
            let mean = frac(2 * samples - halves, 2 * samples);
            let pop = frac(halves * (samples - halves), 4 * samples * samples);
            let what = format!("{samples} samples, {halves} halves");
            assert_ulps(w.mean().unwrap(), mean, 2.0, &format!("mean, {what}"));
            let got = w.population_variance().unwrap();
            assert!(
                (got - pop).abs() <= 1e-12 * pop,
                "variance, {what}: {got} vs {pop}"
            );
        }
    }
}
