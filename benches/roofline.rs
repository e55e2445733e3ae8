//! The comparison harness: every kernel and push path against its roofline,
//! timed alternately in one run.
//!
//! The roofline of a reduction over data larger than cache is the fastest
//! plain loop over the same bytes: a sum in AVX2 registers picked at run
//! time, reading the slice as eight streams side by side. That sum, not
//! the default-flag 8-accumulator one, is the limit: on AMD EPYC the
//! default-flag sum is about 20 % slower and is not memory-bound, and on
//! the Intel Xeon one stream reads 20–25 % slower than eight. The push
//! paths are compared with the textbook Welford loop, one division per
//! value.
//!
//! Each pair is timed A B A B … and each side keeps its best time, so
//! drift in the machine's speed (turbo, a neighbour, the page cache) hits
//! both sides alike; criterion's one-group-after-another runs moved the
//! sum by ±20 % between runs here. The tables it prints are those of
//! `docs/PERFORMANCE.md`.
//!
//! `cargo bench --bench roofline`; `MOMENTA_ROOFLINE_REPS` sets the number
//! of alternations (default 7), `MOMENTA_ROOFLINE_LOG2` the size of the
//! large `f64` slice (default 25: 256 MiB). Words after `--` keep only the
//! rows whose path contains one of them: `cargo bench --bench roofline --
//! Covariance MinMax`.

extern crate alloc;

mod common;
#[cfg(feature = "half")]
#[path = "roofline/norms.rs"]
mod norms;

use common::{data, data_f32, welford};
use momenta::batchnorm::{BatchStats, GradSums, GroupNorm, InstanceNorm, LayerNorm, Layout};
use momenta::{
    Covariance, Ema, EwVariance, Kurtosis, Mean, MinMax, Momentum, MovingAverage, MovingStats,
    MovingVariance, Skewness, Variance, WeightedVariance,
};
use multiversion::multiversion;
use rayon::prelude::*;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Parts of the slice the roofline sums read side by side.
const STREAMS: usize = 8;

/// `xs` as [`STREAMS`] equal parts of whole vectors of `W` values, and
/// the rest.
fn parts<T, const W: usize>(xs: &[T]) -> ([&[T]; STREAMS], &[T]) {
    let part = xs.len() / STREAMS / W * W;
    let (head, rest) = xs.split_at(part * STREAMS);
    (
        core::array::from_fn(|p| &head[p * part..(p + 1) * part]),
        rest,
    )
}

/// A plain sum: eight parts of the slice read side by side, each into
/// its own AVX2 register of four `f64`, where the CPU has AVX2; else
/// [`sum_f64_compiled`].
///
/// Written with intrinsics because the compiled loop is not the fastest
/// there is on the Intel Xeon: LLVM unrolls it into adds with indexed
/// memory operands, and 256 MiB took 24.9–25.9 ms that way against
/// 21.2–21.4 ms for the same loop in intrinsics. Read as several streams
/// it is faster again: one stream at a time held the core to about
/// 12 GB/s, and 256 MiB took 19.2–21.5 ms in one stream, 16.3–17.1 ms in
/// four and 16.7 ms in eight (1 GiB: 77.1–77.8, 66.3–67.6 and 65.5 ms).
fn sum_f64(xs: &[f64]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above, which is all
        // `sum_f64_avx2` requires.
        return unsafe { sum_f64_avx2(xs) };
    }
    sum_f64_compiled(xs)
}

