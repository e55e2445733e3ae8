//! The window functions against the core crate's push loop, bit for bit,
//! per partition, in `ORDER BY` order; and NULL, NaN and time columns.

use std::collections::BTreeMap;
use std::sync::Arc;

use momenta::{
    Ema, EwCovariance, EwVariance, Momentum, MovingAverage, MovingMinMax, MovingQuantile,
    MovingVariance, NanPolicy,
};
use momenta_datafusion::datafusion;

use datafusion::arrow::array::{Float64Array, Int64Array, TimestampNanosecondArray};

use crate::common::{batches, col, context, floats, table};
use crate::support::SplitMix;

/// Rows `(g, i, x, y)`: 3 partitions by `g`, shuffled, with level changes
/// and an outlier first in one partition.
fn data() -> (Vec<i64>, Vec<i64>, Vec<f64>, Vec<f64>) {
    let mut rng = SplitMix(21);
    let n = 3000;
    let mut rows: Vec<(i64, i64, f64, f64)> = (0..n)
        .map(|i| {
            let g = (i % 3) as i64;
            let level = if i > 1500 { 1e6 } else { 1e9 };
            let x = if i == 1 { 1e15 } else { level + rng.unit() };
            (g, i as i64, x, 0.5 * x + rng.unit())
        })
        .collect();
    // Shuffle: DataFusion sorts them back by (g, i).
    for i in (1..rows.len()).rev() {
        rows.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
    }
    (
        rows.iter().map(|r| r.0).collect(),
        rows.iter().map(|r| r.1).collect(),
        rows.iter().map(|r| r.2).collect(),
        rows.iter().map(|r| r.3).collect(),
    )
}

/// Each partition's `(x, y)` in `i` order.
fn by_partition(g: &[i64], i: &[i64], x: &[f64], y: &[f64]) -> BTreeMap<i64, Vec<(f64, f64)>> {
    let mut rows: Vec<usize> = (0..g.len()).collect();
    rows.sort_by_key(|&r| (g[r], i[r]));
    let mut out: BTreeMap<i64, Vec<(f64, f64)>> = BTreeMap::new();
    for r in rows {
        out.entry(g[r]).or_default().push((x[r], y[r]));
    }
    out
}

/// `f(x)` per row of each partition, concatenated in `(g, i)` order.
async fn over(sql_function: &str) -> Vec<Option<f64>> {
    let (g, i, x, y) = data();
    let ctx = context(4, false);
    table(
        &ctx,
        "t",
        &[
            ("g", col(Int64Array::from(g))),
            ("i", col(Int64Array::from(i))),
            ("x", col(Float64Array::from(x))),
            ("y", col(Float64Array::from(y))),
        ],
        4,
    );
    let sql = format!(
        "SELECT g, i, {sql_function} OVER (PARTITION BY g ORDER BY i) FROM t ORDER BY g, i"
    );
    floats(&batches(&ctx, &sql).await, 2)
}

/// The core crate's loop: a fresh statistic per partition, one push and
/// one read per row.
fn reference<S>(
    make: impl Fn() -> S,
    mut step: impl FnMut(&mut S, f64, f64) -> Option<f64>,
) -> Vec<Option<f64>> {
    let (g, i, x, y) = data();
    let mut out = Vec::new();
    for rows in by_partition(&g, &i, &x, &y).values() {
        let mut s = make();
        for &(x, y) in rows {
            out.push(step(&mut s, x, y));
        }
    }
    out
}

fn same_bits(got: &[Option<f64>], want: &[Option<f64>], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (r, (a, b)) in got.iter().zip(want).enumerate() {
        assert_eq!(
            a.map(f64::to_bits),
            b.map(f64::to_bits),
            "{what}, row {r}: {a:?} {b:?}"
        );
    }
}

