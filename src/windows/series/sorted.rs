//! A quantile of every window of a series, from the window kept sorted.
//!
//! The values of the window that are not NaN are kept as a sorted array of
//! their integer keys ([`key`]: the order with `−0.0 < +0.0` that the push
//! path's ordered sets use). A push finds the leaving value's place and the
//! entering value's by binary search and moves the values between them by
//! one, in one memory move; the quantile is then read at its rank, and
//! interpolated by the push path's own formula. Keys that compare equal
//! are the same bits, so whichever copy of a repeated value leaves, the
//! array is the same.
//!
//! A move costs a third of the window on average (random data), a memory
//! move that for the windows people use (up to some thousands) is cheaper
//! than the ordered sets' rebalancing; longer windows keep the push path.

use alloc::vec::Vec;

use super::extremes::{key, value};
use crate::Float;
use crate::windows::moving_quantile::{lerp, rank};
use crate::windows::policy::Policy;

/// The longest window the sorted array serves.
pub(crate) const MAX_WINDOW: usize = 4096;

/// Writes into `out[i]` the `q`-quantile of the window ending at `xs[i]`,
/// of `window` values, in a series whose earlier values are `before`
/// (oldest first, as the ring holds them), under `policy`: what the push
/// path's `quantile` reads after each push, bit for bit.
pub(crate) fn series<F: Float>(
    before: (&[F], &[F]),
    xs: &[F],
    window: usize,
    q: F,
    policy: Policy,
    out: &mut [F],
) {
    let (b0, b1) = before;
    let known = b0.len() + b1.len();
    let at = |p: usize| -> F {
        let x = if p < b0.len() {
            b0.get(p)
        } else if p < known {
            b1.get(p - b0.len())
        } else {
            xs.get(p - known)
        };
        x.copied().unwrap_or_else(F::nan)
    };
    let mut sorted: Vec<i64> = b0
        .iter()
        .chain(b1)
        .filter(|x| !x.is_nan())
        .map(|&x| key(x))
        .collect();
    sorted.sort_unstable();
    sorted.reserve(window.min(known + xs.len()).saturating_sub(sorted.len()));
    let mut nans = known - sorted.len();
    for (i, slot) in out.iter_mut().enumerate().take(xs.len()) {
        let p = known + i;
        let x = at(p);
        let leaving = (p >= window).then(|| at(p - window));
        match (leaving, x.is_nan()) {
            (Some(old), false) if !old.is_nan() => replace(&mut sorted, key(old), key(x)),
            (Some(old), true) if !old.is_nan() => {
                remove(&mut sorted, key(old));
                nans += 1;
            }
            (Some(_), false) => {
                nans -= 1;
                insert(&mut sorted, key(x));
            }
            (Some(_), true) => {}
            (None, false) => insert(&mut sorted, key(x)),
            (None, true) => nans += 1,
        }
        let len = window.min(p + 1);
        let counted = policy.counted(len, nans);
        let m = sorted.len();
        *slot = if !policy.ready(counted) || (nans > 0 && !policy.skips_nan()) || m == 0 {
            F::nan()
        } else {
            let (idx, frac) = rank(q, m);
            let lo = sorted.get(idx).map_or_else(F::nan, |&k| value(k));
            if frac == 0.0 {
                lo
            } else {
                let hi = sorted.get(idx + 1).map_or_else(F::nan, |&k| value(k));
                lerp(lo, hi, frac)
            }
        };
    }
}

/// Where `k` is in `sorted` (one of its copies), or would go.
#[inline]
fn place(sorted: &[i64], k: i64) -> usize {
    sorted.partition_point(|&s| s < k)
}

/// Replaces a copy of `old` by `new`, keeping the order: the values
/// between their places move by one.
#[inline]
fn replace(sorted: &mut [i64], old: i64, new: i64) {
    let from = place(sorted, old);
    let to = place(sorted, new);
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

#[inline]
fn remove(sorted: &mut Vec<i64>, k: i64) {
    let at = place(sorted, k);
    if at < sorted.len() {
        sorted.remove(at);
    }
}

#[inline]
fn insert(sorted: &mut Vec<i64>, k: i64) {
    let at = place(sorted, k);
    sorted.insert(at, k);
}
