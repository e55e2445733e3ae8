//! Blocked slice reductions to raw moments, accumulated in `f64` whatever
//! the element type.
//!
//! # How a slice is reduced
//!
//! - The slice is cut into blocks of [`SLICE_BLOCK`] values counted from
//!   its start, so block boundaries depend only on the length.
//! - Each block takes its first value as shift `K` and sums `d = x − K` and
//!   `d²` in 8 (portable) or 16 (AVX2) independent `f64` lanes (`f32` input is
//!   widened first). With `K` from the block, `d` is of the size of the
//!   block's spread, so `M2 = Σd² − (Σd)²/n` loses almost nothing to
//!   cancellation, and there is no division per value as in Welford's
//!   update. The lanes are added into running totals every 4096 values,
//!   so that no lane sums more than a few hundred.
//! - The AVX2 loops read a block as four streams side by side, which
//!   keeps more of memory's bandwidth busy than one stream does.
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

pub(crate) mod affine;
mod affine_params;
mod arch;
mod bundle;
mod channels;
pub(crate) mod exact_arith;
pub(crate) mod exact_mean;
pub(crate) mod exact_var;
mod extremes;
mod grad;
mod higher;
mod schedule;
pub(crate) mod sorted_keys;

use crate::Element;
use crate::moments::Moments;
use crate::moments::comoments::CoMoments;
use crate::moments::weighted_moments::{WeightedMoments, check_weight};
use crate::{Error, Float};
use arch::{Path, detect};
pub(crate) use arch::{exact_i64, is_whole_below, prefetch_line, truncate_i64};
pub(crate) use schedule::Schedule;

/// `MovingStats`' mean series over a run on one grid, compiled for this
/// CPU (see `arch::exact_mean_run`).
#[inline]
pub(crate) fn exact_mean_run<F: crate::Float>(
    older: &[F],
    newer: &[F],
    xs: &[F],
    out: &mut [F],
) -> usize {
    arch::exact_mean_run(detect(), older, newer, xs, out)
}

/// Whether this CPU keeps a full window of `window` keys sorted in
/// registers ([`sorted_replace_run`]), which then also beats the sorting
/// networks of the shortest windows.
#[inline]
pub(crate) fn sorts_in_registers(window: usize) -> bool {
    arch::sorts_in_registers(detect(), window)
}

/// The quantile series of a full window kept sorted (see
/// `windows::series::sorted::replace_loop`), compiled for this CPU (see
/// `arch::sorted_replace_run`).
#[inline]
pub(crate) fn sorted_replace_run<F: crate::Float>(
    sorted: &mut [i64],
    olds: &[F],
    news: &[F],
    rank: (usize, f64),
    out: &mut [F],
) {
    arch::sorted_replace_run(detect(), sorted, olds, news, rank, out);
}

/// `exact_arith::checked_quotient` for one read (a mean or a variance of
/// the exact sums), with the CPU's fused multiply-add when it has one
/// (see `arch::checked_quotient`).
#[inline]
pub(crate) fn checked_quotient(a: f64, b: f64, d: f64, inv_d: f64) -> f64 {
    arch::checked_quotient(detect(), a, b, d, inv_d)
}

/// `MovingStats`' variance series over a run on one grid, compiled for
/// this CPU (see `arch::exact_var_run`).
#[inline]
pub(crate) fn exact_var_run<F: crate::Float>(
    older: &[F],
    newer: &[F],
    xs: &[F],
    out: &mut [F],
    spread: crate::kernels::exact_var::Spread,
) -> usize {
    arch::exact_var_run(detect(), older, newer, xs, out, spread)
}

pub use bundle::FromSlice;
pub(crate) use bundle::Sealed;

#[cfg(feature = "rayon")]
pub(crate) use channels::par_channel_moments;
pub(crate) use channels::{channel_moments, extend_row_moments};
#[cfg(feature = "rayon")]
pub(crate) use extremes::par_extremes;
pub(crate) use extremes::{Extremes, block_extremes, extremes};
pub(crate) use grad::channel_grad_sums;
#[cfg(feature = "rayon")]
pub(crate) use grad::par_channel_grad_sums;
#[cfg(feature = "rayon")]
pub(crate) use higher::par_higher_moments;
pub(crate) use higher::{block_higher_moments, higher_moments};

