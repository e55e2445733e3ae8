//! The order in which the AVX2 and AVX-512 loops over one slice read
//! it: as several streams side by side, with the lanes' sums flushed into
//! running totals every few thousand values.

#![allow(
    clippy::inline_always,
    reason = "the loops must inline into the `#[target_feature]` kernels that call them"
)]

use crate::kernels::arch::portable::FLUSH_CHUNKS;

/// The fewest chunks [`streamed`] reads as a stream of their own: 4096
/// values in the chunks of 16 of the sums (32 KiB of `f64`, 8 KiB of
/// `f16`). Counted in chunks, not bytes, so that every element type is
/// read in the same order and half-precision data gives the bits of the
/// same values in `f64`.
const STREAM_CHUNKS: usize = 256;

/// Steps `step` through every chunk of `chunks`, in the order the AVX2
/// loops over one slice read them, and calls `flush` after every
/// [`FLUSH_CHUNKS`] steps and at the end.
///
/// The chunks are read as four streams side by side when there are four
/// times [`STREAM_CHUNKS`] (a whole block of a slice reduction has
/// sixteen), as two when there are twice as many, else in order: they fall
/// into equal parts, read one chunk of each part in turn, and those left
/// over come last.
///
/// On the Intel Xeon, one stream read alone held a core to about 12 GB/s
/// from memory: the hardware prefetcher runs only so far ahead in one
/// stream, and the software prefetches compete for the L1's few fill
/// buffers. Four streams of 32 KiB or more kept more lines in flight and
/// ran the `f64` kernels 20–30 % faster; four of 16 KiB gained about half
/// as much, eight of 16 KiB less, and streams of 4 KiB or less lost
/// bandwidth (see `SLICE_BLOCK`). The lanes sum the same values as in
/// order, in another order.
#[inline(always)]
pub(super) fn streamed<C, A>(
    chunks: &[C],
    acc: A,
    mut step: impl FnMut(A, &C) -> A,
    flush: impl FnMut(A) -> A,
) -> A {
    parted::<C, C, A, 4>(chunks, chunks, acc, |a, c, _| step(a, c), flush)
}

/// Lines [`warm`] asks for at the start of each part.
const WARM_LINES: usize = 4;

/// Asks for the first lines of each part that [`streamed`] (or, with
/// `MOST` 2, [`streamed_pairs`]) will read `n` chunks of `chunk` bytes
/// from `p` in, into L2, when it reads them as several streams: a loop
/// that goes from one run to the next (the channels of a tensor) then
/// finds the next run's streams started rather than cold. A hint, that
/// never faults.
#[inline(always)]
pub(in crate::kernels::arch) fn warm<const MOST: usize>(p: *const u8, n: usize, chunk: usize) {
    let parts = if MOST >= 4 && n >= 4 * STREAM_CHUNKS {
        4
    } else if n >= 2 * STREAM_CHUNKS {
        2
    } else {
        // One stream, which goes on from the end of the run before.
        return;
    };
    let part = n / parts * chunk;
    for k in 0..parts {
        for line in 0..WARM_LINES {
            crate::kernels::arch::prefetch::<false, _>(p.wrapping_add(k * part + 64 * line));
        }
    }
}

/// [`streamed`] over the chunks of two slices side by side (`xs` sets the
/// length and the parts), in at most two parts each: four streams in
/// all. (Eight, two slices in four parts, ran `WeightedVariance` of
/// `f16`, whose loop is short of arithmetic throughput rather than of
/// bandwidth, 15 % slower.) `step(acc, &xs[i], &ys[i])` in the order
/// `streamed` would visit `xs[i]`.
#[inline(always)]
pub(super) fn streamed_pairs<C, D, A>(
    xs: &[C],
    ys: &[D],
    acc: A,
    step: impl FnMut(A, &C, &D) -> A,
    flush: impl FnMut(A) -> A,
) -> A {
    parted::<C, D, A, 2>(xs, ys, acc, step, flush)
}

