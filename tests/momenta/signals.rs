//! The windows a sensor program needs — rolling minimum and maximum,
//! quantiles (a median filter), time windows, NaN skipped — against values
//! recorded from pandas on long signals with level changes and outliers at
//! 1e8 and 1e9, against naive recomputation over the window on hostile
//! data, and 10 000 quickcheck cases each.

use crate::pandas_signals as pd;
use crate::support::{SplitMix, two_pass};
use momenta::{
    Accumulator, ErrorKind, MovingAverage, MovingMinMax, MovingQuantile, MovingVariance, NanPolicy,
    TimeWindow,
};
use quickcheck::{QuickCheck, TestResult};

const N: usize = 3000;

/// Signal A: a random walk with uniform noise, on levels 0, 1e8, −250 and
/// 1e9 in turn (600 values each), with outliers +1e9 and −1e8 and values
/// exactly at the level. The same recipe as the script that recorded
/// pandas' values.
fn signal_a() -> Vec<f64> {
    let mut r = SplitMix(2024);
    let levels = [0.0, 1e8, -250.0, 1e9];
    let mut walk = 0.0;
    (0..N)
        .map(|i| {
            walk += r.signed_unit() * 0.5;
            let level = levels[(i / 600) % 4];
            let x = level + walk + r.unit();
            match r.next_u64() % 97 {
                0 => x + 1e9,
                1 => x - 1e8,
                2 => level,
                _ => x,
            }
        })
        .collect()
}

/// Signal B: a random walk with NaN readings, single and in runs of 8.
fn signal_b() -> Vec<f64> {
    let mut r = SplitMix(77);
    let mut walk = 0.0;
    let mut run = 0;
    (0..N)
        .map(|_| {
            walk += r.signed_unit();
            let x = 10.0 * walk + r.unit();
            let k = r.next_u64() % 97;
            if run > 0 {
                run -= 1;
                f64::NAN
            } else if k < 3 {
                f64::NAN
            } else if k == 3 {
                run = 7;
                f64::NAN
            } else {
                x
            }
        })
        .collect()
}

/// Series C: millisecond timestamps 0–1.5 s apart (equal times included),
/// with gaps of 20 s or more; values near 1000 with outliers of 1e6 and
/// NaN readings.
fn series_c() -> Vec<(f64, f64)> {
    let mut r = SplitMix(5);
    let (mut t, mut walk) = (0_u64, 0.0);
    (0..N)
        .map(|_| {
            let mut d = r.next_u64() % 1500;
            if r.next_u64().is_multiple_of(211) {
                d += 20_000;
            }
            t += d;
            walk += r.signed_unit();
            let x = 1000.0 + walk + r.unit();
            let x = match r.next_u64() % 53 {
                0 => x + 1e6,
                1 => f64::NAN,
                _ => x,
            };
            (t as f64, x)
        })
        .collect()
}

/// Equal as pandas prints them: both NaN, or the same number (`None` is
/// pandas' NaN for a missing value).
fn same(got: Option<f64>, want: f64) -> bool {
    match got {
        None => want.is_nan(),
        Some(g) => (g.is_nan() && want.is_nan()) || g == want,
    }
}

/// The relative error of `got` against pandas' `want` (0 when both are
/// missing); panics when only one is.
fn rel_err(got: Option<f64>, want: f64, what: &str, i: usize) -> f64 {
    match got {
        None => {
            assert!(want.is_nan(), "{what} at {i}: None, pandas {want}");
            0.0
        }
        Some(g) => {
            assert!(!want.is_nan(), "{what} at {i}: {g}, pandas NaN");
            if g == want {
                0.0
            } else {
                ((g - want) / want).abs()
            }
        }
    }
}

#[test]
fn the_generators_match_the_recording_script() {
    assert_eq!(
        &signal_a()[..3],
        &[
            0.21999744513380237,
            0.5695302009222618,
            -0.02794987914575331
        ]
    );
    assert_eq!(
        &signal_b()[..3],
        &[-1.8231724458918657, -7.583601416909801, 0.07096206015956696]
    );
    let c = series_c();
    assert_eq!(c[0], (1118.0, 999.5647577426815));
    assert_eq!(c[2], (1725.0, 1000.6888297327272));
}

