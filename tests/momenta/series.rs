//! The whole-series slice APIs: every value of a series, and the state it
//! leaves, are the push loop's bit for bit, on calm and hostile data, cut
//! into slices anywhere; values recorded from pandas; hostile input.

use crate::support::SplitMix;
use momenta::{
    Ema, EwCovariance, EwVariance, Momentum, MovingAverage, MovingMinMax, MovingQuantile,
    MovingVariance, NanPolicy, TimeWindow,
};
use serde::Serialize;

/// The bits of a value, so that NaN compares (and its payload with it).
fn bits(xs: &[f64]) -> Vec<u64> {
    xs.iter().map(|x| x.to_bits()).collect()
}

/// A state's checkpoint, which shows every bit of it.
fn json<T: Serialize>(t: &T) -> String {
    serde_json::to_string(t).unwrap()
}

/// The same two slices, bit for bit (NaN too).
fn same_slices(a: (&[f64], &[f64]), b: (&[f64], &[f64])) -> bool {
    (bits(a.0), bits(a.1)) == (bits(b.0), bits(b.1))
}

/// Calm data far from zero: `1e6 + U(0, 1)`.
fn calm(n: usize, seed: u64) -> Vec<f64> {
    SplitMix(seed).vec(n, 1e6, 1.0)
}

/// Hostile data: a leading outlier, level changes of both signs, huge
/// values that enter and leave, values near `f64::MAX`, NaN and both
/// infinities, signed zeros and constant runs.
fn hostile(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = SplitMix(seed);
    let mut xs = Vec::with_capacity(n);
    xs.push(1e12);
    while xs.len() < n {
        let i = xs.len();
        let x = match (i / 97) % 8 {
            0 => 1e6 + rng.unit(),
            1 => -3e9 + rng.signed_unit() * 1e-3,
            2 => match rng.next_u64() % 16 {
                0 => f64::NAN,
                1 => f64::INFINITY,
                2 => f64::NEG_INFINITY,
                3 => 1e300,
                4 => -1e300,
                _ => rng.signed_unit(),
            },
            3 => 0.25,
            4 => {
                if rng.next_u64().is_multiple_of(2) {
                    0.0
                } else {
                    -0.0
                }
            }
            5 => f64::MAX * rng.signed_unit(),
            6 => rng.signed_unit() * 1e-300,
            _ => 42.0 + (i % 5) as f64,
        };
        xs.push(x);
    }
    xs
}

/// Cut points: the slice cut into pieces of random lengths, some empty,
/// some longer than any window.
fn cuts(n: usize, seed: u64) -> Vec<usize> {
    let mut rng = SplitMix(seed);
    let mut at = vec![0];
    let mut i = 0;
    while i < n {
        let step = match rng.next_u64() % 4 {
            0 => 0,
            1 => (rng.next_u64() % 7) as usize,
            2 => (rng.next_u64() % 300) as usize,
            _ => (rng.next_u64() % 5000) as usize,
        };
        i = (i + step).min(n);
        at.push(i);
    }
    at
}

/// Feeds `xs` to one state by the push loop (`push` then `read`) and to a
/// clone by `series` over the pieces `cuts` makes, and checks every value
/// and the state after (its checkpoint, and 3000 later pushes) bit for bit.
fn check<S: Clone + Serialize>(
    what: &str,
    start: &S,
    xs: &[f64],
    cut: &[usize],
    push_read: impl Fn(&mut S, f64) -> f64,
    series: impl Fn(&mut S, &[f64]) -> Vec<f64>,
) {
    let mut pushed = start.clone();
    let want: Vec<f64> = xs.iter().map(|&x| push_read(&mut pushed, x)).collect();
    let mut sliced = start.clone();
    let mut got = Vec::with_capacity(xs.len());
    for w in cut.windows(2) {
        got.extend(series(&mut sliced, &xs[w[0]..w[1]]));
    }
    assert_eq!(got.len(), want.len(), "{what}");
    if let Some(i) = (0..want.len()).find(|&i| want[i].to_bits() != got[i].to_bits()) {
        panic!(
            "{what}: value {i} is {:e} by the series, {:e} by the push loop",
            got[i], want[i]
        );
    }
    assert_eq!(
        serde_json::to_string(&sliced).unwrap(),
        serde_json::to_string(&pushed).unwrap(),
        "{what}: the state after the series"
    );
    let more = hostile(3000, 99);
    let a: Vec<f64> = more.iter().map(|&x| push_read(&mut pushed, x)).collect();
    let b: Vec<f64> = more.iter().map(|&x| push_read(&mut sliced, x)).collect();
    assert_eq!(bits(&a), bits(&b), "{what}: pushes after the series");
}

