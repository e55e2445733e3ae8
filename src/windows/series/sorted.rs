//! A quantile of every window of a series, from the window kept sorted.
//!
//! The values of the window that are not NaN are kept as a sorted array of
//! their integer keys ([`key`]: the order with `−0.0 < +0.0` that the push
//! path uses). A push finds the leaving value's place and the
//! entering value's by binary search and moves the values between them by
//! one, in one memory move; the quantile is then read at its rank, and
//! interpolated by the push path's own formula. Keys that compare equal
//! are the same bits, so whichever copy of a repeated value leaves, the
//! array is the same.
//!
//! A move costs a third of the window on average (random data), a memory
//! move that for the windows people use (up to some thousands) is cheaper
//! than ordered sets' rebalancing (the push path keeps its windows of up
//! to 4096 values the same way, `windows::window_order`); longer windows
//! keep the push path.
//!
//! Once the window is full and no NaN is about, a push is one replacement
//! in a window of fixed length ([`replace_loop`](crate::kernels::sorted_keys::replace_loop), routed through
//! `kernels::sorted_replace_run`): with AVX2, windows of up to 48 values
//! are kept in registers and replace with no branch on the data
//! (`kernels::arch::x86_64::sorted_window`). Without it, windows of up
//! to six values are instead sorted afresh at every push by a sorting
//! network (no branch on the data either). Windows from 400 on go
//! through the sorted blocks of `sorted_blocks.rs`. All of them read the
//! same sorted keys, so the same values.

use alloc::vec::Vec;

use super::extremes::any_nan;
use super::sorted_blocks;
use crate::Float;
use crate::kernels::sorted_keys::{at_rank, insert, key, remove, replace, value};
use crate::windows::interpolation::Interpolation;
use crate::windows::ordered::rank;
use crate::windows::policy::Policy;

/// The longest window the sorted array serves.
pub(crate) const MAX_WINDOW: usize = 4096;

/// From this window on, the full windows of a stretch without NaN go
/// through the sorted blocks (`sorted_blocks.rs`) instead. With both
/// places found in one branchless loop, the array was the faster up to
/// about 500 values (10⁷ values of `1e6 + U(0, 1)`, AMD EPYC 7003, two
/// runs, ns a value, array against blocks: 46–49 against 66–77 at 128,
/// 52–60 against 62–70 at 300, 62–72 against 63–67 at 500, 84–89 against
/// 57–75 at 1000).
const BLOCKS_FROM: usize = 400;

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
    let lead: Vec<F> = before.0.iter().chain(before.1).copied().collect();
    let known = lead.len();
    let mut sorted: Vec<i64> = lead
        .iter()
        .filter(|x| !x.is_nan())
        .map(|&x| key(x))
        .collect();
    sorted.sort_unstable();
    sorted.reserve(window.min(known + xs.len()).saturating_sub(sorted.len()));
    let mut nans = known - sorted.len();
    // The value that leaves when `xs[p]` enters, if any.
    let left = |p: usize| match p.checked_sub(window) {
        Some(i) => xs.get(i).copied(),
        None => (known + p)
            .checked_sub(window)
            .and_then(|i| lead.get(i).copied()),
    };
    // Filling, or NaN anywhere: every push by the general rule. Without
    // NaN, once the window is full its rank is fixed and a push is one
    // replacement.
    let calm = nans == 0 && !any_nan(xs);
    let filling = if calm {
        window.saturating_sub(known).min(xs.len())
    } else {
        xs.len()
    };
    let (head, tail) = out.split_at_mut(filling.min(out.len()));
    for (p, slot) in head.iter_mut().enumerate() {
        let x = xs.get(p).copied().unwrap_or_else(F::nan);
        match (left(p), x.is_nan()) {
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
        let counted = policy.counted(window.min(known + p + 1), nans);
        let m = sorted.len();
        *slot = if !policy.ready(counted) || (nans > 0 && !policy.skips_nan()) || m == 0 {
            F::nan()
        } else {
            at_rank(&sorted, rank(q.as_f64(), m))
        };
    }
    if tail.is_empty() {
        return;
    }
    // Full, no NaN: `window` values at every push, every one ready.
    let rank = rank(q.as_f64(), window);
    // The value that leaves at the tail's first push, and the window
    // that push ends.
    let first = known + filling - window;
    if window < NETWORKS.len() && !crate::kernels::sorts_in_registers(window) {
        let head = lead.get(first + 1..).unwrap_or(&[]);
        let start = (first + 1).saturating_sub(known);
        networks(head, xs.get(start..).unwrap_or(&[]), window, rank, tail);
        return;
    }
    if window >= BLOCKS_FROM {
        let start = first + 1;
        let head = lead.get(start.min(known)..).unwrap_or(&[]);
        let tail_xs = xs.get(start.saturating_sub(known)..).unwrap_or(&[]);
        sorted_blocks::series(head, tail_xs, window, rank, tail);
        return;
    }
    // The leaving values: the earlier ones still in the window, then the
    // slice's own.
    let news = xs.get(filling..).unwrap_or(&[]);
    let lead_olds = lead.get(first..).unwrap_or(&[]);
    let (early, late) = tail.split_at_mut(lead_olds.len().min(tail.len()));
    crate::kernels::sorted_replace_run(&mut sorted, lead_olds, news, rank, early);
    let news = news.get(lead_olds.len()..).unwrap_or(&[]);
    crate::kernels::sorted_replace_run(&mut sorted, xs, news, rank, late);
}

