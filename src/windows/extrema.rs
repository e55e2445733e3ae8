//! The minimum and maximum of a sliding window whose length varies (the
//! time windows; the windows that count values use `block_extrema.rs`):
//! two monotonic deques.
//!
//! Each value enters both deques tagged with its sequence number. Before it
//! enters, the values it makes irrelevant are dropped from the back: in the
//! maximum's deque every value not above it (it is newer and at least as
//! large, so it outlives them as a candidate), in the minimum's every value
//! not below it. The deques therefore stay sorted, the answer is at the
//! front, and a value leaving the window is at the front or already gone.
//! Each value enters and leaves each deque once: amortized O(1) per push,
//! and never more entries than values in the window.
//!
//! Zeros are ordered `−0.0 < +0.0` (IEEE 754's `minimum`/`maximum`), so the
//! minimum of a window holding both is `−0.0` and its maximum `+0.0`. NaN
//! never enters: the windows count it apart.

use super::spare::release_spare;
use alloc::collections::VecDeque;

use crate::Float;

/// `a < b` in the order that puts `−0.0` below `+0.0`; neither is NaN.
#[inline]
pub(crate) fn below<F: Float>(a: F, b: F) -> bool {
    a < b || (a == b && a.is_sign_negative() && b.is_sign_positive())
}

/// The candidates for the minimum and the maximum, oldest first.
#[derive(Clone, Debug)]
pub(crate) struct Extrema<F> {
    /// Increasing values: the front is the minimum.
    low: VecDeque<(u64, F)>,
    /// Decreasing values: the front is the maximum.
    high: VecDeque<(u64, F)>,
}

impl<F> Default for Extrema<F> {
    fn default() -> Self {
        Self {
            low: VecDeque::new(),
            high: VecDeque::new(),
        }
    }
}

impl<F: Float> Extrema<F> {
    /// Adds `x` (not NaN), the value numbered `seq`, newer than any held.
    #[inline]
    pub(crate) fn push(&mut self, seq: u64, x: F) {
        while self.low.back().is_some_and(|&(_, y)| !below(y, x)) {
            self.low.pop_back();
        }
        self.low.push_back((seq, x));
        while self.high.back().is_some_and(|&(_, y)| !below(x, y)) {
            self.high.pop_back();
        }
        self.high.push_back((seq, x));
    }

    /// Drops the values numbered below `oldest`: they have left the window.
    #[inline]
    pub(crate) fn evict_before(&mut self, oldest: u64) {
        while self.low.front().is_some_and(|&(s, _)| s < oldest) {
            self.low.pop_front();
        }
        while self.high.front().is_some_and(|&(s, _)| s < oldest) {
            self.high.pop_front();
        }
        release_spare(&mut self.low);
        release_spare(&mut self.high);
    }

    /// The room of the two deques (a test's view of their memory).
    #[cfg(test)]
    pub(crate) fn room(&self) -> usize {
        self.low.capacity() + self.high.capacity()
    }

    /// The least value held, `None` when none is.
    #[inline]
    pub(crate) fn min(&self) -> Option<F> {
        self.low.front().map(|&(_, x)| x)
    }

    /// The greatest value held, `None` when none is.
    #[inline]
    pub(crate) fn max(&self) -> Option<F> {
        self.high.front().map(|&(_, x)| x)
    }

    /// Forgets every value, keeping the allocations.
    pub(crate) fn clear(&mut self) {
        self.low.clear();
        self.high.clear();
    }
}

/// The least and greatest value a window's structure holds: the deques
/// ([`Extrema`]) or the blocks
/// ([`BlockExtrema`](super::block_extrema::BlockExtrema)).
pub(crate) trait ReadExtremes<F> {
    /// The least value held, `None` when none is.
    fn min(&self) -> Option<F>;
    /// The greatest value held, `None` when none is.
    fn max(&self) -> Option<F>;
}

impl<F: Float> ReadExtremes<F> for Extrema<F> {
    #[inline]
    fn min(&self) -> Option<F> {
        Extrema::min(self)
    }
    #[inline]
    fn max(&self) -> Option<F> {
        Extrema::max(self)
    }
}

/// The minimum, maximum or range a window reports, from the NaN rule and
/// the extremes it holds: `None` until ready, NaN while a NaN counts, else
/// the value.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Extreme {
    Min,
    Max,
    Range,
}

impl Extreme {
    /// The statistic of a window that is `ready` and holds a NaN that
    /// counts when `nan`.
    #[inline]
    pub(crate) fn of<F: Float>(
        self,
        extrema: &impl ReadExtremes<F>,
        ready: bool,
        nan: bool,
    ) -> Option<F> {
        if !ready {
            return None;
        }
        if nan {
            return Some(F::nan());
        }
        match self {
            Self::Min => extrema.min(),
            Self::Max => extrema.max(),
            Self::Range => Some(extrema.max()? - extrema.min()?),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn deques_follow_a_naive_scan() {
        let xs = [5.0, 3.0, 3.0, 8.0, 1.0, 9.0, 9.0, 2.0, 2.0, 7.0, -1.0, 4.0];
        for window in 1..6_usize {
            let mut e = Extrema::default();
            for (i, &x) in xs.iter().enumerate() {
                let oldest = (i + 1).saturating_sub(window);
                e.evict_before(oldest as u64);
                e.push(i as u64, x);
                let w = &xs[oldest..=i];
                let min = w.iter().copied().fold(f64::INFINITY, f64::min);
                let max = w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                assert_eq!((e.min(), e.max()), (Some(min), Some(max)));
                assert!(e.low.len() <= window && e.high.len() <= window);
            }
        }
    }

    #[test]
    fn negative_zero_is_below_positive_zero() {
        let mut e = Extrema::default();
        e.push(0, 0.0);
        e.push(1, -0.0);
        let bits = |x: Option<f64>| x.map(f64::to_bits);
        assert_eq!(bits(e.min()), bits(Some(-0.0)));
        assert_eq!(bits(e.max()), bits(Some(0.0)));
        e.evict_before(1);
        assert_eq!(bits(e.max()), bits(Some(-0.0)));
        let kept: Vec<_> = e.high.iter().map(|&(s, _)| s).collect();
        assert_eq!(kept, [1]);
    }
}
