//! The values of a window in order, split at a quantile's rank: the engine
//! of [`MovingQuantile`](crate::MovingQuantile) and
//! [`TimeQuantile`](crate::TimeQuantile).
//!
//! The values that are not NaN are kept in two ordered sets, the
//! `⌊h⌋ + 1` smallest and the rest (`h = q·(m − 1)` the quantile's rank
//! among `m` values), so the two neighbours of the quantile are the
//! largest of the first set and the smallest of the second. A value
//! enters or leaves in O(log m) and moves at most a value or two across.
//! No arithmetic touches the values except the final interpolation.

use alloc::collections::BTreeSet;
use core::cmp::Ordering;

use super::extrema::below;
use super::interpolation::Interpolation;
use crate::Float;

/// A value ordered with `−0.0` below `+0.0`, tagged with its number in the
/// stream so that equal values are distinct keys. NaN never enters.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Key<F>(pub(crate) F, pub(crate) u64);

impl<F: Float> Ord for Key<F> {
    fn cmp(&self, other: &Self) -> Ordering {
        if below(self.0, other.0) {
            Ordering::Less
        } else if below(other.0, self.0) {
            Ordering::Greater
        } else {
            self.1.cmp(&other.1)
        }
    }
}

impl<F: Float> PartialOrd for Key<F> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<F: Float> PartialEq for Key<F> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<F: Float> Eq for Key<F> {}

/// The values of a window that are not NaN, split at the rank of `q`.
#[derive(Clone, Debug)]
pub(crate) struct Ordered<F> {
    /// The `⌊q·(m − 1)⌋ + 1` smallest of the `m` values.
    lower: BTreeSet<Key<F>>,
    /// The other values.
    upper: BTreeSet<Key<F>>,
}

impl<F> Default for Ordered<F> {
    fn default() -> Self {
        Self {
            lower: BTreeSet::new(),
            upper: BTreeSet::new(),
        }
    }
}

/// The rank `h = q·(m − 1)` of the quantile among `m ≥ 1` values, as
/// `(⌊h⌋, h − ⌊h⌋)`, computed in `f64` as pandas does.
#[inline]
pub(crate) fn rank(q: f64, m: usize) -> (usize, f64) {
    let h = q * (m - 1) as f64;
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "0 ≤ h ≤ m − 1, so its floor is a valid index"
    )]
    let idx = h as usize;
    (idx, h - idx as f64)
}

impl<F: Float> Ordered<F> {
    /// The number of values held.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.lower.len() + self.upper.len()
    }

    /// Adds `x` (not NaN), numbered `seq`; [`rebalance`](Self::rebalance)
    /// before reading a quantile.
    #[inline]
    pub(crate) fn insert(&mut self, x: F, seq: u64) {
        let key = Key(x, seq);
        if self.lower.last().is_some_and(|top| key < *top) {
            self.lower.insert(key);
        } else {
            self.upper.insert(key);
        }
    }

    /// Removes `x` (not NaN), numbered `seq`; [`rebalance`](Self::rebalance)
    /// before reading a quantile.
    #[inline]
    pub(crate) fn remove(&mut self, x: F, seq: u64) {
        let key = Key(x, seq);
        if !self.lower.remove(&key) {
            self.upper.remove(&key);
        }
    }

    /// Forgets every value.
    pub(crate) fn clear(&mut self) {
        self.lower.clear();
        self.upper.clear();
    }

    /// Moves values across so that `lower` holds the `⌊h⌋ + 1` smallest
    /// (every value of `lower` is below every value of `upper` whatever
    /// their sizes, so only the sizes need mending).
    #[inline]
    pub(crate) fn rebalance(&mut self, q: f64) {
        let m = self.len();
        let k = if m == 0 { 0 } else { rank(q, m).0 + 1 };
        while self.lower.len() > k {
            if let Some(key) = self.lower.pop_last() {
                self.upper.insert(key);
            }
        }
        while self.lower.len() < k {
            match self.upper.pop_first() {
                Some(key) => self.lower.insert(key),
                None => break,
            };
        }
    }

    /// The `q`-quantile of the values held, read by `how`, once
    /// [rebalanced](Self::rebalance) at `q`; NaN when there is none.
    #[inline]
    pub(crate) fn quantile(&self, q: f64, how: Interpolation) -> F {
        let m = self.len();
        if m == 0 {
            return F::nan();
        }
        let (idx, frac) = rank(q, m);
        let lo = self.lower.last().map_or_else(F::nan, |k| k.0);
        if frac == 0.0 {
            return lo;
        }
        let hi = self.upper.first().map_or_else(F::nan, |k| k.0);
        how.between(lo, hi, idx, frac)
    }

    /// Whether the split is where `q` puts it and the sets are in order.
    #[cfg(test)]
    pub(crate) fn is_split_at(&self, q: f64) -> bool {
        let m = self.len();
        (m == 0 || self.lower.len() == rank(q, m).0 + 1)
            && match (self.lower.last(), self.upper.first()) {
                (Some(a), Some(b)) => a < b,
                _ => true,
            }
    }
}
