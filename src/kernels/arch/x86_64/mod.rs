//! x86-64: the prefetch hint (baseline SSE) and, with `std` for run-time
//! detection, the AVX2/FMA kernels. With [`super`]'s routing, these are the
//! only files of the crate with `unsafe` code.

#[cfg(feature = "std")]
pub(super) mod avx2;

/// Asks for the cache line holding `p`. A hint: it never faults, whatever
/// the address.
#[inline(always)]
#[allow(clippy::inline_always, reason = "a hint inside the hot loops")]
pub(in crate::kernels::arch) fn prefetch<T>(p: *const T) {
    #[allow(unused_unsafe)]
    // SAFETY: SSE is part of baseline x86-64, and a prefetch never faults
    // nor reads anything into the program, whatever the address.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
    }
}
