//! Half-precision tensors (feature `half`): `f16` and `bf16` slices go
//! through the same kernels as `f32`, widened exactly, so their statistics
//! are bit-for-bit those of the same values given as `f64`.

#![cfg(feature = "half")]

use crate::support::{BLOCK_F64, Dd, SplitMix, exact_norm, to_nhwc};
use half::{bf16, f16};
use momenta::batchnorm::{BatchStats, Layout};
use momenta::norm::{
    Backward, BatchNorm, BnConfig, GroupNorm, InstanceNorm, LayerNorm, RunningStats,
};
use momenta::{Element, Mean, Variance};

#[test]
fn every_f16_and_bf16_widens_exactly() {
    // Against the `half` crate's own conversions, all 2 × 65 536 patterns.
    for bits in 0..=u16::MAX {
        let h = f16::from_bits(bits);
        let (ours, theirs) = (h.widen(), h.to_f64());
        assert!(
            ours.to_bits() == theirs.to_bits() || (ours.is_nan() && theirs.is_nan()),
            "f16 {bits:#06x}"
        );
        let b = bf16::from_bits(bits);
        let (ours, theirs) = (b.widen(), b.to_f64());
        assert!(
            ours.to_bits() == theirs.to_bits() || (ours.is_nan() && theirs.is_nan()),
            "bf16 {bits:#06x}"
        );
    }
}

/// `n` half-precision values around `offset` and the same values in `f64`.
fn data(n: usize, offset: f32, seed: u64) -> (Vec<f16>, Vec<bf16>, Vec<f64>, Vec<f64>) {
    let mut rng = SplitMix(seed);
    let raw: Vec<f32> = (0..n).map(|_| offset + rng.unit() as f32).collect();
    let h: Vec<f16> = raw.iter().map(|&x| f16::from_f32(x)).collect();
    let b: Vec<bf16> = raw.iter().map(|&x| bf16::from_f32(x)).collect();
    let hw = h.iter().map(|x| x.to_f64()).collect();
    let bw = b.iter().map(|x| x.to_f64()).collect();
    (h, b, hw, bw)
}

#[test]
fn slices_equal_the_same_values_in_f64_bit_for_bit() {
    for n in [
        0,
        1,
        15,
        16,
        17,
        4 * BLOCK_F64 - 1,
        4 * BLOCK_F64,
        4 * BLOCK_F64 + 1,
        100_003,
    ] {
        let (h, b, hw, bw) = data(n, 100.0, n as u64);
        assert_eq!(
            Variance::<f64>::from_slice(&h).to_parts(),
            Variance::<f64>::from_slice(&hw).to_parts(),
            "f16, n = {n}"
        );
        assert_eq!(
            Variance::<f64>::from_slice(&b).to_parts(),
            Variance::<f64>::from_slice(&bw).to_parts(),
            "bf16, n = {n}"
        );
        assert_eq!(
            Variance::<f64>::par_from_slice(&h).to_parts(),
            Variance::<f64>::from_slice(&hw).to_parts(),
            "par f16, n = {n}"
        );
        assert_eq!(
            Mean::<f32>::from_slice(&h).mean(),
            Mean::<f32>::from_slice(&hw).mean(),
            "mean f16, n = {n}"
        );
    }
}

#[test]
fn half_statistics_are_exact_to_f64_accuracy() {
    // 1 + k/1024 for k < 1024: every value is exact in f16, and the exact
    // mean and M2 follow from integer sums.
    let mut rng = SplitMix(9);
    let ks: Vec<u64> = (0..1_000_000).map(|_| rng.next_u64() >> 54).collect();
    let xs: Vec<f16> = ks
        .iter()
        .map(|&k| f16::from_f64(1.0 + k as f64 / 1024.0))
        .collect();
    let n = ks.len() as f64;
    let (s, s2): (u128, u128) = ks.iter().fold((0, 0), |(a, b), &k| {
        (a + u128::from(k), b + u128::from(k) * u128::from(k))
    });
    let mean = 1.0 + s as f64 / n / 1024.0;
    let m2 = (ks.len() as u128 * s2 - s * s) as f64 / n / (1024.0 * 1024.0);
    let v = Variance::<f64>::from_slice(&xs);
    assert!((v.mean().unwrap() - mean).abs() <= 2.0 * f64::EPSILON * mean);
    assert!((v.sum_squared_deviations().unwrap() - m2).abs() <= 1e-14 * m2);
}

