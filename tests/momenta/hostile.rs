//! Hostile input: every public constructor and method on NaN, ±∞,
//! subnormals, values near `f64::MAX`, empty slices, zero-sized layouts,
//! extreme windows, momenta outside `[0, 1]`, and counts near `u64::MAX`.
//! Each case either works correctly or returns an `Error` that names the
//! value and the rule; nothing panics.

use momenta::batchnorm::{BatchStats, BnConfig, Layout, RunningStats};
use momenta::{
    Accumulator, Ema, ErrorKind, EwVariance, Mean, Merge, Momentum, MovingAverage, MovingVariance,
    Variance,
};

const MAX: f64 = f64::MAX;
const TINY: f64 = 5e-324; // the smallest subnormal

/// The statistics of `xs` by three routes: push, slice kernel, and a merge
/// of single-value accumulators.
fn three_ways(xs: &[f64]) -> [Variance<f64>; 3] {
    let pushed: Variance<f64> = xs.iter().collect();
    let sliced = Variance::<f64>::from_slice(xs);
    let mut merged = Variance::new();
    for &x in xs {
        merged.merge(&Variance::from_slice(&[x]));
    }
    [pushed, sliced, merged]
}

fn means(xs: &[f64]) -> [Option<f64>; 3] {
    let pushed: Mean<f64> = xs.iter().collect();
    let mut merged = Mean::new();
    for &x in xs {
        merged.merge(&Mean::from_slice(&[x]));
    }
    [
        pushed.mean(),
        Mean::<f64>::from_slice(xs).mean(),
        merged.mean(),
    ]
}

#[test]
fn representable_means_near_max_stay_finite() {
    assert_eq!(means(&[MAX, MAX]), [Some(MAX); 3]);
    assert_eq!(means(&[MAX, -MAX]), [Some(0.0); 3]);
    assert_eq!(means(&[-MAX, -MAX, -MAX]), [Some(-MAX); 3]);
    for v in three_ways(&[MAX, MAX]) {
        assert_eq!(v.mean(), Some(MAX));
        assert_eq!(v.population_variance(), Some(0.0));
    }
}

#[test]
fn a_variance_too_large_to_represent_is_infinite_not_nan() {
    for (i, v) in three_ways(&[MAX, -MAX]).iter().enumerate() {
        assert_eq!(v.mean(), Some(0.0), "route {i}");
        assert_eq!(v.population_variance(), Some(f64::INFINITY), "route {i}");
        assert_eq!(v.sample_std_dev(), Some(f64::INFINITY), "route {i}");
    }
    for (i, v) in three_ways(&[MAX, -MAX, MAX, 0.0, -MAX]).iter().enumerate() {
        assert_eq!(v.population_variance(), Some(f64::INFINITY), "route {i}");
        assert!(v.mean().unwrap().is_finite(), "route {i}: {:?}", v.mean());
    }
}

#[test]
fn windows_near_max_keep_representable_means_and_infinite_variances() {
    for window in [2, 3, 100] {
        let mut a = MovingAverage::<f64>::new(window).unwrap();
        let mut v = MovingVariance::<f64>::new(window).unwrap();
        for x in [MAX, -MAX] {
            a.push(x);
            v.push(x);
        }
        assert_eq!(a.mean(), Some(0.0), "window {window}");
        assert_eq!(v.mean(), Some(0.0), "window {window}");
        assert_eq!(
            v.population_variance(),
            Some(f64::INFINITY),
            "window {window}"
        );
        assert_eq!(v.sample_std_dev(), Some(f64::INFINITY), "window {window}");
        // More of them, in any order: the mean stays finite and within
        // rounding of the exact one, the variance +∞, never NaN.
        let xs = [MAX, 0.0, -MAX, MAX, MAX, -MAX, -MAX, MAX];
        for (i, &x) in xs.iter().enumerate() {
            let m = a.push(x);
            v.push(x);
            let all: Vec<f64> = [MAX, -MAX].iter().chain(&xs[..=i]).copied().collect();
            let last = &all[all.len().saturating_sub(window)..];
            // Σ/n of ±MAX and 0, exactly, as a multiple of MAX.
            let units: f64 = last.iter().map(|x| x / MAX).sum();
            let exact = units / last.len() as f64 * MAX;
            assert!(
                m.is_finite() && (m - exact).abs() <= 4.0 * f64::EPSILON * MAX,
                "{m:e}"
            );
            let vm = v.mean().unwrap();
            assert!(
                vm.is_finite() && (vm - exact).abs() <= 4.0 * f64::EPSILON * MAX,
                "{vm:e}"
            );
            if last.iter().any(|&x| x != last[0]) {
                assert_eq!(v.population_variance(), Some(f64::INFINITY));
            } else {
                assert_eq!(v.population_variance(), Some(0.0));
            }
        }
    }
    let mut v = MovingVariance::<f64>::new(2).unwrap();
    v.extend_from_slice(&[MAX, MAX]);
    assert_eq!((v.mean(), v.population_variance()), (Some(MAX), Some(0.0)));
    let mut v = MovingVariance::<f32>::new(3).unwrap();
    v.extend_from_slice(&[f32::MAX, -f32::MAX, 1.0]);
    assert!(v.mean().unwrap().abs() <= 1.0);
    assert_eq!(v.sample_variance(), Some(f32::INFINITY));
}