#[tokio::test]
async fn exponential_functions_equal_the_push_loop() {
    for (adjust, sql_adjust) in [(true, ""), (true, ", true"), (false, ", false")] {
        let m = Momentum::Factor(0.1);
        let ema = || {
            if adjust {
                Ema::adjusted(m)
            } else {
                Ema::new(m)
            }
            .unwrap()
        };
        let ewv = || {
            if adjust {
                EwVariance::adjusted(m)
            } else {
                EwVariance::new(m)
            }
            .unwrap()
        };
        let ewc = || {
            if adjust {
                EwCovariance::adjusted(m)
            } else {
                EwCovariance::new(m)
            }
            .unwrap()
        };
        let cases: Vec<(&str, Vec<Option<f64>>)> = vec![
            (
                "mean",
                reference(ema, |s, x, _| {
                    s.push(x);
                    s.value()
                }),
            ),
            (
                "var",
                reference(ewv, |s, x, _| {
                    s.push(x);
                    s.unbiased_variance()
                }),
            ),
            (
                "var_pop",
                reference(ewv, |s, x, _| {
                    s.push(x);
                    s.variance()
                }),
            ),
            (
                "std",
                reference(ewv, |s, x, _| {
                    s.push(x);
                    s.unbiased_variance().map(f64::sqrt)
                }),
            ),
            (
                "std_pop",
                reference(ewv, |s, x, _| {
                    s.push(x);
                    s.std_dev()
                }),
            ),
        ];
        for (name, want) in cases {
            let got = over(&format!("momenta_ewm_{name}(x, 0.1{sql_adjust})")).await;
            same_bits(&got, &want, &format!("ewm_{name} adjust {adjust}"));
        }
        let cases: Vec<(&str, Vec<Option<f64>>)> = vec![
            (
                "cov",
                reference(ewc, |s, x, y| {
                    s.push(x, y);
                    s.unbiased_covariance()
                }),
            ),
            (
                "cov_pop",
                reference(ewc, |s, x, y| {
                    s.push(x, y);
                    s.covariance()
                }),
            ),
            (
                "corr",
                reference(ewc, |s, x, y| {
                    s.push(x, y);
                    s.correlation()
                }),
            ),
        ];
        for (name, want) in cases {
            let got = over(&format!("momenta_ewm_{name}(x, y, 0.1{sql_adjust})")).await;
            same_bits(&got, &want, &format!("ewm_{name} adjust {adjust}"));
        }
    }
}

#[tokio::test]
async fn moving_functions_equal_the_push_loop() {
    let w = 50;
    let cases: Vec<(&str, Vec<Option<f64>>)> = vec![
        (
            "momenta_moving_mean(x, 50)",
            reference(
                || MovingAverage::new(w).unwrap(),
                |s, x, _| {
                    s.push(x);
                    s.mean()
                },
            ),
        ),
        (
            "momenta_moving_var(x, 50)",
            reference(
                || MovingVariance::new(w).unwrap(),
                |s, x, _| {
                    s.push(x);
                    s.sample_variance()
                },
            ),
        ),
        (
            "momenta_moving_var_pop(x, 50)",
            reference(
                || MovingVariance::new(w).unwrap(),
                |s, x, _| {
                    s.push(x);
                    s.population_variance()
                },
            ),
        ),
        (
            "momenta_moving_std(x, 50)",
            reference(
                || MovingVariance::new(w).unwrap(),
                |s, x, _| {
                    s.push(x);
                    s.sample_std_dev()
                },
            ),
        ),
        (
            "momenta_moving_std_pop(x, 50)",
            reference(
                || MovingVariance::new(w).unwrap(),
                |s, x, _| {
                    s.push(x);
                    s.population_std_dev()
                },
            ),
        ),
        (
            "momenta_moving_min(x, 50)",
            reference(
                || MovingMinMax::new(w).unwrap(),
                |s, x, _| {
                    s.push(x);
                    s.min()
                },
            ),
        ),
        (
            "momenta_moving_max(x, 50)",
            reference(
                || MovingMinMax::new(w).unwrap(),
                |s, x, _| {
                    s.push(x);
                    s.max()
                },
            ),
        ),
        (
            "momenta_moving_quantile(x, 50, 0.9)",
            reference(
                || MovingQuantile::new(w, 0.9).unwrap(),
                |s, x, _| {
                    s.push(x);
                    s.quantile()
                },
            ),
        ),
        (
            "momenta_moving_median(x, 50)",
            reference(
                || MovingQuantile::median(w).unwrap(),
                |s, x, _| {
                    s.push(x);
                    s.quantile()
                },
            ),
        ),
    ];
    for (sql, want) in cases {
        let got = over(sql).await;
        same_bits(&got, &want, sql);
    }
}

