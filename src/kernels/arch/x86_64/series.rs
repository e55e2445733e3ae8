//! Whole-series loops: `kernels::exact_mean`'s, written once in
//! plain Rust and compiled here with AVX2 and FMA (their element-wise
//! loops vectorise four lanes wide and `f64::mul_add` is one
//! instruction), and its offset runs in one pass in AVX2 registers.
//!
//! The offset loop, for `f64` and `f32` (widened exactly on the way in,
//! each mean rounded once on the way out, as `Float::from_f64` rounds it),
//! takes four values at a time: their differences
//! (entering minus leaving, each `x·scale − offset`, exact), their running
//! sums within the register (two shifts and two additions, every partial
//! sum a difference of two window sums and so exact), the window's sum so
//! far added, the means. The sum carried to the next four is one addition
//! of the last lane, which does not wait on the means: one chain of one
//! addition per four values, and the output written in order (so a new
//! vector's pages are first touched one after another, as a copy touches
//! them). Every operation is the portable loop's, on the same exact
//! integers, so the means are its bits.
//!
//! Every function here is `unsafe` or calls one: the caller must have
//! checked that the CPU has AVX2, FMA and F16C (`Path::Avx2Fma`).

#![allow(
    clippy::many_single_char_names,
    reason = "the names of the portable loop and its module documentation"
)]

use super::quad::Quad;
use crate::Float;
use crate::float::{Elements, ElementsMut};
use crate::kernels::exact_mean::{Fused, Grid};
use core::arch::x86_64::{
    _CMP_EQ_OQ, _CMP_LT_OQ, _CMP_NEQ_UQ, _MM_FROUND_NO_EXC, _MM_FROUND_TO_ZERO, _mm_cvtsd_f64,
    _mm256_add_pd, _mm256_and_pd, _mm256_andnot_pd, _mm256_blend_pd, _mm256_castpd256_pd128,
    _mm256_cmp_pd, _mm256_fmadd_pd, _mm256_fnmadd_pd, _mm256_movemask_pd, _mm256_mul_pd,
    _mm256_or_pd, _mm256_permute2f128_pd, _mm256_permute4x64_pd, _mm256_round_pd, _mm256_set1_pd,
    _mm256_setzero_pd, _mm256_sub_pd,
};

/// `kernels::exact_mean::run`, with AVX2 and FMA, and the offset
/// runs through [`offset_run`].
///
/// # Safety
///
/// The CPU must have AVX2, FMA and F16C.
#[target_feature(enable = "avx2,fma,f16c")]
pub(in crate::kernels::arch) unsafe fn exact_mean_run<F: Float>(
    older: &[F],
    newer: &[F],
    xs: &[F],
    out: &mut [F],
) -> usize {
    crate::kernels::exact_mean::run(older, newer, xs, out, &Avx2)
}

/// `exact_arith::checked_quotient` with its residual by one fused
/// multiply-add.
///
/// # Safety
///
/// The CPU must have AVX2, FMA and F16C.
#[target_feature(enable = "avx2,fma,f16c")]
pub(in crate::kernels::arch) unsafe fn checked_quotient(a: f64, b: f64, d: f64, inv_d: f64) -> f64 {
    crate::kernels::exact_arith::checked_quotient::<true>(a, b, d, inv_d)
}

/// `kernels::exact_var::run`, with AVX2 and FMA.
///
/// # Safety
///
/// The CPU must have AVX2, FMA and F16C.
#[target_feature(enable = "avx2,fma,f16c")]
pub(in crate::kernels::arch) unsafe fn exact_var_run<F: Float>(
    older: &[F],
    newer: &[F],
    xs: &[F],
    out: &mut [F],
    spread: crate::kernels::exact_var::Spread,
) -> usize {
    crate::kernels::exact_var::run(older, newer, xs, out, spread)
}

/// The AVX2 loop. Made only in [`exact_mean_run`], whose caller
/// guarantees AVX2, FMA and F16C.
struct Avx2;

impl Fused for Avx2 {
    fn offset_run<F: Float>(
        &self,
        xs: &[F],
        window: usize,
        grid: &Grid,
        at: (usize, f64),
        out: &mut [F],
    ) -> (usize, f64) {
        match (F::elements(xs), F::elements_mut(out)) {
            (Elements::F64(xs), ElementsMut::F64(out)) => {
                // SAFETY: an `Avx2` exists only inside `exact_mean_run`,
                // whose caller guaranteed AVX2, FMA and F16C.
                unsafe { offset_run(xs, window, grid, at, out) }
            }
            (Elements::F32(xs), ElementsMut::F32(out)) => {
                // SAFETY: as for `f64`.
                unsafe { offset_run(xs, window, grid, at, out) }
            }
            _ => at,
        }
    }
}

