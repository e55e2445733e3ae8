//! The architecture layer: CPU feature detection, the routing of every
//! kernel call to its compiled version, and the versions themselves — the
//! portable loops in [`portable`], the x86-64 ones in `x86_64` (the same
//! layout as memchr's `arch`).
//!
//! A default build targets baseline x86-64 (SSE2, no FMA), where
//! `f64::mul_add` is a library call. The AVX2/FMA kernels are compiled for
//! those features with `#[target_feature]` and chosen at run time when the
//! CPU has them. The decision is made once and cached. Without `std` there
//! is no feature detection, and the portable kernels run (unless the build
//! itself already targets AVX2 and FMA, in which case they are the same
//! code compiled for those features).
//!
//! `unsafe` code lives here (the calls into the AVX2 versions, whose only
//! precondition is the CPU check [`Path::Avx2Fma`] stands for) and in
//! `x86_64`; the rest of the crate denies it.

#![allow(
    unsafe_code,
    reason = "the routing calls the `#[target_feature]` kernels"
)]

pub(super) mod portable;
#[cfg(target_arch = "x86_64")]
mod x86_64;

use crate::kernels::affine_params::{Affine, Pass, PerValue};
use crate::{Element, Float};

/// Which compiled version of the kernels to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    /// Plain Rust for the build's target features; always available.
    Portable,
    /// Compiled with AVX2, FMA and F16C enabled.
    ///
    /// Invariant: a value of this variant only exists after [`detect`] has
    /// found the three features on the running CPU; the kernels rely on it.
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    Avx2Fma,
}

/// The fastest path this CPU supports.
#[inline]
pub(crate) fn detect() -> Path {
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    {
        use core::sync::atomic::{AtomicU8, Ordering};
        const UNKNOWN: u8 = 0;
        const PORTABLE: u8 = 1;
        const AVX2_FMA: u8 = 2;
        static CACHE: AtomicU8 = AtomicU8::new(UNKNOWN);
        match CACHE.load(Ordering::Relaxed) {
            PORTABLE => Path::Portable,
            AVX2_FMA => Path::Avx2Fma,
            _ => {
                let fast = std::is_x86_feature_detected!("avx2")
                    && std::is_x86_feature_detected!("fma")
                    && std::is_x86_feature_detected!("f16c");
                x86_64::choose_tuning();
                CACHE.store(if fast { AVX2_FMA } else { PORTABLE }, Ordering::Relaxed);
                if fast { Path::Avx2Fma } else { Path::Portable }
            }
        }
    }
    #[cfg(not(all(feature = "std", target_arch = "x86_64")))]
    {
        Path::Portable
    }
}

/// Asks for the cache line holding `p`, for a loop that reads one stream
/// or, with `SEVERAL`, several side by side (see `x86_64::prefetch_line`): a
/// hint that never faults, whatever the address; a no-op off x86-64.
#[inline(always)]
#[allow(clippy::inline_always, reason = "a hint inside the hot loops")]
pub(super) fn prefetch<const SEVERAL: bool, T>(p: *const T) {
    if prefetching() {
        prefetch_line::<SEVERAL, T>(p);
    }
}

/// Whether the kernels prefetch on this CPU: read once at the head of a
/// loop that asks for many lines, which then calls [`prefetch_line`]
/// (always false off x86-64).
#[inline(always)]
#[allow(clippy::inline_always, reason = "read at the head of the hot loops")]
pub(crate) fn prefetching() -> bool {
    #[cfg(target_arch = "x86_64")]
    return x86_64::prefetching();
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// [`prefetch`] without asking [`prefetching`]: for a loop that asked once.
#[inline(always)]
#[allow(clippy::inline_always, reason = "a hint inside the hot loops")]
pub(crate) fn prefetch_line<const SEVERAL: bool, T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    x86_64::prefetch_line::<SEVERAL, T>(p);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// `v` as an `i64` when it is an integer in the `i64` range (`−2^63` to
/// `2^63 − 1`), else `None` (a fraction, a value out of range, a NaN or
/// an infinity): the exact sums' fast route, one truncating conversion
/// and one back.
///
/// On x86-64 the conversion is the instruction itself, which gives
/// `i64::MIN` for every value out of range, and `i64::MIN` converts back
/// to `−2^63` only; Rust's `as` adds a saturation to `i64::MAX` and a NaN
/// test that the check makes needless, about seven instructions on each
/// row of a `GROUP BY`.
#[inline(always)]
#[allow(clippy::inline_always, reason = "inside the exact sums' hot loops")]
pub(crate) fn exact_i64(v: f64) -> Option<i64> {
    if_exact(truncate_i64(v), v)
}

/// Whether `v` is an integer with `1 ≤ |v| < limit`, for `limit` a power
/// of two no larger than `2^63` (the integer is then [`truncate_i64`]'s);
/// `false` for a zero, a fraction, a value out of range, a NaN or an
/// infinity. The test of the grouped pairs' fast route
/// (`GroupedCoSums`).
///
/// It stays in floating point: from `2^52` on every `f64` is an integer,
/// and below it adding `2^52` rounds to an integer (the spacing there is
/// one) that subtracting `2^52` returns exactly, so `|v|` comes back
/// unchanged when it is an integer only. [`exact_i64`] converts `v` to an
/// integer and back instead, a longer chain (two conversions and a move
/// between register files) before the row's branch. For a pair the
/// compiler runs this test on both values side by side in one register:
/// a `GROUP BY` loop of pairs by 10³ groups took 0.90–0.91 of its time
/// with it. For one value the conversion stays, as it was faster: the
/// loop of [`ExactSums`](crate::ExactSums) took 1.09–1.20 of its time
/// with this test (medians of 12 alternated runs, AMD EPYC 7003 guest).
#[inline(always)]
#[allow(
    clippy::inline_always,
    clippy::float_cmp,
    clippy::needless_bitwise_bool,
    reason = "an exactness test inside the exact sums' hot loops, with no branch"
)]
pub(crate) fn is_whole_below(v: f64, limit: f64) -> bool {
    let a = v.abs();
    // x87 arithmetic (32-bit x86 without SSE2) keeps 64-bit mantissas in
    // its registers, where adding 2^52 rounds nothing: convert instead.
    #[cfg(all(target_arch = "x86", not(target_feature = "sse2")))]
    #[allow(clippy::cast_precision_loss, reason = "converted back to compare")]
    let whole = truncate_i64(v) as f64 == v;
    #[cfg(not(all(target_arch = "x86", not(target_feature = "sse2"))))]
    let whole = {
        const TWO_52: f64 = 4_503_599_627_370_496.0;
        (a >= TWO_52) | (a + TWO_52 - TWO_52 == a)
    };
    (a >= 1.0) & (a < limit) & whole
}

