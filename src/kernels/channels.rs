//! Per-channel moments of a row-major tensor seen as `[outer, channels,
//! inner]` (NCHW: `outer = N`, `inner = H·W`; NHWC: `outer = N·H·W`,
//! `inner = 1`).
//!
//! Three shapes of loop, chosen by the shape:
//!
//! - **short runs** (a single outer position and `inner < SHORT_RUN`: a
//!   layer norm's rows, small instances): each channel is one short run,
//!   and many runs go through one kernel call, each summed about its own
//!   first value.
//! - **rows** (`inner ≥ ROW_MIN`, or a single outer position): each run of
//!   `inner` values belongs to one channel and is reduced by the blocked
//!   slice kernel, or, from [`PAIR_MIN`] values, two channels' runs at a
//!   time by the pair kernel (which channels go together depends only on
//!   the shape); the runs of a channel are merged by the fixed tree over
//!   `outer`.
//! - **lanes** (shorter `inner`: NHWC, and NCHW with a small `H·W`): the
//!   values of one outer position are `channels · inner` consecutive lanes.
//!   A block of [`BLOCK`] rows ([`BLOCK`] values per lane) is accumulated
//!   lane by lane, vectorised across lanes, with one shift per channel
//!   taken from the block's first row; the lanes of a channel share its
//!   shift, so their sums simply add. Blocks are merged by the fixed tree
//!   over block indices.
//!
//! Both trees depend only on the shape, so the parallel versions give the
//! sequential result bit for bit.

use super::arch::{self, Path, detect};
use super::schedule::Schedule;
use super::{BLOCK, centre, comoments_on, from_sums, moments_on, run_moments, shift_is_far};
use crate::Element;
use crate::moments::Moments;
use alloc::vec;
use alloc::vec::Vec;

/// Runs at least this long take the rows loop. (Shorter runs pay the slice
/// kernel's per-run work too often: at 256 values, NCHW ran at 0.6 of a
/// plain sum by rows and 0.8 by lanes; at 3136, lanes ran at 0.75 and rows
/// at the sum's speed.)
#[cfg(not(fuzzing))]
const ROW_MIN: usize = 1024;
#[cfg(fuzzing)]
const ROW_MIN: usize = 8;

/// Runs shorter than this, when each channel is one run (a single outer
/// position: a layer norm's rows, the instances and groups of a
/// channels-first tensor), go many to a call through the short-runs
/// kernel. (One slice-kernel call per run: rows of 32 `f32` took 16 ns each
/// in cache, 10 ns this way; from memory, layer norm over 128 features
/// went from 0.45–0.62 of a plain sum to 0.62–0.69.)
#[cfg(not(fuzzing))]
const SHORT_RUN: usize = 256;
#[cfg(fuzzing)]
const SHORT_RUN: usize = 4;

/// Runs of at least this many values (64×128 images and up) are read two
/// at a time, through the pair kernel, which reads each in two parts: for
/// 128×128 `f32` images, four streams of 32 KiB over two images instead
/// of four of 16 KiB over one. One image at a time against two, alternated
/// in one process on the Intel Xeon, 256 MiB of `f32` NCHW data: 64×128
/// images 3.6 % faster in pairs, 128×128 6.4–9 % (14 % for 64 MiB),
/// 256×256 10.6 %; 64×64 2–4 % slower and 32×32 9–15 %, so shorter runs
/// stay one at a time. Layer norm's rows agree (1024 features 14 % slower
/// in pairs, 4096 6 %, 8192 3 % faster, 16384 7.5 %). `f16` and `bf16`
/// runs gain less (0–5 %).
#[cfg(not(fuzzing))]
const PAIR_MIN: usize = 8192;
/// Under the fuzzer, whose inputs are a few KiB, pairs from 8 values (and
/// rows from 8, short runs below 4), so that it reaches every path.
#[cfg(fuzzing)]
const PAIR_MIN: usize = 8;

