//! The portable loops: shifted sums over a run of values, in `f64` lanes.
//!
//! Plain safe Rust, generic over the element type and over whether to fuse
//! `d·d + q` (`FMA`), and `#[inline(always)]`: the compiler vectorises their
//! independent lanes for the build's target, and the x86-64 file compiles
//! the same bodies again inside `#[target_feature(enable = "avx2,fma")]`
//! functions. Without FMA they never call `mul_add` (it would be a library
//! call there).

#![allow(
    clippy::inline_always,
    reason = "the loop bodies must inline into the `#[target_feature]` functions to be compiled for AVX2/FMA"
)]

use super::{prefetch, prefetch_line, prefetching};
use crate::float::Elements;
use crate::kernels::affine_params::{Affine, PerValue};
use crate::{Element, Float};
use core::ops::Range;

/// Accumulators per sum on the portable path: four SSE2 registers of two
/// `f64` (sixteen registers hold both sums without spilling).
const PORTABLE_LANES: usize = 8;

/// Adds the lanes in a fixed pairwise order.
#[inline(always)]
pub(super) fn fold_lanes<const N: usize>(mut v: [f64; N]) -> f64 {
    let mut width = N / 2;
    while width > 0 {
        for i in 0..width {
            v[i] += v[i + width];
        }
        width /= 2;
    }
    v[0]
}

/// Bytes of data the loops ask for ahead of the loads.
///
/// Each value feeds three dependent operations (subtract, add, FMA) that
/// wait in the scheduler for their load; from memory, that caps the loads
/// in flight, and without help the loops reach only about 0.8 of a plain
/// sum's bandwidth. Software prefetches retire at once and keep enough
/// cache lines in flight: with them the kernels run at the sum's speed.
/// Measured on a 2-core Xeon VM with AVX-512 (see docs/PERFORMANCE.md), in the
/// roofline harness, 256 MiB, with ordinary pages (the default where
/// transparent huge pages are `madvise`), against the compiled
/// 16-accumulator sum the harness used then; that sum later proved about
/// 20 % slower than the same loop written with intrinsics, so the columns
/// compare the distances with each other, not with memory speed:
///
/// | distance, hint | `f64` / `f32` slices | min/max, skewness, kurtosis | NCHW |
/// |---|---|---|---|
/// | 2 KiB into L1 | 1.03–1.07 / 0.84–0.89 | 0.84–0.96 | 0.83–0.86 |
/// | 4 KiB into L1 | 1.07–1.08 / 0.93–0.95 | 0.85–0.96 | 0.93–0.95 |
/// | 4 KiB into L2 | 1.18 / 1.22–1.28 | 1.00–1.10 | 1.14–1.22 |
/// | 8 KiB into L2 | 1.15–1.17 / 1.17–1.18 | 0.99–1.11 | 1.17–1.22 |
///
/// (With huge pages every choice ran above the sum, 4 KiB into L2 at
/// 1.11–1.38 on these rows.) These are the one-stream loops; the loops
/// that read several streams use [`PREFETCH_STREAMS`]. On AMD EPYC the
/// hardware prefetcher keeps up alone and the hints cost bandwidth
/// instead, so they are off there (see `x86_64::PREFETCHING`).
pub(super) const PREFETCH: usize = 4096;

/// Bytes ahead, per stream, that the loops reading several streams side
/// by side ask for (into L1): pairs of slices, values and weights, and
/// the lanes loop, which looks twice as far along its four rows. Against
/// the intrinsic sum, on the Intel Xeon, 2 KiB into L1 ran those loops at
/// 1.14–1.18 (`Covariance`), 1.14 (`WeightedVariance`), 1.13–1.17 (NHWC)
/// and 1.05–1.11 (NHWC `f16`), against 0.96–1.09, 0.96–1.00, 1.07–1.16
/// and 0.78–0.87 with 4 KiB into L2.
pub(super) const PREFETCH_STREAMS: usize = 2048;

/// Chunks of 16 values a loop sums between two flushes of its lanes into
/// running totals: 4096 values, the length the slice blocks had before
/// they were read as streams, which kept the lanes' rounding within the
/// accuracy policy (256 values a lane). Longer lanes cost digits: on
/// `1e9 + U(0, 1)`, the correlation of 20 000 pairs in one block, in lanes
/// of 2 500 values, was 2.8e-14 off, against a bar of 1e-14; flushed, the
/// block's M2 is 1.4e-16 off.
pub(super) const FLUSH_CHUNKS: usize = 256;

/// `xs` as whole arrays of `N` values, and the rest.
#[inline(always)]
pub(super) fn array_chunks<S, const N: usize>(xs: &[S]) -> (impl Iterator<Item = &[S; N]>, &[S]) {
    let chunks = xs.chunks_exact(N);
    let tail = chunks.remainder();
    (chunks.filter_map(|c| c.try_into().ok()), tail)
}

#[inline(always)]
pub(super) fn square_add<const FMA: bool>(d: f64, q: f64) -> f64 {
    multiply_add::<FMA>(d, d, q)
}