#[test]
fn subnormals_are_ordinary_numbers() {
    assert_eq!(means(&[TINY, TINY]), [Some(TINY); 3]);
    for v in three_ways(&[0.0, TINY, 0.0, TINY]) {
        let var = v.population_variance().unwrap();
        assert!(var >= 0.0 && var.is_finite());
    }
    let v: Variance<f32> = [f32::from_bits(1), 0.0].into_iter().collect();
    assert!(v.population_variance().unwrap() >= 0.0);
}

#[test]
fn nan_and_infinity_propagate() {
    for xs in [
        [1.0, f64::NAN, 2.0],
        [f64::INFINITY, f64::NEG_INFINITY, 1.0],
    ] {
        assert!(means(&xs).iter().all(|m| m.unwrap().is_nan()));
        for v in three_ways(&xs) {
            assert!(v.mean().unwrap().is_nan());
            assert!(v.population_variance().unwrap().is_nan());
        }
    }
    assert_eq!(means(&[1.0, f64::INFINITY]), [Some(f64::INFINITY); 3]);
    for (i, v) in three_ways(&[1.0, f64::NEG_INFINITY, 2.0])
        .iter()
        .enumerate()
    {
        assert_eq!(v.mean(), Some(f64::NEG_INFINITY), "route {i}");
        assert!(v.population_variance().unwrap().is_nan(), "route {i}");
    }
    let mut e = Ema::new(Momentum::Factor(0.5)).unwrap();
    e.push(f64::NAN);
    e.push(1.0);
    assert!(e.value().unwrap().is_nan());
    let mut w = EwVariance::new(Momentum::Decay(0.5)).unwrap();
    w.extend_from_slice(&[1.0, f64::INFINITY]);
    assert!(w.variance().unwrap().is_nan() || w.variance().unwrap() == f64::INFINITY);
}

#[test]
fn empty_input_gives_none() {
    let v = Variance::<f64>::from_slice::<f64>(&[]);
    assert_eq!(
        (v.count(), v.mean(), v.population_variance()),
        (0, None, None)
    );
    assert_eq!(Mean::<f32>::from_slice::<f32>(&[]).mean(), None);
    let mut a = MovingAverage::<f64>::new(3).unwrap();
    a.extend_from_slice(&[]);
    assert_eq!(a.mean(), None);
    assert_eq!(
        MovingVariance::<f64>::new(3).unwrap().sample_variance(),
        None
    );
    assert_eq!(Ema::<f64>::new(Momentum::Cumulative).unwrap().value(), None);
    assert_eq!(
        EwVariance::<f64>::new(Momentum::Cumulative)
            .unwrap()
            .variance(),
        None
    );
}

#[test]
fn momenta_outside_the_unit_interval_are_errors() {
    for bad in [-0.1, 1.5, f64::NAN, f64::INFINITY, -f64::INFINITY] {
        for m in [Momentum::Decay(bad), Momentum::Factor(bad)] {
            let e = Ema::new(m).unwrap_err();
            assert!(matches!(
                e.kind(),
                ErrorKind::InvalidParameter {
                    name: "momentum",
                    ..
                }
            ));
            assert!(
                e.to_string()
                    .starts_with("momentum must be in [0, 1], got "),
                "{e}"
            );
            assert!(EwVariance::new(m).is_err());
            assert!(Ema::with_initial(0.0, m).is_err());
            assert!(BnConfig::<f64>::pytorch().with_momentum(m).is_err());
        }
        assert!(BnConfig::<f64>::cudnn(bad).is_err());
    }
    assert_eq!(
        Ema::new(Momentum::Factor(1.5)).unwrap_err().to_string(),
        "momentum must be in [0, 1], got 1.5"
    );
    // The ends of the interval are valid.
    for ok in [0.0, 1.0] {
        assert!(Ema::<f64>::new(Momentum::Decay(ok)).is_ok());
        assert!(Ema::<f64>::new(Momentum::Factor(ok)).is_ok());
    }
}

