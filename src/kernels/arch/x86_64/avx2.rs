//! The AVX2/FMA kernels.
//!
//! The slice loop uses explicit intrinsics: LLVM's SLP vectoriser turns
//! generic lane arrays into a mix of 128-bit operations and spills, at half
//! the in-cache speed. Four 256-bit accumulators per sum (16 lanes) cover
//! the add and FMA latency. The lanes loop is the portable body compiled
//! for AVX2/FMA (the compiler vectorises its element-wise loop well on its
//! own).
//!
//! Every kernel here is `unsafe`: the caller must have checked that the CPU
//! has AVX2, FMA and F16C (`Path::Avx2Fma` is that proof; every CPU with
//! AVX2 has F16C, which converts half precision). Intrinsic calls sit in
//! `unsafe` blocks marked `allow(unused_unsafe)`: inside `target_feature`
//! functions the ones that only compute on registers are safe, the loads
//! and stores are not, and one block with one `SAFETY` comment covers a
//! loop of both.

#![allow(
    clippy::inline_always,
    reason = "the chunk loads must inline into the `#[target_feature]` functions"
)]

use super::streams::{streamed, streamed_pairs};
use crate::float::Elements;
#[cfg(feature = "half")]
use crate::float::f16_bits_to_f32;
#[cfg(feature = "half")]
use crate::kernels::arch::portable::array_chunks;
#[cfg(feature = "half")]
use crate::kernels::arch::portable::{
    GradStep, ROW_STEP, RowStep, grad_quad_step, grad_rows_body_by, quad_step, rows_body_by,
};
use crate::kernels::arch::portable::{
    PREFETCH, PREFETCH_STREAMS, finish_extremes, fold_lanes, fold_pair_lanes, grad_rows_body,
    join_weighted, power_step, rows_body, weighted_sums_body,
};
use crate::kernels::arch::prefetch;
use crate::{Element, Float};
#[cfg(feature = "half")]
use core::arch::x86_64::{
    __m128i, _mm_castsi128_ps, _mm_cvtepu16_epi32, _mm_cvtph_ps, _mm_loadl_epi64, _mm_loadu_si128,
    _mm_slli_epi32, _mm256_cvtph_ps,
};
use core::arch::x86_64::{
    __m256, __m256d, _CMP_GT_OQ, _CMP_NGE_UQ, _mm_loadu_ps, _mm256_add_pd, _mm256_and_pd,
    _mm256_and_ps, _mm256_castpd_si256, _mm256_castsi256_pd, _mm256_cmp_pd, _mm256_cvtps_pd,
    _mm256_fmadd_pd, _mm256_loadu_pd, _mm256_loadu_ps, _mm256_max_pd, _mm256_max_ps, _mm256_min_pd,
    _mm256_min_ps, _mm256_movemask_pd, _mm256_mul_pd, _mm256_or_pd, _mm256_or_ps, _mm256_set1_pd,
    _mm256_set1_ps, _mm256_setzero_pd, _mm256_setzero_si256, _mm256_storeu_pd, _mm256_storeu_ps,
    _mm256_sub_epi64, _mm256_sub_pd,
};
#[cfg(feature = "half")]
use core::ops::Range;

/// Bytes ahead a loop asks for: [`PREFETCH`] over one stream,
/// [`PREFETCH_STREAMS`] per stream over several (`SEVERAL`).
#[inline(always)]
const fn distance<const SEVERAL: bool>() -> usize {
    if SEVERAL { PREFETCH_STREAMS } else { PREFETCH }
}

/// Independent accumulators per sum: four registers of four `f64`, so
/// the adds of consecutive values do not wait on each other.
const LANES: usize = 16;

/// A chunk of `LANES` values that loads as four vectors of `f64`.
trait Chunk {
    /// Asks for the cache lines ahead of this chunk: `PREFETCH` bytes into
    /// L2 for a loop over one slice, `PREFETCH_STREAMS` into L1 for one
    /// over two side by side (`SEVERAL`).
    fn prefetch<const SEVERAL: bool>(&self);

    /// Lanes `4j..4j + 4`, widened to `f64`.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX (it is only called from the functions
    /// below, which require AVX2).
    unsafe fn quad(&self, j: usize) -> __m256d;
}

impl Chunk for [f64; LANES] {
    #[inline(always)]
    fn prefetch<const SEVERAL: bool>(&self) {
        // A chunk of f64 spans two cache lines.
        let ahead = self
            .as_ptr()
            .cast::<u8>()
            .wrapping_add(distance::<SEVERAL>());
        prefetch::<SEVERAL, _>(ahead);
        prefetch::<SEVERAL, _>(ahead.wrapping_add(64));
    }

    #[inline(always)]
    unsafe fn quad(&self, j: usize) -> __m256d {
        let lane = &self[4 * j..4 * j + 4];
        // SAFETY: `lane` holds 4 `f64` (the slice above is bounds
        // checked, and the check folds away for constant `j`); the
        // caller guarantees AVX.
        unsafe { _mm256_loadu_pd(lane.as_ptr()) }
    }
}

impl Chunk for [f32; LANES] {
    #[inline(always)]
    fn prefetch<const SEVERAL: bool>(&self) {
        // One cache line per chunk.
        prefetch::<SEVERAL, _>(
            self.as_ptr()
                .cast::<u8>()
                .wrapping_add(distance::<SEVERAL>()),
        );
    }

    #[inline(always)]
    unsafe fn quad(&self, j: usize) -> __m256d {
        let lane = &self[4 * j..4 * j + 4];
        // SAFETY: `lane` holds 4 `f32`, the 16 bytes the load reads;
        // the caller guarantees AVX.
        unsafe { _mm256_cvtps_pd(_mm_loadu_ps(lane.as_ptr())) }
    }
}