/// `a·b + c`, as one fused operation when `FMA`.
#[inline(always)]
fn multiply_add<const FMA: bool>(a: f64, b: f64, c: f64) -> f64 {
    if FMA {
        num_traits::Float::mul_add(a, b, c)
    } else {
        a * b + c
    }
}

#[inline(always)]
pub(super) fn sums_body<S: Element, const FMA: bool>(xs: &[S], k: f64) -> (f64, f64) {
    let mut s = [0.0_f64; PORTABLE_LANES];
    let mut q = [0.0_f64; PORTABLE_LANES];
    let (chunks, tail) = array_chunks::<S, PORTABLE_LANES>(xs);
    for chunk in chunks {
        prefetch::<false, _>(chunk.as_ptr().cast::<u8>().wrapping_add(PREFETCH));
        for ((x, s), q) in chunk.iter().zip(&mut s).zip(&mut q) {
            let d = x.widen() - k;
            *s += d;
            *q = square_add::<FMA>(d, *q);
        }
    }
    for ((x, s), q) in tail.iter().zip(&mut s).zip(&mut q) {
        let d = x.widen() - k;
        *s += d;
        *q = square_add::<FMA>(d, *q);
    }
    (fold_lanes(s), fold_lanes(q))
}

/// [`sums_body`] of each `run`-long chunk of `xs` about its own first
/// value: `s[j]`, `q[j]` are `Σd` and `Σd²` of run `j` (`s`, `q` and the
/// runs have one entry each; a partial run at the end is left out). One
/// call for many short runs, so each costs its arithmetic and not a call
/// through the routing.
#[inline(always)]
pub(super) fn runs_body<S: Element, const FMA: bool>(
    xs: &[S],
    run: usize,
    s: &mut [f64],
    q: &mut [f64],
) {
    if run == 0 {
        return;
    }
    for ((x, s_out), q_out) in xs.chunks_exact(run).zip(s).zip(q) {
        let k = x.first().map_or(0.0, |k| k.widen());
        // Two sets of four lanes, eight values a step: two chains of
        // additions per sum, and a fold of four lanes.
        let mut s = [[0.0_f64; 4]; 2];
        let mut q = [[0.0_f64; 4]; 2];
        let (chunks, tail) = array_chunks::<S, 8>(x);
        for chunk in chunks {
            for (half, (s, q)) in chunk.chunks_exact(4).zip(s.iter_mut().zip(&mut q)) {
                for ((x, s), q) in half.iter().zip(s).zip(q) {
                    let d = x.widen() - k;
                    *s += d;
                    *q = square_add::<FMA>(d, *q);
                }
            }
        }
        for (i, x) in tail.iter().enumerate() {
            let d = x.widen() - k;
            let (set, lane) = (i / 4, i % 4);
            s[set][lane] += d;
            q[set][lane] = square_add::<FMA>(d, q[set][lane]);
        }
        let pair = |v: [[f64; 4]; 2]| fold_lanes([0, 1, 2, 3].map(|l| v[0][l] + v[1][l]));
        *s_out = pair(s);
        *q_out = pair(q);
    }
}

/// Lanes per step of the lanes loop: one 64-byte cache line of `f32` (two
/// of `f64`).
pub(super) const ROW_STEP: usize = 16;

/// Per-lane accumulation across rows: for every row (a `stride`-long chunk
/// of `slab`), `row[start..start + width]` is added lane by lane, shifted by
/// `shift`, into `s` and `q` (all three of length `width`).
///
/// Rows go four at a time: their four values per lane are summed first,
/// then added to the lane's accumulators, so the accumulators are loaded
/// and stored once per four rows rather than once per row (which capped the
/// loop at the L1 cache's store rate). The four rows of a step are the
/// same row of each quarter of the slab, so the loop reads four
/// sequential streams; leftover rows go one at a time at the end. The
/// grouping depends only on the row index, never on threads.
///
/// (Four consecutive rows read side by side, the loop's first form, left
/// the hardware prefetcher of an AMD EPYC with short interleaved runs: 64
/// channels ran at 0.68 of a plain sum from memory and 512 channels at
/// 0.33; as four streams, 0.77 and 0.70.)
///
/// Each step of [`ROW_STEP`] lanes prefetches, where prefetching is on,
/// the lines that each stream will read `2 · PREFETCH_STREAMS` bytes of reading
/// order later: one prefetch per line read, spread evenly. (On the Intel
/// Xeon, with consecutive rows: a burst of prefetches at the start of each
/// quad ran at 0.6 of a plain sum from memory on rows of 512 `f32`, and
/// 0.75 on rows of 64; spread, 0.85 and 0.97. Half this distance cost 0.1
/// on the wide rows, a quarter 0.2; two or four times as far changed
/// nothing beyond the noise.) Whether prefetching is on is read once per
/// call: read at every step (four times a step, an atomic load the
/// compiler cannot hoist), it cost the loop 2–4 % in L2 there.
#[inline(always)]
pub(super) fn rows_body<S: Element, const FMA: bool>(
    slab: &[S],
    stride: usize,
    start: usize,
    shift: &[f64],
    s: &mut [f64],
    q: &mut [f64],
) {
    rows_body_by::<S, FMA, Widening<FMA>>(slab, stride, start, shift, s, q);
}

