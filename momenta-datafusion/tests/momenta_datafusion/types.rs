//! Input types: each converts to the nearest `f64`, rounded once, and the
//! statistic is that of the converted values, bit for bit.

use std::sync::Arc;

use momenta_datafusion::datafusion;

use datafusion::arrow::array::{
    ArrayRef, Decimal128Array, Float32Array, Float64Array, Int32Array, Int64Array, UInt64Array,
};

use crate::common::{col, context, row, table};

/// `momenta_var_pop`, `momenta_mean` and `momenta_corr` (against `ref`)
/// of column `c`, and the same of column `ref`.
async fn same_statistics(
    columns: &[(&str, ArrayRef)],
    c: &str,
) -> (Vec<Option<f64>>, Vec<Option<f64>>) {
    let ctx = context(1, false);
    table(&ctx, "t", columns, 1);
    let of = |x: &str| {
        format!(
            "SELECT momenta_var_pop({x}), momenta_mean({x}), momenta_corr({x}, r), momenta_kurtosis({x}) FROM t"
        )
    };
    (row(&ctx, &of(c)).await, row(&ctx, &of("r")).await)
}

#[tokio::test]
async fn decimals_convert_to_the_nearest_double() {
    // 12345.6789012345678901234567 and its neighbours, at scale 22: no f64
    // holds them; each converts to the nearest, as Rust's parser rounds
    // the decimal text.
    let base: i128 = 123_456_789_012_345_678_901_234_567;
    let raw: Vec<i128> = (0..100)
        .map(|i| base + i * 1_000_000_000_007 * (i % 7 - 3))
        .collect();
    let nearest: Vec<f64> = raw
        .iter()
        .map(|v| format!("{v}e-22").parse::<f64>().unwrap())
        .collect();
    let dec = Decimal128Array::from(raw)
        .with_precision_and_scale(38, 22)
        .unwrap();
    let (got, reference) = same_statistics(
        &[
            ("d", Arc::new(dec)),
            ("r", col(Float64Array::from(nearest))),
        ],
        "d",
    )
    .await;
    assert_eq!(got, reference);
}

#[tokio::test]
async fn integers_and_floats_convert_exactly() {
    let ints: Vec<i32> = (0..1000).map(|i| 1_000_000_000 + i * i % 977).collect();
    let as_f64: Vec<f64> = ints.iter().map(|&i| f64::from(i)).collect();
    let (got, reference) = same_statistics(
        &[
            ("i", col(Int32Array::from(ints.clone()))),
            ("r", col(Float64Array::from(as_f64.clone()))),
        ],
        "i",
    )
    .await;
    assert_eq!(got, reference);
    let floats: Vec<f32> = (0..1000).map(|i| 1e6 + (i % 37) as f32 / 64.0).collect();
    let as_f64: Vec<f64> = floats.iter().map(|&x| f64::from(x)).collect();
    let (got, reference) = same_statistics(
        &[
            ("f", col(Float32Array::from(floats))),
            ("r", col(Float64Array::from(as_f64))),
        ],
        "f",
    )
    .await;
    assert_eq!(got, reference);
}

#[tokio::test]
async fn wide_integers_round_to_nearest() {
    // Above 2⁵³ an Int64 or UInt64 is rounded to the nearest f64 (ties to
    // even), and the statistics are those of the rounded values.
    let big: Vec<i64> = (0..1000).map(|i| (1 << 60) + i * 1_000_003).collect();
    #[allow(clippy::cast_precision_loss, reason = "the rounding under test")]
    let rounded: Vec<f64> = big.iter().map(|&v| v as f64).collect();
    let (got, reference) = same_statistics(
        &[
            ("i", col(Int64Array::from(big.clone()))),
            ("r", col(Float64Array::from(rounded.clone()))),
        ],
        "i",
    )
    .await;
    assert_eq!(got, reference);
    let unsigned: Vec<u64> = big.iter().map(|&v| v as u64 * 2).collect();
    #[allow(clippy::cast_precision_loss, reason = "the rounding under test")]
    let rounded: Vec<f64> = unsigned.iter().map(|&v| v as f64).collect();
    let (got, reference) = same_statistics(
        &[
            ("u", col(UInt64Array::from(unsigned))),
            ("r", col(Float64Array::from(rounded))),
        ],
        "u",
    )
    .await;
    assert_eq!(got, reference);
}
