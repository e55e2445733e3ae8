//! Reduce a large tensor to its mean and variance, on one core and on all of
//! them, and compare the throughput with a plain sum of the same data — the
//! speed of memory, which no reduction can beat.
//!
//! ```sh
//! cargo run --release --example parallel_tensor [-- MEBIBYTES]
//! ```
//!
//! The default tensor is 512 MiB of `f32` (2²⁷ values).

use momenta::{Mean, Variance};
use rayon::prelude::*;
use std::hint::black_box;
use std::time::Instant;

/// A plain sum in eight independent lanes of the data's own type, which the
/// compiler vectorises: the memory roofline. (Widening each value to `f64`
/// first would make the sum itself bound by arithmetic, not by memory, on
/// a default build.)
fn plain_sum(xs: &[f32]) -> f32 {
    let mut acc = [0.0_f32; 8];
    let chunks = xs.chunks_exact(8);
    let tail: f32 = chunks.remainder().iter().sum();
    for c in chunks {
        for (a, &x) in acc.iter_mut().zip(c) {
            *a += x;
        }
    }
    acc.iter().sum::<f32>() + tail
}

fn par_plain_sum(xs: &[f32]) -> f32 {
    xs.par_chunks(1 << 16).map(plain_sum).sum()
}

/// Best wall time of a few runs, in seconds.
fn best_of<R>(runs: usize, mut f: impl FnMut() -> R) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let mib: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(512);
    let n = mib * (1 << 20) / size_of::<f32>();
    let bytes = (n * size_of::<f32>()) as f64;

    print!(
        "generating {mib} MiB of f32 data (1e3 + noise) on {} threads ... ",
        rayon::current_num_threads()
    );
    let t = Instant::now();
    let mut data = vec![0.0_f32; n];
    data.par_chunks_mut(1 << 16)
        .enumerate()
        .for_each(|(c, chunk)| {
            let mut s = 0x9E37_79B9_u64 ^ (c as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            for x in chunk {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                *x = 1000.0 + (s >> 40) as f32 / (1u64 << 24) as f32;
            }
        });
    println!("done in {:.2} s", t.elapsed().as_secs_f64());

    let runs = 5;
    let rows: Vec<(&str, f64)> = vec![
        ("plain sum, 1 thread", best_of(runs, || plain_sum(&data))),
        (
            "Mean::from_slice",
            best_of(runs, || Mean::<f64>::from_slice(&data)),
        ),
        (
            "Variance::from_slice",
            best_of(runs, || Variance::<f64>::from_slice(&data)),
        ),
        (
            "plain sum, all threads",
            best_of(runs, || par_plain_sum(&data)),
        ),
        (
            "Mean::par_from_slice",
            best_of(runs, || Mean::<f64>::par_from_slice(&data)),
        ),
        (
            "Variance::par_from_slice",
            best_of(runs, || Variance::<f64>::par_from_slice(&data)),
        ),
    ];

    let seq = rows[0].1;
    let par = rows[3].1;
    println!(
        "\n{:<28} {:>10} {:>12}",
        "reduction", "GB/s", "vs plain sum"
    );
    for (i, (name, secs)) in rows.iter().enumerate() {
        let baseline = if i < 3 { seq } else { par };
        println!(
            "{name:<28} {:>10.2} {:>11.2}x",
            bytes / secs / 1e9,
            baseline / secs
        );
    }

    let seq = Variance::<f64>::from_slice(&data);
    let par = Variance::<f64>::par_from_slice(&data);
    println!(
        "\nmean {:.9}, variance {:.9e} (sequential and parallel results are {})",
        par.mean().unwrap_or(f64::NAN),
        par.population_variance().unwrap_or(f64::NAN),
        if seq == par {
            "bit-identical"
        } else {
            "different"
        }
    );
}
