//! Blocked slice reductions to raw moments, accumulated in `f64` whatever
//! the element type.
//!
//! # How a slice is reduced
//!
//! - The slice is cut into blocks of [`BLOCK`] values counted from its
//!   start, so block boundaries depend only on the length.
//! - Each block takes its first value as shift `K` and sums `d = x − K` and
//!   `d²` in 8 (portable) or 16 (AVX2) independent `f64` lanes (`f32` input is
//!   widened first). With `K` from the block, `d` is of the size of the
//!   block's spread, so `M2 = Σd² − (Σd)²/n` loses almost nothing to
//!   cancellation, and there is no division per value as in Welford's
//!   update.
//! - The blocks' moments are combined by Chan's merge in a fixed binary
//!   tree over block indices (each range is split at its midpoint), so
//!   rounding grows with the logarithm of the length, and the parallel
//!   reduction, which runs subtrees of the same tree on different threads,
//!   gives bit-for-bit the sequential result whatever the thread count.
//! - The inner loops are compiled twice, portable and with AVX2/FMA, and the
//!   version is chosen at run time ([`arch`]).
//! - Sequential and parallel reductions share one body per entry point:
//!   they differ only in how the tree's subtrees are scheduled
//!   ([`Schedule`]).

mod arch;
mod channels;
mod extremes;
mod higher;
mod schedule;

use crate::Float;
use crate::cumulative::moments::Moments;
use arch::{Path, detect};
use schedule::Schedule;

pub(crate) use channels::channel_moments;
#[cfg(feature = "rayon")]
pub(crate) use channels::par_channel_moments;
#[cfg(feature = "rayon")]
pub(crate) use extremes::par_extremes;
pub(crate) use extremes::{Extremes, extremes};
pub(crate) use higher::higher_moments;
#[cfg(feature = "rayon")]
pub(crate) use higher::par_higher_moments;

/// Blocks below which a parallel reduction stops forking and runs the rest
/// of its subtree on one thread (512 KiB of `f64`).
const GRAIN: usize = 16;

/// Values per block: 32 KiB of `f64`, which stay in L1 cache while the
/// block is summed, and few enough that the block's sums are accurate.
/// (2048 cost about 10 % of the bandwidth on fast memory: the work between
/// blocks — folding lanes, a merge, a mispredicted loop exit — is paid
/// twice as often.)
pub(crate) const BLOCK: usize = 4096;

/// Block `i` of `xs`.
#[inline]
fn block_of<S>(xs: &[S], i: usize) -> &[S] {
    let start = i.saturating_mul(BLOCK);
    let end = start.saturating_add(BLOCK).min(xs.len());
    xs.get(start..end).unwrap_or(&[])
}

#[inline]
fn blocks(len: usize) -> usize {
    len.div_ceil(BLOCK)
}

/// Moments from shifted sums: `n` values, shift `k`, `s = Σd`, `q = Σd²`.
#[inline]
fn from_sums(count: usize, k: f64, s: f64, q: f64) -> Moments<f64> {
    let offset = s / count as f64;
    let m2 = q - s * offset;
    Moments {
        count: count as u64,
        shift: k,
        offset,
        // Rounding may leave a tiny negative; NaN passes.
        m2: if m2 < 0.0 { 0.0 } else { m2 },
    }
}

/// Whether moments summed around their shift lost digits because the
/// shift was far from the mean: more than four standard deviations away.
///
/// `M2 = Σd² − (Σd)²/n` then cancels by a factor `1 + offset²/σ²` (17 at
/// the limit), and the mean's sum carries rounding at the scale of the
/// offset. On ordinary data a block's first value is rarely so far out
/// (never for uniform data, 1 block in 16 000 for Gaussian data): the test
/// fires for an outlier, or a level change, at the start of a run.
#[inline]
pub(crate) fn shift_is_far(m: &Moments<f64>) -> bool {
    m.offset * m.offset * m.count as f64 > 16.0 * m.m2
}

/// Moments of one run of values by shifted sums (no tree).
///
/// The shift is the run's first value. When that value turns out to be far
/// from the run's mean ([`shift_is_far`]), the run is summed again around
/// the mean the first pass found: the run is in L1 cache by then, so the
/// second pass costs compute, not bandwidth, and it is only taken for runs
/// that start with an untypical value.
#[inline]
fn run_moments<S: Float>(path: Path, xs: &[S]) -> Moments<f64> {
    let Some(&first) = xs.first() else {
        return Moments::default();
    };
    let sums = |k: f64| {
        let (s, q) = arch::shifted_sums(path, xs, k);
        from_sums(xs.len(), k, s, q)
    };
    let mut m = sums(first.as_f64());
    if m.offset.is_finite() && m.m2.is_finite() && shift_is_far(&m) {
        m = sums(m.shift + m.offset);
    }
    if m.offset.is_finite() && m.m2.is_finite() {
        m
    } else {
        // Non-finite data or sums that overflow: the robust scalar path
        // decides what the statistics are.
        Moments::of_values(xs.iter().copied())
    }
}

#[inline]
fn merge_moments(a: &mut Moments<f64>, b: Moments<f64>) {
    a.merge(&b);
}

/// Raw moments of `xs` on a given path and schedule.
pub(crate) fn moments_on<S: Float>(path: Path, schedule: Schedule, xs: &[S]) -> Moments<f64> {
    if xs.is_empty() {
        return Moments::default();
    }
    let leaf = |i| run_moments(path, block_of(xs, i));
    schedule.tree(0, blocks(xs.len()), GRAIN, &leaf, &merge_moments)
}

/// Raw moments of `xs`, in `f64`.
pub(crate) fn moments<S: Float>(xs: &[S]) -> Moments<f64> {
    moments_on(detect(), Schedule::Sequential, xs)
}

/// Raw moments of `xs` on every rayon thread: bit-for-bit [`moments`],
/// whatever the number of threads.
#[cfg(feature = "rayon")]
pub(crate) fn par_moments<S: Float>(xs: &[S]) -> Moments<f64> {
    moments_on(detect(), Schedule::Parallel, xs)
}

#[cfg(test)]
mod tests;