/// Blocks of rows below which a parallel per-channel reduction stops
/// forking and runs the rest of its subtree on one thread.
const GRAIN: usize = 16;

/// [`GRAIN`] for slice reductions, whose blocks are sixteen times longer:
/// two blocks (1 MiB of `f64`) a thread at least.
const SLICE_GRAIN: usize = 2;

/// Rows per block of the per-channel loops (the lanes loop and the
/// backward pass's rows): 4096 values per lane.
pub(crate) const BLOCK: usize = 4096;

/// Values per block of a slice reduction: 512 KiB of `f64`, 256 KiB of
/// `f32`, 128 KiB of `f16`.
///
/// The AVX2 kernels read a block as four streams side by side
/// (`arch::x86_64::streams`), which is what sets the size: the streams
/// gain with their length. On the Intel Xeon, `Variance::from_slice` over
/// 256 MiB of `f64` took 23.5 ms in blocks of 4096 values read in order,
/// 18.8 ms in blocks of 64 KiB read as four streams, and 17.0–17.6 ms in
/// blocks of 128 KiB to 512 KiB as four (18.3 ms in blocks of 128 KiB as
/// eight); the plain sum in eight streams took 16.4–17.2 ms. `f16` data,
/// whose loop is shorter of arithmetic than of bandwidth, needs the
/// longest: 0.83–0.89 of its plain sum in blocks of 32768 values (four
/// streams of 16 KiB), 0.92–0.95 in blocks of 65536 (four of 32 KiB). The
/// length is counted in values, not bytes, so that half-precision data is
/// cut and summed exactly as the same values given as `f64` and gives the
/// same bits. A block stays in L2 cache for the second pass it takes when
/// its first value was far from its mean; its lanes are flushed every
/// 4096 values (`arch::portable::FLUSH_CHUNKS`).
pub(crate) const SLICE_BLOCK: usize = 1 << 16;

/// Block `i` of `xs`.
#[inline]
pub(crate) fn block_of<S>(xs: &[S], i: usize) -> &[S] {
    let start = i.saturating_mul(SLICE_BLOCK);
    let end = start.saturating_add(SLICE_BLOCK).min(xs.len());
    xs.get(start..end).unwrap_or(&[])
}

/// Blocks in a slice of `len` values.
#[inline]
pub(crate) fn blocks(len: usize) -> usize {
    len.div_ceil(SLICE_BLOCK)
}

/// `x / n` for a count `n ≥ 1`, bit for bit as the division rounds it:
/// by a multiplication when `n` is a power of two (the quotient and the
/// product by `2⁻ᵉ` are the same exact value, rounded once alike), by the
/// division otherwise. A division costs several multiplications, and a
/// layer norm over rows of 32 or 128 values takes two a row.
#[inline]
pub(crate) fn divide_by_count(x: f64, n: u64) -> f64 {
    if n.is_power_of_two() && n < 1 << 53 {
        let e = u64::from(n.trailing_zeros());
        x * f64::from_bits((1023 - e) << 52)
    } else {
        #[allow(clippy::cast_precision_loss, reason = "as `x / n as f64` rounds it")]
        let n = n as f64;
        x / n
    }
}

