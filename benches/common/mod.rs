//! What the benchmarks compare against, and their data.

#![allow(dead_code)]

#[path = "../../tests/support/mod.rs"]
mod support;

use core::ops::Add;
use criterion::Criterion;
use std::time::Duration;

/// Modest settings, so a full run takes a few minutes.
pub fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args()
}

/// The memory roofline: a plain sum in eight independent accumulators of
/// the data's own type, which the compiler vectorises.
#[inline(never)]
pub fn sum8<T: Copy + Default + Add<Output = T>>(xs: &[T]) -> T {
    let mut acc = [T::default(); 8];
    let chunks = xs.chunks_exact(8);
    let tail = chunks.remainder();
    for chunk in chunks {
        for (a, &x) in acc.iter_mut().zip(chunk) {
            *a = *a + x;
        }
    }
    let mut rest = T::default();
    for &x in tail {
        rest = rest + x;
    }
    // Folded in lane order: a pairwise fold here makes LLVM pair lanes with
    // shuffles inside the loop for `f32`, which slows the loop from memory.
    acc.iter().fold(rest, |s, &a| s + a)
}

/// [`sum8`] over chunks on every rayon thread.
pub fn par_sum8<T: Copy + Default + Add<Output = T> + Send + Sync>(xs: &[T]) -> T {
    use rayon::prelude::*;
    xs.par_chunks(1 << 16)
        .map(sum8)
        .reduce(T::default, |a, b| a + b)
}

/// The textbook per-value Welford update, in `f64`: one division per value.
#[inline(never)]
pub fn welford<T: Copy + Into<f64>>(xs: &[T]) -> (f64, f64) {
    let (mut n, mut mean, mut m2) = (0.0_f64, 0.0_f64, 0.0_f64);
    for &x in xs {
        let x: f64 = x.into();
        n += 1.0;
        let d = x - mean;
        mean += d / n;
        m2 += d * (x - mean);
    }
    (mean, m2 / n)
}

/// `n` values `offset + U(0, 1)` from a seeded splitmix64.
pub fn data(n: usize, offset: f64, seed: u64) -> Vec<f64> {
    data_as(n, offset, seed, |x| x)
}

/// [`data`] rounded to `f32`.
pub fn data_f32(n: usize, offset: f64, seed: u64) -> Vec<f32> {
    data_as(n, offset, seed, |x| x as f32)
}

fn data_as<T>(n: usize, offset: f64, seed: u64, cast: impl Fn(f64) -> T) -> Vec<T> {
    let mut rng = support::SplitMix(seed);
    (0..n).map(|_| cast(offset + rng.unit())).collect()
}

/// log2 of the number of values in the large benchmarks, from
/// `MOMENTA_BENCH_LOG2`; default 27: 1 GiB of `f64`, well above the
/// last-level cache of current server parts (the `f32` data has twice as
/// many values, the same bytes).
pub fn large_log2() -> u32 {
    std::env::var("MOMENTA_BENCH_LOG2")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(27)
}
