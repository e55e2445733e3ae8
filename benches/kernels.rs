//! Slice kernels against the memory roofline (a plain vectorised sum of the
//! same data, measured in the same run) and against a per-value Welford
//! loop, on data far larger than the last-level cache and on data in L1/L2.
//!
//! `cargo bench --bench kernels`; `MOMENTA_BENCH_LOG2=25` for 256 MiB of
//! `f64` instead of 1 GiB.

extern crate alloc;

mod common;

use common::{config, data, data_f32, large_log2, par_sum8, sum8, welford};
use criterion::{
    BenchmarkGroup, Criterion, SamplingMode, Throughput, black_box, measurement::WallTime,
};
use momenta::{
    Covariance, FromSlice, Kurtosis, Mean, MinMax, Skewness, Variance, WeightedVariance,
};

fn slice_benches<T>(group: &mut BenchmarkGroup<'_, WallTime>, xs: &[T], parallel: bool)
where
    T: momenta::Float + Default + Into<f64>,
{
    group.throughput(Throughput::Bytes(core::mem::size_of_val(xs) as u64));
    group.bench_function("sum", |b| b.iter(|| sum8(black_box(xs))));
    group.bench_function("welford", |b| b.iter(|| welford(black_box(xs))));
    group.bench_function("variance", |b| {
        b.iter(|| Variance::<f64>::from_slice(black_box(xs)))
    });
    group.bench_function("mean", |b| {
        b.iter(|| Mean::<f64>::from_slice(black_box(xs)))
    });
    // Pairs: the two halves of `xs` as x and y (and as values and weights).
    let (x, y) = xs.split_at(xs.len() / 2);
    group.bench_function("covariance (halves)", |b| {
        b.iter(|| Covariance::<f64>::from_slices(black_box(x), black_box(y)))
    });
    let w: Vec<T> = y.iter().map(|&v| v - v.floor()).collect();
    group.bench_function("weighted_variance (halves)", |b| {
        b.iter(|| WeightedVariance::<f64>::from_slices(black_box(x), black_box(&w)))
    });
    group.bench_function("skewness", |b| {
        b.iter(|| Skewness::<f64>::from_slice(black_box(xs)))
    });
    group.bench_function("kurtosis", |b| {
        b.iter(|| Kurtosis::<f64>::from_slice(black_box(xs)))
    });
    group.bench_function("min_max", |b| {
        b.iter(|| MinMax::<T>::from_slice(black_box(xs)))
    });
    // A tuple goes through the slice once for both members.
    group.bench_function("(kurtosis, min_max)", |b| {
        b.iter(|| <(Kurtosis<f64>, MinMax<T>)>::from_slice(black_box(xs)))
    });
    if parallel {
        group.bench_function("par_covariance (halves)", |b| {
            b.iter(|| Covariance::<f64>::par_from_slices(black_box(x), black_box(y)))
        });
        group.bench_function("par_sum", |b| b.iter(|| par_sum8(black_box(xs))));
        group.bench_function("par_variance", |b| {
            b.iter(|| Variance::<f64>::par_from_slice(black_box(xs)))
        });
        group.bench_function("par_mean", |b| {
            b.iter(|| Mean::<f64>::par_from_slice(black_box(xs)))
        });
        group.bench_function("par_kurtosis", |b| {
            b.iter(|| Kurtosis::<f64>::par_from_slice(black_box(xs)))
        });
        group.bench_function("par_min_max", |b| {
            b.iter(|| MinMax::<T>::par_from_slice(black_box(xs)))
        });
        group.bench_function("par (kurtosis, min_max)", |b| {
            b.iter(|| <(Kurtosis<f64>, MinMax<T>)>::par_from_slice(black_box(xs)))
        });
    }
}

fn large(c: &mut Criterion) {
    let n = 1usize << large_log2();
    let xs = data(n, 1e9, 1);
    let mut group = c.benchmark_group("f64_large");
    group.sampling_mode(SamplingMode::Flat);
    slice_benches(&mut group, &xs, true);
    group.finish();
    drop(xs);

    let xs = data_f32(2 * n, 1e3, 2);
    let mut group = c.benchmark_group("f32_large");
    group.sampling_mode(SamplingMode::Flat);
    slice_benches(&mut group, &xs, true);
    group.finish();
}

fn cached(c: &mut Criterion) {
    let xs = data(1 << 14, 1e9, 3);
    let mut group = c.benchmark_group("f64_cached");
    slice_benches(&mut group, &xs, false);
    group.finish();

    let xs: Vec<f32> = data(1 << 14, 1e3, 4)
        .into_iter()
        .map(|x| x as f32)
        .collect();
    let mut group = c.benchmark_group("f32_cached");
    slice_benches(&mut group, &xs, false);
    group.finish();
}

criterion::criterion_group! {
    name = benches;
    config = config();
    targets = large, cached
}
criterion::criterion_main!(benches);