/// Lanes `4j..4j + 4` of a chunk of 16-bit values, as 64 bits.
///
/// # Safety
///
/// The CPU must have SSE2 (baseline on x86-64).
#[cfg(feature = "half")]
#[inline(always)]
unsafe fn load_quad_u16<T>(chunk: &[T; LANES], j: usize) -> __m128i {
    const { assert!(core::mem::size_of::<T>() == 2) };
    let lane = &chunk[4 * j..4 * j + 4];
    // SAFETY: `lane` holds 4 values of 2 bytes, the 8 bytes the load reads
    // (unaligned loads are allowed).
    unsafe { _mm_loadl_epi64(lane.as_ptr().cast::<__m128i>()) }
}

#[cfg(feature = "half")]
impl Chunk for [half::f16; LANES] {
    #[inline(always)]
    fn prefetch<const SEVERAL: bool>(&self) {
        // Half a cache line per chunk: every other prefetch repeats one.
        prefetch::<SEVERAL, _>(
            self.as_ptr()
                .cast::<u8>()
                .wrapping_add(distance::<SEVERAL>()),
        );
    }

    #[inline(always)]
    unsafe fn quad(&self, j: usize) -> __m256d {
        // SAFETY: the caller guarantees AVX2, FMA and F16C (`Path::Avx2Fma`
        // is only chosen with all three); `load_quad_u16` reads in bounds.
        unsafe { _mm256_cvtps_pd(_mm_cvtph_ps(load_quad_u16(self, j))) }
    }
}

#[cfg(feature = "half")]
impl Chunk for [half::bf16; LANES] {
    #[inline(always)]
    fn prefetch<const SEVERAL: bool>(&self) {
        prefetch::<SEVERAL, _>(
            self.as_ptr()
                .cast::<u8>()
                .wrapping_add(distance::<SEVERAL>()),
        );
    }

    #[inline(always)]
    unsafe fn quad(&self, j: usize) -> __m256d {
        // SAFETY: as for `f16`; bfloat16 is the upper half of an f32, so
        // widening each value to 32 bits and shifting it up by 16 is exact.
        unsafe {
            let wide = _mm_slli_epi32::<16>(_mm_cvtepu16_epi32(load_quad_u16(self, j)));
            _mm256_cvtps_pd(_mm_castsi128_ps(wide))
        }
    }
}

/// Adds each accumulator of `acc` into `total` and clears it: the flush
/// of [`streamed`], which keeps each lane's sums to a few hundred values.
///
/// # Safety
///
/// The CPU must have AVX.
#[inline(always)]
unsafe fn fold_into<const A: usize, const B: usize>(
    total: &mut [[__m256d; B]; A],
    acc: [[__m256d; B]; A],
) -> [[__m256d; B]; A] {
    for (t, a) in total.iter_mut().flatten().zip(acc.iter().flatten()) {
        // SAFETY: the caller guarantees AVX.
        *t = unsafe { _mm256_add_pd(*t, *a) };
    }
    // SAFETY: the caller guarantees AVX.
    [[unsafe { _mm256_setzero_pd() }; B]; A]
}

/// The four vectors as `LANES` values.
///
/// # Safety
///
/// The CPU must have AVX.
#[inline(always)]
unsafe fn spill(v: &[__m256d; 4]) -> [f64; LANES] {
    let mut out = [0.0; LANES];
    for (dst, v) in out.chunks_exact_mut(4).zip(v) {
        // SAFETY: `dst` holds 4 `f64`; the caller guarantees AVX.
        unsafe { _mm256_storeu_pd(dst.as_mut_ptr(), *v) };
    }
    out
}

/// Per-lane `Σd` and `Σd²` over whole chunks.
///
/// # Safety
///
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn sums_chunks<C: Chunk>(chunks: &[C], k: f64) -> ([f64; LANES], [f64; LANES]) {
    #[allow(unused_unsafe)]
    // SAFETY: the caller guarantees AVX2 and FMA, all these intrinsics
    // need; they only compute on registers, and `quad` and `spill`
    // access memory in bounds.
    unsafe {
        let kv = _mm256_set1_pd(k);
        // `s + d` as `d·1 + s`: the same bits, on the FMA units, which
        // leaves the adders to the widening and the shift. (`black_box`
        // keeps the compiler from turning it back into an add.)
        let one = _mm256_set1_pd(core::hint::black_box(1.0));
        let mut total = [[_mm256_setzero_pd(); 4]; 2];
        let step = |[mut s, mut q]: [[__m256d; 4]; 2], chunk: &C| {
            chunk.prefetch::<false>();
            for (j, (s, q)) in s.iter_mut().zip(q.iter_mut()).enumerate() {
                let d = _mm256_sub_pd(chunk.quad(j), kv);
                *s = _mm256_fmadd_pd(d, one, *s);
                *q = _mm256_fmadd_pd(d, d, *q);
            }
            [s, q]
        };
        let zero = [[_mm256_setzero_pd(); 4]; 2];
        streamed(chunks, zero, step, |acc| fold_into(&mut total, acc));
        (spill(&total[0]), spill(&total[1]))
    }
}

