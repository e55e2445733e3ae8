//! The normalization layers against their rooflines: each layer's
//! statistics against the plain sum of the same bytes, and each
//! normalization (a read and a write of the tensor) against a plain copy
//! of the same tensor.
//!
//! Timed in the thread's CPU time (user and system: the output's page
//! faults count), alternately, best of `reps`, so that work on the other
//! core does not count and drift hits both sides alike. `H` is the length
//! of the rows: a layer norm's features, the `H·W` of a channels-first
//! image (64 channels), the channels of a channels-last one.
//!
//! The copy is the faster, measured at the start, of `copy_from_slice`
//! (the C library's `memcpy`, which moves large blocks with
//! non-temporal stores) and a loop of AVX2 loads and stores (which the
//! compiler may turn into a `memcpy` call too). A layer whose statistics
//! need the whole tensor before its first value is normalized
//! (BatchNorm's) is also timed against a sum and a copy, its bound.
//!
//! `MOMENTA_ROOFLINE_SECTION=norms cargo bench --features half --bench
//! roofline -- <words>` runs this section alone, the rows whose path
//! contains one of the words.

use super::{env, sum_f16, sum_f32, wanted};
use core::cell::RefCell;
use half::f16;
use momenta::Element;
use momenta::norm::{BatchNorm, BatchStats, GroupNorm, InstanceNorm, LayerNorm, Layout};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The thread's CPU time, user and system, from
/// `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`; the wall clock where that
/// fails.
fn thread_time() -> Duration {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let start = *START.get_or_init(Instant::now);
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid `timespec` for the call to write, and the
    // clock is one every Linux kernel since 2.6.12 has.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &raw mut ts) } == 0 {
        #[allow(clippy::cast_sign_loss, reason = "a clock's non-negative fields")]
        return Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
    }
    start.elapsed()
}

/// Best thread times of `a` and `b`, run alternately `reps` times each
/// after one run of each.
fn alternate<A, B>(reps: u32, a: impl Fn() -> A, b: impl Fn() -> B) -> (Duration, Duration) {
    let (mut best_a, mut best_b) = (Duration::MAX, Duration::MAX);
    black_box(a());
    black_box(b());
    for _ in 0..reps {
        let t = thread_time();
        black_box(a());
        best_a = best_a.min(thread_time() - t);
        let t = thread_time();
        black_box(b());
        best_b = best_b.min(thread_time() - t);
    }
    (best_a, best_b)
}

/// One row of the table: `kernel`'s speed as a fraction of `roofline`'s.
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
        "| {what} | {against} | {:.2} | {:.3} ms | {:.3} ms |",
        r.as_secs_f64() / k.as_secs_f64(),
        k.as_secs_f64() * 1e3,
        r.as_secs_f64() * 1e3
    );
}

/// A copy of `xs` into `out` (the same length) by AVX2 loads and plain
/// stores, four vectors a step, where the CPU has AVX2; else
/// `copy_from_slice`.
fn copy_avx2<T: Copy>(xs: &[T], out: &mut [T]) {
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        unsafe { copy_avx2_bytes(xs, out) };
    } else {
        out.copy_from_slice(xs);
    }
}

/// [`copy_avx2`] in AVX2 registers.
#[target_feature(enable = "avx2")]
fn copy_avx2_bytes<T: Copy>(xs: &[T], out: &mut [T]) {
    use core::arch::x86_64::{__m256i, _mm256_loadu_si256, _mm256_storeu_si256};
    let n = xs.len().min(out.len());
    let bytes = n * size_of::<T>();
    let (src, dst) = (xs.as_ptr().cast::<u8>(), out.as_mut_ptr().cast::<u8>());
    let whole = bytes / 128 * 128;
    for i in (0..whole).step_by(128) {
        for k in 0..4 {
            let at = i + 32 * k;
            // SAFETY: `at + 32 ≤ whole ≤ bytes`, within both slices, which
            // do not overlap (one is borrowed mutably).
            unsafe {
                let v = _mm256_loadu_si256(src.add(at).cast::<__m256i>());
                _mm256_storeu_si256(dst.add(at).cast::<__m256i>(), v);
            }
        }
    }
    out[whole / size_of::<T>()..n].copy_from_slice(&xs[whole / size_of::<T>()..n]);
}

/// Which copy is the faster on `len` values of `T`: `copy_from_slice`
/// (false) or [`copy_avx2`] (true), and the two times.
fn faster_copy<T: Copy + Default>(reps: u32, len: usize) -> (bool, Duration, Duration) {
    let xs = vec![T::default(); len];
    let out = RefCell::new(vec![T::default(); len]);
    let (plain, avx2) = alternate(
        reps,
        || out.borrow_mut().copy_from_slice(&xs),
        || copy_avx2(&xs, &mut out.borrow_mut()),
    );
    (avx2 < plain, plain, avx2)
}

