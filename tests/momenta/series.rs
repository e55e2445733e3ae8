//! The whole-series slice APIs: every value of a series, and the state it
//! leaves, are the push loop's bit for bit, on calm and hostile data, cut
//! into slices anywhere; values recorded from pandas; hostile input.

use crate::support::{SplitMix, long};
use momenta::{
    Ema, EwCovariance, EwVariance, Interpolation, Momentum, MovingAverage, MovingMinMax,
    MovingQuantile, MovingStats, MovingVariance, NanPolicy, TimeWindow,
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

/// The data sets every window series is checked on: 20 000 values each
/// with `MOMENTA_LONG_TESTS`, 9000 by default (past two wraps of the
/// longest window, 4099), and a short one.
fn data_sets() -> Vec<(&'static str, Vec<f64>)> {
    let n = long::size(20_000, 9000);
    vec![
        ("calm", calm(n, 1)),
        ("hostile", hostile(n, 2)),
        ("short", hostile(9, 3)),
    ]
}

/// Every data set of `sets`, window of `windows` and option of
/// [`options`], with the window's description for messages. Without
/// `MOMENTA_LONG_TESTS`, one option of the three for each data set and
/// window, a different one in turn ([`long::sample`]).
fn each_window(
    sets: impl IntoIterator<Item = (&'static str, Vec<f64>)>,
    windows: impl IntoIterator<Item = usize> + Clone,
    mut f: impl FnMut(&str, &[f64], usize, (NanPolicy, usize)),
) {
    for (s, (name, xs)) in sets.into_iter().enumerate() {
        for (w, window) in windows.clone().into_iter().enumerate() {
            for (o, (nan, min_periods)) in options(window).into_iter().enumerate() {
                if !long::sample(s + w + o, 3) {
                    continue;
                }
                let what = format!("{name}, window {window}, {nan:?}, min_periods {min_periods}");
                f(&what, &xs, window, (nan, min_periods));
            }
        }
    }
}

#[test]
fn moving_average_series_is_the_push_loop() {
    each_window(
        data_sets(),
        WINDOWS,
        |what, xs, window, (nan, min_periods)| {
            let start = MovingAverage::new(window)
                .unwrap()
                .with_nan_policy(nan)
                .with_min_periods(min_periods)
                .unwrap();
            check(
                what,
                &start,
                xs,
                &cuts(xs.len(), window as u64),
                |a, x| a.push(x),
                |a, xs| a.mean_series(xs),
            );
        },
    );
}

/// Data that `MovingStats`' mean series keeps on one grid for long runs,
/// and data that leaves it: temperatures (full mantissas over two
/// binades), whole numbers, a level change from `1e6 + U(0, 1)` to `1e9 +
/// U(0, 1)` and back, one value finer than the rest among calm data, and
/// values spanning more binades than a long window's sums hold.
fn grid_sets() -> Vec<(&'static str, Vec<f64>)> {
    let mut rng = SplitMix(7);
    let temperatures = (0..8000).map(|_| 15.0 + 10.0 * rng.unit()).collect();
    let whole = (0..8000)
        .map(|_| (rng.next_u64() % 2001) as f64 - 1000.0)
        .collect();
    let level = (0..8000)
        .map(|i| if (i / 3000) % 2 == 0 { 1e6 } else { 1e9 } + rng.unit())
        .collect();
    // Just below 2^19, a binade under 1e6: resolved to 2^-34, finer than
    // any value of [2^19, 2^20).
    let mut finer = calm(8000, 8);
    finer[7777] = 524_288.0 - 2f64.powi(-34);
    let wide = (0..8000)
        .map(|i| rng.unit() * 2f64.powi(-(i % 61)))
        .collect();
    // Fine values beside values 2^93 times their resolution (as far apart
    // as the exact sums hold): a window of 20 large ones has a mean far
    // above the fine ones' grid, and a tie one time in 20.
    let span = (0..3000)
        .map(|i| {
            let k = (rng.next_u64() % 1024) as f64;
            if i % 25 == 0 {
                1.0 + k * f64::EPSILON
            } else {
                2f64.powi(41) + k * 2f64.powi(-11)
            }
        })
        .collect();
    vec![
        ("temperatures", temperatures),
        ("whole", whole),
        ("level", level),
        ("finer", finer),
        ("wide", wide),
        ("span", span),
    ]
}

/// `MovingStats`' series, each with the read that gives its values after
/// each push: the mean, then the four spreads.
type StatSeries = (
    &'static str,
    fn(&MovingStats<f64>) -> Option<f64>,
    fn(&mut MovingStats<f64>, &[f64]) -> Vec<f64>,
);
const STATS: [StatSeries; 5] = [
    ("mean", MovingStats::mean, MovingStats::mean_series),
    (
        "sample variance",
        MovingStats::sample_variance,
        MovingStats::sample_variance_series,
    ),
    (
        "population variance",
        MovingStats::population_variance,
        MovingStats::population_variance_series,
    ),
    (
        "sample std",
        MovingStats::sample_std_dev,
        MovingStats::sample_std_dev_series,
    ),
    (
        "population std",
        MovingStats::population_std_dev,
        MovingStats::population_std_dev_series,
    ),
];

/// [`check`] of one of [`STATS`] from `start`.
fn check_stat(what: &str, stat: &StatSeries, start: &MovingStats<f64>, xs: &[f64], cut: &[usize]) {
    let (name, read, series) = *stat;
    check(
        &format!("{name}, {what}"),
        start,
        xs,
        cut,
        |s, x| {
            s.push(x);
            read(s).unwrap_or(f64::NAN)
        },
        series,
    );
}

#[test]
fn moving_stats_series_are_the_push_loop() {
    // 98 · fl(1/98) is not 1: a window of 98 meets means that are exact
    // ties, which a float quotient alone would round the wrong way.
    let sets = data_sets().into_iter().chain(grid_sets());
    let windows = WINDOWS.into_iter().chain([98]);
    each_window(sets, windows, |what, xs, window, (nan, min_periods)| {
        let start = MovingStats::new(window)
            .unwrap()
            .with_nan_policy(nan)
            .with_min_periods(min_periods)
            .unwrap();
        // The mean everywhere; every spread on the calm data, one a
        // window elsewhere (they share one loop but for the divisor and
        // the root).
        let spreads = if what.starts_with("calm") {
            1..5
        } else {
            1 + window % 4..2 + window % 4
        };
        for stat in STATS[..1].iter().chain(&STATS[spreads]) {
            check_stat(what, stat, &start, xs, &cuts(xs.len(), window as u64));
        }
    });
}

/// Long columns in one piece or nearly, as a column comes: the mean's
/// offset runs' one-pass loop (once every leaving value is in the slice),
/// ties at window 98, a value off the grid and a NaN in the middle of a
/// run, whole numbers, variances that are exact ties, and `f32` columns.
/// Columns of 60 000 values with `MOMENTA_LONG_TESTS`, 12 000 by default
/// (past two wraps of the longest window, 4099), and then every other
/// statistic for each column, window and cut, in turn.
#[test]
fn moving_stats_series_of_long_slices_are_the_push_loop() {
    let (n, off, nan) = long::size((60_000, 41_234, 52_000), (12_000, 10_234, 11_000));
    let mut off_grid = calm(n, 12);
    off_grid[off] = 0.1;
    off_grid[nan] = f64::NAN;
    let mut rng = SplitMix(22);
    let whole: Vec<f64> = (0..n)
        .map(|_| (rng.next_u64() % 7) as f64 * 2f64.powi(40))
        .collect();
    // Windows of two, 0 and 2k for an odd k in [2^26.5, 2^27): a
    // population variance of k², an odd integer of 54 bits, halfway
    // between two floats (it goes to the even one).
    let ties: Vec<f64> = (0..n as u64)
        .map(|i| {
            let k = 94_906_267 + 2 * (rng.next_u64() % 19_000_000);
            (2 * k * (i % 2)) as f64
        })
        .collect();
    let sets = [
        ("calm", calm(n, 11)),
        ("off grid", off_grid),
        ("whole", whole),
        ("ties", ties),
    ];
    for (s, (name, xs)) in sets.into_iter().enumerate() {
        for (w, window) in [1, 2, 5, 20, 98, 1000, 4099].into_iter().enumerate() {
            let start = MovingStats::new(window).unwrap();
            for (c, cut) in [vec![0, xs.len()], vec![0, 1, 9000, xs.len()]]
                .into_iter()
                .enumerate()
            {
                for (k, stat) in STATS.iter().enumerate() {
                    if !long::sample(s + w + c + k, 2) {
                        continue;
                    }
                    let what = format!("{name}, window {window}, cut {cut:?}");
                    check_stat(&what, stat, &start, &xs, &cut);
                }
            }
        }
    }
    let xs: Vec<f32> = calm(long::size(40_000, 10_000), 13)
        .iter()
        .map(|&x| x as f32)
        .collect();
    type Read32 = fn(&MovingStats<f32>) -> Option<f32>;
    type Series32 = fn(&mut MovingStats<f32>, &[f32]) -> Vec<f32>;
    let f32_stats: [(Read32, Series32); 2] = [
        (MovingStats::mean, MovingStats::mean_series),
        (
            MovingStats::sample_std_dev,
            MovingStats::sample_std_dev_series,
        ),
    ];
    for (read, series) in f32_stats {
        for window in [3, 98] {
            let mut pushed = MovingStats::<f32>::new(window).unwrap();
            let want: Vec<u32> = xs
                .iter()
                .map(|&x| {
                    pushed.push(x);
                    read(&pushed).unwrap_or(f32::NAN).to_bits()
                })
                .collect();
            let mut sliced = MovingStats::<f32>::new(window).unwrap();
            let got: Vec<u32> = series(&mut sliced, &xs)
                .iter()
                .map(|m| m.to_bits())
                .collect();
            assert!(got == want, "f32, window {window}");
            assert!(sliced == pushed, "f32, window {window}: the window after");
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
    each_window(
        data_sets(),
        WINDOWS,
        |what, xs, window, (nan, min_periods)| {
            for (stat, read, series) in stats {
                let start = MovingVariance::new(window)
                    .unwrap()
                    .with_nan_policy(nan)
                    .with_min_periods(min_periods)
                    .unwrap();
                check(
                    &format!("{stat}, {what}"),
                    &start,
                    xs,
                    &cuts(xs.len(), window as u64 + 5),
                    |v, x| {
                        v.push(x);
                        read(v).unwrap_or(f64::NAN)
                    },
                    series,
                );
            }
        },
    );
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
    each_window(
        data_sets(),
        WINDOWS,
        |what, xs, window, (nan, min_periods)| {
            for (stat, read, series) in stats {
                let start = MovingMinMax::new(window)
                    .unwrap()
                    .with_nan_policy(nan)
                    .with_min_periods(min_periods)
                    .unwrap();
                let what = format!("{stat}, {what}");
                check(
                    &what,
                    &start,
                    xs,
                    &cuts(xs.len(), window as u64 + 9),
                    |m, x| {
                        m.push(x);
                        read(m).unwrap_or(f64::NAN)
                    },
                    series,
                );
                // The ring's head too, which only `as_slices` shows.
                let (mut a, mut b) = (start.clone(), start.clone());
                for &x in xs {
                    a.push(x);
                }
                let _ = series(&mut b, xs);
                assert!(same_slices(a.as_slices(), b.as_slices()), "{what}");
                let mut c = start.clone();
                c.extend_from_slice(xs);
                assert!(same_slices(a.as_slices(), c.as_slices()), "{what}");
            }
        },
    );
}

#[test]
fn every_interpolation_series_is_the_push_loop() {
    // The sorted-array path serves linear interpolation; the others take
    // the push loop. Either way the series is the push loop's, and the
    // state it leaves restores and goes on the same.
    for (name, xs) in data_sets() {
        for window in [1, 4, 7, 100] {
            for how in [
                Interpolation::Linear,
                Interpolation::Lower,
                Interpolation::Higher,
                Interpolation::Nearest,
                Interpolation::Midpoint,
            ] {
                for q in [0.5, 0.3, 0.9] {
                    let start = MovingQuantile::new(window, q)
                        .unwrap()
                        .with_interpolation(how);
                    let what = format!("{how:?}, q {q}, {name}, window {window}");
                    check(
                        &what,
                        &start,
                        &xs,
                        &cuts(xs.len(), window as u64 + 29),
                        |m, x| m.push(x),
                        |m, xs| m.quantile_series(xs),
                    );
                }
            }
        }
    }
}

/// Hostile data with no NaN, so that full windows take the replacement
/// paths (the registers for up to 48 values with AVX2): `hostile`'s
/// values with each NaN replaced, then runs of ties, signed zeros and
/// infinities, a rising and a falling run.
fn hostile_without_nan(n: usize, seed: u64) -> Vec<f64> {
    let mut xs: Vec<f64> = hostile(n, seed)
        .into_iter()
        .map(|x| if x.is_nan() { -7.5 } else { x })
        .collect();
    let tail = xs.len() / 2;
    for (i, x) in xs[tail..].iter_mut().enumerate() {
        *x = match (i / 61) % 4 {
            0 => [0.0, -0.0, 1.0, -1.0, f64::INFINITY, f64::NEG_INFINITY][i % 6],
            1 => (i % 3) as f64,
            2 => i as f64,
            _ => -(i as f64),
        };
    }
    xs
}

#[test]
fn full_short_windows_are_the_push_loop() {
    // Every window the registers serve (up to 48), and a few beyond, up
    // to and past where the sorted blocks take over (400), at ranks on
    // both sides of each slot, from cut slices. Without
    // `MOMENTA_LONG_TESTS`, data half as long and one of the four ranks
    // for each data set and window, in turn.
    let n = long::size(6000, 3000);
    let sets = [
        ("hostile", hostile_without_nan(n, 5)),
        ("calm", calm(n / 2, 6)),
    ];
    for (s, (name, xs)) in sets.iter().enumerate() {
        for window in (1..=52).chain([64, 128, 399, 400, 401]) {
            for (r, q) in [0.5, 0.0, 1.0, 0.77].into_iter().enumerate() {
                if !long::sample(s + window + r, 4) {
                    continue;
                }
                let start = MovingQuantile::new(window, q).unwrap();
                check(
                    &format!("q {q}, {name}, window {window}"),
                    &start,
                    xs,
                    &cuts(xs.len(), window as u64 + 71),
                    |m, x| m.push(x),
                    |m, xs| m.quantile_series(xs),
                );
            }
        }
    }
}

#[test]
fn moving_quantile_series_are_the_push_loop() {
    each_window(
        data_sets(),
        WINDOWS,
        |what, xs, window, (nan, min_periods)| {
            for q in [0.5, 0.0, 1.0, 0.3] {
                let start = MovingQuantile::new(window, q)
                    .unwrap()
                    .with_nan_policy(nan)
                    .with_min_periods(min_periods)
                    .unwrap();
                let what = format!("q {q}, {what}");
                check(
                    &what,
                    &start,
                    xs,
                    &cuts(xs.len(), window as u64 + 13),
                    |m, x| m.push(x),
                    |m, xs| m.quantile_series(xs),
                );
                let (mut a, mut b) = (start.clone(), start.clone());
                for &x in xs {
                    a.push(x);
                }
                b.extend_from_slice(xs);
                assert!(same_slices(a.as_slices(), b.as_slices()), "{what}");
            }
        },
    );
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
                    .with_min_periods(2);
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

// ------------------------------------------------------ pandas' values
//
// Recorded once from pandas 3.1.1 (numpy 2.4.6), printed with Python's
// repr; NaN is pandas' NaN. The code, with `s = pd.Series(X)`:
//
//   s.rolling(4, min_periods=1).mean();  s.rolling(4, min_periods=1).var()
//   s.rolling(4, min_periods=1).std(ddof=0)
//   s.rolling(3, min_periods=1).min();   s.rolling(3, min_periods=2).max()
//   s.rolling(5, min_periods=1).median()
//   s.rolling(4, min_periods=1).quantile(0.25, interpolation="linear")
//   s.rolling(1, min_periods=1).mean();  s.rolling(1, min_periods=1).var()
//   s.ewm(alpha=0.3).mean();  s.ewm(alpha=0.3, adjust=False, ignore_na=True).mean()
//   s.ewm(alpha=0.3).var();   s.ewm(alpha=0.3).std(bias=True)
//   y = pd.Series(Y); s.ewm(alpha=0.3).cov(y); s.ewm(alpha=0.3).corr(y)
//   ts = pd.Series(X, index=pd.to_datetime(T, unit="s"))
//   ts.rolling("3s").mean(); ts.rolling("3s").var(); ts.rolling("3s").max()
//   ts.ewm(halflife="2s", times=ts.index).mean()
//
// X has a leading outlier (1e9) that leaves, a level change to -1e6,
// NaN (three, two of them together), repeats, 0.0 and 1e-300.

const X: [f64; 40] = [
    1000000000.0,
    3.0,
    4.0,
    4.0,
    2.5,
    f64::NAN,
    7.0,
    1.0,
    0.001,
    5.0,
    5.0,
    5.0,
    -999999.75,
    -999999.5,
    -1000000.0,
    -999999.25,
    f64::NAN,
    f64::NAN,
    -999999.875,
    0.0,
    2.0,
    2.0,
    2.0,
    9.5,
    -3.0,
    1e-300,
    6.0,
    f64::NAN,
    8.0,
    7.5,
    0.1,
    0.2,
    0.3,
    0.4,
    0.5,
    0.6,
    0.7,
    0.8,
    0.9,
    1.0,
];
/// The sample variance of `X`'s windows of four (NaN skipped), from exact
/// fractions (Python's `fractions.Fraction`), rounded once to `f64`.
const VAR_4_EXACT: [f64; 40] = [
    f64::NAN,
    4.99999997e+17,
    3.33333331e+17,
    2.4999999816666666e+17,
    0.5625,
    0.75,
    5.25,
    9.75,
    14.330667,
    10.91450025,
    6.914833583333333,
    6.24750025,
    250002375005.64062,
    333336416673.8073,
    250002375005.68228,
    0.10416666666666667,
    0.14583333333333334,
    0.28125,
    0.1953125,
    499999875000.0078,
    333333916667.9219,
    250000604167.92056,
    1.0,
    14.0625,
    26.5625,
    28.395833333333332,
    32.0625,
    21.0,
    17.333333333333332,
    1.0833333333333333,
    19.57,
    19.296666666666667,
    13.329166666666667,
    0.016666666666666666,
    0.016666666666666666,
    0.016666666666666666,
    0.01666666666666666,
    0.01666666666666667,
    0.016666666666666673,
    0.01666666666666667,
];
const MEAN_4: [f64; 40] = [
    1000000000.0,
    500000001.5,
    333333335.6666667,
    250000002.75,
    3.375,
    3.5,
    4.5,
    3.5,
    2.667,
    3.2502500000000003,
    2.7502500000000003,
    3.7502500000000003,
    -249996.1875,
    -499997.3125,
    -749998.5625,
    -999999.625,
    -999999.5833333334,
    -999999.625,
    -999999.5625,
    -499999.9375,
    -333332.625,
    -249998.96875,
    1.5,
    3.875,
    2.625,
    2.125,
    3.125,
    1.0,
    4.666666666666667,
    7.166666666666667,
    5.2,
    3.95,
    2.025,
    0.25,
    0.35,
    0.45,
    0.55,
    0.65,
    0.75,
    0.85,
];
const VAR_4: [f64; 40] = [
    f64::NAN,
    4.99999997e+17,
    3.33333331e+17,
    2.4999999816666666e+17,
    0.5625,
    0.75,
    5.25,
    9.75,
    14.330667,
    10.914500250000001,
    6.914833583333334,
    6.2475002500000025,
    250002375005.64062,
    333336416673.8073,
    250002375005.68228,
    0.10416666666666667,
    0.14583333333575865,
    0.28125,
    0.1953125,
    499999875000.0078,
    333333916667.9219,
    250000604167.92056,
    0.9999864366287107,
    14.0625,
    26.5625,
    28.395833333333332,
    32.0625,
    21.0,
    17.333333333333332,
    1.0833333333333297,
    19.569999999999997,
    19.296666666666663,
    13.329166666666659,
    0.016666666666651276,
    0.016666666666651557,
    0.01666666666665183,
    0.0166666666666521,
    0.0166666666666524,
    0.0166666666666527,
    0.016666666666652997,
];
#[allow(clippy::approx_constant, reason = "a value pandas printed")]
const STD_4_DDOF0: [f64; 40] = [
    0.0,
    499999998.5,
    471404519.14111584,
    433012700.30450606,
    0.649519052838329,
    0.7071067811865476,
    1.8708286933869707,
    2.5495097567963922,
    3.0909186336751087,
    2.8610968504229284,
    2.277306564233283,
    2.1646304967592047,
    433014.7587025533,
    500002.3125000078,
    433014.7587025894,
    0.2795084971874737,
    0.3118047822337546,
    0.375,
    0.3125,
    499999.9375,
    471404.93327069446,
    433013.2251166706,
    0.866019530652475,
    3.247595264191645,
    4.463392767839281,
    4.614853735493683,
    4.903761311483258,
    3.7416573867739413,
    3.39934634239519,
    0.849836585598796,
    3.6120169803956714,
    3.8042739123254514,
    3.161783515675922,
    0.11180339887493787,
    0.1118033988749388,
    0.11180339887493972,
    0.11180339887494063,
    0.11180339887494163,
    0.11180339887494264,
    0.11180339887494364,
];
const MIN_3: [f64; 40] = [
    1000000000.0,
    3.0,
    3.0,
    3.0,
    2.5,
    2.5,
    2.5,
    1.0,
    0.001,
    0.001,
    0.001,
    5.0,
    -999999.75,
    -999999.75,
    -1000000.0,
    -1000000.0,
    -1000000.0,
    -999999.25,
    -999999.875,
    -999999.875,
    -999999.875,
    0.0,
    2.0,
    2.0,
    -3.0,
    -3.0,
    -3.0,
    1e-300,
    6.0,
    7.5,
    0.1,
    0.1,
    0.1,
    0.2,
    0.3,
    0.4,
    0.5,
    0.6,
    0.7,
    0.8,
];
const MAX_3_MP2: [f64; 40] = [
    f64::NAN,
    1000000000.0,
    1000000000.0,
    4.0,
    4.0,
    4.0,
    7.0,
    7.0,
    7.0,
    5.0,
    5.0,
    5.0,
    5.0,
    5.0,
    -999999.5,
    -999999.25,
    -999999.25,
    f64::NAN,
    f64::NAN,
    0.0,
    2.0,
    2.0,
    2.0,
    9.5,
    9.5,
    9.5,
    6.0,
    6.0,
    8.0,
    8.0,
    8.0,
    7.5,
    0.3,
    0.4,
    0.5,
    0.6,
    0.7,
    0.8,
    0.9,
    1.0,
];
const MEDIAN_5: [f64; 40] = [
    1000000000.0,
    500000001.5,
    4.0,
    4.0,
    4.0,
    3.5,
    4.0,
    3.25,
    1.75,
    3.0,
    5.0,
    5.0,
    5.0,
    5.0,
    -999999.5,
    -999999.5,
    -999999.625,
    -999999.5,
    -999999.875,
    -999999.25,
    0.0,
    1.0,
    2.0,
    2.0,
    2.0,
    2.0,
    2.0,
    3.0,
    3.0,
    6.75,
    6.75,
    3.85,
    0.3,
    0.3,
    0.3,
    0.4,
    0.5,
    0.6,
    0.7,
    0.8,
];
const Q25_4: [f64; 40] = [
    1000000000.0,
    250000002.25,
    3.5,
    3.75,
    2.875,
    3.25,
    3.25,
    1.75,
    0.5005,
    0.75025,
    0.75025,
    3.75025,
    -249996.1875,
    -999999.5625,
    -999999.8125,
    -999999.8125,
    -999999.75,
    -999999.8125,
    -999999.71875,
    -749999.90625,
    -499999.9375,
    -249999.96875,
    1.5,
    2.0,
    0.75,
    -0.75,
    -0.75,
    -1.5,
    3.0,
    6.75,
    3.8000000000000003,
    0.17500000000000002,
    0.17500000000000002,
    0.17500000000000002,
    0.275,
    0.375,
    0.475,
    0.575,
    0.6749999999999999,
    0.775,
];
const MEAN_1: [f64; 40] = [
    1000000000.0,
    3.0,
    4.0,
    4.0,
    2.5,
    f64::NAN,
    7.0,
    1.0,
    0.001,
    5.0,
    5.0,
    5.0,
    -999999.75,
    -999999.5,
    -1000000.0,
    -999999.25,
    f64::NAN,
    f64::NAN,
    -999999.875,
    0.0,
    2.0,
    2.0,
    2.0,
    9.5,
    -3.0,
    1e-300,
    6.0,
    f64::NAN,
    8.0,
    7.5,
    0.1,
    0.2,
    0.3,
    0.4,
    0.5,
    0.6,
    0.7,
    0.8,
    0.9,
    1.0,
];
const VAR_1: [f64; 40] = [
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
    f64::NAN,
];
const EWM_MEAN: [f64; 40] = [
    1000000000.0,
    411764707.64705884,
    223744295.02283105,
    135412557.54836163,
    86581806.74660128,
    86581806.74660128,
    49876235.12512406,
    31063344.19674753,
    20186142.571080156,
    13455354.53485713,
    9114012.339321412,
    6238519.981851787,
    3989612.4583940543,
    2455799.825915521,
    1401287.50327275,
    672301.2248376259,
    672301.2248376259,
    672301.2248376259,
    -112873.87308248995,
    -67559.2219189827,
    -42934.41068604181,
    -28232.862950992254,
    -18958.42858620456,
    -12900.444926497521,
    -8859.568064757896,
    -6120.247406123607,
    -4243.307273694016,
    -4243.307273694016,
    -2607.772508870744,
    -1680.2184334859908,
    -1115.1539428101623,
    -753.2108714096763,
    -514.5391050446067,
    -354.1204739816957,
    -244.9049783910494,
    -169.89319818781706,
    -118.05723218976006,
    -82.08037902751651,
    -57.03045309002532,
    -39.545185482145605,
];
const EWM_MEAN_NOADJ_IGNORE: [f64; 40] = [
    1000000000.0,
    700000000.9,
    490000001.8299999,
    343000002.4809999,
    240100002.4866999,
    240100002.4866999,
    168070003.84068993,
    117649002.98848294,
    82354302.09223805,
    57648012.96456663,
    40353610.57519664,
    28247528.902637646,
    19473270.30684635,
    13331289.364792446,
    9031902.55535471,
    6022332.013748297,
    6022332.013748297,
    6022332.013748297,
    3915632.4471238074,
    2740942.712986665,
    1918660.4990906653,
    1343062.9493634657,
    940144.6645544259,
    658104.115188098,
    460671.9806316686,
    322470.386442168,
    225731.07050951757,
    225731.07050951757,
    158014.14935666227,
    110612.15454966358,
    77428.5381847645,
    54200.036729335145,
    37940.11571053459,
    26558.200997374213,
    18590.89069816195,
    13013.803488713365,
    9109.872442099355,
    6377.150709469548,
    4464.275496628684,
    3125.292847640079,
];
const EWM_VAR: [f64; 40] = [
    f64::NAN,
    4.999999970000001e+17,
    2.7168949576712323e+17,
    1.6442952895948637e+17,
    1.0513504673176627e+17,
    1.0513504673176627e+17,
    6.420766053584218e+16,
    3.9806421414909896e+16,
    2.5540677514938292e+16,
    1.683309172629788e+16,
    1.1304232083808712e+16,
    7689564495512649.0,
    5280573617182408.0,
    3647527967849853.0,
    2529716695021349.5,
    1759395052016820.0,
    1759395052016820.0,
    1759395052016820.0,
    1050380318589422.0,
    617741869269274.9,
    381695420271510.3,
    245409924288548.22,
    162140779930029.12,
    109102272012657.52,
    74324686283967.8,
    51059568913704.51,
    35279247777784.54,
    35279247777784.54,
    22643807761043.824,
    14590614544956.074,
    9586283392444.678,
    6410545878741.233,
    4344598699806.699,
    2972931147090.2607,
    2048209561070.0093,
    1417874397824.086,
    984811845312.9185,
    685621980994.6332,
    478108957767.5308,
    333784512912.9384,
];
const EWM_STD_BIAS: [f64; 40] = [
    0.0,
    492152955.3082915,
    416752663.6773654,
    342163694.07298315,
    281221255.4164814,
    281221255.4164814,
    217689208.74815506,
    173488932.05685735,
    140636624.23342174,
    115214169.58560137,
    95031275.9471683,
    78737517.95120427,
    65457538.367427036,
    54524043.2966135,
    45478053.055296965,
    37968261.92768943,
    37968261.92768943,
    37968261.92768943,
    27666474.988085344,
    21404292.919424806,
    17063408.759300955,
    13837136.947150629,
    11339078.68948021,
    9354707.33676027,
    7751954.691540952,
    6443020.72224974,
    5366008.926778076,
    5366008.926778076,
    4209109.0818417175,
    3381284.652478076,
    2754690.676305724,
    2264031.3618769175,
    1871429.4011517814,
    1552802.3405897804,
    1291742.5393902978,
    1076463.5813056428,
    898149.2696952621,
    750000.5470404531,
    626653.3078553237,
    523804.23097710486,
];
const Y: [f64; 40] = [
    1999999999.0,
    5.0,
    7.0,
    7.0,
    4.0,
    3.0,
    13.0,
    1.0,
    -0.998,
    9.0,
    9.0,
    9.0,
    -2000000.5,
    -2000000.0,
    -2000001.0,
    -1999999.5,
    3.0,
    3.0,
    -2000000.75,
    -1.0,
    3.0,
    3.0,
    3.0,
    18.0,
    -7.0,
    -1.0,
    11.0,
    3.0,
    15.0,
    14.0,
    -0.8,
    -0.6,
    -0.4,
    -0.19999999999999996,
    0.0,
    0.19999999999999996,
    0.3999999999999999,
    0.6000000000000001,
    0.8,
    1.0,
];
const EWM_COV: [f64; 40] = [
    f64::NAN,
    9.999999940000003e+17,
    5.4337899153424646e+17,
    3.2885905791897274e+17,
    2.1027009346353254e+17,
    2.1027009346353254e+17,
    1.2841532107168435e+17,
    7.961284282981979e+16,
    5.1081355029876584e+16,
    3.366618345259576e+16,
    2.2608464167617424e+16,
    1.5379128991025298e+16,
    1.0561147234364816e+16,
    7295055935699706.0,
    5059433390042699.0,
    3518790104033640.0,
    3518790104033640.0,
    3518790104033640.0,
    2100760637178844.0,
    1235483738538549.8,
    763390840543020.6,
    490819848577096.44,
    324281559860058.25,
    218204544025315.03,
    148649372567935.6,
    102119137827409.02,
    70558495555569.08,
    70558495555569.08,
    45287615522087.65,
    29181229089912.15,
    19172566784889.355,
    12821091757482.467,
    8689197399613.398,
    5945862294180.521,
    4096419122140.0186,
    2835748795648.172,
    1969623690625.837,
    1371243961989.2664,
    956217915535.0616,
    667569025825.8768,
];
const EWM_CORR: [f64; 40] = [
    f64::NAN,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    0.9999999999999999,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
    1.0,
];
const T: [f64; 40] = [
    0.0, 1.0, 1.5, 4.0, 4.0, 7.0, 8.0, 9.0, 16.0, 16.5, 17.5, 18.0, 20.5, 20.5, 23.5, 24.5, 25.5,
    32.5, 33.0, 34.0, 34.5, 37.0, 37.0, 40.0, 41.0, 42.0, 49.0, 49.5, 50.5, 51.0, 53.5, 53.5, 56.5,
    57.5, 58.5, 65.5, 66.0, 67.0, 68.0, 69.0,
];
const TIME_MEAN_3S: [f64; 40] = [
    1000000000.0,
    500000001.5,
    333333335.6666667,
    4.0,
    3.5,
    f64::NAN,
    7.0,
    4.0,
    0.001,
    2.5005,
    3.3336666666666672,
    3.7502500000000003,
    -499997.375,
    -666664.75,
    -1000000.0,
    -999999.625,
    -999999.625,
    f64::NAN,
    -999999.875,
    -499999.9375,
    -333332.625,
    2.0,
    2.0,
    9.5,
    3.25,
    2.1666666666666665,
    6.0,
    6.0,
    7.0,
    7.166666666666667,
    3.8,
    2.6,
    0.3,
    0.35,
    0.39999999999999997,
    0.6,
    0.6499999999999999,
    0.7000000000000001,
    0.75,
    0.9,
];
const TIME_VAR_3S: [f64; 40] = [
    f64::NAN,
    4.99999997e+17,
    3.33333331e+17,
    0.0,
    0.75,
    f64::NAN,
    f64::NAN,
    18.0,
    f64::NAN,
    12.4950005,
    8.330000333333334,
    6.247500250000001,
    500004750011.28125,
    333336416673.8125,
    f64::NAN,
    0.28125,
    0.28125,
    f64::NAN,
    f64::NAN,
    499999875000.0078,
    333333916667.9219,
    0.0,
    0.0,
    f64::NAN,
    78.125,
    42.583333333333336,
    f64::NAN,
    f64::NAN,
    2.0,
    1.0833333333333333,
    27.38,
    18.009999999999998,
    f64::NAN,
    0.005000000000000006,
    0.010000000000000005,
    f64::NAN,
    0.005000000000000004,
    0.010000000000000016,
    0.01666666666666668,
    0.009999999999999995,
];
const TIME_MAX_3S: [f64; 40] = [
    1000000000.0,
    1000000000.0,
    1000000000.0,
    4.0,
    4.0,
    f64::NAN,
    7.0,
    7.0,
    0.001,
    5.0,
    5.0,
    5.0,
    5.0,
    5.0,
    -1000000.0,
    -999999.25,
    -999999.25,
    f64::NAN,
    -999999.875,
    0.0,
    2.0,
    2.0,
    2.0,
    9.5,
    9.5,
    9.5,
    6.0,
    6.0,
    8.0,
    8.0,
    7.5,
    7.5,
    0.3,
    0.4,
    0.5,
    0.6,
    0.7,
    0.8,
    0.9,
    1.0,
];
const EWM_HALFLIFE_TIMES: [f64; 40] = [
    1000000000.0,
    414213564.13045436,
    244140246.6333946,
    123517692.35869099,
    82671917.03522849,
    82671917.03522849,
    35592252.328900754,
    19714761.046227384,
    3260266.727588503,
    1636234.3186558252,
    959973.5179550062,
    643629.2635862298,
    -78565.93890715567,
    -359844.1897234259,
    -656460.0494539669,
    -792457.1939323747,
    -792457.1939323747,
    -792457.1939323747,
    -975675.6877450196,
    -433929.39138010546,
    -261353.6231898538,
    -134308.76938140218,
    -90376.04254019557,
    -46939.84214885583,
    -27947.872979805736,
    -17775.936832832456,
    -3468.5622589645814,
    -3468.5622589645814,
    -1469.3932878871299,
    -869.5963092490666,
    -442.2856719365829,
    -296.5047761764452,
    -153.3375230695051,
    -90.99279251203704,
    -57.64596842092995,
    -10.768255692453717,
    -5.159816219165558,
    -2.7231673820459914,
    -1.39576516962878,
    -0.5781146853433692,
];

/// `a` and `b` are the same bits, NaN included.
fn same(a: &[f64], b: &[f64]) -> bool {
    bits(a) == bits(b)
}

/// The largest distance between `got` and `want` in units of `want`'s
/// ulp (NaN must meet NaN).
fn ulps(got: &[f64], want: &[f64]) -> f64 {
    got.iter().zip(want).fold(0.0_f64, |worst, (&g, &w)| {
        if g.is_nan() || w.is_nan() {
            assert!(g.is_nan() && w.is_nan(), "{g} against {w}");
            return worst;
        }
        let ulp = f64::EPSILON * w.abs().max(f64::MIN_POSITIVE);
        worst.max((g - w).abs() / ulp)
    })
}

/// The mean and sample variance of the non-NaN values of `window`, to
/// double-double precision (exact for these few values, up to 2^-106).
fn exact(window: &[f64]) -> (f64, f64) {
    use crate::support::Dd;
    let xs: Vec<f64> = window.iter().copied().filter(|x| !x.is_nan()).collect();
    let n = Dd::new(xs.len() as f64);
    let sum = xs.iter().fold(Dd::new(0.0), |s, &x| s.add(Dd::new(x)));
    let mean = sum.div(n);
    let m2 = xs.iter().fold(Dd::new(0.0), |s, &x| {
        let d = Dd::new(x).add(mean.neg());
        s.add(d.mul(d))
    });
    let var = if xs.len() > 1 {
        m2.div(Dd::new(xs.len() as f64 - 1.0)).to_f64()
    } else {
        f64::NAN
    };
    (mean.to_f64(), var)
}

#[test]
fn window_series_meet_pandas() {
    let skip = |m: MovingMinMax<f64>| m.with_nan_policy(NanPolicy::Skip);
    // Minimum, maximum and quantiles: pandas' values, bit for bit.
    assert!(same(
        &skip(MovingMinMax::new(3).unwrap()).min_series(&X),
        &MIN_3
    ));
    let mut m = skip(MovingMinMax::new(3).unwrap())
        .with_min_periods(2)
        .unwrap();
    assert!(same(&m.max_series(&X), &MAX_3_MP2));
    let q = |w, q| {
        MovingQuantile::new(w, q)
            .unwrap()
            .with_nan_policy(NanPolicy::Skip)
    };
    assert!(same(&q(5, 0.5).quantile_series(&X), &MEDIAN_5));
    assert!(same(&q(4, 0.25).quantile_series(&X), &Q25_4));
    // A window of one: the value itself, no sample variance.
    let mut a = MovingAverage::new(1)
        .unwrap()
        .with_nan_policy(NanPolicy::Skip);
    assert!(same(&a.mean_series(&X), &MEAN_1));
    let mut v = MovingVariance::new(1)
        .unwrap()
        .with_nan_policy(NanPolicy::Skip);
    assert!(same(&v.sample_variance_series(&X), &VAR_1));
    // Means and variances: within an ulp, and a few ulps, of the exact
    // window statistics (pandas' means within four).
    let mut a = MovingAverage::new(4)
        .unwrap()
        .with_nan_policy(NanPolicy::Skip);
    let mean = a.mean_series(&X);
    let mut v = MovingVariance::new(4)
        .unwrap()
        .with_nan_policy(NanPolicy::Skip);
    let var = v.sample_variance_series(&X);
    let mut v0 = MovingVariance::new(4)
        .unwrap()
        .with_nan_policy(NanPolicy::Skip);
    let std0 = v0.population_std_dev_series(&X);
    for i in 0..X.len() {
        let (m, s) = exact(&X[i.saturating_sub(3)..=i]);
        assert!(
            ulps(&[mean[i]], &[m]) <= 1.0,
            "mean {i}: {} vs {m}",
            mean[i]
        );
        assert!(ulps(&[MEAN_4[i]], &[m]) <= 4.0, "pandas' mean {i}");
        if s.is_nan() {
            assert!(var[i].is_nan() && VAR_4[i].is_nan());
            continue;
        }
        let ours = ulps(&[var[i]], &[s]);
        assert!(ours <= 8.0, "var {i}: {ours} ulps");
        // The population deviation: within a few ulps of the exact one,
        // and of pandas' wherever pandas' variance is within 1e4 ulps.
        let n = X[i.saturating_sub(3)..=i]
            .iter()
            .filter(|x| !x.is_nan())
            .count() as f64;
        let pop = (s * (n - 1.0) / n).sqrt();
        assert!(ulps(&[std0[i]], &[pop]) <= 8.0, "std {i}");
        if ulps(&[VAR_4[i]], &[s]) <= 1e4 {
            assert!(ulps(&[std0[i]], &[STD_4_DDOF0[i]]) <= 1e4, "std {i}");
        }
    }
    // MovingStats' variances: the exact ones correctly rounded wherever
    // the window is on its exact sums (1e-300 beside 6.0 sends it to the
    // compensated ones until a wrap after 1e-300 has left).
    let skip = || {
        MovingStats::new(4)
            .unwrap()
            .with_nan_policy(NanPolicy::Skip)
    };
    let series = skip().sample_variance_series(&X);
    let mut pushed = skip();
    let mut exact_ones = 0;
    for (i, &x) in X.iter().enumerate() {
        pushed.push(x);
        if pushed.is_exact() {
            exact_ones += 1;
            assert!(same(&series[i..=i], &VAR_4_EXACT[i..=i]), "var {i}");
        }
    }
    assert!(exact_ones >= 32, "{exact_ones}");
    // pandas' variance of [0, 2, 2, 2] (after -1e6 left) is 0.99998644:
    // its running sums kept the large values' rounding. Ours is 1.
    assert_eq!(var[22], 1.0);
    assert!((VAR_4[22] - 1.0).abs() > 1e-5);
}

#[test]
fn exponential_and_time_series_meet_pandas() {
    let close = |got: &[f64], want: &[f64], tol: f64, what: &str| {
        for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
            if w.is_nan() {
                assert!(g.is_nan(), "{what} {i}: {g} where pandas has NaN");
            } else {
                assert!(
                    (g - w).abs() <= tol * w.abs().max(1.0),
                    "{what} {i}: {g} vs {w}"
                );
            }
        }
    };
    // pandas' defaults: adjust=True, ignore_na=False (the older values
    // decay over a NaN: NanPolicy::Gap), bias=False.
    let m = Momentum::Factor(0.3);
    let gap = NanPolicy::Gap;
    let mut e = Ema::adjusted(m).unwrap().with_nan_policy(gap);
    // The outlier's weight cancels for a dozen values after the level
    // change: a few ulps of it are a few 1e-15 of the mean.
    close(&e.value_series(&X), &EWM_MEAN, 1e-14, "ewm mean");
    let mut e = Ema::new(m).unwrap().with_nan_policy(NanPolicy::Skip);
    close(
        &e.value_series(&X),
        &EWM_MEAN_NOADJ_IGNORE,
        1e-14,
        "ewm mean, adjust=False",
    );
    let mut v = EwVariance::adjusted(m).unwrap().with_nan_policy(gap);
    close(&v.unbiased_variance_series(&X), &EWM_VAR, 1e-12, "ewm var");
    let mut v = EwVariance::adjusted(m).unwrap().with_nan_policy(gap);
    close(&v.std_dev_series(&X), &EWM_STD_BIAS, 1e-12, "ewm std");
    let mut c = EwCovariance::adjusted(m).unwrap().with_nan_policy(gap);
    close(
        &c.unbiased_covariance_series(&X, &Y).unwrap(),
        &EWM_COV,
        1e-12,
        "ewm cov",
    );
    let mut c = EwCovariance::adjusted(m).unwrap().with_nan_policy(gap);
    close(
        &c.correlation_series(&X, &Y).unwrap(),
        &EWM_CORR,
        1e-12,
        "ewm corr",
    );
    let mut e = Ema::adjusted(Momentum::from_half_life(2.0).unwrap())
        .unwrap()
        .with_nan_policy(gap);
    close(
        &e.value_series_at(&T, &X).unwrap(),
        &EWM_HALFLIFE_TIMES,
        1e-14,
        "halflife",
    );
    // pandas' time windows: (t − 3 s, t], NaN left out.
    let w = || {
        TimeWindow::new(3.0)
            .unwrap()
            .with_nan_policy(NanPolicy::Skip)
    };
    close(
        &w().mean_series_at(&T, &X).unwrap(),
        &TIME_MEAN_3S,
        4e-16,
        "time mean",
    );
    assert!(same(&w().max_series_at(&T, &X).unwrap(), &TIME_MAX_3S));
    let var = w().sample_variance_series_at(&T, &X).unwrap();
    for (i, (&g, &p)) in var.iter().zip(&TIME_VAR_3S).enumerate() {
        if p.is_nan() {
            assert!(g.is_nan(), "time var {i}");
        } else {
            // pandas is off where the window held -1e6 next to 0 or 2.
            assert!(
                (g - p).abs() <= 1e-9 * p.max(1.0),
                "time var {i}: {g} vs {p}"
            );
        }
    }
}