/// A one-partition table `(i, x)` and `f` over it in `i` order.
async fn series(xs: &[Option<f64>], sql_function: &str) -> Vec<Option<f64>> {
    let ctx = context(1, false);
    let i: Vec<i64> = (0..xs.len() as i64).collect();
    table(
        &ctx,
        "t",
        &[
            ("i", col(Int64Array::from(i))),
            ("x", col(Float64Array::from(xs.to_vec()))),
        ],
        1,
    );
    floats(
        &batches(
            &ctx,
            &format!("SELECT {sql_function} OVER (ORDER BY i) FROM t ORDER BY i"),
        )
        .await,
        0,
    )
}

#[tokio::test]
async fn nulls_keep_their_place_or_are_ignored_and_nan_propagates() {
    // pandas: Series([4, None, 8]).ewm(alpha=0.5, adjust=False).mean()
    // is 4, 4, 20/3 (ignore_na=False: 4 decays over the gap: weights
    // 1/4 and 1/2, normalised); with ignore_na=True, 4, 4, 6.
    let xs = [Some(4.0), None, Some(8.0)];
    let gap = series(&xs, "momenta_ewm_mean(x, 0.5, false)").await;
    assert_eq!(gap[..2], [Some(4.0), Some(4.0)]);
    assert!((gap[2].unwrap() - 20.0 / 3.0).abs() < 1e-15);
    let mut core = Ema::new(Momentum::Factor(0.5))
        .unwrap()
        .with_nan_policy(NanPolicy::Gap);
    for x in xs {
        core.push(x.unwrap_or(f64::NAN));
    }
    assert_eq!(gap[2], core.value());
    let ignored = series(&xs, "momenta_ewm_mean(x, 0.5, false) IGNORE NULLS").await;
    assert_eq!(ignored, [Some(4.0), Some(4.0), Some(6.0)]);
    // A NaN value propagates from then on; a window's while it is in it.
    let xs = [
        Some(1.0),
        Some(f64::NAN),
        Some(3.0),
        Some(5.0),
        None,
        Some(7.0),
    ];
    let ewm = series(&xs, "momenta_ewm_mean(x, 0.5)").await;
    assert_eq!(ewm[0], Some(1.0));
    assert!(ewm[1..].iter().all(|v| v.unwrap().is_nan()), "{ewm:?}");
    let mean = series(&xs, "momenta_moving_mean(x, 2)").await;
    // Windows: [1], [1 NaN], [NaN 3], [3 5], [5 NULL], [NULL 7].
    assert_eq!(mean[0], Some(1.0));
    assert!(mean[1].unwrap().is_nan() && mean[2].unwrap().is_nan());
    assert_eq!(mean[3..], [Some(4.0), Some(5.0), Some(7.0)]);
    // IGNORE NULLS: the NULL takes no place: [3 5], then [5 7].
    let mean = series(&xs, "momenta_moving_mean(x, 2) IGNORE NULLS").await;
    assert_eq!(mean[4..], [Some(4.0), Some(6.0)]);
    // A window of NULLs only: NULL.
    let none = series(&[None, None, Some(2.0)], "momenta_moving_max(x, 2)").await;
    assert_eq!(none, [None, None, Some(2.0)]);
}

