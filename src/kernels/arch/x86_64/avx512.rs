//! The AVX-512 loops for half-precision data: the slice loop (the AVX2
//! loop's sixteen lanes in two 512-bit registers per sum instead of four
//! 256-bit ones), and the pair and weighted loops (their eight lanes in
//! one register per sum instead of two).
//!
//! Each lane sums the same values in the same order as in the AVX2 loops,
//! and the lanes are folded the same way, so the two give the same bits;
//! the wider registers only halve the instructions per value, which is
//! what `f16` and `bf16` data (two conversions per value before the
//! arithmetic) run short of. On the Intel Xeon, against an F16C sum, the
//! slice loop took `f16` slices from 0.76–0.78 to 0.86–0.90, the pair loop
//! the channels-first backward pass from 0.61–0.69 to 0.83–0.89 and the
//! weighted loop `WeightedVariance` from 0.57–0.64 to 0.78 (its weights'
//! tests, since kept in vector registers, took it to 1.01–1.02 of 2 × 256
//! MiB from memory). For `f32` and `f64` the slice loop measured no faster
//! from memory than the AVX2 loop (it was faster in cache), so they stay
//! there.

#![allow(
    clippy::inline_always,
    reason = "the chunk loads must inline into the `#[target_feature]` function"
)]

use super::streams::{streamed, streamed_pairs};
use crate::kernels::arch::portable::{PREFETCH, PREFETCH_STREAMS};
use crate::kernels::arch::prefetch;
use core::arch::x86_64::{
    __m512d, _CMP_GT_OQ, _mm_loadu_si128, _mm256_castsi256_ps, _mm256_cvtepu16_epi32,
    _mm256_cvtph_ps, _mm256_slli_epi32, _mm512_add_pd, _mm512_cmp_pd_mask, _mm512_cvtps_pd,
    _mm512_fmadd_pd, _mm512_mask_sub_epi64, _mm512_min_pd, _mm512_mul_pd, _mm512_set1_epi64,
    _mm512_set1_pd, _mm512_setzero_pd, _mm512_setzero_si512, _mm512_storeu_pd, _mm512_storeu_si512,
    _mm512_sub_pd,
};

/// Values per chunk: the AVX2 loop's sixteen lanes.
pub(super) const LANES: usize = 16;

/// A chunk of [`LANES`] values that loads as two vectors of eight `f64`.
pub(super) trait Chunk512 {
    /// Lanes `8j..8j + 8`, widened to `f64`.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX-512F and F16C.
    unsafe fn oct(&self, j: usize) -> __m512d;

    /// Asks for the cache lines ahead of this chunk, as the AVX2 loops'
    /// chunks do: `PREFETCH` bytes into L2 in a loop over one slice,
    /// `PREFETCH_STREAMS` into L1 in one over two (`SEVERAL`).
    #[inline(always)]
    fn prefetch<const SEVERAL: bool>(&self)
    where
        Self: Sized,
    {
        let distance = if SEVERAL { PREFETCH_STREAMS } else { PREFETCH };
        let ahead = core::ptr::from_ref(self)
            .cast::<u8>()
            .wrapping_add(distance);
        for line in (0..core::mem::size_of::<Self>()).step_by(64) {
            prefetch::<SEVERAL, _>(ahead.wrapping_add(line));
        }
    }
}

#[cfg(feature = "half")]
impl Chunk512 for [half::f16; LANES] {
    #[inline(always)]
    unsafe fn oct(&self, j: usize) -> __m512d {
        let lane = &self[8 * j..8 * j + 8];
        #[allow(clippy::cast_ptr_alignment, reason = "an unaligned load")]
        // SAFETY: `lane` holds 8 values of 2 bytes, the 16 bytes the load
        // reads; the caller guarantees AVX-512F and F16C.
        unsafe {
            _mm512_cvtps_pd(_mm256_cvtph_ps(_mm_loadu_si128(lane.as_ptr().cast())))
        }
    }
}

#[cfg(feature = "half")]
impl Chunk512 for [half::bf16; LANES] {
    #[inline(always)]
    unsafe fn oct(&self, j: usize) -> __m512d {
        let lane = &self[8 * j..8 * j + 8];
        #[allow(clippy::cast_ptr_alignment, reason = "an unaligned load")]
        // SAFETY: `lane` holds 8 values of 2 bytes, the 16 bytes the load
        // reads; the caller guarantees AVX-512F (and so AVX2). bfloat16 is
        // the upper half of an `f32`, so widening each value to 32 bits and
        // shifting it up by 16 is exact.
        unsafe {
            let wide = _mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(_mm_loadu_si128(
                lane.as_ptr().cast(),
            )));
            _mm512_cvtps_pd(_mm256_castsi256_ps(wide))
        }
    }
}

