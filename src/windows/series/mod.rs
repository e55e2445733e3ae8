//! Whole series at once: a slice pushed through a window, with the
//! statistic after every push written out, one module per algorithm.
//!
//! Every `*_series` method of a window is a thin call into one of these,
//! and each leaves the window exactly as pushing the values one by one
//! would: the slice path is a fast way to push, not a separate state.
//!
//! - [`sums`]: the add/remove engine ([`Window`](super::window::Window)) of
//!   `MovingAverage` and `MovingVariance`, driven over a slice. Between two
//!   wraps of the ring's head every push of a full window of finite values
//!   is a replacement; those runs go through one tight loop that does the
//!   push's own arithmetic (so its bits), without the ring's bookkeeping
//!   per value, and copies the run into the ring once. Everything else
//!   (filling, non-finite values, the wrap, a rebuild) is the push itself.
//! - [`extremes`]: the minimum and maximum by van Herk and Gil-Werman's
//!   blocks (a prefix and a suffix extreme per block of `window` values;
//!   each output is the extreme of one suffix and one prefix), three
//!   comparisons a value whatever the window, the same values as the
//!   monotonic deques of the push path.
//! - [`sorted`]: a quantile from the window kept as a sorted array of
//!   integer keys (the float order with `−0.0 < +0.0`): a value leaves and
//!   one enters by two binary searches and one shift of the values between.
//!   O(window) per push in the worst case, but a memory move of a third of
//!   the window on average, which for the windows people use is faster
//!   than the ordered sets of the push path.
//!
//! The order-statistics windows (`MovingMinMax`, `MovingQuantile`) keep
//! derived structures (deques, ordered sets) that depend only on the
//! values in the window and their numbers, so after a series they are
//! rebuilt from the last window (O(window), as a checkpoint restores them);
//! a slice shorter than a few windows goes through the push loop instead.

pub(crate) mod extremes;
pub(crate) mod sorted;
pub(crate) mod sorted_blocks;
pub(crate) mod sums;