/// `(Σ (x − k), Σ (x − k)²)`.
///
/// # Safety
///
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma,f16c")]
pub(in crate::kernels::arch) unsafe fn sums<S: Element>(xs: &[S], k: f64) -> (f64, f64) {
    let ((mut s, mut q), tail) = match S::elements(xs) {
        Elements::F64(xs) => {
            let (chunks, tail) = xs.as_chunks::<LANES>();
            // SAFETY: the caller guarantees AVX2 and FMA.
            let sums = unsafe { sums_chunks(chunks, k) };
            (sums, tail.len())
        }
        Elements::F32(xs) => {
            let (chunks, tail) = xs.as_chunks::<LANES>();
            // SAFETY: the caller guarantees AVX2 and FMA.
            let sums = unsafe { sums_chunks(chunks, k) };
            (sums, tail.len())
        }
        #[cfg(feature = "half")]
        Elements::F16(xs) => {
            let (chunks, tail) = xs.as_chunks::<LANES>();
            let sums = if super::wide() {
                // SAFETY: `wide` is only on after the CPU was found to
                // have AVX-512F; the caller guarantees AVX2, FMA and F16C.
                unsafe { super::avx512::sums_chunks(chunks, k) }
            } else {
                // SAFETY: the caller guarantees AVX2, FMA and F16C.
                unsafe { sums_chunks(chunks, k) }
            };
            (sums, tail.len())
        }
        #[cfg(feature = "half")]
        Elements::Bf16(xs) => {
            let (chunks, tail) = xs.as_chunks::<LANES>();
            let sums = if super::wide() {
                // SAFETY: `wide` is only on after the CPU was found to
                // have AVX-512F; the caller guarantees AVX2 and FMA.
                unsafe { super::avx512::sums_chunks(chunks, k) }
            } else {
                // SAFETY: the caller guarantees AVX2 and FMA.
                unsafe { sums_chunks(chunks, k) }
            };
            (sums, tail.len())
        }
    };
    let tail = xs.get(xs.len() - tail..).unwrap_or(&[]);
    for ((x, s), q) in tail.iter().zip(&mut s).zip(&mut q) {
        let d = x.widen() - k;
        *s += d;
        *q = num_traits::Float::mul_add(d, d, *q);
    }
    (fold_lanes(s), fold_lanes(q))
}

/// `rows_body` compiled for AVX2 and FMA (the compiler vectorises its
/// element-wise loop well on its own), or for AVX-512 where
/// [`wide`](super::wide) says so.
///
/// # Safety
///
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma,f16c")]
pub(in crate::kernels::arch) unsafe fn rows<S: Element>(
    slab: &[S],
    stride: usize,
    start: usize,
    shift: &[f64],
    s: &mut [f64],
    q: &mut [f64],
) {
    if super::wide() {
        // SAFETY: `wide` is only on after the CPU was found to have
        // AVX-512F and AVX-512VL; the caller guarantees the rest.
        unsafe { rows_avx512(slab, stride, start, shift, s, q) };
    } else {
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        unsafe { rows_any(slab, stride, start, shift, s, q) };
    }
}

/// [`rows`] compiled with AVX-512 as well: the same arithmetic in the same
/// order (so the same bits), in 512-bit registers.
///
/// # Safety
///
/// The CPU must have AVX2, FMA, F16C, AVX-512F and AVX-512VL.
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512vl")]
unsafe fn rows_avx512<S: Element>(
    slab: &[S],
    stride: usize,
    start: usize,
    shift: &[f64],
    s: &mut [f64],
    q: &mut [f64],
) {
    // SAFETY: the caller guarantees the features.
    unsafe { rows_any(slab, stride, start, shift, s, q) };
}

/// The body of [`rows`] and [`rows_avx512`], compiled into each.
///
/// # Safety
///
/// The CPU must have AVX2, FMA and F16C.
#[inline(always)]
unsafe fn rows_any<S: Element>(
    slab: &[S],
    stride: usize,
    start: usize,
    shift: &[f64],
    s: &mut [f64],
    q: &mut [f64],
) {
    #[cfg(feature = "half")]
    if let Elements::F16(slab) = S::elements(slab) {
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        unsafe { rows_f16(slab, stride, start, shift, s, q) };
        return;
    }
    rows_body::<S, true>(slab, stride, start, shift, s, q);
}

/// [`rows`] for `f16`: each step of four rows is widened to `f32` by F16C,
/// eight values per instruction, into a buffer on the stack, and summed by
/// the `f32` step: the conversion is exact, so the sums are those of the
/// portable loop, bit for bit. (Widening value by value inside the loop ran
/// at a third of the plain sum's speed; widening pieces of rows into a
/// buffer and running the whole loop over it, at 0.31–0.39 of an F16C sum
/// on the Intel Xeon for NHWC 64⁴, the buffer's traffic and each piece's
/// set-up included.)
///
/// # Safety
///
/// The CPU must have AVX2, FMA and F16C.
#[cfg(feature = "half")]
#[inline(always)]
unsafe fn rows_f16(
    slab: &[half::f16],
    stride: usize,
    start: usize,
    shift: &[f64],
    s: &mut [f64],
    q: &mut [f64],
) {
    rows_body_by::<half::f16, true, F16cStep>(slab, stride, start, shift, s, q);
}

/// The steps of the lanes loops for `f16`: four rows' lanes widened by
/// F16C into buffers on the stack, then the `f32` step. They are reached
/// only from [`rows_f16`] and [`grad_rows_any`], whose callers guarantee
/// F16C, which the widening needs; `#[inline(always)]` puts them into the
/// callers' `#[target_feature]` functions. (As a closure the forward step
/// was compiled on its own, without AVX2, FMA or F16C, and channels-last
/// `f16` statistics took fifteen times as long.)
#[cfg(feature = "half")]
struct F16cStep;