/// Lanes accumulated at once in the lanes loop, unless one channel has more
/// (three `f64` arrays of this length stay in L1 cache).
const LANE_CAP: usize = 512;

/// Lanes below which the lanes loop reads several slabs as one row: a
/// cache line of `f32` for each of four rows is 16 lanes, and 64 keep the
/// loop's steps and prefetches in their stride.
const MIN_LANES: usize = 64;

/// Values below which a parallel reduction stops forking.
const PAR_GRAIN: usize = super::GRAIN * BLOCK;

/// The tensor's geometry, with `outer` cut to what `xs` holds.
#[derive(Clone, Copy)]
struct Shape {
    outer: usize,
    channels: usize,
    inner: usize,
    /// `channels · inner`: values per outer position.
    slab: usize,
}

impl Shape {
    fn new(len: usize, outer: usize, channels: usize, inner: usize) -> Option<Self> {
        let slab = channels.checked_mul(inner).filter(|&s| s > 0)?;
        let outer = outer.min(len / slab);
        (outer > 0).then_some(Self {
            outer,
            channels,
            inner,
            slab,
        })
    }

    /// Slabs that the lanes loop reads as one row: enough for
    /// [`MIN_LANES`] lanes.
    fn fuse(&self) -> usize {
        MIN_LANES.div_ceil(self.slab)
    }

    /// Outer positions per block of the lanes loop: about [`BLOCK`] values
    /// per lane, fused rows counting once.
    fn rows_per_block(&self) -> usize {
        BLOCK * self.fuse()
    }

    fn lane_blocks(&self) -> usize {
        self.outer.div_ceil(self.rows_per_block())
    }

    /// Channels per lane group.
    fn group(&self) -> usize {
        (LANE_CAP / self.inner).max(1)
    }

    /// The values of outer positions `lo..hi`.
    fn slabs<'a, S>(&self, xs: &'a [S], lo: usize, hi: usize) -> &'a [S] {
        xs.get(lo * self.slab..hi.min(self.outer) * self.slab)
            .unwrap_or(&[])
    }

    /// The values of lane block `b`.
    fn lane_block<'a, S>(&self, xs: &'a [S], b: usize) -> &'a [S] {
        let r = self.rows_per_block();
        self.slabs(xs, b * r, (b + 1) * r)
    }
}

#[allow(
    clippy::ptr_arg,
    clippy::needless_pass_by_value,
    reason = "the tree's merge takes `(&mut T, T)` for the leaf type"
)]
fn merge_each(a: &mut Vec<Moments<f64>>, b: Vec<Moments<f64>>) {
    for (a, b) in a.iter_mut().zip(&b) {
        a.merge(b);
    }
}

/// Moments of the channels `first..first + out.len()` over the rows of
/// `block` (whole slabs), lanes loop.
///
/// Each channel's shift is its value in the block's first row. A channel
/// whose first value turns out to be far from its mean
/// ([`shift_is_far`]) is summed again around the mean the first pass
/// found, rounded to its [`centre`], with the group's other channels
/// keeping their shifts: one untypical value costs a second pass over the
/// group, never digits.
fn lane_group<S: Element>(
    path: Path,
    shape: Shape,
    block: &[S],
    first: usize,
    out: &mut [Moments<f64>],
) {
    let inner = shape.inner;
    let start = first * inner;
    let Some(first_row) = block.get(start..start + out.len() * inner) else {
        return;
    };
    let mut shifts: Vec<f64> = first_row
        .chunks_exact(inner)
        .map(|head| head.first().map_or(0.0, |x| x.widen()))
        .collect();
    lane_sums(path, shape, block, first, &shifts, out);
    let far = |m: &Moments<f64>| m.offset.is_finite() && m.m2.is_finite() && shift_is_far(m);
    if !out.iter().any(far) {
        return;
    }
    // The first pass's means of the channels summed again, as
    // `summed_again` takes them: around their centres, then around the
    // means themselves where a centre left the shift far.
    let means: Vec<Option<f64>> = out
        .iter()
        .map(|m| far(m).then_some(m.shift + m.offset))
        .collect();
    for ((k, m), mean) in shifts.iter_mut().zip(out.iter()).zip(&means) {
        if let Some(mean) = *mean {
            *k = centre(mean, m.m2 / m.count as f64);
        }
    }
    lane_sums(path, shape, block, first, &shifts, out);
    let mut again = false;
    for ((k, m), mean) in shifts.iter_mut().zip(out.iter()).zip(&means) {
        if let Some(mean) = *mean
            && k.to_bits() != mean.to_bits()
            && far(m)
        {
            *k = mean;
            again = true;
        }
    }
    if again {
        lane_sums(path, shape, block, first, &shifts, out);
    }
}