/// `trunc(v)` when it is in the `i64` range; else an integer that
/// converts back to something other than `v` (one instruction on
/// x86-64), for a caller that tests the exactness its own way.
#[inline(always)]
#[allow(clippy::inline_always, reason = "inside the exact sums' hot loops")]
pub(crate) fn truncate_i64(v: f64) -> i64 {
    #[cfg(target_arch = "x86_64")]
    let i = x86_64::truncate(v);
    #[cfg(not(target_arch = "x86_64"))]
    let i = truncate(v);
    i
}

/// `i` when it converts back to `v`.
#[inline(always)]
#[allow(clippy::inline_always, reason = "inside the exact sums' hot loops")]
fn if_exact(i: i64, v: f64) -> Option<i64> {
    #[allow(
        clippy::cast_precision_loss,
        clippy::float_cmp,
        reason = "exactness test"
    )]
    (i as f64 == v).then_some(i)
}

/// `trunc(v)` when it is in the `i64` range; else an integer that
/// converts back to something other than `v` (the portable conversion
/// for [`exact_i64`]).
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline]
fn truncate(v: f64) -> i64 {
    #[allow(clippy::cast_possible_truncation, reason = "checked by the caller")]
    match v as i64 {
        // Saturated from 2^63 or more (`i64::MAX` converts back to 2^63,
        // 0 to 0, which is not such a `v`).
        i64::MAX => 0,
        i => i,
    }
}

/// `f` of each piece of [`PIECE`] values of `xs` and `ys` (side by side),
/// the sums added: the portable loops' flush, which keeps each of their
/// lanes to a few hundred values as `x86_64::streams` does the AVX2
/// loops'.
#[inline]
fn by_pieces<S, const N: usize>(
    xs: &[S],
    ys: &[S],
    f: impl Fn(&[S], &[S]) -> [f64; N],
) -> [f64; N] {
    let mut total = [0.0; N];
    for (x, y) in xs.chunks(PIECE).zip(ys.chunks(PIECE)) {
        for (t, v) in total.iter_mut().zip(f(x, y)) {
            *t += v;
        }
    }
    total
}

/// Values per piece of [`by_pieces`]: what the AVX2 loops take between
/// two flushes.
const PIECE: usize = portable::FLUSH_CHUNKS * 16;

/// Asks for the first lines of the streams [`shifted_sums`] will read
/// `xs` in (see `x86_64::streams::warm`), for a loop over runs to call a
/// run ahead. On the Intel Xeon, channels-first statistics of 128×128
/// images ran 4–6 % faster for it (the same code with and without,
/// alternated); slices, whose blocks are longer, ran as fast either way.
#[inline]
pub(crate) fn warm<S>(path: Path, xs: &[S]) {
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    if path == Path::Avx2Fma {
        let chunk = 16 * core::mem::size_of::<S>();
        x86_64::streams::warm::<4>(xs.as_ptr().cast(), xs.len() / 16, chunk);
    }
    let _ = (path, xs);
}

/// [`warm`] for [`shifted_pair_sums`] of `xs` and `ys` (the backward
/// pass's channels-first sums ran 3 % faster for it).
#[inline]
pub(crate) fn warm_pairs<S>(path: Path, xs: &[S], ys: &[S]) {
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    if path == Path::Avx2Fma {
        let chunk = 16 * core::mem::size_of::<S>();
        let n = xs.len().min(ys.len()) / 16;
        x86_64::streams::warm::<2>(xs.as_ptr().cast(), n, chunk);
        x86_64::streams::warm::<2>(ys.as_ptr().cast(), n, chunk);
    }
    let _ = (path, xs, ys);
}

/// `(Σ (x − k), Σ (x − k)²)` over `xs`.
#[inline]
pub(crate) fn shifted_sums<S: Element>(path: Path, xs: &[S], k: f64) -> (f64, f64) {
    match path {
        Path::Portable => {
            let [s, q] = by_pieces(xs, xs, |x, _| {
                let (s, q) = portable::sums_body::<S, false>(x, k);
                [s, q]
            });
            (s, q)
        }
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        // SAFETY: `Path::Avx2Fma` exists only when `detect` found AVX2, FMA
        // and F16C on this CPU, which is all `x86_64::avx2::sums` requires.
        Path::Avx2Fma => unsafe { x86_64::avx2::sums(xs, k) },
    }
}

/// [`shifted_sums`] of every `run`-long chunk of `xs` about its first
/// value, into `s` and `q`; see [`portable::runs_body`]. The AVX2 loop
/// asks for the line `ahead` bytes on as it starts each line, when
/// `ahead` is not 0 (whatever [`prefetching`] says: the caller chose).
#[inline]
pub(crate) fn shifted_runs<S: Element>(
    path: Path,
    xs: &[S],
    run: usize,
    ahead: usize,
    s: &mut [f64],
    q: &mut [f64],
) {
    match path {
        Path::Portable => {
            let _ = ahead;
            portable::runs_body::<S, false>(xs, run, s, q);
        }
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        // SAFETY: `Path::Avx2Fma` exists only when `detect` found AVX2, FMA
        // and F16C on this CPU, which is all `x86_64::runs::runs` requires.
        Path::Avx2Fma => unsafe { x86_64::runs::runs(xs, run, ahead, s, q) },
    }
}

