//! Whole series at once: a slice pushed through a window, with the
//! statistic after every push written out, one module per algorithm.
//!
//! Every `*_series` method of a window is a thin call into one of these,
//! and each leaves the window exactly as pushing the values one by one
//! would, with every value the push loop's bit for bit: the slice path is
//! a fast way to push, not a separate state.
//!
//! - [`sums`]: the add/remove engine ([`Window`](super::window::Window))
//!   driven over a slice, for `extend_from_slice`: between two wraps of
//!   the ring's head every push of a full window of finite values is a
//!   replacement; those runs go through one loop, and the ring takes the
//!   run in one copy. The wrap itself takes the push's steps for that
//!   case; everything else (filling, non-finite values, a refresh, a
//!   rebuild) is the push itself.
//! - [`exact_mean`](crate::kernels::exact_mean) (a kernel: the
//!   architecture layer compiles it for the CPU): the mean of
//!   `MovingAverage`, `MovingVariance` and
//!   `MovingStats` (one engine, `exact_window.rs`), whose bits depend on the
//!   window's values only (it is the correct rounding of their exact sum):
//!   so any exact route to the sum gives them. Values on one grid (integer
//!   multiples of a power of two, not too far apart) are summed exactly in
//!   `f64` registers, window after window as prefix sums of differences,
//!   and rounded correctly by a few float operations (a corrected
//!   quotient, or a checked sequence that finds ties); the window then
//!   takes the run's last values by pushing them (O(window) a run).
//! - [`exact_var`](crate::kernels::exact_var) (a kernel too): their
//!   variances and standard deviations,
//!   correctly rounded from `n·Σx² − (Σx)²` as its mean is from `Σx`: on
//!   an offset grid, that integer kept in 128 bits by one product and one
//!   addition a value, and divided by a checked float quotient that sends
//!   the rare values near a rounding boundary to the integer division.
//! - [`extremes`]: the minimum and maximum by van Herk and Gil-Werman's
//!   blocks (a prefix and a suffix extreme per block of `window` values;
//!   each output is the extreme of one suffix and one prefix), three
//!   comparisons a value whatever the window, on integer keys in the
//!   push path's order (`−0.0 < +0.0`).
//! - [`sorted`]: a quantile from the window kept as a sorted array of
//!   those keys: the leaving value's place found (by counting, or by
//!   binary search from 33 values), the entering value walked or moved
//!   into place. Every window while filling or with NaN about goes through
//!   it. Once full, a push replaces one key: with AVX2, windows of up to
//!   48 values in registers, with no branch on the data; without, windows
//!   of up to six values are sorted afresh by a sorting network instead.
//! - [`sorted_blocks`]: from a window of 400, the full windows of a
//!   stretch without NaN by Suomela's sorted blocks: each block of
//!   `window` values sorted once and kept as a linked list, two cursors
//!   splitting the window at the quantile's rank.
//!
//! The order-statistics windows (`MovingMinMax`, `MovingQuantile`) keep
//! derived structures (blocks of extremes, ordered sets) that depend only
//! on the values in the window, so after a series they are
//! rebuilt from the last window (O(window), as a checkpoint restores them);
//! a slice shorter than half the window (or than 64 values) goes through
//! the push loop instead.

pub(crate) mod extremes;
pub(crate) mod sorted;
pub(crate) mod sorted_blocks;
pub(crate) mod sums;
