//! Inputs the fuzz targets (fuzz/) found, replayed as plain values.
//!
//! Each test names the target, what it found, and the input it failed on
//! (minimised where that kept it clear).

use momenta::{Ema, Mean, Merge, Momentum, MovingVariance, Variance, WeightedVariance};

/// ops_moments: merging an accumulator with a copy of itself 64 times
/// overflowed the count (a panic with overflow checks, a wrapped count of 0
/// without). Input: `[Push(NaN), RoundTrip ×5, MergeSelf ×64…]`.
#[test]
fn ops_moments_count_overflow_on_repeated_self_merge() {
    let mut m = Mean::<f64>::new();
    let mut v = Variance::<f64>::new();
    let mut v32 = Variance::<f32>::new();
    m.push(f64::NAN);
    v.push(f64::NAN);
    v32.push(f32::NAN);
    for _ in 0..70 {
        m.merge(&m.clone());
        v.merge(&v.clone());
        v32.merge(&v32.clone());
    }
    assert_eq!(m.count(), u64::MAX);
    assert_eq!(v.count(), u64::MAX);
    assert_eq!(v32.count(), u64::MAX);
    assert!(m.mean().unwrap().is_nan());
    assert!(v.population_variance().unwrap().is_nan());
}

/// ops_moments: once the count saturated, further self-merges kept
/// doubling M2 while the count stood still, so the variance doubled at
/// every merge, far above (max − min)²/4. Input: `[Push(-6.405885666632236e-145),
/// Push(-6.206459420867057e-145), MergeSelf ×73]`.
#[test]
fn ops_moments_variance_grows_after_the_count_saturates() {
    let (a, b) = (-6.405885666632236e-145_f64, -6.206459420867057e-145_f64);
    let mut v = Variance::<f64>::new();
    v.push(a);
    v.push(b);
    for _ in 0..73 {
        v.merge(&v.clone());
    }
    assert_eq!(v.count(), u64::MAX);
    // Two values, each repeated equally often: variance ((a − b)/2)².
    let expected = ((a - b) / 2.0).powi(2);
    let got = v.population_variance().unwrap();
    assert!(
        (got - expected).abs() <= 1e-12 * expected,
        "{got:e} vs {expected:e}"
    );
    assert!((v.mean().unwrap() - (a + b) / 2.0).abs() <= 1e-15 * a.abs());
}

/// The same overflow reached through restored state: a count of u64::MAX
/// (valid JSON) then a push or a merge.
#[test]
fn restored_count_at_the_maximum_keeps_working() {
    let mut m: Mean<f64> =
        serde_json::from_str(r#"{"count":18446744073709551615,"mean":1.0}"#).unwrap();
    m.push(3.0);
    assert_eq!(m.count(), u64::MAX);
    assert_eq!(m.mean(), Some(1.0));
    m.merge(&m.clone());
    assert_eq!((m.count(), m.mean()), (u64::MAX, Some(1.0)));

    let json =
        r#"{"count":18446744073709551615,"shift":2.0,"offset":0.0,"m2":1.8446744073709552e19}"#;
    let mut v: Variance<f64> = serde_json::from_str(json).unwrap();
    v.push(2.0);
    v.merge(&v.clone());
    assert_eq!(v.count(), u64::MAX);
    assert_eq!(v.mean(), Some(2.0));
    assert!((v.population_variance().unwrap() - 1.0).abs() < 1e-12);
}

/// ops_ema: `Ema::with_initial(NaN, Cumulative)` was accepted, and its JSON
/// form (`"initial": null, "value": null`) restored as an average with no
/// initial value: a round trip that silently changed the state. Non-finite
/// initial values are now an error. Input: `{ momentum: Cumulative,
/// initial: Some(NaN), ops: [RoundTrip, Push(0.0)] }`.
#[test]
fn ops_ema_non_finite_initial_value_is_rejected() {
    for v0 in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(Ema::with_initial(v0, Momentum::Cumulative).is_err());
        assert!(Ema::with_initial(v0, Momentum::Factor(1.0)).is_err());
    }
    let e = Ema::with_initial(0.0, Momentum::<f64>::Cumulative).unwrap();
    let json = serde_json::to_string(&e).unwrap();
    let back: Ema<f64> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, e);
    assert_eq!(back.value(), Some(0.0));
}