/// [`shifted_sums`] of every `run`-long chunk of `xs` about its first
/// value, into `s` and `q`, each as [`shifted_sums`] sums a slice of
/// `run` values (`run` under 8192, which the AVX2 loop reads as one
/// stream): the AVX2 loop takes four runs side by side, from the four
/// quarters of `xs`, and asks for the line `ahead` bytes on as it starts
/// each (when `ahead` is not 0).
#[inline]
pub(crate) fn shifted_long_runs<S: Element>(
    path: Path,
    xs: &[S],
    run: usize,
    ahead: usize,
    s: &mut [f64],
    q: &mut [f64],
) {
    match path {
        Path::Portable => {
            let _ = ahead;
            if run == 0 {
                return;
            }
            let rows = xs.chunks_exact(run).zip(s.iter_mut().zip(q.iter_mut()));
            for (x, (s, q)) in rows {
                let k = x.first().map_or(0.0, |k| k.widen());
                (*s, *q) = shifted_sums(path, x, k);
            }
        }
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        // SAFETY: `Path::Avx2Fma` exists only when `detect` found AVX2, FMA
        // and F16C on this CPU, which is all `x86_64::runs::long_runs`
        // requires.
        Path::Avx2Fma => unsafe { x86_64::runs::long_runs(xs, run, ahead, s, q) },
    }
}

/// `[Σdx, Σdy, Σdx², Σdy², Σdx·dy]` over the pairs of `xs` and `ys`, with
/// `dx = x − kx`, `dy = y − ky`; see [`portable::pair_sums_body`].
#[inline]
pub(crate) fn shifted_pair_sums<S: Element>(
    path: Path,
    xs: &[S],
    ys: &[S],
    kx: f64,
    ky: f64,
) -> [f64; 5] {
    match path {
        Path::Portable => by_pieces(xs, ys, |x, y| {
            portable::pair_sums_body::<S, false>(x, y, kx, ky)
        }),
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        // SAFETY: `Path::Avx2Fma` exists only when `detect` found AVX2, FMA
        // and F16C on this CPU, which is all `x86_64::avx2::pair_sums` requires.
        Path::Avx2Fma => unsafe { x86_64::avx2::pair_sums(xs, ys, kx, ky) },
    }
}

/// `[Σw, Σw·d, Σw·d², Σᵢ<ⱼ wᵢwⱼ, positive weights, NaN or negative
/// weights]` with `d = x − k`; see [`portable::weighted_sums_body`].
#[inline]
pub(crate) fn shifted_weighted_sums<S: Element>(
    path: Path,
    xs: &[S],
    ws: &[S],
    k: f64,
) -> [f64; 6] {
    match path {
        // `by_pieces`, with the pieces' sums over pairs joined.
        Path::Portable => xs
            .chunks(PIECE)
            .zip(ws.chunks(PIECE))
            .fold([0.0; 6], |total, (x, w)| {
                portable::join_weighted(total, portable::weighted_sums_body::<S, false>(x, w, k))
            }),
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        // SAFETY: `Path::Avx2Fma` exists only when `detect` found AVX2, FMA
        // and F16C on this CPU, which is all `x86_64::avx2::weighted_sums`
        // requires.
        Path::Avx2Fma => unsafe { x86_64::avx2::weighted_sums(xs, ws, k) },
    }
}

/// `[Σd, Σd², Σd³, Σd⁴]` over `xs`, with `d = x − k`; without `FOURTH` the
/// last is 0.
#[inline]
pub(crate) fn power_sums<S: Element, const FOURTH: bool>(path: Path, xs: &[S], k: f64) -> [f64; 4] {
    match path {
        Path::Portable => by_pieces(xs, xs, |x, _| {
            portable::power_sums_body::<S, false, FOURTH, { portable::POWER_LANES }>(x, k)
        }),
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        // SAFETY: `Path::Avx2Fma` exists only when `detect` found AVX2, FMA
        // and F16C on this CPU, which is all `x86_64::avx2::power_sums` requires.
        Path::Avx2Fma => unsafe { x86_64::avx2::power_sums::<S, FOURTH>(xs, k) },
    }
}

/// `(min, max)` of `xs` as IEEE 754-2019 `minimum` and `maximum` define
/// them (−0.0 below +0.0), widened to `f64`: `(+∞, −∞)` when `xs` is
/// empty, `(NaN, NaN)` when it holds a NaN.
#[inline]
pub(crate) fn extremes<S: Float>(path: Path, xs: &[S]) -> (f64, f64) {
    match path {
        Path::Portable => portable::extremes_body::<S, 8, 16>(xs),
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        // SAFETY: `Path::Avx2Fma` exists only when `detect` found AVX2, FMA
        // and F16C on this CPU, which is all `x86_64::avx2::extremes` requires.
        Path::Avx2Fma => unsafe { x86_64::avx2::extremes(xs) },
    }
}

/// `MovingStats`' mean series over a run of values on one grid (see
/// `kernels::exact_mean`), compiled for the CPU: with AVX2 and
/// FMA its loops run four lanes wide and its fused multiply-add is one
/// instruction (on baseline x86-64, a library call).
#[inline]
pub(crate) fn exact_mean_run<F: Float>(
    path: Path,
    older: &[F],
    newer: &[F],
    xs: &[F],
    out: &mut [F],
) -> usize {
    match path {
        Path::Portable => {
            use crate::kernels::exact_mean::{Chunks, run};
            run(older, newer, xs, out, &Chunks)
        }
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        // SAFETY: `Path::Avx2Fma` exists only when `detect` found AVX2, FMA
        // and F16C on this CPU, which is all `x86_64::series::exact_mean_run`
        // requires.
        Path::Avx2Fma => unsafe { x86_64::series::exact_mean_run(older, newer, xs, out) },
    }
}

