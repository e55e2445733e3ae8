//! BatchNorm's backward reductions per channel of a tensor seen as
//! `[outer, channels, inner]`: `Σdy` and `Σdy·(x − centre)`, reading the
//! input `x` and the output gradient `dy` side by side.
//!
//! The loops are those of the statistics ([`super::channels`]): runs of at
//! least [`ROW_MIN`] values of one channel (NCHW) go through the pair-sum
//! slice kernel; shorter runs (NHWC, small images) through the lanes loop,
//! [`BLOCK`] rows at a time, in groups of channels whose lanes fit in the
//! L1 cache. Products are summed about the channel's centre (a value near
//! the forward pass's mean), so a large mean costs no digits: no
//! `Σdy·x − μ·Σdy` cancellation. The order of the sums depends only on the shape: the
//! parallel version runs subtrees of the same tree.

use super::BLOCK;
use super::arch::{self, detect};
use super::schedule::Schedule;
use crate::Element;
use alloc::vec;
use alloc::vec::Vec;

/// Runs at least this long take the slice kernel (as in `channels`).
const ROW_MIN: usize = 1024;

/// Lanes summed at once in the lanes loop, unless one channel has more.
const LANE_CAP: usize = 512;

/// Values below which a parallel reduction stops forking.
const PAR_GRAIN: usize = super::GRAIN * BLOCK;

/// Per-channel `(Σdy, Σdy·(x − centre))`.
type Sums = (Vec<f64>, Vec<f64>);

#[allow(
    clippy::needless_pass_by_value,
    reason = "the tree's merge takes `(&mut T, T)`"
)]
fn add_sums(a: &mut Sums, b: Sums) {
    for (x, y) in a.0.iter_mut().zip(&b.0).chain(a.1.iter_mut().zip(&b.1)) {
        *x += y;
    }
}

/// `(Σdy, Σdy·(x − centre))` per channel of `xs` and `dys`, both of shape
/// `[outer, channels, inner]` (the caller checked the lengths; `centre`
/// has one value per channel), on a given schedule. The leaves (outer
/// positions for long runs, blocks of rows otherwise) add up in the fixed
/// tree, so the result does not depend on the number of threads.
pub(crate) fn channel_grad_sums_on<S: Element>(
    schedule: Schedule,
    xs: &[S],
    dys: &[S],
    outer: usize,
    channels: usize,
    inner: usize,
    centre: &[f64],
) -> Sums {
    let slab = channels * inner;
    let outer = xs
        .len()
        .min(dys.len())
        .checked_div(slab)
        .map_or(0, |whole| outer.min(whole));
    if outer == 0 {
        return (vec![0.0; channels], vec![0.0; channels]);
    }
    let path = detect();
    let rows = |lo: usize, hi: usize| {
        let range = lo * slab..hi.min(outer) * slab;
        (
            xs.get(range.clone()).unwrap_or(&[]),
            dys.get(range).unwrap_or(&[]),
        )
    };
    if inner >= ROW_MIN {
        let leaf = |o: usize| {
            let (xo, yo) = rows(o, o + 1);
            let mut sums = (vec![0.0; channels], vec![0.0; channels]);
            let runs = xo.chunks_exact(inner).zip(yo.chunks_exact(inner));
            for (c, (x, y)) in runs.enumerate() {
                if let (Some(nx), Some(ny)) = (
                    xo.get((c + 1) * inner..(c + 2) * inner),
                    yo.get((c + 1) * inner..(c + 2) * inner),
                ) {
                    arch::warm_pairs(path, nx, ny);
                }
                let k = centre.get(c).copied().unwrap_or(f64::NAN);
                let [_, dy, _, _, dyx] = arch::shifted_pair_sums(path, x, y, k, 0.0);
                sums.0[c] = dy;
                sums.1[c] = dyx;
            }
            sums
        };
        return schedule.tree(0, outer, (PAR_GRAIN / slab).max(1), &leaf, &add_sums);
    }
    let group = (LANE_CAP / inner).max(1);
    let leaf = |b: usize| {
        let (xb, yb) = rows(b * BLOCK, (b + 1) * BLOCK);
        let mut sums = (vec![0.0; channels], vec![0.0; channels]);
        let mut lanes_dy = vec![0.0; group * inner];
        let mut lanes_dyx = vec![0.0; group * inner];
        let mut lane_centre = vec![0.0; group * inner];
        for first in (0..channels).step_by(group) {
            let count = group.min(channels - first);
            let width = count * inner;
            for (k, c) in lane_centre[..width].chunks_exact_mut(inner).zip(first..) {
                k.fill(centre.get(c).copied().unwrap_or(f64::NAN));
            }
            let (dy, dyx) = (&mut lanes_dy[..width], &mut lanes_dyx[..width]);
            dy.fill(0.0);
            dyx.fill(0.0);
            let start = first * inner;
            arch::grad_rows(path, xb, yb, slab, start, &lane_centre[..width], dy, dyx);
            let per_channel = dy.chunks_exact(inner).zip(dyx.chunks_exact(inner));
            for (c, (dy, dyx)) in per_channel.enumerate() {
                sums.0[first + c] = dy.iter().sum::<f64>();
                sums.1[first + c] = dyx.iter().sum::<f64>();
            }
        }
        sums
    };
    let block_len = BLOCK * slab;
    schedule.tree(
        0,
        outer.div_ceil(BLOCK),
        (PAR_GRAIN / block_len).max(1),
        &leaf,
        &add_sums,
    )
}

/// [`channel_grad_sums_on`] on the calling thread.
pub(crate) fn channel_grad_sums<S: Element>(
    xs: &[S],
    dys: &[S],
    outer: usize,
    channels: usize,
    inner: usize,
    centre: &[f64],
) -> Sums {
    channel_grad_sums_on(
        Schedule::Sequential,
        xs,
        dys,
        outer,
        channels,
        inner,
        centre,
    )
}

/// [`channel_grad_sums_on`] on every rayon thread: the same bits.
#[cfg(feature = "rayon")]
pub(crate) fn par_channel_grad_sums<S: Element>(
    xs: &[S],
    dys: &[S],
    outer: usize,
    channels: usize,
    inner: usize,
    centre: &[f64],
) -> Sums {
    channel_grad_sums_on(Schedule::Parallel, xs, dys, outer, channels, inner, centre)
}