/// How the lanes loop takes one step of four rows: `lanes` (at most
/// [`ROW_STEP`] of them), given `1` hidden from the optimiser and the
/// shifts and accumulators of the whole width.
///
/// A trait rather than a closure: the step must inline into the
/// `#[target_feature]` kernel that runs the loop, and a closure (or a
/// function passed as a value) was compiled on its own, without the
/// kernel's instruction sets, and called once a step.
pub(super) trait RowStep<S> {
    /// One step.
    fn step(
        rows: [&[S]; 4],
        lanes: Range<usize>,
        one: f64,
        shift: &[f64],
        s: &mut [f64],
        q: &mut [f64],
    );
}

/// The portable step, [`quad_step`]: each value widened as it goes.
pub(super) struct Widening<const FMA: bool>;

impl<S: Element, const FMA: bool> RowStep<S> for Widening<FMA> {
    #[inline(always)]
    fn step(
        rows: [&[S]; 4],
        lanes: Range<usize>,
        one: f64,
        shift: &[f64],
        s: &mut [f64],
        q: &mut [f64],
    ) {
        quad_step::<S, FMA>(rows, lanes, one, shift, s, q);
    }
}

/// Where the lanes loops ask for cache lines ahead: `PREFETCH_STREAMS`
/// bytes of reading order ahead of each step, per stream, one prefetch
/// per line the step reads.
struct Lookahead {
    /// Lines a step of [`ROW_STEP`] lanes reads in one row.
    lines: usize,
    /// Rows ahead (in each quarter) that the lookahead lands in...
    rows: usize,
    /// ...and the lane offset there, before the step's own.
    lane: usize,
    width: usize,
    /// Whether to ask at all ([`prefetching`], read once for the loop).
    on: bool,
}

impl Lookahead {
    /// The lookahead of a loop over rows of `width` lanes of `S`.
    #[inline(always)]
    fn new<S>(width: usize) -> Self {
        let size = core::mem::size_of::<S>();
        // Lanes ahead in the loop's reading order (4 values per lane).
        let ahead = 2 * PREFETCH_STREAMS / (4 * size);
        Self {
            lines: (ROW_STEP * size).div_ceil(64),
            rows: ahead / width.max(1),
            lane: ahead % width.max(1),
            width,
            on: prefetching(),
        }
    }

    /// Rows ahead and lane that the step at lane `j` asks for.
    #[inline(always)]
    fn at(&self, j: usize) -> (usize, usize) {
        let target = j + self.lane;
        if target < self.width {
            (self.rows, target)
        } else {
            (self.rows + 1, target - self.width)
        }
    }

    /// Asks for the lines a step will read at `next`, if prefetching.
    #[inline(always)]
    fn prefetch(&self, next: *const u8) {
        if !self.on {
            return;
        }
        for l in 0..self.lines {
            prefetch_line::<true, _>(next.wrapping_add(64 * l));
        }
    }
}

/// [`rows_body`] with the step of four rows given: [`Widening`], which
/// widens each value as it goes, or one that widens a step's values by an
/// instruction the portable code cannot name (F16C) and then takes
/// [`quad_step`] of `f32`, the same arithmetic. The leftover rows widen
/// value by value.
#[inline(always)]
pub(super) fn rows_body_by<S: Element, const FMA: bool, St: RowStep<S>>(
    slab: &[S],
    stride: usize,
    start: usize,
    shift: &[f64],
    s: &mut [f64],
    q: &mut [f64],
) {
    let width = shift.len();
    if width == 0 || s.len() != width || q.len() != width {
        return;
    }
    let look = Lookahead::new::<S>(width);
    let full = width - width % ROW_STEP;
    // 1, hidden from the optimiser so that `x·1 + y` stays a multiply-add.
    let one = core::hint::black_box(1.0);
    // The rows are read as four sequential streams, one per quarter of
    // the slab, and the four rows at the same place in each quarter are
    // summed together.
    let rows = slab.len() / stride;
    let quarter = rows / 4;
    let row_at = |i: usize| slab.get(start + i * stride..start + i * stride + width);
    for i in 0..quarter {
        let (Some(r0), Some(r1), Some(r2), Some(r3)) = (
            row_at(i),
            row_at(quarter + i),
            row_at(2 * quarter + i),
            row_at(3 * quarter + i),
        ) else {
            return;
        };
        let rows = [r0, r1, r2, r3];
        for j in (0..full).step_by(ROW_STEP) {
            let (ahead, lane) = look.at(j);
            for r in 0..4 {
                let offset = start + (r * quarter + i + ahead) * stride + lane;
                look.prefetch(slab.as_ptr().wrapping_add(offset).cast());
            }
            St::step(rows, j..j + ROW_STEP, one, shift, s, q);
        }
        St::step(rows, full..width, one, shift, s, q);
    }
    for i in 4 * quarter..rows {
        let Some(row) = row_at(i) else {
            return;
        };
        for (((x, k), s), q) in row.iter().zip(shift).zip(s.iter_mut()).zip(q.iter_mut()) {
            let d = x.widen() - k;
            *s += d;
            *q = square_add::<FMA>(d, *q);
        }
    }
}

