//! Whole-series loops written once in plain Rust
//! (`windows::series::exact_mean`), compiled here with AVX2 and FMA: their
//! element-wise loops vectorise four lanes wide and `f64::mul_add` is one
//! instruction.
//!
//! Every function here is `unsafe`: the caller must have checked that the
//! CPU has AVX2, FMA and F16C (`Path::Avx2Fma`).

use crate::Float;

/// `windows::series::exact_mean::run`, with AVX2 and FMA.
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
    crate::windows::series::exact_mean::run(older, newer, xs, out)
}