/// [`lane_group`]'s sums around the given per-channel shifts.
///
/// When the group spans whole slabs narrower than [`MIN_LANES`] (NHWC with
/// three channels, say), the block is contiguous and `fuse` consecutive
/// slabs are read as one wider row, so the loop runs over enough lanes to
/// vectorise; the fused lanes of a channel share its shift, and their sums
/// are added back onto the first slab's lanes afterwards.
fn lane_sums<S: Element>(
    path: Path,
    shape: Shape,
    block: &[S],
    first: usize,
    channel_shifts: &[f64],
    out: &mut [Moments<f64>],
) {
    let inner = shape.inner;
    let width = out.len() * inner;
    let start = first * inner;
    let fuse = if width == shape.slab { shape.fuse() } else { 1 };
    let lanes = fuse * width;
    let mut shift = vec![0.0_f64; lanes];
    for (k, &kc) in shift
        .chunks_exact_mut(inner)
        .zip(channel_shifts.iter().cycle())
    {
        k.fill(kc);
    }
    let mut s = vec![0.0_f64; lanes];
    let mut q = vec![0.0_f64; lanes];
    let rows = block.len() / shape.slab;
    let (fused, rest) = block.split_at((rows - rows % fuse) * shape.slab);
    arch::shifted_rows(
        path,
        fused,
        fuse * shape.slab,
        start,
        &shift,
        &mut s,
        &mut q,
    );
    let (s, s_fused) = s.split_at_mut(width);
    let (q, q_fused) = q.split_at_mut(width);
    let shift = shift.get(..width).unwrap_or(&[]);
    arch::shifted_rows(path, rest, shape.slab, start, shift, s, q);
    for (sf, qf) in s_fused.chunks_exact(width).zip(q_fused.chunks_exact(width)) {
        for (a, b) in s.iter_mut().zip(sf).chain(q.iter_mut().zip(qf)) {
            *a += b;
        }
    }
    let count = rows * inner;
    for (c, (((m, &kc), s), q)) in out
        .iter_mut()
        .zip(channel_shifts)
        .zip(s.chunks_exact(inner))
        .zip(q.chunks_exact(inner))
        .enumerate()
    {
        *m = from_sums(count, kc, s.iter().sum(), q.iter().sum());
        if !(m.offset.is_finite() && m.m2.is_finite()) {
            // Non-finite data or overflowing sums: the robust scalar path
            // over this channel's values in the block.
            let channel = block
                .chunks_exact(shape.slab)
                .filter_map(|slab| slab.chunks_exact(inner).nth(first + c))
                .flatten()
                .copied();
            *m = Moments::of_values(channel);
        }
    }
}