/// One step of [`rows_body`]: `lanes` of four rows.
#[inline(always)]
pub(super) fn quad_step<S: Element, const FMA: bool>(
    rows: [&[S]; 4],
    lanes: Range<usize>,
    one: f64,
    shift: &[f64],
    s: &mut [f64],
    q: &mut [f64],
) {
    let [r0, r1, r2, r3] = rows;
    let (Some(r0), Some(r1), Some(r2), Some(r3), Some(shift), Some(s), Some(q)) = (
        r0.get(lanes.clone()),
        r1.get(lanes.clone()),
        r2.get(lanes.clone()),
        r3.get(lanes.clone()),
        shift.get(lanes.clone()),
        s.get_mut(lanes.clone()),
        q.get_mut(lanes),
    ) else {
        return;
    };
    let rows = r0.iter().zip(r1).zip(r2).zip(r3);
    for ((((((x0, x1), x2), x3), k), s), q) in rows.zip(shift).zip(s.iter_mut()).zip(q.iter_mut()) {
        let d0 = x0.widen() - k;
        let d1 = x1.widen() - k;
        let d2 = x2.widen() - k;
        let d3 = x3.widen() - k;
        if FMA {
            // The squares as one chain of multiply-adds, the sums as plain
            // adds: the multiply-add units also widen, and they are the
            // ones this loop runs short of (llvm-mca's Zen 3 model puts 30
            // cycles per 16 lanes on them; with the sums' adds moved off
            // them, `f32` NHWC statistics in cache went from 0.126 to
            // 0.120 ns a value on the AMD EPYC guest).
            let fma = num_traits::Float::mul_add;
            *s += (d0 + d1) + (d2 + d3);
            let squares = fma(d0, d0, fma(d1, d1, fma(d2, d2, d3 * d3)));
            *q = fma(squares, one, *q);
        } else {
            *s += (d0 + d1) + (d2 + d3);
            let t = square_add::<FMA>(d0, d1 * d1);
            let u = square_add::<FMA>(d2, d3 * d3);
            *q += t + u;
        }
    }
}

/// Lanes per sum of the pair loop: five sums of four lanes fill ten SSE2
/// registers, or five AVX2 registers when compiled for AVX2.
pub(super) const PAIR_LANES: usize = 4;

/// The five sums of a run of pairs around the shifts `(kx, ky)`:
/// `[Σdx, Σdy, Σdx², Σdy², Σdx·dy]` with `dx = x − kx`, `dy = y − ky`.
/// The slices have equal lengths (the caller checks); extra values of the
/// longer one would be ignored.
#[inline(always)]
pub(super) fn pair_sums_body<S: Element, const FMA: bool>(
    xs: &[S],
    ys: &[S],
    kx: f64,
    ky: f64,
) -> [f64; 5] {
    let mut sx = [0.0_f64; PAIR_LANES];
    let mut sy = [0.0_f64; PAIR_LANES];
    let mut qx = [0.0_f64; PAIR_LANES];
    let mut qy = [0.0_f64; PAIR_LANES];
    let mut cxy = [0.0_f64; PAIR_LANES];
    let (xc, xt) = array_chunks::<S, PAIR_LANES>(xs);
    let (yc, yt) = array_chunks::<S, PAIR_LANES>(ys);
    let mut step = |x: &[S], y: &[S]| {
        for (l, (x, y)) in x.iter().zip(y).enumerate().take(PAIR_LANES) {
            let dx = x.widen() - kx;
            let dy = y.widen() - ky;
            sx[l] += dx;
            sy[l] += dy;
            qx[l] = square_add::<FMA>(dx, qx[l]);
            qy[l] = square_add::<FMA>(dy, qy[l]);
            cxy[l] = if FMA {
                num_traits::Float::mul_add(dx, dy, cxy[l])
            } else {
                dx * dy + cxy[l]
            };
        }
    };
    for (x, y) in xc.zip(yc) {
        prefetch::<true, _>(x.as_ptr().cast::<u8>().wrapping_add(PREFETCH_STREAMS));
        prefetch::<true, _>(y.as_ptr().cast::<u8>().wrapping_add(PREFETCH_STREAMS));
        step(x, y);
    }
    step(xt, yt);
    [
        fold_lanes(sx),
        fold_lanes(sy),
        fold_lanes(qx),
        fold_lanes(qy),
        fold_lanes(cxy),
    ]
}

