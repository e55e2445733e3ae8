//! Arbitrary bytes deserialized with serde_json as every state type.
//!
//! Deserializing must never panic. When it succeeds, the value must satisfy
//! its type's invariants (statistics present exactly when they should be,
//! no negative variance, a window that holds at most `window` values), and
//! using it — serializing it again, pushing values, merging, reading every
//! statistic — must not panic either.
#![no_main]

use libfuzzer_sys::fuzz_target;
use momenta::{
    Covariance, Ema, EwCovariance, EwVariance, ExactCoSums, ExactSums, Float, GroupedCoSums,
    Kurtosis, Mean, Merge, MinMax, Momentum, MovingAverage, MovingMinMax, MovingQuantile,
    MovingVariance, Skewness, TimeWindow, Variance, WeightedMean, WeightedVariance,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Values pushed into every restored accumulator.
const PUSHES: [f64; 6] = [0.0, 1.0, -1.0, 1e300, f64::NAN, 2.5];

fn non_negative(s: Option<impl Float>) {
    if let Some(s) = s {
        assert!(
            s >= Float::from_f64(0.0) || s.is_nan(),
            "negative spread {s}"
        );
    }
}

/// A restored state serializes, and the JSON restores again to the same
/// text (every float, NaN and ±∞ included, travels as an exact string).
fn reserialize<T: Serialize + DeserializeOwned>(value: &T) {
    let json = serde_json::to_string(value).expect("serializing never fails");
    match serde_json::from_str::<T>(&json) {
        Ok(back) => assert_eq!(serde_json::to_string(&back).unwrap(), json),
        Err(e) => panic!("restored state does not restore again: {e}: {json}"),
    }
}

fn mean<F: Float + Serialize + DeserializeOwned>(data: &[u8]) {
    let Ok(mut m) = serde_json::from_slice::<Mean<F>>(data) else {
        return;
    };
    reserialize(&m);
    assert_eq!(m.mean().is_some(), m.count() > 0);
    let before = m.count();
    m.merge(&m.clone());
    assert!(m.count() >= before);
    for x in PUSHES {
        m.push(F::from_f64(x));
        assert!(m.mean().is_some());
    }
    m.extend_from_slice(&PUSHES);
    let _ = serde_json::to_string(&m);
}

fn variance<F: Float + Serialize + DeserializeOwned>(data: &[u8]) {
    let Ok(mut v) = serde_json::from_slice::<Variance<F>>(data) else {
        return;
    };
    reserialize(&v);
    let check = |v: &Variance<F>| {
        let n = v.count();
        assert_eq!(v.mean().is_some(), n > 0);
        assert_eq!(v.population_variance().is_some(), n > 0);
        assert_eq!(v.sample_variance().is_some(), n > 1);
        non_negative(v.population_variance());
        non_negative(v.sample_variance());
        non_negative(v.sum_squared_deviations());
        non_negative(v.population_std_dev());
        non_negative(v.sample_std_dev());
    };
    check(&v);
    let before = v.count();
    v.merge(&v.clone());
    assert!(v.count() >= before);
    check(&v);
    for x in PUSHES {
        v.push(F::from_f64(x));
        check(&v);
    }
    v.extend_from_slice(&PUSHES);
    check(&v);
    let _ = serde_json::to_string(&v);
}

fn covariance<F: Float + Serialize + DeserializeOwned>(data: &[u8]) {
    let Ok(mut c) = serde_json::from_slice::<Covariance<F>>(data) else {
        return;
    };
    reserialize(&c);
    let check = |c: &Covariance<F>| {
        let n = c.count();
        assert_eq!(c.mean_x().is_some(), n > 0);
        assert_eq!(c.sample_covariance().is_some(), n > 1);
        non_negative(c.population_variance_x());
        non_negative(c.sample_variance_y());
        if let Some(r) = c.correlation() {
            assert!(r.is_nan() || r.abs() <= F::one(), "correlation {r}");
        }
    };
    check(&c);
    c.merge(&c.clone());
    check(&c);
    for x in PUSHES {
        c.push(F::from_f64(x), F::from_f64(-x));
        check(&c);
    }
}

fn weighted<F: Float + Serialize + DeserializeOwned>(data: &[u8]) {
    if let Ok(mut m) = serde_json::from_slice::<WeightedMean<F>>(data) {
        reserialize(&m);
        assert_eq!(m.mean().is_some(), m.total_weight() > F::zero());
        m.merge(&m.clone());
        for x in PUSHES {
            let _ = m.push(F::from_f64(x), F::from_f64(x.abs()));
        }
    }
    let Ok(mut v) = serde_json::from_slice::<WeightedVariance<F>>(data) else {
        return;
    };
    reserialize(&v);
    let check = |v: &WeightedVariance<F>| {
        assert_eq!(v.mean().is_some(), v.total_weight() > F::zero());
        non_negative(v.population_variance());
        non_negative(v.sample_variance());
        non_negative(v.reliability_variance());
    };
    check(&v);
    v.merge(&v.clone());
    check(&v);
    for x in PUSHES {
        let _ = v.push(F::from_f64(x), F::from_f64(x.abs()));
        check(&v);
    }
}

fn kurtosis<F: Float + Serialize + DeserializeOwned>(data: &[u8]) {
    let Ok(mut k) = serde_json::from_slice::<Kurtosis<F>>(data) else {
        return;
    };
    reserialize(&k);
    let check = |k: &Kurtosis<F>| {
        let n = k.count();
        assert_eq!(k.mean().is_some(), n > 0);
        assert!(k.sample_skewness().is_none() || n > 2);
        assert!(k.sample_kurtosis().is_none() || n > 3);
        non_negative(k.population_variance());
    };
    check(&k);
    k.merge(&k.clone());
    check(&k);
    for x in PUSHES {
        k.push(F::from_f64(x));
        check(&k);
    }
    k.extend_from_slice(&PUSHES);
    check(&k);
    let Ok(mut s) = serde_json::from_slice::<Skewness<F>>(data) else {
        return;
    };
    reserialize(&s);
    s.merge(&s.clone());
    s.extend_from_slice(&PUSHES);
    assert!(s.sample_skewness().is_none() || s.count() > 2);
}

fn min_max<F: Float + Serialize + DeserializeOwned>(data: &[u8]) {
    let Ok(mut m) = serde_json::from_slice::<MinMax<F>>(data) else {
        return;
    };
    reserialize(&m);
    let check = |m: &MinMax<F>| {
        assert_eq!(m.min().is_some(), m.count() > 0);
        if let (Some(lo), Some(hi)) = (m.min(), m.max()) {
            assert_eq!(lo.is_nan(), hi.is_nan(), "one extreme NaN: {lo} {hi}");
            assert!(lo.is_nan() || lo <= hi, "min {lo} above max {hi}");
        }
    };
    check(&m);
    m.merge(&m.clone());
    for x in PUSHES {
        m.push(F::from_f64(x));
        check(&m);
    }
    m.extend_from_slice(&PUSHES);
    check(&m);
}

fn ema(data: &[u8]) {
    let Ok(mut e) = serde_json::from_slice::<Ema<f64>>(data) else {
        return;
    };
    reserialize(&e);
    assert!(
        e.momentum().validate().is_ok(),
        "restored an invalid momentum"
    );
    if e.count() == 0 && !e.is_bias_corrected() {
        // Empty: the value is the initial one, if any.
        let json = serde_json::to_value(&e).unwrap();
        assert_eq!(
            e.value().is_some(),
            !json["initial"].is_null() && e.is_ready()
        );
    }
    for x in PUSHES {
        let before = e.count();
        e.push(x);
        assert!(e.count() >= before);
        let _ = e.value();
        let _ = e.push_after(0.25, x);
        let _ = e.push_at(3.0, x);
        let _ = e.value();
    }
    e.reset();
    assert_eq!(e.count(), 0);
    let _ = serde_json::to_string(&e);
}

fn ew_variance(data: &[u8]) {
    let Ok(mut e) = serde_json::from_slice::<EwVariance<f64>>(data) else {
        return;
    };
    reserialize(&e);
    assert!(
        e.momentum().validate().is_ok(),
        "restored an invalid momentum"
    );
    let check = |e: &EwVariance<f64>| {
        assert_eq!(e.mean().is_some(), e.is_ready());
        assert_eq!(e.variance().is_some(), e.is_ready());
        assert!(!e.is_ready() || e.count() > 0);
        non_negative(e.variance());
        non_negative(e.unbiased_variance());
        non_negative(e.std_dev());
        let _ = e.z_score(1.0);
        let _ = e.effective_count();
    };
    check(&e);
    for x in PUSHES {
        e.push(x);
        check(&e);
        let _ = e.push_after(2.5, x);
        check(&e);
        let _ = e.push_at(1e3, x);
        check(&e);
    }
    let _ = serde_json::to_string(&e);
}

fn ew_covariance(data: &[u8]) {
    let Ok(mut c) = serde_json::from_slice::<EwCovariance<f64>>(data) else {
        return;
    };
    reserialize(&c);
    assert!(
        c.momentum().validate().is_ok(),
        "restored an invalid momentum"
    );
    let check = |c: &EwCovariance<f64>| {
        assert_eq!(c.mean_x().is_some(), c.is_ready());
        assert_eq!(c.covariance().is_some(), c.is_ready());
        non_negative(c.variance_x());
        non_negative(c.variance_y());
        if let Some(r) = c.correlation() {
            assert!(r.is_nan() || (-1.0..=1.0).contains(&r), "correlation {r}");
        }
        let _ = c.unbiased_covariance();
        let _ = c.effective_count();
    };
    check(&c);
    for x in PUSHES {
        c.push(x, 2.0 - x);
        check(&c);
        let _ = c.push_after(0.5, x, x);
        let _ = c.push_at(-7.0, x, 1.0);
        check(&c);
    }
    c.reset();
    assert_eq!(c.count(), 0);
    let _ = serde_json::to_string(&c);
}

fn moving_average(data: &[u8]) {
    let Ok(mut a) = serde_json::from_slice::<MovingAverage<f64>>(data) else {
        return;
    };
    reserialize(&a);
    assert!(a.window() >= 1);
    assert!(a.len() <= a.window());
    assert_eq!(a.iter().count(), a.len());
    assert_eq!(a.mean().is_some(), a.is_ready());
    assert!(!a.is_ready() || !a.is_empty());
    for x in PUSHES {
        let m = a.push(x);
        assert!(a.len() <= a.window());
        assert!(a.mean().map(f64::to_bits) == Some(m.to_bits()) || m.is_nan());
    }
    a.extend_from_slice(&PUSHES);
    let _ = serde_json::to_string(&a);
}

fn moving_variance(data: &[u8]) {
    let Ok(mut v) = serde_json::from_slice::<MovingVariance<f64>>(data) else {
        return;
    };
    reserialize(&v);
    let check = |v: &MovingVariance<f64>| {
        assert!(v.window() >= 1);
        assert!(v.len() <= v.window());
        assert_eq!(v.iter().count(), v.len());
        assert_eq!(v.mean().is_some(), v.is_ready());
        assert!(v.sample_variance().is_none() || (v.is_ready() && v.len() > 1));
        non_negative(v.population_variance());
        non_negative(v.sample_variance());
        non_negative(v.population_std_dev());
        non_negative(v.sample_std_dev());
    };
    check(&v);
    for x in PUSHES {
        v.push(x);
        check(&v);
    }
    v.extend_from_slice(&PUSHES);
    check(&v);
    let _ = serde_json::to_string(&v);
}

/// The order-statistic windows: deques and ordered sets are rebuilt from
/// the values, so a restored window answers like a fresh one fed them.
fn order_statistics(data: &[u8]) {
    if let Ok(mut m) = serde_json::from_slice::<MovingMinMax<f64>>(data) {
        reserialize(&m);
        let check = |m: &MovingMinMax<f64>| {
            assert!(m.window() >= 1 && m.len() <= m.window());
            assert_eq!(m.min().is_some(), m.is_ready());
            assert_eq!(m.max().is_some(), m.is_ready());
            if let (Some(lo), Some(hi)) = (m.min(), m.max()) {
                assert!(!(lo > hi), "min {lo} above max {hi}");
            }
        };
        check(&m);
        for x in PUSHES {
            m.push(x);
            check(&m);
        }
    }
    if let Ok(mut q) = serde_json::from_slice::<MovingQuantile<f64>>(data) {
        reserialize(&q);
        assert!((0.0..=1.0).contains(&q.q()));
        assert!(q.window() >= 1 && q.len() <= q.window());
        for x in PUSHES {
            let got = q.push(x);
            assert!(q.quantile().map(f64::to_bits) == Some(got.to_bits()) || got.is_nan());
        }
    }
    if let Ok(mut w) = serde_json::from_slice::<TimeWindow<f64>>(data) {
        reserialize(&w);
        assert!(w.span() > 0.0);
        let start = w.last_time().unwrap_or(0.0);
        for (i, x) in PUSHES.into_iter().enumerate() {
            let t = start + i as f64;
            if w.push_at(t, x).is_ok() {
                assert_eq!(w.mean().is_some(), w.is_ready());
                non_negative(w.population_variance());
                non_negative(w.sample_variance());
            }
        }
    }
}

fn momentum(data: &[u8]) {
    // A momentum alone is a parameter, not a state: any value restores,
    // and the constructors then judge it.
    let Ok(m) = serde_json::from_slice::<Momentum<f64>>(data) else {
        return;
    };
    reserialize(&m);
    let valid = m.validate().is_ok();
    assert_eq!(Ema::new(m).is_ok(), valid);
    assert_eq!(EwVariance::new(m).is_ok(), valid);
    for n in [0, 1, 2, u64::MAX] {
        let _ = (m.factor(n), m.decay(n), m.blend(1.0, 2.0, n));
    }
}

/// BatchNorm state: restored values satisfy their invariants and work.
fn batchnorm(data: &[u8]) {
    use momenta::batchnorm::{BatchStats, BnConfig, Layout, RunningStats};
    if let Ok(config) = serde_json::from_slice::<BnConfig<f64>>(data) {
        reserialize(&config);
        assert!(config.eps() >= config.min_eps());
        let _ = RunningStats::new(2, config);
    }
    if let Ok(mut stats) = serde_json::from_slice::<BatchStats<f64>>(data) {
        reserialize(&stats);
        for v in stats.variance().iter().chain(&stats.unbiased_variance()) {
            assert!(!(*v < 0.0), "negative variance {v}");
        }
        let copy = stats.clone();
        let _ = stats.try_merge(&copy);
        let _ = stats.inv_std(1e-5);
    }
    if let Ok(mut running) = serde_json::from_slice::<RunningStats<f64>>(data) {
        reserialize(&running);
        assert_eq!(running.mean().len(), running.var().len());
        for v in running.var() {
            assert!(!(*v < 0.0), "negative running variance {v}");
        }
        let c = running.channels();
        if let Ok(layout) = Layout::nc(2, c) {
            let xs: Vec<f64> = (0..2 * c).map(|i| i as f64).collect();
            if let Ok(batch) = BatchStats::<f64>::compute(&xs, layout) {
                let _ = running.update(&batch);
            }
            let mut out = vec![0.0; xs.len()];
            let _ = running.normalize(&xs, layout, None, None, &mut out);
        }
    }
}

/// The exact sums: whatever restores reads every statistic without a
/// panic, a variance not negative and a correlation within [−1, 1], and
/// goes on taking values.
fn exact(data: &[u8]) {
    if let Ok(mut s) = serde_json::from_slice::<ExactSums>(data) {
        reserialize(&s);
        let _ = s.mean();
        non_negative(s.population_variance());
        non_negative(s.sample_variance());
        for x in PUSHES {
            s.add(x);
            non_negative(s.sample_variance());
        }
    }
    if let Ok(mut s) = serde_json::from_slice::<ExactCoSums>(data) {
        reserialize(&s);
        for (x, y) in PUSHES.iter().zip(PUSHES.iter().rev()) {
            let r = s.to_covariance().correlation();
            assert!(r.is_none_or(|r| r.abs() <= 1.0), "correlation {r:?}");
            s.add(*x, *y);
        }
    }
    if let Ok(mut g) = serde_json::from_slice::<GroupedCoSums>(data) {
        reserialize(&g);
        for group in 0..g.len().min(4) {
            for (x, y) in PUSHES.iter().zip(PUSHES.iter().rev()) {
                let _ = g.add(group, *x, *y);
            }
            let _ = g.sums(group).map(|s| s.comoment());
        }
    }
}

fuzz_target!(|data: &[u8]| {
    batchnorm(data);
    mean::<f64>(data);
    mean::<f32>(data);
    variance::<f64>(data);
    variance::<f32>(data);
    covariance::<f64>(data);
    covariance::<f32>(data);
    weighted::<f64>(data);
    weighted::<f32>(data);
    kurtosis::<f64>(data);
    kurtosis::<f32>(data);
    min_max::<f64>(data);
    min_max::<f32>(data);
    ema(data);
    ew_variance(data);
    ew_covariance(data);
    moving_average(data);
    moving_variance(data);
    order_statistics(data);
    momentum(data);
    exact(data);
});