#[test]
fn min_max_and_quantiles_equal_pandas_bit_for_bit_through_1e8_and_1e9() {
    let xs = signal_a();
    let mut mm = MovingMinMax::new(50).unwrap();
    let mut median = MovingQuantile::median(51).unwrap();
    let mut q90 = MovingQuantile::new(50, 0.9).unwrap();
    let mut q10 = MovingQuantile::new(7, 0.1).unwrap();
    for (i, &x) in xs.iter().enumerate() {
        mm.push(x);
        let m = median.push(x);
        let p90 = q90.push(x);
        let p10 = q10.push(x);
        if i % pd::STEP == 0 {
            let k = i / pd::STEP;
            assert!(same(mm.min(), pd::A_MIN_50[k]), "min at {i}");
            assert!(same(mm.max(), pd::A_MAX_50[k]), "max at {i}");
            assert_eq!(m, pd::A_MEDIAN_51[k], "median at {i}");
            assert_eq!(p90, pd::A_Q90_50[k], "q90 at {i}");
            assert_eq!(p10, pd::A_Q10_7[k], "q10 at {i}");
        }
    }
}

#[test]
fn skipping_nan_with_min_periods_matches_pandas() {
    let xs = signal_b();
    let skip = NanPolicy::Skip;
    let mut mean = MovingAverage::new(20).unwrap().with_nan_policy(skip);
    mean = mean.with_min_periods(3).unwrap();
    let mut var = MovingVariance::new(20)
        .unwrap()
        .with_nan_policy(skip)
        .with_min_periods(3)
        .unwrap();
    let mut mm = MovingMinMax::new(20)
        .unwrap()
        .with_nan_policy(skip)
        .with_min_periods(3)
        .unwrap();
    let mut median = MovingQuantile::median(21)
        .unwrap()
        .with_nan_policy(skip)
        .with_min_periods(3)
        .unwrap();
    let (mut worst_mean, mut worst_var) = (0.0_f64, 0.0_f64);
    for (i, &x) in xs.iter().enumerate() {
        let m = mean.push(x);
        var.push(x);
        mm.push(x);
        median.push(x);
        if i % pd::STEP == 0 {
            let k = i / pd::STEP;
            assert!(same(mean.mean(), m) || !mean.is_ready());
            worst_mean = worst_mean.max(rel_err(mean.mean(), pd::B_MEAN_20[k], "mean", i));
            worst_var = worst_var.max(rel_err(var.sample_variance(), pd::B_VAR_20[k], "var", i));
            assert!(same(mm.min(), pd::B_MIN_20[k]), "min at {i}");
            assert!(same(mm.max(), pd::B_MAX_20[k]), "max at {i}");
            assert!(same(median.quantile(), pd::B_MEDIAN_21[k]), "median at {i}");
        }
    }
    eprintln!(
        "NaN skipped, window 20: mean within {worst_mean:e} of pandas, variance {worst_var:e}"
    );
    assert!(worst_mean <= 1e-13 && worst_var <= 1e-9);
}

