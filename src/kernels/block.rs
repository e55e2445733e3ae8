//! The inner loops: shifted sums over a run of values, in `f64` lanes.
//!
//! Each loop body is written once, generic over the element type and over
//! whether to fuse `d·d + q` (`FMA`), and `#[inline(always)]`. The portable
//! entry points instantiate it for the build's target; the `avx2` module
//! instantiates it inside `#[target_feature(enable = "avx2,fma")]`
//! functions, where LLVM vectorises the independent lanes into 256-bit
//! registers and `mul_add` becomes one instruction. Without FMA the portable
//! body never calls `mul_add` (it would be a library call there).

use super::dispatch::Path;
use crate::Float;

/// Independent accumulators per sum on the AVX2 path: four registers of
/// four `f64`, so the adds of consecutive values do not wait on each other.
pub(crate) const LANES: usize = 16;

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
    let (chunks, tail) = xs.as_chunks::<PORTABLE_LANES>();
    for chunk in chunks {
        for j in 0..PORTABLE_LANES {
            let d = chunk[j].as_f64() - k;
            s[j] += d;
            q[j] = square_add::<FMA>(d, q[j]);
        }
    }
    for ((x, s), q) in tail.iter().zip(&mut s).zip(&mut q) {
        let d = x.as_f64() - k;
        *s += d;
        *q = square_add::<FMA>(d, *q);
    }
    (fold_lanes(s), fold_lanes(q))
}

#[inline(always)]
fn sum_body<S: Float>(xs: &[S], k: f64) -> f64 {
    let mut s = [0.0_f64; PORTABLE_LANES];
    let (chunks, tail) = xs.as_chunks::<PORTABLE_LANES>();
    for chunk in chunks {
        for j in 0..PORTABLE_LANES {
            s[j] += chunk[j].as_f64() - k;
        }
    }
    for (x, s) in tail.iter().zip(&mut s) {
        *s += x.as_f64() - k;
    }
    fold_lanes(s)
}

