//! The normalization passes in AVX2 registers: four values at a time
//! widened to `f64`, `((x − hi)·scale + offset)·γ + β` by the same
//! operations in the same order as the portable loop (never fused), and
//! each result rounded once to the output type by vector instructions.
//!
//! Rounding to half precision is the expensive part: `Element::narrow`
//! takes the bits apart value by value, which held `f16` outputs to a
//! thirtieth of a plain copy's speed. Here an `f64` is rounded to the
//! format's precision by adding and subtracting a constant of its binade
//! (a vector operation, see [`round_to`]), after which the conversion to
//! `f32` and on to `f16` (F16C) or `bf16` (its upper half) is exact: the
//! bits of one correct rounding, those of `Element::narrow`.
//!
//! Every function here is `unsafe`: the caller must have checked that the
//! CPU has AVX2, FMA and F16C (`Path::Avx2Fma`). Intrinsic calls sit in
//! `unsafe` blocks marked `allow(unused_unsafe)`, as in `avx2.rs`.

#![allow(
    clippy::inline_always,
    reason = "the loads and stores must inline into the `#[target_feature]` functions"
)]

use crate::Element;
use crate::float::{Elements, ElementsMut};
use crate::kernels::affine::{Affine, PerValue};
#[cfg(feature = "half")]
use core::arch::x86_64::{
    __m128i, _mm_castps_si128, _mm_castsi128_ps, _mm_cvtepu16_epi32, _mm_cvtph_ps, _mm_cvtps_ph,
    _mm_loadl_epi64, _mm_packus_epi32, _mm_slli_epi32, _mm_srli_epi32, _mm_storel_epi64,
    _mm_storeu_si128, _mm_unpacklo_epi64, _mm256_and_pd, _mm256_max_pd, _mm256_min_pd,
    _mm256_or_pd, _mm256_set1_pd,
};
use core::arch::x86_64::{
    __m256d, _mm_loadu_ps, _mm_storeu_ps, _mm256_add_pd, _mm256_broadcast_sd, _mm256_cvtpd_ps,
    _mm256_cvtps_pd, _mm256_loadu_pd, _mm256_mul_pd, _mm256_storeu_pd, _mm256_sub_pd,
};

/// An element type read and written four values at a time, as a vector
/// of four `f64`.
trait Quad: Element {
    /// The four values, widened exactly.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 and F16C.
    unsafe fn load(x: &[Self; 4]) -> __m256d;

    /// The four values of `v`, each rounded once to this type (ties to
    /// even), as `Element::narrow` rounds them.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 and F16C.
    unsafe fn store(v: __m256d, out: &mut [Self; 4]);

    /// [`store`](Quad::store) of two vectors, eight values.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 and F16C.
    #[inline(always)]
    unsafe fn store_pair(v: __m256d, w: __m256d, out: &mut [[Self; 4]; 2]) {
        let [lo, hi] = out;
        // SAFETY: the caller guarantees AVX2 and F16C.
        unsafe {
            Self::store(v, lo);
            Self::store(w, hi);
        }
    }
}

impl Quad for f64 {
    #[inline(always)]
    unsafe fn load(x: &[f64; 4]) -> __m256d {
        // SAFETY: `x` holds the 32 bytes the unaligned load reads; the
        // caller guarantees AVX.
        unsafe { _mm256_loadu_pd(x.as_ptr()) }
    }

    #[inline(always)]
    unsafe fn store(v: __m256d, out: &mut [f64; 4]) {
        // SAFETY: `out` holds the 32 bytes the unaligned store writes.
        unsafe { _mm256_storeu_pd(out.as_mut_ptr(), v) };
    }
}

impl Quad for f32 {
    #[inline(always)]
    unsafe fn load(x: &[f32; 4]) -> __m256d {
        // SAFETY: `x` holds the 16 bytes the load reads; the caller
        // guarantees AVX.
        unsafe { _mm256_cvtps_pd(_mm_loadu_ps(x.as_ptr())) }
    }

    #[inline(always)]
    unsafe fn store(v: __m256d, out: &mut [f32; 4]) {
        // SAFETY: `out` holds the 16 bytes the store writes; the
        // conversion rounds to nearest, as `x as f32` does.
        unsafe { _mm_storeu_ps(out.as_mut_ptr(), _mm256_cvtpd_ps(v)) };
    }
}

#[cfg(feature = "half")]
impl Quad for half::f16 {
    #[inline(always)]
    unsafe fn load(x: &[half::f16; 4]) -> __m256d {
        // SAFETY: `x` holds the 8 bytes `loadl` reads; the caller
        // guarantees AVX and F16C.
        unsafe { _mm256_cvtps_pd(_mm_cvtph_ps(_mm_loadl_epi64(x.as_ptr().cast()))) }
    }