#[test]
fn time_windows_match_pandas_on_irregular_timestamps() {
    let samples = series_c();
    let mut w = TimeWindow::new(5000.0)
        .unwrap()
        .with_nan_policy(NanPolicy::Skip);
    // pandas' variance adds and removes values without recomputing, so
    // after a 1e6 outlier has left it can be off in the third digit; the
    // two-pass over the window's values decides who is right there.
    let (mut worst_mean, mut worst_var) = (0.0_f64, 0.0_f64);
    let (mut pandas_worst, mut ours_worst) = (0.0_f64, 0.0_f64);
    for (i, &(t, x)) in samples.iter().enumerate() {
        w.push_at(t, x).unwrap();
        if i % pd::STEP == 0 {
            let k = i / pd::STEP;
            let valid: Vec<f64> = w.iter().map(|s| s.1).filter(|x| !x.is_nan()).collect();
            assert_eq!(valid.len() as f64, pd::C_COUNT_5S[k], "count at {i}");
            worst_mean = worst_mean.max(rel_err(w.mean(), pd::C_MEAN_5S[k], "mean", i));
            let pandas_var = pd::C_VAR_5S[k];
            let var_err = rel_err(w.sample_variance(), pandas_var, "var", i);
            if valid.len() > 1 {
                let (_, m2) = two_pass(&valid);
                let exact = m2 / (valid.len() - 1) as f64;
                let ours = ((w.sample_variance().unwrap() - exact) / exact).abs();
                let theirs = ((pandas_var - exact) / exact).abs();
                ours_worst = ours_worst.max(ours);
                pandas_worst = pandas_worst.max(theirs);
                if theirs <= 1e-12 {
                    worst_var = f64::max(worst_var, var_err);
                }
            }
            assert!(same(w.min(), pd::C_MIN_5S[k]), "min at {i}");
            assert!(same(w.max(), pd::C_MAX_5S[k]), "max at {i}");
        }
    }
    eprintln!(
        "time window 5 s: mean within {worst_mean:e} of pandas; variance within {worst_var:e} of \
         pandas where pandas is within 1e-12 of the two-pass; against the two-pass: ours \
         {ours_worst:e}, pandas {pandas_worst:e}"
    );
    assert!(worst_mean <= 1e-13 && worst_var <= 1e-11 && ours_worst <= 1e-12);
}

/// The naive quantile: sort the non-NaN values (−0 below +0), rank
/// `q·(m − 1)`, pandas' linear formula; towards an infinity, the limit.
fn naive_quantile(window: &[f64], q: f64) -> Option<f64> {
    let mut v: Vec<f64> = window.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let h = q * (v.len() - 1) as f64;
    let i = h.floor() as usize;
    let frac = h - i as f64;
    if frac == 0.0 {
        return Some(v[i]);
    }
    let (lo, hi) = (v[i], v[i + 1]);
    Some(match (lo.is_finite(), hi.is_finite()) {
        (true, true) if (hi - lo).is_finite() => lo + (hi - lo) * frac,
        (true, true) => lo * (1.0 - frac) + hi * frac,
        _ if lo == hi => lo,
        (false, false) => f64::NAN, // −∞ to +∞
        (false, true) => lo,
        (true, false) => hi,
    })
}

/// The naive minimum and maximum of the non-NaN values (−0 below +0).
fn naive_min_max(window: &[f64]) -> Option<(f64, f64)> {
    let mut v: Vec<f64> = window.iter().copied().filter(|x| !x.is_nan()).collect();
    v.sort_by(f64::total_cmp);
    Some((*v.first()?, *v.last()?))
}

fn bits(x: Option<f64>) -> Option<u64> {
    x.map(|x| {
        if x.is_nan() {
            f64::NAN.to_bits()
        } else {
            x.to_bits()
        }
    })
}

/// Checks the order-statistic windows against the naive ones at every
/// push of `xs`, under both NaN policies.
fn check_against_naive(xs: &[f64], window: usize, q: f64) {
    for policy in [NanPolicy::Propagate, NanPolicy::Skip] {
        let mut mm = MovingMinMax::new(window).unwrap().with_nan_policy(policy);
        let mut mq = MovingQuantile::new(window, q)
            .unwrap()
            .with_nan_policy(policy);
        for (i, &x) in xs.iter().enumerate() {
            mm.push(x);
            let pushed = mq.push(x);
            let w = &xs[(i + 1).saturating_sub(window)..=i];
            let nan = policy == NanPolicy::Propagate && w.iter().any(|x| x.is_nan());
            let (min, max, quant) = if nan {
                (Some(f64::NAN), Some(f64::NAN), Some(f64::NAN))
            } else {
                let mm = naive_min_max(w);
                (mm.map(|m| m.0), mm.map(|m| m.1), naive_quantile(w, q))
            };
            assert_eq!(bits(mm.min()), bits(min), "min at {i} of {w:?}");
            assert_eq!(bits(mm.max()), bits(max), "max at {i} of {w:?}");
            assert_eq!(bits(mq.quantile()), bits(quant), "q {q} at {i} of {w:?}");
            assert_eq!(bits(Some(pushed)), bits(Some(quant.unwrap_or(f64::NAN))));
        }
    }
}