/// Moments from shifted sums: `n` values, shift `k`, `s = Σd`, `q = Σd²`.
#[inline]
fn from_sums(count: usize, k: f64, s: f64, q: f64) -> Moments<f64> {
    let offset = divide_by_count(s, count as u64);
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

/// Binary digits below a run's standard deviation to which [`centre`]
/// rounds the mean.
const CENTRE_BITS: i32 = 16;

/// The point a run whose first value was far from its mean is summed
/// again around: the `mean` the first pass found, rounded to a multiple
/// of a power of two `g` between `2⁻¹⁸` and `2⁻¹⁶` of the standard
/// deviation (`variance` is the first pass's `M2/n`).
///
/// The mean itself would do for the variance, but not for the mean. Every
/// deviation `x − k` then carries the low bits of `k`, the same in all of
/// them, and the lanes' sums round those bits off the same way at every
/// addition: the errors add up instead of averaging out. With an outlier
/// of 10⁶ at the head of every 4096 values of `U(0, 1)` on a grid of
/// 2⁻²⁴ (`f32` data), the mean was 130 ulps off. A centre that is a
/// multiple of `g` has no bits below `g`, and no sum of a run's
/// deviations rounds at that scale (a block's `Σ|d|` is at most `n·σ`, so
/// its ulp is at most `2⁻³⁶σ`): the sums are then exact or round on the
/// data's own low bits, and the mean stays within a few ulps. A centre
/// at most `2⁻¹⁷σ` from the mean costs the variance nothing.
#[inline]
pub(crate) fn centre(mean: f64, variance: f64) -> f64 {
    if !variance.is_normal() || !mean.is_finite() {
        return mean;
    }
    // ⌊log₂ variance⌋: a normal number's unbiased exponent.
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_possible_wrap,
        reason = "an 11-bit exponent"
    )]
    let exponent = ((variance.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    // g = 2^(⌊e/2⌋ − CENTRE_BITS) ≤ 2⁻¹⁶σ, a normal number.
    let biased = exponent.div_euclid(2) - CENTRE_BITS + 1023;
    if biased < 1 {
        return mean;
    }
    #[allow(clippy::cast_sign_loss, reason = "biased ≥ 1")]
    let g = f64::from_bits((biased as u64) << 52);
    // 2⁵¹·g and 1.5·2⁵²·g: below the first, adding the second rounds to
    // a multiple of g, and subtracting it again is exact. From the first
    // up, the mean is a multiple of g/2 already.
    if mean.abs() >= g * 2_251_799_813_685_248.0 {
        return mean;
    }
    let magic = g * 6_755_399_441_055_744.0;
    (mean + magic) - magic
}

/// A run summed again around `centre` (the rounded `mean`, see
/// [`centre`]), or, in the rare case that this left the shift far again
/// (a first pass so far off that its variance was not to be trusted),
/// around the unrounded `mean` as well.
#[inline]
fn summed_again<K: Copy + PartialEq, T>(
    mean: K,
    centre: K,
    sums: impl Fn(K) -> T,
    far: impl Fn(&T) -> bool,
) -> T {
    let m = sums(centre);
    if centre != mean && far(&m) {
        sums(mean)
    } else {
        m
    }
}

/// Moments of one run of values by shifted sums (no tree).
///
/// The shift is the run's first value. When that value turns out to be far
/// from the run's mean ([`shift_is_far`]), the run is summed again around
/// the mean the first pass found, rounded to its [`centre`]: the run is
/// in cache by then, so the second pass costs compute, not bandwidth, and
/// it is only taken for runs that start with an untypical value.
#[inline]
fn run_moments<S: Element>(path: Path, xs: &[S]) -> Moments<f64> {
    let Some(&first) = xs.first() else {
        return Moments::default();
    };
    let sums = |k: f64| {
        let (s, q) = arch::shifted_sums(path, xs, k);
        from_sums(xs.len(), k, s, q)
    };
    let far = |m: &Moments<f64>| m.offset.is_finite() && m.m2.is_finite() && shift_is_far(m);
    let mut m = sums(first.widen());
    if far(&m) {
        let mean = m.shift + m.offset;
        m = summed_again(mean, centre(mean, m.m2 / m.count as f64), sums, far);
    }
    if m.offset.is_finite() && m.m2.is_finite() {
        m
    } else {
        // Non-finite data or sums that overflow: the robust scalar path
        // decides what the statistics are.
        Moments::of_values(xs.iter().copied())
    }
}

/// Co-moments from the pair sums `[Σdx, Σdy, Σdx², Σdy², Σdx·dy]` of
/// `count` pairs around `(kx, ky)`.
#[inline]
fn from_pair_sums(count: usize, kx: f64, ky: f64, sums: [f64; 5]) -> CoMoments<f64> {
    let [sx, sy, qx, qy, sxy] = sums;
    let x = from_sums(count, kx, sx, qx);
    let y = from_sums(count, ky, sy, qy);
    CoMoments {
        c: sxy - sx * y.offset,
        x,
        y,
    }
}

/// Co-moments of one run of pairs by shifted sums (no tree): the shifts are
/// the run's first pair, and the run is summed again around its means
/// (their [`centre`]s) when either shift is far from its mean, as in
/// [`run_moments`].
#[inline]
fn run_comoments<S: Element>(path: Path, xs: &[S], ys: &[S]) -> CoMoments<f64> {
    let (Some(&fx), Some(&fy)) = (xs.first(), ys.first()) else {
        return CoMoments::default();
    };
    let sums = |kx: f64, ky: f64| {
        from_pair_sums(
            xs.len(),
            kx,
            ky,
            arch::shifted_pair_sums(path, xs, ys, kx, ky),
        )
    };
    let finite = |m: &CoMoments<f64>| {
        m.x.offset.is_finite()
            && m.x.m2.is_finite()
            && m.y.offset.is_finite()
            && m.y.m2.is_finite()
            && m.c.is_finite()
    };
    let far = |m: &CoMoments<f64>| finite(m) && (shift_is_far(&m.x) || shift_is_far(&m.y));
    let mut m = sums(fx.widen(), fy.widen());
    if far(&m) {
        let mean = (m.x.shift + m.x.offset, m.y.shift + m.y.offset);
        let n = m.x.count as f64;
        let k = (centre(mean.0, m.x.m2 / n), centre(mean.1, m.y.m2 / n));
        m = summed_again(mean, k, |(kx, ky)| sums(kx, ky), far);
    }
    if finite(&m) {
        m
    } else {
        CoMoments::of_pairs(xs, ys)
    }
}

#[inline]
fn merge_moments(a: &mut Moments<f64>, b: Moments<f64>) {
    a.merge(&b);
}

/// A slice reduction on a given schedule: `leaf` of each block of `xs`,
/// merged by the fixed tree; `None` when `xs` is empty.
///
/// Every slice entry point reduces through it, and so do the tuples'
/// joint reductions ([`FromSlice`]), which put their
/// members' leaves side by side: each member then gets the tree it would
/// get alone, bit for bit.
pub(crate) fn reduce_blocks<S: Sync, T: Send>(
    schedule: Schedule,
    xs: &[S],
    leaf: impl Fn(&[S]) -> T + Sync,
    merge: impl Fn(&mut T, T) + Sync,
) -> Option<T> {
    if xs.is_empty() {
        return None;
    }
    let leaf = |i| leaf(block_of(xs, i));
    Some(schedule.tree(0, blocks(xs.len()), SLICE_GRAIN, &leaf, &merge))
}

/// The steps of [`reduce_blocks`]' sequential tree over `xs` (non-empty),
/// in order: each block, and a merge of the two partial results last
/// produced after each pair of subtrees. For reductions that keep their
/// partial results on stacks of their own (a tuple's members behind
/// `dyn`).
pub(crate) fn walk_blocks<S>(xs: &[S], mut step: impl FnMut(BlockStep<'_, S>)) {
    if xs.is_empty() {
        return;
    }
    schedule::walk(0, blocks(xs.len()), &mut |s| match s {
        schedule::Step::Leaf(i) => step(BlockStep::Block(block_of(xs, i))),
        schedule::Step::Merge => step(BlockStep::Merge),
    });
}

/// A step of [`walk_blocks`].
pub(crate) enum BlockStep<'a, S> {
    /// The next block's leaf.
    Block(&'a [S]),
    /// Merge the last two partial results, the later into the earlier.
    Merge,
}

/// A block's moments: a leaf of [`moments`]' tree.
#[inline]
pub(crate) fn block_moments<S: Element>(block: &[S]) -> Moments<f64> {
    run_moments(detect(), block)
}

/// The leaves of the slice reductions that [`FromSlice`]
/// hands between a tuple and its members. Public types in a private
/// module: the trait's hidden items name them, and nothing outside the
/// crate can.
///
/// A block's raw moments ([`block_moments`]).
#[derive(Clone, Copy, Debug)]
pub struct MomentsLeaf(pub(crate) Moments<f64>);

/// A block's central moments up to the third, or the fourth with `FOURTH`
/// ([`block_higher_moments`]); see [`MomentsLeaf`].
#[derive(Clone, Copy, Debug)]
pub struct HigherLeaf<const FOURTH: bool>(
    pub(crate) crate::moments::higher_moments::HigherMoments<f64, FOURTH>,
);

/// A block's extremes ([`block_extremes`]); see [`MomentsLeaf`].
#[derive(Clone, Copy, Debug)]
pub struct ExtremesLeaf(pub(crate) Extremes);

/// Raw moments of `xs` on a given path and schedule.
pub(crate) fn moments_on<S: Element>(path: Path, schedule: Schedule, xs: &[S]) -> Moments<f64> {
    reduce_blocks(schedule, xs, |b| run_moments(path, b), merge_moments).unwrap_or_default()
}

/// Raw co-moments of the pairs of `xs` and `ys` (equal lengths) on a given
/// path and schedule.
pub(crate) fn comoments_on<S: Element>(
    path: Path,
    schedule: Schedule,
    xs: &[S],
    ys: &[S],
) -> CoMoments<f64> {
    let len = xs.len().min(ys.len());
    if len == 0 {
        return CoMoments::default();
    }
    let leaf = |i| run_comoments(path, block_of(xs, i), block_of(ys, i));
    let merge = |a: &mut CoMoments<f64>, b: CoMoments<f64>| a.merge(&b);
    // The tree of `reduce_blocks`, over pairs of blocks.
    schedule.tree(0, blocks(len), SLICE_GRAIN, &leaf, &merge)
}

/// Raw co-moments of the pairs of `xs` and `ys` (equal lengths), in `f64`.
pub(crate) fn comoments<S: Element>(xs: &[S], ys: &[S]) -> CoMoments<f64> {
    comoments_on(detect(), Schedule::Sequential, xs, ys)
}

/// [`comoments`] on every rayon thread, bit for bit the same.
#[cfg(feature = "rayon")]
pub(crate) fn par_comoments<S: Element>(xs: &[S], ys: &[S]) -> CoMoments<f64> {
    comoments_on(detect(), Schedule::Parallel, xs, ys)
}

/// Weighted moments of one run by shifted sums: the shift is the run's
/// first value with a positive weight, and the run is summed again around
/// its mean (its [`centre`]) when that value is far from it. Runs with
/// non-finite values, or with no positive weight, take West's step one
/// value at a time.
///
/// `None` when a weight is NaN, negative or infinite, or the run's weights
/// overflow: the kernel checks the weights in the pass that sums them.
fn run_weighted<S: Element, const SPREAD: bool>(
    path: Path,
    xs: &[S],
    ws: &[S],
) -> Option<WeightedMoments<f64>> {
    let by_steps = || {
        let mut m = WeightedMoments::default();
        for (x, w) in xs.iter().zip(ws) {
            m.push::<SPREAD>(x.widen(), w.widen()).ok()?;
        }
        Some(m)
    };
    let Some(first) = xs.iter().zip(ws).position(|(_, w)| w.widen() > 0.0) else {
        return by_steps();
    };
    let sums = |k: f64| {
        let [w, s, q, pairs, positive, invalid] = arch::shifted_weighted_sums(path, xs, ws, k);
        if invalid > 0.0 || !w.is_finite() {
            return None;
        }
        let offset = s / w;
        let m2 = q - s * offset;
        // Σᵢ≠ⱼ wᵢwⱼ / Σw from the sum over the pairs i < j, at most Σw as
        // West's steps keep it. Pairs that overflow (weights near 1e154)
        // make it NaN, which sends the run to those steps, as a
        // non-finite M2 does.
        let divisor = if pairs.is_finite() {
            ((pairs / w) * 2.0).min(w)
        } else {
            f64::NAN
        };
        Some(WeightedMoments {
            // A count of at most a block's length, held exactly in an f64
            // sum.
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "a non-negative integer at most a block's length"
            )]
            count: positive as u64,
            weight: w,
            divisor,
            shift: k,
            offset,
            m2: if m2 < 0.0 { 0.0 } else { m2 },
        })
    };
    let finite = |m: &WeightedMoments<f64>| {
        m.offset.is_finite() && m.m2.is_finite() && (!SPREAD || m.divisor.is_finite())
    };
    // `shift_is_far`, with Σw for the count.
    let far = |m: &Option<WeightedMoments<f64>>| {
        m.is_some_and(|m| finite(&m) && m.offset * m.offset * m.weight > 16.0 * m.m2)
    };
    let mut m = sums(xs[first].widen());
    if far(&m) {
        let m1 = m?;
        let mean = m1.shift + m1.offset;
        m = summed_again(mean, centre(mean, m1.m2 / m1.weight), sums, far);
    }
    let mut m = m?;
    if !finite(&m) {
        return by_steps();
    }
    if !SPREAD {
        m.m2 = 0.0;
        m.divisor = 0.0;
    }
    Some(m)
}