/// [`sum_f64`] in AVX2 registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sum_f64_avx2(xs: &[f64]) -> f64 {
    use core::arch::x86_64::{
        _mm_add_pd, _mm_add_sd, _mm_cvtsd_f64, _mm_unpackhi_pd, _mm256_add_pd,
        _mm256_castpd256_pd128, _mm256_extractf128_pd, _mm256_loadu_pd, _mm256_setzero_pd,
    };
    let (parts, tail) = parts::<f64, 4>(xs);
    let mut acc = [_mm256_setzero_pd(); STREAMS];
    for i in (0..parts[0].len()).step_by(4) {
        for (a, part) in acc.iter_mut().zip(parts) {
            let four = &part[i..i + 4];
            // SAFETY: `four` holds 4 `f64`, the 32 bytes the unaligned
            // load reads.
            *a = _mm256_add_pd(*a, unsafe { _mm256_loadu_pd(four.as_ptr()) });
        }
    }
    let v = acc
        .into_iter()
        .fold(_mm256_setzero_pd(), |s, a| _mm256_add_pd(s, a));
    let v = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd::<1>(v));
    _mm_cvtsd_f64(_mm_add_sd(v, _mm_unpackhi_pd(v, v))) + tail.iter().sum::<f64>()
}

/// [`sum_f64`] as compiled for AVX2 where the CPU has it: the fallback.
#[multiversion(targets("x86_64+avx2+fma"))]
fn sum_f64_compiled(xs: &[f64]) -> f64 {
    let mut acc = [0.0_f64; 16];
    let chunks = xs.chunks_exact(16);
    let tail: f64 = chunks.remainder().iter().sum();
    for chunk in chunks {
        for (a, &x) in acc.iter_mut().zip(chunk) {
            *a += x;
        }
    }
    acc.iter().sum::<f64>() + tail
}

/// A plain sum of `f32`: eight parts read side by side into AVX2
/// registers of eight `f32` where the CPU has AVX2 (for the reasons
/// [`sum_f64`] is written so), else [`sum_f32_compiled`].
fn sum_f32(xs: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above, which is all
        // `sum_f32_avx2` requires.
        return unsafe { sum_f32_avx2(xs) };
    }
    sum_f32_compiled(xs)
}

/// [`sum_f32`] in AVX2 registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sum_f32_avx2(xs: &[f32]) -> f32 {
    use core::arch::x86_64::{_mm256_add_ps, _mm256_loadu_ps, _mm256_setzero_ps};
    let (parts, tail) = parts::<f32, 8>(xs);
    let mut acc = [_mm256_setzero_ps(); STREAMS];
    for i in (0..parts[0].len()).step_by(8) {
        for (a, part) in acc.iter_mut().zip(parts) {
            let eight = &part[i..i + 8];
            // SAFETY: `eight` holds 8 `f32`, the 32 bytes the unaligned
            // load reads.
            *a = _mm256_add_ps(*a, unsafe { _mm256_loadu_ps(eight.as_ptr()) });
        }
    }
    let v = acc
        .into_iter()
        .fold(_mm256_setzero_ps(), |s, a| _mm256_add_ps(s, a));
    horizontal_f32(v) + tail.iter().sum::<f32>()
}

/// The sum of the eight lanes of `v`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn horizontal_f32(v: core::arch::x86_64::__m256) -> f32 {
    use core::arch::x86_64::{
        _mm_add_ps, _mm_add_ss, _mm_cvtss_f32, _mm_movehl_ps, _mm_shuffle_ps,
        _mm256_castps256_ps128, _mm256_extractf128_ps,
    };
    let v = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
    let v = _mm_add_ps(v, _mm_movehl_ps(v, v));
    _mm_cvtss_f32(_mm_add_ss(v, _mm_shuffle_ps::<1>(v, v)))
}