const WINDOWS: [usize; 8] = [1, 2, 3, 5, 20, 101, 1000, 4099];

/// Every option a window takes: the NaN policy and `min_periods`.
fn options(window: usize) -> [(NanPolicy, usize); 3] {
    [
        (NanPolicy::Propagate, 1),
        (NanPolicy::Skip, 1),
        (NanPolicy::Propagate, window.min(7)),
    ]
}

/// The data sets every window series is checked on.
fn data_sets() -> Vec<(&'static str, Vec<f64>)> {
    vec![
        ("calm", calm(20_000, 1)),
        ("hostile", hostile(20_000, 2)),
        ("short", hostile(9, 3)),
    ]
}

#[test]
fn moving_average_series_is_the_push_loop() {
    for (name, xs) in data_sets() {
        for window in WINDOWS {
            for (nan, min_periods) in options(window) {
                let start = MovingAverage::new(window)
                    .unwrap()
                    .with_nan_policy(nan)
                    .with_min_periods(min_periods)
                    .unwrap();
                check(
                    &format!("{name}, window {window}, {nan:?}, min_periods {min_periods}"),
                    &start,
                    &xs,
                    &cuts(xs.len(), window as u64),
                    |a, x| a.push(x),
                    |a, xs| a.mean_series(xs),
                );
            }
        }
    }
}

#[test]
fn moving_variance_series_are_the_push_loop() {
    type Read = fn(&MovingVariance<f64>) -> Option<f64>;
    type Series = fn(&mut MovingVariance<f64>, &[f64]) -> Vec<f64>;
    let stats: [(&str, Read, Series); 5] = [
        ("mean", MovingVariance::mean, MovingVariance::mean_series),
        (
            "sample variance",
            MovingVariance::sample_variance,
            MovingVariance::sample_variance_series,
        ),
        (
            "population variance",
            MovingVariance::population_variance,
            MovingVariance::population_variance_series,
        ),
        (
            "sample std",
            MovingVariance::sample_std_dev,
            MovingVariance::sample_std_dev_series,
        ),
        (
            "population std",
            MovingVariance::population_std_dev,
            MovingVariance::population_std_dev_series,
        ),
    ];
    for (name, xs) in data_sets() {
        for window in WINDOWS {
            for (nan, min_periods) in options(window) {
                for (stat, read, series) in stats {
                    let start = MovingVariance::new(window)
                        .unwrap()
                        .with_nan_policy(nan)
                        .with_min_periods(min_periods)
                        .unwrap();
                    check(
                        &format!(
                            "{stat}, {name}, window {window}, {nan:?}, min_periods {min_periods}"
                        ),
                        &start,
                        &xs,
                        &cuts(xs.len(), window as u64 + 5),
                        |v, x| {
                            v.push(x);
                            read(v).unwrap_or(f64::NAN)
                        },
                        series,
                    );
                }
            }
        }
    }
}

#[test]
fn moving_min_max_series_are_the_push_loop() {
    type Read = fn(&MovingMinMax<f64>) -> Option<f64>;
    type Series = fn(&mut MovingMinMax<f64>, &[f64]) -> Vec<f64>;
    let stats: [(&str, Read, Series); 3] = [
        ("min", MovingMinMax::min, MovingMinMax::min_series),
        ("max", MovingMinMax::max, MovingMinMax::max_series),
        ("range", MovingMinMax::range, MovingMinMax::range_series),
    ];
    for (name, xs) in data_sets() {
        for window in WINDOWS {
            for (nan, min_periods) in options(window) {
                for (stat, read, series) in stats {
                    let start = MovingMinMax::new(window)
                        .unwrap()
                        .with_nan_policy(nan)
                        .with_min_periods(min_periods)
                        .unwrap();
                    let what = format!(
                        "{stat}, {name}, window {window}, {nan:?}, min_periods {min_periods}"
                    );
                    check(
                        &what,
                        &start,
                        &xs,
                        &cuts(xs.len(), window as u64 + 9),
                        |m, x| {
                            m.push(x);
                            read(m).unwrap_or(f64::NAN)
                        },
                        series,
                    );
                    // The ring's head too, which only `as_slices` shows.
                    let (mut a, mut b) = (start.clone(), start.clone());
                    for &x in &xs {
                        a.push(x);
                    }
                    let _ = series(&mut b, &xs);
                    assert!(same_slices(a.as_slices(), b.as_slices()), "{what}");
                    let mut c = start.clone();
                    c.extend_from_slice(&xs);
                    assert!(same_slices(a.as_slices(), c.as_slices()), "{what}");
                }
            }
        }
    }
}