/// `exact_arith::checked_quotient` (one correctly rounded read of exact
/// sums), with its residual by a fused multiply-add where the CPU has one:
/// a shorter chain than Dekker's product, which a read after every push
/// waits on (see `x86_64::series::checked_quotient`).
#[inline]
pub(crate) fn checked_quotient(path: Path, a: f64, b: f64, d: f64, inv_d: f64) -> f64 {
    match path {
        Path::Portable => crate::kernels::exact_arith::checked_quotient::<false>(a, b, d, inv_d),
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        // SAFETY: `Path::Avx2Fma` exists only when `detect` found AVX2, FMA
        // and F16C on this CPU, which is all `x86_64::series::checked_quotient`
        // requires.
        Path::Avx2Fma => unsafe { x86_64::series::checked_quotient(a, b, d, inv_d) },
    }
}

/// Whether [`sorted_replace_run`] keeps a window of `window` keys in
/// registers on `path`.
#[inline]
#[cfg_attr(
    not(all(feature = "std", target_arch = "x86_64")),
    expect(unused_variables, reason = "only the AVX2 path reads the window")
)]
pub(crate) fn sorts_in_registers(path: Path, window: usize) -> bool {
    match path {
        Path::Portable => false,
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        Path::Avx2Fma => window <= x86_64::sorted_window::MAX_WINDOW,
    }
}

/// The quantile series of a full window whose keys are kept sorted
/// (`windows::series::sorted::replace_loop`), compiled for the CPU: with
/// AVX2, windows of up to 48 keys are kept in registers and each push
/// replaces a key with no branch on the data
/// (`x86_64::sorted_window`); longer windows, and other CPUs, take the
/// loop.
#[inline]
pub(crate) fn sorted_replace_run<F: Float>(
    path: Path,
    sorted: &mut [i64],
    olds: &[F],
    news: &[F],
    rank: (usize, f64),
    out: &mut [F],
) {
    match path {
        Path::Portable => {
            crate::kernels::sorted_keys::replace_loop(sorted, olds, news, rank, out);
        }
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        // SAFETY: `Path::Avx2Fma` exists only when `detect` found AVX2, FMA
        // and F16C on this CPU, which is all
        // `x86_64::sorted_window::replace_run` requires.
        Path::Avx2Fma => unsafe {
            x86_64::sorted_window::replace_run(sorted, olds, news, rank, out);
        },
    }
}

/// `MovingStats`' variance series over a run of values on one grid (see
/// `kernels::exact_var`), compiled for the CPU: with AVX2 and FMA
/// its element-wise loops run four lanes wide and its fused multiply-add
/// is one instruction.
#[inline]
pub(crate) fn exact_var_run<F: Float>(
    path: Path,
    older: &[F],
    newer: &[F],
    xs: &[F],
    out: &mut [F],
    spread: crate::kernels::exact_var::Spread,
) -> usize {
    match path {
        Path::Portable => crate::kernels::exact_var::run(older, newer, xs, out, spread),
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        // SAFETY: `Path::Avx2Fma` exists only when `detect` found AVX2, FMA
        // and F16C on this CPU, which is all `x86_64::series::exact_var_run`
        // requires.
        Path::Avx2Fma => unsafe { x86_64::series::exact_var_run(older, newer, xs, out, spread) },
    }
}

/// Lane-wise shifted sums across the rows of `slab`; see [`portable::rows_body`].
#[inline]
pub(crate) fn shifted_rows<S: Element>(
    path: Path,
    slab: &[S],
    stride: usize,
    start: usize,
    shift: &[f64],
    s: &mut [f64],
    q: &mut [f64],
) {
    match path {
        Path::Portable => portable::rows_body::<S, false>(slab, stride, start, shift, s, q),
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        // SAFETY: `Path::Avx2Fma` exists only when `detect` found AVX2, FMA
        // and F16C on this CPU, which is all `x86_64::avx2::rows` requires.
        Path::Avx2Fma => unsafe { x86_64::avx2::rows(slab, stride, start, shift, s, q) },
    }
}

/// Per-lane `Σdy` and `Σdy·(x − centre)` across rows; see
/// [`portable::grad_rows_body`].
#[inline]
#[allow(clippy::too_many_arguments, reason = "the loop's slices and geometry")]
pub(crate) fn grad_rows<S: Element>(
    path: Path,
    xs: &[S],
    dys: &[S],
    stride: usize,
    start: usize,
    centre: &[f64],
    sum_dy: &mut [f64],
    sum_dyx: &mut [f64],
) {
    match path {
        Path::Portable => {
            portable::grad_rows_body::<S, false>(xs, dys, stride, start, centre, sum_dy, sum_dyx);
        }
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        // SAFETY: `Path::Avx2Fma` exists only when `detect` found AVX2, FMA
        // and F16C on this CPU, which is all `x86_64::avx2::grad_rows`
        // requires.
        Path::Avx2Fma => unsafe {
            x86_64::avx2::grad_rows(xs, dys, stride, start, centre, sum_dy, sum_dyx);
        },
    }
}

/// The normalization pass over runs; see [`portable::affine_runs_body`].
/// The AVX2 loop writes past the caches and reads ahead as `pass` says
/// (the portable loop leaves both to the hardware).
#[inline]
pub(crate) fn affine_runs<S: Element, O: Element>(
    path: Path,
    xs: &[S],
    run: usize,
    params: Affine<'_>,
    per_value: PerValue<'_>,
    pass: Pass,
    out: &mut [O],
) {
    match path {
        Path::Portable => {
            let _ = pass;
            portable::affine_runs_body(xs, run, params, per_value, out);
        }
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        // SAFETY: `Path::Avx2Fma` exists only when `detect` found AVX2, FMA
        // and F16C on this CPU, which is all `x86_64::affine::runs` requires.
        Path::Avx2Fma => unsafe { x86_64::affine::runs(xs, run, params, per_value, pass, out) },
    }
}