/// The weighted moments of `xs` with weights `ws` by the blocked kernels,
/// in `F`, on a given schedule. The kernel checks the weights in the pass
/// that sums them; only when it finds a bad one are they read again, to
/// name the first.
///
/// # Errors
///
/// Slices of unequal length, a weight that is negative, NaN or infinite,
/// or weights whose sum overflows `F`.
pub(crate) fn weighted_moments_of<S: Element, F: Float, const SPREAD: bool>(
    schedule: Schedule,
    xs: &[S],
    ws: &[S],
) -> Result<WeightedMoments<F>, Error> {
    if xs.len() != ws.len() {
        return Err(Error::length("weights", xs.len(), ws.len()));
    }
    let m = weighted_moments_on::<S, SPREAD>(schedule, xs, ws);
    let sum = match m {
        Some(m) => m.weight,
        None => weight_sum(ws)?,
    };
    match m {
        Some(m) if sum <= F::max_value().as_f64() => Ok(m.cast()),
        _ => Err(Error::parameter(
            "weights",
            sum,
            "small enough that their sum stays finite",
        )),
    }
}

/// Σw in order, or the first invalid weight's error.
fn weight_sum<S: Element>(ws: &[S]) -> Result<f64, Error> {
    let mut sum = 0.0_f64;
    for &w in ws {
        let w = w.widen();
        check_weight(w)?;
        sum += w;
    }
    Ok(sum)
}

