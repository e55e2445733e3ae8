//! The exponential family: statistics whose weights decay geometrically.
//!
//! What the members share:
//!
//! - **[`Momentum`]**, the one parameter: `Decay` (the weight of the old
//!   value, Keras and TensorFlow), `Factor` (the weight of the new value,
//!   PyTorch and cuDNN), `Cumulative` (equal weights) or `HalfLife` (pandas'
//!   `halflife`, a time on a clock), validated once and blended by
//!   [`Momentum::blend`];
//! - **seeding by the first value** (or an explicit initial value), so a
//!   stream that passes through 0 never looks empty;
//! - **one weighting engine** (`weighting.rs`): pandas' recursive
//!   (`adjust=False`) and adjusted (`adjust=True`) weights, a clock
//!   (`push_at`, `push_after`), the [`NanPolicy`](crate::NanPolicy) and `min_periods`, written
//!   once; a member asks it for the weights of each push and applies them;
//! - **no merge**: the exponential average of two interleaved streams is not
//!   a function of their two averages, so these types implement
//!   [`Accumulator`](crate::Accumulator) but not [`Merge`](crate::Merge).
//!
//! A new member: one file here; take a `Momentum` in the constructor and
//! blend with it (never a raw `f64` weight, whose convention a reader
//! cannot see); keep a shift near the mean for anything variance-like;
//! then the steps of "Adding a statistic" in ARCHITECTURE.md.

mod ema;
mod ew_covariance;
mod ew_variance;
mod momentum;
mod shifted;
mod weighting;

pub use ema::Ema;
pub use ew_covariance::EwCovariance;
pub use ew_variance::EwVariance;
pub use momentum::Momentum;