#[test]
fn order_statistics_follow_a_naive_sort_on_hostile_data() {
    let mut r = SplitMix(99);
    let specials = [
        1e9,
        -1e9,
        1e8,
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MAX,
        -f64::MAX,
        1.0,
        1.0,
        1.0,
    ];
    let xs: Vec<f64> = (0..4000)
        .map(|i| {
            let k = r.next_u64();
            if i % 500 < 40 {
                f64::NAN // a run of NaN
            } else if k.is_multiple_of(5) {
                specials[(k >> 8) as usize % specials.len()]
            } else {
                ((k >> 40) % 7) as f64 - 3.0 // many ties
            }
        })
        .collect();
    for (window, q) in [
        (1, 0.5),
        (2, 0.3),
        (5, 0.5),
        (16, 0.75),
        (33, 0.0),
        (33, 1.0),
        (100, 0.9),
    ] {
        check_against_naive(&xs, window, q);
    }
}

#[test]
fn an_outlier_at_1e9_costs_no_digits_once_it_has_left_the_time_window() {
    // watermill's rolling variance computes E[x²] − E[x]² and loses every
    // outlier-sized digit; here each window is checked against the exact
    // two-pass of its values.
    for offset in [0.0, 1e8, 1e9] {
        let mut r = SplitMix(3);
        let mut w = TimeWindow::new(50.0).unwrap();
        let mut all = Vec::new();
        let mut t = 0.0;
        let mut worst = 0.0_f64;
        for i in 0..20_000 {
            t += (r.next_u64() % 4) as f64;
            let x = if i % 1000 == 7 {
                offset + 1e9
            } else {
                offset + (r.next_u64() >> 44) as f64 / (1u64 << 20) as f64
            };
            w.push_at(t, x).unwrap();
            all.push((t, x));
            let inside: Vec<f64> = all
                .iter()
                .rev()
                .take_while(|s| t - s.0 < 50.0)
                .map(|s| s.1)
                .collect();
            if inside.len() < 2 || inside.iter().any(|&x| x >= offset + 1e9) {
                continue;
            }
            let (_, m2) = two_pass(&inside);
            let want = m2 / (inside.len() - 1) as f64;
            let got = w.sample_variance().unwrap();
            worst = worst.max(((got - want) / want).abs());
        }
        eprintln!("time window at offset {offset:e} after 1e9 outliers: variance within {worst:e}");
        assert!(worst <= 1e-10, "offset {offset}: {worst}");
    }
}

#[test]
fn time_that_goes_backwards_or_is_not_finite_is_an_error_that_changes_nothing() {
    let mut w = TimeWindow::new(10.0).unwrap();
    w.push_at(5.0, 1.0).unwrap();
    w.push_at(6.0, 3.0).unwrap();
    let before = w.clone();
    for t in [4.999, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let e = w.push_at(t, 100.0).unwrap_err();
        assert!(matches!(
            e.kind(),
            ErrorKind::InvalidParameter { name: "time", .. }
        ));
        assert_eq!(w, before);
    }
    assert_eq!(w.mean(), Some(2.0));
    for span in [0.0, -1.0, f64::NAN] {
        assert!(TimeWindow::<f64>::new(span).is_err());
    }
    // A long gap empties the window; the statistics start again.
    w.push_at(1e6, 7.0).unwrap();
    assert_eq!(
        (w.len(), w.mean(), w.sample_variance()),
        (1, Some(7.0), None)
    );
    // Closed on the right: a sample exactly `span` old has left.
    w.push_at(1e6 + 10.0, 9.0).unwrap();
    assert_eq!(w.len(), 1);
}