/// Values a step of the loop checks the grid over: it stops before a step
/// with a value off it.
const STEP: usize = 256;

/// `Fused::offset_run` in AVX2 registers, a step of [`STEP`] values at a
/// time.
///
/// # Safety
///
/// The CPU must have AVX2, FMA and F16C.
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn offset_run<S: Quad>(
    xs: &[S],
    window: usize,
    grid: &Grid,
    (start, t): (usize, f64),
    out: &mut [S],
) -> (usize, f64) {
    let end = xs.len().min(out.len());
    if start < window || start > end {
        return (start, t);
    }
    let steps = (end - start) / STEP;
    let (from, to) = (xs.as_ptr(), out.as_mut_ptr());
    let zero = _mm256_setzero_pd();
    let all = _mm256_cmp_pd::<_CMP_EQ_OQ>(zero, zero);
    let [scale, offset, reach, count, inv_count, unscale, sign] = [
        grid.scale,
        grid.offset,
        grid.reach,
        grid.n,
        grid.inv_n,
        grid.unscale,
        -0.0,
    ]
    .map(|c| _mm256_set1_pd(c));
    let mut carry = _mm256_set1_pd(t);
    for step in 0..steps {
        let first = start + step * STEP;
        let before = carry;
        let mut ok = all;
        for at in (first..first + STEP).step_by(4) {
            // SAFETY: `window ≤ start ≤ at` and `at + 4 ≤ start + steps·STEP
            // ≤ end`, the length of both `xs` and `out` at least: the four
            // values at `at` and at `at − window` are in `xs`, the four at
            // `at` in `out`; the CPU has AVX2 and F16C (the caller).
            let (entering, leaving) = unsafe {
                (
                    S::load(&*from.add(at).cast::<[S; 4]>()),
                    S::load(&*from.add(at - window).cast::<[S; 4]>()),
                )
            };
            let v = _mm256_mul_pd(entering, scale);
            let y = _mm256_sub_pd(v, offset);
            let whole = _mm256_cmp_pd::<_CMP_EQ_OQ>(
                _mm256_round_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(v),
                v,
            );
            let near = _mm256_cmp_pd::<_CMP_LT_OQ>(_mm256_andnot_pd(sign, y), reach);
            let kept = _mm256_or_pd(
                _mm256_cmp_pd::<_CMP_NEQ_UQ>(v, zero),
                _mm256_cmp_pd::<_CMP_EQ_OQ>(entering, zero),
            );
            ok = _mm256_and_pd(ok, _mm256_and_pd(_mm256_and_pd(whole, near), kept));
            let d = _mm256_sub_pd(y, _mm256_sub_pd(_mm256_mul_pd(leaving, scale), offset));
            // [d0, d0 + d1, d0 + d1 + d2, d0 + … + d3]: each a difference
            // of two window sums, exact.
            let d = _mm256_add_pd(
                d,
                _mm256_blend_pd::<0b0001>(_mm256_permute4x64_pd::<0b10_01_00_00>(d), zero),
            );
            let d = _mm256_add_pd(d, _mm256_permute2f128_pd::<0x08>(d, d));
            let t = _mm256_add_pd(carry, d);
            // The next sum from the last lane of `d`, off the chain of `t`.
            carry = _mm256_add_pd(carry, _mm256_permute4x64_pd::<0xff>(d));
            // `offset_mean`: t/n by a product and a corrected step.
            let q = _mm256_mul_pd(t, inv_count);
            let r = _mm256_fnmadd_pd(q, count, t);
            let q = _mm256_fmadd_pd(r, inv_count, q);
            let mean = _mm256_mul_pd(_mm256_add_pd(offset, q), unscale);
            // SAFETY: as the loads: the four values at `at` are in `out`,
            // and nothing else refers to them while the loop runs. The
            // store rounds each mean to `S` once, as `Float::from_f64`.
            unsafe { S::store(mean, false, &mut *to.add(at).cast::<[S; 4]>()) };
        }
        if _mm256_movemask_pd(ok) != 0b1111 {
            return (first, _mm_cvtsd_f64(_mm256_castpd256_pd128(before)));
        }
    }
    (
        start + steps * STEP,
        _mm_cvtsd_f64(_mm256_castpd256_pd128(carry)),
    )
}