/// The sums of a run of weighted values around the shift `k`:
/// `[Σw, Σw·d, Σw·d², Σᵢ<ⱼ wᵢwⱼ, number of positive weights, number of
/// weights that are NaN or negative]` with `d = x − k`. The weights are
/// checked here, in the same pass: with no NaN or negative weight, `Σw`
/// is finite exactly when every weight is (and their sum does not
/// overflow). The slices have equal lengths.
///
/// The sum over pairs is the reliability divisor's numerator, kept apart
/// from Σw² (one weight far above the rest leaves none of the others'
/// squares in Σw²): each lane adds its value's weight times the lane's
/// weight so far, and two lanes join with the product of their weights
/// ([`join_pairs`]). Every term is positive, and a lane's step costs what
/// Σw²'s did: one multiply-add.
#[inline(always)]
pub(super) fn weighted_sums_body<S: Element, const FMA: bool>(
    xs: &[S],
    ws: &[S],
    k: f64,
) -> [f64; 6] {
    let mut acc = [[0.0_f64; PAIR_LANES]; 6];
    let (xc, xt) = array_chunks::<S, PAIR_LANES>(xs);
    let (wc, wt) = array_chunks::<S, PAIR_LANES>(ws);
    let mut step = |x: &[S], w: &[S]| {
        for (l, (x, w)) in x.iter().zip(w).enumerate().take(PAIR_LANES) {
            let (d, w) = (x.widen() - k, w.widen());
            let wd = w * d;
            acc[3][l] = if FMA {
                num_traits::Float::mul_add(acc[0][l], w, acc[3][l])
            } else {
                acc[0][l] * w + acc[3][l]
            };
            acc[0][l] += w;
            acc[1][l] += wd;
            acc[2][l] = if FMA {
                num_traits::Float::mul_add(wd, d, acc[2][l])
            } else {
                wd * d + acc[2][l]
            };
            acc[4][l] += if w > 0.0 { 1.0 } else { 0.0 };
            acc[5][l] += if w >= 0.0 { 0.0 } else { 1.0 };
        }
    };
    for (x, w) in xc.zip(wc) {
        prefetch::<true, _>(x.as_ptr().cast::<u8>().wrapping_add(PREFETCH_STREAMS));
        prefetch::<true, _>(w.as_ptr().cast::<u8>().wrapping_add(PREFETCH_STREAMS));
        step(x, w);
    }
    step(xt, wt);
    let (w, pairs) = fold_pair_lanes(acc[0], acc[3]);
    [
        w,
        fold_lanes(acc[1]),
        fold_lanes(acc[2]),
        pairs,
        fold_lanes(acc[4]),
        fold_lanes(acc[5]),
    ]
}

/// The sum over the pairs of two groups of weights from each group's
/// total and sum over its own pairs: `Pₐ + P_b + Wₐ·W_b`.
#[inline(always)]
pub(in crate::kernels::arch) fn join_pairs(wa: f64, pa: f64, wb: f64, pb: f64) -> f64 {
    (pa + pb) + wa * wb
}

/// [`fold_lanes`] of the lanes' weights `w`, and their sums over pairs `p`
/// joined in the same tree by [`join_pairs`]: `(Σw, Σᵢ<ⱼ wᵢwⱼ)`.
#[inline(always)]
pub(in crate::kernels::arch) fn fold_pair_lanes<const N: usize>(
    mut w: [f64; N],
    mut p: [f64; N],
) -> (f64, f64) {
    let mut width = N / 2;
    while width > 0 {
        for i in 0..width {
            p[i] = join_pairs(w[i], p[i], w[i + width], p[i + width]);
            w[i] += w[i + width];
        }
        width /= 2;
    }
    (w[0], p[0])
}

/// Two runs' [`weighted_sums_body`] sums as one run's: added, but the sums
/// over pairs joined by [`join_pairs`].
#[inline(always)]
pub(in crate::kernels::arch) fn join_weighted(a: [f64; 6], b: [f64; 6]) -> [f64; 6] {
    [
        a[0] + b[0],
        a[1] + b[1],
        a[2] + b[2],
        join_pairs(a[0], a[3], b[0], b[3]),
        a[4] + b[4],
        a[5] + b[5],
    ]
}
/// Lanes of the power-sum loop on the portable path: two SSE2 registers
/// per sum, so the four sums and their temporaries fit in sixteen
/// registers.
pub(super) const POWER_LANES: usize = 4;

/// One value's contribution to the power sums of lane `i`.
#[inline(always)]
pub(super) fn power_step<const FMA: bool, const FOURTH: bool, const N: usize>(
    d: f64,
    lane: usize,
    acc: &mut [[f64; N]; 4],
) {
    let [first, second, third, fourth] = acc;
    let d2 = d * d;
    first[lane] += d;
    second[lane] += d2;
    if FMA {
        third[lane] = num_traits::Float::mul_add(d2, d, third[lane]);
        if FOURTH {
            fourth[lane] = num_traits::Float::mul_add(d2, d2, fourth[lane]);
        }
    } else {
        third[lane] += d2 * d;
        if FOURTH {
            fourth[lane] += d2 * d2;
        }
    }
}

/// `[Σd, Σd², Σd³, Σd⁴]` with `d = x − k`, in `N` independent `f64`
/// lanes; without `FOURTH` the last sum is 0 and not computed.
#[inline(always)]
pub(super) fn power_sums_body<S: Element, const FMA: bool, const FOURTH: bool, const N: usize>(
    xs: &[S],
    k: f64,
) -> [f64; 4] {
    let mut acc = [[0.0_f64; N]; 4];
    let (chunks, tail) = array_chunks::<S, N>(xs);
    for chunk in chunks {
        prefetch::<false, _>(chunk.as_ptr().cast::<u8>().wrapping_add(PREFETCH));
        for (i, x) in chunk.iter().enumerate() {
            power_step::<FMA, FOURTH, N>(x.widen() - k, i, &mut acc);
        }
    }
    for (i, x) in tail.iter().enumerate() {
        power_step::<FMA, FOURTH, N>(x.widen() - k, i, &mut acc);
    }
    acc.map(fold_lanes)
}

