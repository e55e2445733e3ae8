//! The exact family: sums of finite floats kept exactly in integers, so
//! that what they read depends only on the values held, in any order, on
//! any partition.
//!
//! | file | what it holds |
//! |---|---|
//! | [`sums`] | [`ExactSums`]: Σx/2^E in an `i128`, Σx²/2^2E in 256 bits, the fast and wide routes, the correctly rounded reads, the merge |
//! | [`co_sums`] | [`ExactCoSums`]: two of them and Σxy in 256 bits |
//! | [`grouped`] | the `GROUP BY` loop: each row into its group's sums |
//! | [`grouped_co_sums`] | [`GroupedCoSums`]: a `GROUP BY` of pairs, with each group's latest rows on a coarser grid |
//! | `state` | the checkpoint form: the integers as decimal strings, checked on the way in (feature `serde`) |
//!
//! The family sits above the kernels (it takes the fused quotient and the
//! grid tests from them) and below the windows and the engines that keep
//! a window or a group in it (`MovingStats`, `momenta-datafusion`). Inside
//! it, each file uses only the ones above it in the table; the checkpoint
//! form uses them all and none uses it.

pub(crate) mod co_sums;
pub(crate) mod grouped;
pub(crate) mod grouped_co_sums;
#[cfg(feature = "serde")]
mod state;
pub(crate) mod sums;

pub use co_sums::ExactCoSums;
pub use grouped_co_sums::GroupedCoSums;
pub use sums::ExactSums;