#[test]
fn moving_quantile_series_are_the_push_loop() {
    for (name, xs) in data_sets() {
        for window in WINDOWS {
            for (nan, min_periods) in options(window) {
                for q in [0.5, 0.0, 1.0, 0.3] {
                    let start = MovingQuantile::new(window, q)
                        .unwrap()
                        .with_nan_policy(nan)
                        .with_min_periods(min_periods)
                        .unwrap();
                    let what = format!(
                        "q {q}, {name}, window {window}, {nan:?}, min_periods {min_periods}"
                    );
                    check(
                        &what,
                        &start,
                        &xs,
                        &cuts(xs.len(), window as u64 + 13),
                        |m, x| m.push(x),
                        |m, xs| m.quantile_series(xs),
                    );
                    let (mut a, mut b) = (start.clone(), start.clone());
                    for &x in &xs {
                        a.push(x);
                    }
                    b.extend_from_slice(&xs);
                    assert!(same_slices(a.as_slices(), b.as_slices()), "{what}");
                }
            }
        }
    }
}

#[test]
fn a_series_through_refreshes_is_the_push_loop() {
    // 140 000 pushes: the sums are taken afresh at the wraps after 65 536
    // and 131 072 pushes into the full window.
    let xs = calm(140_000, 4);
    for window in [1, 3, 20, 1000] {
        let start = MovingVariance::new(window).unwrap();
        check(
            &format!("window {window}"),
            &start,
            &xs,
            &[0, 1, 70_001, 140_000],
            |v, x| {
                v.push(x);
                v.sample_variance().unwrap_or(f64::NAN)
            },
            MovingVariance::sample_variance_series,
        );
    }
}

#[test]
fn f32_series_are_the_push_loop() {
    let xs: Vec<f32> = hostile(5000, 5).iter().map(|&x| x as f32).collect();
    for window in [1, 4, 20, 101] {
        let mut pushed = MovingVariance::<f32>::new(window).unwrap();
        let mut sliced = pushed.clone();
        let want: Vec<u32> = xs
            .iter()
            .map(|&x| {
                pushed.push(x);
                pushed.sample_variance().unwrap_or(f32::NAN).to_bits()
            })
            .collect();
        let got: Vec<u32> = sliced
            .sample_variance_series(&xs)
            .iter()
            .map(|x| x.to_bits())
            .collect();
        assert_eq!(got, want, "window {window}");
        let mut a = MovingAverage::<f32>::new(window).unwrap();
        let mut b = a.clone();
        let want: Vec<u32> = xs.iter().map(|&x| a.push(x).to_bits()).collect();
        let got: Vec<u32> = b.mean_series(&xs).iter().map(|x| x.to_bits()).collect();
        assert_eq!(got, want, "window {window}");
    }
}

#[test]
fn extend_from_slice_leaves_the_push_loops_state() {
    // Before, a slice longer than the window reset the window and pushed
    // only its last `window` values: the same values, but sums with
    // another history and the ring's head elsewhere, so 465 of the next
    // 1000 variances differed in their last bits.
    let mut rng = SplitMix(7);
    let xs: Vec<f64> = (0..1000).map(|_| 1e6 + rng.unit()).collect();
    let more: Vec<f64> = (0..1000).map(|_| 1e6 + rng.unit()).collect();
    let mut pushed = MovingVariance::<f64>::new(20).unwrap();
    let mut mean_pushed = MovingAverage::<f64>::new(20).unwrap();
    for &x in &xs {
        pushed.push(x);
        mean_pushed.push(x);
    }
    let mut sliced = MovingVariance::<f64>::new(20).unwrap();
    let mut mean_sliced = MovingAverage::<f64>::new(20).unwrap();
    sliced.extend_from_slice(&xs);
    mean_sliced.extend_from_slice(&xs);
    let mut differ = 0;
    for &x in &more {
        pushed.push(x);
        sliced.push(x);
        let (a, b) = (mean_pushed.push(x), mean_sliced.push(x));
        let (va, vb) = (pushed.sample_variance(), sliced.sample_variance());
        if va.map(f64::to_bits) != vb.map(f64::to_bits) || a.to_bits() != b.to_bits() {
            differ += 1;
        }
    }
    assert_eq!(differ, 0);
    assert!(same_slices(sliced.as_slices(), pushed.as_slices()));
}