/// Weighted moments of `xs` with weights `ws` (equal lengths), blocked and
/// merged in the fixed tree on a given schedule; `None` when a weight is
/// NaN, negative or infinite, or a block's weights overflow.
pub(crate) fn weighted_moments_on<S: Element, const SPREAD: bool>(
    schedule: Schedule,
    xs: &[S],
    ws: &[S],
) -> Option<WeightedMoments<f64>> {
    let len = xs.len().min(ws.len());
    if len == 0 {
        return Some(WeightedMoments::default());
    }
    let path = detect();
    let leaf = |i| run_weighted::<S, SPREAD>(path, block_of(xs, i), block_of(ws, i));
    let merge = |a: &mut Option<WeightedMoments<f64>>, b: Option<WeightedMoments<f64>>| {
        *a = match (*a, b) {
            (Some(mut a), Some(b)) => {
                a.merge::<SPREAD>(&b);
                Some(a)
            }
            _ => None,
        };
    };
    schedule.tree(0, blocks(len), SLICE_GRAIN, &leaf, &merge)
}

/// Raw moments of `xs`, in `f64`.
pub(crate) fn moments<S: Element>(xs: &[S]) -> Moments<f64> {
    moments_on(detect(), Schedule::Sequential, xs)
}

/// Raw moments of `xs` on every rayon thread: bit-for-bit [`moments`],
/// whatever the number of threads.
#[cfg(feature = "rayon")]
pub(crate) fn par_moments<S: Element>(xs: &[S]) -> Moments<f64> {
    moments_on(detect(), Schedule::Parallel, xs)
}

#[cfg(test)]
mod tests;
