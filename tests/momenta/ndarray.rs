//! `BatchStats::compute_axis` on `ndarray` views of every shape of memory:
//! standard and Fortran order, permuted and reversed axes, steps,
//! sub-views, several dimensions — against a naive two-pass over each
//! channel's elements gathered by index.

#![cfg(feature = "ndarray")]

use crate::support::{SplitMix, two_pass};
use momenta::ErrorKind;
use momenta::batchnorm::BatchStats;
use momenta::norm::{Backward, BatchNorm, GroupNorm, InstanceNorm, LayerNorm, Layout};
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

/// The slice API's `(y, dx, dγ, dβ)` of `layer` on the NCHW tensor `x`,
/// `dy` (the reference for every array below).
fn slice_pass(
    layer: &str,
    x: &[f64],
    dy: &[f64],
    dims: [usize; 4],
    gamma: &[f64],
) -> [Vec<f64>; 4] {
    let [n, c, h, w] = dims;
    let layout = Layout::nchw(n, c, h, w).unwrap();
    let mut y = vec![0.0_f64; x.len()];
    let mut dx = vec![0.0_f64; x.len()];
    let grads = match layer {
        "batch" => {
            let l = BatchNorm::<f64>::new();
            let s = l
                .normalize_into(x, layout, Some(gamma), None, &mut y)
                .unwrap();
            l.backward(&Backward::new(x, dy, layout, &s).with_gamma(gamma), &mut dx)
                .unwrap()
        }
        "group" => {
            let l = GroupNorm::<f64>::new(2).unwrap();
            let s = l
                .normalize_into(x, layout, Some(gamma), None, &mut y)
                .unwrap();
            l.backward(&Backward::new(x, dy, layout, &s).with_gamma(gamma), &mut dx)
                .unwrap()
        }
        _ => {
            let l = InstanceNorm::<f64>::new();
            let s = l
                .normalize_into(x, layout, Some(gamma), None, &mut y)
                .unwrap();
            l.backward(&Backward::new(x, dy, layout, &s).with_gamma(gamma), &mut dx)
                .unwrap()
        }
    };
    [y, dx, grads.weight, grads.bias]
}

/// The same through the array API, on any view with the channels on
/// `axis`; `y` and `dx` in the view's logical order.
fn array_pass<D: RemoveAxis>(
    layer: &str,
    x: &ndarray::ArrayView<'_, f64, D>,
    dy: &ndarray::ArrayView<'_, f64, D>,
    axis: usize,
    gamma: &[f64],
) -> [Vec<f64>; 4] {
    let ax = Axis(axis);
    let flat = |a: Array<f64, D>| a.iter().copied().collect::<Vec<f64>>();
    macro_rules! run {
        ($l:expr) => {{
            let l = $l;
            let (y, stats) = l.normalize_array(x, ax, Some(gamma), None).unwrap();
            assert_eq!(stats, l.statistics_array(x, ax).unwrap());
            let (dx, g) = l.backward_array(x, dy, ax, &stats, Some(gamma)).unwrap();
            [flat(y), flat(dx), g.weight, g.bias]
        }};
    }
    match layer {
        "batch" => run!(BatchNorm::<f64>::new()),
        "group" => run!(GroupNorm::<f64>::new(2).unwrap()),
        _ => run!(InstanceNorm::<f64>::new()),
    }
}

