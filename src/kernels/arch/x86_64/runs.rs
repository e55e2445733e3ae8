//! Many short runs' shifted sums in one call (`portable::runs_body`) in
//! AVX2 registers, four runs side by side.
//!
//! A run's sums are two chains of additions per sum (two sets of four
//! lanes): alone, a run waits on its chains' latency, and rows of 128
//! `f32` were summed at 0.23 of a plain sum's speed in cache. Several runs
//! at a time give the core more independent work, and runs from four
//! quarters of the call's values read memory as four streams: on the AMD
//! EPYC guest one stream read held a plain sum of 64 MiB to 7.3 ms
//! against 4.8 ms in eight streams, and a loop of this one's arithmetic
//! took 10.1 ms in one stream, 8.3 in two and 6.1 in four (5.4–6.0 with
//! a request for the line 4 KiB ahead). Each run's values go through the
//! same operations in the same order as alone, so the sums are those of
//! the portable loop, bit for bit.
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
use crate::kernels::arch::portable::{FLUSH_CHUNKS, fold_lanes};
use core::arch::x86_64::{
    __m256d, _mm_add_pd, _mm_add_sd, _mm_cvtsd_f64, _mm_unpackhi_pd, _mm256_add_pd,
    _mm256_castpd256_pd128, _mm256_extractf128_pd, _mm256_fmadd_pd, _mm256_set1_pd,
    _mm256_setzero_pd, _mm256_storeu_pd, _mm256_sub_pd,
};

