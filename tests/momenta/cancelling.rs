//! Huge values that cancel (`±f64::MAX`, `±1e300`) beside ordinary ones,
//! through the windows' compensated sums (the fallback of the exact sums
//! when a window's values span too many binades, and `TimeWindow`'s own):
//! the mean at every push against the exact mean of the window, from an
//! exact fixed-point sum (`support::fixed`, integer arithmetic only).

use crate::support::SplitMix;
use crate::support::fixed::{FixedSum, pow2};
use alloc::collections::VecDeque;
use momenta::{MovingAverage, MovingStats, MovingVariance, NanPolicy, TimeWindow};

/// The reference itself, on sums whose values are known.
#[test]
fn the_fixed_point_reference_sums_what_no_double_holds() {
    let s = FixedSum::of([f64::MAX, f64::MAX, -f64::MAX]);
    assert_eq!(s.to_f64(), f64::MAX);
    assert_eq!(FixedSum::of([f64::MAX, f64::MAX]).to_f64(), f64::INFINITY);
    assert_eq!(
        FixedSum::of([f64::MAX, f64::MAX]).to_f64_scaled(1),
        f64::MAX
    );
    assert_eq!(FixedSum::of([1e300, 1.0, -1e300]).to_f64(), 1.0);
    let tiny = f64::from_bits(1);
    assert_eq!(
        FixedSum::of([tiny, 3.0 * tiny, -1e-300, 1e-300]).to_f64(),
        4.0 * tiny
    );
    assert_eq!(FixedSum::of([-2.5, 1.0]).to_f64(), -1.5);
    // 1 + 2^-53 ties to even (1), 1 + 2^-53 + 2^-80 rounds up.
    assert_eq!(FixedSum::of([1.0, pow2(-53)]).to_f64(), 1.0);
    assert_eq!(
        FixedSum::of([1.0, pow2(-53), pow2(-80)]).to_f64(),
        1.0 + f64::EPSILON
    );
}

/// The mean the window of `values` must read under `policy`: `None` when
/// it has no finite-or-infinite value to average (Skip, only NaN).
fn expected(values: &VecDeque<f64>, policy: NanPolicy) -> Option<f64> {
    let skip = !matches!(policy, NanPolicy::Propagate);
    if values.iter().any(|x| x.is_nan()) && !skip {
        return Some(f64::NAN);
    }
    let kept: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if kept.is_empty() {
        return None;
    }
    let (pos, neg) = (
        kept.contains(&f64::INFINITY),
        kept.contains(&f64::NEG_INFINITY),
    );
    match (pos, neg) {
        (true, true) => return Some(f64::NAN),
        (true, false) => return Some(f64::INFINITY),
        (false, true) => return Some(f64::NEG_INFINITY),
        (false, false) => {}
    }
    // The sum of at most a few hundred doubles, brought down by 2³ so that
    // it is finite, rounded once; the quotient once more.
    let n = kept.len() as f64;
    Some(FixedSum::of(kept.iter().copied()).to_f64_scaled(3) / n * 8.0)
}

/// Checks `got` against the exact mean of `values`: a few ulps of the
/// largest value in the window (the accuracy the windows state), plus a
/// few of the smallest subnormal.
fn check(what: &str, at: usize, values: &VecDeque<f64>, policy: NanPolicy, got: Option<f64>) {
    let Some(want) = expected(values, policy) else {
        return;
    };
    let got = got.unwrap_or_else(|| panic!("{what}, push {at}: no mean for {values:?}"));
    if !want.is_finite() {
        assert!(
            got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
            "{what}, push {at}: {got:?}, want {want:?} for {values:?}"
        );
        return;
    }
    let max = values
        .iter()
        .filter(|x| x.is_finite())
        .fold(0.0_f64, |m, x| m.max(x.abs()));
    let tolerance = 8.0 * f64::EPSILON * max + 64.0 * f64::from_bits(1);
    assert!(
        (got - want).abs() <= tolerance,
        "{what}, push {at}: mean {got:e}, exact {want:e} (off by {:e}, tolerance {tolerance:e}) for {values:?}",
        (got - want).abs()
    );
}

/// Feeds `stream` to every window type of length `window` under `policy`,
/// checking the mean after every push.
fn run_all(stream: &[f64], window: usize, policy: NanPolicy) {
    run_checked_from(stream, window, policy, 0);
}

/// [`run_all`], checking from push `from` on.
fn run_checked_from(stream: &[f64], window: usize, policy: NanPolicy, from: usize) {
    let mut average = MovingAverage::new(window).unwrap().with_nan_policy(policy);
    let mut variance = MovingVariance::new(window).unwrap().with_nan_policy(policy);
    let mut stats = MovingStats::new(window).unwrap().with_nan_policy(policy);
    let mut timed = TimeWindow::new(window as f64)
        .unwrap()
        .with_nan_policy(policy);
    let mut values = VecDeque::new();
    for (at, &x) in stream.iter().enumerate() {
        if values.len() == window {
            values.pop_front();
        }
        values.push_back(x);
        average.push(x);
        variance.push(x);
        stats.push(x);
        // (t − window, t] holds the last `window` samples.
        timed.push_at(at as f64, x).unwrap();
        if at < from {
            continue;
        }
        let tag = |name: &str| format!("{name}({window}, {policy:?})");
        check(&tag("MovingAverage"), at, &values, policy, average.mean());
        check(&tag("MovingVariance"), at, &values, policy, variance.mean());
        check(&tag("MovingStats"), at, &values, policy, stats.mean());
        check(&tag("TimeWindow"), at, &values, policy, timed.mean());
    }
}

