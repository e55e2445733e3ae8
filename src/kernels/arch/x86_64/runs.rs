//! Many short runs' shifted sums in one call (`portable::runs_body`) in
//! AVX2 registers, two runs side by side.
//!
//! A run's sums are two chains of additions per sum (two sets of four
//! lanes): alone, a run waits on its chains' latency, and rows of 128
//! `f32` were summed at 0.23 of a plain sum's speed in cache. Two runs at
//! a time give the core twice the independent work, each run's values
//! going through the same operations in the same order as alone, so the
//! sums are those of the portable loop, bit for bit.
//!
//! Every function here is `unsafe`: the caller must have checked that the
//! CPU has AVX2, FMA and F16C (`Path::Avx2Fma`).

#![allow(
    clippy::inline_always,
    reason = "the loop must inline into the `#[target_feature]` function"
)]

use super::quad::Quad;
use crate::Element;
use crate::float::Elements;
use core::arch::x86_64::{
    __m256d, _mm_add_pd, _mm_add_sd, _mm_cvtsd_f64, _mm_unpackhi_pd, _mm256_add_pd,
    _mm256_castpd256_pd128, _mm256_extractf128_pd, _mm256_fmadd_pd, _mm256_set1_pd,
    _mm256_setzero_pd, _mm256_sub_pd,
};

/// `s[j]`, `q[j]`: `Σd` and `Σd²` of the `j`-th `run`-long chunk of `xs`
/// about its first value, as `portable::runs_body::<S, true>` sums them
/// (a partial run at the end is left out).
///
/// # Safety
///
/// The CPU must have AVX2, FMA and F16C.
#[target_feature(enable = "avx2,fma,f16c")]
pub(in crate::kernels::arch) unsafe fn runs<S: Element>(
    xs: &[S],
    run: usize,
    s: &mut [f64],
    q: &mut [f64],
) {
    match S::elements(xs) {
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::F64(xs) => unsafe { runs_typed(xs, run, s, q) },
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::F32(xs) => unsafe { runs_typed(xs, run, s, q) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::F16(xs) => unsafe { runs_typed(xs, run, s, q) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::Bf16(xs) => unsafe { runs_typed(xs, run, s, q) },
    }
}

/// [`runs`] with the type known: the runs two at a time, and the last
/// one alone when their number is odd.
///
/// # Safety
///
/// As [`runs`].
#[inline(always)]
unsafe fn runs_typed<S: Quad>(xs: &[S], run: usize, s: &mut [f64], q: &mut [f64]) {
    if run == 0 {
        return;
    }
    let rows = (xs.len() / run).min(s.len()).min(q.len());
    let (xs, s, q) = (&xs[..rows * run], &mut s[..rows], &mut q[..rows]);
    let pairs = xs
        .chunks_exact(2 * run)
        .zip(s.chunks_exact_mut(2).zip(q.chunks_exact_mut(2)));
    for (x, (s, q)) in pairs {
        let (a, b) = x.split_at(run);
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        let [(sa, qa), (sb, qb)] = unsafe { sums_of([a, b]) };
        s.copy_from_slice(&[sa, sb]);
        q.copy_from_slice(&[qa, qb]);
    }
    if rows % 2 == 1
        && let (Some(last), Some(s), Some(q)) =
            (xs.get(xs.len() - run..), s.last_mut(), q.last_mut())
    {
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        let [(sl, ql)] = unsafe { sums_of([last]) };
        (*s, *q) = (sl, ql);
    }
}

/// `(Σd, Σd²)` of each of `R` runs of one length about its first value,
/// side by side: value `i` of a run in lane `i mod 4` of set
/// `(i / 4) mod 2` (the last one to three values with zeros in the other
/// lanes, which leave the sums' bits alone: a lane's sums are never
/// `−0`), the sets added lane by lane and the lanes folded as
/// `portable::fold_lanes` folds four.
///
/// # Safety
///
/// As [`runs`]; every run non-empty and of the first one's length.
#[inline(always)]
unsafe fn sums_of<S: Quad, const R: usize>(runs: [&[S]; R]) -> [(f64, f64); R] {
    #[allow(unused_unsafe)]
    // SAFETY: the caller guarantees AVX2, FMA and F16C, which the
    // intrinsics and `load` need; every load is of a whole array of four.
    unsafe {
        let mut len = usize::MAX;
        let mut k = [_mm256_setzero_pd(); R];
        for (k, run) in k.iter_mut().zip(runs) {
            len = len.min(run.len());
            *k = _mm256_set1_pd(run.first().map_or(0.0, |x| x.widen()));
        }
        // `s + d` as `d·1 + s`: the same bits, on the multiply-add units,
        // which leaves the adders to the widening and the shift (as the
        // slice loop does; `black_box` keeps the compiler from turning it
        // back into an add).
        let one = _mm256_set1_pd(core::hint::black_box(1.0));
        let mut s = [[_mm256_setzero_pd(); 2]; R];
        let mut q = [[_mm256_setzero_pd(); 2]; R];
        let mut eights: [&[[[S; 4]; 2]]; R] = [&[]; R];
        for (e, run) in eights.iter_mut().zip(runs) {
            *e = run[..len].as_chunks::<4>().0.as_chunks::<2>().0;
        }
        let steps = len / 8;
        for i in 0..steps {
            for r in 0..R {
                if let Some(eight) = eights[r].get(i) {
                    for (h, quad) in eight.iter().enumerate() {
                        let d = _mm256_sub_pd(S::load(quad), k[r]);
                        s[r][h] = _mm256_fmadd_pd(d, one, s[r][h]);
                        q[r][h] = _mm256_fmadd_pd(d, d, q[r][h]);
                    }
                }
            }
        }
        let mut out = [(0.0, 0.0); R];
        for r in 0..R {
            let run = runs[r];
            let tail = run.get(8 * steps..len).unwrap_or(&[]);
            for (h, part) in tail.chunks(4).enumerate().take(2) {
                // The run's first value in the empty lanes: `x − k` is 0
                // there (or NaN when `k` is not finite, which makes the
                // sums NaN as its own lane does).
                let mut quad = [run[0]; 4];
                quad[..part.len()].copy_from_slice(part);
                let d = _mm256_sub_pd(S::load(&quad), k[r]);
                s[r][h] = _mm256_fmadd_pd(d, one, s[r][h]);
                q[r][h] = _mm256_fmadd_pd(d, d, q[r][h]);
            }
            out[r] = (fold(s[r]), fold(q[r]));
        }
        out
    }
}

/// The two sets added lane by lane, then the four lanes as
/// `(l0 + l2) + (l1 + l3)`.
///
/// # Safety
///
/// The CPU must have AVX.
#[inline(always)]
unsafe fn fold(sets: [__m256d; 2]) -> f64 {
    #[allow(unused_unsafe)]
    // SAFETY: register operations; the caller guarantees AVX.
    unsafe {
        let v = _mm256_add_pd(sets[0], sets[1]);
        let half = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd::<1>(v));
        _mm_cvtsd_f64(_mm_add_sd(half, _mm_unpackhi_pd(half, half)))
    }
}