/// Four rows' `lanes` (at most [`ROW_STEP`]) widened by F16C into `buf`;
/// the number of lanes.
///
/// Reached only from the steps of `F16cStep`, inside kernels whose
/// caller guarantees F16C.
#[cfg(feature = "half")]
#[inline(always)]
fn widen_step(
    rows: [&[half::f16]; 4],
    lanes: &Range<usize>,
    buf: &mut [[f32; ROW_STEP]; 4],
) -> usize {
    // The lanes loops take at most `ROW_STEP` lanes a step.
    debug_assert!(lanes.len() <= ROW_STEP);
    let n = lanes.len().min(ROW_STEP);
    for (row, dst) in rows.iter().zip(buf.iter_mut()) {
        let src = row.get(lanes.start..lanes.start + n).unwrap_or(&[]);
        // SAFETY: only the steps of `F16cStep` call this, from kernels
        // whose caller guarantees F16C.
        unsafe { widen_f16(src, &mut dst[..src.len()]) };
    }
    n
}

#[cfg(feature = "half")]
impl RowStep<half::f16> for F16cStep {
    #[inline(always)]
    fn step(
        rows: [&[half::f16]; 4],
        lanes: Range<usize>,
        one: f64,
        shift: &[f64],
        s: &mut [f64],
        q: &mut [f64],
    ) {
        let mut buf = [[0.0_f32; ROW_STEP]; 4];
        let n = widen_step(rows, &lanes, &mut buf);
        let (Some(shift), Some(s), Some(q)) = (
            shift.get(lanes.start..lanes.start + n),
            s.get_mut(lanes.start..lanes.start + n),
            q.get_mut(lanes.start..lanes.start + n),
        ) else {
            return;
        };
        let [b0, b1, b2, b3] = &buf;
        let rows = [&b0[..n], &b1[..n], &b2[..n], &b3[..n]];
        quad_step::<f32, true>(rows, 0..n, one, shift, s, q);
    }
}

#[cfg(feature = "half")]
impl GradStep<half::f16> for F16cStep {
    #[inline(always)]
    fn step(
        xs: [&[half::f16]; 4],
        dys: [&[half::f16]; 4],
        lanes: Range<usize>,
        one: f64,
        centre: &[f64],
        sum_dy: &mut [f64],
        sum_dyx: &mut [f64],
    ) {
        let (mut xb, mut yb) = ([[0.0_f32; ROW_STEP]; 4], [[0.0_f32; ROW_STEP]; 4]);
        let n = widen_step(xs, &lanes, &mut xb).min(widen_step(dys, &lanes, &mut yb));
        let (Some(centre), Some(sum_dy), Some(sum_dyx)) = (
            centre.get(lanes.start..lanes.start + n),
            sum_dy.get_mut(lanes.start..lanes.start + n),
            sum_dyx.get_mut(lanes.start..lanes.start + n),
        ) else {
            return;
        };
        let ([x0, x1, x2, x3], [y0, y1, y2, y3]) = (&xb, &yb);
        let xs = [&x0[..n], &x1[..n], &x2[..n], &x3[..n]];
        let dys = [&y0[..n], &y1[..n], &y2[..n], &y3[..n]];
        grad_quad_step::<f32, true>(xs, dys, 0..n, one, centre, sum_dy, sum_dyx);
    }
}

/// `src` widened into `dst` (of the same length), eight values per F16C
/// instruction.
///
/// # Safety
///
/// The CPU must have AVX and F16C.
#[cfg(feature = "half")]
#[inline(always)]
unsafe fn widen_f16(src: &[half::f16], dst: &mut [f32]) {
    let (halves, tail) = array_chunks::<half::f16, 8>(src);
    for (h, f) in halves.zip(dst.chunks_exact_mut(8)) {
        #[allow(
            unused_unsafe,
            clippy::cast_ptr_alignment,
            reason = "an unaligned load"
        )]
        // SAFETY: `h` holds 8 values of 2 bytes, the 16 bytes the load
        // reads, and `f` 8 `f32`, the 32 bytes the store writes (unaligned
        // accesses are allowed); the caller guarantees F16C.
        unsafe {
            let v = _mm256_cvtph_ps(_mm_loadu_si128(h.as_ptr().cast::<__m128i>()));
            _mm256_storeu_ps(f.as_mut_ptr(), v);
        }
    }
    let done = src.len() - tail.len();
    for (h, f) in tail.iter().zip(dst.get_mut(done..).unwrap_or(&mut [])) {
        *f = f16_bits_to_f32(h.to_bits());
    }
}

/// Per-lane pair sums over whole chunks, in two vectors per sum (eight
/// lanes): `[Σdx, Σdy, Σdx², Σdy², Σdx·dy]`.
///
/// # Safety
///
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn pair_sums_chunks<C: Chunk>(xs: &[C], ys: &[C], kx: f64, ky: f64) -> [[f64; 8]; 5] {
    #[allow(unused_unsafe)]
    // SAFETY: the caller guarantees AVX2 and FMA, all these intrinsics
    // need; they only compute on registers, and `quad` and the stores
    // access memory in bounds.
    unsafe {
        let kxv = _mm256_set1_pd(kx);
        let kyv = _mm256_set1_pd(ky);
        let zero = _mm256_setzero_pd();
        let mut total = [[zero; 2]; 5];
        let step = |mut acc: [[__m256d; 2]; 5], x: &C, y: &C| {
            x.prefetch::<true>();
            y.prefetch::<true>();
            for j in 0..4 {
                let dx = _mm256_sub_pd(x.quad(j), kxv);
                let dy = _mm256_sub_pd(y.quad(j), kyv);
                let h = j & 1;
                acc[0][h] = _mm256_add_pd(acc[0][h], dx);
                acc[1][h] = _mm256_add_pd(acc[1][h], dy);
                acc[2][h] = _mm256_fmadd_pd(dx, dx, acc[2][h]);
                acc[3][h] = _mm256_fmadd_pd(dy, dy, acc[3][h]);
                acc[4][h] = _mm256_fmadd_pd(dx, dy, acc[4][h]);
            }
            acc
        };
        streamed_pairs(xs, ys, [[zero; 2]; 5], step, |acc| {
            fold_into(&mut total, acc)
        });
        let mut out = [[0.0; 8]; 5];
        for (dst, v) in out.iter_mut().zip(&total) {
            _mm256_storeu_pd(dst[..4].as_mut_ptr(), v[0]);
            _mm256_storeu_pd(dst[4..].as_mut_ptr(), v[1]);
        }
        out
    }
}