#[test]
fn a_buffer_of_the_wrong_length_is_an_error_and_changes_nothing() {
    let mut a = MovingAverage::<f64>::new(3).unwrap();
    a.push(1.0);
    let mut out = [0.0; 2];
    let e = a.mean_series_into(&[1.0, 2.0, 3.0], &mut out).unwrap_err();
    assert_eq!(e.to_string(), "output must have length 3, got 2");
    assert_eq!(a.len(), 1);
    let mut v = MovingVariance::<f64>::new(3).unwrap();
    assert!(v.sample_variance_series_into(&[1.0], &mut out).is_err());
    assert!(v.is_empty());
}

/// Times for `n` samples: irregular steps, repeats, long gaps.
fn times(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = SplitMix(seed);
    let mut t = 1e6;
    (0..n)
        .map(|_| {
            t += match rng.next_u64() % 8 {
                0 => 0.0,
                1 => 250.0 * rng.unit(),
                _ => rng.unit(),
            };
            t
        })
        .collect()
}

#[test]
fn exponential_series_are_the_push_loop() {
    let xs = hostile(6000, 21);
    let ys = hostile(6000, 22);
    let ts = times(6000, 23);
    let momenta = [
        Momentum::Factor(0.1),
        Momentum::Decay(0.999),
        Momentum::Cumulative,
        Momentum::from_half_life(3.0).unwrap(),
    ];
    for momentum in momenta {
        for nan in [NanPolicy::Propagate, NanPolicy::Skip, NanPolicy::Gap] {
            for adjusted in [false, true] {
                let what = format!("{momentum:?}, {nan:?}, adjusted {adjusted}");
                let ema = if adjusted {
                    Ema::adjusted(momentum)
                } else {
                    Ema::new(momentum)
                }
                .unwrap()
                .with_nan_policy(nan)
                .with_min_periods(3);
                check(
                    &what,
                    &ema,
                    &xs,
                    &cuts(xs.len(), 1),
                    |e, x| {
                        e.push(x);
                        e.value().unwrap_or(f64::NAN)
                    },
                    Ema::value_series,
                );
                let ew = if adjusted {
                    EwVariance::adjusted(momentum)
                } else {
                    EwVariance::new(momentum)
                }
                .unwrap()
                .with_nan_policy(nan)
                .with_min_periods(2);
                type Read = fn(&EwVariance<f64>) -> Option<f64>;
                type Series = fn(&mut EwVariance<f64>, &[f64]) -> Vec<f64>;
                let stats: [(Read, Series); 4] = [
                    (EwVariance::mean, EwVariance::mean_series),
                    (EwVariance::variance, EwVariance::variance_series),
                    (
                        EwVariance::unbiased_variance,
                        EwVariance::unbiased_variance_series,
                    ),
                    (EwVariance::std_dev, EwVariance::std_dev_series),
                ];
                for (read, series) in stats {
                    check(
                        &what,
                        &ew,
                        &xs,
                        &cuts(xs.len(), 2),
                        |e, x| {
                            e.push(x);
                            read(e).unwrap_or(f64::NAN)
                        },
                        series,
                    );
                }
                // Timed: the clock's series against push_at one by one.
                let mut a = ema.clone();
                let mut b = ema.clone();
                let want: Vec<f64> = ts
                    .iter()
                    .zip(&xs)
                    .map(|(&t, &x)| {
                        a.push_at(t, x).unwrap();
                        a.value().unwrap_or(f64::NAN)
                    })
                    .collect();
                let mut got = Vec::new();
                for w in cuts(xs.len(), 3).windows(2) {
                    let r = w[0]..w[1];
                    got.extend(b.value_series_at(&ts[r.clone()], &xs[r]).unwrap());
                }
                assert_eq!(bits(&got), bits(&want), "{what}: timed");
                assert_eq!(json(&a), json(&b), "{what}: timed state");
                let mut a = EwCovariance::new(momentum).unwrap().with_nan_policy(nan);
                let mut b = a.clone();
                let want: Vec<f64> = ts
                    .iter()
                    .zip(xs.iter().zip(&ys))
                    .map(|(&t, (&x, &y))| {
                        a.push_at(t, x, y).unwrap();
                        a.correlation().unwrap_or(f64::NAN)
                    })
                    .collect();
                let got = b.correlation_series_at(&ts, &xs, &ys).unwrap();
                assert_eq!(bits(&got), bits(&want), "{what}: correlation");
                assert_eq!(json(&a), json(&b), "{what}");
                let mut c = EwCovariance::new(momentum).unwrap().with_nan_policy(nan);
                let mut d = c.clone();
                let want: Vec<f64> = xs
                    .iter()
                    .zip(&ys)
                    .map(|(&x, &y)| {
                        c.push(x, y);
                        c.unbiased_covariance().unwrap_or(f64::NAN)
                    })
                    .collect();
                let got = d.unbiased_covariance_series(&xs, &ys).unwrap();
                assert_eq!(bits(&got), bits(&want), "{what}: covariance");
                assert_eq!(json(&c), json(&d), "{what}");
            }
        }
    }
}