/// [`sum_f32`] as compiled for AVX2 where the CPU has it: the fallback.
#[multiversion(targets("x86_64+avx2+fma"))]
fn sum_f32_compiled(xs: &[f32]) -> f32 {
    let mut acc = [0.0_f32; 32];
    let chunks = xs.chunks_exact(32);
    let tail: f32 = chunks.remainder().iter().sum();
    for chunk in chunks {
        for (a, &x) in acc.iter_mut().zip(chunk) {
            *a += x;
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// A plain sum of half-precision data in 32 `f32` accumulators, each value
/// converted the fastest way the CPU offers: F16C's `vcvtph2ps` where it
/// has AVX2 and F16C, else bit operations.
///
/// Safe Rust has no F16C conversion without `unsafe`, and the safe ways
/// are no roofline on the Intel Xeon: 256 MiB took 134 ms by the bit
/// operations below (42 ms even with subnormals, infinities and NaN left
/// out), 48–52 ms through the `half` crate's slice conversion into a
/// buffer, and 16–27 ms by F16C, against 22 ms for the `f32` sum of the
/// same bytes. Like [`sum_f64`], it is an intrinsic loop in a benchmark,
/// the only `unsafe` code outside the kernels' architecture files.
#[cfg(feature = "half")]
fn sum_f16(xs: &[half::f16]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("f16c") {
        // SAFETY: the CPU has AVX2 and F16C, checked just above, which is
        // all `sum_f16c` requires.
        return unsafe { sum_f16c(xs) };
    }
    sum_f16_bits(xs)
}

/// [`sum_f16`] by F16C: eight parts read side by side, each into a
/// 256-bit accumulator of 8 `f32`.
#[cfg(all(feature = "half", target_arch = "x86_64"))]
#[target_feature(enable = "avx2,f16c")]
fn sum_f16c(xs: &[half::f16]) -> f32 {
    use core::arch::x86_64::{_mm_loadu_si128, _mm256_add_ps, _mm256_cvtph_ps, _mm256_setzero_ps};
    let (parts, tail) = parts::<half::f16, 8>(xs);
    let mut acc = [_mm256_setzero_ps(); STREAMS];
    for i in (0..parts[0].len()).step_by(8) {
        for (a, part) in acc.iter_mut().zip(parts) {
            let eight = &part[i..i + 8];
            // SAFETY: `eight` holds 8 values of 2 bytes, the 16 bytes the
            // unaligned load reads.
            let h = unsafe { _mm_loadu_si128(eight.as_ptr().cast()) };
            *a = _mm256_add_ps(*a, _mm256_cvtph_ps(h));
        }
    }
    let v = acc
        .into_iter()
        .fold(_mm256_setzero_ps(), |s, a| _mm256_add_ps(s, a));
    horizontal_f32(v) + tail.iter().map(|h| h.to_f32()).sum::<f32>()
}

/// [`sum_f16`] by bit operations (exact, branch-free, so the compiler
/// vectorises it; compiled for AVX2 where the CPU has it), for CPUs
/// without F16C.
#[cfg(feature = "half")]
#[multiversion(targets("x86_64+avx2+fma+f16c"))]
fn sum_f16_bits(xs: &[half::f16]) -> f32 {
    #[inline(always)]
    fn widen(h: u16) -> f32 {
        let h = u32::from(h);
        let sign = (h & 0x8000) << 16;
        let em = h & 0x7fff;
        let normal = f32::from_bits((em << 13) + 0x3800_0000);
        let special = f32::from_bits((em << 13) | 0x7f80_0000);
        let tiny = em as f32 * f32::from_bits(0x3380_0000);
        let v = if em >= 0x7c00 {
            special
        } else if em < 0x0400 {
            tiny
        } else {
            normal
        };
        f32::from_bits(v.to_bits() | sign)
    }
    let mut acc = [0.0_f32; 32];
    let chunks = xs.chunks_exact(32);
    let tail: f32 = chunks.remainder().iter().map(|h| widen(h.to_bits())).sum();
    for chunk in chunks {
        for (a, h) in acc.iter_mut().zip(chunk) {
            *a += widen(h.to_bits());
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// The roofline on every rayon thread.
fn par_sum_f64(xs: &[f64]) -> f64 {
    xs.par_chunks(1 << 16).map(sum_f64).sum()
}

/// The roofline on every rayon thread.
fn par_sum_f32(xs: &[f32]) -> f32 {
    xs.par_chunks(1 << 16).map(sum_f32).sum()
}

fn env(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Best times of `a` and `b`, run alternately `reps` times each.
fn alternate<A, B>(reps: u32, a: impl Fn() -> A, b: impl Fn() -> B) -> (Duration, Duration) {
    let (mut best_a, mut best_b) = (Duration::MAX, Duration::MAX);
    black_box(a());
    black_box(b());
    for _ in 0..reps {
        let t = Instant::now();
        black_box(a());
        best_a = best_a.min(t.elapsed());
        let t = Instant::now();
        black_box(b());
        best_b = best_b.min(t.elapsed());
    }
    (best_a, best_b)
}

/// Whether the command line keeps the row `what`: every row when it names
/// nothing, else those containing one of its words.
fn wanted(what: &str) -> bool {
    let words: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    words.is_empty() || words.iter().any(|w| what.contains(w.as_str()))
}

/// One row: `kernel`'s speed as a fraction of `roofline`'s.
fn row<A, B>(
    reps: u32,
    what: &str,
    against: &str,
    kernel: impl Fn() -> A,
    roofline: impl Fn() -> B,
) {
    if !wanted(what) {
        return;
    }
    let (k, r) = alternate(reps, kernel, roofline);
    println!(
        "| {what} | {against} | {:.2} | {:.2} ms | {:.2} ms |",
        r.as_secs_f64() / k.as_secs_f64(),
        k.as_secs_f64() * 1e3,
        r.as_secs_f64() * 1e3
    );
}

/// Pushes every value, one call each.
fn push_all<A: momenta::Accumulator<f64>>(mut acc: A, xs: &[f64]) -> A {
    for &x in xs {
        acc.push(black_box(x));
    }
    acc
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is expected.
    let reps = env("MOMENTA_ROOFLINE_REPS", 7);
    let log2 = env("MOMENTA_ROOFLINE_LOG2", 25);
    let n = 1usize << log2;
    let threads = rayon::current_num_threads();
    println!(
        "roofline: AVX2 sum of eight streams where the CPU has it; best of {reps}, alternated; {threads} rayon threads\n"
    );
    // `MOMENTA_ROOFLINE_SECTION=norms`: the normalization layers alone.
    #[cfg(feature = "half")]
    if std::env::var("MOMENTA_ROOFLINE_SECTION").as_deref() == Ok("norms") {
        norms::norms(reps);
        return;
    }
    println!("| path | against | ratio (> 1: faster) | kernel | roofline |");
    println!("|---|---|---:|---:|---:|");

    let xs = data(n, 1e9, 1);
    let mib = (n * 8) >> 20;
    row(
        reps,
        &format!("`Variance::from_slice`, f64, {mib} MiB"),
        "AVX2 sum",
        || Variance::<f64>::from_slice(&xs),
        || sum_f64(&xs),
    );
    row(
        reps,
        &format!("`Mean::from_slice`, f64, {mib} MiB"),
        "AVX2 sum",
        || Mean::<f64>::from_slice(&xs),
        || sum_f64(&xs),
    );
    row(
        reps,
        &format!("`Variance::par_from_slice`, f64, {mib} MiB"),
        "parallel AVX2 sum",
        || Variance::<f64>::par_from_slice(&xs),
        || par_sum_f64(&xs),
    );
    row(
        reps,
        &format!("`Variance::from_slice`, f64, {mib} MiB"),
        "naive Welford",
        || Variance::<f64>::from_slice(&xs),
        || welford(&xs),
    );
    drop(xs);

    let xs = data_f32(2 * n, 1e3, 2);
    row(
        reps,
        &format!("`Variance::<f64>::from_slice`, f32, {mib} MiB"),
        "AVX2 sum",
        || Variance::<f64>::from_slice(&xs),
        || sum_f32(&xs),
    );
    row(
        reps,
        &format!("`Variance::<f64>::par_from_slice`, f32, {mib} MiB"),
        "parallel AVX2 sum",
        || Variance::<f64>::par_from_slice(&xs),
        || par_sum_f32(&xs),
    );
    drop(xs);

    family(reps, n);

    let small = data(1 << 14, 1e9, 3);
    row(
        reps * 100,
        "`Variance::from_slice`, f64, 128 KiB (in cache)",
        "AVX2 sum",
        || Variance::<f64>::from_slice(&small),
        || sum_f64(&small),
    );
    let small32 = data_f32(1 << 14, 1e3, 4);
    row(
        reps * 100,
        "`Variance::<f64>::from_slice`, f32, 64 KiB (in cache)",
        "AVX2 sum",
        || Variance::<f64>::from_slice(&small32),
        || sum_f32(&small32),
    );

    // Per-channel statistics: 64⁴ f32 (64 MiB), and 256 MiB NHWC tensors
    // with few, some and many channels.
    let d = 64;
    let xs = data_f32(d * d * d * d, 0.0, 5);
    for (name, layout) in [
        ("NCHW 64⁴", Layout::nchw(d, d, d, d)),
        ("NHWC 64⁴", Layout::nhwc(d, d, d, d)),
    ] {
        let layout = layout.expect("64⁴ fits");
        row(
            reps,
            &format!("`BatchStats::compute`, {name}, f32"),
            "AVX2 sum",
            || BatchStats::<f32>::compute(&xs, layout),
            || sum_f32(&xs),
        );
        row(
            reps,
            &format!("`BatchStats::par_compute`, {name}, f32"),
            "parallel AVX2 sum",
            || BatchStats::<f32>::par_compute(&xs, layout),
            || par_sum_f32(&xs),
        );
    }
    drop(xs);
    // The backward pass's reductions read two tensors: against the sum of
    // both. 2 × 128 MiB, from memory.
    {
        let half = 1usize << 25;
        let xs = data_f32(half, 0.0, 9);
        let dy = data_f32(half, -0.5, 10);
        for (name, layout) in [
            ("NCHW 32×64×128×128", Layout::nchw(32, 64, 128, 128)),
            ("NHWC 32×128×128×64", Layout::nhwc(32, 128, 128, 64)),
        ] {
            let layout = layout.expect("fits");
            let stats = BatchStats::<f32>::compute(&xs, layout).expect("valid");
            row(
                reps,
                &format!("`GradSums::compute`, {name}, f32"),
                "AVX2 sum",
                || GradSums::compute(&xs, &dy, layout, &stats),
                || sum_f32(&xs) + sum_f32(&dy),
            );
            row(
                reps,
                &format!("`GradSums::par_compute`, {name}, f32"),
                "parallel AVX2 sum",
                || GradSums::par_compute(&xs, &dy, layout, &stats),
                || par_sum_f32(&xs) + par_sum_f32(&dy),
            );
        }
    }
    // LayerNorm over 768 features (a transformer's rows), InstanceNorm
    // and GroupNorm on NHWC images: the per-sample group engine.
    {
        let xs = data_f32(1 << 25, 0.0, 16);
        let rows = (1usize << 25) / 768;
        let xs768 = &xs[..rows * 768];
        row(
            reps,
            "`LayerNorm::statistics`, 768 features, 128 MiB",
            "AVX2 sum",
            || LayerNorm::<f32>::new(768).map(|l| l.statistics(xs768)),
            || sum_f32(xs768),
        );
        for features in [32, 128] {
            let rows = (1usize << 25) / features;
            row(
                reps,
                &format!("`LayerNorm::statistics`, {features} features, 128 MiB"),
                "AVX2 sum",
                || LayerNorm::<f32>::new(features).map(|l| l.statistics(&xs)),
                || sum_f32(&xs[..rows * features]),
            );
        }
        let small = Layout::nchw(1 << 12, 64, 8, 16).expect("fits");
        row(
            reps,
            "`InstanceNorm::statistics`, NCHW 4096×64×8×16",
            "AVX2 sum",
            || InstanceNorm::<f32>::new().statistics(&xs, small),
            || sum_f32(&xs),
        );
        let layout = Layout::nhwc(32, 128, 128, 64).expect("fits");
        row(
            reps,
            "`GroupNorm::statistics`, 32 groups, NHWC 32×128×128×64",
            "AVX2 sum",
            || GroupNorm::<f32>::new(32).map(|g| g.statistics(&xs, layout)),
            || sum_f32(&xs),
        );
        let layout = Layout::nchw(32, 64, 128, 128).expect("fits");
        row(
            reps,
            "`InstanceNorm::statistics`, NCHW 32×64×128×128",
            "AVX2 sum",
            || InstanceNorm::<f32>::new().statistics(&xs, layout),
            || sum_f32(&xs),
        );
    }
    let big = 1usize << 26;
    let xs = data_f32(big, 0.0, 6);
    // From memory: 64 MiB partly stays in a 32 MiB L3 between passes,
    // which helps the faster loop more.
    let layout = Layout::nchw(64, 64, 128, 128).expect("fits");
    row(
        reps,
        "`BatchStats::compute`, NCHW 256 MiB, 64 channels of 128×128",
        "AVX2 sum",
        || BatchStats::<f32>::compute(&xs, layout),
        || sum_f32(&xs),
    );
    row(
        reps,
        "`BatchStats::par_compute`, NCHW 256 MiB, 64 channels of 128×128",
        "parallel AVX2 sum",
        || BatchStats::<f32>::par_compute(&xs, layout),
        || par_sum_f32(&xs),
    );
    for c in [3, 64, 512] {
        let rows = big / c;
        let layout = Layout::nhwc(1, rows, 1, c).expect("fits");
        let xs = &xs[..rows * c];
        row(
            reps,
            &format!("`BatchStats::compute`, NHWC 256 MiB, {c} channels"),
            "AVX2 sum",
            || BatchStats::<f32>::compute(xs, layout),
            || sum_f32(xs),
        );
        row(
            reps,
            &format!("`BatchStats::par_compute`, NHWC 256 MiB, {c} channels"),
            "parallel AVX2 sum",
            || BatchStats::<f32>::par_compute(xs, layout),
            || par_sum_f32(xs),
        );
    }
    drop(xs);

    #[cfg(feature = "half")]
    {
        let xs: Vec<half::f16> = data_f32(4 * n, 0.0, 8)
            .into_iter()
            .map(half::f16::from_f32)
            .collect();
        row(
            reps,
            &format!("`Variance::<f64>::from_slice`, f16, {mib} MiB"),
            "f16 sum",
            || Variance::<f64>::from_slice(&xs),
            || sum_f16(&xs),
        );
        // From memory: 256 MiB of f16, 64 channels last.
        let layout = Layout::nhwc(1, xs.len() / 64, 1, 64).expect("fits");
        row(
            reps,
            &format!("`BatchStats::compute`, NHWC {mib} MiB, 64 channels, f16"),
            "f16 sum",
            || BatchStats::<f32>::compute(&xs, layout),
            || sum_f16(&xs),
        );
        // The backward pass's reductions on half-precision tensors: two of
        // a quarter of the size above (64 MiB by default) against the sum
        // of both.
        let (x16, dy16) = xs.split_at(n);
        let dy16 = &dy16[..n];
        let quarter = mib / 4;
        row(
            reps,
            &format!("`WeightedVariance::from_slices`, f16, 2 × {quarter} MiB"),
            "f16 sum",
            || WeightedVariance::<f64>::from_slices(x16, dy16),
            || sum_f16(x16) + sum_f16(dy16),
        );
        // Images of 64 channels of 128×128, as many as fill a quarter.
        let images = n >> 20;
        for (name, layout) in [
            (
                format!("NCHW {images}×64×128×128"),
                Layout::nchw(images, 64, 128, 128),
            ),
            (
                format!("NHWC {images}×128×128×64"),
                Layout::nhwc(images, 128, 128, 64),
            ),
        ] {
            let layout = layout.expect("fits");
            let stats = BatchStats::<f32>::compute(x16, layout).expect("valid");
            row(
                reps,
                &format!("`GradSums::compute`, {name}, f16"),
                "f16 sum",
                || GradSums::compute(x16, dy16, layout, &stats),
                || sum_f16(x16) + sum_f16(dy16),
            );
        }
        // Many short runs: a layer norm's rows of 128 features.
        let ln = LayerNorm::<f32>::new(128).expect("valid");
        row(
            reps,
            &format!("`LayerNorm::statistics`, 128 features, f16, {quarter} MiB"),
            "f16 sum",
            || ln.statistics(x16),
            || sum_f16(x16),
        );
        let d = 64;
        let xs = &xs[..d * d * d * d];
        for (name, layout) in [
            ("NCHW 64⁴", Layout::nchw(d, d, d, d)),
            ("NHWC 64⁴", Layout::nhwc(d, d, d, d)),
        ] {
            let layout = layout.expect("64⁴ fits");
            row(
                reps,
                &format!("`BatchStats::compute`, {name}, f16"),
                "f16 sum",
                || BatchStats::<f32>::compute(xs, layout),
                || sum_f16(xs),
            );
        }
    }

    #[cfg(feature = "half")]
    norms::norms(reps);

    // The push paths: values per second against the naive Welford loop.
    let xs = data(1 << 16, 1e6, 7);
    let m = Momentum::Factor(0.1);
    let push =
        |what: &str, f: &dyn Fn() -> f64| row(reps * 10, what, "naive Welford", f, || welford(&xs));
    push("`Mean::push`", &|| {
        push_all(Mean::new(), &xs).mean().unwrap_or(0.0)
    });
    push("`Variance::push`", &|| {
        push_all(Variance::new(), &xs).mean().unwrap_or(0.0)
    });
    push("`Ema::push`", &|| {
        push_all(Ema::new(m).expect("valid"), &xs)
            .value()
            .unwrap_or(0.0)
    });
    push("`EwVariance::push`", &|| {
        push_all(EwVariance::new(m).expect("valid"), &xs)
            .mean()
            .unwrap_or(0.0)
    });
    push("`MovingAverage::push`, window 1000", &|| {
        push_all(MovingAverage::new(1000).expect("valid"), &xs)
            .mean()
            .unwrap_or(0.0)
    });
    push("`MovingVariance::push`, window 1000", &|| {
        push_all(MovingVariance::new(1000).expect("valid"), &xs)
            .mean()
            .unwrap_or(0.0)
    });
    push("`MovingMinMax::push`, window 1000", &|| {
        push_all(momenta::MovingMinMax::new(1000).expect("valid"), &xs)
            .max()
            .unwrap_or(0.0)
    });
    for window in [1000, 20] {
        push(&format!("`MovingStats::push`, window {window}"), &|| {
            push_all(MovingStats::new(window).expect("valid"), &xs)
                .mean()
                .unwrap_or(0.0)
        });
    }
    let bundle = || {
        let b = (
            MovingAverage::new(20).expect("valid"),
            MovingVariance::new(20).expect("valid"),
            Ema::new(m).expect("valid"),
            EwVariance::new(m).expect("valid"),
        );
        push_all(b, &xs).0.mean().unwrap_or(0.0)
    };
    if !wanted("bundle") {
        return;
    }
    let (t, _) = alternate(reps * 10, bundle, || welford(&xs));
    println!(
        "\nbundle of MovingAverage(20), MovingVariance(20), Ema, EwVariance: {:.1} ns per sample",
        t.as_secs_f64() * 1e9 / xs.len() as f64
    );
}

/// The cumulative family's slice kernels: two slices of half the size
/// against the sum over both, one slice against its sum.
fn family(reps: u32, n: usize) {
    let half = n / 2;
    let xs = data(half, 1e9, 11);
    let ys = data(half, -3e8, 12);
    let mib = (n * 8) >> 20;
    let both = || sum_f64(&xs) + sum_f64(&ys);
    let par_both = || par_sum_f64(&xs) + par_sum_f64(&ys);
    row(
        reps,
        &format!("`Covariance::from_slices`, f64, {mib} MiB"),
        "AVX2 sum",
        || Covariance::<f64>::from_slices(&xs, &ys),
        both,
    );
    row(
        reps,
        &format!("`Covariance::par_from_slices`, f64, {mib} MiB"),
        "parallel AVX2 sum",
        || Covariance::<f64>::par_from_slices(&xs, &ys),
        par_both,
    );
    let ws = data(half, 0.0, 13);
    row(
        reps,
        &format!("`WeightedVariance::from_slices`, f64, {mib} MiB"),
        "AVX2 sum",
        || WeightedVariance::<f64>::from_slices(&xs, &ws),
        || sum_f64(&xs) + sum_f64(&ws),
    );
    row(
        reps,
        &format!("`WeightedVariance::par_from_slices`, f64, {mib} MiB"),
        "parallel AVX2 sum",
        || WeightedVariance::<f64>::par_from_slices(&xs, &ws),
        || par_sum_f64(&xs) + par_sum_f64(&ws),
    );
    drop((xs, ys, ws));

    let xs = data(n, 1e9, 14);
    // Each statistic on one thread and on all, as one number to keep.
    type Run<'a> = Box<dyn Fn(bool) -> f64 + 'a>;
    let stats: [(&str, Run); 3] = [
        (
            "MinMax",
            Box::new(|par| {
                let m = if par {
                    MinMax::<f64>::par_from_slice(&xs)
                } else {
                    MinMax::<f64>::from_slice(&xs)
                };
                m.max().unwrap_or(0.0)
            }),
        ),
        (
            "Skewness",
            Box::new(|par| {
                let s = if par {
                    Skewness::<f64>::par_from_slice(&xs)
                } else {
                    Skewness::<f64>::from_slice(&xs)
                };
                s.skewness().unwrap_or(0.0)
            }),
        ),
        (
            "Kurtosis",
            Box::new(|par| {
                let k = if par {
                    Kurtosis::<f64>::par_from_slice(&xs)
                } else {
                    Kurtosis::<f64>::from_slice(&xs)
                };
                k.kurtosis().unwrap_or(0.0)
            }),
        ),
    ];
    for (par, what) in [(false, "AVX2 sum"), (true, "parallel AVX2 sum")] {
        let prefix = if par { "par_" } else { "" };
        for (name, run) in &stats {
            row(
                reps,
                &format!("`{name}::{prefix}from_slice`, f64, {mib} MiB"),
                what,
                || run(par),
                || if par { par_sum_f64(&xs) } else { sum_f64(&xs) },
            );
        }
    }
    drop(stats);
    drop(xs);
    let xs = data_f32(2 * n, 1e3, 15);
    row(
        reps,
        &format!("`MinMax::from_slice`, f32, {mib} MiB"),
        "AVX2 sum",
        || MinMax::<f32>::from_slice(&xs),
        || sum_f32(&xs),
    );
    let (xs, ys) = xs.split_at(n);
    row(
        reps,
        &format!("`Covariance::<f64>::from_slices`, f32, {mib} MiB"),
        "AVX2 sum",
        || Covariance::<f64>::from_slices(xs, ys),
        || sum_f32(xs) + sum_f32(ys),
    );
}
