//! Slice paths of `Mean` and `Variance` (the blocked kernels) against exact
//! references, and the rayon paths' independence of the thread count.

use crate::support::{BLOCK_F64, SplitMix, in_pool, rel, two_pass, ulps_from_mean};
use momenta::{Mean, Merge, Variance};

/// `n` values `1e9 + k·2^-20`, `k` uniform in `[0, 2^20)`: `1e9 + U(0, 1)`
/// on a grid fine enough to look continuous and coarse enough that the
/// exact mean and M2 follow from integer sums of `k`:
/// mean = 1e9 + Σk/(n·2^20), M2 = (nΣk² − (Σk)²)/(n·2^40).
struct BigOffset {
    xs: Vec<f64>,
    mean_offset: f64,
    m2: f64,
}

fn big_offset(n: usize, seed: u64) -> BigOffset {
    let mut rng = SplitMix(seed);
    let (mut sum, mut sum_sq) = (0u128, 0u128);
    let xs = (0..n)
        .map(|_| {
            let k = rng.next_u64() >> 44;
            sum += u128::from(k);
            sum_sq += u128::from(k) * u128::from(k);
            1e9 + k as f64 / (1u64 << 20) as f64
        })
        .collect();
    let n = n as u128;
    BigOffset {
        xs,
        mean_offset: sum as f64 / n as f64 / 2f64.powi(20),
        m2: (n * sum_sq - sum * sum) as f64 / n as f64 / 2f64.powi(40),
    }
}

fn check_big_offset(data: &BigOffset, v: &Variance<f64>, m: &Mean<f64>) {
    let n = data.xs.len() as f64;
    let var = v.population_variance().unwrap();
    let err = rel(var, data.m2 / n);
    assert!(err <= 1e-14, "variance relative error {err:e}");
    // The mean itself is rounded to f64 near 1e9 (ulp 1.2e-7).
    let ulp = 1.2e-7;
    assert!((v.mean().unwrap() - 1e9 - data.mean_offset).abs() <= 2.0 * ulp);
    assert!((m.mean().unwrap() - 1e9 - data.mean_offset).abs() <= 2.0 * ulp);
}

/// 2^25 values (256 MiB) with `MOMENTA_LONG_TESTS` (CI), 2^21 (32 of the
/// kernels' blocks) by default, sequential and on 1, 2 and 16 threads.
#[test]
fn big_offset_variance_is_exact_to_1e_14_on_2_pow_25_values() {
    let data = big_offset(crate::support::long::size(1 << 25, 1 << 21), 2);
    for threads in [1, 2, 16] {
        let (v, m) = in_pool(threads, || {
            (
                Variance::par_from_slice(&data.xs),
                Mean::par_from_slice(&data.xs),
            )
        });
        check_big_offset(&data, &v, &m);
        assert_eq!(v, Variance::from_slice(&data.xs));
    }
    check_big_offset(
        &data,
        &Variance::from_slice(&data.xs),
        &Mean::from_slice(&data.xs),
    );
}

#[test]
fn parallel_slices_are_bit_identical_on_1_2_and_16_threads() {
    let mut rng = SplitMix(3);
    // 3 000 017 values with `MOMENTA_LONG_TESTS`, 700 001 (ten blocks and a
    // part) by default.
    let n = crate::support::long::size(3_000_017, 700_001);
    let xs: Vec<f64> = (0..n).map(|_| 1e6 + rng.unit()).collect();
    let xs32: Vec<f32> = xs.iter().map(|&x| (x - 1e6) as f32).collect();
    let seq = (
        Variance::<f64>::from_slice(&xs),
        Mean::<f64>::from_slice(&xs),
        Variance::<f64>::from_slice(&xs32),
        Mean::<f32>::from_slice(&xs32),
    );
    let bits = |v: &Variance<f64>| {
        (
            v.count(),
            v.mean().unwrap().to_bits(),
            v.sum_squared_deviations().unwrap().to_bits(),
        )
    };
    for threads in [1, 2, 16] {
        let par = in_pool(threads, || {
            (
                Variance::<f64>::par_from_slice(&xs),
                Mean::<f64>::par_from_slice(&xs),
                Variance::<f64>::par_from_slice(&xs32),
                Mean::<f32>::par_from_slice(&xs32),
            )
        });
        assert_eq!(bits(&par.0), bits(&seq.0), "{threads} threads");
        assert_eq!(
            par.1.mean().unwrap().to_bits(),
            seq.1.mean().unwrap().to_bits()
        );
        assert_eq!(bits(&par.2), bits(&seq.2), "{threads} threads");
        assert_eq!(par.3, seq.3);
    }
}

