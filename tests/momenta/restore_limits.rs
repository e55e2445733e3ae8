//! A restored state may hold NaN and ±∞ only where the type's own
//! arithmetic puts them: a NaN or ±∞ pushed propagates, so some fields of
//! a real stream's state are NaN or infinite, but only together with
//! others (a NaN mean makes M2 NaN; a limit is kept in the shift with an
//! offset of 0; a shift is a finite value pushed). Each state here is
//! written by hand so that no stream reaches it, and the error must name
//! the field. Beside them, states that streams do reach (NaN and ±∞
//! pushed, `f64` data beyond `f32`'s range) still restore.
#![cfg(feature = "serde")]

use momenta::batchnorm::{BatchStats, GradSums};
use momenta::{
    Closed, Covariance, EwCovariance, EwVariance, Kurtosis, Merge, MinMax, Momentum,
    MovingVariance, Skewness, TimeQuantile, TimeWindow, Variance, WeightedMean, WeightedVariance,
};
use serde::de::DeserializeOwned;

/// The error of restoring `json` as `T`, which must name every one of
/// `fields`; panics if it restores.
fn refused<T: DeserializeOwned>(json: &str, fields: &[&str]) -> String {
    let e = match serde_json::from_str::<T>(json) {
        Ok(_) => panic!("restored a state no stream reaches: {json}"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("invalid state"), "{e}");
    for field in fields {
        assert!(e.contains(field), "{field} not named in: {e}");
    }
    e
}

/// `json` with its one occurrence of `from` replaced by `to`.
fn spoil(json: &str, from: &str, to: &str) -> String {
    assert_eq!(json.matches(from).count(), 1, "{from} in {json}");
    json.replacen(from, to, 1)
}

/// `value` through JSON and back, the same state.
fn restores<T: serde::Serialize + DeserializeOwned>(value: &T) {
    let json = serde_json::to_string(value).unwrap();
    let back: T = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    assert_eq!(serde_json::to_string(&back).unwrap(), json);
}

#[test]
fn a_variance_refuses_a_nan_mean_beside_a_finite_m2() {
    // The hold-out probe: a NaN pushed makes m2 NaN too, so no stream
    // reads a finite variance beside a NaN mean.
    refused::<Variance<f64>>(
        r#"{"count":3,"shift":"NaN","offset":"0.0","m2":"1.0"}"#,
        &["shift", "m2"],
    );
    // A NaN offset: a limit is kept in the shift, with an offset of 0.
    refused::<Variance<f64>>(
        r#"{"count":2,"shift":"1.0","offset":"NaN","m2":"NaN"}"#,
        &["offset"],
    );
    refused::<Variance<f64>>(
        r#"{"count":2,"shift":"NaN","offset":"0.5","m2":"NaN"}"#,
        &["shift", "offset"],
    );
    // An infinite shift beside a finite m2, and its kin with an offset.
    refused::<Variance<f64>>(
        r#"{"count":2,"shift":"inf","offset":"0.0","m2":"0.0"}"#,
        &["shift", "m2"],
    );
    refused::<Variance<f64>>(
        r#"{"count":2,"shift":"-inf","offset":"1.0","m2":"NaN"}"#,
        &["shift", "offset"],
    );
    // A NaN m2 beside a finite mean.
    refused::<Variance<f64>>(
        r#"{"count":2,"shift":"1.0","offset":"0.5","m2":"NaN"}"#,
        &["m2"],
    );
    // The same rules hold for the parts.
    let e = Variance::<f64>::from_parts(momenta::VarianceParts {
        count: 3,
        shift: f64::NAN,
        offset: 0.0,
        m2: 1.0,
    })
    .unwrap_err();
    assert!(e.to_string().contains("m2"), "{e}");
}

#[test]
fn variances_that_streams_reach_still_restore() {
    // NaN and ±∞ pushed, and both infinities (∞ − ∞).
    for xs in [
        &[1.0, f64::NAN][..],
        &[1.0, f64::INFINITY, 2.0],
        &[f64::NEG_INFINITY],
        &[f64::INFINITY, f64::NEG_INFINITY],
        &[f64::MAX, -f64::MAX, 3.0],
    ] {
        let v: Variance<f64> = xs.iter().copied().collect();
        restores(&v);
    }
    // Merges that move the mean further than f64::MAX from a finite
    // shift overflow the offset (m2 is +∞ then), and a merge on that
    // offset re-bases onto a NaN mean, m2 still +∞.
    let pair = |a: f64, b: f64| {
        let mut v = Variance::<f64>::from_slice(&[a]);
        v.merge(&Variance::from_slice(&[b]));
        v
    };
    let mut v = pair(f64::MAX, 0.0);
    v.merge(&pair(0.0, -f64::MAX));
    v.merge(&pair(0.0, -f64::MAX));
    let parts = v.to_parts();
    assert_eq!((parts.shift, parts.offset), (f64::MAX, f64::NEG_INFINITY));
    restores(&v);
    v.merge(&Variance::from_slice(&[1.0]));
    assert!(v.to_parts().shift.is_nan() && v.to_parts().m2 == f64::INFINITY);
    restores(&v);
    // f32 state of f64 data beyond its range: the shift and the offset
    // overflow to ±∞ beside a finite m2 ...
    let wide = Variance::<f32>::from_slice(&[1e300_f64, 1e300]);
    assert_eq!(wide.mean(), Some(f32::INFINITY));
    restores(&wide);
    let mut far = Variance::<f32>::from_slice(&[0.0_f64, 2e300]);
    restores(&far);
    // ... and a merge on such an offset re-bases onto a NaN mean with an
    // m2 of +∞.
    far.merge(&Variance::from_slice(&[1.0_f64]));
    assert!(far.mean().unwrap().is_nan());
    restores(&far);
    let mut k = Kurtosis::<f32>::from_slice(&[0.0_f64, 2e300]);
    restores(&k);
    k.merge(&Kurtosis::from_slice(&[1.0_f64]));
    restores(&k);
}

#[test]
fn skewness_and_kurtosis_refuse_finite_higher_moments_beside_a_nan_m2() {
    // The value that makes m2 NaN makes m3 and m4 NaN too.
    refused::<Skewness<f64>>(
        r#"{"count":2,"shift":"NaN","offset":"0.0","m2":"NaN","m3":"0.0"}"#,
        &["m2", "m3"],
    );
    refused::<Kurtosis<f64>>(
        r#"{"count":3,"shift":"inf","offset":"0.0","m2":"NaN","m3":"NaN","m4":"2.0"}"#,
        &["m2", "m4"],
    );
    // One finite value leaves m3 and m4 at 0.
    refused::<Kurtosis<f64>>(
        r#"{"count":1,"shift":"2.0","offset":"0.0","m2":"0.0","m3":"NaN","m4":"NaN"}"#,
        &["m3", "m4"],
    );
    // The probe's kin, through the base moments.
    refused::<Kurtosis<f64>>(
        r#"{"count":3,"shift":"NaN","offset":"0.0","m2":"1.0","m3":"NaN","m4":"NaN"}"#,
        &["shift", "m2"],
    );
    // Reached: a NaN pushed, and deviations that overflow (NaN m3 and m4
    // beside a finite m2's neighbours).
    let k: Kurtosis<f64> = [1.0, f64::NAN].into_iter().collect();
    restores(&k);
    let k: Kurtosis<f64> = [f64::MAX, -f64::MAX, 1.0].into_iter().collect();
    restores(&k);
    let s: Skewness<f64> = [f64::INFINITY].into_iter().collect();
    restores(&s);
}

#[test]
fn a_covariance_refuses_a_nan_co_moment_beside_finite_m2s() {
    let finite = r#""shift_x":"1.0","offset_x":"0.5","m2_x":"0.5","shift_y":"1.0","offset_y":"0.5","m2_y":"0.5""#;
    refused::<Covariance<f64>>(
        &format!(r#"{{"count":2,{finite},"comoment":"NaN"}}"#),
        &["comoment", "m2"],
    );
    refused::<Covariance<f64>>(
        &format!(r#"{{"count":2,{finite},"comoment":"-inf"}}"#),
        &["comoment", "m2"],
    );
    // The probe's kin in a coordinate, named by its axis.
    refused::<Covariance<f64>>(
        r#"{"count":2,"shift_x":"NaN","offset_x":"0.0","m2_x":"0.5","shift_y":"1.0","offset_y":"0.5","m2_y":"0.5","comoment":"NaN"}"#,
        &["x: ", "shift", "m2"],
    );
    // Reached: a NaN pushed, and co-moments that overflow.
    let c: Covariance<f64> = [(1.0, 2.0), (f64::NAN, 1.0), (3.0, 0.0)]
        .into_iter()
        .collect();
    restores(&c);
    let c: Covariance<f64> = [(f64::MAX, f64::MAX), (-f64::MAX, -f64::MAX), (1.0, 1.0)]
        .into_iter()
        .collect();
    restores(&c);
}

#[test]
fn min_max_refuses_two_extremes_of_one_value() {
    refused::<MinMax<f64>>(r#"{"count":1,"min":"-1.0","max":"3.0"}"#, &["min", "max"]);
    refused::<MinMax<f64>>(r#"{"count":1,"min":"-0.0","max":"0.0"}"#, &["min", "max"]);
    for x in [f64::NAN, -0.0, f64::NEG_INFINITY] {
        let m: MinMax<f64> = [x].into_iter().collect();
        restores(&m);
    }
}

#[test]
fn weighted_statistics_refuse_a_nan_mean_beside_finite_sums() {
    // A NaN mean is kept in the shift, with an offset of 0.
    refused::<WeightedMean<f64>>(
        r#"{"count":2,"total_weight":"2.0","shift":"NaN","offset":"0.5"}"#,
        &["shift", "offset"],
    );
    refused::<WeightedMean<f64>>(
        r#"{"count":2,"total_weight":"2.0","shift":"1.0","offset":"NaN"}"#,
        &["offset"],
    );
    refused::<WeightedVariance<f64>>(
        r#"{"count":2,"total_weight":"2.0","reliability_divisor":"1.0","shift":"NaN","offset":"0.0","m2":"1.0"}"#,
        &["shift", "m2"],
    );
    refused::<WeightedVariance<f64>>(
        r#"{"count":2,"total_weight":"2.0","reliability_divisor":"1.0","shift":"inf","offset":"0.0","m2":"0.0"}"#,
        &["shift", "m2"],
    );
    refused::<WeightedVariance<f64>>(
        r#"{"count":2,"total_weight":"2.0","reliability_divisor":"1.0","shift":"1.0","offset":"0.5","m2":"NaN"}"#,
        &["m2"],
    );
    // Reached: a NaN of weight 0, an infinity, and a total weight that
    // overflows in a merge (every statistic then reads NaN).
    let mut v = WeightedVariance::<f64>::new();
    v.push(1.0, 1.0).unwrap();
    v.push(f64::NAN, 0.0).unwrap();
    restores(&v);
    let mut v = WeightedVariance::<f64>::new();
    v.push(f64::NEG_INFINITY, 2.0).unwrap();
    restores(&v);
    let mut big = WeightedVariance::<f64>::from_slices(&[1.0], &[1e308]).unwrap();
    big.merge(&WeightedVariance::from_slices(&[-5.0], &[1e308]).unwrap());
    assert_eq!(big.total_weight(), f64::INFINITY);
    restores(&big);
    big.merge(&big.clone());
    restores(&big);
    let mut m = WeightedMean::<f64>::from_slices(&[1.0], &[1e308]).unwrap();
    m.merge(&WeightedMean::from_slices(&[2.0], &[1e308]).unwrap());
    m.merge(&m.clone());
    restores(&m);
}

#[test]
fn exponential_statistics_refuse_a_shift_that_is_not_a_finite_value() {
    let mut e = EwVariance::<f64>::new(Momentum::Factor(0.5)).unwrap();
    e.push(1.0);
    e.push(3.0);
    let json = serde_json::to_string(&e).unwrap();
    refused::<EwVariance<f64>>(
        &spoil(&json, r#""shift":"1.0""#, r#""shift":"NaN""#),
        &["shift"],
    );
    refused::<EwVariance<f64>>(
        &spoil(&json, r#""shift":"1.0""#, r#""shift":"-inf""#),
        &["shift"],
    );
    // Reached: a NaN or ±∞ pushed goes into the offset.
    for x in [f64::NAN, f64::INFINITY] {
        let mut e = EwVariance::<f64>::new(Momentum::Factor(0.5)).unwrap();
        e.push(x);
        e.push(2.0);
        restores(&e);
    }

    let mut c = EwCovariance::<f64>::new(Momentum::Factor(0.5)).unwrap();
    c.push(1.0, 2.0);
    c.push(3.0, 5.0);
    let json = serde_json::to_string(&c).unwrap();
    refused::<EwCovariance<f64>>(
        &spoil(&json, r#""shift_y":"2.0""#, r#""shift_y":"inf""#),
        &["shift_y"],
    );
    // A covariance NaN beside finite variances: only a deviation that is
    // not finite turns it NaN, and that makes a variance +∞ or NaN.
    let at = json.find(r#""covariance":""#).unwrap() + r#""covariance":""#.len();
    let end = at + json[at..].find('"').unwrap();
    let spoiled = format!("{}NaN{}", &json[..at], &json[end..]);
    refused::<EwCovariance<f64>>(&spoiled, &["covariance", "variance_x"]);
    // Reached: a NaN pushed into one coordinate.
    let mut c = EwCovariance::<f64>::new(Momentum::Factor(0.5)).unwrap();
    c.push(1.0, 2.0);
    c.push(f64::NAN, 5.0);
    restores(&c);
}

#[test]
fn a_window_refuses_a_nan_m2_with_a_finite_churn() {
    // Values spanning more binades than the exact sums hold: the window
    // keeps compensated sums and M2, which its state carries.
    let mut w = MovingVariance::<f64>::new(4).unwrap();
    for x in [1e200, 1e-200, 2e-200] {
        w.push(x);
    }
    let json = serde_json::to_string(&w).unwrap();
    let at = json.find(r#""m2":{"value":""#).unwrap() + r#""m2":{"value":""#.len();
    let end = at + json[at..].find('"').unwrap();
    // M2 NaN or +∞ is one just taken afresh, whose churn is itself.
    for m2 in ["NaN", "inf"] {
        let spoiled = format!("{}{m2}{}", &json[..at], &json[end..]);
        refused::<MovingVariance<f64>>(&spoiled, &["engine.sums.m2.value", "churn"]);
    }
    // Reached: NaN and ±∞ in the values (they are counted, not summed),
    // and values whose squares overflow.
    let mut w = MovingVariance::<f64>::new(3).unwrap();
    for x in [1.0, f64::NAN, f64::INFINITY, 2.0, 1e300, -1e300, f64::MAX] {
        w.push(x);
        restores(&w);
    }
}

#[test]
fn time_windows_refuse_a_time_that_is_not_finite() {
    // With an infinite span closed on the left, a sample at −∞ would pass
    // for one inside it; a push refuses every time that is not finite.
    let mut t = TimeWindow::<f64>::new(f64::INFINITY)
        .unwrap()
        .with_closed(Closed::Both);
    t.push_at(0.0, 1.0).unwrap();
    t.push_at(1.0, 2.0).unwrap();
    let json = serde_json::to_string(&t).unwrap();
    let spoiled = spoil(&json, r#""times":["0.0""#, r#""times":["-inf""#);
    refused::<TimeWindow<f64>>(&spoiled, &["time", "-inf"]);
    restores(&t);

    let mut q = TimeQuantile::<f64>::new(f64::INFINITY, 0.5)
        .unwrap()
        .with_closed(Closed::Left);
    q.push_at(0.0, 1.0).unwrap();
    q.push_at(1.0, 2.0).unwrap();
    q.push_at(2.0, 3.0).unwrap();
    let json = serde_json::to_string(&q).unwrap();
    let spoiled = spoil(&json, r#""times":["0.0""#, r#""times":["-inf""#);
    refused::<TimeQuantile<f64>>(&spoiled, &["time", "-inf"]);
}

#[test]
fn batch_statistics_refuse_a_nan_offset_and_keep_what_they_receive() {
    refused::<BatchStats<f64>>(
        r#"{"count":2,"shift":["1.0"],"offset":["NaN"],"m2":["NaN"],"poisoned":false}"#,
        &["offset"],
    );
    refused::<BatchStats<f64>>(
        r#"{"count":2,"shift":["inf"],"offset":["1.0"],"m2":["NaN"],"poisoned":false}"#,
        &["shift", "offset"],
    );
    // A channel may hold any mean beside any M2 that `from_mean_m2`
    // takes (a framework's mean may overflow where its M2 does not).
    let received =
        BatchStats::<f64>::from_mean_m2(2, &[f64::NAN, f64::INFINITY], &[1.0, 0.0]).unwrap();
    restores(&received);
}

#[test]
fn gradient_sums_refuse_finite_sums_about_a_nan_centre() {
    refused::<GradSums<f64>>(
        r#"{"count":2,"centre":["NaN"],"sum_dy":["1.0"],"sum_dy_dx":["0.5"],"poisoned":false}"#,
        &["centre", "sum_dy_dx"],
    );
    refused::<GradSums<f64>>(
        r#"{"count":2,"centre":["1.0","-inf"],"sum_dy":["1.0","0.0"],"sum_dy_dx":["0.5","0.0"],"poisoned":false}"#,
        &["centre[1]", "sum_dy_dx[1]"],
    );
    // Reached: statistics with a NaN or infinite shift.
    use momenta::batchnorm::Layout;
    for bad in [f64::NAN, f64::INFINITY] {
        let xs = [1.0, bad, 2.0, 4.0];
        let layout = Layout::nc(2, 2).unwrap();
        let stats = BatchStats::<f64>::compute(&xs, layout).unwrap();
        let sums = GradSums::compute(&xs, &[0.0, 1.0, 0.5, -1.0], layout, &stats).unwrap();
        restores(&sums);
    }
}
