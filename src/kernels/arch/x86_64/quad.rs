//! Four values of an element type as a vector of four `f64`: the loads
//! that widen them exactly and the stores that round them once, as
//! `Element::widen` and `Element::narrow` do, for the AVX2 loops.
//!
//! Rounding to half precision is the expensive part: `Element::narrow`
//! takes the bits apart value by value, which held `f16` outputs to a
//! thirtieth of a plain copy's speed. Here an `f64` is rounded to the
//! format's precision by adding and subtracting a constant of its binade
//! (a vector operation, `round_to`), after which the conversion to
//! `f32` and on to `f16` (F16C) or `bf16` (its upper half) is exact: the
//! bits of one correct rounding, those of `Element::narrow`.

#![allow(
    clippy::inline_always,
    reason = "the loads and stores must inline into the `#[target_feature]` functions"
)]

use crate::Element;
use core::arch::x86_64::{
    __m128i, __m256d, _mm_castps_si128, _mm_loadu_ps, _mm_sfence, _mm_storeu_si128,
    _mm_stream_si128, _mm256_cvtpd_ps, _mm256_cvtps_pd, _mm256_loadu_pd, _mm256_storeu_pd,
    _mm256_stream_pd,
};
#[cfg(feature = "half")]
use core::arch::x86_64::{
    _mm_castsi128_ps, _mm_cvtepu16_epi32, _mm_cvtph_ps, _mm_cvtps_ph, _mm_cvtsi128_si64,
    _mm_loadl_epi64, _mm_packus_epi32, _mm_slli_epi32, _mm_srli_epi32, _mm_storel_epi64,
    _mm_stream_si64, _mm_unpacklo_epi64, _mm256_add_pd, _mm256_and_pd, _mm256_max_pd,
    _mm256_min_pd, _mm256_mul_pd, _mm256_or_pd, _mm256_set1_pd, _mm256_sub_pd,
};

/// An element type read and written four values at a time, as a vector
/// of four `f64`.
pub(super) trait Quad: Element {
    /// The four values, widened exactly.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 and F16C.
    unsafe fn load(x: &[Self; 4]) -> __m256d;

    /// The four values of `v`, each rounded once to this type (ties to
    /// even), as `Element::narrow` rounds them; with `nt`, by a
    /// non-temporal store where `out` is aligned for one (see [`Put`]).
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 and F16C.
    unsafe fn store(v: __m256d, nt: bool, out: &mut [Self; 4]);

    /// [`store`](Quad::store) of two vectors, eight values.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 and F16C.
    #[inline(always)]
    unsafe fn store_pair(v: __m256d, w: __m256d, nt: bool, out: &mut [[Self; 4]; 2]) {
        let [lo, hi] = out;
        // SAFETY: the caller guarantees AVX2 and F16C.
        unsafe {
            Self::store(v, nt, lo);
            Self::store(w, nt, hi);
        }
    }
}

/// Where a store goes: bytes at a pointer, written plainly or, when asked
/// (the flag) and the pointer is aligned to them, by a non-temporal store, which writes
/// the line to memory without reading it first (a plain store fetches
/// the line it writes: a third of a normalization's traffic from memory,
/// which a copy of the same tensor by `memcpy` does not pay). A loop that
/// stores past the caches ends with [`fence`].
#[derive(Clone, Copy)]
struct Put(*mut u8, bool);

impl Put {
    /// Whether this store goes past the caches: asked, and the pointer
    /// aligned to `bytes`.
    #[inline(always)]
    fn streams(self, bytes: usize) -> bool {
        self.1 && (self.0 as usize).is_multiple_of(bytes)
    }

    /// 32 bytes.
    ///
    /// # Safety
    ///
    /// `p` valid for 32 bytes of writes; the CPU must have AVX.
    #[inline(always)]
    unsafe fn bytes32(self, v: __m256d) {
        // SAFETY: the caller guarantees the 32 bytes and AVX; the
        // non-temporal store's alignment is checked.
        unsafe {
            if self.streams(32) {
                _mm256_stream_pd(self.0.cast(), v);
            } else {
                _mm256_storeu_pd(self.0.cast(), v);
            }
        }
    }