/// The element types the rows run on: the layers' `f32`, and `f16` in
/// and out.
trait Ty: Element + Copy + Default + Send + Sync {
    const NAME: &'static str;
    fn from(x: f32) -> Self;
    fn sum(xs: &[Self]) -> f32;
}

impl Ty for f32 {
    const NAME: &'static str = "f32";
    fn from(x: f32) -> Self {
        x
    }
    fn sum(xs: &[Self]) -> f32 {
        sum_f32(xs)
    }
}

impl Ty for f16 {
    const NAME: &'static str = "f16";
    fn from(x: f32) -> Self {
        f16::from_f32(x)
    }
    fn sum(xs: &[Self]) -> f32 {
        sum_f16(xs)
    }
}

/// The tensor's values, `U(−1, 3)` and per row `H` a level of its own.
fn tensor<T: Ty>(len: usize, seed: u64) -> Vec<T> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            T::from((x >> 40) as f32 / 4_194_304.0 - 1.0)
        })
        .collect()
}

/// `n` values `1 + (j mod 7)/8` or `(j mod 5)/4 − 0.5`: γ or β.
fn affine(n: usize, beta: bool) -> Vec<f32> {
    (0..n)
        .map(|j| {
            if beta {
                (j % 5) as f32 / 4.0 - 0.5
            } else {
                1.0 + (j % 7) as f32 / 8.0
            }
        })
        .collect()
}

/// The layouts of a layer's rows of `h` in `len` values: channels first,
/// 64 channels of `h` values (`h` the image's `H·W`); channels last, 16
/// samples of `h` channels.
/// (Those that fit in `len`.)
fn layouts(len: usize, h: usize) -> Vec<(&'static str, Layout)> {
    [
        ("NCHW", Layout::ncl(len / (64 * h), 64, h)),
        ("NHWC", Layout::nhwc(16, len / (16 * h), 1, h)),
    ]
    .into_iter()
    .filter_map(|(name, layout)| Some((name, layout.ok()?)))
    .filter(|(_, layout)| !layout.is_empty())
    .collect()
}

/// Every row of one element type: `bytes` of data from memory (`reps`
/// alternations), or in cache.
fn rows_of<T: Ty>(reps: u32, bytes: usize, place: &str, copy_avx: bool) {
    let len = bytes / size_of::<T>();
    let ty = T::NAME;
    let xs: Vec<T> = tensor(len, 3);
    let out = RefCell::new(vec![T::default(); len]);
    let copied = RefCell::new(vec![T::default(); len]);
    let copy = || {
        let mut c = copied.borrow_mut();
        if copy_avx {
            copy_avx2(&xs, &mut c);
        } else {
            c.copy_from_slice(&xs);
        }
    };
    for h in [32, 128, 768, 4096] {
        let ln = LayerNorm::<f32>::new(h).expect("valid");
        let rows = len / h;
        let x = &xs[..rows * h];
        row(
            reps,
            &format!("`LayerNorm::statistics`, H {h}, {ty}, {place}"),
            "sum",
            || ln.statistics(x),
            || T::sum(x),
        );
        let (g, b) = (affine(h, false), affine(h, true));
        let what = format!("`LayerNorm::normalize`, H {h}, {ty}, {place}");
        let layout = Layout::nc(rows, h).expect("fits");
        row(
            reps,
            &what,
            "copy",
            || {
                let mut o = out.borrow_mut();
                ln.normalize_into(x, layout, Some(&g), Some(&b), &mut o[..rows * h])
            },
            copy,
        );
    }
    for h in [32, 128, 768, 4096] {
        for (name, layout) in layouts(len, h) {
            let x = &xs[..layout.len()];
            let (g, b) = (
                affine(layout.channels(), false),
                affine(layout.channels(), true),
            );
            let (g, b) = (Some(&g[..]), Some(&b[..]));
            let o = || RefCell::borrow_mut(&out);
            let n = layout.len();
            let bn = BatchNorm::<f32>::new();
            let stats = BatchStats::<f32>::compute(x, layout).expect("valid");
            let eps = bn.eps();
            let at = format!("{name}, H {h}, {ty}, {place}");
            row(
                reps,
                &format!("`BatchStats::normalize_into` (given statistics), {at}"),
                "copy",
                || stats.normalize_into(x, layout, eps, g, b, &mut o()[..n]),
                copy,
            );
            row(
                reps,
                &format!("`BatchNorm::normalize_into`, {at}"),
                "copy",
                || bn.normalize_into(x, layout, g, b, &mut o()[..n]),
                copy,
            );
            // Batch statistics need the whole batch before the first value
            // is normalized: two passes, whose bound is a sum and a copy.
            row(
                reps,
                &format!("`BatchNorm::normalize_into` (two passes), {at}"),
                "sum + copy",
                || bn.normalize_into(x, layout, g, b, &mut o()[..n]),
                || {
                    black_box(T::sum(x));
                    copy();
                },
            );
            let inorm = InstanceNorm::<f32>::new();
            row(
                reps,
                &format!("`InstanceNorm::normalize_into`, {at}"),
                "copy",
                || inorm.normalize_into(x, layout, g, b, &mut o()[..n]),
                copy,
            );
            let gn = GroupNorm::<f32>::new(32).expect("valid");
            row(
                reps,
                &format!("`GroupNorm::normalize_into` (32 groups), {at}"),
                "copy",
                || gn.normalize_into(x, layout, g, b, &mut o()[..n]),
                copy,
            );
            row(
                reps,
                &format!("`BatchNorm::statistics`, {at}"),
                "sum",
                || bn.statistics(x, layout),
                || T::sum(x),
            );
        }
    }
}