/// A float type whose bits the extremes loop combines.
pub(super) trait Extreme: Copy + PartialOrd {
    /// +∞, where a running minimum starts.
    const INFINITY: Self;
    /// −∞, where a running maximum starts.
    const NEG_INFINITY: Self;
    /// The bitwise OR of the two values.
    fn or(self, other: Self) -> Self;
    /// The bitwise AND of the two values.
    fn and(self, other: Self) -> Self;
    /// The value as an `f64` (exact).
    fn wide(self) -> f64;
}

impl Extreme for f64 {
    const INFINITY: Self = f64::INFINITY;
    const NEG_INFINITY: Self = f64::NEG_INFINITY;
    #[inline(always)]
    fn or(self, other: Self) -> Self {
        f64::from_bits(self.to_bits() | other.to_bits())
    }
    #[inline(always)]
    fn and(self, other: Self) -> Self {
        f64::from_bits(self.to_bits() & other.to_bits())
    }
    #[inline(always)]
    fn wide(self) -> f64 {
        self
    }
}

impl Extreme for f32 {
    const INFINITY: Self = f32::INFINITY;
    const NEG_INFINITY: Self = f32::NEG_INFINITY;
    #[inline(always)]
    fn or(self, other: Self) -> Self {
        f32::from_bits(self.to_bits() | other.to_bits())
    }
    #[inline(always)]
    fn and(self, other: Self) -> Self {
        f32::from_bits(self.to_bits() & other.to_bits())
    }
    #[inline(always)]
    fn wide(self) -> f64 {
        f64::from(self)
    }
}

/// The lane minimum: `a < b ? a : b` and `b < a ? b : a` are the two
/// operand orders of the SSE/AVX `min` instruction, which returns its
/// second operand on a tie or a NaN. Their bitwise OR is IEEE 754-2019
/// `minimum`: equal numbers have equal bits, the OR of −0.0 and +0.0 is
/// −0.0, and a NaN (all exponent bits set, a mantissa bit set) stays a NaN
/// whatever it is combined with by OR. Three instructions, no branch.
#[inline(always)]
fn lane_min<T: Extreme>(a: T, b: T) -> T {
    let x = if a < b { a } else { b };
    let y = if b < a { b } else { a };
    x.or(y)
}

/// The lane maximum, the same way with AND, so that +0.0 wins over −0.0.
/// AND does not keep a NaN: the minimum's lanes carry it.
#[inline(always)]
fn lane_max<T: Extreme>(a: T, b: T) -> T {
    let x = if a > b { a } else { b };
    let y = if b > a { b } else { a };
    x.and(y)
}

/// `(min, max)` of `xs` in `N` lanes of its own type (exact: no rounding
/// happens), widened to `f64`; `(+∞, −∞)` when empty, `(NaN, NaN)` when
/// any value is NaN.
#[inline(always)]
fn extremes_lanes<T: Extreme, const N: usize>(xs: &[T]) -> (f64, f64) {
    let mut lo = [T::INFINITY; N];
    let mut hi = [T::NEG_INFINITY; N];
    let (chunks, tail) = array_chunks::<T, N>(xs);
    for chunk in chunks {
        prefetch::<false, _>(chunk.as_ptr().cast::<u8>().wrapping_add(PREFETCH));
        for ((&x, lo), hi) in chunk.iter().zip(&mut lo).zip(&mut hi) {
            *lo = lane_min(x, *lo);
            *hi = lane_max(x, *hi);
        }
    }
    finish_extremes(lo, hi, tail)
}

/// Takes the `tail` into lanes `lo` and `hi`, folds the lanes in a fixed
/// order, and widens the result; both NaN when the minimum is.
#[inline(always)]
pub(super) fn finish_extremes<T: Extreme, const N: usize>(
    mut lo: [T; N],
    mut hi: [T; N],
    tail: &[T],
) -> (f64, f64) {
    for ((&x, lo), hi) in tail.iter().zip(&mut lo).zip(&mut hi) {
        *lo = lane_min(x, *lo);
        *hi = lane_max(x, *hi);
    }
    let mut width = N / 2;
    while width > 0 {
        for i in 0..width {
            lo[i] = lane_min(lo[i], lo[i + width]);
            hi[i] = lane_max(hi[i], hi[i + width]);
        }
        width /= 2;
    }
    let (lo, hi) = (lo[0].wide(), hi[0].wide());
    if lo.is_nan() {
        (f64::NAN, f64::NAN)
    } else {
        (lo, hi)
    }
}