/// `[Σdx, Σdy, Σdx², Σdy², Σdx·dy]` over the pairs of `xs` and `ys`.
///
/// # Safety
///
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma,f16c")]
pub(in crate::kernels::arch) unsafe fn pair_sums<S: Element>(
    xs: &[S],
    ys: &[S],
    kx: f64,
    ky: f64,
) -> [f64; 5] {
    let len = xs.len().min(ys.len());
    let (xs, ys) = (&xs[..len], &ys[..len]);
    let (mut lanes, done) = match (S::elements(xs), S::elements(ys)) {
        (Elements::F64(xs), Elements::F64(ys)) => {
            let (xc, yc, done) = chunk_pairs(xs, ys);
            // SAFETY: the caller guarantees AVX2 and FMA.
            (unsafe { pair_sums_chunks(xc, yc, kx, ky) }, done)
        }
        (Elements::F32(xs), Elements::F32(ys)) => {
            let (xc, yc, done) = chunk_pairs(xs, ys);
            // SAFETY: the caller guarantees AVX2 and FMA.
            (unsafe { pair_sums_chunks(xc, yc, kx, ky) }, done)
        }
        #[cfg(feature = "half")]
        (Elements::F16(xs), Elements::F16(ys)) => {
            let (xc, yc, done) = chunk_pairs(xs, ys);
            // SAFETY: the caller guarantees AVX2, FMA and F16C, and
            // `wide` is only on after the CPU was found to have AVX-512F.
            (unsafe { half_pair_sums(xc, yc, kx, ky) }, done)
        }
        #[cfg(feature = "half")]
        (Elements::Bf16(xs), Elements::Bf16(ys)) => {
            let (xc, yc, done) = chunk_pairs(xs, ys);
            // SAFETY: as for `f16`.
            (unsafe { half_pair_sums(xc, yc, kx, ky) }, done)
        }
        // One element type for both slices: `S` is any one of them.
        _ => ([[0.0; 8]; 5], 0),
    };
    let tail = xs[done..].iter().zip(&ys[done..]);
    for (l, (x, y)) in tail.enumerate() {
        let (dx, dy) = (x.widen() - kx, y.widen() - ky);
        let l = l % 8;
        lanes[0][l] += dx;
        lanes[1][l] += dy;
        lanes[2][l] = num_traits::Float::mul_add(dx, dx, lanes[2][l]);
        lanes[3][l] = num_traits::Float::mul_add(dy, dy, lanes[3][l]);
        lanes[4][l] = num_traits::Float::mul_add(dx, dy, lanes[4][l]);
    }
    lanes.map(fold_lanes)
}

/// [`pair_sums_chunks`] of half-precision chunks, by the AVX-512 loop
/// where [`wide`](super::wide) says so (the same bits): its conversions
/// are what such pairs run short of.
///
/// # Safety
///
/// The CPU must have AVX2, FMA and F16C.
#[cfg(feature = "half")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn half_pair_sums<C>(xs: &[C], ys: &[C], kx: f64, ky: f64) -> [[f64; 8]; 5]
where
    C: Chunk + super::avx512::Chunk512,
{
    if super::wide() {
        // SAFETY: `wide` is only on after the CPU was found to have
        // AVX-512F; the caller guarantees AVX2, FMA and F16C.
        unsafe { super::avx512::pair_sums_chunks(xs, ys, kx, ky) }
    } else {
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        unsafe { pair_sums_chunks(xs, ys, kx, ky) }
    }
}

/// [`weighted_chunks`] of half-precision chunks, by the AVX-512 loop where
/// [`wide`](super::wide) says so (the same bits), as [`half_pair_sums`].
///
/// # Safety
///
/// The CPU must have AVX2, FMA and F16C.
#[cfg(feature = "half")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn half_weighted<C>(xs: &[C], ws: &[C], k: f64) -> ([[f64; 8]; 4], f64, bool)
where
    C: Chunk + super::avx512::Chunk512,
{
    if super::wide() {
        // SAFETY: `wide` is only on after the CPU was found to have
        // AVX-512F; the caller guarantees AVX2, FMA and F16C.
        unsafe { super::avx512::weighted_chunks(xs, ws, k) }
    } else {
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        unsafe { weighted_chunks(xs, ws, k) }
    }
}

/// The whole chunks of two slices of one length, and how many values of
/// each they cover (the rest is the tail).
#[inline(always)]
fn chunk_pairs<'a, T>(xs: &'a [T], ys: &'a [T]) -> (&'a [[T; LANES]], &'a [[T; LANES]], usize) {
    let (xc, xt) = xs.as_chunks::<LANES>();
    let (yc, _) = ys.as_chunks::<LANES>();
    (xc, yc, xs.len() - xt.len())
}

