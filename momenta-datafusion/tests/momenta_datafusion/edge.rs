//! The edge cases and SQL's NULL rules: what the built-ins get
//! wrong, and what every function returns on no rows, one row, NULL, NaN
//! and ±∞.

use momenta_datafusion::datafusion;

use datafusion::arrow::array::{Float64Array, Int64Array};

use crate::common::{by_key, col, context, row, table};

#[tokio::test]
async fn two_values_near_1e16() {
    // The exact population variance of 1e16 and 1e16 + 2 is 1.
    let ctx = context(1, false);
    table(
        &ctx,
        "t",
        &[("x", col(Float64Array::from(vec![1e16, 1e16 + 2.0])))],
        1,
    );
    let r = row(
        &ctx,
        "SELECT momenta_var_pop(x), momenta_var_samp(x), var_pop(x) FROM t",
    )
    .await;
    eprintln!(
        "var_pop [1e16, 1e16 + 2]: momenta {:?}, built-in {:?}",
        r[0], r[2]
    );
    assert_eq!(r[0], Some(1.0));
    assert_eq!(r[1], Some(2.0));
}

#[tokio::test]
async fn huge_equal_values_over_4_partitions() {
    // 4000 × 1e306: the variance is 0 and the mean 1e306, where sums of
    // squares and sums overflow.
    let ctx = context(4, false);
    table(
        &ctx,
        "t",
        &[("x", col(Float64Array::from(vec![1e306; 4000])))],
        4,
    );
    let r = row(
        &ctx,
        "SELECT momenta_var_pop(x), momenta_stddev_samp(x), momenta_mean(x), var_pop(x), avg(x) FROM t",
    )
    .await;
    eprintln!(
        "4000 × 1e306, 4 partitions: momenta var {:?} mean {:?}; built-in var {:?} avg {:?}",
        r[0], r[2], r[3], r[4]
    );
    assert_eq!(r[0], Some(0.0));
    assert_eq!(r[1], Some(0.0));
    assert_eq!(r[2], Some(1e306));
}

#[tokio::test]
async fn no_rows_one_row_and_null_groups_are_null() {
    let ctx = context(2, false);
    // Group 1: no values (all NULL); group 2: one value; group 3: two
    // equal values; group 4: three values.
    let g = Int64Array::from(vec![1, 1, 2, 3, 3, 4, 4, 4]);
    let x = Float64Array::from(vec![
        None,
        None,
        Some(5.0),
        Some(2.0),
        Some(2.0),
        Some(1.0),
        Some(2.0),
        Some(6.0),
    ]);
    let w = Float64Array::from(vec![Some(1.0); 8]);
    table(&ctx, "t", &[("g", col(g)), ("x", col(x)), ("w", col(w))], 2);
    let functions = [
        "momenta_var_pop(x)",
        "momenta_var_samp(x)",
        "momenta_stddev_pop(x)",
        "momenta_stddev_samp(x)",
        "momenta_covar_pop(x, x)",
        "momenta_covar_samp(x, x)",
        "momenta_corr(x, x)",
        "momenta_skewness(x)",
        "momenta_skewness_pop(x)",
        "momenta_kurtosis(x)",
        "momenta_kurtosis_pop(x)",
        "momenta_weighted_mean(x, w)",
        "momenta_weighted_var_pop(x, w)",
        "momenta_weighted_var_samp(x, w)",
        "momenta_weighted_var_reliability(x, w)",
        "momenta_mean(x)",
        "momenta_min(x)",
        "momenta_max(x)",
        "momenta_range(x)",
    ];
    let list = functions.join(", ");
    let r = by_key(&ctx, &format!("SELECT g, {list} FROM t GROUP BY g")).await;
    // All NULL: every function is NULL.
    assert!(r[&1].iter().all(Option::is_none), "{:?}", r[&1]);
    let one = &r[&2];
    // One value: what needs two (or three, four) is NULL.
    let expected_one = [
        Some(0.0),
        None,
        Some(0.0),
        None,
        Some(0.0),
        None,
        None,
        None,
        None,
        None,
        None,
        Some(5.0),
        Some(0.0),
        None,
        None,
        Some(5.0),
        Some(5.0),
        Some(5.0),
        Some(0.0),
    ];
    assert_eq!(one, &expected_one.to_vec());
    // Two equal values: correlation and the shape of a constant are NULL.
    let two = &r[&3];
    assert_eq!(two[1], Some(0.0));
    assert_eq!(two[6], None);
    assert_eq!(two[8], None);
    // 1, 2, 6: mean 3, population variance 14/3, sample variance 7.
    let three = &r[&4];
    assert_eq!(three[1], Some(7.0));
    assert_eq!(three[15], Some(3.0));
    assert_eq!(three[18], Some(5.0));
    assert!((three[0].unwrap() - 14.0 / 3.0).abs() < 1e-15);
    // Ungrouped over no rows: NULL.
    let empty = row(&ctx, &format!("SELECT {list} FROM t WHERE x > 100")).await;
    assert!(empty.iter().all(Option::is_none), "{empty:?}");
}