/// `s[j]`, `q[j]`: `Σd` and `Σd²` of the `j`-th `run`-long chunk of `xs`
/// about its first value, as `portable::runs_body::<S, true>` sums them
/// (a partial run at the end is left out), asking for the line `ahead`
/// bytes on as each line starts (when `ahead` is not 0).
///
/// # Safety
///
/// The CPU must have AVX2, FMA and F16C.
#[target_feature(enable = "avx2,fma,f16c")]
pub(in crate::kernels::arch) unsafe fn runs<S: Element>(
    xs: &[S],
    run: usize,
    ahead: usize,
    s: &mut [f64],
    q: &mut [f64],
) {
    match S::elements(xs) {
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::F64(xs) => unsafe { runs_typed(xs, run, ahead, s, q) },
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::F32(xs) => unsafe { runs_typed(xs, run, ahead, s, q) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::F16(xs) => unsafe { runs_typed(xs, run, ahead, s, q) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::Bf16(xs) => unsafe { runs_typed(xs, run, ahead, s, q) },
    }
}

/// [`runs`] with the type known: the runs four at a time, one from each
/// quarter of `xs` (four streams through memory, as the slice loops read
/// a block), then those left over two and one at a time.
///
/// # Safety
///
/// As [`runs`].
#[inline(always)]
unsafe fn runs_typed<S: Quad>(xs: &[S], run: usize, ahead: usize, s: &mut [f64], q: &mut [f64]) {
    if run == 0 {
        return;
    }
    let rows = (xs.len() / run).min(s.len()).min(q.len());
    let quarter = rows / 4;
    let row = |r: usize| xs.get(r * run..(r + 1) * run).unwrap_or(&[]);
    for i in 0..quarter {
        let at = [i, quarter + i, 2 * quarter + i, 3 * quarter + i];
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        let sums = unsafe { sums_of(at.map(row), ahead) };
        for (&r, (sr, qr)) in at.iter().zip(sums) {
            if let (Some(s), Some(q)) = (s.get_mut(r), q.get_mut(r)) {
                (*s, *q) = (sr, qr);
            }
        }
    }
    let mut put = |r: usize, (sr, qr): (f64, f64)| {
        if let (Some(s), Some(q)) = (s.get_mut(r), q.get_mut(r)) {
            (*s, *q) = (sr, qr);
        }
    };
    let last = 4 * quarter;
    match rows - last {
        1 => {
            // SAFETY: the caller guarantees AVX2, FMA and F16C.
            let [only] = unsafe { sums_of([row(last)], ahead) };
            put(last, only);
        }
        2 | 3 => {
            // SAFETY: the caller guarantees AVX2, FMA and F16C.
            let [first, second] = unsafe { sums_of([row(last), row(last + 1)], ahead) };
            put(last, first);
            put(last + 1, second);
            if rows - last == 3 {
                // SAFETY: the caller guarantees AVX2, FMA and F16C.
                let [third] = unsafe { sums_of([row(last + 2)], ahead) };
                put(last + 2, third);
            }
        }
        _ => {}
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
unsafe fn sums_of<S: Quad, const R: usize>(runs: [&[S]; R], ahead: usize) -> [(f64, f64); R] {
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
                    // The line `ahead` bytes on, as this step starts a line.
                    let at = eight.as_ptr().cast::<u8>();
                    if ahead > 0 && (at as usize) % 64 < 8 * core::mem::size_of::<S>() {
                        crate::kernels::arch::prefetch_line::<false, u8>(at.wrapping_add(ahead));
                    }
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

/// `s[j]`, `q[j]`: `Σd` and `Σd²` of the `j`-th `run`-long chunk of `xs`
/// about its first value, each run summed as `avx2::sums` sums a slice of
/// fewer than 8192 values (sixteen lanes in four vectors, in order, the
/// lanes flushed into totals every `FLUSH_CHUNKS` chunks, the last values
/// into the first lanes one by one, the lanes folded pairwise), four runs
/// from the four quarters of `xs` side by side: rows of 256 to 8191
/// values, a layer norm's, read as four streams instead of one, with the
/// line `ahead` bytes on asked for as each line starts (when `ahead` is
/// not 0).
///
/// # Safety
///
/// The CPU must have AVX2, FMA and F16C.
#[target_feature(enable = "avx2,fma,f16c")]
pub(in crate::kernels::arch) unsafe fn long_runs<S: Element>(
    xs: &[S],
    run: usize,
    ahead: usize,
    s: &mut [f64],
    q: &mut [f64],
) {
    match S::elements(xs) {
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::F64(xs) => unsafe { long_typed(xs, run, ahead, s, q) },
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::F32(xs) => unsafe { long_typed(xs, run, ahead, s, q) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::F16(xs) => unsafe { long_typed(xs, run, ahead, s, q) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::Bf16(xs) => unsafe { long_typed(xs, run, ahead, s, q) },
    }
}

/// [`long_runs`] with the type known: four runs at a time, one from each
/// quarter of `xs`, then those left over one at a time.
///
/// # Safety
///
/// As [`long_runs`].
#[inline(always)]
unsafe fn long_typed<S: Quad>(xs: &[S], run: usize, ahead: usize, s: &mut [f64], q: &mut [f64]) {
    if run == 0 {
        return;
    }
    let rows = (xs.len() / run).min(s.len()).min(q.len());
    let quarter = rows / 4;
    let row = |r: usize| xs.get(r * run..(r + 1) * run).unwrap_or(&[]);
    let mut put = |r: usize, (sr, qr): (f64, f64)| {
        if let (Some(s), Some(q)) = (s.get_mut(r), q.get_mut(r)) {
            (*s, *q) = (sr, qr);
        }
    };
    for i in 0..quarter {
        let at = [i, quarter + i, 2 * quarter + i, 3 * quarter + i];
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        let sums = unsafe { slice_sums_of(at.map(row), ahead) };
        for (&r, sums) in at.iter().zip(sums) {
            put(r, sums);
        }
    }
    for r in 4 * quarter..rows {
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        let [sums] = unsafe { slice_sums_of([row(r)], ahead) };
        put(r, sums);
    }
}

/// `(Σd, Σd²)` of each of `R` runs (of one length, under 8192 values)
/// about its first value, side by side, each as `avx2::sums` sums it.
///
/// # Safety
///
/// As [`long_runs`]; every run non-empty.
#[inline(always)]
unsafe fn slice_sums_of<S: Quad, const R: usize>(runs: [&[S]; R], ahead: usize) -> [(f64, f64); R] {
    #[allow(unused_unsafe)]
    // SAFETY: the caller guarantees AVX2, FMA and F16C, which the
    // intrinsics and `load` need; every load is of a whole array of four,
    // every store of four `f64` into an array of sixteen.
    unsafe {
        let mut len = usize::MAX;
        let mut k = [_mm256_setzero_pd(); R];
        let mut first = [0.0; R];
        for ((k, f), run) in k.iter_mut().zip(first.iter_mut()).zip(runs) {
            len = len.min(run.len());
            *f = run.first().map_or(0.0, |x| x.widen());
            *k = _mm256_set1_pd(*f);
        }
        // `s + d` as `d·1 + s`, as `avx2::sums` adds (the same bits).
        let one = _mm256_set1_pd(core::hint::black_box(1.0));
        let zero = [[_mm256_setzero_pd(); 4]; R];
        let (mut acc_s, mut acc_q, mut tot_s, mut tot_q) = (zero, zero, zero, zero);
        let chunks = len / 16;
        let mut sixteens: [&[[[S; 4]; 4]]; R] = [&[]; R];
        for (c, run) in sixteens.iter_mut().zip(runs) {
            *c = run[..chunks * 16].as_chunks::<4>().0.as_chunks::<4>().0;
        }
        for start in (0..chunks).step_by(FLUSH_CHUNKS) {
            for c in start..chunks.min(start + FLUSH_CHUNKS) {
                for r in 0..R {
                    let Some(chunk) = sixteens[r].get(c) else {
                        continue;
                    };
                    if ahead > 0 {
                        let at = chunk.as_ptr().cast::<u8>();
                        if (at as usize) % 64 < 16 * core::mem::size_of::<S>() {
                            crate::kernels::arch::prefetch_line::<false, u8>(
                                at.wrapping_add(ahead),
                            );
                        }
                    }
                    for (j, quad) in chunk.iter().enumerate() {
                        let d = _mm256_sub_pd(S::load(quad), k[r]);
                        acc_s[r][j] = _mm256_fmadd_pd(d, one, acc_s[r][j]);
                        acc_q[r][j] = _mm256_fmadd_pd(d, d, acc_q[r][j]);
                    }
                }
            }
            // The flush: the lanes into the totals, and cleared.
            for r in 0..R {
                for j in 0..4 {
                    tot_s[r][j] = _mm256_add_pd(tot_s[r][j], acc_s[r][j]);
                    tot_q[r][j] = _mm256_add_pd(tot_q[r][j], acc_q[r][j]);
                }
            }
            acc_s = zero;
            acc_q = zero;
        }
        let mut out = [(0.0, 0.0); R];
        for r in 0..R {
            let (mut s, mut q) = ([0.0; 16], [0.0; 16]);
            for j in 0..4 {
                _mm256_storeu_pd(s[4 * j..].as_mut_ptr(), tot_s[r][j]);
                _mm256_storeu_pd(q[4 * j..].as_mut_ptr(), tot_q[r][j]);
            }
            let tail = runs[r].get(chunks * 16..len).unwrap_or(&[]);
            for ((x, s), q) in tail.iter().zip(&mut s).zip(&mut q) {
                let d = x.widen() - first[r];
                *s += d;
                *q = num_traits::Float::mul_add(d, d, *q);
            }
            out[r] = (fold_lanes(s), fold_lanes(q));
        }
        out
    }
}