/// Per-lane accumulation across rows: for every row (a `stride`-long chunk
/// of `slab`), `row[start..start + width]` is added lane by lane, shifted by
/// `shift`, into `s` and `q` (all three of length `width`).
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
    for row in slab.chunks_exact(stride) {
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

#[cfg(all(feature = "std", target_arch = "x86_64"))]
mod avx2 {
    //! AVX2/FMA versions. The slice loops use explicit intrinsics: LLVM's
    //! SLP vectoriser turns the generic lane arrays into a mix of 128-bit
    //! operations and spills here, at half the in-cache speed. Four 256-bit
    //! accumulators per sum (16 lanes) cover the add/FMA latency.

    use super::{LANES, fold_lanes};
    use crate::Float;
    use core::any::TypeId;
    use core::arch::x86_64::{
        __m256d, _mm_loadu_ps, _mm256_add_pd, _mm256_cvtps_pd, _mm256_fmadd_pd, _mm256_loadu_pd,
        _mm256_set1_pd, _mm256_setzero_pd, _mm256_storeu_pd, _mm256_sub_pd,
    };

    const _: () = assert!(LANES == 16);

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

    /// Loads lanes `4j..4j + 4` of a chunk, widened to `f64`.
    trait Chunk {
        fn quad(&self, j: usize) -> __m256d;
    }

    impl Chunk for [f64; LANES] {
        #[inline(always)]
        fn quad(&self, j: usize) -> __m256d {
            let lane = &self[4 * j..4 * j + 4];
            // SAFETY: `lane` holds 4 `f64` (the slice above is bounds
            // checked); AVX is enabled wherever this is inlined (only into
            // the `target_feature` functions below).
            unsafe { _mm256_loadu_pd(lane.as_ptr()) }
        }
    }

    impl Chunk for [f32; LANES] {
        #[inline(always)]
        fn quad(&self, j: usize) -> __m256d {
            let lane = &self[4 * j..4 * j + 4];
            // SAFETY: `lane` holds 4 `f32`, 16 bytes; AVX is enabled
            // wherever this is inlined (only the functions below).
            unsafe { _mm256_cvtps_pd(_mm_loadu_ps(lane.as_ptr())) }
        }
    }

    #[inline(always)]
    fn spill(v: &[__m256d; 4]) -> [f64; LANES] {
        let mut out = [0.0; LANES];
        for (j, v) in v.iter().enumerate() {
            if let Some(dst) = out.get_mut(4 * j..4 * j + 4) {
                // SAFETY: `dst` holds 4 `f64`.
                unsafe { _mm256_storeu_pd(dst.as_mut_ptr(), *v) };
            }
        }
        out
    }

    #[target_feature(enable = "avx2,fma")]
    fn sums_chunks<C: Chunk>(chunks: &[C], k: f64) -> ([f64; LANES], [f64; LANES]) {
        let kv = _mm256_set1_pd(k);
        let mut s = [_mm256_setzero_pd(); 4];
        let mut q = [_mm256_setzero_pd(); 4];
        for chunk in chunks {
            for j in 0..4 {
                let d = _mm256_sub_pd(chunk.quad(j), kv);
                s[j] = _mm256_add_pd(s[j], d);
                q[j] = _mm256_fmadd_pd(d, d, q[j]);
            }
        }
        (spill(&s), spill(&q))
    }

    #[target_feature(enable = "avx2,fma")]
    fn sum_chunks<C: Chunk>(chunks: &[C], k: f64) -> [f64; LANES] {
        let kv = _mm256_set1_pd(k);
        let mut s = [_mm256_setzero_pd(); 4];
        for chunk in chunks {
            for j in 0..4 {
                s[j] = _mm256_add_pd(s[j], _mm256_sub_pd(chunk.quad(j), kv));
            }
        }
        spill(&s)
    }

    /// Adds the tail (fewer than `LANES` values) into lanes `0..tail.len()`.
    #[inline(always)]
    fn tail_sums<S: Float>(tail: &[S], k: f64, s: &mut [f64; LANES], q: &mut [f64; LANES]) {
        for ((x, s), q) in tail.iter().zip(s).zip(q) {
            let d = x.as_f64() - k;
            *s += d;
            *q = num_traits::Float::mul_add(d, d, *q);
        }
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn sums<S: Float>(xs: &[S], k: f64) -> (f64, f64) {
        let (chunk_sums, tail) = if let Some(xs) = as_f64s(xs) {
            let (chunks, _) = xs.as_chunks::<LANES>();
            (sums_chunks(chunks, k), chunks.len() * LANES)
        } else if let Some(xs) = as_f32s(xs) {
            let (chunks, _) = xs.as_chunks::<LANES>();
            (sums_chunks(chunks, k), chunks.len() * LANES)
        } else {
            return super::sums_body::<S, true>(xs, k);
        };
        let (mut s, mut q) = chunk_sums;
        tail_sums(xs.get(tail..).unwrap_or(&[]), k, &mut s, &mut q);
        (fold_lanes(s), fold_lanes(q))
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn sum<S: Float>(xs: &[S], k: f64) -> f64 {
        let (mut s, tail) = if let Some(xs) = as_f64s(xs) {
            let (chunks, _) = xs.as_chunks::<LANES>();
            (sum_chunks(chunks, k), chunks.len() * LANES)
        } else if let Some(xs) = as_f32s(xs) {
            let (chunks, _) = xs.as_chunks::<LANES>();
            (sum_chunks(chunks, k), chunks.len() * LANES)
        } else {
            return super::sum_body::<S>(xs, k);
        };
        for (x, s) in xs.get(tail..).unwrap_or(&[]).iter().zip(&mut s) {
            *s += x.as_f64() - k;
        }
        fold_lanes(s)
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn rows<S: Float>(
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

/// `Σ (x − k)` over `xs`.
#[inline]
pub(crate) fn shifted_sum<S: Float>(path: Path, xs: &[S], k: f64) -> f64 {
    match path {
        Path::Portable => sum_body::<S>(xs, k),
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        // SAFETY: `Path::Avx2Fma` exists only when `detect` found AVX2 and
        // FMA on this CPU, which is all `avx2::sum` requires.
        Path::Avx2Fma => unsafe { avx2::sum(xs, k) },
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
                assert_eq!(shifted_sum(path, &xs, k), s, "n = {n}");
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
    }
}
