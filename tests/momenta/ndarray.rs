//! `BatchStats::compute_axis` on `ndarray` views of every shape of memory:
//! standard and Fortran order, permuted and reversed axes, steps,
//! sub-views, several dimensions — against a naive two-pass over each
//! channel's elements gathered by index.

#![cfg(feature = "ndarray")]

use crate::support::{SplitMix, two_pass};
use momenta::ErrorKind;
use momenta::batchnorm::BatchStats;
use ndarray::{Array, ArrayD, Axis, Dimension, IxDyn, RemoveAxis, ShapeBuilder, s};

/// The naive statistics of every channel: the elements with each index
/// along `axis`, gathered one by one.
fn naive<D: RemoveAxis>(a: &Array<f64, D>, axis: usize) -> Vec<(f64, f64)> {
    (0..a.shape()[axis])
        .map(|c| {
            let xs: Vec<f64> = a.index_axis(Axis(axis), c).iter().copied().collect();
            two_pass(&xs)
        })
        .collect()
}

#[track_caller]
fn check(what: &str, stats: &BatchStats<f64>, want: &[(f64, f64)]) {
    assert_eq!(stats.channels(), want.len(), "{what}: channels");
    let m2 = stats.sum_squared_deviations();
    for (c, &(mean, w2)) in want.iter().enumerate() {
        let scale = mean.abs().max(1.0);
        assert!(
            (stats.mean()[c] - mean).abs() <= 1e-13 * scale,
            "{what}: mean of channel {c}"
        );
        assert!(
            (m2[c] - w2).abs() <= 1e-12 * w2.max(1e-300),
            "{what}: M2 of channel {c}"
        );
    }
}

fn random(shape: &[usize], seed: u64) -> ArrayD<f64> {
    let mut rng = SplitMix(seed);
    // 1e6 + U(0, 1) plus a per-position pattern, so channels differ.
    Array::from_shape_fn(IxDyn(shape), |ix| {
        1e6 + rng.unit()
            + ix.slice()
                .iter()
                .enumerate()
                .map(|(k, &i)| (k * 7 + i) as f64)
                .sum::<f64>()
    })
}

#[test]
fn contiguous_arrays_in_any_axis_order_are_read_in_place() {
    let a = random(&[3, 4, 5, 6], 1);
    for axis in 0..4 {
        check(
            &format!("standard, axis {axis}"),
            &BatchStats::compute_axis(&a, Axis(axis)).unwrap(),
            &naive(&a, axis),
        );
    }
    // The same data as NHWC (permuted axes), and in Fortran order.
    let nhwc = a.view().permuted_axes(IxDyn(&[0, 2, 3, 1]));
    let want = naive(&nhwc.to_owned(), 3);
    check(
        "permuted to NHWC",
        &BatchStats::compute_axis(&nhwc, Axis(3)).unwrap(),
        &want,
    );
    let fortran = {
        let mut f = Array::zeros(IxDyn(&[3, 4, 5, 6]).f());
        f.assign(&a);
        f
    };
    for axis in 0..4 {
        check(
            &format!("Fortran, axis {axis}"),
            &BatchStats::compute_axis(&fortran, Axis(axis)).unwrap(),
            &naive(&a, axis),
        );
    }
}

#[test]
fn reversed_and_strided_views_give_the_same_statistics() {
    let a = random(&[4, 3, 8, 2], 2);
    let reversed = a.slice(s![.., ..;-1, .., ..]);
    let want = naive(&reversed.to_owned(), 1);
    check(
        "channel axis reversed",
        &BatchStats::compute_axis(&reversed, Axis(1)).unwrap(),
        &want,
    );
    let reversed_rows = a.slice(s![..;-1, .., .., ..]);
    check(
        "outer axis reversed",
        &BatchStats::compute_axis(&reversed_rows, Axis(1)).unwrap(),
        &naive(&a, 1),
    );
    let stepped = a.slice(s![..;2, .., 1..7;3, ..]);
    check(
        "stepped",
        &BatchStats::compute_axis(&stepped, Axis(1)).unwrap(),
        &naive(&stepped.to_owned(), 1),
    );
    let sub = a.slice(s![1..3, .., 2..5, ..]);
    check(
        "sub-view",
        &BatchStats::compute_axis(&sub, Axis(3)).unwrap(),
        &naive(&sub.to_owned(), 3),
    );
}

#[test]
fn a_long_strided_channel_goes_through_the_buffer() {
    // 2 channels of 3 · 5000 values, read with a step: more than one buffer.
    let a = random(&[3, 2, 10_000], 3);
    let stepped = a.slice(s![.., .., ..;2]);
    check(
        "long stepped",
        &BatchStats::compute_axis(&stepped, Axis(1)).unwrap(),
        &naive(&stepped.to_owned(), 1),
    );
}

#[test]
fn matrices_give_per_column_and_per_row_statistics() {
    let a = random(&[50, 7], 4);
    check(
        "columns",
        &BatchStats::compute_axis(&a, Axis(1)).unwrap(),
        &naive(&a, 1),
    );
    check(
        "rows",
        &BatchStats::compute_axis(&a, Axis(0)).unwrap(),
        &naive(&a, 0),
    );
    let t = a.t();
    check(
        "columns of the transpose",
        &BatchStats::compute_axis(&t, Axis(1)).unwrap(),
        &naive(&t.to_owned(), 1),
    );
    // f32 data, f64 statistics, a fixed-dimension array.
    let f: ndarray::Array2<f32> =
        ndarray::Array2::from_shape_fn((4, 2), |(i, j)| (i * 2 + j) as f32);
    let s = BatchStats::<f64>::compute_axis(&f, Axis(1)).unwrap();
    assert_eq!(s.mean(), &[3.0, 4.0]);
}

#[test]
fn bad_axes_and_empty_arrays() {
    let a = random(&[2, 3], 5);
    let err = BatchStats::<f64>::compute_axis(&a, Axis(2)).unwrap_err();
    assert!(matches!(
        err.kind(),
        ErrorKind::InvalidParameter { name: "axis", .. }
    ));
    let empty = ArrayD::<f64>::zeros(IxDyn(&[0, 3, 4]));
    let s = BatchStats::<f64>::compute_axis(&empty, Axis(1)).unwrap();
    assert_eq!((s.channels(), s.count()), (3, 0));
}
