//! BatchNorm on a 64×64×64×64 `f32` tensor (64 MiB): per-channel statistics,
//! NCHW and NHWC, against a plain sum of the same data, sequential and on
//! every thread; the same from memory (1 GiB) and for NHWC with 3, 64 and
//! 512 channels; and normalization against a plain copy.
//!
//! `cargo bench --bench batchnorm`

extern crate alloc;

mod common;

use std::hint::black_box;

use common::{config, data_f32, par_sum8, sum8};
use criterion::{Criterion, Throughput};
use momenta::batchnorm::{BatchStats, Layout};

const D: usize = 64;

/// Per-channel statistics of `xs` in both layouts, sequential and parallel,
/// against a plain sum of the same data, in one group.
fn compare_layouts(c: &mut Criterion, name: &str, xs: &[f32], nchw: Layout, nhwc: Layout) {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Bytes(size_of_val(xs) as u64));
    g.bench_function("sum", |b| b.iter(|| sum8(black_box(xs))));
    g.bench_function("nchw", |b| {
        b.iter(|| BatchStats::<f32>::compute(black_box(xs), nchw))
    });
    g.bench_function("nhwc", |b| {
        b.iter(|| BatchStats::<f32>::compute(black_box(xs), nhwc))
    });
    g.bench_function("par_sum", |b| b.iter(|| par_sum8(black_box(xs))));
    g.bench_function("par_nchw", |b| {
        b.iter(|| BatchStats::<f32>::par_compute(black_box(xs), nchw))
    });
    g.bench_function("par_nhwc", |b| {
        b.iter(|| BatchStats::<f32>::par_compute(black_box(xs), nhwc))
    });
    g.finish();
}

fn statistics(c: &mut Criterion) {
    let xs = data_f32(D * D * D * D, 0.0, 5);
    let nchw = Layout::nchw(D, D, D, D).expect("64⁴ fits in usize");
    let nhwc = Layout::nhwc(D, D, D, D).expect("64⁴ fits in usize");
    compare_layouts(c, "channel_stats_64x64x64x64_f32", &xs, nchw, nhwc);
}

/// The same comparison on a tensor larger than any cache (1 GiB, shape
/// 64×64×256×256), where both the sum and the statistics run from memory.
fn statistics_from_memory(c: &mut Criterion) {
    let (n, ch, h, w) = (64, 64, 256, 256);
    let xs = data_f32(n * ch * h * w, 0.0, 7);
    let nchw = Layout::nchw(n, ch, h, w).expect("fits in usize");
    let nhwc = Layout::nhwc(n, h, w, ch).expect("fits in usize");
    compare_layouts(c, "channel_stats_1GiB_f32", &xs, nchw, nhwc);
}

/// NHWC from memory with few and many channels (256 MiB each, same run as
/// their sum): 3 (an image batch), 64 and 512 channels.
fn nhwc_channel_counts(c: &mut Criterion) {
    let len = 1 << 26;
    let xs = data_f32(len, 0.0, 8);
    let mut g = c.benchmark_group("nhwc_channels_256MiB_f32");
    g.throughput(Throughput::Bytes(size_of_val(&xs[..]) as u64));
    g.bench_function("sum", |b| b.iter(|| sum8(black_box(&xs[..]))));
    for channels in [3, 64, 512] {
        let rows = len / channels;
        let layout = Layout::nhwc(rows, 1, 1, channels).expect("fits in usize");
        let xs = &xs[..rows * channels];
        g.bench_function(format!("c{channels}"), |b| {
            b.iter(|| BatchStats::<f32>::compute(black_box(xs), layout))
        });
    }
    g.finish();
}

fn normalize(c: &mut Criterion) {
    let xs = data_f32(D * D * D * D, 0.0, 6);
    let nchw = Layout::nchw(D, D, D, D).expect("64⁴ fits in usize");
    let nhwc = Layout::nhwc(D, D, D, D).expect("64⁴ fits in usize");
    let stats = BatchStats::<f32>::compute(&xs, nchw).expect("the layout matches");
    let (gamma, beta) = (vec![1.5_f32; D], vec![0.25_f32; D]);
    let norm = stats
        .normalizer(1e-5, Some(&gamma), Some(&beta))
        .expect("γ, β have C values");
    let mut out = vec![0.0_f32; xs.len()];

    let mut g = c.benchmark_group("normalize_64x64x64x64_f32");
    g.throughput(Throughput::Bytes(size_of_val(&xs[..]) as u64));
    g.bench_function("copy", |b| b.iter(|| out.copy_from_slice(black_box(&xs))));
    g.bench_function("nchw", |b| {
        b.iter(|| norm.apply(black_box(&xs), nchw, &mut out))
    });
    g.bench_function("nhwc", |b| {
        b.iter(|| norm.apply(black_box(&xs), nhwc, &mut out))
    });
    g.finish();
}

criterion::criterion_group! {
    name = benches;
    config = config();
    targets = statistics, statistics_from_memory, nhwc_channel_counts, normalize
}
criterion::criterion_main!(benches);
