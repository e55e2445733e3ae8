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

/// Independent accumulators per sum: four AVX2 registers of four `f64`, so
/// the adds of consecutive values do not wait on each other.
pub(crate) const LANES: usize = 16;

/// Adds the lanes in a fixed pairwise order.
#[inline(always)]
fn fold_lanes(mut v: [f64; LANES]) -> f64 {
    let mut width = LANES / 2;
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
    let mut s = [0.0_f64; LANES];
    let mut q = [0.0_f64; LANES];
    let (chunks, tail) = xs.as_chunks::<LANES>();
    for chunk in chunks {
        for j in 0..LANES {
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
    let mut s = [0.0_f64; LANES];
    let (chunks, tail) = xs.as_chunks::<LANES>();
    for chunk in chunks {
        for j in 0..LANES {
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
    use crate::Float;

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn sums<S: Float>(xs: &[S], k: f64) -> (f64, f64) {
        super::sums_body::<S, true>(xs, k)
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) fn sum<S: Float>(xs: &[S], k: f64) -> f64 {
        super::sum_body::<S>(xs, k)
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
