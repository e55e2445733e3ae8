//! The inner loops: shifted sums over a run of values, in `f64` lanes.
//!
//! The portable loops are plain Rust, generic over the element type and
//! over whether to fuse `d·d + q` (`FMA`), and `#[inline(always)]`; the
//! compiler vectorises their independent lanes for the build's target.
//! Without FMA they never call `mul_add` (it would be a library call
//! there). The `avx2` module holds the versions compiled with
//! `#[target_feature(enable = "avx2,fma")]`.

#![allow(
    clippy::inline_always,
    reason = "the loop bodies must inline into the `#[target_feature]` functions to be compiled for AVX2/FMA"
)]

use super::dispatch::Path;
use crate::Float;
use core::ops::Range;

/// Accumulators per sum on the portable path: four SSE2 registers of two
/// `f64` (sixteen registers hold both sums without spilling).
const PORTABLE_LANES: usize = 8;

/// Adds the lanes in a fixed pairwise order.
#[inline(always)]
fn fold_lanes<const N: usize>(mut v: [f64; N]) -> f64 {
    let mut width = N / 2;
    while width > 0 {
        for i in 0..width {
            v[i] += v[i + width];
        }
        width /= 2;
    }
    v[0]
}

/// Bytes of data the loops ask for ahead of the loads.
///
/// Each value feeds three dependent operations (subtract, add, FMA) that
/// wait in the scheduler for their load; from memory, that caps the loads
/// in flight, and without help the loops reach only about 0.8 of a plain
/// sum's bandwidth. Software prefetches retire at once and keep enough
/// cache lines in flight: with them the kernels run at the sum's speed.
/// (Measured on a 2-core Xeon VM with AVX-512, see the README: 2 KiB is
/// within a few per cent of the best distance from DRAM with and without
/// huge pages; 4 KiB costs about 20 % with huge pages. The lanes loop,
/// which reads four rows side by side, looks twice as far ahead; see
/// `rows_body`.)
const PREFETCH: usize = 2048;

/// Asks for the cache line holding `p`. A hint: it never faults, whatever
/// the address, and it is a no-op off x86-64.
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    #[allow(unused_unsafe)]
    // SAFETY: SSE is part of baseline x86-64, and a prefetch never faults
    // nor reads anything into the program, whatever the address.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// `xs` as whole arrays of `N` values, and the rest.
#[inline(always)]
fn array_chunks<S, const N: usize>(xs: &[S]) -> (impl Iterator<Item = &[S; N]>, &[S]) {
    let chunks = xs.chunks_exact(N);
    let tail = chunks.remainder();
    (chunks.filter_map(|c| c.try_into().ok()), tail)
}

#[inline(always)]
fn square_add<const FMA: bool>(d: f64, q: f64) -> f64 {
    if FMA {
        num_traits::Float::mul_add(d, d, q)
    } else {
        d * d + q
    }
}

#[inline(always)]
fn sums_body<S: Float, const FMA: bool>(xs: &[S], k: f64) -> (f64, f64) {
    let mut s = [0.0_f64; PORTABLE_LANES];
    let mut q = [0.0_f64; PORTABLE_LANES];
    let (chunks, tail) = array_chunks::<S, PORTABLE_LANES>(xs);
    for chunk in chunks {
        prefetch(chunk.as_ptr().cast::<u8>().wrapping_add(PREFETCH));
        for ((x, s), q) in chunk.iter().zip(&mut s).zip(&mut q) {
            let d = x.as_f64() - k;
            *s += d;
            *q = square_add::<FMA>(d, *q);
        }
    }
    for ((x, s), q) in tail.iter().zip(&mut s).zip(&mut q) {
        let d = x.as_f64() - k;
        *s += d;
        *q = square_add::<FMA>(d, *q);
    }
    (fold_lanes(s), fold_lanes(q))
}

/// Lanes per step of the lanes loop: one 64-byte cache line of `f32` (two
/// of `f64`).
const ROW_STEP: usize = 16;