    #[inline(always)]
    unsafe fn store(v: __m256d, out: &mut [half::f16; 4]) {
        // SAFETY: `out` holds the 8 bytes `storel` writes; the caller
        // guarantees AVX and F16C.
        unsafe { _mm_storel_epi64(out.as_mut_ptr().cast(), to_f16(v)) }
    }

    #[inline(always)]
    unsafe fn store_pair(v: __m256d, w: __m256d, out: &mut [[half::f16; 4]; 2]) {
        // SAFETY: `out` holds the 16 bytes the store writes; the caller
        // guarantees AVX and F16C. (One store of the two conversions
        // joined: stored alone, each conversion became `vcvtps2ph` to
        // memory, which on AMD EPYC (Zen 3) ran at a sixth of the speed
        // of the conversion to a register.)
        unsafe {
            let both = _mm_unpacklo_epi64(to_f16(v), to_f16(w));
            _mm_storeu_si128(out.as_flattened_mut().as_mut_ptr().cast(), both);
        }
    }
}

/// The four values of `v` rounded to `f16`, in the low 64 bits.
///
/// # Safety
///
/// The CPU must have AVX and F16C.
#[cfg(feature = "half")]
#[inline(always)]
unsafe fn to_f16(v: __m256d) -> __m128i {
    // SAFETY: the caller guarantees AVX and F16C. After `round_to`, every
    // value is an `f16` value (or beyond its range, where F16C's
    // conversion gives ±∞, or NaN), so both conversions are exact.
    unsafe { _mm_cvtps_ph::<0>(_mm256_cvtpd_ps(round_to::<10, -14, 17>(v))) }
}

#[cfg(feature = "half")]
impl Quad for half::bf16 {
    #[inline(always)]
    unsafe fn load(x: &[half::bf16; 4]) -> __m256d {
        // SAFETY: `x` holds the 8 bytes `loadl` reads; bfloat16 is the
        // upper half of an `f32`. The caller guarantees AVX2.
        unsafe {
            let wide = _mm_slli_epi32::<16>(_mm_cvtepu16_epi32(_mm_loadl_epi64(x.as_ptr().cast())));
            _mm256_cvtps_pd(_mm_castsi128_ps(wide))
        }
    }

    #[inline(always)]
    unsafe fn store(v: __m256d, out: &mut [half::bf16; 4]) {
        // SAFETY: `out` holds the 8 bytes `storel` writes. After
        // `round_to`, every value is a bfloat16 value (or beyond its
        // range, which the conversion to `f32` makes ±∞, or NaN, whose
        // conversion keeps the payload's leading bits and sets the quiet
        // bit, as `Element::narrow` does), so its `f32` is exact and its
        // upper half is the bfloat16.
        unsafe {
            let r = round_to::<7, -126, 130>(v);
            let bits = _mm_srli_epi32::<16>(_mm_castps_si128(_mm256_cvtpd_ps(r)));
            _mm_storel_epi64(out.as_mut_ptr().cast(), _mm_packus_epi32(bits, bits));
        }
    }
}

/// `v` rounded to a binary format of `MAN` fraction bits and least normal
/// exponent `EMIN`, to nearest with ties to even; beyond the format's
/// range (from the binade `2^CLAMP` up) the result is only as large, and
/// the narrower conversion makes it ±∞.
///
/// For `|v|` in the binade `[2^k, 2^(k+1))`, `k ≥ EMIN`, the format's
/// quantum is `q = 2^(k − MAN)`; below `2^EMIN` it is `2^(EMIN − MAN)`
/// (subnormals). With `C = 1.5·2⁵²·q`, `v + C` lies in `C`'s binade,
/// whose spacing is `q`, for either sign of `v`: the addition rounds `v`
/// to a multiple of `q`, ties to the even multiple (`C/q` is even), and
/// subtracting `C` again is exact. The binade comes from `v`'s exponent
/// field, held to `[2^EMIN, 2^CLAMP]` (∞ and NaN have the largest field,
/// so `C` stays finite). A value that rounds to zero takes `v`'s sign
/// back; NaN passes through with its payload (every operation returns its
/// NaN operand).
///
/// # Safety
///
/// The CPU must have AVX.
#[cfg(feature = "half")]
#[inline(always)]
unsafe fn round_to<const MAN: i32, const EMIN: i32, const CLAMP: i32>(v: __m256d) -> __m256d {
    #[allow(unused_unsafe)]
    // SAFETY: register operations; the caller guarantees AVX.
    unsafe {
        let sign = _mm256_set1_pd(-0.0);
        // The binade's power of two: the exponent field alone (∞ for ∞
        // and NaN), held between the format's least normal exponent and
        // `CLAMP`.
        let binade = _mm256_and_pd(v, _mm256_set1_pd(f64::INFINITY));
        let binade = _mm256_max_pd(binade, _mm256_set1_pd(const { pow2(EMIN) }));
        let binade = _mm256_min_pd(binade, _mm256_set1_pd(const { pow2(CLAMP) }));
        let c = _mm256_mul_pd(binade, _mm256_set1_pd(const { 1.5 * pow2(52 - MAN) }));
        let rounded = _mm256_sub_pd(_mm256_add_pd(v, c), c);
        _mm256_or_pd(rounded, _mm256_and_pd(v, sign))
    }
}