#[test]
fn per_channel_statistics_of_half_tensors() {
    // The NHWC ones span several of the F16C loop's 64-row pieces, with
    // rows whose length is not a multiple of its 8-value conversions.
    for layout in [
        Layout::nchw(2, 3, 8, 8).unwrap(),
        Layout::nhwc(2, 8, 8, 3).unwrap(),
        Layout::nhwc(3, 37, 5, 7).unwrap(),
        Layout::nhwc(1, 300, 1, 65).unwrap(),
    ] {
        let (h, b, hw, bw) = data(layout.len(), 10.0, 4);
        assert_eq!(
            BatchStats::<f32>::compute(&h, layout).unwrap().to_parts(),
            BatchStats::<f32>::compute(&hw, layout).unwrap().to_parts()
        );
        assert_eq!(
            BatchStats::<f32>::compute(&b, layout).unwrap().to_parts(),
            BatchStats::<f32>::compute(&bw, layout).unwrap().to_parts()
        );
        assert_eq!(
            BatchStats::<f32>::par_compute(&h, layout)
                .unwrap()
                .to_parts(),
            BatchStats::<f32>::compute(&hw, layout).unwrap().to_parts()
        );
    }
}

#[test]
fn per_channel_half_statistics_are_the_f32_loops_bit_for_bit() {
    // Values over twenty binades, so that the sums round and any change in
    // the order the rows are added shows in the last bits: the F16C path
    // must group the rows exactly as the loop over the widened tensor.
    let mut rng = SplitMix(11);
    for layout in [
        Layout::nhwc(1, 997, 1, 64).unwrap(),
        Layout::nhwc(3, 37, 5, 7).unwrap(),
        Layout::nhwc(1, 4099, 1, 5).unwrap(),
        Layout::nhwc(2, 3, 1, 512).unwrap(),
    ] {
        let h: Vec<f16> = (0..layout.len())
            .map(|_| {
                let scale = 2f32.powi((rng.next_u64() % 21) as i32 - 10);
                f16::from_f32(scale * (1.0 + rng.unit() as f32) * 1.000_1)
            })
            .collect();
        let wide: Vec<f32> = h.iter().map(|x| x.to_f32()).collect();
        assert_eq!(
            BatchStats::<f64>::compute(&h, layout).unwrap().to_parts(),
            BatchStats::<f64>::compute(&wide, layout)
                .unwrap()
                .to_parts(),
            "{layout:?}"
        );
    }
}

#[test]
fn hostile_half_values() {
    // The largest f16, its negative, infinities, NaN and subnormals.
    let max = f16::MAX;
    let v = Variance::<f64>::from_slice(&[max, -max]);
    assert_eq!(v.mean(), Some(0.0));
    assert_eq!(v.population_variance(), Some(65504.0 * 65504.0));
    let v = Variance::<f64>::from_slice(&[f16::ONE, f16::INFINITY]);
    assert_eq!(v.mean(), Some(f64::INFINITY));
    assert!(
        Variance::<f64>::from_slice(&[f16::ONE, f16::NAN])
            .mean()
            .unwrap()
            .is_nan()
    );
    let tiny = f16::from_bits(1); // 2⁻²⁴
    assert_eq!(
        Mean::<f64>::from_slice(&[tiny, tiny]).mean(),
        Some(2f64.powi(-24))
    );
    // bf16 reaches f32's range.
    let big = bf16::MAX;
    assert_eq!(
        Mean::<f64>::from_slice(&[big, big]).mean(),
        Some(big.to_f64())
    );
}

/// The neighbours of a positive `f64`.
fn up(x: f64) -> f64 {
    f64::from_bits(x.to_bits() + 1)
}

fn down(x: f64) -> f64 {
    f64::from_bits(x.to_bits() - 1)
}