/// Adds each sum of `acc` into `total`, and returns the cleared sums: the
/// flush of [`streamed`], lane for lane as in the AVX2 loops.
///
/// # Safety
///
/// The CPU must have AVX-512F.
#[inline(always)]
unsafe fn fold_into<const N: usize>(total: &mut [__m512d; N], acc: [__m512d; N]) -> [__m512d; N] {
    for (t, a) in total.iter_mut().zip(acc) {
        // SAFETY: the caller guarantees AVX-512F.
        *t = unsafe { _mm512_add_pd(*t, a) };
    }
    // SAFETY: the caller guarantees AVX-512F.
    [unsafe { _mm512_setzero_pd() }; N]
}

/// Per-lane `Σd` and `Σd²` over whole chunks, `d = x − shift`, prefetching
/// `PREFETCH` bytes ahead once per cache line where prefetching is on.
///
/// # Safety
///
/// The CPU must have AVX-512F, AVX2, FMA and F16C.
#[target_feature(enable = "avx512f,avx2,fma,f16c")]
pub(super) unsafe fn sums_chunks<C: Chunk512>(
    chunks: &[C],
    shift: f64,
) -> ([f64; LANES], [f64; LANES]) {
    #[allow(unused_unsafe)]
    // SAFETY: the caller guarantees the features all these intrinsics
    // need; they compute on registers, and `oct` and the stores access
    // memory in bounds.
    unsafe {
        let kv = _mm512_set1_pd(shift);
        let one = _mm512_set1_pd(core::hint::black_box(1.0));
        let zero = _mm512_setzero_pd();
        // Two registers of sums, then two of squares.
        let mut total = [zero; 4];
        let step = |mut acc: [__m512d; 4], chunk: &C| {
            chunk.prefetch::<false>();
            for j in 0..2 {
                let d = _mm512_sub_pd(chunk.oct(j), kv);
                acc[j] = _mm512_fmadd_pd(d, one, acc[j]);
                acc[2 + j] = _mm512_fmadd_pd(d, d, acc[2 + j]);
            }
            acc
        };
        streamed(chunks, [zero; 4], step, |acc| fold_into(&mut total, acc));
        let mut out = ([0.0; LANES], [0.0; LANES]);
        for j in 0..2 {
            _mm512_storeu_pd(out.0[8 * j..8 * j + 8].as_mut_ptr(), total[j]);
            _mm512_storeu_pd(out.1[8 * j..8 * j + 8].as_mut_ptr(), total[2 + j]);
        }
        out
    }
}

/// Per-lane pair sums `[Σdx, Σdy, Σdx², Σdy², Σdx·dy]` over whole chunks,
/// one 512-bit register (eight lanes) per sum: the AVX2 pair loop's eight
/// lanes, each summing the same values in the same order (a chunk's
/// values `l` and `l + 8` in lane `l`), so the same bits.
///
/// # Safety
///
/// The CPU must have AVX-512F, AVX2, FMA and F16C.
#[target_feature(enable = "avx512f,avx2,fma,f16c")]
pub(super) unsafe fn pair_sums_chunks<C: Chunk512>(
    xs: &[C],
    ys: &[C],
    kx: f64,
    ky: f64,
) -> [[f64; 8]; 5] {
    #[allow(unused_unsafe)]
    // SAFETY: the caller guarantees the features all these intrinsics
    // need; they compute on registers, and `oct` and the stores access
    // memory in bounds.
    unsafe {
        let (kxv, kyv) = (_mm512_set1_pd(kx), _mm512_set1_pd(ky));
        let zero = _mm512_setzero_pd();
        let mut total = [zero; 5];
        let step = |mut acc: [__m512d; 5], x: &C, y: &C| {
            x.prefetch::<true>();
            y.prefetch::<true>();
            for j in 0..2 {
                let dx = _mm512_sub_pd(x.oct(j), kxv);
                let dy = _mm512_sub_pd(y.oct(j), kyv);
                acc[0] = _mm512_add_pd(acc[0], dx);
                acc[1] = _mm512_add_pd(acc[1], dy);
                acc[2] = _mm512_fmadd_pd(dx, dx, acc[2]);
                acc[3] = _mm512_fmadd_pd(dy, dy, acc[3]);
                acc[4] = _mm512_fmadd_pd(dx, dy, acc[4]);
            }
            acc
        };
        let flush = |acc| fold_into(&mut total, acc);
        streamed_pairs(xs, ys, [zero; 5], step, flush);
        let mut out = [[0.0; 8]; 5];
        for (dst, v) in out.iter_mut().zip(total) {
            _mm512_storeu_pd(dst.as_mut_ptr(), v);
        }
        out
    }
}

