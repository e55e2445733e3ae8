//! Integration tests of `momenta::batchnorm` against the reference vectors
//! V1–V11 (PyTorch, Keras/TensorFlow, cuDNN), plus layout, merge and
//! checkpoint properties.

use crate::support::SplitMix;
use momenta::batchnorm::{
    BatchStats, BatchStatsParts, BnConfig, Layout, RunningStats, VarianceCorrection, fold_linear,
    normalize, scale_shift,
};
use momenta::{ErrorKind, Merge, Momentum};

/// Asserts `|actual − expected| ≤ rel · |expected|`, or ≤ 5e-9 — half a
/// unit in the last printed digit of the reference's smallest values,
/// such as 0.00036961.
#[track_caller]
fn close(actual: f64, expected: f64, rel: f64) {
    let tol = (rel * expected.abs()).max(5e-9);
    assert!(
        (actual - expected).abs() <= tol,
        "got {actual}, expected {expected} (tolerance {tol})"
    );
}

#[track_caller]
fn all_close<F: Copy + Into<f64>>(actual: &[F], expected: &[f64], rel: f64) {
    assert_eq!(actual.len(), expected.len());
    for (&a, &e) in actual.iter().zip(expected) {
        close(a.into(), e, rel);
    }
}

/// Two-pass per-channel mean and biased variance of an NCHW-shaped tensor.
fn naive_stats(xs: &[f64], n: usize, c: usize, hw: usize) -> (Vec<f64>, Vec<f64>) {
    let mut means = vec![0.0; c];
    let mut vars = vec![0.0; c];
    for ch in 0..c {
        let vals: Vec<f64> = (0..n)
            .flat_map(|i| xs[(i * c + ch) * hw..(i * c + ch + 1) * hw].iter().copied())
            .collect();
        let m = vals.iter().sum::<f64>() / vals.len() as f64;
        means[ch] = m;
        vars[ch] = vals.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / vals.len() as f64;
    }
    (means, vars)
}