/// Every pair of neighbouring positive finite values `a < b` of a 16-bit
/// format (bits `0..top`, `top` the largest finite one), and the step past
/// the largest to `next` (the power of two where ∞ sits): their midpoint
/// narrows to the even one, a hair above it to `b`, a hair below to `a`,
/// and each value to itself, with either sign.
fn rounds_once<T: Element>(bits: fn(T) -> u16, from: fn(u16) -> T, top: u16, next: f64) {
    let narrow = |x: f64| bits(T::narrow(x));
    for k in 0..=top {
        let a = from(k).widen();
        let b = if k == top { next } else { from(k + 1).widen() };
        let mid = (a + b) / 2.0; // exact in f64
        let even = if k % 2 == 0 { k } else { k + 1 };
        for (sign, flag) in [(1.0, 0), (-1.0, 0x8000)] {
            assert_eq!(narrow(sign * a), k | flag, "{k:#06x}");
            assert_eq!(narrow(sign * mid), even | flag, "midpoint above {k:#06x}");
            assert_eq!(
                narrow(sign * up(mid)),
                (k + 1) | flag,
                "above the midpoint of {k:#06x}"
            );
            if mid > 0.0 {
                assert_eq!(
                    narrow(sign * down(mid)),
                    k | flag,
                    "below the midpoint of {k:#06x}"
                );
            }
        }
    }
    let inf = top + 1;
    assert_eq!(narrow(f64::MAX), inf);
    assert_eq!(narrow(f64::NEG_INFINITY), inf | 0x8000);
    assert_eq!(narrow(-0.0), 0x8000);
    assert_eq!(narrow(1e-300), 0);
    assert!(T::narrow(f64::NAN).widen().is_nan());
}

#[test]
fn narrowing_to_half_precision_rounds_once_to_nearest_even() {
    rounds_once::<f16>(f16::to_bits, f16::from_bits, 0x7bff, 65536.0);
    rounds_once::<bf16>(bf16::to_bits, bf16::from_bits, 0x7f7f, 2f64.powi(128));
    // 1 + 2⁻¹¹ + 2⁻⁴⁰ is above the midpoint of 1 and 1 + 2⁻¹⁰. The half
    // crate's from_f64 makes it the midpoint first (through f32 with
    // F16C, or by dropping the low 32 bits) and then 1, ties to even.
    let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
    assert_eq!(f16::narrow(x).to_bits(), 0x3c01);
    assert_eq!(
        f16::from_f64(x).to_bits(),
        0x3c00,
        "the half crate now rounds once: update the docs"
    );
    let x = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
    assert_eq!(bf16::narrow(x).to_bits(), 0x3f81);
}

/// `|got − exact|` in units in the last place of the exact value in a
/// format with `man` mantissa bits and smallest normal exponent `emin`.
fn half_ulps(got: f64, exact: Dd, man: i32, emin: i32) -> f64 {
    let v = exact.to_f64().abs();
    let e = if v == 0.0 {
        emin
    } else {
        (v.log2().floor() as i32).max(emin)
    };
    exact.distance(got, 2f64.powi(e - man))
}