/// [`extremes_lanes`] on the slice's own type: `N64` lanes for `f64`,
/// `N32` for `f32`.
#[inline(always)]
pub(super) fn extremes_body<S: Float, const N64: usize, const N32: usize>(xs: &[S]) -> (f64, f64) {
    match S::elements(xs) {
        Elements::F64(xs) => extremes_lanes::<f64, N64>(xs),
        Elements::F32(xs) => extremes_lanes::<f32, N32>(xs),
        // `Float` is only `f32` and `f64`; half precision never gets here.
        #[cfg(feature = "half")]
        Elements::F16(_) | Elements::Bf16(_) => (f64::NAN, f64::NAN),
    }
}

/// Per-lane sums of BatchNorm's backward pass across rows: for every row (a
/// `stride`-long chunk of `xs` and of `dys`), lanes `start..start + width`
/// add `dy` to `sum_dy` and `dy · (x − centre)` to `sum_dyx` (all three of
/// length `width`). The rows go four at a time, the same row of each
/// quarter of the slab, as in [`rows_body`], in steps of [`ROW_STEP`]
/// lanes; leftover rows one at a time.
#[inline(always)]
#[allow(clippy::too_many_arguments, reason = "the loop's slices and geometry")]
pub(super) fn grad_rows_body<S: Element, const FMA: bool>(
    xs: &[S],
    dys: &[S],
    stride: usize,
    start: usize,
    centre: &[f64],
    sum_dy: &mut [f64],
    sum_dyx: &mut [f64],
) {
    grad_rows_body_by::<S, FMA, Widening<FMA>>(xs, dys, stride, start, centre, sum_dy, sum_dyx);
}

/// How the backward lanes loop takes one step of four rows of `x` and of
/// `dy`: `lanes` (at most [`ROW_STEP`] of them), given `1` hidden from the
/// optimiser and the centres and accumulators of the whole width. A trait
/// for the reason [`RowStep`] is one.
pub(super) trait GradStep<S> {
    /// One step.
    fn step(
        xs: [&[S]; 4],
        dys: [&[S]; 4],
        lanes: Range<usize>,
        one: f64,
        centre: &[f64],
        sum_dy: &mut [f64],
        sum_dyx: &mut [f64],
    );
}

impl<S: Element, const FMA: bool> GradStep<S> for Widening<FMA> {
    #[inline(always)]
    fn step(
        xs: [&[S]; 4],
        dys: [&[S]; 4],
        lanes: Range<usize>,
        one: f64,
        centre: &[f64],
        sum_dy: &mut [f64],
        sum_dyx: &mut [f64],
    ) {
        grad_quad_step::<S, FMA>(xs, dys, lanes, one, centre, sum_dy, sum_dyx);
    }
}

/// One step of [`grad_rows_body`]: `lanes` of four rows of `x` and `dy`.
#[inline(always)]
pub(super) fn grad_quad_step<S: Element, const FMA: bool>(
    xs: [&[S]; 4],
    dys: [&[S]; 4],
    lanes: Range<usize>,
    one: f64,
    centre: &[f64],
    sum_dy: &mut [f64],
    sum_dyx: &mut [f64],
) {
    let fma = multiply_add::<FMA>;
    let ([x0, x1, x2, x3], [y0, y1, y2, y3]) = (
        xs.map(|v| v.get(lanes.clone()).unwrap_or(&[])),
        dys.map(|v| v.get(lanes.clone()).unwrap_or(&[])),
    );
    let (Some(centre), Some(sum_dy), Some(sum_dyx)) = (
        centre.get(lanes.clone()),
        sum_dy.get_mut(lanes.clone()),
        sum_dyx.get_mut(lanes),
    ) else {
        return;
    };
    let xs4 = x0.iter().zip(x1).zip(x2.iter().zip(x3));
    let ys4 = y0.iter().zip(y1).zip(y2.iter().zip(y3));
    let acc = centre.iter().zip(sum_dy.iter_mut().zip(sum_dyx.iter_mut()));
    for ((((x0, x1), (x2, x3)), ((y0, y1), (y2, y3))), (&k, (sdy, sdyx))) in xs4.zip(ys4).zip(acc) {
        let (g0, g1, g2, g3) = (y0.widen(), y1.widen(), y2.widen(), y3.widen());
        let (d0, d1, d2, d3) = (
            x0.widen() - k,
            x1.widen() - k,
            x2.widen() - k,
            x3.widen() - k,
        );
        *sdy = fma((g0 + g1) + (g2 + g3), one, *sdy);
        let products = fma(g0, d0, fma(g1, d1, fma(g2, d2, g3 * d3)));
        *sdyx = fma(products, one, *sdyx);
    }
}