/// Sorting networks for windows of up to six values (Knuth, TAOCP 5.3.4;
/// the optimal ones), indexed by the window: each window is sorted afresh
/// by a fixed sequence of compare-exchanges, which has no branch on the
/// data. A window of one needs none (every output is its value).
const NETWORKS: [&[(usize, usize)]; 7] = [
    &[],
    &[],
    &[(0, 1)],
    &[(0, 2), (0, 1), (1, 2)],
    &[(0, 2), (1, 3), (0, 1), (2, 3), (1, 2)],
    &[
        (0, 3),
        (1, 4),
        (0, 2),
        (1, 3),
        (0, 1),
        (2, 4),
        (1, 2),
        (3, 4),
        (2, 3),
    ],
    &[
        (0, 5),
        (1, 3),
        (2, 4),
        (1, 2),
        (3, 4),
        (0, 3),
        (2, 5),
        (0, 1),
        (2, 3),
        (4, 5),
        (1, 2),
        (3, 4),
    ],
];

/// The quantile at `rank` of every full window of `window` (at most six)
/// values of `head` then `tail`, into `out`, each window sorted by its
/// network.
fn networks<F: Float>(head: &[F], tail: &[F], window: usize, rank: (usize, f64), out: &mut [F]) {
    let values = head.iter().chain(tail).map(|&x| key(x));
    match window {
        1 => by_network::<F, 1>(values, NETWORKS[1], rank, out),
        2 => by_network::<F, 2>(values, NETWORKS[2], rank, out),
        3 => by_network::<F, 3>(values, NETWORKS[3], rank, out),
        4 => by_network::<F, 4>(values, NETWORKS[4], rank, out),
        5 => by_network::<F, 5>(values, NETWORKS[5], rank, out),
        6 => by_network::<F, 6>(values, NETWORKS[6], rank, out),
        _ => {}
    }
}

/// [`networks`] for windows of `N` values.
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "the network must unroll: its pairs are constants"
)]
fn by_network<F: Float, const N: usize>(
    mut values: impl Iterator<Item = i64>,
    network: &[(usize, usize)],
    rank: (usize, f64),
    out: &mut [F],
) {
    // The window's keys in order of arrival, the newest last.
    let mut win = [0_i64; N];
    for slot in win.iter_mut().skip(1) {
        *slot = values.next().unwrap_or(0);
    }
    for (slot, k) in out.iter_mut().zip(values) {
        win.rotate_left(1);
        win[N - 1] = k;
        let mut sorted = win;
        for &(a, b) in network {
            let (x, y) = (sorted[a], sorted[b]);
            sorted[a] = x.min(y);
            sorted[b] = x.max(y);
        }
        *slot = at_rank(&sorted, rank);
    }
}

/// The quantile at `(⌊h⌋, h − ⌊h⌋)` of the sorted keys, read by `how`.
#[inline]
pub(crate) fn read_at<F: Float>(
    sorted: &[i64],
    (idx, frac): (usize, f64),
    how: Interpolation,
) -> F {
    let lo = sorted.get(idx).map_or_else(F::nan, |&k| value(k));
    if frac == 0.0 {
        lo
    } else {
        let hi = sorted.get(idx + 1).map_or_else(F::nan, |&k| value(k));
        how.between(lo, hi, idx, frac)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_networks_sort_every_input() {
        // The 0-1 principle: a network that sorts every sequence of 0s and
        // 1s sorts every sequence.
        for (n, network) in NETWORKS.iter().enumerate() {
            for bits in 0..1_u32 << n {
                let mut v: Vec<u32> = (0..n).map(|i| (bits >> i) & 1).collect();
                for &(a, b) in *network {
                    let (x, y) = (v[a], v[b]);
                    v[a] = x.min(y);
                    v[b] = x.max(y);
                }
                assert!(v.windows(2).all(|p| p[0] <= p[1]), "{n}: {bits:b}");
            }
        }
    }
}