/// The moments of each `run`-long chunk of `slab`, many runs per kernel
/// call. Each run is summed about its first value; a run whose first value
/// is far from its mean, or that holds a non-finite value, is taken again
/// by the slice kernel's own run (which re-sums it about its mean, or takes
/// the robust path). Each run's moments depend on its values alone, so any
/// schedule gives the same bits.
fn short_runs<S: Element>(
    path: Path,
    schedule: Schedule,
    slab: &[S],
    run: usize,
) -> Vec<Moments<f64>> {
    let mut out = vec![Moments::default(); slab.len() / run];
    let per_task = (PAR_GRAIN / run).max(1);
    let within = schedule.at_least(slab.len(), PAR_GRAIN);
    within.for_each_chunk(&mut out, per_task, |t, out| {
        let first = t * per_task;
        let runs = slab
            .get(first * run..(first + out.len()) * run)
            .unwrap_or(&[]);
        let (mut s, mut q) = (vec![0.0; out.len()], vec![0.0; out.len()]);
        arch::shifted_runs(path, runs, run, 0, &mut s, &mut q);
        let sums = s.iter().zip(&q);
        for ((m, x), (&s, &q)) in out.iter_mut().zip(runs.chunks_exact(run)).zip(sums) {
            *m = short_run(path, x, s, q);
        }
    });
    out
}

/// The moments of one short run `x` from its sums about its first value
/// (`s`, `q` from [`arch::shifted_runs`]), or, when that value is far
/// from the mean or a value is not finite, from the slice kernel's own
/// run.
#[inline]
fn short_run<S: Element>(path: Path, run: &[S], sum: f64, squares: f64) -> Moments<f64> {
    let shift = run.first().map_or(0.0, |k| k.widen());
    let m = from_sums(run.len(), shift, sum, squares);
    if !(m.offset.is_finite() && m.m2.is_finite()) || shift_is_far(&m) {
        run_moments(path, run)
    } else {
        m
    }
}

/// Bytes ahead at which [`extend_row_moments`]' short-runs loop asks for
/// the lines of each of its four streams (see `arch::x86_64::runs`).
const RUNS_AHEAD: usize = 4096;

/// Appends to `out` the moments of every `run`-long row of `xs` (a
/// partial row at the end is left out): the moments
/// [`channel_moments`]`(xs, 1, rows, run)` gives them, bit for bit, when
/// `xs` starts on an even row of that tensor (rows of [`PAIR_MIN`] values
/// and more go two at a time). For a caller that takes a tensor's rows a
/// chunk at a time, whose moments it uses while the chunk is in cache
/// (a layer norm's statistics, and its normalization), with no vector of
/// moments per chunk.
pub(crate) fn extend_row_moments<S: Element>(xs: &[S], run: usize, out: &mut Vec<Moments<f64>>) {
    let path = detect();
    if run == 0 {
        return;
    }
    let rows = || xs.chunks_exact(run);
    if run < SHORT_RUN {
        let n = xs.len() / run;
        let (mut s, mut q) = (vec![0.0; n], vec![0.0; n]);
        arch::shifted_runs(path, xs, run, RUNS_AHEAD, &mut s, &mut q);
        out.extend(
            rows()
                .zip(&s)
                .zip(&q)
                .map(|((x, &s), &q)| short_run(path, x, s, q)),
        );
    } else if run < PAIR_MIN {
        // Each run as the slice kernel's one block: its sums about its
        // first value, four runs at a time, and taken again by the slice
        // kernel's own run where that value was far or a sum not finite.
        let n = xs.len() / run;
        let (mut s, mut q) = (vec![0.0; n], vec![0.0; n]);
        arch::shifted_long_runs(path, xs, run, RUNS_AHEAD, &mut s, &mut q);
        out.extend(rows().zip(&s).zip(&q).map(|((x, &s), &q)| {
            let m = from_sums(run, x.first().map_or(0.0, |k| k.widen()), s, q);
            if !(m.offset.is_finite() && m.m2.is_finite()) || shift_is_far(&m) {
                moments_on(path, Schedule::Sequential, x)
            } else {
                m
            }
        }));
    } else {
        let mut pairs = xs.chunks_exact(2 * run);
        for (p, pair) in pairs.by_ref().enumerate() {
            let (x, y) = pair.split_at(run);
            if let Some(ahead) = xs.get((2 * p + 2) * run..(2 * p + 4) * run) {
                let (a, b) = ahead.split_at(run);
                arch::warm_pairs(path, a, b);
            }
            let m = comoments_on(path, Schedule::Sequential, x, y);
            out.extend([m.x, m.y]);
        }
        if let Some(last) = pairs.remainder().get(..run) {
            out.push(moments_on(path, Schedule::Sequential, last));
        }
    }
}