/// Cases of the quickcheck laws below: 10 000 with `MOMENTA_LONG_TESTS`
/// (CI), 1000 by default.
fn quickcheck_cases() -> u64 {
    crate::support::long::size(10_000, 1000)
}

#[test]
fn quickcheck_min_max_and_quantile_are_those_of_the_last_window_values() {
    fn prop(xs: Vec<f64>, window: u8, q: u8) -> TestResult {
        let window = usize::from(window % 24) + 1;
        let q = f64::from(q) / 255.0;
        check_against_naive(&xs, window, q);
        TestResult::passed()
    }
    QuickCheck::new()
        .tests(quickcheck_cases())
        .quickcheck(prop as fn(Vec<f64>, u8, u8) -> TestResult);
}

#[test]
fn quickcheck_time_window_is_the_statistics_of_the_samples_inside_the_span() {
    fn prop(steps: Vec<(u8, i16)>, span: u8) -> TestResult {
        let span = f64::from(span % 40) + 0.5;
        let mut w = TimeWindow::new(span)
            .unwrap()
            .with_nan_policy(NanPolicy::Skip);
        let mut t = 0.0;
        let mut all: Vec<(f64, f64)> = Vec::new();
        for &(dt, k) in &steps {
            t += f64::from(dt % 16) * 0.5;
            let x = if k == i16::MIN {
                f64::NAN
            } else {
                f64::from(k) / 8.0
            };
            w.push_at(t, x).unwrap();
            all.push((t, x));
            let inside: Vec<f64> = all
                .iter()
                .filter(|s| t - s.0 < span && !s.1.is_nan())
                .map(|s| s.1)
                .collect();
            if inside.is_empty() {
                if w.mean().is_some() {
                    return TestResult::failed();
                }
                continue;
            }
            let (mean, m2) = two_pass(&inside);
            let n = inside.len() as f64;
            let (min, max) = naive_min_max(&inside).unwrap();
            let big = inside.iter().fold(1.0_f64, |a, x| a.max(x.abs()));
            let ok = (w.mean().unwrap() - mean).abs() <= 4.0 * f64::EPSILON * big
                && (w.population_variance().unwrap() - m2 / n).abs()
                    <= 1e-12 * m2 / n + 1e-14 * big * big
                && w.min() == Some(min)
                && w.max() == Some(max);
            if !ok {
                return TestResult::failed();
            }
        }
        TestResult::passed()
    }
    QuickCheck::new()
        .tests(quickcheck_cases())
        .quickcheck(prop as fn(Vec<(u8, i16)>, u8) -> TestResult);
}

#[test]
fn quickcheck_skipping_nan_is_the_mean_and_variance_of_the_other_values() {
    fn prop(ks: Vec<i16>, window: u8, min_periods: u8) -> TestResult {
        let window = usize::from(window % 20) + 1;
        let min_periods = usize::from(min_periods) % (window + 1);
        let mut a = MovingAverage::new(window)
            .unwrap()
            .with_nan_policy(NanPolicy::Skip)
            .with_min_periods(min_periods)
            .unwrap();
        let mut v = MovingVariance::new(window)
            .unwrap()
            .with_nan_policy(NanPolicy::Skip)
            .with_min_periods(min_periods)
            .unwrap();
        let xs: Vec<f64> = ks
            .iter()
            .map(|&k| if k % 5 == 0 { f64::NAN } else { f64::from(k) })
            .collect();
        for (i, &x) in xs.iter().enumerate() {
            let m = a.push(x);
            v.push(x);
            let valid: Vec<f64> = xs[(i + 1).saturating_sub(window)..=i]
                .iter()
                .copied()
                .filter(|x| !x.is_nan())
                .collect();
            let ready = !valid.is_empty() && valid.len() >= min_periods;
            if a.is_ready() != ready || v.is_ready() != ready {
                return TestResult::failed();
            }
            if !ready {
                if !m.is_nan() || a.mean().is_some() || v.population_variance().is_some() {
                    return TestResult::failed();
                }
                continue;
            }
            let (mean, m2) = two_pass(&valid);
            let n = valid.len() as f64;
            // Within a few ulps of the largest value (the mean) and of its
            // square (the variance), as documented.
            let big = valid.iter().fold(1.0_f64, |a, x| a.max(x.abs()));
            let sample_ok = match v.sample_variance() {
                None => valid.len() < 2,
                Some(s) => (s - m2 / (n - 1.0)).abs() <= 1e-12 * m2 / n + 1e-14 * big * big,
            };
            if (m - mean).abs() > 4.0 * f64::EPSILON * big || !sample_ok {
                return TestResult::failed();
            }
        }
        TestResult::passed()
    }
    QuickCheck::new()
        .tests(quickcheck_cases())
        .quickcheck(prop as fn(Vec<i16>, u8, u8) -> TestResult);
}