/// The naive two-pass mean and population variance.
fn mean_var(xs: &[f64]) -> (f64, f64) {
    let (mean, m2) = two_pass(xs);
    (mean, m2 / xs.len() as f64)
}

#[test]
fn small_and_awkward_lengths_match_the_two_pass_formula() {
    let mut rng = SplitMix(4);
    for n in [
        1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 1000, 2047, 2048, 2049, 4095, 4097, 9999,
    ] {
        let xs: Vec<f64> = (0..n).map(|_| 10.0 + rng.unit()).collect();
        let xs32: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
        let wide: Vec<f64> = xs32.iter().map(|&x| f64::from(x)).collect();
        for (name, v, m, want) in [
            (
                "f64",
                Variance::<f64>::from_slice(&xs),
                Mean::<f64>::from_slice(&xs),
                mean_var(&xs),
            ),
            (
                "f32",
                Variance::<f64>::from_slice(&xs32),
                Mean::<f64>::from_slice(&xs32),
                mean_var(&wide),
            ),
            (
                "par f64",
                Variance::<f64>::par_from_slice(&xs),
                Mean::<f64>::par_from_slice(&xs),
                mean_var(&xs),
            ),
        ] {
            assert_eq!(v.count(), n as u64, "{name} n = {n}");
            assert_eq!(m.count(), n as u64, "{name} n = {n}");
            assert!(rel(v.mean().unwrap(), want.0) < 1e-14, "{name} n = {n}");
            assert!(rel(m.mean().unwrap(), want.0) < 1e-14, "{name} n = {n}");
            let var = v.population_variance().unwrap();
            if n == 1 {
                assert_eq!(var, 0.0);
            } else {
                assert!(
                    rel(var, want.1) < 1e-12,
                    "{name} n = {n}: {var} vs {}",
                    want.1
                );
            }
        }
    }
}

#[test]
fn empty_slices_give_empty_statistics() {
    assert_eq!(Variance::<f64>::from_slice::<f64>(&[]), Variance::new());
    assert_eq!(Variance::<f32>::par_from_slice::<f32>(&[]), Variance::new());
    assert_eq!(Mean::<f64>::from_slice::<f32>(&[]).mean(), None);
    assert_eq!(Mean::<f64>::par_from_slice::<f64>(&[]).mean(), None);
    let mut v = Variance::<f64>::from_slice(&[1.0, 3.0]);
    v.extend_from_slice::<f64>(&[]);
    assert_eq!(v.population_variance(), Some(1.0));
}

#[test]
fn slices_extend_and_merge_like_one_slice() {
    let mut rng = SplitMix(5);
    let xs: Vec<f64> = (0..10_000).map(|_| rng.unit() * 4.0 - 2.0).collect();
    let (a, b) = xs.split_at(3_333);
    let mut v = Variance::<f64>::from_slice(a);
    v.extend_from_slice(b);
    let mut w = Variance::<f64>::from_slice(a);
    w.merge(&Variance::from_slice(b));
    let want = mean_var(&xs);
    for v in [v, w] {
        assert!(rel(v.population_variance().unwrap(), want.1) < 1e-13);
        assert!((v.mean().unwrap() - want.0).abs() < 1e-15);
    }
    let mut m = Mean::<f64>::from_slice(a);
    m.extend_from_slice(b);
    assert!((m.mean().unwrap() - want.0).abs() < 1e-15);
}

#[test]
fn f32_accumulators_of_f64_data_keep_the_mean_of_large_offsets() {
    let data = big_offset(10_000, 6);
    let v = Variance::<f32>::from_slice(&data.xs);
    let n = data.xs.len() as f64;
    assert!(rel(f64::from(v.population_variance().unwrap()), data.m2 / n) < 1e-6);
}

#[test]
fn parallel_iterators_collect_and_extend_both_accumulators() {
    use rayon::prelude::*;
    let data = big_offset(200_000, 7);
    let n = data.xs.len() as f64;
    for threads in [1, 2, 16] {
        let (v, m): (Variance<f64>, Mean<f64>) = in_pool(threads, || {
            (
                data.xs.par_iter().collect(),
                data.xs.par_iter().copied().collect(),
            )
        });
        // Rayon's split points vary; the result is equal up to rounding.
        assert!(rel(v.population_variance().unwrap(), data.m2 / n) < 1e-12);
        assert!((m.mean().unwrap() - 1e9 - data.mean_offset).abs() < 1e-6);
        let mut w = Variance::<f64>::new();
        w.par_extend(data.xs.par_iter());
        assert_eq!(w.count(), v.count());
        let mut mm = Mean::<f64>::from_slice(&[1e9]);
        mm.par_extend(data.xs.par_iter().copied());
        assert_eq!(mm.count(), v.count() + 1);
    }
}