/// Per-lane weighted sums over whole chunks, two registers per sum:
/// `[Σw, Σw·d, Σw·d², Σᵢ<ⱼ wᵢwⱼ]`, the number of positive weights (as
/// integer lanes), and whether a weight was NaN or negative. The sum over
/// pairs adds each weight times its lane's Σw so far, and joins the sums
/// at a flush with the product of the two Σw (see
/// `portable::weighted_sums_body`).
///
/// # Safety
///
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn weighted_chunks<C: Chunk>(xs: &[C], ws: &[C], k: f64) -> ([[f64; 8]; 4], f64, bool) {
    #[allow(unused_unsafe)]
    // SAFETY: the caller guarantees AVX2 and FMA, all these intrinsics
    // need; they only compute on registers, and `quad` and the stores
    // access memory in bounds.
    unsafe {
        let kv = _mm256_set1_pd(k);
        let zero = _mm256_setzero_pd();
        let mut total = [[zero; 2]; 4];
        let mut positive = _mm256_setzero_si256();
        let mut bad = zero;
        let step = |mut acc: [[__m256d; 2]; 4], x: &C, w: &C| {
            x.prefetch::<true>();
            w.prefetch::<true>();
            for j in 0..4 {
                let h = j & 1;
                let wv = w.quad(j);
                let d = _mm256_sub_pd(x.quad(j), kv);
                let wd = _mm256_mul_pd(wv, d);
                acc[3][h] = _mm256_fmadd_pd(acc[0][h], wv, acc[3][h]);
                acc[0][h] = _mm256_add_pd(acc[0][h], wv);
                acc[1][h] = _mm256_add_pd(acc[1][h], wd);
                acc[2][h] = _mm256_fmadd_pd(wd, d, acc[2][h]);
                // A true comparison is all ones: −1 as an integer.
                let gt = _mm256_cmp_pd::<_CMP_GT_OQ>(wv, zero);
                positive = _mm256_sub_epi64(positive, _mm256_castpd_si256(gt));
                bad = _mm256_or_pd(bad, _mm256_cmp_pd::<_CMP_NGE_UQ>(wv, zero));
            }
            acc
        };
        streamed_pairs(xs, ws, [[zero; 2]; 4], step, |acc| {
            // `fold_into`, but the sums over pairs joined lane by lane
            // (`join_pairs`), with the products of Σw before they add.
            for h in 0..2 {
                let pairs = _mm256_add_pd(total[3][h], acc[3][h]);
                total[3][h] = _mm256_fmadd_pd(total[0][h], acc[0][h], pairs);
                for s in 0..3 {
                    total[s][h] = _mm256_add_pd(total[s][h], acc[s][h]);
                }
            }
            [[zero; 2]; 4]
        });
        let mut out = [[0.0; 8]; 4];
        for (dst, v) in out.iter_mut().zip(&total) {
            _mm256_storeu_pd(dst[..4].as_mut_ptr(), v[0]);
            _mm256_storeu_pd(dst[4..].as_mut_ptr(), v[1]);
        }
        let mut counts = [0.0_f64; 4];
        _mm256_storeu_pd(counts.as_mut_ptr(), _mm256_castsi256_pd(positive));
        // Integer lanes, stored through a float vector; at most a block's
        // length, exact in f64.
        #[allow(
            clippy::cast_precision_loss,
            clippy::cast_possible_wrap,
            reason = "counts far below 2⁵³"
        )]
        let positive = counts.iter().map(|c| c.to_bits() as i64).sum::<i64>() as f64;
        (out, positive, _mm256_movemask_pd(bad) != 0)
    }
}

/// `[Σw, Σw·d, Σw·d², Σᵢ<ⱼ wᵢwⱼ, positive weights, NaN or negative
/// weights]` with `d = x − k`, as `portable::weighted_sums_body` (which
/// this is for the tail); the count of bad weights is 0 or more than 0,
/// not exact.
///
/// # Safety
///
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma,f16c")]
pub(in crate::kernels::arch) unsafe fn weighted_sums<S: Element>(
    xs: &[S],
    ws: &[S],
    k: f64,
) -> [f64; 6] {
    let len = xs.len().min(ws.len());
    let (xs, ws) = (&xs[..len], &ws[..len]);
    let (lanes, positive, bad, done) = match (S::elements(xs), S::elements(ws)) {
        (Elements::F64(xs), Elements::F64(ws)) => {
            let (xc, wc, done) = chunk_pairs(xs, ws);
            // SAFETY: the caller guarantees AVX2 and FMA.
            let (l, p, b) = unsafe { weighted_chunks(xc, wc, k) };
            (l, p, b, done)
        }
        (Elements::F32(xs), Elements::F32(ws)) => {
            let (xc, wc, done) = chunk_pairs(xs, ws);
            // SAFETY: the caller guarantees AVX2 and FMA.
            let (l, p, b) = unsafe { weighted_chunks(xc, wc, k) };
            (l, p, b, done)
        }
        #[cfg(feature = "half")]
        (Elements::F16(xs), Elements::F16(ws)) => {
            let (xc, wc, done) = chunk_pairs(xs, ws);
            // SAFETY: the caller guarantees AVX2, FMA and F16C.
            let (l, p, b) = unsafe { half_weighted(xc, wc, k) };
            (l, p, b, done)
        }
        #[cfg(feature = "half")]
        (Elements::Bf16(xs), Elements::Bf16(ws)) => {
            let (xc, wc, done) = chunk_pairs(xs, ws);
            // SAFETY: as for `f16`.
            let (l, p, b) = unsafe { half_weighted(xc, wc, k) };
            (l, p, b, done)
        }
        // One element type for both slices: `S` is any one of them.
        _ => return weighted_sums_body::<S, true>(xs, ws, k),
    };
    let tail = weighted_sums_body::<S, true>(&xs[done..], &ws[done..], k);
    let [w, wd, wdd, pairs] = lanes;
    let (w, pairs) = fold_pair_lanes(w, pairs);
    let chunks = [
        w,
        fold_lanes(wd),
        fold_lanes(wdd),
        pairs,
        positive,
        if bad { 1.0 } else { 0.0 },
    ];
    join_weighted(chunks, tail)
}