#[test]
fn time_window_series_are_the_push_loop() {
    let xs = hostile(6000, 31);
    let ts = times(6000, 32);
    type Read = fn(&TimeWindow<f64>) -> Option<f64>;
    type Series = fn(&mut TimeWindow<f64>, &[f64], &[f64]) -> Result<Vec<f64>, momenta::Error>;
    let stats: [(Read, Series); 8] = [
        (TimeWindow::mean, TimeWindow::mean_series_at),
        (
            TimeWindow::sample_variance,
            TimeWindow::sample_variance_series_at,
        ),
        (
            TimeWindow::population_variance,
            TimeWindow::population_variance_series_at,
        ),
        (
            TimeWindow::sample_std_dev,
            TimeWindow::sample_std_dev_series_at,
        ),
        (
            TimeWindow::population_std_dev,
            TimeWindow::population_std_dev_series_at,
        ),
        (TimeWindow::min, TimeWindow::min_series_at),
        (TimeWindow::max, TimeWindow::max_series_at),
        (TimeWindow::range, TimeWindow::range_series_at),
    ];
    for span in [0.5, 10.0, 400.0] {
        for nan in [NanPolicy::Propagate, NanPolicy::Skip] {
            for (read, series) in stats {
                let start = TimeWindow::new(span)
                    .unwrap()
                    .with_nan_policy(nan)
                    .with_min_periods(2)
                    .unwrap();
                let (mut a, mut b) = (start.clone(), start.clone());
                let want: Vec<f64> = ts
                    .iter()
                    .zip(&xs)
                    .map(|(&t, &x)| {
                        a.push_at(t, x).unwrap();
                        read(&a).unwrap_or(f64::NAN)
                    })
                    .collect();
                let mut got = Vec::new();
                for w in cuts(xs.len(), 4).windows(2) {
                    let r = w[0]..w[1];
                    got.extend(series(&mut b, &ts[r.clone()], &xs[r]).unwrap());
                }
                assert_eq!(bits(&got), bits(&want), "span {span}, {nan:?}");
                assert_eq!(
                    serde_json::to_string(&a).unwrap(),
                    serde_json::to_string(&b).unwrap()
                );
            }
        }
    }
}

#[test]
fn a_bad_time_anywhere_in_a_timed_series_changes_nothing() {
    let mut w = TimeWindow::<f64>::new(5.0).unwrap();
    w.push_at(3.0, 1.0).unwrap();
    let before = serde_json::to_string(&w).unwrap();
    for times in [
        [4.0, 5.0, 4.5],
        [4.0, f64::NAN, 6.0],
        [2.0, 5.0, 6.0],
        [4.0, 5.0, f64::INFINITY],
    ] {
        let e = w.mean_series_at(&times, &[1.0, 2.0, 3.0]).unwrap_err();
        assert!(e.to_string().starts_with("time must be"), "{e}");
        assert_eq!(serde_json::to_string(&w).unwrap(), before);
    }
    let e = w.mean_series_at(&[4.0], &[1.0, 2.0]).unwrap_err();
    assert_eq!(e.to_string(), "times must have length 2, got 1");
    let mut e = Ema::<f64>::new(Momentum::Factor(0.5)).unwrap();
    e.push_at(1.0, 2.0).unwrap();
    let saved = e.clone();
    assert!(e.value_series_at(&[2.0, 0.5], &[1.0, 1.0]).is_err());
    assert_eq!(e, saved);
    let mut c = EwCovariance::<f64>::new(Momentum::Factor(0.5)).unwrap();
    let e = c.covariance_series(&[1.0, 2.0], &[1.0]).unwrap_err();
    assert_eq!(e.to_string(), "ys must have length 2, got 1");
    assert_eq!(c.count(), 0);
}