/// The normalization pass over lanes; see [`portable::affine_lanes_body`]
/// (and [`affine_runs`] for `pass`).
#[inline]
pub(crate) fn affine_lanes<S: Element, O: Element>(
    path: Path,
    xs: &[S],
    params: Affine<'_>,
    pass: Pass,
    out: &mut [O],
) {
    match path {
        Path::Portable => {
            let _ = pass;
            portable::affine_lanes_body(xs, params, out);
        }
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        // SAFETY: `Path::Avx2Fma` exists only when `detect` found AVX2, FMA
        // and F16C on this CPU, which is all `x86_64::affine::lanes` requires.
        Path::Avx2Fma => unsafe { x86_64::affine::lanes(xs, params, pass, out) },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_i64_takes_the_integers_of_the_i64_range_only() {
        let two63 = 9_223_372_036_854_775_808.0;
        let cases = [
            (0.0, Some(0)),
            (-0.0, Some(0)),
            (1.0, Some(1)),
            (-3.0, Some(-3)),
            (4_503_599_627_370_497.0, Some(4_503_599_627_370_497)),
            (-two63, Some(i64::MIN)),
            // The largest float below 2^63.
            (two63 - 1024.0, Some(i64::MAX - 1023)),
            (0.5, None),
            (-2.5, None),
            (1e-300, None),
            (two63, None),
            (-two63 - 2048.0, None),
            (1e300, None),
            (-1e300, None),
            (f64::NAN, None),
            (f64::INFINITY, None),
            (f64::NEG_INFINITY, None),
        ];
        for (v, want) in cases {
            assert_eq!(exact_i64(v), want, "{v:e}");
            assert_eq!(if_exact(truncate(v), v), want, "portable, {v:e}");
        }
    }

    #[test]
    fn whole_numbers_below_the_limit_only() {
        let two52 = 4_503_599_627_370_496.0;
        let two56 = 72_057_594_037_927_936.0;
        let two63 = 9_223_372_036_854_775_808.0;
        // (v, whole below 2^63, whole below 2^56)
        let cases = [
            (1.0, true, true),
            (-3.0, true, true),
            (two52 - 1.0, true, true),
            (-(two52 + 1.0), true, true),
            // The float just below 2^52 + 1/2 apart: a fraction.
            (two52 - 0.5, false, false),
            (0.5, false, false),
            (-2.5, false, false),
            (1.0 + f64::EPSILON, false, false),
            (two56 - 8.0, true, true),
            (-two56, true, false),
            // The largest float below 2^63.
            (two63 - 1024.0, true, false),
            (two63, false, false),
            (-two63, false, false),
            // A zero is left to the caller, as are values that underflow.
            (0.0, false, false),
            (-0.0, false, false),
            (1e-300, false, false),
            (1e300, false, false),
            (f64::NAN, false, false),
            (f64::INFINITY, false, false),
            (f64::NEG_INFINITY, false, false),
        ];
        for (v, below63, below56) in cases {
            assert_eq!(is_whole_below(v, two63), below63, "{v:e} below 2^63");
            assert_eq!(is_whole_below(v, two56), below56, "{v:e} below 2^56");
            if below63 {
                #[allow(clippy::cast_precision_loss, reason = "whole values")]
                let back = truncate_i64(v) as f64;
                assert_eq!(back, v, "{v:e} truncated");
                assert_eq!(truncate(v), truncate_i64(v), "portable, {v:e}");
            }
        }
    }

    #[test]
    fn detection_is_stable() {
        assert_eq!(detect(), detect());
    }

    #[test]
    fn sums_match_a_plain_loop_on_every_path() {
        for n in [0, 1, 5, 15, 16, 17, 33, 100] {
            let xs: alloc::vec::Vec<f64> = (0..n).map(|i| f64::from(i * 7 % 11)).collect();
            let k = 3.0;
            let s: f64 = xs.iter().map(|x| x - k).sum();
            let q: f64 = xs.iter().map(|x| (x - k) * (x - k)).sum();
            for path in [Path::Portable, detect()] {
                // Small integers: every sum is exact in any order.
                assert_eq!(shifted_sums(path, &xs, k), (s, q), "n = {n}");
            }
        }
    }

    #[test]
    fn pair_sums_match_a_plain_loop_on_every_path() {
        for n in [0, 1, 3, 4, 5, 15, 16, 17, 100] {
            let xs: alloc::vec::Vec<f64> = (0..n).map(|i| f64::from(i * 7 % 11)).collect();
            let ys: alloc::vec::Vec<f64> = (0..n).map(|i| f64::from(i * 5 % 13)).collect();
            let (kx, ky) = (3.0, -2.0);
            let dx = || xs.iter().map(|x| x - kx);
            let dy = || ys.iter().map(|y| y - ky);
            let expected = [
                dx().sum::<f64>(),
                dy().sum(),
                dx().map(|d| d * d).sum(),
                dy().map(|d| d * d).sum(),
                dx().zip(dy()).map(|(a, b)| a * b).sum(),
            ];
            for path in [Path::Portable, detect()] {
                // Small integers: every sum is exact in any order.
                assert_eq!(
                    shifted_pair_sums(path, &xs, &ys, kx, ky),
                    expected,
                    "n = {n}"
                );
            }
        }
    }

    #[test]
    fn weighted_sums_match_a_plain_loop_on_every_path() {
        // Small integers: every sum is exact in any order.
        for n in [0_u32, 5, 16, 37, 100] {
            for bad_at in [None, Some(0), Some(n / 2), Some(n.saturating_sub(1))] {
                let xs: alloc::vec::Vec<f64> = (0..n).map(|i| f64::from(i % 9)).collect();
                let mut ws: alloc::vec::Vec<f64> = (0..n).map(|i| f64::from((i * 7) % 4)).collect();
                if let (Some(i), true) = (bad_at, n > 0) {
                    ws[i as usize] = if i % 2 == 0 { f64::NAN } else { -1.0 };
                }
                let k = 3.0;
                let mut e = [0.0; 6];
                for (&x, &w) in xs.iter().zip(&ws) {
                    let d = x - k;
                    e[3] += e[0] * w;
                    e[0] += w;
                    e[1] += w * d;
                    e[2] += w * d * d;
                    e[4] += if w > 0.0 { 1.0 } else { 0.0 };
                    e[5] += if w >= 0.0 { 0.0 } else { 1.0 };
                }
                for path in [Path::Portable, detect()] {
                    let got = shifted_weighted_sums(path, &xs, &ws, k);
                    let bad = bad_at.is_some() && n > 0;
                    assert_eq!(got[5] > 0.0, bad, "n = {n}, {path:?}");
                    if !bad {
                        assert_eq!(got, e, "n = {n}, {path:?}");
                    }
                    assert_eq!(got[4], e[4], "n = {n}, {path:?}");
                }
            }
        }
    }

    #[test]
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    fn the_avx512_rows_are_the_avx2_rows_bit_for_bit() {
        // Values over many binades: the sums round, so a different order
        // or contraction would show. Both builds give the same bits, so
        // switching between them under other tests changes nothing.
        if detect() != Path::Avx2Fma {
            return;
        }
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let slab: alloc::vec::Vec<f32> = (0..203 * 67)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let e = i32::try_from(x % 40).unwrap_or(0) - 20;
                2f32.powi(e) * (1.0 + (x >> 40) as f32 / 16_777_216.0)
            })
            .collect();
        let shift: alloc::vec::Vec<f64> = (0..61).map(|i| f64::from(i) * 0.37).collect();
        let run = |wide: bool| {
            let available = x86_64::set_wide(wide);
            let (mut s, mut q) = ([0.0; 61], [0.0; 61]);
            shifted_rows(Path::Avx2Fma, &slab, 67, 3, &shift, &mut s, &mut q);
            (available, s, q)
        };
        let (_, s2, q2) = run(false);
        let (available, s5, q5) = run(true);
        x86_64::choose_tuning();
        if available {
            assert_eq!(s2.map(f64::to_bits), s5.map(f64::to_bits));
            assert_eq!(q2.map(f64::to_bits), q5.map(f64::to_bits));
        }
        // And the portable loop groups the rows the same way.
        let (mut s, mut q) = ([0.0; 61], [0.0; 61]);
        shifted_rows(Path::Portable, &slab, 67, 3, &shift, &mut s, &mut q);
        for (a, b) in s.iter().zip(&s2).chain(q.iter().zip(&q2)) {
            assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} {b}");
        }
    }

    #[test]
    #[cfg(all(feature = "std", feature = "half", target_arch = "x86_64"))]
    fn every_build_of_the_half_weighted_loop_counts_and_rejects_weights_as_they_are() {
        // The count of positive weights and whether one is NaN or
        // negative, against a naive count, in both builds: weights placed
        // in the chunks (not the tail), among them a negative and a NaN in
        // the same lane one after the other, zeros of both signs, a
        // subnormal (of each sign) and +∞.
        if detect() != Path::Avx2Fma {
            return;
        }
        let n = 16 * 70 + 7;
        let patterns: [&[(usize, f32)]; 7] = [
            &[],
            &[(37, f32::NAN)],
            &[(37, -1.0)],
            &[(5, -1.0), (13, f32::NAN)],
            &[(5, f32::NAN), (13, -1.0), (600, f32::NAN)],
            &[(900, -6.0e-8)],
            &[(1, f32::INFINITY), (2, 6.0e-8), (3, -0.0)],
        ];
        let xs: alloc::vec::Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 3.0).collect();
        for pattern in patterns {
            // Mostly positive weights, every tenth a zero of either sign.
            let mut ws: alloc::vec::Vec<f32> = (0..n)
                .map(|i| match i % 10 {
                    0 => 0.0,
                    5 => -0.0,
                    _ => 0.5 + (i % 3) as f32,
                })
                .collect();
            for &(at, w) in pattern {
                ws[at] = w;
            }
            let positive = ws.iter().filter(|&&w| w > 0.0).count() as f64;
            let bad = ws.iter().any(|&w| w.is_nan() || w < 0.0);
            let h = |v: &[f32]| -> alloc::vec::Vec<half::f16> {
                v.iter().map(|&x| half::f16::from_f32(x)).collect()
            };
            let b = |v: &[f32]| -> alloc::vec::Vec<half::bf16> {
                v.iter().map(|&x| half::bf16::from_f32(x)).collect()
            };
            for wide in [false, true] {
                x86_64::set_wide(wide);
                for sums in [
                    shifted_weighted_sums(Path::Avx2Fma, &h(&xs), &h(&ws), 0.25),
                    shifted_weighted_sums(Path::Avx2Fma, &b(&xs), &b(&ws), 0.25),
                ] {
                    assert_eq!(sums[4], positive, "{pattern:?}, wide {wide}");
                    assert_eq!(sums[5] > 0.0, bad, "{pattern:?}, wide {wide}");
                }
            }
        }
        x86_64::choose_tuning();
    }

    #[test]
    #[cfg(all(feature = "std", feature = "half", target_arch = "x86_64"))]
    fn the_avx512_half_loops_are_the_avx2_ones_bit_for_bit() {
        // Values of a few binades about shifts that no half-precision value
        // equals, so that the deviations carry all 53 bits and their
        // squares round (a multiply and an add in place of the multiply-add
        // would show), with a subnormal, zeros of both signs and a length
        // that leaves a tail and reads four streams, with flushes.
        if detect() != Path::Avx2Fma {
            return;
        }
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let values: alloc::vec::Vec<f32> = (0..17_411)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let e = i32::try_from(x % 3).unwrap_or(0) - 1;
                let v = 2f32.powi(e) * (1.0 + (x >> 40) as f32 / 16_777_216.0);
                match i % 97 {
                    0 => 0.0,
                    1 => -0.0,
                    2 => 3.0e-7,
                    _ if x.is_multiple_of(3) => -v,
                    _ => v,
                }
            })
            .collect();
        let h: alloc::vec::Vec<half::f16> =
            values.iter().map(|&v| half::f16::from_f32(v)).collect();
        let b: alloc::vec::Vec<half::bf16> =
            values.iter().map(|&v| half::bf16::from_f32(v)).collect();
        // Pairs: each slice against itself reversed.
        let (hr, br): (alloc::vec::Vec<_>, alloc::vec::Vec<_>) = (
            h.iter().rev().copied().collect(),
            b.iter().rev().copied().collect(),
        );
        let run = |wide: bool| {
            let available = x86_64::set_wide(wide);
            let sums = [
                shifted_sums(Path::Avx2Fma, &h, 0.1),
                shifted_sums(Path::Avx2Fma, &b, -0.3),
            ];
            let pairs = [
                shifted_pair_sums(Path::Avx2Fma, &h, &hr, 0.1, -0.2),
                shifted_pair_sums(Path::Avx2Fma, &b, &br, -0.3, 0.7),
            ];
            // Weighted, the reversed slice (negative values and all) as
            // the weights.
            let weighted = [
                shifted_weighted_sums(Path::Avx2Fma, &h, &hr, 0.1),
                shifted_weighted_sums(Path::Avx2Fma, &b, &br, -0.3),
            ];
            (available, sums, pairs, weighted)
        };
        let (_, narrow, narrow_pairs, narrow_weighted) = run(false);
        let (available, wide, wide_pairs, wide_weighted) = run(true);
        x86_64::choose_tuning();
        if available {
            for ((s2, q2), (s5, q5)) in narrow.iter().zip(&wide) {
                assert_eq!((s2.to_bits(), q2.to_bits()), (s5.to_bits(), q5.to_bits()));
            }
            for (p2, p5) in narrow_pairs.iter().zip(&wide_pairs) {
                assert_eq!(p2.map(f64::to_bits), p5.map(f64::to_bits));
            }
            for (w2, w5) in narrow_weighted.iter().zip(&wide_weighted) {
                assert_eq!(w2.map(f64::to_bits), w5.map(f64::to_bits));
            }
        }
        // Against a naive sum of the widened values, to the size of its
        // own rounding (n·ε of the sum of magnitudes).
        let hw: alloc::vec::Vec<f64> = h.iter().map(|v| v.to_f64() - 0.1).collect();
        let (s, q) = (
            hw.iter().sum::<f64>(),
            hw.iter().map(|d| d * d).sum::<f64>(),
        );
        let size = hw.iter().map(|d| d.abs()).sum::<f64>();
        let (s2, q2) = narrow[0];
        assert!((s - s2).abs() <= 1e-12 * size, "{s} {s2}");
        assert!((q - q2).abs() <= 1e-12 * q, "{q} {q2}");
    }

    #[test]
    #[cfg(all(feature = "std", feature = "half", target_arch = "x86_64"))]
    fn half_rows_are_the_rows_of_their_widening_in_every_shape() {
        // The F16C step against the `f32` loop over the widened slab, bit
        // for bit: every row count from none to past two quads, widths
        // with and without a partial step, an offset into longer rows, and
        // both builds of the lanes loop.
        if detect() != Path::Avx2Fma {
            return;
        }
        let mut x = 0x5851_f42d_4c95_7f2d_u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            half::f16::from_f32(((x >> 40) as f32 / 16_777_216.0 - 0.3) * 5.0)
        };
        for wide in [false, true] {
            x86_64::set_wide(wide);
            for width in [1, 5, 16, 17, 37, 64] {
                for (start, pad) in [(0, 0), (3, 2)] {
                    let stride = start + width + pad;
                    for rows in [0, 1, 3, 4, 5, 8, 11, 33] {
                        let slab: alloc::vec::Vec<half::f16> =
                            (0..rows * stride).map(|_| next()).collect();
                        let wide_slab: alloc::vec::Vec<f32> =
                            slab.iter().map(|h| h.to_f32()).collect();
                        let shift: alloc::vec::Vec<f64> =
                            (0..width).map(|i| 0.1 * f64::from(i as u32)).collect();
                        let run = |f: &dyn Fn(&mut [f64], &mut [f64])| {
                            let (mut s, mut q) = (alloc::vec![0.0; width], alloc::vec![0.0; width]);
                            f(&mut s, &mut q);
                            (s, q)
                        };
                        let got = run(&|s, q| {
                            shifted_rows(Path::Avx2Fma, &slab, stride, start, &shift, s, q);
                        });
                        let want = run(&|s, q| {
                            shifted_rows(Path::Avx2Fma, &wide_slab, stride, start, &shift, s, q);
                        });
                        let bits = |v: &[f64]| {
                            v.iter()
                                .map(|x| x.to_bits())
                                .collect::<alloc::vec::Vec<_>>()
                        };
                        assert_eq!(
                            (bits(&got.0), bits(&got.1)),
                            (bits(&want.0), bits(&want.1)),
                            "width {width}, start {start}, rows {rows}, wide {wide}"
                        );
                    }
                }
            }
        }
        x86_64::choose_tuning();
    }

    /// `shifted_runs` of `xs` on `path`, or (`None`) by the portable body
    /// with multiply-adds, which the AVX2 loop has always matched.
    fn run_sums<S: Element>(
        path: Option<Path>,
        xs: &[S],
        run: usize,
    ) -> (alloc::vec::Vec<u64>, alloc::vec::Vec<u64>) {
        let rows = xs.len().checked_div(run).unwrap_or(0);
        let (mut s, mut q) = (alloc::vec![-1.0; rows], alloc::vec![-1.0; rows]);
        match path {
            Some(path) => shifted_runs(path, xs, run, 256, &mut s, &mut q),
            None => portable::runs_body::<S, true>(xs, run, &mut s, &mut q),
        }
        (
            s.iter().map(|v| v.to_bits()).collect(),
            q.iter().map(|v| v.to_bits()).collect(),
        )
    }

    /// Runs of every length from 1 to 40 and a few longer, an odd and an
    /// even number of them and a partial one at the end, of values over
    /// many binades (the sums round, so another order would show), with
    /// zeros of both signs, ±∞ and NaN in some runs: the AVX2 loop gives
    /// the bits of the portable body with multiply-adds, as before it read
    /// two runs at a time.
    fn runs_agree<S: Element>() {
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        for run in (1..=40).chain([63, 64, 65, 127, 200, 255]) {
            for rows in [1, 2, 3, 6, 7] {
                let xs: alloc::vec::Vec<S> = (0..rows * run + run / 2)
                    .map(|i| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let e = i32::try_from(x % 24).unwrap_or(0) - 12;
                        let v = 2f64.powi(e) * (1.0 + (x >> 40) as f64 / 16_777_216.0);
                        S::narrow(match (i * 7 + run) % 97 {
                            0 => -0.0,
                            1 => 0.0,
                            2 if run % 3 == 0 => f64::INFINITY,
                            3 if run % 4 == 0 => f64::NAN,
                            _ if x.is_multiple_of(3) => -v,
                            _ => 40.0 + v,
                        })
                    })
                    .collect();
                let want = run_sums(None, &xs, run);
                if detect() != Path::Portable {
                    assert_eq!(
                        run_sums(Some(detect()), &xs, run),
                        want,
                        "run {run}, rows {rows}"
                    );
                }
                // The portable path rounds each square: close, not equal.
                let (s, q) = run_sums(Some(Path::Portable), &xs, run);
                assert_eq!(s, want.0, "run {run}, rows {rows}");
                assert_eq!(q.len(), want.1.len());
            }
        }
    }

    /// Runs of 256 to 8191 values, one to nine of them, as
    /// [`runs_agree`]'s data: four at a time, each run's sums are its own
    /// `shifted_sums`, bit for bit, on every path.
    fn long_runs_agree<S: Element>() {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        for run in [256, 257, 300, 768, 1023, 4096, 4111, 8191] {
            for rows in [1, 2, 4, 5, 9] {
                let xs: alloc::vec::Vec<S> = (0..rows * run + 7)
                    .map(|i| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let e = i32::try_from(x % 24).unwrap_or(0) - 12;
                        let v = 2f64.powi(e) * (1.0 + (x >> 40) as f64 / 16_777_216.0);
                        S::narrow(match (i * 7 + run) % 997 {
                            0 => -0.0,
                            2 if run % 3 == 0 => f64::INFINITY,
                            3 if run % 4 == 0 => f64::NAN,
                            _ if x.is_multiple_of(3) => -v,
                            _ => 40.0 + v,
                        })
                    })
                    .collect();
                for path in [Path::Portable, detect()] {
                    let (mut s, mut q) = (alloc::vec![-1.0; rows], alloc::vec![-1.0; rows]);
                    shifted_long_runs(path, &xs, run, 4096, &mut s, &mut q);
                    for (r, (s, q)) in s.iter().zip(&q).enumerate() {
                        let row = &xs[r * run..(r + 1) * run];
                        let (ws, wq) = shifted_sums(path, row, row[0].widen());
                        assert_eq!(
                            (s.to_bits(), q.to_bits()),
                            (ws.to_bits(), wq.to_bits()),
                            "run {run}, rows {rows}, row {r}, {path:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn long_runs_are_each_runs_own_sums_bit_for_bit() {
        long_runs_agree::<f32>();
        long_runs_agree::<f64>();
        #[cfg(feature = "half")]
        {
            long_runs_agree::<half::f16>();
            long_runs_agree::<half::bf16>();
        }
    }

    #[test]
    fn runs_are_the_fused_portable_runs_bit_for_bit() {
        runs_agree::<f32>();
        runs_agree::<f64>();
        #[cfg(feature = "half")]
        {
            runs_agree::<half::f16>();
            runs_agree::<half::bf16>();
        }
    }

    #[test]
    fn rows_accumulate_lane_by_lane() {
        // 3 rows of stride 5; lanes 1..4.
        let slab: alloc::vec::Vec<f32> = (0..15).map(|i| i as f32).collect();
        for path in [Path::Portable, detect()] {
            let mut s = [0.0; 3];
            let mut q = [0.0; 3];
            shifted_rows(path, &slab, 5, 1, &[1.0, 2.0, 3.0], &mut s, &mut q);
            assert_eq!(s, [15.0, 15.0, 15.0]);
            assert_eq!(q, [125.0, 125.0, 125.0]);
        }
        // 9 rows: two groups of four and one left over.
        let slab: alloc::vec::Vec<f64> = (0..18).map(f64::from).collect();
        for path in [Path::Portable, detect()] {
            let (mut s, mut q) = ([0.0; 1], [0.0; 1]);
            shifted_rows(path, &slab, 2, 1, &[1.0], &mut s, &mut q);
            // Lane values 1, 3, ..., 17 minus 1: 0, 2, ..., 16.
            assert_eq!(s, [72.0]);
            assert_eq!(q, [(0..9).map(|i| f64::from(4 * i * i)).sum::<f64>()]);
        }
    }
}