#[test]
fn values_that_cancel_leave_the_small_ones_exact() {
    // The window of 5 holds [−MAX, MAX, 1e20, NaN, 7.98] at the sixth
    // push: skipping the NaN, the mean is (1e20 + 7.98)/4 = 2.5e19 (the
    // windows read 1e20 when the pair taken afresh rounded off the shift's
    // share beside 2e37).
    let stream = [
        3.3e38,
        -f64::MAX,
        f64::MAX,
        1e20,
        f64::NAN,
        7.98,
        1.5,
        -2.25,
        3.0,
        4.0,
        5.0,
    ];
    for policy in [NanPolicy::Skip, NanPolicy::Propagate] {
        run_all(&stream, 5, policy);
    }
    let mut average = MovingAverage::new(5)
        .unwrap()
        .with_nan_policy(NanPolicy::Skip);
    for &x in &stream[..6] {
        average.push(x);
    }
    let want = (1e20 + 7.98) / 4.0;
    let got = average.mean().unwrap();
    assert!((got - want).abs() <= 1e4, "{got:e}, want {want:e}");
}

#[test]
fn after_an_infinity_and_cancelling_values_the_mean_is_the_small_values() {
    // The window of 5 ends on [7.98…, 5.86…, −9.00…, 1, 2], whose mean is
    // about 1.569 (the windows read 6e19).
    let stream = [
        f64::INFINITY,
        3.3e38,
        -f64::MAX,
        f64::MAX,
        1e20,
        f64::NAN,
        7.983_120_207_073_657,
        5.863_295_162_049_214,
        -9.001_290_111_057_042,
        1.0,
        2.0,
    ];
    for policy in [NanPolicy::Propagate, NanPolicy::Skip] {
        for window in 3..=7 {
            run_all(&stream, window, policy);
        }
    }
}

#[test]
fn f32_windows_recover_after_cancelling_values() {
    let stream = [
        3.0e38_f32,
        -f32::MAX,
        f32::MAX,
        1e10,
        f32::NAN,
        7.98,
        1.5,
        -2.25,
    ];
    let mut average = MovingAverage::new(5)
        .unwrap()
        .with_nan_policy(NanPolicy::Skip);
    let mut stats = MovingStats::new(5)
        .unwrap()
        .with_nan_policy(NanPolicy::Skip);
    let mut values = VecDeque::new();
    for (at, &x) in stream.iter().enumerate() {
        if values.len() == 5 {
            values.pop_front();
        }
        values.push_back(x);
        average.push(x);
        stats.push(x);
        let wide: VecDeque<f64> = values.iter().map(|&v| f64::from(v)).collect();
        let Some(want) = expected(&wide, NanPolicy::Skip) else {
            continue;
        };
        let max = wide
            .iter()
            .filter(|v| v.is_finite())
            .fold(0.0_f64, |m, v| m.max(v.abs()));
        let tolerance = 8.0 * f64::from(f32::EPSILON) * max;
        for (name, got) in [
            ("MovingAverage", average.mean()),
            ("MovingStats", stats.mean()),
        ] {
            let got = f64::from(got.unwrap());
            assert!(
                (got - want).abs() <= tolerance,
                "{name}<f32>, push {at}: {got:e}, exact {want:e} for {values:?}"
            );
        }
    }
}

/// A hostile value: huge ones that cancel, a few binades-apart ones,
/// ordinary values, subnormals, NaN and (rarely) ±∞.
fn hostile(rng: &mut SplitMix) -> f64 {
    let sign = if rng.next_u64() & 1 == 0 { 1.0 } else { -1.0 };
    match rng.next_u64() % 20 {
        0 | 1 => sign * f64::MAX,
        2 => sign * f64::MAX * rng.unit(),
        3 | 4 => sign * 1e300,
        5 => 3.3e38,
        6 => sign * 1e20,
        7 => sign * 6.25e18 * (1.0 + rng.unit()),
        8 => sign * f64::from_bits(rng.next_u64() % (1 << 52)),
        9 => sign * f64::MIN_POSITIVE * rng.unit(),
        10 => f64::NAN,
        11 if rng.next_u64().is_multiple_of(8) => sign * f64::INFINITY,
        _ => sign * 10.0 * rng.unit(),
    }
}

#[test]
fn a_hostile_stream_reads_the_exact_mean_at_every_push() {
    let pushes = crate::support::long::size(8_000, 1_500);
    for seed in 0..4_u64 {
        let mut rng = SplitMix(0xCA2C_E11E + seed);
        let stream: Vec<f64> = (0..pushes).map(|_| hostile(&mut rng)).collect();
        for window in 3..=7 {
            for policy in [NanPolicy::Skip, NanPolicy::Propagate] {
                run_all(&stream, window, policy);
            }
        }
    }
}

#[test]
fn values_that_cancel_through_a_refresh_leave_the_small_ones_exact() {
    // The windows take their sums afresh from their values every 2^16
    // pushes (at a wrap of the ring); huge values that cancel, repeated
    // every 13 pushes, are in the window at that moment whatever its
    // length, and their roundings must be counted there too.
    let pattern = [
        3.3e38,
        -f64::MAX,
        f64::MAX,
        1e20,
        7.98,
        1.5,
        -2.25,
        3.0,
        4.0,
        5.0,
        6.5,
        -7.0,
        0.125,
    ];
    let stream: Vec<f64> = (0..66_000).map(|i| pattern[i % pattern.len()]).collect();
    for window in 3..=7 {
        run_checked_from(&stream, window, NanPolicy::Propagate, 65_400);
    }
}