#[test]
fn parameters_out_of_range_are_errors() {
    for q in [-0.1, 1.1, f64::NAN, f64::INFINITY] {
        let e = MovingQuantile::<f64>::new(5, q).unwrap_err();
        assert!(matches!(
            e.kind(),
            ErrorKind::InvalidParameter { name: "q", .. }
        ));
    }
    assert!(MovingQuantile::<f64>::new(5, 0.0).is_ok());
    assert!(MovingQuantile::<f64>::new(5, 1.0).is_ok());
    assert_eq!(
        MovingQuantile::<f64>::median(0).unwrap_err().kind(),
        &ErrorKind::InvalidWindow { window: 0 }
    );
    assert!(MovingMinMax::<f64>::new(0).is_err());
    let e = MovingMinMax::<f64>::new(3)
        .unwrap()
        .with_min_periods(4)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "min_periods must be at most the window, got 4"
    );
    assert!(
        MovingAverage::<f64>::new(3)
            .unwrap()
            .with_min_periods(3)
            .is_ok()
    );
    // A time window can reach any count: no error to give.
    let w = TimeWindow::<f64>::new(1.0).unwrap().with_min_periods(1000);
    assert!(!w.is_ready());
}

#[test]
fn accumulator_trait_and_extend_agree_with_push() {
    let xs = signal_a();
    let mut one = (
        MovingMinMax::new(9).unwrap(),
        MovingQuantile::median(9).unwrap(),
    );
    for &x in &xs {
        one.0.push(x);
        one.1.push(x);
    }
    let mut bundle = (
        MovingMinMax::new(9).unwrap(),
        MovingQuantile::median(9).unwrap(),
    );
    Accumulator::extend_from_slice(&mut bundle, &xs[..100]);
    bundle.0.extend(&xs[100..]);
    bundle.1.extend(xs[100..].iter().copied());
    assert_eq!(bundle, one);
    assert_eq!(bundle.1.quantile(), one.1.quantile());
    assert_eq!((bundle.0.min(), bundle.0.max()), (one.0.min(), one.0.max()));
}