/// Per-lane `[Σd, Σd², Σd³, Σd⁴]` over whole chunks, in two registers
/// per sum (four sums of two registers and the temporaries fit in the
/// sixteen `ymm` registers); the quads of a chunk alternate between them.
///
/// # Safety
///
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn power_chunks<C: Chunk, const FOURTH: bool>(chunks: &[C], k: f64) -> [[f64; 8]; 4] {
    #[allow(unused_unsafe)]
    // SAFETY: the caller guarantees AVX2 and FMA, all these intrinsics
    // need; they only compute on registers, and `quad` and the stores
    // access memory in bounds.
    unsafe {
        let kv = _mm256_set1_pd(k);
        let mut total = [[_mm256_setzero_pd(); 2]; 4];
        let step = |mut acc: [[__m256d; 2]; 4], chunk: &C| {
            chunk.prefetch::<false>();
            for j in 0..4 {
                let r = j % 2;
                let d = _mm256_sub_pd(chunk.quad(j), kv);
                let d2 = _mm256_mul_pd(d, d);
                acc[0][r] = _mm256_add_pd(acc[0][r], d);
                acc[1][r] = _mm256_add_pd(acc[1][r], d2);
                acc[2][r] = _mm256_fmadd_pd(d2, d, acc[2][r]);
                if FOURTH {
                    acc[3][r] = _mm256_fmadd_pd(d2, d2, acc[3][r]);
                }
            }
            acc
        };
        let zero = [[_mm256_setzero_pd(); 2]; 4];
        streamed(chunks, zero, step, |acc| fold_into(&mut total, acc));
        let mut out = [[0.0; 8]; 4];
        for (dst, v) in out.iter_mut().zip(&total) {
            _mm256_storeu_pd(dst.as_mut_ptr(), v[0]);
            _mm256_storeu_pd(dst[4..].as_mut_ptr(), v[1]);
        }
        out
    }
}

/// `[Σd, Σd², Σd³, Σd⁴]` with `d = x − k`; without `FOURTH` the last is 0.
///
/// # Safety
///
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma,f16c")]
pub(in crate::kernels::arch) unsafe fn power_sums<S: Element, const FOURTH: bool>(
    xs: &[S],
    k: f64,
) -> [f64; 4] {
    let (mut acc, tail) = match S::elements(xs) {
        Elements::F64(xs) => {
            let (chunks, tail) = xs.as_chunks::<LANES>();
            // SAFETY: the caller guarantees AVX2 and FMA.
            (unsafe { power_chunks::<_, FOURTH>(chunks, k) }, tail.len())
        }
        Elements::F32(xs) => {
            let (chunks, tail) = xs.as_chunks::<LANES>();
            // SAFETY: the caller guarantees AVX2 and FMA.
            (unsafe { power_chunks::<_, FOURTH>(chunks, k) }, tail.len())
        }
        #[cfg(feature = "half")]
        Elements::F16(xs) => {
            let (chunks, tail) = xs.as_chunks::<LANES>();
            // SAFETY: the caller guarantees AVX2, FMA and F16C.
            (unsafe { power_chunks::<_, FOURTH>(chunks, k) }, tail.len())
        }
        #[cfg(feature = "half")]
        Elements::Bf16(xs) => {
            let (chunks, tail) = xs.as_chunks::<LANES>();
            // SAFETY: the caller guarantees AVX2 and FMA.
            (unsafe { power_chunks::<_, FOURTH>(chunks, k) }, tail.len())
        }
    };
    let tail = xs.get(xs.len() - tail..).unwrap_or(&[]);
    for (i, x) in tail.iter().enumerate() {
        power_step::<true, FOURTH, 8>(x.widen() - k, i % 8, &mut acc);
    }
    acc.map(fold_lanes)
}

/// `(min, max)` of `f64` values: per register, the OR of the two operand
/// orders of `vminpd` (IEEE `minimum`: NaN-propagating, −0.0 below +0.0)
/// and the AND of those of `vmaxpd` (+0.0 above −0.0; the minimum carries
/// any NaN). See `portable::lane_min`.
///
/// # Safety
///
/// The CPU must have AVX2.
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn extremes_f64(xs: &[f64]) -> (f64, f64) {
    let (chunks, tail) = xs.as_chunks::<LANES>();
    #[allow(unused_unsafe)]
    // SAFETY: the caller guarantees AVX2; every load reads 4 `f64` of a
    // 16-value chunk and every store writes 4 into a 16-value array.
    let (lo, hi) = unsafe {
        let mut lo = [_mm256_set1_pd(f64::INFINITY); 4];
        let mut hi = [_mm256_set1_pd(f64::NEG_INFINITY); 4];
        // Comparisons are exact: nothing to flush.
        streamed(
            chunks,
            (),
            |(), chunk| {
                chunk.prefetch::<false>();
                for j in 0..4 {
                    let x: __m256d = _mm256_loadu_pd(chunk[4 * j..4 * j + 4].as_ptr());
                    lo[j] = _mm256_or_pd(_mm256_min_pd(x, lo[j]), _mm256_min_pd(lo[j], x));
                    hi[j] = _mm256_and_pd(_mm256_max_pd(x, hi[j]), _mm256_max_pd(hi[j], x));
                }
            },
            |()| (),
        );
        let (mut l, mut h) = ([0.0; LANES], [0.0; LANES]);
        for j in 0..4 {
            _mm256_storeu_pd(l[4 * j..4 * j + 4].as_mut_ptr(), lo[j]);
            _mm256_storeu_pd(h[4 * j..4 * j + 4].as_mut_ptr(), hi[j]);
        }
        (l, h)
    };
    finish_extremes(lo, hi, tail)
}

