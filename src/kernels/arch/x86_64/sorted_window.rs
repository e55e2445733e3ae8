//! A short window kept sorted in AVX2 registers: the quantile series of
//! `windows::series::sorted` for full windows of up to 48 values.
//!
//! The window's integer keys (`windows::series::extremes::key`) sit in
//! `R` registers of four, in order, the slots past the window holding
//! `i64::MAX`. A push replaces a copy of the leaving key `old` by the
//! entering key `new` with no branch on the data, in two steps computed
//! side by side from the same registers, slot `j` of `s` (with
//! `s[−1] = i64::MIN` and `s[4R] = i64::MAX`):
//!
//! - remove `old`: `t[j] = s[j]` if `s[j] < old`, else `s[j + 1]` (the
//!   keys from `old`'s first copy on move down by one);
//! - insert `new`: `u[j] = t[j]` if `t[j] < new`, else
//!   `max(new, t[j − 1])`, where `t[j − 1]` is `s[j − 1]` if that is
//!   below `old`, else `s[j]`.
//!
//! Each register takes two lane rotations (one down, one up, shared with
//! its neighbours), two blends of one lane, four comparisons and four
//! blends: twelve operations, against a walk whose length is the data's.
//! The array left behind is the one `windows::series::sorted::replace`
//! leaves (keys that compare equal are the same bits), so the quantiles
//! are its bits.
//!
//! Every function here is `unsafe` or calls one: the caller must have
//! checked that the CPU has AVX2 (`Path::Avx2Fma`).

use crate::Float;
use crate::kernels::sorted_keys::{at_rank, key, replace_loop};
use core::arch::x86_64::{
    __m256i, _mm256_blend_epi32, _mm256_blendv_epi8, _mm256_cmpgt_epi64, _mm256_loadu_si256,
    _mm256_permute4x64_epi64, _mm256_set1_epi64x, _mm256_storeu_si256,
};

/// The longest window kept in registers: twelve registers of four keys.
/// AVX2 has sixteen, so past eight the compiler keeps some of the window
/// on the stack, each register loaded and stored whole; at 64 keys (16
/// registers) a push took as long as the loop's binary searches and
/// memory move (40–44 ns a value on an AMD EPYC 7003), at 40 keys half
/// as long (18–21 ns against 40–42).
pub(in crate::kernels::arch) const MAX_WINDOW: usize = 48;

/// Room for the keys of the longest window, in whole registers.
#[repr(C, align(32))]
struct Slots([i64; MAX_WINDOW]);

/// The quantile at `rank` after each push of `news[i]` in place of
/// `olds[i]` into the full window whose keys `sorted` holds in order, into
/// `out[i]`, as far as the three slices go; `sorted` is left holding the
/// last window's keys. Each `olds[i]` must be in the window it leaves.
///
/// # Safety
///
/// The CPU must have AVX2, FMA and F16C.
#[target_feature(enable = "avx2,fma,f16c")]
pub(in crate::kernels::arch) unsafe fn replace_run<F: Float>(
    sorted: &mut [i64],
    olds: &[F],
    news: &[F],
    rank: (usize, f64),
    out: &mut [F],
) {
    match sorted.len().div_ceil(4) {
        0..=2 => in_registers::<F, 2>(sorted, olds, news, rank, out),
        3 => in_registers::<F, 3>(sorted, olds, news, rank, out),
        4 => in_registers::<F, 4>(sorted, olds, news, rank, out),
        5 => in_registers::<F, 5>(sorted, olds, news, rank, out),
        6 => in_registers::<F, 6>(sorted, olds, news, rank, out),
        7 => in_registers::<F, 7>(sorted, olds, news, rank, out),
        8 => in_registers::<F, 8>(sorted, olds, news, rank, out),
        9 => in_registers::<F, 9>(sorted, olds, news, rank, out),
        10 => in_registers::<F, 10>(sorted, olds, news, rank, out),
        11 => in_registers::<F, 11>(sorted, olds, news, rank, out),
        12 => in_registers::<F, 12>(sorted, olds, news, rank, out),
        _ => replace_loop(sorted, olds, news, rank, out),
    }
}

/// [`replace_run`] for windows of at most `4·R` keys, held in `R`
/// registers.
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
fn in_registers<F: Float, const R: usize>(
    sorted: &mut [i64],
    olds: &[F],
    news: &[F],
    rank: (usize, f64),
    out: &mut [F],
) {
    let mut slots = Slots([i64::MAX; MAX_WINDOW]);
    let held = sorted.len().min(4 * R);
    slots.0[..held].copy_from_slice(&sorted[..held]);
    // SAFETY: register `r` is read from slots `4r..4r + 4`, inside the
    // array for every `r < R ≤ 12`; an unaligned load has no other demand.
    let mut s: [__m256i; R] =
        core::array::from_fn(|r| unsafe { _mm256_loadu_si256(slots.0[4 * r..].as_ptr().cast()) });
    let top = _mm256_set1_epi64x(i64::MAX);
    let bottom = _mm256_set1_epi64x(i64::MIN);
    for ((slot, &old), &new) in out.iter_mut().zip(olds).zip(news) {
        let old = _mm256_set1_epi64x(key(old));
        let new = _mm256_set1_epi64x(key(new));
        // Each register's lanes rotated down (`[1, 2, 3, 0]`) and up
        // (`[3, 0, 1, 2]`), before any register changes.
        let down: [__m256i; R] = core::array::from_fn(|r| _mm256_permute4x64_epi64::<0x39>(s[r]));
        let up: [__m256i; R] = core::array::from_fn(|r| _mm256_permute4x64_epi64::<0x93>(s[r]));
        for r in 0..R {
            let now = s[r];
            // `s[j + 1]` and `s[j − 1]` for the register's four slots.
            let next =
                _mm256_blend_epi32::<0xC0>(down[r], if r + 1 < R { down[r + 1] } else { top });
            let prev = _mm256_blend_epi32::<0x03>(up[r], if r > 0 { up[r - 1] } else { bottom });
            // Where a mask is set, `blendv(a, b, mask)` takes `b`.
            let removed = _mm256_blendv_epi8(next, now, _mm256_cmpgt_epi64(old, now));
            let removed_prev = _mm256_blendv_epi8(now, prev, _mm256_cmpgt_epi64(old, prev));
            let at_least_new =
                _mm256_blendv_epi8(new, removed_prev, _mm256_cmpgt_epi64(removed_prev, new));
            s[r] = _mm256_blendv_epi8(at_least_new, removed, _mm256_cmpgt_epi64(new, removed));
        }
        for (r, &v) in s.iter().enumerate() {
            // SAFETY: slots `4r..4r + 4` are inside the array for every
            // `r < R ≤ 12`; an unaligned store has no other demand.
            unsafe { _mm256_storeu_si256(slots.0[4 * r..].as_mut_ptr().cast(), v) };
        }
        *slot = at_rank(&slots.0[..held], rank);
    }
    // Each push stored the registers, so the slots hold the last window.
    sorted[..held].copy_from_slice(&slots.0[..held]);
}