#[test]
fn serde_round_trips_continue_alike_and_corrupt_state_is_rejected() {
    let xs = signal_b();
    let mut mm = MovingMinMax::new(7)
        .unwrap()
        .with_nan_policy(NanPolicy::Skip);
    let mut mq = MovingQuantile::new(7, 0.25)
        .unwrap()
        .with_min_periods(2)
        .unwrap();
    let mut tw = TimeWindow::new(3.0)
        .unwrap()
        .with_nan_policy(NanPolicy::Skip);
    for (i, &x) in xs[..40].iter().enumerate() {
        mm.push(x);
        mq.push(x);
        tw.push_at(i as f64 * 0.7, x).unwrap();
    }
    let mut mm2: MovingMinMax<f64> =
        serde_json::from_str(&serde_json::to_string(&mm).unwrap()).unwrap();
    let mut mq2: MovingQuantile<f64> =
        serde_json::from_str(&serde_json::to_string(&mq).unwrap()).unwrap();
    let mut tw2: TimeWindow<f64> =
        serde_json::from_str(&serde_json::to_string(&tw).unwrap()).unwrap();
    for (i, &x) in xs[40..200].iter().enumerate() {
        mm.push(x);
        mm2.push(x);
        assert_eq!(bits(mm.min()), bits(mm2.min()));
        assert_eq!(mq.push(x).to_bits(), mq2.push(x).to_bits());
        let t = (i + 40) as f64 * 0.7;
        tw.push_at(t, x).unwrap();
        tw2.push_at(t, x).unwrap();
        assert_eq!(bits(tw.mean()), bits(tw2.mean()));
        assert_eq!(bits(tw.max()), bits(tw2.max()));
    }
    let bad_mm = [
        (
            r#"{"window":2,"values":[1.0,2.0,3.0]}"#,
            "window of 2 holds 3 values",
        ),
        (
            r#"{"window":2,"values":[],"min_periods":3}"#,
            "min_periods must be at most",
        ),
        (r#"{"window":2,"q":0.5,"values":[]}"#, "unknown field `q`"),
    ];
    for (json, message) in bad_mm {
        let e = serde_json::from_str::<MovingMinMax<f64>>(json).unwrap_err();
        assert!(e.to_string().contains(message), "{json}: {e}");
    }
    let bad_mq = [
        (r#"{"window":2,"q":1.5,"values":[]}"#, "q must be in [0, 1]"),
        (r#"{"window":2,"values":[]}"#, "missing field `q`"),
        (
            r#"{"window":1,"q":0.5,"values":[1.0,2.0]}"#,
            "window of 1 holds 2 values",
        ),
    ];
    for (json, message) in bad_mq {
        let e = serde_json::from_str::<MovingQuantile<f64>>(json).unwrap_err();
        assert!(e.to_string().contains(message), "{json}: {e}");
    }
    let bad_tw = [
        (
            r#"{"span":0.0,"last_time":null,"times":[],"values":[]}"#,
            "span must be positive",
        ),
        (
            r#"{"span":1.0,"last_time":5.0,"times":[5.0],"values":[]}"#,
            "1 times for 0 values",
        ),
        (
            r#"{"span":1.0,"last_time":5.0,"times":[3.0],"values":[1.0]}"#,
            "outside the span",
        ),
        (
            r#"{"span":9.0,"last_time":5.0,"times":[4.0,3.0],"values":[1.0,2.0]}"#,
            "time must be",
        ),
        (
            r#"{"span":9.0,"last_time":null,"times":[4.0],"values":[1.0]}"#,
            "without a last time",
        ),
        (
            r#"{"span":9.0,"last_time":2.0,"times":[4.0],"values":[1.0]}"#,
            "outside the span",
        ),
    ];
    for (json, message) in bad_tw {
        let e = serde_json::from_str::<TimeWindow<f64>>(json).unwrap_err();
        assert!(e.to_string().contains(message), "{json}: {e}");
    }
}

// pandas 3.1.1:
//   s = pd.Series(DEFAULT_XS)
//   s.rolling(3).mean() / .var() / .min() / .median()         (min_periods=3)
//   s.rolling(3, min_periods=1).mean() / .min() / .median()
//   s.rolling(3, min_periods=1).var()                          (first: NaN)
const DEFAULT_XS: [f64; 10] = [4.0, 8.0, 6.0, -1.0, -2.0, -3.0, -1.0, 3.0, 4.0, 5.0];
const NAN: f64 = f64::NAN;
#[rustfmt::skip]
const PD_MEAN_3: [f64; 10] = [NAN, NAN, 6.0, 4.333333333333333, 1.0, -2.0, -2.0, -0.3333333333333333, 2.0, 4.0];
#[rustfmt::skip]
const PD_VAR_3: [f64; 10] = [NAN, NAN, 4.0, 22.333333333333336, 19.000000000000007, 1.0000000000000155, 1.0000000000000155, 9.333333333333345, 7.000000000000005, 0.9999999999999996];
#[rustfmt::skip]
const PD_MIN_3: [f64; 10] = [NAN, NAN, 4.0, -1.0, -2.0, -3.0, -3.0, -3.0, -1.0, 3.0];
#[rustfmt::skip]
const PD_MEDIAN_3: [f64; 10] = [NAN, NAN, 6.0, 6.0, -1.0, -2.0, -2.0, -1.0, 3.0, 4.0];
#[rustfmt::skip]
const PD_MEAN_3_MP1: [f64; 10] = [4.0, 6.0, 6.0, 4.333333333333333, 1.0, -2.0, -2.0, -0.3333333333333333, 2.0, 4.0];
#[rustfmt::skip]
const PD_VAR_3_MP1: [f64; 10] = [NAN, 8.0, 4.0, 22.333333333333336, 19.000000000000007, 1.0000000000000155, 1.0000000000000155, 9.333333333333345, 7.000000000000005, 0.9999999999999996];
#[rustfmt::skip]
const PD_MIN_3_MP1: [f64; 10] = [4.0, 4.0, 4.0, -1.0, -2.0, -3.0, -3.0, -3.0, -1.0, 3.0];
#[rustfmt::skip]
const PD_MEDIAN_3_MP1: [f64; 10] = [4.0, 6.0, 6.0, 6.0, -1.0, -2.0, -2.0, -1.0, 3.0, 4.0];

/// Both missing, or within the documented few ulps of the largest value
/// (8): where pandas' mean of (−3, −1, 3) is −1/3 rounded, the window's is
/// 2 ulps below.
fn near(got: Option<f64>, want: f64) -> bool {
    match got {
        None => want.is_nan(),
        Some(g) => (g - want).abs() <= 4.0 * f64::EPSILON * 8.0,
    }
}

/// Runs the four count windows of 3 over `DEFAULT_XS` and checks them
/// against pandas' columns: minimum and median equal, the mean near, the
/// variance within 2e-14 (pandas' running sums leave 1.55e-14 on the
/// exact 1).
fn check_count_windows(min_periods: Option<usize>, want: [&[f64; 10]; 4]) {
    let set = |n: Option<usize>| n.unwrap_or(1);
    let mut mean = MovingAverage::new(3).unwrap();
    let mut var = MovingVariance::new(3).unwrap();
    let mut mm = MovingMinMax::new(3).unwrap();
    let mut median = MovingQuantile::median(3).unwrap();
    if let Some(n) = min_periods {
        mean = mean.with_min_periods(n).unwrap();
        var = var.with_min_periods(n).unwrap();
        mm = mm.with_min_periods(n).unwrap();
        median = median.with_min_periods(n).unwrap();
    }
    for (i, &x) in DEFAULT_XS.iter().enumerate() {
        mean.push(x);
        var.push(x);
        mm.push(x);
        median.push(x);
        let ready = i + 1 >= set(min_periods);
        assert_eq!(mean.is_ready(), ready);
        assert!(near(mean.mean(), want[0][i]), "mean at {i}");
        assert!(rel_err(var.sample_variance(), want[1][i], "var", i) <= 2e-14);
        assert!(same(mm.min(), want[2][i]), "min at {i}");
        assert!(same(median.quantile(), want[3][i]), "median at {i}");
    }
}

#[test]
fn count_windows_answer_from_the_first_value_and_min_periods_window_is_pandas_default() {
    // The default, pinned: min_periods = 1, pandas' rolling(3, min_periods=1).
    check_count_windows(
        None,
        [
            &PD_MEAN_3_MP1,
            &PD_VAR_3_MP1,
            &PD_MIN_3_MP1,
            &PD_MEDIAN_3_MP1,
        ],
    );
    // pandas' own default, rolling(3): with_min_periods(3).
    check_count_windows(Some(3), [&PD_MEAN_3, &PD_VAR_3, &PD_MIN_3, &PD_MEDIAN_3]);
    // The time window's default is pandas' too: min_periods = 1.
    let mut w = TimeWindow::new(3.0).unwrap();
    for (i, &x) in DEFAULT_XS.iter().enumerate() {
        w.push_at(i as f64, x).unwrap();
        assert!(near(w.mean(), PD_MEAN_3_MP1[i]), "time window at {i}");
    }
}