#[tokio::test]
async fn time_columns_decay_by_half_life() {
    // polars: ewm_mean_by(by=t, half_life="1s") on t = 0, 1, 3 s of 4, 8, 0
    // is 4, 6, 1.5 (recursive weights); the core crate's push_at agrees.
    let ctx = context(1, false);
    let t = TimestampNanosecondArray::from(vec![
        1_700_000_000_000_000_000,
        1_700_000_001_000_000_000,
        1_700_000_003_000_000_000,
    ]);
    table(
        &ctx,
        "t",
        &[
            ("t", Arc::new(t)),
            ("x", col(Float64Array::from(vec![4.0, 8.0, 0.0]))),
        ],
        1,
    );
    for half_life in ["1.0", "INTERVAL '1 second'", "INTERVAL '1000 milliseconds'"] {
        let sql = format!(
            "SELECT momenta_ewm_mean_by(x, t, {half_life}, false) OVER (ORDER BY t) FROM t ORDER BY t"
        );
        let got = floats(&batches(&ctx, &sql).await, 0);
        let mut core = Ema::new(Momentum::from_half_life(1e9).unwrap()).unwrap();
        let mut want = Vec::new();
        for (t, x) in [(0.0, 4.0), (1e9, 8.0), (3e9, 0.0)] {
            core.push_at(t, x).unwrap();
            want.push(core.value());
        }
        same_bits(&got, &want, half_life);
        assert!((got[2].unwrap() - 1.5).abs() < 1e-15);
    }
    // A numeric time, half-life in its unit, adjusted weights (pandas
    // ewm(halflife=2, times=t).mean()).
    let ctx = context(1, false);
    let ts = [0.0, 0.5, 3.0, 3.25, 10.0];
    let xs = [1.0, 3.0, -2.0, 5.0, 0.5];
    table(
        &ctx,
        "t",
        &[
            ("t", col(Float64Array::from(ts.to_vec()))),
            ("x", col(Float64Array::from(xs.to_vec()))),
        ],
        1,
    );
    let got = floats(
        &batches(
            &ctx,
            "SELECT momenta_ewm_var_by(x, t, 2.0) OVER (ORDER BY t) FROM t ORDER BY t",
        )
        .await,
        0,
    );
    let mut core = EwVariance::adjusted(Momentum::from_half_life(2.0).unwrap()).unwrap();
    let want: Vec<Option<f64>> = ts
        .iter()
        .zip(xs)
        .map(|(&t, x)| {
            core.push_at(t, x).unwrap();
            core.unbiased_variance()
        })
        .collect();
    same_bits(&got, &want, "ewm_var_by");
    // Time going backwards is an error naming it.
    let err = ctx
        .sql("SELECT momenta_ewm_mean_by(x, t, 2.0) OVER (ORDER BY x) FROM t")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("time"), "{err}");
}

#[tokio::test]
async fn bad_parameters_fail_at_planning() {
    let ctx = context(1, false);
    table(
        &ctx,
        "t",
        &[("x", col(Float64Array::from(vec![1.0, 2.0])))],
        1,
    );
    for (sql, needle) in [
        ("momenta_ewm_mean(x, 1.5)", "momentum"),
        ("momenta_moving_mean(x, 0)", "window"),
        ("momenta_moving_quantile(x, 3, 2.0)", "q"),
        ("momenta_ewm_mean(x, x)", "constant"),
        ("momenta_ewm_mean_by(x, x, -1.0)", "half_life"),
    ] {
        let result = match ctx
            .sql(&format!("SELECT {sql} OVER (ORDER BY x) FROM t"))
            .await
        {
            Ok(df) => df.collect().await.map(|_| ()),
            Err(e) => Err(e),
        };
        let err = result.unwrap_err().to_string();
        assert!(err.contains(needle), "{sql}: {err}");
    }
}