/// [`grad_rows_body`] with the step of four rows given (see [`GradStep`]).
#[inline(always)]
#[allow(clippy::too_many_arguments, reason = "the loop's slices and geometry")]
pub(super) fn grad_rows_body_by<S: Element, const FMA: bool, St: GradStep<S>>(
    xs: &[S],
    dys: &[S],
    stride: usize,
    start: usize,
    centre: &[f64],
    sum_dy: &mut [f64],
    sum_dyx: &mut [f64],
) {
    fn row_of<S>(v: &[S], i: usize, stride: usize, start: usize, width: usize) -> Option<&[S]> {
        v.get(start + i * stride..start + i * stride + width)
    }
    let width = centre.len();
    if width == 0 || stride == 0 || sum_dy.len() != width || sum_dyx.len() != width {
        return;
    }
    let rows = xs.len().min(dys.len()) / stride;
    let quarter = rows / 4;
    let full = width - width % ROW_STEP;
    // Prefetching as in `rows_body_by`, in both tensors.
    let look = Lookahead::new::<S>(width);
    let row = |v, i| row_of(v, i, stride, start, width);
    // 1, hidden from the optimiser so that `x·1 + y` stays a multiply-add.
    let one = core::hint::black_box(1.0);
    let fma = multiply_add::<FMA>;
    for i in 0..quarter {
        let at = |r: usize| r * quarter + i;
        let (Some(x0), Some(x1), Some(x2), Some(x3)) = (
            row(xs, at(0)),
            row(xs, at(1)),
            row(xs, at(2)),
            row(xs, at(3)),
        ) else {
            return;
        };
        let (Some(y0), Some(y1), Some(y2), Some(y3)) = (
            row(dys, at(0)),
            row(dys, at(1)),
            row(dys, at(2)),
            row(dys, at(3)),
        ) else {
            return;
        };
        let (x4, y4) = ([x0, x1, x2, x3], [y0, y1, y2, y3]);
        for j in (0..full).step_by(ROW_STEP) {
            let (ahead, lane) = look.at(j);
            for r in 0..4 {
                let offset = start + (r * quarter + i + ahead) * stride + lane;
                look.prefetch(xs.as_ptr().wrapping_add(offset).cast());
                look.prefetch(dys.as_ptr().wrapping_add(offset).cast());
            }
            St::step(x4, y4, j..j + ROW_STEP, one, centre, sum_dy, sum_dyx);
        }
        St::step(x4, y4, full..width, one, centre, sum_dy, sum_dyx);
    }
    for i in 4 * quarter..rows {
        let (Some(x), Some(y)) = (row(xs, i), row(dys, i)) else {
            return;
        };
        let acc = centre.iter().zip(sum_dy.iter_mut().zip(sum_dyx.iter_mut()));
        for ((x, y), (&k, (sdy, sdyx))) in x.iter().zip(y).zip(acc) {
            let g = y.widen();
            *sdy += g;
            *sdyx = fma(g, x.widen() - k, *sdyx);
        }
    }
}

/// The normalization pass over runs (see `kernels::affine::affine_runs`),
/// value by value: `((x − hi)·scale + offset)·γ + β` in `f64`, rounded
/// once. The AVX2 loop does the same operations in the same order.
#[inline(always)]
pub(super) fn affine_runs_body<S: Element, O: Element>(
    xs: &[S],
    run: usize,
    params: Affine<'_>,
    per_value: PerValue<'_>,
    out: &mut [O],
) {
    match (per_value.gamma, per_value.beta) {
        (Some(g), Some(b)) => affine_runs_with::<S, O, true, true>(xs, run, params, g, b, out),
        (Some(g), None) => affine_runs_with::<S, O, true, false>(xs, run, params, g, &[], out),
        (None, Some(b)) => affine_runs_with::<S, O, false, true>(xs, run, params, &[], b, out),
        (None, None) => affine_runs_with::<S, O, false, false>(xs, run, params, &[], &[], out),
    }
}

/// [`affine_runs_body`] with `γ` (`G`) and `β` (`B`) present or not.
#[inline(always)]
fn affine_runs_with<S: Element, O: Element, const G: bool, const B: bool>(
    xs: &[S],
    run: usize,
    params: Affine<'_>,
    gamma: &[f64],
    beta: &[f64],
    out: &mut [O],
) {
    let n = params.len();
    if run == 0 || n == 0 || (G && gamma.len() < run) || (B && beta.len() < run) {
        return;
    }
    let entries = params.hi[..n]
        .iter()
        .zip(&params.scale[..n])
        .zip(&params.offset[..n])
        .cycle();
    let runs = xs.chunks_exact(run).zip(out.chunks_exact_mut(run));
    for ((x, y), ((&hi, &scale), &offset)) in runs.zip(entries) {
        for (j, (y, x)) in y.iter_mut().zip(x).enumerate() {
            let z = (x.widen() - hi) * scale + offset;
            let z = if G {
                z * gamma.get(j).copied().unwrap_or(1.0)
            } else {
                z
            };
            let z = if B {
                z + beta.get(j).copied().unwrap_or(0.0)
            } else {
                z
            };
            *y = O::narrow(z);
        }
    }
}

/// The normalization pass over lanes (see
/// `kernels::affine::affine_lanes`), value by value.
#[inline(always)]
pub(super) fn affine_lanes_body<S: Element, O: Element>(
    xs: &[S],
    params: Affine<'_>,
    out: &mut [O],
) {
    let n = params.len();
    if n == 0 {
        return;
    }
    let entries = params.hi[..n]
        .iter()
        .zip(&params.scale[..n])
        .zip(&params.offset[..n]);
    for (x, y) in xs.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
        for ((y, x), ((&hi, &scale), &offset)) in y.iter_mut().zip(x).zip(entries.clone()) {
            *y = O::narrow((x.widen() - hi) * scale + offset);
        }
    }
}