/// Per-lane weighted sums `[Σw, Σw·d, Σw·d², Σᵢ<ⱼ wᵢwⱼ]` over whole chunks, one
/// 512-bit register (eight lanes) per sum as in [`pair_sums_chunks`] (the
/// AVX2 loop's lanes and order, so the same bits), the number of positive
/// weights, and whether a weight was NaN or negative.
///
/// The weights' tests stay in vector registers: a comparison adds to a
/// per-lane count of positive weights, and a per-lane minimum finds a
/// negative one (a NaN shows in Σw). Counting each comparison's mask in a
/// general register instead (a mask move, a population count and an add
/// every eight weights) cost the loop a fifth of its speed on the Intel
/// Xeon: 10.8–11.1 ms for 2 × 64 MiB of `f16`, against 9.4–9.6 ms so
/// (7.8–8.7 ms with no tests at all).
///
/// # Safety
///
/// The CPU must have AVX-512F, AVX2, FMA and F16C.
#[target_feature(enable = "avx512f,avx2,fma,f16c")]
pub(super) unsafe fn weighted_chunks<C: Chunk512>(
    xs: &[C],
    ws: &[C],
    k: f64,
) -> ([[f64; 8]; 4], f64, bool) {
    #[allow(unused_unsafe)]
    // SAFETY: the caller guarantees the features all these intrinsics
    // need; they compute on registers, and `oct` and the stores access
    // memory in bounds.
    unsafe {
        let kv = _mm512_set1_pd(k);
        let zero = _mm512_setzero_pd();
        let minus_one = _mm512_set1_epi64(-1);
        let mut total = [zero; 4];
        // Per lane: how many weights were positive, and the least one.
        let mut positive = _mm512_setzero_si512();
        let mut least = zero;
        let step = |mut acc: [__m512d; 4], x: &C, w: &C| {
            x.prefetch::<true>();
            w.prefetch::<true>();
            for j in 0..2 {
                let wv = w.oct(j);
                let d = _mm512_sub_pd(x.oct(j), kv);
                let wd = _mm512_mul_pd(wv, d);
                acc[3] = _mm512_fmadd_pd(acc[0], wv, acc[3]);
                acc[0] = _mm512_add_pd(acc[0], wv);
                acc[1] = _mm512_add_pd(acc[1], wd);
                acc[2] = _mm512_fmadd_pd(wd, d, acc[2]);
                let gt = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(wv, zero);
                positive = _mm512_mask_sub_epi64(positive, gt, positive, minus_one);
                least = _mm512_min_pd(least, wv);
            }
            acc
        };
        // The AVX2 loop's flush: the sums over pairs joined with the
        // products of Σw before they add.
        let flush = |acc: [__m512d; 4]| {
            let pairs = _mm512_add_pd(total[3], acc[3]);
            total[3] = _mm512_fmadd_pd(total[0], acc[0], pairs);
            for s in 0..3 {
                total[s] = _mm512_add_pd(total[s], acc[s]);
            }
            [zero; 4]
        };
        streamed_pairs(xs, ws, [zero; 4], step, flush);
        let mut out = [[0.0; 8]; 4];
        for (dst, v) in out.iter_mut().zip(total) {
            _mm512_storeu_pd(dst.as_mut_ptr(), v);
        }
        let mut counts = [0_u64; 8];
        _mm512_storeu_si512(counts.as_mut_ptr().cast(), positive);
        let mut least_lanes = [0.0; 8];
        _mm512_storeu_pd(least_lanes.as_mut_ptr(), least);
        // A NaN weight makes its lane's Σw NaN (nothing else can: +∞ and
        // −∞ need a negative weight); a negative one, with no NaN beside
        // it, stays the least of its lane (`min` drops a NaN only when it
        // keeps the other operand, and a NaN weight is caught by Σw).
        let bad = out[0].iter().any(|s| s.is_nan()) || least_lanes.iter().any(|&m| m < 0.0);
        // At most a block's length, exact in f64.
        #[allow(clippy::cast_precision_loss, reason = "counts far below 2⁵³")]
        (out, counts.iter().sum::<u64>() as f64, bad)
    }
}