/// Per-lane accumulation across rows: for every row (a `stride`-long chunk
/// of `slab`), `row[start..start + width]` is added lane by lane, shifted by
/// `shift`, into `s` and `q` (all three of length `width`).
///
/// Rows go four at a time: their four values per lane are summed first,
/// then added to the lane's accumulators, so the accumulators are loaded
/// and stored once per four rows rather than once per row (which capped the
/// loop at the L1 cache's store rate). Leftover rows go one at a time. The
/// grouping depends only on the row index, never on threads.
///
/// The loop reads a quad of rows lane-major, [`ROW_STEP`] lanes of each row
/// per step; each step prefetches the lines that the loop will read
/// `2 · PREFETCH` bytes later in that order, in this quad or a later one:
/// one prefetch per line read, spread evenly. (A burst of prefetches at the
/// start of each quad, one per line of four whole rows, ran at 0.6 of a
/// plain sum from memory on rows of 512 `f32`, and 0.75 on rows of 64;
/// spread, 0.85 and 0.97. Half this distance cost 0.1 on the wide rows, a
/// quarter 0.2; two or four times as far changed nothing beyond the noise.)
#[inline(always)]
fn rows_body<S: Float, const FMA: bool>(
    slab: &[S],
    stride: usize,
    start: usize,
    shift: &[f64],
    s: &mut [f64],
    q: &mut [f64],
) {
    let width = shift.len();
    if width == 0 || s.len() != width || q.len() != width {
        return;
    }
    let size = core::mem::size_of::<S>();
    let lines = (ROW_STEP * size).div_ceil(64);
    // Lanes ahead in the loop's reading order (4 values per lane), and
    // where that lands: `quads_ahead` quads on, at lane offset `lane_ahead`.
    let ahead = 2 * PREFETCH / (4 * size);
    let (quads_ahead, lane_ahead) = (ahead / width, ahead % width);
    let full = width - width % ROW_STEP;
    let mut quads = slab.chunks_exact(4 * stride);
    for quad in &mut quads {
        let row = |r: usize| quad.get(start + r * stride..start + r * stride + width);
        let (Some(r0), Some(r1), Some(r2), Some(r3)) = (row(0), row(1), row(2), row(3)) else {
            return;
        };
        let rows = [r0, r1, r2, r3];
        for j in (0..full).step_by(ROW_STEP) {
            let target = j + lane_ahead;
            let (quads, lane) = if target < width {
                (quads_ahead, target)
            } else {
                (quads_ahead + 1, target - width)
            };
            let next = r0.as_ptr().wrapping_add(quads * 4 * stride + lane);
            for r in 0..4 {
                let row_ahead = next.wrapping_add(r * stride).cast::<u8>();
                for l in 0..lines {
                    prefetch(row_ahead.wrapping_add(64 * l));
                }
            }
            quad_step::<S, FMA>(rows, j..j + ROW_STEP, shift, s, q);
        }
        quad_step::<S, FMA>(rows, full..width, shift, s, q);
    }
    for row in quads.remainder().chunks_exact(stride) {
        let Some(row) = row.get(start..start + width) else {
            return;
        };
        for (((x, k), s), q) in row.iter().zip(shift).zip(s.iter_mut()).zip(q.iter_mut()) {
            let d = x.as_f64() - k;
            *s += d;
            *q = square_add::<FMA>(d, *q);
        }
    }
}

