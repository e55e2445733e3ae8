//! BatchNorm throughput on a 64×64×64×64 f32 tensor (64 MiB), against
//! memory-bound baselines measured in the same run:
//!
//! - per-channel statistics (`BatchStats::compute`) in NCHW and NHWC vs a
//!   plain multi-lane `sum` of the same data (target ≥ 0.80 of it);
//! - `Normalizer::apply` in NCHW and NHWC vs `copy_from_slice` (target
//!   ≥ 0.5 of it).
//!
//! Run with `cargo bench --bench batchnorm`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use momenta::batchnorm::{BatchStats, Layout};

const D: usize = 64;

fn data() -> Vec<f32> {
    let mut state = 1_u64;
    (0..D * D * D * D)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 40) as f32 / (1u32 << 24) as f32) * 4.0 - 1.0
        })
        .collect()
}

/// A vectorizable sum: eight independent lanes.
fn plain_sum(xs: &[f32]) -> f32 {
    let mut lanes = [0.0_f32; 8];
    let chunks = xs.chunks_exact(8);
    let tail: f32 = chunks.remainder().iter().sum();
    for c in chunks {
        for (l, x) in lanes.iter_mut().zip(c) {
            *l += x;
        }
    }
    lanes.iter().sum::<f32>() + tail
}

fn bench(c: &mut Criterion) {
    let xs = data();
    let nchw = Layout::nchw(D, D, D, D).unwrap();
    let nhwc = Layout::nhwc(D, D, D, D).unwrap();
    let bytes = (xs.len() * 4) as u64;

    let mut g = c.benchmark_group("channel_stats_64x64x64x64_f32");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Bytes(bytes));
    g.bench_function("plain_sum", |b| b.iter(|| plain_sum(black_box(&xs))));
    g.bench_function("batch_stats_nchw", |b| {
        b.iter(|| BatchStats::<f32>::compute(black_box(&xs), nchw).unwrap())
    });
    g.bench_function("batch_stats_nhwc", |b| {
        b.iter(|| BatchStats::<f32>::compute(black_box(&xs), nhwc).unwrap())
    });
    #[cfg(feature = "rayon")]
    g.bench_function("par_batch_stats_nchw", |b| {
        b.iter(|| BatchStats::<f32>::par_compute(black_box(&xs), nchw).unwrap())
    });
    #[cfg(feature = "rayon")]
    g.bench_function("par_batch_stats_nhwc", |b| {
        b.iter(|| BatchStats::<f32>::par_compute(black_box(&xs), nhwc).unwrap())
    });
    g.finish();

    let stats =
        BatchStats::<f32>::compute(&xs[..D * D * D], Layout::nchw(1, D, D, D).unwrap()).unwrap();
    let gamma = vec![1.5_f32; D];
    let beta = vec![0.25_f32; D];
    let norm = stats.normalizer(1e-5, Some(&gamma), Some(&beta)).unwrap();
    let mut out = vec![0.0_f32; xs.len()];

    let mut g = c.benchmark_group("normalize_64x64x64x64_f32");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Bytes(bytes));
    g.bench_function("copy", |b| b.iter(|| out.copy_from_slice(black_box(&xs))));
    g.bench_function("normalize_nchw", |b| {
        b.iter(|| norm.apply(black_box(&xs), nchw, &mut out).unwrap())
    });
    g.bench_function("normalize_nhwc", |b| {
        b.iter(|| norm.apply(black_box(&xs), nhwc, &mut out).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