#[test]
fn windows_at_the_extremes() {
    let e = MovingAverage::<f64>::new(0).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::InvalidWindow { window: 0 });
    assert_eq!(e.to_string(), "window must be at least 1, got 0");
    assert!(MovingVariance::<f64>::new(0).is_err());
    let mut huge = MovingAverage::<f64>::new(usize::MAX).unwrap();
    let mut huge_var = MovingVariance::<f64>::new(usize::MAX).unwrap();
    for x in [1.0, 2.0, 6.0] {
        huge.push(x);
        huge_var.push(x);
    }
    assert_eq!(huge.mean(), Some(3.0));
    assert_eq!(huge_var.sample_variance(), Some(7.0));
    assert!(!huge.is_full());
}

#[test]
fn counts_near_u64_max_saturate_and_keep_statistics() {
    let json = format!(r#"{{"count":{},"mean":2.0}}"#, u64::MAX - 1);
    let mut m: Mean<f64> = serde_json::from_str(&json).unwrap();
    m.push(2.0);
    m.push(2.0);
    assert_eq!(m.count(), u64::MAX);
    assert_eq!(m.mean(), Some(2.0));
    let mut v = Variance::<f64>::from_slice(&[1.0, 3.0]);
    for _ in 0..70 {
        let copy = v.clone();
        v.merge(&copy);
    }
    assert_eq!(v.count(), u64::MAX);
    assert_eq!(v.mean(), Some(2.0));
    let var = v.population_variance().unwrap();
    assert!((var - 1.0).abs() < 1e-12, "{var}");
}

#[test]
fn zero_sized_and_overflowing_layouts() {
    // No images: a valid, empty batch whose statistics cannot update.
    let empty = Layout::nchw(0, 3, 2, 2).unwrap();
    let stats = BatchStats::<f32>::compute::<f32>(&[], empty).unwrap();
    assert_eq!((stats.channels(), stats.count()), (3, 0));
    let mut running = RunningStats::new(3, BnConfig::keras());
    assert!(running.update(&stats).is_err());
    // No channels: nothing to compute, and nothing to fail.
    let none = Layout::nc(4, 0).unwrap();
    assert_eq!(
        BatchStats::<f64>::compute::<f64>(&[], none)
            .unwrap()
            .channels(),
        0
    );
    // A shape whose size overflows usize is an error, not a panic.
    let e = Layout::nchw(usize::MAX, 2, 2, 2).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Overflow { .. }), "{e}");
    // A slice of the wrong length is an error naming both lengths.
    let e = BatchStats::<f64>::compute(&[1.0; 11], Layout::nc(4, 3).unwrap()).unwrap_err();
    assert!(
        e.to_string().contains("12") && e.to_string().contains("11"),
        "{e}"
    );
}

#[test]
fn invalid_eps_is_an_error() {
    for bad in [-1e-5, f64::NAN, f64::INFINITY] {
        let e = BnConfig::<f64>::pytorch().with_eps(bad).unwrap_err();
        assert!(e.to_string().contains("eps"), "{e}");
    }
    assert!(BnConfig::<f64>::cudnn(0.1).unwrap().with_eps(1e-6).is_err());
}

#[test]
fn bundles_do_not_panic_on_hostile_values() {
    let mut b = (
        Mean::<f64>::new(),
        Variance::<f64>::new(),
        MovingAverage::new(2).unwrap(),
    );
    b.extend_from_slice(&[MAX, -MAX, f64::NAN, TINY, f64::INFINITY]);
    assert_eq!(b.0.count(), 5);
    assert_eq!(b.1.count(), 5);
    assert_eq!(b.2.len(), 2);
}