/// ops_batchnorm: statistics of an empty batch (no images) compared unequal
/// to themselves, because a cached NaN mean took part in `==`.
#[test]
fn ops_batchnorm_empty_batch_stats_equal_themselves() {
    use momenta::batchnorm::{BatchStats, Layout};
    let layout = Layout::nchw(0, 3, 32, 1).unwrap();
    let a = BatchStats::<f64>::compute::<f64>(&[], layout).unwrap();
    let b = BatchStats::<f64>::par_compute::<f64>(&[], layout).unwrap();
    assert_eq!(a, a.clone());
    assert_eq!(a, b);
}

/// ops_window: `MovingVariance`'s mean differed from `MovingAverage`'s in
/// the last bit (`-2.348405953443998e227` against `…9974e227`) once the
/// squares of the deviations overflowed: `MovingVariance` re-summed the
/// window at a scale where they fit, and its mean followed that sum. M2 now
/// takes a scale of its own, and the sum keeps `MovingAverage`'s. Input:
/// `{ window: 255, ops: [Push(-7.045217860331993e227), PushSmall(-1),
/// Push(0.0)] }`.
#[test]
fn ops_window_moving_variance_keeps_the_moving_average_mean_when_squares_overflow() {
    use momenta::{MovingAverage, MovingVariance};
    let big = -7.045217860331993e227;
    let mut ma = MovingAverage::<f64>::new(255).unwrap();
    let mut mv = MovingVariance::<f64>::new(255).unwrap();
    for x in [big, -1.0, 0.0] {
        ma.push(x);
        mv.push(x);
        assert_eq!(ma.mean().map(f64::to_bits), mv.mean().map(f64::to_bits));
    }
    // (big − 1)/3, where the −1 is far below an ulp of big.
    let mean = mv.mean().unwrap();
    assert!((mean - big / 3.0).abs() <= 2.0 * f64::EPSILON * mean.abs());
    // 2·big²/9 is far above f64::MAX.
    assert_eq!(mv.population_variance(), Some(f64::INFINITY));
    // A window of 3 then drops the giant: the statistics of [−1, 0, 2]
    // come back to within an ulp or two (the giant's trace in the sums,
    // ε² of its size, is far above these values: the sum is taken afresh,
    // and the scale of the deviations resets). Before, `MovingAverage`
    // read 0.0 here until its next refresh.
    let mut ma = MovingAverage::<f64>::new(3).unwrap();
    let mut mv = MovingVariance::<f64>::new(3).unwrap();
    for x in [big, -1.0, 0.0, 2.0] {
        ma.push(x);
        mv.push(x);
    }
    let mean = ma.mean().unwrap();
    assert_eq!(Some(mean.to_bits()), mv.mean().map(f64::to_bits));
    assert!(
        (mean - 1.0 / 3.0).abs() <= 2.0 * f64::EPSILON / 3.0,
        "{mean}"
    );
    let want = (16.0 + 1.0 + 25.0) / 27.0; // Σ(x − 1/3)² / 3
    let var = mv.population_variance().unwrap();
    assert!((var - want).abs() <= 4.0 * f64::EPSILON * want, "{var}");
}

/// ops_window, after the fix above: a huge value that was not the shift
/// left `MovingAverage` an ulp away from `MovingVariance` once it had gone,
/// because `MovingVariance`'s rebuild for M2 (a cancellation) also took its
/// sum afresh. Now only a check both windows make on the same sums takes
/// the sum afresh. Input: `{ window: 5, ops: [61, −6.5203546019922545e44,
/// 65, 65, 65, 43, 2359295.992195279] }`.
#[test]
fn ops_window_a_huge_value_that_was_not_the_shift_keeps_the_means_equal() {
    use momenta::{MovingAverage, MovingVariance};
    let xs = [
        61.0,
        -6.520_354_601_992_254_5e44,
        65.0,
        65.0,
        65.0,
        43.0,
        2_359_295.992_195_279,
    ];
    let mut ma = MovingAverage::<f64>::new(5).unwrap();
    let mut mv = MovingVariance::<f64>::new(5).unwrap();
    for x in xs {
        ma.push(x);
        mv.push(x);
        assert_eq!(
            ma.mean().map(f64::to_bits),
            mv.mean().map(f64::to_bits),
            "after {x:e}"
        );
    }
    // (65·3 + 43 + 2359295.992195279)/5, to an ulp or so.
    let want = (65.0 * 3.0 + 43.0 + 2_359_295.992_195_279) / 5.0;
    let got = ma.mean().unwrap();
    assert!(
        (got - want).abs() <= 2.0 * f64::EPSILON * want,
        "{got} vs {want}"
    );
}

