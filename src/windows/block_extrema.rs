//! The minimum and maximum of the last `window` values pushed, by van Herk
//! and Gil-Werman's blocks: the push path of the windows that count
//! values ([`MovingMinMax`](crate::MovingMinMax),
//! [`MovingStats`](crate::MovingStats)).
//!
//! Number the values from 0 and cut them into blocks of `window`. The
//! window that ends at place `p` of a block holds places `p + 1..window`
//! of the block before and places `0..=p` of its own. So its extremes are
//! those of a suffix of the previous block and of the running prefix of
//! this one. One array of `window` cells serves both: cell `p` holds the
//! previous block's suffix extremes from `p` on until the value at place
//! `p` of this block arrives, which needs them no more, and takes the
//! cell; when the block is full, one backward pass turns its values into
//! its suffix extremes, for the next block.
//!
//! A push is a store and two integer comparisons, and each `window`-th
//! push makes the backward pass too (`window` steps): O(1) amortized,
//! O(window) at worst, as with the monotonic deques it replaces, whose
//! data-dependent loops cost about two branch mispredictions a push.
//!
//! Values are compared as the keys of `−∞ < … < −0.0 < +0.0 < … < +∞`,
//! with the series' extremes of keys ([`Both`]: the order's identities for
//! no value and for NaN), so the extremes are the very values the deques
//! reported, bit for bit; NaN takes no part (the windows count it apart).

use alloc::vec::Vec;

use super::extrema::ReadExtremes;
use super::series::extremes::{Both, Extremes, High, Low};
use crate::Float;
use crate::kernels::sorted_keys::value;

/// The extremes of the last `window` values pushed (see the module doc).
#[derive(Clone, Debug)]
pub(crate) struct BlockExtrema {
    /// How many values the window holds.
    window: usize,
    /// Cell `p`: this block's value at place `p` below `place`, the
    /// previous block's suffix extremes from `p` on from `place` up. Grows
    /// to `window` cells with the first block (until then the window has
    /// no previous block).
    cells: Vec<Both>,
    /// The next value's place in its block.
    place: usize,
    /// The extremes of this block's values so far.
    prefix: Both,
}

impl BlockExtrema {
    /// No values yet, over windows of `window` (at least 1) values.
    pub(crate) fn new(window: usize) -> Self {
        Self {
            window,
            cells: Vec::new(),
            place: 0,
            prefix: Both::EMPTY,
        }
    }

    /// Adds `x` (NaN takes a place and no part); the value `window`
    /// pushes back leaves.
    #[inline]
    pub(crate) fn push<F: Float>(&mut self, x: F) {
        let k = Both::of(x);
        if let Some(cell) = self.cells.get_mut(self.place) {
            *cell = k;
        } else {
            self.cells.push(k);
        }
        self.prefix = self.prefix.with(k);
        self.place += 1;
        if self.place >= self.window {
            self.close_block();
        }
    }

    /// The block is full: its values become its suffix extremes, and the
    /// next block starts empty.
    #[cold]
    fn close_block(&mut self) {
        let mut suffix = Both::EMPTY;
        for cell in self.cells.iter_mut().rev() {
            suffix = suffix.with(*cell);
            *cell = suffix;
        }
        self.place = 0;
        self.prefix = Both::EMPTY;
    }

    /// The extremes of the window.
    #[inline]
    fn now(&self) -> Both {
        let before = self.cells.get(self.place).copied().unwrap_or(Both::EMPTY);
        self.prefix.with(before)
    }

    /// How many cells it holds (at most the window).
    #[cfg(test)]
    pub(crate) fn cells(&self) -> usize {
        self.cells.len()
    }

    /// Forgets every value, keeping the allocation.
    pub(crate) fn clear(&mut self) {
        self.cells.clear();
        self.place = 0;
        self.prefix = Both::EMPTY;
    }

    /// Forgets every value and takes those of `window`, oldest first.
    pub(crate) fn refill<F: Float>(&mut self, window: impl Iterator<Item = F>) {
        self.clear();
        for x in window {
            self.push(x);
        }
    }
}

impl<F: Float> ReadExtremes<F> for BlockExtrema {
    #[inline]
    fn min(&self) -> Option<F> {
        let k = self.now().0.0;
        (k != Low::EMPTY.0).then(|| value(k))
    }

    #[inline]
    fn max(&self) -> Option<F> {
        let k = self.now().1.0;
        (k != High::EMPTY.0).then(|| value(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    /// The least and greatest non-NaN value of `w` in the order
    /// `−0.0 < +0.0`, as bits.
    fn naive(w: &[f64]) -> (Option<u64>, Option<u64>) {
        let below =
            |a: f64, b: f64| a < b || (a == b && a.is_sign_negative() && b.is_sign_positive());
        let numbers = || w.iter().copied().filter(|x| !x.is_nan());
        let min = numbers().reduce(|a, b| if below(b, a) { b } else { a });
        let max = numbers().reduce(|a, b| if below(a, b) { b } else { a });
        (min.map(f64::to_bits), max.map(f64::to_bits))
    }

    fn read(e: &BlockExtrema) -> (Option<u64>, Option<u64>) {
        (
            ReadExtremes::<f64>::min(e).map(f64::to_bits),
            ReadExtremes::<f64>::max(e).map(f64::to_bits),
        )
    }

    #[test]
    fn every_window_is_a_naive_scan() {
        let mut xs = vec![
            5.0,
            3.0,
            3.0,
            8.0,
            f64::NAN,
            1.0,
            9.0,
            9.0,
            -0.0,
            0.0,
            -0.0,
            2.0,
            f64::INFINITY,
            7.0,
            f64::NEG_INFINITY,
            -1.0,
            f64::NAN,
            f64::NAN,
            f64::NAN,
            4.0,
        ];
        // Falling, then rising: each new value is the extreme, or the
        // oldest one is.
        xs.extend((0..40).map(|i| 100.0 - f64::from(i)));
        xs.extend((0..40).map(f64::from));
        // An outlier first, then a level change.
        xs.extend([1e300, 0.5, 0.25, -1e300, 1e6, 1e6 + 1.0, 1e6 - 1.0]);
        for window in [1, 2, 3, 4, 5, 7, 16, 33, 1000] {
            let mut e = BlockExtrema::new(window);
            for (i, &x) in xs.iter().enumerate() {
                e.push(x);
                let oldest = (i + 1).saturating_sub(window);
                assert_eq!(read(&e), naive(&xs[oldest..=i]), "window {window}, at {i}");
            }
            // Taking the window's values afresh leaves the same extremes,
            // now and after more pushes.
            let mut again = BlockExtrema::new(window);
            let start = xs.len().saturating_sub(window);
            again.refill(xs[start..].iter().copied());
            assert_eq!(read(&again), read(&e));
            for &x in &xs[..30] {
                e.push(x);
                again.push(x);
                assert_eq!(read(&again), read(&e), "window {window}");
            }
            e.clear();
            assert_eq!(read(&e), (None, None));
            e.push(2.0_f64);
            assert_eq!(read(&e), naive(&[2.0]));
        }
    }

    #[test]
    fn f32_values_come_back_as_they_went_in() {
        let mut e = BlockExtrema::new(3);
        for x in [1.5_f32, -0.0, 0.1, f32::MAX] {
            e.push(x);
        }
        assert_eq!(
            ReadExtremes::<f32>::min(&e).map(f32::to_bits),
            Some((-0.0_f32).to_bits())
        );
        assert_eq!(ReadExtremes::<f32>::max(&e), Some(f32::MAX));
    }
}
