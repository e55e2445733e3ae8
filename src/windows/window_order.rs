//! The values of a moving quantile's window that are not NaN, in order:
//! [`MovingQuantile`](crate::MovingQuantile)'s engine.
//!
//! Windows of up to [`sorted::MAX_WINDOW`] values keep one sorted array of
//! their integer keys (the order with `−0.0 < +0.0`): a push that replaces
//! a value moves the values between the leaving one's place and the
//! entering one's by one (found by counting in short windows, by binary
//! search beyond), the functions the whole-series path uses. That is a
//! few nanoseconds for the windows people use, where the ordered sets'
//! B-tree operations and rebalancing take about a hundred. Longer windows
//! keep the ordered sets (`ordered.rs`), O(log window) a push. Either way
//! the quantile is read from the same two neighbours, so the same value.

use alloc::vec::Vec;

use super::interpolation::Interpolation;
use super::ordered::{Ordered, rank};
use super::series::extremes::key;
use super::series::sorted;
use crate::Float;

/// The values that are not NaN, by the structure their window's length
/// suits.
#[derive(Clone, Debug)]
pub(crate) enum WindowOrder<F> {
    /// The keys, sorted (windows of up to [`sorted::MAX_WINDOW`]).
    Keys(Vec<i64>),
    /// The values, split at the quantile's rank.
    Sets(Ordered<F>),
}

impl<F: Float> WindowOrder<F> {
    /// An empty order for a window of `window` values.
    pub(crate) fn for_window(window: usize) -> Self {
        if window <= sorted::MAX_WINDOW {
            Self::Keys(Vec::new())
        } else {
            Self::Sets(Ordered::default())
        }
    }

    /// The number of values held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::Keys(keys) => keys.len(),
            Self::Sets(sets) => sets.len(),
        }
    }

    /// `leaving` goes and `entering` comes (each a value that is not NaN
    /// and its number in the stream, the numbers the ordered sets tell
    /// equal values apart by), then the split moves to `q`'s rank.
    #[inline]
    pub(crate) fn exchange(
        &mut self,
        leaving: Option<(F, u64)>,
        entering: Option<(F, u64)>,
        q: f64,
    ) {
        match self {
            Self::Keys(keys) => match (leaving, entering) {
                (Some((old, _)), Some((new, _))) => sorted::replace(keys, key(old), key(new)),
                (Some((old, _)), None) => sorted::remove(keys, key(old)),
                (None, Some((new, _))) => sorted::insert(keys, key(new)),
                (None, None) => {}
            },
            Self::Sets(sets) => {
                if let Some((old, seq)) = leaving {
                    sets.remove(old, seq);
                }
                if let Some((new, seq)) = entering {
                    sets.insert(new, seq);
                }
                sets.rebalance(q);
            }
        }
    }

    /// Holds exactly `values` (not NaN, with their numbers), split at
    /// `q`'s rank.
    pub(crate) fn refill(&mut self, values: impl Iterator<Item = (F, u64)>, q: f64) {
        match self {
            Self::Keys(keys) => {
                keys.clear();
                keys.extend(values.map(|(x, _)| key(x)));
                keys.sort_unstable();
            }
            Self::Sets(sets) => {
                sets.clear();
                for (x, seq) in values {
                    sets.insert(x, seq);
                }
                sets.rebalance(q);
            }
        }
    }

    /// Forgets every value.
    pub(crate) fn clear(&mut self) {
        match self {
            Self::Keys(keys) => keys.clear(),
            Self::Sets(sets) => sets.clear(),
        }
    }

    /// The `q`-quantile of the values held, read by `how` (the split
    /// being at `q`'s rank); NaN when there is none.
    #[inline]
    pub(crate) fn quantile(&self, q: f64, how: Interpolation) -> F {
        match self {
            Self::Keys(keys) if keys.is_empty() => F::nan(),
            Self::Keys(keys) => sorted::read_at(keys, rank(q, keys.len()), how),
            Self::Sets(sets) => sets.quantile(q, how),
        }
    }

    /// Whether the order holds its values as it should: the keys sorted,
    /// or the sets split at `q`'s rank.
    #[cfg(test)]
    pub(crate) fn is_in_order(&self, q: f64) -> bool {
        match self {
            Self::Keys(keys) => keys.is_sorted(),
            Self::Sets(sets) => sets.is_split_at(q),
        }
    }
}