/// ops_window, once its mean was checked against the window's own values
/// (not the last two windows', and not only below 1e150): two values near
/// −5.5e303 whose sum needs more than two words, then 83, −1 and 0 in a
/// window of 3, read a mean of 83 instead of 82/3: the sums' low word had
/// rounded 83 off at the huge values' size. Input: `[Push(-5.486124068793689e303),
/// Push(-5.4858347467129835e303), PushSmall(83), PushSmall(-1), Push(0.0)]`.
#[test]
fn ops_window_small_values_after_huge_ones_keep_their_mean() {
    let mut a = momenta::MovingAverage::<f64>::new(3).unwrap();
    let mut v = momenta::MovingVariance::<f64>::new(3).unwrap();
    for x in [
        -5.486_124_068_793_689e303,
        -5.485_834_746_712_983_5e303,
        83.0,
        -1.0,
        0.0,
    ] {
        a.push(x);
        v.push(x);
    }
    let mean = 82.0 / 3.0;
    assert!((a.mean().unwrap() - mean).abs() <= 2.0 * f64::EPSILON * mean);
    assert_eq!(v.mean(), a.mean());
    // M2 of 83, −1, 0 is 13946/3 (Σx² − (Σx)²/3 = 6890 − 6724/3).
    let pop = 13946.0 / 9.0;
    let got = v.population_variance().unwrap();
    assert!((got - pop).abs() <= 1e-13 * pop, "{got} vs {pop}");
}

/// ops_weighted: West's step took its M2 term as `w·d·(x − μ')`. A weight
/// that outweighs Σw so far by 10²⁵⁰ puts the new mean within its own
/// rounding of `x`, on either side, and with a deviation of 10¹⁶⁰ the term
/// came out −∞: M2 −∞, a state that its own serialized form refused to
/// restore. The exact weighted variance (by fractions) is
/// 1.4042292073268304e92. Input: the pairs below, pushed, then a round
/// trip.
#[test]
fn ops_weighted_a_dominant_weight_leaves_m2_finite_and_non_negative() {
    let pairs = [
        (2.0924533037294956e-110, 2.0924533037294956e-110),
        (2.0924533037276047e-110, 2.0924533037294956e-110),
        (2.0924533037294956e-110, 2.0924533037294956e-110),
        (2.0924533037294956e-110, 2.0924533037294956e-110),
        (1.2217035416680692e161, 2.1107166118667854e-110),
        (5.5950457010334944e141, 5.5950456554376724e141),
        (5.595045655426507e141, 3.777277307482664e-34),
    ];
    let v = WeightedVariance::<f64>::try_from_iter(pairs).unwrap();
    let exact = 1.4042292073268304e92;
    let var = v.population_variance().unwrap();
    assert!((var - exact).abs() <= 1e-12 * exact, "{var}");
    let parts = v.to_parts();
    assert!(parts.m2 >= 0.0 && parts.m2.is_finite(), "{parts:?}");
    assert_eq!(WeightedVariance::<f64>::from_parts(parts).unwrap(), v);
    // The slices' kernels and a merge of the pushes in two halves agree.
    let (xs, ws): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
    let slices = WeightedVariance::<f64>::from_slices(&xs, &ws).unwrap();
    let s = slices.population_variance().unwrap();
    assert!((s - exact).abs() <= 1e-12 * exact, "{s}");
    let mut merged = WeightedVariance::<f64>::try_from_iter(pairs[..5].iter().copied()).unwrap();
    merged.merge(&WeightedVariance::try_from_iter(pairs[5..].iter().copied()).unwrap());
    let m = merged.population_variance().unwrap();
    assert!((m - exact).abs() <= 1e-12 * exact, "{m}");
}

