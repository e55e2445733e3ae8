//! Per-channel statistics of a 64×64×64×64 `f32` tensor, NCHW and NHWC,
//! against a plain sum of the same data, sequential and on every thread.
//!
//! `cargo bench --features bench-internals --bench channels`

mod common;

use common::{config, data_f32, par_sum8, sum8};
use criterion::{Criterion, Throughput, black_box};
use momenta::__bench::{channel_stats, par_channel_stats};

fn channels(c: &mut Criterion) {
    let (n, ch, hw) = (64, 64, 64 * 64);
    let xs = data_f32(n * ch * hw, 0.0, 5);
    let mut group = c.benchmark_group("channels_f32_64x64x64x64");
    group.throughput(Throughput::Bytes(core::mem::size_of_val(&xs[..]) as u64));
    group.bench_function("sum", |b| b.iter(|| sum8(black_box(&xs[..]))));
    group.bench_function("nchw", |b| {
        b.iter(|| channel_stats(black_box(&xs[..]), n, ch, hw))
    });
    group.bench_function("nhwc", |b| {
        b.iter(|| channel_stats(black_box(&xs[..]), n * hw, ch, 1))
    });
    group.bench_function("par_sum", |b| b.iter(|| par_sum8(black_box(&xs[..]))));
    group.bench_function("par_nchw", |b| {
        b.iter(|| par_channel_stats(black_box(&xs[..]), n, ch, hw))
    });
    group.bench_function("par_nhwc", |b| {
        b.iter(|| par_channel_stats(black_box(&xs[..]), n * hw, ch, 1))
    });
    group.finish();
}

criterion::criterion_group! {
    name = benches;
    config = config();
    targets = channels
}
criterion::criterion_main!(benches);