/// One step of [`rows_body`]: `lanes` of four rows.
#[inline(always)]
fn quad_step<S: Float, const FMA: bool>(
    rows: [&[S]; 4],
    lanes: Range<usize>,
    shift: &[f64],
    s: &mut [f64],
    q: &mut [f64],
) {
    let [r0, r1, r2, r3] = rows;
    let (Some(r0), Some(r1), Some(r2), Some(r3), Some(shift), Some(s), Some(q)) = (
        r0.get(lanes.clone()),
        r1.get(lanes.clone()),
        r2.get(lanes.clone()),
        r3.get(lanes.clone()),
        shift.get(lanes.clone()),
        s.get_mut(lanes.clone()),
        q.get_mut(lanes),
    ) else {
        return;
    };
    let rows = r0.iter().zip(r1).zip(r2).zip(r3);
    for ((((((x0, x1), x2), x3), k), s), q) in rows.zip(shift).zip(s.iter_mut()).zip(q.iter_mut()) {
        let d0 = x0.as_f64() - k;
        let d1 = x1.as_f64() - k;
        let d2 = x2.as_f64() - k;
        let d3 = x3.as_f64() - k;
        *s += (d0 + d1) + (d2 + d3);
        let t = square_add::<FMA>(d0, d1 * d1);
        let u = square_add::<FMA>(d2, d3 * d3);
        *q += t + u;
    }
}

#[cfg(all(feature = "std", target_arch = "x86_64"))]
mod avx2 {
    //! AVX2/FMA versions. The slice loops use explicit intrinsics: LLVM's
    //! SLP vectoriser turns generic lane arrays into a mix of 128-bit
    //! operations and spills, at half the in-cache speed. Four 256-bit
    //! accumulators per sum (16 lanes) cover the add and FMA latency.
    //!
    //! Every function here is `unsafe`: the caller must have checked that
    //! the CPU has AVX2 and FMA (`Path::Avx2Fma` is that proof). Intrinsic
    //! calls sit in `unsafe` blocks marked `allow(unused_unsafe)`, because
    //! they are safe inside `target_feature` functions only from Rust 1.87.

    use super::{PREFETCH, array_chunks, fold_lanes, prefetch};
    use crate::Float;
    use core::any::TypeId;
    use core::arch::x86_64::{
        __m256d, _mm_loadu_ps, _mm256_add_pd, _mm256_cvtps_pd, _mm256_fmadd_pd, _mm256_loadu_pd,
        _mm256_set1_pd, _mm256_setzero_pd, _mm256_storeu_pd, _mm256_sub_pd,
    };

    /// Independent accumulators per sum: four registers of four `f64`, so
    /// the adds of consecutive values do not wait on each other.
    const LANES: usize = 16;

    /// `xs` as `&[f64]` when `S` is `f64`.
    fn as_f64s<S: Float>(xs: &[S]) -> Option<&[f64]> {
        (TypeId::of::<S>() == TypeId::of::<f64>()).then(|| {
            // SAFETY: `S` is `f64` (same `TypeId`), so the cast changes
            // nothing: same pointer, length, layout and lifetime.
            unsafe { core::slice::from_raw_parts(xs.as_ptr().cast::<f64>(), xs.len()) }
        })
    }

    /// `xs` as `&[f32]` when `S` is `f32`.
    fn as_f32s<S: Float>(xs: &[S]) -> Option<&[f32]> {
        (TypeId::of::<S>() == TypeId::of::<f32>()).then(|| {
            // SAFETY: `S` is `f32` (same `TypeId`); see `as_f64s`.
            unsafe { core::slice::from_raw_parts(xs.as_ptr().cast::<f32>(), xs.len()) }
        })
    }