#[tokio::test]
async fn nan_and_infinity_propagate_by_group() {
    let ctx = context(2, false);
    let g = Int64Array::from(vec![1, 1, 1, 2, 2, 2, 3, 3]);
    let x = Float64Array::from(vec![1.0, f64::NAN, 3.0, 1.0, f64::INFINITY, 2.0, 1.0, 2.0]);
    table(&ctx, "t", &[("g", col(g)), ("x", col(x))], 2);
    let r = by_key(
        &ctx,
        "SELECT g, momenta_var_pop(x), momenta_mean(x), momenta_max(x), momenta_corr(x, x) FROM t GROUP BY g",
    )
    .await;
    assert!(r[&1].iter().all(|v| v.unwrap().is_nan()), "{:?}", r[&1]);
    // The core crate's `Mean` takes ∞ then a finite value to NaN (its
    // incremental step forms ∞ − ∞), so the mean of group 2 is not
    // checked here.
    assert!(r[&2][0].unwrap().is_nan());
    assert_eq!(r[&2][2], Some(f64::INFINITY));
    assert_eq!(r[&3][0], Some(0.25));
}

#[tokio::test]
async fn correlation_stays_within_one_on_collinear_data() {
    // y = 3x − 1e9 exactly (x on a 2⁻²⁰ grid near 1e9/3): r is 1; every
    // rounding must keep it at or below 1, in every group and ungrouped.
    let n = 200_000;
    let mut rng = crate::support::SplitMix(11);
    let xs: Vec<f64> = (0..n)
        .map(|_| 333_333_333.0 + (rng.next_u64() >> 44) as f64 * 2f64.powi(-20))
        .collect();
    let ys: Vec<f64> = xs.iter().map(|x| 3.0 * x - 1e9).collect();
    let zs: Vec<f64> = xs.iter().map(|x| 2e9 - 3.0 * x).collect();
    let gs: Vec<i64> = (0..n as i64).map(|i| i % 4).collect();
    for partitions in [1, 8] {
        let ctx = context(partitions, false);
        table(
            &ctx,
            "t",
            &[
                ("g", col(Int64Array::from(gs.clone()))),
                ("x", col(Float64Array::from(xs.clone()))),
                ("y", col(Float64Array::from(ys.clone()))),
                ("z", col(Float64Array::from(zs.clone()))),
            ],
            partitions,
        );
        let r = by_key(
            &ctx,
            "SELECT g, momenta_corr(x, y), momenta_corr(x, z), corr(x, y) FROM t GROUP BY g",
        )
        .await;
        for v in r.values() {
            let (up, down) = (v[0].unwrap(), v[1].unwrap());
            assert!(up <= 1.0 && 1.0 - up < 1e-14, "{up}");
            assert!(down >= -1.0 && 1.0 + down < 1e-14, "{down}");
        }
        eprintln!(
            "collinear, {partitions} partitions: built-in corr by group {:?}",
            r.values().map(|v| v[2]).collect::<Vec<_>>()
        );
        let u = row(&ctx, "SELECT momenta_corr(x, y), momenta_corr(x, z) FROM t").await;
        assert!(u[0].unwrap() <= 1.0 && u[1].unwrap() >= -1.0);
    }
}

#[tokio::test]
async fn invalid_weights_and_distinct_fail_with_their_reason() {
    let ctx = context(1, false);
    table(
        &ctx,
        "t",
        &[
            ("x", col(Float64Array::from(vec![1.0, 2.0]))),
            ("w", col(Float64Array::from(vec![1.0, -1.0]))),
        ],
        1,
    );
    let err = ctx
        .sql("SELECT momenta_weighted_mean(x, w) FROM t")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("weight") && err.contains("-1"), "{err}");
    // One DISTINCT argument: DataFusion rewrites the query to a GROUP BY
    // of it, and the function sees each distinct value once.
    let r = row(&ctx, "SELECT momenta_var_pop(DISTINCT x) FROM t").await;
    assert_eq!(r, [Some(0.25)]);
    // Two: the function itself would have to keep the distinct values.
    let err = ctx
        .sql("SELECT momenta_var_pop(DISTINCT x), momenta_var_pop(DISTINCT w) FROM t")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("DISTINCT"), "{err}");
    let err = ctx
        .sql("SELECT momenta_var_pop(x, x) FROM t")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("takes 1 argument"), "{err}");
    let err = ctx
        .sql("SELECT momenta_var_pop('a') FROM t")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("numeric"), "{err}");
}

#[tokio::test]
async fn builtin_names_take_the_exact_functions() {
    let ctx = context(1, false);
    momenta_datafusion::register_all_with_builtin_names(&ctx);
    table(
        &ctx,
        "t",
        &[("x", col(Float64Array::from(vec![1e16, 1e16 + 2.0])))],
        1,
    );
    let r = row(
        &ctx,
        "SELECT var_pop(x), var(x), var_samp(x), stddev(x), stddev_pop(x), covar_pop(x, x), covar(x, x), corr(x, x) FROM t",
    )
    .await;
    assert_eq!(
        r,
        [1.0, 2.0, 2.0, 2f64.sqrt(), 1.0, 1.0, 2.0, 1.0]
            .map(Some)
            .to_vec()
    );
}
