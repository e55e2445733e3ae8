//! BatchNorm's backward reductions per channel of a tensor seen as
//! `[outer, channels, inner]`: `Σdy` and `Σdy·(x − centre)`, reading the
//! input `x` and the output gradient `dy` side by side.
//!
//! The loops are those of the statistics ([`super::channels`]): runs of at
//! least [`ROW_MIN`] values of one channel (NCHW) go through the pair-sum
//! slice kernel; shorter runs (NHWC, small images) through the lanes loop,
//! [`BLOCK`] rows at a time, in groups of channels whose lanes fit in the
//! L1 cache. Products are summed about the channel's centre (the forward
//! pass's mean), so a large mean costs no digits: no `Σdy·x − μ·Σdy`
//! cancellation. The order of the sums depends only on the shape.

use super::BLOCK;
use super::arch::{self, detect};
use crate::Element;
use alloc::vec;
use alloc::vec::Vec;

/// Runs at least this long take the slice kernel (as in `channels`).
const ROW_MIN: usize = 1024;

/// Lanes summed at once in the lanes loop, unless one channel has more.
const LANE_CAP: usize = 512;

/// `(Σdy, Σdy·(x − centre))` per channel of `xs` and `dys`, both of shape
/// `[outer, channels, inner]` (the caller checked the lengths; `centre`
/// has one value per channel).
pub(crate) fn channel_grad_sums<S: Element>(
    xs: &[S],
    dys: &[S],
    outer: usize,
    channels: usize,
    inner: usize,
    centre: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let mut sum_dy = vec![0.0; channels];
    let mut sum_dyx = vec![0.0; channels];
    let slab = channels * inner;
    if slab == 0 || outer == 0 {
        return (sum_dy, sum_dyx);
    }
    let path = detect();
    let len = (outer * slab).min(xs.len()).min(dys.len());
    let (xs, dys) = (&xs[..len], &dys[..len]);
    if inner >= ROW_MIN {
        for (xo, yo) in xs.chunks_exact(slab).zip(dys.chunks_exact(slab)) {
            let runs = xo.chunks_exact(inner).zip(yo.chunks_exact(inner));
            for (c, (x, y)) in runs.enumerate() {
                let k = centre.get(c).copied().unwrap_or(f64::NAN);
                let [_, dy, _, _, dyx] = arch::shifted_pair_sums(path, x, y, k, 0.0);
                sum_dy[c] += dy;
                sum_dyx[c] += dyx;
            }
        }
        return (sum_dy, sum_dyx);
    }
    let group = (LANE_CAP / inner).max(1);
    let block = BLOCK * slab;
    let mut lanes_dy = vec![0.0; group * inner];
    let mut lanes_dyx = vec![0.0; group * inner];
    let mut lane_centre = vec![0.0; group * inner];
    for (xb, yb) in xs.chunks(block).zip(dys.chunks(block)) {
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
                sum_dy[first + c] += dy.iter().sum::<f64>();
                sum_dyx[first + c] += dyx.iter().sum::<f64>();
            }
        }
    }
    (sum_dy, sum_dyx)
}