/// The `f32` layers' own `normalize` (in `F`, [`Normalizer`] for all but
/// layer norm), against the copy.
fn native_rows(reps: u32, bytes: usize, place: &str, copy_avx: bool) {
    let len = bytes / 4;
    let xs: Vec<f32> = tensor(len, 5);
    let out = RefCell::new(vec![0.0_f32; len]);
    let copied = RefCell::new(vec![0.0_f32; len]);
    let copy = || {
        let mut c = copied.borrow_mut();
        if copy_avx {
            copy_avx2(&xs, &mut c);
        } else {
            c.copy_from_slice(&xs);
        }
    };
    for h in [32, 128, 768, 4096] {
        let ln = LayerNorm::<f32>::new(h).expect("valid");
        let rows = len / h;
        let x = &xs[..rows * h];
        let (g, b) = (affine(h, false), affine(h, true));
        row(
            reps,
            &format!("`LayerNorm::normalize` (f32 → f32), H {h}, {place}"),
            "copy",
            || ln.normalize(x, Some(&g), Some(&b), &mut out.borrow_mut()[..rows * h]),
            copy,
        );
        for (name, layout) in layouts(len, h) {
            let x = &xs[..layout.len()];
            let n = layout.len();
            let (g, b) = (
                affine(layout.channels(), false),
                affine(layout.channels(), true),
            );
            let (g, b) = (Some(&g[..]), Some(&b[..]));
            let stats = BatchStats::<f32>::compute(x, layout).expect("valid");
            let at = format!("{name}, H {h}, f32 → f32, {place}");
            row(
                reps,
                &format!("`BatchStats::normalize` (given statistics), {at}"),
                "copy",
                || stats.normalize(x, layout, 1e-5, g, b, &mut out.borrow_mut()[..n]),
                copy,
            );
            row(
                reps,
                &format!("`BatchNorm::normalize`, {at}"),
                "copy",
                || BatchNorm::<f32>::new().normalize(x, layout, g, b, &mut out.borrow_mut()[..n]),
                copy,
            );
            row(
                reps,
                &format!("`InstanceNorm::normalize`, {at}"),
                "copy",
                || {
                    InstanceNorm::<f32>::new().normalize(
                        x,
                        layout,
                        g,
                        b,
                        &mut out.borrow_mut()[..n],
                    )
                },
                copy,
            );
            let gn = GroupNorm::<f32>::new(32).expect("valid");
            row(
                reps,
                &format!("`GroupNorm::normalize` (32 groups), {at}"),
                "copy",
                || gn.normalize(x, layout, g, b, &mut out.borrow_mut()[..n]),
                copy,
            );
        }
    }
}

/// The section: from memory (64 MiB by default, `MOMENTA_ROOFLINE_NORM_LOG2`
/// bytes) and in cache (256 KiB, a hundred times the alternations).
pub(super) fn norms(reps: u32) {
    let bytes = 1usize << env("MOMENTA_ROOFLINE_NORM_LOG2", 26);
    let cached = 1usize << 18;
    let mib = bytes >> 20;
    let (avx_big, plain_big, avx2_big) = faster_copy::<f32>(reps, bytes / 4);
    let (avx_small, plain_small, avx2_small) = faster_copy::<f32>(100 * reps, cached / 4);
    println!(
        "\nnormalization layers, thread CPU time; copy of {mib} MiB: copy_from_slice {:.3} ms, AVX2 loop {:.3} ms; of 256 KiB: {:.1} µs, {:.1} µs\n",
        plain_big.as_secs_f64() * 1e3,
        avx2_big.as_secs_f64() * 1e3,
        plain_small.as_secs_f64() * 1e6,
        avx2_small.as_secs_f64() * 1e6,
    );
    println!("| path | against | ratio (> 1: faster) | kernel | roofline |");
    println!("|---|---|---:|---:|---:|");
    let big = format!("{mib} MiB");
    rows_of::<f32>(reps, bytes, &big, avx_big);
    rows_of::<f16>(reps, bytes, &big, avx_big);
    native_rows(reps, bytes, &big, avx_big);
    rows_of::<f32>(100 * reps, cached, "256 KiB", avx_small);
    rows_of::<f16>(100 * reps, cached, "256 KiB", avx_small);
    native_rows(100 * reps, cached, "256 KiB", avx_small);
}
