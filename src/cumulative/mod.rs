//! The cumulative family: statistics of every value pushed so far.
//!
//! What the members share:
//!
//! - **constant state that merges exactly.** Each type implements
//!   [`Merge`](crate::Merge), so statistics of parts combine into the
//!   statistics of the whole (parallel reductions, synchronized BatchNorm,
//!   shards of a data set);
//! - **the raw moments.** Every variance is kept as [`Moments`](crate::moments::Moments):
//!   count, a shift taken from the data, the mean's offset from the shift,
//!   and M2, with the shifted Welford step, Chan's merge, and the re-basing
//!   that keeps the shift near the mean;
//! - **slice kernels.** `from_slice` and `extend_from_slice` go through
//!   [`kernels`](crate::kernels), which accumulate `f32` or `f64` input in
//!   `f64`; `par_from_slice` runs the same reduction tree on rayon's
//!   threads.
//!
//! A new member: one file here with the type; its state either built on
//! `Moments` (a variance-like statistic) or its own plain struct with a
//! `try_from` that validates restored state; `impl_accumulator!` for
//! `Accumulator`, `Extend` and `FromIterator`; `Merge`; then the steps of
//! "Adding a statistic" in ARCHITECTURE.md.

mod covariance;
mod kurtosis;
mod mean;
mod min_max;
mod shape;
mod skewness;
mod variance;
mod weighted_mean;
mod weighted_variance;

pub use covariance::{Covariance, CovarianceParts};
pub use kurtosis::{Kurtosis, KurtosisParts};
pub use mean::{Mean, MeanParts};
pub use min_max::{MinMax, MinMaxParts};
pub use skewness::{Skewness, SkewnessParts};
pub use variance::{Variance, VarianceParts};
pub use weighted_mean::{WeightedMean, WeightedMeanParts};
pub use weighted_variance::{WeightedVariance, WeightedVarianceParts};
