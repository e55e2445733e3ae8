#![doc = "Streaming statistics: mergeable mean, variance and moving averages, and BatchNorm statistics."]
#![no_std]
#![forbid(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod accumulator;
mod error;
mod float;
mod kernels;
mod mean;
mod moments;
mod momentum;
mod moving_average;
mod moving_variance;
mod ring;
mod variance;
mod window;

pub use accumulator::{Accumulator, Merge};
pub use error::{Error, ErrorKind};
pub use float::Float;
pub use mean::Mean;
pub use momentum::Momentum;
pub use moving_average::MovingAverage;
pub use moving_variance::MovingVariance;
pub use variance::Variance;
