//! The values of a moving quantile's window that are not NaN, in order:
//! the engine of [`MovingQuantile`](crate::MovingQuantile) and
//! [`TimeQuantile`](crate::TimeQuantile).
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
//!
//! A time window's length is not fixed: its order starts as keys, turns
//! into the sets when it holds more than [`sorted::MAX_WINDOW`] values,
//! and back into keys when it holds half that or fewer
//! ([`fit`](WindowOrder::fit); the gap between the two lengths keeps a
//! window that hovers near one from being rebuilt at every push).

use alloc::vec::Vec;

use super::interpolation::Interpolation;
use super::ordered::{Ordered, rank};
use super::series::sorted;
use crate::Float;
use crate::kernels::sorted_keys::{self, key};

/// The values of a window that are not NaN, each with its number in the
/// stream (the first value's is `first`): what an order holds.
pub(crate) fn numbered<F: Float>(
    first: u64,
    values: impl Iterator<Item = F>,
) -> impl Iterator<Item = (F, u64)> {
    (first..)
        .zip(values)
        .filter(|(_, x)| !x.is_nan())
        .map(|(seq, x)| (x, seq))
}

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
                (Some((old, _)), Some((new, _))) => sorted_keys::replace(keys, key(old), key(new)),
                (Some((old, _)), None) => sorted_keys::remove(keys, key(old)),
                (None, Some((new, _))) => sorted_keys::insert(keys, key(new)),
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

    /// [`exchange`](Self::exchange) for several leaving values: each of
    /// `leaving` goes (they are held), then `entering` comes. The last
    /// leaving value is exchanged for the entering one (one move of the
    /// keys between their places), the others removed; more than a few
    /// leave the keys in one pass over them.
    pub(crate) fn exchange_many(
        &mut self,
        leaving: &[(F, u64)],
        entering: Option<(F, u64)>,
        q: f64,
    ) {
        /// From this many leaving values the keys are filtered in one
        /// pass rather than removed one by one (each a move of the keys
        /// after it).
        const ONE_PASS: usize = 8;
        match (self, leaving) {
            (Self::Keys(keys), _) if leaving.len() > ONE_PASS => {
                let mut gone: Vec<i64> = leaving.iter().map(|&(x, _)| key(x)).collect();
                gone.sort_unstable();
                let mut next = gone.iter().peekable();
                // Both sorted: each key that leaves is met in turn.
                keys.retain(|&k| {
                    while next.next_if(|&&g| g < k).is_some() {}
                    next.next_if_eq(&&k).is_none()
                });
                if let Some((new, _)) = entering {
                    sorted_keys::insert(keys, key(new));
                }
            }
            (order, [rest @ .., last]) => {
                for &old in rest {
                    order.exchange(Some(old), None, q);
                }
                order.exchange(Some(*last), entering, q);
            }
            (order, []) => order.exchange(None, entering, q),
        }
    }

    /// Whether the order suits a window of `len` values: keys up to
    /// [`sorted::MAX_WINDOW`], the sets above half of it.
    fn suits(&self, len: usize) -> bool {
        match self {
            Self::Keys(_) => len <= sorted::MAX_WINDOW,
            Self::Sets(_) => len > sorted::MAX_WINDOW / 2,
        }
    }

    /// For a window whose length varies: when the order does not
    /// [suit](Self::suits) the number of values it holds, the other
    /// structure, holding exactly `values` (those it holds, with their
    /// numbers), split at `q`'s rank.
    pub(crate) fn fit<I: Iterator<Item = (F, u64)>>(&mut self, values: impl FnOnce() -> I, q: f64) {
        if self.suits(self.len()) {
            return;
        }
        *self = match self {
            Self::Keys(_) => Self::Sets(Ordered::default()),
            Self::Sets(_) => Self::Keys(Vec::new()),
        };
        self.refill(values(), q);
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