/// NCHW → NHWC.
fn to_nhwc(xs: &[f64], n: usize, c: usize, h: usize, w: usize) -> Vec<f64> {
    let mut out = vec![0.0; xs.len()];
    for i in 0..n {
        for ch in 0..c {
            for y in 0..h {
                for x in 0..w {
                    out[((i * h + y) * w + x) * c + ch] = xs[((i * c + ch) * h + y) * w + x];
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------- V1

/// Seed 001's x0, NHWC (2, 1, 2, 3).
const V1_X: [f32; 12] = [
    0.16513085, 0.9014813, 0.6309742, 0.4345461, 0.29193902, 0.64250207, 0.9757855, 0.43509948,
    0.6601019, 0.60489583, 0.6366315, 0.6144488,
];

fn v1_layout() -> Layout {
    Layout::nhwc(2, 1, 2, 3).unwrap()
}

#[test]
fn v1_batch_statistics() {
    for s in [
        BatchStats::<f64>::compute(&V1_X, v1_layout()).unwrap(),
        BatchStats::<f32>::compute(&V1_X, v1_layout())
            .unwrap()
            .cast_for_test(),
    ] {
        assert_eq!(s.count(), 4);
        all_close(s.mean(), &[0.5450896, 0.5662878, 0.63700676], 1e-6);
        all_close(&s.variance(), &[0.08641606, 0.05244513, 0.00027721], 1e-6);
        all_close(
            &s.unbiased_variance(),
            &[0.11522141, 0.06992684, 0.00036961],
            1e-6,
        );
        // cuDNN's / TF's saved inverse variance.
        all_close(&s.inv_std(1e-3), &[3.3822396, 4.325596, 27.981367], 1e-6);
    }
}

/// Helper so the f32 and f64 statistics can be checked by one loop.
trait CastForTest {
    fn cast_for_test(self) -> BatchStats<f64>;
}
impl CastForTest for BatchStats<f32> {
    fn cast_for_test(self) -> BatchStats<f64> {
        let mean: Vec<f64> = self.mean().iter().map(|&m| f64::from(m)).collect();
        let m2: Vec<f64> = self
            .sum_squared_deviations()
            .iter()
            .map(|&m| f64::from(m))
            .collect();
        BatchStats::from_mean_m2(self.count(), &mean, &m2).unwrap()
    }
}

#[test]
fn v1_moving_statistics_keras_nonfused_vs_tf_fused() {
    let batch = BatchStats::<f32>::compute(&V1_X, v1_layout()).unwrap();
    let ones = [1.0_f32; 3];

    // Keras non-fused: momentum 0.5 as a decay, biased variance.
    let keras = BnConfig::keras()
        .with_momentum(Momentum::Decay(0.5))
        .unwrap();
    let mut k = RunningStats::with_state(&ones, &ones, keras).unwrap();
    k.update(&batch).unwrap();
    all_close(k.mean(), &[0.7725448, 0.7831439, 0.8185034], 1e-6);
    all_close(k.var(), &[0.543208, 0.5262226, 0.5001386], 1e-6);

    // tf fused: exponential_avg_factor 0.5, unbiased variance.
    let fused = BnConfig::tf_fused()
        .with_momentum(Momentum::Factor(0.5))
        .unwrap();
    let mut f = RunningStats::with_state(&ones, &ones, fused).unwrap();
    f.update(&batch).unwrap();
    all_close(f.mean(), &[0.7725448, 0.7831439, 0.8185034], 1e-6);
    all_close(f.var(), &[0.5576107, 0.5349634, 0.50018483], 1e-6);

    // PyTorch with momentum 0.5 agrees with the fused numbers.
    let torch = BnConfig::pytorch()
        .with_momentum(Momentum::Factor(0.5))
        .unwrap();
    let mut t = RunningStats::with_state(&ones, &ones, torch).unwrap();
    t.update(&batch).unwrap();
    all_close(t.var(), &[0.5576107, 0.5349634, 0.50018483], 1e-6);

    // Keras' default zero-initialised moving mean.
    let mut z = RunningStats::new(3, keras);
    z.update(&batch).unwrap();
    all_close(z.mean(), &[0.2725448, 0.2831439, 0.31850338], 1e-6);
}

#[test]
fn v1_training_output() {
    let layout = v1_layout();
    let batch = BatchStats::<f32>::compute(&V1_X, layout).unwrap();
    let mut y = [0.0_f32; 12];
    batch
        .normalize(&V1_X, layout, 1e-3, None, None, &mut y)
        .unwrap();
    // y[0, 0, 0, :] from the reference (the third printed to 4 digits).
    all_close(&y[..2], &[-1.2851115, 1.4499115], 1e-6);
    close(f64::from(y[2]), -0.1688, 1e-4);
    // The same from the two-pass formula in f64 on these f32 values.
    for c in 0..3 {
        let vals: Vec<f64> = (0..4).map(|i| f64::from(V1_X[i * 3 + c])).collect();
        let m = vals.iter().sum::<f64>() / 4.0;
        let v = vals.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / 4.0;
        close(f64::from(y[c]), (vals[0] - m) / (v + 1e-3).sqrt(), 1e-6);
    }
    // The whole of y(step0) as TensorFlow printed it (seed 001). TF
    // computes in f32 as x·scale + shift, whose cancellation costs up to a
    // few f32 ulps of 1, so the comparison is absolute.
    let seed_y = [
        -1.2851115,
        1.4499114,
        -0.16879845,
        -0.37388456,
        -1.186722,
        0.15376663,
        1.4567168,
        -0.5674678,
        0.6462345,
        0.20227909,
        0.30427837,
        -0.6312027,
    ];
    for (&a, &e) in y.iter().zip(&seed_y) {
        assert!((f64::from(a) - e).abs() < 1e-6, "got {a}, expected {e}");
    }
}

#[test]
fn seed_001_inference_step_uses_the_estimated_statistics() {
    // x(infer), estimated mean/variance and y(infer), from seed 001.
    let x: [f32; 12] = [
        0.8292774, 0.634228, 0.5147276, 0.39108086, 0.5809028, 0.04848182, 0.1776321, 0.70470166,
        0.49190843, 0.3460425, 0.5079107, 0.2216742,
    ];
    let mean = [0.72269297_f32, 0.63172865, 0.62922215];
    let var = [0.29549128_f32, 0.28121024, 0.25281417];
    let expected = [
        0.1957438,
        0.00470471,
        -0.22726214,
        -0.60901,
        -0.09567499,
        -1.1527207,
        -1.0010114,
        0.13736498,
        -0.2725562,
        -0.69172347,
        -0.2330758,
        -0.8089484,
    ];
    let r = RunningStats::with_state(&mean, &var, BnConfig::keras()).unwrap();
    let mut y = [0.0_f32; 12];
    r.normalize(&x, v1_layout(), None, None, &mut y).unwrap();
    // TF's f32 x·scale + shift: absolute error of a few f32 ulps of 1.
    for (&a, &e) in y.iter().zip(&expected) {
        assert!((f64::from(a) - e).abs() < 1e-6, "got {a}, expected {e}");
    }
}

// ---------------------------------------------------------------- V2–V6

#[test]
fn v2_momentum_one_copies_the_batch() {
    let x = [
        2.0, 15.0, 2.0, 1.0, 2.0, 17.0, 2.0, 1.0, -4.0, -2.0, -2.0, -1.0,
    ];
    let batch = BatchStats::<f32>::compute(&x, Layout::nc(3, 4).unwrap()).unwrap();
    let config = BnConfig::pytorch()
        .with_momentum(Momentum::Factor(1.0))
        .unwrap();
    let mut r = RunningStats::new(4, config);
    r.update(&batch).unwrap();
    all_close(r.mean(), &[0.0, 10.0, 0.6666667, 0.3333333], 1e-6);
    all_close(r.var(), &[12.0, 109.0, 5.3333333, 1.3333333], 1e-6);
}

fn v3_x() -> Vec<f64> {
    // x[k] = base + k, base = [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]].
    (0..4)
        .flat_map(|k| (1..=12).map(move |b| f64::from(b + k)))
        .collect()
}

#[test]
fn v3_batchnorm1d_defaults() {
    let x = v3_x();
    let layout = Layout::ncl(4, 3, 4).unwrap();
    let batch = BatchStats::<f64>::compute(&x, layout).unwrap();
    assert_eq!(batch.mean(), &[4.0, 8.0, 12.0]);
    assert_eq!(batch.variance(), vec![2.5; 3]);
    all_close(&batch.unbiased_variance(), &[2.6666667; 3], 1e-6);
    let mut r = RunningStats::new(3, BnConfig::pytorch());
    r.update(&batch).unwrap();
    all_close(r.mean(), &[0.4, 0.8, 1.2], 1e-12);
    all_close(r.var(), &[1.1666667; 3], 1e-6);
    let mut y = vec![0.0; x.len()];
    batch
        .normalize(&x, layout, 1e-5, None, None, &mut y)
        .unwrap();
    all_close(&y[..4], &[-1.8973628, -1.2649085, -0.6324543, 0.0], 1e-6);
    assert_eq!(y[3], 0.0);
}

#[test]
fn v4_unbiased_running_variance() {
    // (16, 2, 3, 3): each channel holds 36 each of 1, 2, 3, 4.
    let (n, c, hw) = (16, 2, 9);
    let x: Vec<f32> = (0..n * c * hw)
        .map(|i| {
            let k = (i / (c * hw)) * hw + i % hw; // index within the channel
            (1 + k % 4) as f32
        })
        .collect();
    let batch = BatchStats::<f32>::compute(&x, Layout::nchw(16, 2, 3, 3).unwrap()).unwrap();
    assert_eq!(batch.count(), 144);
    assert_eq!(batch.variance(), vec![1.25; 2]);
    let mut torch = RunningStats::new(2, BnConfig::pytorch());
    torch.update(&batch).unwrap();
    all_close(torch.var(), &[1.0258741; 2], 1e-6);
    let mut biased = RunningStats::new(
        2,
        BnConfig::pytorch().with_correction(VarianceCorrection::Biased),
    );
    biased.update(&batch).unwrap();
    all_close(biased.var(), &[1.025; 2], 1e-6);
}

#[test]
fn v5_cumulative_momentum() {
    let config = BnConfig::<f64>::pytorch()
        .with_momentum(Momentum::Cumulative)
        .unwrap();
    let mut r = RunningStats::new(1, config);
    let b1 = BatchStats::compute(&[1.0, 2.0, 3.0, 4.0], Layout::nc(4, 1).unwrap()).unwrap();
    r.update(&b1).unwrap();
    close(r.mean()[0], 2.5, 1e-12);
    close(r.var()[0], 1.6666667, 1e-6);
    let b2 = BatchStats::compute(&[10.0, 20.0], Layout::nc(2, 1).unwrap()).unwrap();
    r.update(&b2).unwrap();
    close(r.mean()[0], 8.75, 1e-12);
    close(r.var()[0], 25.833333, 1e-6);
    assert_eq!(r.batches_tracked(), 2);
}

const V6_X: [f64; 120] = [
    -0.7493, -1.0410, 1.6977, -0.6579, 1.7982, -0.0087, 0.2812, -0.1190, 0.2908, -0.5975, -0.0278,
    -0.2138, -1.3130, -1.6048, -2.2028, 0.9452, 0.4002, 0.0831, 1.0004, 0.1860, 0.5004, 0.5539,
    0.9991, -0.2540, -0.0703, -0.3752, -0.1096, -0.2374, 1.0258, -2.2208, -0.0257, 0.6073, -1.1627,
    -0.0964, -1.9718, 1.6577, 0.1931, -0.3692, -0.8011, 0.9059, 0.4797, 0.6521, -0.0165, -0.6683,
    -0.4148, 2.0649, -0.8276, 1.7947, -0.2061, 0.5812, -1.3598, 1.6192, 1.0466, -0.4423, 0.4202,
    0.1749, 0.6969, 0.2616, -0.0369, -1.4951, -0.0814, -0.1877, 0.0267, 0.6150, 0.2402, -1.1440,
    -2.0068, 0.6032, -2.6639, 0.8260, 0.1085, -0.1693, 1.2805, 0.7654, -0.4930, 0.3770, 1.1309,
    0.2303, 0.2949, -0.2634, -0.5225, 0.4269, 0.6341, 1.5736, 0.9827, -1.2499, 0.3509, -1.6243,
    -0.8123, 0.7634, -0.3047, 0.0143, -0.4032, 0.0537, 0.7022, 0.8405, -1.2221, -1.6847, -0.0714,
    -0.1608, 0.5579, -1.5858, 0.4617, -0.6480, 0.1332, 0.0419, -0.9784, 0.4173, 1.2313, -1.9046,
    -0.1656, 0.1259, 0.0763, 1.4252, -0.9115, -0.1093, -0.3100, -0.6734, -1.4357, 0.9205,
];

#[test]
fn v6_pytorch_batchnorm2d() {
    // The data are printed to 4 decimals, so results are checked to about
    // that precision.
    let layout = Layout::nchw(2, 5, 3, 4).unwrap();
    let batch = BatchStats::<f32>::compute(&V6_X, layout).unwrap();
    let mut r = RunningStats::new(5, BnConfig::pytorch());
    r.update(&batch).unwrap();
    let abs = |a: &[f32], e: &[f64], tol: f64| {
        for (&a, &e) in a.iter().zip(e) {
            assert!((f64::from(a) - e).abs() <= tol, "got {a}, expected {e}");
        }
    };
    abs(
        r.mean(),
        &[-0.0133, 0.0197, -0.0153, -0.0073, -0.0020],
        6e-5,
    );
    abs(r.var(), &[0.9972, 0.9842, 0.9956, 0.9866, 0.9898], 6e-5);
    let mut biased = RunningStats::new(
        5,
        BnConfig::pytorch().with_correction(VarianceCorrection::Biased),
    );
    biased.update(&batch).unwrap();
    abs(
        biased.var(),
        &[0.9931, 0.9807, 0.9916, 0.9830, 0.9861],
        6e-5,
    );

    let x32: Vec<f32> = V6_X.iter().map(|&x| x as f32).collect();
    let mut y = vec![0.0_f32; 120];
    batch
        .normalize(&x32, layout, 1e-5, None, None, &mut y)
        .unwrap();
    abs(&y[..4], &[-0.6391, -0.9414, 1.8965, -0.5444], 2e-4);

    // And the full statistics against a two-pass computation.
    let (m, v) = naive_stats(&V6_X, 2, 5, 12);
    let s64 = BatchStats::<f64>::compute(&V6_X, layout).unwrap();
    all_close(s64.mean(), &m, 1e-13);
    all_close(&s64.variance(), &v, 1e-13);
}

// ---------------------------------------------------------------- V7

#[test]
fn v7_synchronized_batchnorm_merge() {
    let rank0 =
        BatchStats::<f64>::compute(&[1.0, 2.0, 3.0, 4.0, 5.0], Layout::nc(5, 1).unwrap()).unwrap();
    let rank1 = BatchStats::<f64>::compute(&[10.0, 11.0, 12.0], Layout::nc(3, 1).unwrap()).unwrap();
    close(rank0.mean()[0], 3.0, 1e-15);
    close(rank0.inv_std(1e-5)[0], 0.707105, 1e-6);
    assert_eq!(rank0.count(), 5);
    close(rank1.mean()[0], 11.0, 1e-15);
    close(rank1.inv_std(1e-5)[0], 1.2247357, 1e-6);
    assert_eq!(rank1.count(), 3);

    // One exchange of the state, as across processes.
    let received = BatchStats::from_parts(rank1.to_parts()).unwrap();
    let mut merged = rank0.clone();
    merged.merge(&received);
    assert_eq!(merged.count(), 8);
    assert_eq!(merged.mean(), &[6.0]);
    assert_eq!(merged.variance(), vec![16.5]);
    close(merged.inv_std(1e-5)[0], 0.24618291, 1e-6);
    let all = [1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 11.0, 12.0];
    let whole = BatchStats::<f64>::compute(&all, Layout::nc(8, 1).unwrap()).unwrap();
    assert_eq!(merged.variance(), whole.variance());

    // Statistics from elsewhere: (count, mean, M2) per channel.
    let triple =
        BatchStats::from_mean_m2(rank1.count(), rank1.mean(), &rank1.sum_squared_deviations())
            .unwrap();
    let mut by_triple = rank0.clone();
    by_triple.merge(&triple);
    assert_eq!(by_triple.variance(), vec![16.5]);

    let mut r = RunningStats::new(1, BnConfig::pytorch());
    r.update(&merged).unwrap();
    close(r.mean()[0], 0.6, 1e-12);
    close(r.var()[0], 2.7857143, 1e-6);

    // The known wrong formula: equal-weight average of per-rank moments.
    let ex2 = |xs: &[f64]| xs.iter().map(|x| x * x).sum::<f64>() / xs.len() as f64;
    let wrong_mean = (3.0 + 11.0) / 2.0;
    let wrong_var = (ex2(&all[..5]) + ex2(&all[5..])) / 2.0 - wrong_mean * wrong_mean;
    assert_eq!(wrong_mean, 7.0);
    close(wrong_var, 17.333333, 1e-6);
    assert_ne!(merged.mean()[0], wrong_mean);
    assert!((merged.variance()[0] - wrong_var).abs() > 0.8);
}

#[test]
fn merged_shards_equal_the_whole_batch() {
    let (n, c, h, w) = (7, 3, 4, 5);
    let mut rng = SplitMix(7);
    let x = rng.vec(n * c * h * w, 1e6, 1.0);
    let whole = BatchStats::<f64>::compute(&x, Layout::nchw(n, c, h, w).unwrap()).unwrap();
    let per_sample = c * h * w;
    for cuts in [vec![3], vec![1, 2, 6], vec![0, 7]] {
        let mut merged = BatchStats::<f64>::new(c);
        let mut start = 0;
        for end in cuts.iter().copied().chain([n]) {
            let shard = &x[start * per_sample..end * per_sample];
            let s =
                BatchStats::compute(shard, Layout::nchw(end - start, c, h, w).unwrap()).unwrap();
            merged.try_merge(&s).unwrap();
            start = end;
        }
        assert_eq!(merged.count(), whole.count());
        all_close(merged.mean(), whole.mean(), 1e-15);
        all_close(&merged.variance(), &whole.variance(), 1e-12);
    }
    // Data 1e6 times their spread: still within 1e-12 of the two-pass value.
    let (m, v) = naive_stats(&x, n, c, h * w);
    all_close(whole.mean(), &m, 1e-15);
    all_close(&whole.variance(), &v, 1e-9);
}

#[cfg(feature = "rayon")]
#[test]
fn parallel_compute_matches_serial() {
    let mut rng = SplitMix(11);
    let x: Vec<f32> = rng
        .vec(4 * 6 * 33, -1.0, 2.0)
        .iter()
        .map(|&v| v as f32)
        .collect();
    let layout = Layout::ncl(4, 6, 33).unwrap();
    let a = BatchStats::<f64>::compute(&x, layout).unwrap();
    let b = BatchStats::<f64>::par_compute(&x, layout).unwrap();
    all_close(a.mean(), b.mean(), 1e-14);
    all_close(&a.variance(), &b.variance(), 1e-12);
}

#[test]
fn mismatched_merge_is_an_error_or_poison() {
    let mut a = BatchStats::<f64>::new(2);
    let err = a.try_merge(&BatchStats::new(3)).unwrap_err();
    assert!(matches!(
        err.kind(),
        ErrorKind::LengthMismatch {
            what: "channels",
            ..
        }
    ));
    assert!(!a.is_poisoned());
    a.merge(&BatchStats::new(3));
    assert!(a.is_poisoned());
    let mut r = RunningStats::new(2, BnConfig::keras());
    let before = r.clone();
    assert!(matches!(
        r.update(&a).unwrap_err().kind(),
        ErrorKind::InvalidState { .. }
    ));
    assert_eq!(r, before);
}

// ---------------------------------------------------------------- V8

#[test]
fn v8_float32_cancellation() {
    let x: [f32; 4] = [1000.1, 1000.2, 1000.3, 1000.4];
    // The textbook formula in f32 loses everything.
    let n = 4.0_f32;
    let ex = x.iter().sum::<f32>() / n;
    let ex2 = x.iter().map(|v| v * v).sum::<f32>() / n;
    assert_eq!(ex2 - ex * ex, 0.0);
    // Exact variance of these f32 values: 0.01250305213.
    let s = BatchStats::<f32>::compute(&x, Layout::nc(4, 1).unwrap()).unwrap();
    close(f64::from(s.variance()[0]), 0.01250305213, 1e-7);
    let s = BatchStats::<f64>::compute(&x, Layout::nc(4, 1).unwrap()).unwrap();
    close(s.variance()[0], 0.01250305213, 1e-9);
}

// ---------------------------------------------------------------- V9

#[test]
fn v9_fold_into_linear() {
    let mut w = [0.5, -1.0, 2.0, 1.5, 0.25, -0.75];
    let mut b = [0.1, -0.2];
    let (gamma, beta) = ([1.2, 0.8], [0.05, -0.3]);
    let config = BnConfig::<f64>::pytorch();
    let r = RunningStats::with_state(&[0.4, -0.6], &[2.0, 0.5], config).unwrap();

    // BN(Wx + b) before folding.
    let x = [1.0, 2.0, 3.0];
    let wx: Vec<f64> = (0..2)
        .map(|o| b[o] + (0..3).map(|i| w[o * 3 + i] * x[i]).sum::<f64>())
        .collect();
    let mut bn = [0.0; 2];
    r.normalize(
        &wx,
        Layout::nc(1, 2).unwrap(),
        Some(&gamma),
        Some(&beta),
        &mut bn,
    )
    .unwrap();
    all_close(&bn, &[3.6138093, -0.1302961], 1e-6);

    r.fold_linear(&mut w, &mut b, Some(&gamma), Some(&beta))
        .unwrap();
    all_close(
        &w,
        &[
            0.424263, -0.848526, 1.697052, 1.6970393, 0.2828399, -0.8485197,
        ],
        1e-6,
    );
    all_close(&b, &[-0.2045578, 0.1525438], 1e-6);
    let folded: Vec<f64> = (0..2)
        .map(|o| b[o] + (0..3).map(|i| w[o * 3 + i] * x[i]).sum::<f64>())
        .collect();
    all_close(&folded, &bn, 1e-12);

    // The free functions agree, and scale/shift reproduce normalize.
    let mut w2 = [0.5, -1.0, 2.0, 1.5, 0.25, -0.75];
    let mut b2 = [0.1, -0.2];
    fold_linear(
        &mut w2,
        &mut b2,
        r.mean(),
        r.var(),
        1e-5,
        Some(&gamma),
        Some(&beta),
    )
    .unwrap();
    assert_eq!((w2, b2), (w, b));
    let (scale, shift) = scale_shift(r.mean(), r.var(), 1e-5, Some(&gamma), Some(&beta)).unwrap();
    assert_eq!(
        (scale.clone(), shift.clone()),
        r.scale_shift(Some(&gamma), Some(&beta)).unwrap()
    );
    for o in 0..2 {
        close(wx[o] * scale[o] + shift[o], bn[o], 1e-12);
    }
}

#[test]
fn fold_works_for_convolution_kernels() {
    // Conv with 2 output channels, 3 input channels, 2×2 kernel: each
    // output channel's 12 weights are scaled by its s.
    let mut rng = SplitMix(5);
    let w0 = rng.vec(2 * 3 * 2 * 2, -1.0, 2.0);
    let mut w = w0.clone();
    let mut b = [0.0, 0.0];
    let (mean, var) = ([0.5, -0.25], [4.0, 0.0625]);
    fold_linear(&mut w, &mut b, &mean, &var, 0.0, None, None).unwrap();
    for (i, (&a, &e)) in w.iter().zip(&w0).enumerate() {
        let s = if i < 12 { 0.5 } else { 4.0 };
        assert_eq!(a, e * s);
    }
    assert_eq!(b, [-0.25, 1.0]);
}

// ---------------------------------------------------------------- V10, V11

#[test]
fn v10_cudnn_cumulative_mode() {
    let config = BnConfig::<f64>::cudnn(0.1)
        .unwrap()
        .with_momentum(Momentum::Cumulative)
        .unwrap();
    let mut r = RunningStats::with_state(&[123.0], &[7.0], config).unwrap();
    for batch in [[2.0, 4.0], [5.0, 5.0], [9.0, 11.0]] {
        r.update(&BatchStats::compute(&batch, Layout::nc(2, 1).unwrap()).unwrap())
            .unwrap();
    }
    assert_eq!(r.mean(), &[6.0]);
    // Unbiased variances 2, 0, 2 → 4/3.
    close(r.var()[0], 4.0 / 3.0, 1e-15);
}

#[test]
fn v11_one_value_per_channel() {
    let x = [0.5_f32, -2.0, 3.0];
    let layout = Layout::nc(1, 3).unwrap();
    let batch = BatchStats::<f32>::compute(&x, layout).unwrap();

    for config in [BnConfig::pytorch(), BnConfig::cudnn(0.1).unwrap()] {
        let mut r = RunningStats::new(3, config);
        let err = r.update(&batch).unwrap_err();
        assert_eq!(
            err.kind(),
            &ErrorKind::TooFewValues {
                needed: 2,
                actual: 1
            }
        );
        assert_eq!(
            err.to_string(),
            "expected at least 2 values per channel, got 1"
        );
        assert_eq!(r.batches_tracked(), 0);
    }
    // Keras (biased) and tf fused (max(n − 1, 1)): variance 0, no error.
    for config in [BnConfig::keras(), BnConfig::tf_fused()] {
        let mut r = RunningStats::new(3, config);
        r.update(&batch).unwrap();
        let decay = 1.0 - f64::from(config.momentum().factor(1));
        all_close(r.var(), &[decay; 3], 1e-6);
    }
    // And y = 0.
    let mut y = [1.0_f32; 3];
    batch
        .normalize(&x, layout, 1e-3, None, None, &mut y)
        .unwrap();
    assert_eq!(y, [0.0; 3]);
    // No values at all is an error for every convention.
    let empty = BatchStats::<f32>::compute::<f32>(&[], Layout::nc(0, 3).unwrap()).unwrap();
    let mut r = RunningStats::new(3, BnConfig::keras());
    assert_eq!(
        r.update(&empty).unwrap_err().kind(),
        &ErrorKind::TooFewValues {
            needed: 1,
            actual: 0
        }
    );
}

// ---------------------------------------------------------------- layouts

#[test]
fn nchw_and_nhwc_give_the_same_statistics_and_outputs() {
    let (n, c, h, w) = (3, 4, 5, 6);
    let mut rng = SplitMix(42);
    let nchw = rng.vec(n * c * h * w, 10.0, 3.0);
    let nhwc = to_nhwc(&nchw, n, c, h, w);
    let a = BatchStats::<f64>::compute(&nchw, Layout::nchw(n, c, h, w).unwrap()).unwrap();
    let b = BatchStats::<f64>::compute(&nhwc, Layout::nhwc(n, h, w, c).unwrap()).unwrap();
    assert_eq!(a.count(), b.count());
    all_close(a.mean(), b.mean(), 1e-14);
    all_close(&a.variance(), &b.variance(), 1e-12);
    let (m, v) = naive_stats(&nchw, n, c, h * w);
    all_close(a.mean(), &m, 1e-14);
    all_close(&a.variance(), &v, 1e-12);

    let gamma = [1.0, 2.0, 0.5, -1.0];
    let beta = [0.0, 0.1, -0.2, 0.3];
    let mut ya = vec![0.0; nchw.len()];
    let mut yb = vec![0.0; nhwc.len()];
    a.normalize(
        &nchw,
        Layout::nchw(n, c, h, w).unwrap(),
        1e-5,
        Some(&gamma),
        Some(&beta),
        &mut ya,
    )
    .unwrap();
    a.normalize(
        &nhwc,
        Layout::nhwc(n, h, w, c).unwrap(),
        1e-5,
        Some(&gamma),
        Some(&beta),
        &mut yb,
    )
    .unwrap();
    // The same parameters, so the same arithmetic per element: bit-equal.
    assert_eq!(to_nhwc(&ya, n, c, h, w), yb);
    // Given the mean rounded to f64 (the statistics' own normalizer takes
    // it as shift plus offset), within the mean's rounding times the scale.
    normalize(
        &nhwc,
        Layout::nhwc(n, h, w, c).unwrap(),
        a.mean(),
        &a.variance(),
        1e-5,
        Some(&gamma),
        Some(&beta),
        &mut yb,
    )
    .unwrap();
    let apart = to_nhwc(&ya, n, c, h, w)
        .iter()
        .zip(&yb)
        .map(|(p, q)| (p - q).abs())
        .fold(0.0, f64::max);
    assert!(apart <= 1e-14, "{apart}");
    // And the normalized output has mean β and variance γ²·σ²/(σ² + eps).
    let out = BatchStats::<f64>::compute(&ya, Layout::nchw(n, c, h, w).unwrap()).unwrap();
    all_close(out.mean(), &beta, 1e-12);
    for ch in 0..c {
        let expect = gamma[ch] * gamma[ch] * v[ch] / (v[ch] + 1e-5);
        close(out.variance()[ch], expect, 1e-12);
    }
}

#[test]
fn wrong_lengths_are_errors_not_panics() {
    let layout = Layout::nchw(2, 3, 2, 2).unwrap();
    assert!(BatchStats::<f64>::compute(&[0.0; 23], layout).is_err());
    let s = BatchStats::<f64>::compute(&[0.0; 24], layout).unwrap();
    let mut out = [0.0; 24];
    assert!(
        s.normalize(
            &[0.0; 24],
            Layout::nchw(2, 4, 3, 1).unwrap(),
            1e-5,
            None,
            None,
            &mut out
        )
        .is_err()
    );
    assert!(
        s.normalize(&[0.0; 24], layout, 1e-5, Some(&[1.0; 2]), None, &mut out)
            .is_err()
    );
    assert!(
        s.normalize(&[0.0; 24], layout, f64::NAN, None, None, &mut out)
            .is_err()
    );
    let mut r = RunningStats::new(2, BnConfig::pytorch());
    let err = r.update(&s).unwrap_err();
    assert_eq!(err.to_string(), "batch channels must have length 2, got 3");
}

// ---------------------------------------------------------------- serde

#[cfg(feature = "serde")]
mod checkpoint {
    use super::*;

    fn batches(seed: u64, k: usize) -> Vec<BatchStats<f32>> {
        let mut rng = SplitMix(seed);
        (0..k)
            .map(|_| {
                let x: Vec<f32> = rng
                    .vec(2 * 3 * 4, 0.5, 2.0)
                    .iter()
                    .map(|&v| v as f32)
                    .collect();
                BatchStats::compute(&x, Layout::ncl(2, 3, 4).unwrap()).unwrap()
            })
            .collect()
    }

    #[test]
    fn restore_continues_bit_for_bit() {
        let configs = [
            BnConfig::<f32>::pytorch(),
            BnConfig::keras(),
            BnConfig::tf_fused(),
            BnConfig::pytorch()
                .with_momentum(Momentum::Cumulative)
                .unwrap(),
            BnConfig::cudnn(0.3).unwrap(),
        ];
        for config in configs {
            let bs = batches(3, 8);
            let mut straight = RunningStats::new(3, config);
            for b in &bs {
                straight.update(b).unwrap();
            }
            let mut first = RunningStats::new(3, config);
            for b in &bs[..5] {
                first.update(b).unwrap();
            }
            let json = serde_json::to_string(&first).unwrap();
            let mut restored: RunningStats<f32> = serde_json::from_str(&json).unwrap();
            assert_eq!(restored, first);
            for b in &bs[5..] {
                restored.update(b).unwrap();
            }
            assert_eq!(restored, straight);
            assert_eq!(restored.batches_tracked(), 8);
        }
    }

    #[test]
    fn batch_stats_round_trip_and_merge_alike() {
        let bs = batches(9, 3);
        let json = serde_json::to_string(&bs[0]).unwrap();
        let mut back: BatchStats<f32> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, bs[0]);
        let mut orig = bs[0].clone();
        back.merge(&bs[1]);
        orig.merge(&bs[1]);
        assert_eq!(back, orig);
    }

    #[test]
    fn corrupt_checkpoints_are_rejected() {
        let good = serde_json::to_value(RunningStats::<f64>::new(2, BnConfig::pytorch())).unwrap();
        let edit = |f: &dyn Fn(&mut serde_json::Value)| {
            let mut v = good.clone();
            f(&mut v);
            serde_json::from_value::<RunningStats<f64>>(v)
        };
        assert!(edit(&|_| {}).is_ok());
        let unequal = edit(&|v| v["var"] = serde_json::json!([1.0, 1.0, 1.0]));
        assert!(
            unequal
                .unwrap_err()
                .to_string()
                .contains("running variance")
        );
        let negative = edit(&|v| v["var"] = serde_json::json!([1.0, -0.5]));
        assert!(negative.unwrap_err().to_string().contains("non-negative"));
        let momentum = edit(&|v| v["config"]["momentum"] = serde_json::json!({"Factor": 1.5}));
        assert!(
            momentum
                .unwrap_err()
                .to_string()
                .contains("momentum must be in [0, 1]")
        );
        let eps = edit(&|v| v["config"]["eps"] = serde_json::json!(-1e-5));
        assert!(eps.unwrap_err().to_string().contains("eps"));

        let cudnn =
            serde_json::to_value(RunningStats::<f64>::new(1, BnConfig::cudnn(0.1).unwrap()))
                .unwrap();
        let mut small = cudnn.clone();
        small["config"]["eps"] = serde_json::json!(1e-6);
        assert!(serde_json::from_value::<RunningStats<f64>>(small).is_err());

        let stats = serde_json::to_value(
            BatchStats::<f64>::compute(&[1.0, 2.0, 3.0, 4.0], Layout::nc(2, 2).unwrap()).unwrap(),
        )
        .unwrap();
        // One value per channel cannot have a spread (M2 is 2 here).
        let mut counts = stats.clone();
        counts["count"] = serde_json::json!(1);
        assert!(serde_json::from_value::<BatchStats<f64>>(counts).is_err());
        // Per-channel vectors of different lengths.
        let mut lengths = stats.clone();
        lengths["offset"] = serde_json::json!([1.0]);
        assert!(serde_json::from_value::<BatchStats<f64>>(lengths).is_err());
        let mut m2 = stats.clone();
        m2["m2"][0] = serde_json::json!(-1.0);
        assert!(serde_json::from_value::<BatchStats<f64>>(m2).is_err());
    }
}

#[test]
fn auto_traits() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<BatchStats<f32>>();
    assert_send_sync::<RunningStats<f64>>();
    assert_send_sync::<BnConfig<f32>>();
    fn assert_copy<T: Copy>() {}
    assert_copy::<Layout>();
    assert_copy::<BnConfig<f64>>();
}

// ------------------------------------------------- lossless exchange (SyncBN)

/// Every bit of the state, so NaN states compare equal to themselves.
fn state_bits(p: &BatchStatsParts) -> (u64, Vec<u64>, bool) {
    let bits = p
        .shift
        .iter()
        .chain(&p.offset)
        .chain(&p.m2)
        .map(|x| x.to_bits())
        .collect();
    (p.count, bits, p.poisoned)
}

/// Two channels (NC): channel 0 is `1e4 + 0.01·U(0, 1)` rounded to f32 —
/// a mean 10⁶ times the spread — channel 1 is `U(-1, 1)`.
fn sync_data(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = SplitMix(seed);
    (0..n)
        .flat_map(|_| {
            let a = (1e4 + 1e-2 * rng.unit()) as f32;
            let b = (2.0 * rng.unit() - 1.0) as f32;
            [a, b]
        })
        .collect()
}

/// Two-pass population variance, in f64, of channel `ch` of NC data with 2
/// channels.
fn two_pass_variance(xs: &[f32], ch: usize) -> f64 {
    let v: Vec<f64> = xs
        .iter()
        .skip(ch)
        .step_by(2)
        .map(|&x| f64::from(x))
        .collect();
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / v.len() as f64
}

#[test]
fn sync_exchange_through_parts_is_lossless_for_f32() {
    // Three ranks with 1, 7 and 24 samples. Each rank sends `to_parts`;
    // the receiver rebuilds and merges. A single process merging the same
    // shards must give the same bits, and the merged variance must be the
    // two-pass variance of all 32 values to f32 precision.
    let xs = sync_data(32, 11);
    let mut shards = Vec::new();
    let mut start = 0;
    for n in [1, 7, 24] {
        let layout = Layout::nc(n, 2).unwrap();
        shards.push(BatchStats::<f32>::compute(&xs[2 * start..2 * (start + n)], layout).unwrap());
        start += n;
    }
    let mut single = BatchStats::<f32>::new(2);
    let mut exchanged = BatchStats::<f32>::new(2);
    for shard in &shards {
        single.merge(shard);
        let wire = shard.to_parts();
        exchanged.merge(&BatchStats::from_parts(wire).unwrap());
    }
    assert_eq!(
        state_bits(&exchanged.to_parts()),
        state_bits(&single.to_parts())
    );
    for ch in 0..2 {
        assert_eq!(
            exchanged.variance()[ch].to_bits(),
            single.variance()[ch].to_bits()
        );
        let exact = two_pass_variance(&xs, ch);
        let got = f64::from(exchanged.variance()[ch]);
        assert!(
            (got - exact).abs() <= 1e-6 * exact,
            "channel {ch}: {got} vs {exact}"
        );
    }

    // The rounded getters lose the digits: the same exchange through
    // `count`, `mean`, `sum_squared_deviations` and `from_mean_m2` is far
    // off on channel 0 (this is what the docs used to recommend).
    let mut rounded = BatchStats::<f32>::new(2);
    for shard in &shards {
        let m2 = shard.sum_squared_deviations();
        rounded.merge(&BatchStats::from_mean_m2(shard.count(), shard.mean(), &m2).unwrap());
    }
    let exact = two_pass_variance(&xs, 0);
    assert!((f64::from(rounded.variance()[0]) - exact).abs() > 1e-4 * exact);
}

#[test]
fn parts_round_trip_bit_for_bit_and_continue_alike() {
    let xs = sync_data(40, 5);
    let layout = |n| Layout::nc(n, 2).unwrap();
    let a = BatchStats::<f32>::compute(&xs[..30], layout(15)).unwrap();
    let b = BatchStats::<f32>::compute(&xs[30..], layout(25)).unwrap();

    let mut rebuilt = BatchStats::<f32>::from_parts(a.to_parts()).unwrap();
    assert_eq!(rebuilt, a);
    let mut original = a.clone();
    original.merge(&b);
    rebuilt.merge(&b);
    assert_eq!(
        state_bits(&rebuilt.to_parts()),
        state_bits(&original.to_parts())
    );
    // Merged the other way round too.
    let mut other = b.clone();
    other.merge(&BatchStats::from_parts(a.to_parts()).unwrap());
    let mut direct = b.clone();
    direct.merge(&a);
    assert_eq!(
        state_bits(&other.to_parts()),
        state_bits(&direct.to_parts())
    );

    // The parts are the same for both float types.
    let wide = BatchStats::<f64>::from_parts(a.to_parts()).unwrap();
    assert_eq!(state_bits(&wide.to_parts()), state_bits(&a.to_parts()));

    // NaN and ±∞ states, and the poison flag, round-trip.
    let odd = [1.0, f32::NAN, f32::INFINITY, 2.0, 3.0, -1.0];
    let s = BatchStats::<f32>::compute(&odd, Layout::nc(3, 2).unwrap()).unwrap();
    let back = BatchStats::<f32>::from_parts(s.to_parts()).unwrap();
    assert_eq!(state_bits(&back.to_parts()), state_bits(&s.to_parts()));
    assert!(back.mean()[0].is_infinite() && back.mean()[1].is_nan());
    let mut poisoned = a.clone();
    poisoned.merge(&BatchStats::new(3));
    let back = BatchStats::<f32>::from_parts(poisoned.to_parts()).unwrap();
    assert!(back.is_poisoned());
    assert!(
        RunningStats::new(2, BnConfig::keras())
            .update(&back)
            .is_err()
    );
}

#[test]
fn invalid_parts_are_rejected_with_the_broken_invariant() {
    let good = BatchStats::<f32>::compute(&[1.0_f32, 2.0, 4.0, 8.0], Layout::nc(2, 2).unwrap())
        .unwrap()
        .to_parts();
    let cases: [(BatchStatsParts, &str); 5] = [
        (
            BatchStatsParts {
                m2: vec![1.0, -0.5],
                ..good.clone()
            },
            "invalid state: m2 must be non-negative, got -0.5",
        ),
        (
            BatchStatsParts {
                offset: vec![0.0],
                ..good.clone()
            },
            "offset must have length 2, got 1",
        ),
        (
            BatchStatsParts {
                m2: vec![0.0, 0.0, 0.0],
                ..good.clone()
            },
            "m2 must have length 2, got 3",
        ),
        (
            BatchStatsParts {
                count: 0,
                ..good.clone()
            },
            "invalid state: count is 0 but the moments are not",
        ),
        (
            BatchStatsParts {
                count: 1,
                ..good.clone()
            },
            "invalid state: m2 must be 0 when count is 1",
        ),
    ];
    for (parts, message) in cases {
        let err = BatchStats::<f64>::from_parts(parts).unwrap_err();
        assert_eq!(err.to_string(), message);
    }
    assert!(BatchStats::<f32>::from_parts(good).is_ok());
}

// ------------------------------------------------ f32 ↔ f64 batch statistics

#[test]
fn batch_statistics_convert_losslessly_between_float_types() {
    let xs = sync_data(9, 21);
    let layout = Layout::nc(9, 2).unwrap();
    let narrow = BatchStats::<f32>::compute(&xs, layout).unwrap();
    let wide = BatchStats::<f64>::compute(&xs, layout).unwrap();
    // The state is f64 in both: the conversions keep every bit.
    assert_eq!(BatchStats::<f64>::from(narrow.clone()), wide);
    assert_eq!(BatchStats::<f32>::from(wide.clone()), narrow);
    assert_eq!(narrow.convert::<f64>().mean(), wide.mean());
    // The f64 getters of converted f32 statistics are the f64 two-pass mean.
    let mean1: f64 = xs
        .iter()
        .skip(1)
        .step_by(2)
        .map(|&x| f64::from(x))
        .sum::<f64>()
        / 9.0;
    assert!((narrow.convert::<f64>().mean()[1] - mean1).abs() <= 1e-15);

    // f32 running statistics take f64 batch statistics through `convert`.
    let mut from_wide = RunningStats::<f32>::new(2, BnConfig::pytorch());
    from_wide.update(&wide.convert()).unwrap();
    let mut from_narrow = RunningStats::<f32>::new(2, BnConfig::pytorch());
    from_narrow.update(&narrow).unwrap();
    assert_eq!(from_wide, from_narrow);
    // 0.9·0 + 0.1·mean, for the mean of channel 1.
    let expected = (0.1 * mean1) as f32;
    assert!((from_wide.mean()[1] - expected).abs() <= f32::EPSILON * expected.abs());
    // And the other way: f64 running statistics from f32 batch statistics.
    let mut r64 = RunningStats::<f64>::new(2, BnConfig::pytorch());
    r64.update(&narrow.convert()).unwrap();
    assert!((r64.mean()[1] - 0.1 * mean1).abs() <= 1e-16);
}

// ------------------------------------------ running statistics vs frameworks

/// The batches of the drift tests: batch `t` is the two f32 values
/// `c ± d`, with `c = 1 + (7919·t mod 1000)/1024` and
/// `d = 1/2 + (104729·t mod 512)/2048`. Both are short dyadic fractions, so
/// every framework computes the batch mean `c`, biased variance `d²` and
/// unbiased variance `2d²` exactly: the tests compare the running updates
/// alone.
fn drift_batch(t: u64) -> [f32; 2] {
    let c = 1.0 + ((t * 7919) % 1000) as f32 / 1024.0;
    let d = 0.5 + ((t * 104_729) % 512) as f32 / 2048.0;
    [c - d, c + d]
}

/// Signed distance from `x` to `exact`, in f32 ulps at `exact`.
fn ulps32(x: f32, exact: f64) -> f64 {
    let e = (exact as f32).abs();
    let ulp = f32::from_bits(e.to_bits() + 1) - e;
    (f64::from(x) - exact) / f64::from(ulp)
}

/// A double-double number `hi + lo` (about 106 bits): the running average
/// of a few thousand updates, evaluated in it, is exact for the purpose of
/// measuring f32 ulps (its own error is ~1e-25 of an f32 ulp).
#[derive(Clone, Copy)]
struct Dd(f64, f64);

impl Dd {
    fn renorm(hi: f64, lo: f64) -> Dd {
        let s = hi + lo;
        Dd(s, lo - (s - hi))
    }
    fn add(self, o: Dd) -> Dd {
        let s = self.0 + o.0;
        let v = s - self.0;
        let e = (self.0 - (s - v)) + (o.0 - v);
        Dd::renorm(s, e + self.1 + o.1)
    }
    fn mul(self, o: Dd) -> Dd {
        let p = self.0 * o.0;
        let e = self.0.mul_add(o.0, -p);
        Dd::renorm(p, e + self.0 * o.1 + self.1 * o.0)
    }
    fn value(self) -> f64 {
        self.0 + self.1
    }
}

/// Distance in f32 ulps from `x` to the double-double `exact`.
fn ulps32_dd(x: f32, exact: Dd) -> f64 {
    let e = (exact.0 as f32).abs();
    let ulp = f32::from_bits(e.to_bits() + 1) - e;
    ((f64::from(x) - exact.0) - exact.1) / f64::from(ulp)
}

/// Runs `t` batches through f32 running statistics and, beside them, the
/// same recurrence `r ← w_old·r + w_new·b` evaluated exactly (in
/// double-double); returns the final state and the exact values, and the
/// largest distance in ulps seen at any step (mean, variance).
fn drift(
    config: BnConfig<f32>,
    w_old: Dd,
    w_new: Dd,
    t: u64,
) -> (RunningStats<f32>, [Dd; 2], [f64; 2]) {
    let unbiased = config.correction() == VarianceCorrection::Unbiased;
    let mut r = RunningStats::new(1, config);
    let mut exact = [Dd(0.0, 0.0), Dd(1.0, 0.0)];
    let mut worst = [0.0_f64; 2];
    for k in 0..t {
        let x = drift_batch(k);
        r.update(&BatchStats::compute(&x, Layout::nc(2, 1).unwrap()).unwrap())
            .unwrap();
        let c = f64::from(x[0] + x[1]) / 2.0;
        let d = f64::from(x[1] - x[0]) / 2.0;
        let var = if unbiased { 2.0 * d * d } else { d * d };
        for (i, b) in [c, var].into_iter().enumerate() {
            exact[i] = w_old.mul(exact[i]).add(w_new.mul(Dd(b, 0.0)));
        }
        worst[0] = worst[0].max(ulps32_dd(r.mean()[0], exact[0]).abs());
        worst[1] = worst[1].max(ulps32_dd(r.var()[0], exact[1]).abs());
    }
    (r, exact, worst)
}

/// Keras 3 evaluates `moving·momentum + batch·(1 − momentum)` on float32
/// tensors with `momentum` the Python float 0.99: both weights are float32,
/// 0.99 → 0x3F7D70A4 and 1 − 0.99 = 0.010000000000000009 → 0x3C23D70A.
const KERAS_OLD: u32 = 0x3F7D_70A4;
const KERAS_NEW: u32 = 0x3C23_D70A;

#[test]
fn keras_f32_preset_blends_with_keras_float32_weights() {
    // One update from 0 with batch mean 1 is the weight of the batch.
    let mut r = RunningStats::new(1, BnConfig::<f32>::keras());
    r.update(&BatchStats::compute(&[1.0_f32, 1.0], Layout::nc(2, 1).unwrap()).unwrap())
        .unwrap();
    assert_eq!(r.mean()[0].to_bits(), KERAS_NEW);
    assert_eq!(r.mean()[0], (1.0 - 0.99_f64) as f32);
    // f64 keeps Python's own arithmetic: 1 − 0.99 in f64.
    let mut r = RunningStats::new(1, BnConfig::<f64>::keras());
    r.update(&BatchStats::compute(&[1.0, 1.0], Layout::nc(2, 1).unwrap()).unwrap())
        .unwrap();
    assert_eq!(r.mean()[0], 1.0 - 0.99);

    // 50 batches. The exact results of the recurrence with Keras' float32
    // weights, and Keras 3's own float32 arithmetic, recorded from Python
    // (`fractions.Fraction` for the exact values; numpy float32 for Keras:
    // r = float32(float32(r·β) + float32(b·α)) with β, α as above).
    let w_old = Dd(f64::from(f32::from_bits(KERAS_OLD)), 0.0);
    let w_new = Dd(f64::from(f32::from_bits(KERAS_NEW)), 0.0);
    let (r, exact, worst) = drift(BnConfig::keras(), w_old, w_new, 50);
    let exact_recorded = [0.575_343_949_316_808_2, 0.760_189_603_435_650_6];
    let keras3 = [f32::from_bits(0x3F13_49BA), f32::from_bits(0x3F42_9BC7)];
    for i in 0..2 {
        assert!((exact[i].value() - exact_recorded[i]).abs() < 1e-15);
    }
    let got = [r.mean()[0], r.var()[0]];
    let from_exact = [
        ulps32(got[0], exact_recorded[0]),
        ulps32(got[1], exact_recorded[1]),
    ];
    let from_keras = [
        f64::from(got[0].to_bits() as i32 - keras3[0].to_bits() as i32),
        f64::from(got[1].to_bits() as i32 - keras3[1].to_bits() as i32),
    ];
    let keras_from_exact = [
        ulps32(keras3[0], exact_recorded[0]),
        ulps32(keras3[1], exact_recorded[1]),
    ];
    println!(
        "keras f32, 50 batches: momenta {from_exact:.2?} ulps from exact (worst step {worst:.2?}), {from_keras:?} from Keras 3; Keras 3 {keras_from_exact:.2?} from exact"
    );
    for i in 0..2 {
        assert!(from_exact[i].abs() <= 1.5, "{from_exact:?}");
        assert!(worst[i] <= 2.0, "{worst:?}");
        assert!(from_keras[i].abs() <= 4.0, "{from_keras:?}");
        // Keras' three float32 roundings per update drift further.
        assert!(keras_from_exact[i].abs() > 2.0);
    }
}

#[test]
fn running_statistics_drift_over_many_updates() {
    // 1000 batches through the f32 presets, checked at every step against
    // the same recurrence evaluated exactly (double-double), with each
    // preset's own weights. Every update of `RunningStats` is rounded once
    // (to within half an ulp of the exact blend of the stored f32 value);
    // the f32 state's roundings still add up, more so for a slow average.
    let alpha = f64::from(0.1_f32);
    let (torch, torch_exact, torch_worst) = drift(
        BnConfig::pytorch(),
        Dd(1.0 - alpha, 0.0),
        Dd(alpha, 0.0),
        1000,
    );
    let keras_old = Dd(f64::from(f32::from_bits(KERAS_OLD)), 0.0);
    let keras_new = Dd(f64::from(f32::from_bits(KERAS_NEW)), 0.0);
    let (keras, keras_exact, keras_worst) = drift(BnConfig::keras(), keras_old, keras_new, 1000);
    println!(
        "worst over 1000 updates: pytorch {torch_worst:.2?} ulps, keras {keras_worst:.2?} ulps"
    );
    assert!(torch_worst.iter().all(|&w| w <= 2.0), "{torch_worst:?}");
    assert!(keras_worst.iter().all(|&w| w <= 7.0), "{keras_worst:?}");

    // Recorded from Python: the exact result of PyTorch's recurrence with
    // momentum exactly 0.1 (`fractions.Fraction`), and PyTorch's documented
    // update `(1 − m)·r + m·b` evaluated on float32 tensors, as torch does
    // for a Python-float momentum (numpy float32 emulation; torch itself is
    // not run here). PyTorch's CPU kernel instead blends in double and
    // rounds once, as momenta does.
    let torch_decimal = [1.409_778_465_811_247_3, 0.783_430_074_397_923];
    let torch_f32 = [f32::from_bits(0x3FB4_739C), f32::from_bits(0x3F48_8EDB)];
    let ours = [torch.mean()[0], torch.var()[0]];
    for i in 0..2 {
        let momenta = ulps32(ours[i], torch_decimal[i]);
        let pytorch = ulps32(torch_f32[i], torch_decimal[i]);
        println!(
            "pytorch preset after 1000: momenta {momenta:.2} ulps, torch f32 formula {pytorch:.2} ulps from exact"
        );
        assert!(momenta.abs() <= 1.0);
        assert!(pytorch.abs() >= 2.5);
        assert!((torch_exact[i].value() - torch_decimal[i]).abs() < 1e-6);
    }

    // Keras 3 after 1000 updates (numpy float32 emulation, as above) and
    // the exact result with its float32 weights (`fractions.Fraction`).
    let keras_recorded = [1.484_956_580_868_837, 0.395_590_603_122_235_54];
    let keras3 = [f32::from_bits(0x3FBE_1312), f32::from_bits(0x3ECA_8AD2)];
    let ours = [keras.mean()[0], keras.var()[0]];
    for i in 0..2 {
        assert!((keras_exact[i].value() - keras_recorded[i]).abs() < 1e-15);
        let momenta = ulps32(ours[i], keras_recorded[i]);
        let k3 = ulps32(keras3[i], keras_recorded[i]);
        println!(
            "keras preset after 1000: momenta {momenta:.2} ulps, Keras 3 {k3:.2} ulps from exact"
        );
        assert!(momenta.abs() <= 3.0);
    }
}
