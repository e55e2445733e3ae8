//! x86-64: the prefetch hint (baseline SSE) and, with `std` for run-time
//! detection, the AVX2/FMA kernels, the normalization passes (`affine.rs`),
//! the AVX-512 half-precision loops, and
//! the order in which they read a slice (`streams.rs`, safe code). With
//! [`super`]'s routing, these are the only files of the crate with
//! `unsafe` code.

#[cfg(feature = "std")]
pub(super) mod affine;
#[cfg(feature = "std")]
pub(super) mod avx2;
#[cfg(all(feature = "std", feature = "half"))]
mod avx512;
#[cfg(feature = "std")]
mod quad;
#[cfg(feature = "std")]
pub(super) mod runs;
#[cfg(feature = "std")]
pub(super) mod series;
#[cfg(feature = "std")]
pub(super) mod sorted_window;
#[cfg(feature = "std")]
pub(super) mod streams;

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
/// [`choose_tuning`], before the first kernel runs; until then (and
/// without `std`) on.
static PREFETCHING: AtomicBool = AtomicBool::new(true);

/// Whether the AVX-512 builds run: the lanes loop (per-channel
/// statistics of channels-last data, and their gradient sums) and the
/// slice, pair and weighted loops for half-precision data.
///
/// The compiler vectorises the lanes loop's element-wise body; given
/// 512-bit registers it issues half the instructions. On AMD EPYC (Zen 4,
/// whose AVX-512 units are 256 bits wide) that took NHWC statistics with
/// 64 channels from 0.77 to 0.93 of a plain sum from memory, with 3
/// channels from 0.77 to 0.85 and with 512 from 0.70 to 0.76. Half-precision
/// slices convert every value twice (`f16` to `f32` to `f64`) before the
/// arithmetic; on the Intel Xeon with AVX512-FP16 the 512-bit slice loop
/// took them from 0.76–0.78 to 0.86–0.88 of a plain F16C sum, while its
/// lanes loop ran at the same speed in either build. Older Xeons lower
/// their clock for 512-bit arithmetic, so on Intel the builds run only
/// from the generation with AVX512-FP16 (Sapphire Rapids) on, where that
/// cost is small. `MOMENTA_AVX512=0` or `=1` in the environment overrides
/// (AVX-512F and AVX-512VL are still required).
#[cfg(feature = "std")]
static WIDE: AtomicBool = AtomicBool::new(false);

/// Whether the AVX-512 builds run (see [`WIDE`]).
#[cfg(feature = "std")]
#[inline]
pub(super) fn wide() -> bool {
    WIDE.load(Ordering::Relaxed)
}

/// Decides [`PREFETCHING`] and [`WIDE`] for this CPU and environment.
#[cfg(feature = "std")]
pub(super) fn choose_tuning() {
    let amd = matches!(&vendor(), b"AuthenticAMD" | b"HygonGenuine");
    let flag = |name: &str| match std::env::var(name).as_deref() {
        Ok("0") => Some(false),
        Ok("1") => Some(true),
        _ => None,
    };
    PREFETCHING.store(flag("MOMENTA_PREFETCH").unwrap_or(!amd), Ordering::Relaxed);
    let avx512 =
        std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vl");
    let recent = amd || std::is_x86_feature_detected!("avx512fp16");
    let wide = avx512 && flag("MOMENTA_AVX512").unwrap_or(recent);
    WIDE.store(wide, Ordering::Relaxed);
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

/// Whether the kernels prefetch (see [`PREFETCHING`]).
#[inline(always)]
#[allow(clippy::inline_always, reason = "read at the head of the hot loops")]
pub(in crate::kernels::arch) fn prefetching() -> bool {
    PREFETCHING.load(Ordering::Relaxed)
}

/// Asks for the cache line holding `p`: into the L2 cache (`prefetcht1`)
/// for a loop that reads one stream, into L1 (`prefetcht0`) for one that
/// reads several side by side (`SEVERAL`). A hint: it never faults,
/// whatever the address.
///
/// On the Intel Xeon, a one-stream loop's requests into L1 a page ahead
/// held the L1's few fill buffers and capped the lines in flight; into L2
/// the slice kernels ran 5–30 % faster (the `f32` ones gained most), and
/// the loads find the lines a few cycles away, which the independent lanes
/// cover. The loops that read two to eight streams at once (pairs of
/// slices, values and weights, the lanes loops) were as fast or faster
/// with their requests into L1, half as far ahead per stream (see
/// `PREFETCH_STREAMS`), as before.
///
/// Whether or not [`prefetching`] says so: the callers ask it first, once
/// per loop or at each call.
#[inline(always)]
#[allow(clippy::inline_always, reason = "a hint inside the hot loops")]
pub(in crate::kernels::arch) fn prefetch_line<const SEVERAL: bool, T>(p: *const T) {
    #[allow(unused_unsafe)]
    // SAFETY: SSE is part of baseline x86-64, and a prefetch never faults
    // nor reads anything into the program, whatever the address.
    unsafe {
        use core::arch::x86_64::{_MM_HINT_T0, _MM_HINT_T1, _mm_prefetch};
        if SEVERAL {
            _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>());
        } else {
            _mm_prefetch::<_MM_HINT_T1>(p.cast::<i8>());
        }
    }
}

/// `v` truncated to an `i64`, or `i64::MIN` when it is out of range or
/// NaN (`cvttsd2si`, baseline SSE2; `i64::MIN` converts back to `−2^63`,
/// so an out-of-range `v` never passes a test of exactness).
#[inline(always)]
#[allow(clippy::inline_always, reason = "inside the exact sums' hot loops")]
pub(in crate::kernels::arch) fn truncate(v: f64) -> i64 {
    use core::arch::x86_64::{_mm_cvttsd_si64, _mm_set_sd};
    #[allow(unused_unsafe)]
    // SAFETY: SSE2 is part of baseline x86-64; the conversion reads and
    // writes registers only.
    unsafe {
        _mm_cvttsd_si64(_mm_set_sd(v))
    }
}

/// Switches the AVX-512 builds on or off, for the tests that compare them
/// with the AVX2 ones; returns whether they could be on.
#[cfg(all(test, feature = "std"))]
pub(in crate::kernels::arch) fn set_wide(on: bool) -> bool {
    let avx512 =
        std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vl");
    WIDE.store(on && avx512, Ordering::Relaxed);
    avx512
}