/// [`extremes_f64`] for `f32` values, eight to a register.
///
/// # Safety
///
/// The CPU must have AVX2.
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn extremes_f32(xs: &[f32]) -> (f64, f64) {
    const N: usize = 2 * LANES;
    let (chunks, tail) = xs.as_chunks::<N>();
    #[allow(unused_unsafe)]
    // SAFETY: the caller guarantees AVX2; every load reads 8 `f32` of a
    // 32-value chunk and every store writes 8 into a 32-value array.
    let (lo, hi) = unsafe {
        let mut lo = [_mm256_set1_ps(f32::INFINITY); 4];
        let mut hi = [_mm256_set1_ps(f32::NEG_INFINITY); 4];
        // Comparisons are exact: nothing to flush.
        streamed(
            chunks,
            (),
            |(), chunk| {
                let ahead = chunk.as_ptr().cast::<u8>().wrapping_add(PREFETCH);
                prefetch::<false, _>(ahead);
                prefetch::<false, _>(ahead.wrapping_add(64));
                for j in 0..4 {
                    let x: __m256 = _mm256_loadu_ps(chunk[8 * j..8 * j + 8].as_ptr());
                    lo[j] = _mm256_or_ps(_mm256_min_ps(x, lo[j]), _mm256_min_ps(lo[j], x));
                    hi[j] = _mm256_and_ps(_mm256_max_ps(x, hi[j]), _mm256_max_ps(hi[j], x));
                }
            },
            |()| (),
        );
        let (mut l, mut h) = ([0.0; N], [0.0; N]);
        for j in 0..4 {
            _mm256_storeu_ps(l[8 * j..8 * j + 8].as_mut_ptr(), lo[j]);
            _mm256_storeu_ps(h[8 * j..8 * j + 8].as_mut_ptr(), hi[j]);
        }
        (l, h)
    };
    finish_extremes(lo, hi, tail)
}

/// `(min, max)` of `xs`, widened to `f64`; see `arch::extremes`.
///
/// # Safety
///
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma,f16c")]
pub(in crate::kernels::arch) unsafe fn extremes<S: Float>(xs: &[S]) -> (f64, f64) {
    match S::elements(xs) {
        // SAFETY: the caller guarantees AVX2.
        Elements::F64(xs) => unsafe { extremes_f64(xs) },
        // SAFETY: the caller guarantees AVX2.
        Elements::F32(xs) => unsafe { extremes_f32(xs) },
        // `Float` is only `f32` and `f64`; half precision never gets here.
        #[cfg(feature = "half")]
        Elements::F16(_) | Elements::Bf16(_) => (f64::NAN, f64::NAN),
    }
}

/// `grad_rows_body` compiled for AVX2 and FMA, or for AVX-512 where
/// [`wide`](super::wide) says so (the same bits).
///
/// # Safety
///
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma,f16c")]
#[allow(clippy::too_many_arguments, reason = "the loop's slices and geometry")]
pub(in crate::kernels::arch) unsafe fn grad_rows<S: Element>(
    xs: &[S],
    dys: &[S],
    stride: usize,
    start: usize,
    centre: &[f64],
    sum_dy: &mut [f64],
    sum_dyx: &mut [f64],
) {
    if super::wide() {
        // SAFETY: `wide` is only on after the CPU was found to have
        // AVX-512F and AVX-512VL; the caller guarantees the rest.
        unsafe { grad_rows_avx512(xs, dys, stride, start, centre, sum_dy, sum_dyx) };
    } else {
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        unsafe { grad_rows_any(xs, dys, stride, start, centre, sum_dy, sum_dyx) };
    }
}

/// The body of [`grad_rows`] and [`grad_rows_avx512`], compiled into each:
/// `f16` rows widen each step by F16C (`F16cStep`), every other type
/// value by value.
///
/// # Safety
///
/// The CPU must have AVX2, FMA and F16C.
#[inline(always)]
#[allow(clippy::too_many_arguments, reason = "the loop's slices and geometry")]
unsafe fn grad_rows_any<S: Element>(
    xs: &[S],
    dys: &[S],
    stride: usize,
    start: usize,
    centre: &[f64],
    sum_dy: &mut [f64],
    sum_dyx: &mut [f64],
) {
    #[cfg(feature = "half")]
    if let (Elements::F16(xs), Elements::F16(dys)) = (S::elements(xs), S::elements(dys)) {
        grad_rows_body_by::<half::f16, true, F16cStep>(
            xs, dys, stride, start, centre, sum_dy, sum_dyx,
        );
        return;
    }
    grad_rows_body::<S, true>(xs, dys, stride, start, centre, sum_dy, sum_dyx);
}

/// [`grad_rows`] compiled with AVX-512 as well.
///
/// # Safety
///
/// The CPU must have AVX2, FMA, AVX-512F and AVX-512VL.
#[target_feature(enable = "avx2,fma,f16c,avx512f,avx512vl")]
#[allow(clippy::too_many_arguments, reason = "the loop's slices and geometry")]
unsafe fn grad_rows_avx512<S: Element>(
    xs: &[S],
    dys: &[S],
    stride: usize,
    start: usize,
    centre: &[f64],
    sum_dy: &mut [f64],
    sum_dyx: &mut [f64],
) {
    // SAFETY: the caller guarantees the features.
    unsafe { grad_rows_any(xs, dys, stride, start, centre, sum_dy, sum_dyx) };
}
