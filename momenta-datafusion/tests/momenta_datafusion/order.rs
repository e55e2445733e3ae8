//! `GROUP BY` of the statistics kept in exact sums: the same bits
//! whatever the order of the rows in a partition, a few ulps apart
//! across partitions, and the rows the sums refuse kept by the general
//! path.

use datafusion::arrow::array::{Float64Array, Int64Array};
use momenta_datafusion::datafusion;

use crate::common::{by_key, col, context, table, ulps_apart};
use crate::support::SplitMix;

const QUERY: &str = "SELECT g, momenta_var_pop(x), momenta_stddev_samp(x), momenta_mean(x), \
                     momenta_corr(x, y), momenta_covar_samp(x, y) FROM t GROUP BY g";

async fn grouped(
    partitions: usize,
    skip: bool,
    gs: &[i64],
    xs: &[f64],
    ys: &[f64],
) -> Vec<(i64, Vec<u64>)> {
    let ctx = context(partitions, skip);
    table(
        &ctx,
        "t",
        &[
            ("g", col(Int64Array::from(gs.to_vec()))),
            ("x", col(Float64Array::from(xs.to_vec()))),
            ("y", col(Float64Array::from(ys.to_vec()))),
        ],
        partitions,
    );
    by_key(&ctx, QUERY)
        .await
        .into_iter()
        .map(|(g, v)| (g, v.iter().map(|r| r.unwrap().to_bits()).collect()))
        .collect()
}

/// `1e9 + U(0, 1)` beside a second column of its own scale, 7 groups.
fn data(n: usize) -> (Vec<i64>, Vec<f64>, Vec<f64>) {
    let mut rng = SplitMix(25);
    let gs = (0..n).map(|_| (rng.next_u64() % 7) as i64).collect();
    let xs: Vec<f64> = (0..n).map(|_| 1e9 + rng.unit()).collect();
    let ys = xs
        .iter()
        .map(|x| 1e-3 * (x - 1e9) + 1e-6 * rng.unit())
        .collect();
    (gs, xs, ys)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_row_order_gives_the_same_bits_and_partitions_move_them_a_few_ulps() {
    let (gs, xs, ys) = data(100_000);
    let first = grouped(1, false, &gs, &xs, &ys).await;
    assert_eq!(first.len(), 7);
    // The rows reversed and interleaved: other batches, the same values.
    let mut order: Vec<usize> = (0..gs.len()).rev().collect();
    order.sort_by_key(|&i| i % 3);
    let pick = |v: &[f64]| order.iter().map(|&i| v[i]).collect::<Vec<_>>();
    let gs2: Vec<i64> = order.iter().map(|&i| gs[i]).collect();
    assert_eq!(grouped(1, false, &gs2, &pick(&xs), &pick(&ys)).await, first);
    // Partial aggregation skipped in one partition: every row reaches the
    // final stage as a state of its own, taken back into the sums as its
    // row.
    assert_eq!(grouped(1, true, &gs2, &pick(&xs), &pick(&ys)).await, first);
    // Several partitions merge their states (rounded to f64 fields):
    // within 2 ulps of the exact sums' reading, skipped or not; `corr`,
    // a quotient of three merged sums (each up to an ulp or so off) and a
    // square root, within 4.
    for (partitions, skip) in [(2, false), (8, false), (2, true), (8, true)] {
        let got = grouped(partitions, skip, &gs2, &pick(&xs), &pick(&ys)).await;
        for ((g, a), (_, b)) in got.iter().zip(&first) {
            for (c, (&a, &b)) in a.iter().zip(b).enumerate() {
                let apart = ulps_apart(f64::from_bits(a), f64::from_bits(b));
                let bound = if c == 3 { 4 } else { 2 };
                assert!(
                    apart <= bound,
                    "{partitions} partitions, skip {skip}, group {g}, column {c}: {apart} ulps"
                );
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_the_sums_refuse_are_kept_another_way() {
    // Group 1 holds values 300 binades apart: the sums take the small
    // ones and refuse 1e100, which the general path keeps; the two merge.
    // Group 2 has a NaN and group 3 an infinity beside an ordinary value.
    let gs = [1, 1, 1, 2, 2, 2, 3, 3];
    let xs = [
        1e-200,
        2e-200,
        1e100,
        1.0,
        f64::NAN,
        3.0,
        1.0,
        f64::INFINITY,
    ];
    let ys = [1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0];
    for (partitions, skip) in [(1, false), (2, false), (2, true)] {
        let got = grouped(partitions, skip, &gs, &xs, &ys).await;
        let value = |g: usize, c: usize| f64::from_bits(got[g].1[c]);
        // var_pop of {1e-200, 2e-200, 1e100}: mean 1e100/3 (to 1e-300),
        // M2 = (2/3)²·1e200 + 2·(1/3)²·1e200 = (6/9)·1e200.
        let want = 2.0 / 9.0 * 1e200;
        assert!(
            (value(0, 0) - want).abs() <= 4.0 * f64::EPSILON * want,
            "{partitions} partitions: {}",
            value(0, 0)
        );
        assert!((value(0, 2) - 1e100 / 3.0).abs() <= 2.0 * f64::EPSILON * 1e100 / 3.0);
        // corr of x = {1e-200, 2e-200, 1e100} and y = {1, 2, 3}: with the
        // two small x as one point, (x − x̄) ∝ (−1, −1, 2) to 1e-300 and
        // (y − ȳ) = (−1, 0, 1): r = 3/(√6·√2) = √3/2.
        let r = value(0, 3);
        assert!(
            (r - 3.0_f64.sqrt() / 2.0).abs() <= 4.0 * f64::EPSILON,
            "{r}"
        );
        for c in [0, 1, 2] {
            assert!(value(1, c).is_nan(), "NaN group, column {c}");
        }
        assert!(!value(2, 0).is_finite(), "∞ group: {}", value(2, 0));
    }
}
