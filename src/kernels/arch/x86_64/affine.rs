//! The normalization passes in AVX2 registers: four values at a time
//! widened to `f64` ([`Quad`]), `((x − hi)·scale + offset)·γ + β` by the
//! same operations in the same order as the portable loop (never fused),
//! and each result rounded once to the output type by vector instructions.
//!
//! Every function here is `unsafe`: the caller must have checked that the
//! CPU has AVX2, FMA and F16C (`Path::Avx2Fma`). Intrinsic calls sit in
//! `unsafe` blocks marked `allow(unused_unsafe)`, as in `avx2.rs`.

#![allow(
    clippy::inline_always,
    reason = "the loads and stores must inline into the `#[target_feature]` functions"
)]

use super::quad::{Quad, fence};
use crate::Element;
use crate::float::{Elements, ElementsMut};
use crate::kernels::affine_params::{Affine, Pass, PerValue};
use core::arch::x86_64::{
    __m256d, _mm256_add_pd, _mm256_broadcast_sd, _mm256_loadu_pd, _mm256_mul_pd, _mm256_sub_pd,
};

/// `affine_runs_body` in AVX2 registers (see `kernels::affine`).
///
/// # Safety
///
/// The CPU must have AVX2, FMA and F16C.
#[target_feature(enable = "avx2,fma,f16c")]
pub(in crate::kernels::arch) unsafe fn runs<S: Element, O: Element>(
    xs: &[S],
    run: usize,
    params: Affine<'_>,
    per_value: PerValue<'_>,
    pass: Pass,
    out: &mut [O],
) {
    match S::elements(xs) {
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::F64(xs) => unsafe { runs_into(xs, run, params, per_value, pass, out) },
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::F32(xs) => unsafe { runs_into(xs, run, params, per_value, pass, out) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::F16(xs) => unsafe { runs_into(xs, run, params, per_value, pass, out) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::Bf16(xs) => unsafe { runs_into(xs, run, params, per_value, pass, out) },
    }
}

/// [`runs`] with the input's type known: the output's.
///
/// # Safety
///
/// As [`runs`].
#[inline(always)]
unsafe fn runs_into<S: Quad, O: Element>(
    xs: &[S],
    run: usize,
    params: Affine<'_>,
    per_value: PerValue<'_>,
    pass: Pass,
    out: &mut [O],
) {
    match O::elements_mut(out) {
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        ElementsMut::F64(out) => unsafe { runs_typed(xs, run, params, per_value, pass, out) },
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        ElementsMut::F32(out) => unsafe { runs_typed(xs, run, params, per_value, pass, out) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        ElementsMut::F16(out) => unsafe { runs_typed(xs, run, params, per_value, pass, out) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        ElementsMut::Bf16(out) => unsafe { runs_typed(xs, run, params, per_value, pass, out) },
    }
}

/// [`runs`] with both types known: `γ` and `β` present or not.
///
/// # Safety
///
/// As [`runs`].
#[inline(always)]
unsafe fn runs_typed<S: Quad, O: Quad>(
    xs: &[S],
    run: usize,
    params: Affine<'_>,
    per_value: PerValue<'_>,
    pass: Pass,
    out: &mut [O],
) {
    match (per_value.gamma, per_value.beta) {
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        (Some(g), Some(b)) => unsafe {
            runs_with::<S, O, true, true>(xs, run, params, g, b, pass, out);
        },
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        (Some(g), None) => unsafe {
            runs_with::<S, O, true, false>(xs, run, params, g, &[], pass, out);
        },
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        (None, Some(b)) => unsafe {
            runs_with::<S, O, false, true>(xs, run, params, &[], b, pass, out);
        },
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        (None, None) => unsafe {
            runs_with::<S, O, false, false>(xs, run, params, &[], &[], pass, out);
        },
    }
}

/// The loop of [`runs`]: each run four values at a time, and its last
/// one to three values through a buffer of four.
///
/// # Safety
///
/// As [`runs`].
#[inline(always)]
unsafe fn runs_with<S: Quad, O: Quad, const G: bool, const B: bool>(
    xs: &[S],
    run: usize,
    params: Affine<'_>,
    gamma: &[f64],
    beta: &[f64],
    pass: Pass,
    out: &mut [O],
) {
    let entries = params.len();
    if run == 0 || entries == 0 || (G && gamma.len() < run) || (B && beta.len() < run) {
        return;
    }
    let (gamma, beta) = (
        gamma.get(..run).unwrap_or(&[]),
        beta.get(..run).unwrap_or(&[]),
    );
    let (gq, g_tail) = gamma.as_chunks::<4>();
    let (bq, b_tail) = beta.as_chunks::<4>();
    let entries = params.hi[..entries]
        .iter()
        .zip(&params.scale[..entries])
        .zip(&params.offset[..entries])
        .cycle();
    let runs = xs.chunks_exact(run).zip(out.chunks_exact_mut(run));
    #[allow(unused_unsafe)]
    // SAFETY: the caller guarantees AVX2, FMA and F16C, which the
    // intrinsics, `load` and `store` need; every load and store is of a
    // whole array of four.
    unsafe {
        for ((x, y), ((hi, scale), offset)) in runs.zip(entries) {
            let (hi, scale, offset) = (
                _mm256_broadcast_sd(hi),
                _mm256_broadcast_sd(scale),
                _mm256_broadcast_sd(offset),
            );
            let entry = [hi, scale, offset];
            let (xq, x_tail) = x.as_chunks::<4>();
            let (yq, y_tail) = y.as_chunks_mut::<4>();
            let (yo, y_odd) = yq.as_chunks_mut::<2>();
            for (j, y) in yo.iter_mut().enumerate() {
                let (first, second) = (2 * j, 2 * j + 1);
                if let (Some(x0), Some(x1)) = (xq.get(first), xq.get(second)) {
                    ask_ahead(pass, x0);
                    let (g0, g1) = (gq.get(first), gq.get(second));
                    let (b0, b1) = (bq.get(first), bq.get(second));
                    let v0 = run_value::<G, B>(S::load(x0), entry, g0, b0);
                    let v1 = run_value::<G, B>(S::load(x1), entry, g1, b1);
                    O::store_pair(v0, v1, pass.stream, y);
                }
            }
            if let (Some(y), Some(x)) = (y_odd.first_mut(), xq.last()) {
                let i = xq.len() - 1;
                O::store(
                    run_value::<G, B>(S::load(x), entry, gq.get(i), bq.get(i)),
                    pass.stream,
                    y,
                );
            }
            if let Some(&first) = x_tail.first() {
                let k = x_tail.len().min(y_tail.len());
                let mut xb = [first; 4];
                xb[..k].copy_from_slice(&x_tail[..k]);
                let (mut gb, mut bb) = ([1.0; 4], [0.0; 4]);
                gb[..k.min(g_tail.len())].copy_from_slice(&g_tail[..k.min(g_tail.len())]);
                bb[..k.min(b_tail.len())].copy_from_slice(&b_tail[..k.min(b_tail.len())]);
                let mut yb = [O::narrow(0.0); 4];
                O::store(
                    run_value::<G, B>(S::load(&xb), entry, Some(&gb), Some(&bb)),
                    false,
                    &mut yb,
                );
                y_tail[..k].copy_from_slice(&yb[..k]);
            }
        }
        if pass.stream {
            fence();
        }
    }
}

/// Asks, when `pass` reads ahead, for the cache line `pass.ahead` bytes
/// past the eight values from `x` if they start a line here: one request
/// per line of input, spread over the pass.
#[inline(always)]
fn ask_ahead<S>(pass: Pass, x: &[S; 4]) {
    let step = 8 * core::mem::size_of::<S>();
    let at = x.as_ptr().cast::<u8>();
    if pass.ahead > 0 && (at as usize) % 64 < step {
        crate::kernels::arch::prefetch_line::<false, u8>(at.wrapping_add(pass.ahead));
    }
}

/// Four values of a run: `((v − hi)·scale + offset)·γ + β`, with `γ`
/// (`G`) and `β` (`B`) or not; `entry` is the run's `hi`, `scale` and
/// `offset` in every lane. (A function, not a closure: a
/// closure is compiled apart from the `#[target_feature]` function that
/// calls it, without AVX, and was called for every four values.)
///
/// # Safety
///
/// The CPU must have AVX and FMA.
#[inline(always)]
unsafe fn run_value<const G: bool, const B: bool>(
    v: __m256d,
    entry: [__m256d; 3],
    gamma: Option<&[f64; 4]>,
    beta: Option<&[f64; 4]>,
) -> __m256d {
    let [hi, scale, offset] = entry;
    #[allow(unused_unsafe)]
    // SAFETY: the caller guarantees AVX and FMA; `gamma` and `beta` hold
    // the 32 bytes each load reads.
    unsafe {
        let mut z = _mm256_add_pd(_mm256_mul_pd(_mm256_sub_pd(v, hi), scale), offset);
        if G && let Some(g) = gamma {
            z = _mm256_mul_pd(z, _mm256_loadu_pd(g.as_ptr()));
        }
        if B && let Some(b) = beta {
            z = _mm256_add_pd(z, _mm256_loadu_pd(b.as_ptr()));
        }
        z
    }
}

/// Four values of a row: `(v − hi)·scale + offset` with the four lanes'
/// entries `[hi, scale, offset]`.
///
/// # Safety
///
/// The CPU must have AVX and FMA.
#[inline(always)]
unsafe fn lane_value(v: __m256d, entries: [&[f64; 4]; 3]) -> __m256d {
    let [hi, scale, offset] = entries;
    #[allow(unused_unsafe)]
    // SAFETY: the caller guarantees AVX and FMA; each entry holds the 32
    // bytes its load reads.
    unsafe {
        let centred = _mm256_sub_pd(v, _mm256_loadu_pd(hi.as_ptr()));
        _mm256_add_pd(
            _mm256_mul_pd(centred, _mm256_loadu_pd(scale.as_ptr())),
            _mm256_loadu_pd(offset.as_ptr()),
        )
    }
}

/// `affine_lanes_body` in AVX2 registers (see `kernels::affine`).
///
/// # Safety
///
/// The CPU must have AVX2, FMA and F16C.
#[target_feature(enable = "avx2,fma,f16c")]
pub(in crate::kernels::arch) unsafe fn lanes<S: Element, O: Element>(
    xs: &[S],
    params: Affine<'_>,
    pass: Pass,
    out: &mut [O],
) {
    match S::elements(xs) {
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::F64(xs) => unsafe { lanes_into(xs, params, pass, out) },
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::F32(xs) => unsafe { lanes_into(xs, params, pass, out) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::F16(xs) => unsafe { lanes_into(xs, params, pass, out) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::Bf16(xs) => unsafe { lanes_into(xs, params, pass, out) },
    }
}

/// [`lanes`] with the input's type known: the output's.
///
/// # Safety
///
/// As [`lanes`].
#[inline(always)]
unsafe fn lanes_into<S: Quad, O: Element>(xs: &[S], params: Affine<'_>, pass: Pass, out: &mut [O]) {
    match O::elements_mut(out) {
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        ElementsMut::F64(out) => unsafe { lanes_typed(xs, params, pass, out) },
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        ElementsMut::F32(out) => unsafe { lanes_typed(xs, params, pass, out) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        ElementsMut::F16(out) => unsafe { lanes_typed(xs, params, pass, out) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        ElementsMut::Bf16(out) => unsafe { lanes_typed(xs, params, pass, out) },
    }
}

/// The loop of [`lanes`]: each row four values at a time against four
/// entries of each parameter, its last one to three through a buffer.
///
/// # Safety
///
/// As [`lanes`].
#[inline(always)]
unsafe fn lanes_typed<S: Quad, O: Quad>(xs: &[S], params: Affine<'_>, pass: Pass, out: &mut [O]) {
    let n = params.len();
    if n == 0 {
        return;
    }
    let (hq, h_tail) = params.hi[..n].as_chunks::<4>();
    let (sq, s_tail) = params.scale[..n].as_chunks::<4>();
    let (cq, c_tail) = params.offset[..n].as_chunks::<4>();
    let quads = hq.iter().zip(sq).zip(cq);
    #[allow(unused_unsafe)]
    // SAFETY: the caller guarantees AVX2, FMA and F16C, which the
    // intrinsics, `load` and `store` need; every load and store is of a
    // whole array of four.
    unsafe {
        for (x, y) in xs.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
            let (xq, x_tail) = x.as_chunks::<4>();
            let (yq, y_tail) = y.as_chunks_mut::<4>();
            let (yo, y_odd) = yq.as_chunks_mut::<2>();
            let mut entries = quads.clone();
            let mut xs = xq.iter();
            for y in yo {
                if let (Some(x0), Some(x1), Some(((h0, s0), c0)), Some(((h1, s1), c1))) =
                    (xs.next(), xs.next(), entries.next(), entries.next())
                {
                    ask_ahead(pass, x0);
                    let v = lane_value(S::load(x0), [h0, s0, c0]);
                    let w = lane_value(S::load(x1), [h1, s1, c1]);
                    O::store_pair(v, w, pass.stream, y);
                }
            }
            if let (Some(y), Some(x), Some(((h, s), c))) =
                (y_odd.first_mut(), xs.next(), entries.next())
            {
                O::store(lane_value(S::load(x), [h, s, c]), pass.stream, y);
            }
            if let Some(&first) = x_tail.first() {
                let k = x_tail.len().min(y_tail.len()).min(h_tail.len());
                let k = k.min(s_tail.len()).min(c_tail.len());
                let mut xb = [first; 4];
                xb[..k].copy_from_slice(&x_tail[..k]);
                let (mut hb, mut sb, mut cb) = ([0.0; 4], [0.0; 4], [0.0; 4]);
                hb[..k].copy_from_slice(&h_tail[..k]);
                sb[..k].copy_from_slice(&s_tail[..k]);
                cb[..k].copy_from_slice(&c_tail[..k]);
                let mut yb = [O::narrow(0.0); 4];
                O::store(lane_value(S::load(&xb), [&hb, &sb, &cb]), false, &mut yb);
                y_tail[..k].copy_from_slice(&yb[..k]);
            }
        }
        if pass.stream {
            fence();
        }
    }
}
