//! The push path: one value at a time through every accumulator, as a
//! sensor loop or a real-time filter calls it, against the textbook Welford
//! loop over the same values in the same run.
//!
//! Throughput is in values (elements) per second. The data are
//! `1e6 + U(0, 1)`, 64 Ki values, which stay in L2 cache: the figure is
//! the cost of the update itself, not of memory.
//!
//! `cargo bench --bench streaming`

extern crate alloc;

mod common;

use common::{config, data, welford};
use criterion::{Criterion, Throughput, black_box};
use momenta::{
    Accumulator, Ema, EwVariance, Kurtosis, Mean, MinMax, Momentum, MovingAverage, MovingMinMax,
    MovingQuantile, MovingVariance, Skewness, TimeWindow, Variance,
};

/// Pushes every value of `xs` into `acc`, one call per value.
#[inline(never)]
fn push_all<A: Accumulator<f64>>(mut acc: A, xs: &[f64]) -> A {
    for &x in xs {
        acc.push(black_box(x));
    }
    acc
}

fn streaming(c: &mut Criterion) {
    let xs = data(1 << 16, 1e6, 11);
    let momentum = Momentum::Factor(0.1);
    let mut group = c.benchmark_group("push");
    group.throughput(Throughput::Elements(xs.len() as u64));
    group.bench_function("naive welford", |b| b.iter(|| welford(black_box(&xs))));
    group.bench_function("Mean", |b| b.iter(|| push_all(Mean::new(), &xs)));
    group.bench_function("Variance", |b| b.iter(|| push_all(Variance::new(), &xs)));
    group.bench_function("Covariance (x, x/2)", |b| {
        b.iter(|| {
            let mut c = momenta::Covariance::new();
            for &x in &xs {
                c.push(black_box(x), black_box(0.5 * x));
            }
            c
        })
    });
    group.bench_function("WeightedVariance (x, 1)", |b| {
        b.iter(|| {
            let mut v = momenta::WeightedVariance::new();
            for &x in &xs {
                let _ = v.push(black_box(x), black_box(1.0));
            }
            v
        })
    });
    group.bench_function("Skewness", |b| b.iter(|| push_all(Skewness::new(), &xs)));
    group.bench_function("Kurtosis", |b| b.iter(|| push_all(Kurtosis::new(), &xs)));
    group.bench_function("MinMax", |b| b.iter(|| push_all(MinMax::new(), &xs)));
    group.bench_function("Ema", |b| {
        b.iter(|| push_all(Ema::new(momentum).unwrap(), &xs))
    });
    group.bench_function("EwVariance", |b| {
        b.iter(|| push_all(EwVariance::new(momentum).unwrap(), &xs))
    });
    for window in [20, 1000] {
        group.bench_function(format!("MovingAverage({window})"), |b| {
            b.iter(|| push_all(MovingAverage::new(window).unwrap(), &xs))
        });
        group.bench_function(format!("MovingVariance({window})"), |b| {
            b.iter(|| push_all(MovingVariance::new(window).unwrap(), &xs))
        });
        group.bench_function(format!("MovingMinMax({window})"), |b| {
            b.iter(|| push_all(MovingMinMax::new(window).unwrap(), &xs))
        });
        group.bench_function(format!("MovingQuantile::median({window})"), |b| {
            b.iter(|| push_all(MovingQuantile::median(window).unwrap(), &xs))
        });
        // One sample per time unit: a span of `window` holds `window`
        // samples, comparable with the count windows.
        group.bench_function(format!("TimeWindow({window}).push_at"), |b| {
            b.iter(|| {
                let mut w = TimeWindow::new(window as f64).unwrap();
                for (i, &x) in xs.iter().enumerate() {
                    w.push_at(i as f64, black_box(x)).unwrap();
                }
                w
            })
        });
    }
    // A bundle as a signal-processing loop would hold it: one push feeds
    // a short window's mean and variance, and the exponential pair.
    group.bench_function("bundle: MA(20), MV(20), Ema, EwVariance", |b| {
        b.iter(|| {
            let bundle = (
                MovingAverage::new(20).unwrap(),
                MovingVariance::new(20).unwrap(),
                Ema::new(momentum).unwrap(),
                EwVariance::new(momentum).unwrap(),
            );
            push_all(bundle, &xs)
        })
    });
    group.finish();
}

criterion::criterion_group! {
    name = benches;
    config = config();
    targets = streaming
}
criterion::criterion_main!(benches);
