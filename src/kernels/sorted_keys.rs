//! A window's values in order, as a sorted array of integer keys: the
//! keys of floats in the order `−∞ < … < −0.0 < +0.0 < … < +∞`, the
//! sorted array's replace, insert and remove, the read of a quantile at a
//! rank by pandas' linear interpolation, and the portable loop of
//! replacements in a full window that the architecture layer compiles
//! (`kernels::sorted_replace_run`; with AVX2, `x86_64/sorted_window.rs`
//! keeps windows of up to 48 keys in registers instead). The moving and
//! time quantiles (`windows/`) keep their windows in these.

use alloc::vec::Vec;
use core::hint::select_unpredictable;

use crate::Float;

/// `x`'s place in the order `−∞ < … < −0.0 < +0.0 < … < +∞` as an integer
/// (its bits, with the magnitude bits of a negative value flipped):
/// `key(a) < key(b)` exactly when `a` is below `b` in that order. Not for
/// NaN.
#[inline]
pub(crate) fn key<F: Float>(x: F) -> i64 {
    flip(x.as_f64().to_bits().cast_signed())
}

/// The value whose [`key`] is `k`.
#[inline]
pub(crate) fn value<F: Float>(k: i64) -> F {
    F::from_f64(f64::from_bits(flip(k).cast_unsigned()))
}

/// Flips the low 63 bits of a negative number: its own inverse.
#[inline]
fn flip(bits: i64) -> i64 {
    bits ^ ((bits >> 63).cast_unsigned() >> 1).cast_signed()
}

/// The value `frac` of the way from `lo` to `hi` (`lo ≤ hi`), by pandas'
/// formula `lo + (hi − lo)·frac` wherever that is finite: between equal
/// infinities it is that infinity, between an infinity and a finite value
/// the infinity, between `−∞` and `+∞` NaN, and a difference that
/// overflows is avoided.
pub(crate) fn lerp<F: Float>(lo: F, hi: F, frac: f64) -> F {
    if frac == 0.0 {
        return lo;
    }
    if !lo.is_finite() || !hi.is_finite() {
        return lo + hi;
    }
    let f = F::from_f64(frac);
    let d = hi - lo;
    if d.is_finite() {
        lo + d * f
    } else {
        lo * (F::one() - f) + hi * f
    }
}

/// The quantile at `(⌊h⌋, h − ⌊h⌋)` of the sorted keys, by the push path's
/// linear interpolation.
#[inline]
pub(crate) fn at_rank<F: Float>(sorted: &[i64], rank: (usize, f64)) -> F {
    let (idx, frac) = rank;
    let lo = sorted.get(idx).map_or_else(F::nan, |&k| value(k));
    if frac == 0.0 {
        lo
    } else {
        lerp(
            lo,
            sorted.get(idx + 1).map_or_else(F::nan, |&k| value(k)),
            frac,
        )
    }
}

/// The quantile at `rank` after each push of `news[i]` in place of
/// `olds[i]` into the full window whose keys `sorted` holds in order, into
/// `out[i]`, as far as the three slices go, one replacement at a time;
/// `sorted` is left holding the last window's keys. Each `olds[i]` must be
/// in the window it leaves.
pub(crate) fn replace_loop<F: Float>(
    sorted: &mut [i64],
    olds: &[F],
    news: &[F],
    rank: (usize, f64),
    out: &mut [F],
) {
    for ((slot, &old), &new) in out.iter_mut().zip(olds).zip(news) {
        replace(sorted, key(old), key(new));
        *slot = at_rank(sorted, rank);
    }
}

/// Where `k` is in `sorted` (one of its copies), or would go.
#[inline]
fn place(sorted: &[i64], k: i64) -> usize {
    sorted.partition_point(|&s| s < k)
}

/// [`place`] of `a` and of `b` in a non-empty `sorted`, found side by
/// side: two binary searches in one loop, with no branch on the data, so
/// that their chains of dependent loads overlap.
#[inline]
fn places(sorted: &[i64], a: i64, b: i64) -> (usize, usize) {
    let (mut at_a, mut at_b) = (0, 0);
    let mut size = sorted.len();
    while size > 1 {
        let half = size / 2;
        // `at + half < at + size ≤ len`: both probes are in the slice.
        at_a = select_unpredictable(sorted[at_a + half] < a, at_a + half, at_a);
        at_b = select_unpredictable(sorted[at_b + half] < b, at_b + half, at_b);
        size -= half;
    }
    let past = |at: usize, k: i64| at + usize::from(sorted.get(at).is_some_and(|&s| s < k));
    (past(at_a, a), past(at_b, b))
}

/// Windows up to this long move values by swapping them along; longer
/// ones by a memory move.
const SHORT: usize = 32;

/// Replaces a copy of `old` by `new`, keeping the order: the values
/// between their places move by one.
#[inline]
pub(crate) fn replace(sorted: &mut [i64], old: i64, new: i64) {
    if sorted.len() <= SHORT {
        // `old`'s place by counting, which has no chain of dependent loads
        // (a copy of `old` is there: keys that compare equal are the same
        // bits).
        let mut at = sorted.iter().fold(0, |n, &k| n + usize::from(k < old));
        // Walk `new` from `old`'s place to its own.
        if new > old {
            while let Some(&next) = sorted.get(at + 1).filter(|&&next| next < new) {
                if let Some(slot) = sorted.get_mut(at) {
                    *slot = next;
                }
                at += 1;
            }
        } else {
            while let Some(&prev) = at
                .checked_sub(1)
                .and_then(|i| sorted.get(i))
                .filter(|&&prev| prev > new)
            {
                if let Some(slot) = sorted.get_mut(at) {
                    *slot = prev;
                }
                at -= 1;
            }
        }
        if let Some(slot) = sorted.get_mut(at) {
            *slot = new;
        }
        return;
    }
    let (from, to) = places(sorted, old, new);
    if to > from {
        // `new` goes after the values in `from + 1..to`, which move down.
        sorted.copy_within(from + 1..to, from);
        if let Some(slot) = sorted.get_mut(to - 1) {
            *slot = new;
        }
    } else {
        sorted.copy_within(to..from, to + 1);
        if let Some(slot) = sorted.get_mut(to) {
            *slot = new;
        }
    }
}

/// Removes a copy of `k`, which must be there (else the value at `k`'s
/// place goes).
#[inline]
pub(crate) fn remove(sorted: &mut Vec<i64>, k: i64) {
    let at = place(sorted, k);
    if at < sorted.len() {
        sorted.remove(at);
    }
}

/// Inserts `k` in its place.
#[inline]
pub(crate) fn insert(sorted: &mut Vec<i64>, k: i64) {
    let at = place(sorted, k);
    sorted.insert(at, k);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_the_order_with_negative_zero_below_positive_zero() {
        let xs = [
            f64::NEG_INFINITY,
            -f64::MAX,
            -1.0,
            -f64::MIN_POSITIVE,
            -5e-324,
            -0.0,
            0.0,
            5e-324,
            1.0,
            f64::MAX,
            f64::INFINITY,
        ];
        for pair in xs.windows(2) {
            assert!(key(pair[0]) < key(pair[1]), "{pair:?}");
        }
        for &x in &xs {
            assert_eq!(value::<f64>(key(x)).to_bits(), x.to_bits());
            let y = x as f32;
            assert_eq!(value::<f32>(key(y)).to_bits(), y.to_bits());
        }
    }
}