#[test]
fn nan_propagates_through_every_slice_path() {
    let mut xs = vec![1.0_f64; 10_000];
    xs[7_777] = f64::NAN;
    assert!(
        Variance::<f64>::from_slice(&xs)
            .population_variance()
            .unwrap()
            .is_nan()
    );
    assert!(
        Variance::<f64>::par_from_slice(&xs)
            .mean()
            .unwrap()
            .is_nan()
    );
    assert!(Mean::<f64>::from_slice(&xs).mean().unwrap().is_nan());
    assert!(Mean::<f64>::par_from_slice(&xs).mean().unwrap().is_nan());
}

/// Data on a grid of `2⁻²⁴`, so that `f32` holds every value and an
/// integer sum gives the exact mean: a bulk of `base + U(0, 1)` (on a
/// grid of `2^-grid`) and `outlier` wherever `at(i)`.
struct Hostile {
    xs: Vec<f64>,
    /// Σx · 2²⁴, exactly.
    sum: i128,
}

const GRID: i32 = 24;

fn hostile(n: usize, base: f64, grid: u32, outlier: f64, at: impl Fn(usize) -> bool) -> Hostile {
    let mut rng = SplitMix(n as u64 ^ outlier.to_bits());
    let scale = 2f64.powi(GRID);
    let xs: Vec<f64> = (0..n)
        .map(|i| {
            if at(i) {
                outlier
            } else {
                base + (rng.next_u64() >> (64 - grid)) as f64 / 2f64.powi(grid as i32)
            }
        })
        .collect();
    let sum = xs
        .iter()
        .map(|&x| {
            let k = x * scale;
            assert!(
                k == k.trunc() && f64::from(x as f32) == x,
                "{x} is on the grid"
            );
            k as i128
        })
        .sum();
    Hostile { xs, sum }
}

/// The layouts of issue 24 (an outlier at the head of every 4096 values,
/// of every block of 65536, at the end; negative outliers; data far from
/// zero) with their names.
fn hostile_layouts() -> Vec<(&'static str, Hostile)> {
    let block = BLOCK_F64;
    vec![
        (
            "1e6 heading every 4096 of 16384 U(0, 1)",
            hostile(16384, 0.0, 24, 1e6, |i| i % 4096 == 0),
        ),
        (
            "1e6 heading every 4096, over blocks",
            hostile(3 * block + 4000, 0.0, 24, 1e6, |i| i % 4096 == 0),
        ),
        (
            "-1e6 heading every 4096",
            hostile(2 * block, 0.0, 24, -1e6, |i| i % 4096 == 0),
        ),
        (
            "1e6 heading every block",
            hostile(4 * block, 0.0, 24, 1e6, |i| i % block == 0),
        ),
        (
            "1e6 at the end",
            hostile(block + 5000, 0.0, 24, 1e6, |i| i == block + 4999),
        ),
        (
            "1e9 heading every 4096 of 1000 + U(0, 1)",
            hostile(2 * block, 1000.0, 14, 1e9, |i| i % 4096 == 0),
        ),
        (
            "-1e9 heading every 4096 of -1001 + U(0, 1)",
            hostile(2 * block, -1001.0, 14, -1e9, |i| i % 4096 == 0),
        ),
        (
            "1e9 heading every 1024 of -1001 + U(0, 1)",
            hostile(block + 3000, -1001.0, 14, 1e9, |i| i % 1024 == 0),
        ),
    ]
}

