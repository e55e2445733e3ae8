//! x86-64: the prefetch hint (baseline SSE) and, with `std` for run-time
//! detection, the AVX2/FMA kernels. With [`super`]'s routing, these are the
//! only files of the crate with `unsafe` code.

#[cfg(feature = "std")]
pub(super) mod avx2;

use core::sync::atomic::{AtomicBool, Ordering};

/// Whether the kernels issue their software prefetches.
///
/// On the Intel Xeon the kernels were first tuned on, the loads'
/// dependent operations capped the cache lines in flight and the loops
/// reached about 0.8 of a plain sum's bandwidth without prefetches, the
/// sum's speed with them. On AMD EPYC (Zen) the hardware prefetcher keeps
/// up on its own and the prefetch instructions cost about 20 %: the same
/// kernels ran at 0.76–0.79 of the sum with them and at 0.92–1.01 without.
/// So they are on, except on AMD and Hygon CPUs; `MOMENTA_PREFETCH=0` or
/// `=1` in the environment overrides the choice. Set once by
/// [`choose_prefetch`], before the first kernel runs; until then (and
/// without `std`) on.
static PREFETCHING: AtomicBool = AtomicBool::new(true);

/// Decides [`PREFETCHING`] for this CPU and environment.
#[cfg(feature = "std")]
pub(super) fn choose_prefetch() {
    let on = match std::env::var("MOMENTA_PREFETCH").as_deref() {
        Ok("0") => false,
        Ok("1") => true,
        _ => !matches!(&vendor(), b"AuthenticAMD" | b"HygonGenuine"),
    };
    PREFETCHING.store(on, Ordering::Relaxed);
}

/// The CPU's vendor string, from `cpuid` leaf 0.
#[cfg(feature = "std")]
fn vendor() -> [u8; 12] {
    #[allow(unused_unsafe)]
    // SAFETY: `cpuid` exists on every x86-64 CPU, and leaf 0 is always
    // valid; the instruction only writes registers.
    let id = unsafe { core::arch::x86_64::__cpuid(0) };
    let mut v = [0; 12];
    v[..4].copy_from_slice(&id.ebx.to_le_bytes());
    v[4..8].copy_from_slice(&id.edx.to_le_bytes());
    v[8..].copy_from_slice(&id.ecx.to_le_bytes());
    v
}

/// Asks for the cache line holding `p`. A hint: it never faults, whatever
/// the address.
#[inline(always)]
#[allow(clippy::inline_always, reason = "a hint inside the hot loops")]
pub(in crate::kernels::arch) fn prefetch<T>(p: *const T) {
    if !PREFETCHING.load(Ordering::Relaxed) {
        return;
    }
    #[allow(unused_unsafe)]
    // SAFETY: SSE is part of baseline x86-64, and a prefetch never faults
    // nor reads anything into the program, whatever the address.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
    }
}