/// `restore`: a weight of 1e-71 pushed after one of 1.79e308 (a NaN value)
/// left the reliability divisor NaN — its step was (w/W)·(2W₀ − D), with
/// 2W₀ overflowing to +∞ and w/W underflowing to 0 — and the state was
/// refused by its own validation. The same happened to a merge. (The
/// divisor of the two weights is 2·w₁w₂/(w₁ + w₂) ≈ 2e-71; w/W underflows
/// to 0 first, so it reads 0: finite, within its bounds.)
#[test]
fn restore_a_tiny_weight_after_a_huge_one_keeps_the_divisor() {
    let huge = 1.791_548_675_905_266_8e308;
    let tiny = 1.018_763_896_368_005e-71;
    let mut v = WeightedVariance::<f64>::new();
    v.push(f64::NAN, huge).unwrap();
    v.push(-5.486_124_068_873_263e303, tiny).unwrap();
    let parts = v.to_parts();
    assert!(parts.reliability_divisor.is_finite(), "{parts:?}");
    assert!(parts.reliability_divisor <= 2.0 * tiny, "{parts:?}");
    let back = WeightedVariance::<f64>::from_parts(parts).unwrap();
    assert_eq!(
        format!("{:?}", back.to_parts()),
        format!("{:?}", v.to_parts())
    );
    // A merge of the two sides keeps it finite too.
    let mut a = WeightedVariance::<f64>::new();
    a.push(1.0, huge).unwrap();
    let mut b = WeightedVariance::<f64>::new();
    b.push(2.0, tiny).unwrap();
    a.merge(&b);
    let d = a.to_parts().reliability_divisor;
    assert!(d.is_finite() && (0.0..=2.0 * tiny).contains(&d), "{d}");
    assert!(WeightedVariance::<f64>::from_parts(a.to_parts()).is_ok());
}

/// `ops_weighted`: states whose Σw overflowed to +∞ (merges of heavy
/// halves) may hold a NaN reliability divisor, as every statistic is NaN
/// then; validation refused such a state's own serialized form.
#[test]
fn ops_weighted_an_overflowed_total_weight_round_trips() {
    let mut a = WeightedVariance::<f64>::new();
    a.push(1.0, 1e308).unwrap();
    a.push(3.0, 1e-300).unwrap();
    let mut b = a.clone();
    b.merge(&a);
    b.merge(&b.clone());
    let parts = b.to_parts();
    assert_eq!(parts.total_weight, f64::INFINITY);
    let json = serde_json::to_string(&b).unwrap();
    let back: WeightedVariance<f64> = serde_json::from_str(&json).unwrap();
    assert_eq!(serde_json::to_string(&back).unwrap(), json);
    assert!(WeightedVariance::<f64>::from_parts(parts).is_ok());
    // A NaN divisor with a finite Σw is still refused.
    let mut bad = a.to_parts();
    bad.reliability_divisor = f64::NAN;
    assert!(WeightedVariance::<f64>::from_parts(bad).is_err());
}

/// `ops_window`: a window of 2 whose deviations had been scaled down for
/// `−5.8e304` kept that scale once the huge values had left and M2 had
/// gone back to 0 with one value; the next small deviation underflowed,
/// and `[5.1e-62, 0]` read a variance of 0. Input: `[PushSmall(95),
/// PushSmall(-1), PushSmall(-1), RoundTrip ×3, Extend([2.8e209 ×4,
/// -3.4e304, -5.8e304, NaN, NaN, 5.1e-62]), Extend([0])]`.
#[test]
fn ops_window_a_scale_for_huge_deviations_leaves_with_them() {
    let a = 5.148_686_001_264_647e-62;
    let mut history = vec![95.0, -1.0, -1.0];
    history.extend([2.817_009_055_118_430_3e209; 4]);
    history.extend([-3.428_492_576_230_892e304, -5.809_924_753_050_121e304]);
    history.extend([f64::NAN, f64::NAN, a, 0.0]);
    // Pushed one by one, and as the fuzz target's slices.
    let mut pushed = MovingVariance::new(2).unwrap();
    for &x in &history {
        pushed.push(x);
    }
    let mut sliced = MovingVariance::new(2).unwrap();
    sliced.extend_from_slice(&history[..3]);
    sliced.extend_from_slice(&history[3..history.len() - 1]);
    sliced.extend_from_slice(&history[history.len() - 1..]);
    // The two deviations are ±a/2, exact; their squares' mean is a²/4.
    let expected = a * a / 4.0;
    for v in [&pushed, &sliced] {
        assert_eq!(v.population_variance(), Some(expected));
        assert_eq!(v.sample_variance(), Some(2.0 * expected));
    }
    // A window of 3 whose M2 never went back to 0: the cancellation check
    // rebuilds it once the huge values leave.
    let mut three = MovingVariance::new(3).unwrap();
    for &x in history.iter().chain(&[-a]) {
        three.push(x);
    }
    let mean = (a + 0.0 - a) / 3.0;
    let m2: f64 = [a, 0.0, -a].iter().map(|x| (x - mean) * (x - mean)).sum();
    assert_eq!(three.population_variance(), Some(m2 / 3.0));
}