/// Issue 24: with an outlier at the head of every 4096 values, the slice
/// kernels' mean was far from the exact mean (measured before the fix:
/// `Mean` and `Variance` 126 ulps on the layout, `Skewness` and
/// `Kurtosis` 254, `Covariance` and `WeightedMean` 128, `BatchStats`'
/// lanes loop 103): every block summed again around its mean carried the
/// mean's low bits in every deviation, and the lanes rounded them off the
/// same way at every addition. Every slice path now stays within a few
/// ulps, `f64` and `f32` input alike.
#[test]
fn slice_means_stay_within_a_few_ulps_of_the_exact_mean_on_hostile_layouts() {
    use momenta::batchnorm::{BatchStats, Layout};
    use momenta::{Covariance, Kurtosis, Skewness, WeightedMean};
    const ULPS: f64 = 4.0;
    let mut off = Vec::new();
    for (name, data) in hostile_layouts() {
        let xs32: Vec<f32> = data.xs.iter().map(|&x| x as f32).collect();
        let n = data.xs.len();
        let ones = vec![1.0_f64; n];
        let ones32 = vec![1.0_f32; n];
        let mut means: Vec<(&str, f64)> = Vec::new();
        macro_rules! each_input {
            ($label:literal, $xs:expr, $ones:expr) => {
                let xs = $xs;
                means.extend(
                    [
                        (concat!("Mean ", $label), Mean::<f64>::from_slice(xs).mean()),
                        (
                            concat!("Variance ", $label),
                            Variance::<f64>::from_slice(xs).mean(),
                        ),
                        (
                            concat!("Skewness ", $label),
                            Skewness::<f64>::from_slice(xs).mean(),
                        ),
                        (
                            concat!("Kurtosis ", $label),
                            Kurtosis::<f64>::from_slice(xs).mean(),
                        ),
                        (
                            concat!("Covariance ", $label),
                            Covariance::<f64>::from_slices(xs, xs).unwrap().mean_x(),
                        ),
                        (
                            concat!("WeightedMean ", $label),
                            WeightedMean::<f64>::from_slices(xs, $ones).unwrap().mean(),
                        ),
                        (
                            concat!("BatchStats one run ", $label),
                            Some(
                                BatchStats::<f64>::compute(xs, Layout::ncl(1, 1, n).unwrap())
                                    .unwrap()
                                    .mean()[0],
                            ),
                        ),
                        (
                            concat!("BatchStats lanes ", $label),
                            Some(
                                BatchStats::<f64>::compute(xs, Layout::nc(n, 1).unwrap())
                                    .unwrap()
                                    .mean()[0],
                            ),
                        ),
                    ]
                    .map(|(path, mean)| (path, mean.unwrap())),
                );
            };
        }
        each_input!("f64", &data.xs[..], &ones[..]);
        each_input!("f32", &xs32[..], &ones32[..]);
        for (path, mean) in means {
            let ulps = ulps_from_mean(mean, data.sum, n as u64, GRID);
            if ulps.abs() > ULPS {
                off.push(format!("{name}, {path}: {ulps:.1} ulps"));
            }
        }
    }
    assert!(off.is_empty(), "{}", off.join("\n"));
}

/// Issue 24: a tuple walked a slice in chunks of 2048 values and merged
/// them one after another into each member, so that
/// `(Kurtosis<f64>, MinMax<f64>)` over 2²² `f32` values had a variance
/// 3.0e-15 off (measured before the fix), where `Kurtosis` alone gets the
/// exact value's nearest `f64`. Each member now gets its own bits.
#[test]
fn a_tuple_keeps_its_members_accuracy() {
    use crate::support::Exact;
    use momenta::{Accumulator, FromSlice, Kurtosis, MinMax};
    let n = 1 << 22;
    // 1000 + k·2⁻¹⁴, k < 2¹⁴: exact in f32, and the exact M2 follows
    // from integer sums of k.
    let mut rng = SplitMix(9);
    let mut exact = Exact::default();
    let xs: Vec<f32> = (0..n)
        .map(|_| {
            let k = rng.next_u64() >> 50;
            exact.add(k);
            (1000.0 + k as f64 / 16384.0) as f32
        })
        .collect();
    let want = exact.m2(14) / n as f64;
    let alone = Kurtosis::<f64>::from_slice(&xs);
    let mut bundle = (Kurtosis::<f64>::new(), MinMax::<f64>::new());
    bundle.extend_from_slice(&xs);
    let built = <(Kurtosis<f64>, MinMax<f64>)>::from_slice(&xs);
    for (name, k) in [
        ("alone", &alone),
        ("extended", &bundle.0),
        ("built", &built.0),
    ] {
        let err = rel(k.population_variance().unwrap(), want);
        assert!(err <= 5e-16, "{name}: variance {err:e} off");
    }
    assert_eq!(bundle.0, alone);
    assert_eq!(built.0, alone);
    assert_eq!(
        (bundle.1.min(), bundle.1.max()),
        (Some(1000.0), Some(1000.0 + 16383.0 / 16384.0))
    );
}
