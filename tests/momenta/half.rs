//! Half-precision tensors (feature `half`): `f16` and `bf16` slices go
//! through the same kernels as `f32`, widened exactly, so their statistics
//! are bit-for-bit those of the same values given as `f64`.

#![cfg(feature = "half")]

use crate::support::{BLOCK_F64, SplitMix};
use half::{bf16, f16};
use momenta::batchnorm::{BatchStats, Layout};
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