#[test]
fn hostile_values_stay_in_their_own_channel() {
    // NHWC, 2 channels: channel 0 holds ±MAX (mean 0, variance ∞), channel
    // 1 ordinary values with one NaN in the NCHW twin below.
    let n = 64;
    let mut nhwc = Vec::with_capacity(2 * n);
    for i in 0..n {
        nhwc.push(if i % 2 == 0 { MAX } else { -MAX });
        nhwc.push(i as f64);
    }
    let stats = BatchStats::<f64>::compute(&nhwc, Layout::nhwc(n, 1, 1, 2).unwrap()).unwrap();
    // Exact mean 0; rounding is relative to the data's magnitude, MAX.
    assert!(stats.mean()[0].abs() <= 1e-15 * MAX, "{}", stats.mean()[0]);
    assert_eq!(stats.variance()[0], f64::INFINITY);
    assert_eq!(stats.mean()[1], 31.5);
    assert_eq!(stats.variance()[1], (n * n - 1) as f64 / 12.0);

    // NCHW rows: a NaN poisons its channel only.
    let mut nchw: Vec<f64> = (0..2 * 300).map(|i| (i % 300) as f64).collect();
    nchw[7] = f64::NAN;
    let stats = BatchStats::<f64>::compute(&nchw, Layout::nchw(1, 2, 300, 1).unwrap()).unwrap();
    assert!(stats.mean()[0].is_nan() && stats.variance()[0].is_nan());
    assert_eq!(stats.mean()[1], 149.5);
}

#[test]
fn order_statistic_and_time_windows_on_hostile_input() {
    use momenta::{MovingMinMax, MovingQuantile, NanPolicy, TimeWindow};
    // NaN: Some(NaN) while in the window, exact once it has left; skipped
    // on request.
    let mut mm = MovingMinMax::new(2).unwrap();
    let mut mq = MovingQuantile::median(2).unwrap();
    let mut tw = TimeWindow::new(2.0).unwrap();
    for (t, x) in [(0.0, 1.0), (1.0, f64::NAN)] {
        mm.push(x);
        mq.push(x);
        tw.push_at(t, x).unwrap();
    }
    assert!(mm.min().unwrap().is_nan() && mm.range().unwrap().is_nan());
    assert!(mq.quantile().unwrap().is_nan());
    assert!(tw.max().unwrap().is_nan() && tw.mean().unwrap().is_nan());
    for (t, x) in [(2.0, 3.0), (3.0, 5.0)] {
        mm.push(x);
        mq.push(x);
        tw.push_at(t, x).unwrap();
    }
    assert_eq!((mm.min(), mm.max()), (Some(3.0), Some(5.0)));
    assert_eq!(mq.quantile(), Some(4.0));
    assert_eq!((tw.min(), tw.mean()), (Some(3.0), Some(4.0)));
    let mut skip = MovingQuantile::median(3)
        .unwrap()
        .with_nan_policy(NanPolicy::Skip);
    skip.extend_from_slice(&[f64::NAN, f64::NAN]);
    assert_eq!(skip.quantile(), None);
    // ±∞ are ordered values; the range of one infinity is NaN.
    mm.extend_from_slice(&[f64::NEG_INFINITY, f64::INFINITY]);
    assert_eq!(
        (mm.min(), mm.max()),
        (Some(f64::NEG_INFINITY), Some(f64::INFINITY))
    );
    assert_eq!(mm.range(), Some(f64::INFINITY));
    assert!(mq.push(f64::INFINITY) == 5.0_f64.max(f64::INFINITY));
    assert!(mq.push(f64::NEG_INFINITY).is_nan()); // between −∞ and +∞
    // Values near MAX: no overflow in the interpolation.
    mq.extend_from_slice(&[f64::MAX, -f64::MAX]);
    assert_eq!(mq.quantile(), Some(0.0));
    // Zeros: −0 below +0.
    mm.extend_from_slice(&[0.0, -0.0]);
    assert!(mm.min().unwrap().is_sign_negative() && mm.max().unwrap().is_sign_positive());
    // Windows and parameters at the extremes.
    let mut huge = MovingQuantile::new(usize::MAX, 1.0).unwrap();
    huge.extend_from_slice(&[3.0, 1.0, 2.0]);
    assert_eq!(huge.quantile(), Some(3.0));
    assert!(MovingMinMax::<f64>::new(0).is_err());
    assert!(MovingQuantile::<f64>::new(3, f64::NAN).is_err());
    assert!(TimeWindow::<f64>::new(f64::NAN).is_err());
    // Time that goes backwards or is not finite: an Err, nothing changes.
    let before = tw.clone();
    assert!(tw.push_at(2.5, 1.0).is_err());
    assert!(tw.push_at(f64::NAN, 1.0).is_err());
    assert_eq!(tw, before);
    // Subnormals are ordinary numbers.
    let tiny = f64::from_bits(1);
    let mut mq = MovingQuantile::median(2).unwrap();
    mq.extend_from_slice(&[tiny, 3.0 * tiny]);
    assert_eq!(mq.quantile(), Some(2.0 * tiny));
}