    /// A chunk of `LANES` values that loads as four vectors of `f64`.
    trait Chunk {
        /// Asks for the cache lines `PREFETCH` bytes ahead of this chunk.
        fn prefetch(&self);

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
        fn prefetch(&self) {
            // A chunk of f64 spans two cache lines.
            let ahead = self.as_ptr().cast::<u8>().wrapping_add(PREFETCH);
            prefetch(ahead);
            prefetch(ahead.wrapping_add(64));
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
        fn prefetch(&self) {
            // One cache line per chunk.
            prefetch(self.as_ptr().cast::<u8>().wrapping_add(PREFETCH));
        }

        #[inline(always)]
        unsafe fn quad(&self, j: usize) -> __m256d {
            let lane = &self[4 * j..4 * j + 4];
            // SAFETY: `lane` holds 4 `f32`, the 16 bytes the load reads;
            // the caller guarantees AVX.
            unsafe { _mm256_cvtps_pd(_mm_loadu_ps(lane.as_ptr())) }
        }
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
    #[target_feature(enable = "avx2,fma")]
    unsafe fn sums_chunks<'a, C: Chunk + 'a>(
        chunks: impl Iterator<Item = &'a C>,
        k: f64,
    ) -> ([f64; LANES], [f64; LANES]) {
        #[allow(unused_unsafe)]
        // SAFETY: the caller guarantees AVX2 and FMA, all these intrinsics
        // need; they only compute on registers, and `quad` and `spill`
        // access memory in bounds.
        unsafe {
            let kv = _mm256_set1_pd(k);
            let mut s = [_mm256_setzero_pd(); 4];
            let mut q = [_mm256_setzero_pd(); 4];
            for chunk in chunks {
                chunk.prefetch();
                for (j, (s, q)) in s.iter_mut().zip(q.iter_mut()).enumerate() {
                    let d = _mm256_sub_pd(chunk.quad(j), kv);
                    *s = _mm256_add_pd(*s, d);
                    *q = _mm256_fmadd_pd(d, d, *q);
                }
            }
            (spill(&s), spill(&q))
        }
    }

    /// `(Σ (x − k), Σ (x − k)²)`.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn sums<S: Float>(xs: &[S], k: f64) -> (f64, f64) {
        // SAFETY (both calls): the caller guarantees AVX2 and FMA.
        let ((mut s, mut q), tail) = if let Some(xs) = as_f64s(xs) {
            let (chunks, tail) = array_chunks::<f64, LANES>(xs);
            (unsafe { sums_chunks(chunks, k) }, tail.len())
        } else if let Some(xs) = as_f32s(xs) {
            let (chunks, tail) = array_chunks::<f32, LANES>(xs);
            (unsafe { sums_chunks(chunks, k) }, tail.len())
        } else {
            return super::sums_body::<S, true>(xs, k);
        };
        let tail = xs.get(xs.len() - tail..).unwrap_or(&[]);
        for ((x, s), q) in tail.iter().zip(&mut s).zip(&mut q) {
            let d = x.as_f64() - k;
            *s += d;
            *q = num_traits::Float::mul_add(d, d, *q);
        }
        (fold_lanes(s), fold_lanes(q))
    }

    /// `rows_body` compiled for AVX2 and FMA (the compiler vectorises its
    /// element-wise loop well on its own).
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn rows<S: Float>(
        slab: &[S],
        stride: usize,
        start: usize,
        shift: &[f64],
        s: &mut [f64],
        q: &mut [f64],
    ) {
        super::rows_body::<S, true>(slab, stride, start, shift, s, q);
    }
}

/// `(Σ (x − k), Σ (x − k)²)` over `xs`.
#[inline]
pub(crate) fn shifted_sums<S: Float>(path: Path, xs: &[S], k: f64) -> (f64, f64) {
    match path {
        Path::Portable => sums_body::<S, false>(xs, k),
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        // SAFETY: `Path::Avx2Fma` exists only when `detect` found AVX2 and
        // FMA on this CPU, which is all `avx2::sums` requires.
        Path::Avx2Fma => unsafe { avx2::sums(xs, k) },
    }
}

/// Lane-wise shifted sums across the rows of `slab`; see `rows_body`.
#[inline]
pub(crate) fn shifted_rows<S: Float>(
    path: Path,
    slab: &[S],
    stride: usize,
    start: usize,
    shift: &[f64],
    s: &mut [f64],
    q: &mut [f64],
) {
    match path {
        Path::Portable => rows_body::<S, false>(slab, stride, start, shift, s, q),
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        // SAFETY: `Path::Avx2Fma` exists only when `detect` found AVX2 and
        // FMA on this CPU, which is all `avx2::rows` requires.
        Path::Avx2Fma => unsafe { avx2::rows(slab, stride, start, shift, s, q) },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::dispatch::detect;

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