/// The four layers on `f16` or `bf16` activations, `f32` parameters,
/// `f16`/`bf16` outputs: each output and each `dx` within half a unit in
/// the last place of the exact value (one rounding of an `f64` result).
fn layers_in_half<T: Element + Default>(man: i32, emin: i32) -> Vec<(String, f64)> {
    let (n, c, h, w) = (2, 4, 3, 5);
    let hw = h * w;
    let len = n * c * hw;
    let mut rng = SplitMix(17);
    let x: Vec<T> = (0..len)
        .map(|_| T::narrow(3.0 + 2.0 * rng.unit()))
        .collect();
    let dy: Vec<T> = (0..len).map(|_| T::narrow(rng.signed_unit())).collect();
    let gamma_c: Vec<f32> = (0..c).map(|k| 0.5 + 0.25 * k as f32).collect();
    let beta_c: Vec<f32> = (0..c).map(|k| 0.1 * k as f32 - 0.2).collect();
    let gamma_l: Vec<f32> = (0..c * hw).map(|j| 1.0 + j as f32 / 64.0).collect();
    let beta_l: Vec<f32> = (0..c * hw).map(|j| j as f32 / 128.0).collect();
    let eps = f64::from(1e-5_f32);
    let widen = |v: &[T]| -> Vec<f64> { v.iter().map(|a| a.widen()).collect() };
    let wide32 = |v: &[f32]| -> Vec<f64> { v.iter().map(|&a| f64::from(a)).collect() };
    let mut out = Vec::new();
    for name in ["batch", "group", "instance", "layer"] {
        let mut worst: f64 = 0.0;
        for last in [false, true] {
            // Group and parameter of each value, in NCHW order.
            let (group, param): (Vec<usize>, Vec<usize>) = (0..len)
                .map(|i| {
                    let (s, ch) = (i / (c * hw), (i / hw) % c);
                    match name {
                        "batch" => (ch, ch),
                        "group" => (s * 2 + ch / 2, ch),
                        "instance" => (s * c + ch, ch),
                        _ => (s, i % (c * hw)),
                    }
                })
                .unzip();
            let perm = |v: &[usize]| {
                if last {
                    to_nhwc(v, n, c, hw)
                } else {
                    v.to_vec()
                }
            };
            let layout = if last {
                Layout::nhwc(n, h, w, c).unwrap()
            } else {
                Layout::nchw(n, c, h, w).unwrap()
            };
            // x and dy as generated are the tensor in its memory order.
            let (gamma, beta) = if name == "layer" {
                (&gamma_l, &beta_l)
            } else {
                (&gamma_c, &beta_c)
            };
            let exact = exact_norm(
                &widen(&x),
                &widen(&dy),
                &perm(&group),
                &perm(&param),
                &wide32(gamma),
                &wide32(beta),
                eps,
            );
            let mut y = vec![T::default(); len];
            let mut dx = vec![T::default(); len];
            let g = Some(&gamma[..]);
            let b = Some(&beta[..]);
            let stats = match name {
                "batch" => {
                    let l = BatchNorm::<f32>::new();
                    let s = l.normalize_into(&x, layout, g, b, &mut y).unwrap();
                    l.backward(
                        &Backward::new(&x, &dy, layout, &s).with_gamma(gamma),
                        &mut dx,
                    )
                    .unwrap();
                    s
                }
                "group" => {
                    let l = GroupNorm::<f32>::new(2).unwrap();
                    let s = l.normalize_into(&x, layout, g, b, &mut y).unwrap();
                    l.backward(
                        &Backward::new(&x, &dy, layout, &s).with_gamma(gamma),
                        &mut dx,
                    )
                    .unwrap();
                    s
                }
                "instance" => {
                    let l = InstanceNorm::<f32>::new();
                    let s = l.normalize_into(&x, layout, g, b, &mut y).unwrap();
                    l.backward(
                        &Backward::new(&x, &dy, layout, &s).with_gamma(gamma),
                        &mut dx,
                    )
                    .unwrap();
                    s
                }
                _ => {
                    let l = LayerNorm::<f32>::new(c * hw).unwrap();
                    let s = l.normalize_into(&x, layout, g, b, &mut y).unwrap();
                    l.backward(
                        &Backward::new(&x, &dy, layout, &s).with_gamma(gamma),
                        &mut dx,
                    )
                    .unwrap();
                    s
                }
            };
            assert!(stats.count() > 0);
            for (got, want) in widen(&y)
                .iter()
                .zip(&exact.y)
                .chain(widen(&dx).iter().zip(&exact.dx))
            {
                worst = worst.max(half_ulps(*got, *want, man, emin));
            }
        }
        out.push((name.to_string(), worst));
    }
    // Evaluation: running statistics, f16 in and out.
    let running = RunningStats::with_state(
        &[3.5_f32, 4.0, 3.0, 4.5],
        &[0.25, 0.5, 1.0, 2.0],
        BnConfig::pytorch(),
    )
    .unwrap();
    let layout = Layout::nchw(n, c, h, w).unwrap();
    let mut y = vec![T::default(); len];
    running
        .normalize_into(&x, layout, Some(&gamma_c), Some(&beta_c), &mut y)
        .unwrap();
    let mut worst: f64 = 0.0;
    for (i, (got, xi)) in widen(&y).iter().zip(widen(&x)).enumerate() {
        let ch = (i / hw) % c;
        let (m, v) = (f64::from(running.mean()[ch]), f64::from(running.var()[ch]));
        let want = Dd::new(xi)
            .add(Dd::new(-m))
            .div(Dd::new(v).add(Dd::new(eps)).sqrt())
            .mul(Dd::new(f64::from(gamma_c[ch])))
            .add(Dd::new(f64::from(beta_c[ch])));
        worst = worst.max(half_ulps(*got, want, man, emin));
    }
    out.push(("running".to_string(), worst));
    out
}

#[test]
fn half_activations_in_and_out_are_rounded_once() {
    for (format, errors) in [
        ("f16", layers_in_half::<f16>(10, -14)),
        ("bf16", layers_in_half::<bf16>(7, -126)),
    ] {
        for (name, worst) in errors {
            eprintln!("{format} {name}: outputs and dx within {worst:.4} ulps of exact");
            assert!(worst <= 0.500_001, "{format} {name}: {worst}");
        }
    }
}