    /// 16 bytes.
    ///
    /// # Safety
    ///
    /// `p` valid for 16 bytes of writes; the CPU must have SSE2.
    #[inline(always)]
    unsafe fn bytes16(self, v: __m128i) {
        // SAFETY: the caller guarantees the 16 bytes; the non-temporal
        // store's alignment is checked.
        unsafe {
            if self.streams(16) {
                _mm_stream_si128(self.0.cast(), v);
            } else {
                _mm_storeu_si128(self.0.cast(), v);
            }
        }
    }

    /// The low 8 bytes of `v`.
    ///
    /// # Safety
    ///
    /// `p` valid for 8 bytes of writes; the CPU must have SSE2.
    #[cfg(feature = "half")]
    #[inline(always)]
    unsafe fn bytes8(self, v: __m128i) {
        // SAFETY: the caller guarantees the 8 bytes; the non-temporal
        // store's alignment is checked.
        unsafe {
            if self.streams(8) {
                _mm_stream_si64(self.0.cast(), _mm_cvtsi128_si64(v));
            } else {
                _mm_storel_epi64(self.0.cast(), v);
            }
        }
    }
}

/// Orders a loop's non-temporal stores before whatever follows it.
///
/// # Safety
///
/// The CPU must have SSE.
#[inline(always)]
pub(super) unsafe fn fence() {
    // SAFETY: the caller guarantees SSE (baseline on x86-64).
    unsafe { _mm_sfence() }
}

impl Quad for f64 {
    #[inline(always)]
    unsafe fn load(x: &[f64; 4]) -> __m256d {
        // SAFETY: `x` holds the 32 bytes the unaligned load reads; the
        // caller guarantees AVX.
        unsafe { _mm256_loadu_pd(x.as_ptr()) }
    }

    #[inline(always)]
    unsafe fn store(v: __m256d, nt: bool, out: &mut [f64; 4]) {
        // SAFETY: `out` holds the 32 bytes the store writes.
        unsafe { Put(out.as_mut_ptr().cast(), nt).bytes32(v) };
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
    unsafe fn store(v: __m256d, nt: bool, out: &mut [f32; 4]) {
        // SAFETY: `out` holds the 16 bytes the store writes; the
        // conversion rounds to nearest, as `x as f32` does.
        unsafe {
            let single = _mm_castps_si128(_mm256_cvtpd_ps(v));
            Put(out.as_mut_ptr().cast(), nt).bytes16(single);
        }
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
    unsafe fn store(v: __m256d, nt: bool, out: &mut [half::f16; 4]) {
        // SAFETY: `out` holds the 8 bytes the store writes; the caller
        // guarantees AVX and F16C.
        unsafe { Put(out.as_mut_ptr().cast(), nt).bytes8(to_f16(v)) }
    }

    #[inline(always)]
    unsafe fn store_pair(v: __m256d, w: __m256d, nt: bool, out: &mut [[half::f16; 4]; 2]) {
        // SAFETY: `out` holds the 16 bytes the store writes; the caller
        // guarantees AVX and F16C. (One store of the two conversions
        // joined: stored alone, each conversion became `vcvtps2ph` to
        // memory, which on AMD EPYC (Zen 3) ran at a sixth of the speed
        // of the conversion to a register.)
        unsafe {
            let both = _mm_unpacklo_epi64(to_f16(v), to_f16(w));
            Put(out.as_flattened_mut().as_mut_ptr().cast(), nt).bytes16(both);
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
    unsafe fn store(v: __m256d, nt: bool, out: &mut [half::bf16; 4]) {
        // SAFETY: `out` holds the 8 bytes the store writes. After
        // `round_to`, every value is a bfloat16 value (or beyond its
        // range, which the conversion to `f32` makes ±∞, or NaN, whose
        // conversion keeps the payload's leading bits and sets the quiet
        // bit, as `Element::narrow` does), so its `f32` is exact and its
        // upper half is the bfloat16.
        unsafe {
            let r = round_to::<7, -126, 130>(v);
            let bits = _mm_srli_epi32::<16>(_mm_castps_si128(_mm256_cvtpd_ps(r)));
            let packed = _mm_packus_epi32(bits, bits);
            Put(out.as_mut_ptr().cast(), nt).bytes8(packed);
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