/// `2^e` for a normal exponent `e`.
#[cfg(feature = "half")]
#[allow(
    clippy::cast_sign_loss,
    reason = "a biased exponent, positive for normal numbers"
)]
const fn pow2(e: i32) -> f64 {
    f64::from_bits(((e + 1023) as u64) << 52)
}

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
    out: &mut [O],
) {
    match S::elements(xs) {
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::F64(xs) => unsafe { runs_into(xs, run, params, per_value, out) },
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::F32(xs) => unsafe { runs_into(xs, run, params, per_value, out) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::F16(xs) => unsafe { runs_into(xs, run, params, per_value, out) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::Bf16(xs) => unsafe { runs_into(xs, run, params, per_value, out) },
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
    out: &mut [O],
) {
    match O::elements_mut(out) {
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        ElementsMut::F64(out) => unsafe { runs_typed(xs, run, params, per_value, out) },
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        ElementsMut::F32(out) => unsafe { runs_typed(xs, run, params, per_value, out) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        ElementsMut::F16(out) => unsafe { runs_typed(xs, run, params, per_value, out) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        ElementsMut::Bf16(out) => unsafe { runs_typed(xs, run, params, per_value, out) },
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
    out: &mut [O],
) {
    match (per_value.gamma, per_value.beta) {
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        (Some(g), Some(b)) => unsafe { runs_with::<S, O, true, true>(xs, run, params, g, b, out) },
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        (Some(g), None) => unsafe { runs_with::<S, O, true, false>(xs, run, params, g, &[], out) },
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        (None, Some(b)) => unsafe { runs_with::<S, O, false, true>(xs, run, params, &[], b, out) },
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        (None, None) => unsafe { runs_with::<S, O, false, false>(xs, run, params, &[], &[], out) },
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
                    let (g0, g1) = (gq.get(first), gq.get(second));
                    let (b0, b1) = (bq.get(first), bq.get(second));
                    let v0 = run_value::<G, B>(S::load(x0), entry, g0, b0);
                    let v1 = run_value::<G, B>(S::load(x1), entry, g1, b1);
                    O::store_pair(v0, v1, y);
                }
            }
            if let (Some(y), Some(x)) = (y_odd.first_mut(), xq.last()) {
                let i = xq.len() - 1;
                O::store(
                    run_value::<G, B>(S::load(x), entry, gq.get(i), bq.get(i)),
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
                    &mut yb,
                );
                y_tail[..k].copy_from_slice(&yb[..k]);
            }
        }
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
    out: &mut [O],
) {
    match S::elements(xs) {
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::F64(xs) => unsafe { lanes_into(xs, params, out) },
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::F32(xs) => unsafe { lanes_into(xs, params, out) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::F16(xs) => unsafe { lanes_into(xs, params, out) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        Elements::Bf16(xs) => unsafe { lanes_into(xs, params, out) },
    }
}

/// [`lanes`] with the input's type known: the output's.
///
/// # Safety
///
/// As [`lanes`].
#[inline(always)]
unsafe fn lanes_into<S: Quad, O: Element>(xs: &[S], params: Affine<'_>, out: &mut [O]) {
    match O::elements_mut(out) {
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        ElementsMut::F64(out) => unsafe { lanes_typed(xs, params, out) },
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        ElementsMut::F32(out) => unsafe { lanes_typed(xs, params, out) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        ElementsMut::F16(out) => unsafe { lanes_typed(xs, params, out) },
        #[cfg(feature = "half")]
        // SAFETY: the caller guarantees AVX2, FMA and F16C.
        ElementsMut::Bf16(out) => unsafe { lanes_typed(xs, params, out) },
    }
}

/// The loop of [`lanes`]: each row four values at a time against four
/// entries of each parameter, its last one to three through a buffer.
///
/// # Safety
///
/// As [`lanes`].
#[inline(always)]
unsafe fn lanes_typed<S: Quad, O: Quad>(xs: &[S], params: Affine<'_>, out: &mut [O]) {
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
                    let v = lane_value(S::load(x0), [h0, s0, c0]);
                    let w = lane_value(S::load(x1), [h1, s1, c1]);
                    O::store_pair(v, w, y);
                }
            }
            if let (Some(y), Some(x), Some(((h, s), c))) =
                (y_odd.first_mut(), xs.next(), entries.next())
            {
                O::store(lane_value(S::load(x), [h, s, c]), y);
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
                O::store(lane_value(S::load(&xb), [&hb, &sb, &cb]), &mut yb);
                y_tail[..k].copy_from_slice(&yb[..k]);
            }
        }
    }
}
