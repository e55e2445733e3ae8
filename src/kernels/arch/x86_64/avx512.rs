//! The AVX-512 slice loop for half-precision data: the AVX2 loop's sixteen
//! lanes in two 512-bit registers per sum instead of four 256-bit ones.
//!
//! Each lane sums the same values in the same order as in the AVX2 loop,
//! and the lanes are folded the same way, so the two give the same bits;
//! the wider registers only halve the instructions per value, which is
//! what `f16` and `bf16` data (two conversions per value before the
//! arithmetic) run short of. For `f32` and `f64` it measured no faster
//! than the AVX2 loop (0.98–0.99 against 1.04 of the plain sum on the
//! Intel Xeon), so they stay there.

#![allow(
    clippy::inline_always,
    reason = "the chunk loads must inline into the `#[target_feature]` function"
)]

use super::prefetch;
use super::streams::streamed;
use crate::kernels::arch::portable::PREFETCH;
use core::arch::x86_64::{
    __m512d, _mm_loadu_si128, _mm256_castsi256_ps, _mm256_cvtepu16_epi32, _mm256_cvtph_ps,
    _mm256_slli_epi32, _mm512_add_pd, _mm512_cvtps_pd, _mm512_fmadd_pd, _mm512_set1_pd,
    _mm512_setzero_pd, _mm512_storeu_pd, _mm512_sub_pd,
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
    let size = core::mem::size_of::<C>();
    #[allow(unused_unsafe)]
    // SAFETY: the caller guarantees the features all these intrinsics
    // need; they compute on registers, and `oct` and the stores access
    // memory in bounds.
    unsafe {
        let kv = _mm512_set1_pd(shift);
        let one = _mm512_set1_pd(core::hint::black_box(1.0));
        let zero = _mm512_setzero_pd();
        let mut total = [[zero; 2]; 2];
        let step = |[mut sums, mut squares]: [[__m512d; 2]; 2], chunk: &C| {
            let ahead = core::ptr::from_ref(chunk)
                .cast::<u8>()
                .wrapping_add(PREFETCH);
            for line in (0..size).step_by(64) {
                prefetch::<false, _>(ahead.wrapping_add(line));
            }
            for (j, (s, q)) in sums.iter_mut().zip(squares.iter_mut()).enumerate() {
                let d = _mm512_sub_pd(chunk.oct(j), kv);
                *s = _mm512_fmadd_pd(d, one, *s);
                *q = _mm512_fmadd_pd(d, d, *q);
            }
            [sums, squares]
        };
        // The flush of the AVX2 loop, lane for lane.
        let flush = |acc: [[__m512d; 2]; 2]| {
            for (t, a) in total.iter_mut().flatten().zip(acc.iter().flatten()) {
                *t = _mm512_add_pd(*t, *a);
            }
            [[zero; 2]; 2]
        };
        streamed(chunks, [[zero; 2]; 2], step, flush);
        let [sums, squares] = total;
        let mut out = ([0.0; LANES], [0.0; LANES]);
        for (j, (s, q)) in sums.iter().zip(&squares).enumerate() {
            _mm512_storeu_pd(out.0[8 * j..8 * j + 8].as_mut_ptr(), *s);
            _mm512_storeu_pd(out.1[8 * j..8 * j + 8].as_mut_ptr(), *q);
        }
        out
    }
}
