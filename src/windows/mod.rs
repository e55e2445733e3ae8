//! The window family: statistics of the last `window` values.
//!
//! What the members share:
//!
//! - **[`ring::Ring`]**, the buffer of the values in the window (memory grows
//!   with the values pushed, up to the window);
//! - **[`window::Window`]**, the engine: it adds the value that enters and
//!   removes the one that leaves in O(1), keeps non-finite values out of the
//!   floating-point state (so a NaN only counts while it is in the window),
//!   and refreshes its running sums from the values themselves every
//!   `window` pushes, so nothing drifts however long the stream;
//! - **[`exact_window`]**, the one engine of `MovingAverage`,
//!   `MovingVariance` and `MovingStats` (the window over exact integer
//!   sums) and everything they read from it, series included;
//! - **no merge**: two windows over different stretches of a stream are not
//!   a window;
//! - **whole series** (`series/`): each member's `*_series` methods push a
//!   slice through the window by one of the algorithms there, with the
//!   push loop's bits.
//!
//! A new member: one file here with the type over `Window<F, S>` and a
//! `WindowStats` implementation for the sums it needs (or an engine of its
//! own where add/remove sums do not apply, as for order statistics), its
//! `*_series` methods on one of the `series/` algorithms (or the push
//! loop); then the steps of "Adding a statistic" in ARCHITECTURE.md.

mod block_extrema;
mod bounds;
mod exact_moments;
mod exact_window;
mod extrema;
mod interpolation;
mod lanes;
mod moving_average;
mod moving_min_max;
mod moving_quantile;
mod moving_stats;
mod moving_variance;
pub(crate) mod ordered;
mod policy;
mod ring;
pub(crate) mod series;
mod spare;
#[cfg(feature = "serde")]
mod state;
mod time_quantile;
mod time_window;
mod window;
mod window_order;

pub use bounds::Closed;
pub use interpolation::Interpolation;
pub use moving_average::MovingAverage;
pub use moving_min_max::MovingMinMax;
pub use moving_quantile::MovingQuantile;
pub use moving_stats::MovingStats;
pub use moving_variance::MovingVariance;
pub use time_quantile::TimeQuantile;
pub use time_window::TimeWindow;