/// Per-channel moments on a given path and schedule: one body for the
/// sequential and the parallel reduction. A parallel schedule forks the
/// tree over outer positions or lane blocks, and within one of them the
/// channels too when it alone is worth spreading.
pub(crate) fn channel_moments_on<S: Element>(
    path: Path,
    schedule: Schedule,
    xs: &[S],
    outer: usize,
    channels: usize,
    inner: usize,
) -> Vec<Moments<f64>> {
    let Some(shape) = Shape::new(xs.len(), outer, channels, inner) else {
        return vec![Moments::default(); channels];
    };
    if shape.outer == 1 && inner < SHORT_RUN {
        return short_runs(path, schedule, shape.slabs(xs, 0, 1), inner);
    }
    // Long runs, or a single outer position (a sample's groups, a layer
    // norm's rows), where each channel is one contiguous run: each run by
    // the slice kernel, or two by the pair kernel (see `PAIR_MIN`). (The
    // lanes loop over one row took 14 times as long on rows of 768
    // values.)
    if inner >= ROW_MIN || shape.outer == 1 {
        let within = schedule.at_least(shape.slab, PAR_GRAIN);
        let leaf = |o| {
            let slab = shape.slabs(xs, o, o + 1);
            let run = |c: usize| slab.get(c * inner..(c + 1) * inner).unwrap_or(&[]);
            if inner < PAIR_MIN {
                // One run at a time, the next one's streams warmed.
                return within.map(channels, |c| {
                    if c + 1 < channels {
                        arch::warm(path, run(c + 1));
                    }
                    moments_on(path, within, run(c))
                });
            }
            let pairs = within.map(channels.div_ceil(2), |p| {
                let c = 2 * p;
                if c + 1 < channels {
                    if c + 3 < channels {
                        arch::warm_pairs(path, run(c + 2), run(c + 3));
                    }
                    let m = comoments_on(path, within, run(c), run(c + 1));
                    [m.x, m.y]
                } else {
                    [moments_on(path, within, run(c)), Moments::default()]
                }
            });
            pairs.into_iter().flatten().take(channels).collect()
        };
        schedule.tree(0, shape.outer, PAR_GRAIN / shape.slab, &leaf, &merge_each)
    } else {
        let block_len = shape.rows_per_block() * shape.slab;
        let within = schedule.at_least(block_len, PAR_GRAIN);
        let group = shape.group();
        let leaf = |b| {
            let block = shape.lane_block(xs, b);
            let mut out = vec![Moments::default(); shape.channels];
            within.for_each_chunk(&mut out, group, |g, chunk| {
                lane_group(path, shape, block, g * group, chunk);
            });
            out
        };
        schedule.tree(
            0,
            shape.lane_blocks(),
            PAR_GRAIN / block_len,
            &leaf,
            &merge_each,
        )
    }
}

/// Per-channel raw moments of a row-major tensor seen as
/// `[outer, channels, inner]`, in `f64`. The caller guarantees
/// `xs.len() == outer * channels * inner` (a shorter slice is read only as
/// far as whole outer positions go).
pub(crate) fn channel_moments<S: Element>(
    xs: &[S],
    outer: usize,
    channels: usize,
    inner: usize,
) -> Vec<Moments<f64>> {
    channel_moments_on(detect(), Schedule::Sequential, xs, outer, channels, inner)
}

/// [`channel_moments`] on every rayon thread: bit-for-bit the sequential
/// result, whatever the number of threads.
#[cfg(feature = "rayon")]
pub(crate) fn par_channel_moments<S: Element>(
    xs: &[S],
    outer: usize,
    channels: usize,
    inner: usize,
) -> Vec<Moments<f64>> {
    channel_moments_on(detect(), Schedule::Parallel, xs, outer, channels, inner)
}