#[test]
fn the_norm_layers_take_arrays_in_any_memory_order() {
    let dims = [3, 4, 2, 5];
    let x = random(&dims, 6);
    let mut rng = SplitMix(7);
    let dy = Array::from_shape_fn(IxDyn(&dims), |_| rng.signed_unit());
    let gamma = [0.5, 1.5, -2.0, 0.25];
    let flat = |a: &ArrayD<f64>| a.iter().copied().collect::<Vec<f64>>();
    for layer in ["batch", "group", "instance"] {
        let want = slice_pass(layer, &flat(&x), &flat(&dy), dims, &gamma);
        // Standard NCHW, channels on axis 1: the slice API's bits.
        let got = array_pass(layer, &x.view(), &dy.view(), 1, &gamma);
        assert_eq!(got, want, "{layer}, NCHW");
        // Channels last in memory and in logical order (axis 3): the same
        // values in NHWC order, to the last bits or nearly (another order
        // of summation).
        let xt = x
            .view()
            .permuted_axes(IxDyn(&[0, 2, 3, 1]))
            .as_standard_layout()
            .into_owned();
        let dt = dy
            .view()
            .permuted_axes(IxDyn(&[0, 2, 3, 1]))
            .as_standard_layout()
            .into_owned();
        let got = array_pass(layer, &xt.view(), &dt.view(), 3, &gamma);
        let back = |v: &[f64]| -> Vec<f64> {
            let a = ArrayD::from_shape_vec(IxDyn(&[3, 2, 5, 4]), v.to_vec()).unwrap();
            a.permuted_axes(IxDyn(&[0, 3, 1, 2]))
                .iter()
                .copied()
                .collect()
        };
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            let g = if k < 2 { back(g) } else { g.clone() };
            let scale = w.iter().map(|v| v.abs()).fold(1.0, f64::max);
            assert!(
                g.iter().zip(w).all(|(a, b)| (a - b).abs() <= 1e-12 * scale),
                "{layer}, NHWC, output {k}"
            );
        }
        // A permuted view: NCHW logical order over NHWC memory (PyTorch's
        // channels_last), copied into logical order: the NCHW bits.
        let pv = xt.view().permuted_axes(IxDyn(&[0, 3, 1, 2]));
        let pd = dt.view().permuted_axes(IxDyn(&[0, 3, 1, 2]));
        assert_eq!(
            array_pass(layer, &pv, &pd, 1, &gamma),
            want,
            "{layer}, permuted view"
        );
        // A strided view: every other sample, against the same samples
        // made contiguous.
        let sx = x.slice(s![..;2, .., .., ..]);
        let sd = dy.slice(s![..;2, .., .., ..]);
        let (fx, fd): (Vec<f64>, Vec<f64>) =
            (sx.iter().copied().collect(), sd.iter().copied().collect());
        let want = slice_pass(layer, &fx, &fd, [2, 4, 2, 5], &gamma);
        assert_eq!(
            array_pass(layer, &sx, &sd, 1, &gamma),
            want,
            "{layer}, stepped"
        );
    }
}

#[test]
fn layer_norm_takes_arrays_row_by_row_in_logical_order() {
    // (batch, tokens, d) = (3, 4, 6) and its transposed view (3, 6, 4).
    let x = random(&[3, 4, 6], 8);
    let mut rng = SplitMix(9);
    let dy = Array::from_shape_fn(IxDyn(&[3, 4, 6]), |_| rng.signed_unit());
    let gamma: Vec<f64> = (0..6).map(|j| 1.0 + j as f64 / 8.0).collect();
    let ln = LayerNorm::<f64>::new(6).unwrap();
    let flat = |a: &ArrayD<f64>| a.iter().copied().collect::<Vec<f64>>();
    let (xs, gs) = (flat(&x), flat(&dy));
    let layout = Layout::nc(12, 6).unwrap();
    let mut y = vec![0.0_f64; xs.len()];
    let stats = ln
        .normalize_into(&xs, layout, Some(&gamma), None, &mut y)
        .unwrap();
    let mut dx = vec![0.0_f64; xs.len()];
    let grads = ln
        .backward(
            &Backward::new(&xs, &gs, layout, &stats).with_gamma(&gamma),
            &mut dx,
        )
        .unwrap();
    let (ya, sa) = ln.normalize_array(&x, Some(&gamma), None).unwrap();
    assert_eq!((flat(&ya), &sa), (y, &stats));
    let (dxa, ga) = ln.backward_array(&x, &dy, &sa, Some(&gamma)).unwrap();
    assert_eq!((flat(&dxa), ga), (dx, grads));
    // The transposed view: rows of 4 in its logical order.
    let t = x.view().permuted_axes(IxDyn(&[0, 2, 1]));
    let ln4 = LayerNorm::<f64>::new(4).unwrap();
    let owned = t.to_owned();
    assert_eq!(
        ln4.statistics_array(&t).unwrap(),
        ln4.statistics(&flat(&owned)).unwrap()
    );
    // Errors: rows that do not fit, shapes that differ, a bad axis.
    assert!(
        LayerNorm::<f64>::new(5)
            .unwrap()
            .normalize_array(&x, None, None)
            .is_err()
    );
    let e = ln.backward_array(&x, &dy.view().permuted_axes(IxDyn(&[0, 2, 1])), &sa, None);
    assert!(matches!(
        e.unwrap_err().kind(),
        ErrorKind::LengthMismatch {
            what: "gradient axis",
            ..
        }
    ));
    let g = GroupNorm::<f64>::new(1).unwrap();
    for axis in [0, 3] {
        let e = g.normalize_array(&x, Axis(axis), None, None).unwrap_err();
        assert!(matches!(
            e.kind(),
            ErrorKind::InvalidParameter { name: "axis", .. }
        ));
    }
}