/// [`streamed_pairs`] in as many parts as `xs` has [`STREAM_CHUNKS`] for,
/// up to `MOST` (four or two).
#[inline(always)]
fn parted<C, D, A, const MOST: usize>(
    xs: &[C],
    ys: &[D],
    acc: A,
    step: impl FnMut(A, &C, &D) -> A,
    flush: impl FnMut(A) -> A,
) -> A {
    let ys = &ys[..xs.len().min(ys.len())];
    let xs = &xs[..ys.len()];
    if MOST >= 4 && xs.len() >= 4 * STREAM_CHUNKS {
        streamed_by::<C, D, A, 4>(xs, ys, acc, step, flush)
    } else if xs.len() >= 2 * STREAM_CHUNKS {
        streamed_by::<C, D, A, 2>(xs, ys, acc, step, flush)
    } else {
        streamed_by::<C, D, A, 1>(xs, ys, acc, step, flush)
    }
}

/// [`streamed_pairs`] in `PARTS` parts (`xs` and `ys` of one length).
/// The sums pass through by value, so that they stay in registers.
#[inline(always)]
fn streamed_by<C, D, A, const PARTS: usize>(
    xs: &[C],
    ys: &[D],
    mut acc: A,
    mut step: impl FnMut(A, &C, &D) -> A,
    mut flush: impl FnMut(A) -> A,
) -> A {
    let part = xs.len() / PARTS;
    let rounds = FLUSH_CHUNKS / PARTS;
    for start in (0..part).step_by(rounds) {
        let end = part.min(start + rounds);
        let xg: [&[C]; PARTS] = core::array::from_fn(|p| &xs[p * part + start..p * part + end]);
        let yg: [&[D]; PARTS] = core::array::from_fn(|p| &ys[p * part + start..p * part + end]);
        for i in 0..end - start {
            for (x, y) in xg.iter().zip(&yg) {
                // Always `Some`; `get` rather than indexing, whose panic
                // path would keep the sums in memory.
                if let (Some(x), Some(y)) = (x.get(i), y.get(i)) {
                    acc = step(acc, x, y);
                }
            }
        }
        acc = flush(acc);
    }
    let done = part * PARTS;
    for (x, y) in xs[done..].iter().zip(&ys[done..]) {
        acc = step(acc, x, y);
    }
    flush(acc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    /// The order `streamed_pairs` visits `0..n` in, with the flushes as
    /// `None`, for at most `MOST` parts.
    fn visits<const MOST: usize>(n: usize) -> Vec<Option<usize>> {
        let xs: Vec<usize> = (0..n).collect();
        let ys: Vec<usize> = xs.iter().map(|x| 10 * x).collect();
        let mut seen = Vec::new();
        let step = |mut seen: Vec<Option<usize>>, x: &usize, y: &usize| {
            assert_eq!(*y, 10 * x, "pairs stay together");
            seen.push(Some(*x));
            seen
        };
        let flush = |mut seen: Vec<Option<usize>>| {
            seen.push(None);
            seen
        };
        seen = parted::<usize, usize, _, MOST>(&xs, &ys, seen, step, flush);
        seen
    }

    #[test]
    fn every_chunk_once_in_streams_with_flushes_between() {
        let s = STREAM_CHUNKS;
        for n in [
            0,
            1,
            2 * s - 1,
            2 * s,
            4 * s - 1,
            4 * s,
            4 * s + 3,
            8 * s + 7,
            33 * s + 5,
        ] {
            for (most, seen) in [(4, visits::<4>(n)), (2, visits::<2>(n))] {
                let mut order: Vec<usize> = seen.iter().flatten().copied().collect();
                // The parts, one chunk of each in turn.
                let parts = if most == 4 && n >= 4 * s {
                    4
                } else if n >= 2 * s {
                    2
                } else {
                    1
                };
                let part = n / parts;
                for (k, &i) in order.iter().take(part * parts).enumerate() {
                    assert_eq!(i, (k % parts) * part + k / parts, "n = {n}, {most}");
                }
                assert_eq!(seen.last(), Some(&None), "a flush at the end");
                // No more than FLUSH_CHUNKS steps between flushes.
                for run in seen.split(Option::is_none) {
                    assert!(run.len() <= FLUSH_CHUNKS, "n = {n}: {}", run.len());
                }
                order.sort_unstable();
                assert_eq!(order, (0..n).collect::<Vec<_>>(), "n = {n}: each once");
            }
        }
    }
}
